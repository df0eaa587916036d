// SPDX-License-Identifier: MIT
/*
 * One option system (issue 25, item 4): every converted command's --help is
 * printed from its table (the apps, run, demo, simulate, bench), so the two
 * must agree both ways (every option of the table in --help with its default,
 * no option in --help without a table entry), and a bad value is a usage error:
 * exit 2, said once. The apps' tables are read in this process
 * (frr_app_ops.opts); the CLI's (simulate, bench) through `--help=md`, the same
 * table as Markdown.
 */
#include <criterion/criterion.h>
#include <ctype.h>

#include "flexrr/flexrr.h"
#include "flexrr/job.h"
#include "flexrr/opt.h"
#include "test_runtime_util.h"

extern const struct frr_app_ops frr_app_toy, frr_app_mf, frr_app_mlr,
    frr_app_lda;

TestSuite(opt_tables, .timeout = 120);

/* The --help lines of option `name` (from its "--name" to the next option
 * line or blank line), copied into buf; NULL if no option line has it. */
static const char *help_block(const char *help, const char *name, char *buf,
			      size_t len)
{
	char pat[96];
	size_t n = (size_t)snprintf(pat, sizeof(pat), "--%s", name);

	for (const char *l = help; l && *l;
	     l = strchr(l, '\n'), l = l ? l + 1 : l) {
		const char *p = l + strspn(l, " ");
		const char *end;

		if (p[0] != '-')
			continue;
		if (p[1] != '-' && p[2] == ',') /* "-x, --name" */
			p += 4;
		if (strncmp(p, pat, n) || (p[n] != ' ' && p[n] != '\n'))
			continue;
		for (end = strchr(p, '\n'); end && end[1] == ' ';
		     end = strchr(end + 1, '\n')) {
			const char *q = end + 1 + strspn(end + 1, " ");

			if (*q == '-' || *q == '\n')
				break;
		}
		snprintf(buf, len, "%.*s",
			 end ? (int)(end - l) : (int)strlen(l), l);
		return buf;
	}
	return NULL;
}

/* Every "--name" that starts an option line of help, passed to f. */
static void each_help_option(const char *help,
			     void (*f)(const char *name, void *arg), void *arg)
{
	for (const char *l = help; l && *l;
	     l = strchr(l, '\n'), l = l ? l + 1 : l) {
		const char *p = l + strspn(l, " ");
		char name[64];

		if (p == l || p[0] != '-')
			continue;
		if (p[1] != '-' && p[2] == ',')
			p += 4;
		if (strncmp(p, "--", 2))
			continue;
		snprintf(name, sizeof(name), "%.*s",
			 (int)strcspn(p + 2, " \n="), p + 2);
		f(name, arg);
	}
}

/* s with every run of white space (a wrapped line) as one space */
static void squash(char *s)
{
	char *w = s;

	for (const char *r = s; *r; r++)
		if (!(isspace((unsigned char)*r) && w > s && w[-1] == ' '))
			*w++ = isspace((unsigned char)*r) ? ' ' : *r;
	*w = 0;
}

/* One option's check: in --help, with its default (wrapped or not). */
static void expect_in_help(const char *cmd, const char *help, const char *name,
			   const char *def)
{
	char block[2048], want[160];

	cr_assert_not_null(help_block(help, name, block, sizeof(block)),
			   "%s: --%s is in the table, not in --help:\n%s", cmd,
			   name, help);
	if (!*def)
		return;
	snprintf(want, sizeof(want), "(default %s)", def);
	squash(block);
	squash(want);
	cr_expect_not_null(strstr(block, want),
			   "%s --%s: no '%s' in its help:\n%s", cmd, name, want,
			   block);
}

struct app_check {
	const char *cmd;
	const struct frr_opt_set *set;
};

static void in_app_table(const char *name, void *arg)
{
	const struct app_check *c = arg;

	cr_expect(!strcmp(name, "help") || frr_opt_find(c->set, name),
		  "%s: --%s is in --help but not in the table", c->cmd, name);
}

