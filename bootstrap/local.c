// SPDX-License-Identifier: MIT
/*
 * frr_launch: fork N ranks of one job on this host.  Collectives go through
 * the parent, which is connected to every child by a socketpair: each child
 * sends a request frame, the parent answers all of them once every rank has
 * asked (allgather; a barrier is an empty allgather).  With
 * FRR_LAUNCH_NO_RELAY the ranks open their own channel and no socketpair is
 * made.  The parent also reaps children: a rank that fails makes pending
 * collectives fail at once and the other ranks are killed after a grace
 * period, so nothing hangs.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/bootstrap.h"
#include "local.h"
#include "oob.h"

#define GRACE_MS 2000
/* a rank cfg.watch found lost gets this long to end on its own */
#define FENCE_MS 1000
_Static_assert(MAX_FRAME >= FRR_OOB_ROUND_MAX,
	       "frr_oob_allgather's rounds must fit in one relay frame");

/* ---- parent side ------------------------------------------------------ */

struct rank_state {
	pid_t pid;
	int fd; /* -1 once the child hung up */
	int status;
	int reaped;
	int killed_timeout;
	int killed_grace;   /* still running after a peer failed: killed */
	int stopped;	    /* stopped by a signal (SIGSTOP, SIGTSTP) */
	int lost;	    /* FRR_LAUNCH_SURVIVE: killed or stopped: lost */
	long long fence_at; /* lost by cfg.watch: killed then if still here */
	int pending;	    /* has a request waiting for the collective */
	uint64_t len;
	char *buf;
};

struct launch {
	const struct frr_launch_cfg *cfg;
	struct rank_state *r;
	int n;
	int failed_rank;
	long long kill_at;
	int continued; /* FRR_LAUNCH_SURVIVE: the lost ones were continued */
};

static void fail_pending(struct launch *l, int err)
{
	struct frame f = { .status = err };

	for (int i = 0; i < l->n; i++) {
		if (!l->r[i].pending)
			continue;
		l->r[i].pending = 0;
		if (l->r[i].fd >= 0)
			(void)frr_local_write_full(l->r[i].fd, &f, sizeof(f));
	}
}

static void hangup(struct launch *l, int i)
{
	close(l->r[i].fd);
	l->r[i].fd = -1;
	l->r[i].pending = 0;
	/* a collective can no longer complete */
	fail_pending(l, -ECONNRESET);
}

static void read_request(struct launch *l, int i)
{
	struct rank_state *s = &l->r[i];
	struct frame f;
	char *buf;

	if (frr_local_read_full(s->fd, &f, sizeof(f), 10000) ||
	    f.len > MAX_FRAME / (uint64_t)l->n) {
		hangup(l, i);
		return;
	}
	buf = realloc(s->buf, f.len ? f.len : 1);
	if (!buf || (f.len && frr_local_read_full(s->fd, buf, f.len, 10000))) {
		if (buf)
			s->buf = buf;
		hangup(l, i);
		return;
	}
	s->buf = buf;
	s->len = f.len;
	s->pending = 1;
}

static void maybe_complete(struct launch *l)
{
	struct frame f = { 0 };
	char *all;

	for (int i = 0; i < l->n; i++) {
		if (!l->r[i].pending) {
			/* a rank that already left can never join */
			if (l->r[i].fd < 0)
				fail_pending(l, -ECONNRESET);
			return;
		}
	}
	for (int i = 1; i < l->n; i++) {
		if (l->r[i].len != l->r[0].len) {
			frr_err("oob: ranks disagree on the allgather size "
				"(rank 0: %llu bytes, rank %d: %llu)",
				(unsigned long long)l->r[0].len, i,
				(unsigned long long)l->r[i].len);
			fail_pending(l, -EINVAL);
			return;
		}
	}
	f.len = l->r[0].len * (uint64_t)l->n;
	all = malloc(f.len ? f.len : 1);
	if (!all) {
		fail_pending(l, -ENOMEM);
		return;
	}
	for (int i = 0; i < l->n; i++)
		memcpy(all + (size_t)i * l->r[0].len, l->r[i].buf, l->r[i].len);
	for (int i = 0; i < l->n; i++) {
		l->r[i].pending = 0;
		if (frr_local_write_full(l->r[i].fd, &f, sizeof(f)) ||
		    (f.len && frr_local_write_full(l->r[i].fd, all, f.len)))
			hangup(l, i);
	}
	free(all);
}

