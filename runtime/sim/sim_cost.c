// SPDX-License-Identifier: MIT
/*
 * Item cost models of the simulator (--cost SPEC): a constant, a
 * distribution drawn per (seed, worker, clock, item), or the measured
 * per-item times of a real run's `flexrr run --metrics FILE` (compute_s of
 * each worker and clock divided by its items).  A metrics file may hold
 * several runs one after the other (their headers repeat): entries of the
 * same (worker, clock) are averaged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "sim.h"

/* "A" or "A,B,...": at most max numbers and nothing else; the count or -1 */
static int parse_nums(const char *s, double *v, int max)
{
	const char *at = s;
	char *end;
	int n = 0;

	do {
		if (n == max)
			return -1;
		v[n] = strtod(at, &end);
		if (end == at)
			return -1;
		n++;
		at = end + 1;
	} while (*end == ',');
	return *end ? -1 : n;
}

struct acc {
	double *sum;
	int *cnt;
	int nw, nc;
};

static int acc_add(struct acc *a, int w, int c, double v)
{
	if (w >= a->nw || c >= a->nc) {
		int nw = w >= a->nw ? w + 1 + a->nw : a->nw;
		int nc = c >= a->nc ? c + 1 + a->nc : a->nc;
		double *s = calloc((size_t)nw * nc, sizeof(double));
		int *k = calloc((size_t)nw * nc, sizeof(int));

		if (!s || !k) {
			free(s);
			free(k);
			return -ENOMEM;
		}
		for (int i = 0; i < a->nw; i++)
			for (int j = 0; j < a->nc; j++) {
				s[i * nc + j] = a->sum[i * a->nc + j];
				k[i * nc + j] = a->cnt[i * a->nc + j];
			}
		free(a->sum);
		free(a->cnt);
		a->sum = s;
		a->cnt = k;
		a->nw = nw;
		a->nc = nc;
	}
	a->sum[w * a->nc + c] += v;
	a->cnt[w * a->nc + c]++;
	return 0;
}

static int read_metrics(const char *path, struct acc *a, int *maxw, int *maxc)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int rows = 0, err = 0;

	if (!f) {
		err = -errno;
		frr_err("simulate: cannot read the metrics file %s: %s", path,
			strerror(errno));
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		int c, w, r;
		double cs;

		if (line[0] == '{') {
			frr_err("simulate: %s is JSON; write the metrics as "
				"CSV (flexrr run --metrics FILE.csv)",
				path);
			err = -EINVAL;
			break;
		}
		if (sscanf(line, "%d,%d,%d,%lf", &c, &w, &r, &cs) != 4)
			continue; /* a header */
		if (c < 0 || w < 0 || c > 1 << 20 || w > 1 << 20 || cs < 0)
			continue;
		err = acc_add(a, w, c, cs);
		if (err)
			break;
		if (w > *maxw)
			*maxw = w;
		if (c > *maxc)
			*maxc = c;
		rows++;
	}
	fclose(f);
	if (!err && !rows) {
		frr_err("simulate: %s has no metrics rows (clock,worker,rank,"
			"compute_s,...)",
			path);
		err = -EINVAL;
	}
	return err;
}

/* per-item seconds: replay (nc clocks) or per-worker means (nc = 1) */
static int table_from(struct acc *a, int nw, int nc, double items, int mean,
		      struct frr_sim_cost *out)
{
	out->nw = nw;
	out->nc = mean ? 1 : nc;
	out->per = calloc((size_t)nw * out->nc, sizeof(double));
	if (!out->per)
		return -ENOMEM;
	for (int w = 0; w < nw; w++) {
		double s = 0;
		int k = 0;

		for (int c = 0; c < nc; c++) {
			s += a->sum[w * a->nc + c];
			k += a->cnt[w * a->nc + c];
		}
		if (!k) {
			frr_err("simulate: the metrics file has no row of "
				"worker %d",
				w);
			return -EINVAL;
		}
		for (int c = 0; c < out->nc; c++) {
			int n = a->cnt[w * a->nc + c];

			/* a clock missing for one worker: its mean */
			out->per[w * out->nc + c] =
			    (mean || !n ? s / k : a->sum[w * a->nc + c] / n) /
			    items;
		}
	}
	return 0;
}

static int parse_metrics(const char *arg, uint64_t items, int mean,
			 struct frr_sim_cost *out)
{
	char path[512], *comma;
	struct acc a = { 0 };
	int maxw = -1, maxc = -1, err;
	double n = (double)items;

	snprintf(path, sizeof(path), "%s", arg);
	comma = strrchr(path, ',');
	if (comma && comma[1] &&
	    strspn(comma + 1, "0123456789") == strlen(comma + 1)) {
		n = atof(comma + 1);
		*comma = '\0';
	}
	if (n < 1) {
		frr_err("simulate: cost metrics:FILE,ITEMS needs ITEMS >= 1");
		return -EINVAL;
	}
	out->kind = mean ? FRR_SIM_COST_METRICS_MEAN : FRR_SIM_COST_METRICS;
	err = read_metrics(path, &a, &maxw, &maxc);
	if (!err)
		err = table_from(&a, maxw + 1, maxc + 1, n, mean, out);
	free(a.sum);
	free(a.cnt);
	if (!err) {
		const char *base = strrchr(path, '/');

		/* the file's name only: the table stays readable */
		snprintf(out->desc, sizeof(out->desc),
			 "%s:%.60s (%d workers x %d clocks, %.0f items)",
			 mean ? "metrics-mean" : "metrics",
			 base ? base + 1 : path, maxw + 1, maxc + 1, n);
	}
	return err;
}

static void usage_err(const char *spec, const char *why)
{
	frr_err("simulate: cost model '%s': %s.  Give const:US, uniform:LO,HI, "
		"exp:MEAN, lognormal:MEAN,SIGMA (microseconds per item), "
		"metrics:FILE[,ITEMS] or metrics-mean:FILE[,ITEMS] (a flexrr "
		"run --metrics CSV)",
		spec, why);
}

int frr_sim_cost_parse(const char *spec, uint64_t items,
		       struct frr_sim_cost *out)
{
	static const char *const kinds[] = { "const", "uniform", "exp",
					     "lognormal" };
	static const int nargs[] = { 1, 2, 1, 2 };
	const char *colon = strchr(spec, ':');
	double v[2] = { 0, 0 };
	size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);

	memset(out, 0, sizeof(*out));
	if (!colon || !colon[1]) {
		usage_err(spec, "no value");
		return -EINVAL;
	}
	if (klen == 7 && !strncmp(spec, "metrics", 7))
		return parse_metrics(colon + 1, items, 0, out);
	if (klen == 12 && !strncmp(spec, "metrics-mean", 12))
		return parse_metrics(colon + 1, items, 1, out);
	for (int k = 0; k < 4; k++) {
		if (strlen(kinds[k]) != klen || strncmp(spec, kinds[k], klen))
			continue;
		if (parse_nums(colon + 1, v, 2) != nargs[k] || v[0] <= 0 ||
		    v[1] < 0 || (k == 1 && v[1] < v[0])) {
			usage_err(spec, "wrong numbers (positive, LO <= HI)");
			return -EINVAL;
		}
		out->kind = (enum frr_sim_cost_kind)k;
		out->a = v[0] * 1e-6;
		out->b = k == 3 ? v[1] : v[1] * 1e-6;
		snprintf(out->desc, sizeof(out->desc), "%s", spec);
		return 0;
	}
	usage_err(spec, "unknown model");
	return -EINVAL;
}

void frr_sim_cost_free(struct frr_sim_cost *c)
{
	free(c->per);
	c->per = NULL;
}
