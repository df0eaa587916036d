// SPDX-License-Identifier: MIT
/*
 * A test hook of --on-failure recover (launch/recover.c): a rank lost on
 * its way to the survivors' meeting, killed or gone silent as a host that
 * is down.  Only FLEXRR_TEST_DIE_MEET turns it on.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flexrr/file.h"
#include "launch.h"

/* Make the members socket *fd answer nothing from
 * now on, as a host that is down: it is replaced by one at the same
 * address whose accept queue is full, so the kernel drops connection
 * attempts.  0 or -errno. */
static int silence(int *fd)
{
	struct sockaddr_storage sa;
	socklen_t l = sizeof(sa);
	int s, one = 1, err = 0;

	if (getsockname(*fd, (struct sockaddr *)&sa, &l))
		return -errno;
	close(*fd);
	*fd = s = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&sa, l) || listen(s, 0))
		return -errno;
	/* a backlog of 0 queues one connection: two, to be sure it is full */
	for (int i = 0; i < 2 && !err; i++) {
		int c = socket(sa.ss_family,
			       SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (c < 0)
			return -errno;
		if (connect(c, (struct sockaddr *)&sa, l) &&
		    errno != EINPROGRESS)
			err = -errno;
		poll(&(struct pollfd){ c, POLLOUT, 0 }, 1, 200);
		/* c stays open: the queue holds its connection */
	}
	return err;
}

/* env FLEXRR_TEST_DIE_MEET=R: the process of rank R is killed as it goes
 * to a new epoch's meeting, once (the run that creates DIR/.test-die-meet):
 * a loss while the survivors meet, for the tests.  R:silent (launched
 * ranks): it goes silent instead, as a host that is down (its members
 * socket answers nothing, it stops), and is killed when continued. */
void frr_test_die_meet(int me, const char *ckpt_dir, unsigned epoch, int *mfd)
{
	const char *e = getenv("FLEXRR_TEST_DIE_MEET");
	char p[4096];

	if (!e || atoi(e) != me)
		return;
	snprintf(p, sizeof(p), "%s/.test-die-meet", ckpt_dir);
	if (frr_file_claim(p) != 1)
		return;
	if (strstr(e, ":silent") && *mfd >= 0) {
		int err = silence(mfd);

		fprintf(stderr,
			"flexrr[%d]: test: FLEXRR_TEST_DIE_MEET: silent (%s) "
			"on the way to epoch %u's meeting\n",
			me, err ? strerror(-err) : "ok", epoch);
		raise(SIGSTOP);
	}
	fprintf(stderr,
		"flexrr[%d]: test: FLEXRR_TEST_DIE_MEET: SIGKILL on the way "
		"to epoch %u's meeting\n",
		me, epoch);
	raise(SIGKILL);
}
