// SPDX-License-Identifier: MIT
/*
 * --help from an option table (flexrr/opt.h).  The defaults shown are read
 * from a struct the table's own defaults were applied to, so the text
 * cannot drift from what parsing starts with.
 */
#include <stdlib.h>
#include <string.h>

#include "flexrr/opt.h"

#define COL 26				 /* where the help text starts */
#define PAD "                          " /* COL spaces */

int frr_opt_default_str(const struct frr_opt *o, const void *dflt, char *buf,
			size_t len)
{
	const char *f = (const char *)dflt + o->off;
	double sc = o->scale != 0 ? o->scale : 1;
	int n = 0;

	if (len)
		buf[0] = 0;
	if ((o->flags & FRR_OPT_NODEF) || o->kind == FRR_OPT_FLAG)
		return 0;
	if (o->def_text)
		return snprintf(buf, len, "%s", o->def_text);
	if (!dflt)
		return 0;
	switch (o->kind) {
	case FRR_OPT_INT:
		n = snprintf(buf, len, "%d", *(const int *)f);
		break;
	case FRR_OPT_U32:
		n = snprintf(buf, len, "%u", *(const uint32_t *)f);
		break;
	case FRR_OPT_U64:
		n = snprintf(buf, len, "%llu",
			     (unsigned long long)*(const uint64_t *)f);
		break;
	case FRR_OPT_DOUBLE:
		n = snprintf(buf, len, "%g", *(const double *)f / sc);
		break;
	case FRR_OPT_FLOAT:
		n = snprintf(buf, len, "%g", (double)*(const float *)f);
		break;
	case FRR_OPT_STRING:
		if (*(const char *const *)f)
			n = snprintf(buf, len, "%s", *(const char *const *)f);
		break;
	case FRR_OPT_CHOICE:
		n = snprintf(buf, len, "%s", o->choices[*(const int *)f]);
		break;
	default: /* FUNC: def_text (above) or its default's text */
		if ((o->flags & FRR_OPT_DEFTEXT) && o->def.s)
			n = snprintf(buf, len, "%s", o->def.s);
		break;
	}
	return n;
}

static int any_letter(const struct frr_opt_set *s)
{
	for (const struct frr_opt *o = s->opts; o->name; o++)
		if (o->letter)
			return 1;
	return 0;
}

/* "  -x, --name ARG" padded to COL, then the help lines and the default. */
static void print_opt(FILE *out, const struct frr_opt *o, const void *dflt,
		      int letters)
{
	char def[128];
	const char *h = o->help ? o->help : "";
	int n, len;

	n = fprintf(out, "  ");
	if (letters)
		n += o->letter ? fprintf(out, "-%c, ", o->letter)
			       : fprintf(out, "    ");
	n += fprintf(out, "--%s", o->name);
	if (o->arg)
		n += fprintf(out, " %s", o->arg);
	if (n >= COL - 1) {
		fputc('\n', out);
		n = 0;
	}
	for (;;) {
		const char *nl = strchr(h, '\n');

		len = nl ? (int)(nl - h) : (int)strlen(h);
		fprintf(out, "%*s%.*s", COL - n, "", len, h);
		if (!nl)
			break;
		fputc('\n', out);
		h = nl + 1;
		n = 0;
	}
	/* the default on a line of its own rather than past column 80 */
	if (frr_opt_default_str(o, dflt, def, sizeof(def))) {
		fputs(COL + len + 11 + (int)strcspn(def, "\n") > 80 ? "\n" PAD
								    : " ",
		      out);
		fputs("(default ", out);
		for (const char *p = def; *p; p++)
			fputs(*p == '\n' ? "\n" PAD : (char[]){ *p, 0 }, out);
		fputc(')', out);
	}
	fputc('\n', out);
}

void frr_opt_usage(const struct frr_opt_set *s, FILE *out)
{
	void *d = calloc(1, s->size ? s->size : 1);
	const char *group = NULL;
	int letters = any_letter(s);

	if (d)
		frr_opt_defaults(s, d);
	if (s->head)
		fputs(s->head, out);
	for (const struct frr_opt *o = s->opts; o->name; o++) {
		if (o->group && (!group || strcmp(group, o->group))) {
			fprintf(out, "\n%s\n", o->group);
			group = o->group;
		}
		print_opt(out, o, d, letters);
	}
	/* the parser answers it for every table; after a group, apart from
	 * it (it is not one of that group's) */
	if (group)
		fputc('\n', out);
	fprintf(out, "  %s--help%*sthis text\n", letters ? "-h, " : "",
		COL - 8 - (letters ? 4 : 0), "");
	if (s->tail)
		fputs(s->tail, out);
	free(d);
}

/* text in a table cell: lines joined, '|' escaped */
static void md_cell(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputs("\\|", out);
		else
			fputc(*s == '\n' ? ' ' : *s, out);
	}
}

void frr_opt_markdown(const struct frr_opt_set *s, FILE *out)
{
	void *d = calloc(1, s->size ? s->size : 1);
	char def[128];

	if (d)
		frr_opt_defaults(s, d);
	fputs("| option | value | default | meaning |\n"
	      "| --- | --- | --- | --- |\n",
	      out);
	for (const struct frr_opt *o = s->opts; o->name; o++) {
		if (o->letter)
			fprintf(out, "| `-%c`, `--%s` | ", o->letter, o->name);
		else
			fprintf(out, "| `--%s` | ", o->name);
		md_cell(out, o->arg);
		fputs(" | ", out);
		if (frr_opt_default_str(o, d, def, sizeof(def)))
			md_cell(out, def);
		fputs(" | ", out);
		md_cell(out, o->help);
		fputs(" |\n", out);
	}
	free(d);
}
