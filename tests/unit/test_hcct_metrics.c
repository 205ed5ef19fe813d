// SPDX-License-Identifier: GPL-2.0-only
/* test_hcct_metrics.c: unit tests for the HCCT accuracy metrics (links the oracles in
 * tests/oracles/ and daemon/lib/hcct.c: the trees measured are real query results).
 *
 * The metric tables of TV-H1 and TV-H2 (ALGORITHMS.md §4) are reproduced exactly, then the
 * corner cases: phi below eps, zero-count frames of sampled stacks, empty inputs, and trees that
 * do not come from the CCT's stream.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../oracles/cct.h"
#include "kprof/hcct.h"
#include "../oracles/hcct_metrics.h"

enum { MAIN, INIT, LEAF, LOG, WORK, REPORT };

#define assert_close(a, b)                                                                         \
	do {                                                                                       \
		double _a = (a), _b = (b);                                                         \
		if (fabs(_a - _b) > 1e-9)                                                          \
			fail_msg("%s = %.12g, expected %.12g", #a, _a, _b);                        \
	} while (0)

/* TV-H1's trace fed to both structures. */
static void feed(struct hcct *h, struct cct *c)
{
	static const int ev[] = {MAIN, INIT, LEAF, -1,	 LOG,  -1,     -1,   WORK, LEAF, -1,
				 LEAF, -1,   -1,   WORK, LEAF, -1,     LEAF, -1,   -1,	 WORK,
				 LEAF, -1,   LEAF, -1,	 -1,   INIT,   LOG,  -1,   -1,	 WORK,
				 LEAF, -1,   LEAF, -1,	 -1,   REPORT, LOG,  -1,   -1,	 -1};

	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		if (ev[i] < 0) {
			assert_int_equal(hcct_exit(h), 0);
			assert_int_equal(cct_exit(c), 0);
		} else {
			assert_int_equal(hcct_enter(h, (uint32_t)ev[i], 0), 0);
			assert_int_equal(cct_enter(c, (uint32_t)ev[i], 0), 0);
		}
	}
}

static void setup_pair(uint32_t m, struct hcct **h, struct cct **c)
{
	struct hcct_params p = {.slots = m};

	assert_int_equal(hcct_new(&p, h), 0);
	assert_int_equal(cct_new(NULL, c), 0);
	feed(*h, *c);
}

static struct hcct_metrics measure(const struct hcct *h, const struct cct *c, uint64_t num,
				   uint64_t den, double tau)
{
	struct hcct_tree *t = NULL;
	struct hcct_metrics m;

	memset(&m, 0xa5, sizeof(m));
	assert_int_equal(hcct_query(h, num, den, &t), 0);
	assert_int_equal(hcct_metrics_compute(c, t, tau, &m), 0);
	hcct_tree_free(t);
	return m;
}

static void test_tv_h1(void **state)
{
	struct hcct *h;
	struct cct *c;
	struct hcct_metrics m;

	(void)state;
	setup_pair(8, &h, &c);

	/* phi = 0.10: T = 2 */
	m = measure(h, c, 10, 100, 0.25);
	assert_int_equal(m.n, 20);
	assert_int_equal(m.threshold, 2);
	assert_int_equal(m.w_max, 8);
	assert_int_equal(m.contexts, 8);
	assert_int_equal(m.tree_nodes, 5);
	assert_int_equal(m.exact_hcct, 5);
	assert_int_equal(m.hot_contexts, 4);
	assert_int_equal(m.hot, 4);
	assert_int_equal(m.cold, 1);
	assert_int_equal(m.false_positives, 0);
	assert_int_equal(m.false_negatives, 0);
	assert_close(m.overlap, 17.0 / 20);
	assert_int_equal(m.cover_num, 4);
	assert_int_equal(m.cover_den, 4);
	assert_close(m.cover, 1);
	assert_close(m.max_uncov, 12.5);
	assert_close(m.avg_uncov, 12.5);
	assert_close(m.max_err, 0);
	assert_close(m.avg_err, 0);
	assert_close(m.tau_full, 0.25);
	m = measure(h, c, 10, 100, 0.5);
	assert_int_equal(m.cover_num, 2);
	assert_int_equal(m.cover_den, 2);
	assert_close(m.tau, 0.5);

	/* phi = 0.20: T = 4 */
	m = measure(h, c, 20, 100, 0.25);
	assert_close(m.overlap, 13.0 / 20);
	assert_int_equal(m.cover_num, 2);
	assert_int_equal(m.cover_den, 4);
	assert_close(m.cover, 0.5);
	assert_close(m.max_uncov, 25);
	assert_close(m.avg_uncov, 17.5);
	assert_int_equal(m.false_positives, 0);
	assert_close(m.max_err, 0);
	assert_close(m.avg_err, 0);
	assert_int_equal(m.exact_hcct, 3);
	m = measure(h, c, 20, 100, 0.5);
	assert_close(m.cover, 1);
	assert_int_equal(m.cover_den, 2);
	hcct_free(h);
	cct_free(c);
}

