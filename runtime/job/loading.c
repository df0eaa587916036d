// SPDX-License-Identifier: MIT
/*
 * A job's start says it is alive while the app loads its input: reading a
 * large file or generating a large synthetic data set (400 M ratings:
 * about 100 s) printed nothing until the first clock, which a user cannot
 * tell from a hang.  Rank 0 (not with -q) prints a line every
 * FRR_LOADING_EVERY_S of loading; the other ranks load alike and stay
 * quiet.  A thread of its own, because the load is the app's code, which
 * the runtime does not interrupt.
 *
 * Ranks load alike but not always as fast (one host's disk or share of a
 * file system is slower): while they load, a rank waits for the others up
 * to --load-timeout (600 s), not the --timeout (60 s) that finds a hung
 * clock.  With no heartbeats yet, a rank hung in its load is found then.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flexrr/base.h"
#include "job.h"

#define FRR_LOADING_EVERY_S 10.0

static void *notice_main(void *arg)
{
	struct frr_loading *l = arg;
	double t0 = frr_now_s();
	int n = 0;

	pthread_mutex_lock(&l->lock);
	while (!l->done) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)l->every_s;
		ts.tv_nsec += (long)((l->every_s - (time_t)l->every_s) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&l->cond, &l->lock, &ts) !=
			ETIMEDOUT ||
		    l->done)
			continue;
		fprintf(stderr,
			"flexrr: loading the input (%s), %.0f s so far%s\n",
			l->app, frr_now_s() - t0,
			n++ ? ""
			    : "; the first clock starts when every rank "
			      "has its partitions");
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* FLEXRR_TEST_LOADING_S: the interval, for tests (a load of a few
 * seconds shows it) */
static double every_s(void)
{
	const char *e = getenv("FLEXRR_TEST_LOADING_S");
	double s = e ? strtod(e, NULL) : 0;

	return s > 0 && s < 3600 ? s : FRR_LOADING_EVERY_S;
}

/* FLEXRR_TEST_LOAD_DELAY=R:S: rank R starts its load S s late (tests) */
static void test_delay(int rank)
{
	const char *e = getenv("FLEXRR_TEST_LOAD_DELAY");
	char *end;
	long r = e ? strtol(e, &end, 10) : -1;
	double s = r == rank && *end == ':' ? strtod(end + 1, NULL) : 0;
	struct timespec ts = { .tv_sec = (time_t)s };

	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	if (s > 0 && s < 3600)
		nanosleep(&ts, NULL);
}

void frr_rt_loading_begin(struct frr_rt *rt, struct frr_loading *l)
{
	pthread_condattr_t attr;

	memset(l, 0, sizeof(*l));
	l->rt = rt;
	rt->loading = 1;
	test_delay(rt->rank);
	if (rt->rank != 0 || rt->prm->quiet)
		return;
	l->app = rt->app->name;
	l->every_s = every_s();
	pthread_mutex_init(&l->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cond, &attr);
	pthread_condattr_destroy(&attr);
	/* no notice is no failure: the job runs without it */
	l->started = !pthread_create(&l->th, NULL, notice_main, l);
	if (!l->started) {
		pthread_cond_destroy(&l->cond);
		pthread_mutex_destroy(&l->lock);
	}
}

void frr_rt_loading_end(struct frr_loading *l)
{
	l->rt->loading = 0;
	if (!l->started)
		return;
	pthread_mutex_lock(&l->lock);
	l->done = 1;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->th, NULL);
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	l->started = 0;
}
