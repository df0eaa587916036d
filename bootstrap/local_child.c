// SPDX-License-Identifier: MIT
/*
 * The ranks' side of frr_launch (the parent's: local.c): a rank's
 * collectives are request frames to the parent over its socketpair, and
 * the parent answers every rank once all have asked.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "local.h"
#include "oob.h"

struct oob_child {
	struct frr_oob base;
	int fd;
	int broken; /* a timed-out collective left the stream mid-frame */
};

int frr_local_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int frr_local_read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = poll(&pfd, 1, timeout_ms);
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- child side ------------------------------------------------------- */

static int child_allgather(struct frr_oob *oob, const void *mine, size_t len,
			   void *all, int timeout_ms)
{
	struct oob_child *c = (struct oob_child *)oob; /* base is first */
	struct frame f = { .len = len };
	long long deadline =
	    frr_now_ms() + (timeout_ms > 0 ? timeout_ms : 10000);
	int ret;

	if (c->broken)
		return -EPIPE;
	if (len > MAX_FRAME / (size_t)oob->size) {
		frr_err("oob: allgather of %zu bytes x %d ranks exceeds %u "
			"bytes",
			len, oob->size, MAX_FRAME);
		return -EMSGSIZE;
	}
	ret = frr_local_write_full(c->fd, &f, sizeof(f));
	if (!ret && len)
		ret = frr_local_write_full(c->fd, mine, len);
	if (!ret) {
		long long left = deadline - frr_now_ms();

		ret = frr_local_read_full(c->fd, &f, sizeof(f),
					  left > 0 ? (int)left : 1);
	}
	if (!ret && f.status)
		ret = f.status;
	else if (!ret && f.len != len * (size_t)oob->size)
		ret = -EPROTO;
	if (!ret && f.len)
		ret = frr_local_read_full(c->fd, all, f.len, 10000);
	if (ret) {
		if (ret == -ETIMEDOUT || ret == -EPROTO)
			c->broken = 1;
		frr_err("oob: rank %d: collective failed: %s%s", oob->rank,
			strerror(-ret),
			ret == -ETIMEDOUT ? " (another rank did not join in "
					    "time)"
			: ret == -ECONNRESET || ret == -EPIPE
			    ? " (another rank failed, or the launcher died)"
			    : "");
	}
	return ret;
}

static int child_barrier(struct frr_oob *oob, int timeout_ms)
{
	return child_allgather(oob, NULL, 0, NULL, timeout_ms);
}

static void child_close(struct frr_oob *oob)
{
	(void)oob; /* the child's oob lives on its stack until _exit */
}

static const struct frr_oob_ops child_ops = {
	.size = sizeof(struct frr_oob_ops),
	.allgather = child_allgather,
	.barrier = child_barrier,
	.close = child_close,
};

/* FRR_LAUNCH_NO_RELAY: the rank opens its own channel */
static int norelay_allgather(struct frr_oob *oob, const void *mine, size_t len,
			     void *all, int timeout_ms)
{
	(void)mine, (void)len, (void)all, (void)timeout_ms;
	frr_err("oob: rank %d: this launch relays no collectives (the rank "
		"must open its own channel)",
		oob->rank);
	return -ENOTSUP;
}

static int norelay_barrier(struct frr_oob *oob, int timeout_ms)
{
	return norelay_allgather(oob, NULL, 0, NULL, timeout_ms);
}

static const struct frr_oob_ops norelay_ops = {
	.size = sizeof(struct frr_oob_ops),
	.allgather = norelay_allgather,
	.barrier = norelay_barrier,
	.close = child_close,
};

static int exit_code(int ret)
{
	if (ret == 0)
		return 0;
	if (ret < 0)
		ret = -ret;
	return ret > 255 ? 255 : ret;
}

/*
 * The only place in libflexrr that ends a process: a child forked by
 * frr_launch, after its rank's function returned.  It is the launcher's own
 * process, not the caller's; _exit, not exit, so the child does not run the
 * parent's atexit handlers (e.g. a test runner's) or flush its stdio twice.
 */
void __attribute__((noreturn))
frr_local_run_child(int rank, int nprocs, const struct frr_job_secret *secret,
		    int fd, pid_t parent, frr_launch_fn fn, void *arg)
{
	struct oob_child c = {
		.base = { .ops = fd >= 0 ? &child_ops : &norelay_ops,
			  .rank = rank,
			  .size = nprocs,
			  .job_token = frr_job_secret_tag(secret),
			  .secret = *secret },
		.fd = fd
	};
	int code = 111; /* the launcher is already gone: do not run */

	/* die with the launcher; if it died before prctl took effect we have
	 * been reparented already (to init or a subreaper): do not run */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == parent) {
		frr_log_set_home(rank);
		frr_log_set_rank(rank);
		code = exit_code(fn(&c.base, arg));
	}
	fflush(NULL);
	if (fd >= 0)
		close(fd);
	_exit(code);
}
