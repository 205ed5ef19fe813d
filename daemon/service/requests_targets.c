// SPDX-License-Identifier: GPL-2.0-only
/* requests_targets.c: the requests that change or list what kprofd profiles: attach (a pid, a
 * cgroup or unit, or system-wide), detach, list, status and the watch rules. Apart from the
 * profile queries (requests.c) because these act on the manager's targets and watches and read
 * no profile; the status is also the live view's (requests_live.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/codeshare.h"
#include "service/requests_internal.h"
#include "service/requests_access.h"
#include "service/requests_targets.h"
#include "symbols/srclines.h"
#include "manager/windows.h"
#include "os/clock.h"
#include "kernel/loader.h"
#include "kernel/sampler.h"
#include "manager/manager.h"
#include "kernel/ringbuf.h"
#include "symbols/symbolize.h"
#include "manager/syswide.h"
#include "target/target.h"
#include "os/transport.h"
#include "manager/watch.h"
#include "kernel/features.h"

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
		requests_error(cl, -EINVAL,
			       "a cgroup or unit is attached alone: no pid, --calls or --duration");
		return;
	}
	err = manager_watch(cl->rq->m, req->cgroup[0] ? req->cgroup : NULL,
			    req->unit[0] ? req->unit : NULL,
			    &(struct attach_opts){.freq = req->freq_hz,
						  .eps = req->eps,
						  .hcct_kernel = req->hcct_kernel,
						  .no_jvm_map = req->no_jvm_map,
						  .off_cpu = req->off_cpu,
						  .by = cl->uid},
			    &w, &attached, &refused, err_msg, sizeof(err_msg));
	if (err < 0) {
		requests_error(cl, err, "%s", err_msg);
		return;
	}
	ar.cgroup = w->name;
	ar.cgroup_path = w->ref.path;
	ar.attached = attached;
	ar.refused = refused;
	rep.body_case = KPROF__REPLY__BODY_ATTACH;
	rep.attach = &ar;
	requests_queue(cl, &rep);
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
	pb->off_cpu = st.off_cpu;
	pb->waiters = st.waiters;
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
		requests_error(
		    cl, -EPERM,
		    "permission denied: system-wide profiling (attach --all) samples every "
		    "user's processes and needs root, as perf record -a does");
		return;
	}
	if (req->pid || req->cgroup[0] || req->unit[0] || req->calls || req->duration_sec ||
	    req->children) {
		requests_error(
		    cl, -EINVAL,
		    "--all stands alone: no pid, --cgroup, --unit, --children, --calls or "
		    "--duration");
		return;
	}
	if (!cl->rq->m->sw) {
		requests_error(cl, -EOPNOTSUPP, "system-wide mode is not available");
		return;
	}
	err = syswide_start(cl->rq->m->sw, req->freq_hz, req->off_cpu, err_msg, sizeof(err_msg));
	if (err < 0) {
		requests_error(cl, err, "%s", err_msg);
		return;
	}
	fill_syswide(cl->rq->m->sw, &sw);
	ar.system_wide = &sw;
	rep.body_case = KPROF__REPLY__BODY_ATTACH;
	rep.attach = &ar;
	requests_queue(cl, &rep);
}

void requests_attach(struct client *cl, const Kprof__AttachRequest *req)
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
	if (requests_check_attachable(cl, req->pid) < 0)
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
						   .off_cpu = req->off_cpu,
						   .by = cl->uid,
						   .calls_functions = req->calls_functions,
						   .max_slowdown = req->max_slowdown,
						   .from_exec = req->from_exec},
			     &t, err_msg, sizeof(err_msg));
	if (err < 0) {
		requests_error(cl, err, "%s", err_msg);
		return;
	}
	requests_fill_target(cl, t, &tpb);
	ar.target = &tpb;
	rep.body_case = KPROF__REPLY__BODY_ATTACH;
	rep.attach = &ar;
	requests_queue(cl, &rep);
}

/* detach --all: system-wide mode off, root only. */
static void do_detach_all(struct client *cl, const Kprof__DetachRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__DetachReply dr = KPROF__DETACH_REPLY__INIT;
	int n;

	if (cl->uid != 0) {
		requests_error(cl, -EPERM,
			       "permission denied: only root starts and stops system-wide "
			       "profiling");
		return;
	}
	if (req->pid || req->cgroup[0] || req->unit[0]) {
		requests_error(cl, -EINVAL, "--all stands alone: no pid, --cgroup or --unit");
		return;
	}
	n = cl->rq->m->sw ? syswide_stop(cl->rq->m->sw) : -ENOENT;
	if (n < 0) {
		requests_error(cl, -ENOENT, "system-wide sampling is not on");
		return;
	}
	dr.all = true;
	dr.detached = n;
	dr.cgroup = (char *)"";
	rep.body_case = KPROF__REPLY__BODY_DETACH;
	rep.detach = &dr;
	requests_queue(cl, &rep);
}

