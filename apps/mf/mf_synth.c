// SPDX-License-Identifier: MIT
/* Synthetic ratings: low-rank truth plus noise, power-law popularity.  Every
 * value is a pure function of (seed, user), so any rank can generate any
 * worker's partition without seeing the others. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "mf.h"

/* hash domains, so the streams of one user never overlap */
enum { SYN_COUNT = 1, SYN_RATINGS, SYN_PTRUE, SYN_QTRUE };

void mf_synth_defaults(struct mf_synth *s)
{
	*s = (struct mf_synth){
		.users = 480189,
		.items = 17770,
		.ratings = 100000000,
		.rank = 10,
		.mean = 3.6,
		.signal = 1.0,
		.noise = 0.5,
		.user_skew = 0.4,
		.item_skew = 0.4,
		.seed = 1,
	};
}

/* decimal digits only: no sign, no spaces, no overflow */
static int parse_count(const char **s, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = *s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*s = p;
	*out = v;
	return 0;
}

int mf_synth_parse(const char *spec, struct mf_synth *s)
{
	const char *p = spec;
	uint64_t u, i, n;

	if (!strcmp(spec, "netflix")) {
		s->users = 480189;
		s->items = 17770;
		s->ratings = 100480507; /* the Netflix Prize training set */
		return 0;
	}
	if (parse_count(&p, &u) || *p++ != ',' || parse_count(&p, &i) ||
	    *p++ != ',' || parse_count(&p, &n) || *p || u == 0 || i == 0 ||
	    n == 0 || u > UINT32_MAX || i > UINT32_MAX) {
		frr_err("--synthetic: expected USERS,ITEMS,RATINGS (positive "
			"integers, users and items < 2^32, e.g. "
			"10000,2000,500000) or 'netflix', got '%s'",
			spec);
		return -EINVAL;
	}
	s->users = (uint32_t)u;
	s->items = (uint32_t)i;
	s->ratings = n;
	return 0;
}

/* Rating count of user u: mean * (1-a) x^-a has mean 'mean' for x uniform
 * in (0, 1]; stochastic rounding keeps the total near the target. */
static uint64_t synth_count(const struct mf_synth *s, uint32_t u)
{
	struct mf_rng r = { mf_hash3(s->seed, SYN_COUNT, u) };
	double x = 1.0 - mf_rng_uniform(&r);
	double m = (double)s->ratings / s->users;
	double c = m * (1.0 - s->user_skew) * pow(x, -s->user_skew);

	c = floor(c + mf_rng_uniform(&r));
	return c > s->items ? s->items : (uint64_t)c;
}

static float synth_sd(const struct mf_synth *s)
{
	/* entries of sd^2 = signal / sqrt(rank) make p.q have variance
	 * rank * sd^4 = signal^2 */
	return (float)sqrt(s->signal / sqrt((double)s->rank));
}

static void synth_truth(const struct mf_synth *s, int domain, uint64_t row,
			float *out)
{
	struct mf_rng r = { mf_hash3(s->seed, (uint64_t)domain, row) };
	const float sd = synth_sd(s);

	for (int f = 0; f < s->rank; f++)
		out[f] = sd * (float)mf_rng_normal(&r);
}

static uint32_t synth_item(const struct mf_synth *s, struct mf_rng *r)
{
	/* density of x proportional to x^-a on (0, 1]: x = U^(1 / (1 - a)) */
	double x = pow(mf_rng_uniform(r), 1.0 / (1.0 - s->item_skew));
	uint64_t i = (uint64_t)(x * s->items);

	return i >= s->items ? s->items - 1 : (uint32_t)i;
}

static int synth_check(const struct mf_synth *s)
{
	if (s->rank < 1 || s->rank > MF_MAX_RANK || s->user_skew < 0 ||
	    s->user_skew >= 1 || s->item_skew < 0 || s->item_skew >= 1 ||
	    !(s->noise >= 0) || !(s->signal >= 0)) {
		frr_err("synthetic data: rank must be 1..%d, skews in [0, 1), "
			"noise and signal >= 0",
			MF_MAX_RANK);
		return -EINVAL;
	}
	return 0;
}

/* Users w, w + nparts, w + 2 nparts, ... are worker w's. */
static uint32_t synth_nusers(const struct mf_synth *s, int w, int nparts)
{
	uint64_t from_w = (uint64_t)s->users - (uint32_t)w;

	if (w < 0 || (uint32_t)w >= s->users)
		return 0;
	return (uint32_t)((from_w + (uint64_t)nparts - 1) / (uint64_t)nparts);
}

