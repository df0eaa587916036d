// SPDX-License-Identifier: MIT
/*
 * --on-failure recover, for a local job (flexrr run -n P): when a rank's
 * process is lost (killed, or stopped, by a signal) the others carry on
 * without it.
 *
 * The launcher sees the loss first (waitpid) and marks it on a board
 * (board.c), a page it mapped shared before forking the ranks: the lost
 * rank's flag, then the epoch, one higher per loss.  Each survivor sees its job
 * fail (its peer is gone), reads the board and, with every other survivor,
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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/file.h"
#include "launch.h"

/* launched ranks' meeting: how often its server asks whether the process
 * of a rank still missing is gone */
#define MEET_PROBE_MS 250

_Static_assert(FRR_JOB_SECRET_LEN == FRR_AUTH_MAC_LEN,
	       "an epoch's secret is a MAC of the job's");

/* The process that runs rank r: r's own, or the next one not lost. */
static int host_of(const unsigned char *lost, int n, int r)
{
	for (int k = 0; k < n; k++)
		if (!lost[(r + k) % n])
			return (r + k) % n;
	return -1;
}

/* One process's part of a recovering job. */
struct recover {
	struct frr_job *job;
	int me, P;
	unsigned epoch;
	const char *addr; /* this epoch's rendezvous */
	/* epoch 0's meeting when the launcher's PMIx held it (addr NULL):
	 * the later epochs meet over TCP at a survivor's members socket */
	struct frr_oob *oob0;
	int lfd; /* the socket rank 0's host serves it on; -1: listen at addr */
	struct frr_board *board; /* a local job: the launcher's page */
	/* launcher-started: every rank's socket for frr_members_agree (ours:
	 * mfd), and the run's id (rank 0's, drawn at the start) */
	int mfd;
	char (*maddr)[64];
	uint64_t run_id;
	int met; /* maddr and run_id came: a loss can be agreed on */
	/* launched without --checkpoint: rank 0 makes the directory in its
	 * host's memory at the meeting (met), for ranks all on that host */
	int mem;
	int first_live; /* at the end: the lowest process not lost */
	/* the highest app clock a failed run had started here (-1: none),
	 * for the next epoch's count of what ran again */
	int failed_clock;
	const unsigned char *lost; /* per process, as of this epoch */
	char lost_ranks[64];	   /* the summary's, as of this epoch */
};

struct inst {
	struct recover *rc;
	struct frr_run_opts o;
	int rank, lfd, err;
	int started;	      /* th runs it (the first runs in the caller) */
	long long next_probe; /* meeting_over's, of the serving instance */
	int silent_p;	      /* the process probed, silent since (ms) */
	long long silent_since;
	pthread_t th;
	struct frr_rt_watch watch;
};

/* A job of this process found `rank` alive but silent (its watch's
 * peer_hung): a local job posts the process that runs it for the launcher,
 * which saw no signal; launched ranks agree on it themselves
 * (frr_members_agree).  The page is per process, as lost[] is. */
static void inst_peer_hung(void *arg, int rank)
{
	const struct recover *rc = ((const struct inst *)arg)->rc;
	int proc;

	if (!rc->board || rank < 0 || rank >= rc->P)
		return;
	proc = host_of(rc->lost, rc->P, rank);
	if (proc >= 0 && proc != rc->me)
		frr_board_hung(rc->board, proc, rc->me);
}

/* The lease file of epoch e in DIR (the coordinator's claim, lease()). */
static void lease_path(const struct recover *rc, unsigned e, char *p,
		       size_t len)
{
	snprintf(p, len, "%s/.epoch-%016llx-%u", rc->job->o.p.ckpt_dir,
		 (unsigned long long)rc->run_id, e);
}

/* This process's epoch is over: the launcher's page moved past it (a local
 * job), or a rank claimed the next one in DIR (launched ranks). */
static int epoch_over(const struct recover *rc)
{
	char p[4096];

	if (rc->board)
		return frr_board_epoch(rc->board) != rc->epoch;
	if (!rc->job->o.p.ckpt_dir) /* not met yet (mem) */
		return 0;
	lease_path(rc, rc->epoch + 1, p, sizeof(p));
	return access(p, F_OK) == 0;
}

/* A job's watch (its current), for its checkpoint writes. */
static int inst_current(void *arg)
{
	return !epoch_over(((const struct inst *)arg)->rc);
}

