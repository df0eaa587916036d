// SPDX-License-Identifier: MIT
/*
 * Generic transport layer: validates every argument once, here, then
 * dispatches to the backend's const ops table.  Backends may assume valid
 * arguments (transport_impl.h).  The data-path checks are a handful of
 * compares on fields already in cache: no syscalls, no allocation.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flexrr/log.h"
#include "transport_impl.h"

/* The backends built into this library, by enum frr_tp_backend. */
static const struct frr_tp_ops *const backends[] = {
	[FRR_TP_BACKEND_SHM] = &frr_tp_shm_ops,
#ifdef FLEXRR_HAVE_VERBS
	[FRR_TP_BACKEND_VERBS] = &frr_tp_verbs_ops,
#endif
};
#define NBACKENDS (sizeof(backends) / sizeof(backends[0]))

int frr_tp_err(struct frr_tp_ctx *ctx, int err, const char *fmt, ...)
{
	char buf[FRR_TP_ERRBUF];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* a lost peer fails every write to it the same way: say it once */
	if (ctx && !strcmp(ctx->errbuf, buf))
		return err;
	if (ctx)
		snprintf(ctx->errbuf, sizeof(ctx->errbuf), "%s", buf);
	frr_err("transport: %s", buf);
	return err;
}

const char *frr_tp_timeout_hint(const struct frr_tp_ctx *ctx)
{
	return ctx->cfg.timeout_hint ? ctx->cfg.timeout_hint
				     : "is it calling frr_tp_ep_accept? pass a "
				       "longer timeout if it is busy";
}

const char *frr_tp_wait_hint(const struct frr_tp_ctx *ctx)
{
	return ctx->cfg.wait_hint ? ctx->cfg.wait_hint
				  : "is it polling its notifications? pass a "
				    "longer frr_tp_config.timeout_ms if it is "
				    "busy";
}

const char *frr_tp_backend_hint(const struct frr_tp_config *cfg)
{
	return cfg->backend_hint ? cfg->backend_hint
				 : "open the transport with another backend";
}

const char *frr_tp_device_hint(const struct frr_tp_config *cfg)
{
	return cfg->device_hint ? cfg->device_hint
				: "fix FLEXRR_DEVICE or frr_tp_config.device";
}

const char *frr_tp_doctor_hint(const struct frr_tp_ctx *ctx)
{
	return ctx->cfg.doctor_hint ? ctx->cfg.doctor_hint
				    : "'rdma link show' and 'ibv_devinfo -v' "
				      "show the devices, ports and GIDs";
}

const char *frr_tp_last_error(const struct frr_tp_ctx *ctx)
{
	return ctx ? ctx->errbuf : "no transport context";
}

