// SPDX-License-Identifier: GPL-2.0-only
/* cfg.c: control-flow graph recovery and Ball-Larus numbering (see include/kprof/cfg.h).
 *
 * Four passes over one function:
 * 1. explore: a worklist of addresses, each decoded straight on with Capstone until an
 *    instruction that ends the run. One state byte per code byte (instruction start, inside an
 *    instruction, block leader) decodes every byte once and catches branches into the middle of
 *    an instruction, which are rejected rather than guessed at.
 * 2. blocks: the instructions sorted by address, cut at leaders and after block-ending
 *    instructions. Out-edges in a fixed order (fallthrough, then taken or jump, then exit); a jcc
 *    whose target is its own fallthrough gives a single edge, so a (from, to) pair names at most
 *    one edge, which is what a probe at block leaders can observe.
 * 3. loops: an iterative DFS from the entry, successors in edge order. Back edges are the edges
 *    to a DFS ancestor or to the block itself (retreating edges); removing them leaves a DAG for
 *    any DFS. Havlak's algorithm (TOPLAS 19(4), 1997) over the same DFS builds the loop nesting
 *    forest and flags irreducible loops: a loop's header is its first block in DFS preorder, only
 *    edges into that header are back edges, and the loop's other entries stay ordinary edges, so
 *    a path may enter an irreducible loop at any of its entries. The successor order is fixed, so
 *    the choice of header is deterministic.
 * 4. numbering: per DAG vertex an out-list (dummies first, as in ALGORITHMS.md TV-BL: v->EXIT when
 *    v is a back edge source, then ENTRY->h for every header h when v is the entry block, then
 *    the real edges that are not back edges), vals and NumPaths computed in DFS postorder (a
 *    reverse topological order of the DAG). ENTRY is the entry block: a back edge to the entry
 *    block needs no dummy, as the path it starts is numbered like one from function entry.
 *    Counts are checked against the cap on every addition, so they never wrap.
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

/* A vertex's out-list entry in the numbering DAG. edge == CFG_NONE marks a dummy: to CFG_EXIT
 * (a back edge source) or to a header (from the entry block). */
struct dag_edge {
	uint32_t dst;
	uint32_t edge;
	uint64_t val;
};

struct cfg {
	uint64_t start;
	size_t len;
	uint32_t entry;
	struct cfg_block *blocks;
	uint32_t nblocks;
	struct cfg_edge *edges;
	uint32_t nedges;
	struct dag_edge *dag;
	uint32_t *dag_first; /* nblocks + 1 offsets into dag */
	uint32_t ndag;
	size_t ninsns, nback, nloops, nirreducible;
	uint64_t num_paths;
	bool bl_ok;
};

struct dfs {
	uint32_t *pre;	/* block -> preorder number */
	uint32_t *last; /* block -> highest preorder number in its subtree */
	uint32_t *node; /* preorder number -> block */
	uint32_t *post; /* blocks in postorder */
};

static bool in_code(uint64_t start, size_t len, uint64_t addr)
{
	return addr >= start && addr - start < len;
}

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

static uint8_t insn_branch(const cs_insn *ci, uint64_t *target)
{
	const cs_x86 *x = &ci->detail->x86;

	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return K_INDIRECT;
	*target = (uint64_t)x->operands[0].imm;
	return ci->id == X86_INS_JMP ? K_JMP : K_COND;
}

