// SPDX-License-Identifier: GPL-2.0-only
/* annotate.c: where inside a function its samples fall (kprofctl annotate, ARCHITECTURE.md
 * §2.6).
 *
 * While a target is sampled, each sample's user leaf address is counted per (function id,
 * address) in the target's annot store. The first time an address of a function is seen, the
 * function's extent comes from its symbol (perf map, jitdump or ELF sizes) and, unless the store
 * holds a copy of exactly that extent already, its code is copied out of the process
 * (procfs_read_mem, at most ANNOTATE_MAX_FUNC bytes; a larger or unnamed function gets the page
 * around the address unless some copy covers it): the code as it was when it ran, before a JIT
 * frees, moves or rewrites it. A function that reuses the addresses of freed code gets its own
 * copy, preferred when its code is assembled.
 *
 * Who may read the copy: the target's owner (its uid, or root). So no byte is copied from a
 * process image that owner could not read at that moment (RELIABILITY.md, second round, 1-2):
 * a sample asks for a copy, which waits in the target's queue until the end of the drain; an
 * exec record of the target in the meantime drops the queue (the samples were of code that is
 * gone: an exec generation per queue), and each copy is made only between two checks of the
 * kernel's ptrace rule for that owner (procfs_read_mem_for), both passing. process_vm_readv
 * waits for an exec in progress (exec_update_lock), so an exec between the checks fails the
 * second one.
 *
 * A query finds the function in the profile (by name, or the one address it holds), gathers the
 * counts of every id that profile_canon maps to it (addresses kept before a perf map named them
 * are aliases of the named function), assembles its bytes from the store, compares them with the
 * process's code now when it is still running (a change is counted and reported; bytes never kept
 * are read now, and said so), and hands both to annview_build. The sums equal the function's self
 * samples in the profile, short of what the store dropped (counted).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/codeshare.h"
#include "target/annotate.h"
#include "os/procfs.h"

#define PAGE 4096u
#define QUEUE_MAX 4096 /* copies asked for per target per drain; more are not made */

struct annotate_job {
	uint32_t id;
	bool page;     /* the page around addr (unless covered by then), else a whole function */
	bool file;     /* a file's code: fs says where in the file (tsym_file_code) */
	uint64_t addr; /* page: the sampled address */
	uint64_t start;
	size_t len;
	struct tsym_file_span fs;
};

struct annotate_queue {
	size_t n, cap;
	struct annotate_job *jobs; /* past QUEUE_MAX, copies are not made (read at the query) */
};

int annotate_queue_new(struct annotate_queue **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

void annotate_queue_free(struct annotate_queue *q)
{
	if (q)
		free(q->jobs);
	free(q);
}

static void enqueue(struct annotate_queue *q, const struct annotate_job *j)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 16;
		struct annotate_job *jobs =
		    cap <= QUEUE_MAX ? realloc(q->jobs, cap * sizeof(*jobs)) : NULL;

		if (!jobs)
			return;
		q->jobs = jobs;
		q->cap = cap;
	}
	q->jobs[q->n++] = *j;
}

void annotate_sample(struct annot *a, struct annotate_queue *q, struct tsym *sym, uint32_t id,
		     uint64_t addr, bool below)
{
	uint64_t lo = 0, hi = 0, start;
	size_t len;

	if (!a || annot_add(a, id, addr, below) != 1 || !sym || !q)
		return;
	if (!annot_range(a, id, &lo, &hi)) {
		struct sym_result r;

		tsym_resolve(sym, addr, false, &r);
		if (r.hi > r.lo && addr >= r.lo && addr < r.hi &&
		    annot_set_range(a, id, r.lo, r.hi) == 0) {
			lo = r.lo;
			hi = r.hi;
		}
	}
	if (hi > lo && hi - lo <= ANNOTATE_MAX_FUNC) {
		/* Its own copy, unless one of exactly its extent is kept: bytes read for other
		 * code that was there before (a JIT reuses addresses) or for its unnamed
		 * addresses (a page) are not the function's. */
		if (!annot_has_chunk(a, lo, hi - lo)) {
			struct annotate_job j = {.id = id, .start = lo, .len = hi - lo};

			j.file = tsym_file_code(sym, j.start, j.len, &j.fs);
			enqueue(q, &j);
		}
		return;
	}
	if (annot_covered(a, addr))
		return;
	start = addr & ~(uint64_t)(PAGE - 1);
	len = PAGE;
	if (hi > lo) { /* a large function: the page around the address, within it */
		uint64_t end = start + len < hi ? start + len : hi;

		start = start > lo ? start : lo;
		len = end - start;
	}
	{
		struct annotate_job j = {
		    .id = id, .page = true, .addr = addr, .start = start, .len = len};

		j.file = tsym_file_code(sym, j.start, j.len, &j.fs);
		enqueue(q, &j);
	}
}

