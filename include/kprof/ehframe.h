/* SPDX-License-Identifier: GPL-2.0-only */
/* ehframe.h: where a function's caller is, at one of its instructions, from the call frame
 * information of an x86-64 ELF file's .eh_frame section (ehframe.c).
 *
 * Off-CPU stacks are walked by frame pointers, and a leaf that keeps none (libc's syscall
 * wrappers, built without them) hides its caller. .eh_frame, which every x86-64 ELF file has
 * for exceptions and which is never stripped, says at each instruction where the canonical
 * frame address (CFA, the stack pointer before the call) is: sp + N in a function without a
 * frame pointer, fp + 16 in one with it. With that rule the return address is read from the
 * stack at the moment of the switch (offcpu.bpf.c). Pure: the section's bytes in, the rule
 * out; every field of the (target-controlled) file is bounds-checked.
 */
#ifndef KPROF_EHFRAME_H
#define KPROF_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EHFRAME_MAX_BYTES (64u << 20) /* a larger section is refused */

enum ehframe_cfa {
	EHFRAME_CFA_SP,	   /* CFA = rsp + cfa_off: no frame pointer at that instruction */
	EHFRAME_CFA_FP,	   /* CFA = rbp + cfa_off: a frame pointer (a frame-pointer walk finds
			    * the caller) */
	EHFRAME_CFA_OTHER, /* another register, or an expression */
};

struct ehframe_rule {
	enum ehframe_cfa cfa;
	int64_t cfa_off;
	int64_t ra_off;	 /* the return address is at CFA + ra_off (-8 on x86-64) */
	bool rbp_saved;	 /* the function saved rbp (it may use it for something else) */
	int64_t rbp_off; /* ... at CFA + rbp_off; 0: elsewhere (a register, an expression) */
	bool signal;	 /* a signal frame's (the 'S' augmentation) */
};

/* The rule at address pc (in the section's address space: the file's virtual addresses) of the
 * .eh_frame section sec of len bytes that is loaded at sec_vaddr. 0, or -ENOENT (no entry
 * covers pc), -EBADMSG (a malformed entry on the way), -ENOTSUP (an encoding or augmentation it
 * does not read), -E2BIG (len over EHFRAME_MAX_BYTES). */
int ehframe_rule_at(const uint8_t *sec, size_t len, uint64_t sec_vaddr, uint64_t pc,
		    struct ehframe_rule *r);

#endif
