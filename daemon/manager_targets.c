// SPDX-License-Identifier: GPL-2.0-only
/* manager_targets.c: the manager's list of targets: finding a target by PID, ending one (its
 * sampling stopped, its profile saved and kept), and the kept profiles of ended targets with
 * their limits (max_kept, a user's share, --keep expiry). Apart from manager.c because every
 * other part of the manager (attach, watches, the event loop) ends and finds targets through
 * these, and they call nothing above them. The policy is explained at the top of manager.c.
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
#include "manager_targets.h"
#include "manager_internal.h"
#include "ringbuf.h"
#include "sampler.h"
#include "store.h"
#include "target_pb.h"
#include "symbolize.h"
#include "log.h"
#include "paths.h"
#include "procfs.h"

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
unsigned manager_user_share(unsigned limit)
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

void manager_drop_target(struct manager *m, struct target *t)
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
	if (users > manager_user_share(m->conf.max_kept) ||
	    (m->n_kept > m->conf.max_kept && user_oldest))
		return user_oldest;
	return m->n_kept > m->conf.max_kept ? oldest : NULL;
}

/* Keep at most max_kept ended profiles, and users within their quotas. */
void manager_trim_kept(struct manager *m)
{
	struct target *t;

	while ((t = kept_victim(m))) {
		log_msg(t->all ? LOG_DEBUG : LOG_INFO,
			"dropping the kept profile of pid %d (%s, uid %u): more than %u kept (%u "
			"for one user)",
			t->pid, t->comm, t->uid, m->conf.max_kept, m->conf.max_kept_per_uid);
		m->all_kept_dropped += t->all;
		manager_drop_target(m, t);
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
void manager_drain_all(struct manager *m)
{
	for (int i = 0; i < 64 && ringbuf_drain(m->ringbuf) > 0; i++)
		;
	manager_offcpu_drain(m);
}

/* Sampling of t stops: out of kp_targets, its events closed (their counts kept) or its per-CPU
 * set released. */
void manager_stop_sampling(struct manager *m, struct target *t)
{
	loader_target_del(m->loader, t->pid);
	manager_offcpu_stop(m, t);
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

void manager_end_target(struct manager *m, struct target *t, enum target_state state, int level,
			const char *fmt, ...)
{
	char why[256];
	va_list ap;

	if (t->state != TARGET_ATTACHED)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	manager_stop_sampling(m, t);
	/* An exited process writes no more symbols: read its perf map and jitdump a last time
	 * before the samples still in the ring buffer are named (a short process's samples are
	 * mostly drained here, after its exit). */
	if (state == TARGET_EXITED)
		tsym_gone(t->sym);
	/* Samples already in the ring buffer still belong to this profile. */
	manager_drain_all(m);
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
	drift_reply_end(t); /* the drift detectors freed, their result kept */
	m->n_attached--;
	m->n_kept++;
	save_target(m, t);
	manager_trim_kept(m);
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
	manager_trim_kept(m);
}

/* Drop kept profiles older than the configured age. */
void manager_expire_kept(struct manager *m)
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
			manager_drop_target(m, t);
		}
	}
}

/* Save ended profiles that changed after they were saved, or whose save failed (when its
 * back-off is over, or at once when force). */
void manager_save_dirty(struct manager *m, bool force)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	for (struct target *t = m->targets; t; t = t->next)
		if (t->dirty && t->state != TARGET_ATTACHED &&
		    (force || !t->save_failures || now >= t->save_retry_ns))
			save_target(m, t);
}

unsigned manager_auto_targets(const struct manager *m, const char *rule)
{
	unsigned n = 0;

	for (const struct target *t = m->targets; t; t = t->next)
		n += t->state == TARGET_ATTACHED &&
		     (rule ? t->rule && !strcmp(t->rule, rule) : t->rule || t->all);
	return n;
}
