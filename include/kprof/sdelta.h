/* SPDX-License-Identifier: GPL-2.0-only */
/* sdelta.h: the profile of an interval, as the difference of two snapshots of one target's
 * kept profile (sdelta.c). kprofd's HTTP endpoint answers "the next N seconds" of a target's
 * off-CPU profile (type=off_cpu|wall) with it; its CPU samples go by profile_snap.h (a copy of
 * the stack counts: cheaper). Pure: memory in, memory out. */
#ifndef KPROF_SDELTA_H
#define KPROF_SDELTA_H

#include <stddef.h>
#include <stdint.h>

#include "proto/kprof.pb-c.h"

/* A snapshot holds at most this many stacks and stack frames (the profile's own caps are
 * lower: limits.max_stacks). */
#define SDELTA_MAX_STACKS (1u << 24)
#define SDELTA_MAX_IDS (1u << 28)

struct sdelta;

/* The (thread, stack) -> count table of start, and its leaf addresses' counts, copied. 0,
 * -E2BIG (over the caps above), -ENOMEM. */
int sdelta_new(const Kprof__SavedProfile *start, struct sdelta **ret);
void sdelta_free(struct sdelta *d);
/* Subtract the snapshot from end, a later state of the same profile: each stack's count goes
 * down by its count at the snapshot (a stack the snapshot lacks keeps its count; one whose
 * count did not grow is dropped), and end->stacks is compacted in place. Returns the samples
 * left (what the interval added). A stack with fewer samples than at the snapshot (not a later
 * state of the same profile) is dropped, not wrapped around. The leaf addresses the same, by
 * (function, address), end->leaf_addrs compacted in place. */
uint64_t sdelta_apply(const struct sdelta *d, Kprof__SavedProfile *end);
/* Cut later, a later state of the snapshot's profile (or of an interval of it), back to the
 * snapshot: each stack's and leaf address's count at most its count at the snapshot, one the
 * snapshot lacks dropped, the arrays compacted in place. Returns the samples left. An interval
 * whose answer waits (for source lines) keeps its end this way: snapshot at the end, cut back
 * the profile built later. */
uint64_t sdelta_cap(const struct sdelta *d, Kprof__SavedProfile *later);
/* Stacks in the snapshot (for tests and limits). */
size_t sdelta_size(const struct sdelta *d);

#endif