/* FNV-1a over the descriptor's fields before 'check', then a final mix. */
uint64_t frr_tp_desc_check(const struct frr_tp_desc *d)
{
	uint64_t h = frr_fnv1a64(d, offsetof(struct frr_tp_desc, check), 0);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

const char *frr_tp_backend_name(enum frr_tp_backend b)
{
	switch (b) {
	case FRR_TP_BACKEND_AUTO:
		return "auto";
	case FRR_TP_BACKEND_SHM:
		return "shm";
	case FRR_TP_BACKEND_VERBS:
		return "verbs";
	}
	return "unknown";
}

int frr_tp_backend_parse(const char *name, enum frr_tp_backend *out)
{
	static const enum frr_tp_backend all[] = { FRR_TP_BACKEND_AUTO,
						   FRR_TP_BACKEND_SHM,
						   FRR_TP_BACKEND_VERBS };

	if (!name || !out)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!strcmp(name, frr_tp_backend_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	}
	return -EINVAL;
}

static const struct frr_tp_ops *built_in(enum frr_tp_backend b)
{
	return (size_t)b < NBACKENDS ? backends[b] : NULL;
}

/* Usable here and now: built in, and (if it can tell) a device is up. */
static int usable(const struct frr_tp_ops *ops)
{
	if (!ops)
		return 0;
	if (!ops->available)
		return 1;
	return ops->available();
}

int frr_tp_backend_available(enum frr_tp_backend b)
{
	return b == FRR_TP_BACKEND_AUTO || usable(built_in(b));
}

static const struct frr_tp_ops *backend_ops(enum frr_tp_backend b)
{
	if (b != FRR_TP_BACKEND_AUTO)
		return built_in(b);
	/* AUTO: verbs when a device is up, else shm */
	if (usable(built_in(FRR_TP_BACKEND_VERBS)))
		return built_in(FRR_TP_BACKEND_VERBS);
	return built_in(FRR_TP_BACKEND_SHM);
}

static const char *ops_name(const struct frr_tp_ctx *ctx)
{
	return ctx->ops.name ? ctx->ops.name : "?";
}

/* ---- context ---------------------------------------------------------- */

int frr_tp_open(const struct frr_tp_config *cfg, struct frr_tp_ctx **out)
{
	const struct frr_tp_ops *ops;
	struct frr_tp_ctx *ctx = NULL;
	struct frr_tp_config ncfg;
	int ret;

	if (!cfg || !out)
		return frr_tp_err(NULL, -EINVAL, "frr_tp_open: NULL argument");
	if (cfg->nranks < 1 || cfg->rank < 0 || cfg->rank >= cfg->nranks)
		return frr_tp_err(NULL, -EINVAL,
				  "frr_tp_open: rank %d outside job of %d "
				  "ranks; pass 0 <= rank < nranks",
				  cfg->rank, cfg->nranks);
	if (cfg->timeout_ms < 0)
		return frr_tp_err(NULL, -EINVAL,
				  "frr_tp_open: negative timeout %d ms",
				  cfg->timeout_ms);
	if (cfg->max_eps < 0 || cfg->max_eps > FRR_TP_MAX_EPS ||
	    (cfg->flags & ~(unsigned)FRR_TP_CFG_NO_NOTIFY))
		return frr_tp_err(NULL, -EINVAL,
				  "frr_tp_open: max_eps %d outside 0..%d or "
				  "unknown flags 0x%x",
				  cfg->max_eps, FRR_TP_MAX_EPS, cfg->flags);
	ops = backend_ops(cfg->backend);
	if (!ops) {
		if (cfg->backend == FRR_TP_BACKEND_VERBS)
			return frr_tp_err(NULL, -EOPNOTSUPP,
					  "backend verbs is not built into "
					  "this binary; %s",
					  frr_tp_backend_hint(cfg));
		return frr_tp_err(NULL, -EINVAL,
				  "frr_tp_open: unknown backend %d; use "
				  "shm, verbs or auto",
				  (int)cfg->backend);
	}
	/* backends get the normalized config (default timeout, resolved
	 * backend) and may start threads that read it */
	ncfg = *cfg;
	if (!ncfg.timeout_ms)
		ncfg.timeout_ms = 10000;
	if (!ncfg.max_eps)
		ncfg.max_eps = ncfg.nranks + 3;
	if (ncfg.backend == FRR_TP_BACKEND_AUTO)
		ncfg.backend = ops == &frr_tp_shm_ops ? FRR_TP_BACKEND_SHM
						      : FRR_TP_BACKEND_VERBS;
	ret = ops->open(&ncfg, &ctx);
	if (ret)
		return ret;
	ctx->ops = *ops;
	frr_tp_fill_defaults(&ctx->ops);
	ctx->cfg = ncfg;
	ctx->errbuf[0] = '\0';
	*out = ctx;
	return 0;
}

void frr_tp_close(struct frr_tp_ctx *ctx)
{
	if (ctx)
		ctx->ops.close(ctx);
}

enum frr_tp_backend frr_tp_backend_of(const struct frr_tp_ctx *ctx)
{
	return ctx ? ctx->cfg.backend : FRR_TP_BACKEND_AUTO;
}

const char *frr_tp_device_name(const struct frr_tp_ctx *ctx)
{
	if (!ctx)
		return "none";
	return ctx->ops.device_name(ctx);
}

int frr_tp_addr_get(struct frr_tp_ctx *ctx, struct frr_tp_addr *addr)
{
	if (!ctx || !addr)
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_addr_get: NULL "
				  "argument");
	return ctx->ops.addr_get(ctx, addr);
}

/* ---- memory ----------------------------------------------------------- */

