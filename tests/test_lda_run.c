// SPDX-License-Identifier: MIT
/* `flexrr run ... lda` end to end on the real KJV corpus: the log-likelihood
 * per token rises clock after clock, topics are distinct, runs are
 * deterministic across runs and backends (BSP, fixed seed, one thread per
 * process), the saved counts are consistent with the corpus (also with
 * helpers sampling documents), UCI input, and errors at the CLI. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "app_run_util.h"
#include "lda/lda_corpus.h"
#include "lda/lda_heldout.h"
#include "lda_test_util.h"
#include "test_util.h"

TestSuite(lda_run, .timeout = 240);

/* objective of every "clock N objective=V" progress line */
static int clock_values(const struct app_run *r, double *v, int max)
{
	const char *s = r->out;
	int n = 0;

	while (n < max && (s = strstr(s, "flexrr: clock ")) != NULL) {
		const char *o = strstr(s, "objective=");

		if (!o)
			break;
		v[n++] = strtod(o + 10, NULL);
		s = o;
	}
	return n;
}

Test(lda_run, help)
{
	struct app_run r;

	app_run(&r, "run lda --help");
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_not_null(strstr(r.out, "--uci DOCWORD"));
	cr_assert_not_null(strstr(r.out, "--top-words N"));
	cr_assert_not_null(strstr(r.out, "make-kjv-corpus.sh"));
}

/* 2 processes, 12 clocks, K = 20 on the KJV by chapter. */
Test(lda_run, kjv_rises_and_topics_distinct)
{
	int clocks = frr_lda_quick() ? 6 : 12, maxov = 0, npairs = 0, sumov = 0;
	char args[4096], topics[20][10][32];
	double ll[64];
	struct app_run r;
	const char *s;

	snprintf(args, sizeof(args),
		 "run -n 2 --clocks %d --seed 5 lda --text %s --max-doc-frac "
		 "0.25 --topics 20 --top-words 10",
		 clocks, lda_test_kjv());
	app_run(&r, args);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_log_info("%s\n", r.done);
	cr_assert_eq(clock_values(&r, ll, 64), clocks, "%s", r.out);
	cr_assert_not_null(strstr(r.out, "lda: clock 1 topics=20 tokens="),
			   "%s", r.out);
	lda_assert_rising(ll, clocks);
	cr_assert_eq(strrchr(r.done, ' ') -
			 strstr(r.done, " loglik_per_token="),
		     0, "summary must end with loglik_per_token=: %s", r.done);
	cr_assert_float_eq(app_metric(&r, "loglik_per_token"), ll[clocks - 1],
			   1e-4);
	/* the top-words listing after the done line */
	s = strstr(r.out, "topic   0:");
	cr_assert_not_null(s, "%s", r.out);
	for (int k = 0; k < 20; k++) {
		char want[16];
		const char *t;
		int n = 0;

		snprintf(want, sizeof(want), "topic %3d:", k);
		t = strstr(s, want);
		cr_assert_not_null(t, "%s", s);
		t += strlen(want);
		while (n < 10 && sscanf(t, " %31s", topics[k][n]) == 1) {
			t = strstr(t, topics[k][n]) + strlen(topics[k][n]);
			n++;
		}
		cr_assert_eq(n, 10);
	}
	for (int a = 0; a < 20; a++)
		for (int b = a + 1; b < 20; b++, npairs++) {
			int ov = 0;

			for (int i = 0; i < 10; i++)
				for (int j = 0; j < 10; j++)
					ov +=
					    !strcmp(topics[a][i], topics[b][j]);
			sumov += ov;
			maxov = ov > maxov ? ov : maxov;
		}
	cr_log_info("top-10 overlap: max %d, mean %.3f\n", maxov,
		    (double)sumov / npairs);
	cr_assert_leq(maxov, 4);
	cr_assert_lt((double)sumov / npairs, 0.6);
}

/* Saved counts: non-negative integers, each word's row sums to its corpus
 * frequency, columns sum to the topic totals.  A helper that sampled with
 * stale assignments would break these (counts drift below zero). */
