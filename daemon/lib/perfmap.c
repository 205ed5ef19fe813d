// SPDX-License-Identifier: GPL-2.0-only
/* perfmap.c: parser and index for JIT perf map files (see include/kprof/perfmap.h).
 *
 * Input. Bytes are split on '\n'. A complete line found whole in the fed buffer is parsed in
 * place; only the final, unterminated part of a feed is copied into the pending buffer (at most
 * max_line bytes, grown on demand). Once the current line is known to exceed max_line the parser
 * just counts its bytes until the next '\n' ("skipping"), so an endless line costs no memory. The
 * line grammar (strict on numbers, lenient on blanks):
 *     [blanks] [0x|0X] 1-16 hex digits  blanks  [0x|0X] 1-16 hex digits  blanks  name ['\r']
 * where blanks are spaces or tabs. The name is everything after the blanks that follow SIZE,
 * minus one trailing '\r'; other trailing blanks are kept, as perf keeps them. A line is bad
 * (counted, skipped) if it has any NUL byte, a malformed number, size 0, start + size beyond
 * UINT64_MAX, or no name; an empty line is a bad line too. So lines == entries + bad_lines +
 * dropped.
 *
 * Storage. Entries are kept in feed order (the sequence number is the index) in blocks of growing
 * size (64, 128, 256, ...) that never move, so a struct perfmap_sym returned by a lookup stays
 * valid until reset or free, across later feeds. Names go to a chunked arena, NUL-terminated.
 *
 * Index. "The later line wins" is resolved once, into sorted disjoint segments [start, end), each
 * owned by the newest entry covering it; a lookup is a binary search over the segment starts (two
 * levels, see struct segs) and returns the owning entry itself (its original start and size, not
 * the piece's). The index is brought up to date lazily, and incrementally: the k entries fed since
 * the last build are sorted by start (skipped if already sorted, as JIT maps often are) and swept
 * with a max-heap on sequence number (lazy deletion of ended entries) into their own disjoint
 * segments, O(k log k); these are newer than anything already indexed, so they are merged over
 * the old segments, cutting those they overlap, in O(n + k). A full load is the case n = 0. There
 * are at most 2k - 1 new segments and each cuts at most one old segment in two, so the index stays
 * O(number of entries).
 *
 * Out of memory. perfmap_feed() returns -ENOMEM and the input of that call is partly lost (the
 * stats say how far it got); the caller should perfmap_reset() and re-read. A lookup that cannot
 * build its index returns NULL (perfmap_build_index() reports the error).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/arena.h"
#include "kprof/perfmap.h"
#include "kprof/search.h"

#define DEFAULT_MAX_LINE 4096
#define DEFAULT_MAX_ENTRIES (4u << 20)
#define DEFAULT_MAX_BYTES (UINT64_C(512) << 20)
#define MAX_ENTRIES (UINT32_MAX - 1) /* sequence numbers are 32-bit */

#define TOP_STRIDE 16
#define ENT_BASE 64 /* block k holds ENT_BASE << k entries */
#define ENT_BLOCKS 40

/* Disjoint segments sorted by start. The starts are searched in two steps, first top[] (every
 * TOP_STRIDE-th start: small enough to stay in cache) then one block of TOP_STRIDE starts (two
 * cache lines); end and owner are read together once the segment is found. */
struct seg_tail {
	uint64_t end;
	uint32_t idx; /* sequence number of the owning entry */
};

struct segs {
	uint64_t *start;
	struct seg_tail *tail;
	size_t n, cap;
	uint64_t *top;
	size_t ntop;
};

struct perfmap {
	struct perfmap_limits lim;
	struct perfmap_stats st;

	struct perfmap_sym *blocks[ENT_BLOCKS];
	size_t n;	    /* entries stored */
	struct arena names; /* the symbols' names */

	char *line; /* pending partial line */
	size_t line_len, line_cap;
	bool skipping;	   /* the current line is too long: count bytes until '\n' */
	uint64_t skip_len; /* bytes of that line so far */

	struct segs index;
	size_t indexed; /* entries [0, indexed) are in the index */
};

