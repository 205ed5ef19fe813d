/* SPDX-License-Identifier: GPL-2.0-only */
/* probes.h: where a uprobe may go, and asynchronous removal of uprobes (probes.c). */
#ifndef KPROF_DAEMON_PROBES_H
#define KPROF_DAEMON_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_link;
struct procmaps;

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
/* The uprobe safety rules for code at addr (file-backed, private r-x, no writable alias of the
 * file unless force); -ENOENT (unmapped), -EOPNOTSUPP, -EPERM with why in err. */
int uprobe_site_check(const struct procmaps *pm, uint64_t addr, const char *name, bool force,
		      struct uprobe_site *site, char *err, size_t errlen);

/* Destroy links (and free the array) on a detached worker thread, so the RCU waits of the
 * removals overlap and the event loop goes on; then after(arg) runs there. A handle to poll
 * (removal_busy) and drop (removal_put), or NULL if it was all done inline. */
#define REMOVAL_MAX_FILES 8 /* code files a removal tracks (removals_pending) */
struct removal;
struct removal *links_remove_async(struct bpf_link **links, size_t n, const struct code_file *files,
				   size_t nfiles, void (*after)(void *), void *arg);
/* How long ago (ns) a removal of probes in file f began that is still running, 0 if none: the
 * kernel makes a new probe in the same file wait for it, so the loop must not attach one. */
uint64_t removals_pending(const struct code_file *f);
bool removal_busy(const struct removal *r);
void removal_put(struct removal *r);
/* At exit: wait (at most timeout_ms) for the removals still running. */
void links_removals_wait(unsigned timeout_ms);

#endif
