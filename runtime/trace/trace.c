// SPDX-License-Identifier: MIT
/* Timeline trace: per-thread record buffers, JSON written at job end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/file.h"
#include "flexrr/log.h"
#include "trace.h"

#define TRACE_DEFAULT_CAP (1u << 16)

struct frr_trace {
	char *path;
	int rank, nranks, first_worker, nbufs;
	struct frr_trace_buf *bufs;
};

static const char *const kind_names[FRR_TR_NKINDS] = {
	[FRR_TR_CLOCK] = "clock",
	[FRR_TR_WORK] = "work",
	[FRR_TR_SSP_WAIT] = "ssp wait",
	[FRR_TR_HELP_GIVEN] = "helping",
	[FRR_TR_HELP_WAIT] = "waiting for helpers",
	[FRR_TR_DELAY] = "injected delay",
	[FRR_TR_OFFER] = "DoThis",
	[FRR_TR_ACCEPTED] = "BegunHelping",
	[FRR_TR_CANCELLED] = "Cancelled",
	[FRR_TR_HELP_RECVD] = "HelpCompleted",
	[FRR_TR_FLUSH] = "flush",
	[FRR_TR_APPLY] = "apply",
	[FRR_TR_EVAL] = "evaluate",
	[FRR_TR_GLOBAL] = "clock_global",
};

/* Perfetto colours by name ("cname"), so straggling is visible at a glance */
static const char *const kind_colour[FRR_TR_NKINDS] = {
	[FRR_TR_CLOCK] = "grey",
	[FRR_TR_WORK] = "good",
	[FRR_TR_SSP_WAIT] = "terrible",
	[FRR_TR_HELP_GIVEN] = "rail_response",
	[FRR_TR_HELP_WAIT] = "bad",
	[FRR_TR_DELAY] = "black",
	[FRR_TR_OFFER] = "yellow",
	[FRR_TR_ACCEPTED] = "olive",
	[FRR_TR_CANCELLED] = "generic_work",
	[FRR_TR_HELP_RECVD] = "rail_load",
	[FRR_TR_FLUSH] = "rail_idle",
	[FRR_TR_APPLY] = "rail_animation",
	[FRR_TR_EVAL] = "thread_state_runnable",
	[FRR_TR_GLOBAL] = "thread_state_iowait",
};

int frr_trace_create(const char *path, int rank, int nranks, int first_worker,
		     int nworkers_local, uint32_t cap, struct frr_trace **out)
{
	struct frr_trace *t;
	int i;

	if (!path || nworkers_local < 1 || rank < 0 || nranks <= rank)
		return -EINVAL;
	if (!cap)
		cap = TRACE_DEFAULT_CAP;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto err_nomem;
	t->path = strdup(path);
	if (!t->path)
		goto free_t;
	t->bufs = aligned_alloc(64, sizeof(*t->bufs) * (size_t)nworkers_local);
	if (!t->bufs)
		goto free_path;
	memset(t->bufs, 0, sizeof(*t->bufs) * (size_t)nworkers_local);
	for (i = 0; i < nworkers_local; i++) {
		t->bufs[i].rec = calloc(cap, sizeof(struct frr_trace_rec));
		if (!t->bufs[i].rec)
			goto free_recs;
		t->bufs[i].cap = cap;
		t->bufs[i].worker = first_worker + i;
	}
	t->rank = rank;
	t->nranks = nranks;
	t->first_worker = first_worker;
	t->nbufs = nworkers_local;
	*out = t;
	return 0;
free_recs:
	while (i-- > 0)
		free(t->bufs[i].rec);
	free(t->bufs);
free_path:
	free(t->path);
free_t:
	free(t);
err_nomem:
	frr_err("--trace: cannot allocate %u records for %d workers; pass a "
		"smaller trace or fewer clocks",
		cap, nworkers_local);
	return -ENOMEM;
}

void frr_trace_destroy(struct frr_trace *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nbufs; i++)
		free(t->bufs[i].rec);
	free(t->bufs);
	free(t->path);
	free(t);
}

struct frr_trace_buf *frr_trace_buf(struct frr_trace *t, int i)
{
	if (!t || i < 0 || i >= t->nbufs)
		return NULL;
	return &t->bufs[i];
}

