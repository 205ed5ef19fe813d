/* SPDX-License-Identifier: GPL-2.0-only */
/* manager_internal.h: what the parts of the manager call in one another and nothing else does:
 * manager_targets.c (the target list, ending targets, kept profiles), manager_attach.c
 * (attaching and what starts with a target), manager_watch.c (cgroup and unit watches) and
 * manager.c (the event loop). Each part calls only those below it, in that order, so the parts
 * form no cycle. The manager's interface to the rest of kprofd is manager.h. */
#ifndef KPROF_DAEMON_MANAGER_INTERNAL_H
#define KPROF_DAEMON_MANAGER_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "kprof/abi.h"
#include "manager/manager.h"
#include "target/target.h"

/* manager_targets.c */

/* The list made (at manager_new) and freed with every target in it (manager_free). */
int manager_targets_init(struct manager *m);
void manager_targets_free(struct manager *m);
/* t goes in at the head of the list. */
void manager_targets_link(struct manager *m, struct target *t);

/* The part of a global limit that non-root users may take: all but an eighth (at least one
 * kept for root when the limit allows it). */
unsigned manager_user_share(unsigned limit);
/* t out of the list and its saved file deleted; freed when control is back in the loop. */
void manager_drop_target(struct manager *m, struct target *t);
/* Keep at most max_kept ended profiles, and users within their quotas. */
void manager_trim_kept(struct manager *m);
/* Everything the ring buffer holds now, within a bound (a flood must not hold the loop). */
void manager_drain_all(struct manager *m);
/* Keep sample s of attached target t for its next run (manager_batch.c): false when it must be
 * added now (t not attached, no room), after t's older ones. */
bool manager_batch_keep(struct manager *m, struct target *t, const struct kp_sample *s);
/* Add t's samples waiting for a run now. */
void manager_batch_add(struct manager *m, struct target *t);
/* t is dropped unsaved: its samples waiting for a run go with it. */
void manager_batch_drop(struct manager *m, struct target *t);
/* Sampling of t stops: out of kp_targets, its events closed (their counts kept) or its per-CPU
 * set released. */
void manager_stop_sampling(struct manager *m, struct target *t);
/* Stop sampling t; its profile stays. The log line (level, why: "detached", "exited
 * (status 0)", ...) is written once the samples still in the ring buffer are in, so its count
 * is the kept profile's. Its symbols stay a little longer (drop_ended_symbols). */
void manager_end_target(struct manager *m, struct target *t, enum target_state state, int level,
			const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Drop kept profiles older than the configured age (a walk only when the oldest is due; the
 * age changed: manager_expiry_reset). */
void manager_expire_kept(struct manager *m);
void manager_expiry_reset(struct manager *m);
/* Kept profiles' memory: of uid (mine) and of all (all), kept up to date as they change. */
void manager_kept_memory(const struct manager *m, uid_t uid, uint64_t *mine, uint64_t *all);
/* t (ended) changed after it was saved: saved again at the next housekeeping (it goes on the
 * list of dirty ones that manager_save_dirty walks, and off it once saved or dropped). */
void manager_mark_dirty(struct manager *m, struct target *t);
/* The symbols of targets ended before the last drain dropped; childless children dropped. */
void manager_drop_ended_symbols(struct manager *m);
/* Save ended profiles that changed after they were saved, or whose save failed (when its
 * back-off is over, or at once when force). */
void manager_save_dirty(struct manager *m, bool force);

/* manager_watch.c */

void manager_on_cgroup(void *ctx, pid_t tgid, uint64_t cgid, uint64_t start_ticks);
/* Housekeeping: a watched cgroup removed ends its watch; a unit's, and a watch rule's cgroup,
 * is waited for (a stopped or restarting service) and watched again when it is back. */
void manager_check_watches(struct manager *m);

#endif
