// SPDX-License-Identifier: GPL-2.0-only
/* top.c: `kprofctl top`, a live top-style view of where attached processes spend their time.
 *
 * One connection subscribes to the daemon's live updates (one frame per interval with the
 * per-function sample deltas of each watched target, computed in the daemon: the view never
 * re-reads whole profiles). The screen shows a header (targets, sample rate, drops, kprofd's
 * own CPU) and one row per function, sorted by self percent of the last interval, with a short
 * trend of its last intervals. Keys: q quit, s sort column, p pause, t hot-context tree (a
 * separate connection asks for the HCCT of the first target), / filter, arrows and PgUp/PgDn
 * scroll. With --json the updates are printed as JSON lines instead (no terminal needed).
 * Every string from kprofd (names, comm, version, error messages) reaches the screen through
 * render_sanitize() (see render.c), the JSON lines through render_json_string().
 */
#include "top.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <ncurses.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "client.h"
#include "render.h"

#define TREND_LEN 8

enum sort_key { SORT_SELF, SORT_TOTAL, SORT_SELF_ALL, SORT_NAME, SORT_N };
static const char *const sort_names[] = {"self%", "total%", "self(all)", "name"};

struct row {
	uint32_t pid;
	const Kprof__TopEntry *e;
	double self_pct, total_pct;
	const char *trend;
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
	enum sort_key sort;
	bool paused, tree;
	char filter[64];
	int scroll;
	char msg[160];
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
		if (x->total_pct != y->total_pct)
			return x->total_pct > y->total_pct ? -1 : 1;
		break;
	case SORT_SELF_ALL:
		if (x->e->self_all != y->e->self_all)
			return x->e->self_all > y->e->self_all ? -1 : 1;
		break;
	case SORT_NAME:
		return strcmp(x->e->function, y->e->function);
	default:
		break;
	}
	if (x->self_pct != y->self_pct)
		return x->self_pct > y->self_pct ? -1 : 1;
	if (x->total_pct != y->total_pct)
		return x->total_pct > y->total_pct ? -1 : 1;
	return strcmp(x->e->function, y->e->function);
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

		for (size_t j = 0; j < t->n_entries; j++) {
			const Kprof__TopEntry *e = t->entries[j];
			struct row *r = &v->rows[v->nrows];
			struct hist *h = hist_get(v, t->target->pid, e);

			r->pid = t->target->pid;
			r->e = e;
			r->self_pct = all ? 100.0 * e->self / all : 0;
			r->total_pct = all ? 100.0 * e->total / all : 0;
			if (h) {
				hist_push(h, r->self_pct, u->seq);
				r->trend = h->trend;
			}
			if (v->filter[0] && !strstr(e->function, v->filter))
				continue;
			if (!e->self_all && !e->total_all)
				continue;
			v->nrows++;
		}
	}
	qsort_r(v->rows, v->nrows, sizeof(*v->rows), cmp_rows, &v->sort);
}

/* mvprintw at (y, x) of fmt, whose one %s is s sanitized to at most max characters. */
static void put_clean(int y, int x, const char *fmt, const char *s, size_t max)
{
	char *c = render_sanitize_dup(s, max);

	mvprintw(y, x, fmt, c ? c : "?");
	free(c);
}

static void draw_header(struct view *v)
{
	const Kprof__UpdateReply *u = v->last ? v->last->update : NULL;
	const Kprof__StatusReply *s = u ? u->status : NULL;
	char clock[16];
	time_t now = time(NULL);

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	attron(A_BOLD);
	mvprintw(0, 0, "kprof top  %s", clock);
	attroff(A_BOLD);
	if (!s) {
		mvprintw(1, 0, "waiting for kprofd...");
		return;
	}
	put_clean(0, 20, "kprofd %s", s->version, 32);
	printw(" pid %u: %u targets attached, %.0f samples/s, %" PRIu64 " drops, kprofd CPU %.1f%%",
	       s->pid, s->targets_attached, s->samples_per_sec, s->drops, v->daemon_cpu_pct);
	for (size_t i = 0; i < u->n_targets && i < 3; i++) {
		const Kprof__TopTarget *t = u->targets[i];

		mvprintw(1 + i, 0, "pid %u (", t->target->pid);
		put_clean(1 + i, getcurx(stdscr), "%s", t->target->comm, 16);
		printw(") %s, %u Hz, %" PRIu64 " samples in %.1f s, %" PRIu64 " in all",
		       render_state(t->target->state), t->target->freq_hz, t->interval_samples,
		       u->interval_ms / 1000.0, t->target->samples);
	}
	if (!u->n_targets)
		mvprintw(1, 0, "no targets (kprofctl attach PID)");
}

