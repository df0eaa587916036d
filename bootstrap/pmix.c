// SPDX-License-Identifier: MIT
/*
 * PMIx bootstrap: ranks started by a PMIx launcher (Open MPI's mpirun, Slurm's
 * srun --mpi=pmix, prterun) meet through the launcher's key-value store
 * instead of the TCP rendezvous: no port to pick, no address to pass, and the
 * store is readable only by the processes of the job (the PMIx server
 * authenticates its clients).
 *
 *   open       PMIx_Init; every rank puts a hello (binary and argument
 *              hashes), rank 0 also the job secret (the caller's, or 32
 *              fresh random bytes; the store is the launcher's
 *              authenticated channel: only the job's processes read it);
 *              commit; fence collecting the data; every rank takes rank
 *              0's secret and checks that its hello matches rank 0's (rank
 *              0 names every rank that differs).
 *   allgather  put "flexrr.ag.N" (N counts the collectives: every rank calls
 *              them in the same order), commit, fence collecting, get the
 *              key of every other rank; a value of the wrong type or size
 *              fails the collective.
 *   barrier    fence without data.
 *   close      PMIx_Finalize.
 * Fences carry PMIX_TIMEOUT (whole seconds, rounded up).  Built without
 * libpmix, frr_pmix_open says so and fails; frr_pmix_offered() is 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/base.h"
#include "flexrr/bootstrap.h"

int frr_pmix_launched(void)
{
	return getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK");
}

/* How the caller's user asks for the TCP rendezvous instead. */
static const char *tcp_hint(const struct frr_pmix_cfg *cfg)
{
	return cfg->tcp_hint ? cfg->tcp_hint
			     : "meet through the TCP rendezvous (frr_tcp_open)";
}

#ifndef FLEXRR_HAVE_PMIX

int frr_pmix_offered(void)
{
	return 0;
}

int frr_pmix_open(const struct frr_pmix_cfg *cfg, struct frr_oob **oob)
{
	*oob = NULL;
	frr_err("this flexrr was built without PMIx: install libpmix-dev "
		"(Debian) and rebuild, or %s",
		tcp_hint(cfg));
	return -ENOTSUP;
}

#else /* FLEXRR_HAVE_PMIX */

#include <pmix.h>
#include <stdio.h>

#define PX_MAGIC 0x46525058u /* "FRPX" */
#define PX_VERSION 1
#define PX_DEFAULT_MS 30000

struct px_hello {
	uint32_t magic;
	uint32_t version;
	uint64_t binhash;
	uint64_t argshash;
};

struct px {
	struct frr_oob oob;
	pmix_proc_t me;
	unsigned seq;	 /* collectives so far: the key of the next one */
	int timeout_ms;	 /* of collectives given no timeout */
	int initialized; /* PMIx_Init succeeded: finalize on close */
	const char *timeout_hint; /* cfg's, or the default */
};

int frr_pmix_offered(void)
{
	return frr_pmix_launched();
}

static int px_errno(pmix_status_t rc)
{
	return rc == PMIX_ERR_TIMEOUT ? -ETIMEDOUT : -EPROTO;
}

/* put key = bytes (PMIx copies them), then commit */
static int px_put(const char *key, const void *p, size_t len)
{
	pmix_value_t v = { .type = PMIX_BYTE_OBJECT };
	pmix_status_t rc;

	v.data.bo.bytes = (char *)p;
	v.data.bo.size = len;
	rc = PMIx_Put(PMIX_GLOBAL, key, &v);
	if (rc == PMIX_SUCCESS)
		rc = PMIx_Commit();
	if (rc != PMIX_SUCCESS) {
		frr_err("pmix: publishing %s failed: %s", key,
			PMIx_Error_string(rc));
		return -EPROTO;
	}
	return 0;
}

