// SPDX-License-Identifier: GPL-2.0-only
/* group.c: report, folded and export of a watched cgroup or unit (--cgroup/--unit).
 *
 * kprofd keeps one profile per process; the processes a watch attached carry its name
 * (Target.cgroup), those of system-wide mode Target.all (report/folded/export --all). kprofctl
 * lists them (list --all), exports each (its pid and session) and merges them (merge.c): the merged
 * view of the cgroup, from the first watch to now, live and ended processes alike. At most
 * GROUP_MAX_PROCS processes, the newest first; the rest are counted and said.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "group.h"
#include "render.h"

const char group_all[] = "--all";

/* Whether a target's watch name is name: the same, or for a relative cgroup path, its end. */
static bool watch_is(const char *cg, const char *name)
{
	size_t a, b;

	if (!cg || !cg[0])
		return false;
	if (!strcmp(cg, name))
		return true;
	a = strlen(cg), b = strlen(name);
	while (b > 1 && name[b - 1] == '/')
		b--;
	return name[0] != '/' && a > b && cg[a - b - 1] == '/' && !strncmp(cg + a - b, name, b);
}

/* One process's profile (of the range) into g, or counted as left out: its kept profile dropped
 * since the list was read (gone), or no window in the range. 0 or an exit code. */
static int fetch_one(int (*call_raw)(const Kprof__Request *req, Kprof__Reply **rep),
		     const Kprof__Target *t, uint64_t since_ns, uint64_t until_ns, struct group *g)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ExportRequest er = KPROF__EXPORT_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	int r;

	group_export_request(&req, &er, t->pid, t->session, since_ns, until_ns);
	if ((r = call_raw(&req, &rep)))
		return r;
	if (rep->error == -ENODATA) {
		if (!g->no_window++ && rep->message)
			snprintf(g->no_window_why, sizeof(g->no_window_why), "%s", rep->message);
		kprof__reply__free_unpacked(rep, NULL);
		return 0;
	}
	if (rep->error == -ENOENT || (!rep->error && !rep->export)) {
		g->gone++;
		kprof__reply__free_unpacked(rep, NULL);
		return 0;
	}
	if (rep->error) {
		render_reply_error(stderr, rep);
		kprof__reply__free_unpacked(rep, NULL);
		return KPROFCTL_EXIT_ERROR;
	}
	g->reps[g->n] = rep;
	g->sps[g->n] = rep->export->profile;
	if (!g->sps[g->n] || !g->sps[g->n]->target) {
		kprof__reply__free_unpacked(rep, NULL);
		g->gone++;
		return 0;
	}
	g->n++;
	return 0;
}

int group_load_range(int (*call_raw)(const Kprof__Request *req, Kprof__Reply **rep),
		     const char *name, uint64_t since_ns, uint64_t until_ns, struct group *g)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ListRequest lr = KPROF__LIST_REQUEST__INIT;
	Kprof__Reply *list = NULL;
	int r;

	memset(g, 0, sizeof(*g));
	lr.all = true;
	req.body_case = KPROF__REQUEST__BODY_LIST;
	req.list = &lr;
	if ((r = call_raw(&req, &list)))
		return r;
	if (list->error || !list->list) {
		render_reply_error(stderr, list);
		kprof__reply__free_unpacked(list, NULL);
		return KPROFCTL_EXIT_ERROR;
	}
	for (size_t i = 0; i < list->list->n_targets && !r; i++) {
		const Kprof__Target *t = list->list->targets[i];

		if (!(name == group_all ? t->all : watch_is(t->cgroup, name)) || !t->samples)
			continue;
		if (g->n == GROUP_MAX_PROCS)
			g->left_out++;
		else
			r = fetch_one(call_raw, t, since_ns, until_ns, g);
	}
	kprof__reply__free_unpacked(list, NULL);
	/* The process with the most samples first: its executable names a pprof profile. */
	for (size_t i = 1; i < g->n; i++)
		for (size_t j = i;
		     j > 0 && g->sps[j]->target->samples > g->sps[j - 1]->target->samples; j--) {
			Kprof__Reply *r = g->reps[j];
			Kprof__SavedProfile *sp = g->sps[j];

			g->reps[j] = g->reps[j - 1], g->sps[j] = g->sps[j - 1];
			g->reps[j - 1] = r, g->sps[j - 1] = sp;
		}
	if (!g->n) {
		if (g->no_window_why[0]) { /* kprofd's reason may quote names: sanitized */
			fprintf(stderr,
				"kprofctl: %s: %zu processes without a time window there: ", name,
				g->no_window);
			render_text(stderr, g->no_window_why);
			fputc('\n', stderr);
		} else if (name == group_all)
			fputs("kprofctl: no profile with samples of system-wide mode (kprofctl "
			      "attach --all)\n",
			      stderr);
		else
			fprintf(stderr,
				"kprofctl: no profile with samples of a process of %s (kprofctl "
				"list --all --json shows each target's cgroup)\n",
				name);
		return KPROFCTL_EXIT_ERROR;
	}
	if (g->left_out)
		fprintf(stderr, "kprofctl: %s: %zu processes merged, %zu more left out\n", name,
			g->n, g->left_out);
	if (g->gone)
		fprintf(stderr,
			"kprofctl: %s: %zu processes merged, %zu left out: ended and their kept "
			"profiles dropped (kprofd's max_kept) while they were read\n",
			name, g->n, g->gone);
	if (g->n == 1) {
		g->sp = g->sps[0];
		return 0;
	}
	if (merge_profiles(g->sps, g->n, &g->m) < 0) {
		fprintf(stderr, "kprofctl: out of memory\n");
		return KPROFCTL_EXIT_ERROR;
	}
	g->sp = &g->m.sp;
	return 0;
}

void group_free(struct group *g)
{
	merge_free(&g->m);
	for (size_t i = 0; i < g->n; i++)
		kprof__reply__free_unpacked(g->reps[i], NULL);
	g->n = 0;
}

void group_export_request(Kprof__Request *req, Kprof__ExportRequest *er, uint32_t pid,
			  uint32_t session, uint64_t since_ns, uint64_t until_ns)
{
	er->pid = pid;
	er->session = session;
	er->since_ns = since_ns;
	er->until_ns = until_ns;
	req->body_case = KPROF__REQUEST__BODY_EXPORT;
	req->export = er;
}
