/* SPDX-License-Identifier: MIT */
/*
 * Logging shared by every layer.  "The function that first detects an error
 * logs it": callers up the stack return the code without logging again.
 * Messages go to stderr prefixed "flexrr[rank]: "; level from env
 * FLEXRR_LOG=error|warn|info|debug (default warn) or frr_log_set_level().
 */
#ifndef FLEXRR_LOG_H
#define FLEXRR_LOG_H

#include "flexrr/export.h"

#ifdef __cplusplus
extern "C" {
#endif
FRR_API_BEGIN

enum frr_log_level {
	FRR_LOG_ERROR = 0,
	FRR_LOG_WARN = 1,
	FRR_LOG_INFO = 2,
	FRR_LOG_DEBUG = 3,
};

void frr_log(enum frr_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void frr_log_set_level(enum frr_log_level level);
enum frr_log_level frr_log_get_level(void);
/* Rank shown in the prefix; -1 (default) shows none.  It is the process's
 * and the calling thread's: a process that runs more than one rank (a job
 * recovered after a loss, in-process tests) names each rank's threads with
 * frr_log_set_thread_rank. */
void frr_log_set_rank(int rank);
/* The rank shown in the prefix of the calling thread's lines. */
void frr_log_set_thread_rank(int rank);
/* The rank this process started as (a launcher's rank, a forked local
 * rank); -1 (default): none.  A thread that logs for another rank (one
 * the process runs after a loss) then shows both: "flexrr[1@2]" is rank
 * 1's line from the process that started as rank 2. */
void frr_log_set_home(int rank);
/* At the start of a thread the library runs: its rank in the log prefix
 * (frr_log_set_thread_rank) and its name, "frr<rank>-<what>" cut to 15
 * characters, which ps -L, top -H, gdb and perf show (e.g. frr1-w3). */
void frr_log_thread_start(int rank, const char *what);

#define frr_err(...) frr_log(FRR_LOG_ERROR, __VA_ARGS__)
#define frr_warn(...) frr_log(FRR_LOG_WARN, __VA_ARGS__)
#define frr_info(...) frr_log(FRR_LOG_INFO, __VA_ARGS__)
#define frr_dbg(...) frr_log(FRR_LOG_DEBUG, __VA_ARGS__)

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_LOG_H */
