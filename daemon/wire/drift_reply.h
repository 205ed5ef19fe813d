/* SPDX-License-Identifier: GPL-2.0-only */
/* drift_reply.h: a target's profile drift as kprof.proto messages (drift_reply.c). */
#ifndef KPROF_DAEMON_DRIFT_REPLY_H
#define KPROF_DAEMON_DRIFT_REPLY_H

#include <stddef.h>

#include "proto/kprof.pb-c.h"
#include "target/target.h"

#define DRIFT_REPLY_MAX_KEYS 16

/* Events of one target (both detectors, by time); strings point into it or into this struct
 * (use before t changes). */
struct drift_events_msg {
	Kprof__DriftEvent *ev, **ep;
	char (*names)[3][128]; /* gained, lost, function */
	size_t n;
};
/* Its newest max events (at most all kept), oldest first. 0 or -ENOMEM. */
int drift_events_build(const struct target *t, size_t max, struct drift_events_msg *m);
void drift_events_release(struct drift_events_msg *m);

struct drift_reply_msg {
	Kprof__DriftReply r;
	struct drift_events_msg events;
	Kprof__DriftFunction *fv, **fp;
	char (*fnames)[160];
	Kprof__DriftKey *kv, **kp;
	char (*keys)[128];
	Kprof__DriftReply *saved; /* a restored result (t->drift_kept) that r points into */
};
/* The reply for t (t->drift set), keys per function (1..DRIFT_REPLY_MAX_KEYS). 0 or -ENOMEM. */
int drift_reply_build(const struct target *t, unsigned keys, struct drift_reply_msg *m);
void drift_reply_release(struct drift_reply_msg *m);

/* The result kept with t's profile when it is saved: its detectors' reply with
 * SAVED_MAX_DRIFT_KEYS keys a function, cut to the first SAVED_MAX_DRIFT_FUNCS functions and the
 * newest SAVED_MAX_DRIFT_EVENTS drifts (what is cut is counted in it), marked kept once t has
 * ended. 0 or -ENOMEM. */
int drift_reply_keep(const struct target *t, struct drift_reply_msg *m);
/* The reply to `kprofctl drift` (keys per function, 1..DRIFT_REPLY_MAX_KEYS): live while t is
 * attached; for an ended target the kept result (kept set, ended when and why), from its
 * detectors if they are still there, else from the one packed at its end (drift_reply_end) or
 * restored with its profile (kept_restored). 0,
 * -ENODATA (an ended target with nothing kept: an older kprofd's profile, or drift was off),
 * -EBADMSG (a kept result that does not decode), -ENOMEM. */
int drift_reply_answer(const struct target *t, unsigned keys, struct drift_reply_msg *m);
/* t ended: its detectors' result packed as it is saved (drift_reply_keep) into t->drift_kept,
 * and the detectors freed (their windows of keys are no use once no sample comes); the answers
 * above are the same from then on. 0 (also with no detectors, or a result already kept) or
 * -ENOMEM (the detectors are left as they were). */
int drift_reply_end(struct target *t);

#endif
