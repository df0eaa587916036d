// SPDX-License-Identifier: MIT
/*
 * The measurements, after perftest's method:
 *   write_lat    ping-pong: rank 1 writes SIZE bytes into rank 0's buffer,
 *                rank 0 sees the last byte change and writes back; one-way
 *                latency = RTT / 2 per iteration (ib_write_lat).
 *   counter_lat  the same ping-pong with frr_tp_write_u64 and an acquire load.
 *   write_bw     rank 1 streams SIZE-byte writes (signaled every 64th, at
 *                most 128 outstanding) and flushes; peak = best window of
 *                completions, average = all bytes / total time
 *                (ib_write_bw).  MB = 2^20 bytes, as perftest.
 * Timestamps: TSC calibrated against CLOCK_MONOTONIC on x86, else the clock.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "flexrr/base.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

#define SIG_EVERY 64
#define TX_DEPTH 128
#define WAIT_MS 10000
#define SWEEP_MAX ((size_t)8 << 20)

const char *bench_test_name(enum bench_test t)
{
	switch (t) {
	case BENCH_WRITE_LAT:
		return "write_lat";
	case BENCH_WRITE_BW:
		return "write_bw";
	case BENCH_COUNTER_LAT:
		return "counter_lat";
	}
	return "?";
}

/* ---- clock ------------------------------------------------------------ */

static double ns_per_tick = 1.0;

static uint64_t ticks(void)
{
#ifdef HAVE_TSC
	return __rdtsc();
#else
	return frr_now_ns();
#endif
}

static double mono_ns(void)
{
	return (double)frr_now_ns();
}

static void clock_calibrate(void)
{
#ifdef HAVE_TSC
	double t0 = mono_ns(), t1;
	uint64_t c0 = ticks(), c1;

	do
		t1 = mono_ns();
	while (t1 - t0 < 20e6);
	c1 = ticks();
	ns_per_tick = (t1 - t0) / (double)(c1 - c0);
#endif
}

static double ticks_us(uint64_t dt)
{
	return (double)dt * ns_per_tick / 1000.0;
}

/* ---- state ------------------------------------------------------------ */

struct bench {
	const struct bench_params *p;
	struct frr_oob *oob;
	struct frr_tp_ctx *ctx;
	struct frr_tp_ep *eps[2];
	struct frr_tp_ep *ep; /* to the other rank */
	struct frr_tp_mr *recv, *src;
	struct frr_tp_rmr *rmr; /* the other rank's recv buffer */
	size_t max_size;
	size_t region; /* bytes of recv and src: max_size, or --span */
	int rank;
	FILE *json;
	int json_rows;
	double *samples;
	size_t cur_size; /* for error messages */
	long cur_iter;
};

struct lat_row {
	double min, max, typical, avg, stdev, p99, p999;
};

struct bw_row {
	double peak, avg, mpps;
};

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *s, long n, double q)
{
	long i = (long)ceil(q * (double)n) - 1;

	return s[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static void lat_stats(double *s, long n, struct lat_row *r)
{
	double sum = 0, sq = 0;

	qsort(s, (size_t)n, sizeof(*s), dbl_cmp);
	for (long i = 0; i < n; i++)
		sum += s[i];
	r->avg = sum / (double)n;
	for (long i = 0; i < n; i++)
		sq += (s[i] - r->avg) * (s[i] - r->avg);
	r->stdev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	r->min = s[0];
	r->max = s[n - 1];
	r->typical = s[n / 2];
	r->p99 = pct(s, n, 0.99);
	r->p999 = pct(s, n, 0.999);
}

/* ---- waiting ---------------------------------------------------------- */

static int __attribute__((noinline))
wait_failed(struct bench *b, const char *what)
{
	if (!frr_tp_ep_alive(b->ep)) {
		frr_err("bench: the peer has gone while waiting for %s (size "
			"%zu, iteration %ld)",
			what, b->cur_size, b->cur_iter);
		return -ENOTCONN;
	}
	frr_err("bench: rank %d: no %s from the peer within %d s (size %zu, "
		"iteration %ld); is the host overloaded or the peer stopped?",
		b->rank, what, WAIT_MS / 1000, b->cur_size, b->cur_iter);
	return -ETIMEDOUT;
}

/* spin until the byte changes to v; checks the deadline rarely */
static inline int wait_byte(struct bench *b, const volatile unsigned char *p,
			    unsigned char v)
{
	uint64_t spins = 0;
	double deadline = 0;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v) {
		if ((++spins & 0xfffff) == 0) {
			if (!deadline)
				deadline = mono_ns() + WAIT_MS * 1e6;
			else if (mono_ns() > deadline)
				return wait_failed(b, "write");
		}
	}
	return 0;
}

static inline int wait_u64(struct bench *b, const void *p, uint64_t v)
{
	uint64_t spins = 0;
	double deadline = 0;

	while (frr_tp_load_u64(p) != v) {
		if ((++spins & 0xfffff) == 0) {
			if (!deadline)
				deadline = mono_ns() + WAIT_MS * 1e6;
			else if (mono_ns() > deadline)
				return wait_failed(b, "counter write");
		}
	}
	return 0;
}

/* Reap completions without blocking; any error status fails the run. */
static int reap(struct bench *b, long *signaled_done)
{
	struct frr_tp_wc wc[16];
	int n = frr_tp_poll(b->ctx, wc, 16);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (wc[i].status) {
			frr_err("bench: write %llu completed with error %s",
				(unsigned long long)wc[i].wr_id,
				strerror(-wc[i].status));
			return wc[i].status;
		}
	}
	if (signaled_done)
		*signaled_done += n;
	return n;
}

