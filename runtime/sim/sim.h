/* SPDX-License-Identifier: MIT */
/*
 * The straggler simulator (`flexrr simulate`, docs/simulator.md): a
 * discrete-event simulation of a job of P x T workers in virtual time that
 * runs the RapidReassignment engine of real jobs (rr_proto.c) through its
 * environment seam (struct rr_env_ops), with the SSP clock rules, progress
 * words, mailboxes with a one-way latency, item costs and the seeded
 * straggler schedules of --stragglers (straggler.c).
 *
 * Part of the runtime library (it runs the runtime's engine).  The public
 * side is flexrr/sim.h: a study (sim_study.c: the runs, the table, CSV and
 * JSON) whose command line is cli/cmd_simulate.c.
 */
#ifndef FLEXRR_RUNTIME_SIM_H
#define FLEXRR_RUNTIME_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "flexrr/sim.h"
#include "straggler.h"

/* Cost of one item, in seconds of a worker running at nominal speed. */
enum frr_sim_cost_kind {
	FRR_SIM_COST_CONST = 0,	   /* a */
	FRR_SIM_COST_UNIFORM,	   /* uniform in [a, b] */
	FRR_SIM_COST_EXP,	   /* exponential, mean a */
	FRR_SIM_COST_LOGNORMAL,	   /* mean a, sigma b of the log */
	FRR_SIM_COST_METRICS,	   /* replay: per (worker, clock) of a run */
	FRR_SIM_COST_METRICS_MEAN, /* per worker mean of a run */
};

struct frr_sim_cost {
	enum frr_sim_cost_kind kind;
	double a, b;
	/* metrics: per-item seconds of worker w (mod nw) in clock c (mod nc)
	 * at per[w * nc + c]; metrics-mean: per[w] (nc = 1) */
	int nw, nc;
	double *per;
	char desc[160]; /* for output */
};

/* Parse "const:US", "uniform:LO,HI", "exp:MEAN", "lognormal:MEAN,SIGMA"
 * (microseconds), "metrics:FILE[,ITEMS]" or "metrics-mean:FILE[,ITEMS]"
 * (a `flexrr run --metrics` CSV; ITEMS = items per worker of that run,
 * default `items`).  Logs what is wrong and returns -EINVAL. */
int frr_sim_cost_parse(const char *spec, uint64_t items,
		       struct frr_sim_cost *out);
void frr_sim_cost_free(struct frr_sim_cost *c);

/* The RapidReassignment counters of a run (frr_sim_result.rr), in the
 * order of the runtime's (rr_proto.h enum rr_counter: sim_job.c checks). */
enum frr_sim_rr {
	FRR_SIM_OFFERS,
	FRR_SIM_ACCEPTED,
	FRR_SIM_CANCELLED,
	FRR_SIM_MOVED, /* items reassigned: run by a helper */
	FRR_SIM_NRR,
};

struct frr_sim_result {
	double time_s;	/* virtual seconds to N clocks */
	double work_s;	/* nominal work: sum of item costs */
	double bound_s; /* work / mean capacity of the schedule */
	double dropped_items, total_items;
	uint64_t rr[FRR_SIM_NRR]; /* enum frr_sim_rr */
	double wall_s, cpu_s;	  /* cost of simulating */
	uint64_t events, switches;
	double *clock_s; /* time each clock was applied [clocks], owned */
	/* bytes sent between processes (local ones cost nothing): update
	 * batches (own and help, headers and seq words included), replica
	 * pushes (with the pushing / done words), control (progress words,
	 * engine messages, heartbeats); messages posted */
	uint64_t bytes_batch, bytes_push, bytes_ctl, msgs;
	uint64_t bytes_state; /* item state shipped to and from helpers */
	/* per clock: share of the clock spent communicating (the workers'
	 * mean time sending plus the replica push), [clocks], owned */
	double *comm_share;
	double comm_mean, comm_max;
};
void frr_sim_result_free(struct frr_sim_result *r);

/* Simulate one job.  strag may be NULL (none).  0 or negative errno (the
 * reason logged: a protocol error of the engine, a deadlock, memory). */
int frr_sim_run(const struct frr_sim_cfg *cfg, enum frr_sim_mode mode,
		const struct frr_stragglers *strag, struct frr_sim_result *res);

/* Slow-down of worker w in clock c as the simulator applies it: the
 * straggler schedule plus contention as a factor. */
double frr_sim_factor(const struct frr_sim_cfg *cfg,
		      const struct frr_stragglers *s, int w, int c);

#endif /* FLEXRR_RUNTIME_SIM_H */
