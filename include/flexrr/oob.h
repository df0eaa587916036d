/* SPDX-License-Identifier: MIT */
/*
 * Out-of-band bootstrap channel between the ranks of one job: used only at
 * set-up (address and descriptor exchange, barriers, failure notice), never on
 * the data path.  Implementations: a fork-based local launcher
 * (frr_launch_local, for tests and single-host jobs) and the TCP rendezvous
 * of the runtime (multi-host, launcher-started ranks).
 */
#ifndef FLEXRR_OOB_H
#define FLEXRR_OOB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct frr_oob;

struct frr_oob_ops {
	size_t size;
	/* all[r*len .. (r+1)*len) receives rank r's 'mine'; collective. */
	int (*allgather)(struct frr_oob *oob, const void *mine, size_t len,
			 void *all, int timeout_ms);
	int (*barrier)(struct frr_oob *oob, int timeout_ms);
	void (*close)(struct frr_oob *oob);
};

struct frr_oob {
	const struct frr_oob_ops *ops;
	int rank;
	int size;
	uint64_t job_token;
};

static inline int frr_oob_allgather(struct frr_oob *oob, const void *mine,
				    size_t len, void *all, int timeout_ms)
{
	return oob->ops->allgather(oob, mine, len, all, timeout_ms);
}

static inline int frr_oob_barrier(struct frr_oob *oob, int timeout_ms)
{
	return oob->ops->barrier(oob, timeout_ms);
}

static inline void frr_oob_close(struct frr_oob *oob)
{
	if (oob)
		oob->ops->close(oob);
}

/*
 * Fork nprocs children; child r runs fn(oob, arg) with an oob of rank r and
 * exits with its return value (0 = success; negative errno mapped to 1..255).
 * The parent waits for all of them with a deadline: children still running
 * after timeout_ms are killed.  If any child fails or dies, the others are
 * killed after a grace period so nothing hangs.  Returns 0 if every child
 * exited 0, else a negative errno and logs which rank failed and how.
 */
typedef int (*frr_launch_fn)(struct frr_oob *oob, void *arg);
int frr_launch_local(int nprocs, frr_launch_fn fn, void *arg, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_OOB_H */
