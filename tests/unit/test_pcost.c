// SPDX-License-Identifier: GPL-2.0-only
/* test_pcost.c: unit tests of the probe cost arithmetic (daemon/lib/pcost.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kprof/pcost.h"

static void test_per_hit_median(void **state)
{
	/* 16 us, 15 us and 40 us a hit (one round slowed by a neighbour): the median, 16 us. */
	struct pcost_round r[] = {
	    {1000000, 33000000, 2000}, {1000000, 31000000, 2000}, {1000000, 81000000, 2000}};
	uint64_t c;

	(void)state;
	assert_int_equal(pcost_per_hit(r, 3, &c), 0);
	assert_int_equal(c, 16000);
	/* Two rounds: the mean of the middle two. */
	assert_int_equal(pcost_per_hit(r, 2, &c), 0);
	assert_int_equal(c, 15500);
}

static void test_per_hit_noise_left_out(void **state)
{
	/* No hit (the probe missed), or faster with the probe (noise): left out. */
	struct pcost_round r[] = {{1000000, 5000000, 0}, {2000000, 1000000, 100}, {0, 300000, 100}};
	uint64_t c = 7;

	(void)state;
	assert_int_equal(pcost_per_hit(r, 2, &c), -ENODATA);
	assert_int_equal(c, 7);
	assert_int_equal(pcost_per_hit(r, 3, &c), 0);
	assert_int_equal(c, 3000);
	assert_int_equal(pcost_per_hit(NULL, 1, &c), -EINVAL);
	assert_int_equal(pcost_per_hit(r, PCOST_ROUNDS_MAX + 1, &c), -EINVAL);
}

static void test_slowdown(void **state)
{
	(void)state;
	/* 1 s of CPU, 50000 hits of 10 us: half of it the probes', 2x. */
	assert_float_equal(pcost_slowdown(1000000000, 50000, 10000), 2.0, 1e-9);
	/* No hit: 1x. */
	assert_float_equal(pcost_slowdown(1000000000, 0, 10000), 1.0, 1e-9);
	/* More probe time than CPU time (the cost measured on a quieter CPU): capped. */
	assert_float_equal(pcost_slowdown(1000000000, 200000, 10000), PCOST_MAX_SLOWDOWN, 1e-9);
	assert_float_equal(pcost_slowdown(1000000000, 99500, 10000), PCOST_MAX_SLOWDOWN, 1e-9);
	/* Unknown: no CPU time, no cost. */
	assert_float_equal(pcost_slowdown(0, 10, 10000), 0, 0);
	assert_float_equal(pcost_slowdown(1000000000, 10, 0), 0, 0);
}

static void test_hits_allowed(void **state)
{
	(void)state;
	/* 1.1x over 1 s of CPU at 16 us a hit: 1/11 s of probes, 5681 hits. */
	assert_int_equal(pcost_hits_allowed(1000000000, 1.1, 16000), 5681);
	/* And those hits give that slowdown back. */
	assert_true(pcost_slowdown(1000000000, 5681, 16000) <= 1.1);
	assert_true(pcost_slowdown(1000000000, 5700, 16000) > 1.1);
	assert_int_equal(pcost_hits_allowed(1000000000, 1.0, 16000), 0);
	assert_int_equal(pcost_hits_allowed(1000000000, 2, 0), 0);
}

static void test_slowdown_ns(void **state)
{
	(void)state;
	assert_float_equal(pcost_slowdown_ns(1000000000, 500000000), 2.0, 1e-9);
	assert_float_equal(pcost_slowdown_ns(1000000000, 0), 1.0, 1e-9);
	assert_float_equal(pcost_slowdown_ns(1000000000, 2000000000), PCOST_MAX_SLOWDOWN, 1e-9);
	assert_float_equal(pcost_slowdown_ns(0, 10), 0, 0);
}

/* Node under breakpoints (test_probe_cost.sh): 200,000 hits in 5 s of CPU, 16.5 us calibrated
 * (2.94x), while the workload ran 4.94x slower; its hash function held 76% of the samples before
 * and 15.4% while traced. */
static void test_ref_hit(void **state)
{
	struct pcost_ref r = {.base_ref = 760, .base_all = 1000, .ref = 154, .all = 1000};
	uint64_t c;

	(void)state;
	c = pcost_ref_hit_ns(&r, 5000000000ULL, 200000, 16500);
	assert_in_range(c, 19800, 20100);
	assert_true(pcost_slowdown(5000000000ULL, 200000, c) > 4.8);
	/* under the calibrated cost, the calibration stands */
	r.ref = 300;
	assert_int_equal(pcost_ref_hit_ns(&r, 5000000000ULL, 200000, 16500), 0);
	/* too few samples, a small reference, no slowdown to tell, nothing during */
	r = (struct pcost_ref){.base_ref = 76, .base_all = 100, .ref = 154, .all = 1000};
	assert_int_equal(pcost_ref_hit_ns(&r, 5000000000ULL, 200000, 16500), 0);
	r = (struct pcost_ref){.base_ref = 90, .base_all = 1000, .ref = 10, .all = 1000};
	assert_int_equal(pcost_ref_hit_ns(&r, 5000000000ULL, 200000, 16500), 0);
	r = (struct pcost_ref){.base_ref = 500, .base_all = 1000, .ref = 450, .all = 1000};
	assert_int_equal(pcost_ref_hit_ns(&r, 5000000000ULL, 200000, 16500), 0);
	r = (struct pcost_ref){.base_ref = 500, .base_all = 1000, .ref = 0, .all = 1000};
	assert_int_equal(pcost_ref_hit_ns(&r, 5000000000ULL, 200000, 16500), 0);
	/* capped at PCOST_REF_MAX_FACTOR x the calibration; bad counts refused */
	r = (struct pcost_ref){.base_ref = 900, .base_all = 1000, .ref = 1, .all = 1000};
	assert_int_equal(pcost_ref_hit_ns(&r, 5000000000ULL, 1000, 16500), 16500 * 3);
	r = (struct pcost_ref){.base_ref = 1001, .base_all = 1000, .ref = 1, .all = 1000};
	assert_int_equal(pcost_ref_hit_ns(&r, 5000000000ULL, 1000, 16500), 0);
	assert_int_equal(pcost_ref_hit_ns(NULL, 5000000000ULL, 1000, 16500), 0);
	assert_int_equal(pcost_ref_hit_ns(&r, 5000000000ULL, 0, 16500), 0);
}