static void check_counts(const char *model, const struct lda_corpus *c,
			 uint32_t K)
{
	char head[256];
	uint64_t *freq = calloc(c->nwords, sizeof(*freq));
	double *col = calloc(K, sizeof(*col));
	float *row = malloc(K * sizeof(*row)), *tot = malloc(K * sizeof(*tot));
	FILE *f = fopen(model, "rb");

	cr_assert_not_null(f);
	for (uint64_t i = 0; i < c->ntokens; i++)
		freq[c->word[i]]++;
	cr_assert_not_null(fgets(head, sizeof(head), f));
	cr_assert_not_null(fgets(head, sizeof(head), f));
	for (uint32_t w = 0; w < c->nwords; w++) {
		double sum = 0;

		cr_assert_eq(fread(row, sizeof(float), K, f), K);
		for (uint32_t k = 0; k < K; k++) {
			cr_assert_geq(row[k], 0, "word %u topic %u: %g", w, k,
				      row[k]);
			cr_assert_eq(row[k], floorf(row[k]));
			sum += row[k];
			col[k] += row[k];
		}
		cr_assert_eq(sum, (double)freq[w], "word %u", w);
	}
	cr_assert_not_null(fgets(head, sizeof(head), f));
	cr_assert_eq(fread(tot, sizeof(float), K, f), K);
	for (uint32_t k = 0; k < K; k++)
		cr_assert_eq(col[k], tot[k], "topic %u", k);
	fclose(f);
	free(freq);
	free(col);
	free(row);
	free(tot);
}

static void kjv_corpus(struct lda_corpus *c)
{
	struct lda_text_opts o;

	lda_text_opts_default(&o);
	o.max_doc_frac = 0.25;
	cr_assert_eq(lda_load_text(lda_test_kjv(), &o, c), 0);
}

Test(lda_run, deterministic_and_consistent)
{
	enum frr_tp_backend be[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(be, FRR_TEST_MAX_BACKENDS);
	char first[4096] = "", res[4096], args[4096];
	struct lda_corpus c;

	kjv_corpus(&c);
	for (int b = 0; b < nb; b++)
		for (int rep = 0; rep < (nb == 1 ? 2 : 1); rep++) {
			struct app_run r;

			snprintf(args, sizeof(args),
				 "run -q -n 2 -t 1 --mode bsp --backend %s "
				 "--clocks 3 --seed 9 lda --text %s "
				 "--max-doc-frac 0.25 --topics 16 --save %s",
				 frr_tp_backend_name(be[b]), lda_test_kjv(),
				 tmp("m.bin"));
			app_run(&r, args);
			cr_assert_eq(r.status, 0, "%s", r.out);
			app_result(&r, res, sizeof(res));
			check_counts(tmp("m.bin"), &c, 16);
			if (!first[0])
				snprintf(first, sizeof(first), "%s", res);
			else
				cr_assert_str_eq(res, first, "backend %s",
						 frr_tp_backend_name(be[b]));
		}
	cr_log_info("%s\n", first);
	lda_corpus_free(&c);
	rm_tmp();
}

/* The trace's work and help spans carry their documents' cost (1 + tokens,
 * lda's item_cost): in every clock they cover the corpus once, exactly,
 * whoever ran which range (bench/reassign-cost.sh reads them). */
static void check_trace_costs(const char *trace, const struct lda_corpus *c)
{
	char cmd[2048];

	snprintf(
	    cmd, sizeof(cmd),
	    "python3 -c \"import json,sys,collections; "
	    "e=[x for x in json.load(open('%s')) if x.get('ph')=='X' and "
	    "(x['name']=='work' or x['name'].startswith('help w'))]; "
	    "s=collections.Counter(); "
	    "[s.update({x['args']['clock']: x['args'].get('cost', -1e18)}) "
	    "for x in e if x['args']['end'] > x['args']['begin']]; "
	    "bad={k: v for k, v in s.items() if v != %llu}; "
	    "print('per-clock cost', dict(s)) if bad or len(s) != 6 "
	    "else None; sys.exit(1 if bad or len(s) != 6 else 0)\"",
	    trace, (unsigned long long)(c->ndocs + c->ntokens));
	cr_assert_eq(system(cmd), 0,
		     "the trace %s does not cover the corpus's cost %llu once "
		     "per clock",
		     trace, (unsigned long long)(c->ndocs + c->ntokens));
}

/* With RapidReassignment and a persistent straggler, helpers sample some
 * of the slow worker's documents: counts stay consistent with the
 * assignments and the likelihood still rises. */
Test(lda_run, helpers_keep_counts_consistent)
{
	static const char *const modes[] = { "--mode rr",
					     "--mode flexrr --slack 1" };
	char args[4096];
	struct lda_corpus c;

	kjv_corpus(&c);
	for (int m = 0; m < 2; m++) {
		struct app_run r;
		double ll[16];

		snprintf(args, sizeof(args),
			 "run -n 2 -t 2 %s --stragglers persistent:0,4 "
			 "--clocks 6 --seed 4 --trace %s lda --text %s "
			 "--max-doc-frac 0.25 --topics 16 --save %s",
			 modes[m], tmp("tr.json"), lda_test_kjv(),
			 tmp("m.bin"));
		app_run(&r, args);
		if (strstr(r.out, "not built into this binary"))
			cr_skip_test("RapidReassignment not built yet");
		cr_assert_eq(r.status, 0, "%s", r.out);
		check_counts(tmp("m.bin"), &c, 16);
		check_trace_costs(tmp("tr.json"), &c);
		cr_assert_eq(clock_values(&r, ll, 16), 6);
		lda_assert_rising(ll, 6);
	}
	lda_corpus_free(&c);
	rm_tmp();
}

/* lb-bsp through a checkpoint: the straggler's tails move with their item
 * state, the cut copies a worker's states once every shard applied its
 * clock (its tails are back: job/checkpoint.c items_done_late), and the
 * run resumed from it saves counts consistent with the corpus.  In the
 * TSan stage this runs the TSan-built flexrr (the exact check of the
 * restored states is test_runtime_recover's, in process). */
Test(lda_run, lb_bsp_checkpoints_item_state_and_resumes)
{
	char args[4096], ck[512], m[512];
	struct lda_corpus c;
	struct app_run r;

	kjv_corpus(&c);
	snprintf(ck, sizeof(ck), "%s", tmp("ck"));
	snprintf(m, sizeof(m), "%s", tmp("m.bin"));
	/* the same app options both times (--save too): a resume checks */
	snprintf(args, sizeof(args),
		 "run -n 2 -t 2 --mode lb-bsp --stragglers persistent:0,4 "
		 "--clocks 6 --seed 4 --checkpoint %s --checkpoint-every 2 "
		 "lda --text %s --max-doc-frac 0.25 --topics 16 --save %s",
		 ck, lda_test_kjv(), m);
	app_run(&r, args);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "moved=") && !strstr(r.out, "moved=0 "),
		  "no tail moved: %s", r.done);
	cr_assert(strstr(r.out, "2 checkpoints in"), "%s", r.out);
	snprintf(args, sizeof(args),
		 "run -n 2 -t 2 --mode lb-bsp --stragglers persistent:0,4 "
		 "--clocks 8 --seed 4 --resume %s lda --text %s "
		 "--max-doc-frac 0.25 --topics 16 --save %s",
		 ck, lda_test_kjv(), m);
	unlink(m);
	app_run(&r, args);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "resuming from") && strstr(r.out, "ckpt-3"),
		  "%s", r.out);
	check_counts(m, &c, 16);
	lda_corpus_free(&c);
	rm_tmp();
}

