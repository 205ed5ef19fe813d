// SPDX-License-Identifier: GPL-2.0-only
/* top.c: `kprofctl top`, a live top-style view of where attached processes spend their time.
 *
 * One connection subscribes to the daemon's live updates (one frame per interval with the
 * per-function sample deltas of each watched target, computed in the daemon: the view never
 * re-reads whole profiles). The screen shows a header (targets, sample rate, drops, kprofd's
 * own CPU, the legend of the trend) and one row per function, sorted by its self time in the
 * last interval (samples / Hz, so the rows of several targets compare; the percentages shown
 * are of each row's own target), with a short trend of its last intervals. Nothing is left to
 * ncurses' line wrapping: header lines flow, item by item, onto indented lines, rows are cut at the
 * right edge. The FUNCTION column takes the width the screen leaves after the fixed columns and
 * the modules (ncurses' COLS: TIOCGWINSZ on the terminal, else $COLUMNS, else terminfo's 80), at
 * least MIN_FN columns; a longer name loses its middle ("..") rather than its end, where C++
 * names keep the method and JS names the line. Names are shown as render_names() makes them
 * (C++ without parameter lists) unless --full-names. Keys: q quit, s sort column, p pause, t
 * hot-context tree (a separate connection asks for the HCCT of the first target), / filter, arrows,
 * PgUp/PgDn, Home/End scroll. Ctrl-C and SIGTERM quit as q does; after --iterations N the last
 * screen is printed again once ncurses has left the alternate screen, so it stays on the terminal
 * (as top -n does). With --json the updates are printed as JSON lines instead (no terminal needed).
 * Every string from kprofd (names, comm, version, error messages) reaches the screen through
 * render_sanitize() (see render.c), the JSON lines through render_json_string().
 */
#include "top.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <ncurses.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "client.h"
#include "render.h"
#include "render_profile.h"
#include "drift.h"

#define TREND_LEN 8
/* The columns before FUNCTION: "%-8u %6.1f%% %6.1f%% %10s %-8s %-7s ". */
#define ROW_PREFIX 53
#define MIN_FN 24
#define MAX_MODULE 32

enum sort_key { SORT_SELF, SORT_TOTAL, SORT_SELF_ALL, SORT_NAME, SORT_N };
static const char *const sort_names[] = {"self%", "total%", "self(all)", "name"};

struct row {
	uint32_t pid;
	const Kprof__TopEntry *e;
	const char *name;	    /* the function's name as shown */
	double self_pct, total_pct; /* of its own target's samples in the interval */
	/* CPU seconds in the interval (samples / Hz): what compares across targets, whose
	 * percentages have different wholes and whose samples different rates. */
	double self_cpu, total_cpu;
	/* A copy: the histories live in an array that grows (moves) while rows are built. */
	char trend[TREND_LEN + 1];
};

/* Per-function history of self percent, for the trend column. */
struct hist {
	char *key;
	double v[TREND_LEN];
	uint64_t seq;
	char trend[TREND_LEN + 1];
};

struct view {
	Kprof__Reply *last; /* latest update */
	struct hist *hist;
	size_t nhist, caphist;
	struct row *rows;
	size_t nrows;
	const char **names; /* render_names of the rows, or NULL: names whole */
	enum sort_key sort;
	bool paused, tree;
	char filter[64];
	int scroll, page; /* first row shown; rows on a page */
	char msg[160];
	char *error; /* kprofd's error, sanitized, printed once the screen is gone */
	uint64_t prev_cpu_ns, prev_uptime_ns;
	double daemon_cpu_pct;
	time_t drawn_at;
	const struct top_opts *o;
};

static struct hist *hist_get(struct view *v, uint32_t pid, const Kprof__TopEntry *e)
{
	char key[512];

	snprintf(key, sizeof(key), "%u\x1f%s\x1f%s", pid, e->function, e->module);
	for (size_t i = 0; i < v->nhist; i++)
		if (!strcmp(v->hist[i].key, key))
			return &v->hist[i];
	if (array_grow((void **)&v->hist, &v->caphist, v->nhist + 1, sizeof(*v->hist), 64) < 0)
		return NULL;
	v->hist[v->nhist] = (struct hist){.key = strdup(key)};
	if (!v->hist[v->nhist].key)
		return NULL;
	return &v->hist[v->nhist++];
}

