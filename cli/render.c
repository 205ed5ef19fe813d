// SPDX-License-Identifier: GPL-2.0-only
/* render.c: kprofctl's output: aligned text for people, JSON for scripts. This file holds what
 * every view shares: the sanitizer, JSON strings, names, and a target's line and JSON object; the
 * views of whole replies are beside it, one file per kind of reply: render_targets.c (list,
 * status), render_profile.c (report, hcct), render_paths.c and render_spp.c (paths),
 * render_annotate.c (annotate).
 *
 * Every function takes a decoded reply and a FILE; nothing here talks to the daemon, so
 * tests/unit/test_render.c checks the output on canned replies. Percentages are of the profile's
 * total samples.
 *
 * Strings from kprofd (names from targets' perf maps, comm, paths, error messages that quote
 * them) are hostile: a target picks its function names, and kprofctl often runs as root in a
 * terminal. Every such string goes through render_sanitize() before text output: it decodes
 * strict UTF-8 and writes '?' for every C0 control (TAB, CR and LF included), DEL and C1 control
 * (U+0080-U+009F, whose CSI and OSC a terminal may obey like ESC [ and ESC ]), and for every byte
 * that does not start a valid sequence (stray continuation bytes, raw 0x9B, overlong forms,
 * surrogates, code points above U+10FFFF, truncated sequences): one '?' per bad byte or
 * control code point. Valid printable UTF-8 passes unchanged. Text meant to have several lines
 * (folded stacks) goes through render_lines(), which keeps the newlines between the lines.
 * JSON strings are escaped per RFC 8259 with the same decoder: C0, DEL and C1 controls as
 * \u00XX, invalid bytes as \ufffd, so the output is valid UTF-8 JSON.
 *
 * Function names in text are shown short by default (render_names: cxxname_short, the whole
 * name where two names would look alike); --full-names and JSON keep them whole; pprof keeps
 * them whole in system_name, its Function.name short (proto/pprof.c).
 */
#include "render.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kprof/cleanup.h"
#include "kprof/pprof.h"
#include "kprof/cxxname.h"
#include "render_internal.h"

/* The length of the valid UTF-8 sequence at s (n bytes left), its code point in *cp; 0 if s
 * starts none: a continuation byte, C0/C1/F5-FF lead bytes, overlong forms, surrogates, code
 * points above U+10FFFF, a sequence cut short. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* C0, DEL and C1 controls: what a terminal acts on instead of showing. */
static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

size_t render_sanitize(FILE *f, const char *s, size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s, *run = p;
	size_t n = 0;

	if (!s)
		return 0;
	/* Clean bytes are written in runs: folded stacks and exports can be megabytes. */
	while (len && n < max) {
		uint32_t cp;
		size_t l = utf8_seq(p, len, &cp);

		if (!l || is_control(cp)) {
			fwrite(run, 1, p - run, f);
			fputc('?', f);
			l = l ? l : 1;
			run = p + l;
		}
		p += l;
		len -= l;
		n++;
	}
	fwrite(run, 1, p - run, f);
	return n;
}

void render_text(FILE *f, const char *s)
{
	if (s)
		render_sanitize(f, s, strlen(s), SIZE_MAX);
}

void render_reply_error(FILE *f, const Kprof__Reply *rep)
{
	/* The message may quote names from the target: sanitized. */
	fputs("kprofctl: ", f);
	render_text(f, rep->message && *rep->message ? rep->message : strerror(-rep->error));
	fputc('\n', f);
}

void render_json_lines(FILE *f, const char *key, Kprof__SavedLine *const *v, size_t n)
{
	if (!n)
		return;
	fprintf(f, ",\"%s\":[", key);
	for (size_t j = 0; j < n; j++) {
		fprintf(f, "%s{\"function\":", j ? "," : "");
		render_json_string(f, v[j]->function);
		fputs(",\"file\":", f);
		render_json_string(f, v[j]->file);
		fprintf(f, ",\"line\":%u}", v[j]->line);
	}
	fputc(']', f);
}

