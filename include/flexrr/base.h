/* SPDX-License-Identifier: MIT */
/*
 * The base layer: helpers every other layer uses, one copy each.
 *   logging          flexrr/log.h (included here)
 *   monotonic time   frr_now_s / frr_now_ms / frr_now_ns, frr_deadline_ts,
 *                    frr_nap_us
 *   hashing          frr_fnv1a64 (FNV-1a, 64 bit)
 *   JSON             frr_json_str (a quoted, escaped string)
 *   random numbers   frr_splitmix64 / frr_mix64 (counter-based, stateless
 *                    mixing), frr_rng_* (xoshiro256**, seeded by splitmix64)
 *   numbers in text  frr_parse_i64 / frr_parse_u64 / frr_parse_double
 *   options by table flexrr/opt.h (not included here): parsing, defaults
 *                    and --help of a command's or an app's options
 *   output files     flexrr/file.h (included here): atomic writes, outputs
 *                    and read-backs another local user cannot redirect
 * Nothing here locks or depends on another flexrr layer; only the file
 * helpers allocate (a stream each).
 */
#ifndef FLEXRR_BASE_H
#define FLEXRR_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "flexrr/export.h"
#include "flexrr/file.h"
#include "flexrr/log.h"

#ifdef __cplusplus
extern "C" {
#endif
FRR_API_BEGIN

/* ---- monotonic time (CLOCK_MONOTONIC) --------------------------------- */
double frr_now_s(void);
long long frr_now_ms(void);
uint64_t frr_now_ns(void);
/* Absolute CLOCK_REALTIME time ms from now, for pthread_*_timed* calls
 * (they take wall-clock deadlines). */
struct timespec frr_deadline_ts(int ms);
/* Sleep about us microseconds (< 1 s): the nap of every poll loop. */
void frr_nap_us(long us);

/* ---- this host ----------------------------------------------------------- */
/* Its name into buf, always terminated (cut to len - 1); on failure "?"
 * and -errno. */
int frr_hostname(char *buf, size_t len);

/* ---- hashing ----------------------------------------------------------- */
/* FNV-1a over p[0..n), continuing from h; h = 0 starts a new hash (from the
 * FNV offset basis), so frr_fnv1a64(b, nb, frr_fnv1a64(a, na, 0)) hashes a
 * then b.  Not cryptographic: integrity checks and derivations only. */
uint64_t frr_fnv1a64(const void *p, size_t n, uint64_t h);

/* ---- JSON ---------------------------------------------------------------- */
/* Write s to f as a JSON string: quoted, '"' and '\\' escaped, control
 * characters as \u00XX. */
void frr_json_str(FILE *f, const char *s);

/* ---- checked number parsing ------------------------------------------ */
/* The whole of s is one number in [lo, hi]: 0 and *out set; -EINVAL for
 * junk (empty, trailing characters, nan, inf), -ERANGE outside [lo, hi]
 * (a negative number for the unsigned form).  base as for strtoll (0: 0x
 * hex and 0 octal prefixes too).  No message: the caller names the option.
 */
int frr_parse_i64(const char *s, int base, int64_t lo, int64_t hi,
		  int64_t *out);
int frr_parse_u64(const char *s, int base, uint64_t lo, uint64_t hi,
		  uint64_t *out);
int frr_parse_double(const char *s, double lo, double hi, double *out);

/* ---- random numbers ---------------------------------------------------- */
#define FRR_GOLDEN_GAMMA 0x9e3779b97f4a7c15ull

/* splitmix64 (Steele, Lea, Flood 2014): advance *state by the golden gamma
 * and return the mixed value.  Inline: apps call it per sample. */
static inline uint64_t frr_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += FRR_GOLDEN_GAMMA);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Stateless form: the splitmix64 output for state x (x is not changed), a
 * good 64-bit mixer for keyed draws such as hash(seed, who, clock). */
static inline uint64_t frr_mix64(uint64_t x)
{
	return frr_splitmix64(&x);
}

/* xoshiro256** (Blackman, Vigna), seeded by four splitmix64 outputs:
 * deterministic on every platform.  Not thread-safe: one per thread. */
struct frr_rng {
	uint64_t s[4];
};
void frr_rng_seed(struct frr_rng *r, uint64_t seed);
uint64_t frr_rng_next(struct frr_rng *r);
/* uniform in [0, 1), 53 random bits */
double frr_rng_uniform(struct frr_rng *r);
/* uniform integer in [0, n), no modulo bias */
uint64_t frr_rng_below(struct frr_rng *r, uint64_t n);
/* standard normal (Box-Muller, one value per call, no cached state) */
double frr_rng_normal(struct frr_rng *r);

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_BASE_H */
