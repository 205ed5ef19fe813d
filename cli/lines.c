// SPDX-License-Identifier: GPL-2.0-only
/* lines.c: kprofctl's side of the kprof-lines helper (cli/helper/kprof-lines.c; issue 32): resolves
 * the sampled leaf addresses of a pprof export to source lines and inlined frames, lazily, at
 * export time, never on kprofd's sample path.
 *
 * One helper process per ELF file (the mapping's file, or its separate debug file found by build
 * id under .build-id/ of $KPROF_DEBUG_DIR, the process's /usr/lib/debug or the host's; not by
 * .gnu_debuglink yet), started at the first address of that file and kept for
 * the export: the files' answers are cached per (build id or path) by that. The helper gets the
 * file as fd 3 (opened here, with kprofctl's own rights: a user resolves only files they can
 * read) and runs with no privileges: when kprofctl is root it becomes nobody (65534), no
 * supplementary groups; no_new_privs; RLIMIT_AS 1 GiB, RLIMIT_CPU 20 s, no core, no file
 * writes, 16 fds; it then installs its own seccomp filter. Each answer must come within
 * LINES_ANSWER_MS: a helper that is late, dies (a crash in libbfd on hostile DWARF) or answers
 * nonsense is killed, and a new one is started for the file's next address, at most
 * LINES_RESTARTS times; after that the file's addresses have no lines. What happened is counted
 * and said in the profile's comments (summary).
 *
 * lines_report (kprofctl report --lines) uses the same resolver: self samples per source line.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "lines.h"
#include "render.h"

#define LINES_MAX_FILES 256
#define LINES_ANSWER_MS 3000
#define LINES_START_MS 10000 /* opening a file: libbfd reads its headers and symbols */
#define LINES_RESTARTS 2
#define LINES_BUF 65536

struct lfile {
	char *key; /* build id or path */
	char *path;
	pid_t pid;
	int to, from;
	unsigned restarts;
	bool dead; /* no more lines from it */
};

