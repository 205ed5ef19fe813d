// SPDX-License-Identifier: GPL-2.0-only
/* window.c: the index of kept time windows, their retention, their file frame, and the merge of
 * their HCCT summaries (see include/kprof/window.h).
 *
 * The index is an array in seq order (windows are cut in time order; restored ones are sorted
 * once). Retention walks it from the oldest: windows past their age go, then blobs leave
 * memory oldest first while memory is over its bound (a blob that is not on disk yet is kept
 * while an older on-disk blob can go, and dropped, counted, only when nothing else can), then
 * files go oldest first while the disk is over its bound, and the oldest beyond max_windows go.
 * Removed entries are compacted away in one pass. Memory counts the blobs and the index
 * entries. An add refuses a window only at twice max_windows (no retention ran meanwhile).
 *
 * A tick's work scales with what changed, not with the windows kept: a retention walks the
 * index only when something is due: a bound is over (memory, disk and the non-root uids' bytes
 * are kept up to date at every change, so a uid can be over its quota only when all of them
 * together are), the oldest window's age is reached (the earliest end of each clock is kept),
 * the count is over, or the limits or the boot changed. The windows not written yet are
 * counted, with a seq none of them is below: the writer looks at those from there on only.
 * steps counts the index entries these walks looked at (a debug counter, status --json).
 *
 * Batch files: the windows of one file are counted in a small table sorted by the file's id
 * (ids grow as files are written), with the bytes of those that left; a window that leaves
 * while others of its file stay keeps its bytes counted on disk, and the file goes (the drop
 * callback, once) with its last window. Windows of a batch are cut together, so they age and
 * are evicted (oldest first) together too: a file outlives some of its windows only through a
 * user's quota, and its bytes stay counted meanwhile.
 *
 * Per-user quotas (mem_per_uid, disk_per_uid): retention first adds up each uid's bytes in a
 * small open-addressing table (rebuilt at each retention, so it holds only uids with windows),
 * then each bound is applied in turn to a smaller circle of victims: a uid over its quota
 * loses its oldest, then non-root uids over their share (all but the last eighth) lose their
 * oldest, then over the global bound users' oldest go before anyone's. One user's flood thus
 * pushes out only its own history.
 *
 * The merge keys merged contexts by (parent, routine, call site) in an open-addressing table;
 * a context is created the first time any summary shows it, after its parent (summaries list
 * parents first), so the result lists parents first too.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "kprof/hash.h"
#include "kprof/idxtab.h"
#include "kprof/window.h"

#define DEFAULT_MAX_WINDOWS (1u << 20)

/* One uid's bytes, during a retention. */
struct uid_use {
	uint32_t uid;
	bool used;
	uint64_t mem, disk;
};

/* A batch file: its windows still in the store, and the bytes of those that left. */
struct wfile {
	uint64_t id;
	size_t live;
	uint64_t held;
};
_Static_assert(offsetof(struct wfile, id) == 0 && offsetof(struct window_entry, seq) == 0,
	       "lower_bound reads the key each element starts with");

struct window_store {
	struct window_limits lim;
	struct window_entry *v;
	size_t n, cap;
	struct wfile *files; /* sorted by id */
	size_t nfiles, files_cap;
	uint64_t mem, disk;
	struct window_stats st;		/* the counters; sizes are computed */
	struct uid_use *uses;		/* NULL: no quotas this retention (off, or out of memory) */
	size_t nuses, nuids;		/* slots (a power of two, at least twice the uids), uids */
	uint64_t users_mem, users_disk; /* non-root uids' bytes, during a retention */
	uint64_t nr_mem, nr_disk;	/* non-root uids' bytes, kept up to date */
	size_t nunsaved;		/* windows not on disk */
	uint64_t unsaved_seq;		/* no window below this seq is unsaved */
	bool full;			/* the next retention walks (limits, order changed) */
	uint64_t boot_id;		/* of the last retention */
	uint64_t due_boot, due_real;	/* the earliest end of a window, each clock */
};

