// SPDX-License-Identifier: GPL-2.0-only
/* test_profile.c: unit tests for the profile module (links daemon/lib/profile.c alone).
 *
 * Flat counts are checked against hand-computed values and, in the randomized test, against a
 * naive recomputation over every stack added; folded output is compared byte for byte.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/profile.h"
#include "kprof/strpool.h"

#include "../prng.h"

static struct profile *new_profile(const struct profile_limits *lim)
{
	struct profile *p = NULL;

	assert_int_equal(profile_new(lim, &p), 0);
	assert_non_null(p);
	return p;
}

static uint32_t intern(struct profile *p, const char *name, const char *module, uint64_t start,
		       enum profile_kind kind)
{
	int id = profile_intern(p, name, module, start, kind);

	if (id < 0)
		fail_msg("intern %s in %s: %d", name, module, id);
	return (uint32_t)id;
}

static uint32_t fn(struct profile *p, const char *name)
{
	return intern(p, name, "/usr/bin/app", 0x1000 + strlen(name), PROFILE_KIND_NATIVE);
}

static void expect_flat(const struct profile *p, uint32_t id, uint64_t self, uint64_t total)
{
	const struct profile_func *f = profile_func_get(p, id);

	assert_non_null(f);
	if (f->self != self || f->total != total)
		fail_msg("%s: self %llu total %llu, expected self %llu total %llu", f->name,
			 (unsigned long long)f->self, (unsigned long long)f->total,
			 (unsigned long long)self, (unsigned long long)total);
}

static void expect_folded(const struct profile *p, const char *want)
{
	char *text = NULL;
	size_t len = 12345;

	assert_int_equal(profile_folded(p, &text, &len), 0);
	assert_non_null(text);
	assert_string_equal(text, want);
	assert_int_equal(len, strlen(want));
	assert_int_equal(strlen(text), len);
	free(text);
}

static struct profile_stats stats(const struct profile *p)
{
	struct profile_stats st;

	memset(&st, 0xa5, sizeof(st));
	profile_get_stats(p, &st);
	return st;
}

static void test_intern(void **state)
{
	struct profile *p = new_profile(NULL);
	const struct profile_func *f;
	uint32_t a, ids[8];

	(void)state;
	assert_int_equal(profile_nfuncs(p), 0);
	assert_null(profile_func_get(p, 0));

	a = intern(p, "main", "/usr/bin/app", 0x1100, PROFILE_KIND_NATIVE);
	assert_int_equal(a, 0);
	/* the same key gives the same id, however often */
	assert_int_equal(intern(p, "main", "/usr/bin/app", 0x1100, PROFILE_KIND_NATIVE), a);
	assert_int_equal(intern(p, "main", "/usr/bin/app", 0x1100, PROFILE_KIND_NATIVE), a);
	assert_int_equal(profile_nfuncs(p), 1);

	/* any part of the key differing gives a new id */
	ids[0] = intern(p, "main", "/usr/lib/libapp.so", 0x1100, PROFILE_KIND_NATIVE);
	ids[1] = intern(p, "main", "/usr/bin/app", 0x1200, PROFILE_KIND_NATIVE);
	ids[2] = intern(p, "main", "/usr/bin/app", 0x1100, PROFILE_KIND_JIT);
	ids[3] = intern(p, "main", "/usr/bin/app", 0x1100, PROFILE_KIND_KERNEL);
	ids[4] = intern(p, "main", "/usr/bin/app", 0x1100, PROFILE_KIND_UNKNOWN);
	ids[5] = intern(p, "main2", "/usr/bin/app", 0x1100, PROFILE_KIND_NATIVE);
	ids[6] = intern(p, "", "", 0, PROFILE_KIND_UNKNOWN);
	/* name and module are not confused by concatenation: "ab"+"c" vs "a"+"bc" */
	ids[7] = intern(p, "ab", "c", 0, PROFILE_KIND_NATIVE);
	assert_int_equal(intern(p, "a", "bc", 0, PROFILE_KIND_NATIVE), 9);
	for (int i = 0; i < 8; i++)
		assert_int_equal(ids[i], i + 1);
	assert_int_equal(profile_nfuncs(p), 10);

	/* ... and each is found again */
	assert_int_equal(intern(p, "main", "/usr/bin/app", 0x1100, PROFILE_KIND_JIT), ids[2]);
	assert_int_equal(intern(p, "main", "/usr/lib/libapp.so", 0x1100, PROFILE_KIND_NATIVE),
			 ids[0]);
	assert_int_equal(intern(p, "", "", 0, PROFILE_KIND_UNKNOWN), ids[6]);
	assert_int_equal(profile_nfuncs(p), 10);

	f = profile_func_get(p, ids[1]);
	assert_non_null(f);
	assert_string_equal(f->name, "main");
	assert_string_equal(f->module, "/usr/bin/app");
	assert_int_equal(f->start, 0x1200);
	assert_int_equal(f->kind, PROFILE_KIND_NATIVE);
	assert_int_equal(f->self, 0);
	assert_int_equal(f->total, 0);
	assert_int_equal(profile_func_get(p, ids[3])->kind, PROFILE_KIND_KERNEL);
	assert_null(profile_func_get(p, 10));
	assert_null(profile_func_get(p, UINT32_MAX));

	/* the strings are copied */
	{
		char name[] = "volatile";
		uint32_t v = intern(p, name, "/m", 1, PROFILE_KIND_JIT);

		name[0] = 'X';
		assert_string_equal(profile_func_get(p, v)->name, "volatile");
		assert_int_equal(intern(p, "volatile", "/m", 1, PROFILE_KIND_JIT), v);
	}

	assert_int_equal(profile_nfuncs(p), 11);
	profile_free(p);
	profile_free(NULL);
}

/* Many functions: the function table is re-indexed several times and every id stays valid. */
/* A function's source line: set once, not part of its identity. */
static void test_source(void **state)
{
	struct profile *p;
	int id;

	(void)state;
	assert_int_equal(profile_new(NULL, &p), 0);
	id = profile_intern(p, "JS:*f", "jit-1.dump", 0x1000, PROFILE_KIND_JIT);
	assert_true(id >= 0);
	assert_null(profile_func_get(p, id)->file);
	assert_int_equal(profile_set_source(p, id, "/app/x.js", 12), 0);
	assert_int_equal(profile_set_source(p, id, "/app/y.js", 3), 0); /* the first stays */
	assert_string_equal(profile_func_get(p, id)->file, "/app/x.js");
	assert_int_equal(profile_func_get(p, id)->line, 12);
	assert_int_equal(profile_intern(p, "JS:*f", "jit-1.dump", 0x1000, PROFILE_KIND_JIT), id);
	assert_int_equal(profile_set_source(p, id + 1, "/app/x.js", 1), -EINVAL);
	assert_int_equal(profile_set_source(p, id, "", 1), -EINVAL);
	profile_free(p);
}

static void test_intern_many(void **state)
{
	struct profile *p = new_profile(NULL);
	char name[32];

	(void)state;
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		assert_int_equal(intern(p, name, "/m", (uint64_t)i * 16, PROFILE_KIND_JIT), i);
	}
	for (int i = 4999; i >= 0; i--) {
		snprintf(name, sizeof(name), "f%d", i);
		assert_int_equal(intern(p, name, "/m", (uint64_t)i * 16, PROFILE_KIND_JIT), i);
		assert_string_equal(profile_func_get(p, i)->name, name);
	}
	assert_int_equal(profile_nfuncs(p), 5000);
	assert_int_equal(stats(p).funcs, 5000);
	profile_free(p);
}

struct collected {
	int calls;
	int stop_at; /* return -ECANCELED on this call (1-based), 0: never */
	char text[1024];
};

static int collect_stack(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count,
			 void *userdata)
{
	(void)tid;
	struct collected *c = userdata;
	size_t len = strlen(c->text);

	c->calls++;
	if (c->stop_at && c->calls == c->stop_at)
		return -ECANCELED;
	for (size_t i = 0; i < n; i++)
		len += snprintf(c->text + len, sizeof(c->text) - len, "%s%u", i ? "," : "", ids[i]);
	snprintf(c->text + len, sizeof(c->text) - len, "=%llu|", (unsigned long long)count);
	return 0;
}

static void test_add_flat(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t m, a, b, c;
	struct profile_stats st;
	struct collected col = {0};

	(void)state;
	m = fn(p, "main");
	a = fn(p, "a");
	b = fn(p, "b");
	c = fn(p, "c");
	{
		uint32_t s1[] = {m, a, b}, s2[] = {m, a}, s3[] = {m, c}, s4[] = {b};

		assert_int_equal(profile_add(p, s1, 3, 3), 0);
		assert_int_equal(profile_add(p, s2, 2, 2), 0);
		assert_int_equal(profile_add(p, s3, 2, 1), 0);
		assert_int_equal(profile_add(p, s1, 3, 4), 0); /* existing stack */
		assert_int_equal(profile_add(p, s4, 1, 10), 0);
	}
	/* self: the leaf; total: every function on the stack */
	expect_flat(p, m, 0, 10);
	expect_flat(p, a, 2, 9);
	expect_flat(p, b, 17, 17);
	expect_flat(p, c, 1, 1);

	st = stats(p);
	assert_int_equal(st.samples, 20);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.funcs, 4);
	assert_int_equal(st.stacks, 4);
	assert_int_equal(st.stack_ids, 3 + 2 + 2 + 1);
	assert_true(st.memory > sizeof(struct profile_func) * 4);

	/* distinct stacks, in first-seen order, root first, with their summed counts */
	assert_int_equal(profile_foreach_stack(p, collect_stack, &col), 0);
	assert_int_equal(col.calls, 4);
	assert_string_equal(col.text, "0,1,2=7|0,1=2|0,3=1|2=10|");

	/* a negative return stops the walk and is passed on */
	col = (struct collected){.stop_at = 2};
	assert_int_equal(profile_foreach_stack(p, collect_stack, &col), -ECANCELED);
	assert_int_equal(col.calls, 2);
	assert_string_equal(col.text, "0,1,2=7|");

	/* a stack and its reversal are different stacks */
	{
		uint32_t r[] = {b, a, m};

		assert_int_equal(profile_add(p, r, 3, 1), 0);
		assert_int_equal(stats(p).stacks, 5);
		expect_flat(p, m, 1, 11);
		expect_flat(p, b, 17, 18);
	}
	profile_free(p);
}

