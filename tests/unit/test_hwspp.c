// SPDX-License-Identifier: GPL-2.0-only
/* test_hwspp.c: unit tests of structural path profiling from breakpoint hits
 * (daemon/lib/hwspp.c, with spp.c and cfg.c).
 *
 * The oracle is spp.c's own projection of the complete block trace (budget 0). For a graph X,
 * the hits X's breakpoints would see are made from the same trace (a jcc of X's own blocks: its
 * direction from the next block; an arrival breakpoint: each run of its block; the outline: each
 * activation's entry), fed to the walker, and the paths it emits are counted in a second spp:
 * they must be exactly the oracle's paths of X when nothing was given up, and never a path the
 * oracle has fewer of. Fig. 1 of the paper (test_spp.c's CFG) by hand, then random CFGs with
 * random traces: every breakpoint, branches assumed one way, arrival breakpoints added.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/cfg.h"
#include "kprof/hwspp.h"
#include "kprof/spp.h"

#define E SPP_M_ENTRY
#define B SPP_M_BACK
#define X SPP_M_EXIT

/* test_spp.c's Fig. 1: 1: nop; 2: nop; 3: jz 6; 4: jnz 3; 5: ret; 6: jnz 2; 7: ret. */
static const uint8_t fig1[] = {0x90, 0x90, 0x74, 0x03, 0x75, 0xfc, 0xc3, 0x75, 0xf8, 0xc3};
static const uint32_t straight[] = {0, 1, 2, 5, 6};
static const uint32_t loopy[] = {0, 1, 2, 3, 2, 3, 2, 5, 1, 2, 5, 6};
static const uint32_t early[] = {0, 1, 2, 3, 4}; /* leaves by the inner loop's return */

#define MAXT 512
struct trace {
	uint32_t b[MAXT];
	size_t n;
};

static void feed(struct spp *s, const struct trace *t)
{
	struct spp_act a = {0};

	assert_int_equal(spp_enter(s, &a), 0);
	for (size_t i = 0; i < t->n; i++)
		assert_int_equal(spp_block(s, &a, t->b[i]), 0);
	spp_exit(s, &a);
	spp_act_release(&a);
}

struct got {
	struct spp *s;
	uint32_t g;
};

static void emit(void *ud, const uint32_t *nodes, size_t n)
{
	struct got *c = ud;

	if (getenv("HWSPP_DEBUG") && getenv("HWSPP_DEBUG")[0] == '2') {
		fprintf(stderr, "  emit g%u:", c->g);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, " %x", nodes[i]);
		fprintf(stderr, "\n");
	}
	assert_int_equal(spp_add(c->s, c->g, nodes, n, 1), 0);
}

/* Feed the hits graph x would see in trace t to walk w. */
static void hits(const struct cfg *g, const struct spp *s, struct hwspp_graph *hx, uint32_t x,
		 const uint8_t *cover, bool entry, const struct trace *t, struct hwspp_walk *w,
		 struct got *c)
{
	if (x == 0 || entry)
		assert_int_equal(hwspp_entry(hx, w, emit, c), 0);
	if (getenv("HWSPP_DEBUG") && getenv("HWSPP_DEBUG")[0] == '2')
		fprintf(stderr, " trace of %zu, graph %u entry %d\n", t->n, x, entry);
	for (size_t i = 0; i < t->n; i++) {
		uint32_t b = t->b[i], nx = i + 1 < t->n ? t->b[i + 1] : CFG_EXIT;
		const struct cfg_block *blk = cfg_block_get(g, b);
		bool taken = false;
		int e;

		if (hwspp_block_graph(g, s, b) != x)
			continue;
		if (blk->term == CFG_TERM_COND) {
			if (cover[b] != HWSPP_HIT)
				continue;
			e = cfg_edge_find(g, b, nx);
			assert_true(e >= 0);
			taken = cfg_edge_get(g, (uint32_t)e)->kind == CFG_EDGE_TAKEN;
		} else if (cover[b] != HWSPP_ARRIVE) {
			continue;
		}
		assert_int_equal(hwspp_hit(hx, w, b, taken, emit, c), 0);
	}
}

