// SPDX-License-Identifier: GPL-2.0-only
/* render.c: kprofctl's output: aligned text for people, JSON for scripts.
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
 * name where two names would look alike); --full-names, JSON and pprof keep them whole.
 */
#include "render.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "kprof/cleanup.h"
#include "kprof/pprof.h"
#include "kprof/cxxname.h"

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

/* The names of a reply's rows to show in text: NULL for the names whole (full_names, no memory),
 * else from render_names. get(r, i) is row i's name. */
static const char **row_names(const void *r, size_t n, const char *(*get)(const void *, size_t),
			      bool full_names)
{
	const char **names, **shown;

	if (full_names || !n)
		return NULL;
	names = malloc(n * sizeof(*names));
	if (!names)
		return NULL;
	for (size_t i = 0; i < n; i++)
		names[i] = get(r, i);
	shown = render_names(names, n);
	free(names);
	return shown;
}

static const char *report_name(const void *r, size_t i)
{
	return ((const Kprof__ReportReply *)r)->entries[i]->function;
}

static const char *hcct_name(const void *r, size_t i)
{
	return ((const Kprof__HcctReply *)r)->nodes[i]->function;
}

/* Print s left-justified in width columns (characters), through render_sanitize. */
static void put_text(FILE *f, const char *s, int width)
{
	size_t n = s ? render_sanitize(f, s, strlen(s), SIZE_MAX) : 0;

	for (; n < (size_t)width; n++)
		fputc(' ', f);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void render_target_line(FILE *f, const Kprof__Target *t)
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
	if (t->lost_stacks)
		fprintf(f, ", %" PRIu64 " sample%s lost (stack table full)", t->lost_stacks,
			render_plural(t->lost_stacks));
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
	if (t->calls) {
		fprintf(f, "; exact mode: %u function%s probed, %" PRIu64 " call event%s",
			t->probes, render_plural(t->probes), t->call_events,
			render_plural(t->call_events));
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
	}
	fputc('\n', f);
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
		",\"save_failures\":%u,\"samples_refused\":%" PRIu64
		",\"session\":%u,\"sessions\":%u,\"jitdump_path\":",
		t->stacks, t->lost_stacks, t->truncated_stacks, t->eps, t->calls ? "true" : "false",
		t->call_events, t->bursts, t->calls_duty, t->probes, t->symbols_refused,
		t->save_failures, t->samples_refused, t->session, t->sessions);
	render_json_string(f, t->jitdump_path);
	fprintf(f,
		",\"jitdump_symbols\":%" PRIu64 ",\"jitdump_bad_records\":%" PRIu64
		",\"jitdump_bytes\":%" PRIu64 ",\"jitdump_problem\":",
		t->jitdump_symbols, t->jitdump_bad_records, t->jitdump_bytes);
	render_json_string(f, t->jitdump_problem);
	fprintf(f,
		",\"unnamed_leaf_samples\":%" PRIu64
		",\"jvm\":%s,\"jvm_map_asks\":%u,\"jvm_map_answers\":%u,\"jvm_map_failures\":%u,"
		"\"jvm_note\":",
		t->unnamed_leaf_samples, t->jvm ? "true" : "false", t->jvm_map_asks,
		t->jvm_map_answers, t->jvm_map_failures);
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
	fprintf(f, ",\"memory_bytes\":%" PRIu64 ",\"drift_bytes\":%" PRIu64, t->memory_bytes,
		t->drift_bytes);
	fputc('}', f);
}

/* The parent of target i in r: the newest target of its parent pid attached no later than it,
 * or -1 (attached by a client, or its parent's profile is not in the list). */
static ssize_t list_parent(const Kprof__ListReply *r, size_t i)
{
	const Kprof__Target *t = r->targets[i];
	ssize_t best = -1;

	if (!t->parent)
		return -1;
	for (size_t j = 0; j < r->n_targets; j++) {
		const Kprof__Target *p = r->targets[j];

		if (j != i && p->pid == t->parent && p->attached_at_ns <= t->attached_at_ns &&
		    (best < 0 || p->attached_at_ns > r->targets[best]->attached_at_ns))
			best = (ssize_t)j;
	}
	return best;
}

/* Depth-first from r's order: each target, then the children it forked (attach --children).
 * False (keep r's order) when no target has a parent in the list. */
static bool list_tree(const Kprof__ListReply *r, size_t *order, unsigned *depth)
{
	size_t n = r->n_targets, k = 0;
	_cleanup_free_ ssize_t *parent = calloc(n, sizeof(*parent));
	_cleanup_free_ size_t *stack = calloc(n, sizeof(*stack));
	_cleanup_free_ bool *done = calloc(n, sizeof(*done));
	bool any = false;

	if (!parent || !stack || !done)
		return false;
	for (size_t i = 0; i < n; i++)
		any |= (parent[i] = list_parent(r, i)) >= 0;
	if (!any)
		return false;
	/* Roots in r's order; a loop of parents (equal times) is cut where it is first met. */
	for (size_t root = 0; root < n; root++) {
		size_t sp = 0;

		if (done[root] || parent[root] >= 0)
			continue;
		stack[sp++] = root;
		depth[root] = 0;
		while (sp) {
			size_t i = stack[--sp];

			if (done[i])
				continue;
			done[i] = true;
			order[k++] = i;
			/* Children pushed in reverse, so they come out in r's order. */
			for (size_t j = n; j-- > 0;)
				if (!done[j] && parent[j] == (ssize_t)i) {
					depth[j] = depth[i] + 1;
					stack[sp++] = j;
				}
		}
	}
	/* Left over: targets in a parent loop, shown at the top level. */
	for (size_t i = 0; i < n; i++)
		if (!done[i]) {
			depth[i] = 0;
			order[k++] = i;
		}
	return true;
}