/*
 * The meeting's abandon: a rank lost meanwhile will not come.  A local
 * job's page says so.  Launched ranks have no page: the instance that
 * serves the meeting (rank 0's, on the coordinator's members socket) asks
 * the members socket of the process that runs the first rank still missing
 * every MEET_PROBE_MS; a refused connection is a process gone, and so is
 * one that answered none of them for the --dead-timeout (a host that is
 * down answers nothing: a stopped process's kernel still takes them).
 */
static int meeting_over(void *arg, int missing)
{
	struct inst *in = arg;
	struct recover *rc = in->rc;
	long long now;
	int p, gone;

	if (epoch_over(rc))
		return 1;
	if (rc->board || !rc->epoch || missing < 0 || missing >= rc->P)
		return 0;
	now = frr_now_ms();
	p = host_of(rc->lost, rc->P, missing);
	if (now < in->next_probe || p < 0 || p == rc->me)
		return 0;
	in->next_probe = now + MEET_PROBE_MS;
	gone = frr_members_gone(rc->maddr[p], MEET_PROBE_MS / 2);
	if (gone < 0 && in->silent_p != p) {
		in->silent_p = p;
		in->silent_since = now;
	}
	if (!gone)
		in->silent_p = -1;
	if (gone < 0 && now - in->silent_since >= rc->job->o.p.dead_ms) {
		fprintf(stderr,
			"flexrr[%d]: rank %d's process has answered nothing "
			"for %lld ms (the --dead-timeout; its host down?): "
			"giving up epoch %u's meeting\n",
			rc->me, p, now - in->silent_since, rc->epoch);
		return 1;
	}
	if (gone <= 0)
		return 0;
	fprintf(stderr,
		"flexrr[%d]: rank %d's process is gone (its members socket "
		"refuses): giving up epoch %u's meeting\n",
		rc->me, p, rc->epoch);
	return 1;
}

/* What epoch 0's ranks exchange once they met: their members sockets
 * (and host names, to tell one that others cannot reach). */
struct met_msg {
	char addr[64];
	char host[64];
	uint64_t run_id;
	uint64_t host_id;
	char ckpt[64]; /* rank 0's checkpoint directory in memory (mem) */
};

static int loopback(const char *addr)
{
	return !strncmp(addr, "127.", 4) || !strncmp(addr, "[::1]", 5);
}

/* Ranks that met through PMIx listen where their host's name resolves: a
 * name mapped to a loopback address (Debian's 127.0.1.1 default) cannot be
 * reached from the other hosts, and a loss could not be agreed on.  Said
 * by rank 0 at the start, not found out at the first loss. */
static void warn_unreachable(const struct recover *rc,
			     const struct met_msg *all)
{
	for (int r = 0; r < rc->P; r++)
		for (int q = 0; q < rc->P && loopback(all[r].addr); q++)
			if (strcmp(all[q].host, all[r].host)) {
				frr_warn("--on-failure recover: rank %d "
					 "listens for the others on %s (what "
					 "host %s's name resolves to), which "
					 "rank %d on host %s cannot reach, so "
					 "a loss could not be recovered: map "
					 "the host names to addresses the "
					 "hosts reach (/etc/hosts, DNS), or "
					 "meet at --rendezvous HOST:PORT "
					 "(--bootstrap tcp)",
					 r, all[r].addr, all[r].host, q,
					 all[q].host);
				return;
			}
}

/* mem: the ranks take rank 0's directory if all of them run on its host
 * (the boot id and name: not a host of the same name). */
static int mem_take(struct recover *rc, struct inst *in,
		    const struct met_msg *all)
{
	int err = 0;

	for (int r = 1; r < rc->P; r++)
		if (all[r].host_id != all[0].host_id) {
			if (!rc->me)
				frr_err("--on-failure recover without "
					"--checkpoint keeps the checkpoints in "
					"the memory of rank 0's host (%s), "
					"which rank %d (on %s) cannot read: "
					"give --checkpoint DIR on storage "
					"every host reaches",
					all[0].host, r, all[r].host);
			return -EINVAL;
		}
	if (!all[0].ckpt[0]) {
		if (rc->me)
			frr_err("rank 0 could not make the job's checkpoint "
				"directory in memory (its message says why)");
		return -EIO;
	}
	if (rc->me)
		err = frr_job_mem_ckpt_adopt(rc->job, all[0].ckpt);
	in->o.p.ckpt_dir = rc->job->o.p.ckpt_dir;
	return err;
}

