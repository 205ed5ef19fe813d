/* SPDX-License-Identifier: GPL-2.0-only */
/* live.h: the data of kprofctl top (live.c). */
#ifndef KPROF_DAEMON_LIVE_H
#define KPROF_DAEMON_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire/drift_reply.h"
#include "proto/kprof.pb-c.h"

struct manager;

struct live;
struct live_msg {
	Kprof__UpdateReply up;
	Kprof__TopTarget *tv, **tp;
	Kprof__Target *tpb;
	Kprof__TopEntry **ev;
	size_t n;
	struct drift_events_msg *dv; /* per target: its newest drifts */
};
/* -E2BIG (too many pids), -ERANGE (interval), -ENOMEM. */
int live_new(struct manager *m, const Kprof__SubscribeRequest *req, uid_t uid, bool reader,
	     struct live **ret);
void live_free(struct live *lv);
unsigned live_interval_ms(const struct live *lv);
/* The counts now of every watched target: the next update's deltas start here. 0 or -ENOMEM. */
int live_baseline(struct live *lv, unsigned view);
/* The next update (targets and deltas; the caller adds the status), kernel frames seen through
 * view (PROFILE_VIEW_*: the reader's policy, decided by the caller). */
int live_update(struct live *lv, unsigned view, struct live_msg *msg);
void live_msg_release(struct live_msg *msg);

#endif
