// SPDX-License-Identifier: MIT
/* frr_rng_*: xoshiro256** seeded by splitmix64 (deterministic everywhere). */
#include <math.h>

#include "flexrr/base.h"

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void frr_rng_seed(struct frr_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = frr_splitmix64(&x);
}

uint64_t frr_rng_next(struct frr_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

double frr_rng_uniform(struct frr_rng *r)
{
	return (double)(frr_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t frr_rng_below(struct frr_rng *r, uint64_t n)
{
	/* rejection: no modulo bias, deterministic */
	uint64_t lim, x;

	if (n <= 1)
		return 0;
	lim = UINT64_MAX - UINT64_MAX % n;
	do
		x = frr_rng_next(r);
	while (x >= lim);
	return x % n;
}

double frr_rng_normal(struct frr_rng *r)
{
	/* Box-Muller, one value per call: no hidden cached state */
	double u1 = frr_rng_uniform(r), u2 = frr_rng_uniform(r);

	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
