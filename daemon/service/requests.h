/* SPDX-License-Identifier: GPL-2.0-only */
/* requests.h: the request handlers behind the control socket (requests.c). */
#ifndef KPROF_DAEMON_REQUESTS_H
#define KPROF_DAEMON_REQUESTS_H

struct manager;
struct requests;
struct watch;

/* Listen (transport_new on the manager's loop and settings) and answer requests about m's
 * targets and ws's watch rules (NULL: none) until requests_free. */
int requests_new(struct manager *m, struct watch *ws, struct requests **ret);
void requests_free(struct requests *rq);

#endif
