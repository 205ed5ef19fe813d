// SPDX-License-Identifier: GPL-2.0-only
/* lines.c: kprofctl report --lines (issue 32): the self samples of a profile per source line, as
 * `perf report -s srcline` shows them. The lines are kprofd's (ExportRequest.lines: its
 * kprof-lines helpers and its cache, docs/ARCHITECTURE.md §2.6a): each sampled leaf address
 * is counted at its innermost frame's file:line, with the function that frame is in and, for
 * an inlined one, the function it was inlined into; an address without a line at its function.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "lines.h"
#include "render.h"

struct lrow {
	char *key; /* "file\001line\001function\001inlined into" */
	uint64_t count;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct lrow *)a)->key, ((const struct lrow *)b)->key);
}

static int by_count(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->key, y->key);
}

/* The row key of leaf address la: its innermost frame, or its function without a line. */
static char *row_key(const Kprof__SavedProfile *sp, const Kprof__SavedLeafAddr *la)
{
	const Kprof__SavedFunction *fn = sp->functions[la->func];
	const Kprof__SavedLine *in = la->n_lines ? la->lines[0] : NULL;
	char *key = NULL;
	int n;

	if (in && in->line)
		n = asprintf(&key, "%s\001%u\001%s\001%s", in->file, in->line,
			     in->function[0] ? in->function : fn->name,
			     la->n_lines > 1 ? la->lines[la->n_lines - 1]->function : "");
	else
		n = asprintf(&key, "\001\001%s\001", fn->name);
	return n < 0 ? NULL : key;
}

static void print_row(FILE *f, const struct lrow *r, uint64_t total, bool json, bool first)
{
	char *file = r->key, *line = strchr(file, 1), *func, *into;

	*line++ = 0;
	func = strchr(line, 1);
	*func++ = 0;
	into = strchr(func, 1);
	*into++ = 0;
	if (json) {
		fprintf(f, "%s{\"samples\":%" PRIu64 ",\"file\":", first ? "" : ",", r->count);
		render_json_string(f, file);
		fprintf(f, ",\"line\":%s,\"function\":", line[0] ? line : "0");
		render_json_string(f, func);
		fputs(",\"inlined_into\":", f);
		render_json_string(f, into);
		fputc('}', f);
		return;
	}
	fprintf(f, "%9" PRIu64 " %6.2f%%  ", r->count, total ? 100.0 * r->count / total : 0.0);
	if (file[0])
		fprintf(f, "%s:%s  %s", file, line, func);
	else
		fprintf(f, "[no line]  %s", func);
	if (into[0])
		fprintf(f, " (inlined into %s)", into);
	fputc('\n', f);
}

int lines_report(FILE *f, const Kprof__SavedProfile *sp, uint32_t top, bool json)
{
	_cleanup_free_ struct lrow *rows = calloc(sp->n_leaf_addrs + 1, sizeof(*rows));
	const Kprof__SavedLinesInfo *li = sp->lines;
	uint64_t total = 0, kept = 0;
	size_t n = 0, m = 0;
	int err = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < sp->n_stacks; i++)
		total += sp->stacks[i]->count;
	for (; n < sp->n_leaf_addrs; n++) {
		const Kprof__SavedLeafAddr *la = sp->leaf_addrs[n];

		if (la->func >= sp->n_functions || !(rows[n].key = row_key(sp, la))) {
			err = la->func >= sp->n_functions ? -EBADMSG : -ENOMEM;
			break;
		}
		rows[n].count = la->count;
		kept += la->count;
	}
	if (!err) {
		qsort(rows, n, sizeof(*rows), by_key);
		for (size_t i = 0; i < n; i++) {
			if (m && !strcmp(rows[m - 1].key, rows[i].key)) {
				rows[m - 1].count += rows[i].count;
				free(rows[i].key);
				continue;
			}
			rows[m++] = rows[i];
		}
		qsort(rows, m, sizeof(*rows), by_count);
		if (json)
			fprintf(f, "{\"samples\":%" PRIu64 ",\"with_address\":%" PRIu64 ",\"lines\":[",
				total, kept);
		else
			fprintf(f, "%" PRIu64 " samples, %" PRIu64 " of them at a kept leaf address%s\n"
				   "  SAMPLES  SHARE   LINE  FUNCTION\n",
				total, kept, li && li->resolved ? "" : " (no source lines found)");
		for (size_t i = 0; i < m && (!top || i < top); i++)
			print_row(f, &rows[i], total, json, i == 0);
		if (json)
			fputs("]}\n", f);
		n = m;
	}
	for (size_t i = 0; i < n; i++)
		free(rows[i].key);
	for (size_t i = 0; !json && !err && li && i < li->n_notes; i++) {
		fputs("note: ", f);
		render_text(f, li->notes[i]);
		fputc('\n', f);
	}
	return err;
}
