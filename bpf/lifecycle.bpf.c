// SPDX-License-Identifier: GPL-2.0
/* lifecycle.bpf.c: the lifecycle watcher, which tells kprofd when a target's process exits or
 * execs.
 *
 * kp_exit and kp_exec are tp_btf programs on sched_process_exit and sched_process_exec, attached
 * once at load for every process. For a target (in kp_targets, and the same process: the
 * leader's start matches, not a pid reuse) they put a lifecycle record in the ring buffer and
 * wake user space at once. kp_exit acts only when the last thread of the group leaves, and also
 * deletes the target's kp_targets entry, so nothing samples a process that reuses the pid even
 * before kprofd has handled the exit. Pids are those of kprofd's PID namespace (task_ids()).
 */
#include "kprof.bpf.h"

/* Report an exit or exec of p's process if it is a target (the same process, not a pid reuse);
 * an exit also removes it from kp_targets. */
static __always_inline void lifecycle(__u32 kind, struct task_struct *p, __u32 code)
{
	__u64 ids = task_ids(p), start = start_ticks(p);
	__u32 tgid = ids >> 32;
	struct kp_lifecycle *r;
	struct kp_target *t;

	t = bpf_map_lookup_elem(&kp_targets, &tgid);
	if (!t || t->start_ticks != start)
		return;
	/* Nothing more to sample, and the pid may be reused before user space reads this. */
	if (kind == KP_REC_EXIT)
		bpf_map_delete_elem(&kp_targets, &tgid);
	r = bpf_ringbuf_reserve(&kp_events, sizeof(*r), 0);
	if (!r) {
		count(KP_CTR_LC_DROPS);
		return;
	}
	r->hdr.kind = kind;
	r->hdr.tgid = tgid;
	r->pid = (__u32)ids;
	r->exit_code = code;
	r->time_ns = bpf_ktime_get_ns();
	r->start_ticks = start;
	/* Lifecycle records are rare and must not wait for the drain timer. */
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(kp_exit, struct task_struct *p)
{
	/* Only the whole process matters: the last thread of the group is on its way out. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	lifecycle(KP_REC_EXIT, p, BPF_CORE_READ(p, exit_code));
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(kp_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	lifecycle(KP_REC_EXEC, p, 0);
	return 0;
}
