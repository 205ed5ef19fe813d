// SPDX-License-Identifier: GPL-2.0-only
/* test_callsync.c: unit tests of a thread's cursor across lost call events
 * (daemon/lib/callsync.c). The events are made as calls.bpf.c makes them (number, depth, lowest
 * depth; a lost one still counted) from runs of minijit's call graph (main -> hot, warm, cold;
 * warm -> leaf), some dropped at random, the epoch starting anywhere in the run: every context
 * the HCCT then holds is one the thread really was in (counted from where the epoch found it),
 * never more often than it was; with nothing lost the tree is exact. A lost return is not
 * followed by a context under the function that returned; a restart (number 0) starts over.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/callsync.h"
#include "kprof/hcct.h"

enum { MAIN = 1, HOT, WARM, COLD, LEAF, NF };
#define MAXEV 4096

struct ev {
	uint32_t func;
	bool exit;
};

/* The BPF side of one thread in one epoch: calls.bpf.c's count. */
struct bpf {
	uint32_t seq;
	int32_t depth, low;
};

static struct kp_call make(struct bpf *b, const struct ev *e, bool *sent, bool drop)
{
	struct kp_call c = {.func = e->func, .exit = e->exit, .epoch = 1, .tid = 7};

	b->depth += e->exit ? -1 : 1;
	if (b->depth < b->low)
		b->low = b->depth;
	c.seq = b->seq++;
	c.depth = b->depth;
	c.low = b->low;
	*sent = !drop;
	if (!drop)
		b->low = b->depth;
	return c;
}

static size_t call(struct ev *v, size_t n, uint32_t f)
{
	v[n++] = (struct ev){f, false};
	if (f == MAIN)
		for (int i = 0; i < 3; i++) {
			n = call(v, n, HOT);
			n = call(v, n, WARM);
			n = call(v, n, COLD);
		}
	if (f == WARM)
		for (int i = 0; i < 2; i++)
			n = call(v, n, LEAF);
	v[n++] = (struct ev){f, true};
	return n;
}

/* A context as a key: its functions, root first, 3 bits each (0: deeper than any of the
 * graph's, never entered). */
static uint32_t key_of(const uint32_t *s, int n)
{
	uint32_t k = 0;

	if (n > 4)
		return 0;
	for (int i = 0; i < n; i++)
		k = k << 3 | s[i];
	return k;
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 33;
}

/* Runs from event `start` of a few main calls, each event lost with probability 1/drop_in
 * (0: none): the tree's contexts against the true ones. */
static void run(uint64_t seed, size_t start, unsigned drop_in, uint64_t *lost_out)
{
	static struct ev v[MAXEV];
	static uint64_t truth[1u << 12], got[1u << 12];
	struct hcct *h = NULL;
	struct hcct_tree *t = NULL;
	struct callsync cs = {0};
	struct bpf b = {0};
	uint32_t stack[64], path[64];
	int depth = 0, low;
	uint64_t lost = 0, x = seed;
	size_t n = 0;

	memset(truth, 0, sizeof(truth));
	memset(got, 0, sizeof(got));
	for (int i = 0; i < 4; i++)
		n = call(v, n, MAIN);
	assert_true(n < MAXEV && start < n);
	assert_int_equal(hcct_new(&(struct hcct_params){.slots = 256}, &h), 0);
	for (size_t i = 0; i < start; i++) /* where the epoch finds the thread */
		if (v[i].exit)
			depth--;
		else
			stack[depth++] = v[i].func;
	low = depth;
	for (size_t i = start; i < n; i++) {
		bool sent, drop = drop_in && lcg(&x) % drop_in == 0;
		struct kp_call c = make(&b, &v[i], &sent, drop);

		if (v[i].exit) {
			depth--;
		} else {
			stack[depth++] = v[i].func;
			truth[key_of(stack + low,
				     depth - low)]++; /* what the thread really entered */
		}
		if (depth < low)
			low = depth;
		if (sent)
			callsync_event(h, &cs, &c, &lost);
	}
	callsync_reset(h, &cs);
	assert_int_equal(hcct_snapshot(h, &t), 0);
	for (size_t i = 0; i < t->len; i++) {
		const struct hcct_entry *e = &t->entries[i];

		if (e->depth <= 4)
			path[e->depth - 1] = e->id;
		if (e->flags & HCCT_ENTRY_MONITORED)
			got[key_of(path, (int)e->depth)] = e->count;
	}
	for (uint32_t k = 0; k < (1u << 12); k++) {
		if (got[k] > truth[k])
			fail_msg("seed %llu start %zu: context %o counted %llu times, entered %llu",
				 (unsigned long long)seed, start, k, (unsigned long long)got[k],
				 (unsigned long long)truth[k]);
		if (!drop_in && got[k] != truth[k])
			fail_msg("start %zu: context %o counted %llu, entered %llu", start, k,
				 (unsigned long long)got[k], (unsigned long long)truth[k]);
	}
	*lost_out += lost;
	hcct_tree_free(t);
	hcct_free(h);
}

