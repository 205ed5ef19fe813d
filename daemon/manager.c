// SPDX-License-Identifier: GPL-2.0-only
/* manager.c: kprofd's event loop and the lifetimes of its targets.
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
 * second: one that a user attached and that became another user's (a setuid exec) is ended.
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
#include "clock.h"
#include "jvmattach.h"
#include "jvmmap.h"
#include "loader.h"
#include "manager.h"
#include "ringbuf.h"
#include "sampler.h"
#include "store.h"
#include "target_pb.h"
#include "symbolize.h"
#include "log.h"
#include "paths.h"
#include "procfs.h"

#define HOUSEKEEPING_USEC 1000000ULL
#define JVM_EXCHANGES_MAX 4 /* JVMs asked for their perf maps at once */

struct target *manager_find_for(struct manager *m, pid_t pid,
				bool (*ok)(const struct target *t, void *arg), void *arg)
{
	struct target *best = NULL;

	for (struct target *t = m->targets; t; t = t->next) {
		if (t->pid != pid || !ok(t, arg))
			continue;
		if (t->state == TARGET_ATTACHED)
			return t;
		if (!best || t->ended_ns > best->ended_ns)
			best = t;
	}
	return best;
}

static bool any_target(const struct target *t, void *arg)
{
	(void)t;
	(void)arg;
	return true;
}

struct target *manager_find(struct manager *m, pid_t pid)
{
	return manager_find_for(m, pid, any_target, NULL);
}

/* The part of a global limit that non-root users may take: all but an eighth (at least one
 * kept for root when the limit allows it). */
static unsigned user_share(unsigned limit)
{
	unsigned reserve = limit / 8;

	if (!reserve && limit > 1)
		reserve = 1;
	return limit - reserve;
}

static void unlink_target(struct manager *m, struct target *t)
{
	for (struct target **pp = &m->targets; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			return;
		}
	}
}

static void drop_target(struct manager *m, struct target *t)
{
	unlink_target(m, t);
	if (m->store)
		store_remove(m->store, t->saved_name);
	if (t->state == TARGET_ATTACHED)
		m->n_attached--;
	else
		m->n_kept--;
	target_free(t);
}

/* A restored target that is not in the list: delete its file, free it. */
static void drop_target_unsaved(struct manager *m, struct target *t)
{
	if (m->store)
		store_remove(m->store, t->saved_name);
	target_free(t);
}

static unsigned kept_of(const struct manager *m, uid_t uid)
{
	unsigned n = 0;

	for (const struct target *t = m->targets; t; t = t->next)
		n += t->state != TARGET_ATTACHED && t->uid == uid;
	return n;
}

/* Whether kept profile a goes before b: the profiles system-wide mode made (attach --all) go
 * first, so that a storm of short processes never pushes out a profile someone asked for, and
 * among them the smallest (a busy host ends many processes of a sample or two, which would
 * push out in seconds the profile of a process that ran); then the oldest. */
static bool drops_before(const struct target *a, const struct target *b)
{
	if (a->all != b->all)
		return a->all;
	if (a->all && a->samples != b->samples)
		return a->samples < b->samples;
	return a->ended_ns < b->ended_ns;
}

/* The kept profile to drop first, if one must go: the oldest of a user over its quota, else
 * the oldest of the users when they hold more than their share, else the oldest of all when
 * over max_kept (root's go only when root's alone exceed it); --all's first (drops_before). */
static struct target *kept_victim(struct manager *m)
{
	struct target *user_oldest = NULL, *oldest = NULL;
	unsigned users = 0;

	for (struct target *t = m->targets; t; t = t->next) {
		if (t->state == TARGET_ATTACHED)
			continue;
		if (t->uid != 0 && kept_of(m, t->uid) > m->conf.max_kept_per_uid) {
			struct target *o = t;

			for (struct target *u = m->targets; u; u = u->next)
				if (u->state != TARGET_ATTACHED && u->uid == t->uid &&
				    drops_before(u, o))
					o = u;
			return o;
		}
		if (t->uid != 0) {
			users++;
			if (!user_oldest || drops_before(t, user_oldest))
				user_oldest = t;
		}
		if (!oldest || drops_before(t, oldest))
			oldest = t;
	}
	if (users > user_share(m->conf.max_kept) || (m->n_kept > m->conf.max_kept && user_oldest))
		return user_oldest;
	return m->n_kept > m->conf.max_kept ? oldest : NULL;
}

/* Keep at most max_kept ended profiles, and users within their quotas. */
static void trim_kept(struct manager *m)
{
	struct target *t;

	while ((t = kept_victim(m))) {
		log_msg(t->all ? LOG_DEBUG : LOG_INFO,
			"dropping the kept profile of pid %d (%s, uid %u): more than %u kept (%u "
			"for one user)",
			t->pid, t->comm, t->uid, m->conf.max_kept, m->conf.max_kept_per_uid);
		m->all_kept_dropped += t->all;
		drop_target(m, t);
	}
}

/* Write t's profile to the store as PID-ATTACHTIME.kprof; sets t->saved_name. */
static int store_target(struct store *st, struct target *t)
{
	_cleanup_free_ uint8_t *buf = NULL;
	_cleanup_free_ char *name = NULL;
	size_t len;
	int err;

	err = target_pack(t, &buf, &len);
	if (err >= 0 &&
	    asprintf(&name, "%d-%llu.kprof", t->pid, (unsigned long long)t->attached_ns) < 0)
		err = -ENOMEM;
	if (err >= 0)
		err = store_write(st, name, buf, len);
	if (err < 0) {
		log_err("pid %d: cannot save the profile in %s: %s", t->pid, store_path(st),
			strerror(-err));
		return err;
	}
	log_debug("pid %d: profile saved to %s/%s (%zu bytes)", t->pid, store_path(st), name, len);
	free(t->saved_name);
	t->saved_name = TAKE_PTR(name);
	return 0;
}

/* Write t's profile; a failed write is tried again from the housekeeping timer (backing off
 * up to a minute) until it succeeds or the profile is dropped. */
static void save_target(struct manager *m, struct target *t)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (!m->store)
		return;
	if (store_target(m->store, t) == 0) {
		if (t->save_failures)
			log_info("pid %d: profile saved after %u failed tries", t->pid,
				 t->save_failures);
		t->dirty = false;
		t->save_failures = 0;
		return;
	}
	t->dirty = true;
	t->save_failures++;
	t->save_retry_ns =
	    now + (t->save_failures < 6 ? 1ULL << t->save_failures : 60) * 1000000000ULL;
}

