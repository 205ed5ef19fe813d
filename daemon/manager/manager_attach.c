// SPDX-License-Identifier: GPL-2.0-only
/* manager_attach.c: attaching a process (manager_attach): the users' quotas, sampling started,
 * exact mode started (--calls; exact.c owns it and its burst and warm-up timers), the --duration
 * timer; and detaching, forgetting and re-checking a target's credentials. Apart from manager.c
 * because it is what a request or a watch does to start a target, where manager.c runs the loop;
 * it calls only manager_targets.c. The policy is explained at the top of manager.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "kprof/cleanup.h"
#include "os/clock.h"
#include "symbols/jvmattach.h"
#include "kernel/loader.h"
#include "manager/manager.h"
#include "manager/manager_attach.h"
#include "manager/manager_internal.h"
#include "kernel/ringbuf.h"
#include "kernel/sampler.h"
#include "os/store.h"
#include "wire/target_pb.h"
#include "symbols/symbolize.h"
#include "os/log.h"
#include "paths/paths.h"
#include "os/procfs.h"

/* The --duration timer of one target (the manager's loop: the target is found by its timer). */
static int on_duration(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	struct target *t;

	(void)usec;
	manager_for_each_target(m, t)
		if (t->duration_timer == s)
			break;
	if (!t)
		return sd_event_source_set_enabled(s, SD_EVENT_OFF);
	manager_end_target(m, t, TARGET_DETACHED, LOG_INFO, "detached: duration of %us over",
			   t->duration_sec);
	return 0;
}

static unsigned probes_of(const struct manager *m, uid_t uid)
{
	const struct target *t;
	unsigned n = 0;

	manager_for_each_attached(m, t)
		if (t->uid == uid)
			n += calls_nprobes(t->calls);
	return n;
}

static void probes_in(void *ctx)
{
	manager_probes_started(ctx);
}

/* Exact mode for a new target: planned, within the user's probes, started. */
static int start_calls(struct manager *m, struct target *t, const struct attach_opts *o,
		       char *errbuf, size_t errlen)
{
	const struct calls_env env = {
	    .pid = t->pid,
	    .sym = t->sym,
	    .profile = t->profile,
	    .loader = m->loader,
	    .event = m->event,
	    .hcct_slots = hcct_slots_for_eps(t->eps),
	    .max_slowdown = m->conf.probe_slowdown_pct / 100.0,
	    .probes_in = probes_in,
	    .ctx = m,
	};
	const struct calls_opts co = {.functions = o->calls_functions,
				      .force = o->force,
				      .burst_ms = o->burst_ms,
				      .period_ms = o->period_ms,
				      .max_slowdown = o->max_slowdown};
	unsigned held = probes_of(m, o->by);
	int err = calls_new(&env, &co, &t->calls, errbuf, errlen);

	if (err >= 0 && o->by != 0 && held + calls_nprobes(t->calls) > m->conf.max_probes_per_uid) {
		snprintf(errbuf, errlen,
			 "exact mode would probe %zu functions; uid %u has %u probed already "
			 "(limit %u per user)",
			 calls_nprobes(t->calls), o->by, held, m->conf.max_probes_per_uid);
		err = -EUSERS;
	}
	if (err >= 0)
		err = calls_start(t->calls, errbuf, errlen);
	return err;
}

