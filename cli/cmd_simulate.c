// SPDX-License-Identifier: MIT
/*
 * `flexrr simulate`: its options, into a struct frr_sim_study
 * (flexrr/sim.h) by one table (flexrr/opt.h; the defaults are the
 * library's, frr_sim_study_defaults); the library runs the study and
 * prints the results.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "flexrr/opt.h"
#include "flexrr/sim.h"

/* ---- options ------------------------------------------------------------- */

static int opt_modes(void *obj, const struct frr_opt *opt, const char *v)
{
	struct frr_sim_study *o = obj;
	char buf[256], *save = NULL;

	(void)opt;
	snprintf(buf, sizeof(buf), "%s", v);
	o->nmodes = 0;
	for (char *m = strtok_r(buf, ",", &save); m;
	     m = strtok_r(NULL, ",", &save)) {
		int k = frr_sim_mode_parse(m);

		if (k < 0 || o->nmodes == FRR_SIM_NMODES) {
			fprintf(stderr,
				"flexrr simulate: --modes: '%s' is not one of "
				"bsp, ssp, rr, flexrr, lb-bsp, backup\n",
				m);
			return -EINVAL;
		}
		o->modes[o->nmodes++] = k;
	}
	return o->nmodes ? 0 : -EINVAL;
}

static int opt_stragglers(void *obj, const struct frr_opt *opt, const char *v)
{
	struct frr_sim_study *o = obj;

	(void)opt;
	if (o->npatterns == FRR_SIM_MAX_PATTERNS) {
		fprintf(stderr, "flexrr simulate: at most %d --stragglers\n",
			FRR_SIM_MAX_PATTERNS);
		return -EINVAL;
	}
	o->patterns[o->npatterns++] = v;
	return 0;
}

/* --net NAME: its latency (a later --latency-us overrides it) */
static int opt_net(void *obj, const struct frr_opt *opt, const char *v)
{
	struct frr_sim_study *o = obj;

	(void)opt;
	if (!frr_sim_net_latency(v, &o->cfg.lat_s))
		return 0;
	fprintf(stderr,
		"flexrr simulate: --net '%s': give ib, roce, softroce or shm "
		"(or --latency-us)\n",
		v);
	return -EINVAL;
}

/* --link NAME: its NIC and its latency, named as --net names it (a
 * later --net or --latency-us overrides the latency) */
static int opt_link(void *obj, const struct frr_opt *opt, const char *v)
{
	static const char *const net_of[][2] = { { "hdr", "ib" },
						 { "100gbe", "roce" },
						 { "25gbe", "roce" },
						 { "softroce", "softroce" } };
	struct frr_sim_study *o = obj;

	(void)opt;
	if (frr_sim_link_preset(v, &o->cfg.link, &o->cfg.lat_s)) {
		fprintf(
		    stderr,
		    "flexrr simulate: --link '%s': give hdr, 100gbe, 25gbe, "
		    "softroce or none\n",
		    v);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(net_of) / sizeof(net_of[0]); i++)
		if (!strcmp(v, net_of[i][0]))
			o->net = net_of[i][1];
	return 0;
}

/* --link-gbps G: both bandwidths (0: unlimited), a link from now on */
static int opt_gbps(void *obj, const struct frr_opt *opt, const char *v)
{
	struct frr_sim_study *o = obj;
	char *end;
	double g = strtod(v, &end);

	(void)opt;
	if (end == v || *end || !(g >= 0 && g <= 1e6)) {
		fprintf(stderr,
			"flexrr simulate: --link-gbps '%s': give a number in "
			"[0, 1e6]\n",
			v);
		return -EINVAL;
	}
	o->cfg.link.on = 1;
	o->cfg.link.tx_Bps = o->cfg.link.rx_Bps = g * 1e9 / 8;
	o->link = "custom";
	return 0;
}

static int opt_model(void *obj, const struct frr_opt *opt, const char *v)
{
	struct frr_sim_study *o = obj;

	(void)opt;
	return frr_sim_model_parse(v, &o->cfg.model) ? -EINVAL : 0;
}

/* --plane now|dense: today's data plane or the one before issue 21 */
static int opt_plane(void *obj, const struct frr_opt *opt, const char *v)
{
	struct frr_sim_study *o = obj;

	(void)opt;
	if (strcmp(v, "now") && strcmp(v, "dense")) {
		fprintf(stderr,
			"flexrr simulate: --plane '%s': give now or dense\n",
			v);
		return -EINVAL;
	}
	o->cfg.dense_plane = !strcmp(v, "dense");
	return 0;
}

/* an explicit latency is no named network's */
static void seen(void *obj, const struct frr_opt *opt)
{
	if (!strcmp(opt->name, "latency-us"))
		((struct frr_sim_study *)obj)->net = "custom";
}

/* this command's wording since it was written */
static void bad_value(const struct frr_opt_set *s, const struct frr_opt *o,
		      const char *v, int err)
{
	(void)s;
	(void)err;
	if (o->letter)
		fprintf(stderr, "flexrr simulate: -%c '%s': ", o->letter, v);
	else
		fprintf(stderr, "flexrr simulate: --%s '%s': ", o->name, v);
	fprintf(stderr, "give a number in [%.10g, %.10g]\n", o->lo, o->hi);
}

