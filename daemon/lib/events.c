// SPDX-License-Identifier: GPL-2.0-only
/* events.c: event classes of machine instructions and event counts from path counts (see
 * include/kprof/events.h for the class table, ALGORITHMS.md §7 for the method).
 *
 * The classifier looks at what Capstone says about one instruction: its control transfer (the
 * one x86 classifier, x86.c, which the CFG builder uses too: branches, calls, returns, system
 * calls), its id (stack, division, multiplication), its operands (a memory operand's access
 * flags make a load or a store), its
 * prefixes (lock) and its instruction groups (x87, MMX, SSE and AVX make floating point or
 * vector; the mnemonic's ss/sd suffix tells scalar from packed). It never looks at what a
 * JIT meant by the code, only at the bytes, so a comparison with a JIT's own accounting (the
 * minijit fixture counts classes from its IR and encoder) is not circular.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "kprof/cfg.h"
#include "kprof/cleanup.h"
#include "kprof/events.h"
#include "kprof/x86.h"

static const char *const ev_names[EV_NR] = {
    [EV_INSNS] = "insns",	  [EV_COND] = "cond_branch", [EV_JUMP] = "jump",
    [EV_IJUMP] = "indirect_jump", [EV_CALL] = "call",	     [EV_ICALL] = "indirect_call",
    [EV_RET] = "return",	  [EV_LOAD] = "load",	     [EV_STORE] = "store",
    [EV_STACK] = "stack",	  [EV_ATOMIC] = "atomic",    [EV_DIV] = "int_div",
    [EV_MUL] = "int_mul",	  [EV_FP] = "fp_scalar",     [EV_VEC] = "vector",
    [EV_SYS] = "syscall",
};

const char *events_name(unsigned cls)
{
	return cls < EV_NR ? ev_names[cls] : NULL;
}

/* Control transfers (the one x86 classifier, x86.h), then stack, arithmetic and loop
 * classes from the instruction id. */
static void classify_id(csh cs, const cs_insn *ci, uint32_t *ev)
{
	static const int flow_ev[] = {
	    [X86_FLOW_JUMP] = EV_JUMP, [X86_FLOW_IJUMP] = EV_IJUMP, [X86_FLOW_COND] = EV_COND,
	    [X86_FLOW_CALL] = EV_CALL, [X86_FLOW_ICALL] = EV_ICALL, [X86_FLOW_RET] = EV_RET,
	    [X86_FLOW_SYS] = EV_SYS,
	};
	enum x86_flow fl = x86_flow(cs, ci);

	if (fl != X86_FLOW_PLAIN && fl != X86_FLOW_TRAP) {
		ev[flow_ev[fl]]++;
		return;
	}
	switch (ci->id) {
	case X86_INS_PUSH:
	case X86_INS_POP:
	case X86_INS_PUSHF:
	case X86_INS_PUSHFQ:
	case X86_INS_POPF:
	case X86_INS_POPFQ:
	case X86_INS_LEAVE:
	case X86_INS_ENTER:
		ev[EV_STACK]++;
		return;
	case X86_INS_DIV:
	case X86_INS_IDIV:
		ev[EV_DIV]++;
		return;
	case X86_INS_MUL:
	case X86_INS_IMUL:
	case X86_INS_MULX:
		ev[EV_MUL]++;
		return;
	}
}

/* Loads, stores and atomics from the operands and prefixes. */
static void classify_mem(const cs_insn *ci, uint32_t *ev)
{
	const cs_x86 *x = &ci->detail->x86;
	bool rd = false, wr = false, mem = false;

	switch (ci->id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
	case X86_INS_PREFETCH:
	case X86_INS_PREFETCHNTA:
	case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1:
	case X86_INS_PREFETCHT2:
	case X86_INS_PREFETCHW:
		return; /* an address, not an access */
	}
	for (unsigned i = 0; i < x->op_count; i++) {
		if (x->operands[i].type != X86_OP_MEM)
			continue;
		mem = true;
		rd |= x->operands[i].access & CS_AC_READ;
		wr |= x->operands[i].access & CS_AC_WRITE;
	}
	if (mem && !rd && !wr)
		rd = true; /* Capstone did not say: a memory operand is at least read */
	ev[EV_LOAD] += rd;
	ev[EV_STORE] += wr;
	if (x->prefix[0] == X86_PREFIX_LOCK || (ci->id == X86_INS_XCHG && mem))
		ev[EV_ATOMIC]++;
}

static bool in_group(csh cs, const cs_insn *ci, const uint8_t *groups, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cs_insn_group(cs, ci, groups[i]))
			return true;
	return false;
}

