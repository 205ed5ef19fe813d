// SPDX-License-Identifier: GPL-2.0-only
/* manager.c: kprofd's event loop and the lifetimes of its targets. This file runs the loop
 * (ring buffer records, drains, housekeeping, SIGHUP) and builds and frees the manager; the
 * target list, ending targets and kept profiles are manager_targets.c's, attaching is
 * manager_attach.c's, cgroup and unit watches manager_watch.c's (each calls only the ones
 * before it; manager_internal.h has what they share). The policy of the whole:
 *
 * One sd-event loop runs everything: SIGTERM/SIGINT, the ring buffer (its epoll fd plus a drain
 * timer, see ringbuf.c), a periodic housekeeping timer (perf map refresh, processes that vanished
 * without an exit record, the samples/s rate), per-target duration timers and the control socket.
 * A target is ATTACHED while sampled; it becomes EXITED when its process exits and DETACHED when
 * a client detaches it or its duration ends. Ended targets keep their profiles (up to max_kept,
 * oldest dropped first) so a profile outlives its process; a new attach of the same PID (the
 * same process again, or another process that got the PID) never drops them: they stay as
 * earlier sessions, and requests by PID see the attached target first, then the newest.
 * An ended target keeps only its profile (interned names): its symbol sources are freed.
 *
 * Users share kprofd: a non-root uid may hold at most max_*_per_uid targets, kept profiles,
 * sampling frequencies and probed functions, and never the last eighth of a global limit,
 * which stays for root. A target's credentials are checked again at every exec and every
 * second: one that a user attached and that became another user's (a setuid exec) is ended
 * (each second, one stat unless only a full read would see a change: manager_recheck_tick).
 * A target quiet since the last second has nothing read for it: its check waits for its alive
 * check (every 10 s) or its next record, which is checked before it is taken in.
 */
#include <errno.h>
#include <stdarg.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "kprof/cleanup.h"
#include "kprof/codeshare.h"
#include "target/annotate.h"
#include "os/clock.h"
#include "symbols/jvmattach.h"
#include "symbols/srclines.h"
#include "kernel/loader.h"
#include "manager/manager.h"
#include "manager/manager_internal.h"
#include "manager/manager_resume.h"
#include "kernel/ringbuf.h"
#include "kernel/sampler.h"
#include "os/store.h"
#include "target/target_drift.h"
#include "wire/target_pb.h"
#include "symbols/symbolize.h"
#include "os/log.h"
#include "paths/paths.h"
#include "paths/paths_events.h"
#include "os/procfs.h"

_Static_assert(KPROF_MAX_TARGETS == KP_MAX_TARGETS, "max_targets' cap is kp_targets' size");

#define HOUSEKEEPING_USEC 1000000ULL
#define ALIVE_SWEEP_NS (10 * 1000000000ULL) /* each target's /proc read for a lost exit */
#define JVM_EXCHANGES_MAX 4		    /* JVMs asked for their perf maps at once */
#define SHARED_CODE_BYTES (64u << 20)	    /* annotate's copies of files' code (codeshare.h) */

/* Any record of tgid's but a sample: its waiting samples go first. */
static void on_other(void *ctx, pid_t tgid)
{
	struct manager *m = ctx;
	struct target *t;

	if (!m->batch_head)
		return;
	t = manager_find(m, tgid);
	if (t && t->batch_pprev)
		manager_batch_add(m, t);
}

static void on_sample(void *ctx, const struct kp_sample *s)
{
	struct manager *m = ctx;
	struct target *t = manager_find(m, s->hdr.tgid);

	/* No sample: a process that is no target waited, system-wide mode asking for off-CPU
	 * time (offcpu.bpf.c): a target now, or counted by syswide.c. */
	if (s->flags & KP_SF_WAITER) {
		if (!t || t->state != TARGET_ATTACHED || t->start_ticks != s->start_ticks)
			manager_emit_stranger(m, s);
		loader_offcpu_waiter_done(m->loader, s->hdr.tgid);
		return;
	}
	m->samples++;
	/* Taken by the system-wide set while the process was no target: a target now, or
	 * counted by syswide.c. */
	if ((s->flags & KP_SF_STRANGER) &&
	    (!t || t->state != TARGET_ATTACHED || t->start_ticks != s->start_ticks)) {
		t = manager_emit_stranger(m, s);
		if (!t)
			return;
	}
	if (!t) {
		m->unknown_tgid++;
		return;
	}
	/* Quiet at the last housekeeping: its credentials checked before anything of it is
	 * named or read (manager_housekeeping). */
	t->active = true;
	if (t->cred_due) {
		t->cred_due = false;
		manager_recheck_tick(m, t, false);
	}
	if (t->cred_lost) /* taken after the change, most likely: another owner's */
		return;
	/* kprofctl record's child before its exec: kprofctl's code, not the command's. The exec
	 * record comes after every sample the thread took before it (one ring buffer). */
	if (t->before_exec) {
		t->samples_before_exec++;
		return;
	}
	m->all_samples += t->all || (s->flags & KP_SF_STRANGER);
	if (t->all)
		t->last_sample_ns = s->time_ns;
	if (m->batching && manager_batch_keep(m, t, s))
		return;
	target_add_sample(t, s);
	/* Samples taken just before an exit can arrive after it from another CPU's records. */
	if (t->state != TARGET_ATTACHED)
		manager_mark_dirty(m, t);
}