static void test_recursion(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t a, b, c;

	(void)state;
	a = fn(p, "a");
	b = fn(p, "b");
	c = fn(p, "c");
	{
		uint32_t abab[] = {a, b, a, b}, aaa[] = {a, a, a}, abac[] = {a, b, a, c};

		assert_int_equal(profile_add(p, abab, 4, 5), 0);
		expect_flat(p, a, 0, 5);
		expect_flat(p, b, 5, 5);

		assert_int_equal(profile_add(p, aaa, 3, 2), 0);
		expect_flat(p, a, 2, 7);
		expect_flat(p, b, 5, 5);

		assert_int_equal(profile_add(p, abac, 4, 1), 0);
		expect_flat(p, a, 2, 8);
		expect_flat(p, b, 5, 6);
		expect_flat(p, c, 1, 1);

		/* again, so the per-stack marking is also right for a known stack */
		assert_int_equal(profile_add(p, abab, 4, 1), 0);
		expect_flat(p, a, 2, 9);
		expect_flat(p, b, 6, 7);
	}
	assert_int_equal(stats(p).samples, 9);
	profile_free(p);
}

static void expect_order(const struct profile *p, const char *const *want, size_t n)
{
	uint32_t *v = NULL;
	size_t vn = 999;

	assert_int_equal(profile_sorted(p, &v, &vn), 0);
	assert_non_null(v);
	assert_int_equal(vn, n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(profile_func_get(p, v[i])->name, want[i]))
			fail_msg("sorted[%zu] is %s, expected %s", i,
				 profile_func_get(p, v[i])->name, want[i]);
	free(v);
}

static void test_sorted(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t r, x, y, z, a, b;

	(void)state;
	expect_order(p, NULL, 0); /* empty profile: n 0, still a buffer to free */

	/* interned in an order that differs from the expected one */
	fn(p, "unused_b");
	b = fn(p, "b");
	z = fn(p, "z");
	r = fn(p, "root");
	a = fn(p, "a");
	fn(p, "unused_a");
	y = fn(p, "y");
	x = fn(p, "x");
	{
		uint32_t rz[] = {r, z}, ryy[] = {r, y, x, y}, ra[] = {r, a}, rb[] = {r, b};
		uint32_t rx[] = {r, x};

		assert_int_equal(profile_add(p, rz, 2, 5), 0);	/* z: self 5, total 5 */
		assert_int_equal(profile_add(p, ryy, 4, 5), 0); /* y: self 5, total 5 (+2 below) */
		assert_int_equal(profile_add(p, rx, 2, 1), 0);
		assert_int_equal(profile_add(p, ra, 2, 1), 0); /* a, b: self 1, total 1 */
		assert_int_equal(profile_add(p, rb, 2, 1), 0);
		{
			uint32_t ry[] = {r, y, r};

			assert_int_equal(profile_add(p, ry, 3, 2), 0); /* root self 2 */
		}
	}
	expect_flat(p, y, 5, 7);
	expect_flat(p, z, 5, 5);
	expect_flat(p, x, 1, 6);
	expect_flat(p, a, 1, 1);
	expect_flat(p, r, 2, 15);
	{
		/* self desc; then total desc (y before z, x before a/b); then name (a before b);
		 * functions never sampled last, by name */
		const char *want[] = {"y", "z", "root", "x", "a", "b", "unused_a", "unused_b"};

		expect_order(p, want, 8);
	}
	profile_free(p);
}

static void test_folded(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t m, semi, nl, libc, anon, jitdel, named_unknown, native_unknown, semimod;

	(void)state;
	expect_folded(p, "");

	m = fn(p, "main");
	semi = fn(p, "ns;fn");
	nl = fn(p, "two\nlines\tand\x7f");
	libc = intern(p, "[unknown]", "libc.so.6", 0, PROFILE_KIND_UNKNOWN);
	anon = intern(p, "[unknown]", "[anon]", 0, PROFILE_KIND_UNKNOWN);
	jitdel = intern(p, "jit_fn", "/memfd:minijit (deleted)", 0x7f00, PROFILE_KIND_JIT);
	/* only an unresolved frame (kind UNKNOWN and named "[unknown]") is named after its module
	 */
	named_unknown = intern(p, "[truncated]", "[kprof]", 0, PROFILE_KIND_UNKNOWN);
	native_unknown = intern(p, "[unknown]", "/usr/bin/app", 0, PROFILE_KIND_NATIVE);
	semimod = intern(p, "[unknown]", "/opt/a;b.so", 0, PROFILE_KIND_UNKNOWN);
	{
		uint32_t s1[] = {m, semi, nl}, s2[] = {m, libc}, s3[] = {anon, jitdel};
		uint32_t s4[] = {named_unknown, m}, s5[] = {m, native_unknown, semimod};
		uint32_t s6[] = {m};

		assert_int_equal(profile_add(p, s1, 3, 3), 0);
		assert_int_equal(profile_add(p, s2, 2, 12), 0);
		assert_int_equal(profile_add(p, s3, 2, 1), 0);
		assert_int_equal(profile_add(p, s6, 0, 4), 0); /* no line for an empty stack */
		assert_int_equal(profile_add(p, s4, 2, 18446744073709551615ULL), 0);
		assert_int_equal(profile_add(p, s5, 3, 7), 0);
		assert_int_equal(profile_add(p, s1, 3, 1), 0);
		assert_int_equal(profile_add(p, s6, 1, 1000000), 0);
	}
	expect_folded(p, "main;ns:fn;two?lines?and? 4\n"
			 "main;[libc.so.6] 12\n"
			 "[anon];jit_fn 1\n"
			 "[truncated];main 18446744073709551615\n"
			 "main;[unknown];[/opt/a:b.so] 7\n"
			 "main 1000000\n");
	/* the names themselves are untouched */
	assert_string_equal(profile_func_get(p, semi)->name, "ns;fn");
	assert_string_equal(profile_func_get(p, libc)->name, "[unknown]");
	profile_free(p);
}

/* Folded text is built in one buffer grown per stack: many long lines must all come out. */
static void test_folded_large(void **state)
{
	struct profile *p = new_profile(NULL);
	char name[200], *text = NULL, *line;
	uint32_t ids[64];
	size_t len, lines = 0;

	(void)state;
	for (int i = 0; i < 64; i++) {
		memset(name, 'a' + i % 26, 150);
		snprintf(name + 150, sizeof(name) - 150, "%d", i);
		ids[i] = fn(p, name);
	}
	for (int s = 0; s < 300; s++) {
		ids[0] = (uint32_t)(s % 64);
		assert_int_equal(profile_add(p, ids, 1 + s % 64, s + 1), 0);
	}
	assert_int_equal(profile_folded(p, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	for (line = text; *line; lines++) {
		char *nl = strchr(line, '\n'), *sp;

		assert_non_null(nl);
		sp = memrchr(line, ' ', nl - line);
		assert_non_null(sp);
		assert_true(strtoull(sp + 1, NULL, 10) >= 1);
		line = nl + 1;
	}
	assert_int_equal(lines, stats(p).stacks);
	free(text);
	profile_free(p);
}

static void test_unknown_ids(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t a = fn(p, "a"), b = fn(p, "b");
	uint32_t bad1[] = {a, 2}, bad2[] = {UINT32_MAX}, bad3[] = {2, a, b}, ok[] = {a, b};
	struct profile_stats st;

	(void)state;
	assert_int_equal(profile_add(p, bad1, 2, 5), -EINVAL);
	assert_int_equal(profile_add(p, bad2, 1, 5), -EINVAL);
	assert_int_equal(profile_add(p, bad3, 3, 5), -EINVAL);
	st = stats(p);
	assert_int_equal(st.samples, 0);
	assert_int_equal(st.stacks, 0);
	assert_int_equal(st.stack_ids, 0);
	expect_flat(p, a, 0, 0);
	expect_flat(p, b, 0, 0);

	assert_int_equal(profile_add(p, ok, 2, 1), 0);
	assert_int_equal(profile_add(p, bad1, 2, 5), -EINVAL);
	expect_flat(p, a, 0, 1);
	expect_flat(p, b, 1, 1);
	assert_int_equal(stats(p).samples, 1);
	profile_free(p);
}

static void test_empty_stack(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t a = fn(p, "a"), b = fn(p, "b"), one[] = {a}, two[] = {b, b};
	struct profile_stats st;
	struct collected col = {0};

	(void)state;
	assert_int_equal(profile_add(p, one, 1, 1), 0);
	assert_int_equal(profile_add(p, two, 0, 7), 0);
	assert_int_equal(profile_add(p, one, 0, 2), 0);
	expect_flat(p, a, 1, 1);
	expect_flat(p, b, 0, 0);
	st = stats(p);
	assert_int_equal(st.samples, 10);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.stacks, 2); /* both n = 0 adds are the one empty stack */
	assert_int_equal(st.stack_ids, 1);
	assert_int_equal(profile_foreach_stack(p, collect_stack, &col), 0);
	assert_string_equal(col.text, "0=1|=9|");
	expect_folded(p, "a 1\n"); /* and it has no folded line */
	profile_free(p);
}

static void test_cap_stacks(void **state)
{
	struct profile_limits lim = {.max_stacks = 2};
	struct profile *p = new_profile(&lim);
	uint32_t a = fn(p, "a"), b = fn(p, "b"), c = fn(p, "c");
	uint32_t s1[] = {a}, s2[] = {a, b}, s3[] = {a, c};
	struct profile_stats st;

	(void)state;
	assert_int_equal(profile_add(p, s1, 1, 1), 0);
	assert_int_equal(profile_add(p, s2, 2, 1), 0);
	assert_int_equal(profile_add(p, s3, 2, 3), -ENOSPC);
	assert_int_equal(profile_add(p, s1, 0, 4), -ENOSPC); /* the empty stack is a stack too */
	st = stats(p);
	assert_int_equal(st.lost, 7);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.stacks, 2);
	assert_int_equal(st.stack_ids, 3);
	/* the lost samples did not reach the flat profile */
	expect_flat(p, a, 1, 2);
	expect_flat(p, c, 0, 0);

	/* known stacks are still counted at the cap */
	assert_int_equal(profile_add(p, s2, 2, 10), 0);
	assert_int_equal(profile_add(p, s3, 2, 1), -ENOSPC);
	st = stats(p);
	assert_int_equal(st.lost, 8);
	assert_int_equal(st.samples, 12);
	expect_flat(p, b, 11, 11);
	expect_folded(p, "a 1\na;b 11\n");
	profile_free(p);
}

