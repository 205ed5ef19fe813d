// SPDX-License-Identifier: GPL-2.0-only
/* bench_ksf.c: k-SF throughput against Ball-Larus counting, forest sizes, pruning accuracy.
 *
 * Prints Markdown tables; asserts nothing about time. Usage: bench_ksf [path ids, default 4M].
 *
 * The input is a synthetic path-id stream, generated once and replayed to every profiler, with
 * routine entries and exits. It is modelled on the loops the k-BLPP papers describe (T §5.2,
 * §6.1.1): 64 routines of five kinds, each invocation emitting an entry path id, one body path
 * id per further loop iteration, and an exit path id (or a single entry-to-exit id when the loop
 * is not entered), as Ball-Larus numbering with paths cut at back edges does (ALGORITHMS.md §2):
 *  - array loops (24 routines): 2-4 body paths, one taken 90% of the time, trip counts geometric
 *    with a mean of 16-256;
 *  - correlated branches (16): the body path follows a fixed period of 2-6 (runs such as the
 *    masked-convolution copy/convolve runs or TV-K1's 2 0 0 2), left 5% of the time;
 *  - scanners (4): 64-300 body paths, the next one the previous one's favourite successor 60% of
 *    the time and Zipf-distributed otherwise (a lexer or interpreter loop: high node degrees,
 *    the case of eclipse's Scanner in T §5.2);
 *  - short routines (16): 0-3 iterations (few-iteration codes like avrora and hsqldb);
 *  - a recursive tree walk (4): 1-4 iterations, recursing with probability 0.45, depth <= 24.
 * A loop iteration calls a routine of a higher index with a per-routine probability of 0-30%,
 * so activations nest; top-level calls pick routines with Zipf(1) weights. The percentages above
 * are the "irregular" stream (noise = 1); the "regular" one scales them by 0.05 (0.5%, 0.25%,
 * 2%), closer to real programs, whose k-SF holds a few million nodes after billions of path ids
 * (T Fig. 5.15) while these streams make a new node every few path ids at large k.
 *
 * Baselines on the same events: "BL hash" counts (routine, path id) in an open-addressing hash
 * table, as BLPP does for routines with many paths (T:457); "BL array" indexes a per-routine
 * counter array, the cheapest possible BLPP (Bond's BLPP uses it for small routines). Both keep
 * a shadow stack of routine ids from the entry and exit events, as the k-SF does.
 *
 * Build: make build/bench_ksf.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kprof/hash.h"
#include "kprof/ksf.h"
#include "kprof/ksf_ipf.h"

#include "../prng.h"

#define NROUTINES 64
#define EV_ENTER (1ULL << 63)
#define EV_EXIT (1ULL << 62)
#define REPS 3
#define TOP 100

enum kind { LOOP, PATTERN, SCANNER, SHORT, RECURSIVE };

struct routine {
	enum kind kind;
	unsigned nbody, plen, pattern[6];
	double mean_trips, p_call;
	unsigned ncallees, callees[3];
	uint16_t *succ; /* scanner: favourite successor of each body path */
	double *cdf;	/* scanner: Zipf table over the body paths */
};

struct stream {
	uint64_t *ev;
	size_t n, cap, items, calls, activations; /* activations: top-level calls */
	unsigned max_depth;
};

static uint64_t rng = 0x1234567;
static double noise = 1; /* scales the probability of leaving a loop's usual path */

static uint64_t rnd(void)
{
	return prng_next(&rng);
}

static double urand(void)
{
	return prng_unit(&rng);
}

static unsigned below(unsigned n)
{
	return rnd() % n;
}

static unsigned geometric(double mean)
{
	double u = urand();

	return mean <= 1 ? 0 : (unsigned)(log(1 - u) / log(1 - 1 / mean));
}

