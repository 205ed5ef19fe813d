// SPDX-License-Identifier: GPL-2.0
/* calls.bpf.c: the exact-mode call probes (`attach --calls`), which report every entry and
 * return of a target's JIT functions.
 *
 * kp_call_enter / kp_call_return are attached by the daemon as uprobes / uretprobes at the
 * entries of JIT functions, each with the function's id as its cookie and the target's pid as the
 * probe's filter, so they need no kp_targets lookup. Before Linux 5.15 (no attach cookies) the
 * function's id is found by its address (probe_cookie(), kprof.bpf.h). Each hit puts one call
 * record (thread, function, entry or return, time) in the ring buffer, with batched wakeups;
 * from each thread's entries and returns kprofd rebuilds its call stack (exact call counts and
 * calling contexts).
 *
 * Every record carries the epoch of the probe set (kp_call_epochs, which kprofd sets once the
 * whole set is in and clears before it takes any probe away: 0 stamps the events of a set half
 * in or half out) and, per thread and epoch (kp_call_threads), the event's number, counted even
 * when the ring buffer is full, the thread's depth after it and the lowest depth it reached
 * since its last record sent. kprofd sees a loss as a gap in the numbers and knows from the
 * depths which of the thread's frames outlived it (callsync.c).
 */
#include "kprof.bpf.h"

/* A thread's count in its epoch; start tells a new thread from an old one of the same id. */
struct call_thread {
	__u64 start;
	__u32 epoch, seq;
	__s32 depth, low;
};

KP_MAP(kp_call_threads, BPF_MAP_TYPE_LRU_HASH, KP_CALL_MAX_THREADS, __u32, struct call_thread);

/* tgid -> the epoch of its probe set, while the whole set is in (written by kprofd). */
KP_MAP(kp_call_epochs, BPF_MAP_TYPE_HASH, KP_MAX_TARGETS, __u32, __u32);

/* The thread's count for epoch, started over (from 0) in a new epoch or for a new thread; NULL
 * if the map refused it. */
static __always_inline struct call_thread *call_thread(__u32 tid, __u32 epoch)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct call_thread fresh = {.start = BPF_CORE_READ(task, start_time), .epoch = epoch};
	struct call_thread *st = bpf_map_lookup_elem(&kp_call_threads, &tid);

	if (st && st->start == fresh.start && st->epoch == epoch)
		return st;
	if (st) {
		*st = fresh;
		return st;
	}
	bpf_map_update_elem(&kp_call_threads, &tid, &fresh, BPF_ANY);
	return bpf_map_lookup_elem(&kp_call_threads, &tid);
}

static __always_inline int call_event(struct pt_regs *ctx, __u32 is_exit)
{
	__u64 id = current_ids();
	__u32 tgid = id >> 32, tid = (__u32)id, epoch = 0, seq = 0;
	__u32 *e = bpf_map_lookup_elem(&kp_call_epochs, &tgid);
	struct call_thread *st = NULL;
	__s32 depth = 0, low = 0;
	struct kp_call *r;

	if (e)
		epoch = *e;
	if (epoch)
		st = call_thread(tid, epoch);
	if (st) {
		st->depth += is_exit ? -1 : 1;
		if (st->depth < st->low)
			st->low = st->depth;
		seq = st->seq++; /* counted even when lost, so kprofd sees the gap */
		depth = st->depth;
		low = st->low;
	}
	r = bpf_ringbuf_reserve(&kp_events, sizeof(*r), 0);
	if (!r) {
		count(KP_CTR_CALL_DROPS);
		return 0;
	}
	if (st)
		st->low = st->depth; /* the next record's lowest depth starts here */
	r->hdr.kind = KP_REC_CALL;
	r->hdr.tgid = tgid;
	r->tid = tid;
	r->func = (__u32)probe_cookie(ctx, KP_PROBE_CALL, is_exit);
	r->exit = is_exit;
	r->epoch = st ? epoch : 0; /* no count: as good as a set not all in */
	r->seq = seq;
	r->depth = depth;
	r->low = low;
	r->pad = 0;
	r->time_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(r, wakeup_flag());
	count(KP_CTR_CALLS);
	return 0;
}

SEC("uprobe")
int kp_call_enter(struct pt_regs *ctx)
{
	return call_event(ctx, 0);
}

SEC("uretprobe")
int kp_call_return(struct pt_regs *ctx)
{
	return call_event(ctx, 1);
}
