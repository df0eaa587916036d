/* SPDX-License-Identifier: MIT */
/*
 * Internal contract between the generic transport layer (transport.c) and its
 * backends (shm/, verbs/).  Backends provide a const struct frr_tp_ops filled
 * with designated initializers; frr_tp_open copies it into the ctx once and
 * fills the entries left NULL with defaults (tp_defaults.c, as rdma-core's
 * dummy ops): calls that do something return -EOPNOTSUPP ("not supported"),
 * releases do nothing, ep_alive says 1, device_name gives the backend's
 * name.  So the generic layer calls every entry without a NULL test.  Only
 * name and open are required; available is asked before any ctx exists
 * (NULL = always).  Backend objects embed the generic object first and
 * recover themselves with container_of.
 *
 * The generic layer validates arguments before dispatch (NULL pointers,
 * descriptor magic/check/job token/owner/backend, offsets and lengths against
 * both regions), so backends may assume them valid.
 */
#ifndef FLEXRR_TRANSPORT_IMPL_H
#define FLEXRR_TRANSPORT_IMPL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "flexrr/base.h" /* frr_now_ms: deadlines of blocking calls */
#include "flexrr/transport.h"

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr)-offsetof(type, member)))
#endif

#define FRR_TP_ERRBUF 512

/* Internal: built with the library, so no size field (never crosses the
 * library boundary). */
struct frr_tp_ops {
	const char *name;

	/* Backend allocates its ctx (embedding struct frr_tp_ctx) and fills
	 * *ctx; the generic layer then sets ops/cfg. */
	int (*open)(const struct frr_tp_config *cfg, struct frr_tp_ctx **ctx);
	void (*close)(struct frr_tp_ctx *ctx);
	int (*addr_get)(struct frr_tp_ctx *ctx, struct frr_tp_addr *addr);
	const char *(*device_name)(const struct frr_tp_ctx *ctx);

	/* Must set mr->ptr, mr->len, mr->access, mr->region_id and, for
	 * verbs, mr->remote_addr / mr->rkey / mr->lkey. */
	int (*mr_alloc)(struct frr_tp_ctx *ctx, size_t len, unsigned access,
			struct frr_tp_mr **mr);
	void (*mr_free)(struct frr_tp_mr *mr);

	int (*ep_connect)(struct frr_tp_ctx *ctx,
			  const struct frr_tp_addr *peer, int timeout_ms,
			  struct frr_tp_ep **ep);
	int (*ep_accept)(struct frr_tp_ctx *ctx, int timeout_ms,
			 struct frr_tp_ep **ep);
	void (*ep_close)(struct frr_tp_ep *ep);
	int (*ep_alive)(struct frr_tp_ep *ep);

	int (*rmr_import)(struct frr_tp_ep *ep, const struct frr_tp_desc *desc,
			  struct frr_tp_rmr **rmr);
	void (*rmr_release)(struct frr_tp_rmr *rmr);

	int (*write)(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr,
		     size_t loff, struct frr_tp_rmr *rmr, size_t roff,
		     size_t len, uint64_t wr_id, unsigned flags);
	int (*write_u64)(struct frr_tp_ep *ep, struct frr_tp_rmr *rmr,
			 size_t roff, uint64_t value, uint64_t wr_id,
			 unsigned flags);
	int (*write_notify)(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr,
			    size_t loff, struct frr_tp_rmr *rmr, size_t roff,
			    size_t len, uint32_t imm, uint64_t wr_id,
			    unsigned flags);
	int (*poll)(struct frr_tp_ctx *ctx, struct frr_tp_wc *wc, int max);
	int (*poll_notify)(struct frr_tp_ctx *ctx, struct frr_tp_notify *n,
			   int max);
	int (*flush)(struct frr_tp_ep *ep, int timeout_ms);
	/* frr_tp_rmr_direct, range checked by the caller; NULL: none */
	void *(*rmr_direct)(struct frr_tp_rmr *rmr, size_t roff);
	/* 1 when the backend can open a context on this host now (a device
	 * is up); NULL = always. */
	int (*available)(void);
};

struct frr_tp_ctx {
	struct frr_tp_ops ops; /* the backend's, defaults filled in (open) */
	struct frr_tp_config cfg;
	uint32_t next_region_id;
	char errbuf[FRR_TP_ERRBUF];
};

struct frr_tp_mr {
	struct frr_tp_ctx *ctx;
	void *ptr;
	size_t len;
	unsigned access;
	uint32_t region_id;
	uint64_t remote_addr; /* verbs */
	uint32_t rkey;	      /* verbs */
	uint32_t lkey;	      /* verbs */
};

struct frr_tp_ep {
	struct frr_tp_ctx *ctx;
	int peer_rank;
	/* set by the backend: one side asked for FRR_TP_CFG_NO_NOTIFY */
	int no_notify;
};

struct frr_tp_rmr {
	struct frr_tp_ep *ep;
	struct frr_tp_desc desc; /* validated copy */
};

extern const struct frr_tp_ops frr_tp_shm_ops;
#ifdef FLEXRR_HAVE_VERBS
extern const struct frr_tp_ops frr_tp_verbs_ops;
/* 1 when at least one verbs device with an ACTIVE port exists. */
int frr_tp_verbs_available(void);
#endif

/* Record the error text in ctx->errbuf and log it (frr_log error level).
 * Returns err so callers can 'return frr_tp_err(ctx, -EINVAL, ...)'. */
int frr_tp_err(struct frr_tp_ctx *ctx, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What to do about a peer that did not answer a connection in time: the
 * config's timeout_hint, or the API's words. */
const char *frr_tp_timeout_hint(const struct frr_tp_ctx *ctx);
const char *frr_tp_wait_hint(const struct frr_tp_ctx *ctx);
const char *frr_tp_doctor_hint(const struct frr_tp_ctx *ctx);
/* The config's backend_hint and device_hint, or the API's words (they
 * take the config: a failed open has no ctx yet). */
const char *frr_tp_backend_hint(const struct frr_tp_config *cfg);
const char *frr_tp_device_hint(const struct frr_tp_config *cfg);

/* Fill o's NULL entries (but name, open, available) with the defaults of
 * tp_defaults.c: -EOPNOTSUPP "X is not supported by backend Y; <the
 * config's backend_hint>" for calls, nothing for releases. */
void frr_tp_fill_defaults(struct frr_tp_ops *o);

/* Descriptor integrity check (also used by tests to forge descriptors). */
uint64_t frr_tp_desc_check(const struct frr_tp_desc *d);

#endif /* FLEXRR_TRANSPORT_IMPL_H */
