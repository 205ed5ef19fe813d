// SPDX-License-Identifier: GPL-2.0-only
/* manager_events.c: the manager's subscribers and the events they are told of (see
 * manager_events.h).
 *
 * A fixed array, in subscription order. Emitting walks a copy of it, so that a callback may
 * unsubscribe itself or another (a module that frees itself) without the walk reading a slot
 * that moved; a subscriber removed during a walk is not called after its removal. The lowest
 * part of the manager: it calls nothing of the others, only the subscribers' callbacks.
 */
#include <errno.h>
#include <string.h>

#include "manager/manager.h"

int manager_subscribe(struct manager *m, const struct manager_events *ev, void *ud)
{
	for (unsigned i = 0; i < m->n_subs; i++)
		if (m->subs[i].ev == ev && m->subs[i].ud == ud)
			return -EEXIST;
	if (m->n_subs >= MANAGER_MAX_SUBSCRIBERS)
		return -ENOSPC;
	m->subs[m->n_subs++] = (struct manager_sub){.ev = ev, .ud = ud};
	return 0;
}

void manager_unsubscribe(struct manager *m, const struct manager_events *ev, void *ud)
{
	for (unsigned i = 0; i < m->n_subs; i++) {
		if (m->subs[i].ev != ev || m->subs[i].ud != ud)
			continue;
		memmove(&m->subs[i], &m->subs[i + 1], (m->n_subs - i - 1) * sizeof(m->subs[0]));
		m->n_subs--;
		return;
	}
}

/* Whether sub still is a subscriber (a callback before it may have removed it). */
static bool subscribed(const struct manager *m, const struct manager_sub *sub)
{
	for (unsigned i = 0; i < m->n_subs; i++)
		if (m->subs[i].ev == sub->ev && m->subs[i].ud == sub->ud)
			return true;
	return false;
}

/* The subscribers now, into subs: their number. */
static unsigned snapshot(const struct manager *m, struct manager_sub *subs)
{
	memcpy(subs, m->subs, m->n_subs * sizeof(*subs));
	return m->n_subs;
}

void manager_emit_exec(struct manager *m, const struct kp_execwatch *w)
{
	struct manager_sub subs[MANAGER_MAX_SUBSCRIBERS];
	unsigned n = snapshot(m, subs);

	for (unsigned i = 0; i < n; i++)
		if (subs[i].ev->on_exec && subscribed(m, &subs[i]))
			subs[i].ev->on_exec(subs[i].ud, w);
}

void manager_emit_reload(struct manager *m)
{
	struct manager_sub subs[MANAGER_MAX_SUBSCRIBERS];
	unsigned n = snapshot(m, subs);

	for (unsigned i = 0; i < n; i++)
		if (subs[i].ev->on_reload && subscribed(m, &subs[i]))
			subs[i].ev->on_reload(subs[i].ud);
}

struct target *manager_emit_stranger(struct manager *m, const struct kp_sample *s)
{
	struct manager_sub subs[MANAGER_MAX_SUBSCRIBERS];
	unsigned n = m->stopping ? 0 : snapshot(m, subs);
	struct target *t = NULL;

	for (unsigned i = 0; i < n && !t; i++)
		if (subs[i].ev->on_stranger && subscribed(m, &subs[i]))
			t = subs[i].ev->on_stranger(subs[i].ud, s);
	return t;
}

/* The callback of a target event: on_target_end or on_target_attach. */
typedef void (*target_event_fn)(void *ud, struct target *t);

static target_event_fn target_event(const struct manager_events *ev, bool attach)
{
	return attach ? ev->on_target_attach : ev->on_target_end;
}

static void emit_target(struct manager *m, struct target *t, bool attach)
{
	struct manager_sub subs[MANAGER_MAX_SUBSCRIBERS];
	unsigned n = snapshot(m, subs);

	for (unsigned i = 0; i < n; i++)
		if (target_event(subs[i].ev, attach) && subscribed(m, &subs[i]))
			target_event(subs[i].ev, attach)(subs[i].ud, t);
}

void manager_emit_target_end(struct manager *m, struct target *t)
{
	emit_target(m, t, false);
}

void manager_emit_target_attach(struct manager *m, struct target *t)
{
	emit_target(m, t, true);
}
