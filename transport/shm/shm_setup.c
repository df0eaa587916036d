// SPDX-License-Identifier: MIT
/*
 * shm set-up: contexts, the service thread, endpoints, regions, imports.
 * Everything here may block (with a timeout) and allocate; nothing here runs
 * per write.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "shm.h"

enum shm_msg_type {
	SHM_HELLO = 1,	/* connector -> acceptor, carries connector's ring */
	SHM_WELCOME,	/* acceptor -> connector, carries acceptor's ring */
	SHM_REJECT,	/* acceptor -> connector: why in 'why' */
	SHM_IMPORT,	/* importer -> owner: region_id */
	SHM_IMPORT_OK,	/* owner -> importer, carries the region memfd */
	SHM_IMPORT_ERR, /* owner -> importer: err + why */
};

struct shm_msg {
	uint32_t magic;
	uint32_t type;
	uint64_t job_token;
	int32_t rank;
	int32_t nranks;
	uint32_t region_id;
	int32_t err;
	uint64_t len;
	char addr[FRR_TP_ADDR_MAX];
	char why[160];
};

static _Atomic unsigned addr_counter;

size_t shm_page_round(size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (len + pg - 1) & ~(pg - 1);
}

/* ---- messages --------------------------------------------------------- */

static int msg_send(int fd, const struct shm_msg *m, int pass_fd)
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
static int msg_recv(int fd, struct shm_msg *m, int *got_fd, int timeout_ms)
{
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
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
	if (n != (ssize_t)sizeof(*m) || m->magic != SHM_MSG_MAGIC) {
		if (*got_fd >= 0)
			close(*got_fd);
		*got_fd = -1;
		return -EPROTO;
	}
	m->addr[sizeof(m->addr) - 1] = '\0';
	m->why[sizeof(m->why) - 1] = '\0';
	return 0;
}

static void msg_init(struct shm_msg *m, struct shm_ctx *c, uint32_t type)
{
	memset(m, 0, sizeof(*m));
	m->magic = SHM_MSG_MAGIC;
	m->type = type;
	m->job_token = c->job_token;
	m->rank = c->rank;
	m->nranks = c->nranks;
	snprintf(m->addr, sizeof(m->addr), "%s", c->addr);
}

static void reply_error(int fd, struct shm_ctx *c, uint32_t type, int err,
			const char *why)
{
	struct shm_msg m;

	msg_init(&m, c, type);
	m.err = err;
	snprintf(m.why, sizeof(m.why), "%s", why);
	(void)msg_send(fd, &m, -1);
}

static int sockaddr_of(const char *addr, struct sockaddr_un *sa,
		       socklen_t *salen)
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
static int dial(const char *addr, int timeout_ms)
{
	long long deadline = frr_now_ms() + timeout_ms;
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, ret;

	ret = sockaddr_of(addr, &sa, &salen);
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

/* ---- shared-memory objects -------------------------------------------- */

static int memfd_map(const char *name, size_t len, int *fd_out, void **p_out)
{
	void *p;
	int fd, ret;

	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len)) {
		ret = -errno;
		goto close_fd;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		 fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto close_fd;
	}
	*fd_out = fd;
	*p_out = p;
	return 0;

close_fd:
	close(fd);
	return ret;
}

/* Map a memfd received from a peer after checking it is big enough. */
static int map_peer_fd(int fd, size_t need, void **p_out)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < need)
		return -EPROTO;
	p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*p_out = p;
	return 0;
}

static size_t ring_map_len(void)
{
	return shm_page_round(sizeof(struct shm_ring));
}

/* ---- service thread --------------------------------------------------- */

static struct shm_mr *region_find(struct shm_ctx *c, uint32_t id)
{
	for (size_t i = 0; i < c->nregions; i++)
		if (c->regions[i]->base.region_id == id)
			return c->regions[i];
	return NULL;
}

