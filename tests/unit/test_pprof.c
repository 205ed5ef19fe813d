// SPDX-License-Identifier: GPL-2.0-only
/* test_pprof.c: SavedProfile -> pprof (proto/pprof.c), decoded back with zlib and protobuf-c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "kprof/pprof.h"
#include "proto/profile.pb-c.h"

struct fixture {
	Kprof__Target t;
	Kprof__SavedFunction f[4];
	Kprof__SavedFunction *fp[4];
	Kprof__SavedStack s[3];
	Kprof__SavedStack *sp[3];
	Kprof__SavedProfile p;
};

static uint32_t st_ab[] = {0, 1}, st_ac[] = {0, 2}, st_u[] = {0, 3};

static void fill(struct fixture *x)
{
	static const struct {
		const char *name, *module;
		Kprof__FrameKind kind;
		uint64_t start;
	} fn[] = {
	    {"main", "minijit", KPROF__FRAME_KIND__FRAME_KIND_NATIVE, 0x1100},
	    {"mj_hot", "perf-42.map", KPROF__FRAME_KIND__FRAME_KIND_JIT, 0x7f0000001000},
	    {"schedule", "[kernel.kallsyms]", KPROF__FRAME_KIND__FRAME_KIND_KERNEL,
	     0xffffffff81000000},
	    {"[unknown]", "libc.so.6", KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN, 0},
	};
	static const struct {
		uint32_t *ids;
		size_t n;
		uint64_t count;
		uint32_t tid;
	} stk[] = {{st_ab, 2, 7, 42}, {st_ac, 2, 2, 43}, {st_u, 2, 1, 42}};

	memset(x, 0, sizeof(*x));
	kprof__target__init(&x->t);
	x->t.pid = 42;
	x->t.comm = "minijit";
	x->t.freq_hz = 100;
	x->t.attached_at_ns = 1000000000;
	x->t.ended_at_ns = 4000000000;
	for (int i = 0; i < 4; i++) {
		kprof__saved_function__init(&x->f[i]);
		x->f[i].name = (char *)fn[i].name;
		x->f[i].module = (char *)fn[i].module;
		x->f[i].kind = fn[i].kind;
		x->f[i].start = fn[i].start;
		x->fp[i] = &x->f[i];
	}
	for (int i = 0; i < 3; i++) {
		kprof__saved_stack__init(&x->s[i]);
		x->s[i].ids = stk[i].ids;
		x->s[i].n_ids = stk[i].n;
		x->s[i].count = stk[i].count;
		x->s[i].tid = stk[i].tid;
		x->sp[i] = &x->s[i];
	}
	kprof__saved_profile__init(&x->p);
	x->p.format = 1;
	x->p.target = &x->t;
	x->p.n_functions = 4;
	x->p.functions = x->fp;
	x->p.n_stacks = 3;
	x->p.stacks = x->sp;
}

static Perftools__Profiles__Profile *decode(const uint8_t *gz, size_t len)
{
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	z_stream zs = {0};
	Perftools__Profiles__Profile *p;

	assert_non_null(raw);
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK); /* gzip only */
	zs.next_in = (uint8_t *)gz;
	zs.avail_in = len;
	zs.next_out = raw;
	zs.avail_out = cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	p = perftools__profiles__profile__unpack(NULL, zs.total_out, raw);
	inflateEnd(&zs);
	free(raw);
	assert_non_null(p);
	return p;
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static void test_roundtrip(void **state)
{
	struct fixture x;
	uint8_t *gz;
	size_t len;
	Perftools__Profiles__Profile *p;

	(void)state;
	fill(&x);
	assert_int_equal(pprof_build(&x.p, 0, "test", &gz, &len), 0);
	p = decode(gz, len);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(str(p, p->sample_type[0]->type), "samples");
	assert_string_equal(str(p, p->sample_type[0]->unit), "count");
	assert_string_equal(str(p, p->sample_type[1]->type), "cpu");
	assert_string_equal(str(p, p->sample_type[1]->unit), "nanoseconds");
	assert_int_equal(p->period, 10000000); /* 100 Hz */
	assert_int_equal(p->time_nanos, 1000000000);
	assert_int_equal(p->duration_nanos, 3000000000);
	assert_int_equal(p->n_function, 4);
	assert_int_equal(p->n_location, 4);
	assert_int_equal(p->n_mapping, 4);
	/* Function names; the unresolved one is named after its module. */
	assert_string_equal(str(p, p->function[1]->name), "mj_hot");
	assert_string_equal(str(p, p->function[1]->filename), ""); /* no source file known */
	assert_string_equal(str(p, p->function[3]->name), "[libc.so.6]");
	assert_string_equal(str(p, p->function[3]->system_name), "[unknown]");
	/* Location i+1 is function i at its start address, in its module's mapping. */
	assert_int_equal(p->location[1]->id, 2);
	assert_int_equal(p->location[1]->address, 0x7f0000001000);
	assert_int_equal(p->location[1]->line[0]->function_id, 2);
	assert_string_equal(str(p, p->mapping[p->location[1]->mapping_id - 1]->filename),
			    "perf-42.map");
	/* Samples: leaf first, values [count, count * period], thread and kind labels. */
	assert_int_equal(p->n_sample, 3);
	assert_int_equal(p->sample[0]->n_location_id, 2);
	assert_int_equal(p->sample[0]->location_id[0], 2);
	assert_int_equal(p->sample[0]->location_id[1], 1);
	assert_int_equal(p->sample[0]->value[0], 7);
	assert_int_equal(p->sample[0]->value[1], 70000000);
	assert_string_equal(str(p, p->sample[0]->label[0]->key), "thread_id");
	assert_int_equal(p->sample[0]->label[0]->num, 42);
	assert_int_equal(p->sample[0]->n_label, 3); /* no thread names saved: no thread_name */
	assert_string_equal(str(p, p->sample[0]->label[1]->key), "kind");
	assert_string_equal(str(p, p->sample[0]->label[2]->key), "pid");
	assert_string_equal(str(p, p->sample[0]->label[2]->str), "42"); /* the target's */
	assert_string_equal(str(p, p->sample[0]->label[1]->str), "jit");
	assert_int_equal(p->sample[1]->label[0]->num, 43);
	assert_string_equal(str(p, p->sample[1]->label[1]->str), "kernel");
	assert_string_equal(str(p, p->sample[2]->label[1]->str), "unknown");
	assert_true(strstr(str(p, p->comment[0]), "pid 42 (minijit), 100 Hz") != NULL);
	/* Without a mapping table (an older kprofd's profile): one mapping per module, the one
	 * named like the process first, no ranges, addresses only where they are runtime ones. */
	assert_string_equal(str(p, p->mapping[0]->filename), "minijit");
	assert_int_equal(p->mapping[0]->memory_limit, 0);
	assert_true(p->mapping[0]->has_functions);
	assert_false(p->mapping[0]->has_filenames);
	assert_int_equal(p->location[0]->address, 0); /* an ELF address is not one */
	assert_int_equal(p->location[2]->address, 0xffffffff81000000);
	assert_false(p->mapping[p->location[3]->mapping_id - 1]->has_functions); /* [libc.so.6] */
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
}

