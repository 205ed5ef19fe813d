// SPDX-License-Identifier: GPL-2.0-only
/* record.c: kprofctl record: run a command sampled from its first instruction, then write its
 * profile.
 *
 * The command is forked and held before its exec (it waits on a pipe), kprofd attaches it under
 * its pid (the caller's own process, so any user may), and only then is it let go: the exec and
 * everything after it are sampled. While it runs kprofctl ignores SIGINT and SIGQUIT (the
 * terminal sends them to the command too, which decides) and passes SIGTERM and SIGHUP on. When
 * it has exited, kprofctl waits until kprofd has ended the target (its exit record, the last
 * drain), detaches what is left of its followed children (followed unless --no-children, as
 * perf record inherits; as perf record stops at the command's exit), and writes the profile:
 * the command's alone, or merged with its children's (functions and thread names concatenated,
 * every stack kept with its thread and a pid label; the mappings of the busiest process first,
 * so that the program that did the work, not a wrapper shell, names the profile). The exit code is
 * the command's (128 + N after signal N, 127 if it could not be run, as shells do).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "kprof/saved.h"
#include "client.h"
#include "export.h"
#include "kprof/merge.h"
#include "group.h"
#include "record.h"
#include "render.h"
#include "render_offcpu.h"
#include "render_profile.h"

#define RECORD_END_WAIT_MS 10000 /* for kprofd to see the exit */
#define RECORD_MAX_PROCS 1024	 /* processes merged into one profile */

static volatile sig_atomic_t child_pid;

static void pass_on(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* Whether cmd can be run as execvp would find it: 0, -ENOENT or -EACCES. */
static int find_command(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[4096];
	int err = -ENOENT;

	if (!cmd[0])
		return -ENOENT;
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0 ? 0 : -errno;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		struct stat st;

		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)n ? (int)n : 1, n ? path : ".",
			     cmd) < (int)sizeof(buf) &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(buf, X_OK) == 0)
				return 0;
			err = -EACCES;
		}
		path += n + (path[n] == ':');
	}
	return err;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int list_all(const struct record_opts *o, Kprof__Reply **rep)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ListRequest lr = KPROF__LIST_REQUEST__INIT;

	lr.all = true;
	req.body_case = KPROF__REQUEST__BODY_LIST;
	req.list = &lr;
	return o->call(&req, rep);
}

/* The recorded processes, from list --all: the command (pid, attached at since or later) and,
 * with --children, every target whose parent is one of them. Sessions and pids in out. */
struct proc_ref {
	uint32_t pid, session;
	bool attached;
};

static size_t tree_of(const Kprof__ListReply *l, uint32_t pid, uint64_t since, struct proc_ref *out,
		      size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n_targets && n < max; i++) {
		const Kprof__Target *t = l->targets[i];

		if (t->pid == pid && t->attached_at_ns >= since && !t->parent)
			out[n++] = (struct proc_ref){
			    t->pid, t->session,
			    t->state == KPROF__TARGET_STATE__TARGET_STATE_ATTACHED};
	}
	if (n > 1)
		n = 1; /* the newest would be ambiguous: the list is oldest first per pid */
	/* Children come after their parent was seen: repeat until nothing is added. */
	for (bool more = n > 0; more && n < max;) {
		more = false;
		for (size_t i = 0; i < l->n_targets && n < max; i++) {
			const Kprof__Target *t = l->targets[i];
			bool known = false, parent = false;

			/* A child without samples adds nothing (and kprofd drops it). */
			if (!t->parent || t->attached_at_ns < since || !t->samples)
				continue;
			for (size_t j = 0; j < n; j++) {
				known |= out[j].pid == t->pid && out[j].session == t->session;
				parent |= out[j].pid == t->parent;
			}
			if (known || !parent)
				continue;
			out[n++] = (struct proc_ref){
			    t->pid, t->session,
			    t->state == KPROF__TARGET_STATE__TARGET_STATE_ATTACHED};
			more = true;
		}
	}
	return n;
}

/* Wait for the command's target to end in kprofd, then detach the children still running.
 * The processes recorded go to procs; returns their number (0: the command's target is not
 * found), or the exit code of a failed request as a negative number. */
