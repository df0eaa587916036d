// SPDX-License-Identifier: MIT
/*
 * The CancelHelp / BegunHelping races of the RapidReassignment engine,
 * forced on the deterministic scheduler of rrcheck/ (no sleeps, no
 * wall-clock waits), among them the interleaving that deadlocked in the
 * soft-RoCE VM (issue 14).  test_rr_proto.c samples real-thread
 * interleavings on a fake runtime; test_rr_explore.c enumerates every
 * interleaving of small configurations.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "rr/rr_proto.h"
#include "world.h"

TestSuite(rr_cancel, .timeout = 120);

/*
 * Two workers, each the other's only helper, 64 items, 2 clocks, in the
 * coroutine world of rrcheck/world.h: the order is chosen by a policy and
 * by hooks that hold a worker until an event, never by sleeps.  A state in
 * which nobody can move is reported as a deadlock at once.
 */
struct race {
	struct rrw *x;
	int kind;	     /* RACE_* */
	int queued_ok;	     /* the helper may handle the DoThis it holds */
	int begun;	     /* worker 1 sent BegunHelping */
	int done;	     /* the forced part is over */
	int crossed;	     /* worker 0's CancelHelp went after BegunHelping */
	int answered;	     /* worker 1 answered Cancelled */
	uint64_t a[2], b[2]; /* each worker's first CancelHelp range */
};

enum {
	RACE_CANCELLED = 1, /* helper holds the DoThis until CancelHelp */
	RACE_CROSSED,	    /* helpee holds CancelHelp until BegunHelping */
	/* the soft-RoCE failure: both offered to each other; the helper sits
	 * in its own CANCEL_WAIT when the helpee holds its CancelHelp */
	RACE_CROSSED_BOTH_OFFERED,
};

static int flag_set(void *arg)
{
	return *(int *)arg;
}

static void race_hook(void *arg, int w, enum rr_hook_point pt,
		      const struct frr_rr_msg *m)
{
	struct race *r = arg;

	if (pt == RR_HOOK_BEFORE_CANCEL && !r->b[w]) {
		r->a[w] = m->a;
		r->b[w] = m->b;
	}
	if (r->done)
		return;
	if (pt == RR_HOOK_TASK_QUEUED && w == 1)
		rrw_wait_until(r->x, 1, flag_set, &r->queued_ok);
	if (r->kind == RACE_CANCELLED) {
		if (pt == RR_HOOK_CANCEL_SENT && w == 0)
			r->queued_ok = 1;
		if (pt == RR_HOOK_CANCEL_ANSWERED && w == 1)
			r->answered = r->done = 1;
		return;
	}
	if (pt == RR_HOOK_BEGUN_SENT && w == 1)
		r->begun = 1;
	if (pt == RR_HOOK_BEFORE_CANCEL && w == 0) {
		r->queued_ok = 1;
		rrw_wait_until(r->x, 0, flag_set, &r->begun);
		r->crossed = r->done = 1;
	}
}

static int pick(uint32_t en, int first)
{
	if (en & ~3u) /* deliveries at once */
		return __builtin_ctz(en & ~3u);
	return en >> first & 1 ? first : __builtin_ctz(en);
}

/* Worker 1 runs whenever it can: worker 0 is the straggler. */
static int pick_straggler(void *arg, uint32_t en)
{
	(void)arg;
	return pick(en, 1);
}

/* The order of the soft-RoCE failure: worker 0 starts first (14 items),
 * worker 1 then offers it the tail [58, 64) and races to its end; worker 0
 * offers [40, 64) to worker 1 (now 100% done) before worker 1 cancels. */
static int pick_ci(void *arg, uint32_t en)
{
	struct race *r = arg;
	const struct rrw_view *v0 = rrw_view(r->x, 0), *v1 = rrw_view(r->x, 1);

	/* worker 0 first: 14 items and the progress check after the 14th */
	if (v0->items_done < 14 || (v0->items_done == 14 && !v0->at_item))
		return pick(en, 0);
	if (v1->phase == RRW_OWN_DONE && !v1->cancel_sent && !v0->dothis_sent)
		return pick(en, 0);
	return pick(en, 1);
}

static int race_run(struct race *r, int kind)
{
	struct rrw_cfg cfg = {
		.P = 1,
		.T = 2,
		.group = 1,
		.clocks = 2,
		.slack = 0,
		.n = { 64, 64 },
		.threshold = 0.2,
		.min_share = 0.05,
		.max_unapplied = 4,
		.hook = race_hook,
		.hook_arg = r,
		/* report the deadlock itself, not the idle helper before it */
		.allow_idle_help = 1,
	};
	int rc;

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	cr_assert_eq(rrw_create(&cfg, &r->x), 0);
	rc = rrc_run_policy(
	    rrw_sys(r->x),
	    kind == RACE_CROSSED_BOTH_OFFERED ? pick_ci : pick_straggler, r);
	return rc;
}

Test(rr_cancel, cancel_race_answered_cancelled)
{
	struct race r;
	int rc = race_run(&r, RACE_CANCELLED);

	cr_assert_eq(rc, 0, "%s", rrw_failure(r.x));
	cr_assert(r.answered, "the race was not forced");
	cr_assert_geq(rrw_view(r.x, 0)->rw->tot[RR_C_CANCELLED], 1);
	rrw_destroy(r.x);
}

Test(rr_cancel, cancel_race_crossed_by_begun_helping)
{
	struct race r;
	int rc = race_run(&r, RACE_CROSSED);

	cr_assert_eq(rc, 0, "%s", rrw_failure(r.x));
	cr_assert(r.crossed, "the race was not forced");
	/* the crossed offer was accepted and completed by the helper */
	cr_assert_geq(rrw_view(r.x, 0)->rw->tot[RR_C_ACCEPTED], 1);
	cr_assert_geq(rrw_view(r.x, 1)->rw->helped_ranges, 1);
	rrw_destroy(r.x);
}

/* Issue 14: in the soft-RoCE VM this ran into both workers' timeouts
 * ("helper worker 0 did not answer CancelHelp for items [58, 64) of worker
 * 1 clock 0", and [40, 64) the other way).  Worker 1 waited in CANCEL_WAIT
 * for worker 0's answer without starting worker 0's queued offer, while
 * worker 0 held its CancelHelp until worker 1 began helping: every wait
 * must keep starting queued help (docs/protocol.md, liveness). */
Test(rr_cancel, cancel_race_crossed_while_the_helper_waits_for_its_own_cancel)
{
	struct race r;
	int rc = race_run(&r, RACE_CROSSED_BOTH_OFFERED);

	cr_assert_eq(rc, 0, "%s", rrw_failure(r.x));
	cr_assert(r.a[0] == 40 && r.b[0] == 64 && r.a[1] == 58 && r.b[1] == 64,
		  "not the interleaving of the failure: worker 0 cancelled "
		  "[%llu, %llu), worker 1 [%llu, %llu)",
		  (unsigned long long)r.a[0], (unsigned long long)r.b[0],
		  (unsigned long long)r.a[1], (unsigned long long)r.b[1]);
	cr_assert(r.crossed, "the race was not forced");
	/* each started the other's offer while waiting for its own cancel */
	cr_assert_geq(rrw_view(r.x, 0)->rw->tot[RR_C_ACCEPTED], 1);
	cr_assert_geq(rrw_view(r.x, 1)->rw->tot[RR_C_ACCEPTED], 1);
	rrw_destroy(r.x);
}
