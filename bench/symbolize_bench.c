// SPDX-License-Identifier: GPL-2.0-only
/* symbolize_bench.c: cost of JIT symbolization with the perfmap module (issue 8, item 2).
 *
 * Prints Markdown tables on stdout, progress on stderr; asserts nothing about time.
 * Usage: symbolize_bench [--lines N] [--lookups N] [--append N] [--reps N] [--seed N]
 * (defaults 1000000 lines, 2000000 lookups, appends of 1000 lines, 5 repetitions). Times are
 * CPU time of the process (CLOCK_PROCESS_CPUTIME_ID), not wall time, as the machine may be shared.
 *
 * The input is a synthetic perf map of N lines in the format V8 writes with --perf-basic-prof
 * ("%lx %x %s\n", lower-case hex without 0x, names such as "JS:*fn_123 /srv/app/mod_45.js:67:8"),
 * generated once in memory. Two layouts are measured: "ascending", every symbol above the
 * previous one (a JIT that only allocates new code), and "10% reused", where one line in ten
 * re-declares the start of an earlier symbol with a new size (code space reused after a GC:
 * the later line wins, and the index builder has to sort and cut overlaps).
 *
 * Measured for each layout, each the median of --reps runs:
 *  - load from memory: perfmap_feed() of the whole text in 64 KiB pieces (as symbolize.c reads
 *    the file), then perfmap_build_index(), each timed on its own;
 *  - load from a file: the text is written to a temporary file once, then each run opens it and
 *    pread()s it in 64 KiB pieces into perfmap_feed(), then builds the index (the page cache is
 *    warm: this is the daemon's cost of a full re-read, not disk speed);
 *  - lookups: perfmap_lookup() of --lookups addresses generated beforehand, "uniform" (a random
 *    symbol, a random offset in it) and "skewed" (90% of them in 64 hot symbols, as a profile of
 *    a program with a few hot functions sees);
 *  - append: --append lines (new symbols above the others, one in ten re-declaring an earlier
 *    start) appended to the file, then pread() of the new bytes from the old end of file,
 *    perfmap_feed() and perfmap_build_index() (incremental), as tsym_refresh() does on a map
 *    that grew; repeated 20 times on the same map, median.
 * Memory is perfmap_memory() after the full load.
 *
 * Build: make build/symbolize_bench.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kprof/io.h"
#include "kprof/perfmap.h"

#include "../tests/prng.h"

#define CHUNK 65536
#define HOT_SYMS 64
#define APPEND_ROUNDS 20
#define BASE_ADDR UINT64_C(0x1c3a00000000)

struct text {
	char *buf;
	size_t len, cap;
};

struct sym {
	uint64_t start, size;
};

struct opts {
	size_t lines, lookups, append;
	int reps;
	uint64_t seed;
};

static uint64_t rng_state;

static uint64_t rng(void)
{
	return prng_next(&rng_state);
}

/* CPU time of the process, not wall time: the reference machine is shared, and a run that is
 * descheduled should not look slower. The benchmark is single-threaded. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "symbolize_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		die("malloc", ENOMEM);
	return p;
}

static void text_reserve(struct text *t, size_t more)
{
	if (t->len + more <= t->cap)
		return;
	t->cap = (t->len + more) * 2;
	t->buf = realloc(t->buf, t->cap);
	if (!t->buf)
		die("realloc", ENOMEM);
}

/* One line; *next is where the next ascending symbol may start. One in ten lines re-declares an
 * earlier symbol's start when reuse is set (and there is one). */
