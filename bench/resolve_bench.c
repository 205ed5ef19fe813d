// SPDX-License-Identifier: GPL-2.0-only
/* resolve_bench.c: cost of naming one sampled address with kprofd's own symbolizer
 * (tsym_resolve), per kind of address (issue 26: the symbol sources behind one table).
 *
 * Prints a Markdown table on stdout, progress on stderr; asserts nothing about time.
 * Usage: resolve_bench [--syms N] [--lookups N] [--reps N] [--only KIND] (defaults 20000 JIT
 * symbols, 2000000 lookups per kind, 5 repetitions, every kind). Times are CPU time of the process
 * (CLOCK_PROCESS_CPUTIME_ID), the median of --reps runs, divided by the lookups. Needs root
 * (the kernel's symbols show their addresses to root only).
 *
 * The target is this very process, as kprofd sees a target: a struct symbolizer and a struct
 * tsym made by tsym_new on its own pid, which reads its /proc/PID/maps, the ELF files mapped,
 * and a perf map /tmp/perf-PID.map written here: --syms functions of 64 bytes in an anonymous
 * executable mapping. The addresses, 4096 of each kind generated beforehand and cycled through:
 *  - jit: inside the perf map's functions (the maps, then the jitdump, then the perf map);
 *  - native: inside functions of libc and of this program (the maps, then an ELF symbol that
 *    covers the address);
 *  - vdso: inside the vdso's functions (as the dynamic linker finds them);
 *  - kernel: inside text symbols of /proc/kallsyms;
 *  - anon: in the anonymous mapping past the perf map's last function (no source names it:
 *    "[anon]", the slowest way through, which also asks whether the perf map grew).
 * tsym_resolve is what a sample costs kprofd the first time each of its addresses is seen;
 * later samples hit the target's address cache in front of it (profile_cache.c). On a shared
 * machine the times move by several percent from run to run; --only KIND under valgrind
 * --tool=callgrind counts the instructions instead (bench/resolve.sh).
 *
 * Build: make build/resolve_bench.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "symbols/symbolize.h"

#define NADDR 4096
#define FUNC_BYTES 64

enum kind { K_JIT, K_NATIVE, K_VDSO, K_KERNEL, K_ANON, K_N };
static const char *const kind_names[K_N] = {"jit", "native", "vdso", "kernel", "anon"};

static char map_path[64];

static void die(const char *what, int err)
{
	fprintf(stderr, "resolve_bench: %s: %s\n", what, strerror(err));
	if (map_path[0])
		unlink(map_path);
	exit(1);
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Functions of this program and of libc whose addresses are sampled (an offset inside). */
static int local_a(int x)
{
	return x * 3 + 1;
}

static void native_addrs(uint64_t *out)
{
	const uintptr_t fn[] = {(uintptr_t)local_a, (uintptr_t)cmp_double, (uintptr_t)rng,
				(uintptr_t)qsort,   (uintptr_t)malloc,	   (uintptr_t)free,
				(uintptr_t)fopen,   (uintptr_t)strtoull,   (uintptr_t)getopt_long};
	size_t n = sizeof(fn) / sizeof(fn[0]);

	for (size_t i = 0; i < NADDR; i++)
		out[i] = fn[i % n] + 1;
}

/* Addresses inside the vdso's functions, found by the dynamic linker, which loaded it. None
 * under valgrind (which gives a process no vdso). */
static bool vdso_addrs(uint64_t *out)
{
	static const char *const names[] = {"__vdso_clock_gettime", "__vdso_gettimeofday",
					    "__vdso_time", "__vdso_getcpu", "__vdso_clock_getres"};
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	uintptr_t fn[5];
	size_t n = 0;

	for (size_t i = 0; h && i < sizeof(names) / sizeof(names[0]); i++) {
		void *p = dlsym(h, names[i]);

		if (p)
			fn[n++] = (uintptr_t)p;
	}
	for (size_t i = 0; n && i < NADDR; i++)
		out[i] = fn[i % n] + 1;
	return n > 0;
}

static void kernel_addrs(uint64_t *out)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	uint64_t *text = NULL;
	size_t n = 0, cap = 0;
	char line[512], type;
	uint64_t a;

	if (!f)
		die("/proc/kallsyms", errno);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c", &a, &type) != 2 || !a ||
		    (type != 't' && type != 'T'))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			text = realloc(text, cap * sizeof(*text));
			if (!text)
				die("kallsyms", ENOMEM);
		}
		text[n++] = a;
	}
	fclose(f);
	if (!n)
		die("kallsyms shows no addresses (run as root)", EPERM);
	for (size_t i = 0; i < NADDR; i++)
		out[i] = text[rng() % n] + 1;
	free(text);
}