/* FlexRR with a checkpoint at every clock: a worker done with its clock
 * that waits for its rank's writer before copying its item states keeps
 * answering its helpees.  It did not (job/checkpoint.c snap_wait): a
 * helpee waiting for its answer to a CancelHelp held back the clock the
 * writer needed, and the job hung until --timeout in about 1 run of 3
 * here.  A few runs under a short --timeout, help happening (metrics);
 * the last cut resumes to counts consistent with the corpus, so the cut
 * holds the states of the tails helpers sampled (the same app options
 * both times: a resume checks them). */
Test(lda_run, flexrr_checkpoints_every_clock_while_helping)
{
	int runs = frr_lda_quick() ? 2 : 4;
	char args[4096], ck[512];
	struct lda_corpus c;
	struct app_run r;

	kjv_corpus(&c);
	for (int i = 0; i < runs; i++) {
		snprintf(ck, sizeof(ck), "%s%d", tmp("ck"), i);
		snprintf(args, sizeof(args),
			 "run -n 2 -t 2 --mode flexrr --slack 1 --stragglers "
			 "persistent:0,4 --clocks 6 --seed %d --timeout 20 "
			 "--checkpoint %s --checkpoint-every 1 --metrics %s "
			 "lda --text %s --max-doc-frac 0.25 --topics 16 "
			 "--save %s",
			 4 + i, ck, tmp("mx.csv"), lda_test_kjv(),
			 tmp("m.bin"));
		app_run(&r, args);
		cr_assert_eq(r.status, 0, "run %d: %s", i, r.out);
		cr_assert(strstr(r.out, "5 checkpoints in"), "%s", r.out);
		cr_assert(frr_test_metrics_reassigned(tmp("mx.csv")),
			  "run %d: nothing reassigned", i);
	}
	snprintf(args, sizeof(args),
		 "run -n 2 -t 2 --mode flexrr --slack 1 --stragglers "
		 "persistent:0,4 --clocks 8 --seed %d --resume %s lda --text "
		 "%s --max-doc-frac 0.25 --topics 16 --save %s",
		 4 + runs - 1, ck, lda_test_kjv(), tmp("m.bin"));
	unlink(tmp("m.bin"));
	app_run(&r, args);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "resuming from") && strstr(r.out, "ckpt-4"),
		  "%s", r.out);
	check_counts(tmp("m.bin"), &c, 16);
	lda_corpus_free(&c);
	rm_tmp();
}