static void on_call(void *ctx, const struct kp_call *c)
{
	struct manager *m = ctx;
	struct target *t = manager_find(m, c->hdr.tgid);

	if (t)
		target_on_call(t, c);
}

static void on_path(void *ctx, const struct kp_path *p)
{
	struct manager *m = ctx;
	struct target *t = manager_find(m, p->hdr.tgid);

	if (t) {
		paths_on_event(t->paths, p);
		target_drift_path(t, p);
	}
}

/* A thread of a per-thread target started without an event: its creator had none either (it
 * was being opened, or a limit left it out). The creator first, so that the threads it creates
 * next inherit. */
static void on_thread(void *ctx, pid_t tgid, pid_t tid, pid_t creator)
{
	struct manager *m = ctx;
	struct target *t = manager_find(m, tgid);
	int err;

	if (!t || t->state != TARGET_ATTACHED || !t->events)
		return;
	err = sampler_target_report(t->events, tid, creator);
	if (err < 0 && err != -EUSERS)
		log_warn("pid %d: cannot open the sampling event of its new thread %d: %s", tgid,
			 tid, strerror(-err));
	sampler_target_stats(t->events, &t->threads);
}

/* A target attached with --children forked: the child becomes a target of its own, with the
 * parent's settings, attached for the same client (quotas and limits apply as to any attach).
 * kp_fork has already put it in kp_targets; a child refused, or gone before it could be read,
 * is taken out again and counted. */
static void on_fork(void *ctx, pid_t child, pid_t parent, uint64_t start_ticks, bool added)
{
	struct manager *m = ctx;
	struct target *p = manager_find(m, parent), *c = NULL;
	char err[256];
	int r;

	if (!p || p->state != TARGET_ATTACHED || !p->children) {
		if (added)
			loader_target_del(m->loader, child);
		return;
	}
	struct attach_opts o = {
	    .freq = p->freq,
	    .eps = p->eps,
	    .hcct_kernel = p->hcct_kernel,
	    .no_jvm_map = p->no_jvm_map,
	    .children = true,
	    .parent = parent,
	    .by = p->by,
	    .cgroup = p->cgroup,
	    .rule = p->rule,
	    .off_cpu = p->offcpu != NULL,
	};
	r = added ? manager_attach(m, child, &o, &c, err, sizeof(err)) : -ENOSPC;
	if (r == 0 && c->start_ticks != start_ticks) { /* gone, and the pid already reused */
		manager_forget(m, c);
		r = -ESRCH;
	}
	if (r < 0) {
		if (added)
			loader_target_del(m->loader, child);
		p->children_refused++;
		/* A child that is gone already (a short pipeline stage) is no news; the rest is. */
		log_msg(r == -ESRCH ? LOG_DEBUG : LOG_WARNING,
			"pid %d (%s): child %d not followed: %s", parent, p->comm, child,
			r == -ENOSPC ? "BPF targets map full" : err);
		return;
	}
	p->children_followed++;
}

static void on_watch_rec(void *ctx, const struct kp_execwatch *w)
{
	struct manager *m = ctx;

	manager_emit_exec(m, w);
}

static void on_exit_rec(void *ctx, pid_t tgid, uint64_t start_ticks, int code)
{
	struct manager *m = ctx;
	struct target *t = manager_find(m, tgid);

	if (!t || t->state != TARGET_ATTACHED || t->start_ticks != start_ticks)
		return;
	/* exit_code is a wait status: low 7 bits the signal, the next 8 the exit status. */
	t->exit_code = (code & 0x7f) ? -(code & 0x7f) : (code >> 8) & 0xff;
	manager_end_target(m, t, TARGET_EXITED, t->parent || t->all ? LOG_DEBUG : LOG_INFO,
			   "exited (%s %d)", t->exit_code < 0 ? "signal" : "status",
			   t->exit_code < 0 ? -t->exit_code : t->exit_code);
}