/* Everything the ring buffer holds now, within a bound (a flood must not hold the loop). */
static void drain_all(struct manager *m)
{
	for (int i = 0; i < 64 && ringbuf_drain(m->ringbuf) > 0; i++)
		;
}

/* Sampling of t stops: out of kp_targets, its events closed (their counts kept) or its per-CPU
 * set released. */
static void stop_sampling(struct manager *m, struct target *t)
{
	loader_target_del(m->loader, t->pid);
	if (t->per_cpu) {
		sampler_freq_put(m->sampler, t->freq);
		return;
	}
	if (t->events)
		sampler_target_stats(t->events, &t->threads);
	sampler_target_free(t->events);
	t->events = NULL;
	/* Room for events again: the targets a limit left with unsampled threads get them. The
	 * followed children that sampled with t's inherited events (now gone) get their own. */
	for (struct target *o = m->targets; o; o = o->next) {
		if (o->state != TARGET_ATTACHED || !o->events ||
		    (!o->threads.unsampled && !(t->children && o->parent)))
			continue;
		if (sampler_target_rescan(o->events) < 0)
			log_warn("pid %d: cannot scan its threads again", o->pid);
		sampler_target_stats(o->events, &o->threads);
	}
}

/* Stop sampling t; its profile stays. The log line (level, why: "detached", "exited
 * (status 0)", ...) is written once the samples still in the ring buffer are in, so its count
 * is the kept profile's. Its symbols stay a little longer (drop_ended_symbols). */
static void end_target(struct manager *m, struct target *t, enum target_state state, int level,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void end_target(struct manager *m, struct target *t, enum target_state state, int level,
		       const char *fmt, ...)
{
	char why[256];
	va_list ap;

	if (t->state != TARGET_ATTACHED)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	stop_sampling(m, t);
	/* An exited process writes no more symbols: read its perf map and jitdump a last time
	 * before the samples still in the ring buffer are named (a short process's samples are
	 * mostly drained here, after its exit). */
	if (state == TARGET_EXITED)
		tsym_gone(t->sym);
	/* Samples already in the ring buffer still belong to this profile. */
	drain_all(m);
	/* What the last read of its perf map and jitdump names, before the profile is kept. */
	target_names_update(t, true);
	tsym_done(t->sym);
	log_msg(level, "pid %d (%s) %s, %llu samples kept", t->pid, t->comm, why,
		(unsigned long long)t->samples);
	t->duration_timer = sd_event_source_disable_unref(t->duration_timer);
	calls_off(&t->calls);
	t->calls.timer = sd_event_source_disable_unref(t->calls.timer);
	t->calls.ended_ns = now_ns(CLOCK_MONOTONIC);
	paths_stop(t->paths, state == TARGET_EXITED ? "target exited" : "detached");
	t->state = state;
	t->ended_ns = now_ns(CLOCK_REALTIME);
	m->n_attached--;
	m->n_kept++;
	save_target(m, t);
	trim_kept(m);
}

void manager_add_kept(struct manager *m, struct target *t)
{
	/* The same session twice (a copy of a file): keep one. */
	for (struct target *o = m->targets; o; o = o->next) {
		if (o->pid == t->pid && o->attached_ns == t->attached_ns) {
			drop_target_unsaved(m, t);
			return;
		}
	}
	t->next = m->targets;
	m->targets = t;
	m->n_kept++;
	trim_kept(m);
}

/* Drop kept profiles older than the configured age. */
static void expire_kept(struct manager *m)
{
	uint64_t now = now_ns(CLOCK_REALTIME), max = m->conf.kept_max_age_sec * 1000000000ULL;
	struct target *t, *next;

	if (!m->conf.kept_max_age_sec)
		return;
	for (t = m->targets; t; t = next) {
		next = t->next;
		if (t->state != TARGET_ATTACHED && now - t->ended_ns > max) {
			log_info("dropping the kept profile of pid %d (%s): older than %u s",
				 t->pid, t->comm, m->conf.kept_max_age_sec);
			drop_target(m, t);
		}
	}
}

/* The --duration timer of one target (the manager's loop: the target is found by its timer). */
static int on_duration(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	struct target *t = m->targets;

	(void)usec;
	while (t && t->duration_timer != s)
		t = t->next;
	if (!t)
		return sd_event_source_set_enabled(s, SD_EVENT_OFF);
	end_target(m, t, TARGET_DETACHED, LOG_INFO, "detached: duration of %us over",
		   t->duration_sec);
	return 0;
}

/* Bursting: probes on for burst_ms, off for the rest of each period_ms. */
static int on_burst(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct target *t = userdata;
	struct calls *c = &t->calls;
	char err[256];

	if (t->state != TARGET_ATTACHED)
		return sd_event_source_set_enabled(s, SD_EVENT_OFF);
	log_debug("pid %d: burst timer at %llu: probes %s", t->pid, (unsigned long long)usec,
		  c->nlinks ? "off" : "on");
	if (c->nlinks) {
		calls_off(c);
		return sd_event_source_set_time(s, usec + (c->period_ms - c->burst_ms) * 1000ULL);
	}
	/* A removal of probes in the same code is still waiting for the kernel: come back
	 * rather than block the loop (a probe attached now would wait for it in the kernel). */
	if (calls_may_attach(c, err, sizeof(err)) < 0)
		return sd_event_source_set_time(s, usec + 50000);
	if (calls_on(c, t->env->loader, t->pid, err, sizeof(err)) < 0) {
		log_warn("pid %d: exact mode stopped: %s", t->pid, err);
		return sd_event_source_set_enabled(s, SD_EVENT_OFF);
	}
	/* The window starts once the probes are in (attaching may have waited for the last
	 * removal to finish). */
	return sd_event_source_set_time(s, now_ns(CLOCK_MONOTONIC) / 1000 + c->burst_ms * 1000ULL);
}

static unsigned probes_of(const struct manager *m, uid_t uid)
{
	unsigned n = 0;

	for (const struct target *t = m->targets; t; t = t->next)
		if (t->state == TARGET_ATTACHED && t->uid == uid && t->calls.enabled)
			n += t->calls.nprobes;
	return n;
}

#define CALLS_HOT_WARMUP_MS 1000 /* --calls=hot:N: samples before the choice */
#define CALLS_HOT_TRIES 10	 /* warm-ups before giving up (no JIT function sampled) */
#define CALLS_HOT_MAX 16

/* --calls=hot:N, after a warm-up: exact mode on the N hottest JIT functions sampled. */
static int on_hot(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct target *t = userdata;
	struct calls *c = &t->calls;
	char err[256], *names = NULL;
	int r, got;

	if (t->state != TARGET_ATTACHED || !c->hot)
		return 0;
	r = got = calls_hot_names(t->profile, c->hot, &names);
	if (r == 0 && ++c->hot_tries < CALLS_HOT_TRIES) {
		free(names);
		r = sd_event_source_set_time(s, usec + CALLS_HOT_WARMUP_MS * 1000ULL);
		return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	}
	c->hot = 0;
	if (r <= 0) {
		free(names);
		log_warn("pid %d: exact mode: no JIT function sampled after %u s: no calls counted",
			 t->pid, CALLS_HOT_TRIES * CALLS_HOT_WARMUP_MS / 1000);
		return 0;
	}
	free(c->names);
	c->names = names;
	r = calls_plan(c, &(struct calls_target){t->pid, t->sym, t->profile}, c->force, err,
		       sizeof(err));
	if (r >= 0)
		r = calls_on(c, t->env->loader, t->pid, err, sizeof(err));
	if (r < 0)
		log_warn("pid %d: exact mode on the hottest functions (%s): %s", t->pid, names,
			 err);
	else
		log_info("pid %d: exact mode on the %d hottest JIT functions sampled: %s", t->pid,
			 got, names);
	return 0;
}

/* --calls=hot:N: sample first, choose after a warm-up (on_hot). */
static int start_calls_hot(struct manager *m, struct target *t, const struct attach_opts *o,
			   char *errbuf, size_t errlen)
{
	struct calls *c = &t->calls;
	char *end;
	unsigned long n;
	int err;

	errno = 0;
	n = strtoul(o->calls_functions + 4, &end, 10);
	if (errno || *end || end == o->calls_functions + 4 || n < 1 || n > CALLS_HOT_MAX) {
		snprintf(errbuf, errlen, "--calls=hot:N takes N from 1 to %d", CALLS_HOT_MAX);
		return -EINVAL;
	}
	if (o->burst_ms) {
		snprintf(errbuf, errlen, "--calls=hot:N does not go with --burst");
		return -EINVAL;
	}
	c->hot = (unsigned)n;
	err = sd_event_add_time_relative(m->event, &c->hot_timer, CLOCK_MONOTONIC,
					 CALLS_HOT_WARMUP_MS * 1000ULL, 1000, on_hot, t);
	if (err < 0)
		snprintf(errbuf, errlen, "cannot arm the warm-up timer: %s", strerror(-err));
	return err;
}

/* Exact mode for a new target: plan, attach, and arm the burst timer. */
static int start_calls(struct manager *m, struct target *t, const struct attach_opts *o,
		       char *errbuf, size_t errlen)
{
	struct calls *c = &t->calls;
	unsigned held;
	int err;

	err = hcct_new(&(struct hcct_params){.slots = hcct_slots_for_eps(t->eps)}, &c->exact);
	if (err < 0) {
		snprintf(errbuf, errlen, "out of memory");
		return err;
	}
	c->enabled = true;
	c->force = o->force;
	if (o->calls_functions && !strncmp(o->calls_functions, "hot:", 4))
		return start_calls_hot(m, t, o, errbuf, errlen);
	if (o->calls_functions && o->calls_functions[0]) {
		c->names = strdup(o->calls_functions);
		if (!c->names)
			return -ENOMEM;
	}
	c->burst_ms = o->burst_ms;
	c->period_ms = o->period_ms;
	err = calls_plan(c, &(struct calls_target){t->pid, t->sym, t->profile}, o->force, errbuf,
			 errlen);
	held = probes_of(m, o->by);
	if (err >= 0 && o->by != 0 && held + c->nprobes > m->conf.max_probes_per_uid) {
		snprintf(errbuf, errlen,
			 "exact mode would probe %zu functions; uid %u has %u probed already "
			 "(limit %u per user)",
			 c->nprobes, o->by, held, m->conf.max_probes_per_uid);
		err = -EUSERS;
	}
	if (err >= 0)
		err = calls_on(c, m->loader, t->pid, errbuf, errlen);
	if (err >= 0)
		manager_probes_started(m);
	if (err >= 0 && c->burst_ms) {
		err = sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC,
						 c->burst_ms * 1000ULL, 1000, on_burst, t);
		if (err >= 0)
			err = sd_event_source_set_enabled(c->timer, SD_EVENT_ON);
		if (err < 0)
			snprintf(errbuf, errlen, "cannot arm the burst timer: %s", strerror(-err));
	}
	return err;
}