/* The mapping table: the executable first with its range, offset, path and build id, native
 * functions at runtime addresses, V8 names' files and lines, the daemon's source lines, the
 * has_ flags per mapping, thread names. */
/* A merged profile's samples carry their process's labels, and each its own frequency's CPU
 * time. */
static void test_origin_labels(void **state)
{
	struct fixture x;
	Kprof__Origin o[2] = {KPROF__ORIGIN__INIT, KPROF__ORIGIN__INIT}, *op[2] = {&o[0], &o[1]};
	Perftools__Profiles__Profile *p;
	uint8_t *gz;
	size_t len;

	(void)state;
	fill(&x);
	o[0].pid = 42;
	o[0].comm = (char *)"minijit";
	o[0].exe = (char *)"/usr/bin/minijit";
	o[0].unit = (char *)"mj.service";
	o[0].cgroup = (char *)"/system.slice/mj.service";
	o[0].runtime = (char *)"jit";
	o[0].freq_hz = 100;
	o[1].pid = 43;
	o[1].comm = (char *)"other";
	o[1].freq_hz = 50;
	x.p.origins = op;
	x.p.n_origins = 2;
	x.s[0].origin = 1;
	x.s[1].origin = 2;
	x.s[2].origin = 3; /* out of range: no labels of a process */
	assert_int_equal(pprof_build(&x.p, 0, "t", &gz, &len), 0);
	p = decode(gz, len);
	assert_non_null(p);
	assert_int_equal(p->sample[0]->n_label, 8); /* thread_id, kind, 6 of the process */
	assert_string_equal(str(p, p->sample[0]->label[2]->key), "pid");
	assert_string_equal(str(p, p->sample[0]->label[2]->str), "42");
	assert_string_equal(str(p, p->sample[0]->label[4]->str), "/usr/bin/minijit");
	assert_string_equal(str(p, p->sample[0]->label[5]->key), "unit");
	assert_string_equal(str(p, p->sample[0]->label[6]->str), "/system.slice/mj.service");
	assert_string_equal(str(p, p->sample[0]->label[7]->str), "jit");
	assert_int_equal(p->sample[0]->value[1], 7 * 10000000LL);
	assert_int_equal(p->sample[1]->n_label, 4); /* empty labels left out */
	assert_string_equal(str(p, p->sample[1]->label[3]->str), "other");
	assert_int_equal(p->sample[1]->value[1], 2 * 20000000LL);
	assert_int_equal(p->sample[2]->n_label, 3); /* no origin: the target's pid alone */
	assert_string_equal(str(p, p->sample[2]->label[2]->key), "pid");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
}

