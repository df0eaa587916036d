// SPDX-License-Identifier: MIT
/*
 * The runtime's collectives over the bootstrap (set-up, checkpoints, the
 * end), each named by what it exchanges.  The bootstrap's own line names
 * the rank that did not answer or left; this one says which step of the
 * job it was and, for a rank that did not answer, which option waits
 * longer (the bootstrap cannot name it: docs/architecture.md).
 */
#include <errno.h>
#include <string.h>

#include "flexrr/log.h"
#include "core.h"

int frr_rt_oob_ms(const struct frr_rt *rt)
{
	return rt->loading ? rt->prm->load_ms : rt->prm->timeout_ms;
}

int frr_rt_oob_failed(const struct frr_rt *rt, const char *what, int err,
		      int wait_ms)
{
	if (err == -ETIMEDOUT)
		frr_err(
		    "rank %d: %s: a rank did not answer within %d ms%s (see "
		    "the message above): it is stopped, hung or %s",
		    rt->rank, what, wait_ms,
		    rt->loading ? " while the ranks load their input" : "",
		    rt->loading ? "loads its input that much slower than "
				  "this one; raise --load-timeout if it "
				  "does"
				: "overloaded; " FRR_RT_TIMEOUT_HINT);
	else
		frr_err("rank %d: %s failed (%s): another rank failed or "
			"left, see its message",
			rt->rank, what, strerror(err < 0 ? -err : err));
	return err;
}

int frr_rt_allgather(struct frr_rt *rt, const char *what, const void *mine,
		     size_t len, void *all)
{
	int ms = frr_rt_oob_ms(rt),
	    err = frr_oob_allgather(rt->oob, mine, len, all, ms);

	return err ? frr_rt_oob_failed(rt, what, err, ms) : 0;
}

int frr_rt_barrier(struct frr_rt *rt, const char *what)
{
	int ms = frr_rt_oob_ms(rt), err = frr_oob_barrier(rt->oob, ms);

	return err ? frr_rt_oob_failed(rt, what, err, ms) : 0;
}
