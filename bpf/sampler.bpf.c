// SPDX-License-Identifier: GPL-2.0
/* sampler.bpf.c: kprofd's BPF programs: the CPU sampler, the lifecycle watcher (exit and exec),
 * the exact-mode probes and the path tracer (one object, so the loader keeps one skeleton).
 *
 * kp_sample runs on every cpu-clock perf event (one per CPU, pid = -1, one set per sampling
 * frequency, the frequency passed as the attach cookie). It returns at once unless the sampled
 * tgid is in kp_targets with that frequency; otherwise it collects the kernel and user stacks
 * (frame-pointer walks by bpf_get_stack) into a per-CPU scratch record and copies the filled
 * part into the ring buffer. Wakeups are batched: user space is woken only when the buffer holds
 * more than kp_wakeup_bytes, and drains it on its own timer otherwise. A full buffer is counted
 * per CPU, never silent.
 *
 * A kp_targets entry names one process, by pid and start time (see struct kp_target): every
 * program checks the start of the task's thread-group leader against it, and kp_exit deletes the
 * entry when that process ends, so a process that takes the pid over is never sampled, even
 * while kprofd is stopped or busy and has not handled the exit yet.
 *
 * kp_exit and kp_exec (tp_btf) tell user space when a target's process exits or execs.
 *
 * kp_call_enter / kp_call_return are attached by the daemon as uprobes / uretprobes at the
 * entries of JIT functions (exact mode, `attach --calls`), each with the function's id as its
 * cookie and the target's pid as the probe's filter; they report every entry and return.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "kprof/abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile __u64 kp_wakeup_bytes = 256 * 1024;
const volatile __u64 kp_nsec_per_tick = 10000000; /* NSEC_PER_SEC / USER_HZ */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* resized by the loader */
} kp_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KP_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct kp_target);
} kp_targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kp_sample);
} kp_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_CTR_NR);
	__type(key, __u32);
	__type(value, __u64);
} kp_counters SEC(".maps");

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

static __always_inline __u64 wakeup_flag(void)
{
	return bpf_ringbuf_query(&kp_events, BPF_RB_AVAIL_DATA) >= kp_wakeup_bytes
		   ? BPF_RB_FORCE_WAKEUP
		   : BPF_RB_NO_WAKEUP;
}

SEC("perf_event")
int kp_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0;
	struct kp_target *t;
	struct kp_sample *s;
	long kb, ub;
	__u64 nk, nu, len;

	t = bpf_map_lookup_elem(&kp_targets, &tgid);
	if (!t || t->freq != (__u32)bpf_get_attach_cookie(ctx))
		return 0;
	if (t->start_ticks != start_ticks((struct task_struct *)bpf_get_current_task()))
		return 0; /* the pid was reused: not the target */
	s = bpf_map_lookup_elem(&kp_scratch, &zero);
	if (!s)
		return 0;

	s->hdr.kind = KP_REC_SAMPLE;
	s->hdr.tgid = tgid;
	s->tid = (__u32)id;
	s->cpu = bpf_get_smp_processor_id();
	s->time_ns = bpf_ktime_get_ns();
	s->flags = 0;

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

	s->n_kernel = nk;
	s->n_user = nu;
	len = __builtin_offsetof(struct kp_sample, ips) + 8 * (nk + nu);
	if (len > sizeof(*s))
		len = sizeof(*s);
	if (bpf_ringbuf_output(&kp_events, s, len, wakeup_flag()) < 0) {
		count(KP_CTR_DROPS);
		return 0;
	}
	count(KP_CTR_SAMPLES);
	return 0;
}

/* Report an exit or exec of p's process if it is a target (the same process, not a pid reuse);
 * an exit also removes it from kp_targets. */
static __always_inline void lifecycle(__u32 kind, struct task_struct *p, __u32 code)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u64 start = start_ticks(p);
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
	r->pid = BPF_CORE_READ(p, pid);
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

