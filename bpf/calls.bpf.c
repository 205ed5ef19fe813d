// SPDX-License-Identifier: GPL-2.0
/* calls.bpf.c: the exact-mode call probes (`attach --calls`), which report every entry and
 * return of a target's JIT functions.
 *
 * kp_call_enter / kp_call_return are attached by the daemon as uprobes / uretprobes at the
 * entries of JIT functions, each with the function's id as its cookie and the target's pid as the
 * probe's filter, so they need no kp_targets lookup. Before Linux 5.15 (no attach cookies) the
 * function's id is found by its address (probe_cookie(), kprof.bpf.h). Each hit puts one call record (thread,
 * function, entry or return, time) in the ring buffer, with batched wakeups; from each thread's
 * entries and returns kprofd rebuilds its call stack (exact call counts and calling contexts).
 */
#include "kprof.bpf.h"

static __always_inline int call_event(struct pt_regs *ctx, __u32 is_exit)
{
	__u64 id = current_ids();
	struct kp_call *r = bpf_ringbuf_reserve(&kp_events, sizeof(*r), 0);

	if (!r) {
		count(KP_CTR_CALL_DROPS);
		return 0;
	}
	r->hdr.kind = KP_REC_CALL;
	r->hdr.tgid = id >> 32;
	r->tid = (__u32)id;
	r->func = (__u32)probe_cookie(ctx, KP_PROBE_CALL, is_exit);
	r->exit = is_exit;
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
