/* SPDX-License-Identifier: GPL-2.0-only */
/* cfg.h: a pure module that recovers the control-flow graph of one x86-64 function from its code
 * bytes and gives it a Ball-Larus path numbering (ALGORITHMS.md §2).
 *
 * Input: a buffer of code, the address of its first byte, and the function's entry address.
 * Instructions are decoded with Capstone by recursive traversal from the entry: conditional
 * branches go both ways, direct jumps go to their target, calls fall through (they do not end
 * a block unless CFG_SPLIT_CALLS is set), returns, indirect jumps and traps (ud2, hlt, int3)
 * end a path. A direct branch whose target lies outside the buffer, and straight-line code that
 * runs off the end of the buffer, leave the function (a tail call): an edge to CFG_EXIT. Blocks
 * are the usual maximal runs: a new block starts at the entry, at every branch target inside the
 * buffer and after every conditional branch.
 *
 * Back edges come from a loop nesting forest (Havlak's algorithm over a DFS spanning tree, so it
 * copes with irreducible loops). Removing them leaves a DAG; each back edge v->w is replaced
 * by the dummy edges ENTRY->w and v->EXIT, and the DAG's paths from the entry block to the
 * virtual exit are numbered 0 .. num_paths-1. When the count exceeds the cap, the graph has no
 * path numbering (bl_ok false) and the tracer should count edges instead: the edge list is
 * always valid. Path ids decode back into block sequences.
 *
 * What a tracer with one probe per block leader needs (per thread, per activation, register r):
 *   function entry (cfg_transition from CFG_NONE)   emit '*'; r = 0
 *   real edge u->v, not a back edge                  r += edge.val
 *   back edge u->w                                   emit r + u.back_exit_val; r = w.entry_val
 *   leaving the function from block u                emit r + u.exit_val
 * A block with CFG_BLOCK_EXIT_ONLY always leaves the function, so its exit can be emitted at its
 * own leader; other exits (a conditional tail call) are seen by a return probe. cfg_transition()
 * returns the right action for a (previous block, this block) pair.
 *
 * Limits, by design: jump tables are not followed (an indirect jmp ends the path; control that
 * comes back into the function through one is not on any path); calls are assumed to return;
 * Capstone 4.0.2 does not know a few recent instructions (rdpkru, wrpkru, ...), which count as
 * undecodable; the bytes must be read before uprobes are attached (or from the backing file),
 * since a uprobe's int3 would decode as a trap. No I/O, no logging, no globals.
 */
#ifndef KPROF_CFG_H
#define KPROF_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CFG_NONE UINT32_MAX	   /* no block / no edge */
#define CFG_EXIT (UINT32_MAX - 1u) /* an edge's destination when it leaves the function */

#define CFG_DEFAULT_MAX_BYTES (1u << 20)
#define CFG_DEFAULT_MAX_INSNS 65536
#define CFG_DEFAULT_MAX_BLOCKS 8192
#define CFG_DEFAULT_MAX_PATHS (UINT64_C(1) << 40)

enum cfg_build_flags {
	CFG_SPLIT_CALLS = 1u << 0, /* a call ends its block (CFG_TERM_CALL, one fallthrough edge) */
	CFG_BAD_IS_EXIT = 1u << 1, /* undecodable or truncated bytes end a path (CFG_TERM_BAD)
				    * instead of failing the build */
};

struct cfg_limits {
	size_t max_bytes;   /* largest code buffer accepted (-E2BIG), default 1 MiB */
	size_t max_insns;   /* decoded instructions (-E2BIG), default 65536 */
	size_t max_blocks;  /* basic blocks (-E2BIG), default 8192 */
	uint64_t max_paths; /* above this many paths, no numbering (bl_ok false), default 2^40 */
	unsigned int flags; /* enum cfg_build_flags */
};