static int settle(const struct record_opts *o, uint32_t pid, uint64_t since, struct proc_ref *procs,
		  size_t max)
{
	Kprof__Reply *rep = NULL;
	size_t n = 0;
	int r;

	for (unsigned waited = 0;; waited += 20) {
		if ((r = list_all(o, &rep)))
			return -r;
		n = tree_of(rep->list, pid, since, procs, max);
		kprof__reply__free_unpacked(rep, NULL);
		if (!n || !procs[0].attached)
			break;
		if (waited >= RECORD_END_WAIT_MS) {
			fprintf(stderr,
				"kprofctl record: kprofd has not seen pid %u exit after %u s; "
				"writing the profile as it is\n",
				pid, RECORD_END_WAIT_MS / 1000);
			break;
		}
		sleep_ms(20);
	}
	for (size_t i = 0; i < n; i++) {
		Kprof__Request req = KPROF__REQUEST__INIT;
		Kprof__DetachRequest dr = KPROF__DETACH_REQUEST__INIT;

		if (!procs[i].attached)
			continue;
		dr.pid = procs[i].pid;
		req.body_case = KPROF__REQUEST__BODY_DETACH;
		req.detach = &dr;
		if (o->call(&req, &rep) == 0)
			kprof__reply__free_unpacked(rep, NULL);
	}
	return (int)n;
}

static int export_of(const struct record_opts *o, const struct proc_ref *p, Kprof__Reply **rep)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ExportRequest er = KPROF__EXPORT_REQUEST__INIT;

	group_export_request(&req, &er, p->pid, p->session, 0, 0);
	er.off_cpu = o->off_cpu;
	return o->call(&req, rep);
}

/* --format report: each process's report in turn. 0, or an exit code. */
static int write_report(const struct record_opts *o, const struct proc_ref *procs, size_t n)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ReportRequest rr = KPROF__REPORT_REQUEST__INIT;
	_cleanup_fclose_ FILE *f = NULL;
	Kprof__Reply *rep = NULL;
	int r = 0;

	f = strcmp(o->output, "-") ? fopen(o->output, "we") : NULL;
	if (strcmp(o->output, "-") && !f) {
		fprintf(stderr, "kprofctl record: %s: %s\n", o->output, strerror(errno));
		return KPROFCTL_EXIT_ERROR;
	}
	for (size_t i = 0; i < n && !r; i++) {
		rr.pid = procs[i].pid;
		rr.session = procs[i].session;
		rr.top = o->top;
		req.body_case = KPROF__REQUEST__BODY_REPORT;
		req.report = &rr;
		if ((r = o->call(&req, &rep)))
			break;
		render_report(f ? f : stdout, rep->report, false, o->full_names);
		kprof__reply__free_unpacked(rep, NULL);
		if (o->off_cpu) { /* its off-CPU time, after its samples */
			rr.off_cpu = true;
			if ((r = o->call(&req, &rep)))
				break;
			fputc('\n', f ? f : stdout);
			render_offcpu_report(f ? f : stdout, rep->report, NULL, o->top, false);
			kprof__reply__free_unpacked(rep, NULL);
			rr.off_cpu = false;
		}
	}
	if (!r && f && fflush(f)) {
		fprintf(stderr, "kprofctl record: %s: %s\n", o->output, strerror(errno));
		r = KPROFCTL_EXIT_ERROR;
	}
	return r;
}

/* The merged mappings with those of the process with the most samples first: pprof names the
 * profile after the first executable (a wrapper shell's otherwise). 0 or -ENOMEM. */
static int busiest_first(struct merged *m, Kprof__SavedProfile *const *sps, size_t n)
{
	size_t best = 0, off = 0, k = 0, total = m->sp.n_mappings;
	_cleanup_free_ Kprof__SavedMapping **v = calloc(total + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 1; i < n; i++)
		if (sps[i]->target->samples > sps[best]->target->samples)
			best = i;
	for (size_t i = 0; i < best; i++)
		off += sps[i]->n_mappings;
	for (size_t j = 0; j < sps[best]->n_mappings && off + j < total; j++)
		v[k++] = m->sp.mappings[off + j];
	for (size_t j = 0; j < total; j++)
		if (j < off || j >= off + sps[best]->n_mappings)
			v[k++] = m->sp.mappings[j];
	memcpy(m->sp.mappings, v, total * sizeof(*v));
	return 0;
}