static size_t block_size(unsigned k)
{
	return (size_t)ENT_BASE << k;
}

/* Entry i is in block k = floor(log2(i / ENT_BASE + 1)), starting at ENT_BASE * (2^k - 1). */
static unsigned block_of(size_t i)
{
	unsigned long long q = i / ENT_BASE + 1;

	return (unsigned)(sizeof(q) * CHAR_BIT - 1) - (unsigned)__builtin_clzll(q);
}

static struct perfmap_sym *ent_at(const struct perfmap *pm, size_t i)
{
	unsigned k = block_of(i);

	return &pm->blocks[k][i - ENT_BASE * (((size_t)1 << k) - 1)];
}

static void segs_free(struct segs *s)
{
	free(s->start);
	free(s->tail);
	free(s->top);
	memset(s, 0, sizeof(*s));
}

static int segs_alloc(struct segs *s, size_t cap)
{
	memset(s, 0, sizeof(*s));
	if (cap == 0)
		return 0;
	s->start = malloc(cap * sizeof(*s->start));
	s->tail = malloc(cap * sizeof(*s->tail));
	if (!s->start || !s->tail) {
		segs_free(s);
		return -ENOMEM;
	}
	s->cap = cap;
	return 0;
}

/* Give back the slack of an upper-bound allocation and build top[]. */
static int segs_finish(struct segs *s)
{
	size_t i;
	void *p;

	if (s->n < s->cap && s->n) {
		if ((p = realloc(s->start, s->n * sizeof(*s->start))))
			s->start = p;
		if ((p = realloc(s->tail, s->n * sizeof(*s->tail))))
			s->tail = p;
		s->cap = s->n; /* failing to shrink is harmless: cap is only an upper bound */
	}
	s->ntop = (s->n + TOP_STRIDE - 1) / TOP_STRIDE;
	if (s->ntop) {
		s->top = malloc(s->ntop * sizeof(*s->top));
		if (!s->top)
			return -ENOMEM;
	}
	for (i = 0; i < s->ntop; i++)
		s->top[i] = s->start[i * TOP_STRIDE];
	return 0;
}

static void segs_emit(struct segs *s, uint64_t start, uint64_t end, uint32_t idx)
{
	struct seg_tail *last = s->n ? &s->tail[s->n - 1] : NULL;

	if (last && last->end == start && last->idx == idx) {
		last->end = end;
		return;
	}
	s->start[s->n] = start;
	s->tail[s->n].end = end;
	s->tail[s->n].idx = idx;
	s->n++;
}

int perfmap_new(const struct perfmap_limits *lim, struct perfmap **ret)
{
	struct perfmap *pm;

	if (!ret)
		return -EINVAL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->lim.max_line = lim && lim->max_line ? lim->max_line : DEFAULT_MAX_LINE;
	pm->lim.max_entries = lim && lim->max_entries ? lim->max_entries : DEFAULT_MAX_ENTRIES;
	pm->lim.max_bytes = lim && lim->max_bytes ? lim->max_bytes : DEFAULT_MAX_BYTES;
	if (pm->lim.max_entries > MAX_ENTRIES)
		pm->lim.max_entries = MAX_ENTRIES;
	*ret = pm;
	return 0;
}

static void free_entries(struct perfmap *pm)
{
	unsigned k;

	arena_release(&pm->names);
	for (k = 0; k < ENT_BLOCKS; k++) {
		free(pm->blocks[k]);
		pm->blocks[k] = NULL;
	}
	pm->n = 0;
	segs_free(&pm->index);
	pm->indexed = 0;
}

void perfmap_free(struct perfmap *pm)
{
	if (!pm)
		return;
	free_entries(pm);
	free(pm->line);
	free(pm);
}

void perfmap_reset(struct perfmap *pm)
{
	if (!pm)
		return;
	free_entries(pm);
	memset(&pm->st, 0, sizeof(pm->st));
	pm->line_len = 0;
	pm->skipping = false;
	pm->skip_len = 0;
}

