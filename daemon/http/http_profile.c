// SPDX-License-Identifier: GPL-2.0-only
/* http_profile.c: the interval profiles of the pprof endpoint (http_internal.h),
 * GET /debug/pprof/profile?seconds=N with any of pid=, unit=, cgroup=, comm= (all must match;
 * none: every target, the whole host, as fleet scrapers ask by default).
 *
 * When the request comes, every attached target selected is snapshotted (a copy of its stack
 * counts, target_since.c) and the connection suspended; N seconds later the answer is what each
 * one took since (only the stacks that gained, the functions they name; nothing of a target
 * that took no sample), plus the whole profile of targets selected that were attached during
 * the interval (a watched unit's new processes, system-wide mode's), merged (merge.c) into one
 * gzip'd pprof whose samples carry their process's labels: pid, comm, exe, runtime from the
 * merge, and cgroup and unit read from /proc/PID/cgroup here (the systemd unit, else the watch
 * that attached the target). unit= is a watch's name or cgroup (as before), or else a systemd
 * unit a process runs in; cgroup= takes a cgroup and the ones under it. A request with the
 * token reads every target, root's too: the token is root's to give (SERVICE.md).
 *
 * type=off_cpu|wall: the targets' off-CPU profiles (attach --off-cpu) are snapshotted too, and
 * the answer is, merged, every CPU profile then every off-CPU one (merging keeps the inputs'
 * order), so that the stacks from the first off-CPU one on are off-CPU stacks: pprof with four
 * sample types (samples, cpu, off_cpu, wall), the one asked the default. A selected target
 * without off-CPU time adds its CPU time alone; a pid= of such a target alone is a 404.
 *
 * When the interval ends, the answer is gathered a few targets at a time ([windows] step_ms a
 * step, from an idle-priority defer source, between the ring buffer's drains and other
 * clients): each target's message, packed (a deep copy), and where it runs. Then the build thread
 * (http_build_merged, os/worker.c) merges and labels the parts and makes the pprof, so the loop
 * is never held for the seconds a whole-host answer takes (ARCHITECTURE.md §1.6).
 *
 * Source lines (issue 32): each profile's leaf addresses get kprofd's lines (lines_pb.c). When
 * the interval has addresses the cache lacks, they are queued on kprof-lines and the answer
 * waits for them, at most HTTP_LINES_WAIT_MS, before it is built (the connection stays
 * suspended); what is not resolved by then says "not available" in the profile's comments and
 * is in the cache for the next scrape. The interval ends when asked all the same: its end is
 * kept when the wait starts (keep_end: target_since_end, and the off-CPU profile's sdelta) and
 * the answer built later is cut back to it; only a target attached during the interval runs on
 * to the build.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/cgroups.h"
#include "os/clock.h"
#include "http/http_internal.h"
#include "kprof/cleanup.h"
#include "kprof/httpq.h"
#include "kprof/merge.h"
#include "kprof/pprof.h"
#include "kprof/sdelta.h"
#include "os/log.h"
#include "os/procfs.h"
#include "symbols/srclines.h"
#include "target/offcpu.h"
#include "wire/lines_pb.h"

#define HTTP_LINES_WAIT_MS 5000

/* Where a process runs: its cgroup v2 path and systemd unit ("" for either if unknown). */
struct where {
	char cgroup[256];
	char unit[256];
};

static void where_read(pid_t pid, struct where *w)
{
	_cleanup_free_ char *text = NULL;
	ssize_t n = procfs_read(pid, "cgroup", &text, 8192);

	w->cgroup[0] = w->unit[0] = 0;
	if (n < 0 || httpq_cgroup_path(text, n, w->cgroup, sizeof(w->cgroup)) < 0)
		w->cgroup[0] = 0;
	httpq_unit_of(w->cgroup, w->unit, sizeof(w->unit));
}

/* Whether t is one of r's selection. */
static bool selected(const struct http_req *r, const struct target *t)
{
	struct where w;

	if (r->pid && t->pid != r->pid)
		return false;
	if (r->comm[0] && strcmp(t->comm, r->comm))
		return false;
	if (r->unit_watch && !http_in_unit(t, r->unit))
		return false;
	if ((r->unit[0] && !r->unit_watch) || r->cgroup[0]) {
		where_read(t->pid, &w);
		if (r->unit[0] && !r->unit_watch && strcmp(w.unit, r->unit))
			return false;
		if (r->cgroup[0] && (!w.cgroup[0] || !httpq_cgroup_under(w.cgroup, r->cgroup)))
			return false;
	}
	return true;
}

