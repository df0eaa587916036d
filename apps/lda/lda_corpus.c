// SPDX-License-Identifier: MIT
/* LDA corpus loaders: UCI bag-of-words and a plain-text tokenizer. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/reader.h"
#include "flexrr/log.h"
#include "lda_corpus.h"

/* Function words of modern and Early Modern English (the KJV's "thee",
 * "hath", "unto" carry no topic either). */
static const char *const lda_stop_words[] = {
	"a",
	"about",
	"above",
	"after",
	"again",
	"against",
	"all",
	"also",
	"am",
	"an",
	"and",
	"any",
	"are",
	"aren",
	"as",
	"at",
	"be",
	"because",
	"been",
	"before",
	"being",
	"below",
	"between",
	"both",
	"but",
	"by",
	"can",
	"cannot",
	"could",
	"did",
	"didn",
	"do",
	"does",
	"doesn",
	"doing",
	"don",
	"down",
	"during",
	"each",
	"even",
	"ever",
	"every",
	"few",
	"for",
	"from",
	"further",
	"get",
	"got",
	"had",
	"has",
	"have",
	"having",
	"he",
	"her",
	"here",
	"hers",
	"herself",
	"him",
	"himself",
	"his",
	"how",
	"however",
	"i",
	"if",
	"in",
	"into",
	"is",
	"isn",
	"it",
	"its",
	"itself",
	"just",
	"let",
	"like",
	"may",
	"me",
	"might",
	"more",
	"most",
	"much",
	"must",
	"my",
	"myself",
	"neither",
	"never",
	"no",
	"nor",
	"not",
	"now",
	"of",
	"off",
	"on",
	"once",
	"one",
	"only",
	"or",
	"other",
	"ought",
	"our",
	"ours",
	"ourselves",
	"out",
	"over",
	"own",
	"put",
	"said",
	"same",
	"say",
	"says",
	"see",
	"shall",
	"she",
	"should",
	"so",
	"some",
	"such",
	"than",
	"that",
	"the",
	"their",
	"theirs",
	"them",
	"themselves",
	"then",
	"there",
	"therefore",
	"these",
	"they",
	"this",
	"those",
	"though",
	"through",
	"thus",
	"to",
	"too",
	"under",
	"until",
	"up",
	"upon",
	"us",
	"very",
	"was",
	"we",
	"were",
	"what",
	"when",
	"where",
	"whether",
	"which",
	"while",
	"who",
	"whom",
	"whose",
	"why",
	"will",
	"with",
	"within",
	"without",
	"would",
	"yet",
	"you",
	"your",
	"yours",
	"yourself",
	"yourselves",
	/* Early Modern English */
	"art",
	"canst",
	"cometh",
	"didst",
	"doeth",
	"doth",
	"dost",
	"hast",
	"hath",
	"hither",
	"thee",
	"thence",
	"thereof",
	"therein",
	"thereby",
	"thine",
	"thither",
	"thou",
	"thy",
	"thyself",
	"unto",
	"wast",
	"wherefore",
	"wherein",
	"whereof",
	"whither",
	"wilt",
	"ye",
	"yea",
	"shalt",
	"saith",
	"verily",
	"lo",
	"behold",
	"came",
	"come",
	"went",
	"made",
	"make",
	"things",
	"thing",
	"according",
	"among",
	"many",
	"day",
};

void lda_text_opts_default(struct lda_text_opts *o)
{
	o->min_count = 5;
	o->max_doc_frac = 1.0;
	o->min_length = 3;
	o->builtin_stop = 1;
	o->stopfile = NULL;
}

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

static int grow(void **p, uint64_t *cap, uint64_t need, size_t elt)
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

