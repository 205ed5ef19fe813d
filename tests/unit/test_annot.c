// SPDX-License-Identifier: GPL-2.0-only
/* test_annot.c: unit tests of the per-address sample store for annotate (daemon/lib/annot.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/annot.h"

static bool any(uint32_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	return true;
}

static bool only(uint32_t id, void *userdata)
{
	return id == *(uint32_t *)userdata;
}

static void test_counts(void **state)
{
	struct annot *a;
	struct annot_addr *v;
	struct annot_stats st;
	uint32_t seven = 7;
	size_t n;

	(void)state;
	assert_int_equal(annot_new(NULL, &a), 0);
	assert_int_equal(annot_add(a, 7, 0x1000, false), 1);
	assert_int_equal(annot_add(a, 7, 0x1000, false), 0);
	assert_int_equal(annot_add(a, 7, 0x1000, true), 0);
	assert_int_equal(annot_add(a, 7, 0x1004, false), 1);
	/* The same address in another function (code reused) is kept apart. */
	assert_int_equal(annot_add(a, 9, 0x1000, false), 1);
	assert_int_equal(annot_add(a, 7, 0, false), -EINVAL);
	assert_int_equal(annot_collect(a, only, &seven, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].addr, 0x1000);
	assert_int_equal(v[0].self, 2);
	assert_int_equal(v[0].below, 1);
	assert_int_equal(v[1].addr, 0x1004);
	assert_int_equal(v[1].self, 1);
	free(v);
	/* Both ids: one row per address, counts summed, sorted by address. */
	assert_int_equal(annot_collect(a, any, NULL, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].self, 3);
	assert_int_equal(v[0].id, 7);
	free(v);
	annot_get_stats(a, &st);
	assert_int_equal(st.addrs, 3);
	assert_int_equal(st.dropped, 0);
	assert_true(st.memory > 0);
	annot_free(a);
	annot_free(NULL);
}

static void test_cap_and_growth(void **state)
{
	struct annot *a;
	struct annot_addr *v;
	struct annot_stats st;
	size_t n;
	uint64_t total = 0;

	(void)state;
	assert_int_equal(annot_new(&(struct annot_limits){.max_addrs = 1000}, &a), 0);
	for (uint64_t i = 1; i <= 1000; i++)
		assert_int_equal(annot_add(a, i % 5, 0x400000 + 3 * i, false), 1);
	/* Full: a new address is dropped and counted; known ones still count. */
	assert_int_equal(annot_add(a, 1, 0x900000, false), -E2BIG);
	assert_int_equal(annot_add(a, 1, 0x400000 + 3, false), 0);
	annot_get_stats(a, &st);
	assert_int_equal(st.addrs, 1000);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(annot_collect(a, any, NULL, &v, &n), 0);
	assert_int_equal(n, 1000);
	for (size_t i = 0; i < n; i++) {
		total += v[i].self;
		if (i)
			assert_true(v[i].addr > v[i - 1].addr);
	}
	assert_int_equal(total, 1001);
	free(v);
	annot_free(a);
}

static void test_ranges(void **state)
{
	struct annot *a;
	uint64_t lo, hi;

	(void)state;
	assert_int_equal(annot_new(&(struct annot_limits){.max_ranges = 2}, &a), 0);
	assert_false(annot_range(a, 1, &lo, &hi));
	assert_int_equal(annot_set_range(a, 1, 0x1000, 0x1100), 0);
	assert_int_equal(annot_set_range(a, 1, 0x2000, 0x2100), 0); /* set once */
	assert_true(annot_range(a, 1, &lo, &hi));
	assert_int_equal(lo, 0x1000);
	assert_int_equal(hi, 0x1100);
	assert_int_equal(annot_set_range(a, 2, 0x3000, 0x3000), -EINVAL);
	assert_int_equal(annot_set_range(a, 2, 0x3000, 0x3010), 0);
	assert_int_equal(annot_set_range(a, 3, 0x4000, 0x4010), -E2BIG);
	assert_false(annot_range(a, 3, &lo, &hi));
	annot_free(a);
}