/* System-wide mode (attach --all), as JSON. */
static void syswide_json(FILE *f, const Kprof__SystemWide *w)
{
	if (!w) {
		fputs("null", f);
		return;
	}
	fprintf(
	    f,
	    "{\"on\":%s,\"freq_hz\":%u,\"since_ns\":%" PRIu64 ",\"cpus\":%u,\"targets\":%u"
	    ",\"profiled\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"refused_samples\":%" PRIu64
	    ",\"gone\":%" PRIu64 ",\"gone_samples\":%" PRIu64 ",\"kernel_samples\":%" PRIu64
	    ",\"idle_samples\":%" PRIu64 ",\"self_samples\":%" PRIu64
	    ",\"foreign_samples\":%" PRIu64 ",\"taken_over\":%" PRIu64 ",\"kept_dropped\":%" PRIu64
	    ",\"samples\":%" PRIu64 ",\"late_samples\":%" PRIu64 ",\"runs\":%" PRIu64
	    ",\"own_samples\":%" PRIu64 ",\"drops\":%" PRIu64 ",\"evicted\":%" PRIu64 "}",
	    w->on ? "true" : "false", w->freq_hz, w->since_ns, w->cpus, w->targets, w->profiled,
	    w->refused, w->refused_samples, w->gone, w->gone_samples, w->kernel_samples,
	    w->idle_samples, w->self_samples, w->foreign_samples, w->taken_over, w->kept_dropped,
	    w->samples, w->late_samples, w->runs, w->own_samples, w->drops, w->evicted);
}

/* System-wide mode as status shows it: where every sample of its set went. */
static void syswide_text(FILE *f, const Kprof__SystemWide *w)
{
	if (!w || (!w->on && !w->since_ns))
		return;
	fprintf(f, "\nsystem-wide: %s, %u Hz on %u CPUs (attach --all): %u processes attached now",
		w->on ? "on" : "off (counts of its last run)", w->freq_hz, w->cpus, w->targets);
	fprintf(f,
		"\n             %" PRIu64 " sampler runs: %" PRIu64 " processes profiled, %" PRIu64
		" samples in their profiles; %" PRIu64 " in processes attached otherwise",
		w->runs, w->profiled, w->samples, w->own_samples);
	fprintf(f,
		"\n             no profile: %" PRIu64 " processes refused by a limit (%" PRIu64
		" samples; limits.max_auto_targets, max_targets), %" PRIu64
		" gone before read (%" PRIu64 " samples)",
		w->refused, w->refused_samples, w->gone, w->gone_samples);
	fprintf(f,
		"\n             counted only: kernel threads %" PRIu64 ", idle %" PRIu64
		", kprofd %" PRIu64 ", outside its PID namespace %" PRIu64 " samples",
		w->kernel_samples, w->idle_samples, w->self_samples, w->foreign_samples);
	if (w->evicted)
		fprintf(f,
			"\n             %" PRIu64 " idle targets detached to make room at a limit",
			w->evicted);
	if (w->taken_over || w->kept_dropped || w->late_samples)
		fprintf(f,
			"\n             %" PRIu64 " taken over by another attach, %" PRIu64
			" ended profiles dropped (limits.max_kept), %" PRIu64
			" samples after it stopped",
			w->taken_over, w->kept_dropped, w->late_samples);
}

void render_list(FILE *f, const Kprof__ListReply *r, bool json)
{
	if (json) {
		fputs("{\"targets\":[", f);
		for (size_t i = 0; i < r->n_targets; i++) {
			if (i)
				fputc(',', f);
			render_target_json(f, r->targets[i]);
		}
		fputc(']', f);
		if (r->system_wide) {
			fputs(",\"system_wide\":", f);
			syswide_json(f, r->system_wide);
		}
		fputs("}\n", f);
		return;
	}
	if (r->system_wide && r->system_wide->on)
		fprintf(
		    f,
		    "system-wide sampling on (attach --all): %u Hz, %u processes attached by it "
		    "(marked --all)\n",
		    r->system_wide->freq_hz, r->system_wide->targets);
	if (!r->n_targets) {
		fputs("no targets (kept profiles of ended ones: kprofctl list --all)\n", f);
		return;
	}
	_cleanup_free_ size_t *order = calloc(r->n_targets, sizeof(*order));
	_cleanup_free_ unsigned *depth = calloc(r->n_targets, sizeof(*depth));
	bool tree = order && depth && list_tree(r, order, depth);

	fprintf(f, "%-8s %-7s %-16s %-6s %-9s %6s %10s %8s %8s\n", "PID", "SESSION", "COMM", "UID",
		"STATE", "HZ", "SAMPLES", "JITSYMS", "THREADS");
	for (size_t k = 0; k < r->n_targets; k++) {
		size_t i = tree ? order[k] : k;
		const Kprof__Target *t = r->targets[i];
		char threads[32] = "-", pid[32];
		unsigned d = tree ? depth[i] : 0;

		/* Thread events while attached (per-thread sampling); "+N!" counts the threads
		 * left unsampled by a limit. */
		if (t->thread_events || t->threads_unsampled)
			snprintf(threads, sizeof(threads), t->threads_unsampled ? "%u+%u!" : "%u",
				 t->thread_events, t->threads_unsampled);
		/* A followed child under its parent: "`-PID", two columns further per level. */
		if (d)
			snprintf(pid, sizeof(pid), "%*s`-%u", (int)(2 * (d > 8 ? 8 : d) - 2), "",
				 t->pid);
		else
			snprintf(pid, sizeof(pid), "%u", t->pid);
		fprintf(f, "%-8s %-7u ", pid, t->session);
		put_text(f, t->comm, 16);
		fprintf(f, " %-6u %-9s %6u %10" PRIu64 " %8" PRIu64 " %8s%s\n", t->uid,
			render_state(t->state), t->freq_hz, t->samples,
			t->jit_symbols + t->jitdump_symbols, threads, t->all ? " --all" : "");
	}
	for (size_t i = 0; i < r->n_targets; i++)
		if (r->targets[i]->threads_unsampled)
			fprintf(
			    f,
			    "pid %u: %u threads not sampled: the thread event limit was reached "
			    "(kprofd.conf limits.max_threads, limits.max_thread_fds)\n",
			    r->targets[i]->pid, r->targets[i]->threads_unsampled);
}

