// SPDX-License-Identifier: GPL-2.0-only
/* export.c: `kprofctl export`: one profile, three formats.
 *
 * The daemon sends the whole profile (kprof.SavedProfile: functions and per-thread stacks);
 * this file turns it into pprof (pprof.c), folded stacks (through the same profile module the
 * daemon uses, so `export --format folded` equals `kprofctl folded`) or JSON, and writes it to
 * the output file atomically (a temporary file renamed into place) or to stdout for "-". Names
 * come from the target: folded lines go through render_lines() and JSON strings through
 * render_json_string() (see render.c); pprof keeps them as they are, in its binary encoding.
 */
#include "export.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kprof/abi.h"
#include "kprof/cleanup.h"
#include "kprof/io.h"
#include "kprof/profile.h"
#include "kprof/saved.h"
#include "kprof/pprof.h"
#include "drift.h"
#include "render.h"

/* The profile rebuilt in a struct profile, refused for what kprofd would refuse. */
static int to_profile(const Kprof__SavedProfile *sp, struct profile **ret)
{
	int err = saved_check(sp);

	return err < 0 ? err : saved_profile(sp, NULL, ret, NULL);
}

/* The processes of a merged profile (its stacks' pids) and a root frame for each: copies of
 * sp's stacks with the process's comm first, as stackcollapse-perf roots every stack at its
 * comm (the comm: its main thread's name, tid == pid). */
struct comm_roots {
	Kprof__SavedProfile sp;
	Kprof__SavedFunction *fv, **fp;
	Kprof__SavedStack *sv, **spp;
	uint32_t *ids;
	char (*names)[32];
};

static void comm_roots_free(struct comm_roots *c)
{
	free(c->fv);
	free(c->fp);
	free(c->sv);
	free(c->spp);
	free(c->ids);
	free(c->names);
}

/* The process a stack of sp was sampled in: its origin's (a merged profile), else 0. */
static uint32_t stack_pid(const Kprof__SavedProfile *sp, const Kprof__SavedStack *s)
{
	return s->origin && s->origin <= sp->n_origins ? sp->origins[s->origin - 1]->pid : 0;
}

/* Whether sp is a merge of processes (record's, a cgroup's): stacks of several pids, or of
 * another than its target's (the merge's first process may have none). */
static bool several_processes(const Kprof__SavedProfile *sp)
{
	uint32_t first = sp->n_stacks ? stack_pid(sp, sp->stacks[0]) : 0;

	for (size_t i = 0; i < sp->n_stacks; i++) {
		uint32_t pid = stack_pid(sp, sp->stacks[i]);

		if (pid && (pid != first || (sp->target && pid != sp->target->pid)))
			return true;
	}
	return false;
}

static const char *comm_of(const Kprof__SavedProfile *sp, uint32_t pid, char *buf, size_t len)
{
	for (size_t i = 0; i < sp->n_threads; i++)
		if (sp->threads[i]->tid == pid && sp->threads[i]->name && sp->threads[i]->name[0]) {
			snprintf(buf, len, "%s", sp->threads[i]->name);
			return buf;
		}
	snprintf(buf, len, "pid %u", pid);
	return buf;
}

static int comm_roots(const Kprof__SavedProfile *sp, struct comm_roots *c)
{
	size_t nf = sp->n_functions, nid = 0, io = 0, nroots = 0;

	for (size_t i = 0; i < sp->n_stacks; i++)
		nid += sp->stacks[i]->n_ids + 1;
	c->sp = *sp;
	c->fv = calloc(sp->n_stacks + 1, sizeof(*c->fv));
	c->fp = calloc(nf + sp->n_stacks + 1, sizeof(*c->fp));
	c->sv = calloc(sp->n_stacks + 1, sizeof(*c->sv));
	c->spp = calloc(sp->n_stacks + 1, sizeof(*c->spp));
	c->ids = calloc(nid + 1, sizeof(*c->ids));
	c->names = calloc(sp->n_stacks + 1, sizeof(*c->names));
	if (!c->fv || !c->fp || !c->sv || !c->spp || !c->ids || !c->names)
		return -ENOMEM;
	memcpy(c->fp, sp->functions, nf * sizeof(*c->fp));
	for (size_t i = 0; i < sp->n_stacks; i++) {
		const Kprof__SavedStack *s = sp->stacks[i];
		uint32_t pid = stack_pid(sp, s);
		size_t r = 0;

		/* One root function per process (few: a linear search). */
		for (r = 0; r < nroots && c->fv[r].start != pid; r++)
			;
		if (r == nroots) {
			kprof__saved_function__init(&c->fv[r]);
			c->fv[r].name = (char *)comm_of(sp, pid, c->names[r], sizeof(c->names[r]));
			c->fv[r].module = "[comm]";
			c->fv[r].kind = KPROF__FRAME_KIND__FRAME_KIND_NATIVE;
			c->fv[r].start = pid; /* its key here only */
			c->fp[nf + r] = &c->fv[r];
			nroots++;
		}
		c->sv[i] = *s;
		c->spp[i] = &c->sv[i];
		if (s->n_ids >= KP_MAX_FRAMES)
			continue; /* as deep as a stack may be: left as it is */
		c->sv[i].ids = c->ids + io;
		c->ids[io++] = nf + r;
		memcpy(c->ids + io, s->ids, s->n_ids * sizeof(*s->ids));
		io += s->n_ids;
		c->sv[i].n_ids = s->n_ids + 1;
	}
	c->sp.functions = c->fp;
	c->sp.n_functions = nf + nroots;
	c->sp.stacks = c->spp;
	return 0;
}

