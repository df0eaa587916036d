// SPDX-License-Identifier: MIT
/* The lda app's options: one table (flexrr/opt.h) for parsing, defaults,
 * checks and --help. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "flexrr/log.h"
#include "flexrr/opt.h"
#include "lda_model.h"
#include "lda_opts.h"

static const char *const lda_samplers[] = { "sparse", "dense", NULL };

#define LDA_STR2(x) #x
#define LDA_STR(x) LDA_STR2(x)
#define F(x) offsetof(struct lda_opts, x)
#define CORPUS "corpus (one of):"
#define MODEL "model:"
static const struct frr_opt lda_table[] = {
	FRR_OPT("uci", 0, FRR_OPT_STRING, F(uci), 0, 0, .group = CORPUS,
		.arg = "DOCWORD",
		.help = "UCI bag-of-words (NYTimes/KOS/Enron format)"),
	FRR_OPT("vocab", 0, FRR_OPT_STRING, F(vocab), 0, 0, .group = CORPUS,
		.arg = "VOCAB", .help = "its vocabulary (with --uci)"),
	FRR_OPT("text", 0, FRR_OPT_STRING, F(text), 0, 0, .group = CORPUS,
		.arg = "PATH",
		.help =
		    "plain text: a directory (one document per file) or a "
		    "file\n(documents separated by blank lines); the KJV "
		    "Bible by\nchapter: scripts/make-kjv-corpus.sh OUT, "
		    "then --text OUT;\ntokens: lower-cased runs of letters, "
		    "built-in\nEnglish stop words"),
	FRR_OPT("min-count", 0, FRR_OPT_U32, F(t.min_count), 1, UINT32_MAX,
		.group = CORPUS, .arg = "N",
		.help = "drop words seen fewer than N times"),
	FRR_OPT("max-doc-frac", 0, FRR_OPT_DOUBLE, F(t.max_doc_frac), 1e-9, 1,
		.group = CORPUS, .arg = "F",
		.help = "drop words in more than F of the documents (1:\noff; "
			"0.25 removes 'lord', 'god' from the KJV)"),
	FRR_OPT("min-length", 0, FRR_OPT_U32, F(t.min_length), 1, 1000,
		.group = CORPUS, .arg = "N",
		.help = "drop tokens shorter than N letters"),
	FRR_OPT("stopwords", 0, FRR_OPT_STRING, F(t.stopfile), 0, 0,
		.group = CORPUS, .arg = "FILE",
		.help = "more stop words, one per line"),
	FRR_OPT("no-stopwords", 0, FRR_OPT_FLAG, F(t.builtin_stop), 0, 0,
		.group = CORPUS, .def.i = 1, .help = "drop the built-in list"),
	FRR_OPT("write-uci", 0, FRR_OPT_STRING, F(write_uci), 0, 0,
		.group = CORPUS, .arg = "DIR", .flags = FRR_OPT_OUTDIR,
		.help = "write the corpus as loaded (after the cuts) as "
			"DIR/docword.txt\nand DIR/vocab.txt (one process), "
			"e.g. to feed another tool"),
	FRR_OPT("topics", 0, FRR_OPT_U32, F(K), 2, LDA_MAX_TOPICS, .def.u = 20,
		.group = MODEL, .arg = "K",
		.help = "topics (max " LDA_STR(LDA_MAX_TOPICS) ")"),
	FRR_OPT("alpha", 0, FRR_OPT_DOUBLE, F(alpha), 1e-9, 1e6, .def.d = 0.1,
		.group = MODEL, .arg = "F", .help = "document-topic prior"),
	FRR_OPT("beta", 0, FRR_OPT_DOUBLE, F(beta), 1e-9, 1e6, .def.d = 0.01,
		.group = MODEL, .arg = "F", .help = "topic-word prior"),
	FRR_OPT("sampler", 0, FRR_OPT_CHOICE, F(sampler), 0, 0,
		.choices = lda_samplers, .group = MODEL, .arg = "S",
		.help = "sparse: SparseLDA, cost per token ~ the word's\n"
			"non-zero topics; dense: the O(K) Gibbs draw, for "
			"checking\n(both draw from the same conditional)"),
	FRR_OPT("heldout", 0, FRR_OPT_DOUBLE, F(heldout), 0, 0.5,
		.group = MODEL, .arg = "F", .def_text = "0 = off",
		.help = "hold out every 1/F-th document; print "
			"heldout_loglik_per_token\n(document completion: theta "
			"from the even tokens, the odd\nones scored)"),
	FRR_OPT("top-words", 0, FRR_OPT_U64, F(top_words), 1, 1000,
		.group = MODEL, .arg = "N", .flags = FRR_OPT_NODEF,
		.help = "print each topic's N most frequent words at the end"),
	FRR_OPT("save", 0, FRR_OPT_STRING, F(save_path), 0, 0, .group = MODEL,
		.flags = FRR_OPT_OUTFILE, .arg = "FILE",
		.help = "write the counts after every clock (one process)"),
	FRR_OPT("load", 0, FRR_OPT_STRING, F(load), 0, 0, .group = MODEL,
		.arg = "FILE",
		.help = "draw the initial topics from a saved model's counts "
			"(same\nvocabulary and K)"),
	FRR_OPT("no-progress", 0, FRR_OPT_FLAG, F(progress), 0, 0,
		.group = MODEL, .def.i = 1,
		.help = "no 'lda: clock N <metrics>' line per clock on stderr"),
	{ 0 },
};
#undef MODEL
#undef CORPUS
#undef F

/* The tokenizer's defaults are lda_text.c's (tests load text without the
 * options) */
static void lda_defaults(void *obj)
{
	lda_text_opts_default(&((struct lda_opts *)obj)->t);
}

/* What the options mean together */
static int lda_check(void *obj)
{
	const struct lda_opts *o = obj;

	if (!!o->uci == !!o->text) {
		frr_err("lda: give either --uci DOCWORD [--vocab VOCAB] or "
			"--text PATH (see 'lda --help')");
		return -EINVAL;
	}
	if (o->vocab && !o->uci) {
		frr_err("lda: --vocab goes with --uci");
		return -EINVAL;
	}
	return 0;
}

const struct frr_opt_set lda_opt_set = {
	.prog = "lda",
	.see = "'lda --help'",
	.opts = lda_table,
	.size = sizeof(struct lda_opts),
	.defaults = lda_defaults,
	.check = lda_check,
	.head = "usage: flexrr run [run options] lda [options]\n"
		"Latent Dirichlet allocation by collapsed Gibbs sampling.  "
		"Work items are\ndocuments; word-topic and topic-total counts "
		"are parameter tables; each\ndocument's token topics are its "
		"item state.\n",
	.tail = "\ngzip input is read directly (detected by magic).\n"
		"printed per clock: loglik_per_token, the mean over training "
		"tokens of\nlog sum_k theta_dk phi_kw (theta, phi: the "
		"smoothed count estimates after\nthe clock's sweep); it is the "
		"objective (--target V: reached when >= V).\n",
};

void lda_usage(FILE *out)
{
	frr_opt_usage(&lda_opt_set, out);
}

int lda_parse_opts(int argc, char **argv, struct lda_opts *o)
{
	frr_opt_defaults(&lda_opt_set, o);
	return frr_opt_parse(&lda_opt_set, o, argc, argv, NULL);
}

/* No input is read: the table's parse and check only. */
int lda_check_args(int argc, char **argv)
{
	return frr_opt_check(&lda_opt_set, argc, argv);
}