static void defaults(void *obj)
{
	frr_sim_study_defaults(obj);
}

static int check(void *obj)
{
	const struct frr_sim_study *o = obj;

	/* no --stragglers: the study runs its five default patterns */
	if (o->cfg.trace_path && (o->npatterns != 1 || o->nmodes != 1)) {
		fprintf(stderr,
			"flexrr simulate: --trace records one run: give "
			"one --modes and one --stragglers\n");
		return -EINVAL;
	}
	return 0;
}

#define F(x) offsetof(struct frr_sim_study, x)
#define C(x) offsetof(struct frr_sim_study, cfg.x)
#define US(name, field, hi, text)                                        \
	FRR_OPT(name, 0, FRR_OPT_DOUBLE, C(field), 0, hi, .scale = 1e-6, \
		.arg = "US", .help = text)
static const struct frr_opt table[] = {
	FRR_OPT("procs", 'n', FRR_OPT_INT, C(P), 1, 1 << 20, .arg = "P",
		.help = "processes"),
	FRR_OPT("threads", 't', FRR_OPT_INT, C(T), 1, 1 << 20, .arg = "T",
		.help = "threads per process"),
	FRR_OPT("clocks", 0, FRR_OPT_INT, C(clocks), 1, 1 << 24, .arg = "N",
		.help = "clocks"),
	FRR_OPT("items", 0, FRR_OPT_U64, C(items), 1, FRR_SIM_MAX_ITEMS,
		.arg = "N", .help = "items per worker and clock"),
	FRR_OPT("slack", 0, FRR_OPT_INT, C(slack), 0, 24, .arg = "S",
		.help = "slack of ssp and flexrr"),
	FRR_OPT("modes", 0, FRR_OPT_FUNC, F(modes), 0, 0, .parse = opt_modes,
		.arg = "LIST", .def_text = "all",
		.help = "of bsp,ssp,rr,flexrr,lb-bsp,backup"),
	FRR_OPT("stragglers", 0, FRR_OPT_FUNC, F(patterns), 0, 0,
		.parse = opt_stragglers, .arg = "SPEC", .flags = FRR_OPT_NODEF,
		.help = "a pattern (repeatable; 'none'); default the five of\n"
			"docs/results: slow-worker:0.1,1.0\ndisrupted-machine:"
			"0.05,2,2 power-law:11\npersistent:0,2 contention:0"),
	FRR_OPT("seed", 0, FRR_OPT_U64, C(seed), 0, 1e18, .arg = "S",
		.help = "seed of stragglers and costs"),
	FRR_OPT("cost", 0, FRR_OPT_STRING, F(cost_spec), 0, 0, .arg = "SPEC",
		.help = "item cost: const:US, uniform:LO,HI,\nexp:MEAN, "
			"lognormal:MEAN,SIGMA (us), metrics:FILE[,ITEMS]\n(per "
			"worker and clock of a 'flexrr run --metrics' CSV) "
			"or\nmetrics-mean:FILE[,ITEMS] (per worker means)"),
	FRR_OPT("net", 0, FRR_OPT_STRING, F(net), 0, 0, .parse = opt_net,
		.arg = "ib|roce|softroce|shm",
		.help = "one-way latency between processes: 1, 2, 25,\n0.5 us"),
	US("latency-us", lat_s, 1e7, "that latency, explicitly"),
	FRR_OPT("link", 0, FRR_OPT_STRING, F(link), 0, 0, .parse = opt_link,
		.arg = "hdr|100gbe|25gbe|softroce|none",
		.help = "each process's NIC: 200, 100, 25 Gb/s, 0.45 Gb/s\n"
			"(rxe measured here); sets --net's latency too\n"
			"(ib, roce, roce, softroce); none: bytes cost no time"),
	FRR_OPT("link-gbps", 0, FRR_OPT_FUNC, C(link), 0, 0, .parse = opt_gbps,
		.arg = "G", .def_text = "the link's",
		.help = "send and receive bandwidth (0: unlimited)"),
	US("msg-us", link.msg_s, 1e7, "a link's cost per message posted"),
	FRR_OPT("flush-ns-per-byte", 0, FRR_OPT_DOUBLE, C(link.flush_s_B), 0,
		1e6, .scale = 1e-9, .arg = "NS",
		.help = "a worker's CPU per batch byte it flushes\n"
			"(deltas, copies; measured: docs/simulator.md)"),
	FRR_OPT("apply-ns-per-byte", 0, FRR_OPT_DOUBLE, C(link.apply_s_B), 0,
		1e6, .scale = 1e-9, .arg = "NS",
		.help = "a server's CPU per byte it applies and pushes"),
	FRR_OPT("model", 0, FRR_OPT_STRING, F(model), 0, 0, .parse = opt_model,
		.arg = "SPEC",
		.help = "the tables: none, mf:USERS,ITEMS,RANK,\n"
			"lda:WORDS,TOPICS[,TOKENS], mlr:FEATURES,CLASSES"),
	FRR_OPT("plane", 0, FRR_OPT_STRING, F(plane), 0, 0, .parse = opt_plane,
		.arg = "now|dense",
		.help = "dense: the data plane before issue 21 (every\n"
			"rank holds every row, rows on row % P, dense\n"
			"batches, progress words to every rank, one lock)"),
	US("local-latency-us", local_lat_s, 1e7, "within a process"),
	US("poll-us", poll_s, 1e7, "period of the runtime's wait loops"),
	US("apply-us", apply_s, 1e7, "last batch in -> clock applied"),
	FRR_OPT("contention-factor", 0, FRR_OPT_DOUBLE, C(contention_factor), 1,
		1e3, .arg = "F",
		.help = "contention[:w] slows w by F (2: half a core)"),
	FRR_OPT("rr-group", 0, FRR_OPT_INT, C(rr_group), 1, 16, .arg = "G",
		.help = "as flexrr run"),
	FRR_OPT("rr-rows-from-start", 0, FRR_OPT_FLAG, C(rr_rows_from_start), 0,
		0, .help = "as flexrr run"),
	FRR_OPT("ctl-shared", 0, FRR_OPT_FLAG, C(ctl_shared), 0, 0,
		.help = "progress words under the rank's transport lock, "
			"behind the server's push, as the runtime before "
			"2026-12-07 (today on the workers' own lanes)"),
	FRR_OPT("rr-threshold", 0, FRR_OPT_DOUBLE, C(rr_threshold), 0, 1,
		.arg = "F", .help = "as flexrr run"),
	FRR_OPT("rr-link-weight", 0, FRR_OPT_DOUBLE, C(rr_link_weight), 0, 10,
		.arg = "K", .help = "as flexrr run"),
	FRR_OPT("rr-min-share", 0, FRR_OPT_DOUBLE, C(rr_min_share), 0, 0.99,
		.arg = "F", .help = "as flexrr run"),
	FRR_OPT("rr-report", 0, FRR_OPT_INT, C(rr_report), 1, 4096, .arg = "N",
		.help = "as flexrr run"),
	FRR_OPT("rr-max-helpers", 0, FRR_OPT_INT, C(rr_max_helpers), 1, 16,
		.arg = "N", .def_text = "G", .help = "as flexrr run"),
	FRR_OPT("lb-history", 0, FRR_OPT_INT, C(lb_history), 1, 64, .arg = "H",
		.help = "lb-bsp: clocks its speed prediction averages"),
	FRR_OPT("backups", 0, FRR_OPT_INT, C(backups), 0, 1 << 20, .arg = "B",
		.def_text = "5%, >= 1",
		.help = "backup: workers dropped per clock"),
	FRR_OPT("csv", 0, FRR_OPT_STRING, F(csv), 0, 0, .arg = "FILE",
		.help = "also write the results there"),
	FRR_OPT("json", 0, FRR_OPT_STRING, F(json), 0, 0, .arg = "FILE",
		.help = "also write the results there"),
	FRR_OPT("trace", 0, FRR_OPT_STRING, C(trace_path), 0, 0, .arg = "FILE",
		.help = "a Chrome/Perfetto timeline of the run in virtual "
			"time\n(one --modes and one --stragglers; see "
			"ui.perfetto.dev)"),
	FRR_OPT("quiet", 'q', FRR_OPT_FLAG, F(quiet), 0, 0,
		.help = "no table (progress still on stderr)"),
	{ 0 },
};
#undef US
#undef C
#undef F

