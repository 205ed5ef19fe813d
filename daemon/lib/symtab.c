// SPDX-License-Identifier: GPL-2.0-only
/* symtab.c: sorted address-range table for symbol lookup (see include/kprof/symtab.h).
 *
 * Storage: one array of entries (start, size, name pointer, two 31-bit links) and a name arena
 * made of chunks that never move, so name pointers handed out stay valid until symtab_free().
 *
 * symtab_finish():
 *  1. Entries added with size 0 carry an "implicit" flag; their size is reset to 0, so a table
 *     finished again (after more symtab_add() calls) recomputes every implicit size.
 *  2. Sort by start ascending, then size descending, then by name preference (see cmp_sym): the
 *     last entry of a run with equal start is the innermost one, and among aliases of the same
 *     range the "best" name (fewest leading underscores, then shortest, then strcmp-first), in
 *     the spirit of perf's choose_best_symbol().
 *  3. Exact duplicates (same start, size as added, name) are dropped for good.
 *  4. A size-0 entry gets size = next distinct start - start, at most max_implicit_size. With
 *     max_implicit_size == 0 there is no cap. An entry with no next start gets max_implicit_size
 *     (clamped to the end of the address space); if that is 0 it gets no size. An implicit
 *     entry that now duplicates a sized one exactly is redundant. Both kinds are "parked": kept
 *     after the searchable prefix (not counted, not looked up) so that a later re-finish with more
 *     symbols can size them.
 *  5. Lookup links are built (below).
 *
 * Lookup must return, among the symbols containing addr, the one with the greatest start (ties:
 * the last in sort order, i.e. the innermost). With i = the last entry whose start <= addr, that
 * is the greatest j <= i with end[j] > addr (end = start + size, which never overflows). Let
 * up[j] be the nearest k < j with end[k] > end[j] (the "previous greater end", a stack pass in
 * O(n)). If j fails (end[j] <= addr) every k in (up[j], j) has end[k] <= end[j] <= addr and fails
 * too, so the answer is the first entry on the chain i, up[i], up[up[i]], ... that contains addr.
 * Ends strictly increase along a chain (each entry is nested in its up), so the predicate is
 * monotone and the chain is searched with skew-binary jump pointers (Myers 1983): each entry also
 * stores jump[j], an ancestor chosen so that any search takes O(log depth) steps. A table without
 * overlaps has up[j] = none everywhere and a lookup is one binary search plus one comparison;
 * adversarial deep nesting (a crafted ELF file) stays logarithmic rather than linear. The binary
 * search itself goes through top[] (every 16th start, small enough to stay in cache) and then one
 * block of 16 entries, which saves most cache and TLB misses on large tables.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/search.h"
#include "kprof/arena.h"
#include "kprof/symtab.h"

#define IMPLICIT_FLAG (UINT32_C(1) << 31) /* in sym_ent.up: the size was 0 when added */
#define IDX_MASK (IMPLICIT_FLAG - 1)
#define MAX_SYMS ((size_t)IDX_MASK - 1) /* every index and the virtual root fit in 31 bits */

#define TOP_STRIDE 16 /* top[] holds every TOP_STRIDE-th start */

struct sym_ent {
	struct symtab_sym sym; /* first member: symtab_lookup() returns &ent->sym */
	uint32_t up;	       /* previous entry with a greater end, or the root; + IMPLICIT_FLAG */
	uint32_t jump;	       /* skew-binary jump pointer along the up chain */
};

struct symtab {
	struct sym_ent *ents;
	size_t n;      /* entries held: searchable prefix, parked, added since the last finish */
	size_t cap;    /* allocated entries */
	size_t live;   /* finished: entries [0, live) are sorted and searchable */
	uint64_t *top; /* finished: start of every TOP_STRIDE-th entry, a first level in cache */
	size_t top_cap;
	size_t max_syms;
	bool finished;
	struct arena names; /* the symbols' names */
};

int symtab_new(size_t max_syms, struct symtab **ret)
{
	struct symtab *st;

	if (!ret)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->max_syms = max_syms < MAX_SYMS ? max_syms : MAX_SYMS;
	*ret = st;
	return 0;
}

void symtab_free(struct symtab *st)
{
	if (!st)
		return;
	arena_release(&st->names);
	free(st->ents);
	free(st->top);
	free(st);
}

