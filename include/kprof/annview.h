/* SPDX-License-Identifier: GPL-2.0-only */
/* annview.h: a pure module that turns one function's code bytes and its per-address sample
 * counts into an annotation: the instructions (AT&T syntax, as objdump and perf annotate print
 * them) with their samples, the basic blocks of its control-flow graph (cfg.h) with theirs, its
 * loops and back edges, and the blocks ordered hottest first.
 *
 * The instructions come from a linear sweep of the known bytes (bytes not known, have[i] == 0,
 * are one "(not captured)" row each run; an undecodable byte is a ".byte" row), so code the CFG
 * does not reach (a jump table's targets, data after the code) is still listed. The blocks come
 * from cfg_build from the entry, with undecodable or missing bytes ending a path
 * (CFG_BAD_IS_EXIT), over the known prefix of the code; an instruction inside a block belongs to
 * it. A sample counts on the instruction that contains its address (a sampled IP is the next
 * instruction to run, as in perf), or as `outside` when no instruction does.
 * No I/O, no logging, no globals.
 */
#ifndef KPROF_ANNVIEW_H
#define KPROF_ANNVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/annot.h"

#define ANNVIEW_NONE UINT32_MAX
#define ANNVIEW_MAX_BYTES (1u << 20)

struct annview_insn {
	uint64_t addr;
	uint32_t size;
	uint32_t block;	   /* ANNVIEW_NONE: no block of the CFG holds it */
	uint64_t self;	   /* samples at it */
	uint64_t below;	   /* samples under it: in the kernel, or a probe of kprof's */
	char text[200];	   /* "mov %rsp, %rbp"; ".byte 0xff"; "(not captured)" */
	uint8_t bytes[16]; /* its first bytes (size of them, at most 16) */
};

struct annview_block {
	uint64_t start, end;
	uint32_t first_insn, ninsns; /* in the instruction list */
	uint64_t self, below;
	uint32_t loop_depth;
	uint32_t loop;	/* innermost loop header block holding it (itself if a header), or NONE */
	unsigned flags; /* enum cfg_block_flags */
	const char
	    *term; /* how it ends: fall, cond, jmp, jmp-out, ret, indirect, call, trap, bad */
};

struct annview_back {
	uint32_t from, to;	     /* blocks */
	uint64_t from_addr, to_addr; /* the branch instruction, the header's start */
};

struct annview {
	struct annview_insn *insns;
	size_t ninsns;
	struct annview_block *blocks;
	size_t nblocks;
	struct annview_back *backs;
	size_t nbacks;
	uint32_t *hot; /* block indices by self (then below) descending, then address */
	size_t nloops;
	uint64_t self, below;		      /* counted on instructions */
	uint64_t outside_self, outside_below; /* samples on no instruction */
	int cfg_err;	      /* 0, or why there are no blocks (cfg_build's error) */
	size_t unknown_bytes; /* bytes not known */
};

/* code[0..len) at start, have[i] != 0 where byte i is known (have may be NULL: all known), the
 * function entered at entry; counts[0..n) sorted by address (annot_collect). len at most
 * ANNVIEW_MAX_BYTES. -EINVAL (bad arguments), -E2BIG, -ENOMEM (and -ENODEV if Capstone cannot
 * open). */
int annview_build(const uint8_t *code, const uint8_t *have, size_t len, uint64_t start,
		  uint64_t entry, const struct annot_addr *counts, size_t n, struct annview **ret);
void annview_free(struct annview *v);

#endif
