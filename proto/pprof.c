// SPDX-License-Identifier: GPL-2.0-only
/* pprof.c: SavedProfile -> gzip-compressed pprof Profile (see kprof/pprof.h). Wire-level and
 * pure (memory in, memory out): kprofctl export and kprofd's HTTP endpoint both link it.
 *
 * Mappings: the target's executable file mappings (the saved table: range, file offset, path as
 * /proc/PID/maps shows it, build id), the executable first, then one mapping without a range per
 * module the table lacks (the JIT's perf map or jitdump, the kernel, [vdso]; every module of a
 * profile saved before kprof kept the table). Each says honestly what its functions have: names
 * (has_functions: kprof named some, not "[libc.so.6]"), source files and lines (a JIT's: from
 * the jitdump's debug info, or V8's "NAME FILE:LINE:COLUMN" names).
 * One Location and one Function per kprof function: kprof aggregates by function, so a location
 * is at the function's start, as a runtime address (a native function's ELF address moved by
 * its mapping's load bias; a JIT or kernel function's own), or 0 where that is not known.
 * Per-address locations (issue 32): each sampled leaf instruction the profile kept
 * (sp->leaf_addrs, per function, from kprofd's annotate store) is a Location of its own, in the
 * table mapping that holds it, and takes its samples from the stacks whose leaf is its function:
 * the stacks in order are filled from the function's addresses in address order, so each
 * address's and each stack's totals are exact, but which stack (thread, callers) an address's
 * samples go to is not known to kprof (it counts addresses per function, not per stack) and is
 * this order's. Samples left over (addresses beyond the profile's budget) stay at the function's
 * start. Each such location gets one Line per source frame kprofd resolved for it (SavedLeafAddr
 * lines), inlined functions first (a Function per inlined name and file), the function itself
 * last. Caller frames (issue 32): a (caller, callee) pair of the profile's call sites seen from
 * one call site only is a Location at that site (the return address - 1) with its lines, and
 * every stack's caller frame of that pair is it; a pair seen from several sites keeps its
 * function's location.
 * Each distinct (thread, stack) (each piece of it, split by leaf address) becomes a Sample with
 * two values, [samples/count, cpu/nanoseconds] (count times the sampling period), or with an
 * off-CPU profile (pprof_build_offcpu: its stacks after the samples', never split: leaf addresses
 * are CPU samples') four, [samples/count, cpu/nanoseconds, off_cpu/nanoseconds,
 * wall/nanoseconds] (wall: cpu + off_cpu), leaf first, and labels thread_id,
 * thread_name (when kprof kept it) and kind (jit, native, kernel or unknown, of the leaf), and
 * for a merged profile its process's pid, comm, exe, unit, cgroup and runtime (its origin).
 * Strings are interned in a small open-addressing table.
 */
#include "kprof/cxxname.h"
#include "kprof/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "kprof/hash.h"
#include "kprof/idxtab.h"
#include "kprof/leafsplit.h"
#include "kprof/sites.h"
#include "kprof/saved.h"
#include "proto/profile.pb-c.h"

#define PPROF_LABELS 9	   /* at most, a sample: thread_id, thread_name, kind, 6 of its origin */
#define PPROF_OWN_LABELS 2 /* of them, its own: thread_id, thread_name (the rest are shared) */
#define PPROF_KINDS 8	   /* Kprof__FrameKind values a kind label is kept for */

/* The leaf's kind as a label (as kprofctl's text output names it). */
const char *pprof_kind_name(Kprof__FrameKind k)
{
	switch (k) {
	case KPROF__FRAME_KIND__FRAME_KIND_NATIVE:
		return "native";
	case KPROF__FRAME_KIND__FRAME_KIND_JIT:
		return "jit";
	case KPROF__FRAME_KIND__FRAME_KIND_KERNEL:
		return "kernel";
	default:
		return "unknown";
	}
}

struct strtab {
	char **v;
	size_t n, cap;
	struct idxtab tab;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static uint64_t strtab_hash(const void *ctx, uint32_t i)
{
	return hash_str(((const struct strtab *)ctx)->v[i]);
}

/* Index of s in the table (interned on first sight), or -ENOMEM. */
static int64_t strtab_id(struct strtab *t, const char *s)
{
	size_t j;

	if (idxtab_reserve(&t->tab, t->n + 1, 256, strtab_hash, t) < 0)
		return -ENOMEM;
	idxtab_probe(&t->tab, hash_str(s), j)
		if (!strcmp(t->v[t->tab.slot[j] - 1], s))
			return t->tab.slot[j] - 1;
	if (array_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 256) < 0)
		return -ENOMEM;
	t->v[t->n] = strdup(s);
	if (!t->v[t->n])
		return -ENOMEM;
	t->tab.slot[j] = t->n + 1;
	return t->n++;
}

static void strtab_release(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	idxtab_release(&t->tab);
}

const char *pprof_display_name(const Kprof__SavedFunction *f, char buf[256])
{
	if (f->kind == KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN && !strcmp(f->name, "[unknown]")) {
		if (f->module[0] == '[')
			return f->module;
		snprintf(buf, 256, "[%s]", f->module);
		return buf;
	}
	return f->name;
}

/* gzip at level 1, as Go's runtime/pprof writes its profiles: a whole-host scrape's deflate at
 * the default level 6 took about as long as building the profile (BENCHMARKS.md, issue 34). */
static int gzip(const uint8_t *in, size_t len, uint8_t **ret, size_t *ret_len)
{
	z_stream zs = {0};
	size_t cap = deflateBound(&zs, len) + 64;
	uint8_t *out;

	if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -EIO;
	cap = deflateBound(&zs, len) + 64;
	out = malloc(cap);
	if (!out) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (uint8_t *)in;
	zs.avail_in = len;
	zs.next_out = out;
	zs.avail_out = cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(out);
		return -EIO;
	}
	*ret_len = zs.total_out;
	deflateEnd(&zs);
	*ret = out;
	return 0;
}

/* A (caller, callee) pair of the call sites, and the location of its one call site (0: it was
 * seen at several, its caller frames keep their function's location). */
struct site {
	uint32_t caller, callee;
	uint64_t loc;
};

#define ORIGIN_LABELS 6 /* pid, comm, exe, unit, cgroup, runtime */

struct origin_ids {
	bool done;
	uint8_t n;
	Perftools__Profiles__Label lab[ORIGIN_LABELS];
};

