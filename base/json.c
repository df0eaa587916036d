// SPDX-License-Identifier: MIT
/* JSON output helpers shared by the commands that print JSON. */
#include <stdio.h>

#include "flexrr/base.h"

void frr_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned)(unsigned char)*s);
		else
			fputc(*s, f);
	fputc('"', f);
}
