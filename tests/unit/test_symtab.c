// SPDX-License-Identifier: GPL-2.0-only
/* test_symtab.c: unit tests for the symtab module (links daemon/lib/symtab.c alone). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/symtab.h"

#include "../prng.h"

static struct symtab *new_table(size_t max)
{
	struct symtab *st = NULL;

	assert_int_equal(symtab_new(max, &st), 0);
	assert_non_null(st);
	return st;
}

static void add(struct symtab *st, uint64_t start, uint64_t size, const char *name)
{
	assert_int_equal(symtab_add(st, start, size, name, strlen(name)), 0);
}

/* The symbol at addr must be name [start, start + size). */
static void expect_sym(const struct symtab *st, uint64_t addr, const char *name, uint64_t start,
		       uint64_t size)
{
	const struct symtab_sym *s = symtab_lookup(st, addr);

	if (!s)
		fail_msg("no symbol at %#llx, expected %s", (unsigned long long)addr, name);
	assert_string_equal(s->name, name);
	assert_int_equal(s->start, start);
	assert_int_equal(s->size, size);
}

static void expect_none(const struct symtab *st, uint64_t addr)
{
	const struct symtab_sym *s = symtab_lookup(st, addr);

	if (s)
		fail_msg("%#llx: expected no symbol, got %s", (unsigned long long)addr, s->name);
}

static void test_basics(void **state)
{
	struct symtab *st = new_table(100);
	const struct symtab_sym *s;
	char name[3] = {'b', 'x', 'y'};

	(void)state;
	add(st, 0x3000, 0x100, "c");
	add(st, 0x1000, 0x100, "a");
	assert_int_equal(symtab_add(st, 0x2000, 0x100, name, 1), 0); /* not NUL-terminated */
	assert_int_equal(symtab_count(st), 3);
	assert_int_equal(symtab_finish(st, 0), 0);
	assert_int_equal(symtab_count(st), 3);

	s = symtab_at(st, 0);
	assert_string_equal(s->name, "a");
	assert_string_equal(symtab_at(st, 1)->name, "b");
	assert_string_equal(symtab_at(st, 2)->name, "c");
	assert_null(symtab_at(st, 3));

	expect_sym(st, 0x1050, "a", 0x1000, 0x100);
	expect_sym(st, 0x2000, "b", 0x2000, 0x100);
	expect_sym(st, 0x30ff, "c", 0x3000, 0x100);
	assert_ptr_equal(symtab_lookup(st, 0x1001), s);
	/* The index of what a lookup found: what per-symbol tables of a caller are kept by. */
	assert_int_equal(symtab_index(st, s), 0);
	assert_int_equal(symtab_index(st, symtab_lookup(st, 0x2080)), 1);
	assert_int_equal(symtab_index(st, symtab_lookup(st, 0x30ff)), 2);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(symtab_index(st, symtab_at(st, i)), i);
	assert_true(symtab_memory(st) > 3 * sizeof(struct symtab_sym));
	symtab_free(st);
	symtab_free(NULL);
}

static void test_boundaries(void **state)
{
	struct symtab *st = new_table(100);

	(void)state;
	add(st, 0x1000, 0x10, "a");
	add(st, 0x1010, 0x10, "b"); /* adjacent */
	add(st, 0x1100, 1, "one");
	assert_int_equal(symtab_finish(st, 0), 0);

	expect_none(st, 0);
	expect_none(st, 0xfff);
	expect_sym(st, 0x1000, "a", 0x1000, 0x10);
	expect_sym(st, 0x100f, "a", 0x1000, 0x10);
	expect_sym(st, 0x1010, "b", 0x1010, 0x10);
	expect_sym(st, 0x101f, "b", 0x1010, 0x10);
	expect_none(st, 0x1020);
	expect_none(st, 0x10ff);
	expect_sym(st, 0x1100, "one", 0x1100, 1);
	expect_none(st, 0x1101);
	expect_none(st, UINT64_MAX);
	symtab_free(st);
}

