// SPDX-License-Identifier: GPL-2.0-only
/* test_cfg.c: unit tests for the cfg module (links daemon/lib/cfg*.c and Capstone alone).
 *
 * Hand-assembled byte sequences (each instruction written out with its offset) check the
 * recovered blocks, edges, back edges and loop forest; every path id of every small graph is
 * decoded, re-encoded and compared with an independent enumeration of the DAG's paths, so the
 * ids are exactly 0..NumPaths-1 (invariant B1). A tracer simulator replays block traces through
 * cfg_transition() and checks that decoding the emitted ids rebuilds the trace (B2), on TV-BL
 * (ALGORITHMS.md §4, stream * 6 2 0 0 2 2 0 0 2 2 0 0 2 3), on minijit's code and on random
 * programs. minijit's functions were captured from `minijit --print-code`; its IR blocks are
 * real basic blocks, and the recovered blocks must match them exactly.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/cfg.h"

#include "../prng.h"

#define BASE UINT64_C(0x401000)
#define X CFG_EXIT
#define STAR UINT64_MAX /* the routine-entry marker in a simulated stream */
#define MAXN 512	/* blocks in the biggest graph whose paths are enumerated */

/* ---- helpers ---- */

static struct cfg *build_at(const uint8_t *code, size_t len, uint64_t start, uint64_t entry,
			    const struct cfg_limits *lim)
{
	struct cfg *g = NULL;
	int r = cfg_build(code, len, start, entry, lim, &g);

	if (r < 0)
		fail_msg("cfg_build: %d (%s)", r, strerror(-r));
	assert_non_null(g);
	assert_int_equal(cfg_check(g), 0);
	return g;
}

static struct cfg *build(const uint8_t *code, size_t len, uint64_t entry_off,
			 const struct cfg_limits *lim)
{
	return build_at(code, len, BASE, BASE + entry_off, lim);
}

static int build_err(const uint8_t *code, size_t len, uint64_t entry_off,
		     const struct cfg_limits *lim)
{
	struct cfg *g = (struct cfg *)0x1;
	int r = cfg_build(code, len, BASE, BASE + entry_off, lim, &g);

	assert_true(r < 0);
	assert_ptr_equal(g, (struct cfg *)0x1); /* not written on failure */
	return r;
}

/* Block index by offset from BASE. */
static uint32_t blk(const struct cfg *g, uint64_t off)
{
	int i = cfg_block_find(g, BASE + off);

	if (i < 0 || cfg_block_get(g, (uint32_t)i)->start != BASE + off)
		fail_msg("no block starts at +0x%llx", (unsigned long long)off);
	return (uint32_t)i;
}

struct want_block {
	uint64_t start, end; /* offsets */
	enum cfg_term term;
	uint32_t ninsns;
};

struct want_edge {
	uint64_t src, dst; /* offsets of block starts; X for the exit */
	enum cfg_edge_kind kind;
	bool back;
};

static void expect_blocks(const struct cfg *g, uint64_t base, const struct want_block *w, size_t n)
{
	assert_int_equal(cfg_nblocks(g), n);
	for (size_t i = 0; i < n; i++) {
		const struct cfg_block *b = cfg_block_get(g, (uint32_t)i);

		if (b->start != base + w[i].start || b->end != base + w[i].end ||
		    b->term != w[i].term || b->ninsns != w[i].ninsns)
			fail_msg("block %zu: [+0x%llx, +0x%llx) term %d insns %u, expected "
				 "[+0x%llx, +0x%llx) term %d insns %u",
				 i, (unsigned long long)(b->start - base),
				 (unsigned long long)(b->end - base), b->term, b->ninsns,
				 (unsigned long long)w[i].start, (unsigned long long)w[i].end,
				 w[i].term, w[i].ninsns);
	}
}

/* Edges in their stored order (grouped by source, numbering order within a block). */
static void expect_edges(const struct cfg *g, uint64_t base, const struct want_edge *w, size_t n)
{
	assert_int_equal(cfg_nedges(g), n);
	for (size_t i = 0; i < n; i++) {
		const struct cfg_edge *e = cfg_edge_get(g, (uint32_t)i);
		uint64_t src = cfg_block_get(g, e->src)->start - base;
		uint64_t dst = e->dst == X ? X : cfg_block_get(g, e->dst)->start - base;

		if (src != w[i].src || dst != w[i].dst || e->kind != w[i].kind ||
		    e->back != w[i].back)
			fail_msg("edge %zu: +0x%llx -> 0x%llx kind %d back %d, expected +0x%llx -> "
				 "0x%llx kind %d back %d",
				 i, (unsigned long long)src, (unsigned long long)dst, e->kind,
				 e->back, (unsigned long long)w[i].src,
				 (unsigned long long)w[i].dst, w[i].kind, w[i].back);
	}
}

/* ---- B1: every DAG path, enumerated without the numbering, has a distinct id < NumPaths ---- */

struct walk {
	const struct cfg *g;
	struct cfg_step path[MAXN];
	uint8_t *seen;
	uint64_t count;
};

static uint64_t path_sum(const struct cfg *g, const struct cfg_step *p, size_t n)
{
	const struct cfg_block *first = cfg_block_get(g, p[0].block);
	uint64_t sum = (first->flags & CFG_BLOCK_ENTRY) ? 0 : first->entry_val;

	for (size_t i = 0; i < n; i++)
		sum += p[i].edge == CFG_NONE ? cfg_block_get(g, p[i].block)->back_exit_val
					     : cfg_edge_get(g, p[i].edge)->val;
	return sum;
}

static void walk_visit(struct walk *w, size_t n)
{
	struct cfg_step dec[MAXN];
	uint64_t id = path_sum(w->g, w->path, n), id2 = UINT64_MAX;
	int k;

	assert_int_equal(cfg_path_encode(w->g, w->path, n, &id2), 0);
	assert_true(id == id2);
	assert_true(id < cfg_num_paths(w->g));
	if (w->seen[id])
		fail_msg("path id %llu given twice", (unsigned long long)id);
	w->seen[id] = 1;
	w->count++;
	k = cfg_path_decode(w->g, id, dec, MAXN);
	assert_int_equal(k, (int)n);
	assert_memory_equal(dec, w->path, n * sizeof(*dec));
}

static void walk_from(struct walk *w, uint32_t v, size_t depth)
{
	const struct cfg_block *b = cfg_block_get(w->g, v);

	assert_true(depth < cfg_nblocks(w->g)); /* a DAG path never repeats a block */
	if (b->flags & CFG_BLOCK_BACK_SRC) {
		w->path[depth] = (struct cfg_step){v, CFG_NONE};
		walk_visit(w, depth + 1);
	}
	for (uint32_t e = b->first_edge; e < b->first_edge + b->nedges; e++) {
		const struct cfg_edge *ed = cfg_edge_get(w->g, e);

		if (ed->back)
			continue;
		w->path[depth] = (struct cfg_step){v, e};
		if (ed->dst == X)
			walk_visit(w, depth + 1);
		else
			walk_from(w, ed->dst, depth + 1);
	}
}

/* All paths: ids exactly 0..NumPaths-1, each decoding to its own valid block sequence. */
static void check_paths(const struct cfg *g)
{
	struct walk w = {.g = g};
	uint64_t n = cfg_num_paths(g);
	struct cfg_step dec[MAXN];

	assert_true(cfg_bl_ok(g));
	assert_true(n >= 1 && n <= 100000 && cfg_nblocks(g) <= MAXN);
	w.seen = calloc(n, 1);
	assert_non_null(w.seen);
	walk_from(&w, cfg_entry_block(g), 0);
	for (uint32_t h = 0; h < cfg_nblocks(g); h++)
		if (h != cfg_entry_block(g) && (cfg_block_get(g, h)->flags & CFG_BLOCK_HEADER))
			walk_from(&w, h, 0);
	assert_true(w.count == n);
	for (uint64_t id = 0; id < n; id++)
		assert_true(w.seen[id]);
	free(w.seen);
	assert_int_equal(cfg_path_decode(g, n, dec, MAXN), -ERANGE);
}

/* ---- B2: a tracer simulator ---- */

/* The stream a tracer emits for one invocation running trace[0..n); exits: it leaves the
 * function from trace[n-1]. Returns the stream length. */
static size_t simulate(const struct cfg *g, const uint32_t *trace, size_t n, bool exits,
		       uint64_t *out)
{
	struct cfg_transition t;
	uint64_t r = 0;
	size_t k = 0;

	assert_int_equal(cfg_transition(g, CFG_NONE, trace[0], &t), 0);
	assert_int_equal(t.act, CFG_ACT_START);
	out[k++] = STAR;
	for (size_t i = 1; i < n; i++) {
		int e = cfg_transition(g, trace[i - 1], trace[i], &t);

		if (e < 0)
			fail_msg("no transition %u -> %u: %d", trace[i - 1], trace[i], e);
		if (t.act == CFG_ACT_ADD) {
			r += t.add;
		} else {
			assert_int_equal(t.act, CFG_ACT_BACK);
			out[k++] = r + t.add;
			r = t.reset;
		}
	}
	if (exits) {
		const struct cfg_block *b = cfg_block_get(g, trace[n - 1]);

		assert_true(b->flags & CFG_BLOCK_EXIT);
		out[k++] = r + b->exit_val;
	}
	return k;
}

/* Decode the stream and check the blocks rebuild the trace (its prefix if !exits). */
static void check_stream(const struct cfg *g, const uint32_t *trace, size_t n, bool exits,
			 const uint64_t *s, size_t k)
{
	struct cfg_step steps[MAXN];
	size_t at = 0, back = 0;

	for (size_t i = 1; i < n; i++) {
		int e = cfg_edge_find(g, trace[i - 1], trace[i]);

		assert_true(e >= 0);
		back += cfg_edge_get(g, (uint32_t)e)->back;
	}
	assert_true(s[0] == STAR);
	assert_int_equal(k, 1 + back + exits);
	for (size_t i = 1; i < k; i++) {
		int m = cfg_path_decode(g, s[i], steps, MAXN);

		assert_true(m > 0);
		for (int j = 0; j < m; j++) {
			assert_true(at < n);
			assert_int_equal(steps[j].block, trace[at]);
			at++;
		}
		/* Every id but the last ends with a back edge, the last one with the exit. */
		assert_true((steps[m - 1].edge == CFG_NONE) == (!exits || i + 1 < k));
	}
	if (exits)
		assert_int_equal(at, n);
}

