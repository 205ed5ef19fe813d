/* SPDX-License-Identifier: GPL-2.0-only */
/* kprofd.h: the daemon's glue objects and how they talk to each other.
 *
 *   main.c      options -> struct config -> manager_new / manager_run
 *   manager.c   the sd-event loop, the targets and their lifetimes, counters
 *   loader.c    BPF skeleton, per-CPU cpu-clock events per frequency, the targets map
 *   ringbuf.c   ring buffer -> validated records -> manager (samples, exits, execs)
 *   target.c    one profiled process: profile (pure) + symbols (symbolize.c)
 *   symbolize.c /proc/PID/maps, perf maps, ELF symbols (shared cache), /proc/kallsyms
 *   control.c   the Unix socket, framing, authorization, request dispatch
 *   exact.c     exact mode (uprobes on JIT functions) and the removal of uprobes
 *   paths.c     the path tracer (paths_reply.c: its replies)
 *   tfile.c     opening files a target controls; procfs.c: reading /proc/PID files
 *   store.c     kept profiles on disk; live.c: the data of kprofctl top
 */
#ifndef KPROF_KPROFD_H
#define KPROF_KPROFD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include <systemd/sd-event.h>

#include "kprof/abi.h"
#include "kprof/config.h"
#include "kprof/hcct.h"
#include "kprof/perfmap.h"
#include "kprof/profile.h"
#include "proto/kprof.pb-c.h"

#define KPROF_MAX_FREQ_SETS 8 /* distinct sampling frequencies in use at once */

/* Builds the settings from scratch (defaults, file, flags); manager_new gets one, and SIGHUP
 * calls it again. 0, or a negative errno with a message in err. */
typedef int (*config_load_fn)(struct config *cfg, char *err, size_t errlen, void *userdata);

/* ---- loader.c ---- */
struct loader;
int loader_new(unsigned ringbuf_bytes, struct loader **ret);
void loader_free(struct loader *l);
int loader_ringbuf_fd(const struct loader *l);
/* The exact-mode programs: entry (ret false) or return (ret true) probe. */
struct bpf_program *loader_call_prog(const struct loader *l, bool ret);
unsigned loader_ringbuf_bytes(const struct loader *l);
/* The path tracer: the block probe program, its edge table and its per-thread state. */
struct bpf_program *loader_path_prog(const struct loader *l);
struct bpf_map *loader_path_edges(const struct loader *l);
struct bpf_map *loader_path_threads(const struct loader *l);
int loader_ncpus(const struct loader *l);
/* Make sure a set of per-CPU events at freq exists (reference counted). */
int loader_freq_get(struct loader *l, unsigned freq);
void loader_freq_put(struct loader *l, unsigned freq);
int loader_freqs(const struct loader *l, unsigned *out, int max);
/* Sample process tgid, the one that started at start_ticks (/proc/PID/stat field 22), at freq Hz. */
int loader_target_add(struct loader *l, pid_t tgid, unsigned freq, uint64_t start_ticks);
int loader_target_del(struct loader *l, pid_t tgid);
/* Sums over CPUs of kp_counters; per_cpu_drops (may be NULL) gets ncpus values. */
int loader_counters(const struct loader *l, uint64_t ctr[KP_CTR_NR], uint64_t *per_cpu_drops);

/* ---- symbolize.c ---- */
struct symbolizer;
struct tsym;

struct sym_result {
	const char *name;
	const char *module;
	uint64_t start;
	enum profile_kind kind;
};

struct tsym_stats {
	char perfmap_path[256];
	uint64_t jit_symbols;
	uint64_t perfmap_bad_lines;
	uint64_t perfmap_reloads;
	uint64_t refused; /* symbol sources left out: the uid's symbol budget was spent */
};

