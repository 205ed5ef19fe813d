// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_procinfo.c: libFuzzer target for the status and stat parsers (daemon/lib/procinfo.c).
 *
 * A process picks its own comm (15 bytes of anything but NUL: ')', spaces, digits, tabs), and
 * kprofd reads its status and stat files in read()s that may come back cut short. The input is
 * fed to both parsers whole, cut at a point and split in two (each piece parsed alone, in an
 * exactly sized copy so ASan sees any read past it). Every call must return 0 or -EBADMSG, leave
 * comm NUL-terminated within its 17 bytes, and on success give tgid > 0 and nstgid > 0.
 *
 * Then a valid stat line and a valid status text are synthesized, the kernel's way, from fields
 * and a comm chosen by the input (byte 0: comm length 0-15, then the comm, NUL and '\n' mapped
 * to other bytes; the numbers from the input's hash): the parsers must return exactly those
 * fields. This checks the "count after the LAST ')'" rule against comms like "x) R 1 2 3".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kprof/procinfo.h"

#define COMM_MAX 15

static void parse_both(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	struct procinfo_status s;
	struct procinfo_stat t;
	int r;

	FUZZ_CHECK(buf, "out of memory");
	memcpy(buf, data, size);
	r = procinfo_status(buf, size, &s);
	FUZZ_CHECK(r == 0 || r == -EBADMSG, "procinfo_status: %d", r);
	FUZZ_CHECK(memchr(s.comm, '\0', sizeof(s.comm)), "status comm not NUL-terminated");
	if (r == 0)
		FUZZ_CHECK(s.tgid > 0 && s.nstgid > 0, "status: tgid %d nstgid %d", s.tgid,
			   s.nstgid);
	r = procinfo_stat(buf, size, &t);
	FUZZ_CHECK(r == 0 || r == -EBADMSG, "procinfo_stat: %d", r);
	free(buf);
}

/* The kernel's stat line (fs/proc/array.c do_task_stat) with 52 fields. */
static size_t make_stat(char *out, size_t cap, int pid, const char *comm, char state, int tty_nr,
			const uint64_t *v)
{
	int n = snprintf(out, cap,
			 "%d (%s) %c %d %d %d %d %d %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
			 " %" PRId64 " %d %" PRIu64 " %" PRIu64 " %" PRId64,
			 pid, comm, state, (int)(v[0] % 100000), (int)(v[1] % 100000),
			 (int)(v[2] % 100000), tty_nr, (int)(v[3] % 100000) - 1, (unsigned)v[4],
			 v[5], v[6], v[7], v[8], v[9], v[10], (int64_t)(v[11] % 100),
			 (int64_t)(v[12] % 100), (int64_t)(v[13] % 40) - 20, (int64_t)(v[14] % 40),
			 (int64_t)(v[15] % 100), 0, v[16], v[17], (int64_t)(v[18] % 100000));
	FUZZ_CHECK(n > 0 && (size_t)n < cap, "snprintf");
	/* Fields 25-52, then the newline. */
	for (int i = 25; i <= 52; i++)
		n += snprintf(out + n, cap - n, " %d", i);
	n += snprintf(out + n, cap - n, "\n");
	FUZZ_CHECK((size_t)n < cap, "stat line too long");
	return (size_t)n;
}

static void check_synth(const uint8_t *data, size_t size, uint64_t seed)
{
	static const char states[] = "RSDZTtXxKWPI";
	char comm[COMM_MAX + 1], line[2048], status[1024];
	size_t clen = size ? data[0] % (COMM_MAX + 1) : 0, n;
	uint64_t v[19];
	struct procinfo_stat t;
	struct procinfo_status s;
	char state;
	int pid, tty_nr, r;

	if (clen > size - (size ? 1 : 0))
		clen = size ? size - 1 : 0;
	for (size_t i = 0; i < clen; i++) {
		char c = (char)data[1 + i];

		comm[i] = c == '\0' ? ')' : c == '\n' ? ' ' : c;
	}
	comm[clen] = '\0';
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t r64 = prng_next(&seed);

		/* Small and huge values both, below 2^62: the parser reads signed 64-bit
		 * decimals and refuses the last few below INT64_MAX. */
		v[i] = (r64 & 1) ? (r64 >> 2) % 100000 : (r64 >> 2);
	}
	pid = 1 + (int)(prng_next(&seed) % INT32_MAX);
	state = states[prng_next(&seed) % (sizeof(states) - 1)];
	tty_nr = (int)(prng_next(&seed) % 3 == 0 ? 0 : (int32_t)prng_next(&seed));

	n = make_stat(line, sizeof(line), pid, comm, state, tty_nr, v);
	r = procinfo_stat(line, n, &t);
	FUZZ_CHECK(r == 0, "stat of a valid line (comm '%s'): %d", comm, r);
	FUZZ_CHECK(t.state == state && t.tty_nr == tty_nr && t.utime == v[9] && t.stime == v[10] &&
		       t.start_ticks == v[16],
		   "stat (comm '%s'): state %c/%c tty %d/%d utime %" PRIu64 "/%" PRIu64
		   " stime %" PRIu64 "/%" PRIu64 " start %" PRIu64 "/%" PRIu64,
		   comm, t.state, state, t.tty_nr, tty_nr, t.utime, v[9], t.stime, v[10],
		   t.start_ticks, v[16]);
	/* Without the trailing newline (a read that stopped there) too. */
	r = procinfo_stat(line, n - 1, &t);
	FUZZ_CHECK(r == 0 && t.start_ticks == v[16], "stat without '\\n': %d", r);
	/* Cut anywhere before starttime's last digit: never a success with a wrong field.  */
	{
		size_t cut = prng_next(&seed) % n;
		char *c = malloc(cut ? cut : 1);

		FUZZ_CHECK(c, "out of memory");
		memcpy(c, line, cut);
		r = procinfo_stat(c, cut, &t);
		FUZZ_CHECK(r == 0 || r == -EBADMSG, "cut stat: %d", r);
		if (r == 0)
			FUZZ_CHECK(t.state == state && t.tty_nr == tty_nr && t.utime == v[9] &&
				       t.stime == v[10],
				   "cut stat at %zu: wrong fields", cut);
		free(c);
	}

	/* status: the comm written raw (the kernel escapes '\n' and '\\'; the parser only
	 * copies what follows "Name:\t"), NStgid with two namespaces or absent. */
	{
		unsigned uid[4];
		int tgid = 1 + (int)(prng_next(&seed) % INT32_MAX);
		int nstgid = 1 + (int)(prng_next(&seed) % INT32_MAX);
		bool ns = prng_next(&seed) & 1;
		char nsline[64] = "";
		int m;

		for (int i = 0; i < 4; i++)
			uid[i] = (unsigned)prng_next(&seed);
		if (ns) /* outermost namespace first, the innermost last */
			snprintf(nsline, sizeof(nsline), "NStgid:\t%d\t%d\n", tgid, nstgid);
		m = snprintf(status, sizeof(status),
			     "Name:\t%s\nUmask:\t0022\nState:\t%c (x)\nTgid:\t%d\nNgid:\t0\n%s"
			     "Pid:\t%d\nPPid:\t1\nTracerPid:\t0\nUid:\t%u\t%u\t%u\t%u\n"
			     "Gid:\t0\t0\t0\t0\nThreads:\t%u\n",
			     comm, state, tgid, nsline, tgid, uid[0], uid[1], uid[2], uid[3],
			     (unsigned)(v[0] % 1000) + 1);
		FUZZ_CHECK(m > 0 && (size_t)m < sizeof(status), "snprintf");
		r = procinfo_status(status, (size_t)m, &s);
		FUZZ_CHECK(r == 0, "status of a valid text (comm '%s'): %d", comm, r);
		FUZZ_CHECK(!strcmp(s.comm, comm) && s.state == state && s.tgid == tgid &&
			       s.ruid == uid[0] && s.euid == uid[1] && s.suid == uid[2] &&
			       s.fsuid == uid[3],
			   "status (comm '%s'): comm '%s' state %c tgid %d", comm, s.comm, s.state,
			   s.tgid);
		FUZZ_CHECK(s.nstgid == (ns ? nstgid : tgid), "status nstgid %d, expected %d",
			   s.nstgid, ns ? nstgid : tgid);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fuzz_hash(data, size);
	size_t cut = size ? (size_t)(h % (size + 1)) : 0;

	parse_both(data, size);
	parse_both(data, cut);
	parse_both(data + cut, size - cut);
	check_synth(data, size, h);
	return 0;
}
