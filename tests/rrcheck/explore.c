// SPDX-License-Identifier: MIT
/*
 * Depth-first stateless exploration with dynamic partial-order reduction
 * (explore.h).  One run = reset + steps until no thread is enabled.  The
 * stack of nodes (one per state of the current run) survives between runs:
 * the next run replays the stack's choices up to the deepest node that
 * still has a choice to try, then takes it.
 *
 * Happens-before is tracked with vector clocks: step j follows the earlier
 * steps of its thread, the last conflicting step of every other thread, and
 * the step it names as its cause.  A race is a conflicting step of another
 * thread that does not happen before a thread's next step; the state before
 * it then gets a backtrack choice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "explore.h"
#include "flexrr/flexrr.h"

struct node {
	uint32_t enabled, alive, backtrack, done, sleep;
	int chosen;
	struct rrc_acc pend[RRC_MAXT];
	int cause[RRC_MAXT];
};

struct ex {
	const struct rrc_sys *sys;
	int T, naive;
	struct node *nodes; /* RRC_MAXDEPTH + 1 */
	int nnodes;
	/* the current run */
	int tid[RRC_MAXDEPTH];
	int32_t (*vc)[RRC_MAXT]; /* per step */
	int32_t tvc[RRC_MAXT][RRC_MAXT];
	int32_t lw[64][RRC_MAXT], lr[64][RRC_MAXT]; /* last write / read */
};

static int lowest(uint32_t m)
{
	return __builtin_ctz(m);
}

