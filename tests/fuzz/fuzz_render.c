// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_render.c: libFuzzer target for kprofctl's output filters (cli/render.c).
 *
 * Every string kprofd or a target chose reaches the terminal through render_sanitize() and
 * scripts through render_json_strn(). The input is such a string, any bytes. The checks do not
 * trust render.c's own UTF-8 decoder: this file has its own strict one (no overlong forms, no
 * surrogates, nothing above U+10FFFF, nothing cut short), and from it an exact oracle:
 *  - render_sanitize: the input with every byte that starts no valid sequence, and every C0,
 *    DEL and C1 code point, replaced by one '?'. The output must also be valid UTF-8 with no
 *    byte < 0x20, no 0x7f and no U+0080-U+009F, the return value its count of characters, and
 *    valid printable input must come out unchanged. With a limit drawn from the hash, the output
 *    is the first `max` characters of the unlimited one. render_sanitize_dup agrees.
 *  - render_lines: per '\n'-separated line (up to the first NUL), the same as render_sanitize of
 *    that line, and the newlines kept where the input had them.
 *  - render_json_strn: parsed by a strict JSON string parser written here (RFC 8259: quotes,
 *    only the defined escapes, \u with 4 hex digits and no lone surrogates, no raw control
 *    bytes, valid UTF-8) and decoded; the decoded text must be the input with each invalid byte
 *    replaced by U+FFFD. render_json_string agrees on the NUL-terminated prefix.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../../cli/render.h"

/* Strict UTF-8: the length of the valid sequence at s (n bytes left) and its code point, or 0. */
static size_t u8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, c = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, c = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* The shortest form only. */
	if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) || (len == 4 && c < 0x10000))
		return 0;
	if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

static size_t u8_encode(uint32_t c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* memcmp that takes NULL for empty (an empty buffer or memstream may have no storage). */
static bool same(const void *a, size_t an, const void *b, size_t bn)
{
	return an == bn && (!an || !memcmp(a, b, an));
}

static bool is_control(uint32_t c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0x9f);
}

/* A growable byte buffer. */
struct buf {
	char *p;
	size_t n, cap;
};

static void buf_put(struct buf *b, const void *s, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = 2 * (b->n + n) + 16;
		b->p = realloc(b->p, b->cap);
		FUZZ_CHECK(b->p, "out of memory");
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

/* What render_sanitize must write for s, the first max characters of it; *chars: how many. */
static void oracle_sanitize(const unsigned char *s, size_t n, size_t max, struct buf *out,
			    size_t *chars)
{
	size_t i = 0, k = 0;

	while (i < n && k < max) {
		uint32_t c;
		size_t l = u8_decode(s + i, n - i, &c);

		if (!l || is_control(c))
			buf_put(out, "?", 1);
		else
			buf_put(out, s + i, l);
		i += l ? l : 1;
		k++;
	}
	*chars = k;
}

/* The output of a render function on an in-memory stream. */
struct mem {
	FILE *f;
	char *p;
	size_t n;
};

static void mem_open(struct mem *m)
{
	m->p = NULL;
	m->n = 0;
	m->f = open_memstream(&m->p, &m->n);
	FUZZ_CHECK(m->f, "open_memstream");
}

static void mem_close(struct mem *m)
{
	FUZZ_CHECK(fclose(m->f) == 0, "fclose of the memstream");
}

/* Terminal-safe: valid UTF-8, no C0, DEL or C1. Returns the number of code points. */
static size_t check_terminal_safe(const char *p, size_t n, const char *what)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0, k = 0;

	while (i < n) {
		uint32_t c;
		size_t l = u8_decode(s + i, n - i, &c);

		FUZZ_CHECK(l, "%s: invalid UTF-8 at byte %zu of %zu (0x%02x)", what, i, n, s[i]);
		FUZZ_CHECK(!is_control(c), "%s: control U+%04X at byte %zu", what, (unsigned)c, i);
		i += l;
		k++;
	}
	return k;
}

static bool printable_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t c;
		size_t l = u8_decode(s + i, n - i, &c);

		if (!l || is_control(c))
			return false;
		i += l;
	}
	return true;
}

