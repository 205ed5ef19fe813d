// SPDX-License-Identifier: GPL-2.0
/* paths.bpf.c: the path tracer, Ball-Larus path profiles of one JIT function of a target
 * (daemon/paths/paths.c starts a trace and feeds its events to a k-SF).
 *
 * kp_path_block is attached as a uprobe at every basic-block leader of a traced function; its
 * cookie is (trace << 32 | block), with KP_PATH_BLK_ENTRY set on the entry block and
 * KP_PATH_BLK_EXIT_ONLY on blocks that always leave. Per thread it keeps a stack of activations
 * (entry stack pointer, path register, last block). An activation is over when a probe fires
 * with a higher stack pointer than the one it was entered with: its exit is then emitted from
 * the exit edge of its last block (a return or a jump out). Blocks that always leave emit their
 * exit at their own leader. kp_path_edges holds each edge's action, from cfg_transition(). Each
 * thread's events carry a sequence number, counted even when the ring buffer is full, so user
 * space sees a loss.
 */
#include "kprof.bpf.h"

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
	__u64 cookie = bpf_get_attach_cookie(ctx), id_tgid = current_ids();
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
