// SPDX-License-Identifier: GPL-2.0-only
/* cfg.c: control-flow graph recovery and Ball-Larus numbering (see include/kprof/cfg.h).
 *
 * Four passes over one function. This file holds the two that see instructions (Capstone and
 * the builder's state stay here), cfg_build, which runs all four, and the plain queries. What
 * sees only blocks and edges is apart: passes 3 and 4 in cfg_graph.c, the transitions and path
 * ids a tracer uses in cfg_paths.c, the invariant checker in cfg_check.c; struct cfg, which
 * they share, in cfg_internal.h. cfg.c calls cfg_graph.c; cfg_paths.c and cfg_check.c call
 * cfg.c's queries; nothing calls back.
 *
 * 1. explore: a worklist of addresses, each decoded straight on with Capstone until an
 *    instruction that ends the run. One state byte per code byte (instruction start, inside an
 *    instruction, block leader) decodes every byte once and catches branches into the middle of
 *    an instruction, which are rejected rather than guessed at.
 * 2. blocks: the instructions sorted by address, cut at leaders and after block-ending
 *    instructions. Out-edges in a fixed order (fallthrough, then taken or jump, then exit); a jcc
 *    whose target is its own fallthrough gives a single edge, so a (from, to) pair names at most
 *    one edge, which is what a probe at block leaders can observe.
 * 3. loops (cfg_graph.c): a DFS from the entry, its back edges, Havlak's loop nesting forest.
 * 4. numbering (cfg_graph.c): Ball-Larus values on the DAG the back edges leave.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "kprof/array.h"
#include "kprof/cfg.h"
#include "kprof/cleanup.h"
#include "kprof/x86.h"
#include "cfg_internal.h"

enum insn_kind { K_PLAIN, K_COND, K_JMP, K_INDIRECT, K_RET, K_CALL, K_TRAP, K_BAD };

struct insn {
	uint64_t addr;
	uint64_t target; /* K_COND, K_JMP */
	uint8_t len;	 /* 0 for K_BAD */
	uint8_t kind;
};

enum { ST_START = 1, ST_INSIDE = 2, ST_LEADER = 4 };

struct builder {
	const uint8_t *code;
	size_t len;
	uint64_t start;
	uint64_t entry;
	struct cfg_limits lim;
	csh cs;
	cs_insn *ci;
	uint8_t *st; /* one per code byte */
	struct insn *insns;
	size_t ninsns, insns_cap;
	size_t *work;
	size_t nwork, work_cap;
	uint32_t *block_last; /* block -> index of its last insn */
};

/* ---- pass 1: decoding ---- */

/* Capstone failed at off: an instruction cut by the end of the buffer, or bad bytes. */
static int insn_undecodable(const struct builder *b, size_t off)
{
	static const uint8_t fills[] = {0x00, 0xc0};
	size_t n = b->len - off;
	uint8_t pad[32];

	if (n >= 15) /* the longest x86 instruction */
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(fills); i++) {
		const uint8_t *p = pad;
		size_t m = sizeof(pad);
		uint64_t addr = b->start + off;

		memset(pad, fills[i], sizeof(pad));
		memcpy(pad, b->code + off, n);
		if (cs_disasm_iter(b->cs, &p, &m, &addr, b->ci) && b->ci->size > n)
			return -ENODATA;
	}
	return -EINVAL;
}

/* The block-ending kind of one instruction, from the one x86 classifier (x86.h). */
static uint8_t insn_classify(const struct builder *b, const cs_insn *ci, uint64_t *target)
{
	switch (x86_flow(b->cs, ci)) {
	case X86_FLOW_JUMP:
		return x86_target(ci, target) ? K_JMP : K_INDIRECT;
	case X86_FLOW_COND:
		return x86_target(ci, target) ? K_COND : K_INDIRECT;
	case X86_FLOW_IJUMP:
		return K_INDIRECT;
	case X86_FLOW_CALL:
	case X86_FLOW_ICALL:
		return K_CALL;
	case X86_FLOW_RET:
		return K_RET;
	case X86_FLOW_TRAP:
		return K_TRAP;
	case X86_FLOW_SYS:
	case X86_FLOW_PLAIN:
		break;
	}
	return K_PLAIN;
}

static int insn_decode(struct builder *b, size_t off, struct insn *in)
{
	const uint8_t *p = b->code + off;
	size_t n = b->len - off;
	uint64_t addr = b->start + off;

	if (!cs_disasm_iter(b->cs, &p, &n, &addr, b->ci))
		return insn_undecodable(b, off);
	in->len = (uint8_t)b->ci->size;
	in->kind = insn_classify(b, b->ci, &in->target);
	return 0;
}

