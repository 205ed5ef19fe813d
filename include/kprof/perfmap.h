/* SPDX-License-Identifier: GPL-2.0-only */
/* perfmap.h: pure parser and index for JIT perf map files (/tmp/perf-PID.map).
 *
 * Format, one symbol per line: "START SIZE name" with START and SIZE in hex, an optional
 * 0x/0X prefix, either hex case; the name is the rest of the line (spaces allowed), a trailing
 * '\r' is stripped. The glue hands the file's bytes in as they appear (perfmap_feed); a final
 * line without '\n' is kept inside and completed by the next feed (a torn line from a writer
 * still writing). Bad lines are skipped and counted, never fatal. When ranges overlap the later
 * line wins. A full re-read (file shrunk or replaced) is perfmap_reset() then feeding again.
 * Every resource is capped (line length, entries, total bytes). No I/O, no globals.
 * The same table holds symbols that come parsed from elsewhere (a jitdump's code loads):
 * perfmap_add() stores one as if it were a line, with the same rules and caps.
 */
#ifndef KPROF_PERFMAP_H
#define KPROF_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct perfmap;

struct perfmap_limits {
	size_t max_line;    /* longest accepted line in bytes, without '\n' (default 4096) */
	size_t max_entries; /* default 4M */
	uint64_t max_bytes; /* total bytes fed before reset (default 512 MiB) */
};

struct perfmap_stats {
	uint64_t bytes;	     /* bytes fed since the last reset */
	uint64_t lines;	     /* complete lines seen, and symbols given to perfmap_add() */
	uint64_t entries;    /* lines accepted */
	uint64_t bad_lines;  /* malformed: no/invalid hex, missing name, zero size, overflow, NUL */
	uint64_t long_lines; /* longer than max_line (also counted in bad_lines) */
	uint64_t dropped;    /* accepted lines dropped by the entries cap */
	int truncated;	     /* 1 once max_bytes was reached: further input ignored */
};

struct perfmap_sym {
	uint64_t start;
	uint64_t size;
	const char *name; /* NUL-terminated, owned by the perfmap, valid until reset/free */
};

/* lim may be NULL for defaults; zero fields take defaults too. */
int perfmap_new(const struct perfmap_limits *lim, struct perfmap **ret);
void perfmap_free(struct perfmap *pm);

/* Parse len more bytes of the file. Returns the number of new entries accepted (>= 0), or
 * -ENOMEM. Malformed input is never an error, only counted. */
int perfmap_feed(struct perfmap *pm, const char *buf, size_t len);

/* Store one symbol [start, start + size) named by the len bytes at name, as if fed as a line
 * (it wins over what it overlaps). Returns 1 if stored, 0 if refused (counted: a bad line for
 * size 0, start + size overflowing, an empty name or a NUL byte in it; dropped by the entries
 * cap), -EINVAL for bad arguments, -ENOMEM. */
int perfmap_add(struct perfmap *pm, uint64_t start, uint64_t size, const char *name, size_t len);
/* The entry stored last (by a line or perfmap_add), NULL if none: a caller keeps its own index
 * of entries (by exact start, say) without a lookup. Valid until reset or free. */
const struct perfmap_sym *perfmap_last(const struct perfmap *pm);

/* Forget everything (entries, pending partial line, stats). */
void perfmap_reset(struct perfmap *pm);

/* The symbol containing addr: among all entries that contain it, the one fed last.
 * NULL if none. The index is rebuilt lazily after feeds, so the first lookup after a feed
 * costs O(n log n); later ones O(log n). */
const struct perfmap_sym *perfmap_lookup(struct perfmap *pm, uint64_t addr);
/* The symbol naming a sampled frame looked up at addr (a caller frame at its return address
 * - 1, the leaf at its address): perfmap_lookup's, except where addr + 1 is exactly the start
 * of a symbol and addr is the last byte of the symbol containing it (or of none): then that next
 * symbol. A caller frame whose address is a function's own first byte (BEAM puts
 * `normal_exit/0`'s at the bottom of every Erlang process stack) is so named by that function,
 * as perf names it (perf looks caller frames up at the address itself), not by the one before
 * it. The price: a leaf sampled on the very last byte of a symbol followed at once by another
 * is named by the next one. */
const struct perfmap_sym *perfmap_lookup_frame(struct perfmap *pm, uint64_t addr);

/* Bring the lookup index up to date now (perfmap_lookup() does it lazily, and returns NULL if
 * that fails). Incremental: O(n + k log k) for k entries fed since the last build. 0 or -ENOMEM. */
int perfmap_build_index(struct perfmap *pm);

void perfmap_get_stats(const struct perfmap *pm, struct perfmap_stats *st);

/* Every accepted entry in feed order (a start re-declared later appears again: the later one
 * is the live one). Stops at and returns fn's first non-zero return. */
typedef int (*perfmap_sym_fn)(const struct perfmap_sym *sym, void *userdata);
int perfmap_foreach(const struct perfmap *pm, perfmap_sym_fn fn, void *userdata);
/* Bytes of the pending, not yet complete line. */
size_t perfmap_pending(const struct perfmap *pm);
/* Bytes of memory held (entries, names, index, line buffer), for accounting. */
size_t perfmap_memory(const struct perfmap *pm);

/* Does a perf-map name stand for typed[0..len), the name a user gave? 2: it is that name; 1:
 * that name followed by a space and more (V8 and others append the source: "JS:*f /app/f.js:
 * 11:14" for "JS:*f"); 0: neither (an empty typed name matches nothing). */
int perfmap_name_match(const char *name, const char *typed, size_t len);

#endif
