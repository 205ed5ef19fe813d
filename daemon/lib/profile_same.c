// SPDX-License-Identifier: GPL-2.0-only
/* profile_same.c: the copies of one function in a profile (see include/kprof/profile_same.h).
 * Apart from profile.c because no sample's path needs it: the functions are filed in id order
 * (when an id not filed yet is asked for) in an index of the first function of each (name
 * without a tier mark, module, kind), each one's answer kept in an array by id; a rename files
 * them all again.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/array.h"
#include "kprof/hash.h"
#include "kprof/profile.h"
#include "profile_internal.h"

/* The name without V8's prefix and tier mark: "JS:*f", "JS:~f" and "JS:f" are all "f". */
static const char *base_name(const char *name)
{
	if (strncmp(name, "JS:", 3))
		return name;
	return name[3] && strchr("~^+*", name[3]) ? name + 4 : name + 3;
}

static uint64_t same_hash(const struct profile_func *f)
{
	return mix64(hash_str(hash_str(0xcbf29ce484222325ULL ^ f->kind, base_name(f->name)),
			      f->module));
}

static uint64_t same_hash_at(const void *ctx, uint32_t i)
{
	return same_hash(&((const struct profile *)ctx)->funcs[i].f);
}

static bool same_func(const struct profile_func *a, const struct profile_func *b)
{
	return a->kind == b->kind && !strcmp(base_name(a->name), base_name(b->name)) &&
	       !strcmp(a->module, b->module);
}

/* File the functions not filed yet, in id order: each one's first is the lowest id of its name,
 * so an answer never changes while names do not. 0 or -ENOMEM. */
static int same_fill(struct profile *p)
{
	size_t cap = p->nsame;

	if (array_grow((void **)&p->same, &cap, p->nfuncs, sizeof(*p->same), 64) < 0)
		return -ENOMEM;
	p->nsame = cap;
	for (; p->nsame_done < p->nfuncs; p->nsame_done++) {
		const struct profile_func *f = &p->funcs[p->nsame_done].f;
		uint32_t id = (uint32_t)p->nsame_done, first = id;
		size_t j;

		if (idxtab_reserve(&p->same_tab, p->nsame_firsts + 1, 64, same_hash_at, p) < 0)
			return -ENOMEM;
		idxtab_probe(&p->same_tab, same_hash(f), j)
			if (same_func(&p->funcs[p->same_tab.slot[j] - 1].f, f))
				break;
		if (p->same_tab.slot[j]) {
			first = p->same_tab.slot[j] - 1;
		} else {
			p->same_tab.slot[j] = id + 1;
			p->nsame_firsts++;
		}
		p->same[id] = first;
	}
	return 0;
}

uint32_t profile_same(struct profile *p, uint32_t id)
{
	if (id >= p->nfuncs)
		return id;
	if (id >= p->nsame_done && same_fill(p) < 0 && id >= p->nsame_done)
		return id;
	return p->same[id];
}

void profile_same_forget(struct profile *p)
{
	idxtab_clear(&p->same_tab);
	p->nsame_done = p->nsame_firsts = 0;
}

void profile_same_release(struct profile *p)
{
	idxtab_release(&p->same_tab);
	free(p->same);
	p->same = NULL;
	p->nsame = p->nsame_done = p->nsame_firsts = 0;
}
