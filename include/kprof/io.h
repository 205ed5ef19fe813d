/* SPDX-License-Identifier: GPL-2.0-only */
/* io.h: write_all, the one blocking write loop shared by kprofd and kprofctl.
 *
 * write(2) and send(2) may write less than asked (a signal, a full socket buffer) or fail with
 * EINTR; write_all loops until every byte is out. On a socket it uses send with MSG_NOSIGNAL, so a
 * peer that has gone away gives -EPIPE to the caller instead of a SIGPIPE that kills the
 * process. Not for non-blocking descriptors: EAGAIN is returned as an error, not waited out.
 */
#ifndef KPROF_IO_H
#define KPROF_IO_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

/* Write the n bytes at buf to fd (a stream socket when sock is true). 0 or a negative errno. */
static inline int write_all(int fd, const void *buf, size_t n, bool sock)
{
	const uint8_t *p = buf;

	while (n > 0) {
		ssize_t w = sock ? send(fd, p, n, MSG_NOSIGNAL) : write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

#endif
