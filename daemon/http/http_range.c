// SPDX-License-Identifier: GPL-2.0-only
/* http_range.c: the pprof HTTP endpoint's since=/until= (http.c): the profile of a kept time
 * range (windows.c) of a pid, or of a watched unit's processes, merged in steps between the
 * loop's other work as the socket's ranges are (ARCHITECTURE.md §1.6, "Ranges in steps").
 *
 * A request picks its members (pid and attach time) and merges a first step at once
 * (windows_range_run, about [windows] step_ms of CPU): a range that fits in it is
 * answered at once. Else the connection is suspended (MHD_suspend_connection) and an
 * idle-priority defer source merges one step per loop iteration, after the ring buffer, timers,
 * socket clients and other HTTP requests, member after member; when all are merged, their
 * profiles are merged (merge.c) into pprof and the connection is resumed and answered.
 *
 * Bounds: HTTP_MAX_RANGES jobs at once (one more is a 503 with Retry-After), each done within
 * [http] max_seconds (else a 503 that says so). Before each step the client's socket is peeked:
 * a client that went away (EOF, a reset) frees its job at once. The job holds no target pointer:
 * a member is looked up by pid and attach time when its merge begins and at the answer; one
 * removed meanwhile is left out (410 Gone when none is left), one that ended is merged as it
 * ended (its windows stay).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "os/clock.h"
#include "http/http_internal.h"
#include "kprof/merge.h"
#include "kprof/pprof.h"
#include "kprof/when.h"
#include "os/log.h"
#include "manager/windows.h"

#define HTTP_MAX_RANGES 4      /* range jobs being merged at once */
#define HTTP_RANGE_RETRY_SEC 1 /* the Retry-After of a 503 over that */

struct range_member {
	pid_t pid;
	uint64_t attached_ns;
	struct wrange wr; /* merged; wr.windows 0: not (yet), or no window in the range */
};

struct http_range {
	struct http_req *r;
	sd_event_source *step; /* the next step, while suspended */
	uint64_t since, until;
	uint64_t deadline; /* CLOCK_MONOTONIC */
	bool by_pid;
	struct range_member mv[HTTP_MAX_MEMBERS];
	size_t nm, cur;		/* members; the one being merged */
	struct wrange_job *job; /* mv[cur]'s */
	size_t dropped;		/* members removed before their merge began */
	char msg[512];		/* why the pid has no range (pid=: the 404's text) */
};

static void range_free(struct http_range *rg)
{
	if (!rg)
		return;
	if (rg->step) {
		sd_event_source_disable_unref(rg->step);
		rg->r->h->nranges--;
	}
	wrange_job_free(rg->job);
	for (size_t i = 0; i < rg->nm; i++)
		wrange_free(&rg->mv[i].wr);
	free(rg);
}

static void range_stop(struct http_req *r)
{
	range_free(r->rg);
	r->rg = NULL;
}

/* The members' SavedProfiles for range_answer, and their span: with type=off_cpu|wall their
 * off-CPU ones after the CPU ones (n_cpu). */
struct range_parts {
	struct saved_msg sm[2 * HTTP_MAX_MEMBERS];
	Kprof__SavedProfile *pv[2 * HTTP_MAX_MEMBERS];
	size_t n, n_cpu, gone; /* built; members with a range whose target is gone */
	uint64_t start, end, samples;
};

/* The off-CPU time of the ranges of the parts' targets (tv) after them in p. */
static int build_offcpu_parts(struct range_parts *p, struct target *const *tv,
			      const struct wrange *const *wv)
{
	p->n_cpu = p->n;
	for (size_t i = 0; i < p->n_cpu; i++) {
		struct saved_msg *sm = &p->sm[p->n];

		if (!wv[i]->off)
			continue;
		if (saved_msg_build_range(tv[i], wv[i]->off, NULL, sm) < 0)
			return -ENOMEM;
		http_hide_kaddr(wv[i]->off, sm);
		sm->msg.n_mappings = sm->msg.n_threads = 0; /* the CPU part's */
		p->pv[p->n++] = &sm->msg;
	}
	return 0;
}

