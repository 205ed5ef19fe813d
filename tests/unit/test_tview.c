// SPDX-License-Identifier: GPL-2.0-only
/* test_tview.c: a kept profile by thread (proto/tview.c): each thread's samples, name (""
 * when the table has none) and hottest leaf function, sorted by samples then tid; the filter
 * by tid, by name and both, the view's target samples, and merge_report over a view leaving
 * out the functions of the threads cut away. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/merge.h"
#include "kprof/tview.h"

/* Functions main(0) work(1) hot(2) idle(3). Threads: 10 "main" (named), 11 "worker" (named),
 * 12 without a name. Stacks (tid: ids x count):
 *   10: main;work x2, main;work;hot x1
 *   11: main;work;hot x5, main;hot x4, main;work x3    -> 12, hottest hot (9)
 *   12: main;idle x3
 *   10: main x1 (a second run of thread 10 after 11's, unsorted input) */
struct prof {
	Kprof__SavedProfile sp;
	Kprof__Target t;
	Kprof__SavedFunction fv[4], *fp[4];
	Kprof__SavedStack sv[7], *spp[7];
	Kprof__SavedThread tv[2], *tp[2];
	uint32_t ids[7][3];
};

static void prof_init(struct prof *p)
{
	static const char *names[4] = {"main", "work", "hot", "idle"};
	static const uint32_t st[7][3] = {{0, 1}, {0, 1, 2}, {0, 1, 2}, {0, 2}, {0, 1}, {0, 3}, {0}};
	static const size_t len[7] = {2, 3, 3, 2, 2, 2, 1};
	static const uint64_t cnt[7] = {2, 1, 5, 4, 3, 3, 1};
	static const uint32_t tid[7] = {10, 10, 11, 11, 11, 12, 10};

	memset(p, 0, sizeof(*p));
	kprof__saved_profile__init(&p->sp);
	kprof__target__init(&p->t);
	p->t.pid = 10;
	for (int i = 0; i < 4; i++) {
		kprof__saved_function__init(&p->fv[i]);
		p->fv[i].name = (char *)names[i];
		p->fv[i].module = (char *)"app";
		p->fp[i] = &p->fv[i];
	}
	for (int i = 0; i < 7; i++) {
		kprof__saved_stack__init(&p->sv[i]);
		memcpy(p->ids[i], st[i], sizeof(st[i]));
		p->sv[i].ids = p->ids[i];
		p->sv[i].n_ids = len[i];
		p->sv[i].count = cnt[i];
		p->sv[i].tid = tid[i];
		p->spp[i] = &p->sv[i];
		p->t.samples += cnt[i];
	}
	for (int i = 0; i < 2; i++) {
		kprof__saved_thread__init(&p->tv[i]);
		p->tv[i].tid = 10 + (uint32_t)i;
		p->tv[i].name = (char *)(i ? "worker" : "main");
		p->tp[i] = &p->tv[i];
	}
	p->sp.target = &p->t;
	p->sp.functions = p->fp;
	p->sp.n_functions = 4;
	p->sp.stacks = p->spp;
	p->sp.n_stacks = 7;
	p->sp.threads = p->tp;
	p->sp.n_threads = 2;
}

static void test_threads(void **state)
{
	struct prof p;
	struct tview_thread *t;
	size_t n;

	(void)state;
	prof_init(&p);
	assert_int_equal(tview_threads(&p.sp, &t, &n), 0);
	assert_int_equal(n, 3);
	/* 11: 12 samples, hot 9 (5 + 4), the rest work 3 */
	assert_int_equal(t[0].tid, 11);
	assert_string_equal(t[0].name, "worker");
	assert_int_equal(t[0].samples, 12);
	assert_int_equal(t[0].top_func, 2);
	assert_int_equal(t[0].top_self, 9);
	/* 10 (4 samples: its two runs apart in the input are one thread) and 12 (3, no name) */
	assert_int_equal(t[1].tid, 10);
	assert_string_equal(t[1].name, "main");
	assert_int_equal(t[1].samples, 4);
	assert_int_equal(t[1].top_func, 1);
	assert_int_equal(t[1].top_self, 2);
	assert_int_equal(t[2].tid, 12);
	assert_string_equal(t[2].name, "");
	assert_int_equal(t[2].samples, 3);
	assert_int_equal(t[2].top_func, 3);
	free(t);
}

