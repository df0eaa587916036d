// SPDX-License-Identifier: MIT
/*
 * A study (flexrr/sim.h, `flexrr simulate`): the runs (the ideal, then every
 * pattern x mode), a table, CSV and JSON.  The simulation itself is
 * frr_sim_run(); the command line is cli/cmd_simulate.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/base.h"
#include "flexrr/log.h"
#include "sim.h"

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

struct sim_row {
	const char *pattern;
	int mode;
	struct frr_sim_result r;
};

int frr_sim_net_latency(const char *name, double *lat_s)
{
	for (size_t i = 0; i < sizeof(nets) / sizeof(nets[0]); i++)
		if (!strcmp(name, nets[i].name)) {
			*lat_s = nets[i].lat_us * 1e-6;
			return 0;
		}
	return -EINVAL;
}

void frr_sim_study_defaults(struct frr_sim_study *s)
{
	memset(s, 0, sizeof(*s));
	frr_sim_cfg_defaults(&s->cfg);
	s->cost_spec = "const:100";
	s->net = "ib";
	s->link = "none";
	s->model = "none";
	s->plane = "now";
	for (int m = 0; m < FRR_SIM_NMODES; m++)
		s->modes[s->nmodes++] = m;
}

/* ---- runs ---------------------------------------------------------------- */

static int run_one(struct frr_sim_study *o, const char *pattern, int mode,
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

static int run_all(struct frr_sim_study *o, struct sim_row *rows, double *ideal)
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
	return w->r.total_items > 0 ? w->r.rr[FRR_SIM_MOVED] / w->r.total_items
				    : 0;
}

static double mb_per_clock(const struct frr_sim_result *r, int clocks)
{
	return (double)(r->bytes_batch + r->bytes_push + r->bytes_ctl +
			r->bytes_state) /
	       clocks / 1e6;
}

static void print_table(const struct frr_sim_study *o,
			const struct sim_row *rows, int nrows, double ideal)
{
	const struct frr_sim_cfg *c = &o->cfg;
	double wall = 0;

	printf("flexrr simulate: %d x %d workers, %d clocks x %llu items, "
	       "cost %s, net %s (%.2f us), slack %d, seed %llu\n",
	       c->P, c->T, c->clocks, (unsigned long long)c->items,
	       c->cost->desc, o->net, c->lat_s * 1e6, c->slack,
	       (unsigned long long)c->seed);
	printf("link %s, model %s, plane %s%s", o->link, o->model, o->plane,
	       c->ctl_shared ? ", progress words behind the push (--ctl-shared)"
			     : "");
	if (c->rr_link_weight > 0)
		printf(", offers weighed by the link (--rr-link-weight %g)",
		       c->rr_link_weight);
	printf("\n");
	printf("ideal (%s without stragglers): %.4f s\n\n",
	       c->slack ? "ssp" : "bsp", ideal);
	printf("%-28s %-7s %10s %8s %8s %8s %10s %6s %6s %10s %8s\n", "pattern",
	       "mode", "time_s", "x_ideal", "x_bound", "dropped", "reassigned",
	       "comm", "c_max", "MB/clock", "sim_s");
	for (int i = 0; i < nrows; i++) {
		const struct sim_row *w = &rows[i];

		printf("%-28s %-7s %10.4f %8.3f %8.3f %7.2f%% %9.2f%% %5.1f%% "
		       "%5.1f%% %10.3f %8.2f\n",
		       w->pattern, frr_sim_mode_names[w->mode], w->r.time_s,
		       w->r.time_s / ideal, w->r.time_s / w->r.bound_s,
		       100 * w->r.dropped_items / w->r.total_items,
		       100 * reassigned(w), 100 * w->r.comm_mean,
		       100 * w->r.comm_max, mb_per_clock(&w->r, c->clocks),
		       w->r.wall_s);
		wall += w->r.wall_s;
	}
	printf("\nx_ideal: time / ideal; x_bound: time / (total work / mean "
	       "capacity of the\nschedule); dropped: items backup dropped; "
	       "reassigned: items run by a helper;\ncomm, c_max: mean and "
	       "largest share of a clock spent communicating (the\nworkers' "
	       "sends and the replica push); MB/clock: bytes between "
	       "processes.\nSimulating took %.2f s in all.\n",
	       wall);
}

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
	fputc('"', f);
}

