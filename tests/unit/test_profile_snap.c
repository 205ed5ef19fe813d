// SPDX-License-Identifier: GPL-2.0-only
/* test_profile_snap.c: a profile's samples since a snapshot (daemon/lib/profile_snap.c): stacks
 * that grew, did not, are new, per thread; nothing since; functions merged since (names given
 * late), committed or not; fn's error; and a randomized run against a naive count of every add
 * after the snapshot, by (thread, canonical ids). */
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

#include "kprof/profile_snap.h"

#include "../prng.h"

#define MAXG 4096

/* What profile_snap_delta gave, by "tid:canonical ids". */
struct gains {
	const struct profile *p;
	char key[MAXG][128];
	uint64_t count[MAXG];
	size_t n, calls;
};

static void key_of(const struct profile *p, uint32_t tid, const uint32_t *ids, size_t n,
		   char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "%u:", tid);

	for (size_t i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%u,", profile_canon(p, ids[i]));
}

static void gain_add(struct gains *g, const char *key, uint64_t count)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->key[i], key)) {
			g->count[i] += count;
			return;
		}
	assert_true(g->n < MAXG);
	snprintf(g->key[g->n], sizeof(g->key[0]), "%s", key);
	g->count[g->n++] = count;
}

static uint64_t gain_of(const struct gains *g, const char *key)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->key[i], key))
			return g->count[i];
	return 0;
}

static int on_gain(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *userdata)
{
	struct gains *g = userdata;
	char key[128];

	assert_true(count > 0);
	key_of(g->p, tid, ids, n, key, sizeof(key));
	gain_add(g, key, count);
	g->calls++;
	return 0;
}

static struct profile *new_profile(void)
{
	struct profile *p = NULL;

	assert_int_equal(profile_new(NULL, &p), 0);
	return p;
}

static uint32_t fn(struct profile *p, const char *name)
{
	int id = profile_intern(p, name, "m", 0x1000 + strlen(name), PROFILE_KIND_NATIVE);

	assert_true(id >= 0);
	return (uint32_t)id;
}

/* The gains of p since s, into a fresh g; returns their sum (checked against the return). */
static uint64_t delta(const struct profile *p, const struct profile_snap *s, struct gains *g)
{
	uint64_t sum = 99;
	int n;

	memset(g, 0, sizeof(*g));
	g->p = p;
	n = profile_snap_delta(p, s, on_gain, g, &sum);
	assert_true(n >= 0);
	assert_int_equal((size_t)n, g->calls);
	return sum;
}

static void test_basic(void **state)
{
	struct profile *p = new_profile();
	struct profile_snap *s = NULL;
	struct gains *g = calloc(1, sizeof(*g));
	uint32_t a = fn(p, "a"), b = fn(p, "bb"), c = fn(p, "ccc");
	uint32_t s1[] = {a, b}, s2[] = {a, b, c}, s3[] = {a, c};

	(void)state;
	assert_int_equal(profile_add_tid(p, 1, s1, 2, 5), 0);
	assert_int_equal(profile_add_tid(p, 1, s2, 3, 3), 0);
	assert_int_equal(profile_add_tid(p, 2, s1, 2, 4), 0);
	assert_int_equal(profile_snap_new(p, &s), 0);

	/* Nothing since: no stack, fn never called. */
	assert_false(profile_snap_gained(p, s));
	assert_int_equal(delta(p, s, g), 0);
	assert_int_equal(g->calls, 0);

	assert_int_equal(profile_add_tid(p, 1, s1, 2, 2), 0); /* grew */
	assert_int_equal(profile_add_tid(p, 3, s1, 2, 7), 0); /* same ids, a new thread */
	assert_int_equal(profile_add_tid(p, 1, s3, 2, 1), 0); /* a new stack */
	assert_int_equal(profile_add(p, NULL, 0, 6), 0);      /* the empty stack */
	assert_true(profile_snap_gained(p, s));
	assert_int_equal(delta(p, s, g), 16);
	assert_int_equal(g->n, 4);
	assert_int_equal(gain_of(g, "1:0,1,"), 2);
	assert_int_equal(gain_of(g, "3:0,1,"), 7);
	assert_int_equal(gain_of(g, "1:0,2,"), 1);
	assert_int_equal(gain_of(g, "0:"), 6);
	assert_int_equal(gain_of(g, "1:0,1,2,"), 0); /* did not grow: not given */
	assert_int_equal(gain_of(g, "2:0,1,"), 0);

	/* A snapshot of an empty profile: everything is new. */
	profile_snap_free(s);
	profile_free(p);
	p = new_profile();
	assert_int_equal(profile_snap_new(p, &s), 0);
	a = fn(p, "a");
	assert_int_equal(profile_add_tid(p, 9, &a, 1, 3), 0);
	assert_int_equal(delta(p, s, g), 3);
	assert_int_equal(gain_of(g, "9:0,"), 3);
	profile_snap_free(s);
	profile_free(p);
	profile_snap_free(NULL);
	free(g);
}

