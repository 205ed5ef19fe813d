/* SPDX-License-Identifier: GPL-2.0-only */
/* jitfile.h: a target's jitdump (jit-PID.dump): finding it, reading it while it grows, the JIT
 * symbols of its code loads (jitfile.c). */
#ifndef KPROF_DAEMON_JITFILE_H
#define KPROF_DAEMON_JITFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kprof/perfmap.h"

struct budget;
struct procmaps;
struct jitfile;
struct tfile_step;

struct jitfile_params {
	pid_t pid;
	pid_t nspid;	 /* the file is jit-NSPID.dump: the PID the JIT knows itself by */
	uid_t uid, euid; /* the file must be owned by one of them; memory is charged to uid */
	uint64_t start_realtime_ns; /* process start: an older file is another process's */
	uint64_t max_bytes;	    /* of the file read at most (0: 512 MiB) */
	struct budget *budget;	    /* symbol memory, charged to uid */
};

struct jitfile_stats {
	uint64_t symbols;     /* code loads (and code moves) kept */
	uint64_t bad_records; /* malformed records, skipped */
	uint64_t bytes;	      /* of the file read: the header and whole records */
	uint64_t reloads;     /* times the file was replaced or rewritten and read again */
	uint64_t refused;     /* times the uid's symbol budget stopped the reading */
};

int jitfile_new(const struct jitfile_params *p, struct jitfile **ret);
void jitfile_free(struct jitfile *jf);
/* Close the file kept open (nothing more will be read); the symbols stay. */
void jitfile_close(struct jitfile *jf);
/* Find the file (a mapping of jit-NSPID.dump in maps, which may be NULL; then the target's
 * working directory; then /tmp inside its root) and read what it gained, as far as the step
 * allows. exited: the process is gone, only read on in the file kept open since the last
 * refresh. 1 if the symbols changed (new ones, or all dropped for a file replaced), else 0. */
int jitfile_refresh(struct jitfile *jf, const struct procmaps *maps, struct tfile_step *step,
		    bool exited);
/* Build the lookup index of what the last refresh read (else the next lookup does). */
void jitfile_index(struct jitfile *jf);
/* The symbol at addr (the load read last wins), or NULL. Valid until the next refresh. */
const struct perfmap_sym *jitfile_lookup(struct jitfile *jf, uint64_t addr);
/* The first source line of the code loaded (or moved) at start, if its debug info said it:
 * *file valid until the next refresh. */
bool jitfile_source(const struct jitfile *jf, uint64_t start, const char **file, uint32_t *line);
/* The source line of JIT code at addr, when the debug info of its load said it (the last entry
 * at or before addr): its file (valid while the symbols are; "" when the JIT wrote no usable
 * name) and line. */
bool jitfile_line(struct jitfile *jf, uint64_t addr, const char **file, uint32_t *line);
/* Module name of its symbols: "jit-NSPID.dump". */
const char *jitfile_module(const struct jitfile *jf);
/* The file read, as kprofd reaches it ("" while none was found), and why a jitdump was refused
 * or read no further ("" if neither), for the user. Valid until the next refresh. */
const char *jitfile_path(const struct jitfile *jf);
const char *jitfile_problem(const struct jitfile *jf);
void jitfile_get_stats(const struct jitfile *jf, struct jitfile_stats *st);

#endif
