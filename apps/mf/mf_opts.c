// SPDX-License-Identifier: MIT
/* The mf app's options: parsing, defaults, checks and --help. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/opts.h"
#include "flexrr/log.h"
#include "mf_opts.h"

void mf_usage(FILE *out)
{
	fprintf(out,
		"usage: flexrr run [run options] mf (--data FILE... | "
		"--synthetic SPEC) [options]\n"
		"\n"
		"Matrix factorization by SGD: r(u,i) ~ mu + b_u + b_i + p_u.q_i"
		"; work items are\n"
		"training ratings, partitioned by user; tables 'user' and "
		"'item' (rank+1 cols).\n"
		"Per clock: train_rmse (error before each SGD step) and "
		"test_rmse (held out).\n"
		"\n"
		"input (one of):\n"
		"  --data FILE           ratings file, plain or gzip; repeat "
		"for several files\n"
		"  --format F            netflix ('MOVIE:' blocks of "
		"'user,rating,date'),\n"
		"                        movielens (ratings.dat 'u::i::r::t' "
		"or ratings.csv with\n"
		"                        header), triples ('user item rating')"
		"; default: detected\n"
		"  --read HOW            pieces (default): each process "
		"parses a part;\n"
		"                        whole: each parses all (--data "
		"only)\n"
		"  --synthetic SPEC      USERS,ITEMS,RATINGS or 'netflix' "
		"(480189,17770,100480507):\n"
		"                        low-rank truth + Gaussian noise, "
		"power-law popularity\n"
		"  --synth-rank K        rank of the truth (default: --rank)\n"
		"  --synth-noise S       noise standard deviation (0.5)\n"
		"  --synth-signal S      standard deviation of p*.q* (1.0)\n"
		"  --synth-mean M        global mean rating (3.6)\n"
		"  --synth-skew A        popularity power law, 0 <= A < 1 "
		"(0.4; 0 = uniform)\n"
		"  --data-seed N         generator seed (default: the run's "
		"--seed)\n"
		"\n"
		"model and training:\n"
		"  --rank K              factors per user and item (10)\n"
		"  --lr X                step size of clock 0 (0.03)\n"
		"  --lr-decay D          step size of clock c = lr * D^c "
		"(0.95)\n"
		"  --steps S            per worker and clock, the step sizes "
		"applied to one row\n"
		"                        sum to at most S: step = min(lr, S / "
		"the row's ratings\n"
		"                        in the partition) (4; large = off)\n"
		"  --reg L               L2 penalty on factors (0.02)\n"
		"  --bias-reg L          L2 penalty on biases (default: --reg)"
		"\n"
		"  --test-frac F         held-out fraction, by a hash of "
		"(seed, user, item) (0.1)\n"
		"  --load FILE           start from a model saved with "
		"'flexrr run --save FILE'\n"
		"  --help                this text\n"
		"\n"
		"Objective (for --target): test RMSE (train RMSE with "
		"--test-frac 0).\n"
		"Example: flexrr run -n 2 -t 1 --clocks 20 mf --synthetic "
		"20000,2000,1000000\n");
}

/* ---- options ----------------------------------------------------------- */
/* The apps' shared parsers (common/opts.h), under mf's name. */
static int opt_double(const char *name, const char *s, double lo, double hi,
		      double *out)
{
	return frr_opt_double("mf", name, s, lo, hi, out);
}

/* lo >= 0 at every caller */
static int opt_int(const char *name, const char *s, long lo, long hi, long *out)
{
	uint64_t u;
	int ret = frr_opt_u64("mf", name, s, (uint64_t)lo, (uint64_t)hi, &u);

	if (!ret)
		*out = (long)u;
	return ret;
}

