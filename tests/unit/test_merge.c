// SPDX-License-Identifier: GPL-2.0-only
/* test_merge.c: profiles of several processes as one (proto/merge.c): ids moved, tables
 * concatenated (the first profile's first), the flat report grouping equal functions (a JIT
 * function of two processes' perf maps is one), self at the leaf, total once per stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/merge.h"

/* One process: functions f[], stacks of ids. */
struct proc {
	Kprof__SavedProfile sp;
	Kprof__Target t;
	Kprof__SavedFunction fv[4], *fp[4];
	Kprof__SavedStack sv[3], *spp[3];
	Kprof__SavedMapping mv[1], *mp[1];
	uint32_t ids[3][4];
};

static void proc_init(struct proc *p, uint32_t pid, const char *jit_module)
{
	static const char *names[4] = {"main", "work", "hot", "leaf"};

	memset(p, 0, sizeof(*p));
	kprof__saved_profile__init(&p->sp);
	kprof__target__init(&p->t);
	p->t.pid = pid;
	p->t.samples = 0;
	for (int i = 0; i < 4; i++) {
		kprof__saved_function__init(&p->fv[i]);
		p->fv[i].name = (char *)names[i];
		p->fv[i].module = (char *)(i == 2 ? jit_module : "app");
		p->fv[i].kind = i == 2 ? KPROF__FRAME_KIND__FRAME_KIND_JIT
				       : KPROF__FRAME_KIND__FRAME_KIND_NATIVE;
		p->fp[i] = &p->fv[i];
	}
	/* main;work;hot x5, main;hot;leaf x3 (hot twice in no stack), main;work x2 */
	static const uint32_t st[3][4] = {{0, 1, 2}, {0, 2, 3}, {0, 1}};
	static const size_t len[3] = {3, 3, 2};
	static const uint64_t cnt[3] = {5, 3, 2};

	for (int i = 0; i < 3; i++) {
		kprof__saved_stack__init(&p->sv[i]);
		memcpy(p->ids[i], st[i], sizeof(st[i]));
		p->sv[i].ids = p->ids[i];
		p->sv[i].n_ids = len[i];
		p->sv[i].count = cnt[i];
		p->sv[i].tid = pid + (uint32_t)i;
		p->spp[i] = &p->sv[i];
		p->t.samples += cnt[i];
	}
	kprof__saved_mapping__init(&p->mv[0]);
	p->mv[0].path = (char *)"/usr/bin/app";
	p->mp[0] = &p->mv[0];
	p->sp.target = &p->t;
	p->sp.functions = p->fp;
	p->sp.n_functions = 4;
	p->sp.stacks = p->spp;
	p->sp.n_stacks = 3;
	p->sp.mappings = p->mp;
	p->sp.n_mappings = 1;
}

static void test_module_key(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(merge_module_key("perf-1234.map", buf, sizeof(buf)), "perf-PID.map");
	assert_string_equal(merge_module_key("jit-99.dump", buf, sizeof(buf)), "jit-PID.dump");
	assert_string_equal(merge_module_key("perf-12a.map", buf, sizeof(buf)), "perf-12a.map");
	assert_string_equal(merge_module_key("libc.so.6", buf, sizeof(buf)), "libc.so.6");
	assert_string_equal(merge_module_key(NULL, buf, sizeof(buf)), "");
}

static void test_merge_ids(void **state)
{
	struct proc a, b;
	Kprof__SavedProfile *v[2] = {&a.sp, &b.sp};
	struct merged m = {0};

	(void)state;
	proc_init(&a, 100, "perf-100.map");
	proc_init(&b, 200, "perf-200.map");
	assert_int_equal(merge_profiles(v, 2, &m), 0);
	assert_int_equal(m.sp.n_functions, 8);
	assert_int_equal(m.sp.n_stacks, 6);
	assert_int_equal(m.sp.n_mappings, 2);
	assert_int_equal(m.sp.target->pid, 100);
	assert_int_equal(m.sp.target->samples, 20);
	/* b's stacks point at b's functions, moved by a's 4 */
	assert_int_equal(m.sp.stacks[3]->ids[0], 4);
	assert_int_equal(m.sp.stacks[3]->ids[2], 6);
	assert_string_equal(m.sp.functions[6]->module, "perf-200.map");
	assert_int_equal(m.sp.stacks[4]->tid, 201);
	/* each stack knows its process: a pid label in pprof */
	assert_int_equal(m.sp.origins[m.sp.stacks[0]->origin - 1]->pid, 100);
	assert_int_equal(m.sp.origins[m.sp.stacks[4]->origin - 1]->pid, 200);
	/* the inputs are untouched */
	assert_int_equal(b.sv[0].ids[0], 0);
	merge_free(&m);
}

/* Leaf addresses (issue 32): concatenated, each moved to its function's new index, its lines
 * kept; the resolver's counts summed, its notes kept. */
