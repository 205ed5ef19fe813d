// SPDX-License-Identifier: GPL-2.0-only
/* test_saved.c: the kept-profile decoder (proto/saved.c): what it refuses, and the profile it
 * rebuilds, on messages built here as kprofd writes them and with each kind of damage. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/types.h>

#include "kprof/abi.h"
#include "kprof/hcct.h"
#include "kprof/saved.h"

struct fixture {
	Kprof__SavedProfile sp;
	Kprof__Target target;
	Kprof__SavedFunction f[3], *fp[3];
	Kprof__SavedStack s[2], *sv[2];
	Kprof__SavedHcctNode h[2], *hp[2];
	uint32_t ids0[2], ids1[3];
};

/* main -> hot (5 samples), main -> warm -> hot (3); an HCCT of main -> hot. */
static void make(struct fixture *x)
{
	static char *names[] = {"main", "hot", "warm"};

	memset(x, 0, sizeof(*x));
	kprof__saved_profile__init(&x->sp);
	kprof__target__init(&x->target);
	x->target.pid = 4242;
	x->sp.format = SAVED_FORMAT;
	x->sp.target = &x->target;
	for (int i = 0; i < 3; i++) {
		kprof__saved_function__init(&x->f[i]);
		x->f[i].name = names[i];
		x->f[i].module = "mod";
		x->f[i].kind =
		    i ? KPROF__FRAME_KIND__FRAME_KIND_JIT : KPROF__FRAME_KIND__FRAME_KIND_NATIVE;
		x->fp[i] = &x->f[i];
	}
	x->sp.n_functions = 3;
	x->sp.functions = x->fp;
	x->ids0[0] = 0, x->ids0[1] = 1;
	x->ids1[0] = 0, x->ids1[1] = 2, x->ids1[2] = 1;
	for (int i = 0; i < 2; i++) {
		kprof__saved_stack__init(&x->s[i]);
		x->sv[i] = &x->s[i];
	}
	x->s[0].ids = x->ids0, x->s[0].n_ids = 2, x->s[0].count = 5, x->s[0].tid = 1;
	x->s[1].ids = x->ids1, x->s[1].n_ids = 3, x->s[1].count = 3, x->s[1].tid = 2;
	x->sp.n_stacks = 2;
	x->sp.stacks = x->sv;
	for (int i = 0; i < 2; i++) {
		kprof__saved_hcct_node__init(&x->h[i]);
		x->hp[i] = &x->h[i];
	}
	x->h[0].func = 0, x->h[0].parent = -1, x->h[0].count = 8;
	x->h[1].func = 1, x->h[1].parent = 0, x->h[1].count = 5, x->h[1].monitored = true;
	x->sp.n_hcct = 2;
	x->sp.hcct = x->hp;
}

static void test_valid(void **state)
{
	struct fixture x;
	struct profile *p;
	struct profile_stats st;
	uint32_t *map = NULL;

	(void)state;
	make(&x);
	assert_int_equal(saved_check(&x.sp), 0);
	assert_int_equal(saved_profile(&x.sp, NULL, &p, &map), 0);
	profile_get_stats(p, &st);
	assert_int_equal(st.samples, 8);
	assert_int_equal(st.stacks, 2);
	assert_int_equal(profile_nfuncs(p), 3);
	assert_string_equal(profile_func_get(p, map[1])->name, "hot");
	assert_int_equal(profile_func_get(p, map[1])->self, 8);
	assert_int_equal(profile_func_get(p, map[0])->total, 8);
	profile_free(p);
	free(map);
}

/* kprofd never writes a function twice; a file that does still gives one consistent profile. */
static void test_duplicate_function(void **state)
{
	struct fixture x;
	struct profile *p;
	uint32_t *map = NULL;

	(void)state;
	make(&x);
	x.f[2].name = "hot"; /* warm is now a second "hot" */
	x.f[2].kind = x.f[1].kind;
	assert_int_equal(saved_check(&x.sp), 0);
	assert_int_equal(saved_profile(&x.sp, NULL, &p, &map), 0);
	assert_int_equal(profile_nfuncs(p), 2);
	assert_int_equal(map[1], map[2]);
	assert_int_equal(profile_func_get(p, map[1])->self, 8);
	profile_free(p);
	free(map);
}

