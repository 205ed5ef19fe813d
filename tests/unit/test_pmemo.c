// SPDX-License-Identifier: GPL-2.0-only
/* test_pmemo.c: unit tests of the memo of processes without a profile (daemon/lib/pmemo.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kprof/pmemo.h"

static void test_new_bad(void **state)
{
	struct pmemo *p = NULL;

	(void)state;
	assert_int_equal(pmemo_new(3, &p), -EINVAL);
	assert_int_equal(pmemo_new(1u << 21, &p), -EINVAL);
	assert_null(p);
	assert_int_equal(pmemo_new(0, &p), 0);
	assert_int_equal(pmemo_count(p, PMEMO_NONE), 0);
	pmemo_free(p);
	pmemo_free(NULL);
}

static void test_put_hit(void **state)
{
	struct pmemo *p;

	(void)state;
	assert_int_equal(pmemo_new(64, &p), 0);
	assert_int_equal(pmemo_hit(p, 42, 1000), PMEMO_NONE);
	assert_int_equal(pmemo_put(p, 42, 1000, PMEMO_GONE), 0);
	assert_int_equal(pmemo_hit(p, 42, 1000), PMEMO_GONE);
	/* The same pid, another process: not known. */
	assert_int_equal(pmemo_hit(p, 42, 1001), PMEMO_NONE);
	/* Refused again later: the reason changes, not the count. */
	assert_int_equal(pmemo_put(p, 42, 1000, PMEMO_REFUSED), 0);
	assert_int_equal(pmemo_hit(p, 42, 1000), PMEMO_REFUSED);
	assert_int_equal(pmemo_count(p, PMEMO_NONE), 1);
	assert_int_equal(pmemo_put(p, 0, 1, PMEMO_GONE), -EINVAL);
	assert_int_equal(pmemo_put(p, 1, 1, PMEMO_NONE), -EINVAL);
	assert_int_equal(pmemo_put(p, 1, 1, PMEMO_NR), -EINVAL);
	assert_int_equal(pmemo_hit(p, 0, 0), PMEMO_NONE);
	pmemo_free(p);
}

/* A full table stays bounded: every put evicts at worst one entry, the last put is always
 * found, and the count never passes the slots. */
static void test_bounded(void **state)
{
	struct pmemo *p;
	unsigned evicted = 0;

	(void)state;
	assert_int_equal(pmemo_new(16, &p), 0);
	for (uint32_t pid = 1; pid <= 1000; pid++) {
		int r = pmemo_put(p, pid, pid * 7ULL, pid % 2 ? PMEMO_GONE : PMEMO_REFUSED);

		assert_true(r == 0 || r == 1);
		evicted += r;
		assert_int_equal(pmemo_hit(p, pid, pid * 7ULL),
				 pid % 2 ? PMEMO_GONE : PMEMO_REFUSED);
		assert_true(pmemo_count(p, PMEMO_NONE) <= 16);
	}
	assert_true(evicted >= 1000 - 16);
	assert_int_equal(pmemo_count(p, PMEMO_NONE),
			 pmemo_count(p, PMEMO_GONE) + pmemo_count(p, PMEMO_REFUSED));
	pmemo_forget(p, PMEMO_REFUSED);
	assert_int_equal(pmemo_count(p, PMEMO_REFUSED), 0);
	assert_int_equal(pmemo_hit(p, 999, 999 * 7ULL), PMEMO_GONE);
	pmemo_forget(p, PMEMO_NONE);
	assert_int_equal(pmemo_count(p, PMEMO_NONE), 0);
	assert_int_equal(pmemo_hit(p, 999, 999 * 7ULL), PMEMO_NONE);
	pmemo_free(p);
}

/* Many processes of a storm under one slot count: the slots are spread (no pathological
 * clustering of consecutive pids with one start). */
static void test_spread(void **state)
{
	struct pmemo *p;

	(void)state;
	assert_int_equal(pmemo_new(4096, &p), 0);
	for (uint32_t pid = 5000; pid < 6000; pid++)
		pmemo_put(p, pid, 123456, PMEMO_GONE);
	assert_true(pmemo_count(p, PMEMO_GONE) > 850);
	pmemo_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_new_bad),
	    cmocka_unit_test(test_put_hit),
	    cmocka_unit_test(test_bounded),
	    cmocka_unit_test(test_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
