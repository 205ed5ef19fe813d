// SPDX-License-Identifier: GPL-2.0-only
/* top_draw.c: the screen of `kprofctl top` (top.c keeps the updates, rows, keys and the loop).
 *
 * Nothing is left to ncurses' line wrapping: header lines flow, item by item, onto indented
 * lines (struct flow), rows are cut at the right edge (put_cut), and a name wider than its
 * column loses its middle ("..", put_fitted) rather than its end. Widths are display widths of
 * sanitized UTF-8 (text_width). The hot-context tree view (t) asks kprofd for the first target's
 * HCCT on a connection of its own. Apart from top.c because it only reads the view: it draws
 * what top.c built and calls nothing there.
 */
#include "top_draw.h"

#include <errno.h>
#include <inttypes.h>
#include <ncurses.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "client.h"
#include "drift.h"
#include "render.h"
#include "render_profile.h"

static const char *const sort_names[] = {"self%", "total%", "self(all)", "name", "off-cpu"};

/* The display width of the first len bytes of s (valid UTF-8 from render_sanitize, or ASCII),
 * and in *fit how many of its bytes fit in max columns. */
static int text_width(const char *s, size_t len, int max, size_t *fit)
{
	mbstate_t st = {0};
	int w = 0;
	size_t off = 0;

	while (off < len) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s + off, len - off, &st);
		int cw;

		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			n = 1; /* not in this locale's charset: one column, as ncurses shows it */
			cw = 1;
			memset(&st, 0, sizeof(st));
		} else {
			cw = wcwidth(wc);
			cw = cw < 0 ? 1 : cw;
		}
		if (w + cw > max)
			break;
		w += cw;
		off += n;
	}
	if (fit)
		*fit = off;
	return w;
}

/* s at (y, x), cut at the right edge of the screen: ncurses would wrap it onto the next line. */
static void put_cut(int y, int x, const char *s)
{
	size_t fit;

	if (y < 0 || y >= LINES || x >= COLS)
		return;
	text_width(s, strlen(s), COLS - x, &fit);
	mvaddnstr(y, x, s, (int)fit);
}

/* A header line that flows onto the next ones, indented by two, where it is wider than the
 * screen: its items are placed whole (one wider than the screen alone is cut). */
struct flow {
	int y, x, maxy;
};

static void flow_item(struct flow *f, const char *item)
{
	int w = text_width(item, strlen(item), INT32_MAX, NULL);

	if (f->x > 0 && f->x + 1 + w > COLS && f->y + 1 < f->maxy) {
		f->y++;
		f->x = 2;
	} else if (f->x > 0) {
		f->x++;
	}
	put_cut(f->y, f->x, item);
	f->x += w;
}

__attribute__((format(printf, 2, 3))) static void flow_itemf(struct flow *f, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	flow_item(f, buf);
}

/* Finish a flowed line: the next one starts on a row of its own. */
static void flow_end(struct flow *f)
{
	f->y++;
	f->x = 0;
}

/* The legend of TREND (hist_push's levels: each glyph with the SELF% it stands for, the
 * nearest), as the tab-separated items of a header line. */
static const char legend[] = "TREND\t(SELF% of the\tlast 8 intervals,\toldest left):\t[ ]0\t[.]14\t"
			     "[:]29\t[-]43\t[=]57\t[+]71\t[*]86\t[#]100%";

