/* SPDX-License-Identifier: GPL-2.0-only */
/* events.h: event counts from path counts (Basso et al., TOPLAS 45(2) 2023, path counting,
 * ALGORITHMS.md §7).
 *
 * Every instruction of a function's basic blocks (cfg.h) is decoded again with Capstone and
 * sorted into event classes by the table below: the per-block event table. A Ball-Larus path's
 * events are the sum over its blocks, and
 *
 *     count(e) = sum over paths p of count(p) x events(p, e)
 *
 * gives the function's event counts from its path profile, with no counter per event; the same
 * sum restricted to the blocks of a loop gives the loop's. The paths of one activation partition
 * its block trace (every executed block is on exactly one path), so on a complete trace the
 * counts are exact. One instruction may count in several classes (`inc qword [rax]` is a load
 * and a store; every instruction counts in EV_INSNS).
 *
 * | class          | what counts (x86-64, Capstone 4)                                        |
 * |----------------|-------------------------------------------------------------------------|
 * | insns          | every instruction                                                       |
 * | cond_branch    | jcc, jrcxz/jecxz, loop/loope/loopne (taken or not)                      |
 * | jump           | jmp to an immediate target                                               |
 * | indirect_jump  | jmp through a register or memory, ljmp                                   |
 * | call           | call to an immediate target                                              |
 * | indirect_call  | call through a register or memory, lcall                                 |
 * | return         | ret, retf, iret*                                                         |
 * | load           | an explicit memory operand that is read (not lea, nop, prefetch)         |
 * | store          | an explicit memory operand that is written                               |
 * | stack          | push, pop, pushf, popf, leave, enter (implicit stack accesses)           |
 * | atomic         | a lock prefix, or xchg with a memory operand                             |
 * | int_div        | div, idiv                                                                |
 * | int_mul        | mul, imul, mulx                                                          |
 * | fp_scalar      | x87, and SSE/AVX instructions on one float or double (..ss, ..sd)       |
 * | vector         | other MMX/SSE/AVX instructions (packed and integer SIMD, moves)          |
 * | syscall        | syscall, sysenter, int n                                                 |
 *
 * No I/O, no logging, no globals.
 */
#ifndef KPROF_EVENTS_H
#define KPROF_EVENTS_H

#include <stddef.h>
#include <stdint.h>

struct cfg;

enum ev_class {
	EV_INSNS = 0,
	EV_COND,
	EV_JUMP,
	EV_IJUMP,
	EV_CALL,
	EV_ICALL,
	EV_RET,
	EV_LOAD,
	EV_STORE,
	EV_STACK,
	EV_ATOMIC,
	EV_DIV,
	EV_MUL,
	EV_FP,
	EV_VEC,
	EV_SYS,
	EV_NR
};

/* The class's name in replies and docs ("cond_branch", ...); NULL out of range. */
const char *events_name(unsigned cls);

/* The per-block event table of g: out[b * EV_NR + c] = instructions of block b in class c.
 * code[0..len) mapped at start must be the bytes g was built from. -EINVAL (bad arguments, a
 * block outside the code, bytes that no longer decode), -ENOMEM. */
int events_blocks(const uint8_t *code, size_t len, uint64_t start, const struct cfg *g,
		  uint32_t *out);

/* Is block b inside the loop headed by h (h itself included, nested loops too)? */
int events_in_loop(const struct cfg *g, uint32_t b, uint32_t h);

/* Add count x the events of Ball-Larus path id to func[EV_NR] and, for each of the nloops
 * headers hdr[i], the events of the path's blocks inside that loop to loops[i * EV_NR ..].
 * loops may be NULL when nloops is 0. -ERANGE (bad id), -EOVERFLOW (no numbering), -ENOMEM. */
int events_add_path(const struct cfg *g, const uint32_t *blockev, uint64_t id, uint64_t count,
		    uint64_t *func, const uint32_t *hdr, size_t nloops, uint64_t *loops);

/* Basso's accuracy of an observed count against the actual one: 1 - |obs - act| / act
 * (1 when both are 0, 0 when act is 0 and obs is not; may be negative). */
double events_accuracy(double observed, double actual);

#endif
