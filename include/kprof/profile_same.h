/* SPDX-License-Identifier: GPL-2.0-only */
/* profile_same.h: the copies of one function in a profile (profile_same.c). Included by
 * profile.h. Pure: no I/O, no globals.
 *
 * A JIT keeps several copies of a function under one name, each with its own start: HotSpot's
 * tiers, V8's tiers ("JS:~f", "JS:^f", "JS:+f", "JS:*f" for Ignition, Sparkplug, Maglev and
 * TurboFan) and the new copy V8 makes after a deoptimization. The profile keeps each copy as a
 * function of its own (they are different code); a reader that asks "which function" rather
 * than "which code" (the drift detector's callee keys) maps a copy to the first function seen
 * with the same name, the V8 tier mark left out, module and kind.
 */
#ifndef KPROF_PROFILE_SAME_H
#define KPROF_PROFILE_SAME_H

#include <stdint.h>

struct profile;

/* The lowest function id of id's name, module and kind (id itself if it is the first, or an id
 * out of range; without memory, id too: its copies are then apart, as before). Amortized O(1):
 * the functions are filed once each, in id order. */
uint32_t profile_same(struct profile *p, uint32_t id);
/* Names changed (renames, aliases): every answer is computed again. */
void profile_same_forget(struct profile *p);
void profile_same_release(struct profile *p);

#endif
