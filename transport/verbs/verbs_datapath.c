// SPDX-License-Identifier: MIT
/*
 * verbs backend data path: RDMA WRITE (WITH IMM) with selective signaling,
 * completion and notification reaping, flush.  No allocation, locks or
 * syscalls of ours per write (ibv_post_send may ring a doorbell); the
 * arguments were validated by transport.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "verbs.h"

#define VB_POLL_BATCH 16
#define VB_F_FORCE_SIGNAL (1u << 31) /* internal: signaled, no user wc */
#define VB_F_SYNC (1u << 30)	     /* internal: caller checks the swap */
#define VB_SPIN_CHECK 256 /* polls between clock and CM checks in waits */

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

static inline uint64_t wr_id_make(const struct vb_ep *e, uint64_t seq)
{
	return (uint64_t)e->slot << 48 | (uint64_t)e->gen << VB_SEQ_BITS |
	       (seq & VB_SEQ_MASK);
}

/* The endpoint a completion belongs to, or NULL for a closed one. */
static inline struct vb_ep *wr_id_ep(struct vb_ctx *c, uint64_t wr_id)
{
	unsigned slot = (unsigned)(wr_id >> 48);
	struct vb_ep *e;

	if (slot >= (unsigned)c->nslots)
		return NULL;
	e = c->eps[slot];
	if (!e || e->gen != (uint8_t)(wr_id >> VB_SEQ_BITS))
		return NULL;
	return e;
}

/* ---- completion errors ------------------------------------------------ */

static const char *wc_hint(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_RETRY_EXC_ERR:
		return "the peer stopped acknowledging: it exited, its host "
		       "or link is down, or the path MTU/GID is wrong";
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return "the peer ran out of posted receives: it does not poll "
		       "notifications";
	case IBV_WC_REM_ACCESS_ERR:
		return "the remote region was freed or the key/range is "
		       "wrong: re-import the peer's descriptor";
	case IBV_WC_REM_INV_REQ_ERR:
		return "the peer's QP rejected the request (access flags or "
		       "length)";
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
		return "the local region was freed or is not registered for "
		       "this use";
	case IBV_WC_LOC_LEN_ERR:
		return "a length exceeds what the QP or region allows";
	case IBV_WC_WR_FLUSH_ERR:
		return "the endpoint had already failed; earlier error above";
	default:
		return "see the device's error counters (rdma statistic)";
	}
}

static int wc_errno(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_WR_FLUSH_ERR:
		return -ENOTCONN;
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
		return -EACCES;
	case IBV_WC_LOC_PROT_ERR:
		return -EFAULT;
	case IBV_WC_LOC_LEN_ERR:
		return -EMSGSIZE;
	default:
		return -EIO;
	}
}

static void __attribute__((noinline, cold))
wc_failed(struct vb_ep *e, const struct ibv_wc *wc)
{
	int err = wc_errno(wc->status);

	if (!e->err) {
		/* a disconnect may have raced: prefer the CM's explanation */
		vb_ep_check_cm(e);
		if (!e->err)
			frr_tp_err(&e->ctx->base, err,
				   "verbs: write to rank %d failed: %s "
				   "(vendor error 0x%x); %s",
				   e->base.peer_rank,
				   ibv_wc_status_str(wc->status),
				   wc->vendor_err, wc_hint(wc->status));
	}
	vb_ep_fail(e, err);
}

static int __attribute__((noinline, cold)) ep_dead(struct vb_ep *e)
{
	return frr_tp_err(&e->ctx->base, e->err,
			  "verbs: endpoint to rank %d is down (%s); close it "
			  "and reconnect",
			  e->base.peer_rank, strerror(-e->err));
}

/* ---- send completions ------------------------------------------------- */

static inline void stash_push(struct vb_ctx *c, const struct frr_tp_wc *w)
{
	c->stash[c->stash_tail++ & (c->stash_cap - 1)] = *w;
}

/*
 * One entry per address: only the latest value matters, and retirement is in
 * posting order, so a later miss overwrites an earlier one.  Distinct
 * addresses <= outstanding WRs <= VB_SQ_DEPTH: the array cannot overflow.
 */
