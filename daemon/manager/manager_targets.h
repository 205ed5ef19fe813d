/* SPDX-License-Identifier: GPL-2.0-only */
/* manager_targets.h: the manager's list of targets and kept profiles (manager_targets.c).
 * Included by manager.h. */
#ifndef KPROF_DAEMON_MANAGER_TARGETS_H
#define KPROF_DAEMON_MANAGER_TARGETS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct manager;
struct target;

/* The one way to walk the targets (attached and kept), newest first:
 *	struct target *t;
 *	manager_for_each_target(m, t) { ... }
 * Anything may happen in the body: ending, detaching, dropping or trimming any target (t
 * too), attaching new ones (a walk under way may not see those). A target dropped meanwhile is
 * skipped and freed only once control is back in the event loop, so neither a walk nor a
 * caller still holding a target pointer reads freed memory. */
struct target *manager_targets_first(const struct manager *m);
struct target *manager_targets_next(const struct target *t);
#define manager_for_each_target(m, t)                                                              \
	for ((t) = manager_targets_first(m); (t); (t) = manager_targets_next(t))
/* The same over the attached targets alone (as safe): what per-second and per-attach work
 * walks, so that it does not grow with the kept profiles. */
struct target *manager_attached_first(const struct manager *m);
struct target *manager_attached_next(const struct target *t);
#define manager_for_each_attached(m, t)                                                            \
	for ((t) = manager_attached_first(m); (t); (t) = manager_attached_next(t))

/* Ended targets whose last window is not cut yet (they ended, or a late sample came): the
 * window tick cuts the attached ones and these, not every kept profile. pending adds t (once;
 * not when it has nothing new), pop takes one off (NULL: none left). */
void manager_window_pending(struct manager *m, struct target *t);
struct target *manager_window_pop(struct manager *m);

/* Lookups by PID (manager_find*) and the hash-chain entries they looked at, since start: a
 * debug counter of the per-sample cost (status --json). */
void manager_lookup_stats(const struct manager *m, uint64_t *lookups, uint64_t *steps);
/* The housekeeping's walks of the dirty kept profiles to save (manager_save_dirty) and the
 * targets they looked at, since start: a debug counter (status --json), flat in the kept
 * profiles that did not change. */
void manager_save_stats(const struct manager *m, uint64_t *saves, uint64_t *steps);
/* The attached target of pid, else its newest kept profile; NULL if none. */
struct target *manager_find(struct manager *m, pid_t pid);
/* The same among the targets ok() accepts (the ones a client may see). */
struct target *manager_find_for(struct manager *m, pid_t pid,
				bool (*ok)(const struct target *t, void *arg), void *arg);
/* Add a restored (kept) target. */
void manager_add_kept(struct manager *m, struct target *t);
/* Targets attached by watch rules now (attach_opts.rule), and those of one rule. */
unsigned manager_auto_targets(const struct manager *m, const char *rule);

#endif