/* The saved HCCT as a snapshot: ids mapped (or kept), depth and children rebuilt, counts of
 * monitored nodes only (as hcct_snapshot gives them), phi 0/1; a parent after its child is
 * refused even without saved_check. */
static void test_hcct_tree(void **state)
{
	struct fixture x;
	struct hcct_tree *tr = NULL, *hot = NULL;
	uint32_t map[3] = {7, 9, 8};

	(void)state;
	make(&x);
	assert_int_equal(saved_hcct_tree(x.sp.hcct, x.sp.n_hcct, 8, map, &tr), 0);
	assert_int_equal(tr->len, 2);
	assert_int_equal(tr->n, 8);
	assert_int_equal(tr->phi_den, 1);
	assert_int_equal(tr->entries[0].id, 7);
	assert_int_equal(tr->entries[0].parent, HCCT_NONE);
	assert_int_equal(tr->entries[0].depth, 1);
	assert_int_equal(tr->entries[0].children, 1);
	assert_int_equal(tr->entries[0].count, 0); /* not monitored: no count */
	assert_int_equal(tr->entries[1].id, 9);
	assert_int_equal(tr->entries[1].parent, 0);
	assert_int_equal(tr->entries[1].depth, 2);
	assert_int_equal(tr->entries[1].count, 5);
	assert_true(tr->entries[1].flags & HCCT_ENTRY_MONITORED);
	/* A snapshot hcct_tree_filter accepts: phi 1/2 of 8 keeps hot (5) and its parent. */
	assert_int_equal(hcct_tree_filter(tr, 1, 2, &hot), 0);
	assert_int_equal(hot->len, 2);
	hcct_tree_free(hot);
	hcct_tree_free(tr);
	assert_int_equal(saved_hcct_tree(x.sp.hcct, x.sp.n_hcct, 8, NULL, &tr), 0);
	assert_int_equal(tr->entries[1].id, 1);
	hcct_tree_free(tr);
	x.h[0].parent = 1; /* after itself */
	tr = NULL;
	assert_int_equal(saved_hcct_tree(x.sp.hcct, x.sp.n_hcct, 8, NULL, &tr), -EBADMSG);
	assert_null(tr);
}

/* The encoders give back what the decoder read: functions (all, or some by id) and stacks. */
static void test_encode(void **state)
{
	struct fixture x;
	struct profile *p;
	uint32_t *map = NULL, some[2];
	Kprof__SavedFunction fv[3], *fp[3];
	Kprof__SavedStack s;

	(void)state;
	make(&x);
	x.f[2].file = "warm.js";
	x.f[2].line = 12;
	assert_int_equal(saved_profile(&x.sp, NULL, &p, &map), 0);
	saved_functions(p, NULL, profile_nfuncs(p), fv, fp);
	for (size_t i = 0; i < 3; i++) {
		assert_ptr_equal(fp[map[i]], &fv[map[i]]);
		assert_string_equal(fv[map[i]].name, x.f[i].name);
		assert_int_equal(fv[map[i]].kind, x.f[i].kind);
	}
	assert_string_equal(fv[map[2]].file, "warm.js");
	assert_int_equal(fv[map[2]].line, 12);
	assert_string_equal(fv[map[0]].file, "");
	some[0] = map[2], some[1] = map[0];
	saved_functions(p, some, 2, fv, fp);
	assert_string_equal(fv[0].name, "warm");
	assert_string_equal(fv[1].name, "main");
	saved_stack(&s, 3, x.ids1, 3, 11);
	assert_ptr_equal(s.ids, x.ids1);
	assert_int_equal(s.n_ids, 3);
	assert_int_equal(s.count, 11);
	assert_int_equal(s.tid, 3);
	profile_free(p);
	free(map);
}