/* Record this interval's value; the trend maps each of the last values to " .:-=+*#". */
static void hist_push(struct hist *h, double pct, uint64_t seq)
{
	static const char levels[] = " .:-=+*#";

	if (h->seq != seq) {
		memmove(h->v, h->v + 1, (TREND_LEN - 1) * sizeof(h->v[0]));
		h->v[TREND_LEN - 1] = pct;
		h->seq = seq;
	}
	for (int i = 0; i < TREND_LEN; i++) {
		int l = (int)(h->v[i] / 100.0 * 7.0 + 0.5);

		h->trend[i] = levels[l < 0 ? 0 : l > 7 ? 7 : l];
	}
	h->trend[TREND_LEN] = '\0';
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct row *x = a, *y = b;
	enum sort_key k = *(enum sort_key *)ctx;

	switch (k) {
	case SORT_TOTAL:
		if (x->total_cpu != y->total_cpu)
			return x->total_cpu > y->total_cpu ? -1 : 1;
		break;
	case SORT_SELF_ALL:
		if (x->e->self_all != y->e->self_all)
			return x->e->self_all > y->e->self_all ? -1 : 1;
		break;
	case SORT_NAME:
		return strcmp(x->name, y->name);
	default:
		break;
	}
	/* By CPU time, not percent: with several targets, 90% of an idle process is less than
	 * 10% of a busy one (with one target the two orders are the same). */
	if (x->self_cpu != y->self_cpu)
		return x->self_cpu > y->self_cpu ? -1 : 1;
	if (x->total_cpu != y->total_cpu)
		return x->total_cpu > y->total_cpu ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Each row's name as shown (render_names, unless --full-names or out of memory), then the
 * filter, on the name whole or as shown. */
static void name_rows(struct view *v)
{
	const char **full = v->o->full_names ? NULL : malloc((v->nrows + 1) * sizeof(*full));
	size_t n = 0;

	free(v->names);
	v->names = NULL;
	if (full) {
		for (size_t i = 0; i < v->nrows; i++)
			full[i] = v->rows[i].e->function;
		v->names = render_names(full, v->nrows);
		free(full);
	}
	for (size_t i = 0; i < v->nrows; i++) {
		struct row *r = &v->rows[i];

		r->name = v->names ? v->names[i] : r->e->function;
		if (v->filter[0] && !strstr(r->e->function, v->filter) &&
		    !strstr(r->name, v->filter))
			continue;
		v->rows[n++] = *r;
	}
	v->nrows = n;
}

/* Rows from the last update: filter, percentages of each target's interval, trend, sort. */
static void build_rows(struct view *v)
{
	const Kprof__UpdateReply *u = v->last->update;
	size_t n = 0;

	for (size_t i = 0; i < u->n_targets; i++)
		n += u->targets[i]->n_entries;
	free(v->rows);
	v->rows = calloc(n + 1, sizeof(*v->rows));
	v->nrows = 0;
	if (!v->rows)
		return;
	for (size_t i = 0; i < u->n_targets; i++) {
		const Kprof__TopTarget *t = u->targets[i];
		uint64_t all = t->interval_samples;
		unsigned hz = t->target ? t->target->freq_hz : 0;

		for (size_t j = 0; j < t->n_entries; j++) {
			const Kprof__TopEntry *e = t->entries[j];
			struct row *r = &v->rows[v->nrows];
			struct hist *h = hist_get(v, t->target->pid, e);

			r->pid = t->target->pid;
			r->e = e;
			r->self_pct = all ? 100.0 * e->self / all : 0;
			r->total_pct = all ? 100.0 * e->total / all : 0;
			r->self_cpu = hz ? (double)e->self / hz : 0;
			r->total_cpu = hz ? (double)e->total / hz : 0;
			if (h) {
				hist_push(h, r->self_pct, u->seq);
				memcpy(r->trend, h->trend, sizeof(r->trend));
			}
			if (!e->self_all && !e->total_all)
				continue;
			v->nrows++;
		}
	}
	name_rows(v);
	qsort_r(v->rows, v->nrows, sizeof(*v->rows), cmp_rows, &v->sort);
}

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

/* The header: kprofd's status, a line per target (the first three), the legend of TREND.
 * Returns the number of rows it took. */
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
	/* A third before "..", the rest after it: the end names the function. */
	text_width(s, len, (w - 2) / 3, &head);
	text_width(s, len, sw - (w - 2 - (w - 2) / 3), &tail);
	while (tail < len && (s[tail] & 0xc0) == 0x80)
		tail++;
	fwrite(s, 1, head, f);
	fputs("..", f);
	fputs(s + tail, f);
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
	fw = COLS - ROW_PREFIX - 1 - modw;
	fw = fw < MIN_FN ? MIN_FN : fw;
	f = open_memstream(&line, &len);
	if (!f)
		return;
	fprintf(f, "%-8s %7s %7s %10s %-8s %-7s ", "PID", "SELF%", "TOTAL%", "SELF(all)", "TREND",
		"KIND");
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
		fprintf(f, "%-8u %6.1f%% %6.1f%% %10" PRIu64 " %-8s %-7s ", r->pid, r->self_pct,
			r->total_pct, r->e->self_all, r->trend, render_kind(r->e->kind));
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
	fd = client_connect(v->o->socket_path);
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
		render_hcct(f, rep->hcct, false, v->o->full_names);
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

static void draw(struct view *v)
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

static void prompt_filter(struct view *v)
{
	char buf[sizeof(v->filter)] = "";

	mvprintw(LINES - 1, 0, "filter (empty: none): ");
	clrtoeol();
	echo();
	curs_set(1);
	timeout(-1);
	getnstr(buf, sizeof(buf) - 1);
	noecho();
	curs_set(0);
	timeout(0);
	snprintf(v->filter, sizeof(v->filter), "%s", buf);
	v->scroll = 0;
	if (v->last)
		build_rows(v);
}

/* A key; false to quit. */
static bool on_key(struct view *v, int ch)
{
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case 's':
		v->sort = (v->sort + 1) % SORT_N;
		break;
	case 'p':
		v->paused = !v->paused;
		break;
	case 't':
		v->tree = !v->tree;
		break;
	case '/':
		prompt_filter(v);
		break;
	case KEY_UP:
		v->scroll -= v->scroll > 0;
		break;
	case KEY_DOWN:
		v->scroll++;
		break;
	case KEY_PPAGE:
		v->scroll = v->scroll > v->page ? v->scroll - v->page : 0;
		break;
	case KEY_NPAGE:
		v->scroll += v->page;
		break;
	case KEY_HOME:
		v->scroll = 0;
		break;
	case KEY_END:
		/* The last row at the bottom of the page. */
		v->scroll = (int)v->nrows > v->page ? (int)v->nrows - v->page : 0;
		break;
	default:
		return true;
	}
	if (v->last)
		build_rows(v);
	return true;
}

