// SPDX-License-Identifier: GPL-2.0-only
/* x86.c: the control-transfer class of one x86-64 instruction (see include/kprof/x86.h).
 *
 * By instruction id first (returns, traps, system calls, the loop instructions that Capstone 4
 * leaves out of its jump group, far jumps and calls), then by Capstone's groups: a jump that is
 * not jmp is conditional; a call or jmp with one immediate operand is direct.
 */
#include "kprof/x86.h"

bool x86_target(const cs_insn *ci, uint64_t *target)
{
	const cs_x86 *x = &ci->detail->x86;

	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x->operands[0].imm;
	return true;
}

enum x86_flow x86_flow(csh cs, const cs_insn *ci)
{
	uint64_t target;

	switch (ci->id) {
	case X86_INS_RET:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
	case X86_INS_SYSRET:
	case X86_INS_SYSEXIT:
		return X86_FLOW_RET;
	case X86_INS_UD0:
	case X86_INS_UD2:
	case X86_INS_UD2B:
	case X86_INS_HLT:
	case X86_INS_INT3:
	case X86_INS_INT1:
		return X86_FLOW_TRAP;
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
	case X86_INS_INT:
		return X86_FLOW_SYS;
	case X86_INS_LOOP: /* not in Capstone 4's jump group */
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
		return X86_FLOW_COND;
	case X86_INS_LJMP:
		return X86_FLOW_IJUMP;
	case X86_INS_LCALL:
		return X86_FLOW_ICALL;
	case X86_INS_JMP:
		return x86_target(ci, &target) ? X86_FLOW_JUMP : X86_FLOW_IJUMP;
	case X86_INS_CALL:
		return x86_target(ci, &target) ? X86_FLOW_CALL : X86_FLOW_ICALL;
	}
	if (cs_insn_group(cs, ci, CS_GRP_JUMP))
		return X86_FLOW_COND; /* every other jump is conditional: jcc, jrcxz, jecxz */
	if (cs_insn_group(cs, ci, CS_GRP_CALL))
		return X86_FLOW_ICALL;
	return X86_FLOW_PLAIN;
}
