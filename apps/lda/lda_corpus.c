// SPDX-License-Identifier: MIT
/* LDA corpus: the shared parts and the UCI bag-of-words loader (the plain-text
 * tokenizer is lda_text.c). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/reader.h"
#include "flexrr/file.h"
#include "flexrr/log.h"
#include "lda_corpus.h"

void lda_corpus_free(struct lda_corpus *c)
{
	if (c->vocab)
		for (uint32_t i = 0; i < c->nwords; i++)
			free(c->vocab[i]);
	free(c->vocab);
	free(c->doc);
	free(c->word);
	memset(c, 0, sizeof(*c));
}

/* ---- growable arrays ---------------------------------------------------- */

int lda_grow(void **p, uint64_t *cap, uint64_t need, size_t elt)
{
	uint64_t c = *cap ? *cap : 1024;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * elt);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* ---- UCI bag-of-words --------------------------------------------------- */

static int uci_header(struct frr_reader *r, const char *what, uint64_t max,
		      uint64_t *out)
{
	char *line, *end;
	size_t len;
	int rc, digits;

	rc = frr_reader_line(r, &line, &len);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return frr_reader_fail(r, "unexpected end of file: expected "
					  "the UCI header (D, W, NNZ lines)");
	errno = 0;
	*out = strtoull(line, &end, 10);
	digits = end != line; /* before the blanks after the number */
	while (*end == ' ' || *end == '\t')
		end++;
	if (!digits || *end || strchr(line, '-') || strchr(line, '+'))
		return frr_reader_fail(
		    r, "expected %s (an integer), got '%.40s'", what, line);
	if (errno || *out > max)
		return frr_reader_fail(r,
				       "%s = %.40s is above the %" PRIu64
				       " flexrr's lda supports; is this a UCI "
				       "docword file?",
				       what, line, max);
	return 0;
}

struct uci_entry {
	uint32_t doc, word, count;
};

static int uci_vocab(const char *path, uint64_t W, struct lda_corpus *c)
{
	struct frr_reader *r;
	uint64_t n = 0;
	char *line;
	size_t len;
	int rc;

	rc = frr_reader_open(path, &r);
	if (rc)
		return rc;
	c->vocab = calloc(W ? W : 1, sizeof(*c->vocab));
	if (!c->vocab) {
		rc = frr_reader_oom(r, "the vocabulary", W * sizeof(char *));
		goto close_r;
	}
	while ((rc = frr_reader_line(r, &line, &len)) == 1) {
		if (n == W) {
			rc = frr_reader_fail(r,
					     "vocabulary mismatch: more words "
					     "than the %" PRIu64
					     " the docword header declares; "
					     "pass the vocab file of the same "
					     "corpus",
					     W);
			goto close_r;
		}
		c->vocab[n] = strdup(line);
		if (!c->vocab[n++]) {
			rc = frr_reader_oom(r, "the vocabulary", len + 1);
			goto close_r;
		}
	}
	if (rc == 0 && n != W) {
		frr_err("%s: vocabulary mismatch: %" PRIu64
			" words, but the docword header declares %" PRIu64
			"; pass the vocab file of the same corpus",
			path, n, W);
		rc = -EINVAL;
	}
close_r:
	frr_reader_close(r);
	return rc;
}

/* One "docID wordID count" line into entry *e, checked against the header
 * and the limits; *ntok counts the tokens so far. */
static int uci_entry(struct frr_reader *r, const char *line, uint64_t D,
		     uint64_t W, uint64_t *ntok, struct uci_entry *e)
{
	unsigned long long d, w, k;
	int used = 0;

	if (sscanf(line, "%llu %llu %llu %n", &d, &w, &k, &used) != 3 ||
	    line[used] || strchr(line, '-'))
		return frr_reader_fail(r,
				       "expected 'docID wordID count' (three "
				       "positive integers), got '%.60s'",
				       line);
	if (d < 1 || d > D || w < 1 || w > W || k < 1 || k > LDA_MAX_COUNT)
		return frr_reader_fail(r,
				       "out of range: docID %llu (1..%" PRIu64
				       "), wordID %llu (1..%" PRIu64
				       "), count %llu (1..%u)",
				       d, D, w, W, k, LDA_MAX_COUNT);
	if (*ntok + k > LDA_MAX_TOKENS)
		return frr_reader_fail(r,
				       "more than %llu tokens: above what "
				       "flexrr's lda supports",
				       LDA_MAX_TOKENS);
	*e = (struct uci_entry){ (uint32_t)(d - 1), (uint32_t)(w - 1),
				 (uint32_t)k };
	*ntok += k;
	return 0;
}

/* The NNZ entries after the header, in file order: *e (the caller frees
 * it, also on failure), *ntok their tokens. */
static int uci_entries(struct frr_reader *r, const char *docword, uint64_t D,
		       uint64_t W, uint64_t NNZ, struct uci_entry **e,
		       uint64_t *ntok)
{
	uint64_t n = 0, cap = 0;
	char *line;
	size_t len;
	int rc;

	while ((rc = frr_reader_line(r, &line, &len)) == 1) {
		if (!len)
			continue;
		if (n == NNZ)
			return frr_reader_fail(r,
					       "more entries than the NNZ = "
					       "%" PRIu64
					       " the header declares",
					       NNZ);
		if (lda_grow((void **)e, &cap, n + 1, sizeof(**e)))
			return frr_reader_oom(r, "the entries",
					      (n + 1) * sizeof(**e));
		rc = uci_entry(r, line, D, W, ntok, &(*e)[n]);
		if (rc)
			return rc;
		n++;
	}
	if (rc < 0)
		return rc;
	if (n != NNZ) {
		frr_err("%s: %" PRIu64 " entries, but the header (line 3) "
			"declares NNZ = %" PRIu64 "; the file is truncated or "
			"the header is wrong",
			docword, n, NNZ);
		return -EINVAL;
	}
	return 0;
}

