// SPDX-License-Identifier: GPL-2.0-only
/* test_spp.c: unit tests of structural path profiling (daemon/lib/spp.c, with cfg.c).
 *
 * The CFG of Fig. 1 of the SPP paper, hand-assembled: blocks 1..7 (indices 0..6 here), the
 * outer loop headed by 2, the inner one by 3. Checked by hand: the structure graphs, the local
 * paths a block trace projects to (the names of the paper's Table 2), the controller (shares,
 * the order outline -> outer -> inner, cold loops skipped), the coefficients and global counts of
 * Table 2 (1.96 and 3.38), the overlap percentages of Table 1 (BPP, 69.7%) and Table 2 (SPP,
 * 99.7%), and the whole-function hot paths of §3.6 (1-2-3-6-7 and 2-3-6-2).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/cfg.h"
#include "kprof/spp.h"

#define E SPP_M_ENTRY
#define B SPP_M_BACK
#define X SPP_M_EXIT
#define L1 (SPP_LOOP | 1) /* the loop node of loop 2 (graph 1) */
#define L2 (SPP_LOOP | 2) /* the loop node of loop 3 (graph 2) */

/* 1: nop; 2: nop; 3: jz 6; 4: jnz 3; 5: ret; 6: jnz 2; 7: ret. */
static const uint8_t fig1[] = {0x90, 0x90, 0x74, 0x03, 0x75, 0xfc, 0xc3, 0x75, 0xf8, 0xc3};

static struct cfg *fig1_cfg(void)
{
	struct cfg *g = NULL;

	assert_int_equal(cfg_build(fig1, sizeof(fig1), 0x1000, 0x1000, NULL, &g), 0);
	assert_int_equal(cfg_nblocks(g), 7);
	return g;
}

