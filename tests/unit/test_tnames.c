// SPDX-License-Identifier: GPL-2.0-only
/* test_tnames.c: unit tests of the thread-name table (daemon/lib/tnames.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/tnames.h"

static int count_fn(uint32_t tid, const char *name, void *userdata)
{
	(void)tid;
	(void)name;
	(*(size_t *)userdata)++;
	return 0;
}

static void test_set_get(void **state)
{
	struct tnames *t;
	char comm[16] = "worker-1";

	(void)state;
	assert_int_equal(tnames_new(0, &t), 0);
	assert_null(tnames_get(t, 7));
	assert_int_equal(tnames_set(t, 7, comm, sizeof(comm)), 1);
	assert_int_equal(tnames_set(t, 7, comm, sizeof(comm)), 0); /* the same */
	assert_string_equal(tnames_get(t, 7), "worker-1");
	/* Renamed: the latest name wins. */
	assert_int_equal(tnames_set(t, 7, "io", 2), 1);
	assert_string_equal(tnames_get(t, 7), "io");
	/* A name without a NUL is cut at 15 bytes. */
	assert_int_equal(tnames_set(t, 8, "0123456789abcdefXYZ", 19), 1);
	assert_string_equal(tnames_get(t, 8), "0123456789abcde");
	assert_int_equal(tnames_set(t, 0, "x", 1), -EINVAL);
	assert_int_equal(tnames_count(t), 2);
	tnames_free(t);
	tnames_free(NULL);
}

static void test_cap_and_growth(void **state)
{
	struct tnames *t;
	size_t n = 0;
	char name[16];

	(void)state;
	assert_int_equal(tnames_new(1000, &t), 0);
	for (uint32_t tid = 1; tid <= 1000; tid++) {
		snprintf(name, sizeof(name), "t%u", tid);
		assert_int_equal(tnames_set(t, tid * 4099, name, strlen(name)), 1);
	}
	assert_int_equal(tnames_set(t, 1, "late", 4), -ENOSPC);
	assert_int_equal(tnames_dropped(t), 1);
	/* A known thread may still be renamed when the table is full. */
	assert_int_equal(tnames_set(t, 4099, "again", 5), 1);
	for (uint32_t tid = 2; tid <= 1000; tid++) {
		snprintf(name, sizeof(name), "t%u", tid);
		assert_string_equal(tnames_get(t, tid * 4099), name);
	}
	assert_int_equal(tnames_foreach(t, count_fn, &n), 0);
	assert_int_equal(n, 1000);
	tnames_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_set_get),
	    cmocka_unit_test(test_cap_and_growth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