static void test_mappings(void **state)
{
	struct fixture x;
	Kprof__SavedMapping m[2], *mp[2] = {&m[0], &m[1]};
	Kprof__SavedThread th, *tp = &th;
	Kprof__SavedFunction g[2], *all[6];
	uint32_t st_js[] = {0, 4, 5};
	Kprof__SavedStack js, *stacks[4];
	Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Mapping *pm;
	uint8_t *gz;
	size_t len;

	(void)state;
	fill(&x);
	for (int i = 0; i < 2; i++)
		kprof__saved_mapping__init(&m[i]);
	/* libc first in the table: the executable still comes first in pprof. */
	m[0].start = 0x7f0000026000, m[0].limit = 0x7f000017c000, m[0].offset = 0x26000;
	m[0].path = "/usr/lib/libc.so.6", m[0].build_id = "93ac", m[0].vaddr = 0x26000;
	m[0].has_vaddr = true;
	m[1].start = 0x555500002000, m[1].limit = 0x555500008000, m[1].offset = 0x2000;
	m[1].path = "/opt/minijit", m[1].build_id = "a76c", m[1].vaddr = 0x2000;
	m[1].has_vaddr = true, m[1].exe = true;
	x.p.n_mappings = 2, x.p.mappings = mp;
	x.f[0].module = "minijit"; /* main at ELF address 0x2650, in the text segment */
	x.f[0].start = 0x2650;
	for (int i = 0; i < 2; i++)
		kprof__saved_function__init(&g[i]);
	g[0].name = "JS:*fib /app/fib.js:12:3", g[0].module = "perf-42.map";
	g[0].kind = KPROF__FRAME_KIND__FRAME_KIND_JIT, g[0].start = 0x7f0000002000;
	/* node 20's jitdump debug info: junk for the file of a user script; the name wins */
	g[0].file = "LLI5", g[0].line = 99;
	g[1].name = "compiled_loop", g[1].module = "jit-42.dump", g[1].file = "/src/loop.lua";
	g[1].line = 7, g[1].kind = KPROF__FRAME_KIND__FRAME_KIND_JIT, g[1].start = 0x7f0000003000;
	for (int i = 0; i < 4; i++)
		all[i] = x.fp[i];
	all[4] = &g[0], all[5] = &g[1];
	x.p.functions = all, x.p.n_functions = 6;
	kprof__saved_stack__init(&js);
	js.ids = st_js, js.n_ids = 3, js.count = 4, js.tid = 43;
	for (int i = 0; i < 3; i++)
		stacks[i] = x.sp[i];
	stacks[3] = &js;
	x.p.stacks = stacks, x.p.n_stacks = 4;
	kprof__saved_thread__init(&th);
	th.tid = 43, th.name = "worker";
	x.p.n_threads = 1, x.p.threads = &tp;
	assert_int_equal(pprof_build(&x.p, 0, "test", &gz, &len), 0);
	p = decode(gz, len);
	pm = p->mapping[0];
	assert_string_equal(str(p, pm->filename), "/opt/minijit");
	assert_string_equal(str(p, pm->build_id), "a76c");
	assert_int_equal(pm->memory_start, 0x555500002000);
	assert_int_equal(pm->memory_limit, 0x555500008000);
	assert_int_equal(pm->file_offset, 0x2000);
	assert_true(pm->has_functions);
	assert_false(pm->has_filenames || pm->has_line_numbers);
	assert_string_equal(str(p, p->mapping[1]->filename), "/usr/lib/libc.so.6");
	/* main (ELF 0x2650) runs at 0x555500002650, in the executable's mapping. */
	assert_int_equal(p->location[0]->mapping_id, 1);
	assert_int_equal(p->location[0]->address, 0x555500002650);
	/* The unnamed libc frame: libc's mapping, which then has no named function. */
	assert_int_equal(p->location[3]->mapping_id, 2);
	assert_false(p->mapping[1]->has_functions);
	/* V8's name: file and line; the JIT mapping says it has them. */
	assert_string_equal(str(p, p->function[4]->filename), "/app/fib.js");
	assert_int_equal(p->function[4]->start_line, 12);
	assert_int_equal(p->location[4]->line[0]->line, 12);
	assert_int_equal(p->location[4]->address, 0x7f0000002000);
	pm = p->mapping[p->location[4]->mapping_id - 1];
	assert_string_equal(str(p, pm->filename), "perf-42.map");
	assert_true(pm->has_functions && pm->has_filenames && pm->has_line_numbers);
	/* The daemon's source line (a jitdump's debug info). */
	assert_string_equal(str(p, p->function[5]->filename), "/src/loop.lua");
	assert_int_equal(p->location[5]->line[0]->line, 7);
	/* Thread names beside thread ids. */
	assert_int_equal(p->sample[3]->n_label, 4);
	assert_string_equal(str(p, p->sample[3]->label[1]->key), "thread_name");
	assert_string_equal(str(p, p->sample[3]->label[1]->str), "worker");
	assert_int_equal(p->sample[0]->n_label, 3); /* tid 42 has no saved name */
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
}