static int grow_ents(struct symtab *st)
{
	struct sym_ent *v;
	size_t cap;

	if (st->n < st->cap)
		return 0;
	cap = st->cap ? st->cap * 2 : 64;
	if (cap > st->max_syms)
		cap = st->max_syms;
	v = realloc(st->ents, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	st->ents = v;
	st->cap = cap;
	return 0;
}

int symtab_add(struct symtab *st, uint64_t start, uint64_t size, const char *name, size_t len)
{
	struct sym_ent *e;
	char *copy;
	int r;

	if (!st || !name || len == 0 || memchr(name, '\0', len))
		return -EINVAL;
	if (size > UINT64_MAX - start)
		return -EINVAL;
	if (st->n >= st->max_syms)
		return -E2BIG;
	if (len >= SIZE_MAX)
		return -ENOMEM;
	r = grow_ents(st);
	if (r < 0)
		return r;
	copy = arena_alloc(&st->names, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, name, len);
	copy[len] = '\0';

	e = &st->ents[st->n++];
	e->sym.start = start;
	e->sym.size = size;
	e->sym.name = copy;
	e->up = size ? 0 : IMPLICIT_FLAG;
	e->jump = 0;
	st->finished = false;
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Total order; 0 only for identical (start, size, name). Within equal (start, size) the preferred
 * name sorts last, since lookup returns the last candidate. */
static int cmp_sym(const void *pa, const void *pb)
{
	const struct symtab_sym *a = pa, *b = pb;
	size_t ua, ub, la, lb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua > ub ? -1 : 1;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la > lb ? -1 : 1;
	return -strcmp(a->name, b->name);
}

static bool is_implicit(const struct sym_ent *e)
{
	return e->up & IMPLICIT_FLAG;
}

/* Drop adjacent identical entries (the array is sorted); returns the new count. */
static size_t drop_duplicates(struct sym_ent *v, size_t n)
{
	size_t r, w = 0;

	for (r = 0; r < n; r++) {
		if (w && cmp_sym(&v[w - 1].sym, &v[r].sym) == 0)
			continue;
		v[w++] = v[r];
	}
	return w;
}

static uint64_t implicit_size(uint64_t start, bool has_next, uint64_t next, uint64_t max)
{
	uint64_t sz;

	if (has_next) {
		sz = next - start;
		return max && sz > max ? max : sz;
	}
	sz = UINT64_MAX - start;
	return sz < max ? sz : max;
}

/* Size the implicit entries of the run [g, h) of equal start; an entry left with size 0 is to be
 * parked. */
static void size_group(struct sym_ent *v, size_t g, size_t h, size_t n, uint64_t max)
{
	uint64_t isz = implicit_size(v[g].sym.start, h < n, h < n ? v[h].sym.start : 0, max);
	bool any = false;
	size_t i;

	for (i = g; i < h; i++) {
		if (v[i].sym.size == 0 && isz) {
			v[i].sym.size = isz;
			any = true;
		}
	}
	if (!any || h - g < 2)
		return;
	qsort(v + g, h - g, sizeof(*v), cmp_sym);
	/* An implicit entry equal to a sized one adds nothing; identical implicit ones were
	 * dropped before sizing, so a pair here always has one sized member. */
	for (i = g + 1; i < h; i++) {
		if (v[i - 1].sym.size && cmp_sym(&v[i - 1].sym, &v[i].sym) == 0)
			v[is_implicit(&v[i]) ? i : i - 1].sym.size = 0;
	}
}

/* Move entries of size 0 behind the others, keeping the order of the rest. */
static int park_unsized(struct symtab *st)
{
	_cleanup_free_ struct sym_ent *parked = NULL;
	size_t i, w = 0, np = 0;

	for (i = 0; i < st->n; i++)
		np += st->ents[i].sym.size == 0;
	if (np) {
		parked = malloc(np * sizeof(*parked));
		if (!parked)
			return -ENOMEM;
	}
	np = 0;
	for (i = 0; i < st->n; i++) {
		if (st->ents[i].sym.size == 0)
			parked[np++] = st->ents[i];
		else
			st->ents[w++] = st->ents[i];
	}
	st->live = w;
	if (np)
		memcpy(st->ents + w, parked, np * sizeof(*parked));
	return 0;
}

static uint32_t jump_of(const struct sym_ent *v, uint32_t root, uint32_t x)
{
	return x == root ? root : v[x].jump;
}

/* Previous-greater-end links and jump pointers over the searchable prefix. tmp holds 2*live+1. */
static void build_links(struct sym_ent *v, size_t live, uint32_t *tmp)
{
	uint32_t *stack = tmp, *depth = tmp + live;
	uint32_t root = (uint32_t)live, j, p, jp, jjp;
	size_t sp = 0;

	depth[root] = 0;
	for (j = 0; j < live; j++) {
		uint64_t end = v[j].sym.start + v[j].sym.size;

		while (sp && v[stack[sp - 1]].sym.start + v[stack[sp - 1]].sym.size <= end)
			sp--;
		p = sp ? stack[sp - 1] : root;
		stack[sp++] = j;

		depth[j] = depth[p] + 1;
		jp = jump_of(v, root, p);
		jjp = jump_of(v, root, jp);
		v[j].up = (v[j].up & IMPLICIT_FLAG) | p;
		if (p != root && depth[p] - depth[jp] == depth[jp] - depth[jjp])
			v[j].jump = jjp;
		else
			v[j].jump = p;
	}
}

int symtab_finish(struct symtab *st, uint64_t max_implicit_size)
{
	_cleanup_free_ uint32_t *tmp = NULL;
	size_t i, g;
	int r;

	if (!st)
		return -EINVAL;
	st->finished = false;
	st->live = 0;
	free(st->top);
	st->top_cap = st->n / TOP_STRIDE + 1;
	st->top = malloc(st->top_cap * sizeof(*st->top));
	tmp = malloc((2 * st->n + 1) * sizeof(*tmp));
	if (!st->top)
		st->top_cap = 0;
	if (!tmp || !st->top)
		return -ENOMEM;

	for (i = 0; i < st->n; i++) {
		if (is_implicit(&st->ents[i]))
			st->ents[i].sym.size = 0;
	}
	if (st->n) {
		qsort(st->ents, st->n, sizeof(*st->ents), cmp_sym);
		st->n = drop_duplicates(st->ents, st->n);
	}

	for (g = 0; g < st->n; g = i) {
		for (i = g + 1; i < st->n && st->ents[i].sym.start == st->ents[g].sym.start; i++)
			;
		size_group(st->ents, g, i, st->n, max_implicit_size);
	}
	/* On failure the sizes just given are recomputed by the next finish: nothing is lost. */
	r = park_unsized(st);
	if (r < 0)
		return r;

	build_links(st->ents, st->live, tmp);
	for (i = 0; i * TOP_STRIDE < st->live; i++)
		st->top[i] = st->ents[i * TOP_STRIDE].sym.start;
	st->finished = true;
	return 0;
}

const struct symtab_sym *symtab_lookup(const struct symtab *st, uint64_t addr)
{
	const struct sym_ent *v;
	size_t n, base, half;
	uint32_t root, x, j;

	if (!st || !st->finished || !st->live)
		return NULL;
	v = st->ents;
	if (addr < v[0].sym.start)
		return NULL;
	base = last_le(st->top, (st->live + TOP_STRIDE - 1) / TOP_STRIDE, addr) * TOP_STRIDE;
	n = st->live - base < TOP_STRIDE ? st->live - base : TOP_STRIDE;
	while (n > 1) {
		half = n / 2;
		base = v[base + half].sym.start <= addr ? base + half : base;
		n -= half;
	}

	/* Every entry on the chain from base starts at or below addr. */
	root = (uint32_t)st->live;
	x = (uint32_t)base;
	while (x != root) {
		if (addr - v[x].sym.start < v[x].sym.size)
			return &v[x].sym;
		j = v[x].jump;
		if (j != root && addr - v[j].sym.start >= v[j].sym.size)
			x = j;
		else
			x = v[x].up & IDX_MASK;
	}
	return NULL;
}

size_t symtab_count(const struct symtab *st)
{
	if (!st)
		return 0;
	return st->finished ? st->live : st->n;
}

size_t symtab_index(const struct symtab *st, const struct symtab_sym *s)
{
	return (size_t)((const struct sym_ent *)s - st->ents);
}

const struct symtab_sym *symtab_at(const struct symtab *st, size_t i)
{
	if (!st || !st->finished || i >= st->live)
		return NULL;
	return &st->ents[i].sym;
}

size_t symtab_memory(const struct symtab *st)
{
	if (!st)
		return 0;
	return sizeof(*st) + st->cap * sizeof(*st->ents) + st->names.bytes +
	       st->top_cap * sizeof(*st->top);
}
