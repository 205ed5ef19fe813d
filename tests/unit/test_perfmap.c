// SPDX-License-Identifier: GPL-2.0-only
/* test_perfmap.c: unit tests for the perfmap module (links daemon/lib/perfmap.c alone). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/perfmap.h"

#include "../prng.h"

static struct perfmap *new_map(size_t max_line, size_t max_entries, uint64_t max_bytes)
{
	struct perfmap_limits lim = {max_line, max_entries, max_bytes};
	struct perfmap *pm = NULL;

	assert_int_equal(perfmap_new(&lim, &pm), 0);
	assert_non_null(pm);
	return pm;
}

static int feed_str(struct perfmap *pm, const char *s)
{
	return perfmap_feed(pm, s, strlen(s));
}

static void expect_sym(struct perfmap *pm, uint64_t addr, const char *name, uint64_t start,
		       uint64_t size)
{
	const struct perfmap_sym *s = perfmap_lookup(pm, addr);

	if (!s)
		fail_msg("no symbol at %#llx, expected %s", (unsigned long long)addr, name);
	assert_string_equal(s->name, name);
	assert_int_equal(s->start, start);
	assert_int_equal(s->size, size);
}

static void expect_none(struct perfmap *pm, uint64_t addr)
{
	const struct perfmap_sym *s = perfmap_lookup(pm, addr);

	if (s)
		fail_msg("%#llx: expected no symbol, got '%s'", (unsigned long long)addr, s->name);
}

static struct perfmap_stats stats(const struct perfmap *pm)
{
	struct perfmap_stats st;

	perfmap_get_stats(pm, &st);
	/* every complete line is accounted for exactly once */
	assert_int_equal(st.lines, st.entries + st.bad_lines + st.dropped);
	assert_true(st.long_lines <= st.bad_lines);
	return st;
}

static void test_plain(void **state)
{
	struct perfmap *pm = NULL;
	const char *map = "1000 10 foo\n2000 20 bar\n7f0012345678 abc baz\n";
	struct perfmap_stats st;

	(void)state;
	assert_int_equal(perfmap_new(NULL, &pm), 0);
	assert_int_equal(feed_str(pm, map), 3);
	expect_sym(pm, 0x1000, "foo", 0x1000, 0x10);
	expect_sym(pm, 0x100f, "foo", 0x1000, 0x10);
	expect_none(pm, 0x1010);
	expect_sym(pm, 0x201f, "bar", 0x2000, 0x20);
	expect_sym(pm, 0x7f0012345678 + 0xabb, "baz", 0x7f0012345678, 0xabc);
	st = stats(pm);
	assert_int_equal(st.bytes, strlen(map));
	assert_int_equal(st.lines, 3);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.bad_lines, 0);
	assert_int_equal(st.truncated, 0);
	assert_int_equal(perfmap_pending(pm), 0);
	assert_true(perfmap_memory(pm) > 0);
	perfmap_free(pm);
	perfmap_free(NULL);
}

/* A frame at a symbol's very first byte (issue 30, item 3): the map Erlang/OTP 25 writes with
 * +JPperf map, where each function's CodeInfoPrologue lies just before it. */
static void test_frame_at_start(void **state)
{
	struct perfmap *pm = NULL;
	const char *map = "7f0000001000 40 $erts_beamasm:normal_exit/0-CodeInfoPrologue\n"
			  "7f0000001040 20 $erts_beamasm:normal_exit/0\n"
			  "7f0000002000 10 gap_before\n"
			  "7f0000002020 10 after_gap\n"
			  "7f0000003000 100 outer\n"
			  "7f0000003080 10 inner\n";
	const struct perfmap_sym *s;

	(void)state;
	assert_int_equal(perfmap_new(NULL, &pm), 0);
	assert_int_equal(feed_str(pm, map), 6);
	/* The root of a BEAM process stack: normal_exit/0's first byte, looked up at - 1. */
	s = perfmap_lookup_frame(pm, 0x7f0000001040 - 1);
	assert_non_null(s);
	assert_string_equal(s->name, "$erts_beamasm:normal_exit/0");
	/* Plain lookups keep their meaning. */
	assert_string_equal(perfmap_lookup(pm, 0x7f0000001040 - 1)->name,
			    "$erts_beamasm:normal_exit/0-CodeInfoPrologue");
	/* Inside a symbol, not at its end: that symbol. */
	s = perfmap_lookup_frame(pm, 0x7f000000103e);
	assert_string_equal(s->name, "$erts_beamasm:normal_exit/0-CodeInfoPrologue");
	s = perfmap_lookup_frame(pm, 0x7f0000001040);
	assert_string_equal(s->name, "$erts_beamasm:normal_exit/0");
	/* Nothing at addr, a symbol starting at addr + 1. */
	s = perfmap_lookup_frame(pm, 0x7f0000002020 - 1);
	assert_string_equal(s->name, "after_gap");
	/* Nothing at addr nor at addr + 1's start: none. */
	assert_null(perfmap_lookup_frame(pm, 0x7f0000002010));
	/* A symbol starting inside another (overlapping lines, the later wins at its range): the
	 * byte before it is the outer one's, not its last byte: outer. */
	s = perfmap_lookup_frame(pm, 0x7f0000003080 - 1);
	assert_string_equal(s->name, "outer");
	/* The last address there is. */
	assert_null(perfmap_lookup_frame(pm, UINT64_MAX));
	perfmap_free(pm);
}

