// SPDX-License-Identifier: GPL-2.0-only
/* procinfo.c: parsers of /proc/PID/status and /proc/PID/stat (see include/kprof/procinfo.h).
 *
 * status: "Key:\tvalue" lines; only Name, State, Tgid, NStgid, Uid, Gid, Threads, SigCgt and
 * CapPrm are read, each at most once (a comm cannot forge a line: the kernel escapes newlines in
 * Name). stat: "pid (comm) state ppid ..." where comm may hold spaces and ')': fields are counted
 * after the LAST ')'.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/procinfo.h"

/* Parse a decimal in [p, end) up to a non-digit: -1 if none or too large. */
static long long num(const char **pp, const char *end)
{
	const char *p = *pp;
	long long v = 0;

	if (p >= end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	*pp = p;
	return v;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static bool line_is(const char *p, const char *eol, const char *key)
{
	size_t k = strlen(key);

	return (size_t)(eol - p) >= k && !memcmp(p, key, k);
}

/* n numbers separated by white space (the Uid and Gid lines). */
static int ids_parse(const char *q, const char *eol, unsigned *const *f, int n)
{
	for (int i = 0; i < n; i++) {
		long long v;

		q = skip_ws(q, eol);
		v = num(&q, eol);
		if (v < 0 || v > UINT32_MAX)
			return -EBADMSG;
		*f[i] = v;
	}
	return 0;
}

/* NStgid: one value per PID namespace, outermost first, into st->ns_tgid; *last is the last
 * (-1 if none). */
static int nstgid_parse(const char *q, const char *eol, struct procinfo_status *st, long long *last)
{
	long long v = -1;

	st->ns_levels = 0;
	while (q < eol) {
		long long w = num(&q, eol);

		if (w <= 0 || w > INT32_MAX || st->ns_levels == PROCINFO_NS_MAX)
			return -EBADMSG;
		v = w;
		st->ns_tgid[st->ns_levels++] = w;
		q = skip_ws(q, eol);
	}
	*last = v;
	return 0;
}

/* SigCgt: 1 to 16 lower-case hex digits. */
static int sigcgt_parse(const char *q, const char *eol, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	for (; q < eol; q++, digits++) {
		int d = *q >= '0' && *q <= '9'	 ? *q - '0'
			: *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
						 : -1;

		if (d < 0 || digits >= 16)
			return -EBADMSG;
		v = v << 4 | (unsigned)d;
	}
	if (!digits)
		return -EBADMSG;
	*out = v;
	return 0;
}

/* The status lines read once, and whether they were. */
struct status_seen {
	bool name, state, uid, gid, sigcgt, capprm;
};

/* One line [p, eol) of status into st; lines not read (or read before) are skipped. */
static int status_line(const char *p, const char *eol, struct procinfo_status *st,
		       struct status_seen *seen)
{
	if (!seen->name && line_is(p, eol, "Name:\t")) {
		size_t n = eol - (p + 6);

		if (n >= sizeof(st->comm))
			n = sizeof(st->comm) - 1;
		memcpy(st->comm, p + 6, n);
		st->comm[n] = '\0';
		seen->name = true;
	} else if (!seen->state && line_is(p, eol, "State:\t") && eol > p + 7) {
		st->state = p[7];
		seen->state = true;
	} else if (!st->tgid && line_is(p, eol, "Tgid:\t")) {
		const char *q = p + 6;
		long long v = num(&q, eol);

		if (v <= 0 || v > INT32_MAX)
			return -EBADMSG;
		st->tgid = v;
	} else if (line_is(p, eol, "NStgid:\t")) {
		long long v;

		if (nstgid_parse(p + 8, eol, st, &v) < 0)
			return -EBADMSG;
		if (v > 0)
			st->nstgid = v;
	} else if (!st->threads && line_is(p, eol, "Threads:\t")) {
		const char *q = p + 9;
		long long v = num(&q, eol);

		if (v < 0 || v > UINT32_MAX)
			return -EBADMSG;
		st->threads = v;
	} else if (!seen->uid && line_is(p, eol, "Uid:\t")) {
		unsigned *f[4] = {&st->ruid, &st->euid, &st->suid, &st->fsuid};

		if (ids_parse(p + 5, eol, f, 4) < 0)
			return -EBADMSG;
		seen->uid = true;
	} else if (!seen->gid && line_is(p, eol, "Gid:\t")) {
		unsigned *f[2] = {&st->rgid, &st->egid};

		if (ids_parse(p + 5, eol, f, 2) < 0)
			return -EBADMSG;
		seen->gid = true;
	} else if (!seen->sigcgt && line_is(p, eol, "SigCgt:\t")) {
		if (sigcgt_parse(p + 8, eol, &st->sigcgt) < 0)
			return -EBADMSG;
		seen->sigcgt = true;
	} else if (!seen->capprm && line_is(p, eol, "CapPrm:\t")) {
		if (sigcgt_parse(p + 8, eol, &st->capprm) < 0)
			return -EBADMSG;
		seen->capprm = true;
	}
	return 0;
}

int procinfo_status(const char *text, size_t len, struct procinfo_status *st)
{
	const char *p = text, *end = text + len;
	struct status_seen seen = {0};

	memset(st, 0, sizeof(*st));
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);

		if (!eol)
			eol = end;
		if (status_line(p, eol, st, &seen) < 0)
			return -EBADMSG;
		p = eol + 1;
	}
	if (!seen.name || !seen.state || !seen.uid || !st->tgid)
		return -EBADMSG;
	if (!seen.capprm)
		st->capprm = UINT64_MAX; /* not shown: assume any */
	if (!st->nstgid)
		st->nstgid = st->tgid;
	if (!st->ns_levels) {
		st->ns_levels = 1;
		st->ns_tgid[0] = st->tgid;
	}
	return 0;
}

int procinfo_stat(const char *text, size_t len, struct procinfo_stat *st)
{
	const char *end = text + len, *p = NULL;
	long long v[22];

	memset(st, 0, sizeof(*st));
	for (const char *q = text; q < end; q++)
		if (*q == ')')
			p = q;
	if (!p || end - p < 3 || p[1] != ' ')
		return -EBADMSG;
	st->state = p[2];
	p += 3;
	/* Fields 4 (ppid) to 22 (starttime); tty_nr (7) may be negative in theory: it is not
	 * for the kernel's encoding, so all are read as unsigned. */
	for (int field = 4; field <= 22; field++) {
		p = skip_ws(p, end);
		if (p < end && *p == '-') {
			p++;
			v[field - 1] = num(&p, end);
			if (v[field - 1] < 0)
				return -EBADMSG;
			v[field - 1] = -v[field - 1];
			continue;
		}
		v[field - 1] = num(&p, end);
		if (v[field - 1] < 0)
			return -EBADMSG;
	}
	st->tty_nr = (int)v[6];
	st->utime = v[13];
	st->stime = v[14];
	st->start_ticks = v[21];
	return 0;
}
