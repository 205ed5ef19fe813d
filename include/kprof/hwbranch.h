/* SPDX-License-Identifier: GPL-2.0-only */
/* hwbranch.h: the pure logic of hardware-breakpoint profiling (hwbranch.c): which conditional
 * branches of a function go in the four debug registers and in what order, how an x86 jcc
 * decides from EFLAGS, and how counts of rotated breakpoints become estimates.
 *
 * A breakpoint fires before its instruction executes, so at a jcc the flags then in the
 * register decide it: hwbranch_taken() evaluates the jcc's condition code (the low nibble of
 * its opcode) on them. hwbranch_plan() lists the flag-decided conditional branches of a CFG's
 * loops, innermost loops first, and cuts them into groups of at most HWBP_SLOTS: first one
 * group per loop whose branches all fit at once (its paths can then be rebuilt exactly from the
 * outcomes), then the branches no such group covered, four at a time. No I/O, no globals.
 */
#ifndef KPROF_HWBRANCH_H
#define KPROF_HWBRANCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/cfg.h"

#define HWBRANCH_SLOTS 4
#define HWBRANCH_MAX 256 /* branches a plan lists */

/* EFLAGS bits a condition code reads. */
#define HWBRANCH_CF (1u << 0)
#define HWBRANCH_PF (1u << 2)
#define HWBRANCH_ZF (1u << 6)
#define HWBRANCH_SF (1u << 7)
#define HWBRANCH_OF (1u << 11)
#define HWBRANCH_FLAGS (HWBRANCH_CF | HWBRANCH_PF | HWBRANCH_ZF | HWBRANCH_SF | HWBRANCH_OF)

/* The condition code (0-15) of the jcc at code[0..len): 7x rel8 or 0f 8x rel32, with legacy
 * prefixes (branch hints, operand size) skipped; -EINVAL if it is not one (jrcxz, loop and
 * xbegin do not branch on the flags), -ENODATA if the bytes are too few. */
int hwbranch_cc(const uint8_t *code, size_t len);
/* Does a jcc with condition code cc jump, given the flags before it executes? */
bool hwbranch_taken(unsigned cc, uint64_t flags);
/* "jne" etc. for condition code cc. */
const char *hwbranch_cc_name(unsigned cc);

/* A branch of a plan: its block (cfg index), the jcc's address and condition code, the loop
 * it is innermost in (a header block) and that loop's depth. */
struct hwbranch {
	uint32_t block;
	uint64_t addr;
	uint8_t cc;
	uint32_t loop, depth;
};
/* A group of branches that is on at once; loop != CFG_NONE: every branch of that loop (its
 * body, inner loops included) is in the group, so its paths can be followed exactly. */
struct hwbranch_group {
	uint32_t first, n; /* indices into the plan's branches (idx[]) */
	uint32_t loop;
};
struct hwbranch_plan {
	struct hwbranch br[HWBRANCH_MAX];
	size_t nbr;
	uint32_t idx[4 * HWBRANCH_MAX]; /* groups' members, indices into br */
	size_t nidx;
	struct hwbranch_group groups[HWBRANCH_MAX];
	size_t ngroups;
	size_t not_flag;   /* conditional branches that do not branch on flags (jrcxz, loop) */
	size_t not_looped; /* flag branches outside every loop: not planned */
};
/* Plan the branches of g's loops; code[0..len) is the function's code mapped at start. 0, or
 * -ENOENT if g has no loop with a flag branch, -EINVAL on bad arguments. */
int hwbranch_plan(const struct cfg *g, const uint8_t *code, size_t len, uint64_t start,
		  struct hwbranch_plan *p);
/* Is block b inside the loop headed by h (h itself included)? */
bool hwbranch_in_loop(const struct cfg *g, uint32_t b, uint32_t h);

