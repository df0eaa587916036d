/* SPDX-License-Identifier: MIT */
/*
 * Input reading shared by the apps' loaders: plain or gzip files (detected by
 * magic, not by name), line by line or as bytes, with the position kept so
 * every error names file, line (or byte offset) and what was expected.
 */
#ifndef FLEXRR_APPS_READER_H
#define FLEXRR_APPS_READER_H

#include <stddef.h>
#include <stdint.h>

struct frr_reader;

/* Open path (gzip or plain).  -errno with a message on failure. */
int frr_reader_open(const char *path, struct frr_reader **r);
/* Open the lines of a plain file that start in bytes [lo, hi): splitting
 * a file at any points gives every line to exactly one range.
 * frr_reader_lineno counts from the range's first line; messages give the
 * file's line (counting the newlines before the range then: a pass over
 * those bytes, on errors only).  -ENOTSUP,
 * without a message, for gzip input (it cannot seek: read it whole). */
int frr_reader_open_range(const char *path, uint64_t lo, uint64_t hi,
			  struct frr_reader **r);
void frr_reader_close(struct frr_reader *r);
/* Next line without its newline, NUL-terminated, valid until the next call.
 * Returns 1 with *line and *len set, 0 at end of file, -errno on a read error
 * (e.g. truncated gzip: -EIO with a message naming the byte offset), -EINVAL
 * for a line holding a NUL byte (text never does). */
int frr_reader_line(struct frr_reader *r, char **line, size_t *len);
/* Read exactly n bytes: 0, or -EIO ("unexpected end of file after N bytes"). */
int frr_reader_bytes(struct frr_reader *r, void *buf, size_t n);
/* Read up to n bytes: 0 with *got < n only at the end of the file, or -EIO.
 * For loaders that say themselves what a short file lacks. */
int frr_reader_read(struct frr_reader *r, void *buf, size_t n, size_t *got);
/* 0 at the end of the file; -EINVAL with "FILE: byte OFF: unexpected data
 * after <what>" when bytes remain (a model or data file must end where its
 * header says it does). */
int frr_reader_end(struct frr_reader *r, const char *what);
/* Current position, for messages. */
const char *frr_reader_path(const struct frr_reader *r);
uint64_t
frr_reader_lineno(const struct frr_reader *r); /* 1-based, last line read */
uint64_t
frr_reader_offset(const struct frr_reader *r); /* uncompressed bytes consumed */
/* Log "FILE:LINE: <msg>" after a line, "FILE: byte OFF: <msg>" after a byte
 * read, and return -EINVAL, for 'return frr_reader_fail(r, "expected ...")'. */
int frr_reader_fail(struct frr_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Log "FILE:LINE: out of memory for <what>" (bytes wanted) and return
 * -ENOMEM: a loader never fails on memory without saying where. */
int frr_reader_oom(struct frr_reader *r, const char *what, uint64_t bytes);

#endif /* FLEXRR_APPS_READER_H */
