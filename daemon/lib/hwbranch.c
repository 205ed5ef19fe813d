// SPDX-License-Identifier: GPL-2.0-only
/* hwbranch.c: what goes in the debug registers, how a jcc decides, estimates from rotations
 * (include/kprof/hwbranch.h). Pure: no I/O, no globals.
 */
#include <errno.h>
#include <string.h>

#include "kprof/hwbranch.h"

int hwbranch_cc(const uint8_t *code, size_t len)
{
	size_t i = 0;

	if (!code)
		return -EINVAL;
	/* Operand-size, segment (branch hint) and bnd prefixes leave the condition alone. */
	while (i < len && i < 4 &&
	       (code[i] == 0x66 || code[i] == 0x2e || code[i] == 0x3e || code[i] == 0xf2))
		i++;
	if (i >= len)
		return -ENODATA;
	if ((code[i] & 0xf0) == 0x70)
		return code[i] & 0x0f;
	if (code[i] == 0x0f) {
		if (i + 1 >= len)
			return -ENODATA;
		if ((code[i + 1] & 0xf0) == 0x80)
			return code[i + 1] & 0x0f;
	}
	return -EINVAL;
}

bool hwbranch_taken(unsigned cc, uint64_t flags)
{
	bool cf = flags & HWBRANCH_CF, pf = flags & HWBRANCH_PF, zf = flags & HWBRANCH_ZF;
	bool sf = flags & HWBRANCH_SF, of = flags & HWBRANCH_OF, r;

	switch ((cc >> 1) & 7) {
	case 0:
		r = of;
		break; /* jo */
	case 1:
		r = cf;
		break; /* jb */
	case 2:
		r = zf;
		break; /* je */
	case 3:
		r = cf || zf;
		break; /* jbe */
	case 4:
		r = sf;
		break; /* js */
	case 5:
		r = pf;
		break; /* jp */
	case 6:
		r = sf != of;
		break; /* jl */
	default:
		r = zf || sf != of;
		break; /* jle */
	}
	return (cc & 1) ? !r : r;
}

const char *hwbranch_cc_name(unsigned cc)
{
	static const char *const n[16] = {"jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja",
					  "js", "jns", "jp", "jnp", "jl", "jge", "jle", "jg"};

	return n[cc & 15];
}

bool hwbranch_in_loop(const struct cfg *g, uint32_t b, uint32_t h)
{
	const struct cfg_block *blk = cfg_block_get(g, b);
	uint32_t cur;
	size_t guard = cfg_nblocks(g) + 1;

	if (!blk)
		return false;
	if (b == h)
		return (blk->flags & CFG_BLOCK_HEADER) != 0;
	cur = blk->loop_parent;
	while (cur != CFG_NONE && guard--) {
		if (cur == h)
			return true;
		blk = cfg_block_get(g, cur);
		if (!blk)
			return false;
		cur = blk->loop_parent;
	}
	return false;
}

/* The innermost loop header of block b (itself if a header), CFG_NONE outside loops. */
static uint32_t innermost(const struct cfg *g, uint32_t b)
{
	const struct cfg_block *blk = cfg_block_get(g, b);

	return blk->flags & CFG_BLOCK_HEADER ? b : blk->loop_parent;
}

static int add_group(struct hwbranch_plan *p, const uint32_t *members, size_t n, uint32_t loop)
{
	if (p->ngroups == HWBRANCH_MAX || p->nidx + n > sizeof(p->idx) / sizeof(p->idx[0]))
		return -E2BIG;
	p->groups[p->ngroups++] = (struct hwbranch_group){(uint32_t)p->nidx, (uint32_t)n, loop};
	memcpy(p->idx + p->nidx, members, n * sizeof(*members));
	p->nidx += n;
	return 0;
}

/* Branches in order: deepest loop first, then by address (stable for equal depths). */
static void sort_branches(struct hwbranch_plan *p)
{
	for (size_t i = 1; i < p->nbr; i++) {
		struct hwbranch x = p->br[i];
		size_t j = i;

		while (j > 0 && (p->br[j - 1].depth < x.depth ||
				 (p->br[j - 1].depth == x.depth && p->br[j - 1].addr > x.addr))) {
			p->br[j] = p->br[j - 1];
			j--;
		}
		p->br[j] = x;
	}
}

static int list_branches(const struct cfg *g, const uint8_t *code, size_t len, uint64_t start,
			 struct hwbranch_plan *p)
{
	for (uint32_t b = 0; b < cfg_nblocks(g); b++) {
		const struct cfg_block *blk = cfg_block_get(g, b);
		uint32_t loop;
		int cc;

		if (blk->term != CFG_TERM_COND || blk->last < start || blk->last - start >= len)
			continue;
		cc = hwbranch_cc(code + (blk->last - start), len - (blk->last - start));
		if (cc < 0) {
			p->not_flag++;
			continue;
		}
		loop = innermost(g, b);
		if (loop == CFG_NONE) {
			p->not_looped++;
			continue;
		}
		if (p->nbr == HWBRANCH_MAX)
			return -E2BIG;
		p->br[p->nbr++] =
		    (struct hwbranch){b, blk->last, (uint8_t)cc, loop, blk->loop_depth};
	}
	return 0;
}