int lda_load_uci(const char *docword, const char *vocab, struct lda_corpus *c)
{
	struct uci_entry *e = NULL;
	struct frr_reader *r;
	uint64_t D, W, NNZ, n = 0, cap = 0, ntok = 0, *fill = NULL;
	char *line;
	size_t len;
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
		goto close_r;
	if (!D || !W || !NNZ) {
		rc = frr_reader_fail(
		    r,
		    "header declares %" PRIu64 " documents, %" PRIu64
		    " words and %" PRIu64 " entries: nothing to learn from",
		    D, W, NNZ);
		goto close_r;
	}
	while ((rc = frr_reader_line(r, &line, &len)) == 1) {
		unsigned long long d, w, k;
		int used = 0;

		if (!len)
			continue;
		if (sscanf(line, "%llu %llu %llu %n", &d, &w, &k, &used) != 3 ||
		    line[used] || strchr(line, '-')) {
			rc = frr_reader_fail(r,
					     "expected 'docID wordID count' "
					     "(three positive integers), "
					     "got '%.60s'",
					     line);
			goto free_e;
		}
		if (d < 1 || d > D || w < 1 || w > W || k < 1 ||
		    k > LDA_MAX_COUNT) {
			rc = frr_reader_fail(
			    r,
			    "out of range: docID %llu (1..%" PRIu64
			    "), wordID %llu (1..%" PRIu64 "), count %llu "
			    "(1..%u)",
			    d, D, w, W, k, LDA_MAX_COUNT);
			goto free_e;
		}
		if (ntok + k > LDA_MAX_TOKENS) {
			rc = frr_reader_fail(r,
					     "more than %llu tokens: above "
					     "what flexrr's lda supports",
					     LDA_MAX_TOKENS);
			goto free_e;
		}
		if (n == NNZ) {
			rc = frr_reader_fail(r,
					     "more entries than the NNZ = "
					     "%" PRIu64 " the header declares",
					     NNZ);
			goto free_e;
		}
		rc = grow((void **)&e, &cap, n + 1, sizeof(*e));
		if (rc) {
			rc = frr_reader_oom(r, "the entries",
					    (n + 1) * sizeof(*e));
			goto free_e;
		}
		e[n++] = (struct uci_entry){ (uint32_t)(d - 1),
					     (uint32_t)(w - 1), (uint32_t)k };
		ntok += k;
	}
	if (rc < 0)
		goto free_e;
	if (n != NNZ) {
		frr_err("%s: %" PRIu64 " entries, but the header (line 3) "
			"declares NNZ = %" PRIu64 "; the file is truncated or "
			"the header is wrong",
			docword, n, NNZ);
		rc = -EINVAL;
		goto free_e;
	}
	/* counting sort by document: input order within a document kept */
	c->doc = calloc(D + 1, sizeof(*c->doc));
	fill = calloc(D, sizeof(*fill));
	c->word = malloc((ntok ? ntok : 1) * sizeof(*c->word));
	if (!c->doc || !fill || !c->word) {
		rc = frr_reader_oom(r, "the documents",
				    (2 * D + 1) * 8 + ntok * 4);
		goto free_e;
	}
	for (uint64_t i = 0; i < n; i++)
		c->doc[e[i].doc + 1] += e[i].count;
	for (uint64_t d = 0; d < D; d++)
		c->doc[d + 1] += c->doc[d];
	for (uint64_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < e[i].count; k++)
			c->word[c->doc[e[i].doc] + fill[e[i].doc]++] =
			    e[i].word;
	c->ndocs = D;
	c->nwords = (uint32_t)W;
	c->ntokens = ntok;
	if (vocab)
		rc = uci_vocab(vocab, W, c);
free_e:
	free(fill);
	free(e);
	if (rc)
		lda_corpus_free(c);
close_r:
	frr_reader_close(r);
	return rc;
}

int lda_write_uci(const struct lda_corpus *c, const char *dir)
{
	char *p = NULL;
	uint32_t *cnt = NULL;
	uint64_t nnz = 0;
	FILE *f = NULL;
	int rc = 0;

	cnt = calloc(c->nwords ? c->nwords : 1, sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	/* two passes: NNZ first (header), then the entries */
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			if (asprintf(&p, "%s/docword.txt", dir) < 0) {
				rc = -ENOMEM;
				goto free_cnt;
			}
			f = fopen(p, "w");
			if (!f)
				goto fail_open;
			fprintf(f, "%" PRIu64 "\n%u\n%" PRIu64 "\n", c->ndocs,
				c->nwords, nnz);
		}
		for (uint64_t d = 0; d < c->ndocs; d++) {
			for (uint64_t i = c->doc[d]; i < c->doc[d + 1]; i++)
				cnt[c->word[i]]++;
			for (uint64_t i = c->doc[d]; i < c->doc[d + 1]; i++) {
				uint32_t w = c->word[i];

				if (!cnt[w])
					continue;
				if (pass)
					fprintf(f, "%" PRIu64 " %u %u\n", d + 1,
						w + 1, cnt[w]);
				else
					nnz++;
				cnt[w] = 0;
			}
		}
	}
	if (fclose(f)) {
		f = NULL;
		goto fail_open;
	}
	free(p);
	if (asprintf(&p, "%s/vocab.txt", dir) < 0) {
		rc = -ENOMEM;
		goto free_cnt;
	}
	f = fopen(p, "w");
	if (!f)
		goto fail_open;
	for (uint32_t w = 0; w < c->nwords; w++) {
		if (c->vocab && c->vocab[w])
			fprintf(f, "%s\n", c->vocab[w]);
		else
			fprintf(f, "w%u\n", w + 1);
	}
	if (fclose(f)) {
		f = NULL;
		goto fail_open;
	}
	goto free_p;

