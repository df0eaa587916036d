// SPDX-License-Identifier: MIT
/*
 * shm data path: plain stores into mapped memory.  Every check is a relaxed
 * load or a compare; the error paths are out of line.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "shm.h"

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax() atomic_signal_fence(memory_order_seq_cst)
#endif

static int __attribute__((noinline, cold)) ep_gone(struct shm_ep *e)
{
	return frr_tp_err(e->base.ctx, -ENOTCONN,
			  "rank %d: peer rank %d has closed the endpoint or "
			  "exited; nothing was written (reconnect, or treat "
			  "the peer as failed)",
			  e->base.ctx->cfg.rank, e->base.peer_rank);
}

static int __attribute__((noinline, cold)) region_gone(struct shm_rmr *r)
{
	return frr_tp_err(r->base.ep->ctx, -ESTALE,
			  "region %u of rank %d was freed by its owner; "
			  "nothing was written (import a live descriptor)",
			  r->base.desc.region_id, (int)r->base.desc.owner_rank);
}

static int __attribute__((noinline, cold)) cq_full(struct frr_tp_ctx *ctx)
{
	return frr_tp_err(ctx, -EAGAIN,
			  "completion queue full (%u signaled writes not "
			  "polled); call frr_tp_poll, nothing was written",
			  SHM_CQ_SLOTS);
}

/* 0 if the write may go ahead; checked before any byte moves */
static inline int pre_write(struct shm_ep *e, struct shm_rmr *r, unsigned flags)
{
	struct shm_ctx *c;

	if (__builtin_expect(
		atomic_load_explicit(&e->gone, memory_order_relaxed), 0))
		return ep_gone(e);
	if (__builtin_expect(
		!atomic_load_explicit(&r->ctl->alive, memory_order_relaxed), 0))
		return region_gone(r);
	if (flags & FRR_TP_F_SIGNAL) {
		c = shm_ctx_of(e->base.ctx);
		if (__builtin_expect(c->cq_tail - c->cq_head >= SHM_CQ_SLOTS,
				     0))
			return cq_full(&c->base);
	}
	return 0;
}

static inline void complete(struct shm_ep *e, uint64_t wr_id, unsigned flags)
{
	struct shm_ctx *c;
	struct frr_tp_wc *wc;

	if (!(flags & FRR_TP_F_SIGNAL))
		return;
	c = shm_ctx_of(e->base.ctx);
	wc = &c->cq[c->cq_tail++ & (SHM_CQ_SLOTS - 1)];
	wc->wr_id = wr_id;
	wc->status = 0;
	wc->peer_rank = e->base.peer_rank;
}

int shm_write(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr, size_t loff,
	      struct frr_tp_rmr *rmr, size_t roff, size_t len, uint64_t wr_id,
	      unsigned flags)
{
	struct shm_ep *e = shm_ep_of(ep);
	struct shm_rmr *r = shm_rmr_of(rmr);
	int ret = pre_write(e, r, flags);

	if (__builtin_expect(ret, 0))
		return ret;
	memcpy(r->data + roff, (const char *)lmr->ptr + loff, len);
	/* G3: a later counter/notification store must not pass this data */
	atomic_thread_fence(memory_order_release);
	complete(e, wr_id, flags);
	return 0;
}

/* The mapping of the peer's region: the stores shm_write makes, done by
 * the caller (the same exposure: the peer's memfd, mapped here). */
void *shm_rmr_direct(struct frr_tp_rmr *rmr, size_t roff)
{
	struct shm_rmr *r = shm_rmr_of(rmr);

	if (!atomic_load_explicit(&r->ctl->alive, memory_order_relaxed))
		return NULL;
	return r->data + roff;
}

int shm_write_u64(struct frr_tp_ep *ep, struct frr_tp_rmr *rmr, size_t roff,
		  uint64_t value, uint64_t wr_id, unsigned flags)
{
	struct shm_ep *e = shm_ep_of(ep);
	struct shm_rmr *r = shm_rmr_of(rmr);
	int ret = pre_write(e, r, flags);

	if (__builtin_expect(ret, 0))
		return ret;
	/* G2: aligned 8-byte store is single-copy atomic; release for G3 */
	atomic_store_explicit((_Atomic uint64_t *)(void *)(r->data + roff),
			      value, memory_order_release);
	complete(e, wr_id, flags);
	return 0;
}