static void serve_import(struct shm_ctx *c, int fd, const struct shm_msg *q)
{
	struct shm_mr *mr;
	struct shm_msg m;
	char why[160];

	pthread_mutex_lock(&c->lock);
	mr = region_find(c, q->region_id);
	if (!mr || mr->fd < 0) {
		pthread_mutex_unlock(&c->lock);
		snprintf(why, sizeof(why),
			 "rank %d has no remotely writable region %u (freed, "
			 "or the descriptor is forged)",
			 c->rank, q->region_id);
		reply_error(fd, c, SHM_IMPORT_ERR, -ENOENT, why);
		return;
	}
	msg_init(&m, c, SHM_IMPORT_OK);
	m.region_id = q->region_id;
	m.len = mr->base.len;
	/* under the lock so mr_free cannot close the fd meanwhile */
	(void)msg_send(fd, &m, mr->fd);
	pthread_mutex_unlock(&c->lock);
}

static void serve_hello(struct shm_ctx *c, int fd, struct shm_msg *q,
			int ring_fd)
{
	struct shm_pending *p;
	char why[160];

	if (q->rank < 0 || q->rank >= c->nranks || q->rank == c->rank ||
	    q->nranks != c->nranks || ring_fd < 0) {
		snprintf(why, sizeof(why),
			 "rank %d of a %d-rank job cannot connect to rank %d "
			 "of a %d-rank job",
			 q->rank, q->nranks, c->rank, c->nranks);
		goto reject;
	}
	pthread_mutex_lock(&c->lock);
	if (c->acceptq_n == SHM_ACCEPTQ) {
		pthread_mutex_unlock(&c->lock);
		snprintf(why, sizeof(why),
			 "rank %d has %d connections nobody accepted", c->rank,
			 SHM_ACCEPTQ);
		goto reject;
	}
	p = &c->acceptq[c->acceptq_n++];
	p->fd = fd;
	p->rank = q->rank;
	p->ring_fd = ring_fd;
	snprintf(p->addr, sizeof(p->addr), "%s", q->addr);
	pthread_cond_signal(&c->acceptq_cond);
	pthread_mutex_unlock(&c->lock);
	return;

reject:
	reply_error(fd, c, SHM_REJECT, -EPROTO, why);
	if (ring_fd >= 0)
		close(ring_fd);
	close(fd);
}

static void serve_new_conn(struct shm_ctx *c)
{
	struct shm_msg q;
	int fd, ring_fd, ret;

	fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	/* a silent client may stall this thread for at most 2 s */
	ret = msg_recv(fd, &q, &ring_fd, 2000);
	if (ret)
		goto close_fd;
	if (q.job_token != c->job_token) {
		char why[160];

		snprintf(why, sizeof(why),
			 "rank %d belongs to job %016llx, not %016llx", c->rank,
			 (unsigned long long)c->job_token,
			 (unsigned long long)q.job_token);
		reply_error(fd, c,
			    q.type == SHM_IMPORT ? SHM_IMPORT_ERR : SHM_REJECT,
			    -EPERM, why);
		goto close_ring;
	}
	if (q.type == SHM_HELLO) {
		serve_hello(c, fd, &q, ring_fd);
		return;
	}
	if (q.type == SHM_IMPORT)
		serve_import(c, fd, &q);
close_ring:
	if (ring_fd >= 0)
		close(ring_fd);
close_fd:
	close(fd);
}

static void mark_gone(struct shm_ctx *c, uint64_t serial)
{
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < c->neps; i++) {
		if (c->eps[i]->serial == serial) {
			atomic_store_explicit(&c->eps[i]->gone, 1,
					      memory_order_relaxed);
			/* level-triggered: stop reporting this fd */
			epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->eps[i]->fd, NULL);
		}
	}
	pthread_mutex_unlock(&c->lock);
}

#define SVC_LISTEN 0
#define SVC_WAKE 1

static void *service(void *arg)
{
	struct shm_ctx *c = arg;
	struct epoll_event ev[16];

	for (;;) {
		int n = epoll_wait(c->epfd, ev, 16, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;

			if (tag == SVC_WAKE)
				return NULL;
			if (tag == SVC_LISTEN)
				serve_new_conn(c);
			else
				mark_gone(c, tag);
		}
	}
	return NULL;
}

