/* SPDX-License-Identifier: GPL-2.0-only */
/* target.h: one profiled process (target.c): identity, state, symbols, profile, HCCT. */
#ifndef KPROF_DAEMON_TARGET_H
#define KPROF_DAEMON_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include <systemd/sd-event.h>

#include "exact/exact.h"
#include "paths/paths.h"
#include "symbols/srclines.h"
#include "symbols/symbolize.h"
#include "kernel/sampler.h"
#include "kprof/abi.h"
#include "kprof/annot.h"
#include "kprof/csite.h"
#include "kprof/hcct.h"
#include "kprof/maptab.h"
#include "kprof/profile.h"
#include "kprof/tnames.h"

struct annotate_queue;
struct config;
struct drift;
struct jvmattach_ctx;
struct loader;
struct path_trace;
struct offcpu;

enum target_state {
	TARGET_ATTACHED = 1,
	TARGET_EXITED = 2,
	TARGET_DETACHED = 3,
};

/* Call sites kept per target (csite.h): as many as a saved profile holds (SAVED_MAX_CALL_SITES). */
#define TARGET_MAX_CALL_SITES 65536

/* The frame under which samples taken inside kprof's own probes are counted (module "[kprof]"). */
#define KPROF_PROBE_NAME "[kprof probes]"
#define TARGET_RECENT_LEAVES 256 /* samples whose leaves tell which copy runs now */

struct frame_memo {
	uint64_t addr[KP_MAX_STACK]; /* 0: nothing memoized at this depth */
	uint32_t id[KP_MAX_STACK];
	uint32_t len; /* user frames of the last sample: deeper entries are older ones */
};

/* What a target needs of the daemon, given at creation; the manager's, and alive as long as the
 * manager (settings change in place on reload). */
struct target_env {
	const struct config *conf;
	struct symbolizer *sym;
	struct loader *loader;
	sd_event *event;
	struct jvmattach_ctx *jvm; /* asking HotSpot JVMs for their perf maps (jvmattach.c) */
	struct srclines *lines;	   /* source lines: JIT code's kept at the symbols' drop */
	struct codeshare *code;	   /* copies of file-backed code, shared by a owner's targets */
};

