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
#include "kprof/hash.h"
#include "os/clock.h"
#include "symbols/jvmattach.h"
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
#include "target/offcpu.h"
#include "os/procfs.h"

/* The list is private to this file. It tolerates anything during a walk: a target ended,
 * dropped or trimmed in the body of a walk (or by a drain inside it) is only marked and stays
 * linked, skipped by manager_targets_next, and the sweep frees it once control is back in the
 * event loop, where no walk is running and no caller holds a target. New targets go in at the
 * head, so a walk started before them does not see them.
 *
 * A sample finds its target by PID in a hash table (chains through hash_next, at most one
 * target per bucket on average: the table doubles as targets come), not by a walk: its cost
 * does not grow with the targets and kept profiles there are. In each chain the attached
 * targets come first (one attaching goes in at the head) and the ended ones after them (one
 * ending moves to the tail): a sample of an attached target passes no kept profile.
 * lookups/lookup_steps count the chain entries looked at (status --json), which a test checks
 * for staying flat as kept profiles pile up.
 *
 * The attached targets are also on a list of their own, which the per-second and per-attach
 * work walks (manager_for_each_attached): kept profiles cost those walks nothing. A target
 * leaves it when it ends; its att_next stays as it was, so a walk standing on it goes on. */
#define HASH_MIN 64

struct target_list {
	struct target *head;
	struct target *attached; /* the attached ones alone (att_next/att_prev), newest first */
	unsigned dropped;	 /* marked, not freed yet */
	sd_event_source *sweep;	 /* a defer source: frees the marked ones */
	struct target **buckets;
	size_t nbuckets, count; /* a power of two; targets linked (marked ones too) */
	uint64_t lookups, lookup_steps;
	struct target *recent;	    /* ended lately, symbols still held (recent_next) */
	struct target *win_pending; /* ended, a window to cut (win_next) */
	/* Kept profiles changed since they were saved, or whose save failed (dirty_next): the
	 * housekeeping's saves walk these, not every kept profile. saves/save_steps count its
	 * walks and the targets they looked at (status --json). */
	struct target *dirty;
	uint64_t saves, save_steps;
	uint64_t next_expiry; /* CLOCK_REALTIME: no kept profile is older than its age before */
	/* Kept profiles' memory, all and per uid (it changes only when a late sample comes) */
	uint64_t kept_bytes;
	struct uid_bytes {
		uid_t uid;
		bool used;
		unsigned kept; /* its kept profiles */
		uint64_t bytes;
	} * kb;
	size_t nkb, kb_used; /* slots (a power of two, or 0), used */
	bool kb_incomplete;  /* a uid was left out (no memory): trims walk every time */
	unsigned users_kept; /* kept profiles of non-root uids */
};

static struct uid_bytes *kb_find(const struct uid_bytes *kb, size_t n, uid_t uid)
{
	for (size_t i = mix64(uid) & (n - 1);; i = (i + 1) & (n - 1))
		if (!kb[i].used || kb[i].uid == uid)
			return (struct uid_bytes *)&kb[i];
}

/* Room for one more uid in the table (false: no memory; the uid is then not counted apart). */
static bool kb_room(struct target_list *l)
{
	size_t n = l->nkb ? l->nkb * 2 : 16;
	struct uid_bytes *nb;

	if (2 * (l->kb_used + 1) <= l->nkb)
		return true;
	nb = calloc(n, sizeof(*nb));
	if (!nb)
		return false;
	for (size_t i = 0; i < l->nkb; i++)
		if (l->kb[i].used)
			*kb_find(nb, n, l->kb[i].uid) = l->kb[i];
	free(l->kb);
	l->kb = nb;
	l->nkb = n;
	return true;
}

/* t's memory (t->memory) in the kept accounts: out (its old figure), then in again (now). */
static void kept_account(struct target_list *l, struct target *t, bool in)
{
	struct uid_bytes *u = NULL;

	if (in)
		t->memory = target_memory(t);
	if (l->nkb && kb_find(l->kb, l->nkb, t->uid)->used)
		u = kb_find(l->kb, l->nkb, t->uid);
	else if (in && kb_room(l)) {
		u = kb_find(l->kb, l->nkb, t->uid);
		u->used = true;
		u->uid = t->uid;
		l->kb_used++;
	}
	l->kb_incomplete |= in && !u;
	l->users_kept += t->uid ? (in ? 1 : -1) : 0;
	if (in) {
		l->kept_bytes += t->memory;
		if (u)
			u->bytes += t->memory, u->kept++;
	} else {
		l->kept_bytes -= t->memory;
		if (u) {
			u->bytes -= u->bytes < t->memory ? u->bytes : t->memory;
			u->kept -= u->kept > 0;
		}
	}
}