static void test_refused(void **state)
{
	struct fixture x;
	uint32_t long_ids[300] = {0};
	struct profile *p = NULL;

	(void)state;
	make(&x);
	x.sp.format = 2;
	assert_int_equal(saved_check(&x.sp), -EPROTONOSUPPORT);
	make(&x);
	x.sp.target = NULL;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.target.pid = 0;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.target.pid = 1u << 31;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.f[1].kind = 99;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.ids1[2] = 3; /* no function 3 */
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	/* saved_profile refuses it too, unchecked */
	assert_int_equal(saved_profile(&x.sp, NULL, &p, NULL), -EBADMSG);
	make(&x);
	x.s[0].ids = long_ids;
	x.s[0].n_ids = KP_MAX_FRAMES + 1; /* user and kernel stacks and kprof's own frames */
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	assert_int_equal(saved_profile(&x.sp, NULL, &p, NULL), -EBADMSG);
	x.s[0].n_ids = KP_MAX_FRAMES;
	assert_int_equal(saved_check(&x.sp), 0);
	/* An off-CPU profile: checked as a profile, one level deep, with a target */
	{
		struct fixture o;

		make(&x);
		make(&o);
		x.sp.off_cpu = &o.sp;
		assert_int_equal(saved_check(&x.sp), 0);
		o.ids1[2] = 3;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		make(&o);
		o.sp.target = NULL;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		make(&o);
		o.sp.off_cpu = &o.sp; /* nested, or a loop */
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
	}
	make(&x);
	x.h[1].parent = 1; /* its own parent */
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.h[0].parent = -2;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	make(&x);
	x.h[1].func = 3;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	/* Leaf addresses (issue 32): of functions that exist, at most SAVED_MAX_LEAF_ADDRS. */
	{
		Kprof__SavedLeafAddr la = KPROF__SAVED_LEAF_ADDR__INIT, *lap = &la;

		make(&x);
		la.func = 2;
		la.address = 0x1234;
		la.count = 5;
		x.sp.n_leaf_addrs = 1;
		x.sp.leaf_addrs = &lap;
		assert_int_equal(saved_check(&x.sp), 0);
		la.func = 3;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		la.func = 0;
		x.sp.n_leaf_addrs = SAVED_MAX_LEAF_ADDRS + 1; /* refused before reading them */
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
	}
	/* Source lines and call sites (issue 32): names within bounds, functions that exist. */
	{
		Kprof__SavedLeafAddr la = KPROF__SAVED_LEAF_ADDR__INIT, *lap = &la;
		Kprof__SavedCallSite cs = KPROF__SAVED_CALL_SITE__INIT, *csp = &cs;
		Kprof__SavedLine ln = KPROF__SAVED_LINE__INIT, *lnp = &ln;
		Kprof__SavedLinesInfo li = KPROF__SAVED_LINES_INFO__INIT;
		static char long_name[SAVED_MAX_LINE_NAME + 2];
		char *notes[SAVED_MAX_LINES_NOTES + 1] = {0};

		memset(long_name, 'x', SAVED_MAX_LINE_NAME + 1);
		make(&x);
		ln.function = "mix";
		ln.file = "a.c";
		la.n_lines = cs.n_lines = 1;
		la.lines = cs.lines = &lnp;
		cs.caller = 0;
		cs.callee = 2;
		cs.address = 0x1000;
		x.sp.n_leaf_addrs = x.sp.n_call_sites = 1;
		x.sp.leaf_addrs = &lap;
		x.sp.call_sites = &csp;
		x.sp.lines = &li;
		assert_int_equal(saved_check(&x.sp), 0);
		ln.file = long_name;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		ln.file = "a.c";
		la.n_lines = SAVED_MAX_LINES_PER_ADDR + 1;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		la.n_lines = 1;
		cs.callee = 3;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		cs.callee = 2;
		x.sp.n_call_sites = SAVED_MAX_CALL_SITES + 1;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		x.sp.n_call_sites = 1;
		for (int i = 0; i <= SAVED_MAX_LINES_NOTES; i++)
			notes[i] = "a note";
		li.notes = notes;
		li.n_notes = SAVED_MAX_LINES_NOTES + 1;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		li.n_notes = 1;
		assert_int_equal(saved_check(&x.sp), 0);
	}
	/* Exact mode: the exact tree has the same rules, the counts at most one per function. */
	{
		uint64_t counts[4] = {1, 2, 3, 4};

		make(&x);
		x.sp.n_exact_hcct = 2;
		x.sp.exact_hcct = x.hp;
		x.sp.n_call_counts = 3;
		x.sp.call_counts = counts;
		assert_int_equal(saved_check(&x.sp), 0);
		x.sp.n_call_counts = 4;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		x.sp.n_call_counts = 3;
		x.h[1].parent = 1;
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
		make(&x);
		x.sp.n_exact_hcct = 1;
		x.sp.exact_hcct = &x.hp[1]; /* its parent 0 is not before it */
		assert_int_equal(saved_check(&x.sp), -EBADMSG);
	}
}

