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

#define JVMATTACH_MAX_CMDS 2		/* commands of one exchange */
#define JVMATTACH_REPLY_MAX (64u << 10) /* bytes of one reply kept; the rest is not read */

struct jvmattach_ctx;
struct jvmattach;

/* One exchange. */
struct jvmattach_req {
	pid_t pid;
	uint64_t start_ticks;	 /* pid must still be the process started then */
	const char *const *cmds; /* jcmd command lines, each sent on its own connection */
	size_t ncmds;		 /* 0: no attach, only what args asks */
	bool args;		 /* read its command line and environment: preserve_fp */
	unsigned timeout_ms;	 /* the whole exchange */
};

struct jvmattach_result {
	int err;	 /* 0: every command got a reply (each has its own code) */
	char why[256];	 /* err < 0: what failed, and at which step */
	bool triggered;	 /* the JVM's attach listener was started for this exchange (SIGQUIT) */
	unsigned ms;	 /* how long the exchange took */
	size_t nreplies; /* commands answered, in order */
	struct hsattach_reply replies[JVMATTACH_MAX_CMDS]; /* valid during the callback only */
	/* -XX:+PreserveFramePointer in JAVA_TOOL_OPTIONS, its command line (JDK_JAVA_OPTIONS
	 * there first) or _JAVA_OPTIONS, the last one winning: 1; -XX:-PreserveFramePointer: 0;
	 * neither, or not read: -ENOENT. Also when err < 0, if they were read. */
	int preserve_fp;
	bool args_read;
};

/* Called once per exchange, from the event loop, when it is over (answered, failed or timed
 * out); the exchange is freed when it returns. */
typedef void (*jvmattach_done_fn)(const struct jvmattach_result *r, void *userdata);

/* Exchanges run on e, at most max at once. Free it after e: children killed by a cancel are
 * reaped by e's sources. */
int jvmattach_ctx_new(sd_event *e, unsigned max, struct jvmattach_ctx **ret);
void jvmattach_ctx_free(struct jvmattach_ctx *ctx);

/* Whether pid maps libjvm.so (reads /proc/PID/maps only: never the target's memory): 1, 0, or
 * a negative errno (-ESRCH: gone). */
int jvmattach_is_hotspot(pid_t pid);

/* Start the exchange req describes; done is called when it is over. Its command line and
 * environment are read by the helper too, since their pages are the target's and a read of
 * them can wait for ever (a FUSE file mapped over them). -EBUSY if max exchanges are running,
 * -ESRCH if the pid is gone or another process's, else a negative errno; why says what failed.
 * A JVM whose listener is not running is signalled only if it catches SIGQUIT (its default
 * action would kill it): else the result is -EPERM. */
int jvmattach_start(struct jvmattach_ctx *ctx, const struct jvmattach_req *req,
		    jvmattach_done_fn done, void *userdata, struct jvmattach **ret, char *why,
		    size_t whylen);
/* Stop an exchange that is still running: its helper is killed, done is not called. NULL is a
 * no-op. */
void jvmattach_cancel(struct jvmattach *ja);

#endif