static void repair_add(struct vb_ep *e, const struct vb_wr *w, uint64_t seen)
{
	uint32_t i;

	for (i = 0; i < e->nrepair; i++)
		if (e->repair[i].raddr == w->raddr)
			break;
	if (i == e->nrepair)
		e->nrepair++;
	e->repair[i] = (struct vb_repair){
		.raddr = w->raddr,
		.value = w->swp,
		.seen = seen,
		.rkey = w->rkey,
	};
}

/* Retired WRs [from, to): queue a repair for each swap that missed. */
static void cas_check(struct vb_ep *e, uint64_t from, uint64_t to)
{
	for (uint64_t s = from; s < to; s++) {
		struct vb_wr *w = &e->wr[s & (VB_SQ_DEPTH - 1)];
		uint64_t seen = e->scratch[s & (VB_SQ_DEPTH - 1)];

		if (!w->cas)
			continue;
		w->cas = 0;
		if (seen == w->cmp)
			continue;
		repair_add(e, w, seen);
	}
}

/*
 * Reap up to max send completions; user-visible ones go to out[] (n_out
 * counts them) when out is given, else to the stash.  Returns 0 or -errno.
 */
static int reap_send(struct vb_ctx *c, struct frr_tp_wc *out, int max,
		     int *n_out)
{
	struct ibv_wc wc[VB_POLL_BATCH];
	int n = max < VB_POLL_BATCH ? max : VB_POLL_BATCH;

	n = ibv_poll_cq(c->scq, n, wc);
	if (unlikely(n < 0))
		return frr_tp_err(&c->base, -EIO,
				  "verbs: ibv_poll_cq(send) failed on %s",
				  c->devname);
	for (int i = 0; i < n; i++) {
		struct vb_ep *e = wr_id_ep(c, wc[i].wr_id);
		uint64_t s40, seq;
		struct vb_wr *w;

		if (!e)
			continue;
		s40 = wc[i].wr_id & VB_SEQ_MASK;
		seq = e->sq_done + ((s40 - e->sq_done) & VB_SEQ_MASK);
		if (e->u64_cas && wc[i].status == IBV_WC_SUCCESS)
			cas_check(e, e->sq_done, seq + 1);
		e->sq_done = seq + 1;
		if (unlikely(wc[i].status != IBV_WC_SUCCESS))
			wc_failed(e, &wc[i]);
		w = &e->wr[seq & (VB_SQ_DEPTH - 1)];
		if (!w->user_signaled)
			continue;
		w->user_signaled = 0;
		struct frr_tp_wc u = {
			.wr_id = w->user_wr_id,
			.status = wc[i].status == IBV_WC_SUCCESS
				      ? 0
				      : wc_errno(wc[i].status),
			.peer_rank = e->base.peer_rank,
		};
		if (out)
			out[(*n_out)++] = u;
		else
			stash_push(c, &u);
	}
	return n;
}

/* Make progress on the send CQ from a wait loop (results to the stash). */
static int progress(struct vb_ctx *c)
{
	uint32_t room = c->stash_cap - (c->stash_tail - c->stash_head);

	if (unlikely(room < VB_POLL_BATCH))
		return frr_tp_err(&c->base, -EAGAIN,
				  "verbs: %u signaled completions are waiting "
				  "to be polled; call frr_tp_poll",
				  c->stash_cap - room);
	return reap_send(c, NULL, VB_POLL_BATCH, NULL);
}

/*
 * Wait until e has at most 'limit' outstanding WRs, or timeout.  Checks the
 * clock and CM events every VB_SPIN_CHECK empty polls.  hint: what gives
 * the peer longer, in the words of whoever chose timeout_ms.
 */
#define FLUSH_HINT "pass frr_tp_flush a longer timeout if it is busy"

