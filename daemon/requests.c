// SPDX-License-Identifier: GPL-2.0-only
/* requests.c: kprofd's answers: each request frame from the transport, authorized and handled.
 *
 * The transport (transport.c) hands over whole frames; this file decodes them as kprof.Request,
 * checks who may do what and builds the kprof.Reply. Authorization: uid 0 may do anything; any
 * other uid may attach to, read and detach only processes it could ptrace itself
 * (proc_ident_owner), and lists only those; members of the configured read group may list and
 * read every profile. Kernel detail follows what the kernel itself would show the client
 * (kallsyms_show_value, perf_event_paranoid), read at each request: addresses zeroed, or every
 * kernel frame shown as "[kernel]" (the views are profile.c's). Folded text is built within
 * FOLDED_MAX_BYTES, never whole first. A live subscription (kprofctl top) is a timer per client
 * that sends an update each interval, skipped while the last one is unsent.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/frame.h"
#include "requests.h"
#include "windows.h"
#include "clock.h"
#include "live.h"
#include "loader.h"
#include "sampler.h"
#include "manager.h"
#include "paths.h"
#include "ringbuf.h"
#include "symbolize.h"
#include "syswide.h"
#include "paths_reply.h"
#include "annotate_reply.h"
#include "procfs.h"
#include "target_pb.h"
#include "transport.h"
#include "watch.h"
#include "log.h"
#include "drift_reply.h"

#define FOLDED_MAX_BYTES (64u << 20)

struct requests {
	struct manager *m;
	struct watch *ws;
	struct transport *tr;
};

/* One connected client, as the request side sees it. */
struct client {
	struct requests *rq;
	struct transport_client *tc;
	uid_t uid;
	pid_t pid;
	bool reader;	   /* in the configured read group: may list and read every profile */
	struct live *live; /* a live subscription (kprofctl top), or NULL */
	sd_event_source *live_timer;
};

static void client_queue(struct client *cl, Kprof__Reply *rep)
{
	transport_reply(cl->tc, &rep->base);
}

static void reply_error(struct client *cl, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reply_error(struct client *cl, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	transport_reply_error(cl->tc, err, msg);
}

/* The kernel view (PROFILE_VIEW_*) a client gets: what the kernel would show it. Kernel
 * addresses only if kallsyms_show_value would (kptr_restrict 0 and perf_event_paranoid <= 1;
 * a non-root client is taken to lack CAP_SYSLOG), kernel frames only if the kernel would let it
 * profile the kernel (perf_event_paranoid <= 1). Read at each request: the sysctls can change. */
static int read_sysctl(const char *path, int fallback)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[32];
	ssize_t n;

	if (fd < 0)
		return fallback;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return fallback;
	buf[n] = '\0';
	return atoi(buf);
}

static unsigned client_view(const struct client *cl)
{
	int kptr, paranoid;

	if (cl->uid == 0)
		return 0;
	kptr = read_sysctl("/proc/sys/kernel/kptr_restrict", 2);
	paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid", 2);
	if (paranoid >= 2)
		return PROFILE_VIEW_NO_KERNEL | PROFILE_VIEW_NO_KADDR;
	return kptr == 0 && paranoid <= 1 ? 0 : PROFILE_VIEW_NO_KADDR;
}

/* May cl attach to or detach a process of uid owner? */
static bool allowed(const struct client *cl, uid_t owner)
{
	return cl->uid == 0 || cl->uid == owner;
}

/* May cl read the profile of a process of uid owner? */
static bool may_read(const struct client *cl, uid_t owner)
{
	return allowed(cl, owner) || cl->reader;
}

static bool visible_to(const struct target *t, void *arg)
{
	return may_read(arg, t->uid);
}

/* The target of a read (write = false) or detach request, or NULL after queueing the error
 * reply: the attached one or the newest kept one that cl may read (a PID reused by another
 * user's process keeps each user's sessions apart), else any, for the error. */
/* The sessions of a pid (one per attach; a PID reused by another process is another session)
 * are numbered from 1, oldest first, among those cl may read. The place of t among them, and
 * (ret) how many there are. */
static uint32_t session_of(const struct client *cl, const struct target *t, uint32_t *n)
{
	uint32_t rank = 1, count = 0;

	for (const struct target *o = cl->rq->m->targets; o; o = o->next) {
		if (o->pid != t->pid || !may_read(cl, o->uid))
			continue;
		count++;
		if (o != t && (o->attached_ns < t->attached_ns ||
			       (o->attached_ns == t->attached_ns && o < t)))
			rank++;
	}
	*n = count;
	return rank;
}

/* Session number session of pid (session_of), or NULL; *n: how many there are. */
static struct target *nth_session(const struct client *cl, uint32_t pid, uint32_t session,
				  uint32_t *n)
{
	struct target *found = NULL;

	*n = 0;
	for (struct target *o = cl->rq->m->targets; o; o = o->next) {
		uint32_t count;

		if ((uint32_t)o->pid == pid && may_read(cl, o->uid)) {
			if (session_of(cl, o, &count) == session)
				found = o;
			*n = count;
		}
	}
	return found;
}

/* A target's facts as cl sees them: with its session number among those cl may read. */
static void fill_target(const struct client *cl, const struct target *t, Kprof__Target *pb)
{
	target_fill_pb(t, pb);
	pb->session = session_of(cl, t, &pb->sessions);
}

static struct target *request_target(struct client *cl, uint32_t pid, bool write);