/* The per-user quotas of an attach by uid by (root has only the global limits). */
static int check_quotas(struct manager *m, uid_t by, unsigned freq, char *errbuf, size_t errlen)
{
	unsigned mine = 0, freqs[KPROF_MAX_FREQ_SETS], my_freqs[KPROF_MAX_FREQ_SETS];
	int nf = sampler_freqs(m->sampler, freqs, KPROF_MAX_FREQ_SETS), nmine = 0;
	bool new_freq = true, mine_has = false;
	struct target *t;

	if (m->n_attached >= m->conf.max_targets) {
		snprintf(errbuf, errlen, "too many targets: %u attached (limit %u)", m->n_attached,
			 m->conf.max_targets);
		return -EMFILE;
	}
	if (by == 0)
		return 0;
	for (int i = 0; i < nf; i++)
		new_freq &= freqs[i] != freq;
	manager_for_each_attached(m, t) {
		bool seen = false;

		if (t->uid != by)
			continue;
		mine++;
		mine_has |= t->freq == freq;
		for (int i = 0; i < nmine; i++)
			seen |= my_freqs[i] == t->freq;
		if (!seen && nmine < KPROF_MAX_FREQ_SETS)
			my_freqs[nmine++] = t->freq;
	}
	if (m->n_attached >= manager_user_share(m->conf.max_targets)) {
		snprintf(
		    errbuf, errlen,
		    "too many targets: %u attached; the last of the %u slots are kept for root",
		    m->n_attached, m->conf.max_targets);
		return -EMFILE;
	}
	if (mine >= m->conf.max_targets_per_uid) {
		snprintf(errbuf, errlen, "uid %u has %u targets attached (limit %u per user)", by,
			 mine, m->conf.max_targets_per_uid);
		return -EUSERS;
	}
	if (!mine_has && (unsigned)nmine >= m->conf.max_freqs_per_uid) {
		snprintf(errbuf, errlen,
			 "uid %u samples at %d distinct frequencies already (limit %u per user): "
			 "use one of them",
			 by, nmine, m->conf.max_freqs_per_uid);
		return -EUSERS;
	}
	if (m->per_cpu && new_freq && nf >= KPROF_MAX_FREQ_SETS - 1) {
		snprintf(errbuf, errlen,
			 "%d distinct sampling frequencies are in use; the last of %d is kept for "
			 "root: use one of those in use",
			 nf, KPROF_MAX_FREQ_SETS);
		return -EBUSY;
	}
	return 0;
}

/* Opening a target's per-thread events takes kprofd ~20 us of CPU a thread, but a target whose
 * hundreds of threads are busy keeps kprofd off the CPU: as one task among them it gets a
 * timeslice every ~100 ms (measured: 500 busy threads, 7.8 s to attach, of which kprofd ran
 * 19 ms and waited to run the rest). For an attach kprofd runs SCHED_FIFO (where it may:
 * CAP_SYS_NICE; the systemd unit's cgroup weight does the same for the service), then goes
 * back to its policy. Each attach is bounded (limits.max_threads events), and all of them
 * together run SCHED_FIFO at most RT_BUDGET_MS a second (the rest as usual), so that a user
 * attaching in a loop cannot lend itself a real-time share of the CPU through kprofd; children
 * do not inherit it (SCHED_RESET_ON_FORK). */
#define RT_BUDGET_MS 100
static bool burst_enter(void)
{
	struct sched_param p = {.sched_priority = 1};

	return sched_getscheduler(0) == SCHED_OTHER &&
	       sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &p) == 0;
}

static void burst_leave(bool entered)
{
	struct sched_param p = {.sched_priority = 0};

	if (entered && sched_setscheduler(0, SCHED_OTHER, &p) < 0)
		log_warn("cannot go back to SCHED_OTHER after an attach: %s", strerror(errno));
}

/* Put t in kp_targets and open what samples it: its per-thread events (the entry first, so
 * that threads created while they are opened are reported), or the per-CPU set of its
 * frequency. */