static uint8_t insn_classify(const struct builder *b, const cs_insn *ci, uint64_t *target)
{
	switch (ci->id) {
	case X86_INS_LJMP:
		return K_INDIRECT;
	case X86_INS_RET:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
	case X86_INS_SYSRET:
	case X86_INS_SYSEXIT:
		return K_RET;
	case X86_INS_UD0:
	case X86_INS_UD2:
	case X86_INS_UD2B:
	case X86_INS_HLT:
	case X86_INS_INT3:
	case X86_INS_INT1:
		return K_TRAP;
	case X86_INS_LOOP: /* not in Capstone 4's jump group */
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
		return insn_branch(ci, target);
	}
	if (cs_insn_group(b->cs, ci, CS_GRP_JUMP))
		return insn_branch(ci, target);
	if (cs_insn_group(b->cs, ci, CS_GRP_CALL))
		return K_CALL;
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

/* ---- pass 3: DFS, back edges, loop nesting forest ---- */

static bool dfs_ancestor(const struct dfs *d, uint32_t w, uint32_t v)
{
	return d->pre[w] <= d->pre[v] && d->pre[v] <= d->last[w];
}

static void dfs_free(struct dfs *d)
{
	free(d->pre);
	free(d->last);
	free(d->node);
	free(d->post);
}

static int dfs_run(const struct cfg *g, struct dfs *d)
{
	uint32_t n = g->nblocks, npre = 0, npost = 0, sp = 0;
	_cleanup_free_ uint32_t *stk = calloc(n, sizeof(*stk)), *pos = calloc(n, sizeof(*pos));

	d->pre = malloc(n * sizeof(*d->pre));
	d->last = malloc(n * sizeof(*d->last));
	d->node = malloc(n * sizeof(*d->node));
	d->post = malloc(n * sizeof(*d->post));
	if (!stk || !pos || !d->pre || !d->last || !d->node || !d->post)
		return -ENOMEM;
	memset(d->pre, 0xff, n * sizeof(*d->pre));
	d->pre[g->entry] = npre;
	d->node[npre++] = g->entry;
	stk[sp++] = g->entry;
	while (sp > 0) {
		uint32_t v = stk[sp - 1], w;
		const struct cfg_block *bl = &g->blocks[v];

		if (pos[sp - 1] == bl->nedges) {
			d->last[v] = npre - 1;
			d->post[npost++] = v;
			sp--;
			continue;
		}
		w = g->edges[bl->first_edge + pos[sp - 1]++].dst;
		if (w == CFG_EXIT || d->pre[w] != CFG_NONE)
			continue;
		d->pre[w] = npre;
		d->node[npre++] = w;
		pos[sp] = 0;
		stk[sp++] = w;
	}
	assert(npre == n && npost == n); /* every block was reached from the entry */
	return 0;
}

struct plist {
	uint32_t node, next;
};

struct havlak {
	uint32_t *uf;	 /* union-find parent */
	uint32_t *mark;	 /* block -> header whose loop body it was last added to */
	uint32_t *body;	 /* the loop body being collected, also the worklist */
	uint32_t *nb;	 /* block -> head of its non-back predecessor list in pool */
	uint32_t *bp;	 /* block -> head of its back predecessor list in pool */
	uint32_t *outer; /* block -> header it was last recorded as an outside entry of */
	struct plist *pool;
	size_t npool, pool_cap, pool_max;
};

static uint32_t uf_find(uint32_t *uf, uint32_t x)
{
	while (uf[x] != x) {
		uf[x] = uf[uf[x]];
		x = uf[x];
	}
	return x;
}

static int plist_push(struct havlak *h, uint32_t *head, uint32_t node)
{
	if (h->npool == h->pool_max)
		return -E2BIG;
	if (array_grow((void **)&h->pool, &h->pool_cap, h->npool + 1, sizeof(*h->pool), 16) < 0)
		return -ENOMEM;
	h->pool[h->npool] = (struct plist){.node = node, .next = *head};
	*head = (uint32_t)h->npool++;
	return 0;
}

/* The loop headed by w: its body from the back edges into w, walking non-back predecessors. */
static int havlak_loop(struct cfg *g, const struct dfs *d, struct havlak *h, uint32_t w)
{
	uint32_t nbody = 0;
	int r;

	for (uint32_t p = h->bp[w]; p != CFG_NONE; p = h->pool[p].next) {
		uint32_t x = uf_find(h->uf, h->pool[p].node);

		g->blocks[w].flags |= CFG_BLOCK_HEADER;
		if (x != w && h->mark[x] != w) {
			h->mark[x] = w;
			h->body[nbody++] = x;
		}
	}
	for (uint32_t k = 0; k < nbody; k++) {
		for (uint32_t p = h->nb[h->body[k]]; p != CFG_NONE; p = h->pool[p].next) {
			uint32_t y = uf_find(h->uf, h->pool[p].node);

			if (!dfs_ancestor(d, w, y)) {
				/* Another entry into the loop: w's own predecessor from now on. */
				g->blocks[w].flags |= CFG_BLOCK_IRREDUCIBLE;
				if (h->outer[y] == w)
					continue;
				h->outer[y] = w;
				r = plist_push(h, &h->nb[w], y);
				if (r < 0)
					return r;
			} else if (y != w && h->mark[y] != w) {
				h->mark[y] = w;
				h->body[nbody++] = y;
			}
		}
	}
	for (uint32_t k = 0; k < nbody; k++) {
		g->blocks[h->body[k]].loop_parent = w;
		h->uf[h->body[k]] = w;
	}
	return 0;
}

static int loops_find(struct cfg *g, const struct dfs *d)
{
	uint32_t n = g->nblocks;
	/* Outside entries are passed up to every enclosing loop: quadratic in the worst case. */
	struct havlak h = {.pool_max = 16 * ((size_t)g->nedges + n) + 65536};
	int r = -ENOMEM;

	for (uint32_t e = 0; e < g->nedges; e++) {
		struct cfg_edge *ed = &g->edges[e];

		ed->back = ed->dst != CFG_EXIT && dfs_ancestor(d, ed->dst, ed->src);
		g->nback += ed->back;
	}
	h.uf = malloc(n * sizeof(*h.uf));
	h.mark = malloc(n * sizeof(*h.mark));
	h.body = malloc(n * sizeof(*h.body));
	h.nb = malloc(n * sizeof(*h.nb));
	h.bp = malloc(n * sizeof(*h.bp));
	h.outer = malloc(n * sizeof(*h.outer));
	if (!h.uf || !h.mark || !h.body || !h.nb || !h.bp || !h.outer)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		h.uf[i] = i;
		h.mark[i] = h.nb[i] = h.bp[i] = h.outer[i] = CFG_NONE;
	}
	r = 0;
	for (uint32_t e = 0; e < g->nedges && r >= 0; e++) {
		const struct cfg_edge *ed = &g->edges[e];

		if (ed->dst != CFG_EXIT)
			r = plist_push(&h, ed->back ? &h.bp[ed->dst] : &h.nb[ed->dst], ed->src);
	}
	for (uint32_t i = n; i-- > 0 && r >= 0;)
		r = havlak_loop(g, d, &h, d->node[i]);
out:
	free(h.uf);
	free(h.mark);
	free(h.body);
	free(h.nb);
	free(h.bp);
	free(h.outer);
	free(h.pool);
	return r;
}

