/* SPDX-License-Identifier: GPL-2.0-only */
/* target_since.h: the samples a target took since a moment, as a SavedProfile message of those
 * alone (target_since.c): the interval profiles of the HTTP endpoint. */
#ifndef KPROF_DAEMON_TARGET_SINCE_H
#define KPROF_DAEMON_TARGET_SINCE_H

#include <stddef.h>

#include "kprof/profile_snap.h"
#include "kprof/sdelta.h"
#include "target/target.h"
#include "wire/target_pb.h"

/* A target's counts at the start of an interval. */
struct target_since {
	struct profile_snap *ps;
};

/* t's counts now into *s. 0 or -ENOMEM (nothing held then). */
int target_since_take(const struct target *t, struct target_since *s);
void target_since_release(struct target_since *s);
/* The samples t took since s (NULL: all of them) as m: the stacks that gained, with their
 * gains; only the functions those stacks name, in the profile's order (m->fids: their profile
 * ids); the sampled addresses of their leaf functions (each leaf's gain spread over them as
 * in the whole profile); the mapping and
 * thread-name tables and t's facts (target_fill_pb_brief), m->target.samples the gains' sum. No HCCT, exact calls,
 * paths, drift or resume. 0 if t took no sample since (m empty: nothing to release), 1 if m was
 * built (saved_msg_release it), or -ENOMEM. */
int target_since_build(const struct target *t, const struct target_since *s, struct saved_msg *m);
/* The end of the interval since s, now (an answer waits): *e (NULL if t took no sample since).
 * 0 or -ENOMEM. */
int target_since_end(const struct target *t, const struct target_since *s, struct sdelta **e);
/* target_since_build cut back to the end e (NULL: none): only the samples up to it. */
int target_since_build_until(const struct target *t, const struct target_since *s,
			     const struct sdelta *e, struct saved_msg *m);

#endif
