// SPDX-License-Identifier: MIT
/*
 * verbs endpoints and their RC QPs: creation and the INIT/RTR/RTS
 * transitions (ours, not rdma_cm's, so path MTU, timeouts and retry counts
 * are ours), and teardown.  verbs_cm.c drives them while connecting.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "verbs.h"

/* A free slot; full: the endpoint's work requests complete in our CQs
 * (everything but a no-notify peer's accepted endpoint). */
struct vb_ep *vb_ep_alloc(struct vb_ctx *c, int full)
{
	struct vb_ep *e;

	if (full && c->nfull >= c->max_full) {
		errno = ENOSPC;
		return NULL;
	}
	for (int i = 0; i < c->nslots; i++) {
		if (c->eps[i])
			continue;
		e = calloc(1, sizeof(*e));
		if (!e)
			return NULL;
		e->ctx = c;
		e->slot = (uint16_t)i;
		e->gen = ++c->gens[i];
		e->base.peer_rank = -1;
		e->full = full;
		c->nfull += full;
		c->eps[i] = e;
		return e;
	}
	errno = ENOSPC;
	return NULL;
}

/* Undo a connection attempt (QP, id, channel); keeps the slot. */
void vb_ep_teardown(struct vb_ep *e)
{
	if (e->qp && ibv_destroy_qp(e->qp))
		frr_warn("verbs: ibv_destroy_qp: %s", strerror(errno));
	e->qp = NULL;
	if (e->scratch_mr)
		ibv_dereg_mr(e->scratch_mr);
	e->scratch_mr = NULL;
	free(e->scratch);
	e->scratch = NULL;
	if (e->id)
		rdma_destroy_id(e->id);
	e->id = NULL;
	if (e->ch)
		rdma_destroy_event_channel(e->ch);
	e->ch = NULL;
	e->sq_posted = e->sq_done = 0;
	e->since_signal = 0;
	e->rq_consumed = 0;
	/* stale completions of the old QP must not match the new one */
	e->gen = ++e->ctx->gens[e->slot];
}

static int qp_create(struct vb_ep *e)
{
	struct vb_ctx *c = e->ctx;
	struct ibv_qp_init_attr ia;
	uint32_t inl = VB_INLINE_WANT;

	for (;;) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = c->scq;
		ia.recv_cq = c->rcq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = VB_SQ_DEPTH;
		/* no notifications: nothing ever arrives to be received */
		ia.cap.max_recv_wr = e->base.no_notify ? 0 : VB_RQ_DEPTH;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		ia.cap.max_inline_data = inl;
		e->qp = ibv_create_qp(c->pd, &ia);
		if (e->qp)
			break;
		if (errno != EINVAL || !inl)
			return frr_tp_err(&c->base, -errno,
					  "verbs: ibv_create_qp(RC, %u send / "
					  "%u recv WRs) on %s: %s",
					  VB_SQ_DEPTH, VB_RQ_DEPTH, c->devname,
					  strerror(errno));
		inl /= 2; /* ask for less inline data until granted */
	}
	/* the granted value, which may exceed the request */
	e->max_inline = ia.cap.max_inline_data;
	if (posix_memalign((void **)&e->scratch, 4096,
			   VB_SQ_DEPTH * sizeof(uint64_t)))
		return frr_tp_err(&c->base, -ENOMEM, "verbs: out of memory");
	e->scratch_mr =
	    ibv_reg_mr(c->pd, e->scratch, VB_SQ_DEPTH * sizeof(uint64_t),
		       IBV_ACCESS_LOCAL_WRITE);
	if (!e->scratch_mr)
		return frr_tp_err(&c->base, -errno,
				  "verbs: ibv_reg_mr(counter buffer): %s; "
				  "check 'ulimit -l'",
				  strerror(errno));
	return 0;
}

static int qp_modify(struct vb_ep *e, struct ibv_qp_attr *a, int mask,
		     const char *state)
{
	int ret = ibv_modify_qp(e->qp, a, mask);

	if (ret)
		return frr_tp_err(&e->ctx->base, -ret,
				  "verbs: moving the QP to %s failed: %s",
				  state, strerror(ret));
	return 0;
}

