// SPDX-License-Identifier: MIT
/*
 * `flexrr simulate`: options, the runs (the ideal, then every pattern x
 * mode), a table, CSV and JSON.  The simulation itself is frr_sim_run().
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/log.h"
#include "sim.h"

#define SIM_MAX_PATTERNS 16

/* One-way latencies between processes (docs/simulator.md has sources). */
static const struct {
	const char *name;
	double lat_us;
} nets[] = {
	{ "ib", 1.0 },	      /* InfiniBand: ~0.8 us ib_send_lat, rounded up */
	{ "roce", 2.0 },      /* RoCE NICs: about twice InfiniBand */
	{ "softroce", 25.0 }, /* measured here: docs/softroce.md */
	{ "shm", 0.5 },	      /* one host: the validation runs */
};

static const char *const default_patterns[] = {
	"slow-worker:0.1,1.0", "disrupted-machine:0.05,2,2",
	"power-law:11",	       "persistent:0,2",
	"contention:0",
};

struct sim_cmd {
	struct frr_sim_cfg cfg;
	struct frr_sim_cost cost;
	const char *cost_spec, *net, *csv, *json;
	const char *patterns[SIM_MAX_PATTERNS];
	int npatterns, quiet;
	int modes[FRR_SIM_NMODES], nmodes;
};

struct sim_row {
	const char *pattern;
	int mode;
	struct frr_sim_result r;
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: flexrr simulate [options]\n"
	    "\n"
	    "A discrete-event simulation of a flexrr job of P x T workers "
	    "in virtual time:\nthe RapidReassignment engine of real jobs, "
	    "the SSP clock rules, progress words,\nmailboxes with a "
	    "one-way latency, item costs and the seeded straggler "
	    "schedules\nof 'flexrr run --stragglers'.  Prints, per "
	    "pattern and mode, the time to N\nclocks and its ratio to the "
	    "no-straggler ideal (SSP without stragglers) and\nto the "
	    "balanced bound (total work / mean capacity of the "
	    "schedule).\n"
	    "\n"
	    "  -n P, -t T             processes x threads (default 2 x "
	    "4)\n"
	    "  --clocks N             clocks (default 100)\n"
	    "  --items N              items per worker and clock (default "
	    "1000)\n"
	    "  --slack S              slack of ssp and flexrr (default 1)\n"
	    "  --modes LIST           of bsp,ssp,rr,flexrr,lb-bsp,backup "
	    "(default all)\n"
	    "  --stragglers SPEC      a pattern (repeatable; default the "
	    "five of docs/results:\n"
	    "                         slow-worker:0.1,1.0 "
	    "disrupted-machine:0.05,2,2\n"
	    "                         power-law:11 persistent:0,2 "
	    "contention:0); 'none'\n"
	    "  --seed S               seed of stragglers and costs "
	    "(default 7)\n"
	    "  --cost SPEC            item cost: const:US (default "
	    "const:100), uniform:LO,HI,\n"
	    "                         exp:MEAN, lognormal:MEAN,SIGMA (us), "
	    "metrics:FILE[,ITEMS]\n"
	    "                         (per worker and clock of a 'flexrr "
	    "run --metrics' CSV) or\n"
	    "                         metrics-mean:FILE[,ITEMS] (per "
	    "worker means)\n"
	    "  --net ib|roce|softroce|shm  one-way latency between "
	    "processes: 1, 2, 25,\n"
	    "                         0.5 us (default ib)\n"
	    "  --latency-us US        that latency, explicitly\n"
	    "  --local-latency-us US  within a process (default 0.2)\n"
	    "  --poll-us US           period of the runtime's wait loops "
	    "(default 150)\n"
	    "  --apply-us US          last batch in -> clock applied "
	    "(default 100)\n"
	    "  --contention-factor F  contention[:w] slows w by F "
	    "(default 2: half a core)\n"
	    "  --rr-group G, --rr-threshold F, --rr-min-share F, "
	    "--rr-report N,\n"
	    "  --rr-max-helpers N     as flexrr run (defaults 4, 0.2, "
	    "0.05, 16, G)\n"
	    "  --lb-history H         lb-bsp: clocks its speed prediction "
	    "averages (default 3)\n"
	    "  --backups B            backup: workers dropped per clock "
	    "(default 5%%, >= 1)\n"
	    "  --csv FILE, --json FILE  also write the results there\n"
	    "  --trace FILE           a Chrome/Perfetto timeline of the run "
	    "in virtual time\n"
	    "                         (one --modes and one --stragglers; "
	    "see ui.perfetto.dev)\n"
	    "  -q, --quiet            no table (progress still on "
	    "stderr)\n"
	    "  -h, --help             this text\n");
}

