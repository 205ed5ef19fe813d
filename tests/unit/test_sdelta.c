// SPDX-License-Identifier: GPL-2.0-only
/* test_sdelta.c: the difference of two snapshots of a profile (proto/sdelta.c): stacks that
 * grew, stacks that did not, new stacks, the same stack in two threads, an empty start, many
 * stacks (the table grows past its first size); an interval's end kept (sdelta_cap). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/sdelta.h"

#define MAXS 2000

struct snap {
	Kprof__SavedProfile sp;
	Kprof__SavedStack s[MAXS], *sv[MAXS];
	uint32_t ids[MAXS][3];
};

static void add(struct snap *x, uint32_t tid, const uint32_t *ids, size_t n, uint64_t count)
{
	size_t i = x->sp.n_stacks++;

	kprof__saved_stack__init(&x->s[i]);
	if (n)
		memcpy(x->ids[i], ids, n * sizeof(*ids));
	x->s[i].ids = x->ids[i];
	x->s[i].n_ids = n;
	x->s[i].tid = tid;
	x->s[i].count = count;
	x->sv[i] = &x->s[i];
	x->sp.stacks = x->sv;
}

static struct snap *snap_new(void)
{
	struct snap *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	kprof__saved_profile__init(&x->sp);
	x->sp.stacks = x->sv;
	return x;
}

static void test_basic(void **state)
{
	struct snap *a = snap_new(), *b = snap_new();
	struct sdelta *d;
	uint32_t s1[] = {0, 1}, s2[] = {0, 2, 1}, s3[] = {0, 3};

	(void)state;
	add(a, 1, s1, 2, 5);
	add(a, 1, s2, 3, 3);
	add(a, 2, s1, 2, 4); /* same ids, another thread */
	assert_int_equal(sdelta_new(&a->sp, &d), 0);
	assert_int_equal(sdelta_size(d), 3);
	add(b, 1, s1, 2, 9);  /* +4 */
	add(b, 1, s2, 3, 3);  /* +0: dropped */
	add(b, 2, s1, 2, 10); /* +6 */
	add(b, 3, s3, 2, 7);  /* new: 7 */
	add(b, 1, s3, 1, 1);  /* a prefix of s3, new: 1 */
	assert_int_equal(sdelta_apply(d, &b->sp), 18);
	assert_int_equal(b->sp.n_stacks, 4);
	assert_int_equal(b->sp.stacks[0]->count, 4);
	assert_int_equal(b->sp.stacks[1]->count, 6);
	assert_int_equal(b->sp.stacks[1]->tid, 2);
	assert_int_equal(b->sp.stacks[2]->count, 7);
	assert_int_equal(b->sp.stacks[3]->count, 1);
	sdelta_free(d);
	free(a);
	free(b);
}

/* Leaf addresses (issue 32): each loses its count at the snapshot, by (function, address); one
 * that did not grow is dropped, a new one kept whole. */
static void test_leaf_addrs(void **state)
{
	static const struct {
		uint32_t func;
		uint64_t addr, a, b;
	} la[] = {{1, 0x1010, 4, 9}, {1, 0x1020, 2, 2}, {2, 0x1010, 1, 3}, {1, 0x1030, 0, 5}};
	Kprof__SavedLeafAddr av[4], bv[4], *ap[4], *bp[4];
	struct snap *a = snap_new(), *b = snap_new();
	struct sdelta *d;
	size_t na = 0;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		kprof__saved_leaf_addr__init(&av[i]);
		kprof__saved_leaf_addr__init(&bv[i]);
		av[i].func = bv[i].func = la[i].func;
		av[i].address = bv[i].address = la[i].addr;
		av[i].count = la[i].a;
		bv[i].count = la[i].b;
		if (la[i].a)
			ap[na++] = &av[i];
		bp[i] = &bv[3 - i]; /* in another order */
	}
	a->sp.leaf_addrs = ap;
	a->sp.n_leaf_addrs = na;
	b->sp.leaf_addrs = bp;
	b->sp.n_leaf_addrs = 4;
	assert_int_equal(sdelta_new(&a->sp, &d), 0);
	assert_int_equal(sdelta_apply(d, &b->sp), 0);
	assert_int_equal(b->sp.n_leaf_addrs, 3);
	assert_int_equal(b->sp.leaf_addrs[0]->address, 0x1030); /* new: 5 */
	assert_int_equal(b->sp.leaf_addrs[0]->count, 5);
	assert_int_equal(b->sp.leaf_addrs[1]->func, 2); /* 3 - 1 */
	assert_int_equal(b->sp.leaf_addrs[1]->count, 2);
	assert_int_equal(b->sp.leaf_addrs[2]->address, 0x1010); /* 9 - 4; 0x1020 did not grow */
	assert_int_equal(b->sp.leaf_addrs[2]->count, 5);
	sdelta_free(d);
	free(a);
	free(b);
}