static int insn_mark(struct builder *b, size_t off, const struct insn *in)
{
	for (size_t i = 1; i < in->len; i++)
		if (b->st[off + i] & (ST_START | ST_INSIDE))
			return -EINVAL; /* overlaps an instruction decoded before */
	b->st[off] |= ST_START;
	for (size_t i = 1; i < in->len; i++)
		b->st[off + i] |= ST_INSIDE;
	return 0;
}

static int insn_append(struct builder *b, const struct insn *in)
{
	if (b->ninsns >= b->lim.max_insns)
		return -E2BIG;
	if (array_grow((void **)&b->insns, &b->insns_cap, b->ninsns + 1, sizeof(*b->insns), 16) < 0)
		return -ENOMEM;
	b->insns[b->ninsns++] = *in;
	return 0;
}

static int work_push(struct builder *b, uint64_t target)
{
	size_t off;

	if (!in_code(b->start, b->len, target))
		return 0; /* leaves the function */
	off = (size_t)(target - b->start);
	b->st[off] |= ST_LEADER;
	if (b->st[off] & ST_START)
		return 0;
	if (array_grow((void **)&b->work, &b->work_cap, b->nwork + 1, sizeof(*b->work), 16) < 0)
		return -ENOMEM;
	b->work[b->nwork++] = off;
	return 0;
}

/* Decode straight on from off until the run ends or meets code decoded before. */
static int explore_run(struct builder *b, size_t off)
{
	bool split = b->lim.flags & CFG_SPLIT_CALLS;
	int r;

	while (!(b->st[off] & ST_START)) {
		struct insn in = {.addr = b->start + off};
		size_t next;

		if (b->st[off] & ST_INSIDE)
			return -EINVAL; /* a branch into the middle of an instruction */
		r = insn_decode(b, off, &in);
		if (r < 0 && (r == -ENOMEM || !(b->lim.flags & CFG_BAD_IS_EXIT)))
			return r;
		if (r < 0) {
			in.kind = K_BAD;
			b->st[off] |= ST_START;
			return insn_append(b, &in);
		}
		r = insn_mark(b, off, &in);
		if (r >= 0)
			r = insn_append(b, &in);
		if (r < 0)
			return r;
		next = off + in.len;
		if (in.kind == K_COND || in.kind == K_JMP) {
			r = work_push(b, in.target);
			if (r < 0)
				return r;
		}
		if (in.kind != K_PLAIN && in.kind != K_CALL && in.kind != K_COND)
			return 0;
		if (next == b->len)
			return 0; /* runs off the end: leaves the function */
		if (in.kind == K_COND || (in.kind == K_CALL && split))
			b->st[next] |= ST_LEADER;
		off = next;
	}
	return 0;
}

static int explore(struct builder *b)
{
	int r = work_push(b, b->entry);

	while (r >= 0 && b->nwork > 0)
		r = explore_run(b, b->work[--b->nwork]);
	return r;
}

/* ---- pass 2: blocks and edges ---- */

