// SPDX-License-Identifier: MIT
/* A loaded data set cut into workers' partitions. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "mf.h"

void mf_data_free(struct mf_data *d)
{
	free(d->ratings);
	free(d->user_part);
	memset(d, 0, sizeof(*d));
}

void mf_part_free(struct mf_part *p)
{
	free(p->train);
	free(p->test);
	free(p->users);
	memset(p, 0, sizeof(*p));
}

/*
 * Users in a random order, each user's ratings together and shuffled.  Why
 * not all ratings shuffled: RapidReassignment hands the tail of a clock's
 * list to a helper, which runs it from the rows as they were at the clock's
 * start, in parallel with the owner's head.  With ratings shuffled every
 * user of the partition has ratings in both, so both runs move the same user
 * row from the same start and the row moves twice (measured, issue 11:
 * BSP with reassignment diverged in one run of three; FlexRR needed 10-11
 * clocks to the demo's target where SSP needs 8).  Grouped, the tail holds
 * whole users the owner does not touch in that clock, but for the one user
 * the cut falls in, and FlexRR needs 8.  BSP reaches the target at the same
 * clock either way (docs/apps/mf.md has the runs).  In place (a bucket
 * permutation, O(n)): no second copy of the ratings at load.
 */
int mf_order_by_user(struct mf_rating *r, uint64_t n, uint32_t nusers,
		     uint64_t seed)
{
	uint32_t *rank = malloc(sizeof(*rank) * ((size_t)nusers + 1));
	uint64_t *next = calloc((size_t)nusers + 1, sizeof(*next));
	uint64_t *end = malloc(sizeof(*end) * ((size_t)nusers + 1));
	struct mf_rng g = { frr_mix64(seed ^ 0x6f72646572757372ull) };
	int ret = -ENOMEM;

	if (!rank || !next || !end)
		goto out;
	for (uint32_t u = 0; u < nusers; u++)
		rank[u] = u;
	mf_permute(rank, nusers, sizeof(*rank), &g);
	/* rank[u] = the position of local user u in the order */
	for (uint64_t j = 0; j < n; j++) {
		if (r[j].user >= nusers) {
			frr_err("mf: rating %" PRIu64 " has local user %" PRIu32
				" of %" PRIu32 " (a bug)",
				j, r[j].user, nusers);
			ret = -EINVAL;
			goto out;
		}
		next[rank[r[j].user]]++;
	}
	for (uint64_t k = 0, at = 0; k < nusers; k++) {
		uint64_t c = next[k];

		next[k] = at;
		at += c;
		end[k] = at;
	}
	for (uint32_t k = 0; k < nusers; k++)
		while (next[k] < end[k]) {
			uint32_t b = rank[r[next[k]].user];
			struct mf_rating t;

			if (b == k) {
				next[k]++;
				continue;
			}
			t = r[next[b]];
			r[next[b]++] = r[next[k]];
			r[next[k]] = t;
		}
	for (uint64_t k = 0, at = 0; k < nusers; k++) {
		mf_shuffle(r + at, end[k] - at, mf_hash3(seed, 0x7573, k));
		at = end[k];
	}
	ret = 0;
out:
	free(rank);
	free(next);
	free(end);
	return ret;
}

