// SPDX-License-Identifier: MIT
/*
 * `flexrr demo`'s options by table (flexrr/opt.h): parsing, defaults,
 * --help and --help=md from one descriptor each, as for run, simulate and
 * bench.
 */
#include <errno.h>
#include <float.h>
#include <stddef.h>
#include <stdio.h>

#include "demo.h"
#include "flexrr/opt.h"

#define F(x) offsetof(struct demo_opts, x)
#define STR_(x) #x
#define STR(x) STR_(x)

static const struct frr_opt demo_table[] = {
	FRR_OPT("size", 0, FRR_OPT_STRING, F(size), 0, 0,
		.def.s = "25000,2500,5000000", .arg = "U,I,R",
		.help = "synthetic users,items,ratings"),
	FRR_OPT("rank", 0, FRR_OPT_INT, F(rank), 1, 100000, .def.i = 8,
		.arg = "K", .help = "MF rank"),
	FRR_OPT("steps", 0, FRR_OPT_DOUBLE, F(steps), 0, DBL_MAX, .def.d = 8,
		.arg = "S",
		.help = "mf's per-row step cap of a clock (mf's own\n"
			"default 4 suits large data, docs/demo.md says\n"
			"why 8 here)"),
	FRR_OPT("clocks", 0, FRR_OPT_INT, F(clocks), 1, DEMO_MAX_CLOCKS,
		.def.i = 20, .arg = "N", .help = "clocks per run"),
	FRR_OPT("target", 0, FRR_OPT_DOUBLE, F(target), 0, DBL_MAX,
		.def.d = 0.59, .arg = "RMSE",
		.help = "held-out RMSE the 'time to target' column waits\n"
			"for (the noise floor is 0.5)"),
	FRR_OPT("modes", 0, FRR_OPT_STRING, F(modes), 0, 0,
		.def.s = "bsp,ssp,flexrr", .arg = "LIST",
		.help = "comma list of bsp, ssp, flexrr, async, rr"),
	FRR_OPT("stragglers", 0, FRR_OPT_STRING, F(stragglers), 0, 0,
		.def.s = "persistent:1,4", .arg = "SPEC",
		.help = "injected stragglers, as flexrr run; 'none' for\n"
			"none; the default: worker 1 always takes 4x its\n"
			"time, a machine 4x slower than the other"),
	FRR_OPT("ideal", 0, FRR_OPT_FLAG, F(ideal), 0, 0,
		.help = "also run BSP without stragglers (the 'ideal'\n"
			"baseline)"),
	FRR_OPT("slack", 0, FRR_OPT_INT, F(slack), 0, 100000, .def.i = 1,
		.arg = "S", .help = "slack of ssp and flexrr"),
	FRR_OPT("procs", 'n', FRR_OPT_INT, F(procs), 1, 100000, .def.i = 2,
		.arg = "P", .help = "processes"),
	FRR_OPT("threads", 't', FRR_OPT_INT, F(threads), 1, 100000, .def.i = 1,
		.arg = "T",
		.help = "worker threads per process (1: one worker per\n"
			"core; more share the cores, which blurs the\n"
			"stragglers)"),
	FRR_OPT("backend", 0, FRR_OPT_STRING, F(backend), 0, 0, .def.s = "shm",
		.arg = "B", .help = "transport: shm or verbs"),
	FRR_OPT("seed", 0, FRR_OPT_U64, F(seed), 0, 0, .def.u = 1, .arg = "N",
		.help = "seed of data, model and stragglers"),
	FRR_OPT("timeout", 0, FRR_OPT_INT, F(timeout_s), 1, 100000,
		.def.i = 300, .arg = "S",
		.help = "give up on a run after S seconds"),
	FRR_OPT("flexrr", 0, FRR_OPT_STRING, F(bin), 0, 0, .arg = "PATH",
		.def_text = "this one", .help = "the flexrr binary to run"),
	FRR_OPT("plot", 0, FRR_OPT_STRING, F(plot), 0, 0, .arg = "FILE",
		.help = "also draw test RMSE vs time of every mode\n"
			"(gnuplot, PNG)"),
	FRR_OPT("verbose", 'v', FRR_OPT_FLAG, F(verbose), 0, 0,
		.help = "show every run's own output"),
	{ 0 },
};

/* junk keeps the demo's old wording; a range error says the range */
static void bad_value(const struct frr_opt_set *s, const struct frr_opt *o,
		      const char *v, int err)
{
	if (err != -ERANGE)
		fprintf(stderr, "%s: --%s '%s': not a number\n", s->prog,
			o->name, v);
	else if (o->kind == FRR_OPT_DOUBLE)
		fprintf(stderr, "%s: --%s wants a number >= %g, got '%s'\n",
			s->prog, o->name, o->lo, v);
	else
		fprintf(stderr,
			"%s: --%s wants an integer in [%.0f, %.0f], got '%s'\n",
			s->prog, o->name, o->lo, o->hi, v);
}

static int check(void *obj)
{
	const struct demo_opts *o = obj;

	/* 0 steps would never move a row: the demo would show nothing */
	if (!(o->steps > 0)) {
		fprintf(stderr, "flexrr demo: --steps must be > 0\n");
		return -EINVAL;
	}
	return 0;
}

static const struct frr_opt_set demo_set = {
	.prog = "flexrr demo",
	.see = "'flexrr demo --help'",
	.opts = demo_table,
	.size = sizeof(struct demo_opts),
	.head =
	    "usage: flexrr demo [options]\n"
	    "\n"
	    "The straggler demo: matrix factorization (SGD) on synthetic "
	    "low-rank data, run\n"
	    "in BSP, SSP and FlexRR with the same seed and the same injected "
	    "stragglers,\n"
	    "printed side by side.  Each mode is 'flexrr run -n P -t T --mode "
	    "M ... mf ...'.\n"
	    "Emulated: a cluster of P one-core machines (default 2 workers, "
	    "one per core of\n"
	    "a 2-core machine); a straggler sleeps for the extra time a slow "
	    "machine would\n"
	    "take, leaving its core idle as that machine would.  Takes about "
	    "15 s\n"
	    "on an idle 2-core machine.\n"
	    "\n",
	.check = check,
	.bad_value = bad_value,
	.plain = 1,
};

int frr_demo_parse_args(int argc, char **argv, struct demo_opts *o)
{
	int rc;

	frr_opt_defaults(&demo_set, o);
	rc = frr_opt_parse(&demo_set, o, argc, argv, NULL);
	if (rc > 0)
		frr_opt_print_help(&demo_set, rc, stdout);
	return rc;
}