void render_lines(FILE *f, const char *s)
{
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		render_sanitize(f, s, len, SIZE_MAX);
		if (!nl)
			break;
		fputc('\n', f);
		s = nl + 1;
	}
}

char *render_sanitize_dup(const char *s, size_t max)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (s)
		render_sanitize(f, s, strlen(s), max);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void render_json_strn(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (s && len) {
		uint32_t cp;
		size_t l = utf8_seq(p, len, &cp);

		if (!l) {
			fputs("\\ufffd", f);
			l = 1;
		} else if (cp == '"') {
			fputs("\\\"", f);
		} else if (cp == '\\') {
			fputs("\\\\", f);
		} else if (cp == '\n') {
			fputs("\\n", f);
		} else if (cp == '\r') {
			fputs("\\r", f);
		} else if (cp == '\t') {
			fputs("\\t", f);
		} else if (is_control(cp)) {
			fprintf(f, "\\u%04x", (unsigned)cp);
		} else {
			fwrite(p, 1, l, f);
		}
		p += l;
		len -= l;
	}
	fputc('"', f);
}

void render_json_string(FILE *f, const char *s)
{
	render_json_strn(f, s, s ? strlen(s) : 0);
}

const char *render_plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

const char *render_state(Kprof__TargetState s)
{
	switch (s) {
	case KPROF__TARGET_STATE__TARGET_STATE_ATTACHED:
		return "attached";
	case KPROF__TARGET_STATE__TARGET_STATE_EXITED:
		return "exited";
	case KPROF__TARGET_STATE__TARGET_STATE_DETACHED:
		return "detached";
	default:
		return "unknown";
	}
}

const char *render_kind(Kprof__FrameKind k)
{
	return pprof_kind_name(k);
}

struct names_sort {
	const char *const *full;
	const char **shown;
};

static int cmp_shown(const void *a, const void *b, void *ctx)
{
	const struct names_sort *ns = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(ns->shown[x], ns->shown[y]);

	return c ? c : x < y ? -1 : x > y;
}

static unsigned columns;

int render_width(const char *s)
{
	_cleanup_free_ char *t = render_sanitize_dup(s ? s : "", SIZE_MAX);
	int n = 0;

	for (const char *p = t; p && *p; p++)
		n += (*p & 0xc0) != 0x80;
	return n;
}

void render_set_columns(unsigned cols)
{
	columns = cols;
}

unsigned render_columns(void)
{
	return columns;
}

/* k moved back (head) or on (tail) to the start of a UTF-8 character of t. */
static size_t char_start(const char *t, size_t k, bool on)
{
	while (k && (t[k] & 0xc0) == 0x80)
		k += on ? 1 : -1;
	return k;
}

void render_fit(FILE *f, const char *s, int w, bool pad)
{
	_cleanup_free_ char *t = render_sanitize_dup(s ? s : "", SIZE_MAX);
	const char *sp;
	size_t n, keep;

	if (!t || w <= 0)
		return;
	n = strlen(t); /* sanitized: '?' for every control and bad byte; UTF-8 counted as bytes */
	if (n <= (size_t)w || w < 6) {
		fprintf(f, "%.*s", (int)char_start(t, n < (size_t)w ? n : (size_t)w, false), t);
		for (; pad && n < (size_t)w; n++)
			fputc(' ', f);
		return;
	}
	sp = strchr(t, ' ');
	if (sp && (size_t)(sp - t) + 4 <= (size_t)w) { /* NAME ..END OF PATH */
		keep = w - (sp - t) - 3;
		fprintf(f, "%.*s ..%s", (int)(sp - t), t, t + char_start(t, n - keep, true));
	} else if (t[0] == '/' || t[0] == '[') { /* a path: its end names the file */
		fprintf(f, "..%s", t + char_start(t, n - (w - 2), true));
	} else {
		fprintf(f, "%.*s..", (int)char_start(t, w - 2, false), t);
	}
}

