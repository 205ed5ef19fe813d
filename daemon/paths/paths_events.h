/* SPDX-License-Identifier: GPL-2.0-only */
/* paths_events.h: the events of a running path trace, from the manager's ring buffer
 * (paths_events.c). */
#ifndef KPROF_DAEMON_PATHS_EVENTS_H
#define KPROF_DAEMON_PATHS_EVENTS_H

#include "kprof/abi.h"

struct path_trace;

/* An event of the uprobe tracer (kp_path_block); NULL or another trace's: ignored. */
void paths_on_event(struct path_trace *tr, const struct kp_path *ev);
/* A hit of the branch tracer's breakpoints (code in anonymous memory). */
void paths_on_hwbp(struct path_trace *tr, const struct kp_hwbp *ev);

#endif
