// SPDX-License-Identifier: MIT
/* LDA loaders: UCI bag-of-words and plain text, and bad input ending in a
 * message naming file and line, never a crash. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lda/lda_corpus.h"
#include "app_run_util.h"

TestSuite(lda_corpus, .timeout = 30);

static void put(const char *name, const char *text, int gz)
{
	size_t n = strlen(text);

	if (gz) {
		gzFile g = gzopen(tmp(name), "wb");

		cr_assert_not_null(g);
		cr_assert_eq(gzwrite(g, text, (unsigned)n), (int)n);
		gzclose(g);
	} else {
		FILE *f = fopen(tmp(name), "wb");

		cr_assert_not_null(f);
		cr_assert_eq(fwrite(text, 1, n, f), n);
		fclose(f);
	}
}

static void stderr_has(const char *a, const char *b)
{
	char buf[4096] = { 0 };
	FILE *f;

	fflush(stderr);
	f = cr_get_redirected_stderr();
	fread(buf, 1, sizeof(buf) - 1, f);
	cr_assert_not_null(strstr(buf, a), "no '%s' in: %s", a, buf);
	if (b)
		cr_assert_not_null(strstr(buf, b), "no '%s' in: %s", b, buf);
}

static const char docword[] = "3\n4\n5\n1 1 2\n1 3 1\n3 2 1\n3 4 3\n2 1 1\n";
static const char vocab[] = "apple\nbanana\ncherry\ndate\n";

Test(lda_corpus, uci_plain_and_gzip)
{
	struct lda_corpus c;

	for (int gz = 0; gz < 2; gz++) {
		put("docword.txt", docword, gz);
		put("vocab.txt", vocab, gz);
		cr_assert_eq(
		    lda_load_uci(tmp("docword.txt"), tmp("vocab.txt"), &c), 0);
		cr_assert_eq(c.ndocs, 3);
		cr_assert_eq(c.nwords, 4);
		cr_assert_eq(c.ntokens, 8);
		cr_assert_eq(c.doc[1], 3);
		cr_assert_eq(c.doc[2], 4); /* doc 2 listed last, sorted in */
		cr_assert_eq(c.word[0], 0);
		cr_assert_eq(c.word[1], 0);
		cr_assert_eq(c.word[2], 2);
		cr_assert_eq(c.word[3], 0);
		cr_assert_str_eq(c.vocab[3], "date");
		lda_corpus_free(&c);
	}
	rm_tmp();
}

Test(lda_corpus, uci_round_trip)
{
	struct lda_corpus c, d;

	put("docword.txt", docword, 0);
	put("vocab.txt", vocab, 0);
	cr_assert_eq(lda_load_uci(tmp("docword.txt"), tmp("vocab.txt"), &c), 0);
	cr_assert_eq(mkdir(tmp("out"), 0700), 0);
	cr_assert_eq(lda_write_uci(&c, tmp("out")), 0);
	cr_assert_eq(
	    lda_load_uci(tmp("out/docword.txt"), tmp("out/vocab.txt"), &d), 0);
	cr_assert_eq(d.ndocs, c.ndocs);
	cr_assert_eq(d.ntokens, c.ntokens);
	cr_assert_arr_eq(d.doc, c.doc, (c.ndocs + 1) * sizeof(*c.doc));
	for (uint64_t i = 0; i < c.ndocs; i++) {
		uint32_t a[4] = { 0 }, b[4] = { 0 };

		for (uint64_t t = c.doc[i]; t < c.doc[i + 1]; t++) {
			a[c.word[t]]++;
			b[d.word[t]]++;
		}
		cr_assert_arr_eq(a, b, sizeof(a));
	}
	lda_corpus_free(&c);
	lda_corpus_free(&d);
	rm_tmp();
}

static void uci_bad(const char *dw, const char *voc, int want,
		    const char *needle, const char *needle2)
{
	struct lda_corpus c;

	put("docword.txt", dw, 1);
	put("vocab.txt", voc, 0);
	cr_assert_eq(lda_load_uci(tmp("docword.txt"), tmp("vocab.txt"), &c),
		     want);
	stderr_has(needle, needle2);
	rm_tmp();
}

Test(lda_corpus, uci_vocab_too_short, .init = cr_redirect_stderr)
{
	uci_bad(docword, "apple\nbanana\n", -EINVAL, "vocab.txt",
		"vocabulary mismatch: 2 words");
}

Test(lda_corpus, uci_vocab_too_long, .init = cr_redirect_stderr)
{
	uci_bad(docword, "a\nb\nc\nd\ne\n", -EINVAL,
		"vocab.txt:5:", "vocabulary mismatch");
}