fail_open:
	rc = -errno;
	frr_err("lda: cannot write '%s': %s; check that the directory exists",
		p, strerror(errno));
	if (f)
		fclose(f);
free_p:
	free(p);
free_cnt:
	free(cnt);
	return rc;
}

/* ---- plain text --------------------------------------------------------- */

struct vocab_hash {
	uint32_t cap; /* power of two */
	uint32_t n;
	uint32_t *slot; /* word id + 1, 0 = empty */
	char **word;	/* by id */
	uint64_t *count;
	uint64_t *df;	   /* documents containing the word */
	uint64_t *lastdoc; /* doc + 1 that last counted df */
	uint8_t *stop;
	uint64_t wcap;
};

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static void vh_free(struct vocab_hash *h)
{
	for (uint32_t i = 0; i < h->n; i++)
		free(h->word[i]);
	free(h->word);
	free(h->slot);
	free(h->count);
	free(h->df);
	free(h->lastdoc);
	free(h->stop);
	memset(h, 0, sizeof(*h));
}

static int vh_rehash(struct vocab_hash *h, uint32_t cap)
{
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (uint32_t id = 0; id < h->n; id++) {
		uint64_t i =
		    fnv1a(h->word[id], strlen(h->word[id])) & (cap - 1);

		while (s[i])
			i = (i + 1) & (cap - 1);
		s[i] = id + 1;
	}
	free(h->slot);
	h->slot = s;
	h->cap = cap;
	return 0;
}

/* Distinct words the text loader keeps before its cuts: the hash's 32-bit
 * slots must stay at most half full. */
#define LDA_TEXT_MAX_DISTINCT (1u << 30)

/* id of word s[0..n), added if new; < 0 on error (-E2BIG: too many) */
static int64_t vh_id(struct vocab_hash *h, const char *s, size_t n)
{
	uint64_t i;
	uint64_t need = (uint64_t)h->n + 1;
	int rc;

	if (need > LDA_TEXT_MAX_DISTINCT)
		return -E2BIG;
	if (!h->cap || need * 2 > h->cap) {
		rc = vh_rehash(h, h->cap ? h->cap * 2 : 4096);
		if (rc)
			return rc;
	}
	i = fnv1a(s, n) & (h->cap - 1);
	while (h->slot[i]) {
		uint32_t id = h->slot[i] - 1;

		/* strnlen stops at the stored word's end: never past it */
		if (strnlen(h->word[id], n + 1) == n &&
		    !memcmp(h->word[id], s, n))
			return id;
		i = (i + 1) & (h->cap - 1);
	}
	if (need > h->wcap) {
		uint64_t c = h->wcap ? h->wcap * 2 : 4096;
		void *a = realloc(h->word, c * sizeof(*h->word));
		void *b, *d, *e, *f;

		if (a)
			h->word = a;
		b = realloc(h->count, c * sizeof(*h->count));
		if (b)
			h->count = b;
		d = realloc(h->df, c * sizeof(*h->df));
		if (d)
			h->df = d;
		e = realloc(h->lastdoc, c * sizeof(*h->lastdoc));
		if (e)
			h->lastdoc = e;
		f = realloc(h->stop, c);
		if (f)
			h->stop = f;
		if (!a || !b || !d || !e || !f)
			return -ENOMEM;
		h->wcap = c;
	}
	h->word[h->n] = strndup(s, n);
	if (!h->word[h->n])
		return -ENOMEM;
	h->count[h->n] = 0;
	h->df[h->n] = 0;
	h->lastdoc[h->n] = 0;
	h->stop[h->n] = 0;
	h->slot[i] = h->n + 1;
	return h->n++;
}

struct text_build {
	struct vocab_hash h;
	const struct lda_text_opts *o;
	uint64_t *doc, dcap, ndocs;
	uint32_t *word;
	uint64_t wcap, ntok;
	int open; /* current document has started */
};

