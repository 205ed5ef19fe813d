// SPDX-License-Identifier: GPL-2.0-only
/* test_budget.c: unit tests of the per-uid memory budget (daemon/lib/budget.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kprof/budget.h"

static void test_limits(void **state)
{
	struct budget *b;

	(void)state;
	assert_int_equal(budget_new(1000, 300, &b), 0);
	assert_int_equal(budget_charge(b, 1000, 300), 0);
	/* one user cannot take more than its share */
	assert_int_equal(budget_charge(b, 1000, 1), -ENOSPC);
	assert_int_equal(budget_refusals(b), 1);
	assert_int_equal(budget_room(b, 1000), 0);
	assert_int_equal(budget_room(b, 1001), 300);
	assert_int_equal(budget_charge(b, 1001, 300), 0);
	/* root is held by the total only */
	assert_int_equal(budget_room(b, 0), 400);
	assert_int_equal(budget_charge(b, 0, 400), 0);
	assert_int_equal(budget_charge(b, 0, 1), -ENOSPC);
	assert_int_equal(budget_charge(b, 1002, 1), -ENOSPC);
	assert_int_equal(budget_total_used(b), 1000);
	budget_release(b, 1000, 300);
	assert_int_equal(budget_used(b, 1000), 0);
	assert_int_equal(budget_charge(b, 1002, 250), 0);
	/* releasing more than held gives back what is held */
	budget_release(b, 1002, 1u << 30);
	assert_int_equal(budget_total_used(b), 700);
	budget_release(b, 4242, 10); /* a uid holding nothing */
	assert_int_equal(budget_total_used(b), 700);
	budget_set_limits(b, 2000, 100);
	assert_int_equal(budget_room(b, 1001), 0);
	assert_int_equal(budget_room(b, 0), 1300);
	budget_free(b);
	budget_free(NULL);
}

static void test_many_uids(void **state)
{
	struct budget *b;
	int refused = 0;

	(void)state;
	assert_int_equal(budget_new(UINT64_MAX, 10, &b), 0);
	for (uid_t u = 1; u <= BUDGET_MAX_UIDS + 10; u++)
		refused += budget_charge(b, u, 1) == -ENOSPC;
	assert_int_equal(refused, 10);
	for (uid_t u = 1; u <= BUDGET_MAX_UIDS; u++)
		budget_release(b, u, 1);
	assert_int_equal(budget_total_used(b), 0);
	assert_int_equal(budget_charge(b, 77, 10), 0);
	budget_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_many_uids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