/* The entries as documents: a counting sort by document, the input order
 * within a document kept. */
static int uci_by_doc(struct frr_reader *r, const struct uci_entry *e,
		      uint64_t n, uint64_t D, uint64_t ntok,
		      struct lda_corpus *c)
{
	uint64_t *fill = calloc(D, sizeof(*fill));
	int rc = 0;

	c->doc = calloc(D + 1, sizeof(*c->doc));
	c->word = malloc((ntok ? ntok : 1) * sizeof(*c->word));
	if (!c->doc || !fill || !c->word) {
		rc = frr_reader_oom(r, "the documents",
				    (2 * D + 1) * 8 + ntok * 4);
		goto out;
	}
	for (uint64_t i = 0; i < n; i++)
		c->doc[e[i].doc + 1] += e[i].count;
	for (uint64_t d = 0; d < D; d++)
		c->doc[d + 1] += c->doc[d];
	for (uint64_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < e[i].count; k++)
			c->word[c->doc[e[i].doc] + fill[e[i].doc]++] =
			    e[i].word;
out:
	free(fill);
	return rc;
}

int lda_load_uci(const char *docword, const char *vocab, struct lda_corpus *c)
{
	struct uci_entry *e = NULL;
	struct frr_reader *r;
	uint64_t D, W, NNZ, ntok = 0;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = frr_reader_open(docword, &r);
	if (rc)
		return rc;
	if ((rc = uci_header(r, "the number of documents D", LDA_MAX_DOCS,
			     &D)) ||
	    (rc = uci_header(r, "the vocabulary size W", LDA_MAX_WORDS, &W)) ||
	    (rc = uci_header(r, "the number of entries NNZ", UINT64_MAX >> 8,
			     &NNZ)))
		goto out;
	if (!D || !W || !NNZ) {
		rc = frr_reader_fail(
		    r,
		    "header declares %" PRIu64 " documents, %" PRIu64
		    " words and %" PRIu64 " entries: nothing to learn from",
		    D, W, NNZ);
		goto out;
	}
	rc = uci_entries(r, docword, D, W, NNZ, &e, &ntok);
	if (!rc)
		rc = uci_by_doc(r, e, NNZ, D, ntok, c);
	if (rc)
		goto out;
	c->ndocs = D;
	c->nwords = (uint32_t)W;
	c->ntokens = ntok;
	if (vocab)
		rc = uci_vocab(vocab, W, c);
out:
	free(e);
	if (rc)
		lda_corpus_free(c);
	frr_reader_close(r);
	return rc;
}

struct uci_fill {
	const struct lda_corpus *c;
	uint32_t *cnt; /* per word, all zero between documents */
	uint64_t nnz;
	FILE *f; /* NULL: count the (document, word) pairs only */
};

/* One pass over the documents: each distinct word of a document once, with
 * its count; counted into nnz, or written to f. */
static void uci_pass(struct uci_fill *u)
{
	const struct lda_corpus *c = u->c;

	for (uint64_t d = 0; d < c->ndocs; d++) {
		for (uint64_t i = c->doc[d]; i < c->doc[d + 1]; i++)
			u->cnt[c->word[i]]++;
		for (uint64_t i = c->doc[d]; i < c->doc[d + 1]; i++) {
			uint32_t w = c->word[i];

			if (!u->cnt[w])
				continue;
			if (u->f)
				fprintf(u->f, "%" PRIu64 " %u %u\n", d + 1,
					w + 1, u->cnt[w]);
			else
				u->nnz++;
			u->cnt[w] = 0;
		}
	}
}

static int fill_docword(FILE *f, void *arg)
{
	struct uci_fill *u = arg;

	u->f = f;
	fprintf(f, "%" PRIu64 "\n%u\n%" PRIu64 "\n", u->c->ndocs, u->c->nwords,
		u->nnz);
	uci_pass(u);
	return 0;
}

static int fill_vocab(FILE *f, void *arg)
{
	const struct lda_corpus *c = ((struct uci_fill *)arg)->c;

	for (uint32_t w = 0; w < c->nwords; w++) {
		if (c->vocab && c->vocab[w])
			fprintf(f, "%s\n", c->vocab[w]);
		else
			fprintf(f, "w%u\n", w + 1);
	}
	return 0;
}

int lda_write_uci(const struct lda_corpus *c, const char *dir)
{
	struct uci_fill u = { .c = c };
	char *p = NULL;
	int rc;

	u.cnt = calloc(c->nwords ? c->nwords : 1, sizeof(*u.cnt));
	if (!u.cnt)
		return -ENOMEM;
	/* two passes: NNZ first (the header), then the entries */
	uci_pass(&u);
	rc = asprintf(&p, "%s/docword.txt", dir) < 0 ? -ENOMEM : 0;
	if (!rc)
		rc = frr_file_write_atomic(p, "lda: --write-uci", fill_docword,
					   &u);
	free(p);
	p = NULL;
	if (!rc)
		rc = asprintf(&p, "%s/vocab.txt", dir) < 0 ? -ENOMEM : 0;
	if (!rc)
		rc = frr_file_write_atomic(p, "lda: --write-uci", fill_vocab,
					   &u);
	free(p);
	free(u.cnt);
	return rc;
}
