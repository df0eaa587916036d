// SPDX-License-Identifier: MIT
/*
 * Send throughput of T threads of one rank writing into another rank, each
 * thread on its own transport ctx (FRR_TP_CFG_NO_NOTIFY, as the runtime's
 * lanes) or all of them through the rank's one ctx under a mutex (as
 * --shared-transport).  Built and run by bench/send-threads.sh against the
 * installed API only (libflexrr.a); not a test.
 *   tp-threads BACKEND THREADS own|shared SIZE SECONDS
 * prints "THREADS WAY MBps" (MB = 10^6 bytes): rank 1's threads stream
 * SIZE-byte writes into their own slice of rank 0's region for SECONDS,
 * flushing every 16 writes; rank 0 waits passively.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flexrr/bootstrap.h"
#include "flexrr/transport.h"

#define MAXT 16
#define TIMEOUT_MS 30000

struct args {
	enum frr_tp_backend backend;
	int T, own;
	size_t size;
	double seconds;
};

struct sender {
	const struct args *a;
	struct frr_oob *oob;
	struct frr_tp_ctx *ctx; /* own ctx, or the shared one */
	struct frr_tp_ep *ep;
	struct frr_tp_rmr *rmr;
	struct frr_tp_mr *src;
	pthread_mutex_t *lock; /* shared: taken around every post and flush */
	int t, err;
	double bytes;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct frr_tp_config config(struct frr_oob *oob, const struct args *a)
{
	struct frr_tp_config c = { .backend = a->backend,
				   .job_token = oob->job_token,
				   .job_secret = oob->secret,
				   .rank = oob->rank,
				   .nranks = oob->size,
				   .timeout_ms = TIMEOUT_MS,
				   .gid_index = -1,
				   .max_eps = MAXT + 4 };

	return c;
}

static void *stream(void *arg)
{
	struct sender *s = arg;
	size_t off = (size_t)s->t * s->a->size;
	double end = now_s() + s->a->seconds;

	while (!s->err && now_s() < end) {
		if (s->lock)
			pthread_mutex_lock(s->lock);
		for (int i = 0; i < 16 && !s->err; i++)
			s->err = frr_tp_write(s->ep, s->src, 0, s->rmr, off,
					      s->a->size, 0, 0);
		if (!s->err)
			s->err = frr_tp_flush(s->ep, TIMEOUT_MS);
		if (s->lock)
			pthread_mutex_unlock(s->lock);
		s->bytes += 16.0 * (double)s->a->size;
	}
	return NULL;
}

/* Rank 1: open the senders (own: a ctx each, connected to rank 0). */
static int senders_open(struct frr_oob *oob, const struct args *a,
			struct frr_tp_ctx *main_ctx, struct frr_tp_ep *main_ep,
			const struct frr_tp_addr *addr0,
			const struct frr_tp_desc *d0, struct sender *s)
{
	struct frr_tp_rmr *shared_rmr = NULL;
	int err = 0;

	if (!a->own)
		err = frr_tp_rmr_import(main_ep, d0, &shared_rmr);
	for (int t = 0; t < a->T && !err; t++) {
		struct frr_tp_config c = config(oob, a);

		s[t].t = t;
		s[t].a = a;
		if (a->own) {
			c.flags = FRR_TP_CFG_NO_NOTIFY;
			err = frr_tp_open(&c, &s[t].ctx);
			if (!err)
				err = frr_tp_ep_connect(s[t].ctx, addr0,
							TIMEOUT_MS, &s[t].ep);
			if (!err)
				err = frr_tp_rmr_import(s[t].ep, d0, &s[t].rmr);
		} else {
			s[t].ctx = main_ctx;
			s[t].ep = main_ep;
			s[t].rmr = shared_rmr;
		}
		if (!err)
			err = frr_tp_mr_alloc(s[t].ctx, a->size,
					      FRR_TP_ACCESS_LOCAL, &s[t].src);
	}
	return err;
}

static void senders_close(const struct args *a, struct sender *s)
{
	for (int t = 0; t < a->T; t++) {
		if (s[t].src)
			frr_tp_mr_free(s[t].src);
		if (!a->own)
			continue;
		if (s[t].rmr)
			frr_tp_rmr_release(s[t].rmr);
		if (s[t].ep)
			frr_tp_ep_close(s[t].ep);
		if (s[t].ctx)
			frr_tp_close(s[t].ctx);
	}
	if (!a->own && s[0].rmr)
		frr_tp_rmr_release(s[0].rmr);
}

