// SPDX-License-Identifier: MIT
/*
 * Virtual time for the simulator: one coroutine (sim_coro.h) per worker and a
 * min-heap of (time, sequence) wake-ups.  The scheduler resumes the worker
 * with the earliest wake-up; it runs without advancing time until it sleeps
 * (sim_sleep_until) or blocks (sim_block).  Ties resume in the order they
 * were queued, so a run is a pure function of its configuration.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "sim_int.h"

/* ---- heap ---------------------------------------------------------------- */

static int ev_less(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int heap_push(struct sim *s, double t, struct sim_worker *w)
{
	struct sim_ev e = { t, s->seq++, w->w, w->gen }, tmp;
	int i;

	if (s->heap_n == s->heap_cap) {
		int cap = s->heap_cap ? s->heap_cap * 2 : 1024;
		struct sim_ev *h = realloc(s->heap, (size_t)cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		s->heap = h;
		s->heap_cap = cap;
	}
	i = s->heap_n++;
	s->heap[i] = e;
	while (i > 0 && ev_less(&s->heap[i], &s->heap[(i - 1) / 2])) {
		tmp = s->heap[i];
		s->heap[i] = s->heap[(i - 1) / 2];
		s->heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	return 0;
}

static struct sim_ev heap_pop(struct sim *s)
{
	struct sim_ev top = s->heap[0], tmp;
	int i = 0;

	s->heap[0] = s->heap[--s->heap_n];
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;

		if (l < s->heap_n && ev_less(&s->heap[l], &s->heap[m]))
			m = l;
		if (r < s->heap_n && ev_less(&s->heap[r], &s->heap[m]))
			m = r;
		if (m == i)
			break;
		tmp = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = tmp;
		i = m;
	}
	return top;
}

/* ---- coroutines ---------------------------------------------------------- */

static struct sim *g_sim; /* the entry of a coroutine takes no argument */
static void (*g_body)(struct sim *, struct sim_worker *);

static void entry(void)
{
	struct sim *s = g_sim;
	struct sim_worker *w = s->cur;

	sim_coro_entered(&s->sched_co);
	g_body(s, w);
	w->wait = SIM_DONE;
	s->ndone++;
	/* never resumed: its stack is freed with the job */
	sim_coro_switch(&w->co, &s->sched_co);
}

int sim_sched_init(struct sim *s)
{
	sim_coro_self(&s->sched_co);
	for (int i = 0; i < s->W; i++) {
		struct sim_worker *w = &s->ws[i];

		if (sim_coro_make(&w->co, SIM_STACK, entry)) {
			frr_err("simulate: no memory for %d coroutine stacks "
				"of %d KiB; simulate fewer workers",
				s->W, SIM_STACK >> 10);
			return -ENOMEM;
		}
		w->pending = INFINITY;
		if (heap_push(s, 0.0, w))
			return -ENOMEM;
	}
	return 0;
}

void sim_sched_fini(struct sim *s)
{
	for (int i = 0; s->ws && i < s->W; i++)
		sim_coro_free(&s->ws[i].co);
	free(s->heap);
	s->heap = NULL;
}

static void yield(struct sim *s)
{
	struct sim_worker *w = s->cur;

	s->switches++;
	sim_coro_switch(&w->co, &s->sched_co);
}

void sim_sleep_until(struct sim *s, double t)
{
	struct sim_worker *w = s->cur;

	if (t < s->now)
		t = s->now;
	/* nothing else happens before t: keep running (no switch) */
	if (!s->heap_n || t < s->heap[0].t) {
		s->now = t;
		return;
	}
	w->gen++;
	if (heap_push(s, t, w)) {
		s->err = -ENOMEM;
		t = s->now;
	}
	yield(s);
}

void sim_block(struct sim *s, enum sim_wait kind, double until)
{
	struct sim_worker *w = s->cur;

	w->wait = kind;
	w->wait_start = s->now;
	w->pending = INFINITY;
	w->gen++;
	if (until < INFINITY)
		sim_wake(s, w, until);
	yield(s);
	w->wait = SIM_RUNNING;
	w->pending = INFINITY;
}

void sim_wake(struct sim *s, struct sim_worker *w, double t)
{
	double p = s->cfg->poll_s;

	if (w->wait == SIM_RUNNING || w->wait == SIM_DONE)
		return;
	if (t < s->now)
		t = s->now;
	/* a waiting worker looks every poll_s (the runtime's naps) */
	if (p > 0 && t > w->wait_start) {
		double tick = w->wait_start + ceil((t - w->wait_start) / p) * p;

		/* never before t (rounding): the waiter would find nothing */
		t = tick > t ? tick : t;
	}
	if (t >= w->pending)
		return;
	w->pending = t;
	w->gen++;
	if (heap_push(s, t, w))
		s->err = -ENOMEM;
}

/* Nothing is queued but workers wait: poke the engine's pollers once (they
 * re-check what they wait for); if that changes nothing, it is a deadlock. */
static void report_deadlock(const struct sim *s)
{
	static const char *const why[] = {
		[SIM_RUNNING] = "running",
		[SIM_W_MSG] = "an answer in the engine",
		[SIM_W_SSP] = "an older clock (SSP)",
		[SIM_W_EXIT] = "its helpees (exit)",
		[SIM_DONE] = "nothing",
	};
	int shown = 0;

	frr_err("simulate: deadlock at t=%.6f s: nothing can happen any "
		"more; this is a bug of the engine or the simulator",
		s->now);
	for (int i = 0; i < s->W && shown < 16; i++) {
		const struct sim_worker *w = &s->ws[i];

		if (w->wait == SIM_DONE)
			continue;
		frr_err("simulate:   worker %d in clock %d waits for %s", w->w,
			w->clock, why[w->wait]);
		shown++;
	}
}

/* Nothing is queued but workers wait: poke the engine's pollers once (they
 * re-check what they wait for); if that changes nothing, it is a deadlock. */
static int break_stall(struct sim *s, uint64_t *last_actions)
{
	int poked = 0;

	if (*last_actions != s->actions) {
		*last_actions = s->actions;
		for (int i = 0; i < s->W; i++) {
			struct sim_worker *w = &s->ws[i];

			if (w->wait == SIM_W_MSG || w->wait == SIM_W_EXIT) {
				w->forced = 1;
				sim_wake(s, w, s->now);
				poked++;
			}
		}
	}
	if (poked)
		return 0;
	report_deadlock(s);
	return -EDEADLK;
}

int sim_sched_run(struct sim *s,
		  void (*body)(struct sim *, struct sim_worker *))
{
	uint64_t last_actions = UINT64_MAX, spin_actions = 0, spins = 0;
	int err;

	g_sim = s;
	g_body = body;
	while (s->ndone < s->W && !s->err) {
		struct sim_ev e;
		struct sim_worker *w;

		if (!s->heap_n) {
			err = break_stall(s, &last_actions);
			if (err)
				return err;
			continue;
		}
		e = heap_pop(s);
		w = &s->ws[e.w];
		if (e.gen != w->gen || w->wait == SIM_DONE)
			continue;
		/* a waiter woken again and again at one instant, with nothing
		 * done meanwhile, would spin forever: a simulator bug */
		if (e.t == s->now && s->actions == spin_actions) {
			if (++spins > 100000000ull) {
				frr_err(
				    "simulate: livelock at t=%.9f s: worker "
				    "%d resumes forever without progress; "
				    "this is a simulator bug",
				    s->now, w->w);
				return -ELOOP;
			}
		} else {
			spins = 0;
			spin_actions = s->actions;
		}
		s->now = e.t;
		s->cur = w;
		s->events++;
		s->switches++;
		sim_coro_switch(&s->sched_co, &w->co);
		s->cur = NULL;
	}
	return s->err;
}