/* --sampler dense (the O(K) draw) through the runtime: counts consistent,
 * the likelihood rises; K = 10,000 runs (the sparse sampler) with counts
 * consistent too.  Under a sanitizer (FLEXRR_TEST_SANITIZER, test_util.h)
 * K = 2,000: the 10,000-topic model is 200 MB, minutes of instrumented
 * copying, for the same code. */
Test(lda_run, dense_sampler_and_large_k)
{
	const uint32_t Ks[] = { 16, frr_test_sanitizer() ? 2000 : 10000 };
	char opts[2][64], args[4096];
	struct lda_corpus c;

	snprintf(opts[0], sizeof(opts[0]),
		 "-n 2 --clocks 4 lda --sampler dense --topics %u", Ks[0]);
	snprintf(opts[1], sizeof(opts[1]), "-n 1 --clocks 2 lda --topics %u",
		 Ks[1]);
	kjv_corpus(&c);
	for (int i = 0; i < 2; i++) {
		struct app_run r;
		double ll[16];
		int n;

		snprintf(args, sizeof(args),
			 "run --seed 6 %s --text %s --max-doc-frac 0.25 "
			 "--save %s",
			 opts[i], lda_test_kjv(), tmp("m.bin"));
		app_run(&r, args);
		cr_assert_eq(r.status, 0, "%s", r.out);
		cr_log_info("%s\n", r.done);
		check_counts(tmp("m.bin"), &c, Ks[i]);
		n = clock_values(&r, ll, 16);
		cr_assert_eq(n, i ? 2 : 4);
		cr_assert_gt(ll[n - 1], ll[0]);
	}
	lda_corpus_free(&c);
	rm_tmp();
}

/* --heldout 0.1: every 10th chapter is left out of training and scored by
 * document completion each clock; the held-out likelihood rises. */
Test(lda_run, heldout_loglik)
{
	char args[4096];
	struct lda_corpus c, t;
	struct app_run r;
	double first, last;
	const char *s, *l;

	kjv_corpus(&c);
	cr_assert_eq(lda_heldout_split(&c, 0.1, &t), 0);
	snprintf(args, sizeof(args),
		 "run -n 2 --clocks 5 --seed 2 lda --text %s --max-doc-frac "
		 "0.25 --heldout 0.1",
		 lda_test_kjv());
	app_run(&r, args);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_log_info("%s\n", r.done);
	cr_assert_eq(app_metric(&r, "tokens"), (double)c.ntokens);
	/* held-out tokens: the odd positions of each test document */
	{
		uint64_t nh = 0;

		for (uint64_t d = 0; d < t.ndocs; d++)
			nh += (t.doc[d + 1] - t.doc[d]) / 2;
		cr_assert_eq(app_metric(&r, "heldout_tokens"), (double)nh);
	}
	s = strstr(r.out, "lda: clock 0 ");
	l = strstr(r.out, "lda: clock 4 ");
	cr_assert(s && l, "%s", r.out);
	first = strtod(strstr(s, "heldout_loglik_per_token=") + 25, NULL);
	last = strtod(strstr(l, "heldout_loglik_per_token=") + 25, NULL);
	cr_assert_float_eq(app_metric(&r, "heldout_loglik_per_token"), last,
			   1e-4);
	cr_assert_gt(last, first + 0.05, "held-out %.4f -> %.4f", first, last);
	/* a worse fit on unseen text than on the training text */
	cr_assert_lt(last, app_metric(&r, "loglik_per_token"));
	cr_assert_eq(strrchr(r.done, ' ') -
			 strstr(r.done, " loglik_per_token="),
		     0, "summary must end with loglik_per_token=: %s", r.done);
	lda_corpus_free(&t);
	lda_corpus_free(&c);
}

