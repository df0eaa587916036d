/* SPDX-License-Identifier: MIT */
/*
 * A rank's job (job/), the top of the runtime below launch/: set-up
 * (layout, memory check, transport regions), the server loop, heartbeats,
 * checkpoints and resume, and running every floor below it (docs/runtime.md).
 * launch/ starts it through frr_rt_job_run with the parameters it built.
 */
#ifndef FLEXRR_RUNTIME_JOB_H
#define FLEXRR_RUNTIME_JOB_H

#include <stdint.h>

#include "core.h"
#include "eval.h"
#include "rr_hooks.h"
#include "ssp.h"
#include "table.h"
#include "worker.h"

/* The job's own state of a rank (rt->js). */
struct frr_jobstate {
	uint64_t *hb_last;
	double *hb_seen;
	uint64_t hb_count;
	uint64_t hb_agg; /* the progress aggregate last sent (beat) */
	double hb_next;
	/* checkpoints and resume (job/checkpoint.c): NULL without
	 * --checkpoint */
	struct frr_ckpt *ck;
};

/* ---- job/job.c ---- */
/* Run this rank's part of the job: 0, or a negative errno once every
 * thread has stopped (the message is logged).  Never exits.
 * -ENOTRECOVERABLE: a worker did not return after the failure and was
 * abandoned with the rank's memory; the process must exit.  p is copied. */
int frr_rt_job_run(struct frr_oob *oob, const struct frr_rt_params *p);

/* ---- job/app.c ---- */
/* Create the app (rank 0 first: its error is reported once). */
int frr_rt_app_create(struct frr_rt *rt);
/* The app's tables into rt->tb->spec, checked (rules, flags, sizes). */
int frr_rt_tables_declare(struct frr_rt *rt);

/* ---- job/server.c ---- */
/* The server loop until the last clock is evaluated: 0 or the job's error. */
int frr_rt_server_loop(struct frr_rt *rt);

/* ---- job/health.c ---- */
/* Server: heartbeats out, dead peers in (finished: the last beat). */
int frr_rt_heartbeat(struct frr_rt *rt, double now, int finished);
/* Rank r's worker furthest behind as last heard (its own rank: now): v,
 * whether another of r's workers ties with it, its progress; -EPROTO if
 * r sent a worker that is not its own. */
int frr_rt_rank_laggard(const struct frr_rt *rt, int r, int *v, int *tie,
			struct frr_progress *p);

/* ---- job/setup.c ---- */
int frr_rt_layout(struct frr_rt *rt);
int frr_rt_check_memory(struct frr_rt *rt);
/* Each worker thread gets its own transport context (job/setup.c lanes). */
int frr_rt_lanes_wanted(const struct frr_rt *rt);
/* The writes the worker threads left unflushed on their lanes (their last
 * progress words) landed at every peer, once the threads are done. */
int frr_rt_lanes_flush(struct frr_rt *rt, int timeout_ms);

/* Rank 0's notice while the app loads its input (job/loading.c): a line
 * every 10 s between begin and end (none with -q, or on other ranks). */
struct frr_loading {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct frr_rt *rt;
	const char *app;
	double every_s;
	int started, done;
};
/* From here to frr_rt_loading_end the collectives wait --load-timeout. */
void frr_rt_loading_begin(struct frr_rt *rt, struct frr_loading *l);
void frr_rt_loading_end(struct frr_loading *l);
/* This host, as the ranks that share its memory see it: its name and boot
 * id, hashed (job/memplan.c). */
uint64_t frr_rt_host_id(void);
/* How many: --lanes, at most one per thread; 0 without lanes. */
int frr_rt_lane_count(const struct frr_rt *rt);
int frr_rt_tp_setup(struct frr_rt *rt);
void frr_rt_tp_teardown(struct frr_rt *rt);

/* ---- job/gather.c ---- */
int frr_rt_app_gather(struct frr_rt *rt);

/* ---- job/checkpoint.c, job/resume.c (job/checkpoint.h) ---- */
int frr_rt_ckpt_init(struct frr_rt *rt);
void frr_rt_ckpt_fini(struct frr_rt *rt);
/* Worker: the end of its clock c's items, before the batch leaves. */
int frr_rt_ckpt_snap(struct frr_worker *wk, int c);
/* Server: clock c applied on this shard / evaluated here / (rank 0)
 * processed for the whole job. */
int frr_rt_ckpt_shard(struct frr_rt *rt, int c);
int frr_rt_ckpt_app(struct frr_rt *rt, int c);
int frr_rt_ckpt_commit(struct frr_rt *rt, int c);
/* Server: 1 while the last checkpoint is written and clock c is the next
 * cut (c is not applied yet); each turn, the writer's news (1 if any, < 0
 * the job's error); whether nothing of a checkpoint is left to do. */
int frr_rt_ckpt_hold(struct frr_rt *rt, int c);
int frr_rt_ckpt_poll(struct frr_rt *rt);
int frr_rt_ckpt_idle(struct frr_rt *rt);
/* --resume: rows, item state, app state and the clock, before the
 * initial push (every rank). */
int frr_rt_resume(struct frr_rt *rt);
/* path, or the directory it will be made in, is on a tmpfs (its files
 * take the host's memory): the bytes free there; else -1 (memplan.c). */
double frr_tmpfs_room(const char *path);
/* The clock of DIR's newest complete checkpoint into *clock: the one
 * DIR/latest names (its clock, or -1, into *named), or a newer complete
 * one (its MANIFEST is there) when latest names an older, an incomplete
 * or no checkpoint.  0, or -ENOENT when there is none yet (another
 * negative errno: latest unreadable and no complete checkpoint). */
int frr_ckpt_latest(const char *dir, int *clock, int *named);

#endif /* FLEXRR_RUNTIME_JOB_H */
