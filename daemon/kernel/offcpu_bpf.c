// SPDX-License-Identifier: GPL-2.0-only
/* offcpu_bpf.c: off-CPU time out of the maps of offcpu.bpf.c, each drain.
 *
 * kp_offcpu_sums is taken with BPF_MAP_LOOKUP_AND_DELETE_BATCH (each bucket read and emptied
 * under its lock, so a sum is never counted twice nor lost between read and delete) in batches
 * of SUMS_BATCH, at most MAX_BATCHES a drain. Each sum's stacks are read from kp_offcpu_stacks
 * by id. Stacks are kept across drains, since a thread off CPU now holds the ids of the stacks
 * it left with in kp_offcpu_start; once more than STACKS_HELD different ids were read, those no
 * thread holds are deleted, so the stack map never fills with old stacks (a full map, or two
 * stacks in one bucket, costs new stacks: counted by the BPF side). A thread that leaves the CPU
 * between the scan of kp_offcpu_start and the delete can lose its stack that way: its time is
 * kept, under "[stack lost]", and counted (stacks_gone). The callers of a leaf without a frame
 * pointer come with the sum (its key); their rules, kprofd's, go into kp_offcpu_rules, an LRU
 * map (rule_add).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kprof/cleanup.h"
#include "kernel/loader.h"
#include "kernel/offcpu_bpf.h"

#define SUMS_BATCH 512
#define MAX_BATCHES (2 * KP_OFFCPU_MAX_SUMS / SUMS_BATCH)
#define STACKS_HELD (KP_OFFCPU_MAX_STACKS / 8)
#define STACK_BITS 16384 /* ids are below the map's buckets: max_entries rounded up to 2^n */

struct offcpu_bpf {
	struct loader_offcpu_fds fd;
	int ncpus;
	struct kp_offcpu_key keys[SUMS_BATCH];
	struct kp_offcpu_val vals[SUMS_BATCH];
	uint64_t kips[KP_MAX_STACK], uips[KP_MAX_STACK];
	uint8_t seen[STACK_BITS / 8]; /* ids read since the last free */
	unsigned nseen;
	uint64_t stacks_gone, drains, sums, stacks_freed;
	uint64_t rules, rules_failed;
};

int offcpu_bpf_new(struct loader *l, struct offcpu_bpf **ret)
{
	struct offcpu_bpf *ob = calloc(1, sizeof(*ob));

	if (!ob)
		return -ENOMEM;
	loader_offcpu_fds(l, &ob->fd);
	ob->ncpus = loader_ncpus(l);
	*ret = ob;
	return 0;
}

void offcpu_bpf_free(struct offcpu_bpf *ob)
{
	free(ob);
}

static bool seen_test(const struct offcpu_bpf *ob, int32_t id)
{
	return id >= 0 && id < STACK_BITS && (ob->seen[id / 8] & (1u << (id % 8)));
}

static void seen_set(struct offcpu_bpf *ob, int32_t id, bool on)
{
	if (id < 0 || id >= STACK_BITS || seen_test(ob, id) == on)
		return;
	if (on) {
		ob->seen[id / 8] |= 1u << (id % 8);
		ob->nseen++;
	} else {
		ob->seen[id / 8] &= ~(1u << (id % 8));
		ob->nseen--;
	}
}

/* Stack id into ips (leaf first): its depth, 0 for none, -ENOENT when it is gone. */
static int stack_read(struct offcpu_bpf *ob, int32_t id, uint64_t *ips)
{
	size_t n = 0;

	if (id < 0)
		return 0;
	if (bpf_map_lookup_elem(ob->fd.stacks, &id, ips) < 0)
		return -ENOENT;
	seen_set(ob, id, true);
	while (n < KP_MAX_STACK && ips[n])
		n++;
	return n;
}

static void sum_emit(struct offcpu_bpf *ob, const struct kp_offcpu_key *k,
		     const struct kp_offcpu_val *v, offcpu_sum_fn fn, void *userdata)
{
	struct offcpu_interval iv = {.tgid = k->tgid,
				     .tid = k->tid,
				     .state = k->state < KP_OFF_NSTATES ? k->state : KP_OFF_RUNNABLE,
				     .ns = v->ns,
				     .count = v->count,
				     .kips = ob->kips,
				     .uips = ob->uips,
				     .callers = (const uint64_t *)k->callers,
				     .ncallers = k->ncallers < KP_OFFCPU_CALLERS ? k->ncallers
									: KP_OFFCPU_CALLERS,
				     .unwind = k->unwind};
	int n;

	memcpy(iv.comm, v->comm, sizeof(iv.comm));
	iv.comm[sizeof(iv.comm) - 1] = '\0';
	n = stack_read(ob, k->kstack, ob->kips);
	iv.kstack_lost = k->kstack < 0 || n < 0;
	iv.nk = n > 0 ? n : 0;
	/* -EFAULT: no user stack to walk (a kernel thread), not a loss */
	n = stack_read(ob, k->ustack, ob->uips);
	iv.ustack_lost = (k->ustack < 0 && k->ustack != -EFAULT) || n < 0;
	iv.nu = n > 0 ? n : 0;
	if ((k->kstack >= 0 && iv.kstack_lost) || (k->ustack >= 0 && iv.ustack_lost))
		ob->stacks_gone++;
	fn(userdata, &iv);
}

