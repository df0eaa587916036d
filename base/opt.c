// SPDX-License-Identifier: MIT
/*
 * Options by table (flexrr/opt.h): parsing, defaults, one-at-a-time setting.
 * The help printer is in opt_usage.c.  No global state (unlike getopt's
 * optind), so an app's parsing inside a job cannot disturb the runtime's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/base.h"
#include "flexrr/opt.h"

/* One message per usage error, in the command's voice. */
static void say(const struct frr_opt_set *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct frr_opt_set *s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (s->plain)
		fprintf(stderr, "%s: %s\n", s->prog, buf);
	else
		frr_err("%s: %s", s->prog, buf);
}

static void *field(void *obj, const struct frr_opt *o)
{
	return (char *)obj + o->off;
}

static double scale(const struct frr_opt *o)
{
	return o->scale != 0 ? o->scale : 1;
}

void frr_opt_defaults(const struct frr_opt_set *s, void *obj)
{
	memset(obj, 0, s->size);
	for (const struct frr_opt *o = s->opts; o->name; o++) {
		void *f = field(obj, o);

		switch (o->kind) {
		case FRR_OPT_FLAG:
		case FRR_OPT_INT:
		case FRR_OPT_CHOICE:
			*(int *)f = (int)o->def.i;
			break;
		case FRR_OPT_U32:
			*(uint32_t *)f = (uint32_t)o->def.u;
			break;
		case FRR_OPT_U64:
			*(uint64_t *)f = o->def.u;
			break;
		case FRR_OPT_DOUBLE:
			*(double *)f = o->def.d * scale(o);
			break;
		case FRR_OPT_FLOAT:
			*(float *)f = (float)o->def.d;
			break;
		case FRR_OPT_STRING:
			*(const char **)f = o->def.s;
			break;
		default: /* FUNC: the callback's, from its default text or
			  * s->defaults */
			if ((o->flags & FRR_OPT_DEFTEXT) && o->def.s)
				(void)o->parse(obj, o, o->def.s);
			break;
		}
	}
	if (s->defaults)
		s->defaults(obj);
}

static void bad_value(const struct frr_opt_set *s, const struct frr_opt *o,
		      const char *v, int err)
{
	if (s->bad_value)
		s->bad_value(s, o, v, err);
	else if (o->kind == FRR_OPT_DOUBLE || o->kind == FRR_OPT_FLOAT)
		say(s, "--%s wants a number in [%g, %g], got '%s'", o->name,
		    o->lo, o->hi, v);
	else if (o->kind == FRR_OPT_INT)
		say(s, "--%s wants an integer in [%lld, %lld], got '%s'",
		    o->name, (long long)o->lo, (long long)o->hi, v);
	else
		say(s, "--%s wants an integer in [%llu, %llu], got '%s'",
		    o->name, (unsigned long long)o->lo,
		    (unsigned long long)o->hi, v);
}

/* lo == hi == 0 in a table: the field type's whole range */
static void int_range(const struct frr_opt *o, int64_t tlo, int64_t thi,
		      int64_t *lo, int64_t *hi)
{
	int whole = o->lo == 0 && o->hi == 0;

	*lo = whole ? tlo : (int64_t)o->lo;
	*hi = whole ? thi : (int64_t)o->hi;
}

static int store_int(const struct frr_opt *o, void *f, const char *v)
{
	int base = o->flags & FRR_OPT_ANYBASE ? 0 : 10;
	int64_t lo, hi, i;
	uint64_t u;
	int rc;

	if (o->kind == FRR_OPT_INT) {
		int_range(o, INT32_MIN, INT32_MAX, &lo, &hi);
		rc = frr_parse_i64(v, base, lo, hi, &i);
		if (!rc)
			*(int *)f = (int)i;
		return rc;
	}
	if (o->lo == 0 && o->hi == 0)
		rc = frr_parse_u64(
		    v, base, 0,
		    o->kind == FRR_OPT_U32 ? UINT32_MAX : UINT64_MAX, &u);
	else
		rc = frr_parse_u64(v, base, (uint64_t)o->lo, (uint64_t)o->hi,
				   &u);
	if (!rc && o->kind == FRR_OPT_U32)
		*(uint32_t *)f = (uint32_t)u;
	else if (!rc)
		*(uint64_t *)f = u;
	return rc;
}