/* What the spec alone sizes comes first, so an impossible one fails before
 * minutes of counting; then room for all of the share's ratings (*total).
 * 0 or -ENOMEM, said. */
static int synth_alloc(const struct mf_synth *s, int w, int nparts,
		       struct mf_part *p, float **qtrue, uint64_t *total)
{
	uint64_t n = 0;

	p->users = malloc(sizeof(*p->users) * (p->nusers ? p->nusers : 1));
	*qtrue = malloc(sizeof(float) * (size_t)s->rank * (size_t)s->items);
	if (p->users && *qtrue) {
		for (uint32_t l = 0; l < p->nusers; l++)
			n += synth_count(s, l * (uint32_t)nparts + (uint32_t)w);
		p->train = malloc(sizeof(*p->train) * (n ? n : 1));
	}
	*total = n;
	if (!p->users || !p->train || !*qtrue) {
		frr_err("synthetic data: out of memory for worker %d's share "
			"(%" PRIu32 " users, %" PRIu32
			" items of rank %d, %" PRIu64
			" ratings); use fewer users, items or ratings, or more "
			"machines",
			w, p->nusers, s->items, s->rank, n);
		return -ENOMEM;
	}
	return 0;
}

/* One rating of local user l: the item first, then the noise, from the
 * user's stream r (the order fixes the data for a seed). */
static struct mf_rating synth_rating(const struct mf_synth *s, struct mf_rng *r,
				     uint32_t l, const float *ptrue,
				     const float *qtrue)
{
	uint32_t i = synth_item(s, r);
	const float *q = qtrue + (size_t)i * s->rank;
	float dot = 0.0f;

	for (int f = 0; f < s->rank; f++)
		dot += ptrue[f] * q[f];
	return (struct mf_rating){
		.user = l,
		.item = i,
		.r = (float)(s->mean + dot + s->noise * mf_rng_normal(r)),
	};
}

int mf_synth_partition(const struct mf_synth *s, int w, int nparts,
		       double test_frac, uint64_t split_seed,
		       struct mf_part *out)
{
	struct mf_part p = { 0 };
	float *qtrue = NULL, ptrue[MF_MAX_RANK];
	uint64_t total = 0, ntrain = 0, ntest = 0;
	int ret = synth_check(s);

	if (ret)
		return ret;
	p.nusers = synth_nusers(s, w, nparts);
	ret = synth_alloc(s, w, nparts, &p, &qtrue, &total);
	if (ret)
		goto out_free;
	for (uint32_t i = 0; i < s->items; i++)
		synth_truth(s, SYN_QTRUE, i, qtrue + (size_t)i * s->rank);

	/* training ratings fill the array from the front, held-out ones from
	 * the back, then move to their own array */
	for (uint32_t l = 0; l < p.nusers; l++) {
		uint32_t u = l * (uint32_t)nparts + (uint32_t)w;
		uint64_t c = synth_count(s, u);
		struct mf_rng r = { mf_hash3(s->seed, SYN_RATINGS, u) };

		p.users[l] = u;
		/* a user's truth is its own stream: one without ratings (most,
		 * when ratings are few against users) needs none */
		if (c)
			synth_truth(s, SYN_PTRUE, u, ptrue);
		for (uint64_t j = 0; j < c; j++) {
			struct mf_rating x =
			    synth_rating(s, &r, l, ptrue, qtrue);

			if (mf_is_test(split_seed, u, x.item, j, test_frac))
				p.train[total - ++ntest] = x;
			else
				p.train[ntrain++] = x;
		}
	}
	p.ntest = ntest;
	p.ntrain = ntrain;
	p.test = malloc(sizeof(*p.test) * (ntest ? ntest : 1));
	if (!p.test) {
		frr_err("synthetic data: out of memory for worker %d's "
			"held-out ratings",
			w);
		ret = -ENOMEM;
		goto out_free;
	}
	memcpy(p.test, p.train + ntrain, sizeof(*p.test) * ntest);
	ret = mf_order_by_user(p.train, ntrain, p.nusers,
			       mf_hash3(split_seed, 0x7472, (uint64_t)w));
	if (ret) {
		frr_err("synthetic data: cannot order worker %d's ratings "
			"(%s)",
			w, strerror(-ret));
		goto out_free;
	}
	free(qtrue);
	*out = p;
	return 0;

out_free:
	free(qtrue);
	mf_part_free(&p);
	return ret;
}