/* No sample at all: say why it may be. */
static void empty_note(const struct record_opts *o, Kprof__SavedProfile *const *sps, size_t n)
{
	uint32_t forked = sps[0]->target->children_followed;

	if (!o->children)
		fprintf(stderr,
			"kprofctl record: no samples: with --no-children only the command itself "
			"is sampled, not the processes it starts\n");
	else if (forked || n > 1)
		fprintf(stderr,
			"kprofctl record: no samples: the command and the %u process%s it "
			"started ran too briefly to be sampled (raise --freq)\n",
			forked, forked == 1 ? "" : "es");
	else
		fprintf(stderr,
			"kprofctl record: no samples: the command ran too briefly to be sampled "
			"(raise --freq)\n");
}

/* Write the profile of the processes recorded. 0, or an exit code. */
static int write_profile(const struct record_opts *o, const struct proc_ref *procs, size_t n,
			 double cpu_s)
{
	Kprof__Reply *reps[RECORD_MAX_PROCS] = {0};
	Kprof__SavedProfile *sps[RECORD_MAX_PROCS];
	struct merged m = {0};
	size_t got = 0;
	uint64_t samples = 0;
	int r = 0;

	if (!strcmp(o->format, "report"))
		return write_report(o, procs, n);
	for (size_t i = 0; i < n; i++) {
		if ((r = export_of(o, &procs[i], &reps[got])))
			goto out;
		sps[got] = reps[got]->export->profile;
		if (!sps[got] || !sps[got]->target) {
			kprof__reply__free_unpacked(reps[got], NULL);
			reps[got] = NULL;
			continue;
		}
		samples += sps[got]->target->samples;
		got++;
	}
	if (!got) {
		fprintf(stderr, "kprofctl record: kprofd kept no profile of pid %u\n",
			procs[0].pid);
		r = KPROFCTL_EXIT_ERROR;
		goto out;
	}
	if (got > 1 && (merge_profiles(sps, got, &m) < 0 || busiest_first(&m, sps, got) < 0)) {
		fprintf(stderr, "kprofctl record: out of memory\n");
		r = KPROFCTL_EXIT_ERROR;
		goto out;
	}
	if (!samples)
		empty_note(o, sps, got);
	if (got > 1 && o->off_cpu)
		fprintf(stderr,
			"kprofctl record: %zu processes: their CPU profiles merged, the "
			"off-CPU time of the command's alone (kprofctl export PID --off-cpu "
			"--session N has each's)\n",
			got);
	if (export_offcpu(got > 1 ? &m.sp : sps[0], o->off_cpu ? reps[0]->export->off_cpu : NULL,
			  o->format, o->output) < 0) {
		r = KPROFCTL_EXIT_ERROR;
		goto out;
	}
	fprintf(stderr,
		"kprofctl record: wrote %s (%s, %llu samples of %zu process%s; the command ran "
		"%.2f s on CPU)\n",
		strcmp(o->output, "-") ? o->output : "the profile to standard output", o->format,
		(unsigned long long)samples, got, got == 1 ? "" : "es", cpu_s);
out:
	merge_free(&m);
	for (size_t i = 0; i < got; i++)
		kprof__reply__free_unpacked(reps[i], NULL);
	return r;
}