/* Bytes of e coming (positive) or going in memory and on disk: the totals and, for a
 * non-root uid, the users' totals. */
static void bytes(struct window_store *ws, const struct window_entry *e, int64_t mem,
		  int64_t disk)
{
	ws->mem += mem;
	ws->disk += disk;
	if (e->uid)
		ws->nr_mem += mem, ws->nr_disk += disk;
}

/* e may be due for its age from its end on (in its boot's clock or the wall clock). */
static void due_at(struct window_store *ws, const struct window_entry *e)
{
	if (e->boot_id == ws->boot_id) {
		if (e->end_boot < ws->due_boot)
			ws->due_boot = e->end_boot;
	} else if (e->end_real < ws->due_real) {
		ws->due_real = e->end_real;
	}
}

static uint64_t entry_mem(const struct window_entry *e)
{
	return sizeof(*e) + (e->blob ? e->len : 0);
}

int window_store_new(const struct window_limits *lim, struct window_store **ret)
{
	struct window_store *ws = calloc(1, sizeof(*ws));

	if (!ws)
		return -ENOMEM;
	window_store_set_limits(ws, lim);
	ws->full = true;
	*ret = ws;
	return 0;
}

void window_store_free(struct window_store *ws)
{
	if (!ws)
		return;
	free(ws->files);
	for (size_t i = 0; i < ws->n; i++)
		free(ws->v[i].blob);
	free(ws->v);
	free(ws);
}

void window_store_set_limits(struct window_store *ws, const struct window_limits *lim)
{
	struct window_limits l = *lim;

	if (!l.max_windows)
		l.max_windows = DEFAULT_MAX_WINDOWS;
	if (memcmp(&l, &ws->lim, sizeof(l)))
		ws->full = true; /* applied at the next retention, whatever is due */
	ws->lim = l;
}

/* The index of the first of the n elements of v (stride bytes each, sorted by the uint64_t key
 * each one starts with: struct window_entry's seq, struct wfile's id) whose key is not below
 * key: where key is, or goes. */
static size_t lower_bound(const void *v, size_t n, size_t stride, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)v + mid * stride, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The index in ws->files where file id is, or goes. */
static size_t file_pos(const struct window_store *ws, uint64_t id)
{
	return lower_bound(ws->files, ws->nfiles, sizeof(*ws->files), id);
}

/* One more window of batch file id on disk. 0 or -ENOMEM. */
static int file_ref(struct window_store *ws, uint64_t id)
{
	size_t i = file_pos(ws, id);

	if (i < ws->nfiles && ws->files[i].id == id) {
		ws->files[i].live++;
		return 0;
	}
	if (array_grow((void **)&ws->files, &ws->files_cap, ws->nfiles + 1, sizeof(*ws->files),
		       16) < 0)
		return -ENOMEM;
	memmove(ws->files + i + 1, ws->files + i, (ws->nfiles - i) * sizeof(*ws->files));
	ws->files[i] = (struct wfile){.id = id, .live = 1};
	ws->nfiles++;
	return 0;
}

/* Window e of a batch file leaves: true if it was the file's last (its bytes, all its windows'
 * then, leave the disk count), false if others stay (e's bytes stay counted). */
static bool file_unref(struct window_store *ws, const struct window_entry *e)
{
	size_t i = file_pos(ws, e->file);
	struct wfile *f = &ws->files[i];

	if (i == ws->nfiles || f->id != e->file || !f->live)
		return true; /* not counted (no memory for the table): alone */
	f->held += e->len;
	if (--f->live)
		return false;
	ws->disk -= f->held - e->len;
	memmove(f, f + 1, (ws->nfiles - i - 1) * sizeof(*f));
	ws->nfiles--;
	return true;
}