struct cmp {
	const struct spp *other;
	uint32_t g;
	bool exact, quiet;
	int bad;
	uint64_t total;
};

struct find {
	uint32_t g;
	const uint32_t *nodes;
	size_t n;
	uint64_t count;
};

static int find_cb(uint32_t g, const uint32_t *nodes, size_t n, uint64_t c, double gl, void *u)
{
	struct find *f = u;

	(void)gl;
	if (g == f->g && n == f->n && !memcmp(nodes, f->nodes, n * sizeof(*nodes)))
		f->count = c;
	return 0;
}

/* got's paths of graph g against ref's: equal (exact) or each at most ref's count. */
static int cmp_cb(uint32_t g, const uint32_t *nodes, size_t n, uint64_t c, double gl, void *u)
{
	struct cmp *m = u;
	struct find f = {g, nodes, n, 0};

	(void)gl;
	if (g != m->g)
		return 0;
	spp_foreach_path(m->other, find_cb, &f);
	m->total += c;
	if (m->exact ? f.count != c : f.count < c) {
		m->bad++;
		if (getenv("HWSPP_DEBUG") && !m->quiet) {
			fprintf(stderr, "graph %u path", g);
			for (size_t i = 0; i < n; i++)
				fprintf(stderr, " %x", nodes[i]);
			fprintf(stderr, ": %lu vs %lu\n", (unsigned long)c, (unsigned long)f.count);
		}
	}
	return 0;
}

static int dump_cb(uint32_t g, const uint32_t *nodes, size_t n, uint64_t c, double gl, void *u)
{
	(void)gl;
	if (g != *(uint32_t *)u)
		return 0;
	fprintf(stderr, "  ref g%u:", g);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %x", nodes[i]);
	fprintf(stderr, " = %lu\n", (unsigned long)c);
	return 0;
}

static void dump(const struct cfg *g, const struct spp *ref, uint32_t x)
{
	for (uint32_t b = 0; b < cfg_nblocks(g); b++) {
		const struct cfg_block *blk = cfg_block_get(g, b);

		fprintf(stderr, "B%u graph %u term %d hdr %d:", b, hwspp_block_graph(g, ref, b),
			blk->term, !!(blk->flags & CFG_BLOCK_HEADER));
		for (uint32_t k = 0; k < blk->nedges; k++)
			fprintf(stderr, " ->%d", (int)cfg_edge_get(g, blk->first_edge + k)->dst);
		fprintf(stderr, "\n");
	}
	spp_foreach_path(ref, dump_cb, &x);
}

/* Walk graph x over traces t[0..nt) with cover[]; check against ref. Returns 1 if nothing was
 * given up (and the profiles are equal), 0 otherwise. */
static int check_graph(const struct cfg *g, const struct spp *ref, uint32_t x, const uint8_t *cover,
		       bool entry, const struct trace *t, size_t nt, bool strict)
{
	struct spp *got;
	struct hwspp_graph *hx;
	static struct hwspp_walk w;
	struct got c;
	struct cmp m = {.g = x};
	struct spp_graph_info a, b;

	assert_int_equal(spp_new(g, NULL, &got), 0);
	assert_int_equal(hwspp_graph_new(g, ref, x, cover, &hx), 0);
	if (entry)
		hwspp_graph_entry_bp(hx);
	c = (struct got){got, x};
	memset(&w, 0, sizeof(w));
	for (size_t i = 0; i < nt; i++)
		hits(g, ref, hx, x, cover, entry, &t[i], &w, &c);
	hwspp_walk_end(hx, &w, emit, &c); /* the last activation returned */
	m.other = ref;
	m.exact = w.given_up == 0;
	spp_foreach_path(got, cmp_cb, &m);
	if (m.bad && getenv("HWSPP_DEBUG"))
		dump(g, ref, x);
	assert_int_equal(m.bad, 0);
	spp_graph_get(ref, x, &a);
	spp_graph_get(got, x, &b);
	if (m.exact) {
		/* and every path of the oracle was found (not so when one has no breakpoint) */
		struct cmp back = {.other = got, .g = x, .exact = true, .quiet = true};

		spp_foreach_path(ref, cmp_cb, &back);
		m.exact = back.bad == 0 && a.counted == b.counted;
		/* every path crosses the header or the entry: none can be missed silently */
		assert_true(m.exact || !strict);
		if (!m.exact && getenv("HWSPP_DEBUG") && getenv("HWSPP_DEBUG")[0] == '3') {
			fprintf(stderr, "MISSED g%u entry %d\n", x, entry);
			dump(g, ref, x);
			spp_foreach_path(got, dump_cb, &x);
		}
	}
	hwspp_graph_free(hx);
	spp_free(got);
	return m.exact;
}