static void test_tv_h2(void **state)
{
	struct hcct *h;
	struct cct *c;
	struct hcct_metrics m;

	(void)state;
	setup_pair(3, &h, &c);

	/* phi = 0.40: T = 8, A = H = {work/leaf} */
	m = measure(h, c, 40, 100, 0.25);
	assert_int_equal(m.threshold, 8);
	assert_close(m.overlap, 0.65);
	assert_close(m.cover, 0.5);
	assert_close(m.max_uncov, 25);
	assert_close(m.avg_uncov, 17.5);
	assert_int_equal(m.false_positives, 0);
	assert_int_equal(m.false_negatives, 0);
	assert_int_equal(m.hot, 1);
	assert_int_equal(m.cold, 2);
	assert_close(m.max_err, 12.5); /* work/leaf: |8 - 9| / 8 */
	assert_close(m.avg_err, 12.5);
	assert_close(m.max_err_a, 12.5);
	assert_close(measure(h, c, 40, 100, 0.5).cover, 1);

	/* phi = 0.45: T = 9, the exact HCCT is empty, work/leaf (f = 8) is a false positive */
	m = measure(h, c, 45, 100, 0.25);
	assert_int_equal(m.threshold, 9);
	assert_int_equal(m.hot_contexts, 0);
	assert_int_equal(m.exact_hcct, 0);
	assert_int_equal(m.false_positives, 1);
	assert_int_equal(m.false_negatives, 0);
	assert_int_equal(m.hot, 0);
	assert_close(m.max_err, 0); /* no context in A & H */
	assert_close(m.max_err_a, 12.5);

	/* phi = 0.20 < eps: report/log (f = 1, count 6) is returned */
	m = measure(h, c, 20, 100, 0.25);
	assert_int_equal(m.threshold, 4);
	assert_int_equal(m.hot_contexts, 2);
	assert_int_equal(m.hot, 2);
	assert_int_equal(m.false_positives, 1);
	assert_close(m.max_err_a, 500);
	assert_close(m.max_err, 25); /* work: |4 - 5| / 4 */
	assert_close(m.avg_err, (25 + 12.5) / 2);
	assert_close(m.avg_err_a, (25 + 12.5 + 500) / 3);
	hcct_free(h);
	cct_free(c);
}

/* Sampled stacks: frames that were never a leaf are contexts of weight 0. */
static void test_stacks(void **state)
{
	struct hcct_params p = {.slots = 2};
	struct hcct *h;
	struct cct *c;
	struct hcct_metrics m;
	uint32_t s1[3] = {MAIN, INIT, LEAF}, s2[2] = {MAIN, WORK};

	(void)state;
	assert_int_equal(hcct_new(&p, &h), 0);
	assert_int_equal(cct_new(NULL, &c), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(hcct_add_stack(h, s1, 3, 2), 0);
		assert_int_equal(cct_add_stack(c, s1, 3, 2), 0);
	}
	assert_int_equal(hcct_add_stack(h, s2, 2, 1), 0);
	assert_int_equal(cct_add_stack(c, s2, 2, 1), 0);
	m = measure(h, c, 1, 2, 0);
	assert_int_equal(m.n, 7);
	assert_int_equal(m.threshold, 3);
	assert_int_equal(m.contexts, 4);
	assert_int_equal(m.tree_nodes, 3); /* main, main/init: cold; main/init/leaf = 6 */
	assert_int_equal(m.cold, 2);
	assert_int_equal(m.hot, 1);
	assert_int_equal(m.cover_den, 4); /* tau = 0: every context */
	assert_int_equal(m.cover_num, 3);
	assert_close(m.overlap, 6.0 / 7);
	assert_close(m.max_uncov, 100.0 / 6);
	assert_close(m.avg_uncov, 100.0 / 6);
	/* phi = 0: every CCT context is "hot", the intermediate frames too */
	m = measure(h, c, 0, 1, 1);
	assert_int_equal(m.hot_contexts, 4);
	assert_int_equal(m.exact_hcct, 4);
	assert_int_equal(m.hot, 2);
	assert_int_equal(m.false_negatives, 2);
	assert_int_equal(m.cover_den, 1);
	hcct_free(h);
	cct_free(c);
}

