// SPDX-License-Identifier: GPL-2.0-only
/* test_ehframe.c: unit tests for the .eh_frame reader (daemon/lib/ehframe.c): sections built
 * here byte by byte as GCC emits them (a CIE "zR" with pcrel sdata4 pointers, FDEs of a
 * frameless syscall wrapper with two stack depths, of a frame-pointer function that saves rbp,
 * of one with remember/restore_state and of one whose CFA is an expression), the rule at
 * addresses before, inside and after each change, and malformed sections (cut lengths, a CIE
 * pointer out of the section, an unknown augmentation, a LEB128 that does not end): an error,
 * never a read past the bytes (ASan).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/ehframe.h"

#define VADDR 0x5000 /* where the section is loaded */

struct sec {
	uint8_t b[512];
	size_t n;
};

static void put(struct sec *s, const void *p, size_t n)
{
	assert_true(s->n + n <= sizeof(s->b));
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void put32(struct sec *s, uint32_t v)
{
	put(s, &v, 4);
}

/* Begin an entry: its length patched by end_entry. */
static size_t begin_entry(struct sec *s)
{
	size_t at = s->n;

	put32(s, 0);
	return at;
}

static void end_entry(struct sec *s, size_t at)
{
	uint32_t len = (uint32_t)(s->n - at - 4);

	memcpy(s->b + at, &len, 4);
}

/* The CIE GCC emits for x86-64: zR, code 1, data -8, RA column 16, pcrel sdata4 FDE pointers,
 * CFA = rsp + 8 and RA at CFA - 8. Returns its offset. */
static size_t put_cie(struct sec *s, const char *aug)
{
	static const uint8_t body[] = {1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0};
	size_t at = begin_entry(s);

	put32(s, 0);
	put(s, "\1", 1); /* version */
	put(s, aug, strlen(aug) + 1);
	put(s, body, sizeof(body));
	end_entry(s, at);
	return at;
}

/* An FDE of the CIE at cie covering [begin, begin + range) with instructions ins. */
static void put_fde(struct sec *s, size_t cie, uint32_t begin, uint32_t range, const uint8_t *ins,
		    size_t n)
{
	size_t at = begin_entry(s);
	int32_t rel;

	put32(s, (uint32_t)(s->n - cie)); /* the CIE, back from this field */
	rel = (int32_t)(begin - (VADDR + s->n));
	put32(s, (uint32_t)rel);
	put32(s, range);
	put(s, "\0", 1); /* no augmentation data */
	put(s, ins, n);
	end_entry(s, at);
}

/* clock_nanosleep's: rsp + 8 until 0x1034, rsp + 48 until 0x1079, rsp + 8 after. */
static const uint8_t wrapper[] = {0x74, 0x0e, 48, 0x02, 0x45, 0x0e, 8};
/* push rbp (rsp + 16, rbp at CFA - 16), mov rsp, rbp (CFA = rbp + 16). */
static const uint8_t framed[] = {0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6};
/* sub $24: rsp + 32; remember; at +8 rsp + 8 (an early return); restore: rsp + 32 again. */
static const uint8_t remembered[] = {0x44, 0x0e, 32, 0x0a, 0x48, 0x0e, 8, 0x41, 0x0b};
/* The CFA an expression (as a PLT's). */
static const uint8_t expr[] = {0x0f, 3, 0x77, 8, 0x06};

static void build(struct sec *s)
{
	size_t cie;

	memset(s, 0, sizeof(*s));
	cie = put_cie(s, "zR");
	put_fde(s, cie, 0x1000, 0x86, wrapper, sizeof(wrapper));
	put_fde(s, cie, 0x2000, 0x40, framed, sizeof(framed));
	put_fde(s, cie, 0x3000, 0x20, remembered, sizeof(remembered));
	put_fde(s, cie, 0x4000, 0x10, expr, sizeof(expr));
	put32(s, 0); /* the terminator */
}

static void expect(const struct sec *s, uint64_t pc, enum ehframe_cfa cfa, int64_t off,
		   bool rbp)
{
	struct ehframe_rule r;

	assert_int_equal(ehframe_rule_at(s->b, s->n, VADDR, pc, &r), 0);
	assert_int_equal(r.cfa, cfa);
	if (cfa != EHFRAME_CFA_OTHER) {
		assert_int_equal(r.cfa_off, off);
		assert_int_equal(r.ra_off, -8);
	}
	assert_int_equal(r.rbp_saved, rbp);
}

static void test_rules(void **state)
{
	struct sec s;
	struct ehframe_rule r;

	(void)state;
	build(&s);
	expect(&s, 0x1000, EHFRAME_CFA_SP, 8, false);
	expect(&s, 0x1023, EHFRAME_CFA_SP, 8, false); /* the single-threaded syscall's return */
	expect(&s, 0x1034, EHFRAME_CFA_SP, 48, false);
	expect(&s, 0x1065, EHFRAME_CFA_SP, 48, false); /* the other one's */
	expect(&s, 0x1079, EHFRAME_CFA_SP, 8, false);
	expect(&s, 0x1085, EHFRAME_CFA_SP, 8, false);
	expect(&s, 0x2000, EHFRAME_CFA_SP, 8, false);
	expect(&s, 0x2001, EHFRAME_CFA_SP, 16, true);
	assert_int_equal(ehframe_rule_at(s.b, s.n, VADDR, 0x2001, &r), 0);
	assert_int_equal(r.rbp_off, -16); /* push rbp: at CFA - 16 */
	expect(&s, 0x2004, EHFRAME_CFA_FP, 16, true);
	expect(&s, 0x203f, EHFRAME_CFA_FP, 16, true);
	expect(&s, 0x3004, EHFRAME_CFA_SP, 32, false);
	expect(&s, 0x300c, EHFRAME_CFA_SP, 8, false);
	expect(&s, 0x300d, EHFRAME_CFA_SP, 32, false); /* restore_state */
	expect(&s, 0x4004, EHFRAME_CFA_OTHER, 0, false);
	/* Outside every FDE. */
	assert_int_equal(ehframe_rule_at(s.b, s.n, VADDR, 0x1086, &r), -ENOENT);
	assert_int_equal(ehframe_rule_at(s.b, s.n, VADDR, 0xfff, &r), -ENOENT);
	assert_int_equal(ehframe_rule_at(s.b, s.n, VADDR, 0x9000, &r), -ENOENT);
	/* The same section loaded elsewhere: the pcrel pointers move with it. */
	assert_int_equal(ehframe_rule_at(s.b, s.n, VADDR + 0x100, 0x1134, &r), 0);
	assert_int_equal(r.cfa_off, 48);
}

static void test_malformed(void **state)
{
	struct sec s, t;
	struct ehframe_rule r;
	uint32_t v;

	(void)state;
	build(&s);
	/* Every cut of the section: an error or a rule, never a read past it. */
	for (size_t n = 0; n < s.n; n++) {
		uint8_t *copy = malloc(n ? n : 1);

		memcpy(copy, s.b, n);
		(void)ehframe_rule_at(copy, n, VADDR, 0x1040, &r);
		(void)ehframe_rule_at(copy, n, VADDR, 0x4004, &r);
		free(copy);
	}
	/* A length past the section. */
	t = s;
	v = 0x7fffffff;
	memcpy(t.b, &v, 4);
	assert_int_equal(ehframe_rule_at(t.b, t.n, VADDR, 0x1040, &r), -EBADMSG);
	/* An FDE's CIE pointer out of the section, back past its start. */
	t = s;
	memcpy(&v, t.b + 24 + 4, 4); /* the first FDE (after the 24-byte CIE) */
	v += 1000;
	memcpy(t.b + 24 + 4, &v, 4);
	assert_int_equal(ehframe_rule_at(t.b, t.n, VADDR, 0x1040, &r), -EBADMSG);
	/* A CIE with an augmentation it does not know: its FDEs are not read. */
	memset(&t, 0, sizeof(t));
	{
		size_t cie = put_cie(&t, "zQ");

		put_fde(&t, cie, 0x1000, 0x86, wrapper, sizeof(wrapper));
	}
	assert_int_equal(ehframe_rule_at(t.b, t.n, VADDR, 0x1040, &r), -ENOENT);
	/* A LEB128 that never ends, in an FDE's instructions. */
	memset(&t, 0, sizeof(t));
	{
		static const uint8_t bad[] = {0x0e, 0xff, 0xff, 0xff, 0xff, 0xff,
					      0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
		size_t cie = put_cie(&t, "zR");

		put_fde(&t, cie, 0x1000, 0x86, bad, sizeof(bad));
	}
	assert_int_equal(ehframe_rule_at(t.b, t.n, VADDR, 0x1040, &r), -EBADMSG);
	/* Unbalanced restore_state. */
	memset(&t, 0, sizeof(t));
	{
		static const uint8_t unbalanced[] = {0x0b};
		size_t cie = put_cie(&t, "zR");

		put_fde(&t, cie, 0x1000, 0x86, unbalanced, sizeof(unbalanced));
	}
	assert_int_equal(ehframe_rule_at(t.b, t.n, VADDR, 0x1040, &r), -EBADMSG);
	assert_int_equal(ehframe_rule_at(s.b, EHFRAME_MAX_BYTES + 1, VADDR, 0x1040, &r), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rules),
	    cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
