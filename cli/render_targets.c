// SPDX-License-Identifier: GPL-2.0-only
/* render_targets.c: kprofctl's views of the targets: `list` (the targets, each under the one it
 * was forked from, and the kept profiles of ended ones) and `status` (the daemon, its limits
 * and counters, system-wide mode). Apart from render.c because these are whole replies about
 * the daemon's state, not the shared pieces (a target's line and JSON object are render.c's,
 * used by attach, drift, export and annotate too).
 */
#include "render_targets.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "kprof/cleanup.h"
#include "render.h"
#include "render_internal.h"

/* The parent of target i in r: the newest target of its parent pid attached no later than it,
 * or -1 (attached by a client, or its parent's profile is not in the list). */
static ssize_t list_parent(const Kprof__ListReply *r, size_t i)
{
	const Kprof__Target *t = r->targets[i];
	ssize_t best = -1;

	if (!t->parent)
		return -1;
	for (size_t j = 0; j < r->n_targets; j++) {
		const Kprof__Target *p = r->targets[j];

		if (j != i && p->pid == t->parent && p->attached_at_ns <= t->attached_at_ns &&
		    (best < 0 || p->attached_at_ns > r->targets[best]->attached_at_ns))
			best = (ssize_t)j;
	}
	return best;
}

/* Depth-first from r's order: each target, then the children it forked (attach --children).
 * False (keep r's order) when no target has a parent in the list. */
static bool list_tree(const Kprof__ListReply *r, size_t *order, unsigned *depth)
{
	size_t n = r->n_targets, k = 0;
	_cleanup_free_ ssize_t *parent = calloc(n, sizeof(*parent));
	_cleanup_free_ size_t *stack = calloc(n, sizeof(*stack));
	_cleanup_free_ bool *done = calloc(n, sizeof(*done));
	bool any = false;

	if (!parent || !stack || !done)
		return false;
	for (size_t i = 0; i < n; i++)
		any |= (parent[i] = list_parent(r, i)) >= 0;
	if (!any)
		return false;
	/* Roots in r's order; a loop of parents (equal times) is cut where it is first met. */
	for (size_t root = 0; root < n; root++) {
		size_t sp = 0;

		if (done[root] || parent[root] >= 0)
			continue;
		stack[sp++] = root;
		depth[root] = 0;
		while (sp) {
			size_t i = stack[--sp];

			if (done[i])
				continue;
			done[i] = true;
			order[k++] = i;
			/* Children pushed in reverse, so they come out in r's order. */
			for (size_t j = n; j-- > 0;)
				if (!done[j] && parent[j] == (ssize_t)i) {
					depth[j] = depth[i] + 1;
					stack[sp++] = j;
				}
		}
	}
	/* Left over: targets in a parent loop, shown at the top level. */
	for (size_t i = 0; i < n; i++)
		if (!done[i]) {
			depth[i] = 0;
			order[k++] = i;
		}
	return true;
}

/* System-wide mode (attach --all), as JSON. */
static void syswide_json(FILE *f, const Kprof__SystemWide *w)
{
	if (!w) {
		fputs("null", f);
		return;
	}
	fprintf(f,
		"{\"on\":%s,\"freq_hz\":%u,\"since_ns\":%" PRIu64 ",\"cpus\":%u,\"targets\":%u"
		",\"profiled\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"refused_samples\":%" PRIu64
		",\"gone\":%" PRIu64 ",\"gone_samples\":%" PRIu64 ",\"kernel_samples\":%" PRIu64
		",\"idle_samples\":%" PRIu64 ",\"self_samples\":%" PRIu64
		",\"foreign_samples\":%" PRIu64 ",\"taken_over\":%" PRIu64
		",\"kept_dropped\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"late_samples\":%" PRIu64
		",\"runs\":%" PRIu64 ",\"own_samples\":%" PRIu64 ",\"drops\":%" PRIu64
		",\"evicted\":%" PRIu64 ",\"off_cpu\":%s,\"waiters\":%" PRIu64 "}",
		w->on ? "true" : "false", w->freq_hz, w->since_ns, w->cpus, w->targets, w->profiled,
		w->refused, w->refused_samples, w->gone, w->gone_samples, w->kernel_samples,
		w->idle_samples, w->self_samples, w->foreign_samples, w->taken_over,
		w->kept_dropped, w->samples, w->late_samples, w->runs, w->own_samples, w->drops,
		w->evicted, w->off_cpu ? "true" : "false", w->waiters);
}