static struct cfg *build(const uint8_t *code, size_t len)
{
	struct cfg *g = NULL;

	assert_int_equal(cfg_build(code, len, 0x1000, 0x1000, NULL, &g), 0);
	return g;
}

static void set(struct trace *t, const uint32_t *b, size_t n)
{
	memcpy(t->b, b, n * sizeof(*b));
	t->n = n;
}

static void test_fig1(void **state)
{
	struct cfg *g = build(fig1, sizeof(fig1));
	struct spp *ref;
	struct trace t[4];
	uint8_t cover[7] = {0};
	size_t nt = 4;

	(void)state;
	set(&t[0], straight, 5);
	set(&t[1], loopy, 12);
	set(&t[2], early, 5);
	set(&t[3], loopy, 12);
	assert_int_equal(spp_new(g, NULL, &ref), 0);
	for (size_t i = 0; i < nt; i++)
		feed(ref, &t[i]);
	/* The outer loop without a breakpoint on its header: a call that runs its header and its
	 * inner loop and returns from there has no hit of graph 1 at all. */
	assert_int_equal(check_graph(g, ref, 1, cover, true, t, nt, false), 0);
	/* With one (an arrival breakpoint: the header has one way out), each path is seen. */
	cover[1] = HWSPP_ARRIVE;
	assert_int_equal(check_graph(g, ref, 1, cover, true, t, nt, true), 1);
	assert_int_equal(check_graph(g, ref, 1, cover, false, t, nt, true), 1);
	/* The inner loop's header is a jcc: its own breakpoints suffice. */
	assert_int_equal(check_graph(g, ref, 2, cover, false, t, nt, true), 1);
	/* The outline has no branch: after its loop node, returns at 4 and 6 both end it. */
	assert_int_equal(check_graph(g, ref, 0, cover, true, t, nt, true), 0);
	/* Arrival breakpoints on both say which. */
	cover[4] = cover[6] = HWSPP_ARRIVE;
	assert_int_equal(check_graph(g, ref, 0, cover, true, t, nt, true), 1);
	{
		uint32_t own[8];

		assert_int_equal(hwspp_own_conds(g, ref, 0, own, 8), 0);
		assert_int_equal(hwspp_own_conds(g, ref, 1, own, 8), 1);
		assert_int_equal(own[0], 5);
		assert_int_equal(hwspp_own_conds(g, ref, 2, own, 8), 2);
	}
	spp_free(ref);
	cfg_free(g);
}

