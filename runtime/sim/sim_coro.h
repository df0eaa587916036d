/* SPDX-License-Identifier: MIT */
/*
 * Coroutines for the simulator: one stack per simulated worker, switched
 * on one thread.  On x86-64 the switch saves the callee-saved registers
 * and the FP control words and swaps stacks (about 20 ns; swapcontext also
 * makes a sigprocmask system call per switch, which at millions of
 * switches was half of the simulator's time); elsewhere it is ucontext.
 * Sanitizer builds tell ASan and TSan about every switch.
 */
#ifndef FLEXRR_RUNTIME_SIM_CORO_H
#define FLEXRR_RUNTIME_SIM_CORO_H

#include <stddef.h>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

struct sim_coro {
#if defined(__x86_64__)
	void *sp;
#else
	ucontext_t uc;
#endif
	void *stack; /* bounds (ASan); owned if made by sim_coro_make */
	size_t size;
	int owned;
	void *fake_stack; /* ASan */
	void *fiber;	  /* TSan */
};

/* The calling thread's context, to switch back to (the scheduler). */
void sim_coro_self(struct sim_coro *co);
/* A coroutine that starts in entry() on a new stack of `size` bytes;
 * entry must never return (it switches away for good).  0 or -errno. */
int sim_coro_make(struct sim_coro *co, size_t size, void (*entry)(void));
void sim_coro_free(struct sim_coro *co);
/* First thing a new coroutine's entry() does: `parent` is the context it
 * was started from (the scheduler). */
void sim_coro_entered(struct sim_coro *parent);
/* Save the current context into `from` and continue `to`. */
void sim_coro_switch(struct sim_coro *from, struct sim_coro *to);

#endif /* FLEXRR_RUNTIME_SIM_CORO_H */
