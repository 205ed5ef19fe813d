// SPDX-License-Identifier: GPL-2.0-only
/* render_annotate.c: kprofctl annotate's output, from a kprof.AnnotateReply.
 *
 * Text: a header (the function, where its code came from and whether it changed, how its samples
 * add up to report's self count), the hottest blocks first, then the code block by block, each
 * instruction with its samples and share of the function's, loop headers and back edges marked.
 * With --lines (issue 32), each source line an instruction starts is shown above it (file:line,
 * the functions inlined there, and the line's text when the caller can read the file), as
 * objdump -S and perf annotate do.
 * JSON: every field of the reply, instruction bytes in hex. Strings from kprofd (or the target)
 * go through render.c's sanitizer and JSON encoder.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "render_annotate.h"

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *yes(bool b)
{
	return b ? "true" : "false";
}

static void json_u64s(FILE *f, const char *name, const uint32_t *v, size_t n)
{
	fprintf(f, ",\"%s\":[", name);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", v[i]);
	fputc(']', f);
}

static void annotate_blocks_json(FILE *f, const Kprof__AnnotateReply *r)
{
	fputs(",\"blocks\":[", f);
	for (size_t i = 0; i < r->n_blocks; i++) {
		const Kprof__AnnotateBlock *b = r->blocks[i];

		fprintf(f,
			"%s{\"index\":%zu,\"start\":%" PRIu64 ",\"end\":%" PRIu64
			",\"self\":%" PRIu64 ",\"below\":%" PRIu64
			",\"insns\":%u,\"loop_depth\":%u,\"entry\":%s,\"loop_header\":%s"
			",\"back_edge_source\":%s,\"loop\":%d,\"term\":",
			i ? "," : "", i, b->start, b->end, b->self, b->below, b->insns,
			b->loop_depth, yes(b->entry), yes(b->loop_header), yes(b->back_edge_source),
			b->loop);
		render_json_string(f, b->term);
		fputc('}', f);
	}
}

static void annotate_edges_json(FILE *f, const Kprof__AnnotateReply *r)
{
	fputs("],\"back_edges\":[", f);
	for (size_t i = 0; i < r->n_back_edges; i++) {
		const Kprof__AnnotateBackEdge *e = r->back_edges[i];

		fprintf(f,
			"%s{\"from_block\":%u,\"to_block\":%u,\"from_address\":%" PRIu64
			",\"to_address\":%" PRIu64 "}",
			i ? "," : "", e->from_block, e->to_block, e->from_address, e->to_address);
	}
}

static void annotate_insns_json(FILE *f, const Kprof__AnnotateReply *r)
{
	fputs("],\"insns\":[", f);
	for (size_t i = 0; i < r->n_insns; i++) {
		const Kprof__AnnotateInsn *in = r->insns[i];

		fprintf(f,
			"%s{\"address\":%" PRIu64 ",\"size\":%u,\"self\":%" PRIu64
			",\"below\":%" PRIu64 ",\"block\":%d,\"bytes\":\"",
			i ? "," : "", in->address, in->size, in->self, in->below, in->block);
		for (size_t k = 0; k < in->code.len; k++)
			fprintf(f, "%02x", in->code.data[k]);
		fputs("\",\"text\":", f);
		render_json_string(f, in->text);
		render_json_lines(f, "lines", in->lines, in->n_lines);
		fputc('}', f);
	}
}

static void annotate_json(FILE *f, const Kprof__AnnotateReply *r)
{
	render_json_open_target(f, r->target);
	fputs(",\"function\":", f);
	render_json_string(f, r->function);
	fputs(",\"module\":", f);
	render_json_string(f, r->module);
	fprintf(f,
		",\"kind\":\"%s\",\"start\":%" PRIu64 ",\"size\":%" PRIu64
		",\"extent_known\":%s,\"report_self\":%" PRIu64 ",\"self\":%" PRIu64
		",\"outside\":%" PRIu64 ",\"below\":%" PRIu64 ",\"captured_bytes\":%" PRIu64
		",\"read_now_bytes\":%" PRIu64 ",\"compared\":%s,\"changed_bytes\":%" PRIu64
		",\"first_change\":%" PRIu64 ",\"breakpoint_bytes\":%" PRIu64
		",\"same_name\":%u,\"dropped\":%" PRIu64 ",\"memory\":%" PRIu64
		",\"sampled_addresses\":%" PRIu64 ",\"loops\":%u,\"cfg_error\":",
		render_kind(r->kind), r->start, r->size, yes(r->extent_known), r->report_self,
		r->self, r->outside, r->below, r->captured_bytes, r->read_now_bytes,
		yes(r->compared), r->changed_bytes, r->first_change, r->breakpoint_bytes,
		r->same_name, r->dropped, r->memory, r->sampled_addresses, r->loops);
	render_json_string(f, r->cfg_error);
	json_u64s(f, "hot_blocks", r->hot_blocks, r->n_hot_blocks);
	annotate_blocks_json(f, r);
	annotate_edges_json(f, r);
	annotate_insns_json(f, r);
	fputs("]}\n", f);
}

static void header(FILE *f, const Kprof__AnnotateReply *r)
{
	if (r->target)
		render_target_line(f, r->target);
	render_text(f, r->function);
	fputs(" [", f);
	render_text(f, r->module);
	fprintf(f, "] %s, 0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 " bytes%s)\n",
		render_kind(r->kind), r->start, r->start + r->size, r->size,
		r->extent_known ? "" : "; its size is unknown: shown from its lowest sample on");
	fprintf(f, "Samples: %" PRIu64 " self (report: %" PRIu64 ")", r->self + r->outside,
		r->report_self);
	if (r->outside)
		fprintf(f, ", %" PRIu64 " of them at addresses outside the code shown", r->outside);
	if (r->below)
		fprintf(f,
			"; %" PRIu64 " more with this function as the user leaf, their self in the "
			"kernel or in kprof's probes",
			r->below);
	if (r->self + r->outside != r->report_self)
		fprintf(f,
			"\n  (the counts differ: %" PRIu64 " sample%s of this target were not kept "
			"per instruction, the store is full)",
			r->dropped, render_plural(r->dropped));
	fputc('\n', f);
	fprintf(f, "Code: %" PRIu64 " byte%s as read when the function was first sampled",
		r->captured_bytes, render_plural(r->captured_bytes));
	if (r->read_now_bytes)
		fprintf(f, ", %" PRIu64 " read now (not kept at its samples)", r->read_now_bytes);
	if (r->changed_bytes)
		fprintf(f,
			"\n  CHANGED since it was sampled: %" PRIu64 " byte%s differ now, the "
			"first at 0x%" PRIx64 " (shown: the code as first sampled)",
			r->changed_bytes, render_plural(r->changed_bytes), r->first_change);
	else if (r->compared)
		fputs("; the same in the process now", f);
	else
		fputs("; not compared (the process is gone)", f);
	if (r->breakpoint_bytes)
		fprintf(f, "; %" PRIu64 " byte%s differ by a probe's int3 (shown without it)",
			r->breakpoint_bytes, render_plural(r->breakpoint_bytes));
	fputc('\n', f);
	if (r->same_name)
		fprintf(f, "Note: %u other sampled function%s %s this name; the hottest is shown\n",
			r->same_name, render_plural(r->same_name),
			r->same_name == 1 ? "has" : "have");
	if (r->cfg_error && *r->cfg_error) {
		fputs("CFG: none (", f);
		render_text(f, r->cfg_error);
		fputs(")\n", f);
	} else {
		fprintf(f, "CFG: %zu block%s, %u loop%s, %zu back edge%s\n", r->n_blocks,
			render_plural(r->n_blocks), r->loops, render_plural(r->loops),
			r->n_back_edges, render_plural(r->n_back_edges));
	}
}

static void hot_blocks(FILE *f, const Kprof__AnnotateReply *r, uint32_t top)
{
	uint64_t whole = r->self + r->outside;
	size_t shown = 0;

	int w = 9; /* "ADDRESSES", or as wide as the widest range shown */
	char addr[64];

	if (!r->n_blocks)
		return;
	for (size_t i = 0; i < r->n_hot_blocks && (!top || i < top); i++)
		if (r->hot_blocks[i] < r->n_blocks) {
			int n = snprintf(addr, sizeof(addr), "0x%" PRIx64 "-0x%" PRIx64,
					 r->blocks[r->hot_blocks[i]]->start,
					 r->blocks[r->hot_blocks[i]]->end);
			w = n > w ? n : w;
		}
	fprintf(f, "\nHottest blocks:\n    SELF       %%  BLOCK  %-*s  INSNS  LOOP\n", w,
		"ADDRESSES");
	for (size_t i = 0; i < r->n_hot_blocks && (!top || shown < top); i++) {
		uint32_t k = r->hot_blocks[i];
		const Kprof__AnnotateBlock *b;

		if (k >= r->n_blocks)
			continue;
		b = r->blocks[k];
		if (!b->self && !b->below)
			break;
		snprintf(addr, sizeof(addr), "0x%" PRIx64 "-0x%" PRIx64, b->start, b->end);
		fprintf(f, "%8" PRIu64 "  %5.1f%%  #%-4u  %-*s  %5u  ", b->self,
			share(b->self, whole), k, w, addr, b->insns);
		if (b->loop_depth)
			fprintf(f, "depth %u, %s #%d%s\n", b->loop_depth,
				b->loop_header ? "header of loop" : "in loop", b->loop,
				b->back_edge_source ? ", back edge" : "");
		else
			fputs("-\n", f);
		shown++;
	}
}

