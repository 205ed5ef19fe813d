// SPDX-License-Identifier: GPL-2.0-only
/* paths_uprobe.c: the uprobe side of the path tracer (paths.c): the traced code read from the
 * target and checked against its file (uprobes run the file's instructions), the BPF edge table
 * kp_path_edges (one action per edge, the exit value of every block that can leave; counts read
 * back for an edge profile), a uprobe on every block leader, taking them off and putting them
 * back for the budget (paths_probes_off/on), and the cleanup of the trace's BPF state once its
 * probes are gone. Apart from paths.c because it is the one part that talks to
 * BPF and reads the target's memory and files, and it calls nothing of the rest of the tracer.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kprof/cfg.h"
#include "kprof/cleanup.h"
#include "kprof/procmaps.h"
#include "kernel/loader.h"
#include "paths/paths.h"
#include "paths/paths_internal.h"
#include "paths/paths_uprobe.h"
#include "os/tfile.h"

int paths_read_code(pid_t pid, const struct uprobe_site *site, uint64_t start, uint8_t *code,
		    size_t len, const char *name, char *err, size_t errlen)
{
	_cleanup_free_ uint8_t *file = malloc(len);
	struct iovec local = {code, len}, remote = {(void *)(uintptr_t)start, len};
	char path[96];
	ssize_t n;
	int fd;

	if (!file)
		return -ENOMEM;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n != (ssize_t)len) {
		int e = n < 0 ? -errno : -EIO;

		snprintf(err, errlen, "cannot read the code of %s (0x%" PRIx64 ", %zu bytes): %s",
			 name, start, len, n < 0 ? strerror(-e) : "short read");
		return e;
	}
	procmaps_file_path(path, sizeof(path), pid, site->map_start, site->map_end);
	{
		char why[128] = "";
		struct stat st;

		fd = tfile_open(AT_FDCWD, path, false, NULL, &st, why, sizeof(why));
		if (fd < 0) {
			snprintf(err, errlen, "cannot open %s: %s", path, why);
			return fd;
		}
	}
	n = pread(fd, file, len, (off_t)site->offset);
	close(fd);
	if (n != (ssize_t)len) {
		snprintf(err, errlen, "cannot read the code of %s from %s", name, path);
		return -EIO;
	}
	for (size_t i = 0; i < len; i++) {
		if (code[i] == file[i])
			continue;
		if (code[i] != 0xcc) { /* another probe's int3 is fine: the file has the insn */
			snprintf(err, errlen,
				 "the code of %s differs in memory from its file at 0x%" PRIx64
				 ": uprobes would run the file's instructions",
				 name, start + i);
			return -EILSEQ;
		}
		code[i] = file[i];
	}
	return 0;
}

/* ---- BPF state ---- */

int paths_put_edge(struct bpf_map *map, uint32_t id, uint32_t from, uint32_t to, uint32_t act,
		   uint32_t flags, uint64_t add, uint64_t reset)
{
	struct kp_path_key k = {.trace = id, .from = from, .to = to};
	struct kp_path_val v = {.act = act, .flags = flags, .add = add, .reset = reset};

	if (bpf_map__update_elem(map, &k, sizeof(k), &v, sizeof(v), BPF_ANY) < 0)
		return -errno;
	return 0;
}

int paths_fill_edges(struct bpf_map *map, uint32_t id, const struct cfg *g, bool edges)
{
	int r = 0;

	for (uint32_t i = 0; r == 0 && i < cfg_nedges(g); i++) {
		const struct cfg_edge *e = cfg_edge_get(g, i);
		struct cfg_transition tr;

		if (e->dst == CFG_EXIT)
			continue;
		if (edges) { /* parallel edges share a key: counted once, as the first */
			r = paths_put_edge(map, id, e->src, e->dst, KP_PACT_EDGE, 0, 0, 0);
			continue;
		}
		r = cfg_transition(g, e->src, e->dst, &tr);
		if (r < 0)
			return r;
		r = paths_put_edge(map, id, e->src, e->dst,
				   tr.act == CFG_ACT_BACK ? KP_PACT_BACK : KP_PACT_ADD, 0, tr.add,
				   tr.reset);
	}
	for (uint32_t b = 0; r == 0 && b < cfg_nblocks(g); b++) {
		const struct cfg_block *blk = cfg_block_get(g, b);

		if (blk->flags & CFG_BLOCK_EXIT)
			r = paths_put_edge(map, id, b, KP_PATH_EXIT, KP_PACT_EXIT,
					   blk->flags & CFG_BLOCK_EXIT_ONLY ? KP_PEF_EXIT_ONLY : 0,
					   edges ? 0 : blk->exit_val, 0);
	}
	return r;
}

/* The path states of pid's threads (kp_path_threads). */
static void clear_threads(struct bpf_map *threads, pid_t pid)
{
	struct kp_path_thread st;
	uint32_t tid, ntid;
	bool first = true;

	while (bpf_map__get_next_key(threads, first ? NULL : &tid, &ntid, sizeof(ntid)) == 0) {
		if (bpf_map__lookup_elem(threads, &ntid, sizeof(ntid), &st, sizeof(st), 0) == 0 &&
		    st.tgid == (uint32_t)pid)
			bpf_map__delete_elem(threads, &ntid, sizeof(ntid), 0);
		else
			tid = ntid, first = false;
	}
}