struct lines {
	char helper[PATH_MAX];
	uint32_t pid;
	struct lfile files[LINES_MAX_FILES];
	size_t nfiles;
	uint64_t kills, failed_files;
	char buf[LINES_BUF];
	char summary[256];
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void stop(struct lines *l, struct lfile *f, bool kill_it)
{
	if (f->pid > 0) {
		if (kill_it) {
			kill(f->pid, SIGKILL);
			l->kills++;
		}
		close(f->to);
		close(f->from);
		waitpid(f->pid, NULL, 0);
	}
	f->pid = 0;
}

/* Reads up to "E\n" (or "R\n"/"X...\n" at start) within ms: length, or -1. */
static ssize_t read_answer(struct lines *l, struct lfile *f, unsigned ms, bool start)
{
	uint64_t end = mono_ms() + ms;
	size_t n = 0;

	for (;;) {
		struct pollfd p = {.fd = f->from, .events = POLLIN};
		uint64_t now = mono_ms();
		ssize_t r;

		if (now >= end || poll(&p, 1, (int)(end - now)) <= 0)
			return -1;
		r = read(f->from, l->buf + n, sizeof(l->buf) - 1 - n);
		if (r <= 0)
			return -1;
		n += r;
		l->buf[n] = 0;
		if (start && n >= 2 && l->buf[n - 1] == '\n')
			return l->buf[0] == 'R' ? (ssize_t)n : -1;
		if (!start && n >= 2 && !strcmp(l->buf + n - 2, "E\n") &&
		    (n == 2 || l->buf[n - 3] == '\n'))
			return n;
		if (n == sizeof(l->buf) - 1)
			return -1;
	}
}

/* Opens the debug file of build id bid under dir (a .build-id tree's parent), or -1. */
static int open_debug(const char *dir, const char *bid)
{
	char p[PATH_MAX];

	if ((size_t)snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", dir, bid, bid + 2) >=
	    sizeof(p))
		return -1;
	return open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

/* The file to read for m: its debug file by build id ($KPROF_DEBUG_DIR, the process's
 * /usr/lib/debug, the host's), else the file itself (through the process's root while it is
 * still there). */
static int open_elf(const struct lines *l, const Kprof__SavedMapping *m)
{
	char p[PATH_MAX];
	const char *bid = m->build_id ? m->build_id : "", *env = getenv("KPROF_DEBUG_DIR");
	int fd = -1;

	if (strlen(bid) > 2 && strlen(bid) <= 128 && strspn(bid, "0123456789abcdef") == strlen(bid)) {
		if (env && env[0])
			fd = open_debug(env, bid);
		if (fd < 0 && l->pid) {
			snprintf(p, sizeof(p), "/proc/%u/root/usr/lib/debug", l->pid);
			fd = open_debug(p, bid);
		}
		if (fd < 0)
			fd = open_debug("/usr/lib/debug", bid);
		if (fd >= 0)
			return fd;
	}
	if (!m->path || m->path[0] != '/')
		return -ENOENT;
	if (l->pid && (size_t)snprintf(p, sizeof(p), "/proc/%u/root%s", l->pid, m->path) < sizeof(p)) {
		fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0)
			return fd;
	}
	fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

static void child(const struct lines *l, int elf, int in, int out)
{
	struct rlimit as = {1UL << 30, 1UL << 30}, cpu = {20, 20}, zero = {0, 0}, nf = {16, 16};

	/* Above 3 first, so that no dup2 is onto itself (which would keep O_CLOEXEC). */
	elf = fcntl(elf, F_DUPFD_CLOEXEC, 10);
	in = fcntl(in, F_DUPFD_CLOEXEC, 10);
	out = fcntl(out, F_DUPFD_CLOEXEC, 10);
	if (elf < 0 || in < 0 || out < 0 || dup2(elf, 3) < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0)
		_exit(127);
	syscall(SYS_close_range, 4, ~0U, 0);
	if (setrlimit(RLIMIT_AS, &as) < 0 || setrlimit(RLIMIT_CPU, &cpu) < 0 ||
	    setrlimit(RLIMIT_CORE, &zero) < 0 || setrlimit(RLIMIT_FSIZE, &zero) < 0 ||
	    setrlimit(RLIMIT_NOFILE, &nf) < 0)
		_exit(127);
	if (getuid() == 0 || geteuid() == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(127);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(127);
	execl(l->helper, "kprof-lines", (char *)NULL);
	_exit(127);
}

static int start(struct lines *l, struct lfile *f, const Kprof__SavedMapping *m)
{
	_cleanup_close_ int elf = open_elf(l, m);
	int in[2], out[2];
	struct stat st;

	if (elf < 0)
		return elf;
	if (fstat(elf, &st) < 0 || !S_ISREG(st.st_mode)) /* a FIFO or device the target put there */
		return -EINVAL;
	if (pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	f->pid = fork();
	if (f->pid == 0)
		child(l, elf, in[0], out[1]);
	close(in[0]);
	close(out[1]);
	if (f->pid < 0) {
		close(in[1]);
		close(out[0]);
		f->pid = 0;
		return -EAGAIN;
	}
	f->to = in[1];
	f->from = out[0];
	if (read_answer(l, f, LINES_START_MS, true) < 0) {
		stop(l, f, true);
		return -EIO;
	}
	return 0;
}

static struct lfile *file_of(struct lines *l, const Kprof__SavedMapping *m)
{
	const char *key = m->build_id && m->build_id[0] ? m->build_id : m->path ? m->path : "";

	for (size_t i = 0; i < l->nfiles; i++)
		if (!strcmp(l->files[i].key, key))
			return &l->files[i];
	if (l->nfiles == LINES_MAX_FILES)
		return NULL;
	l->files[l->nfiles].key = strdup(key);
	if (!l->files[l->nfiles].key)
		return NULL;
	return &l->files[l->nfiles++];
}

/* Parses the answer in l->buf into frames: their count, or -EBADMSG. */
static int parse(struct lines *l, struct pprof_frame *fr, size_t max)
{
	char *save = NULL, *line;
	size_t n = 0;

	for (line = strtok_r(l->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *func, *file, *num, *end;
		unsigned long ln;

		if (!strcmp(line, "E"))
			return n;
		if (strncmp(line, "F\t", 2) || !(func = line + 2) || !(file = strchr(func, '\t')))
			return -EBADMSG;
		*file++ = 0;
		if (!(num = strchr(file, '\t')))
			return -EBADMSG;
		*num++ = 0;
		ln = strtoul(num, &end, 10);
		if (*end || ln > UINT32_MAX)
			return -EBADMSG;
		if (n < max)
			fr[n++] = (struct pprof_frame){.func = func, .file = file, .line = ln};
	}
	return -EBADMSG;
}

static int resolve(void *userdata, const Kprof__SavedMapping *m, uint64_t addr,
		   struct pprof_frame *fr, size_t max)
{
	struct lines *l = userdata;
	struct lfile *f = file_of(l, m);
	char req[32];
	int n, len;

	if (!f || f->dead)
		return -ENOENT;
	for (;;) {
		if (!f->pid && start(l, f, m) < 0)
			break;
		len = snprintf(req, sizeof(req), "0x%" PRIx64 "\n", addr);
		if (write(f->to, req, len) == len && read_answer(l, f, LINES_ANSWER_MS, false) >= 0 &&
		    (n = parse(l, fr, max)) >= 0)
			return n;
		stop(l, f, true); /* late, dead or nonsense: this address has no lines */
		if (++f->restarts > LINES_RESTARTS)
			break;
		return -EIO; /* the next address starts a new one */
	}
	f->dead = true;
	l->failed_files++;
	return -EIO;
}

static const char *summary(void *userdata)
{
	struct lines *l = userdata;

	snprintf(l->summary, sizeof(l->summary),
		 "kprof-lines (libbfd) on %zu files, %" PRIu64 " without lines, %" PRIu64
		 " helpers killed",
		 l->nfiles, l->failed_files, l->kills);
	return l->summary;
}

/* The helper: $KPROF_LINES, else kprof-lines beside kprofctl's own executable. */
static int find_helper(char *out, size_t size)
{
	const char *env = getenv("KPROF_LINES");
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && env[0]) {
		if ((size_t)snprintf(out, size, "%s", env) >= size)
			return -ENAMETOOLONG;
		return access(out, X_OK) == 0 ? 0 : -ENOENT;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -ENOENT;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	if ((size_t)snprintf(out, size, "%.*s/kprof-lines", (int)(size - 16), self) < size &&
	    access(out, X_OK) == 0)
		return 0;
	snprintf(out, size, "/usr/libexec/kprof/kprof-lines");
	return access(out, X_OK) == 0 ? 0 : -ENOENT;
}

int lines_new(uint32_t pid, struct lines **ret, struct pprof_lines *pl)
{
	struct lines *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	err = find_helper(l->helper, sizeof(l->helper));
	if (err < 0) {
		free(l);
		return err;
	}
	l->pid = pid;
	signal(SIGPIPE, SIG_IGN); /* a helper that died: its write fails with EPIPE */
	*pl = (struct pprof_lines){.resolve = resolve, .summary = summary, .userdata = l};
	*ret = l;
	return 0;
}

void lines_free(struct lines *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nfiles; i++) {
		stop(l, &l->files[i], false);
		free(l->files[i].key);
	}
	free(l);
}

struct lrow {
	char *key; /* "file\001line\001function\001inlined into" */
	uint64_t count;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct lrow *)a)->key, ((const struct lrow *)b)->key);
}

static int by_count(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->key, y->key);
}

