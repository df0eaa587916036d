/* SPDX-License-Identifier: MIT */
/*
 * The seam between the runtime's worker loop (runtime/worker/, table/) and
 * RapidReassignment / straggler injection / trace (runtime/rr/,
 * straggler/, trace/).
 *
 * The runtime owns the loop over clocks and over the items of each worker's
 * list; rr plugs in through one const ops table, `frr_rr_ops` (rr/rr.c),
 * that the runtime sets explicitly (rt->ws->rr) when the rr layer is engaged.
 *
 * ---- When the hooks run -----------------------------------------------
 * The rr layer is ENGAGED in modes flexrr and rr (frr_rt_rr_reassign() ==
 * 1).  Straggler injection and the trace do not need it: the worker loop
 * calls them directly (worker/instrument.c), in every mode.
 * One clock of worker w (thread of w, all hooks on that thread):
 *
 *   clock_begin(w, c)            serve help
 *   SSP wait (runtime): until every shard applied clocks <= c-s-1;
 *                       idle(w, c) is called every ~100 us while waiting
 *   list = { next = 0, end = n_w, n = n_w }
 *   while (list.next < list.end):
 *       app->process(ctx of (w, c), [next, min(next + chunk, end)))
 *       next += chunk; progress published when crossing a 1/16 mark
 *       progress_check(w, c, &list)   may move list.end down (offer the tail
 *                                     [a, end) to a helper) or back up (a
 *                                     cancelled offer)
 *   k = own_list_done(w, c, &list) help others, then wait until every offer
 *                                  of clock c this worker made that was
 *                                  accepted is completed; returns k = number
 *                                  of ranges of (w, c) completed by helpers
 *                                  (>= 0), or -errno to fail the job.  If it
 *                                  extends list.end again the runtime goes
 *                                  back to the item loop and calls
 *                                  own_list_done again afterwards.
 *   runtime flushes w's own update batch of clock c, telling every shard
 *   to expect k more batches attributed to (w, c)
 *   clock_end(w, c)
 *
 * ---- Helping ----------------------------------------------------------
 * frr_rt_run_range(rt, helper, owner, c, a, b) runs app->process for items
 * [a, b) of `owner`'s partition in clock c on the calling thread (which runs
 * worker `helper`), with the updates batched apart and attributed to
 * (owner, c); before it returns the batch is flushed to every shard (exactly
 * one batch per shard per call), and the item states of [a, b) are written
 * back to the owner's authoritative copy.  After it returns, send
 * HelpCompleted.  Each call counts as 1 in the owner's own_list_done result.
 * Capacity: the shard drains every batch as it arrives (table/inbox.c), so
 * run_range never waits for a clock to be applied; rr still keeps at most
 * FRR_RT_HELP_SLOTS (8) unapplied help ranges per helper (max_unapplied),
 * a bound on the help a stalled clock can accumulate.
 * Preconditions: the caller's rank holds a replica of owner's partition
 * (frr_rt_want_replica at job_init), c is not yet applied, [a, b) in range.
 *
 * ---- Item state -------------------------------------------------------
 * Per worker w, the runtime keeps one contiguous buffer of the item states
 * (app->item_state_size/init) on the owner's rank (authoritative) and on each
 * rank holding a replica.  Same-rank helpers share the buffer.  Before
 * offering [a, b) to a helper on another rank, the owner calls
 * frr_rt_state_push(rt, w, helper, a, b) so the helper's copy is current;
 * frr_rt_run_range writes it back (both are one-sided writes of the bytes of
 * items [a, b), flushed before return).  The buffers of held partitions live
 * in remote-writable regions, set up collectively in flexrr/rr mode when the
 * app has item state.  The helper's rank must hold a replica of w (else
 * -EINVAL with a message).
 *
 * ---- Progress ---------------------------------------------------------
 * One 64-bit word per worker (frr_prog_pack), written by the worker's thread
 * into every rank's control region: locally by an atomic store, remotely by
 * frr_tp_write_u64 (never torn, G2).  A reader tells stale from fresh by the
 * clock field.  frr_rt_progress(rt, v) is a local acquire load on any thread.
 *
 * ---- Mailboxes --------------------------------------------------------
 * Fixed 64-byte messages between any two workers, local or remote.  One
 * ring of FRR_RR_MBOX_DEPTH slots per (sender, target) pair lives in the
 * target's rank; a remote send is a one-sided write of the body followed by
 * a counter write of the slot's sequence word (G3: body visible when the
 * sequence is).  Per ring: one producer (the thread running `from`), one
 * consumer (the thread running `to`).  Send is non-blocking (-EAGAIN when
 * the target has not drained the ring); recv waits up to timeout_ms.
 *
 * Threading summary: every frr_rt_* call below taking a worker id `w` (or
 * `from`/`helper`) must be made on the thread currently running that worker
 * (hooks are); frr_rt_progress, frr_rt_nitems and the job getters may be
 * called from any thread.
 */
