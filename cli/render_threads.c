// SPDX-License-Identifier: GPL-2.0-only
/* render_threads.c: `report --threads` as text or JSON.
 *
 * One row a thread, heaviest first, as perf report -s tid,comm lists them: its tid, samples,
 * share of the profile, its name, and its hottest function (most self samples) with that
 * function's share of the thread's samples, the name last so that it gets what is left of the
 * terminal. The per-thread function lists are report --tid TID's.
 */
#include "render_threads.h"

#include <inttypes.h>

#include "render.h"

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static const char *func_name(const Kprof__SavedProfile *sp, uint32_t f)
{
	return f < sp->n_functions && sp->functions[f]->name ? sp->functions[f]->name : "";
}

void render_threads(FILE *f, const Kprof__Target *target, const Kprof__SavedProfile *sp,
		    const struct tview_thread *t, size_t n, unsigned top, uint64_t total,
		    bool json)
{
	size_t shown = top && top < n ? top : n;
	int left;

	if (json) {
		render_json_open_target(f, target);
		fprintf(f, ",\"total_samples\":%" PRIu64 ",\"threads\":[", total);
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "%s{\"tid\":%u,\"comm\":", i ? "," : "", t[i].tid);
			render_json_string(f, t[i].name);
			fprintf(f, ",\"samples\":%" PRIu64 ",\"pct\":%.2f,\"top_function\":",
				t[i].samples, pct(t[i].samples, total));
			if (t[i].top_func == TVIEW_NO_FUNC) {
				fputs("null,\"top_module\":null", f);
			} else {
				render_json_string(f, func_name(sp, t[i].top_func));
				fputs(",\"top_module\":", f);
				render_json_string(f, sp->functions[t[i].top_func]->module);
			}
			fprintf(f, ",\"top_self\":%" PRIu64 "}", t[i].top_self);
		}
		fputs("]}\n", f);
		return;
	}
	if (target)
		render_target_line(f, target);
	fprintf(f, "%" PRIu64 " sample%s, %zu thread%s%s\n\n", total, render_plural(total), n,
		render_plural(n), shown < n ? " (top shown)" : "");
	/* TID SAMPLES SHARE THREAD(16) TOP%: 8+1+10+1+7+2+16+1+6+1 */
	left = render_columns() ? (int)render_columns() - 55 : 0;
	fprintf(f, "%8s %10s %7s  %-16s %6s %s\n", "TID", "SAMPLES", "SHARE", "THREAD", "TOP%",
		"HOTTEST FUNCTION (self samples of the thread)");
	for (size_t i = 0; i < shown; i++) {
		fprintf(f, "%8u %10" PRIu64 " %6.2f%%  ", t[i].tid, t[i].samples,
			pct(t[i].samples, total));
		render_fit(f, t[i].name[0] ? t[i].name : "?", 16, true);
		if (t[i].top_func == TVIEW_NO_FUNC) {
			fprintf(f, " %6s -\n", "");
			continue;
		}
		fprintf(f, " %5.1f%% ", pct(t[i].top_self, t[i].samples));
		if (left > 0)
			render_fit(f, func_name(sp, t[i].top_func), left < 12 ? 12 : left, false);
		else
			render_text(f, func_name(sp, t[i].top_func));
		fputc('\n', f);
	}
}
