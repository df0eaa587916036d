// SPDX-License-Identifier: MIT
/*
 * The benchmark's side channel: the bootstrap layer's TCP rendezvous between
 * server (rank 0) and client (rank 1), used only at set-up and between
 * sizes, never while measuring.  Like perftest: no address = server,
 * address = client.  Then one exchange of what each side is about to run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "flexrr/base.h"

#define HELLO_MAGIC 0x46524242u /* "FRBB" */
#define ACCEPT_MS 120000
#define DIAL_MS 10000
#define HELLO_MS 30000

struct hello {
	uint32_t magic;
	uint32_t test;
	uint32_t backend;
	uint32_t all;
	uint64_t size; /* client -> server: the client's run rules */
	int64_t iters;
	uint64_t span;
};

/* Both sides run the same test on the same backend; the server takes the
 * client's sizes and iterations. */
static int handshake(struct frr_oob *oob, struct bench_params *p)
{
	struct hello mine = { .magic = HELLO_MAGIC,
			      .test = p->test,
			      .backend = p->backend,
			      .all = (uint32_t)p->all,
			      .size = p->size,
			      .iters = p->iters,
			      .span = p->span },
		     both[2];
	const struct hello *theirs = &both[1 - oob->rank];
	int ret = frr_oob_allgather(oob, &mine, sizeof(mine), both, HELLO_MS);

	if (ret) {
		frr_err("bench: side-channel handshake failed: %s",
			strerror(-ret));
		return ret;
	}
	if (theirs->magic != HELLO_MAGIC || theirs->test != mine.test ||
	    theirs->backend != mine.backend) {
		frr_err(
		    "bench: the other side runs %s on backend %s, this side "
		    "%s on %s; start both with the same test and --backend",
		    theirs->magic == HELLO_MAGIC ? bench_test_name(theirs->test)
						 : "something else",
		    frr_tp_backend_name(theirs->backend),
		    bench_test_name(mine.test),
		    frr_tp_backend_name(mine.backend));
		return -EPROTO;
	}
	if (oob->rank == 0 &&
	    (theirs->size != p->size || theirs->all != (uint32_t)p->all ||
	     theirs->iters != p->iters || theirs->span != p->span)) {
		if (!theirs->size || theirs->size > ((uint64_t)1 << 30) ||
		    theirs->span > ((uint64_t)1 << 32))
			return -EPROTO;
		fprintf(stderr, "flexrr bench: using the client's sizes and "
				"iterations\n");
		p->size = (size_t)theirs->size;
		p->all = (int)theirs->all;
		p->iters = (long)theirs->iters;
		p->span = (size_t)theirs->span;
	}
	return 0;
}

int bench_oob_tcp(struct bench_params *p, struct frr_oob **out)
{
	char addr[300];
	/* no job token: the server hands one out (perftest-style pairing) */
	struct frr_tcp_cfg cfg = { .addr = addr,
				   .listen_fd = -1,
				   .rank = p->peer ? 1 : 0,
				   .size = 2,
				   .timeout_ms = p->peer ? DIAL_MS : ACCEPT_MS,
				   .addr_hint = "SERVER and -p PORT" };
	struct frr_oob *oob = NULL;
	int ret;

	if (p->peer && strchr(p->peer, ':'))
		snprintf(addr, sizeof(addr), "[%s]:%d", p->peer, p->port);
	else
		snprintf(addr, sizeof(addr), "%s:%d", p->peer ? p->peer : "*",
			 p->port);
	if (!p->peer)
		fprintf(stderr,
			"flexrr bench: waiting for the client on port %d\n",
			p->port);
	ret = frr_tcp_open(&cfg, &oob);
	if (ret)
		return ret;
	ret = handshake(oob, p);
	if (ret) {
		frr_oob_close(oob);
		return ret;
	}
	*out = oob;
	return 0;
}
