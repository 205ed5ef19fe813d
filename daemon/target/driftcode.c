// SPDX-License-Identifier: GPL-2.0-only
/* driftcode.c: the basic blocks of a JIT function, so that the drift detector compares block
 * histograms instead of instruction ones where it can (ALGORITHMS.md §12.1).
 *
 * Reading a target's code is a privileged act; like the path tracer (paths.c), this reads it
 * only from a file: the mapping must be what a uprobe may go into (uprobe_site_check: file-backed,
 * private, r-x, with force, since nothing is written), and the bytes come from that very file
 * through /proc/PID/map_files (tfile_open), never from the process's memory. Capstone
 * (cfg_build) recovers the blocks; only their starts are kept. Anonymous JIT code (V8's, HotSpot's)
 * is refused and keeps instruction-level keys. Called from the housekeeping timer, a few
 * functions a tick, never from the sample path.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kprof/cfg.h"
#include "kprof/cleanup.h"
#include "kprof/procmaps.h"
#include "target/driftcode.h"
#include "kernel/probes.h"
#include "os/tfile.h"

static int read_file_code(pid_t pid, const struct uprobe_site *site, uint8_t *code, size_t len)
{
	char path[96], why[128];
	struct stat st;
	ssize_t n;
	int fd;

	procmaps_file_path(path, sizeof(path), pid, site->map_start, site->map_end);
	fd = tfile_open(AT_FDCWD, path, false, NULL, &st, why, sizeof(why));
	if (fd < 0)
		return fd;
	n = pread(fd, code, len, (off_t)site->offset);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

int driftcode_blocks(pid_t pid, const struct procmaps *pm, uint64_t start, uint64_t size,
		     uint64_t **ret)
{
	_cleanup_free_ uint8_t *code = NULL;
	_cleanup_free_ uint64_t *starts = NULL;
	struct uprobe_site site;
	struct cfg *g = NULL;
	char err[256];
	size_t n, k = 0;
	int r;

	r = uprobe_site_check(pm, start, "a JIT function", true, &site, err, sizeof(err));
	if (r < 0)
		return r;
	if (size > site.map_end - start)
		size = site.map_end - start;
	if (size == 0 || size > DRIFTCODE_MAX_BYTES)
		return -E2BIG;
	code = malloc(size);
	if (!code)
		return -ENOMEM;
	r = read_file_code(pid, &site, code, size);
	if (r < 0)
		return r;
	r = cfg_build(
	    code, size, start, start,
	    &(struct cfg_limits){.max_blocks = 4096, .max_paths = 1, .flags = CFG_BAD_IS_EXIT}, &g);
	if (r < 0)
		return r;
	n = cfg_nblocks(g);
	starts = malloc((n ? n : 1) * sizeof(*starts));
	if (!starts) {
		cfg_free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t s = cfg_block_get(g, (uint32_t)i)->start - start;

		if (!k || s > starts[k - 1]) /* an empty block may share its start */
			starts[k++] = s;
	}
	cfg_free(g);
	if (!k)
		return -EIO;
	*ret = TAKE_PTR(starts);
	return (int)k;
}