int frr_tp_mr_alloc(struct frr_tp_ctx *ctx, size_t len, unsigned access,
		    struct frr_tp_mr **mr)
{
	struct frr_tp_mr *m = NULL;
	int ret;

	if (!ctx || !mr)
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_mr_alloc: NULL "
				  "argument");
	if (len == 0 || len > ((size_t)1 << 46))
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_mr_alloc: length %zu out of range "
				  "(1 byte .. 64 TiB)",
				  len);
	if (access &
	    ~(unsigned)(FRR_TP_ACCESS_REMOTE_WRITE | FRR_TP_ACCESS_ON_TOUCH))
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_mr_alloc: unknown access flags 0x%x",
				  access);
	ret = ctx->ops.mr_alloc(ctx, len, access, &m);
	if (ret)
		return ret;
	m->ctx = ctx;
	*mr = m;
	return 0;
}

void frr_tp_mr_free(struct frr_tp_mr *mr)
{
	if (mr)
		mr->ctx->ops.mr_free(mr);
}

void *frr_tp_mr_ptr(const struct frr_tp_mr *mr)
{
	return mr ? mr->ptr : NULL;
}

size_t frr_tp_mr_len(const struct frr_tp_mr *mr)
{
	return mr ? mr->len : 0;
}

int frr_tp_mr_export(const struct frr_tp_mr *mr, struct frr_tp_desc *desc)
{
	struct frr_tp_desc d;

	if (!mr || !desc)
		return frr_tp_err(mr ? mr->ctx : NULL, -EINVAL,
				  "frr_tp_mr_export: NULL argument");
	/* zero first: padding must not leak stack bytes nor change 'check' */
	memset(&d, 0, sizeof(d));
	d.magic = FRR_TP_DESC_MAGIC;
	d.backend = (uint32_t)mr->ctx->cfg.backend;
	d.job_token = mr->ctx->cfg.job_token;
	d.owner_rank = mr->ctx->cfg.rank;
	d.region_id = mr->region_id;
	d.len = mr->len;
	d.remote_addr = mr->remote_addr;
	d.rkey = mr->rkey;
	d.access = mr->access;
	d.check = frr_tp_desc_check(&d);
	*desc = d;
	return 0;
}

/* ---- endpoints -------------------------------------------------------- */

int frr_tp_ep_connect(struct frr_tp_ctx *ctx, const struct frr_tp_addr *peer,
		      int timeout_ms, struct frr_tp_ep **ep)
{
	struct frr_tp_ep *e = NULL;
	int ret;

	if (!ctx || !peer || !ep)
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_ep_connect: NULL "
				  "argument");
	if (peer->job_token != ctx->cfg.job_token)
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_ep_connect: address of rank %d "
				  "belongs to job %016llx, not this job "
				  "%016llx; exchange addresses within one job",
				  (int)peer->rank,
				  (unsigned long long)peer->job_token,
				  (unsigned long long)ctx->cfg.job_token);
	if (peer->backend != (uint32_t)ctx->cfg.backend)
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_ep_connect: address of rank %d is "
				  "for backend %s, this context uses %s; "
				  "open every rank on the same backend",
				  (int)peer->rank,
				  frr_tp_backend_name(peer->backend),
				  ops_name(ctx));
	if (peer->rank < 0 || peer->rank >= ctx->cfg.nranks ||
	    peer->rank == ctx->cfg.rank)
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_ep_connect: peer rank %d invalid "
				  "(own rank %d, job of %d)",
				  (int)peer->rank, ctx->cfg.rank,
				  ctx->cfg.nranks);
	if (memchr(peer->str, '\0', sizeof(peer->str)) == NULL)
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_ep_connect: peer "
				  "address is not a string");
	if (timeout_ms <= 0)
		timeout_ms = ctx->cfg.timeout_ms;
	ret = ctx->ops.ep_connect(ctx, peer, timeout_ms, &e);
	if (ret)
		return ret;
	e->ctx = ctx;
	*ep = e;
	return 0;
}

int frr_tp_ep_accept(struct frr_tp_ctx *ctx, int timeout_ms,
		     struct frr_tp_ep **ep)
{
	struct frr_tp_ep *e = NULL;
	int ret;

