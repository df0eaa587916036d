// SPDX-License-Identifier: MIT
/*
 * The entries a backend leaves NULL, filled in once when frr_tp_open copies
 * its table into the ctx (as rdma-core's libibverbs/dummy_ops.c): the
 * generic layer then calls every entry without a NULL test on the data path.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "transport_impl.h"

static int unsupported(struct frr_tp_ctx *ctx, const char *what)
{
	return frr_tp_err(ctx, -EOPNOTSUPP,
			  "%s is not supported by backend %s; %s", what,
			  ctx->ops.name ? ctx->ops.name : "?",
			  frr_tp_backend_hint(&ctx->cfg));
}

static void no_close(struct frr_tp_ctx *ctx)
{
	(void)ctx;
}
static int no_addr_get(struct frr_tp_ctx *ctx, struct frr_tp_addr *addr)
{
	(void)addr;
	return unsupported(ctx, "addr_get");
}
static const char *no_device_name(const struct frr_tp_ctx *ctx)
{
	return ctx->ops.name ? ctx->ops.name : "?";
}
static int no_mr_alloc(struct frr_tp_ctx *ctx, size_t len, unsigned access,
		       struct frr_tp_mr **mr)
{
	(void)len, (void)access, (void)mr;
	return unsupported(ctx, "mr_alloc");
}
static void no_mr_free(struct frr_tp_mr *mr)
{
	(void)mr;
}
static int no_ep_connect(struct frr_tp_ctx *ctx, const struct frr_tp_addr *peer,
			 int timeout_ms, struct frr_tp_ep **ep)
{
	(void)peer, (void)timeout_ms, (void)ep;
	return unsupported(ctx, "ep_connect");
}
static int no_ep_accept(struct frr_tp_ctx *ctx, int timeout_ms,
			struct frr_tp_ep **ep)
{
	(void)timeout_ms, (void)ep;
	return unsupported(ctx, "ep_accept");
}
static void no_ep_close(struct frr_tp_ep *ep)
{
	(void)ep;
}
/* a backend that cannot tell: the peer counts as alive until an op fails */
static int no_ep_alive(struct frr_tp_ep *ep)
{
	(void)ep;
	return 1;
}
static int no_rmr_import(struct frr_tp_ep *ep, const struct frr_tp_desc *desc,
			 struct frr_tp_rmr **rmr)
{
	(void)desc, (void)rmr;
	return unsupported(ep->ctx, "rmr_import");
}
static void no_rmr_release(struct frr_tp_rmr *rmr)
{
	(void)rmr;
}
static int no_write(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr,
		    size_t loff, struct frr_tp_rmr *rmr, size_t roff,
		    size_t len, uint64_t wr_id, unsigned flags)
{
	(void)lmr, (void)loff, (void)rmr, (void)roff, (void)len, (void)wr_id,
	    (void)flags;
	return unsupported(ep->ctx, "write");
}
static int no_write_u64(struct frr_tp_ep *ep, struct frr_tp_rmr *rmr,
			size_t roff, uint64_t value, uint64_t wr_id,
			unsigned flags)
{
	(void)rmr, (void)roff, (void)value, (void)wr_id, (void)flags;
	return unsupported(ep->ctx, "write_u64");
}
static int no_write_notify(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr,
			   size_t loff, struct frr_tp_rmr *rmr, size_t roff,
			   size_t len, uint32_t imm, uint64_t wr_id,
			   unsigned flags)
{
	(void)lmr, (void)loff, (void)rmr, (void)roff, (void)len, (void)imm,
	    (void)wr_id, (void)flags;
	return unsupported(ep->ctx, "write_notify");
}
static int no_poll(struct frr_tp_ctx *ctx, struct frr_tp_wc *wc, int max)
{
	(void)wc, (void)max;
	return unsupported(ctx, "poll");
}
static int no_poll_notify(struct frr_tp_ctx *ctx, struct frr_tp_notify *n,
			  int max)
{
	(void)n, (void)max;
	return unsupported(ctx, "poll_notify");
}
static int no_flush(struct frr_tp_ep *ep, int timeout_ms)
{
	(void)timeout_ms;
	return unsupported(ep->ctx, "flush");
}

#define FILL(o, fn)                        \
	do {                               \
		if (!(o)->fn)              \
			(o)->fn = no_##fn; \
	} while (0)

void frr_tp_fill_defaults(struct frr_tp_ops *o)
{
	FILL(o, close);
	FILL(o, addr_get);
	FILL(o, device_name);
	FILL(o, mr_alloc);
	FILL(o, mr_free);
	FILL(o, ep_connect);
	FILL(o, ep_accept);
	FILL(o, ep_close);
	FILL(o, ep_alive);
	FILL(o, rmr_import);
	FILL(o, rmr_release);
	FILL(o, write);
	FILL(o, write_u64);
	FILL(o, write_notify);
	FILL(o, poll);
	FILL(o, poll_notify);
	FILL(o, flush);
}
