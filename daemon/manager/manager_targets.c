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
#include "os/clock.h"
#include "symbols/jvmattach.h"
#include "symbols/jvmmap.h"
#include "kernel/loader.h"
#include "manager/manager.h"
#include "manager/manager_targets.h"
#include "manager/manager_internal.h"
#include "kernel/ringbuf.h"
#include "kernel/sampler.h"
#include "os/store.h"
#include "wire/target_pb.h"
#include "symbols/symbolize.h"
#include "os/log.h"
#include "paths/paths.h"
#include "os/procfs.h"

/* The list is private to this file. It tolerates anything during a walk: a target ended,
 * dropped or trimmed in the body of a walk (or by a drain inside it) is only marked and stays
 * linked, skipped by manager_targets_next, and the sweep frees it once control is back in the
 * event loop, where no walk is running and no caller holds a target. New targets go in at the
 * head, so a walk started before them does not see them. */
struct target_list {
	struct target *head;
	unsigned dropped;	/* marked, not freed yet */
	sd_event_source *sweep; /* a defer source: frees the marked ones */
};

static struct target *live_from(struct target *t)
{
	while (t && t->list_dropped)
		t = t->list_next;
	return t;
}

struct target *manager_targets_first(const struct manager *m)
{
	return m->list ? live_from(m->list->head) : NULL;
}

struct target *manager_targets_next(const struct target *t)
{
	return live_from(t->list_next);
}

static void sweep(struct target_list *l)
{
	struct target **pp = &l->head;

	while (*pp) {
		struct target *t = *pp;

		if (t->list_dropped) {
			*pp = t->list_next;
			target_free(t);
		} else {
			pp = &t->list_next;
		}
	}
	l->dropped = 0;
}

static int on_sweep(sd_event_source *s, void *userdata)
{
	(void)s;
	sweep(userdata);
	return 0;
}

int manager_targets_init(struct manager *m)
{
	struct target_list *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	err = sd_event_add_defer(m->event, &l->sweep, on_sweep, l);
	if (err >= 0)
		err = sd_event_source_set_enabled(l->sweep, SD_EVENT_OFF);
	if (err < 0) {
		sd_event_source_disable_unref(l->sweep);
		free(l);
		return err;
	}
	m->list = l;
	return 0;
}

void manager_targets_free(struct manager *m)
{
	struct target_list *l = m->list;

	if (!l)
		return;
	for (struct target *t = l->head; t; t = t->list_next)
		t->list_dropped = true;
	sweep(l);
	sd_event_source_disable_unref(l->sweep);
	free(l);
	m->list = NULL;
}

void manager_targets_link(struct manager *m, struct target *t)
{
	t->list_next = m->list->head;
	t->list_dropped = false;
	m->list->head = t;
}

struct target *manager_find_for(struct manager *m, pid_t pid,
				bool (*ok)(const struct target *t, void *arg), void *arg)
{
	struct target *best = NULL, *t;

	manager_for_each_target(m, t) {
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

/* Marked, not freed: see struct target_list. */
void manager_drop_target(struct manager *m, struct target *t)
{
	if (t->list_dropped)
		return;
	t->list_dropped = true;
	m->list->dropped++;
	if (sd_event_source_set_enabled(m->list->sweep, SD_EVENT_ONESHOT) < 0)
		log_warn("pid %d: its dropped profile stays in memory until kprofd stops", t->pid);
	if (m->store)
		store_remove(m->store, t->saved_name);
	if (t->state == TARGET_ATTACHED)
		m->n_attached--;
	else
		m->n_kept--;
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
	const struct target *t;
	unsigned n = 0;

	manager_for_each_target(m, t)
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
	struct target *user_oldest = NULL, *oldest = NULL, *t, *u;
	unsigned users = 0;

	manager_for_each_target(m, t) {
		if (t->state == TARGET_ATTACHED)
			continue;
		if (t->uid != 0 && kept_of(m, t->uid) > m->conf.max_kept_per_uid) {
			struct target *o = t;

			manager_for_each_target(m, u)
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
	manager_offcpu_drain(m, manager_find);
}

/* Sampling of t stops: out of kp_targets, its events closed (their counts kept) or its per-CPU
 * set released. */
void manager_stop_sampling(struct manager *m, struct target *t)
{
	struct target *o;

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
	manager_for_each_target(m, o) {
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

	if (t->state != TARGET_ATTACHED || t->ending)
		return;
	t->ending = true;
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
	target_flush_captures(t);
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
	t->ending = false;
	m->n_attached--;
	m->n_kept++;
	save_target(m, t);
	manager_emit_target_end(m, t);
	manager_trim_kept(m);
}

void manager_add_kept(struct manager *m, struct target *t)
{
	struct target *o;

	/* The same session twice (a copy of a file): keep one. */
	manager_for_each_target(m, o) {
		if (o->pid == t->pid && o->attached_ns == t->attached_ns) {
			drop_target_unsaved(m, t);
			return;
		}
	}
	manager_targets_link(m, t);
	m->n_kept++;
	manager_trim_kept(m);
}

/* Drop kept profiles older than the configured age. */
void manager_expire_kept(struct manager *m)
{
	uint64_t now = now_ns(CLOCK_REALTIME), max = m->conf.kept_max_age_sec * 1000000000ULL;
	struct target *t;

	if (!m->conf.kept_max_age_sec)
		return;
	manager_for_each_target(m, t) {
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
	struct target *t;

	manager_for_each_target(m, t)
		if (t->dirty && t->state != TARGET_ATTACHED &&
		    (force || !t->save_failures || now >= t->save_retry_ns))
			save_target(m, t);
}

unsigned manager_auto_targets(const struct manager *m, const char *rule)
{
	const struct target *t;
	unsigned n = 0;

	manager_for_each_target(m, t)
		n += t->state == TARGET_ATTACHED &&
		     (rule ? t->rule && !strcmp(t->rule, rule) : t->rule || t->all);
	return n;
}
