// SPDX-License-Identifier: GPL-2.0
/* sampler.bpf.c: the CPU sampler, kprofd's statistical profiling of its targets.
 *
 * kp_sample runs on kprofd's cpu-clock perf events, of two kinds (ARCHITECTURE.md §1.2):
 *  - per-thread events (the default): one opened on each thread of a target, inherited by the
 *    threads it creates, attached without a cookie. The kernel does not copy the attach cookie
 *    to inherited events, and swaps the events of cloned contexts between the threads of a
 *    process at context switches, so the cookie (0) only says "a per-thread event"; the
 *    thread's process must be a target flagged KP_TF_THREADS;
 *  - per-CPU sets (pid = -1, one per CPU per sampling frequency, the frequency as the cookie),
 *    which fire whatever runs: the tgid must be a target of that frequency without the flag.
 * Otherwise it returns at once. For a target it collects the kernel and user stacks
 * (frame-pointer walks by bpf_get_stack) into a per-CPU scratch record and copies the filled
 * part into the ring buffer, with batched wakeups (wakeup_flag()). A full buffer is counted per
 * CPU, never silent.
 *
 * A kp_targets entry names one process, by pid and start time (see struct kp_target): the
 * sampler checks the start of the task's thread-group leader against it, and kp_exit
 * (lifecycle.bpf.c) deletes the entry when that process ends, so a process that takes the pid
 * over is never sampled, even while kprofd is stopped or busy and has not handled the exit yet.
 * Pids are those of kprofd's PID namespace (current_ids(), kprof.bpf.h).
 *
 * System-wide mode (kprofctl attach --all, ARCHITECTURE.md §1.2.5): kp_all_freq names one
 * per-CPU set whose samples of a process that is no target are taken too, flagged
 * KP_SF_STRANGER with the process's start and a forced wakeup, so that kprofd makes it a target
 * while it runs. What gets no
 * profile is only counted here: the idle task, kernel threads, kprofd itself, processes outside
 * kprofd's PID namespace and those kprofd refused (kp_all_skip). A target keeps its own
 * settings: the system-wide set's samples of it are dropped like any other set's.
 */
#include "kprof.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kp_sample);
} kp_scratch SEC(".maps");

__u32 kp_all_freq; /* the system-wide set's frequency (its cookie); 0: off */

/* A sample of the system-wide set in a process that is no target: 0 to drop it (counted), 1 to
 * send it with *start set. */
static __always_inline int stranger(__u64 id, __u64 *start)
{
	__u32 why = all_candidate((struct task_struct *)bpf_get_current_task(), id >> 32, start);

	count(why ? why : KP_CTR_ALL_SENT);
	return !why;
}

/* The kernel steps a uprobe's probed instruction out of line, in a slot of the process's [uprobes]
 * page (xol_vaddr, UPROBE_XOL_SLOT_BYTES long), then jumps back: a sample taken meanwhile has its
 * user leaf there, and the probed function is missing from its stack. Put the probed
 * instruction's own address (vaddr, plus how far the step got) back, and flag the sample: it is
 * the cost of a probe (kprofd's, or anyone's). */
static __always_inline void probe_unstep(struct kp_sample *s, __u64 nk, __u64 nu)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct uprobe_task *ut = BPF_CORE_READ(task, utask);
	__u64 xol, vaddr, ip;

	if (!ut || !nu || nk >= KP_MAX_STACK)
		return;
	xol = BPF_CORE_READ(ut, xol_vaddr);
	ip = s->ips[nk];
	if (!xol || ip < xol || ip - xol >= 128)
		return;
	vaddr = BPF_CORE_READ(ut, vaddr);
	if (!vaddr)
		return;
	s->ips[nk] = vaddr + (ip - xol);
	s->flags |= KP_SF_UPROBE;
}

/* The event's cookie: its attach cookie, or before Linux 5.15 (no bpf_get_attach_cookie) its
 * frequency, which is the cookie of a per-CPU set (per-thread events need Linux 6.7 and never run
 * there). The context is the kernel's struct bpf_perf_event_data_kern, which holds the event. A
 * cpu-clock event's frequency was turned into a period by the kernel (perf_swevent_init_hrtimer:
 * NSEC_PER_SEC / freq, attr.freq cleared), which gives the frequency back exactly (below 31 kHz). */
