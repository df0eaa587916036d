/* SPDX-License-Identifier: MIT */
/*
 * shm backend internals: processes of one host write into each other's
 * memfd-backed regions.
 *
 * Set-up: contexts, regions and imports in shm_setup.c; the service thread
 * and endpoints in shm_cm.c; the messages they exchange in shm_msg.c.  Each
 * ctx listens on an abstract UNIX socket (its address) served by one
 * service thread.  The thread accepts connections
 * and reads their first message: HELLO opens an endpoint (queued for
 * frr_tp_ep_accept), IMPORT asks for a region's memfd, answered over
 * SCM_RIGHTS.  The thread also watches every endpoint socket: a hang-up
 * (peer closed the ep or exited) sets ep->gone, which the data path reads
 * with one relaxed load.  Memory is memfd only, so it vanishes with the last
 * process that maps it, crash or not.
 *
 * Data path (shm_datapath.c): memcpy into the mapped remote region, counters
 * are release stores, notifications go through a per-endpoint SPSC ring in
 * the target's memory.  No syscalls, locks or allocation per write.
 */
#ifndef FLEXRR_SHM_H
#define FLEXRR_SHM_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "../transport_impl.h"

#define SHM_RING_SLOTS 1024u /* power of two */
#define SHM_CQ_SLOTS 8192u   /* power of two */
/* hellos waiting for accept: at least this many, and one per endpoint the
 * ctx may hold (frr_tp_config.max_eps), so -n is never limited by the queue */
#define SHM_ACCEPTQ 64
#define SHM_MSG_MAGIC 0x46525348u /* "FRSH" */

struct shm_note {
	int32_t src_rank;
	uint32_t imm;
};

/*
 * Inbound notification ring of one endpoint, in a memfd of the target (the
 * consumer) mapped by the writer (the producer).  Only the producer writes
 * tail and slots; only the consumer writes head.  Producer: fill slot, then
 * release-store tail.  Consumer: acquire-load tail, read slots, then
 * release-store head (which frees the slots for the producer).  Indices run
 * freely; tail - head <= SHM_RING_SLOTS, checked by the consumer since the
 * producer is another process.
 */
struct shm_ring {
	alignas(64) _Atomic uint64_t tail;
	alignas(64) _Atomic uint64_t head;
	alignas(64) struct shm_note slot[SHM_RING_SLOTS];
};

/*
 * Trailing control page of a REMOTE_WRITE region, written only by the
 * owner: alive = 1 while registered, 0 once freed; writers check it with a
 * relaxed load so writes to a freed region fail instead of landing unseen.
 */
struct shm_region_ctl {
	_Atomic uint32_t alive;
	uint32_t region_id;
};

struct shm_ctx {
	struct frr_tp_ctx base;
	int lfd;     /* listening socket (service thread only after open) */
	int wake_fd; /* eventfd: tells the service thread to exit */
	int epfd;
	pthread_t svc;
	char addr[FRR_TP_ADDR_MAX]; /* "@name" = abstract socket */
	/* the service thread's own copy of the job: the generic layer writes
	 * base.cfg after open, while the thread already runs */
	struct frr_job_secret secret;
	int rank, nranks;
	uint64_t next_ep_serial;

	/* lock guards: regions[], acceptq[], eps[] changes (readers in the
	 * user thread may read eps[] without it: the user thread is the only
	 * writer). */
	pthread_mutex_t lock;
	pthread_cond_t acceptq_cond;
	struct shm_pending {
		int fd;
		int rank;
		int ring_fd;
		unsigned flags; /* the HELLO's */
		char addr[FRR_TP_ADDR_MAX];
	} * acceptq;
	int acceptq_n, acceptq_cap;
	/* handshakes in progress (service thread only; hs_cap slots) */
	struct shm_hs *hs;
	int hs_cap;
	struct shm_mr **regions;
	size_t nregions, capregions;
	struct shm_ep **eps;
	int neps, capeps;
	int notify_next; /* round-robin start of poll_notify */

	/* completions of signaled writes: user thread only */
	struct frr_tp_wc *cq;
	uint32_t cq_head, cq_tail;
};

struct shm_mr {
	struct frr_tp_mr base;
	int fd;		/* memfd, -1 for LOCAL-only regions */
	size_t map_len; /* data (page rounded) + control page */
	struct shm_region_ctl *ctl;
};

