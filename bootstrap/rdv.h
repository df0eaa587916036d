/* SPDX-License-Identifier: MIT */
/*
 * TCP rendezvous internals (tcp.c: the joining side, the channel; rdv_serve.c:
 * rank 0's server; rdv_wire.c: the messages).  Private to bootstrap/ (and
 * the fuzz target of the parser).
 *
 * Handshake, every message one struct rdv_msg (host byte order: every rank
 * of a job runs the same build):
 *   joiner -> rank 0   HELLO      rank, size, binary and argument hashes,
 *                                 nonce_j
 *   rank 0 -> joiner   CHALLENGE  nonce_0, MAC("rdv rank0", nonce_j,
 *                                 nonce_0, rank, size): rank 0 knows the
 *                                 secret
 *   joiner -> rank 0   PROOF      MAC("rdv joiner", nonce_j, nonce_0, rank,
 *                                 size, hashes): so does the joiner
 *   rank 0 -> joiner   VERDICT    status: OK, or why this connection is
 *                                 refused (the job goes on waiting)
 * The secret never travels; a MAC is good for one connection only (both
 * nonces are fresh).
 *
 * Collectives (tcp.c), over the joiners' connections: each joiner sends
 * its share; rank 0 answers each with a word (struct rdv_word: -1, or the
 * rank whose share did not come and why) and then, when every share came,
 * the whole result.
 */
#ifndef FLEXRR_BOOTSTRAP_RDV_H
#define FLEXRR_BOOTSTRAP_RDV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "flexrr/bootstrap.h"

#define RDV_MAGIC 0x46525256u /* "FRRV" */
#define RDV_VERSION 4	      /* 4: a word before each collective's result */
#define RDV_HDR_LEN 12	      /* magic, version, type, len: enough to judge */

enum rdv_type {
	RDV_HELLO = 1,
	RDV_CHALLENGE = 2,
	RDV_PROOF = 3,
	RDV_VERDICT = 4,
};

enum rdv_status {
	RDV_OK = 0,
	RDV_BAD_SECRET = 1,
	RDV_BAD_BINARY = 2,
	RDV_BAD_ARGS = 3,
	RDV_BAD_SIZE = 4,
	RDV_BAD_RANK = 5,
	RDV_NSTATUS
};

struct rdv_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len; /* sizeof(struct rdv_msg) */
	int32_t status;
	int32_t rank; /* the joiner's, in every message */
	int32_t size;
	uint64_t binhash;
	uint64_t argshash;
	unsigned char nonce[FRR_AUTH_NONCE_LEN];
	unsigned char mac[FRR_AUTH_MAC_LEN];
};

/* What a header says about the message behind it. */
enum rdv_verdict {
	RDV_MSG_OK = 0,
	RDV_MSG_GARBAGE,   /* not a flexrr rendezvous message */
	RDV_MSG_VERSION,   /* another flexrr protocol version */
	RDV_MSG_OVERSIZED, /* longer than any message */
	RDV_MSG_SHORT,	   /* shorter than the message */
	RDV_MSG_TYPE,	   /* not the type expected here */
};

extern const char *const rdv_status_str[RDV_NSTATUS];
extern const char *const rdv_verdict_str[];

/* Judge the first RDV_HDR_LEN bytes of a message (n >= RDV_HDR_LEN). */
enum rdv_verdict rdv_check_hdr(const void *buf, size_t n);
/* Judge a whole message of n bytes and, when it is one of type 'type',
 * copy it to *out (the only copy used afterwards). */
enum rdv_verdict rdv_parse(const void *buf, size_t n, uint16_t type,
			   struct rdv_msg *out);
void rdv_msg_init(struct rdv_msg *m, uint16_t type);

/* Rank 0's MAC (the CHALLENGE's) and the joiner's (the PROOF's) over the
 * hello h and rank 0's nonce n0, into mac. */
void rdv_mac_rank0(const struct frr_job_secret *s, const struct rdv_msg *h,
		   const unsigned char n0[FRR_AUTH_NONCE_LEN],
		   unsigned char mac[FRR_AUTH_MAC_LEN]);
void rdv_mac_joiner(const struct frr_job_secret *s, const struct rdv_msg *h,
		    const unsigned char n0[FRR_AUTH_NONCE_LEN],
		    unsigned char mac[FRR_AUTH_MAC_LEN]);
int rdv_mac_ok(const unsigned char a[FRR_AUTH_MAC_LEN],
	       const unsigned char b[FRR_AUTH_MAC_LEN]);

/* The key of a cfg: its secret, or the well-known pairing key (NULL). */
const struct frr_job_secret *rdv_key(const struct frr_tcp_cfg *cfg);

/* ---- shared with tcp.c ---- */
struct rdv {
	struct frr_oob oob;
	int *fds; /* rank 0: fds[r] to rank r; others: fds[0] */
};

struct rdv_addr {
	struct sockaddr_storage sa;
	socklen_t len;
};

/* HOST:PORT, [V6]:PORT or *:PORT (listen on every IPv4 interface).  An
 * IPv4 address of HOST is preferred when it has both kinds.  0 or
 * -EINVAL (logged, naming the address as what: "rendezvous address"). */
int rdv_parse_addr(const char *what, const char *addr, int passive,
		   struct rdv_addr *out);
/* host:port (port a number) as rdv_parse_addr takes it, passive: every
 * IPv4 interface; 0 or -EADDRNOTAVAIL, not logged (the caller says what
 * the name was). */
int rdv_resolve(const char *host, const char *port, int passive,
		struct rdv_addr *out);
int rdv_left_ms(double deadline);
/* A TCP connection to a within ms (a connect that does not block past
 * them: a host that is down answers nothing), blocking, TCP_NODELAY: the
 * fd, or a negative errno (-ETIMEDOUT: no answer; -ECONNREFUSED: nobody
 * listens there). */
int rdv_dial(const struct rdv_addr *a, int ms);
/* Full read/write with a deadline. */
int rdv_io_full(int fd, void *buf, size_t len, int wr, double deadline);
const char *rdv_hint(const struct frr_tcp_cfg *cfg);
/* cfg->timeout_hint, or the default. */
const char *rdv_timeout_hint(const struct frr_tcp_cfg *cfg);

/* Rank 0: serve lfd until every other rank joined (authenticated, same
 * build, arguments and size) or the deadline passed. */
int rdv_serve(struct rdv *r, const struct frr_tcp_cfg *cfg, int lfd,
	      double deadline);

#endif /* FLEXRR_BOOTSTRAP_RDV_H */