void manager_kept_memory(const struct manager *m, uid_t uid, uint64_t *mine, uint64_t *all)
{
	const struct target_list *l = m->list;

	*all = l->kept_bytes;
	*mine =
	    l->nkb && kb_find(l->kb, l->nkb, uid)->used ? kb_find(l->kb, l->nkb, uid)->bytes : 0;
}

void manager_mark_dirty(struct manager *m, struct target *t)
{
	struct target_list *l = m->list;

	t->dirty = true;
	manager_window_pending(m, t); /* a late sample: its window too */
	if (t->dirty_pprev || t->list_dropped || t->state == TARGET_ATTACHED)
		return;
	t->dirty_next = l->dirty;
	if (t->dirty_next)
		t->dirty_next->dirty_pprev = &t->dirty_next;
	t->dirty_pprev = &l->dirty;
	l->dirty = t;
}

static void dirty_unlink(struct target *t)
{
	if (!t->dirty_pprev)
		return;
	*t->dirty_pprev = t->dirty_next;
	if (t->dirty_next)
		t->dirty_next->dirty_pprev = t->dirty_pprev;
	t->dirty_next = NULL;
	t->dirty_pprev = NULL;
}

void manager_save_stats(const struct manager *m, uint64_t *saves, uint64_t *steps)
{
	*saves = m->list->saves;
	*steps = m->list->save_steps;
}

void manager_window_pending(struct manager *m, struct target *t)
{
	struct target_list *l = m->list;

	if (t->win_pprev || t->list_dropped || t->state == TARGET_ATTACHED ||
	    (!profile_has_recent(t->profile) &&
	     (!t->offcpu || !profile_has_recent(t->offcpu->prof))))
		return;
	t->win_next = l->win_pending;
	if (t->win_next)
		t->win_next->win_pprev = &t->win_next;
	t->win_pprev = &l->win_pending;
	l->win_pending = t;
}

static void window_unlink(struct target *t)
{
	if (!t->win_pprev)
		return;
	*t->win_pprev = t->win_next;
	if (t->win_next)
		t->win_next->win_pprev = t->win_pprev;
	t->win_next = NULL;
	t->win_pprev = NULL;
}

struct target *manager_window_pop(struct manager *m)
{
	struct target *t = m->list->win_pending;

	if (t)
		window_unlink(t);
	return t;
}

static struct target **bucket_of(const struct target_list *l, pid_t pid)
{
	return &l->buckets[mix64((uint32_t)pid) & (l->nbuckets - 1)];
}

/* Twice the buckets when the targets outnumber them (on no memory: longer chains). */
static void hash_grow(struct target_list *l)
{
	size_t n = l->nbuckets * 2;
	struct target **nb;

	if (l->count < l->nbuckets)
		return;
	nb = calloc(n, sizeof(*nb));
	if (!nb)
		return;
	for (size_t i = 0; i < l->nbuckets; i++) {
		/* Each chain keeps its order (attached first) in its new bucket. */
		struct target *t = l->buckets[i], *rev = NULL;

		while (t) {
			struct target *next = t->hash_next;

			t->hash_next = rev;
			rev = t;
			t = next;
		}
		for (t = rev; t;) {
			struct target *next = t->hash_next,
				      **b = &nb[mix64((uint32_t)t->pid) & (n - 1)];

			t->hash_next = *b;
			*b = t;
			t = next;
		}
	}
	free(l->buckets);
	l->buckets = nb;
	l->nbuckets = n;
}

static void hash_unlink(struct target_list *l, struct target *t)
{
	for (struct target **pp = bucket_of(l, t->pid); *pp; pp = &(*pp)->hash_next)
		if (*pp == t) {
			*pp = t->hash_next;
			return;
		}
}

/* t at the head of its chain if attached, else at its tail (see above). */
static void hash_place(struct target_list *l, struct target *t)
{
	struct target **pp = bucket_of(l, t->pid);

	if (t->state != TARGET_ATTACHED)
		while (*pp)
			pp = &(*pp)->hash_next;
	t->hash_next = *pp;
	*pp = t;
}

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

static struct target *attached_from(struct target *t)
{
	while (t && (t->list_dropped || t->state != TARGET_ATTACHED))
		t = t->att_next;
	return t;
}

struct target *manager_attached_first(const struct manager *m)
{
	return m->list ? attached_from(m->list->attached) : NULL;
}