/* Each merged member's SavedProfile built into p (p->gone counting up from rg->dropped): 0, or
 * -ENOMEM with the ones built before kept in p. */
static int build_parts(struct http_range *rg, struct range_parts *p)
{
	struct manager *m = rg->r->h->m;
	struct target *tv[HTTP_MAX_MEMBERS];
	const struct wrange *wv[HTTP_MAX_MEMBERS];

	p->n = p->n_cpu = 0;
	p->gone = rg->dropped;
	p->start = p->end = p->samples = 0;
	for (size_t i = 0; i < rg->nm; i++) {
		const struct wrange *wr = &rg->mv[i].wr;
		struct saved_msg *sm = &p->sm[p->n];
		struct target *t;

		if (!wr->windows)
			continue;
		t = http_find_target(m, rg->mv[i].pid, rg->mv[i].attached_ns);
		if (!t) {
			p->gone++;
			continue;
		}
		if (saved_msg_build_range(t, wr->prof, wr->tree, sm) < 0)
			return -ENOMEM;
		http_hide_kaddr(wr->prof, sm);
		sm->target.samples = wr->samples;
		sm->target.window_start_ns = wr->start;
		sm->target.window_end_ns = wr->end;
		sm->target.windows = wr->windows;
		p->pv[p->n] = &sm->msg;
		p->start = !p->start || wr->start < p->start ? wr->start : p->start;
		p->end = wr->end > p->end ? wr->end : p->end;
		p->samples += wr->samples;
		tv[p->n] = t;
		wv[p->n++] = wr;
	}
	return rg->r->type == HTTPQ_TYPE_CPU ? 0 : build_offcpu_parts(p, tv, wv);
}

static void range_finish(struct http_req *r, int err);

/* The parts as r's pprof answer (merged if more than one), built off the loop (1) or here (0),
 * or a negative errno. With type=off_cpu|wall, the four sample types, the stacks of the off-CPU
 * parts (merging keeps the parts' order) off-CPU ones. */
static int parts_pprof(struct http_req *r, struct range_parts *p, uint64_t now)
{
	struct merged mg;
	size_t off_from = 0;
	int err = 0;

	if (p->n == 1 && r->type == HTTPQ_TYPE_CPU)
		return http_build_pprof(r, p->pv[0], 0, now, range_finish);
	err = merge_profiles(p->pv, p->n, &mg);
	if (err < 0)
		return err;
	mg.target.samples = p->samples;
	mg.target.window_start_ns = mg.target.attached_at_ns = p->start;
	mg.target.window_end_ns = mg.target.ended_at_ns = p->end;
	for (size_t i = 0; i < p->n_cpu; i++)
		off_from += p->pv[i]->n_stacks;
	err = http_build_pprof(r, &mg.sp, off_from, now, range_finish);
	merge_free(&mg);
	return err;
}

/* The members' ranges as one pprof profile in r's answer (each member's SavedProfile built
 * now, while its target is known): 0 with the answer set, or 2 while its pprof is built off
 * the loop (range_finish answers then). */
static int range_answer(struct http_range *rg)
{
	struct range_parts p;
	uint64_t now = now_ns(CLOCK_REALTIME);
	int err;

	err = build_parts(rg, &p);
	if (err >= 0 && p.n)
		err = parts_pprof(rg->r, &p, now);
	for (size_t i = 0; i < p.n; i++)
		saved_msg_release(&p.sm[i]);
	if (err > 0)
		return 2;
	if (err < 0) {
		snprintf(rg->msg, sizeof(rg->msg), "the profile could not be built: %s",
			 strerror(-err));
		http_answer(rg->r, MHD_HTTP_INTERNAL_SERVER_ERROR, rg->msg);
	} else if (!p.n && p.gone) {
		http_answer(
		    rg->r, MHD_HTTP_GONE,
		    "the profile was dropped while its range was merged (the kept profiles' "
		    "bounds: [limits] max_kept, kept_max_age)");
	} else if (!p.n) {
		http_answer(rg->r, MHD_HTTP_NOT_FOUND,
			    rg->by_pid ? rg->msg
				       : "no kept time window of that selector in that range");
	}
	return 0;
}

