// SPDX-License-Identifier: GPL-2.0-only
/* test_window.c: the time-window index and its retention, the window file frame, and the merge
 * of per-window HCCT summaries (daemon/lib/window.c), the merge checked against the exact CCT
 * of the same samples (tests/oracles/cct.c) with the bound of ALGORITHMS.md §14: every merged
 * counter has f in [count - err, count] and err <= N/m, every context with f > N/m is
 * monitored, and windows whose summaries never filled merge exactly.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../oracles/cct.h"
#include "../prng.h"
#include "kprof/window.h"

#define S 1000000000ULL

static struct window_entry entry(uint64_t seq, uint32_t pid, uint64_t start_s, uint64_t end_s,
				 size_t len, bool on_disk)
{
	struct window_entry e = {.seq = seq,
				 .pid = pid,
				 .uid = 0,
				 .attached_ns = 7,
				 .boot_id = 1,
				 .start_boot = start_s * S,
				 .end_boot = end_s * S,
				 .start_real = 1000 * S + start_s * S,
				 .end_real = 1000 * S + end_s * S,
				 .samples = 1,
				 .blob = calloc(1, len),
				 .len = len,
				 .on_disk = on_disk};

	assert_non_null(e.blob);
	return e;
}

struct dropped {
	uint64_t seq[64];
	size_t n;
};

static void on_drop(void *ud, const struct window_entry *e)
{
	struct dropped *d = ud;

	d->seq[d->n++] = e->seq;
}

/* Per-user quotas (security issue 25, item 7): a flood of one user's windows pushes out that
 * user's oldest windows only; users together never take root's last eighth; past a global
 * bound, users' windows go before root's. */
