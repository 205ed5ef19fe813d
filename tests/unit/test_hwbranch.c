// SPDX-License-Identifier: GPL-2.0-only
/* test_hwbranch.c: unit tests for hwbranch.c (links daemon/lib/hwbranch.c and cfg.c).
 *
 * Condition codes are checked against every EFLAGS combination of the five bits they read, each
 * against the definition in the Intel SDM written out independently here; jcc decoding against
 * hand-assembled bytes; plans against small hand-assembled functions with one loop, nested loops
 * and a loop with more branches than the debug registers hold; estimates at their edges.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/hwbranch.h"

static bool sdm(unsigned cc, bool cf, bool pf, bool zf, bool sf, bool of)
{
	switch (cc) {
	case 0x0:
		return of;
	case 0x1:
		return !of;
	case 0x2:
		return cf;
	case 0x3:
		return !cf;
	case 0x4:
		return zf;
	case 0x5:
		return !zf;
	case 0x6:
		return cf || zf;
	case 0x7:
		return !cf && !zf;
	case 0x8:
		return sf;
	case 0x9:
		return !sf;
	case 0xa:
		return pf;
	case 0xb:
		return !pf;
	case 0xc:
		return sf != of;
	case 0xd:
		return sf == of;
	case 0xe:
		return zf || sf != of;
	default:
		return !zf && sf == of;
	}
}

static void test_taken_all_flags(void **state)
{
	(void)state;
	for (unsigned cc = 0; cc < 16; cc++) {
		for (unsigned m = 0; m < 32; m++) {
			bool cf = m & 1, pf = m & 2, zf = m & 4, sf = m & 8, of = m & 16;
			uint64_t fl = 0x202; /* IF and the reserved bit 1, as in user space */

			fl |= (cf ? HWBRANCH_CF : 0) | (pf ? HWBRANCH_PF : 0) |
			      (zf ? HWBRANCH_ZF : 0) | (sf ? HWBRANCH_SF : 0) |
			      (of ? HWBRANCH_OF : 0);
			assert_int_equal(hwbranch_taken(cc, fl), sdm(cc, cf, pf, zf, sf, of));
		}
	}
	assert_string_equal(hwbranch_cc_name(5), "jne");
	assert_string_equal(hwbranch_cc_name(0xf), "jg");
}

static void test_cc_decode(void **state)
{
	const uint8_t je8[] = {0x74, 0x02}, jne32[] = {0x0f, 0x85, 0, 0, 0, 0};
	const uint8_t hinted[] = {0x3e, 0x7c, 0x10}, jrcxz[] = {0xe3, 0x02}, loop[] = {0xe2, 0xfe};
	const uint8_t jmp[] = {0xeb, 0x00}, trunc[] = {0x0f};

	(void)state;
	assert_int_equal(hwbranch_cc(je8, sizeof(je8)), 4);
	assert_int_equal(hwbranch_cc(jne32, sizeof(jne32)), 5);
	assert_int_equal(hwbranch_cc(hinted, sizeof(hinted)), 0xc);
	assert_int_equal(hwbranch_cc(jrcxz, sizeof(jrcxz)), -EINVAL);
	assert_int_equal(hwbranch_cc(loop, sizeof(loop)), -EINVAL);
	assert_int_equal(hwbranch_cc(jmp, sizeof(jmp)), -EINVAL);
	assert_int_equal(hwbranch_cc(trunc, sizeof(trunc)), -ENODATA);
	assert_int_equal(hwbranch_cc(NULL, 2), -EINVAL);
}

static struct cfg *build(const uint8_t *code, size_t len)
{
	struct cfg *g = NULL;

	assert_int_equal(cfg_build(code, len, 0x1000, 0x1000, NULL, &g), 0);
	return g;
}