/* Fig. 1's outer loop walked by hand: the paths of Table 2 (L2-*), one by one. */
static void test_fig1_by_hand(void **state)
{
	struct cfg *g = build(fig1, sizeof(fig1));
	struct spp *s, *got;
	struct hwspp_graph *hx;
	static struct hwspp_walk w;
	struct got c;
	uint32_t L2 = SPP_LOOP | 2;
	struct find f = {.g = 1};

	(void)state;
	assert_int_equal(spp_new(g, NULL, &s), 0);
	assert_int_equal(spp_new(g, NULL, &got), 0);
	assert_int_equal(hwspp_graph_new(g, s, 1, NULL, &hx), 0);
	hwspp_graph_entry_bp(hx);
	c = (struct got){got, 1};
	/* loopy: 6 taken (back to 2), then 6 not taken (out). */
	assert_int_equal(hwspp_entry(hx, &w, emit, &c), 0);
	assert_int_equal(hwspp_hit(hx, &w, 5, true, emit, &c), 0);
	assert_int_equal(w.paths, 1);
	assert_int_equal(hwspp_hit(hx, &w, 5, false, emit, &c), 0);
	assert_int_equal(w.paths, 2);
	f.nodes = (const uint32_t[]){E, 1, L2, 5, B};
	f.n = 5;
	spp_foreach_path(got, find_cb, &f);
	assert_int_equal(f.count, 1);
	f.nodes = (const uint32_t[]){B, 1, L2, 5, X};
	f.count = 0;
	spp_foreach_path(got, find_cb, &f);
	assert_int_equal(f.count, 1);
	/* Not a breakpoint of graph 1. */
	assert_int_equal(hwspp_hit(hx, &w, 2, true, emit, &c), -EINVAL);
	hwspp_graph_free(hx);
	assert_int_equal(hwspp_graph_new(g, s, 1, NULL, &hx), 0);
	assert_int_equal(hwspp_entry(hx, &w, emit, &c), -EINVAL); /* no entry breakpoint */
	hwspp_graph_free(hx);
	spp_free(got);
	spp_free(s);
	cfg_free(g);
}

/* ---- random CFGs ---- */

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Units of nop + terminator (none, jz, jmp, ret) with branches to unit starts. */
static size_t gen_code(uint8_t *code, uint32_t units)
{
	uint32_t off[32], kind[32], tgt[32];
	size_t len = 0;

	for (uint32_t i = 0; i < units; i++) {
		kind[i] = i + 1 == units ? 2 + rnd(2) : rnd(10) < 5 ? 1 : rnd(4);
		tgt[i] = rnd(units);
		off[i] = (uint32_t)len;
		len += 1 + (kind[i] == 1 || kind[i] == 2 ? 2 : kind[i] == 3 ? 1 : 0);
	}
	for (uint32_t i = 0; i < units; i++) {
		uint8_t *p = code + off[i];

		p[0] = 0x90;
		if (kind[i] == 1 || kind[i] == 2) {
			p[1] = kind[i] == 1 ? (rnd(2) ? 0x74 : 0x75) : 0xeb;
			p[2] = (uint8_t)(int8_t)((int)off[tgt[i]] - (int)(off[i] + 3));
		} else if (kind[i] == 3) {
			p[1] = 0xc3;
		}
	}
	return len;
}

/* A random activation (edges 50/50); false if it did not return within MAXT blocks. */
static bool gen_trace(const struct cfg *g, struct trace *t)
{
	uint32_t b = cfg_entry_block(g);

	for (t->n = 0; t->n < MAXT;) {
		const struct cfg_block *blk = cfg_block_get(g, b);
		uint32_t d;

		t->b[t->n++] = b;
		if (!blk->nedges)
			return true;
		d = cfg_edge_get(g, blk->first_edge + rnd(blk->nedges))->dst;
		if (d == CFG_EXIT)
			return true;
		b = d;
	}
	return false;
}

#define NT 40

/* Graph x of random CFG g walked four ways: every own jcc, the header (an arrival if it has no
 * jcc) and the entry; the same without the entry; the one-way branches assumed (not the
 * header's: a path without a hit would not be seen); arrivals on every own one-way block. */
static void variants(const struct cfg *g, const struct spp *ref, uint32_t x, uint8_t seen[][2],
		     const struct trace *t, size_t nt, unsigned *exact)
{
	uint8_t cover[64];
	struct spp_graph_info gi;
	uint32_t h;

	spp_graph_get(ref, x, &gi);
	h = x ? gi.header : CFG_NONE;
	memset(cover, HWSPP_HIT, sizeof(cover));
	if (h != CFG_NONE && cfg_block_get(g, h)->term != CFG_TERM_COND)
		cover[h] = HWSPP_ARRIVE;
	exact[0] += check_graph(g, ref, x, cover, true, t, nt, true);
	exact[3] += check_graph(g, ref, x, cover, false, t, nt, true);
	for (uint32_t b = 0; b < cfg_nblocks(g); b++)
		if (cfg_block_get(g, b)->term == CFG_TERM_COND && b != h &&
		    (!seen[b][0] || !seen[b][1]))
			cover[b] = seen[b][1] ? HWSPP_TAKEN : seen[b][0] ? HWSPP_FALL : HWSPP_NEVER;
	exact[1] += check_graph(g, ref, x, cover, true, t, nt, true);
	memset(cover, HWSPP_HIT, sizeof(cover));
	for (uint32_t b = 0; b < cfg_nblocks(g); b++)
		if (cfg_block_get(g, b)->term != CFG_TERM_COND)
			cover[b] = HWSPP_ARRIVE;
	exact[2] += check_graph(g, ref, x, cover, true, t, nt, true);
}

