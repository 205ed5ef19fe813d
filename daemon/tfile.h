/* SPDX-License-Identifier: GPL-2.0-only */
/* tfile.h: opening files that a profiled process controls (see tfile.c). */
#ifndef KPROF_TFILE_H
#define KPROF_TFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What the file must be: identity (dev, ino) as /proc/PID/maps shows it, and owners. */
struct tfile_want {
	bool check_id;
	dev_t dev;
	ino_t ino;
	/* Owners allowed (st_uid); nowners 0: any owner. */
	uid_t owners[2];
	int nowners;
};

/* Open path (relative to dirfd, resolved inside it when in_root) for reading without letting
 * the file act on kprofd: O_PATH first (a FIFO, a device or a terminal is never opened),
 * regular files only, nothing on procfs, sysfs or other kernel filesystems, the identity and
 * owner in *want (may be NULL) checked, then reopened O_RDONLY | O_NOCTTY | O_NONBLOCK. Returns
 * the fd and fills *st, or a negative errno with the reason in why (-EPERM, -ESTALE, -ENOENT,
 * ...). */
int tfile_open(int dirfd, const char *path, bool in_root, const struct tfile_want *want,
	       struct stat *st, char *why, size_t whylen);

/* Read at most max bytes of fd from offset off into a new buffer (NUL-terminated); short if
 * the file is shorter or shrinks meanwhile. The length, or a negative errno. */
ssize_t tfile_read(int fd, uint64_t off, size_t max, char **ret);

/* /proc/PID/root of a live process as an O_PATH directory fd, or a negative errno. */
int tfile_proc_root(pid_t pid);

#endif
