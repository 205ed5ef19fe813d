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

/* One step of reading the files a target writes (its perf map and jitdump), bounded so that
 * no file makes kprofd's loop wait: bytes it may still read, and the thread CPU time
 * (CLOCK_THREAD_CPUTIME_ID) it may run until. The caller sets the bounds; readers ask before
 * each chunk. */
struct tfile_step {
	uint64_t bytes;	     /* may still be read */
	uint64_t cpu_end_ns; /* thread CPU time not to pass (0: no CPU bound) */
	uint64_t read;	     /* read in this step */
	bool cut;	     /* a bound was reached: there may be more to read */
};

/* How much of want the step may read now: 0 (and cut set) once a bound is reached. whole: all
 * of want while any byte is left (one record larger than what is left, overdrawn once: the
 * caller's allowance is charged what was read, after the fact). */
size_t tfile_step_take(struct tfile_step *s, size_t want, bool whole);
/* n bytes were read. */
void tfile_step_done(struct tfile_step *s, size_t n);

/* How far a file that grows (a perf map, a jitdump) has been read, and what was read: enough
 * to tell that the file at the same path must be read again from its start. */
struct tfile_track {
	dev_t dev;
	ino_t ino;
	uint64_t off; /* bytes read (consumed) so far */
	/* The file's first bytes as read: a file replaced by one that got the same inode number
	 * (freed and reused) is told apart by its content, not by stat. */
	char head[64];
	size_t head_len;
	/* The last bytes read, just before off: a file rewritten in place is told apart. */
	char tail[64];
	size_t tail_len;
};

/* Whether the file open at fd (*st its fstat) must be read from its start: another inode,
 * shorter than tr->off, other first bytes, or other bytes just before tr->off (rewritten in
 * place, as `jcmd Compiler.perfmap` does: reading on would glue new bytes to old ones). If so
 * *tr is reset to that file at offset 0. A zeroed *tr (nothing read yet) gives true. */
bool tfile_track_check(int fd, const struct stat *st, struct tfile_track *tr);
/* The n bytes at tr->off were read: remember the first and last ones, advance tr->off. */
void tfile_track_advance(struct tfile_track *tr, const void *buf, size_t n);

/* /proc/PID/root of a live process as an O_PATH directory fd, or a negative errno. */
int tfile_proc_root(pid_t pid);

#endif
