// SPDX-License-Identifier: MIT
/*
 * `flexrr simulate`: its options, into a struct frr_sim_study
 * (flexrr/sim.h); the library runs the study and prints the results.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "flexrr/sim.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: flexrr simulate [options]\n"
	    "\n"
	    "A discrete-event simulation of a flexrr job of P x T workers "
	    "in virtual time:\nthe RapidReassignment engine of real jobs, "
	    "the SSP clock rules, progress words,\nmailboxes with a "
	    "one-way latency, item costs and the seeded straggler "
	    "schedules\nof 'flexrr run --stragglers'.  Prints, per "
	    "pattern and mode, the time to N\nclocks and its ratio to the "
	    "no-straggler ideal (SSP without stragglers) and\nto the "
	    "balanced bound (total work / mean capacity of the "
	    "schedule).\n"
	    "\n"
	    "  -n P, -t T             processes x threads (default 2 x "
	    "4)\n"
	    "  --clocks N             clocks (default 100)\n"
	    "  --items N              items per worker and clock (default "
	    "1000)\n"
	    "  --slack S              slack of ssp and flexrr (default 1)\n"
	    "  --modes LIST           of bsp,ssp,rr,flexrr,lb-bsp,backup "
	    "(default all)\n"
	    "  --stragglers SPEC      a pattern (repeatable; default the "
	    "five of docs/results:\n"
	    "                         slow-worker:0.1,1.0 "
	    "disrupted-machine:0.05,2,2\n"
	    "                         power-law:11 persistent:0,2 "
	    "contention:0); 'none'\n"
	    "  --seed S               seed of stragglers and costs "
	    "(default 7)\n"
	    "  --cost SPEC            item cost: const:US (default "
	    "const:100), uniform:LO,HI,\n"
	    "                         exp:MEAN, lognormal:MEAN,SIGMA (us), "
	    "metrics:FILE[,ITEMS]\n"
	    "                         (per worker and clock of a 'flexrr "
	    "run --metrics' CSV) or\n"
	    "                         metrics-mean:FILE[,ITEMS] (per "
	    "worker means)\n"
	    "  --net ib|roce|softroce|shm  one-way latency between "
	    "processes: 1, 2, 25,\n"
	    "                         0.5 us (default ib)\n"
	    "  --latency-us US        that latency, explicitly\n"
	    "  --local-latency-us US  within a process (default 0.2)\n"
	    "  --poll-us US           period of the runtime's wait loops "
	    "(default 150)\n"
	    "  --apply-us US          last batch in -> clock applied "
	    "(default 100)\n"
	    "  --contention-factor F  contention[:w] slows w by F "
	    "(default 2: half a core)\n"
	    "  --rr-group G, --rr-threshold F, --rr-min-share F, "
	    "--rr-report N,\n"
	    "  --rr-max-helpers N     as flexrr run (defaults 4, 0.2, "
	    "0.05, 16, G)\n"
	    "  --lb-history H         lb-bsp: clocks its speed prediction "
	    "averages (default 3)\n"
	    "  --backups B            backup: workers dropped per clock "
	    "(default 5%%, >= 1)\n"
	    "  --csv FILE, --json FILE  also write the results there\n"
	    "  --trace FILE           a Chrome/Perfetto timeline of the run "
	    "in virtual time\n"
	    "                         (one --modes and one --stragglers; "
	    "see ui.perfetto.dev)\n"
	    "  -q, --quiet            no table (progress still on "
	    "stderr)\n"
	    "  -h, --help             this text\n");
}

/* ---- options ------------------------------------------------------------- */

static int num(const char *k, const char *v, double lo, double hi, double *out)
{
	char *end;

	*out = strtod(v, &end);
	if (end == v || *end || !isfinite(*out) || *out < lo || *out > hi) {
		fprintf(stderr,
			"flexrr simulate: %s '%s': give a number in [%.10g, "
			"%.10g]\n",
			k, v, lo, hi);
		return -EINVAL;
	}
	return 0;
}

static int opt_mode_list(struct frr_sim_study *o, const char *v)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", v);
	o->nmodes = 0;
	for (char *m = strtok_r(buf, ",", &save); m;
	     m = strtok_r(NULL, ",", &save)) {
		int k = frr_sim_mode_parse(m);

		if (k < 0 || o->nmodes == FRR_SIM_NMODES) {
			fprintf(stderr,
				"flexrr simulate: --modes: '%s' is not one of "
				"bsp, ssp, rr, flexrr, lb-bsp, backup\n",
				m);
			return -EINVAL;
		}
		o->modes[o->nmodes++] = k;
	}
	return o->nmodes ? 0 : -EINVAL;
}

/* Options taking a number: where it goes, its bounds, and a scale (us to
 * seconds) for doubles. */
enum { OPT_INT, OPT_U64, OPT_DBL };
#define OPT(name, field, type, lo, hi, scale)                                  \
	{                                                                      \
		name, offsetof(struct frr_sim_cfg, field), type, lo, hi, scale \
	}
