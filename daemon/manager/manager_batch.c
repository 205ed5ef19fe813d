// SPDX-License-Identifier: GPL-2.0-only
/* manager_batch.c: samples added a target at a time, in runs.
 *
 * With many targets (daemon.batch_min_targets, --all on a busy host) each sample lands on state
 * of its own target (its address cache, profile, HCCT, call sites) that the samples of the
 * thousands of others have pushed out of the CPU's cache. A drain then keeps each target's
 * samples (their records, in arrival order) and adds them in a row once it holds a run of them
 * (BATCH_RUN) or the first has waited BATCH_MAX_MS: the first brings the state in, the others
 * find it (bench/replay.c --run: 25 us a sample fed one process at a time, 17 us in runs of 5,
 * 14 us in runs of 20, at 5,000 processes). Nothing sees a target without its waiting samples:
 * any other record of its process (exit, exec, thread, calls, paths) adds them first
 * (on_other), every drain a reader does adds all (manager_drain: replies, live views, the HTTP
 * endpoint, windows, system-wide mode), and a target's end adds its own after the last drain
 * (manager_end_target). A target dropped unsaved drops them. Memory: BATCH_TARGET_BYTES a target,
 * BATCH_ALL_BYTES in all; past either the target's waiting samples are added, then the new one.
 */
#include <stddef.h>
#include <stdlib.h>

#include "os/clock.h"
#include "manager/manager.h"
#include "manager/manager_internal.h"
#include "os/log.h"
#include "target/target.h"

#define BATCH_RUN 16
#define BATCH_MAX_MS 2000
#define BATCH_TARGET_BYTES (64u << 10)
#define BATCH_ALL_BYTES (64u << 20)

bool manager_batch_wanted(struct manager *m)
{
	bool on = m->conf.batch_min_targets && m->n_attached >= m->conf.batch_min_targets;

	/* Said when it changes: the first time at info, then (a count around the threshold
	 * goes up and down) at debug. */
	if (on != m->batch_on)
		log_msg(on && !m->batch_said ? LOG_INFO : LOG_DEBUG,
			"samples %s: %u targets attached (daemon.batch_min_targets = %u)",
			on ? "added a target at a time, in runs" : "added as they come",
			m->n_attached, m->conf.batch_min_targets);
	m->batch_said |= on;
	m->batch_on = on;
	return on;
}

static void batch_unlink(struct manager *m, struct target *t)
{
	if (!t->batch_pprev)
		return;
	*t->batch_pprev = t->batch_next;
	if (t->batch_next)
		t->batch_next->batch_pprev = t->batch_pprev;
	t->batch_next = NULL;
	t->batch_pprev = NULL;
	m->batch_bytes -= t->batch_len;
}

void manager_batch_add(struct manager *m, struct target *t)
{
	batch_unlink(m, t);
	if (!t->batch_n)
		return;
	m->batch_runs++;
	target_batch_add(t);
}

void manager_batch_drop(struct manager *m, struct target *t)
{
	batch_unlink(m, t);
	free(t->batch_buf);
	t->batch_buf = NULL;
	t->batch_len = t->batch_cap = 0;
	t->batch_n = 0;
}

bool manager_batch_keep(struct manager *m, struct target *t, const struct kp_sample *s)
{
	size_t before = t->batch_len,
	       len = offsetof(struct kp_sample, ips) + 8 * ((size_t)s->n_kernel + s->n_user);

	if (t->state != TARGET_ATTACHED)
		return false;
	/* No room: the older ones first, then this one (a target's samples keep their order). */
	if (m->batch_bytes + len > BATCH_ALL_BYTES ||
	    target_batch_keep(t, s, len, BATCH_TARGET_BYTES) < 0) {
		manager_batch_add(m, t);
		return false;
	}
	m->batch_bytes += t->batch_len - before;
	m->batch_kept++;
	if (!t->batch_pprev) {
		t->batch_since_ns = now_ns(CLOCK_MONOTONIC);
		t->batch_next = m->batch_head;
		if (m->batch_head)
			m->batch_head->batch_pprev = &t->batch_next;
		m->batch_head = t;
		t->batch_pprev = &m->batch_head;
	}
	if (t->batch_n >= BATCH_RUN)
		manager_batch_add(m, t);
	return true;
}

void manager_batch_flush(struct manager *m, bool all)
{
	uint64_t now = all ? 0 : now_ns(CLOCK_MONOTONIC);
	struct target *t = m->batch_head, *next;

	for (; t; t = next) {
		next = t->batch_next;
		if (all || now - t->batch_since_ns >= BATCH_MAX_MS * 1000000ULL)
			manager_batch_add(m, t);
	}
}