/* A count lower than at the snapshot (not a later state): dropped, never wrapped around. */
static void test_shrunk(void **state)
{
	struct snap *a = snap_new(), *b = snap_new();
	struct sdelta *d;
	uint32_t s1[] = {4};

	(void)state;
	add(a, 1, s1, 1, 50);
	add(a, 1, NULL, 0, 2); /* an empty stack is a stack too */
	assert_int_equal(sdelta_new(&a->sp, &d), 0);
	add(b, 1, s1, 1, 10);
	add(b, 1, NULL, 0, 5);
	assert_int_equal(sdelta_apply(d, &b->sp), 3);
	assert_int_equal(b->sp.n_stacks, 1);
	assert_int_equal(b->sp.stacks[0]->n_ids, 0);
	sdelta_free(d);
	free(a);
	free(b);
}

/* An interval's end kept (sdelta_cap): start S, end E, a later state N; the interval built at N
 * (N - S) cut back to E - S is E - S, stacks and leaf addresses; what came after E alone is
 * dropped. */
static void test_cap(void **state)
{
	struct snap *s = snap_new(), *e = snap_new(), *n = snap_new();
	struct sdelta *ds, *de;
	Kprof__SavedLeafAddr ev, nv, *ep = &ev, *np = &nv;
	uint32_t s1[] = {0, 1}, s2[] = {0, 2}, s3[] = {0, 3};

	(void)state;
	add(s, 1, s1, 2, 5);
	add(e, 1, s1, 2, 9);  /* +4 in the interval */
	add(e, 1, s2, 2, 2);  /* new in the interval: 2 */
	add(n, 1, s3, 2, 6);  /* after its end only: dropped */
	add(n, 1, s2, 2, 7);  /* 2 of them in the interval */
	add(n, 1, s1, 2, 20); /* 4 of them in the interval */
	kprof__saved_leaf_addr__init(&ev);
	kprof__saved_leaf_addr__init(&nv);
	ev.func = nv.func = 1;
	ev.address = nv.address = 0x1010;
	ev.count = 3;
	nv.count = 8;
	e->sp.leaf_addrs = &ep;
	e->sp.n_leaf_addrs = 1;
	n->sp.leaf_addrs = &np;
	n->sp.n_leaf_addrs = 1;
	assert_int_equal(sdelta_new(&s->sp, &ds), 0);
	assert_int_equal(sdelta_apply(ds, &e->sp), 6); /* the interval at its end */
	assert_int_equal(sdelta_new(&e->sp, &de), 0);
	assert_int_equal(sdelta_apply(ds, &n->sp), 28); /* built later: too much */
	assert_int_equal(sdelta_cap(de, &n->sp), 6);
	assert_int_equal(n->sp.n_stacks, 2);
	assert_int_equal(n->sp.stacks[0]->ids[1], 2);
	assert_int_equal(n->sp.stacks[0]->count, 2);
	assert_int_equal(n->sp.stacks[1]->ids[1], 1);
	assert_int_equal(n->sp.stacks[1]->count, 4);
	assert_int_equal(n->sp.n_leaf_addrs, 1);
	assert_int_equal(n->sp.leaf_addrs[0]->count, 3);
	sdelta_free(ds);
	sdelta_free(de);
	free(s);
	free(e);
	free(n);
}

static void test_empty_and_many(void **state)
{
	struct snap *a = snap_new(), *b = snap_new();
	struct sdelta *d;
	uint64_t want = 0;

	(void)state;
	assert_int_equal(sdelta_new(&a->sp, &d), 0);
	assert_int_equal(sdelta_size(d), 0);
	for (uint32_t i = 0; i < MAXS; i++) {
		uint32_t ids[] = {i, i % 7, 0};

		add(b, i % 5, ids, 1 + i % 3, i + 1);
		want += i + 1;
	}
	assert_int_equal(sdelta_apply(d, &b->sp), want);
	sdelta_free(d);
	/* b as the start of itself: nothing new. */
	assert_int_equal(sdelta_new(&b->sp, &d), 0);
	assert_int_equal(sdelta_size(d), MAXS);
	assert_int_equal(sdelta_apply(d, &b->sp), 0);
	assert_int_equal(b->sp.n_stacks, 0);
	sdelta_free(d);
	sdelta_free(NULL);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic),
	    cmocka_unit_test(test_shrunk),
	    cmocka_unit_test(test_leaf_addrs),
	    cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_empty_and_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
