/* SPDX-License-Identifier: GPL-2.0-only */
/* merge.h: several processes' kept profiles as one (merge.c), for record --children and the
 * views of a watched cgroup or unit. */
#ifndef KPROF_CLI_MERGE_H
#define KPROF_CLI_MERGE_H

#include <stddef.h>

#include "kprof/saved.h"
#include "proto/kprof.pb-c.h"

/* The merged profile (sp), pointing into the profiles it was made of (which must outlive it);
 * its own arrays are freed by merge_free. */
struct merged {
	Kprof__SavedProfile sp;
	Kprof__Target target;
	Kprof__SavedFunction **funcs;
	Kprof__SavedStack **stacks;
	Kprof__SavedStack *stack_v;
	uint32_t *ids;
	Kprof__SavedMapping **maps;
	Kprof__SavedThread **threads;
	Kprof__Origin *origin_v, **origins;
	Kprof__SavedLeafAddr *leaf_v, **leaves; /* the inputs' leaf addresses (lines shared) */
	Kprof__SavedCallSite *site_v, **sites;	/* ... and call sites */
	Kprof__SavedLinesInfo lines;		/* the inputs' resolver counts summed */
	char *notes[SAVED_MAX_LINES_NOTES];
};

/* v[0..n) as one profile: functions, mappings, thread names, leaf addresses and call sites
 * concatenated (v[0]'s first), every stack's ids, leaf address and call site moved to its
 * functions' new indices, the
 * source-line counts summed and their notes kept; v[0]'s target with the samples of all.
 * Each stack's origin names its process: an input's own origins (a merged input), else one
 * origin per input made of its target (pid, comm, the watch as unit), its executable mapping
 * and its runtime (merge_runtime). Tables beyond the saved profile's caps are cut and counted.
 * 0 or -ENOMEM. */
int merge_profiles(Kprof__SavedProfile *const *v, size_t n, struct merged *m);
void merge_free(struct merged *m);
/* The runtime of a process with this executable path (NULL: unknown) and target: jvm, node,
 * python, ruby, php, dotnet, bun, deno, beam, else jit when a perf map or jitdump named code,
 * else native. A static string. */
const char *merge_runtime(const Kprof__Target *t, const char *exe);
/* A module as functions are matched across processes: a per-process JIT module (perf-PID.map,
 * jit-PID.dump) as "perf-PID.map"/"jit-PID.dump", any other as it is (copied to buf, len
 * bytes). */
const char *merge_module_key(const char *m, char *buf, size_t len);
/* The flat profile of sp, as kprofd's report computes it: per function (name, module and kind
 * alike across processes are one; those in no stack left out), self and total samples, sorted
 * by self then total, at most top entries (0: all). *ret is freed with merge_report_free. 0 or -ENOMEM. */
int merge_report(const Kprof__SavedProfile *sp, unsigned top, Kprof__ReportReply **ret);
void merge_report_free(Kprof__ReportReply *r);

#endif