static void write_csv(FILE *f, const struct frr_sim_study *o,
		      const struct sim_row *rows, int nrows, double ideal)
{
	const struct frr_sim_cfg *c = &o->cfg;

	fprintf(f, "pattern,mode,procs,threads,workers,clocks,items,slack,"
		   "seed,net,latency_us,cost,time_s,ideal_s,bound_s,x_ideal,"
		   "x_bound,work_s,dropped_frac,rr_offers,rr_accepted,"
		   "rr_cancelled,rr_items_reassigned,sim_wall_s,sim_cpu_s,"
		   "events,link,model,comm_share,comm_max,bytes_batch,"
		   "bytes_push,bytes_ctl,bytes_state,msgs,plane\n");
	for (int i = 0; i < nrows; i++) {
		const struct frr_sim_result *r = &rows[i].r;

		csv_str(f, rows[i].pattern);
		fprintf(f, ",%s,%d,%d,%d,%d,%llu,%d,%llu,%s,%g,",
			frr_sim_mode_names[rows[i].mode], c->P, c->T,
			c->P * c->T, c->clocks, (unsigned long long)c->items,
			c->slack, (unsigned long long)c->seed, o->net,
			c->lat_s * 1e6);
		csv_str(f, c->cost->desc);
		fprintf(
		    f,
		    ",%.6f,%.6f,%.6f,%.4f,%.4f,%.6f,%.6f,%llu,%llu,%llu,"
		    "%llu,%.3f,%.3f,%llu,",
		    r->time_s, ideal, r->bound_s, r->time_s / ideal,
		    r->time_s / r->bound_s, r->work_s,
		    r->dropped_items / r->total_items,
		    (unsigned long long)r->rr[0], (unsigned long long)r->rr[1],
		    (unsigned long long)r->rr[2], (unsigned long long)r->rr[3],
		    r->wall_s, r->cpu_s, (unsigned long long)r->events);
		csv_str(f, o->link);
		fputc(',', f);
		csv_str(f, o->model);
		fprintf(f, ",%.6f,%.6f,%llu,%llu,%llu,%llu,%llu,%s\n",
			r->comm_mean, r->comm_max,
			(unsigned long long)r->bytes_batch,
			(unsigned long long)r->bytes_push,
			(unsigned long long)r->bytes_ctl,
			(unsigned long long)r->bytes_state,
			(unsigned long long)r->msgs, o->plane);
	}
}

static void json_run(FILE *f, const struct sim_row *w, double ideal, int clocks)
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
		"\"sim_cpu_s\": %.3f, \"events\": %llu",
		frr_sim_mode_names[w->mode], r->time_s, r->time_s / ideal,
		r->bound_s, r->time_s / r->bound_s, r->work_s,
		r->dropped_items / r->total_items, (unsigned long long)r->rr[0],
		(unsigned long long)r->rr[1], (unsigned long long)r->rr[2],
		(unsigned long long)r->rr[3], r->wall_s, r->cpu_s,
		(unsigned long long)r->events);
	fprintf(f,
		", \"bytes_batch\": %llu, \"bytes_push\": %llu, "
		"\"bytes_ctl\": %llu, \"bytes_state\": %llu, \"msgs\": %llu, "
		"\"comm_share\": %.6f, "
		"\"comm_max\": %.6f, \"comm_share_per_clock\": [",
		(unsigned long long)r->bytes_batch,
		(unsigned long long)r->bytes_push,
		(unsigned long long)r->bytes_ctl,
		(unsigned long long)r->bytes_state, (unsigned long long)r->msgs,
		r->comm_mean, r->comm_max);
	for (int c = 0; c < clocks && r->comm_share; c++)
		fprintf(f, "%s%.4f", c ? ", " : "", r->comm_share[c]);
	fprintf(f, "]}");
}