Test(lda_corpus, uci_word_out_of_range, .init = cr_redirect_stderr)
{
	uci_bad("3\n4\n2\n1 1 2\n2 5 1\n", vocab, -EINVAL,
		"docword.txt:5:", "wordID 5 (1..4)");
}

Test(lda_corpus, uci_doc_out_of_range, .init = cr_redirect_stderr)
{
	uci_bad("3\n4\n1\n0 1 2\n", vocab, -EINVAL,
		"docword.txt:4:", "docID 0 (1..3)");
}

Test(lda_corpus, uci_junk_line, .init = cr_redirect_stderr)
{
	uci_bad("3\n4\n2\n1 1 2\n1 x 2\n", vocab, -EINVAL,
		"docword.txt:5:", "expected 'docID wordID count'");
}

Test(lda_corpus, uci_bad_header, .init = cr_redirect_stderr)
{
	uci_bad("3\nfour\n2\n", vocab, -EINVAL,
		"docword.txt:2:", "vocabulary size W");
}

Test(lda_corpus, uci_truncated_entries, .init = cr_redirect_stderr)
{
	uci_bad("3\n4\n9\n1 1 2\n", vocab, -EINVAL, "1 entries", "NNZ = 9");
}

Test(lda_corpus, uci_empty_file, .init = cr_redirect_stderr)
{
	uci_bad("", vocab, -EINVAL, "docword.txt", "unexpected end of file");
}

