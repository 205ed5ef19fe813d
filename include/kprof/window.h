/* SPDX-License-Identifier: GPL-2.0-only */
/* window.h: time windows of the targets' samples (ARCHITECTURE.md §1.6, ALGORITHMS.md §14).
 *
 * Three pure pieces the glue (daemon/manager/windows.c) puts together:
 *  - the index of kept windows and its retention: each window is one blob (a framed, packed
 *    kprof.SavedProfile of that window's samples), held in memory, on disk, or both. On disk
 *    the windows cut together (at one tick, for every target) share one file, their frames one
 *    after the other, so a tick costs one write and one fsync whatever the targets. Retention
 *    by age, by bytes in memory (the oldest blobs that are on disk leave memory first; one that
 *    is not is dropped only when nothing else is left to free) and by bytes on disk (the oldest
 *    files go). A file's bytes count until its last window leaves. The store never does I/O:
 *    it says which files must go through a callback.
 *  - the frame of a window file: magic, length, CRC-32 of the payload. A torn or corrupt file
 *    is told apart from a good one before a byte of it is decoded.
 *  - a window's summary from its exact stacks (its m heaviest contexts, exact), and the merge of
 *    per-window summaries (those, or Space-Saving HCCT snapshots) into the HCCT of a range, with
 *    the error bound of ALGORITHMS.md §14: merged counters of total N overestimate by at most
 *    err <= N/m, and a context no window monitored has f <= N/m.
 * No I/O, no globals, no logging.
 */
#ifndef KPROF_WINDOW_H
#define KPROF_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/hcct.h"

#define WINDOW_MAGIC "KPWIN001"
#define WINDOW_HEADER 16u		/* magic (8), payload length (4, LE), CRC-32 (4, LE) */
#define WINDOW_MAX_PAYLOAD (256u << 20) /* one window's packed profile */

struct window_store;

struct window_limits {
	uint64_t max_age_ns; /* 0: no age limit */
	uint64_t mem_bytes;  /* blobs and index entries in memory */
	uint64_t disk_bytes; /* files */
	size_t max_windows;  /* index entries kept by retention (the oldest beyond go); 0: 1M */
	/* Per-user quotas, as for kept profiles (0: none): one non-root uid's windows hold at
	 * most these bytes, and all non-root uids' together never the last eighth of mem_bytes
	 * and disk_bytes, which stays for root. Over a bound, the oldest of whoever is over go
	 * first; over a global bound, users' oldest go before root's. */
	uint64_t mem_per_uid, disk_per_uid;
};

struct window_entry {
	uint64_t seq; /* unique, increasing in the order windows are cut: names the file */
	uint32_t pid, uid;
	uint64_t attached_ns;	       /* the target: pid and attach time (CLOCK_REALTIME) */
	uint64_t boot_id;	       /* the boot the boottime stamps belong to */
	uint64_t start_boot, end_boot; /* CLOCK_BOOTTIME: order, duration, age */
	uint64_t start_real, end_real; /* CLOCK_REALTIME, as shown and selected */
	uint64_t samples;
	uint8_t *blob; /* the framed window in memory (the store's); NULL: on disk only */
	size_t len;    /* its bytes */
	bool on_disk;  /* written to its file */
	/* Its file: 0, a file of its own (as kprofd wrote them before batches); else the batch
	 * of windows cut together that holds it at byte off (the batch's id: its first seq). */
	uint64_t file;
	size_t off;
};

struct window_stats {
	size_t windows, in_memory, on_disk, unsaved;
	uint64_t mem_bytes, disk_bytes;
	uint64_t aged;	       /* dropped: older than max_age */
	uint64_t evicted;      /* blobs that left memory (their file stays) */
	uint64_t dropped_mem;  /* windows lost: memory full, and not on disk */
	uint64_t dropped_disk; /* windows whose file went: disk bytes */
	uint64_t dropped_full; /* windows dropped or refused by max_windows */
	uint64_t dropped_quota; /* windows dropped (memory or disk) from a user over its quota */
	uint64_t retains;	/* retentions that walked the index (something was due) */
	uint64_t steps;		/* index entries those walks and the writer's looked at */
};

int window_store_new(const struct window_limits *lim, struct window_store **ret);
/* Frees every blob. */
void window_store_free(struct window_store *ws);
void window_store_set_limits(struct window_store *ws, const struct window_limits *lim);

/* Add *e; its blob becomes the store's, also on error (a window on disk may come without one).
 * Windows must come in seq order, except at start (window_store_sort after). -EINVAL (no blob
 * and not on disk, end before start), -ENOSPC (2 max_windows), -ENOMEM. */
int window_store_add(struct window_store *ws, const struct window_entry *e);
/* Order the windows by seq (after adding restored ones in any order). */
void window_store_sort(struct window_store *ws);
/* The window seq was written to its file: file (0: its own) at byte off. */
void window_store_saved(struct window_store *ws, uint64_t seq, uint64_t file, size_t off);
/* The index from which on the windows not written yet are (none before it): the count when
 * every window is on disk. O(log n): the writer looks at what is new, not at all. */
size_t window_store_first_unsaved(const struct window_store *ws);
/* Count steps more index entries looked at (the writer's walk; window_stats.steps). */
void window_store_count_steps(struct window_store *ws, size_t steps);