static void gen_line(struct text *t, struct sym *syms, size_t i, uint64_t *next, bool reuse)
{
	static const char *const kinds[] = {"JS:*", "JS:~", "LazyCompile:*", "Builtin:", "Stub:"};
	uint64_t r = rng(), start, size = 32 + (r % 4064) / 16 * 16;
	int n;

	if (reuse && i > 0 && r % 10 == 0) {
		start = syms[rng() % i].start;
	} else {
		start = *next;
		*next = start + size + ((r >> 20) % 8) * 32;
	}
	syms[i].start = start;
	syms[i].size = size;
	text_reserve(t, 128);
	n = snprintf(t->buf + t->len, 128,
		     "%" PRIx64 " %" PRIx64 " %sfn_%zu /srv/app/lib/mod_%u.js:%u:%u\n", start, size,
		     kinds[(r >> 32) % 5], i, (unsigned)((r >> 36) % 500),
		     (unsigned)((r >> 45) % 2000) + 1, (unsigned)((r >> 56) % 80) + 1);
	t->len += (size_t)n;
}

static int feed_all(struct perfmap *pm, const char *buf, size_t len)
{
	size_t off;
	int r;

	for (off = 0; off < len; off += CHUNK) {
		r = perfmap_feed(pm, buf + off, len - off < CHUNK ? len - off : CHUNK);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Read fd from off to its end into the perfmap, as tsym_refresh() does. Returns bytes read. */
static size_t feed_file(struct perfmap *pm, int fd, off_t off)
{
	static char buf[CHUNK];
	size_t total = 0;
	ssize_t n;
	int r;

	for (;;) {
		n = pread(fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("pread", errno);
		if (n == 0)
			break;
		r = perfmap_feed(pm, buf, (size_t)n);
		if (r < 0)
			die("perfmap_feed", -r);
		off += n;
		total += (size_t)n;
	}
	return total;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static struct perfmap *pm_new(void)
{
	struct perfmap *pm;
	int r = perfmap_new(NULL, &pm);

	if (r < 0)
		die("perfmap_new", -r);
	return pm;
}

static void write_or_die(int fd, const char *buf, size_t len)
{
	int err = write_all(fd, buf, len, false);

	if (err < 0)
		die("write", -err);
}

/* Random addresses inside symbols: uniform over the symbols, or 90% in HOT_SYMS of them. */
static uint64_t *gen_addrs(const struct sym *syms, size_t nsyms, size_t n, bool skewed)
{
	uint64_t *a = xmalloc(n * sizeof(*a));
	size_t hot[HOT_SYMS], i, k;

	for (k = 0; k < HOT_SYMS; k++)
		hot[k] = rng() % nsyms;
	for (i = 0; i < n; i++) {
		uint64_t r = rng();
		const struct sym *s = skewed && r % 10 != 0 ? &syms[hot[(r >> 8) % HOT_SYMS]]
							    : &syms[(r >> 8) % nsyms];

		a[i] = s->start + (r >> 40) % s->size;
	}
	return a;
}

static double time_lookups(struct perfmap *pm, const uint64_t *a, size_t n, size_t *hits)
{
	uintptr_t sink = 0;
	size_t i, h = 0;
	double t0, t1;

	t0 = now_s();
	for (i = 0; i < n; i++) {
		const struct perfmap_sym *s = perfmap_lookup(pm, a[i]);

		if (s) {
			h++;
			sink += (uintptr_t)s->name;
		}
	}
	t1 = now_s();
	*hits = h;
	__asm__ volatile("" : : "r"(sink) : "memory");
	return t1 - t0;
}

struct result {
	double feed, index, file_load, mem_mib;
	double lk_uniform, lk_skewed, hit_pct;
	double app_read, app_index, app_total;
	uint64_t entries, bad;
};

static void run_layout(const struct opts *o, bool reuse, const char *tmpdir, struct result *res)
{
	struct text t = {0}, app = {0};
	struct sym *syms = xmalloc((o->lines + (size_t)APPEND_ROUNDS * o->append) * sizeof(*syms));
	size_t nv = (size_t)(o->reps > APPEND_ROUNDS ? o->reps : APPEND_ROUNDS);
	double *feed = xmalloc(nv * sizeof(double)), *idx = xmalloc(nv * sizeof(double));
	double *file = xmalloc(nv * sizeof(double));
	uint64_t next = BASE_ADDR, *addrs;
	struct perfmap_stats st;
	char path[4096];
	struct perfmap *pm = NULL;
	size_t i, hits;
	int fd, r, k;

	fprintf(stderr, "symbolize_bench: %s layout: generating %zu lines\n",
		reuse ? "10%-reused" : "ascending", o->lines);
	for (i = 0; i < o->lines; i++)
		gen_line(&t, syms, i, &next, reuse);

	snprintf(path, sizeof(path), "%s/symbolize-bench-XXXXXX", tmpdir);
	fd = mkstemp(path);
	if (fd < 0)
		die(path, errno);
	write_or_die(fd, t.buf, t.len);

	for (k = 0; k < o->reps; k++) {
		double t0, t1, t2;

		pm = pm_new();
		t0 = now_s();
		r = feed_all(pm, t.buf, t.len);
		if (r < 0)
			die("perfmap_feed", -r);
		t1 = now_s();
		r = perfmap_build_index(pm);
		if (r < 0)
			die("perfmap_build_index", -r);
		t2 = now_s();
		feed[k] = t1 - t0;
		idx[k] = t2 - t1;
		perfmap_free(pm);

		/* From the file, as a full re-read: open, pread to the end, index. */
		pm = pm_new();
		t0 = now_s();
		{
			int rfd = open(path, O_RDONLY | O_CLOEXEC);

			if (rfd < 0)
				die(path, errno);
			feed_file(pm, rfd, 0);
			close(rfd);
		}
		r = perfmap_build_index(pm);
		if (r < 0)
			die("perfmap_build_index", -r);
		file[k] = now_s() - t0;
		if (k + 1 < o->reps)
			perfmap_free(pm);
	}
	perfmap_get_stats(pm, &st);
	res->entries = st.entries;
	res->bad = st.bad_lines;
	res->mem_mib = (double)perfmap_memory(pm) / (1024.0 * 1024.0);
	res->feed = median(feed, o->reps);
	res->index = median(idx, o->reps);
	res->file_load = median(file, o->reps);

	fprintf(stderr, "symbolize_bench: %zu lookups, uniform then skewed\n", o->lookups);
	addrs = gen_addrs(syms, o->lines, o->lookups, false);
	for (k = 0; k < o->reps; k++)
		feed[k] = time_lookups(pm, addrs, o->lookups, &hits);
	res->lk_uniform = (double)o->lookups / median(feed, o->reps);
	/* A hit can only be missed if a later, reused start cut the symbol short. */
	res->hit_pct = 100.0 * (double)hits / (double)o->lookups;
	free(addrs);
	addrs = gen_addrs(syms, o->lines, o->lookups, true);
	for (k = 0; k < o->reps; k++)
		feed[k] = time_lookups(pm, addrs, o->lookups, &hits);
	res->lk_skewed = (double)o->lookups / median(feed, o->reps);
	free(addrs);

	fprintf(stderr, "symbolize_bench: %d appends of %zu lines\n", APPEND_ROUNDS, o->append);
	for (k = 0; k < APPEND_ROUNDS; k++) {
		struct stat sb;
		double t0, t1, t2;
		size_t n0 = o->lines + (size_t)k * o->append;

		app.len = 0;
		for (i = 0; i < o->append; i++)
			gen_line(&app, syms, n0 + i, &next, true);
		if (fstat(fd, &sb) < 0)
			die("fstat", errno);
		write_or_die(fd, app.buf, app.len);
		t0 = now_s();
		feed_file(pm, fd, sb.st_size);
		t1 = now_s();
		r = perfmap_build_index(pm);
		if (r < 0)
			die("perfmap_build_index", -r);
		t2 = now_s();
		feed[k] = t1 - t0;
		idx[k] = t2 - t1;
		file[k] = t2 - t0;
	}
	res->app_read = median(feed, APPEND_ROUNDS);
	res->app_index = median(idx, APPEND_ROUNDS);
	res->app_total = median(file, APPEND_ROUNDS);

	perfmap_free(pm);
	close(fd);
	unlink(path);
	free(t.buf);
	free(app.buf);
	free(syms);
	free(feed);
	free(idx);
	free(file);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {{"lines", required_argument, NULL, 'l'},
						 {"lookups", required_argument, NULL, 'k'},
						 {"append", required_argument, NULL, 'a'},
						 {"reps", required_argument, NULL, 'r'},
						 {"seed", required_argument, NULL, 's'},
						 {"help", no_argument, NULL, 'h'},
						 {NULL, 0, NULL, 0}};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		char *end;
		unsigned long long v;

		if (c == 'h') {
			printf("usage: symbolize_bench [--lines N] [--lookups N] [--append N] "
			       "[--reps N] [--seed N]\n");
			exit(0);
		}
		if (c == '?')
			return -1;
		errno = 0;
		v = strtoull(optarg, &end, 10);
		if (errno || *end || end == optarg || (v == 0 && c != 's')) {
			fprintf(stderr, "symbolize_bench: bad value '%s'\n", optarg);
			return -1;
		}
		switch (c) {
		case 'l':
			o->lines = v;
			break;
		case 'k':
			o->lookups = v;
			break;
		case 'a':
			o->append = v;
			break;
		case 'r':
			o->reps = v > 99 ? 99 : (int)v;
			break;
		case 's':
			o->seed = v;
			break;
		}
	}
	return optind == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct opts o = {
	    .lines = 1000000, .lookups = 2000000, .append = 1000, .reps = 5, .seed = 1};
	const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct result res[2];
	int l;

	if (parse_opts(argc, argv, &o) < 0) {
		fprintf(stderr, "Try 'symbolize_bench --help'.\n");
		return 2;
	}
	for (l = 0; l < 2; l++) {
		rng_state = o.seed;
		run_layout(&o, l == 1, tmpdir, &res[l]);
	}

	printf("Perf map of %zu lines, V8 --perf-basic-prof format; median of %d runs (appends: "
	       "of %d).\n\n",
	       o.lines, o.reps, APPEND_ROUNDS);
	printf("| Layout | Entries (bad lines) | Feed from memory | Index build | Load total "
	       "(lines/s) | Read file + feed + index | Memory |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|\n");
	for (l = 0; l < 2; l++) {
		const struct result *r = &res[l];

		printf("| %s | %" PRIu64 " (%" PRIu64 ") | %.1f ms | %.1f ms | %.1f ms (%.2f M) "
		       "| %.1f ms | %.1f MiB |\n",
		       l ? "10% reused" : "ascending", r->entries, r->bad, r->feed * 1e3,
		       r->index * 1e3, (r->feed + r->index) * 1e3,
		       (double)o.lines / (r->feed + r->index) / 1e6, r->file_load * 1e3,
		       r->mem_mib);
	}
	printf(
	    "\n| Layout | Lookups/s, uniform (hit rate) | Lookups/s, skewed (90%% in %d symbols) "
	    "| Append %zu lines: pread + feed | Incremental index | Total |\n",
	    HOT_SYMS, o.append);
	printf("|---|---:|---:|---:|---:|---:|\n");
	for (l = 0; l < 2; l++) {
		const struct result *r = &res[l];

		printf("| %s | %.1f M (%.1f%%) | %.1f M | %.3f ms | %.2f ms | %.2f ms |\n",
		       l ? "10% reused" : "ascending", r->lk_uniform / 1e6, r->hit_pct,
		       r->lk_skewed / 1e6, r->app_read * 1e3, r->app_index * 1e3,
		       r->app_total * 1e3);
	}
	return 0;
}