/* The row key of leaf address la: its innermost frame, or its function without a line. */
static char *row_key(const Kprof__SavedProfile *sp, const Kprof__SavedLeafAddr *la,
		     struct pprof_lines *pl)
{
	struct pprof_frame fr[PPROF_MAX_INLINE];
	const Kprof__SavedFunction *fn = sp->functions[la->func];
	char *key = NULL;
	int n = 0;

	for (size_t i = 0; pl && i < sp->n_mappings; i++) {
		const Kprof__SavedMapping *m = sp->mappings[i];

		if (m->has_vaddr && la->address >= m->start && la->address < m->limit) {
			n = pl->resolve(pl->userdata, m, m->vaddr + (la->address - m->start), fr,
					PPROF_MAX_INLINE);
			break;
		}
	}
	if (n > 0 && fr[0].line)
		n = asprintf(&key, "%s\001%u\001%s\001%s", fr[0].file, fr[0].line,
			     fr[0].func[0] ? fr[0].func : fn->name, n > 1 ? fr[n - 1].func : "");
	else
		n = asprintf(&key, "\001\001%s\001", fn->name);
	return n < 0 ? NULL : key;
}

static void print_row(FILE *f, const struct lrow *r, uint64_t total, bool json, bool first)
{
	char *file = r->key, *line = strchr(file, 1), *func, *into;

	*line++ = 0;
	func = strchr(line, 1);
	*func++ = 0;
	into = strchr(func, 1);
	*into++ = 0;
	if (json) {
		fprintf(f, "%s{\"samples\":%" PRIu64 ",\"file\":", first ? "" : ",", r->count);
		render_json_string(f, file);
		fprintf(f, ",\"line\":%s,\"function\":", line[0] ? line : "0");
		render_json_string(f, func);
		fputs(",\"inlined_into\":", f);
		render_json_string(f, into);
		fputc('}', f);
		return;
	}
	fprintf(f, "%9" PRIu64 " %6.2f%%  ", r->count, total ? 100.0 * r->count / total : 0.0);
	if (file[0])
		fprintf(f, "%s:%s  %s", file, line, func);
	else
		fprintf(f, "[no line]  %s", func);
	if (into[0])
		fprintf(f, " (inlined into %s)", into);
	fputc('\n', f);
}