/* System-wide mode as status shows it: where every sample of its set went. */
static void syswide_text(FILE *f, const Kprof__SystemWide *w)
{
	if (!w || (!w->on && !w->since_ns))
		return;
	fprintf(f, "\nsystem-wide: %s, %u Hz on %u CPUs (attach --all): %u processes attached now",
		w->on ? "on" : "off (counts of its last run)", w->freq_hz, w->cpus, w->targets);
	fprintf(f,
		"\n             %" PRIu64 " sampler runs: %" PRIu64 " processes profiled, %" PRIu64
		" samples in their profiles; %" PRIu64 " in processes attached otherwise",
		w->runs, w->profiled, w->samples, w->own_samples);
	if (w->off_cpu)
		fprintf(f,
			"\n             with off-CPU time (--off-cpu): %" PRIu64
			" of those made targets when they left a CPU",
			w->waiters);
	fprintf(f,
		"\n             no profile: %" PRIu64 " processes refused by a limit (%" PRIu64
		" samples; limits.max_auto_targets, max_targets), %" PRIu64
		" gone before read (%" PRIu64 " samples)",
		w->refused, w->refused_samples, w->gone, w->gone_samples);
	fprintf(f,
		"\n             counted only: kernel threads %" PRIu64 ", idle %" PRIu64
		", kprofd %" PRIu64 ", outside its PID namespace %" PRIu64 " samples",
		w->kernel_samples, w->idle_samples, w->self_samples, w->foreign_samples);
	if (w->evicted)
		fprintf(f,
			"\n             %" PRIu64 " idle targets detached to make room at a limit",
			w->evicted);
	if (w->taken_over || w->kept_dropped || w->late_samples)
		fprintf(f,
			"\n             %" PRIu64 " taken over by another attach, %" PRIu64
			" ended profiles dropped (limits.max_kept), %" PRIu64
			" samples after it stopped",
			w->taken_over, w->kept_dropped, w->late_samples);
}

static void list_json(FILE *f, const Kprof__ListReply *r)
{
	fputs("{\"targets\":[", f);
	for (size_t i = 0; i < r->n_targets; i++) {
		if (i)
			fputc(',', f);
		render_target_json(f, r->targets[i]);
	}
	fputc(']', f);
	if (r->system_wide) {
		fputs(",\"system_wide\":", f);
		syswide_json(f, r->system_wide);
	}
	fputs("}\n", f);
}

/* One target's row; branch: the tree's lines before its pid ("" for a root). */
static void list_row(FILE *f, const Kprof__Target *t, const char *branch)
{
	char threads[32] = "-", pid[48];

	/* Thread events while attached (per-thread sampling); "+N!" counts the threads
	 * left unsampled by a limit. */
	if (t->thread_events || t->threads_unsampled)
		snprintf(threads, sizeof(threads), t->threads_unsampled ? "%u+%u!" : "%u",
			 t->thread_events, t->threads_unsampled);
	snprintf(pid, sizeof(pid), "%s%u", branch, t->pid);
	fprintf(f, "%-8s %-7u ", pid, t->session);
	put_text(f, t->comm, 16);
	fprintf(f, " %-6u %-9s %6u %10" PRIu64 " %8" PRIu64 " %8s%s\n", t->uid,
		render_state(t->state), t->freq_hz, t->samples, t->jit_symbols + t->jitdump_symbols,
		threads,
		t->all				      ? " --all"
		: t->resumes			      ? " resumed"
		: t->resume_note && t->resume_note[0] ? " not resumed"
						      : "");
}

/* Whether, after row k of the tree, another row is at depth d before one is above it. */
static bool more_at(const size_t *order, const unsigned *depth, size_t n, size_t k, unsigned d)
{
	for (size_t j = k + 1; j < n; j++) {
		if (depth[order[j]] < d)
			return false;
		if (depth[order[j]] == d)
			return true;
	}
	return false;
}

/* The tree's lines before row k's pid, as tree(1) draws them: "|-" for a child with siblings
 * after it, "`-" for the last, and "| " below an ancestor that has more; two columns a level,
 * at most 8 levels. k SIZE_MAX: not a tree. */