/* A range's pprof built off the loop (err: why not): answered. */
static void range_finish(struct http_req *r, int err)
{
	if (err < 0)
		http_answer(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "the profile could not be built");
	r->answered = true;
	MHD_resume_connection(r->c);
	http_run(r->h);
}

/* Merge for about budget_ns (at least one window): 1 while some is left, 2 when all is and
 * the answer is being built off the loop, else 0 with r's answer set. */
static int range_work(struct http_range *rg, uint64_t budget_ns)
{
	struct manager *m = rg->r->h->m;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), spent = 0;
	int err;

	while (rg->cur < rg->nm) {
		struct range_member *mb = &rg->mv[rg->cur];

		struct target *t = NULL;

		if (spent && spent >= budget_ns)
			return 1;
		if (!rg->job && !(t = http_find_target(m, mb->pid, mb->attached_ns))) {
			rg->dropped++;
			rg->cur++;
			continue;
		}
		err = windows_range_run(m->windows, &rg->job, t, false, rg->since, rg->until,
					budget_ns > spent ? budget_ns - spent : 0, &mb->wr, rg->msg,
					sizeof(rg->msg));
		spent = now_ns(CLOCK_MONOTONIC) - t0;
		if (err > 0)
			return 1;
		rg->cur++;
		if (err < 0 && err != -ENODATA)
			goto fail;
		spent += !spent; /* a member merged: the next waits for the budget's check */
	}
	return range_answer(rg);
fail:
	http_answer(rg->r, MHD_HTTP_INTERNAL_SERVER_ERROR, rg->msg);
	return 0;
}

/* The client left (its socket at EOF or reset): nothing will read the answer. */
static bool client_gone(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	ssize_t n;
	char b;

	if (!ci || ci->connect_fd < 0)
		return false;
	n = recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		shutdown(ci->connect_fd, SHUT_RDWR); /* MHD closes it at its next run */
		return true;
	}
	return false;
}

static int on_range_step(sd_event_source *s, void *userdata)
{
	struct http_range *rg = userdata;
	struct http_req *r = rg->r;
	struct httpd *h = r->h;
	int err;

	(void)s;
	if (client_gone(r->c)) {
		log_debug("http: a client left while its range was merged: merge stopped");
		http_answer(r, MHD_HTTP_SERVICE_UNAVAILABLE, "the client left");
	} else if (now_ns(CLOCK_MONOTONIC) > rg->deadline) {
		snprintf(rg->msg, sizeof(rg->msg),
			 "the range was not merged within %u s ([http] max_seconds): ask a shorter "
			 "range",
			 h->m->conf.http_max_seconds);
		http_answer(r, MHD_HTTP_SERVICE_UNAVAILABLE, rg->msg);
	} else if ((err = range_work(rg, h->m->conf.window_step_ms * 1000000ULL)) == 1) {
		return 0; /* the next step at a later loop iteration */
	} else if (err == 2) {
		range_stop(r); /* merged: the build answers */
		return 0;
	}
	r->answered = true;
	range_stop(r);
	MHD_resume_connection(r->c);
	http_run(h);
	return 0;
}

/* The members of the selector: its pid's target, or the unit's; 0, or an HTTP status with
 * r's answer (404: none, 400: too many). */
