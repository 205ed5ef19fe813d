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

/* sp as the gzip'd pprof answer of r: with type=off_cpu|wall its stacks from off_from on are
 * off-CPU ones, and the profile has the four sample types, the one asked the default. Built off
 * the loop: 1, answer_finish runs when it is built; else 0 or a negative errno. */
static int answer_pprof(struct http_req *r, const Kprof__SavedProfile *sp, size_t off_from,
			uint64_t end)
{
	return http_build_pprof(r, sp, off_from, end, answer_finish);
}

/* The answer: the interval's profiles merged (sm[0..n)), labelled, as pprof into r; those from
 * off_from on are off-CPU profiles. */
static int answer_merged(struct http_req *r, struct saved_msg *sm, Kprof__SavedProfile **pv,
			 size_t n, size_t off_from, uint64_t samples, uint64_t end)
{
	_cleanup_free_ struct where *wv = calloc(n + 1, sizeof(*wv));
	struct merged mg = {0};
	size_t nstacks = 0;
	int err;

	if (!wv)
		return -ENOMEM;
	err = merge_profiles(pv, n, &mg);
	if (err < 0)
		goto out;
	for (size_t i = 0; i < off_from && i < n; i++) /* merging keeps the inputs' order */
		nstacks += pv[i]->n_stacks;
	/* One origin per input, in order (the inputs have none of their own). */
	for (size_t i = 0; i < n && i < mg.sp.n_origins; i++) {
		Kprof__Origin *o = mg.sp.origins[i];

		where_read(sm[i].target.pid, &wv[i]);
		o->cgroup = wv[i].cgroup;
		if (wv[i].unit[0] || (o->unit && o->unit[0] == '/'))
			o->unit = wv[i].unit; /* the systemd unit, not a watched cgroup's path */
	}
	mg.target.attached_at_ns = r->start_real;
	mg.target.ended_at_ns = end;
	mg.target.samples = samples;
	if (off_from > 1 || !r->pid) { /* the comment names no single process */
		mg.target.pid = 0;
		mg.target.comm = (char *)(r->whole     ? "the host"
					  : r->unit[0] ? r->unit
						       : "a selection");
	}
	err = answer_pprof(r, &mg.sp, nstacks, end);
out:
	merge_free(&mg);
	return err;
}

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
	return answer_pprof(r, &sp, 0, end);
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

/* The off-CPU profiles of the targets tv[0..nt) (mb: their members, NULL for a target attached
 * during the interval) after the CPU profiles sm[0..n), in sm[n..): the new count. A target
 * that waited for nothing in the interval adds nothing; one that took no CPU sample (asleep all
 * along) adds its waits alone. */
static size_t add_offcpu(struct saved_msg *sm, Kprof__SavedProfile **pv, size_t n,
			 struct target *const *tv, struct http_member *const *mb, size_t nt)
{
	size_t k = n;

	for (size_t i = 0; i < nt; i++) {
		if (offcpu_interval(tv[i], mb[i], &sm[k]) < 0)
			continue;
		sm[k].msg.n_mappings = sm[k].msg.n_threads = 0;
		pv[k] = &sm[k].msg;
		k++;
	}
	return k;
}

/* The answer waits for source lines: the interval's end kept, each member's CPU and off-CPU
 * profile as they are now, so that the answer built later holds the asked seconds, not the
 * wait too. An end that cannot be kept is not (that member's answer then runs to the build). */
static void keep_end(struct http_req *r, struct target *const *tv, struct http_member *const *mb,
		     size_t nt)
{
	struct saved_msg om;

	r->end_real = now_ns(CLOCK_REALTIME);
	for (size_t i = 0; i < nt; i++) {
		if (!mb[i])
			continue;
		if (target_since_end(tv[i], &mb[i]->since, &mb[i]->e) < 0)
			mb[i]->e = NULL;
		if (r->type == HTTPQ_TYPE_CPU || offcpu_interval(tv[i], mb[i], &om) < 0)
			continue;
		if (sdelta_new(&om.msg, &mb[i]->oe) < 0)
			mb[i]->oe = NULL;
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

int http_profile_answer(struct http_req *r)
{
	struct manager *m = r->h->m;
	size_t n = 0, nt = 0, cap = r->nm + 1, all;
	uint64_t end = r->end_real ? r->end_real : now_ns(CLOCK_REALTIME), samples = 0;
	bool live = false; /* some target selected is still there */
	struct saved_msg *sm;
	Kprof__SavedProfile **pv;
	_cleanup_free_ struct target **tv = NULL;
	_cleanup_free_ struct http_member **mb = NULL; /* per target, NULL: attached meanwhile */
	int err = 0, pending = 0;

	if (!r->lines_done)
		r->lines_since = srclines_seq(m->lines);
	for (struct target *t = manager_targets_first(m); t; t = manager_targets_next(t))
		cap += t->attached_ns >= r->start_real;
	sm = calloc(2 * cap, sizeof(*sm)); /* CPU profiles, then off-CPU ones */
	pv = calloc(2 * cap, sizeof(*pv));
	tv = calloc(cap, sizeof(*tv));
	mb = calloc(cap, sizeof(*mb));
	if (!sm || !pv || !tv || !mb) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->nm && n < cap; i++) {
		struct target *t = http_find_target(m, r->mv[i].pid, r->mv[i].attached_ns);

		if (!t)
			continue; /* ended and dropped */
		live = true;
		tv[nt] = t;
		mb[nt++] = &r->mv[i];
		if (target_since_build_until(t, &r->mv[i].since, r->mv[i].e, &sm[n]) <= 0)
			continue; /* no sample since */
		http_hide_kaddr(t->profile, &sm[n]);
		samples += sm[n].target.samples;
		pending += fill_lines(r, &sm[n], t);
		pv[n] = &sm[n].msg;
		n++;
	}
	/* Attached during the interval: all their samples are the interval's. */
	for (struct target *t = manager_targets_first(m); t && n < cap && n < HTTP_MAX_HOST;
	     t = manager_targets_next(t)) {
		if (t->attached_ns < r->start_real || is_member(r, t) || !selected(r, t))
			continue;
		live = true;
		tv[nt++] = t;
		if (target_since_build(t, NULL, &sm[n]) <= 0)
			continue;
		http_hide_kaddr(t->profile, &sm[n]);
		samples += sm[n].target.samples;
		pending += fill_lines(r, &sm[n], t);
		pv[n] = &sm[n].msg;
		n++;
	}
	/* New addresses queued: the answer once kprof-lines has them (built again then). */
	if (pending && !r->lines_done &&
	    srclines_wait(m->lines, HTTP_LINES_WAIT_MS, on_lines_ready, r, &r->lines_wait) >= 0) {
		keep_end(r, tv, mb, nt);
		err = 1;
		goto out;
	}
	all = r->type == HTTPQ_TYPE_CPU ? n : add_offcpu(sm, pv, n, tv, mb, nt);
	if (all)
		err = answer_merged(r, sm, pv, all, n, samples, end);
	else if (r->whole || live)
		err = answer_empty(r, end);
	else
		http_answer(r, MHD_HTTP_GONE,
			    "the target ended and its profile was dropped meanwhile");
	n = all;
out:
	for (size_t i = 0; sm && i < n; i++)
		saved_msg_release(&sm[i]);
	free(sm);
	free(pv);
	return err;
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

/* The answer, built and sent; unless it waits for source lines first, or is being built off
 * the loop. */
static void answer(struct http_req *r)
{
	uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	int err = http_profile_answer(r);

	r->h->profile_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	if (err > 0)
		return; /* on_lines_ready or the build's end answers */
	answer_finish(r, err);
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
