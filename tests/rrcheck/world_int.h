/* SPDX-License-Identifier: MIT */
/* Internals of rrcheck/world.c and world_check.c (not for the tests). */
#ifndef FLEXRR_TESTS_RRCHECK_WORLD_INT_H
#define FLEXRR_TESTS_RRCHECK_WORLD_INT_H

#include "coro.h"
#include "world.h"

#define RRW_QCAP 64

enum rrw_op {
	OP_NONE = 0, /* finished */
	OP_SEND,     /* immediate delivery */
	OP_RECV,
	OP_PROG,
	OP_PUB,
	OP_RUN,
	OP_PUSH,
	OP_NAP,
	OP_GATE,
	OP_ITEM,      /* driver: one own item + its progress word */
	OP_FIN_READ,  /* driver: SSP check */
	OP_EVAL_READ, /* driver: evaluation check */
	OP_CLOCK_END, /* driver: all own items done? clock applied */
};

struct rrw_queue {
	struct frr_rr_msg m[RRW_QCAP];
	int cause[RRW_QCAP]; /* step that sent it */
	int head, n;
};

struct rrw_wk {
	struct rrw *x;
	int w;
	struct rrc_coro co;
	struct rr_worker rw;
	int rw_ok;
	struct rrw_view v;
	enum rrw_op op;	    /* pending step */
	struct rrc_acc acc; /* what it touches */
	/* objects read or written since the last nap, with their versions */
	uint64_t seen;
	uint32_t seen_ver[64];
	/* where the last nap was: a nap blocks only in the second and later
	 * polls of one wait, whose reads since the last nap are exactly what
	 * the next poll reads; the first poll of a wait (after the worker
	 * moved: another phase, engine state or clock) goes on at once */
	int nap_phase, nap_state, nap_clock, moved, nap_free;
	int (*gate)(void *arg);
	void *gate_arg;
	int ssp_passed; /* last clock whose SSP wait ended */
	int rc;
};

struct rrw {
	struct rrw_cfg cfg;
	struct rr_config rcfg;
	struct rrc_sys sys;
	int W, nch, eval_tid;
	int item_base[RRW_MAXW], item_bits;
	struct rrw_wk wk[RRW_MAXW];
	struct rrw_chan {
		int from, to;
		struct rrw_queue q;
	} ch[RRW_MAXW * RRW_MAXW];
	int chan_of[RRW_MAXW][RRW_MAXW];
	struct rrw_queue vis[RRW_MAXW]; /* delivered, not yet received */
	uint64_t prog[RRW_MAXW];
	int fin[RRW_MAXW], eval_done;
	uint32_t ver[64];
	int count[RRW_MAXW][RRW_MAXC][RRW_MAXN];
	int8_t by[RRW_MAXW][RRW_MAXC][RRW_MAXN];
	uint64_t state[RRW_MAXW][RRW_MAXW][RRW_MAXN]; /* [rank][owner][i] */
	int cur;				      /* step running */
	int running;				      /* its worker */
	unsigned flags; /* 1 << RRW_P_* taken in this run */
	int failed, verbose, mutated;
	uint64_t last_trace;
	char fail[4096];
	struct rrw_cover cover;
	/* per thread: hash of the object versions its steps saw, which
	 * names the run's Mazurkiewicz trace (conflicting steps in another
	 * order show other versions) */
	uint64_t fp[RRC_MAXT];
	struct rrw_hset {
		uint64_t *h; /* open addressing, 0 = free */
		size_t cap, n;
	} ends, traces;
};

#define OBJ_DONE(x, v) (2 * (x)->W + (v))
#define OBJ_FIN(x) (3 * (x)->W)
#define OBJ_EVAL(x) (3 * (x)->W + 1)
#define OBJ_FIRST_ITEM(x) (3 * (x)->W + 2)

int rrw_obj_vis(const struct rrw *x, int r);
int rrw_obj_prog(const struct rrw *x, int v);
int rrw_obj_item(const struct rrw *x, int owner, uint64_t i);
int rrw_min_fin(const struct rrw *x);
void rrw_failf(struct rrw *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline uint64_t rrw_bit(int o)
{
	return 1ull << o;
}

/* the objects of items [a, b) of owner */
static inline uint64_t rrw_items(const struct rrw *x, int owner, uint64_t a,
				 uint64_t b)
{
	uint64_t m = 0;

	for (uint64_t i = a; i < b; i++)
		m |= rrw_bit(rrw_obj_item(x, owner, i));
	return m;
}

/* world_env.c */
extern const struct rr_env_ops rrw_env_ops;
void rrw_yield(struct rrw_wk *k, enum rrw_op op, struct rrc_acc a);
void rrw_after_op(struct rrw_wk *k);
int rrw_changed(const struct rrw_wk *k);
void rrw_process_item(struct rrw *x, int runner, int owner, int c, uint64_t i);
int rrw_is_final(const struct rrw *x, int v, int clock,
		 const struct frr_rr_list *l);
int rrw_publish(void *env, int w, int clock, const struct frr_rr_list *list);
void rrw_nap(void *env, int w, long us);
void rrw_world_hook(void *arg, int w, enum rr_hook_point pt,
		    const struct frr_rr_msg *m);

/* world_check.c */
int rrw_check_end(void *arg);
void rrw_check_idle_help(struct rrw_wk *k);
void rrw_describe(struct rrw *x);

#endif /* FLEXRR_TESTS_RRCHECK_WORLD_INT_H */