/* Symbol memory of all targets at most total_bytes, of one non-root uid's per_uid_bytes. */
int symbolizer_new(uint64_t total_bytes, uint64_t per_uid_bytes, struct symbolizer **ret);
void symbolizer_set_budget(struct symbolizer *sz, uint64_t total_bytes, uint64_t per_uid_bytes);
void symbolizer_get_stats(const struct symbolizer *sz, uint64_t *bytes, uint64_t *refusals);
void symbolizer_free(struct symbolizer *sz);
/* Symbols of process pid of real uid uid (charged to it) and effective uid euid (its perf map
 * must be owned by one of them). */
int tsym_new(struct symbolizer *sz, pid_t pid, uid_t uid, uid_t euid, uint64_t perfmap_max_bytes,
	     struct tsym **ret);
void tsym_free(struct tsym *ts);
/* Resolve one address; the strings stay valid until the tsym's generation changes. */
void tsym_resolve(struct tsym *ts, uint64_t addr, bool kernel, struct sym_result *r);
/* Bumped whenever earlier resolutions may have changed (new JIT symbols, new mappings). */
uint64_t tsym_generation(const struct tsym *ts);
/* Re-read the perf map if it grew or was replaced. */
void tsym_refresh(struct tsym *ts);
/* The process exec'd: forget all of its symbols. */
void tsym_exec(struct tsym *ts);
/* The process is gone: stop reading its /proc files, keep what is loaded. */
void tsym_gone(struct tsym *ts);
void tsym_get_stats(const struct tsym *ts, struct tsym_stats *st);
const char *tsym_perfmap_path(const struct tsym *ts);
/* Module name of JIT symbols ("perf-PID.map") and every perf-map entry, in feed order. */
const char *tsym_perfmap_module(const struct tsym *ts);
int tsym_foreach_jit(const struct tsym *ts, int (*fn)(const struct perfmap_sym *, void *),
		     void *userdata);

/* ---- exact.c ---- */
struct probe;
struct target;
#define CALLS_MAX_THREADS 2048

/* Exact mode of a target: uprobes at every JIT function entry and return. */
struct calls {
	bool enabled;
	bool force;
	unsigned burst_ms, period_ms; /* 0: probes stay attached */
	struct probe *probes;
	size_t nprobes;
	struct bpf_link **links;
	size_t nlinks;
	sd_event_source *timer;
	uint64_t on_since_ns, active_ns, enabled_ns, ended_ns; /* CLOCK_MONOTONIC */
	/* Removing uprobes waits for an RCU grace period in the kernel (about 1 s here): a worker
	 * thread does it off the event loop, and nothing in the loop waits for it. */
	struct removal *removal;
	uint64_t bursts, events, unmatched_exits;
	uint64_t *counts; /* entries per function id */
	size_t ncounts;
	struct hcct *exact; /* contexts of the calls, exactly as entered */
	struct {
		uint32_t tid; /* 0: free */
		struct hcct_cursor cur;
	} * threads;
	size_t nthreads;
	uint64_t lost_threads;
};

/* A code file, as /proc/PID/maps names it. */
struct code_file {
	uint64_t ino;
	uint32_t dev_major, dev_minor;
};

/* Where a uprobe at an address goes: the mapped file (/proc/PID/map_files/START-END) and offset. */
struct uprobe_site {
	uint64_t offset, map_start, map_end;
	struct code_file file;
};
struct procmaps;
/* The uprobe safety rules for code at addr (file-backed, private r-x, no writable alias of the
 * file unless force); -ENOENT (unmapped), -EOPNOTSUPP, -EPERM with why in err. */
int uprobe_site_check(const struct procmaps *pm, uint64_t addr, const char *name, bool force,
		      struct uprobe_site *site, char *err, size_t errlen);
/* Destroy links (and free the array) on a detached worker thread, so the RCU waits of the
 * removals overlap and the event loop goes on; then after(arg) runs there. A handle to poll
 * (removal_busy) and drop (removal_put), or NULL if it was all done inline. */