static int met(void *arg, struct frr_oob *oob)
{
	struct inst *in = arg;
	struct recover *rc = in->rc;
	struct met_msg mine = { .run_id = 0 }, *all;
	int err;

	if (rc->board || rc->epoch)
		return 0;
	all = calloc((size_t)rc->P, sizeof(*all));
	if (!all)
		return -ENOMEM;
	snprintf(mine.addr, sizeof(mine.addr), "%s", rc->maddr[rc->me]);
	frr_hostname(mine.host, sizeof(mine.host));
	if (!rc->me && getrandom(&mine.run_id, sizeof(mine.run_id), 0) !=
			   sizeof(mine.run_id))
		mine.run_id = frr_mix64(frr_now_ns() ^ (uint64_t)getpid());
	mine.host_id = frr_rt_host_id();
	if (rc->mem && !rc->me && !frr_job_mem_ckpt_launched(rc->job))
		snprintf(mine.ckpt, sizeof(mine.ckpt), "%s", rc->job->mem_ckpt);
	err = frr_oob_allgather(oob, &mine, sizeof(mine), all, 30000);
	for (int r = 0; r < rc->P && !err; r++) {
		/* copied, terminated: a peer's bytes are used only as text */
		memcpy(rc->maddr[r], all[r].addr, sizeof(all[r].addr));
		rc->maddr[r][sizeof(rc->maddr[r]) - 1] = 0;
		all[r].addr[sizeof(all[r].addr) - 1] = 0;
		all[r].host[sizeof(all[r].host) - 1] = 0;
		all[r].ckpt[sizeof(all[r].ckpt) - 1] = 0;
	}
	for (int r = 0; r < rc->P && !err; r++)
		if (!all[r].addr[0]) {
			/* it said why; the others stop now, not when their
			 * fence fails as its process exits */
			if (r != rc->me)
				frr_err("--on-failure recover: rank %d cannot "
					"listen for the others to agree after "
					"a loss (its message says why)",
					r);
			err = -EHOSTUNREACH;
		}
	if (!err && rc->mem)
		err = mem_take(rc, in, all);
	if (!err && !rc->me && rc->oob0)
		warn_unreachable(rc, all);
	rc->run_id = all[0].run_id;
	rc->met = !err;
	free(all);
	return err;
}

static void *inst_main(void *arg)
{
	struct inst *in = arg;
	struct recover *rc = in->rc;

	struct frr_rank_hooks h = { met, meeting_over, in };

	if (rc->oob0 && !rc->epoch)
		in->err = frr_launch_rank_met(&in->o, rc->oob0, &h);
	else
		in->err = frr_launch_rank_tcp(rc->job, &in->o, in->rank, rc->P,
					      rc->addr, in->lfd, &h);
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

/* Run the n ranks this process hosts in this epoch (the first in this
 * thread): 0, or the first error (-ENOTRECOVERABLE before any other: the
 * process cannot run the job again). */
static int run_hosted(struct recover *rc, const int *ranks, int n)
{
	struct frr_job *job = rc->job;
	struct inst *in = calloc((size_t)n, sizeof(*in));
	int err = 0;

	if (!in)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		in[i] = (struct inst){ .rc = rc,
				       .o = job->o,
				       .rank = ranks[i],
				       .lfd = -1,
				       .silent_p = -1 };
		in[i].watch.peer_hung = inst_peer_hung;
		in[i].watch.current = inst_current;
		in[i].watch.arg = &in[i];
		atomic_init(&in[i].watch.clock, -1);
		in[i].o.p.watch = &in[i].watch;
		in[i].o.p.failed_clock = rc->failed_clock;
		in[i].o.p.epoch = rc->epoch;
		if (rc->epoch)
			epoch_secret(&job->o.secret, rc->epoch,
				     &in[i].o.secret);
		if (!ranks[i] && rc->lfd >= 0) {
			in[i].lfd = dup(rc->lfd);
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
		} else {
			in[i].started = 1;
		}
	}
	inst_main(&in[0]);
	for (int i = 1; i < n; i++)
		if (in[i].started)
			pthread_join(in[i].th, NULL);
out:
	for (int i = 0; i < n; i++) {
		int c = atomic_load(&in[i].watch.clock);

		if (in[i].err == -ENOTRECOVERABLE || (!err && in[i].err))
			err = in[i].err;
		if (c > rc->failed_clock)
			rc->failed_clock = c;
	}
	/* an abandoned worker (-ENOTRECOVERABLE) may still touch its watch
	 * until the process exits, which it is about to */
	if (err != -ENOTRECOVERABLE)
		free(in);
	return err;
}

