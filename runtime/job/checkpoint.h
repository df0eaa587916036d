/* SPDX-License-Identifier: MIT */
/*
 * Checkpoints (job/checkpoint.c writes them, job/resume.c reads them back):
 * what the writer and the reader share.  docs/runtime.md "Checkpoints" has
 * the design: DIR/ckpt-C holds clock C's cut (shard-R per rank, state-V per
 * partition with item state, app-R per rank for apps with the checkpoint
 * callbacks, MANIFEST written last by rank 0); DIR/latest names the newest
 * complete one.
 */
#ifndef FLEXRR_RUNTIME_JOB_CHECKPOINT_H
#define FLEXRR_RUNTIME_JOB_CHECKPOINT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rt.h"

#define FRR_CKPT_MAGIC "FRRCKPT1"
#define FRR_CKPT_VERSION 1

/* Header of a shard-R or state-V file. */
struct frr_ckpt_hdr {
	char magic[8];
	int32_t kind;  /* 1 shard, 2 item state */
	int32_t index; /* rank or partition */
	int32_t clock; /* app clock */
	int32_t ntables;
	uint64_t bytes; /* state: its length; shard: 0 */
};

/* Per table in a shard file, before its rows (and AdaGrad sums). */
struct frr_ckpt_table {
	uint64_t rows;
	uint32_t cols;
	uint32_t accum;
};

struct frr_ckpt {
	int every;	/* clocks between checkpoints; 0 = every_s */
	double every_s; /* time-based form */
	double last_t;	/* rank 0: when the last one was planned */
	int planned;	/* rank 0: internal clock + 1 planned, 0 none */
	uint8_t **snap; /* [T]: own partition's item state at the cut */
	_Atomic int *snap_clock; /* [T]: internal clock + 1 of snap, 0 free */
	double pause_s;		 /* this checkpoint's time on the server */
	double write_s;		 /* of which writing this rank's files */
	uint64_t bytes;		 /* this checkpoint's bytes of this rank */
	int count;
	double pause_sum, pause_max;
	/* env FLEXRR_TEST_CKPT_KILL=C (after checkpoint C is complete) or
	 * C:manifest (before its manifest): rank 0 SIGKILLs its process
	 * group, i.e. the whole local job; -1 = off */
	int kill_clock, kill_before_manifest;
};

/* What the continuation must match, as the manifest records it. */
struct frr_ckpt_id {
	int clock, procs, threads, mode, slack, ntables;
	uint64_t seed, app_hash, data_hash;
	char app[64];
	char app_args[512]; /* for messages */
	uint64_t rows[FRR_MAX_TABLES];
	uint32_t cols[FRR_MAX_TABLES];
	int rule[FRR_MAX_TABLES];
	int app_state; /* app-R files present */
};

/* DIR/ckpt-CLOCK[/name] into buf: 0 or -ENAMETOOLONG (logged). */
int frr_ckpt_path(char *buf, size_t len, const char *dir, int clock,
		  const char *name);
/* This job's identity (clock left 0). */
void frr_ckpt_id_of(const struct frr_rt *rt, struct frr_ckpt_id *id);
int frr_ckpt_has_app_state(const struct frr_rt *rt);
/* Collective: err, or the first other rank's error, on every rank. */
int frr_ckpt_agree(struct frr_rt *rt, int err);

#endif /* FLEXRR_RUNTIME_JOB_CHECKPOINT_H */