/* How a block ends. */
enum cfg_term {
	CFG_TERM_FALL = 1, /* no branch: the next instruction starts a block (or the buffer ends) */
	CFG_TERM_COND,	   /* jcc, jrcxz, loop*, xbegin: fallthrough and taken edges */
	CFG_TERM_JMP,	   /* direct jmp to a target in the buffer */
	CFG_TERM_JMP_OUT,  /* direct jmp out of the buffer: a tail call, leaves the function */
	CFG_TERM_RET,	   /* ret, retf, iret, sysret, sysexit */
	CFG_TERM_INDIRECT, /* jmp through a register or memory, far jmp: the path ends */
	CFG_TERM_CALL,	   /* with CFG_SPLIT_CALLS: a call; falls through */
	CFG_TERM_TRAP,	   /* ud0, ud1, ud2, hlt, int3, int1: the path ends */
	CFG_TERM_BAD,	   /* with CFG_BAD_IS_EXIT: undecodable bytes follow; the path ends */
};

enum cfg_edge_kind {
	CFG_EDGE_FALL = 1, /* fallthrough (also a jcc whose target is its own fallthrough) */
	CFG_EDGE_TAKEN,	   /* a conditional branch taken */
	CFG_EDGE_JUMP,	   /* an unconditional direct jmp */
	CFG_EDGE_EXIT,	   /* ret, indirect jmp, trap, bad bytes: always to CFG_EXIT */
};

enum cfg_block_flags {
	CFG_BLOCK_ENTRY = 1u << 0,	 /* the function's entry block */
	CFG_BLOCK_HEADER = 1u << 1,	 /* loop header: the target of back edges */
	CFG_BLOCK_IRREDUCIBLE = 1u << 2, /* header of a loop with more than one entry */
	CFG_BLOCK_BACK_SRC = 1u << 3,	 /* source of a back edge (has a dummy edge to EXIT) */
	CFG_BLOCK_EXIT = 1u << 4,	 /* has a real edge to CFG_EXIT */
	CFG_BLOCK_EXIT_ONLY = 1u << 5,	 /* every out-edge goes to CFG_EXIT */
};

struct cfg_block {
	uint64_t start, end; /* [start, end); end == start for a CFG_TERM_BAD block with no insns */
	uint64_t last;	     /* address of the last instruction (start if there is none) */
	uint32_t ninsns;
	enum cfg_term term;
	uint32_t first_edge, nedges; /* out-edges, in numbering order: fallthrough first */
	uint32_t loop_parent;	     /* innermost loop header containing the block, not counting
				      * the block's own loop if it is a header; CFG_NONE */
	uint32_t loop_depth;	     /* loops containing the block (a header is in its own) */
	unsigned int flags;	     /* enum cfg_block_flags */
	/* Ball-Larus; all 0 when the graph has no numbering. */
	uint64_t num_paths;	/* NumPaths(block) */
	uint64_t entry_val;	/* CFG_BLOCK_HEADER: val(ENTRY->block); 0 for the entry block */
	uint64_t back_exit_val; /* CFG_BLOCK_BACK_SRC: val(block->EXIT), the dummy */
	uint64_t exit_val;	/* CFG_BLOCK_EXIT: val of the real edge to CFG_EXIT */
};

struct cfg_edge {
	uint32_t src;
	uint32_t dst; /* block index or CFG_EXIT */
	enum cfg_edge_kind kind;
	bool back;
	uint64_t val; /* Ball-Larus increment; 0 on back edges and without a numbering */
};

struct cfg_stats {
	size_t insns;
	size_t blocks;
	size_t edges;
	size_t back_edges;
	size_t loops;		  /* loop headers */
	size_t irreducible_loops; /* headers with CFG_BLOCK_IRREDUCIBLE */
	bool bl_ok;		  /* the paths were numbered (num_paths <= max_paths) */
	uint64_t num_paths;	  /* NumPaths(entry) when bl_ok, else 0 */
	size_t memory;		  /* bytes held */
};

/* One step of a decoded path: a block, and the edge taken out of it. On the last step the edge
 * goes to CFG_EXIT, or is CFG_NONE when the path ends by taking a back edge. */