/* Functions merged after the snapshot: the merged stack gains only what came since. */
static void test_merged_since(void **state)
{
	struct profile *p = new_profile();
	struct profile_snap *s = NULL;
	struct gains *g = calloc(1, sizeof(*g));
	uint32_t m = fn(p, "main"), foo = fn(p, "foo"), st[3];
	int u1 = profile_intern_unresolved(p, 0x5010, "[anon]");
	int u2 = profile_intern_unresolved(p, 0x5020, "[anon]");

	(void)state;
	assert_true(u1 >= 0 && u2 >= 0);
	st[0] = m;
	st[1] = (uint32_t)u1;
	assert_int_equal(profile_add_tid(p, 1, st, 2, 3), 0);
	st[1] = foo;
	assert_int_equal(profile_add_tid(p, 1, st, 2, 2), 0);
	st[1] = (uint32_t)u2;
	assert_int_equal(profile_add_tid(p, 1, st, 2, 10), 0);
	assert_int_equal(profile_snap_new(p, &s), 0);

	/* u1 is foo: renamed and committed, main;u1 and main;foo are one stack of 5. */
	assert_int_equal(profile_rename(p, (uint32_t)u1, "foo", "m", 0x1003, PROFILE_KIND_NATIVE),
			 foo);
	assert_int_equal(profile_commit_renames(p), 1);
	st[1] = foo;
	assert_int_equal(profile_add_tid(p, 1, st, 2, 1), 0);
	assert_int_equal(delta(p, s, g), 1);
	assert_int_equal(g->n, 1);
	assert_int_equal(gain_of(g, "1:0,1,"), 1);

	/* u2 is foo too, not committed: main;u2 and main;foo are two stacks of p, one canonical
	 * stack of the snapshot (15 samples to give), and the gain is still only what came. */
	profile_snap_free(s);
	assert_int_equal(profile_snap_new(p, &s), 0);
	assert_int_equal(profile_rename(p, (uint32_t)u2, "foo", "m", 0x1003, PROFILE_KIND_NATIVE),
			 foo);
	st[1] = (uint32_t)u2;
	assert_int_equal(profile_add_tid(p, 1, st, 2, 4), 0);
	st[1] = foo;
	assert_int_equal(profile_add_tid(p, 1, st, 2, 2), 0);
	assert_int_equal(delta(p, s, g), 6);
	assert_int_equal(gain_of(g, "1:0,1,"), 6);
	/* ... and after the commit, the same (the pass by canonical ids). */
	assert_int_equal(profile_commit_renames(p), 1);
	assert_int_equal(delta(p, s, g), 6);
	assert_int_equal(g->n, 1);
	assert_int_equal(gain_of(g, "1:0,1,"), 6);
	profile_snap_free(s);
	profile_free(p);
	free(g);
}

static int fail_second(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *userdata)
{
	int *calls = userdata;

	(void)tid;
	(void)ids;
	(void)n;
	(void)count;
	return ++*calls == 2 ? -ECANCELED : 0;
}

