// SPDX-License-Identifier: GPL-2.0-only
/* render_offcpu.c: the off-CPU and wall-clock views of kprofctl.
 *
 * An off-CPU profile is a profile whose counts are nanoseconds (daemon/target/offcpu.c), so the
 * replies are those of report and folded; this file shows them in time units and, for --wall,
 * adds the CPU profile to them: a sample stands for one sampling period of CPU time (1/freq),
 * and CPU stacks and off-CPU stacks are disjoint, so a function's wall-clock self and total are
 * its CPU ones times the period plus its off-CPU ones. The thread states are the roots of the
 * off-CPU stacks ("[sleeping]", ...); a wall view puts the CPU stacks under "[running]".
 * Per thread (report --threads --off-cpu or --wall): each thread's off-CPU time, CPU time (its
 * samples times the period), the state it waited in most (from its stacks' roots) and the
 * function it waited in most (tview's hottest leaf of its off-CPU stacks).
 */
#include "render_offcpu.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

static const char *const state_names[] = {"runnable", "sleeping", "uninterruptible", "idle",
					  "stopped"};

const char *render_offcpu_time(uint64_t ns, char buf[32])
{
	if (ns >= 1000000000ULL)
		snprintf(buf, 32, "%.2f s", ns / 1e9);
	else if (ns >= 1000000ULL)
		snprintf(buf, 32, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, 32, "%.0f us", ns / 1e3);
	return buf;
}

struct row {
	const Kprof__FlatEntry *e;
	uint64_t self, total, cpu_self;
};

/* By self, then total, descending (as report sorts), then by name. */
static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int by_self = (x->self < y->self) - (x->self > y->self);
	int by_total = (x->total < y->total) - (x->total > y->total);

	return by_self ? by_self : by_total ? by_total : strcmp(x->e->function, y->e->function);
}

static bool same_func(const Kprof__FlatEntry *a, const Kprof__FlatEntry *b)
{
	return !strcmp(a->function, b->function) && !strcmp(a->module, b->module);
}

/* The rows of off, and with cpu those of both (CPU counts times period_ns), merged by name and
 * module. NULL when out of memory. */
static struct row *rows_build(const Kprof__ReportReply *off, const Kprof__ReportReply *cpu,
			      uint64_t period_ns, size_t *n)
{
	size_t cap = off->n_entries + (cpu ? cpu->n_entries : 0);
	struct row *r = calloc(cap ? cap : 1, sizeof(*r));

	if (!r)
		return NULL;
	*n = 0;
	for (size_t i = 0; i < off->n_entries; i++)
		r[(*n)++] = (struct row){off->entries[i], off->entries[i]->self,
					 off->entries[i]->total, 0};
	for (size_t i = 0; cpu && i < cpu->n_entries; i++) {
		const Kprof__FlatEntry *e = cpu->entries[i];
		size_t j = 0;

		while (j < *n && !same_func(r[j].e, e))
			j++;
		if (j == *n)
			r[(*n)++] = (struct row){e, 0, 0, 0};
		r[j].self += e->self * period_ns;
		r[j].total += e->total * period_ns;
		r[j].cpu_self += e->self * period_ns;
	}
	qsort(r, *n, sizeof(*r), row_cmp);
	return r;
}

static void states_line(FILE *f, const Kprof__Target *t, uint64_t cpu_ns)
{
	uint64_t all = cpu_ns + t->off_cpu_ns;
	char b[32];

	if (!all)
		all = 1;
	if (cpu_ns)
		fprintf(f, "  running %s (%.1f%%)", render_offcpu_time(cpu_ns, b),
			100.0 * cpu_ns / all);
	for (size_t i = 0; i < t->n_off_cpu_state_ns && i < 5; i++)
		if (t->off_cpu_state_ns[i])
			fprintf(f, "  %s %s (%.1f%%)", state_names[i],
				render_offcpu_time(t->off_cpu_state_ns[i], b),
				100.0 * t->off_cpu_state_ns[i] / all);
	fputc('\n', f);
}