Test(opt_tables, app_help_matches_its_table)
{
	const struct frr_app_ops *apps[] = { &frr_app_toy, &frr_app_mf,
					     &frr_app_mlr, &frr_app_lda };
	struct rt_run *r = calloc(1, sizeof(*r));

	for (size_t i = 0; i < sizeof(apps) / sizeof(apps[0]); i++) {
		const struct frr_opt_set *s = apps[i]->opts;
		char *argv[] = { (char *)rt_bin(), "run", (char *)apps[i]->name,
				 "--help", NULL };
		struct app_check c = { apps[i]->name, s };
		void *d;

		cr_assert_not_null(s, "%s has no option table", apps[i]->name);
		rt_exec(r, argv, NULL, 30);
		cr_assert_eq(r->code, 0, "%s --help: exit %d: %s",
			     apps[i]->name, r->code, r->err);
		d = calloc(1, s->size);
		frr_opt_defaults(s, d);
		for (const struct frr_opt *o = s->opts; o->name; o++) {
			char def[128];

			frr_opt_default_str(o, d, def, sizeof(def));
			expect_in_help(apps[i]->name, r->out, o->name, def);
		}
		each_help_option(r->out, in_app_table, &c);
		free(d);
	}
	free(r);
}

/* ---- the CLI's tables, as Markdown rows "| `-x`, `--name` | ARG | DEF |" */

struct md_check {
	const char *cmd, *md;
};

static void in_md_table(const char *name, void *arg)
{
	const struct md_check *c = arg;
	char pat[80];

	snprintf(pat, sizeof(pat), "`--%s` |", name);
	cr_expect(!strcmp(name, "help") || strstr(c->md, pat),
		  "%s: --%s is in --help but not in the table", c->cmd, name);
}

/* Past the next cell separator: a '|' not escaped as "\\|" */
static const char *md_next(const char *p)
{
	for (; *p && *p != '\n'; p++)
		if (*p == '|' && p[-1] != '\\')
			return p + 1;
	return p;
}

/* Each row of the table: its name and default, checked against help. */
static int md_rows(const char *cmd, const char *md, const char *help)
{
	int rows = 0;

	for (const char *l = strstr(md, "\n| `"); l;
	     l = strstr(l + 1, "\n| `")) {
		const char *p = strstr(l, "`--"), *cell;
		char name[64], def[128];

		cr_assert_not_null(p, "%s: a row without a long name", cmd);
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(p + 3, "`"),
			 p + 3);
		cell = md_next(md_next(p)); /* the default */
		cell += strspn(cell, " ");
		snprintf(def, sizeof(def), "%.*s",
			 (int)(md_next(cell) - 1 - cell), cell);
		for (size_t n = strlen(def); n && def[n - 1] == ' ';)
			def[--n] = 0;
		expect_in_help(cmd, help, name, def);
		rows++;
	}
	return rows;
}

Test(opt_tables, cli_help_matches_its_table)
{
	static const char *cmds[][3] = { { "simulate", NULL, NULL },
					 { "bench", NULL, NULL },
					 { "run", NULL, NULL },
					 { "demo", NULL, NULL } };
	struct rt_run *r = calloc(1, sizeof(*r));
	static char md[RT_OUT_MAX];

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *hmd[] = { (char *)rt_bin(), (char *)cmds[i][0],
				"--help=md", NULL };
		char *h[] = { (char *)rt_bin(), (char *)cmds[i][0], "--help",
			      NULL };
		struct md_check c = { cmds[i][0], md };

		rt_exec(r, hmd, NULL, 30);
		cr_assert_eq(r->code, 0, "%s --help=md: %s", cmds[i][0],
			     r->err);
		snprintf(md, sizeof(md), "%s", r->out);
		rt_exec(r, h, NULL, 30);
		cr_assert_eq(r->code, 0, "%s --help: %s", cmds[i][0], r->err);
		cr_expect_gt(md_rows(cmds[i][0], md, r->out), 5, "%s: %s",
			     cmds[i][0], md);
		each_help_option(r->out, in_md_table, &c);
	}
	free(r);
}

/* Lines of s that contain pat */
static int lines_with(const char *s, const char *pat)
{
	int n = 0;

	for (const char *l = s; l && *l;
	     l = strchr(l, '\n'), l = l ? l + 1 : l) {
		const char *e = strchr(l, '\n');
		const char *hit = strstr(l, pat);

		n += hit && (!e || hit < e);
	}
	return n;
}

/* A bad value or an unknown option: exit 2 and one line that names it,
 * before anything runs (with -n 2: said by the launcher, not per rank). */