static void test_js_source(void **state)
{
	size_t off, len;
	uint32_t line;
	const char *n;

	(void)state;
	n = "JS:*fib /path/app.js:12:3";
	assert_true(pprof_js_source(n, &off, &len, &line));
	assert_int_equal(off, 8);
	assert_int_equal(len, strlen("/path/app.js"));
	assert_int_equal(line, 12);
	n = "LazyCompile:*foo file.js:1:1";
	assert_true(pprof_js_source(n, &off, &len, &line));
	assert_int_equal(len, 7);
	assert_int_equal(line, 1);
	n = "Function:~ node:internal/main/run_main_module:23";
	assert_true(pprof_js_source(n, &off, &len, &line));
	assert_int_equal(len, strlen("node:internal/main/run_main_module"));
	assert_int_equal(line, 23);
	assert_false(pprof_js_source("Builtin:JSEntry", &off, &len, &line));
	assert_false(pprof_js_source("JS:*f x.js:0:3", &off, &len, &line)); /* no line 0 */
	assert_false(pprof_js_source("JS:*f :12:3", &off, &len, &line));    /* no file */
	assert_false(pprof_js_source("JS:*f x.js:1a:3", &off, &len, &line));
	assert_false(pprof_js_source("JS:*f x.js:99999999999:3", &off, &len, &line));
	assert_false(pprof_js_source("trailing ", &off, &len, &line));
}

static void test_bad_ids(void **state)
{
	struct fixture x;
	uint32_t bad[] = {0, 9};
	uint8_t *gz = NULL;
	size_t len;

	(void)state;
	fill(&x);
	x.s[1].ids = bad;
	assert_int_equal(pprof_build(&x.p, 0, "test", &gz, &len), -EINVAL);
	assert_null(gz);
}