struct cfg_step {
	uint32_t block;
	uint32_t edge;
};

enum cfg_act {
	CFG_ACT_START = 1, /* function entry: emit '*', r = 0 */
	CFG_ACT_ADD,	   /* r += add */
	CFG_ACT_BACK,	   /* back edge: emit r + add, then r = reset */
};

struct cfg_transition {
	enum cfg_act act;
	uint32_t edge; /* edge index; CFG_NONE for CFG_ACT_START */
	uint64_t add;
	uint64_t reset;
};

struct cfg;

/* Build the CFG of the function entered at `entry`, from code[0..len) mapped at `start`.
 * lim may be NULL (defaults); zero fields take their defaults.
 * Errors: -EINVAL (NULL or empty code, start + len overflows, entry outside the code, undecodable
 * bytes reached, a branch into the middle of an instruction or overlapping instructions),
 * -ENODATA (an instruction reached runs past the end of the buffer), -E2BIG (a limit, or
 * irreducible loops nested so deep that the loop analysis would need quadratic memory), -ENOMEM.
 * With CFG_BAD_IS_EXIT the two decoding errors become CFG_TERM_BAD path ends instead. */
int cfg_build(const uint8_t *code, size_t len, uint64_t start, uint64_t entry,
	      const struct cfg_limits *lim, struct cfg **ret);
void cfg_free(struct cfg *g);

/* Blocks are in address order; edges grouped by source block in numbering order. */
size_t cfg_nblocks(const struct cfg *g);
const struct cfg_block *cfg_block_get(const struct cfg *g, uint32_t i); /* NULL out of range */
size_t cfg_nedges(const struct cfg *g);
const struct cfg_edge *cfg_edge_get(const struct cfg *g, uint32_t i); /* NULL out of range */
uint32_t cfg_entry_block(const struct cfg *g);
bool cfg_bl_ok(const struct cfg *g);
uint64_t cfg_num_paths(const struct cfg *g); /* 0 when !bl_ok */
void cfg_get_stats(const struct cfg *g, struct cfg_stats *st);

/* Index of the block containing addr (or starting at it), -ENOENT if none. */
int cfg_block_find(const struct cfg *g, uint64_t addr);
/* Index of the edge from block `from` to `to` (a block or CFG_EXIT), -ENOENT if none. */
int cfg_edge_find(const struct cfg *g, uint32_t from, uint32_t to);

/* The tracer's action when control reaches block `to` from block `from` (CFG_NONE: function
 * entry, then `to` must be the entry block). -ENOENT if there is no such edge, -EOVERFLOW
 * without a numbering (count cfg_edge_find(from, to) instead). */
int cfg_transition(const struct cfg *g, uint32_t from, uint32_t to, struct cfg_transition *t);

/* Decode a path id into steps[0..n); returns n >= 1. A path never repeats a block, so cap =
 * cfg_nblocks() always suffices. -ERANGE if id >= num_paths, -ENOSPC if cap is too small,
 * -EOVERFLOW without a numbering. The first block is the entry block (a path from function
 * entry, or one that began with a back edge to the entry) or a loop header (a path that began
 * with a back edge to it). */
int cfg_path_decode(const struct cfg *g, uint64_t id, struct cfg_step *steps, size_t cap);
/* The inverse: the id of a path given as steps (same form as decoded). -EINVAL if the steps are
 * not a path of the numbering DAG, -EOVERFLOW without a numbering. */
int cfg_path_encode(const struct cfg *g, const struct cfg_step *steps, size_t n, uint64_t *id);

/* Check every structural invariant (blocks, edges, acyclicity without back edges, loop
 * headers, NumPaths and vals); 0 or -EUCLEAN. For tests and debug builds. */
int cfg_check(const struct cfg *g);

/* A block terminator's name as kprofctl shows it ("fall", "cond", "jmp-out", ...; "?" for an
 * unknown value). */
const char *cfg_term_name(enum cfg_term t);

#endif
