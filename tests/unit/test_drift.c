// SPDX-License-Identifier: GPL-2.0-only
/* test_drift.c: unit tests of the profile-drift detector (daemon/lib/drift.c), on hand-checked
 * streams: the overlap of two histograms, a steady stream (no alarm, also from a noisy source
 * at the defaults), a flipped stream (an alarm after exactly the minimum samples), the reset of
 * the polluted window after a drift, the refresh of a polluted reference, and the caps. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kprof/drift.h"

/* W = 16, T1 = 8, judged at every sample, threshold 0.5, T2 = 32. */
static const struct drift_config small = {
    .window = 16, .min_samples = 8, .refresh = 32, .threshold = 0.5, .check_every = 1};

/* Feed n samples of func, key pattern[i % len]; the number of drifts reported. */
static int feed(struct drift *d, uint32_t func, const uint64_t *pattern, size_t len, size_t n,
		uint64_t *t)
{
	int drifts = 0;

	for (size_t i = 0; i < n; i++) {
		int r = drift_add(d, func, pattern[i % len], (*t)++);

		assert_true(r >= 0);
		drifts += r;
	}
	return drifts;
}

static void test_overlap(void **state)
{
	const uint32_t a[] = {3, 1, 0}, b[] = {1, 1, 2};

	(void)state;
	/* shares .75 .25 0 and .25 .25 .5: min .25 + .25 + 0 */
	assert_float_equal(drift_overlap(a, 4, b, 4, 3), 0.5, 1e-12);
	assert_float_equal(drift_overlap(a, 4, a, 4, 3), 1.0, 1e-12);
	assert_float_equal(drift_overlap(a, 0, b, 4, 3), 0.0, 1e-12);
}

static void test_config(void **state)
{
	struct drift_config bad = small;
	struct drift *d;

	(void)state;
	assert_int_equal(drift_new(NULL, &d), 0);
	assert_int_equal(drift_get_config(d)->window, 256);
	assert_int_equal(drift_get_config(d)->min_samples, 128);
	assert_int_equal(drift_get_config(d)->refresh, 1280);
	assert_float_equal(drift_get_config(d)->threshold, 0.5, 0);
	drift_free(d);
	drift_free(NULL);
	bad.min_samples = 17; /* more than the window */
	assert_int_equal(drift_new(&bad, &d), -EINVAL);
	bad = small;
	bad.threshold = 1.5;
	assert_int_equal(drift_new(&bad, &d), -EINVAL);
	bad = small;
	bad.window = 8;
	assert_int_equal(drift_new(&bad, &d), -EINVAL);
}

static void test_steady(void **state)
{
	const uint64_t ab[] = {0x10, 0x20};
	struct drift_func_info fi;
	struct drift *d;
	uint64_t t = 1;

	(void)state;
	assert_int_equal(drift_new(&small, &d), 0);
	assert_int_equal(feed(d, 7, ab, 2, 10000, &t), 0);
	assert_int_equal(drift_func_get(d, 0, &fi), 0);
	assert_int_equal(fi.func, 7);
	assert_int_equal(fi.state, DRIFT_WATCHING);
	assert_int_equal(fi.ref, 16);
	assert_int_equal(fi.window, 16);
	assert_float_equal(fi.overlap, 1.0, 1e-12);
	assert_int_equal(fi.keys, 2);
	assert_int_equal(drift_nevents(d), 0);
	drift_free(d);
}

/* A skewed steady source over 40 keys, at the default settings: no false alarm in 200,000
 * samples (each judged window has 128 to 256 samples). */
static void test_steady_noisy(void **state)
{
	uint64_t x = 88172645463325252ULL, t = 1;
	struct drift *d;

	(void)state;
	assert_int_equal(drift_new(NULL, &d), 0);
	for (int i = 0; i < 200000; i++) {
		unsigned r;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		r = (unsigned)(x % 1000);
		/* key k with weight ~ 1/(k+1): a few hot offsets and a tail */
		unsigned k = r < 500 ? r % 4 : r < 800 ? 4 + r % 12 : 16 + r % 24;

		assert_int_equal(drift_add(d, 1, 0x100 + 4 * k, t++), 0);
	}
	assert_int_equal(drift_nevents(d), 0);
	drift_free(d);
}

/* Reference A A A B (shares .75 .25); then B B B A. The sliding window (full, 16 samples) of j
 * flipped samples holds A (16 - j) - ceil((16 - j) / 4) + floor(j / 4) times, a share a, and its
 * overlap is min(.75, a) + min(.25, 1 - a): at 0.6 the drift is at j = 11 (A 6 times at j = 10,
 * .625; 5 at j = 11, .5625); at 0.5 at j = 15 (4 at j = 14, .5; 3 at j = 15, .4375). */
