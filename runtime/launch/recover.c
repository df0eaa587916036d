// SPDX-License-Identifier: MIT
/*
 * --on-failure recover, for a local job (flexrr run -n P): when a rank's
 * process is lost (killed, or stopped, by a signal) the others carry on
 * without it.
 *
 * The launcher sees the loss first (waitpid) and marks it on a board, a
 * page it mapped shared before forking the ranks: the lost rank's flag,
 * then the epoch, one higher per loss.  Each survivor sees its job fail
 * (its peer is gone), reads the board and, with every other survivor,
 * starts epoch e of the same job: the same P ranks meet again at the same
 * loopback rendezvous, a lost rank run by the next surviving process after
 * it (rank r + 1 first, cyclically), beside that process's own rank, and
 * all continue from the newest complete checkpoint of --checkpoint DIR:
 * the clocks since it run again, so every item of every clock counts once
 * in the final model (resume's guarantee: a BSP job with a fixed seed ends
 * bit for bit as the uninterrupted one).
 *
 * Epoch e's ranks prove a secret derived from the job's and e: a rank
 * still in an earlier epoch (stopped, then continued) cannot join it or
 * reach its transports.  When it runs again its job fails (its peers left
 * that epoch), it reads the board, finds itself lost and exits saying so:
 * fenced.  Losses the survivors see within one settling interval are one
 * epoch; a rank lost while the others meet makes that meeting fail, and
 * they meet again in the next epoch.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "launch.h"

/* losses seen within this of each other are one epoch */
#define SETTLE_MS 200
/* a failed job waits this long for the launcher to name a lost rank: it
 * reaps a killed or stopped one within its 20 ms poll */
#define BOARD_WAIT_MS 3000

struct frr_board {
	atomic_uint epoch; /* losses so far; written last */
	int nprocs;
	const char *prog;
	size_t bytes;
	atomic_uchar lost[]; /* per rank: 1 once lost */
};

_Static_assert(FRR_JOB_SECRET_LEN == FRR_AUTH_MAC_LEN,
	       "an epoch's secret is a MAC of the job's");

int frr_board_new(const struct frr_job *job, struct frr_board **out)
{
	size_t bytes = sizeof(struct frr_board) + (size_t)job->o.nprocs;
	struct frr_board *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (b == MAP_FAILED) {
		int err = -errno;

		fprintf(stderr,
			"%s: --on-failure recover: cannot map the page the "
			"ranks share (%s)\n",
			job->prog, strerror(-err));
		return err;
	}
	atomic_init(&b->epoch, 0);
	b->nprocs = job->o.nprocs;
	b->prog = job->prog;
	b->bytes = bytes;
	for (int r = 0; r < b->nprocs; r++)
		atomic_init(&b->lost[r], 0);
	*out = b;
	return 0;
}

void frr_board_free(struct frr_board *b)
{
	if (b)
		munmap(b, b->bytes);
}

void frr_board_lost(void *arg, int rank, int st)
{
	struct frr_board *b = arg;
	int sig = WIFSTOPPED(st) ? WSTOPSIG(st) : WTERMSIG(st);

	atomic_store(&b->lost[rank], 1);
	atomic_fetch_add(&b->epoch, 1);
	fprintf(stderr,
		"%s: rank %d was %s by signal %d (%s); the others carry on "
		"without its process (--on-failure recover)%s\n",
		b->prog, rank, WIFSTOPPED(st) ? "stopped" : "killed", sig,
		strsignal(sig),
		WIFSTOPPED(st) ? ": it is fenced, and exits when continued"
			       : "");
}

/* The survivors' view: the epoch and its lost flags, read together (a
 * loss between the two reads is read again). */
static unsigned board_read(struct frr_board *b, unsigned char *lost)
{
	unsigned e;

	do {
		e = atomic_load(&b->epoch);
		for (int r = 0; r < b->nprocs; r++)
			lost[r] = atomic_load(&b->lost[r]);
	} while (e != atomic_load(&b->epoch));
	return e;
}

/* Wait for an epoch after e (a rank lost): it, settled, or e if none came
 * within BOARD_WAIT_MS (the job failed on its own). */
static unsigned board_wait(struct frr_board *b, unsigned e)
{
	long long until = frr_now_ms() + BOARD_WAIT_MS;
	struct timespec ts = { 0, 20 * 1000000L };

	while (atomic_load(&b->epoch) == e && frr_now_ms() < until)
		nanosleep(&ts, NULL);
	if (atomic_load(&b->epoch) == e)
		return e;
	ts.tv_nsec = SETTLE_MS * 1000000L;
	nanosleep(&ts, NULL);
	return atomic_load(&b->epoch);
}

/* The process that runs rank r: r's own, or the next one not lost. */
static int host_of(const unsigned char *lost, int n, int r)
{
	for (int k = 0; k < n; k++)
		if (!lost[(r + k) % n])
			return (r + k) % n;
	return -1;
}

struct inst {
	struct frr_job *job;
	struct frr_run_opts o;
	const char *addr;
	int rank, lfd, err;
	pthread_t th;
};

static void *inst_main(void *arg)
{
	struct inst *in = arg;

	in->err = frr_launch_rank_tcp(in->job, &in->o, in->rank,
				      in->job->o.nprocs, in->addr, in->lfd);
	return NULL;
}

