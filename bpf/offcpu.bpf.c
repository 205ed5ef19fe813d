// SPDX-License-Identifier: GPL-2.0
/* offcpu.bpf.c: off-CPU time of the targets attached with --off-cpu (KP_TF_OFFCPU), as bcc's
 * offcputime measures it: for each thread, every interval from the sched_switch that takes it off
 * a CPU to the one that brings it back, under the user and kernel stacks it left with and its
 * state then (sleeping, uninterruptible, runnable: preempted).
 *
 * One program on sched_switch, in two forms with the same body: kp_offcpu_btf (tp_btf, typed
 * arguments) and kp_offcpu_raw (raw_tp, for kernels whose BTF cannot attach tp_btf there);
 * kprofd attaches one of them while a target asks for off-CPU time, none otherwise
 * (loader_offcpu_set). For a task that is no such target it does one hash lookup per side of
 * the switch and returns: unattached processes pay that and nothing else.
 *
 * Switch out (prev, the running task): its stacks go to kp_offcpu_stacks (bpf_get_stack, keyed
 * by a seeded hash of the addresses, so equal stacks are stored once; not a stack-trace map,
 * whose bucket collisions lose stacks on a busy host) and the time, stack hashes and state to
 * kp_offcpu_start[tid]. Switch in (next): that entry is taken and the interval added to
 * kp_offcpu_sums[(tgid, tid, stacks, state)] (ns and count). kprofd drains kp_offcpu_sums each
 * period and then deletes the stacks it read, so neither map grows with time, and a thread blocking
 * 100,000 times a second costs two map updates per interval and no ring buffer. What does not fit
 * is counted (kp_offcpu_ctrs): a full start map loses the interval, a full sums map its time
 * (KP_OFFC_LOST_NS), a stack not stored (the map full) is KP_STACK_LOST and its time is kept under
 * a "[stack lost]" frame.
 *
 * System-wide mode with off-CPU time (attach --all --off-cpu, kp_all_offcpu): a process that
 * is no target and leaves a CPU is reported once (waiter()), so that kprofd makes it a target
 * even if it never runs when the system-wide set samples; kp_offcpu_waiters keeps the reported
 * ones until kprofd has handled them, so a process costs one record however often it switches.
 */
#include "kprof.bpf.h"

KP_MAP(kp_offcpu_start, BPF_MAP_TYPE_HASH, KP_OFFCPU_MAX_THREADS, __u32, struct kp_offcpu_begin);
KP_MAP(kp_offcpu_sums, BPF_MAP_TYPE_HASH, KP_OFFCPU_MAX_SUMS, struct kp_offcpu_key,
       struct kp_offcpu_val);
KP_MAP(kp_offcpu_ctrs, BPF_MAP_TYPE_PERCPU_ARRAY, KP_OFFC_NR, __u32, __u64);
/* (tgid, address) -> how to find the caller there (kprofd's, from .eh_frame). */
KP_MAP(kp_offcpu_rules, BPF_MAP_TYPE_LRU_HASH, KP_OFFCPU_MAX_RULES, struct kp_unwind_key,
       struct kp_unwind_rule);
/* tgid -> start of the processes reported waiting, until kprofd has handled them. */
KP_MAP(kp_offcpu_waiters, BPF_MAP_TYPE_LRU_HASH, KP_OFFCPU_MAX_WAITERS, __u32, __u64);

__u32 kp_all_offcpu; /* system-wide mode asks for off-CPU time (attach --all --off-cpu) */
/* bpf_task_pt_regs (Linux 5.15), probed by the loader: 0, no caller is looked for. */
const volatile __u32 kp_has_task_regs = 0;

KP_MAP(kp_offcpu_stacks, BPF_MAP_TYPE_HASH, KP_OFFCPU_MAX_STACKS, struct kp_stack_key,
       struct kp_stack);
/* One stack being taken, per CPU (the switch runs with preemption off). */
KP_MAP(kp_offcpu_scratch, BPF_MAP_TYPE_PERCPU_ARRAY, 1, __u32, struct kp_stack);
/* The hash's seed, random per load (the loader's): a target cannot aim two stacks at one key. */
const volatile __u64 kp_stack_seed = 0;