const char **render_names(const char *const *names, size_t n)
{
	size_t bytes = 0, *idx;
	const char **shown;
	char *p;

	for (size_t i = 0; i < n; i++)
		bytes += strlen(names[i] ? names[i] : "") + 1;
	if (n > (SIZE_MAX - bytes) / sizeof(*shown))
		return NULL;
	shown = malloc(n * sizeof(*shown) + bytes);
	idx = malloc(n * sizeof(*idx));
	if (!shown || !idx) {
		free(shown);
		free(idx);
		return NULL;
	}
	p = (char *)(shown + n);
	for (size_t i = 0; i < n; i++) {
		const char *full = names[i] ? names[i] : "";

		shown[i] = p;
		p += cxxname_short(full, p, strlen(full) + 1) + 1;
		idx[i] = i;
	}
	/* Names with one short form: if they are not all the same name, all are shown whole. */
	qsort_r(idx, n, sizeof(*idx), cmp_shown, &(struct names_sort){names, shown});
	for (size_t i = 0, j; i < n; i = j) {
		bool differ = false;

		for (j = i + 1; j < n && !strcmp(shown[idx[i]], shown[idx[j]]); j++)
			differ |= strcmp(names[idx[i]] ? names[idx[i]] : "",
					 names[idx[j]] ? names[idx[j]] : "") != 0;
		for (size_t k = i; differ && k < j; k++)
			shown[idx[k]] = names[idx[k]] ? names[idx[k]] : "";
	}
	free(idx);
	return shown;
}

/* What went wrong naming a target's code or keeping its samples: bad perf-map lines and
 * jitdump records, budgets spent, lost stacks. */
static void target_symbols_text(FILE *f, const Kprof__Target *t)
{
	if (t->perfmap_bad_lines)
		fprintf(f, ", %" PRIu64 " bad perf-map line%s", t->perfmap_bad_lines,
			render_plural(t->perfmap_bad_lines));
	if (t->jitdump_path && t->jitdump_path[0])
		fprintf(f, ", %" PRIu64 " from the jitdump", t->jitdump_symbols);
	if (t->jitdump_bad_records)
		fprintf(f, ", %" PRIu64 " bad jitdump record%s", t->jitdump_bad_records,
			render_plural(t->jitdump_bad_records));
	if (t->jitdump_problem && t->jitdump_problem[0]) {
		fputs(", jitdump ", f);
		put_text(f, t->jitdump_problem, 0);
	}
	if (t->symbols_refused)
		fprintf(f, ", %" PRIu64 " symbol source%s left out (symbol budget spent)",
			t->symbols_refused, render_plural(t->symbols_refused));
	if (t->save_failures)
		fprintf(f, ", saving failed %u time%s (retrying)", t->save_failures,
			render_plural(t->save_failures));
	if (t->samples_refused)
		fprintf(f, ", %" PRIu64 " sample%s dropped (profile memory budget spent)",
			t->samples_refused, render_plural(t->samples_refused));
	if (t->samples_cut)
		fprintf(f,
			", %" PRIu64 " sample%s with a new stack counted as [over budget] and "
			"their leaf (profile memory budget spent)",
			t->samples_cut, render_plural(t->samples_cut));
	if (t->samples_before_exec)
		fprintf(f, ", %" PRIu64 " sample%s before its exec not counted (from its exec)",
			t->samples_before_exec, render_plural(t->samples_before_exec));
	if (t->lost_stacks)
		fprintf(f, ", %" PRIu64 " sample%s lost (stack table full)", t->lost_stacks,
			render_plural(t->lost_stacks));
}

/* A target's threads, how it came to be one (parent, cgroup, rule, attach --all), its
 * children, and a HotSpot JVM's perf map. */
