// SPDX-License-Identifier: GPL-2.0-only
/* group.c: report, folded and export of a watched cgroup or unit (--cgroup/--unit).
 *
 * kprofd keeps one profile per process; the processes a watch attached carry its name
 * (Target.cgroup), those of system-wide mode Target.all (report/folded/export --all). kprofctl
 * lists them (list --all), exports each (its pid and session) and merges them (merge.c): the merged
 * view of the cgroup, from the first watch to now, live and ended processes alike. At most
 * GROUP_MAX_PROCS processes, the newest first; the rest are counted and said.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "group.h"

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

int group_load(int (*call)(const Kprof__Request *req, Kprof__Reply **rep), const char *name,
	       struct group *g)
{
	return group_load_range(call, name, 0, 0, g);
}

int group_load_range(int (*call)(const Kprof__Request *req, Kprof__Reply **rep), const char *name,
		     uint64_t since_ns, uint64_t until_ns, struct group *g)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ListRequest lr = KPROF__LIST_REQUEST__INIT;
	Kprof__Reply *list = NULL;
	int r;

	memset(g, 0, sizeof(*g));
	lr.all = true;
	req.body_case = KPROF__REQUEST__BODY_LIST;
	req.list = &lr;
	if ((r = call(&req, &list)))
		return r;
	for (size_t i = 0; i < list->list->n_targets; i++) {
		const Kprof__Target *t = list->list->targets[i];
		Kprof__Request er_req = KPROF__REQUEST__INIT;
		Kprof__ExportRequest er = KPROF__EXPORT_REQUEST__INIT;

		if (!(name == group_all ? t->all : watch_is(t->cgroup, name)) || !t->samples)
			continue;
		if (g->n == GROUP_MAX_PROCS) {
			g->left_out++;
			continue;
		}
		er.pid = t->pid;
		er.session = t->session;
		er.since_ns = since_ns;
		er.until_ns = until_ns;
		er_req.body_case = KPROF__REQUEST__BODY_EXPORT;
		er_req.export = &er;
		if (call(&er_req, &g->reps[g->n]))
			continue; /* gone meanwhile (said by call) */
		g->sps[g->n] = g->reps[g->n]->export->profile;
		if (!g->sps[g->n] || !g->sps[g->n]->target) {
			kprof__reply__free_unpacked(g->reps[g->n], NULL);
			continue;
		}
		g->n++;
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
		if (name == group_all)
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
