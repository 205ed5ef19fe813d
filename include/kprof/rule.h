/* SPDX-License-Identifier: GPL-2.0-only */
/* rule.h: watch rules (kprofctl watch, [watch] in kprofd.conf) and their file in the state
 * directory, parsed and written from buffers (daemon/lib/rule.c).
 *
 * A rule is one line of text, the same in the config file, on the wire and on disk:
 *
 *     KIND:VALUE [freq=N] [jvm=on|off] [children=on|off] [offcpu=on|off]
 *
 * KIND is comm (a process name, 1-15 bytes, as the kernel truncates it), exe (an absolute path
 * of an executable), uid (a number), cgroup (a path under /sys/fs/cgroup, or relative to it) or
 * unit (a systemd unit name). freq 0 or absent: the daemon's default. jvm=off: never ask a
 * HotSpot JVM for its perf map. children=on: the matched process's children are followed (always
 * on for cgroup and unit rules). Exact mode is never on for a rule's targets. Values hold no
 * white space, quotes or control bytes. rule_format gives the canonical text: two rules are the
 * same rule when their canonical texts are equal.
 *
 * The rules file: a header line "kprof-rules 1 N CRC" (N rules, CRC the CRC-32 of the bytes
 * after the header's newline, 8 hex digits) and N lines "UID RULE", UID the rule's owner. A file
 * cut short or changed (a torn write) fails the count or the CRC and is refused whole.
 */
#ifndef KPROF_RULE_H
#define KPROF_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RULE_VALUE_MAX 256 /* bytes of a value, with its NUL */
#define RULE_TEXT_MAX 320  /* bytes of a rule's text, with its NUL */
#define RULE_COMM_MAX 15   /* the kernel's TASK_COMM_LEN - 1 */
#define RULE_MAX_FREQ 4999
#define RULE_FILE_MAX 64 /* rules in one file */

enum rule_kind {
	RULE_COMM = 1,
	RULE_EXE = 2,
	RULE_UID = 3,
	RULE_CGROUP = 4,
	RULE_UNIT = 5,
};

struct rule {
	enum rule_kind kind;
	char value[RULE_VALUE_MAX]; /* comm, exe path, cgroup path or unit; uid in decimal */
	uint32_t uid;		    /* RULE_UID */
	unsigned freq;		    /* 0: the daemon's default */
	bool no_jvm_map;
	bool children;
	bool off_cpu; /* offcpu=on: attach --off-cpu */
};

/* Parse one rule from text (len bytes, no NUL needed). 0, or -EINVAL with why in err. */
int rule_parse(const char *text, size_t len, struct rule *r, char *err, size_t errlen);
/* The canonical text of r (at most RULE_TEXT_MAX bytes with the NUL): its length, or -ENOSPC. */
int rule_format(const struct rule *r, char *buf, size_t len);
/* The comm a rule's matches have after their exec (comm: the value; exe: the first 15 bytes of
 * the path's last component), for the kernel's pre-filter; false for other kinds. */
bool rule_comm(const struct rule *r, char comm[16]);
const char *rule_kind_name(enum rule_kind k);

/* CRC-32 (IEEE 802.3, zlib's), from crc = 0. */
uint32_t rule_crc32(uint32_t crc, const void *buf, size_t len);

struct rule_entry {
	uint32_t owner;
	struct rule rule;
};
/* Write n rules as a rules file into buf: its length, or -ENOSPC. */
int rule_file_format(const struct rule_entry *e, size_t n, char *buf, size_t len);
/* Parse a rules file: the number of rules put in e (at most max), or -EBADMSG (torn or
 * corrupt: bad header, count or CRC) / -EINVAL (a bad rule) with why in err. */
int rule_file_parse(const char *buf, size_t len, struct rule_entry *e, size_t max, char *err,
		    size_t errlen);

/* Whether u is a systemd unit name kprof accepts: NAME.service, .scope or .slice, of letters,
 * digits and ":_.@-", not starting with a dot. */
bool rule_unit_ok(const char *u);

#endif