Test(lda_run, uci_from_write_uci)
{
	char args[4096];
	struct app_run r, u;

	cr_assert_eq(mkdir(tmp("uci"), 0700), 0);
	snprintf(args, sizeof(args),
		 "run -q --clocks 1 lda --text %s --max-doc-frac 0.25 "
		 "--write-uci %s",
		 lda_test_kjv(), tmp("uci"));
	app_run(&r, args);
	cr_assert_eq(r.status, 0, "%s", r.out);
	snprintf(args, sizeof(args),
		 "run -q -n 2 --clocks 4 lda --uci %s --vocab %s --top-words "
		 "5",
		 tmp("uci/docword.txt"), tmp("uci/vocab.txt"));
	app_run(&u, args);
	cr_assert_eq(u.status, 0, "%s", u.out);
	cr_assert_eq(app_metric(&u, "tokens"), app_metric(&r, "tokens"));
	cr_assert_gt(app_metric(&u, "loglik_per_token"),
		     app_metric(&r, "loglik_per_token"));
	cr_assert_not_null(strstr(u.out, "topic  19:"), "%s", u.out);
	rm_tmp();
}

static void expect_fail(const char *args, const char *needle,
			const char *needle2)
{
	struct app_run r;

	app_run(&r, args);
	cr_assert(r.status != 0 && r.status < 128,
		  "exit %d (want a clean non-zero exit): %s", r.status, r.out);
	cr_assert_not_null(strstr(r.out, needle), "no '%s' in: %s", needle,
			   r.out);
	if (needle2)
		cr_assert_not_null(strstr(r.out, needle2), "no '%s' in: %s",
				   needle2, r.out);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(lda_run, bad_input_is_a_clear_error)
{
	char args[4096];

	expect_fail("run lda", "give either --uci", NULL);
	expect_fail("run lda --text /x --topics 1", "--topics wants", NULL);
	expect_fail("run lda --text /x --topics 65536", "--topics wants",
		    "65535");
	expect_fail("run lda --text /x --sampler fast",
		    "--sampler wants sparse or dense", NULL);
	expect_fail("run lda --text /x --heldout 0.9", "--heldout wants", NULL);
	put(tmp("dw"), "2\n3\n2\n1 1 1\n2 3 2\n");
	put(tmp("voc"), "a\nb\n");
	snprintf(args, sizeof(args), "run lda --uci %s --vocab %s", tmp("dw"),
		 tmp("voc"));
	expect_fail(args, "voc: vocabulary mismatch: 2 words", NULL);
	put(tmp("dw"), "2\n3\n2\n1 1 1\n2 4 2\n");
	snprintf(args, sizeof(args), "run lda --uci %s", tmp("dw"));
	expect_fail(args, "dw:5:", "wordID 4 (1..3)");
	/* a model saved with another vocabulary */
	put(tmp("dw"), "2\n3\n2\n1 1 1\n2 3 2\n");
	snprintf(args, sizeof(args), "run -q --clocks 1 lda --uci %s --save %s",
		 tmp("dw"), tmp("m"));
	{
		struct app_run r;

		app_run(&r, args);
		cr_assert_eq(r.status, 0, "%s", r.out);
	}
	put(tmp("dw4"), "2\n4\n2\n1 1 1\n2 4 2\n");
	snprintf(args, sizeof(args), "run -q --clocks 1 lda --uci %s --load %s",
		 tmp("dw4"), tmp("m"));
	expect_fail(args, "expected 'table word_topic 4 20'", "m:2:");
	/* truncated gzip */
	{
		gzFile g = gzopen(tmp("big.gz"), "wb");
		char cmd[512];

		gzprintf(g, "1000\n50\n100000\n");
		for (int i = 0; i < 100000; i++)
			gzprintf(g, "%d %d %d\n", i / 100 + 1,
				 (i * 7919) % 50 + 1, i % 7 + 1);
		gzclose(g);
		snprintf(cmd, sizeof(cmd), "head -c 100000 %s > %s && mv %s %s",
			 tmp("big.gz"), tmp("cut"), tmp("cut"), tmp("big.gz"));
		cr_assert_eq(system(cmd), 0);
	}
	snprintf(args, sizeof(args), "run lda --uci %s", tmp("big.gz"));
	expect_fail(args, "big.gz: byte", "truncated gzip");
	put(tmp("empty"), "");
	snprintf(args, sizeof(args), "run lda --uci %s", tmp("empty"));
	expect_fail(args, "empty:", "unexpected end of file");
	snprintf(args, sizeof(args), "run lda --text %s", tmp("empty"));
	expect_fail(args, "empty", "no documents");
	rm_tmp();
}
