// SPDX-License-Identifier: GPL-2.0-only
/* profile_view.c: what one reader may see of a profile (include/kprof/profile_view.h): a
 * function, the flat profile and a stack through a view (kernel addresses hidden, or the kernel
 * as one frame), and the folded text, "root;...;leaf count" per stack, within a byte cap. Apart
 * from profile.c because it is built on request and never on the per-sample path: it reads the
 * tables (profile_internal.h) and changes nothing.
 *
 * Folded text.  * The lines are the profile's stacks as they are when no thread ids and no view
 * change them; otherwise the stacks are first merged by their viewed id sequence (threads merged,
 * kernel runs collapsed). Every line's length is known before a byte is written (names' lengths are
 * taken once per function), so the text is allocated once, at most the cap. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "kprof/hash.h"
#include "kprof/profile.h"
#include "profile_internal.h"

/* ---- views ---- */

struct profile_func profile_func_view(const struct profile_func *f, unsigned view)
{
	struct profile_func v = *f;

	if (!view || !profile_func_is_kernel(f))
		return v;
	v.start = 0;
	if (view & PROFILE_VIEW_NO_KERNEL) {
		v.name = PROFILE_KERNEL_NAME;
		v.module = PROFILE_KERNEL_MODULE;
		v.kind = PROFILE_KIND_KERNEL;
	}
	return v;
}

static int cmp_row(const void *a, const void *b)
{
	const struct profile_func *x = &((const struct profile_row *)a)->f;
	const struct profile_func *y = &((const struct profile_row *)b)->f;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

int profile_flat_view(const struct profile *p, unsigned view, struct profile_row **ret,
		      size_t *ret_n)
{
	struct profile_row *rows = malloc((p->nfuncs + 1) * sizeof(*rows));
	uint64_t kself = 0;
	bool kernel = false;
	size_t n = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct profile_func *f = &p->funcs[i].f;

		if (is_alias(p, i))
			continue;
		if ((view & PROFILE_VIEW_NO_KERNEL) && profile_func_is_kernel(f)) {
			kself += f->self;
			kernel = true;
			continue;
		}
		rows[n++] = (struct profile_row){.id = i, .f = profile_func_view(f, view)};
	}
	if (kernel)
		rows[n++] = (struct profile_row){.id = PROFILE_ID_KERNEL,
						 .f = {.name = PROFILE_KERNEL_NAME,
						       .module = PROFILE_KERNEL_MODULE,
						       .kind = PROFILE_KIND_KERNEL,
						       .self = kself,
						       .total = p->kernel_samples}};
	qsort(rows, n, sizeof(*rows), cmp_row);
	*ret = rows;
	*ret_n = n;
	return 0;
}

size_t profile_stack_view(const struct profile *p, unsigned view, const uint32_t *ids, size_t n,
			  uint32_t kid, uint32_t *out)
{
	bool in_kernel = false;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		bool kernel = (view & PROFILE_VIEW_NO_KERNEL) && ids[i] < p->nfuncs &&
			      profile_func_is_kernel(&p->funcs[ids[i]].f);

		if (!kernel)
			out[k++] = ids[i];
		else if (!in_kernel)
			out[k++] = kid;
		in_kernel = kernel;
	}
	return k;
}

struct fline {
	uint64_t hash, count;
	uint32_t off, len;
};

struct fset {
	const uint32_t *ids; /* the profile's id arena, or arena */
	uint32_t *arena;
	struct fline *lines;
	size_t n;
	size_t *name_len; /* per function: bytes of its folded name, brackets included */
	bool *clean;	  /* per function: its name needs no replacements (copied whole) */
	uint32_t *rep;	  /* per function: the first one of its folded name, or NULL */
};

static void fset_release(struct fset *fs)
{
	free(fs->arena);
	free(fs->lines);
	free(fs->name_len);
	free(fs->clean);
	free(fs->rep);
}

