/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the Criterion suites.
 *
 *   frr_test_backends()  backends to run: env FLEXRR_TEST_BACKENDS (comma
 *                        list, "shm,verbs"), default shm plus verbs when
 *                        frr_tp_backend_available().
 *   frr_test_quick()     env FLEXRR_TEST_QUICK=1 (soft-RoCE VM): scale
 *                        iteration counts down, same assertions.
 *   frr_test_sanitizer() env FLEXRR_TEST_SANITIZER (asan, tsan): set by
 *                        scripts/test.sh for its sanitizer stages, where
 *                        suites run smaller data or fewer clocks and skip
 *                        judgements of timing.
 *   frr_test_mesh_*()    in a frr_launch_local child: open a ctx for the
 *                        job, exchange addresses, connect every pair.
 *   FRR_CHECK()          assertion for launched children (Criterion's asserts
 *                        only work in the test process): logs file:line and
 *                        makes the child return -EPROTO.
 */
#ifndef FLEXRR_TEST_UTIL_H
#define FLEXRR_TEST_UTIL_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "flexrr/bootstrap.h"
#include "flexrr/transport.h"

#define FRR_TEST_MAX_BACKENDS 4
/* TSan runs the same code 5-15x slower (tests/tsan/): a plain build's
 * deadline would fail there for time, not for a bug. */
#ifdef __SANITIZE_THREAD__
#define FRR_TEST_TIMEOUT_MS 120000
#else
#define FRR_TEST_TIMEOUT_MS 20000
#endif

/* Run fn on nprocs local ranks once per backend under test; arg gets the
 * backend.  Use with cr_assert_eq(..., 0) in the Criterion test. */
struct frr_test_arg {
	enum frr_tp_backend backend;
	long iters;
	void *extra;
};

static inline int frr_test_quick(void)
{
	const char *q = getenv("FLEXRR_TEST_QUICK");

	return q && *q && strcmp(q, "0") != 0;
}

/* The sanitizer the suite runs under ("asan", "tsan"), or NULL.  From the
 * environment, not the build: the "exec" suites of the TSan stage are built
 * plain and run a TSan-built flexrr (scripts/test.sh run_tsan_suites). */
static inline const char *frr_test_sanitizer(void)
{
	const char *s = getenv("FLEXRR_TEST_SANITIZER");

	return s && *s ? s : NULL;
}

/* n scaled down 10x (at least 1) under FLEXRR_TEST_QUICK */
static inline long frr_test_scale(long n)
{
	return frr_test_quick() ? (n / 10 ? n / 10 : 1) : n;
}

/* Fills out[] with the backends to test; returns how many (>= 1). */
static inline int frr_test_backends(enum frr_tp_backend *out, int max)
{
	const char *env = getenv("FLEXRR_TEST_BACKENDS");
	char buf[128], *save = NULL, *tok;
	int n = 0;

	if (!env || !*env) {
		out[n++] = FRR_TP_BACKEND_SHM;
		if (n < max && frr_tp_backend_available(FRR_TP_BACKEND_VERBS))
			out[n++] = FRR_TP_BACKEND_VERBS;
		return n;
	}
	snprintf(buf, sizeof(buf), "%s", env);
	for (tok = strtok_r(buf, ",", &save); tok && n < max;
	     tok = strtok_r(NULL, ",", &save)) {
		enum frr_tp_backend b;

		if (frr_tp_backend_parse(tok, &b)) {
			fprintf(stderr,
				"FLEXRR_TEST_BACKENDS: unknown backend '%s' "
				"(use shm, verbs)\n",
				tok);
			continue;
		}
		out[n++] = b;
	}
	if (!n)
		out[n++] = FRR_TP_BACKEND_SHM;
	return n;
}

/*
 * In a Criterion test: run fn on nprocs ranks for every backend under test
 * (a->backend set each time) and assert every rank returned 0.
 */
#define FRR_TEST_RUN(nprocs, fn, a, timeout_ms)                               \
	do {                                                                  \
		enum frr_tp_backend bs_[FRR_TEST_MAX_BACKENDS];               \
		int nb_ = frr_test_backends(bs_, FRR_TEST_MAX_BACKENDS);      \
		for (int i_ = 0; i_ < nb_; i_++) {                            \
			int rc_;                                              \
			(a)->backend = bs_[i_];                               \
			rc_ = frr_launch_local(nprocs, fn, a, timeout_ms);    \
			cr_assert_eq(rc_, 0,                                  \
				     "%s on backend %s with %d ranks failed " \
				     "(%d); the ranks' messages are above",   \
				     #fn, frr_tp_backend_name(bs_[i_]),       \
				     (int)(nprocs), rc_);                     \
		}                                                             \
	} while (0)

#define FRR_CHECK(cond, ...)                                                   \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, \
				__LINE__, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                          \
			fprintf(stderr, "\n");                                 \
			return -EPROTO;                                        \
		}                                                              \
	} while (0)

/* One rank's view of a fully connected job. */
struct frr_test_mesh {
	struct frr_tp_ctx *ctx;
	struct frr_tp_ep **eps; /* eps[rank], NULL for self */
	int rank, nranks;
};