/* x87 is scalar floating point; SIMD instructions on one element end in ss or sd. */
static void classify_fp(csh cs, const cs_insn *ci, uint32_t *ev)
{
	static const uint8_t simd[] = {X86_GRP_MMX,   X86_GRP_SSE1,  X86_GRP_SSE2,   X86_GRP_SSE3,
				       X86_GRP_SSSE3, X86_GRP_SSE41, X86_GRP_SSE42,  X86_GRP_SSE4A,
				       X86_GRP_AVX,   X86_GRP_AVX2,  X86_GRP_AVX512, X86_GRP_FMA,
				       X86_GRP_FMA4,  X86_GRP_F16C,  X86_GRP_3DNOW};
	size_t n = strlen(ci->mnemonic);

	if (cs_insn_group(cs, ci, X86_GRP_FPU)) {
		ev[EV_FP]++;
		return;
	}
	if (!in_group(cs, ci, simd, sizeof(simd)))
		return;
	if (n > 2 && ci->mnemonic[n - 2] == 's' &&
	    (ci->mnemonic[n - 1] == 's' || ci->mnemonic[n - 1] == 'd'))
		ev[EV_FP]++;
	else
		ev[EV_VEC]++;
}

static void classify(csh cs, const cs_insn *ci, uint32_t *ev)
{
	ev[EV_INSNS]++;
	classify_id(cs, ci, ev);
	classify_mem(ci, ev);
	classify_fp(cs, ci, ev);
}

static void cs_closep(csh *cs)
{
	if (*cs)
		cs_close(cs);
}

static int block_classify(csh cs, cs_insn *ci, const uint8_t *code, size_t len, uint64_t start,
			  const struct cfg_block *blk, uint32_t *ev)
{
	const uint8_t *p;
	uint64_t addr = blk->start;
	size_t n;

	if (blk->start < start || blk->end < blk->start || blk->end - start > len)
		return -EINVAL;
	p = code + (blk->start - start);
	n = (size_t)(blk->end - blk->start);
	for (uint32_t i = 0; i < blk->ninsns; i++) {
		if (!cs_disasm_iter(cs, &p, &n, &addr, ci))
			return -EINVAL;
		classify(cs, ci, ev);
	}
	return n == 0 ? 0 : -EINVAL; /* the block must end where its last instruction does */
}

int events_blocks(const uint8_t *code, size_t len, uint64_t start, const struct cfg *g,
		  uint32_t *out)
{
	_cleanup_(cs_closep) csh cs = 0;
	cs_insn *ci;
	int r = 0;

	if (!code || !g || !out || len == 0)
		return -EINVAL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK ||
	    cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
		return -ENOMEM;
	ci = cs_malloc(cs);
	if (!ci)
		return -ENOMEM;
	memset(out, 0, cfg_nblocks(g) * EV_NR * sizeof(*out));
	for (uint32_t b = 0; r == 0 && b < cfg_nblocks(g); b++)
		r = block_classify(cs, ci, code, len, start, cfg_block_get(g, b), out + b * EV_NR);
	cs_free(ci, 1);
	return r;
}

int events_in_loop(const struct cfg *g, uint32_t b, uint32_t h)
{
	const struct cfg_block *blk = cfg_block_get(g, b);
	uint32_t x, guard = 0;

	if (!blk)
		return 0;
	x = (blk->flags & CFG_BLOCK_HEADER) ? b : blk->loop_parent;
	while (x != CFG_NONE && guard++ <= cfg_nblocks(g)) {
		if (x == h)
			return 1;
		x = cfg_block_get(g, x)->loop_parent;
	}
	return 0;
}

int events_add_path(const struct cfg *g, const uint32_t *blockev, uint64_t id, uint64_t count,
		    uint64_t *func, const uint32_t *hdr, size_t nloops, uint64_t *loops)
{
	_cleanup_free_ struct cfg_step *steps = calloc(cfg_nblocks(g) + 1, sizeof(*steps));
	int n;

	if (!steps)
		return -ENOMEM;
	n = cfg_path_decode(g, id, steps, cfg_nblocks(g) + 1);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		const uint32_t *ev = blockev + (size_t)steps[i].block * EV_NR;

		for (unsigned c = 0; c < EV_NR; c++)
			func[c] += count * ev[c];
		for (size_t l = 0; l < nloops; l++) {
			if (!events_in_loop(g, steps[i].block, hdr[l]))
				continue;
			for (unsigned c = 0; c < EV_NR; c++)
				loops[l * EV_NR + c] += count * ev[c];
		}
	}
	return 0;
}

int events_add_steps(const struct cfg *g, const struct cfg_step *steps, size_t n, uint64_t count,
		     uint64_t *runs)
{
	if (!g || !runs || (n && !steps))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (steps[i].block >= cfg_nblocks(g))
			return -EINVAL;
	for (size_t i = 0; i < n; i++)
		runs[steps[i].block] += count;
	return 0;
}

void events_from_runs(const uint32_t *blockev, const uint64_t *runs, size_t nblocks, uint64_t *out)
{
	for (size_t b = 0; b < nblocks; b++) {
		if (!runs[b])
			continue;
		for (unsigned c = 0; c < EV_NR; c++)
			out[c] += runs[b] * blockev[b * EV_NR + c];
	}
}

double events_accuracy(double observed, double actual)
{
	double d = observed - actual;

	if (actual == 0)
		return observed == 0 ? 1.0 : 0.0;
	return 1.0 - (d < 0 ? -d : d) / actual;
}
