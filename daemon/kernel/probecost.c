// SPDX-License-Identifier: GPL-2.0-only
/* probecost.c: measure what one probe hit costs on this host.
 *
 * What a uprobe or a hardware breakpoint costs the thread that hits it depends on the host: on
 * bare metal a debug exception is a microsecond, on a VM each one is a VM exit (16 us here), and
 * neither shows as "system" time reliably. So kprofd measures it, once, when a trace first
 * needs it: a forked child of kprofd calls a small function PROBECOST_CALLS times per round,
 * its CPU time (schedstat, ns) read around each round, rounds alternating without and with the
 * probe on the function's entry (the same BPF program a trace uses; the child is no trace, so
 * the program returns early). The median of the rounds' (probed - bare) / calls is the cost
 * per hit (lib/pcost.c), kept for the life of kprofd. CPU time, not wall time: a loaded host
 * delays the child but does not make its rounds cost more CPU.
 * Exact mode's probes (PROBECOST_CALL) are measured as they are used: a uprobe with kp_call_enter
 * at the entry of a function that begins as JIT code does (push rbp, which the kernel emulates:
 * one trap) and a uretprobe with kp_call_return, two hits a call, with an epoch open for the
 * child so that they number its events as a target's; their records go into the ring buffer as
 * a target's do (kprofd drops them: the child is no target), so fewer calls a round keep them
 * well inside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include "kprof/cleanup.h"
#include "kprof/pcost.h"
#include "kprof/procmaps.h"
#include "kernel/loader.h"
#include "os/clock.h"
#include "os/log.h"
#include "kernel/probecost.h"
#include "os/procfs.h"

#define PROBECOST_ROUNDS 3

static const unsigned calls_per_round[PROBECOST_NR] = {
    [PROBECOST_UPROBE] = 4000, [PROBECOST_HWBP] = 1500, [PROBECOST_CALL] = 1000};
static uint64_t cost_ns[PROBECOST_NR];
/* When each kind was last measured (CLOCK_MONOTONIC, 0: never). A measure that failed (a busy
 * host's noise: the probed rounds no costlier than the bare ones) is tried again, at most every
 * PROBECOST_RETRY_NS, instead of leaving kprofd without slowdowns for its whole life. */
#define PROBECOST_RETRY_NS (10 * 1000000000ULL)
static uint64_t tried_ns[PROBECOST_NR];
/* The last measure's breakpoint was on the CPU while the child called its function, and
 * counted no hit: this host's debug traps do not reach its guests' kernels (some hypervisors
 * do not pass them), so no hardware breakpoint can count anything. */
static bool hwbp_silent;
static unsigned hwbp_silent_calls;

/* What a silent breakpoint means, for the log and for the request refused. */
static void silent_why(char *buf, size_t len)
{
	snprintf(buf, len,
		 "hardware breakpoints do not fire on this host: kprofd's test breakpoint on a "
		 "function called %u times counted no hit (a hypervisor that does not pass debug "
		 "traps to its guests; perf's mem:ADDR:x events count nothing either), so code "
		 "outside files cannot be traced here",
		 hwbp_silent_calls);
}

const char *probecost_name(enum probecost_kind kind)
{
	return kind == PROBECOST_HWBP	? "hardware breakpoint"
	       : kind == PROBECOST_CALL ? "call probe"
					: "uprobe";
}

/* The function the child calls, its entry the probe's site. Written out, because what a uprobe
 * costs depends on the instruction under it: the kernel emulates a few (push, jmp, call, nop)
 * with one trap, and steps the others out of line, a second trap (a debug exception: on a VM a
 * VM exit, 0.45 us against 14 us here). Most blocks a path trace probes start with an
 * instruction that is stepped, as this mov is, whatever the compiler's flags. */
void probecost_spot(volatile uint64_t *x);
__asm__(".text\n"
	".globl probecost_spot\n"
	".type probecost_spot, @function\n"
	"probecost_spot:\n"
	"\tmovq (%rdi), %rax\n"
	"\taddq $1, %rax\n"
	"\tmovq %rax, (%rdi)\n"
	"\tret\n"
	".size probecost_spot, .-probecost_spot\n");

/* Exact mode's site: a function entered as JIT code is (push rbp: emulated, one trap), left by
 * its ret (the return probe's). */
void probecost_call_spot(volatile uint64_t *x);
__asm__(".text\n.globl probecost_call_spot\n.type probecost_call_spot, @function\n"
	"probecost_call_spot:\n\tpushq %rbp\n\tmovq %rsp, %rbp\n"
	"\taddq $1, (%rdi)\n\tpopq %rbp\n\tret\n"
	".size probecost_call_spot, .-probecost_call_spot\n");

/* The child: a round of n calls of fn for each byte read, a byte written after it; ends with
 * its parent or at EOF. */
