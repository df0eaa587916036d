// SPDX-License-Identifier: MIT
/* The mf app's options: one table (flexrr/opt.h) for parsing, defaults,
 * checks and --help. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/opt.h"
#include "flexrr/log.h"
#include "mf_opts.h"

/* ---- the table ---------------------------------------------------------- */
static int opt_data(void *obj, const struct frr_opt *opt, const char *v)
{
	struct mf_opts *o = obj;

	(void)opt;
	if (o->ndata == MF_MAX_FILES) {
		frr_err("mf: more than %d --data files; concatenate some",
			MF_MAX_FILES);
		return -EINVAL;
	}
	o->data[o->ndata++] = v;
	return 0;
}

static int opt_format(void *obj, const struct frr_opt *opt, const char *v)
{
	(void)opt;
	return mf_format_parse(v, &((struct mf_opts *)obj)->fmt);
}

static int opt_synthetic(void *obj, const struct frr_opt *opt, const char *v)
{
	struct mf_opts *o = obj;

	(void)opt;
	o->synthetic = 1;
	return mf_synth_parse(v, &o->synth);
}

static const char *const mf_reads[] = { "pieces", "whole", NULL };

#define F(x) offsetof(struct mf_opts, x)
#define IN "input (one of):"
#define TRAIN "model and training:"
static const struct frr_opt mf_table[] = {
	FRR_OPT("data", 0, FRR_OPT_FUNC, F(data), 0, 0, .parse = opt_data,
		.group = IN, .arg = "FILE",
		.help =
		    "ratings file, plain or gzip; repeat for several files"),
	FRR_OPT("format", 0, FRR_OPT_FUNC, F(fmt), 0, 0, .parse = opt_format,
		.group = IN, .arg = "F", .def_text = "detected",
		.help = "netflix ('MOVIE:' blocks of 'user,rating,date'),\n"
			"movielens (ratings.dat 'u::i::r::t' or ratings.csv "
			"with\nheader), triples ('user item rating')"),
	FRR_OPT("read", 0, FRR_OPT_CHOICE, F(read_whole), 0, 0,
		.choices = mf_reads, .group = IN, .arg = "HOW",
		.help = "pieces: each process parses a part;\nwhole: each "
			"parses all (--data only)"),
	FRR_OPT("synthetic", 0, FRR_OPT_FUNC, F(synth), 0, 0,
		.parse = opt_synthetic, .group = IN, .arg = "SPEC",
		.help = "USERS,ITEMS,RATINGS or 'netflix' "
			"(480189,17770,100480507):\nlow-rank truth + Gaussian "
			"noise, power-law popularity"),
	FRR_OPT("synth-rank", 0, FRR_OPT_INT, F(synth.rank), 1, MF_MAX_RANK,
		.group = IN, .arg = "K", .def_text = "--rank",
		.help = "rank of the truth"),
	FRR_OPT("synth-noise", 0, FRR_OPT_DOUBLE, F(synth.noise), 0, 1e6,
		.group = IN, .arg = "S", .help = "noise standard deviation"),
	FRR_OPT("synth-signal", 0, FRR_OPT_DOUBLE, F(synth.signal), 0, 1e6,
		.group = IN, .arg = "S", .help = "standard deviation of p*.q*"),
	FRR_OPT("synth-mean", 0, FRR_OPT_DOUBLE, F(synth.mean), -1e9, 1e9,
		.group = IN, .arg = "M", .help = "global mean rating"),
	FRR_OPT("synth-skew", 0, FRR_OPT_DOUBLE, F(synth.user_skew), 0, 0.99,
		.group = IN, .arg = "A",
		.help = "popularity power law, 0 <= A < 1 (0 = uniform)"),
	FRR_OPT("data-seed", 0, FRR_OPT_U64, F(data_seed), 0, 1ull << 53,
		.group = IN, .arg = "N", .def_text = "the run's --seed",
		.help = "generator seed"),
	FRR_OPT("rank", 0, FRR_OPT_INT, F(rank), 1, MF_MAX_RANK, .def.i = 10,
		.group = TRAIN, .arg = "K",
		.help = "factors per user and item"),
	FRR_OPT("lr", 0, FRR_OPT_DOUBLE, F(lr), 1e-9, 10, .def.d = 0.03,
		.group = TRAIN, .arg = "X", .help = "step size of clock 0"),
	FRR_OPT("lr-decay", 0, FRR_OPT_DOUBLE, F(lr_decay), 1e-3, 1,
		.def.d = 0.95, .group = TRAIN, .arg = "D",
		.help = "step size of clock c = lr * D^c"),
	FRR_OPT("steps", 0, FRR_OPT_DOUBLE, F(steps), 1e-6, 1e12, .def.d = 4,
		.group = TRAIN, .arg = "S",
		.help = "per worker and clock, the step sizes applied to one "
			"row\nsum to at most S: step = min(lr, S / the row's "
			"ratings\nin the partition) (large = off)"),
	FRR_OPT("reg", 0, FRR_OPT_DOUBLE, F(reg), 0, 1e3, .def.d = 0.02,
		.group = TRAIN, .arg = "L", .help = "L2 penalty on factors"),
	FRR_OPT("bias-reg", 0, FRR_OPT_DOUBLE, F(bias_reg), 0, 1e3,
		.group = TRAIN, .arg = "L", .def_text = "--reg",
		.help = "L2 penalty on biases"),
	FRR_OPT("test-frac", 0, FRR_OPT_DOUBLE, F(test_frac), 0, 0.9,
		.def.d = 0.1, .group = TRAIN, .arg = "F",
		.help = "held-out fraction, by a hash of (seed, user, item)"),
	FRR_OPT("load", 0, FRR_OPT_STRING, F(load), 0, 0, .group = TRAIN,
		.arg = "FILE",
		.help = "start from a model saved with 'flexrr run --save "
			"FILE'"),
	{ 0 },
};
#undef TRAIN
#undef IN
#undef F

