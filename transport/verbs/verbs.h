/* SPDX-License-Identifier: MIT */
/*
 * verbs backend internals: one-sided RDMA writes over RC queue pairs,
 * connected with librdmacm (docs/verbs.md).
 *
 * Set-up (verbs_setup.c): pick a device, an ACTIVE port and a RoCE v2 GID
 * (sysfs), derive the IPv4 address rdma_cm binds to, open a listener, a PD
 * and two CQs shared by every endpoint (sends, receives).  Regions are
 * page-aligned anonymous mappings bound to the NIC's NUMA node.
 *
 * Connections (verbs_cm.c): rdma_cm resolve/connect/accept with retries and
 * deadlines; the QP is created and moved through INIT/RTR/RTS here (not by
 * librdmacm) so that the path MTU is the minimum of both ends' active MTU and
 * rnr_retry/retry_cnt/timeout are ours.  Private data carries ranks, a
 * nonce and a MAC proving the job secret (never the secret): the acceptor
 * rejects a REQ without a valid MAC or with a nonce it has seen, the
 * connector a REP whose MAC does not cover its own nonce.  Each endpoint has
 * its own event channel, polled without blocking for DISCONNECTED.
 *
 * Data path (verbs_datapath.c): RDMA WRITE, RDMA WRITE WITH IMM into
 * pre-posted zero-length receives, selective signaling.  Everything here is
 * touched by the one thread that uses the ctx (transport.h), so there are no
 * atomics or locks: the send-queue accounting below is plain counters.
 *
 * Send-queue rule: at most VB_SQ_DEPTH WRs are outstanding per QP
 * (posted - done).  A WR is signaled when the caller asks for a completion,
 * and at least every VB_SIGNAL_EVERY WRs, so a full SQ always holds
 * VB_SQ_DEPTH / VB_SIGNAL_EVERY signaled WRs whose completions retire it.
 * A completion of WR s retires every WR up to s (RC completes in order).
 *
 * Counters (G2): NICs place an aligned 8-byte RDMA WRITE payload with one
 * DMA write, which readers never see torn.  Soft-RoCE (rxe) copies payloads
 * with the kernel's memcpy, which stores byte by byte ('rep movsb') on x86
 * CPUs with ERMS/FSRM (seen torn under qemu), so a target on such an rxe
 * host asks its writers (private data flag) to set counters with an atomic
 * compare-and-swap loop instead (rxe executes atomics with one 64-bit store
 * under a lock).  The expected old value is the last value this endpoint
 * wrote to that address (a small cache), so a counter with one writer is
 * swapped asynchronously like a write; the result is checked when the WR
 * retires, and a swap that found another writer's value is redone
 * synchronously at the next call (a counter not in the cache is swapped
 * synchronously right away).  FLEXRR_VERBS_U64=write|cas overrides the
 * choice.
 */
#ifndef FLEXRR_VERBS_H
#define FLEXRR_VERBS_H

#include <netinet/in.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "../transport_impl.h"

#define VB_SQ_DEPTH 256u /* power of two */
#define VB_SIGNAL_EVERY (VB_SQ_DEPTH / 4)
#define VB_RQ_DEPTH 1024u   /* notifications buffered per endpoint */
#define VB_RQ_REPOST 32u    /* receives re-posted in batches */
#define VB_INLINE_WANT 256u /* asked for; the QP may grant less */
#define VB_MAX_FULL 64	    /* endpoints with queues in the CQs, per ctx */
#define VB_PRIV_MAGIC 0x46525643u /* "FRVC" */
#define VB_PRIV_VERSION 2
#define VB_PRIV_MAC_LEN 16 /* HMAC-SHA256 truncated: a REQ holds 56 bytes */
#define VB_SEEN_NONCES 64  /* REQ nonces remembered against replays */

/* wr_id: [63:48] endpoint slot, [47:40] slot generation, [39:0] WR sequence */
#define VB_SEQ_BITS 40
#define VB_SEQ_MASK ((1ull << VB_SEQ_BITS) - 1)

/* Connection private data (REQ, REP and REJ; little-endian hosts only). */
enum vb_rej_reason {
	VB_REJ_NONE = 0,
	VB_REJ_AUTH = 1,    /* no proof of the job secret, or a replay */
	VB_REJ_RANK = 2,    /* rank outside the job or our own */
	VB_REJ_VERSION = 3, /* protocol version or magic differs */
	VB_REJ_FULL = 4,    /* no endpoint slot left */
	VB_REJ_SETUP = 5,   /* QP set-up failed on the acceptor */
};

