// SPDX-License-Identifier: MIT
/*
 * frr_oob_allgather[v]: collectives of any size over every backend.  A
 * backend collective carries at most FRR_OOB_ROUND_MAX bytes for all ranks
 * together (the local relay caps a frame, PMIx values and TCP rank 0's
 * buffer should stay modest), so a larger one goes in rounds: round k
 * carries bytes [k*chunk, (k+1)*chunk) of every rank's contribution, a rank
 * whose contribution is shorter pads its chunk with zeroes, and the chunks
 * land at their place in 'all'.  Every rank computes the same rounds from
 * the same lengths, so the backend sees the same sequence of equal-length
 * collectives on every rank.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/base.h"
#include "flexrr/bootstrap.h"
#include "oob.h"

/* How many bytes rank r contributes: lens[r], or len for every rank. */
static size_t rank_len(const size_t *lens, size_t len, int r)
{
	return lens ? lens[r] : len;
}

/* Round after round, bytes [off, off + c) of every rank's contribution; the
 * ranks' lengths are lens[] or, lens NULL, len each; max the largest. */
static int rounds(struct frr_oob *oob, const char *mine, const size_t *lens,
		  size_t len, size_t max, char *all, int timeout_ms)
{
	size_t np = (size_t)oob->size, chunk = FRR_OOB_ROUND_MAX / np;
	size_t ml = rank_len(lens, len, oob->rank);
	char *round = NULL, *pad = NULL;
	int err = 0;

	chunk = chunk ? chunk : 1;
	chunk = chunk < max ? chunk : max;
	round = malloc(np * chunk);
	pad = calloc(1, chunk);
	if (!round || !pad) {
		frr_err("oob: rank %d: out of memory for a %zu-byte round of "
			"an allgather",
			oob->rank, np * chunk);
		err = -ENOMEM;
	}
	for (size_t off = 0; off < max && !err; off += chunk) {
		size_t c = max - off < chunk ? max - off : chunk, at = 0;
		const char *send = pad;

		/* a short (or finished) contribution sends a padded copy */
		if (ml >= off + c) {
			send = mine + off;
		} else {
			memset(pad, 0, c);
			if (ml > off)
				memcpy(pad, mine + off, ml - off);
		}
		err = oob->ops->allgather(oob, send, c, round, timeout_ms);
		for (int r = 0; r < oob->size && !err; r++) {
			size_t rl = rank_len(lens, len, r);

			if (rl > off)
				memcpy(all + at + off, round + (size_t)r * c,
				       rl - off < c ? rl - off : c);
			at += rl;
		}
	}
	free(pad);
	free(round);
	return err;
}

int frr_oob_allgather(struct frr_oob *oob, const void *mine, size_t len,
		      void *all, int timeout_ms)
{
	if (oob->size <= 0)
		return -EINVAL;
	if (len > SIZE_MAX / (size_t)oob->size) {
		frr_err("oob: rank %d: an allgather of %zu bytes from each of "
			"%d ranks does not fit in memory",
			oob->rank, len, oob->size);
		return -EOVERFLOW;
	}
	if (len * (size_t)oob->size <= FRR_OOB_ROUND_MAX)
		return oob->ops->allgather(oob, mine, len, all, timeout_ms);
	return rounds(oob, mine, NULL, len, len, all, timeout_ms);
}

int frr_oob_allgatherv(struct frr_oob *oob, const void *mine,
		       const size_t *lens, void *all, int timeout_ms)
{
	size_t sum = 0, max = 0;

	if (oob->size <= 0 || !lens)
		return -EINVAL;
	for (int r = 0; r < oob->size; r++) {
		if (lens[r] > SIZE_MAX - sum) {
			frr_err("oob: rank %d: the allgather's lengths add up "
				"to more than fits in memory (rank %d: %zu "
				"bytes)",
				oob->rank, r, lens[r]);
			return -EOVERFLOW;
		}
		sum += lens[r];
		max = lens[r] > max ? lens[r] : max;
	}
	if (!max) /* nothing to move: keep the ranks in step all the same */
		return oob->ops->barrier(oob, timeout_ms);
	return rounds(oob, mine, lens, 0, max, all, timeout_ms);
}