/* task_struct.state before Linux 5.14 named it __state. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

#define KP_TASK_INTERRUPTIBLE 0x1
#define KP_TASK_UNINTERRUPTIBLE 0x2
#define KP_TASK_STOPPED 0x4
#define KP_TASK_TRACED 0x8
#define KP_TASK_DEAD 0x80
#define KP_TASK_NOLOAD 0x400

static __always_inline void offc_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&kp_offcpu_ctrs, &idx);

	if (v)
		*v += n;
}

static __always_inline long task_state(struct task_struct *p)
{
	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state);
	return BPF_CORE_READ((struct task_struct___old *)p, state);
}

/* The target entry of p's process (the same process: its leader's start matches), else NULL;
 * *ids its ids. */
static __always_inline struct kp_target *target_of(struct task_struct *p, bool running, __u64 *ids)
{
	struct kp_target *t;
	__u32 tgid;

	*ids = running ? current_ids() : task_ids(p); /* the helper is the cheaper */
	tgid = *ids >> 32;
	if (!tgid)
		return NULL;
	t = bpf_map_lookup_elem(&kp_targets, &tgid);
	if (!t || t->start_ticks != start_ticks(p))
		return NULL;
	return t;
}

/* attach --all --off-cpu: the running task's process is no target and left a CPU: reported
 * once (KP_SF_WAITER, as a stranger's sample without a stack), so that kprofd makes it a target
 * and its next waits are summed, unless it is one system-wide mode leaves out. */
static __always_inline void waiter(struct task_struct *p, __u64 ids)
{
	const __u32 len = __builtin_offsetof(struct kp_sample, ips);
	__u32 tgid = ids >> 32;
	struct kp_sample *s;
	__u64 start = 0, *seen;

	if (all_candidate(p, tgid, &start))
		return;
	seen = bpf_map_lookup_elem(&kp_offcpu_waiters, &tgid);
	if ((seen && *seen == start) ||
	    bpf_map_update_elem(&kp_offcpu_waiters, &tgid, &start, BPF_ANY) < 0)
		return;
	s = bpf_ringbuf_reserve(&kp_events, len, 0);
	if (!s) {
		count(KP_CTR_DROPS);
		bpf_map_delete_elem(&kp_offcpu_waiters, &tgid); /* reported at its next wait */
		return;
	}
	__builtin_memset(s, 0, len);
	s->hdr.kind = KP_REC_SAMPLE;
	s->hdr.tgid = tgid;
	s->tid = (__u32)ids;
	s->cpu = bpf_get_smp_processor_id();
	s->time_ns = bpf_ktime_get_ns();
	s->flags = KP_SF_STRANGER | KP_SF_WAITER;
	s->start_ticks = start;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	bpf_ringbuf_submit(s, BPF_RB_FORCE_WAKEUP); /* it must be read while it lives */
}

/* The frames past a frame-pointer function from its frame pointer bp (read back from the
 * stack): the return addresses of the frame chain, after b's callers, up to KP_OFFCPU_CALLERS. */
static __always_inline void fp_walk(struct kp_offcpu_begin *b, __u64 bp)
{
	__u64 fr[2];

	for (int i = 0; i < KP_OFFCPU_CALLERS; i++) {
		__u32 n = b->ncallers;

		if (n >= KP_OFFCPU_CALLERS || !bp ||
		    bpf_probe_read_user(fr, sizeof(fr), (void *)bp) < 0 || !fr[1])
			return;
		b->callers[n & (KP_OFFCPU_CALLERS - 1)] = fr[1]; /* [bp + 8]: the return address */
		b->ncallers = n + 1;
		if (fr[0] <= bp) /* the chain goes up the stack, or it ends */
			return;
		bp = fr[0];
	}
}

/* The callers of the running task's user leaf that a frame-pointer walk skips: from its user
 * registers, each return address read at sp + cfa - 8 with the rule of the address before it,
 * while the rules say "no frame pointer" (KP_RULE_SP), at most KP_OFFCPU_CFI_LEVELS; rbp read
 * back where a frame saved it, and when one did, the rest walked from it (fp_walk). */