/* detach --cgroup/--unit: the watch ends, its members are detached. */
static void do_unwatch(struct client *cl, const Kprof__DetachRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	const char *name = req->cgroup[0] ? req->cgroup : req->unit;
	struct cgwatch *w = manager_find_watch(cl->rq->m, name);
	Kprof__DetachReply dr = KPROF__DETACH_REPLY__INIT;
	struct cgroup_ref ref;

	/* A cgroup may be named as given or by its full path. */
	if (!w && req->cgroup[0] && cgroup_resolve(name, &ref) == 0)
		w = manager_find_watch(cl->rq->m, ref.path);
	if (!w) {
		requests_error(cl, -ENOENT, "%s is not watched", name);
		return;
	}
	if (!requests_allowed(cl, w->opts.by)) {
		requests_error(cl, -EPERM, "permission denied: %s is watched by uid %u", name,
			       w->opts.by);
		return;
	}
	if (w->opts.rule) {
		requests_error(cl, -EPERM,
			       "%s is watched by the watch rule %s: kprofctl watch "
			       "remove it",
			       name, w->opts.rule);
		return;
	}
	dr.cgroup = (char *)name;
	dr.detached = manager_unwatch(cl->rq->m, w);
	rep.body_case = KPROF__REPLY__BODY_DETACH;
	rep.detach = &dr;
	requests_queue(cl, &rep);
}

void requests_detach(struct client *cl, const Kprof__DetachRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	struct target *t;

	if (req->all) {
		do_detach_all(cl, req);
		return;
	}
	if (req->cgroup[0] || req->unit[0]) {
		do_unwatch(cl, req);
		return;
	}
	t = requests_target(cl, req->pid, true);

	if (!t)
		return;
	if (manager_detach(cl->rq->m, t) < 0) {
		requests_error(
		    cl, -ENOENT, "pid %u is not attached (its profile is kept: %s)", req->pid,
		    t->state == TARGET_EXITED ? "the process exited" : "already detached");
		return;
	}
	requests_queue(cl, &rep);
}

void requests_list(struct client *cl, const Kprof__ListRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__ListReply lr = KPROF__LIST_REPLY__INIT;
	Kprof__SystemWide sw;
	struct manager *m = cl->rq->m;
	Kprof__Target *tv, **tp;
	size_t n = 0;

	for (struct target *t = manager_targets_first(m); t; t = manager_targets_next(t))
		n++;
	tv = calloc(n ? n : 1, sizeof(*tv));
	tp = calloc(n ? n : 1, sizeof(*tp));
	if (!tv || !tp) {
		free(tv);
		free(tp);
		requests_error(cl, -ENOMEM, "out of memory");
		return;
	}
	n = 0;
	for (struct target *t = manager_targets_first(m); t; t = manager_targets_next(t)) {
		if (!requests_may_read(cl, t->uid) || (!req->all && t->state != TARGET_ATTACHED))
			continue;
		kprof__target__init(&tv[n]);
		requests_fill_target(cl, t, &tv[n]);
		tp[n] = &tv[n];
		n++;
	}
	lr.n_targets = n;
	lr.targets = tp;
	fill_syswide(m->sw, &sw);
	lr.system_wide = &sw;
	rep.body_case = KPROF__REPLY__BODY_LIST;
	rep.list = &lr;
	requests_queue(cl, &rep);
	free(tv);
	free(tp);
}

/* The time windows' part of the status. */
static void fill_windows_status(const struct windows *w, Kprof__StatusReply *sr)
{
	struct windows_stats ws;

	windows_get_stats(w, &ws);
	sr->window_sec = ws.window_sec;
	sr->windows = ws.s.windows;
	sr->windows_in_memory = ws.s.in_memory;
	sr->window_memory_bytes = ws.s.mem_bytes;
	sr->window_disk_bytes = ws.s.disk_bytes;
	sr->windows_dropped =
	    ws.s.dropped_mem + ws.s.dropped_disk + ws.s.dropped_full + ws.s.dropped_quota;
	sr->window_bad_files = ws.bad_files;
	sr->window_write_failures = ws.write_failures;
	sr->windows_unsaved = ws.s.unsaved;
	sr->windows_aged = ws.s.aged;
	sr->window_files = ws.files;
	sr->window_ticks = ws.ticks;
	sr->window_tick_steps = ws.tick_steps;
	sr->range_queries = ws.range_queries;
	sr->range_sliced = ws.range_sliced;
	sr->range_slices = ws.range_slices;
}