/* The fields added later (mappings, thread names, source lines) survive packing, and a profile
 * without them (one an older kprofd wrote) still loads. */
static void test_tables_roundtrip(void **state)
{
	struct fixture x;
	Kprof__SavedMapping m, *mp = &m;
	Kprof__SavedThread th, *tp = &th;
	Kprof__SavedProfile *back;
	struct profile *p;
	uint32_t *map = NULL;
	uint8_t buf[4096];
	size_t len;

	(void)state;
	make(&x);
	len = kprof__saved_profile__pack(&x.sp, buf); /* as an older kprofd wrote it */
	back = kprof__saved_profile__unpack(NULL, len, buf);
	assert_non_null(back);
	assert_int_equal(back->n_mappings, 0);
	assert_int_equal(back->n_threads, 0);
	assert_string_equal(back->functions[1]->file, "");
	assert_int_equal(saved_check(back), 0);
	kprof__saved_profile__free_unpacked(back, NULL);

	kprof__saved_mapping__init(&m);
	m.start = 0x400000, m.limit = 0x401000, m.offset = 0x1000, m.path = "/bin/app";
	m.build_id = "0123abcd", m.vaddr = 0x1000, m.has_vaddr = true, m.exe = true;
	kprof__saved_thread__init(&th);
	th.tid = 2, th.name = "worker";
	x.sp.n_mappings = 1, x.sp.mappings = &mp;
	x.sp.n_threads = 1, x.sp.threads = &tp;
	x.f[1].file = "/app/x.js", x.f[1].line = 12;
	assert_true(kprof__saved_profile__get_packed_size(&x.sp) <= sizeof(buf));
	len = kprof__saved_profile__pack(&x.sp, buf);
	back = kprof__saved_profile__unpack(NULL, len, buf);
	assert_non_null(back);
	assert_int_equal(saved_check(back), 0);
	assert_int_equal(back->n_mappings, 1);
	assert_int_equal(back->mappings[0]->limit, 0x401000);
	assert_string_equal(back->mappings[0]->path, "/bin/app");
	assert_string_equal(back->mappings[0]->build_id, "0123abcd");
	assert_true(back->mappings[0]->exe && back->mappings[0]->has_vaddr);
	assert_string_equal(back->threads[0]->name, "worker");
	assert_int_equal(saved_profile(back, NULL, &p, &map), 0);
	assert_string_equal(profile_func_get(p, map[1])->file, "/app/x.js");
	assert_int_equal(profile_func_get(p, map[1])->line, 12);
	assert_null(profile_func_get(p, map[0])->file);
	profile_free(p);
	free(map);
	kprof__saved_profile__free_unpacked(back, NULL);

	/* Refused: a mapping that ends before it starts, a thread name longer than a comm. */
	m.limit = 0x3fffff;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	m.limit = 0x401000;
	th.name = "a-name-of-16-chr";
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	th.name = "worker";
	x.sp.n_threads = SAVED_MAX_THREADS + 1;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
}

/* The drift result (SavedProfile.drift, added later): packed and back, checked; a profile
 * without one loads; each cap and each bad value is refused. */
