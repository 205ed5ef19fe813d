// SPDX-License-Identifier: GPL-2.0-only
/* budget.c: a memory budget with a total and a per-uid limit (see include/kprof/budget.h).
 *
 * The uids holding memory are few (one per user with targets), so they sit in a small array
 * searched linearly; an entry is dropped when its uid holds nothing again.
 */
#include <errno.h>
#include <stdlib.h>

#include "kprof/budget.h"

struct holder {
	uid_t uid;
	uint64_t used;
};

struct budget {
	uint64_t total, per_uid, used, refusals;
	struct holder *h;
	size_t n, cap;
};

int budget_new(uint64_t total, uint64_t per_uid, struct budget **ret)
{
	struct budget *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->total = total;
	b->per_uid = per_uid;
	*ret = b;
	return 0;
}

void budget_free(struct budget *b)
{
	if (!b)
		return;
	free(b->h);
	free(b);
}

void budget_set_limits(struct budget *b, uint64_t total, uint64_t per_uid)
{
	b->total = total;
	b->per_uid = per_uid;
}

static struct holder *find(const struct budget *b, uid_t uid)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->h[i].uid == uid)
			return &b->h[i];
	return NULL;
}

uint64_t budget_used(const struct budget *b, uid_t uid)
{
	const struct holder *h = find(b, uid);

	return h ? h->used : 0;
}

uint64_t budget_room(const struct budget *b, uid_t uid)
{
	uint64_t room = b->used < b->total ? b->total - b->used : 0, u = budget_used(b, uid);

	if (uid != 0) {
		uint64_t mine = u < b->per_uid ? b->per_uid - u : 0;

		if (mine < room)
			room = mine;
	}
	return room;
}

int budget_charge(struct budget *b, uid_t uid, uint64_t bytes)
{
	struct holder *h;

	if (bytes > budget_room(b, uid)) {
		b->refusals++;
		return -ENOSPC;
	}
	h = find(b, uid);
	if (!h) {
		if (b->n == b->cap) {
			size_t cap = b->cap ? 2 * b->cap : 8;
			struct holder *v;

			if (cap > BUDGET_MAX_UIDS) {
				b->refusals++;
				return -ENOSPC;
			}
			v = realloc(b->h, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			b->h = v;
			b->cap = cap;
		}
		h = &b->h[b->n++];
		*h = (struct holder){.uid = uid};
	}
	h->used += bytes;
	b->used += bytes;
	return 0;
}

void budget_release(struct budget *b, uid_t uid, uint64_t bytes)
{
	struct holder *h = find(b, uid);

	if (!h)
		return;
	if (bytes > h->used)
		bytes = h->used;
	h->used -= bytes;
	b->used -= bytes;
	if (!h->used)
		*h = b->h[--b->n];
}

uint64_t budget_total_used(const struct budget *b)
{
	return b->used;
}

uint64_t budget_refusals(const struct budget *b)
{
	return b->refusals;
}