static void test_merge_leaf_addrs(void **state)
{
	struct proc a, b;
	Kprof__SavedProfile *v[2] = {&a.sp, &b.sp};
	Kprof__SavedLeafAddr la[2], *lp[2];
	Kprof__SavedLine ln, *lnp = &ln;
	Kprof__SavedLinesInfo li;
	char *note = "a note";
	struct merged m = {0};

	(void)state;
	proc_init(&a, 100, "perf-100.map");
	proc_init(&b, 200, "perf-200.map");
	kprof__saved_line__init(&ln);
	ln.file = "x.c";
	ln.line = 7;
	for (int i = 0; i < 2; i++) {
		kprof__saved_leaf_addr__init(&la[i]);
		la[i].func = 3;
		la[i].address = 0x1000 + i;
		la[i].count = 1 + i;
		lp[i] = &la[i];
	}
	la[1].n_lines = 1;
	la[1].lines = &lnp;
	a.sp.n_leaf_addrs = b.sp.n_leaf_addrs = 1;
	a.sp.leaf_addrs = &lp[0];
	b.sp.leaf_addrs = &lp[1];
	b.sp.leaf_addrs_dropped = 4;
	kprof__saved_lines_info__init(&li);
	li.asked = li.resolved = 1;
	li.n_notes = 1;
	li.notes = &note;
	b.sp.lines = &li;
	assert_int_equal(merge_profiles(v, 2, &m), 0);
	assert_int_equal(m.sp.n_leaf_addrs, 2);
	assert_int_equal(m.sp.leaf_addrs[0]->func, 3);
	assert_int_equal(m.sp.leaf_addrs[1]->func, 7);
	assert_int_equal(m.sp.leaf_addrs[1]->count, 2);
	assert_int_equal(m.sp.leaf_addrs[1]->lines[0]->line, 7);
	assert_int_equal(m.sp.leaf_addrs_dropped, 4);
	assert_non_null(m.sp.lines);
	assert_int_equal(m.sp.lines->resolved, 1);
	assert_string_equal(m.sp.lines->notes[0], "a note");
	assert_int_equal(la[1].func, 3); /* the inputs are untouched */
	merge_free(&m);
	/* Call sites: moved like the stacks. */
	Kprof__SavedCallSite cs = KPROF__SAVED_CALL_SITE__INIT, *csp = &cs;

	cs.caller = 1;
	cs.callee = 2;
	cs.address = 0x1234;
	b.sp.n_call_sites = 1;
	b.sp.call_sites = &csp;
	assert_int_equal(merge_profiles(v, 2, &m), 0);
	assert_int_equal(m.sp.n_call_sites, 1);
	assert_int_equal(m.sp.call_sites[0]->caller, 5);
	assert_int_equal(m.sp.call_sites[0]->callee, 6);
	assert_int_equal(m.sp.call_sites[0]->address, 0x1234);
	merge_free(&m);
}

/* Each stack names its process (an origin per input, made of its target and executable
 * mapping); a merged input keeps its own origins. */
static void test_merge_origins(void **state)
{
	struct proc a, b, c;
	Kprof__SavedProfile *v[2] = {&a.sp, &b.sp}, *w[2];
	struct merged m = {0}, m2 = {0};

	(void)state;
	proc_init(&a, 100, "perf-100.map");
	proc_init(&b, 200, "perf-200.map");
	proc_init(&c, 300, "perf-300.map");
	a.t.comm = (char *)"app";
	a.t.cgroup = (char *)"app.service";
	a.t.freq_hz = 99;
	a.mv[0].exe = true;
	b.t.jvm = true;
	assert_int_equal(merge_profiles(v, 2, &m), 0);
	assert_int_equal(m.sp.n_origins, 2);
	assert_int_equal(m.sp.stacks[0]->origin, 1);
	assert_int_equal(m.sp.stacks[5]->origin, 2);
	assert_int_equal(m.sp.origins[0]->pid, 100);
	assert_int_equal(m.sp.origins[0]->freq_hz, 99);
	assert_string_equal(m.sp.origins[0]->comm, "app");
	assert_string_equal(m.sp.origins[0]->unit, "app.service");
	assert_string_equal(m.sp.origins[0]->exe, "/usr/bin/app");
	assert_string_equal(m.sp.origins[0]->runtime, "native");
	assert_string_equal(m.sp.origins[1]->exe, ""); /* no mapping marked exe */
	assert_string_equal(m.sp.origins[1]->runtime, "jvm");
	w[0] = &m.sp;
	w[1] = &c.sp;
	assert_int_equal(merge_profiles(w, 2, &m2), 0);
	assert_int_equal(m2.sp.n_origins, 3);
	assert_int_equal(m2.sp.stacks[4]->origin, 2);
	assert_int_equal(m2.sp.stacks[6]->origin, 3);
	assert_int_equal(m2.sp.origins[2]->pid, 300);
	merge_free(&m2);
	merge_free(&m);

	Kprof__Target t = KPROF__TARGET__INIT;
	assert_string_equal(merge_runtime(NULL, "/usr/bin/node"), "node");
	assert_string_equal(merge_runtime(NULL, "/usr/bin/python3.11"), "python");
	assert_string_equal(merge_runtime(NULL, "/usr/lib/jvm/bin/java"), "jvm");
	assert_string_equal(merge_runtime(NULL, "/usr/bin/nodered"), "native");
	assert_string_equal(merge_runtime(NULL, NULL), "native");
	t.perfmap_path = (char *)"/tmp/perf-1.map"; /* looked for, named nothing */
	assert_string_equal(merge_runtime(&t, "/opt/minijit"), "native");
	t.jit_symbols = 3;
	assert_string_equal(merge_runtime(&t, "/opt/minijit"), "jit");
}