uint64_t frr_trace_dropped(const struct frr_trace *t)
{
	uint64_t n = 0;

	for (int i = 0; t && i < t->nbufs; i++)
		n += t->bufs[i].dropped;
	return n;
}

/* ",\"cost\":C" for a span that carries its items' cost, else "". */
static const char *cost_arg(const struct frr_trace_rec *r, char *buf, size_t n)
{
	buf[0] = 0;
	if (r->cost > 0)
		snprintf(buf, n, ",\"cost\":%.1f", r->cost);
	return buf;
}

static void write_rec(FILE *f, int pid, int tid, const struct frr_trace_rec *r)
{
	char cost[48];
	const char *name = r->kind < FRR_TR_NKINDS ? kind_names[r->kind] : "?";
	const char *col = r->kind < FRR_TR_NKINDS ? kind_colour[r->kind] : "";
	double ts = (double)r->t0 / 1e3;

	if (r->kind == FRR_TR_CLOCK) {
		fprintf(f,
			"{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
			"\"dur\":%.3f,\"name\":\"clock %d\",\"cat\":\"clock\","
			"\"cname\":\"%s\",\"args\":{\"clock\":%d}},\n",
			pid, tid, ts, (double)(r->t1 - r->t0) / 1e3, r->clock,
			col, r->clock);
		return;
	}
	if (r->kind == FRR_TR_DELAY) {
		fprintf(f,
			"{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
			"\"dur\":%.3f,\"name\":\"%s\",\"cat\":\"straggler\","
			"\"cname\":\"%s\",\"args\":{\"clock\":%d,"
			"\"factor\":%.2f}},\n",
			pid, tid, ts, (double)(r->t1 - r->t0) / 1e3, name, col,
			r->clock, (double)r->a / 100.0);
		return;
	}
	if (r->kind == FRR_TR_OFFER) /* arrow to the helper's span */
		fprintf(f,
			"{\"ph\":\"s\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
			"\"name\":\"help\",\"cat\":\"rr\","
			"\"id\":\"%d-%d-%llu\"},\n",
			pid, tid, ts, tid, r->clock, (unsigned long long)r->a);
	if (r->t1 == r->t0 && r->kind >= FRR_TR_OFFER) {
		fprintf(f,
			"{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,"
			"\"ts\":%.3f,\"name\":\"%s\",\"cat\":\"rr\","
			"\"args\":{\"clock\":%d,\"peer\":%d,\"begin\":%llu,"
			"\"end\":%llu}},\n",
			pid, tid, ts, name, r->clock, r->peer,
			(unsigned long long)r->a, (unsigned long long)r->b);
		return;
	}
	if (r->kind == FRR_TR_HELP_GIVEN) {
		fprintf(f,
			"{\"ph\":\"f\",\"bp\":\"e\",\"pid\":%d,\"tid\":%d,"
			"\"ts\":%.3f,\"name\":\"help\",\"cat\":\"rr\","
			"\"id\":\"%d-%d-%llu\"},\n",
			pid, tid, ts, r->peer, r->clock,
			(unsigned long long)r->a);
		fprintf(f,
			"{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
			"\"dur\":%.3f,\"name\":\"help w%d\",\"cat\":\"rr\","
			"\"cname\":\"%s\",\"args\":{\"helpee\":%d,\"clock\":%d,"
			"\"begin\":%llu,\"end\":%llu%s}},\n",
			pid, tid, ts, (double)(r->t1 - r->t0) / 1e3, r->peer,
			col, r->peer, r->clock, (unsigned long long)r->a,
			(unsigned long long)r->b,
			cost_arg(r, cost, sizeof(cost)));
		return;
	}
	fprintf(f,
		"{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
		"\"name\":\"%s\",\"cat\":\"worker\",\"cname\":\"%s\","
		"\"args\":{\"clock\":%d,\"begin\":%llu,\"end\":%llu%s}},\n",
		pid, tid, ts, (double)(r->t1 - r->t0) / 1e3, name, col,
		r->clock, (unsigned long long)r->a, (unsigned long long)r->b,
		cost_arg(r, cost, sizeof(cost)));
}

