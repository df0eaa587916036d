/* SPDX-License-Identifier: MIT */
/*
 * Files a job writes or reads back, opened so that another local user who
 * can write the same directory (a shared /tmp, a group project directory)
 * cannot redirect them: no symbolic link is followed, no FIFO blocks, no
 * file planted or hard-linked by someone else is written into or read.
 * docs/security.md "Shared directories" says what each one guards against.
 *
 * Streams returned here remember their first write error: fclose() returns
 * EOF with errno set to it (a full disk is ENOSPC, not EIO), so a checked
 * fclose, or frr_file_close, is all a caller needs.
 */
#ifndef FLEXRR_FILE_H
#define FLEXRR_FILE_H

#include <stdio.h>

#include "flexrr/export.h"

#ifdef __cplusplus
extern "C" {
#endif
FRR_API_BEGIN

/* Write path whole or not at all.  fill(f, arg) writes a temporary file
 * created exclusively beside path (random name, O_EXCL|O_NOFOLLOW, mode 0666
 * less the umask); it is flushed, fsynced and closed, each checked, renamed
 * over path (which replaces whatever entry is there, a symbolic link
 * included, never writing through it), and the directory is fsynced.  On
 * any failure the temporary file is removed and path is untouched.  fill
 * returns 0 or a negative errno and need not check its writes.  what names
 * the output in messages ("--trace", "mf: --save").  0, or a negative errno,
 * logged with the path, the errno and what to do. */
int frr_file_write_atomic(const char *path, const char *what,
			  int (*fill)(FILE *f, void *arg), void *arg);

/* Open path for writing from its start, for a stream that grows during the
 * run (the --metrics file): created 0666 less the umask when absent.
 * Refused when it is a symbolic link, not a regular file, owned by another
 * user or has other hard links: each would let whoever planted it read the
 * output or aim it at a file of ours.  0 (*out set), or a negative errno,
 * logged. */
int frr_file_create(const char *path, const char *what, FILE **out);

/* Open path for reading only if it is a regular file of this user with one
 * link, without following a symbolic link or blocking on a FIFO: for files
 * a job wrote itself and reads back (the trace's rank parts).  0 (*out set),
 * -ENOENT when absent, another negative errno when refused.  what NULL logs
 * nothing (a caller polling for the file); otherwise refusals other than
 * -ENOENT are logged. */
int frr_file_open_own(const char *path, const char *what, FILE **out);

/* Create path exclusively (O_EXCL, never through a symbolic link, mode
 * 0600) and close it: a mark only one process or run can make (a lease, a
 * test hook that acts once).  1 when this call created it, 0 when it
 * existed, else a negative errno (not logged: the caller knows what the
 * mark is for). */
int frr_file_claim(const char *path);

/* fclose(f), checked: 0, or the first error writing f (negative errno),
 * logged as "what: writing path failed: ...; what to do". */
int frr_file_close(FILE *f, const char *path, const char *what);

FRR_API_END
#ifdef __cplusplus
}
#endif

#endif /* FLEXRR_FILE_H */