static int tb_doc_begin(struct text_build *b)
{
	int rc;

	if (b->open)
		return 0;
	rc = grow((void **)&b->doc, &b->dcap, b->ndocs + 2, sizeof(*b->doc));
	if (rc)
		return rc;
	b->doc[b->ndocs] = b->ntok;
	b->open = 1;
	return 0;
}

static void tb_doc_end(struct text_build *b)
{
	if (!b->open)
		return;
	b->ndocs++;
	b->doc[b->ndocs] = b->ntok;
	b->open = 0;
}

static int is_word_byte(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       ch >= 0x80;
}

static int tb_line(struct text_build *b, char *s, size_t len)
{
	size_t i = 0;
	int rc;

	rc = tb_doc_begin(b);
	if (rc)
		return rc;
	while (i < len) {
		size_t j;
		int64_t id;

		while (i < len && !is_word_byte((unsigned char)s[i]))
			i++;
		for (j = i; j < len && is_word_byte((unsigned char)s[j]); j++)
			if (s[j] >= 'A' && s[j] <= 'Z')
				s[j] = (char)(s[j] - 'A' + 'a');
		if (j == i)
			break;
		if (j - i < b->o->min_length) {
			i = j;
			continue;
		}
		id = vh_id(&b->h, s + i, j - i);
		if (id < 0)
			return (int)id;
		i = j;
		if (b->h.stop[id])
			continue;
		b->h.count[id]++;
		if (b->h.lastdoc[id] != b->ndocs + 1) {
			b->h.lastdoc[id] = b->ndocs + 1;
			b->h.df[id]++;
		}
		rc = grow((void **)&b->word, &b->wcap, b->ntok + 1,
			  sizeof(*b->word));
		if (rc)
			return rc;
		b->word[b->ntok++] = (uint32_t)id;
	}
	return 0;
}

static int blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\f' && *s != '\v')
			return 0;
	return 1;
}

/* Say why building the vocabulary or token list failed, at r's line. */
static int tb_fail(struct frr_reader *r, int rc)
{
	if (rc == -ENOMEM)
		return frr_reader_oom(r, "the words read so far", 0);
	if (rc == -E2BIG)
		return frr_reader_fail(r,
				       "more than %u distinct words: is this "
				       "text?",
				       LDA_TEXT_MAX_DISTINCT);
	return rc;
}

/* whole_doc: the file is one document; else blank lines separate them */
static int tb_file(struct text_build *b, const char *path, int whole_doc)
{
	struct frr_reader *r;
	char *line;
	size_t len;
	int rc;

	rc = frr_reader_open(path, &r);
	if (rc)
		return rc;
	if (whole_doc)
		rc = tb_fail(r, tb_doc_begin(b));
	while (!rc && (rc = frr_reader_line(r, &line, &len)) == 1) {
		if (blank(line)) {
			if (!whole_doc)
				tb_doc_end(b);
			rc = 0;
			continue;
		}
		rc = tb_fail(r, tb_line(b, line, len));
	}
	if (rc == 0)
		tb_doc_end(b);
	frr_reader_close(r);
	return rc;
}

