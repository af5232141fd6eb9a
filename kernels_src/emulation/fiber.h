// Fiber contexts for the emulator's runtime: switching between the threads of a block.
//
// On x86-64 a context is just a saved stack pointer: the switch pushes the callee-saved
// registers, swaps stacks and pops them (no signal-mask syscall, unlike swapcontext).
// Elsewhere, ucontext. Included by runtime.cpp only (the asm defines a symbol).
#pragma once

#include <cstddef>
#include <cstdint>
#if !defined(__x86_64__) || defined(EMU_FORCE_UCONTEXT)
#include <ucontext.h>
#endif

namespace emu {

constexpr size_t STACK_BYTES = 64 * 1024;
constexpr size_t GUARD_BYTES = 4096;  // an overflowing fiber faults instead of corrupting memory

#if defined(__x86_64__) && !defined(EMU_FORCE_UCONTEXT)
extern "C" void emu_switch_context(void **save_sp, void *load_sp);
asm(R"(
    .text
    .globl emu_switch_context
    .hidden emu_switch_context
    .type emu_switch_context, @function
emu_switch_context:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch_context, .-emu_switch_context
)");
struct Context {
    void *sp = nullptr;
};
static inline void switch_context(Context &from, Context &to) { emu_switch_context(&from.sp, to.sp); }
static void init_context(Context &ctx, char *stack_top, void (*fn)()) {
    // The pops of emu_switch_context, then `ret` into fn with the stack as after a call.
    void **sp = reinterpret_cast<void **>(reinterpret_cast<uintptr_t>(stack_top) & ~uintptr_t(15));
    sp -= 8;
    for (int i = 0; i < 6; ++i) sp[i] = nullptr;  // r15 r14 r13 r12 rbx rbp
    sp[6] = reinterpret_cast<void *>(fn);
    sp[7] = nullptr;  // fn never returns
    ctx.sp = sp;
}
#else
struct Context {
    ucontext_t uc;
};
static inline void switch_context(Context &from, Context &to) { swapcontext(&from.uc, &to.uc); }
static void init_context(Context &ctx, char *stack_top, void (*fn)()) {
    getcontext(&ctx.uc);
    ctx.uc.uc_stack.ss_size = STACK_BYTES - GUARD_BYTES - 4096;  // tops are staggered < 4 KiB
    ctx.uc.uc_stack.ss_sp = stack_top - ctx.uc.uc_stack.ss_size;
    ctx.uc.uc_link = nullptr;
    makecontext(&ctx.uc, fn, 0);
}
#endif

}  // namespace emu