static void test_cap_stack_ids(void **state)
{
	struct profile_limits lim = {.max_stack_ids = 5};
	struct profile *p = new_profile(&lim);
	uint32_t a = fn(p, "a"), b = fn(p, "b"), c = fn(p, "c");
	uint32_t s3[] = {a, b, c}, t3[] = {c, b, a}, s2[] = {b, c}, s1[] = {c};

	(void)state;
	assert_int_equal(profile_add(p, s3, 3, 1), 0);
	assert_int_equal(profile_add(p, t3, 3, 2), -ENOSPC); /* 3 + 3 > 5 */
	assert_int_equal(stats(p).lost, 2);
	assert_int_equal(profile_add(p, s2, 2, 1), 0); /* exactly 5 */
	assert_int_equal(stats(p).stack_ids, 5);
	assert_int_equal(profile_add(p, s1, 1, 4), -ENOSPC);
	assert_int_equal(profile_add(p, s1, 0, 1), 0); /* takes no ids */
	assert_int_equal(profile_add(p, s3, 3, 1), 0);
	{
		struct profile_stats st = stats(p);

		assert_int_equal(st.lost, 6);
		assert_int_equal(st.samples, 4);
		assert_int_equal(st.stacks, 3);
		assert_int_equal(st.stack_ids, 5);
	}
	expect_flat(p, c, 3, 3);
	expect_flat(p, a, 0, 2);
	profile_free(p);
}

static void test_cap_funcs(void **state)
{
	struct profile_limits lim = {.max_funcs = 2};
	struct profile *p = new_profile(&lim);

	(void)state;
	assert_int_equal(profile_intern(p, "a", "/m", 0, PROFILE_KIND_NATIVE), 0);
	assert_int_equal(profile_intern(p, "b", "/m", 0, PROFILE_KIND_NATIVE), 1);
	assert_int_equal(profile_intern(p, "c", "/m", 0, PROFILE_KIND_NATIVE), -E2BIG);
	assert_int_equal(profile_intern(p, "a", "/m", 0, PROFILE_KIND_JIT), -E2BIG);
	/* known functions are still found */
	assert_int_equal(profile_intern(p, "b", "/m", 0, PROFILE_KIND_NATIVE), 1);
	assert_int_equal(profile_intern(p, "a", "/m", 0, PROFILE_KIND_NATIVE), 0);
	assert_int_equal(profile_nfuncs(p), 2);
	assert_int_equal(stats(p).funcs, 2);
	profile_free(p);
}

static void test_cache(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t id = 77;

	(void)state;
	assert_int_equal(profile_cache_get(p, 0x401000, &id), 0);
	assert_int_equal(id, 77); /* untouched on a miss */
	profile_cache_clear(p);	  /* clearing an unallocated cache is fine */

	profile_cache_put(p, 0x401000, 3);
	profile_cache_put(p, 0x401001, 4);
	profile_cache_put(p, 0xffffffffffffffffULL, 5);
	assert_int_equal(profile_cache_get(p, 0x401000, &id), 1);
	assert_int_equal(id, 3);
	assert_int_equal(profile_cache_get(p, 0x401001, &id), 1);
	assert_int_equal(id, 4);
	assert_int_equal(profile_cache_get(p, 0xffffffffffffffffULL, &id), 1);
	assert_int_equal(id, 5);
	id = 77;
	assert_int_equal(profile_cache_get(p, 0x401002, &id), 0);
	assert_int_equal(id, 77);

	/* overwrite */
	profile_cache_put(p, 0x401000, 9);
	assert_int_equal(profile_cache_get(p, 0x401000, &id), 1);
	assert_int_equal(id, 9);

	/* address 0 is never cached */
	profile_cache_put(p, 0, 1);
	assert_int_equal(profile_cache_get(p, 0, &id), 0);

	profile_cache_clear(p);
	assert_int_equal(profile_cache_get(p, 0x401000, &id), 0);
	assert_int_equal(profile_cache_get(p, 0x401001, &id), 0);
	profile_cache_put(p, 0x401001, 6);
	assert_int_equal(profile_cache_get(p, 0x401001, &id), 1);
	assert_int_equal(id, 6);
	assert_int_equal(profile_cache_get(p, 0x401000, &id), 0);

	/* many colliding-ish neighbours */
	for (uint64_t a = 1; a <= 20000; a++)
		profile_cache_put(p, a << 12, (uint32_t)a);
	for (uint64_t a = 1; a <= 20000; a++) {
		assert_int_equal(profile_cache_get(p, a << 12, &id), 1);
		assert_int_equal(id, (uint32_t)a);
	}
	profile_free(p);
}

/* The callee remembered per return address: a call seen again is known, another callee, a
 * new caller at the address (a rename) or a cleared cache is not. */
static void test_cache_callee(void **state)
{
	struct profile *p = new_profile(NULL);

	(void)state;
	assert_int_equal(profile_cache_callee(p, 0x401000, 1), 0); /* no cache yet */
	profile_cache_put(p, 0x401000, 3);
	assert_int_equal(profile_cache_callee(p, 0x401000, 1), 0); /* first call: remembered */
	assert_int_equal(profile_cache_callee(p, 0x401000, 1), 1);
	assert_int_equal(profile_cache_callee(p, 0x401000, 2), 0); /* another callee */
	assert_int_equal(profile_cache_callee(p, 0x401000, 2), 1);
	assert_int_equal(profile_cache_callee(p, 0x401000, 1), 0);
	assert_int_equal(profile_cache_callee(p, 0x401008, 1), 0); /* not cached: nothing kept */
	assert_int_equal(profile_cache_callee(p, 0x401008, 1), 0);
	assert_int_equal(profile_cache_callee(p, 0, 1), 0);
	assert_int_equal(profile_cache_callee(p, 0x401000, UINT32_MAX), 0);
	profile_cache_put(p, 0x401000, 3); /* the same caller: kept */
	assert_int_equal(profile_cache_callee(p, 0x401000, 1), 1);
	profile_cache_put(p, 0x401000, 4); /* renamed: its calls are new */
	assert_int_equal(profile_cache_callee(p, 0x401000, 1), 0);
	assert_int_equal(profile_cache_callee(p, 0x401000, 1), 1);
	profile_cache_clear(p);
	profile_cache_put(p, 0x401000, 4);
	assert_int_equal(profile_cache_callee(p, 0x401000, 1), 0);
	profile_free(p);
}

/* Frozen (over a memory budget): what is held is found and counted, nothing new is made. */
static void test_freeze(void **state)
{
	struct profile *p = new_profile(NULL);
	struct profile_stats st;
	uint32_t ids[2], id;
	int a, b;

	(void)state;
	a = profile_intern(p, "main", "app", 0x1000, PROFILE_KIND_NATIVE);
	b = profile_intern(p, "work", "app", 0x2000, PROFILE_KIND_NATIVE);
	ids[0] = (uint32_t)a;
	ids[1] = (uint32_t)b;
	assert_int_equal(profile_add_tid(p, 7, ids, 2, 3), 0);
	profile_cache_put(p, 0x2004, (uint32_t)b);
	profile_freeze(p, true);

	/* Functions and addresses held are found; others get -ENOSPC and are not made. */
	assert_int_equal(profile_intern(p, "work", "app", 0x2000, PROFILE_KIND_NATIVE), b);
	assert_int_equal(profile_intern(p, "new", "app", 0x3000, PROFILE_KIND_NATIVE), -ENOSPC);
	assert_int_equal(profile_intern_unresolved(p, 0x7f0000001000ULL, "[anon]"), -ENOSPC);
	assert_int_equal(profile_nfuncs(p), 2);
	assert_int_equal(profile_cache_get(p, 0x2004, &id), 1);
	assert_int_equal(id, (uint32_t)b);

	/* A stack held is counted; another one is not (nothing changes). */
	assert_int_equal(profile_count_hashed(p, 7, ids, 2, 2, profile_stack_hash(7, ids, 2)), 0);
	assert_int_equal(profile_count_hashed(p, 8, ids, 2, 1, profile_stack_hash(8, ids, 2)),
			 -ENOENT);
	assert_int_equal(profile_count_hashed(p, 7, ids, 1, 1, profile_stack_hash(7, ids, 1)),
			 -ENOENT);
	ids[1] = 99;
	assert_int_equal(profile_count_hashed(p, 7, ids, 2, 1, profile_stack_hash(7, ids, 2)),
			 -EINVAL);
	profile_get_stats(p, &st);
	assert_int_equal(st.samples, 5);
	assert_int_equal(st.stacks, 1);
	assert_int_equal(profile_func_get(p, (uint32_t)b)->self, 5);

	/* Thawed: made again. */
	profile_freeze(p, false);
	assert_true(profile_intern(p, "new", "app", 0x3000, PROFILE_KIND_NATIVE) == 2);
	profile_free(p);
}

