// SPDX-License-Identifier: MIT
/*
 * Output files another local user cannot redirect (flexrr/file.h).  Every
 * stream is a cookie stream over our own fd, so that the first write error
 * is kept with its errno and returned by fclose: glibc drops a failed
 * buffer, and a later fflush or fclose then succeeds, so without it a full
 * disk would be either silent or a bare EIO.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/file.h"

struct out_cookie {
	int fd;
	int err;  /* first write error (errno), 0 if none */
	int sync; /* fsync before close: the file is renamed into place */
};

static ssize_t ck_write(void *c, const char *buf, size_t n)
{
	struct out_cookie *k = c;
	size_t done = 0;

	while (!k->err && done < n) {
		ssize_t w = write(k->fd, buf + done, n - done);

		if (w > 0)
			done += (size_t)w;
		else if (w < 0 && errno != EINTR)
			k->err = errno;
		else if (w == 0)
			k->err = EIO;
	}
	return (ssize_t)done; /* short: the stream's error flag is set */
}

static int ck_close(void *c)
{
	struct out_cookie *k = c;
	int err = k->err;

	if (!err && k->sync && fsync(k->fd))
		err = errno;
	if (close(k->fd) && !err && errno != EINTR)
		err = errno;
	free(k);
	if (!err)
		return 0;
	errno = err; /* what fclose() reports */
	return -1;
}

/* A stream over fd, which it owns from now on (closed on failure too). */
static int stream_of(int fd, int sync, FILE **out)
{
	cookie_io_functions_t io = { .write = ck_write, .close = ck_close };
	struct out_cookie *k = calloc(1, sizeof(*k));

	if (k) {
		k->fd = fd;
		k->sync = sync;
		*out = fopencookie(k, "w", io);
		if (*out)
			return 0;
	}
	free(k);
	close(fd);
	return -ENOMEM;
}

static const char *hint(int err)
{
	switch (err) {
	case ENOSPC:
	case EDQUOT:
		return "free space on its file system or pick another path";
	case EACCES:
	case EPERM:
	case EROFS:
		return "pick a path this user may write";
	case ENOENT:
	case ENOTDIR:
		return "check that the directory exists";
	case ENAMETOOLONG:
		return "pick a shorter path";
	default:
		return "check the path and its file system";
	}
}

/* fd (of path) may be written or read as ours: a regular file this user
 * owns with no other name.  0, or a negative errno, logged if what. */
static int check_own(int fd, const char *path, const char *what)
{
	struct stat st;

	if (fstat(fd, &st)) {
		int err = -errno;

		if (what)
			frr_err("%s: cannot stat %s: %s", what, path,
				strerror(-err));
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		if (what)
			frr_err("%s: %s is not a regular file (a FIFO, device "
				"or directory): refusing to use it (in a "
				"shared directory another user may have "
				"planted it); remove it or pick another path",
				what, path);
		return -EINVAL;
	}
	if (st.st_uid != geteuid()) {
		if (what)
			frr_err("%s: %s belongs to uid %ld, not to this user "
				"(uid %ld): refusing to use it (another user "
				"planted it, or could read it); remove it or "
				"pick another path",
				what, path, (long)st.st_uid, (long)geteuid());
		return -EPERM;
	}
	if (st.st_nlink != 1) {
		if (what)
			frr_err("%s: %s has %lu hard links: refusing to use it "
				"(another user may have linked it to a file "
				"of yours); remove it or pick another path",
				what, path, (unsigned long)st.st_nlink);
		return -EMLINK;
	}
	return 0;
}

/* The error of open(path) with O_NOFOLLOW, said. */
static int open_failed(const char *path, const char *what, const char *verb)
{
	int err = -errno;
	struct stat st;

	/* with O_CREAT some kernels say EACCES for a symbolic link */
	if (!lstat(path, &st) && S_ISLNK(st.st_mode))
		err = -ELOOP;
	if (!what)
		return err;
	if (err == -ELOOP)
		frr_err("%s: %s is a symbolic link: refusing to follow it (in "
			"a shared directory another user may have planted it "
			"to redirect the file); remove it or name the target "
			"itself",
			what, path);
	else if (err == -ENXIO)
		frr_err("%s: %s is a FIFO or socket: refusing to use it; "
			"remove it or pick another path",
			what, path);
	else
		frr_err("%s: cannot %s %s: %s; %s", what, verb, path,
			strerror(-err), hint(-err));
	return err;
}