static void test_hex_forms(void **state)
{
	struct perfmap *pm = new_map(0, 0, 0);
	struct perfmap_stats st;

	(void)state;
	assert_int_equal(feed_str(pm, "0x1000 0x10 a\n"
				      "0X2000 0XFF b\n"
				      "ABCDEF00 aB c\n"
				      "0xDeadBeef0 0Xf d\n"
				      "ffffffffffffff00 ff top\n"
				      "0000000000003000 0000000000000001 e\n"),
			 6);
	expect_sym(pm, 0x100f, "a", 0x1000, 0x10);
	expect_sym(pm, 0x20fe, "b", 0x2000, 0xff);
	expect_sym(pm, 0xabcdef00, "c", 0xabcdef00, 0xab);
	expect_sym(pm, 0xdeadbeef0 + 0xe, "d", 0xdeadbeef0, 0xf);
	expect_sym(pm, UINT64_MAX - 1, "top", 0xffffffffffffff00, 0xff);
	expect_none(pm, UINT64_MAX);
	expect_sym(pm, 0x3000, "e", 0x3000, 1);

	/* malformed numbers */
	assert_int_equal(feed_str(pm, "10g0 10 x\n"		 /* not hex */
				      "1000 1g x\n"		 /* not hex */
				      "0x 10 x\n"		 /* prefix without digits */
				      "1000 0x x\n"		 /* prefix without digits */
				      "00000000000001000 10 x\n" /* 17 digits */
				      "1000 00000000000000010 x\n"
				      "1000 0 x\n"   /* size 0 */
				      "1000 000 x\n" /* size 0 */
				      "-1000 10 x\n" /* sign */
				      "+1000 10 x\n"
				      "1000,10 x\n"
				      "1000\n"
				      "1000 10\n"	/* no name */
				      "1000 10 \n"	/* no name */
				      "1000 10 \t \r\n" /* no name */
				      "\n"		/* empty */
				      "x 1000 10\n"
				      "0x0x10 10 x\n"),
			 0);
	st = stats(pm);
	assert_int_equal(st.entries, 6);
	assert_int_equal(st.bad_lines, 18);
	assert_int_equal(st.lines, 24);
	expect_none(pm, 0x4000);
	perfmap_free(pm);
}

static void test_names(void **state)
{
	struct perfmap *pm = new_map(0, 0, 0);

	(void)state;
	assert_int_equal(feed_str(pm, "1000 10 LazyCompile:~foo /srv/a b.js:12:3\n"
				      "2000 10 crlf\r\n"
				      "3000 10 two words\r\n"
				      "  4000\t10   \t lead and trail  \n"
				      "5000 10 a\r\r\n"
				      "6000 10 \xe2\x86\x92 utf-8 \x01\n"),
			 6);
	expect_sym(pm, 0x1000, "LazyCompile:~foo /srv/a b.js:12:3", 0x1000, 0x10);
	expect_sym(pm, 0x2000, "crlf", 0x2000, 0x10);
	expect_sym(pm, 0x3000, "two words", 0x3000, 0x10);
	expect_sym(pm, 0x4000, "lead and trail  ", 0x4000, 0x10);
	expect_sym(pm, 0x5000, "a\r", 0x5000, 0x10); /* only one '\r' is a line ending */
	expect_sym(pm, 0x6000, "\xe2\x86\x92 utf-8 \x01", 0x6000, 0x10);
	perfmap_free(pm);
}

static void test_overflow(void **state)
{
	struct perfmap *pm = new_map(0, 0, 0);
	struct perfmap_stats st;

	(void)state;
	assert_int_equal(feed_str(pm, "ffffffffffffffff 1 x\n"
				      "fffffffffffffff0 10 x\n"
				      "1 ffffffffffffffff x\n"
				      "8000000000000000 8000000000000000 x\n"),
			 0);
	st = stats(pm);
	assert_int_equal(st.bad_lines, 4);
	assert_int_equal(feed_str(pm, "0 ffffffffffffffff all\nfffffffffffffff0 f ok\n"), 2);
	expect_sym(pm, UINT64_MAX - 1, "ok", 0xfffffffffffffff0, 0xf);
	expect_none(pm, UINT64_MAX);
	expect_sym(pm, 0, "all", 0, UINT64_MAX);
	expect_sym(pm, UINT64_MAX - 0x10, "all", 0, UINT64_MAX);
	perfmap_free(pm);
}