/* After the probes are gone: the trace's edges and the target's thread states. */
void paths_bpf_cleanup(void *arg)
{
	struct paths_cleanup *c = arg;
	struct kp_path_key k, nk;
	bool first = true;

	while (bpf_map__get_next_key(c->edges, first ? NULL : &k, &nk, sizeof(nk)) == 0) {
		if (nk.trace == c->id)
			bpf_map__delete_elem(c->edges, &nk, sizeof(nk), 0);
		else
			k = nk, first = false;
	}
	clear_threads(c->threads, c->pid);
	free(c);
}

/* The start transition's key (KP_PACT_START: an activation may begin). */
static struct kp_path_key start_key(const struct path_trace *tr)
{
	return (struct kp_path_key){
	    .trace = tr->id, .from = KP_PATH_NONE, .to = cfg_entry_block(tr->cfg)};
}

void paths_probes_off(struct path_trace *tr)
{
	struct bpf_map *map = loader_path_edges(tr->env.loader);
	struct kp_path_key k = start_key(tr);
	struct kp_path_val v;

	/* No activation begins on a half-removed set; an edge profile's activations so far are
	 * kept for the start transition's return. */
	if (bpf_map__lookup_elem(map, &k, sizeof(k), &v, sizeof(v), 0) == 0)
		tr->edge_activations = v.add;
	bpf_map__delete_elem(map, &k, sizeof(k), 0);
	removal_put(tr->removal);
	tr->removal = links_remove_async(tr->links, tr->nlinks, &tr->file, 1, NULL, NULL);
	tr->links = NULL;
	tr->nlinks = 0;
}

int paths_probes_on(struct path_trace *tr, char *err, size_t errlen)
{
	struct bpf_map *map = loader_path_edges(tr->env.loader);
	int r;

	if (removals_pending(&tr->file))
		return -EBUSY; /* attaching now would wait for the kernel: later */
	/* The threads' states of the last stretch: their activations are not followed on. */
	clear_threads(loader_path_threads(tr->env.loader), tr->pid);
	r = paths_attach_probes(tr, &tr->site, err, errlen);
	if (r == 0)
		r = paths_put_edge(map, tr->id, KP_PATH_NONE, cfg_entry_block(tr->cfg),
				   KP_PACT_START, tr->edges ? KP_PEF_EDGES : 0,
				   tr->edges ? tr->edge_activations : 0, 0);
	if (r < 0 && tr->links) { /* what went in goes again */
		if (!err[0])
			snprintf(err, errlen, "cannot fill the BPF edge table: %s", strerror(-r));
		paths_probes_off(tr);
	}
	return r;
}

void paths_read_edges(struct path_trace *tr)
{
	struct bpf_map *map = loader_path_edges(tr->env.loader);
	struct kp_path_key k, nk;
	struct kp_path_val v;
	bool first = true;

	while (bpf_map__get_next_key(map, first ? NULL : &k, &nk, sizeof(nk)) == 0) {
		k = nk;
		first = false;
		if (nk.trace != tr->id ||
		    bpf_map__lookup_elem(map, &nk, sizeof(nk), &v, sizeof(v), 0) < 0)
			continue;
		if (v.act == KP_PACT_START) {
			tr->edge_activations = v.add;
		} else if (v.act == KP_PACT_EXIT && nk.from < cfg_nblocks(tr->cfg)) {
			tr->exit_counts[nk.from] = v.reset;
		} else if (v.act == KP_PACT_EDGE) {
			int e = cfg_edge_find(tr->cfg, nk.from, nk.to);

			if (e >= 0)
				tr->edge_counts[e] = v.add;
		}
	}
}

int paths_attach_probes(struct path_trace *tr, const struct uprobe_site *site, char *err,
			size_t errlen)
{
	struct bpf_program *prog = loader_path_prog(tr->env.loader);
	uint32_t entry = cfg_entry_block(tr->cfg);
	char path[96];

	procmaps_file_path(path, sizeof(path), tr->pid, site->map_start, site->map_end);
	tr->file = site->file;
	if (removals_pending(&site->file)) {
		snprintf(err, errlen,
			 "uprobes in the code of %s are still being removed by the kernel: "
			 "attaching now would stall kprofd until they are gone; try again in a few "
			 "seconds",
			 tr->func);
		return -EBUSY;
	}
	tr->links = calloc(cfg_nblocks(tr->cfg), sizeof(*tr->links));
	if (!tr->links)
		return -ENOMEM;
	for (uint32_t b = 0; b < cfg_nblocks(tr->cfg); b++) {
		const struct cfg_block *blk = cfg_block_get(tr->cfg, b);
		uint64_t cookie = (uint64_t)tr->id << 32 | b;
		struct bpf_link *lk;

		if (blk->ninsns == 0 || (blk->term == CFG_TERM_TRAP && blk->ninsns == 1))
			continue; /* nothing to run, or a lone trap (it never returns here) */
		if (b == entry)
			cookie |= KP_PATH_BLK_ENTRY;
		if (blk->flags & CFG_BLOCK_EXIT_ONLY)
			cookie |= KP_PATH_BLK_EXIT_ONLY;
		lk = loader_uprobe_attach(tr->env.loader, false, prog, tr->pid, path,
					  site->offset + (blk->start - tr->start), blk->start,
					  cookie);
		if (!lk) {
			int e = -errno;

			snprintf(err, errlen,
				 "cannot attach a uprobe to block 0x%" PRIx64 " of %s: %s%s",
				 blk->start, tr->func, strerror(-e),
				 e == -EACCES || e == -EPERM ? " (uprobes need CAP_SYS_ADMIN)"
							     : "");
			return e;
		}
		tr->links[tr->nlinks++] = lk;
	}
	tr->probes = tr->nlinks;
	return 0;
}
