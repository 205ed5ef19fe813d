/* SPDX-License-Identifier: GPL-2.0-only */
/* paths.h: what daemon/paths.c (the tracer) and daemon/paths_reply.c (its results) share.
 * Private to the daemon; the interface to the rest of kprofd is in kprofd.h.
 */
#ifndef KPROF_DAEMON_PATHS_H
#define KPROF_DAEMON_PATHS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kprof/cfg.h"
#include "kprof/ksf.h"
#include "kprofd.h"

#define PATHS_MAX_BLOCKS 1024 /* uprobes per traced function */
#define PATHS_MAX_CODE (1u << 20)
#define PATHS_THREAD_SLOTS 4096 /* open addressing; at most half used */
#define PATHS_MAX_DURATION_MS (24u * 3600 * 1000)

struct path_thread {
	uint32_t tid; /* 0: free */
	uint32_t seq;
	bool desync;
	struct ksf_ctx ctx;
};

struct cpu_times {
	uint64_t user, sys; /* clock ticks */
	bool ok;
};

struct path_trace {
	struct target *t;
	uint32_t id;
	char *func;
	uint64_t start, size;
	unsigned k;
	uint64_t budget;
	unsigned duration_ms;
	struct cfg *cfg;
	struct ksf *ksf;
	bool tracing;
	char reason[64];
	struct bpf_link **links;
	size_t nlinks, probes;
	struct removal *removal; /* the probes' removal, running or done */
	struct code_file file;	 /* the code's file (removals of its probes block new ones) */
	sd_event_source *timer;
	struct path_thread *threads;
	size_t nthreads;
	uint64_t events, activations, path_events, aborted, resyncs, lost_threads, dropped;
	uint64_t started_ns, stopped_ns; /* CLOCK_MONOTONIC */
	uint64_t ctr0[KP_CTR_NR], ctr1[KP_CTR_NR];
	struct cpu_times cpu_attach, cpu_start, cpu_end;
	uint64_t attach_wall_ns; /* when cpu_attach was read (CLOCK_MONOTONIC) */
	/* Edge profile (the function has too many paths to number): counts read from the BPF
	 * edge table, per CFG edge and per block exit; no ksf. */
	bool edges;
	uint64_t *edge_counts, *exit_counts, edge_activations;
	/* A trace restored from a saved profile: its final reply (no cfg, no ksf). */
	Kprof__PathsReply *saved;
};

/* The target's user and system CPU times (ok false if unreadable). */
struct cpu_times read_cpu(pid_t pid);
/* Edge profile: read the counts of a running trace from the BPF edge table. */
void paths_read_edges(struct path_trace *tr);
/* Free a trace (joining its probe removal first). */
void trace_free(struct path_trace *tr);

#endif
