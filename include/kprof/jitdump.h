/* SPDX-License-Identifier: GPL-2.0-only */
/* jitdump.h: pure, incremental parser of perf's jitdump files (jit-PID.dump).
 *
 * A JIT that supports perf writes a binary jitdump file next to (or instead of) its perf map: a
 * 40-byte header, then records of every function it compiles (name, address, size, code bytes),
 * moves and source-line tables. The file grows while the JIT runs, so parsing is incremental: the
 * caller hands in the bytes it has and a cursor; jitdump_parse() consumes whole records only and
 * advances the cursor past them; a record not complete yet is left for a later call, when the
 * caller has read more (jd->want says how many bytes it needs). Results go to callbacks, with
 * pointers into the caller's buffer (valid during the callback only): the caller decides what to
 * keep and copies it within its own budget. The state is a small struct: no allocation, no I/O.
 *
 * What is an error for the whole file (returned, and sticky: every later call returns it): a bad
 * magic, a record size below the 16-byte record prefix or above max_record (-EBADMSG); another
 * version than 1 or an unknown header flag (-EPROTONOSUPPORT). jd->st.bytes is then the offset
 * of the bad header or record. A file written in the other byte order is read (swapped).
 * What is a bad record (counted in st.bad_records, skipped by its size, parsing goes on): a
 * record shorter than its kind's fixed part; a name not NUL-terminated inside the record, or
 * empty; code past the end of the record; a zero code_size; an address + code_size that
 * overflows; a debug record with no entry, whose nr_entry entries do not fit in the record, or
 * whose first entry's file is "\xff" (the previous entry's: there is none).
 * Names longer than max_name are cut (st.long_names). Unknown record kinds are skipped
 * (st.unknown), unwinding records are checked and skipped (st.unwinding_infos).
 */
#ifndef KPROF_JITDUMP_H
#define KPROF_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JITDUMP_MAGIC 0x4A695444u /* "JiTD", as a 32-bit word in the writer's byte order */
#define JITDUMP_VERSION 1
#define JITDUMP_FLAG_ARCH_TIMESTAMP 1u /* timestamps from an arch clock (TSC), not a clockid */
#define JITDUMP_HEADER_SIZE 40	       /* the fixed part of the file header */
#define JITDUMP_PREFIX_SIZE 16	       /* id, total_size, timestamp: the start of every record */
#define JITDUMP_MAX_RECORD (16u << 20) /* default cap on a record's (and the header's) size */
#define JITDUMP_MAX_NAME 1024	       /* default cap on a name's length, as for ELF symbols */

enum jitdump_record_id {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_CODE_DEBUG_INFO = 2,
	JITDUMP_CODE_CLOSE = 3,
	JITDUMP_CODE_UNWINDING_INFO = 4,
};

/* Zero fields take the defaults. max_record is raised to at least 64 (every fixed part fits). */
struct jitdump_limits {
	uint32_t max_record; /* JITDUMP_MAX_RECORD */
	size_t max_name;     /* JITDUMP_MAX_NAME */
};

struct jitdump_stats {
	uint64_t bytes;	  /* consumed: the header and whole records (the file offset reached) */
	uint64_t records; /* records consumed = the sum of the six counts below */
	uint64_t loads, moves, debug_infos, closes, unwinding_infos;
	uint64_t unknown;     /* records of an unknown kind, skipped */
	uint64_t bad_records; /* malformed, skipped (see the top of this file) */
	uint64_t long_names;  /* function or file names cut at max_name */
};

struct jitdump_header {
	uint32_t version;
	uint32_t total_size; /* of the header; bytes past the fixed 40 are skipped */
	uint32_t elf_mach;   /* ELF e_machine of the code, e.g. 62 for x86-64 */
	uint32_t pid;	     /* of the JIT */
	uint64_t timestamp;
	uint64_t flags;
	bool swapped; /* written in the other byte order */
};