static void test_random(void **state)
{
	static struct trace t[NT];
	unsigned cfgs = 0, graphs = 0, exact[4] = {0};

	(void)state;
	for (unsigned seed = 0; seed < 400; seed++) {
		uint8_t code[160], seen[64][2];
		size_t len = gen_code(code, 4 + rnd(12)), nt = 0;
		struct cfg *g = NULL;
		struct cfg_stats st;
		struct spp *ref;

		if (cfg_build(code, len, 0x1000, 0x1000, NULL, &g) < 0)
			continue;
		cfg_get_stats(g, &st);
		if (!st.loops || st.irreducible_loops || cfg_nblocks(g) > 64) {
			cfg_free(g);
			continue;
		}
		for (unsigned k = 0; k < 4 * NT && nt < NT; k++)
			nt += gen_trace(g, &t[nt]);
		if (nt < NT / 2) {
			cfg_free(g);
			continue;
		}
		cfgs++;
		assert_int_equal(spp_new(g, NULL, &ref), 0);
		memset(seen, 0, sizeof(seen));
		for (size_t i = 0; i < nt; i++) {
			feed(ref, &t[i]);
			for (size_t j = 0; j < t[i].n; j++) {
				uint32_t b = t[i].b[j],
					 nx = j + 1 < t[i].n ? t[i].b[j + 1] : CFG_EXIT;
				int e = cfg_edge_find(g, b, nx);

				if (cfg_block_get(g, b)->term == CFG_TERM_COND && e >= 0)
					seen[b][cfg_edge_get(g, (uint32_t)e)->kind ==
						CFG_EDGE_TAKEN] = 1;
			}
		}
		for (uint32_t x = 0; x < spp_ngraphs(ref); x++) {
			graphs++;
			variants(g, ref, x, seen, t, nt, exact);
		}
		spp_free(ref);
		cfg_free(g);
	}
	print_message("random: %u cfgs, %u graphs, exact %u / %u / %u / %u\n", cfgs, graphs,
		      exact[0], exact[1], exact[2], exact[3]);
	assert_true(cfgs >= 50);
	/* most graphs are followed exactly (the others: random CFGs leave nested loops by several
	 * levels at once, which no breakpoint of one graph tells apart), more with every block
	 * watched, fewer without the entry */
	assert_true(exact[0] * 10 >= graphs * 8 && exact[3] <= exact[0]);
	assert_true(exact[2] >= exact[0]);
}

static void test_assume(void **state)
{
	const uint32_t blocks[] = {3, 5, 7};
	const uint64_t taken[] = {4, 0, 0}, not_taken[] = {2, 9, 0};
	uint8_t assume[8] = {0};
	uint32_t keep[4];

	(void)state;
	assert_int_equal(hwspp_assume(blocks, 3, taken, not_taken, 4, assume, keep), 1);
	assert_int_equal(keep[0], 3);
	assert_int_equal(assume[5], HWSPP_FALL);
	assert_int_equal(assume[7], HWSPP_NEVER);
	assert_int_equal(hwspp_assume(blocks, 3, taken, not_taken, 0, assume, keep), -E2BIG);
	assert_int_equal(hwspp_assume(NULL, 3, taken, not_taken, 4, assume, keep), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fig1),
	    cmocka_unit_test(test_fig1_by_hand),
	    cmocka_unit_test(test_random),
	    cmocka_unit_test(test_assume),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