/* fence over the whole namespace; collect = also share what was put */
static int px_fence(struct px *x, int collect, int timeout_ms, const char *what)
{
	int secs = ((timeout_ms > 0 ? timeout_ms : x->timeout_ms) + 999) / 1000;
	bool flag = collect != 0;
	pmix_info_t info[2];
	pmix_status_t rc;

	PMIX_INFO_CONSTRUCT(&info[0]);
	PMIX_INFO_CONSTRUCT(&info[1]);
	PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
	PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &secs, PMIX_INT);
	rc = PMIx_Fence(NULL, 0, info, 2);
	PMIX_INFO_DESTRUCT(&info[0]);
	PMIX_INFO_DESTRUCT(&info[1]);
	if (rc != PMIX_SUCCESS) {
		/* cfg's hint is about cfg's timeout: a caller that passed its
		 * own names what raises it in a line of its own */
		const char *hint = timeout_ms > 0 ? "" : x->timeout_hint;

		if (rc == PMIX_ERR_TIMEOUT)
			frr_err("pmix: rank %d: fence (%s) failed: a rank did "
				"not arrive within %d s (did one fail or hang "
				"before it?%s%s)",
				x->oob.rank, what, secs,
				*hint ? " for slow starts: " : "", hint);
		else
			frr_err("pmix: rank %d: fence (%s) failed: %s",
				x->oob.rank, what, PMIx_Error_string(rc));
		return px_errno(rc);
	}
	return 0;
}

/* Copy rank r's key into out[len]; the value must be len bytes exactly. */
static int px_get(struct px *x, int r, const char *key, void *out, size_t len)
{
	pmix_proc_t p;
	pmix_value_t *v = NULL;
	pmix_status_t rc;
	int err = 0;

	PMIX_LOAD_PROCID(&p, x->me.nspace, (pmix_rank_t)r);
	rc = PMIx_Get(&p, key, NULL, 0, &v);
	if (rc != PMIX_SUCCESS) {
		frr_err("pmix: rank %d: reading %s of rank %d failed: %s",
			x->oob.rank, key, r, PMIx_Error_string(rc));
		return px_errno(rc);
	}
	if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size != len) {
		frr_err("pmix: rank %d: %s of rank %d has %zu bytes, want %zu "
			"(a different flexrr build?)",
			x->oob.rank, key, r,
			v->type == PMIX_BYTE_OBJECT ? v->data.bo.size : 0, len);
		err = -EPROTO;
	} else {
		memcpy(out, v->data.bo.bytes, len);
	}
	PMIX_VALUE_RELEASE(v);
	return err;
}

static int px_allgather(struct frr_oob *oob, const void *mine, size_t len,
			void *all, int timeout_ms)
{
	struct px *x = (struct px *)oob;
	char key[32];
	int err;

	snprintf(key, sizeof(key), "flexrr.ag.%u", x->seq++);
	err = px_put(key, mine, len);
	if (!err)
		err = px_fence(x, 1, timeout_ms, key);
	for (int r = 0; !err && r < oob->size; r++) {
		char *dst = (char *)all + (size_t)r * len;

		if (r == oob->rank)
			memcpy(dst, mine, len);
		else
			err = px_get(x, r, key, dst, len);
	}
	return err;
}

static int px_barrier(struct frr_oob *oob, int timeout_ms)
{
	return px_fence((struct px *)oob, 0, timeout_ms, "barrier");
}

static void px_close(struct frr_oob *oob)
{
	struct px *x = (struct px *)oob;

	if (x->initialized)
		PMIx_Finalize(NULL, 0);
	free(x);
}

static const struct frr_oob_ops px_ops = {
	.size = sizeof(struct frr_oob_ops),
	.allgather = px_allgather,
	.barrier = px_barrier,
	.close = px_close,
};

/* The job size the launcher gives the namespace. */
static int px_job_size(struct px *x, int *size)
{
	pmix_proc_t p;
	pmix_value_t *v = NULL;
	pmix_status_t rc;

	PMIX_LOAD_PROCID(&p, x->me.nspace, PMIX_RANK_WILDCARD);
	rc = PMIx_Get(&p, PMIX_JOB_SIZE, NULL, 0, &v);
	if (rc != PMIX_SUCCESS || v->type != PMIX_UINT32 ||
	    v->data.uint32 < 1 || v->data.uint32 > 65536) {
		frr_err("pmix: the launcher does not tell the job size (%s)",
			rc == PMIX_SUCCESS ? "bad value"
					   : PMIx_Error_string(rc));
		if (v)
			PMIX_VALUE_RELEASE(v);
		return -EPROTO;
	}
	*size = (int)v->data.uint32;
	PMIX_VALUE_RELEASE(v);
	return 0;
}

/* Every rank checks every hello against rank 0's, so all reach the same
 * verdict and none waits in a later fence for a rank that gave up.  Rank 0
 * and each differing rank say why; the others name the first one. */