static void feed(struct spp *s, const uint32_t *blocks, size_t n)
{
	struct spp_act a = {0};

	assert_int_equal(spp_enter(s, &a), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(spp_block(s, &a, blocks[i]), 0);
	spp_exit(s, &a);
	spp_act_release(&a);
}

static uint64_t local(const struct spp *s, uint32_t g, const uint32_t *nodes, size_t n);

struct find {
	uint32_t g;
	const uint32_t *nodes;
	size_t n;
	uint64_t count;
	double global;
};

static int find_cb(uint32_t g, const uint32_t *nodes, size_t n, uint64_t c, double gl, void *u)
{
	struct find *f = u;

	if (g == f->g && n == f->n && !memcmp(nodes, f->nodes, n * sizeof(*nodes))) {
		f->count = c;
		f->global = gl;
	}
	return 0;
}

static uint64_t local(const struct spp *s, uint32_t g, const uint32_t *nodes, size_t n)
{
	struct find f = {g, nodes, n, 0, 0};

	spp_foreach_path(s, find_cb, &f);
	return f.count;
}

static double global(const struct spp *s, uint32_t g, const uint32_t *nodes, size_t n)
{
	struct find f = {g, nodes, n, 0, 0};

	spp_foreach_path(s, find_cb, &f);
	return f.global;
}

#define LOCAL(s, g, ...)                                                                           \
	local(s, g, (const uint32_t[]){__VA_ARGS__}, sizeof((uint32_t[]){__VA_ARGS__}) / 4)
#define GLOBAL(s, g, ...)                                                                          \
	global(s, g, (const uint32_t[]){__VA_ARGS__}, sizeof((uint32_t[]){__VA_ARGS__}) / 4)
#define ADD(s, g, c, ...)                                                                          \
	spp_add(s, g, (const uint32_t[]){__VA_ARGS__}, sizeof((uint32_t[]){__VA_ARGS__}) / 4, c)

/* 1 2 3 6 7, and 1 2 3 4 3 4 3 6 2 3 6 7. */
static const uint32_t straight[] = {0, 1, 2, 5, 6};
static const uint32_t loopy[] = {0, 1, 2, 3, 2, 3, 2, 5, 1, 2, 5, 6};

static void test_graphs_and_paths(void **state)
{
	struct cfg *g = fig1_cfg();
	struct spp *s;
	struct spp_graph_info gi;

	(void)state;
	assert_int_equal(spp_new(g, NULL, &s), 0);
	assert_int_equal(spp_ngraphs(s), 3);
	assert_int_equal(spp_graph_of(s, 1), 1);
	assert_int_equal(spp_graph_of(s, 2), 2);
	assert_int_equal(spp_graph_of(s, 0), -ENOENT);
	assert_int_equal(spp_graph_get(s, 2, &gi), 0);
	assert_int_equal(gi.parent, 1);
	assert_int_equal(gi.level, 2);
	feed(s, straight, 5);
	feed(s, loopy, 12);
	/* O-1 twice; L2-2 (E2-2-[3]-6-X2) twice... */
	assert_int_equal(LOCAL(s, 0, E, 0, L1, 6, X), 2);
	assert_int_equal(LOCAL(s, 1, E, 1, L2, 5, X), 1);
	assert_int_equal(LOCAL(s, 1, E, 1, L2, 5, B), 1); /* L2-3 */
	assert_int_equal(LOCAL(s, 1, B, 1, L2, 5, X), 1); /* L2-5 */
	assert_int_equal(LOCAL(s, 2, E, 2, X), 2);	  /* L3-3 */
	assert_int_equal(LOCAL(s, 2, E, 2, 3, B), 1);	  /* L3-2 */
	assert_int_equal(LOCAL(s, 2, B, 2, 3, B), 1);	  /* L3-5 */
	assert_int_equal(LOCAL(s, 2, B, 2, X), 1);	  /* L3-6 */
	/* A complete profile: every coefficient is 1. */
	assert_int_equal(spp_graph_get(s, 1, &gi), 0);
	assert_true(gi.coefficient == 1.0);
	assert_int_equal(spp_graph_get(s, 2, &gi), 0);
	assert_true(gi.coefficient == 1.0);
	assert_int_equal(gi.entries, 3);
	assert_int_equal(gi.loop_count, 3);
	spp_free(s);
	cfg_free(g);
}

static void test_controller(void **state)
{
	struct cfg *g = fig1_cfg();
	struct spp *s;
	struct spp_graph_info gi;
	struct spp_stats st;

	(void)state;
	/* Budget 6: 2 local paths per graph, outline first, then loop 2, then loop 3. */
	assert_int_equal(spp_new(g, &(struct spp_opts){.budget = 6}, &s), 0);
	feed(s, straight, 5);
	spp_graph_get(s, 1, &gi);
	assert_int_equal(gi.state, SPP_IDLE);
	assert_int_equal(gi.counted, 0);
	feed(s, straight, 5);
	spp_graph_get(s, 0, &gi);
	assert_int_equal(gi.state, SPP_FINISHED);
	spp_graph_get(s, 1, &gi);
	assert_int_equal(gi.state, SPP_ACTIVE);
	feed(s, straight, 5);
	feed(s, straight, 5);
	spp_graph_get(s, 1, &gi);
	assert_int_equal(gi.state, SPP_FINISHED);
	spp_graph_get(s, 2, &gi);
	assert_int_equal(gi.state, SPP_ACTIVE);
	feed(s, loopy, 12);
	spp_graph_get(s, 2, &gi);
	assert_int_equal(gi.state, SPP_FINISHED);
	assert_int_equal(gi.counted, 2);
	spp_get_stats(s, &st);
	assert_true(st.complete);
	assert_int_equal(st.counted, 6);
	assert_int_equal(LOCAL(s, 0, E, 0, L1, 6, X), 2);
	spp_free(s);

	/* A loop node on no counted path: its graph and the one inside it are skipped. */
	assert_int_equal(spp_new(g, &(struct spp_opts){.budget = 3}, &s), 0);
	assert_int_equal(ADD(s, 0, 1, E, 0, X), 0);
	spp_graph_get(s, 1, &gi);
	assert_int_equal(gi.state, SPP_COLD);
	spp_graph_get(s, 2, &gi);
	assert_int_equal(gi.state, SPP_COLD);
	spp_get_stats(s, &st);
	assert_true(st.complete);
	/* Not a path of graph 0: refused. */
	assert_int_equal(ADD(s, 0, 1, E, 2, X), -EINVAL);
	assert_int_equal(ADD(s, 1, 1, 1, X), -EINVAL);
	spp_free(s);

	/* Timeout: the outline graph waits 2 activations for its share of 30. */
	assert_int_equal(spp_new(g, &(struct spp_opts){.budget = 90, .timeout = 2}, &s), 0);
	feed(s, straight, 5);
	feed(s, straight, 5);
	feed(s, straight, 5);
	spp_graph_get(s, 0, &gi);
	assert_int_equal(gi.state, SPP_TIMEOUT);
	spp_graph_get(s, 1, &gi);
	assert_int_equal(gi.state, SPP_ACTIVE);
	spp_free(s);

	/* spp_finish: the caller's timeout (a time limit), the same way. */
	assert_int_equal(spp_new(g, &(struct spp_opts){.budget = 90}, &s), 0);
	feed(s, straight, 5);
	assert_int_equal(spp_finish(s, 1), 0); /* idle: nothing */
	assert_int_equal(spp_finish(s, 0), 1);
	assert_int_equal(spp_finish(s, 0), 0);
	assert_int_equal(spp_finish(s, 9), -EINVAL);
	spp_graph_get(s, 0, &gi);
	assert_int_equal(gi.state, SPP_TIMEOUT);
	spp_graph_get(s, 1, &gi);
	assert_int_equal(gi.state, SPP_ACTIVE);
	spp_free(s);

	/* An outer graph that ends having counted nothing (not profiled: too many branches for
	 * the debug registers) is no evidence that its loops are cold: they start, in turn. */
	assert_int_equal(spp_new(g, &(struct spp_opts){.budget = 90}, &s), 0);
	assert_int_equal(spp_finish(s, 0), 1);
	spp_graph_get(s, 1, &gi);
	assert_int_equal(gi.state, SPP_ACTIVE);
	spp_graph_get(s, 2, &gi);
	assert_int_equal(gi.state, SPP_IDLE);
	assert_int_equal(spp_finish(s, 1), 1);
	spp_graph_get(s, 2, &gi);
	assert_int_equal(gi.state, SPP_ACTIVE);
	spp_free(s);
	cfg_free(g);
}

/* The local profiles of Table 2 (300 profiles) and the offline ones. */
static void table2(struct spp *s, bool offline)
{
	assert_int_equal(ADD(s, 0, offline ? 10000 : 100, E, 0, L1, 6, X), 0);
	assert_int_equal(ADD(s, 1, offline ? 9800 : 50, E, 1, L2, 5, X), 0);
	assert_int_equal(ADD(s, 1, offline ? 200 : 1, E, 1, L2, 5, B), 0);
	assert_int_equal(ADD(s, 1, offline ? 200 : 1, B, 1, L2, 5, X), 0);
	assert_int_equal(ADD(s, 1, offline ? 9600 : 48, B, 1, L2, 5, B), 0);
	assert_int_equal(ADD(s, 2, offline ? 683 : 2, E, 2, 3, B), 0);
	assert_int_equal(ADD(s, 2, offline ? 19117 : 56, E, 2, X), 0);
	assert_int_equal(ADD(s, 2, offline ? 13660 : 40, B, 2, 3, B), 0);
	assert_int_equal(ADD(s, 2, offline ? 683 : 2, B, 2, X), 0);
}

static void test_paper_tables(void **state)
{
	static const double bpp_online[] = {0, 5, 124, 0, 0, 167, 4, 0, 0, 0, 0, 0};
	static const double bpp_offline[] = {0,	  345, 9462, 193, 0,   13660,
					     345, 338, 0,    338, 193, 9269};
	struct cfg *g = fig1_cfg();
	struct spp *on, *off;
	struct spp_graph_info gi;
	uint32_t out[16];
	double ov;
	int n;

	(void)state;
	ov = spp_overlap_vec(bpp_online, bpp_offline, 12);
	assert_true(ov > 69.65 && ov < 69.75); /* "69.7%" */
	assert_int_equal(spp_new(g, NULL, &on), 0);
	assert_int_equal(spp_new(g, NULL, &off), 0);
	table2(on, false);
	table2(off, true);
	spp_graph_get(on, 1, &gi);
	assert_true(gi.coefficient > 1.9607 && gi.coefficient < 1.9609); /* 100/51 */
	spp_graph_get(on, 2, &gi);
	assert_true(gi.coefficient > 3.3806 && gi.coefficient < 3.3808); /* 1.96 x 100/58 */
	assert_true(GLOBAL(on, 1, E, 1, L2, 5, X) > 98.03 && GLOBAL(on, 1, E, 1, L2, 5, X) < 98.04);
	assert_true(GLOBAL(on, 2, E, 2, X) > 189.3 && GLOBAL(on, 2, E, 2, X) < 189.35);
	assert_true(GLOBAL(on, 1, B, 1, L2, 5, B) > 94.1 && GLOBAL(on, 1, B, 1, L2, 5, B) < 94.15);
	spp_graph_get(off, 2, &gi);
	assert_true(gi.coefficient == 1.0);
	ov = spp_overlap(on, off);
	assert_true(ov > 99.6 && ov < 99.8); /* "99.7%" */
	/* §3.6: O-1 expands to 1-2-3-6-7, L2-6 to 2-3-6 (then back to 2). */
	n = spp_expand(on, 0, (const uint32_t[]){E, 0, L1, 6, X}, 5, out, 16);
	assert_int_equal(n, 5);
	assert_memory_equal(out, ((const uint32_t[]){0, 1, 2, 5, 6}), 5 * sizeof(uint32_t));
	n = spp_expand(on, 1, (const uint32_t[]){B, 1, L2, 5, B}, 5, out, 16);
	assert_int_equal(n, 3);
	assert_memory_equal(out, ((const uint32_t[]){1, 2, 5}), 3 * sizeof(uint32_t));
	assert_int_equal(spp_expand(on, 0, (const uint32_t[]){E, 0, L1, 6, X}, 5, out, 2), -ENOSPC);
	spp_free(on);
	spp_free(off);
	cfg_free(g);
}

static void test_flat(void **state)
{
	struct spp_flat *on, *off;

	(void)state;
	/* Table 1 of the paper: the first 300 of the run's path ids against all of them. */
	assert_int_equal(spp_flat_new(300, 0, &on), 0);
	assert_int_equal(spp_flat_new(0, 0, &off), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(spp_flat_add(on, 2), 0);
	for (int i = 0; i < 124; i++)
		spp_flat_add(on, 3);
	for (int i = 0; i < 167; i++)
		spp_flat_add(on, 6);
	for (int i = 0; i < 4; i++)
		spp_flat_add(on, 7);
	assert_int_equal(spp_flat_add(on, 12), 0); /* past the budget: not counted */
	assert_int_equal(spp_flat_counted(on), 300);
	static const unsigned offline[] = {0,	345, 9462, 193, 0,   13660,
					   345, 338, 0,	   338, 193, 9269};
	for (unsigned p = 0; p < 12; p++)
		for (unsigned i = 0; i < offline[p]; i++)
			spp_flat_add(off, p + 1);
	double ov = spp_flat_overlap(on, off);
	assert_true(ov > 69.65 && ov < 69.75);
	assert_true(spp_flat_overlap(off, off) > 99.999);
	spp_flat_free(on);
	spp_flat_free(off);
	/* max_ids: a new id beyond it is refused. */
	assert_int_equal(spp_flat_new(0, 2, &on), 0);
	assert_int_equal(spp_flat_add(on, 1), 0);
	assert_int_equal(spp_flat_add(on, 2), 0);
	assert_int_equal(spp_flat_add(on, 3), -ENOSPC);
	assert_int_equal(spp_flat_add(on, 1), 0);
	spp_flat_free(on);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_graphs_and_paths),
	    cmocka_unit_test(test_controller),
	    cmocka_unit_test(test_paper_tables),
	    cmocka_unit_test(test_flat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