static void on_exec_rec(void *ctx, pid_t tgid, uint64_t start_ticks, const char comm[16])
{
	struct manager *m = ctx;
	struct target *t = manager_find(m, tgid);
	char held[80] = "";

	if (!t || t->state != TARGET_ATTACHED || t->start_ticks != start_ticks)
		return;
	if (t->before_exec) /* kprofctl record's: from now on */
		snprintf(held, sizeof(held), "; %llu samples before it not counted (from_exec)",
			 (unsigned long long)t->samples_before_exec);
	t->before_exec = false;
	/* From the record: the process may be gone already (a short command). */
	memcpy(t->comm, comm, 16);
	t->comm[16] = '\0';
	paths_stop(t->paths, "target called exec"); /* the traced code is gone */
	annotate_exec(t->annot_q);		    /* so is the sampled code */
	if (manager_recheck(m, t))
		return;
	log_msg(t->parent || t->all ? LOG_DEBUG : LOG_INFO,
		"pid %d exec'd %s: reloading its symbols%s", tgid, t->comm, held);
	target_exec(t);
}

/* An ended target's symbols are dropped once the drain in which it ended and the next one are
 * over, not when it ends: an exit is most often seen in the middle of a drain (its record is in
 * the ring buffer), where the records after it cannot be read yet, and samples taken just before
 * the exit on another CPU can come after its record, in that batch or the next. They are named
 * with the symbols read while the process ran, not "[unknown]" (manager_drop_ended_symbols). */
static void drain(struct manager *m, bool batch)
{
	bool was = m->batching;
	struct target *t;

	m->batching = batch && manager_batch_wanted(m);
	ringbuf_drain(m->ringbuf);
	m->batching = was;
	/* A reader's drain: every sample in. The timer's: the runs that are due. */
	manager_batch_flush(m, !batch);
	manager_offcpu_drain(m, manager_find, manager_mark_dirty);
	m->drained_ns = now_ns(CLOCK_MONOTONIC);
	manager_for_each_attached(m, t)
		target_flush_captures(t);
	manager_drop_ended_symbols(m);
}

void manager_drain(struct manager *m)
{
	struct target *t;

	drain(m, false);
	/* A reader sees no function merged by late names apart from the one it merged into. */
	manager_for_each_attached(m, t)
		target_commit_names(t);
}

/* Uprobes of exact mode or a path trace: their records drive budgets and bursts, so they are
 * drained every drain_ms. */
static bool probes_active(const struct manager *m)
{
	const struct target *t;

	manager_for_each_attached(m, t)
		if (t->calls || (t->paths && t->paths->tracing))
			return true;
	return false;
}

static int on_ringbuf(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	drain(m, true);
	return 0;
}

/* Samples alone wait for a batch of SAMPLE_BATCH_MS: each drain starts with kprofd's data
 * evicted by the targets running meanwhile, and larger batches pay for that less often (a
 * fifth less CPU per sample at 500 ms than at 50 on a many-stacks load). Replies and live
 * updates drain first, and the BPF side wakes us once an eighth of the buffer is full, so
 * nothing is staler or lost for it. */
#define SAMPLE_BATCH_MS MANAGER_BATCH_MS

/* The timer runs every drain_ms while probes are in, and every SAMPLE_BATCH_MS (or drain_ms if
 * longer) otherwise: an idle kprofd, or one whose targets sleep, wakes twice a second, not 20
 * times (manager_probes_started brings the short period back at once). */
/* Perf maps and jitdumps are read in bounded steps (symbolize.c): one more step for each
 * target whose last one stopped short, between drains, never a whole file at once. A JVM is
 * looked at here too (target_sources_tick: nothing read, its rate limits inside), so that a short
 * one is asked for its map as soon as its code runs, not at the next housekeeping second. */
static void symbol_steps(struct manager *m)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct target *t;

	manager_for_each_attached(m, t) {
		if (!t->sym)
			continue;
		if (tsym_behind(t->sym)) {
			tsym_refresh(t->sym);
			target_names_update(t, false);
		}
		target_sources_tick(t, now); /* a JVM's first ask as soon as its code runs */
	}
}

void manager_batch(struct manager *m, bool do_drain)
{
	if (do_drain)
		drain(m, true);
	symbol_steps(m);
}

static int on_drain(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	bool probes = probes_active(m);
	unsigned next_ms = m->conf.drain_ms;

	manager_batch(m, probes || now_ns(CLOCK_MONOTONIC) - m->drained_ns >=
				       SAMPLE_BATCH_MS * 1000000ULL);
	if (!probes && next_ms < SAMPLE_BATCH_MS)
		next_ms = SAMPLE_BATCH_MS;
	return sd_event_source_set_time(s, usec + next_ms * 1000ULL);
}

