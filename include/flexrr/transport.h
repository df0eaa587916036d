/* SPDX-License-Identifier: MIT */
/*
 * flexrr transport: one API for one-sided writes into registered remote
 * memory, with pluggable backends (shm, verbs).
 *
 * Objects
 *   frr_tp_ctx   one per process (or per thread that wants its own queues);
 *                owns the backend state, the completion queue and the
 *                notification queue.  Opened for a job token and a rank.
 *   frr_tp_mr    a local region, allocated *by the transport* (page aligned,
 *                in shared memory for shm, pinned on the NIC's NUMA node
 *                for verbs).  Exported as a frr_tp_desc that a peer imports.
 *   frr_tp_ep    a connected endpoint to one peer rank.
 *   frr_tp_rmr   a peer's region imported over an endpoint.
 *
 * Threading: a ctx, its endpoints and regions are used by one thread at a
 * time (callers serialize).  The exception is reading local region memory
 * that peers write: that is plain memory and may be read by any thread with
 * frr_tp_load_u64() / acquire loads.  Threads that send in parallel each
 * open their own ctx (one per thread: its own queues, completion queue and
 * QPs; as UCX gives each thread a worker) and connect it to the peers' main
 * contexts, which accept it like any endpoint; a thread's ctx writes into
 * the regions peers export from their main ctx (its imports are its own),
 * from sources it allocated itself.  FRR_TP_CFG_NO_NOTIFY makes such a
 * sending ctx cheap for its peers (no receive queues, no completion
 * entries).  Different contexts share nothing, so G3 holds per endpoint
 * only: order writes of two threads with frr_tp_flush (G1).
 *
 * Ordering and visibility guarantee (what tests check, docs/transport.md):
 *   G1  A write becomes visible at the target some time after it is posted.
 *       frr_tp_flush(ep) returns only when every write posted on ep before
 *       it is visible in the target's memory.
 *   G2  Counter writes (frr_tp_write_u64) to an 8-byte aligned offset are
 *       single-copy atomic: a concurrent reader using frr_tp_load_u64()
 *       sees either the old or the new value, never a mix.
 *   G3  Per endpoint, in posting order: if the target observes the result
 *       of a counter write or a notification posted after write W on the
 *       same endpoint, then all of W is visible to it (observed with an
 *       acquire load / after frr_tp_poll_notify).  Nothing is promised
 *       between different endpoints, nor between two plain writes whose
 *       later one is not a counter or notified write.
 *   G4  A notified write delivers exactly one notification (source rank,
 *       32-bit immediate) to the target's frr_tp_poll_notify, after all of
 *       the write's data (and, by G3, every earlier write) is visible.
 *
 * Errors: every int-returning call returns 0 (or a count) on success and a
 * negative errno on failure, and logs a message that says what failed and
 * what to do (frr_log).  Blocking calls take a timeout in milliseconds;
 * -ETIMEDOUT means the peer did not answer in time.  A peer that has exited
 * gives -ENOTCONN (ECONNRESET while connecting).  Remote offsets and lengths
 * are bounds-checked against the imported region: -ERANGE, never a write
 * outside a registered region.  A write into a region its owner has freed
 * fails: at post time (shm: -ESTALE) or as an error completion / an error
 * from frr_tp_flush (verbs).
 */
#ifndef FLEXRR_TRANSPORT_H
#define FLEXRR_TRANSPORT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flexrr/bootstrap.h"
#include "flexrr/export.h"