static int fset_merge(const struct profile *p, unsigned view, struct fset *fs)
{
	_cleanup_(idxtab_release) struct idxtab tab = {0};
	size_t nids = 0, maxlen = 1;

	/* A view never grows a stack, and its lines come from distinct id sequences (threads
	 * share theirs); one stack more is written before it is found equal to a line. */
	for (size_t i = 0; i < p->nstacks; i++)
		maxlen = p->stacks[i].len > maxlen ? p->stacks[i].len : maxlen;
	fs->arena = malloc((p->nids + maxlen) * sizeof(*fs->arena));
	if (idxtab_reserve(&tab, p->nstacks, 16, NULL, NULL) < 0 || !fs->arena)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct pstack *st = &p->stacks[i];
		uint32_t *v = fs->arena + nids;
		size_t len =
		    profile_stack_view(p, view, p->ids + st->off, st->len, PROFILE_ID_KERNEL, v);
		uint64_t h;
		size_t j;

		for (size_t k = 0; fs->rep && k < len; k++)
			if (v[k] != PROFILE_ID_KERNEL)
				v[k] = fs->rep[v[k]];
		h = hash_ids(v, len);

		idxtab_probe(&tab, h, j) {
			const struct fline *l = &fs->lines[tab.slot[j] - 1];

			if (l->hash == h && l->len == len &&
			    (len == 0 || !memcmp(fs->arena + l->off, v, len * sizeof(*v))))
				break;
		}
		if (tab.slot[j]) {
			fs->lines[tab.slot[j] - 1].count += st->count;
			continue;
		}
		fs->lines[fs->n] =
		    (struct fline){.hash = h, .count = st->count, .off = nids, .len = len};
		tab.slot[j] = ++fs->n;
		nids += len;
	}
	fs->ids = fs->arena;
	return 0;
}

static bool func_by_addr(const struct profile_func *f)
{
	return f->kind == PROFILE_KIND_UNKNOWN && f->start && f->name[0] == '0' &&
	       f->name[1] == 'x';
}

/* An unresolved frame is shown as its module, "[libc.so.6]", as flame graph tools expect
 * (stackcollapse-perf does the same with perf's [unknown] rows): one kept by its address too,
 * so that unnamed code of one mapping is one frame of the graph. */
static const char *folded_name(const struct profile_func *f, bool *bracket)
{
	/* Which string is said, not compared by address: a name and its module may be one
	 * shared string (a function "foo" of a program "foo"). */
	bool by_module =
	    func_by_addr(f) || (f->kind == PROFILE_KIND_UNKNOWN && !strcmp(f->name, "[unknown]"));
	const char *name = by_module ? f->module : f->name;

	*bracket = by_module && name[0] != '[';
	return name;
}

/* Frames kept by address fold into one frame per mapping: every such function is mapped to
 * the first one of its module, and the lines are merged by those ids. */
static int fset_reps(const struct profile *p, struct fset *fs)
{
	_cleanup_(idxtab_release) struct idxtab tab = {0};

	fs->rep = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*fs->rep));
	if (idxtab_reserve(&tab, p->nfuncs, 16, NULL, NULL) < 0 || !fs->rep)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct profile_func *f = &p->funcs[i].f;
		size_t j;

		fs->rep[i] = i;
		if (!func_by_addr(f))
			continue;
		idxtab_probe(&tab, mix64(hash_str(0xcbf29ce484222325ULL, f->module)), j)
			if (!strcmp(p->funcs[tab.slot[j] - 1].f.module, f->module))
				break;
		if (tab.slot[j])
			fs->rep[i] = tab.slot[j] - 1;
		else
			tab.slot[j] = i + 1;
	}
	return 0;
}

static int fset_build(const struct profile *p, unsigned view, struct fset *fs)
{
	bool bracket;

	fs->lines = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*fs->lines));
	fs->name_len = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*fs->name_len));
	fs->clean = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*fs->clean));
	if (!fs->lines || !fs->name_len || !fs->clean)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfuncs; i++) {
		const char *name = folded_name(&p->funcs[i].f, &bracket);
		size_t n = strlen(name);

		fs->name_len[i] = n + 2 * bracket;
		fs->clean[i] = true;
		for (size_t j = 0; j < n && fs->clean[i]; j++)
			fs->clean[i] =
			    name[j] != ';' && (unsigned char)name[j] >= 0x20 && name[j] != 0x7f;
	}
	if (p->by_addr) {
		int err = fset_reps(p, fs);

		if (err < 0)
			return err;
		return fset_merge(p, view, fs);
	}
	if (p->has_tids || (view & PROFILE_VIEW_NO_KERNEL))
		return fset_merge(p, view, fs);
	for (size_t i = 0; i < p->nstacks; i++)
		fs->lines[i] = (struct fline){
		    .count = p->stacks[i].count, .off = p->stacks[i].off, .len = p->stacks[i].len};
	fs->n = p->nstacks;
	fs->ids = p->ids;
	return 0;
}

