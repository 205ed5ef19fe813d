/* SPDX-License-Identifier: GPL-2.0-only */
/* offcpu_bpf.h: reading off-CPU time out of the BPF maps of offcpu.bpf.c (offcpu_bpf.c). */
#ifndef KPROF_DAEMON_OFFCPU_BPF_H
#define KPROF_DAEMON_OFFCPU_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "kprof/abi.h"

struct loader;

/* One drained sum: the time thread tid of process tgid spent off CPU in state since the last
 * drain, under these stacks (leaf first; none when lost, said by the flags). */
struct offcpu_interval {
	uint32_t tgid, tid;
	uint32_t state; /* enum kp_offcpu_state */
	uint64_t ns, count;
	char comm[16];
	const uint64_t *kips, *uips;
	size_t nk, nu;
	bool kstack_lost; /* the kernel stack was not stored, or was gone when read */
	bool ustack_lost; /* the same for a user stack (none at all is not lost) */
	/* The callers of the user leaf that the frame-pointer walk skipped (innermost first), and
	 * how their walk ended (enum kp_unwind | KP_UW_RBP). */
	const uint64_t *callers;
	size_t ncallers;
	uint32_t unwind;
};

typedef void (*offcpu_sum_fn)(void *userdata, const struct offcpu_interval *iv);

struct offcpu_bpf;

int offcpu_bpf_new(struct loader *l, struct offcpu_bpf **ret);
void offcpu_bpf_free(struct offcpu_bpf *ob);
/* Take every sum out of the map (each to fn), within a bound; then free the stacks no thread
 * off CPU now refers to once enough of them are held. The number of sums, or a negative errno. */
int offcpu_bpf_drain(struct offcpu_bpf *ob, offcpu_sum_fn fn, void *userdata);
/* The rule for address ip of process tgid in kp_offcpu_rules: 0 with *r, or -ENOENT. */
int offcpu_bpf_rule_get(struct offcpu_bpf *ob, pid_t tgid, uint64_t ip, struct kp_unwind_rule *r);
/* Put it there (the next switches at ip follow it): 0 or a negative errno (counted). */
int offcpu_bpf_rule_add(struct offcpu_bpf *ob, pid_t tgid, uint64_t ip,
			const struct kp_unwind_rule *r);
/* The threads of process tgid that left the CPU and have not come back: forgotten (it is no
 * off-CPU target any more). */
void offcpu_bpf_forget(struct offcpu_bpf *ob, pid_t tgid);

/* kp_offcpu_ctrs summed over CPUs, and what the drains counted. */
struct offcpu_bpf_stats {
	uint64_t ctr[KP_OFFC_NR];
	uint64_t stacks_gone; /* stacks of drained sums that were no longer there */
	uint64_t drains, sums;
	uint64_t stacks_freed;
	uint64_t sweeps;	      /* frees that went through the whole stack map */
	uint64_t rules, rules_failed; /* put in kp_offcpu_rules, or not */
};
int offcpu_bpf_stats(const struct offcpu_bpf *ob, struct offcpu_bpf_stats *st);

#endif
