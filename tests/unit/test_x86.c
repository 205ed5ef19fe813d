// SPDX-License-Identifier: GPL-2.0-only
/* test_x86.c: unit tests of the one x86-64 control-transfer classifier (daemon/lib/x86.c, with
 * Capstone): each class from hand-assembled bytes, immediate targets of direct transfers, and
 * the returns the CFG builder and the event classifier once disagreed on (sysret, sysexit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/x86.h"

#define BASE 0x401000u

struct one {
	uint8_t code[8];
	size_t len;
	enum x86_flow flow;
	int has_target;
	uint64_t target;
	const char *what;
};

static const struct one cases[] = {
    {{0xc3}, 1, X86_FLOW_RET, 0, 0, "ret"},
    {{0xc2, 0x08, 0x00}, 3, X86_FLOW_RET, 0, 0, "ret 8"},
    {{0x48, 0xcf}, 2, X86_FLOW_RET, 0, 0, "iretq"},
    {{0x0f, 0x07}, 2, X86_FLOW_RET, 0, 0, "sysret"},
    {{0x0f, 0x35}, 2, X86_FLOW_RET, 0, 0, "sysexit"},
    {{0x0f, 0x0b}, 2, X86_FLOW_TRAP, 0, 0, "ud2"},
    {{0xcc}, 1, X86_FLOW_TRAP, 0, 0, "int3"},
    {{0xf4}, 1, X86_FLOW_TRAP, 0, 0, "hlt"},
    {{0x0f, 0x05}, 2, X86_FLOW_SYS, 0, 0, "syscall"},
    {{0xcd, 0x80}, 2, X86_FLOW_SYS, 0, 0, "int 0x80"},
    {{0xeb, 0x02}, 2, X86_FLOW_JUMP, 1, BASE + 4, "jmp rel8"},
    {{0xe9, 0x10, 0, 0, 0}, 5, X86_FLOW_JUMP, 1, BASE + 0x15, "jmp rel32"},
    {{0xff, 0xe0}, 2, X86_FLOW_IJUMP, 0, 0, "jmp rax"},
    {{0xff, 0x20}, 2, X86_FLOW_IJUMP, 0, 0, "jmp [rax]"},
    {{0x75, 0x02}, 2, X86_FLOW_COND, 1, BASE + 4, "jne"},
    {{0x0f, 0x84, 0, 1, 0, 0}, 6, X86_FLOW_COND, 1, BASE + 0x106, "je rel32"},
    {{0xe3, 0x00}, 2, X86_FLOW_COND, 1, BASE + 2, "jrcxz"},
    {{0xe2, 0xfe}, 2, X86_FLOW_COND, 1, BASE, "loop"},
    {{0xe1, 0xfe}, 2, X86_FLOW_COND, 1, BASE, "loope"},
    {{0xe8, 0, 0, 0, 0}, 5, X86_FLOW_CALL, 1, BASE + 5, "call rel32"},
    {{0xff, 0xd0}, 2, X86_FLOW_ICALL, 0, 0, "call rax"},
    {{0xff, 0x10}, 2, X86_FLOW_ICALL, 0, 0, "call [rax]"},
    {{0x90}, 1, X86_FLOW_PLAIN, 0, 0, "nop"},
    {{0x55}, 1, X86_FLOW_PLAIN, 0, 0, "push rbp"},
    {{0x48, 0x89, 0xe5}, 3, X86_FLOW_PLAIN, 0, 0, "mov rbp, rsp"},
    {{0x48, 0xf7, 0xf1}, 3, X86_FLOW_PLAIN, 0, 0, "div rcx"},
};

static void test_classes(void **state)
{
	csh cs;
	cs_insn *ci;

	(void)state;
	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	assert_int_equal(cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON), CS_ERR_OK);
	ci = cs_malloc(cs);
	assert_non_null(ci);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct one *c = &cases[i];
		const uint8_t *p = c->code;
		size_t n = c->len;
		uint64_t addr = BASE, target = 0;

		print_message("%s\n", c->what);
		assert_true(cs_disasm_iter(cs, &p, &n, &addr, ci));
		assert_int_equal(ci->size, c->len);
		assert_int_equal(x86_flow(cs, ci), c->flow);
		if (c->flow == X86_FLOW_JUMP || c->flow == X86_FLOW_COND || c->flow == X86_FLOW_CALL) {
			assert_int_equal(x86_target(ci, &target), c->has_target);
			assert_int_equal(target, c->target);
		} else if (c->flow == X86_FLOW_IJUMP || c->flow == X86_FLOW_ICALL) {
			assert_false(x86_target(ci, &target));
		}
	}
	cs_free(ci, 1);
	cs_close(&cs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