/* A sample map with every kind of line, torn at every byte. */
static const char sample[] = "1000 100 a\n"
			     "0x1080 0x40 b inside a\r\n"
			     "bad line\n"
			     "2000 10 c\n"
			     "\n"
			     "2000 10 c2 recompiled\n"
			     "0X3000 0X20 upper\n"
			     "1010 8 late\n"
			     "3000 1000000000000000000 too many digits\n"
			     "4000 10 tail without newline";

static const uint64_t probes[] = {0xfff,  0x1000, 0x100f, 0x1010, 0x1017, 0x1018,
				  0x1080, 0x10bf, 0x10c0, 0x10ff, 0x1100, 0x2000,
				  0x200f, 0x2010, 0x3000, 0x301f, 0x3020, 0x4000};

struct snapshot {
	struct perfmap_stats st;
	size_t pending;
	const char *name[sizeof(probes) / sizeof(probes[0])];
	uint64_t start[sizeof(probes) / sizeof(probes[0])];
};

static void take(struct perfmap *pm, struct snapshot *s)
{
	size_t i;

	s->st = stats(pm);
	s->pending = perfmap_pending(pm);
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		const struct perfmap_sym *p = perfmap_lookup(pm, probes[i]);

		s->name[i] = p ? p->name : NULL;
		s->start[i] = p ? p->start : 0;
	}
}

static void same(const struct snapshot *a, const struct snapshot *b)
{
	size_t i;

	assert_memory_equal(&a->st, &b->st, sizeof(a->st));
	assert_int_equal(a->pending, b->pending);
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		if (!a->name[i] || !b->name[i]) {
			assert_ptr_equal(a->name[i], b->name[i]);
			continue;
		}
		assert_string_equal(a->name[i], b->name[i]);
		assert_int_equal(a->start[i], b->start[i]);
	}
}

static void test_torn(void **state)
{
	const size_t len = sizeof(sample) - 1;
	struct perfmap *ref = new_map(0, 0, 0), *pm = new_map(0, 0, 0);
	struct snapshot want, got;
	size_t cut, i;

	(void)state;
	assert_int_equal(perfmap_feed(ref, sample, len), 6);
	take(ref, &want);
	assert_int_equal(want.st.lines, 9);
	assert_int_equal(want.st.entries, 6);
	assert_int_equal(want.st.bad_lines, 3);
	assert_int_equal(want.pending, strlen("4000 10 tail without newline"));
	expect_sym(ref, 0x1000, "a", 0x1000, 0x100);
	expect_sym(ref, 0x1010, "late", 0x1010, 8);
	expect_sym(ref, 0x1018, "a", 0x1000, 0x100);
	expect_sym(ref, 0x10bf, "b inside a", 0x1080, 0x40);
	expect_sym(ref, 0x2000, "c2 recompiled", 0x2000, 0x10);
	expect_none(ref, 0x4000); /* still pending */

	for (cut = 0; cut <= len; cut++) {
		int a, b;

		perfmap_reset(pm);
		a = perfmap_feed(pm, sample, cut);
		/* the pending part is what follows the last '\n' */
		for (i = cut; i > 0 && sample[i - 1] != '\n'; i--)
			;
		assert_int_equal(perfmap_pending(pm), cut - i);
		b = perfmap_feed(pm, sample + cut, len - cut);
		assert_int_equal(a + b, 6);
		take(pm, &got);
		same(&want, &got);
	}

	/* one byte at a time, with lookups in between */
	perfmap_reset(pm);
	for (i = 0; i < len; i++) {
		assert_true(perfmap_feed(pm, sample + i, 1) >= 0);
		(void)perfmap_lookup(pm, 0x1000);
	}
	take(pm, &got);
	same(&want, &got);

	/* completing the torn last line */
	assert_int_equal(feed_str(pm, "\n"), 1);
	expect_sym(pm, 0x400f, "tail without newline", 0x4000, 0x10);
	assert_int_equal(perfmap_pending(pm), 0);
	perfmap_free(ref);
	perfmap_free(pm);
}

