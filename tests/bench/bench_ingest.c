// SPDX-License-Identifier: GPL-2.0-only
/* bench_ingest.c: kprofd's per-sample work on a stream where nearly every sample is a new stack.
 *
 * Usage: bench_ingest [-n SAMPLES] [-t TARGETS] [-p MIB] [-r REPS] [-s SEED] [-x hcct|profile] [-a]
 *                     [-u addr|mapping]
 *
 * Replays, without BPF or a socket, what target_add_sample does with each sample of
 * `bench/ingest.sh`'s node load (four manystacks.js at 4999 Hz): for every frame an address ->
 * function id lookup in the profile's cache (profile_intern on a miss), then profile_add_tid and
 * hcct_add_stack with the daemon's defaults (eps 2e-4: 5,000 counters; 256K stacks). The
 * stacks are modelled on manystacks.js as kprofd sees it: 20 native frames shared by every
 * sample (node's main loop down to the script), then a random path of 4 to 11 calls among 256
 * JS functions (one return address each) and a leaf at one of 32 addresses in the last one:
 * 28 frames on average, as measured on the real load. Samples go to TARGETS (default 4) targets
 * in random order, in batches of 480 (what kprofd reads per wake-up at 10,000 samples/s);
 * between batches a buffer of MIB MiB (default 16) is written, as the targets running on the
 * same CPUs evict kprofd's data from the caches between its wake-ups.
 *
 * -a: also count each sample's leaf in an annotate store per target (annot_add, as
 * target_add_sample does since kprofctl annotate; the code snapshots are taken on a new
 * address only and are not modelled).
 *
 * -x leaves one builder out (the frames are still looked up), to see what the other costs.
 *
 * -u: the JIT frames are code nothing names (a JIT without a perf map): kept by address as
 * kprofd keeps them (profile_intern_unresolved, "addr"), or all one "[anon]" function as before
 * names were given late ("mapping"). Either way, the profiles' memory at the end of a run is
 * printed too.
 *
 * Output: CPU time per sample (CLOCK_THREAD_CPUTIME_ID around the per-sample work only),
 * median and minimum of REPS runs (default 5), each on fresh structures; plus the HCCT's
 * evictions and pruned nodes per sample. Nothing is asserted.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kprof/annot.h"
#include "kprof/hcct.h"
#include "kprof/profile.h"

#include "bench_util.h"

#define PREFIX 20
#define NFUNC 256
#define LEAF_IPS 32
#define BATCH 480
#define MAX_TARGETS 64
#define MAX_FRAMES (PREFIX + 12)

struct tgt {
	struct profile *prof;
	struct hcct *hcct;
	struct annot *annot; /* -a */
	uint64_t rng;
};

static void die(const char *what, int r)
{
	fprintf(stderr, "bench_ingest: %s: %s\n", what, strerror(-r));
	exit(1);
}

/* One sample's addresses, root first: the return addresses of the prefix and the path, then
 * the leaf's ip. Native code at 0x400000, JIT code at 0x7f0000000000 (4 KiB per function). */
static size_t make_stack(uint64_t *rng, uint64_t *addr)
{
	uint64_t r = prng_next(rng);
	size_t n = 0, depth = 4 + (r & 7), f = 0;

	for (size_t i = 0; i < PREFIX; i++)
		addr[n++] = 0x400000 + 0x1000 * i + 0x123;
	for (size_t i = 0; i < depth; i++) {
		f = prng_next(rng) % NFUNC;
		addr[n++] = 0x7f0000000000ULL + 0x1000 * f + 0x40;
	}
	addr[n++] = 0x7f0000000000ULL + 0x1000 * f + 0x80 + 4 * (prng_next(rng) % LEAF_IPS);
	return n;
}

static enum { NAMED, BY_ADDR, BY_MAPPING } unnamed_mode = NAMED;