struct pp {
	struct strtab st;
	struct strtab fkeys; /* "name\001file" of each function only an inlined frame names */
	size_t nfv, fv_cap;  /* functions: the profile's, then those */
	size_t nlines, lines_cap;
	uint32_t *loc_line; /* per location: its first Line in linev, and (loc_nline) how many */
	uint32_t *loc_nline;
	size_t nla;		   /* leaf address locations, after the nf function locations */
	struct site *sites;	   /* (caller, callee) pairs of the call sites, in order */
	size_t nsites, nsites_one; /* ... of them at one call site (a location each) */
	struct site *site_tab;	   /* ... those, by pair: open addressing, loc 0 = empty */
	size_t site_nslots;
	struct leafsplit ls; /* the stacks split over their leaf addresses (leafsplit.h) */
	size_t nsv, nlocs;   /* samples and location ids the split makes */
	size_t off_from;     /* the first off-CPU stack (never split: no leaf addresses) */
	size_t nloc;	     /* locations: nf + nla + call sites */
	Perftools__Profiles__Function *fv;
	Perftools__Profiles__Function **fp;
	Perftools__Profiles__Location *lv;
	Perftools__Profiles__Location **lp;
	Perftools__Profiles__Line *linev;
	Perftools__Profiles__Line **linep;
	Perftools__Profiles__Mapping *mv;
	Perftools__Profiles__Mapping **mp;
	size_t nmap;
	size_t ntab;	   /* of them, the saved table's (the first ntab) */
	size_t *tab_order; /* the table's mappings in pprof order: the executable first */
	int64_t *tab_base; /* string id of each pprof table mapping's file name (base name) */
	size_t *by_base;   /* 0..ntab-1 by (tab_base, index): a module's mappings, in order */
	Perftools__Profiles__Sample *sv;
	Perftools__Profiles__Sample **sp;
	uint64_t *locs;	 /* all samples' location ids, one arena */
	int64_t *values; /* 2 per sample */
	/* Labels: each sample's own (thread_id, thread_name) in labv, PPROF_OWN_LABELS a sample;
	 * those many samples share (kind, pid, origin) made once, and pointed to (labp: up to
	 * PPROF_LABELS a sample). A host's scrape has hundreds of thousands of samples. */
	Perftools__Profiles__Label *labv;
	Perftools__Profiles__Label **labp;
	Perftools__Profiles__Label kind_lab[PPROF_KINDS + 1]; /* the last: no frame, "unknown" */
	bool kind_done[PPROF_KINDS + 1];
	Perftools__Profiles__Label pid_lab; /* one process's profile: its pid */
	int pid_done;			    /* 0: not yet, 1: made, -1: none */
	struct origin_ids *oids;	    /* per origin of a merged profile: its labels, once */
};

