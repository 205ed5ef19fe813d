// SPDX-License-Identifier: GPL-2.0-only
/* lines_pb.c: source lines into a target's SavedProfile (issue 32; ARCHITECTURE.md §2.6a).
 *
 * For each leaf address and call site in a file mapping with a known ELF address (the saved
 * mapping table), the resolver (symbols/srclines.c) is asked by (build id or file identity, ELF
 * address); one in JIT code gets its line from the jitdump's debug records (tsym_jit_line). Its frames are copied into the message's own arena (the cache's strings are only
 * lent). The counts, and the notes of the files touched (a debug file refused for its build
 * id, a helper killed; only of files that had addresses resolved for this profile), go to
 * SavedProfile.lines, which exports show in their comments. An address still being resolved
 * when the message is built counts as not available: the caller waits for the helpers and
 * builds it again once (the answers then come from the cache, and those made since the first
 * build are not counted as the cache's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/cleanup.h"
#include "kprof/pprof.h"
#include "kprof/saved.h"
#include "wire/lines_pb.h"
#include "wire/target_pb.h"

#define TOUCHED_MAX 64 /* files whose notes a profile quotes */

static void *alloc(struct lines_store *lm, size_t len)
{
	char *p = arena_alloc(&lm->a, len + 7);

	return p ? (void *)(((uintptr_t)p + 7) & ~(uintptr_t)7) : NULL;
}

