/* SPDX-License-Identifier: GPL-2.0-only */
/* group.h: the profiles of a watched cgroup's or unit's processes, or of attach --all's, as one
 * (group.c). */
#ifndef KPROF_CLI_GROUP_H
#define KPROF_CLI_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/merge.h"
#include "proto/kprof.pb-c.h"

#define GROUP_MAX_PROCS 1024 /* processes merged */

struct group {
	Kprof__Reply *reps[GROUP_MAX_PROCS];
	Kprof__SavedProfile *sps[GROUP_MAX_PROCS];
	size_t n;		 /* processes merged */
	size_t left_out;	 /* beyond GROUP_MAX_PROCS */
	size_t gone;		 /* listed, then dropped (max_kept) before it was fetched */
	size_t no_window;	 /* without a time window in the range */
	char no_window_why[256]; /* kprofd's reason for the first of them */
	struct merged m;
	const Kprof__SavedProfile *sp; /* the merged profile (NULL if none) */
};

/* As a name: the processes system-wide mode (attach --all) made targets (Target.all). */
extern const char group_all[];

/* Every kept or live profile kprofd has of the processes watch name attached (name as given to
 * attach --cgroup/--unit: a unit, or a cgroup's path, absolute or relative to the cgroup2
 * mount), with only the time windows in [since_ns, until_ns) of each (both 0: the whole
 * profiles), fetched with call_raw (which returns kprofd's errors unprinted) and merged. A
 * process without a window in the range, or whose kept profile was dropped after the list was
 * read (system-wide mode's storms), is left out and counted. 0, an exit code, or
 * KPROFCTL_EXIT_ERROR with a message when there is none. */
int group_load_range(int (*call_raw)(const Kprof__Request *req, Kprof__Reply **rep),
		     const char *name, uint64_t since_ns, uint64_t until_ns, struct group *g);
void group_free(struct group *g);
/* req as an export request er of pid's session in [since_ns, until_ns) (both 0: all of it). */
void group_export_request(Kprof__Request *req, Kprof__ExportRequest *er, uint32_t pid,
			  uint32_t session, uint64_t since_ns, uint64_t until_ns);

#endif
