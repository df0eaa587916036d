/* SPDX-License-Identifier: MIT */
/*
 * Timeline trace (--trace FILE): Chrome / Perfetto trace-event JSON, one
 * process track per rank (pid = rank) and one thread track per worker
 * (tid = worker id) and for the rank's server (tid -1, "server": its
 * applies), so a straggler and its helpers can be seen in
 * ui.perfetto.dev or chrome://tracing.
 *
 * Recording is lock-free: each worker thread appends fixed-size records to
 * its own pre-allocated buffer (no allocation, no syscall, no lock; a full
 * buffer drops records and counts them).  Everything is formatted and written
 * once, at job end, by frr_trace_write().  With several ranks, each rank
 * writes FILE.rank<r> and rank 0 merges them into FILE: at a clean end
 * the ranks tell rank 0 whether their part is in place (a collective of the
 * job), so it waits for none; after a failure it takes what is there.
 */
#ifndef FLEXRR_RUNTIME_TRACE_H
#define FLEXRR_RUNTIME_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "flexrr/base.h"

enum frr_trace_kind {
	FRR_TR_CLOCK = 0,  /* span: a worker's whole clock */
	FRR_TR_WORK,	   /* span: own items [a, b) */
	FRR_TR_SSP_WAIT,   /* span: blocked on the staleness bound */
	FRR_TR_HELP_GIVEN, /* span: running items [a, b) of worker 'peer' */
	FRR_TR_HELP_WAIT,  /* span: helpee waiting for HelpCompleted */
	FRR_TR_DELAY,	   /* span: injected straggler delay (a = factor%) */
	FRR_TR_OFFER,	   /* instant: DoThis [a, b) to 'peer' */
	FRR_TR_ACCEPTED,   /* instant: 'peer' began helping [a, b) */
	FRR_TR_CANCELLED,  /* instant: offer [a, b) to 'peer' cancelled */
	FRR_TR_HELP_RECVD, /* instant: 'peer' completed [a, b) for us */
	FRR_TR_FLUSH,	   /* span: a worker's final batch of the clock sent */
	FRR_TR_APPLY,	   /* span: the server applies the clock and pushes
			    * its rows, up to its done word (a = chunks) */
	FRR_TR_EVAL,	   /* span: the server's clock_local and stats */
	FRR_TR_GLOBAL,	   /* span: the leader's server's clock_global */
	FRR_TR_NKINDS,
};

struct frr_trace_rec {
	uint64_t t0; /* ns, CLOCK_MONOTONIC */
	uint64_t t1; /* == t0 for instants */
	uint64_t a, b;
	uint16_t kind;
	int16_t peer;
	int32_t clock;
	/* work and help spans: the app's item cost of [a, b) (item_cost),
	 * so a timeline tells a range's time per unit of work; 0 = none */
	double cost;
};

/* One per worker thread, and the server's; written only by that thread. */
struct frr_trace_buf {
	struct frr_trace_rec *rec;
	uint32_t n, cap;
	uint64_t dropped;
	int worker; /* -1: the rank's server */
} __attribute__((aligned(64)));

struct frr_trace;

/* Prepare a trace of nworkers_local threads (global ids first_worker + i) of
 * 'rank'.  cap = records per thread (0 = default 1 << 16). */
int frr_trace_create(const char *path, int rank, int nranks, int first_worker,
		     int nworkers_local, uint32_t cap, struct frr_trace **out);
void frr_trace_destroy(struct frr_trace *t);
/* Buffer of local worker i (0 <= i < nworkers_local), NULL if t is NULL. */
struct frr_trace_buf *frr_trace_buf(struct frr_trace *t, int i);
/* Write this rank's events: a rank other than 0 its part FILE.rank<r>; rank
 * 0 the file, merging every part in place.  part_err (nranks entries, or
 * NULL if unknown) is what each rank's part write returned: a part known
 * missing is not waited for; an unknown one is waited up to timeout_ms.
 * Returns 0 or negative errno (logged). */
int frr_trace_write(struct frr_trace *t, int timeout_ms,
		    const int32_t *part_err);
/* Total records dropped because buffers were full. */
uint64_t frr_trace_dropped(const struct frr_trace *t);

static inline uint64_t frr_trace_now(void)
{
	return frr_now_ns();
}

/* Hot path: append one record (b may be NULL: tracing off); the record,
 * or NULL if none was written (off, or the buffer is full). */
static inline struct frr_trace_rec *
frr_trace_rec(struct frr_trace_buf *b, enum frr_trace_kind kind, uint64_t t0,
	      uint64_t t1, int clock, int peer, uint64_t a, uint64_t bb)
{
	struct frr_trace_rec *r;

	if (!b)
		return NULL;
	if (b->n >= b->cap) {
		b->dropped++;
		return NULL;
	}
	r = &b->rec[b->n++];
	r->t0 = t0;
	r->t1 = t1;
	r->a = a;
	r->b = bb;
	r->kind = (uint16_t)kind;
	r->peer = (int16_t)peer;
	r->clock = clock;
	r->cost = 0;
	return r;
}

/* The item cost of [a, b) from a partition's prefix sums (NULL: none). */
static inline void frr_trace_cost(struct frr_trace_rec *r, const double *cost,
				  uint64_t a, uint64_t b)
{
	if (r && cost && b > a)
		r->cost = cost[b] - cost[a];
}

static inline void frr_trace_instant(struct frr_trace_buf *b,
				     enum frr_trace_kind kind, int clock,
				     int peer, uint64_t a, uint64_t bb)
{
	uint64_t now;

	if (!b)
		return;
	now = frr_trace_now();
	frr_trace_rec(b, kind, now, now, clock, peer, a, bb);
}

#endif /* FLEXRR_RUNTIME_TRACE_H */