/* Folded stacks, each line through render_lines() as `kprofctl folded` prints them: the names
 * come from the target, and the file is text meant for terminals and tools alike. A merged
 * profile's stacks are rooted at their process's comm, so that processes stay apart. */
static int export_folded(const Kprof__SavedProfile *in, uint8_t **ret, size_t *ret_len)
{
	_cleanup_free_ char *text = NULL;
	struct comm_roots roots = {0};
	const Kprof__SavedProfile *sp = in;
	struct profile *p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	if (several_processes(in)) {
		if (comm_roots(in, &roots) < 0) {
			comm_roots_free(&roots);
			return -ENOMEM;
		}
		sp = &roots.sp;
	}
	err = to_profile(sp, &p);
	if (err < 0) {
		comm_roots_free(&roots);
		return err;
	}
	err = profile_folded(p, &text, &len);
	profile_free(p);
	comm_roots_free(&roots);
	if (err < 0)
		return err;
	f = open_memstream(&buf, &len);
	if (!f)
		return -errno;
	render_lines(f, text);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = (uint8_t *)buf;
	*ret_len = len;
	return 0;
}

static int export_json(const Kprof__SavedProfile *sp, uint8_t **ret, size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0;
	uint64_t total = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -errno;
	for (size_t i = 0; i < sp->n_stacks; i++)
		total += sp->stacks[i]->count;
	render_json_open_target(f, sp->target);
	fprintf(f, ",\"total_samples\":%" PRIu64 ",\"functions\":[", total);
	for (size_t i = 0; i < sp->n_functions; i++) {
		const Kprof__SavedFunction *fn = sp->functions[i];

		fprintf(f, "%s{\"id\":%zu,\"name\":", i ? "," : "", i);
		render_json_string(f, fn->name);
		fputs(",\"module\":", f);
		render_json_string(f, fn->module);
		fprintf(f, ",\"kind\":\"%s\",\"address\":%" PRIu64 "}", render_kind(fn->kind),
			fn->start);
	}
	fputs("],\"stacks\":[", f);
	for (size_t i = 0; i < sp->n_stacks; i++) {
		const Kprof__SavedStack *s = sp->stacks[i];

		fprintf(f, "%s{\"tid\":%u,\"count\":%" PRIu64 ",\"frames\":[", i ? "," : "", s->tid,
			s->count);
		for (size_t j = 0; j < s->n_ids; j++)
			fprintf(f, "%s%u", j ? "," : "", s->ids[j]);
		fputs("]}", f);
	}
	fputs("]", f);
	if (sp->drift) {
		fputs(",\"drift\":", f);
		drift_render_json(f, sp->drift);
	}
	fputs("}\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = (uint8_t *)buf;
	*ret_len = len;
	return 0;
}

static int write_out(const char *path, const uint8_t *data, size_t len)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int err;

	if (!strcmp(path, "-")) {
		if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
			return -EIO;
		return 0;
	}
	/* Not a file (/dev/null, a fifo, /dev/stdout): written to as it is, nothing to replace. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return -errno;
		return write_all(fd, data, len, false);
	}
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = write_all(fd, data, len, false);
	if (!err && (fchmod(fd, 0644) < 0 || rename(tmp, path) < 0))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* sp with off's functions and stacks after its own (off's ids moved past sp's functions), for
 * pprof_build_offcpu. Shallow: the arrays in *m (freed by merged_free) point into sp and off. */
struct offcpu_merged {
	Kprof__SavedProfile msg;
	Kprof__SavedFunction **fp;
	Kprof__SavedStack *sv, **spp;
	uint32_t *ids;
};

static void merged_free(struct offcpu_merged *m)
{
	free(m->fp);
	free(m->sv);
	free(m->spp);
	free(m->ids);
}

static int merged_build(const Kprof__SavedProfile *sp, const Kprof__SavedProfile *off,
			struct offcpu_merged *m)
{
	size_t nf = sp->n_functions + off->n_functions, ns = sp->n_stacks + off->n_stacks, nids = 0;

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < off->n_stacks; i++)
		nids += off->stacks[i]->n_ids;
	m->fp = calloc(nf + 1, sizeof(*m->fp));
	m->sv = calloc(off->n_stacks + 1, sizeof(*m->sv));
	m->spp = calloc(ns + 1, sizeof(*m->spp));
	m->ids = calloc(nids + 1, sizeof(*m->ids));
	if (!m->fp || !m->sv || !m->spp || !m->ids) {
		merged_free(m);
		return -ENOMEM;
	}
	memcpy(m->fp, sp->functions, sp->n_functions * sizeof(*m->fp));
	memcpy(m->fp + sp->n_functions, off->functions, off->n_functions * sizeof(*m->fp));
	memcpy(m->spp, sp->stacks, sp->n_stacks * sizeof(*m->spp));
	nids = 0;
	for (size_t i = 0; i < off->n_stacks; i++) {
		const Kprof__SavedStack *s = off->stacks[i];

		kprof__saved_stack__init(&m->sv[i]);
		m->sv[i].tid = s->tid;
		m->sv[i].count = s->count;
		m->sv[i].ids = m->ids + nids;
		m->sv[i].n_ids = s->n_ids;
		for (size_t j = 0; j < s->n_ids; j++) {
			if (s->ids[j] >= off->n_functions) {
				merged_free(m);
				return -EINVAL;
			}
			m->ids[nids++] = s->ids[j] + sp->n_functions;
		}
		m->spp[sp->n_stacks + i] = &m->sv[i];
	}
	m->msg = *sp;
	m->msg.functions = m->fp;
	m->msg.n_functions = nf;
	m->msg.stacks = m->spp;
	m->msg.n_stacks = ns;
	m->msg.n_call_counts = 0; /* indexed like sp's functions alone */
	return 0;
}

