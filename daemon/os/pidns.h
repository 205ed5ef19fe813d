/* SPDX-License-Identifier: GPL-2.0-only */
/* pidns.h: a client's PIDs, given in its own PID namespace, as kprofd's (pidns.c). */
#ifndef KPROF_PIDNS_H
#define KPROF_PIDNS_H

#include <stdbool.h>
#include <sys/types.h>

/* Where a client's PIDs live. */
struct pidns_client {
	bool foreign; /* not kprofd's PID namespace: its PIDs are translated */
	bool unknown; /* one kprofd cannot see into (an ancestor's, or the client is gone) */
	int level;    /* its depth below kprofd's namespace (0: kprofd's) */
	dev_t dev;    /* its namespace (/proc/PEER/ns/pid) */
	ino_t ino;
};

/* The namespace of the client whose pid (in kprofd's namespace, SO_PEERCRED's) is peer (0: a
 * peer kprofd's namespace does not show). */
void pidns_client_init(pid_t peer, struct pidns_client *c);
/* The process that has pid in the client's namespace, as kprofd's pid into *ret: 0, -ESRCH
 * (none has), -EXDEV (the client's namespace is unknown), -ENOMEM. */
int pidns_translate(const struct pidns_client *c, pid_t pid, pid_t *ret);

#endif
