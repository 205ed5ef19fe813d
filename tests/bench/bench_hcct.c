// SPDX-License-Identifier: GPL-2.0-only
/* bench_hcct.c: speed, space and accuracy of the HCCT against the exact CCT.
 *
 * Usage: bench_hcct [-n ENTERS] [-s SEED] [-q] [-Q P] [-S S] [-L F] [-F S] [-A]
 *   -n  calls made by the synthetic program (default 100M); -q: 10M, a quick run
 *   -Q, -S, -L, -F  the generator's return probability, call-site exponent, leaf fraction,
 *       fan-out exponent; -A: only describe the stream (CCT size, depth, skew) and exit
 *
 * The stream comes from a synthetic program, generated on the fly and identically for every
 * structure (same seed):
 *  - R = 20000 routines. Routine r is a leaf with probability 0.2; otherwise it has F(r) call
 *    sites, F drawn from a Zipf-like law P(F = k) ~ 1/k^1.2 on 1..64 (main has 64). Call site k
 *    of r calls routine hash(r, k) mod R, so the call graph is fixed (with recursion) and the
 *    CCT is its unrolling, keyed by (routine, call site).
 *  - A random walk executes it: main (depth 1) calls forever; any other activation returns with
 *    probability Q = 0.46 at each step and otherwise calls its site k with P(k) ~ 1/k^2 (hot
 *    sites first); leaves return at once, depth is capped at 48. The call tree is then a
 *    near-critical branching process: mean depth 13, a heavy tail of deep rare paths.
 * With the defaults, 100M calls give a CCT of 8.3M nodes (one new context per 12 calls), the
 * hottest context takes 5% of the calls and the hottest 10% of contexts 85% of them; oocalc in
 * the thesis has 48M nodes for 551M calls and 86% (T:228-270). Sampled-stack mode feeds the
 * stack of the same walk at every 50th event, as a sampling profiler would see it.
 *
 * Timing is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) spent in the structure's
 * calls only: the walk is generated in chunks of 1M events before each timed pass over the
 * chunk. Nothing is asserted: the output is Markdown tables.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../oracles/cct.h"
#include "kprof/hcct.h"
#include "../oracles/hcct_metrics.h"

#include "bench_util.h"

#define ROUTINES 20000u
#define FMAX 64u
#define MAX_DEPTH 48u
static double Q_RETURN = 0.46, LEAF_FRACTION = 0.2, FANOUT_S = 1.2, SITE_S = 2.0;
#define CHUNK (1u << 20)
#define SAMPLE_EVERY 50u
#define EXIT_EVENT UINT32_MAX

/* ---- the synthetic program ---- */

struct program {
	uint8_t fanout[ROUTINES];
	double site_cdf[FMAX + 1][FMAX]; /* site_cdf[F][k]: P(site <= k) among F sites */
};

struct walk {
	const struct program *prog;
	uint64_t rng;
	uint32_t depth;
	uint32_t stack[MAX_DEPTH]; /* routine ids, main at 0 */
	uint64_t sites[MAX_DEPTH];
	uint64_t events;
};

static uint32_t callee(uint32_t r, uint32_t k)
{
	uint64_t x = (uint64_t)r * 0x100000001b3ULL + k * 0x9e3779b97f4a7c15ULL;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	return (uint32_t)(x % ROUTINES);
}

static void program_init(struct program *p, uint64_t seed)
{
	double fan_cdf[FMAX], sum = 0, acc = 0;

	for (uint32_t k = 1; k <= FMAX; k++)
		sum += pow(k, -FANOUT_S);
	for (uint32_t k = 1; k <= FMAX; k++) {
		acc += pow(k, -FANOUT_S) / sum;
		fan_cdf[k - 1] = acc;
	}
	for (uint32_t r = 0; r < ROUTINES; r++) {
		double u = prng_unit(&seed);
		uint32_t k = 0;

		if (r != 0 && prng_unit(&seed) < LEAF_FRACTION) {
			p->fanout[r] = 0;
			continue;
		}
		while (k < FMAX - 1 && u > fan_cdf[k])
			k++;
		p->fanout[r] = (uint8_t)(k + 1);
	}
	p->fanout[0] = FMAX; /* main */
	for (uint32_t f = 1; f <= FMAX; f++) {
		sum = acc = 0;
		for (uint32_t k = 1; k <= f; k++)
			sum += pow(k, -SITE_S);
		for (uint32_t k = 1; k <= f; k++) {
			acc += pow(k, -SITE_S) / sum;
			p->site_cdf[f][k - 1] = acc;
		}
		p->site_cdf[f][f - 1] = 1;
	}
}

static void walk_init(struct walk *w, const struct program *p, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	w->prog = p;
	w->rng = seed;
}

