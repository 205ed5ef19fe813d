// SPDX-License-Identifier: GPL-2.0-only
/* test_allowance.c: unit tests of the token bucket (daemon/lib/allowance.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kprof/allowance.h"

#define SEC 1000000000ULL

static void test_refill_and_cap(void **state)
{
	struct allowance a;

	(void)state;
	allowance_init(&a, 1000, 2000, 5 * SEC);
	assert_int_equal(allowance_avail(&a, 5 * SEC), 2000);
	allowance_spend(&a, 1500);
	assert_int_equal(allowance_avail(&a, 5 * SEC), 500);
	/* Half a second: 500 more. */
	assert_int_equal(allowance_avail(&a, 5 * SEC + SEC / 2), 1000);
	/* Never more than the burst, however long it waits. */
	assert_int_equal(allowance_avail(&a, 500 * SEC), 2000);
	/* A clock that goes back gives nothing, takes nothing. */
	assert_int_equal(allowance_avail(&a, 1 * SEC), 2000);
}

static void test_overdraw_repaid(void **state)
{
	struct allowance a;

	(void)state;
	allowance_init(&a, 100, 100, 0);
	allowance_spend(&a, 350); /* a step measured after it ran: 250 owed */
	assert_int_equal(allowance_avail(&a, 0), 0);
	assert_int_equal(allowance_avail(&a, 2 * SEC), 0); /* 50 still owed */
	assert_int_equal(allowance_avail(&a, 3 * SEC), 50);
	allowance_spend(&a, UINT64_MAX); /* saturates, no wrap */
	assert_int_equal(allowance_avail(&a, 3 * SEC), 0);
}

static void test_fractions_add_up(void **state)
{
	struct allowance a;
	uint64_t t = 0;

	(void)state;
	allowance_init(&a, 3, 10, 0);
	allowance_spend(&a, 10);
	/* 3 a second asked every 100 ms: 0.3 each time, gained once they make a whole one. */
	for (int i = 0; i < 10; i++)
		allowance_avail(&a, t += SEC / 10);
	assert_int_equal(allowance_avail(&a, t), 3);
}

static void test_big_numbers(void **state)
{
	struct allowance a;

	(void)state;
	allowance_init(&a, UINT64_MAX, UINT64_MAX, 0);
	assert_int_equal(allowance_avail(&a, 0), INT64_MAX);
	allowance_spend(&a, INT64_MAX);
	assert_int_equal(allowance_avail(&a, UINT64_MAX), INT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_refill_and_cap),
	    cmocka_unit_test(test_overdraw_repaid),
	    cmocka_unit_test(test_fractions_add_up),
	    cmocka_unit_test(test_big_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
