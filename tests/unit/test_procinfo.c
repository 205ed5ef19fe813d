// SPDX-License-Identifier: GPL-2.0-only
/* test_procinfo.c: the /proc/PID/status and /proc/PID/stat parsers (daemon/lib/procinfo.c), on this
 * process's real files and on texts a hostile comm or a cut read could produce. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "kprof/procinfo.h"

static size_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, cap - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	return n;
}

static void on_signal(int sig)
{
	(void)sig;
}

static void test_self(void **state)
{
	char buf[8192];
	struct procinfo_status s;
	struct procinfo_stat t;
	size_t n;

	(void)state;
	/* A comm with the characters that break naive parsers. */
	prctl(PR_SET_NAME, "a) b (c) 1 2", 0, 0, 0);
	signal(SIGQUIT, on_signal);
	signal(SIGUSR2, SIG_IGN);
	n = slurp("/proc/self/status", buf, sizeof(buf));
	assert_int_equal(procinfo_status(buf, n, &s), 0);
	assert_int_equal(s.tgid, getpid());
	assert_int_equal(s.ruid, getuid());
	assert_int_equal(s.euid, geteuid());
	assert_int_equal(s.rgid, getgid());
	assert_int_equal(s.egid, getegid());
	/* SigCgt has the signals with a handler: not the ignored ones. */
	assert_true(s.sigcgt & (1ULL << (SIGQUIT - 1)));
	assert_false(s.sigcgt & (1ULL << (SIGUSR2 - 1)));
	signal(SIGQUIT, SIG_DFL);
	assert_string_equal(s.comm, "a) b (c) 1 2");
	assert_int_equal(s.state, 'R');
	n = slurp("/proc/self/stat", buf, sizeof(buf));
	assert_int_equal(procinfo_stat(buf, n, &t), 0);
	assert_int_equal(t.state, 'R');
	assert_true(t.start_ticks > 0);
}

static void test_namespaces_and_cuts(void **state)
{
	static const char status[] = "Name:\tnode\nUmask:\t0022\nState:\tZ (zombie)\nTgid:\t4242\n"
				     "NStgid:\t4242\t17\t1\nPid:\t4242\n"
				     "Uid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n"
				     "Threads:\t3\nSigCgt:\t0000000100004004\n"
				     "CapPrm:\t00000000000000c0\n";
	static const char stat[] = "4242 (x) y) R 1 2 3 34817 5 6 7 8 9 10 11 12 13 14 15 16 17 "
				   "18 987654 20\n";
	struct procinfo_status s;
	struct procinfo_stat t;

	(void)state;
	assert_int_equal(procinfo_status(status, sizeof(status) - 1, &s), 0);
	assert_int_equal(s.nstgid, 1);
	assert_int_equal(s.ns_levels, 3);
	assert_int_equal(s.ns_tgid[0], 4242);
	assert_int_equal(s.ns_tgid[1], 17);
	assert_int_equal(s.ns_tgid[2], 1);
	assert_int_equal(s.state, 'Z');
	assert_int_equal(s.ruid, 1000);
	assert_int_equal(s.euid, 0);
	assert_int_equal(s.suid, 0);
	assert_int_equal(s.threads, 3);
	assert_int_equal(s.rgid, 1000);
	assert_int_equal(s.egid, 1000);
	assert_int_equal(s.sigcgt, 0x100004004ULL);
	assert_int_equal(s.capprm, 0xc0); /* CAP_SETGID and CAP_SETUID */
	assert_int_equal(procinfo_stat(stat, sizeof(stat) - 1, &t), 0);
	assert_int_equal(t.state, 'R');
	assert_int_equal(t.tty_nr, 34817);
	assert_int_equal(t.utime, 11);
	assert_int_equal(t.stime, 12);
	assert_int_equal(t.start_ticks, 987654);
	/* Every cut of either text: an error or the same answer, never a read past it. */
	for (size_t i = 0; i < sizeof(status) - 1; i++) {
		int r = procinfo_status(status, i, &s);

		assert_true(r == 0 || r == -EBADMSG);
	}
	for (size_t i = 0; i < sizeof(stat) - 1; i++) {
		int r = procinfo_stat(stat, i, &t);

		assert_true(r == -EBADMSG || (r == 0 && t.start_ticks > 0));
	}
	assert_int_equal(procinfo_status("Name:\tx\nState:\tR\nTgid:\t1\nUid:\t1\t2\t3\n", 36, &s),
			 -EBADMSG);
	assert_int_equal(
	    procinfo_status("Name:\tx\nState:\tR\nTgid:\t-1\nUid:\t1\t2\t3\t4\n", 39, &s),
	    -EBADMSG);
	assert_int_equal(procinfo_stat("1 (x) R 99999999999999999999 2", 30, &t), -EBADMSG);
	/* No CapPrm line: any capability may be held. */
	assert_int_equal(
	    procinfo_status("Name:\tx\nState:\tR\nTgid:\t1\nUid:\t1\t2\t3\t4\n", 38, &s), 0);
	assert_true(s.capprm == UINT64_MAX);
	/* SigCgt: hex digits only, at most 64 bits. */
	assert_int_equal(
	    procinfo_status("Name:\tx\nState:\tR\nTgid:\t1\nUid:\t1\t2\t3\t4\nSigCgt:\t00g\n", 50,
			    &s),
	    -EBADMSG);
	assert_int_equal(procinfo_status("Name:\tx\nState:\tR\nTgid:\t1\nUid:\t1\t2\t3\t4\n"
					 "SigCgt:\t00000000000000001\n",
					 64, &s),
			 -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_self),
	    cmocka_unit_test(test_namespaces_and_cuts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