/* Profiles grow with every new stack: once a second, the memory of each user's profiles
 * (attached and kept) is added up, and the attached targets of a user over its budget, or of
 * every user when the total is over, stop growing (their samples are still counted: new stacks
 * as "[over budget]") until it fits. But not the small ones: a target whose memory is under
 * the mean of the attached targets concerned grows on to it, so that a process started after
 * the budget was spent still gets stacks of its own (once frozen, it stays so until the
 * budget fits). What they add is at most a sixteenth of the budget (of the total: more than
 * when it was found spent); past it, every target stops growing. */
#define BUDGET_SLACK_DIV 16

struct uid_bytes {
	uid_t uid;
	uint64_t bytes;
	size_t targets;
};

/* The memory under which a target grows on over budget: mean, the attached targets' mean,
 * until the profiles hold a sixteenth more than when the budget was found spent (spent: a
 * second's growth may pass the budget), then 0. */
static uint64_t budget_floor(uint64_t budget, uint64_t spent, uint64_t total, uint64_t mean)
{
	return total > (spent > budget ? spent : budget) + budget / BUDGET_SLACK_DIV ? 0 : mean;
}

static int uid_bytes_cmp(const void *a, const void *b)
{
	uid_t x = ((const struct uid_bytes *)a)->uid, y = ((const struct uid_bytes *)b)->uid;

	return x < y ? -1 : x > y;
}

/* The attached targets' memory summed per non-root uid, sorted by uid, in one pass over them
 * (not one per target: 8,192 targets would make 67 million steps a second): the number of
 * uids, or -ENOMEM. */
static ssize_t attached_per_uid(struct manager *m, struct uid_bytes **ret)
{
	struct uid_bytes *v = calloc(m->n_attached ? m->n_attached : 1, sizeof(*v));
	size_t n = 0, k = 0;
	struct target *t;

	if (!v)
		return -ENOMEM;
	manager_for_each_attached(m, t)
		if (t->uid != 0 && n < m->n_attached)
			v[n++] = (struct uid_bytes){t->uid, t->memory, 1};
	qsort(v, n, sizeof(*v), uid_bytes_cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && v[k - 1].uid == v[i].uid)
			v[k - 1].bytes += v[i].bytes, v[k - 1].targets++;
		else
			v[k++] = v[i];
	}
	*ret = v;
	return (ssize_t)k;
}

static void check_profile_budget(struct manager *m)
{
	uint64_t total, per_uid = (uint64_t)m->conf.profiles_per_uid_mb << 20, mine, floor;
	uint64_t attached = 0; /* the attached targets' memory */
	uint64_t budget = (uint64_t)m->conf.profiles_mb << 20;
	_cleanup_free_ struct uid_bytes *uids = NULL;
	struct target *t;
	ssize_t nuids;
	bool over_total;

	/* Kept profiles' memory is kept up to date as they change (manager_targets.c): only the
	 * attached ones are measured here. */
	manager_kept_memory(m, 0, &mine, &total);
	manager_for_each_attached(m, t)
		attached += t->memory = target_memory(t);
	total += attached;
	m->profile_bytes = total;
	over_total = total > budget;
	if (over_total && !m->over_total)
		m->spent_bytes = total;
	floor = budget_floor(budget, m->spent_bytes, total,
			     attached / (m->n_attached ? m->n_attached : 1));
	if (over_total != m->over_total)
		log_warn(over_total
			     ? "the profiles hold %.0f MiB (limits.profiles_mb = %u): new stacks "
			       "are counted as [over budget] and their leaf"
			     : "the profiles hold %.0f MiB (limits.profiles_mb = %u): stacks kept "
			       "in full again",
			 total / 1048576.0, m->conf.profiles_mb);
	m->over_total = over_total;
	nuids = attached_per_uid(m, &uids);
	manager_for_each_attached(m, t) {
		const struct uid_bytes *u = NULL;
		uint64_t all;
		bool over, over_uid;

		mine = 0;
		if (t->uid != 0 && nuids >= 0) {
			manager_kept_memory(m, t->uid, &mine, &all);
			u = bsearch(&(struct uid_bytes){.uid = t->uid}, uids, (size_t)nuids,
				    sizeof(*uids), uid_bytes_cmp);
			mine += u ? u->bytes : 0;
		}
		/* No memory to sum a user's: its share as judged last second. A target frozen
		 * stays so while a budget is spent: the mean it reached rises as others grow,
		 * and it must not thaw and freeze again every second. */
		over_uid =
		    t->uid != 0 &&
		    (nuids < 0 ? t->over_budget
			       : mine > per_uid &&
				     (t->over_budget ||
				      t->memory >= budget_floor(per_uid, 0, mine,
								u ? u->bytes / u->targets : 0)));
		over = (over_total && (t->over_budget || t->memory >= floor)) || over_uid;
		if (over && !t->over_budget && !over_total)
			log_warn(
			    "pid %d (%s): new stacks counted as [over budget] and their leaf: the "
			    "profiles of uid %u hold %.0f MiB (limits.profiles_per_uid_mb = %u)",
			    t->pid, t->comm, t->uid, mine / 1048576.0, m->conf.profiles_per_uid_mb);
		target_set_over_budget(t, over);
	}
}

