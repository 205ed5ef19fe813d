// SPDX-License-Identifier: GPL-2.0-only
/* pingpong: two threads pass a byte back and forth through two pipes for SECONDS seconds, then
 * print the round trips per second (each round trip blocks both threads once: the
 * context-switch-heavy load of docs/BENCHMARKS.md "Off-CPU time"). Prints "ready" and waits for
 * a line on stdin first, so that kprofd can be attached before it starts (bench/offcpu.sh).
 * Also the process's CPU time (user + system) per round trip, which a loaded machine disturbs
 * less than the rate. */
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];

static void *echo(void *arg)
{
	char c;

	(void)arg;
	while (read(ab[0], &c, 1) == 1 && write(ba[1], &c, 1) == 1)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, t0, t;
	unsigned long n = 0;
	struct timespec ts;
	pthread_t th;
	char c = 'x', line[8];

	if (pipe(ab) || pipe(ba) || pthread_create(&th, NULL, echo, NULL))
		return 1;
	fputs("ready\n", stderr);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	do {
		for (int i = 0; i < 1000; i++, n++)
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
				return 1;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t = ts.tv_sec + ts.tv_nsec / 1e9;
	} while (t - t0 < secs);
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	printf("%.0f round trips/s, %.0f ns CPU per round trip\n", n / (t - t0),
	       ((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3) /
		   n);
	return 0;
}