/* The per-user quotas of an attach by uid by (root has only the global limits). */
static int check_quotas(struct manager *m, uid_t by, unsigned freq, char *errbuf, size_t errlen)
{
	unsigned mine = 0, freqs[KPROF_MAX_FREQ_SETS], my_freqs[KPROF_MAX_FREQ_SETS];
	int nf = sampler_freqs(m->sampler, freqs, KPROF_MAX_FREQ_SETS), nmine = 0;
	bool new_freq = true, mine_has = false;

	if (m->n_attached >= m->conf.max_targets) {
		snprintf(errbuf, errlen, "too many targets: %u attached (limit %u)", m->n_attached,
			 m->conf.max_targets);
		return -EMFILE;
	}
	if (by == 0)
		return 0;
	for (int i = 0; i < nf; i++)
		new_freq &= freqs[i] != freq;
	for (struct target *t = m->targets; t; t = t->next) {
		bool seen = false;

		if (t->state != TARGET_ATTACHED || t->uid != by)
			continue;
		mine++;
		mine_has |= t->freq == freq;
		for (int i = 0; i < nmine; i++)
			seen |= my_freqs[i] == t->freq;
		if (!seen && nmine < KPROF_MAX_FREQ_SETS)
			my_freqs[nmine++] = t->freq;
	}
	if (m->n_attached >= user_share(m->conf.max_targets)) {
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
	err = loader_target_add(m->loader, t->pid, t->freq, t->start_ticks,
				(t->per_cpu ? 0 : KP_TF_THREADS) |
				    (t->children ? KP_TF_CHILDREN : 0) | (t->all ? KP_TF_ALL : 0));
	if (err < 0) {
		snprintf(errbuf, errlen, "cannot add pid %d to the BPF targets map: %s", t->pid,
			 strerror(-err));
		if (t->per_cpu)
			sampler_freq_put(m->sampler, t->freq);
		return err;
	}
	if (t->per_cpu)
		return 0;
	/* Users leave the last eighth of the thread events to root, as with every limit. */
	if (t->by != 0)
		lim.max_total = user_share(lim.max_total);
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

int manager_attach(struct manager *m, pid_t pid, const struct attach_opts *opts,
		   struct target **ret, char *errbuf, size_t errlen)
{
	struct target *old = manager_find(m, pid), *t = NULL;
	struct attach_opts o = *opts;
	unsigned freq = o.freq, duration_sec = o.duration_sec;
	struct procinfo_stat pst;
	struct proc_ident id;
	uint64_t start_ticks;
	int err;

	if (pid <= 0) {
		snprintf(errbuf, errlen, "invalid pid %d", pid);
		return -EINVAL;
	}
	if (pid == getpid()) {
		snprintf(errbuf, errlen, "kprofd does not profile itself");
		return -EINVAL;
	}
	if (freq == 0)
		freq = o.freq = m->conf.default_freq;
	if (o.eps == 0)
		o.eps = m->conf.hcct_eps;
	if (o.burst_ms && (!o.calls || o.period_ms <= o.burst_ms || o.period_ms > 3600000)) {
		snprintf(errbuf, errlen, "bursts need --calls and a period longer than the burst");
		return -EINVAL;
	}
	if (!(o.eps >= 1e-7 && o.eps <= 1)) {
		snprintf(errbuf, errlen, "eps %g out of range [1e-7, 1]", o.eps);
		return -ERANGE;
	}
	if (freq > KPROF_MAX_FREQ) {
		snprintf(errbuf, errlen, "frequency %u Hz out of range 1-%u", freq, KPROF_MAX_FREQ);
		return -ERANGE;
	}
	if (old && old->state == TARGET_ATTACHED && (!old->all || o.all)) {
		snprintf(errbuf, errlen, "pid %d is already attached", pid);
		return -EALREADY;
	}
	/* An attach of a process system-wide mode profiles takes it over with its own settings
	 * (ARCHITECTURE.md §1.2.5); the --all profile is kept, as any detached one. */
	if (old && old->state == TARGET_ATTACHED) {
		end_target(m, old, TARGET_DETACHED, LOG_INFO, "detached: taken over by an attach");
		m->all_taken_over++;
	}
	err = check_quotas(m, o.by, freq, errbuf, errlen);
	if (err < 0)
		return err;
	if ((o.rule || o.all) && manager_auto_targets(m, NULL) >= m->conf.max_auto_targets) {
		m->auto_refused++;
		snprintf(errbuf, errlen,
			 "too many automatic targets: %u attached by watch rules and --all "
			 "(limits.max_auto_targets)",
			 m->conf.max_auto_targets);
		return -EUSERS;
	}
	/* The start first: if the pid is reused meanwhile, target_new reads the new process and
	 * BPF samples only the old one, never one process under another's identity. */
	err = procfs_stat(pid, &pst);
	start_ticks = pst.start_ticks;
	if (err >= 0)
		err = target_new(&m->env, pid, &o, &t);
	if (err < 0) {
		snprintf(errbuf, errlen,
			 err == -ESRCH	  ? "no such process: %d"
			 : err == -ECHILD ? "pid %d has exited (a zombie its parent has not reaped)"
			 : err == -EINVAL ? "%d is a thread, not a process"
					  : "cannot read process %d: %s",
			 pid, strerror(-err));
		return err == -ECHILD ? -ESRCH : err;
	}
	t->by = o.by;
	t->start_ticks = start_ticks;
	/* The client was checked against the process that had the PID then: if another got it
	 * since, that one is the client's too or is refused. */
	if (o.by != 0 && t->uid != o.by) {
		snprintf(errbuf, errlen, "permission denied: pid %d is no longer uid %u's", pid,
			 o.by);
		target_free(t);
		return -EPERM;
	}
	err = start_sampling(m, t, errbuf, errlen);
	if (err < 0) {
		target_free(t);
		return err;
	}
	/* From here on an exec is reported; one that came between reading the process and
	 * now would not be: read it again. */
	if (proc_ident_read(pid, &id) == 0 && strcmp(id.comm, t->comm)) {
		log_info("pid %d exec'd %s while being attached: reloading its symbols", pid,
			 id.comm);
		memcpy(t->comm, id.comm, sizeof(t->comm));
		tsym_exec(t->sym);
	}
	if (o.calls) {
		err = start_calls(m, t, &o, errbuf, errlen);
		if (err < 0) {
			stop_sampling(m, t);
			target_free(t);
			return err;
		}
	}
	if (duration_sec) {
		err = sd_event_add_time_relative(m->event, &t->duration_timer, CLOCK_MONOTONIC,
						 duration_sec * 1000000ULL, 0, on_duration, m);
		if (err < 0)
			log_warn("pid %d: no duration timer: %s", pid, strerror(-err));
	}
	/* A kept profile of the same pid stays, as an earlier session. */
	t->next = m->targets;
	m->targets = t;
	m->n_attached++;
	/* A JVM is asked for its perf map now, off the loop; its answer comes later. */
	if (target_jvm_start(t, &o) < 0)
		log_warn("pid %d: out of memory: its JVM perf map is not asked for", pid);
	{
		struct tsym_stats ss;
		char how[96];

		tsym_get_stats(t->sym, &ss);
		if (t->per_cpu)
			snprintf(how, sizeof(how), "per-CPU events");
		else
			snprintf(how, sizeof(how), "%u thread events (%u threads, %u unsampled)",
				 t->threads.events, t->threads.threads, t->threads.unsampled);
		/* A followed child is news only when debugging: a shell loop forks thousands. */
		log_msg(o.parent || o.all ? LOG_DEBUG : LOG_INFO,
			"attached pid %d (%s, uid %u) at %u Hz by %s, duration %us (0: "
			"unlimited); perf map %s: %llu JIT symbols; jitdump %s: %llu symbols",
			pid, t->comm, t->uid, freq, how, duration_sec, ss.perfmap_path,
			(unsigned long long)ss.jit_symbols,
			ss.jitdump_path[0] ? ss.jitdump_path : "(none)",
			(unsigned long long)ss.jitdump_symbols);
	}
	*ret = t;
	return 0;
}

void manager_forget(struct manager *m, struct target *t)
{
	if (t->state == TARGET_ATTACHED) {
		stop_sampling(m, t);
		t->duration_timer = sd_event_source_disable_unref(t->duration_timer);
		calls_off(&t->calls);
		t->calls.timer = sd_event_source_disable_unref(t->calls.timer);
	}
	log_info("pid %d (%s): attach undone, nothing kept", t->pid, t->comm);
	drop_target(m, t);
}

int manager_detach(struct manager *m, struct target *t)
{
	if (t->state != TARGET_ATTACHED)
		return -ENOENT;
	/* --all's targets come and go by the hundred: syswide.c says how many. */
	end_target(m, t, TARGET_DETACHED, t->all ? LOG_DEBUG : LOG_INFO, "detached");
	return 0;
}

static void on_sample(void *ctx, const struct kp_sample *s)
{
	struct manager *m = ctx;
	struct target *t = manager_find(m, s->hdr.tgid);

	m->samples++;
	/* Taken by the system-wide set while the process was no target: a target now, or
	 * counted by syswide.c. */
	if ((s->flags & KP_SF_STRANGER) &&
	    (!t || t->state != TARGET_ATTACHED || t->start_ticks != s->start_ticks)) {
		t = m->on_stranger ? m->on_stranger(m->stranger_ud, s) : NULL;
		if (!t)
			return;
	}
	if (!t) {
		m->unknown_tgid++;
		return;
	}
	m->all_samples += t->all || (s->flags & KP_SF_STRANGER);
	if (t->all)
		t->last_sample_ns = s->time_ns;
	target_add_sample(t, s);
	/* Samples taken just before an exit can arrive after it from another CPU's records. */
	if (t->state != TARGET_ATTACHED)
		t->dirty = true;
}

/* Save ended profiles that changed after they were saved, or whose save failed (when its
 * back-off is over, or at once when force). */
static void save_dirty(struct manager *m, bool force)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	for (struct target *t = m->targets; t; t = t->next)
		if (t->dirty && t->state != TARGET_ATTACHED &&
		    (force || !t->save_failures || now >= t->save_retry_ns))
			save_target(m, t);
}

bool manager_recheck(struct manager *m, struct target *t)
{
	struct proc_ident id;
	uid_t owner;

	if (t->state != TARGET_ATTACHED || proc_ident_read(t->pid, &id) < 0)
		return false;
	owner = proc_ident_owner(&id);
	if (owner == t->uid)
		return false;
	if (t->by == 0) {
		/* Root attached it: root goes on; the former owner may no longer read it. */
		log_info("pid %d (%s): credentials changed (uids %u/%u/%u, %sdumpable): now "
			 "root's only",
			 t->pid, id.comm, id.ruid, id.euid, id.suid, id.dumpable ? "" : "not ");
		t->uid = owner;
		return false;
	}
	end_target(m, t, TARGET_DETACHED, LOG_WARNING,
		   "ended: credentials changed away from uid %u (uids %u/%u/%u, %sdumpable)",
		   t->uid, id.ruid, id.euid, id.suid, id.dumpable ? "" : "not ");
	return true;
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

struct cgwatch *manager_find_watch(struct manager *m, const char *name)
{
	for (unsigned i = 0; i < m->n_watches; i++)
		if (!strcmp(m->watches[i]->name, name) || !strcmp(m->watches[i]->ref.path, name))
			return m->watches[i];
	return NULL;
}

/* Attach pid as a member of w (it entered the cgroup, or was there): 0, or a negative errno
 * (refused: counted, said at debug level; a pid already attached is left as it is). */
static int watch_attach(struct manager *m, struct cgwatch *w, pid_t pid, uint64_t start_ticks)
{
	struct target *t = manager_find(m, pid);
	char err[256];
	int r;

	if (t && t->state == TARGET_ATTACHED && !t->all)
		return 0;
	r = manager_attach(m, pid, &w->opts, &t, err, sizeof(err));
	if (r == 0 && start_ticks && t->start_ticks != start_ticks) {
		manager_forget(m, t);
		r = -ESRCH;
	}
	if (r < 0) {
		w->refused++;
		if (w->opts.counts)
			w->opts.counts->refused++;
		log_debug("%s: pid %d not attached: %s", w->name, pid, err);
		return r;
	}
	w->joined++;
	if (w->opts.counts)
		w->opts.counts->attached++;
	return 0;
}

unsigned manager_auto_targets(const struct manager *m, const char *rule)
{
	unsigned n = 0;

	for (const struct target *t = m->targets; t; t = t->next)
		n += t->state == TARGET_ATTACHED &&
		     (rule ? t->rule && !strcmp(t->rule, rule) : t->rule || t->all);
	return n;
}

void manager_set_hooks(struct manager *m, const struct manager_hooks *h, void *ud)
{
	m->hooks = h;
	m->hooks_ud = ud;
}

static void on_watch_rec(void *ctx, const struct kp_execwatch *w)
{
	struct manager *m = ctx;

	if (m->hooks && m->hooks->on_exec)
		m->hooks->on_exec(m->hooks_ud, w);
}

static void on_cgroup(void *ctx, pid_t tgid, uint64_t cgid, uint64_t start_ticks)
{
	struct manager *m = ctx;

	for (unsigned i = 0; i < m->n_watches; i++)
		if (m->watches[i]->ref.id == cgid) {
			watch_attach(m, m->watches[i], tgid, start_ticks);
			return;
		}
}

int manager_watch(struct manager *m, const char *cgroup, const char *unit,
		  const struct attach_opts *o, struct cgwatch **ret, unsigned *attached,
		  unsigned *refused, char *errbuf, size_t errlen)
{
	_cleanup_free_ pid_t *pids = NULL;
	struct cgwatch *w;
	unsigned mine = 0;
	size_t n = 0;
	int err;

	if (!cgroup == !unit) {
		snprintf(errbuf, errlen, "a cgroup or a unit, not both");
		return -EINVAL;
	}
	for (unsigned i = 0; i < m->n_watches; i++)
		mine += m->watches[i]->opts.by == o->by;
	if (m->n_watches >= MANAGER_MAX_WATCHES ||
	    (o->by != 0 && mine >= MANAGER_WATCHES_PER_USER)) {
		snprintf(errbuf, errlen, "too many cgroups watched (%u; %u per user)",
			 MANAGER_MAX_WATCHES, MANAGER_WATCHES_PER_USER);
		return -EUSERS;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	err = cgroup ? cgroup_resolve(cgroup, &w->ref) : cgroup_of_unit(unit, &w->ref);
	/* A watch rule's cgroup or unit that is not there yet is waited for (check_watches). */
	w->waiting = err == -ENOENT && o->rule;
	if (err < 0 && !w->waiting) {
		snprintf(
		    errbuf, errlen, "%s %s: %s", cgroup ? "cgroup" : "unit", cgroup ? cgroup : unit,
		    err == -EINVAL	  ? (cgroup ? "not a path under /sys/fs/cgroup"
						    : "not a unit name (NAME.service, .scope, .slice)")
		    : err == -EMEDIUMTYPE ? "not in a cgroup2 hierarchy"
		    : err == -ENOENT
			? (cgroup ? "no such cgroup" : "no cgroup of that unit (not running?)")
			: strerror(-err));
		free(w);
		return err;
	}
	snprintf(w->name, sizeof(w->name), "%s", unit ? unit : w->waiting ? cgroup : w->ref.path);
	w->unit = unit != NULL;
	if (manager_find_watch(m, w->name) || (!w->waiting && manager_find_watch(m, w->ref.path))) {
		snprintf(errbuf, errlen, "%s is already watched", w->name);
		free(w);
		return -EALREADY;
	}
	w->opts = *o;
	w->opts.children = true;
	w->opts.duration_sec = 0;
	w->opts.calls = false;
	w->opts.cgroup = w->name;
	w->since_ns = now_ns(CLOCK_REALTIME);
	/* Watched first: a process entering while the members are read is reported. */
	err = w->waiting ? 0 : loader_cgroup_watch(m->loader, w->ref.id, true);
	if (err < 0) {
		snprintf(errbuf, errlen, "cannot watch %s: %s", w->name, strerror(-err));
		free(w);
		return err;
	}
	m->watches[m->n_watches++] = w;
	pids = w->waiting ? NULL : calloc(KP_MAX_TARGETS, sizeof(*pids));
	if (pids)
		cgroup_procs(&w->ref, pids, KP_MAX_TARGETS, &n);
	for (size_t i = 0; i < n; i++)
		if (pids[i] != getpid())
			watch_attach(m, w, pids[i], 0);
	*attached = w->joined;
	*refused = w->refused;
	log_info("watching %s (cgroup %s, by uid %u): %u processes attached, %u refused", w->name,
		 w->waiting ? "not there yet" : w->ref.path, o->by, w->joined, w->refused);
	*ret = w;
	return 0;
}

unsigned manager_unwatch(struct manager *m, struct cgwatch *w)
{
	unsigned n = 0;

	if (!w->waiting)
		loader_cgroup_watch(m->loader, w->ref.id, false);
	for (unsigned i = 0; i < m->n_watches; i++)
		if (m->watches[i] == w) {
			m->watches[i] = m->watches[--m->n_watches];
			break;
		}
	for (struct target *t = m->targets; t; t = t->next)
		if (t->state == TARGET_ATTACHED && t->cgroup && !strcmp(t->cgroup, w->name)) {
			end_target(m, t, TARGET_DETACHED, LOG_DEBUG,
				   "detached (%s no longer watched)", w->name);
			n++;
		}
	log_info("%s no longer watched: %u processes detached", w->name, n);
	free(w);
	return n;
}

/* The cgroup of watch w (a unit's, found again) is ref now: watched by its new id, its
 * processes attached. */
static void watch_rebind(struct manager *m, struct cgwatch *w, const struct cgroup_ref *ref)
{
	_cleanup_free_ pid_t *pids = calloc(KP_MAX_TARGETS, sizeof(*pids));
	size_t n = 0;
	int err = loader_cgroup_watch(m->loader, ref->id, true);

	if (err < 0 && err != -EEXIST) {
		log_warn("%s: cannot watch its new cgroup %s: %s", w->name, ref->path,
			 strerror(-err));
		return;
	}
	w->restarts += w->ref.id != 0; /* not the first start of a rule's unit */
	w->ref = *ref;
	w->waiting = false;
	if (pids)
		cgroup_procs(&w->ref, pids, KP_MAX_TARGETS, &n);
	for (size_t i = 0; i < n; i++)
		if (pids[i] != getpid())
			watch_attach(m, w, pids[i], 0);
	log_info("%s started again (cgroup %s): %zu processes", w->name, w->ref.path, n);
}

/* Housekeeping: a watched cgroup removed ends its watch; a unit's, and a watch rule's cgroup,
 * is waited for (a stopped or restarting service) and watched again when it is back. */
static void check_watches(struct manager *m)
{
	for (unsigned i = 0; i < m->n_watches;) {
		struct cgwatch *w = m->watches[i];
		struct cgroup_ref ref;

		i++;
		if (!w->waiting && cgroup_exists(&w->ref))
			continue;
		if (!w->unit && !w->opts.rule) {
			log_info("%s: cgroup %s removed: no longer watched", w->name, w->ref.path);
			manager_unwatch(m, w);
			i--; /* the last watch took its place */
			continue;
		}
		if (!w->waiting) {
			loader_cgroup_watch(m->loader, w->ref.id, false);
			w->waiting = true;
			log_info("%s stopped (cgroup %s removed): waiting for it to start again",
				 w->name, w->ref.path);
		}
		if ((w->unit ? cgroup_of_unit(w->name, &ref) : cgroup_resolve(w->name, &ref)) == 0)
			watch_rebind(m, w, &ref);
	}
}

static void on_exit_rec(void *ctx, pid_t tgid, uint64_t start_ticks, int code)
{
	struct manager *m = ctx;
	struct target *t = manager_find(m, tgid);

	if (!t || t->state != TARGET_ATTACHED || t->start_ticks != start_ticks)
		return;
	/* exit_code is a wait status: low 7 bits the signal, the next 8 the exit status. */
	t->exit_code = (code & 0x7f) ? -(code & 0x7f) : (code >> 8) & 0xff;
	end_target(m, t, TARGET_EXITED, t->parent || t->all ? LOG_DEBUG : LOG_INFO,
		   "exited (%s %d)", t->exit_code < 0 ? "signal" : "status",
		   t->exit_code < 0 ? -t->exit_code : t->exit_code);
}

static void on_exec_rec(void *ctx, pid_t tgid, uint64_t start_ticks, const char comm[16])
{
	struct manager *m = ctx;
	struct target *t = manager_find(m, tgid);

	if (!t || t->state != TARGET_ATTACHED || t->start_ticks != start_ticks)
		return;
	/* From the record: the process may be gone already (a short command). */
	memcpy(t->comm, comm, 16);
	t->comm[16] = '\0';
	paths_stop(t->paths, "target called exec"); /* the traced code is gone */
	if (manager_recheck(m, t))
		return;
	log_msg(t->parent || t->all ? LOG_DEBUG : LOG_INFO,
		"pid %d exec'd %s: reloading its symbols", tgid, t->comm);
	tsym_exec(t->sym);
	jvmmap_exec(t->jvm);
}

/* An ended target's symbols are dropped once the drain in which it ended and the next one are
 * over, not when it ends: an exit is most often seen in the middle of a drain (its record is in
 * the ring buffer), where the records after it cannot be read yet, and samples taken just before
 * the exit on another CPU can come after its record, in that batch or the next. They are named
 * with the symbols read while the process ran, not "[unknown]". */
static void drop_ended_symbols(struct manager *m)
{
	for (struct target *t = m->targets; t; t = t->next)
		if (t->state != TARGET_ATTACHED && t->sym && t->drains_ended++ >= 1)
			target_drop_symbols(t);
	/* A followed child that ran too briefly to be sampled (a pipeline's `cat`, each command of
	 * a shell loop) holds nothing: it is not kept, so that a fork storm does not push every
	 * kept profile out. Once its symbols are dropped, no late sample can come for it. */
	for (struct target *t = m->targets, *next; t; t = next) {
		next = t->next;
		if (t->state == TARGET_EXITED && t->parent && !t->samples && !t->sym) {
			log_debug("pid %d (%s), a child of %d: no samples, not kept", t->pid,
				  t->comm, t->parent);
			drop_target(m, t);
		}
	}
}

void manager_drain(struct manager *m)
{
	ringbuf_drain(m->ringbuf);
	m->drained_ns = now_ns(CLOCK_MONOTONIC);
	drop_ended_symbols(m);
}

/* Uprobes of exact mode or a path trace: their records drive budgets and bursts, so they are
 * drained every drain_ms. */
static bool probes_active(const struct manager *m)
{
	for (const struct target *t = m->targets; t; t = t->next)
		if (t->calls.enabled || (t->paths && t->paths->tracing))
			return true;
	return false;
}

static int on_ringbuf(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	manager_drain(m);
	return 0;
}

/* Samples alone wait for a batch of SAMPLE_BATCH_MS: each drain starts with kprofd's data
 * evicted by the targets running meanwhile, and larger batches pay for that less often (a
 * fifth less CPU per sample at 500 ms than at 50 on a many-stacks load). Replies and live
 * updates drain first, and the BPF side wakes us once an eighth of the buffer is full, so
 * nothing is staler or lost for it. */
#define SAMPLE_BATCH_MS 500

/* The timer runs every drain_ms while probes are in, and every SAMPLE_BATCH_MS (or drain_ms if
 * longer) otherwise: an idle kprofd, or one whose targets sleep, wakes twice a second, not 20
 * times (manager_probes_started brings the short period back at once). */
static int on_drain(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	bool probes = probes_active(m);
	unsigned next_ms = m->conf.drain_ms;

	if (probes || now_ns(CLOCK_MONOTONIC) - m->drained_ns >= SAMPLE_BATCH_MS * 1000000ULL)
		manager_drain(m);
	if (!probes && next_ms < SAMPLE_BATCH_MS)
		next_ms = SAMPLE_BATCH_MS;
	return sd_event_source_set_time(s, usec + next_ms * 1000ULL);
}

void manager_probes_started(struct manager *m)
{
	uint64_t next = now_ns(CLOCK_MONOTONIC) / 1000 + m->conf.drain_ms * 1000ULL, at;

	if (sd_event_source_get_time(m->drain_timer, &at) >= 0 && at > next)
		sd_event_source_set_time(m->drain_timer, next);
}

/* Profiles grow with every new stack: once a second, the memory of each user's profiles
 * (attached and kept) is added up, and the attached targets of a user over its budget, or of
 * every user when the total is over, stop taking samples (they are counted) until it fits. */
static void check_profile_budget(struct manager *m)
{
	uint64_t total = 0, per_uid = (uint64_t)m->conf.profiles_per_uid_mb << 20;
	bool over_total;

	for (struct target *t = m->targets; t; t = t->next)
		total += t->memory = target_memory(t);
	m->profile_bytes = total;
	over_total = total > (uint64_t)m->conf.profiles_mb << 20;
	for (struct target *t = m->targets; t; t = t->next) {
		uint64_t mine = 0;
		bool over;

		if (t->state != TARGET_ATTACHED)
			continue;
		if (t->uid != 0)
			for (struct target *u = m->targets; u; u = u->next)
				mine += u->uid == t->uid ? u->memory : 0;
		over = over_total || (t->uid != 0 && mine > per_uid);
		if (over && !t->over_budget)
			log_warn(
			    "pid %d (%s): new samples dropped: the profiles of %s hold %.0f MiB "
			    "(limit %u MiB)",
			    t->pid, t->comm, over_total ? "all users" : "its user",
			    (over_total ? total : mine) / 1048576.0,
			    over_total ? m->conf.profiles_mb : m->conf.profiles_per_uid_mb);
		t->over_budget = over;
	}
}

/* Threads without an event: a new-thread report lost to a full ring buffer (every per-thread
 * target is scanned again), or threads still being created when a target's scans at attach
 * ended (a storm on a loaded machine: that target is scanned again, unless a limit left them
 * out). A scan opens what it finds missing and recounts the rest. */
static void rescan_threads(struct manager *m)
{
	uint64_t ctr[KP_CTR_NR];
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
	for (struct target *t = m->targets; t; t = t->next) {
		if (t->state != TARGET_ATTACHED || !t->events ||
		    !(lost || (t->threads.unsampled && t->threads.events < m->conf.max_threads)))
			continue;
		if (sampler_target_rescan(t->events) < 0)
			log_warn("pid %d: cannot scan its threads again", t->pid);
		sampler_target_stats(t->events, &t->threads);
	}
}

static int on_housekeeping(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct procinfo_stat pst;
	struct target *t, *next;

	for (t = m->targets; t; t = next) {
		next = t->next;
		if (t->state != TARGET_ATTACHED)
			continue;
		/* An exit the BPF side could not report (ring buffer full) must still be seen,
		 * also when the PID was taken by another process since. */
		if (procfs_stat(t->pid, &pst) == -ESRCH || pst.start_ticks != t->start_ticks) {
			drain_all(m);
			if (t->state == TARGET_ATTACHED)
				end_target(m, t, TARGET_EXITED, t->all ? LOG_DEBUG : LOG_INFO,
					   "is gone");
			continue;
		}
		if (!manager_recheck(m, t)) {
			tsym_refresh(t->sym);
			target_jvm_tick(t, now);
			target_names_update(t, false);
			target_drift_tick(t);
		}
	}
	rescan_threads(m);
	check_watches(m);
	sd_notifyf(0, "STATUS=%u targets attached, %u kept, %.0f samples/s", m->n_attached,
		   m->n_kept, m->rate);
	expire_kept(m);
	save_dirty(m, false);
	check_profile_budget(m);
	if (m->rate_prev_ns && now > m->rate_prev_ns)
		m->rate =
		    (double)(m->samples - m->rate_prev_samples) * 1e9 / (now - m->rate_prev_ns);
	m->rate_prev_ns = now;
	m->rate_prev_samples = m->samples;
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
	strcpy(c.socket_path, m->conf.socket_path);
	c.ringbuf_bytes = m->conf.ringbuf_bytes;
	c.ringbuf_max_mb = m->conf.ringbuf_max_mb;
	c.sampling = m->conf.sampling;
	c.max_thread_fds = m->conf.max_thread_fds;
	m->conf = c;
	resolve_read_group(m);
	symbolizer_set_budget(m->sym, (uint64_t)c.symbols_mb << 20,
			      (uint64_t)c.symbols_per_uid_mb << 20);
	trim_kept(m);
	if (m->hooks && m->hooks->on_reload)
		m->hooks->on_reload(m->hooks_ud);
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
    .on_call = on_call,
    .on_path = on_path,
    .on_exit = on_exit_rec,
    .on_exec = on_exec_rec,
    .on_thread = on_thread,
    .on_fork = on_fork,
    .on_cgroup = on_cgroup,
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

int manager_new(config_load_fn load, void *userdata, struct manager **ret)
{
	struct manager *m = calloc(1, sizeof(*m));
	const struct config *conf;
	char errbuf[512];
	sigset_t mask;
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
	conf = &m->conf;
	resolve_read_group(m);
	m->start_ns = now_ns(CLOCK_MONOTONIC);
	err = sd_event_default(&m->event);
	if (err < 0)
		goto fail;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((err = sd_event_add_signal(m->event, NULL, SIGTERM, NULL, NULL)) < 0 ||
	    (err = sd_event_add_signal(m->event, NULL, SIGINT, NULL, NULL)) < 0 ||
	    (err = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m)) < 0)
		goto fail;
	err = symbolizer_new((uint64_t)conf->symbols_mb << 20,
			     (uint64_t)conf->symbols_per_uid_mb << 20, &m->sym);
	if (err < 0)
		goto fail;
	err = loader_new(
	    &(struct loader_opts){.ringbuf_bytes = conf->ringbuf_bytes,
				  .ringbuf_max_bytes = (uint64_t)conf->ringbuf_max_mb << 20,
				  .max_freq = KPROF_MAX_FREQ,
				  .drain_ms = SAMPLE_BATCH_MS},
	    &m->loader);
	if (err < 0)
		goto fail;
	m->per_cpu = conf->sampling == CONFIG_SAMPLING_CPUS || !loader_threads_supported(m->loader);
	m->max_thread_fds = thread_fd_limit(conf->max_thread_fds);
	err = sampler_new(m->loader, m->max_thread_fds, &m->sampler);
	if (err < 0)
		goto fail;
	err = jvmattach_ctx_new(m->event, JVM_EXCHANGES_MAX, &m->jvm);
	if (err < 0)
		goto fail;
	m->env = (struct target_env){
	    .conf = &m->conf, .sym = m->sym, .loader = m->loader, .event = m->event, .jvm = m->jvm};
	err = ringbuf_new(loader_ringbuf_fd(m->loader), &ringbuf_ops, m, &m->ringbuf);
	if (err < 0) {
		log_err("ring buffer: %s", strerror(-err));
		goto fail;
	}
	if ((err = sd_event_add_io(m->event, &m->rb_source, ringbuf_epoll_fd(m->ringbuf), EPOLLIN,
				   on_ringbuf, m)) < 0 ||
	    (err = sd_event_add_time_relative(m->event, &m->drain_timer, CLOCK_MONOTONIC,
					      conf->drain_ms * 1000ULL, 1000, on_drain, m)) < 0 ||
	    (err = sd_event_source_set_enabled(m->drain_timer, SD_EVENT_ON)) < 0 ||
	    (err = sd_event_add_time_relative(m->event, &m->refresh_timer, CLOCK_MONOTONIC,
					      HOUSEKEEPING_USEC, 10000, on_housekeeping, m)) < 0 ||
	    (err = sd_event_source_set_enabled(m->refresh_timer, SD_EVENT_ON)) < 0)
		goto fail;
	/* Under systemd with WatchdogSec=, sd-event sends WATCHDOG=1 from the loop itself, so a
	 * wedged loop stops the pings and gets the service restarted. */
	err = sd_event_set_watchdog(m->event, true);
	if (err < 0)
		goto fail;
	if (conf->state_dir[0]) {
		err = store_open(conf->state_dir, &m->store);
		if (err < 0)
			log_warn("state directory %s: %s; profiles are kept in memory only",
				 conf->state_dir, strerror(-err));
		else
			log_info("kept profiles: %d restored from %s",
				 store_foreach(m->store, ".kprof", restore_one, m),
				 conf->state_dir);
	}
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
	while (m->targets) {
		struct target *t = m->targets;

		m->targets = t->next;
		target_free(t);
	}
	sd_event_source_disable_unref(m->rb_source);
	sd_event_source_disable_unref(m->drain_timer);
	sd_event_source_disable_unref(m->refresh_timer);
	links_removals_wait(2000); /* the kernel drops the rest with kprofd's fds */
	ringbuf_free(m->ringbuf);
	sampler_free(m->sampler);
	loader_free(m->loader);
	symbolizer_free(m->sym);
	/* After the loop: it reaps and frees exchanges that were cancelled. */
	sd_event_unref(m->event);
	jvmattach_ctx_free(m->jvm);
	free(m);
}

/* Stopping: every attached target ends as detached, so its profile is drained and saved. */
static void manager_stop_targets(struct manager *m)
{
	struct target *t, *next;
	unsigned n = 0;

	/* No new target while stopping: system-wide mode's samples are only counted. */
	loader_all_set(m->loader, 0);
	m->on_stranger = NULL;
	for (t = m->targets; t; t = next) {
		next = t->next;
		if (t->state == TARGET_ATTACHED) {
			end_target(m, t, TARGET_DETACHED, LOG_INFO, "detached: kprofd stopping");
			n++;
		}
	}
	while (ringbuf_drain(m->ringbuf) > 0)
		;
	save_dirty(m, true);
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
	int n = 0;

	for (const struct target *t = m->targets; t; t = t->next) {
		bool seen = false;

		if (t->state != TARGET_ATTACHED)
			continue;
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
