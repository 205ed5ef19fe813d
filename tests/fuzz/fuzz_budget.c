// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_budget.c: libFuzzer target for the per-uid memory budget (daemon/lib/budget.c).
 *
 * The input is a program: 16 bytes of initial limits, then operations on eight uids (root, a
 * few users, nobody, (uid_t)-2 and (uid_t)-1): charge, release, set the limits, ask for room.
 * One opcode byte says which and for whom; the amount or limit that follows is one, two or
 * eight bytes (small amounts, near a limit, or anything up to UINT64_MAX). A shadow model keeps
 * what each uid holds; after every operation the budget must agree with it exactly: a charge
 * succeeds if and only if it fits under the total and (for a uid other than root) under the
 * per-uid limit, refusals are counted one per refused charge, a release gives back at most what
 * the uid holds, room and used per uid and the total are the model's, the total is the sum over
 * the uids, and after a successful charge of more than 0 bytes a non-root uid holds no more
 * than the per-uid limit and the total is within the total limit.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "fuzz.h"
#include "kprof/budget.h"

#define NUIDS 8

static const uid_t uids[NUIDS] = {0, 1, 1000, 1001, 4242, 65534, (uid_t)-2, (uid_t)-1};

struct model {
	uint64_t total, per_uid, used[NUIDS], refusals;
};

/* The next amount: 1, 2 or 8 bytes of input (0 past the end). */
static uint64_t amount(const uint8_t **p, const uint8_t *end, unsigned kind)
{
	size_t n = kind == 0 ? 1 : kind == 1 ? 2 : 8, left = (size_t)(end - *p);
	uint64_t v = fuzz_word(*p, left < n ? left : n);

	if (n < 8)
		v &= (UINT64_C(1) << (8 * n)) - 1;
	*p += left < n ? left : n;
	return v;
}

static uint64_t model_sum(const struct model *m)
{
	uint64_t s = 0;

	for (int i = 0; i < NUIDS; i++)
		s += m->used[i];
	return s;
}

static uint64_t model_room(const struct model *m, int u)
{
	uint64_t used = model_sum(m), room = used < m->total ? m->total - used : 0;

	if (uids[u] != 0) {
		uint64_t mine = m->used[u] < m->per_uid ? m->per_uid - m->used[u] : 0;

		if (mine < room)
			room = mine;
	}
	return room;
}

static void check(const struct budget *b, const struct model *m, size_t op)
{
	uint64_t sum = 0;

	for (int i = 0; i < NUIDS; i++) {
		FUZZ_CHECK(budget_used(b, uids[i]) == m->used[i],
			   "op %zu: uid %u uses %llu, model %llu", op, (unsigned)uids[i],
			   (unsigned long long)budget_used(b, uids[i]),
			   (unsigned long long)m->used[i]);
		FUZZ_CHECK(budget_room(b, uids[i]) == model_room(m, i),
			   "op %zu: uid %u room %llu, model %llu", op, (unsigned)uids[i],
			   (unsigned long long)budget_room(b, uids[i]),
			   (unsigned long long)model_room(m, i));
		sum += budget_used(b, uids[i]);
	}
	FUZZ_CHECK(budget_total_used(b) == sum, "op %zu: total %llu != sum over uids %llu", op,
		   (unsigned long long)budget_total_used(b), (unsigned long long)sum);
	FUZZ_CHECK(budget_refusals(b) == m->refusals, "op %zu: refusals %llu, model %llu", op,
		   (unsigned long long)budget_refusals(b), (unsigned long long)m->refusals);
	FUZZ_CHECK(budget_used(b, 12345) == 0, "op %zu: a uid never charged holds memory", op);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct model m = {0};
	struct budget *b = NULL;
	size_t op = 0;

	m.total = amount(&p, end, 2);
	m.per_uid = amount(&p, end, 2);
	FUZZ_CHECK(budget_new(m.total, m.per_uid, &b) == 0 && b, "budget_new");
	check(b, &m, 0);
	while (p < end && op < 4096) {
		uint8_t c = *p++;
		int u = (c >> 2) & 7;
		unsigned kind = (c >> 5) % 3;
		uint64_t v = amount(&p, end, kind);
		int r;

		op++;
		switch (c & 3) {
		case 0:
		case 1: { /* charge (twice as often) */
			bool fits = v <= model_room(&m, u);

			r = budget_charge(b, uids[u], v);
			FUZZ_CHECK(r == 0 || r == -ENOSPC, "op %zu: budget_charge: %d", op, r);
			FUZZ_CHECK((r == 0) == fits,
				   "op %zu: charge of %llu for uid %u %s, model says it %s", op,
				   (unsigned long long)v, (unsigned)uids[u],
				   r == 0 ? "succeeded" : "was refused",
				   fits ? "fits" : "does not");
			if (r == 0) {
				m.used[u] += v;
				/* Limits lowered below what is held let only 0-byte charges
				 * through: those add nothing. */
				if (uids[u] != 0 && v)
					FUZZ_CHECK(budget_used(b, uids[u]) <= m.per_uid,
						   "op %zu: uid %u over the per-uid limit", op,
						   (unsigned)uids[u]);
				FUZZ_CHECK(!v || budget_total_used(b) <= m.total,
					   "op %zu: over the total limit", op);
			} else {
				m.refusals++;
			}
			break;
		}
		case 2: /* release */
			budget_release(b, uids[u], v);
			m.used[u] -= v < m.used[u] ? v : m.used[u];
			break;
		default: /* set the limits: the total or the per-uid limit from v, by u's bit 0 */
			if (u & 1)
				m.per_uid = v;
			else
				m.total = v;
			budget_set_limits(b, m.total, m.per_uid);
			break;
		}
		check(b, &m, op);
	}
	/* Release everything: back to empty. */
	for (int i = 0; i < NUIDS; i++)
		budget_release(b, uids[i], UINT64_MAX);
	FUZZ_CHECK(budget_total_used(b) == 0, "not empty after releasing everything");
	budget_free(b);
	budget_free(NULL);
	return 0;
}