static void test_empty_and_live(void **state)
{
	struct fixture x;
	uint8_t *gz;
	size_t len;
	Perftools__Profiles__Profile *p;

	(void)state;
	fill(&x);
	x.p.n_stacks = 0;
	x.p.n_functions = 0;
	x.t.ended_at_ns = 0; /* still attached: the profile ends now */
	assert_int_equal(pprof_build(&x.p, 6000000000, "test", &gz, &len), 0);
	p = decode(gz, len);
	assert_int_equal(p->n_sample, 0);
	assert_int_equal(p->duration_nanos, 5000000000);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
}

/* Function.name: kprof's short form, whole where two names share one; system_name whole. */
static void test_short_names(void **state)
{
	static const char *const names[] = {
	    "void java.util.DualPivotQuicksort.sort(java.util.DualPivotQuicksort$Sorter, double[], "
	    "int, int, int)",
	    "v8::internal::Handle<v8::internal::Object> v8::internal::StringTable::LookupKey(int)",
	    "foo(int)",
	    "foo(double)",
	};
	struct fixture x;
	uint8_t *gz;
	size_t len;
	Perftools__Profiles__Profile *p;

	(void)state;
	fill(&x);
	for (int i = 0; i < 4; i++) {
		x.f[i].name = (char *)names[i];
		x.f[i].kind = KPROF__FRAME_KIND__FRAME_KIND_NATIVE;
	}
	assert_int_equal(pprof_build(&x.p, 0, "test", &gz, &len), 0);
	p = decode(gz, len);
	assert_string_equal(str(p, p->function[0]->name), "java.util.DualPivotQuicksort.sort");
	assert_string_equal(str(p, p->function[1]->name), "v8::internal::StringTable::LookupKey");
	assert_string_equal(str(p, p->function[2]->name), "foo(int)"); /* overloads: whole */
	assert_string_equal(str(p, p->function[3]->name), "foo(double)");
	for (int i = 0; i < 4; i++)
		assert_string_equal(str(p, p->function[i]->system_name), names[i]);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
}

/* A merged profile holds a function once per process: every copy gets the same name, whole
 * for every copy of an overload (not only for the copies next to the other overload in sort
 * order), short for a name no other shares. */
static void test_short_names_repeated(void **state)
{
	static const char *const names[] = {"foo(int)", "foo(double)", "foo(int)", "foo(int)"};
	static const char *const plain[] = {"a::b(int)", "x(int)", "a::b(int)", "x(int)"};
	struct fixture x;
	uint8_t *gz;
	size_t len;
	Perftools__Profiles__Profile *p;

	(void)state;
	for (int round = 0; round < 2; round++) {
		fill(&x);
		for (int i = 0; i < 4; i++) {
			x.f[i].name = (char *)(round ? plain : names)[i];
			x.f[i].kind = KPROF__FRAME_KIND__FRAME_KIND_NATIVE;
		}
		assert_int_equal(pprof_build(&x.p, 0, "test", &gz, &len), 0);
		p = decode(gz, len);
		for (int i = 0; i < 4; i++) {
			const char *want = round ? (i % 2 ? "x" : "a::b") : names[i];

			assert_string_equal(str(p, p->function[i]->name), want);
			assert_string_equal(str(p, p->function[i]->system_name),
					    (round ? plain : names)[i]);
		}
		perftools__profiles__profile__free_unpacked(p, NULL);
		free(gz);
	}
}

/* fill's profile with two leaf addresses of mj_hot (made native, in /x/lib.so), the leaf of
 * 7 + 2 samples (the first two stacks). */
struct leaf_fixture {
	struct fixture x;
	Kprof__SavedLeafAddr la[2], *lap[2];
	Kprof__SavedMapping mp, *mpp;
	Kprof__SavedLine ln[2], *lnp[2];
	Kprof__SavedLinesInfo li;
	char *notes[1];
};