/* Say what this survivor does in the new epoch; fill the summary's note
 * and set where the job continues from. */
static void plan_epoch(struct recover *rc, const unsigned char *lost, int n,
		       const int *ranks, char *note, size_t len)
{
	struct frr_job *job = rc->job;
	char runs[256] = "", *who = rc->lost_ranks, from[4200];
	int nlost = 0, clock, named, err, k = 0, w = 0;

	who[0] = 0;
	for (int r = 0; r < rc->P; r++) {
		if (!lost[r])
			continue;
		/* the first few by number, then "..." */
		if (w < (int)sizeof(rc->lost_ranks) - 16)
			w += snprintf(who + w,
				      sizeof(rc->lost_ranks) - (size_t)w,
				      "%s%d", nlost ? "," : "", r);
		else if (!strstr(who, "..."))
			w += snprintf(who + w,
				      sizeof(rc->lost_ranks) - (size_t)w,
				      ",...");
		nlost++;
	}
	for (int i = 0; i < n && k < (int)sizeof(runs) - 16; i++)
		k += snprintf(runs + k, sizeof(runs) - (size_t)k, "%s%d",
			      i ? ", " : "", ranks[i]);
	err = frr_ckpt_latest(job->o.p.ckpt_dir, &clock, &named);
	if (!err)
		job->o.p.resume_dir = job->o.p.ckpt_dir;
	/* the job adds the clock it resumed from: its ranks agree on it */
	snprintf(note, len, "lost=%d epoch=%u", nlost, rc->epoch);
	job->o.p.recovered = note;
	job->o.p.lost_ranks = who;
	if (!err)
		snprintf(from, sizeof(from),
			 "from %s/ckpt-%d: clocks after %d run again",
			 job->o.p.ckpt_dir, clock, clock);
	else
		snprintf(from, sizeof(from), "%s",
			 job->o.p.resume_dir ? "from its --resume checkpoint: "
					       "it wrote none of its own yet"
					     : "from clock 0: it wrote no "
					       "checkpoint yet");
	/* said under --quiet too: the job is not what it was; one write,
	 * so the survivors' lines do not interleave */
	fprintf(stderr,
		"flexrr[%d]: recovering (epoch %u): this process runs "
		"rank%s %s; %s\n",
		rc->me, rc->epoch, n > 1 ? "s" : "", runs, from);
}

/* A local job: the launcher's page says who was lost.  1 (a new epoch,
 * lost[] filled), 0 (nobody: the job's own failure). */
static int agree_local(struct recover *rc, int err, unsigned char *lost)
{
	/* its own error the others need not wait out */
	if (!frr_launch_peer_lost(err))
		frr_board_own_error(rc->board);
	if (frr_board_wait(rc->board, rc->epoch) == rc->epoch)
		return 0;
	rc->epoch = frr_board_read(rc->board, lost);
	return 1;
}

/* The coordinator's claim on an epoch: a file only one rank can create in
 * the checkpoint directory every rank shares. */
static int lease(void *arg, unsigned e)
{
	struct recover *rc = arg;
	char p[4096];
	int got;

	lease_path(rc, e, p, sizeof(p));
	got = frr_file_claim(p);
	if (got <= 0) {
		if (got < 0)
			fprintf(stderr,
				"flexrr[%d]: cannot create %s to start epoch "
				"%u: %s\n",
				rc->me, p, e, strerror(-got));
		return got ? got : -EEXIST;
	}
	return 0;
}

/* Launcher-started: the ranks agree among themselves (bootstrap's
 * frr_members_agree); the lowest one left serves the next rendezvous on
 * its members socket.  1, 0 as agree_local, or a negative errno
 * (-ESTALE: this rank was left behind). */
static int agree_launched(struct recover *rc, unsigned char *lost)
{
	struct frr_members_cfg cfg = {
		.rank = rc->me,
		.size = rc->P,
		.epoch = rc->epoch,
		.run_id = rc->run_id,
		.secret = &rc->job->o.secret,
		.addrs = rc->maddr,
		.listen_fd = rc->mfd,
		.answer_ms = rc->job->o.p.dead_ms + 2000,
		.lease = lease,
		.lease_arg = rc,
	};
	int r = frr_members_agree(&cfg, lost), coord = 0;

	if (r <= 0)
		return r;
	rc->epoch++;
	while (lost[coord])
		coord++;
	rc->addr = rc->maddr[coord];
	rc->lfd = coord == rc->me ? rc->mfd : -1;
	return 1;
}