static __always_inline void unwind(struct kp_offcpu_begin *b, __u32 tgid)
{
	struct kp_unwind_key k = {.tgid = tgid};
	struct kp_unwind_rule *r = NULL;
	struct pt_regs *regs;
	__u32 flags = 0, end = KP_UW_DEPTH;
	__u64 sp, bp, ret, cfa;

	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	k.ip = BPF_CORE_READ(regs, ip);
	sp = BPF_CORE_READ(regs, sp);
	bp = BPF_CORE_READ(regs, bp);
	for (int i = 0; i <= KP_OFFCPU_CFI_LEVELS; i++) {
		r = bpf_map_lookup_elem(&kp_offcpu_rules, &k);
		if (!r || r->kind != KP_RULE_SP) {
			end = !r ? KP_UW_NORULE : r->kind == KP_RULE_FP ? KP_UW_FP : KP_UW_UNKNOWN;
			break;
		}
		if (i == KP_OFFCPU_CFI_LEVELS)
			break; /* KP_UW_DEPTH */
		cfa = sp + r->cfa;
		if (r->rbp == KP_RBP_SAVED)
			flags |=
			    bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa - r->rbp_off)) == 0
				? KP_UW_WALKED
				: KP_UW_RBP;
		else if (r->rbp == KP_RBP_LOST)
			flags |= KP_UW_RBP;
		if (bpf_probe_read_user(&ret, sizeof(ret), (void *)(cfa - 8)) < 0) {
			end = KP_UW_FAULT;
			break;
		}
		b->callers[i & (KP_OFFCPU_CALLERS - 1)] = ret;
		b->ncallers = i + 1;
		sp = cfa;
		k.ip = ret;
	}
	/* at a frame-pointer function, or JIT code (which keeps them), with rbp read back */
	if ((end == KP_UW_FP || end == KP_UW_UNKNOWN) &&
	    (flags & (KP_UW_WALKED | KP_UW_RBP)) == KP_UW_WALKED)
		fp_walk(b, bp);
	else
		flags &= ~KP_UW_WALKED;
	b->unwind = end | flags;
}

/* The running task's kernel stack (flags 0, tgid 0) or user stack (BPF_F_USER_STACK, its tgid)
 * stored in kp_offcpu_stacks: its key's hash; KP_STACK_NONE for no user stack (a kernel thread),
 * KP_STACK_LOST when it is not stored (the map full: counted). */
static __always_inline __u64 stack_store(void *ctx, __u64 flags, __u32 tgid)
{
	struct kp_stack_key k = {.tgid = tgid};
	struct kp_stack *s;
	__u32 zero = 0;
	__u64 h;
	long len;

	s = bpf_map_lookup_elem(&kp_offcpu_scratch, &zero);
	if (!s)
		return KP_STACK_LOST;
	len = bpf_get_stack(ctx, s->ips, sizeof(s->ips), flags); /* zeros after the last */
	if (len <= 0 && (flags & BPF_F_USER_STACK) && (len == 0 || len == -14 /* EFAULT */))
		return KP_STACK_NONE;
	if (len <= 0)
		goto lost;
	h = (kp_stack_seed ^ 0xcbf29ce484222325ULL) + (__u64)len; /* FNV-1a over the words */
	for (int i = 0; i < KP_MAX_STACK; i++) {
		if (i * 8 >= len)
			break;
		h = (h ^ s->ips[i]) * 0x100000001b3ULL;
	}
	h ^= h >> 32;
	k.hash = h > KP_STACK_LOST ? h : h + 2;
	/* -EEXIST: stored already (by this stack, or one of the same hash: 2^-64) */
	len = bpf_map_update_elem(&kp_offcpu_stacks, &k, s, BPF_NOEXIST);
	if (len == 0 || len == -17 /* EEXIST */)
		return k.hash;
lost:
	offc_add(KP_OFFC_NOSTACK, 1);
	return KP_STACK_LOST;
}