static void test_implicit_sizes(void **state)
{
	struct symtab *st = new_table(100);

	(void)state;
	/* kallsyms style: no sizes */
	add(st, 0x100, 0, "A");
	add(st, 0x180, 0, "B");
	add(st, 0x200, 0x10, "C");
	add(st, 0x300, 0, "D");
	assert_int_equal(symtab_finish(st, 0x1000), 0);
	assert_int_equal(symtab_count(st), 4);
	expect_sym(st, 0x17f, "A", 0x100, 0x80);
	expect_sym(st, 0x180, "B", 0x180, 0x80);
	expect_sym(st, 0x1ff, "B", 0x180, 0x80);
	expect_none(st, 0x210);
	expect_sym(st, 0x12ff, "D", 0x300, 0x1000);
	expect_none(st, 0x1300);

	/* capped */
	assert_int_equal(symtab_finish(st, 0x40), 0);
	expect_sym(st, 0x13f, "A", 0x100, 0x40);
	expect_none(st, 0x140);
	expect_sym(st, 0x33f, "D", 0x300, 0x40);
	expect_none(st, 0x340);

	/* no cap: up to the next start; the last one has no size and is left out */
	assert_int_equal(symtab_finish(st, 0), 0);
	assert_int_equal(symtab_count(st), 3);
	expect_sym(st, 0x17f, "A", 0x100, 0x80);
	expect_none(st, 0x300);
	assert_string_equal(symtab_at(st, 2)->name, "C");

	/* ... but comes back once something follows it */
	add(st, 0x380, 0x8, "E");
	assert_int_equal(symtab_finish(st, 0), 0);
	assert_int_equal(symtab_count(st), 5);
	expect_sym(st, 0x37f, "D", 0x300, 0x80);
	expect_sym(st, 0x387, "E", 0x380, 0x8);

	/* a new symbol between two implicit ones shrinks the first on re-finish */
	add(st, 0x140, 0, "A2");
	assert_int_equal(symtab_finish(st, 0), 0);
	expect_sym(st, 0x13f, "A", 0x100, 0x40);
	expect_sym(st, 0x140, "A2", 0x140, 0x40);
	symtab_free(st);

	/* implicit and sized at the same start: the sized one is inner */
	st = new_table(100);
	add(st, 0x100, 0x10, "x");
	add(st, 0x100, 0, "y");
	add(st, 0x180, 0x10, "z");
	assert_int_equal(symtab_finish(st, 0), 0);
	expect_sym(st, 0x105, "x", 0x100, 0x10);
	expect_sym(st, 0x120, "y", 0x100, 0x80);
	expect_sym(st, 0x180, "z", 0x180, 0x10);
	symtab_free(st);

	/* the last symbol at the very top of the address space */
	st = new_table(100);
	add(st, UINT64_MAX - 5, 0, "top");
	add(st, UINT64_MAX, 0, "past");
	assert_int_equal(symtab_finish(st, 0x100), 0);
	expect_sym(st, UINT64_MAX - 1, "top", UINT64_MAX - 5, 5);
	expect_none(st, UINT64_MAX); /* no size left for "past" */
	assert_int_equal(symtab_count(st), 1);
	symtab_free(st);
}

static void test_duplicates(void **state)
{
	struct symtab *st = new_table(100);

	(void)state;
	add(st, 0x1000, 0x10, "f");
	add(st, 0x1000, 0x10, "f");
	add(st, 0x2000, 0, "g");
	add(st, 0x1000, 0x10, "f");
	add(st, 0x2000, 0, "g");
	assert_int_equal(symtab_finish(st, 0x100), 0);
	assert_int_equal(symtab_count(st), 2);
	expect_sym(st, 0x1000, "f", 0x1000, 0x10);
	expect_sym(st, 0x20ff, "g", 0x2000, 0x100);
	symtab_free(st);

	/* aliases of one range are all kept; the plainest name is returned */
	st = new_table(100);
	add(st, 0x1000, 0x10, "__libc_malloc");
	add(st, 0x1000, 0x10, "malloc");
	add(st, 0x1000, 0x10, "__malloc");
	add(st, 0x2000, 0x10, "memcpy_long");
	add(st, 0x2000, 0x10, "memcpy");
	add(st, 0x3000, 0x10, "b");
	add(st, 0x3000, 0x10, "a");
	assert_int_equal(symtab_finish(st, 0), 0);
	assert_int_equal(symtab_count(st), 7);
	expect_sym(st, 0x1008, "malloc", 0x1000, 0x10);
	expect_sym(st, 0x2008, "memcpy", 0x2000, 0x10);
	expect_sym(st, 0x3008, "a", 0x3000, 0x10);
	symtab_free(st);

	/* an implicit symbol that ends up equal to a sized one is redundant */
	st = new_table(100);
	add(st, 0x1000, 0, "f");
	add(st, 0x1000, 0x10, "f");
	add(st, 0x1010, 0x10, "g");
	assert_int_equal(symtab_finish(st, 0), 0);
	assert_int_equal(symtab_count(st), 2);
	expect_sym(st, 0x100f, "f", 0x1000, 0x10);
	/* but not once the cap makes it smaller: then it is an inner symbol of its own */
	assert_int_equal(symtab_finish(st, 8), 0);
	assert_int_equal(symtab_count(st), 3);
	expect_sym(st, 0x1007, "f", 0x1000, 8);
	expect_sym(st, 0x1008, "f", 0x1000, 0x10);
	symtab_free(st);
}