	if (!ctx || !ep)
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_ep_accept: NULL "
				  "argument");
	/* the backends see 0 only for FRR_TP_NOWAIT */
	if (timeout_ms == FRR_TP_NOWAIT)
		timeout_ms = 0;
	else if (timeout_ms <= 0)
		timeout_ms = ctx->cfg.timeout_ms;
	ret = ctx->ops.ep_accept(ctx, timeout_ms, &e);
	if (ret)
		return ret;
	e->ctx = ctx;
	*ep = e;
	return 0;
}

void frr_tp_ep_close(struct frr_tp_ep *ep)
{
	if (ep)
		ep->ctx->ops.ep_close(ep);
}

int frr_tp_ep_peer_rank(const struct frr_tp_ep *ep)
{
	return ep ? ep->peer_rank : -1;
}

int frr_tp_ep_alive(struct frr_tp_ep *ep)
{
	if (!ep)
		return 0;
	return ep->ctx->ops.ep_alive(ep);
}

static int remaining_ms(long long deadline)
{
	long long left = deadline - frr_now_ms();

	return left > 0 ? (int)left : 1;
}

static void close_eps(struct frr_tp_ep **eps, int nranks)
{
	for (int r = 0; r < nranks; r++) {
		frr_tp_ep_close(eps[r]);
		eps[r] = NULL;
	}
}

int frr_tp_connect_all(struct frr_tp_ctx *ctx, const struct frr_tp_addr *addrs,
		       int nranks, int timeout_ms, struct frr_tp_ep **eps)
{
	long long deadline;
	int me, ret = 0;

	if (!ctx || !addrs || !eps)
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_connect_all: NULL "
				  "argument");
	if (nranks != ctx->cfg.nranks)
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_connect_all: %d addresses for a job "
				  "of %d ranks",
				  nranks, ctx->cfg.nranks);
	if (timeout_ms <= 0)
		timeout_ms = ctx->cfg.timeout_ms;
	deadline = frr_now_ms() + timeout_ms;
	me = ctx->cfg.rank;
	for (int r = 0; r < nranks; r++)
		eps[r] = NULL;
	/* Waits only go towards lower ranks, so the mesh cannot deadlock. */
	for (int r = 0; r < me; r++) {
		if (addrs[r].rank != r) {
			ret = frr_tp_err(ctx, -EINVAL,
					 "frr_tp_connect_all: addrs[%d] holds "
					 "rank %d's address; index by rank",
					 r, (int)addrs[r].rank);
			goto close_all;
		}
		ret = frr_tp_ep_connect(ctx, &addrs[r], remaining_ms(deadline),
					&eps[r]);
		if (ret)
			goto close_all;
	}
	for (int n = me + 1; n < nranks; n++) {
		struct frr_tp_ep *ep = NULL;
		int pr;

		ret = frr_tp_ep_accept(ctx, remaining_ms(deadline), &ep);
		if (ret)
			goto close_all;
		pr = ep->peer_rank;
		if (pr <= me || pr >= nranks || eps[pr]) {
			frr_tp_ep_close(ep);
			ret = frr_tp_err(ctx, -EPROTO,
					 "frr_tp_connect_all: rank %d accepted "
					 "an unexpected connection from rank "
					 "%d; are two jobs sharing a token?",
					 me, pr);
			goto close_all;
		}
		eps[pr] = ep;
	}
	return 0;

close_all:
	close_eps(eps, nranks);
	return ret;
}

/* ---- remote regions --------------------------------------------------- */