/* As request_target, for a read of one session (0: the attached or newest one). */
static struct target *request_session(struct client *cl, uint32_t pid, uint32_t session)
{
	struct target *t;
	uint32_t n;

	if (!session)
		return request_target(cl, pid, false);
	t = nth_session(cl, pid, session, &n);
	if (!t && n)
		reply_error(cl, -ENOENT,
			    "pid %u has %u session%s (kprofctl list --all): no session %u", pid, n,
			    n == 1 ? "" : "s", session);
	else if (!t)
		reply_error(cl, -ENOENT, "pid %u is not attached and no profile of it is kept",
			    pid);
	return t;
}

static struct target *request_target(struct client *cl, uint32_t pid, bool write)
{
	struct target *t = manager_find_for(cl->rq->m, pid, visible_to, cl);

	/* Credentials may have changed since the last check (a setuid exec). */
	if (t && t->state == TARGET_ATTACHED && manager_recheck(cl->rq->m, t))
		t = manager_find_for(cl->rq->m, pid, visible_to, cl);
	if (!t)
		t = manager_find(cl->rq->m, pid);
	if (!t) {
		reply_error(cl, -ENOENT, "pid %u is not attached and no profile of it is kept",
			    pid);
		return NULL;
	}
	if (write ? !allowed(cl, t->uid) : !may_read(cl, t->uid)) {
		reply_error(cl, -EPERM,
			    "permission denied: pid %u belongs to uid %u; uid %u may only "
			    "profile its own processes",
			    pid, t->uid, cl->uid);
		return NULL;
	}
	return t;
}

/* The process pid may be attached by cl: 0, or an error reply queued. */
static int check_attachable(struct client *cl, uint32_t pid)
{
	uid_t owner;
	int err;

	if (pid == 0 || pid > INT32_MAX) {
		reply_error(cl, -EINVAL, "invalid pid %u", pid);
		return -EINVAL;
	}
	err = target_proc_uid(pid, &owner);
	if (err < 0) {
		if (err == -ESRCH && kill(pid, 0) == 0)
			reply_error(cl, err,
				    "pid %u has exited (a zombie its parent has not reaped)", pid);
		else if (err == -ESRCH)
			reply_error(cl, err, "no such process: %u", pid);
		else if (err == -EINVAL)
			reply_error(cl, err, "%u is a thread id, not a process id", pid);
		else
			reply_error(cl, err, "cannot read process %u: %s", pid, strerror(-err));
		return err;
	}
	if (!allowed(cl, owner)) {
		if (owner == 0)
			reply_error(
			    cl, -EPERM,
			    "permission denied: pid %u runs with root's or mixed "
			    "credentials (setuid, or not dumpable); only root may profile it",
			    pid);
		else
			reply_error(cl, -EPERM,
				    "permission denied: pid %u belongs to uid %u; uid %u may only "
				    "profile its own processes",
				    pid, owner, cl->uid);
		return -EPERM;
	}
	return 0;
}

/* attach --cgroup/--unit: a watch, its members attached with the request's settings. */
static void do_watch(struct client *cl, const Kprof__AttachRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__AttachReply ar = KPROF__ATTACH_REPLY__INIT;
	struct cgwatch *w;
	unsigned attached = 0, refused = 0;
	char err_msg[512] = "";
	int err;

	if (req->pid || (req->cgroup[0] && req->unit[0]) || req->calls || req->duration_sec) {
		reply_error(cl, -EINVAL,
			    "a cgroup or unit is attached alone: no pid, --calls or --duration");
		return;
	}
	err = manager_watch(cl->rq->m, req->cgroup[0] ? req->cgroup : NULL,
			    req->unit[0] ? req->unit : NULL,
			    &(struct attach_opts){.freq = req->freq_hz,
						  .eps = req->eps,
						  .hcct_kernel = req->hcct_kernel,
						  .no_jvm_map = req->no_jvm_map,
						  .by = cl->uid},
			    &w, &attached, &refused, err_msg, sizeof(err_msg));
	if (err < 0) {
		reply_error(cl, err, "%s", err_msg);
		return;
	}
	ar.cgroup = w->name;
	ar.cgroup_path = w->ref.path;
	ar.attached = attached;
	ar.refused = refused;
	rep.body_case = KPROF__REPLY__BODY_ATTACH;
	rep.attach = &ar;
	client_queue(cl, &rep);
}

static void fill_syswide(const struct syswide *sw, Kprof__SystemWide *pb)
{
	struct syswide_stats st;

	kprof__system_wide__init(pb);
	if (!sw)
		return;
	syswide_get_stats(sw, &st);
	pb->on = st.on;
	pb->freq_hz = st.freq;
	pb->since_ns = st.since_ns;
	pb->cpus = st.cpus;
	pb->targets = st.targets;
	pb->profiled = st.profiled;
	pb->refused = st.refused;
	pb->refused_samples = st.refused_samples;
	pb->gone = st.gone;
	pb->gone_samples = st.gone_samples;
	pb->kernel_samples = st.kernel_samples;
	pb->idle_samples = st.idle_samples;
	pb->self_samples = st.self_samples;
	pb->foreign_samples = st.foreign_samples;
	pb->taken_over = st.taken_over;
	pb->kept_dropped = st.kept_dropped;
	pb->samples = st.samples;
	pb->late_samples = st.late_samples;
	pb->runs = st.runs;
	pb->own_samples = st.own_samples;
	pb->drops = st.drops;
	pb->evicted = st.evicted;
}

