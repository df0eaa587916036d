// SPDX-License-Identifier: MIT
/*
 * Checks of the rr world (world.h): at every nap (no worker idles while it
 * holds help it may start) and at the end of each run (no deadlock, exactly
 * once, item state, nothing left in flight), plus the description of a
 * failing state and the coverage of an exploration.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world_int.h"

/* Highest clock whose help w may start now: its own once its own list is
 * done (docs/protocol.md, rule 2), else only older ones. */
static int help_clock(const struct rrw_wk *k)
{
	switch (k->v.phase) {
	case RRW_OWN_DONE:
	case RRW_EVAL:
		return k->v.clock;
	case RRW_EXIT:
	case RRW_FINISHED:
		return k->x->cfg.clocks - 1;
	default:
		return k->v.clock - 1;
	}
}

void rrw_check_idle_help(struct rrw_wk *k)
{
	struct rrw *x = k->x;
	int mc = help_clock(k), i = rr_ready_task(&k->rw, mc);
	const struct rr_task *t;

	if (i < 0)
		return;
	t = &k->rw.tasks[i];
	if (x->cfg.allow_idle_help)
		return;
	rrw_failf(x,
		  "worker %d waits (%s of clock %d, engine state %s) while it "
		  "holds help it may start: items [%llu, %llu) of worker %d "
		  "clock %d.  Every wait must start such help: its helpee may "
		  "be waiting for it (docs/protocol.md, liveness)",
		  k->w, rrw_phase_names[k->v.phase], k->v.clock,
		  rr_state_names[k->rw.state], (unsigned long long)t->a,
		  (unsigned long long)t->b, t->helpee, t->clock);
}

/* ---- description of a stuck state ---------------------------------------- */

