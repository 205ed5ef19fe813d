// SPDX-License-Identifier: GPL-2.0-only
/* procfs.c: reading a process's /proc/PID files into bounded buffers; the parsing is the pure
 * procinfo module's. A process that is gone reads as -ESRCH whichever way the kernel says it
 * (ENOENT for the directory, ESRCH for a file of a process that exited meanwhile).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/procmaps.h"
#include "os/procfs.h"
#include "os/tfile.h"

ssize_t procfs_read(pid_t pid, const char *name, char **ret, size_t max)
{
	_cleanup_close_ int fd = -1;
	char path[96];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = tfile_read(fd, 0, max, ret);
	return n == -ENOENT ? -ESRCH : n;
}

ssize_t procfs_exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	if (len < 2)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	if ((size_t)n == len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return n;
}

int procfs_status(pid_t pid, struct procinfo_status *st)
{
	_cleanup_free_ char *buf = NULL;
	ssize_t n = procfs_read(pid, "status", &buf, 1u << 16);

	return n < 0 ? (int)n : procinfo_status(buf, n, st);
}

int procmaps_read_pid(pid_t pid, struct procmaps **ret, char *err, size_t errlen)
{
	_cleanup_free_ char *text = NULL;
	ssize_t n = procfs_read(pid, "maps", &text, 16u << 20);

	if (n < 0) {
		snprintf(err, errlen, "cannot read /proc/%d/maps: %s", pid, strerror((int)-n));
		return n;
	}
	if (procmaps_parse(text, n, 65536, ret) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int procfs_cpu_ns(pid_t pid, uint64_t *ns)
{
	struct timespec ts;
	clockid_t c;
	int r = clock_getcpuclockid(pid, &c);

	if (r)
		return -r;
	if (clock_gettime(c, &ts) < 0)
		return errno == EINVAL ? -ESRCH : -errno;
	*ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return 0;
}

int procfs_stat(pid_t pid, struct procinfo_stat *st)
{
	_cleanup_free_ char *buf = NULL;
	ssize_t n = procfs_read(pid, "stat", &buf, 4096);

	return n < 0 ? (int)n : procinfo_stat(buf, n, st);
}

bool procfs_runs(pid_t pid, uint64_t start_ticks)
{
	struct procinfo_stat st;

	return procfs_stat(pid, &st) == 0 && st.start_ticks == start_ticks && st.state != 'Z' &&
	       st.state != 'X';
}

ssize_t procfs_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	/* process_vm_readv stops at the first page it cannot read: read on from there only to
	 * learn where the readable part ends. */
	while (done < len) {
		struct iovec local = {(char *)buf + done, len - done};
		struct iovec remote = {(void *)(uintptr_t)(addr + done), len - done};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

		if (n < 0) {
			if (done)
				break;
			return errno == ENOMEM ? -EFAULT : -errno;
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

bool procfs_may_read(pid_t pid, uid_t uid)
{
	struct procfs_ident id;

	return uid == 0 || (procfs_ident_read(pid, &id) == 0 && procfs_ident_owner(&id) == uid);
}

ssize_t procfs_read_mem_for(pid_t pid, uid_t uid, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	if (!procfs_may_read(pid, uid))
		return -EPERM;
	n = procfs_read_mem(pid, addr, buf, len);
	/* An exec or a change of credentials since the first check: process_vm_readv waited
	 * for an exec in progress, so this check sees its credentials. */
	if (n > 0 && !procfs_may_read(pid, uid)) {
		memset(buf, 0, n);
		return -EPERM;
	}
	return n;
}

int procfs_ident_read(pid_t pid, struct procfs_ident *id)
{
	struct procinfo_status ps;
	char path[64];
	struct stat st;
	int err;

	memset(id, 0, sizeof(*id));
	err = procfs_status(pid, &ps);
	if (err < 0)
		return err == -EBADMSG ? -EIO : err;
	if (ps.tgid != pid)
		return -EINVAL; /* a thread id, not a process */
	memcpy(id->comm, ps.comm, sizeof(id->comm));
	/* A leader that exited before its other threads shows Z too: not a zombie process. */
	id->zombie = (ps.state == 'Z' || ps.state == 'X') && ps.threads <= 1;
	id->ruid = ps.ruid;
	id->euid = ps.euid;
	id->suid = ps.suid;
	id->fsuid = ps.fsuid;
	/* The kernel gives the files inside /proc/PID of a process that is not dumpable
	 * (setuid, an execute-only binary, prctl(PR_SET_DUMPABLE, 0)) to root (its user
	 * namespace's): their owner is the ptrace rule's "dumpable". Not the directory
	 * /proc/PID itself: the kernel always gives that one the euid (task_dump_owner). */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (stat(path, &st) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	id->dumpable = st.st_uid == id->euid;
	id->stat_uid = st.st_uid;
	id->setuid_cap = ps.capprm & (1ULL << 7); /* CAP_SETUID */
	return 0;
}

int procfs_userns(pid_t pid, uint64_t *ino)
{
	char path[48], link[64];
	unsigned long long v;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	link[n] = '\0';
	if (sscanf(link, "user:[%llu]", &v) != 1)
		return -EIO;
	*ino = v;
	return 0;
}

uid_t procfs_ident_owner(const struct procfs_ident *id)
{
	/* The kernel's ptrace rule (which perf's follows): a user may trace only a dumpable
	 * process whose real, effective, saved and filesystem uids are all its own. */
	if (id->ruid == id->euid && id->ruid == id->suid && id->ruid == id->fsuid && id->dumpable)
		return id->ruid;
	return 0;
}