/* attach --all: system-wide mode, root only (as perf record -a needs CAP_PERFMON). */
static void do_attach_all(struct client *cl, const Kprof__AttachRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__AttachReply ar = KPROF__ATTACH_REPLY__INIT;
	Kprof__SystemWide sw;
	char err_msg[256] = "";
	int err;

	if (cl->uid != 0) {
		reply_error(cl, -EPERM,
			    "permission denied: system-wide profiling (attach --all) samples every "
			    "user's processes and needs root, as perf record -a does");
		return;
	}
	if (req->pid || req->cgroup[0] || req->unit[0] || req->calls || req->duration_sec ||
	    req->children) {
		reply_error(cl, -EINVAL,
			    "--all stands alone: no pid, --cgroup, --unit, --children, --calls or "
			    "--duration");
		return;
	}
	if (!cl->rq->m->sw) {
		reply_error(cl, -EOPNOTSUPP, "system-wide mode is not available");
		return;
	}
	err = syswide_start(cl->rq->m->sw, req->freq_hz, err_msg, sizeof(err_msg));
	if (err < 0) {
		reply_error(cl, err, "%s", err_msg);
		return;
	}
	fill_syswide(cl->rq->m->sw, &sw);
	ar.system_wide = &sw;
	rep.body_case = KPROF__REPLY__BODY_ATTACH;
	rep.attach = &ar;
	client_queue(cl, &rep);
}

static void do_attach(struct client *cl, const Kprof__AttachRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__AttachReply ar = KPROF__ATTACH_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t;
	char err_msg[256] = "";
	int err;

	if (req->all) {
		do_attach_all(cl, req);
		return;
	}
	if (req->cgroup[0] || req->unit[0]) {
		do_watch(cl, req);
		return;
	}
	if (check_attachable(cl, req->pid) < 0)
		return;
	err = manager_attach(cl->rq->m, req->pid,
			     &(struct attach_opts){.freq = req->freq_hz,
						   .duration_sec = req->duration_sec,
						   .eps = req->eps,
						   .hcct_kernel = req->hcct_kernel,
						   .calls = req->calls,
						   .force = req->force,
						   .burst_ms = req->burst_ms,
						   .period_ms = req->period_ms,
						   .no_jvm_map = req->no_jvm_map,
						   .children = req->children,
						   .by = cl->uid,
						   .calls_functions = req->calls_functions},
			     &t, err_msg, sizeof(err_msg));
	if (err < 0) {
		reply_error(cl, err, "%s", err_msg);
		return;
	}
	fill_target(cl, t, &tpb);
	ar.target = &tpb;
	rep.body_case = KPROF__REPLY__BODY_ATTACH;
	rep.attach = &ar;
	client_queue(cl, &rep);
}

static void do_detach(struct client *cl, const Kprof__DetachRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	struct target *t;

	if (req->all) {
		Kprof__DetachReply dr = KPROF__DETACH_REPLY__INIT;
		int n;

		if (cl->uid != 0) {
			reply_error(cl, -EPERM,
				    "permission denied: only root starts and stops system-wide "
				    "profiling");
			return;
		}
		if (req->pid || req->cgroup[0] || req->unit[0]) {
			reply_error(cl, -EINVAL, "--all stands alone: no pid, --cgroup or --unit");
			return;
		}
		n = cl->rq->m->sw ? syswide_stop(cl->rq->m->sw) : -ENOENT;
		if (n < 0) {
			reply_error(cl, -ENOENT, "system-wide sampling is not on");
			return;
		}
		dr.all = true;
		dr.detached = n;
		dr.cgroup = (char *)"";
		rep.body_case = KPROF__REPLY__BODY_DETACH;
		rep.detach = &dr;
		client_queue(cl, &rep);
		return;
	}
	if (req->cgroup[0] || req->unit[0]) {
		const char *name = req->cgroup[0] ? req->cgroup : req->unit;
		struct cgwatch *w = manager_find_watch(cl->rq->m, name);
		Kprof__DetachReply dr = KPROF__DETACH_REPLY__INIT;
		struct cgroup_ref ref;

		/* A cgroup may be named as given or by its full path. */
		if (!w && req->cgroup[0] && cgroup_resolve(name, &ref) == 0)
			w = manager_find_watch(cl->rq->m, ref.path);
		if (!w) {
			reply_error(cl, -ENOENT, "%s is not watched", name);
			return;
		}
		if (!allowed(cl, w->opts.by)) {
			reply_error(cl, -EPERM, "permission denied: %s is watched by uid %u", name,
				    w->opts.by);
			return;
		}
		if (w->opts.rule) {
			reply_error(cl, -EPERM,
				    "%s is watched by the watch rule %s: kprofctl watch "
				    "remove it",
				    name, w->opts.rule);
			return;
		}
		dr.cgroup = (char *)name;
		dr.detached = manager_unwatch(cl->rq->m, w);
		rep.body_case = KPROF__REPLY__BODY_DETACH;
		rep.detach = &dr;
		client_queue(cl, &rep);
		return;
	}
	t = request_target(cl, req->pid, true);

	if (!t)
		return;
	if (manager_detach(cl->rq->m, t) < 0) {
		reply_error(cl, -ENOENT, "pid %u is not attached (its profile is kept: %s)",
			    req->pid,
			    t->state == TARGET_EXITED ? "the process exited" : "already detached");
		return;
	}
	client_queue(cl, &rep);
}

