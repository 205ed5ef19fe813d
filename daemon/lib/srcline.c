// SPDX-License-Identifier: GPL-2.0-only
/* srcline.c: the kprof-lines protocol (see include/kprof/srcline.h).
 *
 * An answer is checked whole before a byte of it is changed: the first pass finds its "E\n"
 * line and checks every line's shape and length, the second cuts the fields in place. A line
 * longer than any valid one is refused as soon as it is seen, so a reader never buffers more
 * than one valid answer (SRCLINE_MAX_FRAMES lines of three fields) before it can tell.
 */
#include "kprof/srcline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* "F\t" + two fields + tab + a 10-digit line number: the longest valid line, without "\n". */
#define LINE_MAX (2 + 2 * SRCLINE_MAX_FIELD + 2 + 10)

size_t srcline_request(uint64_t addr, char *buf)
{
	return (size_t)snprintf(buf, SRCLINE_REQUEST_MAX, "0x%" PRIx64 "\n", addr);
}

int srcline_start(const char *buf, size_t len, size_t *used, char *why, size_t whylen)
{
	const char *nl = memchr(buf, '\n', len < 512 ? len : 512);

	if (!nl)
		return len >= 512 ? -EBADMSG : -EAGAIN;
	*used = nl - buf + 1;
	if (nl == buf + 1 && buf[0] == 'R')
		return 0;
	if (len >= 2 && buf[0] == 'X' && buf[1] == ' ') {
		size_t n = nl - buf - 2;

		if (whylen) {
			n = n < whylen - 1 ? n : whylen - 1;
			for (size_t i = 0; i < n; i++)
				why[i] = (unsigned char)buf[2 + i] < 0x20 || buf[2 + i] == 0x7f ? '?' : buf[2 + i];
			why[n] = 0;
		}
		return -ENOEXEC;
	}
	return -EBADMSG;
}

/* Whether s[0..n) is a valid field: at most SRCLINE_MAX_FIELD bytes, no control character. */
static bool field_ok(const char *s, size_t n)
{
	if (n > SRCLINE_MAX_FIELD)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

/* Whether line[0..n) (no "\n") is "F\tFUNC\tFILE\tLINE". */
static bool frame_ok(const char *line, size_t n)
{
	const char *end = line + n, *a, *b, *num;
	size_t digits;
	uint64_t v = 0;

	if (n < 2 || line[0] != 'F' || line[1] != '\t')
		return false;
	a = line + 2;
	b = memchr(a, '\t', end - a);
	if (!b || !field_ok(a, b - a))
		return false;
	num = memchr(b + 1, '\t', end - (b + 1));
	if (!num || !field_ok(b + 1, num - (b + 1)))
		return false;
	digits = end - ++num;
	if (!digits || digits > 10)
		return false;
	for (size_t i = 0; i < digits; i++) {
		if (num[i] < '0' || num[i] > '9')
			return false;
		v = v * 10 + (num[i] - '0');
	}
	return v <= UINT32_MAX;
}

int srcline_parse(char *buf, size_t len, size_t *used, struct srcline_frame *fr, size_t max)
{
	size_t pos = 0, nframes = 0, n = 0;

	/* Pass 1: the whole answer there and well formed. */
	for (;;) {
		char *nl = memchr(buf + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - (buf + pos)) : len - pos;

		if (ll > LINE_MAX)
			return -EBADMSG;
		if (!nl)
			return -EAGAIN;
		if (ll == 1 && buf[pos] == 'E')
			break;
		if (!frame_ok(buf + pos, ll) || ++nframes > SRCLINE_MAX_FRAMES)
			return -EBADMSG;
		pos += ll + 1;
	}
	*used = pos + 2;
	/* Pass 2: cut the fields in place. */
	for (char *line = buf; line < buf + pos && n < max;) {
		char *func = line + 2, *file = strchr(func, '\t'), *num = strchr(file + 1, '\t');
		char *nl = strchr(num + 1, '\n');
		uint32_t v = 0;

		*file++ = 0;
		*num++ = 0;
		*nl = 0;
		for (const char *d = num; *d; d++)
			v = v * 10 + (uint32_t)(*d - '0');
		fr[n++] = (struct srcline_frame){.func = func, .file = file, .line = v};
		line = nl + 1;
	}
	return (int)n;
}