/* The snapshot of t's off-CPU profile into *d (none if t has none). */
static int snapshot_offcpu(const struct target *t, struct sdelta **d)
{
	struct saved_msg sm;
	int err;

	if (!t->offcpu)
		return 0;
	err = saved_msg_build_offcpu(t, &sm);
	if (err < 0)
		return err;
	err = sdelta_new(&sm.msg, d);
	saved_msg_release(&sm);
	return err;
}

/* A target's stack counts now (and its off-CPU times when asked), for the start of an
 * interval. */
static int snapshot(struct http_req *r, struct target *t)
{
	int err;

	if (r->nm >= HTTP_MAX_HOST)
		return -E2BIG;
	if (r->nm == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct http_member *mv = realloc(r->mv, cap * sizeof(*mv));

		if (!mv)
			return -ENOMEM;
		r->mv = mv;
		r->cap = cap;
	}
	r->mv[r->nm].od = r->mv[r->nm].e = r->mv[r->nm].oe = NULL;
	err = target_since_take(t, &r->mv[r->nm].since);
	if (err >= 0 && r->type != HTTPQ_TYPE_CPU &&
	    (err = snapshot_offcpu(t, &r->mv[r->nm].od)) < 0)
		target_since_release(&r->mv[r->nm].since);
	if (err < 0)
		return err;
	r->mv[r->nm].pid = t->pid;
	r->mv[r->nm].attached_ns = t->attached_ns;
	r->nm++;
	return 0;
}

static void answer_finish(struct http_req *r, int err);

/* An empty profile of the interval (nothing profiled, or no sample taken). */
static int answer_empty(struct http_req *r, uint64_t end)
{
	Kprof__SavedProfile sp = KPROF__SAVED_PROFILE__INIT;
	Kprof__Target t = KPROF__TARGET__INIT;

	sp.format = 1;
	sp.target = &t;
	t.attached_at_ns = r->start_real;
	t.ended_at_ns = end;
	t.freq_hz = r->h->m->conf.default_freq;
	t.pid = r->pid;
	t.comm = (char *)(r->whole ? "the host" : r->unit[0] ? r->unit : "a selection");
	return http_build_pprof(r, &sp, 0, end, answer_finish);
}

static bool is_member(const struct http_req *r, const struct target *t)
{
	for (size_t i = 0; i < r->nm; i++)
		if (r->mv[i].pid == t->pid && r->mv[i].attached_ns == t->attached_ns)
			return true;
	return false;
}

/* The interval's off-CPU profile of t into *om (member mb's start taken off, NULL: t attached
 * during the interval; its end too, if kept): -ENODATA if t waited for nothing in it. */
static int offcpu_interval(struct target *t, const struct http_member *mb, struct saved_msg *om)
{
	if (!t->offcpu || saved_msg_build_offcpu(t, om) < 0)
		return -ENODATA;
	http_hide_kaddr(t->offcpu->prof, om);
	if ((mb && mb->od && !sdelta_apply(mb->od, &om->msg)) ||
	    (mb && mb->oe && !sdelta_cap(mb->oe, &om->msg))) {
		saved_msg_release(om);
		return -ENODATA;
	}
	return 0;
}

/* The answer waits for source lines: the interval's end kept, each member's CPU and off-CPU
 * profile as they are now, so that the answer built later holds the asked seconds, not the
 * wait too. An end that cannot be kept is not (that member's answer then runs to the build). */
static void keep_end(struct http_req *r)
{
	struct saved_msg om;

	r->end_real = now_ns(CLOCK_REALTIME);
	for (size_t i = 0; i < r->nm; i++) {
		struct http_member *mb = &r->mv[i];
		struct target *t = http_find_target(r->h->m, mb->pid, mb->attached_ns);

		if (!t)
			continue;
		if (target_since_end(t, &mb->since, &mb->e) < 0)
			mb->e = NULL;
		if (r->type == HTTPQ_TYPE_CPU || offcpu_interval(t, mb, &om) < 0)
			continue;
		if (sdelta_new(&om.msg, &mb->oe) < 0)
			mb->oe = NULL;
		saved_msg_release(&om);
	}
}

static void on_lines_ready(void *userdata);

/* The source lines of sm (of t), from the cache; before the answer's lines are in, the rest
 * queued: their number (pending). */
static int fill_lines(struct http_req *r, struct saved_msg *sm, const struct target *t)
{
	int n = lines_pb_fill(sm, t, r->h->m->lines, !r->lines_done, r->lines_since);

	return n > 0 ? n : 0;
}