static void test_code(void **state)
{
	uint8_t first[16], second[16], out[32], have[32];
	struct annot *a;
	struct annot_stats st;
	uint32_t nine = 9;

	(void)state;
	memset(first, 0xaa, sizeof(first));
	memset(second, 0xbb, sizeof(second));
	assert_int_equal(
	    annot_new(&(struct annot_limits){.max_chunk = 16, .max_code_bytes = 40}, &a), 0);
	assert_false(annot_covered(a, 0x1000));
	assert_int_equal(annot_put_code(a, 7, 0x1000, first, 16), 0);
	assert_true(annot_covered(a, 0x1000));
	assert_true(annot_covered(a, 0x100f));
	assert_true(annot_has_chunk(a, 0x1000, 16));
	assert_false(annot_has_chunk(a, 0x1000, 8));
	assert_false(annot_has_chunk(a, 0x1001, 15));
	assert_false(annot_covered(a, 0x1010));
	assert_false(annot_covered(a, 0xfff));
	/* Overlapping, later, of function 9: the oldest bytes win unless 9's are asked for. */
	assert_int_equal(annot_put_code(a, 9, 0x1008, second, 16), 0);
	assert_true(annot_covered(a, 0x1017));
	assert_int_equal(annot_code(a, 0x1000, 32, NULL, NULL, out, have), 24);
	assert_int_equal(out[0x7], 0xaa);
	assert_int_equal(out[0x8], 0xaa);
	assert_int_equal(out[0x17], 0xbb);
	assert_int_equal(have[0x18], 0);
	assert_int_equal(out[0x18], 0);
	assert_int_equal(annot_code(a, 0x1000, 32, only, &nine, out, have), 24);
	assert_int_equal(out[0x7], 0xaa);
	assert_int_equal(out[0x8], 0xbb);
	/* Limits: a chunk over max_chunk, and one past max_code_bytes, are refused, counted. */
	assert_int_equal(annot_put_code(a, 7, 0x5000, first, 17), -E2BIG);
	assert_int_equal(annot_put_code(a, 7, 0x5000, first, 16), -E2BIG);
	assert_int_equal(annot_put_code(a, 7, 0x5000, first, 8), 0);
	assert_int_equal(annot_put_code(a, 7, 0x5000, first, 0), -EINVAL);
	assert_int_equal(annot_put_code(a, 7, UINT64_MAX - 3, first, 8), -EINVAL);
	annot_get_stats(a, &st);
	assert_int_equal(st.chunks, 3);
	assert_int_equal(st.code_bytes, 40);
	assert_int_equal(st.code_dropped, 2);
	/* Nothing kept there. */
	assert_int_equal(annot_code(a, 0x9000, 8, NULL, NULL, out, have), 0);
	annot_free(a);
}

/* Shared chunks: the caller's bytes themselves, not copied; read as any chunk; counted in
 * code_bytes and shared_bytes but not in memory; each handed back once when the store goes.
 * Without a release callback none is taken; a refused one stays the caller's. */
struct released {
	const uint8_t *seen[4];
	int n;
};

static void on_release(void *ctx, const uint8_t *bytes)
{
	struct released *r = ctx;

	if (r->n < 4)
		r->seen[r->n] = bytes;
	r->n++;
}

static void test_shared(void **state)
{
	static const uint8_t code[32] = {0x55, 0x48, 0x89, 0xe5, 0x90, 0xc3};
	struct annot *a;
	struct annot_stats st, before;
	struct released rel = {0};
	uint8_t out[8], have[8];

	(void)state;
	assert_int_equal(annot_new(&(struct annot_limits){.max_code_bytes = 64}, &a), 0);
	assert_int_equal(annot_put_shared(a, 1, 0x1000, code, 32), -EINVAL);
	annot_set_release(a, on_release, &rel);
	annot_get_stats(a, &before);
	assert_int_equal(annot_put_shared(a, 1, 0x1000, code, 32), 0);
	assert_true(annot_has_chunk(a, 0x1000, 32));
	assert_true(annot_covered(a, 0x101f));
	assert_int_equal(annot_code(a, 0x1000, 8, NULL, NULL, out, have), 8);
	assert_memory_equal(out, code, 8);
	annot_get_stats(a, &st);
	assert_int_equal(st.code_bytes, 32);
	assert_int_equal(st.shared_bytes, 32);
	assert_int_equal(st.chunks, 1);
	assert_true(st.memory < before.memory + 32 + 16 * 64); /* the chunk table, not its bytes */
	/* beside a copy of its own: both kept, the cap counts both */
	assert_int_equal(annot_put_code(a, 2, 0x2000, code, 32), 0);
	assert_int_equal(annot_put_shared(a, 3, 0x3000, code + 1, 8), -E2BIG);
	annot_get_stats(a, &st);
	assert_int_equal(st.code_bytes, 64);
	assert_int_equal(st.shared_bytes, 32);
	assert_int_equal(st.code_dropped, 1);
	annot_free(a);
	assert_int_equal(rel.n, 1); /* the refused one was never the store's */
	assert_ptr_equal(rel.seen[0], code);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counts), cmocka_unit_test(test_cap_and_growth),
	    cmocka_unit_test(test_ranges), cmocka_unit_test(test_code),
	    cmocka_unit_test(test_shared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
