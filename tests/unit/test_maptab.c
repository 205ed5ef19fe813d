// SPDX-License-Identifier: GPL-2.0-only
/* test_maptab.c: unit tests of a target's mapping table (daemon/lib/maptab.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/maptab.h"

static struct maptab_entry ent(uint64_t start, const char *path, bool exe, const char *bid)
{
	return (struct maptab_entry){.start = start,
				     .limit = start + 0x1000,
				     .offset = 0x2000,
				     .path = path,
				     .exe = exe,
				     .build_id = bid};
}

static void test_union_and_order(void **state)
{
	struct maptab *mt;
	struct maptab_entry e;

	(void)state;
	assert_int_equal(maptab_new(0, &mt), 0);
	e = ent(0x7f0000, "/lib/libc.so.6", false, "");
	assert_int_equal(maptab_add(mt, &e), 1);
	e = ent(0x400000, "/bin/app", true, "abcd");
	assert_int_equal(maptab_add(mt, &e), 1);
	e = ent(0x500000, "/bin/app", true, "abcd");
	assert_int_equal(maptab_add(mt, &e), 1);
	/* The executable first, its mappings in the order read. */
	assert_int_equal(maptab_count(mt), 3);
	assert_string_equal(maptab_at(mt, 0)->path, "/bin/app");
	assert_int_equal(maptab_at(mt, 0)->start, 0x400000);
	assert_int_equal(maptab_at(mt, 1)->start, 0x500000);
	assert_string_equal(maptab_at(mt, 2)->path, "/lib/libc.so.6");
	/* Read again: nothing added, what was learnt since completes the entry. */
	e = ent(0x7f0000, "/lib/libc.so.6", false, "beef");
	e.has_vaddr = true;
	e.vaddr = 0x26000;
	assert_int_equal(maptab_add(mt, &e), 0);
	assert_string_equal(maptab_at(mt, 2)->build_id, "beef");
	assert_true(maptab_at(mt, 2)->has_vaddr);
	assert_int_equal(maptab_at(mt, 2)->vaddr, 0x26000);
	/* An exec: the new program first. */
	e = ent(0x600000, "/bin/other", true, "");
	assert_int_equal(maptab_add(mt, &e), 1);
	assert_string_equal(maptab_at(mt, 0)->path, "/bin/other");
	assert_null(maptab_at(mt, 4));
	e = ent(0x1000, "/x", false, "");
	e.limit = 0;
	assert_int_equal(maptab_add(mt, &e), -EINVAL);
	maptab_free(mt);
	maptab_free(NULL);
}

static void test_cap(void **state)
{
	struct maptab *mt;
	struct maptab_entry e;

	(void)state;
	assert_int_equal(maptab_new(2, &mt), 0);
	for (int i = 0; i < 2; i++) {
		e = ent(0x1000 * (i + 1), "/lib/x.so", false, "");
		assert_int_equal(maptab_add(mt, &e), 1);
	}
	e = ent(0x9000, "/lib/y.so", false, "");
	assert_int_equal(maptab_add(mt, &e), -ENOSPC);
	assert_int_equal(maptab_dropped(mt), 1);
	assert_int_equal(maptab_count(mt), 2);
	maptab_free(mt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_union_and_order),
	    cmocka_unit_test(test_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
