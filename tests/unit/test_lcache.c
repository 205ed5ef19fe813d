// SPDX-License-Identifier: GPL-2.0-only
/* test_lcache.c: unit tests of the source-line cache (daemon/lib/lcache.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/lcache.h"

static const struct srcline_frame two[] = {{"mix", "/src/hotline.c", 12},
					   {"spin", "/src/hotline.c", 30}};

static void test_get_put(void **state)
{
	struct srcline_frame fr[SRCLINE_MAX_FRAMES];
	struct lcache_stats st;
	struct lcache *c;
	uint64_t seq;
	bool failed;
	size_t n;

	(void)state;
	assert_int_equal(lcache_new(1 << 20, &c), 0);
	assert_int_equal(lcache_get(c, "abcd", 0x1139, fr, 16, &n, &failed, &seq), 0);
	assert_int_equal(lcache_put(c, "abcd", 0x1139, two, 2, false), 0);
	assert_int_equal(lcache_put(c, "abcd", 0x1140, NULL, 0, false), 0); /* no line there */
	assert_int_equal(lcache_put(c, "ef01", 0x1139, NULL, 0, true), 0);  /* failed */
	assert_int_equal(lcache_get(c, "abcd", 0x1139, fr, 16, &n, &failed, &seq), 1);
	assert_int_equal(n, 2);
	assert_false(failed);
	assert_string_equal(fr[0].func, "mix");
	assert_string_equal(fr[0].file, "/src/hotline.c");
	assert_int_equal(fr[0].line, 12);
	assert_string_equal(fr[1].func, "spin");
	assert_int_equal(fr[1].line, 30);
	assert_int_equal(lcache_get(c, "abcd", 0x1139, fr, 1, &n, &failed, &seq), 1);
	assert_int_equal(n, 1);
	assert_int_equal(lcache_get(c, "abcd", 0x1140, fr, 16, &n, &failed, &seq), 1);
	assert_int_equal(n, 0);
	assert_false(failed);
	assert_int_equal(lcache_get(c, "ef01", 0x1139, fr, 16, &n, &failed, &seq), 1);
	assert_true(failed);
	assert_int_equal(seq, 3); /* the third put */
	assert_int_equal(lcache_seq(c), 3);
	/* Another key, another address: misses. Replacing an entry keeps one. */
	assert_int_equal(lcache_get(c, "abce", 0x1139, fr, 16, &n, &failed, &seq), 0);
	assert_int_equal(lcache_put(c, "ef01", 0x1139, two, 1, false), 0);
	assert_int_equal(lcache_get(c, "ef01", 0x1139, fr, 16, &n, &failed, &seq), 1);
	assert_false(failed);
	assert_int_equal(n, 1);
	lcache_get_stats(c, &st);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.hits, 5);
	assert_int_equal(st.misses, 2);
	/* Refused: a long key, too many frames. */
	char key[LCACHE_MAX_KEY + 2];
	memset(key, 'a', sizeof(key) - 1);
	key[sizeof(key) - 1] = 0;
	assert_int_equal(lcache_put(c, key, 1, NULL, 0, false), -EINVAL);
	assert_int_equal(lcache_put(c, "k", 1, two, SRCLINE_MAX_FRAMES + 1, false), -EINVAL);
	lcache_clear(c);
	lcache_get_stats(c, &st);
	assert_int_equal(st.entries, 0);
	assert_int_equal(lcache_get(c, "abcd", 0x1139, fr, 16, &n, &failed, &seq), 0);
	lcache_free(c);
	lcache_free(NULL);
}

/* The bound holds, the least recently used go first. */
static void test_bound(void **state)
{
	struct srcline_frame fr[SRCLINE_MAX_FRAMES];
	struct lcache_stats st;
	struct lcache *c;
	uint64_t seq;
	bool failed;
	size_t n;

	(void)state;
	assert_int_equal(lcache_new(64 << 10, &c), 0);
	for (uint64_t a = 0; a < 10000; a++) {
		assert_int_equal(lcache_put(c, "0123456789abcdef", a, two, 2, false), 0);
		if (a >= 1) /* address 0 kept in use */
			assert_int_equal(lcache_get(c, "0123456789abcdef", 0, fr, 16, &n, &failed, &seq), 1);
		lcache_get_stats(c, &st);
		assert_true(st.bytes <= 64 << 10);
	}
	assert_true(st.evicted > 9000);
	assert_true(st.entries > 100);
	assert_int_equal(st.entries + st.evicted, 10000);
	assert_int_equal(lcache_get(c, "0123456789abcdef", 9999, fr, 16, &n, &failed, &seq), 1);
	assert_int_equal(lcache_get(c, "0123456789abcdef", 1, fr, 16, &n, &failed, &seq), 0);
	/* An entry larger than an eighth of the cache. */
	char big[SRCLINE_MAX_FIELD + 1];
	struct srcline_frame huge[SRCLINE_MAX_FRAMES];
	memset(big, 'x', SRCLINE_MAX_FIELD);
	big[SRCLINE_MAX_FIELD] = 0;
	for (int i = 0; i < SRCLINE_MAX_FRAMES; i++)
		huge[i] = (struct srcline_frame){big, big, 1};
	assert_int_equal(lcache_put(c, "k", 1, huge, SRCLINE_MAX_FRAMES, false), -E2BIG);
	lcache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_get_put),
	    cmocka_unit_test(test_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
