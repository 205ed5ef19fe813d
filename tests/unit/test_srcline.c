// SPDX-License-Identifier: GPL-2.0-only
/* test_srcline.c: unit tests of the kprof-lines protocol parser (daemon/lib/srcline.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/srcline.h"

static int parse(const char *text, size_t *used, struct srcline_frame *fr, size_t max,
		 char *buf)
{
	size_t len = strlen(text);

	memcpy(buf, text, len + 1);
	return srcline_parse(buf, len, used, fr, max);
}

static void test_answers(void **state)
{
	struct srcline_frame fr[SRCLINE_MAX_FRAMES];
	char buf[8192], req[SRCLINE_REQUEST_MAX];
	size_t used = 0;

	(void)state;
	assert_int_equal(srcline_request(0x1139, req), 7);
	assert_string_equal(req, "0x1139\n");
	assert_int_equal(srcline_request(UINT64_MAX, req), 19);
	/* Two frames, then the next answer's start left alone. */
	assert_int_equal(parse("F\tmix\t/src/h.c\t12\nF\tspin\t/src/h.c\t30\nE\nF\tx", &used, fr,
			       16, buf),
			 2);
	assert_int_equal(used, strlen("F\tmix\t/src/h.c\t12\nF\tspin\t/src/h.c\t30\nE\n"));
	assert_string_equal(fr[0].func, "mix");
	assert_string_equal(fr[0].file, "/src/h.c");
	assert_int_equal(fr[0].line, 12);
	assert_string_equal(fr[1].func, "spin");
	assert_int_equal(fr[1].line, 30);
	/* No line: "E" alone; empty fields; the largest line number. */
	assert_int_equal(parse("E\n", &used, fr, 16, buf), 0);
	assert_int_equal(used, 2);
	assert_int_equal(parse("F\t\t\t4294967295\nE\n", &used, fr, 16, buf), 1);
	assert_string_equal(fr[0].func, "");
	assert_int_equal(fr[0].line, UINT32_MAX);
	/* Fewer slots than frames: the first max filled. */
	assert_int_equal(parse("F\ta\tb\t1\nF\tc\td\t2\nE\n", &used, fr, 1, buf), 1);
	assert_string_equal(fr[0].func, "a");
	/* Not whole yet: nothing changed. */
	assert_int_equal(parse("F\ta\tb\t1\nF\tc\td", &used, fr, 16, buf), -EAGAIN);
	assert_memory_equal(buf, "F\ta\tb\t1\nF\tc\td", 13);
	assert_int_equal(parse("", &used, fr, 16, buf), -EAGAIN);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
	    "F\ta\tb\t4294967296\nE\n", /* past 32 bits */
	    "F\ta\tb\t\nE\n",	       /* no number */
	    "F\ta\tb\t12x\nE\n",	       /* not a number */
	    "F\ta\tb\nE\n",	       /* two fields */
	    "F a b 1\nE\n",	       /* not tabs */
	    "G\ta\tb\t1\nE\n",	       /* another kind */
	    "F\ta\x1b[2J\tb\t1\nE\n",   /* a control character */
	    "E \n",		       /* trailing bytes */
	    "R\n",		       /* a start line where an answer is due */
	};
	struct srcline_frame fr[SRCLINE_MAX_FRAMES];
	char buf[8192];
	char *big;
	size_t used;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], &used, fr, 16, buf), -EBADMSG);
	/* 17 frames. */
	buf[0] = 0;
	for (int i = 0; i < SRCLINE_MAX_FRAMES + 1; i++)
		strcat(buf, "F\ta\tb\t1\n");
	strcat(buf, "E\n");
	assert_int_equal(srcline_parse(buf, strlen(buf), &used, fr, 16), -EBADMSG);
	/* A line longer than any valid one: refused before its newline comes. */
	big = malloc(4 * SRCLINE_MAX_FIELD);
	assert_non_null(big);
	memcpy(big, "F\t", 2);
	memset(big + 2, 'a', 4 * SRCLINE_MAX_FIELD - 2);
	assert_int_equal(srcline_parse(big, 4 * SRCLINE_MAX_FIELD, &used, fr, 16), -EBADMSG);
	/* A field one byte too long. */
	memcpy(big + 2 + SRCLINE_MAX_FIELD + 1, "\tb\t1\nE\n", 7);
	assert_int_equal(srcline_parse(big, 2 + SRCLINE_MAX_FIELD + 1 + 7, &used, fr, 16),
			 -EBADMSG);
	memcpy(big + 2 + SRCLINE_MAX_FIELD, "\tb\t1\nE\n", 7);
	assert_int_equal(srcline_parse(big, 2 + SRCLINE_MAX_FIELD + 7, &used, fr, 16), 1);
	free(big);
}

static void test_start(void **state)
{
	char why[16];
	size_t used = 0;

	(void)state;
	assert_int_equal(srcline_start("R\nF", 3, &used, why, sizeof(why)), 0);
	assert_int_equal(used, 2);
	assert_int_equal(srcline_start("R", 1, &used, why, sizeof(why)), -EAGAIN);
	assert_int_equal(srcline_start("X not an object file\n", 21, &used, why, sizeof(why)),
			 -ENOEXEC);
	assert_string_equal(why, "not an object f"); /* cut at whylen */
	assert_int_equal(srcline_start("X a\x01\n", 5, &used, why, sizeof(why)), -ENOEXEC);
	assert_string_equal(why, "a?");
	assert_int_equal(srcline_start("X \x7f\x1b\n", 5, &used, why, sizeof(why)), -ENOEXEC);
	assert_string_equal(why, "??"); /* DEL and ESC: nothing for a terminal */
	assert_int_equal(srcline_start("E\n", 2, &used, why, sizeof(why)), -EBADMSG);
	assert_int_equal(srcline_start("RR\n", 3, &used, why, sizeof(why)), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_answers),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