struct target {
	/* The manager's list (manager_targets.c's alone: others walk it with
	 * manager_targets_first/next). A dropped target stays linked, skipped, until the loop
	 * frees it, so that a walk or a caller holding it never reads freed memory. */
	struct target *list_next;
	struct target *hash_next;	    /* the chain of its PID's bucket (manager_find) */
	struct target *att_next, *att_prev; /* the attached ones' list, while attached */
	struct target *recent_next;	    /* ended, its symbols not dropped yet */
	bool recent;
	/* Ended, with samples its windows do not have yet (manager_window_pending). */
	struct target *win_next, **win_pprev;
	/* Ended and dirty: on the list manager_save_dirty walks (manager_mark_dirty). */
	struct target *dirty_next, **dirty_pprev;
	bool list_dropped;
	bool ending; /* manager_end_target runs: a drain inside it does not end it again */
	/* Samples kept to be added in a row, a target at a time (manager.c, "Samples added a
	 * target at a time"): on the manager's list while it holds some. Their records as the
	 * ring buffer held them, each padded to 8 bytes. */
	struct target *batch_next, **batch_pprev;
	uint8_t *batch_buf;
	size_t batch_len, batch_cap;
	unsigned batch_n;
	uint64_t batch_since_ns; /* the first one's time (CLOCK_MONOTONIC) */
	/* Attached by a client when kprofd stopped: attached again at the next start if the
	 * process still runs (manager_resume). resumes: times that happened to this profile;
	 * resume_note: why a kept one was not. duration_left: of a --duration, in seconds. */
	bool resume;
	bool resume_off_cpu; /* a resume record (no profile) of a target attached with --off-cpu */
	unsigned resumes, duration_left;
	char resume_note[96];
	const struct target_env *env;
	pid_t pid;
	uint64_t start_ticks;	/* clock ticks after boot: pid and start name the process */
	uint64_t alive_next_ns; /* CLOCK_MONOTONIC: its /proc read for a lost exit is due */
	uid_t uid; /* who may profile it: the process's uid, or 0 (procfs_ident_owner) */
	uid_t proc_uid, proc_euid; /* the process's real and effective uids at attach */
	/* The last full read of its credentials (manager_recheck): the owner of /proc/PID/stat
	 * and the user namespace then, and whether only a full read sees a change (cred_always);
	 * none yet: !cred_known. */
	uid_t cred_stat_uid;
	uint64_t cred_userns; /* its user namespace then (procfs_userns) */
	bool cred_known, cred_always;
	/* A record of it came since the last housekeeping (manager.c's on_sample); a quiet one
	 * skipped its credential check there, so its next record checks first (cred_due). */
	bool active, cred_due;
	bool cred_lost; /* ended for a change of credentials: no record of it taken in after */
	char comm[17];
	enum target_state state;
	unsigned freq;
	unsigned duration_sec;
	int exit_code;
	uint64_t attached_ns, ended_ns; /* CLOCK_REALTIME */
	uint64_t samples, truncated, bad_frames;
	/* Samples whose user leaf is code nothing names (anonymous or memfd memory: JIT code
	 * without a perf-map entry); a JVM is asked for its map again while they keep coming. */
	uint64_t unnamed_leaf;
	/* Samples with a user frame at an address in no executable memory (a junk frame pointer,
	 * "[unknown]"), counted apart from unnamed JIT code; unknown_id is that function's id + 1
	 * (0: none yet). */
	uint64_t unknown_samples;
	uint32_t unknown_id;
	/* Detached with addresses still unnamed: the program its symbols were read for (the
	 * inode of /proc/PID/exe; 0: not looked at yet), see target_late_names. */
	dev_t late_dev;
	ino_t late_ino;
	uint64_t cache_gen;
	uint64_t names_gen;	/* symbols' generation at the last look at unnamed addresses */
	uint64_t names_maps_ns; /* ... and the maps' last read then (tsym_maps_read_ns) */
	uint64_t
	    commit_next_ns; /* CLOCK_MONOTONIC: merges folded away by then (target_commit_names) */
	/* target_symbols_due: unnamed_leaf then, and when the files are looked at anyway */
	uint64_t files_unnamed, files_next_ns;
	char unnamed_note[512]; /* why code is shown by address, how to get names ("" if not) */
	struct profile *profile;
	struct tsym *sym;
	sd_event_source *duration_timer;
	uint32_t *ids; /* scratch for one stack */
	/* The last user frame seen at each depth (root first): the address looked up and its id.
	 * Consecutive samples share most of their root side, so most frames are found here
	 * without a probe of the profile's cache; cleared with that cache when symbols change. */
	struct frame_memo *memo;
	struct hcct *hcct;   /* hot calling contexts of the samples; NULL for a restored profile */
	struct calls *calls; /* exact mode (exact.h); NULL: off */
	/* A restored profile's HCCT: the saved MCCT as a snapshot, queried with hcct_tree_filter
	 * (hcct is NULL then). */
	struct hcct_tree *saved_hcct;
	double eps;
	bool hcct_kernel;
	char *saved_name;      /* file in the state directory holding this profile, if written */
	bool dirty;	       /* ended, but changed since saved (a late sample, a failed save) */
	unsigned drains_ended; /* drains since it ended with its symbols still held */
	unsigned save_failures;
	uint64_t save_retry_ns; /* CLOCK_MONOTONIC: next try after a failed save */
	uid_t by;		/* who attached it (attach_opts.by) */
	/* Over the profile memory budget (target_set_over_budget): its profile frozen, a sample
	 * whose stack is not held counted under "[over budget]" (over_id1: that function's id + 1,
	 * 0 if it could not be made: samples refused then); off-CPU sums refused. */
	bool over_budget;
	uint32_t over_id1;
	bool cut, leaf_cut;	  /* this sample: a frame not held (frozen), the last one of them */
	uint64_t memory;	  /* target_memory at the last housekeeping */
	uint64_t samples_refused; /* dropped over the budget: off-CPU sums, samples (over_id1 0) */
	uint64_t samples_cut;	  /* counted under "[over budget]" and their leaf */
	/* Symbol statistics once its symbols are dropped, or of a profile restored from disk (sym
	 * is NULL then). */
	struct tsym_stats saved_sym;
	struct path_trace *paths; /* the running or last path trace (paths.c) */
	/* Sampling: its own per-thread events (events, while attached), or the per-CPU set of
	 * its frequency (per_cpu). threads: the events' counts, kept when they are closed. */
	struct sampler_target *events;
	struct sampler_stats threads;
	bool per_cpu;
	/* attach --children: the processes it forks become targets too (their parent is this
	 * pid), attached with its settings; refused ones (quotas, limits, gone) are counted. */
	bool children;
	bool no_jvm_map;
	pid_t parent; /* the target that forked it (0: attached by a client) */
	unsigned children_followed, children_refused;
	char *cgroup; /* the watch (attach --cgroup/--unit) that attached it, else NULL */
	char *rule;   /* the watch rule (kprofctl watch) that attached it, else NULL */
	bool all;     /* attach --all made it a target: per-CPU sampled, an automatic target */
	/* attach_opts.from_exec: its samples are dropped (counted) until its exec record. */
	bool before_exec;
	uint64_t samples_before_exec;
	uint64_t last_sample_ns; /* --all's: CLOCK_MONOTONIC of its last sample (idle eviction) */
	/* For exports: the executable file mappings it had (the union of every read of its maps)
	 * and its threads' names. */
	struct maptab *maps;
	struct tnames *tnames;
	/* Its current time window began here (windows.c); 0: not windowed yet (restored). */
	uint64_t win_start_boot, win_start_real;
	/* Per-instruction samples and code snapshots for annotate (annotate.c); NULL for a
	 * profile restored from disk. */
	struct annot *annot;
	struct csite *csite; /* call sites of the user stacks (issue 32), NULL for a restored one */
	struct annotate_queue *annot_q; /* its code copies asked for in this drain */
	uint64_t
	    probe_samples; /* samples taken while a probe ran (counted under KPROF_PROBE_NAME) */
	uint32_t probe_ids[16]; /* kernel functions that handle uprobes (target.c) */
	unsigned nprobe_ids;
	struct drift *drift;	  /* profile drift of its JIT functions (ALGORITHMS.md §12) */
	uint64_t drift_logged_ns; /* the sample time of the last drift logged */
	unsigned drift_unlogged;  /* drifts not logged since: at most one line a second */
	/* The leaf function ids + 1 of the last TARGET_RECENT_LEAVES samples (0: none): which
	 * copy of a JIT function runs now (target_paths_start). */
	uint32_t recent_leaf[TARGET_RECENT_LEAVES];
	uint32_t recent_head;
	size_t drift_code_tried; /* functions of drift whose blocks were looked for */
	uint64_t drift_recycled; /* drift's recycled count when they were (a place reused) */
	/* The path mix of its path traces (keys: path ids; functions: trace ids), made at the
	 * first path event. */
	struct drift *drift_paths;
	/* An ended target's drift result as it is kept (a packed kprof.DriftReply, drift_reply.c):
	 * a restored profile's, or packed at the end; NULL while the detectors above are there, or
	 * if none was kept. */
	uint8_t *drift_kept;
	size_t drift_kept_len;
	/* drift_kept was packed when the target ended, its detectors freed (drift_reply_end), not
	 * restored from a saved profile. */
	bool drift_kept_at_end;
	/* An attached target that continues a profile kept across a restart of kprofd
	 * (manager_resume.c) with its drift result: when that profile's session ended. */
	uint64_t drift_kept_ns;
	/* attach --off-cpu: where its threads waited (offcpu.c); NULL if not asked. */
	struct offcpu *offcpu;
};