static int by_count_desc(const void *a, const void *b, void *arg)
{
	const uint64_t *count = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (count[x] != count[y])
		return count[x] > count[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

int mf_data_assign(struct mf_data *d, int nparts)
{
	uint64_t *count = calloc((size_t)d->nusers + 1, sizeof(*count));
	uint64_t *load = calloc((size_t)nparts, sizeof(*load));
	uint32_t *order = malloc(sizeof(*order) * ((size_t)d->nusers + 1));
	int *part_of = malloc(sizeof(*part_of) * ((size_t)d->nusers + 1));
	int ret = -ENOMEM;

	if (nparts < 1) {
		ret = -EINVAL;
		frr_err("mf: %d workers: need at least one", nparts);
		goto out;
	}
	if (!count || !load || !order || !part_of) {
		frr_err("mf: out of memory assigning %" PRIu32
			" users to workers",
			d->nusers);
		goto out;
	}
	for (uint64_t j = 0; j < d->n; j++)
		count[d->ratings[j].user]++;
	for (uint32_t u = 0; u < d->nusers; u++)
		order[u] = u;
	qsort_r(order, d->nusers, sizeof(*order), by_count_desc, count);
	/* largest first to the least loaded worker: within one user's
	 * count of perfect balance */
	for (uint32_t k = 0; k < d->nusers; k++) {
		int best = 0;

		for (int w = 1; w < nparts; w++)
			if (load[w] < load[best])
				best = w;
		part_of[order[k]] = best;
		load[best] += count[order[k]];
	}
	free(d->user_part);
	d->user_part = part_of;
	d->nparts = nparts;
	part_of = NULL;
	ret = 0;
out:
	free(part_of);
	free(order);
	free(load);
	free(count);
	return ret;
}

int mf_data_partition(const struct mf_data *d, int w, uint64_t seed,
		      double test_frac, struct mf_part *out)
{
	struct mf_part p = { 0 };
	uint32_t *local = malloc(sizeof(*local) * ((size_t)d->nusers + 1));
	uint64_t n = 0;
	int ret = -ENOMEM;

	if (!d->user_part || w < 0 || w >= d->nparts) {
		frr_err("mf: partition %d of %d requested before the users "
			"were assigned (a bug)",
			w, d->nparts);
		free(local);
		return -EINVAL;
	}
	if (!local)
		goto out_nomem;
	for (uint32_t u = 0; u < d->nusers; u++)
		if (d->user_part[u] == w)
			local[u] = p.nusers++;
	for (uint64_t j = 0; j < d->n; j++)
		n += d->user_part[d->ratings[j].user] == w;
	p.users = malloc(sizeof(*p.users) * ((size_t)p.nusers + 1));
	p.train = malloc(sizeof(*p.train) * (n + 1));
	if (!p.users || !p.train)
		goto out_nomem;
	for (uint32_t u = 0; u < d->nusers; u++)
		if (d->user_part[u] == w)
			p.users[local[u]] = u;
	/* training ratings from the front, held-out ones from the back */
	for (uint64_t j = 0; j < d->n; j++) {
		struct mf_rating x = d->ratings[j];

		if (d->user_part[x.user] != w)
			continue;
		int test = mf_is_test(seed, x.user, x.item, 0, test_frac);

		x.user = local[x.user];
		if (test)
			p.train[n - ++p.ntest] = x;
		else
			p.train[p.ntrain++] = x;
	}
	p.test = malloc(sizeof(*p.test) * (p.ntest + 1));
	if (!p.test)
		goto out_nomem;
	memcpy(p.test, p.train + p.ntrain, sizeof(*p.test) * p.ntest);
	ret = mf_order_by_user(p.train, p.ntrain, p.nusers,
			       mf_hash3(seed, 0x7472, (uint64_t)w));
	if (ret == -ENOMEM)
		goto out_nomem;
	if (ret) {
		free(local);
		mf_part_free(&p);
		return ret;
	}
	free(local);
	*out = p;
	return 0;

out_nomem:
	frr_err("mf: out of memory building worker %d's partition (%" PRIu64
		" ratings)",
		w, n);
	free(local);
	mf_part_free(&p);
	return ret;
}

/* cap[r] = steps / (ratings of row r among n ratings' field), 1 if none */
static float *row_caps(const struct mf_rating *r, uint64_t n, uint32_t rows,
		       int item, double steps)
{
	float *cap = malloc(sizeof(float) * ((size_t)rows + 1));
	uint32_t *cnt = calloc((size_t)rows + 1, sizeof(uint32_t));

	if (cap && cnt) {
		for (uint64_t j = 0; j < n; j++)
			cnt[item ? r[j].item : r[j].user]++;
		for (uint32_t k = 0; k < rows; k++)
			cap[k] = cnt[k] ? (float)(steps / cnt[k]) : 1.0f;
	} else {
		free(cap);
		cap = NULL;
	}
	free(cnt);
	return cap;
}

static inline int starts_user(const struct mf_work *work, uint64_t j)
{
	return !j || work[j].user != work[j - 1].user;
}

int mf_user_groups(const struct mf_work *work, uint64_t n,
		   struct mf_group **groups, uint64_t *ngroups)
{
	struct mf_group *s;
	uint64_t g = 0;

	for (uint64_t j = 0; j < n; j++)
		g += starts_user(work, j);
	s = malloc(sizeof(*s) * (g + 1));
	if (!s)
		return -ENOMEM;
	g = 0;
	for (uint64_t j = 0; j < n; j++)
		if (starts_user(work, j))
			s[g++] = (struct mf_group){ j, work[j].user };
	s[g] = (struct mf_group){ n, 0 };
	*groups = s;
	*ngroups = g;
	return 0;
}

int mf_part_work(struct mf_part *p, uint32_t nitems, double steps,
		 struct mf_work **work, float **icap)
{
	float *ucap = row_caps(p->train, p->ntrain, p->nusers, 0, steps);
	float *ic = row_caps(p->train, p->ntrain, nitems, 1, steps);
	struct mf_work *w = malloc(sizeof(*w) * (p->ntrain + 1));

	if (!ucap || !ic || !w) {
		free(ucap);
		free(ic);
		free(w);
		return -ENOMEM;
	}
	for (uint64_t j = 0; j < p->ntrain; j++) {
		const struct mf_rating *x = &p->train[j];

		w[j] = (struct mf_work){ p->users[x->user], x->item, x->r,
					 ucap[x->user] };
	}
	free(ucap);
	free(p->train);
	p->train = NULL;
	*work = w;
	*icap = ic;
	return 0;
}