/* The daemon's status; *drops (malloc'd) and freqs back its arrays. */
/* Off-CPU time: the program in use and its counts. */
static void fill_offcpu_status(const struct manager *m, Kprof__StatusReply *sr)
{
	struct manager_offcpu_status st;

	manager_offcpu_status(m, &st);
	sr->off_cpu_program = (char *)st.program;
	sr->off_cpu_targets = st.targets;
	sr->off_cpu_runs = st.runs;
	sr->off_cpu_switches = st.switches;
	sr->off_cpu_intervals = st.intervals;
	sr->off_cpu_lost = st.lost;
	sr->off_cpu_lost_ns = st.lost_ns;
	sr->off_cpu_no_stack = st.no_stack;
	sr->off_cpu_stacks_gone = st.stacks_gone;
	sr->off_cpu_callers_found = st.callers_found;
	sr->off_cpu_callers_lost = st.callers_lost;
	sr->off_cpu_rules = st.rules;
	sr->off_cpu_stacks_freed = st.stacks_freed;
	sr->off_cpu_sweeps = st.sweeps;
}

/* Source lines: the helpers' counts and the cache's. */
static void fill_lines_status(const struct manager *m, Kprof__StatusReply *sr)
{
	struct srclines_stats st;

	srclines_get_stats(m->lines, &st);
	sr->lines_helpers_started = st.started;
	sr->lines_helpers_killed = st.killed;
	sr->lines_answers = st.answers;
	sr->lines_cache_entries = st.cache.entries;
	sr->lines_cache_bytes = st.cache.bytes;
	sr->lines_cache_max_bytes = st.cache.max_bytes;
	sr->lines_cache_evicted = st.cache.evicted;
}

int requests_fill_status(struct requests *rq, Kprof__StatusReply *sr, uint64_t **drops,
			 unsigned freqs[MANAGER_MAX_FREQS])
{
	struct manager *m = rq->m;
	int ncpus = loader_ncpus(m->loader);
	uint64_t ctr[KP_CTR_NR] = {0};
	struct codeshare_stats cst;

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
	symbolizer_names_stats(m->sym, &sr->shared_names, &sr->shared_names_full);
	sr->profile_bytes = m->profile_bytes;
	sr->profile_budget_bytes = (uint64_t)m->conf.profiles_mb << 20;
	sr->profiles_over_budget = m->over_total;
	manager_lookup_stats(m, &sr->lookups, &sr->lookup_steps);
	manager_save_stats(m, &sr->save_walks, &sr->save_steps);
	sr->cred_ticks = m->cred_ticks;
	sr->cred_reads = m->cred_reads;
	sr->quiet_skips = m->quiet_skips;
	codeshare_get_stats(m->code, &cst);
	sr->shared_code_copies = cst.entries;
	sr->shared_code_bytes = cst.memory;
	sr->shared_code_found = cst.hits;
	sr->shared_code_full = cst.full;
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
	if (m->windows)
		fill_windows_status(m->windows, sr);
	fill_offcpu_status(m, sr);
	fill_lines_status(m, sr);
	return 0;
}

/* The client's targets whose probes are in (exact mode, a path trace running): their costs.
 * *tv and *tp (malloc'd) back sr's array. */
static int fill_probing(struct client *cl, Kprof__StatusReply *sr, Kprof__Target **tv,
			Kprof__Target ***tp)
{
	struct manager *m = cl->rq->m;
	struct target *t;
	size_t n = 0;

	manager_for_each_attached(m, t)
		n += t->calls || paths_tracing(t->paths);
	*tv = calloc(n ? n : 1, sizeof(**tv));
	*tp = calloc(n ? n : 1, sizeof(**tp));
	if (!*tv || !*tp)
		return -ENOMEM;
	n = 0;
	manager_for_each_attached(m, t) {
		if ((!t->calls && !paths_tracing(t->paths)) || !requests_may_read(cl, t->uid))
			continue;
		kprof__target__init(&(*tv)[n]);
		requests_fill_target(cl, t, &(*tv)[n]);
		(*tp)[n] = &(*tv)[n];
		n++;
	}
	sr->n_probing = n;
	sr->probing = *tp;
	return 0;
}

