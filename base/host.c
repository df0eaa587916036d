// SPDX-License-Identifier: MIT
/* This host's name, for messages and for telling hosts apart. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "flexrr/base.h"

int frr_hostname(char *buf, size_t len)
{
	int err = 0;

	if (!len)
		return -EINVAL;
	/* POSIX leaves a cut name unterminated: terminate it ourselves */
	if (gethostname(buf, len))
		err = errno ? -errno : -EIO;
	if (err)
		snprintf(buf, len, "?");
	buf[len - 1] = 0;
	return err;
}