/* The answer's parts, gathered a few targets per loop iteration (http_collect_step). */
struct http_collect {
	struct http_req *r;
	sd_event_source *step;
	struct http_item {
		pid_t pid;
		uint64_t attached_ns;
		struct http_member *mb; /* NULL: attached during the interval */
	} * items;
	size_t n, cur;
	struct http_part *cpu, *off; /* packed: CPU profiles, off-CPU ones */
	size_t ncpu, noff;
	uint64_t samples, end;
	bool live; /* some target selected is still there */
	int pending;
};

static void collect_free(struct http_collect *c)
{
	if (!c)
		return;
	sd_event_source_disable_unref(c->step);
	free(c->items);
	http_parts_free(c->cpu, c->ncpu);
	http_parts_free(c->off, c->noff);
	free(c);
}

static void collect_stop(struct http_req *r)
{
	collect_free(r->col);
	r->col = NULL;
	r->stop = NULL;
}

/* The targets of the answer: the members snapshotted, then those attached during the interval
 * (all their samples are the interval's). */
static int collect_new(struct http_req *r)
{
	struct manager *m = r->h->m;
	struct http_collect *c = calloc(1, sizeof(*c));
	size_t cap = r->nm + 1;

	if (!c)
		return -ENOMEM;
	r->col = c;
	r->stop = collect_stop;
	c->r = r;
	c->end = r->end_real ? r->end_real : now_ns(CLOCK_REALTIME);
	for (struct target *t = manager_targets_first(m); t; t = manager_targets_next(t))
		cap += t->attached_ns >= r->start_real;
	c->items = calloc(cap, sizeof(*c->items));
	c->cpu = calloc(cap, sizeof(*c->cpu));
	c->off = calloc(cap, sizeof(*c->off));
	if (!c->items || !c->cpu || !c->off)
		return -ENOMEM;
	for (size_t i = 0; i < r->nm; i++)
		c->items[c->n++] =
		    (struct http_item){r->mv[i].pid, r->mv[i].attached_ns, &r->mv[i]};
	for (struct target *t = manager_targets_first(m); t && c->n < cap && c->n < HTTP_MAX_HOST;
	     t = manager_targets_next(t))
		if (t->attached_ns >= r->start_real && !is_member(r, t) && selected(r, t))
			c->items[c->n++] = (struct http_item){t->pid, t->attached_ns, NULL};
	return 0;
}

/* sm as a part of the answer (where t runs, for its labels): 0 or -ENOMEM. */
static int add_part(struct http_part *part, struct saved_msg *sm, const struct target *t,
		    bool offcpu)
{
	struct where w;
	int err;

	where_read(t->pid, &w);
	memcpy(part->cgroup, w.cgroup, sizeof(part->cgroup));
	memcpy(part->unit, w.unit, sizeof(part->unit));
	part->offcpu = offcpu;
	err = http_part_pack(&sm->msg, part);
	saved_msg_release(sm);
	return err;
}

/* The interval's profiles of item it: its CPU profile if it gained, its off-CPU profile if
 * asked and it waited (one asleep all along adds its waits alone), packed. */
static int collect_one(struct http_collect *c, const struct http_item *it)
{
	struct http_req *r = c->r;
	struct target *t = http_find_target(r->h->m, it->pid, it->attached_ns);
	struct saved_msg sm;
	int got, err = 0;

	if (!t)
		return 0; /* ended and dropped */
	c->live = true;
	got = it->mb ? target_since_build_until(t, &it->mb->since, it->mb->e, &sm)
		     : target_since_build(t, NULL, &sm);
	if (got > 0) { /* (an error leaves this target out, as no sample would) */
		http_hide_kaddr(t->profile, &sm);
		c->samples += sm.target.samples;
		c->pending += fill_lines(r, &sm, t);
		err = add_part(&c->cpu[c->ncpu], &sm, t, false);
		c->ncpu += err >= 0;
	}
	if (err >= 0 && r->type != HTTPQ_TYPE_CPU && offcpu_interval(t, it->mb, &sm) == 0) {
		sm.msg.n_mappings = sm.msg.n_threads = 0; /* the CPU part's */
		err = add_part(&c->off[c->noff], &sm, t, true);
		c->noff += err >= 0;
	}
	return err;
}

/* The parts gathered: the answer built (off the loop), or its wait for source lines begun. 0,
 * 1 (answered later), or a negative errno. */
