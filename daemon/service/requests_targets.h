/* SPDX-License-Identifier: GPL-2.0-only */
/* requests_targets.h: attach, detach, list, status and watch rules, for requests.c's dispatch
 * and the live view (requests_targets.c). */
#ifndef KPROF_DAEMON_REQUESTS_TARGETS_H
#define KPROF_DAEMON_REQUESTS_TARGETS_H

#include <stdint.h>

#include "proto/kprof.pb-c.h"
#include "manager/manager.h"

struct client;
struct requests;

void requests_attach(struct client *cl, const Kprof__AttachRequest *req);
void requests_detach(struct client *cl, const Kprof__DetachRequest *req);
void requests_list(struct client *cl, const Kprof__ListRequest *req);
/* The daemon's status; *drops (malloc'd) and freqs back its arrays. */
int requests_fill_status(struct requests *rq, Kprof__StatusReply *sr, uint64_t **drops,
			 unsigned freqs[MANAGER_MAX_FREQS]);
void requests_status(struct client *cl);
/* kprofctl watch add|remove|list: the reply lists the rules the client may see. */
void requests_watch_rules(struct client *cl, const Kprof__WatchRequest *req);

#endif