static int insn_cmp(const void *a, const void *b)
{
	const struct insn *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool insn_ends_block(const struct builder *b, const struct insn *in)
{
	if (in->kind == K_PLAIN)
		return false;
	return in->kind != K_CALL || (b->lim.flags & CFG_SPLIT_CALLS);
}

static bool insn_starts_block(const struct builder *b, size_t i)
{
	const struct insn *in = &b->insns[i], *prev = i ? &b->insns[i - 1] : NULL;

	return !prev || (b->st[in->addr - b->start] & ST_LEADER) || insn_ends_block(b, prev) ||
	       prev->addr + prev->len != in->addr;
}

static enum cfg_term block_term(const struct builder *b, const struct insn *in)
{
	switch (in->kind) {
	case K_COND:
		return CFG_TERM_COND;
	case K_JMP:
		return in_code(b->start, b->len, in->target) ? CFG_TERM_JMP : CFG_TERM_JMP_OUT;
	case K_INDIRECT:
		return CFG_TERM_INDIRECT;
	case K_RET:
		return CFG_TERM_RET;
	case K_CALL:
		return (b->lim.flags & CFG_SPLIT_CALLS) ? CFG_TERM_CALL : CFG_TERM_FALL;
	case K_TRAP:
		return CFG_TERM_TRAP;
	case K_BAD:
		return CFG_TERM_BAD;
	}
	return CFG_TERM_FALL;
}

static int blocks_make(struct builder *b, struct cfg *g)
{
	size_t n = 0;
	struct cfg_block *bl = NULL;

	qsort(b->insns, b->ninsns, sizeof(*b->insns), insn_cmp);
	for (size_t i = 0; i < b->ninsns; i++)
		n += insn_starts_block(b, i);
	if (n > b->lim.max_blocks)
		return -E2BIG;
	g->blocks = calloc(n, sizeof(*g->blocks));
	b->block_last = calloc(n, sizeof(*b->block_last));
	if (!g->blocks || !b->block_last)
		return -ENOMEM;
	for (size_t i = 0; i < b->ninsns; i++) {
		const struct insn *in = &b->insns[i];

		if (insn_starts_block(b, i)) {
			assert(!i || (b->st[in->addr - b->start] & ST_LEADER));
			bl = &g->blocks[g->nblocks++];
			bl->start = bl->end = bl->last = in->addr;
			bl->loop_parent = CFG_NONE;
		}
		b->block_last[bl - g->blocks] = (uint32_t)i;
		if (in->kind == K_BAD)
			continue;
		bl->last = in->addr;
		bl->end = in->addr + in->len;
		bl->ninsns++;
	}
	for (uint32_t i = 0; i < g->nblocks; i++)
		g->blocks[i].term = block_term(b, &b->insns[b->block_last[i]]);
	g->ninsns = b->ninsns;
	return 0;
}

static uint32_t block_at(const struct cfg *g, uint64_t addr)
{
	int i = cfg_block_find(g, addr);

	assert(i >= 0 && g->blocks[i].start == addr);
	return (uint32_t)i;
}

static void edge_add(struct cfg *g, uint32_t src, uint32_t dst, enum cfg_edge_kind kind)
{
	struct cfg_block *bl = &g->blocks[src];

	for (uint32_t i = 0; i < bl->nedges; i++)
		if (g->edges[bl->first_edge + i].dst == dst)
			return; /* a jcc to its own fallthrough: one edge */
	g->edges[g->nedges++] = (struct cfg_edge){.src = src, .dst = dst, .kind = kind};
	bl->nedges++;
}

static int edges_make(const struct builder *b, struct cfg *g)
{
	g->edges = calloc((size_t)g->nblocks * 2, sizeof(*g->edges));
	if (!g->edges)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->nblocks; i++) {
		struct cfg_block *bl = &g->blocks[i];
		const struct insn *in = &b->insns[b->block_last[i]];
		bool off_end = bl->end - b->start == b->len;
		uint32_t fall = off_end ? CFG_EXIT : CFG_NONE, taken = CFG_EXIT;

		bl->first_edge = g->nedges;
		if (fall == CFG_NONE && (bl->term == CFG_TERM_FALL || bl->term == CFG_TERM_CALL ||
					 bl->term == CFG_TERM_COND))
			fall = block_at(g, bl->end);
		if ((in->kind == K_COND || in->kind == K_JMP) &&
		    in_code(b->start, b->len, in->target))
			taken = block_at(g, in->target);
		switch (bl->term) {
		case CFG_TERM_FALL:
		case CFG_TERM_CALL:
			edge_add(g, i, fall, CFG_EDGE_FALL);
			break;
		case CFG_TERM_COND:
			edge_add(g, i, fall, CFG_EDGE_FALL);
			edge_add(g, i, taken, CFG_EDGE_TAKEN);
			break;
		case CFG_TERM_JMP:
		case CFG_TERM_JMP_OUT:
			edge_add(g, i, taken, CFG_EDGE_JUMP);
			break;
		default:
			edge_add(g, i, CFG_EXIT, CFG_EDGE_EXIT);
			break;
		}
	}
	return 0;
}

/* ---- building ---- */

static void builder_done(struct builder *b)
{
	if (b->ci)
		cs_free(b->ci, 1);
	if (b->cs)
		cs_close(&b->cs);
	free(b->st);
	free(b->insns);
	free(b->work);
	free(b->block_last);
}