static int start_sampling(struct manager *m, struct target *t, char *errbuf, size_t errlen)
{
	struct sampler_limits lim = {m->conf.max_threads, m->max_thread_fds};
	int err;

	t->per_cpu = m->per_cpu || t->all; /* --all's targets: its per-CPU set samples them */
	if (t->per_cpu) {
		err = sampler_freq_get(m->sampler, t->freq);
		if (err < 0) {
			snprintf(errbuf, errlen,
				 err == -EBUSY ? "too many distinct frequencies in use (%d)"
					       : "cannot start sampling at %u Hz: %s",
				 err == -EBUSY ? KPROF_MAX_FREQ_SETS : t->freq, strerror(-err));
			return err;
		}
	}
	err = manager_offcpu_start(m, t, errbuf, errlen);
	if (err < 0) {
		if (t->per_cpu)
			sampler_freq_put(m->sampler, t->freq);
		return err;
	}
	err = loader_target_add(m->loader, t->pid, t->freq, t->start_ticks,
				(t->per_cpu ? 0 : KP_TF_THREADS) |
				    (t->children ? KP_TF_CHILDREN : 0) | (t->all ? KP_TF_ALL : 0) |
				    (t->offcpu ? KP_TF_OFFCPU : 0));
	if (err < 0) {
		snprintf(errbuf, errlen, "cannot add pid %d to the BPF targets map: %s", t->pid,
			 strerror(-err));
		manager_offcpu_stop(m, t);
		if (t->per_cpu)
			sampler_freq_put(m->sampler, t->freq);
		return err;
	}
	if (t->per_cpu)
		return 0;
	/* Users leave the last eighth of the thread events to root, as with every limit. */
	if (t->by != 0)
		lim.max_total = manager_user_share(lim.max_total);
	err = sampler_target_new(m->sampler, t->pid, t->freq, t->children, &lim, &t->events, errbuf,
				 errlen);
	if (err < 0) {
		loader_target_del(m->loader, t->pid);
		return err;
	}
	sampler_target_stats(t->events, &t->threads);
	if (t->threads.unsampled)
		log_warn("pid %d: %u of its %u threads are not sampled: limit of %u thread events "
			 "per target (limits.max_threads) or %u in all (limits.max_thread_fds)",
			 t->pid, t->threads.unsampled, t->threads.threads, m->conf.max_threads,
			 m->max_thread_fds);
	return 0;
}

/* manager_attach's options checked, and the daemon's defaults filled in (frequency, eps). */
static int attach_opts_check(const struct manager *m, pid_t pid, struct attach_opts *o,
			     char *errbuf, size_t errlen)
{
	if (pid <= 0) {
		snprintf(errbuf, errlen, "invalid pid %d", pid);
		return -EINVAL;
	}
	if (pid == getpid()) {
		snprintf(errbuf, errlen, "kprofd does not profile itself");
		return -EINVAL;
	}
	if (o->freq == 0)
		o->freq = m->conf.default_freq;
	if (o->eps == 0)
		o->eps = m->conf.hcct_eps;
	if (o->burst_ms && (!o->calls || o->period_ms <= o->burst_ms || o->period_ms > 3600000)) {
		snprintf(errbuf, errlen, "bursts need --calls and a period longer than the burst");
		return -EINVAL;
	}
	if (!(o->eps >= 1e-7 && o->eps <= 1)) {
		snprintf(errbuf, errlen, "eps %g out of range [1e-7, 1]", o->eps);
		return -ERANGE;
	}
	if (o->freq > KPROF_MAX_FREQ) {
		snprintf(errbuf, errlen, "frequency %u Hz out of range 1-%u", o->freq,
			 KPROF_MAX_FREQ);
		return -ERANGE;
	}
	return 0;
}

/* Whether pid may be attached with o: not attached yet (or by --all, which a plain attach takes
 * over), within the client's quotas and the limit of automatic targets. */
