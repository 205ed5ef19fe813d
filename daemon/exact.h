/* SPDX-License-Identifier: GPL-2.0-only */
/* exact.h: exact mode (exact.c): uprobes at every JIT function entry and return, and their removal.
 */
#ifndef KPROF_DAEMON_EXACT_H
#define KPROF_DAEMON_EXACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "kprof/hcct.h"

struct bpf_link;
struct loader;

struct probe;
struct target;
#define CALLS_MAX_THREADS 2048

/* Exact mode of a target: uprobes at every JIT function entry and return. */
struct calls {
	bool enabled;
	bool force;
	unsigned burst_ms, period_ms; /* 0: probes stay attached */
	struct probe *probes;
	size_t nprobes;
	struct bpf_link **links;
	size_t nlinks;
	sd_event_source *timer;
	uint64_t on_since_ns, active_ns, enabled_ns, ended_ns; /* CLOCK_MONOTONIC */
	/* Removing uprobes waits for an RCU grace period in the kernel (about 1 s here): a worker
	 * thread does it off the event loop, and nothing in the loop waits for it. */
	struct removal *removal;
	uint64_t bursts, events, unmatched_exits;
	uint64_t *counts; /* entries per function id */
	size_t ncounts;
	struct hcct *exact; /* contexts of the calls, exactly as entered */
	struct {
		uint32_t tid; /* 0: free */
		struct hcct_cursor cur;
	} * threads;
	size_t nthreads;
	uint64_t lost_threads;
};

/* A code file, as /proc/PID/maps names it. */
struct code_file {
	uint64_t ino;
	uint32_t dev_major, dev_minor;
};

/* Where a uprobe at an address goes: the mapped file (/proc/PID/map_files/START-END) and offset. */
struct uprobe_site {
	uint64_t offset, map_start, map_end;
	struct code_file file;
};
struct procmaps;
/* The uprobe safety rules for code at addr (file-backed, private r-x, no writable alias of the
 * file unless force); -ENOENT (unmapped), -EOPNOTSUPP, -EPERM with why in err. */
int uprobe_site_check(const struct procmaps *pm, uint64_t addr, const char *name, bool force,
		      struct uprobe_site *site, char *err, size_t errlen);
/* Destroy links (and free the array) on a detached worker thread, so the RCU waits of the
 * removals overlap and the event loop goes on; then after(arg) runs there. A handle to poll
 * (removal_busy) and drop (removal_put), or NULL if it was all done inline. */
struct removal;
struct removal *links_remove_async(struct bpf_link **links, size_t n, const struct code_file *files,
				   size_t nfiles, void (*after)(void *), void *arg);
/* How long ago (ns) a removal of probes in file f began that is still running, 0 if none: the
 * kernel makes a new probe in the same file wait for it, so the loop must not attach one. */
uint64_t removals_pending(const struct code_file *f);
/* Exact mode of t may attach now (no removal of its files running); else why in err. */
int calls_may_attach(const struct target *t, char *err, size_t errlen);
bool removal_busy(const struct removal *r);
void removal_put(struct removal *r);
/* At exit: wait (at most timeout_ms) for the removals still running. */
void links_removals_wait(unsigned timeout_ms);

/* Pick the functions to probe and check the safety rules; err says why not. */
int calls_plan(struct target *t, bool force, char *err, size_t errlen);
int calls_on(struct loader *l, struct target *t, char *err, size_t errlen);
void calls_off(struct target *t);

#endif