static void print_json(const Kprof__UpdateReply *u)
{
	printf("{\"seq\":%" PRIu64 ",\"interval_ms\":%u,\"samples_per_sec\":%.1f,\"drops\":%" PRIu64
	       ",\"targets\":[",
	       u->seq, u->interval_ms, u->status ? u->status->samples_per_sec : 0,
	       u->status ? u->status->drops : 0);
	for (size_t i = 0; i < u->n_targets; i++) {
		const Kprof__TopTarget *t = u->targets[i];

		printf("%s{\"target\":", i ? "," : "");
		render_target_json(stdout, t->target);
		fputs(",\"drift_events\":[", stdout);
		for (size_t j = 0; j < t->n_drift_events; j++) {
			fputs(j ? "," : "", stdout);
			drift_render_event_json(stdout, t->drift_events[j]);
		}
		printf("],\"interval_samples\":%" PRIu64 ",\"entries\":[", t->interval_samples);
		for (size_t j = 0; j < t->n_entries; j++) {
			const Kprof__TopEntry *e = t->entries[j];

			printf("%s{\"function\":", j ? "," : "");
			render_json_string(stdout, e->function);
			fputs(",\"module\":", stdout);
			render_json_string(stdout, e->module);
			printf(",\"kind\":\"%s\",\"self\":%" PRIu64 ",\"total\":%" PRIu64
			       ",\"self_all\":%" PRIu64 ",\"total_all\":%" PRIu64 "}",
			       render_kind(e->kind), e->self, e->total, e->self_all, e->total_all);
		}
		fputs("]}", stdout);
	}
	fputs("]}\n", stdout);
	fflush(stdout);
}

/* Take in one update; on a daemon error reply, report it. */
static int on_update(struct view *v, Kprof__Reply *rep)
{
	const Kprof__StatusReply *s;

	if (rep->error || rep->body_case != KPROF__REPLY__BODY_UPDATE) {
		v->error = render_sanitize_dup(
		    rep->error ? rep->message : "unexpected reply from kprofd", SIZE_MAX);
		kprof__reply__free_unpacked(rep, NULL);
		return -EPROTO;
	}
	if (v->o->json) {
		print_json(rep->update);
		kprof__reply__free_unpacked(rep, NULL);
		return 0;
	}
	s = rep->update->status;
	if (s && v->prev_uptime_ns && s->uptime_ns > v->prev_uptime_ns)
		v->daemon_cpu_pct = 100.0 * (double)(s->cpu_ns - v->prev_cpu_ns) /
				    (double)(s->uptime_ns - v->prev_uptime_ns);
	if (s) {
		v->prev_cpu_ns = s->cpu_ns;
		v->prev_uptime_ns = s->uptime_ns;
	}
	if (v->paused) {
		kprof__reply__free_unpacked(rep, NULL);
		return 0;
	}
	if (v->last)
		kprof__reply__free_unpacked(v->last, NULL);
	v->last = rep;
	build_rows(v);
	return 0;
}

static volatile sig_atomic_t quit_signal;

static void on_quit_signal(int sig)
{
	quit_signal = sig;
}