static unsigned flags_for(long i)
{
	return i % SIG_EVERY == SIG_EVERY - 1 ? FRR_TP_F_SIGNAL : 0;
}

/* ---- latency ---------------------------------------------------------- */

static int ping_write(struct bench *b, size_t size, long i)
{
	unsigned char *src = frr_tp_mr_ptr(b->src);

	src[size - 1] = (unsigned char)(i % 255 + 1);
	return frr_tp_write(b->ep, b->src, 0, b->rmr, 0, size, (uint64_t)i,
			    flags_for(i));
}

static int ping_u64(struct bench *b, size_t size, long i)
{
	(void)size;
	return frr_tp_write_u64(b->ep, b->rmr, 0, (uint64_t)i + 1, (uint64_t)i,
				flags_for(i));
}

static int pong_wait(struct bench *b, size_t size, long i)
{
	const unsigned char *recv = frr_tp_mr_ptr(b->recv);

	if (b->p->test == BENCH_COUNTER_LAT)
		return wait_u64(b, recv, (uint64_t)i + 1);
	return wait_byte(b, recv + size - 1, (unsigned char)(i % 255 + 1));
}

/* One ping-pong run of n iterations; rank 1 keeps one-way samples. */
static int lat_loop(struct bench *b, size_t size, long n, double *samples)
{
	int (*ping)(struct bench *, size_t, long) =
	    b->p->test == BENCH_COUNTER_LAT ? ping_u64 : ping_write;
	uint64_t t0 = ticks(), t1;
	int ret = 0;

	b->cur_size = size;
	for (long i = 0; i < n && !ret; i++) {
		b->cur_iter = i;
		if (b->rank == 1) {
			ret = ping(b, size, i);
			if (!ret)
				ret = pong_wait(b, size, i);
			t1 = ticks();
			if (samples)
				samples[i] = ticks_us(t1 - t0) / 2;
			t0 = t1;
		} else {
			ret = pong_wait(b, size, i);
			if (!ret)
				ret = ping(b, size, i);
		}
		if (!ret && flags_for(i))
			ret = reap(b, NULL) < 0 ? -EIO : 0;
	}
	return ret;
}

/* Both sides clear their receive buffer so no stale byte matches. */
static int size_begin(struct bench *b)
{
	memset(frr_tp_mr_ptr(b->recv), 0, b->region);
	return frr_oob_barrier(b->oob, 30000);
}

static int size_end(struct bench *b)
{
	int ret = frr_tp_flush(b->ep, WAIT_MS);

	while (!ret && reap(b, NULL) > 0)
		;
	if (!ret)
		ret = frr_oob_barrier(b->oob, 30000);
	return ret;
}

static int run_lat(struct bench *b, size_t size, long iters,
		   struct lat_row *row)
{
	long warm = iters / 10 + 10;
	int ret = size_begin(b);

