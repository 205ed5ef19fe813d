// SPDX-License-Identifier: GPL-2.0-only
/* requests_func.c: the requests about one function of a target: its path trace (kprofctl paths:
 * start, stop, query), its code annotated with per-instruction samples, and profile drift. Apart
 * from the profile queries (requests.c) because each hands the work to a domain module
 * (paths.c, annotate.c, the drift detector) and its wire mapping, and takes no time range.
 */
#include <errno.h>
#include <string.h>

#include "service/requests_internal.h"
#include "service/requests_access.h"
#include "service/requests_func.h"
#include "manager/manager.h"
#include "paths/paths.h"
#include "wire/paths_reply.h"
#include "wire/annotate_reply.h"
#include "wire/lines_pb.h"
#include "wire/target_pb.h"
#include "os/procfs.h"
#include "target/target.h"
#include "wire/drift_reply.h"

/* kprofctl paths PID FUNCTION: the trace of the function started on pid's target (attached
 * with the defaults first if it is not), unless it runs already. The target, or NULL after the
 * error reply; a failed start leaves nothing behind. */
static struct target *paths_begin(struct client *cl, const Kprof__PathsRequest *req)
{
	struct manager *m = cl->rq->m;
	struct target *t = manager_find(m, req->pid);
	char err_msg[512] = "";
	bool attached_here = false;
	int err;

	if (requests_check_attachable(cl, req->pid) < 0)
		return NULL;
	if (!t || t->state != TARGET_ATTACHED) {
		/* Tracing needs the target's symbols: attach it with the defaults. */
		err = manager_attach(m, req->pid, &(struct attach_opts){.by = cl->uid}, &t, err_msg,
				     sizeof(err_msg));
		if (err < 0) {
			requests_error(cl, err, "%s", err_msg);
			return NULL;
		}
		attached_here = true;
	}
	if (!(paths_tracing(t->paths) && paths_is_function(t->paths, req->function))) {
		const struct paths_opts po = {.function = req->function,
					      .k = req->k,
					      .duration_ms = req->duration_ms,
					      .budget = req->budget,
					      .force = req->force,
					      .structural = req->structural,
					      .spp_budget = req->spp_budget,
					      .spp_timeout = req->spp_timeout,
					      .max_slowdown = req->max_slowdown};

		err = target_paths_start(t, &po, err_msg, sizeof(err_msg));
		if (err < 0) {
			/* A failed request leaves nothing behind, but for a perf map not read in
			 * full yet: the target stays attached, its reads go on, kprofctl asks
			 * again (and says how to end it if it gives up). */
			if (attached_here && err != -EAGAIN)
				manager_forget(m, t);
			if (attached_here && err == -EAGAIN)
				requests_error(cl, err,
					       "%s; pid %u attached meanwhile (kprofctl detach %u "
					       "ends it)",
					       err_msg, req->pid, req->pid);
			else
				requests_error(cl, err, "%s", err_msg);
			return NULL;
		}
		manager_probes_started(m);
	}
	return t;
}

void requests_paths(struct client *cl, const Kprof__PathsRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct paths_msg pm;
	struct target *t;
	int err;

	if (req->op == KPROF__PATHS_OP__PATHS_OP_START) {
		t = paths_begin(cl, req);
		if (!t)
			return;
	} else {
		t = req->op == KPROF__PATHS_OP__PATHS_OP_STOP
			? requests_target(cl, req->pid, true)
			: requests_session(cl, req->pid, req->session);
		if (!t)
			return;
		if (req->op == KPROF__PATHS_OP__PATHS_OP_STOP)
			paths_stop(t->paths, "stopped");
	}
	err = paths_reply(t, req->top, req->brief, &pm);
	if (err < 0) {
		requests_error(cl, err,
			       err == -ENODATA
				   ? "pid %u: no path trace (start one with kprofctl paths "
				     "PID FUNCTION)"
				   : "pid %u: out of memory",
			       req->pid);
		return;
	}
	requests_fill_target(cl, t, &tpb);
	pm.r.target = &tpb;
	rep.body_case = KPROF__REPLY__BODY_PATHS;
	rep.paths = &pm.r;
	requests_queue(cl, &rep);
	paths_msg_release(&pm);
}