static void draw_rows(struct view *v, int top, int height)
{
	attron(A_REVERSE);
	mvprintw(top, 0, "%-8s %7s %7s %10s %-8s %-7s %-40s %s", "PID", "SELF%", "TOTAL%",
		 "SELF(all)", "TREND", "KIND", "FUNCTION", "MODULE");
	clrtoeol();
	attroff(A_REVERSE);
	if (v->scroll > (int)v->nrows - 1)
		v->scroll = v->nrows ? (int)v->nrows - 1 : 0;
	for (int i = 0; i < height - 1 && v->scroll + i < (int)v->nrows; i++) {
		const struct row *r = &v->rows[v->scroll + i];

		mvprintw(top + 1 + i, 0, "%-8u %6.1f%% %6.1f%% %10" PRIu64 " %-8s %-7s ", r->pid,
			 r->self_pct, r->total_pct, r->e->self_all, r->trend ? r->trend : "",
			 render_kind(r->e->kind));
		put_clean(top + 1 + i, getcurx(stdscr), "%-40s ", r->e->function, 40);
		put_clean(top + 1 + i, getcurx(stdscr), "%s", r->e->module, SIZE_MAX);
	}
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
		mvprintw(top, 0, "no target for the tree view");
		return;
	}
	hr.pid = u->targets[0]->target->pid;
	req.body_case = KPROF__REQUEST__BODY_HCCT;
	req.hcct = &hr;
	fd = client_connect(v->o->socket_path);
	if (fd < 0 || client_call(fd, &req, &rep) < 0) {
		mvprintw(top, 0, "cannot ask kprofd for the HCCT");
		return;
	}
	if (rep->error) {
		put_clean(top, 0, "HCCT: %s", rep->message, SIZE_MAX);
		kprof__reply__free_unpacked(rep, NULL);
		return;
	}
	f = open_memstream(&buf, &len);
	if (f) {
		render_hcct(f, rep->hcct, false);
		fclose(f);
		for (char *p = buf, *nl; p && *p && line < height; p = nl ? nl + 1 : NULL, line++) {
			nl = strchr(p, '\n');
			mvprintw(top + line, 0, "%.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
		}
	}
	free(buf);
	kprof__reply__free_unpacked(rep, NULL);
}

static void draw(struct view *v)
{
	int rows = LINES, top = 5;

	erase();
	draw_header(v);
	if (v->tree)
		draw_tree(v, top, rows - top - 1);
	else if (v->last)
		draw_rows(v, top, rows - top - 1);
	attron(A_REVERSE);
	mvprintw(rows - 1, 0, " q quit  s sort: %s  p %s  t %s  / filter%s%s%s  arrows scroll  %s",
		 sort_names[v->sort], v->paused ? "resume" : "pause",
		 v->tree ? "functions" : "tree", v->filter[0] ? " [" : "", v->filter,
		 v->filter[0] ? "]" : "", v->msg);
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
		v->scroll = v->scroll > LINES - 7 ? v->scroll - (LINES - 7) : 0;
		break;
	case KEY_NPAGE:
		v->scroll += LINES - 7;
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
		printf(",\"interval_samples\":%" PRIu64 ",\"entries\":[", t->interval_samples);
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
		if (!v->o->json)
			endwin();
		fputs("kprofctl top: ", stderr);
		render_text(stderr, rep->error ? rep->message : "unexpected reply from kprofd");
		fputc('\n', stderr);
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

static int loop(struct view *v, int fd)
{
	unsigned seen = 0;

	for (;;) {
		struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
		bool redraw = false;
		int n = poll(pfd, v->o->json ? 1 : 2, v->o->json ? -1 : 250);

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
			if (v->o->iterations && ++seen >= v->o->iterations)
				return 0;
		}
		if (!v->o->json) {
			int ch;

			while ((ch = getch()) != ERR) {
				if (!on_key(v, ch))
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

int top_run(const struct top_opts *o)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__SubscribeRequest sr = KPROF__SUBSCRIBE_REQUEST__INIT;
	_cleanup_close_ int fd = client_connect(o->socket_path);
	struct view v = {.o = o};
	int err;

	if (fd < 0) {
		fprintf(stderr, "kprofctl: cannot connect to kprofd at %s: %s%s\n", o->socket_path,
			strerror(-fd),
			fd == -ENOENT || fd == -ECONNREFUSED ? " (is kprofd running?)" : "");
		return KPROFCTL_EXIT_NO_DAEMON;
	}
	sr.pids = o->pids;
	sr.n_pids = o->npids;
	sr.interval_ms = o->interval_ms;
	sr.top = 200;
	req.body_case = KPROF__REQUEST__BODY_SUBSCRIBE;
	req.subscribe = &sr;
	err = client_send(fd, &req);
	if (err < 0) {
		fprintf(stderr, "kprofctl top: %s\n", strerror(-err));
		return KPROFCTL_EXIT_NO_DAEMON;
	}
	if (!o->json) {
		if (!isatty(0) || !isatty(1)) {
			fprintf(stderr, "kprofctl top: needs a terminal (or --json)\n");
			return KPROFCTL_EXIT_USAGE;
		}
		setlocale(LC_ALL, "");
		initscr();
		cbreak();
		noecho();
		keypad(stdscr, TRUE);
		curs_set(0);
		timeout(0);
		draw(&v);
	}
	err = loop(&v, fd);
	if (!o->json && !isendwin())
		endwin();
	if (v.last)
		kprof__reply__free_unpacked(v.last, NULL);
	for (size_t i = 0; i < v.nhist; i++)
		free(v.hist[i].key);
	free(v.hist);
	free(v.rows);
	if (err == -EPROTO)
		return KPROFCTL_EXIT_ERROR;
	if (err < 0) {
		fprintf(stderr, "kprofctl top: connection to kprofd lost: %s\n", strerror(-err));
		return KPROFCTL_EXIT_NO_DAEMON;
	}
	return 0;
}
