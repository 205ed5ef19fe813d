// SPDX-License-Identifier: GPL-2.0-only
/* test_ksf.c: unit tests for the k-SF / k-IPF module (links daemon/lib/ksf.c alone).
 *
 * TV-K1 and TV-K2 (ALGORITHMS.md §4) are compared as sets of "path:count" lines. Random streams
 * of entries, path ids and exits are replayed into the module and into a naive oracle that keeps
 * each activation's path ids and counts every window of up to k of them when the activation
 * ends (§3.1); the k-IPF must equal the oracle exactly, cut at any level (K7), whatever the
 * child lookup (K8), and the invariants and counters of §5 must hold (K1-K6, ksf_check,
 * ksf_ipf_check). Under a node budget the k-IPF must be a lower bound within max_error of the
 * oracle, and contain no sequence that never occurred.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/ksf.h"
#include "kprof/ksf_ipf.h"

#include "../prng.h"

#define ORACLE_K 16 /* longest sequence the oracle keeps */

static struct ksf *new_ksf(unsigned k, const struct ksf_limits *lim)
{
	struct ksf *ks = NULL;

	assert_int_equal(ksf_new(k, lim, &ks), 0);
	assert_non_null(ks);
	return ks;
}

static struct ksf_ipf *build(const struct ksf *ks, unsigned max_len)
{
	struct ksf_ipf_opts o = {.max_len = max_len};
	struct ksf_ipf *ipf = NULL;

	assert_int_equal(ksf_ipf_build(ks, &o, &ipf), 0);
	assert_non_null(ipf);
	assert_int_equal(ksf_ipf_check(ipf), 0);
	return ipf;
}

static struct ksf_stats stats(const struct ksf *ks)
{
	struct ksf_stats st;

	ksf_get_stats(ks, &st);
	return st;
}

/* Stream syntax: a number is a path id; `*` ends the current activation (if any) and enters
 * routine 0, as a marker of a sequential stream; `[R` enters routine R; `]` exits. */