/* Flags and loop depth; in preorder, so a block's loop header is done before it. */
static void blocks_finish(struct cfg *g, const struct dfs *d)
{
	for (uint32_t e = 0; e < g->nedges; e++) {
		struct cfg_block *src = &g->blocks[g->edges[e].src];

		if (g->edges[e].back)
			src->flags |= CFG_BLOCK_BACK_SRC;
		if (g->edges[e].dst == CFG_EXIT)
			src->flags |= CFG_BLOCK_EXIT;
	}
	g->blocks[g->entry].flags |= CFG_BLOCK_ENTRY;
	for (uint32_t i = 0; i < g->nblocks; i++) {
		struct cfg_block *bl = &g->blocks[d->node[i]];
		bool all_exit = true;

		for (uint32_t k = 0; k < bl->nedges; k++)
			all_exit &= g->edges[bl->first_edge + k].dst == CFG_EXIT;
		if (all_exit)
			bl->flags |= CFG_BLOCK_EXIT_ONLY;
		bl->loop_depth =
		    bl->loop_parent == CFG_NONE ? 0 : g->blocks[bl->loop_parent].loop_depth;
		if (bl->flags & CFG_BLOCK_HEADER) {
			bl->loop_depth++;
			g->nloops++;
			g->nirreducible += !!(bl->flags & CFG_BLOCK_IRREDUCIBLE);
		}
	}
}

/* ---- pass 4: Ball-Larus numbering ---- */