static void test_nested(void **state)
{
	struct symtab *st = new_table(100);

	(void)state;
	add(st, 0x1000, 0x1000, "outer");
	add(st, 0x1400, 0x100, "inner");
	add(st, 0x1420, 0x10, "innermost");
	add(st, 0x1800, 0x100, "inner2");
	add(st, 0x3000, 0x100, "a");
	add(st, 0x3080, 0x100, "b"); /* partial overlap */
	assert_int_equal(symtab_finish(st, 0), 0);

	expect_sym(st, 0x1000, "outer", 0x1000, 0x1000);
	expect_sym(st, 0x13ff, "outer", 0x1000, 0x1000);
	expect_sym(st, 0x1400, "inner", 0x1400, 0x100);
	expect_sym(st, 0x1425, "innermost", 0x1420, 0x10);
	expect_sym(st, 0x1430, "inner", 0x1400, 0x100);
	expect_sym(st, 0x1500, "outer", 0x1000, 0x1000);
	expect_sym(st, 0x17ff, "outer", 0x1000, 0x1000);
	expect_sym(st, 0x1850, "inner2", 0x1800, 0x100);
	expect_sym(st, 0x1900, "outer", 0x1000, 0x1000);
	expect_sym(st, 0x1fff, "outer", 0x1000, 0x1000);
	expect_none(st, 0x2000);
	expect_sym(st, 0x3050, "a", 0x3000, 0x100);
	expect_sym(st, 0x3080, "b", 0x3080, 0x100);
	expect_sym(st, 0x30ff, "b", 0x3080, 0x100);
	expect_sym(st, 0x317f, "b", 0x3080, 0x100);
	expect_none(st, 0x3180);

	/* same start, different sizes: the smallest containing one */
	add(st, 0x5000, 0x100, "big");
	add(st, 0x5000, 0x10, "small");
	assert_int_equal(symtab_finish(st, 0), 0);
	expect_sym(st, 0x5008, "small", 0x5000, 0x10);
	expect_sym(st, 0x5010, "big", 0x5000, 0x100);
	symtab_free(st);
}

/* Deep nesting: [i, 2n - i) for i < n, plus a run of small siblings inside the innermost. */
static void test_deep_nesting(void **state)
{
	const uint64_t n = 3000;
	struct symtab *st = new_table(10 * n);
	char name[32];
	uint64_t a, i;

	(void)state;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "n%llu", (unsigned long long)i);
		add(st, 0x10000 + i, 2 * n - 2 * i, name);
	}
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "s%llu", (unsigned long long)i);
		add(st, 0x10000 + n + 2 * i, 1, name);
	}
	assert_int_equal(symtab_finish(st, 0), 0);
	for (a = 0x10000 - 1; a <= 0x10000 + 2 * n; a++) {
		const struct symtab_sym *s = symtab_lookup(st, a);
		uint64_t off = a - 0x10000;

		if (a < 0x10000 || off >= 2 * n) {
			assert_null(s);
		} else if (off >= n && off < n + 400 && (off - n) % 2 == 0) {
			snprintf(name, sizeof(name), "s%llu", (unsigned long long)(off - n) / 2);
			assert_string_equal(s->name, name);
		} else {
			/* innermost nesting level containing off */
			uint64_t lvl = off < n ? off : 2 * n - 1 - off;

			if (lvl >= n)
				lvl = n - 1;
			snprintf(name, sizeof(name), "n%llu", (unsigned long long)lvl);
			assert_non_null(s);
			assert_string_equal(s->name, name);
		}
	}
	symtab_free(st);
}