static int desc_validate(struct frr_tp_ep *ep, const struct frr_tp_desc *d)
{
	struct frr_tp_ctx *ctx = ep->ctx;

	if (d->magic != FRR_TP_DESC_MAGIC)
		return frr_tp_err(ctx, -EINVAL,
				  "import: not a flexrr region descriptor "
				  "(magic %08x); pass what frr_tp_mr_export "
				  "produced",
				  d->magic);
	if (d->check != frr_tp_desc_check(d))
		return frr_tp_err(ctx, -EINVAL,
				  "import: descriptor integrity check failed "
				  "(corrupted or forged); re-send the "
				  "exported descriptor unchanged");
	if (d->job_token != ctx->cfg.job_token)
		return frr_tp_err(ctx, -EPERM,
				  "import: descriptor belongs to job %016llx, "
				  "this job is %016llx; descriptors are only "
				  "valid within their job",
				  (unsigned long long)d->job_token,
				  (unsigned long long)ctx->cfg.job_token);
	if (d->backend != (uint32_t)ctx->cfg.backend)
		return frr_tp_err(ctx, -EINVAL,
				  "import: descriptor is for backend %s, this "
				  "context uses %s",
				  frr_tp_backend_name(d->backend),
				  ops_name(ctx));
	if (d->owner_rank != ep->peer_rank)
		return frr_tp_err(ctx, -EPERM,
				  "import: descriptor is owned by rank %d but "
				  "the endpoint goes to rank %d; import it "
				  "over an endpoint to its owner",
				  (int)d->owner_rank, ep->peer_rank);
	if (!(d->access & FRR_TP_ACCESS_REMOTE_WRITE))
		return frr_tp_err(ctx, -EACCES,
				  "import: region %u of rank %d was "
				  "registered without FRR_TP_ACCESS_REMOTE_"
				  "WRITE; peers may not write into it",
				  d->region_id, (int)d->owner_rank);
	if (d->len == 0)
		return frr_tp_err(ctx, -EINVAL,
				  "import: descriptor of "
				  "length 0");
	return 0;
}

int frr_tp_rmr_import(struct frr_tp_ep *ep, const struct frr_tp_desc *desc,
		      struct frr_tp_rmr **rmr)
{
	struct frr_tp_rmr *r = NULL;
	int ret;

	if (!ep || !desc || !rmr)
		return frr_tp_err(ep ? ep->ctx : NULL, -EINVAL,
				  "frr_tp_rmr_import: NULL argument");
	ret = desc_validate(ep, desc);
	if (ret)
		return ret;
	ret = ep->ctx->ops.rmr_import(ep, desc, &r);
	if (ret)
		return ret;
	r->ep = ep;
	r->desc = *desc;
	*rmr = r;
	return 0;
}

void frr_tp_rmr_release(struct frr_tp_rmr *rmr)
{
	if (rmr)
		rmr->ep->ctx->ops.rmr_release(rmr);
}

size_t frr_tp_rmr_len(const struct frr_tp_rmr *rmr)
{
	return rmr ? (size_t)rmr->desc.len : 0;
}

/* ---- data path -------------------------------------------------------- */

/* off + len <= size without overflow */
static inline int in_range(size_t off, size_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int __attribute__((noinline, cold))
bad_args(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr, size_t loff,
	 struct frr_tp_rmr *rmr, size_t roff, size_t len, int need_lmr,
	 const char *fn)
{
	struct frr_tp_ctx *ctx = ep ? ep->ctx : NULL;

	if (!ep || !rmr)
		return frr_tp_err(ctx, -EINVAL,
				  "%s: NULL endpoint or remote "
				  "region",
				  fn);
	if (rmr->ep != ep)
		return frr_tp_err(ctx, -EINVAL,
				  "%s: remote region of rank %d was imported "
				  "over another endpoint (to rank %d); use the "
				  "endpoint it was imported on",
				  fn, (int)rmr->desc.owner_rank,
				  rmr->ep->peer_rank);
	if (need_lmr && !lmr)
		return frr_tp_err(ctx, -EINVAL,
				  "%s: NULL local region; the source must be "
				  "a region from frr_tp_mr_alloc",
				  fn);
	if (lmr && lmr->ctx != ctx)
		return frr_tp_err(ctx, -EINVAL,
				  "%s: local region belongs to another context",
				  fn);
	if (lmr && !in_range(loff, len, lmr->len))
		return frr_tp_err(ctx, -ERANGE,
				  "%s: local range [%zu, +%zu) exceeds the "
				  "local region of %zu bytes",
				  fn, loff, len, lmr->len);
	if (!in_range(roff, len, rmr->desc.len))
		return frr_tp_err(ctx, -ERANGE,
				  "%s: remote range [%zu, +%zu) exceeds region "
				  "%u of rank %d (%llu bytes); nothing written",
				  fn, roff, len, rmr->desc.region_id,
				  (int)rmr->desc.owner_rank,
				  (unsigned long long)rmr->desc.len);
	if (!need_lmr && (roff & 7))
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_write_u64: remote offset %zu is not "
				  "8-byte aligned; counters need aligned "
				  "offsets",
				  roff);
	return frr_tp_err(ctx, -EINVAL, "%s: invalid arguments", fn);
}

