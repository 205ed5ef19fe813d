// SPDX-License-Identifier: GPL-2.0-only
/* offcpu_bpf.c: off-CPU time out of the maps of offcpu.bpf.c, each drain.
 *
 * kp_offcpu_sums is taken with BPF_MAP_LOOKUP_AND_DELETE_BATCH (each bucket read and emptied
 * under its lock, so a sum is never counted twice nor lost between read and delete) in batches
 * of SUMS_BATCH, at most MAX_BATCHES a drain. Each sum's stacks are read from kp_offcpu_stacks
 * by key (hash, and tgid for a user stack). Stacks are kept across drains, since a thread off CPU
 * now holds the keys of the stacks it left with in kp_offcpu_start; once more than STACKS_HELD
 * different stacks were read, those read before the last such free and not since, that no
 * thread holds, are deleted, so the map never fills with old stacks and a stack in use stays. When
 * the BPF side could not store a stack since the last drain (the map full of stacks no sum read:
 * their sums lost, their targets gone), or more were read than the set of read ones keeps, the
 * whole map is swept instead, and again at up to RESWEEPS drains after (what targets that
 * ended left behind it). A thread that leaves the CPU between the scan of kp_offcpu_start and
 * the delete can lose its stack that way: its time is kept, under "[stack lost]", and counted
 * (stacks_gone). The callers of a leaf without a frame pointer come with the sum (its key); their
 * rules, kprofd's, go into kp_offcpu_rules, an LRU map (rule_add).
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
#define SEEN_SLOTS (2 * KP_OFFCPU_MAX_STACKS) /* at most half full: then a sweep */
#define RESWEEPS 8 /* drains after a full map's sweep that sweep again, while they free some */

