/* SPDX-License-Identifier: GPL-2.0-only */
/* paths.h: the path tracer (paths.c), and what its wire mapping (paths_reply.c) reads of it.
 * The first part is the interface to the rest of kprofd, the rest is private to the tracer.
 * paths_uprobe.h is included here; paths_events.h, the events of a running trace, is not (it is
 * the part above paths.c).
 */
#ifndef KPROF_DAEMON_PATHS_H
#define KPROF_DAEMON_PATHS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include <systemd/sd-event.h>

#include "kprof/abi.h"
#include "kprof/cfg.h"
#include "kprof/ksf.h"
#include "kprof/ksf_ipf.h"
#include "kprof/spp.h"
#include "kprof/tidtab.h"
#include "kernel/probes.h"
#include "paths/paths_uprobe.h"

struct path_trace;

/* What a trace is asked for (0: the defaults). */
struct paths_opts {
	const char *function; /* a JIT function's name, or an address inside it (hex) */
	unsigned k;	      /* iterations per sequence, 1-KSF_K_MAX (4) */
	unsigned duration_ms; /* 10000 */
	uint64_t budget;      /* events; 0: no budget */
	bool force;	      /* probe even where the code file is also mapped writable */
	bool structural;      /* structural path profiling alongside (spp.h) */
	uint64_t spp_budget;  /* its budget in local paths (0: PATHS_SPP_BUDGET) */
	uint64_t spp_timeout; /* activations a graph waits for its share (0: forever) */
	double max_slowdown;  /* stop above this slowdown (pcost.h); 0: env's default; < 0: none */
};

/* What the tracer needs of the daemon, copied at the start of a trace. */
struct paths_env {
	struct loader *loader;
	sd_event *event;
	unsigned max_paths;	/* Ball-Larus paths per function before an edge profile */
	unsigned ksf_max_nodes; /* k-SF cap */
	double max_slowdown;	/* a trace's budget unless its request gives one; 0: none */
	/* The target's samples so far (*all) and those whose leaf is in [start, start + size)
	 * (*in); hot: the JIT function with the most leaf samples, for a message. NULL: no
	 * sampler to ask. The evidence that traced code does not run when no probe could show it
	 * (breakpoints turned over loops, structure graphs one at a time). */
	void (*code_samples)(void *ctx, uint64_t start, uint64_t size, uint64_t *all, uint64_t *in,
			     char *hot, size_t hotlen);
	/* The target's samples so far (*all) and the leaf samples (*self) of function *id; with
	 * *id PATHS_NO_REF, the function with the most outside [start, start + size) (not the
	 * probes') is chosen first (none: *id stays PATHS_NO_REF). The target's progress, for a
	 * hit's cost measured in it (pcost_ref_hit_ns). NULL: no sampler to ask. */
	void (*ref_samples)(void *ctx, uint64_t start, uint64_t size, uint32_t *id, uint64_t *self,
			    uint64_t *all, char *name, size_t namelen);
	void *ctx;
};

struct tsym;
/* Start tracing the paths of one JIT function of process pid (symbols sym); the new trace
 * replaces *slot (the last one, kept until then). err says why not. */
int paths_start(struct path_trace **slot, const struct paths_env *env, pid_t pid, struct tsym *sym,
		const struct paths_opts *o, char *err, size_t errlen);
/* End the running trace (no-op if none or NULL), keeping its results; reason goes in the
 * reply. */
void paths_stop(struct path_trace *tr, const char *reason);
bool paths_tracing(const struct path_trace *tr);
/* Is the trace (running or last) of this function (a name, or an address inside it)? */
bool paths_is_function(const struct path_trace *tr, const char *function);
/* Stop and free (NULL: nothing). */
void paths_free(struct path_trace *tr);

#define PATHS_NO_REF UINT32_MAX
#define PATHS_MAX_BLOCKS 1024 /* uprobes per traced function */
#define PATHS_MAX_CODE (1u << 20)
#define PATHS_THREAD_SLOTS 4096 /* open addressing; at most half used */
#define PATHS_MAX_DURATION_MS (24u * 3600 * 1000)
#define PATHS_MIN_CPU_MS 500	    /* a slowdown needs this much of the target's CPU time traced */
#define PATHS_COST_CHECK_MS 50	    /* the budget kept this often while the probes are in, */
#define PATHS_COST_OFF_CHECK_MS 100 /* and this often while the budget holds them off */
#define PATHS_NO_HIT_MS 1000	    /* a trace with no hit this long after its start stops, */
#define PATHS_NO_HIT_CPU_MS 100	    /* if the target ran this much meanwhile */
#define PATHS_NO_HIT_SAMPLES                                                                       \
	50		      /* ... or, when probes cannot tell, none of this many samples        \
			       * of the target since the start was in the traced code */
#define PATHS_SAME_NAME_MAX 8 /* copies of one name tried on anonymous code (V8's OSR code) */

#define PATHS_SPP_BUDGET 1000
#define PATHS_SPP_MAX_BUDGET 100000000
#define PATHS_SPP_MAX_DEPTH 64 /* activations of one thread followed by SPP */

/* One thread's SPP activations: two spp_acts each (the budgeted profile, the complete one). */
struct spp_stack {
	struct spp_act *a;
	uint32_t depth, dead;
};

struct path_thread {
	uint32_t tid; /* 0: free */
	uint32_t seq;
	bool desync;
	struct ksf_ctx ctx;
	struct spp_stack spp;
};

struct cpu_times {
	uint64_t user, sys; /* clock ticks */
	bool ok;
};

