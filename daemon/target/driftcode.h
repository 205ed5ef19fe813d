/* SPDX-License-Identifier: GPL-2.0-only */
/* driftcode.h: basic blocks of JIT functions for the drift detector (driftcode.c). */
#ifndef KPROF_DAEMON_DRIFTCODE_H
#define KPROF_DAEMON_DRIFTCODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procmaps;

#define DRIFTCODE_MAX_BYTES (64u << 10) /* code read per function */

/* The start offsets (ascending, malloc'd) of the basic blocks of the code [start, start + size)
 * of process pid, read from the file it is mapped from (/proc/PID/map_files): only code in a
 * file-backed private r-x mapping, as for uprobes (the file holds the very bytes), no more than
 * DRIFTCODE_MAX_BYTES. The count, or -EOPNOTSUPP (anonymous or writable code), -ENOENT, -E2BIG,
 * -EIO, -ENOMEM. */
int driftcode_blocks(pid_t pid, const struct procmaps *pm, uint64_t start, uint64_t size,
		     uint64_t **ret);

#endif