static void test_invalid(void **state)
{
	struct symtab *st = new_table(100);

	(void)state;
	assert_int_equal(symtab_add(st, UINT64_MAX, 1, "x", 1), -EINVAL);
	assert_int_equal(symtab_add(st, 1, UINT64_MAX, "x", 1), -EINVAL);
	assert_int_equal(symtab_add(st, UINT64_MAX - 0xf, 0x11, "x", 1), -EINVAL);
	assert_int_equal(symtab_add(st, 0x10, 0, "", 0), -EINVAL);
	assert_int_equal(symtab_add(st, 0x10, 0, NULL, 3), -EINVAL);
	assert_int_equal(symtab_add(st, 0x10, 0, "a\0b", 3), -EINVAL);
	assert_int_equal(symtab_count(st), 0);

	assert_int_equal(symtab_add(st, UINT64_MAX - 0xf, 0xf, "top", 3), 0);
	assert_int_equal(symtab_add(st, 0, UINT64_MAX, "all", 3), 0);
	assert_int_equal(symtab_finish(st, 0), 0);
	expect_sym(st, 0, "all", 0, UINT64_MAX);
	expect_sym(st, UINT64_MAX - 0x10, "all", 0, UINT64_MAX);
	expect_sym(st, UINT64_MAX - 0xf, "top", UINT64_MAX - 0xf, 0xf);
	expect_sym(st, UINT64_MAX - 1, "top", UINT64_MAX - 0xf, 0xf);
	expect_none(st, UINT64_MAX);
	symtab_free(st);

	assert_int_equal(symtab_new(10, NULL), -EINVAL);
}

static void test_cap(void **state)
{
	struct symtab *st = new_table(3);

	(void)state;
	add(st, 0x10, 1, "a");
	add(st, 0x20, 1, "b");
	add(st, 0x20, 1, "b");
	assert_int_equal(symtab_add(st, 0x30, 1, "c", 1), -E2BIG);
	assert_int_equal(symtab_count(st), 3);
	/* finishing drops the duplicate, which frees a slot */
	assert_int_equal(symtab_finish(st, 0), 0);
	assert_int_equal(symtab_count(st), 2);
	add(st, 0x30, 1, "c");
	assert_int_equal(symtab_add(st, 0x40, 1, "d", 1), -E2BIG);
	assert_int_equal(symtab_finish(st, 0), 0);
	expect_sym(st, 0x30, "c", 0x30, 1);
	expect_none(st, 0x40);
	symtab_free(st);

	st = new_table(0);
	assert_int_equal(symtab_add(st, 0x10, 1, "a", 1), -E2BIG);
	symtab_free(st);
}

static void test_empty(void **state)
{
	struct symtab *st = new_table(10);

	(void)state;
	expect_none(st, 0);
	assert_int_equal(symtab_finish(st, 0x1000), 0);
	assert_int_equal(symtab_count(st), 0);
	assert_null(symtab_at(st, 0));
	expect_none(st, 0);
	expect_none(st, 0x1234);
	expect_none(st, UINT64_MAX);
	assert_null(symtab_lookup(NULL, 0));
	assert_int_equal(symtab_count(NULL), 0);
	symtab_free(st);
}

static void test_unfinished(void **state)
{
	struct symtab *st = new_table(10);

	(void)state;
	add(st, 0x1000, 0x10, "a");
	expect_none(st, 0x1000);
	assert_null(symtab_at(st, 0));
	assert_int_equal(symtab_finish(st, 0), 0);
	expect_sym(st, 0x1000, "a", 0x1000, 0x10);
	add(st, 0x2000, 0x10, "b");
	expect_none(st, 0x1000); /* un-finished by the add */
	expect_none(st, 0x2000);
	assert_int_equal(symtab_finish(st, 0), 0);
	expect_sym(st, 0x1000, "a", 0x1000, 0x10);
	expect_sym(st, 0x2000, "b", 0x2000, 0x10);
	symtab_free(st);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return prng_next(&rng_state);
}

struct raw {
	uint64_t start, size;
};

/* The reference: the last symbol in address order that contains addr. */
static const struct symtab_sym *naive_lookup(const struct symtab *st, uint64_t addr)
{
	const struct symtab_sym *best = NULL, *s;
	size_t i;

	for (i = 0; (s = symtab_at(st, i)); i++) {
		if (addr >= s->start && addr - s->start < s->size)
			best = s;
	}
	return best;
}

