/* SPDX-License-Identifier: GPL-2.0-only */
/* jvmhelper.h: the helper process of jvmattach.c, which talks to a JVM with its credentials
 * (jvmhelper.c), and what it shares with kprofd. */
#ifndef KPROF_DAEMON_JVMHELPER_H
#define KPROF_DAEMON_JVMHELPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JVMHELPER_SOCKET_WAIT_MS 3000 /* for the JVM's listener after SIGQUIT */
#define JVMHELPER_MAX_CMDS 2
#define JVMHELPER_REPLY_MAX (64u << 10) /* bytes of one reply kept; the rest is not read */
#define JVMHELPER_ARGS_MAX (64u << 10)	/* bytes of its command line, and of its environment */

/* How far the helper got. */
enum jvmhelper_step {
	JVMHELPER_STEP_START,
	JVMHELPER_STEP_ARGS,
	JVMHELPER_STEP_PROC,
	JVMHELPER_STEP_CREDS,
	JVMHELPER_STEP_SOCKET,
	JVMHELPER_STEP_TRIGGER,
	JVMHELPER_STEP_SIGNAL,
	JVMHELPER_STEP_WAIT,
	JVMHELPER_STEP_CONNECT,
	JVMHELPER_STEP_SEND,
	JVMHELPER_STEP_REPLY,
	JVMHELPER_STEP_DONE,
};

/* A shared anonymous mapping, written by the helper, read by kprofd once the helper is gone
 * (never while it writes): every value is checked before use. */
struct jvmhelper_shared {
	int step;      /* enum jvmhelper_step reached */
	int cmd;       /* the command of JVMHELPER_STEP_CONNECT .. JVMHELPER_STEP_REPLY */
	int err;       /* negative errno of the step that failed, or 0 */
	int done;      /* the helper got to its end (err says how) */
	int triggered; /* it started the JVM's listener (SIGQUIT) */
	int args_read; /* cmdline and environ hold what /proc gave */
	uint32_t nreplies;
	uint32_t len[JVMHELPER_MAX_CMDS];
	uint32_t cmdline_len, environ_len;
	char reply[JVMHELPER_MAX_CMDS][JVMHELPER_REPLY_MAX];
	char cmdline[JVMHELPER_ARGS_MAX], environ[JVMHELPER_ARGS_MAX];
};

/* What the helper needs, all prepared by kprofd before the fork. */
struct jvmhelper_args {
	pid_t parent; /* kprofd */
	uid_t uid;    /* the JVM's euid and egid */
	gid_t gid;
	int target_fd;	      /* pidfd of the target */
	int cancel_fd;	      /* readable (hung up) when kprofd wants the helper to stop */
	bool may_signal;      /* it catches SIGQUIT */
	bool args;	      /* read its command line and environment */
	uint64_t deadline_ns; /* CLOCK_MONOTONIC */
	char proc_cmdline[32], proc_environ[32], proc_root[32], proc_cwd[32];
	char sock_rel[32];		     /* tmp/.java_pidN */
	char trigger[32];		     /* .attach_pidN */
	const char *req[JVMHELPER_MAX_CMDS]; /* requests (hsattach_request) */
	size_t reqlen[JVMHELPER_MAX_CMDS];
	size_t ncmds;
	struct jvmhelper_shared *sh;
};

/* In the forked child: the whole exchange, into a->sh. 0, or the negative errno of the step
 * a->sh->step names. System calls only (kprofd has other threads: no malloc, no stdio). */
int jvmhelper_run(const struct jvmhelper_args *a);

#endif