	if (!ret)
		ret = lat_loop(b, size, warm, NULL);
	if (!ret)
		ret = size_end(b);
	if (!ret)
		ret = size_begin(b);
	if (!ret)
		ret = lat_loop(b, size, iters, b->rank ? b->samples : NULL);
	if (!ret)
		ret = size_end(b);
	if (!ret && b->rank == 1)
		lat_stats(b->samples, iters, row);
	return ret;
}

/* ---- bandwidth -------------------------------------------------------- */

static int bw_loop(struct bench *b, size_t size, long n, struct bw_row *row)
{
	long posted = 0, sig_done = 0, win_n0 = 0;
	long window = n / 10 > SIG_EVERY ? n / 10 : SIG_EVERY;
	uint64_t start = ticks(), win_t0 = start, t;
	size_t off;
	double peak = 0;
	int ret = 0;

	while (posted < n) {
		/* at most TX_DEPTH writes not yet covered by a completion */
		while (posted - sig_done * SIG_EVERY >= TX_DEPTH && ret >= 0)
			ret = reap(b, &sig_done);
		if (ret < 0)
			return ret;
		/* --span: each write to the next place of the region, on
		 * both sides, so a region larger than the caches measures
		 * memory, not cache, bandwidth (a job's batches are) */
		off = (size_t)posted % (b->region / size) * size;
		ret = frr_tp_write(b->ep, b->src, off, b->rmr, off, size,
				   (uint64_t)posted, flags_for(posted));
		if (ret == -EAGAIN) {
			ret = reap(b, &sig_done);
			continue;
		}
		if (ret)
			return ret;
		posted++;
		if (flags_for(posted - 1)) {
			ret = reap(b, &sig_done);
			if (ret < 0)
				return ret;
			if (sig_done * SIG_EVERY - win_n0 >= window) {
				t = ticks();
				double mb =
				    (double)(sig_done * SIG_EVERY - win_n0) *
				    (double)size / (1 << 20);
				double s = ticks_us(t - win_t0) / 1e6;

				if (s > 0 && mb / s > peak)
					peak = mb / s;
				win_t0 = t;
				win_n0 = sig_done * SIG_EVERY;
			}
		}
	}
	ret = frr_tp_flush(b->ep, WAIT_MS);
	if (ret)
		return ret;
	while ((ret = reap(b, &sig_done)) > 0)
		;
	if (ret < 0)
		return ret;
	t = ticks();
	if (row) {
		double s = ticks_us(t - start) / 1e6;

		row->avg = (double)n * (double)size / (1 << 20) / s;
		row->peak = peak > row->avg ? peak : row->avg;
		row->mpps = (double)n / s / 1e6;
	}
	return 0;
}

static int run_bw(struct bench *b, size_t size, long iters, struct bw_row *row)
{
	int ret = size_begin(b);
	/* the warm-up writes the whole span once: the first write to a page
	 * maps it (a fault per page), which the job's reused slots pay once */
	long warm = iters / 10 + 10, whole = (long)(b->region / size);

	/* rank 0 is the passive target, as in ib_write_bw */
	if (!ret && b->rank == 1)
		ret = bw_loop(b, size, warm > whole ? warm : whole, NULL);
	if (!ret && b->rank == 1)
		ret = bw_loop(b, size, iters, row);
	if (!ret)
		ret = size_end(b);
	return ret;
}

/* ---- output ----------------------------------------------------------- */

#define RULE                                                                \
	"-----------------------------------------------------------------" \
	"----------------------------------------------------------------\n"

static long default_iters(const struct bench_params *p, size_t size)
{
	if (p->iters > 0)
		return p->iters;
	if (p->test == BENCH_WRITE_BW)
		return size >= ((size_t)1 << 20) ? 1000 : 5000;
	return 1000;
}

