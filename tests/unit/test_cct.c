// SPDX-License-Identifier: GPL-2.0-only
/* test_cct.c: unit tests for the exact CCT (links tests/oracles/cct.c alone).
 *
 * The CCT is the oracle of the HCCT tests, so it is checked by hand: the CCT of TV-H1 node by
 * node, sampled stacks (leaf-only counts), cursors, creation order, caps and bad input.
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

#include "../oracles/cct.h"

enum { MAIN, INIT, LEAF, LOG, WORK, REPORT };

static struct cct *new_cct(uint32_t max_nodes, uint32_t max_depth)
{
	struct cct_params p = {.max_nodes = max_nodes, .max_depth = max_depth};
	struct cct *c = NULL;

	assert_int_equal(cct_new(&p, &c), 0);
	assert_non_null(c);
	return c;
}

static uint64_t count_of(const struct cct *c, const uint32_t *ids, size_t n)
{
	struct cct_node_info ni;
	int x = cct_lookup(c, ids, NULL, n);

	if (x < 0)
		return UINT64_MAX;
	assert_int_equal(cct_node(c, (uint32_t)x, &ni), 0);
	return ni.count;
}

static struct cct_stats stats(const struct cct *c)
{
	struct cct_stats st;

	cct_get_stats(c, &st);
	return st;
}

static void enter(struct cct *c, uint32_t id)
{
	assert_int_equal(cct_enter(c, id, 0), 0);
}

static void leave(struct cct *c, int n)
{
	while (n--)
		assert_int_equal(cct_exit(c), 0);
}

static void test_tv_h1(void **state)
{
	struct cct *c = new_cct(0, 0);
	struct cct_node_info ni;
	uint64_t sum = 0;

	(void)state;
	enter(c, MAIN);
	enter(c, INIT), enter(c, LEAF), leave(c, 1), enter(c, LOG), leave(c, 2);
	for (int i = 0; i < 3; i++)
		enter(c, WORK), enter(c, LEAF), leave(c, 1), enter(c, LEAF), leave(c, 2);
	enter(c, INIT), enter(c, LOG), leave(c, 2);
	enter(c, WORK), enter(c, LEAF), leave(c, 1), enter(c, LEAF), leave(c, 2);
	enter(c, REPORT), enter(c, LOG), leave(c, 3);
	assert_int_equal(cct_exit(c), -EINVAL);

	{
		uint32_t p[3] = {MAIN, INIT, LEAF};

		assert_int_equal(count_of(c, p, 1), 1);
		assert_int_equal(count_of(c, p, 2), 2);
		assert_int_equal(count_of(c, p, 3), 1);
		p[2] = LOG;
		assert_int_equal(count_of(c, p, 3), 2);
		p[1] = WORK;
		assert_int_equal(count_of(c, p, 2), 4);
		p[2] = LEAF;
		assert_int_equal(count_of(c, p, 3), 8);
		p[1] = REPORT;
		assert_int_equal(count_of(c, p, 2), 1);
		p[2] = LOG;
		assert_int_equal(count_of(c, p, 3), 1);
		p[2] = LEAF;
		assert_int_equal(count_of(c, p, 3), UINT64_MAX); /* never seen */
	}
	assert_int_equal(cct_nodes(c), 9);
	assert_int_equal(stats(c).n, 20);
	assert_int_equal(cct_lookup(c, NULL, NULL, 0), 0); /* the root */
	assert_int_equal(cct_node(c, 0, &ni), 0);
	assert_int_equal(ni.parent, CCT_NONE);
	assert_int_equal(ni.count, 0);
	/* creation order: parents first; the counts sum to N */
	for (uint32_t i = 1; i < cct_nodes(c); i++) {
		assert_int_equal(cct_node(c, i, &ni), 0);
		assert_true(ni.parent < i);
		assert_int_equal(cct_child(c, ni.parent, ni.id, ni.call_site), i);
		sum += ni.count;
	}
	assert_int_equal(sum, 20);
	assert_int_equal(cct_node(c, 9, &ni), -ENOENT);
	assert_int_equal(cct_node(c, UINT32_MAX, &ni), -ENOENT);
	assert_int_equal(cct_child(c, 0, LEAF, 0), -ENOENT);
	assert_int_equal(cct_child(c, 99, MAIN, 0), -ENOENT);
	cct_free(c);
	cct_free(NULL);
}

static void test_stacks(void **state)
{
	struct cct *c = new_cct(0, 0);
	uint32_t s[3] = {MAIN, INIT, LEAF};
	uint64_t sites[3] = {0, 7, 0};

	(void)state;
	assert_int_equal(cct_add_stack(c, s, 3, 5), 0);
	assert_int_equal(cct_add_stack(c, s, 2, 1), 0);
	assert_int_equal(cct_add_stack_sites(c, s, sites, 3, 2), 0);
	assert_int_equal(count_of(c, s, 1), 0); /* a frame, never a leaf */
	assert_int_equal(count_of(c, s, 2), 1);
	assert_int_equal(count_of(c, s, 3), 5);
	assert_int_equal(cct_lookup(c, s, sites, 2) > 0, 1); /* main/init@7 */
	assert_int_equal(cct_nodes(c), 6);
	assert_int_equal(stats(c).n, 8);
	cct_free(c);
}

