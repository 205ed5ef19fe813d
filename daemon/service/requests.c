// SPDX-License-Identifier: GPL-2.0-only
/* requests.c: kprofd's answers: each request frame from the transport, authorized and handled.
 *
 * The transport (transport.c) hands over whole frames; this file decodes them as kprof.Request,
 * checks who may do what and builds the kprof.Reply. Authorization: uid 0 may do anything; any
 * other uid may attach to, read and detach only processes it could ptrace itself
 * (procfs_ident_owner), and lists only those; members of the configured read group may list and
 * read every profile. Kernel detail follows what the kernel itself would show the client
 * (kallsyms_show_value, perf_event_paranoid), read at each request: addresses zeroed, or every
 * kernel frame shown as "[kernel]" (the views are profile.c's). Folded text is built within
 * FOLDED_MAX_BYTES, never whole first. A live subscription (kprofctl top) is a timer per client
 * that sends an update each interval, skipped while the last one is unsent.
 *
 * The parts, each calling only those before it (what they share is requests_internal.h):
 * requests_access.c (replies, the client's kernel view, who may do what, which target or session
 * a request names), requests_targets.c (attach, detach, list, status, watch rules),
 * requests_live.c (the live subscription), requests_func.c (one function of a target: paths,
 * annotate, drift) and this file: the transport's handler, the dispatch, and the profile queries
 * (report, folded, export, hcct) with their --since/--until ranges. Those stay here because a
 * range merged in steps hands its held request back to the dispatch when it is ready.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/frame.h"
#include "service/requests.h"
#include "service/requests_internal.h"
#include "service/requests_access.h"
#include "service/requests_targets.h"
#include "service/requests_live.h"
#include "service/requests_func.h"
#include "manager/windows.h"
#include "manager/manager.h"
#include "wire/lines_pb.h"
#include "wire/target_pb.h"
#include "os/transport.h"
#include "target/offcpu.h"

#define FOLDED_MAX_BYTES (64u << 20)

/* One PID of a client in another PID namespace, as kprofd's: false (the client told why) if
 * it has none. */
static bool translate_pid(struct client *cl, uint32_t *pid)
{
	pid_t host;
	int err;

	if (!*pid)
		return true;
	err = pidns_translate(&cl->pidns, *pid, &host);
	if (err == -EXDEV)
		requests_error(cl, -EXDEV,
			       "pid %u: kprofctl runs in a PID namespace kprofd cannot see into, so "
			       "its PIDs cannot be translated: run it in kprofd's PID namespace",
			       *pid);
	else if (err < 0)
		requests_error(cl, err == -ESRCH ? -ESRCH : err,
			       "pid %u: no process has this PID in kprofctl's PID namespace%s",
			       *pid, err == -ESRCH ? "" : " (cannot scan /proc)");
	else
		*pid = host;
	return err == 0;
}

/* The PIDs a request names ("pid", "pids" of its body), given in the client's PID namespace,
 * as kprofd's (pidns.c); replies name kprofd's PIDs. False (the client told) if one has none. */
static bool translate_pids(struct client *cl, Kprof__Request *req)
{
	const ProtobufCFieldDescriptor *bf, *f;
	const ProtobufCMessage *body;

	if (!cl->pidns.foreign)
		return true;
	bf = protobuf_c_message_descriptor_get_field(&kprof__request__descriptor, req->body_case);
	if (!bf || bf->type != PROTOBUF_C_TYPE_MESSAGE)
		return true;
	body = *(ProtobufCMessage **)((char *)req + bf->offset);
	if (!body)
		return true;
	f = protobuf_c_message_descriptor_get_field_by_name(body->descriptor, "pid");
	if (f && f->type == PROTOBUF_C_TYPE_UINT32 && f->label != PROTOBUF_C_LABEL_REPEATED &&
	    !translate_pid(cl, (uint32_t *)((char *)body + f->offset)))
		return false;
	f = protobuf_c_message_descriptor_get_field_by_name(body->descriptor, "pids");
	if (f && f->type == PROTOBUF_C_TYPE_UINT32 && f->label == PROTOBUF_C_LABEL_REPEATED) {
		size_t n = *(size_t *)((char *)body + f->quantifier_offset);
		uint32_t *pids = *(uint32_t **)((char *)body + f->offset);

		for (size_t i = 0; i < n; i++)
			if (!translate_pid(cl, &pids[i]))
				return false;
	}
	return true;
}

