/* SPDX-License-Identifier: GPL-2.0-only */
/* loader.h: the BPF side of kprofd (loader.c): skeleton, ring buffer, targets map, the thread
 * scan. The sampling events themselves are sampler.c's. */
#ifndef KPROF_DAEMON_LOADER_H
#define KPROF_DAEMON_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "kprof/abi.h"

struct bpf_link;
struct bpf_map;
struct bpf_program;
struct features;

struct loader_opts {
	uint64_t ringbuf_bytes;	    /* explicit size; 0: from what can arrive (rbsize.h) */
	uint64_t ringbuf_max_bytes; /* the bound of a computed size */
	unsigned max_freq;	    /* the highest sampling frequency an attach may ask */
	unsigned drain_ms;	    /* the longest samples wait in the ring buffer */
};

struct loader;
/* -E2BIG: the explicit size is above RBSIZE_LIMIT_MB (logged). */
int loader_new(const struct loader_opts *o, struct loader **ret);
void loader_free(struct loader *l);
int loader_ringbuf_fd(const struct loader *l);
unsigned loader_ringbuf_bytes(const struct loader *l);
/* The sampler program, for the perf events of sampler.c. */
struct bpf_program *loader_sample_prog(const struct loader *l);
/* The exact-mode programs: entry (ret false) or return (ret true) probe. */
struct bpf_program *loader_call_prog(const struct loader *l, bool ret);
/* Exact mode's probe set of process tgid is all in: its events are stamped with a new epoch
 * (*epoch, never 0, unique in this kprofd), until loader_calls_close, before any probe of the
 * set goes: its events are then stamped 0. */
int loader_calls_open(struct loader *l, pid_t tgid, uint32_t *epoch);
void loader_calls_close(struct loader *l, pid_t tgid);
/* The path tracer: the block probe program, its edge table and its per-thread state. */
struct bpf_program *loader_path_prog(const struct loader *l);
struct bpf_map *loader_path_edges(const struct loader *l);
struct bpf_map *loader_path_threads(const struct loader *l);
/* The branch tracer on anonymous code: the breakpoint program and its tgid -> trace map. */
int loader_hwbp_prog_fd(const struct loader *l);
struct bpf_map *loader_hwbp_traces(const struct loader *l);
/* Possible CPUs (the size of per-CPU map values). */
int loader_ncpus(const struct loader *l);
/* Per-thread sampling needs the thread programs, which need Linux 6.7 or newer (the task
 * iterator); false: only the per-CPU sets can sample (the reason is logged at start). */
bool loader_threads_supported(const struct loader *l);
/* What this kernel has of what the programs use (probed at load, features.h). */
const struct features *loader_features(const struct loader *l);
/* A uprobe (ret: uretprobe) of prog at offset of path in process pid, the code at address addr
 * there (for a uretprobe: the function's), with cookie; before Linux 5.15 the cookie goes to
 * kp_probe_cookies by address instead. NULL with errno on failure, as libbpf's. */
struct bpf_link *loader_uprobe_attach(struct loader *l, bool ret, struct bpf_program *prog,
				      pid_t pid, const char *path, uint64_t offset, uint64_t addr,
				      uint64_t cookie);
/* The cookie to attach a per-CPU set's event with: cookie, or 0 where the kernel has no attach
 * cookies (the sampler then reads the event's frequency). */
uint64_t loader_event_cookie(const struct loader *l, uint64_t cookie);
/* Threads of tgid (of only thread tid when tid > 0) without a kprofd event: *tids points to
 * min(res->missing, KP_SCAN_MAX) of them, valid until the next scan. 0, or -ESRCH, -errno. */
int loader_scan_threads(struct loader *l, pid_t tgid, pid_t tid, struct kp_scan *res,
			const uint64_t **tids);
/* Sample process tgid, the one that started at start_ticks (/proc/PID/stat field 22): at freq
 * Hz by the per-CPU sets, or by its own events when flags has KP_TF_THREADS. */
int loader_target_add(struct loader *l, pid_t tgid, unsigned freq, uint64_t start_ticks,
		      uint32_t flags);
int loader_target_del(struct loader *l, pid_t tgid);
/* Watch cgroup cgid (and its descendants) for processes entering it (KP_REC_CGROUP), or stop.
 * -EEXIST, -E2BIG (KP_MAX_CGROUPS), -ENOENT, -errno. */
int loader_cgroup_watch(struct loader *l, uint64_t cgid, bool on);
/* Watch rules: the comms and uids whose execs are reported (KP_REC_WATCH), replacing the
 * previous sets (at most KP_MAX_WATCH_KEYS each); none: the exec program skips the lookups. */
int loader_watch_sync(struct loader *l, const char (*comms)[16], unsigned ncomms,
		      const uint32_t *uids, unsigned nuids);
/* System-wide mode (attach --all): the per-CPU set of freq Hz also samples processes that
 * are no targets (0: off). */
void loader_all_set(struct loader *l, unsigned freq);
/* A process refused a profile: its samples are only counted from now on (kp_all_skip). */
int loader_all_skip(struct loader *l, pid_t tgid, uint64_t start_ticks);
void loader_all_skip_clear(struct loader *l);
/* Sums over CPUs of kp_counters; per_cpu_drops (may be NULL) gets ncpus values. */
int loader_counters(const struct loader *l, uint64_t ctr[KP_CTR_NR], uint64_t *per_cpu_drops);
/* Off-CPU time (offcpu.bpf.c): attach the sched_switch program (tp_btf, else raw_tp) or detach
 * it. 0 or a negative errno (logged). */
int loader_offcpu_set(struct loader *l, bool on);
/* "tp_btf" or "raw_tp" while attached, NULL while not. */
const char *loader_offcpu_type(const struct loader *l);
/* attach --all --off-cpu: processes that are no target report their first wait (KP_SF_WAITER)
 * while on; loader_offcpu_waiter_done: tgid's report was handled (its next wait reports it
 * again if it is still no target). */
void loader_all_offcpu_set(struct loader *l, bool on);
void loader_offcpu_waiter_done(struct loader *l, pid_t tgid);
/* Its maps, for offcpu_bpf.c. */
struct loader_offcpu_fds {
	int start, sums, stacks, counters, rules;
};
void loader_offcpu_fds(const struct loader *l, struct loader_offcpu_fds *fds);

#endif