static void test_cache_cap(void **state)
{
	struct profile_limits lim = {.max_cache = 4};
	struct profile *p = new_profile(&lim);
	uint32_t id;

	(void)state;
	for (uint32_t i = 1; i <= 4; i++)
		profile_cache_put(p, 0x1000 * i, i);
	for (uint32_t i = 1; i <= 4; i++) {
		assert_int_equal(profile_cache_get(p, 0x1000 * i, &id), 1);
		assert_int_equal(id, i);
	}
	/* full: the next new address clears the cache first, then is cached */
	profile_cache_put(p, 0x5000, 5);
	for (uint32_t i = 1; i <= 4; i++)
		assert_int_equal(profile_cache_get(p, 0x1000 * i, &id), 0);
	assert_int_equal(profile_cache_get(p, 0x5000, &id), 1);
	assert_int_equal(id, 5);
	/* and there is room for max_cache entries again */
	for (uint32_t i = 6; i <= 8; i++)
		profile_cache_put(p, 0x1000 * i, i);
	for (uint32_t i = 5; i <= 8; i++) {
		assert_int_equal(profile_cache_get(p, 0x1000 * i, &id), 1);
		assert_int_equal(id, i);
	}
	profile_free(p);
}

/* Many distinct stacks, some differing only in the order of their frames, of their pairs of
 * frames or in their thread: each is found again (the table grows several times on the way). */
static void test_stacks_many(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t ids[12], f[8];
	char name[16];
	size_t distinct = 0;

	(void)state;
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		f[i] = fn(p, name);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < 20000; k++) {
			size_t n = 5 + k % 8;

			for (size_t i = 0; i < n;
			     i++) /* k's 5 digits in base 8, then more frames */
				ids[i] = f[i < 5 ? (k >> (3 * i)) & 7 : (k + i) % 8];
			assert_int_equal(profile_add_tid(p, k % 3, ids, n, 1), 0);
			distinct += pass == 0;
		}
		/* pairs swapped, frames swapped within a pair */
		for (uint32_t t = 0; t < 2; t++) {
			uint32_t a[4] = {f[1], f[2], f[3], f[4]}, b[4] = {f[3], f[4], f[1], f[2]};
			uint32_t c[4] = {f[2], f[1], f[3], f[4]}, d[3] = {f[1], f[2], f[3]};

			assert_int_equal(profile_add_tid(p, 100 + t, a, 4, 1), 0);
			assert_int_equal(profile_add_tid(p, 100 + t, b, 4, 1), 0);
			assert_int_equal(profile_add_tid(p, 100 + t, c, 4, 1), 0);
			assert_int_equal(profile_add_tid(p, 100 + t, d, 3, 1), 0);
			distinct += pass == 0 ? 4 : 0;
		}
		assert_int_equal(stats(p).stacks, distinct);
	}
	assert_int_equal(stats(p).samples, 2 * distinct);
	profile_free(p);
}

static void test_stats(void **state)
{
	struct profile *p = new_profile(NULL);
	struct profile_stats st0, st1, st2;
	char name[32];
	uint32_t ids[16];

	(void)state;
	st0 = stats(p);
	assert_int_equal(st0.samples, 0);
	assert_int_equal(st0.lost, 0);
	assert_int_equal(st0.funcs, 0);
	assert_int_equal(st0.stacks, 0);
	assert_int_equal(st0.stack_ids, 0);
	assert_true(st0.memory > 0);

	for (int i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "function_%d", i);
		ids[i] = fn(p, name);
	}
	st1 = stats(p);
	assert_int_equal(st1.funcs, 16);
	/* at least the strings are accounted for */
	assert_true(st1.memory >=
		    st0.memory + 16 * (strlen("function_0") + strlen("/usr/bin/app")));

	for (int i = 1; i <= 16; i++)
		assert_int_equal(profile_add(p, ids, i, 2), 0);
	profile_cache_put(p, 0x1234, 1);
	st2 = stats(p);
	assert_int_equal(st2.samples, 32);
	assert_int_equal(st2.stacks, 16);
	assert_int_equal(st2.stack_ids, 16 * 17 / 2);
	assert_true(st2.memory >= st1.memory + st2.stack_ids * sizeof(uint32_t) +
				      1024 * (sizeof(uint64_t) + sizeof(uint32_t)));
	profile_free(p);
}

struct naive_stack {
	uint32_t ids[16];
	size_t n;
	uint64_t count;
};

struct naive_walk {
	const struct naive_stack *v;
	size_t n, i;
};

static int check_stack(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *userdata)
{
	(void)tid;
	struct naive_walk *w = userdata;
	const struct naive_stack *s;

	if (w->i >= w->n)
		fail_msg("more distinct stacks than expected (%zu)", w->n);
	s = &w->v[w->i++];
	assert_int_equal(n, s->n);
	assert_int_equal(count, s->count);
	if (n)
		assert_memory_equal(ids, s->ids, n * sizeof(*ids));
	return 0;
}

static void random_round(uint64_t seed, uint32_t nfuncs, size_t maxlen, int adds)
{
	struct profile *p = new_profile(NULL);
	uint64_t rs = seed * 0x9e3779b97f4a7c15ULL + 1, *self, *total, samples = 0;
	struct naive_stack *all = calloc(adds, sizeof(*all)),
			   *distinct = calloc(adds, sizeof(*all));
	size_t ndistinct = 0, sn;
	uint32_t *sorted;
	char name[32];

	assert_non_null(all);
	assert_non_null(distinct);
	self = calloc(nfuncs, sizeof(*self));
	total = calloc(nfuncs, sizeof(*total));
	assert_non_null(self);
	assert_non_null(total);
	for (uint32_t i = 0; i < nfuncs; i++) {
		snprintf(name, sizeof(name), "fn%u", i);
		assert_int_equal(intern(p, name, i % 2 ? "/a" : "/b", i, PROFILE_KIND_NATIVE), i);
	}

	for (int k = 0; k < adds; k++) {
		struct naive_stack *s = &all[k];
		size_t d;

		s->n = prng_next(&rs) % (maxlen + 1);
		s->count = 1 + prng_next(&rs) % 5;
		for (size_t i = 0; i < s->n; i++)
			s->ids[i] = prng_next(&rs) % nfuncs;
		assert_int_equal(profile_add(p, s->ids, s->n, s->count), 0);
		for (d = 0; d < ndistinct; d++)
			if (distinct[d].n == s->n &&
			    !memcmp(distinct[d].ids, s->ids, s->n * sizeof(s->ids[0])))
				break;
		if (d == ndistinct)
			distinct[ndistinct++] = (struct naive_stack){.n = s->n};
		memcpy(distinct[d].ids, s->ids, sizeof(s->ids));
		distinct[d].count += s->count;
	}

	/* naive flat profile over every stack added */
	for (int k = 0; k < adds; k++) {
		const struct naive_stack *s = &all[k];

		samples += s->count;
		if (s->n)
			self[s->ids[s->n - 1]] += s->count;
		for (uint32_t f = 0; f < nfuncs; f++) {
			for (size_t i = 0; i < s->n; i++) {
				if (s->ids[i] == f) {
					total[f] += s->count;
					break;
				}
			}
		}
	}
	for (uint32_t f = 0; f < nfuncs; f++)
		expect_flat(p, f, self[f], total[f]);
	{
		struct profile_stats st = stats(p);
		size_t ids = 0;

		for (size_t d = 0; d < ndistinct; d++)
			ids += distinct[d].n;
		assert_int_equal(st.samples, samples);
		assert_int_equal(st.lost, 0);
		assert_int_equal(st.stacks, ndistinct);
		assert_int_equal(st.stack_ids, ids);
	}
	{
		struct naive_walk w = {.v = distinct, .n = ndistinct};

		assert_int_equal(profile_foreach_stack(p, check_stack, &w), 0);
		assert_int_equal(w.i, ndistinct);
	}

	/* sorted: a permutation, ordered by self desc, total desc, name */
	assert_int_equal(profile_sorted(p, &sorted, &sn), 0);
	assert_int_equal(sn, nfuncs);
	{
		char *seen = calloc(nfuncs, 1);

		assert_non_null(seen);
		for (size_t i = 0; i < sn; i++) {
			assert_true(sorted[i] < nfuncs);
			assert_false(seen[sorted[i]]);
			seen[sorted[i]] = 1;
		}
		free(seen);
	}
	for (size_t i = 1; i < sn; i++) {
		const struct profile_func *x = profile_func_get(p, sorted[i - 1]);
		const struct profile_func *y = profile_func_get(p, sorted[i]);

		assert_true(x->self >= y->self);
		if (x->self == y->self) {
			assert_true(x->total >= y->total);
			if (x->total == y->total)
				assert_true(strcmp(x->name, y->name) <= 0);
		}
	}
	free(sorted);
	free(self);
	free(total);
	free(all);
	free(distinct);
	profile_free(p);
}

