// SPDX-License-Identifier: MIT
/*
 * Input reading for the loaders.  Every file goes through zlib's gzFile:
 * gzopen() looks at the magic bytes (1f 8b), inflates gzip input and passes
 * anything else through unchanged, so "data.gz" and "data" read alike
 * whatever their names.  We keep our own input buffer on top so lines and
 * byte runs cost one memchr/memcpy, and count lines and uncompressed bytes
 * so every error can say where it happened.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "flexrr/log.h"
#include "reader.h"

/* Read-ahead per refill.  The fuzz build makes it tiny, so lines and byte
 * runs cross refills all the time (and a run costs less). */
#ifdef FRR_READER_CHUNK
#define RD_CHUNK FRR_READER_CHUNK
#else
#define RD_CHUNK (256u << 10)
#endif
/* A "line" longer than this is not text: refuse before eating memory. */
#define RD_MAX_LINE (64u << 20)

struct frr_reader {
	char *path;
	gzFile gz;
	unsigned char *in; /* RD_CHUNK bytes read ahead */
	size_t in_pos, in_len;
	int eof; /* gzread returned 0 */
	char *line;
	size_t line_cap;
	uint64_t lineno;
	uint64_t offset; /* uncompressed bytes handed out */
	int binary;	 /* last read was bytes: messages give the offset */
	uint64_t limit;	 /* a range: no line starts at or after this byte */
	uint64_t first;	 /* a range: where its first line starts */
};

int frr_reader_open(const char *path, struct frr_reader **out)
{
	struct frr_reader *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (r) {
		r->path = strdup(path);
		r->in = malloc(RD_CHUNK);
	}
	if (!r || !r->path || !r->in) {
		frr_err("cannot open '%s': out of memory for its read buffer",
			path);
		err = -ENOMEM;
		goto free_r;
	}
	errno = 0;
	r->gz = gzopen(path, "rb");
	if (!r->gz) {
		err = errno ? -errno : -ENOMEM;
		frr_err("cannot open '%s': %s; check the path (see --help "
			"for where the data is looked up)",
			path, strerror(-err));
		goto free_r;
	}
	gzbuffer(r->gz, RD_CHUNK);
	r->limit = UINT64_MAX;
	*out = r;
	return 0;

free_r:
	if (r) {
		free(r->in);
		free(r->path);
	}
	free(r);
	return err;
}

void frr_reader_close(struct frr_reader *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose(r->gz);
	free(r->line);
	free(r->in);
	free(r->path);
	free(r);
}

/* Refill the read-ahead buffer: 1 with data, 0 at a clean end, -EIO. */
static int rd_fill(struct frr_reader *r)
{
	int n, zerr;
	const char *msg;

	if (r->in_pos < r->in_len)
		return 1;
	if (r->eof)
		return 0;
	n = gzread(r->gz, r->in, RD_CHUNK);
	msg = gzerror(r->gz, &zerr);
	/* zlib reports a gzip stream cut short as Z_BUF_ERROR with n >= 0 */
	if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
		if (zerr == Z_ERRNO)
			msg = strerror(errno);
		else if (msg && !strncmp(msg, r->path, strlen(r->path)) &&
			 !strncmp(msg + strlen(r->path), ": ", 2))
			msg += strlen(r->path) + 2; /* zlib prefixes the path */
		frr_err("%s: byte %llu: %s%s", r->path,
			(unsigned long long)(r->offset + (n > 0 ? n : 0)),
			zerr == Z_BUF_ERROR ? "truncated gzip file: " : "",
			msg ? msg : "read error");
		if (zerr == Z_BUF_ERROR || zerr == Z_DATA_ERROR)
			frr_err("%s: the file is damaged or incomplete; fetch "
				"or decompress it again",
				r->path);
		return -EIO;
	}
	r->in_pos = 0;
	r->in_len = (size_t)n;
	if (n == 0) {
		r->eof = 1;
		return 0;
	}
	return 1;
}

static int rd_line_grow(struct frr_reader *r, size_t need)
{
	size_t cap = r->line_cap ? r->line_cap : 256;
	char *p;

	if (need <= r->line_cap)
		return 0;
	if (need > RD_MAX_LINE) {
		frr_err("%s:%llu: line longer than %u MiB; is this a text "
			"file?",
			r->path, (unsigned long long)r->lineno + 1,
			RD_MAX_LINE >> 20);
		return -EINVAL;
	}
	while (cap < need)
		cap *= 2;
	p = realloc(r->line, cap);
	if (!p)
		return frr_reader_oom(r, "a line", cap);
	r->line = p;
	r->line_cap = cap;
	return 0;
}