static void handle(struct client *cl, const Kprof__Request *req);

static uint64_t range_step_ns(const struct client *cl)
{
	return cl->rq->m->conf.window_step_ms * 1000000ULL;
}

static void range_job_stop(struct client *cl)
{
	cl->job_src = sd_event_source_disable_unref(cl->job_src);
	wrange_job_free(cl->job);
	cl->job = NULL;
	kprof__request__free_unpacked(cl->job_req, NULL);
	cl->job_req = NULL;
	wrange_free(&cl->job_range);
	cl->job_ready = false;
}

/* One step of a held range; when it is whole, its handler goes on with it (the request, kept
 * decoded, is not dispatched again), then the client is read on. */
static int on_range_step(sd_event_source *s, void *userdata)
{
	struct client *cl = userdata;
	struct windows *w = cl->rq->m->windows;
	char msg[512] = "";
	int err = windows_range_run(w, &cl->job, NULL, false, 0, 0, range_step_ns(cl),
				    &cl->job_range, msg, sizeof(msg));

	(void)s;
	if (err > 0)
		return 0; /* the next step at a later loop iteration */
	if (err < 0) {
		requests_error(cl, err, "%s", msg);
	} else {
		cl->job_ready = true;
		handle(cl, cl->job_req); /* range_of takes the range */
	}
	range_job_stop(cl);
	transport_resume(cl->tc); /* may free cl */
	return 0;
}

/* Go on with j between other work: hold the client, keep its request (decoded). */
static int range_defer(struct client *cl, struct wrange_job *j)
{
	int err;

	if (!cl->req)
		return -EINVAL;
	err = sd_event_add_defer(cl->rq->m->event, &cl->job_src, on_range_step, cl);
	if (err >= 0) /* after the ring buffer, timers and other clients */
		err = sd_event_source_set_priority(cl->job_src, SD_EVENT_PRIORITY_IDLE);
	if (err >= 0)
		err = sd_event_source_set_enabled(cl->job_src, SD_EVENT_ON);
	if (err < 0)
		return err;
	cl->job = j;
	cl->job_req = cl->req; /* dispatch leaves it to range_job_stop */
	cl->req = NULL;
	transport_hold(cl->tc);
	return 0;
}

/* A --since/--until request: the profile of that time range of t (windows.c) in *r, else the
 * error replied. A range that takes more than one step (windows.step_ms) is merged between
 * other work: -EINPROGRESS, and the request's handler runs again when it is ready (the request
 * kept decoded, not dispatched again; the handler looks its target up again). */
static int range_of(struct client *cl, struct target *t, uint32_t session, uint64_t since,
		    uint64_t until, struct wrange *r)
{
	struct windows *w = cl->rq->m->windows;
	struct wrange_job *j = NULL;
	char msg[512] = "";
	int err;

	memset(r, 0, sizeof(*r));
	if (cl->job_ready) { /* the request again, its range merged */
		*r = cl->job_range;
		memset(&cl->job_range, 0, sizeof(cl->job_range));
		cl->job_ready = false;
		return 0;
	}
	if (!w) {
		requests_error(cl, -ENODATA, "time windows are not kept by this kprofd");
		return -ENODATA;
	}
	err = windows_range_run(w, &j, t, session != 0, since, until, range_step_ns(cl), r, msg,
				sizeof(msg));
	if (err > 0) {
		err = range_defer(cl, j);
		if (err >= 0)
			return -EINPROGRESS;
		wrange_job_free(j);
		range_job_stop(cl);
		snprintf(msg, sizeof(msg), "pid %d: the range's profile: %s", t->pid,
			 strerror(-err));
	}
	if (err < 0)
		requests_error(cl, err, "%s", msg);
	return err;
}

/* The Target of a range's reply: its samples and span. */
static void range_target(Kprof__Target *pb, const struct wrange *r)
{
	pb->samples = r->samples;
	pb->window_start_ns = r->start;
	pb->window_end_ns = r->end;
	pb->windows = r->windows;
}

