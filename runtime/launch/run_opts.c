// SPDX-License-Identifier: MIT
/*
 * The table of the standard run options (flexrr/opt.h): one descriptor per
 * option drives `flexrr run`'s parsing (options.c), its --help and
 * --help=md (usage.c), the defaults of frr_job_init and frr_job_set, so no
 * default or range is written twice.  The fields are those of struct
 * frr_job; compound values (N|Ns, W,E,F, a straggler spec) are callbacks,
 * and the "was it given" flags come from the seen hook.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/base.h"
#include "launch.h"
#include "straggler.h"

#define F(x) offsetof(struct frr_job, x)
#define STR_(x) #x
#define STR(x) STR_(x)

/* the job a callback's field belongs to, for job->prog in messages */
static struct frr_job *job_of(void *obj)
{
	return obj;
}

static void *field(void *obj, const struct frr_opt *o)
{
	return (char *)obj + o->off;
}

/* "-n" for the options that have a letter: the name run always used */
static const char *opt_name(const struct frr_opt *o, char *buf, size_t len)
{
	if (o->letter)
		snprintf(buf, len, "-%c", o->letter);
	else
		snprintf(buf, len, "--%s", o->name);
	return buf;
}

/* run's wording of a bad number, as before the table */
static void bad_value(const struct frr_opt_set *s, const struct frr_opt *o,
		      const char *v, int err)
{
	char n[64];

	(void)err;
	opt_name(o, n, sizeof(n));
	if (o->off == F(o.p.slack) && strtol(v, NULL, 0) < 0)
		fprintf(stderr, "%s: --slack must be >= 0 (0 = BSP), got %s\n",
			s->prog, v);
	else if (o->kind == FRR_OPT_U64)
		fprintf(stderr,
			"%s: %s wants an integer in [0, 2^64), got '%s'\n",
			s->prog, n, v);
	else if (o->kind == FRR_OPT_INT)
		fprintf(stderr,
			"%s: %s wants an integer in [%.0f, %.0f], got '%s'\n",
			s->prog, n, o->lo, o->hi, v);
	else if (o->lo == -DBL_MAX && o->hi == DBL_MAX)
		fprintf(stderr, "%s: %s wants a finite number, got '%s'\n",
			s->prog, n, v);
	else
		fprintf(stderr, "%s: %s wants a number in [%g, %g], got '%s'\n",
			s->prog, n, o->lo, o->hi, v);
}

/* Most often an app's option given before the app's name: say where those
 * go (one line, instead of "unknown option"). */
static void unknown(const struct frr_opt_set *s, const char *arg)
{
	fprintf(stderr,
		"%s: %.*s is not a run option; app options go after the app "
		"name: %s [run options] APP [app options]\n",
		s->prog, (int)strcspn(arg, "="), arg, s->prog);
}

static int opt_mode(void *obj, const struct frr_opt *o, const char *v)
{
	for (int i = 0; i < FRR_NMODES; i++)
		if (!strcmp(v, frr_mode_name(i))) {
			*(enum frr_mode *)field(obj, o) = (enum frr_mode)i;
			return 0;
		}
	fprintf(stderr,
		"%s: unknown mode '%s': use bsp, ssp, async, flexrr, rr, "
		"backup or lb-bsp\n",
		job_of(obj)->prog, v);
	return -EINVAL;
}

static int opt_backend(void *obj, const struct frr_opt *o, const char *v)
{
	if (!frr_tp_backend_parse(v, field(obj, o)))
		return 0;
	fprintf(stderr, "%s: unknown backend '%s': use shm, verbs or auto\n",
		job_of(obj)->prog, v);
	return -EINVAL;
}

