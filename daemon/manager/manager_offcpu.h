/* SPDX-License-Identifier: GPL-2.0-only */
/* manager_offcpu.h: off-CPU time for the targets that ask (manager_offcpu.c). */
#ifndef KPROF_DAEMON_MANAGER_OFFCPU_H
#define KPROF_DAEMON_MANAGER_OFFCPU_H

#include <stdint.h>
#include <sys/types.h>

struct manager;
struct target;

/* t asks for off-CPU time: the sched_switch program attached if it is not yet. 0, or a
 * negative errno with errbuf said. */
int manager_offcpu_start(struct manager *m, struct target *t, char *errbuf, size_t errlen);
/* t stopped sampling: its threads off CPU now are forgotten, and the program detached when no
 * attached target asks any more. Its sums still in the map are drained later. */
void manager_offcpu_stop(struct manager *m, struct target *t);
/* System-wide mode asks for off-CPU time (on), or no more: the program stays attached while it
 * does, and waiting processes that are no target are reported (KP_SF_WAITER). 0, or a negative
 * errno with errbuf said. */
int manager_offcpu_all(struct manager *m, bool on, char *errbuf, size_t errlen);
/* kprofd stops: the maps' reader freed. */
void manager_offcpu_free(struct manager *m);
/* The sums in the map, to their targets' off-CPU profiles: find gives the target of a pid
 * (manager_find), dirty is told of an ended one that changed (manager_mark_dirty). */
typedef struct target *(*manager_offcpu_find_fn)(struct manager *m, pid_t pid);
typedef void (*manager_offcpu_dirty_fn)(struct manager *m, struct target *t);
void manager_offcpu_drain(struct manager *m, manager_offcpu_find_fn find,
			  manager_offcpu_dirty_fn dirty);

/* What status says of it. */
struct manager_offcpu_status {
	const char *program; /* "tp_btf/sched_switch", "raw_tp/sched_switch", or "" when off */
	unsigned targets;    /* attached targets with off-CPU time */
	uint64_t runs, switches, intervals, lost, lost_ns, no_stack, stacks_gone, unknown;
	uint64_t callers_found, callers_lost, rules; /* of frameless user leaves */
	uint64_t stacks_freed, sweeps;		     /* the stack map's frees */
};
void manager_offcpu_status(const struct manager *m, struct manager_offcpu_status *st);

#endif