/* Next event: an enter (id | site << 24) or EXIT_EVENT. The first is main's enter. */
static uint32_t walk_step(struct walk *w)
{
	uint32_t r, f, k = 0;
	double u;

	w->events++;
	if (w->depth == 0) {
		w->stack[0] = 0;
		w->sites[0] = 0;
		w->depth = 1;
		return 0;
	}
	r = w->stack[w->depth - 1];
	f = w->prog->fanout[r];
	if (w->depth > 1 && (f == 0 || w->depth == MAX_DEPTH || prng_unit(&w->rng) < Q_RETURN)) {
		w->depth--;
		return EXIT_EVENT;
	}
	u = prng_unit(&w->rng);
	while (k < f - 1 && u > w->prog->site_cdf[f][k])
		k++;
	w->stack[w->depth] = callee(r, k + 1);
	w->sites[w->depth] = k + 1;
	w->depth++;
	return w->stack[w->depth - 1] | (k + 1) << 24;
}

/* ---- the structures under test ---- */

enum kind { KIND_CCT, KIND_HCCT };

struct run {
	enum kind kind;
	bool stacks;
	uint32_t slots;
	struct cct *cct;
	struct hcct *hcct;
	double seconds;
	uint64_t n;	 /* enters or samples fed */
	uint64_t events; /* enters made by the walk */
	struct hcct_stats hs;
	struct cct_stats cs;
};

static void die(const char *what, int r)
{
	fprintf(stderr, "bench_hcct: %s: %s\n", what, strerror(-r));
	exit(1);
}

static void feed_events(struct run *run, const uint32_t *ev, size_t n)
{
	int r = 0;

	if (run->kind == KIND_CCT) {
		for (size_t i = 0; i < n && r == 0; i++)
			r = ev[i] == EXIT_EVENT
				? cct_exit(run->cct)
				: cct_enter(run->cct, ev[i] & 0xffffff, ev[i] >> 24);
	} else {
		for (size_t i = 0; i < n && r == 0; i++)
			r = ev[i] == EXIT_EVENT
				? hcct_exit(run->hcct)
				: hcct_enter(run->hcct, ev[i] & 0xffffff, ev[i] >> 24);
	}
	if (r < 0)
		die("feed", r);
}

/* Samples are stored as: depth, ids[depth], sites[depth] (as uint32). */
static void feed_samples(struct run *run, const uint32_t *buf, size_t len)
{
	uint64_t sites[MAX_DEPTH];

	for (size_t i = 0; i < len;) {
		uint32_t d = buf[i];
		const uint32_t *ids = &buf[i + 1];
		int r;

		for (uint32_t k = 0; k < d; k++)
			sites[k] = buf[i + 1 + d + k];
		r = run->kind == KIND_CCT ? cct_add_stack_sites(run->cct, ids, sites, d, 1)
					  : hcct_add_stack_sites(run->hcct, ids, sites, d, 1);
		if (r < 0)
			die("add_stack", r);
		i += 1 + 2 * (size_t)d;
	}
}

/* One chunk of the walk: events, or samples (depth, ids[depth], sites[depth] as uint32). */
static size_t fill_chunk(struct run *run, struct walk *w, uint32_t *buf, uint64_t enters)
{
	size_t len = 0;

	if (!run->stacks) {
		while (len < CHUNK && run->events < enters) {
			buf[len] = walk_step(w);
			run->events += buf[len++] != EXIT_EVENT;
		}
		run->n = run->events;
		return len;
	}
	for (uint32_t i = 0; i < CHUNK && run->events < enters; i++) {
		run->events += walk_step(w) != EXIT_EVENT;
		if (w->events % SAMPLE_EVERY)
			continue;
		buf[len++] = w->depth;
		memcpy(&buf[len], w->stack, w->depth * sizeof(*buf));
		len += w->depth;
		for (uint32_t k = 0; k < w->depth; k++)
			buf[len++] = (uint32_t)w->sites[k];
		run->n++;
	}
	return len;
}

/* Feed the walk until it has made `enters` calls; only the feeding is timed. */
static void run_stream(struct run *run, const struct program *prog, uint64_t seed, uint64_t enters)
{
	static uint32_t buf[CHUNK / SAMPLE_EVERY * (1 + 2 * MAX_DEPTH) + CHUNK];
	struct walk w;
	int r;

	if (run->kind == KIND_CCT) {
		struct cct_params p = {.max_nodes = CCT_MAX_NODES};

		r = cct_new(&p, &run->cct);
	} else {
		struct hcct_params p = {.slots = run->slots};

		r = hcct_new(&p, &run->hcct);
	}
	if (r < 0)
		die("new", r);
	walk_init(&w, prog, seed);
	while (run->events < enters) {
		size_t len = fill_chunk(run, &w, buf, enters);
		double t0 = cpu_now();

		if (run->stacks)
			feed_samples(run, buf, len);
		else
			feed_events(run, buf, len);
		run->seconds += cpu_now() - t0;
	}
	if (run->kind == KIND_CCT)
		cct_get_stats(run->cct, &run->cs);
	else
		hcct_get_stats(run->hcct, &run->hs);
}