static void test_long_line(void **state)
{
	const size_t big = 1 << 20;
	struct perfmap *pm = new_map(0, 0, 0);
	struct perfmap_stats st;
	char *buf = malloc(big + 64);
	size_t len, off, step;

	(void)state;
	assert_non_null(buf);
	len = (size_t)sprintf(buf, "1000 10 a\n5000 10 ");
	memset(buf + len, 'x', big);
	len += big;
	len += (size_t)sprintf(buf + len, "\n2000 10 b\n");

	for (step = len; step >= 4096; step = step == len ? 4096 : 0) {
		perfmap_reset(pm);
		for (off = 0; off < len; off += step) {
			size_t n = len - off < step ? len - off : step;

			assert_true(perfmap_feed(pm, buf + off, n) >= 0);
			assert_true(perfmap_memory(pm) < 128 * 1024);
			if (off + n < len - 10)
				assert_int_equal(perfmap_pending(pm), off + n - 10);
		}
		st = stats(pm);
		assert_int_equal(st.lines, 3);
		assert_int_equal(st.long_lines, 1);
		assert_int_equal(st.bad_lines, 1);
		assert_int_equal(st.entries, 2);
		expect_sym(pm, 0x1000, "a", 0x1000, 0x10);
		expect_sym(pm, 0x2000, "b", 0x2000, 0x10);
		expect_none(pm, 0x5000);
	}
	free(buf);
	perfmap_free(pm);

	/* exactly max_line is fine, one more byte is not; '\r' counts */
	pm = new_map(16, 0, 0);
	assert_int_equal(feed_str(pm, "1000 10 abcdefgh\n"), 1);   /* 16 */
	assert_int_equal(feed_str(pm, "2000 10 abcdefghi\n"), 0);  /* 17 */
	assert_int_equal(feed_str(pm, "3000 10 abcdefg\r\n"), 1);  /* 16 */
	assert_int_equal(feed_str(pm, "4000 10 abcdefgh\r\n"), 0); /* 17 */
	assert_int_equal(feed_str(pm, "5000 10 abcd"), 0);
	assert_int_equal(feed_str(pm, "efgh"), 0);
	assert_int_equal(perfmap_pending(pm), 16);
	assert_int_equal(feed_str(pm, "\n"), 1);
	assert_int_equal(feed_str(pm, "6000 10 abcd"), 0);
	assert_int_equal(feed_str(pm, "efghi"), 0);
	assert_int_equal(perfmap_pending(pm), 17);
	assert_int_equal(feed_str(pm, "jk"), 0);
	assert_int_equal(perfmap_pending(pm), 19);
	assert_int_equal(feed_str(pm, "\n7000 1 z\n"), 1);
	st = stats(pm);
	assert_int_equal(st.long_lines, 3);
	assert_int_equal(st.bad_lines, 3);
	assert_int_equal(st.entries, 4);
	expect_sym(pm, 0x1000, "abcdefgh", 0x1000, 0x10);
	expect_none(pm, 0x2000);
	expect_sym(pm, 0x3000, "abcdefg", 0x3000, 0x10);
	expect_none(pm, 0x4000);
	expect_sym(pm, 0x5000, "abcdefgh", 0x5000, 0x10);
	expect_none(pm, 0x6000);
	expect_sym(pm, 0x7000, "z", 0x7000, 1);
	perfmap_free(pm);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return prng_next(&rng_state);
}

static void test_garbage(void **state)
{
	struct perfmap *pm = new_map(256, 0, 0);
	struct perfmap_stats st;
	char buf[1 << 16];
	size_t i, round;

	(void)state;
	/* NULs anywhere make a line bad, never a truncated name */
	assert_int_equal(perfmap_feed(pm, "1000 10 fo\0o\n", 13), 0);
	assert_int_equal(perfmap_feed(pm, "1000\0 10 foo\n", 13), 0);
	assert_int_equal(perfmap_feed(pm, "\0\0\0\n", 4), 0);
	assert_int_equal(perfmap_feed(pm, "1000 10 foo\0\n", 13), 0);
	expect_none(pm, 0x1000);
	st = stats(pm);
	assert_int_equal(st.bad_lines, 4);

	rng_state = 42;
	for (round = 0; round < 20; round++) {
		perfmap_reset(pm);
		for (i = 0; i < sizeof(buf); i++) {
			uint64_t r = rnd();

			/* bias toward bytes the parser cares about */
			buf[i] = r % 4 == 0 ? "0x \t\n\r\0fF9"[(r >> 8) % 11] : (char)(r >> 16);
		}
		assert_true(perfmap_feed(pm, buf, sizeof(buf)) >= 0);
		st = stats(pm);
		assert_int_equal(st.bytes, sizeof(buf));
		assert_true(st.lines > 0);
		/* anything accepted is well formed */
		for (i = 0; i < 2000; i++) {
			const struct perfmap_sym *s = perfmap_lookup(pm, rnd());

			if (s) {
				assert_true(s->size > 0);
				assert_true(s->size <= UINT64_MAX - s->start);
				assert_true(strlen(s->name) > 0);
				assert_true(strlen(s->name) <= 256);
			}
		}
		/* a good line afterwards works, after the garbage's last line ends */
		assert_true(feed_str(pm, "\n7fff00000000 40 good\n") >= 1);
		expect_sym(pm, 0x7fff00000020, "good", 0x7fff00000000, 0x40);
		assert_int_equal(perfmap_pending(pm), 0);
	}
	perfmap_free(pm);
}