/* In the child: held until kprofd samples it; the pipes close at the exec. */
static _Noreturn void child_exec(int go_r, int err_w, char **argv)
{
	char go;
	int err;

	if (read(go_r, &go, 1) != 1)
		_exit(127); /* kprofctl gave up: nothing is run */
	execvp(argv[0], argv);
	err = errno;
	if (write(err_w, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(err == ENOENT ? 127 : 126);
}

/* Ask kprofd to attach the held child. 0, or an exit code. */
static int attach_child(const struct record_opts *o, pid_t pid)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__AttachRequest ar = KPROF__ATTACH_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	int r;

	ar.pid = pid;
	ar.freq_hz = o->freq;
	ar.children = o->children;
	ar.no_jvm_map = o->no_jvm_map;
	ar.off_cpu = o->off_cpu;
	ar.from_exec = true; /* the held child is kprofctl until its exec */
	req.body_case = KPROF__REQUEST__BODY_ATTACH;
	req.attach = &ar;
	r = o->call(&req, &rep);
	if (!r)
		kprof__reply__free_unpacked(rep, NULL);
	return r;
}

/* The terminal's SIGINT and SIGQUIT are the command's to handle; SIGTERM and SIGHUP pass on. */
static void hand_signals(void)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = pass_on};

	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGQUIT, &ign, NULL);
	sigaction(SIGTERM, &fwd, NULL);
	sigaction(SIGHUP, &fwd, NULL);
}

/* wait4 through EINTR: *cpu_s the CPU time (user and system) of the child and the children it
 * waited for. 0, or -1 after a message. */
static int wait_child(pid_t pid, const char *name, int *status, double *cpu_s)
{
	struct rusage ru = {0};

	while (wait4(pid, status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "kprofctl record: waiting for %s: %s\n", name,
				strerror(errno));
			return -1;
		}
	}
	*cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		 ru.ru_stime.tv_usec / 1e6;
	return 0;
}

/* After the command's exit (code, cpu_s of CPU time): settle its processes and write their
 * profile. */
static int settle_and_write(const struct record_opts *o, pid_t pid, uint64_t since, int code,
			    double cpu_s)
{
	struct proc_ref procs[RECORD_MAX_PROCS];
	int r;

	r = settle(o, pid, since, procs, o->children ? ARRAY_SIZE(procs) : 1);
	if (r <= 0) {
		if (r == 0)
			fprintf(stderr, "kprofctl record: kprofd kept no profile of pid %d\n", pid);
		return code ? code : r ? -r : KPROFCTL_EXIT_ERROR;
	}
	r = write_profile(o, procs, (size_t)r, cpu_s);
	return code ? code : r;
}

int record_run(const struct record_opts *o, char **argv)
{
	_cleanup_close_ int go_r = -1, go_w = -1, err_r = -1, err_w = -1;
	int fds[2], status, r, exec_err = 0, code;
	double cpu_s = 0;
	uint64_t since;
	pid_t pid;

	r = find_command(argv[0]);
	if (r < 0) {
		fprintf(stderr, "kprofctl record: %s: %s\n", argv[0],
			r == -ENOENT ? "command not found" : strerror(-r));
		return r == -ENOENT ? 127 : 126;
	}
	if (pipe2(fds, O_CLOEXEC) < 0)
		goto sys;
	go_r = fds[0], go_w = fds[1];
	if (pipe2(fds, O_CLOEXEC) < 0)
		goto sys;
	err_r = fds[0], err_w = fds[1];
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		goto sys;
	if (pid == 0) {
		close(go_w);
		close(err_r);
		child_exec(go_r, err_w, argv);
	}
	child_pid = pid;
	close(go_r), go_r = -1;
	close(err_w), err_w = -1;
	since = (uint64_t)time(NULL) * 1000000000ull - 1000000000ull; /* a clock step's margin */
	r = attach_child(o, pid);
	if (r) { /* the command is not run: closing the pipe ends the child */
		close(go_w), go_w = -1;
		waitpid(pid, NULL, 0);
		return r;
	}
	hand_signals();
	if (write(go_w, "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go_w), go_w = -1;
	if (read(err_r, &exec_err, sizeof(exec_err)) == sizeof(exec_err))
		fprintf(stderr, "kprofctl record: cannot run %s: %s\n", argv[0],
			strerror(exec_err));
	if (wait_child(pid, argv[0], &status, &cpu_s) < 0)
		return KPROFCTL_EXIT_ERROR;
	child_pid = 0;
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (exec_err)
		return code;
	return settle_and_write(o, pid, since, code, cpu_s);
sys:
	fprintf(stderr, "kprofctl record: %s\n", strerror(errno));
	return KPROFCTL_EXIT_ERROR;
}