struct vb_priv {
	uint32_t magic;
	uint16_t version;
	uint16_t reason; /* enum vb_rej_reason, in REJ */
	int32_t rank;
	int32_t nranks;
	uint32_t active_mtu; /* enum ibv_mtu of the sender's port */
	uint32_t flags;	     /* VB_PRIV_F_* */
	/* REQ: the connector's nonce and MAC("verbs req", nonce, 0, ranks,
	 * mtu, flags); REP: the acceptor's nonce and MAC("verbs rep",
	 * REQ nonce, this nonce, ranks, mtu, flags); REJ: zero */
	unsigned char nonce[FRR_AUTH_NONCE_LEN];
	unsigned char mac[VB_PRIV_MAC_LEN];
};

/* The sender's device places payloads with a CPU copy that may tear an
 * 8-byte counter (rxe): write counters into it with atomics (verbs.h top). */
#define VB_PRIV_F_U64_CAS 1u
/* The connector's ctx is FRR_TP_CFG_NO_NOTIFY: neither QP posts receives,
 * and the acceptor's QP never sends, so it takes no CQ entries there. */
#define VB_PRIV_F_NO_NOTIFY 2u
#define VB_CAS_CACHE 256 /* power of two: last value per counter address */

struct vb_ctx;

struct vb_mr {
	struct frr_tp_mr base;
	struct ibv_mr *mr;
	size_t maplen; /* mapping length (page multiple) */
	struct vb_mr *next, *prev;
};

/* Per-WR bookkeeping, indexed by sequence % VB_SQ_DEPTH. */
struct vb_wr {
	uint64_t user_wr_id;
	uint8_t user_signaled;
	uint8_t cas;	   /* an asynchronous counter swap: check its result */
	uint32_t rkey;	   /* cas: target */
	uint64_t raddr;	   /* cas: target */
	uint64_t cmp, swp; /* cas: expected old value, new value */
};

/* A counter swap whose expected old value was wrong (another writer): to be
 * redone synchronously at the writer's next call. */
struct vb_repair {
	uint64_t raddr, value, seen;
	uint32_t rkey;
};

struct vb_ep {
	struct frr_tp_ep base;
	struct vb_ctx *ctx;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	uint16_t slot;
	uint8_t gen;
	uint32_t max_inline;
	int err;  /* 0, or negative errno once the endpoint is unusable */
	int full; /* has receives and/or sends: counted in nfull (CQ room) */

	/* send queue accounting (see the rule above) */
	uint64_t sq_posted, sq_done;
	uint32_t since_signal;
	int last_signaled;
	uint64_t last_raddr; /* target of the last write, for flush */
	uint32_t last_rkey;
	struct vb_wr wr[VB_SQ_DEPTH];

	/* 8-byte counter sources when the QP has no inline data; slot 0 is
	 * also the compare-and-swap result */
	uint64_t *scratch;
	struct ibv_mr *scratch_mr;
	int u64_cas; /* the peer asked for atomic counter writes */
	struct {
		uint64_t raddr, value;
	} cas_cache[VB_CAS_CACHE]; /* last value we wrote per address */
	struct vb_repair repair[VB_SQ_DEPTH];
	uint32_t nrepair;

	uint32_t rq_consumed; /* receives used since the last re-post */
	char peer_addr[FRR_TP_ADDR_MAX];
};

struct vb_ctx {
	struct frr_tp_ctx base;
	struct ibv_context **devs; /* rdma_get_devices(), freed at close */
	struct ibv_context *verbs; /* the chosen device (librdmacm's) */
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct rdma_event_channel *lch;
	struct rdma_cm_id *listen_id;

	char devname[IBV_SYSFS_NAME_MAX];
	uint8_t port;
	int gid_index;
	enum ibv_mtu active_mtu;
	int link_layer;
	int numa_node; /* -1: unknown */
	int u64_cas;   /* peers must write counters into us with atomics */
	int rd_atom;   /* atomics in flight per QP (both directions) */
	uint32_t max_sge;
	struct sockaddr_in bind_sa; /* our IP, listener port */
	char addr[FRR_TP_ADDR_MAX]; /* "IP:port" */
	char desc[128];		    /* frr_tp_device_name() */

	/* endpoint slots: cfg.max_eps of them; of these at most max_full
	 * (<= VB_MAX_FULL, limited by the device's max_cqe) may be full
	 * (have work requests whose completions land in our CQs); a
	 * no-notify peer's accepted endpoint is not */
	int nslots, max_full, nfull;
	struct vb_ep **eps;
	uint8_t *gens;
	struct vb_mr *mrs; /* every registered region, freed at close */

	/* user completions reaped while waiting for SQ space or a flush */
	struct frr_tp_wc *stash;
	uint32_t stash_head, stash_tail, stash_cap;

	/* REQ nonces already accepted (user thread: vb_ep_accept) */
	unsigned char seen[VB_SEEN_NONCES][FRR_AUTH_NONCE_LEN];
	unsigned nseen;
};

