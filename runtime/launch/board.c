// SPDX-License-Identifier: MIT
/*
 * --on-failure recover in a local job (flexrr run -n P): the board, a page
 * the launcher maps shared before forking the ranks, on which it marks a
 * lost rank (its flag, then the epoch, one higher per loss) and the ranks
 * post a peer they found alive but silent (hung).  recover.c reads it.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "flexrr/base.h"
#include "launch.h"

/* losses seen within this of each other are one epoch */
#define SETTLE_MS 200
/* a failed job waits this long for the launcher to name a lost rank: it
 * reaps a killed or stopped one within its 20 ms poll */
#define BOARD_WAIT_MS 3000

struct frr_board {
	atomic_uint epoch; /* losses so far; written last */
	/* a rank failed with its own error (not a lost peer): the others
	 * stop waiting for a loss, recovery would repeat it */
	atomic_int own_error;
	int nprocs;
	const char *prog;
	size_t bytes;
	struct {
		atomic_uchar lost; /* 1 once lost */
		/* 1 + a rank that found it alive but silent, 0: none */
		atomic_int hung_by;
	} r[];
};

int frr_board_new(const struct frr_job *job, struct frr_board **out)
{
	size_t bytes =
	    sizeof(struct frr_board) +
	    (size_t)job->o.nprocs * sizeof(((struct frr_board *)0)->r[0]);
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
	atomic_init(&b->own_error, 0);
	b->nprocs = job->o.nprocs;
	b->prog = job->prog;
	b->bytes = bytes;
	for (int r = 0; r < b->nprocs; r++) {
		atomic_init(&b->r[r].lost, 0);
		atomic_init(&b->r[r].hung_by, 0);
	}
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

	atomic_store(&b->r[rank].lost, 1);
	atomic_fetch_add(&b->epoch, 1);
	fprintf(stderr,
		"%s: rank %d was %s by signal %d (%s); the others carry on "
		"without its process (--on-failure recover)%s\n",
		b->prog, rank, WIFSTOPPED(st) ? "stopped" : "killed", sig,
		strsignal(sig),
		WIFSTOPPED(st) ? ": it is fenced, and exits when continued"
			       : "");
}

/* The launcher's poll (its cfg.watch): a rank that a survivor found alive
 * but silent, which the launcher saw no signal from (hung), is lost: the
 * first one named by a rank not lost itself (two ranks that name each
 * other lose one). */
int frr_board_watch(void *arg)
{
	struct frr_board *b = arg;

	for (int r = 0; r < b->nprocs; r++) {
		int by = atomic_load(&b->r[r].hung_by) - 1;

		if (by < 0 || by >= b->nprocs || atomic_load(&b->r[r].lost) ||
		    atomic_load(&b->r[by].lost))
			continue;
		atomic_store(&b->r[r].lost, 1);
		atomic_fetch_add(&b->epoch, 1);
		fprintf(
		    stderr,
		    "%s: rank %d stopped answering: rank %d saw no "
		    "heartbeat from it (or a rank its process runs) for the "
		    "--dead-timeout although its process is alive (hung or "
		    "overloaded); the others carry on without it "
		    "(--on-failure recover): it is fenced, and killed if it "
		    "does not exit\n",
		    b->prog, r, by);
		return r;
	}
	return -1;
}

/* The survivors' view: the epoch and its lost flags, read together (a
 * loss between the two reads is read again). */
unsigned frr_board_read(struct frr_board *b, unsigned char *lost)
{
	unsigned e;

	do {
		e = atomic_load(&b->epoch);
		for (int r = 0; r < b->nprocs; r++)
			lost[r] = atomic_load(&b->r[r].lost);
	} while (e != atomic_load(&b->epoch));
	return e;
}

/* Wait for an epoch after e (a rank lost): it, settled, or e if none came
 * within BOARD_WAIT_MS (the job failed on its own). */
unsigned frr_board_wait(struct frr_board *b, unsigned e)
{
	long long until = frr_now_ms() + BOARD_WAIT_MS;
	struct timespec ts = { 0, 20 * 1000000L };

	while (atomic_load(&b->epoch) == e && !atomic_load(&b->own_error) &&
	       frr_now_ms() < until)
		nanosleep(&ts, NULL);
	if (atomic_load(&b->own_error))
		return e;
	if (atomic_load(&b->epoch) == e)
		return e;
	ts.tv_nsec = SETTLE_MS * 1000000L;
	nanosleep(&ts, NULL);
	return atomic_load(&b->epoch);
}

unsigned frr_board_epoch(const struct frr_board *b)
{
	return atomic_load(&b->epoch);
}

void frr_board_own_error(struct frr_board *b)
{
	atomic_store(&b->own_error, 1);
}

void frr_board_hung(struct frr_board *b, int proc, int by)
{
	int none = 0;

	atomic_compare_exchange_strong(&b->r[proc].hung_by, &none, by + 1);
}
