// SPDX-License-Identifier: GPL-2.0-only
/* test_arena.c: the chunked name allocator (daemon/lib/arena.c) alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/arena.h"

/* Names written into the arena stay where they were put while it grows: every earlier name
 * still reads back after thousands more, and chunks double from 4 KiB up to 1 MiB. */
static void test_stable(void **state)
{
	struct arena a = {0};
	char *p[5000];

	(void)state;
	for (int i = 0; i < 5000; i++) {
		p[i] = arena_alloc(&a, 64);
		assert_non_null(p[i]);
		snprintf(p[i], 64, "name-%d", i);
	}
	for (int i = 0; i < 5000; i++) {
		char want[64];

		snprintf(want, sizeof(want), "name-%d", i);
		assert_string_equal(p[i], want);
	}
	/* 320000 bytes: chunks of 4, 8, ..., 256 KiB (511 KiB) hold them, headers aside. */
	assert_true(a.bytes >= 320000 && a.bytes < 600 * 1024);
	arena_release(&a);
	assert_null(a.chunks);
	assert_int_equal(a.bytes, 0);
}

/* A request larger than the largest chunk gets a chunk of its own; one that cannot be sized
 * fails without changing the arena. */
static void test_sizes(void **state)
{
	struct arena a = {0};
	char *big, *small;
	size_t before;

	(void)state;
	small = arena_alloc(&a, 1);
	assert_non_null(small);
	big = arena_alloc(&a, 3 << 20);
	assert_non_null(big);
	memset(big, 'x', 3 << 20);
	assert_true(a.bytes >= (3u << 20) + 4096);
	before = a.bytes;
	assert_null(arena_alloc(&a, SIZE_MAX - 8));
	assert_int_equal(a.bytes, before);
	assert_non_null(arena_alloc(&a, 0));
	arena_release(&a);
	arena_release(&a); /* twice: still empty */
	assert_int_equal(a.bytes, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stable),
	    cmocka_unit_test(test_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
