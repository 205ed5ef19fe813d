// SPDX-License-Identifier: GPL-2.0-only
/* test_render.c: unit tests for kprofctl's rendering (links cli/render.c, the views beside it
 * (render_targets.c, render_profile.c, render_paths.c, render_spp.c) and the protobuf-c code).
 *
 * Each renderer writes to an open_memstream FILE; text output is compared byte for byte, JSON
 * output too, and is also checked for balanced brackets outside strings and for raw control
 * characters inside strings. Names and messages from kprofd are hostile: the sanitizer and the
 * JSON escaper are tested on C0, DEL and C1 controls, OSC 52, raw 0x9B and every kind of
 * invalid UTF-8, and the renderers on names made of them (clean_text() checks the result).
 */
#include <errno.h>
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
#include "../../cli/render_annotate.h"
#include "../../cli/drift.h"
#include "../../cli/render_paths.h"
#include "../../cli/render_profile.h"
#include "../../cli/render_spp.h"
#include "../../cli/render_targets.h"

struct capture {
	FILE *f;
	char *buf;
	size_t len;
};

static FILE *cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	return c->f;
}

/* Close the stream; the text is c->buf (NUL-terminated), to be freed by the caller. */
static char *cap_close(struct capture *c)
{
	assert_int_equal(fclose(c->f), 0);
	assert_non_null(c->buf);
	assert_int_equal(strlen(c->buf), c->len);
	return c->buf;
}

/* Brackets balance outside strings, strings are closed and hold no raw control characters. */
static bool json_balanced(const char *s)
{
	char stack[64];
	int depth = 0;
	bool in_str = false;

	for (; *s; s++) {
		unsigned char c = *s;

		if (in_str) {
			if (c < 0x20)
				return false;
			if (c == '\\') {
				if (!s[1])
					return false;
				s++;
			} else if (c == '"') {
				in_str = false;
			}
			continue;
		}
		switch (c) {
		case '"':
			in_str = true;
			break;
		case '{':
		case '[':
			if (depth == (int)sizeof(stack))
				return false;
			stack[depth++] = c;
			break;
		case '}':
		case ']':
			if (!depth || stack[--depth] != (c == '}' ? '{' : '['))
				return false;
			break;
		}
	}
	return !in_str && depth == 0;
}

static void expect_json(const char *got, const char *want)
{
	assert_string_equal(got, want);
	assert_true(json_balanced(got));
}

static void test_json_balanced_checker(void **state)
{
	(void)state;
	/* the checker itself must be able to say no */
	assert_true(json_balanced("{\"a\":[1,{\"b\":\"}]\\\"\"}]}"));
	assert_false(json_balanced("{\"a\":[1,2}"));
	assert_false(json_balanced("{\"a\":1"));
	assert_false(json_balanced("{\"a\":\"x}"));
	assert_false(json_balanced("{\"a\":\"x\ny\"}"));
	assert_false(json_balanced("]"));
}

static char *json_string(const char *s)
{
	struct capture c;

	render_json_string(cap_open(&c), s);
	return cap_close(&c);
}

static void test_json_string(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"plain", "\"plain\""},
	    {"", "\"\""},
	    {"say \"hi\"", "\"say \\\"hi\\\"\""},
	    {"C:\\dir\\", "\"C:\\\\dir\\\\\""},
	    {"two\nlines", "\"two\\nlines\""},
	    {"\x01", "\"\\u0001\""},
	    {"a\tb\rc", "\"a\\tb\\rc\""},
	    {"\x1f\x7f\x08\x0c", "\"\\u001f\\u007f\\u0008\\u000c\""},
	    {"/usr/lib/x.so", "\"/usr/lib/x.so\""},
	    {"h\xc3\xa9llo \xe2\x82\xac", "\"h\xc3\xa9llo \xe2\x82\xac\""}, /* UTF-8 as is */
	    {"\"\\\n\x01", "\"\\\"\\\\\\n\\u0001\""},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = json_string(cases[i].in);

		assert_string_equal(got, cases[i].out);
		assert_true(json_balanced(got));
		free(got);
	}
	{
		char *got = json_string(NULL);

		assert_string_equal(got, "\"\"");
		free(got);
	}
}

/* Strict UTF-8 with no C0 (except '\n' if lines), DEL or C1 control: what a terminal may get. */
static bool clean_text(const char *s, bool lines)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned cp, len = *p < 0x80	   ? 1
				   : *p >> 5 == 6  ? 2
				   : *p >> 4 == 14 ? 3
				   : *p >> 3 == 30 ? 4
						   : 0;

		if (!len)
			return false;
		cp = len == 1 ? *p : *p & (0x7f >> len);
		for (unsigned i = 1; i < len; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		if ((cp < 0x20 && !(lines && cp == '\n')) || (cp >= 0x7f && cp <= 0x9f))
			return false;
		p += len;
	}
	return true;
}

static char *sanitized(const char *s, size_t len, size_t max, size_t *n)
{
	struct capture c;

	*n = render_sanitize(cap_open(&c), s, len, max);
	return cap_close(&c);
}

/* Hostile inputs and what they become: on a terminal, and in JSON. */
static const struct {
	const char *in, *text, *json;
} hostile[] = {
    {"plain_name", "plain_name", "\"plain_name\""},
    {"", "", "\"\""},
    /* C0: ESC, BEL, NUL-free controls; TAB, CR and LF inside one field too */
    {"\x1b[31mred\x1b[0m", "?[31mred?[0m", "\"\\u001b[31mred\\u001b[0m\""},
    {"a\tb\rc\nd\x01\x1f", "a?b?c?d??", "\"a\\tb\\rc\\nd\\u0001\\u001f\""},
    {"\x7f", "?", "\"\\u007f\""},
    /* OSC 52: write the clipboard */
    {"f\x1b]52;c;aGVsbG8=\x07", "f?]52;c;aGVsbG8=?", "\"f\\u001b]52;c;aGVsbG8=\\u0007\""},
    /* C1 controls in UTF-8: CSI (U+009B), U+0080, U+009F, OSC (U+009D): one '?' each */
    {"\xc2\x9b"
     "31m",
     "?31m", "\"\\u009b31m\""},
    {"\xc2\x80\xc2\x9f\xc2\x9d"
     "52;c;x",
     "???52;c;x", "\"\\u0080\\u009f\\u009d52;c;x\""},
    /* raw 8-bit CSI and other bytes that are not UTF-8: one '?' per byte */
    {"\x9b"
     "31m",
     "?31m", "\"\\ufffd31m\""},
    {"\xff\xfe\x80", "???", "\"\\ufffd\\ufffd\\ufffd\""},
    /* overlong: '/' as C0 AF and E0 80 AF, ESC as C0 9B, C1 CSI as E0 82 9B */
    {"\xc0\xaf\xe0\x80\xaf", "?????", "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\""},
    {"\xc0\x9b\xe0\x82\x9b", "?????", "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\""},
    /* surrogates, beyond U+10FFFF */
    {"\xed\xa0\x80\xed\xbf\xbf", "??????", "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\""},
    {"\xf4\x90\x80\x80\xf5\x80", "??????", "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\""},
    /* truncated: at the end, and followed by ASCII */
    {"x\xe2\x82", "x??", "\"x\\ufffd\\ufffd\""},
    {"\xf0\x9f\x98y\xc3", "???y?", "\"\\ufffd\\ufffd\\ufffdy\\ufffd\""},
    /* valid UTF-8 passes: é, λ, 中, U+00A0 (just after C1), U+FFFD, U+10FFFF, an emoji */
    {"h\xc3\xa9llo \xce\xbb \xe4\xb8\xad", "h\xc3\xa9llo \xce\xbb \xe4\xb8\xad",
     "\"h\xc3\xa9llo \xce\xbb \xe4\xb8\xad\""},
    {"\xc2\xa0\xef\xbf\xbd\xf4\x8f\xbf\xbf\xf0\x9f\x98\x80",
     "\xc2\xa0\xef\xbf\xbd\xf4\x8f\xbf\xbf\xf0\x9f\x98\x80",
     "\"\xc2\xa0\xef\xbf\xbd\xf4\x8f\xbf\xbf\xf0\x9f\x98\x80\""},
    /* all at once, as in a perf map line */
    {"\x1b[31m\xc3\xa9\x1b]52;c;aGk=\x07\xc2\x9b\x9b\xff", "?[31m\xc3\xa9?]52;c;aGk=????",
     "\"\\u001b[31m\xc3\xa9\\u001b]52;c;aGk=\\u0007\\u009b\\ufffd\\ufffd\""},
};

static void test_sanitize(void **state)
{
	size_t n;
	char *got;

	(void)state;
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		got = sanitized(hostile[i].in, strlen(hostile[i].in), SIZE_MAX, &n);
		assert_string_equal(got, hostile[i].text);
		assert_true(clean_text(got, false));
		free(got);

		got = render_sanitize_dup(hostile[i].in, SIZE_MAX);
		assert_non_null(got);
		assert_string_equal(got, hostile[i].text);
		free(got);
	}
	/* characters counted (one per code point or '?'), max honoured at a code point */
	got = sanitized("\xc3\xa9\xce\xbb\x9b\xc2\x9bz", 8, SIZE_MAX, &n);
	assert_string_equal(got, "\xc3\xa9\xce\xbb??z");
	assert_int_equal(n, 5);
	free(got);
	got = sanitized("\xc3\xa9\xce\xbb\x9b\xc2\x9bz", 8, 2, &n);
	assert_string_equal(got, "\xc3\xa9\xce\xbb");
	assert_int_equal(n, 2);
	free(got);
	/* len bounds the input: a sequence cut by it is bad, the bytes after it are not read */
	got = sanitized("ab\xc3\xa9", 3, SIZE_MAX, &n);
	assert_string_equal(got, "ab?");
	free(got);
	got = sanitized(NULL, 5, SIZE_MAX, &n);
	assert_string_equal(got, "");
	assert_int_equal(n, 0);
	free(got);
	got = render_sanitize_dup("\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad", 2);
	assert_string_equal(got, "\xe4\xb8\xad\xe4\xb8\xad");
	free(got);
}

