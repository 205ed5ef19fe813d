/* SPDX-License-Identifier: GPL-2.0-only */
/* callsync.h: one thread of exact mode in its calling-context tree (callsync.c): the HCCT
 * cursor fed with the thread's call events of one epoch (struct kp_call), kept exact when
 * some of them were lost.
 *
 * The events carry the thread's number, depth after the event and lowest depth since its last
 * event sent (calls.bpf.c). A gap in the numbers is a loss: the frames up to the lowest depth
 * reached meanwhile are still the cursor's, those above it are unknown. The cursor goes back
 * down to that depth, and the thread's events are left out until it is back there (its next
 * event from that depth, or a return to it). No context is then entered under a caller it did
 * not have. The cursor's root is where the thread stood at its first event of the epoch (a
 * probe set that goes in finds threads inside functions); a return below it moves the root
 * down (an unmatched exit). Pure: no I/O.
 */
#ifndef KPROF_CALLSYNC_H
#define KPROF_CALLSYNC_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

#include "kprof/abi.h"
#include "kprof/hcct.h"

struct callsync {
	struct hcct_cursor cur;
	uint32_t next_seq; /* the number the thread's next event must have */
	int32_t base;	   /* the depth the cursor's root stands for */
	int32_t at;	   /* the depth the cursor stands on */
	bool started;	   /* an event of the epoch seen */
	bool in_step;	   /* the thread is at `at` (false: above it, in frames unknown) */
};

enum callsync_result {
	CALLSYNC_ENTERED,   /* a context entered (or counted lost by the HCCT at its caps) */
	CALLSYNC_RETURNED,  /* the cursor went back to the caller */
	CALLSYNC_UNMATCHED, /* a return with nothing entered: the root moved down */
	CALLSYNC_SKIPPED,   /* left out: the thread is in frames a loss hid */
};

/* Follow ev in h; *lost grows by the events the gap before it lost. */
enum callsync_result callsync_event(struct hcct *h, struct callsync *t, const struct kp_call *ev,
				    uint64_t *lost);
/* The cursor released, the thread to start over (a new epoch, the thread gone). */
void callsync_reset(struct hcct *h, struct callsync *t);

#endif
