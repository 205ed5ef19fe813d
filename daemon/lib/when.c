// SPDX-License-Identifier: GPL-2.0-only
/* when.c: --since/--until times (see include/kprof/when.h). A duration is a decimal number and
 * a unit; an absolute time goes through strptime with a few fixed layouts, tried in turn, and
 * must be consumed whole. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/when.h"

#define NS 1e9

/* "10m", "10 m", "2 minutes" (ago if ago): ns in *ret. Longer unit names first: a unit is
 * matched whole. */
static int duration(const char *s, bool ago, double *ret)
{
	static const struct {
		const char *u;
		double ns;
	} units[] = {{"milliseconds", 1e6}, {"millisecond", 1e6}, {"minutes", 60 * NS},
		     {"seconds", NS},	    {"minute", 60 * NS},  {"second", NS},
		     {"hours", 3600 * NS},  {"msec", 1e6},	  {"mins", 60 * NS},
		     {"secs", NS},	    {"hour", 3600 * NS},  {"days", 86400 * NS},
		     {"min", 60 * NS},	    {"sec", NS},	  {"day", 86400 * NS},
		     {"hrs", 3600 * NS},    {"ms", 1e6},	  {"hr", 3600 * NS},
		     {"s", NS},		    {"m", 60 * NS},	  {"h", 3600 * NS},
		     {"d", 86400 * NS}};
	char *end;
	double v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || !isfinite(v))
		return -EINVAL;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].u);

		if (strncmp(end, units[i].u, n) || (end[n] && end[n] != ' '))
			continue;
		end += n;
		while (*end == ' ')
			end++;
		if (*end && (!ago || strcmp(end, "ago")))
			return -EINVAL;
		*ret = v * units[i].ns;
		return 0;
	}
	return -EINVAL;
}

int when_duration(const char *s, uint64_t *ret)
{
	double ns;

	if (duration(s, false, &ns) < 0)
		return -EINVAL;
	if (ns >= 1.8e19)
		return -ERANGE;
	*ret = (uint64_t)ns;
	return 0;
}

static int absolute(const char *s, uint64_t now_ns, when_local_fn local, uint64_t *ret)
{
	static const char *const layouts[] = {
	    "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M",
	    "%Y-%m-%d",		 "%H:%M:%S",	      "%H:%M"};
	size_t len = strlen(s);
	bool utc = len && s[len - 1] == 'Z';
	char buf[64];

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len + 1);
	if (utc)
		buf[len - 1] = '\0';
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		struct tm tm = {0};
		time_t now = now_ns / 1000000000ULL, t;
		const char *end;

		if (!strchr(layouts[i], 'Y')) { /* a time of today */
			if (utc)
				gmtime_r(&now, &tm);
			else
				localtime_r(&now, &tm);
			tm.tm_sec = 0;
		}
		end = strptime(buf, layouts[i], &tm);
		if (!end || *end)
			continue;
		tm.tm_isdst = -1;
		t = utc ? timegm(&tm) : local(&tm);
		if (t < 0)
			return -ERANGE;
		*ret = (uint64_t)t * 1000000000ULL;
		return 0;
	}
	return -EINVAL;
}

int when_parse(const char *s, uint64_t now_ns, when_local_fn local, uint64_t *ret)
{
	double d;

	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "now")) {
		*ret = now_ns;
		return 0;
	}
	if (s[0] == '@') {
		char *end;
		double v;

		if (s[1] < '0' || s[1] > '9')
			return -EINVAL;
		v = strtod(s + 1, &end);
		if (*end || !isfinite(v))
			return -EINVAL;
		if (v * NS >= 1.8e19)
			return -ERANGE;
		*ret = (uint64_t)(v * NS);
		return 0;
	}
	if (duration(s[0] == '-' ? s + 1 : s, true, &d) == 0) {
		if (d > (double)now_ns)
			return -ERANGE;
		*ret = now_ns - (uint64_t)d;
		return 0;
	}
	return absolute(s, now_ns, local, ret);
}
