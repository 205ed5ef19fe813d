// SPDX-License-Identifier: GPL-2.0-only
/* render_paths.c: kprofctl's view of a path trace (`paths`): the multi-iteration sequences and
 * the Ball-Larus paths of one function, each path as its blocks, and for code in anonymous
 * memory the branches, loops and turns of the hardware-breakpoint tracer; text and JSON. The
 * event counts and the structural profile are added by render_spp.c. Apart from render.c
 * because it is the one view that knows the path tracer's reply.
 */
#include "render_paths.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "render.h"
#include "render_internal.h"

static const char *edge_name(Kprof__PathEdge e)
{
	switch (e) {
	case KPROF__PATH_EDGE__PATH_EDGE_FALL:
		return "fall";
	case KPROF__PATH_EDGE__PATH_EDGE_TAKEN:
		return "taken";
	case KPROF__PATH_EDGE__PATH_EDGE_JUMP:
		return "jump";
	case KPROF__PATH_EDGE__PATH_EDGE_EXIT:
		return "exit";
	case KPROF__PATH_EDGE__PATH_EDGE_BACK:
		return "back";
	default:
		return "?";
	}
}

static const Kprof__PathInfo *path_find(const Kprof__PathsReply *r, uint64_t id)
{
	for (size_t i = 0; i < r->n_paths; i++)
		if (r->paths[i]->id == id)
			return r->paths[i];
	return NULL;
}

static uint64_t level_sum(const Kprof__PathsReply *r, size_t len)
{
	return len >= 1 && len <= r->n_level_sums ? r->level_sums[len - 1] : 0;
}

/* Anonymous code: the branches, the followed loops, what was not covered. */
static void paths_hw_json(FILE *f, const Kprof__PathsReply *r)
{
	fprintf(f, ",\"hw\":%s,\"hw_stray\":%" PRIu64 ",\"hw_turn\":", r->hw ? "true" : "false",
		r->hw_stray);
	render_json_string(f, r->hw_turn ? r->hw_turn : "");
	fputs(",\"hw_stopped\":", f);
	render_json_string(f, r->hw_stopped ? r->hw_stopped : "");
	fputs(",\"branches\":[", f);
	for (size_t i = 0; i < r->n_branches; i++) {
		const Kprof__BranchCount *b = r->branches[i];

		fprintf(f,
			"%s{\"block\":%u,\"address\":%" PRIu64
			",\"cond\":\"%s\",\"taken_to\":%" PRIu64 ",\"taken\":%" PRIu64
			",\"not_taken\":%" PRIu64 ",\"covered_ms\":%.1f"
			",\"loop\":%u}",
			i ? "," : "", b->block, b->address, b->cond ? b->cond : "?", b->taken_to,
			b->taken, b->not_taken, b->covered_ns / 1e6, b->loop);
	}
	fputs("],\"hw_loops\":[", f);
	for (size_t i = 0; i < r->n_hw_loops; i++) {
		const Kprof__HwLoop *l = r->hw_loops[i];

		fprintf(f,
			"%s{\"header\":%u,\"branches\":%u,\"activations\":%" PRIu64
			",\"covered_ms\":%.1f,\"blocks\":[",
			i ? "," : "", l->header, l->branches, l->activations, l->covered_ns / 1e6);
		for (size_t j = 0; j < l->n_blocks; j++)
			fprintf(f, "%s%u", j ? "," : "", l->blocks[j]);
		fputs("],\"assumed\":[", f);
		for (size_t j = 0; j < l->n_assumed; j++)
			fprintf(f, "%s%" PRIu64, j ? "," : "", l->assumed[j]);
		fputs("]}", f);
	}
	fputs("],\"not_covered\":[", f);
	for (size_t i = 0; i < r->n_not_covered; i++) {
		fputs(i ? "," : "", f);
		render_json_string(f, r->not_covered[i]);
	}
	fputc(']', f);
}

/* A --structural trace of anonymous code: its turns are the structure graphs' (render_spp.c). */
static bool hw_structural(const Kprof__PathsReply *r)
{
	return r->hw && r->spp && r->spp->hw;
}