Test(opt_tables, bad_value_exits_2_once)
{
	static const char *cases[][10] = {
		{ "simulate", "--clocks", "0" },
		{ "simulate", "-n", "0x" },
		{ "simulate", "--bogus", "1" },
		{ "simulate", "--net", "tcp" },
		{ "bench", "write_lat", "--port", "0" },
		{ "bench", "write_lat", "--bogus" },
		{ "bench", "write_lat", "--iters" },
		{ "run", "-n", "2", "toy", "--dim", "0" },
		{ "run", "-n", "2", "toy", "--adagrad=1" },
		{ "run", "-n", "2", "mf", "--synthetic", "9,9,9", "--rank",
		  "0" },
		{ "run", "-n", "2", "mlr", "--data", "fashion-mnist", "--batch",
		  "0" },
		{ "run", "-n", "2", "mlr", "--data", "fashion-mnist",
		  "--combine=max" },
		{ "run", "-n", "2", "lda", "--uci", "x", "--sampler", "fast" },
		{ "run", "-n", "2", "lda", "--uci", "x", "--bogus" },
		/* the run options themselves, said by the launcher once, not
		 * by each of the 3 ranks (a bad --stragglers spec is said once
		 * too, with the forms it takes: test_runtime_job) */
		{ "run", "-n", "3", "--clocks", "0", "toy" },
		{ "run", "-n", "0x", "toy" },
		{ "run", "-n", "3", "--slack", "-1", "toy" },
		{ "run", "-n", "3", "--mode", "warp" },
		{ "run", "-n", "3", "--timeout", "nan", "toy" },
		{ "run", "-n", "3", "--checkpoint-every", "0s", "toy" },
		{ "run", "-n", "3", "--bogus", "toy" },
		{ "run", "-n", "3", "--clocks" },
		{ "demo", "--clocks", "x" },
		{ "demo", "--rank", "0" },
		{ "demo", "--bogus", "1" },
	};
	struct rt_run *r = calloc(1, sizeof(*r));

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[12] = { (char *)rt_bin() }, opt[64];
		const char *named = NULL, *last = NULL;
		int n = 1;

		for (int k = 0; k < 10 && cases[i][k]; k++) {
			argv[n++] = (char *)cases[i][k];
			last = cases[i][k];
			if (!strncmp(cases[i][k], "--", 2) && k > 0)
				named = cases[i][k]; /* the last option */
		}
		rt_exec(r, argv, NULL, 30);
		cr_expect_eq(r->code, 2, "%s ... %s: exit %d (want 2): %s",
			     cases[i][0], named, r->code, r->err);
		snprintf(opt, sizeof(opt), "%.*s",
			 named ? (int)strcspn(named, "=") : 2,
			 named ? named : "-n");
		named = opt;
		/* one line, naming the option (bench's wording names what
		 * the value is: "invalid port '0'") */
		cr_expect(rt_count(r->err, "\n") == 1 &&
			      (lines_with(r->err, named) == 1 ||
			       lines_with(r->err, last) == 1),
			  "%s ... %s: not said once:\n%s", cases[i][0], named,
			  r->err);
	}
	free(r);
}

/* The docs' option tables pasted from `--help=md` (between "<!-- generated:
 * build/bin/flexrr CMD --help=md" and "<!-- end generated -->") are the
 * tables' current output: a changed option fails here until the docs are
 * pasted again. */
Test(opt_tables, docs_tables_are_current)
{
	static const char *docs[][2] = { { "docs/runtime.md", "run" },
					 { "docs/demo.md", "demo" } };
	struct rt_run *r = calloc(1, sizeof(*r));
	static char doc[1 << 17];

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		char *hmd[] = { (char *)rt_bin(), (char *)docs[i][1],
				"--help=md", NULL };
		char path[512], mark[128];
		const char *at, *end;
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "%s/%s", FLEXRR_SRC, docs[i][0]);
		f = fopen(path, "r");
		cr_assert_not_null(f, "%s", path);
		n = fread(doc, 1, sizeof(doc) - 1, f);
		doc[n] = 0;
		fclose(f);
		snprintf(mark, sizeof(mark),
			 "<!-- generated: build/bin/flexrr %s --help=md",
			 docs[i][1]);
		at = strstr(doc, mark);
		cr_assert_not_null(at, "%s: no '%s'", path, mark);
		at = strchr(at, '\n') + 1;
		end = strstr(at, "<!-- end generated -->");
		cr_assert_not_null(end, "%s: no end of the table", path);
		rt_exec(r, hmd, NULL, 30);
		cr_assert_eq(r->code, 0, "%s --help=md: %s", docs[i][1],
			     r->err);
		cr_expect(strlen(r->out) == (size_t)(end - at) &&
			      !strncmp(at, r->out, (size_t)(end - at)),
			  "%s is not `flexrr %s --help=md`: paste it again",
			  path, docs[i][1]);
	}
	free(r);
}

