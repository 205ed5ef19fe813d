/* SPDX-License-Identifier: GPL-2.0-only */
/* profile_snap.h: a profile's stack counts at one moment, and the samples it took since
 * (profile_snap.c): the interval profiles of kprofd's HTTP endpoint (GET
 * /debug/pprof/profile?seconds=N). Pure: no I/O, no globals. */
#ifndef KPROF_PROFILE_SNAP_H
#define KPROF_PROFILE_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/profile.h"

struct profile_snap;

/* p's stacks and their counts now (a copy: p may change and the snapshot stays). 0 or
 * -ENOMEM. */
int profile_snap_new(const struct profile *p, struct profile_snap **ret);
void profile_snap_free(struct profile_snap *s);

/* Whether p took some sample since s was taken of it. O(1). */
bool profile_snap_gained(const struct profile *p, const struct profile_snap *s);
/* The samples p took since s was taken of it (s must be of this p: of another profile the
 * answer is meaningless): fn(tid, ids, n, gain) for each stack whose count grew, in p's order,
 * ids as p holds them (valid during the call). A stack names the same samples however its
 * functions were merged since (names given late): counts are compared by (thread, canonical
 * ids). A stack whose count went down (not a later state of the same profile) gains nothing.
 * *samples (if not NULL): the gains' sum. Returns the number of stacks given to fn, fn's first
 * negative return, or -ENOMEM.
 * Cost: O(1) when p took no sample since; else one pass over p's stacks by index, or, if
 * profile_commit_renames moved them since, a hash of the snapshot's stacks by canonical ids. */
int profile_snap_delta(const struct profile *p, const struct profile_snap *s,
		       profile_stack_fn fn, void *userdata, uint64_t *samples);

#endif