/* xor eax,eax; L: inc eax; test al,1; je +2; inc ecx; cmp eax,10; jne L; ret */
static const uint8_t one_loop[] = {0x31, 0xc0, 0xff, 0xc0, 0xa8, 0x01, 0x74, 0x02,
				   0xff, 0xc1, 0x83, 0xf8, 0x0a, 0x75, 0xf3, 0xc3};

static void test_plan_one_loop(void **state)
{
	struct cfg *g = build(one_loop, sizeof(one_loop));
	static struct hwbranch_plan p;
	int h;

	(void)state;
	assert_int_equal(hwbranch_plan(g, one_loop, sizeof(one_loop), 0x1000, &p), 0);
	h = cfg_block_find(g, 0x1002);
	assert_true(h >= 0);
	assert_int_equal(p.nbr, 2);
	assert_int_equal(p.ngroups, 1);
	assert_int_equal(p.groups[0].loop, (uint32_t)h);
	assert_int_equal(p.groups[0].n, 2);
	assert_int_equal(p.br[0].addr, 0x1006);
	assert_int_equal(p.br[0].cc, 4);
	assert_int_equal(p.br[1].addr, 0x100d);
	assert_int_equal(p.br[1].cc, 5);
	assert_true(hwbranch_in_loop(g, (uint32_t)cfg_block_find(g, 0x100a), (uint32_t)h));
	assert_false(hwbranch_in_loop(g, (uint32_t)cfg_block_find(g, 0x1000), (uint32_t)h));
	cfg_free(g);
}

/* Outer: O: xor ecx,ecx; I: inc ecx; test cl,1; je +0 (2 bytes); cmp ecx,5; jne I;
 * dec edx; jnz O; ret. The inner loop (2 branches) fits, the outer one (3) too: 2 groups,
 * innermost first. */
static const uint8_t nested[] = {0x31, 0xc9, 0xff, 0xc1, 0xf6, 0xc1, 0x01, 0x74, 0x00, 0x83,
				 0xf9, 0x05, 0x75, 0xf4, 0xff, 0xca, 0x75, 0xee, 0xc3};

static void test_plan_nested(void **state)
{
	struct cfg *g = build(nested, sizeof(nested));
	static struct hwbranch_plan p;

	(void)state;
	assert_int_equal(hwbranch_plan(g, nested, sizeof(nested), 0x1000, &p), 0);
	assert_int_equal(p.nbr, 3);
	assert_int_equal(p.ngroups, 2);
	assert_int_equal(p.groups[0].loop, (uint32_t)cfg_block_find(g, 0x1002));
	assert_int_equal(p.groups[0].n, 2);
	assert_int_equal(p.groups[1].loop, (uint32_t)cfg_block_find(g, 0x1000));
	assert_int_equal(p.groups[1].n, 3);
	cfg_free(g);
}

/* A loop with 5 conditional branches: no group holds it; counts in groups of 4 and 1. */
static const uint8_t wide[] = {0x31, 0xc0,	       /* xor eax,eax */
			       0xff, 0xc0,	       /* L: inc eax */
			       0xa8, 0x01, 0x74, 0x00, /* test al,1; je +0 */
			       0xa8, 0x02, 0x74, 0x00, /* test al,2; je +0 */
			       0xa8, 0x04, 0x74, 0x00, /* test al,4; je +0 */
			       0xa8, 0x08, 0x74, 0x00, /* test al,8; je +0 */
			       0x83, 0xf8, 0x10,       /* cmp eax,16 */
			       0x75, 0xe9,	       /* jne L */
			       0xc3};

static void test_plan_too_wide(void **state)
{
	struct cfg *g = build(wide, sizeof(wide));
	static struct hwbranch_plan p;

	(void)state;
	assert_int_equal(hwbranch_plan(g, wide, sizeof(wide), 0x1000, &p), 0);
	assert_int_equal(p.nbr, 5);
	assert_int_equal(p.ngroups, 2);
	assert_int_equal(p.groups[0].loop, CFG_NONE);
	assert_int_equal(p.groups[0].n, 4);
	assert_int_equal(p.groups[1].n, 1);
	cfg_free(g);
}