static void test_random(void **state)
{
	(void)state;
	random_round(1, 4, 6, 3000);	/* few functions: heavy recursion, few distinct stacks */
	random_round(2, 3, 16, 2000);	/* long recursive stacks */
	random_round(3, 600, 12, 4000); /* many distinct stacks: the stack index grows */
	random_round(4, 2, 1, 500);	/* tiny */
}

static void test_intern_null(void **state)
{
	struct profile *p = new_profile(NULL);

	(void)state;
	assert_int_equal(profile_intern(p, NULL, "/m", 0, PROFILE_KIND_NATIVE), -EINVAL);
	assert_int_equal(profile_intern(p, "x", NULL, 0, PROFILE_KIND_NATIVE), -EINVAL);
	assert_int_equal(profile_nfuncs(p), 0);
	profile_free(p);
}

/* The first distinct stack is empty: nothing in the id arena yet. */
static void test_empty_stack_first(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t a = fn(p, "a"), one[] = {a};
	struct collected col = {0};

	(void)state;
	assert_int_equal(profile_add(p, one, 0, 3), 0);
	assert_int_equal(profile_add(p, NULL, 0, 2), 0);
	assert_int_equal(stats(p).samples, 5);
	assert_int_equal(stats(p).stacks, 1);
	assert_int_equal(stats(p).stack_ids, 0);
	assert_int_equal(profile_foreach_stack(p, collect_stack, &col), 0);
	assert_string_equal(col.text, "=5|");
	expect_folded(p, "");
	profile_free(p);
}

/* Stacks are kept per thread; flat counts and folded output merge the threads. */
static void test_threads(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t a = fn(p, "a"), b = fn(p, "b"), ab[] = {a, b};
	struct collected col = {0};

	(void)state;
	assert_int_equal(profile_add_tid(p, 101, ab, 2, 3), 0);
	assert_int_equal(profile_add_tid(p, 102, ab, 2, 4), 0);
	assert_int_equal(profile_add_tid(p, 101, ab, 2, 1), 0);
	assert_int_equal(stats(p).stacks, 2);
	assert_int_equal(stats(p).samples, 8);
	assert_int_equal(profile_func_get(p, b)->self, 8);
	assert_int_equal(profile_func_get(p, a)->total, 8);
	expect_folded(p, "a;b 8\n");
	assert_int_equal(profile_foreach_stack(p, collect_stack, &col), 0);
	profile_free(p);
}

/* An order-sensitive digest of the stacks: d[0] the digest, d[1] the number of stacks. */
static int digest_stack(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *userdata)
{
	uint64_t *d = userdata;

	d[0] = (d[0] ^ tid ^ count << 32) * 0x100000001b3ULL;
	for (size_t i = 0; i < n; i++)
		d[0] = (d[0] ^ ids[i]) * 0x100000001b3ULL;
	d[0] = (d[0] ^ n) * 0x100000001b3ULL;
	d[1]++;
	return 0;
}

/* The per-sample fast path (hash once, hints, profile_add_hashed) files every stack exactly as
 * profile_add_tid does: same stacks in the same order, same counts, same cache answers. */
static void test_hashed_same(void **state)
{
	struct profile *a = new_profile(NULL), *b = new_profile(NULL);
	uint64_t rng = 7;
	uint32_t ids[12];

	(void)state;
	for (int i = 0; i < 40; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		assert_int_equal(fn(a, name), fn(b, name));
	}
	profile_prefetch_stack(b, 0, NULL, 0); /* before any stack: no table yet */
	for (int k = 0; k < 3000; k++) {
		uint32_t tid = 1 + k % 3, id;
		size_t n;
		uint64_t h, addr;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		n = (rng >> 60) % 12;
		for (size_t i = 0; i < n; i++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			ids[i] = (rng >> 33) % 40;
		}
		addr = 0x1000 + (rng >> 40) % 512;
		profile_cache_prefetch(b, addr);
		if (!profile_cache_get(b, addr, &id)) {
			profile_cache_put(a, addr, ids[0] % 40);
			profile_cache_put(b, addr, ids[0] % 40);
		}
		h = profile_stack_hash(tid, ids, n);
		profile_prefetch_stack(b, h, ids, n);
		assert_int_equal(profile_add_tid(a, tid, ids, n, 1 + k % 2), 0);
		/* Both ways into b: a hash other than profile_add_tid's would split stacks. */
		if (k % 3)
			assert_int_equal(profile_add_hashed(b, tid, ids, n, 1 + k % 2, h), 0);
		else
			assert_int_equal(profile_add_tid(b, tid, ids, n, 1 + k % 2), 0);
	}
	for (uint64_t addr = 0x1000; addr < 0x1000 + 512; addr++) {
		uint32_t x = 0, y = 0;

		assert_int_equal(profile_cache_get(a, addr, &x), profile_cache_get(b, addr, &y));
		assert_int_equal(x, y);
	}
	{
		uint64_t da[2] = {0}, db[2] = {0};

		assert_true(stats(a).stacks > 500);
		assert_int_equal(stats(a).stacks, stats(b).stacks);
		assert_int_equal(stats(a).samples, stats(b).samples);
		assert_int_equal(profile_foreach_stack(a, digest_stack, da), 0);
		assert_int_equal(profile_foreach_stack(b, digest_stack, db), 0);
		assert_int_equal(da[0], db[0]);
		assert_int_equal(da[1], db[1]);
	}
	for (uint32_t i = 0; i < 40; i++) {
		assert_int_equal(profile_func_get(a, i)->self, profile_func_get(b, i)->self);
		assert_int_equal(profile_func_get(a, i)->total, profile_func_get(b, i)->total);
	}
	profile_free(a);
	profile_free(b);
}

/* ---- byte cap and reader views ---- */

static char *folded_view(const struct profile *p, size_t max, unsigned view,
			 struct profile_folded_info *fi)
{
	struct profile_folded_opts o = {.max_bytes = max, .view = view};
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(profile_folded_view(p, &o, &text, &len, fi), 0);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	if (max)
		assert_true(len <= max);
	return text;
}

static void test_folded_cap(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t a = fn(p, "a"), b = fn(p, "bb"), c = fn(p, "ccc");
	struct profile_folded_info fi;
	char *text;

	(void)state;
	assert_int_equal(profile_add(p, (uint32_t[]){a, b}, 2, 1), 0); /* "a;bb 1\n": 7 */
	assert_int_equal(profile_add(p, (uint32_t[]){a, c}, 2, 5), 0); /* "a;ccc 5\n": 8 */
	assert_int_equal(profile_add(p, (uint32_t[]){c, b}, 2, 3), 0); /* "ccc;bb 3\n": 9 */
	assert_int_equal(profile_add(p, (uint32_t[]){0}, 0, 4), 0);    /* no line */

	/* No cap, or a cap the text fits in: the whole text, in stack order. */
	text = folded_view(p, 0, 0, &fi);
	assert_string_equal(text, "a;bb 1\na;ccc 5\nccc;bb 3\n");
	assert_int_equal(fi.stacks, 3);
	assert_int_equal(fi.stacks_omitted, 0);
	free(text);
	text = folded_view(p, 24, 0, &fi);
	assert_string_equal(text, "a;bb 1\na;ccc 5\nccc;bb 3\n");
	free(text);

	/* One byte short: the heaviest lines first, as many as fit. */
	text = folded_view(p, 23, 0, &fi);
	assert_string_equal(text, "a;ccc 5\nccc;bb 3\n");
	assert_int_equal(fi.stacks, 3);
	assert_int_equal(fi.stacks_omitted, 1);
	assert_int_equal(fi.samples_omitted, 1);
	free(text);

	/* A lighter line may still fill what a heavier one could not. */
	text = folded_view(p, 15, 0, &fi);
	assert_string_equal(text, "a;ccc 5\na;bb 1\n");
	assert_int_equal(fi.stacks_omitted, 1);
	assert_int_equal(fi.samples_omitted, 3);
	free(text);

	/* Nothing fits. */
	text = folded_view(p, 5, 0, &fi);
	assert_string_equal(text, "");
	assert_int_equal(fi.stacks_omitted, 3);
	assert_int_equal(fi.samples_omitted, 9);
	free(text);
	profile_free(p);
}

/* A big profile under a cap: the text never exceeds it and every stack is either in it or
 * counted as omitted. */
static void test_folded_cap_big(void **state)
{
	struct profile *p = new_profile(NULL);
	char name[4096];
	uint32_t ids[8];
	struct profile_folded_info fi;
	uint64_t in_text = 0;
	char *text, *line;

	(void)state;
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (int i = 0; i < 64; i++) {
		snprintf(name, 8, "f%05d", i);
		name[6] = 'x';
		intern(p, name, "perf-1.map", 0x1000 * i, PROFILE_KIND_JIT);
	}
	for (uint32_t i = 0; i < 500; i++) {
		for (int d = 0; d < 8; d++)
			ids[d] = (i * 7 + d * 13 + i / 64) % 64;
		assert_int_equal(profile_add_tid(p, i % 3, ids, 8, 1 + i % 5), 0);
	}
	text = folded_view(p, 1 << 20, 0, &fi);
	assert_true(fi.stacks_omitted > 0);
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		in_text += strtoull(strrchr(line, ' ') + 1, NULL, 10);
	assert_int_equal(in_text + fi.samples_omitted, stats(p).samples);
	free(text);
	profile_free(p);
}

/* A user stack that went into the kernel: main -> read -> [sys_read -> vfs_read]. */
static struct profile *kernel_profile(uint32_t ids[6])
{
	struct profile *p = new_profile(NULL);