static void target_origin_text(FILE *f, const Kprof__Target *t)
{
	if (t->thread_events)
		fprintf(f, ", %u thread event%s", t->thread_events,
			t->thread_events == 1 ? "" : "s");
	if (t->threads_unsampled)
		fprintf(f, ", %u threads not sampled (thread event limit reached)",
			t->threads_unsampled);
	if (t->parent)
		fprintf(f, ", child of %u", t->parent);
	if (t->cgroup && t->cgroup[0]) {
		fputs(", in ", f);
		put_text(f, t->cgroup, 0);
	}
	if (t->rule && t->rule[0]) {
		fputs(", rule ", f);
		put_text(f, t->rule, 0);
	}
	if (t->all)
		fputs(", by attach --all", f);
	if (t->resumes)
		fprintf(f, ", attached again after %u kprofd restart%s (profile continued)",
			t->resumes, render_plural(t->resumes));
	if (t->resume_note && t->resume_note[0]) {
		fputs(", ", f);
		put_text(f, t->resume_note, 0);
	}
	if (t->children)
		fprintf(f, ", following its children (%u followed, %u not)", t->children_followed,
			t->children_refused);
	if (t->jvm) {
		fprintf(f, "; HotSpot JVM: perf map asked %u time%s, %u answered", t->jvm_map_asks,
			render_plural(t->jvm_map_asks), t->jvm_map_answers);
		if (t->jvm_map_failures)
			fprintf(f, ", %u failed", t->jvm_map_failures);
		if (t->jvm_note && t->jvm_note[0]) {
			fputs(" (", f);
			put_text(f, t->jvm_note, 0);
			fputc(')', f);
		}
	}
}

/* A rate with a k/M suffix ("45.1k"). */
static void put_rate(FILE *f, double r)
{
	if (r >= 1e6)
		fprintf(f, "%.1fM", r / 1e6);
	else if (r >= 1e4)
		fprintf(f, "%.1fk", r / 1e3);
	else
		fprintf(f, "%.0f", r);
}

/* One probing mode's cost: "N probe hits/s at X us a hit (KIND): S slower, budget M (...)". */
static void cost_text(FILE *f, double hits_per_s, uint64_t hit_ns, const char *kind,
		      double slowdown, double max, bool max_default, const char *max_opt)
{
	put_rate(f, hits_per_s);
	fputs(" probe hits/s", f);
	if (hit_ns)
		fprintf(f, " at %.2f us a hit (%s, measured here)", hit_ns / 1e3,
			kind ? kind : "?");
	if (slowdown > 0)
		fprintf(f, ": %.2fx%s slower", slowdown, slowdown >= 100 ? " or more" : "");
	else if (hit_ns)
		fputs(": slowdown not known yet", f);
	else
		fputs(" (a hit's cost could not be measured: no slowdown)", f);
	if (max > 0)
		fprintf(f, ", budget %.2fx (%s)", max, max_default ? "kprofd's default" : max_opt);
	else
		fputs(", no budget", f);
}

/* What a budget did: the times it took the probes off, the part of the time they were in. */
static void budget_text(FILE *f, uint64_t offs, const char *what, double duty, bool off)
{
	if (offs)
		fprintf(f,
			"; the budget took the probes off %" PRIu64
			" time%s: %s %.0f%% of the time%s",
			offs, render_plural(offs), what, 100.0 * duty, off ? " (off now)" : "");
}

/* Exact mode's cost, and what its budget did. */
static void exact_cost_text(FILE *f, const Kprof__Target *t)
{
	cost_text(f, t->calls_hits_per_s, t->calls_hit_cost_ns, t->calls_cost_kind,
		  t->calls_slowdown, t->calls_max_slowdown, t->calls_max_slowdown_default,
		  "attach --max-slowdown");
	budget_text(f, t->calls_budget_offs, "calls counted", t->calls_duty, t->calls_budget_off);
}

