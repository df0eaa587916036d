/* SPDX-License-Identifier: MIT */
/*
 * Matrix factorization by SGD: internal interfaces shared by the app
 * (mf_app.c), the loaders (mf_load.c), the synthetic generator (mf_synth.c)
 * and the kernel (mf_sgd.c).  docs/apps/mf.md is the user's view.
 *
 * Model: r(u,i) ~ mu + b_u + b_i + p_u . q_i.  A user row of the "user"
 * table is [p_u (rank floats) | b_u]; an item row of "item" is [q_i | b_i].
 *
 * Work items are training ratings.  Ratings are partitioned by user (every
 * rating of a user belongs to one partition), so a user row is written for
 * one partition only and the SSP staleness that remains is on item rows.  A
 * partition is a pure function of (data, seed, part, nparts): any process
 * can build any partition (the runtime may load others' partitions).
 */
#ifndef FLEXRR_APPS_MF_H
#define FLEXRR_APPS_MF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "flexrr/base.h"

#define MF_MAX_RANK 1024
#define MF_ID_MAX UINT32_MAX /* raw ids in files: 0 .. 2^32 - 1 */

/* ---- deterministic hashing and random numbers ------------------------- */
/* splitmix64 (flexrr/base.h): a counter-based generator, good enough for
 * synthetic data and shuffles, and cheap to seed from a hash of (seed,
 * what, index). */
static inline uint64_t mf_hash3(uint64_t a, uint64_t b, uint64_t c)
{
	return frr_mix64(frr_mix64(frr_mix64(a) ^ b) ^ c);
}

struct mf_rng {
	uint64_t s;
};

static inline uint64_t mf_rng_next(struct mf_rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	return frr_mix64(r->s);
}

/* uniform in [0, 1) with 53 random bits */
static inline double mf_rng_uniform(struct mf_rng *r)
{
	return (double)(mf_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* uniform in [0, n), n > 0 (Lemire's multiply-shift; the bias is < n/2^64) */
static inline uint64_t mf_rng_below(struct mf_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)mf_rng_next(r) * n) >> 64);
}

double mf_rng_normal(struct mf_rng *r);

/* Fisher-Yates over n elements of size bytes (at most 16) drawn from g: one
 * copy for every element type (inlined, so size is a constant there). */
static inline void mf_permute(void *base, uint64_t n, size_t size,
			      struct mf_rng *g)
{
	unsigned char *a = base, t[16];

	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = mf_rng_below(g, i);

		memcpy(t, a + (i - 1) * size, size);
		memcpy(a + (i - 1) * size, a + j * size, size);
		memcpy(a + j * size, t, size);
	}
}

/* ---- ratings and partitions -------------------------------------------- */
struct mf_rating {
	uint32_t user; /* dense id; in a partition: index into part->users */
	uint32_t item; /* dense id */
	float r;
};
_Static_assert(sizeof(struct mf_rating) <= 16,
	       "mf_permute swaps through a 16-byte buffer");

/* A whole data set read from files, ids remapped densely (in raw id order,
 * so the mapping does not depend on the order of the file). */
struct mf_data {
	uint64_t n;
	struct mf_rating *ratings;
	uint32_t nusers;
	uint32_t nitems;
	double mean;	/* of all ratings */
	int *user_part; /* partition of each user, after mf_data_assign */
	int nparts;
};

/* One worker's share: training ratings (its work items, in processing
 * order) and held-out ratings (grouped by user), both with partition-local
 * user indices. */
struct mf_part {
	uint64_t ntrain;
	struct mf_rating *train;
	uint64_t ntest;
	struct mf_rating *test;
	uint32_t nusers;
	uint32_t *users; /* local index -> dense user id */
};

/* A training rating as the SGD loop reads it: the user's table row (not
 * its partition index) and its step cap inline, so a step makes no
 * lookups besides the two rows (measured at Netflix dimensions: the
 * users[] and cap lookups missed the cache as often as the row itself). */