static void check_order(const struct symtab *st)
{
	const struct symtab_sym *p = NULL, *s;
	size_t i;

	for (i = 0; (s = symtab_at(st, i)); p = s, i++) {
		assert_true(s->size > 0);
		assert_true(s->size <= UINT64_MAX - s->start);
		if (p) {
			assert_true(p->start <= s->start);
			if (p->start == s->start)
				assert_true(p->size >= s->size);
		}
	}
	assert_int_equal(i, symtab_count(st));
}

static void random_round(uint64_t seed, size_t n, uint64_t space, uint64_t max_implicit)
{
	struct symtab *st = new_table(n);
	struct raw *raw = calloc(n, sizeof(*raw));
	char name[32];
	size_t i, k, sized = 0;

	assert_non_null(raw);
	rng_state = seed;
	for (i = 0; i < n; i++) {
		uint64_t r = rnd() % 100;

		raw[i].start = rnd() % space;
		if (r < 20)
			raw[i].size = 0; /* implicit */
		else if (r < 85)
			raw[i].size = 1 + rnd() % 64;
		else if (r < 97)
			raw[i].size = 1 + rnd() % (space / 8);
		else
			raw[i].size = 1 + rnd() % space; /* huge, many nested inside */
		if (i && r % 7 == 0)
			raw[i].start = raw[rnd() % i].start; /* shared starts */
		sized += raw[i].size != 0;
		snprintf(name, sizeof(name), "f%zu", i);
		add(st, raw[i].start, raw[i].size, name);
	}
	assert_int_equal(symtab_finish(st, max_implicit), 0);
	check_order(st);
	assert_true(symtab_count(st) >= sized);

	/* every implicit symbol got the documented size */
	for (i = 0; i < n; i++) {
		uint64_t next = UINT64_MAX, want;
		const struct symtab_sym *s = NULL, *t;
		int has_next = 0;

		if (raw[i].size)
			continue;
		for (k = 0; k < n; k++) {
			if (raw[k].start > raw[i].start && raw[k].start <= next) {
				next = raw[k].start;
				has_next = 1;
			}
		}
		want = has_next ? next - raw[i].start : UINT64_MAX - raw[i].start;
		if (max_implicit && want > max_implicit)
			want = max_implicit;
		if (!has_next && !max_implicit)
			want = 0;
		snprintf(name, sizeof(name), "f%zu", i);
		for (k = 0; (t = symtab_at(st, k)); k++) {
			if (strcmp(t->name, name) == 0)
				s = t;
		}
		if (want == 0) {
			assert_null(s);
		} else {
			assert_non_null(s);
			assert_int_equal(s->start, raw[i].start);
			assert_int_equal(s->size, want);
		}
	}

	for (i = 0; i < 20000; i++) {
		uint64_t addr;
		const struct symtab_sym *s;

		switch (i % 4) {
		case 0:
			addr = rnd() % (space + space / 4);
			break;
		case 1: /* a start */
			addr = raw[rnd() % n].start;
			break;
		case 2: /* just past an end */
			k = rnd() % n;
			addr = raw[k].start + raw[k].size;
			break;
		default:
			addr = raw[rnd() % n].start - 1;
			break;
		}
		s = symtab_lookup(st, addr);
		assert_ptr_equal(s, naive_lookup(st, addr));
		if (s)
			assert_true(addr >= s->start && addr - s->start < s->size);
	}
	free(raw);
	symtab_free(st);
}

static void test_random(void **state)
{
	(void)state;
	random_round(1, 2000, 1 << 20, 0);
	random_round(2, 2000, 1 << 16, 0x100); /* dense: lots of overlap */
	random_round(3, 500, 4096, 0x10);      /* very dense */
	random_round(4, 3000, UINT64_C(1) << 40, 1 << 20);
	random_round(5, 50, 1 << 10, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basics),	   cmocka_unit_test(test_boundaries),
	    cmocka_unit_test(test_implicit_sizes), cmocka_unit_test(test_duplicates),
	    cmocka_unit_test(test_nested),	   cmocka_unit_test(test_deep_nesting),
	    cmocka_unit_test(test_invalid),	   cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_empty),	   cmocka_unit_test(test_unfinished),
	    cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