int hwbranch_plan(const struct cfg *g, const uint8_t *code, size_t len, uint64_t start,
		  struct hwbranch_plan *p)
{
	bool covered[HWBRANCH_MAX] = {false};
	uint32_t m[HWBRANCH_MAX];
	size_t n;
	int r;

	if (!g || !code || !p)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	r = list_branches(g, code, len, start, p);
	if (r < 0)
		return r;
	if (!p->nbr)
		return -ENOENT;
	sort_branches(p);
	/* Loops innermost first (the order of their first branch): a group per loop that fits. */
	for (size_t i = 0; i < p->nbr; i++) {
		uint32_t h = p->br[i].loop;
		bool seen = false;

		for (size_t q = 0; q < p->ngroups && !seen; q++)
			seen = p->groups[q].loop == h;
		for (size_t j = 0; j < i && !seen; j++)
			seen = p->br[j].loop == h; /* h's group was tried at its first branch */
		if (seen)
			continue;
		n = 0;
		for (size_t j = 0; j < p->nbr; j++)
			if (hwbranch_in_loop(g, p->br[j].block, h) && n <= HWBRANCH_SLOTS)
				m[n++] = (uint32_t)j;
		if (n > HWBRANCH_SLOTS)
			continue;
		for (size_t j = 0; j < n; j++)
			covered[m[j]] = true;
		r = add_group(p, m, n, h);
		if (r < 0)
			return r;
	}
	/* The rest, four at a time, for their counts. */
	n = 0;
	for (size_t i = 0; i <= p->nbr; i++) {
		if (i < p->nbr && !covered[i])
			m[n++] = (uint32_t)i;
		if (n == HWBRANCH_SLOTS || (i == p->nbr && n)) {
			r = add_group(p, m, n, CFG_NONE);
			if (r < 0)
				return r;
			n = 0;
		}
	}
	return 0;
}

uint64_t hwbranch_estimate(uint64_t counted, uint64_t covered_ns, uint64_t total_ns)
{
	if (!covered_ns)
		return 0;
	if (covered_ns >= total_ns)
		return counted;
	return (uint64_t)((double)counted * (double)total_ns / (double)covered_ns + 0.5);
}

/* The only way out of block b (FALL or JMP, or a trap/return: to CFG_EXIT), CFG_NONE if two. */
static uint32_t only_edge(const struct cfg *g, uint32_t b)
{
	const struct cfg_block *blk = cfg_block_get(g, b);

	return blk && blk->nedges == 1 ? blk->first_edge : CFG_NONE;
}

static int push_step(struct hwbranch_walk *w, uint32_t b, uint32_t e)
{
	if (w->n == HWBRANCH_WALK_MAX)
		return -E2BIG;
	w->steps[w->n++] = (struct cfg_step){b, e};
	return 0;
}

void hwbranch_walk_reset(struct hwbranch_walk *w, hwbranch_emit_fn emit, void *ud)
{
	if (w->active)
		emit(ud, HWBRANCH_ABORT, w->steps, w->n);
	w->active = false;
	w->n = 0;
}

/* From block b (reached by the last step's edge), walk the one-way blocks: 0 when a
 * conditional block is next (w->expect), 1 when the loop was left. */
static uint32_t cond_edge(const struct cfg *g, uint32_t b, bool taken);

/* Block b is conditional: the edge an assumption takes, CFG_NONE if a hit decides it, or
 * CFG_EXIT when the walk cannot go on (never ran while counted). */
static uint32_t assumed_edge(const struct cfg *g, const uint8_t *assume, uint32_t b)
{
	if (!assume || assume[b] == HWBRANCH_COVERED)
		return CFG_NONE;
	if (assume[b] == HWBRANCH_NEVER)
		return CFG_EXIT;
	return cond_edge(g, b, assume[b] == HWBRANCH_TAKEN);
}

static int walk_on(const struct cfg *g, uint32_t h, const uint8_t *assume, struct hwbranch_walk *w,
		   uint32_t b, hwbranch_emit_fn emit, void *ud)
{
	for (size_t guard = 0; guard <= cfg_nblocks(g); guard++) {
		const struct cfg_edge *last = cfg_edge_get(g, w->steps[w->n - 1].edge);
		const struct cfg_block *blk;
		uint32_t e;

		if (b == CFG_EXIT || !hwbranch_in_loop(g, b, h)) {
			emit(ud, HWBRANCH_LEAVE, w->steps, w->n);
			w->active = false;
			w->n = 0;
			return 1;
		}
		if (last && last->back) { /* an iteration ends; the next starts at b */
			w->steps[w->n - 1].edge = CFG_NONE;
			emit(ud, HWBRANCH_PATH, w->steps, w->n);
			w->n = 0;
		}
		blk = cfg_block_get(g, b);
		if (blk->term == CFG_TERM_COND) {
			e = assumed_edge(g, assume, b);
			if (e == CFG_NONE) {
				w->expect = b;
				return 0;
			}
			if (e == CFG_EXIT)
				break;
		} else {
			e = only_edge(g, b);
		}
		if (e == CFG_NONE || push_step(w, b, e) < 0)
			break;
		b = cfg_edge_get(g, e)->dst;
	}
	hwbranch_walk_reset(w, emit, ud); /* no conditional block on a cycle: cannot follow */
	return 1;
}