/* Slow path: the target's ring is full; wait for it with the ctx timeout. */
static int __attribute__((noinline)) ring_wait(struct shm_ep *e)
{
	long long deadline = frr_now_ms() + e->base.ctx->cfg.timeout_ms;
	unsigned spins = 0;

	for (;;) {
		e->out_head_cache =
		    atomic_load_explicit(&e->out->head, memory_order_acquire);
		if (e->out_tail - e->out_head_cache < SHM_RING_SLOTS)
			return 0;
		if (atomic_load_explicit(&e->gone, memory_order_relaxed))
			return ep_gone(e);
		if ((++spins & 1023) == 0) {
			if (frr_now_ms() > deadline)
				return frr_tp_err(
				    e->base.ctx, -ETIMEDOUT,
				    "shm: notification ring to rank %d stayed "
				    "full (%u pending) for %d ms: it is "
				    "stopped, hung or overloaded (%s)",
				    e->base.peer_rank, SHM_RING_SLOTS,
				    e->base.ctx->cfg.timeout_ms,
				    frr_tp_wait_hint(e->base.ctx));
			sched_yield();
		}
		cpu_relax();
	}
}

int shm_write_notify(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr,
		     size_t loff, struct frr_tp_rmr *rmr, size_t roff,
		     size_t len, uint32_t imm, uint64_t wr_id, unsigned flags)
{
	struct shm_ep *e = shm_ep_of(ep);
	struct shm_rmr *r = shm_rmr_of(rmr);
	struct shm_note *slot;
	int ret = pre_write(e, r, flags);

	if (__builtin_expect(ret, 0))
		return ret;
	/* reserve the slot first so a timeout leaves nothing half-done */
	if (__builtin_expect(e->out_tail - e->out_head_cache >= SHM_RING_SLOTS,
			     0)) {
		ret = ring_wait(e);
		if (ret)
			return ret;
	}
	memcpy(r->data + roff, (const char *)lmr->ptr + loff, len);
	slot = &e->out->slot[e->out_tail & (SHM_RING_SLOTS - 1)];
	slot->src_rank = ep->ctx->cfg.rank;
	slot->imm = imm;
	/* G4: data and slot before the tail that publishes them */
	atomic_store_explicit(&e->out->tail, ++e->out_tail,
			      memory_order_release);
	complete(e, wr_id, flags);
	return 0;
}

int shm_poll(struct frr_tp_ctx *ctx, struct frr_tp_wc *wc, int max)
{
	struct shm_ctx *c = shm_ctx_of(ctx);
	int n = 0;

	while (n < max && c->cq_head != c->cq_tail)
		wc[n++] = c->cq[c->cq_head++ & (SHM_CQ_SLOTS - 1)];
	return n;
}

static int __attribute__((noinline, cold))
ring_corrupt(struct shm_ep *e, uint64_t tail)
{
	return frr_tp_err(e->base.ctx, -EPROTO,
			  "notification ring from rank %d is corrupt (tail "
			  "%llu, head %llu, %u slots); the peer wrote outside "
			  "the protocol, close this endpoint",
			  e->base.peer_rank, (unsigned long long)tail,
			  (unsigned long long)e->in_head, SHM_RING_SLOTS);
}

static int drain(struct shm_ep *e, struct frr_tp_notify *n, int max)
{
	uint64_t tail =
	    atomic_load_explicit(&e->in->tail, memory_order_acquire);
	int got = 0;

	if (tail == e->in_head)
		return 0;
	/* tail is written by another process: bound it before use */
	if (tail - e->in_head > SHM_RING_SLOTS)
		return ring_corrupt(e, tail);
	while (got < max && e->in_head != tail) {
		const struct shm_note *s =
		    &e->in->slot[e->in_head & (SHM_RING_SLOTS - 1)];

		/* the source is who owns this ring, not what it claims */
		n[got].src_rank = e->base.peer_rank;
		n[got].imm = s->imm;
		got++;
		e->in_head++;
	}
	atomic_store_explicit(&e->in->head, e->in_head, memory_order_release);
	return got;
}

int shm_poll_notify(struct frr_tp_ctx *ctx, struct frr_tp_notify *n, int max)
{
	struct shm_ctx *c = shm_ctx_of(ctx);
	int total = 0, ne = c->neps;

	for (int i = 0; i < ne && total < max; i++) {
		struct shm_ep *e = c->eps[(c->notify_next + i) % ne];
		int got = drain(e, n + total, max - total);

		if (got < 0)
			return got;
		total += got;
	}
	if (ne)
		c->notify_next = (c->notify_next + 1) % ne;
	return total;
}

int shm_flush(struct frr_tp_ep *ep, int timeout_ms)
{
	struct shm_ep *e = shm_ep_of(ep);

	(void)timeout_ms;
	/* stores were done synchronously: ordering them is all that is left */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&e->gone, memory_order_relaxed))
		return ep_gone(e);
	return 0;
}
