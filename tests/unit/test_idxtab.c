// SPDX-License-Identifier: GPL-2.0-only
/* test_idxtab.c: unit tests of the index hash (daemon/lib/idxtab.c): interned keys keep their
 * index across growth, colliding hashes probe on, removal keeps every other key reachable
 * (backward shift, against a model), clear and release, and an index too large is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/hash.h"
#include "kprof/idxtab.h"

#define N 5000

struct keys {
	uint64_t k[N];
	bool gone[N];
	size_t n;
	struct idxtab tab;
	unsigned bits; /* hashes keep only these low bits: 0 = all (collisions on purpose) */
};

static uint64_t hash_key(const struct keys *s, uint64_t k)
{
	uint64_t h = mix64(k);

	return s->bits ? h & ((1u << s->bits) - 1) : h;
}

static uint64_t hash_idx(const void *ctx, uint32_t idx)
{
	const struct keys *s = ctx;

	return hash_key(s, s->k[idx]);
}

/* The index of k, interned if new (-1 on error). */
static long intern(struct keys *s, uint64_t k)
{
	size_t j;

	if (idxtab_reserve(&s->tab, s->n + 1, 16, hash_idx, s) < 0)
		return -1;
	idxtab_probe(&s->tab, hash_key(s, k), j)
		if (s->k[s->tab.slot[j] - 1] == k)
			return s->tab.slot[j] - 1;
	s->k[s->n] = k;
	s->tab.slot[j] = (uint32_t)++s->n;
	return (long)s->n - 1;
}

static long find(const struct keys *s, uint64_t k)
{
	size_t j;

	if (!s->tab.nslots)
		return -1;
	idxtab_probe(&s->tab, hash_key(s, k), j)
		if (s->k[s->tab.slot[j] - 1] == k)
			return s->tab.slot[j] - 1;
	return -1;
}

static void run_intern(unsigned bits)
{
	struct keys *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->bits = bits;
	for (uint64_t i = 0; i < N; i++)
		assert_int_equal(intern(s, i * 4096 + 7), (long)i);
	assert_true(s->tab.nslots >= 2 * N);
	assert_int_equal(s->tab.nslots & (s->tab.nslots - 1), 0);
	for (uint64_t i = 0; i < N; i++) {
		assert_int_equal(find(s, i * 4096 + 7), (long)i);
		assert_int_equal(intern(s, i * 4096 + 7), (long)i); /* no second entry */
	}
	assert_int_equal(s->n, N);
	assert_int_equal(find(s, 3), -1);
	idxtab_release(&s->tab);
	assert_null(s->tab.slot);
	assert_int_equal(s->tab.nslots, 0);
	free(s);
}

static void test_intern(void **state)
{
	(void)state;
	run_intern(0);
}

static void test_collisions(void **state)
{
	(void)state;
	run_intern(3); /* 8 home slots for 5000 keys: long probe runs, wrapping around */
}

static void test_remove(void **state)
{
	struct keys *s = calloc(1, sizeof(*s));
	uint64_t r = 12345;

	(void)state;
	assert_non_null(s);
	s->bits = 6;
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(intern(s, i), (long)i);
	/* Remove a pseudo-random half; the rest stays reachable, the removed are gone. */
	for (int n = 0; n < 500; n++) {
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		uint32_t i = (uint32_t)((r >> 33) % 1000);

		idxtab_remove(&s->tab, hash_idx(s, i), i, hash_idx, s);
		s->gone[i] = true;
		idxtab_remove(&s->tab, hash_idx(s, i), i, hash_idx, s); /* twice: nothing */
	}
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(find(s, i), s->gone[i] ? -1 : (long)i);
	idxtab_clear(&s->tab);
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(find(s, i), -1);
	idxtab_release(&s->tab);
	idxtab_remove(&s->tab, 1, 1, hash_idx, s); /* on an empty table: nothing */
	free(s);
}

static void test_limits(void **state)
{
	struct idxtab t = {0};
	struct keys s = {0};

	(void)state;
	assert_int_equal(idxtab_reserve(&t, (size_t)UINT32_MAX, 16, hash_idx, &s), -EOVERFLOW);
	assert_null(t.slot);
	assert_int_equal(idxtab_reserve(&t, 0, 0, hash_idx, &s), 0); /* min 2 slots */
	assert_int_equal(t.nslots, 2);
	assert_int_equal(idxtab_reserve(&t, 1, 16, hash_idx, &s), 0); /* fits: kept */
	assert_int_equal(t.nslots, 2);
	idxtab_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_collisions),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
