// SPDX-License-Identifier: GPL-2.0-only
/* pprof.c: SavedProfile -> gzip-compressed pprof Profile (see pprof.h).
 *
 * One Location and one Function per kprof function (the location's address is the function's
 * start: kprof aggregates by function), one Mapping per module. Each distinct (thread, stack)
 * becomes a Sample with two values, [samples/count, cpu/nanoseconds] (count times the sampling
 * period), leaf first, and labels thread (the tid) and kind (jit, native, kernel or unknown, of
 * the leaf). Strings are interned in a small open-addressing table.
 */
#include "pprof.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "render.h"
#include "proto/profile.pb-c.h"

struct strtab {
	char **v;
	size_t n, cap;
	uint32_t *slots; /* index + 1 */
	size_t nslots;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static int strtab_grow(struct strtab *t)
{
	size_t ns = t->nslots ? t->nslots * 2 : 256;
	uint32_t *slots = calloc(ns, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = hash_str(t->v[i]) & (ns - 1);

		while (slots[j])
			j = (j + 1) & (ns - 1);
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = ns;
	return 0;
}

/* Index of s in the table (interned on first sight), or -ENOMEM. */
static int64_t strtab_id(struct strtab *t, const char *s)
{
	size_t j;

	if ((t->n + 1) * 2 > t->nslots && strtab_grow(t) < 0)
		return -ENOMEM;
	for (j = hash_str(s) & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1))
		if (!strcmp(t->v[t->slots[j] - 1], s))
			return t->slots[j] - 1;
	if (array_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 256) < 0)
		return -ENOMEM;
	t->v[t->n] = strdup(s);
	if (!t->v[t->n])
		return -ENOMEM;
	t->slots[j] = t->n + 1;
	return t->n++;
}

static void strtab_release(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slots);
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

