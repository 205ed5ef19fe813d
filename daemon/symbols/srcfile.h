/* SPDX-License-Identifier: GPL-2.0-only */
/* srcfile.h: which file holds the source lines of a target's code (srcfile.c; issue 32). */
#ifndef KPROF_SRCFILE_H
#define KPROF_SRCFILE_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/lcache.h"
#include "symbols/symbolize.h"

#define SRCFILE_NOTE 512

/* The file found for a mapping: open for reading, what it is, and what was refused on the way
 * (a debug file of another build, a .gnu_debuglink naming a path). */
struct srcfile {
	int fd;		     /* -1 when none was found */
	char used[256];	     /* the file read, as shown in notes */
	char note[SRCFILE_NOTE]; /* what went wrong, "" if nothing */
};

/* A mapping of a profile, as its saved table says it (SavedMapping). */
struct srcfile_map {
	pid_t pid;
	uint64_t start, limit; /* in the process */
	const char *path;      /* as /proc/PID/maps shows it */
	const char *build_id;  /* hex; "" none */
};

/* The cache key of the file of mapping m at runtime address addr: its build id in hex when it
 * has one, else "ino:DEV:INO:MTIME" of the file ts's symbolizer read there (ts NULL: -ENOENT).
 * 0, or -ENOENT. */
int srcfile_key(struct tsym *ts, uint64_t addr, const struct srcfile_map *m,
		char key[LCACHE_MAX_KEY + 1]);

/* Open the file whose DWARF describes the code of mapping m at runtime address addr, looked for
 * as gdb does: its debug file by build id (under debug_dir, a host directory kprofd's settings
 * name, then the target's /usr/lib/debug), the mapped file itself if it has DWARF, its
 * .gnu_debuglink (beside it, in .debug/, under /usr/lib/debug/ of the target, then debug_dir).
 * The mapped file is ts's symbolizer's (its identity checked); without ts (the target's symbols
 * are gone) it is the file mapped there now (map_files) or at its path inside the process's
 * root (the process gone: at its path in kprofd's root, if that file is readable by anyone),
 * and only if it carries m's build id. A debug file is used only if it is ELF, has DWARF
 * and is of the mapping's build (its build id, or for a file without one the debuglink's
 * CRC32); one of another build is never used, and said in out->note. Files of the target's
 * root are opened inside it (tfile_open: no symbolic link as the last component, no FIFO or
 * device), owned by root or the target's user. 0 with out->fd open, or -ENOENT (no debug
 * information found), -ESTALE (another build mapped there now), -ESRCH (the process's files
 * are gone), with out->note saying why. */
int srcfile_open(struct tsym *ts, uint64_t addr, const struct srcfile_map *m,
		 const char *debug_dir, struct srcfile *out);

#endif
