// SPDX-License-Identifier: MIT
/*
 * The apps' input exchange (frr_app_ops share/gather): every rank reads one
 * piece of the input and all ranks get every piece's blob, over the job's
 * out-of-band channel (frr_oob_allgatherv: pieces of any size, in rounds the
 * bootstrap backends take).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "job.h"

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
		      size_t *lens, size_t *total)
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
		if (info[r].len > SIZE_MAX / 4 - sum) {
			frr_err("rank %d: rank %d's input piece claims %" PRIu64
				" bytes; its process is broken or not ours",
				rt->rank, r, info[r].len);
			return -EPROTO;
		}
		lens[r] = (size_t)info[r].len;
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

/* Every rank's blob to the app (a no-op for apps without share/gather). */
int frr_rt_app_gather(struct frr_rt *rt)
{
	const struct frr_app_ops *a = rt->app;
	const void *mine = NULL;
	size_t mlen = 0, total = 0, at = 0, *lens = NULL;
	struct piece_info me = { 0 }, *info = NULL;
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
	wait_ms = frr_rt_oob_ms(rt) + (int)(4000 * (frr_rt_clock_now() - t0));
	info = calloc((size_t)rt->P, sizeof(*info));
	lens = calloc((size_t)rt->P, sizeof(*lens));
	blobs = calloc((size_t)rt->P, sizeof(*blobs));
	if (!info || !lens || !blobs) {
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
	if (err)
		frr_rt_oob_failed(rt, "exchanging the input pieces' sizes", err,
				  wait_ms);
	else
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
		blobs[r] = buf + at;
		at += lens[r];
	}
	t0 = frr_rt_clock_now();
	wait_ms = frr_rt_oob_ms(rt);
	err = frr_oob_allgatherv(rt->oob, mine, lens, buf, wait_ms);
	if (err)
		frr_rt_oob_failed(rt, "exchanging the input pieces", err,
				  wait_ms);
	frr_dbg("rank %d: %zu bytes of input pieces exchanged in %.1f s",
		rt->rank, total, frr_rt_clock_now() - t0);
	if (!err)
		err = a->gather(rt->app_state, blobs, lens, rt->P);
	if (err > 0)
		err = -EINVAL;
out:
	free(buf);
	free(blobs);
	free(lens);
	free(info);
	return err;
}