/* Seconds: 1 ms .. FRR_MAX_SECONDS (a deadline in int milliseconds). */
#define FRR_MAX_SECONDS 1e6
static int seconds_ms(const struct frr_job *job, const char *name,
		      const char *v, int *ms)
{
	double d;

	if (frr_parse_double(v, 0.001, FRR_MAX_SECONDS, &d)) {
		fprintf(stderr,
			"%s: --%s wants a number in [%g, %g], got '%s'\n",
			job->prog, name, 0.001, FRR_MAX_SECONDS, v);
		return -EINVAL;
	}
	*ms = (int)llround(d * 1000);
	return 0;
}

/* --timeout, --dead-timeout, --load-timeout: seconds given, milliseconds
 * kept */
static int opt_ms(void *obj, const struct frr_opt *o, const char *v)
{
	return seconds_ms(job_of(obj), o->name, v, field(obj, o));
}

/* --rendezvous-timeout: seconds kept, at the same 1 ms grain */
static int opt_seconds(void *obj, const struct frr_opt *o, const char *v)
{
	int ms, err = seconds_ms(job_of(obj), o->name, v, &ms);

	if (!err)
		*(double *)field(obj, o) = ms / 1000.0;
	return err;
}

/* --checkpoint-every N (clocks) or Ns (seconds). */
static int opt_ckpt_every(void *obj, const struct frr_opt *o, const char *v)
{
	struct frr_job *job = job_of(obj);
	size_t n = strlen(v);
	int64_t c;
	int ms = 0;

	(void)o;
	if (n > 1 && v[n - 1] == 's') {
		char num[64];

		snprintf(num, sizeof(num), "%.*s", (int)(n - 1), v);
		if (seconds_ms(job, "checkpoint-every", num, &ms))
			return -EINVAL;
		job->o.p.ckpt_every_s = ms / 1000.0;
		job->o.p.ckpt_every = 0;
		return 0;
	}
	if (frr_parse_i64(v, 0, 1, 1000000, &c)) {
		fprintf(stderr,
			"%s: --checkpoint-every wants an integer in [1, "
			"1000000], got '%s'\n",
			job->prog, v);
		return -EINVAL;
	}
	job->o.p.ckpt_every = (int)c;
	job->o.p.ckpt_every_s = 0;
	return 0;
}

static int opt_delay(void *obj, const struct frr_opt *o, const char *v)
{
	struct frr_run_opts *r = &job_of(obj)->o;
	int used = 0;

	(void)o;
	if (sscanf(v, "%d,%d,%lf%n", &r->p.delay_worker, &r->p.delay_every,
		   &r->p.delay_factor, &used) != 3 ||
	    v[used] || r->p.delay_worker < -1 || r->p.delay_every < 1 ||
	    !(r->p.delay_factor >= 0 && r->p.delay_factor <= 1e6)) {
		fprintf(
		    stderr,
		    "%s: --delay-worker wants W,EVERY,FACTOR (e.g. 0,5,1.0; "
		    "W = -1: a different worker each time)\n",
		    job_of(obj)->prog);
		return -EINVAL;
	}
	return 0;
}

/* Refused: any local user reads a command line (/proc/PID/cmdline). */
static int opt_token(void *obj, const struct frr_opt *o, const char *v)
{
	(void)o, (void)v;
	fprintf(stderr,
		"%s: --job-token would show the job secret to every local user "
		"(ps, /proc/PID/cmdline): set FLEXRR_JOB_TOKEN or "
		"FLEXRR_JOB_TOKEN_FILE instead, e.g. export "
		"FLEXRR_JOB_TOKEN=$(openssl rand -hex 32)\n",
		job_of(obj)->prog);
	return -EINVAL;
}

static int opt_bootstrap(void *obj, const struct frr_opt *o, const char *v)
{
	static const char *const names[] = { "auto", "pmix", "tcp" };

	for (int i = 0; i < 3; i++)
		if (!strcmp(v, names[i])) {
			*(enum frr_boot *)field(obj, o) = (enum frr_boot)i;
			return 0;
		}
	fprintf(stderr, "%s: --bootstrap wants auto, pmix or tcp, got '%s'\n",
		job_of(obj)->prog, v);
	return -EINVAL;
}