/* ---- context ---------------------------------------------------------- */

static int epoll_add(int epfd, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int shm_open_ctx(const struct frr_tp_config *cfg,
			struct frr_tp_ctx **out)
{
	struct sockaddr_un sa;
	struct shm_ctx *c;
	socklen_t salen;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return frr_tp_err(NULL, -ENOMEM, "shm: out of memory");
	c->cq = calloc(SHM_CQ_SLOTS, sizeof(*c->cq));
	if (!c->cq) {
		ret = frr_tp_err(NULL, -ENOMEM, "shm: out of memory");
		goto free_ctx;
	}
	c->base.cfg = *cfg;
	c->job_token = cfg->job_token;
	c->rank = cfg->rank;
	c->nranks = cfg->nranks;
	c->next_ep_serial = 16; /* below: service thread tags */
	c->lfd = c->wake_fd = c->epfd = -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->acceptq_cond, NULL);
	snprintf(c->addr, sizeof(c->addr), "@flexrr-shm-%016llx-r%d-p%d-%u",
		 (unsigned long long)cfg->job_token, cfg->rank, (int)getpid(),
		 atomic_fetch_add(&addr_counter, 1));
	sockaddr_of(c->addr, &sa, &salen);
	c->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->lfd < 0 || bind(c->lfd, (struct sockaddr *)&sa, salen) ||
	    listen(c->lfd, 128)) {
		ret = frr_tp_err(NULL, -errno,
				 "shm: cannot listen on UNIX socket %s: %s",
				 c->addr, strerror(errno));
		goto close_fds;
	}
	c->wake_fd = eventfd(0, EFD_CLOEXEC);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->wake_fd < 0 || c->epfd < 0) {
		ret = frr_tp_err(NULL, -errno, "shm: eventfd/epoll: %s",
				 strerror(errno));
		goto close_fds;
	}
	ret = epoll_add(c->epfd, c->lfd, EPOLLIN, SVC_LISTEN);
	if (!ret)
		ret = epoll_add(c->epfd, c->wake_fd, EPOLLIN, SVC_WAKE);
	if (ret) {
		frr_tp_err(NULL, ret, "shm: epoll_ctl: %s", strerror(-ret));
		goto close_fds;
	}
	ret = -pthread_create(&c->svc, NULL, service, c);
	if (ret) {
		frr_tp_err(NULL, ret, "shm: cannot start service thread: %s",
			   strerror(-ret));
		goto close_fds;
	}
	*out = &c->base;
	return 0;

close_fds:
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	if (c->lfd >= 0)
		close(c->lfd);
	pthread_cond_destroy(&c->acceptq_cond);
	pthread_mutex_destroy(&c->lock);
	free(c->cq);
free_ctx:
	free(c);
	return ret;
}

static void shm_close_ctx(struct frr_tp_ctx *ctx)
{
	struct shm_ctx *c = shm_ctx_of(ctx);
	uint64_t one = 1;

	if (write(c->wake_fd, &one, sizeof(one)) != sizeof(one))
		frr_warn("shm: cannot wake the service thread: %s",
			 strerror(errno));
	pthread_join(c->svc, NULL);
	for (int i = 0; i < c->acceptq_n; i++) {
		close(c->acceptq[i].fd);
		close(c->acceptq[i].ring_fd);
	}
	if (c->neps || c->nregions)
		frr_warn("shm: context of rank %d closed with %d endpoints "
			 "and %zu regions still open (leaked)",
			 ctx->cfg.rank, c->neps, c->nregions);
	close(c->epfd);
	close(c->wake_fd);
	close(c->lfd);
	pthread_cond_destroy(&c->acceptq_cond);
	pthread_mutex_destroy(&c->lock);
	free(c->regions);
	free(c->eps);
	free(c->cq);
	free(c);
}