static int catf(char *buf, int off, int size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int catf(char *buf, int off, int size, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (off >= size)
		return off;
	va_start(ap, fmt);
	n = vsnprintf(buf + off, (size_t)(size - off), fmt, ap);
	va_end(ap);
	return n < 0 ? off : off + n;
}

static int describe_waits(const struct rrw_wk *k, char *b, int off, int sz)
{
	const struct rrw *x = k->x;
	const char *sep = "";

	if (k->op == OP_GATE)
		return catf(b, off, sz, "held by the test's forced order");
	if (k->op != OP_NAP || k->nap_free)
		return catf(b, off, sz, "can run");
	off = catf(b, off, sz, "waits for a change of:");
	for (uint64_t m = k->seen; m; m &= m - 1, sep = ",") {
		int o = __builtin_ctzll(m);

		if (o < x->W)
			off = catf(b, off, sz, "%s its mailbox", sep);
		else if (o < 2 * x->W)
			off = catf(b, off, sz, "%s progress of worker %d", sep,
				   o - x->W);
		else if (o < 3 * x->W)
			off = catf(b, off, sz, "%s whether worker %d finished",
				   sep, o - 2 * x->W);
		else if (o == OBJ_FIN(x))
			off = catf(b, off, sz, "%s finished clocks", sep);
		else if (o == OBJ_EVAL(x))
			off = catf(b, off, sz, "%s evaluated clocks", sep);
		else
			off = catf(b, off, sz, "%s items", sep);
	}
	return off;
}

void rrw_describe(struct rrw *x)
{
	char b[4096];
	int off = 0, sz = (int)sizeof(b);

	off = catf(b, off, sz, "deadlock: no worker can move.");
	for (int w = 0; w < x->W; w++) {
		const struct rrw_wk *k = &x->wk[w];
		const struct rr_worker *rw = &k->rw;

		off = catf(b, off, sz, "\n  worker %d: ", w);
		if (k->op == OP_NONE) {
			off = catf(b, off, sz, "finished (rc %d)", k->rc);
			continue;
		}
		off = catf(b, off, sz, "clock %d, %s, engine %s, ", k->v.clock,
			   rrw_phase_names[k->v.phase],
			   rr_state_names[rw->state]);
		off = describe_waits(k, b, off, sz);
		for (int i = 0; i < rw->noffers; i++)
			off = catf(b, off, sz, "; offer [%llu, %llu) to %d %s",
				   (unsigned long long)rw->offers[i].a,
				   (unsigned long long)rw->offers[i].b,
				   rw->offers[i].helper,
				   rr_offer_state_names[rw->offers[i].state]);
		for (int i = 0; i < rw->ntasks; i++)
			off = catf(b, off, sz,
				   "; queued DoThis [%llu, %llu) of worker %d "
				   "clock %d",
				   (unsigned long long)rw->tasks[i].a,
				   (unsigned long long)rw->tasks[i].b,
				   rw->tasks[i].helpee, rw->tasks[i].clock);
		for (int i = 0; i < x->vis[w].n; i++) {
			const struct frr_rr_msg *m =
			    &x->vis[w].m[(x->vis[w].head + i) % RRW_QCAP];

			off = catf(b, off, sz, "; unread %s from %d",
				   rr_msg_names[m->type], m->from);
		}
	}
	rrw_failf(x, "%s", b);
}

/* ---- end of a run ------------------------------------------------------- */

static void check_items(struct rrw *x)
{
	for (int w = 0; w < x->W; w++)
		for (int c = 0; c < x->cfg.clocks; c++)
			for (uint64_t i = 0; i < x->cfg.n[w]; i++)
				if (x->count[w][c][i] != 1)
					rrw_failf(
					    x,
					    "worker %d clock %d item %llu "
					    "processed %d times",
					    w, c, (unsigned long long)i,
					    x->count[w][c][i]);
	for (int w = 0; w < x->W; w++)
		for (uint64_t i = 0; i < x->cfg.n[w]; i++)
			if (x->state[w / x->cfg.T][w][i] !=
			    (uint64_t)x->cfg.clocks)
				rrw_failf(x,
					  "item state: worker %d item %llu "
					  "ends at %llu, not %d",
					  w, (unsigned long long)i,
					  (unsigned long long)
					      x->state[w / x->cfg.T][w][i],
					  x->cfg.clocks);
}

/* A CancelHelp may stay unread: its BegunHelping crossed it, and the helper
 * may leave once its helpees are finished.  Anything else is lost. */
static void check_leftovers(struct rrw *x)
{
	for (int c = 0; c < x->nch; c++) {
		const struct rrw_queue *q = &x->ch[c].q;

		for (int i = 0; i < q->n; i++)
			if (q->m[(q->head + i) % RRW_QCAP].type !=
			    RR_MSG_CANCEL)
				rrw_failf(
				    x, "a %s from %d to %d was never read",
				    rr_msg_names[q->m[(q->head + i) % RRW_QCAP]
						     .type],
				    x->ch[c].from, x->ch[c].to);
	}
	for (int w = 0; w < x->W; w++) {
		const struct rr_worker *rw = &x->wk[w].rw;

		for (int i = 0; i < x->vis[w].n; i++)
			if (x->vis[w].m[(x->vis[w].head + i) % RRW_QCAP].type !=
			    RR_MSG_CANCEL)
				rrw_failf(x, "worker %d left a message unread",
					  w);
		if (rw->ntasks)
			rrw_failf(x,
				  "worker %d ended with %d DoThis never "
				  "answered",
				  w, rw->ntasks);
		if (rw->tot[RR_C_OFFERS] !=
		    rw->tot[RR_C_ACCEPTED] + rw->tot[RR_C_CANCELLED])
			rrw_failf(x,
				  "worker %d: %llu offers, %llu accepted, %llu "
				  "cancelled",
				  w, (unsigned long long)rw->tot[RR_C_OFFERS],
				  (unsigned long long)rw->tot[RR_C_ACCEPTED],
				  (unsigned long long)rw->tot[RR_C_CANCELLED]);
	}
}

static uint64_t fnv(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 0x100000001b3ull;
	return h;
}

/* who did each item, and each worker's counters */
static uint64_t end_hash(const struct rrw *x)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int w = 0; w < x->W; w++) {
		const struct rr_worker *rw = &x->wk[w].rw;

		for (int c = 0; c < x->cfg.clocks; c++)
			for (uint64_t i = 0; i < x->cfg.n[w]; i++)
				h = fnv(h, (uint64_t)(x->by[w][c][i] + 1));
		for (int c = 0; c < RR_C_NCOUNTERS; c++)
			h = fnv(h, rw->tot[c]);
		h = fnv(h, rw->helped_ranges);
		h = fnv(h, (uint64_t)(x->wk[w].rc + 1000));
	}
	return h ? h : 1;
}

