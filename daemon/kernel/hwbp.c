// SPDX-License-Identifier: GPL-2.0-only
/* hwbp.c: hardware execute breakpoints (perf_event_open, PERF_TYPE_BREAKPOINT, HW_BREAKPOINT_X)
 * on the threads of a target: the only probe that reaches JIT code in anonymous memory, where
 * uprobes (which need an inode) cannot go.
 *
 * x86 has four debug registers per thread, so a set holds at most HWBP_SLOTS addresses, one
 * event per address and thread (pid = TID, cpu = -1, user space only). The events are opened
 * with inherit (threads only): a thread created by one that has them gets its own copies, with
 * the BPF program, and their counts are folded into the parent's when it exits, so reading our
 * fds counts every thread's hits. A breakpoint fires before the instruction executes, so a
 * program at a conditional jump sees the flags that decide it. A thread whose debug registers are
 * taken (a debugger's ptrace breakpoints are perf events too, and perf record -e mem:ADDR:x)
 * makes the open fail with ENOSPC: the set is refused, saying so, and nothing stays open.
 * Closing the fds takes every breakpoint away, inherited copies included.
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include "kernel/hwbp.h"
#include "kprof/cleanup.h"

struct hwbp_set {
	pid_t pid;
	bool held; /* counted in held[] */
	size_t naddrs, nthreads, nfds;
	uint64_t addrs[HWBP_SLOTS];
	int *fds; /* nthreads * naddrs, thread-major */
};

/* The registers kprofd's own sets hold per process, so that a refusal can say it is kprofd
 * (exact mode and a branch trace on the same process) rather than a debugger. */
#define HWBP_HELD_MAX 64
static struct {
	pid_t pid;
	unsigned slots;
} held[HWBP_HELD_MAX];

static void held_add(pid_t pid, int n)
{
	size_t free_slot = HWBP_HELD_MAX;

	for (size_t i = 0; i < HWBP_HELD_MAX; i++) {
		if (held[i].pid == pid && held[i].slots) {
			held[i].slots += n;
			return;
		}
		if (!held[i].slots && free_slot == HWBP_HELD_MAX)
			free_slot = i;
	}
	if (n > 0 && free_slot < HWBP_HELD_MAX)
		held[free_slot].pid = pid, held[free_slot].slots = n;
}

static unsigned held_by_us(pid_t pid)
{
	for (size_t i = 0; i < HWBP_HELD_MAX; i++)
		if (held[i].pid == pid && held[i].slots)
			return held[i].slots;
	return 0;
}

static int bp_open(pid_t tid, uint64_t addr, int prog_fd)
{
	struct perf_event_attr a = {
	    .type = PERF_TYPE_BREAKPOINT,
	    .size = sizeof(a),
	    .bp_type = HW_BREAKPOINT_X,
	    .bp_addr = addr,
	    .bp_len = sizeof(long),
	    .sample_period = prog_fd >= 0 ? 1 : 0,
	    .disabled = 1,
	    .inherit = 1,
	    .inherit_thread = 1,
	    .exclude_kernel = 1,
	    .exclude_hv = 1,
	};
	int fd = syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if ((prog_fd >= 0 && ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* The thread ids of pid, at most max: the count, -E2BIG above max, -errno. */
static int list_tids(pid_t pid, pid_t *tids, size_t max)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	size_t n = 0;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d))) {
		char *end;
		long t = strtol(e->d_name, &end, 10);

		if (*end || t <= 0)
			continue;
		if (n == max) {
			r = -E2BIG;
			break;
		}
		tids[n++] = (pid_t)t;
	}
	closedir(d);
	return r < 0 ? r : (int)n;
}

