// SPDX-License-Identifier: GPL-2.0-only
/* pmemo.c: a bounded memo of processes without a profile in system-wide mode (pmemo.h).
 *
 * One slot per hash of (pid, start): lookup and insert are one probe, memory is fixed, and a
 * collision only costs the evicted process a new try at its next sample. The hash mixes the
 * start in, so that a pid reused by a new process lands elsewhere and is tried as new.
 */
#include <errno.h>
#include <stdlib.h>

#include "kprof/pmemo.h"

struct pmemo_slot {
	uint64_t start;
	uint32_t pid; /* 0: empty */
	uint32_t why;
};

struct pmemo {
	size_t mask;
	struct pmemo_slot *s;
};

int pmemo_new(size_t slots, struct pmemo **ret)
{
	struct pmemo *p;

	if (!slots)
		slots = PMEMO_DEFAULT_SLOTS;
	if (slots > (1u << 20) || (slots & (slots - 1)))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->s = calloc(slots, sizeof(*p->s));
	if (!p->s) {
		free(p);
		return -ENOMEM;
	}
	p->mask = slots - 1;
	*ret = p;
	return 0;
}

void pmemo_free(struct pmemo *p)
{
	if (!p)
		return;
	free(p->s);
	free(p);
}

static struct pmemo_slot *slot_of(const struct pmemo *p, uint32_t pid, uint64_t start)
{
	uint64_t h = ((uint64_t)pid * 0x9e3779b97f4a7c15ULL) ^ (start * 0xff51afd7ed558ccdULL);

	h ^= h >> 29;
	return &p->s[h & p->mask];
}

enum pmemo_why pmemo_hit(struct pmemo *p, uint32_t pid, uint64_t start)
{
	const struct pmemo_slot *s = slot_of(p, pid, start);

	if (!pid || s->pid != pid || s->start != start)
		return PMEMO_NONE;
	return (enum pmemo_why)s->why;
}

int pmemo_put(struct pmemo *p, uint32_t pid, uint64_t start, enum pmemo_why why)
{
	struct pmemo_slot *s;
	int evicted;

	if (!pid || why <= PMEMO_NONE || why >= PMEMO_NR)
		return -EINVAL;
	s = slot_of(p, pid, start);
	evicted = s->pid && (s->pid != pid || s->start != start);
	*s = (struct pmemo_slot){.start = start, .pid = pid, .why = why};
	return evicted;
}

void pmemo_forget(struct pmemo *p, enum pmemo_why why)
{
	for (size_t i = 0; i <= p->mask; i++)
		if (p->s[i].pid && (why == PMEMO_NONE || p->s[i].why == (uint32_t)why))
			p->s[i] = (struct pmemo_slot){0};
}

size_t pmemo_count(const struct pmemo *p, enum pmemo_why why)
{
	size_t n = 0;

	for (size_t i = 0; i <= p->mask; i++)
		n += p->s[i].pid && (why == PMEMO_NONE || p->s[i].why == (uint32_t)why);
	return n;
}