static int attach_admit(struct manager *m, struct target *old, pid_t pid,
			const struct attach_opts *o, char *errbuf, size_t errlen)
{
	int err;

	if (old && old->state == TARGET_ATTACHED && (!old->all || o->all)) {
		snprintf(errbuf, errlen, "pid %d is already attached", pid);
		return -EALREADY;
	}
	/* An attach of a process system-wide mode profiles takes it over with its own settings
	 * (ARCHITECTURE.md §1.2.5); the --all profile is kept, as any detached one. */
	if (old && old->state == TARGET_ATTACHED) {
		manager_end_target(m, old, TARGET_DETACHED, LOG_INFO,
				   "detached: taken over by an attach");
		m->all_taken_over++;
	}
	err = check_quotas(m, o->by, o->freq, errbuf, errlen);
	if (err < 0)
		return err;
	if ((o->rule || o->all) && manager_auto_targets(m, NULL) >= m->conf.max_auto_targets) {
		m->auto_refused++;
		snprintf(errbuf, errlen,
			 "too many automatic targets: %u attached by watch rules and --all "
			 "(limits.max_auto_targets)",
			 m->conf.max_auto_targets);
		return -EUSERS;
	}
	return 0;
}

/* Tries at reading a process whose maps read empty while it still runs (an exec between). */
#define ATTACH_EXEC_TRIES 20

/* The target of pid, read from /proc, for the client o->by: not sampled yet, in no list. */
static int attach_new_target(struct manager *m, pid_t pid, const struct attach_opts *o,
			     struct target **ret, char *errbuf, size_t errlen)
{
	struct procinfo_stat pst;
	struct target *t = NULL;
	uint64_t start_ticks;
	int err;

	/* The start first: if the pid is reused meanwhile, target_new reads the new process and
	 * BPF samples only the old one, never one process under another's identity. */
	err = procfs_stat(pid, &pst);
	start_ticks = pst.start_ticks;
	if (err >= 0)
		err = target_new(&m->env, pid, o, &t);
	/* Read as gone (its maps empty, as a process mid-exec's can: the old memory is gone, the
	 * new not yet readable) while it runs: read again while the same process lives. */
	for (int i = 1; err == -ESRCH && i < ATTACH_EXEC_TRIES && procfs_runs(pid, start_ticks);
	     i++) {
		log_debug("pid %d: read as gone while it runs (an exec?): reading it again", pid);
		err = target_new(&m->env, pid, o, &t);
	}
	if (err < 0) {
		snprintf(errbuf, errlen,
			 err == -ESRCH	  ? "no such process: %d"
			 : err == -ECHILD ? "pid %d has exited (a zombie its parent has not reaped)"
			 : err == -EINVAL ? "%d is a thread, not a process"
					  : "cannot read process %d: %s",
			 pid, strerror(-err));
		return err == -ECHILD ? -ESRCH : err;
	}
	t->by = o->by;
	t->start_ticks = start_ticks;
	/* The client was checked against the process that had the PID then: if another got it
	 * since, that one is the client's too or is refused. */
	if (o->by != 0 && t->uid != o->by) {
		snprintf(errbuf, errlen, "permission denied: pid %d is no longer uid %u's", pid,
			 o->by);
		target_free(t);
		return -EPERM;
	}
	*ret = t;
	return 0;
}

/* The log line of an attach: how t is sampled, and its JIT symbol sources. */
static void attach_log(struct target *t, const struct attach_opts *o)
{
	const struct tsym_stats *ss = tsym_get_stats(t->sym);
	char how[96];

	if (t->per_cpu)
		snprintf(how, sizeof(how), "per-CPU events");
	else
		snprintf(how, sizeof(how), "%u thread events (%u threads, %u unsampled)",
			 t->threads.events, t->threads.threads, t->threads.unsampled);
	/* A followed child is news only when debugging: a shell loop forks thousands. */
	log_msg(o->parent || o->all ? LOG_DEBUG : LOG_INFO,
		"attached pid %d (%s, uid %u) at %u Hz by %s, duration %us (0: "
		"unlimited); perf map %s: %llu JIT symbols; jitdump %s: %llu symbols",
		t->pid, t->comm, t->uid, o->freq, how, o->duration_sec, ss->perfmap_path,
		(unsigned long long)ss->jit_symbols,
		ss->jitdump_path[0] ? ss->jitdump_path : "(none)",
		(unsigned long long)ss->jitdump_symbols);
}