static void test_merge_report(void **state)
{
	struct proc a, b;
	Kprof__SavedProfile *v[2] = {&a.sp, &b.sp};
	struct merged m = {0};
	Kprof__ReportReply *r = NULL;

	(void)state;
	proc_init(&a, 100, "perf-100.map");
	proc_init(&b, 200, "perf-200.map");
	b.fv[3].module = (char *)"other"; /* leaf of b: another module, another row */
	assert_int_equal(merge_profiles(v, 2, &m), 0);
	assert_int_equal(merge_report(&m.sp, 0, &r), 0);
	assert_int_equal(r->total_samples, 20);
	/* main app, work app, hot perf-PID.map (one row), leaf app, leaf other */
	assert_int_equal(r->functions, 5);
	assert_int_equal(r->n_entries, 5);
	/* hot: self 5+5, total 8+8; sorted first */
	assert_string_equal(r->entries[0]->function, "hot");
	assert_int_equal(r->entries[0]->self, 10);
	assert_int_equal(r->entries[0]->total, 16);
	/* work: self 2+2, total 7+7; main: self 0, total 20 */
	assert_string_equal(r->entries[1]->function, "work");
	assert_int_equal(r->entries[1]->self, 4);
	assert_int_equal(r->entries[1]->total, 14);
	assert_string_equal(r->entries[2]->function, "leaf");
	assert_int_equal(r->entries[2]->self, 3);
	assert_string_equal(r->entries[4]->function, "main");
	assert_int_equal(r->entries[4]->self, 0);
	assert_int_equal(r->entries[4]->total, 20);
	merge_report_free(r);
	/* top cuts the entries, not the counts */
	assert_int_equal(merge_report(&m.sp, 2, &r), 0);
	assert_int_equal(r->n_entries, 2);
	assert_int_equal(r->functions, 5);
	merge_report_free(r);
	merge_free(&m);
}

/* A module that only looks like a perf map keeps its name: not merged with another. */
static void test_merge_report_modules(void **state)
{
	struct proc a, b;
	Kprof__SavedProfile *v[2] = {&a.sp, &b.sp};
	struct merged m = {0};
	Kprof__ReportReply *r = NULL;

	(void)state;
	proc_init(&a, 100, "perf-1x.map");
	proc_init(&b, 200, "perf-2x.map");
	assert_int_equal(merge_profiles(v, 2, &m), 0);
	assert_int_equal(merge_report(&m.sp, 0, &r), 0);
	assert_int_equal(r->functions, 5);
	merge_report_free(r);
	merge_free(&m);
	/* one profile: its own report */
	assert_int_equal(merge_report(&a.sp, 0, &r), 0);
	assert_int_equal(r->total_samples, 10);
	assert_int_equal(r->functions, 4);
	merge_report_free(r);
}

/* A profile without samples (NULL arrays, as protobuf-c unpacks empty fields) merges. */
static void test_merge_empty(void **state)
{
	struct proc a;
	Kprof__SavedProfile e = KPROF__SAVED_PROFILE__INIT, *v[2] = {&a.sp, &e};
	Kprof__Target et = KPROF__TARGET__INIT;
	struct merged m = {0};
	Kprof__ReportReply *r = NULL;

	(void)state;
	proc_init(&a, 100, "perf-100.map");
	e.target = &et;
	assert_int_equal(merge_profiles(v, 2, &m), 0);
	assert_int_equal(m.sp.n_functions, 4);
	assert_int_equal(m.sp.n_stacks, 3);
	merge_free(&m);
	v[0] = &e, v[1] = &e;
	assert_int_equal(merge_profiles(v, 2, &m), 0);
	assert_int_equal(m.sp.n_functions, 0);
	assert_int_equal(merge_report(&m.sp, 0, &r), 0);
	assert_int_equal(r->total_samples, 0);
	assert_int_equal(r->n_entries, 0);
	merge_report_free(r);
	merge_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_module_key),
	    cmocka_unit_test(test_merge_ids),
	    cmocka_unit_test(test_merge_leaf_addrs),
	    cmocka_unit_test(test_merge_origins),
	    cmocka_unit_test(test_merge_report),
	    cmocka_unit_test(test_merge_report_modules),
	    cmocka_unit_test(test_merge_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