	ids[0] = intern(p, "main", "/usr/bin/app", 0x1000, PROFILE_KIND_NATIVE);
	ids[1] = intern(p, "read", "/lib/libc.so.6", 0x2000, PROFILE_KIND_NATIVE);
	ids[2] =
	    intern(p, "sys_read", "[kernel.kallsyms]", 0xffffffff81000000ULL, PROFILE_KIND_KERNEL);
	ids[3] =
	    intern(p, "vfs_read", "[kernel.kallsyms]", 0xffffffff81001000ULL, PROFILE_KIND_KERNEL);
	ids[4] = intern(p, "[unknown]", "[kernel.kallsyms]", 0, PROFILE_KIND_UNKNOWN);
	ids[5] = intern(p, "compute", "/usr/bin/app", 0x1100, PROFILE_KIND_NATIVE);
	assert_int_equal(profile_add(p, (uint32_t[]){ids[0], ids[1], ids[2], ids[3]}, 4, 3), 0);
	assert_int_equal(profile_add(p, (uint32_t[]){ids[0], ids[1], ids[2]}, 3, 2), 0);
	assert_int_equal(profile_add(p, (uint32_t[]){ids[0], ids[1], ids[4]}, 3, 1), 0);
	assert_int_equal(profile_add(p, (uint32_t[]){ids[0], ids[5]}, 2, 10), 0);
	/* an interrupt taken in compute: kernel frames, then user frames, then kernel again */
	assert_int_equal(profile_add(p, (uint32_t[]){ids[0], ids[2], ids[3], ids[5], ids[3]}, 5, 1),
			 0);
	return p;
}

static void test_kernel_folded(void **state)
{
	uint32_t ids[6];
	struct profile *p = kernel_profile(ids);
	struct profile_folded_info fi;
	char *text;

	(void)state;
	text = folded_view(p, 0, PROFILE_VIEW_NO_KADDR, &fi);
	assert_string_equal(text, "main;read;sys_read;vfs_read 3\nmain;read;sys_read 2\n"
				  "main;read;[kernel.kallsyms] 1\nmain;compute 10\n"
				  "main;sys_read;vfs_read;compute;vfs_read 1\n");
	free(text);
	/* Kernel runs become one frame; stacks equal in the view are one line. */
	text = folded_view(p, 0, PROFILE_VIEW_NO_KERNEL, &fi);
	assert_string_equal(text, "main;read;[kernel] 6\nmain;compute 10\n"
				  "main;[kernel];compute;[kernel] 1\n");
	assert_int_equal(fi.stacks, 3);
	assert_null(strstr(text, "sys_read"));
	free(text);
	profile_free(p);
}

