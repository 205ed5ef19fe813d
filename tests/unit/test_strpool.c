// SPDX-License-Identifier: GPL-2.0-only
/* test_strpool.c: the host-wide interned names (daemon/lib/strpool.c) alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/strpool.h"

/* Equal strings give one pointer, whatever buffer they came from; different ones different
 * pointers; each keeps its FNV-1a hash in front of it; pointers stay valid while the table
 * grows past thousands of strings. */
static void test_intern(void **state)
{
	struct strpool *p;
	struct strpool_stats st;
	const char *v[5000], *a, *b;
	char buf[64];

	(void)state;
	assert_int_equal(strpool_new(0, &p), 0);
	strcpy(buf, "malloc");
	a = strpool_intern(p, buf);
	assert_non_null(a);
	assert_ptr_not_equal(a, buf);
	buf[0] = 'X'; /* a copy: the caller's buffer may change */
	assert_string_equal(a, "malloc");
	assert_ptr_equal(strpool_intern(p, "malloc"), a);
	b = strpool_intern(p, "mallo");
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_true(strpool_hash_of(a) == strpool_hash("malloc"));
	assert_true(strpool_hash_of(b) == strpool_hash("mallo"));
	assert_true(strpool_hash("") == 0xcbf29ce484222325ULL); /* FNV-1a's offset basis */
	assert_string_equal(strpool_intern(p, ""), "");
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "func_%d", i);
		v[i] = strpool_intern(p, buf);
		assert_non_null(v[i]);
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "func_%d", i);
		assert_string_equal(v[i], buf);
		assert_ptr_equal(strpool_intern(p, buf), v[i]);
		assert_true(strpool_hash_of(v[i]) == strpool_hash(buf));
	}
	assert_ptr_equal(strpool_intern(p, "malloc"), a);
	strpool_get_stats(p, &st);
	assert_int_equal(st.strs, 5003);
	assert_int_equal(st.full, 0);
	assert_true(st.bytes > st.str_bytes);
	strpool_free(p);
	strpool_free(NULL);
}

/* At the cap nothing new is interned (NULL, counted) but what is there is still found; a string
 * larger than the whole cap is refused too. The cap holds the slot table (1,024 slots of 8
 * bytes at first, 2,048 once more than 512 strings are in). */
static void test_cap(void **state)
{
	struct strpool *p;
	struct strpool_stats st;
	const char *a, *big_s;
	char buf[32], *big;
	int n = 0;

	(void)state;
	assert_int_equal(strpool_new(8192 + 1000, &p), 0);
	a = strpool_intern(p, "first");
	assert_non_null(a);
	for (int i = 0; i < 1000; i++) {
		snprintf(buf, sizeof(buf), "name-%04d", i); /* 8 + 10 bytes each */
		if (strpool_intern(p, buf))
			n++;
	}
	strpool_get_stats(p, &st);
	assert_true(st.str_bytes <= 1000);
	assert_true(st.bytes >= 8192 + st.str_bytes);
	assert_int_equal(n, (1000 - 14) / 18);
	assert_int_equal(st.full, 1000 - n);
	assert_ptr_equal(strpool_intern(p, "first"), a); /* found, not new: no room needed */
	assert_ptr_equal(strpool_intern(p, "name-0000"), strpool_intern(p, "name-0000"));
	assert_null(strpool_intern(p, "name-0999"));
	strpool_free(p);

	/* 512 strings ("0" to "511": 6,034 bytes with their hashes) fill 1,024 slots halfway:
	 * the 513th needs 2,048 slots (16 KiB), over a cap of 15,000 bytes however short it is. */
	assert_int_equal(strpool_new(15000, &p), 0);
	n = 0;
	for (int i = 0; i < 600; i++) {
		snprintf(buf, sizeof(buf), "%d", i);
		if (strpool_intern(p, buf))
			n++;
	}
	assert_int_equal(n, 512);
	strpool_free(p);

	assert_int_equal(strpool_new(8192 + 100, &p), 0);
	big = malloc(200);
	assert_non_null(big);
	memset(big, 'x', 199);
	big[199] = '\0';
	big_s = strpool_intern(p, big);
	assert_null(big_s);
	assert_non_null(strpool_intern(p, "small"));
	free(big);
	strpool_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_intern),
	    cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
