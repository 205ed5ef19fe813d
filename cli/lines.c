// SPDX-License-Identifier: GPL-2.0-only
/* lines.c: kprofctl report --lines (issue 32): the self samples of a profile per source line, as
 * `perf report -s srcline` shows them. The lines are kprofd's (ExportRequest.lines: its
 * kprof-lines helpers and its cache, docs/ARCHITECTURE.md §2.6a): each sampled leaf address
 * is counted at its innermost frame's file:line, with the function that frame is in and, for
 * an inlined one, the function it was inlined into; an address without a line at its function.
 *
 * lines_folded (kprofctl folded --lines): the stacks with function:line frames, as perf script
 * --inline with srcline folds them: a caller frame at the line of its call site (where the
 * profile's call sites say that pair was called from one site), a leaf frame at the line of
 * each of its sampled addresses (the stack's samples split over them, leafsplit.h), and each
 * function inlined there a frame of its own, below the one it was inlined into.
 * lines_call_sites (kprofctl hcct --lines): the call site of each HCCT context, by the same
 * pairs, matched to the profile's functions by name and module.
 * lines_source (kprofctl annotate --lines): the text of a source line, read with the user's
 * rights from the file the DWARF names (a regular file, at most 4 MiB, the last one kept).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/leafsplit.h"
#include "kprof/pprof.h"
#include "kprof/sites.h"
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
	if (file[0]) {
		render_text(f, file);
		fprintf(f, ":%s  ", line);
	} else {
		fputs("[no line]  ", f);
	}
	render_text(f, func);
	if (into[0]) {
		fputs(" (inlined into ", f);
		render_text(f, into);
		fputc(')', f);
	}
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
			fprintf(f,
				"{\"samples\":%" PRIu64 ",\"with_address\":%" PRIu64 ",\"lines\":[",
				total, kept);
		else
			fprintf(f,
				"%" PRIu64 " samples, %" PRIu64
				" of them at a kept leaf address%s\n"
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

/* ---- call sites ---- */

/* ---- folded --lines ---- */

/* A frame name as folded text has it: ';' is the separator. */
static void put_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s, f);
}

/* Function fn's frames at an address with lines[0..n) (innermost first): the function at its
 * line, then what it inlined, each at its own. */
static void put_frames(FILE *f, const Kprof__SavedProfile *sp, uint32_t fn,
		       Kprof__SavedLine *const *lines, size_t n)
{
	char buf[256];

	put_name(f, pprof_display_name(sp->functions[fn], buf));
	if (n && lines[n - 1]->line)
		fprintf(f, ":%u", lines[n - 1]->line);
	for (size_t i = n - 1; n && i-- > 0;) {
		fputc(';', f);
		put_name(f, lines[i]->function[0] ? lines[i]->function : "[inlined]");
		if (lines[i]->line)
			fprintf(f, ":%u", lines[i]->line);
	}
}

/* One folded line: stack s (its ids checked) with leaf address la (NULL: none), count. */
static char *folded_line(const Kprof__SavedProfile *sp, const struct sites *st,
			 const Kprof__SavedStack *s, const Kprof__SavedLeafAddr *la, uint64_t count)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	for (size_t j = 0; j < s->n_ids; j++) {
		const Kprof__SavedCallSite *c =
		    j + 1 < s->n_ids ? sites_one(st, s->ids[j], s->ids[j + 1]) : NULL;

		if (j)
			fputc(';', f);
		if (j + 1 == s->n_ids)
			put_frames(f, sp, s->ids[j], la ? la->lines : NULL, la ? la->n_lines : 0);
		else
			put_frames(f, sp, s->ids[j], c ? c->lines : NULL, c ? c->n_lines : 0);
	}
	fprintf(f, " %" PRIu64, count);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* Equal lines merged (their counts added): the count after the last space. */
static size_t merge_folded(struct lrow *rows, size_t n)
{
	size_t m = 0;

	qsort(rows, n, sizeof(*rows), by_key);
	for (size_t i = 0; i < n; i++) {
		char *sp = strrchr(rows[i].key, ' ');

		*sp = 0;
		if (m && !strcmp(rows[m - 1].key, rows[i].key)) {
			rows[m - 1].count += rows[i].count;
			free(rows[i].key);
			continue;
		}
		rows[m++] = rows[i];
	}
	return m;
}