static int wait_sq(struct vb_ep *e, uint64_t limit, int timeout_ms,
		   const char *what, const char *hint)
{
	struct vb_ctx *c = e->ctx;
	long long deadline = frr_now_ms() + timeout_ms;
	unsigned spins = 0;
	int n;

	while (e->sq_posted - e->sq_done > limit) {
		n = progress(c);
		if (n < 0)
			return n;
		if (unlikely(e->err))
			return ep_dead(e);
		/* by count, not only when idle: other endpoints' completions
		 * must not keep this wait from timing out */
		if (++spins % VB_SPIN_CHECK)
			continue;
		if (vb_ep_check_cm(e))
			return ep_dead(e);
		if (frr_now_ms() > deadline)
			return frr_tp_err(
			    &c->base, -ETIMEDOUT,
			    "verbs: %s to rank %d: %llu writes still "
			    "unacknowledged after %d ms: it is stopped, hung "
			    "or overloaded (%s)",
			    what, e->base.peer_rank,
			    (unsigned long long)(e->sq_posted - e->sq_done),
			    timeout_ms, hint);
		if (!n)
			sched_yield();
	}
	return 0;
}

/* The waits of the ctx's timeout_ms inside a post: the caller's wait_hint. */
static int wait_room(struct vb_ep *e, uint64_t limit, const char *what)
{
	return wait_sq(e, limit, e->ctx->base.cfg.timeout_ms, what,
		       frr_tp_wait_hint(&e->ctx->base));
}

/* ---- posting ---------------------------------------------------------- */

static inline int post(struct vb_ep *e, struct ibv_send_wr *wr, uint64_t raddr,
		       uint32_t rkey, uint64_t user_wr_id, unsigned flags)
{
	struct ibv_send_wr *bad;
	struct vb_wr *w;
	int sig, ret;

	if (unlikely(e->err))
		return ep_dead(e);
	if (unlikely(e->sq_posted - e->sq_done >= VB_SQ_DEPTH)) {
		ret = wait_room(e, VB_SQ_DEPTH - 1, "send queue full");
		if (ret)
			return ret;
	}
	sig = (flags & (FRR_TP_F_SIGNAL | VB_F_FORCE_SIGNAL)) ||
	      ++e->since_signal >= VB_SIGNAL_EVERY;
	w = &e->wr[e->sq_posted & (VB_SQ_DEPTH - 1)];
	w->user_wr_id = user_wr_id;
	w->user_signaled = !!(flags & FRR_TP_F_SIGNAL);
	w->cas =
	    wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP && !(flags & VB_F_SYNC);
	if (w->cas) {
		w->raddr = raddr;
		w->rkey = rkey;
		w->cmp = wr->wr.atomic.compare_add;
		w->swp = wr->wr.atomic.swap;
	}
	wr->wr_id = wr_id_make(e, e->sq_posted);
	if (sig)
		wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(e->qp, wr, &bad);
	if (unlikely(ret)) {
		w->user_signaled = 0;
		return frr_tp_err(&e->ctx->base, -ret,
				  "verbs: ibv_post_send to rank %d: %s",
				  e->base.peer_rank, strerror(ret));
	}
	e->sq_posted++;
	if (sig)
		e->since_signal = 0;
	e->last_signaled = sig;
	e->last_raddr = raddr;
	e->last_rkey = rkey;
	return 0;
}

static inline int write_common(struct vb_ep *e, const struct frr_tp_mr *lmr,
			       size_t loff, struct frr_tp_rmr *rmr, size_t roff,
			       size_t len, int with_imm, uint32_t imm,
			       uint64_t wr_id, unsigned flags)
{
	struct ibv_sge sge = {
		.addr = lmr->remote_addr + loff,
		.length = (uint32_t)len,
		.lkey = lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode =
		    with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		.send_flags = len && len <= e->max_inline ? IBV_SEND_INLINE : 0,
		.imm_data = htonl(imm),
	};

	if (unlikely(len > UINT32_MAX))
		return frr_tp_err(&e->ctx->base, -EMSGSIZE,
				  "verbs: one write is limited to 4 GiB; "
				  "split it");
	wr.wr.rdma.remote_addr = rmr->desc.remote_addr + roff;
	wr.wr.rdma.rkey = rmr->desc.rkey;
	return post(e, &wr, wr.wr.rdma.remote_addr, wr.wr.rdma.rkey, wr_id,
		    flags);
}