/* An app's option before the app's name: one line that says where app
 * options go (also inside bundled short flags), and none for a run option
 * that only lacks its value. */
Test(opt_tables, app_option_before_the_app_gets_the_hint)
{
	static const char *cases[][6] = {
		{ "run", "-n", "3", "--dim", "4", "toy" },
		{ "run", "-qn3", "--dim=4", "toy" },
		{ "run", "-n", "3", "-x", "toy" },
		{ "run", "-qx", "toy" },
	};
	static const char *hint = " is not a run option; app options go after "
				  "the app name: flexrr run [run options] APP "
				  "[app options]";
	struct rt_run *r = calloc(1, sizeof(*r));

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[8] = { (char *)rt_bin() };
		int n = 1;

		for (int k = 0; k < 6 && cases[i][k]; k++)
			argv[n++] = (char *)cases[i][k];
		rt_exec(r, argv, NULL, 30);
		cr_expect_eq(r->code, 2, "case %zu: exit %d: %s", i, r->code,
			     r->err);
		cr_expect(rt_count(r->err, "\n") == 1 &&
			      lines_with(r->err, hint) == 1,
			  "case %zu: no one-line hint:\n%s", i, r->err);
	}
	cr_expect_not_null(strstr(r->err, "-x is not a run option"), "%s",
			   r->err);
	free(r);
}

/* A value frr_job_set takes for an option of run's --help=md, by the name
 * of its value; NULL for a flag. */
static const char *a_value(const char *arg)
{
	static const char *const v[][2] = {
		{ "M", "ssp" },		{ "B", "auto" },
		{ "V", "0.5" },		{ "F", "0.1" },
		{ "FILE", "/tmp/x" },	{ "DIR", "/tmp" },
		{ "W,E,F", "0,2,1.0" }, { "HOST:PORT", "127.0.0.1:1" },
		{ "SPEC", "none" },
	};

	if (!*arg)
		return NULL;
	if (islower((unsigned char)*arg))
		return arg; /* a choice (a|b|c): its first value */
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcmp(arg, v[i][0]))
			return v[i][1];
	return "2"; /* N, P, T, S, G: a count */
}

/* frr_job_set (the embedding API) looks options up in the table --help
 * prints: every option run lists is one it sets (but the refused
 * --job-token), and no other. */
Test(opt_tables, frr_job_set_knows_every_run_option)
{
	char *hmd[] = { (char *)rt_bin(), "run", "--help=md", NULL };
	struct rt_run *r = calloc(1, sizeof(*r));
	struct frr_job *job;
	int rows = 0;

	rt_exec(r, hmd, NULL, 30);
	cr_assert_eq(r->code, 0, "run --help=md: %s", r->err);
	cr_assert_eq(frr_job_create(&frr_app_toy, &job), 0);
	for (const char *l = strstr(r->out, "\n| `"); l;
	     l = strstr(l + 1, "\n| `")) {
		const char *p = strstr(l, "`--"), *cell = md_next(p);
		char name[64], arg[64];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(p + 3, "`"),
			 p + 3);
		cell += strspn(cell, " ");
		snprintf(arg, sizeof(arg), "%.*s", (int)strcspn(cell, " |\\"),
			 cell);
		cr_expect_eq(frr_job_set(job, name, a_value(arg)),
			     strcmp(name, "job-token") ? 0 : -EINVAL,
			     "frr_job_set(\"%s\", \"%s\")", name,
			     a_value(arg) ? a_value(arg) : "(flag)");
		rows++;
	}
	cr_expect_gt(rows, 25, "%s", r->out);
	cr_expect_eq(frr_job_set(job, "help", NULL), -EINVAL);
	cr_expect_eq(frr_job_set(job, "vertices", "5"), -EINVAL);
	frr_job_free(job);
	free(r);
}

/* An app that gives only its table (no usage, no check_args): the runtime
 * checks its options from the table before the job starts. */
struct tiny_opts {
	uint32_t k;
	int quiet;
};

static const struct frr_opt tiny_table[] = {
	FRR_OPT("k", 0, FRR_OPT_U32, offsetof(struct tiny_opts, k), 1, 9,
		.def.u = 3, .arg = "K", .help = "clusters"),
	FRR_OPT("quiet", 'q', FRR_OPT_FLAG, offsetof(struct tiny_opts, quiet),
		0, 0, .help = "say less"),
	{ 0 },
};