static int shm_addr_get(struct frr_tp_ctx *ctx, struct frr_tp_addr *addr)
{
	struct shm_ctx *c = shm_ctx_of(ctx);

	memset(addr, 0, sizeof(*addr));
	addr->backend = FRR_TP_BACKEND_SHM;
	addr->rank = ctx->cfg.rank;
	addr->job_token = ctx->cfg.job_token;
	snprintf(addr->str, sizeof(addr->str), "%s", c->addr);
	return 0;
}

static const char *shm_device_name(const struct frr_tp_ctx *ctx)
{
	(void)ctx;
	return "shm (memfd, same host)";
}

/* ---- regions ---------------------------------------------------------- */

static int grow(void **arr, size_t elem, size_t *cap, size_t need)
{
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static int shm_mr_alloc(struct frr_tp_ctx *ctx, size_t len, unsigned access,
			struct frr_tp_mr **out)
{
	struct shm_ctx *c = shm_ctx_of(ctx);
	size_t data_len = shm_page_round(len);
	struct shm_mr *m;
	char name[64];
	void *p;
	int ret;

	m = calloc(1, sizeof(*m));
	if (!m)
		return frr_tp_err(ctx, -ENOMEM, "shm: out of memory");
	m->fd = -1;
	if (access & FRR_TP_ACCESS_REMOTE_WRITE) {
		snprintf(name, sizeof(name), "flexrr-r%d-mr%u", ctx->cfg.rank,
			 ctx->next_region_id);
		m->map_len = data_len + shm_page_round(1);
		ret = memfd_map(name, m->map_len, &m->fd, &p);
	} else {
		m->map_len = data_len;
		p = mmap(NULL, data_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		ret = p == MAP_FAILED ? -errno : 0;
	}
	if (ret) {
		frr_tp_err(ctx, ret,
			   "shm: cannot allocate a %zu-byte region: %s (check "
			   "free memory and 'ulimit -v')",
			   len, strerror(-ret));
		goto free_mr;
	}
	m->base.ptr = p;
	m->base.len = len;
	m->base.access = access;
	m->base.region_id = ctx->next_region_id++;
	if (m->fd >= 0) {
		m->ctl = (struct shm_region_ctl *)((char *)p + data_len);
		m->ctl->region_id = m->base.region_id;
		atomic_store_explicit(&m->ctl->alive, 1, memory_order_release);
	}
	pthread_mutex_lock(&c->lock);
	ret = grow((void **)&c->regions, sizeof(*c->regions), &c->capregions,
		   c->nregions + 1);
	if (!ret)
		c->regions[c->nregions++] = m;
	pthread_mutex_unlock(&c->lock);
	if (ret) {
		frr_tp_err(ctx, ret, "shm: out of memory");
		goto unmap;
	}
	*out = &m->base;
	return 0;

unmap:
	munmap(p, m->map_len);
	if (m->fd >= 0)
		close(m->fd);
free_mr:
	free(m);
	return ret;
}

static void shm_mr_free(struct frr_tp_mr *mr)
{
	struct shm_ctx *c = shm_ctx_of(mr->ctx);
	struct shm_mr *m = shm_mr_of(mr);

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nregions; i++) {
		if (c->regions[i] == m) {
			c->regions[i] = c->regions[--c->nregions];
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	/* importers keep their own mapping: tell them it is dead */
	if (m->ctl)
		atomic_store_explicit(&m->ctl->alive, 0, memory_order_release);
	munmap(mr->ptr, m->map_len);
	if (m->fd >= 0)
		close(m->fd);
	free(m);
}

/* ---- endpoints -------------------------------------------------------- */

static struct shm_ep *ep_new(struct shm_ctx *c, int rank, const char *addr)
{
	struct shm_ep *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->fd = -1;
	e->base.ctx = &c->base;
	e->base.peer_rank = rank;
	snprintf(e->peer_addr, sizeof(e->peer_addr), "%s", addr);
	return e;
}

static void ep_unmap(struct shm_ep *e)
{
	if (e->in)
		munmap(e->in, ring_map_len());
	if (e->out)
		munmap(e->out, ring_map_len());
}

/* Publish a connected ep: watched for hang-up, scanned by poll_notify. */
static int ep_register(struct shm_ctx *c, struct shm_ep *e)
{
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	e->serial = c->next_ep_serial++;
	if (c->neps == c->capeps) {
		int ncap = c->capeps ? c->capeps * 2 : 8;
		struct shm_ep **p = realloc(c->eps, ncap * sizeof(*p));

		if (!p) {
			ret = -ENOMEM;
			goto unlock;
		}
		c->eps = p;
		c->capeps = ncap;
	}
	ret = epoll_add(c->epfd, e->fd, EPOLLRDHUP, e->serial);
	if (ret)
		goto unlock;
	c->eps[c->neps++] = e;
unlock:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* Make my inbound ring; its fd goes to the peer, which produces into it. */
static int ring_create(struct shm_ctx *c, struct shm_ep *e, int *fd)
{
	char name[64];
	void *p;
	int ret;

	snprintf(name, sizeof(name), "flexrr-r%d-ring", c->base.cfg.rank);
	ret = memfd_map(name, ring_map_len(), fd, &p);
	if (ret)
		return ret;
	e->in = p;
	return 0;
}

static int shm_ep_connect(struct frr_tp_ctx *ctx,
			  const struct frr_tp_addr *peer, int timeout_ms,
			  struct frr_tp_ep **out)
{
	struct shm_ctx *c = shm_ctx_of(ctx);
	long long deadline = frr_now_ms() + timeout_ms;
	struct shm_msg m;
	struct shm_ep *e;
	int ring_fd = -1, peer_ring = -1, ret;
	void *p;

	e = ep_new(c, peer->rank, peer->str);
	if (!e)
		return frr_tp_err(ctx, -ENOMEM, "shm: out of memory");
	ret = ring_create(c, e, &ring_fd);
	if (ret) {
		frr_tp_err(ctx, ret,
			   "shm: cannot create a notification "
			   "ring: %s",
			   strerror(-ret));
		goto free_ep;
	}
	e->fd = dial(peer->str, timeout_ms);
	if (e->fd < 0) {
		ret = e->fd;
		frr_tp_err(ctx, ret,
			   "shm: cannot connect to rank %d at %s: %s (has it "
			   "exited, or is it on another host? shm is "
			   "same-host only)",
			   peer->rank, peer->str, strerror(-ret));
		goto free_ring;
	}
	msg_init(&m, c, SHM_HELLO);
	ret = msg_send(e->fd, &m, ring_fd);
	if (!ret)
		ret = msg_recv(e->fd, &m, &peer_ring,
			       (int)(deadline - frr_now_ms() > 0
					 ? deadline - frr_now_ms()
					 : 1));
	if (ret) {
		frr_tp_err(ctx, ret,
			   "shm: rank %d did not accept the connection: %s%s",
			   peer->rank, strerror(-ret),
			   ret == -ETIMEDOUT ? " (is it calling "
					       "frr_tp_ep_accept?)"
					     : "");
		goto close_fd;
	}
	if (m.type != SHM_WELCOME || m.rank != peer->rank || peer_ring < 0) {
		ret = m.type == SHM_REJECT ? m.err : -EPROTO;
		frr_tp_err(ctx, ret, "shm: rank %d refused the connection: %s",
			   peer->rank,
			   m.type == SHM_REJECT ? m.why : "protocol error");
		goto close_fd;
	}
	ret = map_peer_fd(peer_ring, ring_map_len(), &p);
	if (ret) {
		frr_tp_err(ctx, ret, "shm: cannot map rank %d's ring: %s",
			   peer->rank, strerror(-ret));
		goto close_fd;
	}
	e->out = p;
	ret = ep_register(c, e);
	if (ret) {
		frr_tp_err(ctx, ret, "shm: cannot register endpoint: %s",
			   strerror(-ret));
		goto close_fd;
	}
	close(peer_ring);
	close(ring_fd);
	*out = &e->base;
	return 0;

close_fd:
	if (peer_ring >= 0)
		close(peer_ring);
	close(e->fd);
free_ring:
	close(ring_fd);
free_ep:
	ep_unmap(e);
	free(e);
	return ret;
}

static int take_pending(struct shm_ctx *c, int timeout_ms,
			struct shm_pending *out)
{
	struct timespec ts = frr_deadline_ts(timeout_ms);
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	while (!c->acceptq_n && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&c->acceptq_cond, &c->lock, &ts);
	if (c->acceptq_n) {
		*out = c->acceptq[0];
		memmove(&c->acceptq[0], &c->acceptq[1],
			--c->acceptq_n * sizeof(c->acceptq[0]));
		ret = 0;
	} else {
		ret = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static int shm_ep_accept(struct frr_tp_ctx *ctx, int timeout_ms,
			 struct frr_tp_ep **out)
{
	struct shm_ctx *c = shm_ctx_of(ctx);
	struct shm_pending p;
	struct shm_msg m;
	struct shm_ep *e;
	int ring_fd = -1, ret;
	void *map;

	ret = take_pending(c, timeout_ms, &p);
	if (ret)
		return frr_tp_err(ctx, ret,
				  "shm: rank %d: no peer connected within %d "
				  "ms (did the peers start and get this "
				  "rank's address?)",
				  ctx->cfg.rank, timeout_ms);
	e = ep_new(c, p.rank, p.addr);
	if (!e) {
		ret = frr_tp_err(ctx, -ENOMEM, "shm: out of memory");
		goto close_pending;
	}
	e->fd = p.fd;
	ret = map_peer_fd(p.ring_fd, ring_map_len(), &map);
	if (ret) {
		frr_tp_err(ctx, ret, "shm: cannot map rank %d's ring: %s",
			   p.rank, strerror(-ret));
		goto free_ep;
	}
	e->out = map;
	ret = ring_create(c, e, &ring_fd);
	if (ret) {
		frr_tp_err(ctx, ret, "shm: cannot create a ring: %s",
			   strerror(-ret));
		goto free_ep;
	}
	msg_init(&m, c, SHM_WELCOME);
	ret = msg_send(e->fd, &m, ring_fd);
	close(ring_fd);
	if (ret) {
		frr_tp_err(ctx, -ECONNRESET,
			   "shm: rank %d hung up while connecting: %s", p.rank,
			   strerror(-ret));
		ret = -ECONNRESET;
		goto free_ep;
	}
	ret = ep_register(c, e);
	if (ret) {
		frr_tp_err(ctx, ret, "shm: cannot register endpoint: %s",
			   strerror(-ret));
		goto free_ep;
	}
	close(p.ring_fd);
	*out = &e->base;
	return 0;

free_ep:
	if (e) {
		ep_unmap(e);
		free(e);
	}
close_pending:
	close(p.fd);
	close(p.ring_fd);
	return ret;
}

static void shm_ep_close(struct frr_tp_ep *ep)
{
	struct shm_ctx *c = shm_ctx_of(ep->ctx);
	struct shm_ep *e = shm_ep_of(ep);

	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < c->neps; i++) {
		if (c->eps[i] == e) {
			c->eps[i] = c->eps[--c->neps];
			break;
		}
	}
	epoll_ctl(c->epfd, EPOLL_CTL_DEL, e->fd, NULL);
	pthread_mutex_unlock(&c->lock);
	close(e->fd);
	ep_unmap(e);
	free(e);
}

static int shm_ep_alive(struct frr_tp_ep *ep)
{
	struct shm_ep *e = shm_ep_of(ep);
	struct pollfd pfd = { .fd = e->fd, .events = POLLRDHUP };

	if (atomic_load_explicit(&e->gone, memory_order_relaxed))
		return 0;
	/* do not wait for the service thread: ask the socket now */
	if (poll(&pfd, 1, 0) > 0 &&
	    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
		atomic_store_explicit(&e->gone, 1, memory_order_relaxed);
		return 0;
	}
	return 1;
}

/* ---- remote regions --------------------------------------------------- */

static int shm_rmr_import(struct frr_tp_ep *ep, const struct frr_tp_desc *desc,
			  struct frr_tp_rmr **out)
{
	struct shm_ctx *c = shm_ctx_of(ep->ctx);
	struct shm_ep *e = shm_ep_of(ep);
	size_t data_len = shm_page_round(desc->len);
	struct shm_rmr *r;
	struct shm_msg m;
	int fd, rfd = -1, ret;
	void *p;

	if (atomic_load_explicit(&e->gone, memory_order_relaxed))
		return frr_tp_err(ep->ctx, -ENOTCONN,
				  "shm: cannot import from rank %d: it has "
				  "closed the endpoint or exited",
				  ep->peer_rank);
	r = calloc(1, sizeof(*r));
	if (!r)
		return frr_tp_err(ep->ctx, -ENOMEM, "shm: out of memory");
	fd = dial(e->peer_addr, ep->ctx->cfg.timeout_ms);
	if (fd < 0) {
		ret = fd;
		frr_tp_err(ep->ctx, ret,
			   "shm: cannot reach rank %d to import region %u: %s",
			   ep->peer_rank, desc->region_id, strerror(-ret));
		goto free_rmr;
	}
	msg_init(&m, c, SHM_IMPORT);
	m.region_id = desc->region_id;
	ret = msg_send(fd, &m, -1);
	if (!ret)
		ret = msg_recv(fd, &m, &rfd, ep->ctx->cfg.timeout_ms);
	close(fd);
	if (ret) {
		frr_tp_err(ep->ctx, ret,
			   "shm: rank %d did not answer the import of region "
			   "%u: %s",
			   ep->peer_rank, desc->region_id, strerror(-ret));
		goto free_rmr;
	}
	if (m.type != SHM_IMPORT_OK || rfd < 0) {
		ret = m.type == SHM_IMPORT_ERR && m.err < 0 ? m.err : -EPROTO;
		frr_tp_err(ep->ctx, ret, "shm: import of region %u refused: %s",
			   desc->region_id,
			   m.type == SHM_IMPORT_ERR ? m.why : "protocol error");
		goto close_rfd;
	}
	if (m.len != desc->len) {
		ret = frr_tp_err(ep->ctx, -EINVAL,
				 "shm: descriptor says region %u has %llu "
				 "bytes but rank %d registered %llu; the "
				 "descriptor is forged or stale",
				 desc->region_id, (unsigned long long)desc->len,
				 ep->peer_rank, (unsigned long long)m.len);
		goto close_rfd;
	}
	r->map_len = data_len + shm_page_round(1);
	ret = map_peer_fd(rfd, r->map_len, &p);
	if (ret) {
		frr_tp_err(ep->ctx, ret,
			   "shm: cannot map region %u of rank %d (%llu bytes): "
			   "%s",
			   desc->region_id, ep->peer_rank,
			   (unsigned long long)desc->len, strerror(-ret));
		goto close_rfd;
	}
	close(rfd);
	r->data = p;
	r->ctl = (struct shm_region_ctl *)((char *)p + data_len);
	*out = &r->base;
	return 0;

close_rfd:
	if (rfd >= 0)
		close(rfd);
free_rmr:
	free(r);
	return ret;
}

static void shm_rmr_release(struct frr_tp_rmr *rmr)
{
	struct shm_rmr *r = shm_rmr_of(rmr);

	munmap(r->data, r->map_len);
	free(r);
}

const struct frr_tp_ops frr_tp_shm_ops = {
	.size = sizeof(struct frr_tp_ops),
	.name = "shm",
	.open = shm_open_ctx,
	.close = shm_close_ctx,
	.addr_get = shm_addr_get,
	.device_name = shm_device_name,
	.mr_alloc = shm_mr_alloc,
	.mr_free = shm_mr_free,
	.ep_connect = shm_ep_connect,
	.ep_accept = shm_ep_accept,
	.ep_close = shm_ep_close,
	.ep_alive = shm_ep_alive,
	.rmr_import = shm_rmr_import,
	.rmr_release = shm_rmr_release,
	.write = shm_write,
	.write_u64 = shm_write_u64,
	.write_notify = shm_write_notify,
	.poll = shm_poll,
	.poll_notify = shm_poll_notify,
	.flush = shm_flush,
};