static void do_list(struct client *cl, const Kprof__ListRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__ListReply lr = KPROF__LIST_REPLY__INIT;
	Kprof__SystemWide sw;
	struct manager *m = cl->rq->m;
	Kprof__Target *tv, **tp;
	size_t n = 0;

	for (struct target *t = m->targets; t; t = t->next)
		n++;
	tv = calloc(n ? n : 1, sizeof(*tv));
	tp = calloc(n ? n : 1, sizeof(*tp));
	if (!tv || !tp) {
		free(tv);
		free(tp);
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	n = 0;
	for (struct target *t = m->targets; t; t = t->next) {
		if (!may_read(cl, t->uid) || (!req->all && t->state != TARGET_ATTACHED))
			continue;
		kprof__target__init(&tv[n]);
		fill_target(cl, t, &tv[n]);
		tp[n] = &tv[n];
		n++;
	}
	lr.n_targets = n;
	lr.targets = tp;
	fill_syswide(m->sw, &sw);
	lr.system_wide = &sw;
	rep.body_case = KPROF__REPLY__BODY_LIST;
	rep.list = &lr;
	client_queue(cl, &rep);
	free(tv);
	free(tp);
}

/* The daemon's status; *drops (malloc'd) and freqs back its arrays. */
static int fill_status(struct requests *rq, Kprof__StatusReply *sr, uint64_t **drops,
		       unsigned freqs[MANAGER_MAX_FREQS])
{
	struct manager *m = rq->m;
	int ncpus = loader_ncpus(m->loader);
	uint64_t ctr[KP_CTR_NR] = {0};

	*drops = calloc(ncpus, sizeof(**drops));
	if (!*drops || loader_counters(m->loader, ctr, *drops) < 0)
		return -EIO;
	kprof__status_reply__init(sr);
	sr->version = KPROF_VERSION;
	sr->pid = getpid();
	sr->uptime_ns = now_ns(CLOCK_MONOTONIC) - m->start_ns;
	sr->targets_attached = m->n_attached;
	sr->targets_kept = m->n_kept;
	sr->samples = m->samples;
	sr->samples_per_sec = m->rate;
	sr->drops = ctr[KP_CTR_DROPS];
	sr->n_drops_per_cpu = ncpus;
	sr->drops_per_cpu = *drops;
	sr->bad_records = ringbuf_bad_records(m->ringbuf);
	sr->ringbuf_bytes = loader_ringbuf_bytes(m->loader);
	sr->n_frequencies = manager_freqs(m, freqs, MANAGER_MAX_FREQS);
	sr->frequencies = freqs;
	sr->cpu_ns = manager_cpu_ns();
	sr->clients = transport_clients(rq->tr);
	symbolizer_get_stats(m->sym, &sr->symbol_bytes, &sr->symbol_refusals);
	sr->profile_bytes = m->profile_bytes;
	sr->sampling = m->per_cpu ? "cpus" : "threads";
	sr->thread_events = sampler_thread_events(m->sampler);
	sr->sampler_runs = ctr[KP_CTR_TICKS];
	sr->threads_created = ctr[KP_CTR_THREADS_NEW];
	sr->thread_reports = ctr[KP_CTR_THREAD_RECS];
	sr->thread_reports_lost = ctr[KP_CTR_THREAD_DROPS];
	sr->forks_lost = ctr[KP_CTR_FORK_DROPS];
	sr->watch_rules = rq->ws ? rq->ws->n : 0;
	sr->auto_targets = manager_auto_targets(m, NULL);
	sr->max_auto_targets = m->conf.max_auto_targets;
	sr->auto_refused = m->auto_refused;
	sr->watch_execs_lost = ctr[KP_CTR_WATCH_DROPS];
	if (m->windows) {
		struct windows_stats ws;

		windows_get_stats(m->windows, &ws);
		sr->window_sec = ws.window_sec;
		sr->windows = ws.s.windows;
		sr->windows_in_memory = ws.s.in_memory;
		sr->window_memory_bytes = ws.s.mem_bytes;
		sr->window_disk_bytes = ws.s.disk_bytes;
		sr->windows_dropped = ws.s.dropped_mem + ws.s.dropped_disk + ws.s.dropped_full;
		sr->window_bad_files = ws.bad_files;
		sr->window_write_failures = ws.write_failures;
		sr->windows_unsaved = ws.s.unsaved;
		sr->windows_aged = ws.s.aged;
	}
	return 0;
}

static void do_status(struct client *cl)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__StatusReply sr;
	_cleanup_free_ uint64_t *drops = NULL;
	unsigned freqs[MANAGER_MAX_FREQS];
	Kprof__Watch wv[MANAGER_MAX_WATCHES], *wp[MANAGER_MAX_WATCHES];
	Kprof__SystemWide sw;
	struct manager *m = cl->rq->m;

	if (fill_status(cl->rq, &sr, &drops, freqs) < 0) {
		reply_error(cl, -EIO, "cannot read the BPF counters");
		return;
	}
	fill_syswide(m->sw, &sw);
	sr.system_wide = &sw;
	/* The client's own watches (all of them for root and readers). */
	for (unsigned i = 0; i < m->n_watches; i++) {
		const struct cgwatch *w = m->watches[i];
		Kprof__Watch *v = &wv[sr.n_watches];

		if (!may_read(cl, w->opts.by))
			continue;
		kprof__watch__init(v);
		v->name = (char *)w->name;
		v->path = (char *)w->ref.path;
		v->uid = w->opts.by;
		v->attached = w->joined;
		v->refused = w->refused;
		v->since_ns = w->since_ns;
		v->waiting = w->waiting;
		v->restarts = w->restarts;
		wp[sr.n_watches++] = v;
	}
	sr.watches = wp;
	rep.body_case = KPROF__REPLY__BODY_STATUS;
	rep.status = &sr;
	client_queue(cl, &rep);
}

