/* SPDX-License-Identifier: GPL-2.0-only */
/* paths_uprobe.h: what the rest of kprofd reads of the path tracer's uprobe side
 * (paths_uprobe.c); what paths.c calls in it is in paths_internal.h. Included by paths.h. */
#ifndef KPROF_DAEMON_PATHS_UPROBE_H
#define KPROF_DAEMON_PATHS_UPROBE_H

struct path_trace;

/* Edge profile: read the counts of a running trace from the BPF edge table. */
void paths_read_edges(struct path_trace *tr);

#endif
