/* SPDX-License-Identifier: GPL-2.0-only */
/* bpferr.h: why a BPF program failed to load, from libbpf's and the verifier's messages
 * (daemon/lib/bpferr.c): the program, and what this kernel lacks (a helper, a struct field) with
 * the Linux version that has it. Pure: the caller captures the messages. */
#ifndef KPROF_BPFERR_H
#define KPROF_BPFERR_H

#include <stddef.h>

/* The first Linux version with helper id (enum bpf_func_id) of the ones kprof's programs call, and
 * its name; NULL for another. */
const char *bpferr_helper(unsigned id, const char **version);
/* The first Linux version with field "struct S.f" (as libbpf names it) of the ones kprof reads that
 * some supported kernel lacks; NULL for another. */
const char *bpferr_field(const char *field);
/* The first Linux version with BPF program type name (libbpf's names: "syscall", "tracing",
 * "perf_event", "kprobe") of kprof's; NULL for another. */
const char *bpferr_prog_type(const char *name);
/* The explanation of log (libbpf's messages of a failed load, NUL-terminated) into out: "program
 * P: ..." naming what the kernel lacks and the version that has it. 0, or -ENOENT when log names
 * no cause kprof knows (out then has the program if the log names one, else ""). */
int bpferr_explain(const char *log, char *out, size_t len);

#endif
