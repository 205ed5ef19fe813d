// SPDX-License-Identifier: GPL-2.0-only
/* manager_offcpu.c: off-CPU time (attach --off-cpu) for the manager: the sched_switch program
 * attached while an attached target asks for it and detached when none does, so that kprofd
 * costs nothing at context switches otherwise; and each drain (with the ring buffer's), the
 * sums of offcpu.bpf.c handed to their targets' off-CPU profiles (offcpu.c).
 *
 * A sum names its process by tgid: it goes to the target the caller's find gives for that pid
 * (manager_find: the attached one, else the newest kept, so a sum that comes late goes to the
 * ended session), if it asks for off-CPU time; other sums are counted (unknown). The caller
 * passes the lookup, and the attached off-CPU targets are counted here, so that this file uses
 * nothing of the target list's (which calls it) and the two make no cycle.
 *
 * The callers of a user leaf without a frame pointer: the BPF program follows the rules of
 * kp_offcpu_rules from the leaf's stack pointer at the switch; where it met an address without
 * a rule, the rule is made here from the file's .eh_frame (tsym_frame_rule) and put in the map,
 * so that the first waits at a new address say "[caller lost]" and the next ones have their
 * callers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/loader.h"
#include "kernel/offcpu_bpf.h"
#include "manager/manager.h"
#include "manager/manager_offcpu.h"
#include "os/clock.h"
#include "os/log.h"
#include "symbols/symbolize.h"
#include "target/offcpu.h"

/* The maps' reader and the program, attached if it is not yet. */
static int program_on(struct manager *m, char *errbuf, size_t errlen)
{
	int err;

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

/* The program detached when nothing asks any more. */
static void program_off(struct manager *m)
{
	if (!m->offcpu_attached && !m->offcpu_all)
		loader_offcpu_set(m->loader, false);
}

int manager_offcpu_start(struct manager *m, struct target *t, char *errbuf, size_t errlen)
{
	int err;

	if (!t->offcpu || t->offcpu->attached)
		return 0;
	if ((err = program_on(m, errbuf, errlen)) < 0)
		return err;
	t->offcpu->attached = true;
	m->offcpu_attached++;
	return 0;
}

int manager_offcpu_all(struct manager *m, bool on, char *errbuf, size_t errlen)
{
	int err;

	if (on == m->offcpu_all)
		return 0;
	if (on && (err = program_on(m, errbuf, errlen)) < 0)
		return err;
	m->offcpu_all = on;
	loader_all_offcpu_set(m->loader, on);
	if (!on)
		program_off(m);
	return 0;
}

void manager_offcpu_stop(struct manager *m, struct target *t)
{
	if (!t->offcpu || !t->offcpu->attached)
		return;
	t->offcpu->attached = false;
	m->offcpu_attached--;
	offcpu_bpf_forget(m->offcpu, t->pid);
	program_off(m);
}

struct drain_ctx {
	struct manager *m;
	manager_offcpu_find_fn find;
	manager_offcpu_dirty_fn dirty;
	uint64_t now; /* CLOCK_MONOTONIC */
};

/* The frame rule at addr of t (a return address when ret), as offcpu.bpf.c reads it. */
static void frame_rule(struct target *t, uint64_t addr, bool ret, struct kp_unwind_rule *r)
{
	struct tsym_frame_rule fr = {0};

	if (t->sym)
		tsym_frame_rule(t->sym, addr, ret, &fr);
	*r = (struct kp_unwind_rule){.cfa = fr.cfa,
				     .kind = fr.kind == TSYM_FRAME_SP	? KP_RULE_SP
					     : fr.kind == TSYM_FRAME_FP ? KP_RULE_FP
									: KP_RULE_UNKNOWN,
				     .rbp = !fr.rbp_saved		       ? KP_RBP_KEPT
					    : fr.rbp_off && fr.rbp_off < 65536 ? KP_RBP_SAVED
									       : KP_RBP_LOST,
				     .rbp_off = (uint16_t)fr.rbp_off};
}

/* Whether the user leaf at ip keeps no frame pointer (remembered in t's off-CPU profile). */
static bool leaf_frameless(struct target *t, uint64_t ip)
{
	struct offcpu *o = t->offcpu;
	size_t slot = (ip ^ (ip >> 12)) % OFFCPU_RULE_CACHE;
	struct kp_unwind_rule r;

	if (!o->rule_kind[slot] || o->rule_ip[slot] != ip) {
		frame_rule(t, ip, false, &r);
		o->rule_ip[slot] = ip;
		o->rule_kind[slot] = r.kind;
	}
	return o->rule_kind[slot] == KP_RULE_SP;
}

/* What the callers of iv's user leaf say (offcpu.bpf.c's walk of them) into cs; a rule the walk
 * lacked put in the BPF map, so that the next switches there go further. */
static void callers_of(struct manager *m, struct target *t, const struct offcpu_interval *iv,
		       struct offcpu_callers *cs)
{
	const uint32_t end = iv->unwind & 0x0f;
	struct kp_unwind_rule r;
	uint64_t at;

	*cs = (struct offcpu_callers){.ips = iv->callers, .n = iv->nu ? iv->ncallers : 0};
	if (!iv->nu)
		return;
	switch (end) {
	case KP_UW_FP:
	case KP_UW_UNKNOWN: /* JIT code: its frame pointers carry the walk */
		break;
	case KP_UW_NORULE:
		at = iv->ncallers ? iv->callers[iv->ncallers - 1] : iv->uips[0];
		if (offcpu_bpf_rule_get(m->offcpu, iv->tgid, at, &r) < 0) {
			frame_rule(t, at, iv->ncallers > 0, &r);
			offcpu_bpf_rule_add(m->offcpu, iv->tgid, at, &r);
		}
		cs->lost = r.kind == KP_RULE_SP;
		break;
	case KP_UW_OFF: /* not walked: the leaf's rule says whether its caller is missing */
		cs->lost = leaf_frameless(t, iv->uips[0]);
		break;
	default: /* a return address not read, or more callers without a frame pointer */
		cs->lost = true;
		break;
	}
	if (iv->unwind & KP_UW_RBP)
		cs->cut = cs->lost = true;
	/* The callers end with a walk of their own from the rbp read back: the stack's own
	 * (from the rbp of the switch) is left out; at its bound, more may be missing. */
	if (iv->unwind & KP_UW_WALKED) {
		cs->cut = true;
		cs->lost = iv->ncallers >= KP_OFFCPU_CALLERS;
	}
	m->offcpu_callers_found += cs->n > 0;
	m->offcpu_callers_lost += cs->lost;
}

static void on_sum(void *userdata, const struct offcpu_interval *iv)
{
	struct offcpu_callers cs;
	struct drain_ctx *c = userdata;
	struct target *t = c->find(c->m, iv->tgid);

	if (!t || !t->offcpu) {
		c->m->offcpu_unknown++;
		return;
	}
	if (t->over_budget) {
		t->samples_refused++;
		return;
	}
	callers_of(c->m, t, iv, &cs);
	offcpu_add(t->offcpu, t->sym, t->tnames, iv, &cs);
	if (t->all) /* it waited: not idle (syswide.c detaches the idle first at a limit) */
		t->last_sample_ns = c->now;
	if (t->state != TARGET_ATTACHED)
		c->dirty(c->m, t);
}

void manager_offcpu_drain(struct manager *m, manager_offcpu_find_fn find,
			  manager_offcpu_dirty_fn dirty)
{
	struct drain_ctx c = {m, find, dirty, now_ns(CLOCK_MONOTONIC)};
	int n;

	if (!m->offcpu)
		return;
	n = offcpu_bpf_drain(m->offcpu, on_sum, &c);
	if (n < 0)
		log_warn("off-CPU time: cannot drain its map: %s", strerror(-n));
}

void manager_offcpu_status(const struct manager *m, struct manager_offcpu_status *st)
{
	struct offcpu_bpf_stats bs;
	const char *type = loader_offcpu_type(m->loader);

	memset(st, 0, sizeof(*st));
	st->program = !type			? ""
		      : !strcmp(type, "tp_btf") ? "tp_btf/sched_switch"
						: "raw_tp/sched_switch";
	st->targets = m->offcpu_attached;
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
	st->stacks_freed = bs.stacks_freed;
	st->sweeps = bs.sweeps;
	st->callers_found = m->offcpu_callers_found;
	st->callers_lost = m->offcpu_callers_lost;
	st->rules = bs.rules;
}

void manager_offcpu_free(struct manager *m)
{
	offcpu_bpf_free(m->offcpu);
	m->offcpu = NULL;
}