static size_t count_digits(uint64_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* Bytes of a line: frames, separators, " COUNT\n". */
static size_t fline_bytes(const struct fset *fs, const struct fline *l)
{
	size_t n = l->len + 1 + count_digits(l->count); /* ';'s, ' ' and '\n' */

	for (size_t i = 0; i < l->len; i++) {
		uint32_t id = fs->ids[l->off + i];

		n += id == PROFILE_ID_KERNEL ? strlen(PROFILE_KERNEL_NAME) : fs->name_len[id];
	}
	return n;
}

/* Append a name with ';' (the frame separator) and control characters replaced. */
static char *put_name(char *o, const char *name)
{
	for (; *name; name++) {
		unsigned char c = *name;

		*o++ = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? '?' : c;
	}
	return o;
}

static char *fline_put(const struct profile *p, const struct fset *fs, const struct fline *l,
		       char *o)
{
	for (size_t i = 0; i < l->len; i++) {
		uint32_t id = fs->ids[l->off + i];
		bool bracket = false;
		const char *name = id == PROFILE_ID_KERNEL ? PROFILE_KERNEL_NAME
							   : folded_name(&p->funcs[id].f, &bracket);

		if (i)
			*o++ = ';';
		if (bracket)
			*o++ = '[';
		if (id != PROFILE_ID_KERNEL && fs->clean[id]) {
			size_t n = fs->name_len[id] - 2 * bracket;

			memcpy(o, name, n);
			o += n;
		} else {
			o = put_name(o, name);
		}
		if (bracket)
			*o++ = ']';
	}
	return o + sprintf(o, " %llu\n", (unsigned long long)l->count);
}

static int cmp_heavier(const void *a, const void *b, void *ctx)
{
	const struct fline *lines = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (lines[x].count != lines[y].count)
		return lines[x].count > lines[y].count ? -1 : 1;
	return x < y ? -1 : x > y;
}

int profile_folded_view(const struct profile *p, const struct profile_folded_opts *o, char **ret,
			size_t *ret_len, struct profile_folded_info *info)
{
	struct profile_folded_opts none = {0};
	struct profile_folded_info fi = {0};
	_cleanup_(fset_release) struct fset fs = {0};
	_cleanup_free_ uint32_t *order = NULL;
	size_t total = 0, len = 0, cap;
	char *text;
	int err;

	if (!o)
		o = &none;
	err = fset_build(p, o->view, &fs);
	if (err < 0)
		return err;
	for (size_t i = 0; i < fs.n; i++) {
		if (fs.lines[i].len) {
			total += fline_bytes(&fs, &fs.lines[i]);
			fi.stacks++;
		}
	}
	cap = o->max_bytes && total > o->max_bytes ? o->max_bytes : total;
	if (cap < total) { /* the heaviest stacks first, as many as fit */
		order = malloc((fs.n ? fs.n : 1) * sizeof(*order));
		if (!order)
			return -ENOMEM;
		for (size_t i = 0; i < fs.n; i++)
			order[i] = i;
		qsort_r(order, fs.n, sizeof(*order), cmp_heavier, fs.lines);
	}
	/* + 24: room for sprintf's NUL after the last count */
	text = malloc(cap + 24);
	if (!text)
		return -ENOMEM;
	for (size_t i = 0; i < fs.n; i++) {
		const struct fline *l = &fs.lines[order ? order[i] : i];
		size_t n;

		if (!l->len)
			continue;
		n = fline_bytes(&fs, l);
		if (len + n > cap) {
			fi.stacks_omitted++;
			fi.samples_omitted += l->count;
			continue;
		}
		len = fline_put(p, &fs, l, text + len) - text;
	}
	text[len] = '\0';
	*ret = text;
	*ret_len = len;
	if (info)
		*info = fi;
	return 0;
}

int profile_folded(const struct profile *p, char **ret, size_t *ret_len)
{
	return profile_folded_view(p, NULL, ret, ret_len, NULL);
}
