// SPDX-License-Identifier: GPL-2.0-only
/* test_annview.c: unit tests of one function's annotation (daemon/lib/annview.c) on hand-made
 * x86-64 code: a counted loop, a gap of unknown bytes, undecodable bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/annview.h"
#include "kprof/cfg.h"

/* push rbp; mov rbp, rsp; mov ecx, 10; L: dec ecx; jne L; pop rbp; ret */
static const uint8_t loop[] = {0x55, 0x48, 0x89, 0xe5, 0xb9, 0x0a, 0x00, 0x00,
			       0x00, 0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3};
#define BASE 0x1000

static void test_loop(void **state)
{
	const struct annot_addr c[] = {
	    {.addr = BASE + 0x1, .self = 1},		 /* mov rbp, rsp */
	    {.addr = BASE + 0x9, .self = 5, .below = 2}, /* dec: the header */
	    {.addr = BASE + 0xa, .self = 3},		 /* inside dec: counts on it */
	    {.addr = BASE + 0xb, .self = 7},		 /* jne: the back edge */
	    {.addr = BASE + 0xd, .self = 1},		 /* pop */
	    {.addr = BASE + 0x40, .self = 2},		 /* no instruction there */
	};
	struct annview *v;

	(void)state;
	assert_int_equal(annview_build(loop, NULL, sizeof(loop), BASE, BASE, c, 6, &v), 0);
	assert_int_equal(v->cfg_err, 0);
	assert_int_equal(v->ninsns, 7);
	assert_string_equal(v->insns[0].text, "pushq %rbp");
	assert_string_equal(v->insns[3].text, "decl %ecx");
	assert_int_equal(v->insns[3].self, 8);
	assert_int_equal(v->insns[3].below, 2);
	assert_int_equal(v->insns[4].self, 7);
	assert_int_equal(v->self, 17);
	assert_int_equal(v->outside_self, 2);
	/* Blocks: entry [0, 9), the loop [9, d) (header, back edge source), the exit [d, f). */
	assert_int_equal(v->nblocks, 3);
	assert_int_equal(v->blocks[1].start, BASE + 9);
	assert_int_equal(v->blocks[1].end, BASE + 0xd);
	assert_true(v->blocks[1].flags & CFG_BLOCK_HEADER);
	assert_true(v->blocks[1].flags & CFG_BLOCK_BACK_SRC);
	assert_int_equal(v->blocks[1].loop, 1);
	assert_int_equal(v->blocks[1].loop_depth, 1);
	assert_int_equal(v->blocks[0].loop, ANNVIEW_NONE);
	assert_int_equal(v->blocks[1].self, 15);
	assert_int_equal(v->blocks[1].ninsns, 2);
	assert_int_equal(v->blocks[1].first_insn, 3);
	assert_int_equal(v->insns[3].block, 1);
	assert_string_equal(v->blocks[2].term, "ret");
	assert_int_equal(v->nloops, 1);
	assert_int_equal(v->nbacks, 1);
	assert_int_equal(v->backs[0].from_addr, BASE + 0xb);
	assert_int_equal(v->backs[0].to_addr, BASE + 0x9);
	/* Hottest first: the loop, then the entry and the exit (1 each: by address). */
	assert_int_equal(v->hot[0], 1);
	assert_int_equal(v->hot[1], 0);
	assert_int_equal(v->hot[2], 2);
	annview_free(v);
}

static void test_unknown_and_bad(void **state)
{
	uint8_t code[sizeof(loop) + 2], have[sizeof(loop) + 2];
	const struct annot_addr c[] = {{.addr = BASE + 0x6, .self = 4}};
	struct annview *v;

	(void)state;
	memcpy(code, loop, sizeof(loop));
	code[sizeof(loop)] = 0xd6; /* not an instruction in 64-bit mode */
	code[sizeof(loop) + 1] = 0x90;
	memset(have, 1, sizeof(have));
	/* Bytes 5..7 unknown: one row, the count inside it kept there; the mov before them is cut
	 * (a .byte row); blocks only over the known prefix. */
	memset(have + 5, 0, 3);
	assert_int_equal(annview_build(code, have, sizeof(code), BASE, BASE, c, 1, &v), 0);
	assert_int_equal(v->unknown_bytes, 3);
	assert_string_equal(v->insns[2].text, ".byte 0xb9");
	assert_string_equal(v->insns[3].text, "(not captured)");
	assert_int_equal(v->insns[3].size, 3);
	assert_int_equal(v->insns[3].self, 4);
	assert_int_equal(v->cfg_err, 0);
	assert_int_equal(v->insns[3].block, ANNVIEW_NONE);
	assert_int_equal(v->insns[0].block, 0);
	annview_free(v);
	/* All known: the bad byte is a .byte row after the ret. */
	assert_int_equal(annview_build(code, NULL, sizeof(code), BASE, BASE, c, 1, &v), 0);
	assert_string_equal(v->insns[7].text, ".byte 0xd6");
	assert_string_equal(v->insns[8].text, "nop");
	annview_free(v);
	/* The entry's byte unknown: no blocks, said. */
	memset(have, 0, 1);
	assert_int_equal(annview_build(code, have, sizeof(code), BASE, BASE, c, 1, &v), 0);
	assert_int_equal(v->cfg_err, -ENODATA);
	assert_int_equal(v->nblocks, 0);
	annview_free(v);
}

static void test_args(void **state)
{
	struct annview *v;

	(void)state;
	assert_int_equal(annview_build(NULL, NULL, 4, BASE, BASE, NULL, 0, &v), -EINVAL);
	assert_int_equal(annview_build(loop, NULL, 0, BASE, BASE, NULL, 0, &v), -EINVAL);
	assert_int_equal(annview_build(loop, NULL, 4, UINT64_MAX - 1, 0, NULL, 0, &v), -EINVAL);
	assert_int_equal(annview_build(loop, NULL, 4, BASE, BASE, NULL, 1, &v), -EINVAL);
	assert_int_equal(annview_build(loop, NULL, ANNVIEW_MAX_BYTES + 1, BASE, BASE, NULL, 0, &v),
			 -E2BIG);
	/* An entry outside the code: instructions, no blocks. */
	assert_int_equal(annview_build(loop, NULL, sizeof(loop), BASE, BASE + 100, NULL, 0, &v), 0);
	assert_int_equal(v->cfg_err, -ENODATA);
	assert_int_equal(v->ninsns, 7);
	annview_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loop),
	    cmocka_unit_test(test_unknown_and_bad),
	    cmocka_unit_test(test_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
