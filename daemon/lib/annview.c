// SPDX-License-Identifier: GPL-2.0-only
/* annview.c: one function's annotation from its bytes and sample counts (see
 * include/kprof/annview.h).
 *
 * Three steps: a linear sweep with Capstone (AT&T syntax) lists the instructions; each count is
 * put on the instruction containing its address (binary search over the sorted list); cfg_build
 * over the known prefix of the code gives the blocks, loops and back edges, and every instruction
 * is placed in the block holding its address. Blocks are then summed and ordered hottest first.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "kprof/annview.h"
#include "kprof/array.h"
#include "kprof/cfg.h"
#include "kprof/cleanup.h"

static void cs_free_one(cs_insn **p)
{
	if (*p)
		cs_free(*p, 1);
}

void annview_free(struct annview *v)
{
	if (!v)
		return;
	free(v->insns);
	free(v->blocks);
	free(v->backs);
	free(v->hot);
	free(v);
}

static struct annview_insn *insn_push(struct annview *v, size_t *cap)
{
	struct annview_insn *in;

	if (array_grow((void **)&v->insns, cap, v->ninsns + 1, sizeof(*v->insns), 64) < 0)
		return NULL;
	in = &v->insns[v->ninsns++];
	memset(in, 0, sizeof(*in));
	in->block = ANNVIEW_NONE;
	return in;
}

/* The linear sweep: known runs decoded, unknown runs one row each. */
static int sweep(struct annview *v, csh cs, const uint8_t *code, const uint8_t *have, size_t len,
		 uint64_t start)
{
	_cleanup_(cs_free_one) cs_insn *ci = cs_malloc(cs);
	size_t cap = 0, off = 0;

	if (!ci)
		return -ENOMEM;
	while (off < len) {
		size_t end = off;
		struct annview_insn *in;

		if (have && !have[off]) {
			while (end < len && !have[end])
				end++;
			if (!(in = insn_push(v, &cap)))
				return -ENOMEM;
			in->addr = start + off;
			in->size = end - off;
			snprintf(in->text, sizeof(in->text), "(not captured)");
			v->unknown_bytes += end - off;
			off = end;
			continue;
		}
		while (end < len && (!have || have[end]))
			end++;
		while (off < end) {
			const uint8_t *p = code + off;
			size_t n = end - off;
			uint64_t addr = start + off;

			if (!(in = insn_push(v, &cap)))
				return -ENOMEM;
			in->addr = start + off;
			if (cs_disasm_iter(cs, &p, &n, &addr, ci)) {
				in->size = ci->size;
				snprintf(in->text, sizeof(in->text), "%s%s%s", ci->mnemonic,
					 ci->op_str[0] ? " " : "", ci->op_str);
			} else {
				in->size = 1;
				snprintf(in->text, sizeof(in->text), ".byte 0x%02x", code[off]);
			}
			memcpy(in->bytes, code + off, in->size < 16 ? in->size : 16);
			off += in->size;
		}
	}
	return 0;
}

/* Index of the instruction holding addr, or ANNVIEW_NONE. */
static uint32_t insn_find(const struct annview *v, uint64_t addr)
{
	size_t lo = 0, hi = v->ninsns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->insns[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr - v->insns[lo - 1].addr >= v->insns[lo - 1].size)
		return ANNVIEW_NONE;
	return lo - 1;
}

static void place_counts(struct annview *v, const struct annot_addr *counts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t k = insn_find(v, counts[i].addr);

		if (k == ANNVIEW_NONE) {
			v->outside_self += counts[i].self;
			v->outside_below += counts[i].below;
			continue;
		}
		v->insns[k].self += counts[i].self;
		v->insns[k].below += counts[i].below;
		v->self += counts[i].self;
		v->below += counts[i].below;
	}
}