/* Whether t's process still runs (attached, or detached from), the one sampled (its start time),
 * so that its code may be read now. */
static bool still_running(const struct target *t)
{
	return t->state != TARGET_EXITED && procfs_runs(t->pid, t->start_ticks);
}

void requests_annotate(struct client *cl, const Kprof__AnnotateRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t = requests_session(cl, req->pid, req->session);
	struct annotate_result res;
	struct annotate_msg am;
	struct saved_msg lm = {0}; /* its mapping table and lines (--lines) */
	char err_msg[512] = "";
	int err;

	if (!t)
		return;
	/* The reply holds the target's code: for who may read its memory, not every reader. */
	if (!requests_allowed(cl, t->uid)) {
		requests_error(
		    cl, -EPERM,
		    "permission denied: annotate shows the code of pid %u, which only uid "
		    "%u and root may read",
		    req->pid, t->uid);
		return;
	}
	if (!t->annot) {
		requests_error(
		    cl, -ENODATA,
		    "pid %u: this profile was restored from disk; per-instruction samples "
		    "are kept only while kprofd runs",
		    req->pid);
		return;
	}
	err = annotate_query(&(struct annotate_src){.a = t->annot,
						    .p = t->profile,
						    .sym = t->sym,
						    .pid = t->pid,
						    .uid = t->uid,
						    .alive = still_running(t)},
			     req->function ? req->function : "", &res, err_msg, sizeof(err_msg));
	if (err < 0) {
		annotate_result_release(&res);
		requests_error(cl, err, "pid %u: %s", req->pid, err_msg);
		return;
	}
	err = annotate_reply(&res, &am);
	if (err < 0) {
		annotate_result_release(&res);
		requests_error(cl, err, "pid %u: out of memory", req->pid);
		return;
	}
	/* --lines: each instruction's; no reply while they are resolved (the request is held). */
	if (!req->lines || saved_msg_build_tables(t, &lm) < 0 ||
	    !requests_want_lines(cl, lines_pb_annotate(&am.r, t, cl->rq->m->lines, !cl->lines_ready,
						       requests_lines_since(cl), &lm))) {
		requests_fill_target(cl, t, &tpb);
		am.r.target = &tpb;
		rep.body_case = KPROF__REPLY__BODY_ANNOTATE;
		rep.annotate = &am.r;
		requests_queue(cl, &rep);
	}
	saved_msg_release(&lm);
	annotate_msg_release(&am);
	annotate_result_release(&res);
}

/* kprofctl drift PID: an attached target's profile drift (ALGORITHMS.md §12), or the result
 * kept with an ended one's profile. */
void requests_drift(struct client *cl, const Kprof__DriftRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct drift_reply_msg m;
	struct target *t = requests_session(cl, req->pid, req->session);
	int err;

	if (!t)
		return;
	if (t->state == TARGET_ATTACHED && !t->drift && !t->drift_kept) {
		requests_error(
		    cl, -EOPNOTSUPP,
		    "profile drift is off for pid %u: it was attached while kprofd.conf had "
		    "[drift] enabled = off",
		    req->pid);
		return;
	}
	if (req->keys > DRIFT_REPLY_MAX_KEYS) {
		requests_error(cl, -EINVAL, "keys %u: at most %d keys per function", req->keys,
			       DRIFT_REPLY_MAX_KEYS);
		return;
	}
	err = drift_reply_answer(t, req->keys ? req->keys : 5, &m);
	if (err < 0) {
		drift_reply_release(&m);
		if (err == -ENODATA)
			requests_error(
			    cl, err,
			    "pid %u (%s, %s): no drift data was kept with this profile (saved "
			    "by an older kprofd or drift was off)",
			    req->pid, t->comm, t->state == TARGET_EXITED ? "exited" : "detached");
		else
			requests_error(cl, err,
				       "pid %u: the drift result kept with its profile: %s",
				       req->pid, strerror(-err));
		return;
	}
	requests_fill_target(cl, t, &tpb);
	m.r.target = &tpb;
	rep.body_case = KPROF__REPLY__BODY_DRIFT;
	rep.drift = &m.r;
	requests_queue(cl, &rep);
	drift_reply_release(&m);
}