static void print_header(struct bench *b)
{
	const struct bench_params *p = b->p;
	const char *title = p->test == BENCH_WRITE_BW ? "RDMA_Write BW Test"
			    : p->test == BENCH_WRITE_LAT
				? "RDMA_Write Latency Test"
				: "Counter (8-byte write) Latency Test";

	printf(RULE);
	printf("                    %s\n", title);
	printf(" Backend         : %s\n",
	       frr_tp_backend_name(frr_tp_backend_of(b->ctx)));
	printf(" Device          : %s\n", frr_tp_device_name(b->ctx));
	printf(" Number of eps   : 1\t\tConnection : %s\n",
	       p->local ? "local (forked peer)" : "TCP side channel");
	if (p->all)
		printf(" Sizes           : 2 .. %zu bytes (-a)\n", SWEEP_MAX);
	else
		printf(" Size            : %zu bytes\n", p->size);
	if (p->iters > 0)
		printf(" Iterations      : %ld\n", p->iters);
	else
		printf(" Iterations      : default (%s)\n",
		       p->test == BENCH_WRITE_BW ? "5000, 1000 from 1 MiB"
						 : "1000");
	printf(" Warm-up         : iterations/10 + 10, not measured\n");
	if (p->test == BENCH_WRITE_BW)
		printf(" Signaled        : every %d writes, %d outstanding\n",
		       SIG_EVERY, TX_DEPTH);
	else
		printf(" Measured        : RTT/2 of a write ping-pong (%s)\n",
		       p->test == BENCH_COUNTER_LAT
			   ? "frr_tp_write_u64, acquire load"
			   : "last byte polled, like ib_write_lat");
	printf(" CPU pinning     : %s\n",
	       p->cpu >= 0 || p->local ? "yes" : "no");
	printf(RULE);
	if (p->test == BENCH_WRITE_BW)
		printf(" #bytes     #iterations    BW peak[MB/sec]    BW "
		       "average[MB/sec]   MsgRate[Mpps]\n");
	else
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  "
		       "t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
		       "99%% percentile[usec]   99.9%% percentile[usec] \n");
	fflush(stdout);
}

static void json_begin(struct bench *b)
{
	if (!b->json)
		return;
	fprintf(b->json,
		"{\n  \"test\": \"%s\",\n  \"backend\": \"%s\",\n  "
		"\"device\": \"%s\",\n  \"results\": [",
		bench_test_name(b->p->test),
		frr_tp_backend_name(frr_tp_backend_of(b->ctx)),
		frr_tp_device_name(b->ctx));
}

/* 0, or the error of writing the --json file (logged) */
static int json_end(struct bench *b)
{
	FILE *f = b->json;

	if (!f)
		return 0;
	b->json = NULL;
	fprintf(f, "\n  ]\n}\n");
	return frr_file_close(f, b->p->json, "bench: --json");
}

static void print_lat(struct bench *b, size_t size, long n,
		      const struct lat_row *r)
{
	printf(" %-7zu %-10ld %-14.2f %-12.2f %-18.2f %-14.2f %-15.2f %-22.2f "
	       "%-.2f\n",
	       size, n, r->min, r->max, r->typical, r->avg, r->stdev, r->p99,
	       r->p999);
	fflush(stdout);
	if (b->json)
		fprintf(b->json,
			"%s\n    {\"bytes\": %zu, \"iterations\": %ld, "
			"\"t_min_us\": %.4f, \"t_max_us\": %.4f, "
			"\"t_typical_us\": %.4f, \"t_avg_us\": %.4f, "
			"\"t_stdev_us\": %.4f, \"p99_us\": %.4f, "
			"\"p999_us\": %.4f}",
			b->json_rows++ ? "," : "", size, n, r->min, r->max,
			r->typical, r->avg, r->stdev, r->p99, r->p999);
}

static void print_bw(struct bench *b, size_t size, long n,
		     const struct bw_row *r)
{
	printf(" %-10zu %-14ld %-18.2f %-20.2f %-.6f\n", size, n, r->peak,
	       r->avg, r->mpps);
	fflush(stdout);
	if (b->json)
		fprintf(b->json,
			"%s\n    {\"bytes\": %zu, \"iterations\": %ld, "
			"\"bw_peak_mib_s\": %.3f, \"bw_avg_mib_s\": %.3f, "
			"\"msg_rate_mpps\": %.6f}",
			b->json_rows++ ? "," : "", size, n, r->peak, r->avg,
			r->mpps);
}

/* ---- set-up ----------------------------------------------------------- */

