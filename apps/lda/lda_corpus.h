/* SPDX-License-Identifier: MIT */
/*
 * LDA input: documents as token lists over a vocabulary.  Loaders for the
 * UCI bag-of-words format (docword.txt + vocab.txt, as NYTimes/KOS/Enron)
 * and for plain text (one document per file of a directory, or per
 * blank-line-separated block of a file) with stop words and a rare-word cut.
 */
#ifndef FLEXRR_APPS_LDA_CORPUS_H
#define FLEXRR_APPS_LDA_CORPUS_H

#include <stdint.h>

/* Input bounds, checked before anything is sized from them.  The largest
 * UCI corpus (PubMed) has 8.2M documents, 141k words and 730M tokens; a
 * count is one cell of a float table, exact up to 2^24. */
#define LDA_MAX_DOCS (1u << 26)
#define LDA_MAX_WORDS (1u << 24)
#define LDA_MAX_COUNT (1u << 24)
#define LDA_MAX_TOKENS (1ull << 32)

struct lda_corpus {
	uint64_t ndocs;
	uint32_t nwords; /* vocabulary size V */
	uint64_t ntokens;
	uint64_t *doc;	/* ndocs + 1 offsets into word[] */
	uint32_t *word; /* ntokens word ids, 0..V-1 */
	char **vocab;	/* V words (NULL entries allowed: no vocab) */
};

struct lda_text_opts {
	uint32_t min_count;   /* drop words seen fewer times (default 5) */
	double max_doc_frac;  /* drop words in more docs than this (1 = off) */
	uint32_t min_length;  /* drop shorter tokens (default 3) */
	int builtin_stop;     /* use the built-in English stop list */
	const char *stopfile; /* extra stop words, one per line (or NULL) */
};

void lda_text_opts_default(struct lda_text_opts *o);

/* docword: "D\nW\nNNZ\n" then NNZ lines "doc word count" (1-based).
 * vocab: W lines (NULL = none; words are then printed as ids). */
int lda_load_uci(const char *docword, const char *vocab, struct lda_corpus *c);
/* path: a directory (one document per regular file, in name order) or a
 * file (documents separated by blank lines). */
int lda_load_text(const char *path, const struct lda_text_opts *o,
		  struct lda_corpus *c);
/* Write c as UCI files DIR/docword.txt and DIR/vocab.txt. */
int lda_write_uci(const struct lda_corpus *c, const char *dir);
void lda_corpus_free(struct lda_corpus *c);
/* The loaders' growable arrays: *p holds at least need elements of elt
 * bytes (capacity doubles); -ENOMEM leaves *p as it was. */
int lda_grow(void **p, uint64_t *cap, uint64_t need, size_t elt);

#endif