/* An off-CPU request for t: its off-CPU profile, else the error replied (NULL). */
static const struct offcpu *offcpu_of(struct client *cl, const struct target *t)
{
	if (!t->offcpu)
		requests_error(cl, -ENODATA,
			       "pid %d: no off-CPU time in this profile (attach with --off-cpu)",
			       t->pid);
	return t->offcpu;
}

/* A range's off-CPU profile (its windows' off-CPU time), else the error replied (NULL). */
static const struct profile *range_offcpu(struct client *cl, const struct target *t,
					  const struct wrange *wr)
{
	if (!wr->off)
		requests_error(cl, -ENODATA,
			       "pid %d: no off-CPU time in the kept windows of that range (only "
			       "its windows since it was attached with --off-cpu have it)",
			       t->pid);
	return wr->off;
}

/* The Target of a range's off-CPU reply: the range's off-CPU time and the states of its
 * stacks (ns: their storage); no count of intervals. */
static void range_offcpu_target(Kprof__Target *pb, const struct profile *off,
				uint64_t ns[KP_OFF_NSTATES])
{
	offcpu_states(off, ns, &pb->off_cpu_ns);
	pb->off_cpu_state_ns = ns;
	pb->n_off_cpu_state_ns = KP_OFF_NSTATES;
	pb->off_cpu_intervals = pb->off_cpu_lost_stacks = 0;
}

/* The profile a report or folded request of t reads: t's, its off-CPU one, or a range's (its
 * samples or off-CPU time, held in *wr); NULL when t is NULL or the error is replied. */
static const struct profile *query_profile(struct client *cl, struct target *t, bool off_cpu,
					   uint32_t session, uint64_t since, uint64_t until,
					   struct wrange *wr)
{
	const bool ranged = since || until;

	if (!t || (off_cpu && !offcpu_of(cl, t)))
		return NULL;
	if (ranged && range_of(cl, t, session, since, until, wr) < 0)
		return NULL;
	if (off_cpu)
		return ranged ? range_offcpu(cl, t, wr) : t->offcpu->prof;
	return ranged ? wr->prof : t->profile;
}

static void do_report(struct client *cl, const Kprof__ReportRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__ReportReply rr = KPROF__REPORT_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t = requests_session(cl, req->pid, req->session);
	_cleanup_free_ struct profile_row *rows = NULL;
	_cleanup_free_ Kprof__FlatEntry *ev = NULL;
	_cleanup_free_ Kprof__FlatEntry **ep = NULL;
	_cleanup_(wrange_free) struct wrange wr = {0};
	const bool ranged = req->since_ns || req->until_ns;
	const struct profile *prof;
	struct profile_stats ps;
	uint64_t states[KP_OFF_NSTATES];
	size_t n, shown, ncounts;
	const uint64_t *counts;

	prof = query_profile(cl, t, req->off_cpu, req->session, req->since_ns, req->until_ns, &wr);
	if (!prof)
		return;
	if (profile_flat_view(prof, requests_view(cl), &rows, &n) < 0) {
		requests_error(cl, -ENOMEM, "out of memory");
		return;
	}
	shown = req->top && req->top < n ? req->top : n;
	ev = calloc(shown ? shown : 1, sizeof(*ev));
	ep = calloc(shown ? shown : 1, sizeof(*ep));
	if (!ev || !ep) {
		requests_error(cl, -ENOMEM, "out of memory");
		return;
	}
	counts = calls_counts(t->calls, &ncounts);
	for (size_t i = 0; i < shown; i++) {
		const struct profile_func *f = &rows[i].f;
		uint32_t id = rows[i].id;

		kprof__flat_entry__init(&ev[i]);
		ev[i].function = (char *)f->name;
		ev[i].module = (char *)f->module;
		ev[i].kind = target_pb_kind(f->kind);
		ev[i].self = f->self;
		ev[i].total = f->total;
		ev[i].address = f->start;
		ev[i].calls = prof == t->profile && id < ncounts ? counts[id] : 0;
		ep[i] = &ev[i];
	}
	profile_get_stats(prof, &ps);
	requests_fill_target(cl, t, &tpb);
	if (ranged)
		range_target(&tpb, &wr);
	if (ranged && req->off_cpu)
		range_offcpu_target(&tpb, prof, states);
	rr.target = &tpb;
	rr.total_samples = ps.samples;
	rr.n_entries = shown;
	rr.entries = ep;
	rr.functions = n;
	rep.body_case = KPROF__REPLY__BODY_REPORT;
	rep.report = &rr;
	requests_queue(cl, &rep);
}