struct shm_ep {
	struct frr_tp_ep base;
	int fd; /* connected socket: hang-up = peer gone */
	uint64_t serial;
	_Atomic int gone; /* set by the service thread */
	char peer_addr[FRR_TP_ADDR_MAX];
	struct shm_ring *in;  /* my inbound ring (peer produces) */
	struct shm_ring *out; /* peer's inbound ring (I produce) */
	uint64_t in_head;     /* consumer copy of in->head */
	uint64_t out_tail;    /* producer copy of out->tail */
	uint64_t out_head_cache;
};

struct shm_rmr {
	struct frr_tp_rmr base;
	char *data;
	size_t map_len;
	struct shm_region_ctl *ctl;
};

/* ---- messages between contexts (shm_msg.c) ---- */
enum shm_msg_type {
	SHM_HELLO = 1,	/* connector -> acceptor, carries connector's ring */
	SHM_WELCOME,	/* acceptor -> connector, carries acceptor's ring */
	SHM_REJECT,	/* acceptor -> connector: why in 'why' */
	SHM_IMPORT,	/* importer -> owner: region_id */
	SHM_IMPORT_OK,	/* owner -> importer, carries the region memfd */
	SHM_IMPORT_ERR, /* owner -> importer: err + why */
	SHM_CHALLENGE,	/* acceptor -> connector: nonce and its proof */
	SHM_PROOF,	/* connector -> acceptor: its proof (+ ring on HELLO) */
	SHM_MSG_TYPES
};

/*
 * Every connection opens with a handshake (shm_auth.c): the acceptor checks
 * SO_PEERCRED (same uid or root) first; the connector sends HELLO or
 * IMPORT with its nonce (no fd), the acceptor answers CHALLENGE with its
 * nonce and MAC("shm acceptor"), the connector checks it and sends PROOF
 * with MAC("shm connector") and, for HELLO, its ring; only then does the
 * acceptor pass a memfd.  The secret never travels and no reply carries it.
 */
struct shm_msg {
	uint32_t magic;
	uint32_t type;
	unsigned char nonce[FRR_AUTH_NONCE_LEN];
	unsigned char mac[FRR_AUTH_MAC_LEN];
	int32_t rank;
	int32_t nranks;
	uint32_t region_id;
	int32_t err;
	uint32_t flags; /* HELLO: the connector's FRR_TP_CFG_* */
	uint32_t pad;
	uint64_t len;
	char addr[FRR_TP_ADDR_MAX];
	char why[160];
};

int shm_msg_send(int fd, const struct shm_msg *m, int pass_fd);
/* Judge n received bytes: 0 and *out = a copy with its strings ended when
 * they are one well-formed message, else -EPROTO. */
int shm_msg_parse(const void *buf, size_t n, struct shm_msg *out);
/* One message within timeout_ms; *got_fd gets a passed fd or -1.
 * -ECONNRESET when the other side closed, -ETIMEDOUT when it said nothing. */
int shm_msg_recv(int fd, struct shm_msg *m, int *got_fd, int timeout_ms);
void shm_msg_init(struct shm_msg *m, struct shm_ctx *c, uint32_t type);
void shm_reply_error(int fd, struct shm_ctx *c, uint32_t type, int err,
		     const char *why);
int shm_sockaddr_of(const char *addr, struct sockaddr_un *sa, socklen_t *salen);
/* Connect to an shm address, retrying while the listener's backlog is full;
 * the socket or a negative errno. */
int shm_dial(const char *addr, int timeout_ms);

/* ---- the handshake (shm_auth.c) ---- */
/* Connector: req is HELLO or IMPORT (rank etc. filled), sent to the ctx of
 * peer_rank on fd; pass_fd goes with the proof.  0 and *ans = the
 * acceptor's answer (WELCOME/IMPORT_OK with *got_fd, or REJECT/IMPORT_ERR
 * with why; also when the acceptor fails to prove the secret), else a
 * negative errno (no answer in time, hang-up). */
int shm_auth_connect(struct shm_ctx *c, int fd, int peer_rank,
		     struct shm_msg *req, int pass_fd, int timeout_ms,
		     struct shm_msg *ans, int *got_fd);