static int dependent(struct rrc_acc a, struct rrc_acc b)
{
	return (a.wr & (b.rd | b.wr)) || (b.wr & a.rd);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Latest step of thread q that conflicts with an access A, or -1. */
static int last_conflict(const struct ex *x, int q, struct rrc_acc a)
{
	int best = -1;

	for (uint64_t m = a.wr | a.rd; m; m &= m - 1) {
		int o = __builtin_ctzll(m);

		if (x->lw[o][q] > best)
			best = x->lw[o][q];
		if ((a.wr >> o & 1) && x->lr[o][q] > best)
			best = x->lr[o][q];
	}
	return best;
}

static void join(int32_t *dst, const int32_t *src, int T)
{
	for (int q = 0; q < T; q++)
		if (src[q] > dst[q])
			dst[q] = src[q];
}

/* What thread p's next step knows: p's clock, plus its cause's. */
static void pending_vc(const struct ex *x, int p, int cause, int32_t *out)
{
	memcpy(out, x->tvc[p], sizeof(x->tvc[p]));
	if (cause >= 0)
		join(out, x->vc[cause], x->T);
}

/* Threads whose first step in v = (steps after i that i does not happen
 * before), followed by p's next step, has no predecessor in v. */
static uint32_t initials(const struct ex *x, int i, int depth, int p,
			 const int32_t *pvc)
{
	int f[RRC_MAXT], ti = x->tid[i];
	uint32_t I = 0;

	for (int q = 0; q < x->T; q++)
		f[q] = -1;
	for (int j = i + 1; j < depth; j++) {
		int q = x->tid[j], pred = 0;

		if (x->vc[j][ti] >= i || f[q] >= 0)
			continue;
		f[q] = j;
		for (int r = 0; r < x->T && !pred; r++)
			pred = r != q && f[r] >= 0 && f[r] < j &&
			       x->vc[j][r] >= f[r];
		if (!pred)
			I |= 1u << q;
	}
	if (f[p] < 0) {
		int pred = 0;

		for (int r = 0; r < x->T && !pred; r++)
			pred = r != p && f[r] >= 0 && pvc[r] >= f[r];
		if (!pred)
			I |= 1u << p;
	}
	return I;
}

/* Source-DPOR (Abdulla et al., POPL 2014, Algorithm 1): before thread t
 * steps at the state after `depth` steps, every step i of another thread
 * in an immediate race with t's step (conflicting, happening before it
 * but through no other step) could have gone after it.  The state before i
 * then needs a choice that starts the reversed order: a thread whose first
 * step in v = (the steps after i that do not depend on i) . t's step has
 * nothing before it in v.  A reversal no thread can start (its first step
 * is not enabled before i: i enabled it) is not a race. */
static void find_races(struct ex *x, int depth, int t)
{
	const struct node *n = &x->nodes[depth];
	int32_t pvc[RRC_MAXT];
	int cand[RRC_MAXT], cause = n->cause[t];

	/* the clock t's step will have: its thread's, its cause's and that
	 * of the last conflicting step of every other thread */
	pending_vc(x, t, cause, pvc);
	for (int q = 0; q < x->T; q++) {
		cand[q] = q == t ? -1 : last_conflict(x, q, n->pend[t]);
		if (cand[q] >= 0)
			join(pvc, x->vc[cand[q]], x->T);
	}
	for (int q = 0; q < x->T; q++) {
		int i = cand[q], direct = i > x->tvc[t][q];
		struct node *pre;
		uint32_t I, ok;

		if (i < 0 || !direct)
			continue;
		if (cause >= 0 && x->vc[cause][q] >= i)
			continue;
		for (int r = 0; r < x->T && direct; r++)
			if (r != q && cand[r] >= 0 && x->vc[cand[r]][q] >= i)
				direct = 0;
		if (!direct)
			continue;
		pre = &x->nodes[i];
		I = initials(x, i, depth, t, pvc) & pre->enabled;
		/* a sleeping choice is never taken: it does not count */
		ok = I & ~pre->sleep;
		if (!ok || (ok & pre->backtrack))
			continue;
		pre->backtrack |= 1u << lowest(ok);
	}
}

static void record(struct ex *x, int j, int t, struct rrc_acc a, int cause)
{
	int32_t *v = x->vc[j];

	memcpy(v, x->tvc[t], sizeof(x->tvc[t]));
	if (cause >= 0)
		join(v, x->vc[cause], x->T);
	for (int q = 0; q < x->T; q++) {
		int c = q == t ? -1 : last_conflict(x, q, a);

		if (c >= 0)
			join(v, x->vc[c], x->T);
	}
	v[t] = j;
	memcpy(x->tvc[t], v, sizeof(x->tvc[t]));
	for (uint64_t m = a.wr; m; m &= m - 1)
		x->lw[__builtin_ctzll(m)][t] = j;
	for (uint64_t m = a.rd; m; m &= m - 1)
		x->lr[__builtin_ctzll(m)][t] = j;
	x->tid[j] = t;
}

static void snapshot(struct ex *x, struct node *n)
{
	const struct rrc_sys *s = x->sys;

	n->enabled = n->alive = 0;
	for (int t = 0; t < x->T; t++) {
		n->cause[t] = -1;
		n->pend[t] = (struct rrc_acc){ 0, 0 };
		if (!s->alive(s->arg, t))
			continue;
		n->alive |= 1u << t;
		if (s->enabled(s->arg, t))
			n->enabled |= 1u << t;
		n->pend[t] = s->pending(s->arg, t, &n->cause[t]);
	}
}

/* One run replaying nodes[0..prefix) (the last with its new choice).
 * Returns sys->end's rc (1 = redundant run, not checked), or < 0. */
static int run_once(struct ex *x, int prefix, int *depth_out)
{
	const struct rrc_sys *s = x->sys;
	uint32_t sleep = 0;
	int depth = 0;

	s->reset(s->arg);
	memset(x->tvc, 0xff, sizeof(x->tvc));
	memset(x->lw, 0xff, sizeof(x->lw));
	memset(x->lr, 0xff, sizeof(x->lr));
	for (;;) {
		struct node *n = &x->nodes[depth], chk;
		uint32_t avail, keep;
		int t;

		if (depth < prefix) {
			snapshot(x, &chk);
			if (chk.enabled != n->enabled)
				return -EPROTO;
			t = n->chosen;
		} else {
			snapshot(x, n);
			n->backtrack = n->done = 0;
			n->sleep = sleep;
			x->nnodes = depth + 1;
			if (x->naive)
				n->backtrack = n->enabled;
			if (!n->enabled) {
				*depth_out = depth;
				return s->end(s->arg);
			}
			avail = n->enabled & ~n->sleep;
			if (!avail) {
				*depth_out = depth;
				return 1;
			}
			t = lowest(avail);
			n->chosen = t;
			n->backtrack |= 1u << t;
			n->done |= 1u << t;
		}
		if (depth >= RRC_MAXDEPTH)
			return -E2BIG;
		/* races of t's step: once per (state, choice) */
		if (!x->naive && depth >= prefix - 1)
			find_races(x, depth, t);
		/* steps explored from here before t, independent of t, stay
		 * asleep after t: running them first again is redundant */
		sleep = 0;
		if (x->naive != 2) {
			keep = (n->sleep | n->done) & ~(1u << t);
			for (; keep; keep &= keep - 1) {
				int q = lowest(keep);

				if (!dependent(n->pend[q], n->pend[t]))
					sleep |= 1u << q;
			}
		}
		s->step(s->arg, t, depth);
		record(x, depth, t, n->pend[t], n->cause[t]);
		depth++;
	}
}

static void save_sched(const struct ex *x, int depth, struct rrc_stats *st)
{
	st->depth = depth;
	for (int k = 0; k < depth; k++)
		st->sched[k] = (uint8_t)x->nodes[k].chosen;
}

int rrc_explore(const struct rrc_sys *sys, const struct rrc_opts *o,
		struct rrc_stats *st)
{
	struct ex *x = calloc(1, sizeof(*x));
	double t0 = now_s();
	int prefix = 0, rc = 0, depth = 0;

	memset(st, 0, sizeof(*st));
	if (!x)
		return -ENOMEM;
	x->sys = sys;
	x->T = sys->nthreads;
	x->naive = o->naive;
	x->nodes = calloc(RRC_MAXDEPTH + 1, sizeof(*x->nodes));
	x->vc = calloc(RRC_MAXDEPTH, sizeof(*x->vc));
	if (!x->nodes || !x->vc || x->T > RRC_MAXT) {
		rc = x->T > RRC_MAXT ? -E2BIG : -ENOMEM;
		goto out;
	}
	for (;;) {
		rc = run_once(x, prefix, &depth);
		if (rc < 0) {
			save_sched(x, depth, st);
			break;
		}
		if (rc == 1) {
			st->redundant++;
		} else {
			st->runs++;
			if (o->on_run) {
				save_sched(x, depth, st);
				o->on_run(o->on_run_arg, rc, st->sched, depth);
			}
		}
		rc = 0;
		if (depth > st->max_depth)
			st->max_depth = depth;
		save_sched(x, depth, st);
		/* deepest node with a choice left */
		prefix = 0;
		for (int k = x->nnodes - 1; k >= 0; k--) {
			struct node *n = &x->nodes[k];
			uint32_t c =
			    n->backtrack & ~n->done & ~n->sleep & n->enabled;

			if (c) {
				n->chosen = lowest(c);
				n->done |= 1u << n->chosen;
				prefix = k + 1;
				break;
			}
		}
		if (!prefix) {
			st->exhausted = 1;
			break;
		}
		if (o->max_runs && st->runs + st->redundant >= o->max_runs)
			break;
	}
out:
	st->seconds = now_s() - t0;
	free(x->nodes);
	free(x->vc);
	free(x);
	return rc;
}

static int run_simple(const struct rrc_sys *s, const uint8_t *sched, int n,
		      int (*pick)(void *arg, uint32_t enabled), void *arg)
{
	s->reset(s->arg);
	for (int depth = 0;; depth++) {
		uint32_t en = 0;
		int t;

		for (int q = 0; q < s->nthreads; q++)
			if (s->enabled(s->arg, q))
				en |= 1u << q;
		if (!en)
			return s->end(s->arg);
		if (depth >= RRC_MAXDEPTH)
			return -E2BIG;
		if (depth < n)
			t = sched[depth];
		else if (pick)
			t = pick(arg, en);
		else
			t = lowest(en);
		if (t < 0 || t >= s->nthreads || !(en >> t & 1))
			return -EPROTO;
		s->step(s->arg, t, depth);
	}
}

/* Enabled threads in round-robin order from cur: cur first if enabled. */
static int rr_order(const struct rrc_sys *s, int cur, uint8_t *list)
{
	int n = 0;

	for (int k = 0; k < s->nthreads; k++) {
		int t = (cur + k) % s->nthreads;

		if (s->enabled(s->arg, t))
			list[n++] = (uint8_t)t;
	}
	return n;
}

int rrc_explore_delays(const struct rrc_sys *sys, int delays, long max_runs,
		       struct rrc_stats *st)
{
	uint8_t *opts = calloc(RRC_MAXDEPTH, 1), list[RRC_MAXT];
	double t0 = now_s();
	int prefix = 0, rc = 0;

	memset(st, 0, sizeof(*st));
	if (!opts)
		return -ENOMEM;
	for (;;) {
		int depth = 0, left = delays, cur = 0, n, j;

		sys->reset(sys->arg);
		while ((n = rr_order(sys, cur, list)) > 0) {
			if (depth >= RRC_MAXDEPTH) {
				rc = -E2BIG;
				break;
			}
			/* j = how many enabled threads this step skips */
			j = depth < prefix ? st->sched[depth] : 0;
			opts[depth] = (uint8_t)(n - 1 < left ? n - 1 : left);
			st->sched[depth] = (uint8_t)j;
			left -= j;
			cur = list[j];
			sys->step(sys->arg, cur, depth++);
		}
		if (!rc)
			rc = sys->end(sys->arg);
		st->runs++;
		st->depth = depth;
		if (depth > st->max_depth)
			st->max_depth = depth;
		if (rc < 0)
			break;
		rc = 0;
		prefix = 0;
		for (int k = depth - 1; k >= 0 && !prefix; k--)
			if (st->sched[k] < opts[k]) {
				st->sched[k]++;
				prefix = k + 1;
			}
		if (!prefix) {
			st->exhausted = 1;
			break;
		}
		if (max_runs && st->runs >= max_runs)
			break;
	}
	/* the failing schedule as thread ids, for rrc_replay */
	if (rc < 0) {
		int skip[RRC_MAXDEPTH], depth = st->depth, cur = 0;

		for (int k = 0; k < depth; k++)
			skip[k] = st->sched[k];
		sys->reset(sys->arg);
		for (int k = 0; k < depth && rr_order(sys, cur, list) > skip[k];
		     k++) {
			cur = list[skip[k]];
			st->sched[k] = (uint8_t)cur;
			sys->step(sys->arg, cur, k);
		}
		sys->end(sys->arg);
	}
	st->seconds = now_s() - t0;
	free(opts);
	return rc;
}

struct pct {
	int prio[RRC_MAXT];
	int change[8], nchange, step;
	uint8_t *sched;
};

static int pct_pick(void *arg, uint32_t en)
{
	struct pct *p = arg;
	int best = -1;

	for (uint32_t m = en; m; m &= m - 1) {
		int t = lowest(m);

		if (best < 0 || p->prio[t] > p->prio[best])
			best = t;
	}
	for (int i = 0; i < p->nchange; i++)
		if (p->change[i] == p->step)
			p->prio[best] = i - p->nchange; /* below all others */
	p->sched[p->step++] = (uint8_t)best;
	return best;
}

int rrc_sample(const struct rrc_sys *sys, long runs, int d, uint64_t seed,
	       struct rrc_stats *st)
{
	struct frr_rng rng;
	struct pct p = { .sched = st->sched };
	double t0 = now_s();
	int steps = 64, rc = 0, T = sys->nthreads;

	memset(st, 0, sizeof(*st));
	frr_rng_seed(&rng, seed);
	if (d < 1)
		d = 1;
	if (d > 9)
		d = 9;
	for (long r = 0; r < runs && !rc; r++) {
		/* a random permutation of priorities d..d+T-1 */
		for (int t = 0; t < T; t++)
			p.prio[t] = d + t;
		for (int t = T - 1; t > 0; t--) {
			int j = (int)frr_rng_below(&rng, (uint64_t)t + 1),
			    tmp = p.prio[t];

			p.prio[t] = p.prio[j];
			p.prio[j] = tmp;
		}
		p.nchange = d - 1;
		for (int i = 0; i < p.nchange; i++)
			p.change[i] = (int)frr_rng_below(&rng, (uint64_t)steps);
		p.step = 0;
		rc = run_simple(sys, NULL, 0, pct_pick, &p);
		st->depth = p.step;
		if (p.step > st->max_depth)
			st->max_depth = p.step;
		/* change points over the length of the runs seen so far */
		if (p.step > steps)
			steps = p.step;
		st->runs++;
	}
	st->seconds = now_s() - t0;
	return rc;
}

int rrc_replay(const struct rrc_sys *sys, const uint8_t *sched, int n)
{
	return run_simple(sys, sched, n, NULL, NULL);
}

int rrc_run_policy(const struct rrc_sys *sys,
		   int (*pick)(void *arg, uint32_t enabled), void *arg)
{
	return run_simple(sys, NULL, 0, pick, arg);
}

char *rrc_sched_str(const uint8_t *sched, int n, char *buf, int size)
{
	int off = 0;

	buf[0] = '\0';
	for (int k = 0; k < n && off < size - 8; k++)
		off += snprintf(buf + off, (size_t)(size - off), "%s%d",
				k ? "." : "", sched[k]);
	if (off >= size - 8)
		snprintf(buf + size - 8, 8, "...");
	return buf;
}