static int opt_stragglers(void *obj, const struct frr_opt *o, const char *v)
{
	if (!*v) {
		fprintf(stderr,
			"%s: --stragglers wants a spec (or 'none'), got an "
			"empty one; see --help\n",
			job_of(obj)->prog);
		return -EINVAL;
	}
	/* a usage error, said once here, not once per rank */
	if (frr_stragglers_parse(v, &(struct frr_stragglers){ 0 }))
		return -EINVAL;
	*(const char **)field(obj, o) = v;
	return 0;
}

/* Which options were given: what finalize derives depends on it (--slack
 * alone means ssp, --checkpoint-every needs --checkpoint, ...). */
static void seen(void *obj, const struct frr_opt *o)
{
	struct frr_job *job = obj;

	job->have_procs |= o->off == F(o.nprocs);
	job->have_mode |= o->off == F(o.p.mode);
	job->have_slack |= o->off == F(o.p.slack);
	job->o.p.have_target |= o->off == F(o.p.target);
	job->have_ckpt_every |= o->off == F(o.p.ckpt_every);
	job->have_timeouts |= o->off == F(o.p.timeout_ms) ? 1
			      : o->off == F(o.p.dead_ms)  ? 2
							  : 0;
}

/* the defaults no option sets */
static void defaults(void *obj)
{
	struct frr_job *job = obj;

	job->o.p.local_rank = -1;
	job->o.p.delay_worker = -1; /* no delayed worker */
}

#define JOB "job:"
#define LAUNCHED "launcher-started ranks:"
#define ANY "any mode:"
#define RR "RapidReassignment (modes flexrr, rr; docs/rapidreassignment.md):"
#define ANYBASE .flags = FRR_OPT_ANYBASE
#define DEFTEXT(t) .def.s = (t), .flags = FRR_OPT_DEFTEXT

/* FRR_ON_FAILURE_* order (launch.h) */
static const char *const on_failure_names[] = { "fail", "restart", "recover",
						NULL };

const char *frr_job_on_failure_name(int on_failure)
{
	return on_failure >= 0 && on_failure <= FRR_ON_FAILURE_RECOVER
		   ? on_failure_names[on_failure]
		   : "?";
}