static void paths_hw_text(FILE *f, const Kprof__PathsReply *r)
{
	if (!r->hw)
		return;
	if (hw_structural(r))
		fputs("\nThe debug registers went to the structure graphs in turn (the structural "
		      "profile below), not to\nbranch counts and k-iteration paths: trace without "
		      "--structural for those.\n",
		      f);
	else
		fputs("\nBranches (hardware breakpoints on anonymous code; exact over the time "
		      "covered):\n"
		      "  BLOCK  ADDRESS             COND       TAKEN   NOT TAKEN  COVERED  LOOP\n",
		      f);
	for (size_t i = 0; i < r->n_branches; i++) {
		const Kprof__BranchCount *b = r->branches[i];

		fprintf(
		    f, "  B%-4u 0x%-16" PRIx64 "  %-4s %10" PRIu64 "  %10" PRIu64 "  %6.2fs  B%u\n",
		    b->block, b->address, b->cond ? b->cond : "?", b->taken, b->not_taken,
		    b->covered_ns / 1e9, b->loop);
	}
	for (size_t i = 0; i < r->n_hw_loops; i++) {
		const Kprof__HwLoop *l = r->hw_loops[i];

		fprintf(f,
			"Loop at B%u: %u branch%s followed, %" PRIu64
			" activation%s over %.2f s: its iterations are the paths below\n",
			l->header, l->branches, l->branches == 1 ? "" : "es", l->activations,
			render_plural(l->activations), l->covered_ns / 1e9);
		if (l->n_assumed) {
			fprintf(f,
				"  assuming %zu branch%s went the one way %s went while counted "
				"(exact if %s kept to it):",
				l->n_assumed, l->n_assumed == 1 ? "" : "es",
				l->n_assumed == 1 ? "it" : "each",
				l->n_assumed == 1 ? "it" : "they");
			for (size_t j = 0; j < l->n_assumed; j++)
				fprintf(f, " 0x%" PRIx64, l->assumed[j]);
			fputc('\n', f);
		}
	}
	if (r->hw_turn && r->hw_turn[0]) {
		fputs("Now: ", f);
		put_text(f, r->hw_turn, 0);
		fputc('\n', f);
	}
	for (size_t i = 0; i < r->n_not_covered; i++) {
		fputs("Not covered: ", f);
		put_text(f, r->not_covered[i], 0);
		fputc('\n', f);
	}
	if (r->hw_stopped && r->hw_stopped[0]) {
		fputs("Stopped early: ", f);
		put_text(f, r->hw_stopped, 0);
		fputc('\n', f);
	}
}

