// SPDX-License-Identifier: MIT
/* Straggler injection: see straggler.h for the grammar and the model. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flexrr/base.h"
#include "straggler.h"
#include "trace/trace.h"

static const char *const kind_names[FRR_STRAG_NKINDS] = {
	[FRR_STRAG_SLOW_WORKER] = "slow-worker",
	[FRR_STRAG_DISRUPTED_MACHINE] = "disrupted-machine",
	[FRR_STRAG_POWER_LAW] = "power-law",
	[FRR_STRAG_PERSISTENT] = "persistent",
	[FRR_STRAG_CONTENTION] = "contention",
};

/* number of arguments each kind takes: min..max */
static const int kind_nargs_min[FRR_STRAG_NKINDS] = { 2, 3, 1, 2, 0 };
static const int kind_nargs_max[FRR_STRAG_NKINDS] = { 2, 3, 1, 2, 1 };

void frr_stragglers_usage(FILE *out)
{
	fprintf(
	    out,
	    "--stragglers SPEC, SPEC = TERM[+TERM...] (at most %d terms), "
	    "TERM one of:\n"
	    "  slow-worker:p,d            each clock each worker is slowed "
	    "with probability p\n"
	    "                             (0..1) to (1+d) times its nominal "
	    "time (d >= 0)\n"
	    "  disrupted-machine:p,d,len  a whole process runs d times "
	    "slower (d >= 1) for len\n"
	    "                             clocks (len >= 1); starts with "
	    "probability p per clock\n"
	    "  power-law:alpha            every clock, every worker takes "
	    "x ~ Pareto(1, alpha)\n"
	    "                             times its nominal time (alpha > "
	    "0, x capped at %.0f)\n"
	    "  persistent:w,f             worker w always runs f times "
	    "slower (f >= 1)\n"
	    "  contention[:w]             a CPU hog thread shares worker "
	    "w's core (default 0)\n"
	    "  none                       no stragglers\n"
	    "example: --stragglers slow-worker:0.1,1.0+contention:2\n",
	    FRR_STRAG_MAX_TERMS, FRR_STRAG_POWER_LAW_CAP);
}