/* Zipf(1) over n ranks: the cumulative table, then sampling by bisection. */
static double *zipf_table(unsigned n)
{
	double *cdf = malloc(n * sizeof(*cdf)), sum = 0;

	if (!cdf) {
		perror("malloc");
		exit(1);
	}
	for (unsigned i = 0; i < n; i++)
		cdf[i] = sum += 1.0 / (i + 1);
	for (unsigned i = 0; i < n; i++)
		cdf[i] /= sum;
	return cdf;
}

static unsigned zipf(const double *cdf, unsigned n)
{
	double u = urand();
	unsigned lo = 0, hi = n - 1;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void emit(struct stream *s, uint64_t e)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1 << 20;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		if (!s->ev) {
			perror("realloc");
			exit(1);
		}
	}
	s->ev[s->n++] = e;
	s->items += !(e & (EV_ENTER | EV_EXIT));
	s->calls += !!(e & EV_ENTER);
}

static void setup(struct routine *rt)
{
	for (unsigned i = 0; i < NROUTINES; i++) {
		struct routine *r = &rt[i];

		unsigned m = i % 15;

		r->kind = i >= 60  ? RECURSIVE
			  : m < 6  ? LOOP
			  : m < 10 ? PATTERN
			  : m < 14 ? SHORT
				   : SCANNER;
		switch (r->kind) {
		case LOOP:
			r->nbody = 2 + below(3);
			r->mean_trips = 16 << below(5);
			break;
		case PATTERN:
			r->nbody = 2 + below(3);
			r->plen = 2 + below(5);
			for (unsigned j = 0; j < r->plen; j++)
				r->pattern[j] = below(r->nbody);
			r->mean_trips = 8 << below(5);
			break;
		case SCANNER:
			r->nbody = 64 + below(237);
			r->succ = malloc(r->nbody * sizeof(*r->succ));
			for (unsigned j = 0; j < r->nbody; j++)
				r->succ[j] = below(r->nbody);
			r->cdf = zipf_table(r->nbody);
			r->mean_trips = 64;
			break;
		case SHORT:
			r->nbody = 1 + below(2);
			r->mean_trips = 1.5;
			break;
		case RECURSIVE:
			r->nbody = 2;
			r->mean_trips = 2;
			break;
		}
		r->p_call = i + 1 < NROUTINES ? 0.3 * urand() : 0;
		r->ncallees = i + 1 < NROUTINES ? 1 + below(3) : 0;
		for (unsigned j = 0; j < r->ncallees; j++)
			r->callees[j] = i + 1 + below(NROUTINES - i - 1);
	}
	/* Scanners call little: they are hot inner loops. */
	for (unsigned i = 0; i < NROUTINES; i++)
		if (rt[i].kind == SCANNER)
			rt[i].p_call = 0.01;
}

static unsigned next_body(const struct routine *r, unsigned iter, unsigned prev)
{
	switch (r->kind) {
	case LOOP:
		return urand() >= 0.1 * noise ? 0 : 1 + below(r->nbody - 1);
	case PATTERN:
		return urand() >= 0.05 * noise ? r->pattern[iter % r->plen] : below(r->nbody);
	case SCANNER:
		return urand() >= 0.4 * noise ? r->succ[prev] : zipf(r->cdf, r->nbody);
	default:
		return below(r->nbody);
	}
}

/* One invocation: ids 0-1 entry paths, 2..2+nbody-1 body paths, then 2 exit paths and the
 * entry-to-exit path. */