/* Epoch e's secret: a MAC of the job's, so epochs never meet. */
static void epoch_secret(const struct frr_job_secret *s, unsigned e,
			 struct frr_job_secret *out)
{
	unsigned char na[FRR_AUTH_NONCE_LEN] = { 0 };
	unsigned char nb[FRR_AUTH_NONCE_LEN] = { 0 };

	memcpy(na, &e, sizeof(e));
	frr_auth_mac(s, "flexrr recovery epoch", na, nb, NULL, 0, out->b);
}

/* Run the n ranks this process hosts in epoch e (the first in this
 * thread): 0, or the first error (-ENOTRECOVERABLE before any other: the
 * process cannot run the job again). */
static int run_hosted(struct frr_job *job, unsigned e, const int *ranks, int n,
		      const char *addr, int lfd)
{
	struct inst *in = calloc((size_t)n, sizeof(*in));
	int err = 0;

	if (!in)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		in[i] = (struct inst){ .job = job,
				       .o = job->o,
				       .addr = addr,
				       .rank = ranks[i],
				       .lfd = -1 };
		if (e)
			epoch_secret(&job->o.secret, e, &in[i].o.secret);
		if (!ranks[i]) {
			in[i].lfd = dup(lfd);
			if (in[i].lfd < 0) {
				err = -errno;
				fprintf(stderr,
					"%s: rank 0: cannot keep the "
					"rendezvous socket (%s)\n",
					job->prog, strerror(errno));
				n = i;
				goto out;
			}
		}
	}
	for (int i = 1; i < n; i++) {
		int e2 = pthread_create(&in[i].th, NULL, inst_main, &in[i]);

		if (e2) {
			/* the ranks not started leave the others waiting at
			 * the rendezvous: they time out and fail */
			fprintf(stderr,
				"%s: cannot start a thread to run rank %d "
				"(%s)\n",
				job->prog, in[i].rank, strerror(e2));
			in[i].err = -e2;
			in[i].th = pthread_self();
		}
	}
	inst_main(&in[0]);
	for (int i = 1; i < n; i++)
		if (!pthread_equal(in[i].th, pthread_self()))
			pthread_join(in[i].th, NULL);
out:
	for (int i = 0; i < n; i++)
		if (in[i].err == -ENOTRECOVERABLE || (!err && in[i].err))
			err = in[i].err;
	free(in);
	return err;
}

/* Say what this survivor does in epoch e; fill the summary's note and
 * set where the job continues from. */
static void plan_epoch(struct frr_job *job, const unsigned char *lost,
		       unsigned e, int me, int n, const int *ranks, char *note,
		       size_t len)
{
	char runs[256] = "";
	int nlost = 0, clock, err, k = 0;

	for (int r = 0; r < job->o.nprocs; r++)
		nlost += lost[r];
	for (int i = 0; i < n && k < (int)sizeof(runs) - 16; i++)
		k += snprintf(runs + k, sizeof(runs) - (size_t)k, "%s%d",
			      i ? ", " : "", ranks[i]);
	err = frr_ckpt_latest(job->o.p.ckpt_dir, &clock);
	if (!err)
		job->o.p.resume_dir = job->o.p.ckpt_dir;
	snprintf(note, len, "lost=%d epoch=%u from_clock=%d", nlost, e,
		 err ? -1 : clock);
	job->o.p.recovered = note;
	/* said under --quiet too: the job is not what it was */
	fprintf(stderr,
		"flexrr[%d]: recovering (epoch %u): this process runs "
		"rank%s %s; ",
		me, e, n > 1 ? "s" : "", runs);
	if (!err)
		fprintf(stderr, "from %s/ckpt-%d: clocks after %d run again\n",
			job->o.p.ckpt_dir, clock, clock);
	else
		fprintf(stderr, "%s\n",
			job->o.p.resume_dir ? "from its --resume checkpoint: "
					      "it wrote none of its own yet"
					    : "from clock 0: it wrote no "
					      "checkpoint yet");
}

int frr_recover_rank(struct frr_job *job, struct frr_board *b, int me,
		     const char *addr, int lfd)
{
	int P = job->o.nprocs, n = 1, err;
	unsigned char *lost = calloc((size_t)P, 1);
	int *ranks = calloc((size_t)P, sizeof(int));
	char note[128];
	unsigned e = 0;

	if (!lost || !ranks) {
		err = -ENOMEM;
		goto out;
	}
	ranks[0] = me;
	for (;;) {
		unsigned seen;

		err = run_hosted(job, e, ranks, n, addr, lfd);
		if (!err || err == -ENOTRECOVERABLE)
			break;
		job->o.p.recover_t0 = frr_now_s();
		seen = board_wait(b, e);
		if (seen == e)
			break; /* nobody was lost: the job's own failure */
		e = board_read(b, lost);
		if (lost[me]) {
			fprintf(
			    stderr,
			    "flexrr[%d]: this rank was lost (stopped or too "
			    "slow) and the others carried on without it "
			    "(epoch %u): fenced, exiting without writing "
			    "anything more\n",
			    me, e);
			err = -ESTALE;
			break;
		}
		n = 0;
		for (int r = 0; r < P; r++)
			if (host_of(lost, P, r) == me)
				ranks[n++] = r;
		plan_epoch(job, lost, e, me, n, ranks, note, sizeof(note));
	}
out:
	free(lost);
	free(ranks);
	close(lfd);
	return err;
}