Test(lda_corpus, uci_truncated_gzip, .init = cr_redirect_stderr)
{
	struct lda_corpus c;
	char *big, *raw;
	size_t n = 0;
	long sz;
	FILE *f;

	big = malloc(4 << 20);
	n += (size_t)sprintf(big, "100000\n4\n200000\n");
	for (int i = 0; i < 200000; i++)
		n += (size_t)sprintf(big + n, "%d %d %d\n", i / 2 + 1,
				     i % 4 + 1, (i * 7919) % 13 + 1);
	put("docword.txt", big, 1);
	f = fopen(tmp("docword.txt"), "rb");
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	raw = malloc((size_t)sz);
	cr_assert_eq(fread(raw, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	f = fopen(tmp("docword.txt"), "wb");
	fwrite(raw, 1, (size_t)sz / 2, f);
	fclose(f);
	cr_assert_eq(lda_load_uci(tmp("docword.txt"), NULL, &c), -EIO);
	stderr_has("docword.txt", "truncated gzip");
	free(raw);
	free(big);
	rm_tmp();
}

static const char blocks[] = "The quick brown fox jumps over the lazy dog.\n"
			     "Fox and dog again: the FOX!\n"
			     "\n\n"
			     "   \n"
			     "Thou shalt see the dog and the cat.\n"
			     "\n"
			     "cat cat dog fox zebra\n";

Test(lda_corpus, text_blocks)
{
	struct lda_text_opts o;
	struct lda_corpus c;

	put("t.txt", blocks, 1);
	lda_text_opts_default(&o);
	o.min_count = 2;
	cr_assert_eq(lda_load_text(tmp("t.txt"), &o, &c), 0);
	cr_assert_eq(c.ndocs, 3);
	/* fox (4), dog (4), cat (3) survive; the rest is stop words, short
	 * or seen once */
	cr_assert_eq(c.nwords, 3);
	cr_assert_str_eq(c.vocab[0], "fox");
	cr_assert_str_eq(c.vocab[1], "dog");
	cr_assert_str_eq(c.vocab[2], "cat");
	cr_assert_eq(c.doc[1], 5); /* fox dog fox dog fox */
	cr_assert_eq(c.doc[2], 7); /* dog cat */
	cr_assert_eq(c.ntokens, 11);
	lda_corpus_free(&c);

	/* a document-frequency cut: dog is in 3 of 3 documents, > 0.7 */
	o.max_doc_frac = 0.7;
	cr_assert_eq(lda_load_text(tmp("t.txt"), &o, &c), 0);
	cr_assert_eq(c.nwords, 2);
	cr_assert_str_eq(c.vocab[0], "fox");
	cr_assert_str_eq(c.vocab[1], "cat");
	lda_corpus_free(&c);
	rm_tmp();
}

Test(lda_corpus, text_directory_and_stopfile)
{
	struct lda_text_opts o;
	struct lda_corpus c;

	cr_assert_eq(mkdir(tmp("docs"), 0700), 0);
	put("docs/b.txt", "zebra zebra lion\n\nlion zebra", 0);
	put("docs/a.txt", "lion lion tiger tiger", 1);
	put("docs/.hidden", "zebra zebra zebra", 0);
	put("stop", "# comment\nTIGER\n", 0);
	lda_text_opts_default(&o);
	o.min_count = 1;
	o.stopfile = tmp("stop");
	cr_assert_eq(lda_load_text(tmp("docs"), &o, &c), 0);
	cr_assert_eq(c.ndocs, 2); /* one per file, blank lines inside */
	cr_assert_eq(c.nwords, 2);
	cr_assert_str_eq(c.vocab[0], "lion"); /* a.txt first */
	cr_assert_eq(c.doc[1], 2);
	cr_assert_eq(c.ntokens, 7);
	lda_corpus_free(&c);
	rm_tmp();
}

Test(lda_corpus, text_nothing_left, .init = cr_redirect_stderr)
{
	struct lda_text_opts o;
	struct lda_corpus c;

	put("t.txt", "the and of\n\nto be or not\n", 0);
	lda_text_opts_default(&o);
	cr_assert_eq(lda_load_text(tmp("t.txt"), &o, &c), -EINVAL);
	stderr_has("t.txt", "no words left");
	put("e.txt", "", 0);
	cr_assert_eq(lda_load_text(tmp("e.txt"), &o, &c), -EINVAL);
	stderr_has("e.txt", "no documents");
	cr_assert_eq(lda_load_text(tmp("missing"), &o, &c), -ENOENT);
	rm_tmp();
}

Test(lda_corpus, text_binary_refused, .init = cr_redirect_stderr)
{
	struct lda_text_opts o;
	struct lda_corpus c;
	FILE *f;

	f = fopen(tmp("bin"), "wb");
	fwrite("word\0word\n", 1, 10, f);
	fclose(f);
	lda_text_opts_default(&o);
	cr_assert_eq(lda_load_text(tmp("bin"), &o, &c), -EINVAL);
	stderr_has("bin:1:", "NUL byte");
	rm_tmp();
}

/* Found by fuzz_text: a stop word cut short by a NUL byte matched a
 * shorter stored word and the compare read past its end. */
Test(lda_corpus, stopfile_nul_refused, .init = cr_redirect_stderr)
{
	struct lda_text_opts o;
	struct lda_corpus c;
	FILE *f;

	put("t.txt", blocks, 0);
	f = fopen(tmp("stop"), "wb");
	fwrite("fox\ndog\ndo\0g\n", 1, 13, f);
	fclose(f);
	lda_text_opts_default(&o);
	o.stopfile = tmp("stop");
	cr_assert_eq(lda_load_text(tmp("t.txt"), &o, &c), -EINVAL);
	stderr_has("stop:3:", "NUL byte");
	rm_tmp();
}

/* Header values are bounded before anything is sized from them: each of
 * D, W, NNZ and a count at 2^32 - 1 is a message naming file and line. */
Test(lda_corpus, uci_huge_docs, .init = cr_redirect_stderr)
{
	uci_bad("4294967295\n4\n1\n1 1 1\n", vocab, -EINVAL, "docword.txt:1:",
		"the number of documents D = 4294967295 is above the 67108864");
}

/* Found by fuzz_uci (a 30 s timeout): a blank NNZ line read as 0, and a
 * header of 2^26 documents with no entry trained on nothing. */
Test(lda_corpus, uci_blank_or_zero_nnz, .init = cr_redirect_stderr)
{
	uci_bad(" 67108864\n4\n \t", vocab, -EINVAL, "docword.txt:3:",
		"expected the number of entries NNZ (an integer)");
	uci_bad("3\n4\n0\n", vocab, -EINVAL, "docword.txt:3:",
		"3 documents, 4 words and 0 entries: nothing to learn");
}

Test(lda_corpus, uci_huge_words, .init = cr_redirect_stderr)
{
	uci_bad("3\n4294967295\n1\n1 1 1\n", vocab, -EINVAL, "docword.txt:2:",
		"the vocabulary size W = 4294967295 is above the 16777216");
}

Test(lda_corpus, uci_huge_nnz, .init = cr_redirect_stderr)
{
	uci_bad("3\n4\n4294967295\n1 1 1\n", vocab, -EINVAL,
		"docword.txt: 1 entries, but the header (line 3) declares NNZ "
		"= 4294967295",
		NULL);
}

Test(lda_corpus, uci_huge_count, .init = cr_redirect_stderr)
{
	uci_bad("3\n4\n2\n1 1 1\n2 2 4294967295\n", vocab, -EINVAL,
		"docword.txt:5:", "count 4294967295 (1..16777216)");
}

Test(lda_corpus, uci_too_many_tokens, .init = cr_redirect_stderr)
{
	char dw[8192];
	size_t n = (size_t)sprintf(dw, "300\n4\n300\n");

	/* 300 entries of 2^24 tokens: the 257th passes 2^32 */
	for (int d = 1; d <= 300; d++)
		n += (size_t)sprintf(dw + n, "%d 1 16777216\n", d);
	uci_bad(dw, vocab, -EINVAL,
		"docword.txt:260:", "more than 4294967296 tokens");
}
