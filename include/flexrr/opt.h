/* SPDX-License-Identifier: MIT */
/*
 * Options by table: one array of descriptors (name, kind, field, range,
 * default, help) drives parsing, defaults and --help of a command or an
 * app, so that no default or range is written twice and every command
 * words its errors the same way.
 *
 *   struct my_opts { uint64_t items; double lr; int quiet; const char *out; };
 *   #define F(x) offsetof(struct my_opts, x)
 *   static const struct frr_opt my_table[] = {
 *       FRR_OPT("items", 0, FRR_OPT_U64, F(items), 1, 1e6, .def.u = 200,
 *               .arg = "N", .help = "items per worker"),
 *       FRR_OPT("lr", 0, FRR_OPT_DOUBLE, F(lr), 0, 1e6, .def.d = 0.5,
 *               .arg = "F", .help = "step size"),
 *       FRR_OPT("quiet", 'q', FRR_OPT_FLAG, F(quiet), 0, 0,
 *               .help = "say less"),
 *       FRR_OPT("out", 0, FRR_OPT_STRING, F(out), 0, 0, .arg = "FILE",
 *               .help = "also write the results there"),
 *       { 0 },
 *   };
 *   static const struct frr_opt_set my_set = {
 *       .prog = "my", .see = "'my --help'", .opts = my_table,
 *       .size = sizeof(struct my_opts), .head = "usage: my [options]\n",
 *   };
 *
 * Accepted forms: --name VALUE, --name=VALUE, -x VALUE, -xVALUE (where the
 * option has a letter x), --help / -h, --help=md, and "--" (what follows
 * is positional).  A value option always takes the next argument, even one
 * starting with '-' ("--items -1" is a range error, not a missing value).
 *
 * Errors are usage errors: the parser says what is wrong once (naming the
 * option, what it wants and what it got) and returns -EINVAL; the caller
 * maps that to exit status 2 (the launcher, before any rank starts).
 */
#ifndef FLEXRR_OPT_H
#define FLEXRR_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flexrr/export.h"

