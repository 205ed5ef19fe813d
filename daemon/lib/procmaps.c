// SPDX-License-Identifier: GPL-2.0-only
/* procmaps.c: parse /proc/PID/maps (see include/kprof/procmaps.h).
 *
 * Line format: "START-END PERMS OFFSET MAJ:MIN INODE   PATH", hex except INODE; the path is the
 * rest of the line after the inode and its padding and may contain spaces. The kernel writes
 * mappings in address order; the parser sorts anyway so a lookup can binary search. Lines may
 * still overlap: the glue reads the file in several read()s while the target changes its
 * mappings, and a mapping that grew between two reads is printed again. reach[i], the greatest
 * end among entries 0..i, lets a lookup walk back from the last entry starting at or below the
 * address and stop as soon as no earlier entry can contain it (at once when none overlap).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/procmaps.h"

struct procmaps {
	struct procmaps_entry *v;
	size_t n;
	size_t bad;
	char *paths;	 /* one arena, paths NUL-separated */
	uint64_t *reach; /* reach[i]: the greatest end among v[0..i] */
};

void procmaps_free(struct procmaps *pm)
{
	if (!pm)
		return;
	free(pm->v);
	free(pm->paths);
	free(pm->reach);
	free(pm);
}

static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	for (; *p < end; (*p)++, digits++) {
		char c = **p;
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;

		if (d < 0)
			break;
		if (digits >= 16)
			return -EINVAL;
		v = v << 4 | d;
	}
	if (!digits)
		return -EINVAL;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

/* Parse one line [p, end) into e; the path is returned as [*path, end). */
static int parse_line(const char *p, const char *end, struct procmaps_entry *e, const char **path)
{
	uint64_t maj, min, inode = 0;
	int digits = 0;

	if (parse_hex(&p, end, &e->start) || expect(&p, end, '-') || parse_hex(&p, end, &e->end) ||
	    expect(&p, end, ' ') || end - p < 5)
		return -EINVAL;
	memcpy(e->perms, p, 4);
	e->perms[4] = '\0';
	p += 4;
	if (expect(&p, end, ' ') || parse_hex(&p, end, &e->offset) || expect(&p, end, ' ') ||
	    parse_hex(&p, end, &maj) || expect(&p, end, ':') || parse_hex(&p, end, &min) ||
	    expect(&p, end, ' '))
		return -EINVAL;
	for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		if (inode > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -EINVAL; /* does not fit: not a kernel-written line */
		inode = inode * 10 + (*p - '0');
	}
	if (!digits || e->start >= e->end || maj > UINT32_MAX || min > UINT32_MAX)
		return -EINVAL;
	while (p < end && *p == ' ')
		p++;
	e->dev_major = maj;
	e->dev_minor = min;
	e->inode = inode;
	*path = p;
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct procmaps_entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int procmaps_parse(const char *buf, size_t len, size_t max_entries, struct procmaps **ret)
{
	struct procmaps *pm = calloc(1, sizeof(*pm));
	const char *p = buf, *end = buf + len;
	size_t cap = 0, lines = 0, off = 0;

	if (!pm)
		return -ENOMEM;
	for (const char *q = buf; q < end; q++)
		lines += *q == '\n';
	lines++;
	if (lines > max_entries)
		lines = max_entries;
	cap = lines;
	pm->v = calloc(cap ? cap : 1, sizeof(*pm->v));
	pm->paths = malloc(len + 1);
	pm->reach = malloc((cap ? cap : 1) * sizeof(*pm->reach));
	if (!pm->v || !pm->paths || !pm->reach) {
		procmaps_free(pm);
		return -ENOMEM;
	}
	while (p < end && pm->n < cap) {
		const char *nl = memchr(p, '\n', end - p), *path;
		const char *le = nl ? nl : end;
		struct procmaps_entry e = {0};

		if (le > p && memchr(p, '\0', le - p) == NULL &&
		    parse_line(p, le, &e, &path) == 0) {
			memcpy(pm->paths + off, path, le - path);
			pm->paths[off + (le - path)] = '\0';
			e.path = (const char *)(uintptr_t)off; /* fixed up below, arena is final */
			off += le - path + 1;
			pm->v[pm->n++] = e;
		} else if (le > p) {
			pm->bad++;
		}
		p = nl ? nl + 1 : end;
	}
	for (size_t i = 0; i < pm->n; i++)
		pm->v[i].path = pm->paths + (uintptr_t)pm->v[i].path;
	qsort(pm->v, pm->n, sizeof(*pm->v), cmp_start);
	for (size_t i = 0; i < pm->n; i++)
		pm->reach[i] =
		    i && pm->reach[i - 1] > pm->v[i].end ? pm->reach[i - 1] : pm->v[i].end;
	*ret = pm;
	return 0;
}

const struct procmaps_entry *procmaps_find(const struct procmaps *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->n;

	while (lo < hi) { /* lo: the first entry starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Of the entries starting at or below addr, the last one that contains it. */
	while (lo-- > 0 && pm->reach[lo] > addr)
		if (pm->v[lo].end > addr)
			return &pm->v[lo];
	return NULL;
}

int procmaps_same(const struct procmaps *a, const struct procmaps *b)
{
	if (!a || !b)
		return a == b;
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct procmaps_entry *x = &a->v[i], *y = &b->v[i];

		if (x->start != y->start || x->end != y->end || x->offset != y->offset ||
		    x->inode != y->inode || x->dev_major != y->dev_major ||
		    x->dev_minor != y->dev_minor || memcmp(x->perms, y->perms, sizeof(x->perms)) ||
		    strcmp(x->path, y->path))
			return 0;
	}
	return 1;
}

size_t procmaps_count(const struct procmaps *pm)
{
	return pm->n;
}

const struct procmaps_entry *procmaps_at(const struct procmaps *pm, size_t i)
{
	return i < pm->n ? &pm->v[i] : NULL;
}

size_t procmaps_bad_lines(const struct procmaps *pm)
{
	return pm->bad;
}

static bool has_prefix(const char *s, const char *pre)
{
	return !strncmp(s, pre, strlen(pre));
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcmp(s + n - k, suf);
}

int procmaps_is_anon(const struct procmaps_entry *e)
{
	const char *p = e->path;

	return !p[0] || !strcmp(p, "[anon_shmem]") || has_prefix(p, "[anon:") ||
	       !strcmp(p, "[heap]") || has_prefix(p, "/memfd:") ||
	       !strcmp(p, "/dev/zero (deleted)") ||
	       (has_prefix(p, "/SYSV") && has_suffix(p, " (deleted)"));
}

int procmaps_file_path(char *buf, size_t len, int pid, uint64_t start, uint64_t end)
{
	return snprintf(buf, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
}