/* A UTF-8 byte order mark (U+FEFF) opens many exported CSV files (e.g.
 * MovieLens re-saved by a spreadsheet): skipped at the start of a file, the
 * one place it means "UTF-8", so every loader sees the same first line. */
static size_t rd_bom(const char *line, size_t n, uint64_t start)
{
	return start == 0 && n >= 3 && !memcmp(line, "\xef\xbb\xbf", 3) ? 3 : 0;
}

int frr_reader_line(struct frr_reader *r, char **line, size_t *len)
{
	uint64_t start = r->offset;
	size_t n = 0, bom;
	int got = 0, rc;

	if (r->offset >= r->limit)
		return 0; /* the next line is the next range's */
	for (;;) {
		unsigned char *s, *nl;
		size_t take;

		rc = rd_fill(r);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
		s = r->in + r->in_pos;
		nl = memchr(s, '\n', r->in_len - r->in_pos);
		take = nl ? (size_t)(nl - s) : r->in_len - r->in_pos;
		rc = rd_line_grow(r, n + take + 1);
		if (rc)
			return rc;
		memcpy(r->line + n, s, take);
		n += take;
		got = 1;
		r->in_pos += take + (nl ? 1 : 0);
		r->offset += take + (nl ? 1 : 0);
		if (nl)
			break;
	}
	if (!got)
		return 0;
	if (n && r->line[n - 1] == '\r')
		n--;
	bom = rd_bom(r->line, n, start);
	memmove(r->line, r->line + bom, n - bom);
	n -= bom;
	r->line[n] = '\0';
	r->lineno++;
	r->binary = 0;
	/* the parsers see C strings: a NUL would silently cut the line */
	if (memchr(r->line, '\0', n))
		return frr_reader_fail(r, "NUL byte in a text line; is this "
					  "a binary file?");
	*line = r->line;
	*len = n;
	return 1;
}

/* Consume bytes up to and including the next newline: 0 (also at the end
 * of the file) or -EIO. */
static int rd_skip_line(struct frr_reader *r)
{
	for (;;) {
		unsigned char *s, *nl;
		size_t take;
		int rc = rd_fill(r);

		if (rc <= 0)
			return rc;
		s = r->in + r->in_pos;
		nl = memchr(s, '\n', r->in_len - r->in_pos);
		take = nl ? (size_t)(nl - s) + 1 : r->in_len - r->in_pos;
		r->in_pos += take;
		r->offset += take;
		if (nl)
			return 0;
	}
}

/*
 * A line belongs to the range holding its first byte: so a range starting
 * at lo > 0 looks at byte lo - 1 and, unless it ends a line, skips the
 * line that straddles lo (the previous range reads all of it, past its
 * own end).  Only plain files can seek: gzip input says -ENOTSUP.
 */
int frr_reader_open_range(const char *path, uint64_t lo, uint64_t hi,
			  struct frr_reader **out)
{
	struct frr_reader *r;
	unsigned char c;
	size_t got;
	int ret = frr_reader_open(path, &r);

	if (ret)
		return ret;
	if (!gzdirect(r->gz)) {
		ret = -ENOTSUP;
		goto out_close;
	}
	if (lo > 0) {
		if (gzseek(r->gz, (z_off_t)(lo - 1), SEEK_SET) < 0) {
			frr_err("%s: cannot seek to byte %llu; is it shorter "
				"than that?",
				path, (unsigned long long)(lo - 1));
			ret = -EIO;
			goto out_close;
		}
		r->offset = lo - 1;
		ret = frr_reader_read(r, &c, 1, &got);
		if (!ret && got == 1 && c != '\n')
			ret = rd_skip_line(r);
		if (ret)
			goto out_close;
	}
	r->first = r->offset;
	r->limit = hi;
	r->binary = 0;
	*out = r;
	return 0;
out_close:
	frr_reader_close(r);
	return ret;
}

