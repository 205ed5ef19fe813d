/* SPDX-License-Identifier: GPL-2.0-only */
/* top.h: `kprofctl top`, the live view (top.c). */
#ifndef KPROF_CLI_TOP_H
#define KPROF_CLI_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* pids may be empty (every attached target). */
struct top_opts {
	const char *socket_path;
	uint32_t *pids;
	size_t npids;
	unsigned interval_ms;
	unsigned iterations; /* 0: until q */
	bool json;	     /* NDJSON updates on stdout instead of the screen */
	bool full_names;     /* C++ names with their parameter lists (JSON: always) */
};
int top_run(const struct top_opts *o);

#endif