static void test_flip(void **state)
{
	const uint64_t before[] = {1, 1, 1, 2}, after[] = {2, 2, 2, 1};
	struct drift_config c = small;
	const struct drift_event *e;
	struct drift *d;
	uint64_t t = 1;

	(void)state;
	assert_int_equal(drift_new(&small, &d), 0);
	assert_int_equal(feed(d, 3, before, 4, 400, &t), 0);
	assert_int_equal(feed(d, 3, after, 4, 14, &t), 0);
	assert_int_equal(feed(d, 3, after + 2, 1, 1, &t), 1); /* the 15th: B */
	assert_float_equal(drift_event_get(d, 0)->overlap, 0.4375, 1e-12);
	drift_free(d);

	c.threshold = 0.6;
	c.refresh = 100000; /* no refresh: the reference stays the first 16 samples */
	t = 1;
	assert_int_equal(drift_new(&c, &d), 0);
	assert_int_equal(feed(d, 3, before, 4, 400, &t), 0);
	assert_int_equal(feed(d, 3, after, 4, 10, &t), 0);
	assert_int_equal(feed(d, 3, after + 2, 1, 1, &t), 1); /* the 11th: B */
	assert_int_equal(drift_nevents(d), 1);
	e = drift_event_get(d, 0);
	assert_non_null(e);
	assert_int_equal(e->seq, 1);
	assert_int_equal(e->func, 3);
	assert_int_equal(e->time_ns, 411);
	assert_int_equal(e->samples, 411);
	assert_int_equal(e->window, 16);
	assert_int_equal(e->ref, 16);
	assert_int_equal(e->ref_ns, 16);
	assert_float_equal(e->overlap, 0.5625, 1e-12);
	assert_int_equal(e->gained, 2);
	assert_float_equal(e->gained_ref, 0.25, 1e-12);
	assert_float_equal(e->gained_win, 11.0 / 16, 1e-12);
	assert_int_equal(e->lost, 1);
	assert_float_equal(e->lost_ref, 0.75, 1e-12);
	assert_float_equal(e->lost_win, 5.0 / 16, 1e-12);
	assert_null(drift_event_get(d, 1));
	/* Reported once: the new behaviour is the reference now. */
	assert_int_equal(feed(d, 3, after, 4, 1000, &t), 0);
	drift_free(d);
}

/* After a drift the window (old and new samples mixed) is cleared and the reference learned
 * again from the next W samples; the change back is a second drift, again after T1 samples. */
static void test_polluted_window_reset(void **state)
{
	const uint64_t a[] = {0xa}, b[] = {0xb};
	struct drift_func_info fi;
	struct drift *d;
	uint64_t t = 1;

	(void)state;
	assert_int_equal(drift_new(&small, &d), 0);
	assert_int_equal(feed(d, 1, a, 1, 100, &t), 0);
	/* window: 16 A; the 8th B leaves 8 A 8 B: overlap .5, not a drift; the 9th: 7/16 */
	assert_int_equal(feed(d, 1, b, 1, 8, &t), 0);
	assert_int_equal(feed(d, 1, b, 1, 1, &t), 1);
	assert_float_equal(drift_event_get(d, 0)->overlap, 7.0 / 16, 1e-12);
	assert_int_equal(drift_func_get(d, 0, &fi), 0);
	assert_int_equal(fi.state, DRIFT_LEARNING);
	assert_int_equal(fi.ref, 0);
	assert_int_equal(fi.window, 0);
	assert_int_equal(fi.keys, 0);
	assert_int_equal(fi.drifts, 1);
	assert_int_equal(feed(d, 1, b, 1, 16, &t), 0); /* the new reference */
	assert_int_equal(drift_func_get(d, 0, &fi), 0);
	assert_int_equal(fi.state, DRIFT_WATCHING);
	assert_int_equal(fi.ref, 16);
	assert_int_equal(fi.window, 0);
	/* back to A: the window is fresh, so the first judgement (8 samples, all A) is a drift */
	assert_int_equal(feed(d, 1, a, 1, 7, &t), 0);
	assert_int_equal(feed(d, 1, a, 1, 1, &t), 1);
	assert_float_equal(drift_event_get(d, 1)->overlap, 0.0, 1e-12);
	assert_int_equal(drift_event_get(d, 1)->window, 8);
	drift_free(d);
}

/* A reference holding a warm-up key (P, 4 of 16) that never comes back: the steady stream
 * agrees with it at .75 >= (1 + .5) / 2, so after T2 = 32 judged samples the window replaces
 * it and P is gone from the reference. */
