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
 *
 * kp_fork (sched_process_fork) follows the children of a target attached with --children
 * (KP_TF_CHILDREN): a new process (not a thread) whose parent is such a target gets a copy of
 * the parent's entry, with its own start, before it runs its first instruction, and kprofd is
 * told at once (KP_REC_FORK) so it makes it a target of its own and opens its events.
 *
 * Watched cgroups (attach --cgroup/--unit, kp_cgroups): a process that enters one, or one of
 * its descendants, is reported (KP_REC_CGROUP) for kprofd to attach: moved there
 * (cgroup_attach_task, as systemd starts a service's process), or forked into it other than
 * by a target that follows its children (clone3 CLONE_INTO_CGROUP, or a member kprofd has not
 * attached yet). Members' own children are followed through KP_TF_CHILDREN.
 *
 * Watch rules (kprofctl watch, ARCHITECTURE.md §1.2.4): while any exist (kp_watch_n), kp_exec
 * also reports a process that is no target and whose new comm is in kp_watch_comms (comm rules,
 * and exe rules by their file name's first 15 bytes) or whose real or effective uid is in
 * kp_watch_uids (KP_REC_WATCH). kprofd checks its rules and attaches it: from its first exec on,
 * whatever earlier process had the pid.
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
	bpf_get_current_comm(r->comm, sizeof(r->comm));
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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KP_MAX_WATCH_KEYS);
	__type(key, char[16]); /* a comm, NUL-padded */
	__type(value, __u32);
} kp_watch_comms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KP_MAX_WATCH_KEYS);
	__type(key, __u32); /* a uid (the initial user namespace's) */
	__type(value, __u32);
} kp_watch_uids SEC(".maps");

__u32 kp_watch_n; /* entries in both maps, kept by the loader: 0 skips the lookups */

/* An exec of a process that is no target: report it if a watch rule may match it. */
static __always_inline void exec_watch(struct task_struct *p)
{
	__u64 ids = task_ids(p), start;
	__u32 tgid = ids >> 32, ruid, euid;
	struct kp_execwatch *r;
	struct kp_target *t;
	char comm[16];

	if (!ids)
		return;
	start = start_ticks(p);
	t = bpf_map_lookup_elem(&kp_targets, &tgid);
	/* A target of system-wide mode is one a rule may take over (ARCHITECTURE.md §1.2.5). */
	if (t && t->start_ticks == start && !(t->flags & KP_TF_ALL))
		return;
	__builtin_memset(comm, 0, sizeof(comm));
	bpf_get_current_comm(comm, sizeof(comm));
	ruid = BPF_CORE_READ(p, cred, uid.val);
	euid = BPF_CORE_READ(p, cred, euid.val);
	if (!bpf_map_lookup_elem(&kp_watch_comms, comm) &&
	    !bpf_map_lookup_elem(&kp_watch_uids, &ruid) &&
	    !bpf_map_lookup_elem(&kp_watch_uids, &euid))
		return;
	r = bpf_ringbuf_reserve(&kp_events, sizeof(*r), 0);
	if (!r) {
		count(KP_CTR_WATCH_DROPS);
		return;
	}
	r->hdr.kind = KP_REC_WATCH;
	r->hdr.tgid = tgid;
	r->ruid = ruid;
	r->euid = euid;
	r->start_ticks = start;
	r->time_ns = bpf_ktime_get_ns();
	__builtin_memcpy(r->comm, comm, sizeof(comm));
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(kp_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	lifecycle(KP_REC_EXEC, p, 0);
	if (kp_watch_n)
		exec_watch(p);
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KP_MAX_CGROUPS);
	__type(key, __u64); /* cgroup id */
	__type(value, __u32);
} kp_cgroups SEC(".maps");

__u32 kp_cgroups_n; /* entries in kp_cgroups, kept by the loader: 0 skips the walk */

