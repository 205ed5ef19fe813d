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

/* An off-CPU profile of two threads: 101 sleeping 3 ms in do_nanosleep and runnable 1 ms;
 * 102 sleeping 5 ms on a futex. */
struct off_fixture {
	Kprof__SavedFunction f[6], *fp[6];
	Kprof__SavedStack s[3], *sp[3];
	Kprof__SavedProfile p;
	Kprof__Target t;
};

static uint32_t st_sleep[] = {0, 2, 3}, st_run[] = {1, 2, 5}, st_futex[] = {0, 4};

static void off_fill(struct off_fixture *x)
{
	static const char *const names[] = {"[sleeping]", "[runnable]",  "worker",
					    "do_nanosleep", "futex_do_wait", "irqentry_exit"};
	static const struct {
		uint32_t *ids;
		size_t n;
		uint64_t ns;
		uint32_t tid;
	} st[] = {{st_sleep, 3, 3000000, 101}, {st_run, 3, 1000000, 101}, {st_futex, 2, 5000000, 102}};

	memset(x, 0, sizeof(*x));
	for (int i = 0; i < 6; i++) {
		kprof__saved_function__init(&x->f[i]);
		x->f[i].name = (char *)names[i];
		x->f[i].module = (char *)(i < 2 ? "[kprof]" : "m");
		x->fp[i] = &x->f[i];
	}
	for (int i = 0; i < 3; i++) {
		kprof__saved_stack__init(&x->s[i]);
		x->s[i].ids = st[i].ids;
		x->s[i].n_ids = st[i].n;
		x->s[i].count = st[i].ns;
		x->s[i].tid = st[i].tid;
		x->sp[i] = &x->s[i];
	}
	kprof__saved_profile__init(&x->p);
	kprof__target__init(&x->t);
	x->t.pid = 101;
	x->t.comm = "mix";
	x->t.off_cpu = true;
	x->t.off_cpu_ns = 99; /* the process's: a view replaces it */
	x->t.off_cpu_intervals = 7;
	x->p.target = &x->t;
	x->p.functions = x->fp;
	x->p.n_functions = 6;
	x->p.stacks = x->sp;
	x->p.n_stacks = 3;
}

static void test_states(void **state)
{
	struct off_fixture x;
	uint64_t ns[RENDER_OFFCPU_NSTATES];

	(void)state;
	off_fill(&x);
	assert_int_equal(render_offcpu_state(&x.p, &x.s[0]), 1); /* sleeping */
	assert_int_equal(render_offcpu_state(&x.p, &x.s[1]), 0); /* runnable */
	x.f[0].name = "[sleeping"; /* not a state frame */
	assert_int_equal(render_offcpu_state(&x.p, &x.s[0]), -1);
	x.f[0].name = "[sleeping]";
	render_offcpu_view_target(&x.p, &x.t, ns);
	assert_int_equal(x.t.off_cpu_ns, 9000000);
	assert_int_equal(x.t.off_cpu_intervals, 0);
	assert_int_equal(ns[1], 8000000);
	assert_int_equal(ns[0], 1000000);
	assert_int_equal(x.t.n_off_cpu_state_ns, RENDER_OFFCPU_NSTATES);
}

struct threads_args {
	struct render_offcpu_threads r;
	bool json;
};

static void threads_fn(FILE *f, void *arg)
{
	struct threads_args *a = arg;

	render_offcpu_threads(f, &a->r, 0, a->json);
}

static void test_threads(void **state)
{
	struct off_fixture x;
	/* as tview_threads gives them: by time, the leaf with most self time */
	struct tview_thread ot[] = {{102, "kpoc-holder", 5000000, 4, 5000000},
				    {101, "kpoc-worker", 4000000, 3, 3000000}};
	struct tview_thread ct[] = {{101, "kpoc-worker", 3, 2, 3}, {103, "burner", 10, 2, 10}};
	struct threads_args a = {{.off = NULL, .ot = ot, .not = 2}, false};
	char *s;

	(void)state;
	off_fill(&x);
	a.r.off = &x.p;
	s = capture(threads_fn, &a);
	assert_non_null(strstr(s, "off-CPU 9.0 ms, 2 threads"));
	assert_non_null(strstr(s, "kpoc-holder      sleeping 100%    100.0% futex_do_wait"));
	assert_non_null(strstr(s, "kpoc-worker      sleeping 75%      75.0% do_nanosleep"));
	assert_true(strstr(s, "kpoc-holder") < strstr(s, "kpoc-worker")); /* by time */
	free(s);
	/* --wall: CPU samples of 1 ms each; a thread that never waited has a row too */
	a.r.ct = ct;
	a.r.nct = 2;
	a.r.period_ns = 1000000;
	a.r.wall = true;
	a.json = true;
	s = capture(threads_fn, &a);
	assert_non_null(strstr(s, "\"wall\":true,\"total_ns\":22000000"));
	assert_non_null(strstr(s, "{\"tid\":103,\"comm\":\"burner\",\"off_cpu_ns\":0,\"cpu_ns\":10000000,"
				  "\"wall_ns\":10000000,\"pct\":45.45,\"state\":null,\"state_ns\":0,"
				  "\"top_wait\":null,\"top_wait_ns\":0}"));
	assert_non_null(strstr(s, "{\"tid\":101,\"comm\":\"kpoc-worker\",\"off_cpu_ns\":4000000,"
				  "\"cpu_ns\":3000000,\"wall_ns\":7000000,\"pct\":31.82,\"state\":\"sleeping\","
				  "\"state_ns\":3000000,\"top_wait\":\"do_nanosleep\",\"top_wait_ns\":3000000}"));
	assert_true(strstr(s, "\"tid\":103") < strstr(s, "\"tid\":101"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_time_units),
	    cmocka_unit_test(test_wall_folded),
	    cmocka_unit_test(test_report_wall),
	    cmocka_unit_test(test_states),
	    cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
