/* SPDX-License-Identifier: GPL-2.0-only */
/* requests_access.h: replies, kernel views, rights and the target a request names, for the parts
 * of the request side only (requests_access.c). */
#ifndef KPROF_DAEMON_REQUESTS_ACCESS_H
#define KPROF_DAEMON_REQUESTS_ACCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/kprof.pb-c.h"

struct client;
struct target;

/* Queue rep for cl. */
void requests_queue(struct client *cl, Kprof__Reply *rep);
/* Queue an error reply (a negative errno and a message) for cl. */
void requests_error(struct client *cl, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The kernel view (PROFILE_VIEW_*) cl gets: what the kernel would show it. */
unsigned requests_view(const struct client *cl);
/* May cl attach to or detach a process of uid owner? */
bool requests_allowed(const struct client *cl, uid_t owner);
/* May cl read the profile of a process of uid owner? */
bool requests_may_read(const struct client *cl, uid_t owner);
/* requests_may_read for manager_find_for (arg: the client). */
bool requests_visible_to(const struct target *t, void *arg);
/* The place of t among the sessions of its pid that cl may read (from 1, oldest first), and
 * (*n) how many there are. */
uint32_t requests_session_of(const struct client *cl, const struct target *t, uint32_t *n);
/* A target's facts as cl sees them: with its session number among those cl may read. */
void requests_fill_target(const struct client *cl, const struct target *t, Kprof__Target *pb);
/* The target of a read of one session of pid (0: the attached or newest one), or NULL after
 * queueing the error reply. */
struct target *requests_session(struct client *cl, uint32_t pid, uint32_t session);
/* The target of a read (write = false) or detach request, or NULL after queueing the error
 * reply: the attached one or the newest kept one that cl may read, else any, for the error. */
struct target *requests_target(struct client *cl, uint32_t pid, bool write);
/* The process pid may be attached by cl: 0, or an error reply queued. */
int requests_check_attachable(struct client *cl, uint32_t pid);

/* Source lines for a reply: the cache's position when the request first came (lines answered
 * later are not the cache's), and whether to queue what the cache lacks (not when handled
 * again after the wait). */
uint64_t requests_lines_since(struct client *cl);
/* pending addresses queued by the reply being built: true when the handler should not reply but
 * let the dispatch hold the request until they are resolved (requests.c). */
bool requests_want_lines(struct client *cl, int pending);

#endif
