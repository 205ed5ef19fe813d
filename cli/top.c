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
 * (C++ without parameter lists) unless --full-names. A target attached with --off-cpu adds
 * an OFF-CPU column: the time its threads waited with the function as the wait's leaf frame in
 * the interval (rows of functions that only wait come from kprofd too), a sort key of its own.
 * Keys: q quit, s sort column, p pause, t
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

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "client.h"
#include "render.h"
#include "render_profile.h"
#include "drift.h"

#include "top_draw.h"
#include "top_internal.h"

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
	case SORT_OFF_CPU:
		if (x->off_cpu != y->off_cpu)
			return x->off_cpu > y->off_cpu ? -1 : 1;
		break;
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
	v->off_cpu = false;
	if (!v->rows)
		return;
	for (size_t i = 0; i < u->n_targets; i++) {
		const Kprof__TopTarget *t = u->targets[i];
		uint64_t all = t->interval_samples;
		unsigned hz = t->target ? t->target->freq_hz : 0;

		v->off_cpu |= t->target && t->target->off_cpu;

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
			r->off_cpu = e->off_cpu_self / 1e9;
			if (h) {
				hist_push(h, r->self_pct, u->seq);
				memcpy(r->trend, h->trend, sizeof(r->trend));
			}
			if (!e->self_all && !e->total_all && !e->off_cpu_self_all && !e->off_cpu_total)
				continue;
			v->nrows++;
		}
	}
	name_rows(v);
	qsort_r(v->rows, v->nrows, sizeof(*v->rows), cmp_rows, &v->sort);
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
		printf("],\"interval_samples\":%" PRIu64, t->interval_samples);
		if (t->target && t->target->off_cpu)
			printf(",\"interval_off_cpu_ns\":%" PRIu64, t->interval_off_cpu);
		fputs(",\"entries\":[", stdout);
		for (size_t j = 0; j < t->n_entries; j++) {
			const Kprof__TopEntry *e = t->entries[j];

			printf("%s{\"function\":", j ? "," : "");
			render_json_string(stdout, e->function);
			fputs(",\"module\":", stdout);
			render_json_string(stdout, e->module);
			printf(",\"kind\":\"%s\",\"self\":%" PRIu64 ",\"total\":%" PRIu64
			       ",\"self_all\":%" PRIu64 ",\"total_all\":%" PRIu64,
			       render_kind(e->kind), e->self, e->total, e->self_all, e->total_all);
			if (t->target && t->target->off_cpu)
				printf(",\"off_cpu_ns\":%" PRIu64 ",\"off_cpu_total_ns\":%" PRIu64
				       ",\"off_cpu_all_ns\":%" PRIu64,
				       e->off_cpu_self, e->off_cpu_total, e->off_cpu_self_all);
			putchar('}');
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
					top_draw(v); /* the last update is the screen left behind */
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
				top_draw(v);
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
	top_draw(v);
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
	struct view v = {.o = o, .socket_path = o->socket_path, .full_names = o->full_names};
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
