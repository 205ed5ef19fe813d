// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_cfg.c: libFuzzer target for CFG recovery and Ball-Larus numbering (daemon/lib/cfg*.c).
 *
 * The input is the code bytes of a function, as read from a target process, mapped at a fixed
 * address and entered at its first byte. It is built three ways: strict (flags 0), with
 * CFG_BAD_IS_EXIT, and with CFG_BAD_IS_EXIT | CFG_SPLIT_CALLS and a small path cap (so graphs
 * without a numbering come up). Errors must be the documented ones; CFG_BAD_IS_EXIT never
 * returns -ENODATA, and when the strict build succeeds it must build the same graph. Every
 * graph must pass cfg_check; every block must be found at its start and every edge by its
 * (from, to) pair. When there is a numbering, a few path ids (first, last, middle, some from the
 * input's hash) are decoded, encoded back to the same id, and replayed as the tracer would with
 * cfg_transition: the value it emits must be the id.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kprof/cfg.h"

#define CODE_START UINT64_C(0x401000)
#define NPATHS 8

/* Replay path steps[0..n) as a tracer with one probe per block leader; returns what it emits. */
static uint64_t replay(const struct cfg *g, const struct cfg_step *steps, int n)
{
	const struct cfg_block *first = cfg_block_get(g, steps[0].block);
	const struct cfg_block *last = cfg_block_get(g, steps[n - 1].block);
	struct cfg_transition t;
	uint64_t r = 0;
	int err;

	if (steps[0].block == cfg_entry_block(g)) {
		err = cfg_transition(g, CFG_NONE, steps[0].block, &t);
		FUZZ_CHECK(err == 0 && t.act == CFG_ACT_START, "entry transition: %d", err);
	} else {
		FUZZ_CHECK(first->flags & CFG_BLOCK_HEADER, "a path starts at a non-header");
		r = first->entry_val; /* the back edge that started it reset r */
	}
	for (int i = 0; i + 1 < n; i++) {
		err = cfg_transition(g, steps[i].block, steps[i + 1].block, &t);
		FUZZ_CHECK(err == 0 && t.act == CFG_ACT_ADD && t.edge == steps[i].edge,
			   "transition %u -> %u: %d", steps[i].block, steps[i + 1].block, err);
		r += t.add;
	}
	if (steps[n - 1].edge == CFG_NONE) {
		FUZZ_CHECK(last->flags & CFG_BLOCK_BACK_SRC, "a path ends on a back edge from a "
							     "block that has none");
		r += last->back_exit_val;
	} else {
		const struct cfg_edge *e = cfg_edge_get(g, steps[n - 1].edge);

		FUZZ_CHECK(e && e->dst == CFG_EXIT && (last->flags & CFG_BLOCK_EXIT) &&
			       e->val == last->exit_val,
			   "a path's last edge");
		r += last->exit_val;
	}
	return r;
}

static void check_path(const struct cfg *g, uint64_t id, struct cfg_step *steps, size_t cap)
{
	uint64_t back = ~id;
	int n = cfg_path_decode(g, id, steps, cap), err;

	FUZZ_CHECK(n >= 1 && (size_t)n <= cap, "cfg_path_decode(%llu): %d", (unsigned long long)id,
		   n);
	err = cfg_path_encode(g, steps, (size_t)n, &back);
	FUZZ_CHECK(err == 0 && back == id, "path %llu encodes back to %llu (%d)",
		   (unsigned long long)id, (unsigned long long)back, err);
	FUZZ_CHECK(replay(g, steps, n) == id, "the tracer emits %llu for path %llu",
		   (unsigned long long)replay(g, steps, n), (unsigned long long)id);
}

static void check_graph(const struct cfg *g, uint64_t seed)
{
	size_t nb = cfg_nblocks(g), ne = cfg_nedges(g);
	struct cfg_stats st;
	struct cfg_step *steps;
	uint64_t np;
	int err;

	err = cfg_check(g);
	FUZZ_CHECK(err == 0, "cfg_check: %d", err);
	cfg_get_stats(g, &st);
	FUZZ_CHECK(st.blocks == nb && st.edges == ne && st.bl_ok == cfg_bl_ok(g) &&
		       st.num_paths == cfg_num_paths(g),
		   "stats disagree with the graph");
	FUZZ_CHECK(nb >= 1 && cfg_entry_block(g) < nb &&
		       cfg_block_get(g, cfg_entry_block(g))->start == CODE_START,
		   "entry block");
	for (uint32_t i = 0; i < nb; i++)
		FUZZ_CHECK(cfg_block_find(g, cfg_block_get(g, i)->start) == (int)i,
			   "block %u not found at its start", i);
	FUZZ_CHECK(cfg_block_get(g, (uint32_t)nb) == NULL, "cfg_block_get past the end");
	for (uint32_t e = 0; e < ne; e++) {
		const struct cfg_edge *ed = cfg_edge_get(g, e);

		FUZZ_CHECK(cfg_edge_find(g, ed->src, ed->dst) == (int)e, "edge %u not found", e);
	}
	FUZZ_CHECK(cfg_edge_get(g, (uint32_t)ne) == NULL, "cfg_edge_get past the end");
	if (!cfg_bl_ok(g)) {
		struct cfg_step s;

		FUZZ_CHECK(cfg_num_paths(g) == 0 && cfg_path_decode(g, 0, &s, 1) == -EOVERFLOW,
			   "no numbering, yet paths");
		return;
	}
	np = cfg_num_paths(g);
	FUZZ_CHECK(np >= 1, "a numbering without paths");
	steps = malloc(nb * sizeof(*steps));
	FUZZ_CHECK(steps, "out of memory");
	check_path(g, 0, steps, nb);
	check_path(g, np - 1, steps, nb);
	check_path(g, np / 2, steps, nb);
	for (int i = 0; i < NPATHS; i++)
		check_path(g, prng_next(&seed) % np, steps, nb);
	FUZZ_CHECK(cfg_path_decode(g, np, steps, nb) == -ERANGE, "path id past the last");
	free(steps);
}

/* Same blocks, edges and numbering. */
static void check_same(const struct cfg *a, const struct cfg *b)
{
	FUZZ_CHECK(cfg_nblocks(a) == cfg_nblocks(b) && cfg_nedges(a) == cfg_nedges(b) &&
		       cfg_num_paths(a) == cfg_num_paths(b) && cfg_bl_ok(a) == cfg_bl_ok(b),
		   "strict and CFG_BAD_IS_EXIT graphs differ");
	for (uint32_t i = 0; i < cfg_nblocks(a); i++)
		FUZZ_CHECK(
		    !memcmp(cfg_block_get(a, i), cfg_block_get(b, i), sizeof(struct cfg_block)),
		    "block %u differs", i);
	for (uint32_t i = 0; i < cfg_nedges(a); i++) {
		const struct cfg_edge *x = cfg_edge_get(a, i), *y = cfg_edge_get(b, i);

		FUZZ_CHECK(x->src == y->src && x->dst == y->dst && x->kind == y->kind &&
			       x->back == y->back && x->val == y->val,
			   "edge %u differs", i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct cfg_limits bad_exit = {.flags = CFG_BAD_IS_EXIT};
	const struct cfg_limits split = {.flags = CFG_BAD_IS_EXIT | CFG_SPLIT_CALLS,
					 .max_paths = 64};
	uint64_t h = fuzz_hash(data, size);
	struct cfg *strict = NULL, *lenient = NULL, *g = NULL;
	int r1, r2, r3;

	if (size == 0)
		return 0;
	r1 = cfg_build(data, size, CODE_START, CODE_START, NULL, &strict);
	FUZZ_CHECK(r1 == 0 || r1 == -EINVAL || r1 == -ENODATA || r1 == -E2BIG || r1 == -ENOMEM,
		   "cfg_build: %d", r1);
	r2 = cfg_build(data, size, CODE_START, CODE_START, &bad_exit, &lenient);
	FUZZ_CHECK(r2 == 0 || r2 == -EINVAL || r2 == -E2BIG || r2 == -ENOMEM,
		   "cfg_build with CFG_BAD_IS_EXIT: %d", r2);
	if (r1 == 0) {
		FUZZ_CHECK(r2 == 0, "strict build succeeds, CFG_BAD_IS_EXIT fails with %d", r2);
		check_graph(strict, h);
		check_same(strict, lenient);
	}
	if (r2 == 0)
		check_graph(lenient, h);
	r3 = cfg_build(data, size, CODE_START, CODE_START, &split, &g);
	FUZZ_CHECK(r3 == 0 || r3 == -EINVAL || r3 == -E2BIG || r3 == -ENOMEM,
		   "cfg_build with CFG_SPLIT_CALLS: %d", r3);
	if (r3 == 0)
		check_graph(g, h);
	cfg_free(strict);
	cfg_free(lenient);
	cfg_free(g);
	return 0;
}