int window_store_add(struct window_store *ws, const struct window_entry *e)
{
	if ((!e->blob && !e->on_disk) || !e->len || e->end_boot < e->start_boot) {
		free(e->blob);
		return -EINVAL;
	}
	if (ws->n >= 2 * ws->lim.max_windows) { /* retain trims to max_windows each tick */
		ws->st.dropped_full++;
		free(e->blob);
		return -ENOSPC;
	}
	if (array_grow((void **)&ws->v, &ws->cap, ws->n + 1, sizeof(*ws->v), 64) < 0) {
		free(e->blob);
		return -ENOMEM;
	}
	if (e->on_disk && e->file && file_ref(ws, e->file) < 0) {
		free(e->blob);
		return -ENOMEM;
	}
	ws->v[ws->n++] = *e;
	bytes(ws, e, (int64_t)entry_mem(e), e->on_disk ? (int64_t)e->len : 0);
	if (!e->on_disk) {
		if (!ws->nunsaved++ || e->seq < ws->unsaved_seq)
			ws->unsaved_seq = e->seq;
	}
	due_at(ws, e);
	return 0;
}

static int seq_cmp(const void *a, const void *b)
{
	const struct window_entry *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void window_store_sort(struct window_store *ws)
{
	if (ws->n)
		qsort(ws->v, ws->n, sizeof(*ws->v), seq_cmp);
	ws->full = true;
}

static struct window_entry *find_seq(const struct window_store *ws, uint64_t seq)
{
	size_t i = lower_bound(ws->v, ws->n, sizeof(*ws->v), seq);

	return i < ws->n && ws->v[i].seq == seq ? &ws->v[i] : NULL;
}

void window_store_saved(struct window_store *ws, uint64_t seq, uint64_t file, size_t off)
{
	struct window_entry *e = find_seq(ws, seq);

	if (!e || e->on_disk)
		return;
	/* Without memory for the table, the file goes with the first of its windows to leave
	 * (the others, read later, are skipped as gone): nothing is counted twice. */
	if (file)
		(void)file_ref(ws, file);
	e->on_disk = true;
	e->file = file;
	e->off = off;
	bytes(ws, e, 0, (int64_t)e->len);
	ws->nunsaved--;
}

size_t window_store_first_unsaved(const struct window_store *ws)
{
	return ws->nunsaved ? lower_bound(ws->v, ws->n, sizeof(*ws->v), ws->unsaved_seq) : ws->n;
}

void window_store_count_steps(struct window_store *ws, size_t steps)
{
	ws->st.steps += steps;
}

/* Take e out of the accounts and mark it for compaction (len 0). */
static struct uid_use *use_of(const struct window_store *ws, uint32_t uid)
{
	size_t mask = ws->nuses - 1;

	if (!ws->uses)
		return NULL;
	for (size_t i = mix64(uid) & mask;; i = (i + 1) & mask)
		if (!ws->uses[i].used || ws->uses[i].uid == uid)
			return &ws->uses[i];
}

/* Twice the slots, when half are used (without memory: no quotas this retention). */
static void uses_grow(struct window_store *ws)
{
	struct window_store old = {.uses = ws->uses, .nuses = ws->nuses};
	size_t n = ws->nuses * 2;

	if (2 * (ws->nuids + 1) <= ws->nuses)
		return;
	ws->uses = calloc(n, sizeof(*ws->uses));
	ws->nuses = n;
	for (size_t i = 0; ws->uses && i < old.nuses; i++)
		if (old.uses[i].used)
			*use_of(ws, old.uses[i].uid) = old.uses[i];
	free(old.uses);
}

/* Bytes of e's uid going (negative) or coming. */
static void account(struct window_store *ws, const struct window_entry *e, int64_t mem,
		    int64_t disk)
{
	struct uid_use *u = use_of(ws, e->uid);

	if (!u || !e->uid)
		return;
	if (!u->used) {
		uses_grow(ws);
		u = use_of(ws, e->uid);
		if (!u)
			return;
		ws->nuids++;
	}
	u->used = true;
	u->uid = e->uid;
	u->mem += mem, u->disk += disk;
	ws->users_mem += mem, ws->users_disk += disk;
}

static void drop(struct window_store *ws, struct window_entry *e, window_drop_fn fn, void *ud)
{
	bool last = e->on_disk && (!e->file || file_unref(ws, e));

	if (last && fn)
		fn(ud, e);
	account(ws, e, -(int64_t)entry_mem(e), e->on_disk ? -(int64_t)e->len : 0);
	bytes(ws, e, -(int64_t)entry_mem(e), 0);
	if (last)
		ws->disk -= e->len;
	if (e->uid && e->on_disk) /* the users' bytes are their live windows' (as tally's) */
		ws->nr_disk -= e->len;
	if (!e->on_disk)
		ws->nunsaved--;
	free(e->blob);
	e->blob = NULL;
	e->len = 0;
}

static uint64_t age_of(const struct window_entry *e, uint64_t now_boot, uint64_t now_real,
		       uint64_t boot_id)
{
	if (e->boot_id == boot_id)
		return now_boot > e->end_boot ? now_boot - e->end_boot : 0;
	return now_real > e->end_real ? now_real - e->end_real : 0;
}

/* The circles of victims, smallest first (see the top of the file). */
enum circle { OVER_QUOTA, OVER_SHARE, USERS_FIRST, ANYONE };
#define CIRCLES 4

static uint64_t user_share(uint64_t limit)
{
	return limit - limit / 8;
}

/* Whether e must give up bytes of the memory (disk false) or disk bound of circle c. */
static bool over(const struct window_store *ws, const struct window_entry *e, enum circle c,
		 bool disk)
{
	uint64_t total = disk ? ws->disk : ws->mem;
	uint64_t limit = disk ? ws->lim.disk_bytes : ws->lim.mem_bytes, quota;
	const struct uid_use *u;

	if (c == ANYONE)
		return total > limit;
	if (!e->uid)
		return false;
	if (c == USERS_FIRST)
		return total > limit;
	if (!ws->uses)
		return false;
	if (c == OVER_SHARE)
		return (disk ? ws->users_disk : ws->users_mem) > user_share(limit);
	quota = disk ? ws->lim.disk_per_uid : ws->lim.mem_per_uid;
	u = use_of(ws, e->uid);
	return quota && (disk ? u->disk : u->mem) > quota;
}

static void evict_memory(struct window_store *ws, window_drop_fn fn, void *ud)
{
	/* Blobs with a file first, oldest first; then blobs without; then whole entries. */
	for (int c = 0; c < CIRCLES; c++)
		for (size_t i = 0; i < ws->n; i++) {
			struct window_entry *e = &ws->v[i];

			if (e->len && e->blob && e->on_disk && over(ws, e, c, false)) {
				account(ws, e, -(int64_t)e->len, 0);
				bytes(ws, e, -(int64_t)e->len, 0);
				free(e->blob);
				e->blob = NULL;
				ws->st.evicted++;
			}
		}
	for (int c = 0; c < CIRCLES; c++)
		for (size_t i = 0; i < ws->n; i++) {
			struct window_entry *e = &ws->v[i];

			if (e->len && over(ws, e, c, false)) {
				ws->st.dropped_mem += c != OVER_QUOTA;
				ws->st.dropped_quota += c == OVER_QUOTA;
				drop(ws, e, fn, ud);
			}
		}
}

static void evict_disk(struct window_store *ws, window_drop_fn fn, void *ud)
{
	for (int c = 0; c < CIRCLES; c++)
		for (size_t i = 0; i < ws->n; i++) {
			struct window_entry *e = &ws->v[i];

			if (e->len && e->on_disk && over(ws, e, c, true)) {
				ws->st.dropped_disk += c != OVER_QUOTA;
				ws->st.dropped_quota += c == OVER_QUOTA;
				drop(ws, e, fn, ud);
			}
		}
}

/* Each uid's bytes, when quotas are on (without memory for the table: global bounds only). */
static void tally(struct window_store *ws)
{
	free(ws->uses);
	ws->uses = NULL;
	ws->users_mem = ws->users_disk = 0;
	ws->nuids = 0;
	if (!ws->lim.mem_per_uid && !ws->lim.disk_per_uid)
		return;
	ws->nuses = 16; /* grows with the uids (uses_grow), not with the windows */
	ws->uses = calloc(ws->nuses, sizeof(*ws->uses));
	if (!ws->uses)
		return;
	for (size_t i = 0; i < ws->n; i++) {
		const struct window_entry *e = &ws->v[i];

		if (e->len)
			account(ws, e, entry_mem(e), e->on_disk ? e->len : 0);
	}
}

/* Whether a retention has anything to do (see the top of the file). */
static bool retain_due(const struct window_store *ws, uint64_t now_boot, uint64_t now_real,
		       uint64_t boot_id)
{
	const struct window_limits *l = &ws->lim;
	uint64_t age = l->max_age_ns;

	if (ws->full || boot_id != ws->boot_id || ws->n > l->max_windows)
		return true;
	if (ws->mem > l->mem_bytes || ws->disk > l->disk_bytes ||
	    ws->nr_mem > user_share(l->mem_bytes) || ws->nr_disk > user_share(l->disk_bytes) ||
	    (l->mem_per_uid && ws->nr_mem > l->mem_per_uid) ||
	    (l->disk_per_uid && ws->nr_disk > l->disk_per_uid))
		return true;
	return age && ((now_boot > ws->due_boot && now_boot - ws->due_boot > age) ||
		       (now_real > ws->due_real && now_real - ws->due_real > age));
}

void window_store_retain(struct window_store *ws, uint64_t now_boot, uint64_t now_real,
			 uint64_t boot_id, window_drop_fn fn, void *ud)
{
	size_t k = 0;

	if (!retain_due(ws, now_boot, now_real, boot_id))
		return;
	ws->st.retains++;
	ws->st.steps += ws->n;
	ws->full = false;
	ws->boot_id = boot_id;
	for (size_t i = 0; i < ws->n; i++) {
		struct window_entry *e = &ws->v[i];

		if (ws->lim.max_age_ns &&
		    age_of(e, now_boot, now_real, boot_id) > ws->lim.max_age_ns) {
			ws->st.aged++;
			drop(ws, e, fn, ud);
		}
	}
	tally(ws);
	evict_memory(ws, fn, ud);
	evict_disk(ws, fn, ud);
	free(ws->uses);
	ws->uses = NULL;
	for (size_t i = 0; i < ws->n; i++)
		if (ws->v[i].len)
			ws->v[k++] = ws->v[i];
	ws->n = k;
	if (ws->n > ws->lim.max_windows) { /* the oldest beyond the count bound */
		size_t over = ws->n - ws->lim.max_windows;

		for (size_t i = 0; i < over; i++) {
			ws->st.dropped_full++;
			drop(ws, &ws->v[i], fn, ud);
		}
		memmove(ws->v, ws->v + over, (ws->n - over) * sizeof(*ws->v));
		ws->n -= over;
	}
	ws->due_boot = ws->due_real = UINT64_MAX;
	for (size_t i = 0; i < ws->n; i++)
		due_at(ws, &ws->v[i]);
}

int window_store_find(const struct window_store *ws, uint64_t seq)
{
	const struct window_entry *e = find_seq(ws, seq);

	return e ? (int)(e - ws->v) : -ENOENT;
}

size_t window_store_count(const struct window_store *ws)
{
	return ws->n;
}

const struct window_entry *window_store_at(const struct window_store *ws, size_t i)
{
	return i < ws->n ? &ws->v[i] : NULL;
}

void window_store_hold(struct window_store *ws, size_t i, uint8_t *blob)
{
	if (i >= ws->n || ws->v[i].blob) {
		free(blob);
		return;
	}
	ws->v[i].blob = blob;
	bytes(ws, &ws->v[i], (int64_t)ws->v[i].len, 0);
}

int window_store_select(const struct window_store *ws, uint32_t pid, uint64_t attached_ns,
			uint64_t since, uint64_t until, size_t **ret, size_t *ret_n)
{
	_cleanup_free_ size_t *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < ws->n; i++) {
		const struct window_entry *e = &ws->v[i];
		uint64_t mid = e->start_real + (e->end_real - e->start_real) / 2;

		if (e->pid != pid || (attached_ns && e->attached_ns != attached_ns))
			continue;
		if (mid < since || (until && mid >= until))
			continue;
		if (array_grow((void **)&v, &cap, n + 1, sizeof(*v), 16) < 0)
			return -ENOMEM;
		v[n++] = i;
	}
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

void window_store_stats(const struct window_store *ws, struct window_stats *st)
{
	*st = ws->st;
	st->windows = ws->n;
	st->mem_bytes = ws->mem;
	st->disk_bytes = ws->disk;
	st->in_memory = st->on_disk = 0;
	st->unsaved = ws->nunsaved;
	for (size_t i = 0; i < ws->n; i++) {
		st->in_memory += ws->v[i].blob != NULL;
		st->on_disk += ws->v[i].on_disk;
	}
}

/* ---- Files ---- */

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static uint32_t get_le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int window_frame(const uint8_t *payload, size_t len, uint8_t **ret, size_t *ret_len)
{
	uint8_t *buf;

	if (len > WINDOW_MAX_PAYLOAD)
		return -E2BIG;
	buf = malloc(WINDOW_HEADER + len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, WINDOW_MAGIC, 8);
	put_le32(buf + 8, len);
	put_le32(buf + 12, crc32(crc32(0L, Z_NULL, 0), payload, len));
	if (len)
		memcpy(buf + WINDOW_HEADER, payload, len);
	*ret = buf;
	*ret_len = WINDOW_HEADER + len;
	return 0;
}

int window_unframe_next(const uint8_t *buf, size_t len, const uint8_t **payload, size_t *plen,
			size_t *used)
{
	uint32_t n;

	if (len < 8 || memcmp(buf, WINDOW_MAGIC, 8))
		return -EBADMSG;
	if (len < WINDOW_HEADER)
		return -EPIPE;
	n = get_le32(buf + 8);
	if (n > WINDOW_MAX_PAYLOAD)
		return -EFBIG;
	if (len - WINDOW_HEADER < n)
		return -EPIPE;
	if (crc32(crc32(0L, Z_NULL, 0), buf + WINDOW_HEADER, n) != get_le32(buf + 12))
		return -EILSEQ;
	*payload = buf + WINDOW_HEADER;
	*plen = n;
	*used = WINDOW_HEADER + n;
	return 0;
}

int window_unframe(const uint8_t *buf, size_t len, const uint8_t **payload, size_t *plen)
{
	size_t used;
	int err = window_unframe_next(buf, len, payload, plen, &used);

	return err < 0 ? err : used != len ? -EBADMSG : 0;
}

/* ---- The HCCT of a range ---- */

uint64_t window_summary_min(const struct hcct_tree *snap, uint32_t m)
{
	uint64_t min = UINT64_MAX;
	uint32_t mon = 0;

	for (size_t i = 0; i < snap->len; i++) {
		const struct hcct_entry *e = &snap->entries[i];

		if (!(e->flags & HCCT_ENTRY_MONITORED))
			continue;
		mon++;
		if (e->count < min)
			min = e->count;
	}
	return m && mon >= m ? min : 0;
}

struct mnode {
	uint64_t site, count, err, minsum; /* minsum: the mins of the summaries monitoring it */
	uint32_t id, parent;
	bool monitored;
};

struct mtab {
	struct mnode *v;
	size_t n, cap;
	struct idxtab tab;
};

static uint64_t mkey(uint32_t parent, uint32_t id, uint64_t site)
{
	return mix64(((uint64_t)parent << 32 | id) ^ mix64(site));
}

static uint64_t mtab_hash(const void *ctx, uint32_t i)
{
	const struct mnode *x = &((const struct mtab *)ctx)->v[i];

	return mkey(x->parent, x->id, x->site);
}

/* The merged context (parent, id, site), created if new: its index, or -ENOMEM. */
static int64_t mtab_get(struct mtab *t, uint32_t parent, uint32_t id, uint64_t site)
{
	size_t j;

	if (idxtab_reserve(&t->tab, t->n + 1, 1024, mtab_hash, t) < 0)
		return -ENOMEM;
	idxtab_probe(&t->tab, mkey(parent, id, site), j) {
		const struct mnode *x = &t->v[t->tab.slot[j] - 1];

		if (x->parent == parent && x->id == id && x->site == site)
			return t->tab.slot[j] - 1;
	}
	if (t->n >= UINT32_MAX - 1 ||
	    array_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 256) < 0)
		return -ENOMEM;
	t->v[t->n] = (struct mnode){.site = site, .id = id, .parent = parent};
	t->tab.slot[j] = t->n + 1;
	return t->n++;
}