static int bench_open(struct bench *b)
{
	const struct bench_params *p = b->p;
	struct frr_tp_config cfg = { .backend = p->backend,
				     .job_token = b->oob->job_token,
				     .job_secret = b->oob->secret,
				     .rank = b->rank,
				     .nranks = 2,
				     .device = p->device,
				     .gid_index = p->gid_index,
				     .backend_hint = "use --backend shm",
				     .device_hint = "fix -d / --ib-dev",
				     .doctor_hint = "run 'flexrr doctor'" };
	struct frr_tp_addr addrs[2], me;
	struct frr_tp_desc descs[2], d;
	int ret;

	ret = frr_tp_open(&cfg, &b->ctx);
	if (ret)
		return ret;
	ret = frr_tp_addr_get(b->ctx, &me);
	if (!ret)
		ret = frr_oob_allgather(b->oob, &me, sizeof(me), addrs, 30000);
	if (!ret)
		ret = frr_tp_connect_all(b->ctx, addrs, 2, 30000, b->eps);
	if (ret)
		return ret;
	b->ep = b->eps[1 - b->rank];
	ret = frr_tp_mr_alloc(b->ctx, b->region, FRR_TP_ACCESS_REMOTE_WRITE,
			      &b->recv);
	if (!ret)
		ret = frr_tp_mr_alloc(b->ctx, b->region, FRR_TP_ACCESS_LOCAL,
				      &b->src);
	if (!ret)
		ret = frr_tp_mr_export(b->recv, &d);
	if (!ret)
		ret = frr_oob_allgather(b->oob, &d, sizeof(d), descs, 30000);
	if (!ret)
		ret = frr_tp_rmr_import(b->ep, &descs[1 - b->rank], &b->rmr);
	if (!ret)
		memset(frr_tp_mr_ptr(b->src), 0xa5, b->region);
	return ret;
}

static void bench_close(struct bench *b)
{
	if (b->rmr)
		frr_tp_rmr_release(b->rmr);
	if (b->src)
		frr_tp_mr_free(b->src);
	if (b->recv)
		frr_tp_mr_free(b->recv);
	for (int r = 0; r < 2; r++)
		if (b->eps[r])
			frr_tp_ep_close(b->eps[r]);
	if (b->ctx)
		frr_tp_close(b->ctx);
	free(b->samples);
}

static int run_size(struct bench *b, size_t size)
{
	long iters = default_iters(b->p, size);
	struct lat_row lr;
	struct bw_row br;
	int ret;

	if (b->p->test == BENCH_WRITE_BW) {
		ret = run_bw(b, size, iters, &br);
		if (!ret && b->rank == 1)
			print_bw(b, size, iters, &br);
	} else {
		ret = run_lat(b, size, iters, &lr);
		if (!ret && b->rank == 1)
			print_lat(b, size, iters, &lr);
	}
	return ret;
}

static void pin(const struct bench_params *p, int rank)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int cpu = p->cpu >= 0 ? p->cpu : p->local ? rank : -1;
	cpu_set_t set;

	if (cpu < 0 || ncpu < 1)
		return;
	if (p->local && ncpu >= 2)
		cpu = (int)(cpu % ncpu);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		frr_warn("bench: cannot pin rank %d to CPU %d", rank, cpu);
}

int bench_run(struct frr_oob *oob, const struct bench_params *p)
{
	struct bench b = { .p = p, .oob = oob, .rank = oob->rank };
	long max_iters = p->iters > 0 ? p->iters : 5000;
	int ret, err;

	pin(p, b.rank);
	clock_calibrate();
	b.max_size = p->all ? SWEEP_MAX : p->size;
	if (p->test == BENCH_COUNTER_LAT)
		b.max_size = 8;
	b.region = b.max_size;
	if (p->test == BENCH_WRITE_BW && p->span > b.region)
		b.region = p->span;
	b.samples = calloc((size_t)max_iters + 1, sizeof(double));
	if (!b.samples)
		return -ENOMEM;
	ret = bench_open(&b);
	if (ret)
		goto close;
	if (b.rank == 1 && p->json) {
		/* refused (logged) and run without it, as before */
		if (frr_file_create(p->json, "bench: --json", &b.json))
			b.json = NULL;
	}
	if (b.rank == 1 || !p->local)
		print_header(&b);
	json_begin(&b);
	if (p->all && p->test != BENCH_COUNTER_LAT) {
		for (size_t s = 2; s <= SWEEP_MAX && !ret; s *= 2)
			ret = run_size(&b, s);
	} else {
		ret = run_size(&b, b.max_size);
	}
	err = json_end(&b);
	if (!ret)
		ret = err;
	if ((b.rank == 1 || !p->local) && !ret)
		printf(RULE);
close:
	bench_close(&b);
	return ret;
}