static void test_empty(void **state)
{
	struct hcct_params p = {.slots = 4};
	struct hcct *h;
	struct cct *c;
	struct hcct_metrics m;

	(void)state;
	assert_int_equal(hcct_new(&p, &h), 0);
	assert_int_equal(cct_new(NULL, &c), 0);
	m = measure(h, c, 1, 10, 0.1);
	assert_int_equal(m.n, 0);
	assert_int_equal(m.contexts, 0);
	assert_int_equal(m.tree_nodes, 0);
	assert_int_equal(m.w_max, 0);
	assert_close(m.overlap, 0);
	assert_close(m.cover, 1);
	assert_close(m.max_uncov, 0);
	assert_close(m.avg_err, 0);
	hcct_free(h);
	cct_free(c);
}

static void test_bad_input(void **state)
{
	struct hcct *h;
	struct cct *c, *other;
	struct hcct_tree *t = NULL;
	struct hcct_metrics m, before;
	struct hcct_entry e[2] = {{.id = MAIN, .parent = HCCT_NONE, .depth = 1},
				  {.id = INIT, .parent = 1, .depth = 2}};
	struct hcct_tree hand = {.phi_num = 1, .phi_den = 2, .len = 2, .entries = e};

	(void)state;
	setup_pair(3, &h, &c);
	assert_int_equal(cct_new(NULL, &other), 0);
	assert_int_equal(hcct_query(h, 40, 100, &t), 0);
	memset(&m, 0x5a, sizeof(m));
	before = m;
	/* a tree from another stream: its contexts are not in this CCT */
	assert_int_equal(hcct_metrics_compute(other, t, 0.5, &m), -EINVAL);
	assert_int_equal(hcct_metrics_compute(NULL, t, 0.5, &m), -EINVAL);
	assert_int_equal(hcct_metrics_compute(c, NULL, 0.5, &m), -EINVAL);
	assert_int_equal(hcct_metrics_compute(c, t, 0.5, NULL), -EINVAL);
	assert_int_equal(hcct_metrics_compute(c, t, -0.1, &m), -EINVAL);
	assert_int_equal(hcct_metrics_compute(c, t, 1.5, &m), -EINVAL);
	assert_int_equal(hcct_metrics_compute(c, t, NAN, &m), -EINVAL);
	t->phi_den = 0;
	assert_int_equal(hcct_metrics_compute(c, t, 0.5, &m), -EINVAL);
	t->phi_den = 100;
	t->phi_num = 101;
	assert_int_equal(hcct_metrics_compute(c, t, 0.5, &m), -EINVAL);
	/* hand-made trees: a parent that does not come first, a context the CCT lacks */
	assert_int_equal(hcct_metrics_compute(c, &hand, 0.5, &m), -EINVAL);
	e[1].parent = 0;
	e[1].id = REPORT + 1;
	assert_int_equal(hcct_metrics_compute(c, &hand, 0.5, &m), -EINVAL);
	assert_memory_equal(&m, &before, sizeof(m)); /* untouched on failure */
	e[1].id = INIT;
	assert_int_equal(hcct_metrics_compute(c, &hand, 0.5, &m), 0);
	assert_int_equal(m.tree_nodes, 2);
	assert_close(m.overlap, 3.0 / 20);
	hcct_tree_free(t);
	hcct_free(h);
	cct_free(c);
	cct_free(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tv_h1),     cmocka_unit_test(test_tv_h2),
	    cmocka_unit_test(test_stacks),    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