static int recover_loop(struct recover *rc)
{
	int P = rc->P, n = 1, err;
	unsigned char *lost = calloc((size_t)P, 1);
	int *ranks = calloc((size_t)P, sizeof(int));
	char note[128];

	if (!lost || !ranks) {
		err = -ENOMEM;
		goto out;
	}
	ranks[0] = rc->me;
	rc->lost = lost;
	for (;;) {
		int r;

		if (rc->epoch)
			frr_test_die_meet(rc->me, rc->job->o.p.ckpt_dir,
					  rc->epoch, &rc->mfd);
		err = run_hosted(rc, ranks, n);
		if (!err || err == -ENOTRECOVERABLE)
			break;
		rc->job->o.p.recover_t0 = frr_now_s();
		if (!rc->board && !rc->met) {
			/* nobody knows where the others listen */
			fprintf(stderr,
				"flexrr[%d]: the job failed before its ranks "
				"told each other where to agree after a loss: "
				"not recovering (see the messages above)\n",
				rc->me);
			break;
		}
		r = rc->board ? agree_local(rc, err, lost)
			      : agree_launched(rc, lost);
		if (!r)
			break; /* nobody was lost: the job's own failure */
		if (r == -ESTALE || (r > 0 && lost[rc->me])) {
			fprintf(stderr,
				"flexrr[%d]: this rank was lost (stopped or "
				"too slow) and the others carried on without "
				"it (epoch %u): fenced, exiting without "
				"writing anything more\n",
				rc->me, rc->epoch + (r == -ESTALE));
			err = -ESTALE;
			break;
		}
		if (r < 0) {
			err = r;
			break;
		}
		n = 0;
		for (int k = 0; k < P; k++)
			if (host_of(lost, P, k) == rc->me)
				ranks[n++] = k;
		plan_epoch(rc, lost, n, ranks, note, sizeof(note));
	}
out:
	rc->first_live = lost ? host_of(lost, P, 0) : 0;
	free(lost);
	free(ranks);
	return err;
}

int frr_recover_rank(struct frr_job *job, struct frr_board *b, int me,
		     const char *addr, int lfd)
{
	struct recover rc = { .job = job,
			      .me = me,
			      .P = job->o.nprocs,
			      .addr = addr,
			      .lfd = lfd,
			      .board = b,
			      .mfd = -1,
			      .failed_clock = -1 };
	int err = recover_loop(&rc);

	close(lfd);
	return err;
}

int frr_recover_launched(struct frr_job *job, int me, int size,
			 const char *addr, struct frr_oob *oob0)
{
	struct recover rc = { .job = job,
			      .me = me,
			      .P = size,
			      .addr = addr,
			      .oob0 = oob0,
			      .lfd = -1,
			      .failed_clock = -1 };
	int err;

	rc.maddr = calloc((size_t)size, sizeof(*rc.maddr));
	if (!rc.maddr)
		return -ENOMEM;
	/* no rendezvous to route toward (PMIx): "*:" is this host's name,
	 * the address other hosts reach it by (the port only routes) */
	err = frr_members_listen(addr ? addr : "*:1", &rc.mfd, rc.maddr[me],
				 sizeof(rc.maddr[me]));
	if (err && !addr) {
		frr_err("--on-failure recover: rank %d cannot listen for the "
			"other ranks where this host's name resolves (see the "
			"message above), which they would reach it at to agree "
			"after a loss: give the host name an address "
			"(/etc/hosts, DNS), or meet at --rendezvous HOST:PORT "
			"(--bootstrap tcp)",
			me);
		/* still meet, with no address, so that every rank stops
		 * with a reason rather than waiting on this one */
		rc.maddr[me][0] = 0;
		err = 0;
	}
	rc.mem = !job->o.p.ckpt_dir;
	if (!err)
		err = recover_loop(&rc);
	/* the directory in memory: the lowest rank left removes it, or keeps
	 * it and says where when the job failed (a fenced rank is quiet) */
	if (rc.mem && job->mem_ckpt && rc.first_live == me && err != -ESTALE)
		frr_job_mem_ckpt_end(job, err);
	if (rc.mfd >= 0)
		close(rc.mfd);
	free(rc.maddr);
	return err;
}