static void write_map(uint64_t code, unsigned nsyms)
{
	FILE *f;

	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", getpid());
	f = fopen(map_path, "we");
	if (!f)
		die(map_path, errno);
	for (unsigned i = 0; i < nsyms; i++)
		fprintf(f, "%" PRIx64 " %x JS:*fn_%u /srv/app/lib/mod_%u.js:%u:8\n",
			code + (uint64_t)i * FUNC_BYTES, FUNC_BYTES, i, i % 97, i % 1000);
	if (fclose(f))
		die(map_path, errno);
}

static double run(struct tsym *ts, const uint64_t *addrs, bool kernel, unsigned long lookups,
		  unsigned *named)
{
	struct sym_result r;
	double t0 = cpu_s();

	*named = 0;
	for (unsigned long i = 0; i < lookups; i++) {
		tsym_resolve(ts, addrs[i % NADDR], kernel, &r);
		*named += r.name[0] != '[';
	}
	return cpu_s() - t0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"syms", required_argument, NULL, 's'},
					     {"lookups", required_argument, NULL, 'l'},
					     {"reps", required_argument, NULL, 'r'},
					     {"only", required_argument, NULL, 'o'},
					     {NULL, 0, NULL, 0}};
	unsigned long lookups = 2000000, reps = 5, nsyms = 20000;
	static uint64_t addrs[K_N][NADDR];
	struct symbolizer *sz;
	struct tsym *ts;
	uint64_t code;
	size_t code_len;
	const char *only = NULL;
	bool has_vdso;
	void *mem;
	int c, err;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's')
			nsyms = strtoul(optarg, NULL, 10);
		else if (c == 'l')
			lookups = strtoul(optarg, NULL, 10);
		else if (c == 'r')
			reps = strtoul(optarg, NULL, 10);
		else if (c == 'o')
			only = optarg;
		else
			return 2;
	}
	if (!nsyms || !lookups || !reps || reps > 99)
		return 2;
	/* The JIT's code: nsyms functions, then as much again that no perf map names. */
	code_len = 2 * (size_t)nsyms * FUNC_BYTES;
	mem = mmap(NULL, code_len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap", errno);
	code = (uintptr_t)mem;
	write_map(code, nsyms);
	for (size_t i = 0; i < NADDR; i++) {
		addrs[K_JIT][i] = code + (rng() % nsyms) * FUNC_BYTES + 8;
		addrs[K_ANON][i] = code + (nsyms + rng() % nsyms) * FUNC_BYTES + 8;
	}
	native_addrs(addrs[K_NATIVE]);
	has_vdso = vdso_addrs(addrs[K_VDSO]);
	kernel_addrs(addrs[K_KERNEL]);

	err = symbolizer_new(1ULL << 30, 1ULL << 30, &sz);
	if (err < 0)
		die("symbolizer_new", -err);
	err = tsym_new(sz, getpid(), getuid(), geteuid(), 64ULL << 20, &ts);
	if (err < 0)
		die("tsym_new", -err);
	tsym_set_reader(ts, 0);

	printf("| Addresses | ns per tsym_resolve (median of %lu) | min | named |\n", reps);
	printf("|---|---:|---:|---:|\n");
	for (int k = 0; k < K_N; k++) {
		double t[100];
		unsigned named = 0;

		if ((only && strcmp(only, kind_names[k])) || (k == K_VDSO && !has_vdso))
			continue;
		run(ts, addrs[k], k == K_KERNEL, NADDR, &named); /* warm: files loaded, caches */
		for (unsigned long i = 0; i < reps; i++)
			t[i] = run(ts, addrs[k], k == K_KERNEL, lookups, &named);
		qsort(t, reps, sizeof(t[0]), cmp_double);
		printf("| %s | %.1f | %.1f | %.1f%% |\n", kind_names[k],
		       t[reps / 2] * 1e9 / lookups, t[0] * 1e9 / lookups, 100.0 * named / lookups);
		fflush(stdout);
		fprintf(stderr, "%s done\n", kind_names[k]);
	}
	tsym_free(ts);
	symbolizer_free(sz);
	unlink(map_path);
	munmap(mem, code_len);
	return 0;
}
