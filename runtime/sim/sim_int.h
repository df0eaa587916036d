/* SPDX-License-Identifier: MIT */
/*
 * Simulator internals, shared by sim_sched.c (virtual time, coroutines),
 * sim_env.c (the RR engine's environment: mailboxes, progress words,
 * run_range) and sim_job.c (the worker loop of each mode).
 *
 * Threading: none.  Every worker is a coroutine (sim_coro.h) on the caller's
 * thread; exactly one runs at a time (sim->cur), so nothing is shared
 * concurrently.  A worker gives the CPU back only by advancing its virtual
 * time (sim_sleep_until) or by waiting for an event (sim_block).
 */
#ifndef FLEXRR_RUNTIME_SIM_INT_H
#define FLEXRR_RUNTIME_SIM_INT_H

#include <stdint.h>

#include "rr_proto.h"
#include "straggler.h"
#include "trace.h"
#include "sim.h"
#include "sim_coro.h"

#define SIM_PROG_HIST 8	      /* progress words kept per worker */
#define SIM_STACK (128 << 10) /* coroutine stack */

/* What a blocked worker waits for (a wake-up is a hint: it re-checks). */
enum sim_wait {
	SIM_RUNNING = 0, /* runnable or sleeping until 'wake' */
	SIM_W_MSG,	 /* the engine polls its mailbox (help, cancel) */
	SIM_W_SSP,	 /* SSP: an older clock applied, or a message */
	SIM_W_EXIT,	 /* worker_exit: a helpee finished, or a message */
	SIM_DONE,
};

struct sim_msg {
	double arrive;
	uint64_t seq;
	struct frr_rr_msg m;
};

struct sim_prog {
	double t;	 /* published (visible in its own process) */
	double t_remote; /* landed in the other processes that read it */
	struct frr_progress p;
};

/* One batch (or replica push) to one process: bytes on the wire, and the
 * chunks (batches: each a write, a seq word, a flush) or runs (pushes:
 * one write each) it takes. */
struct sim_bsz {
	uint64_t bytes, n;
};

#define SIM_RANGES 16 /* item ranges of its own list a worker ran */

struct sim_worker {
	int w, rank;
	struct sim_coro co;
	/* scheduling */
	enum sim_wait wait;
	double wait_start; /* polls tick from here */
	double pending;	   /* earliest wake queued while blocked */
	unsigned gen;	   /* heap entries of older gens are stale */
	int forced;	   /* woken by the deadlock breaker */
	/* the clock it runs (straggler factor applies to all it executes) */
	int clock;
	double factor;
	double wait_s, flush_s; /* its last clock's SSP wait and own flush */
	int need_clock;		/* SSP: waits for this clock to be applied */
	/* recv: the engine polls when it asks twice with nothing between */
	int in_engine_wait, polls, cancel_sent;
	struct rr_worker rw;
	int rw_ok;
	/* mailbox, sorted by (arrive, seq) */
	struct sim_msg *mbox;
	int mbox_n, mbox_cap, mbox_max;
	/* progress words as published, newest last */
	struct sim_prog hist[SIM_PROG_HIST];
	unsigned nhist;
	/* the current clock's list and item costs (prefix sums) */
	uint64_t n, cap;
	double each;		/* > 0: every item costs this (no table) */
	double *pre;		/* else prefix sums of the items' costs */
	double list_s;		/* the whole list's nominal cost */
	double last_item_s[64]; /* lb-bsp: per-item time of recent clocks */
	double finish;		/* virtual time it finished its last clock */
	/* the ranges of its own list it ran in this clock (its batch) */
	uint64_t ran[SIM_RANGES][2];
	int nran;
	struct frr_trace_buf *tb; /* --trace, else NULL */
};

/* lb-bsp: the runtime's plan (straggler.h frr_lb_plan) of the clock the
 * workers run, made when the clock before closed (BSP: one at a time). */
struct sim_lb {
	int *grp, *ng;		    /* W x g, W: rr's helper groups */
	double *tsum, *speed;	    /* W */
	uint64_t *share, *n, *load; /* W */
	struct frr_lb_gift *gifts;  /* W x g */
	double *ready;		    /* per gift: its states shipped */
	struct frr_lb_plan p;
};

struct sim_ev {
	double t;
	uint64_t seq;
	int w;
	unsigned gen;
};

struct sim {
	const struct frr_sim_cfg *cfg;
	const struct frr_stragglers *strag;
	enum frr_sim_mode mode;
	int W, reassign, slack, need; /* need: finishers that close a clock */
	int prog_shift; /* the runtime's unit of a progress word's counts */
	struct rr_config rcfg;
	double now;
	struct sim_worker *ws;
	struct sim_worker *cur;
	struct sim_coro sched_co;
	struct sim_ev *heap;
	int heap_n, heap_cap;
	uint64_t seq, events, switches, actions, msg_seq;
	int err, ndone;
	/* per clock */
	int *finished;	   /* workers that finished clock c */
	double *closed_at; /* c applied (last needed finisher + apply) */
	uint64_t *items_done;
	struct sim_lb *lb; /* lb-bsp: the next clock's plan, else NULL */
	double dropped, work_s, rr_tot[RR_C_NCOUNTERS];
	struct frr_trace *trace;
	/* bytes (sim_net.c, sim_model.c) */
	struct sim_model *mdl;		     /* NULL: no model, no link */
	double *tx_free, *rx_free, *hb_next; /* per process NIC */
	double *comm_w;			     /* [clock]: workers' send time */
	double *push_s;			     /* [clock]: replica push time */
	struct sim_bsz *bsz;		     /* [P] scratch: one batch */
	double *rx_acc; /* [P] scratch: bytes pushed to r */
	/* [P] when p's server has posted its clock's push: it holds the
	 * rank's shared transport context (tp_lock) until then */
	double *lock_free;
	/* per shard: the batch bytes it took in this clock, applied at the
	 * clock's close (link.apply_s_B) */
	double *in_B;
	int *rk;		 /* scratch: a word's reader ranks */
	struct sim_bsz *wbsz;	 /* [W * P]: a worker's batch being sent */
	uint64_t bytes[4], msgs; /* batch, push, control, item state */
};

