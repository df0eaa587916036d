// SPDX-License-Identifier: MIT
/* Rating files: Netflix Prize, MovieLens (ratings.dat and ratings.csv) and
 * plain triples, gzip or not (apps/common/reader.h tells them apart).  Raw
 * ids are remapped densely in increasing raw-id order. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/reader.h"
#include "flexrr/log.h"
#include "mf.h"

/* extra: fields allowed after the rating (ignored: a date, a timestamp);
 * lo..hi: the ratings the format has (0, 0: any finite number). */
static const struct {
	const char *name;
	const char *expect; /* a line of the format, for messages */
	int extra;
	float lo, hi;
} formats[] = {
	[MF_FMT_AUTO] = { "auto", "", 0, 0, 0 },
	[MF_FMT_NETFLIX] = { "netflix", "'MOVIE_ID:' or 'USER_ID,RATING,DATE'",
			     1, 1, 5 },
	[MF_FMT_ML_DAT] = { "movielens", "'USER::ITEM::RATING::TIMESTAMP'", 1,
			    0.5f, 5 },
	[MF_FMT_ML_CSV] = { "movielens", "'USER,ITEM,RATING,TIMESTAMP'", 1,
			    0.5f, 5 },
	[MF_FMT_TRIPLES] = { "triples", "'USER ITEM RATING'", 0, 0, 0 },
};

int mf_format_parse(const char *s, enum mf_format *out)
{
	if (!strcmp(s, "netflix"))
		*out = MF_FMT_NETFLIX;
	else if (!strcmp(s, "movielens"))
		*out = MF_FMT_ML_DAT; /* dat or csv: told apart per file */
	else if (!strcmp(s, "triples"))
		*out = MF_FMT_TRIPLES;
	else if (!strcmp(s, "auto"))
		*out = MF_FMT_AUTO;
	else {
		frr_err("--format: '%s' is not one of netflix, movielens, "
			"triples (or leave it out to detect the format)",
			s);
		return -EINVAL;
	}
	return 0;
}

const char *mf_format_name(enum mf_format f)
{
	return f <= MF_FMT_TRIPLES ? formats[f].name : "?";
}

/* ---- growing array of raw ratings ------------------------------------- */
struct raw {
	struct mf_rating *r;
	uint64_t n, cap;
};

static int raw_push(struct raw *a, uint64_t user, uint64_t item, float r)
{
	if (a->n == a->cap) {
		uint64_t cap = a->cap ? a->cap * 2 : 4096;
		struct mf_rating *p = realloc(a->r, sizeof(*p) * cap);

		if (!p) {
			frr_err("mf: out of memory after %" PRIu64
				" ratings; use a machine with more memory",
				a->n);
			return -ENOMEM;
		}
		a->r = p;
		a->cap = cap;
	}
	a->r[a->n++] = (struct mf_rating){ (uint32_t)user, (uint32_t)item, r };
	return 0;
}

/* ---- field parsers: advance *p past the field, 0 or -1 ---------------- */
static void skip_blank(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\r')
		(*p)++;
}

/* An id: decimal digits.  1 = digits but too large. */
static int parse_id(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int big = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > MF_ID_MAX / 10 ||
		    v * 10 + (uint64_t)(*s - '0') > MF_ID_MAX)
			big = 1;
		else
			v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return big;
}

static int parse_rating(const char **p, float *out)
{
	char *end;
	float v;

	if (!**p || **p == ' ' || **p == '\t')
		return -1;
	v = strtof(*p, &end);
	if (end == *p || !isfinite(v))
		return -1;
	*p = end;
	*out = v;
	return 0;
}

/* Between fields: sep (blanks around it allowed), or for sep "" at least
 * one blank. */
static int expect_sep(const char **p, const char *sep)
{
	size_t n = strlen(sep);

	if (!n && **p != ' ' && **p != '\t')
		return -1;
	skip_blank(p);
	if (strncmp(*p, sep, n))
		return -1;
	*p += n;
	skip_blank(p);
	return 0;
}

/* Junk glued to the rating ("3.5x"): it is not a number. */
static int glued(const char *p, const char *sep)
{
	return *p && *p != ' ' && *p != '\t' && *p != '\r' &&
	       (!*sep || strncmp(p, sep, strlen(sep)));
}

/* After the rating: the end of the line, or up to `extra` more fields
 * (each after sep; for sep "", after blanks).  0 for a field too many. */
static int at_end(const char *p, const char *sep, int extra)
{
	size_t n = strlen(sep);

	skip_blank(&p);
	for (; *p; extra--) {
		const char *next;

		if (extra <= 0 || (n && strncmp(p, sep, n)))
			return 0;
		p += n;
		next = n ? strstr(p, sep) : p + strcspn(p, " \t\r");
		p = next ? next : p + strlen(p);
		skip_blank(&p);
	}
	return 1;
}

