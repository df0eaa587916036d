/* SPDX-License-Identifier: MIT */
/*
 * Coroutines: many "threads" that run one at a time on the caller's OS
 * thread, switched by the program, never by the kernel.
 *
 * The deterministic scheduler of the RapidReassignment checks (rrcheck/)
 * runs each worker's engine code in one coroutine: a switch costs well
 * under a microsecond and no OS scheduler is involved, so a run is the same
 * on an idle and on a loaded machine.  Nothing here knows about rr: the
 * simulator of issue 11 (virtual time) can drive the same engine the same
 * way.  AddressSanitizer is told about every stack switch.
 */
#ifndef FLEXRR_TESTS_RRCHECK_CORO_H
#define FLEXRR_TESTS_RRCHECK_CORO_H

#include <stddef.h>
#include <ucontext.h>

typedef void (*rrc_coro_fn)(void *arg);

struct rrc_coro {
	/* x86-64: a switch saves 6 registers and the stack pointer (no
	 * system call); elsewhere swapcontext */
	void *sp, *caller_sp;
	ucontext_t ctx, caller;
	void *stack; /* mmap'd, with a guard page below */
	size_t size;
	rrc_coro_fn fn;
	void *arg;
	int running, done, started;
	/* sanitizer bookkeeping: the caller's stack, seen from inside */
	const void *caller_bottom;
	size_t caller_size;
	void *fake_stack;
};

/* Allocate the stack once (0 = default size); -errno on failure. */
int rrc_coro_init(struct rrc_coro *co, size_t stack_size);
void rrc_coro_fini(struct rrc_coro *co);
/* (Re)start: the next resume runs fn(arg) from its beginning. */
void rrc_coro_start(struct rrc_coro *co, rrc_coro_fn fn, void *arg);
/* Caller side: run co until it yields or fn returns. */
void rrc_coro_resume(struct rrc_coro *co);
/* Coroutine side: back to the caller of resume. */
void rrc_coro_yield(struct rrc_coro *co);

#endif /* FLEXRR_TESTS_RRCHECK_CORO_H */
