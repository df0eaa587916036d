// SPDX-License-Identifier: MIT
/*
 * Moving the rows ranks hold (which rows, and where: table/hold.c): an
 * owner's push of its changed rows into the ranks that hold them live,
 * after each clock; a reader's pull of a row it does not hold (a slot of
 * its pull room, a request word, the row and the ack behind it); and the
 * wake of the rows it holds dormant for its helpees (one request per
 * owner and helpee rank, every such row written, then pushed from then
 * on).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "flexrr/log.h"
#include "table.h"

#define NT FRR_MAX_TABLES

/* ---- pushing held rows ------------------------------------------------ */
/* Whether a slot word of a reader is pushed: live ones after a clock,
 * dormant ones at the reader's wake. */
static inline int pushed_now(uint32_t s, int wake)
{
	return wake ? frr_hold_dormant(s) : frr_hold_live(s);
}

/* Rows [lo, hi) of this rank's shard of table t into rank r's live slots
 * (os: r's slots of the shard), or with wake into its dormant ones of the
 * local rows set in `only` (a helpee's), which become live: one write per
 * run of rows that are consecutive there too, their bytes added to what r
 * was sent and, unless NULL, to *clock (a clock's pushes).  Under
 * tp_lock. */
static int push_to(struct frr_rt *rt, int t, int r, uint32_t *os, uint64_t lo,
		   uint64_t hi, const uint64_t *only, uint64_t *clock)
{
	const int wake = only != NULL;
	struct frr_hold *h = rt->tb->hold;
	size_t rb = rt->tb->spec[t].cols * sizeof(float);
	size_t src = rt->tb->repl_off[t * rt->P + rt->rank];
	uint64_t roff = h->tbl_off[r * NT + t];
	int err = 0;

	for (uint64_t li = lo; li < hi && !err;) {
		uint64_t a = li;
		uint32_t s = os[li] & ~FRR_HOLD_DORMANT;

		if (!pushed_now(os[li], wake) ||
		    (wake && !frr_bit_get(only, li))) {
			li++;
			continue;
		}
		while (++li < hi && pushed_now(os[li], wake) &&
		       (!wake || frr_bit_get(only, li)) &&
		       (os[li] & ~FRR_HOLD_DORMANT) == s + (uint32_t)(li - a))
			;
		for (uint64_t k = a; wake && k < li; k++)
			os[k] = s + (uint32_t)(k - a);
		err = frr_rt_tp_check(
		    rt,
		    frr_tp_write(rt->eps[r], rt->tb->repl, src + a * rb,
				 rt->tb->rrepl[r], roff + (uint64_t)s * rb,
				 (li - a) * rb, 0, 0),
		    r, "pushing rows");
		if (clock)
			*clock += (li - a) * rb;
		h->sent_to[r] += (li - a) * rb;
	}
	return err;
}

/* Rows [lo, hi) of this rank's shard of table t, into every rank that
 * holds them live. */
int frr_rt_push_rows(struct frr_rt *rt, int t, uint64_t lo, uint64_t hi)
{
	uint64_t S = rt->tb->shard_rows[t * rt->P + rt->rank];
	int err = 0;

	if (hi <= lo)
		return 0;
	pthread_mutex_lock(&rt->tp_lock);
	for (int r = 0; r < rt->P && !err; r++)
		if (r != rt->rank)
			err = push_to(rt, t, r,
				      rt->tb->hold->oslot[t] + (uint64_t)r * S,
				      lo, hi, NULL, &rt->tb->hold->push_now);
	pthread_mutex_unlock(&rt->tp_lock);
	return err;
}

/* ---- pulling a row not held ------------------------------------------- */
static uint64_t req_word(int t, uint64_t j, uint64_t li)
{
	return (uint64_t)t << (FRR_REQ_ROW_BITS + FRR_REQ_SLOT_BITS) |
	       j << FRR_REQ_ROW_BITS | (li + 1);
}

/* A request word's fields, as req_word packs them. */
static int req_table(uint64_t req)
{
	return (int)(req >> (FRR_REQ_ROW_BITS + FRR_REQ_SLOT_BITS));
}

static uint64_t req_slot(uint64_t req)
{
	return (req >> FRR_REQ_ROW_BITS) & FRR_REQ_SLOT_MAX;
}

