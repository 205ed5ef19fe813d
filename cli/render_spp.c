// SPDX-License-Identifier: GPL-2.0-only
/* render_spp.c: kprofctl's rendering of a path trace's event counts (`paths --events`) and
 * structural path profile (`paths --structural`), as text and as JSON fields appended to the
 * paths object of render_paths.c.
 *
 * A local path's node is a block index (B3) or, negative, the loop node of a structure graph
 * (printed [L@B2]: the loop headed by block 2); a path starts with E (entering the graph's
 * region) or B (at the header after a back edge) and ends with X (leaving) or B (a back edge).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "render_spp.h"

#include "render.h"
#include "render_paths.h"

static void json_u64s(FILE *f, const uint64_t *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", v[i]);
	fputc(']', f);
}

static void json_i32s(FILE *f, const int32_t *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", v[i]);
	fputc(']', f);
}

/* "events":{"insns":N,...} from names and counts, n = the shorter of the two. */
static void json_events(FILE *f, const Kprof__PathsReply *r, const uint64_t *v, size_t n)
{
	fputc('{', f);
	for (size_t i = 0; i < n && i < r->n_event_names; i++) {
		fputs(i ? "," : "", f);
		render_json_string(f, r->event_names[i]);
		fprintf(f, ":%" PRIu64, v[i]);
	}
	fputc('}', f);
}

static void spp_json(FILE *f, const Kprof__SppReply *s)
{
	fprintf(f,
		",\"spp\":{\"budget\":%" PRIu64 ",\"counted\":%" PRIu64 ",\"complete\":%s"
		",\"overlap\":%.4f,\"flat_overlap\":%.4f,\"full_counted\":%" PRIu64
		",\"paths_total\":%u,\"dropped\":%" PRIu64 ",\"timeout\":%" PRIu64,
		s->budget, s->counted, s->complete ? "true" : "false", s->overlap, s->flat_overlap,
		s->full_counted, s->paths_total, s->dropped, s->timeout);
	if (s->hw)
		fprintf(f, ",\"hw\":true,\"hw_given_up\":%" PRIu64, s->hw_given_up);
	fputs(",\"graphs\":[", f);
	for (size_t i = 0; i < s->n_graphs; i++) {
		const Kprof__SppGraph *g = s->graphs[i];

		fprintf(f, "%s{\"index\":%zu,\"header\":%d,\"parent\":%d,\"level\":%u,\"state\":",
			i ? "," : "", i, g->header, g->parent, g->level);
		render_json_string(f, g->state);
		fprintf(f,
			",\"share\":%" PRIu64 ",\"counted\":%" PRIu64 ",\"entries\":%" PRIu64
			",\"loop_count\":%" PRIu64 ",\"coefficient\":%.6f,\"paths\":%u",
			g->share, g->counted, g->entries, g->loop_count, g->coefficient, g->paths);
		if (s->hw) {
			fprintf(f,
				",\"hw_ms\":%.1f,\"hw_breakpoints\":%u,\"hw_assumed\":%u,"
				"\"hw_given_up\":%" PRIu64 ",\"hw_note\":",
				g->hw_ms, g->hw_breakpoints, g->hw_assumed, g->hw_given_up);
			render_json_string(f, g->hw_note ? g->hw_note : "");
		}
		fputc('}', f);
	}
	fputs("],\"paths\":[", f);
	for (size_t i = 0; i < s->n_paths; i++) {
		const Kprof__SppPath *p = s->paths[i];

		fprintf(f,
			"%s{\"graph\":%u,\"from_back\":%s,\"to_back\":%s,\"local\":%" PRIu64
			",\"global\":%.3f,\"nodes\":",
			i ? "," : "", p->graph, p->from_back ? "true" : "false",
			p->to_back ? "true" : "false", p->local, p->global);
		json_i32s(f, p->nodes, p->n_nodes);
		fputs(",\"whole\":", f);
		json_i32s(f, p->whole, p->n_whole);
		fputc('}', f);
	}
	fputs("]}", f);
}