static inline struct vb_ctx *vb_ctx_of(struct frr_tp_ctx *c)
{
	return container_of(c, struct vb_ctx, base);
}

static inline struct vb_ep *vb_ep_of(struct frr_tp_ep *e)
{
	return container_of(e, struct vb_ep, base);
}

static inline struct vb_mr *vb_mr_of(const struct frr_tp_mr *m)
{
	return container_of(m, struct vb_mr, base);
}

/* One GID table entry as sysfs shows it. */
enum vb_gid_type { VB_GID_NONE = 0, VB_GID_V1 = 1, VB_GID_V2 = 2 };
struct vb_gid {
	uint8_t raw[16];
	enum vb_gid_type type;
	char ndev[32];	   /* netdev, "" for IB */
	int is_ipv4;	   /* ::ffff:a.b.c.d */
	struct in_addr ip; /* when is_ipv4 */
};

/* verbs_setup.c */
/* 0 when entry idx exists and is non-zero, else -ENOENT. */
int vb_gid_read(const char *dev, int port, int idx, struct vb_gid *g);
const char *vb_gid_type_str(enum vb_gid_type t);
int vb_gid_str(const struct vb_gid *g, char *buf, size_t len);
int vb_numa_node(const char *dev); /* -1 when unknown */
const char *vb_mtu_str(enum ibv_mtu mtu);
/* verbs_device.c: the device and port (first ACTIVE one, or cfg's /
 * FLEXRR_DEVICE), then the GID and bind address; errors name the fix. */
int vb_pick_device(struct vb_ctx *c, const struct frr_tp_config *cfg,
		   struct ibv_port_attr *pa);
int vb_pick_gid(struct vb_ctx *c, const struct frr_tp_config *cfg,
		const struct ibv_port_attr *pa);
int vb_open(const struct frr_tp_config *cfg, struct frr_tp_ctx **out);
void vb_close(struct frr_tp_ctx *ctx);

/* verbs_cm.c */
/* RC QP attributes (docs/verbs.md): ack timeout 4.096 us * 2^14 = 67 ms, 7
 * transport retries (a silent peer is detected in about 0.5 s), infinite
 * RNR retries (a target that does not poll notifications stalls the writer,
 * whose SQ-full and flush waits then time out), RNR delay 0.64 ms. */
#define VB_ACK_TIMEOUT 14
#define VB_RETRY_CNT 7
#define VB_RNR_RETRY 7
#define VB_MIN_RNR_TIMER 12

/* verbs_qp.c: an endpoint with its RC QP (INIT after vb_qp_setup; RTR/RTS
 * for the peer's MTU), and its teardown. */
struct vb_ep *vb_ep_alloc(struct vb_ctx *c, int full);
void vb_ep_teardown(struct vb_ep *e);
int vb_qp_setup(struct vb_ep *e);
int vb_qp_rtr_rts(struct vb_ep *e, enum ibv_mtu peer_mtu);
void vb_log_connected(struct vb_ep *e, enum ibv_mtu peer_mtu);

int vb_ep_connect(struct frr_tp_ctx *ctx, const struct frr_tp_addr *peer,
		  int timeout_ms, struct frr_tp_ep **ep);
int vb_ep_accept(struct frr_tp_ctx *ctx, int timeout_ms, struct frr_tp_ep **ep);
void vb_ep_close(struct frr_tp_ep *ep);
int vb_ep_alive(struct frr_tp_ep *ep);
/* Read pending CM events of ep without blocking; marks it dead on a
 * disconnect.  Returns ep->err. */
int vb_ep_check_cm(struct vb_ep *e);
void vb_ep_fail(struct vb_ep *e, int err);

/* verbs_datapath.c */
int vb_post_recvs(struct vb_ep *e, uint32_t n);
int vb_rmr_import(struct frr_tp_ep *ep, const struct frr_tp_desc *desc,
		  struct frr_tp_rmr **rmr);
void vb_rmr_release(struct frr_tp_rmr *rmr);
int vb_write(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr, size_t loff,
	     struct frr_tp_rmr *rmr, size_t roff, size_t len, uint64_t wr_id,
	     unsigned flags);
int vb_write_u64(struct frr_tp_ep *ep, struct frr_tp_rmr *rmr, size_t roff,
		 uint64_t value, uint64_t wr_id, unsigned flags);
int vb_write_notify(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr,
		    size_t loff, struct frr_tp_rmr *rmr, size_t roff,
		    size_t len, uint32_t imm, uint64_t wr_id, unsigned flags);
int vb_poll(struct frr_tp_ctx *ctx, struct frr_tp_wc *wc, int max);
int vb_poll_notify(struct frr_tp_ctx *ctx, struct frr_tp_notify *n, int max);
int vb_flush(struct frr_tp_ep *ep, int timeout_ms);

#endif /* FLEXRR_VERBS_H */
