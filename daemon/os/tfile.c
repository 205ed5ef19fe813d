// SPDX-License-Identifier: GPL-2.0-only
/* tfile.c: opening files that a profiled process controls, without trusting them.
 *
 * kprofd runs as root and opens paths a target can influence: its perf map inside its own
 * /tmp, the files it maps (by path inside its root, or /proc/PID/map_files). Any of them may
 * be a FIFO (an open blocks forever), a terminal (it would become kprofd's controlling
 * terminal, and ^\ typed into it would kill kprofd), a device with side effects on open, a
 * procfs or sysfs file of another process bind-mounted over the path, or another file than
 * the one mapped. So every such open goes through tfile_open: the path is first opened with
 * O_PATH (nothing is opened on the device), its type and filesystem are checked with fstat
 * and fstatfs, its identity and owner compared with what is expected, and only then is the
 * same inode reopened for reading (through /proc/self/fd) with O_NOCTTY | O_NONBLOCK. Reads
 * go through pread into bounded buffers, never through a shared mapping (a file truncated
 * under a mapping raises SIGBUS).
 * A file that grows while it is read (a perf map, a jitdump) is read on from where reading
 * stopped; struct tfile_track remembers where, and enough of what was read there to tell when
 * the file at that path was replaced or rewritten and must be read from its start again.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "os/clock.h"
#include "os/tfile.h"

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

/* Filesystems whose files are the kernel's or another process's, never a target's data. */
static const long kernel_fs[] = {
    PROC_SUPER_MAGIC,	SYSFS_MAGIC,	     DEBUGFS_MAGIC,  TRACEFS_MAGIC,	 SECURITYFS_MAGIC,
    CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC,   DEVPTS_SUPER_MAGIC, SELINUX_MAGIC,
    SMACK_MAGIC,	PSTOREFS_MAGIC,	     EFIVARFS_MAGIC, NSFS_MAGIC,
};

static int check(int fd, const struct tfile_want *want, struct stat *st, char *why, size_t len)
{
	struct statfs sf;

	if (fstat(fd, st) < 0 || fstatfs(fd, &sf) < 0) {
		int e = -errno;

		snprintf(why, len, "cannot stat it: %s", strerror(-e));
		return e;
	}
	if (!S_ISREG(st->st_mode)) {
		/* O_PATH | O_NOFOLLOW opens a symbolic link itself. */
		snprintf(why, len, "it is %s",
			 S_ISLNK(st->st_mode) ? "a symbolic link" : "not a regular file");
		return -EPERM;
	}
	for (size_t i = 0; i < ARRAY_SIZE(kernel_fs); i++) {
		if (sf.f_type == kernel_fs[i]) {
			snprintf(why, len, "it is on a kernel filesystem (magic 0x%lx)",
				 (unsigned long)sf.f_type);
			return -EPERM;
		}
	}
	if (!want)
		return 0;
	/* Through an overlay the path shows the overlay's device; /proc/PID/maps shows the
	 * layer's. The inode number is the layer's in both (xino or one layer filesystem). */
	if (want->check_id && (st->st_ino != want->ino ||
			       (st->st_dev != want->dev && sf.f_type != OVERLAYFS_SUPER_MAGIC))) {
		snprintf(why, len, "it is not the file mapped (inode %llu, mapped %llu)",
			 (unsigned long long)st->st_ino, (unsigned long long)want->ino);
		return -ESTALE;
	}
	if (want->nowners) {
		for (int i = 0; i < want->nowners; i++)
			if (st->st_uid == want->owners[i])
				return 0;
		snprintf(why, len, "it is owned by uid %u, not by the target (uid %u)",
			 (unsigned)st->st_uid, (unsigned)want->owners[0]);
		return -EPERM;
	}
	return 0;
}

int tfile_open(int dirfd, const char *path, bool in_root, const struct tfile_want *want,
	       struct stat *st, char *why, size_t whylen)
{
	struct open_how how = {
	    .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = in_root ? RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS : 0,
	};
	_cleanup_close_ int pfd = -1;
	_cleanup_close_ int fd = -1;
	struct stat again;
	char self[64];
	int err;