void render_status(FILE *f, const Kprof__StatusReply *r, bool json)
{
	double cpu_per_sample = r->samples ? (double)r->cpu_ns / (double)r->samples : 0;
	double rate = isfinite(r->samples_per_sec) ? r->samples_per_sec : 0; /* JSON has no NaN */

	if (json) {
		fputs("{\"version\":", f);
		render_json_string(f, r->version);
		fprintf(f,
			",\"pid\":%u,\"uptime_ns\":%" PRIu64 ",\"targets_attached\":%u"
			",\"targets_kept\":%u,\"samples\":%" PRIu64 ",\"samples_per_sec\":%.1f"
			",\"drops\":%" PRIu64 ",\"drops_per_cpu\":[",
			r->pid, r->uptime_ns, r->targets_attached, r->targets_kept, r->samples,
			rate, r->drops);
		for (size_t i = 0; i < r->n_drops_per_cpu; i++)
			fprintf(f, "%s%" PRIu64, i ? "," : "", r->drops_per_cpu[i]);
		fprintf(f, "],\"bad_records\":%" PRIu64 ",\"ringbuf_bytes\":%u,\"frequencies\":[",
			r->bad_records, r->ringbuf_bytes);
		for (size_t i = 0; i < r->n_frequencies; i++)
			fprintf(f, "%s%u", i ? "," : "", r->frequencies[i]);
		fprintf(f,
			"],\"cpu_ns\":%" PRIu64 ",\"cpu_ns_per_sample\":%.0f,\"clients\":%u"
			",\"symbol_bytes\":%" PRIu64 ",\"symbol_refusals\":%" PRIu64
			",\"profile_bytes\":%" PRIu64 ",\"sampling\":",
			r->cpu_ns, cpu_per_sample, r->clients, r->symbol_bytes, r->symbol_refusals,
			r->profile_bytes);
		render_json_string(f, r->sampling);
		fprintf(f,
			",\"thread_events\":%u,\"sampler_runs\":%" PRIu64
			",\"threads_created\":%" PRIu64 ",\"thread_reports\":%" PRIu64
			",\"thread_reports_lost\":%" PRIu64 ",\"forks_lost\":%" PRIu64
			",\"watch_rules\":%u,\"auto_targets\":%u,\"max_auto_targets\":%u"
			",\"auto_refused\":%" PRIu64 ",\"watch_execs_lost\":%" PRIu64
			",\"watches\":[",
			r->thread_events, r->sampler_runs, r->threads_created, r->thread_reports,
			r->thread_reports_lost, r->forks_lost, r->watch_rules, r->auto_targets,
			r->max_auto_targets, r->auto_refused, r->watch_execs_lost);
		for (size_t i = 0; i < r->n_watches; i++) {
			const Kprof__Watch *w = r->watches[i];

			fputs(i ? ",{\"name\":" : "{\"name\":", f);
			render_json_string(f, w->name);
			fputs(",\"path\":", f);
			render_json_string(f, w->path);
			fprintf(f,
				",\"uid\":%u,\"attached\":%u,\"refused\":%u,\"since_ns\":%" PRIu64
				",\"waiting\":%s,\"restarts\":%u}",
				w->uid, w->attached, w->refused, w->since_ns,
				w->waiting ? "true" : "false", w->restarts);
		}
		fputc(']', f);
		if (r->system_wide) {
			fputs(",\"system_wide\":", f);
			syswide_json(f, r->system_wide);
		}
		fprintf(f,
			",\"window_sec\":%u,\"windows\":%" PRIu64 ",\"windows_in_memory\":%" PRIu64
			",\"window_memory_bytes\":%" PRIu64 ",\"window_disk_bytes\":%" PRIu64
			",\"windows_dropped\":%" PRIu64 ",\"windows_aged\":%" PRIu64
			",\"window_bad_files\":%" PRIu64 ",\"window_write_failures\":%" PRIu64
			",\"windows_unsaved\":%" PRIu64 ",\"range_queries\":%" PRIu64
			",\"range_sliced\":%" PRIu64 ",\"range_slices\":%" PRIu64 "}\n",
			r->window_sec, r->windows, r->windows_in_memory, r->window_memory_bytes,
			r->window_disk_bytes, r->windows_dropped, r->windows_aged,
			r->window_bad_files, r->window_write_failures, r->windows_unsaved,
			r->range_queries, r->range_sliced, r->range_slices);
		return;
	}
	fputs("kprofd ", f);
	render_text(f, r->version);
	fprintf(f, " (pid %u), up %.0f s\n", r->pid, r->uptime_ns / 1e9);
	fprintf(f, "targets:     %u attached, %u kept\n", r->targets_attached, r->targets_kept);
	fprintf(f, "samples:     %" PRIu64 " total, %.1f/s now\n", r->samples, r->samples_per_sec);
	fprintf(f, "drops:       %" PRIu64 " (ring buffer full)", r->drops);
	for (size_t i = 0; i < r->n_drops_per_cpu && r->drops; i++)
		fprintf(f, "%s cpu%zu=%" PRIu64, i ? "," : ":", i, r->drops_per_cpu[i]);
	fputc('\n', f);
	if (r->bad_records)
		fprintf(f, "bad records: %" PRIu64 "\n", r->bad_records);
	fprintf(f, "sampling:    ");
	if (!r->n_frequencies)
		fprintf(f, "idle");
	for (size_t i = 0; i < r->n_frequencies; i++)
		fprintf(f, "%s%u Hz", i ? ", " : "", r->frequencies[i]);
	if (r->sampling && !strcmp(r->sampling, "cpus"))
		fprintf(f, " (per-CPU events)");
	else if (r->sampling && r->sampling[0])
		fprintf(f, " (per-thread events: %u open)", r->thread_events);
	if (r->sampling && r->sampling[0]) {
		fprintf(f, "\nsampler:     %" PRIu64 " runs", r->sampler_runs);
		if (r->threads_created)
			fprintf(f,
				"; %" PRIu64 " threads created in targets, %" PRIu64
				" without an event (%" PRIu64 " reports lost)",
				r->threads_created, r->thread_reports, r->thread_reports_lost);
	}
	if (r->forks_lost)
		fprintf(f,
			"\nchildren:    %" PRIu64
			" not followed (BPF targets map or ring buffer full)",
			r->forks_lost);
	for (size_t i = 0; i < r->n_watches; i++) {
		fputs(i ? "\n             " : "\nwatching:    ", f);
		put_text(f, r->watches[i]->name, 0);
		if (strcmp(r->watches[i]->name, r->watches[i]->path)) {
			fputs(" (", f);
			put_text(f, r->watches[i]->path, 0);
			fputc(')', f);
		}
		fprintf(f, ", uid %u: %u processes attached, %u not", r->watches[i]->uid,
			r->watches[i]->attached, r->watches[i]->refused);
		if (r->watches[i]->restarts)
			fprintf(f, ", started again %u time%s", r->watches[i]->restarts,
				r->watches[i]->restarts == 1 ? "" : "s");
		if (r->watches[i]->waiting)
			fputs(" (stopped: waiting for it to start)", f);
	}
	if (r->watch_rules || r->auto_targets || r->auto_refused || r->watch_execs_lost) {
		fprintf(f,
			"\nrules:       %u watch rules; %u automatic targets of %u "
			"(limits.max_auto_targets), %" PRIu64 " refused by the bound",
			r->watch_rules, r->auto_targets, r->max_auto_targets, r->auto_refused);
		if (r->watch_execs_lost)
			fprintf(f, " (%" PRIu64 " execs lost: ring buffer full)",
				r->watch_execs_lost);
	}
	syswide_text(f, r->system_wide);
	fprintf(f, "\nring buffer: %u KiB\n", r->ringbuf_bytes / 1024);
	fprintf(f, "daemon CPU:  %.3f s (%.1f us per sample)\n", r->cpu_ns / 1e9,
		cpu_per_sample / 1e3);
	fprintf(f, "clients:     %u\n", r->clients);
	if (r->symbol_bytes || r->symbol_refusals)
		fprintf(f, "symbols:     %.1f MiB, %" PRIu64 " refused (budget spent)\n",
			r->symbol_bytes / 1048576.0, r->symbol_refusals);
	if (r->window_sec)
		fprintf(f,
			"windows:     %" PRIu64 " of %u s kept (%" PRIu64 " in memory, %.1f MiB; "
			"%.1f MiB on disk), %" PRIu64 " dropped by the bounds, %" PRIu64
			" aged out, %" PRIu64 " bad files, %" PRIu64 " failed writes (%" PRIu64
			" unsaved)\n",
			r->windows, r->window_sec, r->windows_in_memory,
			r->window_memory_bytes / 1048576.0, r->window_disk_bytes / 1048576.0,
			r->windows_dropped, r->windows_aged, r->window_bad_files,
			r->window_write_failures, r->windows_unsaved);
	if (r->range_queries)
		fprintf(f,
			"ranges:      %" PRIu64 " --since/--until profiles built, %" PRIu64
			" of them in %" PRIu64 " steps between other work\n",
			r->range_queries, r->range_sliced, r->range_slices);
}