/* This rank's events (no brackets), metadata first. */
static int write_events(const struct frr_trace *t, FILE *f)
{
	fprintf(f,
		"{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\","
		"\"args\":{\"name\":\"rank %d\"}},\n",
		t->rank, t->rank);
	for (int i = 0; i < t->nbufs; i++) {
		const struct frr_trace_buf *b = &t->bufs[i];

		char name[32];

		if (b->worker < 0)
			snprintf(name, sizeof(name), "server");
		else
			snprintf(name, sizeof(name), "worker %d", b->worker);
		fprintf(f,
			"{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
			"\"name\":\"thread_name\",\"args\":{\"name\":"
			"\"%s\"}},\n",
			t->rank, b->worker, name);
		for (uint32_t j = 0; j < b->n; j++)
			write_rec(f, t->rank, b->worker, &b->rec[j]);
	}
	return ferror(f) ? -EIO : 0;
}

struct fill_arg {
	const struct frr_trace *t;
	int timeout_ms;
	const int32_t *part_err; /* NULL: unknown */
};

/* a rank's part: its events */
static int fill_part(FILE *f, void *arg)
{
	const struct fill_arg *a = arg;

	return write_events(a->t, f);
}

/* Another rank's part, once it is there: it appears whole (renamed into
 * place) and is read only if it is a regular file of ours with one link,
 * so nothing another user plants at the predictable name (a symbolic link
 * to a secret, a FIFO that never ends) gets into the trace or hangs it.
 * Something refused is waited past like a part not yet there: our own
 * rank renames its part over it. */
static int open_part(const char *path, int timeout_ms, FILE **in)
{
	/* a deadline, not a count of naps: on a loaded host each nap and
	 * open takes longer, and the launcher's grace after a failed rank
	 * must still outlast the wait */
	long long dl = frr_now_ms() + timeout_ms;

	for (;;) {
		struct timespec ts = { 0, 10 * 1000000L };
		int last = frr_now_ms() >= dl;
		int err = frr_file_open_own(path, last ? "--trace" : NULL, in);

		if (!err)
			return 0;
		if (!last) {
			nanosleep(&ts, NULL);
			continue;
		}
		if (err == -ENOENT)
			frr_err("--trace: %s did not appear within %d ms; its "
				"rank probably failed, the trace lacks it",
				path, timeout_ms);
		else
			frr_err("--trace: the trace lacks %s", path);
		return err;
	}
}

static void append_file(FILE *out, const char *path, int timeout_ms)
{
	char buf[65536];
	size_t n;
	FILE *in;

	if (open_part(path, timeout_ms, &in))
		return; /* keep what we have */
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	unlink(path);
}

/* rank 0's file: its events, then every other rank's part */
static int fill_all(FILE *f, void *arg)
{
	const struct fill_arg *a = arg;
	char part[4096];
	int err;

	fprintf(f, "[\n");
	err = write_events(a->t, f);
	for (int r = 1; r < a->t->nranks && !err; r++) {
		if (snprintf(part, sizeof(part), "%s.rank%d", a->t->path, r) >=
		    (int)sizeof(part)) {
			err = -ENAMETOOLONG;
			break;
		}
		if (a->part_err && a->part_err[r])
			frr_err("--trace: the trace lacks %s: rank %d could "
				"not write it (its error says why)",
				part, r);
		else
			append_file(f, part, a->part_err ? 0 : a->timeout_ms);
	}
	/* a closing event without a trailing comma keeps the JSON strict */
	fprintf(f, "{\"ph\":\"M\",\"pid\":0,\"name\":\"trace_end\","
		   "\"args\":{}}\n]\n");
	return err;
}

int frr_trace_write(struct frr_trace *t, int timeout_ms,
		    const int32_t *part_err)
{
	struct fill_arg a = { t, timeout_ms, part_err };
	char part[4096];
	int err;

	if (!t)
		return 0;
	if (frr_trace_dropped(t))
		frr_warn("--trace: %llu events dropped (buffers full); "
			 "trace fewer clocks",
			 (unsigned long long)frr_trace_dropped(t));
	if (t->rank != 0) {
		if (snprintf(part, sizeof(part), "%s.rank%d", t->path,
			     t->rank) >= (int)sizeof(part))
			return -ENAMETOOLONG;
		return frr_file_write_atomic(part, "--trace", fill_part, &a);
	}
	err = frr_file_write_atomic(t->path, "--trace", fill_all, &a);
	if (!err)
		frr_info("--trace: wrote %s (open it in ui.perfetto.dev)",
			 t->path);
	return err;
}
