// SPDX-License-Identifier: GPL-2.0-only
/* test_tidtab.c: unit tests of the per-thread table (daemon/lib/tidtab.c): a thread keeps its
 * slot, slots are distinct and in range, the table takes cap / 2 threads and refuses the next,
 * colliding tids probe on, clear empties it, bad arguments are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/tidtab.h"

static void test_slots(void **state)
{
	struct tidtab t;
	bool seen[64] = {false}, added;
	long s[32];

	(void)state;
	tidtab_init(&t, 64);
	for (uint32_t i = 0; i < 32; i++) {
		s[i] = tidtab_get(&t, 1000 + i * 64, &added);
		assert_true(s[i] >= 0 && s[i] < 64);
		assert_true(added);
		assert_false(seen[s[i]]);
		seen[s[i]] = true;
	}
	assert_int_equal(t.n, 32);
	for (uint32_t i = 0; i < 32; i++) {
		assert_int_equal(tidtab_get(&t, 1000 + i * 64, &added), s[i]);
		assert_false(added);
	}
	assert_int_equal(tidtab_get(&t, 5, &added), -ENOSPC); /* half full */
	assert_false(added);
	assert_int_equal(tidtab_get(&t, 1000, NULL), s[0]); /* a known thread still is found */
	tidtab_clear(&t);
	assert_int_equal(t.n, 0);
	assert_true(tidtab_get(&t, 5, &added) >= 0);
	assert_true(added);
	tidtab_release(&t);
	tidtab_release(&t); /* twice is fine */
}

static void test_refused(void **state)
{
	struct tidtab t;

	(void)state;
	tidtab_init(&t, 64);
	assert_int_equal(tidtab_get(&t, 0, NULL), -EINVAL);
	tidtab_init(&t, 48); /* not a power of two */
	assert_int_equal(tidtab_get(&t, 7, NULL), -EINVAL);
	tidtab_init(&t, 1);
	assert_int_equal(tidtab_get(&t, 7, NULL), -EINVAL);
	assert_null(t.tid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slots),
	    cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