static void run_trace(const struct cfg *g, const uint32_t *trace, size_t n, bool exits)
{
	uint64_t *s = calloc(n + 2, sizeof(*s));

	assert_non_null(s);
	check_stream(g, trace, n, exits, s, simulate(g, trace, n, exits, s));
	free(s);
}

/* ---- hand-assembled code ---- */

static void test_straight_line(void **state)
{
	static const uint8_t code[] = {
	    0x55,	      /* +0x0 push rbp */
	    0x48, 0x89, 0xe5, /* +0x1 mov rbp, rsp */
	    0x31, 0xc0,	      /* +0x4 xor eax, eax */
	    0x5d,	      /* +0x6 pop rbp */
	    0xc3,	      /* +0x7 ret */
	};
	static const struct want_block wb[] = {{0x0, 0x8, CFG_TERM_RET, 5}};
	static const struct want_edge we[] = {{0x0, X, CFG_EDGE_EXIT, false}};
	struct cfg *g = build(code, sizeof(code), 0, NULL);
	struct cfg_step st[4];
	struct cfg_stats s;

	(void)state;
	expect_blocks(g, BASE, wb, 1);
	expect_edges(g, BASE, we, 1);
	assert_int_equal(cfg_num_paths(g), 1);
	assert_int_equal(cfg_path_decode(g, 0, st, 4), 1);
	assert_int_equal(st[0].block, 0);
	assert_int_equal(st[0].edge, 0);
	assert_int_equal(cfg_block_get(g, 0)->flags,
			 CFG_BLOCK_ENTRY | CFG_BLOCK_EXIT | CFG_BLOCK_EXIT_ONLY);
	assert_int_equal(cfg_block_get(g, 0)->last, BASE + 7);
	cfg_get_stats(g, &s);
	assert_int_equal(s.insns, 5);
	assert_int_equal(s.blocks, 1);
	assert_int_equal(s.edges, 1);
	assert_int_equal(s.back_edges, 0);
	assert_int_equal(s.loops, 0);
	assert_true(s.bl_ok);
	assert_true(s.num_paths == 1);
	assert_true(s.memory > 0);
	check_paths(g);
	cfg_free(g);
}

static void test_if_else(void **state)
{
	static const uint8_t code[] = {
	    0x85, 0xff,			  /* +0x00 test edi, edi */
	    0x74, 0x07,			  /* +0x02 je +0x0b */
	    0xb8, 0x01, 0x00, 0x00, 0x00, /* +0x04 mov eax, 1 */
	    0xeb, 0x05,			  /* +0x09 jmp +0x10 */
	    0xb8, 0x02, 0x00, 0x00, 0x00, /* +0x0b mov eax, 2 */
	    0xc3,			  /* +0x10 ret */
	};
	static const struct want_block wb[] = {
	    {0x00, 0x04, CFG_TERM_COND, 2},
	    {0x04, 0x0b, CFG_TERM_JMP, 2},
	    {0x0b, 0x10, CFG_TERM_FALL, 1},
	    {0x10, 0x11, CFG_TERM_RET, 1},
	};
	static const struct want_edge we[] = {
	    {0x00, 0x04, CFG_EDGE_FALL, false}, {0x00, 0x0b, CFG_EDGE_TAKEN, false},
	    {0x04, 0x10, CFG_EDGE_JUMP, false}, {0x0b, 0x10, CFG_EDGE_FALL, false},
	    {0x10, X, CFG_EDGE_EXIT, false},
	};
	struct cfg *g = build(code, sizeof(code), 0, NULL);
	struct cfg_step st[4];

	(void)state;
	expect_blocks(g, BASE, wb, 4);
	expect_edges(g, BASE, we, 5);
	assert_int_equal(cfg_num_paths(g), 2);
	/* Fallthrough first: the then-arm is path 0, the else-arm path 1. */
	assert_int_equal(cfg_path_decode(g, 0, st, 4), 3);
	assert_int_equal(st[1].block, blk(g, 0x04));
	assert_int_equal(cfg_edge_get(g, st[0].edge)->kind, CFG_EDGE_FALL);
	assert_int_equal(cfg_path_decode(g, 1, st, 4), 3);
	assert_int_equal(st[1].block, blk(g, 0x0b));
	assert_int_equal(cfg_edge_get(g, st[0].edge)->kind, CFG_EDGE_TAKEN);
	assert_int_equal(cfg_path_decode(g, 1, st, 2), -ENOSPC);
	check_paths(g);
	cfg_free(g);
}

static void test_loop(void **state)
{
	static const uint8_t code[] = {
	    0x31, 0xc0, /* +0x0 xor eax, eax */
	    0x01, 0xf8, /* +0x2 add eax, edi     L: */
	    0xff, 0xce, /* +0x4 dec esi */
	    0x75, 0xfa, /* +0x6 jne +0x2 (L) */
	    0xc3,	/* +0x8 ret */
	};
	static const struct want_block wb[] = {
	    {0x0, 0x2, CFG_TERM_FALL, 1},
	    {0x2, 0x8, CFG_TERM_COND, 3},
	    {0x8, 0x9, CFG_TERM_RET, 1},
	};
	static const struct want_edge we[] = {
	    {0x0, 0x2, CFG_EDGE_FALL, false},
	    {0x2, 0x8, CFG_EDGE_FALL, false},
	    {0x2, 0x2, CFG_EDGE_TAKEN, true},
	    {0x8, X, CFG_EDGE_EXIT, false},
	};
	static const uint32_t trace[] = {0, 1, 1, 1, 2};
	struct cfg *g = build(code, sizeof(code), 0, NULL);
	const struct cfg_block *l = cfg_block_get(g, 1);
	struct cfg_transition t;

	(void)state;
	expect_blocks(g, BASE, wb, 3);
	expect_edges(g, BASE, we, 4);
	assert_int_equal(l->flags, CFG_BLOCK_HEADER | CFG_BLOCK_BACK_SRC);
	assert_int_equal(l->loop_depth, 1);
	assert_int_equal(l->loop_parent, CFG_NONE);
	assert_int_equal(cfg_block_get(g, 0)->loop_depth, 0);
	/* L: [L->EXIT dummy, L->ret]; entry: [ENTRY->L dummy, entry->L]. */
	assert_int_equal(cfg_num_paths(g), 4);
	assert_int_equal(l->back_exit_val, 0);
	assert_int_equal(cfg_edge_get(g, 1)->val, 1);
	assert_int_equal(l->entry_val, 0);
	assert_int_equal(cfg_edge_get(g, 0)->val, 2);
	assert_int_equal(cfg_transition(g, 1, 1, &t), 0);
	assert_int_equal(t.act, CFG_ACT_BACK);
	assert_int_equal(t.edge, 2);
	check_paths(g);
	run_trace(g, trace, 5, true);
	cfg_free(g);
}

static void test_nested_loops(void **state)
{
	static const uint8_t code[] = {
	    0x31, 0xc0, /* +0x0 xor eax, eax */
	    0x89, 0xf1, /* +0x2 mov ecx, esi     OUTER: */
	    0x01, 0xc8, /* +0x4 add eax, ecx     INNER: */
	    0xff, 0xc9, /* +0x6 dec ecx */
	    0x75, 0xfa, /* +0x8 jne +0x4 (INNER) */
	    0xff, 0xcf, /* +0xa dec edi */
	    0x75, 0xf4, /* +0xc jne +0x2 (OUTER) */
	    0xc3,	/* +0xe ret */
	};
	static const struct want_block wb[] = {
	    {0x0, 0x2, CFG_TERM_FALL, 1}, {0x2, 0x4, CFG_TERM_FALL, 1},
	    {0x4, 0xa, CFG_TERM_COND, 3}, {0xa, 0xe, CFG_TERM_COND, 2},
	    {0xe, 0xf, CFG_TERM_RET, 1},
	};
	static const struct want_edge we[] = {
	    {0x0, 0x2, CFG_EDGE_FALL, false}, {0x2, 0x4, CFG_EDGE_FALL, false},
	    {0x4, 0xa, CFG_EDGE_FALL, false}, {0x4, 0x4, CFG_EDGE_TAKEN, true},
	    {0xa, 0xe, CFG_EDGE_FALL, false}, {0xa, 0x2, CFG_EDGE_TAKEN, true},
	    {0xe, X, CFG_EDGE_EXIT, false},
	};
	static const uint32_t depth[] = {0, 1, 2, 1, 0};
	static const uint32_t parent[] = {CFG_NONE, CFG_NONE, 1, 1, CFG_NONE};
	static const uint32_t trace[] = {0, 1, 2, 2, 2, 3, 1, 2, 3, 1, 2, 2, 3, 4};
	struct cfg *g = build(code, sizeof(code), 0, NULL);
	struct cfg_stats s;

	(void)state;
	expect_blocks(g, BASE, wb, 5);
	expect_edges(g, BASE, we, 7);
	for (uint32_t i = 0; i < 5; i++) {
		assert_int_equal(cfg_block_get(g, i)->loop_depth, depth[i]);
		assert_int_equal(cfg_block_get(g, i)->loop_parent, parent[i]);
	}
	cfg_get_stats(g, &s);
	assert_int_equal(s.loops, 2);
	assert_int_equal(s.irreducible_loops, 0);
	assert_int_equal(s.back_edges, 2);
	/* ret 1; D [D->EXIT, D->ret] 2; C [C->EXIT, C->D] 3; B 3; A [->B, ->C, A->B] 9 */
	assert_int_equal(cfg_num_paths(g), 9);
	check_paths(g);
	run_trace(g, trace, sizeof(trace) / sizeof(trace[0]), true);
	cfg_free(g);
}