static void report_json(FILE *f, const Kprof__ReportReply *off, const struct row *r, size_t n,
			uint64_t all, uint64_t cpu_ns)
{
	const Kprof__Target *t = off->target;

	render_json_open_target(f, t);
	fprintf(f, ",\"wall\":%s,\"total_ns\":%" PRIu64 ",\"cpu_ns\":%" PRIu64
		   ",\"off_cpu_ns\":%" PRIu64 ",\"states_ns\":{",
		cpu_ns ? "true" : "false", all, cpu_ns, t ? t->off_cpu_ns : 0);
	for (size_t i = 0; t && i < t->n_off_cpu_state_ns && i < 5; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", state_names[i],
			t->off_cpu_state_ns[i]);
	fputs("},\"entries\":[", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"function\":", i ? "," : "");
		render_json_string(f, r[i].e->function);
		fputs(",\"module\":", f);
		render_json_string(f, r[i].e->module);
		fprintf(f,
			",\"kind\":\"%s\",\"self_ns\":%" PRIu64 ",\"total_ns\":%" PRIu64
			",\"cpu_self_ns\":%" PRIu64 ",\"self_pct\":%.2f,\"total_pct\":%.2f}",
			render_kind(r[i].e->kind), r[i].self, r[i].total, r[i].cpu_self,
			all ? 100.0 * r[i].self / all : 0, all ? 100.0 * r[i].total / all : 0);
	}
	fputs("]}\n", f);
}

void render_offcpu_report(FILE *f, const Kprof__ReportReply *off, const Kprof__ReportReply *cpu,
			  unsigned top, bool json)
{
	const Kprof__Target *t = off->target;
	uint64_t period = cpu && cpu->target && cpu->target->freq_hz
			      ? 1000000000ULL / cpu->target->freq_hz
			      : 0;
	uint64_t cpu_ns = cpu ? cpu->total_samples * period : 0, all;
	size_t n = 0;
	struct row *r = rows_build(off, period ? cpu : NULL, period, &n);
	char b1[32], b2[32];

	if (!r) {
		fputs("kprofctl: out of memory\n", stderr);
		return;
	}
	all = off->total_samples + cpu_ns;
	if (top && n > top)
		n = top;
	if (json) {
		report_json(f, off, r, n, all, cpu_ns);
		free(r);
		return;
	}
	if (t) {
		render_target_line(f, t);
		fprintf(f, "%s %s: off CPU %s", cpu ? "wall-clock" : "off-CPU",
			render_offcpu_time(all, b1), render_offcpu_time(t->off_cpu_ns, b2));
		if (t->off_cpu_intervals) /* none: a view of some threads (report --tid) */
			fprintf(f, " in %" PRIu64 " interval%s", t->off_cpu_intervals,
				render_plural(t->off_cpu_intervals));
		if (t->off_cpu_lost_stacks)
			fprintf(f, " (%" PRIu64 " without their stack)", t->off_cpu_lost_stacks);
		fputs("\n", f);
		states_line(f, t, cpu_ns);
		fputc('\n', f);
	}
	fprintf(f, "%10s %7s %10s %7s  %-7s %-40s %s\n", "SELF", "SELF%", "TOTAL", "TOTAL%", "KIND",
		"FUNCTION", "MODULE");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%10s %6.2f%% %10s %6.2f%%  %-7s ", render_offcpu_time(r[i].self, b1),
			all ? 100.0 * r[i].self / all : 0, render_offcpu_time(r[i].total, b2),
			all ? 100.0 * r[i].total / all : 0, render_kind(r[i].e->kind));
		render_sanitize(f, r[i].e->function, strlen(r[i].e->function), 40);
		fputc(' ', f);
		render_text(f, r[i].e->module);
		fputc('\n', f);
	}
	free(r);
}

int render_offcpu_state(const Kprof__SavedProfile *off, const Kprof__SavedStack *s)
{
	const Kprof__SavedFunction *f;

	if (!s->n_ids || s->ids[0] >= off->n_functions)
		return -1;
	f = off->functions[s->ids[0]];
	for (int i = 0; f->name && i < RENDER_OFFCPU_NSTATES; i++)
		if (f->name[0] == '[' && !strncmp(f->name + 1, state_names[i], strlen(state_names[i])) &&
		    !strcmp(f->name + 1 + strlen(state_names[i]), "]"))
			return i;
	return -1;
}