static void do_folded(struct client *cl, const Kprof__FoldedRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__FoldedReply fr = KPROF__FOLDED_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t = requests_session(cl, req->pid, req->session);
	struct profile_folded_opts o = {.max_bytes = FOLDED_MAX_BYTES, .view = requests_view(cl)};
	struct profile_folded_info fi;
	_cleanup_free_ char *text = NULL;
	_cleanup_(wrange_free) struct wrange wr = {0};
	const bool ranged = req->since_ns || req->until_ns;
	const struct profile *prof;
	size_t len;

	prof = query_profile(cl, t, req->off_cpu, req->session, req->since_ns, req->until_ns, &wr);
	if (!prof)
		return;
	if (profile_folded_view(prof, &o, &text, &len, &fi) < 0) {
		requests_error(cl, -ENOMEM, "out of memory");
		return;
	}
	requests_fill_target(cl, t, &tpb);
	if (ranged)
		range_target(&tpb, &wr);
	fr.target = &tpb;
	fr.folded = text;
	fr.truncated = fi.stacks_omitted > 0;
	fr.stacks_omitted = fi.stacks_omitted;
	fr.samples_omitted = fi.samples_omitted;
	fr.max_bytes = FOLDED_MAX_BYTES;
	rep.body_case = KPROF__REPLY__BODY_FOLDED;
	rep.folded = &fr;
	requests_queue(cl, &rep);
}

/* An export through a kernel view: kernel functions renamed and without addresses; with
 * PROFILE_VIEW_NO_KERNEL every kernel frame is one function's ("[kernel]") and each run of them
 * in a stack one frame. *arena (the rewritten stacks' ids) is the caller's to free. */
static int export_view(const struct profile *prof, unsigned view, struct saved_msg *m,
		       uint32_t **arena)
{
	uint32_t kid = UINT32_MAX;
	size_t nids = 0, off = 0;

	*arena = NULL;
	if (!view)
		return 0;
	for (size_t i = 0; i < m->msg.n_functions; i++) {
		const struct profile_func *f = profile_func_get(prof, i);
		struct profile_func v = profile_func_view(f, view);

		if (!profile_func_is_kernel(f))
			continue;
		if (kid == UINT32_MAX)
			kid = i;
		m->fv[i].name = (char *)v.name;
		m->fv[i].module = (char *)v.module;
		m->fv[i].start = v.start;
		m->fv[i].kind = target_pb_kind(v.kind);
	}
	if (!(view & PROFILE_VIEW_NO_KERNEL) || kid == UINT32_MAX)
		return 0;
	for (size_t i = 0; i < m->msg.n_stacks; i++)
		nids += m->sv[i].n_ids;
	*arena = malloc((nids ? nids : 1) * sizeof(**arena));
	if (!*arena)
		return -ENOMEM;
	for (size_t i = 0; i < m->msg.n_stacks; i++) {
		Kprof__SavedStack *s = &m->sv[i];
		size_t n = profile_stack_view(prof, view, s->ids, s->n_ids, kid, *arena + off);

		s->ids = *arena + off;
		s->n_ids = n;
		off += n;
	}
	return 0;
}

/* The off-CPU profile of t (of the range wr, if not NULL) as a second SavedProfile in *om
 * (released by the caller), through the client's kernel view; else the error replied. */
static int export_offcpu(struct client *cl, const struct target *t, const struct wrange *wr,
			 struct saved_msg *om, uint32_t **arena, uint64_t states[KP_OFF_NSTATES])
{
	const struct profile *prof = wr ? range_offcpu(cl, t, wr) : t->offcpu->prof;