/* struct cgroup before Linux 6.0: the ids of its ancestors, not pointers to them. */
struct cgroup___pre60 {
	int level;
	u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* The nearest watched ancestor of cg (at level, itself included), Linux 6.0 and newer:
 * ancestors[level] is cg itself, ancestors[0] the root. One function per layout, each called only
 * where its field exists: clang hoists field offsets out of a shared loop, above the check, and a
 * missing field's relocation then fails the program on every kernel. */
static __noinline __u64 watched_ancestors(struct cgroup *cg, int level)
{
	for (int i = 0; i < KP_CGROUP_DEPTH; i++) {
		struct cgroup *a = NULL;
		__u64 id;

		if (level - i < 0)
			break;
		bpf_core_read(&a, sizeof(a), &cg->ancestors[level - i]);
		if (!a)
			break;
		id = BPF_CORE_READ(a, kn, id);
		if (bpf_map_lookup_elem(&kp_cgroups, &id))
			return id;
	}
	return 0;
}

/* The same before Linux 6.0: ancestor_ids[level] is cg's own id. */
static __noinline __u64 watched_ancestor_ids(struct cgroup *cg, int level)
{
	struct cgroup___pre60 *old = (void *)cg;

	for (int i = 0; i < KP_CGROUP_DEPTH; i++) {
		__u64 id = 0;

		if (level - i < 0)
			break;
		bpf_core_read(&id, sizeof(id), &old->ancestor_ids[level - i]);
		if (!id)
			break;
		if (bpf_map_lookup_elem(&kp_cgroups, &id))
			return id;
	}
	return 0;
}

/* The id of cg or of its nearest ancestor that is watched, else 0. */
static __always_inline __u64 watched_cgroup(struct cgroup *cg)
{
	int level;

	/* cgroup2 only (hierarchy 0): a v1 hierarchy's ids are its own and may repeat them. */
	if (!kp_cgroups_n || !cg || BPF_CORE_READ(cg, root, hierarchy_id) != 0)
		return 0;
	level = BPF_CORE_READ(cg, level);
	if (bpf_core_field_exists(cg->ancestors))
		return watched_ancestors(cg, level);
	if (bpf_core_field_exists(struct cgroup___pre60, ancestor_ids))
		return watched_ancestor_ids(cg, level);
	return 0;
}

static __always_inline void cgroup_join(struct task_struct *p, __u64 cgid)
{
	struct kp_cgjoin *r = bpf_ringbuf_reserve(&kp_events, sizeof(*r), 0);

	if (!r) {
		count(KP_CTR_CGROUP_DROPS);
		return;
	}
	r->hdr.kind = KP_REC_CGROUP;
	r->hdr.tgid = task_ids(p) >> 32;
	r->cgid = cgid;
	r->start_ticks = start_ticks(p);
	r->time_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(kp_cgroup_attach, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	__u64 ids = task_ids(task), cgid;
	__u32 tgid = ids >> 32;

	/* One report per process: its leader's move (a whole group moves thread by thread); none
	 * for a process outside kprofd's PID namespace. */
	if (!ids || (__u32)ids != tgid || bpf_map_lookup_elem(&kp_targets, &tgid))
		return 0;
	cgid = watched_cgroup(dst);
	if (cgid)
		cgroup_join(task, cgid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(kp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u64 cids = task_ids(child);
	__u32 ptgid = task_ids(parent) >> 32, ctgid = cids >> 32;
	struct kp_target *t, c;
	struct kp_fork *r;

	/* A thread (the per-thread watcher's), or a process outside kprofd's PID namespace. */
	if (!cids || (__u32)cids != ctgid)
		return 0;
	t = bpf_map_lookup_elem(&kp_targets, &ptgid);
	if (!t || !(t->flags & KP_TF_CHILDREN) || t->start_ticks != start_ticks(parent)) {
		__u64 cgid = watched_cgroup(BPF_CORE_READ(child, cgroups, dfl_cgrp));

		if (cgid)
			cgroup_join(child, cgid);
		return 0;
	}
	c.freq = t->freq;
	c.flags = t->flags;
	c.start_ticks = start_ticks(child); /* its own: a new process leads its group */
	r = bpf_ringbuf_reserve(&kp_events, sizeof(*r), 0);
	if (!r) { /* kprofd would never hear of it: leave it unsampled */
		count(KP_CTR_FORK_DROPS);
		return 0;
	}
	r->added = bpf_map_update_elem(&kp_targets, &ctgid, &c, BPF_ANY) == 0;
	if (!r->added)
		count(KP_CTR_FORK_DROPS);
	r->hdr.kind = KP_REC_FORK;
	r->hdr.tgid = ctgid;
	r->parent = ptgid;
	r->time_ns = bpf_ktime_get_ns();
	r->start_ticks = c.start_ticks;
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}