static int hs_has(const struct rrw_hset *s, uint64_t h)
{
	if (!s->cap)
		return 0;
	for (size_t i = h & (s->cap - 1); s->h[i]; i = (i + 1) & (s->cap - 1))
		if (s->h[i] == h)
			return 1;
	return 0;
}

static void hs_add(struct rrw_hset *s, uint64_t h)
{
	if (hs_has(s, h))
		return;
	if (2 * (s->n + 1) > s->cap) {
		struct rrw_hset old = *s;
		size_t cap = s->cap ? 2 * s->cap : 1024;

		s->h = calloc(cap, sizeof(*s->h));
		if (!s->h) {
			*s = old;
			return;
		}
		s->cap = cap;
		s->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.h[i])
				hs_add(s, old.h[i]);
		free(old.h);
	}
	for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1))
		if (!s->h[i]) {
			s->h[i] = h;
			s->n++;
			return;
		}
}

static int hs_within(const struct rrw_hset *a, const struct rrw_hset *b)
{
	for (size_t i = 0; i < a->cap; i++)
		if (a->h[i] && !hs_has(b, a->h[i]))
			return 0;
	return 1;
}

int rrw_end_states_within(const struct rrw *x, const struct rrw *y)
{
	return hs_within(&x->ends, &y->ends);
}

int rrw_has_trace(const struct rrw *x, uint64_t h)
{
	return hs_has(&x->traces, h);
}

int rrw_traces_within(const struct rrw *x, const struct rrw *y)
{
	return hs_within(&x->traces, &y->traces);
}

static uint64_t trace_hash(const struct rrw *x)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int t = 0; t < x->sys.nthreads; t++)
		h = fnv(h, x->fp[t]);
	return h ? h : 1;
}

const char *const rrw_path_names[RRW_NPATHS] = {
	[RRW_P_OFFER] = "offer",
	[RRW_P_ACCEPTED] = "offer accepted",
	[RRW_P_CANCELLED] = "offer cancelled",
	[RRW_P_CROSSING] = "CancelHelp crossed by BegunHelping",
	[RRW_P_RECLAIM_EXTEND] = "cancelled range back on the list",
	[RRW_P_RECLAIM_RUN] = "cancelled range run as a range",
	[RRW_P_HELP_AHEAD] = "help by a worker in a later clock",
	[RRW_P_HELP_AT_EXIT] = "help after the helper's last clock",
	[RRW_P_HELP_IN_CANCEL_WAIT] =
	    "help started while waiting for a cancel answer",
	[RRW_P_CROSSED_OFFERS] =
	    "two workers' offers to each other open at once",
	[RRW_P_CAPACITY] = "help held back by the help capacity",
};

static void account(struct rrw *x)
{
	uint64_t t[RR_C_NCOUNTERS] = { 0 };

	for (int w = 0; w < x->W; w++)
		for (int c = 0; c < RR_C_NCOUNTERS; c++)
			t[c] += x->wk[w].rw.tot[c];
	x->flags |= (t[RR_C_OFFERS] > 0) << RRW_P_OFFER |
		    (t[RR_C_ACCEPTED] > 0) << RRW_P_ACCEPTED |
		    (t[RR_C_CANCELLED] > 0) << RRW_P_CANCELLED;
	x->cover.runs++;
	for (int i = 0; i < RRW_NPATHS; i++)
		x->cover.path[i] += x->flags >> i & 1;
	x->last_trace = trace_hash(x);
	hs_add(&x->ends, end_hash(x));
	hs_add(&x->traces, x->last_trace);
	x->cover.end_states = (long)x->ends.n;
	x->cover.traces = (long)x->traces.n;
}

int rrw_check_end(void *arg)
{
	struct rrw *x = arg;
	int deadlock = 0;

	for (int w = 0; w < x->W && !x->failed; w++) {
		if (x->wk[w].op != OP_NONE) {
			deadlock = 1;
			rrw_describe(x);
		} else if (x->wk[w].rc) {
			rrw_failf(x, "worker %d failed: %s", w,
				  strerror(-x->wk[w].rc));
		}
	}
	if (!x->failed)
		check_items(x);
	if (!x->failed)
		check_leftovers(x);
	account(x);
	if (!x->failed)
		return 0;
	return deadlock ? -EDEADLK : -EPROTO;
}
