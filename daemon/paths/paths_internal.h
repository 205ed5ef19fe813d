/* SPDX-License-Identifier: GPL-2.0-only */
/* paths_internal.h: what the parts of the path tracer call in one another and nothing else does:
 * paths_uprobe.c (the uprobe side's BPF state), paths.c (a trace's start, stop and lifetime) and
 * paths_events.c (a running trace's events). Each part calls only those before it, in that
 * order, so the parts form no cycle. The tracer's interface to the rest of kprofd is paths.h. */
#ifndef KPROF_DAEMON_PATHS_INTERNAL_H
#define KPROF_DAEMON_PATHS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kprof/cfg.h"
#include "paths/paths.h"
#include "kernel/probes.h"

struct bpf_map;

/* paths_uprobe.c */

/* Read len bytes of code at start of process pid into code, checked against the mapped file
 * of site (another probe's int3 is replaced by the file's byte). */
int paths_read_code(pid_t pid, const struct uprobe_site *site, uint64_t start, uint8_t *code,
		    size_t len, const char *name, char *err, size_t errlen);
int paths_put_edge(struct bpf_map *map, uint32_t id, uint32_t from, uint32_t to, uint32_t act,
		   uint32_t flags, uint64_t add, uint64_t reset);
/* The edge table entries of trace id: an action per edge of g (or only the edges, for an edge
 * profile) and the exit value of every block that can leave. */
int paths_fill_edges(struct bpf_map *map, uint32_t id, const struct cfg *g, bool edges);

/* What paths_bpf_cleanup deletes (malloc'd; it frees it too). */
struct paths_cleanup {
	struct bpf_map *edges, *threads;
	uint32_t id;
	pid_t pid;
};

/* After the probes are gone: the trace's edges and the target's thread states. */
void paths_bpf_cleanup(void *arg);
/* A uprobe on every block leader of the traced function (tr->links). */
int paths_attach_probes(struct path_trace *tr, const struct uprobe_site *site, char *err,
			size_t errlen);

/* The uprobes off for a while (the budget): the start transition first, so that no activation
 * begins on a half-removed set, then the probes (tr->removal: the kernel takes about a second,
 * trapping meanwhile). */
void paths_probes_off(struct path_trace *tr);
/* And back: -EBUSY (err untouched) while the last removal runs; the threads' BPF states cleared
 * first (no path spans the time off), the start transition last. On another error, err says
 * why and what went in is off again. */
int paths_probes_on(struct path_trace *tr, char *err, size_t errlen);

/* paths.c */

void paths_spp_stack_release(struct spp_stack *st);
/* The branch tracer's counts into the trace's. */
void paths_hw_sync(struct path_trace *tr);

#endif