static const struct frr_opt_set tiny_set = {
	.prog = "tiny",
	.see = "'tiny --help'",
	.opts = tiny_table,
	.size = sizeof(struct tiny_opts),
};

/* The create of the test apps below, whose every case is a usage error. */
static int unreached_create(const struct frr_job_info *job, int argc,
			    char **argv, void **app)
{
	(void)job, (void)argc, (void)argv, (void)app;
	return -ENOSYS; /* never reached: every case is a usage error */
}

Test(opt_tables, an_app_with_only_a_table_is_checked_before_the_job)
{
	static const struct frr_app_ops tiny = {
		.size = sizeof(struct frr_app_ops),
		.name = "tiny",
		.create = unreached_create,
		.opts = &tiny_set,
	};
	static const struct frr_app_ops *const apps[] = { &tiny, NULL };
	char *bad[][4] = { { "prog", "tiny", "--k", "10" },
			   { "prog", "tiny", "-q", "x" },
			   { "prog", "tiny", "--k=", NULL },
			   { "prog", "tiny", "--nope", NULL } };
	struct tiny_opts o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int argc = bad[i][3] ? 4 : 3;

		cr_expect_eq(frr_run_main(argc, bad[i], apps), 2,
			     "case %zu: not a usage error", i);
	}
	/* the table's parser by itself: defaults, both forms, a flag */
	frr_opt_defaults(&tiny_set, &o);
	cr_expect_eq(o.k, 3);
	cr_expect_eq(frr_opt_parse(&tiny_set, &o, 3,
				   (char *[]){ "tiny", "--k=7", "-q", NULL },
				   NULL),
		     0);
	cr_expect(o.k == 7 && o.quiet == 1, "k %u quiet %d", o.k, o.quiet);
	cr_expect_eq(frr_opt_set_one(&tiny_set, &o, "k", "2"), 0);
	cr_expect_eq(o.k, 2);
	cr_expect_eq(frr_opt_set_one(&tiny_set, &o, "k", "0"), -EINVAL);
}

/* An app's own outputs (FRR_OPT_OUTFILE, FRR_OPT_OUTDIR) are checked with
 * the run's before the job starts: a model saved to a directory that is
 * not there failed only when first written, after the input loaded and a
 * clock ran (lda, mlr --save). */
struct out_opts {
	const char *save, *dir, *in, *log;
};

static const struct frr_opt out_table[] = {
	FRR_OPT("save", 0, FRR_OPT_STRING, offsetof(struct out_opts, save), 0,
		0, .flags = FRR_OPT_OUTFILE),
	FRR_OPT("dir", 0, FRR_OPT_STRING, offsetof(struct out_opts, dir), 0, 0,
		.flags = FRR_OPT_OUTDIR),
	FRR_OPT("in", 0, FRR_OPT_STRING, offsetof(struct out_opts, in), 0, 0),
	FRR_OPT("log", 0, FRR_OPT_STRING, offsetof(struct out_opts, log), 0, 0,
		.def.s = "/nonexistent/default.log", .flags = FRR_OPT_OUTFILE),
	{ 0 },
};

static const struct frr_opt_set out_set = {
	.prog = "outs",
	.see = "'outs --help'",
	.opts = out_table,
	.size = sizeof(struct out_opts),
};

struct seen_out {
	char what[4][160];
	int n;
};

static int note_out(void *ctx, const struct frr_opt *o, const char *v)
{
	struct seen_out *so = ctx;

	if (so->n < 4)
		snprintf(so->what[so->n++], sizeof(so->what[0]), "%s=%s%s",
			 o->name, v, (o->flags & FRR_OPT_OUTDIR) ? "/" : "");
	return 0;
}