static int repair_run(struct vb_ep *e);

int vb_write(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr, size_t loff,
	     struct frr_tp_rmr *rmr, size_t roff, size_t len, uint64_t wr_id,
	     unsigned flags)
{
	if (unlikely(vb_ep_of(ep)->nrepair)) {
		int ret = repair_run(vb_ep_of(ep));

		if (ret)
			return ret;
	}
	return write_common(vb_ep_of(ep), lmr, loff, rmr, roff, len, 0, 0,
			    wr_id, flags);
}

int vb_write_notify(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr,
		    size_t loff, struct frr_tp_rmr *rmr, size_t roff,
		    size_t len, uint32_t imm, uint64_t wr_id, unsigned flags)
{
	if (unlikely(vb_ep_of(ep)->nrepair)) {
		int ret = repair_run(vb_ep_of(ep));

		if (ret)
			return ret;
	}
	return write_common(vb_ep_of(ep), lmr, loff, rmr, roff, len, 1, imm,
			    wr_id, flags);
}

/*
 * 8 bytes from an inline copy of value (the QP granted inline data) or, on
 * devices without inline, from a per-WR slot of a registered buffer that is
 * not reused before the WR completes (the SQ rule bounds outstanding WRs).
 * One aligned 8-byte write is placed as a unit by the NICs we know (G2).
 */
/* One counter swap; its result lands in scratch[seq % depth]. */
static int cas_post(struct vb_ep *e, uint64_t raddr, uint32_t rkey,
		    uint64_t cmp, uint64_t value, unsigned flags, uint64_t *seq)
{
	struct ibv_sge sge = { .length = 8, .lkey = e->scratch_mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
	};
	int ret;

	if (unlikely(e->sq_posted - e->sq_done >= VB_SQ_DEPTH)) {
		ret = wait_room(e, VB_SQ_DEPTH - 1, "send queue full");
		if (ret)
			return ret;
	}
	*seq = e->sq_posted;
	sge.addr = (uintptr_t)&e->scratch[*seq & (VB_SQ_DEPTH - 1)];
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.compare_add = cmp;
	wr.wr.atomic.swap = value;
	wr.wr.atomic.rkey = rkey;
	return post(e, &wr, raddr, rkey, 0, flags);
}

/* Swap until value is in place, starting from the guess seen. */
static int __attribute__((noinline))
cas_sync(struct vb_ep *e, uint64_t raddr, uint32_t rkey, uint64_t seen,
	 uint64_t value)
{
	struct vb_ctx *c = e->ctx;
	long long deadline = frr_now_ms() + c->base.cfg.timeout_ms;
	uint64_t seq;
	int ret;

	for (;;) {
		ret = cas_post(e, raddr, rkey, seen, value,
			       VB_F_FORCE_SIGNAL | VB_F_SYNC, &seq);
		if (!ret)
			ret = wait_room(e, 0, "counter write");
		if (ret)
			return ret;
		if (e->scratch[seq & (VB_SQ_DEPTH - 1)] == seen)
			return 0;
		seen = e->scratch[seq & (VB_SQ_DEPTH - 1)];
		if (frr_now_ms() > deadline)
			return frr_tp_err(&c->base, -ETIMEDOUT,
					  "verbs: a counter of rank %d kept "
					  "changing for %d ms under concurrent "
					  "writers",
					  e->base.peer_rank,
					  c->base.cfg.timeout_ms);
	}
}

/* Redo the swaps that found another writer's value (verbs.h). */
static int __attribute__((noinline, cold)) repair_run(struct vb_ep *e)
{
	/* take entries out before redoing them: misses found while waiting
	 * inside are added again, with their (later) values */
	while (e->nrepair) {
		struct vb_repair r = e->repair[0];
		int ret;

		e->repair[0] = e->repair[--e->nrepair];
		ret = cas_sync(e, r.raddr, r.rkey, r.seen, r.value);
		if (ret) {
			e->nrepair = 0;
			return ret;
		}
	}
	return 0;
}