static int px_check_hellos(struct px *x, const struct px_hello *mine)
{
	struct px_hello h0, h;
	int err = 0, first_bad = -1, self_bad = 0;

	if (x->oob.rank)
		err = px_get(x, 0, "flexrr.hello", &h0, sizeof(h0));
	else
		h0 = *mine;
	for (int r = 0; !err && r < x->oob.size; r++) {
		const char *why = NULL;

		if (r == x->oob.rank)
			h = *mine;
		else if (r)
			err = px_get(x, r, "flexrr.hello", &h, sizeof(h));
		else
			h = h0;
		if (err)
			break;
		if (h.magic != PX_MAGIC || h.version != PX_VERSION)
			why = "another flexrr version";
		else if (h.binhash != h0.binhash)
			why = "a different flexrr binary";
		else if (h.argshash != h0.argshash)
			why = "different run arguments";
		if (!why)
			continue;
		self_bad |= r == x->oob.rank;
		if (!x->oob.rank || r == x->oob.rank)
			frr_err(
			    "pmix: rank %d runs %s than rank 0: start every "
			    "rank with the same build and the same "
			    "command line",
			    r, why);
		if (first_bad < 0)
			first_bad = r;
	}
	if (err)
		return err;
	if (first_bad < 0)
		return 0;
	if (x->oob.rank && !self_bad)
		frr_err("pmix: rank %d differs from rank 0 (see its message); "
			"stopping rank %d too",
			first_bad, x->oob.rank);
	return -EPROTO;
}

int frr_pmix_open(const struct frr_pmix_cfg *cfg, struct frr_oob **oob)
{
	struct px *x = calloc(1, sizeof(*x));
	struct px_hello hello = { .magic = PX_MAGIC,
				  .version = PX_VERSION,
				  .binhash = cfg->binary_hash,
				  .argshash = cfg->args_hash };
	struct frr_job_secret secret = { { 0 } };
	pmix_status_t rc;
	int err;

	*oob = NULL;
	if (!x)
		return -ENOMEM;
	if (!frr_pmix_launched()) {
		frr_err("pmix: no PMIx launcher started this process "
			"(PMIX_NAMESPACE, PMIX_RANK unset): start the ranks "
			"with mpirun or srun --mpi=pmix, or %s",
			tcp_hint(cfg));
		free(x);
		return -ENOENT;
	}
	x->oob.ops = &px_ops;
	x->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : PX_DEFAULT_MS;
	x->timeout_hint = cfg->timeout_hint ? cfg->timeout_hint
					    : "raise frr_pmix_cfg.timeout_ms";
	rc = PMIx_Init(&x->me, NULL, 0);
	if (rc != PMIX_SUCCESS) {
		frr_err("pmix: PMIx_Init failed: %s: is this process a rank "
			"of a PMIx launcher's job (mpirun, srun --mpi=pmix)? "
			"Else %s",
			PMIx_Error_string(rc), tcp_hint(cfg));
		free(x);
		return -EPROTO;
	}
	x->initialized = 1;
	x->oob.rank = (int)x->me.rank;
	frr_log_set_rank(x->oob.rank);
	err = px_job_size(x, &x->oob.size);
	if (err)
		goto out;
	if (x->oob.rank >= x->oob.size) {
		frr_err("pmix: rank %d of a job of %d", x->oob.rank,
			x->oob.size);
		err = -EPROTO;
		goto out;
	}
	if (cfg->secret)
		secret = *cfg->secret;
	else if (!x->oob.rank)
		err = frr_job_secret_random(&secret);
	if (!err)
		err = px_put("flexrr.hello", &hello, sizeof(hello));
	if (!err && !x->oob.rank)
		err = px_put("flexrr.secret", &secret, sizeof(secret));
	if (!err)
		err = px_fence(x, 1, 0, "start");
	if (!err && x->oob.rank && !cfg->secret)
		err = px_get(x, 0, "flexrr.secret", &secret, sizeof(secret));
	if (!err && !frr_job_secret_is_set(&secret)) {
		frr_err("pmix: rank 0 published no job secret");
		err = -EPROTO;
	}
	if (!err)
		err = px_check_hellos(x, &hello);
	if (err)
		goto out;
	x->oob.secret = secret;
	x->oob.job_token = frr_job_secret_tag(&secret);
	frr_info("pmix: rank %d of %d in namespace %s", x->oob.rank,
		 x->oob.size, x->me.nspace);
	*oob = &x->oob;
	return 0;
out:
	px_close(&x->oob);
	return err;
}

#endif /* FLEXRR_HAVE_PMIX */