void requests_status(struct client *cl)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__StatusReply sr;
	_cleanup_free_ uint64_t *drops = NULL;
	unsigned freqs[MANAGER_MAX_FREQS];
	Kprof__Watch wv[MANAGER_MAX_WATCHES], *wp[MANAGER_MAX_WATCHES];
	Kprof__SystemWide sw;
	Kprof__HttpStatus hp;
	const struct http_stats *hs;
	Kprof__KernelFeature fv[FEAT_NR], *fp[FEAT_NR];
	struct manager *m = cl->rq->m;
	const struct features *fs = loader_features(m->loader);
	_cleanup_free_ Kprof__Target *pv = NULL;
	_cleanup_free_ Kprof__Target **pp = NULL;

	if (requests_fill_status(cl->rq, &sr, &drops, freqs) < 0) {
		requests_error(cl, -EIO, "cannot read the BPF counters");
		return;
	}
	if (fill_probing(cl, &sr, &pv, &pp) < 0) {
		requests_error(cl, -ENOMEM, "out of memory");
		return;
	}
	for (int i = 0; i < FEAT_NR; i++) {
		kprof__kernel_feature__init(&fv[i]);
		fv[i].name = (char *)fs->f[i].name;
		fv[i].on = fs->f[i].on;
		fv[i].kernel = (char *)fs->f[i].kernel;
		fv[i].why = (char *)fs->f[i].why;
		fp[i] = &fv[i];
	}
	sr.n_features = FEAT_NR;
	sr.features = fp;
	fill_syswide(m->sw, &sw);
	sr.system_wide = &sw;
	hs = &m->http_stats;
	if (hs->on) {
		kprof__http_status__init(&hp);
		hp.listen = (char *)hs->listen;
		hp.token = hs->token;
		hp.connections = hs->connections;
		hp.waiting = hs->waiting;
		hp.unauthorized = hs->unauthorized;
		hp.left = hs->left;
		hp.evicted = hs->evicted;
		hp.busy = hs->busy;
		hp.served = hs->served;
		hp.profiles = hs->profiles;
		hp.profile_cpu_ns = hs->profile_cpu_ns;
		hp.built_off_loop = hs->built_off_loop;
		hp.building = hs->building;
		sr.http = &hp;
	}
	/* The client's own watches (all of them for root and readers). */
	for (unsigned i = 0; i < m->n_watches; i++) {
		const struct cgwatch *w = m->watches[i];
		Kprof__Watch *v = &wv[sr.n_watches];

		if (!requests_may_read(cl, w->opts.by))
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
	requests_queue(cl, &rep);
}

/* One rule of a watch reply, with the targets it attached now. */
static void watch_rule_fill(const struct watch *ws, const struct manager *m, const struct wrule *r,
			    Kprof__WatchRule *v)
{
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
}

/* kprofctl watch add|remove|list: the reply lists the rules the client may see. */
void requests_watch_rules(struct client *cl, const Kprof__WatchRequest *req)
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
		requests_error(cl, -ENOTSUP, "watch rules are not available");
		return;
	}
	if (req->add[0] && req->remove[0]) {
		requests_error(cl, -EINVAL, "add or remove, not both");
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
		requests_error(cl, err, "%s", err_msg);
		return;
	}
	rv = calloc(ws->n ? ws->n : 1, sizeof(*rv));
	rp = calloc(ws->n ? ws->n : 1, sizeof(*rp));
	if (!rv || !rp) {
		requests_error(cl, -ENOMEM, "out of memory");
		return;
	}
	for (unsigned i = 0; i < ws->n; i++) {
		const struct wrule *r = ws->rules[i];
		Kprof__WatchRule *v = &rv[wr.n_rules];

		if (!requests_may_read(cl, r->owner))
			continue;
		watch_rule_fill(ws, m, r, v);
		rp[wr.n_rules++] = v;
	}
	wr.rules = rp;
	wr.auto_targets = manager_auto_targets(m, NULL);
	wr.max_auto_targets = m->conf.max_auto_targets;
	wr.auto_refused = m->auto_refused;
	rep.body_case = KPROF__REPLY__BODY_WATCH;
	rep.watch = &wr;
	requests_queue(cl, &rep);
}
