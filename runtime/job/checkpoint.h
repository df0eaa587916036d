/* SPDX-License-Identifier: MIT */
/*
 * Checkpoints (job/checkpoint.c takes the cut, job/checkpoint_write.c's
 * thread writes it, job/resume.c reads it back): what they share.
 * docs/runtime.md "Checkpoints" has the design: DIR/ckpt-C holds clock C's
 * cut (shard-R per rank, state-V per partition with item state, app-R per
 * rank for apps with the checkpoint callbacks, each with ".eE" from a
 * recovery's epoch E on; MANIFEST written last by rank 0, naming the
 * epoch); DIR/latest names the newest complete one.
 */
#ifndef FLEXRR_RUNTIME_JOB_CHECKPOINT_H
#define FLEXRR_RUNTIME_JOB_CHECKPOINT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "job.h"

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

/* The app's globals of the cut's last slack + 1 clocks (those the
 * continuation's first clocks read: core/globals.c), in the manifest. */
struct frr_ckpt_glob {
	int nglob; /* per clock: the app's nglobals (0: none) */
	int n;	   /* clocks kept */
	int ac[FRR_RT_GLOBALS_RING];
	double v[FRR_RT_GLOBALS_RING][FRR_MAX_GLOBALS];
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
	struct frr_ckpt_glob glob;
	unsigned epoch; /* whose files (frr_ckpt_name); not compared */
};

enum { FRR_CKPT_FILES = 1, FRR_CKPT_APP, FRR_CKPT_COMMIT };

/* One piece of work for the writer thread. */
struct frr_ckpt_task {
	int kind, c, ac; /* internal and app clock of the cut */
	int seq;	 /* the cut's number: its record is cuts[seq % 2] */
	void *app;	 /* APP, COMMIT: the app state's bytes (malloc) */
	size_t app_len;
	struct frr_ckpt_id id; /* COMMIT: the manifest */
};

#define FRR_CKPT_QUEUE 4

/* The writer thread: a queue the server posts to, and what it has done.
 * Everything below lock is under it. */
struct frr_ckpt_writer {
	pthread_t thread;
	int started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct frr_ckpt_task q[FRR_CKPT_QUEUE];
	int head, n, running, stop;
	int err, err_ac; /* the first task that failed */
	int durable;	 /* internal clock + 1: this rank's files on disk */
	int committed;	 /* rank 0: internal clock + 1 of the last MANIFEST */
};

/* Rank 0's figures of one cut, for its log line (the server writes the
 * pause, the writer the rest); two, as rank 0 may take the next cut once
 * its files are written, before the manifest of this one. */
struct frr_ckpt_cut {
	int c;		    /* internal clock */
	int wanted, posted; /* processed by rank 0 / its COMMIT queued */
	double pause_s;	    /* its time on the server */
	double held_s;	    /* of which holding the cut for the last one */
	void *app;	    /* rank 0's app state of the cut */
	size_t app_len;
	struct frr_ckpt_glob glob; /* its globals, taken with the app state */
	uint64_t bytes;		   /* rank 0's bytes of it */
	double write_s;		   /* writing (and fsyncing) them */
	double commit_s;	   /* the manifest, latest, the removal */
};

struct frr_ckpt {
	int every;	/* clocks between checkpoints; 0 = every_s */
	double every_s; /* time-based form */
	double last_t;	/* rank 0: when the last one was planned */
	int planned;	/* rank 0: internal clock + 1 planned, 0 none */
	uint8_t **snap; /* [T]: own partition's item state at the cut */
	_Atomic int *snap_clock; /* [T]: internal clock + 1 of snap, 0 free */
	/* the shard at the cut, laid out as its file: one at a time */
	uint8_t *shard;
	size_t shard_len;
	int app_state; /* the app has the checkpoint callbacks */
	/* server side: the last cut taken (internal clock + 1, 0 none), the
	 * durable clock told, cuts taken and (rank 0) committed */
	int cut, sent, ncut, chead;
	double hold_t0; /* when the server began waiting to take a cut */
	struct frr_ckpt_cut cuts[2];
	int count;
	double pause_sum, pause_max;
	struct frr_ckpt_writer w;
	/* env FLEXRR_TEST_CKPT_KILL=C (after checkpoint C is complete) or
	 * C:manifest (before its manifest): rank 0 SIGKILLs its process
	 * group, i.e. the whole local job; with :self only its own process,
	 * once (the file DIR/.test-ckpt-kill): a leader lost while it writes,
	 * for the recovery tests; with :stop it SIGSTOPs its process instead,
	 * once (DIR/.test-ckpt-stop): a fenced leader that goes on writing
	 * when continued; with :file:stop the first rank to write a file of
	 * C SIGSTOPs its process once it is past the epoch check, and when
	 * continued writes it garbled (a fenced rank's late file: another
	 * cut's bytes under SSP); -1 = off */
	int kill_clock, kill_before_manifest, kill_self, kill_stop, kill_file;
};

/* DIR/ckpt-CLOCK[/name] into buf: 0 or -ENAMETOOLONG (logged). */
int frr_ckpt_path(char *buf, size_t len, const char *dir, int clock,
		  const char *name);
/* A rank's or partition's file of a cut: KIND-INDEX, or KIND-INDEX.eE in
 * recovery epoch E > 0 (a rank fenced out of an earlier epoch, continued,
 * cannot land its file over the new epoch's file of the same clock). */
void frr_ckpt_name(char *buf, size_t len, const char *kind, int index,
		   unsigned epoch);
/* This job's identity (clock left 0). */
void frr_ckpt_id_of(const struct frr_rt *rt, struct frr_ckpt_id *id);
/* Rank 0: the globals of app clocks ac - slack .. ac, as it holds them. */
void frr_ckpt_glob_take(const struct frr_rt *rt, int ac,
			struct frr_ckpt_glob *g);
int frr_ckpt_has_app_state(const struct frr_rt *rt);
/* Collective: err, or the first other rank's error, on every rank. */
int frr_ckpt_agree(struct frr_rt *rt, int err);
/* Every rank finds the file rank 0 leaves in --checkpoint DIR, or the job
 * stops saying that DIR is not shared (job/ckpt_shared.c; collective). */
int frr_ckpt_dir_shared(struct frr_rt *rt);
/* The ctl word where rank r tells the internal clock + 1 of its newest
 * checkpoint files on disk (the second word of its fin slot). */
size_t frr_ckpt_durable_off(const struct frr_rt *rt, int r);

/* ---- job/checkpoint_write.c: the writer thread ---- */
int frr_ckpt_writer_start(struct frr_rt *rt);
void frr_ckpt_writer_stop(struct frr_rt *rt);
/* Queue a task: 0, or -EOVERFLOW if the queue is full (never: the server
 * holds the next cut until the last one is written). */
int frr_ckpt_post(struct frr_rt *rt, const struct frr_ckpt_task *t);

#endif /* FLEXRR_RUNTIME_JOB_CHECKPOINT_H */