/* Two entries into the cycle X <-> Y: from A by fallthrough into X and by je into Y. */
static void test_irreducible(void **state)
{
	static const uint8_t code[] = {
	    0x85, 0xff, /* +0x0 test edi, edi    A: */
	    0x74, 0x04, /* +0x2 je +0x8 (Y) */
	    0xff, 0xce, /* +0x4 dec esi          X: */
	    0x74, 0x04, /* +0x6 je +0xc (OUT) */
	    0xff, 0xca, /* +0x8 dec edx          Y: */
	    0x75, 0xf8, /* +0xa jne +0x4 (X) */
	    0xc3,	/* +0xc ret              OUT: */
	};
	static const struct want_block wb[] = {
	    {0x0, 0x4, CFG_TERM_COND, 2},
	    {0x4, 0x8, CFG_TERM_COND, 2},
	    {0x8, 0xc, CFG_TERM_COND, 2},
	    {0xc, 0xd, CFG_TERM_RET, 1},
	};
	/* DFS (fallthrough first) reaches X before Y: X is the header, only Y->X is a back edge,
	 * A->Y stays a forward edge into the loop. */
	static const struct want_edge we[] = {
	    {0x0, 0x4, CFG_EDGE_FALL, false}, {0x0, 0x8, CFG_EDGE_TAKEN, false},
	    {0x4, 0x8, CFG_EDGE_FALL, false}, {0x4, 0xc, CFG_EDGE_TAKEN, false},
	    {0x8, 0xc, CFG_EDGE_FALL, false}, {0x8, 0x4, CFG_EDGE_TAKEN, true},
	    {0xc, X, CFG_EDGE_EXIT, false},
	};
	static const uint32_t trace1[] = {0, 2, 1, 2, 1, 2, 3};
	static const uint32_t trace2[] = {0, 1, 2, 1, 3};
	struct cfg *g = build(code, sizeof(code), 0, NULL);
	struct cfg_stats s;

	(void)state;
	expect_blocks(g, BASE, wb, 4);
	expect_edges(g, BASE, we, 7);
	assert_int_equal(cfg_block_get(g, 1)->flags, CFG_BLOCK_HEADER | CFG_BLOCK_IRREDUCIBLE);
	assert_int_equal(cfg_block_get(g, 2)->loop_parent, 1);
	assert_int_equal(cfg_block_get(g, 2)->loop_depth, 1);
	cfg_get_stats(g, &s);
	assert_int_equal(s.loops, 1);
	assert_int_equal(s.irreducible_loops, 1);
	/* OUT 1; Y [Y->EXIT, Y->OUT] 2; X [X->Y, X->OUT] 3; A [A->X dummy, A->X, A->Y] 8 */
	assert_int_equal(cfg_num_paths(g), 8);
	check_paths(g);
	run_trace(g, trace1, sizeof(trace1) / sizeof(trace1[0]), true);
	run_trace(g, trace2, sizeof(trace2) / sizeof(trace2[0]), true);
	cfg_free(g);
}

/* The same cycle nested in an outer loop, which must absorb the irreducible one. */
static void test_irreducible_nested(void **state)
{
	static const uint8_t code[] = {
	    0x31, 0xc0, /* +0x00 xor eax, eax     */
	    0x85, 0xff, /* +0x02 test edi, edi    H: */
	    0x74, 0x04, /* +0x04 je +0xa (Y) */
	    0xff, 0xce, /* +0x06 dec esi          X: */
	    0x74, 0x04, /* +0x08 je +0xe (T) */
	    0xff, 0xca, /* +0x0a dec edx          Y: */
	    0x75, 0xf8, /* +0x0c jne +0x6 (X) */
	    0xff, 0xc9, /* +0x0e dec ecx          T: */
	    0x75, 0xf0, /* +0x10 jne +0x2 (H) */
	    0xc3,	/* +0x12 ret */
	};
	static const uint32_t trace[] = {0, 1, 3, 2, 4, 1, 2, 3, 2, 4, 5};
	struct cfg *g = build(code, sizeof(code), 0, NULL);
	uint32_t h = blk(g, 0x2), x = blk(g, 0x6), y = blk(g, 0xa), t = blk(g, 0xe);
	struct cfg_stats s;

	(void)state;
	assert_int_equal(cfg_nblocks(g), 6);
	assert_int_equal(cfg_block_get(g, h)->flags, CFG_BLOCK_HEADER);
	assert_int_equal(cfg_block_get(g, x)->flags, CFG_BLOCK_HEADER | CFG_BLOCK_IRREDUCIBLE);
	assert_int_equal(cfg_block_get(g, x)->loop_parent, h);
	assert_int_equal(cfg_block_get(g, y)->loop_parent, x);
	assert_int_equal(cfg_block_get(g, t)->loop_parent, h);
	assert_int_equal(cfg_block_get(g, y)->loop_depth, 2);
	assert_int_equal(cfg_block_get(g, t)->loop_depth, 1);
	cfg_get_stats(g, &s);
	assert_int_equal(s.loops, 2);
	assert_int_equal(s.irreducible_loops, 1);
	assert_int_equal(s.back_edges, 2);
	check_paths(g);
	run_trace(g, trace, sizeof(trace) / sizeof(trace[0]), true);
	cfg_free(g);
}

/* A switch through a jump table: the indirect jmp ends the path; the case blocks are not
 * found by traversal. */
static void test_switch_indirect(void **state)
{
	static const uint8_t code[] = {
	    0x83, 0xff, 0x03,			      /* +0x00 cmp edi, 3 */
	    0x77, 0x0a,				      /* +0x03 ja +0x0f (default) */
	    0x48, 0x8d, 0x05, 0x00, 0x00, 0x00, 0x00, /* +0x05 lea rax, [rip] */
	    0xff, 0x24, 0xf8,			      /* +0x0c jmp [rax + rdi*8] */
	    0x31, 0xc0,				      /* +0x0f xor eax, eax    default: */
	    0xc3,				      /* +0x11 ret */
	    0xb8, 0x01, 0x00, 0x00, 0x00,	      /* +0x12 mov eax, 1      case 1: */
	    0xc3,				      /* +0x17 ret */
	};
	static const struct want_block wb[] = {
	    {0x00, 0x05, CFG_TERM_COND, 2},
	    {0x05, 0x0f, CFG_TERM_INDIRECT, 2},
	    {0x0f, 0x12, CFG_TERM_RET, 2},
	};
	static const struct want_edge we[] = {
	    {0x00, 0x05, CFG_EDGE_FALL, false},
	    {0x00, 0x0f, CFG_EDGE_TAKEN, false},
	    {0x05, X, CFG_EDGE_EXIT, false},
	    {0x0f, X, CFG_EDGE_EXIT, false},
	};
	static const uint32_t trace[] = {0, 1};
	struct cfg *g = build(code, sizeof(code), 0, NULL);

	(void)state;
	expect_blocks(g, BASE, wb, 3);
	expect_edges(g, BASE, we, 4);
	assert_int_equal(cfg_block_find(g, BASE + 0x12), -ENOENT);
	assert_int_equal(cfg_block_find(g, BASE + 0x17), -ENOENT);
	assert_int_equal(cfg_num_paths(g), 2);
	assert_true(cfg_block_get(g, 1)->flags & CFG_BLOCK_EXIT_ONLY);
	check_paths(g);
	run_trace(g, trace, 2, true);
	cfg_free(g);
}

/* A call falls through and stays inside its block; with CFG_SPLIT_CALLS it ends it. */
static void test_call_fallthrough(void **state)
{
	static const uint8_t code[] = {
	    0x55,			  /* +0x0 push rbp */
	    0xe8, 0x00, 0x10, 0x00, 0x00, /* +0x1 call +0x1006 (outside) */
	    0x85, 0xc0,			  /* +0x6 test eax, eax */
	    0x74, 0x01,			  /* +0x8 je +0xb */
	    0x90,			  /* +0xa nop */
	    0x5d,			  /* +0xb pop rbp */
	    0xe8, 0xf0, 0xff, 0xff, 0xff, /* +0xc call +0x1 (inside: not followed) */
	    0xc3,			  /* +0x11 ret */
	};
	static const struct want_block wb[] = {
	    {0x0, 0xa, CFG_TERM_COND, 4},
	    {0xa, 0xb, CFG_TERM_FALL, 1},
	    {0xb, 0x12, CFG_TERM_RET, 3},
	};
	static const struct want_block wb_split[] = {
	    {0x0, 0x6, CFG_TERM_CALL, 2},  {0x6, 0xa, CFG_TERM_COND, 2},
	    {0xa, 0xb, CFG_TERM_FALL, 1},  {0xb, 0x11, CFG_TERM_CALL, 2},
	    {0x11, 0x12, CFG_TERM_RET, 1},
	};
	static const struct want_edge we_split[] = {
	    {0x0, 0x6, CFG_EDGE_FALL, false},  {0x6, 0xa, CFG_EDGE_FALL, false},
	    {0x6, 0xb, CFG_EDGE_TAKEN, false}, {0xa, 0xb, CFG_EDGE_FALL, false},
	    {0xb, 0x11, CFG_EDGE_FALL, false}, {0x11, X, CFG_EDGE_EXIT, false},
	};
	const struct cfg_limits split = {.flags = CFG_SPLIT_CALLS};
	struct cfg *g = build(code, sizeof(code), 0, NULL);

	(void)state;
	expect_blocks(g, BASE, wb, 3);
	assert_int_equal(cfg_num_paths(g), 2);
	check_paths(g);
	cfg_free(g);

	g = build(code, sizeof(code), 0, &split);
	expect_blocks(g, BASE, wb_split, 5);
	expect_edges(g, BASE, we_split, 6);
	assert_int_equal(cfg_num_paths(g), 2);
	check_paths(g);
	cfg_free(g);
}

/* Branches out of the buffer are exits: a conditional and an unconditional tail call. */
static void test_tail_jump_out(void **state)
{
	static const uint8_t code[] = {
	    0x85, 0xff,				/* +0x0 test edi, edi */
	    0x0f, 0x84, 0xf8, 0x0f, 0x00, 0x00, /* +0x2 je +0x1000 (outside) */
	    0x48, 0x89, 0xf7,			/* +0x8 mov rdi, rsi */
	    0xe9, 0xf0, 0xfe, 0xff, 0xff,	/* +0xb jmp -0x100 (outside) */
	};
	static const struct want_block wb[] = {
	    {0x0, 0x8, CFG_TERM_COND, 2},
	    {0x8, 0x10, CFG_TERM_JMP_OUT, 2},
	};
	static const struct want_edge we[] = {
	    {0x0, 0x8, CFG_EDGE_FALL, false},
	    {0x0, X, CFG_EDGE_TAKEN, false},
	    {0x8, X, CFG_EDGE_JUMP, false},
	};
	static const uint32_t t1[] = {0}, t2[] = {0, 1};
	struct cfg *g = build(code, sizeof(code), 0, NULL);
	const struct cfg_block *b0 = cfg_block_get(g, 0), *b1 = cfg_block_get(g, 1);

	(void)state;
	expect_blocks(g, BASE, wb, 2);
	expect_edges(g, BASE, we, 3);
	assert_int_equal(b0->flags, CFG_BLOCK_ENTRY | CFG_BLOCK_EXIT);
	assert_int_equal(b1->flags, CFG_BLOCK_EXIT | CFG_BLOCK_EXIT_ONLY);
	assert_int_equal(b0->exit_val, 1);
	assert_int_equal(b1->exit_val, 0);
	assert_int_equal(cfg_num_paths(g), 2);
	check_paths(g);
	run_trace(g, t1, 1, true);
	run_trace(g, t2, 2, true);
	cfg_free(g);
}