void render_hcct(FILE *f, const Kprof__HcctReply *r, bool json, bool full_names)
{
	const char **shown;
	size_t hot = 0;

	for (size_t i = 0; i < r->n_nodes; i++)
		hot += r->nodes[i]->hot;
	if (json) {
		fputs("{\"target\":", f);
		if (r->target)
			render_target_json(f, r->target);
		else
			fputs("null", f);
		fprintf(f,
			",\"n\":%" PRIu64 ",\"phi\":%g,\"eps\":%g,\"threshold\":%" PRIu64
			",\"mcct_nodes\":%" PRIu64 ",\"mcct_bytes\":%" PRIu64 ",\"lost\":%" PRIu64
			",\"nodes\":[",
			r->n, r->phi, r->eps, r->threshold, r->mcct_nodes, r->mcct_bytes, r->lost);
		for (size_t i = 0; i < r->n_nodes; i++) {
			const Kprof__HcctNode *n = r->nodes[i];

			fprintf(f, "%s{\"function\":", i ? "," : "");
			render_json_string(f, n->function);
			fputs(",\"module\":", f);
			render_json_string(f, n->module);
			fprintf(
			    f,
			    ",\"kind\":\"%s\",\"count\":%" PRIu64 ",\"err\":%" PRIu64
			    ",\"pct\":%.2f,\"parent\":%d,\"depth\":%u,\"hot\":%s,\"monitored\":%s}",
			    render_kind(n->kind), n->count, n->err, pct(n->count, r->n), n->parent,
			    n->depth, n->hot ? "true" : "false", n->monitored ? "true" : "false");
		}
		fputs("]}\n", f);
		return;
	}
	if (r->target)
		render_target_line(f, r->target);
	fprintf(f,
		"HCCT: %" PRIu64 " sampled context%s, phi %g (hot: count >= %" PRIu64 "), eps %g; "
		"%zu hot context%s, %zu shown; MCCT %" PRIu64 " node%s, %" PRIu64 " KiB\n",
		r->n, render_plural(r->n), r->phi, r->threshold, r->eps, hot, render_plural(hot),
		r->n_nodes, r->mcct_nodes, render_plural(r->mcct_nodes), r->mcct_bytes / 1024);
	if (r->lost)
		fprintf(f, "%" PRIu64 " sample%s not taken (node cap or depth)\n", r->lost,
			render_plural(r->lost));
	fputs("\n   COUNT       %   +-ERR  CONTEXT  (* hot, . cold ancestor)\n", f);
	shown = row_names(r, r->n_nodes, hcct_name, full_names);
	for (size_t i = 0; i < r->n_nodes; i++) {
		const Kprof__HcctNode *n = r->nodes[i];

		if (n->monitored)
			fprintf(f, "%8" PRIu64 " %6.2f%% %7" PRIu64 "  ", n->count,
				pct(n->count, r->n), n->err);
		else
			fprintf(f, "%8s %7s %7s  ", "", "", "");
		for (uint32_t d = 1; d < n->depth; d++)
			fputs("  ", f);
		fputs(n->hot ? "* " : n->monitored ? "  " : ". ", f);
		put_text(f, shown ? shown[i] : n->function, 0);
		fputs("  (", f);
		put_text(f, n->module, 0);
		fputs(")\n", f);
	}
	free(shown);
}