/* Exact mode's call events lost on the way and left out of its tree meanwhile, if any. */
static void exact_lost_text(FILE *f, const Kprof__Target *t)
{
	if (t->call_events_lost || t->call_events_skipped)
		fprintf(f,
			" (%" PRIu64 " lost: ring buffer full; %" PRIu64
			" left out of the exact tree until their thread was back where its context "
			"was known)",
			t->call_events_lost, t->call_events_skipped);
}

void render_probe_costs(FILE *f, const Kprof__Target *t, const char *lead)
{
	if (t->calls && (t->calls_hits || t->calls_hit_cost_ns)) {
		fprintf(f, "%sexact mode: ", lead);
		exact_cost_text(f, t);
		if (t->call_events_lost || t->call_events_skipped)
			fprintf(f, "; %" PRIu64 " call events", t->call_events);
		exact_lost_text(f, t);
		fputc('\n', f);
	}
	if (t->paths_function && t->paths_function[0]) {
		fprintf(f, "%spaths ", lead);
		put_text(f, t->paths_function, 0);
		fprintf(f, " (%s): ", t->paths_mode ? t->paths_mode : "?");
		cost_text(f, t->paths_hits_per_s, t->paths_hit_cost_ns, t->paths_cost_kind,
			  t->paths_slowdown, t->paths_max_slowdown, t->paths_max_slowdown_default,
			  "paths --max-slowdown");
		budget_text(f, t->paths_budget_offs, "paths traced", t->paths_duty,
			    t->paths_budget_off);
		fputc('\n', f);
	}
}

/* Exact mode (attach --calls): probes, call events, bursts, hardware breakpoints. */
static void target_exact_text(FILE *f, const Kprof__Target *t)
{
	if (t->calls) {
		fprintf(f, "; exact mode: %u function%s probed, %" PRIu64 " call event%s",
			t->probes, render_plural(t->probes), t->call_events,
			render_plural(t->call_events));
		exact_lost_text(f, t);
		if (t->bursts) /* attach --burst: the probes come and go */
			fprintf(f, ", %" PRIu64 " burst%s, probes attached %.0f%% of the time",
				t->bursts, render_plural(t->bursts), 100.0 * t->calls_duty);
		if (t->calls_hot)
			fprintf(
			    f,
			    ", sampling first: the %u hottest JIT function%s sampled get counted",
			    t->calls_hot, render_plural(t->calls_hot));
		if (t->hw_functions)
			fprintf(f, ", %u in anonymous memory counted by hardware breakpoints (%s)",
				t->hw_functions,
				t->hw_estimated ? "estimated: they took turns" : "exact");
		if (t->hw_estimated)
			fprintf(f, ", each counted %.0f%% of the time", 100.0 * t->hw_covered);
		if (t->hw_stopped && t->hw_stopped[0]) {
			fputs("; breakpoints stopped: ", f);
			put_text(f, t->hw_stopped, 0);
		}
		if (t->calls_hits || t->calls_hit_cost_ns) {
			fputs("; ", f);
			exact_cost_text(f, t);
		}
	}
}

/* The time range of a profile built from kept windows (--since/--until). */
static void target_range_text(FILE *f, const Kprof__Target *t)
{
	if (t->windows) { /* a time range (--since/--until) */
		char a[32], b[32];
		time_t sa = t->window_start_ns / 1000000000ULL,
		       sb = t->window_end_ns / 1000000000ULL;
		struct tm ta, tb;

		strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", localtime_r(&sa, &ta));
		strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S", localtime_r(&sb, &tb));
		fprintf(f, "time range: %s to %s, %u window%s\n", a, b, t->windows,
			render_plural(t->windows));
	}
}

static void target_line(FILE *f, const Kprof__Target *t);

/* Lines of text (sanitized already) within the terminal's width: a longer line breaks after
 * its last ", " or "; " (else space) that fits, and goes on indented by two. */