struct removal;
struct removal *links_remove_async(struct bpf_link **links, size_t n,
				   const struct code_file *files, size_t nfiles,
				   void (*after)(void *), void *arg);
/* How long ago (ns) a removal of probes in file f began that is still running, 0 if none: the
 * kernel makes a new probe in the same file wait for it, so the loop must not attach one. */
uint64_t removals_pending(const struct code_file *f);
/* Exact mode of t may attach now (no removal of its files running); else why in err. */
int calls_may_attach(const struct target *t, char *err, size_t errlen);
bool removal_busy(const struct removal *r);
void removal_put(struct removal *r);
/* At exit: wait (at most timeout_ms) for the removals still running. */
void links_removals_wait(unsigned timeout_ms);

/* Pick the functions to probe and check the safety rules; err says why not. */
int calls_plan(struct target *t, bool force, char *err, size_t errlen);
int calls_on(struct loader *l, struct target *t, char *err, size_t errlen);
void calls_off(struct target *t);

/* ---- target.c ---- */
enum target_state {
	TARGET_ATTACHED = 1,
	TARGET_EXITED = 2,
	TARGET_DETACHED = 3,
};

struct frame_memo {
	uint64_t addr[KP_MAX_STACK]; /* 0: nothing memoized at this depth */
	uint32_t id[KP_MAX_STACK];
};

struct target {
	struct target *next;
	struct manager *m;
	pid_t pid;
	uint64_t start_ticks;	  /* clock ticks after boot: pid and start name the process */
	uid_t uid;		  /* who may profile it: the process's uid, or 0 (proc_ident_owner) */
	uid_t proc_uid, proc_euid; /* the process's real and effective uids at attach */
	char comm[17];
	enum target_state state;
	unsigned freq;
	unsigned duration_sec;
	int exit_code;
	uint64_t attached_ns, ended_ns; /* CLOCK_REALTIME */
	uint64_t samples, truncated, bad_frames;
	uint64_t cache_gen;
	struct profile *profile;
	struct tsym *sym;
	sd_event_source *duration_timer;
	uint32_t *ids; /* scratch for one stack */
	/* The last user frame seen at each depth (root first): the address looked up and its id.
	 * Consecutive samples share most of their root side, so most frames are found here
	 * without a probe of the profile's cache; cleared with that cache when symbols change. */
	struct frame_memo *memo;
	struct hcct *hcct; /* hot calling contexts of the samples; NULL for a restored profile */
	struct calls calls;
	/* A restored profile's HCCT: the saved MCCT, queried by filtering (hcct is NULL then). */
	Kprof__SavedHcctNode *saved_hcct;
	size_t n_saved_hcct;
	uint64_t saved_hcct_n;
	double eps;
	bool hcct_kernel;
	char *saved_name; /* file in the state directory holding this profile, if written */
	bool dirty;	  /* ended, but changed since saved (a late sample, a failed save) */
	unsigned save_failures;
	uint64_t save_retry_ns; /* CLOCK_MONOTONIC: next try after a failed save */
	uid_t by;		/* who attached it (attach_opts.by) */
	bool over_budget;	/* its uid's profiles hold more than their budget: drop samples */
	uint64_t memory;	/* target_memory at the last housekeeping */
	uint64_t samples_refused;
	/* Symbol statistics of a profile restored from disk (sym is NULL then). */
	uint64_t saved_jit_symbols, saved_bad_lines, saved_refused;
	char *saved_perfmap_path;
	struct path_trace *paths; /* the running or last path trace (paths.c) */
};

/* What an attach asks for; zero fields take the daemon's defaults. */
struct attach_opts {
	unsigned freq;
	unsigned duration_sec;
	double eps;	  /* HCCT: m = ceil(1/eps) counters */
	bool hcct_kernel; /* HCCT contexts include kernel frames */
	bool calls;	  /* exact mode: uprobes on JIT functions */
	bool force;	  /* probe even where the code file is also mapped writable */
	unsigned burst_ms, period_ms;
	uid_t by; /* the client's uid: quotas, and whether a change of credentials ends it */
};