static void test_user_quota(void **state)
{
	const uint64_t ent = sizeof(struct window_entry);
	struct window_limits l = {.mem_bytes = 1 << 20,
				  .disk_bytes = 16 * 1000,
				  .mem_per_uid = 1 << 20,
				  .disk_per_uid = 4 * 1000};
	struct window_store *ws;
	struct window_stats st;
	struct dropped d = {0};
	uint64_t seq = 1;

	(void)state;
	assert_int_equal(window_store_new(&l, &ws), 0);
	/* Oldest first: root's 2 windows, user 1000's 2, then user 2000 floods with 20. */
	for (uint32_t i = 0; i < 24; i++) {
		struct window_entry e = entry(seq, 100 + i, i, i + 1, 1000, true);

		e.uid = i < 2 ? 0 : i < 4 ? 1000 : 2000;
		seq++;
		assert_int_equal(window_store_add(ws, &e), 0);
	}
	window_store_retain(ws, 30 * S, 1030 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	/* 2000 keeps its newest 4 (its quota); 1000's and root's windows all stay. */
	assert_int_equal(st.windows, 8);
	assert_int_equal(st.dropped_quota, 16);
	assert_int_equal(d.n, 16);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(window_store_at(ws, i)->seq, i < 4 ? i + 1 : 21 + i - 4);
	/* Many users, each within its quota, together past the users' share (7/8 of 16000
	 * bytes: 14000): users' oldest go, root's 2 stay. */
	for (uint32_t u = 0; u < 4; u++)
		for (uint32_t i = 0; i < 3; i++) {
			struct window_entry e = entry(seq++, 500 + u, 40 + i, 41 + i, 1000, true);

			e.uid = 3000 + u;
			assert_int_equal(window_store_add(ws, &e), 0);
		}
	window_store_retain(ws, 50 * S, 1050 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_true(st.disk_bytes <= 16000);
	assert_int_equal(window_store_at(ws, 0)->seq, 1);
	assert_int_equal(window_store_at(ws, 1)->seq, 2);
	assert_int_equal(window_store_at(ws, 0)->uid, 0);
	/* Memory: each entry costs ent + its blob; a user past its memory quota loses its blobs
	 * that are on disk first (the windows stay, their files read when needed). */
	l.mem_per_uid = 2 * (ent + 1000);
	window_store_set_limits(ws, &l);
	window_store_retain(ws, 50 * S, 1050 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_true(st.evicted > 0);
	assert_non_null(window_store_at(ws, 0)->blob); /* root's: untouched */
	window_store_free(ws);
}

/* Forty users (the per-uid table grows past its first size): within their quotas nothing
 * goes; one over its quota loses its own oldest window, the only one dropped. */
static void test_many_users(void **state)
{
	struct window_limits l = {.mem_bytes = 1 << 20,
				  .disk_bytes = 1 << 20,
				  .mem_per_uid = 1 << 20,
				  .disk_per_uid = 2000};
	struct window_store *ws;
	struct window_stats st;
	struct dropped d = {0};
	uint64_t seq = 1;

	(void)state;
	assert_int_equal(window_store_new(&l, &ws), 0);
	for (uint32_t u = 0; u < 40; u++) {
		struct window_entry e = entry(seq++, 100 + u, u, u + 1, 1000, true);

		e.uid = 5000 + u;
		assert_int_equal(window_store_add(ws, &e), 0);
	}
	window_store_retain(ws, 50 * S, 1050 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 40);
	assert_int_equal(st.dropped_quota, 0);
	for (uint32_t i = 0; i < 2; i++) {
		struct window_entry e = entry(seq++, 105, 41 + i, 42 + i, 1000, true);

		e.uid = 5005;
		assert_int_equal(window_store_add(ws, &e), 0);
	}
	window_store_retain(ws, 50 * S, 1050 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 41);
	assert_int_equal(st.dropped_quota, 1);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.seq[0], 6); /* uid 5005's first */
	window_store_free(ws);
}

static void test_select(void **state)
{
	struct window_limits l = {.mem_bytes = 1 << 20, .disk_bytes = 1 << 20};
	struct window_store *ws;
	size_t *sel, n;

	(void)state;
	assert_int_equal(window_store_new(&l, &ws), 0);
	for (uint64_t i = 0; i < 6; i++) {
		struct window_entry e = entry(i + 1, i % 2 ? 2 : 1, 10 * i, 10 * i + 10, 100, true);

		assert_int_equal(window_store_add(ws, &e), 0);
	}
	/* pid 1 has windows [0,10) [20,30) [40,50): middles 1005, 1025, 1045 s. */
	assert_int_equal(window_store_select(ws, 1, 0, 1000 * S, 1030 * S, &sel, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(window_store_at(ws, sel[0])->seq, 1);
	assert_int_equal(window_store_at(ws, sel[1])->seq, 3);
	free(sel);
	/* A boundary inside a window: the window goes to the side of its middle. */
	assert_int_equal(window_store_select(ws, 1, 0, 1026 * S, 0, &sel, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(window_store_at(ws, sel[0])->seq, 5);
	free(sel);
	assert_int_equal(window_store_select(ws, 1, 8, 0, 0, &sel, &n), 0); /* other session */
	assert_int_equal(n, 0);
	free(sel);
	window_store_free(ws);
}

static void test_retention(void **state)
{
	const uint64_t ent = sizeof(struct window_entry);
	struct window_limits l = {.mem_bytes = 4 * ent + 350, .disk_bytes = 1 << 20};
	struct window_store *ws;
	struct window_stats st;
	struct dropped d = {0};

	(void)state;
	assert_int_equal(window_store_new(&l, &ws), 0);
	for (uint64_t i = 0; i < 4; i++) {
		/* seq 2 is not on disk (a failed write): its blob stays while others can go. */
		struct window_entry e = entry(i + 1, 1, i, i + 1, 100, i != 1);

		assert_int_equal(window_store_add(ws, &e), 0);
	}
	window_store_retain(ws, 10 * S, 1010 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 4);
	assert_int_equal(st.evicted, 1); /* seq 1's blob left memory, its file stays */
	assert_null(window_store_at(ws, 0)->blob);
	assert_non_null(window_store_at(ws, 1)->blob);
	assert_int_equal(st.unsaved, 1);
	assert_int_equal(d.n, 0);
	/* Disk: 300 bytes on disk, bound 150: the oldest files go, their files dropped. */
	l.disk_bytes = 150;
	window_store_set_limits(ws, &l);
	window_store_retain(ws, 10 * S, 1010 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.seq[0], 1);
	assert_int_equal(d.seq[1], 3);
	assert_int_equal(st.windows, 2); /* seq 2 (memory only) and seq 4 */
	assert_int_equal(window_store_at(ws, 0)->seq, 2);
	/* Found by seq where they are now; the ones that left are gone. */
	assert_int_equal(window_store_find(ws, 2), 0);
	assert_int_equal(window_store_find(ws, 4), 1);
	assert_int_equal(window_store_find(ws, 1), -ENOENT);
	assert_int_equal(window_store_find(ws, 3), -ENOENT);
	assert_int_equal(window_store_find(ws, 5), -ENOENT);
	assert_int_equal(st.disk_bytes, 100);
	/* Written now: saved, then everything ages out (this boot: by boottime). */
	window_store_saved(ws, 2, 0, 0);
	window_store_stats(ws, &st);
	assert_int_equal(st.unsaved, 0);
	l = (struct window_limits){
	    .max_age_ns = 5 * S, .mem_bytes = 1 << 20, .disk_bytes = 1 << 20};
	window_store_set_limits(ws, &l);
	d.n = 0;
	window_store_retain(ws, 8 * S, 0, 1, on_drop, &d); /* realtime 0: a clock set back */
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 1); /* seq 2 ended at 2 s: 6 s old; seq 4 at 4 s: 4 s */
	assert_int_equal(st.aged, 1);
	/* Another boot: age by realtime (seq 4 ended at 1004 s). */
	window_store_retain(ws, 0, 1008 * S, 2, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 1);
	window_store_retain(ws, 0, 1010 * S, 2, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 0);
	assert_int_equal(st.mem_bytes, 0);
	assert_int_equal(st.disk_bytes, 0);
	window_store_free(ws);
}

/* A retention walks the index only when something is due (issue 34: a tick's work follows what
 * changed, not the windows kept); the writer finds the unsaved windows from where they start. */
static void test_retain_when_due(void **state)
{
	struct window_limits l = {.max_age_ns = 100 * S, .mem_bytes = 1 << 20, .disk_bytes = 1 << 20};
	struct window_store *ws;
	struct window_stats st;
	struct dropped d = {0};
	uint64_t steps;

	(void)state;
	assert_int_equal(window_store_new(&l, &ws), 0);
	for (uint64_t i = 0; i < 50; i++) {
		struct window_entry e = entry(i + 1, 1, i, i + 1, 10, true);

		assert_int_equal(window_store_add(ws, &e), 0);
	}
	window_store_retain(ws, 60 * S, 1060 * S, 1, on_drop, &d); /* the first one walks */
	window_store_stats(ws, &st);
	assert_int_equal(st.retains, 1);
	steps = st.steps;
	assert_int_equal(steps, 50);
	assert_int_equal(window_store_first_unsaved(ws), 50); /* all on disk */
	for (int tick = 0; tick < 10; tick++) /* nothing due: no walk */
		window_store_retain(ws, 61 * S, 1061 * S, 1, on_drop, &d);
	window_store_set_limits(ws, &l); /* the same limits: still nothing due */
	window_store_retain(ws, 62 * S, 1062 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.retains, 1);
	assert_int_equal(st.steps, steps);
	/* Two new windows not written: found from where they start. */
	for (uint64_t i = 50; i < 52; i++) {
		struct window_entry e = entry(i + 1, 1, i, i + 1, 10, false);

		assert_int_equal(window_store_add(ws, &e), 0);
	}
	assert_int_equal(window_store_first_unsaved(ws), 50);
	window_store_saved(ws, 51, 51, 0);
	assert_int_equal(window_store_first_unsaved(ws), 50); /* a bound, not exact */
	window_store_saved(ws, 52, 51, 10);
	assert_int_equal(window_store_first_unsaved(ws), 52);
	/* The oldest's age reached (ended at 1 s, 100 s max): it walks, and seq 1 goes. */
	window_store_retain(ws, 101 * S + 1, 1101 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.retains, 2);
	assert_int_equal(st.windows, 51);
	assert_int_equal(st.aged, 1);
	window_store_retain(ws, 101 * S + 2, 1101 * S, 1, on_drop, &d); /* seq 2: not yet */
	window_store_stats(ws, &st);
	assert_int_equal(st.retains, 2);
	/* Over a bound: it walks. */
	l.disk_bytes = 100;
	window_store_set_limits(ws, &l);
	window_store_retain(ws, 101 * S + 3, 1101 * S, 1, on_drop, &d);
	window_store_retain(ws, 101 * S + 4, 1101 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.retains, 3); /* under the bound again after the first */
	assert_true(st.disk_bytes <= 100);
	window_store_free(ws);
}

/* Batch files: the windows cut together share a file, which goes (the callback, once) with its
 * last window; the bytes of those that left before stay counted on disk until then. A window
 * saved into a batch later (a write that failed before) joins that batch; a restored batch's
 * windows come on disk with their file. */
static void test_batch_files(void **state)
{
	struct window_limits l = {.mem_bytes = 1 << 20, .disk_bytes = 1 << 20, .disk_per_uid = 250};
	struct window_store *ws;
	struct window_stats st;
	struct dropped d = {0};

	(void)state;
	assert_int_equal(window_store_new(&l, &ws), 0);
	/* Tick 1: windows 1-3 (uid 0, 1000, 0), saved into batch 1. Tick 2: 4-5, batch 4. */
	for (uint64_t seq = 1; seq <= 5; seq++) {
		struct window_entry e = entry(seq, 100 + seq, seq <= 3 ? 0 : 10, seq <= 3 ? 10 : 20,
					      100, false);

		e.uid = seq == 2 ? 1000 : 0;
		assert_int_equal(window_store_add(ws, &e), 0);
	}
	for (uint64_t seq = 1; seq <= 5; seq++)
		window_store_saved(ws, seq, seq <= 3 ? 1 : 4, ((seq - 1) % 3) * 100);
	window_store_saved(ws, 1, 9, 0); /* saved already: no change */
	assert_int_equal(window_store_at(ws, 0)->file, 1);
	assert_int_equal(window_store_at(ws, 2)->off, 200);
	assert_int_equal(window_store_at(ws, 4)->file, 4);
	window_store_stats(ws, &st);
	assert_int_equal(st.disk_bytes, 500);
	assert_int_equal(st.unsaved, 0);

	/* uid 1000 over a lower disk quota: window 2 goes alone, its file
	 * stays (windows 1 and 3 are in it), its bytes still counted. */
	l.disk_per_uid = 50;
	window_store_set_limits(ws, &l);
	window_store_retain(ws, 15 * S, 1015 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 4);
	assert_int_equal(st.dropped_quota, 1);
	assert_int_equal(d.n, 0);
	assert_int_equal(st.disk_bytes, 500);

	/* Tick 1's windows age out: batch 1 goes once, with its last window, and its 300 bytes
	 * leave the count. */
	l = (struct window_limits){.max_age_ns = 8 * S, .mem_bytes = 1 << 20, .disk_bytes = 1 << 20};
	window_store_set_limits(ws, &l);
	window_store_retain(ws, 19 * S, 1019 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 2);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.seq[0], 3);
	assert_int_equal(st.disk_bytes, 200);

	/* Over the disk bound: the oldest go, batch 4 once both of its windows went. */
	l.disk_bytes = 150;
	window_store_set_limits(ws, &l);
	d.n = 0;
	window_store_retain(ws, 19 * S, 1019 * S, 1, on_drop, &d);
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.seq[0], 5);
	assert_int_equal(st.disk_bytes, 0);

	/* Restored: a batch's windows come on disk, without blobs, with their file. */
	for (uint64_t seq = 7; seq <= 8; seq++) {
		struct window_entry e = entry(seq, 1, 30, 31, 100, true);

		free(e.blob);
		e.blob = NULL;
		e.file = 7;
		e.off = (seq - 7) * 100;
		assert_int_equal(window_store_add(ws, &e), 0);
	}
	window_store_stats(ws, &st);
	assert_int_equal(st.disk_bytes, 200);
	l.max_age_ns = 1 * S;
	l.disk_bytes = 1 << 20;
	window_store_set_limits(ws, &l);
	d.n = 0;
	window_store_retain(ws, 40 * S, 1040 * S, 1, on_drop, &d);
	assert_int_equal(d.n, 1);
	window_store_stats(ws, &st);
	assert_int_equal(st.disk_bytes, 0);
	window_store_free(ws);
}

static void test_memory_only_dropped_last(void **state)
{
	const uint64_t ent = sizeof(struct window_entry);
	struct window_limits l = {
	    .mem_bytes = 2 * ent + 100, .disk_bytes = 1 << 20, .max_windows = 3};
	struct window_store *ws;
	struct window_stats st;
	struct window_entry e;

	(void)state;
	assert_int_equal(window_store_new(&l, &ws), 0);
	for (uint64_t i = 0; i < 3; i++) {
		e = entry(i + 1, 1, i, i + 1, 100, false); /* a full disk: none written */
		assert_int_equal(window_store_add(ws, &e), 0);
	}
	window_store_retain(ws, 10 * S, 1010 * S, 1, NULL, NULL);
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 1);
	assert_int_equal(st.dropped_mem, 2);
	assert_int_equal(window_store_at(ws, 0)->seq, 3); /* the newest kept */
	/* The count bound: retention keeps the newest max_windows, an add refuses at twice. */
	l.mem_bytes = 1 << 20;
	window_store_set_limits(ws, &l);
	for (uint64_t i = 4; i <= 8; i++) {
		e = entry(i, 1, i, i + 1, 100, true);
		assert_int_equal(window_store_add(ws, &e), 0);
	}
	e = entry(9, 1, 9, 10, 100, true);
	assert_int_equal(window_store_add(ws, &e), -ENOSPC);
	window_store_retain(ws, 10 * S, 1010 * S, 1, NULL, NULL);
	window_store_stats(ws, &st);
	assert_int_equal(st.windows, 3);
	assert_int_equal(st.dropped_full, 4); /* 1 refused, 3 dropped */
	assert_int_equal(window_store_at(ws, 0)->seq, 6);
	assert_int_equal(st.mem_bytes, 3 * (sizeof(struct window_entry) + 100));
	window_store_free(ws);
}

static void test_frame(void **state)
{
	uint8_t payload[300], *buf;
	const uint8_t *p;
	size_t len, plen;

	(void)state;
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = i * 7;
	assert_int_equal(window_frame(payload, sizeof(payload), &buf, &len), 0);
	assert_int_equal(len, WINDOW_HEADER + sizeof(payload));
	assert_int_equal(window_unframe(buf, len, &p, &plen), 0);
	assert_int_equal(plen, sizeof(payload));
	assert_memory_equal(p, payload, plen);
	/* Torn: every shorter prefix is refused. */
	for (size_t n = 0; n < len; n++)
		assert_true(window_unframe(buf, n, &p, &plen) < 0);
	assert_int_equal(window_unframe(buf, len - 1, &p, &plen), -EPIPE);
	assert_int_equal(window_unframe(buf, 10, &p, &plen), -EPIPE);
	assert_int_equal(window_unframe(buf, 5, &p, &plen), -EBADMSG);
	/* Corrupt: one flipped bit anywhere in the payload. */
	for (size_t i = WINDOW_HEADER; i < len; i += 37) {
		buf[i] ^= 0x10;
		assert_int_equal(window_unframe(buf, len, &p, &plen), -EILSEQ);
		buf[i] ^= 0x10;
	}
	/* Two frames one after the other (a batch file): each found in turn; trailing bytes are
	 * not a frame of their own. */
	{
		uint8_t *two = malloc(2 * len + 3);
		size_t used;

		assert_non_null(two);
		memcpy(two, buf, len);
		memcpy(two + len, buf, len);
		assert_int_equal(window_unframe(two, 2 * len, &p, &plen), -EBADMSG);
		assert_int_equal(window_unframe_next(two, 2 * len, &p, &plen, &used), 0);
		assert_int_equal(used, len);
		assert_int_equal(window_unframe_next(two + used, len, &p, &plen, &used), 0);
		assert_memory_equal(p, payload, plen);
		assert_int_equal(window_unframe_next(two + len, len - 1, &p, &plen, &used), -EPIPE);
		free(two);
	}
	buf[0] = 'X';
	assert_int_equal(window_unframe(buf, len, &p, &plen), -EBADMSG);
	free(buf);
}

/* ---- The merge against the exact CCT ---- */

#define NF 12
#define MAXD 5

static size_t gen_stack(uint64_t *rng, uint32_t *ids)
{
	size_t n = 1 + prng_next(rng) % MAXD;

	for (size_t i = 0; i < n; i++) {
		double u = prng_unit(rng);

		ids[i] = (uint32_t)(NF * u * u * u); /* skewed: low ids hot */
	}
	return n;
}

/* The path (global ids, root first) of entry k of a merged tree. */
static size_t path_of(const struct hcct_tree *t, uint32_t k, uint32_t *out)
{
	uint32_t tmp[64];
	size_t n = 0;

	for (uint32_t x = k; x != HCCT_NONE; x = t->entries[x].parent)
		tmp[n++] = t->entries[x].id;
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

/* Each window's summary: a Space-Saving HCCT of m counters fed the samples (exact_top false),
 * or window_summary_exact of the window's samples as stacks (the m heaviest exactly). */
static void check_merge(uint64_t seed, uint32_t m, size_t windows, size_t samples, bool exact,
			bool exact_top)
{
	uint64_t rng = seed;
	struct cct *c;
	struct window_summary sum[32];
	struct hcct_tree *snaps[32], *merged, *hot;
	uint32_t maps[32][NF], perm[NF];
	uint64_t n_total = 0;

	assert_true(windows <= 32);
	assert_int_equal(cct_new(NULL, &c), 0);
	for (size_t w = 0; w < windows; w++) {
		struct hcct *h;
		size_t ns = samples / 2 + prng_next(&rng) % samples;

		/* Each window has its own id space: local id perm[global], map back. */
		for (uint32_t i = 0; i < NF; i++)
			perm[i] = i;
		for (uint32_t i = NF - 1; i > 0; i--) {
			uint32_t j = prng_next(&rng) % (i + 1), x = perm[i];

			perm[i] = perm[j], perm[j] = x;
		}
		for (uint32_t i = 0; i < NF; i++)
			maps[w][perm[i]] = i;
		struct window_stack *ws = calloc(ns, sizeof(*ws));
		uint32_t *lids = calloc(ns * MAXD, sizeof(*lids));
		uint64_t min = 0;

		assert_non_null(ws);
		assert_non_null(lids);
		assert_int_equal(hcct_new(&(struct hcct_params){.slots = m}, &h), 0);
		for (size_t s = 0; s < ns; s++) {
			uint32_t g[MAXD], *l = lids + s * MAXD;
			size_t n = gen_stack(&rng, g);

			for (size_t i = 0; i < n; i++)
				l[i] = perm[g[i]];
			ws[s] = (struct window_stack){.ids = l, .n = n, .count = 1};
			assert_int_equal(hcct_add_stack(h, l, n, 1), 0);
			assert_int_equal(cct_add_stack(c, g, n, 1), 0);
		}
		n_total += ns;
		if (exact_top) {
			assert_int_equal(window_summary_exact(ws, ns, m, &snaps[w], &min), 0);
			assert_int_equal(snaps[w]->n, ns);
			assert_true(min * (m + 1) <= ns); /* min <= N_i/(m+1) */
		} else {
			assert_int_equal(hcct_snapshot(h, &snaps[w]), 0);
			min = window_summary_min(snaps[w], m);
		}
		sum[w] = (struct window_summary){
		    .tree = snaps[w], .map = maps[w], .nmap = NF, .min = min};
		hcct_free(h);
		free(ws);
		free(lids);
	}
	assert_int_equal(window_hcct_merge(sum, windows, &merged), 0);
	assert_int_equal(merged->n, n_total);
	for (size_t k = 0; k < merged->len; k++) {
		const struct hcct_entry *e = &merged->entries[k];
		uint32_t path[64];
		size_t n = path_of(merged, k, path);
		int x = cct_lookup(c, path, NULL, n);
		struct cct_node_info info = {0};

		if (x >= 0)
			assert_int_equal(cct_node(c, x, &info), 0);
		if (!(e->flags & HCCT_ENTRY_MONITORED))
			continue;
		assert_true(e->count >= info.count);	      /* f <= count */
		assert_true(e->count - e->err <= info.count); /* count - err <= f */
		assert_true((uint64_t)e->err * m <= n_total); /* err <= N/m */
		if (exact) {
			assert_int_equal(e->err, 0);
			assert_int_equal(e->count, info.count);
		}
	}
	/* No false negatives: every context with f > N/m is monitored in the merge. */
	for (size_t x = 1; x < cct_nodes(c); x++) {
		struct cct_node_info info;
		uint32_t path[64], tmp[64];
		size_t n = 0;
		bool found = false;

		assert_int_equal(cct_node(c, x, &info), 0);
		if (info.count * m <= n_total)
			continue;
		for (uint32_t y = x; y != 0; y = info.parent) {
			assert_int_equal(cct_node(c, y, &info), 0);
			tmp[n++] = info.id;
		}
		for (size_t i = 0; i < n; i++)
			path[i] = tmp[n - 1 - i];
		for (size_t k = 0; k < merged->len && !found; k++) {
			uint32_t p2[64];
			size_t n2 = path_of(merged, k, p2);

			found = n2 == n && !memcmp(p2, path, n * sizeof(*path)) &&
				(merged->entries[k].flags & HCCT_ENTRY_MONITORED);
		}
		assert_true(found);
	}
	assert_int_equal(hcct_tree_filter(merged, 1, 100, &hot), 0); /* parents first */
	hcct_tree_free(hot);
	hcct_tree_free(merged);
	for (size_t w = 0; w < windows; w++)
		hcct_tree_free(snaps[w]);
	cct_free(c);
}

static void test_merge_bound(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		check_merge(seed, 4 + seed % 5, 3 + seed % 10, 200, false, false);
		check_merge(seed, 4 + seed % 5, 3 + seed % 10, 200, false, true);
	}
}

static void test_merge_exact(void **state)
{
	(void)state;
	/* m above the distinct contexts (at most 12 + 12^2 + ... < 2e5): never full. */
	check_merge(42, 1u << 18, 6, 300, true, false);
	check_merge(43, 1u << 18, 6, 300, true, true);
}

/* window_summary_exact on a small case: the m heaviest contexts exact, ancestors cold, min the
 * heaviest left out. */
static void test_summary_exact(void **state)
{
	/* Contexts (leaf counts): a:5, a;b:3, a;c:2, d:1, a;b;e:4 */
	static const uint32_t s1[] = {0}, s2[] = {0, 1}, s3[] = {0, 2}, s4[] = {3},
			      s5[] = {0, 1, 4};
	const struct window_stack v[] = {
	    {s1, 1, 5}, {s2, 2, 3}, {s3, 2, 2}, {s4, 1, 1}, {s5, 3, 4},
	};
	struct hcct_tree *t;
	uint64_t min;

	(void)state;
	assert_int_equal(window_summary_exact(v, 5, 2, &t, &min), 0);
	assert_int_equal(t->n, 15);
	assert_int_equal(min, 3); /* a;b: the heaviest left out */
	/* Kept: a (5) and a;b;e (4); a;b stays as the cold link. */
	assert_int_equal(t->len, 3);
	assert_int_equal(t->entries[0].id, 0);
	assert_int_equal(t->entries[0].count, 5);
	assert_true(t->entries[0].flags & HCCT_ENTRY_MONITORED);
	assert_int_equal(t->entries[1].id, 1);
	assert_false(t->entries[1].flags & HCCT_ENTRY_MONITORED);
	assert_int_equal(t->entries[1].count, 0);
	assert_int_equal(t->entries[2].id, 4);
	assert_int_equal(t->entries[2].parent, 1);
	assert_int_equal(t->entries[2].count, 4);
	assert_int_equal(t->entries[2].err, 0);
	hcct_tree_free(t);
	assert_int_equal(window_summary_exact(v, 5, 10, &t, &min), 0);
	assert_int_equal(min, 0);
	assert_int_equal(t->len, 5); /* every context: a, a;b, a;c, d, a;b;e, none cold */
	hcct_tree_free(t);
	assert_int_equal(window_summary_exact(v, 5, 0, &t, &min), -EINVAL);
}

static void test_merge_empty(void **state)
{
	struct hcct_tree *t;

	(void)state;
	assert_int_equal(window_hcct_merge(NULL, 0, &t), 0);
	assert_int_equal(t->len, 0);
	assert_int_equal(t->n, 0);
	hcct_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_select),
	    cmocka_unit_test(test_user_quota),
	    cmocka_unit_test(test_many_users),
	    cmocka_unit_test(test_retention),
	    cmocka_unit_test(test_retain_when_due),
	    cmocka_unit_test(test_memory_only_dropped_last),
	    cmocka_unit_test(test_batch_files),
	    cmocka_unit_test(test_frame),
	    cmocka_unit_test(test_merge_bound),
	    cmocka_unit_test(test_merge_exact),
	    cmocka_unit_test(test_merge_empty),
	    cmocka_unit_test(test_summary_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