static __always_inline __u64 event_cookie(struct bpf_perf_event_data *ctx)
{
	struct bpf_perf_event_data_kern *k = (void *)ctx;
	struct perf_event *ev;
	__u64 p;

	if (kp_has_cookie)
		return bpf_get_attach_cookie(ctx);
	ev = BPF_CORE_READ(k, event);
	p = BPF_CORE_READ(ev, attr.sample_period);
	if (BPF_CORE_READ_BITFIELD_PROBED(&ev->attr, freq))
		return p; /* sample_freq, the same union */
	return p ? 1000000000ULL / p : 0;
}

SEC("perf_event")
int kp_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = current_ids(), cookie = event_cookie(ctx);
	__u32 tgid = id >> 32, zero = 0, flags = 0;
	struct kp_target *t;
	struct kp_sample *s;
	long kb, ub;
	__u64 nk, nu, len, start = 0;

	count(KP_CTR_TICKS);
	/* tgid 0: a process outside kprofd's PID namespace, never a target */
	t = bpf_map_lookup_elem(&kp_targets, &tgid);
	if (cookie && cookie == kp_all_freq) {
		count(KP_CTR_ALL_TICKS);
		/* Attached otherwise: sampled by its own events or set (its settings win). */
		if (t && !(t->flags & KP_TF_ALL))
			count(KP_CTR_ALL_OWN);
	}
	if (!t) {
		if (!cookie || cookie != kp_all_freq || !stranger(id, &start))
			return 0;
		flags = KP_SF_STRANGER;
	} else {
		if (t->flags & KP_TF_THREADS ? cookie != 0 : cookie != t->freq)
			return 0;
		if (t->start_ticks != start_ticks((struct task_struct *)bpf_get_current_task()))
			return 0; /* the pid was reused: not the target */
	}
	s = bpf_map_lookup_elem(&kp_scratch, &zero);
	if (!s)
		return 0;

	s->hdr.kind = KP_REC_SAMPLE;
	s->hdr.tgid = tgid;
	s->tid = (__u32)id;
	s->cpu = bpf_get_smp_processor_id();
	s->time_ns = bpf_ktime_get_ns();
	s->flags = flags;
	s->start_ticks = start;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	kb = bpf_get_stack(ctx, s->ips, KP_MAX_STACK * 8, 0);
	if (kb < 0) {
		s->flags |= KP_SF_KERNEL_ERR;
		kb = 0;
	}
	nk = (__u64)kb / 8;
	if (nk > KP_MAX_STACK)
		nk = KP_MAX_STACK;
	if (nk == KP_MAX_STACK)
		s->flags |= KP_SF_KERNEL_TRUNC;

	ub = bpf_get_stack(ctx, &s->ips[nk], KP_MAX_STACK * 8, BPF_F_USER_STACK);
	if (ub < 0) {
		s->flags |= KP_SF_USER_ERR;
		ub = 0;
	}
	nu = (__u64)ub / 8;
	if (nu > KP_MAX_STACK)
		nu = KP_MAX_STACK;
	if (nu == KP_MAX_STACK)
		s->flags |= KP_SF_USER_TRUNC;

	probe_unstep(s, nk, nu);
	s->n_kernel = nk;
	s->n_user = nu;
	len = __builtin_offsetof(struct kp_sample, ips) + 8 * (nk + nu);
	if (len > sizeof(*s))
		len = sizeof(*s);
	/* A process that is no target yet wakes kprofd at once: it must read the process's
	 * /proc files while it lives (a short one is gone after a batch's wait); at most the
	 * system-wide set's rate of wakeups. */
	if (bpf_ringbuf_output(&kp_events, s, len, flags ? BPF_RB_FORCE_WAKEUP : wakeup_flag()) <
	    0) {
		count(KP_CTR_DROPS);
		return 0;
	}
	count(KP_CTR_SAMPLES);
	return 0;
}