static void check_sanitize(const uint8_t *data, size_t size, uint64_t h)
{
	struct buf want = {0};
	struct mem m;
	size_t chars, ret, max = (size_t)(h % (size + 2));
	char *dup;

	mem_open(&m);
	ret = render_sanitize(m.f, (const char *)data, size, SIZE_MAX);
	mem_close(&m);
	oracle_sanitize(data, size, SIZE_MAX, &want, &chars);
	FUZZ_CHECK(check_terminal_safe(m.p, m.n, "render_sanitize") == ret,
		   "render_sanitize returned %zu, wrote a different number of characters", ret);
	FUZZ_CHECK(ret == chars && same(m.p, m.n, want.p, want.n),
		   "render_sanitize differs from the oracle: %zu chars %zu bytes, oracle %zu %zu",
		   ret, m.n, chars, want.n);
	if (printable_utf8(data, size))
		FUZZ_CHECK(same(m.p, m.n, data, size),
			   "valid printable UTF-8 changed by render_sanitize");
	free(m.p);

	/* With a limit: the first max characters. */
	want.n = 0;
	mem_open(&m);
	ret = render_sanitize(m.f, (const char *)data, size, max);
	mem_close(&m);
	oracle_sanitize(data, size, max, &want, &chars);
	FUZZ_CHECK(ret == chars && ret <= max && same(m.p, m.n, want.p, want.n),
		   "render_sanitize with max %zu differs from the oracle", max);
	free(m.p);
	FUZZ_CHECK(render_sanitize(stdout, NULL, size, max) == 0, "render_sanitize(NULL)");

	/* render_sanitize_dup: up to the first NUL. */
	{
		size_t slen = strnlen((const char *)data, size);
		char *s = malloc(slen + 1);

		FUZZ_CHECK(s, "out of memory");
		memcpy(s, data, slen);
		s[slen] = '\0';
		want.n = 0;
		oracle_sanitize(data, slen, max, &want, &chars);
		dup = render_sanitize_dup(s, max);
		FUZZ_CHECK(dup && same(dup, strlen(dup), want.p, want.n),
			   "render_sanitize_dup differs");
		free(dup);
		free(s);
	}
	free(want.p);
}

static void check_lines(const uint8_t *data, size_t size)
{
	size_t slen = strnlen((const char *)data, size), nl_in = 0, nl_out = 0;
	char *s = malloc(slen + 1);
	struct buf want = {0};
	struct mem m;
	size_t chars, start = 0;

	FUZZ_CHECK(s, "out of memory");
	memcpy(s, data, slen);
	s[slen] = '\0';
	/* Expected: each line sanitized, the '\n' between them kept (none after an empty tail). */
	for (size_t i = 0; i <= slen; i++) {
		if (i < slen && s[i] != '\n')
			continue;
		oracle_sanitize((const unsigned char *)s + start, i - start, SIZE_MAX, &want,
				&chars);
		if (i < slen) {
			buf_put(&want, "\n", 1);
			nl_in++;
		}
		start = i + 1;
	}
	mem_open(&m);
	render_lines(m.f, s);
	mem_close(&m);
	for (size_t i = 0; i < m.n; i++)
		nl_out += m.p[i] == '\n';
	FUZZ_CHECK(nl_out == nl_in, "render_lines: %zu newlines, input had %zu", nl_out, nl_in);
	FUZZ_CHECK(same(m.p, m.n, want.p, want.n), "render_lines differs from the per-line oracle");
	/* Every line of it terminal-safe. */
	start = 0;
	for (size_t i = 0; i <= m.n; i++)
		if (i == m.n || m.p[i] == '\n') {
			check_terminal_safe(m.p + start, i - start, "render_lines");
			start = i + 1;
		}
	free(m.p);
	free(want.p);
	free(s);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse p[0..n) as exactly one JSON string (RFC 8259 section 7) and decode it into out as
 * UTF-8. Unpaired surrogate escapes are refused (the result would not be valid UTF-8). */
static void json_parse_string(const char *p, size_t n, struct buf *out)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 1;

	FUZZ_CHECK(n >= 2 && s[0] == '"', "JSON: does not start with '\"'");
	for (;;) {
		uint32_t c;
		size_t l;
		char enc[4];

		FUZZ_CHECK(i < n, "JSON: unterminated string");
		if (s[i] == '"') {
			FUZZ_CHECK(i == n - 1, "JSON: %zu bytes after the closing quote",
				   n - 1 - i);
			return;
		}
		FUZZ_CHECK(s[i] >= 0x20, "JSON: raw control byte 0x%02x at %zu", s[i], i);
		if (s[i] != '\\') {
			l = u8_decode(s + i, n - i, &c);
			FUZZ_CHECK(l, "JSON: invalid UTF-8 at %zu", i);
			buf_put(out, s + i, l);
			i += l;
			continue;
		}
		FUZZ_CHECK(i + 1 < n, "JSON: backslash at the end");
		switch (s[i + 1]) {
		case '"':
		case '\\':
		case '/':
			buf_put(out, s + i + 1, 1);
			i += 2;
			continue;
		case 'b':
			c = '\b';
			break;
		case 'f':
			c = '\f';
			break;
		case 'n':
			c = '\n';
			break;
		case 'r':
			c = '\r';
			break;
		case 't':
			c = '\t';
			break;
		case 'u':
			FUZZ_CHECK(i + 6 <= n, "JSON: \\u cut short");
			c = 0;
			for (int k = 2; k < 6; k++) {
				int v = hexval(p[i + k]);

				FUZZ_CHECK(v >= 0, "JSON: bad hex digit in \\u at %zu", i);
				c = c << 4 | (uint32_t)v;
			}
			/* A high surrogate must be followed by an escaped low one. */
			if (c >= 0xd800 && c <= 0xdbff) {
				uint32_t lo = 0;

				FUZZ_CHECK(i + 12 <= n && p[i + 6] == '\\' && p[i + 7] == 'u',
					   "JSON: lone high surrogate");
				for (int k = 8; k < 12; k++) {
					int v = hexval(p[i + k]);

					FUZZ_CHECK(v >= 0, "JSON: bad hex digit in \\u");
					lo = lo << 4 | (uint32_t)v;
				}
				FUZZ_CHECK(lo >= 0xdc00 && lo <= 0xdfff,
					   "JSON: bad surrogate pair");
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			} else {
				FUZZ_CHECK(c < 0xdc00 || c > 0xdfff, "JSON: lone low surrogate");
			}
			buf_put(out, enc, u8_encode(c, enc));
			i += 6;
			continue;
		default:
			FUZZ_CHECK(0, "JSON: unknown escape \\%c", p[i + 1]);
		}
		enc[0] = (char)c;
		buf_put(out, enc, 1);
		i += 2;
	}
}