/* A compiled function: [code_addr, code_addr + code_size) holds code[0..code_size). */
struct jitdump_load {
	uint64_t timestamp;
	uint32_t pid, tid;
	uint64_t vma;	    /* usually code_addr */
	uint64_t code_addr; /* where the code runs: what samples hit (perf maps this one) */
	uint64_t code_size; /* > 0; vma + code_size and code_addr + code_size do not overflow */
	uint64_t code_index;
	const char *name; /* name_len bytes, not NUL-terminated when cut; no NUL inside */
	size_t name_len;  /* 1..max_name */
	const uint8_t *code;
};

/* A function's code moved (same name, same size) from old_code_addr to new_code_addr. */
struct jitdump_move {
	uint64_t timestamp;
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr;
	uint64_t code_size; /* > 0; none of the three addresses + code_size overflows */
	uint64_t code_index;
};

/* Source lines of the function at code_addr, written before its load record. Walk the entries
 * with jitdump_debug_next(). */
struct jitdump_debug {
	uint64_t timestamp;
	uint64_t code_addr;
	uint64_t nr_entry; /* >= 1, all checked to be well formed */
	/* private: */
	const uint8_t *entries, *end;
	size_t max_name;
	bool swapped;
};

struct jitdump_line {
	uint64_t addr;
	uint32_t lineno;  /* from 1 */
	uint32_t discrim; /* column discriminator, 0 by default */
	const char *file; /* file_len bytes, not NUL-terminated when cut; "\xff" in the file means
			     "the previous entry's", and is given as that */
	size_t file_len;
	/* private: the cursor */
	size_t next;
	uint64_t index;
};

/* Callbacks return 0 to go on or a negative errno to stop: jitdump_parse() then returns it and
 * leaves that record unconsumed (a later call delivers it again); this error is not sticky. */
typedef int (*jitdump_header_fn)(const struct jitdump_header *h, void *userdata);
typedef int (*jitdump_load_fn)(const struct jitdump_load *l, void *userdata);
typedef int (*jitdump_move_fn)(const struct jitdump_move *m, void *userdata);
typedef int (*jitdump_debug_fn)(const struct jitdump_debug *d, void *userdata);
typedef int (*jitdump_close_fn)(uint64_t timestamp, void *userdata);

/* Any of them may be NULL (that kind is then only checked and counted). */
struct jitdump_ops {
	jitdump_header_fn on_header;
	jitdump_load_fn on_load;
	jitdump_move_fn on_move;
	jitdump_debug_fn on_debug;
	jitdump_close_fn on_close;
};

/* The parser's state: read the public fields, change none of them. */
struct jitdump {
	struct jitdump_limits lim;
	struct jitdump_stats st;
	struct jitdump_header hdr; /* once have_header */
	bool have_header;
	int err;     /* 0, or the sticky error of the file */
	size_t want; /* after a call that stopped at an incomplete header or record: the bytes from
			the cursor that it needs in full (at most max_record) */
};

/* Start (or restart, for a file replaced) with the limits lim (NULL: the defaults). */
void jitdump_init(struct jitdump *jd, const struct jitdump_limits *lim);

/* Parse buf[*off..len): the header first (on the first calls), then every whole record, each
 * delivered to ops (may be NULL) and counted; *off is moved past what was consumed. The bytes at
 * buf[*off] must be those of the file at offset jd->st.bytes: the caller may hand in the whole
 * file read so far each time, or only what follows the cursor (off = 0), or anything between.
 * Returns the number of records consumed (>= 0; capped at INT_MAX), -EINVAL for bad arguments,
 * the file's error (see above), or a callback's error. */
int jitdump_parse(struct jitdump *jd, const void *buf, size_t len, size_t *off,
		  const struct jitdump_ops *ops, void *userdata);

/* The next source line of d: start with a zeroed *line and call until it returns 0; each call
 * that returns 1 fills *line (its file may be the previous entry's). Only valid inside the
 * on_debug callback that received d. */
int jitdump_debug_next(const struct jitdump_debug *d, struct jitdump_line *line);

#endif