/* Following one loop's paths from the outcomes of its conditional branches, all of which have
 * breakpoints. Per thread, a walk knows the block whose jcc must fire next. At a hit it takes the
 * jcc's edge and walks on through blocks that have one way out, until the next conditional
 * block (expected next), the loop's exit (the iteration and the loop's activation end) or a
 * back edge (an iteration ends: a Ball-Larus path of the function when it began at a header,
 * the next begins at the edge's target). A loop is entered at its header (a reducible loop
 * has no other entry): a hit at the first conditional block the header leads to, while
 * outside, begins an activation. A hit where another block was expected (a lost event, code
 * reached some other way) gives the activation up. */
#define HWBRANCH_WALK_MAX 256 /* steps of one iteration */
enum hwbranch_op {
	HWBRANCH_ENTER = 1, /* an activation of the loop began */
	HWBRANCH_PATH,	    /* an iteration ended on a back edge: steps (last edge CFG_NONE) */
	HWBRANCH_LEAVE,	    /* the last iteration left the loop (last edge: out); activation over */
	HWBRANCH_ABORT,	    /* the activation was given up (its iteration so far dropped) */
};
typedef void (*hwbranch_emit_fn)(void *ud, enum hwbranch_op op, const struct cfg_step *steps,
				 size_t n);
struct hwbranch_walk {
	bool active;
	uint32_t expect; /* the conditional block whose hit comes next */
	size_t n;
	struct cfg_step steps[HWBRANCH_WALK_MAX];
};
/* A hit at the jcc ending block b, which goes the taken way or not, in the loop headed by h.
 * Returns 1 if the hit was used, 0 if ignored (outside an activation, not at its start), or
 * -EINVAL on bad arguments. */
int hwbranch_walk_hit(const struct cfg *g, uint32_t h, struct hwbranch_walk *w, uint32_t b,
		      bool taken, hwbranch_emit_fn emit, void *ud);

/* A loop with more branches than registers can still be followed when all but four of them went
 * one way only while they were counted (V8's overflow, bounds and stack checks): those are
 * assumed to keep going that way, and the walk takes their edge without a hit. assume[] has one
 * entry per block of the CFG. An assumption that breaks shows as a hit where another block was
 * expected (the activation is given up, counted) unless both ways meet again before the next
 * branch with a breakpoint. */
enum hwbranch_assume {
	HWBRANCH_COVERED = 0, /* a breakpoint: its hit decides (or not a branch) */
	HWBRANCH_FALL,	      /* assumed not taken */
	HWBRANCH_TAKEN,	      /* assumed taken */
	HWBRANCH_NEVER,	      /* never ran while counted: a walk that reaches it gives up */
};
int hwbranch_walk_hit_assume(const struct cfg *g, uint32_t h, const uint8_t *assume,
			     struct hwbranch_walk *w, uint32_t b, bool taken, hwbranch_emit_fn emit,
			     void *ud);
/* The branches of the loop headed by h that went both ways (taken[i], not_taken[i]: counts of
 * the plan's branches) go in members[] (plan indices, at most HWBRANCH_SLOTS), the others in
 * assume[] (nblocks entries, written). Their number (>= 1), -E2BIG if more than four went both
 * ways, -ENOENT if none did, -EOPNOTSUPP if the loop holds a conditional branch the plan has not
 * (jrcxz, loop: no flags to read). */
int hwbranch_assume_plan(const struct cfg *g, const struct hwbranch_plan *p, uint32_t h,
			 const uint64_t *taken, const uint64_t *not_taken, uint8_t *assume,
			 uint32_t *members);
/* Give up the activation (if any): ABORT. */
void hwbranch_walk_reset(struct hwbranch_walk *w, hwbranch_emit_fn emit, void *ud);

/* The group of a rotation at step s over ngroups groups (round robin). */
static inline size_t hwbranch_rotate(size_t ngroups, uint64_t s)
{
	return ngroups ? (size_t)(s % ngroups) : 0;
}
/* A count seen over covered_ns of total_ns, scaled to the whole (rounded); the count itself
 * when covered the whole time, 0 when never covered. */
uint64_t hwbranch_estimate(uint64_t counted, uint64_t covered_ns, uint64_t total_ns);

#endif