static int collect_end(struct http_collect *c)
{
	struct http_req *r = c->r;
	struct http_merge mg = {.start = r->start_real, .samples = c->samples};
	struct http_part *parts;
	uint64_t end = c->end;
	size_t n = c->ncpu + c->noff;

	/* New addresses queued: the answer once kprof-lines has them (gathered again then). */
	if (c->pending && !r->lines_done &&
	    srclines_wait(r->h->m->lines, HTTP_LINES_WAIT_MS, on_lines_ready, r, &r->lines_wait) >=
		0) {
		collect_stop(r);
		keep_end(r);
		return 1;
	}
	if (!n) {
		bool live = c->live;

		collect_stop(r);
		if (r->whole || live)
			return answer_empty(r, end);
		http_answer(r, MHD_HTTP_GONE,
			    "the target ended and its profile was dropped meanwhile");
		return 0;
	}
	/* One array, the CPU profiles first (the merge keeps the inputs' order). */
	parts = realloc(c->cpu, n * sizeof(*parts));
	if (!parts) {
		collect_stop(r); /* frees c->cpu's parts */
		return -ENOMEM;
	}
	c->cpu = NULL;
	memcpy(parts + c->ncpu, c->off, c->noff * sizeof(*parts));
	if (c->ncpu > 1 || !r->pid) /* the comment names no single process */
		snprintf(mg.host_comm, sizeof(mg.host_comm), "%.*s", (int)sizeof(mg.host_comm) - 1,
			 r->whole     ? "the host"
			 : r->unit[0] ? r->unit
				      : "a selection");
	c->noff = c->ncpu = 0; /* theirs now */
	collect_stop(r);
	return http_build_merged(r, parts, n, &mg, end, answer_finish);
}

/* Items for about budget_ns (at least one): 2 while some are left, else collect_end's. */
static int collect_work(struct http_collect *c, uint64_t budget_ns)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	int err;

	while (c->cur < c->n) {
		if (c->cur && now_ns(CLOCK_MONOTONIC) - t0 >= budget_ns)
			return 2;
		err = collect_one(c, &c->items[c->cur++]);
		if (err < 0) {
			collect_stop(c->r);
			return err;
		}
	}
	return collect_end(c);
}

/* unit= resolved: a watch (by its name, or its cgroup by path) sets r->unit to the watch's
 * name; anything else stays a systemd unit name to match processes' cgroups against. */
static void resolve_unit(struct http_req *r)
{
	const struct cgwatch *w = manager_find_watch(r->h->m, r->unit);
	struct cgroup_ref ref;

	if (!w && cgroup_resolve(r->unit, &ref) == 0)
		w = manager_find_watch(r->h->m, ref.path);
	if (!w)
		return;
	snprintf(r->unit, sizeof(r->unit), "%s", w->name);
	r->unit_watch = true;
}

/* Snapshots of every attached target r selects: 0 or a negative errno, or 1 when a selector
 * matched nothing or too much, with r freed and the answer queued (its result in *res). */
static int snapshot_all(struct http_req *r, struct MHD_Connection *c, enum MHD_Result *res)
{
	struct manager *m = r->h->m;
	char what[512];
	int err = 0;

	for (struct target *t = manager_targets_first(m); t && err >= 0;
	     t = manager_targets_next(t))
		if (t->state == TARGET_ATTACHED && selected(r, t))
			err = snapshot(r, t);
	if (err == -E2BIG) {
		http_req_free(r);
		*res = http_queue_text(c, MHD_HTTP_BAD_REQUEST,
				       "more than %d processes are selected: narrow with pid=, "
				       "unit=, cgroup= or comm=",
				       HTTP_MAX_HOST);
		return 1;
	}
	if (err >= 0 && r->type != HTTPQ_TYPE_CPU && r->nm == 1 && !r->mv[0].od && r->pid &&
	    !r->unit[0] && !r->cgroup[0] && !r->comm[0]) {
		int pid = r->pid;

		http_req_free(r);
		*res = http_queue_text(c, MHD_HTTP_NOT_FOUND,
				       "pid %d records no off-CPU time (attach it with kprofctl "
				       "attach %d --off-cpu)",
				       pid, pid);
		return 1;
	}
	if (err < 0 || r->nm || r->whole || r->unit_watch)
		return err; /* a watch's members may come during the interval */
	if (r->pid && !r->unit[0] && !r->cgroup[0] && !r->comm[0])
		snprintf(what, sizeof(what),
			 "pid %d is not being profiled (attach it first: kprofctl attach %d; GET "
			 "/debug/pprof/targets lists the targets)",
			 (int)r->pid, (int)r->pid);
	else if (r->unit[0] && !r->pid && !r->cgroup[0] && !r->comm[0])
		snprintf(what, sizeof(what),
			 "unit '%.200s' is not watched and no profiled process runs in it "
			 "(kprofctl attach --unit; GET /debug/pprof/targets lists the watches)",
			 r->unit);
	else
		snprintf(what, sizeof(what),
			 "no profiled process matches the selection (GET /debug/pprof/targets "
			 "lists the targets)");
	http_req_free(r);
	*res = http_queue_text(c, MHD_HTTP_NOT_FOUND, "%s", what);
	return 1;
}