/* Show at most 60 characters of a bad line. */
#define SHOW(line) 60, (line)

struct parse_state {
	struct frr_reader *rd;
	enum mf_format fmt;
	struct raw *out;
	uint64_t item; /* Netflix: the current movie */
	int have_item;
	uint64_t lines; /* data lines seen */
};

static int bad_line(struct parse_state *s, const char *line, const char *what)
{
	return frr_reader_fail(s->rd, "expected %s%s, got '%.*s'",
			       formats[s->fmt].expect, what, SHOW(line));
}

/* The rating's end and range as the format has them: 0, or -EINVAL said
 * (a Netflix rating of 9, a triples line with a 4th field). */
static int rating_end(struct parse_state *s, const char *line, const char *p,
		      const char *sep, float r)
{
	float lo = formats[s->fmt].lo, hi = formats[s->fmt].hi;

	if (glued(p, sep))
		return bad_line(s, line, " (a numeric rating)");
	if (!at_end(p, sep, formats[s->fmt].extra))
		return frr_reader_fail(
		    s->rd,
		    "expected %s, with nothing after it%s; "
		    "got '%.*s'",
		    formats[s->fmt].expect,
		    formats[s->fmt].extra ? "" : " (a 4th field is not data)",
		    SHOW(line));
	if (hi > lo &&
	    (r < lo || r > hi || (s->fmt == MF_FMT_NETFLIX && r != floorf(r))))
		return frr_reader_fail(
		    s->rd, "rating %g out of range: %s ratings are %s %g..%g",
		    (double)r, formats[s->fmt].name,
		    s->fmt == MF_FMT_NETFLIX ? "whole stars" : "stars",
		    (double)lo, (double)hi);
	return 0;
}

static int id_fail(struct parse_state *s, const char *kind, const char *at)
{
	int n = 0;

	while (at[n] >= '0' && at[n] <= '9' && n < 40)
		n++;
	return frr_reader_fail(
	    s->rd, "%s id '%.*s' out of range (expected 0..%" PRIu32 ")", kind,
	    n, at, (uint32_t)MF_ID_MAX);
}

/* USER SEP ITEM SEP RATING [SEP ...] */
static int parse_triple(struct parse_state *s, const char *line,
			const char *sep)
{
	const char *p = line, *at;
	uint64_t u, i;
	float r;
	int ret;

	skip_blank(&p);
	at = p;
	if ((ret = parse_id(&p, &u)))
		return ret > 0 ? id_fail(s, "user", at)
			       : bad_line(s, line, " (user id)");
	if (expect_sep(&p, sep))
		return bad_line(s, line, "");
	at = p;
	if ((ret = parse_id(&p, &i)))
		return ret > 0 ? id_fail(s, "item", at)
			       : bad_line(s, line, " (item id)");
	if (expect_sep(&p, sep))
		return bad_line(s, line, "");
	if (parse_rating(&p, &r))
		return bad_line(s, line, " (a numeric rating)");
	ret = rating_end(s, line, p, sep, r);
	return ret ? ret : raw_push(s->out, u, i, r);
}

static int parse_netflix(struct parse_state *s, const char *line, size_t len)
{
	const char *p = line, *at;
	uint64_t u, id;
	float r;
	int ret;

	if (len && line[len - 1] == ':') {
		at = p;
		ret = parse_id(&p, &id);
		if (ret > 0)
			return id_fail(s, "movie", at);
		if (ret < 0 || *p != ':')
			return bad_line(s, line, "");
		s->item = id;
		s->have_item = 1;
		return 0;
	}
	at = p;
	if ((ret = parse_id(&p, &u)))
		return ret > 0 ? id_fail(s, "user", at)
			       : bad_line(s, line, " (user id)");
	if (expect_sep(&p, ",") || parse_rating(&p, &r))
		return bad_line(s, line, " (a numeric rating)");
	ret = rating_end(s, line, p, ",", r);
	if (ret)
		return ret;
	if (!s->have_item)
		return frr_reader_fail(s->rd,
				       "rating before the first 'MOVIE_ID:' "
				       "line; is this a Netflix Prize file?");
	return raw_push(s->out, u, s->item, r);
}

static int is_blank(const char *line)
{
	for (; *line; line++)
		if (*line != ' ' && *line != '\t' && *line != '\r')
			return 0;
	return 1;
}

/* Guess the format from a file's first data line. */
static enum mf_format guess(const char *line, size_t len)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len && line[len - 1] == ':' && line[0] >= '0' && line[0] <= '9')
		return MF_FMT_NETFLIX;
	if (strstr(line, "::"))
		return MF_FMT_ML_DAT;
	if (strchr(line, ','))
		return MF_FMT_ML_CSV;
	return MF_FMT_TRIPLES;
}