struct path_trace {
	pid_t pid;
	struct paths_env env; /* given at creation */
	uint32_t id;
	char *func;
	uint64_t start, size;
	unsigned k;
	uint64_t budget;
	unsigned duration_ms;
	struct cfg *cfg;
	struct ksf *ksf;
	bool tracing;
	char reason[256];
	struct bpf_link **links;
	size_t nlinks, probes;
	struct removal *removal; /* the probes' removal, running or done */
	struct code_file file;	 /* the code's file (removals of its probes block new ones) */
	sd_event_source *timer;
	struct path_thread *threads; /* PATHS_THREAD_SLOTS, by their slot in tids */
	struct tidtab tids;
	uint64_t events, activations, path_events, aborted, resyncs, lost_threads, dropped;
	uint64_t started_ns, stopped_ns; /* CLOCK_MONOTONIC */
	uint64_t ctr0[KP_CTR_NR], ctr1[KP_CTR_NR];
	struct cpu_times cpu_attach, cpu_start, cpu_end;
	uint64_t hit_ns;     /* one probe hit's CPU time on this host (probecost.h); 0: unknown */
	double max_slowdown; /* 0: no limit */
	bool max_slowdown_default; /* env's, not the request's */
	bool hit_seen;		   /* a probe hit since the attach */
	bool nohit_judged; /* the uprobes' first second was judged (on_cost_check): never again */
	sd_event_source *cost_timer; /* keeps the budget (and checks for hits) */
	/* The budget, kept by taking the probes off and putting them back (pcost_budget): the
	 * target's CPU clock at the attach, at the start of the stretch of probes in now, and at
	 * the last reading (at the end once stopped); the hit counter at the stretch's start; the
	 * wall time the probes went in (0: off) and were in before; the times the budget took
	 * them off. Uprobes keep trapping about a second after they go off (the kernel removes
	 * them), with no hit counted: their hits are estimated (hidden_hits) at the stretch's
	 * rate per CPU ns while their removal runs. */
	struct uprobe_site site; /* where the uprobes go (to put them back) */
	bool off;		 /* the budget took the probes off */
	uint64_t cpu0_ns, stretch_cpu_ns, cpu_last_ns, stretch_hits;
	uint64_t on_since_ns, on_ns, budget_offs;
	double hidden_hits, linger_rate;
	uint64_t linger_cpu_ns;
	bool lingering;
	uint64_t pay_ns;	 /* off: the target's CPU time to run before they may go back in */
	uint64_t attach_wall_ns; /* when cpu_attach was read (CLOCK_MONOTONIC) */
	uint64_t samples0, samples_in0; /* env.code_samples at the attach */
	/* env.ref_samples: the reference function, its samples and the target's at the attach
	 * (the share before), and at the stop (the share while traced) */
	uint32_t ref_id;
	char ref_name[96];
	uint64_t ref0, ref_all0, ref1, ref_all1;
	/* Edge profile (the function has too many paths to number): counts read from the BPF
	 * edge table, per CFG edge and per block exit; no ksf. */
	bool edges;
	uint64_t *edge_counts, *exit_counts, edge_activations;
	/* Events: per block, EV_NR counts (events.h); NULL for an edge profile. */
	uint32_t *blockev;
	/* Structural path profiling (opts.structural): the budgeted profile, the complete one, and
	 * flat Ball-Larus profiles with the same budget and without one; a decoding scratch. */
	struct spp *spp, *spp_full;
	struct spp_flat *flat, *flat_full;
	uint64_t spp_budget, spp_timeout, spp_untracked;
	struct cfg_step *steps;
	/* A trace restored from a saved profile: its final reply (no cfg, no ksf), held for
	 * paths_reply.c, which made it and gave the function that frees it. */
	void *saved;
	void (*saved_free)(void *saved);
	/* Code in anonymous memory: hardware breakpoints on its loops' branches (hwpaths.c)
	 * instead of uprobes; NULL otherwise. */
	struct hwpaths *hw;
};

/* The target's user and system CPU times (ok false if unreadable). */
struct cpu_times paths_read_cpu(pid_t pid);
/* The cost of one hit over the trace so far (cpu_ns on the target's CPU clock since the
 * attach, hits counted since): measured in the target from its samples where they can tell it
 * (pcost_ref_hit_ns; *measured true), else the calibrated one (hit_ns). */
uint64_t paths_hit_ns(const struct path_trace *tr, uint64_t cpu_ns, uint64_t hits, bool *measured);
/* The target's slowdown over the trace, from its attach to cpu_ns on the target's CPU clock
 * (hits: probe hits counted since; the uprobes' estimated while their removal ran are added):
 * pcost_slowdown_ns with paths_hit_ns; 0 under min_cpu_ms of CPU time or without a cost. */
double paths_slowdown(const struct path_trace *tr, uint64_t cpu_ns, uint64_t hits,
		      unsigned min_cpu_ms);
/* The target's CPU clock (ns) now while tracing (the last reading if it is gone), at the end
 * once stopped. */
uint64_t paths_cpu_ns(const struct path_trace *tr);
/* The part of the time traced that the probes were in (the budget's duty), 0 to 1. */
double paths_duty(const struct path_trace *tr);
/* Is addr a hardware breakpoint of tr's now (a sample there is the cost of its trap)? */
bool paths_breakpoint_at(const struct path_trace *tr, uint64_t addr);
/* Free a trace (joining its probe removal first). */
void paths_trace_free(struct path_trace *tr);

#endif