Test(opt_tables, an_apps_outputs_are_checked_before_the_job)
{
	static const struct frr_app_ops outs = {
		.size = sizeof(struct frr_app_ops),
		.name = "outs",
		.create = unreached_create,
		.opts = &out_set,
	};
	static const struct frr_app_ops *const apps[] = { &outs, NULL };
	char *bad[][5] = {
		/* the default --log is under /nonexistent */
		{ "prog", "outs", "--save", "/tmp/m.bin", NULL },
		{ "prog", "outs", "--log", "/nonexistent/x/m.log", NULL },
		{ "prog", "outs", "--log", "/tmp", NULL },
		{ "prog", "outs", "--log", "/proc/m.log", NULL },
		{ "prog", "outs", "--dir", "/nonexistent", NULL },
		{ "prog", "outs", "--dir", "/proc/self/status", NULL },
	};
	struct seen_out so = { 0 };
	char *argv[] = { "outs",   "--in", "/nonexistent/in",
			 "--save", "a/m",  "--dir=/tmp",
			 NULL };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(frr_run_main(4, bad[i], apps), 2,
			     "case %zu (%s %s): not a usage error", i,
			     bad[i][2], bad[i][3]);
	/* the walk by itself: the outputs set or defaulted, not the input */
	cr_assert_eq(frr_opt_outputs(&out_set, 6, argv, note_out, &so), 0);
	cr_assert_eq(so.n, 3, "%d outputs", so.n);
	cr_expect_str_eq(so.what[0], "save=a/m");
	cr_expect_str_eq(so.what[1], "dir=/tmp/");
	cr_expect_str_eq(so.what[2], "log=/nonexistent/default.log");
	/* a bad argument is said and refused, nothing listed */
	so.n = 0;
	cr_expect_eq(frr_opt_outputs(&out_set, 2,
				     (char *[]){ "outs", "--nope", NULL },
				     note_out, &so),
		     -EINVAL);
	cr_expect_eq(so.n, 0);
}

/* What run's table needs from the parser, by itself: the first positional
 * ends the options (stop), "-qn2" (bundle), "0x10" (FRR_OPT_ANYBASE) and a
 * default given as text to its callback (FRR_OPT_DEFTEXT). */
struct launch_opts {
	int n, quiet, ms;
};

static int parse_ms(void *obj, const struct frr_opt *o, const char *v)
{
	double s;

	if (frr_parse_double(v, 0.001, 1e6, &s))
		return -EINVAL;
	*(int *)((char *)obj + o->off) = (int)(s * 1000 + 0.5);
	return 0;
}

Test(opt_tables, stop_bundle_anybase_deftext)
{
	static const struct frr_opt table[] = {
		FRR_OPT("procs", 'n', FRR_OPT_INT,
			offsetof(struct launch_opts, n), 1, 64, .def.i = 1,
			.flags = FRR_OPT_ANYBASE),
		FRR_OPT("quiet", 'q', FRR_OPT_FLAG,
			offsetof(struct launch_opts, quiet), 0, 0),
		FRR_OPT("timeout", 0, FRR_OPT_FUNC,
			offsetof(struct launch_opts, ms), 0, 0,
			.parse = parse_ms, .def.s = "60",
			.flags = FRR_OPT_DEFTEXT),
		{ 0 },
	};
	static const struct frr_opt_set set = {
		.prog = "launch",
		.see = "'launch --help'",
		.opts = table,
		.size = sizeof(struct launch_opts),
		.plain = 1,
		.stop = 1,
		.bundle = 1,
	};
	char *argv[] = { "launch", "-qn0x10",	"--timeout=2.5",
			 "app",	   "--timeout", "x",
			 "-q",	   NULL };
	char *dd[] = { "launch", "-n", "3", "--", "-q", NULL };
	struct launch_opts o;
	char def[32];
	int first = -1;

	frr_opt_defaults(&set, &o);
	cr_expect(o.n == 1 && o.quiet == 0 && o.ms == 60000, "%d %d %d", o.n,
		  o.quiet, o.ms);
	frr_opt_default_str(&table[2], &o, def, sizeof(def));
	cr_expect_str_eq(def, "60");
	cr_assert_eq(frr_opt_parse(&set, &o, 7, argv, &first), 0);
	cr_expect(o.n == 16 && o.quiet == 1 && o.ms == 2500, "%d %d %d", o.n,
		  o.quiet, o.ms);
	cr_expect_eq(first, 3, "the program's name ends the options");
	cr_expect_str_eq(argv[3], "app");
	cr_expect_str_eq(argv[4], "--timeout"); /* left as it was */
	first = -1;
	cr_assert_eq(frr_opt_parse(&set, &o, 5, dd, &first), 0);
	cr_expect_eq(first, 4, "after '--'");
	first = -1;
	cr_assert_eq(
	    frr_opt_parse(&set, &o, 2, (char *[]){ "launch", "-q" }, &first),
	    0);
	cr_expect_eq(first, 2, "no positional: argc");
	cr_expect_eq(frr_opt_parse(&set, &o, 2,
				   (char *[]){ "launch", "-qh", NULL }, &first),
		     FRR_OPT_HELP);
	cr_expect_eq(frr_opt_parse(&set, &o, 2,
				   (char *[]){ "launch", "-qx", NULL }, &first),
		     -EINVAL);
}
