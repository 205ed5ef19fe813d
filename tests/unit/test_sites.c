// SPDX-License-Identifier: GPL-2.0-only
/* test_sites.c: a profile's call sites by (caller, callee) pair (proto/sites.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/sites.h"

/* 0 -> 1 from one site (seen twice), 0 -> 2 from two, 1 -> 2 from one. */
static void test_sites(void **state)
{
	static const struct {
		uint32_t caller, callee;
		uint64_t addr;
	} in[] = {{0, 2, 0x20}, {0, 1, 0x10}, {1, 2, 0x30}, {0, 2, 0x28}, {0, 1, 0x10}};
	Kprof__SavedCallSite cs[5], *csp[5];
	Kprof__SavedProfile sp = KPROF__SAVED_PROFILE__INIT;
	struct sites st;
	bool one;

	(void)state;
	for (int i = 0; i < 5; i++) {
		kprof__saved_call_site__init(&cs[i]);
		cs[i].caller = in[i].caller;
		cs[i].callee = in[i].callee;
		cs[i].address = in[i].addr;
		csp[i] = &cs[i];
	}
	sp.n_functions = 3;
	sp.n_call_sites = 5;
	sp.call_sites = csp;
	assert_int_equal(sites_init(&st, &sp), 0);
	assert_int_equal(sites_one(&st, 0, 1)->address, 0x10);
	assert_null(sites_one(&st, 0, 2));
	assert_int_equal(sites_one(&st, 1, 2)->address, 0x30);
	assert_null(sites_one(&st, 2, 0));
	assert_int_equal(sites_pair_end(&st, 0, &one), 2); /* 0 -> 1 twice, one address */
	assert_true(one);
	assert_int_equal(sites_pair_end(&st, 2, &one), 4); /* 0 -> 2: two addresses */
	assert_false(one);
	assert_int_equal(sites_pair_end(&st, 4, &one), 5);
	sites_release(&st);
	cs[3].callee = 3; /* no such function */
	assert_int_equal(sites_init(&st, &sp), -EINVAL);
	sites_release(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sites),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