/* What the JSON string must decode to: the input with each invalid byte as U+FFFD. */
static void oracle_json(const unsigned char *s, size_t n, struct buf *out)
{
	for (size_t i = 0; i < n;) {
		uint32_t c;
		size_t l = u8_decode(s + i, n - i, &c);

		if (!l) {
			buf_put(out, "\xef\xbf\xbd", 3);
			i++;
		} else {
			buf_put(out, s + i, l);
			i += l;
		}
	}
}

static void check_json(const uint8_t *data, size_t size)
{
	struct buf got = {0}, want = {0};
	struct mem m, m2;
	size_t slen = strnlen((const char *)data, size);
	char *s;

	mem_open(&m);
	render_json_strn(m.f, (const char *)data, size);
	mem_close(&m);
	json_parse_string(m.p, m.n, &got);
	oracle_json(data, size, &want);
	FUZZ_CHECK(same(got.p, got.n, want.p, want.n),
		   "render_json_strn decodes to something else than the input (%zu/%zu bytes)",
		   got.n, want.n);
	/* The escaped form itself: no byte a terminal acts on either. */
	for (size_t i = 0; i < m.n; i++)
		FUZZ_CHECK((unsigned char)m.p[i] >= 0x20 && m.p[i] != 0x7f,
			   "render_json_strn: raw byte 0x%02x", (unsigned char)m.p[i]);
	check_terminal_safe(m.p, m.n, "render_json_strn");
	free(m.p);

	s = malloc(slen + 1);
	FUZZ_CHECK(s, "out of memory");
	memcpy(s, data, slen);
	s[slen] = '\0';
	mem_open(&m2);
	render_json_string(m2.f, s);
	render_json_string(m2.f, NULL);
	mem_close(&m2);
	mem_open(&m);
	render_json_strn(m.f, s, slen);
	mem_close(&m);
	FUZZ_CHECK(m2.n == m.n + 2 && !memcmp(m.p, m2.p, m.n) && !memcmp(m2.p + m.n, "\"\"", 2),
		   "render_json_string differs from render_json_strn");
	free(m.p);
	free(m2.p);
	free(s);
	free(got.p);
	free(want.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fuzz_hash(data, size);

	check_sanitize(data, size, h);
	check_lines(data, size);
	check_json(data, size);
	return 0;
}