/* kprofctl watch add|remove|list: the reply lists the rules the client may see. */
static void do_watch_rules(struct client *cl, const Kprof__WatchRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__WatchReply wr = KPROF__WATCH_REPLY__INIT;
	struct watch *ws = cl->rq->ws;
	struct manager *m = cl->rq->m;
	_cleanup_free_ Kprof__WatchRule *rv = NULL;
	_cleanup_free_ Kprof__WatchRule **rp = NULL;
	char err_msg[512] = "";
	int err = 0;

	if (!ws) {
		reply_error(cl, -ENOTSUP, "watch rules are not available");
		return;
	}
	if (req->add[0] && req->remove[0]) {
		reply_error(cl, -EINVAL, "add or remove, not both");
		return;
	}
	if (req->add[0]) {
		err = watch_add(ws, req->add, strlen(req->add), cl->uid, &wr.added, &wr.attached,
				&wr.refused, err_msg, sizeof(err_msg));
	} else if (req->remove[0]) {
		struct wrule *r =
		    watch_find(ws, req->remove, cl->uid, &err, err_msg, sizeof(err_msg));

		if (r)
			wr.detached = watch_remove(ws, r);
	}
	if (err < 0) {
		reply_error(cl, err, "%s", err_msg);
		return;
	}
	rv = calloc(ws->n ? ws->n : 1, sizeof(*rv));
	rp = calloc(ws->n ? ws->n : 1, sizeof(*rp));
	if (!rv || !rp) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	for (unsigned i = 0; i < ws->n; i++) {
		const struct wrule *r = ws->rules[i];
		Kprof__WatchRule *v = &rv[wr.n_rules];

		if (!may_read(cl, r->owner))
			continue;
		kprof__watch_rule__init(v);
		v->id = r->id;
		v->rule = (char *)r->text;
		v->uid = r->owner;
		v->config = r->config;
		v->attached = r->counts.attached;
		v->refused = r->counts.refused;
		v->since_ns = r->since_ns;
		v->state = (char *)watch_state(ws, r);
		v->targets = manager_auto_targets(m, r->text);
		rp[wr.n_rules++] = v;
	}
	wr.rules = rp;
	wr.auto_targets = manager_auto_targets(m, NULL);
	wr.max_auto_targets = m->conf.max_auto_targets;
	wr.auto_refused = m->auto_refused;
	rep.body_case = KPROF__REPLY__BODY_WATCH;
	rep.watch = &wr;
	client_queue(cl, &rep);
}

/* One live update for a subscribed client; skipped while its last one is still unsent (a
 * slow client gets fewer updates, never a growing queue). */
static int on_live_tick(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct client *cl = userdata;
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__StatusReply sr;
	_cleanup_free_ uint64_t *drops = NULL;
	unsigned freqs[MANAGER_MAX_FREQS];
	struct live_msg msg = {0};

	sd_event_source_set_time(src, usec + live_interval_ms(cl->live) * 1000ULL);
	if (transport_busy(cl->tc))
		return 0;
	manager_drain(cl->rq->m); /* the interval's samples, not those of the last timer drain */
	if (fill_status(cl->rq, &sr, &drops, freqs) < 0 ||
	    live_update(cl->live, client_view(cl), &msg) < 0) {
		live_msg_release(&msg);
		reply_error(cl, -ENOMEM, "cannot build the live update");
	} else {
		msg.up.status = &sr;
		rep.body_case = KPROF__REPLY__BODY_UPDATE;
		rep.update = &msg.up;
		client_queue(cl, &rep);
		live_msg_release(&msg);
	}
	transport_flush(cl->tc); /* may free cl (a write error) */
	return 0;
}

static void live_stop(struct client *cl)
{
	cl->live_timer = sd_event_source_disable_unref(cl->live_timer);
	live_free(cl->live);
	cl->live = NULL;
}

static void do_subscribe(struct client *cl, const Kprof__SubscribeRequest *req)
{
	int err;

	live_stop(cl);
	for (size_t i = 0; i < req->n_pids; i++) {
		struct target *t = manager_find_for(cl->rq->m, req->pids[i], visible_to, cl);

		if (!t)
			t = manager_find(cl->rq->m, req->pids[i]);

		if (!t) {
			reply_error(cl, -ENOENT,
				    "pid %u is not attached and no profile of it is kept",
				    req->pids[i]);
			return;
		}
		if (!may_read(cl, t->uid)) {
			reply_error(cl, -EPERM, "permission denied: pid %u belongs to uid %u",
				    req->pids[i], t->uid);
			return;
		}
	}
	err = live_new(cl->rq->m, req, cl->uid, cl->reader, &cl->live);
	if (err < 0) {
		reply_error(cl, err,
			    err == -E2BIG    ? "too many pids (at most 64)"
			    : err == -ERANGE ? "interval must be 100-60000 ms"
					     : "out of memory");
		return;
	}
	/* The first update comes at once: it carries the counts so far. */
	err = sd_event_add_time_relative(cl->rq->m->event, &cl->live_timer, CLOCK_MONOTONIC, 0,
					 1000, on_live_tick, cl);
	if (err >= 0) /* a repeating timer, not a one-shot: each tick moves it on */
		err = sd_event_source_set_enabled(cl->live_timer, SD_EVENT_ON);
	if (err < 0) {
		live_stop(cl);
		reply_error(cl, err, "cannot start the live timer: %s", strerror(-err));
	}
}

