// SPDX-License-Identifier: GPL-2.0-only
/* test_procmaps.c: unit tests for the procmaps module (links daemon/lib/procmaps.c alone). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/procmaps.h"

/* As the kernel writes it: anonymous mappings end in "0 " with no path. */
static const char maps[] =
    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567                    /usr/bin/minijit\n"
    "55d0c0a02000-55d0c0a04000 r-xp 00002000 08:01 1234567                    /usr/bin/minijit\n"
    "55d0c1e3f000-55d0c1e60000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0 \n"
    "7f1c2b000000-7f1c2b001000 r-xs 00000000 00:01 2049                       "
    "/memfd:minijit (deleted)\n"
    "7f1c2c028000-7f1c2c1bd000 r-xp 00028000 fd:00 3932181                    "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f1c2c200000-7f1c2c201000 r--p 0000a000 103:0a 42                        "
    "/home/u/My Programs/lib x.so\n"
    "7ffd1a3c0000-7ffd1a3e1000 rw-p 00000000 00:00 0                          [stack]\n"
    "7ffd1a3f5000-7ffd1a3f7000 r-xp 00000000 00:00 0                          [vdso]\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

static struct procmaps *parse(const char *text, size_t len, size_t max)
{
	struct procmaps *pm = NULL;

	assert_int_equal(procmaps_parse(text, len, max, &pm), 0);
	assert_non_null(pm);
	return pm;
}

static struct procmaps *parse_str(const char *text, size_t max)
{
	return parse(text, strlen(text), max);
}

static void expect_entry(const struct procmaps_entry *e, uint64_t start, uint64_t end,
			 const char *perms, uint64_t offset, uint32_t maj, uint32_t min,
			 uint64_t inode, const char *path)
{
	assert_non_null(e);
	assert_int_equal(e->start, start);
	assert_int_equal(e->end, end);
	assert_string_equal(e->perms, perms);
	assert_int_equal(e->offset, offset);
	assert_int_equal(e->dev_major, maj);
	assert_int_equal(e->dev_minor, min);
	assert_int_equal(e->inode, inode);
	assert_non_null(e->path);
	assert_string_equal(e->path, path);
}