static void call(struct stream *s, const struct routine *rt, unsigned i, unsigned depth)
{
	const struct routine *r = &rt[i];
	unsigned trips = r->kind == SHORT	? below(4)
			 : r->kind == RECURSIVE ? 1 + below(4)
						: geometric(r->mean_trips);
	unsigned prev = 0, exit_id = 2 + r->nbody + below(2);

	if (depth > s->max_depth)
		s->max_depth = depth;
	emit(s, EV_ENTER | i);
	if (!trips) {
		emit(s, 4 + r->nbody);
		emit(s, EV_EXIT);
		return;
	}
	emit(s, below(2));
	for (unsigned t = 1; t < trips; t++) {
		if (r->kind == RECURSIVE && depth < 24 && urand() < 0.45)
			call(s, rt, i, depth + 1);
		else if (r->ncallees && depth < 40 && urand() < r->p_call)
			call(s, rt, r->callees[below(r->ncallees)], depth + 1);
		prev = next_body(r, t, prev);
		emit(s, 2 + prev);
	}
	emit(s, exit_id);
	emit(s, EV_EXIT);
}

static void generate(struct stream *s, const struct routine *rt, size_t items, bool scanner_only)
{
	unsigned scanners[NROUTINES], ns = 0;
	double *cdf = zipf_table(NROUTINES);

	for (unsigned i = 0; i < NROUTINES; i++)
		if (rt[i].kind == SCANNER)
			scanners[ns++] = i;
	while (s->items < items) {
		unsigned r = scanner_only ? scanners[below(ns)] : zipf(cdf, NROUTINES);

		s->activations++;
		call(s, rt, r, 0);
	}
	free(cdf);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- baselines --- */

struct blent {
	uint64_t id, count;
	uint32_t routine, used;
};

struct bl {
	struct blent *t;
	size_t nslots, n;
};

static void bl_grow(struct bl *b)
{
	struct bl nb = {.nslots = b->nslots ? 2 * b->nslots : 1024};

	nb.t = calloc(nb.nslots, sizeof(*nb.t));
	for (size_t i = 0; i < b->nslots; i++) {
		size_t j;

		if (!b->t[i].used)
			continue;
		for (j = mix64(b->t[i].id ^ b->t[i].routine * 0x9e3779b97f4a7c15ULL) &
			 (nb.nslots - 1);
		     nb.t[j].used; j = (j + 1) & (nb.nslots - 1))
			;
		nb.t[j] = b->t[i];
	}
	nb.n = b->n;
	free(b->t);
	*b = nb;
}

static void bl_count(struct bl *b, uint32_t routine, uint64_t id)
{
	size_t j;

	if ((b->n + 1) * 2 > b->nslots)
		bl_grow(b);
	for (j = mix64(id ^ routine * 0x9e3779b97f4a7c15ULL) & (b->nslots - 1); b->t[j].used;
	     j = (j + 1) & (b->nslots - 1))
		if (b->t[j].routine == routine && b->t[j].id == id) {
			b->t[j].count++;
			return;
		}
	b->t[j] = (struct blent){.id = id, .count = 1, .routine = routine, .used = 1};
	b->n++;
}

static double run_bl_hash(const struct stream *s, size_t *entries)
{
	uint32_t stack[256];
	unsigned depth = 0;
	struct bl b = {0};
	double t0 = now(), t;

	for (size_t i = 0; i < s->n; i++) {
		uint64_t e = s->ev[i];

		if (e & EV_ENTER)
			stack[depth++] = (uint32_t)e;
		else if (e & EV_EXIT)
			depth -= depth > 0;
		else if (depth)
			bl_count(&b, stack[depth - 1], e);
	}
	t = now() - t0;
	*entries = b.n;
	free(b.t);
	return t;
}

static double run_bl_array(const struct stream *s, const struct routine *rt)
{
	uint32_t stack[256], base[NROUTINES + 1];
	unsigned depth = 0;
	uint64_t *counts;
	double t0, t;

	base[0] = 0;
	for (unsigned i = 0; i < NROUTINES; i++)
		base[i + 1] = base[i] + rt[i].nbody + 5;
	counts = calloc(base[NROUTINES], sizeof(*counts));
	t0 = now();
	for (size_t i = 0; i < s->n; i++) {
		uint64_t e = s->ev[i];

		if (e & EV_ENTER)
			stack[depth++] = base[(uint32_t)e];
		else if (e & EV_EXIT)
			depth -= depth > 0;
		else if (depth)
			counts[stack[depth - 1] + e]++;
	}
	t = now() - t0;
	free(counts);
	return t;
}

/* --- k-SF --- */

static double run_ksf(const struct stream *s, unsigned k, const struct ksf_limits *lim,
		      struct ksf **ret)
{
	struct ksf_ctx ctx = {0};
	struct ksf *ks;
	double t0, t;

	if (ksf_new(k, lim, &ks) < 0) {
		fprintf(stderr, "ksf_new failed\n");
		exit(1);
	}
	t0 = now();
	for (size_t i = 0; i < s->n; i++) {
		uint64_t e = s->ev[i];

		if (e & EV_ENTER)
			ksf_enter(ks, &ctx, (uint32_t)e);
		else if (e & EV_EXIT)
			ksf_exit(ks, &ctx);
		else
			ksf_push(ks, &ctx, e);
	}
	t = now() - t0;
	ksf_ctx_release(&ctx);
	*ret = ks;
	return t;
}

/* Best of REPS runs; the k-SF of the last run is kept. */
static double best_ksf(const struct stream *s, unsigned k, const struct ksf_limits *lim,
		       struct ksf **ret)
{
	double best = 1e30;

	for (int r = 0; r < REPS; r++) {
		struct ksf *ks;
		double t = run_ksf(s, k, lim, &ks);

		best = t < best ? t : best;
		if (r + 1 < REPS)
			ksf_free(ks);
		else
			*ret = ks;
	}
	return best;
}

static struct ksf_ipf *ipf_of(const struct ksf *ks, double *secs)
{
	struct ksf_ipf *ipf;
	double t0 = now();
	int err = ksf_ipf_build(ks, NULL, &ipf);

	if (err < 0) {
		fprintf(stderr, "ksf_ipf_build: %s\n", strerror(-err));
		exit(1);
	}
	*secs = now() - t0;
	return ipf;
}

static double mps(size_t items, double secs)
{
	return items / secs / 1e6;
}

static void table_throughput(const struct stream *s, const struct routine *rt)
{
	const unsigned ks_[] = {1, 2, 4, 8, 16};
	double bl_hash = 1e30, bl_array = 1e30;
	size_t entries = 0;

	for (int r = 0; r < REPS; r++) {
		double t = run_bl_hash(s, &entries), a = run_bl_array(s, rt);

		bl_hash = t < bl_hash ? t : bl_hash;
		bl_array = a < bl_array ? a : bl_array;
	}
	printf("BL hash: %.1f M items/s, %zu entries. BL array: %.1f M items/s.\n\n",
	       mps(s->items, bl_hash), entries, mps(s->items, bl_array));
	printf("| k | k-SF M items/s | vs BL hash | vs BL array | root lookups/item | "
	       "scans/item | probes/item | k-SF nodes | indexed | k-IPF nodes | k-IPF build s | "
	       "k-SF MiB |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(ks_) / sizeof(ks_[0]); i++) {
		struct ksf_limits lim = {.max_nodes = 1u << 30};
		struct ksf *ks;
		struct ksf_ipf *ipf;
		struct ksf_stats st;
		struct ksf_ipf_stats ist;
		double t = best_ksf(s, ks_[i], &lim, &ks), tb;

		ksf_get_stats(ks, &st);
		ipf = ipf_of(ks, &tb);
		ksf_ipf_get_stats(ipf, &ist);
		printf(
		    "| %u | %.1f | %.2fx | %.2fx | %.3f | %.2f | %.3f | %zu | %zu | %zu | %.2f | "
		    "%.1f |\n",
		    ks_[i], mps(s->items, t), bl_hash / t, bl_array / t,
		    (double)st.root_lookups / st.items, (double)st.scans / st.items,
		    (double)st.probes / st.items, st.nodes, st.indexed, ist.nodes, tb,
		    st.memory / 1048576.0);
		ksf_ipf_free(ipf);
		ksf_free(ks);
	}
	printf("\n");
}

static void table_degree(const struct stream *s)
{
	const unsigned ks_[] = {2, 4, 8, 16};

	printf("| k | lists (move-to-front): M items/s | scans/item | hashed above 8: M items/s | "
	       "scans/item | probes/item | indexed nodes | avg internal degree |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(ks_) / sizeof(ks_[0]); i++) {
		struct ksf_limits lists = {.max_nodes = 1u << 30, .index_min = UINT32_MAX};
		struct ksf_limits hashed = {.max_nodes = 1u << 30};
		struct ksf *a, *b;
		struct ksf_stats sa, sb;
		double ta = best_ksf(s, ks_[i], &lists, &a), tb = best_ksf(s, ks_[i], &hashed, &b);

		ksf_get_stats(a, &sa);
		ksf_get_stats(b, &sb);
		printf("| %u | %.1f | %.2f | %.1f | %.2f | %.3f | %zu | %.2f |\n", ks_[i],
		       mps(s->items, ta), (double)sa.scans / sa.items, mps(s->items, tb),
		       (double)sb.scans / sb.items, (double)sb.probes / sb.items, sb.indexed,
		       (double)(sb.nodes - sb.roots) / (sb.internal ? sb.internal : 1));
		ksf_free(a);
		ksf_free(b);
	}
	printf("\n");
}

/* --- pruning accuracy --- */

struct seq {
	uint32_t routine, n;
	uint64_t count;
	uint64_t p[KSF_K_MAX];
};

struct top {
	struct seq v[TOP];
	size_t n;
	unsigned min_len, max_len;
};

static int take_top(uint32_t routine, const uint64_t *path, size_t n, uint64_t count,
		    void *userdata)
{
	struct top *t = userdata;
	struct seq *q;

	if (n < t->min_len || n > t->max_len)
		return 0;
	if (t->n == TOP)
		return -ECANCELED;
	q = &t->v[t->n++];
	q->routine = routine;
	q->n = n;
	q->count = count;
	memcpy(q->p, path, n * sizeof(*path));
	return 0;
}

static void top_of(const struct ksf_ipf *ipf, unsigned min_len, unsigned max_len, struct top *t)
{
	t->n = 0;
	t->min_len = min_len;
	t->max_len = max_len;
	ksf_ipf_foreach(ipf, KSF_ORDER_COUNT, take_top, t);
}

static bool same_seq(const struct seq *a, const struct seq *b)
{
	return a->routine == b->routine && a->n == b->n && !memcmp(a->p, b->p, a->n * 8);
}

static void table_budget(const struct stream *s, unsigned k)
{
	const double frac[] = {0, 0.5, 0.25, 0.1, 0.05}; /* 0: unbounded */
	static struct top exact_long, exact_bl, got;
	struct ksf_limits lim = {.max_nodes = 1u << 30};
	struct ksf *ks;
	struct ksf_ipf *ipf;
	struct ksf_stats st;
	size_t full;
	double tb;

	best_ksf(s, k, &lim, &ks);
	ksf_get_stats(ks, &st);
	full = st.nodes;
	ipf = ipf_of(ks, &tb);
	top_of(ipf, 2, KSF_K_MAX, &exact_long);
	top_of(ipf, 1, 1, &exact_bl);
	ksf_ipf_free(ipf);
	ksf_free(ks);
	printf(
	    "k = %u, unbounded k-SF: %zu nodes. Top %d = the %d most frequent sequences of 2..%u "
	    "path ids in the exact k-IPF.\n\n",
	    k, full, TOP, TOP, k);
	printf(
	    "| budget | max_nodes | M items/s | passes | pruned nodes | folded items | lost items "
	    "| top-%d recall | top-%d mean count error | BL top-%d max error |\n",
	    TOP, TOP, TOP);
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(frac) / sizeof(frac[0]); i++) {
		double t, err = 0, blerr = 0;
		size_t hits = 0;

		lim.max_nodes = frac[i] ? (size_t)(full * frac[i]) : 1u << 30;
		t = best_ksf(s, k, &lim, &ks);
		ksf_get_stats(ks, &st);
		ipf = ipf_of(ks, &tb);
		top_of(ipf, 2, KSF_K_MAX, &got);
		for (size_t a = 0; a < exact_long.n; a++) {
			const struct seq *q = &exact_long.v[a];
			uint64_t c = ksf_ipf_count(ipf, q->routine, q->p, q->n);

			err += (double)(q->count - c) / q->count;
			for (size_t b = 0; b < got.n; b++)
				hits += same_seq(q, &got.v[b]);
		}
		for (size_t a = 0; a < exact_bl.n; a++) {
			const struct seq *q = &exact_bl.v[a];
			double e = (double)(q->count - ksf_ipf_count(ipf, q->routine, q->p, q->n)) /
				   q->count;

			blerr = e > blerr ? e : blerr;
		}
		if (frac[i])
			printf("| %.0f%% | %zu ", frac[i] * 100, st.max_nodes);
		else
			printf("| unbounded | - ");
		printf("| %.1f | %llu | %llu | %.1f%% | %.2f%% | %zu%% | %.2f%% | %.2f%% |\n",
		       mps(s->items, t), (unsigned long long)st.prune_passes,
		       (unsigned long long)st.pruned_nodes, 100.0 * st.folded_items / st.items,
		       100.0 * st.pruned_items / st.items,
		       hits * 100 / (exact_long.n ? exact_long.n : 1),
		       100 * err / (exact_long.n ? exact_long.n : 1), 100 * blerr);
		ksf_ipf_free(ipf);
		ksf_free(ks);
	}
	printf("\n");
}

