// SPDX-License-Identifier: GPL-2.0-only
/* test_leafsplit.c: stacks split over their leaf function's addresses (proto/leafsplit.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/leafsplit.h"

/* Function 1 has addresses 0x20 (2 samples) and 0x10 (4), function 0 one at 0x30 (1): stacks of
 * 5 and 3 samples ending in function 1 take 4 at 0x10, then 1 + 1 at 0x20, the rest at 1. */
static void test_split(void **state)
{
	static const struct {
		uint32_t func;
		uint64_t addr, count;
	} in[] = {{1, 0x20, 2}, {1, 0x10, 4}, {0, 0x30, 1}};
	Kprof__SavedFunction fv[2], *fp[2] = {&fv[0], &fv[1]};
	Kprof__SavedLeafAddr la[3], *lap[3];
	Kprof__SavedProfile sp = KPROF__SAVED_PROFILE__INIT;
	struct leafsplit ls = {0};
	uint64_t left, got[4] = {0};
	int64_t k;

	(void)state;
	for (int i = 0; i < 2; i++)
		kprof__saved_function__init(&fv[i]);
	for (int i = 0; i < 3; i++) {
		kprof__saved_leaf_addr__init(&la[i]);
		la[i].func = in[i].func;
		la[i].address = in[i].addr;
		la[i].count = in[i].count;
		lap[i] = &la[i];
	}
	sp.n_functions = 2;
	sp.functions = fp;
	sp.n_leaf_addrs = 3;
	sp.leaf_addrs = lap;
	assert_int_equal(leafsplit_init(&ls, &sp), 0);
	assert_int_equal(sp.leaf_addrs[ls.order[0]]->address, 0x30); /* function 0 first */
	assert_int_equal(sp.leaf_addrs[ls.order[1]]->address, 0x10);
	for (int pass = 0; pass < 2; pass++) {
		memset(got, 0, sizeof(got));
		for (uint64_t stack = 5; stack >= 3; stack -= 2) {
			left = stack;
			while (left) {
				uint64_t n = leafsplit_next(&ls, 1, &left, &k);

				got[k < 0 ? 3 : k] += n;
			}
		}
		assert_int_equal(got[1], 4); /* 0x10 */
		assert_int_equal(got[2], 2); /* 0x20 */
		assert_int_equal(got[3], 2); /* function 1 itself */
		assert_int_equal(got[0], 0); /* function 0's address: not function 1's */
		leafsplit_reset(&ls); /* the same again */
	}
	leafsplit_release(&ls);
	la[2].func = 2; /* a function that does not exist */
	assert_int_equal(leafsplit_init(&ls, &sp), -EINVAL);
	leafsplit_release(&ls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