void render_report(FILE *f, const Kprof__ReportReply *r, bool json, bool full_names)
{
	uint64_t n = r->total_samples;
	const char **shown;

	if (json) {
		fputs("{\"target\":", f);
		if (r->target)
			render_target_json(f, r->target);
		else
			fputs("null", f);
		fprintf(f, ",\"total_samples\":%" PRIu64 ",\"functions\":%u,\"entries\":[", n,
			r->functions);
		for (size_t i = 0; i < r->n_entries; i++) {
			const Kprof__FlatEntry *e = r->entries[i];

			fprintf(f, "%s{\"function\":", i ? "," : "");
			render_json_string(f, e->function);
			fputs(",\"module\":", f);
			render_json_string(f, e->module);
			fprintf(f,
				",\"kind\":\"%s\",\"self\":%" PRIu64 ",\"self_pct\":%.2f,"
				"\"total\":%" PRIu64 ",\"total_pct\":%.2f,\"address\":%" PRIu64
				",\"calls\":%" PRIu64 "}",
				render_kind(e->kind), e->self, pct(e->self, n), e->total,
				pct(e->total, n), e->address, e->calls);
		}
		fputs("]}\n", f);
		return;
	}
	if (r->target)
		render_target_line(f, r->target);
	fprintf(f, "%" PRIu64 " sample%s, %u function%s%s\n\n", n, render_plural(n), r->functions,
		render_plural(r->functions), r->n_entries < r->functions ? " (top shown)" : "");
	/* The CALLS column only when exact mode counted something. */
	bool calls = r->target && r->target->calls;

	fprintf(f, "%10s %7s %10s %7s  ", "SELF", "SELF%", "TOTAL", "TOTAL%");
	if (calls)
		fprintf(f, "%10s  ", "CALLS");
	fprintf(f, "%-7s %-40s %s\n", "KIND", "FUNCTION", "MODULE");
	shown = row_names(r, r->n_entries, report_name, full_names);
	for (size_t i = 0; i < r->n_entries; i++) {
		const Kprof__FlatEntry *e = r->entries[i];

		fprintf(f, "%10" PRIu64 " %6.2f%% %10" PRIu64 " %6.2f%%  ", e->self,
			pct(e->self, n), e->total, pct(e->total, n));
		if (calls)
			fprintf(f, "%10" PRIu64 "  ", e->calls);
		fprintf(f, "%-7s ", render_kind(e->kind));
		put_text(f, shown ? shown[i] : e->function, 40);
		fputc(' ', f);
		put_text(f, e->module, 0);
		fputc('\n', f);
	}
	free(shown);
}

/* ---- paths ---- */

static const char *edge_name(Kprof__PathEdge e)
{
	switch (e) {
	case KPROF__PATH_EDGE__PATH_EDGE_FALL:
		return "fall";
	case KPROF__PATH_EDGE__PATH_EDGE_TAKEN:
		return "taken";
	case KPROF__PATH_EDGE__PATH_EDGE_JUMP:
		return "jump";
	case KPROF__PATH_EDGE__PATH_EDGE_EXIT:
		return "exit";
	case KPROF__PATH_EDGE__PATH_EDGE_BACK:
		return "back";
	default:
		return "?";
	}
}

static const Kprof__PathInfo *path_find(const Kprof__PathsReply *r, uint64_t id)
{
	for (size_t i = 0; i < r->n_paths; i++)
		if (r->paths[i]->id == id)
			return r->paths[i];
	return NULL;
}

static uint64_t level_sum(const Kprof__PathsReply *r, size_t len)
{
	return len >= 1 && len <= r->n_level_sums ? r->level_sums[len - 1] : 0;
}