static void test_fields(void **state)
{
	struct procmaps *pm = parse(maps, sizeof(maps) - 1, 1000);

	(void)state;
	assert_int_equal(procmaps_count(pm), 10);
	assert_int_equal(procmaps_bad_lines(pm), 0);
	expect_entry(procmaps_at(pm, 0), 0x55d0c0a00000, 0x55d0c0a02000, "r--p", 0, 8, 1, 1234567,
		     "/usr/bin/minijit");
	expect_entry(procmaps_at(pm, 1), 0x55d0c0a02000, 0x55d0c0a04000, "r-xp", 0x2000, 8, 1,
		     1234567, "/usr/bin/minijit");
	expect_entry(procmaps_at(pm, 2), 0x55d0c1e3f000, 0x55d0c1e60000, "rw-p", 0, 0, 0, 0,
		     "[heap]");
	expect_entry(procmaps_at(pm, 3), 0x7f1c2a000000, 0x7f1c2a021000, "rw-p", 0, 0, 0, 0, "");
	expect_entry(procmaps_at(pm, 4), 0x7f1c2b000000, 0x7f1c2b001000, "r-xs", 0, 0, 1, 2049,
		     "/memfd:minijit (deleted)");
	expect_entry(procmaps_at(pm, 5), 0x7f1c2c028000, 0x7f1c2c1bd000, "r-xp", 0x28000, 0xfd, 0,
		     3932181, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	expect_entry(procmaps_at(pm, 6), 0x7f1c2c200000, 0x7f1c2c201000, "r--p", 0xa000, 0x103, 0xa,
		     42, "/home/u/My Programs/lib x.so");
	expect_entry(procmaps_at(pm, 7), 0x7ffd1a3c0000, 0x7ffd1a3e1000, "rw-p", 0, 0, 0, 0,
		     "[stack]");
	expect_entry(procmaps_at(pm, 8), 0x7ffd1a3f5000, 0x7ffd1a3f7000, "r-xp", 0, 0, 0, 0,
		     "[vdso]");
	expect_entry(procmaps_at(pm, 9), 0xffffffffff600000, 0xffffffffff601000, "--xp", 0, 0, 0, 0,
		     "[vsyscall]");
	assert_null(procmaps_at(pm, 10));
	assert_null(procmaps_at(pm, SIZE_MAX));
	procmaps_free(pm);
	procmaps_free(NULL);
}

/* The paths live in the parser's own memory: the input may go away. */
static void test_own_copy(void **state)
{
	char *text = strdup(maps);
	struct procmaps *pm;

	(void)state;
	assert_non_null(text);
	pm = parse_str(text, 1000);
	memset(text, 'X', strlen(text));
	free(text);
	assert_string_equal(procmaps_at(pm, 4)->path, "/memfd:minijit (deleted)");
	assert_string_equal(procmaps_at(pm, 6)->path, "/home/u/My Programs/lib x.so");
	procmaps_free(pm);
}

static void test_find(void **state)
{
	struct procmaps *pm = parse(maps, sizeof(maps) - 1, 1000);
	const struct procmaps_entry *e;

	(void)state;
	assert_null(procmaps_find(pm, 0));
	assert_null(procmaps_find(pm, 0x55d0c09fffff));
	/* first mapping: start and end - 1 */
	assert_ptr_equal(procmaps_find(pm, 0x55d0c0a00000), procmaps_at(pm, 0));
	assert_ptr_equal(procmaps_find(pm, 0x55d0c0a01fff), procmaps_at(pm, 0));
	/* its end is the start of the adjacent next one */
	assert_ptr_equal(procmaps_find(pm, 0x55d0c0a02000), procmaps_at(pm, 1));
	assert_ptr_equal(procmaps_find(pm, 0x55d0c0a03fff), procmaps_at(pm, 1));
	/* end of a mapping followed by a gap */
	assert_null(procmaps_find(pm, 0x55d0c0a04000));
	assert_null(procmaps_find(pm, 0x55d0c1e3efff));
	assert_ptr_equal(procmaps_find(pm, 0x55d0c1e3f000), procmaps_at(pm, 2));

	e = procmaps_find(pm, 0x7f1c2b000abc);
	assert_non_null(e);
	assert_string_equal(e->path, "/memfd:minijit (deleted)");
	assert_null(procmaps_find(pm, 0x7f1c2b001000));
	e = procmaps_find(pm, 0x7f1c2c1bcfff);
	assert_non_null(e);
	assert_string_equal(e->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_null(procmaps_find(pm, 0x7f1c2c1bd000));
	e = procmaps_find(pm, 0x7ffd1a3f6000);
	assert_non_null(e);
	assert_string_equal(e->path, "[vdso]");

	/* the last mapping and the top of the address space */
	assert_ptr_equal(procmaps_find(pm, 0xffffffffff600000), procmaps_at(pm, 9));
	assert_ptr_equal(procmaps_find(pm, 0xffffffffff600fff), procmaps_at(pm, 9));
	assert_null(procmaps_find(pm, 0xffffffffff601000));
	assert_null(procmaps_find(pm, UINT64_MAX));

	/* every mapping at start, end - 1 and middle */
	for (size_t i = 0; i < procmaps_count(pm); i++) {
		const struct procmaps_entry *m = procmaps_at(pm, i);

		assert_ptr_equal(procmaps_find(pm, m->start), m);
		assert_ptr_equal(procmaps_find(pm, m->end - 1), m);
		assert_ptr_equal(procmaps_find(pm, m->start + (m->end - m->start) / 2), m);
	}
	procmaps_free(pm);
}

static void test_unsorted(void **state)
{
	static const char text[] = "3000-4000 r-xp 00000000 08:01 3 /c\n"
				   "1000-2000 r-xp 00000000 08:01 1 /a\n"
				   "5000-6000 r-xp 00000000 08:01 5 /e\n"
				   "2000-3000 r-xp 00000000 08:01 2 /b\n"
				   "4000-5000 r-xp 00000000 08:01 4 /d";
	struct procmaps *pm = parse_str(text, 100);

	(void)state;
	assert_int_equal(procmaps_count(pm), 5);
	for (size_t i = 0; i < 5; i++) {
		const struct procmaps_entry *e = procmaps_at(pm, i);
		char path[3] = {'/', (char)('a' + i), 0};

		/* each entry keeps its own fields through the sort */
		expect_entry(e, 0x1000 * (i + 1), 0x1000 * (i + 2), "r-xp", 0, 8, 1, i + 1, path);
		assert_ptr_equal(procmaps_find(pm, 0x1000 * (i + 1) + 0x800), e);
	}
	assert_null(procmaps_find(pm, 0x6000));
	assert_null(procmaps_find(pm, 0xfff));
	procmaps_free(pm);
}

static void test_malformed(void **state)
{
	static const char text[] =
	    "1000-2000 r-xp 00000000 08:01 1 /good1\n"
	    "garbage\n"
	    "3000-4000 r-xp\n"			    /* missing fields */
	    "3000-4000 r-xp 00000000 08:01\n"	    /* no inode */
	    "3000-4000 r-xp 00000000 0801 7 /x\n"   /* no ':' in the device */
	    "zz00-4000 r-xp 00000000 08:01 7 /x\n"  /* bad hex start */
	    "3000-4g00 r-xp 00000000 08:01 7 /x\n"  /* bad hex end */
	    "3000-4000 r-xp 0000q000 08:01 7 /x\n"  /* bad hex offset */
	    "3000-4000 r-xp 00000000 0g:01 7 /x\n"  /* bad hex device */
	    "3000-4000 r-xp 00000000 08:01 x7 /x\n" /* bad inode */
	    "3000_4000 r-xp 00000000 08:01 7 /x\n"  /* bad separator */
	    "4000-3000 r-xp 00000000 08:01 7 /x\n"  /* start > end */
	    "3000-3000 r-xp 00000000 08:01 7 /x\n"  /* start == end */
	    "10000000000000000-10000000000001000 r-xp 00000000 08:01 7 /x\n" /* 17 digits */
	    "   \n"
	    "-4000 r-xp 00000000 08:01 7 /x\n"
	    "3000-4000 r-xp 00000000 08:01 7 /x\0y\n" /* embedded NUL */
	    "5000-6000 r-xp 00000000 08:01 2 /good2";
	struct procmaps *pm = parse(text, sizeof(text) - 1, 100);

	(void)state;
	assert_int_equal(procmaps_bad_lines(pm), 16);
	assert_int_equal(procmaps_count(pm), 2);
	expect_entry(procmaps_at(pm, 0), 0x1000, 0x2000, "r-xp", 0, 8, 1, 1, "/good1");
	expect_entry(procmaps_at(pm, 1), 0x5000, 0x6000, "r-xp", 0, 8, 1, 2, "/good2");
	assert_null(procmaps_find(pm, 0x3000));
	procmaps_free(pm);
}

/* Empty lines are not mappings and not errors; a last line without '\n' counts. */
static void test_blank_lines(void **state)
{
	static const char text[] = "\n\n1000-2000 r--p 00000000 00:00 0\n\n"
				   "2000-3000 r--p 00000010 00:00 0 [anon:x]\n\n";
	struct procmaps *pm = parse_str(text, 100);

	(void)state;
	assert_int_equal(procmaps_count(pm), 2);
	assert_int_equal(procmaps_bad_lines(pm), 0);
	expect_entry(procmaps_at(pm, 0), 0x1000, 0x2000, "r--p", 0, 0, 0, 0, "");
	expect_entry(procmaps_at(pm, 1), 0x2000, 0x3000, "r--p", 0x10, 0, 0, 0, "[anon:x]");
	procmaps_free(pm);

	/* the largest addresses and numbers a field can hold */
	pm = parse_str("0-ffffffffffffffff rwxp ffffffffffffffff ffffffff:ffffffff "
		       "18446744073709551615 /big",
		       10);
	assert_int_equal(procmaps_count(pm), 1);
	assert_int_equal(procmaps_bad_lines(pm), 0);
	expect_entry(procmaps_at(pm, 0), 0, UINT64_MAX, "rwxp", UINT64_MAX, UINT32_MAX, UINT32_MAX,
		     UINT64_MAX, "/big");
	assert_ptr_equal(procmaps_find(pm, 0), procmaps_at(pm, 0));
	assert_ptr_equal(procmaps_find(pm, UINT64_MAX - 1), procmaps_at(pm, 0));
	assert_null(procmaps_find(pm, UINT64_MAX)); /* [start, end) */
	procmaps_free(pm);

	/* a device number that does not fit in 32 bits is refused */
	pm = parse_str("1000-2000 r--p 00000000 100000000:00 0 /x\n", 10);
	assert_int_equal(procmaps_count(pm), 0);
	assert_int_equal(procmaps_bad_lines(pm), 1);
	procmaps_free(pm);
}

static void test_max_entries(void **state)
{
	struct procmaps *pm;

	(void)state;
	/* only the first entries of the text are kept, then sorted */
	pm = parse(maps, sizeof(maps) - 1, 3);
	assert_int_equal(procmaps_count(pm), 3);
	assert_string_equal(procmaps_at(pm, 2)->path, "[heap]");
	assert_null(procmaps_find(pm, 0x7ffd1a3f6000));
	assert_null(procmaps_at(pm, 3));
	procmaps_free(pm);

	pm = parse_str("3000-4000 r-xp 00000000 08:01 3 /c\n"
		       "bad line\n"
		       "1000-2000 r-xp 00000000 08:01 1 /a\n"
		       "2000-3000 r-xp 00000000 08:01 2 /b\n",
		       2);
	assert_int_equal(procmaps_count(pm), 2);
	assert_string_equal(procmaps_at(pm, 0)->path, "/a");
	assert_string_equal(procmaps_at(pm, 1)->path, "/c");
	assert_int_equal(procmaps_bad_lines(pm), 1);
	procmaps_free(pm);

	/* one over the cap, without a final newline */
	pm = parse_str("1000-2000 r-xp 00000000 08:01 1 /a\n"
		       "2000-3000 r-xp 00000000 08:01 2 /b\n"
		       "3000-4000 r-xp 00000000 08:01 3 /c",
		       2);
	assert_int_equal(procmaps_count(pm), 2);
	assert_null(procmaps_find(pm, 0x3000));
	procmaps_free(pm);

	pm = parse(maps, sizeof(maps) - 1, 0);
	assert_int_equal(procmaps_count(pm), 0);
	assert_null(procmaps_find(pm, 0x55d0c0a00000));
	procmaps_free(pm);

	pm = parse(maps, sizeof(maps) - 1, 10);
	assert_int_equal(procmaps_count(pm), 10);
	procmaps_free(pm);
}

static void test_empty(void **state)
{
	struct procmaps *pm;

	(void)state;
	pm = parse("", 0, 100);
	assert_int_equal(procmaps_count(pm), 0);
	assert_int_equal(procmaps_bad_lines(pm), 0);
	assert_null(procmaps_at(pm, 0));
	assert_null(procmaps_find(pm, 0));
	assert_null(procmaps_find(pm, 0x1000));
	procmaps_free(pm);

	pm = parse_str("\n", 100);
	assert_int_equal(procmaps_count(pm), 0);
	assert_int_equal(procmaps_bad_lines(pm), 0);
	procmaps_free(pm);

	/* len bounds the text: what follows is not read */
	pm = parse("1000-2000 r-xp 00000000 08:01 1 /a\n2000-3000", 35, 100);
	assert_int_equal(procmaps_count(pm), 1);
	assert_int_equal(procmaps_bad_lines(pm), 0);
	procmaps_free(pm);
}

static void test_is_exec(void **state)
{
	struct procmaps *pm = parse(maps, sizeof(maps) - 1, 100);
	static const int want[] = {0, 1, 0, 0, 1, 1, 0, 0, 1, 1};

	(void)state;
	for (size_t i = 0; i < 10; i++)
		if (procmaps_is_exec(procmaps_at(pm, i)) != want[i])
			fail_msg("%s (%s): is_exec %d", procmaps_at(pm, i)->path,
				 procmaps_at(pm, i)->perms, procmaps_is_exec(procmaps_at(pm, i)));
	procmaps_free(pm);
}

/* Anonymous memory in its forms (issue 30, item 6): what a process fills itself. */
static void test_is_anon(void **state)
{
	static const char text[] = "10000-11000 r-xp 00000000 00:00 0 \n"
				   "11000-12000 rwxs 00000000 00:01 1029 /dev/zero (deleted)\n"
				   "12000-13000 r-xs 00000000 00:01 5 [anon_shmem]\n"
				   "13000-14000 r-xs 00000000 00:01 32768 /SYSV0000002a (deleted)\n"
				   "14000-15000 r-xp 00000000 00:01 7 /memfd:jit (deleted)\n"
				   "15000-16000 r-xp 00000000 00:00 0 [anon:v8 code]\n"
				   "16000-17000 rwxp 00000000 00:00 0 [heap]\n"
				   "17000-18000 r-xp 00000000 08:01 42 /usr/bin/zero (deleted)\n"
				   "18000-19000 r-xp 00000000 08:01 43 /dev/zero\n"
				   "19000-1a000 r-xp 00000000 08:01 44 /SYSV-notes\n"
				   "1a000-1b000 r-xp 00000000 00:00 0 [vdso]\n"
				   "1b000-1c000 r-xp 00000000 08:01 45 /usr/lib/libc.so.6\n";
	static const int want[] = {1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0};
	struct procmaps *pm = parse(text, sizeof(text) - 1, 100);

	(void)state;
	assert_int_equal(procmaps_count(pm), 12);
	for (size_t i = 0; i < 12; i++)
		if (procmaps_is_anon(procmaps_at(pm, i)) != want[i])
			fail_msg("'%s': is_anon %d", procmaps_at(pm, i)->path,
				 procmaps_is_anon(procmaps_at(pm, i)));
	procmaps_free(pm);
}

/* The one spelling of a mapping's map_files path, at the widest pid and addresses too. */
/* A read that changed nothing is the same; any field of any entry changed, an entry more or
 * less, or another order is not. */
static void test_same(void **state)
{
	static const char *const changed[] = {
	    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567 /usr/bin/minijit\n"
	    "55d0c0a02000-55d0c0a04000 r-xp 00002000 08:01 1234567 /usr/bin/minijit\n",
	    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567 /usr/bin/minijit\n"
	    "55d0c0a02000-55d0c0a05000 r-xp 00002000 08:01 1234567 /usr/bin/minijit\n"
	    "7f1c2b000000-7f1c2b001000 r-xs 00000000 00:01 2049 /memfd:minijit (deleted)\n",
	    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567 /usr/bin/minijit\n"
	    "55d0c0a02000-55d0c0a04000 rwxp 00002000 08:01 1234567 /usr/bin/minijit\n"
	    "7f1c2b000000-7f1c2b001000 r-xs 00000000 00:01 2049 /memfd:minijit (deleted)\n",
	    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567 /usr/bin/minijit\n"
	    "55d0c0a02000-55d0c0a04000 r-xp 00003000 08:01 1234567 /usr/bin/minijit\n"
	    "7f1c2b000000-7f1c2b001000 r-xs 00000000 00:01 2049 /memfd:minijit (deleted)\n",
	    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567 /usr/bin/minijit\n"
	    "55d0c0a02000-55d0c0a04000 r-xp 00002000 08:02 1234567 /usr/bin/minijit\n"
	    "7f1c2b000000-7f1c2b001000 r-xs 00000000 00:01 2049 /memfd:minijit (deleted)\n",
	    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567 /usr/bin/minijit\n"
	    "55d0c0a02000-55d0c0a04000 r-xp 00002000 08:01 1234568 /usr/bin/minijit\n"
	    "7f1c2b000000-7f1c2b001000 r-xs 00000000 00:01 2049 /memfd:minijit (deleted)\n",
	    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567 /usr/bin/minijit\n"
	    "55d0c0a02000-55d0c0a04000 r-xp 00002000 08:01 1234567 /usr/bin/minijit2\n"
	    "7f1c2b000000-7f1c2b001000 r-xs 00000000 00:01 2049 /memfd:minijit (deleted)\n",
	    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567 /usr/bin/minijit\n"
	    "55d0c0a02000-55d0c0a04000 r-xp 00002000 08:01 1234567 /usr/bin/minijit\n"
	    "7f1c2b000000-7f1c2b001000 r-xs 00000000 00:01 2049 /memfd:other (deleted)\n",
	};
	static const char base[] =
	    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234567 /usr/bin/minijit\n"
	    "55d0c0a02000-55d0c0a04000 r-xp 00002000 08:01 1234567 /usr/bin/minijit\n"
	    "7f1c2b000000-7f1c2b001000 r-xs 00000000 00:01 2049 /memfd:minijit (deleted)\n";
	struct procmaps *a = parse(base, sizeof(base) - 1, 100);
	struct procmaps *b = parse(base, sizeof(base) - 1, 100);

	(void)state;
	assert_true(procmaps_same(a, b));
	assert_true(procmaps_same(NULL, NULL));
	assert_false(procmaps_same(a, NULL));
	assert_false(procmaps_same(NULL, b));
	for (size_t i = 0; i < sizeof(changed) / sizeof(changed[0]); i++) {
		struct procmaps *c = parse(changed[i], strlen(changed[i]), 100);

		assert_false(procmaps_same(a, c));
		assert_false(procmaps_same(c, a));
		procmaps_free(c);
	}
	procmaps_free(a);
	procmaps_free(b);
}

static void test_file_path(void **state)
{
	char buf[PROCMAPS_FILE_PATH_MAX];
	int n;

	(void)state;
	n = procmaps_file_path(buf, sizeof(buf), 4242, 0x7f0000001000, 0x7f0000003000);
	assert_string_equal(buf, "/proc/4242/map_files/7f0000001000-7f0000003000");
	assert_int_equal(n, (int)strlen(buf));
	n = procmaps_file_path(buf, sizeof(buf), 2147483647, UINT64_MAX - 1, UINT64_MAX);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	assert_string_equal(buf, "/proc/2147483647/map_files/fffffffffffffffe-ffffffffffffffff");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fields),	cmocka_unit_test(test_own_copy),
	    cmocka_unit_test(test_find),	cmocka_unit_test(test_unsorted),
	    cmocka_unit_test(test_malformed),	cmocka_unit_test(test_blank_lines),
	    cmocka_unit_test(test_max_entries), cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_is_exec),	cmocka_unit_test(test_is_anon),
	    cmocka_unit_test(test_file_path),	cmocka_unit_test(test_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
