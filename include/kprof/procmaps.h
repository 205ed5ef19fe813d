/* SPDX-License-Identifier: GPL-2.0-only */
/* procmaps.h: pure parser for /proc/PID/maps text and lookup of the mapping of an address.
 *
 * The glue reads the file; this module turns its bytes into a sorted array of mappings
 * (start, end, perms, offset, device, inode, path). Malformed lines are skipped and counted.
 * Only the first max_entries mappings are kept. No I/O.
 */
#ifndef KPROF_PROCMAPS_H
#define KPROF_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

struct procmaps_entry {
	uint64_t start, end; /* [start, end) */
	uint64_t offset;     /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[5];	  /* "r-xp" */
	const char *path; /* "" for anonymous memory; "[vdso]", "/memfd:x (deleted)", ... */
};

struct procmaps;

/* Parse the whole text. -ENOMEM only; bad lines are counted. */
int procmaps_parse(const char *buf, size_t len, size_t max_entries, struct procmaps **ret);
void procmaps_free(struct procmaps *pm);

/* The mapping containing addr, or NULL. */
const struct procmaps_entry *procmaps_find(const struct procmaps *pm, uint64_t addr);
size_t procmaps_count(const struct procmaps *pm);
const struct procmaps_entry *procmaps_at(const struct procmaps *pm, size_t i);
size_t procmaps_bad_lines(const struct procmaps *pm);

/* 1 if a and b hold the same mappings (bounds, permissions, offsets, files and paths, in the
 * same order): a read of the maps that changed nothing. NULL is the same only as NULL. */
int procmaps_same(const struct procmaps *a, const struct procmaps *b);

/* The path of the mapping [start, end) of process pid under /proc/PID/map_files/, which opens
 * the very file mapped (even deleted, or in another mount namespace) and names the uprobe
 * target of an address: the one place that spells it. Returns snprintf's count; a buffer of
 * PROCMAPS_FILE_PATH_MAX bytes always holds it. */
#define PROCMAPS_FILE_PATH_MAX 64
int procmaps_file_path(char *buf, size_t len, int pid, uint64_t start, uint64_t end);

/* 1 if the entry is executable. */
static inline int procmaps_is_exec(const struct procmaps_entry *e)
{
	return e->perms[2] == 'x';
}

/* 1 if the entry is anonymous memory, which only its process fills (JIT code when executable):
 * no path, "[anon_shmem]", "[anon:NAME]" (prctl PR_SET_VMA_ANON_NAME), "[heap]", a memfd
 * ("/memfd:NAME (deleted)"), shared anonymous memory ("/dev/zero (deleted)", what PHP's opcache
 * JIT buffer is), System V shared memory ("/SYSVKEY (deleted)"). */
int procmaps_is_anon(const struct procmaps_entry *e);

#endif