static void extra_json(FILE *f, const Kprof__PathsReply *r)
{
	fputs(",\"event_names\":[", f);
	for (size_t i = 0; i < r->n_event_names; i++) {
		fputs(i ? "," : "", f);
		render_json_string(f, r->event_names[i]);
	}
	fputs("],\"events\":", f);
	json_events(f, r, r->events, r->n_events);
	fputs(",\"loop_events\":[", f);
	for (size_t i = 0; i < r->n_loop_events; i++) {
		const Kprof__LoopEvents *l = r->loop_events[i];

		fprintf(f, "%s{\"header\":%u,\"depth\":%u,\"events\":", i ? "," : "", l->header,
			l->depth);
		json_events(f, r, l->counts, l->n_counts);
		if (l->n_blocks) { /* anonymous code: the loop's blocks and their runs */
			uint64_t v[1024];
			size_t n = l->n_blocks < 1024 ? l->n_blocks : 1024;

			fprintf(f, ",\"activations\":%" PRIu64 ",\"blocks\":", l->activations);
			for (size_t j = 0; j < n; j++)
				v[j] = l->blocks[j];
			json_u64s(f, v, n);
			fputs(",\"runs\":", f);
			json_u64s(f, l->block_runs, l->n_block_runs < n ? l->n_block_runs : n);
		}
		fputc('}', f);
	}
	fputs("],\"block_events\":[", f);
	for (size_t i = 0; i < r->n_blocks; i++) {
		uint64_t v[64];
		size_t n = r->blocks[i]->n_events < 64 ? r->blocks[i]->n_events : 64;

		for (size_t j = 0; j < n; j++)
			v[j] = r->blocks[i]->events[j];
		fputs(i ? "," : "", f);
		json_u64s(f, v, n);
	}
	fputc(']', f);
	if (r->events_from_spp)
		fputs(",\"events_from_spp\":true", f);
	if (r->hw) {
		fputs(",\"events_not_covered\":[", f);
		for (size_t i = 0; i < r->n_events_not_covered; i++) {
			fputs(i ? "," : "", f);
			render_json_string(f, r->events_not_covered[i]);
		}
		fputc(']', f);
	}
	if (r->spp)
		spp_json(f, r->spp);
}

/* Anonymous code: the loops followed, each over its turns; what the counts leave out. */
static void paths_events_hw(FILE *f, const Kprof__PathsReply *r)
{
	size_t nl = r->n_loop_events < 6 ? r->n_loop_events : 6;

	fputs("\nEvents of the loops followed (sum over each loop's iteration paths of count x "
	      "events,\nover the turns it was followed):\n  CLASS         ",
	      f);
	for (size_t l = 0; l < nl; l++)
		fprintf(f, "   LOOP@B%-6u", r->loop_events[l]->header);
	fputc('\n', f);
	for (size_t i = 0; i < r->n_event_names; i++) {
		bool any = false;

		for (size_t l = 0; l < nl; l++)
			any |= i < r->loop_events[l]->n_counts && r->loop_events[l]->counts[i];
		if (!any)
			continue;
		fputs("  ", f);
		render_text(f, r->event_names[i]);
		fprintf(f, "%*s",
			strlen(r->event_names[i]) < 14 ? (int)(14 - strlen(r->event_names[i])) : 1,
			"");
		for (size_t l = 0; l < nl; l++)
			fprintf(f, " %13" PRIu64,
				i < r->loop_events[l]->n_counts ? r->loop_events[l]->counts[i] : 0);
		fputc('\n', f);
	}
	for (size_t l = 0; l < nl; l++) {
		const Kprof__LoopEvents *x = r->loop_events[l];

		fprintf(f, "  loop@B%u, %" PRIu64 " activations, block runs:", x->header,
			x->activations);
		for (size_t j = 0; j < x->n_blocks && j < x->n_block_runs; j++)
			fprintf(f, " B%u %" PRIu64, x->blocks[j], x->block_runs[j]);
		fputc('\n', f);
	}
	if (r->n_loop_events > nl)
		fprintf(f, "  (%zu more loops in --json)\n", r->n_loop_events - nl);
	for (size_t i = 0; i < r->n_events_not_covered; i++) {
		fputs("  not counted: ", f);
		render_text(f, r->events_not_covered[i]);
		fputc('\n', f);
	}
}