void annotate_exec(struct annotate_queue *q)
{
	if (q)
		q->n = 0;
}

/* A reference to the shared copy of j's file code, given to the store (true), or given back. */
static bool put_shared(struct annot *a, struct codeshare *cs, const struct annotate_job *j,
		       const uint8_t *bytes)
{
	if (!bytes)
		return false;
	if (annot_put_shared(a, j->id, j->start, bytes, j->len) == 0)
		return true;
	codeshare_unref(cs, bytes); /* a full store: counted there */
	return true;
}

void annotate_flush(struct annot *a, struct annotate_queue *q, pid_t pid, uid_t uid,
		    struct codeshare *cs)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t i;

	if (!a || !q || !q->n)
		return;
	buf = malloc(ANNOTATE_MAX_FUNC);
	for (i = 0; buf && i < q->n; i++) {
		const struct annotate_job *j = &q->jobs[i];
		struct codeshare_key k = {
		    .uid = uid, .dev = j->fs.dev, .ino = j->fs.ino, .off = j->fs.off};
		bool share = cs && j->file && j->len <= UINT32_MAX;
		ssize_t n;

		/* Asked for by several samples of the drain: the first copy serves them all. */
		if (j->page ? annot_covered(a, j->addr) : annot_has_chunk(a, j->start, j->len))
			continue;
		k.len = (uint32_t)j->len;
		/* A file's code another target of this owner read: the same bytes. */
		if (share && put_shared(a, cs, j, codeshare_get(cs, &k)))
			continue;
		n = procfs_read_mem_for(pid, uid, j->start, buf, j->len);
		if (n == -EPERM)
			break; /* no longer the owner's to read: none of it is */
		if (n <= 0)
			continue;
		if (share && (size_t)n == j->len &&
		    put_shared(a, cs, j, codeshare_put(cs, &k, buf)))
			continue;
		annot_put_code(a, j->id, j->start, buf, n); /* a full store counts */
	}
	q->n = 0;
}

/* ---- the query ---- */

struct find {
	const struct profile *p;
	uint32_t id;
	uint64_t addr;
	bool found;
};

static bool is_func(const struct profile *p, uint32_t id)
{
	return profile_canon(p, id) == id;
}

static bool match_canon(uint32_t id, void *userdata)
{
	const struct find *f = userdata;

	return profile_canon(f->p, id) == f->id;
}

static int range_has(uint32_t id, uint64_t lo, uint64_t hi, void *userdata)
{
	struct find *f = userdata;

	if (f->addr < lo || f->addr >= hi)
		return 0;
	f->id = profile_canon(f->p, id);
	return 1;
}

/* The function an address names: the extent kept for it, what the symbols say now, or a
 * function interned at that very address. */