/* Code that runs off the end of the buffer leaves the function too. */
static void test_fall_off_end(void **state)
{
	static const uint8_t code[] = {
	    0x90,	/* +0x0 nop */
	    0x74, 0x01, /* +0x1 je +0x4 (the end of the buffer) */
	    0x90,	/* +0x3 nop */
	};
	static const struct want_block wb[] = {
	    {0x0, 0x3, CFG_TERM_COND, 2},
	    {0x3, 0x4, CFG_TERM_FALL, 1},
	};
	static const struct want_edge we[] = {
	    {0x0, 0x3, CFG_EDGE_FALL, false},
	    {0x0, X, CFG_EDGE_TAKEN, false},
	    {0x3, X, CFG_EDGE_FALL, false},
	};
	struct cfg *g = build(code, sizeof(code), 0, NULL);

	(void)state;
	expect_blocks(g, BASE, wb, 2);
	expect_edges(g, BASE, we, 3);
	check_paths(g);
	cfg_free(g);
}

/* A jcc to its own fallthrough gives one edge; jrcxz, loop and xbegin are branches too. */
static void test_odd_branches(void **state)
{
	static const uint8_t code[] = {
	    0x74, 0x00,				/* +0x00 je +0x2 */
	    0xe3, 0x02,				/* +0x02 jrcxz +0x6 */
	    0xe2, 0xfc,				/* +0x04 loop +0x2 */
	    0xc7, 0xf8, 0x01, 0x00, 0x00, 0x00, /* +0x06 xbegin +0xd */
	    0x0f, 0x0b,				/* +0x0c ud2 */
	    0xf4,				/* +0x0e hlt */
	};
	static const struct want_block wb[] = {
	    {0x0, 0x2, CFG_TERM_COND, 1}, {0x2, 0x4, CFG_TERM_COND, 1},
	    {0x4, 0x6, CFG_TERM_COND, 1}, {0x6, 0xc, CFG_TERM_COND, 1},
	    {0xc, 0xe, CFG_TERM_TRAP, 1},
	};
	static const struct want_edge we[] = {
	    {0x0, 0x2, CFG_EDGE_FALL, false},  {0x2, 0x4, CFG_EDGE_FALL, false},
	    {0x2, 0x6, CFG_EDGE_TAKEN, false}, {0x4, 0x6, CFG_EDGE_FALL, false},
	    {0x4, 0x2, CFG_EDGE_TAKEN, true},  {0x6, 0xc, CFG_EDGE_FALL, false},
	    {0xc, X, CFG_EDGE_EXIT, false},
	};
	struct cfg *g = NULL;

	(void)state;
	/* xbegin +0xd lands inside ud2: rejected. */
	assert_int_equal(build_err(code, sizeof(code), 0, NULL), -EINVAL);
	{
		uint8_t fixed[sizeof(code)];

		memcpy(fixed, code, sizeof(code));
		fixed[8] = 0x00; /* xbegin +0xc: its fallthrough */
		g = build(fixed, sizeof(fixed), 0, NULL);
	}
	expect_blocks(g, BASE, wb, 5);
	expect_edges(g, BASE, we, 7);
	assert_int_equal(cfg_block_find(g, BASE + 0xe), -ENOENT); /* hlt never reached */
	check_paths(g);
	cfg_free(g);
}

/* `jmp $`: the entry block loops on itself; the one path ends with the back edge. */
static void test_self_loop_entry(void **state)
{
	static const uint8_t code[] = {0xeb, 0xfe}; /* +0x0 jmp +0x0 */
	static const uint32_t trace[] = {0, 0, 0};
	struct cfg *g = build(code, sizeof(code), 0, NULL);
	struct cfg_step st[2];
	struct cfg_transition t;

	(void)state;
	assert_int_equal(cfg_nblocks(g), 1);
	assert_int_equal(cfg_block_get(g, 0)->flags,
			 CFG_BLOCK_ENTRY | CFG_BLOCK_HEADER | CFG_BLOCK_BACK_SRC);
	assert_int_equal(cfg_num_paths(g), 1);
	assert_int_equal(cfg_path_decode(g, 0, st, 2), 1);
	assert_int_equal(st[0].edge, CFG_NONE);
	assert_int_equal(cfg_transition(g, 0, 0, &t), 0);
	assert_int_equal(t.act, CFG_ACT_BACK);
	assert_true(t.add == 0 && t.reset == 0);
	check_paths(g);
	run_trace(g, trace, 3, false);
	cfg_free(g);
}

/* The entry is in the middle: a loop body sits before it, and its back edge targets the
 * entry block (no dummy edge needed, paths restart at the entry). */
static void test_entry_not_first(void **state)
{
	static const uint8_t code[] = {
	    0xff, 0xc8, /* +0x0 dec eax          L: */
	    0x74, 0x04, /* +0x2 je +0x8 (OUT) */
	    0x31, 0xc9, /* +0x4 xor ecx, ecx     entry: */
	    0xeb, 0xf8, /* +0x6 jmp +0x0 (L) */
	    0xc3,	/* +0x8 ret              OUT: */
	};
	static const struct want_edge we[] = {
	    {0x0, 0x4, CFG_EDGE_FALL, true},
	    {0x0, 0x8, CFG_EDGE_TAKEN, false},
	    {0x4, 0x0, CFG_EDGE_JUMP, false},
	    {0x8, X, CFG_EDGE_EXIT, false},
	};
	static const uint32_t trace[] = {1, 0, 1, 0, 1, 0, 2};
	static const uint64_t stream[] = {STAR, 0, 0, 1};
	struct cfg *g = build(code, sizeof(code), 4, NULL);
	uint64_t s[8];

	(void)state;
	assert_int_equal(cfg_entry_block(g), 1);
	expect_edges(g, BASE, we, 4);
	assert_int_equal(cfg_block_get(g, 1)->flags, CFG_BLOCK_ENTRY | CFG_BLOCK_HEADER);
	assert_int_equal(cfg_num_paths(g), 2);
	check_paths(g);
	assert_int_equal(simulate(g, trace, 7, true, s), 4);
	assert_memory_equal(s, stream, sizeof(stream));
	run_trace(g, trace, 7, true);
	cfg_free(g);
}

/* ---- TV-BL (ALGORITHMS.md §4): the thesis CFG as x86 code ---- */

/* A->B, B->C (taken), B->D (fallthrough), C->E, D->E, E->B (back edge), E->F; laid out
 * A B D E F C so that the numbering's out-edge order is the one the vector uses:
 * A: [A..>B, A->B], B: [B->D, B->C], E: [E..>F, E->F]. */
static const uint8_t tvbl_code[] = {
    0x31, 0xc0, /* +0x0 xor eax, eax     A */
    0x85, 0xff, /* +0x2 test edi, edi    B */
    0x75, 0x06, /* +0x4 jne +0xc (C) */
    0x90,	/* +0x6 nop              D */
    0xff, 0xce, /* +0x7 dec esi          E */
    0x75, 0xf7, /* +0x9 jne +0x2 (B) */
    0xc3,	/* +0xb ret              F */
    0x90,	/* +0xc nop              C */
    0xeb, 0xf8, /* +0xd jmp +0x7 (E) */
};

enum { TA = 0, TB, TD, TE, TF, TC }; /* block indexes, in address order */

static void test_tv_bl(void **state)
{
	static const struct want_edge we[] = {
	    {0x0, 0x2, CFG_EDGE_FALL, false},  {0x2, 0x6, CFG_EDGE_FALL, false},
	    {0x2, 0xc, CFG_EDGE_TAKEN, false}, {0x6, 0x7, CFG_EDGE_FALL, false},
	    {0x7, 0xb, CFG_EDGE_FALL, false},  {0x7, 0x2, CFG_EDGE_TAKEN, true},
	    {0xb, X, CFG_EDGE_EXIT, false},    {0xc, 0x7, CFG_EDGE_JUMP, false},
	};
	/* NumPaths per vertex (F, E, D, C, B, A = 1, 2, 2, 2, 4, 8) and out-edge vals. */
	static const uint64_t np[] = {[TA] = 8, [TB] = 4, [TD] = 2, [TE] = 2, [TF] = 1, [TC] = 2};
	static const uint64_t val[] = {4, 0, 2, 0, 1, 0, 0, 0};
	static const char *const paths[] = {"BDE<",  "BDEF",  "BCE<",  "BCEF",
					    "ABDE<", "ABDEF", "ABCE<", "ABCEF"};
	static const char names[] = "ABDEFC";
	/* Execution (44 blocks): A B C E, [B C E B D E B D E B C E] x 3, B C E F. */
	static const uint32_t head[] = {TA, TB, TC, TE}, tail[] = {TB, TC, TE, TF};
	static const uint32_t body[] = {TB, TC, TE, TB, TD, TE, TB, TD, TE, TB, TC, TE};
	static const uint64_t want[] = {STAR, 6, 2, 0, 0, 2, 2, 0, 0, 2, 2, 0, 0, 2, 3};
	struct cfg *g = build(tvbl_code, sizeof(tvbl_code), 0, NULL);
	uint32_t trace[44];
	uint64_t s[48];
	size_t n = 0;

	(void)state;
	assert_int_equal(cfg_nblocks(g), 6);
	expect_edges(g, BASE, we, 8);
	for (uint32_t i = 0; i < 6; i++)
		assert_true(cfg_block_get(g, i)->num_paths == np[i]);
	for (uint32_t e = 0; e < 8; e++)
		assert_true(cfg_edge_get(g, e)->val == val[e]);
	assert_true(cfg_block_get(g, TB)->entry_val == 0);     /* A..>B */
	assert_true(cfg_block_get(g, TE)->back_exit_val == 0); /* E..>F */
	assert_true(cfg_block_get(g, TF)->exit_val == 0);
	for (uint64_t id = 0; id < 8; id++) {
		struct cfg_step st[8];
		char seq[8] = {0};
		int m = cfg_path_decode(g, id, st, 8);

		assert_true(m > 0);
		for (int j = 0; j < m; j++)
			seq[j] = names[st[j].block];
		if (st[m - 1].edge == CFG_NONE)
			seq[m] = '<';
		assert_string_equal(seq, paths[id]);
	}
	check_paths(g);

	memcpy(trace, head, sizeof(head));
	n = 4;
	for (int k = 0; k < 3; k++, n += 12)
		memcpy(trace + n, body, sizeof(body));
	memcpy(trace + n, tail, sizeof(tail));
	n += 4;
	assert_int_equal(n, 44);
	assert_int_equal(simulate(g, trace, n, true, s), 15);
	assert_memory_equal(s, want, sizeof(want));
	run_trace(g, trace, n, true);
	cfg_free(g);
}