/* Returns 1 if stored, 0 if dropped by the cap, -ENOMEM. */
static int add_entry(struct perfmap *pm, uint64_t start, uint64_t size, const char *name,
		     size_t len)
{
	struct perfmap_sym *e;
	unsigned k;
	char *copy;

	if (pm->n >= pm->lim.max_entries) {
		pm->st.dropped++;
		return 0;
	}
	k = block_of(pm->n);
	if (!pm->blocks[k]) {
		pm->blocks[k] = malloc(block_size(k) * sizeof(struct perfmap_sym));
		if (!pm->blocks[k])
			return -ENOMEM;
	}
	copy = arena_alloc(&pm->names, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, name, len);
	copy[len] = '\0';

	e = ent_at(pm, pm->n++);
	e->start = start;
	e->size = size;
	e->name = copy;
	pm->st.entries++;
	return 1;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

static int hex_digit(unsigned char c)
{
	if ((unsigned)(c - '0') < 10)
		return c - '0';
	c |= 0x20; /* 'A'-'F' to 'a'-'f'; no other byte lands there */
	if ((unsigned)(c - 'a') < 6)
		return c - 'a' + 10;
	return -1;
}

/* [0x|0X] 1-16 hex digits followed by a blank; returns the position after the digits. */
static const char *parse_hex(const char *p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0, d;

	if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end && (d = hex_digit((unsigned char)*p)) >= 0; p++) {
		if (++digits > 16)
			return NULL;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || p == end || !is_blank(*p))
		return NULL;
	*out = v;
	return p;
}

/* One complete line without its '\n'. Returns 1 if stored, 0 if not, -ENOMEM. */
static int parse_line(struct perfmap *pm, const char *p, size_t len)
{
	const char *end = p + len;
	uint64_t start, size;

	if (len && end[-1] == '\r')
		end--;
	if (memchr(p, '\0', len))
		goto bad;
	p = skip_blanks(p, end);
	p = parse_hex(p, end, &start);
	if (!p)
		goto bad;
	p = parse_hex(skip_blanks(p, end), end, &size);
	if (!p)
		goto bad;
	p = skip_blanks(p, end);
	if (p == end || size == 0 || size > UINT64_MAX - start)
		goto bad;
	return add_entry(pm, start, size, p, (size_t)(end - p));
bad:
	pm->st.bad_lines++;
	return 0;
}

static int line_append(struct perfmap *pm, const char *p, size_t len)
{
	size_t need = pm->line_len + len;

	if (need > pm->line_cap) {
		size_t cap = pm->line_cap ? pm->line_cap : 128;
		char *nl;

		while (cap < need)
			cap *= 2;
		if (cap > pm->lim.max_line)
			cap = pm->lim.max_line;
		nl = realloc(pm->line, cap);
		if (!nl)
			return -ENOMEM;
		pm->line = nl;
		pm->line_cap = cap;
	}
	memcpy(pm->line + pm->line_len, p, len);
	pm->line_len = need;
	return 0;
}

/* The line ending here with a '\n' at p[len]. */
static int end_line(struct perfmap *pm, const char *p, size_t len)
{
	int r = 0;

	pm->st.lines++;
	if (pm->skipping || pm->line_len + len > pm->lim.max_line) {
		pm->st.long_lines++;
		pm->st.bad_lines++;
	} else if (pm->line_len) {
		r = line_append(pm, p, len);
		if (r == 0)
			r = parse_line(pm, pm->line, pm->line_len);
	} else {
		r = parse_line(pm, p, len);
	}
	pm->skipping = false;
	pm->skip_len = 0;
	pm->line_len = 0;
	return r;
}

/* The start of a line with no '\n' yet. */
static int keep_partial(struct perfmap *pm, const char *p, size_t len)
{
	if (pm->skipping) {
		pm->skip_len += len;
	} else if (pm->line_len + len > pm->lim.max_line) {
		pm->skipping = true;
		pm->skip_len = pm->line_len + len;
		pm->line_len = 0;
	} else {
		return line_append(pm, p, len);
	}
	return 0;
}

