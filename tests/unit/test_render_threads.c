// SPDX-License-Identifier: GPL-2.0-only
/* test_render_threads.c: `report --threads` text and JSON (cli/render_threads.c) on a canned
 * profile: the rows byte for byte off a terminal (names whole), a hostile thread name
 * sanitized in text and escaped in JSON, a thread without a name ("?" / ""), one without a
 * function ("-" / null), --top cutting the text only, and no target line for a merged
 * profile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../cli/render.h"
#include "../../cli/render_threads.h"

static char *run(const Kprof__Target *target, const struct tview_thread *t, size_t n,
		 unsigned top, bool json)
{
	static Kprof__SavedFunction fv[2];
	static Kprof__SavedFunction *fp[2] = {&fv[0], &fv[1]};
	Kprof__SavedProfile sp;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	kprof__saved_profile__init(&sp);
	kprof__saved_function__init(&fv[0]);
	fv[0].name = "hot_spin";
	fv[0].module = "threadmill";
	kprof__saved_function__init(&fv[1]);
	fv[1].name = "warm\tspin";
	fv[1].module = "lib\"x";
	sp.functions = fp;
	sp.n_functions = 2;
	render_threads(f, target, &sp, t, n, top, 100, json);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static const struct tview_thread rows[] = {
    {.tid = 11, .name = "tm-hot", .samples = 70, .top_func = 0, .top_self = 63},
    {.tid = 12, .name = "bad\033[2Jname\n", .samples = 20, .top_func = 1, .top_self = 5},
    {.tid = 13, .name = "", .samples = 10, .top_func = TVIEW_NO_FUNC, .top_self = 0},
};

static void test_text(void **state)
{
	char *s;

	(void)state;
	render_set_columns(0);
	s = run(NULL, rows, 3, 0, false);
	assert_string_equal(
	    s, "100 samples, 3 threads\n\n"
	       "     TID    SAMPLES   SHARE  THREAD             TOP% HOTTEST FUNCTION (self samples "
	       "of the thread)\n"
	       "      11         70  70.00%  tm-hot            90.0% hot_spin\n"
	       "      12         20  20.00%  bad?[2Jname?      25.0% warm?spin\n"
	       "      13         10  10.00%  ?                       -\n");
	free(s);
	/* --top 1: one row, said. */
	s = run(NULL, rows, 3, 1, false);
	assert_non_null(strstr(s, "100 samples, 3 threads (top shown)\n"));
	assert_null(strstr(s, "tm-warm"));
	assert_null(strstr(s, "      12 "));
	free(s);
}

static void test_target_line(void **state)
{
	Kprof__Target t;
	char *s;

	(void)state;
	kprof__target__init(&t);
	t.pid = 10;
	t.comm = "threadmill";
	t.samples = 100;
	s = run(&t, rows, 1, 0, false);
	assert_true(!strncmp(s, "pid 10 (threadmill)", 19));
	free(s);
	s = run(NULL, rows, 1, 0, true);
	assert_true(!strncmp(s, "{\"target\":null,", 15));
	free(s);
}

static void test_json(void **state)
{
	char *s;

	(void)state;
	s = run(NULL, rows, 3, 1, true); /* --top: JSON has every row */
	assert_non_null(strstr(s, "\"total_samples\":100,\"threads\":[{\"tid\":11,\"comm\":\"tm-hot\","
				  "\"samples\":70,\"pct\":70.00,\"top_function\":\"hot_spin\","
				  "\"top_module\":\"threadmill\",\"top_self\":63}"));
	assert_non_null(strstr(s, "\"comm\":\"bad\\u001b[2Jname\\n\""));
	assert_non_null(strstr(s, "\"top_function\":\"warm\\tspin\",\"top_module\":\"lib\\\"x\""));
	assert_non_null(strstr(s, "{\"tid\":13,\"comm\":\"\",\"samples\":10,\"pct\":10.00,"
				  "\"top_function\":null,\"top_module\":null,\"top_self\":0}]}\n"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_text),
	    cmocka_unit_test(test_target_line),
	    cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
