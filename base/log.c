// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/base.h"

/* -2 = not yet read from the environment */
static _Atomic int log_level = -2;
static _Atomic int log_rank = -1;
/* the rank the process started as (frr_log_set_home); -1: not said */
static _Atomic int log_home = -1;
/* a thread's own rank, where a process runs more than one: -1 = the
 * process's */
static _Thread_local int log_thread_rank = -1;

static int level_from_env(void)
{
	const char *s = getenv("FLEXRR_LOG");

	if (!s)
		return FRR_LOG_WARN;
	if (!strcmp(s, "error"))
		return FRR_LOG_ERROR;
	if (!strcmp(s, "info"))
		return FRR_LOG_INFO;
	if (!strcmp(s, "debug"))
		return FRR_LOG_DEBUG;
	return FRR_LOG_WARN;
}

enum frr_log_level frr_log_get_level(void)
{
	int l = atomic_load_explicit(&log_level, memory_order_relaxed);

	if (l == -2) {
		l = level_from_env();
		atomic_store_explicit(&log_level, l, memory_order_relaxed);
	}
	return (enum frr_log_level)l;
}

void frr_log_set_level(enum frr_log_level level)
{
	atomic_store_explicit(&log_level, (int)level, memory_order_relaxed);
}

void frr_log_set_rank(int rank)
{
	atomic_store_explicit(&log_rank, rank, memory_order_relaxed);
	log_thread_rank = rank;
}

void frr_log_set_home(int rank)
{
	atomic_store_explicit(&log_home, rank, memory_order_relaxed);
}

void frr_log_set_thread_rank(int rank)
{
	log_thread_rank = rank;
}

void frr_log_thread_start(int rank, const char *what)
{
	char name[16]; /* the kernel's limit, with its 0 */

	log_thread_rank = rank;
	if (rank >= 0)
		snprintf(name, sizeof(name), "frr%d-%s", rank, what);
	else
		snprintf(name, sizeof(name), "frr-%s", what);
	/* a name is a convenience: a failure changes nothing else */
	(void)pthread_setname_np(pthread_self(), name);
}

void frr_log(enum frr_log_level level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warning", "info",
					     "debug" };
	char line[1024];
	int n, rank, home;
	va_list ap;

	if ((int)level > (int)frr_log_get_level())
		return;
	rank = log_thread_rank >= 0
		   ? log_thread_rank
		   : atomic_load_explicit(&log_rank, memory_order_relaxed);
	home = atomic_load_explicit(&log_home, memory_order_relaxed);
	if (rank >= 0 && home >= 0 && rank != home)
		n = snprintf(line, sizeof(line), "flexrr[%d@%d]: %s: ", rank,
			     home, names[level]);
	else if (rank >= 0)
		n = snprintf(line, sizeof(line), "flexrr[%d]: %s: ", rank,
			     names[level]);
	else
		n = snprintf(line, sizeof(line), "flexrr: %s: ", names[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* one write per message so lines of concurrent ranks do not interleave
	 */
	fprintf(stderr, "%s\n", line);
}