static int parse_line(struct parse_state *s, char *line, size_t len)
{
	while (len && line[len - 1] == '\r')
		line[--len] = '\0';
	switch (s->fmt) {
	case MF_FMT_NETFLIX:
		return parse_netflix(s, line, len);
	case MF_FMT_ML_DAT:
		return parse_triple(s, line, "::");
	case MF_FMT_ML_CSV:
		return parse_triple(s, line, ",");
	default:
		return parse_triple(s, line, "");
	}
}

/* Parse every line of s->rd into s->out; the first data line of a whole
 * file (head) decides the format and may be a CSV header. */
static int parse_lines(struct parse_state *s, int head)
{
	char *line;
	size_t len;
	int ret;

	while ((ret = frr_reader_line(s->rd, &line, &len)) > 0) {
		if (is_blank(line) || line[0] == '#' || line[0] == '%')
			continue;
		if (!s->lines++ && head) {
			enum mf_format g = guess(line, len);

			/* "movielens" covers both MovieLens layouts */
			if (s->fmt == MF_FMT_AUTO ||
			    (s->fmt == MF_FMT_ML_DAT && g == MF_FMT_ML_CSV))
				s->fmt = g;
			/* a CSV header names its columns */
			if (s->fmt == MF_FMT_ML_CSV &&
			    !(line[0] >= '0' && line[0] <= '9'))
				continue;
		}
		ret = parse_line(s, line, len);
		if (ret)
			return ret;
	}
	return ret;
}

static int load_one(const char *path, enum mf_format fmt, struct raw *out)
{
	struct parse_state s = { .fmt = fmt, .out = out };
	uint64_t before = out->n;
	int ret;

	ret = frr_reader_open(path, &s.rd);
	if (ret)
		return ret;
	ret = parse_lines(&s, 1);
	if (ret < 0)
		goto out_close;
	if (out->n == before) {
		frr_err("%s: no ratings found (expected %s lines%s%s); is "
			"this the right file?",
			path,
			formats[s.fmt == MF_FMT_AUTO ? MF_FMT_TRIPLES : s.fmt]
			    .expect,
			fmt == MF_FMT_AUTO ? ", format detected as " : "",
			fmt == MF_FMT_AUTO ? mf_format_name(s.fmt) : "");
		ret = -EINVAL;
		goto out_close;
	}
	frr_info("%s: %" PRIu64 " ratings (%s format)", path, out->n - before,
		 mf_format_name(s.fmt));
	ret = 0;
out_close:
	frr_reader_close(s.rd);
	return ret;
}

/* The format of a file, from its first data line (what load_one decides):
 * a range after the first cannot tell "user,rating,date" from CSV. */
static int file_format(const char *path, enum mf_format fmt,
		       enum mf_format *out)
{
	struct parse_state s = { .fmt = fmt };
	char *line;
	size_t len;
	int ret = frr_reader_open(path, &s.rd);

	if (ret)
		return ret;
	while ((ret = frr_reader_line(s.rd, &line, &len)) > 0) {
		enum mf_format g;

		if (is_blank(line) || line[0] == '#' || line[0] == '%')
			continue;
		g = guess(line, len);
		if (fmt == MF_FMT_AUTO ||
		    (fmt == MF_FMT_ML_DAT && g == MF_FMT_ML_CSV))
			fmt = g;
		break;
	}
	frr_reader_close(s.rd);
	*out = fmt;
	return ret < 0 ? ret : 0;
}

/* Shard k of n of one file (see mf_load_shard). */
static int load_range(const char *path, enum mf_format fmt, int k, int n,
		      struct raw *out)
{
	struct parse_state s = { .out = out };
	struct stat st;
	uint64_t lo, hi;
	int ret = file_format(path, fmt, &s.fmt);

	if (ret)
		return ret;
	if (stat(path, &st)) {
		ret = -errno;
		frr_err("%s: cannot stat: %s", path, strerror(errno));
		return ret;
	}
	lo = (uint64_t)st.st_size * (uint64_t)k / (uint64_t)n;
	hi = (uint64_t)st.st_size * (uint64_t)(k + 1) / (uint64_t)n;
	/* a rating line after the first range does not say its movie */
	if (s.fmt == MF_FMT_NETFLIX)
		ret = -ENOTSUP;
	else
		ret = frr_reader_open_range(path, lo, hi, &s.rd);
	if (ret == -ENOTSUP) {
		frr_info("%s: %s cannot be split into byte ranges; reading "
			 "the whole file",
			 path,
			 s.fmt == MF_FMT_NETFLIX ? "the Netflix format"
						 : "gzip input");
		return ret;
	}
	if (ret)
		return ret;
	/* the range holding byte 0 reads a CSV header */
	ret = parse_lines(&s, lo == 0);
	frr_reader_close(s.rd);
	return ret < 0 ? ret : 0;
}