int perfmap_feed(struct perfmap *pm, const char *buf, size_t len)
{
	size_t before, n;
	const char *nl;
	int r;

	if (!pm || (!buf && len))
		return -EINVAL;
	if (pm->st.truncated || len == 0)
		return 0;
	if (len > pm->lim.max_bytes - pm->st.bytes) {
		len = (size_t)(pm->lim.max_bytes - pm->st.bytes);
		pm->st.truncated = 1;
	}
	pm->st.bytes += len;

	before = pm->n;
	while (len) {
		nl = memchr(buf, '\n', len);
		if (!nl) {
			r = keep_partial(pm, buf, len);
			if (r < 0)
				return r;
			break;
		}
		n = (size_t)(nl - buf);
		r = end_line(pm, buf, n);
		if (r < 0)
			return r;
		buf += n + 1;
		len -= n + 1;
	}
	n = pm->n - before;
	return n > INT_MAX ? INT_MAX : (int)n;
}

int perfmap_add(struct perfmap *pm, uint64_t start, uint64_t size, const char *name, size_t len)
{
	if (!pm || (!name && len))
		return -EINVAL;
	pm->st.lines++;
	if (!len || size == 0 || size > UINT64_MAX - start || memchr(name, '\0', len)) {
		pm->st.bad_lines++;
		return 0;
	}
	return add_entry(pm, start, size, name, len);
}

const struct perfmap_sym *perfmap_last(const struct perfmap *pm)
{
	return pm && pm->n ? ent_at(pm, pm->n - 1) : NULL;
}

struct span {
	uint64_t start, end;
	uint32_t seq;
};

