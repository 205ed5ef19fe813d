/* SPDX-License-Identifier: GPL-2.0-only */
/* budget.h: a memory budget shared by users, with a total and a per-uid limit.
 *
 * kprofd holds memory on behalf of the users whose targets it profiles (symbol tables, perf
 * maps). Each charge names the uid it is for; a charge that would take the total past its
 * limit, or a non-root uid past the per-uid limit, is refused and counted. Root is held only
 * by the total. Pure: no I/O, no globals.
 */
#ifndef KPROF_BUDGET_H
#define KPROF_BUDGET_H

#include <stdint.h>
#include <sys/types.h>

#define BUDGET_MAX_UIDS 4096 /* distinct uids charged at once; more are refused */

struct budget;

int budget_new(uint64_t total, uint64_t per_uid, struct budget **ret);
void budget_free(struct budget *b);
void budget_set_limits(struct budget *b, uint64_t total, uint64_t per_uid);
/* 0, or -ENOSPC (over a limit; counted in refusals) or -ENOMEM. */
int budget_charge(struct budget *b, uid_t uid, uint64_t bytes);
/* Give back what a charge took (at most what uid holds). */
void budget_release(struct budget *b, uid_t uid, uint64_t bytes);
/* Bytes uid could still be charged. */
uint64_t budget_room(const struct budget *b, uid_t uid);
uint64_t budget_used(const struct budget *b, uid_t uid);
uint64_t budget_total_used(const struct budget *b);
uint64_t budget_refusals(const struct budget *b);

#endif