int frr_file_create(const char *path, const char *what, FILE **out)
{
	/* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of
	 * blocking; one with a reader is refused by check_own */
	int fd =
	    open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		 0666);
	int err;

	if (fd < 0)
		return open_failed(path, what, "create");
	err = check_own(fd, path, what);
	/* truncated only now, once it is known to be ours alone */
	if (!err && ftruncate(fd, 0))
		err = open_failed(path, what, "truncate");
	if (err) {
		close(fd);
		return err;
	}
	err = stream_of(fd, 0, out);
	if (err && what)
		frr_err("%s: out of memory opening %s", what, path);
	return err;
}

int frr_file_claim(const char *path)
{
	int fd = open(
	    path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;
	close(fd);
	return 1;
}

int frr_file_open_own(const char *path, const char *what, FILE **out)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int err;

	if (fd < 0)
		return errno == ENOENT ? -ENOENT
				       : open_failed(path, what, "open");
	err = check_own(fd, path, what);
	if (!err) {
		*out = fdopen(fd, "r");
		if (!*out)
			err = -errno;
	}
	if (err)
		close(fd);
	return err;
}

int frr_file_close(FILE *f, const char *path, const char *what)
{
	int err;

	if (!fclose(f))
		return 0;
	err = -errno;
	frr_err("%s: writing %s failed: %s; %s", what, path, strerror(-err),
		hint(-err));
	return err;
}

/* Create a temporary file beside path, exclusively: its name is random, so
 * nobody can plant anything there in advance, and O_EXCL|O_NOFOLLOW refuses
 * whatever is there anyway.  The kernel applies the umask to 0666. */
static int create_temp(const char *path, char *tmp, size_t len, FILE **out)
{
	for (int tries = 0; tries < 100; tries++) {
		uint64_t r;
		int fd;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = frr_mix64(frr_now_ns() ^
				      ((uint64_t)getpid() << 32) ^
				      (uint64_t)tries);
		if ((size_t)snprintf(tmp, len, "%s.%016llx.tmp", path,
				     (unsigned long long)r) >= len)
			return -ENAMETOOLONG;
		fd = open(tmp,
			  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0666);
		if (fd >= 0) {
			int err = stream_of(fd, 1, out);

			if (err)
				unlink(tmp);
			return err;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* fsync path's directory, so the rename survives a crash; a file system
 * that cannot sync a directory (EINVAL) has nothing to do. */
static int sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd, err = 0;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s",
			 slash == path ? 1 : (int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) && errno != EINVAL)
		err = -errno;
	close(fd);
	return err;
}

int frr_file_write_atomic(const char *path, const char *what,
			  int (*fill)(FILE *f, void *arg), void *arg)
{
	char tmp[PATH_MAX + 32];
	FILE *f = NULL;
	int err, cerr, placed = 0;

	err = create_temp(path, tmp, sizeof(tmp), &f);
	if (err) {
		frr_err("%s: cannot create a temporary file beside %s: %s; %s",
			what, path, strerror(-err), hint(-err));
		return err;
	}
	err = fill(f, arg);
	cerr = fclose(f) ? -errno : 0;
	/* the stream's own errno beats fill's "the stream failed" */
	if (cerr && (!err || err == -EIO))
		err = cerr;
	if (err) {
		frr_err("%s: writing %s failed: %s; %s", what, path,
			strerror(-err), hint(-err));
		goto out;
	}
	if (rename(tmp, path)) {
		err = -errno;
		frr_err("%s: cannot put %s in place: %s; %s", what, path,
			strerror(-err),
			err == -EPERM
			    ? "another user's file has that name (in a "
			      "sticky directory only its owner may "
			      "replace it): remove it or pick another "
			      "path"
			    : hint(-err));
		goto out;
	}
	placed = 1;
	err = sync_dir(path);
	if (err)
		frr_err("%s: %s is written, but syncing its directory failed: "
			"%s; it may not survive a crash",
			what, path, strerror(-err));
out:
	if (!placed)
		unlink(tmp);
	return err;
}