/* Anonymous code: the branches, the followed loops, what was not covered. */
static void paths_hw_json(FILE *f, const Kprof__PathsReply *r)
{
	fprintf(f, ",\"hw\":%s,\"hw_stray\":%" PRIu64 ",\"hw_turn\":", r->hw ? "true" : "false",
		r->hw_stray);
	render_json_string(f, r->hw_turn ? r->hw_turn : "");
	fputs(",\"hw_stopped\":", f);
	render_json_string(f, r->hw_stopped ? r->hw_stopped : "");
	fputs(",\"branches\":[", f);
	for (size_t i = 0; i < r->n_branches; i++) {
		const Kprof__BranchCount *b = r->branches[i];

		fprintf(f,
			"%s{\"block\":%u,\"address\":%" PRIu64
			",\"cond\":\"%s\",\"taken_to\":%" PRIu64 ",\"taken\":%" PRIu64
			",\"not_taken\":%" PRIu64 ",\"covered_ms\":%.1f"
			",\"loop\":%u}",
			i ? "," : "", b->block, b->address, b->cond ? b->cond : "?", b->taken_to,
			b->taken, b->not_taken, b->covered_ns / 1e6, b->loop);
	}
	fputs("],\"hw_loops\":[", f);
	for (size_t i = 0; i < r->n_hw_loops; i++) {
		const Kprof__HwLoop *l = r->hw_loops[i];

		fprintf(f,
			"%s{\"header\":%u,\"branches\":%u,\"activations\":%" PRIu64
			",\"covered_ms\":%.1f,\"blocks\":[",
			i ? "," : "", l->header, l->branches, l->activations, l->covered_ns / 1e6);
		for (size_t j = 0; j < l->n_blocks; j++)
			fprintf(f, "%s%u", j ? "," : "", l->blocks[j]);
		fputs("],\"assumed\":[", f);
		for (size_t j = 0; j < l->n_assumed; j++)
			fprintf(f, "%s%" PRIu64, j ? "," : "", l->assumed[j]);
		fputs("]}", f);
	}
	fputs("],\"not_covered\":[", f);
	for (size_t i = 0; i < r->n_not_covered; i++) {
		fputs(i ? "," : "", f);
		render_json_string(f, r->not_covered[i]);
	}
	fputc(']', f);
}

/* A --structural trace of anonymous code: its turns are the structure graphs' (render_spp.c). */
static bool hw_structural(const Kprof__PathsReply *r)
{
	return r->hw && r->spp && r->spp->hw;
}

static void paths_hw_text(FILE *f, const Kprof__PathsReply *r)
{
	if (!r->hw)
		return;
	if (hw_structural(r))
		fputs("\nThe debug registers went to the structure graphs in turn (the structural "
		      "profile below), not to\nbranch counts and k-iteration paths: trace without "
		      "--structural for those.\n",
		      f);
	else
		fputs("\nBranches (hardware breakpoints on anonymous code; exact over the time "
		      "covered):\n"
		      "  BLOCK  ADDRESS             COND       TAKEN   NOT TAKEN  COVERED  LOOP\n",
		      f);
	for (size_t i = 0; i < r->n_branches; i++) {
		const Kprof__BranchCount *b = r->branches[i];

		fprintf(
		    f, "  B%-4u 0x%-16" PRIx64 "  %-4s %10" PRIu64 "  %10" PRIu64 "  %6.2fs  B%u\n",
		    b->block, b->address, b->cond ? b->cond : "?", b->taken, b->not_taken,
		    b->covered_ns / 1e9, b->loop);
	}
	for (size_t i = 0; i < r->n_hw_loops; i++) {
		const Kprof__HwLoop *l = r->hw_loops[i];

		fprintf(f,
			"Loop at B%u: %u branch%s followed, %" PRIu64
			" activation%s over %.2f s: its iterations are the paths below\n",
			l->header, l->branches, l->branches == 1 ? "" : "es", l->activations,
			render_plural(l->activations), l->covered_ns / 1e9);
		if (l->n_assumed) {
			fprintf(f,
				"  assuming %zu branch%s went the one way %s went while counted "
				"(exact if %s kept to it):",
				l->n_assumed, l->n_assumed == 1 ? "" : "es",
				l->n_assumed == 1 ? "it" : "each",
				l->n_assumed == 1 ? "it" : "they");
			for (size_t j = 0; j < l->n_assumed; j++)
				fprintf(f, " 0x%" PRIx64, l->assumed[j]);
			fputc('\n', f);
		}
	}
	if (r->hw_turn && r->hw_turn[0]) {
		fputs("Now: ", f);
		put_text(f, r->hw_turn, 0);
		fputc('\n', f);
	}
	for (size_t i = 0; i < r->n_not_covered; i++) {
		fputs("Not covered: ", f);
		put_text(f, r->not_covered[i], 0);
		fputc('\n', f);
	}
	if (r->hw_stopped && r->hw_stopped[0]) {
		fputs("Stopped early: ", f);
		put_text(f, r->hw_stopped, 0);
		fputc('\n', f);
	}
}