static int run_sender(const struct args *a, struct sender *s)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_t th[MAXT];
	double t0, t1, bytes = 0;
	int err = 0;

	t0 = now_s();
	for (int t = 0; t < a->T; t++) {
		s[t].lock = a->own ? NULL : &lock;
		pthread_create(&th[t], NULL, stream, &s[t]);
	}
	for (int t = 0; t < a->T; t++) {
		pthread_join(th[t], NULL);
		bytes += s[t].bytes;
		if (s[t].err)
			err = s[t].err;
	}
	t1 = now_s();
	if (!err)
		printf("%d\t%s\t%.1f\n", a->T, a->own ? "own" : "shared",
		       bytes / (t1 - t0) / 1e6);
	return err;
}

static int rank_main(struct frr_oob *oob, void *arg)
{
	const struct args *a = arg;
	struct frr_tp_config c = config(oob, a);
	struct frr_tp_ctx *ctx = NULL;
	struct frr_tp_ep *eps[2] = { 0 }, *in[MAXT] = { 0 };
	struct frr_tp_mr *mr = NULL;
	struct frr_tp_addr addrs[2], me;
	struct frr_tp_desc d[2], mine = { 0 };
	struct sender s[MAXT];
	int err, nin = a->own && oob->rank == 0 ? a->T : 0;

	memset(s, 0, sizeof(s));
	err = frr_tp_open(&c, &ctx);
	if (!err)
		err = frr_tp_addr_get(ctx, &me);
	if (!err)
		err =
		    frr_oob_allgather(oob, &me, sizeof(me), addrs, TIMEOUT_MS);
	if (!err)
		err = frr_tp_connect_all(ctx, addrs, 2, TIMEOUT_MS, eps);
	if (!err && oob->rank == 0)
		err = frr_tp_mr_alloc(ctx, (size_t)a->T * a->size,
				      FRR_TP_ACCESS_REMOTE_WRITE, &mr);
	if (!err && mr)
		err = frr_tp_mr_export(mr, &mine);
	if (!err)
		err =
		    frr_oob_allgather(oob, &mine, sizeof(mine), d, TIMEOUT_MS);
	if (!err && oob->rank == 1)
		err = senders_open(oob, a, ctx, eps[0], &addrs[0], &d[0], s);
	for (int i = 0; i < nin && !err; i++)
		err = frr_tp_ep_accept(ctx, TIMEOUT_MS, &in[i]);
	if (!err)
		err = frr_oob_barrier(oob, TIMEOUT_MS);
	if (!err && oob->rank == 1)
		err = run_sender(a, s);
	/* rank 0 waits in the barrier (blocking, not spinning) meanwhile */
	if (!err)
		err =
		    frr_oob_barrier(oob, TIMEOUT_MS + (int)(a->seconds * 1e3));
	senders_close(a, s);
	for (int i = 0; i < nin; i++)
		if (in[i])
			frr_tp_ep_close(in[i]);
	if (mr)
		frr_tp_mr_free(mr);
	for (int r = 0; r < 2; r++)
		if (eps[r])
			frr_tp_ep_close(eps[r]);
	if (ctx)
		frr_tp_close(ctx);
	if (err)
		fprintf(stderr, "tp-threads: rank %d failed: %s\n", oob->rank,
			strerror(-err));
	return err;
}

int main(int argc, char **argv)
{
	struct args a;

	if (argc != 6 || frr_tp_backend_parse(argv[1], &a.backend) ||
	    (a.T = atoi(argv[2])) < 1 || a.T > MAXT ||
	    (strcmp(argv[3], "own") && strcmp(argv[3], "shared")) ||
	    !(a.size = strtoul(argv[4], NULL, 0)) ||
	    (a.seconds = atof(argv[5])) <= 0) {
		fprintf(stderr,
			"usage: tp-threads shm|verbs THREADS(1..%d) "
			"own|shared SIZE SECONDS\n",
			MAXT);
		return 2;
	}
	a.own = !strcmp(argv[3], "own");
	return frr_launch_local(2, rank_main, &a,
				TIMEOUT_MS * 2 + (int)(a.seconds * 1e3))
		   ? 1
		   : 0;
}
