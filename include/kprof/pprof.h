/* SPDX-License-Identifier: GPL-2.0-only */
/* pprof.h: a kprof.SavedProfile turned into the pprof format (perftools.profiles.Profile),
 * gzip-compressed, as `go tool pprof` reads it. Pure: memory in, memory out. */
#ifndef KPROF_PPROF_H
#define KPROF_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/kprof.pb-c.h"

/* now_ns: CLOCK_REALTIME, the profile's end for a target still attached. *ret is malloc'd.
 * 0, -EINVAL (a stack names a function that does not exist), -ENOMEM, -EIO (zlib). */
int pprof_build(const Kprof__SavedProfile *sp, uint64_t now_ns, const char *version, uint8_t **ret,
		size_t *ret_len);

/* Source lines of native code (issue 32), asked for by pprof_build_lines once per sampled leaf
 * address (sp->leaf_addrs) that lies in a mapping of the table with a known ELF address. */
struct pprof_frame {
	const char *func; /* its name ("" if unknown) */
	const char *file; /* its source file ("" if unknown) */
	uint32_t line;	  /* 0 if unknown */
};
#define PPROF_MAX_INLINE 16 /* frames of one address: the function and what it inlined */
struct pprof_lines {
	/* The frames at ELF address addr of mapping m, innermost (the code inlined deepest) first,
	 * the function that holds the address last: their count (0: none known), or a negative
	 * errno (lines not available). The strings need only last until the next call. */
	int (*resolve)(void *userdata, const Kprof__SavedMapping *m, uint64_t addr,
		       struct pprof_frame *frames, size_t max);
	/* A line for the profile's comments when all addresses were asked (may be NULL). */
	const char *(*summary)(void *userdata);
	void *userdata;
};
/* pprof_build with lines: lines NULL is pprof_build. Each sampled leaf address is a Location of
 * its own, with a Line per frame (inlined functions first), its samples taken from the
 * function-start location of the stacks whose leaf is that function. */
int pprof_build_lines(const Kprof__SavedProfile *sp, uint64_t now_ns, const char *version,
		      const struct pprof_lines *lines, uint8_t **ret, size_t *ret_len);
/* The same for a profile whose stacks from off_from on are off-CPU ones (counts: nanoseconds):
 * four sample types, samples/count, cpu/nanoseconds, off_cpu/nanoseconds and wall/nanoseconds,
 * with lines (NULL: none) for the leaf addresses of the CPU stacks before off_from (the off-CPU
 * ones keep their functions' locations). off_from >= n_stacks: pprof_build_lines. */
int pprof_build_offcpu(const Kprof__SavedProfile *sp, size_t off_from, uint64_t now_ns,
		       const char *version, const struct pprof_lines *lines, uint8_t **ret,
		       size_t *ret_len);
/* The same with the four sample types whatever off_from is (an interval without off-CPU time
 * has them too), the profile's default_sample_type default_type ("cpu", "off_cpu", "wall";
 * NULL: none, pprof shows the last), and no lines: the HTTP endpoint's type=off_cpu|wall. */
int pprof_build_wall(const Kprof__SavedProfile *sp, size_t off_from, const char *default_type,
		     uint64_t now_ns, const char *version, uint8_t **ret, size_t *ret_len);

/* The name kprof shows for a function: an unresolved one ("[unknown]") is named after its
 * module ("[libc.so.6]"), as in folded output. buf must hold 256 bytes. */
const char *pprof_display_name(const Kprof__SavedFunction *f, char buf[256]);

/* A V8 name's source: the last word of name is FILE:LINE or FILE:LINE:COLUMN ("JS:*fib
 * /app/x.js:12:3", "LazyCompile:~f file:///x.mjs:1:1"). true with the file as name[*file_off,
 * *file_off + *file_len) and the line (> 0), else false. */
bool pprof_js_source(const char *name, size_t *file_off, size_t *file_len, uint32_t *line);

/* A frame kind's name: native, jit, kernel or unknown (pprof's kind label, kprofctl's text). */
const char *pprof_kind_name(Kprof__FrameKind k);

#endif