/* The generator's defaults are mf_synth.c's (the demo and tests use them
 * without options). */
static void mf_defaults(void *obj)
{
	mf_synth_defaults(&((struct mf_opts *)obj)->synth);
}

/* Which options were given: some defaults follow others, some options
 * apply to one kind of input only. */
static void mf_seen(void *obj, const struct frr_opt *opt)
{
	struct mf_opts *o = obj;

	if (!strcmp(opt->name, "synth-rank"))
		o->have_synth_rank = 1;
	else if (!strcmp(opt->name, "bias-reg"))
		o->have_bias_reg = 1;
	else if (!strcmp(opt->name, "read"))
		o->have_read = 1;
	if (!strncmp(opt->name, "synth-", 6) && !o->synth_only)
		o->synth_only = opt->name;
}

/* What the options imply together; -EINVAL on a bad combination. */
static int mf_check(void *obj)
{
	struct mf_opts *o = obj;

	if (!o->ndata == !o->synthetic) {
		frr_err("mf: give either --data FILE or --synthetic SPEC "
			"(e.g. --synthetic 20000,2000,1000000); see mf --help");
		return -EINVAL;
	}
	if (o->fmt != MF_FMT_AUTO && !o->ndata) {
		frr_err("mf: --format applies to --data files only");
		return -EINVAL;
	}
	if (o->synth_only && o->ndata) {
		frr_err("mf: --%s applies to --synthetic data only (--data "
			"files are read as they are); drop it",
			o->synth_only);
		return -EINVAL;
	}
	/* the generator makes each partition where it is loaded: no files */
	if (o->have_read && !o->ndata) {
		frr_err("mf: --read applies to --data files only (--synthetic "
			"data is generated, not read); drop --read");
		return -EINVAL;
	}
	o->synth.item_skew = o->synth.user_skew;
	if (!o->have_synth_rank)
		o->synth.rank = o->rank;
	if (!o->have_bias_reg)
		o->bias_reg = o->reg;
	o->synth.seed = o->data_seed;
	return 0;
}

const struct frr_opt_set mf_opt_set = {
	.prog = "mf",
	.see = "'flexrr run ... mf --help'",
	.opts = mf_table,
	.size = sizeof(struct mf_opts),
	.defaults = mf_defaults,
	.seen = mf_seen,
	.check = mf_check,
	.head = "usage: flexrr run [run options] mf (--data FILE... | "
		"--synthetic SPEC) [options]\n"
		"\n"
		"Matrix factorization by SGD: r(u,i) ~ mu + b_u + b_i + p_u.q_i"
		"; work items are\ntraining ratings, partitioned by user; "
		"tables 'user' and 'item' (rank+1 cols).\nPer clock: "
		"train_rmse (error before each SGD step) and test_rmse (held "
		"out).\n",
	.tail = "\nObjective (for --target): test RMSE (train RMSE with "
		"--test-frac 0).\nExample: flexrr run -n 2 -t 1 --clocks 20 mf "
		"--synthetic 20000,2000,1000000\n",
};

void mf_usage(FILE *out)
{
	frr_opt_usage(&mf_opt_set, out);
}

int mf_parse_opts(int argc, char **argv, uint64_t seed, struct mf_opts *o)
{
	frr_opt_defaults(&mf_opt_set, o);
	o->data_seed = seed;
	return frr_opt_parse(&mf_opt_set, o, argc, argv, NULL);
}