/* Add one summary: map[k] is the merged index of its entry k. */
static int merge_one(struct mtab *t, const struct window_summary *s, uint32_t *map)
{
	for (size_t k = 0; k < s->tree->len; k++) {
		const struct hcct_entry *e = &s->tree->entries[k];
		uint32_t id = e->id < s->nmap ? s->map[e->id] : e->id;
		uint32_t parent = HCCT_NONE;
		int64_t x;

		if (e->parent != HCCT_NONE) {
			if (e->parent >= k)
				return -EINVAL;
			parent = map[e->parent];
		}
		x = mtab_get(t, parent, id, e->call_site);
		if (x < 0)
			return (int)x;
		map[k] = x;
		if (e->flags & HCCT_ENTRY_MONITORED) {
			t->v[x].monitored = true;
			t->v[x].count += e->count;
			t->v[x].err += e->err;
			t->v[x].minsum += s->min;
		}
	}
	return 0;
}

static int merged_tree(const struct mtab *t, uint64_t n, uint64_t z, struct hcct_tree **ret)
{
	struct hcct_tree *tr = calloc(1, sizeof(*tr));

	if (!tr)
		return -ENOMEM;
	tr->entries = calloc(t->n ? t->n : 1, sizeof(*tr->entries));
	if (!tr->entries) {
		free(tr);
		return -ENOMEM;
	}
	tr->n = n;
	tr->phi_den = 1;
	tr->len = t->n;
	for (size_t i = 0; i < t->n; i++) {
		const struct mnode *x = &t->v[i];
		struct hcct_entry *e = &tr->entries[i];

		e->call_site = x->site;
		e->id = x->id;
		e->parent = x->parent;
		e->depth = x->parent == HCCT_NONE ? 1 : tr->entries[x->parent].depth + 1;
		e->slot = HCCT_NONE;
		if (x->parent != HCCT_NONE)
			tr->entries[x->parent].children++;
		if (x->monitored) {
			e->flags = HCCT_ENTRY_MONITORED;
			e->count = x->count + (z - x->minsum);
			e->err = x->err + (z - x->minsum);
		}
	}
	*ret = tr;
	return 0;
}