static void test_sanitize_lines(void **state)
{
	struct capture c;
	char *got;

	(void)state;
	/* each line sanitized, the newlines between lines kept, CR and other controls not */
	render_lines(cap_open(&c), "main;f\x1b]52;c;aGk=\x07 3\nmain;g\xc2\x9b\x9b\r 2\n"
				   "main;\xc3\xa9 1");
	got = cap_close(&c);
	assert_string_equal(got, "main;f?]52;c;aGk=? 3\nmain;g??? 2\nmain;\xc3\xa9 1");
	assert_true(clean_text(got, true));
	assert_false(clean_text(got, false));
	free(got);
	render_lines(cap_open(&c), "a 1\n\nb 2\n");
	got = cap_close(&c);
	assert_string_equal(got, "a 1\n\nb 2\n");
	free(got);
	render_lines(cap_open(&c), NULL);
	got = cap_close(&c);
	assert_string_equal(got, "");
	free(got);
	render_text(cap_open(&c), "x\x1by\n");
	got = cap_close(&c);
	assert_string_equal(got, "x?y?");
	free(got);
}

static void test_json_hostile(void **state)
{
	struct capture c;
	char *got;

	(void)state;
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		got = json_string(hostile[i].in);
		assert_string_equal(got, hostile[i].json);
		assert_true(json_balanced(got));
		assert_true(clean_text(got, false));
		free(got);
	}
	/* render_json_strn: len bounds the input, a cut sequence is bad */
	render_json_strn(cap_open(&c), "a\xc3\xa9;rest", 2);
	got = cap_close(&c);
	assert_string_equal(got, "\"a\\ufffd\"");
	free(got);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(render_state(KPROF__TARGET_STATE__TARGET_STATE_ATTACHED), "attached");
	assert_string_equal(render_state(KPROF__TARGET_STATE__TARGET_STATE_EXITED), "exited");
	assert_string_equal(render_state(KPROF__TARGET_STATE__TARGET_STATE_DETACHED), "detached");
	assert_string_equal(render_state(KPROF__TARGET_STATE__TARGET_STATE_UNSPECIFIED), "unknown");
	assert_string_equal(render_state((Kprof__TargetState)99), "unknown");

	assert_string_equal(render_kind(KPROF__FRAME_KIND__FRAME_KIND_NATIVE), "native");
	assert_string_equal(render_kind(KPROF__FRAME_KIND__FRAME_KIND_JIT), "jit");
	assert_string_equal(render_kind(KPROF__FRAME_KIND__FRAME_KIND_KERNEL), "kernel");
	assert_string_equal(render_kind(KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN), "unknown");
	assert_string_equal(render_kind(KPROF__FRAME_KIND__FRAME_KIND_UNSPECIFIED), "unknown");
	assert_string_equal(render_kind((Kprof__FrameKind)42), "unknown");
}

static void fill_target(Kprof__Target *t)
{
	kprof__target__init(t);
	t->pid = 4242;
	t->uid = 1000;
	t->comm = "minijit";
	t->state = KPROF__TARGET_STATE__TARGET_STATE_ATTACHED;
	t->freq_hz = 99;
	t->samples = 200;
	t->attached_at_ns = 1700000000123456789ULL;
	t->duration_sec = 30;
	t->jit_symbols = 3;
	t->perfmap_path = "/tmp/perf-4242.map";
	t->stacks = 17;
	t->truncated_stacks = 1;
}

static char *target_line(const Kprof__Target *t)
{
	struct capture c;

	render_target_line(cap_open(&c), t);
	return cap_close(&c);
}

static void test_target_line(void **state)
{
	Kprof__Target t;
	char *s;

	(void)state;
	fill_target(&t);
	s = target_line(&t);
	assert_string_equal(s, "pid 4242 (minijit) uid 1000: attached, 99 Hz, 200 samples, "
			       "3 JIT symbols\n");
	free(s);

	t.state = KPROF__TARGET_STATE__TARGET_STATE_EXITED;
	t.exit_code = 3;
	s = target_line(&t);
	assert_string_equal(s, "pid 4242 (minijit) uid 1000: exited, 99 Hz, 200 samples, "
			       "3 JIT symbols, exit status 3\n");
	free(s);

	t.exit_code = -9;
	t.perfmap_bad_lines = 2;
	t.lost_stacks = 7;
	s = target_line(&t);
	assert_string_equal(s, "pid 4242 (minijit) uid 1000: exited, 99 Hz, 200 samples, "
			       "3 JIT symbols, killed by signal 9, 2 bad perf-map lines, "
			       "7 samples lost (stack table full)\n");
	free(s);

	/* the exit code only matters once the target exited */
	t.state = KPROF__TARGET_STATE__TARGET_STATE_DETACHED;
	t.perfmap_bad_lines = 0;
	t.lost_stacks = 0;
	s = target_line(&t);
	assert_string_equal(s, "pid 4242 (minijit) uid 1000: detached, 99 Hz, 200 samples, "
			       "3 JIT symbols\n");
	free(s);

	/* one of a thing is singular */
	t.samples = 1;
	t.jit_symbols = 1;
	t.lost_stacks = 1;
	t.save_failures = 1;
	t.calls = true;
	t.probes = 1;
	t.call_events = 1;
	t.bursts = 1;
	s = target_line(&t);
	assert_string_equal(s,
			    "pid 4242 (minijit) uid 1000: detached, 99 Hz, 1 sample, "
			    "1 JIT symbol, saving failed 1 time (retrying), 1 sample lost (stack "
			    "table full); exact mode: 1 function probed, 1 call event, 1 burst, "
			    "probes attached 0% of the time\n");
	free(s);

	/* a jitdump: its symbols count among the JIT symbols; its problems are said (sanitized) */
	t.samples = 200;
	t.jit_symbols = 3;
	t.lost_stacks = 0;
	t.save_failures = 0;
	t.calls = false;
	t.jitdump_path = "/proc/4242/cwd/jit-4242.dump";
	t.jitdump_symbols = 5;
	t.jitdump_bad_records = 2;
	t.jitdump_problem = "/proc/4242/cwd/jit-4242.dump read no further than byte 64: \x1b[2J";
	s = target_line(&t);
	assert_string_equal(s, "pid 4242 (minijit) uid 1000: detached, 99 Hz, 200 samples, "
			       "8 JIT symbols, 5 from the jitdump, 2 bad jitdump records, jitdump "
			       "/proc/4242/cwd/jit-4242.dump read no further than byte 64: ?[2J\n");
	free(s);

	/* A JVM: its asks, and its note made harmless on a terminal (a JVM's words in it). */
	fill_target(&t);
	t.jvm = true;
	t.jvm_map_asks = 3;
	t.jvm_map_answers = 2;
	t.jvm_map_failures = 1;
	t.jvm_note = "Compiler.perfmap answered -1: \x1b[2Jx; no -XX:+PreserveFramePointer: Java "
		     "stacks will be short";
	s = target_line(&t);
	assert_string_equal(s, "pid 4242 (minijit) uid 1000: attached, 99 Hz, 200 samples, "
			       "3 JIT symbols; HotSpot JVM: perf map asked 3 times, 2 answered, "
			       "1 failed (Compiler.perfmap answered -1: ?[2Jx; no "
			       "-XX:+PreserveFramePointer: Java stacks will be short)\n");
	free(s);
	t.jvm_map_asks = 1;
	t.jvm_map_answers = 1;
	t.jvm_map_failures = 0;
	t.jvm_note = "";
	s = target_line(&t);
	assert_string_equal(s, "pid 4242 (minijit) uid 1000: attached, 99 Hz, 200 samples, "
			       "3 JIT symbols; HotSpot JVM: perf map asked 1 time, 1 answered\n");
	free(s);
}

/* The header of the fixture's three rows: columns as wide as their widest value. */
#define REPORT_HEADER "SELF   SELF% TOTAL  TOTAL%  KIND    MODULE                   FUNCTION\n"

struct report_fixture {
	Kprof__Target target;
	Kprof__FlatEntry e[4];
	Kprof__FlatEntry *ep[4];
	Kprof__ReportReply r;
};

