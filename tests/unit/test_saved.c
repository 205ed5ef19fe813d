// SPDX-License-Identifier: GPL-2.0-only
/* test_saved.c: the kept-profile decoder (proto/saved.c): what it refuses, and the profile it
 * rebuilds, on messages built here as kprofd writes them and with each kind of damage. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/saved.h"

struct fixture {
	Kprof__SavedProfile sp;
	Kprof__Target target;
	Kprof__SavedFunction f[3], *fp[3];
	Kprof__SavedStack s[2], *sv[2];
	Kprof__SavedHcctNode h[2], *hp[2];
	uint32_t ids0[2], ids1[3];
};

/* main -> hot (5 samples), main -> warm -> hot (3); an HCCT of main -> hot. */
static void make(struct fixture *x)
{
	static char *names[] = {"main", "hot", "warm"};

	memset(x, 0, sizeof(*x));
	kprof__saved_profile__init(&x->sp);
	kprof__target__init(&x->target);
	x->target.pid = 4242;
	x->sp.format = SAVED_FORMAT;
	x->sp.target = &x->target;
	for (int i = 0; i < 3; i++) {
		kprof__saved_function__init(&x->f[i]);
		x->f[i].name = names[i];
		x->f[i].module = "mod";
		x->f[i].kind =
		    i ? KPROF__FRAME_KIND__FRAME_KIND_JIT : KPROF__FRAME_KIND__FRAME_KIND_NATIVE;
		x->fp[i] = &x->f[i];
	}
	x->sp.n_functions = 3;
	x->sp.functions = x->fp;
	x->ids0[0] = 0, x->ids0[1] = 1;
	x->ids1[0] = 0, x->ids1[1] = 2, x->ids1[2] = 1;
	for (int i = 0; i < 2; i++) {
		kprof__saved_stack__init(&x->s[i]);
		x->sv[i] = &x->s[i];
	}
	x->s[0].ids = x->ids0, x->s[0].n_ids = 2, x->s[0].count = 5, x->s[0].tid = 1;
	x->s[1].ids = x->ids1, x->s[1].n_ids = 3, x->s[1].count = 3, x->s[1].tid = 2;
	x->sp.n_stacks = 2;
	x->sp.stacks = x->sv;
	for (int i = 0; i < 2; i++) {
		kprof__saved_hcct_node__init(&x->h[i]);
		x->hp[i] = &x->h[i];
	}
	x->h[0].func = 0, x->h[0].parent = -1, x->h[0].count = 8;
	x->h[1].func = 1, x->h[1].parent = 0, x->h[1].count = 5, x->h[1].monitored = true;
	x->sp.n_hcct = 2;
	x->sp.hcct = x->hp;
}

static void test_valid(void **state)
{
	struct fixture x;
	struct profile *p;
	struct profile_stats st;
	uint32_t *map = NULL;

	(void)state;
	make(&x);
	assert_int_equal(saved_check(&x.sp), 0);
	assert_int_equal(saved_profile(&x.sp, NULL, &p, &map), 0);
	profile_get_stats(p, &st);
	assert_int_equal(st.samples, 8);
	assert_int_equal(st.stacks, 2);
	assert_int_equal(profile_nfuncs(p), 3);
	assert_string_equal(profile_func_get(p, map[1])->name, "hot");
	assert_int_equal(profile_func_get(p, map[1])->self, 8);
	assert_int_equal(profile_func_get(p, map[0])->total, 8);
	profile_free(p);
	free(map);
}

/* kprofd never writes a function twice; a file that does still gives one consistent profile. */
static void test_duplicate_function(void **state)
{
	struct fixture x;
	struct profile *p;
	uint32_t *map = NULL;

	(void)state;
	make(&x);
	x.f[2].name = "hot"; /* warm is now a second "hot" */
	x.f[2].kind = x.f[1].kind;
	assert_int_equal(saved_check(&x.sp), 0);
	assert_int_equal(saved_profile(&x.sp, NULL, &p, &map), 0);
	assert_int_equal(profile_nfuncs(p), 2);
	assert_int_equal(map[1], map[2]);
	assert_int_equal(profile_func_get(p, map[1])->self, 8);
	profile_free(p);
	free(map);
}

static void test_refused(void **state)
{
	struct fixture x;
	uint32_t long_ids[300] = {0};
	struct profile *p = NULL;

	(void)state;
	make(&x);
	x.sp.format = 2;
	assert_int_equal(saved_check(&x.sp), -EPROTONOSUPPORT);
	make(&x);
	x.sp.target = NULL;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.target.pid = 0;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.target.pid = 1u << 31;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.f[1].kind = 99;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.ids1[2] = 3; /* no function 3 */
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	/* saved_profile refuses it too, unchecked */
	assert_int_equal(saved_profile(&x.sp, NULL, &p, NULL), -EBADMSG);
	make(&x);
	x.s[0].ids = long_ids;
	x.s[0].n_ids = 2 * 127 + 2;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	assert_int_equal(saved_profile(&x.sp, NULL, &p, NULL), -EBADMSG);
	make(&x);
	x.h[1].parent = 1; /* its own parent */
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.h[0].parent = -2;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.h[1].func = 3;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	/* Exact mode: the exact tree has the same rules, the counts at most one per function. */
	{
		uint64_t counts[4] = {1, 2, 3, 4};

		make(&x);
		x.sp.n_exact_hcct = 2;
		x.sp.exact_hcct = x.hp;
		x.sp.n_call_counts = 3;
		x.sp.call_counts = counts;
		assert_int_equal(saved_check(&x.sp), 0);
		x.sp.n_call_counts = 4;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		x.sp.n_call_counts = 3;
		x.h[1].parent = 1;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		make(&x);
		x.sp.n_exact_hcct = 1;
		x.sp.exact_hcct = &x.hp[1]; /* its parent 0 is not before it */
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),
	    cmocka_unit_test(test_duplicate_function),
	    cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
