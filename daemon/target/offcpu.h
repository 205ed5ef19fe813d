/* SPDX-License-Identifier: GPL-2.0-only */
/* offcpu.h: a target's off-CPU profile (offcpu.c): where its threads waited, in nanoseconds. */
#ifndef KPROF_DAEMON_OFFCPU_H
#define KPROF_DAEMON_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/offcpu_bpf.h"
#include "kprof/abi.h"
#include "kprof/hcct.h"
#include "kprof/profile.h"

struct tsym;
struct tnames;

/* The root frame of each off-CPU stack: the thread's state when it left ("[sleeping]"), and of
 * each CPU stack in a wall-clock view ("[running]"). */
const char *offcpu_state_name(uint32_t state);
#define OFFCPU_RUNNING_NAME "[running]"

/* The user frames the frame-pointer walk of an interval skipped (offcpu_bpf.h's callers), and
 * what is known of the rest (manager_offcpu.c decides from the walk's end and the rules). */
struct offcpu_callers {
	const uint64_t *ips; /* the leaf's callers, innermost first */
	size_t n;
	bool lost; /* a caller is missing after them: a "[caller lost]" frame says so */
	bool cut;  /* the walk's frames past them are not to be trusted: left out */
};
#define OFFCPU_CALLER_LOST "[caller lost]"
#define OFFCPU_RULE_CACHE 256 /* leaf addresses whose frame rule is remembered */

struct offcpu {
	struct profile *prof; /* counts are nanoseconds */
	struct hcct *hcct;    /* hot contexts, weighted by nanoseconds */
	uint64_t ns[KP_OFF_NSTATES], intervals;
	uint64_t lost_stacks; /* sums kept under "[stack lost]" */
	uint64_t sym_gen;
	bool attached; /* its target asks the sched_switch program now (manager_offcpu.c) */
	uint32_t ids[KP_MAX_FRAMES];
	/* The frame rules of leaf addresses (enum tsym_frame + 1; 0: empty), direct-mapped. */
	uint64_t rule_ip[OFFCPU_RULE_CACHE];
	uint8_t rule_kind[OFFCPU_RULE_CACHE];
};

struct offcpu_limits {
	size_t max_stacks;
	uint32_t hcct_slots;
	size_t hcct_max_nodes;
};

int offcpu_new(const struct offcpu_limits *lim, struct offcpu **ret);
void offcpu_free(struct offcpu *o);
/* Add one drained sum, its frames named by sym (NULL: the target's symbols are gone, frames
 * are "[unknown]"), the callers its frame-pointer walk skipped from cs (NULL: none), its
 * thread's name to names (may be NULL). 0, or a negative errno (the time is counted as lost by
 * the profile). */
int offcpu_add(struct offcpu *o, struct tsym *sym, struct tnames *names,
	       const struct offcpu_interval *iv, const struct offcpu_callers *cs);
/* A kept off-CPU profile (prof, counts in nanoseconds, taken over: freed with *ret, or on an
 * error) as a target's, its HCCT rebuilt from its stacks; its counters are the caller's to
 * set. */
int offcpu_restore(const struct offcpu_limits *lim, struct profile *prof, struct offcpu **ret);
/* dst, attached again after kprofd's restart, continues src's profile (src keeps dst's empty
 * one). */
void offcpu_take(struct offcpu *dst, struct offcpu *src);
/* The states of p's stacks (their root frames) added up into ns, and the total. */
void offcpu_states(const struct profile *p, uint64_t ns[KP_OFF_NSTATES], uint64_t *total);
uint64_t offcpu_memory(const struct offcpu *o);
uint64_t offcpu_total_ns(const struct offcpu *o);

#endif
