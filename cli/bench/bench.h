/* SPDX-License-Identifier: MIT */
/*
 * flexrr bench internals.  The measuring code (bench_run.c) only sees a
 * struct frr_oob for set-up exchanges, so it runs the same whether the two
 * ranks were forked locally (frr_launch_local) or met over the TCP
 * rendezvous (frr_tcp_open, then bench_handshake), like UCX's libperf is
 * separate from how its peers start.
 */
#ifndef FLEXRR_BENCH_H
#define FLEXRR_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "flexrr/bootstrap.h"
#include "flexrr/transport.h"

enum bench_test {
	BENCH_WRITE_LAT,
	BENCH_WRITE_BW,
	BENCH_COUNTER_LAT,
};

struct bench_params {
	enum bench_test test;
	enum frr_tp_backend backend;
	int all;	  /* -a: sweep 2 B .. 8 MiB */
	size_t size;	  /* -s */
	long iters;	  /* -n; 0 = test default */
	size_t span;	  /* --span: write_bw's writes rotate over this many
			   * bytes (0: all at offset 0, as perftest) */
	const char *json; /* --json FILE */
	const char *device;
	int gid_index;
	int port;	  /* TCP side channel */
	int cpu;	  /* -1: no pinning (local mode pins rank r to CPU r) */
	int local;	  /* both ranks forked here */
	int server;	  /* --server: no local fork even for shm */
	const char *peer; /* client: server address */
};

const char *bench_test_name(enum bench_test t);

/* Run the benchmark as rank oob->rank of 2; rank 1 prints the table. */
int bench_run(struct frr_oob *oob, const struct bench_params *p);

/* Two-rank oob over the TCP rendezvous: server = rank 0 (peer NULL),
 * client = rank 1.  The server makes the job token, both check they run the
 * same test and the server takes the client's sizes and iterations
 * (updates p). */
int bench_oob_tcp(struct bench_params *p, struct frr_oob **oob);

#endif /* FLEXRR_BENCH_H */
