// SPDX-License-Identifier: GPL-2.0-only
/* drift.c: kprofctl drift's output: the detector's settings, one line per JIT function followed
 * (state, samples, the last and lowest overlap with its reference, drifts) with its heaviest
 * keys (reference share -> window share), then the drift events kept, oldest first; or the same
 * as one JSON object. Names come from a target's perf map: they are sanitized for a terminal.
 * An ended target's result is the one kept with its profile: the same, after a line saying so.
 */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "drift.h"
#include "render.h"

static void put_name(FILE *f, const char *s)
{
	render_sanitize(f, s ? s : "", s ? strlen(s) : 0, 120);
}

static void put_pct(FILE *f, double v)
{
	if (v < 0)
		fputs("   -", f);
	else
		fprintf(f, "%3.0f%%", 100 * v);
}

void drift_render_event(FILE *f, const Kprof__DriftEvent *e)
{
	time_t sec = (time_t)(e->realtime_ns / 1000000000ULL);
	struct tm tm;
	char when[32] = "?";

	if (localtime_r(&sec, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	fprintf(f, "%s.%03u drift #%" PRIu64 " ", when, (unsigned)(e->realtime_ns / 1000000 % 1000),
		e->seq);
	put_name(f, e->function);
	fprintf(f, ": overlap %.1f%% over %u %s (reference %u); ", 100 * e->overlap,
		e->window_samples, strstr(e->function, " (paths)") ? "paths" : "samples",
		e->reference_samples);
	put_name(f, e->gained);
	fprintf(f, " %.0f%%->%.0f%%, ", 100 * e->gained_reference, 100 * e->gained_window);
	put_name(f, e->lost);
	fprintf(f, " %.0f%%->%.0f%%", 100 * e->lost_reference, 100 * e->lost_window);
}

void drift_render_event_json(FILE *f, const Kprof__DriftEvent *e)
{
	fprintf(f, "{\"seq\":%" PRIu64 ",\"function\":", e->seq);
	render_json_string(f, e->function);
	fprintf(f,
		",\"time_ns\":%" PRIu64 ",\"realtime_ns\":%" PRIu64 ",\"reference_ns\":%" PRIu64
		",\"overlap\":%.6f,\"window_samples\":%u,\"reference_samples\":%u,"
		"\"function_samples\":%" PRIu64 ",\"gained\":",
		e->time_ns, e->realtime_ns, e->reference_ns, e->overlap, e->window_samples,
		e->reference_samples, e->function_samples);
	render_json_string(f, e->gained);
	fprintf(f,
		",\"gained_reference\":%.6f,\"gained_window\":%.6f,\"lost\":", e->gained_reference,
		e->gained_window);
	render_json_string(f, e->lost);
	fprintf(f, ",\"lost_reference\":%.6f,\"lost_window\":%.6f}", e->lost_reference,
		e->lost_window);
}

/* "kept: ..." for the result of an ended target. */
static void render_kept(FILE *f, const Kprof__DriftReply *r)
{
	time_t sec = (time_t)(r->kept_ended_ns / 1000000000ULL);
	struct tm tm;
	char when[32] = "?";

	if (r->kept_ended_ns && localtime_r(&sec, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(f, "kept: the result when the target ended at %s (", when);
	put_name(f, r->kept_reason);
	fprintf(f, "), kept with its profile%s\n",
		r->kept_restored ? " and restored after kprofd restarted" : "");
	if (r->functions_left_out || r->events_left_out)
		fprintf(f,
			"not kept: %u function%s and %" PRIu64
			" drift%s (the caps of a kept result)\n",
			r->functions_left_out, render_plural(r->functions_left_out),
			r->events_left_out, render_plural(r->events_left_out));
}

void drift_render_json(FILE *f, const Kprof__DriftReply *r)
{
	render_json_open_target(f, r->target);
	fprintf(f,
		",\"window\":%u,\"min_samples\":%u,\"refresh\":%u,\"threshold\":%.6f,"
		"\"samples\":%" PRIu64 ",\"functions_over\":%" PRIu64 ",\"keys_over\":%" PRIu64
		",\"events_total\":%" PRIu64 ",\"end_after\":%u,\"functions_ended\":%" PRIu64
		",\"functions_recycled\":%" PRIu64,
		r->window, r->min_samples, r->refresh, r->threshold, r->samples, r->functions_over,
		r->keys_over, r->events_total, r->end_after, r->functions_ended,
		r->functions_recycled);
	fprintf(f, ",\"kept\":%s,\"kept_ended_ns\":%" PRIu64 ",\"kept_reason\":",
		r->kept ? "true" : "false", r->kept_ended_ns);
	render_json_string(f, r->kept_reason ? r->kept_reason : "");
	fprintf(f,
		",\"kept_restored\":%s,\"functions_left_out\":%u,\"events_left_out\":%" PRIu64
		",\"functions\":[",
		r->kept_restored ? "true" : "false", r->functions_left_out, r->events_left_out);
	for (size_t i = 0; i < r->n_functions; i++) {
		const Kprof__DriftFunction *d = r->functions[i];

		fprintf(f, "%s{\"function\":", i ? "," : "");
		render_json_string(f, d->function);
		fputs(",\"module\":", f);
		render_json_string(f, d->module);
		fprintf(f, ",\"address\":%" PRIu64 ",\"state\":", d->address);
		render_json_string(f, d->state);
		fprintf(f,
			",\"samples\":%" PRIu64 ",\"reference_samples\":%u,\"window_samples\":%u,"
			"\"overlap\":%.6f,\"min_overlap\":%.6f,\"drifts\":%u,\"refreshes\":%u,"
			"\"keys\":%u,\"top_keys\":[",
			d->samples, d->reference_samples, d->window_samples, d->overlap,
			d->min_overlap, d->drifts, d->refreshes, d->keys);
		for (size_t k = 0; k < d->n_top_keys; k++) {
			fprintf(f, "%s{\"key\":", k ? "," : "");
			render_json_string(f, d->top_keys[k]->key);
			fprintf(f, ",\"reference\":%.6f,\"window\":%.6f}",
				d->top_keys[k]->reference, d->top_keys[k]->window);
		}
		fputs("]}", f);
	}
	fputs("],\"events\":[", f);
	for (size_t i = 0; i < r->n_events; i++) {
		fputs(i ? "," : "", f);
		drift_render_event_json(f, r->events[i]);
	}
	fputs("]}", f);
}

void drift_render(FILE *f, const Kprof__DriftReply *r, bool json)
{
	if (json) {
		drift_render_json(f, r);
		fputc('\n', f);
		return;
	}
	if (r->target)
		render_target_line(f, r->target);
	if (r->kept)
		render_kept(f, r);
	fprintf(f,
		"drift: window %u samples, judged from %u on, threshold %.0f%% overlap, reference "
		"refreshed after %u; %" PRIu64 " samples of JIT functions, %" PRIu64 " drift%s\n",
		r->window, r->min_samples, 100 * r->threshold, r->refresh, r->samples,
		r->events_total, render_plural(r->events_total));
	if (r->functions_over || r->keys_over)
		fprintf(f,
			"left out: %" PRIu64 " samples (too many functions), %" PRIu64
			" filed as \"other\" (too many keys)\n",
			r->functions_over, r->keys_over);
	if (r->functions_ended)
		fprintf(f,
			"ended: %" PRIu64 " function%s without a sample for %u s (code replaced, "
			"e.g. a deoptimized copy, or no longer run)%s\n",
			r->functions_ended, render_plural(r->functions_ended), r->end_after,
			r->functions_recycled ? "; their places reused" : "");
	if (!r->n_functions)
		fputs("no samples in JIT functions yet (they need a perf map or jitdump)\n", f);
	else
		fputs("\n STATE     SAMPLES    REF  WINDOW  OVERLAP   MIN  DRIFTS  FUNCTION\n", f);
	for (size_t i = 0; i < r->n_functions; i++) {
		const Kprof__DriftFunction *d = r->functions[i];

		fprintf(f, " %-8s %8" PRIu64 " %6u %7u     ", d->state, d->samples,
			d->reference_samples, d->window_samples);
		put_pct(f, d->overlap);
		fputs("  ", f);
		put_pct(f, d->min_overlap);
		fprintf(f, " %7u  ", d->drifts);
		put_name(f, d->function);
		fputc('\n', f);
		for (size_t k = 0; k < d->n_top_keys; k++) {
			fprintf(f, "%54s", "");
			put_pct(f, d->top_keys[k]->reference);
			fputs(" -> ", f);
			/* An empty window (still learning, or idle) has no shares: not 0%. */
			put_pct(f, d->window_samples ? d->top_keys[k]->window : -1);
			fputs("  ", f);
			put_name(f, d->top_keys[k]->key);
			fputc('\n', f);
		}
	}
	if (r->n_events)
		fputs("\nDrifts (oldest first):\n", f);
	for (size_t i = 0; i < r->n_events; i++) {
		fputs("  ", f);
		drift_render_event(f, r->events[i]);
		fputc('\n', f);
	}
}