static int attach(struct manager *m, pid_t pid, const struct attach_opts *opts, struct target **ret,
		  char *errbuf, size_t errlen)
{
	struct target *old = manager_find(m, pid), *t = NULL;
	struct attach_opts o = *opts;
	struct procfs_ident id;
	int err;

	err = attach_opts_check(m, pid, &o, errbuf, errlen);
	if (err < 0)
		return err;
	err = attach_admit(m, old, pid, &o, errbuf, errlen);
	if (err < 0)
		return err;
	err = attach_new_target(m, pid, &o, &t, errbuf, errlen);
	if (err < 0)
		return err;
	err = start_sampling(m, t, errbuf, errlen);
	if (err < 0) {
		target_free(t);
		return err;
	}
	/* From here on an exec is reported; one that came between reading the process and
	 * now would not be: read it again, its credentials too (a setuid exec, or a process
	 * made non-dumpable meanwhile, is not the user's to profile). */
	if (procfs_ident_read(pid, &id) == 0 && procfs_ident_owner(&id) != t->uid) {
		if (t->by != 0) {
			manager_stop_sampling(m, t);
			target_free(t);
			snprintf(
			    errbuf, errlen,
			    "permission denied: pid %d changed credentials while being attached "
			    "(setuid, or not dumpable); only root may profile it",
			    pid);
			return -EPERM;
		}
		t->uid = procfs_ident_owner(&id);
		tsym_set_reader(t->sym, t->uid);
	}
	if (procfs_ident_read(pid, &id) == 0 && strcmp(id.comm, t->comm)) {
		log_info("pid %d exec'd %s while being attached: reloading its symbols", pid,
			 id.comm);
		memcpy(t->comm, id.comm, sizeof(t->comm));
		target_exec(t);
	}
	if (o.calls) {
		err = start_calls(m, t, &o, errbuf, errlen);
		if (err < 0) {
			manager_stop_sampling(m, t);
			target_free(t);
			return err;
		}
	}
	if (o.duration_sec) {
		err = sd_event_add_time_relative(m->event, &t->duration_timer, CLOCK_MONOTONIC,
						 o.duration_sec * 1000000ULL, 0, on_duration, m);
		if (err < 0)
			log_warn("pid %d: no duration timer: %s", pid, strerror(-err));
	}
	/* A kept profile of the same pid stays, as an earlier session. */
	manager_targets_link(m, t);
	m->n_attached++;
	/* A JVM is asked for its perf map now, off the loop; its answer comes later. */
	target_sources_start(t, &o);
	attach_log(t, &o);
	manager_emit_target_attach(m, t);
	*ret = t;
	return 0;
}

int manager_attach(struct manager *m, pid_t pid, const struct attach_opts *opts,
		   struct target **ret, char *errbuf, size_t errlen)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	bool rt;
	int err;

	if (now - m->rt_window_ns >= 1000000000ULL)
		m->rt_window_ns = now, m->rt_used_ns = 0;
	rt = m->rt_used_ns < RT_BUDGET_MS * 1000000ULL && burst_enter();
	err = attach(m, pid, opts, ret, errbuf, errlen);
	if (rt) {
		m->rt_used_ns += now_ns(CLOCK_MONOTONIC) - now;
		burst_leave(rt);
	}
	return err;
}

void manager_forget(struct manager *m, struct target *t)
{
	if (t->state == TARGET_ATTACHED) {
		manager_stop_sampling(m, t);
		t->duration_timer = sd_event_source_disable_unref(t->duration_timer);
		calls_end(t->calls);
	}
	log_info("pid %d (%s): attach undone, nothing kept", t->pid, t->comm);
	manager_drop_target(m, t);
}

int manager_detach(struct manager *m, struct target *t)
{
	if (t->state != TARGET_ATTACHED)
		return -ENOENT;
	/* --all's targets come and go by the hundred: syswide.c says how many. */
	manager_end_target(m, t, TARGET_DETACHED, t->all ? LOG_DEBUG : LOG_INFO, "detached");
	return 0;
}