static void tree_branch(const size_t *order, const unsigned *depth, size_t n, size_t k, char *out)
{
	unsigned d = k == SIZE_MAX ? 0 : depth[order[k]];

	*out = '\0';
	d = d > 8 ? 8 : d;
	for (unsigned l = 1; l < d; l++)
		strcat(out, more_at(order, depth, n, k, l) ? "| " : "  ");
	if (d)
		strcat(out, more_at(order, depth, n, k, d) ? "|-" : "`-");
}

/* The costs of the probing modes of the attached targets, a line each after indent. */
static void list_costs(FILE *f, Kprof__Target *const *t, size_t n, const char *indent)
{
	for (size_t i = 0; i < n; i++) {
		char lead[96];
		int k;

		if (t[i]->state != KPROF__TARGET_STATE__TARGET_STATE_ATTACHED)
			continue;
		k = snprintf(lead, sizeof(lead), "%spid %u (", indent, t[i]->pid);
		for (const char *c = t[i]->comm; c && *c && k < 40; c++)
			lead[k++] = (*c >= 0x20 && *c < 0x7f) ? *c : '?';
		snprintf(lead + k, sizeof(lead) - k, "): ");
		render_probe_costs(f, t[i], lead);
	}
}

void render_list(FILE *f, const Kprof__ListReply *r, bool json)
{
	if (json) {
		list_json(f, r);
		return;
	}
	if (r->system_wide && r->system_wide->on)
		fprintf(
		    f,
		    "system-wide sampling on (attach --all): %u Hz, %u processes attached by it "
		    "(marked --all)\n",
		    r->system_wide->freq_hz, r->system_wide->targets);
	if (!r->n_targets) {
		fputs("no targets (kept profiles of ended ones: kprofctl list --all)\n", f);
		return;
	}
	_cleanup_free_ size_t *order = calloc(r->n_targets, sizeof(*order));
	_cleanup_free_ unsigned *depth = calloc(r->n_targets, sizeof(*depth));
	bool tree = order && depth && list_tree(r, order, depth);

	fprintf(f, "%-8s %-7s %-16s %-6s %-9s %6s %10s %8s %8s\n", "PID", "SESSION", "COMM", "UID",
		"STATE", "HZ", "SAMPLES", "JITSYMS", "THREADS");
	for (size_t k = 0; k < r->n_targets; k++) {
		size_t i = tree ? order[k] : k;
		char branch[24];

		tree_branch(order, depth, r->n_targets, tree ? k : SIZE_MAX, branch);
		list_row(f, r->targets[i], branch);
	}
	list_costs(f, r->targets, r->n_targets, "");
	for (size_t i = 0; i < r->n_targets; i++)
		if (r->targets[i]->threads_unsampled)
			fprintf(
			    f,
			    "pid %u: %u threads not sampled: the thread event limit was reached "
			    "(kprofd.conf limits.max_threads, limits.max_thread_fds)\n",
			    r->targets[i]->pid, r->targets[i]->threads_unsampled);
}

/* The watched cgroups and units of a status reply, as a JSON array's members. */
static void status_watches_json(FILE *f, const Kprof__StatusReply *r)
{
	for (size_t i = 0; i < r->n_watches; i++) {
		const Kprof__Watch *w = r->watches[i];

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		render_json_string(f, w->name);
		fputs(",\"path\":", f);
		render_json_string(f, w->path);
		fprintf(f,
			",\"uid\":%u,\"attached\":%u,\"refused\":%u,\"since_ns\":%" PRIu64
			",\"waiting\":%s,\"restarts\":%u}",
			w->uid, w->attached, w->refused, w->since_ns, w->waiting ? "true" : "false",
			w->restarts);
	}
}

/* The pprof HTTP endpoint's part of status (absent when it is off). */
static void http_json(FILE *f, const Kprof__HttpStatus *h)
{
	if (!h)
		return;
	fputs(",\"http\":{\"listen\":", f);
	render_json_string(f, h->listen);
	fprintf(f,
		",\"token\":%s,\"connections\":%u,\"waiting\":%u,\"unauthorized\":%" PRIu64
		",\"left\":%" PRIu64 ",\"evicted\":%" PRIu64 ",\"busy\":%" PRIu64
		",\"served\":%" PRIu64 ",\"profiles\":%" PRIu64 ",\"profile_cpu_ns\":%" PRIu64
		",\"built_off_loop\":%" PRIu64 ",\"building\":%u}",
		h->token ? "true" : "false", h->connections, h->waiting, h->unauthorized, h->left,
		h->evicted, h->busy, h->served, h->profiles, h->profile_cpu_ns, h->built_off_loop,
		h->building);
}

