// SPDX-License-Identifier: GPL-2.0
/* pidns.bpf.c: the depth of kprofd's PID namespace, for kprofd in a container.
 *
 * The kernel's ids (bpf_get_current_pid_tgid(), task->tgid, task->pid) are those of the initial
 * PID namespace; kprofd inside a container knows its targets by the ids of its own. A struct pid
 * holds a number for every level from the initial namespace down to the task's own, so the BPF
 * programs read the one at the level of kprofd's namespace (ns_nr() in kprof.bpf.h). That level
 * is not known before the load; kp_pidns_probe, run once by the loader with BPF_PROG_TEST_RUN
 * (in kprofd's own context) before any program is attached, finds it from kprofd's own struct
 * pid, checks that the namespace there is the one the loader saw in /proc/self/ns/pid, and
 * stores it in kp_pidns_level.
 */
#include "kprof.bpf.h"

SEC("syscall")
int kp_pidns_probe(struct kp_pidns *a)
{
	struct task_struct *me = (struct task_struct *)bpf_get_current_task();
	struct pid *pid = BPF_CORE_READ(me, thread_pid);
	__u32 lvl = BPF_CORE_READ(pid, level);
	struct upid *u;

	a->level = 0;
	a->inum = 0;
	a->err = 0;
	if (lvl > KP_PIDNS_MAX_LEVEL) {
		a->err = -2; /* ENOENT */
		return 0;
	}
	u = (void *)pid + bpf_core_field_offset(struct pid, numbers) +
	    lvl * bpf_core_type_size(struct upid);
	a->level = lvl;
	a->inum = BPF_CORE_READ(u, ns, ns.inum);
	if (a->inum != kp_pidns_ino) {
		a->err = -2;
		return 0;
	}
	if ((__u32)BPF_CORE_READ(u, nr) != a->pid) {
		a->err = -3; /* ESRCH: not run by kprofd itself */
		return 0;
	}
	kp_pidns_level = lvl;
	return 0;
}