static int parse_args(const char *s, double *v, int max)
{
	int n = 0;
	char *end;

	if (!*s)
		return 0;
	for (;;) {
		if (n == max)
			return -1;
		errno = 0;
		v[n++] = strtod(s, &end);
		if (end == s || errno || !isfinite(v[n - 1]))
			return -1;
		if (!*end)
			return n;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

static int is_int(double v)
{
	return v >= 0 && v < 1e6 && floor(v) == v;
}

/* Fill t from name:args; returns NULL or a message saying what is wrong. */
static const char *parse_term(char *str, struct frr_strag_term *t)
{
	char *colon = strchr(str, ':');
	double v[4];
	int k, n;

	if (colon)
		*colon = '\0';
	for (k = 0; k < FRR_STRAG_NKINDS; k++)
		if (!strcmp(str, kind_names[k]))
			break;
	if (k == FRR_STRAG_NKINDS)
		return "unknown straggler kind";
	n = colon ? parse_args(colon + 1, v, 4) : 0;
	if (n < 0 || (colon && n == 0))
		return "arguments must be comma-separated numbers";
	if (n < kind_nargs_min[k] || n > kind_nargs_max[k])
		return "wrong number of arguments";
	memset(t, 0, sizeof(*t));
	t->kind = (enum frr_strag_kind)k;
	switch (t->kind) {
	case FRR_STRAG_SLOW_WORKER:
		t->p = v[0];
		t->d = v[1];
		if (t->p < 0 || t->p > 1 || t->d < 0)
			return "slow-worker needs 0 <= p <= 1 and d >= 0";
		break;
	case FRR_STRAG_DISRUPTED_MACHINE:
		t->p = v[0];
		t->d = v[1];
		if (t->p < 0 || t->p > 1 || t->d < 1 || !is_int(v[2]) ||
		    v[2] < 1)
			return "disrupted-machine needs 0 <= p <= 1, d >= 1 "
			       "and an integer len >= 1";
		t->len = (int)v[2];
		break;
	case FRR_STRAG_POWER_LAW:
		t->alpha = v[0];
		if (t->alpha <= 0)
			return "power-law needs alpha > 0";
		break;
	case FRR_STRAG_PERSISTENT:
		if (!is_int(v[0]) || v[1] < 1)
			return "persistent needs a worker index w >= 0 and f "
			       ">= 1";
		t->worker = (int)v[0];
		t->factor = v[1];
		break;
	case FRR_STRAG_CONTENTION:
		if (n == 1 && !is_int(v[0]))
			return "contention takes a worker index w >= 0";
		t->worker = n == 1 ? (int)v[0] : 0;
		break;
	default:
		break;
	}
	return NULL;
}

int frr_stragglers_parse(const char *spec, struct frr_stragglers *out)
{
	struct frr_stragglers s;
	char buf[512], *save = NULL, *tok;
	const char *why;

	memset(&s, 0, sizeof(s));
	if (!spec || !*spec || !strcmp(spec, "none")) {
		*out = s;
		return 0;
	}
	if (strlen(spec) >= sizeof(buf)) {
		why = "too long";
		goto bad;
	}
	strcpy(buf, spec);
	for (tok = strtok_r(buf, "+", &save); tok;
	     tok = strtok_r(NULL, "+", &save)) {
		char term[512];

		snprintf(term, sizeof(term), "%s", tok);
		if (s.nterms == FRR_STRAG_MAX_TERMS) {
			why = "too many terms";
			goto bad;
		}
		why = parse_term(tok, &s.term[s.nterms]);
		if (why) {
			frr_err("invalid --stragglers term '%s': %s", term,
				why);
			goto usage;
		}
		s.nterms++;
	}
	if (!s.nterms || spec[0] == '+' || spec[strlen(spec) - 1] == '+' ||
	    strstr(spec, "++")) {
		why = "empty term";
		goto bad;
	}
	*out = s;
	return 0;
bad:
	frr_err("invalid --stragglers '%s': %s", spec, why);
usage:
	frr_stragglers_usage(stderr);
	return -EINVAL;
}

int frr_stragglers_setup(struct frr_stragglers *s, uint64_t seed, int threads,
			 int nworkers)
{
	if (threads < 1 || nworkers < threads) {
		frr_err("stragglers: bad job shape (%d threads, %d workers)",
			threads, nworkers);
		return -EINVAL;
	}
	for (int i = 0; i < s->nterms; i++) {
		const struct frr_strag_term *t = &s->term[i];

		if ((t->kind == FRR_STRAG_PERSISTENT ||
		     t->kind == FRR_STRAG_CONTENTION) &&
		    t->worker >= nworkers) {
			frr_err("--stragglers %s:%d: the job has only %d "
				"workers (0..%d); pick a worker in range",
				kind_names[t->kind], t->worker, nworkers,
				nworkers - 1);
			return -EINVAL;
		}
	}
	s->seed = seed;
	s->threads = threads;
	s->nworkers = nworkers;
	return 0;
}

void frr_stragglers_format(const struct frr_stragglers *s, char *buf,
			   size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	buf[0] = '\0';
	if (!s || !s->nterms) {
		snprintf(buf, len, "none");
		return;
	}
	for (int i = 0; i < s->nterms && o < len; i++) {
		const struct frr_strag_term *t = &s->term[i];
		const char *sep = i ? "+" : "";
		const char *n = kind_names[t->kind];
		int w = 0;

		switch (t->kind) {
		case FRR_STRAG_SLOW_WORKER:
			w = snprintf(buf + o, len - o, "%s%s:%g,%g", sep, n,
				     t->p, t->d);
			break;
		case FRR_STRAG_DISRUPTED_MACHINE:
			w = snprintf(buf + o, len - o, "%s%s:%g,%g,%d", sep, n,
				     t->p, t->d, t->len);
			break;
		case FRR_STRAG_POWER_LAW:
			w = snprintf(buf + o, len - o, "%s%s:%g", sep, n,
				     t->alpha);
			break;
		case FRR_STRAG_PERSISTENT:
			w = snprintf(buf + o, len - o, "%s%s:%d,%g", sep, n,
				     t->worker, t->factor);
			break;
		default:
			w = snprintf(buf + o, len - o, "%s%s:%d", sep, n,
				     t->worker);
			break;
		}
		if (w < 0)
			return;
		o += (size_t)w;
	}
}

/* uniform [0, 1) keyed by (seed, term, who, clock) */
static double draw(const struct frr_stragglers *s, int term, int who, int clock)
{
	uint64_t h = frr_mix64(s->seed ^ 0x5354524147ull);

	h = frr_mix64(h ^ ((uint64_t)term << 48));
	h = frr_mix64(h ^ (uint64_t)(uint32_t)who);
	h = frr_mix64(h ^ (uint64_t)(uint32_t)clock);
	return (double)(h >> 11) * 0x1.0p-53;
}

static double term_extra(const struct frr_stragglers *s, int i, int worker,
			 int clock)
{
	const struct frr_strag_term *t = &s->term[i];
	int rank = worker / s->threads;
	double u;

	switch (t->kind) {
	case FRR_STRAG_SLOW_WORKER:
		return draw(s, i, worker, clock) < t->p ? t->d : 0;
	case FRR_STRAG_DISRUPTED_MACHINE:
		/* an episode started in any of the last len clocks covers us */
		for (int c = clock; c > clock - t->len && c >= 0; c--)
			if (draw(s, i, rank, c) < t->p)
				return t->d - 1;
		return 0;
	case FRR_STRAG_POWER_LAW:
		u = 1.0 - draw(s, i, worker, clock); /* (0, 1] */
		u = pow(u, -1.0 / t->alpha);
		return (u > FRR_STRAG_POWER_LAW_CAP ? FRR_STRAG_POWER_LAW_CAP
						    : u) -
		       1;
	case FRR_STRAG_PERSISTENT:
		return worker == t->worker ? t->factor - 1 : 0;
	default:
		return 0;
	}
}

double frr_stragglers_factor(const struct frr_stragglers *s, int worker,
			     int clock)
{
	double extra = 0;

	if (!s || !s->threads)
		return 1.0;
	for (int i = 0; i < s->nterms; i++)
		extra += term_extra(s, i, worker, clock);
	return 1.0 + extra;
}

/* ---- per-worker application ------------------------------------------- */

static void *hog_main(void *arg)
{
	struct frr_strag_worker *sw = arg;
	volatile uint64_t x = 0;

	/* real interference: spin on the shared core until told to stop */
	while (!atomic_load_explicit(&sw->hog_stop, memory_order_relaxed))
		for (int i = 0; i < 4096; i++)
			x += (uint64_t)i;
	(void)x; /* read once: the spinning is the point, not the sum */
	return NULL;
}

static int hog_start(struct frr_strag_worker *sw)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int cpu = sched_getcpu(), err;

	err = pthread_attr_init(&attr);
	if (err)
		return -err;
	/* worker pinned to one CPU: take it; else the one it runs on now */
	if (!pthread_getaffinity_np(pthread_self(), sizeof(set), &set) &&
	    CPU_COUNT(&set) == 1)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpu = c;
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	atomic_store_explicit(&sw->hog_stop, 0, memory_order_relaxed);
	err = pthread_create(&sw->hog, &attr, hog_main, sw);
	pthread_attr_destroy(&attr);
	if (err) {
		frr_err("stragglers: cannot start the contention thread for "
			"worker %d: %s",
			sw->worker, strerror(err));
		return -err;
	}
	sw->hog_running = 1;
	frr_info("stragglers: contention thread competes with worker %d on "
		 "cpu %d",
		 sw->worker, cpu);
	return 0;
}

int frr_strag_worker_start(struct frr_strag_worker *sw,
			   const struct frr_stragglers *s, int worker,
			   struct frr_trace_buf *trace)
{
	memset(sw, 0, sizeof(*sw));
	sw->s = s;
	sw->trace = trace;
	sw->worker = worker;
	sw->factor = 1.0;
	sw->clock = -1;
	if (!s)
		return 0;
	for (int i = 0; i < s->nterms; i++)
		if (s->term[i].kind == FRR_STRAG_CONTENTION &&
		    s->term[i].worker == worker && !sw->hog_running)
			return hog_start(sw);
	return 0;
}

void frr_strag_worker_stop(struct frr_strag_worker *sw)
{
	if (!sw->hog_running)
		return;
	atomic_store_explicit(&sw->hog_stop, 1, memory_order_relaxed);
	pthread_join(sw->hog, NULL);
	sw->hog_running = 0;
}

void frr_strag_clock_begin(struct frr_strag_worker *sw, int clock)
{
	sw->clock = clock;
	sw->credit_ns = 0; /* a clock's delay is its own */
	sw->factor = frr_stragglers_factor(sw->s, sw->worker, clock);
	if (sw->factor > 1.0) {
		sw->delayed_clocks++;
		frr_info("stragglers: worker %d clock %d slowed x%.2f",
			 sw->worker, clock, sw->factor);
	}
}

static void pay(struct frr_strag_worker *sw)
{
	uint64_t t0 = frr_trace_now(), t1;
	struct timespec ts = {
		.tv_sec = (time_t)(sw->debt_ns / 1000000000ull),
		.tv_nsec = (long)(sw->debt_ns % 1000000000ull),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	t1 = frr_trace_now();
	/* oversleeping counts as paid: the next chunks of this clock owe less
	 * (a loaded host oversleeps by a share of the sleep; dropped, it
	 * slowed a worker by more than its factor) */
	if (t1 - t0 >= sw->debt_ns) {
		sw->credit_ns += t1 - t0 - sw->debt_ns;
		sw->debt_ns = 0;
	} else {
		sw->debt_ns -= t1 - t0;
	}
	sw->injected_ns += t1 - t0;
	frr_trace_rec(sw->trace, FRR_TR_DELAY, t0, t1, sw->clock, -1,
		      (uint64_t)(sw->factor * 100), 0);
}

void frr_strag_account(struct frr_strag_worker *sw, uint64_t work_ns)
{
	uint64_t owe;

	if (sw->factor <= 1.0)
		return;
	owe = (uint64_t)((sw->factor - 1.0) * (double)work_ns);
	if (sw->credit_ns >= owe) {
		sw->credit_ns -= owe;
		return;
	}
	sw->debt_ns += owe - sw->credit_ns;
	sw->credit_ns = 0;
	if (sw->debt_ns >= FRR_STRAG_MIN_SLEEP_NS)
		pay(sw);
}

void frr_strag_clock_end(struct frr_strag_worker *sw)
{
	if (sw->debt_ns)
		pay(sw);
}

void frr_lb_shares(int w, int h, const double *tsum, double *speed,
		   uint64_t total, uint64_t *share)
{
	uint64_t given = 0;
	double sum = 0;

	for (int v = 0; v < w; v++) {
		speed[v] = tsum[v] > 0 ? h / tsum[v] : 1.0;
		sum += speed[v];
	}
	for (int v = 0; v < w; v++) {
		share[v] = (uint64_t)floor((double)total * speed[v] / sum);
		given += share[v];
	}
	for (int v = 0; given < total; v = (v + 1) % w, given++)
		share[v]++;
}

/* Whether v gives a tail: its list is above its share by more than
 * FRR_LB_GIVE_ABOVE.  Within that the noise of the measured item times
 * (0.2% in the simulator, a few % in real runs) would make most workers
 * donors of a few items, and a donor takes nothing: at 1,024 workers a
 * helper measured 0.2% slow after helping stopped taking, and the slow
 * worker kept its tail every other clock (1.57x the ideal, 1.12x at 256
 * workers, the simulator).  A worker at most that much slow gets no help. */
static bool lb_gives(const struct frr_lb_plan *p, int v)
{
	return p->n[v] > 1 &&
	       (double)p->n[v] > (double)p->share[v] * (1 + FRR_LB_GIVE_ABOVE);
}

/* Items worker h can take and still end by time T, from its planned load
 * at its speed; none if it gives itself: a donor that took from another
 * would run others' items while its own tail runs elsewhere. */
static uint64_t lb_takes(const struct frr_lb_plan *p, int h, double T)
{
	double n = floor(T * p->speed[h]);

	if (lb_gives(p, h))
		return 0;
	return n > (double)p->load[h] ? (uint64_t)n - p->load[h] : 0;
}

/* The least time by which v's n items can be done by v and its group's
 * helpers together, each helper topped up from its planned load to that
 * time at its speed (water-filling; bisected, the same steps everywhere). */
static double lb_fill_time(const struct frr_lb_plan *p, int v, uint64_t n,
			   const int *grp, int ng)
{
	double lo = 0, hi = (double)n / p->speed[v];

	for (int it = 0; it < 64; it++) {
		double mid = (lo + hi) / 2, got = floor(mid * p->speed[v]);

		for (int i = 0; i < ng; i++)
			got += (double)lb_takes(p, grp[i], mid);
		if (got >= (double)n)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* Ranges of v's tail [.., n) to the helpers of its group: v keeps what it
 * does by the fill time, each helper takes what it can by then.  Filling
 * to the group's time, not to each helper's job-wide share, lets a group
 * absorb a slow worker's excess when the job has more workers than a
 * group (a share-capped helper took 17-20 of 64 items where ~30 were due,
 * 2 x 4 workers, a 2x persistent straggler). */
static void lb_give_tail(struct frr_lb_plan *p, int v, uint64_t n)
{
	const int *grp = p->grp + (size_t)v * (size_t)p->g;
	int ng = p->ng[v];
	double T = lb_fill_time(p, v, n, grp, ng);
	uint64_t keep = (uint64_t)fmin(floor(T * p->speed[v]), (double)n);
	uint64_t end = n, e = n - keep;

	/* the owner keeps one item: its list is never empty */
	if (e >= n)
		e = n - 1;
	for (int i = 0; i < ng && e; i++) {
		int h = grp[i];
		uint64_t can = lb_takes(p, h, T), give = e < can ? e : can;

		if (!give)
			continue;
		p->gifts[p->ngifts++] =
		    (struct frr_lb_gift){ v, h, end - give, end };
		end -= give;
		e -= give;
		p->load[h] += give;
		p->load[v] -= give;
	}
}

void frr_lb_plan(struct frr_lb_plan *p)
{
	p->ngifts = 0;
	for (int v = 0; v < p->W; v++)
		p->load[v] = p->n[v];
	/* a worker above its job-wide share gives; its group takes */
	for (int v = 0; v < p->W; v++)
		if (lb_gives(p, v))
			lb_give_tail(p, v, p->n[v]);
}