static void test_exact_without_loss(void **state)
{
	uint64_t lost = 0;

	(void)state;
	for (size_t s = 0; s < 120; s += 7)
		run(1, s, 0, &lost);
	assert_int_equal(lost, 0);
}

static void test_losses(void **state)
{
	uint64_t lost = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 60; seed++)
		for (unsigned d = 2; d <= 17; d += 5)
			run(seed, (size_t)(seed * 13 % 120), d, &lost);
	assert_true(lost > 100); /* losses were made, and counted */
}

/* main, hot entered; hot's return and warm's entry lost; leaf entered: no context under hot,
 * none under a warm not seen; followed again from main once warm returns. */
static void test_lost_return(void **state)
{
	const struct ev evs[] = {{MAIN, false}, {HOT, false},  {HOT, true},
				 {WARM, false}, {LEAF, false}, {LEAF, true}};
	enum callsync_result want[] = {CALLSYNC_ENTERED, CALLSYNC_ENTERED, 0, 0,
				       CALLSYNC_SKIPPED, CALLSYNC_SKIPPED};
	struct hcct *h = NULL;
	struct hcct_tree *t = NULL;
	struct callsync cs = {0};
	struct bpf b = {0};
	uint64_t lost = 0;

	(void)state;
	assert_int_equal(hcct_new(&(struct hcct_params){.slots = 64}, &h), 0);
	for (size_t i = 0; i < 6; i++) {
		bool sent;
		struct kp_call c = make(&b, &evs[i], &sent, i == 2 || i == 3);

		if (sent)
			assert_int_equal(callsync_event(h, &cs, &c, &lost), want[i]);
	}
	assert_int_equal(lost, 2);
	/* warm's return brings it back to main: followed again. */
	{
		bool sent;
		struct ev e[] = {{WARM, true}, {COLD, false}};
		struct kp_call c = make(&b, &e[0], &sent, false);

		assert_int_equal(callsync_event(h, &cs, &c, &lost), CALLSYNC_SKIPPED);
		c = make(&b, &e[1], &sent, false);
		assert_int_equal(callsync_event(h, &cs, &c, &lost), CALLSYNC_ENTERED);
	}
	assert_int_equal(hcct_snapshot(h, &t), 0);
	for (size_t i = 0; i < t->len; i++) /* main, main>hot, main>cold: nothing deeper */
		assert_true(t->entries[i].depth <= 2 &&
			    (t->entries[i].depth == 1) == (t->entries[i].id == MAIN));
	assert_int_equal(t->len, 3);
	hcct_tree_free(t);
	callsync_reset(h, &cs);
	hcct_free(h);
}

/* A return with nothing entered moves the root down; number 0 again starts over. */
static void test_unmatched_and_restart(void **state)
{
	struct hcct *h = NULL;
	struct callsync cs = {0};
	struct bpf b = {0};
	uint64_t lost = 0;
	bool sent;
	struct ev e[] = {{WARM, true}, {COLD, false}, {COLD, true}, {HOT, false}};
	struct kp_call c;

	(void)state;
	assert_int_equal(hcct_new(&(struct hcct_params){.slots = 64}, &h), 0);
	c = make(&b, &e[0], &sent, false);
	assert_int_equal(callsync_event(h, &cs, &c, &lost), CALLSYNC_UNMATCHED);
	c = make(&b, &e[1], &sent, false);
	assert_int_equal(callsync_event(h, &cs, &c, &lost), CALLSYNC_ENTERED);
	c = make(&b, &e[2], &sent, false);
	assert_int_equal(callsync_event(h, &cs, &c, &lost), CALLSYNC_RETURNED);
	b = (struct bpf){0}; /* the BPF side started the thread over (a new task, evicted) */
	c = make(&b, &e[3], &sent, false);
	assert_int_equal(callsync_event(h, &cs, &c, &lost), CALLSYNC_ENTERED);
	assert_int_equal(cs.at, 1);
	assert_int_equal(cs.base, 0);
	assert_int_equal(lost, 0);
	callsync_reset(h, &cs);
	hcct_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exact_without_loss),
	    cmocka_unit_test(test_losses),
	    cmocka_unit_test(test_lost_return),
	    cmocka_unit_test(test_unmatched_and_restart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
