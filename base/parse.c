// SPDX-License-Identifier: MIT
/*
 * Checked number parsing, shared by the run options (runtime/launch) and
 * every table of options (base/opt.c): one set of rules, so that no
 * option takes what another refuses.  The callers word the messages.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/base.h"

/* strto* skip leading white space and take a sign: look past the first */
static int negative(const char *s)
{
	s += strspn(s, " \t\n\v\f\r");
	return *s == '-';
}

/* What strto* left: 0 for a whole number, -ERANGE for an overflow,
 * -EINVAL for junk. */
static int whole(const char *s, const char *end)
{
	if (errno == ERANGE)
		return -ERANGE;
	return errno || end == s || *end ? -EINVAL : 0;
}

int frr_parse_i64(const char *s, int base, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	long long v;
	int rc;

	errno = 0;
	v = strtoll(s, &end, base);
	rc = whole(s, end);
	if (!rc && (v < lo || v > hi))
		rc = -ERANGE;
	if (!rc)
		*out = v;
	return rc;
}

int frr_parse_u64(const char *s, int base, uint64_t lo, uint64_t hi,
		  uint64_t *out)
{
	char *end;
	unsigned long long v;
	int rc;

	if (negative(s)) /* strtoull would wrap "-1" to 2^64 - 1 */
		return -ERANGE;
	errno = 0;
	v = strtoull(s, &end, base);
	rc = whole(s, end);
	if (!rc && (v < lo || v > hi))
		rc = -ERANGE;
	if (!rc)
		*out = v;
	return rc;
}

int frr_parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || !isfinite(v)) /* strtod takes nan and inf */
		return -EINVAL;
	if (errno == ERANGE || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}
