/* SPDX-License-Identifier: MIT */
/*
 * The straggler simulator (docs/simulator.md) as a library call.  A study
 * is the no-straggler ideal plus every (straggler pattern x mode) of one job
 * shape, simulated in virtual time with the RapidReassignment engine of real
 * jobs; it prints a table and may write CSV and JSON.  `flexrr simulate`
 * (cli/cmd_simulate.c) is its command line: it fills a struct
 * frr_sim_study from argv and calls frr_sim_study_run().
 */
#ifndef FLEXRR_SIM_H
#define FLEXRR_SIM_H

#include <stdint.h>

#include "flexrr/base.h"

#ifdef __cplusplus
extern "C" {
#endif
FRR_API_BEGIN

enum frr_sim_mode {
	FRR_SIM_BSP = 0,
	FRR_SIM_SSP,
	FRR_SIM_RR,	/* BSP + RapidReassignment */
	FRR_SIM_FLEXRR, /* SSP + RapidReassignment */
	FRR_SIM_LB_BSP, /* BSP, shares sized from predicted speeds */
	FRR_SIM_BACKUP, /* BSP that drops the b slowest of each clock */
	FRR_SIM_NMODES,
};
extern const char *const frr_sim_mode_names[FRR_SIM_NMODES];
/* -1 if name is not a mode */
int frr_sim_mode_parse(const char *name);

struct frr_sim_cost; /* an item cost model (frr_sim_study_run makes it) */

/* A process's NIC (docs/simulator.md "Network"): send and receive
 * bandwidth in bytes per second (0: unlimited) and a cost per message
 * posted, in seconds.  on = 0 (`--link none`): bytes cost no time, the
 * latency-only model of before (results identical to it). */
struct frr_sim_link {
	int on;
	double tx_Bps, rx_Bps, msg_s;
	/* The runtime's CPU per byte, which the wire's bandwidth does not
	 * cover where the wire is memory (shm): a worker's flush (the
	 * batch's deltas and copies) per batch byte it sends, and a shard
	 * server's apply and push per byte it takes in and pushes out.
	 * Seconds per byte, 0 by default; measured, never fitted
	 * (docs/simulator.md "Validation"). */
	double flush_s_B, apply_s_B;
};
/* A named link ("hdr", "100gbe", "25gbe", "softroce", "none"): its NIC,
 * and its latency into *lat_s (none: left as is).  -EINVAL for another
 * name. */
int frr_sim_link_preset(const char *name, struct frr_sim_link *l,
			double *lat_s);

/* The tables behind the items (docs/simulator.md "Table models"), from an
 * app-shaped generator: mf users x items of rank k (an item is a rating),
 * lda V words x K topics + a totals row (an item is a document of L
 * tokens), mlr F features x C classes (an item is an example). */
enum frr_sim_model_kind {
	FRR_SIM_MODEL_NONE = 0, /* no tables: batches are empty */
	FRR_SIM_MODEL_MF,	/* a = users, b = items, c = rank */
	FRR_SIM_MODEL_LDA,	/* a = words, b = topics, c = tokens/doc */
	FRR_SIM_MODEL_MLR,	/* a = features, b = classes */
};
struct frr_sim_model {
	enum frr_sim_model_kind kind;
	uint64_t a, b, c;
};
/* "none", "mf:USERS,ITEMS,RANK", "lda:WORDS,TOPICS[,TOKENS]" (default
 * 100 tokens per document), "mlr:FEATURES,CLASSES"; -EINVAL (logged). */
int frr_sim_model_parse(const char *spec, struct frr_sim_model *m);

struct frr_sim_cfg {
	int P, T, clocks, slack;
	uint64_t items; /* per worker and clock, 1 .. FRR_SIM_MAX_ITEMS */
	uint64_t seed;	/* stragglers and item costs */
	const struct frr_sim_cost *cost;
	/* network and runtime timing, seconds */
	double lat_s;		  /* one-way latency between processes */
	double local_lat_s;	  /* within a process */
	double poll_s;		  /* period of the runtime's wait loops */
	double apply_s;		  /* clock's last batch in -> applied */
	double contention_factor; /* contention[:w] as a slow-down */
	/* RapidReassignment (as flexrr run --rr-*) */
	int rr_group, rr_report, rr_max_helpers;
	double rr_threshold, rr_min_share;
	/* as flexrr run --rr-link-weight: a worker offers only when its
	 * helper is ahead by rr_threshold plus this times the share of its
	 * last clock it spent not computing (its SSP wait and its flush): a
	 * worker the link delayed keeps its items (rr_proto.h rr_weigh) */
	double rr_link_weight;
	/* baselines */
	int lb_history; /* lb-bsp: clocks the speed prediction averages */
	int backups;	/* backup: b */
	/* a Chrome / Perfetto timeline of the run in virtual time (trace.h) */
	const char *trace_path;
	struct frr_sim_link link;   /* default: off (none) */
	struct frr_sim_model model; /* default: none */
	/* 1: the data plane before issue 21 (docs/simulator.md "The dense
	 * plane"): every rank holds every row, rows on row % P, a batch one
	 * dense range per table and shard, progress words to every rank,
	 * a rank's sends under one lock.  0 (default): today's. */
	int dense_plane;
	/* 1: as flexrr run --rr-rows-from-start, a rank is pushed the rows
	 * of the partitions its workers may help from the start; 0: from
	 * the first range it runs that writes rows of their owner */
	int rr_rows_from_start;
	/* 1: progress words under the rank's shared transport lock, which
	 * the server holds through a clock's push, as the runtime posted
	 * them before 2026-12-07; 0: on each worker's own lane, as it does
	 * (docs/simulator.md "Control") */
	int ctl_shared;
};
void frr_sim_cfg_defaults(struct frr_sim_cfg *cfg);

/* One-way latency between processes of a named network ("ib", "roce",
 * "softroce", "shm"; docs/simulator.md has the sources), in seconds;
 * -EINVAL for another name. */
int frr_sim_net_latency(const char *name, double *lat_s);

#define FRR_SIM_MAX_PATTERNS 16
/* items per worker and clock (the runtime counts a list over 2^22 in
 * coarser units in its progress words; the simulator does the same) */
#define FRR_SIM_MAX_ITEMS ((1ull << 40) - 1)

struct frr_sim_study {
	struct frr_sim_cfg cfg; /* its cost comes from cost_spec */
	/* "const:US", "uniform:LO,HI", "exp:MEAN", "lognormal:MEAN,SIGMA"
	 * (us), "metrics:FILE[,ITEMS]", "metrics-mean:FILE[,ITEMS]" */
	const char *cost_spec;
	const char *net;	/* names cfg.lat_s in the output */
	const char *link;	/* names cfg.link ("none", or custom) */
	const char *model;	/* names cfg.model (its spec) */
	const char *plane;	/* "now" or "dense" (cfg.dense_plane) */
	const char *csv, *json; /* also write the results there (or NULL) */
	/* --stragglers specs; none: the five patterns of docs/results */
	const char *patterns[FRR_SIM_MAX_PATTERNS];
	int npatterns;
	int modes[FRR_SIM_NMODES], nmodes;
	int quiet; /* no table on stdout (progress still on stderr) */
};
/* cfg's defaults, cost const:100, net ib, every mode, no patterns (the
 * run takes the five defaults). */
void frr_sim_study_defaults(struct frr_sim_study *s);
/* Run the study; progress on stderr, the table on stdout.  0, -EINVAL for
 * a bad cost or pattern, or a negative errno; the reason is printed. */
int frr_sim_study_run(struct frr_sim_study *s);

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_SIM_H */