static const struct frr_opt_set frr_simulate_opts = {
	.prog = "flexrr simulate",
	.see = "'flexrr simulate --help'",
	.opts = table,
	.size = sizeof(struct frr_sim_study),
	.defaults = defaults,
	.seen = seen,
	.check = check,
	.bad_value = bad_value,
	.plain = 1,
	.head = "usage: flexrr simulate [options]\n"
		"\n"
		"A discrete-event simulation of a flexrr job of P x T workers "
		"in virtual time:\nthe RapidReassignment engine of real jobs, "
		"the SSP clock rules, progress words,\nmailboxes with a "
		"one-way latency, item costs and the seeded straggler "
		"schedules\nof 'flexrr run --stragglers'.  Prints, per "
		"pattern and mode, the time to N\nclocks and its ratio to the "
		"no-straggler ideal (SSP without stragglers) and\nto the "
		"balanced bound (total work / mean capacity of the "
		"schedule).\n\n",
};

static int parse_args(int argc, char **argv, struct frr_sim_study *o)
{
	int err;

	frr_opt_defaults(&frr_simulate_opts, o);
	err = frr_opt_parse(&frr_simulate_opts, o, argc, argv, NULL);
	frr_opt_print_help(&frr_simulate_opts, err, stdout);
	return err;
}

int frr_cmd_simulate(int argc, char **argv)
{
	struct frr_sim_study o;
	int err = parse_args(argc, argv, &o);

	if (err)
		return err > 0 ? 0 : 2;
	err = frr_sim_study_run(&o);
	return err == -EINVAL ? 2 : err ? 1 : 0;
}