static void put_flowed(FILE *f, const char *s)
{
	size_t w = columns;

	while (*s) {
		size_t n = strcspn(s, "\n"), cut = n;
		bool first = true;

		if (!n)
			fputc('\n', f);
		for (const char *l = s; n;) {
			if (!first)
				fputs("  ", f);
			cut = n;
			if (n > w - (first ? 0 : 2)) {
				size_t lim = w - (first ? 0 : 2);

				for (cut = lim; cut > lim / 3 && l[cut - 1] != ' '; cut--)
					;
				if (cut <= lim / 3)
					cut = lim;
			}
			fwrite(l, 1, cut, f);
			fputc('\n', f);
			l += cut;
			n -= cut;
			first = false;
		}
		s += strcspn(s, "\n");
		if (*s == '\n')
			s++;
	}
}

void render_target_line(FILE *f, const Kprof__Target *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (columns < 40 || !(m = open_memstream(&buf, &len))) {
		target_line(f, t);
		return;
	}
	target_line(m, t);
	fclose(m);
	put_flowed(f, buf);
	free(buf);
}

static void target_line(FILE *f, const Kprof__Target *t)
{
	fprintf(f, "pid %u (", t->pid);
	put_text(f, t->comm, 0);
	fprintf(f, ") uid %u: %s, %u Hz, %" PRIu64 " sample%s, %" PRIu64 " JIT symbol%s", t->uid,
		render_state(t->state), t->freq_hz, t->samples, render_plural(t->samples),
		t->jit_symbols + t->jitdump_symbols,
		render_plural(t->jit_symbols + t->jitdump_symbols));
	if (t->sessions > 1) /* the pid was attached before: which profile this is */
		fprintf(f, ", session %u of %u", t->session, t->sessions);
	if (t->state == KPROF__TARGET_STATE__TARGET_STATE_EXITED)
		fprintf(f, t->exit_code < 0 ? ", killed by signal %d" : ", exit status %d",
			t->exit_code < 0 ? -t->exit_code : t->exit_code);
	target_symbols_text(f, t);
	target_origin_text(f, t);
	if (t->named_late)
		fprintf(f, ", %" PRIu64 " function%s named late", t->named_late,
			render_plural(t->named_late));
	if (t->unresolved_dropped)
		fprintf(f, ", %" PRIu64 " unnamed frame%s kept by mapping (address limit reached)",
			t->unresolved_dropped, render_plural(t->unresolved_dropped));
	if (t->unnamed_note && t->unnamed_note[0]) {
		fputs("; unnamed code: ", f);
		put_text(f, t->unnamed_note, 0);
	}
	if (t->probe_samples)
		fprintf(f, "; %" PRIu64 " sample%s taken in probes ([kprof probes])",
			t->probe_samples, render_plural(t->probe_samples));
	target_exact_text(f, t);
	if (t->off_cpu) /* no count of intervals: a view of some threads (report --tid) */
		fprintf(f, ", off CPU %.3f s", t->off_cpu_ns / 1e9);
	if (t->off_cpu && t->off_cpu_intervals)
		fprintf(f, " in %" PRIu64 " interval%s", t->off_cpu_intervals,
			render_plural(t->off_cpu_intervals));
	fputc('\n', f);
	target_range_text(f, t);
}

void render_json_open_target(FILE *f, const Kprof__Target *t)
{
	fputs("{\"target\":", f);
	if (t)
		render_target_json(f, t);
	else
		fputs("null", f);
}

/* Exact mode's and a running path trace's costs (render_probe_costs in JSON), and exact mode's
 * events lost, left out of its tree and of a probe set not all in; each only with exact mode or
 * a trace, so that other targets' JSON stays as it was. */
