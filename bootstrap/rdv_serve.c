// SPDX-License-Identifier: MIT
/*
 * Rank 0's rendezvous server: every pending connection is served at once
 * with poll(), each with its own deadline and a fixed message size, so no
 * connection (idle, slow, garbage, oversized, another job's, a wrong build)
 * can keep the job's own ranks out.  Each one dropped is logged as what it
 * was; only authenticated ranks of this job, with the same build, arguments
 * and size, join.  When the table of pending connections is full the oldest
 * is dropped: a flood of more than RDV_MAX_CONNS connections within one
 * connection deadline can still knock out a joiner (which then fails,
 * saying so); fewer cannot keep anyone out.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "rdv.h"

#define RDV_MAX_CONNS 256
#define RDV_CONN_S 5.0 /* a joiner answers in far less */

enum conn_state { C_HELLO, C_PROOF };

struct conn {
	int fd;
	enum conn_state st;
	double deadline;
	size_t got;
	unsigned char buf[sizeof(struct rdv_msg)];
	struct rdv_msg hello; /* the validated copy */
	unsigned char nonce0[FRR_AUTH_NONCE_LEN];
	char name[64];
};

struct server {
	struct rdv *r;
	const struct frr_tcp_cfg *cfg;
	struct conn c[RDV_MAX_CONNS];
	int n;
	int refused;
	char last[240]; /* the last refusal (why + " from " + name) */
};