static void test_empty(void **state)
{
	struct perfmap *pm = new_map(0, 0, 0);
	struct perfmap_stats st;

	(void)state;
	assert_int_equal(perfmap_feed(pm, NULL, 0), 0);
	assert_int_equal(perfmap_feed(pm, "", 0), 0);
	assert_int_equal(perfmap_feed(NULL, "x", 1), -EINVAL);
	assert_int_equal(perfmap_feed(pm, NULL, 1), -EINVAL);
	st = stats(pm);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st.lines, 0);
	assert_int_equal(st.entries, 0);
	assert_int_equal(perfmap_pending(pm), 0);
	expect_none(pm, 0);
	expect_none(pm, 0x1000);
	expect_none(pm, UINT64_MAX);
	assert_int_equal(perfmap_build_index(pm), 0);
	assert_null(perfmap_lookup(NULL, 0));
	perfmap_free(pm);
}

static void test_later_wins(void **state)
{
	struct perfmap *pm = new_map(0, 0, 0);

	(void)state;
	/* JIT recompile at the same start */
	assert_int_equal(feed_str(pm, "1000 100 old\n1000 100 new\n"), 2);
	expect_sym(pm, 0x1000, "new", 0x1000, 0x100);
	expect_sym(pm, 0x10ff, "new", 0x1000, 0x100);
	/* same start, shorter: the rest is still the old one, reported whole */
	assert_int_equal(feed_str(pm, "1000 80 newer\n"), 1);
	expect_sym(pm, 0x107f, "newer", 0x1000, 0x80);
	expect_sym(pm, 0x1080, "new", 0x1000, 0x100);
	expect_none(pm, 0x1100);

	perfmap_reset(pm);
	/* partial overlap, both orders */
	assert_int_equal(feed_str(pm, "2000 100 a\n2080 100 b\n"), 2);
	expect_sym(pm, 0x207f, "a", 0x2000, 0x100);
	expect_sym(pm, 0x2080, "b", 0x2080, 0x100);
	expect_sym(pm, 0x2150, "b", 0x2080, 0x100);
	assert_int_equal(feed_str(pm, "3080 100 d\n3000 100 c\n"), 2);
	expect_sym(pm, 0x3090, "c", 0x3000, 0x100);
	expect_sym(pm, 0x30ff, "c", 0x3000, 0x100);
	expect_sym(pm, 0x3100, "d", 0x3080, 0x100);
	expect_none(pm, 0x3180);

	/* newer inside older, older inside newer */
	assert_int_equal(feed_str(pm, "4000 1000 outer\n4400 100 inner\n"), 2);
	expect_sym(pm, 0x43ff, "outer", 0x4000, 0x1000);
	expect_sym(pm, 0x4450, "inner", 0x4400, 0x100);
	expect_sym(pm, 0x4500, "outer", 0x4000, 0x1000);
	expect_sym(pm, 0x4fff, "outer", 0x4000, 0x1000);
	assert_int_equal(feed_str(pm, "6400 100 small\n6000 1000 big\n"), 2);
	expect_sym(pm, 0x6450, "big", 0x6000, 0x1000);
	expect_sym(pm, 0x6fff, "big", 0x6000, 0x1000);

	/* across feeds, with the index built in between (incremental merge) */
	assert_int_equal(feed_str(pm, "8000 1000 base\n"), 1);
	expect_sym(pm, 0x8800, "base", 0x8000, 0x1000);
	assert_int_equal(feed_str(pm, "8400 10 x\n8800 10 y\n"), 2);
	expect_sym(pm, 0x8405, "x", 0x8400, 0x10);
	expect_sym(pm, 0x8410, "base", 0x8000, 0x1000);
	expect_sym(pm, 0x8805, "y", 0x8800, 0x10);
	assert_int_equal(feed_str(pm, "7f00 200 cover\n8f00 200 cover2\n8400 4 x2\n"), 3);
	expect_sym(pm, 0x7f00, "cover", 0x7f00, 0x200);
	expect_sym(pm, 0x80ff, "cover", 0x7f00, 0x200);
	expect_sym(pm, 0x8100, "base", 0x8000, 0x1000);
	expect_sym(pm, 0x8403, "x2", 0x8400, 4);
	expect_sym(pm, 0x8404, "x", 0x8400, 0x10);
	expect_sym(pm, 0x8eff, "base", 0x8000, 0x1000);
	expect_sym(pm, 0x8f00, "cover2", 0x8f00, 0x200);
	expect_sym(pm, 0x90ff, "cover2", 0x8f00, 0x200);
	expect_none(pm, 0x9100);
	assert_int_equal(feed_str(pm, "0 ffffffffffffffff everything\n"), 1);
	expect_sym(pm, 0x8405, "everything", 0, UINT64_MAX);
	expect_sym(pm, 0x100, "everything", 0, UINT64_MAX);
	perfmap_free(pm);
}

