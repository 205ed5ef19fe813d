/* SPDX-License-Identifier: GPL-2.0-only */
/* loader.h: the BPF side of kprofd (loader.c): skeleton, sampling event sets, targets map. */
#ifndef KPROF_DAEMON_LOADER_H
#define KPROF_DAEMON_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "kprof/abi.h"

struct bpf_map;
struct bpf_program;

#define KPROF_MAX_FREQ_SETS 8 /* distinct sampling frequencies in use at once */

struct loader_opts {
	uint64_t ringbuf_bytes;	    /* explicit size; 0: from what can arrive (rbsize.h) */
	uint64_t ringbuf_max_bytes; /* the bound of a computed size */
	unsigned max_freq;	    /* the highest sampling frequency an attach may ask */
	unsigned drain_ms;	    /* the longest samples wait in the ring buffer */
};

struct loader;
/* -E2BIG: the explicit size is above RBSIZE_LIMIT_MB (logged). */
int loader_new(const struct loader_opts *o, struct loader **ret);
void loader_free(struct loader *l);
int loader_ringbuf_fd(const struct loader *l);
/* The exact-mode programs: entry (ret false) or return (ret true) probe. */
struct bpf_program *loader_call_prog(const struct loader *l, bool ret);
unsigned loader_ringbuf_bytes(const struct loader *l);
/* The path tracer: the block probe program, its edge table and its per-thread state. */
struct bpf_program *loader_path_prog(const struct loader *l);
struct bpf_map *loader_path_edges(const struct loader *l);
struct bpf_map *loader_path_threads(const struct loader *l);
int loader_ncpus(const struct loader *l);
/* Make sure a set of per-CPU events at freq exists (reference counted). */
int loader_freq_get(struct loader *l, unsigned freq);
void loader_freq_put(struct loader *l, unsigned freq);
int loader_freqs(const struct loader *l, unsigned *out, int max);
/* Sample process tgid, the one that started at start_ticks (/proc/PID/stat field 22), at freq Hz.
 */
int loader_target_add(struct loader *l, pid_t tgid, unsigned freq, uint64_t start_ticks);
int loader_target_del(struct loader *l, pid_t tgid);
/* Sums over CPUs of kp_counters; per_cpu_drops (may be NULL) gets ncpus values. */
int loader_counters(const struct loader *l, uint64_t ctr[KP_CTR_NR], uint64_t *per_cpu_drops);

#endif
