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

extern struct kp_events_map kp_events SEC(".maps");
extern struct kp_targets_map kp_targets SEC(".maps");
extern struct kp_counters_map kp_counters SEC(".maps");

/* Set by the loader before load. */
extern const volatile __u64 kp_wakeup_bytes;
extern const volatile __u64 kp_nsec_per_tick; /* NSEC_PER_SEC / USER_HZ */

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&kp_counters, &idx);

	if (v)
		*v += 1;
}

/* The process's start as /proc/PID/stat shows it: its leader's, in clock ticks after boot (exec
 * by another thread hands the leader's start to the new leader, so it stays the same). */
static __always_inline __u64 start_ticks(struct task_struct *task)
{
	return BPF_CORE_READ(task, group_leader, start_boottime) / kp_nsec_per_tick;
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