static void test_polluted_reference(void **state)
{
	const uint64_t warm[] = {0xf, 0xa, 0xa, 0xa}, a[] = {0xa};
	struct drift_key keys[4];
	struct drift_func_info fi;
	struct drift *d;
	uint64_t t = 1;
	size_t n;

	(void)state;
	assert_int_equal(drift_new(&small, &d), 0);
	assert_int_equal(feed(d, 1, warm, 4, 16, &t), 0);
	assert_int_equal(feed(d, 1, a, 1, 31, &t), 0);
	assert_int_equal(drift_func_get(d, 0, &fi), 0);
	assert_int_equal(fi.refreshes, 0);
	assert_float_equal(fi.overlap, 0.75, 1e-12);
	assert_int_equal(feed(d, 1, a, 1, 1, &t), 0);
	assert_int_equal(drift_func_get(d, 0, &fi), 0);
	assert_int_equal(fi.refreshes, 1);
	n = drift_func_keys(d, 0, keys, 4);
	assert_int_equal(n, 1); /* P: no share left in either */
	assert_int_equal(keys[0].key, 0xa);
	assert_float_equal(keys[0].ref, 1.0, 1e-12);
	drift_free(d);
}

/* Blocks: offsets map to the block holding them (the last start at or below), the function
 * starts over; callees and offsets before the first block stay as they are. */
static void test_blocks(void **state)
{
	const uint64_t starts[] = {0x10, 0x20, 0x38}, bad[] = {0x10, 0x10};
	const uint64_t keys[] = {0x10, 0x1f, 0x20, 0x37, 0x38, 0x400, 0x4, (1ULL << 62) | 7};
	struct drift_key k[8];
	struct drift_func_info fi;
	struct drift *d;
	uint64_t t = 1;

	(void)state;
	assert_int_equal(drift_new(&small, &d), 0);
	assert_int_equal(drift_func_set_blocks(d, 5, starts, 3), -ENOENT); /* not seen yet */
	assert_int_equal(feed(d, 5, keys, 8, 20, &t), 0);
	assert_int_equal(drift_func_set_blocks(d, 5, bad, 2), -EINVAL);
	assert_int_equal(drift_func_set_blocks(d, 5, starts, 0), -EINVAL);
	assert_int_equal(drift_func_set_blocks(d, 5, starts, 3), 0);
	assert_int_equal(drift_func_get(d, 0, &fi), 0);
	assert_int_equal(fi.state, DRIFT_LEARNING);
	assert_int_equal(fi.ref, 0);
	assert_int_equal(fi.blocks, 3);
	assert_int_equal(feed(d, 5, keys, 8, 8, &t), 0); /* one of each */
	assert_int_equal(drift_func_keys(d, 0, k, 8), 5);
	/* 0x10 0x1f -> block 0x10, 0x20 0x37 -> 0x20, 0x38 0x400 -> 0x38 (2/8 each), then 1/8 */
	assert_int_equal(k[0].key, DRIFT_KEY_BLOCK | 0x10);
	assert_int_equal(k[1].key, DRIFT_KEY_BLOCK | 0x20);
	assert_int_equal(k[2].key, DRIFT_KEY_BLOCK | 0x38);
	assert_float_equal(k[0].ref, 0.25, 1e-12);
	assert_int_equal(k[3].key, 0x4);
	assert_int_equal(k[4].key, (1ULL << 62) | 7);
	drift_free(d);
}

/* max_funcs reached: counted, refused; keys past DRIFT_MAX_KEYS share "other". */
static void test_caps(void **state)
{
	struct drift_config c = small;
	struct drift_stats st;
	struct drift_key k[2];
	struct drift *d;

	(void)state;
	c.max_funcs = 2;
	c.max_events = 1;
	c.window = 4096; /* still learning: the keys stay */
	assert_int_equal(drift_new(&c, &d), 0);
	assert_int_equal(drift_add(d, 1, 0, 1), 0);
	assert_int_equal(drift_add(d, 2, 0, 1), 0);
	assert_int_equal(drift_add(d, 3, 0, 1), -E2BIG);
	for (uint64_t i = 0; i < DRIFT_MAX_KEYS + 5; i++)
		assert_int_equal(drift_add(d, 2, 0x1000 + i, 2), 0);
	drift_get_stats(d, &st);
	assert_int_equal(st.funcs, 2);
	assert_int_equal(st.funcs_over, 1);
	assert_int_equal(st.keys_over, 5 + 1); /* key 0 took one index */
	assert_true(st.memory > 0);
	assert_int_equal(drift_func_keys(d, 1, k, 1), 1);
	assert_int_equal(drift_func_keys(d, 5, k, 1), 0);
	drift_free(d);
}