struct offcpu_bpf {
	struct loader_offcpu_fds fd;
	int ncpus;
	struct kp_offcpu_key keys[SUMS_BATCH];
	struct kp_offcpu_val vals[SUMS_BATCH];
	uint64_t kips[KP_MAX_STACK], uips[KP_MAX_STACK];
	/* Stacks read since the last free (seen[cur]) and between the two before (the other):
	 * hash 0, none. */
	struct kp_stack_key seen[2][SEEN_SLOTS];
	unsigned cur, nseen; /* nseen: seen[cur]'s */
	bool seen_full;	     /* more were read than it holds: the next free sweeps the map */
	uint64_t nostack;    /* KP_OFFC_NOSTACK at the last drain: a rise, a full map, a sweep */
	unsigned resweeps;   /* drains left that sweep again after a full map's (RESWEEPS) */
	uint64_t stacks_gone, drains, sums, stacks_freed, sweeps;
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

/* k's slot in set: where it is, or the empty slot it would take. */
static size_t seen_slot(const struct kp_stack_key *set, const struct kp_stack_key *k)
{
	size_t i = (k->hash ^ (k->tgid * 0x9e3779b97f4a7c15ULL)) & (SEEN_SLOTS - 1);

	while (set[i].hash && (set[i].hash != k->hash || set[i].tgid != k->tgid))
		i = (i + 1) & (SEEN_SLOTS - 1);
	return i;
}

/* k put into the set of stacks read since the last free, once. */
static void seen_add(struct offcpu_bpf *ob, const struct kp_stack_key *k)
{
	struct kp_stack_key *set = ob->seen[ob->cur];
	size_t i = seen_slot(set, k);

	if (set[i].hash)
		return;
	if (ob->nseen >= SEEN_SLOTS / 2) {
		ob->seen_full = true;
		return;
	}
	set[i] = *k;
	ob->nseen++;
}

static bool seen_now(const struct offcpu_bpf *ob, const struct kp_stack_key *k)
{
	return ob->seen[ob->cur][seen_slot(ob->seen[ob->cur], k)].hash != 0;
}

/* Stack (hash, tgid) into ips (leaf first): its depth, 0 for none, -ENOENT when it is gone. */
static int stack_read(struct offcpu_bpf *ob, uint64_t hash, uint32_t tgid, uint64_t *ips)
{
	struct kp_stack_key k = {.hash = hash, .tgid = tgid};
	size_t n = 0;

	if (hash <= KP_STACK_LOST)
		return 0;
	if (bpf_map_lookup_elem(ob->fd.stacks, &k, ips) < 0)
		return -ENOENT;
	seen_add(ob, &k);
	while (n < KP_MAX_STACK && ips[n])
		n++;
	return n;
}

static void sum_emit(struct offcpu_bpf *ob, const struct kp_offcpu_key *k,
		     const struct kp_offcpu_val *v, offcpu_sum_fn fn, void *userdata)
{
	struct offcpu_interval iv = {
	    .tgid = k->tgid,
	    .tid = k->tid,
	    .state = k->state < KP_OFF_NSTATES ? k->state : KP_OFF_RUNNABLE,
	    .ns = v->ns,
	    .count = v->count,
	    .kips = ob->kips,
	    .uips = ob->uips,
	    .callers = (const uint64_t *)k->callers,
	    .ncallers = k->ncallers < KP_OFFCPU_CALLERS ? k->ncallers : KP_OFFCPU_CALLERS,
	    .unwind = k->unwind};
	int n;

	memcpy(iv.comm, v->comm, sizeof(iv.comm));
	iv.comm[sizeof(iv.comm) - 1] = '\0';
	n = stack_read(ob, k->kstack, 0, ob->kips);
	iv.kstack_lost = k->kstack <= KP_STACK_LOST || n < 0; /* a kernel stack is never none */
	iv.nk = n > 0 ? n : 0;
	if (n < 0)
		ob->stacks_gone++;
	/* KP_STACK_NONE: no user stack to walk (a kernel thread), not a loss */
	n = stack_read(ob, k->ustack, k->tgid, ob->uips);
	iv.ustack_lost = k->ustack == KP_STACK_LOST || n < 0;
	iv.nu = n > 0 ? n : 0;
	if (n < 0)
		ob->stacks_gone++;
	fn(userdata, &iv);
}

static int key_cmp(const void *a, const void *b)
{
	const struct kp_stack_key *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

typedef bool (*start_fn)(uint32_t tid, const struct kp_offcpu_begin *b, void *ud);

/* fn on each thread off CPU (kp_offcpu_start), at most KP_OFFCPU_MAX_THREADS; fn returns true
 * when it deleted the entry. */
static void start_each(struct offcpu_bpf *ob, start_fn fn, void *ud)
{
	uint32_t tid, next, *prev = NULL;
	struct kp_offcpu_begin b;

	for (unsigned i = 0;
	     i < KP_OFFCPU_MAX_THREADS && bpf_map_get_next_key(ob->fd.start, prev, &next) == 0;
	     i++) {
		tid = next;
		if (bpf_map_lookup_elem(ob->fd.start, &tid, &b) == 0 && fn(tid, &b, ud))
			continue; /* deleted: the next key after a deleted one is the first's */
		prev = &tid;
	}
}

struct keys {
	struct kp_stack_key *k;
	size_t n, cap;
	bool nomem;
};

static bool hold(uint32_t tid, const struct kp_offcpu_begin *b, void *ud)
{
	struct keys *h = ud;
	struct kp_stack_key *bigger;

	(void)tid;
	if (h->n + 2 > h->cap) {
		h->cap = h->cap ? 2 * h->cap : 256;
		if (!(bigger = realloc(h->k, h->cap * sizeof(*h->k)))) {
			h->nomem = true;
			h->cap = h->n = 0;
			return false;
		}
		h->k = bigger;
	}
	if (b->kstack > KP_STACK_LOST)
		h->k[h->n++] = (struct kp_stack_key){.hash = b->kstack};
	if (b->ustack > KP_STACK_LOST)
		h->k[h->n++] = (struct kp_stack_key){.hash = b->ustack, .tgid = b->tgid};
	return false;
}

/* The stacks the threads off CPU now left with, sorted: *n of them (NULL: no memory). */
static struct kp_stack_key *held_stacks(struct offcpu_bpf *ob, size_t *n)
{
	struct keys h = {0};

	start_each(ob, hold, &h);
	if (h.nomem) {
		free(h.k);
		return NULL;
	}
	*n = h.n;
	if (h.n)
		qsort(h.k, h.n, sizeof(*h.k), key_cmp);
	return h.k ? h.k : calloc(1, sizeof(*h.k));
}

static bool held(const struct kp_stack_key *h, size_t n, const struct kp_stack_key *k)
{
	return n && bsearch(k, h, n, sizeof(*h), key_cmp);
}

/* Every stack of the map that no thread off CPU holds, deleted: the map filled with stacks
 * never read (their sums lost, or their targets gone), or more were read than the set keeps. */
static void stacks_sweep(struct offcpu_bpf *ob, const struct kp_stack_key *h, size_t nh)
{
	_cleanup_free_ struct kp_stack_key *del = calloc(KP_OFFCPU_MAX_STACKS, sizeof(*del));
	struct kp_stack_key k, next, *prev = NULL;
	size_t n = 0, freed = 0;

	if (!del)
		return;
	ob->sweeps++;
	for (unsigned i = 0; i < 2 * KP_OFFCPU_MAX_STACKS && n < KP_OFFCPU_MAX_STACKS &&
			     bpf_map_get_next_key(ob->fd.stacks, prev, &next) == 0;
	     i++) {
		k = next;
		prev = &k;
		if (!held(h, nh, &k) && !seen_now(ob, &k))
			del[n++] = k;
	}
	for (size_t i = 0; i < n; i++)
		if (bpf_map_delete_elem(ob->fd.stacks, &del[i]) == 0)
			ob->stacks_freed++, freed++;
	if (!freed)
		ob->resweeps = 0;
}

/* Delete the stacks read between the last two frees and not since, that no thread off CPU
 * holds now (all that none holds and none read since the last free, when sweep). A stack read
 * since the last free is kept for one more round: deleting a stack in use loses it to a thread
 * that leaves the CPU with it between the scan of kp_offcpu_start and the delete (under load,
 * 1 % of the intervals of a nanosleep loop lost their shared kernel stack that way). */
static void stacks_free(struct offcpu_bpf *ob, bool sweep)
{
	size_t nh;
	_cleanup_free_ struct kp_stack_key *h = held_stacks(ob, &nh);

	if (!h)
		return; /* no memory: tried again at the next drain */
	struct kp_stack_key *old = ob->seen[!ob->cur];

	if (sweep || ob->seen_full) {
		stacks_sweep(ob, h, nh);
	} else {
		for (size_t i = 0; i < SEEN_SLOTS; i++)
			if (old[i].hash && !seen_now(ob, &old[i]) && !held(h, nh, &old[i]) &&
			    bpf_map_delete_elem(ob->fd.stacks, &old[i]) == 0)
				ob->stacks_freed++;
	}
	memset(old, 0, sizeof(ob->seen[0]));
	ob->cur = !ob->cur; /* the stacks read since this free go into the set just emptied */
	ob->nseen = 0;
	ob->seen_full = false;
}

/* KP_OFFC_NOSTACK summed over the CPUs (0 if it cannot be read). */
static uint64_t nostack_count(struct offcpu_bpf *ob)
{
	_cleanup_free_ uint64_t *vals = calloc(ob->ncpus, sizeof(*vals));
	uint32_t k = KP_OFFC_NOSTACK;
	uint64_t sum = 0;

	if (!vals || bpf_map_lookup_elem(ob->fd.counters, &k, vals) < 0)
		return 0;
	for (int c = 0; c < ob->ncpus; c++)
		sum += vals[c];
	return sum;
}

int offcpu_bpf_drain(struct offcpu_bpf *ob, offcpu_sum_fn fn, void *userdata)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t token, *in = NULL;
	int total = 0, err = 0;
	uint64_t nostack;

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
	/* A stack not stored since the last drain: the map is full of stacks nobody read. The
	 * RESWEEPS drains after it sweep again (until one frees none): the stacks that targets
	 * ending meanwhile left are no sum's, and would otherwise stay until the map was full
	 * again. */
	nostack = nostack_count(ob);
	if (nostack != ob->nostack)
		ob->resweeps = RESWEEPS + 1;
	if (ob->resweeps || ob->nseen > STACKS_HELD || ob->seen_full)
		stacks_free(ob, ob->resweeps > 0);
	if (ob->resweeps)
		ob->resweeps--;
	ob->nostack = nostack;
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

struct forget_ctx {
	struct offcpu_bpf *ob;
	uint32_t tgid;
};

static bool forget_one(uint32_t tid, const struct kp_offcpu_begin *b, void *ud)
{
	struct forget_ctx *c = ud;

	return b->tgid == c->tgid && bpf_map_delete_elem(c->ob->fd.start, &tid) == 0;
}

void offcpu_bpf_forget(struct offcpu_bpf *ob, pid_t tgid)
{
	struct forget_ctx c = {ob, (uint32_t)tgid};

	start_each(ob, forget_one, &c);
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
	st->sweeps = ob->sweeps;
	st->rules = ob->rules;
	st->rules_failed = ob->rules_failed;
	return 0;
}