static _Noreturn void child_main(int cmd, int ack, unsigned n, void (*fn)(volatile uint64_t *))
{
	volatile uint64_t x = 0;
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (read(cmd, &c, 1) == 1) {
		for (unsigned i = 0; i < n; i++)
			fn(&x);
		if (write(ack, &c, 1) != 1)
			break;
	}
	_exit(0);
}

struct child {
	pid_t pid;
	int cmd, ack;
};

static int child_start(struct child *ch, unsigned n, void (*fn)(volatile uint64_t *))
{
	int a[2], b[2];

	if (pipe2(a, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(b, O_CLOEXEC) < 0) {
		int e = -errno;

		close(a[0]), close(a[1]);
		return e;
	}
	ch->pid = fork();
	if (ch->pid == 0)
		child_main(a[0], b[1], n, fn);
	close(a[0]);
	close(b[1]);
	ch->cmd = a[1];
	ch->ack = b[0];
	if (ch->pid < 0) {
		int e = -errno;

		close(ch->cmd), close(ch->ack);
		return e;
	}
	return 0;
}

static void child_end(struct child *ch)
{
	close(ch->cmd);
	close(ch->ack);
	kill(ch->pid, SIGKILL);
	waitpid(ch->pid, NULL, 0);
}

/* One round: the child's CPU time for it, ns; 0 on failure. */
static uint64_t child_round(const struct child *ch)
{
	uint64_t t0, t1;
	char c = 'r';

	if (procfs_cpu_ns(ch->pid, &t0) < 0 || write(ch->cmd, &c, 1) != 1 ||
	    read(ch->ack, &c, 1) != 1 || procfs_cpu_ns(ch->pid, &t1) < 0)
		return 0;
	return t1 > t0 ? t1 - t0 : 0;
}

/* A breakpoint on the child's probecost_spot (the same address: a fork), running prog_fd. */
static int hwbp_on(pid_t pid, int prog_fd)
{
	struct perf_event_attr a = {
	    .type = PERF_TYPE_BREAKPOINT,
	    .size = sizeof(a),
	    .bp_type = HW_BREAKPOINT_X,
	    .bp_addr = (uint64_t)(uintptr_t)probecost_spot,
	    .bp_len = sizeof(long),
	    .sample_period = prog_fd >= 0 ? 1 : 0,
	    .read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	    .exclude_kernel = 1,
	    .exclude_hv = 1,
	};
	int fd = syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (prog_fd >= 0 && ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* A uprobe (ret: a uretprobe) running prog on the child's fn, in kprofd's file. */
static struct bpf_link *uprobe_on(struct loader *l, struct bpf_program *prog, bool ret, pid_t pid,
				  void (*fn)(volatile uint64_t *), char *why, size_t whylen)
{
	struct procmaps *pm = NULL;
	const struct procmaps_entry *m;
	struct bpf_link *lk = NULL;
	uint64_t addr = (uint64_t)(uintptr_t)fn;

	if (procmaps_read_pid(getpid(), &pm, why, whylen) < 0)
		return NULL;
	m = procmaps_find(pm, addr);
	if (!m || m->path[0] != '/')
		snprintf(why, whylen, "kprofd's code is not in a file");
	else
		lk = loader_uprobe_attach(l, ret, prog, pid, m->path, addr - m->start + m->offset,
					  addr, 0);
	if (m && m->path[0] == '/' && !lk)
		snprintf(why, whylen, "cannot attach a %s: %s", ret ? "uretprobe" : "uprobe",
			 strerror(errno));
	procmaps_free(pm);
	return lk;
}

/* The probes of kind on the child (lk: up to two links; fd: a breakpoint's): 0, or -errno with
 * why. */
static int probes_on(struct loader *l, enum probecost_kind kind, pid_t pid, struct bpf_link **lk,
		     int *fd, char *why, size_t whylen)
{
	if (kind == PROBECOST_HWBP) {
		*fd = hwbp_on(pid, loader_hwbp_prog_fd(l));
		if (*fd < 0)
			snprintf(why, whylen, "cannot open a breakpoint: %s", strerror(-*fd));
		return *fd < 0 ? *fd : 0;
	}
	if (kind == PROBECOST_UPROBE) {
		lk[0] = uprobe_on(l, loader_path_prog(l), false, pid, probecost_spot, why, whylen);
		return lk[0] ? 0 : -EIO;
	}
	lk[0] =
	    uprobe_on(l, loader_call_prog(l, false), false, pid, probecost_call_spot, why, whylen);
	lk[1] = lk[0] ? uprobe_on(l, loader_call_prog(l, true), true, pid, probecost_call_spot, why,
				  whylen)
		      : NULL;
	return lk[1] ? 0 : -EIO;
}

static int measure(struct loader *l, enum probecost_kind kind, uint64_t *ret, char *why,
		   size_t whylen)
{
	struct pcost_round rounds[PROBECOST_ROUNDS] = {{0}};
	unsigned n = calls_per_round[kind];
	struct child ch;
	bool epoch = false;
	int r = child_start(&ch, n, kind == PROBECOST_CALL ? probecost_call_spot : probecost_spot);

	if (r < 0) {
		snprintf(why, whylen, "cannot start the child: %s", strerror(-r));
		return r;
	}
	/* The whole of a call probe's work: with an epoch open its events are numbered per thread
	 * as a target's are (calls.bpf.c). */
	if (kind == PROBECOST_CALL)
		epoch = loader_calls_open(l, ch.pid, &(uint32_t){0}) == 0;
	child_round(&ch); /* warm: pages in, caches */
	for (size_t i = 0; i < PROBECOST_ROUNDS && r == 0; i++) {
		struct bpf_link *lk[2] = {NULL, NULL};
		int fd = -1;

		rounds[i].base_ns = child_round(&ch);
		r = probes_on(l, kind, ch.pid, lk, &fd, why, whylen);
		if (r == 0)
			rounds[i].probed_ns = child_round(&ch);
		rounds[i].hits = kind == PROBECOST_CALL ? 2 * n : n; /* entry and return */
		/* The breakpoint counts its hits: 0 if it missed. */
		if (fd >= 0) {
			uint64_t v[3]; /* count, time enabled, time running */

			if (read(fd, v, sizeof(v)) == sizeof(v)) {
				rounds[i].hits = v[0];
				/* The round ran (the child called it n times) with the
				 * breakpoint on the CPU. */
				if (v[0] == 0 && v[2] > 0 && r == 0 && rounds[i].probed_ns) {
					hwbp_silent = true;
					hwbp_silent_calls = n;
					silent_why(why, whylen);
					r = -EOPNOTSUPP;
				} else if (v[0] > 0) {
					hwbp_silent = false;
				}
			}
			close(fd);
		}
		bpf_link__destroy(lk[0]);
		bpf_link__destroy(lk[1]);
	}
	if (epoch)
		loader_calls_close(l, ch.pid);
	child_end(&ch);
	if (r == 0 && (r = pcost_per_hit(rounds, PROBECOST_ROUNDS, ret)) < 0)
		snprintf(why, whylen,
			 "the probed rounds did not cost more than the bare ones (%" PRIu64
			 " ns bare, %" PRIu64 " ns probed, %" PRIu64 " hits in the last)",
			 rounds[PROBECOST_ROUNDS - 1].base_ns,
			 rounds[PROBECOST_ROUNDS - 1].probed_ns, rounds[PROBECOST_ROUNDS - 1].hits);
	return r;
}

uint64_t probecost_hit_ns(struct loader *l, enum probecost_kind kind)
{
	char why[512] = "";
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (kind >= PROBECOST_NR)
		return 0;
	if (tried_ns[kind] && (cost_ns[kind] || now - tried_ns[kind] < PROBECOST_RETRY_NS))
		return cost_ns[kind];
	tried_ns[kind] = now;
	/* A second measure at once when the first drowned in a busy host's noise. */
	int r = measure(l, kind, &cost_ns[kind], why, sizeof(why));

	if (r < 0 && r != -EOPNOTSUPP)
		r = measure(l, kind, &cost_ns[kind], why, sizeof(why));
	if (r < 0) {
		cost_ns[kind] = 0;
		log_warn(
		    "cannot measure what a %s hit costs on this host: %s; slowdowns not estimated",
		    probecost_name(kind), why);
		return 0;
	}
	log_info("a %s hit costs %.2f us of CPU time on this host (measured)", probecost_name(kind),
		 cost_ns[kind] / 1000.0);
	return cost_ns[kind];
}

int probecost_hwbp_check(struct loader *l, char *err, size_t errlen)
{
	probecost_hit_ns(l, PROBECOST_HWBP); /* measures, once or after PROBECOST_RETRY_NS */
	if (!hwbp_silent)
		return 0;
	silent_why(err, errlen);
	return -EOPNOTSUPP;
}

int probecost_budget(struct loader *l, enum probecost_kind kind, double asked, double dflt,
		     struct probecost_budget *b, char *err, size_t errlen)
{
	if (asked > 0 && !(asked >= 1.01 && asked <= PCOST_MAX_SLOWDOWN)) {
		snprintf(err, errlen, "--max-slowdown %g is out of range: 1.01 to %g, or 0 (none)",
			 asked, PCOST_MAX_SLOWDOWN);
		return -EINVAL;
	}
	b->hit_ns = probecost_hit_ns(l, kind);
	b->max_default = asked == 0 && dflt > 1;
	b->max = asked > 0 ? asked : b->max_default ? dflt : 0;
	if (!b->hit_ns && b->max_default)
		b->max = 0;
	if (b->max && !b->hit_ns) {
		snprintf(
		    err, errlen,
		    "--max-slowdown needs the cost of a probe hit, which could not be measured "
		    "on this host (see kprofd's log)");
		return -EOPNOTSUPP;
	}
	return 0;
}
