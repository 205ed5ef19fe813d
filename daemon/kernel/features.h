/* SPDX-License-Identifier: GPL-2.0-only */
/* features.h: what this kernel has of what kprofd's BPF programs use (features.c), probed
 * before the load: the loader leaves out the programs of a missing optional feature and turns
 * the fallbacks on; `kprofctl status` lists them, on or off, with the kernel that has each. */
#ifndef KPROF_DAEMON_FEATURES_H
#define KPROF_DAEMON_FEATURES_H

#include <stdbool.h>

enum feature_id {
	FEAT_ATTACH_COOKIE,    /* bpf_get_attach_cookie, Linux 5.15 */
	FEAT_SYSCALL_PROGS,    /* BPF_PROG_TYPE_SYSCALL, Linux 5.14 */
	FEAT_CGROUP_ANCESTORS, /* struct cgroup.ancestors, Linux 6.0 */
	FEAT_PERF_CONTEXT,     /* task_struct.perf_event_ctxp one pointer, Linux 6.2 */
	FEAT_TASK_ITER,	       /* bpf_iter_task kfuncs, Linux 6.7 */
	FEAT_THREAD_EVENTS,    /* per-thread sampling: the three above */
	FEAT_TASK_FROM_VPID,   /* bpf_task_from_vpid, Linux 6.13: kprofd in a PID namespace */
	FEAT_TASK_REGS,	       /* bpf_task_pt_regs, Linux 5.15: the callers of off-CPU leaves */
	FEAT_NR
};

struct feature {
	const char *name;   /* "attach-cookie" */
	const char *kernel; /* the first Linux version that has it: "5.15" */
	bool on;
	char why[240]; /* what it is, and what kprofd does without it */
};

struct features {
	struct feature f[FEAT_NR];
};

/* Probes the running kernel (its BTF, libbpf's feature probes). 0, or -ENOTSUP with why set
 * when a feature kprofd cannot run without is missing (kernel BTF, the BPF ring buffer, BTF
 * tracepoints), naming it and the Linux version that has it; -EPERM/-EACCES (why says which
 * privileges) when kprofd may not use BPF at all. */
int features_probe(struct features *fs, char *why, size_t len);

#endif