bool export_lines = true;

/* The pprof of sp, with off's stacks after its own when off is not NULL (the source lines of its
 * leaf addresses are kprofd's, unless export --no-lines). */
static int build_pprof(const Kprof__SavedProfile *sp, const Kprof__SavedProfile *off,
		       uint64_t now_ns, uint8_t **data, size_t *len)
{
	struct offcpu_merged m;
	int err = saved_check(sp); /* refused for what kprofd would refuse */

	if (err >= 0 && off)
		err = saved_check(off);
	if (err >= 0 && off)
		err = merged_build(sp, off, &m);
	if (err < 0)
		return err;
	err = pprof_build_offcpu(off ? &m.msg : sp, sp->n_stacks, now_ns, KPROF_VERSION, data, len);
	if (off)
		merged_free(&m);
	return err;
}

int export_offcpu(const Kprof__SavedProfile *sp, const Kprof__SavedProfile *off, const char *format,
		  const char *path)
{
	_cleanup_free_ uint8_t *data = NULL;
	struct timespec now;
	size_t len = 0;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	if (!strcmp(format, "pprof"))
		err = build_pprof(sp, off, (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec,
				  &data, &len);
	else if (!strcmp(format, "folded"))
		err = export_folded(off ? off : sp, &data, &len);
	else if (!strcmp(format, "json"))
		err = export_json(off ? off : sp, &data, &len);
	else
		return -EINVAL;
	if (err < 0) {
		fprintf(stderr, "kprofctl export: cannot build the %s profile: %s\n", format,
			strerror(-err));
		return err;
	}
	err = write_out(path, data, len);
	if (err < 0)
		fprintf(stderr, "kprofctl export: cannot write %s: %s\n", path, strerror(-err));
	return err;
}

int export_profile(const Kprof__SavedProfile *sp, const char *format, const char *path)
{
	return export_offcpu(sp, NULL, format, path);
}