static int child_failed(int status)
{
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* How surely a failed rank's exit is its own failure, not a consequence:
 * a signal (a crash, a kill) 2; its own error 1; "a peer failed"
 * (ENOTCONN: the job's ranks stop that way when another one dies) 0. */
static int blame(int status)
{
	if (WIFSIGNALED(status))
		return 2;
	return WEXITSTATUS(status) != ENOTCONN;
}

/* FRR_LAUNCH_SURVIVE: rank i was killed or stopped by a signal. */
static int lose(struct launch *l, int i, int st)
{
	if (!(l->cfg->flags & FRR_LAUNCH_SURVIVE))
		return 0;
	if (!l->r[i].lost && l->cfg->on_lost)
		l->cfg->on_lost(l->cfg->lost_arg, i, st);
	l->r[i].lost = 1;
	return 1;
}

/* The first failure named is the one most surely its own, not the
 * lowest-numbered: ranks that exit in one pass were all seen at once, and
 * a rank that stopped because a peer failed (blame 0) may be reaped before
 * the peer whose failure it saw (the peer writes its error, then exits), so
 * a later failure with more blame replaces it.  The grace period runs from
 * the first failure seen. */
static void reap(struct launch *l)
{
	int first = l->failed_rank;

	for (int i = 0; i < l->n; i++) {
		struct rank_state *s = &l->r[i];
		int st;

		if (s->reaped ||
		    waitpid(s->pid, &st, WNOHANG | WUNTRACED | WCONTINUED) <= 0)
			continue;
		if (WIFSTOPPED(st) || WIFCONTINUED(st)) {
			s->stopped = WIFSTOPPED(st);
			if (s->stopped)
				lose(l, i, st);
			continue;
		}
		s->status = st;
		s->reaped = 1;
		/* a lost rank's own end (a fenced one says why) fails no one */
		if (s->lost || (WIFSIGNALED(st) && lose(l, i, st)))
			continue;
		if (child_failed(s->status) &&
		    (first < 0 || blame(s->status) > blame(l->r[first].status)))
			first = i;
	}
	if (first >= 0 && l->failed_rank < 0)
		l->kill_at =
		    frr_now_ms() +
		    (l->cfg->grace_ms > 0 ? l->cfg->grace_ms : GRACE_MS);
	l->failed_rank = first;
}

static int live(const struct launch *l)
{
	int n = 0;

	for (int i = 0; i < l->n; i++)
		n += !l->r[i].reaped;
	return n;
}

/* After a failure, every rank still there is stopped (SIGSTOP): none of
 * them will end on its own or name anyone, so with FRR_LAUNCH_KILL_STOPPED
 * the grace is not waited. */
static int only_stopped_left(const struct launch *l)
{
	int n = 0;

	for (int i = 0; i < l->n; i++) {
		if (l->r[i].reaped)
			continue;
		if (!l->r[i].stopped)
			return 0;
		n++;
	}
	return n > 0;
}

/* FRR_LAUNCH_SURVIVE: only lost ranks are left (stopped ones, or
 * continued and not ended yet): continue them once so they can see they
 * were fenced, and kill them grace_ms later. */
static void continue_lost(struct launch *l)
{
	for (int i = 0; i < l->n; i++)
		if (!l->r[i].reaped && !l->r[i].lost)
			return;
	for (int i = 0; i < l->n; i++)
		if (!l->r[i].reaped)
			kill(l->r[i].pid, SIGCONT);
	l->continued = 1;
	l->kill_at =
	    frr_now_ms() + (l->cfg->grace_ms > 0 ? l->cfg->grace_ms : GRACE_MS);
}

/* FRR_LAUNCH_SURVIVE: ranks the caller's watch found lost (hung: alive but
 * silent to their peers, no signal seen) end, by themselves or killed. */
static void watch_lost(struct launch *l)
{
	int r = l->cfg->watch ? l->cfg->watch(l->cfg->lost_arg) : -1;
	long long now = frr_now_ms();

	if (r >= 0 && r < l->n && !l->r[r].reaped && !l->r[r].lost) {
		l->r[r].lost = 1;
		l->r[r].fence_at = now + FENCE_MS;
	}
	for (int i = 0; i < l->n; i++) {
		struct rank_state *s = &l->r[i];

		if (!s->fence_at || s->reaped || now < s->fence_at)
			continue;
		s->fence_at = 0;
		frr_warn("launch: rank %d was cut off (hung) and did not end "
			 "within %d ms: killing it",
			 i, FENCE_MS);
		kill(s->pid, SIGKILL);
	}
}

static void kill_all(struct launch *l, int timeout)
{
	for (int i = 0; i < l->n; i++) {
		if (l->r[i].reaped)
			continue;
		l->r[i].killed_timeout = timeout;
		l->r[i].killed_grace = !timeout;
		kill(l->r[i].pid, SIGKILL);
	}
}

static void supervise(struct launch *l)
{
	int timeout_ms = l->cfg->timeout_ms;
	long long deadline = frr_now_ms() + timeout_ms;
	struct pollfd *pfd = calloc((size_t)l->n, sizeof(*pfd));
	int killed = 0;

	while (live(l)) {
		int np = 0;

		for (int i = 0; i < l->n; i++)
			if (l->r[i].fd >= 0)
				pfd[np++] = (struct pollfd){ .fd = l->r[i].fd,
							     .events = POLLIN };
		if (poll(pfd, (nfds_t)np, 20) > 0) {
			for (int k = 0; k < np; k++) {
				int i;

				if (!pfd[k].revents)
					continue;
				for (i = 0; l->r[i].fd != pfd[k].fd; i++)
					;
				if (pfd[k].revents & POLLIN)
					read_request(l, i);
				else
					hangup(l, i);
			}
			maybe_complete(l);
		}
		reap(l);
		if (l->cfg->flags & FRR_LAUNCH_SURVIVE)
			watch_lost(l);
		if ((l->cfg->flags & FRR_LAUNCH_SURVIVE) && !l->continued &&
		    live(l))
			continue_lost(l);
		if (!killed && timeout_ms > 0 && frr_now_ms() > deadline) {
			kill_all(l, 1);
			killed = 1;
		} else if (!killed && l->kill_at &&
			   (frr_now_ms() > l->kill_at ||
			    ((l->cfg->flags & FRR_LAUNCH_KILL_STOPPED) &&
			     only_stopped_left(l)))) {
			kill_all(l, 0);
			killed = 1;
		}
		if (killed) {
			for (int i = 0; i < l->n; i++)
				if (!l->r[i].reaped &&
				    waitpid(l->r[i].pid, &l->r[i].status, 0) >
					0)
					l->r[i].reaped = 1;
		}
	}
	free(pfd);
}

static int lost_all(const struct launch *l)
{
	for (int i = 0; i < l->n; i++)
		if (!l->r[i].lost)
			return 0;
	return 1;
}

static int report(const struct launch *l)
{
	int ret = 0, quiet = !!(l->cfg->flags & FRR_LAUNCH_QUIET_EXITS);
	int nfailed = 0;

	for (int i = 0; i < l->n; i++)
		nfailed += child_failed(l->r[i].status);
	if (nfailed > 1 && l->failed_rank >= 0 && !quiet)
		frr_err("launch: rank %d failed first; the other %d failed "
			"ranks stopped after it (look at its message first)",
			l->failed_rank, nfailed - 1);
	for (int i = 0; i < l->n; i++) {
		const struct rank_state *s = &l->r[i];

		if (!child_failed(s->status) || s->lost)
			continue;
		if (s->killed_timeout) {
			frr_err("launch: rank %d still running after %d ms: "
				"killed (raise the timeout or look for a hang)",
				i, l->cfg->timeout_ms);
			ret = -ETIMEDOUT;
			continue;
		}
		if (s->killed_grace && s->stopped)
			frr_err("launch: rank %d was stopped by a signal (a "
				"SIGSTOP or ^Z: it could not run) when another "
				"rank failed: killed",
				i);
		else if (WIFSIGNALED(s->status))
			frr_err("launch: rank %d killed by signal %d (%s)%s", i,
				WTERMSIG(s->status),
				strsignal(WTERMSIG(s->status)),
				l->failed_rank >= 0 && l->failed_rank != i
				    ? ", after another rank failed"
				    : "");
		else if (!quiet)
			frr_err("launch: rank %d exited with code %d (%s)", i,
				WEXITSTATUS(s->status),
				strerror(WEXITSTATUS(s->status)));
		if (!ret)
			ret = -EIO;
	}
	if (l->failed_rank >= 0 && ret == -ETIMEDOUT)
		ret = -EIO;
	if (!ret && lost_all(l)) {
		frr_err("launch: every rank was lost: nobody is left to carry "
			"on the job");
		ret = -EIO;
	}
	return ret;
}

static void fill_result(const struct launch *l)
{
	struct frr_launch_result *res = l->cfg->result;
	int st;

	if (!res)
		return;
	*res = (struct frr_launch_result){ .failed_rank = l->failed_rank,
					   .hung_rank = -1 };
	for (int i = 0; i < l->n; i++) {
		res->lost += l->r[i].lost;
		res->timed_out |= l->r[i].killed_timeout;
		if (l->r[i].killed_grace && res->hung_rank < 0)
			res->hung_rank = i;
	}
	if (l->failed_rank < 0)
		return;
	st = l->r[l->failed_rank].status;
	if (WIFSIGNALED(st))
		res->signal = WTERMSIG(st);
	else
		res->exit_code = WEXITSTATUS(st);
}

/* Fork rank i; its end of the socketpair (relay) becomes the child's oob. */
static int spawn(struct launch *l, int i, const struct frr_job_secret *secret,
		 frr_launch_fn fn, void *arg)
{
	int relay = !(l->cfg->flags & FRR_LAUNCH_NO_RELAY);
	int sv[2] = { -1, -1 };
	pid_t pid, parent = getpid();

	if (relay && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		frr_err("frr_launch: socketpair: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		frr_err("frr_launch: fork of rank %d: %s (too many processes?)",
			i, strerror(errno));
		if (relay) {
			close(sv[0]);
			close(sv[1]);
		}
		return err;
	}
	if (pid == 0) {
		for (int k = 0; k < i; k++)
			if (l->r[k].fd >= 0)
				close(l->r[k].fd);
		if (relay)
			close(sv[0]);
		frr_local_run_child(i, l->cfg->nprocs, secret, sv[1], parent,
				    fn, arg);
	}
	if (relay)
		close(sv[1]);
	l->r[i].pid = pid;
	l->r[i].fd = sv[0];
	return 0;
}

int frr_launch(const struct frr_launch_cfg *cfg, frr_launch_fn fn, void *arg)
{
	struct launch l = { .cfg = cfg, .failed_rank = -1 };
	/* the children inherit it with their memory: never in argv, the
	 * environment or a file */
	struct frr_job_secret secret;
	int ret;

	if (!cfg || cfg->nprocs < 1 || !fn || cfg->timeout_ms < 0) {
		frr_err("frr_launch: need nprocs >= 1, a function and a "
			"timeout >= 0 (got %d ranks, %d ms)",
			cfg ? cfg->nprocs : 0, cfg ? cfg->timeout_ms : 0);
		return -EINVAL;
	}
	ret = frr_job_secret_random(&secret);
	if (ret)
		return ret;
	l.r = calloc((size_t)cfg->nprocs, sizeof(*l.r));
	if (!l.r)
		return -ENOMEM;
	fflush(NULL); /* children must not repeat buffered output */
	for (; l.n < cfg->nprocs && !ret; l.n++) {
		ret = spawn(&l, l.n, &secret, fn, arg);
		if (ret)
			break;
	}
	if (ret) {
		kill_all(&l, 0);
		for (int i = 0; i < l.n; i++)
			waitpid(l.r[i].pid, NULL, 0);
	} else {
		supervise(&l);
		ret = report(&l);
	}
	fill_result(&l);
	for (int i = 0; i < l.n; i++) {
		if (l.r[i].fd >= 0)
			close(l.r[i].fd);
		free(l.r[i].buf);
	}
	free(l.r);
	return ret;
}

int frr_launch_local(int nprocs, frr_launch_fn fn, void *arg, int timeout_ms)
{
	struct frr_launch_cfg cfg = { .nprocs = nprocs,
				      .timeout_ms = timeout_ms };

	if (timeout_ms <= 0) {
		frr_err("frr_launch_local: need a positive timeout (got %d "
			"ms)",
			timeout_ms);
		return -EINVAL;
	}
	return frr_launch(&cfg, fn, arg);
}