static void test_kernel_flat(void **state)
{
	uint32_t ids[6], out[8];
	struct profile *p = kernel_profile(ids);
	struct profile_row *rows;
	size_t n;
	bool seen = false;

	(void)state;
	assert_int_equal(stats(p).kernel_samples, 7);

	/* Full view: the profile as it is. */
	assert_int_equal(profile_flat_view(p, 0, &rows, &n), 0);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++)
		if (rows[i].id == ids[2])
			assert_true(rows[i].f.start == 0xffffffff81000000ULL);
	free(rows);

	/* No kernel addresses: names stay, kernel starts are 0, user starts are not. */
	assert_int_equal(profile_flat_view(p, PROFILE_VIEW_NO_KADDR, &rows, &n), 0);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].f.kind == PROFILE_KIND_KERNEL)
			assert_int_equal(rows[i].f.start, 0);
		if (rows[i].id == ids[5])
			assert_int_equal(rows[i].f.start, 0x1100);
	}
	free(rows);

	/* No kernel: one "[kernel]" row; self = kernel selfs (3 + 2 + 1 + 1), total = samples
	 * with a kernel frame (3 + 2 + 1 + 1). */
	assert_int_equal(profile_flat_view(p, PROFILE_VIEW_NO_KERNEL, &rows, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(rows[0].id, ids[5]); /* compute: self 10 */
	for (size_t i = 0; i < n; i++) {
		assert_string_not_equal(rows[i].f.name, "sys_read");
		assert_string_not_equal(rows[i].f.name, "vfs_read");
		assert_string_not_equal(rows[i].f.name, "[unknown]");
		if (rows[i].id == PROFILE_ID_KERNEL) {
			seen = true;
			assert_string_equal(rows[i].f.name, "[kernel]");
			assert_string_equal(rows[i].f.module, "[kernel.kallsyms]");
			assert_int_equal(rows[i].f.start, 0);
			assert_int_equal(rows[i].f.self, 7);
			assert_int_equal(rows[i].f.total, 7);
		}
	}
	assert_true(seen);
	free(rows);

	/* Single functions and stacks through a view. */
	assert_string_equal(
	    profile_func_view(profile_func_get(p, ids[3]), PROFILE_VIEW_NO_KERNEL).name,
	    "[kernel]");
	assert_string_equal(
	    profile_func_view(profile_func_get(p, ids[3]), PROFILE_VIEW_NO_KADDR).name, "vfs_read");
	assert_int_equal(
	    profile_func_view(profile_func_get(p, ids[1]), PROFILE_VIEW_NO_KERNEL).start, 0x2000);
	assert_int_equal(profile_stack_view(p, PROFILE_VIEW_NO_KERNEL,
					    (uint32_t[]){ids[0], ids[2], ids[3], ids[5], ids[4]}, 5,
					    ids[2], out),
			 4);
	assert_int_equal(out[0], ids[0]);
	assert_int_equal(out[1], ids[2]);
	assert_int_equal(out[2], ids[5]);
	assert_int_equal(out[3], ids[2]);
	assert_int_equal(profile_stack_view(p, 0, (uint32_t[]){ids[2], ids[3]}, 2, 99, out), 2);
	assert_int_equal(out[1], ids[3]);
	profile_free(p);
}

/* ---- names given late ---- */

/* Names kept from the host-wide pool (profile_intern_shared) are one identity with the same
 * names copied (profile_intern), either first; the profile keeps the pool's pointers (no copy,
 * not counted in its memory) and never frees them: renames and aliases of such functions, and
 * profile_free, leave the pool intact (ASan would see a bad free). */
static void test_intern_shared(void **state)
{
	struct profile *p = new_profile(NULL), *q = new_profile(NULL);
	const char *name, *module, *other;
	struct profile_stats shared, copied;
	struct strpool *pool;
	int a, b, c, d;

	(void)state;
	assert_int_equal(strpool_new(0, &pool), 0);
	name = strpool_intern(pool, "memcpy");
	module = strpool_intern(pool, "libc.so.6");
	other = strpool_intern(pool, "memmove");
	a = profile_intern_shared(p, name, strpool_hash_of(name), module, strpool_hash_of(module),
				  0x1000, PROFILE_KIND_NATIVE);
	assert_true(a >= 0);
	assert_int_equal(intern(q, "memcpy", "libc.so.6", 0x1000, PROFILE_KIND_NATIVE), 0);
	profile_get_stats(p, &shared);
	profile_get_stats(q, &copied);
	assert_ptr_equal(profile_func_get(p, a)->name, name); /* kept, not copied */
	assert_ptr_equal(profile_func_get(p, a)->module, module);
	assert_ptr_not_equal(profile_func_get(q, 0)->name, name);
	assert_int_equal(copied.memory - shared.memory, strlen("memcpy") + strlen("libc.so.6") + 2);
	profile_free(q);
	q = new_profile(NULL);
	/* One identity, whichever way it is interned. */
	assert_int_equal(profile_intern(p, "memcpy", "libc.so.6", 0x1000, PROFILE_KIND_NATIVE), a);
	assert_int_equal(profile_intern_shared(p, name, strpool_hash_of(name), module,
					       strpool_hash_of(module), 0x1000,
					       PROFILE_KIND_NATIVE),
			 a);
	b = profile_intern_shared(p, name, strpool_hash_of(name), module, strpool_hash_of(module),
				  0x1000, PROFILE_KIND_JIT);
	assert_true(b >= 0 && b != a);
	c = intern(p, "memmove", "libc.so.6", 0x2000, PROFILE_KIND_NATIVE);
	assert_int_equal(profile_intern_shared(p, other, strpool_hash_of(other), module,
					       strpool_hash_of(module), 0x2000,
					       PROFILE_KIND_NATIVE),
			 c);
	assert_int_equal(profile_intern_shared(p, NULL, 0, module, 0, 0, PROFILE_KIND_NATIVE),
			 -EINVAL);
	/* A function named as its program ("foo" in "foo": one pooled string) is said by its
	 * name in folded output, not as the program's unnamed code "[foo]". */
	{
		struct profile *f = new_profile(NULL);
		const char *foo = strpool_intern(pool, "foo");
		uint32_t id[1];

		id[0] = (uint32_t)profile_intern_shared(f, foo, strpool_hash_of(foo), foo,
							strpool_hash_of(foo), 0x3000,
							PROFILE_KIND_NATIVE);
		assert_int_equal(profile_add(f, id, 1, 2), 0);
		expect_folded(f, "foo 2\n");
		profile_free(f);
	}
	/* Renamed (a copy replaces the pool's names) and aliased (to a pooled function). */
	d = profile_intern_unresolved(p, 0x7f0000001000, "[anon]");
	assert_true(d >= 0);
	assert_int_equal(profile_rename(p, d, "memcpy", "libc.so.6", 0x1000, PROFILE_KIND_NATIVE),
			 a);
	assert_ptr_equal(profile_func_get(p, d)->name, name);
	assert_int_equal(profile_commit_renames(p), 1);
	assert_int_equal(profile_rename(p, b, "jitted", "perf-1.map", 0x1000, PROFILE_KIND_JIT), b);
	assert_string_equal(profile_func_get(p, b)->name, "jitted");
	assert_ptr_not_equal(profile_func_get(p, b)->name, name);
	/* Another profile shares the same strings. */
	a = profile_intern_shared(q, name, strpool_hash_of(name), module, strpool_hash_of(module),
				  0x1000, PROFILE_KIND_NATIVE);
	assert_ptr_equal(profile_func_get(q, a)->name, name);
	profile_free(p);
	assert_string_equal(profile_func_get(q, a)->name, "memcpy");
	profile_free(q);
	assert_ptr_equal(strpool_intern(pool, "memcpy"), name);
	strpool_free(pool);
}

static void test_unresolved_intern(void **state)
{
	struct profile *p = new_profile(&(struct profile_limits){.max_unresolved = 2});
	const struct profile_func *f;
	struct profile_stats st;
	const uint32_t *pend;
	size_t n;
	int a, b;

	(void)state;
	a = profile_intern_unresolved(p, 0x7f0000001000, "[anon]");
	b = profile_intern_unresolved(p, 0x7f0000001004, "[anon]");
	assert_true(a >= 0 && b >= 0 && a != b);
	assert_int_equal(profile_intern_unresolved(p, 0x7f0000001000, "[anon]"), a);
	f = profile_func_get(p, a);
	assert_string_equal(f->name, "0x7f0000001000");
	assert_string_equal(f->module, "[anon]");
	assert_int_equal(f->start, 0x7f0000001000);
	assert_int_equal(f->kind, PROFILE_KIND_UNKNOWN);
	/* The bound: a third address is refused and counted, known ones are still found. */
	assert_int_equal(profile_intern_unresolved(p, 0x7f0000002000, "[anon]"), -E2BIG);
	assert_int_equal(profile_intern_unresolved(p, 0x7f0000001004, "[anon]"), b);
	assert_int_equal(profile_intern_unresolved(p, 0, "[anon]"), -EINVAL);
	pend = profile_pending(p, &n);
	assert_int_equal(n, 2);
	assert_int_equal(pend[0], a);
	assert_int_equal(pend[1], b);
	profile_get_stats(p, &st);
	assert_int_equal(st.unresolved, 2);
	assert_int_equal(st.unresolved_over, 1);
	/* Named: no longer pending, room for another. */
	assert_int_equal(
	    profile_rename(p, a, "foo", "perf-1.map", 0x7f0000000ff0, PROFILE_KIND_JIT), a);
	assert_int_equal(profile_commit_renames(p), 0);
	pend = profile_pending(p, &n);
	assert_int_equal(n, 1);
	assert_int_equal(pend[0], b);
	assert_true(profile_intern_unresolved(p, 0x7f0000002000, "[anon]") >= 0);
	profile_free(p);
}

/* Two addresses of one function named late, a third named already at its sample: one row, the
 * stacks merged, the counts as if every sample had been named at once. */
static void test_rename_merge(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t main_ = fn(p, "main"), foo, u1, u2, s[3];
	struct profile_row *rows = NULL;
	struct profile_stats st;
	uint32_t *sorted = NULL;
	size_t n, rn;
	int r;

	(void)state;
	foo = intern(p, "foo", "perf-1.map", 0x5000, PROFILE_KIND_JIT);
	u1 = profile_intern_unresolved(p, 0x5010, "[anon]");
	u2 = profile_intern_unresolved(p, 0x5020, "[anon]");
	s[0] = main_;
	s[1] = u1;
	assert_int_equal(profile_add(p, s, 2, 3), 0);
	s[1] = u2;
	assert_int_equal(profile_add(p, s, 2, 2), 0);
	s[1] = foo;
	assert_int_equal(profile_add(p, s, 2, 1), 0);
	/* Recursion across two addresses of one function: counted once in total. */
	s[1] = u1;
	s[2] = u2;
	assert_int_equal(profile_add(p, s, 3, 4), 0);
	expect_folded(p, "main;[anon] 5\nmain;foo 1\nmain;[anon];[anon] 4\n");

	/* Not committed yet: the old counts. */
	r = profile_rename(p, u1, "foo", "perf-1.map", 0x5000, PROFILE_KIND_JIT);
	assert_int_equal(r, foo);
	r = profile_rename(p, u2, "foo", "perf-1.map", 0x5000, PROFILE_KIND_JIT);
	assert_int_equal(r, foo);
	assert_int_equal(profile_canon(p, u1), foo);
	assert_int_equal(profile_canon(p, u2), foo);
	assert_int_equal(profile_canon(p, main_), main_);
	assert_true(profile_has_aliases(p));
	assert_int_equal(profile_commit_renames(p), 1);
	assert_int_equal(profile_commit_renames(p), 0);

	expect_flat(p, foo, 10, 10);
	expect_flat(p, main_, 0, 10);
	expect_flat(p, u1, 0, 0);
	expect_folded(p, "main;foo 6\nmain;foo;foo 4\n");
	profile_get_stats(p, &st);
	assert_int_equal(st.samples, 10);
	assert_int_equal(st.stacks, 2);
	assert_int_equal(st.stack_ids, 5);
	assert_int_equal(st.unresolved, 0);
	assert_int_equal(st.renamed, 2);
	/* The flat views list no alias. */
	assert_int_equal(profile_flat_view(p, 0, &rows, &rn), 0);
	assert_int_equal(rn, 2);
	assert_int_equal(rows[0].id, foo);
	assert_int_equal(rows[1].id, main_);
	free(rows);
	assert_int_equal(profile_sorted(p, &sorted, &n), 0);
	assert_int_equal(n, 2);
	free(sorted);
	/* New samples of the name land on the same stacks. */
	s[1] = foo;
	assert_int_equal(profile_add(p, s, 2, 1), 0);
	expect_flat(p, foo, 11, 11);
	profile_get_stats(p, &st);
	assert_int_equal(st.stacks, 2);
	/* An alias cannot be renamed again; the function it merged into can. */
	assert_int_equal(profile_rename(p, u1, "bar", "perf-1.map", 0, PROFILE_KIND_JIT), -EINVAL);
	profile_free(p);
}

/* Renamed in place: the id stays, and interning the new identity finds it, the old one not. */
static void test_rename_in_place(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t u, s[1], id;

	(void)state;
	u = profile_intern_unresolved(p, 0x9000, "[memfd:jit]");
	s[0] = u;
	assert_int_equal(profile_add_tid(p, 7, s, 1, 2), 0);
	profile_cache_put(p, 0x9000, u);
	assert_int_equal(profile_rename(p, u, "hot", "perf-1.map", 0x8ff0, PROFILE_KIND_JIT), u);
	assert_int_equal(profile_commit_renames(p), 0);
	assert_int_equal(profile_intern(p, "hot", "perf-1.map", 0x8ff0, PROFILE_KIND_JIT), u);
	expect_flat(p, u, 2, 2);
	expect_folded(p, "hot 2\n");
	/* The address is unnamed again (a map that no longer covers it): a new function. */
	id = profile_intern_unresolved(p, 0x9000, "[memfd:jit]");
	assert_true(id != u);
	assert_string_equal(profile_func_get(p, id)->name, "0x9000");
	/* A rename onto an identity another renamed function took meanwhile merges. */
	assert_int_equal(profile_rename(p, id, "hot", "perf-1.map", 0x8ff0, PROFILE_KIND_JIT), u);
	assert_int_equal(profile_commit_renames(p), 1);
	expect_flat(p, u, 2, 2);
	profile_free(p);
}

/* The copies of a function (V8's tiers and re-optimized copies, each with its own start) map to
 * the first one seen; another name, module or kind does not; a rename is seen. */
static void test_same(void **state)
{
	struct profile *p = new_profile(NULL);
	int a = profile_intern(p, "JS:*batch /app.js:3:15", "[jit]", 0x1000, PROFILE_KIND_JIT);
	int b = profile_intern(p, "JS:*batch /app.js:3:15", "[jit]", 0x2000, PROFILE_KIND_JIT);
	int c = profile_intern(p, "JS:~batch /app.js:3:15", "[jit]", 0x3000, PROFILE_KIND_JIT);
	int o = profile_intern(p, "JS:*other /app.js:9:1", "[jit]", 0x4000, PROFILE_KIND_JIT);
	int m = profile_intern(p, "JS:*batch /app.js:3:15", "[other]", 0x5000, PROFILE_KIND_JIT);
	int k = profile_intern(p, "JS:*batch /app.js:3:15", "[jit]", 0x6000, PROFILE_KIND_NATIVE);
	int u = profile_intern_unresolved(p, 0x7000, "[anon]");

	(void)state;
	assert_true(a >= 0 && b >= 0 && c >= 0 && o >= 0 && m >= 0 && k >= 0 && u >= 0);
	assert_int_equal(profile_same(p, b), a); /* asked first for the later copy */
	assert_int_equal(profile_same(p, a), a);
	assert_int_equal(profile_same(p, c), a); /* another tier */
	assert_int_equal(profile_same(p, o), o);
	assert_int_equal(profile_same(p, m), m);
	assert_int_equal(profile_same(p, k), k);
	assert_int_equal(profile_same(p, 999), 999); /* out of range: itself */
	assert_int_equal(profile_same(p, u), u);
	/* the unnamed address gets a copy's name: it is that function now */
	assert_int_equal(
	    profile_rename(p, u, "JS:^batch /app.js:3:15", "[jit]", 0x7000, PROFILE_KIND_JIT), u);
	assert_int_equal(profile_same(p, u), a);
	assert_int_equal(profile_same(p, b), a);
	profile_free(p);
}

/* Random stacks over named and unnamed functions, then every unnamed one renamed onto a random
 * named one: the flat counts and the stack count are those of a profile that had the names
 * from the start. */
static void test_rename_random(void **state)
{
	struct profile *p = new_profile(NULL), *q = new_profile(NULL);
	uint32_t named[8], unnamed[16], target[16], ids[12], qids[12];
	struct profile_stats ps, qs;
	char name[16];
	uint64_t r = 15;

	(void)state;
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		named[i] = intern(p, name, "m", 0x100 * i, PROFILE_KIND_JIT);
		assert_int_equal(intern(q, name, "m", 0x100 * i, PROFILE_KIND_JIT), named[i]);
	}
	for (int i = 0; i < 16; i++) {
		unnamed[i] = profile_intern_unresolved(p, 0x10000 + i, "[anon]");
		target[i] = prng_next(&r) % 8;
	}
	for (int k = 0; k < 2000; k++) {
		size_t n = 1 + prng_next(&r) % 12;

		for (size_t i = 0; i < n; i++) {
			uint32_t x = prng_next(&r) % 24;

			ids[i] = x < 8 ? named[x] : unnamed[x - 8];
			qids[i] = x < 8 ? named[x] : named[target[x - 8]];
		}
		assert_int_equal(profile_add_tid(p, k % 3, ids, n, 1 + k % 2), 0);
		assert_int_equal(profile_add_tid(q, k % 3, qids, n, 1 + k % 2), 0);
	}
	for (int i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "f%u", target[i]);
		assert_int_equal(
		    profile_rename(p, unnamed[i], name, "m", 0x100 * target[i], PROFILE_KIND_JIT),
		    named[target[i]]);
	}
	assert_int_equal(profile_commit_renames(p), 1);
	for (int i = 0; i < 8; i++) {
		const struct profile_func *g = profile_func_get(q, named[i]);

		expect_flat(p, named[i], g->self, g->total);
	}
	profile_get_stats(p, &ps);
	profile_get_stats(q, &qs);
	assert_int_equal(ps.stacks, qs.stacks);
	/* Sequences made equal by the renames keep their own copies (q has each once). */
	assert_true(ps.stack_ids >= qs.stack_ids);
	assert_int_equal(ps.samples, qs.samples);
	{
		char *a = NULL, *b = NULL;
		size_t al, bl;

		/* Same stacks, maybe in another order: compare sorted lines' total length. */
		assert_int_equal(profile_folded(p, &a, &al), 0);
		assert_int_equal(profile_folded(q, &b, &bl), 0);
		assert_int_equal(al, bl);
		free(a);
		free(b);
	}
	profile_free(p);
	profile_free(q);
}

