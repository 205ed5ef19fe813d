/* SPDX-License-Identifier: GPL-2.0-only */
/* manager_watch.h: attach --cgroup/--unit, watches of a cgroup or a unit (manager_watch.c).
 * struct cgwatch is manager.h's. Included by manager.h. */
#ifndef KPROF_DAEMON_MANAGER_WATCH_H
#define KPROF_DAEMON_MANAGER_WATCH_H

#include <stddef.h>

struct attach_opts;
struct cgwatch;
struct manager;

/* Watch a cgroup (path under /sys/fs/cgroup) or a systemd unit (exactly one of the two): its
 * processes are attached now (*attached, *refused count them) and those that enter it later as
 * they do. errbuf says why not. A watch rule's (o->rule) that is not there yet waits for it. */
int manager_watch(struct manager *m, const char *cgroup, const char *unit,
		  const struct attach_opts *o, struct cgwatch **ret, unsigned *attached,
		  unsigned *refused, char *errbuf, size_t errlen);
/* The watch named name (as given to manager_watch, or its cgroup's path), or NULL. */
struct cgwatch *manager_find_watch(struct manager *m, const char *name);
/* Stop watching; its attached members are detached (profiles kept): how many. */
unsigned manager_unwatch(struct manager *m, struct cgwatch *w);

#endif
