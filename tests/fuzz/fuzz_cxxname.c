// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_cxxname.c: libFuzzer target for cxxname_short (daemon/lib/cxxname.c).
 *
 * Function names come from targets (their perf maps and ELF symbols, demangled): any bytes but
 * NUL. The input up to its first NUL is the name, in an exactly sized copy so that ASan sees a
 * read past its NUL. Checks: the short form is never longer than the name, is made of the
 * name's bytes in order, is NUL-terminated where its length says, and a smaller cap (chosen by
 * the input's hash) gives the same length and the same bytes, cut like snprintf.
 *
 * Then an oracle: a name is synthesized from the input, the demangler's way, from parts whose
 * short form is known: an optional return type, two to four components (identifiers made from
 * the input's bytes, with template arguments, an ABI tag, "(anonymous namespace)", a lambda, an
 * enclosing function's parameters, or an operator as the last one), a parameter list with
 * anything balanced in it, qualifiers and a clone suffix. cxxname_short must give exactly the
 * components (minus enclosing parameters) and the clone suffix.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kprof/cxxname.h"

static void check_name(const char *name, uint64_t h)
{
	size_t n = strlen(name), len, cap, i = 0, j = 0;
	char *out = malloc(n + 1), *cut;

	FUZZ_CHECK(out, "out of memory");
	len = cxxname_short(name, out, n + 1);
	FUZZ_CHECK(len <= n, "short form %zu bytes, name %zu", len, n);
	FUZZ_CHECK(strlen(out) == len, "length %zu, NUL at %zu", len, strlen(out));
	for (; i < n && j < len; i++)
		j += name[i] == out[j];
	FUZZ_CHECK(j == len, "the short form is not the name's bytes in order");
	cap = (size_t)(h % (n + 2));
	cut = malloc(cap ? cap : 1);
	FUZZ_CHECK(cut, "out of memory");
	FUZZ_CHECK(cxxname_short(name, cut, cap) == len, "length depends on cap %zu", cap);
	if (cap) {
		size_t w = len < cap - 1 ? len : cap - 1;

		FUZZ_CHECK(!memcmp(cut, out, w) && cut[w] == '\0', "cut at cap %zu differs", cap);
	}
	free(cut);
	free(out);
}

struct buf {
	char s[4096];
	size_t n;
};

static void add(struct buf *b, const char *s)
{
	size_t l = strlen(s);

	FUZZ_CHECK(b->n + l < sizeof(b->s), "synthesized name too long");
	memcpy(b->s + b->n, s, l);
	b->n += l;
	b->s[b->n] = '\0';
}

/* An identifier of 1-8 bytes from the input: letters, digits (not first), '_'. */
static void ident(struct buf *b, const uint8_t **p, const uint8_t *end)
{
	static const char chars[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789";
	size_t len = *p < end ? 1 + **p % 8 : 1;
	char id[9];

	for (size_t i = 0; i < len; i++) {
		uint8_t c = *p < end ? *(*p)++ : 0;

		id[i] = chars[c % (i ? sizeof(chars) - 1 : 53)];
	}
	id[len] = '\0';
	/* The keyword is not an identifier. */
	if (!strcmp(id, "operator"))
		id[0] = 'O';
	add(b, id);
}

static void synth(const uint8_t *data, size_t size, uint64_t h)
{
	static const char *const rets[] = {
	    "void ",	    "int ",	      "std::vector<int, std::allocator<int> > ",
	    "char const* ", "Foo<(Kind)1>& ", "unsigned long "};
	static const char *const args[] = {"<int>",	   "<char, std::char_traits<char> >",
					   "<((1)>(2))>",  "<void (int), f()::{lambda()#1}>",
					   "<&operator<>", "<1.5f>"};
	static const char *const ops[] = {
	    "operator()",      "operator< <int>",     "operator==<char>", "operator new[]",
	    "operator bool",   "operator<<",	      "operator->*",	  "operator,",
	    "operator\"\" _x", "operator char const*"};
	static const char *const params[] = {"()", "(int)", "(std::map<int, int>&, char const*)",
					     "(bool (*)(int), ...)", "((anonymous namespace)::X)"};
	static const char *const quals[] = {"", " const", " &&", " const volatile &", " noexcept"};
	static const char *const clones[] = {"", " [clone .cold]",
					     " [clone .isra.0] [clone .cold]"};
	const uint8_t *p = data, *end = data + size;
	struct buf name = {.n = 0}, want = {.n = 0};
	uint64_t s = h;
	size_t ncomp = 2 + prng_next(&s) % 3;
	char *out;
	size_t len;

	name.s[0] = want.s[0] = '\0';
	if (prng_next(&s) & 1)
		add(&name, rets[prng_next(&s) % 6]);
	for (size_t i = 0; i < ncomp; i++) {
		bool last = i + 1 == ncomp;
		uint64_t kind = prng_next(&s) % 8;
		struct buf c = {.n = 0};

		if (i) {
			add(&name, "::");
			add(&want, "::");
		}
		if (last && kind == 7) {
			add(&c, ops[prng_next(&s) % 10]);
		} else if (kind == 5) {
			add(&c, "(anonymous namespace)");
		} else if (kind == 6 && i) {
			add(&c, "{lambda(int, Foo<int>)#");
			ident(&c, &p, end);
			add(&c, "}");
		} else {
			if (kind == 1)
				add(&c, "~");
			ident(&c, &p, end);
			if (kind == 2 || kind == 3)
				add(&c, args[prng_next(&s) % 6]);
			if (kind == 3)
				add(&c, "[abi:cxx11]");
		}
		add(&name, c.s);
		add(&want, c.s);
		if (!last && kind == 4 && c.s[0] != '(') { /* an enclosing function */
			add(&name, params[prng_next(&s) % 5]);
			add(&name, quals[prng_next(&s) % 5]);
		}
	}
	add(&name, params[prng_next(&s) % 5]);
	add(&name, quals[prng_next(&s) % 5]);
	{
		const char *cl = clones[prng_next(&s) % 3];

		add(&name, cl);
		add(&want, cl);
	}
	out = malloc(name.n + 1);
	FUZZ_CHECK(out, "out of memory");
	len = cxxname_short(name.s, out, name.n + 1);
	FUZZ_CHECK(len == want.n && !strcmp(out, want.s), "'%s'\n  gave '%s'\n  want '%s'", name.s,
		   out, want.s);
	free(out);
	check_name(name.s, h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fuzz_hash(data, size);
	size_t n = strnlen((const char *)data, size);
	char *name = malloc(n + 1);

	FUZZ_CHECK(name, "out of memory");
	memcpy(name, data, n);
	name[n] = '\0';
	check_name(name, h);
	free(name);
	synth(data, size, h);
	return 0;
}