static void describe(const char *name, const struct stream *s)
{
	printf("%s: %zu path ids in %zu activations (%.1f per activation), %zu top-level calls, "
	       "nesting depth up to %u.\n\n",
	       name, s->items, s->calls, (double)s->items / s->calls, s->activations,
	       s->max_depth + 1);
}

int main(int argc, char **argv)
{
	size_t items = argc > 1 ? strtoull(argv[1], NULL, 10) : 4000000;
	static struct routine rt[NROUTINES];
	struct stream reg = {0}, irr = {0}, scan = {0};
	double t0 = now();

	setup(rt);
	noise = 0.05;
	generate(&reg, rt, items, false);
	noise = 1;
	generate(&irr, rt, items / 2, false);
	generate(&scan, rt, items / 4, true);
	printf("## k-SF benchmark (tests/bench/bench_ksf.c)\n\n");
	printf("Synthetic streams, modelled on real loops (see the top of the file). Throughput is "
	       "the best of %d runs; M items/s = million path ids per second.\n\n",
	       REPS);
	printf("### Regular stream (loops leave their usual path 0.25-2%% of the time)\n\n");
	describe("Stream", &reg);
	table_throughput(&reg, rt);
	printf("### Irregular stream (5-40%%: many distinct contexts, forests beyond the caches)"
	       "\n\n");
	describe("Stream", &irr);
	table_throughput(&irr, rt);
	printf("### High-degree nodes: scanner routines only, irregular\n\n");
	describe("Stream", &scan);
	table_degree(&scan);
	printf("### Node budget: pruning cold subtrees, irregular stream\n\n");
	table_budget(&irr, 8);
	printf("Total run time %.1f s.\n", now() - t0);
	free(reg.ev);
	free(irr.ev);
	free(scan.ev);
	for (unsigned i = 0; i < NROUTINES; i++) {
		free(rt[i].succ);
		free(rt[i].cdf);
	}
	return 0;
}
