/* SPDX-License-Identifier: GPL-2.0-only */
/* procfs.h: reading a process's /proc/PID files (see procfs.c). */
#ifndef KPROF_PROCFS_H
#define KPROF_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kprof/procinfo.h"

/* /proc/PID/NAME, at most max bytes, NUL-terminated: the length, or -ESRCH (gone) or another
 * negative errno. */
ssize_t procfs_read(pid_t pid, const char *name, char **ret, size_t max);
/* The target of /proc/PID/exe, the path /proc/PID/maps shows for the executable, into buf (len
 * bytes with the NUL): its length, or -ESRCH (gone), -ENAMETOOLONG, another negative errno. */
ssize_t procfs_exe(pid_t pid, char *buf, size_t len);
/* Parsed /proc/PID/status and /proc/PID/stat: 0, -ESRCH, -EBADMSG, ... */
int procfs_status(pid_t pid, struct procinfo_status *st);
int procfs_stat(pid_t pid, struct procinfo_stat *st);
/* Whether pid is still the process that started at start_ticks, and not a zombie. */
bool procfs_runs(pid_t pid, uint64_t start_ticks);
/* The CPU time all threads of process pid used so far, ns (its CPU clock: a probe's trap counts
 * whether the kernel books it as user or system time): 0, or -ESRCH (gone), another -errno. */
int procfs_cpu_ns(pid_t pid, uint64_t *ns);
/* /proc/PID/maps, parsed; err says why not. */
struct procmaps;
int procmaps_read_pid(pid_t pid, struct procmaps **ret, char *err, size_t errlen);
/* Copy len bytes of process pid's memory at addr into buf (process_vm_readv: kprofd's own
 * ptrace right over it): the bytes read from addr on (a short count where an unreadable page
 * begins), or -ESRCH (gone), -EFAULT (nothing readable at addr), another negative errno. */
ssize_t procfs_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Whether uid may read process pid's memory now: root (0) always, another uid by the kernel's
 * ptrace rule (procfs_ident_owner gives it). */
bool procfs_may_read(pid_t pid, uid_t uid);
/* procfs_read_mem for a reader uid: only while uid may profile the process (root, or the uid
 * procfs_ident_owner gives), checked before and after the copy; -EPERM if either check fails
 * (nothing copied then). */
ssize_t procfs_read_mem_for(pid_t pid, uid_t uid, uint64_t addr, void *buf, size_t len);
/* A process's identity from /proc/PID/status and who owns /proc/PID/stat. */
struct procfs_ident {
	char comm[17];
	uid_t ruid, euid, suid, fsuid;
	bool zombie;	 /* exited, not yet reaped */
	bool dumpable;	 /* /proc/PID/stat owned by its euid: not setuid, not made non-dumpable */
	uid_t stat_uid;	 /* the owner of /proc/PID/stat: its euid, or root when not dumpable */
	bool setuid_cap; /* CAP_SETUID permitted (in its user namespace): may change uids */
};
/* -ESRCH (gone), -EINVAL (a thread id), -EIO. */
int procfs_ident_read(pid_t pid, struct procfs_ident *id);
/* The uid that may profile the process besides root: its uid when real, effective, saved and
 * filesystem uids agree and it is dumpable (the kernel's ptrace rule), else 0 (root only). */
uid_t procfs_ident_owner(const struct procfs_ident *id);
/* The user namespace of process pid (the inode number /proc/PID/ns/user names): 0, or a
 * negative errno. */
int procfs_userns(pid_t pid, uint64_t *ino);

#endif