static int dag_make(struct cfg *g)
{
	uint32_t n = g->nblocks, k = 0;

	g->dag_first = calloc((size_t)n + 1, sizeof(*g->dag_first));
	g->dag = calloc((size_t)g->nedges + g->nback + 2 * (size_t)n, sizeof(*g->dag));
	if (!g->dag_first || !g->dag)
		return -ENOMEM;
	for (uint32_t v = 0; v < n; v++) {
		const struct cfg_block *bl = &g->blocks[v];

		g->dag_first[v] = k;
		if (bl->flags & CFG_BLOCK_BACK_SRC)
			g->dag[k++] = (struct dag_edge){.dst = CFG_EXIT, .edge = CFG_NONE};
		for (uint32_t h = 0; v == g->entry && h < n; h++)
			if (h != g->entry && (g->blocks[h].flags & CFG_BLOCK_HEADER))
				g->dag[k++] = (struct dag_edge){.dst = h, .edge = CFG_NONE};
		for (uint32_t e = bl->first_edge; e < bl->first_edge + bl->nedges; e++)
			if (!g->edges[e].back)
				g->dag[k++] = (struct dag_edge){.dst = g->edges[e].dst, .edge = e};
	}
	g->dag_first[n] = g->ndag = k;
	return 0;
}

static uint64_t dag_npaths(const struct cfg *g, uint32_t v)
{
	return v == CFG_EXIT ? 1 : g->blocks[v].num_paths;
}

/* NumPaths and vals; false when a count passes the cap. */
static bool bl_count(struct cfg *g, const struct dfs *d, uint64_t cap)
{
	for (uint32_t i = 0; i < g->nblocks; i++) {
		uint32_t v = d->post[i];
		uint64_t sum = 0;

		for (uint32_t k = g->dag_first[v]; k < g->dag_first[v + 1]; k++) {
			g->dag[k].val = sum;
			if (__builtin_add_overflow(sum, dag_npaths(g, g->dag[k].dst), &sum) ||
			    sum > cap)
				return false;
		}
		g->blocks[v].num_paths = sum;
	}
	return true;
}

static void bl_export(struct cfg *g)
{
	for (uint32_t v = 0; v < g->nblocks; v++) {
		for (uint32_t k = g->dag_first[v]; k < g->dag_first[v + 1]; k++) {
			const struct dag_edge *de = &g->dag[k];

			if (de->edge != CFG_NONE)
				g->edges[de->edge].val = de->val;
			if (de->edge != CFG_NONE && de->dst == CFG_EXIT)
				g->blocks[v].exit_val = de->val;
			else if (de->edge == CFG_NONE && de->dst == CFG_EXIT)
				g->blocks[v].back_exit_val = de->val;
			else if (de->edge == CFG_NONE)
				g->blocks[de->dst].entry_val = de->val;
		}
	}
}