static void test_plan_no_loop(void **state)
{
	const uint8_t code[] = {0x85, 0xc0, 0x74, 0x01, 0x90, 0xc3}; /* test; je; nop; ret */
	struct cfg *g = build(code, sizeof(code));
	static struct hwbranch_plan p;

	(void)state;
	assert_int_equal(hwbranch_plan(g, code, sizeof(code), 0x1000, &p), -ENOENT);
	assert_int_equal(p.not_looped, 1);
	assert_int_equal(hwbranch_plan(NULL, code, sizeof(code), 0x1000, &p), -EINVAL);
	cfg_free(g);
}

static void test_estimate_rotate(void **state)
{
	(void)state;
	assert_int_equal(hwbranch_estimate(100, 0, 1000), 0);
	assert_int_equal(hwbranch_estimate(100, 1000, 1000), 100);
	assert_int_equal(hwbranch_estimate(100, 2000, 1000), 100);
	assert_int_equal(hwbranch_estimate(100, 250, 1000), 400);
	assert_int_equal(hwbranch_estimate(1, 3, 10), 3);
	assert_int_equal(hwbranch_rotate(0, 5), 0);
	assert_int_equal(hwbranch_rotate(3, 5), 2);
}

struct rec {
	int enter, path, leave, abort;
	uint64_t ids[64];
	size_t nids;
	size_t last_n;
	uint32_t last_edge_dst;
	const struct cfg *g;
};

static void rec_emit(void *ud, enum hwbranch_op op, const struct cfg_step *steps, size_t n)
{
	struct rec *r = ud;
	uint64_t id;

	switch (op) {
	case HWBRANCH_ENTER:
		r->enter++;
		break;
	case HWBRANCH_PATH:
		r->path++;
		assert_int_equal(cfg_path_encode(r->g, steps, n, &id), 0);
		r->ids[r->nids++] = id;
		break;
	case HWBRANCH_LEAVE:
		r->leave++;
		r->last_n = n;
		r->last_edge_dst = cfg_edge_get(r->g, steps[n - 1].edge)->dst;
		break;
	default:
		r->abort++;
	}
}

/* one_loop run for i = 1..10: je taken when i is even, jne taken while i != 10. */
static void test_walk_one_loop(void **state)
{
	struct cfg *g = build(one_loop, sizeof(one_loop));
	static struct hwbranch_walk w;
	struct rec r = {.g = g};
	uint32_t h = (uint32_t)cfg_block_find(g, 0x1002), b3 = (uint32_t)cfg_block_find(g, 0x100a);
	struct cfg_step st[8];

	(void)state;
	for (int i = 1; i <= 10; i++) {
		assert_int_equal(hwbranch_walk_hit(g, h, &w, h, i % 2 == 0, rec_emit, &r), 1);
		assert_int_equal(hwbranch_walk_hit(g, h, &w, b3, i != 10, rec_emit, &r), 1);
	}
	assert_int_equal(r.enter, 1);
	assert_int_equal(r.path, 9);
	assert_int_equal(r.leave, 1);
	assert_int_equal(r.abort, 0);
	assert_false(w.active);
	/* The last iteration: header, jne's fallthrough out of the loop (to the ret block). */
	assert_int_equal(r.last_n, 2);
	assert_int_equal(r.last_edge_dst, (uint32_t)cfg_block_find(g, 0x100f));
	/* Odd iterations went through the inc ecx block, even ones did not. */
	assert_int_equal(cfg_path_decode(g, r.ids[0], st, 8), 3);
	assert_int_equal(cfg_path_decode(g, r.ids[1], st, 8), 2);
	assert_int_equal(st[0].block, h);
	assert_int_equal(st[1].edge, CFG_NONE);
	/* A lost hit: the activation is given up, the next hit at the header begins another. */
	assert_int_equal(hwbranch_walk_hit(g, h, &w, b3, true, rec_emit, &r), 0);
	assert_int_equal(hwbranch_walk_hit(g, h, &w, h, false, rec_emit, &r), 1);
	assert_int_equal(hwbranch_walk_hit(g, h, &w, h, false, rec_emit, &r), 1);
	assert_int_equal(r.abort, 1);
	assert_int_equal(r.enter, 3);
	hwbranch_walk_reset(&w, rec_emit, &r);
	assert_int_equal(r.abort, 2);
	assert_int_equal(
	    hwbranch_walk_hit(g, h, &w, (uint32_t)cfg_block_find(g, 0x1000), true, rec_emit, &r),
	    -EINVAL);
	cfg_free(g);
}