/* ---- dense ids --------------------------------------------------------- */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Replace field values (user or item) by their rank among the distinct
 * values; returns the number of distinct values or -ENOMEM. */
static int64_t remap(struct mf_rating *r, uint64_t n, int item)
{
	uint32_t max = 0, *map = NULL;
	int64_t k = 0;

	for (uint64_t j = 0; j < n; j++) {
		uint32_t v = item ? r[j].item : r[j].user;

		max = v > max ? v : max;
	}
	if ((uint64_t)max < 8 * n + (1u << 20)) {
		/* ids are dense enough for a direct table */
		map = malloc(sizeof(*map) * ((size_t)max + 1));
		if (!map)
			return -ENOMEM;
		memset(map, 0xff, sizeof(*map) * ((size_t)max + 1));
		for (uint64_t j = 0; j < n; j++)
			map[item ? r[j].item : r[j].user] = 0;
		for (uint64_t v = 0; v <= max; v++)
			if (!map[v])
				map[v] = (uint32_t)k++;
		for (uint64_t j = 0; j < n; j++) {
			uint32_t *f = item ? &r[j].item : &r[j].user;

			*f = map[*f];
		}
		free(map);
		return k;
	}
	/* sparse ids: sort the distinct values, binary-search each */
	map = malloc(sizeof(*map) * (n + 1));
	if (!map)
		return -ENOMEM;
	for (uint64_t j = 0; j < n; j++)
		map[j] = item ? r[j].item : r[j].user;
	qsort(map, n, sizeof(*map), cmp_u32);
	for (uint64_t j = 0; j < n; j++)
		if (!k || map[k - 1] != map[j])
			map[k++] = map[j];
	for (uint64_t j = 0; j < n; j++) {
		uint32_t *f = item ? &r[j].item : &r[j].user;
		uint32_t *hit =
		    bsearch(f, map, (size_t)k, sizeof(*map), cmp_u32);

		*f = (uint32_t)(hit - map);
	}
	free(map);
	return k;
}

/* Dense ids and the mean of raw ratings a.r[0..a.n); takes a.r. */
static int data_finish(struct raw *a, struct mf_data *out)
{
	int64_t nu, ni;
	double sum = 0.0;

	nu = remap(a->r, a->n, 0);
	ni = nu < 0 ? nu : remap(a->r, a->n, 1);
	if (nu < 0 || ni < 0) {
		frr_err("mf: out of memory remapping the ids of %" PRIu64
			" ratings",
			a->n);
		free(a->r);
		return -ENOMEM;
	}
	for (uint64_t j = 0; j < a->n; j++)
		sum += a->r[j].r;
	*out = (struct mf_data){
		.n = a->n,
		.ratings = a->r,
		.nusers = (uint32_t)nu,
		.nitems = (uint32_t)ni,
		.mean = a->n ? sum / (double)a->n : 0.0,
	};
	return 0;
}

int mf_data_finish(struct mf_rating *raw, uint64_t n, struct mf_data *out)
{
	struct raw a = { .r = raw, .n = n, .cap = n };

	return data_finish(&a, out);
}

int mf_load_files(const char *const *paths, int npaths, enum mf_format fmt,
		  struct mf_data *out)
{
	struct raw a = { 0 };
	int ret;

	for (int f = 0; f < npaths; f++) {
		ret = load_one(paths[f], fmt, &a);
		if (ret) {
			free(a.r);
			return ret;
		}
	}
	return data_finish(&a, out);
}

int mf_load_shard(const char *const *paths, int npaths, enum mf_format fmt,
		  int k, int n, struct mf_data *out)
{
	struct raw a = { 0 };
	int ret = 0;

	if (n < 1 || k < 0 || k >= n)
		return -EINVAL;
	for (int f = 0; f < npaths && !ret; f++)
		ret = load_range(paths[f], fmt, k, n, &a);
	if (ret) {
		free(a.r);
		return ret;
	}
	*out = (struct mf_data){ .n = a.n, .ratings = a.r };
	return 0;
}

int mf_data_join(struct mf_data *shards, int n, struct mf_data *out)
{
	struct raw a = { 0 };

	for (int k = 0; k < n; k++)
		a.n += shards[k].n;
	a.r = malloc(sizeof(*a.r) * (a.n + 1));
	if (!a.r) {
		frr_err("mf: out of memory joining %" PRIu64 " ratings", a.n);
		return -ENOMEM;
	}
	a.n = 0;
	for (int k = 0; k < n; k++) {
		memcpy(a.r + a.n, shards[k].ratings,
		       sizeof(*a.r) * shards[k].n);
		a.n += shards[k].n;
		mf_data_free(&shards[k]);
	}
	return data_finish(&a, out);
}