/* ---- the path cap ---- */

/* k diamonds in a row (2^k paths), then ret. Each diamond, 6 bytes at +o:
 *   +o   je +o+5      +o+2 nop; jmp +o+6      +o+5 nop */
static uint8_t *diamonds(unsigned int k, size_t *len)
{
	static const uint8_t unit[] = {0x74, 0x03, 0x90, 0xeb, 0x01, 0x90};
	uint8_t *p = malloc(6 * k + 1);

	assert_non_null(p);
	for (unsigned int i = 0; i < k; i++)
		memcpy(p + 6 * i, unit, sizeof(unit));
	p[6 * k] = 0xc3;
	*len = 6 * k + 1;
	return p;
}

static void test_path_cap(void **state)
{
	struct cfg_limits lim = {0};
	struct cfg_transition t;
	struct cfg_step st[256];
	struct cfg_stats s;
	uint64_t id;
	size_t len;
	uint8_t *code;
	struct cfg *g;

	(void)state;
	code = diamonds(10, &len);
	g = build(code, len, 0, NULL);
	assert_int_equal(cfg_nblocks(g), 31);
	assert_true(cfg_num_paths(g) == 1024);
	check_paths(g);
	cfg_free(g);
	free(code);

	/* 2^41 paths: over the default cap of 2^40, so an edge profile instead. */
	code = diamonds(41, &len);
	g = build(code, len, 0, NULL);
	cfg_get_stats(g, &s);
	assert_false(s.bl_ok);
	assert_false(cfg_bl_ok(g));
	assert_true(s.num_paths == 0 && cfg_num_paths(g) == 0);
	assert_int_equal(s.blocks, 124);
	assert_int_equal(s.edges, 41 * 4 + 1);
	assert_int_equal(cfg_path_decode(g, 0, st, 256), -EOVERFLOW);
	assert_int_equal(cfg_path_encode(g, st, 1, &id), -EOVERFLOW);
	assert_int_equal(cfg_transition(g, 0, 1, &t), -EOVERFLOW);
	assert_int_equal(cfg_edge_find(g, 0, 1), 0); /* the edge list is there to count */
	assert_int_equal(cfg_edge_find(g, 0, 2), 1);
	cfg_free(g);

	lim.max_paths = UINT64_C(1) << 41; /* exactly at the cap is fine */
	g = build(code, len, 0, &lim);
	assert_true(cfg_bl_ok(g) && cfg_num_paths(g) == UINT64_C(1) << 41);
	cfg_free(g);
	free(code);

	lim.max_paths = 100;
	code = diamonds(7, &len); /* 128 > 100 */
	g = build(code, len, 0, &lim);
	assert_false(cfg_bl_ok(g));
	cfg_free(g);
	free(code);

	/* 2^63 paths fit in 64 bits; 2^64 do not, whatever the cap. */
	lim.max_paths = UINT64_MAX;
	code = diamonds(63, &len);
	g = build(code, len, 0, &lim);
	assert_true(cfg_bl_ok(g) && cfg_num_paths(g) == UINT64_C(1) << 63);
	for (int k = 0; k < 3; k++) {
		uint64_t want = k == 0 ? 0 : k == 1 ? (UINT64_C(1) << 63) - 1 : 0x5555555555555555;
		int m = cfg_path_decode(g, want, st, 256);

		assert_int_equal(m, 63 * 2 + 1);
		assert_int_equal(cfg_path_encode(g, st, (size_t)m, &id), 0);
		assert_true(id == want);
	}
	cfg_free(g);
	free(code);
	code = diamonds(64, &len);
	g = build(code, len, 0, &lim);
	assert_false(cfg_bl_ok(g));
	cfg_free(g);
	free(code);
}

/* ---- bad input and limits ---- */

static void test_bad_args(void **state)
{
	static const uint8_t ret[] = {0xc3};
	struct cfg *g = NULL;

	(void)state;
	assert_int_equal(cfg_build(NULL, 1, BASE, BASE, NULL, &g), -EINVAL);
	assert_int_equal(cfg_build(ret, 0, BASE, BASE, NULL, &g), -EINVAL);
	assert_int_equal(cfg_build(ret, 1, BASE, BASE - 1, NULL, &g), -EINVAL);
	assert_int_equal(cfg_build(ret, 1, BASE, BASE + 1, NULL, &g), -EINVAL);
	assert_int_equal(cfg_build(ret, 1, UINT64_MAX, UINT64_MAX, NULL, &g), -EINVAL);
	assert_null(g);
	/* The last byte of the address space is fine. */
	assert_int_equal(cfg_build(ret, 1, UINT64_MAX - 1, UINT64_MAX - 1, NULL, &g), 0);
	assert_int_equal(cfg_check(g), 0);
	cfg_free(g);
	cfg_free(NULL);
}

static void test_bad_bytes(void **state)
{
	static const uint8_t trunc_call[] = {0x90, 0xe8, 0x00, 0x00}; /* nop; call (cut) */
	static const uint8_t trunc_0f[] = {0x90, 0x0f};		      /* nop; 0f (cut) */
	static const uint8_t invalid[] = {0x90, 0x06, 0xc3};	      /* nop; (push es); ret */
	static const uint8_t to_bad[] = {0x74, 0x01, 0xc3, 0x06, 0x06, 0x06}; /* je +3 -> bad */
	/* +0 mov eax, 0xfa eb00c3 ... then jmp into the middle of the mov */
	static const uint8_t into_insn[] = {0xb8, 0xc3, 0x00, 0x00, 0x00, 0xeb, 0xfa};
	/* +0 jmp +5; +2 mov eax, imm32 (covers +5, +6); +5 je +2 (back into the mov) */
	static const uint8_t overlap[] = {0xeb, 0x03, 0xb8, 0x00, 0x00, 0x74, 0xfb, 0xc3};
	const struct cfg_limits lenient = {.flags = CFG_BAD_IS_EXIT};
	struct cfg *g;

	(void)state;
	assert_int_equal(build_err(trunc_call, sizeof(trunc_call), 0, NULL), -ENODATA);
	assert_int_equal(build_err(trunc_0f, sizeof(trunc_0f), 0, NULL), -ENODATA);
	assert_int_equal(build_err(invalid, sizeof(invalid), 0, NULL), -EINVAL);
	assert_int_equal(build_err(to_bad, sizeof(to_bad), 0, NULL), -EINVAL);
	assert_int_equal(build_err(into_insn, sizeof(into_insn), 0, NULL), -EINVAL);
	assert_int_equal(build_err(overlap, sizeof(overlap), 0, NULL), -EINVAL);
	assert_int_equal(build_err(into_insn, sizeof(into_insn), 0, &lenient), -EINVAL);
	assert_int_equal(build_err(overlap, sizeof(overlap), 0, &lenient), -EINVAL);

	/* With CFG_BAD_IS_EXIT, bad bytes end the path. */
	g = build(trunc_call, sizeof(trunc_call), 0, &lenient);
	assert_int_equal(cfg_nblocks(g), 1);
	assert_int_equal(cfg_block_get(g, 0)->term, CFG_TERM_BAD);
	assert_int_equal(cfg_block_get(g, 0)->ninsns, 1);
	assert_true(cfg_block_get(g, 0)->end == BASE + 1);
	assert_int_equal(cfg_edge_get(g, 0)->kind, CFG_EDGE_EXIT);
	check_paths(g);
	cfg_free(g);

	g = build(invalid, sizeof(invalid), 0, &lenient);
	assert_int_equal(cfg_nblocks(g), 1);
	assert_int_equal(cfg_block_get(g, 0)->term, CFG_TERM_BAD);
	cfg_free(g);

	/* A branch to bad bytes: an empty block that only leaves. */
	g = build(to_bad, sizeof(to_bad), 0, &lenient);
	assert_int_equal(cfg_nblocks(g), 3);
	assert_true(cfg_block_get(g, 2)->start == BASE + 3 && cfg_block_get(g, 2)->end == BASE + 3);
	assert_int_equal(cfg_block_get(g, 2)->ninsns, 0);
	assert_int_equal(cfg_block_get(g, 2)->term, CFG_TERM_BAD);
	assert_int_equal(cfg_block_find(g, BASE + 3), 2);
	assert_int_equal(cfg_block_find(g, BASE + 4), -ENOENT);
	assert_int_equal(cfg_num_paths(g), 2);
	check_paths(g);
	cfg_free(g);
}

static void test_limits(void **state)
{
	static const uint8_t code[] = {
	    0x85, 0xff,			  /* +0x00 test edi, edi */
	    0x74, 0x07,			  /* +0x02 je +0x0b */
	    0xb8, 0x01, 0x00, 0x00, 0x00, /* +0x04 mov eax, 1 */
	    0xeb, 0x05,			  /* +0x09 jmp +0x10 */
	    0xb8, 0x02, 0x00, 0x00, 0x00, /* +0x0b mov eax, 2 */
	    0xc3,			  /* +0x10 ret */
	};
	struct cfg_limits lim = {.max_insns = 5};
	struct cfg *g;

	(void)state;
	assert_int_equal(build_err(code, sizeof(code), 0, &lim), -E2BIG);
	lim.max_insns = 6;
	g = build(code, sizeof(code), 0, &lim);
	cfg_free(g);
	lim = (struct cfg_limits){.max_blocks = 3};
	assert_int_equal(build_err(code, sizeof(code), 0, &lim), -E2BIG);
	lim.max_blocks = 4;
	g = build(code, sizeof(code), 0, &lim);
	cfg_free(g);
	lim = (struct cfg_limits){.max_bytes = sizeof(code) - 1};
	assert_int_equal(build_err(code, sizeof(code), 0, &lim), -E2BIG);
	lim.max_bytes = sizeof(code);
	g = build(code, sizeof(code), 0, &lim);
	cfg_free(g);
}

