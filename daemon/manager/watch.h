/* SPDX-License-Identifier: GPL-2.0-only */
/* watch.h: watch rules, which attach kprofd by itself to the processes they match (watch.c). */
#ifndef KPROF_DAEMON_WATCH_H
#define KPROF_DAEMON_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kprof/rule.h"
#include "target/target.h"

#define WATCH_MAX_RULES RULE_FILE_MAX /* rules of clients, and of the config file apart */
#define WATCH_RULES_PER_USER 8	      /* a non-root uid's */

struct manager;

struct wrule {
	struct rule r;
	char text[RULE_TEXT_MAX]; /* canonical: its name, and its targets' Target.rule */
	uid_t owner;		  /* its targets are attached for this uid */
	bool config;		  /* from kprofd.conf: not saved, changed by a reload */
	unsigned id;
	uint64_t since_ns; /* CLOCK_REALTIME */
	struct watch_counts counts;
	char cgname[4096]; /* cgroup and unit rules: the manager's watch while it runs, else "" */
	char state[1024];  /* why its watch could not be made (a limit), else "" */
};

struct watch {
	struct manager *m;
	struct wrule *rules[WATCH_MAX_RULES + 32]; /* clients' and the config's */
	unsigned n, next_id;
};

/* Take over m's watch rules: those of the config file and the saved ones (a torn or corrupt
 * rules file is renamed .bad and said), each applied to the present processes. */
int watch_new(struct manager *m, struct watch **ret);
void watch_free(struct watch *w);
/* Add a rule (text as rule.h) for owner: its id, the processes attached at once and refused.
 * -EINVAL, -EPERM, -EALREADY, -EUSERS, -ENOENT (a unit or cgroup that does not exist) with a
 * message in err. */
int watch_add(struct watch *w, const char *text, size_t len, uid_t owner, unsigned *id,
	      unsigned *attached, unsigned *refused, char *err, size_t errlen);
/* The rule by id (decimal) or text that uid (0: root, any) may remove, else NULL and why. */
struct wrule *watch_find(struct watch *w, const char *what, uid_t uid, int *errp, char *err,
			 size_t errlen);
/* Remove a rule (not a config one): its targets are detached, how many. */
unsigned watch_remove(struct watch *w, struct wrule *r);
/* "" when r is watching, else why not. */
const char *watch_state(const struct watch *w, const struct wrule *r);

#endif
