// SPDX-License-Identifier: MIT
/* --stragglers SPEC (runtime/straggler.c): parse, bind to a small job,
 * and every slow-down factor is finite and >= 1. */
#include <math.h>

#include "fuzz.h"
#include "straggler.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct frr_stragglers s;
	char spec[1024], shown[1024];

	if (n >= sizeof(spec))
		return 0;
	memcpy(spec, data, n);
	spec[n] = '\0';
	if (frr_stragglers_parse(spec, &s))
		return 0;
	FUZZ_CHECK(s.nterms >= 0 && s.nterms <= FRR_STRAG_MAX_TERMS);
	frr_stragglers_format(&s, shown, sizeof(shown));
	if (frr_stragglers_setup(&s, 42, 2, 4))
		return 0;
	for (int w = 0; w < 4; w++)
		for (int clock = 0; clock < 8; clock++) {
			double f = frr_stragglers_factor(&s, w, clock);

			FUZZ_CHECK(isfinite(f) && f >= 1.0);
		}
	return 0;
}