/* Equal samples: by tid. A stack without frames, or with an id past the functions, counts for
 * its thread but names no function. No stacks: no threads. */
static void test_threads_edges(void **state)
{
	struct prof p;
	struct tview_thread *t;
	size_t n;

	(void)state;
	prof_init(&p);
	p.sv[0].n_ids = 0;  /* 10: 2 samples of an empty stack */
	p.ids[1][2] = 99;   /* 10: 1 sample of a bad id */
	p.sv[6].count = 9;  /* 10: main x9 -> 12 samples, as 11 */
	assert_int_equal(tview_threads(&p.sp, &t, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(t[0].tid, 10);
	assert_int_equal(t[0].samples, 12);
	assert_int_equal(t[0].top_func, 0);
	assert_int_equal(t[0].top_self, 9);
	assert_int_equal(t[1].tid, 11);
	free(t);

	p.sp.n_stacks = 0;
	assert_int_equal(tview_threads(&p.sp, &t, &n), 0);
	assert_int_equal(n, 0);
	assert_null(t);
}

static void test_filter(void **state)
{
	struct tview_filter f = {0};
	struct prof p;
	struct tview v;
	Kprof__ReportReply *r;

	(void)state;
	prof_init(&p);
	/* No filter: everything. */
	assert_int_equal(tview_filter(&p.sp, &f, &v), 0);
	assert_int_equal(v.sp.n_stacks, 7);
	assert_int_equal(v.target.samples, 19);
	tview_free(&v);
	/* By tid: thread 10's three stacks, in their order. */
	f.tid = 10;
	assert_int_equal(tview_filter(&p.sp, &f, &v), 0);
	assert_int_equal(v.sp.n_stacks, 3);
	assert_ptr_equal(v.sp.stacks[0], &p.sv[0]);
	assert_ptr_equal(v.sp.stacks[2], &p.sv[6]);
	assert_int_equal(v.target.samples, 4);
	assert_int_equal(v.sp.target->pid, 10);
	assert_int_equal(p.t.samples, 19); /* the original untouched */
	/* Its flat profile: main, work, hot; idle (thread 12's only) left out. */
	assert_int_equal(merge_report(&v.sp, 0, &r), 0);
	assert_int_equal(r->total_samples, 4);
	assert_int_equal(r->functions, 3);
	assert_int_equal(r->n_entries, 3);
	assert_string_equal(r->entries[0]->function, "work");
	for (size_t i = 0; i < r->n_entries; i++)
		assert_string_not_equal(r->entries[i]->function, "idle");
	merge_report_free(r);
	tview_free(&v);
	/* By name: "worker" is 11; a name no thread has, or a thread without one: nothing. */
	f.tid = 0;
	f.comm = "worker";
	assert_int_equal(tview_filter(&p.sp, &f, &v), 0);
	assert_int_equal(v.target.samples, 12);
	tview_free(&v);
	f.comm = "";
	assert_int_equal(tview_filter(&p.sp, &f, &v), 0);
	assert_int_equal(v.sp.n_stacks, 0);
	assert_int_equal(merge_report(&v.sp, 0, &r), 0);
	assert_int_equal(r->n_entries, 0);
	merge_report_free(r);
	tview_free(&v);
	f.comm = "work";
	assert_int_equal(tview_filter(&p.sp, &f, &v), 0);
	assert_int_equal(v.target.samples, 0);
	tview_free(&v);
	/* Both: must both hold. */
	f.comm = "main";
	f.tid = 11;
	assert_int_equal(tview_filter(&p.sp, &f, &v), 0);
	assert_int_equal(v.sp.n_stacks, 0);
	tview_free(&v);
	f.tid = 10;
	assert_int_equal(tview_filter(&p.sp, &f, &v), 0);
	assert_int_equal(v.target.samples, 4);
	tview_free(&v);
}

static void test_name(void **state)
{
	struct prof p;

	(void)state;
	prof_init(&p);
	assert_string_equal(tview_name(&p.sp, 11), "worker");
	assert_string_equal(tview_name(&p.sp, 12), "");
	p.tv[1].name = NULL;
	assert_string_equal(tview_name(&p.sp, 11), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_threads_edges),
	    cmocka_unit_test(test_filter),
	    cmocka_unit_test(test_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