/* virtual seconds as trace nanoseconds */
static inline uint64_t sim_ns(double t)
{
	return (uint64_t)(t * 1e9 + 0.5);
}

/* sim_sched.c */
int sim_sched_init(struct sim *s);
void sim_sched_fini(struct sim *s);
/* run every worker's coroutine to completion; 0 or -errno */
int sim_sched_run(struct sim *s,
		  void (*body)(struct sim *, struct sim_worker *));
/* current worker: advance its virtual time to t (>= now) */
void sim_sleep_until(struct sim *s, double t);
/* current worker: wait (kind) until sim_wake or `until` (INFINITY: no
 * limit), seen at its next poll; returns on wake */
void sim_block(struct sim *s, enum sim_wait kind, double until);
/* wake w (if blocked) at t, rounded up to its next poll */
void sim_wake(struct sim *s, struct sim_worker *w, double t);

/* sim_env.c */
extern const struct rr_env_ops sim_env_ops;
double sim_lat(const struct sim *s, int from, int to);
void sim_publish(struct sim *s, struct sim_worker *w, int clock, uint64_t done,
		 uint64_t total);
/* seconds for worker `by` to run items [a, b) of owner's current list */
double sim_cost(const struct sim *s, const struct sim_worker *owner, uint64_t a,
		uint64_t b, const struct sim_worker *by);
/* cost of flushing one update batch to every shard */
double sim_flush_s(const struct sim *s);
void sim_fill_costs(struct sim *s, struct sim_worker *w, int clock, uint64_t n);

/* sim_model.c: the table model and the sizes of its messages */
int sim_model_init(struct sim *s);
void sim_model_fini(struct sim *s);
/* the batch of partition v's items in ranges rg[0..nrg) to each process
 * (out[P]; out[own rank] is local) */
void sim_model_batch(struct sim *s, int v, const uint64_t (*rg)[2], int nrg,
		     struct sim_bsz *out);
/* bytes of the item state of `items` items (0: the model has none) */
uint64_t sim_model_state_bytes(const struct sim *s, uint64_t items);
/* process o's replica push to process r after a clock */
struct sim_bsz sim_model_push(const struct sim *s, int o, int r);
/* A clock's pushes are out: what wakes sent once is gone. */
void sim_model_pushed(struct sim *s);
/* Rank r ran a batch (per shard: batch) of partition v of another rank
 * q: the owners it writes rows of push r, from now on, their rows that r
 * holds only for its helpees and q declares (table/hold.c "on use", woken
 * per owner and helpee rank). */
void sim_model_wake(struct sim *s, int r, int v, const struct sim_bsz *batch);

/* sim_net.c: the processes' NICs (link on) */
int sim_net_init(struct sim *s);
void sim_net_fini(struct sim *s);
/* Post `msgs` messages of `bytes` in all from process p to q at t or once
 * p's NIC is free (one lock: FIFO), then `flushes` round trips; returns
 * when p's NIC is free again, *arrive (if not NULL) when the bytes have
 * landed at q. */
double sim_nic_send(struct sim *s, int p, int q, double t, uint64_t bytes,
		    uint64_t msgs, uint64_t flushes, double *arrive);
/* A control word (a progress word, an engine message: `bytes`) from
 * process p to q at t: if `locked` (under tp_lock) after the server's
 * push, then its post cost and `flushes` round trips; returns when the
 * poster may go on, *arrive when the word has landed. */
double sim_ctl_send(struct sim *s, int p, int q, double t, uint64_t bytes,
		    uint64_t flushes, int locked, double *arrive);
/* size the batch of partition v's ranges from process p into s->bsz and
 * count its bytes (no time: the callers charge it) */
void sim_batch_count(struct sim *s, int p, int v, const uint64_t (*rg)[2],
		     int nrg);
/* current worker: flush the batch of partition v's ranges to every
 * process (sleeps; link off: the latency-only cost) */
void sim_flush(struct sim *s, struct sim_worker *w, int v,
	       const uint64_t (*rg)[2], int nrg);
/* current worker w ships the item state of `items` items from process
 * `from` to `to` (one write, flushed; link off: counted, free) */
void sim_state_ship(struct sim *s, struct sim_worker *w, int from, int to,
		    uint64_t items);
/* progress word just published by w: when it lands remotely */
double sim_progress_send(struct sim *s, struct sim_worker *w);
/* clock c's last batch is in at t: the servers apply and push; when the
 * clock is visible everywhere */
double sim_push_clock(struct sim *s, int c, double t);

/* sim_job.c */
void sim_worker_body(struct sim *s, struct sim_worker *w);

#endif /* FLEXRR_RUNTIME_SIM_INT_H */
