/* SPDX-License-Identifier: GPL-2.0-only */
/* procinfo.h: parsers of a process's /proc/PID/status and /proc/PID/stat text.
 *
 * The text comes from the kernel, but part of it is the process's own choosing (its comm, up
 * to 15 bytes of anything but NUL, parentheses and newlines included), so both are parsed
 * defensively: fields are found by their names (status) or counted after the last ')' (stat),
 * and anything missing or malformed is an error, never a guess. Pure: no I/O.
 */
#ifndef KPROF_PROCINFO_H
#define KPROF_PROCINFO_H

#include <stddef.h>
#include <stdint.h>

#define PROCINFO_NS_MAX 33 /* PID namespace levels: the kernel's 32 below the initial one */

struct procinfo_status {
	char comm[17];
	char state; /* R, S, D, Z, X, ... */
	int tgid;   /* 0 if absent */
	int nstgid; /* the tgid in the innermost PID namespace (tgid if none shown) */
	/* The tgid in each PID namespace from /proc's (0) down to its own (ns_levels - 1): the
	 * NStgid line (ns_levels 1, ns_tgid[0] = tgid if none shown). */
	int ns_levels;
	int ns_tgid[PROCINFO_NS_MAX];
	unsigned ruid, euid, suid, fsuid;
	unsigned rgid, egid; /* 0 if absent (Gid is not required) */
	unsigned threads;    /* 0 if absent */
	uint64_t sigcgt;     /* signals with a handler (bit N-1 for signal N); 0 if absent */
	uint64_t capprm;     /* permitted capabilities (bit N for capability N); all if absent */
};

struct procinfo_stat {
	char state;
	int tty_nr;
	uint64_t utime, stime; /* clock ticks */
	uint64_t start_ticks;  /* start time, clock ticks after boot */
};

/* 0, or -EBADMSG when Name, State, Tgid or Uid is missing or malformed. */
int procinfo_status(const char *text, size_t len, struct procinfo_status *st);
/* 0, or -EBADMSG when the line is cut short or malformed. */
int procinfo_stat(const char *text, size_t len, struct procinfo_stat *st);

#endif
