// SPDX-License-Identifier: MIT
/*
 * Coroutines on ucontext.  A coroutine that is restarted before it finished
 * is simply abandoned: the code run in coroutines (the rr engine and the
 * drivers of rrcheck/world.c) holds no lock and owns no memory at a yield.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coro.h"

#if defined(__SANITIZE_ADDRESS__)
#define RRC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RRC_ASAN 1
#endif
#endif

#ifdef RRC_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
/* ASan keeps its own stack bounds and shadow: tell it about each switch */
#define RRC_DEFAULT_STACK (1u << 20)
static void san_start(void **fake, const void *bottom, size_t size)
{
	__sanitizer_start_switch_fiber(fake, bottom, size);
}
static void san_finish(void *fake, const void **bottom, size_t *size)
{
	__sanitizer_finish_switch_fiber(fake, bottom, size);
}
static void san_fresh(void *stack, size_t size)
{
	/* frames of an abandoned run leave poisoned redzones behind */
	__asan_unpoison_memory_region(stack, size);
}
#else
#define RRC_DEFAULT_STACK (256u << 10)
static void san_start(void **fake, const void *bottom, size_t size)
{
	(void)fake;
	(void)bottom;
	(void)size;
}
static void san_finish(void *fake, const void **bottom, size_t *size)
{
	(void)fake;
	(void)bottom;
	(void)size;
}
static void san_fresh(void *stack, size_t size)
{
	(void)stack;
	(void)size;
}
#endif

int rrc_coro_init(struct rrc_coro *co, size_t stack_size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m;

	memset(co, 0, sizeof(*co));
	if (!stack_size)
		stack_size = RRC_DEFAULT_STACK;
	stack_size = (stack_size + page - 1) / page * page;
	m = mmap(NULL, stack_size + page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	/* a stack overflow faults on the guard page instead of corrupting */
	mprotect(m, page, PROT_NONE);
	co->stack = (char *)m + page;
	co->size = stack_size;
	return 0;
}

void rrc_coro_fini(struct rrc_coro *co)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (co->stack)
		munmap((char *)co->stack - page, co->size + page);
	co->stack = NULL;
}

#if defined(__x86_64__)
/* rrc_switch(&save, to): push the callee-saved registers, save the stack
 * pointer in *save, switch to `to` and pop the registers saved there.
 * Signal masks are not touched (swapcontext's system call is most of the
 * cost of a step otherwise). */
void rrc_switch(void **save, void *to);
__asm__(".text\n"
	".globl rrc_switch\n"
	".type rrc_switch, @function\n"
	"rrc_switch:\n"
	"\tpushq %rbp\n"
	"\tpushq %rbx\n"
	"\tpushq %r12\n"
	"\tpushq %r13\n"
	"\tpushq %r14\n"
	"\tpushq %r15\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tpopq %r15\n"
	"\tpopq %r14\n"
	"\tpopq %r13\n"
	"\tpopq %r12\n"
	"\tpopq %rbx\n"
	"\tpopq %rbp\n"
	"\tret\n"
	".size rrc_switch, .-rrc_switch\n");
#define RRC_FAST 1
#endif

static __thread struct rrc_coro *starting;

static void run_body(struct rrc_coro *co)
{
	san_finish(NULL, &co->caller_bottom, &co->caller_size);
	co->fn(co->arg);
	co->done = 1;
	/* NULL: this stack is left for good (until the next start) */
	san_start(NULL, co->caller_bottom, co->caller_size);
}

#ifdef RRC_FAST
static void entry(void)
{
	struct rrc_coro *co = starting;

	run_body(co);
	rrc_switch(&co->sp, co->caller_sp);
	abort(); /* never resumed */
}

void rrc_coro_start(struct rrc_coro *co, rrc_coro_fn fn, void *arg)
{
	/* a frame rrc_switch can pop: 6 registers, then entry as the return
	 * address; entry starts as if called (rsp = 8 mod 16) */
	uintptr_t top = ((uintptr_t)co->stack + co->size) & ~(uintptr_t)15;
	void **sp = (void **)(top - 64);

	san_fresh(co->stack, co->size);
	memset(sp, 0, 64);
	sp[6] = (void *)entry;
	co->sp = sp;
	co->fn = fn;
	co->arg = arg;
	co->done = 0;
	co->running = 0;
	co->started = 0;
}

static void do_resume(struct rrc_coro *co)
{
	if (!co->started) {
		co->started = 1;
		starting = co;
	}
	rrc_switch(&co->caller_sp, co->sp);
}

static void do_yield(struct rrc_coro *co)
{
	rrc_switch(&co->sp, co->caller_sp);
}
#else
/* makecontext passes ints: the coroutine's address in two halves */
static void trampoline(unsigned lo, unsigned hi)
{
	struct rrc_coro *co =
	    (struct rrc_coro *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);

	run_body(co);
	setcontext(&co->caller);
}

void rrc_coro_start(struct rrc_coro *co, rrc_coro_fn fn, void *arg)
{
	uintptr_t p = (uintptr_t)co;

	san_fresh(co->stack, co->size);
	getcontext(&co->ctx);
	co->ctx.uc_stack.ss_sp = co->stack;
	co->ctx.uc_stack.ss_size = co->size;
	co->ctx.uc_link = NULL;
	co->fn = fn;
	co->arg = arg;
	co->done = 0;
	co->running = 0;
	makecontext(&co->ctx, (void (*)(void))trampoline, 2,
		    (unsigned)(p & 0xffffffffu), (unsigned)(p >> 16 >> 16));
}

static void do_resume(struct rrc_coro *co)
{
	swapcontext(&co->caller, &co->ctx);
}

static void do_yield(struct rrc_coro *co)
{
	swapcontext(&co->ctx, &co->caller);
}
#endif

void rrc_coro_resume(struct rrc_coro *co)
{
	void *fake = NULL;

	co->running = 1;
	san_start(&fake, co->stack, co->size);
	do_resume(co);
	san_finish(fake, NULL, NULL);
	co->running = 0;
}

void rrc_coro_yield(struct rrc_coro *co)
{
	san_start(&co->fake_stack, co->caller_bottom, co->caller_size);
	do_yield(co);
	san_finish(co->fake_stack, &co->caller_bottom, &co->caller_size);
}