#ifdef __cplusplus
extern "C" {
#endif
FRR_API_BEGIN

enum frr_tp_backend {
	FRR_TP_BACKEND_AUTO =
	    0, /* verbs when a usable device exists, else shm */
	FRR_TP_BACKEND_SHM = 1,
	FRR_TP_BACKEND_VERBS = 2,
};

/* Region access: grant the least a region needs. */
enum frr_tp_access {
	FRR_TP_ACCESS_LOCAL = 0,	/* source of writes only */
	FRR_TP_ACCESS_REMOTE_WRITE = 1, /* peers may write into it */
	/* Memory on first touch: shm maps the region without faulting it
	 * in, so pages nobody writes cost nothing (the runtime's replica,
	 * whose dormant rows may never be pushed); verbs registers, so pins,
	 * the whole region anyway.  Without it every page is in at once. */
	FRR_TP_ACCESS_ON_TOUCH = 2,
};

/* Flags for the write calls. */
/* Flags of frr_tp_config. */
enum frr_tp_config_flags {
	/* This ctx's endpoints carry no notifications in either direction
	 * (frr_tp_write_notify: -EOPNOTSUPP on both sides): verbs posts no
	 * receives for them here or at the peer, so a sending thread's ctx
	 * costs its peers no receive buffers and no completion entries. */
	FRR_TP_CFG_NO_NOTIFY = 1u << 0,
};

enum frr_tp_write_flags {
	FRR_TP_F_SIGNAL = 1u << 0, /* produce a frr_tp_wc when complete */
};

struct frr_tp_ctx;
struct frr_tp_mr;
struct frr_tp_ep;
struct frr_tp_rmr;

struct frr_tp_config {
	enum frr_tp_backend backend;
	uint64_t job_token; /* the job's public tag (frr_oob job_token):
			       descriptors of other jobs are refused */
	/* the job secret (frr_oob secret): a connecting peer must prove it
	 * knows it (shm: challenge-response before any fd is passed; verbs:
	 * a MAC in the rdma_cm private data); it never leaves the process */
	struct frr_job_secret job_secret;
	int rank;	/* this process's rank in the job, >= 0 */
	int nranks;	/* job size, >= 1 */
	int timeout_ms; /* default for blocking calls; 0 = 10000 */
	/* verbs only (NULL/negative = auto, or env FLEXRR_DEVICE /
	 * FLEXRR_GID_INDEX) */
	const char *device; /* e.g. "rxe0", "mlx5_0" */
	int gid_index;	    /* -1 = auto: RoCE v2 GID on the bootstrap netdev */
	const char *bind_addr; /* IP the verbs listener binds to; NULL = auto */
	int port;	       /* verbs listener port; 0 = ephemeral */
	/* What the user changes, in the caller's words, shown in errors
	 * (as frr_tcp_cfg's addr_hint): to pick another backend (e.g. "use
	 * --backend shm"; NULL = "open the transport with another backend")
	 * and to name another verbs device (e.g. "fix FLEXRR_DEVICE /
	 * --device"; NULL = "fix FLEXRR_DEVICE or frr_tp_config.device"). */
	const char *backend_hint;
	const char *device_hint;
	/* What gives a peer longer to answer a connection, for a connect
	 * that timed out: the peer is stopped, hung or overloaded (e.g.
	 * "raise --timeout if the machine is busy"; NULL = "is it calling
	 * frr_tp_ep_accept? pass a longer timeout if it is busy"). */
	const char *timeout_hint;
	/* What gives a peer longer for the waits of timeout_ms inside other
	 * calls (a region's import, a notification ring that stays full,
	 * writes the peer does not acknowledge): e.g. "raise --dead-timeout
	 * if the machine is busy"; NULL = "is it polling its notifications?
	 * pass a longer frr_tp_config.timeout_ms if it is busy".  A flush's
	 * caller passes its own timeout and says which option it was. */
	const char *wait_hint;
	/* What checks this host's RDMA set-up, for a device, port or GID
	 * that is missing or not ready (e.g. "run 'flexrr doctor'"; NULL =
	 * "'rdma link show' and 'ibv_devinfo -v' show the devices, ports and
	 * GIDs"). */
	const char *doctor_hint;
	/* Endpoints this ctx holds at once: 0 = nranks + 3 (a full mesh and
	 * a few reconnects).  A ctx that accepts its peers' sending threads
	 * counts them too (e.g. (nranks - 1) x (1 + threads) + 3). */
	int max_eps;	/* 0..FRR_TP_MAX_EPS */
	unsigned flags; /* enum frr_tp_config_flags */
};
#define FRR_TP_MAX_EPS 4096

/*
 * Address of a ctx, published out of band (launcher, rendezvous) so peers can
 * connect: shm = abstract UNIX socket name, verbs = IP:port for rdma_cm.
 * Plain bytes; printable in a log.
 */
#define FRR_TP_ADDR_MAX 108
struct frr_tp_addr {
	uint32_t backend;
	int32_t rank;
	uint64_t job_token;
	char str[FRR_TP_ADDR_MAX];
};

/*
 * Descriptor of a registered region, plain bytes (send it anywhere).
 * Carries the job token, owner rank and backend so an importer can reject a
 * descriptor of another job, rank or backend; 'len' bounds every access.
 */
#define FRR_TP_DESC_MAGIC 0x46525244u /* "FRRD" */
struct frr_tp_desc {
	uint32_t magic;
	uint32_t backend;
	uint64_t job_token;
	int32_t owner_rank;
	uint32_t region_id;
	uint64_t len;
	uint64_t remote_addr; /* verbs: virtual address; shm: 0 */
	uint32_t rkey;	      /* verbs */
	uint32_t access;
	uint64_t check; /* integrity check over the fields above */
};

/* A completion of a signaled write. */
struct frr_tp_wc {
	uint64_t wr_id;
	int status; /* 0 or negative errno */
	int peer_rank;
};

/* A notification delivered by a notified write. */
struct frr_tp_notify {
	int src_rank;
	uint32_t imm;
};

/* ---- context ---------------------------------------------------------- */
int frr_tp_open(const struct frr_tp_config *cfg, struct frr_tp_ctx **ctx);
void frr_tp_close(struct frr_tp_ctx *ctx);
enum frr_tp_backend frr_tp_backend_of(const struct frr_tp_ctx *ctx);
const char *frr_tp_backend_name(enum frr_tp_backend b);
/* "shm" / "verbs" / "auto" -> enum; -EINVAL for anything else */
int frr_tp_backend_parse(const char *name, enum frr_tp_backend *out);
/* 1 when backend b is built in and usable on this host now (verbs: a
 * device with an ACTIVE port); AUTO: always 1. */
int frr_tp_backend_available(enum frr_tp_backend b);
/* Human-readable device string for headers, e.g. "rxe0 port 1 gid 1" or "shm".
 */
const char *frr_tp_device_name(const struct frr_tp_ctx *ctx);
int frr_tp_addr_get(struct frr_tp_ctx *ctx, struct frr_tp_addr *addr);

/* ---- memory ----------------------------------------------------------- */
/* Allocate and register a page-aligned region of len bytes (zeroed). */
int frr_tp_mr_alloc(struct frr_tp_ctx *ctx, size_t len, unsigned access,
		    struct frr_tp_mr **mr);
void frr_tp_mr_free(struct frr_tp_mr *mr);
void *frr_tp_mr_ptr(const struct frr_tp_mr *mr);
size_t frr_tp_mr_len(const struct frr_tp_mr *mr);
int frr_tp_mr_export(const struct frr_tp_mr *mr, struct frr_tp_desc *desc);

/* ---- endpoints -------------------------------------------------------- */
/*
 * Connection setup is asymmetric: one side connects to the other's address,
 * the other accepts.  frr_tp_connect_all() wires a full mesh from an array of
 * every rank's address (lower rank accepts, higher rank connects).
 *
 * Timeouts: 0 means the ctx's timeout_ms.  frr_tp_ep_accept also takes
 * FRR_TP_NOWAIT: only a connection that is already knocking is accepted
 * (its handshake then gets the ctx's timeout), else -EAGAIN at once and
 * nothing logged, for a caller that waits on something else meanwhile.
 */
#define FRR_TP_NOWAIT (-1)
int frr_tp_ep_connect(struct frr_tp_ctx *ctx, const struct frr_tp_addr *peer,
		      int timeout_ms, struct frr_tp_ep **ep);
int frr_tp_ep_accept(struct frr_tp_ctx *ctx, int timeout_ms,
		     struct frr_tp_ep **ep);
void frr_tp_ep_close(struct frr_tp_ep *ep);
int frr_tp_ep_peer_rank(const struct frr_tp_ep *ep);
/* 1 if the peer is known alive, 0 if it has gone (exited, disconnected). */
int frr_tp_ep_alive(struct frr_tp_ep *ep);
/* eps[rank] receives the endpoint to each peer; eps[own rank] = NULL. */
int frr_tp_connect_all(struct frr_tp_ctx *ctx, const struct frr_tp_addr *addrs,
		       int nranks, int timeout_ms, struct frr_tp_ep **eps);

/* Import a peer's region; the descriptor must come from the ep's peer. */
int frr_tp_rmr_import(struct frr_tp_ep *ep, const struct frr_tp_desc *desc,
		      struct frr_tp_rmr **rmr);
void frr_tp_rmr_release(struct frr_tp_rmr *rmr);
size_t frr_tp_rmr_len(const struct frr_tp_rmr *rmr);

/* ---- data path -------------------------------------------------------- */
/* One-sided write of len bytes from src (inside local region lmr) to
 * rmr + roff.  Any len >= 0 up to the region's size. */
int frr_tp_write(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr, size_t loff,
		 struct frr_tp_rmr *rmr, size_t roff, size_t len,
		 uint64_t wr_id, unsigned flags);
/* 8-byte counter write (G2); roff must be 8-byte aligned. */
int frr_tp_write_u64(struct frr_tp_ep *ep, struct frr_tp_rmr *rmr, size_t roff,
		     uint64_t value, uint64_t wr_id, unsigned flags);
/* Write plus a notification carrying imm to the target (G4). */
int frr_tp_write_notify(struct frr_tp_ep *ep, const struct frr_tp_mr *lmr,
			size_t loff, struct frr_tp_rmr *rmr, size_t roff,
			size_t len, uint32_t imm, uint64_t wr_id,
			unsigned flags);
/* Completions of signaled writes; returns count (0..max) or -errno. */
int frr_tp_poll(struct frr_tp_ctx *ctx, struct frr_tp_wc *wc, int max);
/* Notifications that arrived; returns count (0..max) or -errno. */
int frr_tp_poll_notify(struct frr_tp_ctx *ctx, struct frr_tp_notify *n,
		       int max);
/*
 * Where a write of len bytes to rmr + roff lands, when the backend maps the
 * peer's region into this process (shm): the caller may store into it
 * directly instead of building the bytes in a local region and calling
 * frr_tp_write, one copy less.  Such stores count as a write posted on
 * rmr's endpoint by the storing thread (G1, G3: a counter write it posts
 * after them on that endpoint is seen after them).  NULL when the backend
 * has no such mapping (verbs), the range is outside the region or the
 * region is gone: then write as usual.  The peer may read or change the
 * bytes at any time: treat what is read back from there as hostile.
 */
void *frr_tp_rmr_direct(struct frr_tp_rmr *rmr, size_t roff, size_t len);
/* G1: every write posted on ep so far is visible at the target. */
int frr_tp_flush(struct frr_tp_ep *ep, int timeout_ms);

/* Read a counter in local memory that peers write (pairs with G2/G3). */
static inline uint64_t frr_tp_load_u64(const void *p)
{
	return atomic_load_explicit((const _Atomic uint64_t *)p,
				    memory_order_acquire);
}

/* Last error message of this ctx ("" when none); for tools and tests. */
const char *frr_tp_last_error(const struct frr_tp_ctx *ctx);

/* ---- diagnostics ------------------------------------------------------ */
/* Is this host ready for the verbs backend?  Prints to out (NULL: stdout)
 * the devices, ports (state, link layer, MTU), GID tables, NUMA nodes and
 * the memlock limit against pinned_bytes (0: 64 MiB), then opens the
 * backend as a job would and registers that much; every problem with its
 * fix, and a verdict line.  device NULL: every device.  Returns the number
 * of problems found (0 = healthy).  `flexrr doctor` prints this. */
int frr_tp_doctor(FILE *out, const char *device, size_t pinned_bytes);

/* Each check of frr_tp_doctor_run as it is made: level 0 ok, 1 warning,
 * 2 problem; fix is NULL for ok. */
struct frr_tp_doctor_sink {
	void (*check)(void *arg, int level, const char *what, const char *fix);
	void *arg;
};
/* What frr_tp_doctor_run checks, and how its fixes name what the caller's
 * user changes (as frr_tp_config's hints; NULL = the API's words). */
struct frr_tp_doctor_cfg {
	const char *device;	  /* NULL: every device */
	size_t pinned_bytes;	  /* 0: 64 MiB */
	const char *device_hint;  /* e.g. "FLEXRR_DEVICE / --device" */
	const char *pinned_hint;  /* e.g. "lower --pinned-mib" */
	const char *backend_hint; /* e.g. "use --backend shm" */
	/* what makes a soft-RoCE device here, or runs the program in a VM
	 * whose kernel has one (NULL: the kernel's commands alone), e.g. a
	 * script of the caller's */
	const char *rxe_hint; /* e.g. "scripts/softroce-setup.sh does it" */
	const char *vm_hint;  /* e.g. "scripts/softroce-vm.sh run -- CMD" */
};
/* frr_tp_doctor, also handing every check to sink (may be NULL); out NULL
 * with a sink: no text at all (`flexrr doctor --json`). */
int frr_tp_doctor_run(FILE *out, const struct frr_tp_doctor_cfg *cfg,
		      const struct frr_tp_doctor_sink *sink);

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_TRANSPORT_H */
