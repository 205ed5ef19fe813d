/* SPDX-License-Identifier: GPL-2.0 */
/* kprof.bpf.h: what kprofd's BPF tools share: the ring buffer, the targets, the counters, the
 * load-time constants and the helpers around them.
 *
 * Each tool is its own .bpf.c (sampler, lifecycle, calls, paths); the Makefile compiles them
 * apart and links them with libbpf's static linker (bpftool gen object) into one object, so the
 * loader keeps one skeleton and every tool works on the same maps. A map or constant used by more
 * than one tool is defined once, in shared.bpf.c, and declared extern here. The linker requires an
 * extern map to repeat its definition exactly (type, key, value, max_entries, flags), hence the
 * named map types below, which both the definition and the declarations use. Maps of one tool
 * alone stay in its file.
 */
#ifndef KPROF_BPF_H
#define KPROF_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "kprof/abi.h"

/* The records of every tool, to user space. */
struct kp_events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* resized by the loader */
};

/* The processes to watch (key: tgid), written by kprofd; kp_exit deletes an ended one. */
struct kp_targets_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KP_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct kp_target);
};

/* Per-CPU kp_counters[KP_CTR_*]. */
struct kp_counters_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_CTR_NR);
	__type(key, __u32);
	__type(value, __u64);
};

/* Uprobe cookies by address, for kernels without attach cookies (kp_has_cookie 0). */
struct kp_probe_cookies_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KP_MAX_PROBE_COOKIES); /* set small by the loader when unused */
	__type(key, struct kp_probe_key);
	__type(value, __u64);
};

/* Processes system-wide mode refused a profile (key: tgid; value: their start): their samples
 * and waits are counted here, not sent (sampler.bpf.c, offcpu.bpf.c). */
struct kp_all_skip_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KP_MAX_ALL_SKIP);
	__type(key, __u32);
	__type(value, __u64);
};

/* A map of one program's own: name, BPF_MAP_TYPE_*, entries, key and value types. */
#define KP_MAP(name, kind, n, k, v)                                                                \
	struct {                                                                                   \
		__uint(type, kind);                                                                \
		__uint(max_entries, n);                                                            \
		__type(key, k);                                                                    \
		__type(value, v);                                                                  \
	} name SEC(".maps")

extern struct kp_events_map kp_events SEC(".maps");
extern struct kp_all_skip_map kp_all_skip SEC(".maps");
extern struct kp_probe_cookies_map kp_probe_cookies SEC(".maps");
extern struct kp_targets_map kp_targets SEC(".maps");
extern struct kp_counters_map kp_counters SEC(".maps");

/* Set by the loader before load. */
extern const volatile __u64 kp_wakeup_bytes;
extern const volatile __u64 kp_nsec_per_tick; /* NSEC_PER_SEC / USER_HZ */
/* The boot time offset of kprofd's time namespace, which /proc/PID/stat adds to start times. */
extern const volatile __s64 kp_boottime_offset_ns;
/* kprofd's PID namespace (ARCHITECTURE.md §1.2.2): the inode number of /proc/self/ns/pid, or 0
 * when kprofd is in the initial one; then the kernel's own ids are kprofd's and nothing below
 * costs more than the helpers did. kp_pidns_level, its depth, is found by kp_pidns_probe
 * (pidns.bpf.c) after the load and before any program is attached. */
extern const volatile __u32 kp_pidns_ino;
/* The kernel has bpf_get_attach_cookie (Linux 5.15), probed by the loader: when 0, no program
 * calls it (the verifier skips the branch of a constant) and the fallbacks below serve. */
extern const volatile __u32 kp_has_cookie;
extern __u32 kp_pidns_level;
extern const volatile __u32 kp_self_tgid; /* kprofd, as current_ids() names it */

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&kp_counters, &idx);

	if (v)
		*v += 1;
}

/* The process's start as /proc/PID/stat shows it to kprofd: its leader's, in clock ticks after
 * boot as kprofd's time namespace counts (exec by another thread hands the leader's start to the
 * new leader, so it stays the same). */
static __always_inline __u64 start_ticks(struct task_struct *task)
{
	return (BPF_CORE_READ(task, group_leader, start_boottime) + kp_boottime_offset_ns) /
	       kp_nsec_per_tick;
}

#define KP_PF_KTHREAD 0x00200000 /* task_struct.flags: a kernel thread */