static void http_text(FILE *f, const Kprof__HttpStatus *h)
{
	if (!h)
		return;
	fprintf(f,
		"http:        %s%s, %u connections, %u waiting; %" PRIu64 " served, %" PRIu64
		" unauthorized (401), %" PRIu64 " left while waiting, %" PRIu64 " evicted, %" PRIu64
		" refused busy\n",
		h->listen, h->token ? " (token)" : " (NO AUTHENTICATION)", h->connections,
		h->waiting, h->served, h->unauthorized, h->left, h->evicted, h->busy);
}

/* The off-CPU counts of status, as JSON members. */
static void status_offcpu_json(FILE *f, const Kprof__StatusReply *r)
{
	static const char *const names[] = {
	    "off_cpu_targets",	    "off_cpu_runs",	   "off_cpu_switches",
	    "off_cpu_intervals",    "off_cpu_lost",	   "off_cpu_lost_ns",
	    "off_cpu_no_stack",	    "off_cpu_stacks_gone", "off_cpu_callers_found",
	    "off_cpu_callers_lost", "off_cpu_rules",	   "off_cpu_stacks_freed",
	    "off_cpu_sweeps"};
	const uint64_t v[] = {
	    r->off_cpu_targets,	     r->off_cpu_runs,	     r->off_cpu_switches,
	    r->off_cpu_intervals,    r->off_cpu_lost,	     r->off_cpu_lost_ns,
	    r->off_cpu_no_stack,     r->off_cpu_stacks_gone, r->off_cpu_callers_found,
	    r->off_cpu_callers_lost, r->off_cpu_rules,	     r->off_cpu_stacks_freed,
	    r->off_cpu_sweeps};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		fprintf(f, ",\"%s\":%" PRIu64, names[i], v[i]);
}