/* Threads without an event: a new-thread report lost to a full ring buffer (every per-thread
 * target is scanned again), or threads still being created when a target's scans at attach
 * ended (a storm on a loaded machine: that target is scanned again, unless a limit left them
 * out). A scan opens what it finds missing and recounts the rest. */
static void rescan_threads(struct manager *m)
{
	uint64_t ctr[KP_CTR_NR];
	struct target *t;
	bool lost = false;

	if (m->per_cpu)
		return;
	if (loader_counters(m->loader, ctr, NULL) == 0 &&
	    ctr[KP_CTR_THREAD_DROPS] != m->thread_drops) {
		log_warn("%llu new-thread reports lost (ring buffer full): scanning the targets' "
			 "threads again",
			 (unsigned long long)(ctr[KP_CTR_THREAD_DROPS] - m->thread_drops));
		m->thread_drops = ctr[KP_CTR_THREAD_DROPS];
		lost = true;
	}
	manager_for_each_attached(m, t) {
		if (!t->events ||
		    !(lost || (t->threads.unsampled && t->threads.events < m->conf.max_threads)))
			continue;
		if (sampler_target_rescan(t->events) < 0)
			log_warn("pid %d: cannot scan its threads again", t->pid);
		sampler_target_stats(t->events, &t->threads);
	}
}

/* Whether t's process is gone (or its PID another's), by /proc. An exit is reported by the BPF
 * side (kp_exit); /proc is read only for one it could not report: every target at once when
 * it counted a lifecycle record lost (ring buffer full), else each target once in its first
 * second and then every ALIVE_SWEEP_NS (an exit between the attach's read of /proc and its
 * entry in kp_targets has no record), spread over the sweep by the attach times. */
static bool target_gone(struct manager *m, struct target *t, uint64_t now, bool lost)
{
	struct procinfo_stat pst;

	if (!lost && t->alive_next_ns && now < t->alive_next_ns)
		return false;
	t->alive_next_ns = now + (t->alive_next_ns ? ALIVE_SWEEP_NS : 1);
	m->alive_checks++;
	return procfs_stat(t->pid, &pst) == -ESRCH || pst.start_ticks != t->start_ticks;
}

/* Whether an exit record may have been lost since the last housekeeping. */
static bool exits_lost(struct manager *m)
{
	uint64_t ctr[KP_CTR_NR];

	if (loader_counters(m->loader, ctr, NULL) < 0)
		return true;
	if (ctr[KP_CTR_LC_DROPS] == m->lc_drops)
		return false;
	m->lc_drops = ctr[KP_CTR_LC_DROPS];
	return true;
}

void manager_housekeeping(struct manager *m)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	bool lost = exits_lost(m);
	struct target *t;

	manager_for_each_attached(m, t) {
		uint64_t swept = m->alive_checks;

		/* An exit the BPF side could not report (ring buffer full) must still be seen,
		 * also when the PID was taken by another process since. */
		if (target_gone(m, t, now, lost)) {
			manager_drain_all(m);
			if (t->state == TARGET_ATTACHED)
				manager_end_target(m, t, TARGET_EXITED,
						   t->all ? LOG_DEBUG : LOG_INFO, "is gone");
			continue;
		}
		/* Quiet since the last second: nothing is read for it now, so its credentials
		 * are checked with its alive check (every 10 s) and before its next record is
		 * taken in (on_sample), not every second. */
		if (target_quiet(t) && swept == m->alive_checks && !lost) {
			t->cred_due = true;
			m->quiet_skips++;
			target_drift_tick(t); /* functions ended by their idle time: no read */
			continue;
		}
		t->cred_due = false;
		if (!manager_recheck_tick(m, t, lost)) {
			if (target_symbols_due(t, now))
				tsym_refresh(t->sym);
			target_sources_tick(t, now);
			target_names_update(t, false);
			target_drift_tick(t);
		}
	}
	rescan_threads(m);
	manager_check_watches(m);
	sd_notifyf(0, "STATUS=%u targets attached, %u kept, %.0f samples/s", m->n_attached,
		   m->n_kept, m->rate);
	manager_expire_kept(m);
	manager_save_dirty(m, false);
	check_profile_budget(m);
	if (m->rate_prev_ns && now > m->rate_prev_ns)
		m->rate =
		    (double)(m->samples - m->rate_prev_samples) * 1e9 / (now - m->rate_prev_ns);
	m->rate_prev_ns = now;
	m->rate_prev_samples = m->samples;
}