	/* map_files entries are magic links: follow them (they name the very file mapped). */
	if (!in_root)
		how.flags &= ~O_NOFOLLOW;
	pfd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (pfd < 0) {
		err = -errno;
		snprintf(why, whylen, "%s",
			 err == -ELOOP ? "it is a symbolic link" : strerror(-err));
		return err;
	}
	err = check(pfd, want, st, why, whylen);
	if (err < 0)
		return err;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot reopen it: %s", strerror(-err));
		return err;
	}
	if (fstat(fd, &again) < 0 || again.st_dev != st->st_dev || again.st_ino != st->st_ino) {
		snprintf(why, whylen, "changed while opened");
		return -ESTALE;
	}
	*st = again;
	return TAKE_FD(fd);
}

ssize_t tfile_read(int fd, uint64_t off, size_t max, char **ret)
{
	size_t cap = max < 65536 ? max : 65536, len = 0;
	char *buf = malloc(cap + 1);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *q;

			if (cap >= max)
				break;
			cap = cap * 2 > max ? max : cap * 2;
			q = realloc(buf, cap + 1);
			if (!q) {
				free(buf);
				return -ENOMEM;
			}
			buf = q;
		}
		n = pread(fd, buf + len, cap - len, (off_t)(off + len));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			free(buf);
			return n;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	*ret = buf;
	return len;
}

/* Whether the len bytes of fd at off are those in want. */
static bool same_bytes(int fd, uint64_t off, const char *want, size_t len)
{
	char got[sizeof(((struct tfile_track *)0)->head)];

	return len <= sizeof(got) && pread(fd, got, len, (off_t)off) == (ssize_t)len &&
	       !memcmp(got, want, len);
}

bool tfile_track_check(int fd, const struct stat *st, struct tfile_track *tr)
{
	bool same = st->st_dev == tr->dev && st->st_ino == tr->ino && tr->ino;

	if (same && tr->head_len && !same_bytes(fd, 0, tr->head, tr->head_len))
		same = false; /* same inode number, other content */
	if (same && (uint64_t)st->st_size < tr->off)
		same = false;
	if (same && tr->tail_len && !same_bytes(fd, tr->off - tr->tail_len, tr->tail, tr->tail_len))
		same = false;
	if (same)
		return false;
	memset(tr, 0, sizeof(*tr));
	tr->dev = st->st_dev;
	tr->ino = st->st_ino;
	return true;
}

void tfile_track_advance(struct tfile_track *tr, const void *buf, size_t n)
{
	const char *b = buf;

	if (tr->off < sizeof(tr->head)) {
		size_t k = sizeof(tr->head) - (size_t)tr->off;

		if (k > n)
			k = n;
		memcpy(tr->head + tr->off, b, k);
		tr->head_len = (size_t)tr->off + k;
	}
	tr->off += n;
	if (n >= sizeof(tr->tail)) {
		memcpy(tr->tail, b + n - sizeof(tr->tail), sizeof(tr->tail));
		tr->tail_len = sizeof(tr->tail);
	} else {
		size_t keep =
		    tr->tail_len + n > sizeof(tr->tail) ? sizeof(tr->tail) - n : tr->tail_len;

		memmove(tr->tail, tr->tail + tr->tail_len - keep, keep);
		memcpy(tr->tail + keep, b, n);
		tr->tail_len = keep + n;
	}
}

int tfile_proc_root(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

size_t tfile_step_take(struct tfile_step *s, size_t want, bool whole)
{
	if (!s->bytes || (s->cpu_end_ns && now_ns(CLOCK_THREAD_CPUTIME_ID) >= s->cpu_end_ns)) {
		s->cut = true;
		return 0;
	}
	return whole || want < s->bytes ? want : (size_t)s->bytes;
}

void tfile_step_done(struct tfile_step *s, size_t n)
{
	s->read += n;
	s->bytes -= n < s->bytes ? n : s->bytes;
}