/* Lookups, transitions and encode on invalid input. */
static void test_queries(void **state)
{
	struct cfg *g = build(tvbl_code, sizeof(tvbl_code), 0, NULL);
	struct cfg_transition t;
	struct cfg_step st[8];
	uint64_t id;

	(void)state;
	assert_int_equal(cfg_block_find(g, BASE - 1), -ENOENT);
	assert_int_equal(cfg_block_find(g, BASE), TA);
	assert_int_equal(cfg_block_find(g, BASE + 1), TA);
	assert_int_equal(cfg_block_find(g, BASE + 0x5), TB);
	assert_int_equal(cfg_block_find(g, BASE + 0xe), TC);
	assert_int_equal(cfg_block_find(g, BASE + 0xf), -ENOENT);
	assert_null(cfg_block_get(g, 6));
	assert_null(cfg_edge_get(g, 8));
	assert_int_equal(cfg_edge_find(g, TE, TB), 5);
	assert_int_equal(cfg_edge_find(g, TF, X), 6);
	assert_int_equal(cfg_edge_find(g, TA, TC), -ENOENT);
	assert_int_equal(cfg_edge_find(g, 99, TC), -ENOENT);

	assert_int_equal(cfg_transition(g, CFG_NONE, TB, &t), -ENOENT);
	assert_int_equal(cfg_transition(g, TA, TC, &t), -ENOENT);
	assert_int_equal(cfg_transition(g, TF, X, &t), -ENOENT);
	assert_int_equal(cfg_transition(g, TA, TB, &t), 0);
	assert_true(t.act == CFG_ACT_ADD && t.add == 4 && t.edge == 0);
	assert_int_equal(cfg_transition(g, TE, TB, &t), 0);
	assert_true(t.act == CFG_ACT_BACK && t.add == 0 && t.reset == 0 && t.edge == 5);

	/* Not paths of the DAG: */
	st[0] = (struct cfg_step){TD, 3}; /* D is not a header */
	st[1] = (struct cfg_step){TE, 4};
	st[2] = (struct cfg_step){TF, 6};
	assert_int_equal(cfg_path_encode(g, st, 3, &id), -EINVAL);
	st[0] = (struct cfg_step){TB, 1}; /* B->D, then E: broken chain */
	assert_int_equal(cfg_path_encode(g, st, 3, &id), -EINVAL);
	st[0] = (struct cfg_step){TB, 1}; /* a back edge inside a path: B D E B C */
	st[1] = (struct cfg_step){TD, 3};
	st[2] = (struct cfg_step){TE, 5};
	st[3] = (struct cfg_step){TB, 2};
	assert_int_equal(cfg_path_encode(g, st, 4, &id), -EINVAL);
	st[0] = (struct cfg_step){TB, 1}; /* stops before the exit */
	assert_int_equal(cfg_path_encode(g, st, 1, &id), -EINVAL);
	st[0] = (struct cfg_step){TB, CFG_NONE}; /* B is no back edge source */
	assert_int_equal(cfg_path_encode(g, st, 1, &id), -EINVAL);
	st[0] = (struct cfg_step){TA, 0}; /* A B D E F, then more after the exit */
	st[1] = (struct cfg_step){TB, 1};
	st[2] = (struct cfg_step){TD, 3};
	st[3] = (struct cfg_step){TE, 4};
	st[4] = (struct cfg_step){TF, 6};
	assert_int_equal(cfg_path_encode(g, st, 5, &id), 0);
	assert_true(id == 5);
	st[5] = (struct cfg_step){TF, 6};
	assert_int_equal(cfg_path_encode(g, st, 6, &id), -EINVAL);
	st[0] = (struct cfg_step){TB, 99};
	assert_int_equal(cfg_path_encode(g, st, 1, &id), -EINVAL);
	assert_int_equal(cfg_path_encode(g, st, 0, &id), -EINVAL);
	cfg_free(g);
}

/* ---- random programs ---- */

enum { R_FALL, R_JCC, R_JMP, R_RET, R_IND, R_OUT };

/* nb blocks, each a nop and one ending: fallthrough, je rel32 or jmp rel32 to a random block,
 * ret, jmp rax, jmp rel32 out of the function. Returns the length; *entry gets a block start. */
static size_t random_code(uint64_t *s, uint8_t *buf, unsigned int nb, uint64_t *entry)
{
	static const size_t size[] = {
	    [R_FALL] = 1, [R_JCC] = 7, [R_JMP] = 6, [R_RET] = 2, [R_IND] = 3, [R_OUT] = 6};
	static const uint8_t kinds[] = {R_FALL, R_FALL, R_JCC, R_JCC, R_JCC, R_JCC,
					R_JMP,	R_JMP,	R_RET, R_IND, R_OUT};
	uint8_t kind[64];
	uint32_t off[65], target[64];
	size_t p = 0;

	assert_true(nb <= 64);
	off[0] = 0;
	for (unsigned int i = 0; i < nb; i++) {
		kind[i] = kinds[prng_next(s) % sizeof(kinds)];
		if (i + 1 == nb && (kind[i] == R_FALL || kind[i] == R_JCC))
			kind[i] = R_RET;
		target[i] = (uint32_t)(prng_next(s) % nb);
		off[i + 1] = off[i] + (uint32_t)size[kind[i]];
	}
	for (unsigned int i = 0; i < nb; i++) {
		int32_t rel = (int32_t)off[target[i]] - (int32_t)(off[i] + size[kind[i]]);

		buf[p++] = 0x90;
		switch (kind[i]) {
		case R_JCC:
			buf[p++] = 0x0f;
			buf[p++] = 0x84;
			break;
		case R_JMP:
			buf[p++] = 0xe9;
			break;
		case R_RET:
			buf[p++] = 0xc3;
			break;
		case R_IND:
			buf[p++] = 0xff;
			buf[p++] = 0xe0;
			break;
		case R_OUT:
			buf[p++] = 0xe9;
			rel = 0x100000;
			break;
		}
		if (kind[i] == R_JCC || kind[i] == R_JMP || kind[i] == R_OUT) {
			memcpy(buf + p, &rel, 4);
			p += 4;
		}
	}
	assert_int_equal(p, off[nb]);
	*entry = off[prng_next(s) % nb];
	return p;
}

/* Each back edge closes a cycle: its source is reachable from its target without back edges. */
static void check_back_edges(const struct cfg *g)
{
	uint32_t n = (uint32_t)cfg_nblocks(g), *queue = calloc(n, sizeof(*queue));
	uint8_t *seen = calloc(n, 1);

	assert_true(queue && seen);
	for (uint32_t e = 0; e < cfg_nedges(g); e++) {
		const struct cfg_edge *ed = cfg_edge_get(g, e);
		uint32_t head = 0, tail = 0;

		if (!ed->back)
			continue;
		memset(seen, 0, n);
		queue[tail++] = ed->dst;
		seen[ed->dst] = 1;
		while (head < tail) {
			const struct cfg_block *b = cfg_block_get(g, queue[head++]);

			for (uint32_t k = b->first_edge; k < b->first_edge + b->nedges; k++) {
				const struct cfg_edge *x = cfg_edge_get(g, k);

				if (!x->back && x->dst != X && !seen[x->dst]) {
					seen[x->dst] = 1;
					queue[tail++] = x->dst;
				}
			}
		}
		assert_true(seen[ed->src]);
	}
	free(queue);
	free(seen);
}

/* A random walk from the entry: the tracer's stream must rebuild it. */
static void random_walk(const struct cfg *g, uint64_t *s)
{
	uint32_t trace[300];
	size_t n = 0;
	bool exits = false;

	trace[n++] = cfg_entry_block(g);
	while (n < 300) {
		const struct cfg_block *b = cfg_block_get(g, trace[n - 1]);
		const struct cfg_edge *e =
		    cfg_edge_get(g, b->first_edge + prng_next(s) % b->nedges);

		if (e->dst == X) {
			exits = true;
			break;
		}
		trace[n++] = e->dst;
	}
	run_trace(g, trace, n, exits);
}

/* Against dominators (bitmasks, so graphs of at most 64 blocks): every edge whose target
 * dominates its source is a back edge, and the graph is irreducible (a back edge whose target
 * does not dominate its source) exactly when a loop is flagged irreducible. */
static void check_dominators(const struct cfg *g)
{
	uint32_t n = (uint32_t)cfg_nblocks(g), entry = cfg_entry_block(g);
	uint64_t dom[64], all = n == 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
	bool changed = true, irreducible = false;
	struct cfg_stats st;

	if (n > 64)
		return;
	for (uint32_t v = 0; v < n; v++)
		dom[v] = v == entry ? UINT64_C(1) << entry : all;
	while (changed) {
		changed = false;
		for (uint32_t v = 0; v < n; v++) {
			uint64_t d = all;

			if (v == entry)
				continue;
			for (uint32_t e = 0; e < cfg_nedges(g); e++)
				if (cfg_edge_get(g, e)->dst == v)
					d &= dom[cfg_edge_get(g, e)->src];
			d |= UINT64_C(1) << v;
			changed |= d != dom[v];
			dom[v] = d;
		}
	}
	for (uint32_t e = 0; e < cfg_nedges(g); e++) {
		const struct cfg_edge *ed = cfg_edge_get(g, e);

		if (ed->dst == X)
			continue;
		if ((dom[ed->src] >> ed->dst) & 1)
			assert_true(ed->back);
		else if (ed->back)
			irreducible = true;
	}
	cfg_get_stats(g, &st);
	assert_int_equal(st.irreducible_loops > 0, irreducible);
}

static void check_random_graph(const struct cfg *g, uint64_t *s)
{
	check_back_edges(g);
	check_dominators(g);
	if (!cfg_bl_ok(g))
		return;
	if (cfg_num_paths(g) <= 20000)
		check_paths(g);
	for (int k = 0; k < 4; k++)
		random_walk(g, s);
}

static void test_random_programs(void **state)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	size_t irreducible = 0, loops = 0;
	uint8_t buf[64 * 7];

	(void)state;
	for (int iter = 0; iter < 1500; iter++) {
		unsigned int nb = 1 + (unsigned int)(prng_next(&s) % 40);
		uint64_t entry;
		size_t len = random_code(&s, buf, nb, &entry);
		struct cfg *g = build(buf, len, entry, NULL);
		struct cfg_stats st;

		cfg_get_stats(g, &st);
		loops += st.loops;
		irreducible += st.irreducible_loops;
		check_random_graph(g, &s);
		cfg_free(g);
	}
	assert_true(loops > 500 && irreducible > 50); /* the generator makes both kinds */
}

