/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the libFuzzer targets (one LLVMFuzzerTestOneInput per
 * parser, see docs/fuzzing.md).
 *
 *   fuzz_file(slot, data, n)  the loaders take paths: an in-memory file
 *                             (memfd) holding data, named /proc/self/fd/N;
 *                             slots 0..FUZZ_SLOTS-1 stay valid together.
 *   fuzz_split(...)           inputs holding several files separate them
 *                             with FUZZ_SEP (a seed shows the fuzzer how).
 *   FUZZ_CHECK(cond)          an invariant of a successful load: abort (a
 *                             finding) when it does not hold.
 */
#ifndef FLEXRR_FUZZ_H
#define FLEXRR_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_SLOTS 3
#define FUZZ_SEP "\n--8<--\n"

#define FUZZ_CHECK(cond)                                                 \
	do {                                                             \
		if (!(cond)) {                                           \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", \
				__FILE__, __LINE__, #cond);              \
			abort();                                         \
		}                                                        \
	} while (0)

static inline const char *fuzz_file(int slot, const uint8_t *data, size_t n)
{
	static int fd[FUZZ_SLOTS] = { -1, -1, -1 };
	static char path[FUZZ_SLOTS][32];

	if (fd[slot] < 0) {
		fd[slot] = memfd_create("flexrr-fuzz", MFD_CLOEXEC);
		FUZZ_CHECK(fd[slot] >= 0);
		snprintf(path[slot], sizeof(path[slot]), "/proc/self/fd/%d",
			 fd[slot]);
	}
	FUZZ_CHECK(ftruncate(fd[slot], 0) == 0);
	FUZZ_CHECK(!n || pwrite(fd[slot], data, n, 0) == (ssize_t)n);
	return path[slot];
}

/* Cut data at the first FUZZ_SEP: *a gets what is before it, the rest is
 * returned in *b (b_n = 0 and 0 returned when there is no separator). */
static inline int fuzz_split(const uint8_t *data, size_t n, size_t *a_n,
			     const uint8_t **b, size_t *b_n)
{
	const uint8_t *s = memmem(data, n, FUZZ_SEP, strlen(FUZZ_SEP));

	if (!s) {
		*a_n = n;
		*b = NULL;
		*b_n = 0;
		return 0;
	}
	*a_n = (size_t)(s - data);
	*b = s + strlen(FUZZ_SEP);
	*b_n = n - *a_n - strlen(FUZZ_SEP);
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

/* A loader may rightly try to allocate what a valid input asks for (a UCI
 * file of 2^24-token entries wants gigabytes).  Above 1 GiB the allocator
 * returns NULL, as a full machine would, so the run tests the loader's
 * out-of-memory message instead of stopping at libFuzzer's malloc limit. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=1024";
}

#endif /* FLEXRR_FUZZ_H */