/* wide (5 branches, one loop): with the second je seen one way only, the other four fit; the
 * walk crosses the assumed one without a hit. */
static void test_assume(void **state)
{
	struct cfg *g = build(wide, sizeof(wide));
	static struct hwbranch_plan p;
	static struct hwbranch_walk w;
	uint64_t taken[5] = {5, 0, 5, 5, 5}, not_taken[5] = {5, 9, 5, 5, 5};
	uint8_t assume[16];
	uint32_t m[HWBRANCH_SLOTS], h;
	struct rec r = {.g = g};

	(void)state;
	assert_true(cfg_nblocks(g) <= 16);
	assert_int_equal(hwbranch_plan(g, wide, sizeof(wide), 0x1000, &p), 0);
	h = p.br[0].loop;
	assert_int_equal(hwbranch_assume_plan(g, &p, h, taken, not_taken, assume, m), 4);
	assert_int_equal(m[0], 0);
	assert_int_equal(m[1], 2);
	assert_int_equal(assume[p.br[1].block], HWBRANCH_FALL);
	assert_int_equal(assume[p.br[0].block], HWBRANCH_COVERED);
	/* Two iterations, then out: hits at the four covered branches only. */
	for (int it = 0; it < 3; it++) {
		assert_int_equal(
		    hwbranch_walk_hit_assume(g, h, assume, &w, p.br[0].block, true, rec_emit, &r),
		    1);
		assert_int_equal(
		    hwbranch_walk_hit_assume(g, h, assume, &w, p.br[2].block, true, rec_emit, &r),
		    1);
		assert_int_equal(
		    hwbranch_walk_hit_assume(g, h, assume, &w, p.br[3].block, true, rec_emit, &r),
		    1);
		assert_int_equal(
		    hwbranch_walk_hit_assume(g, h, assume, &w, p.br[4].block, it < 2, rec_emit, &r),
		    1);
	}
	assert_int_equal(r.enter, 1);
	assert_int_equal(r.path, 2);
	assert_int_equal(r.leave, 1);
	assert_int_equal(r.abort, 0);
	/* The assumed block is on every path: header, b1 (assumed), ..., the latch. */
	{
		struct cfg_step st[16];

		assert_int_equal(cfg_path_decode(g, r.ids[0], st, 16), 5);
		assert_int_equal(st[1].block, p.br[1].block);
	}
	/* More than four both ways, none, or a hit at an assumed branch. */
	taken[1] = 1;
	assert_int_equal(hwbranch_assume_plan(g, &p, h, taken, not_taken, assume, m), -E2BIG);
	memset(taken, 0, sizeof(taken));
	assert_int_equal(hwbranch_assume_plan(g, &p, h, taken, not_taken, assume, m), -ENOENT);
	cfg_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_taken_all_flags), cmocka_unit_test(test_cc_decode),
	    cmocka_unit_test(test_plan_one_loop),   cmocka_unit_test(test_plan_nested),
	    cmocka_unit_test(test_plan_too_wide),   cmocka_unit_test(test_plan_no_loop),
	    cmocka_unit_test(test_estimate_rotate), cmocka_unit_test(test_walk_one_loop),
	    cmocka_unit_test(test_assume),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