/* prev leaves the CPU: it is the running task, so the stacks taken now are its. */
static __always_inline void switch_out(void *ctx, bool preempt, struct task_struct *prev)
{
	struct kp_offcpu_begin b = {};
	struct kp_target *t;
	long st;
	__u64 ids;
	__u32 tid;

	t = target_of(prev, true, &ids);
	if (!t && kp_all_offcpu)
		waiter(prev, ids);
	if (!t || !(t->flags & KP_TF_OFFCPU))
		return;
	st = task_state(prev);
	if (st & KP_TASK_DEAD)
		return; /* its last switch: it never comes back */
	offc_add(KP_OFFC_SWITCHES, 1);
	if (preempt || !st)
		b.state = KP_OFF_RUNNABLE;
	else if (st & KP_TASK_NOLOAD)
		b.state = KP_OFF_IDLE;
	else if (st & KP_TASK_UNINTERRUPTIBLE)
		b.state = KP_OFF_UNINTERRUPTIBLE;
	else if (st & KP_TASK_INTERRUPTIBLE)
		b.state = KP_OFF_SLEEPING;
	else if (st & (KP_TASK_STOPPED | KP_TASK_TRACED))
		b.state = KP_OFF_STOPPED;
	else
		b.state = KP_OFF_RUNNABLE;
	b.tgid = ids >> 32;
	b.kstack = stack_store(ctx, 0, 0);
	b.ustack = stack_store(ctx, BPF_F_USER_STACK, b.tgid);
	if (kp_has_task_regs && b.ustack > KP_STACK_LOST)
		unwind(&b, b.tgid);
	b.time_ns = bpf_ktime_get_ns();
	tid = (__u32)ids;
	if (bpf_map_update_elem(&kp_offcpu_start, &tid, &b, BPF_ANY) < 0)
		offc_add(KP_OFFC_NOBEGIN, 1);
}

/* next comes back: its interval ends. */
static __always_inline void switch_in(struct task_struct *next)
{
	struct kp_offcpu_begin *b;
	struct kp_offcpu_key k = {};
	struct kp_offcpu_val *v, nv = {};
	struct kp_target *t;
	__u64 ids, now;
	__u32 tid;

	t = target_of(next, false, &ids);
	if (!t || !(t->flags & KP_TF_OFFCPU))
		return;
	tid = (__u32)ids;
	b = bpf_map_lookup_elem(&kp_offcpu_start, &tid);
	if (!b)
		return; /* it left before the target was attached */
	now = bpf_ktime_get_ns();
	k.tgid = b->tgid;
	k.tid = tid;
	k.kstack = b->kstack;
	k.ustack = b->ustack;
	k.state = b->state;
	k.unwind = b->unwind;
	k.ncallers = b->ncallers;
	__builtin_memcpy(k.callers, b->callers, sizeof(k.callers));
	nv.ns = now > b->time_ns ? now - b->time_ns : 0;
	bpf_map_delete_elem(&kp_offcpu_start, &tid);
	v = bpf_map_lookup_elem(&kp_offcpu_sums, &k);
	if (v) {
		__sync_fetch_and_add(&v->ns, nv.ns);
		__sync_fetch_and_add(&v->count, 1);
	} else {
		nv.count = 1;
		BPF_CORE_READ_STR_INTO(&nv.comm, next, comm);
		if (bpf_map_update_elem(&kp_offcpu_sums, &k, &nv, BPF_NOEXIST) < 0) {
			/* another CPU made it meanwhile, or the map is full */
			v = bpf_map_lookup_elem(&kp_offcpu_sums, &k);
			if (!v) {
				offc_add(KP_OFFC_NOSUM, 1);
				offc_add(KP_OFFC_LOST_NS, nv.ns);
				return;
			}
			__sync_fetch_and_add(&v->ns, nv.ns);
			__sync_fetch_and_add(&v->count, 1);
		}
	}
	offc_add(KP_OFFC_INTERVALS, 1);
}

static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next)
{
	offc_add(KP_OFFC_RUNS, 1);
	switch_out(ctx, preempt, prev);
	switch_in(next);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(kp_offcpu_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(kp_offcpu_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next);
}