/* A target's newest profile drift, on a line of its own, in bold (kprofctl drift PID says more). */
static void header_drift(struct flow *f, const Kprof__DriftEvent *e)
{
	time_t sec = (time_t)(e->realtime_ns / 1000000000ULL);
	char *fn = render_sanitize_dup(e->function, 60);
	char when[16] = "?";
	struct tm tm;

	if (localtime_r(&sec, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	attron(A_BOLD);
	flow_itemf(f, "  drift #%" PRIu64 " at %s:", e->seq, when);
	flow_itemf(f, "%s", fn ? fn : "?");
	flow_itemf(f, "overlap %.1f%% with its reference", 100 * e->overlap);
	attroff(A_BOLD);
	flow_end(f);
	free(fn);
}

/* The header: kprofd's status, a line per target (the first three), the legend of TREND.
 * Returns the number of rows it took. */
static int draw_header(struct view *v)
{
	const Kprof__UpdateReply *u = v->last ? v->last->update : NULL;
	const Kprof__StatusReply *s = u ? u->status : NULL;
	struct flow f = {.maxy = LINES > 4 ? LINES - 3 : 1};
	char clock[16], *c;
	time_t now = time(NULL);

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	attron(A_BOLD);
	flow_itemf(&f, "kprof top  %s", clock);
	attroff(A_BOLD);
	if (!s) {
		flow_item(&f, "waiting for kprofd...");
		flow_end(&f);
		return f.y;
	}
	c = render_sanitize_dup(s->version, 32);
	flow_itemf(&f, "kprofd %s pid %u:", c ? c : "?", s->pid);
	free(c);
	flow_itemf(&f, "%u target%s attached,", s->targets_attached,
		   render_plural(s->targets_attached));
	flow_itemf(&f, "%.0f samples/s,", s->samples_per_sec);
	flow_itemf(&f, "%" PRIu64 " drop%s,", s->drops, render_plural(s->drops));
	flow_itemf(&f, "kprofd CPU %.1f%%", v->daemon_cpu_pct);
	flow_end(&f);
	for (size_t i = 0; i < u->n_targets && i < 3; i++) {
		const Kprof__TopTarget *t = u->targets[i];

		c = render_sanitize_dup(t->target->comm, 16);
		flow_itemf(&f, "pid %u (%s)", t->target->pid, c ? c : "?");
		free(c);
		flow_itemf(&f, "%s,", render_state(t->target->state));
		flow_itemf(&f, "%u Hz,", t->target->freq_hz);
		flow_itemf(&f, "%" PRIu64 " sample%s in %.1f s,", t->interval_samples,
			   render_plural(t->interval_samples), u->interval_ms / 1000.0);
		flow_itemf(&f, "%" PRIu64 " in all", t->target->samples);
		if (t->target->off_cpu)
			flow_itemf(&f, ", off CPU %.2f s in the interval",
				   t->interval_off_cpu / 1e9);
		flow_end(&f);
		if (t->n_drift_events)
			header_drift(&f, t->drift_events[t->n_drift_events - 1]);
	}
	if (!u->n_targets) {
		flow_item(&f, "no targets (kprofctl attach PID)");
		flow_end(&f);
	}
	attron(A_DIM);
	for (const char *p = legend, *tab; *p; p = *tab ? tab + 1 : tab) {
		char item[64];

		tab = p + strcspn(p, "\t");
		snprintf(item, sizeof(item), "%.*s", (int)(tab - p), p);
		flow_item(&f, item);
	}
	attroff(A_DIM);
	flow_end(&f);
	return f.y;
}

/* s (sanitized) in exactly w columns: padded, or its middle replaced by "..". */
static void put_fitted(FILE *f, const char *s, int w)
{
	size_t len = strlen(s), head, tail;
	int sw = text_width(s, len, INT32_MAX, NULL);

	if (sw <= w) {
		fputs(s, f);
		for (; sw < w; sw++)
			fputc(' ', f);
		return;
	}
	if (w < 5) {
		text_width(s, len, w, &head);
		fwrite(s, 1, head, f);
		return;
	}
	/* "NAME /path/file.js:3:9" (V8, and a JIT's "NAME FILE" in general): the path is the
	 * least useful part: NAME whole, the path's end. */
	const char *sp = strchr(s, ' ');
	int nw = sp ? text_width(s, sp - s, INT32_MAX, NULL) : 0;

	if (sp && nw + 4 <= w) {
		text_width(s, len, sw - (w - nw - 3), &tail);
		while (tail < len && (s[tail] & 0xc0) == 0x80)
			tail++;
		fwrite(s, 1, sp - s, f);
		fputs(" ..", f);
		fputs(s + tail, f);
		return;
	}
	/* A third before "..", the rest after it: the end names the function. */
	text_width(s, len, (w - 2) / 3, &head);
	text_width(s, len, sw - (w - 2 - (w - 2) / 3), &tail);
	while (tail < len && (s[tail] & 0xc0) == 0x80)
		tail++;
	fwrite(s, 1, head, f);
	fputs("..", f);
	fputs(s + tail, f);
}

/* The OFF-CPU column: the time a function's threads waited in it in the interval, "-" if none. */
static void off_cpu_cell(FILE *f, uint64_t ns)
{
	if (!ns)
		fprintf(f, "%8s ", "-");
	else if (ns >= 1000000000ULL)
		fprintf(f, "%7.2fs ", ns / 1e9);
	else
		fprintf(f, "%6.1fms ", ns / 1e6);
}

static void draw_rows(struct view *v, int top, int height)
{
	char *line = NULL;
	size_t len = 0;
	int fw, modw = 6; /* "MODULE" */
	FILE *f;

	v->page = height - 1 > 1 ? height - 1 : 1;
	if (v->scroll > (int)v->nrows - 1)
		v->scroll = v->nrows ? (int)v->nrows - 1 : 0;
	/* FUNCTION gets what the modules on the page leave of the screen's width. */
	for (int i = 0; i < height - 1 && v->scroll + i < (int)v->nrows; i++) {
		char *mod = render_sanitize_dup(v->rows[v->scroll + i].e->module, MAX_MODULE);
		int w = mod ? text_width(mod, strlen(mod), MAX_MODULE, NULL) : 1;

		modw = w > modw ? w : modw;
		free(mod);
	}
	/* One target: its pid is in the header, not a column repeating it on every row. */
	bool pids = false;

	for (size_t i = 1; i < v->nrows; i++)
		pids |= v->rows[i].pid != v->rows[0].pid;
	fw = COLS - ROW_PREFIX + (pids ? 0 : 9) - (v->off_cpu ? OFF_CPU_COL : 0) - 1 - modw;
	fw = fw < MIN_FN ? MIN_FN : fw;
	f = open_memstream(&line, &len);
	if (!f)
		return;
	if (pids)
		fprintf(f, "%-8s ", "PID");
	fprintf(f, "%7s %7s ", "SELF%", "TOTAL%");
	if (v->off_cpu)
		fprintf(f, "%8s ", "OFF-CPU");
	fprintf(f, "%10s %-8s %-7s ", "SELF(all)", "TREND", "KIND");
	put_fitted(f, "FUNCTION", fw);
	fputs(" MODULE", f);
	fflush(f);
	attron(A_REVERSE);
	put_cut(top, 0, line);
	clrtoeol();
	attroff(A_REVERSE);
	for (int i = 0; i < height - 1 && v->scroll + i < (int)v->nrows; i++) {
		const struct row *r = &v->rows[v->scroll + i];
		char *fn = render_sanitize_dup(r->name, SIZE_MAX);
		char *mod = render_sanitize_dup(r->e->module, 200);

		rewind(f);
		if (pids)
			fprintf(f, "%-8u ", r->pid);
		fprintf(f, "%6.1f%% %6.1f%% ", r->self_pct, r->total_pct);
		if (v->off_cpu)
			off_cpu_cell(f, r->e->off_cpu_self);
		fprintf(f, "%10" PRIu64 " %-8s %-7s ", r->e->self_all, r->trend,
			render_kind(r->e->kind));
		put_fitted(f, fn ? fn : "?", fw);
		fprintf(f, " %s", mod ? mod : "?");
		fputc('\0', f);
		fflush(f);
		put_cut(top + 1 + i, 0, line);
		free(fn);
		free(mod);
	}
	fclose(f);
	free(line);
}

/* The HCCT of the first watched target, from a separate connection. */
static void draw_tree(struct view *v, int top, int height)
{
	const Kprof__UpdateReply *u = v->last ? v->last->update : NULL;
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__HcctRequest hr = KPROF__HCCT_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	_cleanup_close_ int fd = -1;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int line = 0;

	if (!u || !u->n_targets) {
		put_cut(top, 0, "no target for the tree view");
		return;
	}
	hr.pid = u->targets[0]->target->pid;
	req.body_case = KPROF__REQUEST__BODY_HCCT;
	req.hcct = &hr;
	fd = client_connect(v->socket_path);
	if (fd < 0 || client_call(fd, &req, &rep) < 0) {
		put_cut(top, 0, "cannot ask kprofd for the HCCT");
		return;
	}
	if (rep->error) {
		char *m = render_sanitize_dup(rep->message, SIZE_MAX);

		put_cut(top, 0, "HCCT: ");
		put_cut(top, 6, m ? m : "?");
		free(m);
		kprof__reply__free_unpacked(rep, NULL);
		return;
	}
	f = open_memstream(&buf, &len);
	if (f) {
		render_hcct(f, rep->hcct, false, v->full_names);
		fclose(f);
		for (char *p = buf, *nl; p && *p && line < height; p = nl ? nl + 1 : NULL, line++) {
			nl = strchr(p, '\n');
			if (nl)
				*nl = '\0';
			put_cut(top + line, 0, p);
		}
	}
	free(buf);
	kprof__reply__free_unpacked(rep, NULL);
}

void top_draw(struct view *v)
{
	int rows = LINES, top;
	char help[512];

	erase();
	top = draw_header(v);
	if (v->tree)
		draw_tree(v, top, rows - top - 1);
	else if (v->last)
		draw_rows(v, top, rows - top - 1);
	attron(A_REVERSE);
	snprintf(help, sizeof(help),
		 " q quit  s sort: %s  p %s  t %s  / filter%s%s%s  arrows Home End scroll  %s",
		 sort_names[v->sort], v->paused ? "resume" : "pause",
		 v->tree ? "functions" : "tree", v->filter[0] ? " [" : "", v->filter,
		 v->filter[0] ? "]" : "", v->msg);
	put_cut(rows - 1, 0, help);
	clrtoeol();
	attroff(A_REVERSE);
	refresh();
}
