/* SPDX-License-Identifier: MIT */
/*
 * Straggler injection (--stragglers SPEC): deterministic slow-downs for
 * benchmarks and tests.
 *
 * Grammar (terms joined with '+', e.g. "slow-worker:0.1,1.0+contention:3"):
 *   slow-worker:p,d            each clock, each worker is slowed with
 *                              probability p: it takes (1 + d) times its
 *                              nominal clock time
 *   disrupted-machine:p,d,len  a whole process runs d times slower (d >= 1)
 *                              for len clocks; an episode starts with
 *                              probability p per process per clock
 *   power-law:alpha            every clock, every worker takes x times its
 *                              nominal time, x ~ Pareto(x_m = 1, alpha),
 *                              capped at 50
 *   persistent:w,f             worker w always runs f times slower (f >= 1)
 *   contention[:w]             a real CPU hog thread, pinned to worker w's
 *                              core (default 0), competes with it; no sleep
 *
 * Determinism: the slow-down of (worker, clock) depends only on (seed,
 * worker, clock) and the spec, never on timing, so BSP, SSP and FlexRR runs
 * with the same seed see the same schedule.  A slow-down factor x is applied
 * by the thread that executes items: after a chunk of items that took t ns of
 * real work, the worker owes (x - 1) * t ns, paid by sleeping (the core is
 * left free) once the debt exceeds FRR_STRAG_MIN_SLEEP_NS and at clock end;
 * a sleep that lasts longer than the debt is credited to the clock's next
 * chunks, so a slowed clock takes x times its work however late the host
 * wakes the sleeper (to within the last sleep's overshoot).
 * So the delay is spread over the clock, and a helper that takes over items
 * of a slowed worker runs them at its own speed.
 */
#ifndef FLEXRR_RUNTIME_STRAGGLER_H
#define FLEXRR_RUNTIME_STRAGGLER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define FRR_STRAG_MAX_TERMS 8
#define FRR_STRAG_MIN_SLEEP_NS 200000ull /* 0.2 ms: below, sleeps are noise */
#define FRR_STRAG_POWER_LAW_CAP 50.0

enum frr_strag_kind {
	FRR_STRAG_SLOW_WORKER = 0,
	FRR_STRAG_DISRUPTED_MACHINE,
	FRR_STRAG_POWER_LAW,
	FRR_STRAG_PERSISTENT,
	FRR_STRAG_CONTENTION,
	FRR_STRAG_NKINDS,
};

struct frr_strag_term {
	enum frr_strag_kind kind;
	double p;      /* slow-worker, disrupted-machine: probability */
	double d;      /* slow-worker: extra; disrupted-machine: factor */
	int len;       /* disrupted-machine: clocks */
	double alpha;  /* power-law */
	int worker;    /* persistent, contention */
	double factor; /* persistent */
};

/* A parsed spec plus the job shape it applies to; read-only once set up. */
struct frr_stragglers {
	int nterms;
	struct frr_strag_term term[FRR_STRAG_MAX_TERMS];
	uint64_t seed;
	int threads; /* workers per process: worker w is on rank w / threads */
	int nworkers;
};

/* Parse SPEC ("" or "none" = no stragglers).  On error logs what is wrong
 * with the grammar and returns -EINVAL; *out is set only on success. */
int frr_stragglers_parse(const char *spec, struct frr_stragglers *out);
/* The grammar, for --help and errors. */
void frr_stragglers_usage(FILE *out);
/* Bind a parsed spec to a job; -EINVAL if a worker index is out of range. */
int frr_stragglers_setup(struct frr_stragglers *s, uint64_t seed, int threads,
			 int nworkers);
/* Slow-down factor (>= 1.0, 1.0 = none) of 'worker' in 'clock', excluding
 * contention (which is real).  Pure function of (spec, seed, worker, clock). */
double frr_stragglers_factor(const struct frr_stragglers *s, int worker,
			     int clock);
/* "slow-worker:0.1,1+contention:0" into buf (for logs and metrics). */
void frr_stragglers_format(const struct frr_stragglers *s, char *buf,
			   size_t len);
/* Whether any term exists. */
static inline int frr_stragglers_active(const struct frr_stragglers *s)
{
	return s && s->nterms > 0;
}

struct frr_trace_buf;

/*
 * Per worker thread; owned and touched only by that thread (counters may be
 * read by others after the thread has been joined).
 */
struct frr_strag_worker {
	const struct frr_stragglers *s;
	struct frr_trace_buf *trace; /* optional: injected delays as spans */
	int worker;
	int clock;
	double factor;	    /* of the current clock */
	uint64_t debt_ns;   /* owed, not yet slept */
	uint64_t credit_ns; /* slept beyond the debt, this clock */
	/* counters */
	uint64_t delayed_clocks;
	uint64_t injected_ns;
	/* contention hog */
	pthread_t hog;
	int hog_running;
	_Atomic int hog_stop;
};

/* Called on the worker's own thread (contention pins the hog to the CPU the
 * caller runs on).  Returns 0 or negative errno (hog thread creation). */
int frr_strag_worker_start(struct frr_strag_worker *sw,
			   const struct frr_stragglers *s, int worker,
			   struct frr_trace_buf *trace);
void frr_strag_worker_stop(struct frr_strag_worker *sw);
/* Start of the worker's clock: compute and log (info) its factor. */
void frr_strag_clock_begin(struct frr_strag_worker *sw, int clock);
/* The executing thread did work_ns of real work; owe (factor - 1) times it
 * and sleep if the debt is large enough.  Cheap (no syscall) when not
 * delayed. */
void frr_strag_account(struct frr_strag_worker *sw, uint64_t work_ns);
/* End of the worker's own items of the clock: pay what is still owed. */
void frr_strag_clock_end(struct frr_strag_worker *sw);

/* lb-bsp's speed prediction and shares, one copy for the runtime (rr/lb.c)
 * and the simulator (sim/sim_job.c): worker v's speed is h / tsum[v], tsum
 * the sum of its per-item times over its last h clocks (1 when it has none
 * measured); share[v] = floor(total * speed[v] / sum of speeds), and the
 * remainder (< w items) goes one each from worker 0 up.  speed: w doubles of
 * the caller's scratch.  The same inputs give the same shares anywhere. */
void frr_lb_shares(int w, int h, const double *tsum, double *speed,
		   uint64_t total, uint64_t *share);

/* lb-bsp: a worker gives a tail when its list is more than this fraction
 * above its share (straggler.c lb_gives says why). */
#define FRR_LB_GIVE_ABOVE 0.05

/* One range lb-bsp moves: items [a, b) of owner's list, run by helper. */
struct frr_lb_gift {
	int owner, helper;
	uint64_t a, b;
};

/* lb-bsp's plan of a clock, one copy for the runtime and the simulator:
 * in: W workers, worker v's helpers grp[v * g .. + ng[v]) (rr's helper
 * group), their speed (items a second) and share (frr_lb_shares), n their
 * lists' lengths; out: load[v], the items v is to run, and the ranges
 * moved, gifts[0 .. ngifts) (room for W * g), owners in id order, each
 * owner's tails cut from the end of its list down. */
struct frr_lb_plan {
	int W, g;
	const int *grp, *ng;
	const double *speed;
	const uint64_t *share, *n;
	uint64_t *load;
	struct frr_lb_gift *gifts;
	int ngifts;
};
void frr_lb_plan(struct frr_lb_plan *p);

#endif /* FLEXRR_RUNTIME_STRAGGLER_H */