/* A function without samples for the idle time ends (its window and reference dropped, its
 * counts kept); a sample starts it over; with the cap reached a new function takes an ended
 * one's place, and the others stay found (the index's removal keeps them reachable). */
static void test_end_idle(void **state)
{
	const uint64_t a[] = {0xa, 0xb};
	struct drift_config c = small;
	struct drift_func_info fi;
	struct drift_stats st;
	struct drift *d;
	uint64_t t = 1;

	(void)state;
	c.max_funcs = 3;
	assert_int_equal(drift_new(&c, &d), 0);
	assert_int_equal(feed(d, 1, a, 2, 40, &t), 0); /* t: 1..40 */
	assert_int_equal(feed(d, 2, a, 2, 40, &t), 0); /* 41..80 */
	assert_int_equal(feed(d, 3, a, 2, 40, &t), 0); /* 81..120 */
	assert_int_equal(drift_end_idle(d, 100, 50), 1); /* only 1 (last at 40) */
	assert_int_equal(drift_func_get(d, 0, &fi), 0);
	assert_int_equal(fi.state, DRIFT_ENDED);
	assert_int_equal(fi.ended_ns, 100);
	assert_int_equal(fi.samples, 40);
	assert_int_equal(fi.ref, 0);
	assert_int_equal(fi.window, 0);
	assert_int_equal(drift_end_idle(d, 100, 50), 0); /* ended once */
	/* a sample again: learning from scratch */
	assert_int_equal(feed(d, 1, a, 2, 1, &t), 0);
	assert_int_equal(drift_func_get(d, 0, &fi), 0);
	assert_int_equal(fi.state, DRIFT_LEARNING);
	assert_int_equal(fi.ended_ns, 0);
	assert_int_equal(fi.ref, 1);
	/* end 1 and 2; a new function 4 takes the first ended place */
	assert_int_equal(drift_end_idle(d, 1000, 500), 3);
	assert_int_equal(drift_add(d, 4, 0xa, t++), 0);
	drift_get_stats(d, &st);
	assert_int_equal(st.funcs, 3);
	assert_int_equal(st.funcs_over, 0);
	assert_int_equal(st.ended, 4);
	assert_int_equal(st.recycled, 1);
	assert_int_equal(drift_func_get(d, 0, &fi), 0);
	assert_int_equal(fi.func, 4);
	assert_int_equal(fi.samples, 1);
	/* 2 and 3 are still found (ended: a sample starts them over), 5 takes 2's place */
	assert_int_equal(drift_add(d, 3, 0xa, t++), 0);
	assert_int_equal(drift_func_get(d, 2, &fi), 0);
	assert_int_equal(fi.func, 3);
	assert_int_equal(fi.state, DRIFT_LEARNING);
	assert_int_equal(fi.samples, 41);
	assert_int_equal(drift_add(d, 5, 0xa, t++), 0);
	assert_int_equal(drift_func_get(d, 1, &fi), 0);
	assert_int_equal(fi.func, 5);
	assert_int_equal(drift_add(d, 6, 0xa, t++), -E2BIG); /* none ended left */
	drift_free(d);
}

/* Only the newest max_events are kept, oldest first. */
static void test_events_kept(void **state)
{
	const uint64_t a[] = {0xa}, b[] = {0xb};
	struct drift_config c = small;
	struct drift *d;
	uint64_t t = 1;

	(void)state;
	c.max_events = 2;
	assert_int_equal(drift_new(&c, &d), 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(feed(d, 1, a, 1, 16, &t), 0);
		assert_int_equal(feed(d, 1, b, 1, 8, &t), 1);
		assert_int_equal(feed(d, 1, b, 1, 16, &t), 0);
		assert_int_equal(feed(d, 1, a, 1, 8, &t), 1);
	}
	assert_int_equal(drift_nevents(d), 2);
	assert_int_equal(drift_event_get(d, 0)->seq, 9);
	assert_int_equal(drift_event_get(d, 1)->seq, 10);
	drift_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_overlap),
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_steady),
	    cmocka_unit_test(test_steady_noisy),
	    cmocka_unit_test(test_flip),
	    cmocka_unit_test(test_polluted_window_reset),
	    cmocka_unit_test(test_polluted_reference),
	    cmocka_unit_test(test_blocks),
	    cmocka_unit_test(test_caps),
	    cmocka_unit_test(test_events_kept),
	    cmocka_unit_test(test_end_idle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