static unsigned range_members(struct http_range *rg, const struct httpq *q)
{
	struct manager *m = rg->r->h->m;

	if (q->pid) {
		struct target *t = manager_find(m, q->pid);

		if (!t) {
			snprintf(rg->msg, sizeof(rg->msg), "pid %d has no profile here",
				 (int)q->pid);
			return MHD_HTTP_NOT_FOUND;
		}
		rg->mv[rg->nm++] =
		    (struct range_member){.pid = t->pid, .attached_ns = t->attached_ns};
		return 0;
	}
	for (struct target *t = manager_targets_first(m); t; t = manager_targets_next(t)) {
		if (!http_in_unit(t, q->unit))
			continue;
		if (rg->nm >= HTTP_MAX_MEMBERS) {
			snprintf(rg->msg, sizeof(rg->msg),
				 "unit '%.200s' has more than %d profiles: ask by pid=", q->unit,
				 HTTP_MAX_MEMBERS);
			return MHD_HTTP_BAD_REQUEST;
		}
		rg->mv[rg->nm++] =
		    (struct range_member){.pid = t->pid, .attached_ns = t->attached_ns};
	}
	snprintf(rg->msg, sizeof(rg->msg), "no kept time window of that selector in that range");
	return rg->nm ? 0 : MHD_HTTP_NOT_FOUND;
}

/* Suspend r's connection and go on with its merge between other work. */
static int range_defer(struct http_range *rg, void **con_cls)
{
	struct http_req *r = rg->r;
	int err = sd_event_add_defer(r->h->m->event, &rg->step, on_range_step, rg);

	if (err >= 0) /* after the ring buffer, timers, socket clients and other requests */
		err = sd_event_source_set_priority(rg->step, SD_EVENT_PRIORITY_IDLE);
	if (err >= 0)
		err = sd_event_source_set_enabled(rg->step, SD_EVENT_ON);
	if (err < 0) {
		rg->step = sd_event_source_disable_unref(rg->step);
		return err;
	}
	r->h->nranges++;
	*con_cls = r;
	http_conn_deadline(r->c, 0);
	MHD_suspend_connection(r->c);
	return 0;
}

enum MHD_Result http_range_start(struct httpd *h, struct MHD_Connection *c, const struct httpq *q,
				 void **con_cls)
{
	struct manager *m = h->m;
	uint64_t now = now_ns(CLOCK_REALTIME);
	struct http_range *rg;
	struct http_req *r;
	enum MHD_Result res;
	unsigned status;
	int err;

	if (!m->windows)
		return http_queue_text(c, MHD_HTTP_NOT_FOUND, "kprofd keeps no time windows");
	if (h->nranges >= HTTP_MAX_RANGES)
		return http_queue_busy(
		    c, HTTP_RANGE_RETRY_SEC,
		    "%u since=/until= ranges are being merged, the most at once: "
		    "retry in %u s",
		    h->nranges, HTTP_RANGE_RETRY_SEC);
	r = http_req_new(h, c);
	rg = calloc(1, sizeof(*rg));
	if (!r || !rg) {
		free(rg);
		http_req_free(r);
		return http_queue_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
	}
	r->rg = rg;
	r->stop = range_stop;
	rg->r = r;
	r->type = q->type;
	rg->by_pid = q->pid != 0;
	rg->deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)m->conf.http_max_seconds * NSEC;
	if ((q->since[0] && when_parse(q->since, now, mktime, &rg->since) < 0) ||
	    (q->until[0] && when_parse(q->until, now, mktime, &rg->until) < 0)) {
		res = http_queue_text(c, MHD_HTTP_BAD_REQUEST, "since=/until= out of range");
	} else if (rg->until && rg->until <= rg->since) {
		res = http_queue_text(c, MHD_HTTP_BAD_REQUEST, "until= is not after since=");
	} else if ((status = range_members(rg, q))) {
		res = http_queue_text(c, status, "%s", rg->msg);
	} else if ((err = range_work(rg, m->conf.window_step_ms * 1000000ULL)) == 0) {
		res = http_queue_answer(r); /* merged in one step */
	} else if (err == 2) {		    /* merged in one step, built off the loop */
		range_stop(r);
		*con_cls = r;
		http_conn_deadline(c, 0);
		MHD_suspend_connection(c);
		return MHD_YES;
	} else if ((err = range_defer(rg, con_cls)) < 0) {
		res = http_queue_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "could not start: %s",
				      strerror(-err));
	} else {
		return MHD_YES;
	}
	http_req_free(r);
	return res;
}
