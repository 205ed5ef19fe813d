// SPDX-License-Identifier: GPL-2.0-only
/* target_drift.c: a target's profile drift work that is not on a sample's path (ALGORITHMS.md
 * §12): the housekeeping that finds the basic blocks of the JIT functions the samples' detector
 * follows (driftcode.c reads their code), and the path-mix detector a path trace feeds.
 *
 * Apart from target.c, which feeds the samples' detector from target_add_sample and names
 * drifts for the journal (target_drift_log); this file calls into target.c, never the reverse.
 */
#include "target/target_drift.h"

#include <stdlib.h>

#include "kprof/cleanup.h"
#include "kprof/config.h"
#include "kprof/drift.h"
#include "kprof/procmaps.h"
#include "os/clock.h"
#include "target/driftcode.h"
#include "paths/paths.h"
#include "os/procfs.h"
#include "symbols/symbolize.h"

struct jit_size {
	uint64_t start, size;
};

static int jit_size_cb(const struct perfmap_sym *s, void *userdata)
{
	struct jit_size *js = userdata;

	if (s->start == js->start) /* the last one is the live one */
		js->size = s->size;
	return 0;
}

void target_drift_path(struct target *t, const struct kp_path *p)
{
	const struct path_trace *tr = t->paths;

	if (!t->drift || !tr || !tr->tracing || p->trace != tr->id ||
	    (p->op != KP_POP_PATH && p->op != KP_POP_EXIT))
		return;
	if (!t->drift_paths && drift_new(drift_get_config(t->drift), &t->drift_paths) < 0)
		return; /* no memory: the samples' detector goes on */
	if (drift_add(t->drift_paths, tr->id, p->id, now_ns(CLOCK_MONOTONIC)) == 1)
		target_drift_log(
		    t, true, drift_event_get(t->drift_paths, drift_nevents(t->drift_paths) - 1));
}

/* Functions without a sample for [drift] end_after seconds end (a JIT's replaced copy: V8
 * makes a new one after a deoptimization, and the old one never runs again); a function that
 * took the place of an ended one needs its blocks looked for. */
static void end_idle(struct target *t)
{
	unsigned after = t->env->conf->drift_end_after;
	struct drift_stats st;

	if (after)
		drift_end_idle(t->drift, now_ns(CLOCK_MONOTONIC), after * 1000000000ULL);
	drift_get_stats(t->drift, &st);
	if (st.recycled != t->drift_recycled) {
		t->drift_recycled = st.recycled;
		t->drift_code_tried = 0;
	}
}

void target_drift_tick(struct target *t)
{
	size_t n = t->drift ? drift_nfuncs(t->drift) : 0;
	struct procmaps *pm = NULL;
	char err[256];

	if (t->state != TARGET_ATTACHED || !t->sym)
		return;
	if (t->drift)
		end_idle(t);
	for (unsigned done = 0; t->drift_code_tried < n && done < 8; t->drift_code_tried++) {
		_cleanup_free_ uint64_t *starts = NULL;
		const struct profile_func *f;
		struct drift_func_info fi;
		struct jit_size js = {0};
		int r;

		if (drift_func_get(t->drift, t->drift_code_tried, &fi) < 0 || fi.blocks ||
		    fi.state == DRIFT_ENDED ||
		    !(f = profile_func_get(t->profile, fi.func)) || f->kind != PROFILE_KIND_JIT)
			continue;
		js.start = f->start;
		if (tsym_foreach_jit(t->sym, jit_size_cb, &js) < 0 || !js.size)
			continue;
		done++;
		if (!pm && procmaps_read_pid(t->pid, &pm, err, sizeof(err)) < 0)
			break; /* gone: nothing more to do */
		r = driftcode_blocks(t->pid, pm, f->start, js.size, &starts);
		if (r > 0)
			drift_func_set_blocks(t->drift, fi.func, starts, (size_t)r);
	}
	procmaps_free(pm);
}
