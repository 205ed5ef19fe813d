// SPDX-License-Identifier: GPL-2.0-only
/* log.c: see log.h. One write per message so lines from signal-free contexts never interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "os/log.h"

int log_max_level = LOG_INFO;
static int log_journal;

void log_init(void)
{
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

void log_msg(int level, const char *fmt, ...)
{
	static const char *const names[] = {"emerg",   "alert",	 "crit", "error",
					    "warning", "notice", "info", "debug"};
	char buf[2048];
	va_list ap;
	int n;

	if (level > log_max_level)
		return;
	if (log_journal) {
		n = snprintf(buf, sizeof(buf), "<%d>", level);
	} else {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		n = snprintf(buf, sizeof(buf), "%02d:%02d:%02d.%03ld kprofd[%d] %s: ", tm.tm_hour,
			     tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, getpid(),
			     names[level & 7]);
	}
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0) {
		/* nowhere left to report it */
	}
}