static void calls_costs_json(FILE *f, const Kprof__Target *t)
{
	fprintf(
	    f,
	    ",\"calls_hits\":%" PRIu64 ",\"calls_hits_per_s\":%.1f,\"calls_hit_cost_ns\":%" PRIu64
	    ",\"calls_slowdown\":%.3f,\"calls_max_slowdown\":%.2f,\"calls_max_slowdown_default\":%s"
	    ",\"calls_budget_offs\":%" PRIu64 ",\"calls_budget_off\":%s,\"calls_cost_kind\":",
	    t->calls_hits, t->calls_hits_per_s, t->calls_hit_cost_ns, t->calls_slowdown,
	    t->calls_max_slowdown, t->calls_max_slowdown_default ? "true" : "false",
	    t->calls_budget_offs, t->calls_budget_off ? "true" : "false");
	render_json_string(f, t->calls_cost_kind ? t->calls_cost_kind : "");
	fprintf(f,
		",\"call_events_lost\":%" PRIu64 ",\"call_events_skipped\":%" PRIu64
		",\"call_events_outside\":%" PRIu64 ",\"unmatched_exits\":%" PRIu64,
		t->call_events_lost, t->call_events_skipped, t->call_events_outside,
		t->unmatched_exits);
}

static void paths_costs_json(FILE *f, const Kprof__Target *t)
{
	fputs(",\"paths_function\":", f);
	render_json_string(f, t->paths_function);
	fputs(",\"paths_mode\":", f);
	render_json_string(f, t->paths_mode ? t->paths_mode : "");
	fprintf(
	    f,
	    ",\"paths_hits\":%" PRIu64 ",\"paths_hits_per_s\":%.1f,\"paths_hit_cost_ns\":%" PRIu64
	    ",\"paths_slowdown\":%.3f,\"paths_max_slowdown\":%.2f,\"paths_max_slowdown_default\":%s"
	    ",\"paths_duty\":%.4f,\"paths_budget_offs\":%" PRIu64 ",\"paths_budget_off\":%s"
	    ",\"paths_cost_kind\":",
	    t->paths_hits, t->paths_hits_per_s, t->paths_hit_cost_ns, t->paths_slowdown,
	    t->paths_max_slowdown, t->paths_max_slowdown_default ? "true" : "false", t->paths_duty,
	    t->paths_budget_offs, t->paths_budget_off ? "true" : "false");
	render_json_string(f, t->paths_cost_kind ? t->paths_cost_kind : "");
}