static void block_line(FILE *f, const Kprof__AnnotateReply *r, int32_t k)
{
	const Kprof__AnnotateBlock *b;

	if (k < 0 || (size_t)k >= r->n_blocks) {
		fputs("                         ; not reached by the CFG from the entry\n", f);
		return;
	}
	b = r->blocks[k];
	fprintf(f, "                         ; block #%d%s: %" PRIu64 " sample%s (%.1f%%)", k,
		b->entry ? " (entry)" : "", b->self, render_plural(b->self),
		share(b->self, r->self + r->outside));
	if (b->loop_header)
		fprintf(f, ", LOOP HEADER (depth %u)", b->loop_depth);
	else if (b->loop_depth)
		fprintf(f, ", in loop #%d (depth %u)", b->loop, b->loop_depth);
	fputc('\n', f);
}

/* annotate --lines: the source line an instruction starts (its innermost frame's), with the
 * functions inlined there, and the line's text when src has it. */
static void source_line(FILE *f, const Kprof__AnnotateInsn *in, annotate_src_fn src, void *ud)
{
	const Kprof__SavedLine *l = in->lines[0];
	const char *text = src ? src(l->file, l->line, ud) : NULL;

	fputs("                         : ", f);
	render_text(f, l->file);
	fprintf(f, ":%u", l->line);
	if (l->function[0])
		fputs("  ", f);
	render_text(f, l->function);
	for (size_t k = 1; k < in->n_lines; k++) {
		fputs(k == 1 ? " (inlined into " : ", into ", f);
		render_text(f, in->lines[k]->function);
		fprintf(f, " at line %u", in->lines[k]->line);
	}
	fputs(in->n_lines > 1 ? ")\n" : "\n", f);
	if (text) {
		fputs("                         :   ", f);
		render_sanitize(f, text, strlen(text), 160);
		fputc('\n', f);
	}
}