static char *copy(struct lines_store *lm, const char *s)
{
	size_t n = strnlen(s, SAVED_MAX_LINE_NAME);
	char *p = arena_alloc(&lm->a, n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

/* The frames fr[0..n) as an address's lines (*lines, *n_lines). */
static int put_lines(struct lines_store *lm, Kprof__SavedLine ***lines, size_t *n_lines,
		     const struct srcline_frame *fr, size_t n)
{
	Kprof__SavedLine **lp = alloc(lm, n * sizeof(*lp)), *lv = alloc(lm, n * sizeof(*lv));

	if (!lp || !lv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		kprof__saved_line__init(&lv[i]);
		lv[i].function = copy(lm, fr[i].func);
		lv[i].file = copy(lm, fr[i].file);
		lv[i].line = fr[i].line;
		if (!lv[i].function || !lv[i].file)
			return -ENOMEM;
		lp[i] = &lv[i];
	}
	*lines = lp;
	*n_lines = n;
	return 0;
}

/* One message being filled. */
struct fill {
	struct lines_store *lm;
	struct srclines *sl;
	const struct target *t;
	const Kprof__SavedProfile *sp; /* its mapping table */
	const uint32_t *order;	       /* the mappings by start */
	bool queue;
	uint64_t since;
	int pending;
	char touched[TOUCHED_MAX][LCACHE_MAX_KEY + 1]; /* files whose notes it quotes */
	size_t ntouched;
};

static void touch(struct fill *f, const char *key)
{
	for (size_t i = 0; i < f->ntouched; i++)
		if (!strcmp(f->touched[i], key))
			return;
	if (key[0] && f->ntouched < TOUCHED_MAX)
		strcpy(f->touched[f->ntouched++], key);
}

/* The helpers and notes of the files touched, into info. */
static int sum_files(struct fill *f)
{
	struct lines_store *lm = f->lm;

	for (size_t i = 0; i < f->ntouched; i++) {
		uint64_t started, killed;
		const char *note;

		if (!srclines_file_info(f->sl, f->touched[i], &started, &killed, &note))
			continue;
		lm->info.helpers_started += started;
		lm->info.helpers_killed += killed;
		if (!note[0] || lm->info.n_notes == SAVED_MAX_LINES_NOTES)
			continue;
		lm->notes[lm->info.n_notes] = copy(lm, note);
		if (!lm->notes[lm->info.n_notes])
			return -ENOMEM;
		lm->info.n_notes++;
	}
	lm->info.notes = lm->notes;
	return 0;
}

static const Kprof__SavedProfile *map_sp; /* qsort has no context argument */

static int by_start(const void *a, const void *b)
{
	uint64_t x = map_sp->mappings[*(const uint32_t *)a]->start,
		 y = map_sp->mappings[*(const uint32_t *)b]->start;

	return x < y ? -1 : x > y;
}

/* The table mapping holding addr (order: the mappings by start), or NULL. */
static const Kprof__SavedMapping *mapping_of(const Kprof__SavedProfile *sp, const uint32_t *order,
					     uint64_t addr)
{
	size_t lo = 0, hi = sp->n_mappings;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp->mappings[order[mid]]->start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < sp->mappings[order[lo - 1]]->limit ? sp->mappings[order[lo - 1]] : NULL;
}

/* Whether the frames name a line (libbfd names a function without one from the symbols). */
static bool has_line(const struct srcline_frame *fr, int n)
{
	for (int i = 0; i < n; i++)
		if (fr[i].line)
			return true;
	return false;
}

/* Whether a JIT's file name is one V8 writes for a script (a path, node:internal/..., a URL):
 * V8 (node 20) writes a few junk bytes instead at times ("oHa;"), which perf shows too. */
static bool v8_file(const char *file)
{
	return file[0] == '/' || strchr(file, ':');
}

/* JIT code's line from its jitdump's debug info: the target's symbols while they are held, the
 * cache once they are dropped (target.c keeps them there then). One frame: the jitdump says
 * nothing of inlining. The file of a V8 function ("JS:*f /app/x.js:12:3") whose entry's file
 * V8 garbled, or left out, is the one its name says. */
static int jit_line(struct fill *f, const char *name, uint64_t addr, Kprof__SavedLine ***lines,
		    size_t *n_lines)
{
	struct srcline_frame fr = {.func = ""};
	char key[LCACHE_MAX_KEY + 1], buf[SAVED_MAX_LINE_NAME + 1];
	size_t off, len;
	uint32_t l;

	srclines_jit_key(f->t->pid, f->t->attached_ns, key);
	if (f->t->sym ? !tsym_jit_line(f->t->sym, addr, &fr.file, &fr.line)
		      : srclines_cached(f->sl, key, addr, &fr, 1) != 1)
		return 0;
	if (pprof_js_source(name, &off, &len, &l) && !v8_file(fr.file) &&
	    len <= SAVED_MAX_LINE_NAME) {
		snprintf(buf, sizeof(buf), "%.*s", (int)len, name + off);
		fr.file = buf;
	}
	if (!fr.file[0])
		return 0;
	f->lm->info.asked++;
	f->lm->info.resolved++;
	return put_lines(f->lm, lines, n_lines, &fr, 1);
}

/* The lines of runtime address addr of the function named name (a leaf address, or a call site
 * in its caller) into *lines, *n_lines. */
static int resolve(struct fill *f, const char *name, uint64_t addr, Kprof__SavedLine ***lines,
		   size_t *n_lines)
{
	const Kprof__SavedMapping *mp = mapping_of(f->sp, f->order, addr);
	struct srcline_frame fr[SRCLINE_MAX_FRAMES];
	struct lines_store *lm = f->lm;
	struct srclines_res res;
	struct srcfile_map sm;
	int n;

	if (!mp || !mp->has_vaddr)
		return jit_line(f, name ? name : "", addr, lines, n_lines);
	sm = (struct srcfile_map){.pid = f->t->pid,
				  .start = mp->start,
				  .limit = mp->limit,
				  .path = mp->path ? mp->path : "",
				  .build_id = mp->build_id ? mp->build_id : ""};
	n = srclines_get(f->sl, f->t->sym, &sm, addr, mp->vaddr + (addr - mp->start), f->queue, fr,
			 SRCLINE_MAX_FRAMES, &res);
	lm->info.asked++;
	res.cached &= res.seq <= f->since; /* resolved for this profile: not the cache's */
	if (!res.cached)
		touch(f, res.key);
	f->pending += n == -EINPROGRESS;
	if (n < 0) {
		lm->info.failed++;
		return 0;
	}
	lm->info.cached += res.cached;
	if (has_line(fr, n))
		lm->info.resolved++;
	else
		lm->info.none++;
	return n ? put_lines(lm, lines, n_lines, fr, n) : 0;
}

/* The fill of a message with mapping table sp (sorted into order, n + 1 entries). */
static void fill_start(struct fill *f, const Kprof__SavedProfile *sp, uint32_t *order)
{
	arena_release(&f->lm->a);
	memset(f->lm, 0, sizeof(*f->lm));
	kprof__saved_lines_info__init(&f->lm->info);
	for (size_t i = 0; i < sp->n_mappings; i++)
		order[i] = i;
	map_sp = sp;
	qsort(order, sp->n_mappings, sizeof(*order), by_start);
	f->sp = sp;
	f->order = order;
}

int lines_pb_fill(struct saved_msg *m, const struct target *t, struct srclines *sl, bool queue,
		  uint64_t since)
{
	Kprof__SavedProfile *sp = &m->msg;
	_cleanup_free_ uint32_t *order = calloc(sp->n_mappings + 1, sizeof(*order));
	_cleanup_free_ struct fill *f = calloc(1, sizeof(*f));

	if (!order || !f)
		return -ENOMEM;
	*f = (struct fill){.lm = &m->lines, .sl = sl, .t = t, .queue = queue, .since = since};
	fill_start(f, sp, order);
	sp->lines = &m->lines.info;
	for (size_t i = 0; i < sp->n_leaf_addrs; i++) {
		Kprof__SavedLeafAddr *la = sp->leaf_addrs[i];

		if (resolve(f, sp->functions[la->func]->name, la->address, &la->lines, &la->n_lines) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < sp->n_call_sites; i++) {
		Kprof__SavedCallSite *cs = sp->call_sites[i];

		if (resolve(f, sp->functions[cs->caller]->name, cs->address, &cs->lines,
			    &cs->n_lines) < 0)
			return -ENOMEM;
	}
	return sum_files(f) < 0 ? -ENOMEM : f->pending;
}

int lines_pb_annotate(Kprof__AnnotateReply *r, const struct target *t, struct srclines *sl,
		      bool queue, uint64_t since, struct saved_msg *m)
{
	_cleanup_free_ uint32_t *order = calloc(m->msg.n_mappings + 1, sizeof(*order));
	_cleanup_free_ struct fill *f = calloc(1, sizeof(*f));

	if (!order || !f)
		return -ENOMEM;
	*f = (struct fill){.lm = &m->lines, .sl = sl, .t = t, .queue = queue, .since = since};
	fill_start(f, &m->msg, order);
	for (size_t i = 0; i < r->n_insns; i++)
		if (resolve(f, r->function, r->insns[i]->address, &r->insns[i]->lines,
			    &r->insns[i]->n_lines) < 0)
			return -ENOMEM;
	if (sum_files(f) < 0)
		return -ENOMEM;
	r->lines = &m->lines.info;
	return f->pending;
}
