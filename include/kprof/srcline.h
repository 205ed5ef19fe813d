/* SPDX-License-Identifier: GPL-2.0-only */
/* srcline.h: the kprof-lines protocol (cli/helper/kprof-lines.c), parsed from its bytes.
 *
 * kprof-lines answers "0xADDR\n" requests with zero or more frame lines, innermost first,
 * "F\tFUNCTION\tFILE\tLINE\n", then "E\n"; at its start it writes "R\n" (ready) or
 * "X REASON\n" (it could not open the file, or could not sandbox itself). Its output is read as
 * hostile (a helper that libbfd's DWARF parser has corrupted may write anything): a line must
 * have exactly that shape, a field is at most SRCLINE_MAX_FIELD bytes without control
 * characters, a line number fits 32 bits, an answer has at most SRCLINE_MAX_FRAMES frames.
 * Anything else is -EBADMSG, and the caller kills the helper. Pure: buffers in, frames out.
 */
#ifndef KPROF_SRCLINE_H
#define KPROF_SRCLINE_H

#include <stddef.h>
#include <stdint.h>

#define SRCLINE_MAX_FRAMES 16  /* of one address: its function and what it inlined */
#define SRCLINE_MAX_FIELD 1024 /* bytes of a function or file name */
#define SRCLINE_REQUEST_MAX 24 /* "0x" + 16 digits + "\n" + NUL */

/* One frame of source at an address. */
struct srcline_frame {
	const char *func; /* "" if unknown */
	const char *file; /* "" if unknown */
	uint32_t line;	  /* 0 if unknown */
};

/* The request for addr into buf (SRCLINE_REQUEST_MAX bytes): its length. */
size_t srcline_request(uint64_t addr, char *buf);

/* The helper's first line at buf[0..len): 0 ready ("R\n"), -EAGAIN not whole yet, -ENOEXEC for
 * "X REASON" (the reason into why, cut at whylen), -EBADMSG for anything else. *used: the bytes
 * of that line (set when the return is not -EAGAIN). */
int srcline_start(const char *buf, size_t len, size_t *used, char *why, size_t whylen);

/* One answer at buf[0..len), parsed in place (the frames point into buf, the tabs and newlines
 * become NULs): the number of frames (at most max are filled; more than SRCLINE_MAX_FRAMES is
 * -EBADMSG), -EAGAIN if the answer is not whole yet (nothing changed), -EBADMSG if it is
 * malformed. *used: the bytes of the answer, "E\n" included. */
int srcline_parse(char *buf, size_t len, size_t *used, struct srcline_frame *fr, size_t max);

#endif