void render_target_json(FILE *f, const Kprof__Target *t)
{
	fprintf(f, "{\"pid\":%u,\"uid\":%u,\"comm\":", t->pid, t->uid);
	render_json_string(f, t->comm);
	fprintf(f,
		",\"state\":\"%s\",\"freq_hz\":%u,\"samples\":%" PRIu64
		",\"attached_at_ns\":%" PRIu64 ",\"ended_at_ns\":%" PRIu64
		",\"duration_sec\":%u,\"exit_code\":%d,\"jit_symbols\":%" PRIu64
		",\"perfmap_bad_lines\":%" PRIu64 ",\"perfmap_path\":",
		render_state(t->state), t->freq_hz, t->samples, t->attached_at_ns, t->ended_at_ns,
		t->duration_sec, t->exit_code, t->jit_symbols, t->perfmap_bad_lines);
	render_json_string(f, t->perfmap_path);
	fprintf(f,
		",\"stacks\":%" PRIu64 ",\"lost_stacks\":%" PRIu64 ",\"truncated_stacks\":%" PRIu64
		",\"eps\":%g,\"calls\":%s,\"call_events\":%" PRIu64 ",\"bursts\":%" PRIu64
		",\"calls_duty\":%.3f,\"probes\":%u,\"symbols_refused\":%" PRIu64
		",\"save_failures\":%u,\"samples_refused\":%" PRIu64 ",\"samples_cut\":%" PRIu64
		",\"samples_before_exec\":%" PRIu64
		",\"session\":%u,\"sessions\":%u,\"jitdump_path\":",
		t->stacks, t->lost_stacks, t->truncated_stacks, t->eps, t->calls ? "true" : "false",
		t->call_events, t->bursts, t->calls_duty, t->probes, t->symbols_refused,
		t->save_failures, t->samples_refused, t->samples_cut, t->samples_before_exec,
		t->session, t->sessions);
	render_json_string(f, t->jitdump_path);
	fprintf(f,
		",\"jitdump_symbols\":%" PRIu64 ",\"jitdump_bad_records\":%" PRIu64
		",\"jitdump_bytes\":%" PRIu64 ",\"symbol_read_bytes\":%" PRIu64
		",\"symbol_read_deferred\":%" PRIu64 ",\"jitdump_problem\":",
		t->jitdump_symbols, t->jitdump_bad_records, t->jitdump_bytes, t->symbol_read_bytes,
		t->symbol_read_deferred);
	render_json_string(f, t->jitdump_problem);
	fprintf(f,
		",\"unnamed_leaf_samples\":%" PRIu64 ",\"unknown_samples\":%" PRIu64
		",\"jvm\":%s,\"jvm_map_asks\":%u,\"jvm_map_answers\":%u,\"jvm_map_failures\":%u,"
		"\"jvm_note\":",
		t->unnamed_leaf_samples, t->unknown_samples, t->jvm ? "true" : "false",
		t->jvm_map_asks, t->jvm_map_answers, t->jvm_map_failures);
	render_json_string(f, t->jvm_note ? t->jvm_note : "");
	fprintf(f,
		",\"thread_events\":%u,\"threads_unsampled\":%u,\"children\":%s,\"parent\":%u,"
		"\"children_followed\":%u,\"children_refused\":%u,\"unresolved_addresses\":%" PRIu64
		",\"unresolved_dropped\":%" PRIu64 ",\"named_late\":%" PRIu64 ",\"unnamed_note\":",
		t->thread_events, t->threads_unsampled, t->children ? "true" : "false", t->parent,
		t->children_followed, t->children_refused, t->unresolved_addresses,
		t->unresolved_dropped, t->named_late);
	render_json_string(f, t->unnamed_note ? t->unnamed_note : "");
	fputs(",\"cgroup\":", f);
	render_json_string(f, t->cgroup ? t->cgroup : "");
	fputs(",\"rule\":", f);
	render_json_string(f, t->rule ? t->rule : "");
	fprintf(f, ",\"calls_hot\":%u", t->calls_hot);
	fprintf(f, ",\"hw_functions\":%u,\"hw_estimated\":%s,\"hw_covered\":%.3f,\"hw_stopped\":",
		t->hw_functions, t->hw_estimated ? "true" : "false", t->hw_covered);
	render_json_string(f, t->hw_stopped ? t->hw_stopped : "");
	fprintf(f,
		",\"probe_samples\":%" PRIu64 ",\"annotate_bytes\":%" PRIu64
		",\"annotate_dropped\":%" PRIu64,
		t->probe_samples, t->annotate_bytes, t->annotate_dropped);
	fprintf(f, ",\"all\":%s", t->all ? "true" : "false");
	fprintf(f, ",\"resumes\":%u,\"resume_note\":", t->resumes);
	render_json_string(f, t->resume_note ? t->resume_note : "");
	fprintf(f, ",\"memory_bytes\":%" PRIu64 ",\"drift_bytes\":%" PRIu64, t->memory_bytes,
		t->drift_bytes);
	if (t->calls)
		calls_costs_json(f, t);
	if (t->paths_function && t->paths_function[0])
		paths_costs_json(f, t);
	if (t->off_cpu) /* attach --off-cpu: only then, so other targets' JSON stays as it was */
		fprintf(f,
			",\"off_cpu\":true,\"off_cpu_ns\":%" PRIu64
			",\"off_cpu_intervals\":%" PRIu64 ",\"off_cpu_lost_stacks\":%" PRIu64,
			t->off_cpu_ns, t->off_cpu_intervals, t->off_cpu_lost_stacks);
	fputc('}', f);
}