/* The first conditional block the header leads to (the one-way blocks on the way in w). */
static uint32_t entry_chain(const struct cfg *g, uint32_t h, const uint8_t *assume,
			    struct hwbranch_walk *w)
{
	uint32_t b = h;

	w->n = 0;
	for (size_t guard = 0; guard <= cfg_nblocks(g); guard++) {
		const struct cfg_block *blk = cfg_block_get(g, b);
		uint32_t e;

		if (!blk || !hwbranch_in_loop(g, b, h))
			return CFG_NONE;
		if (blk->term == CFG_TERM_COND) {
			e = assumed_edge(g, assume, b);
			if (e == CFG_NONE)
				return b;
			if (e == CFG_EXIT)
				return CFG_NONE;
		} else {
			e = only_edge(g, b);
		}
		if (e == CFG_NONE || push_step(w, b, e) < 0 || cfg_edge_get(g, e)->back)
			return CFG_NONE;
		b = cfg_edge_get(g, e)->dst;
	}
	return CFG_NONE;
}

/* The edge a jcc in block b takes (taken or fallthrough), CFG_NONE if the CFG has none. */
static uint32_t cond_edge(const struct cfg *g, uint32_t b, bool taken)
{
	const struct cfg_block *blk = cfg_block_get(g, b);

	for (uint32_t i = 0; i < blk->nedges; i++) {
		const struct cfg_edge *e = cfg_edge_get(g, blk->first_edge + i);

		if ((e->kind == CFG_EDGE_TAKEN) == taken)
			return blk->first_edge + i;
	}
	/* a jcc to its own fallthrough has one edge, either way */
	return blk->nedges == 1 ? blk->first_edge : CFG_NONE;
}

int hwbranch_walk_hit(const struct cfg *g, uint32_t h, struct hwbranch_walk *w, uint32_t b,
		      bool taken, hwbranch_emit_fn emit, void *ud)
{
	return hwbranch_walk_hit_assume(g, h, NULL, w, b, taken, emit, ud);
}

int hwbranch_walk_hit_assume(const struct cfg *g, uint32_t h, const uint8_t *assume,
			     struct hwbranch_walk *w, uint32_t b, bool taken, hwbranch_emit_fn emit,
			     void *ud)
{
	const struct cfg_block *blk = cfg_block_get(g, b);
	uint32_t e;

	if (!g || !w || !emit || !blk || blk->term != CFG_TERM_COND || !cfg_block_get(g, h))
		return -EINVAL;
	if (w->active && w->expect != b)
		hwbranch_walk_reset(w, emit, ud); /* a hit lost, or code reached another way */
	if (!w->active) {
		if (entry_chain(g, h, assume, w) != b) {
			w->n = 0;
			return 0;
		}
		w->active = true;
		emit(ud, HWBRANCH_ENTER, NULL, 0);
	}
	e = cond_edge(g, b, taken);
	if (e == CFG_NONE || push_step(w, b, e) < 0) {
		hwbranch_walk_reset(w, emit, ud);
		return 1;
	}
	walk_on(g, h, assume, w, cfg_edge_get(g, e)->dst, emit, ud);
	return 1;
}

int hwbranch_assume_plan(const struct cfg *g, const struct hwbranch_plan *p, uint32_t h,
			 const uint64_t *taken, const uint64_t *not_taken, uint8_t *assume,
			 uint32_t *members)
{
	size_t n = 0;

	if (!g || !p || !taken || !not_taken || !assume || !members || !cfg_block_get(g, h))
		return -EINVAL;
	memset(assume, HWBRANCH_COVERED, cfg_nblocks(g));
	for (uint32_t b = 0; b < cfg_nblocks(g); b++) {
		bool planned = false;

		if (cfg_block_get(g, b)->term != CFG_TERM_COND || !hwbranch_in_loop(g, b, h))
			continue;
		for (size_t i = 0; i < p->nbr && !planned; i++)
			planned = p->br[i].block == b;
		if (!planned)
			return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < p->nbr; i++) {
		uint32_t b = p->br[i].block;

		if (!hwbranch_in_loop(g, b, h))
			continue;
		if (taken[i] && not_taken[i]) {
			if (n == HWBRANCH_SLOTS)
				return -E2BIG;
			members[n++] = (uint32_t)i;
		} else {
			assume[b] = taken[i]	   ? HWBRANCH_TAKEN
				    : not_taken[i] ? HWBRANCH_FALL
						   : HWBRANCH_NEVER;
		}
	}
	return n ? (int)n : -ENOENT;
}