static int on_housekeeping(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;

	manager_housekeeping(m);
	return sd_event_source_set_time(s, usec + m->conf.perfmap_refresh_ms * 1000ULL);
}

static void resolve_read_group(struct manager *m)
{
	struct group gr, *res = NULL;
	char buf[4096];

	m->read_gid = (gid_t)-1;
	if (!m->conf.read_group[0])
		return;
	if (getgrnam_r(m->conf.read_group, &gr, buf, sizeof(buf), &res) != 0 || !res) {
		log_warn("read group '%s' does not exist: nobody gets read access through it",
			 m->conf.read_group);
		return;
	}
	m->read_gid = gr.gr_gid;
}

/* The [http] keys read only when the endpoint starts, from old into c. */
static void reload_keep_http(struct config *c, const struct config *old)
{
	strcpy(c->http_listen, old->http_listen);
	strcpy(c->http_token_file, old->http_token_file);
	c->http_insecure_no_auth = old->http_insecure_no_auth;
	c->http_max_connections = old->http_max_connections;
	c->http_max_per_source = old->http_max_per_source;
	c->http_request_timeout = old->http_request_timeout;
}

/* [lines] as the resolver takes them. */
static void lines_conf(const struct config *c, struct srclines_conf *lc)
{
	memset(lc, 0, sizeof(*lc));
	lc->enabled = c->lines_enabled;
	snprintf(lc->helper, sizeof(lc->helper), "%s", c->lines_helper);
	snprintf(lc->debug_dir, sizeof(lc->debug_dir), "%s", c->lines_debug_dir);
	lc->cache_bytes = (uint64_t)c->lines_cache_mb << 20;
}

/* SIGHUP: build the settings again; apply what can change live, keep the rest. */
static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct manager *m = userdata;
	struct config c;
	char err[512];

	(void)s;
	(void)si;
	if (m->load_config(&c, err, sizeof(err), m->load_userdata) < 0) {
		log_err("reload: %s; keeping the current settings", err);
		return 0;
	}
	if (strcmp(c.socket_path, m->conf.socket_path) ||
	    c.ringbuf_bytes != m->conf.ringbuf_bytes ||
	    c.ringbuf_max_mb != m->conf.ringbuf_max_mb || c.sampling != m->conf.sampling ||
	    c.max_thread_fds != m->conf.max_thread_fds)
		log_warn("reload: the socket path, the ring buffer size, the sampling events and "
			 "limits.max_thread_fds change only at restart");
	if (strcmp(c.http_listen, m->conf.http_listen) ||
	    strcmp(c.http_token_file, m->conf.http_token_file) ||
	    c.http_insecure_no_auth != m->conf.http_insecure_no_auth ||
	    c.http_max_connections != m->conf.http_max_connections ||
	    c.http_max_per_source != m->conf.http_max_per_source ||
	    c.http_request_timeout != m->conf.http_request_timeout)
		log_warn("reload: NOT applied: [http] listen, token_file, insecure_no_auth, "
			 "max_connections, max_per_source and request_timeout change only at "
			 "restart (systemctl restart kprofd); the pprof endpoint stays %s%s",
			 m->http ? "on " : "off", m->http ? m->conf.http_listen : "");
	reload_keep_http(&c, &m->conf);
	strcpy(c.socket_path, m->conf.socket_path);
	c.ringbuf_bytes = m->conf.ringbuf_bytes;
	c.ringbuf_max_mb = m->conf.ringbuf_max_mb;
	c.sampling = m->conf.sampling;
	c.max_thread_fds = m->conf.max_thread_fds;
	m->conf = c;
	resolve_read_group(m);
	symbolizer_set_budget(m->sym, (uint64_t)c.symbols_mb << 20,
			      (uint64_t)c.symbols_per_uid_mb << 20);
	if (m->lines) {
		struct srclines_conf lc;

		lines_conf(&c, &lc);
		if (srclines_configure(m->lines, &lc) < 0)
			log_warn("reload: [lines]: out of memory, the old settings kept");
	}
	manager_expiry_reset(m);
	manager_trim_kept(m);
	manager_emit_reload(m);
	log_info("reloaded the settings: %u Hz default, %u targets, %u kept, %u clients",
		 c.default_freq, c.max_targets, c.max_kept, c.max_clients);
	return 0;
}

/* A saved profile found at start: a kept target again (an unusable one is renamed *.bad). */
static int restore_one(void *ctx, const char *name, const uint8_t *buf, size_t len)
{
	struct manager *m = ctx;
	struct target *t = NULL;
	int err = target_unpack(&m->env, buf, len, &t);

	if (err < 0)
		return err;
	t->saved_name = strdup(name);
	if (!t->saved_name) {
		target_free(t);
		return -ENOMEM;
	}
	manager_add_kept(m, t);
	return 0;
}

