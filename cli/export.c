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

/* Folded stacks, each line through render_lines() as `kprofctl folded` prints them: the names
 * come from the target, and the file is text meant for terminals and tools alike. */
static int export_folded(const Kprof__SavedProfile *sp, uint8_t **ret, size_t *ret_len)
{
	_cleanup_free_ char *text = NULL;
	struct profile *p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err = to_profile(sp, &p);

	if (err < 0)
		return err;
	err = profile_folded(p, &text, &len);
	profile_free(p);
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
struct merged {
	Kprof__SavedProfile msg;
	Kprof__SavedFunction **fp;
	Kprof__SavedStack *sv, **spp;
	uint32_t *ids;
};

static void merged_free(struct merged *m)
{
	free(m->fp);
	free(m->sv);
	free(m->spp);
	free(m->ids);
}

static int merged_build(const Kprof__SavedProfile *sp, const Kprof__SavedProfile *off,
			struct merged *m)
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

/* The pprof of sp, with off's stacks after its own when off is not NULL. */
static int build_pprof(const Kprof__SavedProfile *sp, const Kprof__SavedProfile *off,
		       uint64_t now_ns, uint8_t **data, size_t *len)
{
	struct merged m;
	int err = saved_check(sp); /* refused for what kprofd would refuse */

	if (err >= 0 && off)
		err = saved_check(off);
	if (err < 0)
		return err;
	if (!off)
		return pprof_build(sp, now_ns, KPROF_VERSION, data, len);
	err = merged_build(sp, off, &m);
	if (err < 0)
		return err;
	err = pprof_build_offcpu(&m.msg, sp->n_stacks, now_ns, KPROF_VERSION, data, len);
	merged_free(&m);
	return err;
}

int export_offcpu(const Kprof__SavedProfile *sp, const Kprof__SavedProfile *off,
		  const char *format, const char *path)
{
	_cleanup_free_ uint8_t *data = NULL;
	struct timespec now;
	size_t len = 0;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	if (!strcmp(format, "pprof"))
		err = build_pprof(sp, off, (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec, &data,
				  &len);
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
