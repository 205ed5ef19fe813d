/* SPDX-License-Identifier: GPL-2.0-only */
/* requests_live.h: a client's live subscription (requests_live.c). */
#ifndef KPROF_DAEMON_REQUESTS_LIVE_H
#define KPROF_DAEMON_REQUESTS_LIVE_H

#include "proto/kprof.pb-c.h"

struct client;

/* End cl's subscription, if any (a new one, or the client gone). */
void requests_live_stop(struct client *cl);
void requests_subscribe(struct client *cl, const Kprof__SubscribeRequest *req);

#endif
