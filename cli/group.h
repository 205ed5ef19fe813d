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
	size_t n;	 /* processes merged */
	size_t left_out; /* beyond GROUP_MAX_PROCS */
	struct merged m;
	const Kprof__SavedProfile *sp; /* the merged profile (NULL if none) */
};

/* As a name: the processes system-wide mode (attach --all) made targets (Target.all). */
extern const char group_all[];

/* Every kept or live profile kprofd has of the processes watch name attached (name as given to
 * attach --cgroup/--unit: a unit, or a cgroup's path, absolute or relative to the cgroup2
 * mount), fetched with call (which prints kprofd's errors) and merged. 0, an exit code, or
 * KPROFCTL_EXIT_ERROR with a message when there is none. */
int group_load(int (*call)(const Kprof__Request *req, Kprof__Reply **rep), const char *name,
	       struct group *g);
/* The same with only the time windows in [since_ns, until_ns) of each process (both 0: the
 * whole profiles); a process without a window in the range is left out. */
int group_load_range(int (*call)(const Kprof__Request *req, Kprof__Reply **rep), const char *name,
		     uint64_t since_ns, uint64_t until_ns, struct group *g);
void group_free(struct group *g);

#endif