static void test_drift(void **state)
{
	struct fixture x;
	Kprof__DriftReply d;
	Kprof__DriftFunction f, *fp[SAVED_MAX_DRIFT_FUNCS + 1];
	Kprof__DriftKey k, *kp[SAVED_MAX_DRIFT_KEYS + 1];
	Kprof__DriftEvent e, *ep[SAVED_MAX_DRIFT_EVENTS + 1];
	Kprof__SavedProfile *back;
	char long_name[SAVED_MAX_DRIFT_NAME + 2];
	uint8_t buf[4096];
	size_t len;

	(void)state;
	make(&x);
	kprof__drift_reply__init(&d);
	kprof__drift_function__init(&f);
	kprof__drift_key__init(&k);
	kprof__drift_event__init(&e);
	for (size_t i = 0; i <= SAVED_MAX_DRIFT_FUNCS; i++)
		fp[i] = &f;
	for (size_t i = 0; i <= SAVED_MAX_DRIFT_KEYS; i++)
		kp[i] = &k;
	for (size_t i = 0; i <= SAVED_MAX_DRIFT_EVENTS; i++)
		ep[i] = &e;
	k.key = "block +0x40", k.reference = 0.8, k.window = 0.1;
	f.function = "mj_phase", f.module = "mod", f.state = "watching", f.overlap = 0.9;
	f.min_overlap = -1, f.top_keys = kp, f.n_top_keys = 2;
	e.seq = 1, e.function = "mj_phase", e.time_ns = 5, e.overlap = 0.3;
	e.gained = "block +0x40", e.lost = "block +0x80", e.gained_window = 0.7;
	d.window = 256, d.threshold = 0.5, d.functions = fp, d.n_functions = 1;
	d.events = ep, d.n_events = 1, d.events_total = 3, d.functions_left_out = 2;
	x.sp.drift = &d;
	assert_int_equal(saved_check(&x.sp), 0);
	assert_true(kprof__saved_profile__get_packed_size(&x.sp) <= sizeof(buf));
	len = kprof__saved_profile__pack(&x.sp, buf);
	back = kprof__saved_profile__unpack(NULL, len, buf);
	assert_non_null(back);
	assert_int_equal(saved_check(back), 0);
	assert_non_null(back->drift);
	assert_int_equal(back->drift->n_functions, 1);
	assert_string_equal(back->drift->functions[0]->top_keys[1]->key, "block +0x40");
	assert_string_equal(back->drift->events[0]->lost, "block +0x80");
	assert_int_equal(back->drift->events_total, 3);
	assert_int_equal(back->drift->functions_left_out, 2);
	kprof__saved_profile__free_unpacked(back, NULL);
	x.sp.drift = NULL; /* an older kprofd's, or drift off */
	len = kprof__saved_profile__pack(&x.sp, buf);
	back = kprof__saved_profile__unpack(NULL, len, buf);
	assert_non_null(back);
	assert_null(back->drift);
	assert_int_equal(saved_check(back), 0);
	kprof__saved_profile__free_unpacked(back, NULL);

	x.sp.drift = &d;
	d.n_functions = SAVED_MAX_DRIFT_FUNCS;
	d.n_events = SAVED_MAX_DRIFT_EVENTS;
	f.n_top_keys = SAVED_MAX_DRIFT_KEYS;
	assert_int_equal(saved_check(&x.sp), 0);
	d.n_functions++;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	d.n_functions--, d.n_events++;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	d.n_events--, f.n_top_keys++;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	f.n_top_keys--;
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	k.key = long_name;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	k.key = "other", e.gained = long_name;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	e.gained = "other", f.overlap = NAN;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	f.overlap = 0.5, e.lost_window = 1.5;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	e.lost_window = 0, d.threshold = -2;
	assert_int_equal(saved_check(&x.sp), -EBADMSG);
	d.threshold = 0.5;
	assert_int_equal(saved_check(&x.sp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),
	    cmocka_unit_test(test_tables_roundtrip),
	    cmocka_unit_test(test_duplicate_function),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_hcct_tree),
	    cmocka_unit_test(test_encode),
	    cmocka_unit_test(test_drift),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
