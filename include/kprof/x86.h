/* SPDX-License-Identifier: GPL-2.0-only */
/* x86.h: the one classifier of x86-64 control transfers (x86.c), shared by the CFG builder
 * (cfg.c: where a basic block ends and where it goes) and the event classifier (events.c: which
 * event class an instruction counts in), so that the two never disagree on what a return or a
 * jump is. Pure: it reads what Capstone decoded (with CS_OPT_DETAIL on).
 */
#ifndef KPROF_X86_H
#define KPROF_X86_H

#include <stdbool.h>
#include <stdint.h>

#include <capstone/capstone.h>

enum x86_flow {
	X86_FLOW_PLAIN, /* falls through to the next instruction */
	X86_FLOW_JUMP,	/* jmp to an immediate target */
	X86_FLOW_IJUMP, /* jmp through a register or memory, ljmp */
	X86_FLOW_COND,	/* jcc, jrcxz, loop*: to an immediate target or the next instruction */
	X86_FLOW_CALL,	/* call to an immediate target */
	X86_FLOW_ICALL, /* call through a register or memory, lcall */
	X86_FLOW_RET,	/* ret, retf, iret*, sysret, sysexit */
	X86_FLOW_TRAP,	/* ud0, ud2, hlt, int3, int1: never falls through */
	X86_FLOW_SYS,	/* syscall, sysenter, int N: into the kernel and back */
};

/* What ci (decoded by cs with details) does to the flow of control. */
enum x86_flow x86_flow(csh cs, const cs_insn *ci);

/* The immediate target of a jump, conditional jump or call (X86_FLOW_JUMP, _COND, _CALL) in
 * *target: true, or false when it has none (an operand Capstone did not give as immediate). */
bool x86_target(const cs_insn *ci, uint64_t *target);

#endif
