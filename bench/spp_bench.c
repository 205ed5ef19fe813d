// SPDX-License-Identifier: GPL-2.0-only
/* spp_bench.c: structural vs flat Ball-Larus path profiling at equal budgets, measured as the
 * SPP paper measured it (Yasue et al. §4.3): the overlap percentage of a budgeted profile with
 * the complete profile of the same run (issue 19, item 2).
 *
 * Usage: spp_bench CODE TRACE [BUDGET...]
 * CODE is `minijit --print-code` output (the hex of every IR block of every function), TRACE a
 * minijit path trace (--paths-trace, --fig1-trace: the function, its blocks' addresses, one act
 * line per call with its acyclic paths). The function's bytes are rebuilt from CODE and given to
 * cfg_build (the CFG and loop forest kprofd would recover); every call of TRACE is replayed, in
 * order, block by block into one spp per budget and one without a budget (the complete
 * profile), and its acyclic paths (the trace's `|`-separated paths: Ball-Larus paths) into one
 * flat profile per budget (the first BUDGET paths of the run) and one complete one. Prints a
 * Markdown table: budget, SPP overlap, flat overlap, SPP's graphs' states. Default budgets: 100
 * 300 1000 3000 10000. Asserts nothing.
 *
 * spp_bench --dump CODE TRACE prints the complete profile instead, as JSON (blocks' start
 * addresses, graphs, local paths with kprof's node encoding: a block index, or -g for the loop
 * node of graph g): the ground truth tests/integration/hwspp_truth.py compares kprof's
 * structural profile of anonymous code with.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cfg.h"
#include "kprof/spp.h"

#define MAXB 64
#define MAXBUDGETS 16

static const char *const state_names[] = {"idle", "active", "finished", "timeout", "cold"};

struct fn {
	char name[64];
	uint64_t start, end;
	uint8_t code[65536];
	size_t len;
};

static int read_code(const char *path, const char *func, struct fn *f)
{
	FILE *fp = fopen(path, "r");
	char line[512], name[64];
	bool in = false;
	uint64_t a, b;

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long sz;
		int n;

		if (sscanf(line, "code %63s 0x%" SCNx64 " size %lu blocks %d", name, &a, &sz, &n) ==
		    4) {
			in = !strcmp(name, func);
			if (in) {
				f->start = a;
				f->end = a + sz;
			}
			continue;
		}
		if (!in || sscanf(line, "  block %d 0x%" SCNx64 "-0x%" SCNx64, &n, &a, &b) == 3)
			continue;
		for (char *p = line; *p;) {
			char *e;
			unsigned long v = strtoul(p, &e, 16);

			if (e == p)
				break;
			if (f->len < sizeof(f->code))
				f->code[f->len++] = (uint8_t)v;
			p = e;
		}
	}
	fclose(fp);
	return f->len && f->len == f->end - f->start ? 0 : -EINVAL;
}

struct run {
	struct spp *spp[MAXBUDGETS], *full;
	struct spp_flat *flat[MAXBUDGETS], *flat_full;
	struct spp_act act[MAXBUDGETS + 1];
	size_t nb;
};

static uint64_t path_key(const uint32_t *blocks, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ blocks[i]) * 1099511628211ull;
	return h;
}

/* One call: "0,1,2|2,3,7|..." of IR blocks, map[] gives the cfg block of an IR block. */
static void replay(struct run *r, char *acts, const int *map)
{
	uint32_t path[256];
	size_t n = 0;

	for (size_t i = 0; i <= r->nb; i++)
		spp_enter(i < r->nb ? r->spp[i] : r->full, &r->act[i]);
	for (char *p = acts;; p++) {
		if (*p >= '0' && *p <= '9') {
			int ir = (int)strtol(p, &p, 10);
			uint32_t b = (uint32_t)map[ir];

			if (n < 256)
				path[n++] = b;
			for (size_t i = 0; i <= r->nb; i++)
				spp_block(i < r->nb ? r->spp[i] : r->full, &r->act[i], b);
			p--;
			continue;
		}
		if (*p == ',')
			continue;
		/* '|', or the end of the line: a path ends */
		for (size_t i = 0; i < r->nb; i++)
			spp_flat_add(r->flat[i], path_key(path, n));
		spp_flat_add(r->flat_full, path_key(path, n));
		n = 0;
		if (*p != '|')
			break;
	}
	for (size_t i = 0; i <= r->nb; i++)
		spp_exit(i < r->nb ? r->spp[i] : r->full, &r->act[i]);
}

static int dump_path(uint32_t g, const uint32_t *nodes, size_t n, uint64_t local, double global,
		     void *u)
{
	int *first = u;

	(void)global;
	printf("%s\n  {\"graph\":%u,\"from_back\":%s,\"to_back\":%s,\"local\":%" PRIu64
	       ",\"nodes\":[",
	       *first ? "" : ",", g, nodes[0] == SPP_M_BACK ? "true" : "false",
	       nodes[n - 1] == SPP_M_BACK ? "true" : "false", local);
	for (size_t i = 1; i + 1 < n; i++)
		printf("%s%d", i > 1 ? "," : "",
		       (nodes[i] & SPP_LOOP) ? -(int)(nodes[i] & ~SPP_LOOP) : (int)nodes[i]);
	printf("]}");
	*first = 0;
	return 0;
}