static void fill_report(struct report_fixture *x)
{
	static const struct {
		const char *function, *module;
		Kprof__FrameKind kind;
		uint64_t self, total, address;
	} rows[] = {
	    {"jit_hot_loop", "/memfd:minijit (deleted)", KPROF__FRAME_KIND__FRAME_KIND_JIT, 50, 150,
	     0x7f1c2b000040},
	    {"main", "/usr/bin/minijit", KPROF__FRAME_KIND__FRAME_KIND_NATIVE, 0, 200, 0x1139},
	    {"[unknown]", "[anon]", KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN, 1, 3, 0},
	    {"a_function_name_longer_than_forty_characters_x", "[kernel.kallsyms]",
	     KPROF__FRAME_KIND__FRAME_KIND_KERNEL, 9, 9, 0xffffffff81000000},
	};

	fill_target(&x->target);
	kprof__report_reply__init(&x->r);
	for (size_t i = 0; i < 4; i++) {
		kprof__flat_entry__init(&x->e[i]);
		x->e[i].function = (char *)rows[i].function;
		x->e[i].module = (char *)rows[i].module;
		x->e[i].kind = rows[i].kind;
		x->e[i].self = rows[i].self;
		x->e[i].total = rows[i].total;
		x->e[i].address = rows[i].address;
		x->ep[i] = &x->e[i];
	}
	x->r.target = &x->target;
	x->r.total_samples = 200;
	x->r.entries = x->ep;
	x->r.n_entries = 3;
	x->r.functions = 5;
}

static char *report(const Kprof__ReportReply *r, bool json)
{
	struct capture c;

	render_report(cap_open(&c), r, json, false);
	return cap_close(&c);
}

/* C++ names short in text unless --full-names, whole in JSON; overloads whole; others as they
 * are. */
static void test_report_names(void **state)
{
	static const char *const names[] = {
	    "v8::internal::JsonParser<unsigned char>::ParseJsonValue(v8::internal::Handle<"
	    "v8::internal::Object>)",
	    "JS:*parse /app/x.js:12:3",
	    "foo::bar(int)",
	    "foo::bar(double) const",
	    "void java.util.HashMap.get(java.lang.Object)",
	    "baz(int) [clone .cold]",
	};
	Kprof__FlatEntry e[6];
	Kprof__FlatEntry *ep[6];
	Kprof__ReportReply r;
	struct capture c;
	char *s;

	(void)state;
	kprof__report_reply__init(&r);
	for (size_t i = 0; i < 6; i++) {
		kprof__flat_entry__init(&e[i]);
		e[i].function = (char *)names[i];
		e[i].module = "node";
		e[i].self = e[i].total = 1;
		ep[i] = &e[i];
	}
	r.entries = ep;
	r.n_entries = r.functions = 6;
	r.total_samples = 6;
	render_report(cap_open(&c), &r, false, false);
	s = cap_close(&c);
	assert_non_null(
	    strstr(s, "node   v8::internal::JsonParser<unsigned char>::ParseJsonValue\n"));
	assert_null(strstr(s, "Handle"));
	assert_non_null(strstr(s, " JS:*parse /app/x.js:12:3\n"));
	assert_non_null(strstr(s, " foo::bar(int)\n"));
	assert_non_null(strstr(s, " foo::bar(double) const\n"));
	assert_non_null(strstr(s, " void java.util.HashMap.get(java.lang.Object)\n"));
	assert_non_null(strstr(s, " baz [clone .cold]\n"));
	free(s);
	render_report(cap_open(&c), &r, false, true);
	s = cap_close(&c);
	assert_non_null(strstr(s, "ParseJsonValue(v8::internal::Handle<v8::internal::Object>)\n"));
	assert_non_null(strstr(s, "baz(int) [clone .cold]\n"));
	free(s);
	render_report(cap_open(&c), &r, true, false);
	s = cap_close(&c);
	assert_non_null(
	    strstr(s, "\"function\":\"v8::internal::JsonParser<unsigned "
		      "char>::ParseJsonValue(v8::internal::Handle<v8::internal::Object>)\""));
	assert_non_null(strstr(s, "\"function\":\"baz(int) [clone .cold]\""));
	free(s);

	/* render_names: one allocation, NULL names as "", the same name twice is no overload */
	{
		const char *in[] = {"a::f(int)", NULL, "a::f(int)", "a::g(int)", "a::g(long)", ""};
		const char **out = render_names(in, 6);

		assert_non_null(out);
		assert_string_equal(out[0], "a::f");
		assert_string_equal(out[1], "");
		assert_string_equal(out[2], "a::f");
		assert_string_equal(out[3], "a::g(int)");
		assert_string_equal(out[4], "a::g(long)");
		assert_string_equal(out[5], "");
		free(out);
		out = render_names(in, 0);
		free(out);
	}
}