#ifdef __cplusplus
extern "C" {
#endif
FRR_API_BEGIN

enum frr_opt_kind {
	FRR_OPT_END = 0, /* {0}: ends a table */
	FRR_OPT_FLAG,	 /* int field, no value: set to !default */
	FRR_OPT_INT,	 /* int field, whole number in [lo, hi] */
	FRR_OPT_U32,	 /* uint32_t field */
	FRR_OPT_U64,	 /* uint64_t field (ranges exact up to 2^53) */
	FRR_OPT_DOUBLE,	 /* double field, finite, in [lo, hi]; x scale */
	FRR_OPT_FLOAT,	 /* float field: checked as a double, then strtof
			  * (one rounding, bit-identical to the text) */
	FRR_OPT_STRING,	 /* const char * field: the argument itself (then
			  * parse, if set, may refuse it or set more) */
	FRR_OPT_CHOICE,	 /* int field: the index of the value in choices */
	FRR_OPT_FUNC,	 /* parse(obj, opt, value) stores it (and says why
			  * it refuses one); the field is the callback's */
};

/* A typed default: .i (INT, FLAG, CHOICE index), .u (U32, U64), .d
 * (DOUBLE in the user's units, before scale; FLOAT), .s (STRING). */
union frr_opt_val {
	int64_t i;
	uint64_t u;
	double d;
	const char *s;
};

struct frr_opt;
typedef int (*frr_opt_parse_fn)(void *obj, const struct frr_opt *o,
				const char *value);

enum {
	FRR_OPT_NODEF = 1u << 0, /* --help shows no default for it */
	/* integers: any base strtoull takes ("0x10", "010" is octal), for
	 * commands that always took them so (flexrr run) */
	FRR_OPT_ANYBASE = 1u << 1,
	/* FUNC: .def.s is the default as text, given to parse by
	 * frr_opt_defaults and shown by --help (written once, parsed the way
	 * the user's value is: "60" seconds into a field of milliseconds) */
	FRR_OPT_DEFTEXT = 1u << 2,
	/* STRING: a file the command creates (a model, counts it saves):
	 * a launcher checks before any work that it can be created there
	 * (frr_opt_outputs), not when it is first written, hours on */
	FRR_OPT_OUTFILE = 1u << 3,
	/* STRING: an existing directory the command writes files into */
	FRR_OPT_OUTDIR = 1u << 4,
};

struct frr_opt {
	const char *name; /* long name without the dashes: "items" */
	char letter;	  /* short form -x, or 0 */
	enum frr_opt_kind kind;
	size_t off;	       /* offsetof(the caller's struct, field) */
	double lo, hi;	       /* numbers: the accepted range; integers
				* with lo == hi == 0: the type's range */
	union frr_opt_val def; /* set by frr_opt_defaults */
	const char *arg;       /* the value's name in --help: "N", "FILE" */
	const char *help;      /* may span lines ('\n'); the default is
				* appended from the table */
	const char *group;     /* a heading in --help, printed where it
				* first appears */
	const char *const *choices; /* CHOICE: NULL-terminated names */
	frr_opt_parse_fn parse;	    /* FUNC */
	double scale;		    /* DOUBLE: field = value x scale (0: 1) */
	const char *def_text;	    /* --help shows this as the default instead
				     * (a default that depends on another option) */
	unsigned flags;		    /* FRR_OPT_NODEF, _ANYBASE, _DEFTEXT,
				     * _OUTFILE, _OUTDIR */
};

/* A table entry: the fixed part, then designated extras, e.g.
 *   FRR_OPT("items", 0, FRR_OPT_U64, offsetof(struct my_opts, items), 1,
 *           1e6, .def.u = 200, .arg = "N", .help = "items per worker")
 * (all designated, so -Wextra's missing-initializer check stays quiet). */
#define FRR_OPT(name_, letter_, kind_, off_, lo_, hi_, ...)            \
	{                                                              \
		.name = (name_), .letter = (letter_), .kind = (kind_), \
		.off = (off_), .lo = (lo_), .hi = (hi_), __VA_ARGS__   \
	}

struct frr_opt_set {
	const char *prog; /* starts every message: "mlr", "flexrr bench" */
	const char *see;  /* where to look, in messages: "'mlr --help'" */
	const struct frr_opt *opts; /* ended by { 0 } */
	size_t size;		    /* of the struct the offsets point into */
	const char *head;	    /* --help before the options (or NULL) */
	const char *tail;	    /* --help after them (or NULL) */
	/* Optional: defaults the table cannot hold (a library's defaults
	 * function, an embedded struct); called after the table's. */
	void (*defaults)(void *obj);
	/* Optional: after every option given, e.g. to note which. */
	void (*seen)(void *obj, const struct frr_opt *o);
	/* Optional: what the options mean together, after parsing: 0, or
	 * -EINVAL having said why. */
	int (*check)(void *obj);
	/* Optional: word a bad value this command's way instead of "PROG:
	 * --name wants a number in [lo, hi], got 'x'"; err is -EINVAL (junk)
	 * or -ERANGE. */
	void (*bad_value)(const struct frr_opt_set *s, const struct frr_opt *o,
			  const char *value, int err);
	/* 1: messages go to stderr as "PROG: ..." (a CLI command); 0: through
	 * frr_err (the log prefix, rank-aware: apps and the runtime). */
	int plain;
	/* 1: the first positional argument ends the options (getopt's '+':
	 * a launcher's options, then a program and its own); frr_opt_parse
	 * leaves argv as it is and sets *npos to that argument's index
	 * (argc if there is none). */
	int stop;
	/* 1: short flags may be bundled, "-qn2" = "-q -n 2" (a command that
	 * took them from getopt) */
	int bundle;
	/* Optional: word an unknown option arg ("--x", "-x") this command's
	 * way, as one message, instead of "PROG: unknown option". */
	void (*unknown)(const struct frr_opt_set *s, const char *arg);
};

/* frr_opt_parse: --help (or --help=md, for frr_opt_markdown) was given;
 * nothing is printed */
#define FRR_OPT_HELP 1
#define FRR_OPT_HELP_MD 2

/* Zero the struct, then every table default, then s->defaults. */
void frr_opt_defaults(const struct frr_opt_set *s, void *obj);
/*
 * Parse argv[1..argc) into obj (defaults are not applied: call
 * frr_opt_defaults first, then set any the caller knows better).
 * Positional arguments: with npos NULL each is an error; else they are
 * moved to argv[1..*npos] in order (values stay where they point), or,
 * with s->stop, the first ends the options (see there).
 * Returns 0, FRR_OPT_HELP / FRR_OPT_HELP_MD, or -EINVAL after one message.
 * s->check runs after a parse that returned 0.
 */
int frr_opt_parse(const struct frr_opt_set *s, void *obj, int argc, char **argv,
		  int *npos);
/* Defaults, parse and check on a scratch struct: an app's check_args in
 * one line.  0 (also after --help), -EINVAL, -ENOMEM. */
int frr_opt_check(const struct frr_opt_set *s, int argc, char **argv);
/* Each output the arguments name: for every STRING option flagged
 * FRR_OPT_OUTFILE or FRR_OPT_OUTDIR that argv sets, fn(ctx, o, value)
 * (defaults, then parse on a scratch struct, as frr_opt_check; fn NULL:
 * that check alone).  0, fn's first non-zero return, -EINVAL (a bad
 * argument, said) or -ENOMEM. */
typedef int (*frr_opt_output_fn)(void *ctx, const struct frr_opt *o,
				 const char *value);
int frr_opt_outputs(const struct frr_opt_set *s, int argc, char **argv,
		    frr_opt_output_fn fn, void *ctx);
/* --help from the table: head, the options by group with their defaults
 * (read from a defaulted struct, so they are the ones parsing starts
 * from), tail. */
void frr_opt_usage(const struct frr_opt_set *s, FILE *out);
/* The same as a Markdown table (option, value, default, meaning): the
 * docs' option tables are pasted from `... --help=md`. */
void frr_opt_markdown(const struct frr_opt_set *s, FILE *out);
/* --help or --help=md, as frr_opt_parse answered it: 1 if printed. */
int frr_opt_print_help(const struct frr_opt_set *s, int help, FILE *out);
/* The option of a long name ("items", without dashes), or NULL. */
const struct frr_opt *frr_opt_find(const struct frr_opt_set *s,
				   const char *name);
/* The default --help shows for o, read from dflt (a struct after
 * frr_opt_defaults): its length, 0 if none is shown. */
int frr_opt_default_str(const struct frr_opt *o, const void *dflt, char *buf,
			size_t len);
/* Set one option by its long name from text, as on the command line
 * (value NULL for a flag): 0 or -EINVAL after a message. */
int frr_opt_set_one(const struct frr_opt_set *s, void *obj, const char *name,
		    const char *value);

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_OPT_H */