struct mf_work {
	uint32_t user; /* dense id: the "user" table row */
	uint32_t item;
	float r;
	float ucap; /* the user's step cap in this partition */
};

void mf_data_free(struct mf_data *d);
void mf_part_free(struct mf_part *p);

/* Assign users to workers, balancing rating counts (largest first, to the
 * least loaded partition, ties to the lowest): deterministic. */
int mf_data_assign(struct mf_data *d, int nparts);
/* Build worker w's partition: the ratings of its users, a rating held out
 * when hash(seed, raw pair) < test_frac, training ratings shuffled with a
 * generator seeded from (seed, w). */
int mf_data_partition(const struct mf_data *d, int w, uint64_t seed,
		      double test_frac, struct mf_part *out);
/* Is this rating of (user, item, occurrence) held out?  Shared by files and
 * the generator so the split is the same function everywhere. */
static inline int mf_is_test(uint64_t seed, uint64_t user, uint64_t item,
			     uint64_t occurrence, double test_frac)
{
	uint64_t h = mf_hash3(seed ^ 0x7465737466726163ull, user,
			      (item << 20) ^ occurrence);

	return (double)(h >> 11) * (1.0 / 9007199254740992.0) < test_frac;
}
/* Per partition and clock, the step sizes applied to one row add up to at
 * most 'steps': step = min(lr, steps / the row's ratings in the
 * partition).  A row with many ratings would otherwise move all the way to
 * the partition's local optimum in one clock: averaged item rows and stale
 * SSP views then disagree with what the users were fitted to (measured:
 * test RMSE stuck 20% above BSP's).  Builds *work (p->train in order, with
 * the user caps) and *icap (the item caps, [nitems]), then frees p->train
 * (p->ntrain stays); -ENOMEM. */
int mf_part_work(struct mf_part *p, uint32_t nitems, double steps,
		 struct mf_work **work, float **icap);
/* A user's ratings in a work list grouped by user: where they start, and
 * the user (its table row). */
struct mf_group {
	uint64_t start;
	uint32_t user;
};
/* The groups of work[0, n) in order, (*groups)[*ngroups].start = n;
 * -ENOMEM. */
int mf_user_groups(const struct mf_work *work, uint64_t n,
		   struct mf_group **groups, uint64_t *ngroups);
/* Shuffle ratings in place (Fisher-Yates) with a generator seeded by seed. */
void mf_shuffle(struct mf_rating *r, uint64_t n, uint64_t seed);
/* A partition's training order: its users (local ids < nusers) in a random
 * order, each user's ratings together, shuffled (mf_data.c says why);
 * -ENOMEM, -EINVAL for a user id out of range. */
int mf_order_by_user(struct mf_rating *r, uint64_t n, uint32_t nusers,
		     uint64_t seed);

/* ---- file formats ------------------------------------------------------ */
enum mf_format {
	MF_FMT_AUTO = 0,
	MF_FMT_NETFLIX, /* "MOVIE:" blocks of "user,rating,date" */
	MF_FMT_ML_DAT,	/* MovieLens ratings.dat: user::item::rating::ts */
	MF_FMT_ML_CSV,	/* MovieLens ratings.csv: header, user,item,rating,ts */
	MF_FMT_TRIPLES, /* "user item rating", whitespace separated */
};

/* "netflix", "movielens" (dat or csv, told apart by content), "triples";
 * -EINVAL for anything else. */
int mf_format_parse(const char *s, enum mf_format *out);
const char *mf_format_name(enum mf_format f);
/* Read paths[0..npaths) (gzip or plain) in 'fmt' (MF_FMT_AUTO: detect from
 * the first file's first line); ids remapped densely.  Errors name the file,
 * line (or byte offset) and what was expected; -EINVAL / -EIO / -ENOMEM. */
int mf_load_files(const char *const *paths, int npaths, enum mf_format fmt,
		  struct mf_data *out);
