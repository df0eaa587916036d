// SPDX-License-Identifier: MIT
/*
 * flexrr bench write_lat|write_bw|counter_lat [options] [SERVER]
 * perftest-style: no address = server, an address = client; with
 * --backend shm and no address, both ranks are forked here.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "commands.h"
#include "flexrr/base.h"
#include "flexrr/opt.h"

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

/* ---- options ------------------------------------------------------------- */
struct bench_opts {
	struct bench_params p;
	int size_set; /* -s given: the test's default size does not apply */
	const char *size_arg; /* as given, for the message */
};

static int opt_size(void *obj, const struct frr_opt *o, const char *v)
{
	struct bench_opts *b = obj;

	(void)o;
	if (parse_size(v, &b->p.size))
		return -bad("size", v);
	b->size_set = 1;
	b->size_arg = v;
	return 0;
}

static int opt_span(void *obj, const struct frr_opt *o, const char *v)
{
	struct bench_opts *b = obj;

	(void)o;
	if (parse_size(v, &b->p.span) || b->p.span > ((size_t)1 << 32))
		return -bad("span (at most 4G)", v);
	return 0;
}

static int opt_iters(void *obj, const struct frr_opt *o, const char *v)
{
	int64_t n;

	if (frr_parse_i64(v, 10, (int64_t)o->lo, (int64_t)o->hi, &n))
		return -bad("iteration count", v);
	((struct bench_opts *)obj)->p.iters = (long)n;
	return 0;
}

static int opt_backend(void *obj, const struct frr_opt *o, const char *v)
{
	(void)o;
	if (frr_tp_backend_parse(v, &((struct bench_opts *)obj)->p.backend))
		return -bad("backend (shm, verbs, auto)", v);
	return 0;
}

/* this command's wording since it was written */
static void bad_value(const struct frr_opt_set *s, const struct frr_opt *o,
		      const char *v, int err)
{
	(void)s;
	(void)err;
	bad(!strcmp(o->name, "gid-index") ? "GID index"
	    : !strcmp(o->name, "port")	  ? "port"
					  : "CPU",
	    v);
}

#define F(x) offsetof(struct bench_opts, p.x)
static const struct frr_opt table[] = {
	FRR_OPT("all", 'a', FRR_OPT_FLAG, F(all), 0, 0,
		.help = "sweep sizes 2 B .. 8 MiB"),
	FRR_OPT("size", 's', FRR_OPT_FUNC, F(size), 0, 0, .parse = opt_size,
		.arg = "SIZE", .def_text = "2; write_bw 65536",
		.help = "message size in bytes (K/M suffixes ok)"),
	FRR_OPT("iters", 'n', FRR_OPT_FUNC, F(iters), 1, 100000000,
		.parse = opt_iters, .arg = "N",
		.def_text = "1000; write_bw 5000,\n1000 from 1 MiB",
		.help = "iterations per size"),
	FRR_OPT("span", 0, FRR_OPT_FUNC, F(span), 0, 0, .parse = opt_span,
		.arg = "BYTES", .def_text = "SIZE",
		.help = "write_bw: writes rotate over BYTES on both\nsides "
			"(larger than the caches: memory\nbandwidth, as a "
			"job's batches see)"),
	FRR_OPT("json", 0, FRR_OPT_STRING, F(json), 0, 0, .arg = "FILE",
		.help = "also write the results as JSON"),
	FRR_OPT("backend", 0, FRR_OPT_FUNC, F(backend), 0, 0,
		.parse = opt_backend, .arg = "B", .def_text = "auto",
		.help = "shm | verbs | auto"),
	FRR_OPT("ib-dev", 'd', FRR_OPT_STRING, F(device), 0, 0, .arg = "DEV",
		.def_text = "env FLEXRR_DEVICE\nor the first active one",
		.help = "verbs device, e.g. rxe0"),
	FRR_OPT("gid-index", 'x', FRR_OPT_INT, F(gid_index), 0, INT32_MAX,
		.def.i = -1, .arg = "N", .def_text = "auto RoCE v2",
		.help = "verbs GID index"),
	FRR_OPT("port", 'p', FRR_OPT_INT, F(port), 1, 65535, .def.i = 18515,
		.arg = "PORT", .help = "TCP side-channel port"),
	FRR_OPT("cpu", 'c', FRR_OPT_INT, F(cpu), 0, INT32_MAX, .def.i = -1,
		.arg = "N", .flags = FRR_OPT_NODEF,
		.help = "pin this process to CPU N"),
	FRR_OPT("server", 0, FRR_OPT_FLAG, F(server), 0, 0,
		.help = "be the server even with --backend shm"),
	{ 0 },
};
#undef F

static void defaults(void *obj)
{
	((struct bench_opts *)obj)->p.backend = FRR_TP_BACKEND_AUTO;
}

static const struct frr_opt_set bench_opts = {
	.prog = "flexrr bench",
	.see = "'flexrr bench --help'",
	.opts = table,
	.size = sizeof(struct bench_opts),
	.defaults = defaults,
	.bad_value = bad_value,
	.plain = 1,
	.head =
	    "usage: flexrr bench TEST [options] [SERVER]\n"
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
	    "options:\n",
	.tail = "\n"
		"examples:\n"
		"  flexrr bench counter_lat --backend shm\n"
		"  flexrr bench write_bw -s 1M --backend shm\n"
		"  flexrr bench write_lat -a --backend verbs -d rxe0      "
		"# server\n"
		"  flexrr bench write_lat -a --backend verbs -d rxe0 HOST "
		"# client\n",
};

static void usage(FILE *f)
{
	frr_opt_usage(&bench_opts, f);
}

/* What the options mean together; argv[1..npos] are the positionals. */
static int check(struct bench_opts *b, int npos, char **argv)
{
	struct bench_params *p = &b->p;

	if (!b->size_set)
		p->size = p->test == BENCH_WRITE_BW ? 65536 : 2;
	if (p->test == BENCH_COUNTER_LAT && b->size_set && p->size != 8) {
		fprintf(stderr, "flexrr bench: counter_lat writes 8-byte "
				"counters; use -s 8 or leave -s out\n");
		return 2;
	}
	if (p->test == BENCH_COUNTER_LAT)
		p->size = 8;
	if (p->size > ((size_t)1 << 30))
		return bad("size (at most 1 GiB)", b->size_arg);
	if (npos > 1)
		return bad("extra argument", argv[2]);
	p->peer = npos ? argv[1] : NULL;
	return 0;
}

/* argv[0] is the test: 0, 1 after --help, 2 on a usage error (said). */
static int parse(int argc, char **argv, struct bench_params *p)
{
	struct bench_opts b;
	int npos = 0, ret;

	frr_opt_defaults(&bench_opts, &b);
	b.p.test = p->test;
	ret = frr_opt_parse(&bench_opts, &b, argc, argv, &npos);
	if (frr_opt_print_help(&bench_opts, ret, stdout))
		return 1;
	if (ret)
		return 2;
	ret = check(&b, npos, argv);
	*p = b.p;
	return ret;
}

static int local_rank(struct frr_oob *oob, void *arg)
{
	return bench_run(oob, arg);
}

int frr_cmd_bench(int argc, char **argv)
{
	struct bench_params p = { 0 };
	struct frr_oob *oob = NULL;
	int ret;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--help=md")) {
		frr_opt_markdown(&bench_opts, stdout);
		return 0;
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
