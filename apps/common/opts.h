/* SPDX-License-Identifier: MIT */
/*
 * Tiny option parsing for the apps: "--name VALUE" or "--name=VALUE", with
 * errors that name the option and what it wants.  No global state (unlike
 * getopt), so the runtime's own parsing is not disturbed.
 */
#ifndef FLEXRR_APPS_OPTS_H
#define FLEXRR_APPS_OPTS_H

#include <stdint.h>

/* If argv[*i] is option `name`, set *val to its value (advancing *i past a
 * separate value) and return 1; 0 if it is another option; -EINVAL with a
 * message if the value is missing. */
int frr_opt_value(int argc, char **argv, int *i, const char *app,
		  const char *name, const char **val);
/* Number parsers: -EINVAL with "APP: --name wants ..." on junk or range. */
int frr_opt_u64(const char *app, const char *name, const char *s, uint64_t lo,
		uint64_t hi, uint64_t *out);
int frr_opt_double(const char *app, const char *name, const char *s, double lo,
		   double hi, double *out);

#endif
