// SPDX-License-Identifier: GPL-2.0-only
/* features.c: what the running kernel has of what kprofd's BPF programs use, found before the
 * load, so that kprofd runs on every kernel from Linux 5.10 on, feature by feature.
 *
 * Types, fields and kfuncs are looked up in the kernel's BTF (/sys/kernel/btf/vmlinux); helpers
 * and program types with libbpf's feature probes (a tiny program loaded and dropped). Each
 * optional feature has a fallback or leaves out only what needs it (the loader acts on them,
 * loader.c); three are required (kernel BTF for CO-RE, the BPF ring buffer, BTF tracepoints): a
 * kernel without one is refused with its name and the Linux version that has it. The versions
 * are those of mainline Linux; a distribution kernel may have backported a feature, which the
 * probes then find.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kprof/cleanup.h"
#include "kernel/features.h"

static void btf_freep(struct btf **b)
{
	btf__free(*b);
}

/* The member name of struct sname in btf, or NULL. */
static const struct btf_member *btf_member(const struct btf *btf, const char *sname,
					   const char *name)
{
	int id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, id);
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return m;
	return NULL;
}

static bool btf_func(const struct btf *btf, const char *name)
{
	return btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) >= 0;
}

static void set(struct features *fs, enum feature_id id, const char *name, const char *kernel,
		bool on, const char *why)
{
	struct feature *f = &fs->f[id];

	f->name = name;
	f->kernel = kernel;
	f->on = on;
	snprintf(f->why, sizeof(f->why), "%s", why);
}

/* The features found in btf and by libbpf's probes. */
static void probe_optional(struct features *fs, const struct btf *btf)
{
	const struct btf_member *m;
	bool ctxp, iter, sys;

	set(fs, FEAT_ATTACH_COOKIE, "attach-cookie", "5.15",
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_get_attach_cookie, NULL) > 0,
	    "bpf_get_attach_cookie; without it the sampler tells its per-CPU sets apart by their "
	    "frequency, and uprobes (attach --calls, paths) find their function or block by its "
	    "address (kp_probe_cookies)");
	sys = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) > 0;
	set(fs, FEAT_SYSCALL_PROGS, "syscall-programs", "5.14", sys,
	    "BPF_PROG_TYPE_SYSCALL, run by kprofd itself: the thread scan of per-thread sampling "
	    "and the PID namespace probe need it");
	set(fs, FEAT_CGROUP_ANCESTORS, "cgroup-ancestors", "6.0",
	    btf_member(btf, "cgroup", "ancestors") != NULL,
	    "struct cgroup.ancestors; without it cgroup watches (attach --cgroup/--unit) read the "
	    "older cgroup.ancestor_ids");
	m = btf_member(btf, "task_struct", "perf_event_ctxp");
	ctxp = m && btf_is_ptr(btf__type_by_id(btf, m->type));
	set(fs, FEAT_PERF_CONTEXT, "perf-context", "6.2", ctxp,
	    "one perf context per task (task_struct.perf_event_ctxp a pointer), where the thread "
	    "programs look for kprofd's event");
	iter = btf_func(btf, "bpf_iter_task_new") && btf_func(btf, "bpf_task_from_pid");
	set(fs, FEAT_TASK_ITER, "task-iterator", "6.7", iter,
	    "the bpf_iter_task kfuncs, with which kp_scan_threads walks a process's threads");
	set(fs, FEAT_THREAD_EVENTS, "per-thread-sampling", "6.7", ctxp && iter && sys,
	    ctxp && iter && sys
		? "one sampling event per thread of a target: a sleeping target costs nothing"
		: "needs syscall-programs, perf-context and task-iterator; without them every "
		  "target is sampled by per-CPU events (each CPU interrupted at the frequency)");
	set(fs, FEAT_TASK_REGS, "task-regs", "5.15",
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_pt_regs, NULL) > 0,
	    "bpf_task_pt_regs: off-CPU stacks get the callers of a leaf without a frame pointer "
	    "(libc's syscall wrappers) from the stack and .eh_frame; without it they are marked "
	    "[caller lost]");
	set(fs, FEAT_TASK_FROM_VPID, "pid-namespaces", "6.13", btf_func(btf, "bpf_task_from_vpid"),
	    "bpf_task_from_vpid: kprofd inside a container (its own PID namespace) needs it; on "
	    "the host it is not used");
}

/* Whether name is an item of the comma-separated list env. */
static bool listed(const char *env, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = env; p && (p = strstr(p, name)); p += n)
		if ((p == env || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

/* KPROF_FEATURES_OFF and KPROF_FEATURES_ON (comma-separated lists), a test's settings: features
 * turned off as if the kernel lacked them, so that the fallbacks run on a kernel that has them,
 * or on although the kernel lacks them, so that the load fails as it would have without the
 * probe. Only the features the loader chooses (attach-cookie, per-thread-sampling, task-regs); the others
 * are CO-RE's choice. */
static void features_env(struct features *fs)
{
	static const enum feature_id may[] = {FEAT_ATTACH_COOKIE, FEAT_THREAD_EVENTS,
					      FEAT_TASK_REGS};
	const char *off = getenv("KPROF_FEATURES_OFF"), *on = getenv("KPROF_FEATURES_ON");

	for (size_t i = 0; i < sizeof(may) / sizeof(may[0]); i++) {
		struct feature *f = &fs->f[may[i]];

		if (listed(off, f->name) || listed(on, f->name)) {
			f->on = listed(on, f->name);
			snprintf(f->why, sizeof(f->why),
				 "turned %s by KPROF_FEATURES_%s (a test's setting)",
				 f->on ? "on" : "off", f->on ? "ON" : "OFF");
		}
	}
}

int features_probe(struct features *fs, char *why, size_t len)
{
	_cleanup_(btf_freep) struct btf *btf = btf__load_vmlinux_btf();

	int fd;

	memset(fs, 0, sizeof(*fs));
	/* A probe refused for lack of privileges reads as "not supported": check them first. */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
	if (fd < 0) {
		int err = -errno;

		snprintf(why, len, "cannot create a BPF map: %s%s", strerror(-err),
			 err == -EPERM || err == -EACCES
			     ? " (root, or CAP_BPF and CAP_PERFMON, are needed)"
			     : "");
		return err;
	}
	close(fd);
	if (!btf) {
		snprintf(why, len,
			 "this kernel has no BTF (/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF, "
			 "Linux 5.4 or newer), which kprofd's BPF programs are fitted to it with "
			 "(CO-RE)");
		return -ENOTSUP;
	}
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) <= 0) {
		snprintf(why, len, "this kernel has no BPF ring buffer (Linux 5.8 or newer)");
		return -ENOTSUP;
	}
	if (btf__find_by_name_kind(btf, "btf_trace_sched_process_exit", BTF_KIND_TYPEDEF) < 0) {
		snprintf(why, len,
			 "this kernel has no BTF tracepoints (tp_btf, Linux 5.5 or newer)");
		return -ENOTSUP;
	}
	probe_optional(fs, btf);
	features_env(fs);
	return 0;
}