/* The scalar fields, up to the open level_sums array. */
static void paths_scalars_json(FILE *f, const Kprof__PathsReply *r)
{
	render_json_open_target(f, r->target);
	fputs(",\"function\":", f);
	render_json_string(f, r->function);
	fprintf(f, ",\"start\":%" PRIu64 ",\"size\":%" PRIu64 ",\"k\":%u,\"state\":\"%s\"",
		r->start, r->size, r->k,
		r->state == KPROF__PATHS_STATE__PATHS_STATE_TRACING ? "tracing" : "done");
	fputs(",\"end_reason\":", f);
	render_json_string(f, r->end_reason);
	fprintf(f,
		",\"num_paths\":%" PRIu64 ",\"loops\":%u,\"back_edges\":%u,\"probes\":%u"
		",\"activations\":%" PRIu64 ",\"path_events\":%" PRIu64 ",\"budget\":%" PRIu64
		",\"duration_ms\":%u,\"traced_ms\":%.1f,\"probe_hits\":%" PRIu64
		",\"slowdown\":%.3f,\"kernel_share_before\":%.4f,\"kernel_share_during\":%.4f"
		",\"traced_cpu_ms\":%" PRIu64 ",\"ksf_nodes\":%" PRIu64 ",\"ipf_nodes\":%" PRIu64
		",\"pruned_items\":%" PRIu64 ",\"max_error\":%" PRIu64 ",\"lost_events\":%" PRIu64
		",\"resyncs\":%" PRIu64 ",\"stray_hits\":%" PRIu64 ",\"aborted\":%" PRIu64
		",\"paths_total\":%u,\"sequences_total\":%u",
		r->num_paths, r->loops, r->back_edges, r->probes, r->activations, r->path_events,
		r->budget, r->duration_ms, r->traced_ns / 1e6, r->probe_hits, r->slowdown,
		r->kernel_share_before, r->kernel_share_during, r->traced_cpu_ms, r->ksf_nodes,
		r->ipf_nodes, r->pruned_items, r->max_error, r->lost_events, r->resyncs,
		r->stray_hits, r->aborted, r->paths_total, r->sequences_total);
	fprintf(f,
		",\"hit_cost_ns\":%" PRIu64 ",\"hits_per_s\":%.1f,\"max_slowdown\":%.2f"
		",\"max_slowdown_default\":%s,\"cost_kind\":",
		r->hit_cost_ns, r->hits_per_s, r->max_slowdown,
		r->max_slowdown_default ? "true" : "false");
	render_json_string(f, r->cost_kind ? r->cost_kind : "");
	fprintf(f,
		",\"hit_cost_calibrated_ns\":%" PRIu64
		",\"ref_share_before\":%.4f,\"ref_share_during\":%.4f",
		r->hit_cost_calibrated_ns, r->ref_share_before, r->ref_share_during);
	fputs(",\"cost_ref\":", f);
	render_json_string(f, r->cost_ref ? r->cost_ref : "");
	fprintf(f,
		",\"duty\":%.4f,\"budget_offs\":%" PRIu64 ",\"budget_off\":%s"
		",\"budget_wait_cpu_s\":%.3f,\"hidden_hits\":%" PRIu64,
		r->duty, r->budget_offs, r->budget_off ? "true" : "false", r->budget_wait_cpu_s,
		r->hidden_hits);
	fputs(",\"level_sums\":[", f);
	for (size_t i = 0; i < r->n_level_sums; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", r->level_sums[i]);
}

static void paths_blocks_json(FILE *f, const Kprof__PathsReply *r)
{
	fputs("],\"blocks\":[", f);
	for (size_t i = 0; i < r->n_blocks; i++) {
		const Kprof__PathBlock *b = r->blocks[i];

		fprintf(f,
			"%s{\"index\":%zu,\"start\":%" PRIu64 ",\"end\":%" PRIu64
			",\"insns\":%u,\"entry\":%s,\"loop_header\":%s,\"loop_depth\":%u,\"term\":",
			i ? "," : "", i, b->start, b->end, b->insns, b->entry ? "true" : "false",
			b->loop_header ? "true" : "false", b->loop_depth);
		render_json_string(f, b->term);
		fputc('}', f);
	}
}

static void paths_list_json(FILE *f, const Kprof__PathsReply *r)
{
	fputs("],\"paths\":[", f);
	for (size_t i = 0; i < r->n_paths; i++) {
		const Kprof__PathInfo *p = r->paths[i];

		fprintf(f,
			"%s{\"id\":%" PRIu64 ",\"count\":%" PRIu64
			",\"percent\":%.4f,\"for_sequences\":%s,\"blocks\":[",
			i ? "," : "", p->id, p->count, pct(p->count, level_sum(r, 1)),
			p->for_sequences ? "true" : "false");
		for (size_t j = 0; j < p->n_steps; j++) {
			const Kprof__PathStep *s = p->steps[j];
			const Kprof__PathBlock *b =
			    s->block < r->n_blocks ? r->blocks[s->block] : NULL;

			fprintf(f,
				"%s{\"block\":%u,\"start\":%" PRIu64 ",\"end\":%" PRIu64
				",\"edge\":\"%s\"}",
				j ? "," : "", s->block, b ? b->start : 0, b ? b->end : 0,
				edge_name(s->edge));
		}
		fputs("]}", f);
	}
}

static void paths_edges_json(FILE *f, const Kprof__PathsReply *r)
{
	fprintf(f, "],\"edge_profile\":%s,\"edges\":[", r->edge_profile ? "true" : "false");
	for (size_t i = 0; i < r->n_edges; i++) {
		const Kprof__EdgeCount *e = r->edges[i];

		fprintf(f, "%s{\"from\":%u,", i ? "," : "", e->from);
		if (e->exit)
			fputs("\"to\":null,", f);
		else
			fprintf(f, "\"to\":%u,", e->to);
		fprintf(f, "\"exit\":%s,\"kind\":\"%s\",\"count\":%" PRIu64 "}",
			e->exit ? "true" : "false", edge_name(e->kind), e->count);
	}
}

/* Sequences of every length: the paths themselves (length 1), then 2..k. */
static void paths_sequences_json(FILE *f, const Kprof__PathsReply *r)
{
	bool first = true;

	fputs("],\"sequences\":[", f);
	for (size_t i = 0; i < r->n_paths; i++, first = false)
		fprintf(f, "%s{\"count\":%" PRIu64 ",\"percent\":%.4f,\"paths\":[%" PRIu64 "]}",
			first ? "" : ",", r->paths[i]->count,
			pct(r->paths[i]->count, level_sum(r, 1)), r->paths[i]->id);
	for (size_t i = 0; i < r->n_sequences; i++, first = false) {
		const Kprof__PathSeq *q = r->sequences[i];

		fprintf(f, "%s{\"count\":%" PRIu64 ",\"percent\":%.4f,\"paths\":[",
			first ? "" : ",", q->count, pct(q->count, level_sum(r, q->n_ids)));
		for (size_t j = 0; j < q->n_ids; j++)
			fprintf(f, "%s%" PRIu64, j ? "," : "", q->ids[j]);
		fputs("]}", f);
	}
	fputc(']', f);
}

/* The paths object; without its closing brace when !close (render_spp.c appends fields). */
static void paths_json(FILE *f, const Kprof__PathsReply *r, bool close)
{
	paths_scalars_json(f, r);
	paths_blocks_json(f, r);
	paths_list_json(f, r);
	paths_edges_json(f, r);
	paths_sequences_json(f, r);
	paths_hw_json(f, r);
	if (close)
		fputs("}\n", f);
}

void render_paths_json_open(FILE *f, const Kprof__PathsReply *r)
{
	paths_json(f, r, false);
}

static void put_path(FILE *f, const Kprof__PathInfo *p)
{
	if (!p) {
		fputs("?", f);
		return;
	}
	for (size_t j = 0; j < p->n_steps; j++)
		fprintf(f, "%sB%u:%s", j ? " " : "", p->steps[j]->block,
			edge_name(p->steps[j]->edge));
}

/* The head of a path trace in text: the target, the function, how long it was traced, what
 * the probes saw. */
static void paths_head_text(FILE *f, const Kprof__PathsReply *r)
{
	if (r->target)
		render_target_line(f, r->target);
	fputs("Paths of ", f);
	put_text(f, r->function, 0);
	fprintf(f, " at 0x%" PRIx64 "-0x%" PRIx64 ": %zu block%s, %u loop%s, ", r->start,
		r->start + r->size, r->n_blocks, render_plural(r->n_blocks), r->loops,
		render_plural(r->loops));
	if (r->edge_profile)
		fputs("too many acyclic paths to number: edge profile\n", f);
	else
		fprintf(f, "%" PRIu64 " acyclic path%s; k = %u\n", r->num_paths,
			render_plural(r->num_paths), r->k);
	fprintf(f, "%s %.2f s",
		r->state == KPROF__PATHS_STATE__PATHS_STATE_TRACING ? "Tracing for" : "Traced",
		r->traced_ns / 1e9);
	if (r->state != KPROF__PATHS_STATE__PATHS_STATE_TRACING) {
		fputs(" (ended: ", f);
		put_text(f, r->end_reason && *r->end_reason ? r->end_reason : "?", 0);
		fputc(')', f);
	}
	fprintf(f,
		", %u probe%s: %" PRIu64 " activation%s, %" PRIu64 " path%s, %" PRIu64
		" probe hit%s\n",
		r->probes, render_plural(r->probes), r->activations, render_plural(r->activations),
		r->path_events, render_plural(r->path_events), r->probe_hits,
		render_plural(r->probe_hits));
}

/* What the budget did: the probes' duty (the part of the time the counts cover). */
static void paths_budget_text(FILE *f, const Kprof__PathsReply *r)
{
	if (r->max_slowdown <= 0) {
		fputs(
		    "Budget: none (--max-slowdown 0, or kprofd's probe_slowdown_pct 0): the probes "
		    "stayed in all the time\n",
		    f);
		return;
	}
	fprintf(f, "Budget: at most %.2fx slower over the trace (%s)", r->max_slowdown,
		r->max_slowdown_default ? "kprofd's default; --max-slowdown X for more, 0 for none"
					: "--max-slowdown");
	if (!r->budget_offs) {
		fputs(": kept with the probes in all the time\n", f);
		return;
	}
	fprintf(f,
		": the probes went off %" PRIu64 " time%s to keep it, and back once the target's "
		"work had paid for them: in %.1f%% of the time traced, which is what the counts "
		"cover (the budget's cost in coverage)",
		r->budget_offs, render_plural(r->budget_offs), 100.0 * r->duty);
	if (r->budget_off && r->state == KPROF__PATHS_STATE__PATHS_STATE_TRACING)
		fprintf(f, "; off now, back after about %.2f s more of the target's CPU time",
			r->budget_wait_cpu_s);
	else if (r->budget_off)
		fputs("; off at the end", f);
	fputc('\n', f);
	if (r->slowdown > r->max_slowdown * 1.05)
		fputs("Over the budget: one stretch of probes (for uprobes with the second the "
		      "kernel takes to remove them) cost more than the time traced paid for; a "
		      "longer --duration evens it out\n",
		      f);
}

/* What tracing cost the target, and what the counts miss (lost events, stray hits, the
 * k-SF bound). */
static void paths_cost_text(FILE *f, const Kprof__PathsReply *r)
{
	if (r->slowdown > 0) {
		fprintf(f, "Cost: %" PRIu64 " probe hit%s (%.0f/s)", r->probe_hits,
			render_plural(r->probe_hits), r->hits_per_s);
		if (r->hidden_hits)
			fprintf(f, " and about %" PRIu64 " more while the kernel removed them",
				r->hidden_hits);
		if (r->hit_cost_ns > r->hit_cost_calibrated_ns && r->hit_cost_calibrated_ns)
			fprintf(f,
				", %.1f us of CPU time each (a %s, measured in the target: %s fell "
				"from %.1f%% to %.1f%% of its samples; %.1f us calibrated on this "
				"host)",
				r->hit_cost_ns / 1000.0, r->cost_kind,
				r->cost_ref ? r->cost_ref : "?", 100 * r->ref_share_before,
				100 * r->ref_share_during, r->hit_cost_calibrated_ns / 1000.0);
		else
			fprintf(f, ", %.1f us of CPU time each (a %s, measured on this host)",
				r->hit_cost_ns / 1000.0, r->cost_kind);
		fprintf(f, ": %s%.2fx slower over the trace (CPU time per unit of work)\n",
			r->slowdown >= 100 ? "at least " : "about ", r->slowdown);
	} else if (r->hit_cost_ns == 0 && r->cost_kind && *r->cost_kind) {
		fprintf(f,
			"Cost: %" PRIu64 " probe hit%s (%.0f/s); what a %s hit costs could not be "
			"measured on this host (see kprofd's log): no slowdown estimate\n",
			r->probe_hits, render_plural(r->probe_hits), r->hits_per_s, r->cost_kind);
	} else {
		fputs("Cost: the target used too little CPU time while traced (under 0.5 s) to "
		      "estimate the slowdown\n",
		      f);
	}
	paths_budget_text(f, r);
	if (r->lost_events || r->resyncs || r->aborted)
		fprintf(f,
			"Lost: %" PRIu64 " event%s, %" PRIu64 " thread resync%s, %" PRIu64
			" activation%s left without a known exit\n",
			r->lost_events, render_plural(r->lost_events), r->resyncs,
			render_plural(r->resyncs), r->aborted, render_plural(r->aborted));
	if (r->stray_hits)
		fprintf(f,
			"Not counted: %" PRIu64
			" probe hit%s of activations already running when the "
			"probes came (or entered in a way the CFG does not show)\n",
			r->stray_hits, render_plural(r->stray_hits));
	if (r->max_error)
		fprintf(f,
			"Counts are lower bounds, short by at most %" PRIu64
			" (k-SF node budget reached: %" PRIu64 " item%s pruned)\n",
			r->max_error, r->pruned_items, render_plural(r->pruned_items));
}

/* The function's basic blocks. */
static void paths_blocks_text(FILE *f, const Kprof__PathsReply *r)
{
	fputs("\nBlocks:\n", f);
	for (size_t i = 0; i < r->n_blocks; i++) {
		const Kprof__PathBlock *b = r->blocks[i];

		fprintf(f, "  B%-3zu 0x%" PRIx64 "-0x%" PRIx64 " %4u insn%s  ", i, b->start, b->end,
			b->insns, b->insns == 1 ? " " : "s");
		put_text(f, b->term ? b->term : "?", 8);
		if (b->entry)
			fputs(" entry", f);
		if (b->loop_header)
			fprintf(f, " loop header (depth %u)", b->loop_depth);
		fputc('\n', f);
	}
}

/* The edge counts of a function with more acyclic paths than kprofd numbers. */
static void paths_edges_text(FILE *f, const Kprof__PathsReply *r)
{
	fputs("\nEdge profile: ", f);
	put_text(f, r->function ? r->function : "the function", 0);
	fputs(" has more acyclic paths than kprofd numbers ([limits] max_paths), so its "
	      "edges were counted instead of its paths\n"
	      "     COUNT  EDGE\n",
	      f);
	for (size_t i = 0; i < r->n_edges; i++) {
		const Kprof__EdgeCount *e = r->edges[i];

		fprintf(f, "%10" PRIu64 "  B%u -%s-> ", e->count, e->from, edge_name(e->kind));
		if (e->exit)
			fputs("exit\n", f);
		else
			fprintf(f, "B%u\n", e->to);
	}
}

/* The top Ball-Larus paths, then those only listed because a sequence uses them. */
static void paths_bl_text(FILE *f, const Kprof__PathsReply *r)
{
	size_t ntop = 0, nextra;

	for (size_t i = 0; i < r->n_paths; i++)
		ntop += !r->paths[i]->for_sequences;
	nextra = r->n_paths - ntop;
	fprintf(f, "\nBall-Larus paths (k = 1): %zu of %u shown\n     COUNT       %%  PATH\n", ntop,
		r->paths_total);
	/* The top paths, then those only listed because a sequence below uses them. */
	for (int extra = 0; extra < 2; extra++) {
		if (extra && nextra)
			fprintf(f, "  and %zu more path%s the sequences below use:\n", nextra,
				nextra == 1 ? "" : "s");
		for (size_t i = 0; i < r->n_paths; i++) {
			const Kprof__PathInfo *p = r->paths[i];

			if (p->for_sequences != (extra == 1))
				continue;
			fprintf(f, "%10" PRIu64 " %6.2f%%  #%-4" PRIu64 " ", p->count,
				pct(p->count, level_sum(r, 1)), p->id);
			put_path(f, p);
			fputc('\n', f);
		}
	}
}

/* The hottest multi-iteration paths (k >= 2), each with its paths' blocks. */
static void paths_seq_text(FILE *f, const Kprof__PathsReply *r)
{
	fprintf(
	    f,
	    "\nHottest multi-iteration paths (2 to %u consecutive paths of one activation): "
	    "%zu of %u shown\n     COUNT       %%  LEN  SEQUENCE (path ids, then their blocks)\n",
	    r->k, r->n_sequences, r->sequences_total);
	for (size_t i = 0; i < r->n_sequences; i++) {
		const Kprof__PathSeq *q = r->sequences[i];

		fprintf(f, "%10" PRIu64 " %6.2f%%  %3zu  ", q->count,
			pct(q->count, level_sum(r, q->n_ids)), q->n_ids);
		for (size_t j = 0; j < q->n_ids; j++)
			fprintf(f, "%s#%" PRIu64, j ? " > " : "", q->ids[j]);
		fputc('\n', f);
		for (size_t j = 0; j < q->n_ids; j++) {
			fprintf(f, "%26s#%-4" PRIu64 " ", "", q->ids[j]);
			put_path(f, path_find(r, q->ids[j]));
			fputc('\n', f);
		}
	}
}

void render_paths(FILE *f, const Kprof__PathsReply *r, bool json)
{
	if (json) {
		paths_json(f, r, true);
		return;
	}
	paths_head_text(f, r);
	paths_cost_text(f, r);
	paths_blocks_text(f, r);
	paths_hw_text(f, r);
	if (hw_structural(r))
		return;
	if (r->edge_profile) {
		paths_edges_text(f, r);
		return;
	}
	paths_bl_text(f, r);
	if (r->k < 2)
		return;
	paths_seq_text(f, r);
}