/* What an attach asks for; zero fields take the daemon's defaults. */
/* What a watch rule has attached and refused, wherever it attaches (a cgroup watch too). */
struct watch_counts {
	unsigned attached, refused;
};

struct attach_opts {
	unsigned freq;
	unsigned duration_sec;
	double eps;	  /* HCCT: m = ceil(1/eps) counters */
	bool hcct_kernel; /* HCCT contexts include kernel frames */
	bool calls;	  /* exact mode: uprobes on JIT functions */
	bool force;	  /* probe even where the code file is also mapped writable */
	unsigned burst_ms, period_ms;
	bool no_jvm_map;    /* never ask a HotSpot JVM to write its perf map */
	bool children;	    /* its new processes become targets too (KP_TF_CHILDREN) */
	pid_t parent;	    /* a child of this target (kp_fork), not a client's attach */
	const char *cgroup; /* the watch that attached it (copied), else NULL */
	const char *rule;   /* the watch rule that attached it (copied), else NULL: an automatic
			     * target, within limits.max_auto_targets */
	struct watch_counts *counts; /* a cgroup watch's members attached and refused, if set */
	bool all; /* system-wide mode (attach --all): sampled by its per-CPU set, an automatic
		   * target; any other attach of the process takes it over */
	uid_t by; /* the client's uid: quotas, and whether a change of credentials ends it */
	const char *calls_functions; /* --calls=NAME,...: only these (NULL: every function) */
	double max_slowdown;	     /* exact mode's budget (exact.h); 0: kprofd's; < 0: none */
	bool from_exec; /* samples count from its next exec on (kprofctl record's held child) */
	bool off_cpu;	/* also where its threads wait off CPU (offcpu.bpf.c, KP_TF_OFFCPU) */
};