/* Whether a and b start the same source line (file, line, functions inlined). */
static bool same_line(const Kprof__AnnotateInsn *a, const Kprof__AnnotateInsn *b)
{
	if (!a || a->n_lines != b->n_lines)
		return false;
	for (size_t k = 0; k < a->n_lines; k++)
		if (a->lines[k]->line != b->lines[k]->line ||
		    strcmp(a->lines[k]->file, b->lines[k]->file))
			return false;
	return true;
}

static void code(FILE *f, const Kprof__AnnotateReply *r, annotate_src_fn src, void *ud)
{
	uint64_t whole = r->self + r->outside;
	const Kprof__AnnotateInsn *prev = NULL;
	int32_t cur = -2;

	fputs("\n    SELF       %  ADDRESS           INSTRUCTION\n", f);
	for (size_t i = 0; i < r->n_insns; i++) {
		const Kprof__AnnotateInsn *in = r->insns[i];

		if (in->block != cur) {
			cur = in->block;
			block_line(f, r, cur);
			prev = NULL; /* the line again under a new block line */
		}
		if (in->n_lines && in->lines[0]->line && !same_line(prev, in))
			source_line(f, in, src, ud);
		prev = in;
		if (in->self)
			fprintf(f, "%8" PRIu64 "  %5.1f%%  ", in->self, share(in->self, whole));
		else
			fputs("       .       .  ", f);
		fprintf(f, "%-16" PRIx64 "  ", in->address);
		render_text(f, in->text);
		for (size_t e = 0; e < r->n_back_edges; e++)
			if (r->back_edges[e]->from_address == in->address)
				fprintf(f, "   <- back edge to #%u (0x%" PRIx64 ")",
					r->back_edges[e]->to_block, r->back_edges[e]->to_address);
		if (in->below)
			fprintf(f, "   [+%" PRIu64 " below]", in->below);
		fputc('\n', f);
	}
}

void render_annotate(FILE *f, const Kprof__AnnotateReply *r, bool json, uint32_t top)
{
	render_annotate_src(f, r, json, top, NULL, NULL);
}

void render_annotate_src(FILE *f, const Kprof__AnnotateReply *r, bool json, uint32_t top,
			 annotate_src_fn src, void *ud)
{
	if (json) {
		annotate_json(f, r);
		return;
	}
	header(f, r);
	if (r->lines)
		fprintf(f, "source lines: %" PRIu64 " of %" PRIu64 " instructions%s\n",
			r->lines->resolved, r->lines->asked,
			r->lines->failed ? " (some not available: see export's comments)" : "");
	hot_blocks(f, r, top);
	code(f, r, src, ud);
}
