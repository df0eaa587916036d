// SPDX-License-Identifier: MIT
/* Coroutines of the simulator: see sim_coro.h. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "sim_coro.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define SIM_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define SIM_TSAN 1
#endif

#ifdef SIM_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom,
				    size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save,
				     const void **bottom_old, size_t *size_old);
#endif
#ifdef SIM_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

#if defined(__x86_64__)
/* void sim_coro_swap(void **save_sp, void *new_sp): push the callee-saved
 * registers (System V) and the SSE/x87 control words, store rsp, load the
 * other stack and pop the same frame from it. */
void sim_coro_swap(void **save_sp, void *new_sp) __asm__("frr_sim_coro_swap");
__asm__(".text\n"
	".globl frr_sim_coro_swap\n"
	".hidden frr_sim_coro_swap\n"
	".type frr_sim_coro_swap, @function\n"
	"frr_sim_coro_swap:\n"
	"	pushq %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	subq $8, %rsp\n"
	"	stmxcsr (%rsp)\n"
	"	fnstcw 4(%rsp)\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	ldmxcsr (%rsp)\n"
	"	fldcw 4(%rsp)\n"
	"	addq $8, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	".size frr_sim_coro_swap, .-frr_sim_coro_swap\n"
	".section .note.GNU-stack,\"\",@progbits\n"
	".text\n");

/* The frame sim_coro_swap pops, laid out so that its `ret` enters entry()
 * with the stack aligned as after a call. */
static void *initial_frame(void *stack, size_t size, void (*entry)(void))
{
	uint64_t *top = (uint64_t *)(((uintptr_t)stack + size) & ~15ull);
	uint64_t *sp = top - 9;

	top[-1] = 0; /* entry's return address: never */
	top[-2] = (uint64_t)(uintptr_t)entry;	 /* popped by ret */
	memset(sp + 1, 0, 6 * sizeof(uint64_t)); /* r15..rbp */
	sp[0] = 0x1f80 | (uint64_t)0x037f << 32; /* mxcsr, x87 cw */
	return sp;
}
#endif

void sim_coro_self(struct sim_coro *co)
{
	memset(co, 0, sizeof(*co));
#ifdef SIM_TSAN
	co->fiber = __tsan_get_current_fiber();
#endif
}

int sim_coro_make(struct sim_coro *co, size_t size, void (*entry)(void))
{
	memset(co, 0, sizeof(*co));
	co->stack = mmap(
	    NULL, size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (co->stack == MAP_FAILED) {
		co->stack = NULL;
		return -ENOMEM;
	}
	co->size = size;
	co->owned = 1;
#if defined(__x86_64__)
	co->sp = initial_frame(co->stack, size, entry);
#else
	if (getcontext(&co->uc))
		return -errno;
	co->uc.uc_stack.ss_sp = co->stack;
	co->uc.uc_stack.ss_size = size;
	co->uc.uc_link = NULL;
	makecontext(&co->uc, entry, 0);
#endif
#ifdef SIM_TSAN
	co->fiber = __tsan_create_fiber(0);
#endif
	return 0;
}

void sim_coro_free(struct sim_coro *co)
{
#ifdef SIM_TSAN
	if (co->stack && co->fiber)
		__tsan_destroy_fiber(co->fiber);
#endif
	if (co->stack && co->owned)
		munmap(co->stack, co->size);
	co->stack = NULL;
}

void sim_coro_entered(struct sim_coro *parent)
{
#ifdef SIM_ASAN
	const void *bottom = NULL;
	size_t size = 0;

	/* the thread's stack bounds, to switch back to it */
	__sanitizer_finish_switch_fiber(NULL, &bottom, &size);
	if (!parent->owned) {
		parent->stack = (void *)bottom;
		parent->size = size;
	}
#else
	(void)parent;
#endif
}

void sim_coro_switch(struct sim_coro *from, struct sim_coro *to)
{
#ifdef SIM_ASAN
	__sanitizer_start_switch_fiber(&from->fake_stack, to->stack, to->size);
#endif
#ifdef SIM_TSAN
	__tsan_switch_to_fiber(to->fiber, 0);
#endif
#if defined(__x86_64__)
	sim_coro_swap(&from->sp, to->sp);
#else
	swapcontext(&from->uc, &to->uc);
#endif
#ifdef SIM_ASAN
	__sanitizer_finish_switch_fiber(from->fake_stack, NULL, NULL);
#endif
}