int lines_folded(FILE *out, const Kprof__SavedProfile *sp)
{
	struct leafsplit ls = {0};
	struct sites st = {0};
	struct lrow *rows = NULL;
	size_t n = 0, cap = 0;
	int err = leafsplit_init(&ls, sp);

	if (err >= 0)
		err = sites_init(&st, sp);
	for (size_t i = 0; err >= 0 && i < sp->n_stacks; i++) {
		const Kprof__SavedStack *s = sp->stacks[i];
		uint64_t left = s->count;

		while (left && s->n_ids) {
			int64_t k;
			uint64_t c = leafsplit_next(&ls, s->ids[s->n_ids - 1], &left, &k);
			const Kprof__SavedLeafAddr *la = k < 0 ? NULL : sp->leaf_addrs[ls.order[k]];

			if (n == cap) {
				struct lrow *v =
				    realloc(rows, (cap = cap ? 2 * cap : 256) * sizeof(*v));

				if (!v) {
					err = -ENOMEM;
					break;
				}
				rows = v;
			}
			rows[n] = (struct lrow){folded_line(sp, &st, s, la, c), c};
			if (!rows[n].key) {
				err = -ENOMEM;
				break;
			}
			n++;
		}
	}
	if (err >= 0) {
		size_t m = merge_folded(rows, n);

		for (size_t i = 0; i < m; i++) {
			render_lines(out, rows[i].key);
			fprintf(out, " %" PRIu64 "\n", rows[i].count);
		}
		n = m;
	}
	for (size_t i = 0; i < n; i++)
		free(rows[i].key);
	free(rows);
	sites_release(&st);
	leafsplit_release(&ls);
	return err;
}

/* ---- hcct --lines ---- */

struct fkey {
	const char *name, *module;
	uint32_t idx;
};

static int by_fkey(const void *a, const void *b)
{
	const struct fkey *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->module, y->module);
}

/* The profile's function of that name and module, or -1. */
static int64_t func_of(const struct fkey *v, size_t n, const char *name, const char *module)
{
	struct fkey key = {name ? name : "", module ? module : "", 0};
	const struct fkey *k = bsearch(&key, v, n, sizeof(*v), by_fkey);

	return k ? (int64_t)k->idx : -1;
}

int lines_call_sites(Kprof__HcctReply *r, const Kprof__SavedProfile *sp)
{
	_cleanup_free_ struct fkey *v = calloc(sp->n_functions + 1, sizeof(*v));
	_cleanup_free_ int64_t *fn = calloc(r->n_nodes + 1, sizeof(*fn));
	struct sites st = {0};
	int err = v && fn ? sites_init(&st, sp) : -ENOMEM;

	if (err < 0) {
		sites_release(&st);
		return err;
	}
	for (size_t i = 0; i < sp->n_functions; i++)
		v[i] = (struct fkey){sp->functions[i]->name ? sp->functions[i]->name : "",
				     sp->functions[i]->module ? sp->functions[i]->module : "", i};
	qsort(v, sp->n_functions, sizeof(*v), by_fkey);
	for (size_t i = 0; i < r->n_nodes; i++) {
		Kprof__HcctNode *nd = r->nodes[i];
		const Kprof__SavedCallSite *c;

		fn[i] = func_of(v, sp->n_functions, nd->function, nd->module);
		if (nd->parent < 0 || (size_t)nd->parent >= i || fn[i] < 0 || fn[nd->parent] < 0)
			continue;
		c = sites_one(&st, fn[nd->parent], fn[i]);
		if (c) { /* the lines are sp's: r is shown before sp is freed */
			nd->call_site = c->lines;
			nd->n_call_site = c->n_lines;
		}
	}
	sites_release(&st);
	return 0;
}

/* ---- source text for annotate --lines ---- */

#define SRC_MAX_BYTES (4u << 20)

int lines_source_open(struct lines_src *ls)
{
	memset(ls, 0, sizeof(*ls));
	return 0;
}

void lines_source_close(struct lines_src *ls)
{
	free(ls->text);
	memset(ls, 0, sizeof(*ls));
}

/* ls->text: path's bytes, read with the caller's rights (a regular file of at most
 * SRC_MAX_BYTES); NULL if it cannot be read. */
static void load_source(struct lines_src *ls, const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	ssize_t n;

	free(ls->text);
	ls->text = NULL;
	ls->len = 0;
	snprintf(ls->path, sizeof(ls->path), "%s", path);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SRC_MAX_BYTES)
		return;
	ls->text = malloc(st.st_size + 1);
	if (!ls->text)
		return;
	n = read(fd, ls->text, st.st_size);
	ls->len = n > 0 ? (size_t)n : 0;
	ls->text[ls->len] = 0;
}

const char *lines_source(const char *file, uint32_t line, void *ud)
{
	struct lines_src *ls = ud;
	const char *p, *end;
	size_t k = 0;

	if (!file || file[0] != '/' || !line)
		return NULL;
	if (strcmp(ls->path, file))
		load_source(ls, file);
	if (!ls->text)
		return NULL;
	p = ls->text;
	for (uint32_t i = 1; i < line && p; i++) {
		p = memchr(p, '\n', ls->text + ls->len - p);
		p = p ? p + 1 : NULL;
	}
	if (!p || p >= ls->text + ls->len)
		return NULL;
	end = memchr(p, '\n', ls->text + ls->len - p);
	end = end ? end : ls->text + ls->len;
	for (; p < end && k + 8 < sizeof(ls->line); p++) { /* tabs as 8 columns */
		if (*p == '\t')
			do
				ls->line[k++] = ' ';
			while (k % 8);
		else
			ls->line[k++] = *p;
	}
	ls->line[k] = 0;
	return ls->line;
}