/* The answer built (err: why not) sent. */
static void answer_finish(struct http_req *r, int err)
{
	r->h->profiles++;
	if (err < 0) {
		log_warn("http: profile of %s: %s", r->whole ? "the host" : "a selection",
			 strerror(-err));
		http_answer(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "the profile could not be built");
	}
	r->answered = true;
	sd_event_source_set_enabled(r->gone, SD_EVENT_OFF);
	MHD_resume_connection(r->c);
	http_run(r->h);
}

static int on_collect_step(sd_event_source *s, void *userdata);

/* A step of r's gathering: the next one deferred while some is left; at the end the answer
 * sent, unless it waits for source lines or is being built off the loop. */
static void collect_run(struct http_req *r)
{
	struct http_collect *c = r->col;
	uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	int err = collect_work(c, r->h->m->conf.window_step_ms * 1000000ULL);

	/* The next steps after the ring buffer, timers, socket clients and other requests. */
	if (err == 2 && !c->step &&
	    (sd_event_add_defer(r->h->m->event, &c->step, on_collect_step, r) < 0 ||
	     sd_event_source_set_priority(c->step, SD_EVENT_PRIORITY_IDLE) < 0 ||
	     sd_event_source_set_enabled(c->step, SD_EVENT_ON) < 0))
		err = collect_work(c, UINT64_MAX); /* no source: all at once */
	r->h->profile_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	if (err == 2 || err == 1)
		return;
	answer_finish(r, err);
}

static int on_collect_step(sd_event_source *s, void *userdata)
{
	(void)s;
	collect_run(userdata);
	return 0;
}

/* The interval's end: its profiles gathered a few targets at a time, then built and sent. */
static void answer(struct http_req *r)
{
	int err;

	if (!r->lines_done)
		r->lines_since = srclines_seq(r->h->m->lines);
	err = collect_new(r);
	if (err < 0) {
		collect_stop(r);
		answer_finish(r, err);
		return;
	}
	collect_run(r);
}

static void on_lines_ready(void *userdata)
{
	struct http_req *r = userdata;

	r->lines_wait = NULL;
	r->lines_done = true;
	answer(r);
}

static int on_req_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct http_req *r = userdata;

	(void)s;
	(void)usec;
	manager_drain(r->h->m); /* the samples up to now (sampling's work, not the answer's) */
	answer(r);
	return 0;
}

/* The answer's timer set seconds on, the client watched and the connection suspended until it
 * fires, unless err (a failed snapshot) or the timer failed: then a 503. */
static enum MHD_Result wait_answer(struct http_req *r, struct MHD_Connection *c, unsigned seconds,
				   int err, void **con_cls)
{
	if (err >= 0)
		err =
		    sd_event_add_time_relative(r->h->m->event, &r->timer, CLOCK_MONOTONIC,
					       (uint64_t)seconds * 1000000, 1000, on_req_timer, r);
	if (err >= 0)
		err = http_watch_client(r);
	if (err < 0) {
		http_req_free(r);
		return http_queue_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "could not start: %s",
				       strerror(-err));
	}
	*con_cls = r;
	http_conn_deadline(c, 0);
	MHD_suspend_connection(c);
	return MHD_YES;
}

enum MHD_Result http_profile_start(struct httpd *h, struct MHD_Connection *c, const struct httpq *q,
				   void **con_cls)
{
	enum MHD_Result res = MHD_NO;
	struct http_req *r = http_req_new(h, c);
	uint64_t cpu;
	int err;

	if (!r)
		return http_queue_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
	r->pid = q->pid;
	r->type = q->type;
	snprintf(r->unit, sizeof(r->unit), "%s", q->unit);
	snprintf(r->cgroup, sizeof(r->cgroup), "%s", q->cgroup);
	snprintf(r->comm, sizeof(r->comm), "%s", q->comm);
	r->whole = !r->pid && !r->unit[0] && !r->cgroup[0] && !r->comm[0];
	r->start_real = now_ns(CLOCK_REALTIME);
	if (r->unit[0])
		resolve_unit(r);
	manager_drain(h->m);
	cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	err = snapshot_all(r, c, &res);
	h->profile_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	if (err > 0)
		return res;
	return wait_answer(r, c, q->seconds, err, con_cls);
}