/* profile_take_recent: the samples since the last take, per stack; renames merge them. */
static int sum_recent(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *ud)
{
	uint64_t *v = ud;

	(void)tid;
	(void)ids;
	v[0] += count;
	v[1] += n;
	v[2]++;
	return 0;
}

/* Threads with the same stack share its ids: each sequence is held once, before and after
 * late names merge stacks; every thread keeps its own counts. */
struct tid_sum {
	uint64_t count[8];
	size_t ids;
};

static int sum_by_tid(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *ud)
{
	struct tid_sum *t = ud;

	(void)ids;
	if (tid < 8)
		t->count[tid] += count;
	t->ids += n;
	return 0;
}

static void test_threads_share_ids(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t a = fn(p, "a"), b = fn(p, "b"), c = fn(p, "c"), u, abc[3], ab[2], au[2];
	struct profile_stats ps;
	struct tid_sum t = {0};

	(void)state;
	u = (uint32_t)profile_intern_unresolved(p, 0x7000, "[anon]");
	abc[0] = ab[0] = au[0] = a;
	abc[1] = ab[1] = b;
	abc[2] = c;
	au[1] = u;
	for (uint32_t tid = 1; tid <= 3; tid++)
		assert_int_equal(profile_add_tid(p, tid, abc, 3, tid), 0);
	profile_get_stats(p, &ps);
	assert_int_equal(ps.stacks, 3);
	assert_int_equal(ps.stack_ids, 3);
	assert_int_equal(profile_add_tid(p, 1, ab, 2, 10), 0);
	assert_int_equal(profile_add_tid(p, 3, ab, 2, 30), 0);
	assert_int_equal(profile_add_tid(p, 1, au, 2, 100), 0);
	assert_int_equal(profile_add_tid(p, 2, au, 2, 200), 0);
	profile_get_stats(p, &ps);
	assert_int_equal(ps.stacks, 7);
	assert_int_equal(ps.stack_ids, 7);
	expect_folded(p, "a;b;c 6\na;b 40\na;[anon] 300\n");

	/* u is b: thread 1's a;u joins its a;b, thread 2's becomes its own a;b, sharing ids */
	assert_int_equal(profile_rename(p, u, "b", "/usr/bin/app", 0x1000 + 1, PROFILE_KIND_NATIVE),
			 (int)b);
	assert_int_equal(profile_commit_renames(p), 1);
	profile_get_stats(p, &ps);
	assert_int_equal(ps.stacks, 6);
	assert_int_equal(ps.stack_ids, 5);
	expect_folded(p, "a;b;c 6\na;b 340\n");
	assert_int_equal(profile_foreach_stack(p, sum_by_tid, &t), 0);
	assert_int_equal(t.count[1], 1 + 10 + 100);
	assert_int_equal(t.count[2], 2 + 200);
	assert_int_equal(t.count[3], 3 + 30);
	assert_int_equal(t.ids, 3 * 3 + 3 * 2);
	/* and a new thread's a;b finds the sequence again */
	assert_int_equal(profile_add_tid(p, 4, ab, 2, 1), 0);
	profile_get_stats(p, &ps);
	assert_int_equal(ps.stacks, 7);
	assert_int_equal(ps.stack_ids, 5);
	expect_flat(p, b, 341, 347);
	profile_free(p);
}

static void test_take_recent(void **state)
{
	struct profile *p = new_profile(NULL);
	uint32_t a = fn(p, "a"), b = fn(p, "b"), u, s[2] = {a, b};
	uint64_t v[3] = {0};

	(void)state;
	assert_false(profile_has_recent(p));
	assert_int_equal(profile_add(p, s, 2, 3), 0);
	assert_int_equal(profile_add(p, s, 1, 2), 0);
	assert_true(profile_has_recent(p));
	assert_int_equal(profile_take_recent(p, sum_recent, v), 2);
	assert_false(profile_has_recent(p)); /* the next take looks at no stack */
	assert_int_equal(v[0], 5);
	assert_int_equal(v[2], 2);
	memset(v, 0, sizeof(v));
	assert_int_equal(profile_take_recent(p, sum_recent, v), 0); /* nothing new */
	assert_int_equal(v[0], 0);
	assert_int_equal(profile_add(p, s, 2, 4), 0);
	assert_int_equal(profile_take_recent(p, sum_recent, v), 1);
	assert_int_equal(v[0], 4); /* the stack's count is 7; its window's 4 */
	/* Two stacks merged by a rename: their recent samples add up. */
	u = profile_intern_unresolved(p, 0x9000, "[anon]");
	s[1] = u;
	assert_int_equal(profile_add(p, s, 2, 5), 0);
	s[1] = b;
	assert_int_equal(profile_add(p, s, 2, 1), 0);
	assert_int_equal(profile_rename(p, u, "b", "/usr/bin/app", 0x1001, PROFILE_KIND_NATIVE), b);
	assert_int_equal(profile_commit_renames(p), 1);
	assert_true(profile_has_recent(p)); /* a merge keeps them */
	memset(v, 0, sizeof(v));
	assert_int_equal(profile_take_recent(p, sum_recent, v), 1);
	assert_int_equal(v[0], 6);
	/* NULL fn: only forget (a restored profile). */
	assert_int_equal(profile_add(p, s, 2, 2), 0);
	assert_int_equal(profile_take_recent(p, NULL, NULL), 1);
	assert_int_equal(profile_take_recent(p, sum_recent, v), 0);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_intern),
	    cmocka_unit_test(test_intern_shared),
	    cmocka_unit_test(test_same),
	    cmocka_unit_test(test_source),
	    cmocka_unit_test(test_intern_many),
	    cmocka_unit_test(test_add_flat),
	    cmocka_unit_test(test_recursion),
	    cmocka_unit_test(test_sorted),
	    cmocka_unit_test(test_folded),
	    cmocka_unit_test(test_folded_large),
	    cmocka_unit_test(test_unknown_ids),
	    cmocka_unit_test(test_empty_stack),
	    cmocka_unit_test(test_cap_stacks),
	    cmocka_unit_test(test_cap_stack_ids),
	    cmocka_unit_test(test_cap_funcs),
	    cmocka_unit_test(test_cache),
	    cmocka_unit_test(test_cache_cap),
	    cmocka_unit_test(test_stacks_many),
	    cmocka_unit_test(test_stats),
	    cmocka_unit_test(test_random),
	    cmocka_unit_test(test_intern_null),
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_hashed_same),
	    cmocka_unit_test(test_empty_stack_first),
	    cmocka_unit_test(test_folded_cap),
	    cmocka_unit_test(test_folded_cap_big),
	    cmocka_unit_test(test_kernel_folded),
	    cmocka_unit_test(test_kernel_flat),
	    cmocka_unit_test(test_unresolved_intern),
	    cmocka_unit_test(test_rename_merge),
	    cmocka_unit_test(test_rename_in_place),
	    cmocka_unit_test(test_rename_random),
	    cmocka_unit_test(test_threads_share_ids),
	    cmocka_unit_test(test_take_recent),
	    cmocka_unit_test(test_cache_callee),
	    cmocka_unit_test(test_freeze),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
