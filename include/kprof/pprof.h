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

/* Each sampled leaf address (sp->leaf_addrs) is a Location of its own, with a Line per source
 * frame kprofd resolved for it (SavedLeafAddr.lines, inlined functions first), its samples taken
 * from the function-start location of the stacks whose leaf is that function; the profile's
 * comments say what the lines resolver found (sp->lines). */

/* The same for a profile whose stacks from off_from on are off-CPU ones (counts: nanoseconds):
 * four sample types, samples/count, cpu/nanoseconds, off_cpu/nanoseconds and wall/nanoseconds
 * (the leaf addresses are the CPU stacks', before off_from). off_from >= n_stacks: pprof_build. */
int pprof_build_offcpu(const Kprof__SavedProfile *sp, size_t off_from, uint64_t now_ns,
		       const char *version, uint8_t **ret, size_t *ret_len);
/* The same with the four sample types whatever off_from is (an interval without off-CPU time
 * has them too) and the profile's default_sample_type default_type ("cpu", "off_cpu", "wall";
 * NULL: none, pprof shows the last): the HTTP endpoint's type=off_cpu|wall. */
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
