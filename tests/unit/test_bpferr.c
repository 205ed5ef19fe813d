// SPDX-License-Identifier: GPL-2.0-only
/* test_bpferr.c: unit tests of the load-failure explanations (daemon/lib/bpferr.c), on the
 * messages libbpf 1.1 and the verifier print on a failed load (the helper case's words are those
 * of a real load on Debian's 5.10, which test_kernels.sh shows; the CO-RE case follows libbpf
 * 1.1's fixed-up log). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/bpferr.h"

static void test_core_field(void **state)
{
	const char *log =
	    "libbpf: prog 'kp_exit': BPF program load failed... no\n"
	    "libbpf: prog 'kp_fork': BPF program load failed: Invalid argument\n"
	    "libbpf: prog 'kp_fork': -- BEGIN PROG LOAD LOG --\n"
	    "reg type unsupported for arg#0 function kp_fork#59\n"
	    "78: (85) call unknown#195896080\n"
	    "invalid func unknown#195896080\n"
	    "processed 71 insns\n"
	    "-- END PROG LOAD LOG --\n"
	    "libbpf: prog 'kp_fork': failed to load: -22\n"
	    "78: <invalid CO-RE relocation>\n"
	    "failed to resolve CO-RE relocation <byte_off> [1174] struct cgroup.ancestors[0] "
	    "(0:43:0 @ offset 336)\n";
	char out[256];

	(void)state;
	assert_int_equal(bpferr_explain(log, out, sizeof(out)), 0);
	assert_string_equal(out, "program kp_fork: this kernel has no struct cgroup.ancestors "
				 "(Linux 6.0 and newer have it)");
}

/* The words of a real failed load on Debian's 5.10 and 6.1 (kp_thread_new loaded all the same). */
static void test_real_core_field(void **state)
{
	const char *log =
	    "libbpf: prog 'kp_thread_new': BPF program load failed: Invalid argument\n"
	    "libbpf: prog 'kp_thread_new': -- BEGIN PROG LOAD LOG --\n"
	    "77: (85) call unknown#195896080\n"
	    "invalid func unknown#195896080\n"
	    "processed 1599 insns (limit 1000000) max_states_per_insn 4 total_states 60\n"
	    "-- END PROG LOAD LOG --\n"
	    "libbpf: prog 'kp_thread_new': failed to load: -22\n"
	    "77: <invalid CO-RE relocation>\n"
	    "failed to resolve CO-RE relocation <byte_off> [80] struct task_struct.perf_event_ctxp "
	    "(0:185 @ offset 2480)\n";
	char out[256];

	(void)state;
	assert_int_equal(bpferr_explain(log, out, sizeof(out)), 0);
	assert_string_equal(out, "program kp_thread_new: this kernel has no struct "
				 "task_struct.perf_event_ctxp (Linux 6.2 and newer have it)");
}

static void test_unknown_field(void **state)
{
	const char *log = "libbpf: prog 'kp_x': failed to load: -22\n"
			  "failed to resolve CO-RE relocation <byte_off> [12] struct foo.bar "
			  "(0:1 @ offset 8)\n";
	char out[256];

	(void)state;
	assert_int_equal(bpferr_explain(log, out, sizeof(out)), 0);
	assert_string_equal(out, "program kp_x: this kernel has no struct foo.bar");
}

static void test_helper(void **state)
{
	const char *v = NULL;
	char out[256];

	(void)state;
	assert_int_equal(bpferr_explain("libbpf: prog 'kp_sample': BPF program load failed: "
					"Invalid argument\n"
					"9: (85) call unknown#174\ninvalid func unknown#174\n",
					out, sizeof(out)),
			 0);
	assert_string_equal(out, "program kp_sample: this kernel has no BPF helper "
				 "bpf_get_attach_cookie (#174; Linux 5.15 and newer have it)");
	assert_int_equal(
	    bpferr_explain("libbpf: prog 'kp_y': x\nunknown func bpf_foo#999\n", out, sizeof(out)),
	    0);
	assert_string_equal(out, "program kp_y: this kernel has no BPF helper #999");
	assert_string_equal(bpferr_helper(130, &v), "bpf_ringbuf_output");
	assert_string_equal(v, "5.8");
	assert_null(bpferr_helper(1, &v));
	assert_string_equal(bpferr_prog_type("syscall"), "5.14");
	assert_string_equal(bpferr_prog_type("tracing"), "5.5");
	assert_null(bpferr_prog_type("xdp"));
}

static void test_unknown_cause(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(bpferr_explain("libbpf: prog 'kp_scan_threads': BPF program load failed: "
					"Invalid argument\n",
					out, sizeof(out)),
			 -ENOENT);
	assert_string_equal(out, "program kp_scan_threads");
	assert_int_equal(bpferr_explain("", out, sizeof(out)), -ENOENT);
	assert_string_equal(out, "");
	/* A name too long for the buffer, a cut message: nothing made up. */
	assert_int_equal(bpferr_explain("prog 'abc", out, sizeof(out)), -ENOENT);
	assert_string_equal(out, "");
	assert_int_equal(bpferr_explain("failed to resolve CO-RE relocation <x>", out, 8), -ENOENT);
	/* A small output buffer: cut, terminated. */
	assert_int_equal(bpferr_explain("invalid func unknown#174", out, 10), 0);
	assert_int_equal(strlen(out), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_core_field),	  cmocka_unit_test(test_real_core_field),
	    cmocka_unit_test(test_unknown_field), cmocka_unit_test(test_helper),
	    cmocka_unit_test(test_unknown_cause),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
