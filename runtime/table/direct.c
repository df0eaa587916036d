// SPDX-License-Identifier: MIT
/*
 * Rows a worker applies itself (docs/runtime.md "Rows only their writer
 * declares").  A row that exactly one partition of the job declares
 * (part_rows: MF's user rows, a document's own row) is stored by that
 * partition's rank (table/place.c).  Under SSP nothing but that
 * partition's worker writes it, so its update needs no batch: at the
 * flush the worker adds its change to the shard's row in place, and the
 * shard pushes the row to the ranks holding it (its standby copy) with
 * the clock's other rows.  What that saves, per worker: the snapshot of
 * each such row (its copy can only change by this worker's own earlier
 * batches, and there are none), their chunks in flight for slack + 1
 * clocks and their read-my-writes records; the shard's apply of them.
 *
 * With reassignment (flexrr, and rr with slack) a helper runs some of the
 * partition's items too, and its help batch of them reaches the shard as
 * before: the worker then keeps its snapshot (its change is value - value
 * at the fetch, whatever a help batch added meanwhile), and the row's
 * read-modify-writes are serialised by the partition's mutex, taken once
 * per flush by the worker and once per help chunk by the server.  Not
 * with backups or lb-bsp (a cut or a plan, slack 0 anyway), ADD tables
 * without compensation only, not --eager (whose per-batch words count
 * own batches), not with --checkpoint (a cut at clock C must not hold a
 * worker's clock C + 1, which under slack it may have flushed already),
 * and not in BSP (slack 0): there the shard applies a clock only when all
 * of it is in, which keeps what evaluation reads exact; a row added in
 * place would show the next clock early.  A batch of another partition
 * that writes such a row anyway (a row its part_rows did not declare)
 * fails the job, naming both partitions: the two writers would race.  Env
 * FLEXRR_DIRECT=0 turns it off (to measure against, as FLEXRR_HOLD_ALL
 * does for held rows).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "table.h"

#define NT FRR_MAX_TABLES

struct frr_direct {
	int ring;	    /* clocks of ranges kept: slack + 2 */
	uint64_t words[NT]; /* bitmap words of a table */
	uint64_t *bits[NT]; /* [thread][words]: the thread's rows */
	uint64_t *any[NT];  /* every thread's, or NULL: none */
	uint64_t nrows[NT]; /* rows applied in place, all threads */
	uint64_t *lo, *hi;  /* [(thread x NT + t) x ring]: local rows */
	/* with reassignment: per thread, its partition's rows' writes (the
	 * worker's flush, the server's apply of a help chunk); NULL without */
	pthread_mutex_t *mu;
	int nmu;
	/* the first foreign write the server met (0: none): table + 1, row,
	 * the writing partition */
	int bad_t, bad_part;
	uint64_t bad_row;
};

static int env_off(void)
{
	const char *e = getenv("FLEXRR_DIRECT");

	return e && strcmp(e, "0") == 0;
}

int frr_direct_table_ok(const struct frr_rt *rt, int t)
{
	const struct frr_table_spec *s = &rt->tb->spec[t];
	const struct frr_hold *h = rt->tb->hold;

	if (env_off() || !frr_rt_has_part_rows(rt->app) || rt->eff_slack <= 0 ||
	    rt->eager || rt->lb_history || rt->backups || rt->test_break_ssp ||
	    rt->prm->ckpt_dir)
		return 0;
	if (s->rule != FRR_UPDATE_ADD || (s->flags & FRR_TABLE_COMPENSATED))
		return 0;
	/* P > 1: rows placed with their only writer's rank (table/place.c) */
	return rt->P == 1 || (h && h->mine[t]);
}

/* Keep in thread q's bits only rows no other own partition declared and
 * (P > 1) that no other rank declared; their union and count. */
static void keep_solo(struct frr_rt *rt, struct frr_direct *d, int t)
{
	const uint64_t *mine = rt->P > 1 ? rt->tb->hold->mine[t] : NULL;
	uint64_t W = d->words[t];

	for (uint64_t w = 0; w < W; w++) {
		uint64_t once = 0, twice = 0;

		for (int q = 0; q < rt->T; q++) {
			twice |= once & d->bits[t][q * W + w];
			once |= d->bits[t][q * W + w];
		}
		for (int q = 0; q < rt->T; q++) {
			uint64_t *b = &d->bits[t][q * W + w];

			*b &= ~twice & (mine ? mine[w] : ~0ull);
			d->any[t][w] |= *b;
			d->nrows[t] += (uint64_t)__builtin_popcountll(*b);
		}
	}
}

static void direct_free(struct frr_direct *d)
{
	if (!d)
		return;
	for (int t = 0; t < NT; t++) {
		free(d->bits[t]);
		free(d->any[t]);
	}
	free(d->lo);
	free(d->hi);
	for (int q = 0; d->mu && q < d->nmu; q++)
		pthread_mutex_destroy(&d->mu[q]);
	free(d->mu);
	free(d);
}