static void paths_events(FILE *f, const Kprof__PathsReply *r)
{
	size_t nl = r->n_loop_events < 6 ? r->n_loop_events : 6;

	if (r->hw && r->n_event_names && !r->events_from_spp) {
		paths_events_hw(f, r);
		return;
	}
	if (!r->n_events) {
		fputs("\nEvents: none (a trace kept by an older kprofd)\n", f);
		return;
	}
	if (r->events_from_spp)
		fputs("\nEvents, estimated from the structural profile (block runs: their graph's "
		      "global counts):\n  CLASS           FUNCTION",
		      f);
	else
		fputs("\nEvents (sum over the paths seen of path count x events on the path):\n"
		      "  CLASS           FUNCTION",
		      f);
	for (size_t l = 0; l < nl; l++)
		fprintf(f, "   LOOP@B%-6u", r->loop_events[l]->header);
	fputc('\n', f);
	for (size_t i = 0; i < r->n_events && i < r->n_event_names; i++) {
		if (!r->events[i])
			continue;
		fputs("  ", f);
		{
			int n = (int)strlen(r->event_names[i]);

			render_text(f, r->event_names[i]);
			fprintf(f, "%*s", n < 14 ? 14 - n : 1, "");
		}
		fprintf(f, "%12" PRIu64, r->events[i]);
		for (size_t l = 0; l < nl; l++)
			fprintf(f, " %13" PRIu64,
				i < r->loop_events[l]->n_counts ? r->loop_events[l]->counts[i] : 0);
		fputc('\n', f);
	}
	if (r->n_loop_events > nl)
		fprintf(f, "  (%zu more loops in --json)\n", r->n_loop_events - nl);
	for (size_t i = 0; r->events_from_spp && i < r->n_events_not_covered; i++) {
		fputs("  note: ", f);
		render_text(f, r->events_not_covered[i]);
		fputc('\n', f);
	}
}

static void put_node(FILE *f, const Kprof__SppReply *s, int32_t x)
{
	if (x >= 0) {
		fprintf(f, "B%d", x);
		return;
	}
	if ((size_t)-x < s->n_graphs)
		fprintf(f, "[L@B%d]", s->graphs[-x]->header);
	else
		fputs("[L?]", f);
}

static void spp_paths_text(FILE *f, const Kprof__SppReply *s);

/* Anonymous code: no complete profile; each graph's turn of the debug registers. */
/* A graph's row up to its coefficient (no newline): name, state, share, counted. */
static void graph_row(FILE *f, const Kprof__SppGraph *g)
{
	char name[32];

	if (g->header < 0)
		snprintf(name, sizeof(name), "outline");
	else
		snprintf(name, sizeof(name), "%*sloop@B%d", (int)g->level * 2 - 2, "", g->header);
	fprintf(f, "  %-14s ", name);
	render_text(f, g->state ? g->state : "?");
	fprintf(f, "%*s %6" PRIu64 " %8" PRIu64 "  %11.3f",
		g->state && strlen(g->state) < 11 ? (int)(11 - strlen(g->state)) : 0, "", g->share,
		g->counted, g->coefficient);
}

/* Where the profile stands, after its count: complete only when every graph counted something
 * or was skipped as cold; a trace that ended with graphs waiting says so. */
static void spp_done_text(FILE *f, const Kprof__SppReply *s, bool tracing)
{
	size_t none = 0;

	for (size_t i = 0; i < s->n_graphs; i++)
		none += s->graphs[i]->counted == 0 && s->graphs[i]->state &&
			(!strcmp(s->graphs[i]->state, "timeout") ||
			 !strcmp(s->graphs[i]->state, "unprofiled"));
	if (s->complete && !none)
		fputs(" (complete)", f);
	else if (s->complete)
		fprintf(f, " (done, but %zu of %zu graph%s counted nothing)", none, s->n_graphs,
			s->n_graphs == 1 ? "" : "s");
	else
		fputs(tracing ? " (still profiling)" : " (the trace ended before every graph was done)",
		      f);
}

