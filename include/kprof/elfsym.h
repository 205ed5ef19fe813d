/* SPDX-License-Identifier: GPL-2.0-only */
/* elfsym.h: function symbols and load segments of an ELF file, for symbolization.
 *
 * Reads .symtab and .dynsym (STT_FUNC and STT_GNU_IFUNC, defined, non-zero) into a symtab and
 * keeps the PT_LOAD segments to turn a file offset into a virtual address. Works on an open
 * file (the glue's case) or on bytes in memory (tests and fuzzing); malformed files are
 * rejected with an error, never trusted: libelf bounds-checks every table read here.
 */
#ifndef KPROF_ELFSYM_H
#define KPROF_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/symtab.h"

#define ELFSYM_MAX_LOADS 16
#define ELFSYM_MAX_SYMS (4u << 20)
#define ELFSYM_MAX_NAME 1024 /* longer names are cut (a name is the target's data) */

struct elfsym_load {
	uint64_t offset, vaddr, filesz;
};

struct elfsym {
	struct symtab *syms;
	int nloads;
	struct elfsym_load loads[ELFSYM_MAX_LOADS];
};

/* 0 and *es filled (release with elfsym_release), or -ENOEXEC (not ELF), -EINVAL, -ENOMEM,
 * -ENOSPC (the table would hold more than max_bytes; 0: no limit). Symbol and string tables
 * larger than 256 MiB are skipped; names are cut at ELFSYM_MAX_NAME bytes. The fd is read with
 * pread, never mapped. */
int elfsym_load_fd(int fd, uint64_t max_bytes, struct elfsym *es);
int elfsym_load_mem(const void *buf, size_t len, uint64_t max_bytes, struct elfsym *es);
void elfsym_release(struct elfsym *es);

/* The virtual address of file offset off (through the PT_LOAD holding it; off itself if
 * none does, as for files without program headers). */
uint64_t elfsym_vaddr(const struct elfsym *es, uint64_t off);

#endif