static int take_blocks(struct annview *v, const struct cfg *g)
{
	size_t nb = cfg_nblocks(g), ne = cfg_nedges(g), nback = 0;
	struct cfg_stats st;

	v->blocks = calloc(nb ? nb : 1, sizeof(*v->blocks));
	if (!v->blocks)
		return -ENOMEM;
	for (size_t i = 0; i < nb; i++) {
		const struct cfg_block *b = cfg_block_get(g, i);
		struct annview_block *x = &v->blocks[i];

		*x = (struct annview_block){.start = b->start,
					    .end = b->end,
					    .first_insn = ANNVIEW_NONE,
					    .loop_depth = b->loop_depth,
					    .flags = b->flags,
					    .term = cfg_term_name(b->term)};
		x->loop = b->flags & CFG_BLOCK_HEADER  ? (uint32_t)i
			  : b->loop_parent == CFG_NONE ? ANNVIEW_NONE
						       : b->loop_parent;
	}
	v->nblocks = nb;
	for (size_t k = 0; k < v->ninsns; k++) {
		struct annview_insn *in = &v->insns[k];
		int b = cfg_block_find(g, in->addr);

		if (b < 0 || in->addr >= v->blocks[b].end)
			continue;
		in->block = b;
		if (v->blocks[b].first_insn == ANNVIEW_NONE)
			v->blocks[b].first_insn = k;
		v->blocks[b].ninsns++;
		v->blocks[b].self += in->self;
		v->blocks[b].below += in->below;
	}
	for (size_t e = 0; e < ne; e++)
		nback += cfg_edge_get(g, e)->back;
	v->backs = calloc(nback ? nback : 1, sizeof(*v->backs));
	if (!v->backs)
		return -ENOMEM;
	for (size_t e = 0; e < ne; e++) {
		const struct cfg_edge *ed = cfg_edge_get(g, e);

		if (!ed->back)
			continue;
		v->backs[v->nbacks++] =
		    (struct annview_back){.from = ed->src,
					  .to = ed->dst,
					  .from_addr = cfg_block_get(g, ed->src)->last,
					  .to_addr = cfg_block_get(g, ed->dst)->start};
	}
	cfg_get_stats(g, &st);
	v->nloops = st.loops;
	return 0;
}

static int heat_cmp(const struct annview *v, uint32_t x, uint32_t y)
{
	const struct annview_block *a = &v->blocks[x], *b = &v->blocks[y];

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->below != b->below)
		return a->below > b->below ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* An insertion sort (qsort has no context argument): cfg caps a function at 8192 blocks, and
 * one has a few hundred at most in practice. */
static int hottest(struct annview *v)
{
	v->hot = malloc((v->nblocks ? v->nblocks : 1) * sizeof(*v->hot));
	if (!v->hot)
		return -ENOMEM;
	for (size_t i = 0; i < v->nblocks; i++) {
		uint32_t x = i;
		size_t j = i;

		while (j > 0 && heat_cmp(v, v->hot[j - 1], x) > 0) {
			v->hot[j] = v->hot[j - 1];
			j--;
		}
		v->hot[j] = x;
	}
	return 0;
}

static size_t known_prefix(const uint8_t *have, size_t len)
{
	size_t n = 0;

	if (!have)
		return len;
	while (n < len && have[n])
		n++;
	return n;
}

int annview_build(const uint8_t *code, const uint8_t *have, size_t len, uint64_t start,
		  uint64_t entry, const struct annot_addr *counts, size_t n, struct annview **ret)
{
	struct annview *v;
	struct cfg *g = NULL;
	size_t prefix;
	csh cs;
	int err;

	if (!code || !len || start + len < start || (n && !counts))
		return -EINVAL;
	if (len > ANNVIEW_MAX_BYTES)
		return -E2BIG;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENODEV;
	cs_option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	v = calloc(1, sizeof(*v));
	err = v ? sweep(v, cs, code, have, len, start) : -ENOMEM;
	cs_close(&cs);
	if (err < 0)
		goto fail;
	place_counts(v, counts, n);
	prefix = known_prefix(have, len);
	if (entry < start || entry - start >= prefix)
		v->cfg_err = -ENODATA;
	else
		v->cfg_err = cfg_build(code, prefix, start, entry,
				       &(struct cfg_limits){.flags = CFG_BAD_IS_EXIT}, &g);
	if (v->cfg_err >= 0) {
		v->cfg_err = 0;
		err = take_blocks(v, g);
		cfg_free(g);
		if (err < 0)
			goto fail;
	} else if (v->cfg_err == -ENOMEM) {
		err = -ENOMEM;
		goto fail;
	}
	err = hottest(v);
	if (err < 0)
		goto fail;
	*ret = v;
	return 0;
fail:
	annview_free(v);
	return err;
}
