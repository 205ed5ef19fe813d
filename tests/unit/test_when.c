// SPDX-License-Identifier: GPL-2.0-only
/* test_when.c: kprofctl's --since/--until times (daemon/lib/when.c): durations before now,
 * epoch seconds, dates and times (in UTC here: timegm stands for mktime), and what is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "kprof/when.h"

#define S 1000000000ULL
#define NOW (1795519098ULL * S + 500) /* 2026-11-24 11:18:18 UTC */

static uint64_t when(const char *s)
{
	uint64_t t = 0;

	assert_int_equal(when_parse(s, NOW, timegm, &t), 0);
	return t;
}

static void test_relative(void **state)
{
	(void)state;
	assert_int_equal(when("now"), NOW);
	assert_int_equal(when("10m"), NOW - 600 * S);
	assert_int_equal(when("10m ago"), NOW - 600 * S);
	assert_int_equal(when("2 minutes ago"), NOW - 120 * S);
	assert_int_equal(when("1 hour ago"), NOW - 3600 * S);
	assert_int_equal(when("90 sec"), NOW - 90 * S);
	assert_int_equal(when("-10min"), NOW - 600 * S);
	assert_int_equal(when("90s"), NOW - 90 * S);
	assert_int_equal(when("1.5h"), NOW - 5400 * S);
	assert_int_equal(when("2d"), NOW - 2 * 86400 * S);
	assert_int_equal(when("250ms"), NOW - 250000000ULL);
}

static void test_absolute(void **state)
{
	(void)state;
	assert_int_equal(when("@1795519000"), 1795519000ULL * S);
	assert_int_equal(when("@1795519000.5"), 1795519000ULL * S + S / 2);
	assert_int_equal(when("2026-11-24 08:00:00"), 1795507200ULL * S);
	assert_int_equal(when("2026-11-24T08:00"), 1795507200ULL * S);
	assert_int_equal(when("2026-11-24T08:00:00Z"), 1795507200ULL * S);
	assert_int_equal(when("2026-11-24"), 1795478400ULL * S);
	assert_int_equal(when("08:00Z"), 1795507200ULL * S); /* today */
	assert_int_equal(when("08:00:30Z"), 1795507230ULL * S);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {"",	   "garbage",	 "10",	     "10 parsecs",
					  "m",	   "@",		 "@x",	     "10m later",
					  "25:99", "2026-13-45", "10m ago!", "now-1"};
	uint64_t t = 123;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(when_parse(bad[i], NOW, timegm, &t), -EINVAL);
		assert_int_equal(t, 123); /* untouched */
	}
	assert_int_equal(when_parse("100000d", NOW, timegm, &t), -ERANGE);
	assert_int_equal(when_parse(NULL, NOW, timegm, &t), -EINVAL);
}

/* --duration's values: a duration alone, no "ago". */
static void test_duration(void **state)
{
	uint64_t d = 7;

	(void)state;
	assert_int_equal(when_duration("10s", &d), 0);
	assert_int_equal(d, 10 * S);
	assert_int_equal(when_duration("2 minutes", &d), 0);
	assert_int_equal(d, 120 * S);
	assert_int_equal(when_duration("1.5h", &d), 0);
	assert_int_equal(d, 5400 * S);
	d = 7;
	assert_int_equal(when_duration("10", &d), -EINVAL); /* plain seconds: the caller's */
	assert_int_equal(when_duration("10m ago", &d), -EINVAL);
	assert_int_equal(when_duration("10 parsecs", &d), -EINVAL);
	assert_int_equal(d, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_duration),
	    cmocka_unit_test(test_relative),
	    cmocka_unit_test(test_absolute),
	    cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