static int tb_stop(struct text_build *b)
{
	struct frr_reader *r;
	char *line;
	size_t len;
	int rc = 0;

	if (b->o->builtin_stop)
		for (size_t i = 0;
		     i < sizeof(lda_stop_words) / sizeof(lda_stop_words[0]);
		     i++) {
			int64_t id = vh_id(&b->h, lda_stop_words[i],
					   strlen(lda_stop_words[i]));

			if (id < 0) {
				frr_err("lda: out of memory for the stop "
					"words");
				return (int)id;
			}
			b->h.stop[id] = 1;
		}
	if (!b->o->stopfile)
		return 0;
	rc = frr_reader_open(b->o->stopfile, &r);
	if (rc)
		return rc;
	while ((rc = frr_reader_line(r, &line, &len)) == 1) {
		int64_t id;

		for (size_t i = 0; i < len; i++)
			if (line[i] >= 'A' && line[i] <= 'Z')
				line[i] = (char)(line[i] - 'A' + 'a');
		while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
			len--;
		if (!len || line[0] == '#')
			continue;
		id = vh_id(&b->h, line, len);
		if (id < 0) {
			rc = tb_fail(r, (int)id);
			break;
		}
		b->h.stop[id] = 1;
	}
	frr_reader_close(r);
	return rc;
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int tb_dir(struct text_build *b, const char *dir)
{
	struct dirent **ents;
	int n, rc = 0, files = 0;

	n = scandir(dir, &ents, NULL, name_cmp);
	if (n < 0) {
		rc = -errno;
		frr_err("lda: cannot list '%s': %s", dir, strerror(errno));
		return rc;
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		char *p = NULL;

		if (!rc && ents[i]->d_name[0] != '.' &&
		    asprintf(&p, "%s/%s", dir, ents[i]->d_name) < 0) {
			frr_err("lda: out of memory listing '%s'", dir);
			rc = -ENOMEM;
			p = NULL;
		}
		if (p && !stat(p, &st) && S_ISREG(st.st_mode)) {
			rc = tb_file(b, p, 1);
			files++;
		}
		free(p);
		free(ents[i]);
	}
	free(ents);
	if (!rc && !files) {
		frr_err("lda: '%s' has no regular files: expected one "
			"document per file",
			dir);
		rc = -EINVAL;
	}
	return rc;
}

/* Apply the rare-word and document-frequency cuts and renumber. */
static int tb_finish(struct text_build *b, const char *path,
		     struct lda_corpus *c)
{
	uint32_t *map = NULL, V = 0;
	uint64_t out = 0, maxdf;
	int rc = 0;

	maxdf = (uint64_t)(b->o->max_doc_frac * (double)b->ndocs);
	map = malloc((b->h.n ? b->h.n : 1) * sizeof(*map));
	c->vocab = calloc(b->h.n ? b->h.n : 1, sizeof(*c->vocab));
	if (!map || !c->vocab) {
		frr_err("lda: %s: out of memory for a vocabulary of %" PRIu32
			" words",
			path, b->h.n);
		rc = -ENOMEM;
		goto free_map;
	}
	for (uint32_t id = 0; id < b->h.n; id++) {
		map[id] = UINT32_MAX;
		if (b->h.stop[id] || b->h.count[id] < b->o->min_count ||
		    (b->o->max_doc_frac < 1.0 && b->h.df[id] > maxdf))
			continue;
		map[id] = V;
		c->vocab[V++] = b->h.word[id];
		b->h.word[id] = NULL; /* moved */
	}
	if (!b->ndocs || !V) {
		frr_err("lda: %s: %s; expected text with words of >= %u "
			"letters seen >= %u times (--min-count, "
			"--min-length, --max-doc-frac)",
			path,
			b->ndocs ? "no words left after the cuts"
				 : "no documents",
			b->o->min_length, b->o->min_count);
		rc = -EINVAL;
		goto free_map;
	}
	/* compact tokens in place, doc offsets follow */
	for (uint64_t d = 0, i = 0; d < b->ndocs; d++) {
		uint64_t end = b->doc[d + 1];

		b->doc[d] = out;
		for (; i < end; i++)
			if (map[b->word[i]] != UINT32_MAX)
				b->word[out++] = map[b->word[i]];
	}
	b->doc[b->ndocs] = out;
	c->ndocs = b->ndocs;
	c->nwords = V;
	c->ntokens = out;
	c->doc = b->doc;
	c->word = b->word;
	b->doc = NULL;
	b->word = NULL;
free_map:
	free(map);
	return rc;
}

int lda_load_text(const char *path, const struct lda_text_opts *o,
		  struct lda_corpus *c)
{
	struct text_build b = { .o = o };
	struct stat st;
	int rc;

	memset(c, 0, sizeof(*c));
	if (stat(path, &st)) {
		rc = -errno;
		frr_err("lda: cannot open '%s': %s; pass a directory (one "
			"document per file) or a text file (documents "
			"separated by blank lines)",
			path, strerror(errno));
		return rc;
	}
	rc = tb_stop(&b);
	if (!rc)
		rc = S_ISDIR(st.st_mode) ? tb_dir(&b, path)
					 : tb_file(&b, path, 0);
	if (!rc)
		rc = tb_finish(&b, path, c);
	if (rc && c->vocab) { /* words moved out of b.h by tb_finish */
		for (uint32_t i = 0; i < b.h.n; i++)
			free(c->vocab[i]);
		free(c->vocab);
		c->vocab = NULL;
	}
	vh_free(&b.h);
	free(b.doc);
	free(b.word);
	return rc;
}