static int store_choice(const struct frr_opt_set *s, const struct frr_opt *o,
			void *f, const char *v)
{
	char list[256] = "";
	size_t n = 0;

	for (int k = 0; o->choices[k]; k++) {
		if (!strcmp(v, o->choices[k])) {
			*(int *)f = k;
			return 0;
		}
		n += (size_t)snprintf(
		    list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%s",
		    k ? (o->choices[k + 1] ? ", " : " or ") : "",
		    o->choices[k]);
		if (n >= sizeof(list))
			n = sizeof(list) - 1;
	}
	say(s, "--%s wants %s, got '%s'", o->name, list, v);
	return -EINVAL;
}

/* Store value v of option o: 0, or -EINVAL after one message. */
static int store(const struct frr_opt_set *s, const struct frr_opt *o,
		 void *obj, const char *v)
{
	void *f = field(obj, o);
	double d;
	int rc = 0;

	switch (o->kind) {
	case FRR_OPT_INT:
	case FRR_OPT_U32:
	case FRR_OPT_U64:
		rc = store_int(o, f, v);
		break;
	case FRR_OPT_DOUBLE:
	case FRR_OPT_FLOAT:
		rc = frr_parse_double(v, o->lo, o->hi, &d);
		if (!rc && o->kind == FRR_OPT_DOUBLE)
			*(double *)f = d * scale(o);
		/* strtof, not (float)d: a double rounded again may differ in
		 * the last bit from the text's nearest float */
		else if (!rc)
			*(float *)f = strtof(v, NULL);
		break;
	case FRR_OPT_STRING: /* parse, if set, checks it (and may set more) */
		*(const char **)f = v;
		return o->parse && o->parse(obj, o, v) ? -EINVAL : 0;
	case FRR_OPT_CHOICE:
		return store_choice(s, o, f, v);
	case FRR_OPT_FUNC:
		return o->parse(obj, o, v) ? -EINVAL : 0;
	default:
		return -EINVAL;
	}
	if (rc)
		bad_value(s, o, v, rc);
	return rc ? -EINVAL : 0;
}

