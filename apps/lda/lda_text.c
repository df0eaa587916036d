// SPDX-License-Identifier: MIT
/* LDA corpus: the plain-text tokenizer (files or a folder of them, stop
 * words, rare and frequent words dropped). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/reader.h"
#include "flexrr/base.h"
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
		uint64_t i = frr_fnv1a64(h->word[id], strlen(h->word[id]), 0) &
			     (cap - 1);

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
	i = frr_fnv1a64(s, n, 0) & (h->cap - 1);
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
	rc =
	    lda_grow((void **)&b->doc, &b->dcap, b->ndocs + 2, sizeof(*b->doc));
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
		rc = lda_grow((void **)&b->word, &b->wcap, b->ntok + 1,
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