static int qp_init(struct vb_ep *e)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT };
	int mask;

	if (rdma_init_qp_attr(e->id, &a, &mask))
		return frr_tp_err(&e->ctx->base, -errno,
				  "verbs: rdma_init_qp_attr(INIT): %s",
				  strerror(errno));
	/* peers only ever write into our regions (counters by atomics on
	 * devices that need it, verbs.h) */
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (e->ctx->u64_cas)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_ATOMIC;
	mask |= IBV_QP_ACCESS_FLAGS;
	return qp_modify(e, &a, mask, "INIT");
}

int vb_qp_rtr_rts(struct vb_ep *e, enum ibv_mtu peer_mtu)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask, ret;

	if (rdma_init_qp_attr(e->id, &a, &mask))
		return frr_tp_err(&e->ctx->base, -errno,
				  "verbs: rdma_init_qp_attr(RTR): %s",
				  strerror(errno));
	a.path_mtu =
	    e->ctx->active_mtu < peer_mtu ? e->ctx->active_mtu : peer_mtu;
	a.min_rnr_timer = VB_MIN_RNR_TIMER;
	a.max_dest_rd_atomic = e->ctx->rd_atom;
	mask |=
	    IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_DEST_RD_ATOMIC;
	ret = qp_modify(e, &a, mask, "RTR");
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	if (rdma_init_qp_attr(e->id, &a, &mask))
		return frr_tp_err(&e->ctx->base, -errno,
				  "verbs: rdma_init_qp_attr(RTS): %s",
				  strerror(errno));
	a.timeout = VB_ACK_TIMEOUT;
	a.retry_cnt = VB_RETRY_CNT;
	a.rnr_retry = VB_RNR_RETRY;
	a.max_rd_atomic = e->ctx->rd_atom;
	mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		IBV_QP_MAX_QP_RD_ATOMIC;
	return qp_modify(e, &a, mask, "RTS");
}

/* QP up to INIT with its receives posted (before the peer may write). */
int vb_qp_setup(struct vb_ep *e)
{
	int ret = qp_create(e);

	if (!ret)
		ret = qp_init(e);
	if (!ret && !e->base.no_notify)
		ret = vb_post_recvs(e, VB_RQ_DEPTH);
	return ret;
}

void vb_log_connected(struct vb_ep *e, enum ibv_mtu peer_mtu)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct vb_ctx *c = e->ctx;

	if (ibv_query_qp(e->qp, &a, IBV_QP_AV | IBV_QP_PATH_MTU, &ia))
		return;
	frr_info("verbs: rank %d <-> rank %d (%s) connected: QP %u, path MTU "
		 "%s (active %s here, %s there), sgid index %u, inline %u B%s",
		 c->base.cfg.rank, e->base.peer_rank, e->peer_addr,
		 e->qp->qp_num, vb_mtu_str(a.path_mtu),
		 vb_mtu_str(c->active_mtu), vb_mtu_str(peer_mtu),
		 a.ah_attr.grh.sgid_index, e->max_inline,
		 e->u64_cas ? ", counters by atomics" : "");
	if (peer_mtu != c->active_mtu)
		frr_warn(
		    "verbs: rank %d's active MTU %s differs from ours (%s): "
		    "the connection uses %s; give both netdevs the same "
		    "MTU to use the larger one",
		    e->base.peer_rank, vb_mtu_str(peer_mtu),
		    vb_mtu_str(c->active_mtu), vb_mtu_str(a.path_mtu));
	if (c->link_layer == IBV_LINK_LAYER_ETHERNET &&
	    a.ah_attr.grh.sgid_index != c->gid_index)
		frr_warn("verbs: rdma_cm chose GID index %u for rank %d, not "
			 "%d (check the RoCE mode in rdma_cm's configfs)",
			 a.ah_attr.grh.sgid_index, e->base.peer_rank,
			 c->gid_index);
}