static int loop(struct view *v, int fd)
{
	unsigned seen = 0;

	for (;;) {
		struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
		bool redraw = false;
		/* A timeout, so that a signal just before poll waits no longer than this. */
		int n = poll(pfd, v->o->json ? 1 : 2, 250);

		if (quit_signal)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0 && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			Kprof__Reply *rep = NULL;
			int err = client_recv(fd, &rep);

			if (err < 0)
				return err;
			if (on_update(v, rep) < 0)
				return -EPROTO;
			redraw = true;
			if (v->o->iterations && ++seen >= v->o->iterations) {
				if (!v->o->json)
					draw(v); /* the last update is the screen left behind */
				return 0;
			}
		}
		if (!v->o->json) {
			int ch;

			while ((ch = getch()) != ERR) {
				if (!on_key(v, ch) || quit_signal)
					return 0;
				redraw = true;
			}
			/* New data, a key (KEY_RESIZE included) or a second gone by. */
			if (redraw || time(NULL) != v->drawn_at) {
				v->drawn_at = time(NULL);
				draw(v);
			}
		}
	}
}

/* The screen as text, but for the keys' line at the bottom and blank rows at the end: what
 * top leaves on the terminal after --iterations, as top -n and perf top do. */
static char *screen_text(void)
{
	_cleanup_free_ char *line = malloc((size_t)COLS * MB_LEN_MAX + 1);
	char *buf = NULL;
	size_t len = 0;
	int blank = 0;
	FILE *f;

	if (!line || !(f = open_memstream(&buf, &len)))
		return NULL;
	for (int y = 0; y < LINES - 1; y++) {
		int n = mvinnstr(y, 0, line, COLS * MB_LEN_MAX);

		while (n > 0 && line[n - 1] == ' ')
			n--;
		if (n <= 0) {
			blank++;
			continue;
		}
		for (; blank; blank--)
			fputc('\n', f);
		fprintf(f, "%.*s\n", n, line);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int subscribe(int fd, const struct top_opts *o)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__SubscribeRequest sr = KPROF__SUBSCRIBE_REQUEST__INIT;

	sr.pids = o->pids;
	sr.n_pids = o->npids;
	sr.interval_ms = o->interval_ms;
	sr.top = 200;
	req.body_case = KPROF__REQUEST__BODY_SUBSCRIBE;
	req.subscribe = &sr;
	return client_send(fd, &req);
}

static void screen_start(struct view *v)
{
	setlocale(LC_ALL, "");
	/* The terminal's size from TIOCGWINSZ first; $COLUMNS and $LINES only without it. */
	use_tioctl(TRUE);
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	timeout(0);
	draw(v);
}

/* Print the view's error, if any, and free it. */
static void view_end(struct view *v)
{
	if (v->error) {
		fprintf(stderr, "kprofctl top: %s\n", v->error);
		free(v->error);
	}
	if (v->last)
		kprof__reply__free_unpacked(v->last, NULL);
	for (size_t i = 0; i < v->nhist; i++)
		free(v->hist[i].key);
	free(v->hist);
	free(v->rows);
	free(v->names);
}

int top_run(const struct top_opts *o)
{
	_cleanup_close_ int fd = client_connect(o->socket_path);
	struct view v = {.o = o};
	struct sigaction sa = {.sa_handler = on_quit_signal}, old_int, old_term;
	_cleanup_free_ char *last_screen = NULL;
	int err;

	if (fd < 0) {
		fprintf(stderr, "kprofctl: cannot connect to kprofd at %s: %s%s\n", o->socket_path,
			strerror(-fd),
			fd == -ENOENT || fd == -ECONNREFUSED ? " (is kprofd running?)" : "");
		return KPROFCTL_EXIT_NO_DAEMON;
	}
	err = subscribe(fd, o);
	if (err < 0) {
		fprintf(stderr, "kprofctl top: %s\n", strerror(-err));
		return KPROFCTL_EXIT_NO_DAEMON;
	}
	if (!o->json && (!isatty(0) || !isatty(1))) {
		fprintf(stderr, "kprofctl top: needs a terminal (or --json)\n");
		return KPROFCTL_EXIT_USAGE;
	}
	/* Ctrl-C and SIGTERM quit as q does (exit status 0, terminal restored). Installed before
	 * initscr, which then leaves them alone (its own handlers exit with status 1). No
	 * SA_RESTART: poll returns. */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (!o->json)
		screen_start(&v);
	err = loop(&v, fd);
	if (!o->json) {
		if (!err && o->iterations)
			last_screen = screen_text();
		endwin();
		if (last_screen)
			fputs(last_screen, stdout);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	view_end(&v);
	if (err == -EPROTO)
		return KPROFCTL_EXIT_ERROR;
	if (err < 0) {
		fprintf(stderr, "kprofctl top: connection to kprofd lost: %s\n", strerror(-err));
		return KPROFCTL_EXIT_NO_DAEMON;
	}
	return 0;
}