static void test_reset(void **state)
{
	struct perfmap *pm = new_map(32, 0, 64);
	struct perfmap_stats st;
	const struct perfmap_sym *s;

	(void)state;
	assert_int_equal(feed_str(pm, "1000 10 a\n2000 10 b\n3000 10 par"), 2);
	s = perfmap_lookup(pm, 0x1000);
	assert_non_null(s);
	assert_int_equal(feed_str(pm, "tial\n"), 1);
	assert_ptr_equal(perfmap_lookup(pm, 0x1000), s); /* entries do not move */
	perfmap_reset(pm);
	st = stats(pm);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st.lines, 0);
	assert_int_equal(st.entries, 0);
	expect_none(pm, 0x1000);
	expect_none(pm, 0x3000);
	assert_int_equal(perfmap_pending(pm), 0);

	/* a reset in the middle of a line, and of a long line */
	assert_int_equal(feed_str(pm, "9000 10 torn"), 0);
	perfmap_reset(pm);
	assert_int_equal(feed_str(pm, "1000 10 c\n"), 1);
	expect_sym(pm, 0x1000, "c", 0x1000, 0x10);
	assert_int_equal(feed_str(pm, "5000 10 this line is far too long for us"), 0);
	assert_int_equal(perfmap_pending(pm), 40);
	perfmap_reset(pm);
	assert_int_equal(perfmap_pending(pm), 0);
	assert_int_equal(feed_str(pm, "2000 10 d\n"), 1);
	st = stats(pm);
	assert_int_equal(st.long_lines, 0);
	assert_int_equal(st.lines, 1);
	expect_none(pm, 0x1000);
	expect_sym(pm, 0x2000, "d", 0x2000, 0x10);
	perfmap_free(pm);
}

/* Symbols added already parsed (a jitdump's code loads) share the lines' table and rules. */
static void test_add(void **state)
{
	struct perfmap *pm = new_map(0, 3, 0);
	const struct perfmap_sym *s;
	struct perfmap_stats st;

	(void)state;
	assert_null(perfmap_last(pm));
	assert_int_equal(perfmap_add(pm, 0x1000, 0x100, "JS:*hot /a.js:6:21", 18), 1);
	s = perfmap_last(pm);
	assert_non_null(s);
	assert_string_equal(s->name, "JS:*hot /a.js:6:21");
	assert_int_equal(s->start, 0x1000);
	assert_int_equal(feed_str(pm, "1080 10 from_the_map\n"), 1);
	expect_sym(pm, 0x1000, "JS:*hot /a.js:6:21", 0x1000, 0x100);
	expect_sym(pm, 0x1085, "from_the_map", 0x1080, 0x10); /* the later one wins */
	assert_string_equal(perfmap_last(pm)->name, "from_the_map");
	/* not NUL-terminated: only len bytes; a newline in a name is just a byte */
	assert_int_equal(perfmap_add(pm, 0x1000, 0x20, "two\nlinesXXX", 9), 1);
	expect_sym(pm, 0x1010, "two\nlines", 0x1000, 0x20);
	expect_sym(pm, 0x1030, "JS:*hot /a.js:6:21", 0x1000, 0x100);
	/* refused and counted like bad lines */
	assert_int_equal(perfmap_add(pm, 0x5000, 0, "zero", 4), 0);
	assert_int_equal(perfmap_add(pm, UINT64_MAX - 4, 0x10, "wraps", 5), 0);
	assert_int_equal(perfmap_add(pm, 0x5000, 0x10, "", 0), 0);
	assert_int_equal(perfmap_add(pm, 0x5000, 0x10, "a\0b", 3), 0);
	assert_int_equal(perfmap_add(pm, 0x5000, 0x10, NULL, 1), -EINVAL);
	assert_int_equal(perfmap_add(NULL, 0x5000, 0x10, "x", 1), -EINVAL);
	expect_none(pm, 0x5000);
	assert_string_equal(perfmap_last(pm)->name, "two\nlines"); /* refused: not stored */
	/* the entries cap */
	assert_int_equal(perfmap_add(pm, 0x6000, 0x10, "over", 4), 0);
	st = stats(pm);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.bad_lines, 4);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.bytes, 21); /* only fed bytes */
	s = perfmap_lookup(pm, 0x1000);
	assert_non_null(s);
	perfmap_reset(pm);
	expect_none(pm, 0x1000);
	assert_null(perfmap_last(pm));
	assert_int_equal(perfmap_add(pm, 0x1000, 0x10, "again", 5), 1);
	expect_sym(pm, 0x1008, "again", 0x1000, 0x10);
	perfmap_free(pm);
}