static void test_budget(void **state)
{
	/* 1.1x allows the probes 1/11 of the target's CPU time: 90.9 ms of 1 s. */
	struct pcost_use cheap = {1000000000, 80000000}, dear = {1000000000, 100000000},
			 brief = {PCOST_STRETCH_MIN_CPU_NS - 1, PCOST_STRETCH_MIN_CPU_NS - 2},
			 paid = {1000000000, 72000000}, unpaid = {1000000000, 74000000};

	(void)state;
	/* In: a stretch or a trace over it goes off; under it, kept. */
	assert_int_equal(pcost_budget(true, &cheap, &cheap, 1.1), PCOST_KEEP);
	assert_int_equal(pcost_budget(true, &cheap, &dear, 1.1), PCOST_OFF);
	assert_int_equal(pcost_budget(true, &dear, &cheap, 1.1), PCOST_OFF);
	/* A stretch too short to judge alone waits (the trace as a whole is under). */
	assert_int_equal(pcost_budget(true, &cheap, &brief, 1.1), PCOST_KEEP);
	/* Off: back in under 0.8 of the allowed share (72.7 ms of 1 s), not before. */
	assert_int_equal(pcost_budget(false, &paid, &brief, 1.1), PCOST_ON);
	assert_int_equal(pcost_budget(false, &unpaid, &brief, 1.1), PCOST_KEEP);
	assert_int_equal(pcost_budget(false, &dear, &brief, 1.1), PCOST_KEEP);
	/* No budget, or nothing measured yet. */
	assert_int_equal(pcost_budget(true, &dear, &dear, 0), PCOST_KEEP);
	assert_int_equal(pcost_budget(true, &dear, &dear, 1.0), PCOST_KEEP);
	assert_int_equal(pcost_budget(false, &(struct pcost_use){0, 0}, &brief, 1.1), PCOST_KEEP);
	assert_int_equal(pcost_budget(true, NULL, &dear, 1.1), PCOST_KEEP);
}

static void test_pay(void **state)
{
	/* 1.1x: back in under 0.8 x 1/11 of the CPU time; 72.7 ms of probes need 1 s of it. */
	struct pcost_use paid = {1000000000, 72000000}, unpaid = {1000000000, 80000000};
	uint64_t x = pcost_pay_ns(&unpaid, 1.1);

	(void)state;
	assert_int_equal(pcost_pay_ns(&paid, 1.1), 0);
	/* 80 ms need 1.1 s: 100 ms more, and with it the probes may go back in. */
	assert_true(x > 99000000 && x < 101000000);
	assert_int_equal(
	    pcost_budget(false, &(struct pcost_use){unpaid.cpu_ns + x, 80000000}, &unpaid, 1.1),
	    PCOST_ON);
	assert_int_equal(pcost_budget(false,
				      &(struct pcost_use){unpaid.cpu_ns + x - 2000000, 80000000},
				      &unpaid, 1.1),
			 PCOST_KEEP);
	/* Nothing run yet: some CPU time first. */
	assert_true(pcost_pay_ns(&(struct pcost_use){0, 0}, 1.1) > 0);
	assert_int_equal(pcost_pay_ns(&paid, 1.0), UINT64_MAX);
	assert_int_equal(pcost_pay_ns(NULL, 1.1), UINT64_MAX);
}

static void test_duty(void **state)
{
	(void)state;
	assert_float_equal(pcost_duty(250, 1000), 0.25, 1e-12);
	assert_float_equal(pcost_duty(0, 1000), 0, 0);
	assert_float_equal(pcost_duty(2000, 1000), 1, 0);
	assert_float_equal(pcost_duty(0, 0), 1, 0);
}

static void test_over_budget(void **state)
{
	/* 100 ms of probes in 400 ms of CPU: 300 ms of work, 1.33x slower. */
	struct pcost_use st = {400000000, 100000000};
	char buf[320], small[16];

	(void)state;
	pcost_over_budget(buf, sizeof(buf), "exact mode", &st, 1.1);
	assert_string_equal(buf, "exact mode over its budget (1.33x slower in the last 400 ms of "
				 "its CPU time, 1.10x allowed): probes off until the target's "
				 "work has paid for them, and so on");
	pcost_over_budget(small, sizeof(small), "path trace of f", &st, 1.1);
	assert_string_equal(small, "path trace of f");
	buf[0] = 'x';
	pcost_over_budget(buf, sizeof(buf), NULL, &st, 1.1);
	assert_int_equal(buf[0], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_per_hit_median), cmocka_unit_test(test_per_hit_noise_left_out),
	    cmocka_unit_test(test_slowdown),	   cmocka_unit_test(test_hits_allowed),
	    cmocka_unit_test(test_slowdown_ns),	   cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_ref_hit),	   cmocka_unit_test(test_pay),
	    cmocka_unit_test(test_duty),	   cmocka_unit_test(test_over_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
