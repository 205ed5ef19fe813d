// SPDX-License-Identifier: GPL-2.0-only
/* paths_events.c: what a running path trace (paths.c) is fed. The uprobe tracer's ENTER / PATH /
 * EXIT / ABORT events go into the k-SF through one ksf_ctx per thread (and, with --structural,
 * into both structural profiles through a stack of activations per thread); a gap in a thread's
 * sequence numbers or activation depths resynchronizes it at its next outermost entry, and is
 * counted. The hardware breakpoints' hits go to hwpaths.c or hwstruct.c, and their counts back
 * into the trace. Apart from paths.c because it runs per event, after the start and before the
 * stop (which it may call: the event budget), and nothing in paths.c calls it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "kprof/cfg.h"
#include "kprof/ksf.h"
#include "kprof/spp.h"
#include "paths/paths.h"
#include "paths/paths_internal.h"
#include "paths/paths_events.h"
#include "paths/hwpaths.h"
#include "paths/hwstruct.h"

/* ---- structural path profiling: per-thread activations ---- */

static void spp_on_enter(struct path_trace *tr, struct spp_stack *st)
{
	if (!st->a)
		st->a = calloc(2 * PATHS_SPP_MAX_DEPTH, sizeof(*st->a));
	if (!st->a || st->dead || st->depth == PATHS_SPP_MAX_DEPTH ||
	    spp_enter(tr->spp, &st->a[2 * st->depth]) < 0 ||
	    spp_enter(tr->spp_full, &st->a[2 * st->depth + 1]) < 0) {
		st->dead++;
		tr->spp_untracked++;
		return;
	}
	st->depth++;
}

/* Path id of the innermost activation: its blocks go to both profiles; exit: it returned. */
static void spp_on_path(struct path_trace *tr, struct spp_stack *st, uint64_t id, bool exit)
{
	struct spp_act *a;
	int n;

	spp_flat_add(tr->flat, id);
	spp_flat_add(tr->flat_full, id);
	if (st->dead || !st->depth)
		return;
	a = &st->a[2 * (st->depth - 1)];
	n = cfg_path_decode(tr->cfg, id, tr->steps, cfg_nblocks(tr->cfg));
	for (int i = 0; i < n; i++) {
		spp_block(tr->spp, &a[0], tr->steps[i].block);
		spp_block(tr->spp_full, &a[1], tr->steps[i].block);
	}
	if (exit) {
		spp_exit(tr->spp, &a[0]);
		spp_exit(tr->spp_full, &a[1]);
	}
}

/* The innermost activation is gone (returned, or abandoned when !returned). */
static void spp_on_leave(struct spp_stack *st, bool returned)
{
	if (st->dead) {
		st->dead--;
		return;
	}
	if (!st->depth)
		return;
	st->depth--;
	if (!returned) {
		spp_act_reset(&st->a[2 * st->depth]);
		spp_act_reset(&st->a[2 * st->depth + 1]);
	}
}

/* ---- events ---- */

static struct path_thread *thread_get(struct path_trace *tr, uint32_t tid)
{
	long i = tidtab_get(&tr->tids, tid, NULL);

	if (i < 0)
		return NULL;
	tr->threads[i].tid = tid;
	return &tr->threads[i];
}

/* Lost track of th: forget its activations until its next outermost entry. */
static void desync(struct path_trace *tr, struct path_thread *th)
{
	ksf_ctx_release(&th->ctx);
	paths_spp_stack_release(&th->spp);
	if (!th->desync)
		tr->resyncs++;
	th->desync = true;
}

/* Whether th follows ev's activation: a gap in its sequence numbers, or a depth that does not
 * match, desynchronizes it until its next outermost entry, which starts it afresh. */
static bool in_sync(struct path_trace *tr, struct path_thread *th, const struct kp_path *ev)
{
	size_t depth;

	if (th->seq && ev->seq != th->seq + 1)
		desync(tr, th); /* events of this thread were lost */
	th->seq = ev->seq;
	depth = ksf_ctx_depth(&th->ctx, NULL);
	if (ev->op == KP_POP_ENTER && ev->depth == 1 && (th->desync || depth != 0)) {
		ksf_ctx_release(&th->ctx);
		paths_spp_stack_release(&th->spp);
		th->desync = false;
		depth = 0;
	}
	if (!th->desync) {
		bool ok = ev->op == KP_POP_ENTER ? depth + 1 == ev->depth : depth == ev->depth;

		if (!ok || ev->depth == 0)
			desync(tr, th);
	}
	return !th->desync;
}

void paths_on_event(struct path_trace *tr, const struct kp_path *ev)
{
	struct path_thread *th;

	if (!tr || !tr->tracing || ev->trace != tr->id || ev->tid == 0)
		return;
	tr->events++;
	th = thread_get(tr, ev->tid);
	if (!th) {
		tr->lost_threads++;
		return;
	}
	if (!in_sync(tr, th, ev)) {
		tr->dropped++;
		return;
	}
	switch (ev->op) {
	case KP_POP_ENTER:
		ksf_enter(tr->ksf, &th->ctx, 0);
		tr->activations++;
		if (tr->spp)
			spp_on_enter(tr, &th->spp);
		break;
	case KP_POP_PATH:
	case KP_POP_EXIT:
		if (ev->id >= cfg_num_paths(tr->cfg)) {
			desync(tr, th);
			tr->dropped++;
			return;
		}
		ksf_push(tr->ksf, &th->ctx, ev->id);
		tr->path_events++;
		if (tr->spp)
			spp_on_path(tr, &th->spp, ev->id, ev->op == KP_POP_EXIT);
		if (ev->op == KP_POP_EXIT) {
			ksf_exit(tr->ksf, &th->ctx);
			if (tr->spp)
				spp_on_leave(&th->spp, true);
		}
		break;
	case KP_POP_ABORT:
		ksf_exit(tr->ksf, &th->ctx);
		tr->aborted++;
		if (tr->spp)
			spp_on_leave(&th->spp, false);
		break;
	default:
		desync(tr, th);
		return;
	}
	if ((tr->events & 1023) == 0) { /* the target may be gone when the trace stops */
		struct cpu_times c = paths_read_cpu(tr->pid);

		if (c.ok)
			tr->cpu_end = c;
	}
	if (tr->budget && tr->path_events >= tr->budget)
		paths_stop(tr, "budget");
}

void paths_on_hwbp(struct path_trace *tr, const struct kp_hwbp *ev)
{
	if (!tr || !tr->hw || !tr->tracing)
		return;
	if (tr->hw->st)
		hwstruct_on_event(tr->hw->st, ev);
	else
		hwpaths_on_event(tr->hw, ev);
	if (tr->hw) /* the event may have ended the trace, which keeps hw */
		paths_hw_sync(tr);
	if ((tr->events & 1023) == 0) {
		struct cpu_times c = paths_read_cpu(tr->pid);

		if (c.ok)
			tr->cpu_end = c;
	}
}
