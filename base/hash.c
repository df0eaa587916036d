// SPDX-License-Identifier: MIT
/* FNV-1a, 64 bit (Fowler, Noll, Vo). */
#include "flexrr/base.h"

#define FNV64_BASIS 0xcbf29ce484222325ull
#define FNV64_PRIME 0x100000001b3ull

uint64_t frr_fnv1a64(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	if (!h)
		h = FNV64_BASIS;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * FNV64_PRIME;
	return h;
}