static int gzip(const uint8_t *in, size_t len, uint8_t **ret, size_t *ret_len)
{
	z_stream zs = {0};
	size_t cap = deflateBound(&zs, len) + 64;
	uint8_t *out;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
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

struct pp {
	struct strtab st;
	Perftools__Profiles__Function *fv;
	Perftools__Profiles__Function **fp;
	Perftools__Profiles__Location *lv;
	Perftools__Profiles__Location **lp;
	Perftools__Profiles__Line *linev;
	Perftools__Profiles__Line **linep;
	Perftools__Profiles__Mapping *mv;
	Perftools__Profiles__Mapping **mp;
	size_t nmap;
	Perftools__Profiles__Sample *sv;
	Perftools__Profiles__Sample **sp;
	uint64_t *locs;			  /* all samples' location ids, one arena */
	int64_t *values;		  /* 2 per sample */
	Perftools__Profiles__Label *labv; /* 2 per sample */
	Perftools__Profiles__Label **labp;
};

static void pp_release(struct pp *pp)
{
	strtab_release(&pp->st);
	free(pp->fv);
	free(pp->fp);
	free(pp->lv);
	free(pp->lp);
	free(pp->linev);
	free(pp->linep);
	free(pp->mv);
	free(pp->mp);
	free(pp->sv);
	free(pp->sp);
	free(pp->locs);
	free(pp->values);
	free(pp->labv);
	free(pp->labp);
}

/* Functions, locations and one mapping per module. */
static int build_functions(struct pp *pp, const Kprof__SavedProfile *sp)
{
	size_t nf = sp->n_functions;

	for (size_t i = 0; i < nf; i++) {
		const Kprof__SavedFunction *f = sp->functions[i];
		int64_t name, sys, file;
		char buf[256];
		size_t m;

		name = strtab_id(&pp->st, pprof_display_name(f, buf));
		sys = strtab_id(&pp->st, f->name);
		file = strtab_id(&pp->st, f->module);
		if (name < 0 || sys < 0 || file < 0)
			return -ENOMEM;
		for (m = 0; m < pp->nmap && pp->mv[m].filename != file; m++)
			;
		if (m == pp->nmap) {
			perftools__profiles__mapping__init(&pp->mv[m]);
			pp->mv[m].id = m + 1;
			pp->mv[m].filename = file;
			pp->mv[m].has_functions = true; /* all the symbols kprof could find */
			pp->mp[m] = &pp->mv[m];
			pp->nmap++;
		}
		perftools__profiles__function__init(&pp->fv[i]);
		pp->fv[i].id = i + 1;
		pp->fv[i].name = name;
		pp->fv[i].system_name = sys;
		pp->fv[i].filename = file;
		pp->fp[i] = &pp->fv[i];
		perftools__profiles__line__init(&pp->linev[i]);
		pp->linev[i].function_id = i + 1;
		pp->linep[i] = &pp->linev[i];
		perftools__profiles__location__init(&pp->lv[i]);
		pp->lv[i].id = i + 1;
		pp->lv[i].mapping_id = m + 1;
		pp->lv[i].address = f->start;
		pp->lv[i].n_line = 1;
		pp->lv[i].line = &pp->linep[i];
		pp->lp[i] = &pp->lv[i];
	}
	return 0;
}

static int build_samples(struct pp *pp, const Kprof__SavedProfile *sp, int64_t period)
{
	int64_t k_thread = strtab_id(&pp->st, "thread"), k_kind = strtab_id(&pp->st, "kind");
	size_t off = 0;

	if (k_thread < 0 || k_kind < 0)
		return -ENOMEM;
	for (size_t i = 0; i < sp->n_stacks; i++) {
		const Kprof__SavedStack *s = sp->stacks[i];
		Perftools__Profiles__Sample *smp = &pp->sv[i];
		Perftools__Profiles__Label *lab = &pp->labv[2 * i];
		int64_t kind;

		for (size_t j = 0; j < s->n_ids; j++)
			if (s->ids[j] >= sp->n_functions)
				return -EINVAL;
		perftools__profiles__sample__init(smp);
		smp->location_id = pp->locs + off;
		smp->n_location_id = s->n_ids;
		for (size_t j = 0; j < s->n_ids; j++) /* leaf first */
			pp->locs[off + j] = s->ids[s->n_ids - 1 - j] + 1;
		off += s->n_ids;
		smp->value = pp->values + 2 * i;
		smp->n_value = 2;
		smp->value[0] = s->count;
		smp->value[1] = s->count * period;
		kind = strtab_id(&pp->st,
				 s->n_ids ? render_kind(sp->functions[s->ids[s->n_ids - 1]]->kind)
					  : "unknown");
		if (kind < 0)
			return -ENOMEM;
		perftools__profiles__label__init(&lab[0]);
		lab[0].key = k_thread;
		lab[0].num = s->tid;
		perftools__profiles__label__init(&lab[1]);
		lab[1].key = k_kind;
		lab[1].str = kind;
		pp->labp[2 * i] = &lab[0];
		pp->labp[2 * i + 1] = &lab[1];
		smp->label = &pp->labp[2 * i];
		smp->n_label = 2;
		pp->sp[i] = smp;
	}
	return 0;
}

int pprof_build(const Kprof__SavedProfile *sp, uint64_t now_ns, const char *version, uint8_t **ret,
		size_t *ret_len)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[2] = {PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
						PERFTOOLS__PROFILES__VALUE_TYPE__INIT};
	Perftools__Profiles__ValueType *vtp[2] = {&vt[0], &vt[1]};
	Perftools__Profiles__ValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	const Kprof__Target *t = sp->target;
	size_t nf = sp->n_functions, ns = sp->n_stacks, nlocs = 0;
	struct pp pp = {0};
	_cleanup_free_ uint8_t *raw = NULL;
	int64_t comment = 0;
	char text[256];
	size_t len;
	int err = -ENOMEM;

	for (size_t i = 0; i < ns; i++)
		nlocs += sp->stacks[i]->n_ids;
	pp.fv = calloc(nf + 1, sizeof(*pp.fv));
	pp.fp = calloc(nf + 1, sizeof(*pp.fp));
	pp.lv = calloc(nf + 1, sizeof(*pp.lv));
	pp.lp = calloc(nf + 1, sizeof(*pp.lp));
	pp.linev = calloc(nf + 1, sizeof(*pp.linev));
	pp.linep = calloc(nf + 1, sizeof(*pp.linep));
	pp.mv = calloc(nf + 1, sizeof(*pp.mv));
	pp.mp = calloc(nf + 1, sizeof(*pp.mp));
	pp.sv = calloc(ns + 1, sizeof(*pp.sv));
	pp.sp = calloc(ns + 1, sizeof(*pp.sp));
	pp.locs = calloc(nlocs + 1, sizeof(*pp.locs));
	pp.values = calloc(2 * ns + 1, sizeof(*pp.values));
	pp.labv = calloc(2 * ns + 1, sizeof(*pp.labv));
	pp.labp = calloc(2 * ns + 1, sizeof(*pp.labp));
	if (!pp.fv || !pp.fp || !pp.lv || !pp.lp || !pp.linev || !pp.linep || !pp.mv || !pp.mp ||
	    !pp.sv || !pp.sp || !pp.locs || !pp.values || !pp.labv || !pp.labp ||
	    strtab_id(&pp.st, "") != 0)
		goto out;
	prof.period = t && t->freq_hz ? 1000000000LL / t->freq_hz : 10000000LL;
	if ((err = build_functions(&pp, sp)) < 0 || (err = build_samples(&pp, sp, prof.period)) < 0)
		goto out;
	err = -ENOMEM;
	snprintf(text, sizeof(text), "kprof %s: pid %u (%s), %u Hz", version, t ? t->pid : 0,
		 t && t->comm ? t->comm : "", t ? t->freq_hz : 0);
	if ((vt[0].type = strtab_id(&pp.st, "samples")) < 0 ||
	    (vt[0].unit = strtab_id(&pp.st, "count")) < 0 ||
	    (vt[1].type = strtab_id(&pp.st, "cpu")) < 0 ||
	    (vt[1].unit = strtab_id(&pp.st, "nanoseconds")) < 0 ||
	    (comment = strtab_id(&pp.st, text)) < 0)
		goto out;
	period_type.type = vt[1].type;
	period_type.unit = vt[1].unit;
	prof.n_sample_type = 2;
	prof.sample_type = vtp;
	prof.period_type = &period_type;
	prof.n_sample = ns;
	prof.sample = pp.sp;
	prof.n_mapping = pp.nmap;
	prof.mapping = pp.mp;
	prof.n_location = nf;
	prof.location = pp.lp;
	prof.n_function = nf;
	prof.function = pp.fp;
	prof.n_string_table = pp.st.n;
	prof.string_table = pp.st.v;
	prof.n_comment = 1;
	prof.comment = &comment;
	if (t) {
		uint64_t end = t->ended_at_ns ? t->ended_at_ns : now_ns;

		prof.time_nanos = t->attached_at_ns;
		prof.duration_nanos = end > t->attached_at_ns ? end - t->attached_at_ns : 0;
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
