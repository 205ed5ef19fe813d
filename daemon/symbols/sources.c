// SPDX-License-Identifier: GPL-2.0-only
/* sources.c: the ordered table of a target's symbol sources (sources.h).
 *
 * The order is the order of preference. A kernel address is asked only of the kernel's source.
 * A user address is asked of the ELF file of its mapping first: a symbol of the file that covers
 * it names it (perf's rule: V8's embedded builtins are in node's .text and in its perf map, and
 * perf names them by node's symbols). A file symbol that does not cover it (no size, or the
 * address past it) is only near, and the JIT's files come next: the jitdump before the perf map,
 * since a JIT that writes both (V8 with --perf-prof and --perf-basic-prof) describes the same
 * code in both and the jitdump is the exact one (binary names, sizes, code moves). The vdso
 * last: only its own mapping. The JVM's source names nothing; it asks the JVM to write the perf
 * map the perf map's source reads. The files are read (refreshed) in the same order. A new
 * source: its file, its line in sources.h, its place here (docs/ARCHITECTURE.md, "Adding a
 * symbol source").
 */
#include <stddef.h>

#include "symbols/sources.h"

const struct sym_source *const sym_sources[SYM_SOURCES_MAX + 1] = {
    &sym_source_kernel,
    &sym_source_elf,
    &sym_source_jitdump,
    &sym_source_perfmap,
    &sym_source_vdso,
    &sym_source_jvm,
    NULL,
};
