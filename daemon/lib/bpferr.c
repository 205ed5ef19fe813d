// SPDX-License-Identifier: GPL-2.0-only
/* bpferr.c: why a BPF program failed to load, read from libbpf's and the verifier's messages.
 *
 * kprofd probes the kernel before the load (features.c) and leaves out what it lacks, so a
 * failure here is something the probes missed. Three causes are named here: a CO-RE relocation that
 * found no field ("failed to resolve CO-RE relocation ... struct cgroup.ancestors"), a helper the
 * kernel does not have ("invalid func unknown#174", "unknown func bpf_x#174"), and a program the
 * kernel refused for another reason (its name: the loader then asks whether the kernel has its
 * program type, bpferr_prog_type). The versions are mainline Linux's first with the helper, field
 * or program type.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/bpferr.h"

static const struct {
	unsigned id;
	const char *name, *version;
} helpers[] = {
    {35, "bpf_get_current_task", "4.8"},    {67, "bpf_get_stack", "4.18"},
    {113, "bpf_probe_read_kernel", "5.5"},  {130, "bpf_ringbuf_output", "5.8"},
    {131, "bpf_ringbuf_reserve", "5.8"},    {132, "bpf_ringbuf_submit", "5.8"},
    {134, "bpf_ringbuf_query", "5.8"},	    {158, "bpf_get_current_task_btf", "5.11"},
    {174, "bpf_get_attach_cookie", "5.15"},
};

static const struct {
	const char *field, *version;
} fields[] = {
    {"struct cgroup.ancestors", "6.0"},
    {"struct task_struct.perf_event_ctxp", "6.2"},
    {"struct bpf_iter_task", "6.7"},
};

static const struct {
	const char *name, *version;
} prog_types[] = {
    {"kprobe", "4.1"},
    {"perf_event", "4.9"},
    {"tracing", "5.5"},
    {"syscall", "5.14"},
};

const char *bpferr_prog_type(const char *name)
{
	for (size_t i = 0; i < sizeof(prog_types) / sizeof(prog_types[0]); i++)
		if (!strcmp(prog_types[i].name, name))
			return prog_types[i].version;
	return NULL;
}

const char *bpferr_helper(unsigned id, const char **version)
{
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (helpers[i].id == id) {
			*version = helpers[i].version;
			return helpers[i].name;
		}
	return NULL;
}

const char *bpferr_field(const char *field)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(fields[i].field, field))
			return fields[i].version;
	return NULL;
}

/* The program named by the log's last "prog 'NAME': " into name ("" if none). */
static void prog_name(const char *log, char *name, size_t len)
{
	const char *p = log, *q, *last = NULL;

	while ((q = strstr(p, "prog '"))) {
		last = q + 6;
		p = last;
	}
	name[0] = '\0';
	if (!last || !(q = strchr(last, '\'')) || (size_t)(q - last) >= len)
		return;
	memcpy(name, last, q - last);
	name[q - last] = '\0';
}

/* "struct S.f" of a failed CO-RE relocation in log into field; 0, or -ENOENT. */
static int core_field(const char *log, char *field, size_t len)
{
	const char *p = strstr(log, "failed to resolve CO-RE relocation"), *s, *e;

	if (!p)
		return -ENOENT;
	s = strstr(p, "] ");
	e = s ? strpbrk(s + 2, " \n(") : NULL;
	/* "struct cgroup.ancestors (0:..." : the kind and the access string */
	if (s && e && *e == ' ' && e[1] != '(')
		e = strpbrk(e + 1, " \n(");
	if (!s || !e || e <= s + 2 || (size_t)(e - s - 2) >= len)
		return -ENOENT;
	memcpy(field, s + 2, e - s - 2);
	field[e - s - 2] = '\0';
	field[strcspn(field, "[")] = '\0'; /* an array element: the field is the array */
	return 0;
}

/* The helper id of "invalid func unknown#N" or "unknown func NAME#N"; -1 if none. */
static long bad_helper(const char *log)
{
	const char *p = strstr(log, "invalid func unknown#");

	if (!p)
		p = strstr(log, "unknown func ");
	if (!p || !(p = strchr(p, '#')))
		return -1;
	return strtol(p + 1, NULL, 10);
}

int bpferr_explain(const char *log, char *out, size_t len)
{
	char prog[64], field[128];
	const char *v, *name;
	long id;

	prog_name(log, prog, sizeof(prog));
	if (core_field(log, field, sizeof(field)) == 0) {
		v = bpferr_field(field);
		snprintf(out, len, "program %s: this kernel has no %s%s%s%s", prog[0] ? prog : "?",
			 field, v ? " (Linux " : "", v ? v : "", v ? " and newer have it)" : "");
		return 0;
	}
	id = bad_helper(log);
	if (id >= 0) {
		name = bpferr_helper(id, &v);
		if (name)
			snprintf(out, len,
				 "program %s: this kernel has no BPF helper %s (#%ld; Linux %s and "
				 "newer have it)",
				 prog[0] ? prog : "?", name, id, v);
		else
			snprintf(out, len, "program %s: this kernel has no BPF helper #%ld",
				 prog[0] ? prog : "?", id);
		return 0;
	}
	snprintf(out, len, "%s%s", prog[0] ? "program " : "", prog);
	return -ENOENT;
}
