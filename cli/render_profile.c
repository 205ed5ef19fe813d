// SPDX-License-Identifier: GPL-2.0-only
/* render_profile.c: kprofctl's views of a profile: `report` (the flat profile, self and total
 * samples per function) and `hcct` (the hot calling contexts as a tree), text and JSON. Apart
 * from render.c because they are whole replies; names in text are shown short through
 * render_names (row_names here picks them for a reply's rows).
 */
#include "render_profile.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_internal.h"

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

static void hcct_json(FILE *f, const Kprof__HcctReply *r)
{
	render_json_open_target(f, r->target);
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
		fprintf(f,
			",\"kind\":\"%s\",\"count\":%" PRIu64 ",\"err\":%" PRIu64
			",\"pct\":%.2f,\"parent\":%d,\"depth\":%u,\"hot\":%s,\"monitored\":%s",
			render_kind(n->kind), n->count, n->err, pct(n->count, r->n), n->parent,
			n->depth, n->hot ? "true" : "false", n->monitored ? "true" : "false");
		render_json_lines(f, "call_site", n->call_site, n->n_call_site);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

/* hcct --lines: where the parent called the context, "called at FILE:LINE in F", then each
 * function F was inlined into, "inlined into G at FILE:LINE". */
static void put_call_site(FILE *f, const Kprof__HcctNode *n)
{
	for (size_t j = 0; j < n->n_call_site && n->call_site[0]->line; j++) {
		const Kprof__SavedLine *l = n->call_site[j];

		fputs(j ? ", inlined into " : "  called at ", f);
		if (j)
			put_text(f, l->function, 0);
		fputs(j ? " at " : "", f);
		put_text(f, l->file, 0);
		fprintf(f, ":%u", l->line);
		if (!j) {
			fputs(" in ", f);
			put_text(f, l->function, 0);
		}
	}
}

/* The contexts, indented by depth (3 columns a level, so that a marker, in the 2 columns
 * before its name, never sits where a shallower context's name starts). TOTAL is the
 * context's count with its callees' (as perf -g and flame graphs count), SELF its own. */
static void hcct_rows(FILE *f, const Kprof__HcctReply *r, bool full_names)
{
	const char **shown;
	uint64_t *incl = calloc(r->n_nodes + 1, sizeof(*incl));

	/* Parents come before their children: summed from the last up. */
	for (size_t i = r->n_nodes; incl && i-- > 0;) {
		const Kprof__HcctNode *n = r->nodes[i];

		incl[i] += n->count;
		if (n->parent >= 0 && (size_t)n->parent < i)
			incl[n->parent] += incl[i];
	}
	shown = row_names(r, r->n_nodes, hcct_name, full_names);
	for (size_t i = 0; i < r->n_nodes; i++) {
		const Kprof__HcctNode *n = r->nodes[i];
		uint64_t total = incl ? incl[i] : n->count;

		if (n->monitored)
			fprintf(f, "%8" PRIu64 " %6.2f%% %8" PRIu64 " %7" PRIu64 "  ", total,
				pct(total, r->n), n->count, n->err);
		else
			fprintf(f, "%8s %7s %8s %7s  ", "", "", "", "");
		for (uint32_t d = 1; d < n->depth; d++)
			fputs("   ", f);
		fputs(n->hot ? "* " : n->monitored ? "  " : ". ", f);
		put_text(f, shown ? shown[i] : n->function, 0);
		fputs("  (", f);
		put_text(f, n->module, 0);
		fputc(')', f);
		put_call_site(f, n);
		fputc('\n', f);
	}
	free(shown);
	free(incl);
}

void render_hcct(FILE *f, const Kprof__HcctReply *r, bool json, bool full_names)
{
	size_t hot = 0;

	for (size_t i = 0; i < r->n_nodes; i++)
		hot += r->nodes[i]->hot;
	if (json) {
		hcct_json(f, r);
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
	fputs("\n   TOTAL  TOTAL%     SELF   +-ERR  CONTEXT  (TOTAL: with its callees shown; * "
	      "hot, . "
	      "cold ancestor)\n",
	      f);
	hcct_rows(f, r, full_names);
}

#define REPORT_MODULE_MAX 24 /* columns of MODULE at most: a longer one keeps its end */

struct report_widths {
	int self, total, calls, module;
	int prefix; /* the columns before FUNCTION */
};

static int digits(uint64_t v)
{
	int d = 1;

	for (; v >= 10; v /= 10)
		d++;
	return d;
}

/* The report's columns as wide as their widest value (headers included). */
static struct report_widths widths(const Kprof__ReportReply *r, bool calls)
{
	struct report_widths w = {4, 5, 5, 6, 0};

	for (size_t i = 0; i < r->n_entries; i++) {
		const Kprof__FlatEntry *e = r->entries[i];
		int m = render_width(e->module);

		w.self = digits(e->self) > w.self ? digits(e->self) : w.self;
		w.total = digits(e->total) > w.total ? digits(e->total) : w.total;
		w.calls = digits(e->calls) > w.calls ? digits(e->calls) : w.calls;
		w.module =
		    m > w.module ? (m < REPORT_MODULE_MAX ? m : REPORT_MODULE_MAX) : w.module;
	}
	w.prefix =
	    w.self + 1 + 7 + 1 + w.total + 1 + 7 + 2 + (calls ? w.calls + 2 : 0) + 8 + w.module;
	return w;
}

void render_report(FILE *f, const Kprof__ReportReply *r, bool json, bool full_names)
{
	uint64_t n = r->total_samples;
	const char **shown;

	if (json) {
		render_json_open_target(f, r->target);
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
	struct report_widths w = widths(r, calls);
	/* The name last, as perf report puts the symbol: on a terminal it gets what is left of
	 * its width (and loses its least useful part); otherwise it is whole. */
	int left = render_columns() ? (int)render_columns() - w.prefix - 1 : 0;

	fprintf(f, "%*s %7s %*s %7s  ", w.self, "SELF", "SELF%", w.total, "TOTAL", "TOTAL%");
	if (calls)
		fprintf(f, "%*s  ", w.calls, "CALLS");
	fprintf(f, "%-7s %-*s %s\n", "KIND", w.module, "MODULE", "FUNCTION");
	shown = row_names(r, r->n_entries, report_name, full_names);
	for (size_t i = 0; i < r->n_entries; i++) {
		const Kprof__FlatEntry *e = r->entries[i];
		const char *name = shown ? shown[i] : e->function;

		fprintf(f, "%*" PRIu64 " %6.2f%% %*" PRIu64 " %6.2f%%  ", w.self, e->self,
			pct(e->self, n), w.total, e->total, pct(e->total, n));
		if (calls)
			fprintf(f, "%*" PRIu64 "  ", w.calls, e->calls);
		fprintf(f, "%-7s ", render_kind(e->kind));
		render_fit(f, e->module, w.module, true);
		fputc(' ', f);
		if (left > 0)
			render_fit(f, name, left < 12 ? 12 : left, false);
		else
			put_text(f, name, 0);
		fputc('\n', f);
	}
	free(shown);
}
