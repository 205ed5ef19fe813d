// SPDX-License-Identifier: GPL-2.0-only
/* test_events.c: unit tests of the event classifier and of event counts from path counts
 * (daemon/lib/events.c, with cfg.c and Capstone). One hand-assembled function whose every
 * instruction is written out with the classes it must count in; the two Ball-Larus paths and
 * their events; a loop's events; Basso's accuracy metric.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/cfg.h"
#include "kprof/events.h"

#define BASE 0x401000u

/* B0 [0, 53): 15 instructions ending in jne; B1 [53, 55): leave; ret; B2 [55, 57): jmp rax. */
static const uint8_t code1[] = {
    0x55,				   /*  0 push rbp: stack */
    0x48, 0x89, 0xe5,			   /*  1 mov rbp, rsp */
    0x48, 0xff, 0x00,			   /*  4 inc qword [rax]: load, store */
    0x48, 0xc7, 0x45, 0xf8, 5,	  0, 0, 0, /*  7 mov qword [rbp-8], 5: store */
    0x48, 0x8b, 0x08,			   /* 15 mov rcx, [rax]: load */
    0xf0, 0x48, 0x0f, 0xc1, 0x08,	   /* 18 lock xadd [rax], rcx: load, store, atomic */
    0x48, 0xf7, 0xf1,			   /* 23 div rcx: int_div */
    0x48, 0x0f, 0xaf, 0xf7,		   /* 26 imul rsi, rdi: int_mul */
    0xf2, 0x0f, 0x58, 0xc1,		   /* 30 addsd xmm0, xmm1: fp_scalar */
    0x66, 0x0f, 0xfe, 0xc1,		   /* 34 paddd xmm0, xmm1: vector */
    0x0f, 0x05,				   /* 38 syscall */
    0xff, 0xd0,				   /* 40 call rax: indirect_call */
    0xe8, 0,	0,    0,    0,		   /* 42 call 47: call */
    0x48, 0x83, 0x38, 0x05,		   /* 47 cmp qword [rax], 5: load */
    0x75, 0x02,				   /* 51 jne 55: cond_branch */
    0xc9,				   /* 53 leave: stack */
    0xc3,				   /* 54 ret: return */
    0xff, 0xe0,				   /* 55 jmp rax: indirect_jump */
};

static struct cfg *build(const uint8_t *code, size_t len)
{
	struct cfg *g = NULL;

	assert_int_equal(cfg_build(code, len, BASE, BASE, NULL, &g), 0);
	return g;
}

static void test_classes(void **state)
{
	struct cfg *g = build(code1, sizeof(code1));
	uint32_t ev[3 * EV_NR], want[3 * EV_NR] = {0};

	(void)state;
	assert_int_equal(cfg_nblocks(g), 3);
	assert_int_equal(events_blocks(code1, sizeof(code1), BASE, g, ev), 0);
	want[EV_INSNS] = 15;
	want[EV_STACK] = 1;
	want[EV_LOAD] = 4;
	want[EV_STORE] = 3;
	want[EV_ATOMIC] = 1;
	want[EV_DIV] = 1;
	want[EV_MUL] = 1;
	want[EV_FP] = 1;
	want[EV_VEC] = 1;
	want[EV_SYS] = 1;
	want[EV_ICALL] = 1;
	want[EV_CALL] = 1;
	want[EV_COND] = 1;
	want[EV_NR + EV_INSNS] = 2;
	want[EV_NR + EV_STACK] = 1;
	want[EV_NR + EV_RET] = 1;
	want[2 * EV_NR + EV_INSNS] = 1;
	want[2 * EV_NR + EV_IJUMP] = 1;
	for (unsigned i = 0; i < 3 * EV_NR; i++)
		if (ev[i] != want[i])
			fail_msg("block %u class %s: %u, want %u", i / EV_NR,
				 events_name(i % EV_NR), ev[i], want[i]);
	/* Bytes that differ from the CFG's: refused. */
	assert_int_equal(events_blocks(code1, 10, BASE, g, ev), -EINVAL);
	cfg_free(g);
}

