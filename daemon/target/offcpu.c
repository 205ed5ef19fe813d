// SPDX-License-Identifier: GPL-2.0-only
/* offcpu.c: a target's off-CPU profile, built from the sums offcpu_bpf.c drains.
 *
 * A profile of its own (profile.h, counts in nanoseconds) and an HCCT weighted the same way, so
 * that every view of the CPU profile (report, folded, hcct, export) has an off-CPU twin that the
 * request handlers pick instead. Each sum becomes one stack, root first:
 *   [state] ; user frames ; kernel frames, the scheduler's own left out
 * The state frame ("[sleeping]", "[uninterruptible]", "[runnable]", ...) is the root, so a flame
 * graph splits by why the threads waited and the functions keep their self time. The leaf
 * kernel frames that every switch has (__schedule, schedule, the tracepoint and BPF frames) are
 * dropped: the leaf is then what waited (do_nanosleep, futex_wait_queue, ep_poll, io_schedule,
 * pipe_read), the "reason" column of the report. A user leaf without a frame pointer (libc's
 * syscall wrappers) hides its caller from the frame-pointer walk: the callers found at the
 * switch from the stack and .eh_frame (offcpu.bpf.c) go between the leaf and the walk's frames,
 * and where one is still missing a "[caller lost]" frame says so.
 *
 * Frames are named with the target's symbols (tsym_resolve) and cached by address in this
 * profile, the cache cleared when the symbols change. Names given late to the CPU profile's
 * unresolved JIT addresses are not carried over: such frames keep the name they had then.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/tnames.h"
#include "target/offcpu.h"
#include "symbols/symbolize.h"

static const char *const state_names[KP_OFF_NSTATES] = {
    [KP_OFF_RUNNABLE] = "[runnable]",
    [KP_OFF_SLEEPING] = "[sleeping]",
    [KP_OFF_UNINTERRUPTIBLE] = "[uninterruptible]",
    [KP_OFF_IDLE] = "[idle]",
    [KP_OFF_STOPPED] = "[stopped]",
};

const char *offcpu_state_name(uint32_t state)
{
	return state < KP_OFF_NSTATES ? state_names[state] : "[runnable]";
}

int offcpu_new(const struct offcpu_limits *lim, struct offcpu **ret)
{
	struct offcpu *o = calloc(1, sizeof(*o));
	int err;

	if (!o)
		return -ENOMEM;
	err = profile_new(&(struct profile_limits){.max_stacks = lim->max_stacks,
						   .max_stack_ids = 32 * lim->max_stacks},
			  &o->prof);
	if (err >= 0)
		err = hcct_new(&(struct hcct_params){.slots = lim->hcct_slots,
						     .max_nodes = lim->hcct_max_nodes,
						     .max_depth = KP_MAX_FRAMES},
			       &o->hcct);
	if (err < 0) {
		offcpu_free(o);
		return err;
	}
	*ret = o;
	return 0;
}

void offcpu_free(struct offcpu *o)
{
	if (!o)
		return;
	profile_free(o->prof);
	hcct_free(o->hcct);
	free(o);
}

static int special(struct offcpu *o, const char *name)
{
	return profile_intern(o->prof, name, "[kprof]", 0, PROFILE_KIND_UNKNOWN);
}

static int frame(struct offcpu *o, struct tsym *sym, uint64_t addr, bool kernel)
{
	struct sym_result r;
	uint32_t id;
	int ret;

	if (profile_cache_get(o->prof, addr, &id))
		return id;
	if (!sym)
		return profile_intern(o->prof, "[unknown]", "[unknown]", 0, PROFILE_KIND_UNKNOWN);
	tsym_resolve(sym, addr, kernel, &r);
	ret = profile_intern(o->prof, r.name, r.module, r.start, r.kind);
	if (ret >= 0)
		profile_cache_put(o->prof, addr, ret);
	return ret;
}

/* The scheduler's frames under every wait, and the tracing ones above them. */
static bool is_switch_frame(const char *name)
{
	static const char *const exact[] = {"__schedule", "schedule", "__traceiter_sched_switch",
					    "preempt_schedule_common", "__schedule_loop"};

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return true;
	return !strncmp(name, "bpf_", 4) || !strncmp(name, "__bpf_", 6) ||
	       !strncmp(name, "bpf_prog_", 9) || !strncmp(name, "bpf_trace_run", 13);
}

/* The kernel frames of iv, root first, appended at ids[n]: the new n. */
static size_t kernel_frames(struct offcpu *o, struct tsym *sym, const struct offcpu_interval *iv,
			    size_t n)
{
	size_t leaf = 0;

	/* Skip the leaf frames of the switch itself (kips[] is leaf first). */
	for (; leaf < iv->nk; leaf++) {
		int id = frame(o, sym, iv->kips[leaf], true);
		const struct profile_func *f = id < 0 ? NULL : profile_func_get(o->prof, id);

		if (!f || !is_switch_frame(f->name))
			break;
	}
	for (size_t i = iv->nk; i-- > leaf;) {
		int id = frame(o, sym, i > 0 ? iv->kips[i] - 1 : iv->kips[i], true);

		if (id >= 0)
			o->ids[n++] = id;
	}
	return n;
}