static void on_hwbp(void *ctx, const struct kp_hwbp *b)
{
	struct manager *m = ctx;
	struct target *t = manager_find(m, b->hdr.tgid);

	if (t)
		paths_on_hwbp(t->paths, b);
}

static const struct ringbuf_ops ringbuf_ops = {
    .on_sample = on_sample,
    .on_other = on_other,
    .on_call = on_call,
    .on_path = on_path,
    .on_exit = on_exit_rec,
    .on_exec = on_exec_rec,
    .on_thread = on_thread,
    .on_fork = on_fork,
    .on_cgroup = manager_on_cgroup,
    .on_watch = on_watch_rec,
    .on_hwbp = on_hwbp,
};

/* Per-thread events hold one fd each: at most half the open files limit, the rest staying
 * for clients, probes and symbol files. */
static unsigned thread_fd_limit(unsigned wanted)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    wanted <= rl.rlim_cur / 2)
		return wanted;
	log_info("thread events: at most %llu (half the open files limit), not %u "
		 "(limits.max_thread_fds)",
		 (unsigned long long)rl.rlim_cur / 2, wanted);
	return rl.rlim_cur / 2;
}

/* SIGTERM, SIGINT and SIGHUP through the loop (the first two end it, SIGHUP reloads the
 * config); SIGPIPE ignored: a client gone mid-reply is a write error. */
static int setup_signals(struct manager *m)
{
	sigset_t mask;
	int err;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((err = sd_event_add_signal(m->event, NULL, SIGTERM, NULL, NULL)) < 0 ||
	    (err = sd_event_add_signal(m->event, NULL, SIGINT, NULL, NULL)) < 0 ||
	    (err = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m)) < 0)
		return err;
	return 0;
}

/* The symbolizer, the BPF side, the sampler, the JVM attach context and the source-line
 * resolver, and the target_env that hands them to each target. */
static int setup_sampling(struct manager *m)
{
	const struct config *conf = &m->conf;
	struct srclines_conf lc;
	int err;

	err = symbolizer_new((uint64_t)conf->symbols_mb << 20,
			     (uint64_t)conf->symbols_per_uid_mb << 20, &m->sym);
	if (err < 0)
		return err;
	err = loader_new(
	    &(struct loader_opts){.ringbuf_bytes = conf->ringbuf_bytes,
				  .ringbuf_max_bytes = (uint64_t)conf->ringbuf_max_mb << 20,
				  .max_freq = KPROF_MAX_FREQ,
				  .drain_ms = SAMPLE_BATCH_MS},
	    &m->loader);
	if (err < 0)
		return err;
	m->per_cpu = conf->sampling == CONFIG_SAMPLING_CPUS || !loader_threads_supported(m->loader);
	m->max_thread_fds = thread_fd_limit(conf->max_thread_fds);
	err = sampler_new(m->loader, m->max_thread_fds, &m->sampler);
	if (err < 0)
		return err;
	err = jvmattach_ctx_new(m->event, JVM_EXCHANGES_MAX, &m->jvm);
	if (err < 0)
		return err;
	lines_conf(conf, &lc);
	err = srclines_new(m->event, &lc, &m->lines);
	if (err < 0)
		return err;
	err = codeshare_new(SHARED_CODE_BYTES, &m->code);
	if (err < 0)
		return err;
	m->env = (struct target_env){.conf = &m->conf,
				     .sym = m->sym,
				     .loader = m->loader,
				     .event = m->event,
				     .jvm = m->jvm,
				     .lines = m->lines,
				     .code = m->code};
	return 0;
}

/* The loop's sources: the ring buffer, the drain and housekeeping timers, the watchdog. */
static int setup_loop(struct manager *m)
{
	const struct config *conf = &m->conf;
	int err;

	err = ringbuf_new(loader_ringbuf_fd(m->loader), &ringbuf_ops, m, &m->ringbuf);
	if (err < 0) {
		log_err("ring buffer: %s", strerror(-err));
		return err;
	}
	if ((err = sd_event_add_io(m->event, &m->rb_source, ringbuf_epoll_fd(m->ringbuf), EPOLLIN,
				   on_ringbuf, m)) < 0 ||
	    (err = sd_event_add_time_relative(m->event, &m->drain_timer, CLOCK_MONOTONIC,
					      conf->drain_ms * 1000ULL, 1000, on_drain, m)) < 0 ||
	    (err = sd_event_source_set_enabled(m->drain_timer, SD_EVENT_ON)) < 0 ||
	    (err = sd_event_add_time_relative(m->event, &m->refresh_timer, CLOCK_MONOTONIC,
					      HOUSEKEEPING_USEC, 10000, on_housekeeping, m)) < 0 ||
	    (err = sd_event_source_set_enabled(m->refresh_timer, SD_EVENT_ON)) < 0)
		return err;
	/* Under systemd with WatchdogSec=, sd-event sends WATCHDOG=1 from the loop itself, so a
	 * wedged loop stops the pings and gets the service restarted. */
	return sd_event_set_watchdog(m->event, true);
}