struct window_merge {
	struct mtab t;
	uint64_t total, z;
};

int window_merge_new(struct window_merge **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

int window_merge_add(struct window_merge *mg, const struct window_summary *s)
{
	uint32_t *map = malloc((s->tree->len ? s->tree->len : 1) * sizeof(*map));
	int err;

	if (!map)
		return -ENOMEM;
	mg->total += s->tree->n;
	mg->z += s->min;
	err = merge_one(&mg->t, s, map);
	free(map);
	return err;
}

int window_merge_finish(const struct window_merge *mg, struct hcct_tree **ret)
{
	return merged_tree(&mg->t, mg->total, mg->z, ret);
}

void window_merge_free(struct window_merge *mg)
{
	if (!mg)
		return;
	free(mg->t.v);
	idxtab_release(&mg->t.tab);
	free(mg);
}

int window_hcct_merge(const struct window_summary *v, size_t n, struct hcct_tree **ret)
{
	struct window_merge *mg;
	int err = window_merge_new(&mg);

	for (size_t i = 0; i < n && err >= 0; i++)
		err = window_merge_add(mg, &v[i]);
	if (err >= 0)
		err = window_merge_finish(mg, ret);
	window_merge_free(mg);
	return err;
}

/* ---- A window's summary from its exact stacks ---- */

struct ranked {
	uint64_t count;
	uint32_t idx;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Mark the m heaviest contexts monitored (ties: the first created), the others' counts 0; the
 * count of the heaviest left out (0 if none) in *min. */
static int keep_heaviest(struct mtab *t, uint32_t m, uint64_t *min)
{
	_cleanup_free_ struct ranked *r = malloc((t->n ? t->n : 1) * sizeof(*r));
	size_t n = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].count)
			r[n++] = (struct ranked){.count = t->v[i].count, .idx = i};
	*min = 0;
	if (n > m) {
		qsort(r, n, sizeof(*r), ranked_cmp);
		*min = r[m].count;
		n = m;
	}
	for (size_t i = 0; i < t->n; i++)
		t->v[i].count = 0;
	for (size_t i = 0; i < n; i++) {
		t->v[r[i].idx].count = r[i].count;
		t->v[r[i].idx].monitored = true;
	}
	return 0;
}

