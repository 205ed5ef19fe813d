// SPDX-License-Identifier: GPL-2.0-only
/* client.c: kprofctl's side of the control socket: connect, one request, one reply.
 * Blocking I/O with a receive timeout, so a wedged daemon cannot hang a script forever (30 s;
 * $KPROF_TIMEOUT through client_set_timeout, for a host too loaded to answer in that). */
#include "client.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/frame.h"
#include "kprof/io.h"

static unsigned timeout_sec = CLIENT_TIMEOUT_SEC;

int client_set_timeout(const char *text)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v > CLIENT_TIMEOUT_MAX)
		return -EINVAL;
	timeout_sec = (unsigned)v;
	return 0;
}

unsigned client_timeout(void)
{
	return timeout_sec;
}

const char *client_no_permission(const char *path, char *buf, size_t len)
{
	struct stat st;
	struct group *g;

	if (stat(path, &st) < 0 || !(st.st_mode & S_IWGRP)) {
		snprintf(buf, len, " (no permission to use the socket)");
		return buf;
	}
	g = getgrgid(st.st_gid);
	if (g)
		snprintf(buf, len,
			 " (no permission to use the socket: it is for group %s; join it, e.g. "
			 "sudo usermod -aG %s $USER, then log in again)",
			 g->gr_name, g->gr_name);
	else
		snprintf(buf, len, " (no permission to use the socket: it is for group %u)",
			 (unsigned)st.st_gid);
	return buf;
}

int client_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = timeout_sec};
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return TAKE_FD(fd);
}

static int read_all(int fd, uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = recv(fd, p, n, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		if (r == 0)
			return -ECONNRESET;
		p += r;
		n -= r;
	}
	return 0;
}

int client_send(int fd, const Kprof__Request *req)
{
	_cleanup_free_ uint8_t *out = NULL;
	size_t len;
	int err = frame_pack(&req->base, FRAME_MAX_REQUEST, &out, &len);

	return err < 0 ? err : write_all(fd, out, len, true);
}

int client_recv(int fd, Kprof__Reply **ret)
{
	_cleanup_free_ uint8_t *in = NULL;
	uint8_t hdr[FRAME_HDR_SIZE];
	Kprof__Reply *rep;
	uint32_t n;
	int err;

	err = read_all(fd, hdr, sizeof(hdr));
	if (err < 0)
		return err;
	n = frame_get_header(hdr);
	if (n > FRAME_MAX_REPLY)
		return -EMSGSIZE;
	in = malloc(n ? n : 1);
	if (!in)
		return -ENOMEM;
	err = read_all(fd, in, n);
	if (err < 0)
		return err;
	rep = kprof__reply__unpack(NULL, n, in);
	if (!rep)
		return -EBADMSG;
	*ret = rep;
	return 0;
}

int client_call(int fd, const Kprof__Request *req, Kprof__Reply **ret)
{
	int err = client_send(fd, req);

	return err < 0 ? err : client_recv(fd, ret);
}