/* A process's identity from /proc/PID/status. */
struct proc_ident {
	char comm[17];
	uid_t ruid, euid, suid, fsuid;
	bool zombie;   /* exited, not yet reaped */
	bool dumpable; /* /proc/PID owned by its euid: not setuid, not made non-dumpable */
};
/* -ESRCH (gone), -EINVAL (a thread id), -EIO. */
int proc_ident_read(pid_t pid, struct proc_ident *id);
/* The uid that may profile the process besides root: its uid when real, effective, saved and
 * filesystem uids agree and it is dumpable (the kernel's ptrace rule), else 0 (root only). */
uid_t proc_ident_owner(const struct proc_ident *id);

/* -ECHILD: a zombie. */
int target_new(struct manager *m, pid_t pid, const struct attach_opts *o, struct target **ret);
/* The target ended: free its symbol sources (perf map, mappings), keeping their counts. */
void target_drop_symbols(struct target *t);
/* Memory held by the target's profile, HCCTs and path trace. */
uint64_t target_memory(const struct target *t);
void target_free(struct target *t);
void target_add_sample(struct target *t, const struct kp_sample *s);
/* Exact mode: a probe hit. */
void target_on_call(struct target *t, const struct kp_call *c);
/* Exact mode: forget where every thread stands (probes went away). */
void target_calls_reset_cursors(struct target *t);
void target_calls_free(struct target *t);
/* The (phi, eps)-HCCT of a restored profile, from its saved MCCT. */
int target_saved_hcct_query(const struct target *t, uint64_t num, uint64_t den,
			    struct hcct_tree **ret);
void target_fill_pb(const struct target *t, Kprof__Target *pb);
/* A kept target rebuilt from a saved profile (validated: -EBADMSG if inconsistent). */
int target_restore(struct manager *m, const Kprof__SavedProfile *sp, struct target **ret);

/* ---- paths.c ---- */
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

/* ---- store.c ---- */
/* A target's profile as a kprof.SavedProfile message (for the state directory and for export);
 * it points into the target's profile, so use it before the target changes. */
struct saved_msg {
	Kprof__SavedProfile msg;
	Kprof__Target target;
	Kprof__SavedFunction *fv, **fp;
	Kprof__SavedStack *sv, **sp;
	Kprof__SavedHcctNode *hv, **hp;
	struct paths_msg pm; /* the last path trace, if any */
};
int saved_msg_build(const struct target *t, struct saved_msg *m);
void saved_msg_release(struct saved_msg *m);

struct store;
/* Open (creating) the state directory; profiles go to DIR/profiles. */
int store_open(const char *dir, struct store **ret);
void store_free(struct store *st);
/* Write t's profile (atomically: temporary file, then rename); sets t->saved_name. */
int store_save(struct store *st, struct target *t);
/* Delete t's file, if it has one. */
void store_remove(struct store *st, struct target *t);
/* Rebuild every saved profile as a kept target; returns how many. */
int store_load(struct store *st, struct manager *m);

/* ---- ringbuf.c ---- */
struct ringbuf;
int ringbuf_new(struct manager *m, int ringbuf_fd, struct ringbuf **ret);
void ringbuf_free(struct ringbuf *s);
int ringbuf_epoll_fd(const struct ringbuf *s);
/* Handle what the ring buffer holds, at most a budget of records: 1 if the budget ran out
 * (call again), 0 when empty, negative errno. */
int ringbuf_drain(struct ringbuf *s);

/* ---- control.c ---- */
struct control;
int control_new(struct manager *m, const char *path, unsigned max_clients, struct control **ret);
void control_free(struct control *c);
unsigned control_clients(const struct control *c);
void control_set_limits(struct control *c, unsigned max_clients);
/* Close clients silent for idle_ns, and those whose request frame is not whole frame_timeout
 * seconds after its first byte. */
