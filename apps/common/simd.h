/* SPDX-License-Identifier: MIT */
/*
 * Runtime dispatch of the apps' hot loops to the host's vector units, the
 * one copy of the mechanism.  The build stays portable (x86-64 baseline,
 * SSE2): a kernel written once as an always-inline body is compiled twice,
 * for the baseline and for AVX2 + FMA (__attribute__((target))), and a
 * caller picks one per call of the loop (not per item) from
 * frr_simd_level(), decided once per process:
 *   FLEXRR_SIMD=off (or base, 0): the baseline everywhere;
 *   unset, auto, on: AVX2 + FMA when the CPU has both.
 * Every run on one machine takes the same variant, so seeded results stay
 * bit-for-bit reproducible there; between a host with AVX2/FMA and one
 * without they may differ in the last bits (the AVX2 variant contracts
 * a * b + c into one rounding).  Non-x86 hosts and compilers without the
 * target attribute get the baseline only (plain C, the compiler's own
 * vectorization).
 *
 * Use:
 *   static FRR_SIMD_INLINE double k_body(float *x, int n) { ... }
 *   FRR_SIMD_DEFINE(double, k, (float *x, int n), (x, n))
 * defines static k_base, k_avx2 (x86) and k (the dispatcher).
 */
#ifndef FLEXRR_APPS_SIMD_H
#define FLEXRR_APPS_SIMD_H

enum frr_simd_level {
	FRR_SIMD_BASE = 0, /* the build's baseline (x86-64: SSE2) */
	FRR_SIMD_AVX2 = 1, /* x86-64 with AVX2 and FMA */
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    defined(__has_attribute)
#if __has_attribute(target)
#define FRR_SIMD_X86 1
#endif
#endif

/* The level the dispatchers use: read once (FLEXRR_SIMD, the CPU). */
enum frr_simd_level frr_simd_level(void);
/* The best level this CPU runs, whatever FLEXRR_SIMD says. */
enum frr_simd_level frr_simd_host(void);
/* Use 'level' from now on (tests compare the variants): -ENOTSUP if the
 * CPU cannot run it, -EINVAL for an unknown level. */
int frr_simd_set(enum frr_simd_level level);
const char *frr_simd_name(enum frr_simd_level level);

#define FRR_SIMD_INLINE inline __attribute__((always_inline))

#ifdef FRR_SIMD_X86
#define FRR_SIMD_AVX2_FN(ret, name, params, stmt)                         \
	__attribute__((target("avx2,fma"))) static ret name##_avx2 params \
	{                                                                 \
		stmt;                                                     \
	}
#define FRR_SIMD_PICK(name) \
	(frr_simd_level() == FRR_SIMD_AVX2 ? name##_avx2 : name##_base)
#else
#define FRR_SIMD_AVX2_FN(ret, name, params, stmt)
#define FRR_SIMD_PICK(name) name##_base
#endif

/* From name##_body (FRR_SIMD_INLINE) returning ret: name##_base,
 * name##_avx2 and the dispatcher name, all static. */
#define FRR_SIMD_DEFINE(ret, name, params, args)                     \
	static ret name##_base params                                \
	{                                                            \
		return name##_body args;                             \
	}                                                            \
	FRR_SIMD_AVX2_FN(ret, name, params, return name##_body args) \
	static ret name params                                       \
	{                                                            \
		return FRR_SIMD_PICK(name) args;                     \
	}

/* The same for a body returning void. */
#define FRR_SIMD_DEFINE_VOID(name, params, args)               \
	static void name##_base params                         \
	{                                                      \
		name##_body args;                              \
	}                                                      \
	FRR_SIMD_AVX2_FN(void, name, params, name##_body args) \
	static void name params                                \
	{                                                      \
		FRR_SIMD_PICK(name) args;                      \
	}

#endif