	if (!prof)
		return -ENODATA;
	if ((wr ? saved_msg_build_range(t, prof, NULL, om) : saved_msg_build_offcpu(t, om)) < 0) {
		requests_error(cl, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	if (wr) {
		range_target(&om->target, wr);
		range_offcpu_target(&om->target, prof, states);
		om->target.samples = om->target.off_cpu_ns; /* nanoseconds */
	}
	if (export_view(prof, requests_view(cl), om, arena) < 0) {
		saved_msg_release(om);
		requests_error(cl, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* How long an export waits for kprof-lines to resolve its new addresses: what is not resolved
 * by then says "not available" (and is in the cache for the next export). */
#define LINES_WAIT_MS 15000

static void lines_stop(struct client *cl)
{
	srclines_unwait(cl->lines_wait);
	cl->lines_wait = NULL;
	kprof__request__free_unpacked(cl->lines_req, NULL);
	cl->lines_req = NULL;
}

/* The lines are resolved (or the wait is over): the held request handled again, then the
 * client read on. */
static void on_lines_done(void *userdata)
{
	struct client *cl = userdata;

	cl->lines_wait = NULL;
	cl->req = cl->lines_req;
	cl->lines_req = NULL;
	cl->lines_ready = true;
	handle(cl, cl->req);
	cl->lines_ready = false;
	if (cl->req)
		kprof__request__free_unpacked(cl->req, NULL);
	cl->req = NULL;
	transport_resume(cl->tc); /* may free cl */
}

/* A handler wants the lines it queued (requests_want_lines): the request held until they are
 * resolved, or handled again at once if it cannot wait. */
static void lines_hold(struct client *cl)
{
	cl->want_lines = false;
	if (!cl->req || srclines_wait(cl->rq->m->lines, LINES_WAIT_MS, on_lines_done, cl,
				      &cl->lines_wait) < 0) {
		cl->lines_ready = true;
		handle(cl, cl->req);
		cl->lines_ready = false;
		return;
	}
	cl->lines_req = cl->req; /* dispatch leaves it to on_lines_done */
	cl->req = NULL;
	transport_hold(cl->tc);
}

static void do_export(struct client *cl, const Kprof__ExportRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__ExportReply er = KPROF__EXPORT_REPLY__INIT;
	struct target *t = requests_session(cl, req->pid, req->session);
	_cleanup_free_ uint32_t *arena = NULL, *off_arena = NULL;
	_cleanup_(wrange_free) struct wrange wr = {0};
	const bool ranged = req->since_ns || req->until_ns;
	uint64_t states[KP_OFF_NSTATES];
	struct saved_msg m, om;

	if (!t || (req->off_cpu && !offcpu_of(cl, t)))
		return;
	if (ranged && range_of(cl, t, req->session, req->since_ns, req->until_ns, &wr) < 0)
		return;
	if (saved_msg_build_range(t, wr.prof, wr.tree, &m) < 0) {
		requests_error(cl, -ENOMEM, "out of memory");
		return;
	}
	if (ranged)
		range_target(&m.target, &wr);
	if (export_view(ranged ? wr.prof : t->profile, requests_view(cl), &m, &arena) < 0) {
		saved_msg_release(&m);
		requests_error(cl, -ENOMEM, "out of memory");
		return;
	}
	m.target.session = requests_session_of(cl, t, &m.target.sessions);
	if (req->lines && !ranged &&
	    requests_want_lines(cl, lines_pb_fill(&m, t, cl->rq->m->lines, !cl->lines_ready,
						  requests_lines_since(cl)))) {
		saved_msg_release(&m);
		return;
	}
	er.profile = &m.msg;
	if (req->off_cpu &&
	    export_offcpu(cl, t, ranged ? &wr : NULL, &om, &off_arena, states) < 0) {
		saved_msg_release(&m);
		return;
	}
	er.off_cpu = req->off_cpu ? &om.msg : NULL;
	rep.body_case = KPROF__REPLY__BODY_EXPORT;
	rep.export = &er;
	requests_queue(cl, &rep);
	saved_msg_release(&m);
	if (req->off_cpu)
		saved_msg_release(&om);
}

/* The (phi, eps)-HCCT of the live tree, else of the saved snapshot; functions merged after the
 * fact (names given late) merged in it first (a live tree through its snapshot). */
static int hcct_result(const struct target *t, bool exact, const struct hcct *live,
		       const struct hcct_tree *saved, uint64_t num, uint64_t den,
		       struct hcct_tree **ret)
{
	struct hcct_tree *snap = NULL;
	int err;

	if (exact || !profile_has_aliases(t->profile))
		return live ? hcct_query(live, num, den, ret)
			    : hcct_tree_filter(saved, num, den, ret);
	if (live && (err = hcct_snapshot(live, &snap)) < 0)
		return err;
	err = target_canon_tree(t->profile, &snap, snap ? snap : saved);
	if (err == 0)
		err = hcct_tree_filter(snap, num, den, ret);
	hcct_tree_free(snap);
	return err;
}

/* The phi of an HCCT request for t as a ratio: 0, or the error replied. */
static int hcct_phi(struct client *cl, const struct target *t, double *phi, uint64_t *num,
		    uint64_t *den)
{
	/* No phi asked: the configured default, raised to the target's eps when that is larger
	 * (below eps the HCCT guarantees nothing, so the default must never be refused). */
	if (!*phi)
		*phi = fmax(cl->rq->m->conf.hcct_phi, t->eps);
	if (!(*phi > 0 && *phi <= 1) || hcct_ratio_from_double(*phi, num, den) < 0) {
		requests_error(cl, -EINVAL, "phi %g is not in (0, 1]", *phi);
		return -EINVAL;
	}
	if (*phi < t->eps) {
		requests_error(
		    cl, -EINVAL,
		    "phi %g is below the target's eps %g: the HCCT guarantees nothing there "
		    "(attach with a smaller --eps)",
		    *phi, t->eps);
		return -EINVAL;
	}
	return 0;
}

/* One node of an HCCT reply: entry e, its function through the kernel view of prof. */
static void hcct_node_fill(Kprof__HcctNode *nv, const struct hcct_entry *e,
			   const struct profile *prof, unsigned view)
{
	const struct profile_func *pf = profile_func_get(prof, e->id);
	struct profile_func v = pf ? profile_func_view(pf, view) : (struct profile_func){0};
	const struct profile_func *f = pf ? &v : NULL;

	kprof__hcct_node__init(nv);
	nv->function = f ? (char *)f->name : "[?]";
	nv->module = f ? (char *)f->module : "[?]";
	nv->kind = f ? target_pb_kind(f->kind) : KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN;
	nv->count = e->count;
	nv->err = e->err;
	nv->parent = e->parent == HCCT_NONE ? -1 : (int32_t)e->parent;
	nv->depth = e->depth;
	nv->hot = e->flags & HCCT_ENTRY_HOT;
	nv->monitored = e->flags & HCCT_ENTRY_MONITORED;
}

/* Whether exact mode's tree of t holds no call. */
static bool exact_empty(const struct target *t)
{
	struct hcct_stats hs;

	const struct hcct_tree *saved = calls_saved_tree(t->calls);

	if (calls_tree(t->calls)) {
		hcct_get_stats(calls_tree(t->calls), &hs);
		return hs.n == 0;
	}
	return !saved || !saved->len;
}

/* The reply to an HCCT request: tree (of t at phi, its functions those of prof), the size of
 * the summary it came from (the live tree_src, else saved), and a range's span (wr, or NULL). */
static void hcct_send(struct client *cl, const struct target *t, const struct hcct_tree *tree,
		      const struct hcct *tree_src, const struct hcct_tree *saved,
		      const struct profile *prof, double phi, const struct wrange *wr)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__HcctReply hr = KPROF__HCCT_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	_cleanup_free_ Kprof__HcctNode *nv = NULL;
	_cleanup_free_ Kprof__HcctNode **np = NULL;
	unsigned view = requests_view(cl);
	struct hcct_stats hs;

	nv = calloc(tree->len ? tree->len : 1, sizeof(*nv));
	np = calloc(tree->len ? tree->len : 1, sizeof(*np));
	if (!nv || !np) {
		requests_error(cl, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < tree->len; i++) {
		hcct_node_fill(&nv[i], &tree->entries[i], prof, view);
		np[i] = &nv[i];
	}
	memset(&hs, 0, sizeof(hs));
	if (tree_src)
		hcct_get_stats(tree_src, &hs);
	else
		hs = (struct hcct_stats){.nodes = saved->len,
					 .bytes = saved->len * sizeof(*saved->entries)};
	requests_fill_target(cl, t, &tpb);
	if (wr)
		range_target(&tpb, wr);
	hr.target = &tpb;
	hr.n = tree->n;
	hr.phi = phi;
	hr.eps = t->eps;
	hr.threshold = tree->threshold;
	hr.n_nodes = tree->len;
	hr.nodes = np;
	hr.mcct_nodes = hs.nodes;
	hr.mcct_bytes = hs.bytes;
	hr.lost = hs.lost;
	rep.body_case = KPROF__REPLY__BODY_HCCT;
	rep.hcct = &hr;
	requests_queue(cl, &rep);
}

static void do_hcct(struct client *cl, const Kprof__HcctRequest *req)
{
	struct target *t = requests_session(cl, req->pid, req->session);
	double phi = req->phi;
	struct hcct_tree *tree = NULL;
	const struct hcct *tree_src;
	const struct hcct_tree *saved;
	uint64_t num, den;
	_cleanup_(wrange_free) struct wrange wr = {0};
	const bool ranged = req->since_ns || req->until_ns;

	if (!t)
		return;
	if (req->off_cpu && (ranged || req->exact)) {
		requests_error(cl, -EINVAL,
			       "hcct --off-cpu: the hot waits of the whole profile only (no --exact, "
			       "no --since/--until: report, folded and export --off-cpu take them)");
		return;
	}
	if (req->off_cpu) {
		const struct offcpu *off = offcpu_of(cl, t);

		if (!off || hcct_phi(cl, t, &phi, &num, &den) < 0)
			return;
		if (hcct_query(off->hcct, num, den, &tree) < 0) {
			requests_error(cl, -ENOMEM, "out of memory");
			return;
		}
		hcct_send(cl, t, tree, off->hcct, NULL, off->prof, phi, NULL);
		hcct_tree_free(tree);
		return;
	}
	if (ranged && req->exact) {
		requests_error(cl, -EINVAL, "--exact has no time windows: only sampled HCCTs do");
		return;
	}
	if (ranged && range_of(cl, t, req->session, req->since_ns, req->until_ns, &wr) < 0)
		return;
	/* A live tree, else the snapshot a restored profile keeps; a range's merged summaries. */
	tree_src = ranged ? NULL : req->exact ? calls_tree(t->calls) : t->hcct;
	saved = ranged ? wr.tree : req->exact ? calls_saved_tree(t->calls) : t->saved_hcct;
	if (req->exact && !tree_src && !saved) {
		requests_error(cl, -ENODATA, "pid %u: exact mode is off (attach with --calls)",
			       req->pid);
		return;
	}
	if (!tree_src && !saved) {
		requests_error(cl, -ENODATA, "pid %u: no HCCT in this profile", req->pid);
		return;
	}
	if (req->exact && !ranged && calls_by_breakpoints(t->calls) && exact_empty(t)) {
		requests_error(cl, -ENODATA,
			       "pid %u: its calls were counted by hardware breakpoints (code in "
			       "anonymous memory), which build no exact calling-context tree: the "
			       "counts are report's CALLS column; the tree is hcct without --exact",
			       req->pid);
		return;
	}
	if (hcct_phi(cl, t, &phi, &num, &den) < 0)
		return;
	if ((ranged ? hcct_tree_filter(saved, num, den, &tree)
		    : hcct_result(t, req->exact, tree_src, saved, num, den, &tree)) < 0) {
		requests_error(cl, -ENOMEM, "out of memory");
		return;
	}
	hcct_send(cl, t, tree, tree_src, saved, ranged ? wr.prof : t->profile, phi,
		  ranged ? &wr : NULL);
	hcct_tree_free(tree);
}

/* The handler of req's kind. */
static void handle(struct client *cl, const Kprof__Request *req)
{
	switch (req->body_case) {
	case KPROF__REQUEST__BODY_ATTACH:
		requests_attach(cl, req->attach);
		break;
	case KPROF__REQUEST__BODY_DETACH:
		requests_detach(cl, req->detach);
		break;
	case KPROF__REQUEST__BODY_LIST:
		requests_list(cl, req->list);
		break;
	case KPROF__REQUEST__BODY_STATUS:
		requests_status(cl);
		break;
	case KPROF__REQUEST__BODY_REPORT:
		do_report(cl, req->report);
		break;
	case KPROF__REQUEST__BODY_FOLDED:
		do_folded(cl, req->folded);
		break;
	case KPROF__REQUEST__BODY_SUBSCRIBE:
		requests_subscribe(cl, req->subscribe);
		break;
	case KPROF__REQUEST__BODY_HCCT:
		do_hcct(cl, req->hcct);
		break;
	case KPROF__REQUEST__BODY_EXPORT:
		do_export(cl, req->export);
		break;
	case KPROF__REQUEST__BODY_WATCH:
		requests_watch_rules(cl, req->watch);
		break;
	case KPROF__REQUEST__BODY_PATHS:
		requests_paths(cl, req->paths);
		break;
	case KPROF__REQUEST__BODY_ANNOTATE:
		requests_annotate(cl, req->annotate);
		break;
	case KPROF__REQUEST__BODY_DRIFT:
		requests_drift(cl, req->drift);
		break;
	default:
		requests_error(cl, -EOPNOTSUPP, "unknown request (a newer kprofctl than kprofd?)");
		break;
	}
	if (cl->want_lines)
		lines_hold(cl);
}

/* A request frame: decoded, the ring buffer drained, handled once. A handler that holds it (a
 * range merged in steps, range_defer) takes cl->req, and resumes through handle. */
static void dispatch(struct client *cl, const uint8_t *data, size_t len)
{
	Kprof__Request *req = kprof__request__unpack(NULL, len, data);

	if (!req) {
		requests_error(cl, -EBADMSG, "malformed request: not a kprof.Request message");
		transport_close(cl->tc);
		return;
	}
	if (!translate_pids(cl, req)) {
		kprof__request__free_unpacked(req, NULL);
		return;
	}
	manager_drain(cl->rq->m);
	cl->req = req;
	handle(cl, req);
	if (cl->req) /* not kept by range_defer */
		kprof__request__free_unpacked(cl->req, NULL);
	cl->req = NULL;
}

static void on_frame(void *ctx, struct transport_client *tc, const uint8_t *data, size_t len)
{
	(void)ctx;
	dispatch(transport_client_data(tc), data, len);
}

static int on_connect(void *ctx, struct transport_client *tc)
{
	struct requests *rq = ctx;
	struct client *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return -ENOMEM;
	cl->rq = rq;
	cl->tc = tc;
	cl->uid = transport_client_uid(tc);
	cl->pid = transport_client_pid(tc);
	pidns_client_init(cl->pid, &cl->pidns);
	cl->reader = transport_client_in_group(tc, rq->m->read_gid);
	transport_client_set_data(tc, cl);
	return 0;
}

static void on_disconnect(void *ctx, struct transport_client *tc)
{
	struct client *cl = transport_client_data(tc);

	(void)ctx;
	if (!cl)
		return;
	requests_live_stop(cl);
	range_job_stop(cl);
	lines_stop(cl);
	free(cl);
	transport_client_set_data(tc, NULL);
}

static int pack_error(int err, const char *msg, uint8_t **buf, size_t *len)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;

	rep.error = err;
	rep.message = (char *)msg;
	return frame_pack(&rep.base, FRAME_MAX_REPLY, buf, len);
}

static const struct transport_ops requests_ops = {
    .on_connect = on_connect,
    .on_frame = on_frame,
    .on_disconnect = on_disconnect,
    .pack_error = pack_error,
};

int requests_new(struct manager *m, struct watch *ws, struct requests **ret)
{
	struct requests *rq = calloc(1, sizeof(*rq));
	int err;

	if (!rq)
		return -ENOMEM;
	rq->m = m;
	rq->ws = ws;
	err = transport_new(m->event, &m->conf, &requests_ops, rq, &rq->tr);
	if (err < 0) {
		free(rq);
		return err;
	}
	*ret = rq;
	return 0;
}

void requests_free(struct requests *rq)
{
	if (!rq)
		return;
	transport_free(rq->tr);
	free(rq);
}