int lines_report(FILE *f, const Kprof__SavedProfile *sp, uint32_t top, bool json)
{
	_cleanup_free_ struct lrow *rows = calloc(sp->n_leaf_addrs + 1, sizeof(*rows));
	struct lines *l = NULL;
	struct pprof_lines pl;
	uint64_t total = 0, kept = 0;
	size_t n = 0, m = 0;
	int err = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < sp->n_stacks; i++)
		total += sp->stacks[i]->count;
	if (sp->n_leaf_addrs && lines_new(sp->target ? sp->target->pid : 0, &l, &pl) < 0)
		fprintf(stderr, "kprofctl report: no kprof-lines helper: no source lines\n");
	for (; n < sp->n_leaf_addrs; n++) {
		const Kprof__SavedLeafAddr *la = sp->leaf_addrs[n];

		if (la->func >= sp->n_functions || !(rows[n].key = row_key(sp, la, l ? &pl : NULL))) {
			err = la->func >= sp->n_functions ? -EBADMSG : -ENOMEM;
			break;
		}
		rows[n].count = la->count;
		kept += la->count;
	}
	if (!err) {
		qsort(rows, n, sizeof(*rows), by_key);
		for (size_t i = 0; i < n; i++) {
			if (m && !strcmp(rows[m - 1].key, rows[i].key)) {
				rows[m - 1].count += rows[i].count;
				free(rows[i].key);
				continue;
			}
			rows[m++] = rows[i];
		}
		qsort(rows, m, sizeof(*rows), by_count);
		if (json)
			fprintf(f, "{\"samples\":%" PRIu64 ",\"with_address\":%" PRIu64 ",\"lines\":[",
				total, kept);
		else
			fprintf(f, "%" PRIu64 " samples, %" PRIu64 " of them at a kept leaf address%s\n"
				   "  SAMPLES  SHARE   LINE  FUNCTION\n",
				total, kept, l ? "" : " (no lines: no kprof-lines helper)");
		for (size_t i = 0; i < m && (!top || i < top); i++)
			print_row(f, &rows[i], total, json, i == 0);
		if (json)
			fputs("]}\n", f);
		n = m;
	}
	for (size_t i = 0; i < n; i++)
		free(rows[i].key);
	lines_free(l);
	return err;
}