static const struct frr_opt run_table[] = {
	FRR_OPT("procs", 'n', FRR_OPT_INT, F(o.nprocs), 1, 4096, .def.i = 1,
		ANYBASE, .group = JOB, .arg = "P",
		.help = "processes of a local job"),
	FRR_OPT("threads", 't', FRR_OPT_INT, F(o.p.threads), 1, 1024,
		.def.i = 1, ANYBASE, .group = JOB, .arg = "T",
		.help = "worker threads per process"),
	FRR_OPT("backend", 0, FRR_OPT_FUNC, F(o.p.backend), 0, 0,
		.parse = opt_backend, DEFTEXT("auto"), .group = JOB, .arg = "B",
		.help = "shm | verbs | auto (auto: verbs when a device is\n"
			"up, else shm)"),
	FRR_OPT("mode", 0, FRR_OPT_FUNC, F(o.p.mode), 0, 0, .parse = opt_mode,
		DEFTEXT("bsp"), .group = JOB, .arg = "M",
		.help = "bsp | ssp | async | flexrr | rr | backup |\n"
			"lb-bsp\n"
			"(ssp when --slack is given)"),
	FRR_OPT("slack", 0, FRR_OPT_INT, F(o.p.slack), 0, FRR_RT_MAX_SLACK,
		.def.i = -1, ANYBASE, .group = JOB, .arg = "S",
		.def_text = "1, async: 0",
		.help = "SSP slack, 0.." STR(FRR_RT_MAX_SLACK)),
	FRR_OPT("eager", 0, FRR_OPT_FLAG, F(o.p.eager), 0, 0, .group = JOB,
		.help = "ssp, flexrr, async: apply each update batch as\n"
			"it arrives, so reads show every update the rank\n"
			"has, not only those of complete clocks (fresher,\n"
			"not deterministic; more row pushes)"),
	FRR_OPT("backups", 0, FRR_OPT_INT, F(o.p.backups), 1, 4095, .def.i = -1,
		.group = JOB, .arg = "N",
		.def_text = "5% of the workers, at least 1",
		.help = "--mode backup: a clock waits for all workers but\n"
			"N; the N still running drop the rest of their\n"
			"items (counted: dropped= in the summary)"),
	FRR_OPT("lb-history", 0, FRR_OPT_INT, F(o.p.lb_history), 1,
		FRR_LB_HISTORY_MAX, .def.i = -1, .group = JOB, .arg = "N",
		.def_text = STR(FRR_LB_HISTORY_DEFAULT),
		.help = "--mode lb-bsp: clocks of per-item times that\n"
			"predict each worker's speed (its share of the\n"
			"next clock)"),
	FRR_OPT("clocks", 0, FRR_OPT_INT, F(o.p.clocks), 1, 1000000,
		.def.i = 10, ANYBASE, .group = JOB, .arg = "N",
		.help = "clocks to run"),
	FRR_OPT("target", 0, FRR_OPT_DOUBLE, F(o.p.target), -DBL_MAX, DBL_MAX,
		.flags = FRR_OPT_NODEF, .group = JOB, .arg = "V",
		.help = "stop early once the objective reaches V"),
	FRR_OPT("seed", 0, FRR_OPT_U64, F(o.p.seed), 0, 0, .def.u = 1, ANYBASE,
		.group = JOB, .arg = "S", .help = "random seed"),
	FRR_OPT("quiet", 'q', FRR_OPT_FLAG, F(o.p.quiet), 0, 0, .group = JOB,
		.help = "no per-clock progress line on stderr"),
	FRR_OPT("metrics", 0, FRR_OPT_STRING, F(o.p.metrics_path), 0, 0,
		.group = JOB, .arg = "FILE",
		.help = "per worker per clock CSV, JSON lines when FILE\n"
			"contains .json (rank 0 writes it)"),
	FRR_OPT("save", 0, FRR_OPT_STRING, F(o.p.save_path), 0, 0, .group = JOB,
		.arg = "FILE",
		.help = "save the model at the end (apps that can)"),
	FRR_OPT("load", 0, FRR_OPT_STRING, F(o.p.load_path), 0, 0, .group = JOB,
		.arg = "FILE",
		.help = "start from a saved model (apps that can)"),
	FRR_OPT("checkpoint", 0, FRR_OPT_STRING, F(o.p.ckpt_dir), 0, 0,
		.group = JOB, .arg = "DIR",
		.help = "write a consistent checkpoint into DIR (a directory\n"
			"every rank shares) every --checkpoint-every"),
	FRR_OPT("checkpoint-every", 0, FRR_OPT_FUNC, F(o.p.ckpt_every), 0, 0,
		.parse = opt_ckpt_every, DEFTEXT("10"), .group = JOB,
		.arg = "N",
		.help = "N clocks, or Ns: a clock boundary about\n"
			"every N seconds"),
	FRR_OPT("resume", 0, FRR_OPT_STRING, F(o.p.resume_dir), 0, 0,
		.group = JOB, .arg = "DIR",
		.help = "continue from DIR's newest complete checkpoint\n"
			"(same app, options, data, -n and -t)"),
	FRR_OPT("on-failure", 0, FRR_OPT_CHOICE, F(on_failure), 0, 0,
		.group = JOB, .arg = "fail|restart|recover",
		.choices = on_failure_names,
		.help = "when a rank dies: fail (every rank stops, naming\n"
			"it); restart (a local -n P job starts again from\n"
			"the newest checkpoint in its --checkpoint DIR);\n"
			"recover (the survivors carry on from that\n"
			"checkpoint, running the lost ranks); a local job\n"
			"without --checkpoint keeps them in /dev/shm"),
	FRR_OPT("max-restarts", 0, FRR_OPT_INT, F(max_restarts), 0, 1000,
		.def.i = 3, ANYBASE, .group = JOB, .arg = "N",
		.help = "restarts a --on-failure restart job may make"),
	FRR_OPT("no-pin", 0, FRR_OPT_FLAG, F(o.p.pin), 0, 0, .def.i = 1,
		.group = JOB, .help = "do not pin worker threads to cores"),
	FRR_OPT("shared-transport", 0, FRR_OPT_FLAG, F(o.p.shared_tp), 0, 0,
		.group = JOB,
		.help = "a rank's threads send their updates through one\n"
			"transport context, taking turns (default: each\n"
			"thread its own, sending in parallel)"),
	FRR_OPT("no-standby", 0, FRR_OPT_FLAG, F(o.p.no_standby), 0, 0,
		.group = JOB,
		.help = "keep no standby copy of each shard on the next\n"
			"rank (a shard's memory and its pushes; nothing\n"
			"restores from it yet: recovery reads checkpoints)"),
	FRR_OPT("lanes", 0, FRR_OPT_INT, F(o.p.lanes), 0, 4096, ANYBASE,
		.group = JOB, .arg = "N",
		.help = "a rank's threads share N transport contexts to\n"
			"send (0: one per thread); each costs a context and\n"
			"a connection (a QP on verbs) per peer on both sides"),
	FRR_OPT("allow-nonfinite", 0, FRR_OPT_FLAG, F(o.p.allow_nonfinite), 0,
		0, .group = JOB,
		.help = "run on when the objective is nan or inf\n"
			"(without it the run fails at that clock)"),
	FRR_OPT("timeout", 0, FRR_OPT_FUNC, F(o.p.timeout_ms), 0, 0,
		.parse = opt_ms, DEFTEXT("60"), .group = JOB, .arg = "S",
		.help = "fail when no worker of the job made progress\n"
			"for S s (a hang, not a long clock)"),
	FRR_OPT("dead-timeout", 0, FRR_OPT_FUNC, F(o.p.dead_ms), 0, 0,
		.parse = opt_ms, DEFTEXT("5"), .group = JOB, .arg = "S",
		.help = "a silent peer is declared dead after S s"),
	FRR_OPT("load-timeout", 0, FRR_OPT_FUNC, F(o.p.load_ms), 0, 0,
		.parse = opt_ms, DEFTEXT("600"), .group = JOB, .arg = "S",
		.help = "while the ranks load their input, fail when one\n"
			"waited S s for another (a slower disk is no hang)"),
	FRR_OPT("delay-worker", 0, FRR_OPT_FUNC, F(o.p.delay_worker), 0, 0,
		.parse = opt_delay, .group = JOB, .arg = "W,E,F",
		.help = "bench: worker W sleeps F x its clock time every\n"
			"E-th clock (W = -1: a different worker\n"
			"each time)"),
	FRR_OPT("rendezvous", 0, FRR_OPT_STRING, F(o.rendezvous), 0, 0,
		.group = LAUNCHED, .arg = "HOST:PORT",
		.help = "rank 0's address (env FLEXRR_RENDEZVOUS); on one\n"
			"host a port is derived from the launcher's job id"),
	FRR_OPT("job-token", 0, FRR_OPT_FUNC, 0, 0, 0, .parse = opt_token,
		.group = LAUNCHED, .arg = "T",
		.help = "refused (a command line is public): the job\n"
			"secret is env FLEXRR_JOB_TOKEN or\n"
			"FLEXRR_JOB_TOKEN_FILE, the same on every rank;\n"
			"pmix without it: a random one from rank 0;\n"
			"local jobs: random"),
	FRR_OPT("rendezvous-timeout", 0, FRR_OPT_FUNC, F(rdv_timeout), 0, 0,
		.parse = opt_seconds, DEFTEXT("20"), .group = LAUNCHED,
		.arg = "S", .help = "how long ranks wait for each other"),
	FRR_OPT("bootstrap", 0, FRR_OPT_FUNC, F(boot), 0, 0,
		.parse = opt_bootstrap, DEFTEXT("auto"), .group = LAUNCHED,
		.arg = "B",
		.help = "how the ranks meet: pmix (through the launcher's\n"
			"PMIx server: mpirun, srun --mpi=pmix), tcp (the\n"
			"rendezvous above) or auto (pmix when the launcher\n"
			"offers it and no rendezvous address is given,\n"
			"else tcp); rank 0 says which on stderr"),
	FRR_OPT("stragglers", 0, FRR_OPT_FUNC, F(o.p.rr.stragglers), 0, 0,
		.parse = opt_stragglers, .group = ANY, .arg = "SPEC",
		.help = "inject stragglers in any mode, e.g.\n"
			"slow-worker:0.1,1.0 (a bad SPEC lists the forms)"),
	FRR_OPT("trace", 0, FRR_OPT_STRING, F(o.p.rr.trace_path), 0, 0,
		.group = ANY, .arg = "FILE",
		.help = "write a Chrome/Perfetto timeline of the job"),
	FRR_OPT("rr-group", 0, FRR_OPT_INT, F(o.p.rr.group_size), 1, 64,
		.def.i = 4, ANYBASE, .group = RR, .arg = "G",
		.help = "helpers per worker, at most W-1 and 16"),
	FRR_OPT("rr-rows-from-start", 0, FRR_OPT_FLAG,
		F(o.p.rr_rows_from_start), 0, 0, .group = RR,
		.help =
		    "receive the rows of the partitions a rank's\n"
		    "workers may help every clock from the start (default:\n"
		    "from the first read of one of an owner's rows)"),
	FRR_OPT("rr-threshold", 0, FRR_OPT_DOUBLE, F(o.p.rr.threshold), 0, 1,
		.def.d = 0.2, .group = RR, .arg = "F",
		.help = "offer work to a helper ahead by more than F of a\n"
			"clock"),
	FRR_OPT("rr-link-weight", 0, FRR_OPT_DOUBLE, F(o.p.rr.link_weight), 0,
		10, .group = RR, .arg = "K",
		.help = "... and by K times the share of the worker's last\n"
			"clock spent waiting and flushing; 0 is off"),
	FRR_OPT("rr-min-share", 0, FRR_OPT_DOUBLE, F(o.p.rr.min_share), 0, 1,
		.def.d = 0.05, .group = RR, .arg = "F",
		.help = "... if more than F of the clock is still unstarted"),
	FRR_OPT("rr-report", 0, FRR_OPT_INT, F(o.p.rr.report_interval), 1, 1024,
		.def.i = 16, ANYBASE, .group = RR, .arg = "N",
		.help = "progress reports per clock; more adds reports\n"
			"every 1/N"),
	FRR_OPT("rr-max-helpers", 0, FRR_OPT_INT, F(o.p.rr.max_helpers), 0, 64,
		ANYBASE, .def_text = "G", .group = RR, .arg = "N",
		.help = "open offers a worker has at once"),
	{ 0 },
};

static const struct frr_opt_set run_set = {
	.prog = "flexrr run",
	.see = "'flexrr run --help'",
	.opts = run_table,
	.size = sizeof(struct frr_job),
	.defaults = defaults,
	.seen = seen,
	.bad_value = bad_value,
	.unknown = unknown,
	.plain = 1,
	.stop = 1,   /* the app's name ends the run options */
	.bundle = 1, /* getopt took "-qn2" */
};

void frr_job_opt_set(const struct frr_job *job, struct frr_opt_set *s,
		     char *see, size_t len)
{
	*s = run_set;
	if (job && job->prog) { /* messages name the program that parses */
		s->prog = job->prog;
		snprintf(see, len, "'%s --help'", job->prog);
		s->see = see;
	}
}