static inline int write_args_ok(struct frr_tp_ep *ep,
				const struct frr_tp_mr *lmr, size_t loff,
				struct frr_tp_rmr *rmr, size_t roff, size_t len)
{
	return ep && rmr && lmr && rmr->ep == ep && lmr->ctx == ep->ctx &&
	       in_range(loff, len, lmr->len) &&
	       in_range(roff, len, rmr->desc.len);
}

int frr_tp_write(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr, size_t loff,
		 struct frr_tp_rmr *rmr, size_t roff, size_t len,
		 uint64_t wr_id, unsigned flags)
{
	if (__builtin_expect(!write_args_ok(ep, lmr, loff, rmr, roff, len), 0))
		return bad_args(ep, lmr, loff, rmr, roff, len, 1,
				"frr_tp_write");
	return ep->ctx->ops.write(ep, lmr, loff, rmr, roff, len, wr_id, flags);
}

int frr_tp_write_u64(struct frr_tp_ep *ep, struct frr_tp_rmr *rmr, size_t roff,
		     uint64_t value, uint64_t wr_id, unsigned flags)
{
	if (__builtin_expect(!ep || !rmr || rmr->ep != ep ||
				 !in_range(roff, 8, rmr->desc.len) ||
				 (roff & 7),
			     0))
		return bad_args(ep, NULL, 0, rmr, roff, 8, 0,
				"frr_tp_write_u64");
	return ep->ctx->ops.write_u64(ep, rmr, roff, value, wr_id, flags);
}

void *frr_tp_rmr_direct(struct frr_tp_rmr *rmr, size_t roff, size_t len)
{
	if (!rmr || !in_range(roff, len, rmr->desc.len) ||
	    !rmr->ep->ctx->ops.rmr_direct)
		return NULL;
	return rmr->ep->ctx->ops.rmr_direct(rmr, roff);
}

int frr_tp_write_notify(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr,
			size_t loff, struct frr_tp_rmr *rmr, size_t roff,
			size_t len, uint32_t imm, uint64_t wr_id,
			unsigned flags)
{
	if (__builtin_expect(!write_args_ok(ep, lmr, loff, rmr, roff, len), 0))
		return bad_args(ep, lmr, loff, rmr, roff, len, 1,
				"frr_tp_write_notify");
	if (__builtin_expect(ep->no_notify, 0))
		return frr_tp_err(ep->ctx, -EOPNOTSUPP,
				  "frr_tp_write_notify: the endpoint to rank "
				  "%d carries no notifications (one side "
				  "opened its ctx with FRR_TP_CFG_NO_NOTIFY); "
				  "notify over the main contexts",
				  ep->peer_rank);
	return ep->ctx->ops.write_notify(ep, lmr, loff, rmr, roff, len, imm,
					 wr_id, flags);
}

int frr_tp_poll(struct frr_tp_ctx *ctx, struct frr_tp_wc *wc, int max)
{
	if (__builtin_expect(!ctx || !wc || max < 0, 0))
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_poll: NULL argument "
				  "or negative max");
	return ctx->ops.poll(ctx, wc, max);
}

int frr_tp_poll_notify(struct frr_tp_ctx *ctx, struct frr_tp_notify *n, int max)
{
	if (__builtin_expect(!ctx || !n || max < 0, 0))
		return frr_tp_err(ctx, -EINVAL,
				  "frr_tp_poll_notify: NULL "
				  "argument or negative max");
	return ctx->ops.poll_notify(ctx, n, max);
}

int frr_tp_flush(struct frr_tp_ep *ep, int timeout_ms)
{
	if (!ep)
		return frr_tp_err(NULL, -EINVAL, "frr_tp_flush: NULL endpoint");
	if (timeout_ms <= 0)
		timeout_ms = ep->ctx->cfg.timeout_ms;
	return ep->ctx->ops.flush(ep, timeout_ms);
}