/* ---- reporting ---- */

struct setting {
	const char *phi_text;
	uint64_t phi_num, phi_den;
	uint32_t slots; /* m = ceil(1/eps), eps = phi / 5 */
};

static const struct setting settings[] = {
    {"1e-3", 1, 1000, 5000},
    {"1e-4", 1, 10000, 50000},
    {"1e-5", 1, 100000, 500000},
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

struct result {
	struct run run;
	size_t hcct_nodes;
	struct hcct_metrics m[2]; /* tau = 0.1, 0.01 */
};

static void measure(struct result *res, const struct run *cct, const struct setting *s)
{
	struct hcct_tree *t;
	static const double taus[2] = {0.1, 0.01};
	int r = hcct_query(res->run.hcct, s->phi_num, s->phi_den, &t);

	if (r < 0)
		die("query", r);
	res->hcct_nodes = t->len;
	for (int i = 0; i < 2; i++) {
		r = hcct_metrics_compute(cct->cct, t, taus[i], &res->m[i]);
		if (r < 0)
			die("metrics", r);
	}
	hcct_tree_free(t);
}

static void print_mode(const char *title, const struct run *cct, struct result *res,
		       const char *unit)
{
	double cct_rate = (double)cct->n / cct->seconds;

	printf("\n### %s\n\n", title);
	printf("CCT: %zu nodes, %.1f MiB, N = %llu %s, %.2f M %s/s (%.1f ns each)\n\n",
	       cct->cs.nodes, cct->cs.bytes / 1048576.0, (unsigned long long)cct->cs.n, unit,
	       cct_rate / 1e6, unit, 1e9 / cct_rate);
	printf("| phi | m | M %s/s | time vs CCT | evictions | MCCT nodes (peak) | peak / CCT | "
	       "MCCT MiB | (phi,eps)-HCCT nodes | HCCT KiB | exact HCCT nodes |\n",
	       unit);
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < NSETTINGS; i++) {
		const struct run *r = &res[i].run;
		double rate = (double)r->n / r->seconds;

		printf(
		    "| %s | %u | %.2f | %.2fx | %.1f%% | %zu (%zu) | %.2f%% | %.1f | %zu | %.1f | "
		    "%zu |\n",
		    settings[i].phi_text, r->slots, rate / 1e6, cct_rate / rate,
		    100.0 * r->hs.evictions / r->hs.n, r->hs.nodes, r->hs.peak_nodes,
		    100.0 * r->hs.peak_nodes / cct->cs.nodes, r->hs.bytes / 1048576.0,
		    res[i].hcct_nodes, res[i].hcct_nodes * sizeof(struct hcct_entry) / 1024.0,
		    res[i].m[0].exact_hcct);
	}
	printf(
	    "\n| phi | overlap | cover tau=0.1 | cover tau=0.01 | tau~ | max uncov | avg uncov | "
	    "false pos. | false neg. | max err | avg err | max err (A) |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < NSETTINGS; i++) {
		const struct hcct_metrics *m = &res[i].m[0], *m2 = &res[i].m[1];

		printf("| %s | %.1f%% | %.0f%% (%zu/%zu) | %.0f%% (%zu/%zu) | %.2g | %.3f%% | "
		       "%.5f%% | %zu (%.1f%%) | %zu | %.2f%% | %.3f%% | %.2f%% |\n",
		       settings[i].phi_text, 100 * m->overlap, 100 * m->cover, m->cover_num,
		       m->cover_den, 100 * m2->cover, m2->cover_num, m2->cover_den, m->tau_full,
		       m->max_uncov, m->avg_uncov, m->false_positives,
		       m->tree_nodes ? 100.0 * m->false_positives / m->tree_nodes : 0.0,
		       m->false_negatives, m->max_err, m->avg_err, m->max_err_a);
	}
}