static void spp_hw_text(FILE *f, const Kprof__SppReply *s, bool tracing)
{
	fprintf(f, ", %" PRIu64 " counted", s->counted);
	spp_done_text(f, s, tracing);
	fprintf(
	    f,
	    ", by hardware breakpoints one structure graph at a time\n"
	    "(no complete profile of anonymous code to compare with: no overlap figure; %" PRIu64
	    " local paths given up)\n"
	    "  GRAPH          STATE        SHARE  COUNTED  COEFFICIENT  TURN(ms)  BPS  ASSUMED\n",
	    s->hw_given_up);
	for (size_t i = 0; i < s->n_graphs; i++) {
		const Kprof__SppGraph *g = s->graphs[i];

		graph_row(f, g);
		fprintf(f, "  %8.0f  %3u  %7u\n", g->hw_ms, g->hw_breakpoints, g->hw_assumed);
		if (g->hw_note && g->hw_note[0]) {
			fputs("      ", f);
			render_text(f, g->hw_note);
			fputc('\n', f);
		}
	}
	spp_paths_text(f, s);
}

static void paths_spp(FILE *f, const Kprof__PathsReply *r)
{
	const Kprof__SppReply *s = r->spp;
	bool tracing = r->state == KPROF__PATHS_STATE__PATHS_STATE_TRACING;

	if (!s)
		return;
	fprintf(f, "\nStructural path profile: budget %" PRIu64 " local paths", s->budget);
	if (s->timeout)
		fprintf(f, " (a graph waits at most %" PRIu64 " activations)", s->timeout);
	if (s->hw) {
		spp_hw_text(f, s, tracing);
		return;
	}
	fprintf(f, ", %" PRIu64 " counted", s->counted);
	spp_done_text(f, s, tracing);
	fprintf(f,
		"\nOverlap with the complete trace (%" PRIu64
		" local paths): %.1f%% (flat Ball-Larus with the same budget: %.1f%%)\n"
		"  GRAPH          STATE        SHARE  COUNTED  COEFFICIENT\n",
		s->full_counted, s->overlap, s->flat_overlap);
	for (size_t i = 0; i < s->n_graphs; i++) {
		graph_row(f, s->graphs[i]);
		fputc('\n', f);
	}
	spp_paths_text(f, s);
}

static void spp_paths_text(FILE *f, const Kprof__SppReply *s)
{
	fprintf(f,
		"Hottest local paths (global = local x coefficient): %zu of %u shown\n"
		"    GLOBAL  LOCAL  GRAPH      PATH  =>  WHOLE-FUNCTION VIEW\n",
		s->n_paths, s->paths_total);
	for (size_t i = 0; i < s->n_paths; i++) {
		const Kprof__SppPath *p = s->paths[i];
		const Kprof__SppGraph *g = p->graph < s->n_graphs ? s->graphs[p->graph] : NULL;

		fprintf(f, "%10.1f %6" PRIu64 "  ", p->global, p->local);
		if (g && g->header >= 0)
			fprintf(f, "loop@B%-4d %s", g->header, p->from_back ? "B" : "E");
		else
			fprintf(f, "outline    %s", p->from_back ? "B" : "E");
		for (size_t j = 0; j < p->n_nodes; j++) {
			fputc(' ', f);
			put_node(f, s, p->nodes[j]);
		}
		fprintf(f, " %s  => ", p->to_back ? "B" : "X");
		for (size_t j = 0; j < p->n_whole; j++) {
			fputs(j ? " " : "", f);
			put_node(f, s, p->whole[j]);
		}
		fputc('\n', f);
	}
}

void render_paths_ex(FILE *f, const Kprof__PathsReply *r, bool json, bool events)
{
	if (json) {
		render_paths_json_open(f, r);
		extra_json(f, r);
		fputs("}\n", f);
		return;
	}
	render_paths(f, r, false);
	if (events)
		paths_events(f, r);
	paths_spp(f, r);
}