/* Sharded reading: shard k of n holds, of every file in turn, the ratings
 * on the lines that start in bytes [size*k/n, size*(k+1)/n), in file
 * order, with raw ids (nusers, nitems, mean unset).  Joining shards
 * 0..n-1 in order (mf_data_join: remaps ids, sets the mean, frees the
 * shards) gives exactly what mf_load_files gives for one file (for
 * several, join file by file: mf_input.c).  -ENOTSUP, logged, for
 * a file that cannot be split (gzip input; the Netflix format, whose
 * rating lines do not name their movie): read it whole. */
int mf_load_shard(const char *const *paths, int npaths, enum mf_format fmt,
		  int k, int n, struct mf_data *out);
int mf_data_join(struct mf_data *shards, int n, struct mf_data *out);
/* Dense ids and the mean of raw ratings raw[0..n) (malloc'ed; taken, also
 * on failure): what mf_load_files does after reading. */
int mf_data_finish(struct mf_rating *raw, uint64_t n, struct mf_data *out);

/* ---- a run's input: files read in pieces or whole (mf_input.c) --------- */
/* Piece k of n (frr_app_ops share): of every file, the lines starting in
 * its k-th byte range; files that cannot be split (gzip, Netflix) or
 * 'whole' make every process read every file.  gather joins the pieces
 * in file order: the data is then exactly what mf_load_files gives. */
struct mf_input {
	const char *const *paths;
	int npaths;
	enum mf_format fmt;
	int whole; /* read every file whole (--read-whole, or unsplittable) */
	int nparts;
	int leader;
	uint64_t seed;
	double test_frac;
	struct mf_data data; /* assigned to nparts partitions */
	int have_data;
	uint8_t *piece; /* share's blob, until gather */
	float mu;	/* mean training rating */
};

int mf_input_share(struct mf_input *in, int k, int n, const void **blob,
		   size_t *len);
int mf_input_gather(struct mf_input *in, const void *const *blobs,
		    const size_t *lens, int n);
/* The data, read whole now if share/gather did not run (or it was
 * dropped), then partition part of it. */
int mf_input_partition(struct mf_input *in, int part, struct mf_part *out);
int mf_input_ready(struct mf_input *in);
void mf_input_drop(struct mf_input *in);

/* ---- model files (--save / --load) ------------------------------------ */
/* A header, then the user rows and the item rows (cols floats each), in
 * host byte order: models move between runs on like machines. */
#define MF_MODEL_MAGIC "FRRMF01"
struct mf_model_hdr {
	char magic[8];
	uint32_t rank;
	uint32_t cols;
	uint64_t nusers;
	uint64_t nitems;
	double mu;
};

/* Read a model saved for the shape in 'want' (magic ignored): on success
 * *rows holds (nusers + nitems) * cols finite floats (malloc'ed).  Errors
 * name the file and byte: another shape, a non-finite value, a short file
 * or data after the last row; -EINVAL / -EIO / -ENOMEM. */
int mf_model_read(const char *path, const struct mf_model_hdr *want,
		  float **rows);
struct frr_eval_ctx;
/* Write the model of h's shape, rows read with frr_eval_row_read (table 0
 * users, 1 items), beside path and renamed over it: a failed save keeps
 * the old model. */
int mf_model_write(struct frr_eval_ctx *ec, const struct mf_model_hdr *h,
		   const char *path);

/* ---- synthetic data ---------------------------------------------------- */
/* Low-rank truth plus Gaussian noise: r = mean + p*_u . q*_i + noise * N(0,1)
 * with p*, q* entries N(0, (signal^2/rank)^(1/2)) so p*.q* has standard
 * deviation 'signal'.  User u's rating count is about
 * ratings/users * (1-a) x^-a (x uniform per user, a = user_skew: a power law
 * of mean ratings/users), capped at items; items are drawn with density
 * proportional to x^-item_skew (popular items first).  Everything is a pure
 * function of (seed, user): partitions are generated independently and the
 * data set does not depend on the number of workers. */
