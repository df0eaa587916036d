// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "flexrr/base.h"
#include "opts.h"

int frr_opt_value(int argc, char **argv, int *i, const char *app,
		  const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n))
		return 0;
	if (a[n] == '=') {
		*val = a + n + 1;
		return 1;
	}
	if (a[n])
		return 0;
	if (*i + 1 >= argc) {
		frr_err("%s: option %s needs a value (see '%s --help')", app,
			name, app);
		return -EINVAL;
	}
	*val = argv[++*i];
	return 1;
}

int frr_opt_u64(const char *app, const char *name, const char *s, uint64_t lo,
		uint64_t hi, uint64_t *out)
{
	if (frr_parse_u64(s, 10, lo, hi, out)) {
		frr_err("%s: %s wants an integer in [%llu, %llu], got '%s'",
			app, name, (unsigned long long)lo,
			(unsigned long long)hi, s);
		return -EINVAL;
	}
	return 0;
}

int frr_opt_double(const char *app, const char *name, const char *s, double lo,
		   double hi, double *out)
{
	if (frr_parse_double(s, lo, hi, out)) {
		frr_err("%s: %s wants a number in [%g, %g], got '%s'", app,
			name, lo, hi, s);
		return -EINVAL;
	}
	return 0;
}