static int builder_init(struct builder *b, const uint8_t *code, size_t len, uint64_t start,
			uint64_t entry, const struct cfg_limits *lim)
{
	*b = (struct builder){.code = code, .len = len, .start = start, .entry = entry};
	if (lim)
		b->lim = *lim;
	if (!b->lim.max_bytes)
		b->lim.max_bytes = CFG_DEFAULT_MAX_BYTES;
	if (!b->lim.max_insns)
		b->lim.max_insns = CFG_DEFAULT_MAX_INSNS;
	if (!b->lim.max_blocks)
		b->lim.max_blocks = CFG_DEFAULT_MAX_BLOCKS;
	if (b->lim.max_blocks > CFG_EXIT / 2) /* block and edge indexes stay below CFG_EXIT */
		b->lim.max_blocks = CFG_EXIT / 2;
	if (!b->lim.max_paths)
		b->lim.max_paths = CFG_DEFAULT_MAX_PATHS;
	if (len > b->lim.max_bytes)
		return -E2BIG;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &b->cs) != CS_ERR_OK) {
		b->cs = 0;
		return -ENOMEM;
	}
	if (cs_option(b->cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
		return -ENOMEM;
	b->ci = cs_malloc(b->cs);
	b->st = calloc(len, 1);
	if (!b->ci || !b->st)
		return -ENOMEM;
	return 0;
}

static int cfg_analyze(struct cfg *g, struct builder *b)
{
	struct dfs d = {0};
	int r;

	r = blocks_make(b, g);
	if (r >= 0)
		r = edges_make(b, g);
	if (r < 0)
		return r;
	g->entry = block_at(g, b->entry);
	r = cfg_dfs_run(g, &d);
	if (r >= 0)
		r = cfg_loops_find(g, &d);
	if (r >= 0) {
		cfg_blocks_finish(g, &d);
		r = cfg_bl_number(g, &d, b->lim.max_paths);
	}
	cfg_dfs_free(&d);
	return r;
}

int cfg_build(const uint8_t *code, size_t len, uint64_t start, uint64_t entry,
	      const struct cfg_limits *lim, struct cfg **ret)
{
	struct builder b;
	struct cfg *g;
	int r;

	if (!code || !len || !ret || start + len < start || !in_code(start, len, entry))
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->start = start;
	g->len = len;
	r = builder_init(&b, code, len, start, entry, lim);
	if (r >= 0)
		r = explore(&b);
	if (r >= 0)
		r = cfg_analyze(g, &b);
	builder_done(&b);
	if (r < 0) {
		cfg_free(g);
		return r;
	}
	*ret = g;
	return 0;
}

void cfg_free(struct cfg *g)
{
	if (!g)
		return;
	free(g->blocks);
	free(g->edges);
	free(g->dag);
	free(g->dag_first);
	free(g);
}

/* ---- queries ---- */

size_t cfg_nblocks(const struct cfg *g)
{
	return g->nblocks;
}

const struct cfg_block *cfg_block_get(const struct cfg *g, uint32_t i)
{
	return i < g->nblocks ? &g->blocks[i] : NULL;
}

size_t cfg_nedges(const struct cfg *g)
{
	return g->nedges;
}

const struct cfg_edge *cfg_edge_get(const struct cfg *g, uint32_t i)
{
	return i < g->nedges ? &g->edges[i] : NULL;
}

uint32_t cfg_entry_block(const struct cfg *g)
{
	return g->entry;
}

bool cfg_bl_ok(const struct cfg *g)
{
	return g->bl_ok;
}

uint64_t cfg_num_paths(const struct cfg *g)
{
	return g->num_paths;
}

void cfg_get_stats(const struct cfg *g, struct cfg_stats *st)
{
	*st = (struct cfg_stats){
	    .insns = g->ninsns,
	    .blocks = g->nblocks,
	    .edges = g->nedges,
	    .back_edges = g->nback,
	    .loops = g->nloops,
	    .irreducible_loops = g->nirreducible,
	    .bl_ok = g->bl_ok,
	    .num_paths = g->num_paths,
	    .memory =
		sizeof(*g) + g->nblocks * sizeof(*g->blocks) +
		2 * (size_t)g->nblocks * sizeof(*g->edges) +
		(g->dag ? g->ndag * sizeof(*g->dag) + (g->nblocks + 1) * sizeof(uint32_t) : 0),
	};
}

int cfg_block_find(const struct cfg *g, uint64_t addr)
{
	uint32_t lo = 0, hi = g->nblocks;

	while (lo < hi) { /* first block starting after addr */
		uint32_t mid = lo + (hi - lo) / 2;

		if (g->blocks[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	lo--;
	if (addr < g->blocks[lo].end || addr == g->blocks[lo].start)
		return (int)lo;
	return -ENOENT;
}

int cfg_edge_find(const struct cfg *g, uint32_t from, uint32_t to)
{
	if (from >= g->nblocks)
		return -ENOENT;
	for (uint32_t e = g->blocks[from].first_edge;
	     e < g->blocks[from].first_edge + g->blocks[from].nedges; e++)
		if (g->edges[e].dst == to)
			return (int)e;
	return -ENOENT;
}

const char *cfg_term_name(enum cfg_term t)
{
	static const char *const names[] = {
	    [CFG_TERM_FALL] = "fall", [CFG_TERM_COND] = "cond",
	    [CFG_TERM_JMP] = "jmp",   [CFG_TERM_JMP_OUT] = "jmp-out",
	    [CFG_TERM_RET] = "ret",   [CFG_TERM_INDIRECT] = "indirect",
	    [CFG_TERM_CALL] = "call", [CFG_TERM_TRAP] = "trap",
	    [CFG_TERM_BAD] = "bad",
	};

	return (unsigned)t < sizeof(names) / sizeof(names[0]) && names[t] ? names[t] : "?";
}
