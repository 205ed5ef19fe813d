/* SPDX-License-Identifier: GPL-2.0-only */
/* elfsym.h: function symbols and load segments of an ELF file, for symbolization.
 *
 * Reads one symbol table, as perf does: .symtab when the file has one, else .dynsym (STT_FUNC
 * and STT_GNU_IFUNC, defined, non-zero). Of the aliases starting at one address, one name is
 * kept, chosen as perf's choose_best_symbol() does: a sized symbol over a size-0 one, then
 * non-weak over weak, then global over local, then fewer leading underscores, then the longer
 * name, then the first in the table ("__vdso_clock_gettime" over the weak "clock_gettime",
 * "clock_gettime@@GLIBC_2.17" over "__clock_gettime" and "__GI___clock_gettime"). Keeps the
 * PT_LOAD segments to turn a file offset into a virtual address, and what points to separate
 * debug information: the GNU build id note and the .gnu_debuglink section (file name and
 * CRC32), which the caller checks a debug file against. Works on an open file (the glue's
 * case) or on bytes in memory (the vdso, tests and fuzzing); malformed files are rejected
 * with an error, never trusted: libelf bounds-checks every table and note read here.
 */
#ifndef KPROF_ELFSYM_H
#define KPROF_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/symtab.h"

#define ELFSYM_MAX_LOADS 16
#define ELFSYM_MAX_SYMS (4u << 20)
#define ELFSYM_MAX_NAME 1024	 /* longer names are cut (a name is the target's data) */
#define ELFSYM_BUILD_ID_MAX 64	 /* bytes; longer build ids are ignored */
#define ELFSYM_DEBUGLINK_MAX 256 /* bytes with the NUL; longer debuglink names are ignored */

struct elfsym_load {
	uint64_t offset, vaddr, filesz;
};

struct elfsym {
	struct symtab *syms;
	int nloads;
	struct elfsym_load loads[ELFSYM_MAX_LOADS];
	bool has_symtab;      /* the symbols are .symtab's (a stripped file has .dynsym at most) */
	uint8_t build_id_len; /* 0: no NT_GNU_BUILD_ID note */
	uint8_t build_id[ELFSYM_BUILD_ID_MAX];
	/* .gnu_debuglink: a plain file name (no '/', not "." or ".."), "" if none; the CRC32 (as
	 * zlib's crc32()) of the whole debug file it names. */
	char debuglink[ELFSYM_DEBUGLINK_MAX];
	uint32_t debuglink_crc;
	bool debuglink_bad; /* a .gnu_debuglink naming a path, not a file name: ignored */
	bool has_dwarf;	    /* .debug_info or .debug_line with bytes: source lines (issue 32) */
};

/* 0 and *es filled (release with elfsym_release), or -ENOEXEC (not ELF), -EINVAL, -ENOMEM,
 * -ENOSPC (the table would hold more than max_bytes, or the symbols read to build it would;
 * 0: no limit). Symbol and string tables larger than 256 MiB are skipped; names are cut at
 * ELFSYM_MAX_NAME bytes. The fd is read with pread, never mapped. */
int elfsym_load_fd(int fd, uint64_t max_bytes, struct elfsym *es);
int elfsym_load_mem(const void *buf, size_t len, uint64_t max_bytes, struct elfsym *es);
/* Only what names the file and its debug information (build id, .gnu_debuglink, has_dwarf,
 * the loads), no symbols (syms NULL): to check a candidate debug file. 0 or as above. */
int elfsym_ident_fd(int fd, struct elfsym *es);
void elfsym_release(struct elfsym *es);

/* The bytes of section name of the ELF file at fd (read with pread) in *data (malloc'd), its
 * size and its virtual address: 0, or -ENOENT (no such section, or NOBITS: in a separate debug
 * file), -E2BIG (more than max_bytes), -ENOEXEC, -EINVAL, -ENOMEM. For .eh_frame (ehframe.h). */
int elfsym_section_fd(int fd, const char *name, size_t max_bytes, uint8_t **data, size_t *len,
		      uint64_t *addr);

/* The virtual address of file offset off (through the PT_LOAD holding it; off itself if
 * none does, as for files without program headers). */
uint64_t elfsym_vaddr(const struct elfsym *es, uint64_t off);

/* Whether a and b carry the same build id (both have one). */
bool elfsym_same_build_id(const struct elfsym *a, const struct elfsym *b);

/* The build id as lower-case hex into buf (2 * build_id_len + 1 bytes at most); "" if none. */
void elfsym_build_id_hex(const struct elfsym *es, char *buf, size_t len);

#endif