/* Counter write into a target that asked for atomics (verbs.h). */
static int __attribute__((noinline))
write_u64_cas(struct vb_ep *e, struct frr_tp_rmr *rmr, size_t roff,
	      uint64_t value, uint64_t wr_id, unsigned flags)
{
	uint64_t raddr = rmr->desc.remote_addr + roff, seq;
	unsigned h = (unsigned)(raddr >> 3) & (VB_CAS_CACHE - 1);
	int ret;

	if (e->cas_cache[h].raddr == raddr) {
		ret = cas_post(e, raddr, rmr->desc.rkey, e->cas_cache[h].value,
			       value, flags, &seq);
		if (ret)
			return ret;
		e->wr[seq & (VB_SQ_DEPTH - 1)].user_wr_id = wr_id;
		e->cas_cache[h].value = value;
		return 0;
	}
	/* unknown current value: guess 0 (regions start zeroed) and wait */
	ret = cas_sync(e, raddr, rmr->desc.rkey, 0, value);
	if (ret)
		return ret;
	e->cas_cache[h].raddr = raddr;
	e->cas_cache[h].value = value;
	if (flags & FRR_TP_F_SIGNAL) {
		struct frr_tp_wc u = { .wr_id = wr_id,
				       .peer_rank = e->base.peer_rank };

		if (e->ctx->stash_tail - e->ctx->stash_head >=
		    e->ctx->stash_cap)
			return progress(e->ctx); /* says "call frr_tp_poll" */
		stash_push(e->ctx, &u);
	}
	return 0;
}

int vb_write_u64(struct frr_tp_ep *ep, struct frr_tp_rmr *rmr, size_t roff,
		 uint64_t value, uint64_t wr_id, unsigned flags)
{
	struct vb_ep *e = vb_ep_of(ep);
	uint64_t v = value;
	struct ibv_sge sge = { .addr = (uintptr_t)&v, .length = 8 };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
	};

	if (e->u64_cas) {
		if (unlikely(e->nrepair)) {
			int ret = repair_run(e);

			if (ret)
				return ret;
		}
		return write_u64_cas(e, rmr, roff, value, wr_id, flags);
	}
	if (e->max_inline >= 8) {
		wr.send_flags = IBV_SEND_INLINE;
	} else {
		uint64_t *slot = &e->scratch[e->sq_posted & (VB_SQ_DEPTH - 1)];

		if (unlikely(e->sq_posted - e->sq_done >= VB_SQ_DEPTH)) {
			int ret =
			    wait_room(e, VB_SQ_DEPTH - 1, "send queue full");
			if (ret)
				return ret;
		}
		*slot = value;
		sge.addr = (uintptr_t)slot;
		sge.lkey = e->scratch_mr->lkey;
	}
	wr.wr.rdma.remote_addr = rmr->desc.remote_addr + roff;
	wr.wr.rdma.rkey = rmr->desc.rkey;
	return post(e, &wr, wr.wr.rdma.remote_addr, wr.wr.rdma.rkey, wr_id,
		    flags);
}

int vb_poll(struct frr_tp_ctx *ctx, struct frr_tp_wc *wc, int max)
{
	struct vb_ctx *c = vb_ctx_of(ctx);
	int n = 0, ret;

	while (n < max && c->stash_head != c->stash_tail)
		wc[n++] = c->stash[c->stash_head++ & (c->stash_cap - 1)];
	/* each CQE yields at most one user completion: out[] cannot overflow */
	while (n < max) {
		ret = reap_send(c, wc, max - n, &n);
		if (ret < 0)
			return ret;
		if (ret == 0)
			break;
	}
	return n;
}

