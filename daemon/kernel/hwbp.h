/* SPDX-License-Identifier: GPL-2.0-only */
/* hwbp.h: per-thread hardware execute breakpoints on a target's code (hwbp.c). */
#ifndef KPROF_DAEMON_HWBP_H
#define KPROF_DAEMON_HWBP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HWBP_SLOTS 4	      /* x86 debug registers per thread */
#define HWBP_MAX_THREADS 1024 /* threads of a target given breakpoints */

/* Breakpoints at up to HWBP_SLOTS addresses on every thread of a process. */
struct hwbp_set;

/* Open breakpoints at addrs[0..n) on every thread of pid (its task directory), inherited by
 * the threads they create. prog_fd >= 0: every hit runs that BPF program (a perf_event one),
 * else the events only count. Errors, with why in err: -EBUSY (a thread already uses its debug
 * registers: a debugger or another profiler), -E2BIG (more than HWBP_MAX_THREADS threads),
 * -ESRCH (the process is gone), -EINVAL, -errno. Nothing stays open on failure. */
int hwbp_set_open(pid_t pid, const uint64_t *addrs, size_t n, int prog_fd, struct hwbp_set **ret,
		  char *err, size_t errlen);
/* Hits per address since the open (counting events: every thread's, the exited ones' too). */
int hwbp_set_read(const struct hwbp_set *s, uint64_t *counts, size_t n);
size_t hwbp_set_threads(const struct hwbp_set *s);
/* Is addr one of the set's breakpoints? (NULL: no) */
bool hwbp_set_has(const struct hwbp_set *s, uint64_t addr);
size_t hwbp_set_fds(const struct hwbp_set *s);
/* Read len bytes of pid's memory at addr (process_vm_readv): 0, -EFAULT, -errno. */
int hwbp_read_code(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Are pid's len bytes at addr no longer code[] (recompiled or freed)? Then why goes in msg.
 * False when they are the same, when memory is short, or when the process is gone (that
 * ends a trace on its own). */
bool hwbp_code_changed(pid_t pid, uint64_t addr, const uint8_t *code, size_t len, char *msg,
		       size_t msglen);
/* Close every event: no breakpoint stays in the target. NULL: no-op. */
void hwbp_set_free(struct hwbp_set *s);

#endif