static int find_addr(const struct annotate_src *src, uint64_t addr, uint32_t *ret)
{
	struct find f = {.p = src->p, .addr = addr};
	size_t n = profile_nfuncs(src->p);

	if (annot_foreach_range(src->a, range_has, &f)) {
		*ret = f.id;
		return 0;
	}
	if (src->sym) {
		struct sym_result r;

		tsym_resolve(src->sym, addr, false, &r);
		for (size_t i = 0; i < n; i++) {
			const struct profile_func *pf = profile_func_get(src->p, i);

			if (is_func(src->p, i) && pf->start == r.start &&
			    !strcmp(pf->name, r.name) && !strcmp(pf->module, r.module)) {
				*ret = i;
				return 0;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		if (is_func(src->p, i) && profile_func_get(src->p, i)->start == addr) {
			*ret = i;
			return 0;
		}
	return -ENOENT;
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Whether name holds word as a whole identifier ("hot" in "JS:*hot /app.js:3", not in
 * "JS:*hotter"). */
static bool has_word(const char *name, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(name, word); p; p = strstr(p + 1, word))
		if ((p == name || !ident_char(p[-1]) || !ident_char(word[0])) &&
		    (!ident_char(p[n]) || !ident_char(word[n - 1])))
			return true;
	return false;
}

enum { MATCH_NONE, MATCH_PART, MATCH_WORD, MATCH_EXACT };

/* By name: the exact name, else the name as a whole word of function names ("hotFunction" in
 * V8's "JS:*hotFunction /app.js:3:20"), the hottest when several match at the best level;
 * else the one function whose name contains it. */
static int find_name(const struct annotate_src *src, const char *name, uint32_t *ret,
		     unsigned *others, char *err, size_t errlen)
{
	size_t n = profile_nfuncs(src->p), count[MATCH_EXACT + 1] = {0}, len = 0;
	uint32_t best[MATCH_EXACT + 1] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};

	for (size_t i = 0; i < n; i++) {
		const struct profile_func *pf = profile_func_get(src->p, i);
		int m;

		if (!is_func(src->p, i))
			continue;
		if (pf->kind == PROFILE_KIND_KERNEL) {
			if (!strcmp(pf->name, name))
				return -EXDEV;
			continue;
		}
		m = !strcmp(pf->name, name)    ? MATCH_EXACT
		    : has_word(pf->name, name) ? MATCH_WORD
		    : strstr(pf->name, name)   ? MATCH_PART
					       : MATCH_NONE;
		if (m == MATCH_NONE)
			continue;
		if (m == MATCH_PART && count[m] < 4 && len < errlen)
			len += snprintf(err + len, errlen - len, "%s'%s'", count[m] ? ", " : "",
					pf->name);
		count[m]++;
		if (best[m] == UINT32_MAX || pf->self > profile_func_get(src->p, best[m])->self)
			best[m] = i;
	}
	for (int m = MATCH_EXACT; m >= MATCH_WORD; m--)
		if (count[m]) {
			*ret = best[m];
			*others = count[m] - 1;
			return 0;
		}
	if (count[MATCH_PART] == 1) {
		*ret = best[MATCH_PART];
		*others = 0;
		return 0;
	}
	return count[MATCH_PART] ? -EEXIST : -ENOENT;
}

static int find_function(const struct annotate_src *src, const char *function, uint32_t *id,
			 unsigned *others, char *err, size_t errlen)
{
	char near[384] = "";
	char *end;
	int r;

	if (!function[0]) {
		snprintf(err, errlen, "no function given");
		return -EINVAL;
	}
	if (function[0] == '0' && (function[1] == 'x' || function[1] == 'X')) {
		uint64_t addr;

		errno = 0;
		addr = strtoull(function, &end, 16);
		if (errno || *end || end == function + 2) {
			snprintf(err, errlen, "'%s' is not an address", function);
			return -EINVAL;
		}
		*others = 0;
		if (find_addr(src, addr, id) == 0)
			return 0;
		snprintf(err, errlen, "no sampled function holds address 0x%" PRIx64, addr);
		return -ENOENT;
	}
	r = find_name(src, function, id, others, near, sizeof(near));
	if (r == -EXDEV) {
		snprintf(err, errlen,
			 "%s is a kernel function: annotate shows the process's own code",
			 function);
		return -EINVAL;
	}
	if (r == -EEXIST)
		snprintf(err, errlen,
			 "no sampled function is named '%s'; %s come close: give one "
			 "exactly",
			 function, near);
	else if (r < 0)
		snprintf(err, errlen,
			 "no sampled function is named '%s' (kprofctl report lists "
			 "the sampled functions)",
			 function);
	return r == -EEXIST ? -ENOENT : r;
}

/* The function's extent: kept at a sample, from the symbols now, else from its samples. */
static void extent(const struct annotate_src *src, struct find *f, const struct annot_addr *c,
		   size_t n, struct annotate_result *res)
{
	size_t nf = profile_nfuncs(src->p);

	for (size_t i = 0; i < nf; i++)
		if (match_canon(i, f) && annot_range(src->a, i, &res->lo, &res->hi)) {
			res->extent_known = true;
			return;
		}
	if (src->sym && n) {
		struct sym_result r;

		tsym_resolve(src->sym, c[0].addr, false, &r);
		if (r.hi > r.lo && c[0].addr >= r.lo && c[0].addr < r.hi) {
			res->lo = r.lo;
			res->hi = r.hi;
			res->extent_known = true;
			return;
		}
	}
	/* Sampled addresses are instruction starts: decoding from the lowest is sound. */
	res->lo = n ? c[0].addr : res->f->start;
	res->hi = (n ? c[n - 1].addr : res->lo) + 16;
}

/* The kept bytes against the process's code now; bytes never kept are taken from it. */
static void compare_now(const struct annotate_src *src, uint8_t *code, uint8_t *have, size_t len,
			struct annotate_result *res)
{
	_cleanup_free_ uint8_t *now = malloc(len);
	ssize_t n;

	if (!now || !src->alive)
		return;
	n = procfs_read_mem_for(src->pid, src->uid, res->lo, now, len);
	if (n <= 0)
		return;
	res->compared = true;
	for (size_t i = 0; i < (size_t)n; i++) {
		if (!have[i]) {
			code[i] = now[i];
			have[i] = 1;
			res->read_now++;
		} else if (code[i] != now[i]) {
			/* An int3 on either side is a probe's breakpoint (a path trace's uprobe),
			 * not a change of the code: the byte under it is the one without. */
			if (now[i] == 0xcc || code[i] == 0xcc) {
				if (code[i] == 0xcc)
					code[i] = now[i];
				res->breakpoints++;
				continue;
			}
			if (!res->changed)
				res->first_change = res->lo + i;
			res->changed++;
		}
	}
}

int annotate_query(const struct annotate_src *src, const char *function,
		   struct annotate_result *res, char *err, size_t errlen)
{
	_cleanup_free_ struct annot_addr *c = NULL;
	_cleanup_free_ uint8_t *code = NULL, *have = NULL;
	struct find f = {.p = src->p};
	size_t n, len;
	int r;

	memset(res, 0, sizeof(*res));
	r = find_function(src, function, &f.id, &res->others, err, errlen);
	if (r < 0)
		return r;
	res->id = f.id;
	res->f = profile_func_get(src->p, f.id);
	annot_get_stats(src->a, &res->st);
	r = annot_collect(src->a, match_canon, &f, &c, &n);
	if (r < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	extent(src, &f, c, n, res);
	len = res->hi - res->lo;
	if (len > ANNVIEW_MAX_BYTES) {
		len = ANNVIEW_MAX_BYTES;
		res->hi = res->lo + len;
	}
	code = malloc(len);
	have = malloc(len);
	if (!code || !have) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	res->captured = annot_code(src->a, res->lo, len, match_canon, &f, code, have);
	compare_now(src, code, have, len, res);
	r = annview_build(code, have, len, res->lo, res->lo, c, n, &res->view);
	if (r < 0)
		snprintf(err, errlen, "cannot disassemble %s: %s", res->f->name, strerror(-r));
	return r;
}

void annotate_result_release(struct annotate_result *res)
{
	annview_free(res->view);
	res->view = NULL;
}