/*
 * Acceptor: a connection's handshake, advanced by the service thread as
 * its messages arrive (never waiting on one), so a client that connects
 * and says nothing holds a slot until its deadline, not the thread: the
 * ranks' own connections are served meanwhile.  States, in order:
 * SHM_HS_REQUEST (waiting for HELLO or IMPORT), SHM_HS_PROOF (challenge
 * sent, waiting for the proof of the secret).
 */
enum shm_hs_state { SHM_HS_FREE, SHM_HS_REQUEST, SHM_HS_PROOF };
struct shm_hs {
	enum shm_hs_state state;
	int fd;
	pid_t pid;
	long long deadline_ms;
	struct shm_msg q, ch; /* the request, our challenge */
};
/* A new connection (peer credentials checked here): 0 with h waiting for
 * the request, or a negative errno with the peer answered and logged (the
 * caller closes fd). */
int shm_auth_begin(struct shm_ctx *c, int fd, struct shm_hs *h);
/* fd is readable: 1 = authenticated (h->q the request, *got_fd its fd or
 * -1), 0 = waiting for the next message, < 0 = refused or broken (answered
 * and logged; the caller closes h->fd). */
int shm_auth_step(struct shm_ctx *c, struct shm_hs *h, int *got_fd);
/* h is past its deadline: answered, logged as a silent client (rate
 * limited); the caller closes h->fd. */
void shm_auth_expire(struct shm_ctx *c, struct shm_hs *h);
/* The refusal log is one budget per process (shm_auth.c): a context
 * counts itself in when it opens, and its service thread out as it exits;
 * the last one out says the refusals counted but not yet said. */
void shm_auth_ctx_opened(void);
void shm_auth_ctx_closing(struct shm_ctx *c);

/* ---- shared memory (shm_setup.c) ---- */
/* A new memfd of len bytes, mapped shared (*fd_out its fd): the mapping,
 * or NULL with *err set to a negative errno. */
/* populate: fault every page in now (MAP_POPULATE), else on first touch */
void *shm_memfd_map(const char *name, size_t len, int populate, int *fd_out,
		    int *err);
/* Map a memfd received from a peer after checking it is big enough: the
 * mapping, or NULL with *err set. */
void *shm_map_peer_fd(int fd, size_t need, int *err);
size_t shm_ring_map_len(void);
int shm_epoll_add(int epfd, int fd, uint32_t events, uint64_t tag);

/* ---- service thread and endpoints (shm_cm.c) ---- */
#define SHM_SVC_LISTEN 0 /* epoll tags of the service thread; endpoints */
#define SHM_SVC_WAKE 1	 /* use their serial (>= 16) */
#define SHM_SVC_AUTH ((uint64_t)1 << 62) /* | the slot of a handshake */
void *shm_service(void *arg);
int shm_ep_connect(struct frr_tp_ctx *ctx, const struct frr_tp_addr *peer,
		   int timeout_ms, struct frr_tp_ep **ep);
int shm_ep_accept(struct frr_tp_ctx *ctx, int timeout_ms,
		  struct frr_tp_ep **ep);
void shm_ep_close(struct frr_tp_ep *ep);
int shm_ep_alive(struct frr_tp_ep *ep);

#define shm_ctx_of(c) container_of(c, struct shm_ctx, base)
#define shm_ep_of(e) container_of(e, struct shm_ep, base)
#define shm_mr_of(m) container_of(m, struct shm_mr, base)
#define shm_rmr_of(r) container_of(r, struct shm_rmr, base)

size_t shm_page_round(size_t len);

int shm_write(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr, size_t loff,
	      struct frr_tp_rmr *rmr, size_t roff, size_t len, uint64_t wr_id,
	      unsigned flags);
void *shm_rmr_direct(struct frr_tp_rmr *rmr, size_t roff);
int shm_write_u64(struct frr_tp_ep *ep, struct frr_tp_rmr *rmr, size_t roff,
		  uint64_t value, uint64_t wr_id, unsigned flags);
int shm_write_notify(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr,
		     size_t loff, struct frr_tp_rmr *rmr, size_t roff,
		     size_t len, uint32_t imm, uint64_t wr_id, unsigned flags);
int shm_poll(struct frr_tp_ctx *ctx, struct frr_tp_wc *wc, int max);
int shm_poll_notify(struct frr_tp_ctx *ctx, struct frr_tp_notify *n, int max);
int shm_flush(struct frr_tp_ep *ep, int timeout_ms);

#endif /* FLEXRR_SHM_H */