int window_summary_exact(const struct window_stack *v, size_t n, uint32_t m, struct hcct_tree **ret,
			 uint64_t *min)
{
	struct mtab t = {0};
	_cleanup_free_ uint32_t *idx = NULL;
	uint64_t total = 0;
	size_t k = 0;
	int err = 0;

	if (!m)
		return -EINVAL;
	for (size_t i = 0; i < n && err >= 0; i++) {
		uint32_t parent = HCCT_NONE;

		for (size_t d = 0; d < v[i].n && err >= 0; d++) {
			int64_t x = mtab_get(&t, parent, v[i].ids[d], 0);

			if (x < 0)
				err = (int)x;
			else
				parent = x;
		}
		if (err >= 0 && v[i].n) {
			t.v[parent].count += v[i].count;
			total += v[i].count;
		}
	}
	if (err >= 0)
		err = keep_heaviest(&t, m, min);
	if (err >= 0 && !(idx = malloc((t.n ? t.n : 1) * sizeof(*idx))))
		err = -ENOMEM;
	if (err < 0)
		goto out;
	for (size_t i = t.n; i-- > 0;) /* children after parents: one backward pass */
		if ((t.v[i].monitored || t.v[i].err) && t.v[i].parent != HCCT_NONE)
			t.v[t.v[i].parent].err = 1; /* err: "needed", until the output */
	for (size_t i = 0; i < t.n; i++) {
		struct mnode *x = &t.v[i];

		idx[i] = UINT32_MAX;
		if (!x->monitored && !x->err)
			continue;
		x->parent = x->parent == HCCT_NONE ? HCCT_NONE : idx[x->parent];
		x->err = 0;
		x->minsum = 0;
		idx[i] = k;
		t.v[k++] = *x;
	}
	t.n = k;
	err = merged_tree(&t, total, 0, ret);
out:
	free(t.v);
	idxtab_release(&t.tab);
	return err;
}