static void bench_mode(const struct program *prog, uint64_t seed, uint64_t enters, bool stacks)
{
	struct run cct = {.kind = KIND_CCT, .stacks = stacks};
	struct result res[NSETTINGS];

	memset(res, 0, sizeof(res));
	run_stream(&cct, prog, seed, enters);
	for (size_t i = 0; i < NSETTINGS; i++) {
		res[i].run =
		    (struct run){.kind = KIND_HCCT, .stacks = stacks, .slots = settings[i].slots};
		run_stream(&res[i].run, prog, seed, enters);
		measure(&res[i], &cct, &settings[i]);
		hcct_free(res[i].run.hcct);
	}
	if (stacks)
		print_mode("Sampled stacks (hcct_add_stack, one sample every 50 walk events)", &cct,
			   res, "samples");
	else
		print_mode("Exact enter/exit stream (hcct_enter / hcct_exit)", &cct, res, "enters");
	cct_free(cct.cct);
}

static int cmp_u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The shape of the stream: CCT size, depth, skew. */
static void analyze_stream(const struct program *prog, uint64_t seed, uint64_t enters)
{
	struct run cct = {.kind = KIND_CCT};
	struct walk w;
	uint64_t depth_sum = 0, *w_sorted, acc = 0;
	size_t nn, hot[3] = {0};

	walk_init(&w, prog, seed);
	for (uint64_t e = 0; e < enters;)
		if (walk_step(&w) != EXIT_EVENT) {
			e++;
			depth_sum += w.depth;
		}
	run_stream(&cct, prog, seed, enters);
	nn = cct_nodes(cct.cct);
	w_sorted = malloc(nn * sizeof(*w_sorted));
	for (uint32_t i = 1; i < nn; i++) {
		struct cct_node_info ni;

		cct_node(cct.cct, i, &ni);
		w_sorted[i - 1] = ni.count;
		hot[0] += ni.count * 1000 >= enters;
		hot[1] += ni.count * 10000 >= enters;
		hot[2] += ni.count * 100000 >= enters;
	}
	qsort(w_sorted, nn - 1, sizeof(*w_sorted), cmp_u64_desc);
	for (size_t i = 0; i < (nn - 1) / 10; i++)
		acc += w_sorted[i];
	printf("CCT %zu nodes for %llu enters (1 per %.1f), mean depth %.1f, w_max %.3f%%, hot at "
	       "1e-3/1e-4/1e-5: %zu/%zu/%zu, top 10%% of contexts: %.1f%% of calls\n",
	       nn, (unsigned long long)enters, (double)enters / nn, (double)depth_sum / enters,
	       100.0 * w_sorted[0] / enters, hot[0], hot[1], hot[2], 100.0 * acc / enters);
	free(w_sorted);
	cct_free(cct.cct);
}

int main(int argc, char **argv)
{
	static struct program prog;
	uint64_t enters = 100000000, seed = 1;
	bool analyze = false;
	int c;

	while ((c = getopt(argc, argv, "n:s:qQ:L:F:S:A")) != -1) {
		switch (c) {
		case 'Q':
			Q_RETURN = atof(optarg);
			break;
		case 'L':
			LEAF_FRACTION = atof(optarg);
			break;
		case 'F':
			FANOUT_S = atof(optarg);
			break;
		case 'S':
			SITE_S = atof(optarg);
			break;
		case 'A':
			analyze = true;
			break;
		case 'n':
			enters = strtoull(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			enters = 10000000;
			break;
		default:
			fprintf(stderr,
				"usage: bench_hcct [-n ENTERS] [-s SEED] [-q] [-Q P] [-S S] [-L F] "
				"[-F S] [-A]\n");
			return 2;
		}
	}
	program_init(&prog, seed);
	if (analyze) {
		analyze_stream(&prog, seed, enters);
		return 0;
	}
	printf("## HCCT vs CCT: bench_hcct -n %llu -s %llu -Q %.2f -S %.2f -L %.2f -F %.2f\n\n",
	       (unsigned long long)enters, (unsigned long long)seed, Q_RETURN, SITE_S,
	       LEAF_FRACTION, FANOUT_S);
	printf("Synthetic program: %u routines, Zipf-like fan-out (1..%u sites, s = %.1f, %.0f%% "
	       "leaves), call sites chosen with s = %.1f, return probability %.2f, depth <= %u.\n"
	       "eps = phi/5, m = ceil(1/eps). Rates count enters (or samples); the time includes "
	       "the exits. \"time vs CCT\": the HCCT's time per update over the CCT's. Evictions: "
	       "Space-Saving takeovers in %% of N. Accuracy against the exact CCT of the same "
	       "stream (ALGORITHMS.md 1.10): uncov in %% of w_max; max/avg err over the hot "
	       "contexts reported (A & H), max err (A) over all reported.\n",
	       ROUTINES, FMAX, FANOUT_S, LEAF_FRACTION * 100, SITE_S, Q_RETURN, MAX_DEPTH);
	bench_mode(&prog, seed, enters, false);
	bench_mode(&prog, seed, enters, true);
	return 0;
}