/* The first backend to test, by name (a job's --backend). */
static inline const char *frr_test_backend0(void)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];

	frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	return frr_tp_backend_name(bs[0]);
}

/* The config a test rank opens a ctx with (max_eps 0, flags 0). */
static inline struct frr_tp_config frr_test_config(struct frr_oob *oob,
						   enum frr_tp_backend b)
{
	struct frr_tp_config cfg = { .backend = b,
				     .job_token = oob->job_token,
				     .job_secret = oob->secret,
				     .rank = oob->rank,
				     .nranks = oob->size,
				     .timeout_ms = FRR_TEST_TIMEOUT_MS,
				     .gid_index = -1 };

	return cfg;
}

/* A full mesh over a ctx that may hold max_eps endpoints (0: default);
 * *addrs (when not NULL) gets every rank's address (free it). */
static inline int frr_test_mesh_open_eps(struct frr_oob *oob,
					 enum frr_tp_backend b, int max_eps,
					 struct frr_test_mesh *m,
					 struct frr_tp_addr **addrs)
{
	struct frr_tp_config cfg = frr_test_config(oob, b);
	struct frr_tp_addr me, *all = NULL;
	int ret;

	cfg.max_eps = max_eps;
	memset(m, 0, sizeof(*m));
	m->rank = oob->rank;
	m->nranks = oob->size;
	m->eps = calloc((size_t)oob->size, sizeof(*m->eps));
	all = calloc((size_t)oob->size, sizeof(*all));
	if (!m->eps || !all) {
		ret = -ENOMEM;
		goto free_all;
	}
	ret = frr_tp_open(&cfg, &m->ctx);
	if (ret)
		goto free_all;
	ret = frr_tp_addr_get(m->ctx, &me);
	if (!ret)
		ret = frr_oob_allgather(oob, &me, sizeof(me), all,
					FRR_TEST_TIMEOUT_MS);
	if (!ret)
		ret = frr_tp_connect_all(m->ctx, all, oob->size,
					 FRR_TEST_TIMEOUT_MS, m->eps);
	if (ret) {
		frr_tp_close(m->ctx);
		m->ctx = NULL;
	}
free_all:
	if (!ret && addrs) {
		*addrs = all;
		all = NULL;
	}
	free(all);
	if (ret) {
		free(m->eps);
		m->eps = NULL;
	}
	return ret;
}

static inline int frr_test_mesh_open(struct frr_oob *oob, enum frr_tp_backend b,
				     struct frr_test_mesh *m)
{
	return frr_test_mesh_open_eps(oob, b, 0, m, NULL);
}

static inline void frr_test_mesh_close(struct frr_test_mesh *m)
{
	if (!m->ctx)
		return;
	for (int r = 0; r < m->nranks; r++)
		frr_tp_ep_close(m->eps[r]);
	frr_tp_close(m->ctx);
	free(m->eps);
	m->ctx = NULL;
	m->eps = NULL;
}

/* Every rank's descriptor of 'mr' into all[nranks]. */
static inline int frr_test_share_desc(struct frr_oob *oob,
				      const struct frr_tp_mr *mr,
				      struct frr_tp_desc *all)
{
	struct frr_tp_desc d;
	int ret = frr_tp_mr_export(mr, &d);

	if (ret)
		return ret;
	return frr_oob_allgather(oob, &d, sizeof(d), all, FRR_TEST_TIMEOUT_MS);
}

/* Spin (with a timeout) until the counter at p reaches at least want. */
static inline int frr_test_wait_u64(const void *p, uint64_t want,
				    int timeout_ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0;; i++) {
		if (frr_tp_load_u64(p) >= want)
			return 0;
		if ((i & 1023) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000 +
				(t.tv_nsec - t0.tv_nsec) / 1000000 >
			    timeout_ms)
				return -ETIMEDOUT;
			sched_yield(); /* 2 cores, many ranks */
		}
	}
}

/* What is logged to stderr between frr_test_stderr_begin (NULL: no
 * temporary file) and frr_test_stderr_end goes to msg. */
/* A --metrics CSV whose rr_items_reassigned column (the 14th) sums above
 * 0: RapidReassignment moved items in the run. */
static inline int frr_test_metrics_reassigned(const char *path)
{
	char cmd[2200];

	snprintf(cmd, sizeof(cmd),
		 "head -1 %s | grep -q rr_items_reassigned && "
		 "awk -F, 'NR>1{s+=$14} END{exit !(s>0)}' %s",
		 path, path);
	return system(cmd) == 0;
}

static inline FILE *frr_test_stderr_begin(int *saved)
{
	FILE *cap = tmpfile();

	*saved = -1;
	if (!cap)
		return NULL;
	fflush(stderr);
	*saved = dup(2);
	dup2(fileno(cap), 2);
	return cap;
}

static inline void frr_test_stderr_end(FILE *cap, int saved, char *msg,
				       size_t len)
{
	size_t n;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(cap);
	n = fread(msg, 1, len - 1, cap);
	msg[n] = '\0';
	fclose(cap);
}

#endif /* FLEXRR_TEST_UTIL_H */