/* -ECHILD: a zombie. */
int target_new(const struct target_env *env, pid_t pid, const struct attach_opts *o,
	       struct target **ret);
/* Its empty mapping and thread-name tables (target_new's, and a restored profile's). */
int target_tables_new(struct target *t);
/* A restored target's off-CPU profile from its kept one (prof taken over, freed on an error). */
int target_offcpu_restore(struct target *t, struct profile *prof);
/* The target ended: free its symbol sources (perf map, mappings), keeping their counts. */
void target_drop_symbols(struct target *t);
/* It exec'd: its symbols read again (tsym_exec), its mapping table the new program's only. */
void target_exec(struct target *t);
/* End of a drain: the code copies its samples asked for are made (attached, and only while its
 * owner may read it: annotate_flush), or dropped. */
void target_flush_captures(struct target *t);
/* For a target whose symbols are held after it ended, on each drain: true while it keeps them
 * for names that come late (detached, not exited, addresses still unnamed, the same process
 * running the same program, at most 10 min): its perf map and jitdump read one more step and
 * its addresses named. Its process gone: the files read a last time (the jitdump through its
 * fd kept open), its addresses named, false. */
bool target_late_names(struct target *t);
/* Memory held by the target's profile, HCCTs and path trace. */
uint64_t target_memory(const struct target *t);
/* ... of it, the drift detectors' and their kept result's. */
uint64_t target_drift_memory(const struct target *t);
void target_free(struct target *t);
void target_add_sample(struct target *t, const struct kp_sample *s);
/* Over the profile memory budget, or not (the housekeeping's check): over it, t's profile is
 * frozen (profile_freeze) and its samples still counted: a stack the profile holds as itself,
 * another as "[over budget]" and its leaf function (thread 0), so the profile grows by at most
 * one stack per function it holds; the HCCT, annotate store, call sites, drift and thread
 * names are not fed. */