static void write_json(FILE *f, const struct frr_sim_study *o,
		       const struct sim_row *rows, int nrows, double ideal)
{
	const struct frr_sim_cfg *c = &o->cfg;

	fprintf(f,
		"{\n  \"config\": {\"procs\": %d, \"threads\": %d, "
		"\"workers\": %d, \"clocks\": %d, \"items\": %llu, "
		"\"slack\": %d, \"seed\": %llu, \"net\": \"%s\", "
		"\"latency_us\": %g, \"local_latency_us\": %g, "
		"\"poll_us\": %g, \"apply_us\": %g, \"link\": ",
		c->P, c->T, c->P * c->T, c->clocks,
		(unsigned long long)c->items, c->slack,
		(unsigned long long)c->seed, o->net, c->lat_s * 1e6,
		c->local_lat_s * 1e6, c->poll_s * 1e6, c->apply_s * 1e6);
	frr_json_str(f, o->link);
	fprintf(f,
		", \"link_gbps\": %g, \"msg_us\": %g, \"flush_ns_b\": %g, "
		"\"apply_ns_b\": %g, \"model\": ",
		c->link.tx_Bps * 8 / 1e9, c->link.msg_s * 1e6,
		c->link.flush_s_B * 1e9, c->link.apply_s_B * 1e9);
	frr_json_str(f, o->model);
	fprintf(f, ", \"plane\": ");
	frr_json_str(f, o->plane);
	fprintf(f, ", \"cost\": ");
	frr_json_str(f, c->cost->desc);
	fprintf(f, "},\n  \"ideal_s\": %.6f,\n  \"runs\": [\n", ideal);
	for (int i = 0; i < nrows; i++) {
		json_run(f, &rows[i], ideal, c->clocks);
		fprintf(f, "%s\n", i + 1 < nrows ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
}

struct study_fill {
	const struct frr_sim_study *o;
	const struct sim_row *rows;
	int nrows;
	double ideal;
	void (*fn)(FILE *, const struct frr_sim_study *, const struct sim_row *,
		   int, double);
};

static int study_fill(FILE *f, void *arg)
{
	const struct study_fill *a = arg;

	a->fn(f, a->o, a->rows, a->nrows, a->ideal);
	return 0;
}

static int write_file(const char *path, const struct frr_sim_study *o,
		      const struct sim_row *rows, int nrows, double ideal,
		      void (*fn)(FILE *, const struct frr_sim_study *,
				 const struct sim_row *, int, double))
{
	struct study_fill a = { o, rows, nrows, ideal, fn };

	return frr_file_write_atomic(path, "flexrr simulate", study_fill, &a);
}

int frr_sim_study_run(struct frr_sim_study *o)
{
	struct frr_sim_cost cost;
	struct sim_row *rows = NULL;
	double ideal = 0;
	int nrows, err;

	if (!o->npatterns)
		for (size_t i = 0;
		     i < sizeof(default_patterns) / sizeof(default_patterns[0]);
		     i++)
			o->patterns[o->npatterns++] = default_patterns[i];
	if (frr_sim_cost_parse(o->cost_spec, o->cfg.items, &cost))
		return -EINVAL;
	o->cfg.cost = &cost;
	nrows = o->npatterns * o->nmodes;
	rows = calloc((size_t)nrows, sizeof(*rows));
	err = rows ? run_all(o, rows, &ideal) : -ENOMEM;
	if (!err && !o->quiet)
		print_table(o, rows, nrows, ideal);
	if (!err && o->csv)
		err = write_file(o->csv, o, rows, nrows, ideal, write_csv);
	if (!err && o->json)
		err = write_file(o->json, o, rows, nrows, ideal, write_json);
	for (int i = 0; rows && i < nrows; i++)
		frr_sim_result_free(&rows[i].r);
	free(rows);
	frr_sim_cost_free(&cost);
	o->cfg.cost = NULL;
	return err;
}