/* The paths object; without its closing brace when !close (render_spp.c appends fields). */
static void paths_json(FILE *f, const Kprof__PathsReply *r, bool close)
{
	bool first = true;

	fputs("{\"target\":", f);
	if (r->target)
		render_target_json(f, r->target);
	else
		fputs("null", f);
	fputs(",\"function\":", f);
	render_json_string(f, r->function);
	fprintf(f, ",\"start\":%" PRIu64 ",\"size\":%" PRIu64 ",\"k\":%u,\"state\":\"%s\"",
		r->start, r->size, r->k,
		r->state == KPROF__PATHS_STATE__PATHS_STATE_TRACING ? "tracing" : "done");
	fputs(",\"end_reason\":", f);
	render_json_string(f, r->end_reason);
	fprintf(f,
		",\"num_paths\":%" PRIu64 ",\"loops\":%u,\"back_edges\":%u,\"probes\":%u"
		",\"activations\":%" PRIu64 ",\"path_events\":%" PRIu64 ",\"budget\":%" PRIu64
		",\"duration_ms\":%u,\"traced_ms\":%.1f,\"probe_hits\":%" PRIu64
		",\"slowdown\":%.3f,\"kernel_share_before\":%.4f,\"kernel_share_during\":%.4f"
		",\"traced_cpu_ms\":%" PRIu64 ",\"ksf_nodes\":%" PRIu64 ",\"ipf_nodes\":%" PRIu64
		",\"pruned_items\":%" PRIu64 ",\"max_error\":%" PRIu64 ",\"lost_events\":%" PRIu64
		",\"resyncs\":%" PRIu64 ",\"stray_hits\":%" PRIu64 ",\"aborted\":%" PRIu64
		",\"paths_total\":%u,\"sequences_total\":%u,\"level_sums\":[",
		r->num_paths, r->loops, r->back_edges, r->probes, r->activations, r->path_events,
		r->budget, r->duration_ms, r->traced_ns / 1e6, r->probe_hits, r->slowdown,
		r->kernel_share_before, r->kernel_share_during, r->traced_cpu_ms, r->ksf_nodes,
		r->ipf_nodes, r->pruned_items, r->max_error, r->lost_events, r->resyncs,
		r->stray_hits, r->aborted, r->paths_total, r->sequences_total);
	for (size_t i = 0; i < r->n_level_sums; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", r->level_sums[i]);
	fputs("],\"blocks\":[", f);
	for (size_t i = 0; i < r->n_blocks; i++) {
		const Kprof__PathBlock *b = r->blocks[i];

		fprintf(f,
			"%s{\"index\":%zu,\"start\":%" PRIu64 ",\"end\":%" PRIu64
			",\"insns\":%u,\"entry\":%s,\"loop_header\":%s,\"loop_depth\":%u,\"term\":",
			i ? "," : "", i, b->start, b->end, b->insns, b->entry ? "true" : "false",
			b->loop_header ? "true" : "false", b->loop_depth);
		render_json_string(f, b->term);
		fputc('}', f);
	}
	fputs("],\"paths\":[", f);
	for (size_t i = 0; i < r->n_paths; i++) {
		const Kprof__PathInfo *p = r->paths[i];

		fprintf(f,
			"%s{\"id\":%" PRIu64 ",\"count\":%" PRIu64
			",\"percent\":%.4f,\"for_sequences\":%s,\"blocks\":[",
			i ? "," : "", p->id, p->count, pct(p->count, level_sum(r, 1)),
			p->for_sequences ? "true" : "false");
		for (size_t j = 0; j < p->n_steps; j++) {
			const Kprof__PathStep *s = p->steps[j];
			const Kprof__PathBlock *b =
			    s->block < r->n_blocks ? r->blocks[s->block] : NULL;

			fprintf(f,
				"%s{\"block\":%u,\"start\":%" PRIu64 ",\"end\":%" PRIu64
				",\"edge\":\"%s\"}",
				j ? "," : "", s->block, b ? b->start : 0, b ? b->end : 0,
				edge_name(s->edge));
		}
		fputs("]}", f);
	}
	fprintf(f, "],\"edge_profile\":%s,\"edges\":[", r->edge_profile ? "true" : "false");
	for (size_t i = 0; i < r->n_edges; i++) {
		const Kprof__EdgeCount *e = r->edges[i];

		fprintf(f, "%s{\"from\":%u,", i ? "," : "", e->from);
		if (e->exit)
			fputs("\"to\":null,", f);
		else
			fprintf(f, "\"to\":%u,", e->to);
		fprintf(f, "\"exit\":%s,\"kind\":\"%s\",\"count\":%" PRIu64 "}",
			e->exit ? "true" : "false", edge_name(e->kind), e->count);
	}
	/* Sequences of every length: the paths themselves (length 1), then 2..k. */
	fputs("],\"sequences\":[", f);
	for (size_t i = 0; i < r->n_paths; i++, first = false)
		fprintf(f, "%s{\"count\":%" PRIu64 ",\"percent\":%.4f,\"paths\":[%" PRIu64 "]}",
			first ? "" : ",", r->paths[i]->count,
			pct(r->paths[i]->count, level_sum(r, 1)), r->paths[i]->id);
	for (size_t i = 0; i < r->n_sequences; i++, first = false) {
		const Kprof__PathSeq *q = r->sequences[i];

		fprintf(f, "%s{\"count\":%" PRIu64 ",\"percent\":%.4f,\"paths\":[",
			first ? "" : ",", q->count, pct(q->count, level_sum(r, q->n_ids)));
		for (size_t j = 0; j < q->n_ids; j++)
			fprintf(f, "%s%" PRIu64, j ? "," : "", q->ids[j]);
		fputs("]}", f);
	}
	fputc(']', f);
	paths_hw_json(f, r);
	if (close)
		fputs("}\n", f);
}

void render_paths_json_open(FILE *f, const Kprof__PathsReply *r)
{
	paths_json(f, r, false);
}

static void put_path(FILE *f, const Kprof__PathInfo *p)
{
	if (!p) {
		fputs("?", f);
		return;
	}
	for (size_t j = 0; j < p->n_steps; j++)
		fprintf(f, "%sB%u:%s", j ? " " : "", p->steps[j]->block,
			edge_name(p->steps[j]->edge));
}

void render_paths(FILE *f, const Kprof__PathsReply *r, bool json)
{
	if (json) {
		paths_json(f, r, true);
		return;
	}
	if (r->target)
		render_target_line(f, r->target);
	fputs("Paths of ", f);
	put_text(f, r->function, 0);
	fprintf(f, " at 0x%" PRIx64 "-0x%" PRIx64 ": %zu block%s, %u loop%s, ", r->start,
		r->start + r->size, r->n_blocks, render_plural(r->n_blocks), r->loops,
		render_plural(r->loops));
	if (r->edge_profile)
		fputs("too many acyclic paths to number: edge profile\n", f);
	else
		fprintf(f, "%" PRIu64 " acyclic path%s; k = %u\n", r->num_paths,
			render_plural(r->num_paths), r->k);
	fprintf(f, "%s %.2f s",
		r->state == KPROF__PATHS_STATE__PATHS_STATE_TRACING ? "Tracing for" : "Traced",
		r->traced_ns / 1e9);
	if (r->state != KPROF__PATHS_STATE__PATHS_STATE_TRACING) {
		fputs(" (ended: ", f);
		put_text(f, r->end_reason && *r->end_reason ? r->end_reason : "?", 0);
		fputc(')', f);
	}
	fprintf(f,
		", %u probe%s: %" PRIu64 " activation%s, %" PRIu64 " path%s, %" PRIu64
		" probe hit%s\n",
		r->probes, render_plural(r->probes), r->activations, render_plural(r->activations),
		r->path_events, render_plural(r->path_events), r->probe_hits,
		render_plural(r->probe_hits));
	if (r->slowdown > 0 && r->kernel_share_before >= 0)
		fprintf(f,
			"Cost: the target spent %.1f%% of its CPU time in the kernel while traced "
			"(%.1f%% before): about %.2fx slower\n",
			100 * r->kernel_share_during, 100 * r->kernel_share_before, r->slowdown);
	else if (r->slowdown > 0)
		fprintf(
		    f,
		    "Cost: the target spent %.1f%% of its CPU time in the kernel while traced "
		    "(before: too little CPU time to tell, taken as 0%%): at most %.2fx slower\n",
		    100 * r->kernel_share_during, r->slowdown);
	else
		fputs("Cost: the target used too little CPU time while traced (under 0.5 s) to "
		      "estimate the slowdown\n",
		      f);
	if (r->lost_events || r->resyncs || r->aborted)
		fprintf(f,
			"Lost: %" PRIu64 " event%s, %" PRIu64 " thread resync%s, %" PRIu64
			" activation%s left without a known exit\n",
			r->lost_events, render_plural(r->lost_events), r->resyncs,
			render_plural(r->resyncs), r->aborted, render_plural(r->aborted));
	if (r->stray_hits)
		fprintf(f,
			"Not counted: %" PRIu64
			" probe hit%s of activations already running when the "
			"probes came (or entered in a way the CFG does not show)\n",
			r->stray_hits, render_plural(r->stray_hits));
	if (r->max_error)
		fprintf(f,
			"Counts are lower bounds, short by at most %" PRIu64
			" (k-SF node budget reached: %" PRIu64 " item%s pruned)\n",
			r->max_error, r->pruned_items, render_plural(r->pruned_items));
	fputs("\nBlocks:\n", f);
	for (size_t i = 0; i < r->n_blocks; i++) {
		const Kprof__PathBlock *b = r->blocks[i];

		fprintf(f, "  B%-3zu 0x%" PRIx64 "-0x%" PRIx64 " %4u insn%s  ", i, b->start, b->end,
			b->insns, b->insns == 1 ? " " : "s");
		put_text(f, b->term ? b->term : "?", 8);
		if (b->entry)
			fputs(" entry", f);
		if (b->loop_header)
			fprintf(f, " loop header (depth %u)", b->loop_depth);
		fputc('\n', f);
	}
	paths_hw_text(f, r);
	if (hw_structural(r))
		return;
	if (r->edge_profile) {
		fputs("\nEdge profile: ", f);
		put_text(f, r->function ? r->function : "the function", 0);
		fputs(" has more acyclic paths than kprofd numbers ([limits] max_paths), so its "
		      "edges were counted instead of its paths\n"
		      "     COUNT  EDGE\n",
		      f);
		for (size_t i = 0; i < r->n_edges; i++) {
			const Kprof__EdgeCount *e = r->edges[i];

			fprintf(f, "%10" PRIu64 "  B%u -%s-> ", e->count, e->from,
				edge_name(e->kind));
			if (e->exit)
				fputs("exit\n", f);
			else
				fprintf(f, "B%u\n", e->to);
		}
		return;
	}
	size_t ntop = 0, nextra;

	for (size_t i = 0; i < r->n_paths; i++)
		ntop += !r->paths[i]->for_sequences;
	nextra = r->n_paths - ntop;
	fprintf(f, "\nBall-Larus paths (k = 1): %zu of %u shown\n     COUNT       %%  PATH\n", ntop,
		r->paths_total);
	/* The top paths, then those only listed because a sequence below uses them. */
	for (int extra = 0; extra < 2; extra++) {
		if (extra && nextra)
			fprintf(f, "  and %zu more path%s the sequences below use:\n", nextra,
				nextra == 1 ? "" : "s");
		for (size_t i = 0; i < r->n_paths; i++) {
			const Kprof__PathInfo *p = r->paths[i];

			if (p->for_sequences != (extra == 1))
				continue;
			fprintf(f, "%10" PRIu64 " %6.2f%%  #%-4" PRIu64 " ", p->count,
				pct(p->count, level_sum(r, 1)), p->id);
			put_path(f, p);
			fputc('\n', f);
		}
	}
	if (r->k < 2)
		return;
	fprintf(
	    f,
	    "\nHottest multi-iteration paths (2 to %u consecutive paths of one activation): "
	    "%zu of %u shown\n     COUNT       %%  LEN  SEQUENCE (path ids, then their blocks)\n",
	    r->k, r->n_sequences, r->sequences_total);
	for (size_t i = 0; i < r->n_sequences; i++) {
		const Kprof__PathSeq *q = r->sequences[i];

		fprintf(f, "%10" PRIu64 " %6.2f%%  %3zu  ", q->count,
			pct(q->count, level_sum(r, q->n_ids)), q->n_ids);
		for (size_t j = 0; j < q->n_ids; j++)
			fprintf(f, "%s#%" PRIu64, j ? " > " : "", q->ids[j]);
		fputc('\n', f);
		for (size_t j = 0; j < q->n_ids; j++) {
			fprintf(f, "%26s#%-4" PRIu64 " ", "", q->ids[j]);
			put_path(f, path_find(r, q->ids[j]));
			fputc('\n', f);
		}
	}
}