static void test_cursors(void **state)
{
	struct cct *c = new_cct(0, 0);
	struct cct_cursor a = {0}, b = {0};
	uint32_t p[2] = {MAIN, INIT};

	(void)state;
	assert_int_equal(cct_cursor_enter(c, &a, MAIN, 0), 0);
	assert_int_equal(cct_cursor_enter(c, &b, MAIN, 0), 0);
	assert_int_equal(cct_cursor_enter(c, &a, INIT, 0), 0);
	assert_int_equal(cct_cursor_exit(c, &b), 0);
	assert_int_equal(cct_cursor_exit(c, &b), -EINVAL);
	assert_int_equal(cct_cursor_enter(c, &b, INIT, 0),
			 0); /* not under main: b is at the root */
	assert_int_equal(count_of(c, p, 1), 2);
	assert_int_equal(count_of(c, p, 2), 1);
	assert_int_equal(count_of(c, &p[1], 1), 1);
	/* align: no counts */
	assert_int_equal(cct_cursor_align(c, &b, p, NULL, 2), 0);
	assert_int_equal(cct_cursor_enter(c, &b, LEAF, 0), 0);
	assert_int_equal(cct_cursor_exit(c, &b), 0);
	assert_int_equal(cct_cursor_exit(c, &b), 0);
	assert_int_equal(cct_cursor_exit(c, &b), 0);
	assert_int_equal(cct_cursor_exit(c, &b), -EINVAL);
	assert_int_equal(count_of(c, p, 2), 1);
	assert_int_equal(stats(c).n, 5);
	assert_int_equal(cct_cursor_align(c, &b, NULL, NULL, 1), -EINVAL);
	cct_free(c);
}

static void test_caps(void **state)
{
	struct cct *c = new_cct(3, 2);
	struct cct_params bad = {.max_nodes = CCT_MAX_NODES + 1};
	struct cct *x = (struct cct *)&bad;
	uint32_t s[3] = {MAIN, INIT, LEAF}, t[2] = {WORK, LEAF};
	struct cct_stats st;

	(void)state;
	assert_int_equal(cct_new(&bad, &x), -EINVAL);
	assert_ptr_equal(x, (struct cct *)&bad);
	assert_int_equal(cct_new(NULL, NULL), -EINVAL);
	assert_int_equal(cct_new(NULL, &x), 0); /* the defaults */
	cct_free(x);

	assert_int_equal(cct_add_stack(c, s, 3, 4), -E2BIG);
	assert_int_equal(cct_add_stack(c, s, 2, 1), 0);
	assert_int_equal(cct_add_stack(c, t, 2, 1), -ENOSPC);
	enter(c, MAIN);
	enter(c, INIT);
	assert_int_equal(cct_enter(c, LEAF, 0), -E2BIG);
	assert_int_equal(cct_enter(c, LEAF, 0), -ENOSPC);
	leave(c, 3);					 /* the refused two, then init */
	assert_int_equal(cct_enter(c, LOG, 0), -ENOSPC); /* under main, a 4th node */
	leave(c, 2);
	assert_int_equal(cct_exit(c), -EINVAL);
	st = stats(c);
	assert_int_equal(st.n, 3);
	assert_int_equal(st.lost, 4 + 1 + 3);
	assert_int_equal(st.nodes, 3);
	cct_free(c);
}

static void test_bad_input(void **state)
{
	struct cct *c = new_cct(0, 0);
	struct cct_cursor cur = {.node = 77, .depth = 2};
	uint32_t s[1] = {MAIN};

	(void)state;
	assert_int_equal(cct_add_stack(c, s, 0, 1), -EINVAL);
	assert_int_equal(cct_add_stack(c, NULL, 1, 1), -EINVAL);
	assert_int_equal(cct_add_stack(c, s, 1, 0), -EINVAL);
	assert_int_equal(cct_add_stack(NULL, s, 1, 1), -EINVAL);
	assert_int_equal(cct_enter(NULL, 1, 0), -EINVAL);
	assert_int_equal(cct_exit(NULL), -EINVAL);
	assert_int_equal(cct_exit(c), -EINVAL);
	assert_int_equal(cct_cursor_enter(c, &cur, 1, 0), -EINVAL);
	assert_int_equal(cct_cursor_exit(c, &cur), -EINVAL);
	assert_int_equal(cct_add_stack(c, s, 1, UINT64_MAX), 0);
	assert_int_equal(cct_add_stack(c, s, 1, 1), -EOVERFLOW);
	assert_int_equal(cct_enter(c, MAIN, 0), -EOVERFLOW);
	assert_int_equal(cct_lookup(c, NULL, NULL, 1), -ENOENT);
	assert_int_equal(cct_nodes(NULL), 0);
	cct_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tv_h1),     cmocka_unit_test(test_stacks),
	    cmocka_unit_test(test_cursors),   cmocka_unit_test(test_caps),
	    cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