const struct frr_opt *frr_opt_find(const struct frr_opt_set *s,
				   const char *name)
{
	for (const struct frr_opt *o = s->opts; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

static const struct frr_opt *find_n(const struct frr_opt_set *s, const char *a,
				    size_t n)
{
	for (const struct frr_opt *o = s->opts; o->name; o++)
		if (strlen(o->name) == n && !strncmp(o->name, a, n))
			return o;
	return NULL;
}

static const struct frr_opt *find_letter(const struct frr_opt_set *s, char c)
{
	for (const struct frr_opt *o = s->opts; o->name; o++)
		if (o->letter && o->letter == c)
			return o;
	return NULL;
}

/* Give option o the value v (NULL: none given, the flag form). */
static int apply(const struct frr_opt_set *s, const struct frr_opt *o,
		 void *obj, const char *v)
{
	int rc = 0;

	if (o->kind == FRR_OPT_FLAG && v) {
		say(s, "--%s takes no value, got '%s'", o->name, v);
		return -EINVAL;
	}
	if (o->kind == FRR_OPT_FLAG)
		*(int *)field(obj, o) = !o->def.i;
	else
		rc = store(s, o, obj, v);
	if (!rc && s->seen)
		s->seen(obj, o);
	return rc;
}

static int unknown(const struct frr_opt_set *s, const char *a)
{
	if (s->unknown)
		s->unknown(s, a);
	else
		say(s, "unknown option '%s' (see %s)", a, s->see);
	return -EINVAL;
}

/* "-qn2" (s->bundle): the flags before the first letter that takes a
 * value, which gets the rest of the argument; *a is left at it. */
static int flags_first(const struct frr_opt_set *s, void *obj, const char **a)
{
	const char *p = *a + 1;
	const struct frr_opt *o;
	int rc;

	for (; p[1] && (o = find_letter(s, *p)) && o->kind == FRR_OPT_FLAG;
	     p++) {
		rc = apply(s, o, obj, NULL);
		if (rc)
			return rc;
	}
	*a = p - 1; /* now "-n2" (or "-x..." for the unknown letter) */
	return 0;
}

/* The option at argv[*i] (and its value, which may be the next argument). */
static int one(const struct frr_opt_set *s, void *obj, int argc, char **argv,
	       int *i)
{
	const char *a = argv[*i], *v = NULL;
	const struct frr_opt *o;
	char shown[3] = "-";
	int rc;

	if (a[1] == '-') {
		const char *eq = strchr(a + 2, '=');

		o = find_n(s, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
		v = eq ? eq + 1 : NULL;
	} else {
		if (s->bundle && (rc = flags_first(s, obj, &a)))
			return rc;
		if (a != argv[*i] && a[1] == 'h' && !a[2] &&
		    !find_letter(s, 'h'))
			return FRR_OPT_HELP; /* "-qh", as getopt took it */
		o = find_letter(s, a[1]);
		if (o && a[2] && o->kind == FRR_OPT_FLAG)
			o = NULL; /* "-ab": no bundling */
		v = o && a[2] ? a + 2 : NULL;
		if (a != argv[*i]) { /* within a bundle: name the letter */
			shown[1] = a[1];
			a = shown;
		}
	}
	if (!o)
		return unknown(s, a);
	if (o->kind != FRR_OPT_FLAG && !v) {
		if (*i + 1 >= argc) {
			say(s, "option %s needs a value (see %s)", a, s->see);
			return -EINVAL;
		}
		v = argv[++*i];
	}
	return apply(s, o, obj, v);
}

int frr_opt_parse(const struct frr_opt_set *s, void *obj, int argc, char **argv,
		  int *npos)
{
	int n = s->stop ? argc : 0, rest = 0, rc;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!rest && !strcmp(a, "--")) {
			rest = 1;
			if (s->stop && npos) {
				n = i + 1;
				break;
			}
		} else if (!rest &&
			   (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			return FRR_OPT_HELP;
		} else if (!rest && !strcmp(a, "--help=md")) {
			return FRR_OPT_HELP_MD;
		} else if (!rest && a[0] == '-' && a[1]) {
			rc = one(s, obj, argc, argv, &i);
			if (rc)
				return rc;
		} else if (npos && s->stop) {
			n = i; /* the rest is the program's */
			break;
		} else if (npos) {
			argv[++n] = argv[i]; /* n < i: only consumed slots */
		} else {
			say(s, "unexpected argument '%s' (see %s)", a, s->see);
			return -EINVAL;
		}
	}
	if (npos)
		*npos = n;
	return s->check ? s->check(obj) : 0;
}

int frr_opt_outputs(const struct frr_opt_set *s, int argc, char **argv,
		    frr_opt_output_fn fn, void *ctx)
{
	const unsigned out = FRR_OPT_OUTFILE | FRR_OPT_OUTDIR;
	void *obj = calloc(1, s->size ? s->size : 1);
	int rc;

	if (!obj)
		return -ENOMEM;
	frr_opt_defaults(s, obj);
	rc = frr_opt_parse(s, obj, argc, argv, NULL);
	rc = rc > 0 ? 0 : rc; /* help is not an error (and writes nothing) */
	for (const struct frr_opt *o = s->opts; fn && !rc && o->name; o++) {
		const char *v;

		if (o->kind != FRR_OPT_STRING || !(o->flags & out))
			continue;
		memcpy(&v, (const char *)obj + o->off, sizeof(v));
		if (v)
			rc = fn(ctx, o, v);
	}
	free(obj);
	return rc;
}

int frr_opt_check(const struct frr_opt_set *s, int argc, char **argv)
{
	return frr_opt_outputs(s, argc, argv, NULL, NULL);
}

int frr_opt_set_one(const struct frr_opt_set *s, void *obj, const char *name,
		    const char *value)
{
	const struct frr_opt *o = frr_opt_find(s, name);

	if (!o)
		return unknown(s, name);
	if (o->kind != FRR_OPT_FLAG && !value) {
		say(s, "option --%s needs a value (see %s)", name, s->see);
		return -EINVAL;
	}
	return apply(s, o, obj, value);
}

int frr_opt_print_help(const struct frr_opt_set *s, int help, FILE *out)
{
	if (help == FRR_OPT_HELP)
		frr_opt_usage(s, out);
	else if (help == FRR_OPT_HELP_MD)
		frr_opt_markdown(s, out);
	return help == FRR_OPT_HELP || help == FRR_OPT_HELP_MD;
}