/* Random bytes, bad ones as path ends: either a clean error or a graph that passes every
 * check. Run under ASan/UBSan this is a small fuzz test of the decoder glue. */
static void test_random_bytes(void **state)
{
	uint64_t s = 12345;
	const struct cfg_limits lim = {.flags = CFG_BAD_IS_EXIT};
	int built = 0;

	(void)state;
	for (int iter = 0; iter < 4000; iter++) {
		uint8_t buf[96];
		size_t len = 1 + prng_next(&s) % sizeof(buf);
		struct cfg *g = NULL;
		int r;

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)prng_next(&s);
		r = cfg_build(buf, len, BASE, BASE + prng_next(&s) % len, &lim, &g);
		if (r < 0) {
			assert_int_equal(r, -EINVAL); /* overlapping instructions */
			continue;
		}
		built++;
		assert_int_equal(cfg_check(g), 0);
		check_random_graph(g, &s);
		cfg_free(g);
	}
	assert_true(built > 1000);
}

/* ---- minijit's code ---- */

struct mj_block {
	uint64_t start, end;
	uint32_t insns;
};

/* clang-format off */ /* byte tables as minijit prints them */
/* mj_main at 0x7f98c0422000, 172 bytes, from `minijit --print-code`: IR blocks with their byte ranges and
 * instruction counts. */
static const uint8_t mj_main_code[] = {
	/* block 0 0x7f98c0422000-0x7f98c0422025, 7 insns */
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x30, 0x48, 0xb8, 0x08, 0x4c,
	0x45, 0x79, 0xca, 0x55, 0x00, 0x00, 0x48, 0xff, 0x40, 0x00, 0x48, 0xc7,
	0x45, 0xf8, 0x0a, 0x00, 0x00, 0x00, 0x48, 0xc7, 0xc6, 0x00, 0x00, 0x00,
	0x00,
	/* block 1 0x7f98c0422025-0x7f98c04220a7, 32 insns */
	0x48, 0x89, 0x75, 0xe8, 0x48, 0x89, 0x7d, 0xe0, 0x4c, 0x89, 0x45, 0xd8,
	0x4c, 0x89, 0x4d, 0xd0, 0xe8, 0x86, 0x00, 0x00, 0x00, 0x48, 0x8b, 0x75,
	0xe8, 0x48, 0x8b, 0x7d, 0xe0, 0x4c, 0x8b, 0x45, 0xd8, 0x4c, 0x8b, 0x4d,
	0xd0, 0x48, 0x01, 0xc6, 0x48, 0x89, 0x75, 0xe8, 0x48, 0x89, 0x7d, 0xe0,
	0x4c, 0x89, 0x45, 0xd8, 0x4c, 0x89, 0x4d, 0xd0, 0xe8, 0x1e, 0x01, 0x00,
	0x00, 0x48, 0x8b, 0x75, 0xe8, 0x48, 0x8b, 0x7d, 0xe0, 0x4c, 0x8b, 0x45,
	0xd8, 0x4c, 0x8b, 0x4d, 0xd0, 0x48, 0x01, 0xc6, 0x48, 0x89, 0x75, 0xe8,
	0x48, 0x89, 0x7d, 0xe0, 0x4c, 0x89, 0x45, 0xd8, 0x4c, 0x89, 0x4d, 0xd0,
	0xe8, 0xf6, 0x01, 0x00, 0x00, 0x48, 0x8b, 0x75, 0xe8, 0x48, 0x8b, 0x7d,
	0xe0, 0x4c, 0x8b, 0x45, 0xd8, 0x4c, 0x8b, 0x4d, 0xd0, 0x48, 0x01, 0xc6,
	0x48, 0xff, 0x4d, 0xf8, 0x0f, 0x85, 0x7e, 0xff, 0xff, 0xff,
	/* block 2 0x7f98c04220a7-0x7f98c04220ac, 3 insns */
	0x48, 0x89, 0xf0, 0xc9, 0xc3,
};
static const struct mj_block mj_main_blocks[] = {
	{0x7f98c0422000, 0x7f98c0422025, 7},
	{0x7f98c0422025, 0x7f98c04220a7, 32},
	{0x7f98c04220a7, 0x7f98c04220ac, 3},
};
/* mj_hot at 0x7f98c04220c0, 168 bytes, from `minijit --print-code`: IR blocks with their byte ranges and
 * instruction counts. */
static const uint8_t mj_hot_code[] = {
	/* block 0 0x7f98c04220c0-0x7f98c04220fa, 10 insns */
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x30, 0x48, 0xb8, 0x10, 0x4c,
	0x45, 0x79, 0xca, 0x55, 0x00, 0x00, 0x48, 0xff, 0x40, 0x00, 0x48, 0xc7,
	0x45, 0xf8, 0xc0, 0x5d, 0x00, 0x00, 0x48, 0xc7, 0xc6, 0x00, 0x00, 0x00,
	0x00, 0x48, 0xc7, 0xc7, 0x37, 0x9e, 0x00, 0x00, 0x49, 0xc7, 0xc0, 0x01,
	0x00, 0x00, 0x00, 0x49, 0xc7, 0xc1, 0x00, 0x00, 0x00, 0x00,
	/* block 1 0x7f98c04220fa-0x7f98c042213e, 16 insns */
	0x4c, 0x0f, 0xaf, 0xc7, 0x4c, 0x01, 0xc6, 0x48, 0xb8, 0x00, 0x4c, 0x45,
	0x79, 0xca, 0x55, 0x00, 0x00, 0x48, 0x8b, 0x48, 0x00, 0x48, 0x89, 0xca,
	0x48, 0xc1, 0xe2, 0x0d, 0x48, 0x31, 0xd1, 0x48, 0x89, 0xca, 0x48, 0xc1,
	0xea, 0x07, 0x48, 0x31, 0xd1, 0x48, 0x89, 0xca, 0x48, 0xc1, 0xe2, 0x11,
	0x48, 0x31, 0xd1, 0x48, 0x89, 0x48, 0x00, 0x48, 0xf7, 0xc1, 0x20, 0x00,
	0x00, 0x00, 0x0f, 0x84, 0x0c, 0x00, 0x00, 0x00,
	/* block 2 0x7f98c042213e-0x7f98c042214a, 3 insns */
	0x48, 0x83, 0xc7, 0x03, 0x48, 0x31, 0xfe, 0xe9, 0x0b, 0x00, 0x00, 0x00,
	/* block 3 0x7f98c042214a-0x7f98c0422155, 3 insns */
	0x48, 0x31, 0xf7, 0x48, 0xc1, 0xee, 0x01, 0x48, 0x83, 0xc6, 0x07,
	/* block 4 0x7f98c0422155-0x7f98c0422163, 3 insns */
	0x49, 0x83, 0xc1, 0x01, 0x48, 0xff, 0x4d, 0xf8, 0x0f, 0x85, 0x97, 0xff,
	0xff, 0xff,
	/* block 5 0x7f98c0422163-0x7f98c0422168, 3 insns */
	0x48, 0x89, 0xf0, 0xc9, 0xc3,
};
static const struct mj_block mj_hot_blocks[] = {
	{0x7f98c04220c0, 0x7f98c04220fa, 10},
	{0x7f98c04220fa, 0x7f98c042213e, 16},
	{0x7f98c042213e, 0x7f98c042214a, 3},
	{0x7f98c042214a, 0x7f98c0422155, 3},
	{0x7f98c0422155, 0x7f98c0422163, 3},
	{0x7f98c0422163, 0x7f98c0422168, 3},
};
/* mj_warm at 0x7f98c0422180, 226 bytes, from `minijit --print-code`: IR blocks with their byte ranges and
 * instruction counts. */
static const uint8_t mj_warm_code[] = {
	/* block 0 0x7f98c0422180-0x7f98c04221ba, 10 insns */
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x30, 0x48, 0xb8, 0x18, 0x4c,
	0x45, 0x79, 0xca, 0x55, 0x00, 0x00, 0x48, 0xff, 0x40, 0x00, 0x48, 0xc7,
	0x45, 0xf0, 0x04, 0x00, 0x00, 0x00, 0x48, 0xc7, 0xc6, 0x00, 0x00, 0x00,
	0x00, 0x48, 0xc7, 0xc7, 0x37, 0x9e, 0x00, 0x00, 0x49, 0xc7, 0xc0, 0x01,
	0x00, 0x00, 0x00, 0x49, 0xc7, 0xc1, 0x00, 0x00, 0x00, 0x00,
	/* block 1 0x7f98c04221ba-0x7f98c04221c2, 1 insns */
	0x48, 0xc7, 0x45, 0xf8, 0xc4, 0x09, 0x00, 0x00,
	/* block 2 0x7f98c04221c2-0x7f98c0422206, 16 insns */
	0x4c, 0x0f, 0xaf, 0xc7, 0x4c, 0x01, 0xc6, 0x48, 0xb8, 0x00, 0x4c, 0x45,
	0x79, 0xca, 0x55, 0x00, 0x00, 0x48, 0x8b, 0x48, 0x00, 0x48, 0x89, 0xca,
	0x48, 0xc1, 0xe2, 0x0d, 0x48, 0x31, 0xd1, 0x48, 0x89, 0xca, 0x48, 0xc1,
	0xea, 0x07, 0x48, 0x31, 0xd1, 0x48, 0x89, 0xca, 0x48, 0xc1, 0xe2, 0x11,
	0x48, 0x31, 0xd1, 0x48, 0x89, 0x48, 0x00, 0x48, 0xf7, 0xc1, 0x20, 0x00,
	0x00, 0x00, 0x0f, 0x84, 0x0c, 0x00, 0x00, 0x00,
	/* block 3 0x7f98c0422206-0x7f98c0422212, 3 insns */
	0x48, 0x83, 0xc7, 0x05, 0x48, 0x31, 0xfe, 0xe9, 0x0b, 0x00, 0x00, 0x00,
	/* block 4 0x7f98c0422212-0x7f98c042221d, 3 insns */
	0x48, 0x31, 0xf7, 0x48, 0xc1, 0xee, 0x01, 0x48, 0x83, 0xc6, 0x07,
	/* block 5 0x7f98c042221d-0x7f98c042222b, 3 insns */
	0x49, 0x83, 0xc1, 0x01, 0x48, 0xff, 0x4d, 0xf8, 0x0f, 0x85, 0x97, 0xff,
	0xff, 0xff,
	/* block 6 0x7f98c042222b-0x7f98c042225d, 12 insns */
	0x48, 0x89, 0x75, 0xe8, 0x48, 0x89, 0x7d, 0xe0, 0x4c, 0x89, 0x45, 0xd8,
	0x4c, 0x89, 0x4d, 0xd0, 0xe8, 0x00, 0x01, 0x00, 0x00, 0x48, 0x8b, 0x75,
	0xe8, 0x48, 0x8b, 0x7d, 0xe0, 0x4c, 0x8b, 0x45, 0xd8, 0x4c, 0x8b, 0x4d,
	0xd0, 0x48, 0x01, 0xc6, 0x48, 0xff, 0x4d, 0xf0, 0x0f, 0x85, 0x5d, 0xff,
	0xff, 0xff,
	/* block 7 0x7f98c042225d-0x7f98c0422262, 3 insns */
	0x48, 0x89, 0xf0, 0xc9, 0xc3,
};
static const struct mj_block mj_warm_blocks[] = {
	{0x7f98c0422180, 0x7f98c04221ba, 10},
	{0x7f98c04221ba, 0x7f98c04221c2, 1},
	{0x7f98c04221c2, 0x7f98c0422206, 16},
	{0x7f98c0422206, 0x7f98c0422212, 3},
	{0x7f98c0422212, 0x7f98c042221d, 3},
	{0x7f98c042221d, 0x7f98c042222b, 3},
	{0x7f98c042222b, 0x7f98c042225d, 12},
	{0x7f98c042225d, 0x7f98c0422262, 3},
};
/* clang-format on */