/* Each own partition's declarations into its thread's bits (tables not
 * applied in place into scratch). */
static int declare_own(struct frr_rt *rt, struct frr_direct *d,
		       uint64_t *scratch)
{
	struct frr_rowset rs = { .rt = rt };

	for (int q = 0; q < rt->T; q++) {
		int v = rt->rank * rt->T + q, err;

		for (int t = 0; t < rt->tb->ntables; t++)
			rs.bits[t] =
			    d->bits[t] ? d->bits[t] + q * d->words[t] : scratch;
		err = frr_rt_part_rows(rt, v, &rs);
		if (err)
			return err;
	}
	return 0;
}

int frr_direct_plan(struct frr_rt *rt)
{
	struct frr_direct *d = NULL;
	uint64_t *scratch = NULL, most = 0;
	size_t n = (size_t)rt->T * NT;
	int any = 0, err = -ENOMEM;

	for (int t = 0; t < rt->tb->ntables; t++)
		any |= frr_direct_table_ok(rt, t);
	if (!any)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto out;
	d->ring = rt->eff_slack + 2;
	d->lo = malloc(n * (size_t)d->ring * sizeof(uint64_t));
	d->hi = calloc(n * (size_t)d->ring, sizeof(uint64_t));
	if (!d->lo || !d->hi)
		goto out;
	for (size_t i = 0; i < n * (size_t)d->ring; i++)
		d->lo[i] = UINT64_MAX;
	for (int t = 0; t < rt->tb->ntables; t++) {
		uint64_t W = frr_bit_words(rt->tb->spec[t].rows);

		d->words[t] = W;
		if (W > most)
			most = W;
		if (!frr_direct_table_ok(rt, t))
			continue;
		d->bits[t] = calloc((size_t)rt->T * W + 1, sizeof(uint64_t));
		d->any[t] = calloc(W + 1, sizeof(uint64_t));
		if (!d->bits[t] || !d->any[t])
			goto out;
	}
	scratch = malloc((most + 1) * sizeof(uint64_t));
	if (!scratch)
		goto out;
	if (rt->rr_reassign) {
		d->mu = calloc((size_t)rt->T, sizeof(*d->mu));
		if (!d->mu)
			goto out;
		for (; d->nmu < rt->T; d->nmu++)
			pthread_mutex_init(&d->mu[d->nmu], NULL);
	}
	err = declare_own(rt, d, scratch);
	for (int t = 0; t < rt->tb->ntables && !err; t++)
		if (d->bits[t]) {
			keep_solo(rt, d, t);
			frr_dbg(
			    "rank %d applies %llu rows of table %s in place",
			    rt->rank, (unsigned long long)d->nrows[t],
			    rt->tb->spec[t].name);
		}
out:
	free(scratch);
	if (err) {
		direct_free(d);
		return err;
	}
	rt->tb->direct = d;
	return 0;
}

void frr_direct_fini(struct frr_rt *rt)
{
	direct_free(rt->tb->direct);
	rt->tb->direct = NULL;
}

int frr_direct_has(const struct frr_rt *rt, int t)
{
	return rt->tb->direct && rt->tb->direct->any[t];
}

uint64_t frr_direct_rows(const struct frr_rt *rt, int t)
{
	return rt->tb->direct ? rt->tb->direct->nrows[t] : 0;
}

void frr_direct_cache(const struct frr_rt *rt, struct frr_cache *k, int q)
{
	const struct frr_direct *d = rt->tb->direct;

	for (int t = 0; t < rt->tb->ntables; t++) {
		k->t[t].direct =
		    d && d->bits[t] ? d->bits[t] + q * d->words[t] : NULL;
		k->t[t].dsnap = d && d->mu; /* helpers write them too */
	}
}

/* m += (v - m) x scale, as the shard adds a batch's change (table/batch.c
 * row_delta, shard.c apply_rows).  The shard's rows are read by the
 * server's pushes and by pulls meanwhile (SSP allows a copy part newer),
 * and by peers' one-sided reads TSan cannot see: not instrumented, as
 * the replica's reads are (table/cache.c). */
__attribute__((no_sanitize("thread"), FRR_NO_MEMCPY_IDIOM)) static void
row_apply(float *m, const float *v, uint32_t cols, float scale)
{
	if (scale == 1.0f)
		for (uint32_t j = 0; j < cols; j++)
			m[j] += v[j] - m[j];
	else
		for (uint32_t j = 0; j < cols; j++)
			m[j] += (v[j] - m[j]) * scale;
}

/* With reassignment: m += (v - s) x scale, s the value at the fetch (a
 * help batch may have changed m since). */
__attribute__((no_sanitize("thread"), FRR_NO_MEMCPY_IDIOM)) static void
row_apply_snap(float *m, const float *v, const float *s, uint32_t cols,
	       float scale)
{
	for (uint32_t j = 0; j < cols; j++)
		m[j] += (v[j] - s[j]) * scale;
}