static void feed(struct ksf *ks, struct ksf_ctx *ctx, const char *stream)
{
	char *s = strdup(stream), *save = NULL;

	assert_non_null(s);
	for (char *t = strtok_r(s, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (!strcmp(t, "*")) {
			if (ksf_ctx_depth(ctx, NULL))
				assert_int_equal(ksf_exit(ks, ctx), 0);
			assert_int_equal(ksf_enter(ks, ctx, 0), 0);
		} else if (t[0] == '[') {
			assert_int_equal(ksf_enter(ks, ctx, strtoul(t + 1, NULL, 10)), 0);
		} else if (!strcmp(t, "]")) {
			assert_int_equal(ksf_exit(ks, ctx), 0);
		} else {
			assert_int_equal(ksf_push(ks, ctx, strtoull(t, NULL, 10)), 0);
		}
	}
	free(s);
}

/* --- dumps as sorted sets of lines --- */

struct lines {
	char **v;
	size_t n;
	bool routine;
};

static int collect_line(uint32_t routine, const uint64_t *path, size_t n, uint64_t count,
			void *userdata)
{
	struct lines *l = userdata;
	char buf[1024];
	size_t len = 0;

	if (l->routine)
		len += snprintf(buf + len, sizeof(buf) - len, "%u|", routine);
	for (size_t i = 0; i < n; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%llu", i ? "/" : "",
				(unsigned long long)path[i]);
	snprintf(buf + len, sizeof(buf) - len, ":%llu", (unsigned long long)count);
	l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
	assert_non_null(l->v);
	l->v[l->n++] = strdup(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines sorted and joined with spaces; frees them. */
static char *lines_join(struct lines *l)
{
	size_t len = 1;
	char *out;

	qsort(l->v, l->n, sizeof(*l->v), cmp_str);
	for (size_t i = 0; i < l->n; i++)
		len += strlen(l->v[i]) + 1;
	out = calloc(1, len);
	assert_non_null(out);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			strcat(out, " ");
		strcat(out, l->v[i]);
		free(l->v[i]);
	}
	free(l->v);
	*l = (struct lines){0};
	return out;
}

static char *sorted_set(const char *want)
{
	struct lines l = {0};
	char *s = strdup(want), *save = NULL;

	for (char *t = strtok_r(s, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
		l.v = realloc(l.v, (l.n + 1) * sizeof(*l.v));
		l.v[l.n++] = strdup(t);
	}
	free(s);
	return lines_join(&l);
}

static void expect_sf(const struct ksf *ks, const char *want)
{
	struct lines l = {0};
	char *got, *exp = sorted_set(want);

	assert_int_equal(ksf_foreach_node(ks, collect_line, &l), 0);
	got = lines_join(&l);
	assert_string_equal(got, exp);
	free(got);
	free(exp);
}

static void expect_ipf(const struct ksf_ipf *ipf, bool routine, const char *want)
{
	struct lines l = {.routine = routine};
	char *got, *exp = sorted_set(want);

	assert_int_equal(ksf_ipf_foreach(ipf, KSF_ORDER_TREE, collect_line, &l), 0);
	got = lines_join(&l);
	assert_string_equal(got, exp);
	free(got);
	free(exp);
}

static void expect_levels(const struct ksf_ipf *ipf, const uint64_t *sums, unsigned n)
{
	struct ksf_ipf_stats st;

	ksf_ipf_get_stats(ipf, &st);
	assert_int_equal(st.max_len, n);
	for (unsigned j = 0; j < KSF_K_MAX; j++)
		assert_int_equal(st.level_sum[j], j < n ? sums[j] : 0);
}

/* --- TV-K1, TV-K2 --- */

#define TV_K1 "* 6 2 0 0 2 2 0 0 2 2 0 0 2 3"

static void test_tv_k1(void **state)
{
	struct ksf_ctx ctx = {0};
	struct ksf *ks = new_ksf(4, NULL);
	struct ksf_ipf *ipf;
	struct ksf_ipf_stats ist;
	const uint64_t sums[] = {14, 13, 12, 11}, p2002[] = {2, 0, 0, 2}, p20[] = {2, 0};
	const uint64_t p5[] = {6, 2, 0, 0, 2}, p9[] = {9};
	struct ksf_stats st;

	(void)state;
	feed(ks, &ctx, TV_K1);
	assert_int_equal(ksf_check(ks), 0);
	expect_sf(ks, "6:1 6/2:1 6/2/0:1 6/2/0/0:1 6/2/0/0/2:1 6/2/0/0/2/2:1 "
		      "0:0 0/2:0 0/2/2:0 0/2/2/0:1 0/2/2/0/0:1 0/2/2/0/0/2:1 "
		      "0/0:0 0/0/2:0 0/0/2/2:1 0/0/2/2/0:1 0/0/2/2/0/0:1 "
		      "2:0 2/0:0 2/0/0:0 2/0/0/2:1 2/0/0/2/3:1 2/3:0");
	st = stats(ks);
	assert_int_equal(st.nodes, 23);
	assert_int_equal(st.roots, 3);
	assert_int_equal(st.root_lookups, 5);
	assert_int_equal(st.items, 14);
	assert_int_equal(st.upper + st.lower, 14);
	assert_int_equal(st.upper, 3); /* K4: min(14, 3) */
	assert_int_equal(st.lower, 11);
	assert_int_equal(st.pruned_nodes, 0);

	ipf = build(ks, 0);
	expect_ipf(ipf, false,
		   "6:1 6/2:1 6/2/0:1 6/2/0/0:1 "
		   "2:6 2/0:3 2/0/0:3 2/0/0/2:3 2/2:2 2/2/0:2 2/2/0/0:2 2/3:1 "
		   "0:6 0/0:3 0/0/2:3 0/0/2/2:2 0/0/2/3:1 0/2:3 0/2/2:2 0/2/2/0:2 0/2/3:1 3:1");
	expect_levels(ipf, sums, 4);
	ksf_ipf_get_stats(ipf, &ist);
	assert_int_equal(ist.nodes, 22);
	assert_int_equal(ist.roots, 4);
	assert_int_equal(ist.max_error, 0);
	assert_int_equal(ksf_ipf_count(ipf, 0, p2002, 4), 3); /* T: "occurs 3 times" */
	assert_int_equal(ksf_ipf_count(ipf, 0, p20, 2), 3);
	assert_int_equal(ksf_ipf_count(ipf, 1, p20, 2), 0); /* other routine */
	assert_int_equal(ksf_ipf_count(ipf, 0, p5, 5), 0);  /* never k+1 levels */
	assert_int_equal(ksf_ipf_count(ipf, 0, p5, 4), 1);  /* <6,2,0,0> */
	assert_int_equal(ksf_ipf_count(ipf, 0, p9, 1), 0);
	assert_int_equal(ksf_ipf_count(ipf, 0, p9, 0), 0);
	ksf_ipf_free(ipf);

	/* max_len above k means k. */
	ipf = build(ks, 10);
	ksf_ipf_get_stats(ipf, &ist);
	assert_int_equal(ist.max_len, 4);
	assert_int_equal(ist.nodes, 22);
	ksf_ipf_free(ipf);
	/* Cutting at level 1 gives the Ball-Larus profile (K7). */
	ipf = build(ks, 1);
	expect_ipf(ipf, false, "6:1 2:6 0:6 3:1");
	ksf_ipf_free(ipf);
	/* And at level 3 the 3-IPF. */
	ipf = build(ks, 3);
	ksf_ipf_get_stats(ipf, &ist);
	assert_int_equal(ist.nodes, 16);
	assert_int_equal(ist.level_sum[0] + ist.level_sum[1] + ist.level_sum[2], 39);
	ksf_ipf_free(ipf);
	ksf_ctx_release(&ctx);
	ksf_free(ks);
}

static void test_tv_k1_other_k(void **state)
{
	struct ksf_ctx ctx = {0};
	struct ksf *ks = new_ksf(2, NULL);
	struct ksf_ipf *ipf;
	struct ksf_ipf_stats ist;
	const uint64_t sums2[] = {14, 13}, sums3[] = {14, 13, 12};

	(void)state;
	feed(ks, &ctx, TV_K1);
	assert_int_equal(ksf_check(ks), 0);
	expect_sf(ks, "6:1 6/2:1 2:0 2/0:3 2/2:2 2/3:1 0:0 0/0:3 0/2:3 3:0");
	assert_int_equal(stats(ks).root_lookups, 14);
	ipf = build(ks, 0);
	ksf_ipf_get_stats(ipf, &ist);
	assert_int_equal(ist.nodes, 10);
	expect_levels(ipf, sums2, 2); /* total 27 */
	ksf_ipf_free(ipf);
	ksf_ctx_release(&ctx);
	ksf_free(ks);

	ks = new_ksf(3, NULL);
	feed(ks, &ctx, TV_K1);
	assert_int_equal(ksf_check(ks), 0);
	assert_int_equal(stats(ks).nodes, 14);
	assert_int_equal(stats(ks).root_lookups, 7);
	ipf = build(ks, 0);
	ksf_ipf_get_stats(ipf, &ist);
	assert_int_equal(ist.nodes, 16);
	expect_levels(ipf, sums3, 3); /* total 39 */
	ksf_ipf_free(ipf);
	ksf_ctx_release(&ctx);
	ksf_free(ks);

	/* k = 1: a Ball-Larus hash-table profile, one lookup per path id. */
	ks = new_ksf(1, NULL);
	feed(ks, &ctx, TV_K1);
	assert_int_equal(ksf_check(ks), 0);
	expect_sf(ks, "6:1 2:6 0:6 3:1");
	assert_int_equal(stats(ks).root_lookups, 14);
	ipf = build(ks, 0);
	expect_ipf(ipf, false, "6:1 2:6 0:6 3:1");
	ksf_ipf_free(ipf);
	ksf_ctx_release(&ctx);
	ksf_free(ks);
}

static void test_tv_k2(void **state)
{
	struct ksf_ctx ctx = {0};
	struct ksf *ks = new_ksf(3, NULL);
	struct ksf_ipf *ipf;
	struct ksf_ipf_stats ist;
	const uint64_t sums[] = {10, 7, 5}, p74[] = {7, 4}, p16[] = {1, 6};
	struct ksf_stats st;

	(void)state;
	feed(ks, &ctx, "* 7 * 4 0 0 1 * 6 2 0 2 3");
	assert_int_equal(ksf_check(ks), 0);
	expect_sf(ks, "7:1 4:1 4/0:1 4/0/0:1 4/0/0/1:1 6:1 6/2:1 6/2/0:1 6/2/0/2:1 "
		      "0:0 0/1:0 0/2:0 0/2/3:1 3:0");
	st = stats(ks);
	assert_int_equal(st.nodes, 14);
	assert_int_equal(st.upper + st.lower, 10);
	assert_int_equal(st.root_lookups, 6);
	assert_int_equal(st.upper, 1 + 2 + 2);
	assert_int_equal(st.lower, 0 + 2 + 3);
	ipf = build(ks, 0);
	expect_ipf(ipf, false,
		   "7:1 4:1 4/0:1 4/0/0:1 6:1 6/2:1 6/2/0:1 1:1 3:1 "
		   "0:3 0/0:1 0/0/1:1 0/1:1 0/2:1 0/2/3:1 2:2 2/0:1 2/0/2:1 2/3:1");
	expect_levels(ipf, sums, 3);
	ksf_ipf_get_stats(ipf, &ist);
	assert_int_equal(ist.nodes, 19);
	assert_int_equal(ksf_ipf_count(ipf, 0, p74, 2), 0); /* no n-gram crosses a `*` */
	assert_int_equal(ksf_ipf_count(ipf, 0, p16, 2), 0);
	ksf_ipf_free(ipf);
	ksf_ctx_release(&ctx);
	ksf_free(ks);
}

/* A callee's path ids never extend the caller's sequences; the caller's spans the call. */
static void test_nested(void **state)
{
	struct ksf_ctx ctx = {0};
	struct ksf *ks;
	struct ksf_ipf *ipf;
	uint32_t r = 99;

	(void)state;
	for (unsigned k = 2; k <= 4; k++) {
		ks = new_ksf(k, NULL);
		feed(ks, &ctx, "[1 1 2");
		assert_int_equal(ksf_ctx_depth(&ctx, &r), 1);
		assert_int_equal(r, 1);
		feed(ks, &ctx, "[2 5 6");
		assert_int_equal(ksf_ctx_depth(&ctx, &r), 2);
		assert_int_equal(r, 2);
		feed(ks, &ctx, "] 3 ]");
		assert_int_equal(ksf_ctx_depth(&ctx, NULL), 0);
		assert_int_equal(ksf_check(ks), 0);
		ipf = build(ks, 0);
		if (k == 2)
			expect_ipf(ipf, true,
				   "1|1:1 1|2:1 1|3:1 1|1/2:1 1|2/3:1 2|5:1 2|6:1 2|5/6:1");
		else
			expect_ipf(ipf, true,
				   "1|1:1 1|2:1 1|3:1 1|1/2:1 1|2/3:1 1|1/2/3:1 "
				   "2|5:1 2|6:1 2|5/6:1");
		ksf_ipf_free(ipf);
		ksf_free(ks);
	}
	ksf_ctx_release(&ctx);
}

/* Recursion: each activation of the same routine has its own sequence; trees are shared. */
static void test_recursive(void **state)
{
	struct ksf_ctx ctx = {0};
	struct ksf *ks = new_ksf(3, NULL);
	struct ksf_ipf *ipf;

	(void)state;
	feed(ks, &ctx, "[7 1 2 [7 1 2 [7 3 ] 4 ] 3 ]");
	assert_int_equal(ksf_check(ks), 0);
	ipf = build(ks, 0);
	/* Activations: [1 2 3], [1 2 4], [3]. */
	expect_ipf(ipf, true,
		   "7|1:2 7|2:2 7|3:2 7|4:1 7|1/2:2 7|2/3:1 7|2/4:1 7|1/2/3:1 7|1/2/4:1");
	ksf_ipf_free(ipf);
	ksf_ctx_release(&ctx);
	ksf_free(ks);
}

/* --- the oracle --- */

struct gram {
	uint32_t routine, n;
	uint64_t count;
	uint64_t p[ORACLE_K];
};

struct grams {
	struct gram *v;
	size_t n, cap;
};

static void grams_add(struct grams *g, uint32_t routine, const uint64_t *p, size_t n,
		      uint64_t count)
{
	struct gram *x;

	assert_true(n >= 1 && n <= ORACLE_K);
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 256;
		g->v = realloc(g->v, g->cap * sizeof(*g->v));
		assert_non_null(g->v);
	}
	x = &g->v[g->n++];
	memset(x, 0, sizeof(*x));
	x->routine = routine;
	x->n = n;
	x->count = count;
	memcpy(x->p, p, n * sizeof(*p));
}

static int gram_cmp(const void *a, const void *b)
{
	const struct gram *x = a, *y = b;

	if (x->routine != y->routine)
		return x->routine < y->routine ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	for (size_t i = 0; i < x->n; i++)
		if (x->p[i] != y->p[i])
			return x->p[i] < y->p[i] ? -1 : 1;
	return 0;
}

/* Sort and sum duplicates. */
static void grams_merge(struct grams *g)
{
	size_t w = 0;

	if (!g->n)
		return;
	qsort(g->v, g->n, sizeof(*g->v), gram_cmp);
	for (size_t i = 1; i < g->n; i++) {
		if (!gram_cmp(&g->v[w], &g->v[i]))
			g->v[w].count += g->v[i].count;
		else
			g->v[++w] = g->v[i];
	}
	g->n = w + 1;
}

static int collect_gram(uint32_t routine, const uint64_t *path, size_t n, uint64_t count,
			void *userdata)
{
	grams_add(userdata, routine, path, n, count);
	return 0;
}

struct oact {
	uint32_t routine;
	uint64_t *items;
	size_t n, cap;
};

struct oracle {
	unsigned k;
	struct oact stack[128];
	size_t depth;
	struct grams g;
	uint64_t lookups, upper, lower, items;
};

static void oracle_enter(struct oracle *o, uint32_t routine)
{
	assert_true(o->depth < 128);
	o->stack[o->depth++] = (struct oact){.routine = routine};
}

static void oracle_push(struct oracle *o, uint64_t label)
{
	struct oact *a = &o->stack[o->depth - 1];

	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 16;
		a->items = realloc(a->items, a->cap * sizeof(*a->items));
		assert_non_null(a->items);
	}
	a->items[a->n++] = label;
	o->items++;
}

/* Count every window of up to k path ids of the activation (§3.1), and K3/K4's sums. */
static void oracle_exit(struct oracle *o)
{
	struct oact *a = &o->stack[--o->depth];
	size_t c = o->k > 1 ? o->k - 1 : 1;

	for (size_t i = 0; i < a->n; i++)
		for (size_t n = 1; n <= o->k && n <= i + 1; n++)
			grams_add(&o->g, a->routine, a->items + i + 1 - n, n, 1);
	o->lookups += (a->n + c - 1) / c;
	o->upper += o->k > 1 ? (a->n < c ? a->n : c) : a->n;
	o->lower += o->k > 1 && a->n > c ? a->n - c : 0;
	free(a->items);
}

static void oracle_finish(struct oracle *o)
{
	while (o->depth)
		oracle_exit(o);
	grams_merge(&o->g);
}

static void grams_free(struct grams *g)
{
	free(g->v);
	*g = (struct grams){0};
}

static struct grams ipf_grams(const struct ksf_ipf *ipf)
{
	struct grams g = {0};

	assert_int_equal(ksf_ipf_foreach(ipf, KSF_ORDER_TREE, collect_gram, &g), 0);
	grams_merge(&g);
	return g;
}

static void fail_gram(const char *what, const struct gram *x)
{
	char buf[512];
	size_t len = 0;

	for (size_t i = 0; i < x->n; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%llu", i ? "/" : "",
				(unsigned long long)x->p[i]);
	fail_msg("%s: routine %u path %s count %llu", what, x->routine, buf,
		 (unsigned long long)x->count);
}

/* The k-IPF cut at max_len equals the oracle's grams of length <= max_len. */
static void expect_grams(const struct ksf_ipf *ipf, const struct grams *want, unsigned max_len)
{
	struct grams got = ipf_grams(ipf);
	size_t j = 0;

	for (size_t i = 0; i < want->n; i++) {
		if (want->v[i].n > max_len)
			continue;
		if (j >= got.n || gram_cmp(&got.v[j], &want->v[i]))
			fail_gram("missing from the k-IPF", &want->v[i]);
		if (got.v[j].count != want->v[i].count)
			fail_gram("wrong count in the k-IPF", &got.v[j]);
		j++;
	}
	if (j != got.n)
		fail_gram("not in the oracle", &got.v[j]);
	grams_free(&got);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return prng_next(&rng_state);
}

static unsigned rnd_below(unsigned n)
{
	return rnd() % n;
}

struct gen {
	unsigned routines, alphabet, max_depth, events;
	unsigned p_enter, p_exit; /* percent */
	bool bad;		  /* also push and exit with no activation */
	unsigned check_every;	  /* ksf_check every that many events (0: never) */
};

/* Replays one random stream into ks and the oracle. */
static void run_stream(struct ksf *ks, struct oracle *o, const struct gen *g)
{
	struct ksf_ctx ctx = {0};
	uint64_t bad = 0;

	for (unsigned e = 0; e < g->events; e++) {
		unsigned r = rnd_below(100);

		if (g->check_every && e % g->check_every == 0)
			assert_int_equal(ksf_check(ks), 0);
		if (!o->depth && g->bad && r < 5) {
			bad++;
			if (r & 1)
				assert_int_equal(ksf_push(ks, &ctx, 1), -EINVAL);
			else
				assert_int_equal(ksf_exit(ks, &ctx), -EINVAL);
		} else if (!o->depth || (r < g->p_enter && o->depth < g->max_depth)) {
			uint32_t routine = rnd_below(g->routines);

			assert_int_equal(ksf_enter(ks, &ctx, routine), 0);
			oracle_enter(o, routine);
		} else if (r < g->p_enter + g->p_exit) {
			assert_int_equal(ksf_exit(ks, &ctx), 0);
			oracle_exit(o);
		} else {
			/* Skewed ids, so that sequences repeat. */
			uint64_t id = rnd_below(1 + rnd_below(g->alphabet));

			assert_int_equal(ksf_push(ks, &ctx, id), 0);
			oracle_push(o, id);
		}
	}
	assert_int_equal(stats(ks).bad_events, bad);
	ksf_ctx_release(&ctx);
}

static void test_random_oracle(void **state)
{
	const uint32_t index_mins[] = {1, 2, 8, UINT32_MAX};
	const unsigned ks_[] = {1, 2, 3, 4, 5, 6, 8, 11, 16};

	(void)state;
	rng_state = 42;
	for (unsigned iter = 0; iter < 400; iter++) {
		struct ksf_limits lim = {.index_min = index_mins[iter % 4]};
		unsigned k = ks_[rnd_below(sizeof(ks_) / sizeof(ks_[0]))];
		struct oracle o = {.k = k};
		struct gen g = {
		    .routines = 1 + rnd_below(3),
		    .alphabet = 1 + rnd_below(iter % 3 ? 6 : 40),
		    .max_depth = 1 + rnd_below(6),
		    .events = rnd_below(iter % 10 ? 300 : 3000),
		    .p_enter = 2 + rnd_below(15),
		    .p_exit = 2 + rnd_below(15),
		    .bad = iter % 2,
		};
		struct ksf *ks = new_ksf(k, &lim);
		struct ksf_ipf *ipf;
		struct ksf_stats st;
		unsigned cut = 1 + rnd_below(k);

		run_stream(ks, &o, &g);
		assert_int_equal(ksf_check(ks), 0);
		oracle_finish(&o);
		st = stats(ks);
		assert_int_equal(st.items, o.items);	      /* K1 */
		assert_int_equal(st.root_lookups, o.lookups); /* K3 */
		assert_int_equal(st.upper, o.upper);	      /* K4 */
		assert_int_equal(st.lower, o.lower);
		assert_int_equal(st.pruned_nodes, 0);
		assert_int_equal(st.dropped, 0);
		ipf = build(ks, 0); /* ksf_ipf_check: K5, K6 */
		expect_grams(ipf, &o.g, k);
		ksf_ipf_free(ipf);
		ipf = build(ks, cut); /* K7: the cut k-IPF is the cut-IPF */
		expect_grams(ipf, &o.g, cut);
		ksf_ipf_free(ipf);
		grams_free(&o.g);
		ksf_free(ks);
	}
}

/* Same stream, lists or hashed children: the same k-IPF (K8), fewer scans when hashed. */
static void test_high_degree(void **state)
{
	struct ksf_limits lists = {.index_min = UINT32_MAX}, hashed = {0};
	struct ksf *a = new_ksf(4, &lists), *b = new_ksf(4, &hashed);
	struct ksf_ctx ca = {0}, cb = {0};
	struct grams ga, gb;
	struct ksf_ipf *ia, *ib;
	struct ksf_stats sa, sb;

	(void)state;
	rng_state = 7;
	assert_int_equal(ksf_enter(a, &ca, 3), 0);
	assert_int_equal(ksf_enter(b, &cb, 3), 0);
	for (unsigned i = 0; i < 60000; i++) {
		/* An interpreter-like loop: a dispatch path, then one of 300 handler paths. */
		uint64_t id = i % 2 ? 1000 + rnd_below(300) : 1;

		assert_int_equal(ksf_push(a, &ca, id), 0);
		assert_int_equal(ksf_push(b, &cb, id), 0);
	}
	assert_int_equal(ksf_check(a), 0);
	assert_int_equal(ksf_check(b), 0);
	sa = stats(a);
	sb = stats(b);
	assert_int_equal(sa.indexed, 0);
	assert_true(sb.indexed > 0);
	assert_int_equal(sa.nodes, sb.nodes);
	assert_true(sb.scans * 10 < sa.scans);
	ia = build(a, 0);
	ib = build(b, 0);
	ga = ipf_grams(ia);
	gb = ipf_grams(ib);
	assert_int_equal(ga.n, gb.n);
	assert_memory_equal(ga.v, gb.v, ga.n * sizeof(*ga.v));
	grams_free(&ga);
	grams_free(&gb);
	ksf_ipf_free(ia);
	ksf_ipf_free(ib);
	ksf_ctx_release(&ca);
	ksf_ctx_release(&cb);
	ksf_free(a);
	ksf_free(b);
}

/* --- budget and pruning --- */

/* Every k-IPF count is a lower bound within max_error of the truth, and every k-IPF sequence
 * did occur. */
static void expect_lower_bound(const struct ksf_ipf *ipf, const struct grams *want)
{
	struct grams got = ipf_grams(ipf);
	struct ksf_ipf_stats ist;

	ksf_ipf_get_stats(ipf, &ist);
	for (size_t i = 0; i < got.n; i++) {
		const struct gram *t =
		    bsearch(&got.v[i], want->v, want->n, sizeof(*want->v), gram_cmp);

		if (!t)
			fail_gram("sequence that never occurred", &got.v[i]);
		else if (got.v[i].count > t->count)
			fail_gram("count above the truth", &got.v[i]);
	}
	for (size_t i = 0; i < want->n; i++) {
		uint64_t c = ksf_ipf_count(ipf, want->v[i].routine, want->v[i].p, want->v[i].n);

		if (c + (want->v[i].n == 1 ? ist.max_error_1 : ist.max_error) < want->v[i].count)
			fail_gram("count below truth - max_error", &want->v[i]);
	}
	grams_free(&got);
}

static void test_budget_random(void **state)
{
	uint64_t passes = 0, recoveries = 0;

	(void)state;
	rng_state = 1234;
	for (unsigned iter = 0; iter < 120; iter++) {
		unsigned k = 1 + rnd_below(8);
		struct ksf_limits lim = {.max_nodes = 16 * k + rnd_below(200),
					 .index_min = iter % 2 ? 2 : 8};
		struct oracle o = {.k = k};
		struct gen g = {
		    .routines = 1 + rnd_below(4),
		    .alphabet = 4 + rnd_below(30),
		    .max_depth = 1 + rnd_below(12),
		    .events = 500 + rnd_below(3000),
		    .p_enter = 3 + rnd_below(10),
		    .p_exit = 3 + rnd_below(10),
		    .check_every = 97,
		};
		struct ksf *ks = new_ksf(k, &lim);
		struct ksf_ipf *ipf;
		struct ksf_ipf_stats ist;
		struct ksf_stats st;

		run_stream(ks, &o, &g);
		assert_int_equal(ksf_check(ks), 0);
		oracle_finish(&o);
		st = stats(ks);
		assert_true(st.nodes <= st.max_nodes);
		assert_true(st.max_nodes >= 64 && st.max_nodes >= 16 * k);
		assert_int_equal(st.items, o.items);
		assert_int_equal(st.root_lookups, o.lookups); /* pruning never changes chunking */
		assert_int_equal(st.upper, o.upper);
		assert_int_equal(st.lower, o.lower);
		passes += st.prune_passes;
		recoveries += st.recoveries;
		if (!st.prune_passes)
			assert_int_equal(st.pruned_nodes, 0);
		ipf = build(ks, 0);
		ksf_ipf_get_stats(ipf, &ist);
		assert_true(st.folded_items <= st.items);
		assert_int_equal(ist.max_error, st.pruned_items + st.folded_items);
		assert_int_equal(ist.max_error_1, st.pruned_items);
		if (!ist.max_error)
			expect_grams(ipf, &o.g, k); /* nothing lost: exact */
		else
			expect_lower_bound(ipf, &o.g);
		ksf_ipf_free(ipf);
		grams_free(&o.g);
		ksf_free(ks);
	}
	assert_true(passes > 100);
	assert_true(recoveries > 100);
}

static int top_one(uint32_t routine, const uint64_t *path, size_t n, uint64_t count, void *userdata)
{
	struct gram *g = userdata;

	if (n < 4)
		return 0;
	g->routine = routine;
	g->n = n;
	g->count = count;
	memcpy(g->p, path, n * sizeof(*path));
	return -ECANCELED; /* the first 4-sequence in count order is enough */
}

static uint64_t oracle_count(const struct oracle *o, uint32_t routine, const uint64_t *p, size_t n)
{
	struct gram key = {.routine = routine, .n = n};
	const struct gram *g;

	memcpy(key.p, p, n * sizeof(*p));
	g = bsearch(&key, o->g.v, o->g.n, sizeof(key), gram_cmp);
	return g ? g->count : 0;
}

/* A hot loop among cold noise, in a budget far too small for the noise: hot sequences lose
 * only the occurrences whose k-SF context (up to 2k-2 path ids) held noise, and the BL profile
 * keeps nearly all of them thanks to folding. This is the behaviour of the policy on this
 * stream (documented figures); the guarantee is the lower bound checked above. */
static void test_budget_hot_survives(void **state)
{
	struct ksf_limits lim = {.max_nodes = 512};
	struct ksf *ks = new_ksf(4, &lim);
	struct ksf_ctx ctx = {0};
	struct oracle o = {.k = 4};
	const uint64_t hot[] = {1, 2, 3, 4};
	struct ksf_ipf *ipf;
	struct ksf_stats st;
	struct gram top = {0};
	uint64_t t1, t3, t4, g1, g3, g4;

	(void)state;
	rng_state = 99;
	for (unsigned call = 0; call < 2000; call++) {
		assert_int_equal(ksf_enter(ks, &ctx, 0), 0);
		oracle_enter(&o, 0);
		for (unsigned i = 0; i < 40; i++) {
			uint64_t id = rnd_below(100) < 20 ? 100 + rnd_below(5000) : hot[i % 4];

			assert_int_equal(ksf_push(ks, &ctx, id), 0);
			oracle_push(&o, id);
		}
		assert_int_equal(ksf_exit(ks, &ctx), 0);
		oracle_exit(&o);
	}
	oracle_finish(&o);
	assert_int_equal(ksf_check(ks), 0);
	st = stats(ks);
	assert_true(st.prune_passes > 100);
	assert_true(st.pruned_items > 0 && st.folded_items > 0);
	ipf = build(ks, 0);
	expect_lower_bound(ipf, &o.g);
	t1 = oracle_count(&o, 0, hot, 1);
	t3 = oracle_count(&o, 0, hot, 3);
	t4 = oracle_count(&o, 0, hot, 4);
	g1 = ksf_ipf_count(ipf, 0, hot, 1);
	g3 = ksf_ipf_count(ipf, 0, hot, 3);
	g4 = ksf_ipf_count(ipf, 0, hot, 4);
	print_message("hot <1>: %llu of %llu, <1,2,3>: %llu of %llu, <1,2,3,4>: %llu of %llu; "
		      "pruned %llu folded %llu of %llu items\n",
		      (unsigned long long)g1, (unsigned long long)t1, (unsigned long long)g3,
		      (unsigned long long)t3, (unsigned long long)g4, (unsigned long long)t4,
		      (unsigned long long)st.pruned_items, (unsigned long long)st.folded_items,
		      (unsigned long long)st.items);
	assert_true(g1 * 1000 >= t1 * 995);
	assert_true(g3 * 100 >= t3 * 80);
	assert_true(g4 * 100 >= t4 * 75);
	assert_int_equal(ksf_ipf_foreach(ipf, KSF_ORDER_COUNT, top_one, &top), -ECANCELED);
	assert_int_equal(top.n, 4); /* still the hottest 4-sequence */
	assert_int_equal(top.count, g4);
	ksf_ipf_free(ipf);
	ksf_ctx_release(&ctx);
	grams_free(&o.g);
	ksf_free(ks);
}

/* --- errors, limits, iteration --- */

static void test_bad_input(void **state)
{
	struct ksf *ks = NULL, *other = new_ksf(2, NULL);
	struct ksf_ctx ctx = {0};
	struct ksf_limits lim = {.max_depth = 2};
	struct ksf_ipf *ipf;

	(void)state;
	assert_int_equal(ksf_new(0, NULL, &ks), -EINVAL);
	assert_int_equal(ksf_new(KSF_K_MAX + 1, NULL, &ks), -EINVAL);
	assert_null(ks);
	ksf_free(NULL);
	ksf_ipf_free(NULL);
	ksf_ctx_release(&ctx);

	ks = new_ksf(3, &lim);
	assert_int_equal(ksf_push(ks, &ctx, 1), -EINVAL);
	assert_int_equal(ksf_exit(ks, &ctx), -EINVAL);
	assert_int_equal(stats(ks).bad_events, 2);
	assert_int_equal(stats(ks).items, 0);

	/* Past max_depth: untracked, its ids dropped, its exit still pairs. */
	feed(ks, &ctx, "[1 1 2 [2 7");
	assert_int_equal(ksf_enter(ks, &ctx, 3), -E2BIG);
	assert_int_equal(ksf_push(ks, &ctx, 5), -E2BIG);
	assert_int_equal(ksf_enter(ks, &ctx, 4), -E2BIG);
	assert_int_equal(ksf_ctx_depth(&ctx, NULL), 4);
	assert_int_equal(ksf_push(ks, &ctx, 5), -E2BIG);
	feed(ks, &ctx, "] ] 8 ] 3 ]");
	assert_int_equal(ksf_exit(ks, &ctx), -EINVAL);

	/* A ctx with activations belongs to its ksf. */
	feed(ks, &ctx, "[1 4");
	assert_int_equal(ksf_push(other, &ctx, 1), -EINVAL);
	assert_int_equal(ksf_enter(other, &ctx, 1), -EINVAL);
	assert_int_equal(ksf_exit(other, &ctx), -EINVAL);
	assert_int_equal(stats(other).bad_events, 3);
	feed(ks, &ctx, "]");
	assert_int_equal(ksf_check(ks), 0);
	assert_int_equal(stats(ks).dropped, 2);
	assert_int_equal(stats(ks).items, 8);
	assert_int_equal(stats(ks).bad_events, 3);

	ipf = build(ks, 0);
	expect_ipf(ipf, true,
		   "1|1:1 1|2:1 1|3:1 1|4:1 1|1/2:1 1|2/3:1 1|1/2/3:1 2|7:1 2|8:1 2|7/8:1");
	ksf_ipf_free(ipf);

	/* Empty once released, then usable with another ksf. */
	ksf_ctx_release(&ctx);
	feed(other, &ctx, "[1 1 1 1 ]");
	assert_int_equal(ksf_check(other), 0);
	ksf_ctx_release(&ctx);
	ksf_free(ks);
	ksf_free(other);
}

struct order_check {
	uint64_t last;
	size_t n;
	bool first;
};

static int check_order(uint32_t routine, const uint64_t *path, size_t n, uint64_t count,
		       void *userdata)
{
	struct order_check *oc = userdata;

	(void)routine;
	(void)path;
	(void)n;
	if (!oc->first && count > oc->last)
		return -EDOM;
	oc->first = false;
	oc->last = count;
	oc->n++;
	return 0;
}

static int stop_at_three(uint32_t routine, const uint64_t *path, size_t n, uint64_t count,
			 void *userdata)
{
	size_t *calls = userdata;

	(void)routine;
	(void)path;
	(void)n;
	(void)count;
	return ++*calls == 3 ? -EINTR : 0;
}

static void test_iteration_and_queries(void **state)
{
	struct ksf *ks = new_ksf(5, NULL);
	struct ksf_ipf *ipf;
	struct ksf_ipf_opts one = {.one_routine = true, .routine = 1};
	struct ksf_ipf_opts tiny = {.max_nodes = 3};
	struct order_check oc = {.first = true};
	struct lines l = {.routine = true};
	struct ksf_ipf_stats ist;
	size_t calls = 0;
	char *a, *b;

	(void)state;
	rng_state = 5;
	{
		struct oracle o = {.k = 5};
		struct gen g = {.routines = 3,
				.alphabet = 5,
				.max_depth = 4,
				.events = 2000,
				.p_enter = 8,
				.p_exit = 8};

		run_stream(ks, &o, &g);
		oracle_finish(&o);
		grams_free(&o.g);
	}
	ipf = build(ks, 0);
	ksf_ipf_get_stats(ipf, &ist);
	assert_int_equal(ksf_ipf_foreach(ipf, KSF_ORDER_COUNT, check_order, &oc), 0);
	assert_int_equal(oc.n, ist.nodes);
	/* Both orders list the same entries; the count order is deterministic. */
	assert_int_equal(ksf_ipf_foreach(ipf, KSF_ORDER_TREE, collect_line, &l), 0);
	a = lines_join(&l);
	l.routine = true;
	assert_int_equal(ksf_ipf_foreach(ipf, KSF_ORDER_COUNT, collect_line, &l), 0);
	b = lines_join(&l);
	assert_string_equal(a, b);
	free(a);
	free(b);
	assert_int_equal(ksf_ipf_foreach(ipf, KSF_ORDER_COUNT, stop_at_three, &calls), -EINTR);
	calls = 0;
	assert_int_equal(ksf_ipf_foreach(ipf, KSF_ORDER_TREE, stop_at_three, &calls), -EINTR);
	calls = 0;
	assert_int_equal(ksf_foreach_node(ks, stop_at_three, &calls), -EINTR);
	ksf_ipf_free(ipf);

	/* One routine: its entries only. */
	assert_int_equal(ksf_ipf_build(ks, &one, &ipf), 0);
	assert_int_equal(ksf_ipf_check(ipf), 0);
	l.routine = true;
	assert_int_equal(ksf_ipf_foreach(ipf, KSF_ORDER_TREE, collect_line, &l), 0);
	for (size_t i = 0; i < l.n; i++)
		assert_true(!strncmp(l.v[i], "1|", 2));
	assert_true(l.n > 0);
	free(lines_join(&l));
	ksf_ipf_free(ipf);

	ipf = (struct ksf_ipf *)&tiny;
	assert_int_equal(ksf_ipf_build(ks, &tiny, &ipf), -E2BIG);
	assert_ptr_equal(ipf, (struct ksf_ipf *)&tiny); /* untouched on error */
	ksf_free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tv_k1),
	    cmocka_unit_test(test_tv_k1_other_k),
	    cmocka_unit_test(test_tv_k2),
	    cmocka_unit_test(test_nested),
	    cmocka_unit_test(test_recursive),
	    cmocka_unit_test(test_random_oracle),
	    cmocka_unit_test(test_high_degree),
	    cmocka_unit_test(test_budget_random),
	    cmocka_unit_test(test_budget_hot_survives),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_iteration_and_queries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
