// SPDX-License-Identifier: GPL-2.0
/* threads.bpf.c: which threads of a per-thread target lack kprofd's sampling event.
 *
 * A per-thread target is sampled by one cpu-clock event per thread, opened by kprofd with
 * inherit (threads only), so a thread created by a thread that has the event inherits it with
 * the sampler attached. A thread cloned by one that has none yet (kprofd is still opening the
 * events of an existing process) gets none. Two programs find such threads without guessing
 * from /proc (whose task directory can skip threads while others exit):
 *  - kp_scan_threads (BPF_PROG_TYPE_SYSCALL, run by kprofd with BPF_PROG_TEST_RUN) walks the
 *    threads of a process under RCU with the task iterator and lists those without the event
 *    (kp_scan_tids);
 *    kprofd opens one on each and scans again until none is missing (or the limits stop it);
 *  - kp_thread_new (task_newtask, after the kernel has copied the creator's events into the
 *    new thread) reports a new thread of a target that came without the event, at once.
 * A thread "has the event" when its perf context holds an event that runs this kprofd's
 * kp_sample, known by its program id (kp_sample_id, set by the loader after the load; ids are
 * unique on the machine, so another kprofd's events never count): an event opened but not yet
 * given the sampler is copied into the threads created meanwhile without it, and must not.
 * Pids in and out are those of kprofd's PID namespace (task_ids(), kprof.bpf.h).
 */
#include "kprof.bpf.h"

#define KP_CLONE_THREAD 0x00010000
#define KP_TASK_EVENTS_MAX 32 /* events of a task looked at for ours */

extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task,
			     unsigned int flags) __weak __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;
extern struct task_struct *bpf_task_from_pid(s32 pid) __weak __ksym;
extern struct task_struct *bpf_task_from_vpid(s32 vpid) __weak __ksym;
extern void bpf_task_release(struct task_struct *p) __weak __ksym;
extern void bpf_rcu_read_lock(void) __weak __ksym;
extern void bpf_rcu_read_unlock(void) __weak __ksym;

__u32 kp_sample_id; /* the id of kp_sample, written by the loader once loaded */

/* The result of a scan: the tids of the threads without the event. Written with
 * bpf_map_update_elem (an index past the end is refused at run time), so the verifier need not
 * track the count's value and the iterator loop converges; kprofd reads it mmapped. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KP_SCAN_MAX);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64); /* an array's values are 8-byte aligned in its mmapped memory */
} kp_scan_tids SEC(".maps");

/* Whether the perf context at ctxp (a task's perf_event_ctxp, 0 if none) holds an event that
 * runs this kprofd's kp_sample. A global function, verified once on its own rather than in
 * every iteration of the caller's loops; hence the context's address as a number. */
__noinline int kp_ctx_sampled(__u64 ctxp)
{
	struct perf_event_context *ctx = (void *)ctxp;
	struct list_head *head, *pos;

	if (!ctx || !kp_sample_id)
		return 0;
	head = (void *)ctx + bpf_core_field_offset(struct perf_event_context, event_list);
	pos = BPF_CORE_READ(ctx, event_list.next);
	for (int i = 0; i < KP_TASK_EVENTS_MAX && pos && pos != head; i++) {
		struct perf_event *ev =
		    (void *)pos - bpf_core_field_offset(struct perf_event, event_entry);

		if (BPF_CORE_READ(ev, prog, aux, id) == kp_sample_id)
			return 1;
		pos = BPF_CORE_READ(ev, event_entry.next);
	}
	return 0;
}

static __always_inline bool has_kp_event(struct task_struct *p)
{
	/* Read through bpf_probe_read_kernel: a number, as the global function takes. */
	return kp_ctx_sampled((__u64)BPF_CORE_READ(p, perf_event_ctxp));
}

SEC("tp_btf/task_newtask")
int BPF_PROG(kp_thread_new, struct task_struct *p, unsigned long clone_flags)
{
	__u64 ids = task_ids(p);
	__u32 tgid = ids >> 32;
	struct kp_target *t;
	struct kp_thread *r;

	if (!(clone_flags & KP_CLONE_THREAD))
		return 0;
	t = bpf_map_lookup_elem(&kp_targets, &tgid);
	if (!t || !(t->flags & KP_TF_THREADS) || t->start_ticks != start_ticks(p))
		return 0;
	count(KP_CTR_THREADS_NEW);
	if (has_kp_event(p))
		return 0;
	r = bpf_ringbuf_reserve(&kp_events, sizeof(*r), 0);
	if (!r) {
		count(KP_CTR_THREAD_DROPS);
		return 0;
	}
	r->hdr.kind = KP_REC_THREAD;
	r->hdr.tgid = tgid;
	r->tid = (__u32)ids;
	r->creator = (__u32)current_ids(); /* clone runs in the creator */
	r->time_ns = bpf_ktime_get_ns();
	count(KP_CTR_THREAD_RECS);
	/* The thread runs unsampled until kprofd opens its event. */
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("syscall")
int kp_scan_threads(struct kp_scan *a)
{
	__u32 tgid = a->tgid, tid = a->tid, zero = 0;
	__u64 tid64 = tid;
	struct task_struct *task, *p;
	struct bpf_iter_task it;

	a->threads = 0;
	a->missing = 0;
	a->err = 0;
	/* By the pid kprofd knows: of its PID namespace (kprofd runs this program itself). */
	if (kp_pidns_ino)
		task = bpf_task_from_vpid(tid ? tid : tgid);
	else
		task = bpf_task_from_pid(tid ? tid : tgid);
	if (!task) {
		a->err = -3; /* ESRCH */
		return 0;
	}
	if ((__u32)(task_ids(task) >> 32) != tgid) {
		a->err = -3;
		bpf_task_release(task);
		return 0;
	}
	if (tid) {
		a->threads = 1;
		if (!has_kp_event(task)) {
			bpf_map_update_elem(&kp_scan_tids, &zero, &tid64, BPF_ANY);
			a->missing = 1;
		}
		bpf_task_release(task);
		return 0;
	}
	bpf_rcu_read_lock();
	bpf_iter_task_new(&it, task, BPF_TASK_ITER_PROC_THREADS);
	/* The counts live in *a: loaded from the context, they are unknown to the verifier,
	 * whose states then agree from one iteration to the next (counters it could follow as
	 * constants would make every iteration a new state). */
	while ((p = bpf_iter_task_next(&it))) {
		__u64 ptid = (__u32)task_ids(p);
		__u32 n;

		a->threads++;
		if (has_kp_event(p))
			continue;
		n = a->missing;
		bpf_map_update_elem(&kp_scan_tids, &n, &ptid, BPF_ANY); /* fails past the end */
		a->missing = n + 1;
	}
	bpf_iter_task_destroy(&it);
	bpf_rcu_read_unlock();
	bpf_task_release(task);
	return 0;
}