int vb_flush(struct frr_tp_ep *ep, int timeout_ms)
{
	struct vb_ep *e = vb_ep_of(ep);
	int ret;

	if (unlikely(e->err) || vb_ep_check_cm(e))
		return ep_dead(e);
	if (e->sq_posted == e->sq_done && !e->nrepair)
		return 0;
	/* Unsignaled WRs never complete visibly: end with a signaled
	 * zero-length write (to the last target, so the key is valid); RC
	 * completes in order, so its completion covers everything before. */
	if (!e->last_signaled) {
		struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE };

		wr.wr.rdma.remote_addr = e->last_raddr;
		wr.wr.rdma.rkey = e->last_rkey;
		ret = post(e, &wr, e->last_raddr, e->last_rkey, 0,
			   VB_F_FORCE_SIGNAL);
		if (ret)
			return ret;
	}
	ret = wait_sq(e, 0, timeout_ms, "flush", FLUSH_HINT);
	/* swaps that met another writer are redone before flush returns */
	while (!ret && e->nrepair) {
		ret = repair_run(e);
		if (!ret)
			ret = wait_sq(e, 0, timeout_ms, "flush", FLUSH_HINT);
	}
	return ret;
}

/* ---- notifications ---------------------------------------------------- */

int vb_post_recvs(struct vb_ep *e, uint32_t n)
{
	struct ibv_recv_wr wr[VB_RQ_REPOST], *bad;
	int ret;

	while (n) {
		uint32_t k = n < VB_RQ_REPOST ? n : VB_RQ_REPOST;

		/* zero-length receives: a WRITE WITH IMM consumes one and
		 * places its data by RDMA address */
		for (uint32_t i = 0; i < k; i++) {
			memset(&wr[i], 0, sizeof(wr[i]));
			wr[i].wr_id = (uint64_t)e->slot << 48 |
				      (uint64_t)e->gen << VB_SEQ_BITS;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		ret = ibv_post_recv(e->qp, wr, &bad);
		if (ret)
			return frr_tp_err(&e->ctx->base, -ret,
					  "verbs: ibv_post_recv for rank %d: "
					  "%s",
					  e->base.peer_rank, strerror(ret));
		n -= k;
	}
	return 0;
}

int vb_poll_notify(struct frr_tp_ctx *ctx, struct frr_tp_notify *out, int max)
{
	struct vb_ctx *c = vb_ctx_of(ctx);
	struct ibv_wc wc[VB_POLL_BATCH];
	int n = 0;

	while (n < max) {
		int want = max - n < VB_POLL_BATCH ? max - n : VB_POLL_BATCH;
		int got = ibv_poll_cq(c->rcq, want, wc);

		if (unlikely(got < 0))
			return frr_tp_err(ctx, -EIO,
					  "verbs: ibv_poll_cq(recv) failed on "
					  "%s",
					  c->devname);
		for (int i = 0; i < got; i++) {
			struct vb_ep *e = wr_id_ep(c, wc[i].wr_id);

			if (!e)
				continue;
			if (unlikely(wc[i].status != IBV_WC_SUCCESS)) {
				if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
					wc_failed(e, &wc[i]);
				else
					vb_ep_fail(e, -ENOTCONN);
				continue;
			}
			if (wc[i].opcode != IBV_WC_RECV_RDMA_WITH_IMM)
				continue; /* peers only write; ignore */
			out[n].src_rank = e->base.peer_rank;
			out[n].imm = ntohl(wc[i].imm_data);
			n++;
			if (++e->rq_consumed >= VB_RQ_REPOST && !e->err) {
				int ret = vb_post_recvs(e, e->rq_consumed);

				if (ret)
					return ret;
				e->rq_consumed = 0;
			}
		}
		if (got < want)
			break;
	}
	return n;
}

/* ---- remote regions --------------------------------------------------- */

int vb_rmr_import(struct frr_tp_ep *ep, const struct frr_tp_desc *desc,
		  struct frr_tp_rmr **out)
{
	struct frr_tp_rmr *r;

	(void)desc; /* transport.c validated it and keeps a copy */
	r = calloc(1, sizeof(*r));
	if (!r)
		return frr_tp_err(ep->ctx, -ENOMEM, "verbs: out of memory");
	*out = r;
	return 0;
}

void vb_rmr_release(struct frr_tp_rmr *rmr)
{
	free(rmr);
}