void control_reap_idle(struct control *c, uint64_t now, uint64_t idle_ns);

/* ---- live.c ---- */
struct live;
struct live_msg {
	Kprof__UpdateReply up;
	Kprof__TopTarget *tv, **tp;
	Kprof__Target *tpb;
	Kprof__TopEntry **ev;
	size_t n;
};
/* -E2BIG (too many pids), -ERANGE (interval), -ENOMEM. */
int live_new(struct manager *m, const Kprof__SubscribeRequest *req, uid_t uid, bool reader,
	     struct live **ret);
void live_free(struct live *lv);
unsigned live_interval_ms(const struct live *lv);
/* The next update (targets and deltas; the caller adds the status), kernel frames seen through
 * view (PROFILE_VIEW_*: the reader's policy, decided by the caller). */
int live_update(struct live *lv, unsigned view, struct live_msg *msg);
void live_msg_release(struct live_msg *msg);

/* ---- manager.c ---- */
struct manager {
	struct config cfg;
	config_load_fn load_config;
	void *load_userdata;
	gid_t read_gid;	     /* cfg.read_group resolved, (gid_t)-1 if none */
	struct store *store; /* NULL: profiles are kept in memory only */
	sd_event *event;
	struct loader *loader;
	struct ringbuf *ringbuf;
	struct symbolizer *sym;
	struct control *control;
	struct target *targets;
	unsigned n_attached, n_kept;
	uint64_t start_ns;
	uint64_t samples, bad_records, unknown_tgid;
	/* samples/s over the last rate window */
	uint64_t rate_prev_samples, rate_prev_ns;
	double rate;
	sd_event_source *drain_timer, *refresh_timer, *rb_source;
	uint64_t drained_ns; /* last drain (CLOCK_MONOTONIC) */
	uint64_t profile_bytes; /* all targets' profiles, at the last housekeeping */
};

int manager_new(config_load_fn load, void *userdata, struct manager **ret);
void manager_free(struct manager *m);
int manager_run(struct manager *m);
/* The attached target of pid, else its newest kept profile; NULL if none. */
struct target *manager_find(struct manager *m, pid_t pid);
/* The same among the targets ok() accepts (the ones a client may see). */
struct target *manager_find_for(struct manager *m, pid_t pid,
				bool (*ok)(const struct target *t, void *arg), void *arg);
/* Check a target's credentials again (exec, each second, each request): one a user attached
 * that is no longer that user's is ended; true if it was. */
bool manager_recheck(struct manager *m, struct target *t);
/* Hand what the ring buffer holds to the builders now (bounded, like a timer drain): replies
 * and live views then include samples taken up to the request, whatever drain_ms is. */
void manager_drain(struct manager *m);
/* Attach pid; on error errbuf says why. */
int manager_attach(struct manager *m, pid_t pid, const struct attach_opts *o, struct target **ret,
		   char *errbuf, size_t errlen);
int manager_detach(struct manager *m, struct target *t);
/* Undo an attach that a failed request made: the target goes and nothing of it is kept. */
void manager_forget(struct manager *m, struct target *t);
/* Add a restored (kept) target. */
void manager_add_kept(struct manager *m, struct target *t);
void manager_on_sample(struct manager *m, const struct kp_sample *s);
/* Lifecycle records of the process tgid that started at start_ticks (others are ignored). */
void manager_on_exit(struct manager *m, pid_t tgid, uint64_t start_ticks, int code);
void manager_on_exec(struct manager *m, pid_t tgid, uint64_t start_ticks);
void manager_on_call(struct manager *m, const struct kp_call *c);
void manager_on_path(struct manager *m, const struct kp_path *p);
uint64_t manager_cpu_ns(void);
uint64_t now_ns(int clock);
/* Who besides root may profile process pid (proc_ident_owner): -ESRCH if there is none or it
 * is a zombie. */
int target_proc_uid(pid_t pid, uid_t *uid);

#endif