/* The complete profile as JSON (--dump). */
static void dump(const struct cfg *g, const struct spp *full, uint64_t calls)
{
	int first = 1;

	printf("{\"calls\":%" PRIu64 ",\"blocks\":[", calls);
	for (uint32_t b = 0; b < cfg_nblocks(g); b++)
		printf("%s%" PRIu64, b ? "," : "", cfg_block_get(g, b)->start);
	printf("],\"graphs\":[");
	for (uint32_t k = 0; k < spp_ngraphs(full); k++) {
		struct spp_graph_info gi;

		spp_graph_get(full, k, &gi);
		printf("%s\n  {\"header\":%d,\"parent\":%d,\"counted\":%" PRIu64
		       ",\"entries\":%" PRIu64 ",\"loop_count\":%" PRIu64 "}",
		       k ? "," : "", k ? (int)gi.header : -1, k ? (int)gi.parent : -1, gi.counted,
		       gi.entries, gi.loop_count);
	}
	printf("],\"paths\":[");
	spp_foreach_path(full, dump_path, &first);
	printf("]}\n");
}

int main(int argc, char **argv)
{
	static struct fn f;
	static char line[1 << 16];
	uint64_t budgets[MAXBUDGETS] = {100, 300, 1000, 3000, 10000}, calls = 0;
	int map[MAXB];
	struct run r = {.nb = 5};
	struct cfg *g;
	FILE *fp;

	bool dumping = argc > 1 && !strcmp(argv[1], "--dump");

	if (dumping) {
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: spp_bench [--dump] CODE TRACE [BUDGET...]\n");
		return 2;
	}
	if (argc > 3) {
		r.nb = 0;
		for (int i = 3; i < argc && r.nb < MAXBUDGETS; i++)
			budgets[r.nb++] = strtoull(argv[i], NULL, 10);
	}
	fp = fopen(argv[2], "r");
	if (!fp || !fgets(line, sizeof(line), fp) || !fgets(line, sizeof(line), fp) ||
	    sscanf(line, "function %63s", f.name) != 1) {
		fprintf(stderr, "spp_bench: %s: not a minijit path trace\n", argv[2]);
		return 1;
	}
	if (read_code(argv[1], f.name, &f) < 0 ||
	    cfg_build(f.code, f.len, f.start, f.start, NULL, &g) < 0) {
		fprintf(stderr, "spp_bench: no code of %s in %s\n", f.name, argv[1]);
		return 1;
	}
	for (size_t i = 0; i < r.nb; i++)
		if (spp_new(g, &(struct spp_opts){.budget = budgets[i]}, &r.spp[i]) < 0 ||
		    spp_flat_new(budgets[i], 0, &r.flat[i]) < 0)
			return 1;
	if (spp_new(g, NULL, &r.full) < 0 || spp_flat_new(0, 0, &r.flat_full) < 0)
		return 1;
	while (fgets(line, sizeof(line), fp)) {
		uint64_t a, e;
		int ir, b;

		if (sscanf(line, "block %d 0x%" SCNx64 " 0x%" SCNx64, &ir, &a, &e) == 3 &&
		    ir >= 0 && ir < MAXB) {
			b = cfg_block_find(g, a);
			if (b < 0 || cfg_block_get(g, (uint32_t)b)->start != a) {
				fprintf(stderr, "spp_bench: IR block %d is not a basic block\n",
					ir);
				return 1;
			}
			map[ir] = b;
		} else if (!strncmp(line, "act ", 4)) {
			replay(&r, line + 4, map);
			calls++;
		}
	}
	fclose(fp);
	if (dumping) {
		dump(g, r.full, calls);
		return 0;
	}
	{
		struct spp_stats st;

		spp_get_stats(r.full, &st);
		printf("%s: %zu blocks, %zu structure graphs, %" PRIu64 " calls, %" PRIu64
		       " local paths in the complete profile, %" PRIu64 " Ball-Larus paths\n\n",
		       f.name, cfg_nblocks(g), st.graphs, calls, st.counted,
		       spp_flat_counted(r.flat_full));
	}
	printf("| budget | SPP overlap | flat BL overlap | SPP graphs (state counted/share) |\n"
	       "|---:|---:|---:|---|\n");
	for (size_t i = 0; i < r.nb; i++) {
		printf("| %" PRIu64 " | %.1f%% | %.1f%% | ", budgets[i],
		       spp_overlap(r.spp[i], r.full), spp_flat_overlap(r.flat[i], r.flat_full));
		for (uint32_t k = 0; k < spp_ngraphs(r.spp[i]); k++) {
			struct spp_graph_info gi;

			spp_graph_get(r.spp[i], k, &gi);
			printf("%s%s %" PRIu64 "/%" PRIu64, k ? ", " : "", state_names[gi.state],
			       gi.counted, gi.share);
		}
		printf(" |\n");
	}
	for (size_t i = 0; i <= r.nb; i++)
		spp_act_release(&r.act[i]);
	for (size_t i = 0; i < r.nb; i++) {
		spp_free(r.spp[i]);
		spp_flat_free(r.flat[i]);
	}
	spp_free(r.full);
	spp_flat_free(r.flat_full);
	cfg_free(g);
	return 0;
}