void render_offcpu_view_target(const Kprof__SavedProfile *off, Kprof__Target *t, uint64_t *ns)
{
	memset(ns, 0, RENDER_OFFCPU_NSTATES * sizeof(*ns));
	t->off_cpu = true;
	t->off_cpu_ns = t->off_cpu_intervals = t->off_cpu_lost_stacks = 0;
	for (size_t i = 0; i < off->n_stacks; i++) {
		int st = render_offcpu_state(off, off->stacks[i]);

		t->off_cpu_ns += off->stacks[i]->count;
		if (st >= 0)
			ns[st] += off->stacks[i]->count;
	}
	t->off_cpu_state_ns = ns;
	t->n_off_cpu_state_ns = RENDER_OFFCPU_NSTATES;
}

struct trow {
	uint32_t tid;
	const char *name;
	uint64_t off, cpu;
	const struct tview_thread *o; /* its off-CPU row, NULL if it never waited */
	uint64_t state_ns[RENDER_OFFCPU_NSTATES];
};

static int trow_by_tid(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int trow_by_time(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	uint64_t wx = x->off + x->cpu, wy = y->off + y->cpu;

	if (wx != wy)
		return wx > wy ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The rows: the threads of both tables by tid, their states from off's stacks. */
static struct trow *trows_build(const struct render_offcpu_threads *r, size_t *n)
{
	struct trow *t = calloc(r->not + r->nct + 1, sizeof(*t));
	size_t k = 0;

	if (!t)
		return NULL;
	for (size_t i = 0; i < r->not; i++)
		t[k++] = (struct trow){.tid = r->ot[i].tid, .name = r->ot[i].name,
				       .off = r->ot[i].samples, .o = &r->ot[i]};
	qsort(t, k, sizeof(*t), trow_by_tid);
	for (size_t i = 0, nk = k; r->wall && i < r->nct; i++) {
		struct trow key = {.tid = r->ct[i].tid};
		struct trow *x = bsearch(&key, t, nk, sizeof(*t), trow_by_tid);

		if (!x) {
			x = &t[k++];
			*x = (struct trow){.tid = r->ct[i].tid, .name = r->ct[i].name};
		}
		x->cpu += r->ct[i].samples * r->period_ns;
	}
	qsort(t, k, sizeof(*t), trow_by_tid);
	for (size_t i = 0; i < r->off->n_stacks; i++) {
		const Kprof__SavedStack *s = r->off->stacks[i];
		struct trow key = {.tid = s->tid}, *x = bsearch(&key, t, k, sizeof(*t), trow_by_tid);
		int st = render_offcpu_state(r->off, s);

		if (x && st >= 0)
			x->state_ns[st] += s->count;
	}
	qsort(t, k, sizeof(*t), trow_by_time);
	*n = k;
	return t;
}

/* The state row t waited in most (-1: none). */
static int trow_state(const struct trow *t)
{
	int best = -1;

	for (int i = 0; i < RENDER_OFFCPU_NSTATES; i++)
		if (t->state_ns[i] && (best < 0 || t->state_ns[i] > t->state_ns[best]))
			best = i;
	return best;
}

static const char *trow_wait(const struct render_offcpu_threads *r, const struct trow *t)
{
	const struct tview_thread *o = t->o;

	return o && o->top_func < r->off->n_functions && r->off->functions[o->top_func]->name
		   ? r->off->functions[o->top_func]->name
		   : NULL;
}

static void threads_json(FILE *f, const struct render_offcpu_threads *r, const struct trow *t,
			 size_t n, uint64_t total)
{
	render_json_open_target(f, r->target);
	fprintf(f, ",\"wall\":%s,\"total_ns\":%" PRIu64 ",\"threads\":[", r->wall ? "true" : "false",
		total);
	for (size_t i = 0; i < n; i++) {
		int st = trow_state(&t[i]);
		const char *w = trow_wait(r, &t[i]);

		fprintf(f, "%s{\"tid\":%u,\"comm\":", i ? "," : "", t[i].tid);
		render_json_string(f, t[i].name ? t[i].name : "");
		fprintf(f,
			",\"off_cpu_ns\":%" PRIu64 ",\"cpu_ns\":%" PRIu64 ",\"wall_ns\":%" PRIu64
			",\"pct\":%.2f,\"state\":",
			t[i].off, t[i].cpu, t[i].off + t[i].cpu,
			total ? 100.0 * (t[i].off + t[i].cpu) / total : 0);
		if (st >= 0)
			fprintf(f, "\"%s\",\"state_ns\":%" PRIu64, state_names[st], t[i].state_ns[st]);
		else
			fputs("null,\"state_ns\":0", f);
		fputs(",\"top_wait\":", f);
		if (w)
			render_json_string(f, w);
		else
			fputs("null", f);
		fprintf(f, ",\"top_wait_ns\":%" PRIu64 "}", w ? t[i].o->top_self : 0);
	}
	fputs("]}\n", f);
}

void render_offcpu_threads(FILE *f, const struct render_offcpu_threads *r, unsigned top,
			   bool json)
{
	size_t n = 0, shown;
	struct trow *t = trows_build(r, &n);
	uint64_t total = 0, off = 0;
	char b1[32], b2[32], b3[32];
	int left;

	if (!t) {
		fputs("kprofctl: out of memory\n", stderr);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		total += t[i].off + t[i].cpu;
		off += t[i].off;
	}
	if (json) {
		threads_json(f, r, t, n, total);
		free(t);
		return;
	}
	shown = top && top < n ? top : n;
	if (r->target)
		render_target_line(f, r->target);
	if (r->wall)
		fprintf(f, "wall-clock %s: CPU %s, off CPU %s", render_offcpu_time(total, b1),
			render_offcpu_time(total - off, b2), render_offcpu_time(off, b3));
	else
		fprintf(f, "off-CPU %s", render_offcpu_time(off, b1));
	fprintf(f, ", %zu thread%s%s\n\n", n, render_plural(n), shown < n ? " (top shown)" : "");
	/* TID [WALL CPU] OFF-CPU SHARE THREAD(16) STATE(16) TOP%: the wait last */
	left = render_columns() ? (int)render_columns() - (r->wall ? 91 : 69) : 0;
	fprintf(f, "%8s ", "TID");
	if (r->wall)
		fprintf(f, "%10s %10s ", "WALL", "CPU");
	fprintf(f, "%10s %7s  %-16s %-16s %6s %s\n", "OFF-CPU", "SHARE", "THREAD", "STATE", "TOP%",
		"WAITED MOST IN (share of its off-CPU time)");
	for (size_t i = 0; i < shown; i++) {
		int st = trow_state(&t[i]);
		const char *w = trow_wait(r, &t[i]);
		char sbuf[32] = "-";

		fprintf(f, "%8u ", t[i].tid);
		if (r->wall)
			fprintf(f, "%10s %10s ", render_offcpu_time(t[i].off + t[i].cpu, b1),
				render_offcpu_time(t[i].cpu, b2));
		fprintf(f, "%10s %6.2f%%  ", render_offcpu_time(t[i].off, b3),
			total ? 100.0 * (t[i].off + t[i].cpu) / total : 0);
		render_fit(f, t[i].name && t[i].name[0] ? t[i].name : "?", 16, true);
		if (st >= 0)
			snprintf(sbuf, sizeof(sbuf), "%s %.0f%%", state_names[st],
				 t[i].off ? 100.0 * t[i].state_ns[st] / t[i].off : 0);
		fprintf(f, " %-16s ", sbuf);
		if (!w) {
			fprintf(f, "%6s -\n", "");
			continue;
		}
		fprintf(f, "%5.1f%% ", t[i].off ? 100.0 * t[i].o->top_self / t[i].off : 0);
		if (left > 0)
			render_fit(f, w, left < 12 ? 12 : left, false);
		else
			render_text(f, w);
		fputc('\n', f);
	}
	free(t);
}

/* Each line of text ("frames count"), the count multiplied by mul, under prefix. */
static void folded_scaled(FILE *f, const char *text, const char *prefix, uint64_t mul)
{
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		const char *sp = end;

		while (sp > p && sp[-1] != ' ')
			sp--;
		if (sp > p + 1) {
			if (prefix)
				fputs(prefix, f);
			render_sanitize(f, p, sp - 1 - p, (size_t)-1);
			fprintf(f, " %" PRIu64 "\n", (uint64_t)strtoull(sp, NULL, 10) * mul);
		}
		p = nl ? nl + 1 : end;
	}
}

void render_offcpu_wall_folded(FILE *f, const char *cpu, uint32_t freq_hz, const char *off)
{
	folded_scaled(f, cpu, "[running];", freq_hz ? 1000000000ULL / freq_hz : 0);
	folded_scaled(f, off, NULL, 1);
}