static void pp_release(struct pp *pp)
{
	strtab_release(&pp->st);
	strtab_release(&pp->fkeys);
	free(pp->loc_line);
	free(pp->loc_nline);
	leafsplit_release(&pp->ls);
	free(pp->sites);
	free(pp->site_tab);
	free(pp->by_base);
	free(pp->oids);
	free(pp->fv);
	free(pp->fp);
	free(pp->lv);
	free(pp->lp);
	free(pp->linev);
	free(pp->linep);
	free(pp->mv);
	free(pp->mp);
	free(pp->tab_order);
	free(pp->tab_base);
	free(pp->sv);
	free(pp->sp);
	free(pp->locs);
	free(pp->values);
	free(pp->labv);
	free(pp->labp);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

bool pprof_js_source(const char *name, size_t *file_off, size_t *file_len, uint32_t *line)
{
	const char *tok = strrchr(name, ' '), *end, *colon;
	unsigned long n[2] = {0, 0};
	int nums = 0;

	if (!tok || !*++tok)
		return false;
	end = tok + strlen(tok);
	/* ":LINE" or ":LINE:COLUMN" at the end of the last word, a file name before them. */
	while (nums < 2) {
		char *stop;

		colon = end;
		while (colon > tok && colon[-1] != ':')
			colon--;
		if (colon == tok || colon == end || colon[0] < '0' || colon[0] > '9')
			break;
		n[nums] = strtoul(colon, &stop, 10);
		if (stop != end || n[nums] > UINT32_MAX)
			return false;
		nums++;
		end = colon - 1;
	}
	if (!nums || end == tok || !n[nums - 1])
		return false;
	*file_off = tok - name;
	*file_len = end - tok;
	*line = n[nums - 1];
	return true;
}

/* Where function f's source is: what its V8 name says ("JS:*f /path/app.js:11:21"), else the
 * daemon's (a jitdump's debug info). The name first: node 20's jitdump debug entries carry junk
 * bytes for the file of user scripts, valid UTF-8 at times ("LLI5"), where its names are right.
 * The file is copied into buf (cut at its size). */
static bool function_source(const Kprof__SavedFunction *f, char *buf, size_t size, uint32_t *line)
{
	size_t off, len;

	if (f->kind == KPROF__FRAME_KIND__FRAME_KIND_JIT &&
	    pprof_js_source(f->name, &off, &len, line)) {
		snprintf(buf, size, "%.*s", (int)len, f->name + off);
		return true;
	}
	if (f->file && f->file[0]) {
		snprintf(buf, size, "%s", f->file);
		*line = f->line;
		return true;
	}
	return false;
}

static const int64_t *sort_base; /* qsort has no context argument */

static int cmp_base(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (sort_base[x] != sort_base[y])
		return sort_base[x] < sort_base[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int index_bases(struct pp *pp)
{
	pp->by_base = calloc(pp->ntab + 1, sizeof(*pp->by_base));
	if (!pp->by_base)
		return -ENOMEM;
	for (size_t j = 0; j < pp->ntab; j++)
		pp->by_base[j] = j;
	sort_base = pp->tab_base;
	qsort(pp->by_base, pp->ntab, sizeof(*pp->by_base), cmp_base);
	return 0;
}

/* The saved mapping table as the first pprof mappings, the executable's text first (pprof names
 * a profile after its first mapping), with ranges, offsets, paths and build ids. */
static int build_table(struct pp *pp, const Kprof__SavedProfile *sp)
{
	size_t n = sp->n_mappings, k = 0, exe = n;

	/* The executable's largest mapping, its text (node maps a few small ones before it):
	 * go tool pprof keeps the first mapping first and takes it for the main binary. */
	for (size_t i = 0; i < n; i++) {
		const Kprof__SavedMapping *m = sp->mappings[i],
					  *x = exe < n ? sp->mappings[exe] : NULL;

		if (m->exe && (!x || (!strcmp(m->path ? m->path : "", x->path ? x->path : "") &&
				      m->limit - m->start > x->limit - x->start)))
			exe = i;
	}
	if (exe < n)
		pp->tab_order[k++] = exe;
	for (size_t i = 0; i < n; i++)
		if (i != exe)
			pp->tab_order[k++] = i;
	for (size_t j = 0; j < n; j++) {
		const Kprof__SavedMapping *m = sp->mappings[pp->tab_order[j]];
		Perftools__Profiles__Mapping *v = &pp->mv[j];
		const char *path = m->path ? m->path : "";
		int64_t file = strtab_id(&pp->st, path);
		int64_t bid = strtab_id(&pp->st, m->build_id ? m->build_id : "");
		int64_t base = strtab_id(&pp->st, base_name(path));

		if (file < 0 || bid < 0 || base < 0)
			return -ENOMEM;
		perftools__profiles__mapping__init(v);
		v->id = j + 1;
		v->memory_start = m->start;
		v->memory_limit = m->limit;
		v->file_offset = m->offset;
		v->filename = file;
		v->build_id = bid;
		pp->tab_base[j] = base;
		pp->mp[j] = v;
	}
	pp->nmap = pp->ntab = n;
	return index_bases(pp);
}

/* The table mapping native function f runs in, by its module (the base name of the file) and
 * its ELF address: pprof index, and its runtime address in *addr (0 if not known). The module's
 * mappings are found in by_base: a merged host's table holds thousands. */
static bool place_native(const struct pp *pp, const Kprof__SavedProfile *sp,
			 const Kprof__SavedFunction *f, int64_t module, size_t *ret, uint64_t *addr)
{
	size_t lo = 0, hi = pp->ntab;
	bool found = false;

	while (lo < hi) { /* the first of the module's */
		size_t mid = lo + (hi - lo) / 2;

		if (pp->tab_base[pp->by_base[mid]] < module)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k < pp->ntab && pp->tab_base[pp->by_base[k]] == module; k++) {
		size_t j = pp->by_base[k];
		const Kprof__SavedMapping *m = sp->mappings[pp->tab_order[j]];

		if (!found) { /* the file's first mapping, unless one holds the address */
			*ret = j;
			*addr = 0;
			found = true;
		}
		if (f->kind == KPROF__FRAME_KIND__FRAME_KIND_NATIVE && f->start && m->has_vaddr &&
		    f->start >= m->vaddr && f->start - m->vaddr < m->limit - m->start) {
			*ret = j;
			*addr = m->start + (f->start - m->vaddr);
			return true;
		}
	}
	return found;
}

/* A mapping for a module the table does not have (JIT code, the kernel, [vdso], a profile of
 * an older kprofd): one per module, without a range. */
static size_t place_module(struct pp *pp, int64_t module)
{
	size_t m;

	for (m = pp->ntab; m < pp->nmap && pp->mv[m].filename != module; m++)
		;
	if (m == pp->nmap) {
		perftools__profiles__mapping__init(&pp->mv[m]);
		pp->mv[m].id = m + 1;
		pp->mv[m].filename = module;
		pp->mp[m] = &pp->mv[m];
		pp->nmap++;
	}
	return m;
}

/* A profile without a table (written by an older kprofd): the module named like the process
 * (its comm, cut at 15 bytes) gets the first mapping. */
static void place_exe_module(struct pp *pp, const Kprof__SavedProfile *sp)
{
	const char *comm = sp->target && sp->target->comm ? sp->target->comm : "";

	if (sp->n_mappings || !comm[0])
		return;
	for (size_t i = 0; i < sp->n_functions; i++) {
		const Kprof__SavedFunction *f = sp->functions[i];
		int64_t id;

		if (f->kind == KPROF__FRAME_KIND__FRAME_KIND_NATIVE &&
		    !strncmp(f->module, comm, strlen(comm)) &&
		    (id = strtab_id(&pp->st, f->module)) >= 0) {
			place_module(pp, id);
			return;
		}
	}
}

/* Whether kprof named f (not a name made up from its mapping, "[libc.so.6]"). */
static bool named(const Kprof__SavedFunction *f)
{
	return f->kind != KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN && f->name[0] != '[';
}

/* The names flame graphs show (Function.name), one per function: kprof's short form
 * (funcname_short: a Java method without its return type and parameters, a C++ function without
 * its parameter list, return type and qualifiers), but the whole name where two different names
 * share a short form (overloads: foo(int), foo(double)), so that none merges with another; the
 * whole name is Function.system_name. A merged whole-host profile holds each library function
 * once per process: the short forms are made and sorted once per distinct name (first[i]: the
 * first function of i's name, whose short form and string ids i's are). */
struct short_name {
	const char *s;
	size_t i;
};

static int by_short(const void *a, const void *b)
{
	return strcmp(((const struct short_name *)a)->s, ((const struct short_name *)b)->s);
}

struct names {
	const char **shorts; /* per function; one allocation with the short forms' bytes */
	uint32_t *first;     /* per function: the first function with the same name */
};

/* first[] of every function, and the distinct names' first functions in d (*nd of them). */
static int distinct_names(const Kprof__SavedProfile *sp, uint32_t *first, struct short_name *d,
			  size_t *nd)
{
	struct idxtab tab = {0};
	size_t j;

	*nd = 0;
	if (idxtab_reserve(&tab, sp->n_functions + 1, 256, NULL, NULL) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < sp->n_functions; i++) {
		const char *name = sp->functions[i]->name;

		first[i] = i;
		idxtab_probe(&tab, hash_str(name), j) {
			if (!strcmp(sp->functions[tab.slot[j] - 1]->name, name)) {
				first[i] = tab.slot[j] - 1;
				break;
			}
		}
		if (first[i] == i) {
			tab.slot[j] = i + 1;
			d[(*nd)++].i = i;
		}
	}
	idxtab_release(&tab);
	return 0;
}

static void names_release(struct names *n)
{
	free(n->shorts);
	free(n->first);
}

static int short_names(const Kprof__SavedProfile *sp, struct names *out)
{
	size_t nf = sp->n_functions, bytes = 0, nd;
	_cleanup_free_ struct short_name *v = malloc((nf ? nf : 1) * sizeof(*v));
	char *p;

	out->first = malloc((nf ? nf : 1) * sizeof(*out->first));
	if (!v || !out->first || distinct_names(sp, out->first, v, &nd) < 0)
		return -ENOMEM;
	for (size_t k = 0; k < nd; k++)
		bytes += strlen(sp->functions[v[k].i]->name) + 1;
	out->shorts = malloc(nf * sizeof(*out->shorts) + bytes + 1);
	if (!out->shorts)
		return -ENOMEM;
	p = (char *)(out->shorts + nf);
	for (size_t k = 0; k < nd; k++) {
		const char *full = sp->functions[v[k].i]->name;

		v[k].s = p;
		p += funcname_short(full, p, strlen(full) + 1) + 1;
	}
	qsort(v, nd, sizeof(*v), by_short);
	for (size_t k = 0; k < nd; k++) { /* distinct names: an equal neighbour is a clash */
		bool clash = (k > 0 && !strcmp(v[k - 1].s, v[k].s)) ||
			     (k + 1 < nd && !strcmp(v[k + 1].s, v[k].s));

		out->shorts[v[k].i] = clash ? sp->functions[v[k].i]->name : v[k].s;
	}
	for (size_t i = 0; i < nf; i++)
		out->shorts[i] = out->shorts[out->first[i]];
	return 0;
}

/* One more Line (pointers are set by finish_tables, linev may move). */
static int push_line(struct pp *pp, uint64_t function_id, int64_t line)
{
	Perftools__Profiles__Line *l;

	if (array_grow((void **)&pp->linev, &pp->lines_cap, pp->nlines + 1, sizeof(*pp->linev),
		       256) < 0)
		return -ENOMEM;
	l = &pp->linev[pp->nlines++];
	perftools__profiles__line__init(l);
	l->function_id = function_id;
	l->line = line;
	return 0;
}

/* The Function of an inlined frame (name, file): interned by both, after the profile's. */
static int64_t inline_function(struct pp *pp, const Kprof__SavedLine *f, size_t nf)
{
	const char *func = f->function ? f->function : "", *fname = f->file ? f->file : "";
	_cleanup_free_ char *key = NULL;
	int64_t k, name, file;
	Perftools__Profiles__Function *v;

	if (asprintf(&key, "%s\001%s", func, fname) < 0)
		return -ENOMEM;
	k = strtab_id(&pp->fkeys, key);
	if (k < 0)
		return k;
	if ((size_t)k < pp->nfv - nf)
		return nf + k + 1;
	name = strtab_id(&pp->st, func[0] ? func : "[inlined]");
	file = strtab_id(&pp->st, fname);
	if (name < 0 || file < 0 ||
	    array_grow((void **)&pp->fv, &pp->fv_cap, pp->nfv + 1, sizeof(*pp->fv), 64) < 0)
		return -ENOMEM;
	v = &pp->fv[pp->nfv++];
	perftools__profiles__function__init(v);
	v->id = pp->nfv;
	v->name = name;
	v->system_name = name;
	v->filename = file;
	return v->id;
}

/* Functions, locations (one per function, at its start address) and their mappings. */
static int build_functions(struct pp *pp, const Kprof__SavedProfile *sp)
{
	size_t nf = sp->n_functions;
	struct names nm __attribute__((cleanup(names_release))) = {0};
	int err = build_table(pp, sp);

	if (err < 0)
		return err;
	if (short_names(sp, &nm) < 0)
		return -ENOMEM;
	place_exe_module(pp, sp);
	for (size_t i = 0; i < nf; i++) {
		const Kprof__SavedFunction *f = sp->functions[i];
		bool unknown = f->kind == KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN;
		int64_t name, sys, file = 0, module;
		char buf[256], src[1024];
		uint64_t addr = f->start;
		uint32_t line = 0, u = nm.first[i];
		size_t m;

		/* A name seen before: its string ids are its first function's. */
		if (u != i && !unknown &&
		    sp->functions[u]->kind != KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN)
			name = pp->fv[u].name;
		else
			name =
			    strtab_id(&pp->st, unknown ? pprof_display_name(f, buf) : nm.shorts[i]);
		sys = u != i ? pp->fv[u].system_name : strtab_id(&pp->st, f->name);
		module = strtab_id(&pp->st, f->module);
		if (function_source(f, src, sizeof(src), &line))
			file = strtab_id(&pp->st, src);
		if (name < 0 || sys < 0 || file < 0 || module < 0)
			return -ENOMEM;
		if ((f->kind == KPROF__FRAME_KIND__FRAME_KIND_NATIVE ||
		     f->kind == KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN) &&
		    place_native(pp, sp, f, module, &m, &addr))
			;
		else
			m = place_module(pp, module);
		if (f->kind != KPROF__FRAME_KIND__FRAME_KIND_JIT &&
		    f->kind != KPROF__FRAME_KIND__FRAME_KIND_KERNEL && m >= pp->ntab)
			addr = 0; /* an ELF address, not where the code ran */
		pp->mv[m].has_functions |= named(f);
		pp->mv[m].has_filenames |= file > 0;
		pp->mv[m].has_line_numbers |= line > 0;
		perftools__profiles__function__init(&pp->fv[i]);
		pp->fv[i].id = i + 1;
		pp->fv[i].name = name;
		pp->fv[i].system_name = sys;
		pp->fv[i].filename = file;
		pp->fv[i].start_line = line;
		pp->loc_line[i] = pp->nlines;
		pp->loc_nline[i] = 1;
		if (push_line(pp, i + 1, line) < 0)
			return -ENOMEM;
		perftools__profiles__location__init(&pp->lv[i]);
		pp->lv[i].id = i + 1;
		pp->lv[i].mapping_id = m + 1;
		pp->lv[i].address = addr;
		pp->lp[i] = &pp->lv[i];
	}
	pp->nfv = nf;
	return 0;
}

/* The Lines of an address of function func in table mapping j: its source frames lines[0..n),
 * else one Line of its function. */
static int addr_lines(struct pp *pp, const Kprof__SavedProfile *sp, uint32_t func,
		      Kprof__SavedLine *const *lines, size_t n, size_t j)
{
	if (!n) /* as its function's location says */
		return push_line(pp, func + 1, pp->fv[func].start_line);
	for (size_t i = 0; i < n; i++) {
		const Kprof__SavedLine *l = lines[i];
		int64_t fid = func + 1, file = strtab_id(&pp->st, l->file ? l->file : "");

		if (file < 0)
			return -ENOMEM;
		if (i + 1 < n && (fid = inline_function(pp, l, sp->n_functions)) < 0)
			return -ENOMEM;
		if (i + 1 == n && !pp->fv[func].filename)
			pp->fv[func].filename = file;
		if (push_line(pp, fid, l->line) < 0)
			return -ENOMEM;
		if (j < pp->nmap) {
			pp->mv[j].has_filenames |= file > 0;
			pp->mv[j].has_line_numbers |= l->line > 0;
			pp->mv[j].has_inline_frames |= n > 1;
		}
	}
	return 0;
}

/* Location idx at runtime address addr of function func, with the Lines lines[0..n), in its
 * function's mapping, or in another mapping of its file that holds the address (a native
 * function split into .text.unlikely, say; JIT and kernel code keep their module's mapping). */
static int addr_location(struct pp *pp, const Kprof__SavedProfile *sp, size_t idx, uint32_t func,
			 uint64_t addr, Kprof__SavedLine *const *lines, size_t n)
{
	Perftools__Profiles__Location *v = &pp->lv[idx];
	size_t j = pp->lv[func].mapping_id - 1;

	for (size_t t = 0; j < pp->ntab && t < pp->ntab; t++)
		if (pp->tab_base[t] == pp->tab_base[j] && addr >= pp->mv[t].memory_start &&
		    addr < pp->mv[t].memory_limit) {
			j = t;
			break;
		}
	pp->loc_line[idx] = pp->nlines;
	if (addr_lines(pp, sp, func, lines, n, j) < 0)
		return -ENOMEM;
	pp->loc_nline[idx] = pp->nlines - pp->loc_line[idx];
	perftools__profiles__location__init(v);
	v->id = idx + 1;
	v->mapping_id = j + 1;
	v->address = addr;
	pp->lp[idx] = v;
	return 0;
}

/* A Location per sampled leaf address (see the top), after the functions' ones. */
static int build_leaf_locations(struct pp *pp, const Kprof__SavedProfile *sp)
{
	size_t nf = sp->n_functions, n = sp->n_leaf_addrs;
	int err = leafsplit_init(&pp->ls, sp);

	if (err < 0)
		return err;
	for (size_t k = 0; k < n; k++) {
		const Kprof__SavedLeafAddr *la = sp->leaf_addrs[pp->ls.order[k]];

		if (addr_location(pp, sp, nf + k, la->func, la->address, la->lines, la->n_lines) <
		    0)
			return -ENOMEM;
	}
	pp->nla = n;
	pp->nloc = nf + n;
	return 0;
}

static size_t site_slot(uint32_t caller, uint32_t callee, size_t nslots)
{
	return mix64((uint64_t)caller << 32 | callee) & (nslots - 1);
}

/* The pairs seen from one call site only (the others keep their function's location), in a
 * table at most half full. */
static int index_sites(struct pp *pp)
{
	size_t n = 16;

	while (n < 2 * pp->nsites_one)
		n *= 2;
	pp->site_tab = calloc(n, sizeof(*pp->site_tab));
	if (!pp->site_tab)
		return -ENOMEM;
	pp->site_nslots = n;
	for (size_t i = 0; i < pp->nsites; i++) {
		const struct site *s = &pp->sites[i];
		size_t j;

		if (!s->loc)
			continue;
		for (j = site_slot(s->caller, s->callee, n); pp->site_tab[j].loc;
		     j = (j + 1) & (n - 1))
			;
		pp->site_tab[j] = *s;
	}
	return 0;
}

/* A Location per (caller, callee) pair seen from one call site only (issue 32), after the leaf
 * addresses': a stack's caller frame that called that callee is that location, with the call
 * site's lines. A pair seen from several call sites keeps its function's location (which one a
 * stack came from is not known). */
static int build_site_locations(struct pp *pp, const Kprof__SavedProfile *sp)
{
	struct sites st;
	int err = sites_init(&st, sp);

	pp->sites = calloc(sp->n_call_sites + 1, sizeof(*pp->sites));
	if (err >= 0 && !pp->sites)
		err = -ENOMEM;
	for (size_t a = 0, b; err >= 0 && a < st.n; a = b) {
		const Kprof__SavedCallSite *c = st.v[a];
		struct site *s = &pp->sites[pp->nsites++];
		bool one;

		b = sites_pair_end(&st, a, &one);
		*s = (struct site){c->caller, c->callee, 0};
		if (!one)
			continue;
		err = addr_location(pp, sp, pp->nloc, c->caller, c->address, c->lines, c->n_lines);
		s->loc = ++pp->nloc;
		pp->nsites_one++;
	}
	sites_release(&st);
	return err < 0 ? err : index_sites(pp);
}

/* The location of frame caller that called callee: its call site's, else the function's. Asked
 * for every caller frame of every sample: a hash probe, not a search of the sorted sites. */
static uint64_t caller_location(const struct pp *pp, uint32_t caller, uint32_t callee)
{
	for (size_t j = pp->site_nslots ? site_slot(caller, callee, pp->site_nslots) : 0;
	     pp->site_nslots && pp->site_tab[j].loc; j = (j + 1) & (pp->site_nslots - 1))
		if (pp->site_tab[j].caller == caller && pp->site_tab[j].callee == callee)
			return pp->site_tab[j].loc;
	return caller + 1;
}

/* The next piece of stack s's *left samples: its leaf's location id (a leaf address's while the
 * leaf function has samples of addresses left, else the function's) and its count. */
static uint64_t next_piece(struct pp *pp, const Kprof__SavedProfile *sp, const Kprof__SavedStack *s,
			   uint64_t *left, uint64_t *loc)
{
	uint32_t f = s->ids[s->n_ids - 1];
	int64_t k;
	uint64_t take = leafsplit_next(&pp->ls, f, left, &k);

	*loc = k < 0 ? f + 1 : sp->n_functions + (uint64_t)k + 1;
	return take;
}

/* How many samples and location ids the split makes (for the arrays' sizes). */
static int split_count(struct pp *pp, const Kprof__SavedProfile *sp)
{
	leafsplit_reset(&pp->ls);
	for (size_t i = 0; i < sp->n_stacks; i++) {
		const Kprof__SavedStack *s = sp->stacks[i];
		const bool split = s->n_ids && i < pp->off_from;
		uint64_t left = s->count, loc;

		for (size_t j = 0; j < s->n_ids; j++)
			if (s->ids[j] >= sp->n_functions)
				return -EINVAL;
		do {
			if (split)
				next_piece(pp, sp, s, &left, &loc);
			pp->nsv++;
			pp->nlocs += s->n_ids;
		} while (left && split);
	}
	leafsplit_reset(&pp->ls);
	return 0;
}

/* The pointers into the function and line arrays, once they are complete. */
static int finish_tables(struct pp *pp)
{
	pp->fp = calloc(pp->nfv + 1, sizeof(*pp->fp));
	pp->linep = calloc(pp->nlines + 1, sizeof(*pp->linep));
	if (!pp->fp || !pp->linep)
		return -ENOMEM;
	for (size_t i = 0; i < pp->nfv; i++)
		pp->fp[i] = &pp->fv[i];
	for (size_t i = 0; i < pp->nlines; i++)
		pp->linep[i] = &pp->linev[i];
	for (size_t i = 0; i < pp->nloc; i++) {
		pp->lv[i].n_line = pp->loc_nline[i];
		pp->lv[i].line = &pp->linep[pp->loc_line[i]];
	}
	return 0;
}

/* The name of each thread (the saved table; checked by saved_check), by tid: NULL if unnamed. */
static const char *thread_name(const Kprof__SavedProfile *sp, const uint32_t *order, uint32_t tid)
{
	size_t lo = 0, hi = sp->n_threads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const Kprof__SavedThread *t = sp->threads[order[mid]];

		if (t->tid == tid)
			return t->name && t->name[0] ? t->name : NULL;
		if (t->tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const Kprof__SavedProfile *sort_sp; /* qsort has no context argument */

static int by_tid(const void *a, const void *b)
{
	uint32_t x = sort_sp->threads[*(const uint32_t *)a]->tid;
	uint32_t y = sort_sp->threads[*(const uint32_t *)b]->tid;

	return x < y ? -1 : x > y;
}

/* A shared string label key=val in *lab, for a sample's pointers: 1, or 0 for an empty val. */
static int make_str_label(struct pp *pp, Perftools__Profiles__Label *lab, const char *key,
			  const char *val)
{
	int64_t k = strtab_id(&pp->st, key), v;

	if (!val || !val[0])
		return k < 0 ? -ENOMEM : 0;
	v = strtab_id(&pp->st, val);
	if (k < 0 || v < 0)
		return -ENOMEM;
	perftools__profiles__label__init(lab);
	lab->key = k;
	lab->str = v;
	return 1;
}

/* The shared label of a sample's leaf kind, made at its first sample. */
static Perftools__Profiles__Label *kind_label(struct pp *pp, const Kprof__SavedProfile *sp,
					      const Kprof__SavedStack *s)
{
	size_t kind = s->n_ids ? sp->functions[s->ids[s->n_ids - 1]]->kind : PPROF_KINDS;

	if (kind > PPROF_KINDS)
		kind = PPROF_KINDS; /* a kind newer than this table: "unknown" */
	if (!pp->kind_done[kind] &&
	    make_str_label(pp, &pp->kind_lab[kind], "kind",
			   kind < PPROF_KINDS ? pprof_kind_name(kind) : "unknown") < 0)
		return NULL;
	pp->kind_done[kind] = true;
	return &pp->kind_lab[kind];
}

/* The shared labels of a sample's process (a merged profile's origin: pid as a string, as label
 * filters of Pyroscope and Parca want them, comm, exe, unit, cgroup, runtime; one process's
 * profile: its pid still, so profiles put together can be told apart), made at its first
 * sample: appended to ptr[*nl]. */
static int origin_labels(struct pp *pp, const Kprof__SavedProfile *sp, const Kprof__SavedStack *s,
			 Perftools__Profiles__Label **ptr, size_t *nl)
{
	static const char *const keys[ORIGIN_LABELS] = {"pid",	"comm",	  "exe",
							"unit", "cgroup", "runtime"};
	struct origin_ids *oi;
	char pid[16];
	int r;

	if (!s->origin || s->origin > sp->n_origins) {
		if (!pp->pid_done) {
			snprintf(pid, sizeof(pid), "%u", sp->target ? sp->target->pid : 0);
			r = sp->target && sp->target->pid
				? make_str_label(pp, &pp->pid_lab, keys[0], pid)
				: 0;
			if (r < 0)
				return r;
			pp->pid_done = r ? 1 : -1;
		}
		if (pp->pid_done > 0)
			ptr[(*nl)++] = &pp->pid_lab;
		return 0;
	}
	if (!pp->oids && !(pp->oids = calloc(sp->n_origins, sizeof(*pp->oids))))
		return -ENOMEM;
	oi = &pp->oids[s->origin - 1];
	if (!oi->done) {
		const Kprof__Origin *o = sp->origins[s->origin - 1];
		const char *vals[ORIGIN_LABELS] = {pid,	    o->comm,   o->exe,
						   o->unit, o->cgroup, o->runtime};

		snprintf(pid, sizeof(pid), "%u", o->pid);
		if (!o->pid)
			vals[0] = NULL;
		for (size_t i = 0; i < ORIGIN_LABELS; i++) {
			r = make_str_label(pp, &oi->lab[oi->n], keys[i], vals[i]);
			if (r < 0)
				return r;
			oi->n += r;
		}
		oi->done = true;
	}
	for (size_t i = 0; i < oi->n; i++)
		ptr[(*nl)++] = &oi->lab[i];
	return 0;
}

static int build_samples(struct pp *pp, const Kprof__SavedProfile *sp, int64_t period, size_t nv)
{
	int64_t k_tid = strtab_id(&pp->st, "thread_id"),
		k_tname = strtab_id(&pp->st, "thread_name"), k_kind = strtab_id(&pp->st, "kind"),
		k_pid = strtab_id(&pp->st, "pid");
	_cleanup_free_ uint32_t *order = calloc(sp->n_threads + 1, sizeof(*order));
	size_t off = 0;

	if (k_tid < 0 || k_tname < 0 || k_kind < 0 || k_pid < 0 || !order)
		return -ENOMEM;
	for (size_t i = 0; i < sp->n_threads; i++)
		order[i] = i;
	sort_sp = sp;
	qsort(order, sp->n_threads, sizeof(*order), by_tid);
	uint64_t left = sp->n_stacks ? sp->stacks[0]->count : 0;

	for (size_t si = 0, i = 0; si < sp->n_stacks; i++) {
		const Kprof__SavedStack *s = sp->stacks[si];
		Perftools__Profiles__Sample *smp = &pp->sv[i];
		Perftools__Profiles__Label *lab = &pp->labv[PPROF_OWN_LABELS * i], *kl;
		Perftools__Profiles__Label **ptr = &pp->labp[PPROF_LABELS * i];
		const char *tname = thread_name(sp, order, s->tid);
		const bool offcpu = si >= pp->off_from, split = s->n_ids && !offcpu;
		uint64_t count = s->count, leaf = s->n_ids ? s->ids[s->n_ids - 1] + 1 : 0;
		int64_t tn = 0;
		size_t nl = 0;

		if (i >= pp->nsv)
			return -EINVAL;
		if (split)
			count = next_piece(pp, sp, s, &left, &leaf);
		if (!left || !split) /* the next sample is of the next stack */
			left = ++si < sp->n_stacks ? sp->stacks[si]->count : 0;
		perftools__profiles__sample__init(smp);
		smp->location_id = pp->locs + off;
		smp->n_location_id = s->n_ids;
		for (size_t j = 0; j < s->n_ids; j++) /* leaf first */
			pp->locs[off + j] =
			    j ? caller_location(pp, s->ids[s->n_ids - 1 - j], s->ids[s->n_ids - j])
			      : leaf;
		off += s->n_ids;
		smp->value = pp->values + nv * i;
		smp->n_value = nv;
		smp->value[0] = count;
		smp->value[1] = count * period;
		/* A merged profile's process sampled at its own frequency: its CPU time. */
		if (s->origin && s->origin <= sp->n_origins && sp->origins[s->origin - 1]->freq_hz)
			smp->value[1] =
			    count * (1000000000LL / sp->origins[s->origin - 1]->freq_hz);
		if (offcpu) { /* off-CPU: its count is nanoseconds */
			smp->value[0] = smp->value[1] = 0;
			smp->value[2] = count;
		}
		if (nv == 4)
			smp->value[3] = smp->value[1] + smp->value[2];
		/* Strings interned in the order they always were (the kind's before the thread
		 * name's): the string table, and so the output, unchanged. */
		kl = kind_label(pp, sp, s);
		if (!kl || (tname && (tn = strtab_id(&pp->st, tname)) < 0))
			return -ENOMEM;
		perftools__profiles__label__init(&lab[0]);
		lab[0].key = k_tid;
		lab[0].num = s->tid;
		ptr[nl++] = &lab[0];
		if (tname) {
			perftools__profiles__label__init(&lab[1]);
			lab[1].key = k_tname;
			lab[1].str = tn;
			ptr[nl++] = &lab[1];
		}
		ptr[nl++] = kl;
		if (origin_labels(pp, sp, s, ptr, &nl) < 0)
			return -ENOMEM;
		smp->label = ptr;
		smp->n_label = nl;
		pp->sp[i] = smp;
	}
	return 0;
}

int pprof_build(const Kprof__SavedProfile *sp, uint64_t now_ns, const char *version, uint8_t **ret,
		size_t *ret_len)
{
	return pprof_build_offcpu(sp, sp->n_stacks, now_ns, version, ret, ret_len);
}

/* The profile's comments: what it is, what its leaf addresses, call sites and lines hold, and
 * the lines resolver's notes (c holds 4 + SAVED_MAX_LINES_NOTES). */
static int comments(struct pp *pp, const Kprof__SavedProfile *sp, const char *version, int64_t *c,
		    size_t *n)
{
	const Kprof__Target *t = sp->target;
	const Kprof__SavedLinesInfo *li = sp->lines;
	char text[768];

	*n = 0;
	snprintf(text, sizeof(text), "kprof %s: pid %u (%s), %u Hz", version, t ? t->pid : 0,
		 t && t->comm ? t->comm : "", t ? t->freq_hz : 0);
	if ((c[(*n)++] = strtab_id(&pp->st, text)) < 0)
		return -ENOMEM;
	snprintf(text, sizeof(text),
		 "kprof leaf addresses: %zu kept (at most %u), %" PRIu64
		 " samples beyond them at their function's start",
		 pp->nla, SAVED_MAX_LEAF_ADDRS, sp->leaf_addrs_dropped);
	if ((c[(*n)++] = strtab_id(&pp->st, text)) < 0)
		return -ENOMEM;
	snprintf(text, sizeof(text),
		 "kprof call sites: %zu caller-callee pairs, %zu of them from one call site (a "
		 "location each), the others at their caller's start; %" PRIu64 " sites not kept",
		 pp->nsites, pp->nsites_one, sp->call_sites_dropped);
	if ((c[(*n)++] = strtab_id(&pp->st, text)) < 0)
		return -ENOMEM;
	if (!li)
		snprintf(text, sizeof(text), "kprof lines: not asked for");
	else
		snprintf(text, sizeof(text),
			 "kprof lines: %" PRIu64 " of %" PRIu64 " addresses resolved, %" PRIu64
			 " not available, %" PRIu64 " without a line (%" PRIu64
			 " from the cache; kprof-lines helpers: %" PRIu64 " started, %" PRIu64
			 " killed)",
			 li->resolved, li->asked, li->failed, li->none, li->cached,
			 li->helpers_started, li->helpers_killed);
	if ((c[(*n)++] = strtab_id(&pp->st, text)) < 0)
		return -ENOMEM;
	for (size_t i = 0; li && i < li->n_notes && i < SAVED_MAX_LINES_NOTES; i++) {
		snprintf(text, sizeof(text), "kprof lines: %s", li->notes[i]);
		if ((c[(*n)++] = strtab_id(&pp->st, text)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The profile of sp with four sample types when four (else two unless off_from < n_stacks), the
 * default one named by default_type (NULL: none). */
static int build(const Kprof__SavedProfile *sp, size_t off_from, bool four,
		 const char *default_type, uint64_t now_ns, const char *version, uint8_t **ret,
		 size_t *ret_len)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[4] = {
	    PERFTOOLS__PROFILES__VALUE_TYPE__INIT, PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
	    PERFTOOLS__PROFILES__VALUE_TYPE__INIT, PERFTOOLS__PROFILES__VALUE_TYPE__INIT};
	Perftools__Profiles__ValueType *vtp[4] = {&vt[0], &vt[1], &vt[2], &vt[3]};
	const size_t nv = four || off_from < sp->n_stacks ? 4 : 2;
	Perftools__Profiles__ValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	const Kprof__Target *t = sp->target;
	size_t nf = sp->n_functions, ns = sp->n_stacks, nlocs = 0;
	struct pp pp = {0};
	_cleanup_free_ uint8_t *raw = NULL;
	int64_t comment[4 + SAVED_MAX_LINES_NOTES];
	size_t len, ncomment = 0;
	int err = -ENOMEM;

	size_t nla = sp->n_leaf_addrs + sp->n_call_sites; /* locations past the functions' */

	pp.off_from = off_from;
	pp.fv_cap = nf + 1;
	pp.fv = calloc(pp.fv_cap, sizeof(*pp.fv));
	pp.lv = calloc(nf + nla + 1, sizeof(*pp.lv));
	pp.lp = calloc(nf + nla + 1, sizeof(*pp.lp));
	pp.loc_line = calloc(nf + nla + 1, sizeof(*pp.loc_line));
	pp.loc_nline = calloc(nf + nla + 1, sizeof(*pp.loc_nline));
	pp.mv = calloc(nf + sp->n_mappings + 1, sizeof(*pp.mv));
	pp.mp = calloc(nf + sp->n_mappings + 1, sizeof(*pp.mp));
	pp.tab_order = calloc(sp->n_mappings + 1, sizeof(*pp.tab_order));
	pp.tab_base = calloc(sp->n_mappings + 1, sizeof(*pp.tab_base));
	if (!pp.fv || !pp.lv || !pp.lp || !pp.loc_line || !pp.loc_nline || !pp.mv || !pp.mp ||
	    !pp.tab_order || !pp.tab_base || strtab_id(&pp.st, "") != 0)
		goto out;
	if ((err = build_functions(&pp, sp)) < 0 || (err = build_leaf_locations(&pp, sp)) < 0 ||
	    (err = build_site_locations(&pp, sp)) < 0 || (err = split_count(&pp, sp)) < 0 ||
	    (err = finish_tables(&pp)) < 0)
		goto out;
	err = -ENOMEM;
	ns = pp.nsv;
	nlocs = pp.nlocs;
	pp.sv = calloc(ns + 1, sizeof(*pp.sv));
	pp.sp = calloc(ns + 1, sizeof(*pp.sp));
	pp.locs = calloc(nlocs + 1, sizeof(*pp.locs));
	pp.values = calloc(nv * ns + 1, sizeof(*pp.values));
	pp.labv = calloc(PPROF_OWN_LABELS * ns + 1, sizeof(*pp.labv));
	pp.labp = calloc(PPROF_LABELS * ns + 1, sizeof(*pp.labp));
	if (!pp.sv || !pp.sp || !pp.locs || !pp.values || !pp.labv || !pp.labp)
		goto out;
	prof.period = t && t->freq_hz ? 1000000000LL / t->freq_hz : 10000000LL;
	if ((err = build_samples(&pp, sp, prof.period, nv)) < 0)
		goto out;
	err = -ENOMEM;
	if (comments(&pp, sp, version, comment, &ncomment) < 0 ||
	    (vt[0].type = strtab_id(&pp.st, "samples")) < 0 ||
	    (vt[0].unit = strtab_id(&pp.st, "count")) < 0 ||
	    (vt[1].type = strtab_id(&pp.st, "cpu")) < 0 ||
	    (vt[1].unit = strtab_id(&pp.st, "nanoseconds")) < 0)
		goto out;
	period_type.type = vt[1].type;
	period_type.unit = vt[1].unit;
	if (nv == 4 && ((vt[2].type = strtab_id(&pp.st, "off_cpu")) < 0 ||
			(vt[2].unit = strtab_id(&pp.st, "nanoseconds")) < 0 ||
			(vt[3].type = strtab_id(&pp.st, "wall")) < 0 ||
			(vt[3].unit = strtab_id(&pp.st, "nanoseconds")) < 0))
		goto out;
	if (default_type && (prof.default_sample_type = strtab_id(&pp.st, default_type)) < 0)
		goto out;
	prof.n_sample_type = nv;
	prof.sample_type = vtp;
	prof.period_type = &period_type;
	prof.n_sample = ns;
	prof.sample = pp.sp;
	prof.n_mapping = pp.nmap;
	prof.mapping = pp.mp;
	prof.n_location = pp.nloc;
	prof.location = pp.lp;
	prof.n_function = pp.nfv;
	prof.function = pp.fp;
	prof.n_string_table = pp.st.n;
	prof.string_table = pp.st.v;
	prof.n_comment = ncomment;
	prof.comment = comment;
	if (t) {
		uint64_t end = t->ended_at_ns ? t->ended_at_ns : now_ns;

		prof.time_nanos = t->attached_at_ns;
		prof.duration_nanos = end > t->attached_at_ns ? end - t->attached_at_ns : 0;
		if (t->window_end_ns) { /* a time range: the span of its windows */
			prof.time_nanos = t->window_start_ns;
			prof.duration_nanos = t->window_end_ns > t->window_start_ns
						  ? t->window_end_ns - t->window_start_ns
						  : 0;
		}
	}
	len = perftools__profiles__profile__get_packed_size(&prof);
	raw = malloc(len ? len : 1);
	if (!raw)
		goto out;
	perftools__profiles__profile__pack(&prof, raw);
	err = gzip(raw, len, ret, ret_len);
out:
	pp_release(&pp);
	return err;
}

int pprof_build_offcpu(const Kprof__SavedProfile *sp, size_t off_from, uint64_t now_ns,
		       const char *version, uint8_t **ret, size_t *ret_len)
{
	return build(sp, off_from, false, NULL, now_ns, version, ret, ret_len);
}

int pprof_build_wall(const Kprof__SavedProfile *sp, size_t off_from, const char *default_type,
		     uint64_t now_ns, const char *version, uint8_t **ret, size_t *ret_len)
{
	return build(sp, off_from, true, default_type, now_ns, version, ret, ret_len);
}