static void fill_leaf(struct leaf_fixture *lf)
{
	struct fixture *x = &lf->x;

	fill(x);
	x->s[1].ids = st_ab; /* mj_hot is the leaf of 7 + 2 samples */
	x->f[1].kind = KPROF__FRAME_KIND__FRAME_KIND_NATIVE; /* at ELF 0x1000 of /x/lib.so */
	x->f[1].module = "lib.so";
	x->f[1].start = 0x1000;
	kprof__saved_mapping__init(&lf->mp);
	lf->mp.start = 0x7f0000001000;
	lf->mp.limit = 0x7f0000002000;
	lf->mp.vaddr = 0x1000;
	lf->mp.has_vaddr = true;
	lf->mp.path = "/x/lib.so";
	lf->mp.build_id = "";
	lf->mpp = &lf->mp;
	x->p.n_mappings = 1;
	x->p.mappings = &lf->mpp;
	for (int i = 0; i < 2; i++) {
		kprof__saved_leaf_addr__init(&lf->la[i]);
		lf->lap[i] = &lf->la[i];
	}
	lf->la[0].func = lf->la[1].func = 1;
	lf->la[0].address = 0x7f0000001020;
	lf->la[0].count = 2;
	lf->la[1].address = 0x7f0000001010;
	lf->la[1].count = 4;
	x->p.n_leaf_addrs = 2;
	x->p.leaf_addrs = lf->lap;
	/* kprofd's lines at 0x...10: an inlined frame first, the function last. */
	for (int i = 0; i < 2; i++) {
		kprof__saved_line__init(&lf->ln[i]);
		lf->lnp[i] = &lf->ln[i];
	}
	lf->ln[0].function = "inl";
	lf->ln[0].file = "a.c";
	lf->ln[0].line = 7;
	lf->ln[1].function = "mj_hot";
	lf->ln[1].file = "a.c";
	lf->ln[1].line = 9;
	lf->la[1].n_lines = 2;
	lf->la[1].lines = lf->lnp;
	kprof__saved_lines_info__init(&lf->li);
	lf->li.asked = 2;
	lf->li.resolved = 1;
	lf->li.failed = 1;
	lf->notes[0] = "/x/lib.so: a note";
	lf->li.n_notes = 1;
	lf->li.notes = lf->notes;
	x->p.lines = &lf->li;
}

/* Per-address leaf locations (issue 32): a stack's samples split over its leaf function's
 * addresses (address order), the rest at the function's start; lines from the resolver. */
static void test_leaf_addrs(void **state)
{
	struct leaf_fixture lf;
	struct fixture *x = &lf.x;
	uint64_t at[7] = {0}, total = 0;
	uint8_t *gz;
	size_t len;
	Perftools__Profiles__Profile *p;

	(void)state;
	fill_leaf(&lf);
	assert_int_equal(pprof_build(&x->p, 0, "test", &gz, &len), 0);
	p = decode(gz, len);
	assert_int_equal(p->n_location, 6);
	assert_int_equal(p->location[4]->address, 0x7f0000001010); /* address order */
	assert_int_equal(p->location[5]->address, 0x7f0000001020);
	assert_int_equal(p->location[4]->mapping_id, 1);
	/* 0x...10: the inlined frame first (a function of its own), the function last. */
	assert_int_equal(p->n_function, 5);
	assert_int_equal(p->location[4]->n_line, 2);
	assert_string_equal(str(p, p->function[p->location[4]->line[0]->function_id - 1]->name),
			    "inl");
	assert_int_equal(p->location[4]->line[0]->line, 7);
	assert_int_equal(p->location[4]->line[1]->function_id, 2);
	assert_int_equal(p->location[4]->line[1]->line, 9);
	assert_string_equal(str(p, p->function[1]->filename), "a.c");
	assert_true(p->mapping[0]->has_inline_frames && p->mapping[0]->has_line_numbers);
	assert_int_equal(p->location[5]->n_line, 1); /* not resolved: its function, line 0 */
	assert_int_equal(p->location[5]->line[0]->line, 0);
	/* 7 + 2 samples of mj_hot: 4 at 0x10, 2 at 0x20, 3 at its start; the third stack's 1. */
	assert_int_equal(p->n_sample, 5);
	for (size_t i = 0; i < p->n_sample; i++) {
		assert_true(p->sample[i]->location_id[0] <= 6);
		at[p->sample[i]->location_id[0]] += p->sample[i]->value[0];
		total += p->sample[i]->value[0];
		assert_int_equal(p->sample[i]->value[1], p->sample[i]->value[0] * 10000000);
	}
	assert_int_equal(at[5], 4);
	assert_int_equal(at[6], 2);
	assert_int_equal(at[2], 3);
	assert_int_equal(total, 10);
	assert_int_equal(p->n_comment, 5);
	assert_non_null(
	    strstr(str(p, p->comment[3]), "1 of 2 addresses resolved, 1 not available"));
	assert_string_equal(str(p, p->comment[4]), "kprof lines: /x/lib.so: a note");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
	/* A leaf address naming a function that does not exist. */
	lf.la[0].func = 4;
	assert_int_equal(pprof_build(&x->p, 0, "test", &gz, &len), -EINVAL);
}