/* ---- options ------------------------------------------------------------- */

static int num(const char *k, const char *v, double lo, double hi, double *out)
{
	char *end;

	*out = strtod(v, &end);
	if (end == v || *end || !isfinite(*out) || *out < lo || *out > hi) {
		fprintf(stderr,
			"flexrr simulate: %s '%s': give a number in [%.10g, "
			"%.10g]\n",
			k, v, lo, hi);
		return -EINVAL;
	}
	return 0;
}

static int opt_mode_list(struct sim_cmd *o, const char *v)
{
	char buf[256], *save = NULL;

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

/* Options taking a number: where it goes, its bounds, and a scale (us to
 * seconds) for doubles. */
enum { OPT_INT, OPT_U64, OPT_DBL };
#define OPT(name, field, type, lo, hi, scale)                                  \
	{                                                                      \
		name, offsetof(struct frr_sim_cfg, field), type, lo, hi, scale \
	}
static const struct {
	const char *name;
	size_t off;
	int type;
	double lo, hi, scale;
} num_opts[] = {
	OPT("-n", P, OPT_INT, 1, 1 << 20, 1),
	OPT("-t", T, OPT_INT, 1, 1 << 20, 1),
	OPT("--clocks", clocks, OPT_INT, 1, 1 << 24, 1),
	OPT("--items", items, OPT_U64, 1, 4194303, 1),
	OPT("--slack", slack, OPT_INT, 0, 24, 1),
	OPT("--seed", seed, OPT_U64, 0, 1e18, 1),
	OPT("--latency-us", lat_s, OPT_DBL, 0, 1e7, 1e-6),
	OPT("--local-latency-us", local_lat_s, OPT_DBL, 0, 1e7, 1e-6),
	OPT("--poll-us", poll_s, OPT_DBL, 0, 1e7, 1e-6),
	OPT("--apply-us", apply_s, OPT_DBL, 0, 1e7, 1e-6),
	OPT("--contention-factor", contention_factor, OPT_DBL, 1, 1e3, 1),
	OPT("--rr-group", rr_group, OPT_INT, 1, 16, 1),
	OPT("--rr-threshold", rr_threshold, OPT_DBL, 0, 1, 1),
	OPT("--rr-min-share", rr_min_share, OPT_DBL, 0, 0.99, 1),
	OPT("--rr-report", rr_report, OPT_INT, 1, 4096, 1),
	OPT("--rr-max-helpers", rr_max_helpers, OPT_INT, 1, 16, 1),
	OPT("--lb-history", lb_history, OPT_INT, 1, 64, 1),
	OPT("--backups", backups, OPT_INT, 0, 1 << 20, 1),
};
#undef OPT

/* 1: not a number option */
static int opt_number(struct sim_cmd *o, const char *k, const char *v)
{
	char *field = (char *)&o->cfg;
	double x;

	for (size_t i = 0; i < sizeof(num_opts) / sizeof(num_opts[0]); i++) {
		if (strcmp(k, num_opts[i].name))
			continue;
		if (num(k, v, num_opts[i].lo, num_opts[i].hi, &x))
			return -EINVAL;
		field += num_opts[i].off;
		if (num_opts[i].type == OPT_INT)
			*(int *)field = (int)x;
		else if (num_opts[i].type == OPT_U64)
			*(uint64_t *)field = (uint64_t)x;
		else
			*(double *)field = x * num_opts[i].scale;
		if (!strcmp(k, "--latency-us"))
			o->net = "custom";
		return 0;
	}
	return 1;
}

static int opt_net(struct sim_cmd *o, const char *v)
{
	for (size_t i = 0; i < sizeof(nets) / sizeof(nets[0]); i++)
		if (!strcmp(v, nets[i].name)) {
			o->net = nets[i].name;
			o->cfg.lat_s = nets[i].lat_us * 1e-6;
			return 0;
		}
	fprintf(stderr,
		"flexrr simulate: --net '%s': give ib, roce, softroce "
		"or shm (or --latency-us)\n",
		v);
	return -EINVAL;
}

static int opt_string(struct sim_cmd *o, const char *k, const char *v)
{
	if (!strcmp(k, "--modes"))
		return opt_mode_list(o, v);
	if (!strcmp(k, "--net"))
		return opt_net(o, v);
	if (!strcmp(k, "--cost"))
		o->cost_spec = v;
	else if (!strcmp(k, "--csv"))
		o->csv = v;
	else if (!strcmp(k, "--json"))
		o->json = v;
	else if (!strcmp(k, "--trace"))
		o->cfg.trace_path = v;
	else if (!strcmp(k, "--stragglers")) {
		if (o->npatterns == SIM_MAX_PATTERNS) {
			fprintf(stderr,
				"flexrr simulate: at most %d "
				"--stragglers\n",
				SIM_MAX_PATTERNS);
			return -EINVAL;
		}
		o->patterns[o->npatterns++] = v;
	} else
		return opt_number(o, k, v);
	return 0;
}

static int parse_args(int argc, char **argv, struct sim_cmd *o)
{
	memset(o, 0, sizeof(*o));
	frr_sim_cfg_defaults(&o->cfg);
	o->cost_spec = "const:100";
	o->net = "ib";
	for (int m = 0; m < FRR_SIM_NMODES; m++)
		o->modes[o->nmodes++] = m;
	for (int a = 1; a < argc; a++) {
		const char *k = argv[a];
		int err;

		if (!strcmp(k, "-h") || !strcmp(k, "--help")) {
			usage(stdout);
			return 1;
		}
		if (!strcmp(k, "-q") || !strcmp(k, "--quiet")) {
			o->quiet = 1;
			continue;
		}
		if (a + 1 >= argc) {
			fprintf(stderr,
				"flexrr simulate: '%s' needs a value "
				"(or is unknown); see --help\n",
				k);
			return -EINVAL;
		}
		err = opt_string(o, k, argv[++a]);
		if (err > 0)
			fprintf(stderr,
				"flexrr simulate: unknown option '%s'; "
				"see flexrr simulate --help\n",
				k);
		if (err)
			return -EINVAL;
	}
	if (!o->npatterns)
		for (size_t i = 0;
		     i < sizeof(default_patterns) / sizeof(default_patterns[0]);
		     i++)
			o->patterns[o->npatterns++] = default_patterns[i];
	if (o->cfg.trace_path && (o->npatterns != 1 || o->nmodes != 1)) {
		fprintf(stderr,
			"flexrr simulate: --trace records one run: give "
			"one --modes and one --stragglers\n");
		return -EINVAL;
	}
	return 0;
}

/* ---- runs ---------------------------------------------------------------- */

static int run_one(struct sim_cmd *o, const char *pattern, int mode,
		   struct frr_sim_result *r)
{
	struct frr_stragglers s;
	int err = frr_stragglers_parse(pattern, &s);

	if (!err)
		err = frr_stragglers_setup(&s, o->cfg.seed, o->cfg.T,
					   o->cfg.P * o->cfg.T);
	if (!err)
		err = frr_sim_run(&o->cfg, (enum frr_sim_mode)mode, &s, r);
	if (err)
		fprintf(stderr,
			"flexrr simulate: %s under '%s' failed (%s); see the "
			"message above\n",
			frr_sim_mode_names[mode], pattern, strerror(-err));
	return err;
}

static void progress(int k, int n, const char *pattern, int mode,
		     const struct frr_sim_result *r)
{
	fprintf(stderr,
		"simulate: [%d/%d] %-28s %-7s %10.4f s virtual  (%.2f s to "
		"simulate)\n",
		k, n, pattern, frr_sim_mode_names[mode], r->time_s, r->wall_s);
}

static int run_all(struct sim_cmd *o, struct sim_row *rows, double *ideal)
{
	int n = o->npatterns * o->nmodes + 1, k = 1, err;
	struct frr_sim_result r;

	const char *trace = o->cfg.trace_path;

	/* the ideal is not the traced run */
	o->cfg.trace_path = NULL;
	err = run_one(o, "none", o->cfg.slack ? FRR_SIM_SSP : FRR_SIM_BSP, &r);
	o->cfg.trace_path = trace;
	if (err)
		return err;
	*ideal = r.time_s;
	progress(k++, n, "none (the ideal)", o->cfg.slack ? 1 : 0, &r);
	frr_sim_result_free(&r);
	for (int p = 0; p < o->npatterns; p++)
		for (int m = 0; m < o->nmodes; m++) {
			struct sim_row *row = &rows[p * o->nmodes + m];

			row->pattern = o->patterns[p];
			row->mode = o->modes[m];
			err = run_one(o, row->pattern, row->mode, &row->r);
			if (err)
				return err;
			progress(k++, n, row->pattern, row->mode, &row->r);
		}
	return 0;
}

/* ---- output -------------------------------------------------------------- */

static double reassigned(const struct sim_row *w)
{
	return w->r.total_items > 0 ? w->r.rr[3] / w->r.total_items : 0;
}

static void print_table(const struct sim_cmd *o, const struct sim_row *rows,
			int nrows, double ideal)
{
	const struct frr_sim_cfg *c = &o->cfg;
	double wall = 0;

	printf("flexrr simulate: %d x %d workers, %d clocks x %llu items, "
	       "cost %s, net %s (%.2f us), slack %d, seed %llu\n",
	       c->P, c->T, c->clocks, (unsigned long long)c->items,
	       o->cost.desc, o->net, c->lat_s * 1e6, c->slack,
	       (unsigned long long)c->seed);
	printf("ideal (%s without stragglers): %.4f s\n\n",
	       c->slack ? "ssp" : "bsp", ideal);
	printf("%-28s %-7s %10s %8s %8s %8s %10s %8s\n", "pattern", "mode",
	       "time_s", "x_ideal", "x_bound", "dropped", "reassigned",
	       "sim_s");
	for (int i = 0; i < nrows; i++) {
		const struct sim_row *w = &rows[i];

		printf("%-28s %-7s %10.4f %8.3f %8.3f %7.2f%% %9.2f%% %8.2f\n",
		       w->pattern, frr_sim_mode_names[w->mode], w->r.time_s,
		       w->r.time_s / ideal, w->r.time_s / w->r.bound_s,
		       100 * w->r.dropped_items / w->r.total_items,
		       100 * reassigned(w), w->r.wall_s);
		wall += w->r.wall_s;
	}
	printf("\nx_ideal: time / ideal; x_bound: time / (total work / mean "
	       "capacity of the\nschedule); dropped: items backup dropped; "
	       "reassigned: items run by a helper.\nSimulating took %.2f s "
	       "in all.\n",
	       wall);
}

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
	fputc('"', f);
}

