// SPDX-License-Identifier: MIT
/*
 * flexrr bench write_lat|write_bw|counter_lat [options] [SERVER]
 * perftest-style: no address = server, an address = client; with
 * --backend shm and no address, both ranks are forked here.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "commands.h"
#include "flexrr/log.h"

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: flexrr bench TEST [options] [SERVER]\n"
	       "\n"
	       "Transport microbenchmarks in perftest's format.\n"
	       "TEST:\n"
	       "  write_lat    one-way latency of SIZE-byte writes (ping-pong, "
	       "RTT/2)\n"
	       "  write_bw     bandwidth and message rate of SIZE-byte writes\n"
	       "  counter_lat  one-way latency of 8-byte counter writes\n"
	       "\n"
	       "Start the server first (no SERVER), then the client with the "
	       "server's\nhost name; both with the same TEST and --backend. "
	       "With --backend shm and\nno SERVER, both sides run here (two "
	       "processes pinned to CPUs 0 and 1;\n--server to run only the "
	       "server side).\n"
	       "\n"
	       "options:\n"
	       "  -a, --all            sweep sizes 2 B .. 8 MiB\n"
	       "  -s, --size SIZE      message size in bytes (default 2; "
	       "write_bw 65536;\n"
	       "                       K/M suffixes ok)\n"
	       "  -n, --iters N        iterations per size (default 1000; "
	       "write_bw 5000,\n"
	       "                       1000 from 1 MiB)\n"
	       "      --json FILE      also write the results as JSON\n"
	       "      --backend B      shm | verbs | auto (default auto)\n"
	       "  -d, --ib-dev DEV     verbs device, e.g. rxe0 (default: "
	       "env FLEXRR_DEVICE\n"
	       "                       or the first active one)\n"
	       "  -x, --gid-index N    verbs GID index (default: auto RoCE "
	       "v2)\n"
	       "  -p, --port PORT      TCP side-channel port (default 18515)\n"
	       "  -c, --cpu N          pin this process to CPU N\n"
	       "      --server         be the server even with --backend shm\n"
	       "  -h, --help           this text\n"
	       "\n"
	       "examples:\n"
	       "  flexrr bench counter_lat --backend shm\n"
	       "  flexrr bench write_bw -s 1M --backend shm\n"
	       "  flexrr bench write_lat -a --backend verbs -d rxe0      "
	       "# server\n"
	       "  flexrr bench write_lat -a --backend verbs -d rxe0 HOST "
	       "# client\n");
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		v <<= 30, end++;
	if (*end || v == 0)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

static int parse_test(const char *s, enum bench_test *t)
{
	static const enum bench_test all[] = { BENCH_WRITE_LAT, BENCH_WRITE_BW,
					       BENCH_COUNTER_LAT };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!strcmp(s, bench_test_name(all[i]))) {
			*t = all[i];
			return 0;
		}
	}
	return -EINVAL;
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr,
		"flexrr bench: invalid %s '%s'; see 'flexrr bench "
		"--help'\n",
		what, arg);
	return 2;
}

enum { OPT_JSON = 256, OPT_BACKEND, OPT_SERVER };

/* What the options mean together; the rest of argv is the server. */
static int check(int argc, char **argv, struct bench_params *p, int size_set)
{
	if (!size_set)
		p->size = p->test == BENCH_WRITE_BW ? 65536 : 2;
	if (p->test == BENCH_COUNTER_LAT && size_set && p->size != 8) {
		fprintf(stderr, "flexrr bench: counter_lat writes 8-byte "
				"counters; use -s 8 or leave -s out\n");
		return 2;
	}
	if (p->test == BENCH_COUNTER_LAT)
		p->size = 8;
	if (p->size > ((size_t)1 << 30))
		return bad("size (at most 1 GiB)", argv[optind - 1]);
	if (optind < argc)
		p->peer = argv[optind++];
	if (optind < argc)
		return bad("extra argument", argv[optind]);
	return 0;
}

static int parse(int argc, char **argv, struct bench_params *p)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'x' },
		{ "port", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "server", no_argument, NULL, OPT_SERVER },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, size_set = 0;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "as:n:d:x:p:c:h", opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'a':
			p->all = 1;
			break;
		case 's':
			if (parse_size(optarg, &p->size))
				return bad("size", optarg);
			size_set = 1;
			break;
		case 'n':
			p->iters = strtol(optarg, &end, 10);
			if (*end || p->iters < 1 || p->iters > 100000000)
				return bad("iteration count", optarg);
			break;
		case OPT_JSON:
			p->json = optarg;
			break;
		case OPT_BACKEND:
			if (frr_tp_backend_parse(optarg, &p->backend))
				return bad("backend (shm, verbs, auto)",
					   optarg);
			break;
		case 'd':
			p->device = optarg;
			break;
		case 'x':
			p->gid_index = (int)strtol(optarg, &end, 10);
			if (*end || p->gid_index < 0)
				return bad("GID index", optarg);
			break;
		case 'p':
			p->port = (int)strtol(optarg, &end, 10);
			if (*end || p->port < 1 || p->port > 65535)
				return bad("port", optarg);
			break;
		case 'c':
			p->cpu = (int)strtol(optarg, &end, 10);
			if (*end || p->cpu < 0)
				return bad("CPU", optarg);
			break;
		case OPT_SERVER:
			p->server = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	return check(argc, argv, p, size_set);
}

static int local_rank(struct frr_oob *oob, void *arg)
{
	return bench_run(oob, arg);
}

int frr_cmd_bench(int argc, char **argv)
{
	struct bench_params p = { .backend = FRR_TP_BACKEND_AUTO,
				  .gid_index = -1,
				  .port = 18515,
				  .cpu = -1 };
	struct frr_oob *oob = NULL;
	int ret;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (parse_test(argv[1], &p.test))
		return bad("test (write_lat, write_bw, counter_lat)", argv[1]);
	ret = parse(argc - 1, argv + 1, &p);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (!p.peer && !p.server && p.backend == FRR_TP_BACKEND_SHM) {
		p.local = 1;
		/* generous: -a sweeps up to 8 MiB x iterations */
		ret = frr_launch_local(2, local_rank, &p, 30 * 60 * 1000);
		return ret ? 1 : 0;
	}
	ret = bench_oob_tcp(&p, &oob);
	if (ret)
		return 1;
	ret = bench_run(oob, &p);
	frr_oob_close(oob);
	if (ret)
		fprintf(stderr, "flexrr bench: failed: %s\n", strerror(-ret));
	return ret ? 1 : 0;
}
