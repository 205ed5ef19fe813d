/* SPDX-License-Identifier: GPL-2.0-only */
/* saved.h: the one decoder of a kept profile (a kprof.SavedProfile message).
 *
 * kprofd writes a profile to its state directory when a target ends and reads it back at start;
 * kprofctl gets the same message from `export`. Both, and the fuzz target of saved files, check
 * it and rebuild its profile here, so a file that kprofd would refuse is refused everywhere for
 * the same reasons. Pure: no I/O (the message is already decoded by protobuf-c).
 */
#ifndef KPROF_SAVED_H
#define KPROF_SAVED_H

#include <stdint.h>

#include "kprof/hcct_tree.h"
#include "kprof/profile.h"
#include "proto/kprof.pb-c.h"

#define SAVED_FORMAT 1
#define SAVED_MAX_MAPPINGS 4096	 /* mappings of one profile */
#define SAVED_MAX_THREADS 65536	 /* named threads of one profile */
#define SAVED_MAX_PATH 4096	 /* bytes of a mapping's path or a function's source file */
#define SAVED_MAX_BUILD_ID 128	 /* hex digits of a build id (64 bytes) */
#define SAVED_MAX_THREAD_NAME 15 /* a comm: TASK_COMM_LEN - 1 */
#define SAVED_MAX_LEAF_ADDRS 16384 /* sampled leaf addresses of one profile (issue 32) */
#define SAVED_MAX_LINES_PER_ADDR 16 /* source frames of one address (SRCLINE_MAX_FRAMES) */
#define SAVED_MAX_CALL_SITES 65536  /* call sites of one profile (TARGET_MAX_CALL_SITES) */
#define SAVED_MAX_LINE_NAME 1024    /* bytes of a source frame's function or file name */
#define SAVED_MAX_LINES_NOTES 16    /* notes of the lines resolver */
#define SAVED_MAX_LINES_NOTE 512    /* bytes of one */
/* The drift result kept with a profile (SavedProfile.drift): functions, drift events, top keys
 * per function, bytes of a name or key (as drift_reply.c renders them). */
#define SAVED_MAX_DRIFT_FUNCS 128
#define SAVED_MAX_DRIFT_EVENTS 64
#define SAVED_MAX_DRIFT_KEYS 16
#define SAVED_MAX_DRIFT_NAME 160

/* 0 if sp is a profile as kprofd writes it, else -EPROTONOSUPPORT (another format) or
 * -EBADMSG: no target, a pid out of (0, 2^31), a function kind out of range, a stack longer
 * than KP_MAX_FRAMES frames or naming a function that does not exist, an HCCT node naming
 * a missing function or a parent that does not come before it, more than SAVED_MAX_MAPPINGS
 * mappings or SAVED_MAX_THREADS thread names, a mapping ending before it starts, a string
 * longer than its SAVED_MAX_ limit, a drift result with more functions, events or keys than
 * SAVED_MAX_DRIFT_* or an overlap or share that is not a number in [-1, 1], more than
 * SAVED_MAX_LEAF_ADDRS leaf addresses or one naming a function that does not exist, an off-CPU
 * profile (off_cpu) that is not itself such a profile or has one of its own, more than
 * SAVED_MAX_LINES_PER_ADDR source lines at an address or a name of one longer than
 * SAVED_MAX_LINE_NAME, more than SAVED_MAX_LINES_NOTES notes of the lines resolver, more than
 * SAVED_MAX_CALL_SITES call sites or one naming a function that does not exist. */
int saved_check(const Kprof__SavedProfile *sp);

/* The functions and stacks of a checked sp in a new profile (limits lim, NULL for defaults).
 * With map, *map (malloc'd, n_functions entries) gets the profile id of each saved function:
 * equal functions share one id. Source files and lines are kept (profile_set_source). 0, or a
 * negative errno (-E2BIG past the profile's limits). */
int saved_profile(const Kprof__SavedProfile *sp, const struct profile_limits *lim,
		  struct profile **ret, uint32_t **map);

/* The saved MCCT nodes v[0..n) of a checked message (SavedProfile.hcct or .exact_hcct) as an
 * HCCT snapshot (hcct_snapshot's format: phi 0/1, counts and errors of monitored nodes only,
 * children counted) of n_samples samples, each node's function id mapped through map (the
 * saved_profile map; NULL keeps the saved ids). The one decoder of a saved HCCT: a target's
 * restore and a time range's window summaries. 0, -EBADMSG for a node whose parent does not
 * come before it, or -ENOMEM. */
int saved_hcct_tree(Kprof__SavedHcctNode *const *v, size_t n, uint64_t n_samples,
		    const uint32_t *map, struct hcct_tree **ret);

/* The encoders of a profile's parts, for a target's kept profile and a time window's file alike.
 * saved_functions: functions ids[0..n) of p (ids NULL: 0..n-1) into fv[0..n), pointed at by
 * fp[0..n); their strings stay p's. saved_stack: one stack (its ids stay the caller's). */
void saved_functions(const struct profile *p, const uint32_t *ids, size_t n,
		     Kprof__SavedFunction *fv, Kprof__SavedFunction **fp);
void saved_stack(Kprof__SavedStack *s, uint32_t tid, const uint32_t *ids, size_t n,
		 uint64_t count);

#endif