static void test_caps(void **state)
{
	struct perfmap *pm = new_map(0, 2, 0);
	struct perfmap_stats st;

	(void)state;
	assert_int_equal(feed_str(pm, "1000 10 a\nbad\n2000 10 b\n3000 10 c\n4000 10 d\n"), 2);
	st = stats(pm);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.bad_lines, 1);
	expect_sym(pm, 0x1000, "a", 0x1000, 0x10);
	expect_sym(pm, 0x2000, "b", 0x2000, 0x10);
	expect_none(pm, 0x3000);
	perfmap_reset(pm);
	assert_int_equal(feed_str(pm, "3000 10 c\n"), 1);
	expect_sym(pm, 0x3000, "c", 0x3000, 0x10);
	perfmap_free(pm);

	/* max_bytes: 30 bytes fit, the rest of the feed and later feeds are ignored */
	pm = new_map(0, 0, 30);
	assert_int_equal(feed_str(pm, "1000 10 a\n2000 10 b\n"), 2); /* 20 */
	st = stats(pm);
	assert_int_equal(st.truncated, 0);
	assert_int_equal(feed_str(pm, "3000 10 c\n"), 1); /* 30: reached, nothing lost yet */
	st = stats(pm);
	assert_int_equal(st.bytes, 30);
	assert_int_equal(st.truncated, 0);
	assert_int_equal(feed_str(pm, "4000 10 d\n"), 0);
	st = stats(pm);
	assert_int_equal(st.truncated, 1);
	assert_int_equal(st.bytes, 30);
	assert_int_equal(st.lines, 3);
	expect_none(pm, 0x4000);
	perfmap_reset(pm);
	st = stats(pm);
	assert_int_equal(st.truncated, 0);
	/* a feed crossing the limit keeps its first part */
	assert_int_equal(feed_str(pm, "1000 10 a\n2000 10 b\n3000 10 c\n4000 10 d\n"), 3);
	st = stats(pm);
	assert_int_equal(st.truncated, 1);
	assert_int_equal(st.bytes, 30);
	expect_sym(pm, 0x3000, "c", 0x3000, 0x10);
	expect_none(pm, 0x4000);
	assert_int_equal(feed_str(pm, "5000 10 e\n"), 0);
	assert_int_equal(perfmap_pending(pm), 0);
	perfmap_free(pm);
}

static void test_misses(void **state)
{
	struct perfmap *pm = new_map(0, 0, 0);

	(void)state;
	assert_int_equal(feed_str(pm, "2000 100 b\n1000 100 a\n5000 100 c\n"), 3);
	expect_none(pm, 0);
	expect_none(pm, 0xfff);
	expect_sym(pm, 0x1000, "a", 0x1000, 0x100);
	expect_none(pm, 0x1100);
	expect_none(pm, 0x1fff);
	expect_sym(pm, 0x20ff, "b", 0x2000, 0x100);
	expect_none(pm, 0x2100);
	expect_none(pm, 0x4fff);
	expect_sym(pm, 0x5000, "c", 0x5000, 0x100);
	expect_none(pm, 0x5100);
	expect_none(pm, UINT64_MAX);
	perfmap_free(pm);
}

struct ent {
	uint64_t start, size;
};

/* The reference: the last fed entry containing addr. */
static long naive(const struct ent *v, size_t n, uint64_t addr)
{
	size_t i;

	for (i = n; i-- > 0;) {
		if (addr >= v[i].start && addr - v[i].start < v[i].size)
			return (long)i;
	}
	return -1;
}

static void check_against_naive(struct perfmap *pm, const struct ent *v, size_t n, size_t probes)
{
	char name[32];
	size_t i, k;

	for (i = 0; i < probes; i++) {
		const struct perfmap_sym *s;
		uint64_t addr;
		long want;

		k = rnd() % n;
		switch (i % 4) {
		case 0:
			addr = v[k].start + rnd() % (v[k].size + 1);
			break;
		case 1:
			addr = v[k].start;
			break;
		case 2:
			addr = v[k].start + v[k].size;
			break;
		default:
			addr = v[k].start - 1;
			break;
		}
		want = naive(v, n, addr);
		s = perfmap_lookup(pm, addr);
		if (want < 0) {
			assert_null(s);
			continue;
		}
		assert_non_null(s);
		snprintf(name, sizeof(name), "f%ld", want);
		assert_string_equal(s->name, name);
		assert_int_equal(s->start, v[want].start);
		assert_int_equal(s->size, v[want].size);
	}
}