static __always_inline int call_event(void *ctx, __u32 is_exit)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct kp_call *r = bpf_ringbuf_reserve(&kp_events, sizeof(*r), 0);

	if (!r) {
		count(KP_CTR_CALL_DROPS);
		return 0;
	}
	r->hdr.kind = KP_REC_CALL;
	r->hdr.tgid = id >> 32;
	r->tid = (__u32)id;
	r->func = (__u32)bpf_get_attach_cookie(ctx);
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

/* ---- path tracer ----
 *
 * kp_path_block is attached as a uprobe at every basic-block leader of a traced function; its
 * cookie is (trace << 32 | block), with KP_PATH_BLK_ENTRY set on the entry block and
 * KP_PATH_BLK_EXIT_ONLY on blocks that always leave. Per thread it keeps a stack of activations
 * (entry stack pointer, path register, last block). An activation is over when a probe fires
 * with a higher stack pointer than the one it was entered with: its exit is then emitted from
 * the exit edge of its last block (a return or a jump out). Blocks that always leave emit their
 * exit at their own leader. kp_path_edges holds each edge's action, from cfg_transition().
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KP_PATH_MAX_EDGES);
	__type(key, struct kp_path_key);
	__type(value, struct kp_path_val);
} kp_path_edges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KP_PATH_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct kp_path_thread);
} kp_path_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kp_path_thread);
} kp_path_zero SEC(".maps");

/* st->f[i] with a bound the verifier can see (the compiler may not drop the mask). */
static __always_inline struct kp_path_frame *path_frame(struct kp_path_thread *st, __u32 i)
{
	asm volatile("" : "+r"(i));
	return &st->f[i & (KP_PATH_DEPTH - 1)];
}

static __always_inline struct kp_path_val *path_edge(__u32 trace, __u32 from, __u32 to)
{
	struct kp_path_key k = {.trace = trace, .from = from, .to = to, .pad = 0};

	return bpf_map_lookup_elem(&kp_path_edges, &k);
}

static __always_inline void path_emit(struct kp_path_thread *st, __u64 id_tgid, __u32 trace,
				      __u32 op, __u32 depth, __u64 id)
{
	struct kp_path *r;

	st->seq++; /* counted even when lost, so user space sees the gap */
	r = bpf_ringbuf_reserve(&kp_events, sizeof(*r), 0);
	if (!r) {
		count(KP_CTR_PATH_DROPS);
		return;
	}
	r->hdr.kind = KP_REC_PATH;
	r->hdr.tgid = id_tgid >> 32;
	r->tid = (__u32)id_tgid;
	r->trace = trace;
	r->op = op;
	r->depth = depth;
	r->id = id;
	r->seq = st->seq;
	r->pad = 0;
	bpf_ringbuf_submit(r, wakeup_flag());
	count(KP_CTR_PATH_EVENTS);
}

/* Pop the top activation, emitting how it left (nothing if it was already given up). */
static __always_inline void path_pop(struct kp_path_thread *st, __u64 id_tgid)
{
	__u32 d = st->depth;
	struct kp_path_frame *f;
	struct kp_path_val *x;

	if (d == 0 || d > KP_PATH_DEPTH)
		return;
	f = path_frame(st, d - 1);
	if (f->block != KP_PATH_NONE) {
		x = path_edge(f->trace, f->block, KP_PATH_EXIT);
		if (f->r == KP_PATH_EDGE_MODE) {
			if (x)
				__sync_fetch_and_add(&x->reset, 1);
		} else if (x)
			path_emit(st, id_tgid, f->trace, KP_POP_EXIT, d, f->r + x->add);
		else
			path_emit(st, id_tgid, f->trace, KP_POP_ABORT, d, 0);
	}
	st->depth = d - 1;
}

