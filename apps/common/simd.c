// SPDX-License-Identifier: MIT
/* The level the apps' dispatched kernels run at (simd.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "simd.h"

/* -1 until decided; threads that race to decide compute the same value */
static int simd_level = -1;

enum frr_simd_level frr_simd_host(void)
{
#ifdef FRR_SIMD_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return FRR_SIMD_AVX2;
#endif
	return FRR_SIMD_BASE;
}

const char *frr_simd_name(enum frr_simd_level level)
{
	return level == FRR_SIMD_AVX2 ? "avx2+fma" : "baseline";
}

static enum frr_simd_level simd_decide(void)
{
	const char *env = getenv("FLEXRR_SIMD");
	enum frr_simd_level host = frr_simd_host(), l = host;

	if (env &&
	    (!strcmp(env, "off") || !strcmp(env, "base") || !strcmp(env, "0")))
		l = FRR_SIMD_BASE;
	else if (env && *env && strcmp(env, "auto") && strcmp(env, "on"))
		frr_warn("FLEXRR_SIMD='%s' is not off, base, 0, auto or on: "
			 "using auto (%s)",
			 env, frr_simd_name(host));
	frr_dbg("simd: %s kernels (CPU: %s; FLEXRR_SIMD=off forces the "
		"baseline)",
		frr_simd_name(l), frr_simd_name(host));
	return l;
}

enum frr_simd_level frr_simd_level(void)
{
	int l = __atomic_load_n(&simd_level, __ATOMIC_RELAXED);

	if (l < 0) {
		l = simd_decide();
		__atomic_store_n(&simd_level, l, __ATOMIC_RELAXED);
	}
	return (enum frr_simd_level)l;
}

int frr_simd_set(enum frr_simd_level level)
{
	if (level != FRR_SIMD_BASE && level != FRR_SIMD_AVX2)
		return -EINVAL;
	if (level > frr_simd_host())
		return -ENOTSUP;
	__atomic_store_n(&simd_level, (int)level, __ATOMIC_RELAXED);
	return 0;
}
