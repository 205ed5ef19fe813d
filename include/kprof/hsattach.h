/* SPDX-License-Identifier: GPL-2.0-only */
/* hsattach.h: the bytes of HotSpot's dynamic attach protocol (what jcmd speaks), pure.
 *
 * A client connects to the JVM's Unix socket (/tmp/.java_pidPID in the JVM's root, PID as the
 * JVM sees itself) and writes one request, protocol version 1: the strings "1", the command
 * ("jcmd"), then exactly three arguments (the jcmd command line, two empty), each ended by a
 * NUL. The JVM answers with its result code in decimal and a newline ("0\n", "-1\n"), then the
 * command's output, and closes the connection. The glue (daemon/symbols/jvmattach.c) does the I/O;
 * this module builds the request, parses the reply and reads flags out of VM.flags output and
 * command lines. No I/O, no globals.
 */
#ifndef KPROF_HSATTACH_H
#define KPROF_HSATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* HotSpot's own limits (AttachOperation): a command name of at most 16 bytes, arguments of at
 * most 1024. */
#define HSATTACH_NAME_MAX 16
#define HSATTACH_ARG_MAX 1024
/* Room for any request: "1", a name, three arguments, five NULs. */
#define HSATTACH_REQUEST_MAX (2 + HSATTACH_NAME_MAX + 1 + 3 * (HSATTACH_ARG_MAX + 1))

struct hsattach_reply {
	int code;	  /* the JVM's result: 0 done, anything else failed */
	const char *text; /* the output after the code's line, in the caller's buffer */
	size_t text_len;
};

/* Build the request for cmd with up to three arguments (NULL: empty) into buf: its length, or
 * -ENAMETOOLONG (a name or an argument over HotSpot's limit), -ENOSPC (cap too small). */
ssize_t hsattach_request(char *buf, size_t cap, const char *cmd, const char *arg0, const char *arg1,
			 const char *arg2);

/* Parse a whole reply (the bytes up to the JVM's close): 0, -ENODATA (nothing: the JVM closed
 * without answering, which is how it refuses a peer whose credentials it does not accept), or
 * -EBADMSG (no result code line). */
int hsattach_reply(const char *buf, size_t len, struct hsattach_reply *r);

/* The boolean -XX flag name in text, a list of options separated by whitespace or NULs
 * (VM.flags output, /proc/PID/cmdline, JAVA_TOOL_OPTIONS): 1 if the last mention is
 * "-XX:+name", 0 if "-XX:-name", -ENOENT if it is not there. */
int hsattach_flag(const char *text, size_t len, const char *name);

/* The value of variable name in an environment block (/proc/PID/environ: NUL-separated
 * NAME=value), in *val and *vlen: 0, or -ENOENT. */
int hsattach_getenv(const char *env, size_t len, const char *name, const char **val, size_t *vlen);

/* Whether a mapping's path is HotSpot's libjvm.so (also deleted, as after an upgrade). */
bool hsattach_is_libjvm(const char *path);

#endif