struct mf_synth {
	uint32_t users;
	uint32_t items;
	uint64_t ratings; /* target; the generated count is close to it */
	int rank;	  /* of the truth */
	double mean;
	double signal;
	double noise;
	double user_skew; /* 0 <= a < 1 */
	double item_skew; /* 0 <= a < 1 */
	uint64_t seed;
};

void mf_synth_defaults(struct mf_synth *s);
/* "USERS,ITEMS,RATINGS" or "netflix" (480189,17770,100000000). */
int mf_synth_parse(const char *spec, struct mf_synth *s);
/* Partition w of nparts gets users u with u % nparts == w. */
int mf_synth_partition(const struct mf_synth *s, int w, int nparts,
		       double test_frac, uint64_t split_seed,
		       struct mf_part *out);

/* ---- the SGD kernel ---------------------------------------------------- */
struct mf_hyper {
	int rank;
	float lr;      /* this clock's step size (user rows) */
	float lr_item; /* the same for item rows */
	float reg;     /* L2 on factors */
	float breg;    /* L2 on biases */
	float mu;      /* global mean */
};

/* p . q over rank factors in a fixed order: 8 running sums (factor f goes
 * to sum f mod 8), added pairwise at the end.  Unlike one sequential sum
 * this vectorizes (SSE2: two 4-float vectors, AVX2: one of 8) with the same
 * result at every vector width; only FMA contraction (simd.h's AVX2
 * variants) changes the last bits. */
static inline float mf_dot(const float *p, const float *q, int rank)
{
	float s[8] = { 0 };
	int f = 0;

	for (; f + 8 <= rank; f += 8)
		for (int l = 0; l < 8; l++)
			s[l] += p[f + l] * q[f + l];
	for (; f < rank; f++)
		s[f & 7] += p[f] * q[f];
	return ((s[0] + s[4]) + (s[2] + s[6])) +
	       ((s[1] + s[5]) + (s[3] + s[7]));
}

/* Prediction for a user row p and item row q (rank factors + bias each). */
static inline float mf_predict(const float *p, const float *q, int rank,
			       float mu)
{
	return mu + p[rank] + q[rank] + mf_dot(p, q, rank);
}

/* One SGD step on rating r: updates p and q in place.  Returns the error
 * before the step (r - prediction).  (Through the runtime p and q are the
 * worker cache's rows: the runtime derives the updates it pushes from them,
 * so the step has no delta stores of its own.) */
static inline float mf_sgd_step(float *restrict p, float *restrict q,
				const struct mf_hyper *h, float r)
{
	const int k = h->rank;
	const float e = r - mf_predict(p, q, k, h->mu);
	const float lr = h->lr, lri = h->lr_item;

	for (int f = 0; f < k; f++) {
		const float pf = p[f], qf = q[f];

		p[f] = pf + lr * (e * qf - h->reg * pf);
		q[f] = qf + lri * (e * pf - h->reg * qf);
	}
	p[k] += lr * (e - h->breg * p[k]);
	q[k] += lri * (e - h->breg * q[k]);
	return e;
}

/* Plain-array SGD for tests and the throughput benchmark: one pass over
 * ratings (user = dense id into P, item into Q); returns the sum of squared
 * errors before each step. */
double mf_sgd_pass(float *P, float *Q, const struct mf_rating *ratings,
		   uint64_t n, const struct mf_hyper *h);
/* Sum of squared errors of the model on ratings, no update. */
double mf_sse(const float *P, const float *Q, const struct mf_rating *ratings,
	      uint64_t n, int rank, float mu);
/* Deterministic initial row: small N(0, 0.1/sqrt(rank)) factors, zero
 * bias; a function of (seed, table, row) only. */
void mf_init_row(uint64_t seed, int table, uint64_t row, float *out, int rank);

#endif /* FLEXRR_APPS_MF_H */