/* Called when a file must go: the last window on disk that it held left the store (e: that
 * window, which names the file). */
typedef void (*window_drop_fn)(void *userdata, const struct window_entry *e);
/* Apply the limits: age (boottime when boot_id is the window's boot, else realtime), memory,
 * disk, count. Walks the windows only when one of them is due (nothing to do: O(1)). */
void window_store_retain(struct window_store *ws, uint64_t now_boot, uint64_t now_real,
			 uint64_t boot_id, window_drop_fn fn, void *userdata);

size_t window_store_count(const struct window_store *ws);
const struct window_entry *window_store_at(const struct window_store *ws, size_t i);
/* The index of window seq now (indexes move as windows leave), or -ENOENT if it is gone. */
int window_store_find(const struct window_store *ws, uint64_t seq);
/* Keep the blob (len bytes, malloc'd) of window i in memory again (after a read of its file);
 * it is the store's from then on. */
void window_store_hold(struct window_store *ws, size_t i, uint8_t *blob);

/* The windows of pid (attached_ns 0: of any of its targets) whose middle is in [since, until)
 * (CLOCK_REALTIME; until 0: no end), oldest first: their indexes in *ret (malloc'd). */
int window_store_select(const struct window_store *ws, uint32_t pid, uint64_t attached_ns,
			uint64_t since, uint64_t until, size_t **ret, size_t *ret_n);

void window_store_stats(const struct window_store *ws, struct window_stats *st);

/* ---- Files ---- */
/* The file bytes of payload: *ret malloc'd, WINDOW_HEADER + len bytes. -E2BIG, -ENOMEM. */
int window_frame(const uint8_t *payload, size_t len, uint8_t **ret, size_t *ret_len);
/* The payload of a file: 0, -EBADMSG (no magic: not a window file), -EPIPE (shorter than its
 * header says: torn), -EILSEQ (CRC mismatch: corrupt), -EFBIG (a payload length over the max). */
int window_unframe(const uint8_t *buf, size_t len, const uint8_t **payload, size_t *plen);
/* The same for the first of the frames buf holds (a batch file): bytes after it are allowed;
 * *used: the frame's bytes. */
int window_unframe_next(const uint8_t *buf, size_t len, const uint8_t **payload, size_t *plen,
			size_t *used);

/* ---- The HCCT of a range ---- */
/* One window's summary: a snapshot of its HCCT (hcct_snapshot format: parents first), the map
 * of its routine ids into the range's (ids >= nmap are kept as they are), and min, the smallest
 * counter of its Space-Saving set when that set was full (|M| = m), else 0. */
struct window_summary {
	const struct hcct_tree *tree;
	const uint32_t *map;
	size_t nmap;
	uint64_t min;
};
/* The smallest counter of a snapshot's monitored contexts if m of them are monitored, else 0:
 * every context the summary does not monitor has f <= this. */
uint64_t window_summary_min(const struct hcct_tree *snap, uint32_t m);
/* The merge (ALGORITHMS.md §14): one context per distinct key path; for context x, with S(x)
 * the summaries monitoring it and Z = sum of all mins,
 *   count = sum_{i in S(x)} count_i + (Z - sum_{i in S(x)} min_i)
 *   err   = sum_{i in S(x)} err_i   + (Z - sum_{i in S(x)} min_i)
 * monitored when S(x) is not empty, a cold ancestor (count 0) otherwise. Then f(x) lies in
 * [count - err, count] and err <= sum N_i/m_i; with one m for all, err <= N/m, and a context no
 * summary monitors has f <= Z <= N/m. n is the sum of the trees' n. Snapshot format (parents
 * first, no HOT flags): query it with hcct_tree_filter. -EINVAL (a tree not parents first),
 * -ENOMEM. */
int window_hcct_merge(const struct window_summary *v, size_t n, struct hcct_tree **ret);
/* The same merge one summary at a time (a range merged in steps; the summary can be freed once
 * added): window_hcct_merge is new, add each, finish, free. Errors as window_hcct_merge. */
struct window_merge;
int window_merge_new(struct window_merge **ret);
int window_merge_add(struct window_merge *mg, const struct window_summary *s);
int window_merge_finish(const struct window_merge *mg, struct hcct_tree **ret);
void window_merge_free(struct window_merge *mg);

/* One stack of a window: ids root first (the frames its HCCT context has) and its samples. */
struct window_stack {
	const uint32_t *ids;
	size_t n;
	uint64_t count;
};
/* A window's summary from its exact stacks (ALGORITHMS.md §14): the contexts are the stacks'
 * paths (a sample counts at its leaf, as hcct_add_stack counts it); the m heaviest are
 * monitored with their exact counts (err 0; ties: the first seen), every other context is
 * dropped unless an ancestor of a kept one (cold); *min is the count of the heaviest dropped
 * (0 if none was), so an unmonitored context has f <= min <= N/(m+1): what a Space-Saving
 * summary of m counters guarantees, with no overestimate. Snapshot format, n = the samples.
 * -EINVAL (m 0), -ENOMEM. */
int window_summary_exact(const struct window_stack *v, size_t n, uint32_t m, struct hcct_tree **ret,
			 uint64_t *min);

#endif