/* The function of an address: its 4 KiB page, or with -u what kprofd makes of unnamed code. */
static int frame_id(struct profile *p, uint64_t a)
{
	char name[32];
	uint32_t id;
	int r;

	if (profile_cache_get(p, a, &id))
		return id;
	snprintf(name, sizeof(name), "fn_%llx", (unsigned long long)(a >> 12));
	if (a >= 0x7f0000000000ULL && unnamed_mode == BY_ADDR)
		r = profile_intern_unresolved(p, a, "[anon]");
	else if (a >= 0x7f0000000000ULL && unnamed_mode == BY_MAPPING)
		r = profile_intern(p, "[anon]", "[anon]", 0, PROFILE_KIND_UNKNOWN);
	else
		r = profile_intern(p, name, "bench", a & ~0xfffULL, PROFILE_KIND_JIT);
	if (r >= 0)
		profile_cache_put(p, a, r);
	return r;
}

/* -u addr: the perf map comes: every address kept is named after its 4 KiB page, as the named
 * run names it, and the profiles fold the aliases (profile_commit_renames). CPU seconds. */
static double name_late(struct tgt *t, unsigned long ntargets)
{
	double t0 = cpu_now();

	for (unsigned long i = 0; i < ntargets; i++) {
		size_t n;
		const uint32_t *pend = profile_pending(t[i].prof, &n);
		uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));
		char name[32];

		if (!ids)
			die("malloc", -ENOMEM);
		memcpy(ids, pend, n * sizeof(*ids));
		for (size_t k = 0; k < n; k++) {
			uint64_t a = profile_func_get(t[i].prof, ids[k])->start;

			snprintf(name, sizeof(name), "fn_%llx", (unsigned long long)(a >> 12));
			profile_rename(t[i].prof, ids[k], name, "bench", a & ~0xfffULL,
				       PROFILE_KIND_JIT);
		}
		if (profile_commit_renames(t[i].prof) < 0)
			die("commit", -ENOMEM);
		free(ids);
	}
	return cpu_now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	unsigned long n = 2000000, ntargets = 4, mib = 16, reps = 5, seed = 1;
	bool no_hcct = false, no_profile = false, annotate = false;
	double *per = NULL, rename_time[101] = {0};
	uint64_t evictions = 0, pruned = 0, memory = 0, funcs = 0;
	uint8_t *junk;
	int c;

	while ((c = getopt(argc, argv, "n:t:p:r:s:x:u:a")) != -1) {
		switch (c) {
		case 'a':
			annotate = true;
			break;
		case 'u':
			if (!strcmp(optarg, "addr") || !strcmp(optarg, "mapping")) {
				unnamed_mode = !strcmp(optarg, "addr") ? BY_ADDR : BY_MAPPING;
				break;
			}
			fprintf(stderr, "bench_ingest: -u addr|mapping\n");
			return 2;
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 't':
			ntargets = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			mib = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			reps = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'x':
			no_hcct = !strcmp(optarg, "hcct");
			no_profile = !strcmp(optarg, "profile");
			if (no_hcct || no_profile)
				break;
			/* fall through */
		default:
			fprintf(stderr, "usage: bench_ingest [-n SAMPLES] [-t TARGETS] [-p MIB] "
					"[-r REPS] [-s SEED] [-x hcct|profile] [-a]\n");
			return 2;
		}
	}
	if (!n || !ntargets || ntargets > MAX_TARGETS || !reps || reps > 101 || mib > 4096) {
		fprintf(stderr, "bench_ingest: -n >= 1, -t 1..%d, -r 1..101, -p <= 4096\n",
			MAX_TARGETS);
		return 2;
	}
	junk = mib ? malloc(mib << 20) : NULL;
	per = calloc(reps, sizeof(*per));
	if ((mib && !junk) || !per)
		die("malloc", -ENOMEM);

	for (unsigned long rep = 0; rep < reps; rep++) {
		struct tgt t[MAX_TARGETS];
		uint64_t rng = seed * 1000003 + rep, addr[MAX_FRAMES];
		uint32_t ids[MAX_FRAMES];
		double spent = 0;

		for (unsigned long i = 0; i < ntargets; i++) {
			int r = profile_new(&(struct profile_limits){.max_stacks = 1u << 18,
								     .max_stack_ids = 32u << 18},
					    &t[i].prof);

			if (r < 0 ||
			    (r = hcct_new(&(struct hcct_params){.slots = hcct_slots_for_eps(2e-4),
								.max_depth = 255},
					  &t[i].hcct)) < 0)
				die("new", r);
			t[i].rng = prng_next(&rng);
			t[i].annot = NULL;
			if (annotate && (r = annot_new(NULL, &t[i].annot)) < 0)
				die("annot_new", r);
		}
		for (unsigned long done = 0; done < n;) {
			unsigned long b = n - done < BATCH ? n - done : BATCH;
			double t0;

			if (junk)
				memset(junk, (int)done, mib << 20);
			t0 = cpu_now();
			for (unsigned long k = 0; k < b; k++) {
				struct tgt *g = &t[prng_next(&rng) % ntargets];
				size_t len = make_stack(&g->rng, addr), m = 0;

				if (g->annot)
					annot_prefetch(g->annot, addr[len - 1]);

				for (size_t i = 0; i < len; i++) {
					int id = frame_id(g->prof, addr[i]);

					if (id >= 0)
						ids[m++] = id;
				}
				if (!no_profile)
					profile_add_tid(g->prof, 1, ids, m, 1);
				if (!no_hcct)
					hcct_add_stack(g->hcct, ids, m, 1);
				if (g->annot && m)
					annot_add(g->annot, ids[m - 1], addr[len - 1], false);
			}
			spent += cpu_now() - t0;
			done += b;
		}
		per[rep] = spent / n * 1e6;
		if (unnamed_mode == BY_ADDR)
			rename_time[rep] = name_late(t, ntargets) * 1e3;
		evictions = pruned = memory = funcs = 0;
		for (unsigned long i = 0; i < ntargets; i++) {
			struct hcct_stats st;
			struct profile_stats ps;

			profile_get_stats(t[i].prof, &ps);
			memory += ps.memory;
			funcs += ps.funcs;
			hcct_get_stats(t[i].hcct, &st);
			evictions += st.evictions;
			pruned += st.pruned;
			if (t[i].annot) {
				struct annot_stats as;

				annot_get_stats(t[i].annot, &as);
				memory += as.memory;
				annot_free(t[i].annot);
			}
			hcct_free(t[i].hcct);
			profile_free(t[i].prof);
		}
	}
	{
		double min = per[0], med;

		for (unsigned long i = 1; i < reps; i++)
			min = per[i] < min ? per[i] : min;
		qsort(per, reps, sizeof(*per), cmp_double);
		med = per[reps / 2];
		printf("| Samples | Targets | Polluted between batches | CPU per sample, median "
		       "(min) of %lu | Evictions per sample | Pruned nodes per sample |\n",
		       reps);
		printf("|---:|---:|---:|---:|---:|---:|\n");
		printf("| %lu | %lu | %lu MiB | %.3f us (%.3f) | %.2f | %.2f |\n", n, ntargets, mib,
		       med, min, (double)evictions / n, (double)pruned / n);
		printf("\nProfiles at the end of a run: %.1f MiB in all, %llu functions (JIT "
		       "frames %s)\n",
		       memory / 1048576.0, (unsigned long long)funcs,
		       unnamed_mode == BY_ADDR	    ? "unnamed, kept by address, then named"
		       : unnamed_mode == BY_MAPPING ? "unnamed, one [anon] function"
						    : "named");
		if (unnamed_mode == BY_ADDR) {
			qsort(rename_time, reps, sizeof(*rename_time), cmp_double);
			printf("Naming them all late (profile_rename + profile_commit_renames, all "
			       "targets): %.1f ms CPU, median of %lu\n",
			       rename_time[reps / 2], reps);
		}
	}
	free(junk);
	free(per);
	return 0;
}