void frr_direct_flush(struct frr_ctx *c)
{
	struct frr_rt *rt = c->rt;
	struct frr_direct *d = rt->tb->direct;
	const struct frr_hold *h = rt->tb->hold;
	struct frr_cache *k = c->cache;
	size_t at;

	if (!d || k != &c->snd->own)
		return;
	if (d->mu)
		pthread_mutex_lock(&d->mu[c->snd->local]);
	for (int t = 0; t < rt->tb->ntables; t++) {
		struct frr_tcache *tc = &k->t[t];
		uint64_t lo = UINT64_MAX, hi = 0;
		float scale = frr_batch_scale(c, tc);

		for (uint64_t i = 0; tc->direct && i < tc->ndw; i++) {
			uint64_t row = tc->wrows[tc->rows - 1 - i];
			uint64_t li = frr_place_local(h, rt->P, t, row);

			if (tc->dsnap)
				row_apply_snap(
				    rt->tb->master[t] + li * tc->cols,
				    frr_tcache_val(tc, row),
				    tc->snap +
					(uint64_t)tc->slot[row] * tc->cols,
				    tc->cols, scale);
			else
				row_apply(rt->tb->master[t] + li * tc->cols,
					  frr_tcache_val(tc, row), tc->cols,
					  scale);
			lo = li < lo ? li : lo;
			hi = li + 1 > hi ? li + 1 : hi;
		}
		tc->ndw = 0;
		/* read by the server when it applies this clock: after the
		 * batch's local last chunk, published (release) after this */
		at =
		    ((size_t)c->snd->local * NT + (size_t)t) * (size_t)d->ring +
		    (size_t)(c->clock % d->ring);
		d->lo[at] = lo;
		d->hi[at] = hi;
	}
	if (d->mu)
		pthread_mutex_unlock(&d->mu[c->snd->local]);
}

int frr_direct_lock(struct frr_rt *rt, const struct frr_slot_hdr *h)
{
	struct frr_direct *d = rt->tb->direct;
	int q = h->owner - rt->rank * rt->T;

	/* a help batch (not the owner's final one) of a partition here */
	if (!d || !d->mu || h->final || q < 0 || q >= rt->T)
		return -1;
	pthread_mutex_lock(&d->mu[q]);
	return q;
}

void frr_direct_unlock(struct frr_rt *rt, int q)
{
	if (q >= 0)
		pthread_mutex_unlock(&rt->tb->direct->mu[q]);
}

void frr_direct_range(struct frr_rt *rt, int c, uint64_t *dlo, uint64_t *dhi)
{
	const struct frr_direct *d = rt->tb->direct;

	if (!d)
		return;
	for (int q = 0; q < rt->T; q++)
		for (int t = 0; t < rt->tb->ntables; t++) {
			size_t at =
			    ((size_t)q * NT + (size_t)t) * (size_t)d->ring +
			    (size_t)(c % d->ring);

			if (d->lo[at] < dlo[t])
				dlo[t] = d->lo[at];
			if (d->hi[at] > dhi[t])
				dhi[t] = d->hi[at];
		}
}

int frr_direct_skip(struct frr_rt *rt, int t, uint64_t li, const float *g,
		    int part, int help)
{
	struct frr_direct *d = rt->tb->direct;
	uint64_t row;
	uint32_t cols = rt->tb->spec[t].cols;
	int q = part - rt->rank * rt->T;

	if (!d || !d->any[t])
		return 0;
	row = frr_place_row(rt->tb->hold, rt->P, t, rt->rank, li);
	if (!frr_bit_get(d->any[t], row))
		return 0;
	/* a helper's batch of the row's own partition: applied, under the
	 * partition's mutex (frr_direct_lock) */
	if (help && q >= 0 && q < rt->T &&
	    frr_bit_get(d->bits[t] + (size_t)q * d->words[t], row))
		return 0;
	/* a dense range of another batch carries it as zeros: nothing */
	for (uint32_t j = 0; j < cols && !d->bad_t; j++)
		if (g[j] != 0.0f) {
			d->bad_t = t + 1;
			d->bad_row = row;
			d->bad_part = part;
		}
	return 1;
}

int frr_direct_check(struct frr_rt *rt)
{
	const struct frr_direct *d = rt->tb->direct;
	int t, q = 0;

	if (!d || !d->bad_t)
		return 0;
	t = d->bad_t - 1;
	while (q < rt->T - 1 &&
	       !frr_bit_get(d->bits[t] + (size_t)q * d->words[t], d->bad_row))
		q++;
	return frr_rt_fail(
	    rt, -EPROTO,
	    "app %s: partition %d wrote row %llu of table %s, which only "
	    "partition %d declares (part_rows): its worker adds its changes "
	    "to that row in place, so a second writer would race; declare "
	    "every row a partition writes (frr_rows_add)",
	    rt->app->name, d->bad_part, (unsigned long long)d->bad_row,
	    rt->tb->spec[t].name, rt->rank * rt->T + q);
}