static uint64_t req_row(uint64_t req)
{
	return (req & ((1ull << FRR_REQ_ROW_BITS) - 1)) - 1;
}

/* Send request word req to rank o and wait for its ack (q: this rank's
 * requester, a worker thread or T for the server, which keeps serving the
 * others' pulls while it waits); what: what was asked, for the timeout's
 * message. */
static int ask(struct frr_rt *rt, int o, uint64_t req, int q, const char *what)
{
	int g = q < rt->T ? rt->rank * rt->T + q : rt->W + rt->rank;
	long long t0;
	int err;

	pthread_mutex_lock(&rt->tp_lock);
	err = frr_tp_write_u64(rt->eps[o], rt->rctl[o],
			       rt->off_pullreq + (size_t)g * 64, req, 0, 0);
	if (!err)
		err = frr_tp_flush(rt->eps[o], rt->flush_ms);
	pthread_mutex_unlock(&rt->tp_lock);
	err = frr_rt_tp_check(rt, err, o, "asking for rows");
	t0 = frr_now_ms();
	for (int n = 0; !err; n++) {
		if (frr_tp_load_u64(
			ctl_u64(rt, rt->off_pullack + (size_t)q * 64)) == req)
			return 0;
		err = frr_rt_failed(rt);
		if (!err && q == rt->T)
			err = frr_rt_pull_serve(rt) < 0 ? frr_rt_failed(rt) : 0;
		if (!err && frr_now_ms() - t0 > rt->prm->timeout_ms)
			err = frr_rt_fail(rt, -ETIMEDOUT,
					  "rank %d did not send %s within %d "
					  "ms (the --timeout): its server "
					  "hangs",
					  o, what, rt->prm->timeout_ms);
		if (n > 16)
			frr_nap_us(20);
		else
			sched_yield();
	}
	return err;
}

/* Ask the owner for row `row` into pull slot j and wait for its ack. */
static int pull(struct frr_rt *rt, int t, uint64_t row, uint64_t j, int q)
{
	int o = frr_place_owner(rt->tb->hold, rt->P, t, row);
	uint64_t li = frr_place_local(rt->tb->hold, rt->P, t, row);
	char what[96];

	if (li > FRR_REQ_ROW_MAX)
		return frr_rt_fail(rt, -E2BIG,
				   "table %s row %llu: too far into its shard "
				   "to be pulled; declare it in part_rows",
				   rt->tb->spec[t].name,
				   (unsigned long long)row);
	snprintf(what, sizeof(what), "row %llu of table %s",
		 (unsigned long long)row, rt->tb->spec[t].name);
	return ask(rt, o, req_word(t, j, li), q, what);
}

/* One turn of waiting for another thread's request: the job's error if it
 * failed meanwhile (the server, q == T, serves the others' pulls). */
static int wait_turn(struct frr_rt *rt, int q)
{
	if (q == rt->T && frr_rt_pull_serve(rt) < 0)
		return frr_rt_failed(rt);
	sched_yield();
	return frr_rt_failed(rt);
}

/* The rows of owner o that helpee i (a rank whose partitions this rank
 * may help) declares, dormant here, live: asked for once (by the first
 * thread to read one; the others wait), then their slots' bits cleared.
 * 1 when this call woke them, 0 when they were live already. */
static int wake(struct frr_rt *rt, int o, int i, int q)
{
	struct frr_hold *h = rt->tb->hold;
	uint8_t *st = &h->dormant[o * h->nh + i], one = 1;
	int err;

	if (!__atomic_compare_exchange_n(st, &one, 2, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(st, __ATOMIC_ACQUIRE))
			if ((err = wait_turn(rt, q)))
				return err;
		return 0;
	}
	err = ask(rt, o,
		  req_word(FRR_REQ_WAKE_T, (uint64_t)o, (uint64_t)h->hrank[i]),
		  q, "the rows this rank's helpers read");
	if (err) {
		__atomic_store_n(st, 1, __ATOMIC_RELEASE);
		return err;
	}
	for (int t = 0; t < rt->tb->ntables; t++)
		for (uint64_t li = 0; li < rt->tb->shard_rows[t * rt->P + o];
		     li++) {
			uint64_t row = frr_place_row(h, rt->P, t, o, li);
			uint32_t *sp = &h->rslot[t][row];
			uint32_t s = __atomic_load_n(sp, __ATOMIC_RELAXED);

			if (frr_hold_dormant(s) &&
			    frr_bit_get(h->hbits[i * NT + t], row))
				__atomic_store_n(sp, s & ~FRR_HOLD_DORMANT,
						 __ATOMIC_RELEASE);
		}
	atomic_fetch_add(&h->woken, 1);
	frr_dbg("rank %d: rank %d now pushes the rows this rank holds for "
		"rank %d's partitions (first read)",
		rt->rank, o, h->hrank[i]);
	__atomic_store_n(st, 0, __ATOMIC_RELEASE);
	return 1;
}

