/* SPDX-License-Identifier: MIT */
/*
 * frr_launch's two sides (local.c the parent, local_child.c the ranks):
 * the frame a rank's collective request and the parent's reply travel in
 * over their socketpair, and the helpers both sides read and write it with.
 */
#ifndef FLEXRR_BOOTSTRAP_LOCAL_H
#define FLEXRR_BOOTSTRAP_LOCAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "flexrr/bootstrap.h"

/* the parent holds every rank's frame and the reply: bounded */
#define MAX_FRAME (64u << 20)

struct frame {
	int32_t status; /* parent -> child: 0 or negative errno */
	uint32_t pad;
	uint64_t len;
};

/* Write all of buf (MSG_NOSIGNAL): 0 or a negative errno. */
int frr_local_write_full(int fd, const void *buf, size_t len);
/* Read len bytes; waits at most timeout_ms (< 0 = forever) per chunk. */
int frr_local_read_full(int fd, void *buf, size_t len, int timeout_ms);

/* Run rank `rank`'s function in a child forked by frr_launch and _exit
 * with its result; fd: the socketpair to the parent (-1: no relay). */
void __attribute__((noreturn))
frr_local_run_child(int rank, int nprocs, const struct frr_job_secret *secret,
		    int fd, pid_t parent, frr_launch_fn fn, void *arg);

#endif