static void test_report_text(void **state)
{
	struct report_fixture x;
	char *s;

	(void)state;
	fill_report(&x);
	s = report(&x.r, false);
	assert_string_equal(
	    s, "pid 4242 (minijit) uid 1000: attached, 99 Hz, 200 samples, "
	       "3 JIT symbols\n"
	       "200 samples, 5 functions (top shown)\n"
	       "\n" REPORT_HEADER
	       "  50  25.00%   150  75.00%  jit     /memfd:minijit (deleted) jit_hot_loop\n"
	       "   0   0.00%   200 100.00%  native  /usr/bin/minijit         main\n"
	       "   1   0.50%     3   1.50%  unknown [anon]                   [unknown]\n");
	free(s);

	/* all functions shown: no marker; no target: no target line */
	x.r.functions = 3;
	x.r.target = NULL;
	s = report(&x.r, false);
	assert_non_null(strstr(s, "200 samples, 3 functions\n\n" REPORT_HEADER));
	assert_null(strstr(s, "top shown"));
	assert_null(strstr(s, "pid 4242"));
	assert_true(strncmp(s, "200 samples", 11) == 0);
	free(s);

	/* the name last, whole when not for a terminal */
	x.r.entries = &x.ep[3];
	x.r.n_entries = 1;
	x.r.functions = 1;
	x.r.total_samples = 0; /* no division by zero: 0% */
	s = report(&x.r, false);
	assert_string_equal(s, "0 samples, 1 function\n\n"
			       "SELF   SELF% TOTAL  TOTAL%  KIND    MODULE            FUNCTION\n"
			       "   9   0.00%     9   0.00%  kernel  [kernel.kallsyms] "
			       "a_function_name_longer_than_forty_characters_x\n");
	free(s);
	/* for an 80-column terminal: the row fits, the name loses its end */
	render_set_columns(80);
	s = report(&x.r, false);
	render_set_columns(0);
	for (char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		assert_true(strcspn(l, "\n") <= 80);
	assert_non_null(strstr(s, "[kernel.kallsyms] a_function_name_longer_t..\n"));
	free(s);

	/* empty profile */
	x.r.n_entries = 0;
	x.r.functions = 0;
	s = report(&x.r, false);
	assert_string_equal(s, "0 samples, 0 functions\n\n"
			       "SELF   SELF% TOTAL  TOTAL%  KIND    MODULE FUNCTION\n");
	free(s);

	/* percentages are of total_samples, not of the entries shown */
	fill_report(&x);
	x.r.target = NULL;
	x.r.total_samples = 3;
	x.r.n_entries = 1;
	x.e[0].self = 1;
	x.e[0].total = 2;
	s = report(&x.r, false);
	assert_non_null(strstr(
	    s, "\n   1  33.33%     2  66.67%  jit     /memfd:minijit (deleted) jit_hot_loop\n"));
	free(s);
}

/* Names come from the target: escape sequences must not reach the terminal. */
static void test_text_control_chars(void **state)
{
	struct report_fixture x;
	char *s;

	(void)state;
	fill_report(&x);
	x.target.comm = "evil\x1b[2J";
	x.e[0].function = "f\x1b]0;title\x07";
	x.e[0].module = "m\r\n";
	x.r.n_entries = 1;
	s = report(&x.r, false);
	assert_null(strchr(s, 0x1b));
	assert_null(strchr(s, 0x07));
	assert_null(strchr(s, '\r'));
	assert_non_null(strstr(s, "pid 4242 (evil?[2J) uid 1000"));
	assert_non_null(strstr(s, "  jit     m??    f?]0;title?\n"));
	free(s);

	/* C1 controls, raw 0x9B, invalid UTF-8: all '?'; é kept; column widths in characters */
	x.target.comm = "c\xc2\x9b\x9b\xff";
	x.e[0].function = "\xc3\xa9\x1b]52;c;aGVsbG8=\x07\xc2\x9b"
			  "2J\x9b\xed\xa0\x80";
	x.e[0].module = "/tmp/\xc0\xaf\xc2\x9d";
	s = report(&x.r, false);
	assert_true(clean_text(s, true));
	assert_non_null(strstr(s, "pid 4242 (c???"
				  ") uid 1000"));
	assert_non_null(strstr(s, "  jit     /tmp/??? \xc3\xa9?]52;c;aGVsbG8=??2J????\n"));
	free(s);
	s = report(&x.r, true);
	assert_true(json_balanced(s));
	assert_true(clean_text(s, true));
	assert_non_null(strstr(s, "\"comm\":\"c\\u009b\\ufffd\\ufffd\""));
	assert_non_null(strstr(s, "\"function\":\"\xc3\xa9\\u001b]52;c;aGVsbG8=\\u0007\\u009b2J"
				  "\\ufffd\\ufffd\\ufffd\\ufffd\",\"module\":\"/tmp/\\ufffd\\ufffd"
				  "\\u009d\""));
	free(s);
}

static void test_report_json(void **state)
{
	struct report_fixture x;
	char *s;

	(void)state;
	fill_report(&x);
	x.target.comm = "mini\"jit\n";
	x.e[1].function = "ma\\in";
	x.r.n_entries = 2;
	s = report(&x.r, true);
	expect_json(
	    s, "{\"target\":{\"pid\":4242,\"uid\":1000,\"comm\":\"mini\\\"jit\\n\","
	       "\"state\":\"attached\",\"freq_hz\":99,\"samples\":200,"
	       "\"attached_at_ns\":1700000000123456789,\"ended_at_ns\":0,"
	       "\"duration_sec\":30,\"exit_code\":0,\"jit_symbols\":3,"
	       "\"perfmap_bad_lines\":0,\"perfmap_path\":\"/tmp/perf-4242.map\","
	       "\"stacks\":17,\"lost_stacks\":0,\"truncated_stacks\":1,"
	       "\"eps\":0,\"calls\":false,\"call_events\":0,\"bursts\":0,"
	       "\"calls_duty\":0.000,\"probes\":0,\"symbols_refused\":0,"
	       "\"save_failures\":0,\"samples_refused\":0,\"samples_cut\":0,"
	       "\"samples_before_exec\":0,\"session\":0,"
	       "\"sessions\":0,\"jitdump_path\":\"\",\"jitdump_symbols\":0,"
	       "\"jitdump_bad_records\":0,\"jitdump_bytes\":0,\"symbol_read_bytes\":0,\"symbol_"
	       "read_deferred\":0,\"jitdump_problem\":\"\","
	       "\"unnamed_leaf_samples\":0,\"unknown_samples\":0,\"jvm\":false,\"jvm_map_asks\":0,"
	       "\"jvm_map_answers\":0,\"jvm_map_failures\":0,\"jvm_note\":\"\",\"thread_"
	       "events\":0,\"threads_unsampled\":0,"
	       "\"children\":false,\"parent\":0,\"children_followed\":0,"
	       "\"children_refused\":0,\"unresolved_addresses\":0,\"unresolved_dropped\":0,"
	       "\"named_late\":0,\"unnamed_note\":\"\",\"cgroup\":\"\",\"rule\":\"\","
	       "\"calls_hot\":0,\"hw_functions\":0,\"hw_estimated\":false,\"hw_covered\":0.000,"
	       "\"hw_stopped\":\"\","
	       "\"probe_samples\":0,\"annotate_bytes\":0,\"annotate_dropped\":0,"
	       "\"all\":false,\"resumes\":0,\"resume_note\":\"\",\"memory_bytes\":0,\"drift_"
	       "bytes\":0},"
	       "\"total_samples\":200,\"functions\":5,\"entries\":["
	       "{\"function\":\"jit_hot_loop\",\"module\":\"/memfd:minijit (deleted)\","
	       "\"kind\":\"jit\",\"self\":50,\"self_pct\":25.00,\"total\":150,"
	       "\"total_pct\":75.00,\"address\":139758957232192,\"calls\":0},"
	       "{\"function\":\"ma\\\\in\",\"module\":\"/usr/bin/minijit\","
	       "\"kind\":\"native\",\"self\":0,\"self_pct\":0.00,\"total\":200,"
	       "\"total_pct\":100.00,\"address\":4409,\"calls\":0}]}\n");
	free(s);

	/* no target, no entries */
	x.r.target = NULL;
	x.r.n_entries = 0;
	x.r.functions = 0;
	x.r.total_samples = 0;
	s = report(&x.r, true);
	expect_json(s, "{\"target\":null,\"total_samples\":0,\"functions\":0,\"entries\":[]}\n");
	free(s);

	/* total 0 gives 0 percent, not nan; exited target with a negative exit code */
	fill_report(&x);
	x.target.state = KPROF__TARGET_STATE__TARGET_STATE_EXITED;
	x.target.exit_code = -9;
	x.target.ended_at_ns = 1700000001000000000ULL;
	x.r.total_samples = 0;
	x.r.n_entries = 4;
	s = report(&x.r, true);
	assert_true(json_balanced(s));
	assert_non_null(strstr(s, "\"state\":\"exited\""));
	assert_non_null(strstr(s, "\"exit_code\":-9,"));
	assert_non_null(strstr(s, "\"ended_at_ns\":1700000001000000000,"));
	assert_non_null(strstr(s, "\"function\":\"[unknown]\",\"module\":\"[anon]\","
				  "\"kind\":\"unknown\",\"self\":1,\"self_pct\":0.00,\"total\":3,"
				  "\"total_pct\":0.00,\"address\":0,\"calls\":0}"));
	assert_non_null(
	    strstr(s, "\"kind\":\"kernel\",\"self\":9,\"self_pct\":0.00,\"total\":9,"
		      "\"total_pct\":0.00,\"address\":18446744071578845184,\"calls\":0}]}\n"));
	assert_null(strstr(s, "nan"));
	free(s);
}

static char *list(const Kprof__ListReply *r, bool json)
{
	struct capture c;

	render_list(cap_open(&c), r, json);
	return cap_close(&c);
}

/* attach --children: followed children under their parent, depth first, in the list's order
 * otherwise; a parent's older session is not theirs. */
static void test_list_tree(void **state)
{
	Kprof__ListReply r = KPROF__LIST_REPLY__INIT;
	Kprof__Target t[6], *tp[6] = {&t[0], &t[1], &t[2], &t[3], &t[4], &t[5]};
	static const struct {
		uint32_t pid, parent;
		uint64_t at;
		const char *comm;
	} v[6] = {
	    {30, 20, 300, "grandchild"}, {20, 10, 200, "child"},     {40, 0, 50, "other"},
	    {10, 0, 100, "parent"},	 {10, 0, 10, "old-session"}, {21, 10, 250, "child2"},
	};
	char *s;

	(void)state;
	for (int i = 0; i < 6; i++) {
		fill_target(&t[i]);
		t[i].pid = v[i].pid;
		t[i].parent = v[i].parent;
		t[i].attached_at_ns = v[i].at;
		t[i].comm = (char *)v[i].comm;
		t[i].jit_symbols = 0;
	}
	r.targets = tp;
	r.n_targets = 6;
	s = list(&r, false);
	assert_non_null(strstr(s, "\n40       0       other "));
	/* as tree(1) draws it: |- for a child with a sibling after it, `- for the last */
	assert_non_null(
	    strstr(s, "\n10       0       parent           1000   attached      99        200 "
		      "       0        -\n"
		      "|-20     0       child            1000   attached      99        200 "
		      "       0        -\n"
		      "| `-30   0       grandchild       1000   attached      99        200 "
		      "       0        -\n"
		      "`-21     0       child2 "));
	assert_non_null(strstr(s, "\n10       0       old-session "));
	assert_true(strstr(s, "other") < strstr(s, "parent"));
	free(s);
	/* A loop of parents (equal times) is still listed, each target once. */
	t[3].parent = 30;
	t[3].attached_at_ns = t[0].attached_at_ns = t[1].attached_at_ns = 300;
	s = list(&r, false);
	assert_non_null(strstr(s, "grandchild"));
	assert_non_null(strstr(s, " child "));
	assert_non_null(strstr(s, " parent "));
	assert_null(strstr(strstr(s, " parent ") + 1, " parent "));
	free(s);
}

static void test_list(void **state)
{
	Kprof__ListReply r = KPROF__LIST_REPLY__INIT;
	Kprof__Target t[2], *tp[2] = {&t[0], &t[1]};
	char *s;

	(void)state;
	s = list(&r, false);
	assert_string_equal(s, "no targets (kept profiles of ended ones: kprofctl list --all)\n");
	free(s);
	s = list(&r, true);
	expect_json(s, "{\"targets\":[]}\n");
	free(s);

	fill_target(&t[0]);
	t[0].pid = 1;
	fill_target(&t[1]);
	t[1].pid = 31337;
	t[1].uid = 0;
	t[1].comm = "a-much-longer-comm-name";
	t[1].state = KPROF__TARGET_STATE__TARGET_STATE_EXITED;
	t[1].freq_hz = 997;
	t[1].samples = 0;
	t[1].jit_symbols = 0;
	t[1].jitdump_symbols = 4; /* JITSYMS: perf map and jitdump */
	t[1].exit_code = 1;
	t[1].session = 2; /* the pid's second session kprofd keeps */
	t[1].sessions = 2;
	r.targets = tp;
	r.n_targets = 2;
	s = list(&r, false);
	assert_string_equal(
	    s, "PID      SESSION COMM             UID    STATE         HZ    SAMPLES  "
	       "JITSYMS  THREADS\n"
	       "1        0       minijit          1000   attached      99        200  "
	       "      3        -\n"
	       "31337    2       a-much-longer-comm-name 0      exited       997        "
	       "  0        4        -\n");
	free(s);

	/* per-thread events, and threads left out by a limit: counted and said */
	t[0].thread_events = 12;
	t[1].thread_events = 4096;
	t[1].threads_unsampled = 37;
	s = list(&r, false);
	assert_non_null(strstr(s, "      3       12\n"));
	assert_non_null(
	    strstr(s, "        4 4096+37!\n"
		      "pid 31337: 37 threads not sampled: the thread event limit was "
		      "reached (kprofd.conf limits.max_threads, limits.max_thread_fds)\n"));
	free(s);
	s = list(&r, true);
	assert_non_null(strstr(s, "\"thread_events\":4096,\"threads_unsampled\":37,"));
	free(s);
	t[0].thread_events = t[1].thread_events = t[1].threads_unsampled = 0;

	s = list(&r, true);
	assert_true(json_balanced(s));
	{
		static const char head[] =
		    "{\"targets\":[{\"pid\":1,\"uid\":1000,\"comm\":\"minijit\",";

		assert_memory_equal(s, head, strlen(head));
	}
	assert_non_null(strstr(
	    s, "\"probes\":0,\"symbols_refused\":0,\"save_failures\":0,"
	       "\"samples_refused\":0,\"samples_cut\":0,\"samples_before_exec\":0,"
	       "\"session\":0,\"sessions\":0,"
	       "\"jitdump_path\":\"\",\"jitdump_symbols\":0,"
	       "\"jitdump_bad_records\":0,\"jitdump_bytes\":0,\"symbol_read_bytes\":0,\"symbol_"
	       "read_deferred\":0,"
	       "\"jitdump_problem\":\"\","
	       "\"unnamed_leaf_samples\":0,\"unknown_samples\":0,\"jvm\":false,\"jvm_map_asks\":0,"
	       "\"jvm_map_answers\":0,\"jvm_map_failures\":0,\"jvm_note\":\"\","
	       "\"thread_events\":0,\"threads_unsampled\":0,"
	       "\"children\":false,\"parent\":0,\"children_followed\":0,"
	       "\"children_refused\":0,\"unresolved_addresses\":0,\"unresolved_dropped\":0,"
	       "\"named_late\":0,\"unnamed_note\":\"\",\"cgroup\":\"\",\"rule\":\"\","
	       "\"calls_hot\":0,\"hw_functions\":0,\"hw_estimated\":false,\"hw_covered\":0.000,"
	       "\"hw_stopped\":\"\","
	       "\"probe_samples\":0,\"annotate_bytes\":0,\"annotate_dropped\":0,"
	       "\"all\":false,\"resumes\":0,\"resume_note\":\"\",\"memory_bytes\":0,\"drift_"
	       "bytes\":0},"
	       "{\"pid\":31337,\"uid\":0,"
	       "\"comm\":\"a-much-longer-comm-name\",\"state\":\"exited\","
	       "\"freq_hz\":997,\"samples\":0,"));
	assert_non_null(strstr(s, "\"exit_code\":1,"));
	assert_true(strlen(s) > 4 && strcmp(s + strlen(s) - 4, "}]}\n") == 0);
	free(s);

	/* one target: no separator */
	r.n_targets = 1;
	s = list(&r, true);
	assert_true(json_balanced(s));
	assert_null(strstr(s, "},{"));
	free(s);
}

static char *status(const Kprof__StatusReply *r, bool json)
{
	struct capture c;

	render_status(cap_open(&c), r, json);
	return cap_close(&c);
}

static void fill_status(Kprof__StatusReply *r, uint64_t *drops, uint32_t *freqs)
{
	kprof__status_reply__init(r);
	r->version = "0.1.0";
	r->pid = 77;
	r->uptime_ns = 3600000000000ULL;
	r->targets_attached = 2;
	r->targets_kept = 1;
	r->samples = 3000;
	r->samples_per_sec = 12.5;
	r->drops = 7;
	drops[0] = 0;
	drops[1] = 5;
	drops[2] = 2;
	r->drops_per_cpu = drops;
	r->n_drops_per_cpu = 3;
	r->bad_records = 4;
	r->ringbuf_bytes = 262144;
	freqs[0] = 99;
	freqs[1] = 997;
	r->frequencies = freqs;
	r->n_frequencies = 2;
	r->cpu_ns = 1500000000ULL;
	r->clients = 1;
}

static void test_status_text(void **state)
{
	Kprof__StatusReply r;
	uint64_t drops[3];
	uint32_t freqs[2];
	char *s;

	(void)state;
	fill_status(&r, drops, freqs);
	s = status(&r, false);
	assert_string_equal(s, "kprofd 0.1.0 (pid 77), up 3600 s\n"
			       "targets:     2 attached, 1 kept\n"
			       "samples:     3000 total, 12.5/s now\n"
			       "drops:       7 (ring buffer full): cpu0=0, cpu1=5, cpu2=2\n"
			       "bad records: 4\n"
			       "sampling:    99 Hz, 997 Hz\n"
			       "ring buffer: 256 KiB\n"
			       "daemon CPU:  1.500 s (500.0 us per sample)\n"
			       "clients:     1\n");
	free(s);

	/* quiet daemon: no drops (per-CPU zeros not listed), no bad records, idle, no samples */
	drops[1] = drops[2] = 0;
	r.drops = 0;
	r.bad_records = 0;
	r.n_frequencies = 0;
	r.samples = 0;
	r.samples_per_sec = 0;
	r.cpu_ns = 2000000;
	r.clients = 0;
	s = status(&r, false);
	assert_string_equal(s, "kprofd 0.1.0 (pid 77), up 3600 s\n"
			       "targets:     2 attached, 1 kept\n"
			       "samples:     0 total, 0.0/s now\n"
			       "drops:       0 (ring buffer full)\n"
			       "sampling:    idle\n"
			       "ring buffer: 256 KiB\n"
			       "daemon CPU:  0.002 s (0.0 us per sample)\n"
			       "clients:     0\n");
	free(s);

	/* a daemon that says how it samples */
	r.sampling = "threads";
	r.thread_events = 12;
	r.sampler_runs = 5000;
	s = status(&r, false);
	assert_non_null(strstr(s, "sampling:    idle (per-thread events: 12 open)\n"
				  "sampler:     5000 runs\n"));
	free(s);
	r.threads_created = 300;
	r.thread_reports = 2;
	r.thread_reports_lost = 1;
	s = status(&r, false);
	assert_non_null(strstr(s, "sampler:     5000 runs; 300 threads created in targets, 2 "
				  "without an event (1 reports lost)\n"));
	free(s);
	r.sampling = "cpus";
	s = status(&r, false);
	assert_non_null(strstr(s, "sampling:    idle (per-CPU events)\n"));
	free(s);
}

static void test_status_json(void **state)
{
	Kprof__StatusReply r;
	uint64_t drops[3];
	uint32_t freqs[2];
	char *s;

	(void)state;
	fill_status(&r, drops, freqs);
	r.version = "0.1.0 \"dev\"";
	s = status(&r, true);
	expect_json(
	    s, "{\"version\":\"0.1.0 \\\"dev\\\"\",\"pid\":77,\"uptime_ns\":3600000000000,"
	       "\"targets_attached\":2,\"targets_kept\":1,\"samples\":3000,"
	       "\"samples_per_sec\":12.5,\"drops\":7,\"drops_per_cpu\":[0,5,2],"
	       "\"bad_records\":4,\"ringbuf_bytes\":262144,\"frequencies\":[99,997],"
	       "\"cpu_ns\":1500000000,\"cpu_ns_per_sample\":500000,\"clients\":1,"
	       "\"symbol_bytes\":0,\"symbol_refusals\":0,\"profile_bytes\":0,"
	       "\"lookups\":0,\"lookup_steps\":0,\"save_walks\":0,\"save_steps\":0,\"cred_ticks\":"
	       "0,\"cred_reads\":0,\"quiet_skips\":0,"
	       "\"shared_code_copies\":0,\"shared_code_bytes\":0,\"shared_code_found\":0,"
	       "\"shared_code_full\":0,\"shared_names\":0,\"shared_names_full\":0,"
	       "\"sampling\":\"\",\"profile_budget_bytes\":0,\"profiles_over_budget\":false,"
	       "\"thread_events\":0,\"sampler_runs\":0,"
	       "\"threads_created\":0,\"thread_reports\":0,\"thread_reports_lost\":0,"
	       "\"forks_lost\":0,\"watch_rules\":0,\"auto_targets\":0,"
	       "\"max_auto_targets\":0,\"auto_refused\":0,\"watch_execs_lost\":0,"
	       "\"watches\":[],\"window_sec\":0,\"windows\":0,\"windows_in_memory\":0,"
	       "\"window_memory_bytes\":0,\"window_disk_bytes\":0,\"windows_dropped\":0,"
	       "\"windows_aged\":0,\"window_bad_files\":0,\"window_write_failures\":0,"
	       "\"windows_unsaved\":0,\"range_queries\":0,\"range_sliced\":0,\"range_slices\":0,"
	       "\"window_files\":0,\"window_ticks\":0,\"window_tick_steps\":0,"
	       "\"features\":[],"
	       "\"off_cpu_program\":\"\",\"off_cpu_targets\":0,\"off_cpu_runs\":0,\"off_cpu_"
	       "switches\":0,"
	       "\"off_cpu_intervals\":0,\"off_cpu_lost\":0,\"off_cpu_lost_ns\":0,\"off_cpu_no_"
	       "stack\":0,"
	       "\"off_cpu_stacks_gone\":0,\"off_cpu_callers_found\":0,\"off_cpu_callers_lost\":0,"
	       "\"off_cpu_rules\":0,\"off_cpu_stacks_freed\":0,\"off_cpu_sweeps\":0,"
	       "\"lines_helpers_started\":0,\"lines_helpers_killed\":0,"
	       "\"lines_answers\":0,\"lines_cache_entries\":0,\"lines_cache_bytes\":0,"
	       "\"lines_cache_max_bytes\":0,\"lines_cache_evicted\":0}\n");
	free(s);

	/* the kernel's features: JSON objects, and one text line each with on/off and version */
	{
		Kprof__KernelFeature f1 = KPROF__KERNEL_FEATURE__INIT, f2 = f1, *fp[2] = {&f1, &f2};

		f1.name = "attach-cookie";
		f1.on = true;
		f1.kernel = "5.15";
		f1.why = "bpf_get_attach_cookie \"x\"";
		f2.name = "task-iterator";
		f2.kernel = "6.7";
		f2.why = "kfuncs";
		r.n_features = 2;
		r.features = fp;
		s = status(&r, true);
		assert_true(json_balanced(s));
		assert_non_null(strstr(
		    s, ",\"features\":[{\"name\":\"attach-cookie\",\"on\":true,\"kernel\":\"5.15\","
		       "\"why\":\"bpf_get_attach_cookie \\\"x\\\"\"},{\"name\":\"task-iterator\","
		       "\"on\":false,\"kernel\":\"6.7\",\"why\":\"kfuncs\"}],"));
		free(s);
		s = status(&r, false);
		assert_non_null(strstr(s, "\nfeatures:"));
		assert_non_null(strstr(s, "\n  attach-cookie         on   Linux 5.15: "
					  "bpf_get_attach_cookie \"x\"\n"));
		assert_non_null(strstr(s, "\n  task-iterator         off  Linux 6.7: kfuncs\n"));
		free(s);
		r.n_features = 0;
		r.features = NULL;
	}

	/* empty arrays, no samples */
	r.n_drops_per_cpu = 0;
	r.n_frequencies = 0;
	r.drops = 0;
	r.samples = 0;
	s = status(&r, true);
	assert_true(json_balanced(s));
	assert_non_null(strstr(s, ",\"drops\":0,\"drops_per_cpu\":[],\"bad_records\":4,"));
	assert_non_null(strstr(s, ",\"frequencies\":[],\"cpu_ns\":1500000000,"
				  "\"cpu_ns_per_sample\":0,\"clients\":1,\"symbol_bytes\":0,"
				  "\"symbol_refusals\":0,\"profile_bytes\":0,"));
	free(s);

	/* one CPU */
	r.n_drops_per_cpu = 1;
	drops[0] = 18446744073709551615ULL;
	s = status(&r, true);
	assert_true(json_balanced(s));
	assert_non_null(strstr(s, "\"drops_per_cpu\":[18446744073709551615],"));
	free(s);
}

/* A two-block loop: B0 entry (falls into B1), B1 header: back edge to itself or exit. */
struct paths_fixture {
	Kprof__PathsReply r;
	Kprof__PathBlock b[2], *bp[2];
	Kprof__PathStep st[4], *sp[4];
	Kprof__PathInfo p[3], *pp[3];
	Kprof__PathSeq q[2], *qp[2];
	uint64_t ids[5];
	uint64_t levels[3];
};

static void fill_paths(struct paths_fixture *x)
{
	static char term_fall[] = "fall", term_cond[] = "cond";

	memset(x, 0, sizeof(*x));
	kprof__paths_reply__init(&x->r);
	for (int i = 0; i < 2; i++) {
		kprof__path_block__init(&x->b[i]);
		x->bp[i] = &x->b[i];
	}
	x->b[0] = (Kprof__PathBlock)KPROF__PATH_BLOCK__INIT;
	x->b[0].start = 0x1000;
	x->b[0].end = 0x1010;
	x->b[0].insns = 4;
	x->b[0].entry = true;
	x->b[0].term = term_fall;
	x->b[1] = (Kprof__PathBlock)KPROF__PATH_BLOCK__INIT;
	x->b[1].start = 0x1010;
	x->b[1].end = 0x1020;
	x->b[1].insns = 3;
	x->b[1].loop_header = true;
	x->b[1].loop_depth = 1;
	x->b[1].term = term_cond;
	for (int i = 0; i < 4; i++) {
		kprof__path_step__init(&x->st[i]);
		x->sp[i] = &x->st[i];
	}
	/* path 0: B0 fall B1 back; path 1: B1 back; path 2: B1 exit (taken) */
	x->st[0].block = 0;
	x->st[0].edge = KPROF__PATH_EDGE__PATH_EDGE_FALL;
	x->st[1].block = 1;
	x->st[1].edge = KPROF__PATH_EDGE__PATH_EDGE_BACK;
	x->st[2].block = 1;
	x->st[2].edge = KPROF__PATH_EDGE__PATH_EDGE_BACK;
	x->st[3].block = 1;
	x->st[3].edge = KPROF__PATH_EDGE__PATH_EDGE_EXIT;
	for (int i = 0; i < 3; i++) {
		kprof__path_info__init(&x->p[i]);
		x->pp[i] = &x->p[i];
	}
	x->p[0].id = 1, x->p[0].count = 60, x->p[0].n_steps = 1, x->p[0].steps = &x->sp[2];
	x->p[1].id = 0, x->p[1].count = 20, x->p[1].n_steps = 2, x->p[1].steps = &x->sp[0];
	x->p[2].id = 2, x->p[2].count = 20, x->p[2].n_steps = 1, x->p[2].steps = &x->sp[3];
	x->ids[0] = 1, x->ids[1] = 1, x->ids[2] = 0, x->ids[3] = 1, x->ids[4] = 2;
	for (int i = 0; i < 2; i++) {
		kprof__path_seq__init(&x->q[i]);
		x->qp[i] = &x->q[i];
	}
	x->q[0].n_ids = 2, x->q[0].ids = &x->ids[0], x->q[0].count = 40;
	x->q[1].n_ids = 3, x->q[1].ids = &x->ids[2], x->q[1].count = 20;
	x->levels[0] = 100, x->levels[1] = 80, x->levels[2] = 40;
	x->r.function = "mj_paths";
	x->r.start = 0x1000;
	x->r.size = 0x20;
	x->r.k = 3;
	x->r.state = KPROF__PATHS_STATE__PATHS_STATE_DONE;
	x->r.end_reason = "budget";
	x->r.n_blocks = 2, x->r.blocks = x->bp;
	x->r.n_paths = 3, x->r.paths = x->pp;
	x->r.n_sequences = 2, x->r.sequences = x->qp;
	x->r.n_level_sums = 3, x->r.level_sums = x->levels;
	x->r.num_paths = 3;
	x->r.loops = 1;
	x->r.probes = 2;
	x->r.activations = 20;
	x->r.path_events = 100;
	x->r.probe_hits = 180;
	x->r.traced_ns = 1500000000;
	x->r.paths_total = 3;
	x->r.sequences_total = 7;
}

/* System-wide mode (attach --all): status says where the set's samples went, as text and
 * JSON; list says it is on and marks its targets. */
static void test_system_wide(void **state)
{
	Kprof__StatusReply r;
	Kprof__SystemWide w = KPROF__SYSTEM_WIDE__INIT;
	Kprof__ListReply lr = KPROF__LIST_REPLY__INIT;
	Kprof__Target t, *tp = &t;
	uint64_t drops[3];
	uint32_t freqs[2];
	char *s;

	(void)state;
	fill_status(&r, drops, freqs);
	w.on = true;
	w.freq_hz = 19;
	w.cpus = 2;
	w.targets = 3;
	w.profiled = 5;
	w.refused = 2;
	w.refused_samples = 7;
	w.gone = 4;
	w.gone_samples = 6;
	w.kernel_samples = 11;
	w.idle_samples = 100;
	w.self_samples = 1;
	w.runs = 300;
	w.samples = 175;
	w.evicted = 2;
	r.system_wide = &w;
	s = status(&r, false);
	assert_non_null(strstr(s, "system-wide: on, 19 Hz on 2 CPUs (attach --all): 3 processes"));
	assert_non_null(strstr(s, "300 sampler runs: 5 processes profiled, 175 samples"));
	assert_non_null(strstr(s, "2 processes refused by a limit (7 samples;"));
	assert_non_null(strstr(s, "4 gone before read (6 samples)"));
	assert_non_null(strstr(s, "kernel threads 11, idle 100, kprofd 1,"));
	assert_non_null(strstr(s, "2 idle targets detached to make room at a limit"));
	assert_null(strstr(s, "off-CPU time"));
	free(s);
	s = status(&r, true);
	assert_non_null(strstr(s, ",\"watches\":[],\"system_wide\":{\"on\":true,\"freq_hz\":19,"));
	assert_non_null(strstr(s, "\"runs\":300,\"own_samples\":0,\"drops\":0,\"evicted\":2,"
				  "\"off_cpu\":false,\"waiters\":0},\"window_sec\":"));
	free(s);
	/* attach --all --off-cpu: the processes that came by their waits */
	w.off_cpu = true;
	w.waiters = 4;
	s = status(&r, false);
	assert_non_null(strstr(s,
			       "with off-CPU time (--off-cpu): 4 of those made targets when they "
			       "left a CPU"));
	free(s);
	s = status(&r, true);
	assert_non_null(strstr(s, "\"off_cpu\":true,\"waiters\":4}"));
	free(s);
	/* Off, never started: nothing said. */
	w = (Kprof__SystemWide)KPROF__SYSTEM_WIDE__INIT;
	s = status(&r, false);
	assert_null(strstr(s, "system-wide"));
	free(s);

	fill_target(&t);
	t.all = true;
	w.on = true;
	w.freq_hz = 19;
	w.targets = 1;
	lr.targets = &tp;
	lr.n_targets = 1;
	lr.system_wide = &w;
	s = list(&lr, false);
	assert_non_null(strstr(s, "system-wide sampling on (attach --all): 19 Hz, 1 processes"));
	assert_non_null(strstr(s, " --all\n"));
	free(s);
	s = list(&lr, true);
	assert_non_null(strstr(s, "\"all\":true,\"resumes\":0,\"resume_note\":\"\",\"memory_"
				  "bytes\":0,\"drift_bytes\":0}],\"system_wide\":{\"on\":true,"));
	free(s);
}

static char *paths(const Kprof__PathsReply *r, bool json)
{
	struct capture c;

	render_paths(cap_open(&c), r, json);
	return cap_close(&c);
}

/* kprofctl paths: with the events and the structural profile (render_spp.c). */
static char *paths_ex(const Kprof__PathsReply *r, bool json)
{
	struct capture c;

	render_paths_ex(cap_open(&c), r, json, true);
	return cap_close(&c);
}

static void test_paths_text(void **state)
{
	struct paths_fixture x;
	char *s;

	(void)state;
	fill_paths(&x);
	s = paths(&x.r, false);
	assert_non_null(strstr(s, "Paths of mj_paths at 0x1000-0x1020: 2 blocks, 1 loop, 3 acyclic "
				  "paths; k = 3\n"));
	assert_non_null(strstr(s, "Traced 1.50 s (ended: budget), 2 probes: 20 activations, 100 "
				  "paths, 180 probe hits\n"));
	assert_non_null(strstr(s, "too little CPU time"));
	assert_non_null(strstr(s, "  B0   0x1000-0x1010    4 insns  fall     entry\n"));
	assert_non_null(
	    strstr(s, "  B1   0x1010-0x1020    3 insns  cond     loop header (depth 1)\n"));
	assert_non_null(strstr(s, "        60  60.00%  #1    B1:back\n"));
	assert_non_null(strstr(s, "        20  20.00%  #0    B0:fall B1:back\n"));
	/* sequences: percent of the occurrences of their own length; each path spelled out */
	assert_non_null(strstr(s, "        40  50.00%    2  #1 > #1\n"));
	assert_non_null(strstr(s, "        20  50.00%    3  #0 > #1 > #2\n"
				  "                          #0    B0:fall B1:back\n"
				  "                          #1    B1:back\n"
				  "                          #2    B1:exit\n"));
	assert_null(strstr(s, "Lost:"));
	free(s);

	/* an estimate, losses, lower bounds; k = 1 has no sequence section */
	x.r.slowdown = 2.5;
	x.r.kernel_share_before = 0.1;
	x.r.kernel_share_during = 0.64;
	x.r.probe_hits = 90000;
	x.r.hits_per_s = 9000;
	x.r.hit_cost_ns = 13900;
	x.r.cost_kind = "hardware breakpoint";
	x.r.lost_events = 3;
	x.r.max_error = 7;
	x.r.pruned_items = 9;
	x.r.k = 1;
	s = paths(&x.r, false);
	assert_non_null(
	    strstr(s, "Cost: 90000 probe hits (9000/s), 13.9 us of CPU time each (a hardware "
		      "breakpoint, measured on this host): about 2.50x slower over the "
		      "trace (CPU time per unit of work)\n"));
	assert_non_null(strstr(s, "Budget: none (--max-slowdown 0, or kprofd's probe_slowdown_pct "
				  "0): the probes stayed in all the time\n"));
	assert_non_null(strstr(s, "Lost: 3 events"));
	assert_non_null(strstr(s, "short by at most 7 (k-SF node budget reached: 9 items pruned)"));
	assert_null(strstr(s, "Hottest multi-iteration"));
	free(s);

	/* the default budget, kept by taking the probes off: its duty, its cost in coverage */
	x.r.slowdown = 1.09;
	x.r.hidden_hits = 1200;
	x.r.max_slowdown = 1.1;
	x.r.max_slowdown_default = true;
	x.r.budget_offs = 3;
	x.r.duty = 0.042;
	x.r.budget_off = true;
	s = paths(&x.r, false);
	assert_non_null(strstr(s, "Cost: 90000 probe hits (9000/s) and about 1200 more while the "
				  "kernel removed them, 13.9 us"));
	assert_non_null(strstr(
	    s,
	    "Budget: at most 1.10x slower over the trace (kprofd's default; --max-slowdown X for "
	    "more, 0 for none): the probes went off 3 times to keep it, and back once the "
	    "target's work had paid for them: in 4.2% of the time traced, which is what the "
	    "counts cover (the budget's cost in coverage); off at the end\n"));
	assert_null(strstr(s, "Over the budget"));
	free(s);
	/* over it: said so */
	x.r.slowdown = 1.4;
	x.r.budget_off = false;
	x.r.max_slowdown_default = false;
	s = paths(&x.r, false);
	assert_non_null(strstr(s, "(--max-slowdown): the probes went off 3 times"));
	assert_non_null(strstr(s, "Over the budget: one stretch of probes"));
	free(s);
}

static void test_paths_json(void **state)
{
	struct paths_fixture x;
	char *s;

	(void)state;
	fill_paths(&x);
	s = paths(&x.r, true);
	assert_true(json_balanced(s));
	assert_non_null(
	    strstr(s, "{\"target\":null,\"function\":\"mj_paths\",\"start\":4096,"
		      "\"size\":32,\"k\":3,\"state\":\"done\",\"end_reason\":\"budget\","));
	assert_non_null(strstr(s, "\"level_sums\":[100,80,40],\"blocks\":[{\"index\":0,"
				  "\"start\":4096,\"end\":4112,\"insns\":4,\"entry\":true,"
				  "\"loop_header\":false,\"loop_depth\":0,\"term\":\"fall\"},"));
	assert_non_null(strstr(
	    s, "{\"id\":0,\"count\":20,\"percent\":20.0000,\"for_sequences\":false,\"blocks\":["
	       "{\"block\":0,\"start\":4096,\"end\":4112,\"edge\":\"fall\"},"
	       "{\"block\":1,\"start\":4112,\"end\":4128,\"edge\":\"back\"}]}"));
	/* sequences of every length: the paths first, then 2..k */
	assert_non_null(
	    strstr(s, "\"sequences\":[{\"count\":60,\"percent\":60.0000,\"paths\":[1]},"
		      "{\"count\":20,\"percent\":20.0000,\"paths\":[0]},"
		      "{\"count\":20,\"percent\":20.0000,\"paths\":[2]},"
		      "{\"count\":40,\"percent\":50.0000,\"paths\":[1,1]},"
		      "{\"count\":20,\"percent\":50.0000,\"paths\":[0,1,2]}],\"hw\":false,"));
	assert_null(strstr(s, "nan"));
	assert_null(strstr(s, "\"spp\""));
	free(s);

	/* Events and a structural profile: names with the counts, graphs and paths. */
	{
		static char *names[] = {"insns", "cond_\"x"};
		uint64_t ev[] = {30, 4}, lc[] = {20, 3};
		int32_t nodes[] = {0, -1, 2}, whole[] = {0, 1, 2};
		Kprof__LoopEvents le = KPROF__LOOP_EVENTS__INIT, *lp = &le;
		Kprof__SppGraph g0 = KPROF__SPP_GRAPH__INIT, g1 = KPROF__SPP_GRAPH__INIT;
		Kprof__SppGraph *gp[] = {&g0, &g1};
		Kprof__SppPath sp = KPROF__SPP_PATH__INIT, *spp_p = &sp;
		Kprof__SppReply spp = KPROF__SPP_REPLY__INIT;

		le.header = 1;
		le.depth = 1;
		le.n_counts = 2;
		le.counts = lc;
		x.r.n_event_names = 2;
		x.r.event_names = names;
		x.r.n_events = 2;
		x.r.events = ev;
		x.r.n_loop_events = 1;
		x.r.loop_events = &lp;
		g0.header = -1;
		g0.parent = -1;
		g0.state = "finished";
		g0.coefficient = 1;
		g1.header = 1;
		g1.level = 1;
		g1.state = "cold";
		sp.n_nodes = 3;
		sp.nodes = nodes;
		sp.n_whole = 3;
		sp.whole = whole;
		sp.local = 5;
		sp.global = 5;
		spp.budget = 10;
		spp.overlap = 91.5;
		spp.flat_overlap = 80;
		spp.n_graphs = 2;
		spp.graphs = gp;
		spp.n_paths = 1;
		spp.paths = &spp_p;
		x.r.spp = &spp;
		s = paths_ex(&x.r, true);
		assert_true(json_balanced(s));
		assert_non_null(
		    strstr(s, "\"event_names\":[\"insns\",\"cond_\\\"x\"],\"events\":"
			      "{\"insns\":30,\"cond_\\\"x\":4},\"loop_events\":[{\"header\":1,"));
		assert_non_null(strstr(s, "\"overlap\":91.5000,\"flat_overlap\":80.0000"));
		assert_non_null(strstr(s, "\"nodes\":[0,-1,2],\"whole\":[0,1,2]}]}}\n"));
		free(s);
		s = paths_ex(&x.r, false);
		assert_non_null(strstr(s, "  insns                   30            20\n"));
		assert_non_null(strstr(s, "  cond_\"x                  4             3\n"));
		assert_non_null(
		    strstr(s, "Overlap with the complete trace (0 local paths): 91.5%"));
		assert_non_null(strstr(s, "outline    E B0 [L@B1] B2 X  => B0 B1 B2"));
		free(s);
		x.r.spp = NULL;
		x.r.n_event_names = x.r.n_events = x.r.n_loop_events = 0;
	}

	/* empty trace: still valid JSON, no division by zero */
	x.r.n_paths = 0;
	x.r.n_sequences = 0;
	x.r.n_blocks = 0;
	x.levels[0] = x.levels[1] = x.levels[2] = 0;
	x.r.state = KPROF__PATHS_STATE__PATHS_STATE_TRACING;
	s = paths(&x.r, true);
	assert_true(json_balanced(s));
	assert_non_null(strstr(s, "\"state\":\"tracing\""));
	assert_non_null(strstr(s, "\"blocks\":[],\"paths\":[],\"edge_profile\":false,"
				  "\"edges\":[],\"sequences\":[],\"hw\":false,"));
	free(s);
	s = paths_ex(&x.r, true);
	assert_true(json_balanced(s));
	assert_non_null(strstr(s, "\"sequences\":[],\"hw\":false,"));
	assert_non_null(strstr(s, "\"event_names\":[],\"events\":{},"
				  "\"loop_events\":[],\"block_events\":[]}\n"));
	free(s);
}

/* Too many paths to number: the edges with their counts, an exit as "to": null. */
static void test_paths_edges(void **state)
{
	struct paths_fixture x;
	Kprof__EdgeCount e[2], *ep[2] = {&e[0], &e[1]};
	char *s;

	(void)state;
	fill_paths(&x);
	kprof__edge_count__init(&e[0]);
	kprof__edge_count__init(&e[1]);
	e[0].from = 0, e[0].to = 1, e[0].kind = KPROF__PATH_EDGE__PATH_EDGE_FALL, e[0].count = 20;
	e[1].from = 1, e[1].exit = true, e[1].kind = KPROF__PATH_EDGE__PATH_EDGE_EXIT;
	e[1].count = 19;
	x.r.edge_profile = true;
	x.r.n_edges = 2, x.r.edges = ep;
	x.r.n_paths = x.r.n_sequences = 0;
	s = paths(&x.r, true);
	assert_true(json_balanced(s));
	assert_non_null(
	    strstr(s, "\"edge_profile\":true,\"edges\":["
		      "{\"from\":0,\"to\":1,\"exit\":false,\"kind\":\"fall\",\"count\":20},"
		      "{\"from\":1,\"to\":null,\"exit\":true,\"kind\":\"exit\",\"count\":19}],"));
	free(s);
	s = paths(&x.r, false);
	assert_non_null(
	    strstr(s, "2 blocks, 1 loop, too many acyclic paths to number: edge profile\n"));
	assert_non_null(strstr(s, "        20  B0 -fall-> B1\n        19  B1 -exit-> exit\n"));
	assert_null(strstr(s, "Ball-Larus"));
	free(s);
}

/* Every other renderer on hostile strings: status, list, hcct, paths (text and JSON). */
#define EVIL "\x1b]52;c;aGk=\x07\xc2\x9b\x9b\xff\xc3\xa9\n"
static void test_renderers_hostile(void **state)
{
	static char evil[] = EVIL;
	Kprof__StatusReply st;
	Kprof__ListReply lr = KPROF__LIST_REPLY__INIT;
	Kprof__HcctReply hr = KPROF__HCCT_REPLY__INIT;
	Kprof__HcctNode hn = KPROF__HCCT_NODE__INIT, *hnp = &hn;
	Kprof__Target t, *tp = &t;
	Kprof__EdgeCount e = KPROF__EDGE_COUNT__INIT, *ep = &e;
	struct paths_fixture x;
	uint64_t drops[3];
	uint32_t freqs[2];
	struct capture c;
	char *s;

	(void)state;
	fill_status(&st, drops, freqs);
	st.version = evil;
	fill_target(&t);
	t.comm = evil;
	t.perfmap_path = evil;
	lr.n_targets = 1;
	lr.targets = &tp;
	hn.function = evil;
	hn.module = evil;
	hn.depth = 1;
	hn.count = 5;
	hn.monitored = true;
	hn.hot = true;
	hr.target = &t;
	hr.n_nodes = 1;
	hr.nodes = &hnp;
	hr.n = 5;
	fill_paths(&x);
	x.r.function = evil;
	x.r.end_reason = evil;
	x.b[0].term = evil;
	for (int json = 0; json < 2; json++) {
		FILE *f = cap_open(&c);

		render_status(f, &st, json);
		render_list(f, &lr, json);
		render_target_line(f, &t);
		render_hcct(f, &hr, json, false);
		render_paths(f, &x.r, json);
		x.r.edge_profile = true;
		x.r.n_edges = 1;
		x.r.edges = &ep;
		render_paths(f, &x.r, json);
		x.r.edge_profile = false;
		x.r.n_edges = 0;
		s = cap_close(&c);
		assert_true(clean_text(s, true));
		if (json) {
			assert_non_null(strstr(s, "\"version\":\"\\u001b]52;c;aGk=\\u0007\\u009b"
						  "\\ufffd\\ufffd\xc3\xa9\\n\""));
		} else {
			assert_non_null(strstr(s, "kprofd ?]52;c;aGk=????\xc3\xa9? (pid 77)"));
			assert_non_null(
			    strstr(s, "4242     0       ?]52;c;aGk=????\xc3\xa9? 1000   attached"));
			assert_non_null(strstr(s, "* ?]52;c;aGk=????\xc3\xa9?  (?]52;c;aGk=????"
						  "\xc3\xa9?)\n"));
			assert_non_null(strstr(s, "Paths of ?]52;c;aGk=????\xc3\xa9? at 0x1000"));
			assert_non_null(strstr(s, "(ended: ?]52;c;aGk=????\xc3\xa9?)"));
			assert_non_null(strstr(s, "4 insns  ?]52;c;aGk=????\xc3\xa9? entry\n"));
			assert_non_null(
			    strstr(s, "Edge profile: ?]52;c;aGk=????\xc3\xa9? has more"));
		}
		free(s);
	}
}

/* annotate's "Hottest blocks": each column under its header, however long the addresses. */
static void test_annotate_blocks(void **state)
{
	Kprof__AnnotateReply r = KPROF__ANNOTATE_REPLY__INIT;
	Kprof__AnnotateBlock b = KPROF__ANNOTATE_BLOCK__INIT, *bp = &b;
	uint32_t hot = 0;
	struct capture c;
	char *s, *h, *row;

	(void)state;
	b.start = 0x7f2a76d1f188;
	b.end = 0x7f2a76d1f1c0;
	b.self = 42;
	b.insns = 12345;
	r.self = 42;
	r.blocks = &bp;
	r.n_blocks = 1;
	r.hot_blocks = &hot;
	r.n_hot_blocks = 1;
	render_annotate(cap_open(&c), &r, false, 10);
	s = cap_close(&c);
	h = strstr(s, "Hottest blocks:\n");
	assert_non_null(h);
	h = strchr(h, '\n') + 1;
	row = strchr(h, '\n') + 1;
	/* INSNS ends where the count ends */
	assert_int_equal(strstr(h, "INSNS") + 5 - h, strstr(row, "12345") + 5 - row);
	assert_int_equal(strstr(h, "ADDRESSES") - h, strstr(row, "0x7f2a76d1f188") - row);
	free(s);
}

/* drift: a function whose window is empty (still learning) shows no window share, not 0%. */
static void test_drift_empty_window(void **state)
{
	Kprof__DriftReply r = KPROF__DRIFT_REPLY__INIT;
	Kprof__DriftFunction d = KPROF__DRIFT_FUNCTION__INIT, *dp = &d;
	Kprof__DriftKey k = KPROF__DRIFT_KEY__INIT, *kp = &k;
	struct capture c;
	char *s;

	(void)state;
	d.state = "learning";
	d.function = "mj_hot";
	d.reference_samples = 100;
	d.window_samples = 0;
	d.top_keys = &kp;
	d.n_top_keys = 1;
	k.key = "+0x10";
	k.reference = 0.47;
	r.functions = &dp;
	r.n_functions = 1;
	drift_render(cap_open(&c), &r, false);
	s = cap_close(&c);
	assert_non_null(strstr(s, " 47% ->    -  +0x10"));
	assert_null(strstr(s, "->   0%"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_balanced_checker),
	    cmocka_unit_test(test_json_string),
	    cmocka_unit_test(test_sanitize),
	    cmocka_unit_test(test_sanitize_lines),
	    cmocka_unit_test(test_json_hostile),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_target_line),
	    cmocka_unit_test(test_annotate_blocks),
	    cmocka_unit_test(test_drift_empty_window),
	    cmocka_unit_test(test_report_text),
	    cmocka_unit_test(test_report_names),
	    cmocka_unit_test(test_report_json),
	    cmocka_unit_test(test_text_control_chars),
	    cmocka_unit_test(test_list),
	    cmocka_unit_test(test_list_tree),
	    cmocka_unit_test(test_system_wide),
	    cmocka_unit_test(test_status_text),
	    cmocka_unit_test(test_status_json),
	    cmocka_unit_test(test_paths_text),
	    cmocka_unit_test(test_paths_json),
	    cmocka_unit_test(test_paths_edges),
	    cmocka_unit_test(test_renderers_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