static int bl_number(struct cfg *g, const struct dfs *d, uint64_t cap)
{
	int r = dag_make(g);

	if (r < 0)
		return r;
	g->bl_ok = bl_count(g, d, cap);
	if (g->bl_ok) {
		g->num_paths = g->blocks[g->entry].num_paths;
		bl_export(g);
		return 0;
	}
	for (uint32_t v = 0; v < g->nblocks; v++)
		g->blocks[v].num_paths = 0;
	free(g->dag);
	free(g->dag_first);
	g->dag = NULL;
	g->dag_first = NULL;
	g->ndag = 0;
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
	r = dfs_run(g, &d);
	if (r >= 0)
		r = loops_find(g, &d);
	if (r >= 0) {
		blocks_finish(g, &d);
		r = bl_number(g, &d, b->lim.max_paths);
	}
	dfs_free(&d);
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

int cfg_transition(const struct cfg *g, uint32_t from, uint32_t to, struct cfg_transition *t)
{
	const struct cfg_edge *ed;
	int e;

	if (!g->bl_ok)
		return -EOVERFLOW;
	if (from == CFG_NONE) {
		if (to != g->entry)
			return -ENOENT;
		*t = (struct cfg_transition){.act = CFG_ACT_START, .edge = CFG_NONE};
		return 0;
	}
	e = to < g->nblocks ? cfg_edge_find(g, from, to) : -ENOENT;
	if (e < 0)
		return e;
	ed = &g->edges[e];
	if (ed->back)
		*t = (struct cfg_transition){.act = CFG_ACT_BACK,
					     .edge = (uint32_t)e,
					     .add = g->blocks[from].back_exit_val,
					     .reset = g->blocks[to].entry_val};
	else
		*t = (struct cfg_transition){
		    .act = CFG_ACT_ADD, .edge = (uint32_t)e, .add = ed->val};
	return 0;
}

/* The out-list entry of v that path remainder r goes through: the last one with val <= r. */
static const struct dag_edge *dag_pick(const struct cfg *g, uint32_t v, uint64_t r)
{
	uint32_t k = g->dag_first[v + 1];

	assert(k > g->dag_first[v]);
	while (--k > g->dag_first[v] && g->dag[k].val > r)
		;
	return &g->dag[k];
}

int cfg_path_decode(const struct cfg *g, uint64_t id, struct cfg_step *steps, size_t cap)
{
	uint32_t v = g->entry;
	uint64_t r = id;
	size_t n = 0;

	if (!g->bl_ok)
		return -EOVERFLOW;
	if (id >= g->num_paths)
		return -ERANGE;
	for (;;) {
		const struct dag_edge *de = dag_pick(g, v, r);

		r -= de->val;
		if (de->edge == CFG_NONE && de->dst != CFG_EXIT) {
			v = de->dst; /* ENTRY->header: the path starts at the header */
			continue;
		}
		if (n == cap)
			return -ENOSPC;
		steps[n++] = (struct cfg_step){.block = v, .edge = de->edge};
		if (de->dst == CFG_EXIT)
			break;
		v = de->dst;
	}
	assert(r == 0);
	return (int)n;
}

int cfg_path_encode(const struct cfg *g, const struct cfg_step *steps, size_t n, uint64_t *id)
{
	uint64_t sum = 0;

	if (!g->bl_ok)
		return -EOVERFLOW;
	if (!n || steps[0].block >= g->nblocks)
		return -EINVAL;
	if (steps[0].block != g->entry) {
		if (!(g->blocks[steps[0].block].flags & CFG_BLOCK_HEADER))
			return -EINVAL;
		sum = g->blocks[steps[0].block].entry_val;
	}
	for (size_t i = 0; i < n; i++) {
		const struct cfg_block *bl = &g->blocks[steps[i].block];
		const struct cfg_edge *ed;
		bool lastone = i + 1 == n;

		if (steps[i].edge == CFG_NONE) {
			if (!lastone || !(bl->flags & CFG_BLOCK_BACK_SRC))
				return -EINVAL;
			sum += bl->back_exit_val;
			break;
		}
		ed = cfg_edge_get(g, steps[i].edge);
		if (!ed || ed->src != steps[i].block || ed->back ||
		    lastone != (ed->dst == CFG_EXIT) || (!lastone && ed->dst != steps[i + 1].block))
			return -EINVAL;
		sum += ed->val;
	}
	*id = sum;
	return 0;
}

/* ---- invariants ---- */

static bool check_blocks(const struct cfg *g)
{
	if (!g->nblocks || g->entry >= g->nblocks)
		return false;
	for (uint32_t i = 0; i < g->nblocks; i++) {
		const struct cfg_block *bl = &g->blocks[i];
		uint32_t e0 = bl->first_edge;

		if (bl->start > bl->end || !in_code(g->start, g->len, bl->start) ||
		    bl->end - g->start > g->len || (i && bl->start < g->blocks[i - 1].end) ||
		    (i && bl->start <= g->blocks[i - 1].start) ||
		    (bl->ninsns && (bl->last < bl->start || bl->last >= bl->end)) ||
		    !!(bl->flags & CFG_BLOCK_ENTRY) != (i == g->entry))
			return false;
		if (!bl->nedges || bl->nedges > 2 ||
		    e0 != (i ? g->blocks[i - 1].first_edge + g->blocks[i - 1].nedges : 0))
			return false;
		if (bl->loop_parent != CFG_NONE &&
		    (bl->loop_parent >= g->nblocks ||
		     !(g->blocks[bl->loop_parent].flags & CFG_BLOCK_HEADER)))
			return false;
	}
	return g->blocks[g->nblocks - 1].first_edge + g->blocks[g->nblocks - 1].nedges == g->nedges;
}

/* u is in the loop headed by h. */
static bool in_loop(const struct cfg *g, uint32_t u, uint32_t h)
{
	for (uint32_t x = u; x != CFG_NONE; x = g->blocks[x].loop_parent)
		if (x == h)
			return true;
	return false;
}

static bool check_edge(const struct cfg *g, uint32_t e)
{
	const struct cfg_edge *ed = &g->edges[e];
	const struct cfg_block *src;

	if (ed->src >= g->nblocks || (ed->dst != CFG_EXIT && ed->dst >= g->nblocks))
		return false;
	src = &g->blocks[ed->src];
	if (e < src->first_edge || e >= src->first_edge + src->nedges ||
	    (uint32_t)cfg_edge_find(g, ed->src, ed->dst) != e)
		return false; /* also catches two edges with the same ends */
	if (ed->back && (ed->dst == CFG_EXIT || !(g->blocks[ed->dst].flags & CFG_BLOCK_HEADER) ||
			 !in_loop(g, ed->src, ed->dst)))
		return false;
	return ed->kind == CFG_EDGE_EXIT ? ed->dst == CFG_EXIT : ed->kind >= CFG_EDGE_FALL;
}

/* Edges, and the block flags that follow from them. */
static bool check_edges(const struct cfg *g)
{
	_cleanup_free_ uint32_t *back_in = calloc(g->nblocks, sizeof(*back_in));

	if (!back_in)
		return false;
	for (uint32_t e = 0; e < g->nedges; e++) {
		if (!check_edge(g, e))
			return false;
		if (g->edges[e].back)
			back_in[g->edges[e].dst]++;
	}
	for (uint32_t v = 0; v < g->nblocks; v++) {
		const struct cfg_block *bl = &g->blocks[v];
		unsigned int flags = 0, nexit = 0;

		for (uint32_t e = bl->first_edge; e < bl->first_edge + bl->nedges; e++) {
			flags |= g->edges[e].back ? CFG_BLOCK_BACK_SRC : 0;
			nexit += g->edges[e].dst == CFG_EXIT;
		}
		flags |= nexit ? CFG_BLOCK_EXIT : 0;
		flags |= nexit == bl->nedges ? CFG_BLOCK_EXIT_ONLY : 0;
		flags |= back_in[v] ? CFG_BLOCK_HEADER : 0;
		if ((bl->flags & ~(unsigned int)(CFG_BLOCK_ENTRY | CFG_BLOCK_IRREDUCIBLE)) !=
			flags ||
		    ((bl->flags & CFG_BLOCK_IRREDUCIBLE) && !back_in[v]))
			return false;
	}
	return true;
}

/* Kahn's algorithm over the edges that are not back edges. */
static bool check_acyclic(const struct cfg *g)
{
	_cleanup_free_ uint32_t *indeg = calloc(g->nblocks, sizeof(*indeg));
	_cleanup_free_ uint32_t *queue = calloc(g->nblocks, sizeof(*queue));
	uint32_t head = 0, tail = 0;

	if (!indeg || !queue)
		return false;
	for (uint32_t e = 0; e < g->nedges; e++)
		if (!g->edges[e].back && g->edges[e].dst != CFG_EXIT)
			indeg[g->edges[e].dst]++;
	for (uint32_t v = 0; v < g->nblocks; v++)
		if (!indeg[v])
			queue[tail++] = v;
	while (head < tail) {
		const struct cfg_block *bl = &g->blocks[queue[head++]];

		for (uint32_t e = bl->first_edge; e < bl->first_edge + bl->nedges; e++)
			if (!g->edges[e].back && g->edges[e].dst != CFG_EXIT &&
			    --indeg[g->edges[e].dst] == 0)
				queue[tail++] = g->edges[e].dst;
	}
	return tail == g->nblocks && indeg[g->entry] == 0;
}

static bool check_numbering(const struct cfg *g)
{
	if (!g->bl_ok) {
		for (uint32_t e = 0; e < g->nedges; e++)
			if (g->edges[e].val)
				return false;
		return g->num_paths == 0 && !g->dag;
	}
	for (uint32_t v = 0; v < g->nblocks; v++) {
		uint64_t sum = 0;

		for (uint32_t k = g->dag_first[v]; k < g->dag_first[v + 1]; k++) {
			const struct dag_edge *de = &g->dag[k];

			if (de->val != sum ||
			    (de->edge != CFG_NONE && g->edges[de->edge].val != de->val))
				return false;
			sum += dag_npaths(g, de->dst);
		}
		if (sum != g->blocks[v].num_paths || !sum)
			return false;
	}
	return g->num_paths == g->blocks[g->entry].num_paths;
}

int cfg_check(const struct cfg *g)
{
	if (!check_blocks(g) || !check_edges(g) || !check_acyclic(g) || !check_numbering(g))
		return -EUCLEAN;
	return 0;
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
