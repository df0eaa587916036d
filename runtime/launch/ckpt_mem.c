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
 * mpirun) may span hosts whose memory is not shared: its rank 0 makes the
 * directory, the others take it when they run on rank 0's host, and the
 * job is refused otherwise (recover.c: --checkpoint must then name storage
 * every host reaches).  No janitor there: rank 0's process may be lost
 * while the others carry on from the directory; the lowest rank left
 * removes it when the job ends well.
 *
 * The directory is made with mkdtemp (mode 0700, a fresh random name:
 * never another user's, and nobody else can put anything in it).  A job
 * that fails keeps its newest checkpoint there and says where, to be
 * resumed or removed; a job stopped from outside (^C, the launcher killed)
 * has it removed by a janitor process the launcher starts with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "launch.h"

/* where the directory goes: the usual tmpfs of a Linux host */
#define MEM_CKPT_BASE "/dev/shm"

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

/* depth first, never following a link (none of the job's) */
static int rm_tree(const char *dir)
{
	return nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* The janitor: waits for a word from the launcher (frr_job_mem_ckpt_end)
 * or for the end of its socket pair, which comes when the launcher and
 * its ranks are all gone without one: killed, or ^C (the ranks die with
 * the launcher, PR_SET_PDEATHSIG, and each holds a copy of the launcher's
 * end, so nothing writes into the directory any more).  Then it removes it: a
 * job stopped that way left no checkpoint the user asked for. */
static void janitor_run(int fd, const struct frr_job *job)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	ssize_t n;
	char c;

	/* ^C reaches the terminal's foreground group, this one too */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* hold no one's stdin or stdout open (stderr: its message) */
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1 && !rm_tree(job->mem_ckpt))
		fprintf(stderr,
			"%s: the job was stopped by a signal: removed its "
			"checkpoints in memory at %s\n",
			job->prog, job->mem_ckpt);
	_exit(0);
}

/* Start the janitor, nobody's child to wait for (forked twice): the
 * launcher's end of their socket pair (a socket, so that a janitor gone
 * early is an error to its send, not a SIGPIPE), or a negative errno. */
static int janitor(const struct frr_job *job)
{
	int p[2], st;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p))
		return -errno;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (fork() == 0)
			janitor_run(p[0], job);
		_exit(0);
	}
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		int err = -errno;

		close(p[1]);
		return err;
	}
	return p[1];
}

#define MEM_CKPT_PREFIX MEM_CKPT_BASE "/flexrr-ckpt-"

/* A fresh directory under MEM_CKPT_BASE into job->mem_ckpt (said why
 * not). */
static int mem_dir_make(struct frr_job *job)
{
	char p[] = MEM_CKPT_PREFIX "XXXXXX";
	int err;

	if (frr_tmpfs_room(MEM_CKPT_BASE) < 0) {
		fprintf(stderr,
			"%s: --on-failure %s without --checkpoint keeps its "
			"checkpoints in memory, under %s, which is missing or "
			"not a tmpfs here: give --checkpoint DIR\n",
			job->prog, frr_job_on_failure_name(job->on_failure),
			MEM_CKPT_BASE);
		return -ENOTSUP;
	}
	if (!mkdtemp(p)) {
		err = -errno;
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
	job->mem_janitor = -1;
	return 0;
}

/* "checkpoints every ... in memory at DIR" */
static void mem_announce(const struct frr_job *job, const char *who)
{
	char every[32];

	if (job->o.p.ckpt_every)
		snprintf(every, sizeof(every), "%d clock(s)",
			 job->o.p.ckpt_every);
	else
		snprintf(every, sizeof(every), "%g s", job->o.p.ckpt_every_s);
	fprintf(stderr,
		"%s: --on-failure %s: checkpoints every %s in memory at %s%s "
		"(give --checkpoint DIR to keep them elsewhere)\n",
		job->prog, frr_job_on_failure_name(job->on_failure), every,
		job->mem_ckpt, who);
}

int frr_job_mem_ckpt(struct frr_job *job)
{
	int err;

	if (job->o.p.ckpt_dir || job->on_failure == FRR_ON_FAILURE_FAIL)
		return 0;
	err = mem_dir_make(job);
	if (err)
		return err;
	err = janitor(job);
	if (err < 0) {
		fprintf(stderr,
			"%s: cannot start the helper that removes %s if the "
			"job is killed (%s): give --checkpoint DIR\n",
			job->prog, job->mem_ckpt, strerror(-err));
		rmdir(job->mem_ckpt);
		free(job->mem_ckpt);
		job->mem_ckpt = NULL;
		return err;
	}
	job->mem_janitor = err;
	job->o.p.ckpt_dir = job->mem_ckpt;
	mem_announce(job, "");
	return 0;
}

int frr_job_mem_ckpt_launched(struct frr_job *job)
{
	int err = mem_dir_make(job);

	if (err)
		return err;
	job->o.p.ckpt_dir = job->mem_ckpt;
	mem_announce(job, ", on rank 0's host, for every rank on it");
	return 0;
}

int frr_job_mem_ckpt_adopt(struct frr_job *job, const char *dir)
{
	const char *tail = dir + strlen(MEM_CKPT_PREFIX);

	/* rank 0's word: a name mem_dir_make gives, nothing else */
	if (strncmp(dir, MEM_CKPT_PREFIX, strlen(MEM_CKPT_PREFIX)) ||
	    strlen(tail) != 6 ||
	    strspn(tail, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789") != 6) {
		frr_err("rank 0 named '%s' as the job's checkpoint directory "
			"in memory, which is not one it makes: are the ranks "
			"the same flexrr?",
			dir);
		return -EPROTO;
	}
	job->mem_ckpt = strdup(dir);
	if (!job->mem_ckpt)
		return -ENOMEM;
	job->mem_janitor = -1;
	job->o.p.ckpt_dir = job->mem_ckpt;
	return 0;
}

void frr_job_mem_ckpt_end(struct frr_job *job, int err)
{
	const char *d = job->mem_ckpt;
	int clock, named;

	if (!d)
		return;
	/* a failed job's checkpoint is what is left of its work */
	if (err && !frr_ckpt_latest(d, &clock, &named))
		fprintf(stderr,
			"%s: its checkpoint of clock %d stays in memory at %s: "
			"continue the job with --resume %s, or remove the "
			"directory\n",
			job->prog, clock, d, d);
	else if (rm_tree(d))
		fprintf(stderr,
			"%s: the job's checkpoints in memory at %s were not "
			"all removed (above): remove the directory\n",
			job->prog, d);
	if (job->mem_janitor < 0) /* launched: none */
		return;
	/* the janitor's word: done here */
	if (send(job->mem_janitor, "x", 1, MSG_NOSIGNAL) != 1)
		fprintf(stderr,
			"%s: telling the janitor of %s that the job ended "
			"failed (%s): it may remove the directory\n",
			job->prog, d, strerror(errno));
	close(job->mem_janitor);
}
