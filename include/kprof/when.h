/* SPDX-License-Identifier: GPL-2.0-only */
/* when.h: the times kprofctl's --since/--until take, parsed (when.c).
 *
 * "now"; a duration before now: "10m", "10m ago", "2 minutes ago", "-10m", "90s", "2h", "1d"
 * (units ms, s, m, min, h, d, or written whole: seconds, minutes, ...; a decimal number); seconds since the epoch: "@1700000000" or "@1700000000.5";
 * a date and time: "2026-11-24 11:05", "2026-11-24T11:05:30" (local time, or UTC with a
 * trailing "Z"); a time of today: "11:05", "11:05:30". Pure: the local-time conversion is the
 * caller's (mktime), passed in.
 */
#ifndef KPROF_WHEN_H
#define KPROF_WHEN_H

#include <stdint.h>
#include <time.h>

typedef time_t (*when_local_fn)(struct tm *tm);

/* CLOCK_REALTIME ns of s, with now_ns the present. 0, or -EINVAL (not a time kprofctl reads),
 * -ERANGE (before the epoch or too far ahead). */
int when_parse(const char *s, uint64_t now_ns, when_local_fn local, uint64_t *ret);
/* A duration alone ("90", a number of seconds, is the caller's; "10s", "10 s", "2 minutes",
 * "1.5h": the units above, also written whole) in ns: 0, -EINVAL, -ERANGE. */
int when_duration(const char *s, uint64_t *ret);

#endif