/* IR edges: block indexes, X for the exit (the IR blocks are the x86 blocks, in order). */
struct ir_edge {
	uint32_t src, dst;
	enum cfg_edge_kind kind;
	bool back;
};

static void expect_ir(const struct cfg *g, const struct mj_block *mb, size_t nb,
		      const struct ir_edge *ie, size_t ne)
{
	assert_int_equal(cfg_nblocks(g), nb);
	for (size_t i = 0; i < nb; i++) {
		const struct cfg_block *b = cfg_block_get(g, (uint32_t)i);

		assert_true(b->start == mb[i].start && b->end == mb[i].end);
		assert_int_equal(b->ninsns, mb[i].insns);
	}
	assert_int_equal(cfg_nedges(g), ne);
	for (size_t i = 0; i < ne; i++) {
		const struct cfg_edge *e = cfg_edge_get(g, (uint32_t)i);

		if (e->src != ie[i].src || e->dst != ie[i].dst || e->kind != ie[i].kind ||
		    e->back != ie[i].back)
			fail_msg("edge %zu: %u -> %u kind %d back %d, IR says %u -> %u kind %d "
				 "back %d",
				 i, e->src, e->dst, e->kind, e->back, ie[i].src, ie[i].dst,
				 ie[i].kind, ie[i].back);
	}
}

static void test_minijit_hot(void **state)
{
	/* IR: 0 jump 1; 1 prng(2, 3); 2 jump 4; 3 jump 4; 4 loop(1, 5); 5 ret */
	static const struct ir_edge ie[] = {
	    {0, 1, CFG_EDGE_FALL, false},  {1, 2, CFG_EDGE_FALL, false},
	    {1, 3, CFG_EDGE_TAKEN, false}, {2, 4, CFG_EDGE_JUMP, false},
	    {3, 4, CFG_EDGE_FALL, false},  {4, 5, CFG_EDGE_FALL, false},
	    {4, 1, CFG_EDGE_TAKEN, true},  {5, X, CFG_EDGE_EXIT, false},
	};
	static const uint32_t trace[] = {0, 1, 2, 4, 1, 3, 4, 1, 3, 4, 5};
	uint64_t start = mj_hot_blocks[0].start;
	struct cfg *g = build_at(mj_hot_code, sizeof(mj_hot_code), start, start, NULL);
	struct cfg_stats s;

	(void)state;
	expect_ir(g, mj_hot_blocks, 6, ie, 8);
	assert_int_equal(cfg_block_get(g, 1)->flags, CFG_BLOCK_HEADER);
	for (uint32_t i = 1; i <= 4; i++)
		assert_int_equal(cfg_block_get(g, i)->loop_depth, 1);
	cfg_get_stats(g, &s);
	assert_int_equal(s.insns, 38);
	assert_int_equal(s.loops, 1);
	assert_true(s.num_paths == 8); /* the shape of TV-BL */
	check_paths(g);
	run_trace(g, trace, sizeof(trace) / sizeof(trace[0]), true);
	cfg_free(g);
}

static void test_minijit_warm(void **state)
{
	/* IR: 0 jump 1; 1 jump 2; 2 prng(3, 4); 3 jump 5; 4 jump 5; 5 loop(2, 6);
	 * 6 call mj_leaf, loop(1, 7); 7 ret */
	static const struct ir_edge ie[] = {
	    {0, 1, CFG_EDGE_FALL, false}, {1, 2, CFG_EDGE_FALL, false},
	    {2, 3, CFG_EDGE_FALL, false}, {2, 4, CFG_EDGE_TAKEN, false},
	    {3, 5, CFG_EDGE_JUMP, false}, {4, 5, CFG_EDGE_FALL, false},
	    {5, 6, CFG_EDGE_FALL, false}, {5, 2, CFG_EDGE_TAKEN, true},
	    {6, 7, CFG_EDGE_FALL, false}, {6, 1, CFG_EDGE_TAKEN, true},
	    {7, X, CFG_EDGE_EXIT, false},
	};
	static const uint32_t depth[] = {0, 1, 2, 2, 2, 2, 1, 0};
	uint64_t start = mj_warm_blocks[0].start, seed = 7;
	struct cfg *g = build_at(mj_warm_code, sizeof(mj_warm_code), start, start, NULL);
	uint32_t trace[64];
	size_t n = 0;

	(void)state;
	expect_ir(g, mj_warm_blocks, 8, ie, 11);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(cfg_block_get(g, i)->loop_depth, depth[i]);
	assert_int_equal(cfg_block_get(g, 2)->loop_parent, 1);
	assert_int_equal(cfg_block_get(g, 6)->loop_parent, 1);
	assert_int_equal(cfg_block_get(g, 1)->loop_parent, CFG_NONE);
	/* 7: 1; 6 [6..>X, 6->7] 2; 5 [5..>X, 5->6] 3; 4, 3: 3; 2: 6; 1: 6;
	 * 0 [0..>1, 0..>2, 0->1] 18 */
	assert_true(cfg_num_paths(g) == 18);
	assert_true(cfg_block_get(g, 1)->entry_val == 0 && cfg_block_get(g, 2)->entry_val == 6);
	check_paths(g);
	/* Run the IR: outer trip count 2, inner 3, PRNG arms at random. */
	trace[n++] = 0;
	for (int o = 0; o < 2; o++) {
		trace[n++] = 1;
		for (int i = 0; i < 3; i++) {
			trace[n++] = 2;
			trace[n++] = 3 + (uint32_t)(prng_next(&seed) & 1);
			trace[n++] = 5;
		}
		trace[n++] = 6;
	}
	trace[n++] = 7;
	run_trace(g, trace, n, true);
	cfg_free(g);
}

/* mj_main calls three functions outside its own code from its loop block. */
static void test_minijit_main(void **state)
{
	static const struct ir_edge ie[] = {
	    {0, 1, CFG_EDGE_FALL, false},
	    {1, 2, CFG_EDGE_FALL, false},
	    {1, 1, CFG_EDGE_TAKEN, true},
	    {2, X, CFG_EDGE_EXIT, false},
	};
	const struct cfg_limits split = {.flags = CFG_SPLIT_CALLS};
	uint64_t start = mj_main_blocks[0].start;
	struct cfg *g = build_at(mj_main_code, sizeof(mj_main_code), start, start, NULL);
	size_t calls = 0;

	(void)state;
	expect_ir(g, mj_main_blocks, 3, ie, 4);
	assert_true(cfg_num_paths(g) == 4);
	check_paths(g);
	cfg_free(g);

	/* Split at calls: block 1 becomes four, the loop's header is the first of them. */
	g = build_at(mj_main_code, sizeof(mj_main_code), start, start, &split);
	assert_int_equal(cfg_nblocks(g), 6);
	for (uint32_t i = 0; i < 6; i++)
		calls += cfg_block_get(g, i)->term == CFG_TERM_CALL;
	assert_int_equal(calls, 3);
	assert_true(cfg_block_get(g, 1)->start == mj_main_blocks[1].start);
	assert_int_equal(cfg_block_get(g, 1)->flags, CFG_BLOCK_HEADER);
	assert_int_equal(cfg_edge_find(g, 4, 1), (int)cfg_block_get(g, 4)->first_edge + 1);
	assert_true(cfg_num_paths(g) == 4);
	check_paths(g);
	cfg_free(g);
}

/* Terminator names as kprofctl shows them; out-of-range values do not index past the table. */
static void test_term_name(void **state)
{
	(void)state;
	assert_string_equal(cfg_term_name(CFG_TERM_FALL), "fall");
	assert_string_equal(cfg_term_name(CFG_TERM_JMP_OUT), "jmp-out");
	assert_string_equal(cfg_term_name(CFG_TERM_BAD), "bad");
	assert_string_equal(cfg_term_name((enum cfg_term)1000), "?");
	assert_string_equal(cfg_term_name((enum cfg_term) - 1), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_straight_line),
	    cmocka_unit_test(test_if_else),
	    cmocka_unit_test(test_loop),
	    cmocka_unit_test(test_nested_loops),
	    cmocka_unit_test(test_irreducible),
	    cmocka_unit_test(test_irreducible_nested),
	    cmocka_unit_test(test_switch_indirect),
	    cmocka_unit_test(test_call_fallthrough),
	    cmocka_unit_test(test_tail_jump_out),
	    cmocka_unit_test(test_fall_off_end),
	    cmocka_unit_test(test_odd_branches),
	    cmocka_unit_test(test_self_loop_entry),
	    cmocka_unit_test(test_entry_not_first),
	    cmocka_unit_test(test_tv_bl),
	    cmocka_unit_test(test_path_cap),
	    cmocka_unit_test(test_bad_args),
	    cmocka_unit_test(test_bad_bytes),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_queries),
	    cmocka_unit_test(test_random_programs),
	    cmocka_unit_test(test_random_bytes),
	    cmocka_unit_test(test_minijit_hot),
	    cmocka_unit_test(test_minijit_warm),
	    cmocka_unit_test(test_minijit_main),
	    cmocka_unit_test(test_term_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