/* A dormant row of owner o read: the rows of o that the partition being
 * run declares when it is a helpee's (a helper's range), else those of
 * every helpee that declares the row. */
static int wake_row(struct frr_rt *rt, int t, uint64_t row, int q, int part)
{
	struct frr_hold *h = rt->tb->hold;
	int o = frr_place_owner(h, rt->P, t, row), woke = 0, err;
	int i = part >= 0 ? h->hidx[part / rt->T] : -1;

	if (i >= 0 && frr_bit_get(h->hbits[i * NT + t], row))
		return wake(rt, o, i, q);
	for (i = 0; i < h->nh; i++) {
		if (!frr_bit_get(h->hbits[i * NT + t], row))
			continue;
		if ((err = wake(rt, o, i, q)) < 0)
			return err;
		woke |= err;
	}
	return woke;
}

int frr_rt_row_hold(struct frr_rt *rt, int t, uint64_t row, int q, int part)
{
	struct frr_hold *h = rt->tb->hold;
	uint32_t *sp = &h->rslot[t][row], s = FRR_HOLD_NONE;
	uint64_t j;
	int err;

	s = __atomic_load_n(sp, __ATOMIC_ACQUIRE);
	if (frr_hold_live(s))
		return 0;
	if (frr_hold_dormant(s))
		return wake_row(rt, t, row, q, part);
	s = FRR_HOLD_NONE;
	if (!__atomic_compare_exchange_n(sp, &s, FRR_HOLD_BUSY, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/* another thread of this rank pulls it: wait for its slot */
		while (__atomic_load_n(sp, __ATOMIC_ACQUIRE) == FRR_HOLD_BUSY)
			if ((err = wait_turn(rt, q)))
				return err;
		return frr_hold_live(__atomic_load_n(sp, __ATOMIC_ACQUIRE))
			   ? 1
			   : frr_rt_failed(rt);
	}
	j = atomic_fetch_add(&h->npull[t], 1);
	if (j >= h->pull_cap[rt->rank * NT + t]) {
		__atomic_store_n(sp, FRR_HOLD_NONE, __ATOMIC_RELEASE);
		return frr_rt_fail(
		    rt, -ENOSPC,
		    "app %s: table %s row %llu: this rank read %llu rows of "
		    "it that part_rows did not declare, more than its room "
		    "for such rows (%u): declare the rows a partition reads "
		    "in part_rows",
		    rt->app->name, rt->tb->spec[t].name,
		    (unsigned long long)row, (unsigned long long)j + 1,
		    h->pull_cap[rt->rank * NT + t]);
	}
	err = pull(rt, t, row, j, q);
	if (err) {
		__atomic_store_n(sp, FRR_HOLD_NONE, __ATOMIC_RELEASE);
		return err;
	}
	__atomic_store_n(sp, h->pull_base[rt->rank * NT + t] + (uint32_t)j,
			 __ATOMIC_RELEASE);
	return 1;
}

/* The rank of requester g (a worker, or W + the rank for its server). */
static int req_rank(const struct frr_rt *rt, int g)
{
	return g < rt->W ? g / rt->T : g - rt->W;
}

/* The ack of requester g's request req behind what was written for it,
 * on the same endpoint (its slot: the worker thread's, or T for its
 * server).  Under tp_lock. */
static int ack(struct frr_rt *rt, int g, uint64_t req)
{
	int r = req_rank(rt, g), q = g < rt->W ? g % rt->T : rt->T;
	int err = frr_tp_write_u64(rt->eps[r], rt->rctl[r],
				   rt->off_pullack + (size_t)q * 64, req, 0, 0);

	return err ? err : frr_tp_flush(rt->eps[r], rt->flush_ms);
}

/* Requester g's wake (req, copied once and checked): its rank's dormant
 * slots of this shard that helpee rank hq declares live, their rows
 * written there, then the ack. */
static int serve_wake(struct frr_rt *rt, int g, uint64_t req)
{
	struct frr_hold *h = rt->tb->hold;
	int r = req_rank(rt, g), err = 0;
	uint64_t hq = req_row(req);

	if (r == rt->rank || !h->on_use || hq >= (uint64_t)rt->P ||
	    hq == (uint64_t)r ||
	    req != req_word(FRR_REQ_WAKE_T, (uint64_t)rt->rank, hq))
		return frr_rt_fail(rt, -EPROTO,
				   "rank %d sent a malformed request for its "
				   "helpers' rows (%016llx): not a rank of "
				   "this job?",
				   r, (unsigned long long)req);
	pthread_mutex_lock(&rt->tp_lock);
	for (int t = 0; t < rt->tb->ntables && !err; t++) {
		uint64_t S = rt->tb->shard_rows[t * rt->P + rt->rank];
		uint32_t *os = h->oslot[t] + (uint64_t)r * S;

		err = push_to(rt, t, r, os, 0, S,
			      h->qdecl[t] + hq * frr_bit_words(S), NULL);
	}
	if (!err)
		err = frr_rt_tp_check(rt, ack(rt, g, req), r,
				      "answering a request for rows");
	pthread_mutex_unlock(&rt->tp_lock);
	return err;
}

/* One request of requester g, copied once (the word is peer-written):
 * checked, then the row goes into the requester's pull slot, is pushed
 * there from now on, and the ack follows it on the same endpoint. */
static int serve_one(struct frr_rt *rt, int g, uint64_t req)
{
	struct frr_hold *h = rt->tb->hold;
	int r = req_rank(rt, g), t = req_table(req);
	uint64_t j = req_slot(req), li = req_row(req);
	uint64_t S;
	size_t rb;
	uint32_t slot;
	int err;

	if (r == rt->rank || t >= rt->tb->ntables ||
	    li >= (S = rt->tb->shard_rows[t * rt->P + rt->rank]) ||
	    j >= h->pull_cap[r * NT + t])
		return frr_rt_fail(rt, -EPROTO,
				   "rank %d sent a malformed row request "
				   "(%016llx): not a rank of this job?",
				   r, (unsigned long long)req);
	rb = rt->tb->spec[t].cols * sizeof(float);
	slot = h->pull_base[r * NT + t] + (uint32_t)j;
	h->oslot[t][(uint64_t)r * S + li] = slot;
	pthread_mutex_lock(&rt->tp_lock);
	err = frr_tp_write(rt->eps[r], rt->tb->repl,
			   rt->tb->repl_off[t * rt->P + rt->rank] + li * rb,
			   rt->tb->rrepl[r], h->tbl_off[r * NT + t] + slot * rb,
			   rb, 0, 0);
	if (!err)
		err = ack(rt, g, req);
	pthread_mutex_unlock(&rt->tp_lock);
	h->served++;
	h->sent_to[r] += rb;
	return frr_rt_tp_check(rt, err, r, "sending a requested row");
}

int frr_rt_pull_serve(struct frr_rt *rt)
{
	struct frr_hold *h = rt->tb->hold;
	int busy = 0;

	/* the server thread only: pull_seen and oslot are its own */
	for (int g = 0; g < rt->W + rt->P; g++) {
		uint64_t req = frr_tp_load_u64(
		    ctl_u64(rt, rt->off_pullreq + (size_t)g * 64));
		int err;

		if (!req || req == h->pull_seen[g])
			continue;
		h->pull_seen[g] = req;
		err = req_table(req) == FRR_REQ_WAKE_T ? serve_wake(rt, g, req)
						       : serve_one(rt, g, req);
		if (err)
			return err;
		busy = 1;
	}
	return busy;
}