static void drop(struct server *s, int i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Close connection i (logging why) and forget it. */
static void drop(struct server *s, int i, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	frr_warn("rendezvous: dropped a connection from %s: %s", s->c[i].name,
		 why);
	snprintf(s->last, sizeof(s->last), "%s from %s", why, s->c[i].name);
	s->refused++;
	close(s->c[i].fd);
	s->c[i] = s->c[--s->n];
}

static int send_msg(int fd, const struct rdv_msg *m)
{
	ssize_t n = send(fd, m, sizeof(*m), MSG_NOSIGNAL | MSG_DONTWAIT);

	return n == (ssize_t)sizeof(*m) ? 0 : -EIO;
}

static void accept_one(struct server *s, int lfd)
{
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	struct conn *c;
	int fd, oldest = 0;

	fd = accept4(lfd, (struct sockaddr *)&peer, &pl,
		     SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (s->n == RDV_MAX_CONNS) {
		for (int i = 1; i < s->n; i++)
			if (s->c[i].deadline < s->c[oldest].deadline)
				oldest = i;
		drop(s, oldest, "%d connections pending: the oldest goes",
		     RDV_MAX_CONNS);
	}
	c = &s->c[s->n++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->st = C_HELLO;
	c->deadline = frr_now_s() + RDV_CONN_S;
	if (getnameinfo((struct sockaddr *)&peer, pl, c->name, sizeof(c->name),
			NULL, 0, NI_NUMERICHOST))
		snprintf(c->name, sizeof(c->name), "?");
}

/* A hello arrived: answer with rank 0's nonce and proof. */
static void on_hello(struct server *s, int i, const struct rdv_msg *h)
{
	struct conn *c = &s->c[i];
	struct rdv_msg m;

	c->hello = *h;
	if (frr_auth_nonce(c->nonce0)) {
		drop(s, i, "no random nonce");
		return;
	}
	rdv_msg_init(&m, RDV_CHALLENGE);
	m.rank = h->rank;
	memcpy(m.nonce, c->nonce0, sizeof(m.nonce));
	rdv_mac_rank0(rdv_key(s->cfg), h, c->nonce0, m.mac);
	if (send_msg(c->fd, &m)) {
		drop(s, i, "hung up after its hello");
		return;
	}
	c->st = C_PROOF;
	c->got = 0;
}

/* Rank 0's verdict on an authenticated joiner. */
static enum rdv_status judge(const struct server *s, const struct rdv_msg *h)
{
	const struct rdv *r = s->r;

	if (h->size != r->oob.size)
		return RDV_BAD_SIZE;
	if (h->rank <= 0 || h->rank >= r->oob.size || r->fds[h->rank] >= 0)
		return RDV_BAD_RANK;
	if (h->binhash != s->cfg->binary_hash)
		return RDV_BAD_BINARY;
	if (h->argshash != s->cfg->args_hash)
		return RDV_BAD_ARGS;
	return RDV_OK;
}

/* The proof arrived: 1 = a rank joined, 0 = refused (dropped). */
static int on_proof(struct server *s, int i, const struct rdv_msg *p)
{
	struct conn *c = &s->c[i];
	unsigned char want[FRR_AUTH_MAC_LEN];
	struct rdv_msg v;
	int one = 1, rank = c->hello.rank;

	rdv_msg_init(&v, RDV_VERDICT);
	v.rank = rank;
	rdv_mac_joiner(rdv_key(s->cfg), &c->hello, c->nonce0, want);
	v.status =
	    rdv_mac_ok(want, p->mac) ? judge(s, &c->hello) : RDV_BAD_SECRET;
	(void)send_msg(c->fd, &v);
	if (v.status == RDV_BAD_SECRET) {
		drop(s, i, "wrong job secret (claimed rank %d)", rank);
		return 0;
	}
	if (v.status != RDV_OK) {
		frr_err("rendezvous: refused rank %d (from %s): it runs %s; "
			"start every rank with the same flexrr build, options "
			"and -n",
			rank, c->name, rdv_status_str[v.status]);
		drop(s, i, "rank %d runs %s", rank, rdv_status_str[v.status]);
		return 0;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	s->r->fds[rank] = c->fd;
	s->c[i] = s->c[--s->n];
	return 1;
}

/* Read what connection i has; 1 = a rank joined, 0 = not (yet), -1 =
 * dropped. */
static int on_readable(struct server *s, int i)
{
	struct conn *c = &s->c[i];
	size_t want = c->got < RDV_HDR_LEN ? RDV_HDR_LEN : sizeof(c->buf);
	struct rdv_msg m;
	enum rdv_verdict v;
	ssize_t n = recv(c->fd, c->buf + c->got, want - c->got, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		drop(s, i, "closed %s",
		     c->got || c->st == C_PROOF ? "mid-handshake"
						: "without a word");
		return -1;
	}
	c->got += (size_t)n;
	if (c->got == RDV_HDR_LEN) {
		v = rdv_check_hdr(c->buf, c->got);
		if (v != RDV_MSG_OK) {
			drop(s, i, "%s", rdv_verdict_str[v]);
			return -1;
		}
	}
	if (c->got < sizeof(c->buf))
		return 0;
	v = rdv_parse(c->buf, c->got, c->st == C_HELLO ? RDV_HELLO : RDV_PROOF,
		      &m);
	if (v != RDV_MSG_OK) {
		drop(s, i, "%s", rdv_verdict_str[v]);
		return -1;
	}
	if (c->st == C_HELLO) {
		on_hello(s, i, &m);
		return 0;
	}
	return on_proof(s, i, &m) ? 1 : -1;
}

/* Drop connections past their deadline; the earliest deadline left. */
static double expire(struct server *s, double job_deadline)
{
	double now = frr_now_s(), next = job_deadline;

	for (int i = 0; i < s->n;) {
		if (s->c[i].deadline <= now) {
			drop(s, i, "%s for %.0f s",
			     s->c[i].st == C_HELLO && !s->c[i].got ? "idle"
								   : "too slow",
			     RDV_CONN_S);
			continue;
		}
		if (s->c[i].deadline < next)
			next = s->c[i].deadline;
		i++;
	}
	return next;
}

static int serve_loop(struct server *s, int lfd, double dl, int *need)
{
	struct pollfd pfd[RDV_MAX_CONNS + 1];

	while (*need > 0 && frr_now_s() < dl) {
		int ms = rdv_left_ms(expire(s, dl)), pr, n = s->n;

		if (s->cfg->abandon) {
			int k = 1;

			while (k < s->r->oob.size && s->r->fds[k] >= 0)
				k++;
			if (s->cfg->abandon(s->cfg->abandon_arg, k))
				return -ECANCELED;
			ms = ms > 100 ? 100 : ms;
		}

		pfd[0] = (struct pollfd){ lfd, POLLIN, 0 };
		for (int i = 0; i < n; i++)
			pfd[i + 1] = (struct pollfd){ s->c[i].fd, POLLIN, 0 };
		pr = poll(pfd, (nfds_t)n + 1, ms);
		if (pr < 0 && errno != EINTR)
			return -errno;
		if (pr <= 0)
			continue;
		/* backwards: dropping i moves the last one into its place */
		for (int i = n - 1; i >= 0; i--) {
			if (!pfd[i + 1].revents)
				continue;
			if (on_readable(s, i) == 1)
				(*need)--;
		}
		if (pfd[0].revents & POLLIN)
			accept_one(s, lfd);
	}
	return 0;
}

int rdv_serve(struct rdv *r, const struct frr_tcp_cfg *cfg, int lfd, double dl)
{
	struct server *s = calloc(1, sizeof(*s));
	int need = r->oob.size - 1, err;

	if (!s)
		return -ENOMEM;
	s->r = r;
	s->cfg = cfg;
	err = serve_loop(s, lfd, dl, &need);
	if (!err && need > 0) {
		frr_err("rendezvous: %d of %d ranks did not join rank 0 in "
			"time; check that every rank was started with the same "
			"address (%s), job secret, build and options%s%s%s, or "
			"%s if they start slowly",
			need, r->oob.size - 1, rdv_hint(cfg),
			s->refused ? " (refused connections, last: " : "",
			s->refused ? s->last : "", s->refused ? ")" : "",
			rdv_timeout_hint(cfg));
		err = -ETIMEDOUT;
	}
	for (int i = 0; i < s->n; i++)
		close(s->c[i].fd);
	free(s);
	return err;
}
