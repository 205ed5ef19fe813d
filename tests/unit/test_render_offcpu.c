// SPDX-License-Identifier: GPL-2.0-only
/* test_render_offcpu.c: unit tests for the off-CPU and wall-clock views (cli/render_offcpu.c):
 * time units, report --off-cpu and --wall on canned replies (the CPU samples weighted by the
 * period and merged with the off-CPU times by function, sorted by self), folded --wall (CPU
 * stacks under [running] in nanoseconds), and hostile names sanitized in text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../cli/render_offcpu.h"

static char *capture(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, arg);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_time_units(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(render_offcpu_time(0, b), "0 us");
	assert_string_equal(render_offcpu_time(812345, b), "812 us");
	assert_string_equal(render_offcpu_time(12500000, b), "12.5 ms");
	assert_string_equal(render_offcpu_time(3200000000ULL, b), "3.20 s");
}

struct wall_args {
	const char *cpu, *off;
	uint32_t freq;
};

static void wall_fn(FILE *f, void *arg)
{
	struct wall_args *a = arg;

	render_offcpu_wall_folded(f, a->cpu, a->freq, a->off);
}

static void test_wall_folded(void **state)
{
	struct wall_args a = {"main;burn 3\nmain;x\x1b]52 1\n", "[sleeping];main;do_nanosleep 500\n",
			      100};
	char *s;

	(void)state;
	s = capture(wall_fn, &a);
	assert_string_equal(s, "[running];main;burn 30000000\n[running];main;x?]52 10000000\n"
			       "[sleeping];main;do_nanosleep 500\n");
	free(s);
}

struct report_args {
	Kprof__ReportReply *off, *cpu;
	bool json;
};

static void report_fn(FILE *f, void *arg)
{
	struct report_args *a = arg;

	render_offcpu_report(f, a->off, a->cpu, 0, a->json);
}

static void test_report_wall(void **state)
{
	Kprof__FlatEntry o1 = KPROF__FLAT_ENTRY__INIT, o2 = KPROF__FLAT_ENTRY__INIT,
			 c1 = KPROF__FLAT_ENTRY__INIT;
	Kprof__FlatEntry *oe[] = {&o1, &o2}, *ce[] = {&c1};
	Kprof__Target ct = KPROF__TARGET__INIT;
	Kprof__ReportReply off = KPROF__REPORT_REPLY__INIT, cpu = KPROF__REPORT_REPLY__INIT;
	struct report_args a = {&off, &cpu, false};
	char *s;

	(void)state;
	o1.function = "do_nanosleep";
	o1.module = "[kernel.kallsyms]";
	o1.self = o1.total = 600000000;
	o2.function = "main";
	o2.module = "app";
	o2.self = 0;
	o2.total = 600000000;
	c1.function = "main";
	c1.module = "app";
	c1.self = c1.total = 40; /* 40 samples at 100 Hz: 400 ms */
	off.entries = oe;
	off.n_entries = 2;
	off.total_samples = 600000000;
	cpu.entries = ce;
	cpu.n_entries = 1;
	cpu.total_samples = 40;
	ct.freq_hz = 100;
	cpu.target = &ct;
	s = capture(report_fn, &a);
	/* main: 400 ms self of 1 s (CPU), 1 s total; do_nanosleep 600 ms self, so first */
	assert_non_null(strstr(s, "  400.0 ms  40.00%     1.00 s 100.00%  "));
	assert_true(strstr(s, "do_nanosleep") < strstr(s, " main "));
	assert_non_null(strstr(s, "  600.0 ms  60.00%   600.0 ms  60.00%  "));
	free(s);
	a.json = true;
	a.cpu = NULL; /* --off-cpu alone */
	s = capture(report_fn, &a);
	assert_non_null(strstr(s, "\"wall\":false,\"total_ns\":600000000,\"cpu_ns\":0"));
	assert_non_null(strstr(s, "{\"function\":\"do_nanosleep\",\"module\":\"[kernel.kallsyms]\""));
	assert_non_null(strstr(s, "\"self_ns\":600000000,\"total_ns\":600000000"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_time_units),
	    cmocka_unit_test(test_wall_folded),
	    cmocka_unit_test(test_report_wall),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