/* Call sites (issue 32): main called mj_hot from one site (a location there, with its lines:
 * an inlined frame, then main), and schedule from two (main keeps its function's location). */
static void test_call_sites(void **state)
{
	struct leaf_fixture lf;
	struct fixture *x = &lf.x;
	Kprof__SavedCallSite cs[3], *csp[3];
	uint64_t main_at[3] = {0};
	uint8_t *gz;
	size_t len;
	Perftools__Profiles__Profile *p;

	(void)state;
	fill_leaf(&lf);
	x->s[1].ids = st_ac; /* main;schedule again */
	for (int i = 0; i < 3; i++) {
		kprof__saved_call_site__init(&cs[i]);
		cs[i].caller = 0;
		cs[i].callee = i ? 2 : 1;
		cs[i].address = 0x7f0000001100 + 8 * i;
		csp[i] = &cs[i];
	}
	cs[0].lines = lf.lnp; /* inl at a.c:7, then (as main) a.c:9 */
	cs[0].n_lines = 2;
	x->p.call_sites = csp;
	x->p.n_call_sites = 3;
	assert_int_equal(pprof_build(&x->p, 0, "test", &gz, &len), 0);
	p = decode(gz, len);
	assert_int_equal(p->n_location, 4 + 2 + 1); /* functions, leaf addresses, one site */
	assert_int_equal(p->location[6]->address, 0x7f0000001100);
	assert_int_equal(p->location[6]->n_line, 2);
	assert_int_equal(p->location[6]->line[1]->function_id, 1); /* main, at a.c:9 */
	assert_int_equal(p->location[6]->line[1]->line, 9);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *smp = p->sample[i];
		uint64_t leaf = smp->location_id[0], caller = smp->location_id[1];

		assert_int_equal(smp->n_location_id, 2);
		if (leaf == 3) /* schedule: main at its function's start */
			assert_int_equal(caller, 1);
		else if (leaf != 4) /* mj_hot, or one of its addresses: main at the call site */
			assert_int_equal(caller, 7);
		main_at[caller == 7 ? 0 : caller == 1 ? 1 : 2] += smp->value[0];
	}
	assert_int_equal(main_at[0], 7);
	assert_int_equal(main_at[1], 2 + 1);
	assert_non_null(strstr(str(p, p->comment[2]), "2 caller-callee pairs, 1 of them from one"));
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
	cs[2].callee = 9; /* a function that does not exist */
	assert_int_equal(pprof_build(&x->p, 0, "test", &gz, &len), -EINVAL);
}

/* Off-CPU stacks and leaf addresses together: the CPU stacks (before off_from) split over the
 * addresses with lines, the off-CPU ones (nanoseconds) never, at their function's start. */