static void random_round(uint64_t seed, size_t n, uint64_t space, size_t batches)
{
	struct perfmap *pm = new_map(0, 0, 0);
	struct ent *v = calloc(n, sizeof(*v));
	char *text = malloc(n * 64), *p = text;
	size_t i, done = 0, batch, off = 0;
	char **line_at = calloc(n + 1, sizeof(*line_at));

	assert_non_null(v);
	assert_non_null(text);
	assert_non_null(line_at);
	rng_state = seed;
	for (i = 0; i < n; i++) {
		uint64_t r = rnd() % 100;

		v[i].start = 0x400000 + rnd() % space;
		if (i && r < 15)
			v[i].start = v[rnd() % i].start; /* recompiled */
		if (r < 70)
			v[i].size = 1 + rnd() % 256;
		else if (r < 95)
			v[i].size = 1 + rnd() % (space / 16);
		else
			v[i].size = 1 + rnd() % space;
		line_at[i] = p;
		p += sprintf(p, "%s%llx %s%llx f%zu\n", r % 3 ? "" : "0x",
			     (unsigned long long)v[i].start, r % 5 ? "" : "0X",
			     (unsigned long long)v[i].size, i);
	}
	line_at[n] = p;

	/* feed in batches (torn at random bytes), checking against the entries fed so far */
	for (batch = 0; batch < batches; batch++) {
		size_t upto = batch + 1 == batches ? n : n * (batch + 1) / batches;
		size_t end = (size_t)(line_at[upto] - text), mid;

		mid = off + (end > off ? rnd() % (end - off) : 0);
		assert_true(perfmap_feed(pm, text + off, mid - off) >= 0);
		assert_true(perfmap_feed(pm, text + mid, end - mid) >= 0);
		off = end;
		done = upto;
		if (done)
			check_against_naive(pm, v, done, 3000);
	}
	assert_int_equal(stats(pm).entries, n);

	/* a second full read gives the same answers */
	perfmap_reset(pm);
	assert_int_equal(perfmap_feed(pm, text, (size_t)(p - text)), (int)n);
	check_against_naive(pm, v, n, 5000);

	free(line_at);
	free(text);
	free(v);
	perfmap_free(pm);
}

static void test_random(void **state)
{
	(void)state;
	random_round(1, 3000, 1 << 20, 1);
	random_round(2, 3000, 1 << 16, 10); /* dense */
	random_round(3, 2000, 4096, 25);    /* very dense */
	random_round(4, 200, 256, 200);	    /* one line per batch */
	random_round(5, 5000, UINT64_C(1) << 36, 7);
}

/* A name as a user types it: the whole perf-map name, or the name before V8's source. */
static void test_name_match(void **state)
{
	(void)state;
	assert_int_equal(perfmap_name_match("JS:*fig1 /app/f.js:11:14", "JS:*fig1", 8), 1);
	assert_int_equal(
	    perfmap_name_match("JS:*fig1 /app/f.js:11:14", "JS:*fig1 /app/f.js:11:14", 24), 2);
	assert_int_equal(perfmap_name_match("mj_hot", "mj_hot", 6), 2);
	assert_int_equal(perfmap_name_match("mj_hot", "mj_hot,mj_warm", 6), 2); /* a list's part */
	assert_int_equal(perfmap_name_match("mj_hot2", "mj_hot", 6), 0); /* no space: another */
	assert_int_equal(perfmap_name_match("JS:*fig10 /a.js:1:1", "JS:*fig1", 8), 0);
	assert_int_equal(perfmap_name_match("mj", "mj_hot", 6), 0);
	assert_int_equal(perfmap_name_match("mj_hot", "", 0), 0);
	assert_int_equal(perfmap_name_match("", "", 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain),      cmocka_unit_test(test_hex_forms),
	    cmocka_unit_test(test_names),      cmocka_unit_test(test_overflow),
	    cmocka_unit_test(test_torn),       cmocka_unit_test(test_long_line),
	    cmocka_unit_test(test_garbage),    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_later_wins), cmocka_unit_test(test_reset),
	    cmocka_unit_test(test_caps),       cmocka_unit_test(test_misses),
	    cmocka_unit_test(test_random),     cmocka_unit_test(test_add),
	    cmocka_unit_test(test_name_match), cmocka_unit_test(test_frame_at_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