static void write_csv(FILE *f, const struct sim_cmd *o,
		      const struct sim_row *rows, int nrows, double ideal)
{
	const struct frr_sim_cfg *c = &o->cfg;

	fprintf(f, "pattern,mode,procs,threads,workers,clocks,items,slack,"
		   "seed,net,latency_us,cost,time_s,ideal_s,bound_s,x_ideal,"
		   "x_bound,work_s,dropped_frac,rr_offers,rr_accepted,"
		   "rr_cancelled,rr_items_reassigned,sim_wall_s,sim_cpu_s,"
		   "events\n");
	for (int i = 0; i < nrows; i++) {
		const struct frr_sim_result *r = &rows[i].r;

		csv_str(f, rows[i].pattern);
		fprintf(f, ",%s,%d,%d,%d,%d,%llu,%d,%llu,%s,%g,",
			frr_sim_mode_names[rows[i].mode], c->P, c->T,
			c->P * c->T, c->clocks, (unsigned long long)c->items,
			c->slack, (unsigned long long)c->seed, o->net,
			c->lat_s * 1e6);
		csv_str(f, o->cost.desc);
		fprintf(
		    f,
		    ",%.6f,%.6f,%.6f,%.4f,%.4f,%.6f,%.6f,%llu,%llu,%llu,"
		    "%llu,%.3f,%.3f,%llu\n",
		    r->time_s, ideal, r->bound_s, r->time_s / ideal,
		    r->time_s / r->bound_s, r->work_s,
		    r->dropped_items / r->total_items,
		    (unsigned long long)r->rr[0], (unsigned long long)r->rr[1],
		    (unsigned long long)r->rr[2], (unsigned long long)r->rr[3],
		    r->wall_s, r->cpu_s, (unsigned long long)r->events);
	}
}