SEC("uprobe")
int kp_path_block(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), id_tgid = bpf_get_current_pid_tgid();
	__u32 trace = cookie >> 32, blk = (__u32)cookie & KP_PATH_BLK_MASK;
	bool is_entry = cookie & KP_PATH_BLK_ENTRY, exit_only = cookie & KP_PATH_BLK_EXIT_ONLY;
	__u32 tid = (__u32)id_tgid, zero = 0, d;
	__u64 sp = PT_REGS_SP(ctx);
	struct kp_path_thread *st, *tmpl;
	struct kp_path_frame *f;
	struct kp_path_val *e;

	count(KP_CTR_PATH_HITS);
	st = bpf_map_lookup_elem(&kp_path_threads, &tid);
	if (!st) {
		if (!is_entry) {
			count(KP_CTR_PATH_STRAY); /* mid-activation when the probes came */
			return 0;
		}
		tmpl = bpf_map_lookup_elem(&kp_path_zero, &zero);
		if (!tmpl)
			return 0;
		tmpl->tgid = id_tgid >> 32;
		if (bpf_map_update_elem(&kp_path_threads, &tid, tmpl, BPF_NOEXIST) < 0) {
			count(KP_CTR_PATH_NOTHREAD);
			return 0;
		}
		st = bpf_map_lookup_elem(&kp_path_threads, &tid);
		if (!st)
			return 0;
	}

	/* Activations entered below our stack pointer have returned. */
	for (int i = 0; i < KP_PATH_DEPTH; i++) {
		d = st->depth;
		if (d == 0 || d > KP_PATH_DEPTH || path_frame(st, d - 1)->sp >= sp)
			break;
		path_pop(st, id_tgid);
	}
	if (st->skip_sp) {
		if (sp <= st->skip_sp) {
			count(KP_CTR_PATH_SKIPPED);
			return 0;
		}
		st->skip_sp = 0;
	}

	d = st->depth;
	if (d > KP_PATH_DEPTH) {
		st->depth = 0;
		return 0;
	}
	f = d ? path_frame(st, d - 1) : NULL;
	if (is_entry && !(f && f->trace == trace && f->sp == sp)) {
		/* The start transition is stored last, once every probe of the trace is on: an
		 * activation that began earlier could skip blocks whose probes were not there. */
		e = path_edge(trace, KP_PATH_NONE, blk);
		if (!e) {
			count(KP_CTR_PATH_STRAY);
			return 0;
		}
		if (d == KP_PATH_DEPTH) {
			st->skip_sp = sp;
			count(KP_CTR_PATH_SKIPPED);
			return 0;
		}
		f = path_frame(st, d);
		f->sp = sp;
		f->trace = trace;
		f->block = blk;
		st->depth = d + 1;
		if (e->flags & KP_PEF_EDGES) {
			f->r = KP_PATH_EDGE_MODE;
			__sync_fetch_and_add(&e->add, 1);
		} else {
			f->r = 0;
			path_emit(st, id_tgid, trace, KP_POP_ENTER, d + 1, 0);
		}
	} else {
		if (!f || f->trace != trace || f->block == KP_PATH_NONE) {
			count(KP_CTR_PATH_STRAY);
			return 0;
		}
		e = path_edge(trace, f->block, blk);
		if (!e ||
		    (e->act != KP_PACT_ADD && e->act != KP_PACT_BACK && e->act != KP_PACT_EDGE)) {
			/* Not an edge of the CFG (code reached some other way): give the activation
			 * up. */
			count(KP_CTR_PATH_STRAY);
			if (f->r != KP_PATH_EDGE_MODE)
				path_emit(st, id_tgid, trace, KP_POP_ABORT, d, 0);
			f->block = KP_PATH_NONE;
			return 0;
		}
		if (e->act == KP_PACT_EDGE) {
			__sync_fetch_and_add(&e->add, 1);
		} else if (e->act == KP_PACT_BACK) {
			path_emit(st, id_tgid, trace, KP_POP_PATH, d, f->r + e->add);
			f->r = e->reset;
		} else {
			f->r += e->add;
		}
		f->block = blk;
	}
	if (exit_only)
		path_pop(st, id_tgid);
	return 0;
}