/* Delete the stacks read since the last free that no thread off CPU holds now. */
static void stacks_free(struct offcpu_bpf *ob)
{
	uint32_t tid, next;
	struct kp_offcpu_begin b;
	uint32_t *prev = NULL;
	_cleanup_free_ uint8_t *held = calloc(1, sizeof(ob->seen));

	if (!held)
		return;
	for (unsigned i = 0; i < KP_OFFCPU_MAX_THREADS &&
			     bpf_map_get_next_key(ob->fd.start, prev, &next) == 0;
	     i++) {
		tid = next;
		prev = &tid;
		if (bpf_map_lookup_elem(ob->fd.start, &tid, &b) < 0)
			continue;
		if (b.kstack >= 0 && b.kstack < STACK_BITS)
			held[b.kstack / 8] |= 1u << (b.kstack % 8);
		if (b.ustack >= 0 && b.ustack < STACK_BITS)
			held[b.ustack / 8] |= 1u << (b.ustack % 8);
	}
	for (int32_t id = 0; id < STACK_BITS; id++) {
		if (!seen_test(ob, id) || (held[id / 8] & (1u << (id % 8))))
			continue;
		if (bpf_map_delete_elem(ob->fd.stacks, &id) == 0)
			ob->stacks_freed++;
		seen_set(ob, id, false);
	}
}

int offcpu_bpf_drain(struct offcpu_bpf *ob, offcpu_sum_fn fn, void *userdata)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t token, *in = NULL;
	int total = 0, err = 0;

	ob->drains++;
	for (int i = 0; i < MAX_BATCHES; i++) {
		uint32_t n = SUMS_BATCH;

		err = bpf_map_lookup_and_delete_batch(ob->fd.sums, in, &token, ob->keys, ob->vals,
						      &n, &opts);
		if (err < 0)
			err = -errno;
		for (uint32_t j = 0; j < n && j < SUMS_BATCH; j++)
			sum_emit(ob, &ob->keys[j], &ob->vals[j], fn, userdata);
		total += n;
		if (err < 0)
			break;
		in = &token;
	}
	ob->sums += total;
	if (ob->nseen > STACKS_HELD)
		stacks_free(ob);
	return err == -ENOENT || err == 0 ? total : err;
}

int offcpu_bpf_rule_get(struct offcpu_bpf *ob, pid_t tgid, uint64_t ip, struct kp_unwind_rule *r)
{
	struct kp_unwind_key k = {.tgid = tgid, .ip = ip};

	return bpf_map_lookup_elem(ob->fd.rules, &k, r) < 0 ? -ENOENT : 0;
}

int offcpu_bpf_rule_add(struct offcpu_bpf *ob, pid_t tgid, uint64_t ip,
			const struct kp_unwind_rule *r)
{
	struct kp_unwind_key k = {.tgid = tgid, .ip = ip};

	if (bpf_map_update_elem(ob->fd.rules, &k, r, BPF_ANY) < 0) {
		ob->rules_failed++;
		return -errno;
	}
	ob->rules++;
	return 0;
}

void offcpu_bpf_forget(struct offcpu_bpf *ob, pid_t tgid)
{
	uint32_t tid, next, *prev = NULL;
	struct kp_offcpu_begin b;

	for (unsigned i = 0; i < KP_OFFCPU_MAX_THREADS &&
			     bpf_map_get_next_key(ob->fd.start, prev, &next) == 0;
	     i++) {
		tid = next;
		if (bpf_map_lookup_elem(ob->fd.start, &tid, &b) == 0 && b.tgid == (uint32_t)tgid &&
		    bpf_map_delete_elem(ob->fd.start, &tid) == 0)
			continue; /* deleted: the next key after a deleted one is the first's */
		prev = &tid;
	}
}

int offcpu_bpf_stats(const struct offcpu_bpf *ob, struct offcpu_bpf_stats *st)
{
	_cleanup_free_ uint64_t *vals = calloc(ob->ncpus, sizeof(*vals));

	memset(st, 0, sizeof(*st));
	if (!vals)
		return -ENOMEM;
	for (uint32_t k = 0; k < KP_OFFC_NR; k++) {
		if (bpf_map_lookup_elem(ob->fd.counters, &k, vals) < 0)
			return -errno;
		for (int c = 0; c < ob->ncpus; c++)
			st->ctr[k] += vals[c];
	}
	st->stacks_gone = ob->stacks_gone;
	st->drains = ob->drains;
	st->sums = ob->sums;
	st->stacks_freed = ob->stacks_freed;
	st->rules = ob->rules;
	st->rules_failed = ob->rules_failed;
	return 0;
}
