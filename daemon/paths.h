/* SPDX-License-Identifier: GPL-2.0-only */
/* paths.h: what daemon/paths.c (the tracer) and daemon/paths_reply.c (its results) share.
 * The first part is the interface to the rest of kprofd, the rest is private to the tracer.
 */
#ifndef KPROF_DAEMON_PATHS_H
#define KPROF_DAEMON_PATHS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

#include "kprof/abi.h"
#include "kprof/cfg.h"
#include "kprof/ksf.h"
#include "proto/kprof.pb-c.h"
#include "target.h"

struct path_trace;
/* A PathsReply and the arrays it points into. */
struct paths_msg {
	Kprof__PathsReply r;
	Kprof__PathBlock *bv, **bp;
	Kprof__PathInfo *pv, **pp;
	Kprof__PathStep *sv, **sp;
	Kprof__PathSeq *qv, **qp;
	Kprof__EdgeCount *ev, **ep;
	uint64_t *ids, *levels;
};
/* Start tracing the paths of one JIT function of an attached target; err says why not. */
int paths_start(struct target *t, const Kprof__PathsRequest *req, char *err, size_t errlen);
/* End the running trace (no-op if none), keeping its results; reason goes in the reply. */
void paths_stop(struct target *t, const char *reason);
bool paths_tracing(const struct target *t);
/* Is the trace (running or last) of this function (a name, or an address inside it)? */
bool paths_is_function(const struct target *t, const char *function);
void paths_on_event(struct target *t, const struct kp_path *ev);
/* The trace's results, at most top sequences and paths of each kind (0: all); brief: the state
 * and counters only (no k-IPF is built). -ENODATA if the target has no trace. The caller fills
 * r.target. */
int paths_reply(const struct target *t, uint32_t top, bool brief, struct paths_msg *pm);
void paths_msg_release(struct paths_msg *pm);
/* A kept target's last trace, from its saved profile. */
int paths_restore(struct target *t, const Kprof__PathsReply *saved);
void paths_free(struct target *t);

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
