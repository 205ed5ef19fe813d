// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_hsattach.c: libFuzzer target for the HotSpot attach protocol bytes (daemon/lib/hsattach.c).
 *
 * What a JVM (or whatever listens at its socket's path) answers, and what a target's command line
 * and environment hold, are the target's choice. The input is parsed as a reply, as an option
 * list and as an environment, whole and cut at a point (each in an exactly sized copy, so ASan
 * sees any read past it). Oracles: a reply that parses has its code written back as "%d\n"
 * exactly as it began, and its text is the rest of the input; a flag found is the last "-XX:+NAME"
 * or "-XX:-NAME" token of a second, naive scan; a variable found lies inside the input and starts
 * right after "NAME=" at the start of an entry. Then a request is built from pieces of the input
 * (NULs mapped away) and must be exactly its strings, NUL-ended, or a refusal for a long name.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kprof/hsattach.h"

static void check_reply(const char *buf, size_t n)
{
	struct hsattach_reply r;
	char line[16];
	size_t k;
	int rc = hsattach_reply(buf, n, &r);

	FUZZ_CHECK(rc == 0 || rc == -EBADMSG || rc == -ENODATA, "hsattach_reply: %d", rc);
	FUZZ_CHECK(rc != -ENODATA || n == 0, "ENODATA for %zu bytes", n);
	if (rc < 0)
		return;
	FUZZ_CHECK(r.text >= buf + 2 && r.text <= buf + n && r.text + r.text_len == buf + n,
		   "text outside the reply");
	FUZZ_CHECK(r.text[-1] == '\n', "text not after the code's newline");
	/* The code line, read back by strtoll: the same value. */
	k = (size_t)(r.text - 1 - buf);
	FUZZ_CHECK(k < sizeof(line), "code line of %zu bytes", k);
	memcpy(line, buf, k);
	line[k] = '\0';
	FUZZ_CHECK(strtoll(line, NULL, 10) == r.code, "code %d from '%s'", r.code, line);
}

/* The naive scan: split on the same separators, compare whole tokens. */
static int naive_flag(const char *t, size_t n, const char *name)
{
	char want_on[64], want_off[64];
	int found = -ENOENT;
	size_t i = 0;

	snprintf(want_on, sizeof(want_on), "-XX:+%s", name);
	snprintf(want_off, sizeof(want_off), "-XX:-%s", name);
	while (i < n) {
		size_t j = i;

		while (j < n && t[j] != '\0' && t[j] != ' ' && t[j] != '\t' && t[j] != '\n' &&
		       t[j] != '\r')
			j++;
		if (j - i == strlen(want_on) && !memcmp(t + i, want_on, j - i))
			found = 1;
		if (j - i == strlen(want_off) && !memcmp(t + i, want_off, j - i))
			found = 0;
		i = j + 1;
	}
	return found;
}

static void check_text(const char *buf, size_t n)
{
	static const char *const names[] = {"PreserveFramePointer", "A", "UseG1GC"};
	const char *v;
	size_t vlen;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int f = hsattach_flag(buf, n, names[i]);

		FUZZ_CHECK(f == naive_flag(buf, n, names[i]), "flag %s: %d", names[i], f);
	}
	if (hsattach_getenv(buf, n, "JAVA_TOOL_OPTIONS", &v, &vlen) == 0) {
		FUZZ_CHECK(v >= buf + 18 && v + vlen <= buf + n, "value outside the environment");
		FUZZ_CHECK(!memcmp(v - 18, "JAVA_TOOL_OPTIONS=", 18), "not after NAME=");
		FUZZ_CHECK(v == buf + 18 || v[-19] == '\0', "not at the start of an entry");
		FUZZ_CHECK(!memchr(v, '\0', vlen), "value holds a NUL");
	}
}

static void each(const uint8_t *data, size_t n)
{
	char *buf = malloc(n ? n : 1);

	FUZZ_CHECK(buf, "out of memory");
	memcpy(buf, data, n);
	check_reply(buf, n);
	check_text(buf, n);
	free(buf);
}

/* A request from three pieces of the input: exactly "1\0" cmd "\0" args "\0"..., or refused. */
static void check_request(const uint8_t *data, size_t n, uint64_t seed)
{
	char s[4][HSATTACH_ARG_MAX + 8], buf[HSATTACH_REQUEST_MAX];
	size_t off = 0, want = 2;
	ssize_t len;
	bool toolong = false;

	for (int i = 0; i < 4; i++) {
		size_t k = (size_t)(prng_next(&seed) % (i ? HSATTACH_ARG_MAX + 4 : 20));

		if (k > n - off)
			k = n - off;
		for (size_t j = 0; j < k; j++)
			s[i][j] = data[off + j] ? (char)data[off + j] : 'x';
		s[i][k] = '\0';
		off += k;
		want += k + 1;
		toolong |= i == 0 ? (k == 0 || k > HSATTACH_NAME_MAX) : k > HSATTACH_ARG_MAX;
	}
	len = hsattach_request(buf, sizeof(buf), s[0], s[1], s[2], s[3]);
	if (toolong) {
		FUZZ_CHECK(len == -ENAMETOOLONG, "long name or argument: %zd", len);
		return;
	}
	FUZZ_CHECK(len == (ssize_t)want, "request of %zd bytes, %zu expected", len, want);
	FUZZ_CHECK(buf[0] == '1' && buf[1] == '\0', "version");
	off = 2;
	for (int i = 0; i < 4; i++) {
		size_t k = strlen(s[i]);

		FUZZ_CHECK(!memcmp(buf + off, s[i], k) && buf[off + k] == '\0', "string %d", i);
		off += k + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fuzz_hash(data, size);
	size_t cut = size ? (size_t)(h % (size + 1)) : 0;

	each(data, size);
	each(data, cut);
	each(data + cut, size - cut);
	check_request(data, size, h);
	return 0;
}