/* Whether the running task's process (tgid as current_ids() names it) may become a target of
 * system-wide mode: 0 with *start its start, else why not as the KP_CTR_ALL_* counter of it (the
 * idle task, a kernel thread, a process outside kprofd's PID namespace, kprofd, one refused). */
static __always_inline __u32 all_candidate(struct task_struct *task, __u32 tgid, __u64 *start)
{
	__u64 *skip;

	if (!BPF_CORE_READ(task, pid))
		return KP_CTR_ALL_IDLE;
	if (BPF_CORE_READ(task, flags) & KP_PF_KTHREAD)
		return KP_CTR_ALL_KTHREAD;
	if (!tgid)
		return KP_CTR_ALL_FOREIGN;
	if (tgid == kp_self_tgid)
		return KP_CTR_ALL_SELF;
	*start = start_ticks(task);
	skip = bpf_map_lookup_elem(&kp_all_skip, &tgid);
	if (skip && *skip == *start)
		return KP_CTR_ALL_SKIPPED;
	return 0;
}

/* The number of pid in kprofd's PID namespace, 0 if it has none there (a process of the host or
 * of another container, which kprofd cannot name and never watches). A struct pid holds one
 * number per level from the initial namespace down to its own; kprofd's is at kp_pidns_level,
 * and is kprofd's own namespace only if its inode number is kp_pidns_ino. */
static __always_inline __u32 ns_nr(struct pid *pid)
{
	__u32 lvl = kp_pidns_level;
	struct upid *u;

	if (!pid || lvl > KP_PIDNS_MAX_LEVEL || BPF_CORE_READ(pid, level) < lvl)
		return 0;
	u = (void *)pid + bpf_core_field_offset(struct pid, numbers) +
	    lvl * bpf_core_type_size(struct upid);
	if (BPF_CORE_READ(u, ns, ns.inum) != kp_pidns_ino)
		return 0;
	return BPF_CORE_READ(u, nr);
}

/* tgid << 32 | tid of task p as kprofd names them (the layout of bpf_get_current_pid_tgid()):
 * the kernel's ids in the initial namespace, else those of kprofd's, 0 if p has none there. */
static __always_inline __u64 task_ids(struct task_struct *p)
{
	__u32 tgid, tid;

	if (!kp_pidns_ino)
		return (__u64)BPF_CORE_READ(p, tgid) << 32 | (__u32)BPF_CORE_READ(p, pid);
	tid = ns_nr(BPF_CORE_READ(p, thread_pid));
	tgid = ns_nr(BPF_CORE_READ(p, signal, pids[PIDTYPE_TGID]));
	if (!tid || !tgid)
		return 0;
	return (__u64)tgid << 32 | tid;
}

/* task_ids() of the running task; the helper's fast path in the initial namespace. */
static __always_inline __u64 current_ids(void)
{
	if (!kp_pidns_ino)
		return bpf_get_current_pid_tgid();
	return task_ids((struct task_struct *)bpf_get_current_task());
}

/* The cookie of the uprobe that runs ctx: its attach cookie, or (before Linux 5.15) the one the
 * loader stored for the probed address. A uprobe's handler sees the probed address as its
 * instruction pointer; a uretprobe's sees the return address, and the probed function's address
 * is in the newest of the task's return instances (the kernel runs the handlers of a return
 * before it pops them). 0 when not found. */
static __always_inline __u64 probe_cookie(struct pt_regs *ctx, __u32 kind, bool ret)
{
	struct kp_probe_key k = {.tgid = current_ids() >> 32, .kind = kind};
	__u64 *v;

	if (kp_has_cookie)
		return bpf_get_attach_cookie(ctx);
	if (ret) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		k.addr = BPF_CORE_READ(task, utask, return_instances, func);
	} else
		k.addr = PT_REGS_IP(ctx);
	v = bpf_map_lookup_elem(&kp_probe_cookies, &k);
	return v ? *v : 0;
}

/* Wakeups are batched: user space is woken only when the buffer holds more than
 * kp_wakeup_bytes, and drains it on its own timer otherwise. */
static __always_inline __u64 wakeup_flag(void)
{
	return bpf_ringbuf_query(&kp_events, BPF_RB_AVAIL_DATA) >= kp_wakeup_bytes
		   ? BPF_RB_FORCE_WAKEUP
		   : BPF_RB_NO_WAKEUP;
}

#endif /* KPROF_BPF_H */