/* A status reply as JSON; cpu_per_sample and rate as render_status computes them. */
static void status_json(FILE *f, const Kprof__StatusReply *r, double cpu_per_sample, double rate)
{
	fputs("{\"version\":", f);
	render_json_string(f, r->version);
	fprintf(f,
		",\"pid\":%u,\"uptime_ns\":%" PRIu64 ",\"targets_attached\":%u"
		",\"targets_kept\":%u,\"samples\":%" PRIu64 ",\"samples_per_sec\":%.1f"
		",\"drops\":%" PRIu64 ",\"drops_per_cpu\":[",
		r->pid, r->uptime_ns, r->targets_attached, r->targets_kept, r->samples, rate,
		r->drops);
	for (size_t i = 0; i < r->n_drops_per_cpu; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", r->drops_per_cpu[i]);
	fprintf(f, "],\"bad_records\":%" PRIu64 ",\"ringbuf_bytes\":%u,\"frequencies\":[",
		r->bad_records, r->ringbuf_bytes);
	for (size_t i = 0; i < r->n_frequencies; i++)
		fprintf(f, "%s%u", i ? "," : "", r->frequencies[i]);
	fprintf(f,
		"],\"cpu_ns\":%" PRIu64 ",\"cpu_ns_per_sample\":%.0f,\"clients\":%u"
		",\"symbol_bytes\":%" PRIu64 ",\"symbol_refusals\":%" PRIu64
		",\"profile_bytes\":%" PRIu64 ",\"lookups\":%" PRIu64 ",\"lookup_steps\":%" PRIu64
		",\"save_walks\":%" PRIu64 ",\"save_steps\":%" PRIu64 ",\"cred_ticks\":%" PRIu64
		",\"cred_reads\":%" PRIu64 ",\"quiet_skips\":%" PRIu64
		",\"shared_code_copies\":%" PRIu64 ",\"shared_code_bytes\":%" PRIu64
		",\"shared_code_found\":%" PRIu64 ",\"shared_code_full\":%" PRIu64
		",\"shared_names\":%" PRIu64 ",\"shared_names_full\":%" PRIu64 ",\"sampling\":",
		r->cpu_ns, cpu_per_sample, r->clients, r->symbol_bytes, r->symbol_refusals,
		r->profile_bytes, r->lookups, r->lookup_steps, r->save_walks, r->save_steps,
		r->cred_ticks, r->cred_reads, r->quiet_skips, r->shared_code_copies,
		r->shared_code_bytes, r->shared_code_found, r->shared_code_full, r->shared_names,
		r->shared_names_full);
	render_json_string(f, r->sampling);
	fprintf(f, ",\"profile_budget_bytes\":%" PRIu64 ",\"profiles_over_budget\":%s",
		r->profile_budget_bytes, r->profiles_over_budget ? "true" : "false");
	fprintf(f,
		",\"thread_events\":%u,\"sampler_runs\":%" PRIu64 ",\"threads_created\":%" PRIu64
		",\"thread_reports\":%" PRIu64 ",\"thread_reports_lost\":%" PRIu64
		",\"forks_lost\":%" PRIu64
		",\"watch_rules\":%u,\"auto_targets\":%u,\"max_auto_targets\":%u"
		",\"auto_refused\":%" PRIu64 ",\"watch_execs_lost\":%" PRIu64 ",\"watches\":[",
		r->thread_events, r->sampler_runs, r->threads_created, r->thread_reports,
		r->thread_reports_lost, r->forks_lost, r->watch_rules, r->auto_targets,
		r->max_auto_targets, r->auto_refused, r->watch_execs_lost);
	status_watches_json(f, r);
	fputc(']', f);
	if (r->system_wide) {
		fputs(",\"system_wide\":", f);
		syswide_json(f, r->system_wide);
	}
	http_json(f, r->http);
	for (size_t i = 0; i < r->n_probing; i++) { /* only when probes are in */
		fputs(i ? "," : ",\"probing\":[", f);
		render_target_json(f, r->probing[i]);
		if (i + 1 == r->n_probing)
			fputc(']', f);
	}
	fprintf(f,
		",\"window_sec\":%u,\"windows\":%" PRIu64 ",\"windows_in_memory\":%" PRIu64
		",\"window_memory_bytes\":%" PRIu64 ",\"window_disk_bytes\":%" PRIu64
		",\"windows_dropped\":%" PRIu64 ",\"windows_aged\":%" PRIu64
		",\"window_bad_files\":%" PRIu64 ",\"window_write_failures\":%" PRIu64
		",\"windows_unsaved\":%" PRIu64 ",\"range_queries\":%" PRIu64
		",\"range_sliced\":%" PRIu64 ",\"range_slices\":%" PRIu64
		",\"window_files\":%" PRIu64 ",\"window_ticks\":%" PRIu64
		",\"window_tick_steps\":%" PRIu64,
		r->window_sec, r->windows, r->windows_in_memory, r->window_memory_bytes,
		r->window_disk_bytes, r->windows_dropped, r->windows_aged, r->window_bad_files,
		r->window_write_failures, r->windows_unsaved, r->range_queries, r->range_sliced,
		r->range_slices, r->window_files, r->window_ticks, r->window_tick_steps);
	fputs(",\"features\":[", f);
	for (size_t i = 0; i < r->n_features; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		render_json_string(f, r->features[i]->name);
		fprintf(f, ",\"on\":%s,\"kernel\":", r->features[i]->on ? "true" : "false");
		render_json_string(f, r->features[i]->kernel);
		fputs(",\"why\":", f);
		render_json_string(f, r->features[i]->why);
		fputc('}', f);
	}
	fputc(']', f);
	fputs(",\"off_cpu_program\":", f);
	render_json_string(f, r->off_cpu_program);
	status_offcpu_json(f, r);
	fprintf(f,
		",\"lines_helpers_started\":%" PRIu64 ",\"lines_helpers_killed\":%" PRIu64
		",\"lines_answers\":%" PRIu64 ",\"lines_cache_entries\":%" PRIu64
		",\"lines_cache_bytes\":%" PRIu64 ",\"lines_cache_max_bytes\":%" PRIu64
		",\"lines_cache_evicted\":%" PRIu64,
		r->lines_helpers_started, r->lines_helpers_killed, r->lines_answers,
		r->lines_cache_entries, r->lines_cache_bytes, r->lines_cache_max_bytes,
		r->lines_cache_evicted);
	fputs("}\n", f);
}

/* The sampling lines of status in text: frequencies, events, the sampler, lost forks. */
static void status_sampling_text(FILE *f, const Kprof__StatusReply *r)
{
	fprintf(f, "sampling:    ");
	if (!r->n_frequencies)
		fprintf(f, "idle");
	for (size_t i = 0; i < r->n_frequencies; i++)
		fprintf(f, "%s%u Hz", i ? ", " : "", r->frequencies[i]);
	if (r->sampling && !strcmp(r->sampling, "cpus"))
		fprintf(f, " (per-CPU events)");
	else if (r->sampling && r->sampling[0])
		fprintf(f, " (per-thread events: %u open)", r->thread_events);
	if (r->sampling && r->sampling[0]) {
		fprintf(f, "\nsampler:     %" PRIu64 " runs", r->sampler_runs);
		if (r->threads_created)
			fprintf(f,
				"; %" PRIu64 " threads created in targets, %" PRIu64
				" without an event (%" PRIu64 " reports lost)",
				r->threads_created, r->thread_reports, r->thread_reports_lost);
	}
	if (r->off_cpu_program && r->off_cpu_program[0])
		fprintf(f,
			"\noff-CPU:     %s, %u target%s; %" PRIu64 " switches seen, %" PRIu64
			" intervals, %" PRIu64 " lost (maps full), %" PRIu64 " without a stack",
			r->off_cpu_program, r->off_cpu_targets, render_plural(r->off_cpu_targets),
			r->off_cpu_runs, r->off_cpu_intervals, r->off_cpu_lost,
			r->off_cpu_no_stack + r->off_cpu_stacks_gone);
	if (r->off_cpu_program && r->off_cpu_program[0] &&
	    (r->off_cpu_callers_found || r->off_cpu_callers_lost))
		fprintf(f,
			"\n             leaves without a frame pointer: %" PRIu64
			" sums with their callers (%" PRIu64 " .eh_frame rules), %" PRIu64
			" with a caller lost",
			r->off_cpu_callers_found, r->off_cpu_rules, r->off_cpu_callers_lost);
	else if (r->off_cpu_runs)
		fprintf(f, "\noff-CPU:     off (no target asks); %" PRIu64 " switches seen before",
			r->off_cpu_runs);
	if (r->lines_cache_max_bytes)
		fprintf(f,
			"\nlines:       %" PRIu64 " addresses resolved by %" PRIu64
			" kprof-lines helpers (%" PRIu64 " killed); cache %" PRIu64
			" entries, %" PRIu64 " of %" PRIu64 " KiB",
			r->lines_answers, r->lines_helpers_started, r->lines_helpers_killed,
			r->lines_cache_entries, r->lines_cache_bytes >> 10,
			r->lines_cache_max_bytes >> 10);
	if (r->forks_lost)
		fprintf(f,
			"\nchildren:    %" PRIu64
			" not followed (BPF targets map or ring buffer full)",
			r->forks_lost);
}

/* The watches and watch rules of status in text. */
static void status_watches_text(FILE *f, const Kprof__StatusReply *r)
{
	for (size_t i = 0; i < r->n_watches; i++) {
		fputs(i ? "\n             " : "\nwatching:    ", f);
		put_text(f, r->watches[i]->name, 0);
		if (strcmp(r->watches[i]->name, r->watches[i]->path)) {
			fputs(" (", f);
			put_text(f, r->watches[i]->path, 0);
			fputc(')', f);
		}
		fprintf(f, ", uid %u: %u processes attached, %u not", r->watches[i]->uid,
			r->watches[i]->attached, r->watches[i]->refused);
		if (r->watches[i]->restarts)
			fprintf(f, ", started again %u time%s", r->watches[i]->restarts,
				r->watches[i]->restarts == 1 ? "" : "s");
		if (r->watches[i]->waiting)
			fputs(" (stopped: waiting for it to start)", f);
	}
	if (r->watch_rules || r->auto_targets || r->auto_refused || r->watch_execs_lost) {
		fprintf(f,
			"\nrules:       %u watch rules; %u automatic targets of %u "
			"(limits.max_auto_targets), %" PRIu64 " refused by the bound",
			r->watch_rules, r->auto_targets, r->max_auto_targets, r->auto_refused);
		if (r->watch_execs_lost)
			fprintf(f, " (%" PRIu64 " execs lost: ring buffer full)",
				r->watch_execs_lost);
	}
}

/* The kernel features of status in text: one line each, on or off, the version that has it. */
static void status_features_text(FILE *f, const Kprof__StatusReply *r)
{
	if (!r->n_features)
		return;
	fputs("features:    this kernel's, of what kprofd uses (Linux version that has each)\n", f);
	for (size_t i = 0; i < r->n_features; i++) {
		size_t n = strlen(r->features[i]->name);

		fputs("  ", f);
		put_text(f, r->features[i]->name, 0);
		fprintf(f, "%*s%-4s Linux ", n < 22 ? (int)(22 - n) : 1, "",
			r->features[i]->on ? "on" : "off");
		put_text(f, r->features[i]->kernel, 0);
		fputs(": ", f);
		put_text(f, r->features[i]->why, 0);
		fputc('\n', f);
	}
}

void render_status(FILE *f, const Kprof__StatusReply *r, bool json)
{
	double cpu_per_sample = r->samples ? (double)r->cpu_ns / (double)r->samples : 0;
	double rate = isfinite(r->samples_per_sec) ? r->samples_per_sec : 0; /* JSON has no NaN */

	if (json) {
		status_json(f, r, cpu_per_sample, rate);
		return;
	}
	fputs("kprofd ", f);
	render_text(f, r->version);
	fprintf(f, " (pid %u), up %.0f s\n", r->pid, r->uptime_ns / 1e9);
	fprintf(f, "targets:     %u attached, %u kept\n", r->targets_attached, r->targets_kept);
	fprintf(f, "samples:     %" PRIu64 " total, %.1f/s now\n", r->samples, r->samples_per_sec);
	fprintf(f, "drops:       %" PRIu64 " (ring buffer full)", r->drops);
	for (size_t i = 0; i < r->n_drops_per_cpu && r->drops; i++)
		fprintf(f, "%s cpu%zu=%" PRIu64, i ? "," : ":", i, r->drops_per_cpu[i]);
	fputc('\n', f);
	if (r->bad_records)
		fprintf(f, "bad records: %" PRIu64 "\n", r->bad_records);
	status_sampling_text(f, r);
	status_watches_text(f, r);
	syswide_text(f, r->system_wide);
	if (r->n_probing) {
		fputs("\nprobes:\n", f);
		list_costs(f, r->probing, r->n_probing, "  ");
	}
	fprintf(f, "\nring buffer: %u KiB\n", r->ringbuf_bytes / 1024);
	http_text(f, r->http);
	fprintf(f, "daemon CPU:  %.3f s (%.1f us per sample)\n", r->cpu_ns / 1e9,
		cpu_per_sample / 1e3);
	fprintf(f, "clients:     %u\n", r->clients);
	if (r->symbol_bytes || r->symbol_refusals)
		fprintf(f,
			"symbols:     %.1f MiB, %" PRIu64 " refused (budget spent); %" PRIu64
			" names held once for the host, %" PRIu64 " not (cap reached: copied)\n",
			r->symbol_bytes / 1048576.0, r->symbol_refusals, r->shared_names,
			r->shared_names_full);
	if (r->profile_budget_bytes)
		fprintf(f, "profiles:    %.1f MiB of %.0f MiB (limits.profiles_mb)%s\n",
			r->profile_bytes / 1048576.0, r->profile_budget_bytes / 1048576.0,
			r->profiles_over_budget
			    ? ": spent, new stacks counted as [over budget] and their leaf"
			    : "");
	if (r->shared_code_copies || r->shared_code_full)
		fprintf(f,
			"code copies: %" PRIu64 " of files' code shared by a owner's targets, %.1f "
			"MiB, found %" PRIu64 " times, %" PRIu64 " not kept (cap reached)\n",
			r->shared_code_copies, r->shared_code_bytes / 1048576.0,
			r->shared_code_found, r->shared_code_full);
	if (r->window_sec)
		fprintf(f,
			"windows:     %" PRIu64 " of %u s kept (%" PRIu64 " in memory, %.1f MiB; "
			"%.1f MiB on disk), %" PRIu64 " dropped by the bounds, %" PRIu64
			" aged out, %" PRIu64 " bad files, %" PRIu64 " failed writes (%" PRIu64
			" unsaved)\n",
			r->windows, r->window_sec, r->windows_in_memory,
			r->window_memory_bytes / 1048576.0, r->window_disk_bytes / 1048576.0,
			r->windows_dropped, r->windows_aged, r->window_bad_files,
			r->window_write_failures, r->windows_unsaved);
	if (r->range_queries)
		fprintf(f,
			"ranges:      %" PRIu64 " --since/--until profiles built, %" PRIu64
			" of them in %" PRIu64 " steps between other work\n",
			r->range_queries, r->range_sliced, r->range_slices);
	status_features_text(f, r);
}