/* The user frames of iv, root first, appended at ids[n]: the walk's (uips[1..], unless cs cuts
 * them), "[caller lost]" if cs says one is, the callers cs found, the leaf: the new n. */
static size_t user_frames(struct offcpu *o, struct tsym *sym, const struct offcpu_interval *iv,
			  const struct offcpu_callers *cs, size_t n)
{
	size_t nu = cs && cs->cut && iv->nu > 1 ? 1 : iv->nu;
	int id;

	for (size_t i = nu; i-- > 1;) /* return addresses: their calls are named */
		if ((id = frame(o, sym, iv->uips[i] - 1, false)) >= 0)
			o->ids[n++] = id;
	if (cs && cs->lost && nu && (id = special(o, OFFCPU_CALLER_LOST)) >= 0)
		o->ids[n++] = id;
	for (size_t i = cs ? cs->n : 0; i-- > 0;)
		if ((id = frame(o, sym, cs->ips[i] - 1, false)) >= 0)
			o->ids[n++] = id;
	if (nu && (id = frame(o, sym, iv->uips[0], false)) >= 0)
		o->ids[n++] = id;
	return n;
}

int offcpu_add(struct offcpu *o, struct tsym *sym, struct tnames *names,
	       const struct offcpu_interval *iv, const struct offcpu_callers *cs)
{
	size_t n = 0;
	int id, err;

	if (!iv->ns)
		return 0;
	if (sym && tsym_generation(sym) != o->sym_gen) {
		profile_cache_clear(o->prof);
		o->sym_gen = tsym_generation(sym);
	}
	/* Summed waits carry no one time: not an on-CPU sample's, which the maps are judged by. */
	tsym_sample_time(sym, 0);
	if ((id = special(o, offcpu_state_name(iv->state))) >= 0)
		o->ids[n++] = id;
	if (iv->ustack_lost || iv->kstack_lost) {
		o->lost_stacks++;
		if ((id = special(o, "[stack lost]")) >= 0)
			o->ids[n++] = id;
	}
	n = user_frames(o, sym, iv, cs, n);
	n = kernel_frames(o, sym, iv, n);
	o->ns[iv->state < KP_OFF_NSTATES ? iv->state : 0] += iv->ns;
	o->intervals += iv->count;
	err = profile_add_tid(o->prof, iv->tid, o->ids, n, iv->ns);
	if (n)
		hcct_add_stack(o->hcct, o->ids, n, iv->ns); /* a full HCCT counts its own loss */
	if (names)
		tnames_set(names, iv->tid, iv->comm, sizeof(iv->comm));
	return err;
}

static int add_hcct(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *ud)
{
	struct offcpu *o = ud;

	(void)tid;
	if (n)
		hcct_add_stack(o->hcct, ids, n, count);
	return 0;
}

int offcpu_restore(const struct offcpu_limits *lim, struct profile *prof, struct offcpu **ret)
{
	struct offcpu *o;
	int err = offcpu_new(lim, &o);

	if (err < 0) {
		profile_free(prof);
		return err;
	}
	profile_free(o->prof);
	o->prof = prof;
	profile_foreach_stack(prof, add_hcct, o);
	*ret = o;
	return 0;
}

void offcpu_take(struct offcpu *dst, struct offcpu *src)
{
	SWAP(dst->prof, src->prof);
	SWAP(dst->hcct, src->hcct);
	for (int i = 0; i < KP_OFF_NSTATES; i++)
		dst->ns[i] += src->ns[i];
	dst->intervals += src->intervals;
	dst->lost_stacks += src->lost_stacks;
	dst->sym_gen = 0; /* the profile taken over caches no address yet */
}

struct states {
	const struct profile *p;
	uint64_t *ns, total;
};

static int add_state(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *ud)
{
	struct states *s = ud;
	const struct profile_func *f = n ? profile_func_get(s->p, ids[0]) : NULL;

	(void)tid;
	s->total += count;
	for (int i = 0; f && i < KP_OFF_NSTATES; i++)
		if (!strcmp(f->name, state_names[i]))
			s->ns[i] += count;
	return 0;
}

void offcpu_states(const struct profile *p, uint64_t ns[KP_OFF_NSTATES], uint64_t *total)
{
	struct states s = {p, ns, 0};

	memset(ns, 0, KP_OFF_NSTATES * sizeof(*ns));
	profile_foreach_stack(p, add_state, &s);
	*total = s.total;
}

uint64_t offcpu_memory(const struct offcpu *o)
{
	struct profile_stats ps;
	struct hcct_stats hs;

	if (!o)
		return 0;
	profile_get_stats(o->prof, &ps);
	hcct_get_stats(o->hcct, &hs);
	return ps.memory + hs.bytes + sizeof(*o);
}

uint64_t offcpu_total_ns(const struct offcpu *o)
{
	uint64_t n = 0;

	for (int i = 0; o && i < KP_OFF_NSTATES; i++)
		n += o->ns[i];
	return n;
}
