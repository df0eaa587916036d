// SPDX-License-Identifier: MIT
/*
 * --on-failure restart or recover without --checkpoint, in a local job
 * (flexrr run -n P): the launcher gives the job a checkpoint directory of
 * its own in memory, a fresh one under /dev/shm (a tmpfs), and removes it
 * when the job ends well.  A rank's process can die; the host's memory
 * that holds the directory does not, so the survivors (or the restarted
 * job) continue from it as from any --checkpoint DIR, without the user
 * picking a place.  It costs two checkpoints' bytes of the host's memory
 * (the newest complete one and the one being written), which the memory
 * check counts (job/memplan.c).  A job started by a launcher (srun,
 * mpirun) spans hosts whose memory is not shared: it is refused without
 * --checkpoint (launch.c), which must name storage every host reaches.
 *
 * The directory is made with mkdtemp (mode 0700, a fresh random name:
 * never another user's, and nobody else can put anything in it).  A job
 * that fails keeps it and says where, to be resumed or removed.
 */
#include <errno.h>
#include <ftw.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "launch.h"

/* where the directory goes: the usual tmpfs of a Linux host */
#define MEM_CKPT_BASE "/dev/shm"

int frr_job_mem_ckpt(struct frr_job *job)
{
	char p[] = MEM_CKPT_BASE "/flexrr-ckpt-XXXXXX";
	struct statfs fs = { 0 };

	if (job->o.p.ckpt_dir || job->on_failure == FRR_ON_FAILURE_FAIL)
		return 0;
	if (statfs(MEM_CKPT_BASE, &fs) || fs.f_type != TMPFS_MAGIC) {
		int err = fs.f_type == TMPFS_MAGIC ? -errno : -ENOTSUP;

		fprintf(stderr,
			"%s: --on-failure %s without --checkpoint keeps its "
			"checkpoints in memory, under %s, which is %s here: "
			"give --checkpoint DIR\n",
			job->prog, frr_job_on_failure_name(job->on_failure),
			MEM_CKPT_BASE,
			err == -ENOTSUP ? "not a tmpfs" : strerror(-err));
		return err;
	}
	if (!mkdtemp(p)) {
		int err = -errno;

		fprintf(stderr,
			"%s: cannot make a checkpoint directory under %s (%s): "
			"give --checkpoint DIR\n",
			job->prog, MEM_CKPT_BASE, strerror(-err));
		return err;
	}
	job->mem_ckpt = strdup(p);
	if (!job->mem_ckpt) {
		rmdir(p);
		return -ENOMEM;
	}
	job->o.p.ckpt_dir = job->mem_ckpt;
	fprintf(stderr,
		"%s: --on-failure %s: checkpoints every %d clock(s) in memory "
		"at %s (give --checkpoint DIR to keep them elsewhere)\n",
		job->prog, frr_job_on_failure_name(job->on_failure),
		job->o.p.ckpt_every, p);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP ? rmdir(path) : unlink(path)) {
		fprintf(stderr, "flexrr: cannot remove %s (%s)\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

void frr_job_mem_ckpt_end(struct frr_job *job, int err)
{
	const char *d = job->mem_ckpt;
	int clock, named;

	if (!d)
		return;
	/* a failed job's checkpoint is what is left of its work */
	if (err && !frr_ckpt_latest(d, &clock, &named)) {
		fprintf(stderr,
			"%s: its checkpoint of clock %d stays in memory at %s: "
			"continue the job with --resume %s, or remove the "
			"directory\n",
			job->prog, clock, d, d);
		return;
	}
	/* depth first, never following a link (none of the job's) */
	if (nftw(d, rm_one, 8, FTW_DEPTH | FTW_PHYS))
		fprintf(stderr,
			"%s: the job's checkpoints in memory at %s were not "
			"all removed (above): remove the directory\n",
			job->prog, d);
}
