// SPDX-License-Identifier: MIT
/*
 * The apps' input exchange (frr_app_ops share/gather): every rank reads one
 * piece of the input and all ranks get every piece's blob, over the job's
 * out-of-band channel, in rounds of at most 16 MiB per rank (48 MiB in all) so
 * that no collective carries more than the bootstrap backends take in one
 * message (the local relay caps a frame at 64 MiB).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "rt.h"

/* per rank and round: P x this stays under the local relay's 64 MiB frame */
#define GATHER_ROUND (48u << 20)
#define GATHER_CHUNK_MAX (16u << 20)

/* An app built against an older flexrr.h has no share/gather fields. */
static int app_has_gather(const struct frr_app_ops *a)
{
	return a->size >=
		   offsetof(struct frr_app_ops, gather) + sizeof(a->gather) &&
	       a->share && a->gather;
}

/* What each rank tells the others before its piece. */
struct piece_info {
	int64_t status; /* share's result: 0 or a negative errno */
	uint64_t len;
};

/* Peers' lengths are hostile: all of them must fit in this rank's memory
 * (with room to spare for what the app builds from them). */
static int lens_check(struct frr_rt *rt, const struct piece_info *info,
		      uint64_t *lens, size_t *total)
{
	double avail =
	    (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
	uint64_t sum = 0;

	for (int r = 0; r < rt->P; r++) {
		/* the rank that failed said why; the others stop quietly */
		if (info[r].status) {
			frr_dbg("rank %d could not read its input piece (%d); "
				"stopping",
				r, (int)info[r].status);
			return info[r].status < 0 && info[r].status > -4096
				   ? (int)info[r].status
				   : -EPROTO;
		}
		lens[r] = info[r].len;
		if (lens[r] > SIZE_MAX / 4 - sum) {
			frr_err("rank %d: rank %d's input piece claims %" PRIu64
				" bytes; its process is broken or not ours",
				rt->rank, r, lens[r]);
			return -EPROTO;
		}
		sum += lens[r];
	}
	if ((double)sum > 0.8 * avail) {
		frr_err("rank %d: the input pieces of all ranks (%.3g GiB) do "
			"not fit in the %.3g GiB of available memory: use a "
			"machine with more memory or a smaller input",
			rt->rank, sum / 1073741824.0, avail / 1073741824.0);
		return -ENOMEM;
	}
	*total = (size_t)sum;
	return 0;
}

/* Round after round, every rank's next chunk into its place in buf. */
static int chunks_gather(struct frr_rt *rt, const uint8_t *mine,
			 const uint64_t *lens, const size_t *at, uint8_t *buf,
			 int timeout_ms)
{
	size_t np = rt->P > 0 ? (size_t)rt->P : 1, chunk = GATHER_ROUND / np;
	uint64_t max = 0;
	uint8_t *round = NULL, *send = NULL;
	int err = 0;

	chunk = chunk < GATHER_CHUNK_MAX ? chunk : GATHER_CHUNK_MAX;
	for (int r = 0; r < rt->P; r++)
		max = lens[r] > max ? lens[r] : max;
	round = malloc(np * chunk);
	send = calloc(1, chunk);
	if (!round || !send)
		err = -ENOMEM;
	for (uint64_t off = 0; off < max && !err; off += chunk) {
		size_t c = max - off < chunk ? (size_t)(max - off) : chunk;
		uint64_t l = lens[rt->rank];

		if (off < l)
			memcpy(send, mine + off,
			       l - off < c ? (size_t)(l - off) : c);
		err = frr_oob_allgather(rt->oob, send, c, round, timeout_ms);
		for (int r = 0; r < rt->P && !err; r++)
			if (off < lens[r])
				memcpy(buf + at[r] + off, round + (size_t)r * c,
				       lens[r] - off < c
					   ? (size_t)(lens[r] - off)
					   : c);
	}
	free(round);
	free(send);
	return err;
}

/* Every rank's blob to the app (a no-op for apps without share/gather). */
int frr_rt_app_gather(struct frr_rt *rt)
{
	const struct frr_app_ops *a = rt->app;
	const void *mine = NULL;
	size_t mlen = 0, total = 0, *at = NULL, *lens_z = NULL;
	struct piece_info me = { 0 }, *info = NULL;
	uint64_t *lens = NULL;
	const void **blobs = NULL;
	uint8_t *buf = NULL;
	double t0 = frr_rt_clock_now();
	int err, wait_ms;

	if (!app_has_gather(a))
		return 0;
	err = a->share(rt->app_state, rt->rank, rt->P, &mine, &mlen);
	me.status = err > 0 ? -EINVAL : err;
	me.len = err ? 0 : mlen;
	/* a peer with a piece like ours takes about as long as we did */
	wait_ms = rt->o->timeout_ms + (int)(4000 * (frr_rt_clock_now() - t0));
	info = calloc((size_t)rt->P, sizeof(*info));
	lens = calloc((size_t)rt->P, sizeof(*lens));
	at = calloc((size_t)rt->P, sizeof(*at));
	lens_z = calloc((size_t)rt->P, sizeof(*lens_z));
	blobs = calloc((size_t)rt->P, sizeof(*blobs));
	if (!info || !lens || !at || !lens_z || !blobs) {
		err = -ENOMEM;
		goto out;
	}
	/* big inputs: say where start-up is (FLEXRR_LOG=info) */
	frr_log(
	    frr_rt_clock_now() - t0 > 5 ? FRR_LOG_INFO : FRR_LOG_DEBUG,
	    "rank %d: input piece read in %.0f s (%d, %zu bytes); waiting up "
	    "to %d s for the other ranks' pieces",
	    rt->rank, frr_rt_clock_now() - t0, (int)me.status, (size_t)me.len,
	    wait_ms / 1000);
	err = frr_oob_allgather(rt->oob, &me, sizeof(me), info, wait_ms);
	if (!err)
		err = me.status ? (int)me.status
				: lens_check(rt, info, lens, &total);
	if (err)
		goto out;
	buf = malloc(total ? total : 1);
	if (!buf) {
		frr_err("rank %d: out of memory for the input pieces of all "
			"ranks (%zu bytes)",
			rt->rank, total);
		err = -ENOMEM;
		goto out;
	}
	for (int r = 0; r < rt->P; r++) {
		at[r] = r ? at[r - 1] + (size_t)lens[r - 1] : 0;
		lens_z[r] = (size_t)lens[r];
		blobs[r] = buf + at[r];
	}
	t0 = frr_rt_clock_now();
	err = chunks_gather(rt, mine, lens, at, buf, rt->o->timeout_ms);
	frr_dbg("rank %d: %zu bytes of input pieces exchanged in %.1f s",
		rt->rank, total, frr_rt_clock_now() - t0);
	if (!err)
		err = a->gather(rt->app_state, blobs, lens_z, rt->P);
	if (err > 0)
		err = -EINVAL;
out:
	free(buf);
	free(blobs);
	free(lens_z);
	free(at);
	free(lens);
	free(info);
	return err;
}