static void json_run(FILE *f, const struct sim_row *w, double ideal)
{
	const struct frr_sim_result *r = &w->r;

	fprintf(f, "    {\"pattern\": ");
	frr_json_str(f, w->pattern);
	fprintf(f,
		", \"mode\": \"%s\", \"time_s\": %.6f, \"x_ideal\": %.4f, "
		"\"bound_s\": %.6f, \"x_bound\": %.4f, \"work_s\": %.6f, "
		"\"dropped_frac\": %.6f, \"rr_offers\": %llu, "
		"\"rr_accepted\": %llu, \"rr_cancelled\": %llu, "
		"\"rr_items_reassigned\": %llu, \"sim_wall_s\": %.3f, "
		"\"sim_cpu_s\": %.3f, \"events\": %llu}",
		frr_sim_mode_names[w->mode], r->time_s, r->time_s / ideal,
		r->bound_s, r->time_s / r->bound_s, r->work_s,
		r->dropped_items / r->total_items, (unsigned long long)r->rr[0],
		(unsigned long long)r->rr[1], (unsigned long long)r->rr[2],
		(unsigned long long)r->rr[3], r->wall_s, r->cpu_s,
		(unsigned long long)r->events);
}

static void write_json(FILE *f, const struct sim_cmd *o,
		       const struct sim_row *rows, int nrows, double ideal)
{
	const struct frr_sim_cfg *c = &o->cfg;

	fprintf(f,
		"{\n  \"config\": {\"procs\": %d, \"threads\": %d, "
		"\"workers\": %d, \"clocks\": %d, \"items\": %llu, "
		"\"slack\": %d, \"seed\": %llu, \"net\": \"%s\", "
		"\"latency_us\": %g, \"local_latency_us\": %g, "
		"\"poll_us\": %g, \"apply_us\": %g, \"cost\": ",
		c->P, c->T, c->P * c->T, c->clocks,
		(unsigned long long)c->items, c->slack,
		(unsigned long long)c->seed, o->net, c->lat_s * 1e6,
		c->local_lat_s * 1e6, c->poll_s * 1e6, c->apply_s * 1e6);
	frr_json_str(f, o->cost.desc);
	fprintf(f, "},\n  \"ideal_s\": %.6f,\n  \"runs\": [\n", ideal);
	for (int i = 0; i < nrows; i++) {
		json_run(f, &rows[i], ideal);
		fprintf(f, "%s\n", i + 1 < nrows ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
}

static int write_file(const char *path, const struct sim_cmd *o,
		      const struct sim_row *rows, int nrows, double ideal,
		      void (*fn)(FILE *, const struct sim_cmd *,
				 const struct sim_row *, int, double))
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "flexrr simulate: cannot write %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	fn(f, o, rows, nrows, ideal);
	if (fclose(f)) {
		fprintf(stderr, "flexrr simulate: writing %s failed: %s\n",
			path, strerror(errno));
		return -EIO;
	}
	return 0;
}

int frr_cmd_simulate(int argc, char **argv)
{
	struct sim_cmd o;
	struct sim_row *rows = NULL;
	double ideal = 0;
	int nrows, err = parse_args(argc, argv, &o);

	if (err)
		return err > 0 ? 0 : 2;
	if (frr_sim_cost_parse(o.cost_spec, o.cfg.items, &o.cost))
		return 2;
	o.cfg.cost = &o.cost;
	nrows = o.npatterns * o.nmodes;
	rows = calloc((size_t)nrows, sizeof(*rows));
	err = rows ? run_all(&o, rows, &ideal) : -ENOMEM;
	if (!err && !o.quiet)
		print_table(&o, rows, nrows, ideal);
	if (!err && o.csv)
		err = write_file(o.csv, &o, rows, nrows, ideal, write_csv);
	if (!err && o.json)
		err = write_file(o.json, &o, rows, nrows, ideal, write_json);
	for (int i = 0; rows && i < nrows; i++)
		frr_sim_result_free(&rows[i].r);
	free(rows);
	frr_sim_cost_free(&o.cost);
	return err == -EINVAL ? 2 : err ? 1 : 0;
}
