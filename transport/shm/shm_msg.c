// SPDX-License-Identifier: MIT
/*
 * shm wire protocol between contexts: fixed-size messages over abstract UNIX
 * seqpacket sockets, a memfd passed with SCM_RIGHTS where one is carried.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "shm.h"

/* ---- messages --------------------------------------------------------- */

int shm_msg_send(int fd, const struct shm_msg *m, int pass_fd)
{
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (pass_fd >= 0) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&cm.h), &pass_fd, sizeof(int));
	}
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(*m) ? 0 : -EPROTO;
}

/*
 * Receive one message within timeout_ms; *got_fd gets a passed fd or -1.
 * -ECONNRESET when the other side closed, -ETIMEDOUT when it said nothing.
 */
int shm_msg_parse(const void *buf, size_t n, struct shm_msg *out)
{
	struct shm_msg m;

	if (n != sizeof(m))
		return -EPROTO;
	memcpy(&m, buf, sizeof(m));
	if (m.magic != SHM_MSG_MAGIC || m.type < SHM_HELLO ||
	    m.type >= SHM_MSG_TYPES)
		return -EPROTO;
	m.addr[sizeof(m.addr) - 1] = '\0';
	m.why[sizeof(m.why) - 1] = '\0';
	/* a refusal's error is an error (-4095 .. -1): a peer's 0 or positive
	 * value would read as success where it is returned */
	if ((m.type == SHM_REJECT || m.type == SHM_IMPORT_ERR) &&
	    (m.err >= 0 || m.err <= -4096))
		m.err = -EPROTO;
	*out = m;
	return 0;
}

int shm_msg_recv(int fd, struct shm_msg *m, int *got_fd, int timeout_ms)
{
	/* one byte more than a message: a longer one is not cut to size */
	unsigned char raw[sizeof(*m) + 1];
	struct iovec iov = { .iov_base = raw, .iov_len = sizeof(raw) };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} cm;
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cm.buf,
			     .msg_controllen = sizeof(cm.buf) };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t n;
	int r;

	*got_fd = -1;
	do
		r = poll(&pfd, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		int fds[4];

		memcpy(fds, CMSG_DATA(c), sizeof(int) * (nfd > 4 ? 4 : nfd));
		for (int i = 0; i < nfd && i < 4; i++) {
			if (*got_fd < 0)
				*got_fd = fds[i];
			else
				close(fds[i]);
		}
	}
	if (n == 0)
		return -ECONNRESET;
	if ((mh.msg_flags & MSG_TRUNC) || shm_msg_parse(raw, (size_t)n, m)) {
		if (*got_fd >= 0)
			close(*got_fd);
		*got_fd = -1;
		return -EPROTO;
	}
	return 0;
}

void shm_msg_init(struct shm_msg *m, struct shm_ctx *c, uint32_t type)
{
	memset(m, 0, sizeof(*m));
	m->magic = SHM_MSG_MAGIC;
	m->type = type;
	m->rank = c->rank;
	m->nranks = c->nranks;
	snprintf(m->addr, sizeof(m->addr), "%s", c->addr);
}

void shm_reply_error(int fd, struct shm_ctx *c, uint32_t type, int err,
		     const char *why)
{
	struct shm_msg m;

	shm_msg_init(&m, c, type);
	m.err = err;
	snprintf(m.why, sizeof(m.why), "%s", why);
	(void)shm_msg_send(fd, &m, -1);
}

int shm_sockaddr_of(const char *addr, struct sockaddr_un *sa, socklen_t *salen)
{
	size_t n = strlen(addr);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n < 2 || addr[0] != '@' || n > sizeof(sa->sun_path))
		return -EINVAL;
	/* abstract namespace: leading NUL, no file to clean up after a crash */
	memcpy(sa->sun_path + 1, addr + 1, n - 1);
	*salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	return 0;
}

/* Connect to an shm address, retrying while the listener's backlog is full. */
int shm_dial(const char *addr, int timeout_ms)
{
	long long deadline = frr_now_ms() + timeout_ms;
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, ret;

	ret = shm_sockaddr_of(addr, &sa, &salen);
	if (ret)
		return ret;
	for (;;) {
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (!connect(fd, (struct sockaddr *)&sa, salen))
			return fd;
		ret = -errno;
		close(fd);
		if (ret != -EAGAIN && ret != -EINTR)
			return ret == -ECONNREFUSED ? -ECONNRESET : ret;
		if (frr_now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(1000);
	}
}
