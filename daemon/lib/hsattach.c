// SPDX-License-Identifier: GPL-2.0-only
/* hsattach.c: requests, replies and flags of HotSpot's attach protocol (include/kprof/hsattach.h).
 *
 * Everything here reads bytes a JVM or its command line chose: lengths are the caller's, never
 * a NUL's, and nothing is read past them.
 */
#include <errno.h>
#include <string.h>

#include "kprof/hsattach.h"

static char *put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	p[n] = '\0';
	return p + n + 1;
}

ssize_t hsattach_request(char *buf, size_t cap, const char *cmd, const char *arg0, const char *arg1,
			 const char *arg2)
{
	const char *args[3] = {arg0 ? arg0 : "", arg1 ? arg1 : "", arg2 ? arg2 : ""};
	size_t n = strlen(cmd), need = 2 + n + 1;
	char *p = buf;

	if (!n || n > HSATTACH_NAME_MAX)
		return -ENAMETOOLONG;
	for (int i = 0; i < 3; i++) {
		size_t a = strlen(args[i]);

		if (a > HSATTACH_ARG_MAX)
			return -ENAMETOOLONG;
		need += a + 1;
	}
	if (need > cap)
		return -ENOSPC;
	p = put(p, "1", 1);
	p = put(p, cmd, n);
	for (int i = 0; i < 3; i++)
		p = put(p, args[i], strlen(args[i]));
	return p - buf;
}

int hsattach_reply(const char *buf, size_t len, struct hsattach_reply *r)
{
	const char *p = buf, *end = buf + len;
	long long v = 0;
	bool neg = false;
	int digits = 0;

	if (!len)
		return -ENODATA;
	if (*p == '-') {
		neg = true;
		p++;
	}
	/* An int in decimal: at most 10 digits. */
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (++digits > 10)
			return -EBADMSG;
		v = v * 10 + (*p - '0');
	}
	if (!digits || p >= end || *p != '\n' || v > (neg ? 2147483648LL : 2147483647LL))
		return -EBADMSG;
	p++;
	r->code = neg ? (int)-v : (int)v;
	r->text = p;
	r->text_len = end - p;
	return 0;
}

static bool is_sep(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int hsattach_flag(const char *text, size_t len, const char *name)
{
	size_t n = strlen(name);
	const char *p = text, *end = text + len;
	int found = -ENOENT;

	while (p < end) {
		const char *tok, *q;

		while (p < end && is_sep(*p))
			p++;
		tok = p;
		while (p < end && !is_sep(*p))
			p++;
		q = tok;
		/* "-XX:" then '+' or '-', then exactly the name. */
		if (p - q == (ptrdiff_t)(5 + n) && !memcmp(q, "-XX:", 4) &&
		    (q[4] == '+' || q[4] == '-') && !memcmp(q + 5, name, n))
			found = q[4] == '+';
	}
	return found;
}

int hsattach_getenv(const char *env, size_t len, const char *name, const char **val, size_t *vlen)
{
	size_t n = strlen(name);
	const char *p = env, *end = env + len;

	while (p < end) {
		const char *e = memchr(p, '\0', end - p);

		if (!e)
			e = end;
		if ((size_t)(e - p) > n && !memcmp(p, name, n) && p[n] == '=') {
			*val = p + n + 1;
			*vlen = e - (p + n + 1);
			return 0;
		}
		p = e + 1;
	}
	return -ENOENT;
}

bool hsattach_is_libjvm(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "libjvm.so") || !strcmp(base, "libjvm.so (deleted)");
}