/* count(e) = sum over paths of count x events on the path. Path 0 is B0 B1 (fallthrough),
 * path 1 B0 B2 (taken): 7 and 3 times. */
static void test_paths(void **state)
{
	struct cfg *g = build(code1, sizeof(code1));
	uint32_t ev[3 * EV_NR];
	uint64_t func[EV_NR] = {0};

	(void)state;
	assert_int_equal(events_blocks(code1, sizeof(code1), BASE, g, ev), 0);
	assert_int_equal(cfg_num_paths(g), 2);
	assert_int_equal(events_add_path(g, ev, 0, 7, func, NULL, 0, NULL), 0);
	assert_int_equal(events_add_path(g, ev, 1, 3, func, NULL, 0, NULL), 0);
	assert_int_equal(func[EV_INSNS], 7 * 17 + 3 * 16);
	assert_int_equal(func[EV_RET], 7);
	assert_int_equal(func[EV_IJUMP], 3);
	assert_int_equal(func[EV_COND], 10);
	assert_int_equal(func[EV_STACK], 10 + 7);
	assert_int_equal(func[EV_LOAD], 40);
	assert_int_equal(events_add_path(g, ev, 2, 1, func, NULL, 0, NULL), -ERANGE);
	cfg_free(g);
}

/* A loop: B0 [0,1) nop; B1 [1,5) inc qword [rax]; jne B1 (back edge); B2 [5,6) ret.
 * Path ids: the numbering's paths through the loop header; events inside the loop only count
 * B1's. */
static void test_loop(void **state)
{
	static const uint8_t code[] = {0x90, 0x48, 0xff, 0x00, 0x75, 0xfb, 0xc3};
	struct cfg *g = build(code, sizeof(code));
	uint32_t ev[3 * EV_NR], hdr = 1;
	uint64_t func[EV_NR] = {0}, loop[EV_NR] = {0};
	struct cfg_step st[4];

	(void)state;
	assert_int_equal(cfg_nblocks(g), 3);
	assert_true(cfg_block_get(g, 1)->flags & CFG_BLOCK_HEADER);
	assert_int_equal(events_in_loop(g, 1, 1), 1);
	assert_int_equal(events_in_loop(g, 0, 1), 0);
	assert_int_equal(events_in_loop(g, 2, 1), 0);
	assert_int_equal(events_blocks(code, sizeof(code), BASE, g, ev), 0);
	/* One activation iterating 3 times: paths B0 B1 (back), B1 (back), B1 B2 (exit). */
	for (uint64_t id = 0; id < cfg_num_paths(g); id++) {
		int n = cfg_path_decode(g, id, st, 4);

		assert_true(n > 0);
		assert_int_equal(events_add_path(g, ev, id, 1, func, &hdr, 1, loop), 0);
	}
	/* Every path holds B1 once: 4 paths here (B0 B1 back, B0 B1 B2, B1 back, B1 B2). */
	assert_int_equal(cfg_num_paths(g), 4);
	assert_int_equal(loop[EV_LOAD], 4);
	assert_int_equal(loop[EV_INSNS], 8);
	assert_int_equal(loop[EV_RET], 0);
	assert_int_equal(func[EV_RET], 2);
	assert_int_equal(func[EV_INSNS], 8 + 2 + 2);
	cfg_free(g);
}

static void test_accuracy(void **state)
{
	(void)state;
	assert_true(events_accuracy(100, 100) == 1.0);
	assert_true(events_accuracy(90, 100) > 0.8999 && events_accuracy(90, 100) < 0.9001);
	assert_true(events_accuracy(110, 100) > 0.8999 && events_accuracy(110, 100) < 0.9001);
	assert_true(events_accuracy(0, 0) == 1.0);
	assert_true(events_accuracy(5, 0) == 0.0);
	assert_true(events_accuracy(300, 100) < 0);
	assert_null(events_name(EV_NR));
	assert_string_equal(events_name(EV_COND), "cond_branch");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_classes),
	    cmocka_unit_test(test_paths),
	    cmocka_unit_test(test_loop),
	    cmocka_unit_test(test_accuracy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