void target_set_over_budget(struct target *t, bool over);
/* Keep s (a record of len bytes) to add with t's others later (target_batch_add): 0, -E2BIG
 * when max_bytes would be passed, -ENOMEM; nothing kept on error. */
int target_batch_keep(struct target *t, const struct kp_sample *s, size_t len, size_t max_bytes);
/* Add the samples kept, in their order, and free their memory. */
void target_batch_add(struct target *t);
/* One journal line for drift e of t, at most one a second per target: a process that keeps
 * changing cannot flood the log; the lines left out are counted in the next one. */
struct drift_event;
void target_drift_log(struct target *t, bool paths, const struct drift_event *e);
/* The name of a function of the drift detectors: the samples' (its name) or the paths' (paths:
 * "FUNC (paths)"). */
void target_drift_name(const struct target *t, bool paths, uint32_t func, char *buf, size_t len);
/* A drift detector key of t as text: "block +0x40", "+0x1c" (an offset), "-> NAME" (a callee),
 * "other"; of the paths' detector: "path N". */
void target_drift_key(const struct target *t, bool paths, uint64_t key, char *buf, size_t len);
/* Name the frames kept by address that the symbols cover now (when they changed since the last
 * call, or always with force). The count named, or -ENOMEM. */
int target_names_update(struct target *t, bool force);
/* Functions merged by late names are folded away by rewriting every stack of the profile
 * (profile_commit_renames, O(the profile)): the housekeeping's target_names_update does it at
 * most every TARGET_COMMIT_EVERY_NS, a reader's drain (manager_drain) and a forced update at
 * once, so no reply sees a merged function's samples apart. 1 if stacks were rewritten, 0 if
 * nothing was merged, -ENOMEM (tried again later). */
#define TARGET_COMMIT_EVERY_NS (10 * 1000000000ULL)
int target_commit_names(struct target *t);
/* Whether its perf map and jitdump are to be read again this housekeeping second (now:
 * CLOCK_MONOTONIC): they can name something (unnamed code in its profile, or samples in
 * unnamed code since the last read), or TARGET_FILES_EVERY_NS went by. An idle target's, or
 * one whose code is all named, are then looked at every 10 s, not every second (a new JIT
 * file is read at the first sample it could name). */
#define TARGET_FILES_EVERY_NS (10 * 1000000000ULL)
bool target_symbols_due(struct target *t, uint64_t now);
/* Nothing came from it since the last call (t->active, cleared here) and the housekeeping has
 * nothing of its own to do for it: no samples waiting in a run, no unnamed address waiting for
 * a name, no symbol file read short, no probes, no drift code to look for. */
bool target_quiet(struct target *t);
/* src with the functions p merged after the fact merged (hcct_tree_relabel): the new tree
 * replaces *owned (freed; src may be it). Nothing changes when p has no merged functions. 0 or
 * a negative errno. */
int target_canon_tree(const struct profile *p, struct hcct_tree **owned,
		      const struct hcct_tree *src);
/* The process is attached: its symbol sources that ask the runtime for names begin (a HotSpot
 * JVM is asked for its perf map, unless o says not). */
void target_sources_start(struct target *t, const struct attach_opts *o);
/* Housekeeping of its symbol sources: a JVM asked again while samples land in unnamed code. */
void target_sources_tick(struct target *t, uint64_t now_ns);
/* Exact mode: a probe hit. */
void target_on_call(struct target *t, const struct kp_call *c);
/* Start tracing the paths of one JIT function of an attached target; err says why not. */
int target_paths_start(struct target *t, const struct paths_opts *o, char *err, size_t errlen);
/* Who besides root may profile process pid (procfs_ident_owner): -ESRCH if there is none or it
 * is a zombie. */
int target_proc_uid(pid_t pid, uid_t *uid);

#endif