static int cmp_span(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Max-heap of span indices by sequence number. */
static void heap_push(uint32_t *h, size_t *n, const struct span *sp, uint32_t x)
{
	size_t i = (*n)++, parent;

	while (i && sp[h[parent = (i - 1) / 2]].seq < sp[x].seq) {
		h[i] = h[parent];
		i = parent;
	}
	h[i] = x;
}

static void heap_pop(uint32_t *h, size_t *n, const struct span *sp)
{
	uint32_t x = h[--*n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && sp[h[c + 1]].seq > sp[h[c]].seq)
			c++;
		if (sp[h[c]].seq <= sp[x].seq)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* Sweep spans sorted by start into disjoint segments owned by the newest covering span. */
static void resolve(const struct span *sp, size_t k, uint32_t *heap, struct segs *out)
{
	size_t i = 0, hn = 0;
	uint64_t x = 0, next;

	while (i < k || hn) {
		if (!hn)
			x = sp[i].start;
		while (i < k && sp[i].start <= x) {
			heap_push(heap, &hn, sp, (uint32_t)i);
			i++;
		}
		while (hn && sp[heap[0]].end <= x)
			heap_pop(heap, &hn, sp);
		if (!hn)
			continue;
		next = sp[heap[0]].end;
		if (i < k && sp[i].start < next)
			next = sp[i].start;
		segs_emit(out, x, next, sp[heap[0]].seq);
		x = next;
	}
}

/* Lay the newer segments b over the older ones o, cutting what they cover. */
static void merge(const struct segs *o, const struct segs *b, struct segs *out)
{
	uint64_t cut = 0, s, e;
	size_t i, j = 0;

	for (i = 0; i < b->n; i++) {
		while (j < o->n) {
			s = o->start[j] > cut ? o->start[j] : cut;
			if (s >= b->start[i])
				break;
			e = o->tail[j].end;
			segs_emit(out, s, e < b->start[i] ? e : b->start[i], o->tail[j].idx);
			if (e > b->start[i])
				break;
			j++;
		}
		segs_emit(out, b->start[i], b->tail[i].end, b->tail[i].idx);
		cut = b->tail[i].end;
		while (j < o->n && o->tail[j].end <= cut)
			j++;
	}
	for (; j < o->n; j++)
		segs_emit(out, o->start[j] > cut ? o->start[j] : cut, o->tail[j].end,
			  o->tail[j].idx);
}

int perfmap_build_index(struct perfmap *pm)
{
	_cleanup_free_ struct span *sp = NULL;
	_cleanup_free_ uint32_t *heap = NULL;
	struct segs b, out;
	size_t k, i;
	bool sorted = true;

	if (!pm)
		return -EINVAL;
	k = pm->n - pm->indexed;
	if (k == 0)
		return 0;
	sp = malloc(k * sizeof(*sp));
	heap = malloc(k * sizeof(*heap));
	if (!sp || !heap || segs_alloc(&b, 2 * k) < 0)
		return -ENOMEM;
	for (i = 0; i < k; i++) {
		const struct perfmap_sym *e = ent_at(pm, pm->indexed + i);

		sp[i].start = e->start;
		sp[i].end = e->start + e->size;
		sp[i].seq = (uint32_t)(pm->indexed + i);
		if (i && sp[i].start < sp[i - 1].start)
			sorted = false;
	}
	if (!sorted)
		qsort(sp, k, sizeof(*sp), cmp_span);
	resolve(sp, k, heap, &b);

	if (pm->index.n == 0) {
		out = b;
	} else {
		if (segs_alloc(&out, pm->index.n + 2 * b.n) < 0) {
			segs_free(&b);
			return -ENOMEM;
		}
		merge(&pm->index, &b, &out);
		segs_free(&b);
	}
	if (segs_finish(&out) < 0) {
		segs_free(&out);
		return -ENOMEM;
	}
	segs_free(&pm->index);
	pm->index = out;
	pm->indexed = pm->n;
	return 0;
}

const struct perfmap_sym *perfmap_lookup(struct perfmap *pm, uint64_t addr)
{
	const struct segs *x;
	size_t b, n;

	if (!pm || (pm->indexed != pm->n && perfmap_build_index(pm) < 0))
		return NULL;
	x = &pm->index;
	if (x->n == 0 || addr < x->start[0])
		return NULL;
	b = last_le(x->top, x->ntop, addr) * TOP_STRIDE;
	n = x->n - b < TOP_STRIDE ? x->n - b : TOP_STRIDE;
	b += last_le(x->start + b, n, addr);
	if (addr >= x->tail[b].end)
		return NULL;
	return ent_at(pm, x->tail[b].idx);
}

const struct perfmap_sym *perfmap_lookup_frame(struct perfmap *pm, uint64_t addr)
{
	const struct perfmap_sym *s = perfmap_lookup(pm, addr), *next;

	if (addr == UINT64_MAX || (s && s->start + s->size != addr + 1))
		return s;
	next = perfmap_lookup(pm, addr + 1);
	return next && next->start == addr + 1 ? next : s;
}

void perfmap_get_stats(const struct perfmap *pm, struct perfmap_stats *st)
{
	if (!st)
		return;
	if (!pm) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = pm->st;
}

size_t perfmap_pending(const struct perfmap *pm)
{
	if (!pm)
		return 0;
	return pm->skipping ? (size_t)pm->skip_len : pm->line_len;
}

size_t perfmap_memory(const struct perfmap *pm)
{
	size_t sz;
	unsigned k;

	if (!pm)
		return 0;
	sz = sizeof(*pm) + pm->line_cap + pm->names.bytes +
	     pm->index.cap * (sizeof(uint64_t) + sizeof(struct seg_tail)) +
	     pm->index.ntop * sizeof(uint64_t);
	for (k = 0; k < ENT_BLOCKS; k++) {
		if (pm->blocks[k])
			sz += block_size(k) * sizeof(struct perfmap_sym);
	}
	return sz;
}

int perfmap_foreach(const struct perfmap *pm, perfmap_sym_fn fn, void *userdata)
{
	for (size_t i = 0; i < pm->n; i++) {
		int r = fn(ent_at(pm, i), userdata);

		if (r)
			return r;
	}
	return 0;
}

int perfmap_name_match(const char *name, const char *typed, size_t len)
{
	if (!len || strncmp(name, typed, len))
		return 0;
	return name[len] == '\0' ? 2 : name[len] == ' ';
}