/* The input options; 1 if k is not one of them. */
static int input_opt(struct mf_opts *o, const char *k, const char *v,
		     double *skew)
{
	long l = 0; /* read even when a parse fails */
	int ret = 0;

	if (!strcmp(k, "--data")) {
		if (o->ndata == MF_MAX_FILES) {
			frr_err("mf: more than %d --data files; concatenate "
				"some",
				MF_MAX_FILES);
			return -EINVAL;
		}
		o->data[o->ndata++] = v;
	} else if (!strcmp(k, "--format")) {
		ret = mf_format_parse(v, &o->fmt);
	} else if (!strcmp(k, "--synthetic")) {
		o->synthetic = 1;
		ret = mf_synth_parse(v, &o->synth);
	} else if (!strcmp(k, "--synth-rank")) {
		ret = opt_int(k, v, 1, MF_MAX_RANK, &l);
		o->synth.rank = (int)l;
		o->have_synth_rank = 1;
	} else if (!strcmp(k, "--synth-noise")) {
		ret = opt_double(k, v, 0, 1e6, &o->synth.noise);
	} else if (!strcmp(k, "--synth-signal")) {
		ret = opt_double(k, v, 0, 1e6, &o->synth.signal);
	} else if (!strcmp(k, "--synth-mean")) {
		ret = opt_double(k, v, -1e9, 1e9, &o->synth.mean);
	} else if (!strcmp(k, "--synth-skew")) {
		ret = opt_double(k, v, 0, 0.99, skew);
	} else if (!strcmp(k, "--read")) {
		o->read_whole = !strcmp(v, "whole");
		o->have_read = 1;
		if (!o->read_whole && strcmp(v, "pieces")) {
			frr_err("mf: --read '%s': expected 'pieces' or 'whole'",
				v);
			return -EINVAL;
		}
	} else if (!strcmp(k, "--data-seed")) {
		/* an integer: 1.5 was truncated to 1 */
		ret = frr_opt_u64("mf", k, v, 0, 1ull << 53, &o->data_seed);
	} else {
		return 1;
	}
	if (!strncmp(k, "--synth-", 8))
		o->synth_only = o->synth_only ? o->synth_only : k;
	return ret;
}

/* The model and training options; 1 if k is not one of them. */
static int train_opt(struct mf_opts *o, const char *k, const char *v)
{
	long l = 0;
	int ret = 0;

	if (!strcmp(k, "--rank")) {
		ret = opt_int(k, v, 1, MF_MAX_RANK, &l);
		o->rank = (int)l;
	} else if (!strcmp(k, "--lr")) {
		ret = opt_double(k, v, 1e-9, 10, &o->lr);
	} else if (!strcmp(k, "--lr-decay")) {
		ret = opt_double(k, v, 1e-3, 1, &o->lr_decay);
	} else if (!strcmp(k, "--steps")) {
		ret = opt_double(k, v, 1e-6, 1e12, &o->steps);
	} else if (!strcmp(k, "--reg")) {
		ret = opt_double(k, v, 0, 1e3, &o->reg);
	} else if (!strcmp(k, "--bias-reg")) {
		ret = opt_double(k, v, 0, 1e3, &o->bias_reg);
		o->have_bias_reg = 1;
	} else if (!strcmp(k, "--test-frac")) {
		ret = opt_double(k, v, 0, 0.9, &o->test_frac);
	} else if (!strcmp(k, "--load")) {
		o->load = v;
	} else {
		return 1;
	}
	return ret;
}

/* What the options imply together; -EINVAL on a bad combination. */
static int opts_finish(struct mf_opts *o, double skew)
{
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
		frr_err("mf: %s applies to --synthetic data only (--data files "
			"are read as they are); drop it",
			o->synth_only);
		return -EINVAL;
	}
	/* the generator makes each partition where it is loaded: no files */
	if (o->have_read && !o->ndata) {
		frr_err("mf: --read applies to --data files only (--synthetic "
			"data is generated, not read); drop --read");
		return -EINVAL;
	}
	if (skew >= 0)
		o->synth.user_skew = o->synth.item_skew = skew;
	if (!o->have_synth_rank)
		o->synth.rank = o->rank;
	if (!o->have_bias_reg)
		o->bias_reg = o->reg;
	o->synth.seed = o->data_seed;
	return 0;
}

int mf_parse_opts(int argc, char **argv, uint64_t seed, struct mf_opts *o)
{
	double skew = -1;
	int ret = 0;

	*o = (struct mf_opts){
		.rank = 10,
		.lr = 0.03,
		.lr_decay = 0.95,
		.steps = 4,
		.reg = 0.02,
		.test_frac = 0.1,
		.data_seed = seed,
	};
	mf_synth_defaults(&o->synth);
	for (int a = 1; a < argc && !ret; a++) {
		const char *k = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
			mf_usage(stdout);
			return 1;
		}
		if (strncmp(k, "--", 2) || !v) {
			frr_err("mf: %s '%s'; 'flexrr run ... mf --help' "
				"lists the options",
				strncmp(k, "--", 2) ? "unexpected argument"
						    : "missing value after",
				k);
			return -EINVAL;
		}
		a++;
		ret = input_opt(o, k, v, &skew);
		if (ret == 1)
			ret = train_opt(o, k, v);
		if (ret == 1) {
			frr_err("mf: unknown option '%s'; 'flexrr run ... mf "
				"--help' lists the options",
				k);
			return -EINVAL;
		}
	}
	return ret ? ret : opts_finish(o, skew);
}