int frr_reader_read(struct frr_reader *r, void *buf, size_t n, size_t *got)
{
	unsigned char *dst = buf;
	size_t want = n;

	r->binary = 1;
	while (want) {
		size_t take;
		int rc = rd_fill(r);

		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
		take = r->in_len - r->in_pos;
		if (take > want)
			take = want;
		memcpy(dst, r->in + r->in_pos, take);
		r->in_pos += take;
		r->offset += take;
		dst += take;
		want -= take;
	}
	*got = n - want;
	return 0;
}

int frr_reader_bytes(struct frr_reader *r, void *buf, size_t n)
{
	size_t got;
	int rc = frr_reader_read(r, buf, n, &got);

	if (rc)
		return rc;
	if (got < n) {
		frr_err("%s: unexpected end of file after %llu bytes "
			"(wanted %zu more); the file is truncated",
			r->path, (unsigned long long)r->offset, n - got);
		return -EIO;
	}
	return 0;
}

int frr_reader_end(struct frr_reader *r, const char *what)
{
	int rc = rd_fill(r);

	if (rc <= 0)
		return rc;
	r->binary = 1;
	return frr_reader_fail(r,
			       "unexpected data after %s; the file is "
			       "damaged or not what it claims to be",
			       what);
}

const char *frr_reader_path(const struct frr_reader *r)
{
	return r->path;
}

uint64_t frr_reader_lineno(const struct frr_reader *r)
{
	return r->lineno;
}

uint64_t frr_reader_offset(const struct frr_reader *r)
{
	return r->offset;
}

/* The newlines in bytes [0, end) of a plain file, into *n: a range's line
 * numbers become the file's.  A pass over those bytes, so for error
 * messages only.  0 or -1. */
static int rd_lines_before(const char *path, uint64_t end, uint64_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1u << 20);
	uint64_t left = end, c = 0;
	int ret = f && buf ? 0 : -1;

	while (!ret && left) {
		size_t want = left < (1u << 20) ? (size_t)left : 1u << 20;
		size_t got = fread(buf, 1, want, f);
		const char *p = buf, *e = buf + got;

		while ((p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
			c++;
			p++;
		}
		left -= got;
		ret = got == want ? 0 : -1;
	}
	if (f)
		fclose(f);
	free(buf);
	*n = c;
	return ret;
}

/* "FILE:LINE: msg" after a line (the file's line, also in a range), "FILE:
 * byte OFF: msg" after bytes */
static void rd_log_at(const struct frr_reader *r, const char *msg)
{
	uint64_t before = 0;
	/* a range's line, and its lines before could not be counted */
	const int uncounted = r->lineno && !r->binary && r->first &&
			      rd_lines_before(r->path, r->first, &before) != 0;

	if (uncounted)
		frr_err("%s: line %llu after byte %llu: %s", r->path,
			(unsigned long long)r->lineno,
			(unsigned long long)r->first, msg);
	else if (r->lineno && !r->binary)
		frr_err("%s:%llu: %s", r->path,
			(unsigned long long)(before + r->lineno), msg);
	else
		frr_err("%s: byte %llu: %s", r->path,
			(unsigned long long)r->offset, msg);
}

/* The messages quote the input: control bytes and every non-ASCII byte as
 * \xHH, so nothing in them is invisible (a BOM, a zero-width space, a
 * terminal escape) and two different lines never read the same. */
static void rd_printable(char *msg, size_t cap)
{
	char out[512];
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)msg;
	     *p && o + 5 < sizeof(out); p++) {
		if (*p >= 0x20 && *p < 0x7f)
			out[o++] = (char)*p;
		else
			o += (size_t)snprintf(out + o, sizeof(out) - o,
					      "\\x%02x", *p);
	}
	out[o] = 0;
	snprintf(msg, cap, "%s", out);
}

int frr_reader_fail(struct frr_reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rd_printable(msg, sizeof(msg));
	rd_log_at(r, msg);
	return -EINVAL;
}

int frr_reader_oom(struct frr_reader *r, const char *what, uint64_t bytes)
{
	char msg[512];

	snprintf(msg, sizeof(msg),
		 "out of memory for %s (%llu MiB); use a machine with more "
		 "memory or a smaller input",
		 what, (unsigned long long)((bytes + (1u << 20) - 1) >> 20));
	rd_log_at(r, msg);
	return -ENOMEM;
}