/* The profiles kept in the state directory, if there is one (else in memory only). */
static void restore_kept(struct manager *m)
{
	const struct config *conf = &m->conf;
	int err;

	if (!conf->state_dir[0])
		return;
	err = store_open(conf->state_dir, &m->store);
	if (err < 0)
		log_warn("state directory %s: %s; profiles are kept in memory only",
			 conf->state_dir, strerror(-err));
	else
		log_info("kept profiles: %d restored from %s",
			 store_foreach(m->store, ".kprof", restore_one, m), conf->state_dir);
}

int manager_new(config_load_fn load, void *userdata, struct manager **ret)
{
	struct manager *m = calloc(1, sizeof(*m));
	char errbuf[512];
	int err;

	if (!m)
		return -ENOMEM;
	m->load_config = load;
	m->load_userdata = userdata;
	err = load(&m->conf, errbuf, sizeof(errbuf), userdata);
	if (err < 0) {
		log_err("%s", errbuf);
		free(m);
		return err;
	}
	resolve_read_group(m);
	m->start_ns = now_ns(CLOCK_MONOTONIC);
	err = sd_event_default(&m->event);
	if (err < 0 || (err = setup_signals(m)) < 0 || (err = setup_sampling(m)) < 0 ||
	    (err = setup_loop(m)) < 0 || (err = manager_targets_init(m)) < 0)
		goto fail;
	err = manager_resume_init(m);
	if (err < 0)
		goto fail;
	restore_kept(m);
	manager_resume_kept(m);
	*ret = m;
	return 0;
fail:
	manager_free(m);
	return err;
}

void manager_free(struct manager *m)
{
	if (!m)
		return;
	store_free(m->store);
	for (unsigned i = 0; i < m->n_watches; i++)
		free(m->watches[i]);
	manager_targets_free(m);
	sd_event_source_disable_unref(m->rb_source);
	sd_event_source_disable_unref(m->drain_timer);
	sd_event_source_disable_unref(m->refresh_timer);
	links_removals_wait(2000); /* the kernel drops the rest with kprofd's fds */
	ringbuf_free(m->ringbuf);
	manager_offcpu_free(m);
	sampler_free(m->sampler);
	loader_free(m->loader);
	symbolizer_free(m->sym);
	srclines_free(m->lines); /* its helpers killed, their event sources gone */
	/* After the loop: it reaps and frees exchanges that were cancelled. */
	sd_event_unref(m->event);
	jvmattach_ctx_free(m->jvm);
	codeshare_free(m->code); /* after the targets: their annotate stores hold references */
	free(m);
}

/* Stopping: every attached target ends as detached, so its profile is drained and saved. */
static void manager_stop_targets(struct manager *m)
{
	struct target *t;
	unsigned n = 0;

	/* No new target while stopping: system-wide mode's samples are only counted. */
	loader_all_set(m->loader, 0);
	m->stopping = true;
	/* Again while some are attached: a drain inside may have followed a child (bounded). */
	for (int pass = 0; pass < 4 && m->n_attached; pass++)
		manager_for_each_attached(m, t) {
			manager_mark_resume(t); /* attached again at the next start */
			manager_end_target(m, t, TARGET_DETACHED, LOG_INFO,
					   "detached: kprofd stopping");
			n++;
		}
	while (ringbuf_drain(m->ringbuf) > 0)
		;
	manager_save_dirty(m, true);
	if (n)
		log_info("stopping: %u attached profiles ended%s", n,
			 m->store ? " and saved" : " (no state directory: not saved)");
}

int manager_run(struct manager *m)
{
	int err;

	log_info("kprofd %s ready: socket %s, ring buffer %u KiB, %d CPUs, %s", KPROF_VERSION,
		 m->conf.socket_path, loader_ringbuf_bytes(m->loader) / 1024,
		 loader_ncpus(m->loader),
		 m->per_cpu ? "per-CPU sampling events" : "per-thread sampling events");
	sd_notifyf(0, "READY=1\nSTATUS=ready, no targets\nMAINPID=%d", getpid());
	err = sd_event_loop(m->event);
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: saving profiles");
	manager_stop_targets(m);
	return err;
}

int manager_freqs(const struct manager *m, unsigned *out, int max)
{
	const struct target *t;
	int n = 0;

	manager_for_each_attached(m, t) {
		bool seen = false;

		for (int i = 0; i < n; i++)
			seen |= out[i] == t->freq;
		if (!seen && n < max)
			out[n++] = t->freq;
	}
	return n;
}

uint64_t manager_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}