/* A --since/--until request: the profile of that time range of t (windows.c) in *r, else the
 * error replied. */
static int range_of(struct client *cl, struct target *t, uint32_t session, uint64_t since,
		    uint64_t until, struct wrange *r)
{
	char msg[512] = "";
	int err;

	memset(r, 0, sizeof(*r));
	if (!cl->rq->m->windows) {
		reply_error(cl, -ENODATA, "time windows are not kept by this kprofd");
		return -ENODATA;
	}
	err = windows_range(cl->rq->m->windows, t, session != 0, since, until, r, msg, sizeof(msg));
	if (err < 0)
		reply_error(cl, err, "%s", msg);
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

static void do_report(struct client *cl, const Kprof__ReportRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__ReportReply rr = KPROF__REPORT_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t = request_session(cl, req->pid, req->session);
	_cleanup_free_ struct profile_row *rows = NULL;
	_cleanup_free_ Kprof__FlatEntry *ev = NULL;
	_cleanup_free_ Kprof__FlatEntry **ep = NULL;
	_cleanup_(wrange_free) struct wrange wr = {0};
	const bool ranged = req->since_ns || req->until_ns;
	const struct profile *prof;
	struct profile_stats ps;
	size_t n, shown;

	if (!t)
		return;
	if (ranged && range_of(cl, t, req->session, req->since_ns, req->until_ns, &wr) < 0)
		return;
	prof = ranged ? wr.prof : t->profile;
	if (profile_flat_view(prof, client_view(cl), &rows, &n) < 0) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	shown = req->top && req->top < n ? req->top : n;
	ev = calloc(shown ? shown : 1, sizeof(*ev));
	ep = calloc(shown ? shown : 1, sizeof(*ep));
	if (!ev || !ep) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
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
		ev[i].calls = !ranged && id < t->calls.ncounts ? t->calls.counts[id] : 0;
		ep[i] = &ev[i];
	}
	profile_get_stats(prof, &ps);
	fill_target(cl, t, &tpb);
	if (ranged)
		range_target(&tpb, &wr);
	rr.target = &tpb;
	rr.total_samples = ps.samples;
	rr.n_entries = shown;
	rr.entries = ep;
	rr.functions = n;
	rep.body_case = KPROF__REPLY__BODY_REPORT;
	rep.report = &rr;
	client_queue(cl, &rep);
}