static const struct {
	const char *name;
	size_t off;
	int type;
	double lo, hi, scale;
} num_opts[] = {
	OPT("-n", P, OPT_INT, 1, 1 << 20, 1),
	OPT("-t", T, OPT_INT, 1, 1 << 20, 1),
	OPT("--clocks", clocks, OPT_INT, 1, 1 << 24, 1),
	OPT("--items", items, OPT_U64, 1, 4194303, 1),
	OPT("--slack", slack, OPT_INT, 0, 24, 1),
	OPT("--seed", seed, OPT_U64, 0, 1e18, 1),
	OPT("--latency-us", lat_s, OPT_DBL, 0, 1e7, 1e-6),
	OPT("--local-latency-us", local_lat_s, OPT_DBL, 0, 1e7, 1e-6),
	OPT("--poll-us", poll_s, OPT_DBL, 0, 1e7, 1e-6),
	OPT("--apply-us", apply_s, OPT_DBL, 0, 1e7, 1e-6),
	OPT("--contention-factor", contention_factor, OPT_DBL, 1, 1e3, 1),
	OPT("--rr-group", rr_group, OPT_INT, 1, 16, 1),
	OPT("--rr-threshold", rr_threshold, OPT_DBL, 0, 1, 1),
	OPT("--rr-min-share", rr_min_share, OPT_DBL, 0, 0.99, 1),
	OPT("--rr-report", rr_report, OPT_INT, 1, 4096, 1),
	OPT("--rr-max-helpers", rr_max_helpers, OPT_INT, 1, 16, 1),
	OPT("--lb-history", lb_history, OPT_INT, 1, 64, 1),
	OPT("--backups", backups, OPT_INT, 0, 1 << 20, 1),
};
#undef OPT

/* 1: not a number option */
static int opt_number(struct frr_sim_study *o, const char *k, const char *v)
{
	char *field = (char *)&o->cfg;
	double x;

	for (size_t i = 0; i < sizeof(num_opts) / sizeof(num_opts[0]); i++) {
		if (strcmp(k, num_opts[i].name))
			continue;
		if (num(k, v, num_opts[i].lo, num_opts[i].hi, &x))
			return -EINVAL;
		field += num_opts[i].off;
		if (num_opts[i].type == OPT_INT)
			*(int *)field = (int)x;
		else if (num_opts[i].type == OPT_U64)
			*(uint64_t *)field = (uint64_t)x;
		else
			*(double *)field = x * num_opts[i].scale;
		if (!strcmp(k, "--latency-us"))
			o->net = "custom";
		return 0;
	}
	return 1;
}

static int opt_net(struct frr_sim_study *o, const char *v)
{
	if (!frr_sim_net_latency(v, &o->cfg.lat_s)) {
		o->net = v;
		return 0;
	}
	fprintf(stderr,
		"flexrr simulate: --net '%s': give ib, roce, softroce "
		"or shm (or --latency-us)\n",
		v);
	return -EINVAL;
}

static int opt_string(struct frr_sim_study *o, const char *k, const char *v)
{
	if (!strcmp(k, "--modes"))
		return opt_mode_list(o, v);
	if (!strcmp(k, "--net"))
		return opt_net(o, v);
	if (!strcmp(k, "--cost"))
		o->cost_spec = v;
	else if (!strcmp(k, "--csv"))
		o->csv = v;
	else if (!strcmp(k, "--json"))
		o->json = v;
	else if (!strcmp(k, "--trace"))
		o->cfg.trace_path = v;
	else if (!strcmp(k, "--stragglers")) {
		if (o->npatterns == FRR_SIM_MAX_PATTERNS) {
			fprintf(stderr,
				"flexrr simulate: at most %d "
				"--stragglers\n",
				FRR_SIM_MAX_PATTERNS);
			return -EINVAL;
		}
		o->patterns[o->npatterns++] = v;
	} else
		return opt_number(o, k, v);
	return 0;
}

static int parse_args(int argc, char **argv, struct frr_sim_study *o)
{
	frr_sim_study_defaults(o);
	for (int a = 1; a < argc; a++) {
		const char *k = argv[a];
		int err;

		if (!strcmp(k, "-h") || !strcmp(k, "--help")) {
			usage(stdout);
			return 1;
		}
		if (!strcmp(k, "-q") || !strcmp(k, "--quiet")) {
			o->quiet = 1;
			continue;
		}
		if (a + 1 >= argc) {
			fprintf(stderr,
				"flexrr simulate: '%s' needs a value "
				"(or is unknown); see --help\n",
				k);
			return -EINVAL;
		}
		err = opt_string(o, k, argv[++a]);
		if (err > 0)
			fprintf(stderr,
				"flexrr simulate: unknown option '%s'; "
				"see flexrr simulate --help\n",
				k);
		if (err)
			return -EINVAL;
	}
	/* no --stragglers: the study runs its five default patterns */
	if (o->cfg.trace_path && (o->npatterns != 1 || o->nmodes != 1)) {
		fprintf(stderr,
			"flexrr simulate: --trace records one run: give "
			"one --modes and one --stragglers\n");
		return -EINVAL;
	}
	return 0;
}

int frr_cmd_simulate(int argc, char **argv)
{
	struct frr_sim_study o;
	int err = parse_args(argc, argv, &o);

	if (err)
		return err > 0 ? 0 : 2;
	err = frr_sim_study_run(&o);
	return err == -EINVAL ? 2 : err ? 1 : 0;
}