static void test_offcpu_leaf_addrs(void **state)
{
	struct leaf_fixture lf;
	struct fixture *x = &lf.x;
	uint64_t at[7] = {0}, off_ns = 0;
	uint8_t *gz;
	size_t len;
	Perftools__Profiles__Profile *p;

	(void)state;
	fill_leaf(&lf);
	/* Stack 0 (mj_hot, 3 samples) is on CPU; stacks 1 (mj_hot, 2 ns) and 2 (1 ns) off it: the
	 * addresses' samples left (1 at 0x10, 2 at 0x20) are not given to stack 1. */
	x->s[0].count = 3;
	assert_int_equal(pprof_build_offcpu(&x->p, 1, 0, "test", &gz, &len), 0);
	p = decode(gz, len);
	assert_int_equal(p->n_sample_type, 4);
	assert_string_equal(str(p, p->sample_type[2]->type), "off_cpu");
	assert_string_equal(str(p, p->sample_type[3]->type), "wall");
	assert_int_equal(p->n_location, 6);
	assert_int_equal(p->location[4]->n_line, 2); /* the lines as without off-CPU stacks */
	/* 3 samples, all at 0x10; then the two off-CPU stacks whole. */
	assert_int_equal(p->n_sample, 3);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *smp = p->sample[i];

		assert_int_equal(smp->n_value, 4);
		assert_int_equal(smp->value[3], smp->value[1] + smp->value[2]);
		if (smp->value[2]) { /* off-CPU: no samples, no CPU time, its leaf function's start
				      */
			assert_int_equal(smp->value[0], 0);
			assert_int_equal(smp->value[1], 0);
			assert_true(smp->location_id[0] == 2 || smp->location_id[0] == 4);
			off_ns += smp->value[2];
			continue;
		}
		assert_true(smp->location_id[0] <= 6);
		at[smp->location_id[0]] += smp->value[0];
		assert_int_equal(smp->value[1], smp->value[0] * 10000000);
	}
	assert_int_equal(at[5], 3);
	assert_int_equal(at[6] + at[2], 0);
	assert_int_equal(off_ns, 3);
	assert_int_equal(p->sample[1]->location_id[0], 2); /* stack 1: mj_hot, 2 ns */
	assert_int_equal(p->sample[1]->value[2], 2);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
}

/* The HTTP endpoint's type=off_cpu|wall: four types even with no off-CPU stack, the asked one
 * the default; the CPU stacks (before off_from) have cpu and wall, the others off_cpu and
 * wall, in nanoseconds. */
static void test_wall_default(void **state)
{
	struct fixture x;
	uint8_t *gz;
	size_t len;
	Perftools__Profiles__Profile *p;

	(void)state;
	fill(&x);
	assert_int_equal(pprof_build_wall(&x.p, 3, "off_cpu", 0, "test", &gz, &len), 0);
	p = decode(gz, len);
	assert_int_equal(p->n_sample_type, 4);
	assert_string_equal(str(p, p->default_sample_type), "off_cpu");
	for (size_t i = 0; i < p->n_sample; i++) {
		assert_int_equal(p->sample[i]->value[2], 0);
		assert_int_equal(p->sample[i]->value[3], p->sample[i]->value[1]);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
	assert_int_equal(pprof_build_wall(&x.p, 1, "wall", 0, "test", &gz, &len), 0);
	p = decode(gz, len);
	assert_string_equal(str(p, p->default_sample_type), "wall");
	assert_int_equal(p->n_sample, 3);
	/* stack 0: 7 samples at 100 Hz; stacks 1 and 2: 2 and 1 ns off CPU */
	assert_int_equal(p->sample[0]->value[1], 70000000);
	assert_int_equal(p->sample[0]->value[3], 70000000);
	assert_int_equal(p->sample[1]->value[0], 0);
	assert_int_equal(p->sample[1]->value[2], 2);
	assert_int_equal(p->sample[2]->value[3], 1);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
	/* export's pprof has no default type (pprof shows the last, wall) */
	assert_int_equal(pprof_build_offcpu(&x.p, 1, 0, "test", &gz, &len), 0);
	p = decode(gz, len);
	assert_int_equal(p->default_sample_type, 0);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),	 cmocka_unit_test(test_leaf_addrs),
	    cmocka_unit_test(test_call_sites),	 cmocka_unit_test(test_offcpu_leaf_addrs),
	    cmocka_unit_test(test_wall_default), cmocka_unit_test(test_origin_labels),
	    cmocka_unit_test(test_mappings),	 cmocka_unit_test(test_js_source),
	    cmocka_unit_test(test_bad_ids),	 cmocka_unit_test(test_empty_and_live),
	    cmocka_unit_test(test_short_names),	 cmocka_unit_test(test_short_names_repeated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
