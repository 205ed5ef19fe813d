/* SPDX-License-Identifier: GPL-2.0-only */
/* cgroups.h: cgroups and systemd units for attach --cgroup and --unit (cgroups.c). */
#ifndef KPROF_DAEMON_CGROUPS_H
#define KPROF_DAEMON_CGROUPS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cgroup_ref {
	char path[PATH_MAX]; /* /sys/fs/cgroup/..., no trailing slash */
	uint64_t id;	     /* its directory's inode: the cgroup's kernfs id */
};

/* kprofd's cgroup2 mount point (mountinfo): 0, -ENOENT (none), -ENAMETOOLONG. */
int cgroup_root(char *buf, size_t len);
/* path (absolute under /sys/fs/cgroup, or relative to it; no "..") as a cgroup: 0, -ENOENT,
 * -ENOTDIR, -EMEDIUMTYPE (not cgroup2), -EINVAL, -ENAMETOOLONG. */
int cgroup_resolve(const char *path, struct cgroup_ref *ref);
/* The cgroup of systemd unit NAME.service/.scope/.slice: -EINVAL (not a unit name), -ENOENT. */
int cgroup_of_unit(const char *unit, struct cgroup_ref *ref);
/* A unit file of systemd unit NAME (or of its template NAME@.service) in systemd's unit
 * directories, its path in path: 0, -ENOENT, -EINVAL (not a unit name). */
int unit_file_find(const char *unit, char *path, size_t len);
/* Whether the cgroup is still there (same path, same id). */
bool cgroup_exists(const struct cgroup_ref *ref);
/* The pids in the cgroup and its descendants, at most max: 0 or -errno. */
int cgroup_procs(const struct cgroup_ref *ref, pid_t *out, size_t max, size_t *n);

#endif
