/* SPDX-License-Identifier: GPL-2.0-only */
/* jvmattach.h: jcmd commands sent to a HotSpot JVM through its attach protocol, off kprofd's
 * event loop (jvmattach.c). */
#ifndef KPROF_DAEMON_JVMATTACH_H
#define KPROF_DAEMON_JVMATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "kprof/hsattach.h"

#define JVMATTACH_MAX_CMDS 2
#define JVMATTACH_REPLY_MAX (64u << 10) /* bytes of one reply kept; the rest is not read */

struct jvmattach_ctx;
struct jvmattach;

/* What /proc shows of a process, for the attach. */
struct jvmattach_info {
	bool hotspot; /* libjvm.so is mapped */
	/* -XX:+PreserveFramePointer in JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS or the command line
	 * (the last one wins): 1; -XX:-PreserveFramePointer: 0; not there: -ENOENT. */
	int preserve_fp;
};

struct jvmattach_result {
	int err;	 /* 0: every command got a reply (each has its own code) */
	char why[256];	 /* err < 0: what failed, and at which step */
	bool triggered;	 /* the JVM's attach listener was started for this exchange (SIGQUIT) */
	unsigned ms;	 /* how long the exchange took */
	size_t nreplies; /* commands answered, in order */
	struct hsattach_reply replies[JVMATTACH_MAX_CMDS]; /* valid during the callback only */
};

/* Called once per exchange, from the event loop, when it is over (answered, failed or timed
 * out); the exchange is freed when it returns. */
typedef void (*jvmattach_done_fn)(const struct jvmattach_result *r, void *userdata);

/* Exchanges run on e, at most max at once. Free it after e: children killed by a cancel are
 * reaped by e's sources. */
int jvmattach_ctx_new(sd_event *e, unsigned max, struct jvmattach_ctx **ret);
void jvmattach_ctx_free(struct jvmattach_ctx *ctx);

/* Whether pid is a HotSpot JVM, and its frame-pointer flag as far as /proc shows it. 0 or a
 * negative errno (-ESRCH: gone). */
int jvmattach_inspect(pid_t pid, struct jvmattach_info *info);

/* Start sending the jcmd command lines cmds[0..n) to process pid (which must still be the one
 * started at start_ticks), each on its own connection, the whole within timeout_ms; done is
 * called when it is over. -EBUSY if max exchanges are running, -ESRCH if pid is gone or
 * another process, else a negative errno; why says what failed. A JVM whose listener is not
 * running is signalled only if it catches SIGQUIT (its default action would kill it): else
 * the result is -EPERM. */
int jvmattach_start(struct jvmattach_ctx *ctx, pid_t pid, uint64_t start_ticks,
		    const char *const *cmds, size_t n, unsigned timeout_ms, jvmattach_done_fn done,
		    void *userdata, struct jvmattach **ret, char *why, size_t whylen);
/* Stop an exchange that is still running: its helper is killed, done is not called. NULL is a
 * no-op. */
void jvmattach_cancel(struct jvmattach *ja);

#endif