struct target *manager_attached_next(const struct target *t)
{
	return attached_from(t->att_next);
}

/* t leaves the attached list (it ends, or is dropped while attached). */
static void unattach(struct target_list *l, struct target *t)
{
	if (t->att_prev)
		t->att_prev->att_next = t->att_next;
	else if (l->attached == t)
		l->attached = t->att_next;
	else
		return; /* not on it */
	if (t->att_next)
		t->att_next->att_prev = t->att_prev;
	t->att_prev = NULL;
}

static void sweep(struct target_list *l)
{
	struct target **pp = &l->head;

	while (*pp) {
		struct target *t = *pp;

		if (t->list_dropped) {
			*pp = t->list_next;
			hash_unlink(l, t);
			l->count--;
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
	l->nbuckets = HASH_MIN;
	l->buckets = calloc(l->nbuckets, sizeof(*l->buckets));
	if (!l->buckets) {
		free(l);
		return -ENOMEM;
	}
	err = sd_event_add_defer(m->event, &l->sweep, on_sweep, l);
	if (err >= 0)
		err = sd_event_source_set_enabled(l->sweep, SD_EVENT_OFF);
	if (err < 0) {
		sd_event_source_disable_unref(l->sweep);
		free(l->buckets);
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
	free(l->buckets);
	free(l->kb);
	free(l);
	m->list = NULL;
}

void manager_targets_link(struct manager *m, struct target *t)
{
	struct target_list *l = m->list;

	t->list_next = l->head;
	t->list_dropped = false;
	l->head = t;
	t->att_prev = t->att_next = NULL;
	if (t->state == TARGET_ATTACHED) {
		t->att_next = l->attached;
		if (l->attached)
			l->attached->att_prev = t;
		l->attached = t;
	}
	l->count++;
	hash_grow(l);
	hash_place(l, t);
}

void manager_lookup_stats(const struct manager *m, uint64_t *lookups, uint64_t *steps)
{
	*lookups = m->list->lookups;
	*steps = m->list->lookup_steps;
}

struct target *manager_find_for(struct manager *m, pid_t pid,
				bool (*ok)(const struct target *t, void *arg), void *arg)
{
	struct target *best = NULL;

	m->list->lookups++;
	for (struct target *t = *bucket_of(m->list, pid); t; t = t->hash_next) {
		m->list->lookup_steps++;
		if (t->list_dropped || t->pid != pid || !ok(t, arg))
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
	manager_batch_drop(m, t);
	m->list->dropped++;
	if (sd_event_source_set_enabled(m->list->sweep, SD_EVENT_ONESHOT) < 0)
		log_warn("pid %d: its dropped profile stays in memory until kprofd stops", t->pid);
	if (m->store)
		store_remove(m->store, t->saved_name);
	if (t->state == TARGET_ATTACHED) {
		unattach(m->list, t);
		m->n_attached--;
	} else {
		kept_account(m->list, t, false);
		m->n_kept--;
	}
	window_unlink(t);
	dirty_unlink(t);
	if (t->recent)
		for (struct target **pp = &m->list->recent; *pp; pp = &(*pp)->recent_next)
			if (*pp == t) {
				*pp = t->recent_next;
				t->recent = false;
				break;
			}
}

/* A restored target that is not in the list: delete its file, free it. */
static void drop_target_unsaved(struct manager *m, struct target *t)
{
	if (m->store)
		store_remove(m->store, t->saved_name);
	target_free(t);
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

/* Kept profiles per uid, counted in one walk (an open-addressing table of 2n slots). */
struct uid_count {
	uid_t uid;
	unsigned n; /* 0: a free slot */
};

static struct uid_count *count_of(struct uid_count *tab, size_t size, uid_t uid)
{
	for (size_t i = mix64(uid) & (size - 1);; i = (i + 1) & (size - 1))
		if (!tab[i].n || tab[i].uid == uid)
			return &tab[i];
}

/* The oldest kept profile (drops_before) of a non-root uid over max_kept_per_uid, if any:
 * two walks whatever the number of users and profiles. -ENOMEM: no room for the table. */
static int over_quota(struct manager *m, struct target **ret)
{
	size_t size = 16;
	struct target *t, *o = NULL;
	_cleanup_free_ struct uid_count *tab = NULL;

	*ret = NULL;
	while (size < 2 * (size_t)m->n_kept + 2)
		size *= 2;
	tab = calloc(size, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	manager_for_each_target(m, t) {
		struct uid_count *c;

		if (t->state == TARGET_ATTACHED || !t->uid)
			continue;
		c = count_of(tab, size, t->uid);
		c->uid = t->uid;
		c->n++;
	}
	manager_for_each_target(m, t)
		if (t->state != TARGET_ATTACHED && t->uid &&
		    count_of(tab, size, t->uid)->n > m->conf.max_kept_per_uid &&
		    (!o || drops_before(t, o)))
			o = t;
	*ret = o;
	return 0;
}

/* The kept profile to drop first, if one must go: the oldest of a user over its quota, else
 * the oldest of the users when they hold more than their share, else the oldest of all when
 * over max_kept (root's go only when root's alone exceed it); --all's first (drops_before). */
static struct target *kept_victim(struct manager *m)
{
	struct target *user_oldest = NULL, *oldest = NULL, *t;
	unsigned users = 0;

	/* Without memory for the count, a user's quota waits for the next trim; the global
	 * limits below still hold. */
	if (over_quota(m, &t) == 0 && t)
		return t;
	manager_for_each_target(m, t) {
		if (t->state == TARGET_ATTACHED)
			continue;
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

/* Whether a trim may find a profile to drop (false: surely none, and no walk): a global
 * limit over, or uid's quota (any uid's, when all). */
static bool may_trim(const struct manager *m, bool all, uid_t uid)
{
	const struct target_list *l = m->list;

	if (all || l->kb_incomplete || m->n_kept > m->conf.max_kept ||
	    l->users_kept > manager_user_share(m->conf.max_kept))
		return true;
	return uid && l->nkb && kb_find(l->kb, l->nkb, uid)->kept > m->conf.max_kept_per_uid;
}

/* Keep at most max_kept ended profiles, and users within their quotas (all: any uid's may be
 * over, else only uid's can be: a profile of uid was just kept). */
static void trim(struct manager *m, bool all, uid_t uid)
{
	struct target *t;

	while (may_trim(m, all, uid) && (t = kept_victim(m))) {
		log_msg(t->all ? LOG_DEBUG : LOG_INFO,
			"dropping the kept profile of pid %d (%s, uid %u): more than %u kept (%u "
			"for one user)",
			t->pid, t->comm, t->uid, m->conf.max_kept, m->conf.max_kept_per_uid);
		m->all_kept_dropped += t->all;
		manager_drop_target(m, t);
	}
}

void manager_trim_kept(struct manager *m)
{
	trim(m, true, 0);
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
	manager_mark_dirty(m, t);
	t->save_failures++;
	t->save_retry_ns =
	    now + (t->save_failures < 6 ? 1ULL << t->save_failures : 60) * 1000000000ULL;
}

/* Everything the ring buffer holds now, within a bound (a flood must not hold the loop). */
void manager_drain_all(struct manager *m)
{
	bool was = m->batching;

	/* Kept for their runs as a timer's drain keeps them (each target's in their order). */
	m->batching = manager_batch_wanted(m);
	for (int i = 0; i < 64 && ringbuf_drain(m->ringbuf) > 0; i++)
		;
	m->batching = was;
	manager_offcpu_drain(m, manager_find, manager_mark_dirty);
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
	manager_for_each_attached(m, o) {
		if (!o->events || (!o->threads.unsampled && !(t->children && o->parent)))
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
	/* Samples already in the ring buffer still belong to this profile, and so do those
	 * waiting for a run. */
	manager_drain_all(m);
	manager_batch_add(m, t);
	target_flush_captures(t);
	/* What the last read of its perf map and jitdump names, before the profile is kept. */
	target_names_update(t, true);
	tsym_done(t->sym);
	log_msg(level, "pid %d (%s) %s, %llu samples kept", t->pid, t->comm, why,
		(unsigned long long)t->samples);
	t->duration_timer = sd_event_source_disable_unref(t->duration_timer);
	calls_end(t->calls);
	if (state == TARGET_EXITED) {
		/* How it ended ("exited (signal 5)"): a probed target killed by a signal is the
		 * first thing its user must know. */
		char end[300];

		snprintf(end, sizeof(end), "target %s", why);
		paths_stop(t->paths, end);
	} else {
		paths_stop(t->paths, "detached");
	}
	unattach(m->list, t);
	t->state = state;
	t->ended_ns = now_ns(CLOCK_REALTIME);
	hash_unlink(m->list, t); /* behind the attached ones of its chain */
	hash_place(m->list, t);
	drift_reply_end(t); /* the drift detectors freed, their result kept */
	t->ending = false;
	m->n_attached--;
	m->n_kept++;
	kept_account(m->list, t, true);
	t->recent_next = m->list->recent;
	t->recent = true;
	t->drains_ended = 0;
	m->list->recent = t;
	manager_window_pending(m, t); /* its last window, cut at the next tick */
	save_target(m, t);
	manager_emit_target_end(m, t);
	trim(m, false, t->uid);
}

void manager_add_kept(struct manager *m, struct target *t)
{
	struct target *o;

	/* The same session twice (a copy of a file): keep one. */
	for (o = *bucket_of(m->list, t->pid); o; o = o->hash_next) {
		if (!o->list_dropped && o->pid == t->pid && o->attached_ns == t->attached_ns) {
			drop_target_unsaved(m, t);
			return;
		}
	}
	manager_targets_link(m, t);
	m->n_kept++;
	kept_account(m->list, t, true);
	trim(m, false, t->uid);
}

/* Drop kept profiles older than the configured age. */
void manager_expire_kept(struct manager *m)
{
	uint64_t now = now_ns(CLOCK_REALTIME), max = m->conf.kept_max_age_sec * 1000000000ULL;
	struct target *t;

	uint64_t oldest = UINT64_MAX;

	/* Nothing is due before the oldest kept profile is: no walk until then (a SIGHUP that
	 * shortens the age walks again: next_expiry is reset). */
	if (!m->conf.kept_max_age_sec || now < m->list->next_expiry)
		return;
	manager_for_each_target(m, t) {
		if (t->state == TARGET_ATTACHED)
			continue;
		if (now - t->ended_ns > max) {
			log_info("dropping the kept profile of pid %d (%s): older than %u s",
				 t->pid, t->comm, m->conf.kept_max_age_sec);
			manager_drop_target(m, t);
		} else if (t->ended_ns < oldest) {
			oldest = t->ended_ns;
		}
	}
	/* Ended from now on are newer: the oldest left is the next one due. */
	m->list->next_expiry = oldest == UINT64_MAX ? now + max : oldest + max + 1;
}

void manager_expiry_reset(struct manager *m)
{
	m->list->next_expiry = 0;
}

/* Save ended profiles that changed after they were saved, or whose save failed (when its
 * back-off is over, or at once when force). */
void manager_save_dirty(struct manager *m, bool force)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct target_list *l = m->list;
	struct target *t, *next;

	if (!l->dirty)
		return;
	l->saves++;
	/* A save that fails marks t dirty again: it stays where it is on the list (linked). */
	for (t = l->dirty; t; t = next) {
		next = t->dirty_next;
		l->save_steps++;
		if (t->dirty) {
			/* Late samples: its memory again (out, then in). */
			kept_account(l, t, false);
			kept_account(l, t, true);
			if (!m->store) /* nowhere to save it: in memory it is up to date */
				t->dirty = false;
			else if (force || !t->save_failures || now >= t->save_retry_ns)
				save_target(m, t);
		}
		if (!t->dirty)
			dirty_unlink(t);
	}
}

/* An ended target's symbols are dropped once the drain in which it ended and the next one are
 * over (see manager.c); only the targets that ended lately are looked at. A followed child
 * that ran too briefly to be sampled (a pipeline's `cat`, each command of a shell loop) holds
 * nothing: it is not kept, so that a fork storm does not push every kept profile out. Once its
 * symbols are dropped, no late sample can come for it. */
void manager_drop_ended_symbols(struct manager *m)
{
	struct target **pp = &m->list->recent;

	while (*pp) {
		struct target *t = *pp;

		/* Held one more drain (late samples), and while names may still come late. */
		if (!t->list_dropped && t->sym && (t->drains_ended++ < 1 || target_late_names(t))) {
			if (t->dirty) /* names came late: saved again */
				manager_mark_dirty(m, t);
			pp = &t->recent_next;
			continue;
		}
		*pp = t->recent_next;
		t->recent = false;
		if (t->list_dropped)
			continue;
		if (t->sym) {
			target_drop_symbols(t);
			if (t->dirty)
				manager_mark_dirty(m, t);
		}
		if (t->state == TARGET_EXITED && t->parent && !t->samples && !t->sym) {
			log_debug("pid %d (%s), a child of %d: no samples, not kept", t->pid,
				  t->comm, t->parent);
			manager_drop_target(m, t);
		}
	}
}

unsigned manager_auto_targets(const struct manager *m, const char *rule)
{
	const struct target *t;
	unsigned n = 0;

	manager_for_each_attached(m, t)
		n += (rule ? t->rule && !strcmp(t->rule, rule) : t->rule || t->all);
	return n;
}
