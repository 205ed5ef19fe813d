/* SPDX-License-Identifier: GPL-2.0-only */
/* manager_events.h: what the manager tells the modules built on it (manager_events.c): any
 * number of subscribers, each with the events it wants. Included by manager.h.
 *
 * The one way to plug into the manager: watch rules (watch.c), system-wide mode (syswide.c)
 * and whatever comes next subscribe with manager_subscribe instead of writing the manager's
 * fields. A subscriber is its callbacks (a static const struct, NULL for an event it does not
 * want) and its userdata; it unsubscribes before it is freed.
 */
#ifndef KPROF_DAEMON_MANAGER_EVENTS_H
#define KPROF_DAEMON_MANAGER_EVENTS_H

#include <stdbool.h>

#include "kprof/abi.h"

struct manager;
struct target;

#define MANAGER_MAX_SUBSCRIBERS 8

struct manager_events {
	/* A process that is no target exec'd with a comm or uid a rule names (KP_REC_WATCH). */
	void (*on_exec)(void *ud, const struct kp_execwatch *w);
	/* The settings were read again (SIGHUP): the manager's conf holds the new ones. */
	void (*on_reload)(void *ud);
	/* A sample of a process that is no target (KP_SF_STRANGER, system-wide mode): a target
	 * made of it (the first subscriber that returns one takes the sample), or NULL. */
	struct target *(*on_stranger)(void *ud, const struct kp_sample *s);
	/* t has ended (exited, detached): its sampling stopped, its profile kept. */
	void (*on_target_end)(void *ud, struct target *t);
	/* t was attached (by a client, a watch, a rule, --all or as a followed child). */
	void (*on_target_attach)(void *ud, struct target *t);
};

struct manager_sub {
	const struct manager_events *ev;
	void *ud;
};

/* Add a subscriber: 0, -EEXIST (ev and ud already are one), -ENOSPC (MANAGER_MAX_SUBSCRIBERS). */
int manager_subscribe(struct manager *m, const struct manager_events *ev, void *ud);
/* Remove it (no-op if it is not one); safe from inside a callback. */
void manager_unsubscribe(struct manager *m, const struct manager_events *ev, void *ud);

/* Tell every subscriber (the manager's parts call these). */
void manager_emit_exec(struct manager *m, const struct kp_execwatch *w);
void manager_emit_reload(struct manager *m);
struct target *manager_emit_stranger(struct manager *m, const struct kp_sample *s);
void manager_emit_target_end(struct manager *m, struct target *t);
void manager_emit_target_attach(struct manager *m, struct target *t);

#endif