bool manager_recheck(struct manager *m, struct target *t)
{
	struct procfs_ident id;
	bool ns_known;
	uid_t owner;

	if (t->state != TARGET_ATTACHED)
		return false;
	m->cred_reads++;
	/* The namespace first: one entered after this read shows at the next tick. A namespace
	 * that cannot be read (an LSM, no CAP_SYS_PTRACE) leaves the next ticks reading the
	 * status in full; the status is judged now either way. */
	ns_known = procfs_userns(t->pid, &t->cred_userns) == 0;
	if (procfs_ident_read(t->pid, &id) < 0) {
		t->cred_known = false;
		return false;
	}
	owner = procfs_ident_owner(&id);
	/* What the next ticks compare (manager_recheck_tick). */
	t->cred_known = ns_known;
	t->cred_stat_uid = id.stat_uid;
	t->cred_always = owner ? id.setuid_cap : id.stat_uid != 0;
	if (owner == t->uid)
		return false;
	if (t->by == 0) {
		/* Root attached it: root goes on; the former owner may no longer read it. */
		log_info("pid %d (%s): credentials changed (uids %u/%u/%u, %sdumpable): now "
			 "root's only",
			 t->pid, id.comm, id.ruid, id.euid, id.suid, id.dumpable ? "" : "not ");
		t->uid = owner;
		tsym_set_reader(t->sym, owner);
		return false;
	}
	t->cred_lost = true; /* its records still in the ring buffer are not its owner's */
	manager_end_target(
	    m, t, TARGET_DETACHED, LOG_WARNING,
	    "ended: credentials changed away from uid %u (uids %u/%u/%u, %sdumpable)", t->uid,
	    id.ruid, id.euid, id.suid, id.dumpable ? "" : "not ");
	return true;
}

/* The owner of a process (procfs_ident_owner) is a uid U when its four uids are U and it is
 * dumpable, else root. Without an exec (whose record rechecks at once; a lost record sets lost),
 * the owner can change in only these ways, and the owner of /proc/PID/stat (its euid, or root
 * when not dumpable: what one stat gives) shows every one of them but two:
 * - dumpable turned off (prctl): /proc/PID/stat becomes root's.
 * - uids changed (setuid and the like): an owner U's process needs CAP_SETUID for that (its
 *   uids are all U, and without it a process may only pick among them), so unless it holds it
 *   (permitted, in its user namespace), nothing changes; one that does is read in full every
 *   second (cred_always). A root-owned process that becomes U's has euid U and is dumpable:
 *   /proc/PID/stat turns U's, unless it was already (euid U, another uid not: cred_always).
 * - a user namespace entered (unshare, setns: its capabilities there, CAP_SETUID among them):
 *   /proc/PID/ns/user names another namespace; read in full then, and every second after
 *   while it holds CAP_SETUID there.
 * So the cost of an idle attached target is a stat and a readlink a second, not a read and
 * parse of its status (1.4 against 5 us here). */
bool manager_recheck_tick(struct manager *m, struct target *t, bool lost)
{
	struct stat st;
	uint64_t ns;
	char path[48];

	m->cred_ticks++;
	if (t->cred_known && !t->cred_always && !lost) {
		snprintf(path, sizeof(path), "/proc/%d/stat", t->pid);
		if (stat(path, &st) == 0 && st.st_uid == t->cred_stat_uid &&
		    procfs_userns(t->pid, &ns) == 0 && ns == t->cred_userns)
			return false;
	}
	return manager_recheck(m, t);
}

void manager_probes_started(struct manager *m)
{
	uint64_t next = now_ns(CLOCK_MONOTONIC) / 1000 + m->conf.drain_ms * 1000ULL, at;

	if (sd_event_source_get_time(m->drain_timer, &at) >= 0 && at > next)
		sd_event_source_set_time(m->drain_timer, next);
}
