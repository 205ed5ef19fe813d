// SPDX-License-Identifier: GPL-2.0
/* hwbp.bpf.c: the branch tracer on anonymous JIT code (daemon/paths/hwpaths.c).
 *
 * kp_hwbp_hit runs at every hit of a hardware execute breakpoint kprofd put on a conditional
 * branch of a traced function (per-thread perf events, PERF_TYPE_BREAKPOINT, sample period 1).
 * The breakpoint fires before the instruction executes, so the registers it sees are those the
 * jcc will read: one record per hit carries the address, the flags and the stack pointer, and
 * user space decides the branch (hwbranch_taken) and follows the loop's paths. Only a tgid in
 * kp_hwbp_traces is reported, with its trace id, so a late hit of a finished trace is told
 * apart. Losses to a full ring buffer count in KP_CTR_PATH_DROPS.
 */
#include "kprof.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KP_HWBP_MAX_TRACES);
	__type(key, __u32);
	__type(value, __u32);
} kp_hwbp_traces SEC(".maps");

SEC("perf_event")
int kp_hwbp_hit(struct bpf_perf_event_data *ctx)
{
	__u64 id = current_ids();
	__u32 tgid = id >> 32, *trace;
	struct kp_hwbp *r;

	count(KP_CTR_PATH_HITS);
	trace = bpf_map_lookup_elem(&kp_hwbp_traces, &tgid);
	if (!trace)
		return 0;
	r = bpf_ringbuf_reserve(&kp_events, sizeof(*r), 0);
	if (!r) {
		count(KP_CTR_PATH_DROPS);
		return 0;
	}
	r->hdr.kind = KP_REC_HWBP;
	r->hdr.tgid = tgid;
	r->tid = (__u32)id;
	r->trace = *trace;
	r->ip = ctx->regs.ip;
	r->flags = ctx->regs.flags;
	r->sp = ctx->regs.sp;
	bpf_ringbuf_submit(r, wakeup_flag());
	count(KP_CTR_PATH_EVENTS);
	return 0;
}
