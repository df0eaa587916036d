// SPDX-License-Identifier: MIT
/*
 * --checkpoint DIR must be one directory that every rank shares: a survivor
 * reads a lost rank's files there, a resumed job reads every rank's, and the
 * lease that fences a coordinator left behind lives there.  Ranks on several
 * hosts that each see a directory of their own at DIR's path (a node-local
 * /tmp or /scratch, a container's private mount) would find that out at the
 * first loss or resume, too late.  So at the start rank 0 leaves a file of
 * random content in DIR, every rank reads it back, and a rank that cannot
 * stops the job with what to change.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/file.h"
#include "checkpoint.h"
#include "job.h"

#define PROBE_PREFIX ".flexrr-shared-"

struct probe {
	char name[32];	   /* rank 0's file in DIR (mkstemp's form) */
	uint8_t nonce[16]; /* what it holds */
	int32_t err;	   /* rank 0: making it; the others: reading it */
	char host[64];
};

/* Rank 0's file: PROBE_PREFIX and mkstemp's six letters or digits. */
static int make_probe(const char *dir, struct probe *p)
{
	char path[4200];
	int fd;

	if (getrandom(p->nonce, sizeof(p->nonce), 0) != sizeof(p->nonce))
		return errno ? -errno : -EIO;
	snprintf(path, sizeof(path), "%s/" PROBE_PREFIX "XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	snprintf(p->name, sizeof(p->name), "%s", strrchr(path, '/') + 1);
	if (write(fd, p->nonce, sizeof(p->nonce)) != sizeof(p->nonce)) {
		int err = errno ? -errno : -EIO;

		close(fd);
		unlink(path);
		return err;
	}
	return close(fd) ? -errno : 0;
}

/* A peer's name is used only in the form rank 0 makes. */
static int name_ok(const char *n)
{
	size_t k = strlen(PROBE_PREFIX);

	if (strncmp(n, PROBE_PREFIX, k) || strlen(n) != k + 6)
		return 0;
	for (const char *c = n + k; *c; c++)
		if (!isalnum((unsigned char)*c))
			return 0;
	return 1;
}

/* 0 when DIR/name is a file of this user holding the nonce, else why not
 * (-ENOENT: not there, -EBADMSG: something else is). */
static int read_probe(const char *dir, const struct probe *p)
{
	char path[4200];
	uint8_t got[sizeof(p->nonce)];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, p->name);
	err = frr_file_open_own(path, NULL, &f);
	if (err)
		return err;
	if (fread(got, 1, sizeof(got), f) != sizeof(got) ||
	    memcmp(got, p->nonce, sizeof(got)))
		err = -EBADMSG;
	fclose(f);
	return err;
}

/* Rank 0 names the first rank that cannot, and how many more. */
static void say_unshared(const struct frr_rt *rt, const struct probe *all,
			 int r, int more)
{
	frr_err("--checkpoint %s: rank %d (on host %s)%s does not find the "
		"file rank 0 (on host %s) just wrote there (%s): the ranks do "
		"not share that directory (a path local to each host?), and a "
		"survivor or a resumed job would not find the others' "
		"checkpoints: give a directory on storage every host reaches "
		"(NFS, Lustre)",
		rt->prm->ckpt_dir, r, all[r].host,
		more ? " and other ranks" : "", all[0].host,
		strerror(-all[r].err));
}

int frr_ckpt_dir_shared(struct frr_rt *rt)
{
	struct probe mine = { .err = 0 }, *all;
	const char *dir = rt->prm->ckpt_dir;
	int err, first = -1, n = 0;

	all = calloc((size_t)rt->P, sizeof(*all));
	if (!all)
		return -ENOMEM;
	frr_hostname(mine.host, sizeof(mine.host));
	if (rt->rank == 0 && (mine.err = make_probe(dir, &mine)))
		frr_err("--checkpoint %s: cannot write a file there (%s): "
			"give a directory this user can write",
			dir, strerror(-mine.err));
	err = frr_rt_allgather(rt,
			       "sharing the checkpoint directory's test "
			       "file",
			       &mine, sizeof(mine), all);
	if (err || (err = all[0].err))
		goto out;
	all[0].name[sizeof(all[0].name) - 1] = 0;
	mine.err = name_ok(all[0].name) ? read_probe(dir, &all[0]) : -EPROTO;
	err = frr_rt_allgather(rt,
			       "reading the checkpoint directory's test "
			       "file",
			       &mine, sizeof(mine), all);
	for (int r = 0; r < rt->P && !err; r++)
		if (all[r].err && !n++)
			first = r;
	if (first >= 0) {
		all[first].host[sizeof(all[first].host) - 1] = 0;
		all[0].host[sizeof(all[0].host) - 1] = 0;
		if (rt->rank == 0)
			say_unshared(rt, all, first, n > 1);
		err = -ENOENT;
	}
out:
	/* after every rank read it (or the job failed) */
	if (rt->rank == 0 && mine.name[0]) {
		char path[4200];

		snprintf(path, sizeof(path), "%s/%s", dir, mine.name);
		unlink(path);
	}
	free(all);
	return err;
}
