/* SPDX-License-Identifier: GPL-2.0-only */
/* log.h: the daemon's logging, to stderr with syslog-style priority prefixes ("<3>") when
 * running under systemd (JOURNAL_STREAM set), so the journal keeps the levels; plain otherwise.
 * Pure modules never log.
 */
#ifndef KPROF_LOG_H
#define KPROF_LOG_H

#include <syslog.h>

extern int log_max_level;

void log_init(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)                                                                             \
	do {                                                                                       \
		if (log_max_level >= LOG_DEBUG)                                                    \
			log_msg(LOG_DEBUG, __VA_ARGS__);                                           \
	} while (0)

#endif