static void do_folded(struct client *cl, const Kprof__FoldedRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__FoldedReply fr = KPROF__FOLDED_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t = request_session(cl, req->pid, req->session);
	struct profile_folded_opts o = {.max_bytes = FOLDED_MAX_BYTES, .view = client_view(cl)};
	struct profile_folded_info fi;
	_cleanup_free_ char *text = NULL;
	_cleanup_(wrange_free) struct wrange wr = {0};
	const bool ranged = req->since_ns || req->until_ns;
	size_t len;

	if (!t)
		return;
	if (ranged && range_of(cl, t, req->session, req->since_ns, req->until_ns, &wr) < 0)
		return;
	if (profile_folded_view(ranged ? wr.prof : t->profile, &o, &text, &len, &fi) < 0) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	fill_target(cl, t, &tpb);
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
	client_queue(cl, &rep);
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

static void do_export(struct client *cl, const Kprof__ExportRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__ExportReply er = KPROF__EXPORT_REPLY__INIT;
	struct target *t = request_session(cl, req->pid, req->session);
	_cleanup_free_ uint32_t *arena = NULL;
	_cleanup_(wrange_free) struct wrange wr = {0};
	const bool ranged = req->since_ns || req->until_ns;
	struct saved_msg m;

	if (!t)
		return;
	if (ranged && range_of(cl, t, req->session, req->since_ns, req->until_ns, &wr) < 0)
		return;
	if (saved_msg_build_range(t, wr.prof, wr.tree, &m) < 0) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	if (ranged)
		range_target(&m.target, &wr);
	if (export_view(ranged ? wr.prof : t->profile, client_view(cl), &m, &arena) < 0) {
		saved_msg_release(&m);
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	m.target.session = session_of(cl, t, &m.target.sessions);
	er.profile = &m.msg;
	rep.body_case = KPROF__REPLY__BODY_EXPORT;
	rep.export = &er;
	client_queue(cl, &rep);
	saved_msg_release(&m);
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

static void do_hcct(struct client *cl, const Kprof__HcctRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__HcctReply hr = KPROF__HCCT_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t = request_session(cl, req->pid, req->session);
	double phi = req->phi;
	struct hcct_tree *tree = NULL;
	_cleanup_free_ Kprof__HcctNode *nv = NULL;
	_cleanup_free_ Kprof__HcctNode **np = NULL;
	struct hcct_stats hs;
	const struct hcct *tree_src;
	const struct hcct_tree *saved;
	uint64_t num, den;
	unsigned view = client_view(cl);
	_cleanup_(wrange_free) struct wrange wr = {0};
	const bool ranged = req->since_ns || req->until_ns;
	const struct profile *prof;

	if (!t)
		return;
	if (ranged && req->exact) {
		reply_error(cl, -EINVAL, "--exact has no time windows: only sampled HCCTs do");
		return;
	}
	if (ranged && range_of(cl, t, req->session, req->since_ns, req->until_ns, &wr) < 0)
		return;
	prof = ranged ? wr.prof : t->profile;
	/* A live tree, else the snapshot a restored profile keeps; a range's merged summaries. */
	tree_src = ranged ? NULL : req->exact ? t->calls.exact : t->hcct;
	saved = ranged ? wr.tree : req->exact ? t->calls.saved_exact : t->saved_hcct;
	if (req->exact && !tree_src && !saved) {
		reply_error(cl, -ENODATA, "pid %u: exact mode is off (attach with --calls)",
			    req->pid);
		return;
	}
	if (!tree_src && !saved) {
		reply_error(cl, -ENODATA, "pid %u: no HCCT in this profile", req->pid);
		return;
	}
	/* No phi asked: the configured default, raised to the target's eps when that is larger
	 * (below eps the HCCT guarantees nothing, so the default must never be refused). */
	if (!phi)
		phi = fmax(cl->rq->m->conf.hcct_phi, t->eps);
	if (!(phi > 0 && phi <= 1) || hcct_ratio_from_double(phi, &num, &den) < 0) {
		reply_error(cl, -EINVAL, "phi %g is not in (0, 1]", phi);
		return;
	}
	if (phi < t->eps) {
		reply_error(
		    cl, -EINVAL,
		    "phi %g is below the target's eps %g: the HCCT guarantees nothing there "
		    "(attach with a smaller --eps)",
		    phi, t->eps);
		return;
	}
	if ((ranged ? hcct_tree_filter(saved, num, den, &tree)
		    : hcct_result(t, req->exact, tree_src, saved, num, den, &tree)) < 0) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	nv = calloc(tree->len ? tree->len : 1, sizeof(*nv));
	np = calloc(tree->len ? tree->len : 1, sizeof(*np));
	if (!nv || !np) {
		hcct_tree_free(tree);
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < tree->len; i++) {
		const struct hcct_entry *e = &tree->entries[i];
		const struct profile_func *pf = profile_func_get(prof, e->id);
		struct profile_func v = pf ? profile_func_view(pf, view) : (struct profile_func){0};
		const struct profile_func *f = pf ? &v : NULL;

		kprof__hcct_node__init(&nv[i]);
		nv[i].function = f ? (char *)f->name : "[?]";
		nv[i].module = f ? (char *)f->module : "[?]";
		nv[i].kind = f ? target_pb_kind(f->kind) : KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN;
		nv[i].count = e->count;
		nv[i].err = e->err;
		nv[i].parent = e->parent == HCCT_NONE ? -1 : (int32_t)e->parent;
		nv[i].depth = e->depth;
		nv[i].hot = e->flags & HCCT_ENTRY_HOT;
		nv[i].monitored = e->flags & HCCT_ENTRY_MONITORED;
		np[i] = &nv[i];
	}
	memset(&hs, 0, sizeof(hs));
	if (tree_src)
		hcct_get_stats(tree_src, &hs);
	else
		hs = (struct hcct_stats){.nodes = saved->len,
					 .bytes = saved->len * sizeof(*saved->entries)};
	fill_target(cl, t, &tpb);
	if (ranged)
		range_target(&tpb, &wr);
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
	client_queue(cl, &rep);
	hcct_tree_free(tree);
}

static void do_paths(struct client *cl, const Kprof__PathsRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct manager *m = cl->rq->m;
	struct paths_msg pm;
	struct target *t = manager_find(m, req->pid);
	char err_msg[512] = "";
	int err;

	if (req->op == KPROF__PATHS_OP__PATHS_OP_START) {
		bool attached_here = false;

		if (check_attachable(cl, req->pid) < 0)
			return;
		if (!t || t->state != TARGET_ATTACHED) {
			/* Tracing needs the target's symbols: attach it with the defaults. */
			err = manager_attach(m, req->pid, &(struct attach_opts){.by = cl->uid}, &t,
					     err_msg, sizeof(err_msg));
			if (err < 0) {
				reply_error(cl, err, "%s", err_msg);
				return;
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
						      .spp_timeout = req->spp_timeout};

			err = target_paths_start(t, &po, err_msg, sizeof(err_msg));
			if (err < 0) {
				if (attached_here) /* a failed request leaves nothing behind */
					manager_forget(m, t);
				reply_error(cl, err, "%s", err_msg);
				return;
			}
			manager_probes_started(m);
		}
	} else {
		t = req->op == KPROF__PATHS_OP__PATHS_OP_STOP
			? request_target(cl, req->pid, true)
			: request_session(cl, req->pid, req->session);
		if (!t)
			return;
		if (req->op == KPROF__PATHS_OP__PATHS_OP_STOP)
			paths_stop(t->paths, "stopped");
	}
	err = paths_reply(t, req->top, req->brief, &pm);
	if (err < 0) {
		reply_error(cl, err,
			    err == -ENODATA
				? "pid %u: no path trace (start one with kprofctl paths "
				  "PID FUNCTION)"
				: "pid %u: out of memory",
			    req->pid);
		return;
	}
	fill_target(cl, t, &tpb);
	pm.r.target = &tpb;
	rep.body_case = KPROF__REPLY__BODY_PATHS;
	rep.paths = &pm.r;
	client_queue(cl, &rep);
	paths_msg_release(&pm);
}

/* Whether t's process still runs (attached, or detached from), the one sampled (its start time),
 * so that its code may be read now. */
static bool still_running(const struct target *t)
{
	struct procinfo_stat st;

	return t->state != TARGET_EXITED && procfs_stat(t->pid, &st) == 0 && st.state != 'Z' &&
	       st.start_ticks == t->start_ticks;
}

static void do_annotate(struct client *cl, const Kprof__AnnotateRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t = request_session(cl, req->pid, req->session);
	struct annotate_result res;
	struct annotate_msg am;
	char err_msg[512] = "";
	int err;

	if (!t)
		return;
	/* The reply holds the target's code: for who may read its memory, not every reader. */
	if (!allowed(cl, t->uid)) {
		reply_error(cl, -EPERM,
			    "permission denied: annotate shows the code of pid %u, which only uid "
			    "%u and root may read",
			    req->pid, t->uid);
		return;
	}
	if (!t->annot) {
		reply_error(cl, -ENODATA,
			    "pid %u: this profile was restored from disk; per-instruction samples "
			    "are kept only while kprofd runs",
			    req->pid);
		return;
	}
	err = annotate_query(&(struct annotate_src){.a = t->annot,
						    .p = t->profile,
						    .sym = t->sym,
						    .pid = t->pid,
						    .alive = still_running(t)},
			     req->function ? req->function : "", &res, err_msg, sizeof(err_msg));
	if (err < 0) {
		annotate_result_release(&res);
		reply_error(cl, err, "pid %u: %s", req->pid, err_msg);
		return;
	}
	err = annotate_reply(&res, &am);
	if (err < 0) {
		annotate_result_release(&res);
		reply_error(cl, err, "pid %u: out of memory", req->pid);
		return;
	}
	fill_target(cl, t, &tpb);
	am.r.target = &tpb;
	rep.body_case = KPROF__REPLY__BODY_ANNOTATE;
	rep.annotate = &am.r;
	client_queue(cl, &rep);
	annotate_msg_release(&am);
	annotate_result_release(&res);
}

/* kprofctl drift PID: an attached target's profile drift (ALGORITHMS.md §12), or the result
 * kept with an ended one's profile. */
static void do_drift(struct client *cl, const Kprof__DriftRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct drift_reply_msg m;
	struct target *t = request_session(cl, req->pid, req->session);
	int err;

	if (!t)
		return;
	if (t->state == TARGET_ATTACHED && !t->drift) {
		reply_error(
		    cl, -EOPNOTSUPP,
		    "profile drift is off for pid %u: it was attached while kprofd.conf had "
		    "[drift] enabled = off",
		    req->pid);
		return;
	}
	if (req->keys > DRIFT_REPLY_MAX_KEYS) {
		reply_error(cl, -EINVAL, "keys %u: at most %d keys per function", req->keys,
			    DRIFT_REPLY_MAX_KEYS);
		return;
	}
	err = drift_reply_answer(t, req->keys ? req->keys : 5, &m);
	if (err < 0) {
		drift_reply_release(&m);
		if (err == -ENODATA)
			reply_error(
			    cl, err,
			    "pid %u (%s, %s): no drift data was kept with this profile (saved "
			    "by an older kprofd or drift was off)",
			    req->pid, t->comm, t->state == TARGET_EXITED ? "exited" : "detached");
		else
			reply_error(cl, err, "pid %u: the drift result kept with its profile: %s",
				    req->pid, strerror(-err));
		return;
	}
	fill_target(cl, t, &tpb);
	m.r.target = &tpb;
	rep.body_case = KPROF__REPLY__BODY_DRIFT;
	rep.drift = &m.r;
	client_queue(cl, &rep);
	drift_reply_release(&m);
}

static void on_frame(void *ctx, struct transport_client *tc, const uint8_t *data, size_t len)
{
	struct client *cl = transport_client_data(tc);
	Kprof__Request *req = kprof__request__unpack(NULL, len, data);

	(void)ctx;

	if (!req) {
		reply_error(cl, -EBADMSG, "malformed request: not a kprof.Request message");
		transport_close(cl->tc);
		return;
	}
	manager_drain(cl->rq->m);
	switch (req->body_case) {
	case KPROF__REQUEST__BODY_ATTACH:
		do_attach(cl, req->attach);
		break;
	case KPROF__REQUEST__BODY_DETACH:
		do_detach(cl, req->detach);
		break;
	case KPROF__REQUEST__BODY_LIST:
		do_list(cl, req->list);
		break;
	case KPROF__REQUEST__BODY_STATUS:
		do_status(cl);
		break;
	case KPROF__REQUEST__BODY_REPORT:
		do_report(cl, req->report);
		break;
	case KPROF__REQUEST__BODY_FOLDED:
		do_folded(cl, req->folded);
		break;
	case KPROF__REQUEST__BODY_SUBSCRIBE:
		do_subscribe(cl, req->subscribe);
		break;
	case KPROF__REQUEST__BODY_HCCT:
		do_hcct(cl, req->hcct);
		break;
	case KPROF__REQUEST__BODY_EXPORT:
		do_export(cl, req->export);
		break;
	case KPROF__REQUEST__BODY_WATCH:
		do_watch_rules(cl, req->watch);
		break;
	case KPROF__REQUEST__BODY_PATHS:
		do_paths(cl, req->paths);
		break;
	case KPROF__REQUEST__BODY_ANNOTATE:
		do_annotate(cl, req->annotate);
		break;
	case KPROF__REQUEST__BODY_DRIFT:
		do_drift(cl, req->drift);
		break;
	default:
		reply_error(cl, -EOPNOTSUPP, "unknown request (a newer kprofctl than kprofd?)");
		break;
	}
	kprof__request__free_unpacked(req, NULL);
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
	live_stop(cl);
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
