// SPDX-License-Identifier: GPL-2.0-only
/* callsync.c: a thread's cursor in exact mode's HCCT across lost call events (see
 * include/kprof/callsync.h).
 *
 * Depths are the BPF program's: 0 at the thread's first event of the epoch. The cursor stands on
 * depth `at`, its root on `base` (at - base frames entered below the root). A gap: the lowest
 * depth L reached meanwhile bounds what is still known, so the cursor goes down to L (to the
 * root, which then stands for L, if L is below it) and waits for the thread to be at L again.
 * An event whose depth before it is `at` is followed again; a return to `at` from above only
 * says the thread is back. A new start (number 0 on a known thread: the BPF side started it over)
 * resets the cursor.
 */
#include "kprof/callsync.h"

void callsync_reset(struct hcct *h, struct callsync *t)
{
	hcct_cursor_release(h, &t->cur);
	*t = (struct callsync){0};
}

/* Back down to depth level: the frames above it are no longer known. */
static void cut(struct hcct *h, struct callsync *t, int32_t level)
{
	if (level <= t->base) {
		hcct_cursor_release(h, &t->cur);
		t->base = t->at = level;
		return;
	}
	for (; t->at > level; t->at--)
		hcct_cursor_exit(h, &t->cur);
}

enum callsync_result callsync_event(struct hcct *h, struct callsync *t, const struct kp_call *ev,
				    uint64_t *lost)
{
	int32_t before = ev->exit ? ev->depth + 1 : ev->depth - 1;

	if (!t->started || ev->seq == 0) {
		callsync_reset(h, t);
		t->started = t->in_step = true;
	}
	if (ev->seq != t->next_seq || (t->in_step && before != t->at)) {
		if (ev->seq > t->next_seq)
			*lost += ev->seq - t->next_seq;
		if (ev->low < t->at)
			cut(h, t, ev->low);
		t->in_step = false;
	}
	t->next_seq = ev->seq + 1;
	if (!t->in_step) {
		if (before != t->at) {
			t->in_step = ev->exit && ev->depth == t->at;
			return CALLSYNC_SKIPPED;
		}
		t->in_step = true;
	}
	if (!ev->exit) {
		hcct_cursor_enter(h, &t->cur, ev->func, 0); /* its caps count what it refuses */
		t->at++;
		return CALLSYNC_ENTERED;
	}
	t->at--;
	if (t->at < t->base) {
		t->base = t->at;
		return CALLSYNC_UNMATCHED;
	}
	hcct_cursor_exit(h, &t->cur);
	return CALLSYNC_RETURNED;
}
