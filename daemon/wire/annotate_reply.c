// SPDX-License-Identifier: GPL-2.0-only
/* annotate_reply.c: an annotation (annotate.c, annview.h) as a kprof.AnnotateReply. The reply
 * points into the annotation's own strings and arrays; only the message arrays are allocated
 * here, in one place each, and freed by annotate_msg_release.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/annotate_reply.h"
#include "wire/target_pb.h"
#include "kprof/cfg.h"

static void fill_insns(const struct annview *v, struct annotate_msg *m)
{
	for (size_t i = 0; i < v->ninsns; i++) {
		const struct annview_insn *in = &v->insns[i];
		Kprof__AnnotateInsn *x = &m->iv[i];

		kprof__annotate_insn__init(x);
		x->address = in->addr;
		x->size = in->size;
		x->text = (char *)in->text;
		x->self = in->self;
		x->below = in->below;
		x->block = in->block == ANNVIEW_NONE ? -1 : (int32_t)in->block;
		if (strcmp(in->text, "(not captured)")) {
			x->code.data = (uint8_t *)in->bytes;
			x->code.len = in->size < 16 ? in->size : 16;
		}
		m->ip[i] = x;
	}
}

static void fill_blocks(const struct annview *v, struct annotate_msg *m)
{
	for (size_t i = 0; i < v->nblocks; i++) {
		const struct annview_block *b = &v->blocks[i];
		Kprof__AnnotateBlock *x = &m->bv[i];

		kprof__annotate_block__init(x);
		x->start = b->start;
		x->end = b->end;
		x->self = b->self;
		x->below = b->below;
		x->insns = b->ninsns;
		x->loop_depth = b->loop_depth;
		x->entry = b->flags & CFG_BLOCK_ENTRY;
		x->loop_header = b->flags & CFG_BLOCK_HEADER;
		x->back_edge_source = b->flags & CFG_BLOCK_BACK_SRC;
		x->loop = b->loop == ANNVIEW_NONE ? -1 : (int32_t)b->loop;
		x->term = (char *)b->term;
		m->bp[i] = x;
		m->hot[i] = v->hot[i];
	}
	for (size_t i = 0; i < v->nbacks; i++) {
		Kprof__AnnotateBackEdge *x = &m->ev[i];

		kprof__annotate_back_edge__init(x);
		x->from_block = v->backs[i].from;
		x->to_block = v->backs[i].to;
		x->from_address = v->backs[i].from_addr;
		x->to_address = v->backs[i].to_addr;
		m->ep[i] = x;
	}
}

int annotate_reply(const struct annotate_result *res, struct annotate_msg *m)
{
	const struct annview *v = res->view;
	Kprof__AnnotateReply *r = &m->r;

	memset(m, 0, sizeof(*m));
	kprof__annotate_reply__init(r);
	m->iv = calloc(v->ninsns + 1, sizeof(*m->iv));
	m->ip = calloc(v->ninsns + 1, sizeof(*m->ip));
	m->bv = calloc(v->nblocks + 1, sizeof(*m->bv));
	m->bp = calloc(v->nblocks + 1, sizeof(*m->bp));
	m->hot = calloc(v->nblocks + 1, sizeof(*m->hot));
	m->ev = calloc(v->nbacks + 1, sizeof(*m->ev));
	m->ep = calloc(v->nbacks + 1, sizeof(*m->ep));
	if (!m->iv || !m->ip || !m->bv || !m->bp || !m->hot || !m->ev || !m->ep) {
		annotate_msg_release(m);
		return -ENOMEM;
	}
	fill_insns(v, m);
	fill_blocks(v, m);
	r->function = (char *)res->f->name;
	r->module = (char *)res->f->module;
	r->kind = target_pb_kind(res->f->kind);
	r->start = res->lo;
	r->size = res->hi - res->lo;
	r->extent_known = res->extent_known;
	r->report_self = res->f->self;
	r->self = v->self;
	r->outside = v->outside_self;
	r->below = v->below + v->outside_below;
	r->n_insns = v->ninsns;
	r->insns = m->ip;
	r->n_blocks = v->nblocks;
	r->blocks = m->bp;
	r->n_hot_blocks = v->nblocks;
	r->hot_blocks = m->hot;
	r->n_back_edges = v->nbacks;
	r->back_edges = m->ep;
	r->loops = v->nloops;
	if (v->cfg_err)
		snprintf(m->cfg_error, sizeof(m->cfg_error), "%s",
			 v->cfg_err == -ENODATA ? "the entry's bytes are not known"
						: strerror(-v->cfg_err));
	r->cfg_error = m->cfg_error;
	r->captured_bytes = res->captured;
	r->read_now_bytes = res->read_now;
	r->compared = res->compared;
	r->changed_bytes = res->changed;
	r->first_change = res->first_change;
	r->breakpoint_bytes = res->breakpoints;
	r->same_name = res->others;
	r->dropped = res->st.dropped;
	r->memory = res->st.memory;
	r->sampled_addresses = res->st.addrs;
	return 0;
}

void annotate_msg_release(struct annotate_msg *m)
{
	free(m->iv);
	free(m->ip);
	free(m->bv);
	free(m->bp);
	free(m->hot);
	free(m->ev);
	free(m->ep);
	memset(m, 0, sizeof(*m));
}