#ifndef FLEXRR_RR_HOOKS_H
#define FLEXRR_RR_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "flexrr/flexrr.h"
#include "worker.h"

/* ---- mailboxes ---------------------------------------------------------- */
#define FRR_RR_MBOX_DEPTH 32
struct frr_rr_msg {
	uint32_t type; /* rr's enum (ProgressReport, DoThis, ...) */
	int32_t from;  /* sender worker (set by frr_rt_msg_send) */
	int32_t to;    /* target worker */
	int32_t clock; /* clock of the helpee */
	uint64_t a, b; /* item range [a, b) */
	uint64_t w[3]; /* rr's words */
	uint64_t seq;  /* runtime's: sequence in the ring; do not use */
};
_Static_assert(sizeof(struct frr_rr_msg) == 64, "one cache line");

/* rr/rr.c */
extern const struct frr_rr_ops frr_rr_ops;
/* rr/lb.c: --mode lb-bsp (planned tails within the helper groups) */
extern const struct frr_rr_ops frr_lb_ops;
/* rr.c, for rr and lb-bsp: load the replicas of every partition this
 * rank's workers may run for another (the workers of other ranks whose
 * group of g holds one of ours); mode names the caller in the error. */
int rr_load_replicas(struct frr_rt *rt, int g, const char *mode);

/* ---- runtime calls for rr ----------------------------------------------- */
const struct frr_rt_shape *frr_rt_shape(const struct frr_rt *rt);
int frr_rt_rr_reassign(const struct frr_rt *rt); /* 1 in flexrr/rr mode */
/* Items in worker v's partition (any v: exchanged at start-up). */
uint64_t frr_rt_nitems(const struct frr_rt *rt, int v);
int frr_rt_prog_shift(const struct frr_rt *rt);

/* job_init only: load a read-only replica of worker v's partition on this
 * rank (app->load_partition(v) and item state buffer). */
int frr_rt_want_replica(struct frr_rt *rt, int v);
/* job_init only, on every rank for every pair: rank r reads worker w's
 * progress words.  Progress words go only to the ranks that read them
 * (plus w's own); the stall detector needs none (it uses each rank's
 * aggregate, job/health.c). */
int frr_rt_progress_reader(struct frr_rt *rt, int w, int r);

int frr_rt_msg_send(struct frr_rt *rt, int from, int to,
		    const struct frr_rr_msg *m);
/* 1 = *m received, 0 = nothing within timeout_ms, < 0 error (a dead peer,
 * or the job failed: every rr wait ends then). */
int frr_rt_msg_recv(struct frr_rt *rt, int w, struct frr_rr_msg *m,
		    int timeout_ms);

int frr_rt_run_range(struct frr_rt *rt, int helper, int owner, int clock,
		     uint64_t a, uint64_t b);
int frr_rt_state_push(struct frr_rt *rt, int owner, int helper, uint64_t a,
		      uint64_t b);

/* Seconds since the job's start (monotonic), for trace/stragglers. */
double frr_rt_now(const struct frr_rt *rt);
/* Median time of w's last clocks' item loops, 0 if unknown ("nominal clock
 * time" for straggler delays). */
double frr_rt_clock_time(const struct frr_rt *rt, int w);

#endif /* FLEXRR_RR_HOOKS_H */