static void test_fn_error(void **state)
{
	struct profile *p = new_profile();
	struct profile_snap *s = NULL;
	uint32_t a = fn(p, "a"), b = fn(p, "bb");
	uint64_t sum = 5;
	int calls = 0;

	(void)state;
	assert_int_equal(profile_snap_new(p, &s), 0);
	assert_int_equal(profile_add(p, &a, 1, 1), 0);
	assert_int_equal(profile_add(p, &b, 1, 1), 0);
	assert_int_equal(profile_add_tid(p, 4, &b, 1, 1), 0);
	assert_int_equal(profile_snap_delta(p, s, fail_second, &calls, &sum), -ECANCELED);
	assert_int_equal(calls, 2);
	assert_int_equal(sum, 0); /* not set on an error */
	profile_snap_free(s);
	profile_free(p);
}

/* Random adds, a snapshot, more random adds with names given late and commits between them:
 * the gains are what was added after the snapshot, by (thread, canonical ids at the end). */
struct add {
	uint32_t tid, n, ids[6];
	uint64_t count;
};

static void random_round(uint64_t *seed, int round)
{
	struct profile *p = new_profile();
	struct profile_snap *s = NULL;
	struct gains *want = calloc(1, sizeof(*want)), *got = calloc(1, sizeof(*got));
	struct add *adds = calloc(600, sizeof(*adds));
	uint32_t ids[20];
	size_t na = 0, total = 0;
	char key[128];

	assert_non_null(want);
	assert_non_null(got);
	assert_non_null(adds);
	for (size_t i = 0; i < 20; i++) {
		char name[16];
		int u = profile_intern_unresolved(p, 0x9000 + 16 * i, "[anon]");

		snprintf(name, sizeof(name), "f%zu", i);
		ids[i] = i < 8 ? fn(p, name) : (uint32_t)u;
		assert_true(i < 8 || u >= 0);
	}
	for (int k = 0; k < 600; k++) {
		struct add *a = &adds[na];

		if (k == 300)
			assert_int_equal(profile_snap_new(p, &s), 0);
		a->n = prng_next(seed) % 5;
		a->tid = prng_next(seed) % 3;
		a->count = 1 + prng_next(seed) % 3;
		for (size_t i = 0; i < a->n; i++)
			a->ids[i] = ids[prng_next(seed) % 20];
		assert_int_equal(profile_add_tid(p, a->tid, a->ids, a->n, a->count), 0);
		if (k >= 300) {
			total += a->count;
			na++;
		}
		if (k >= 200 && prng_next(seed) % 60 == 0) {
			char name[16];

			snprintf(name, sizeof(name), "f%u", (unsigned)(prng_next(seed) % 8));
			profile_rename(p, ids[8 + prng_next(seed) % 12], name, "m",
				       0x1000 + strlen(name), PROFILE_KIND_NATIVE);
			if (prng_next(seed) % 2)
				assert_true(profile_commit_renames(p) >= 0);
		}
	}
	want->p = p;
	for (size_t i = 0; i < na; i++) {
		key_of(p, adds[i].tid, adds[i].ids, adds[i].n, key, sizeof(key));
		gain_add(want, key, adds[i].count);
	}
	assert_int_equal(delta(p, s, got), total);
	for (size_t i = 0; i < want->n; i++)
		if (gain_of(got, want->key[i]) != want->count[i])
			fail_msg("round %d: %s: got %llu, want %llu", round, want->key[i],
				 (unsigned long long)gain_of(got, want->key[i]),
				 (unsigned long long)want->count[i]);
	assert_int_equal(got->n, want->n);
	profile_snap_free(s);
	profile_free(p);
	free(adds);
	free(want);
	free(got);
}

static void test_random(void **state)
{
	uint64_t seed = 0x5eed;

	(void)state;
	for (int round = 0; round < 40; round++)
		random_round(&seed, round);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic),
	    cmocka_unit_test(test_merged_since),
	    cmocka_unit_test(test_fn_error),
	    cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
