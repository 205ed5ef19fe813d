// SPDX-License-Identifier: GPL-2.0-only
/* manager_offcpu.c: off-CPU time (attach --off-cpu) for the manager: the sched_switch program
 * attached while an attached target asks for it and detached when none does, so that kprofd
 * costs nothing at context switches otherwise; and each drain (with the ring buffer's), the
 * sums of offcpu.bpf.c handed to their targets' off-CPU profiles (offcpu.c).
 *
 * A sum names its process by tgid: it goes to the target of that pid that asks for off-CPU
 * time, the attached one first (a sum of an ended session that comes late goes to it, kept).
 * Sums of no such target are counted (unknown), as samples of no target are.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "loader.h"
#include "log.h"
#include "manager.h"
#include "manager_offcpu.h"
#include "offcpu.h"
#include "offcpu_bpf.h"

static unsigned offcpu_targets(const struct manager *m, const struct target *except)
{
	unsigned n = 0;

	for (const struct target *t = m->targets; t; t = t->next)
		n += t != except && t->offcpu && t->state == TARGET_ATTACHED;
	return n;
}

int manager_offcpu_start(struct manager *m, struct target *t, char *errbuf, size_t errlen)
{
	int err;

	if (!t->offcpu)
		return 0;
	if (!m->offcpu && (err = offcpu_bpf_new(m->loader, &m->offcpu)) < 0) {
		snprintf(errbuf, errlen, "off-CPU time: %s", strerror(-err));
		return err;
	}
	err = loader_offcpu_set(m->loader, true);
	if (err < 0)
		snprintf(errbuf, errlen, "off-CPU time: cannot attach to sched_switch: %s",
			 strerror(-err));
	return err;
}

void manager_offcpu_stop(struct manager *m, struct target *t)
{
	if (!t->offcpu || !m->offcpu)
		return;
	offcpu_bpf_forget(m->offcpu, t->pid);
	if (!offcpu_targets(m, t))
		loader_offcpu_set(m->loader, false);
}

static void on_sum(void *userdata, const struct offcpu_interval *iv)
{
	struct manager *m = userdata;
	struct target *best = NULL;

	for (struct target *t = m->targets; t; t = t->next) {
		if (t->pid != (pid_t)iv->tgid || !t->offcpu)
			continue;
		if (t->state == TARGET_ATTACHED) {
			best = t;
			break;
		}
		if (!best || t->attached_ns > best->attached_ns)
			best = t;
	}
	if (!best) {
		m->offcpu_unknown++;
		return;
	}
	if (best->over_budget) {
		best->samples_refused++;
		return;
	}
	offcpu_add(best->offcpu, best->sym, best->tnames, iv);
	if (best->state != TARGET_ATTACHED)
		best->dirty = true;
}

void manager_offcpu_drain(struct manager *m)
{
	int n;

	if (!m->offcpu)
		return;
	n = offcpu_bpf_drain(m->offcpu, on_sum, m);
	if (n < 0)
		log_warn("off-CPU time: cannot drain its map: %s", strerror(-n));
}

void manager_offcpu_status(const struct manager *m, struct manager_offcpu_status *st)
{
	struct offcpu_bpf_stats bs;
	const char *type = loader_offcpu_type(m->loader);

	memset(st, 0, sizeof(*st));
	st->program = !type ? "" : !strcmp(type, "tp_btf") ? "tp_btf/sched_switch"
							    : "raw_tp/sched_switch";
	st->targets = offcpu_targets(m, NULL);
	st->unknown = m->offcpu_unknown;
	if (!m->offcpu || offcpu_bpf_stats(m->offcpu, &bs) < 0)
		return;
	st->runs = bs.ctr[KP_OFFC_RUNS];
	st->switches = bs.ctr[KP_OFFC_SWITCHES];
	st->intervals = bs.ctr[KP_OFFC_INTERVALS];
	st->lost = bs.ctr[KP_OFFC_NOBEGIN] + bs.ctr[KP_OFFC_NOSUM];
	st->lost_ns = bs.ctr[KP_OFFC_LOST_NS];
	st->no_stack = bs.ctr[KP_OFFC_NOSTACK];
	st->stacks_gone = bs.stacks_gone;
}

void manager_offcpu_free(struct manager *m)
{
	offcpu_bpf_free(m->offcpu);
	m->offcpu = NULL;
}
