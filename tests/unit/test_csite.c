// SPDX-License-Identifier: GPL-2.0-only
/* test_csite.c: unit tests of the call-site set (daemon/lib/csite.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/csite.h"

static int sum(const struct csite_entry *e, void *userdata)
{
	uint64_t *s = userdata;

	s[0]++;
	s[1] += e->addr + e->caller + e->callee;
	return 0;
}

static int stop_at_two(const struct csite_entry *e, void *userdata)
{
	(void)e;
	return ++*(int *)userdata == 2 ? 7 : 0;
}

static void test_set(void **state)
{
	struct csite_stats st;
	struct csite *c;
	uint64_t s[2] = {0, 0};
	int calls = 0;

	(void)state;
	assert_int_equal(csite_new(0, &c), 0);
	csite_prefetch(c, 1, 2, 0x1000); /* a hint, also before the first table */
	assert_int_equal(csite_add(c, 1, 2, 0x1000), 1);
	csite_prefetch(c, 1, 2, 0x1000); /* changes nothing */
	csite_prefetch(c, 9, 9, 0x9000);
	assert_int_equal(csite_add(c, 1, 2, 0x1000), 0);
	assert_int_equal(csite_add(c, 1, 3, 0x1000), 1); /* another callee, same site */
	assert_int_equal(csite_add(c, 1, 2, 0x1010), 1); /* another site, same pair */
	assert_int_equal(csite_add(c, 4, 2, 0x1000), 1);
	assert_int_equal(csite_add(c, 1, 2, 0), -EINVAL);
	assert_int_equal(csite_foreach(c, sum, s), 0);
	assert_int_equal(s[0], 4);
	assert_int_equal(s[1], 0x1000 * 3 + 0x1010 + 3 + 4 + 3 + 6);
	assert_int_equal(csite_foreach(c, stop_at_two, &calls), 7);
	csite_get_stats(c, &st);
	assert_int_equal(st.entries, 4);
	assert_int_equal(st.dropped, 0);
	csite_free(c);
	csite_free(NULL);
}

/* Grows past its first table; full at max_entries, the rest counted. */
static void test_growth_and_cap(void **state)
{
	struct csite_stats st;
	struct csite *c;
	uint64_t s[2] = {0, 0};

	(void)state;
	assert_int_equal(csite_new(1000, &c), 0);
	for (uint32_t i = 0; i < 1200; i++)
		assert_int_equal(csite_add(c, i % 7, i % 13, 0x400000 + i), i < 1000 ? 1 : -E2BIG);
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(csite_add(c, i % 7, i % 13, 0x400000 + i), 0);
	csite_get_stats(c, &st);
	assert_int_equal(st.entries, 1000);
	assert_int_equal(st.dropped, 200);
	assert_true(st.memory >= 2000 * sizeof(struct csite_entry));
	csite_foreach(c, sum, s);
	assert_int_equal(s[0], 1000);
	csite_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_set),
	    cmocka_unit_test(test_growth_and_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