void hwbp_set_free(struct hwbp_set *s)
{
	if (!s)
		return;
	if (s->held)
		held_add(s->pid, -(int)s->naddrs);
	for (size_t i = 0; i < s->nfds; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	free(s->fds);
	free(s);
}

static int open_err(int e, pid_t pid, pid_t tid, uint64_t addr, char *err, size_t errlen)
{
	if (e == -ENOSPC && held_by_us(pid))
		snprintf(err, errlen,
			 "kprofd already holds %u of the %d debug registers of pid %d (exact mode "
			 "on anonymous code, or a branch trace): stop that first",
			 held_by_us(pid), HWBP_SLOTS, pid);
	else if (e == -ENOSPC)
		snprintf(err, errlen,
			 "thread %d of pid %d already uses its debug registers (a debugger, or "
			 "another profiler's hardware breakpoints): kprof leaves them alone",
			 tid, pid);
	else
		snprintf(
		    err, errlen, "cannot put a hardware breakpoint at 0x%llx in thread %d: %s%s",
		    (unsigned long long)addr, tid, strerror(-e),
		    e == -EACCES || e == -EPERM ? " (needs CAP_PERFMON or CAP_SYS_ADMIN)" : "");
	return e == -ENOSPC ? -EBUSY : e;
}

/* The threads of pid into tids (HWBP_MAX_THREADS of them): their number, or a negative errno
 * with err filled. */
static int list_threads(pid_t pid, pid_t *tids, char *err, size_t errlen)
{
	int nt = list_tids(pid, tids, HWBP_MAX_THREADS), r;

	if (nt > 0)
		return nt;
	r = nt ? nt : -ESRCH;
	if (r == -E2BIG)
		snprintf(
		    err, errlen,
		    "pid %d has more than %d threads: hardware breakpoints are put on at most %d",
		    pid, HWBP_MAX_THREADS, HWBP_MAX_THREADS);
	else
		snprintf(err, errlen, "cannot list the threads of pid %d: %s", pid, strerror(-r));
	return r;
}

/* Thread tid's row of n breakpoints appended to s, or none if it exited meanwhile (before its
 * first open or between two: ESRCH, the kernel's answer for a thread past its exit): 0, or a
 * negative errno with err filled. */
static int open_row(struct hwbp_set *s, pid_t pid, pid_t tid, const uint64_t *addrs, size_t n,
		    int prog_fd, char *err, size_t errlen)
{
	for (size_t a = 0; a < n; a++) {
		int fd = bp_open(tid, addrs[a], prog_fd);

		if (fd == -ESRCH)
			break; /* the thread exited meanwhile */
		if (fd < 0)
			return open_err(fd, pid, tid, addrs[a], err, errlen);
		s->fds[s->nfds++] = fd;
	}
	while (s->nfds % n) /* gone between two opens: drop its partial row */
		close(s->fds[--s->nfds]);
	s->nthreads = s->nfds / n;
	return 0;
}

int hwbp_set_open(pid_t pid, const uint64_t *addrs, size_t n, int prog_fd, struct hwbp_set **ret,
		  char *err, size_t errlen)
{
	pid_t *tids = NULL;
	struct hwbp_set *s = NULL;
	int nt, r = 0;

	if (pid <= 0 || !addrs || n == 0 || n > HWBP_SLOTS) {
		snprintf(err, errlen, "1 to %d breakpoint addresses per thread", HWBP_SLOTS);
		return -EINVAL;
	}
	tids = calloc(HWBP_MAX_THREADS, sizeof(*tids));
	s = calloc(1, sizeof(*s));
	if (!tids || !s) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	nt = list_threads(pid, tids, err, errlen);
	if (nt < 0) {
		r = nt;
		goto out;
	}
	s->pid = pid;
	s->naddrs = n;
	memcpy(s->addrs, addrs, n * sizeof(*addrs));
	s->fds = calloc((size_t)nt * n, sizeof(int));
	if (!s->fds) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int t = 0; t < nt; t++) {
		r = open_row(s, pid, tids[t], addrs, n, prog_fd, err, errlen);
		if (r < 0)
			goto out;
	}
	if (!s->nthreads) {
		r = -ESRCH;
		snprintf(err, errlen, "pid %d has no thread left", pid);
		goto out;
	}
	held_add(pid, (int)n);
	s->held = true;
	*ret = s;
	s = NULL;
out:
	hwbp_set_free(s);
	free(tids);
	return r;
}

int hwbp_set_read(const struct hwbp_set *s, uint64_t *counts, size_t n)
{
	if (!s || n < s->naddrs)
		return -EINVAL;
	memset(counts, 0, n * sizeof(*counts));
	for (size_t i = 0; i < s->nfds; i++) {
		uint64_t v;

		if (read(s->fds[i], &v, sizeof(v)) == sizeof(v))
			counts[i % s->naddrs] += v;
	}
	return 0;
}

bool hwbp_set_has(const struct hwbp_set *s, uint64_t addr)
{
	for (size_t i = 0; s && i < s->naddrs; i++)
		if (s->addrs[i] == addr)
			return true;
	return false;
}

size_t hwbp_set_threads(const struct hwbp_set *s)
{
	return s ? s->nthreads : 0;
}

size_t hwbp_set_fds(const struct hwbp_set *s)
{
	return s ? s->nfds : 0;
}

int hwbp_read_code(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

bool hwbp_code_changed(pid_t pid, uint64_t addr, const uint8_t *code, size_t len, char *msg,
		       size_t msglen)
{
	_cleanup_free_ uint8_t *now = malloc(len ? len : 1);
	int r;

	if (!now)
		return false;
	r = hwbp_read_code(pid, addr, now, len);
	if ((r == 0 && !memcmp(now, code, len)) || r == -ESRCH)
		return false;
	snprintf(msg, msglen,
		 "the code at 0x%" PRIx64 " changed (recompiled or freed): breakpoints taken "
		 "away, what was counted kept",
		 addr);
	return true;
}
