// SPDX-License-Identifier: GPL-2.0-only
/* jitdump.c: incremental parser of perf's jitdump files (see include/kprof/jitdump.h).
 *
 * Format (perf's tools/perf/Documentation/jitdump-specification.txt). All fields are in the
 * writer's byte order, told by the magic; no padding between fields, none required between
 * records.
 *     header   u32 magic "JiTD", u32 version (1), u32 total_size (>= 40), u32 elf_mach,
 *              u32 reserved, u32 pid, u64 timestamp, u64 flags; then total_size - 40 bytes
 *              nobody defines yet
 *     prefix   u32 id, u32 total_size (of the whole record, prefix included), u64 timestamp
 *     LOAD     u32 pid, u32 tid, u64 vma, u64 code_addr, u64 code_size, u64 code_index,
 *              name\0, code_size bytes of code
 *     MOVE     u32 pid, u32 tid, u64 vma, u64 old_code_addr, u64 new_code_addr, u64 code_size,
 *              u64 code_index
 *     DEBUG    u64 code_addr, u64 nr_entry, nr_entry x {u64 addr, u32 lineno, u32 discrim,
 *              file\0} (file "\xff" = the previous entry's file)
 *     CLOSE    nothing
 *     UNWIND   u64 unwinding_size, u64 eh_frame_hdr_size, u64 mapped_size, unwinding_size bytes
 * A record's total_size may exceed what its fields use (writers pad to 8 bytes): the rest is
 * ignored.
 *
 * Incremental parsing. The parser never keeps bytes: the caller's buffer holds them, and the
 * cursor *off (plus st.bytes, the file offset it stands for) is the whole position. A step needs
 * JITDUMP_HEADER_SIZE bytes, then the header's total_size; then, per record, the prefix and
 * then the prefix's total_size. When the buffer holds less, the call returns with jd->want set
 * and the cursor on the start of that header or record, which is read again from its first byte
 * next time: a record is consumed whole or not at all, so any split of the file into calls gives
 * the same callbacks and the same stats. The magic and the version are checked as soon as their
 * bytes are there, and a record's size as soon as its prefix is, so that a bad file fails before
 * the caller reads max_record bytes of it.
 *
 * Validation. Everything is read through get32/get64 at offsets checked against the record's
 * end (itself checked against the buffer's end): a record is first bounded, then each field
 * found inside it. A record's fields are all checked before its callback runs, and its counts
 * are added only after the callback succeeded, so a callback failure leaves no trace and the
 * retry counts once. Debug entries are walked twice, once here to check them and once by the
 * caller through jitdump_debug_next(), which only relies on what the first walk checked.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "kprof/jitdump.h"

#define MAGIC_SWAPPED 0x4454694Au
#define FLAGS_KNOWN ((uint64_t)JITDUMP_FLAG_ARCH_TIMESTAMP)
#define LOAD_FIXED (JITDUMP_PREFIX_SIZE + 40)
#define MOVE_FIXED (JITDUMP_PREFIX_SIZE + 48)
#define DEBUG_FIXED (JITDUMP_PREFIX_SIZE + 16)
#define UNWIND_FIXED (JITDUMP_PREFIX_SIZE + 24)
#define ENTRY_FIXED 16		    /* addr, lineno, discrim */
#define ENTRY_MIN (ENTRY_FIXED + 1) /* and at least the file's NUL */
#define MIN_MAX_RECORD 64	    /* every fixed part fits */
#define SAME_FILE '\xff'

static uint32_t get32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t get64(const uint8_t *p, bool swap)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap64(v) : v;
}

static bool add_overflows(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a;
}

void jitdump_init(struct jitdump *jd, const struct jitdump_limits *lim)
{
	memset(jd, 0, sizeof(*jd));
	jd->lim.max_record = lim && lim->max_record ? lim->max_record : JITDUMP_MAX_RECORD;
	if (jd->lim.max_record < MIN_MAX_RECORD)
		jd->lim.max_record = MIN_MAX_RECORD;
	jd->lim.max_name = lim && lim->max_name ? lim->max_name : JITDUMP_MAX_NAME;
	jd->want = JITDUMP_HEADER_SIZE;
}

/* A NUL-terminated name at p, inside [p, end). Its length (cut at max) in *len and whether it
 * was cut in *cut; the position after its NUL, or NULL if there is no NUL. */
static const uint8_t *get_name(const uint8_t *p, const uint8_t *end, size_t max, size_t *len,
			       bool *cut)
{
	const uint8_t *nul = memchr(p, '\0', (size_t)(end - p));

	if (!nul)
		return NULL;
	*len = (size_t)(nul - p);
	*cut = *len > max;
	if (*cut)
		*len = max;
	return nul + 1;
}

/* The header at p (avail bytes). 1 once it is all there and good, 0 to wait, or the file's
 * error. Fills jd->hdr. */
static int parse_header(struct jitdump *jd, const uint8_t *p, size_t avail)
{
	struct jitdump_header *h = &jd->hdr;
	uint32_t magic;
	bool swap;

	if (avail < 4)
		goto wait;
	magic = get32(p, false);
	if (magic != JITDUMP_MAGIC && magic != MAGIC_SWAPPED)
		return -EBADMSG;
	swap = magic == MAGIC_SWAPPED;
	if (avail < 8)
		goto wait;
	if (get32(p + 4, swap) != JITDUMP_VERSION)
		return -EPROTONOSUPPORT;
	if (avail < JITDUMP_HEADER_SIZE)
		goto wait;
	memset(h, 0, sizeof(*h));
	h->version = JITDUMP_VERSION;
	h->total_size = get32(p + 8, swap);
	h->elf_mach = get32(p + 12, swap);
	h->pid = get32(p + 20, swap);
	h->timestamp = get64(p + 24, swap);
	h->flags = get64(p + 32, swap);
	h->swapped = swap;
	if (h->total_size < JITDUMP_HEADER_SIZE || h->total_size > jd->lim.max_record)
		return -EBADMSG;
	if (h->flags & ~FLAGS_KNOWN)
		return -EPROTONOSUPPORT;
	if (avail < h->total_size) {
		jd->want = h->total_size;
		return 0;
	}
	return 1;
wait:
	jd->want = JITDUMP_HEADER_SIZE;
	return 0;
}

static bool parse_load(const struct jitdump *jd, const uint8_t *p, const uint8_t *end,
		       struct jitdump_load *l, bool *cut)
{
	bool swap = jd->hdr.swapped;
	const uint8_t *code;

	if (end - p < LOAD_FIXED)
		return false;
	l->pid = get32(p + 16, swap);
	l->tid = get32(p + 20, swap);
	l->vma = get64(p + 24, swap);
	l->code_addr = get64(p + 32, swap);
	l->code_size = get64(p + 40, swap);
	l->code_index = get64(p + 48, swap);
	l->name = (const char *)p + LOAD_FIXED;
	code = get_name(p + LOAD_FIXED, end, jd->lim.max_name, &l->name_len, cut);
	if (!code || l->name_len == 0)
		return false;
	if (l->code_size == 0 || l->code_size > (uint64_t)(end - code))
		return false;
	if (add_overflows(l->vma, l->code_size) || add_overflows(l->code_addr, l->code_size))
		return false;
	l->code = code;
	return true;
}

static bool parse_move(const struct jitdump *jd, const uint8_t *p, const uint8_t *end,
		       struct jitdump_move *m)
{
	bool swap = jd->hdr.swapped;

	if (end - p < MOVE_FIXED)
		return false;
	m->pid = get32(p + 16, swap);
	m->tid = get32(p + 20, swap);
	m->vma = get64(p + 24, swap);
	m->old_code_addr = get64(p + 32, swap);
	m->new_code_addr = get64(p + 40, swap);
	m->code_size = get64(p + 48, swap);
	m->code_index = get64(p + 56, swap);
	return m->code_size != 0 && !add_overflows(m->vma, m->code_size) &&
	       !add_overflows(m->old_code_addr, m->code_size) &&
	       !add_overflows(m->new_code_addr, m->code_size);
}

/* Whether the name at p (its length len, uncut) is "\xff": the previous entry's file. */
static bool same_file(const uint8_t *p, size_t len)
{
	return len == 1 && p[0] == (uint8_t)SAME_FILE;
}

/* Check every entry; count the names to cut in *ncut. */
static bool parse_debug(const struct jitdump *jd, const uint8_t *p, const uint8_t *end,
			struct jitdump_debug *d, uint64_t *ncut)
{
	bool swap = jd->hdr.swapped, cut;
	const uint8_t *e;
	size_t len;

	if (end - p < DEBUG_FIXED)
		return false;
	d->code_addr = get64(p + 16, swap);
	d->nr_entry = get64(p + 24, swap);
	d->entries = p + DEBUG_FIXED;
	d->end = end;
	d->max_name = jd->lim.max_name;
	d->swapped = swap;
	/* cheap bound first, so that a huge nr_entry costs nothing */
	if (d->nr_entry == 0 || d->nr_entry > (uint64_t)(end - d->entries) / ENTRY_MIN)
		return false;
	*ncut = 0;
	e = d->entries;
	for (uint64_t i = 0; i < d->nr_entry; i++) {
		const uint8_t *file;

		if (end - e < ENTRY_MIN)
			return false;
		file = e + ENTRY_FIXED;
		e = get_name(file, end, SIZE_MAX, &len, &cut);
		if (!e)
			return false;
		if (same_file(file, len)) {
			if (i == 0)
				return false; /* "the previous file" with no previous entry */
			continue;
		}
		*ncut += len > jd->lim.max_name;
	}
	return true;
}

static bool check_unwinding(const struct jitdump *jd, const uint8_t *p, const uint8_t *end)
{
	bool swap = jd->hdr.swapped;
	uint64_t size, hdr_size;

	if (end - p < UNWIND_FIXED)
		return false;
	size = get64(p + 16, swap);
	hdr_size = get64(p + 24, swap);
	return size <= (uint64_t)(end - p - UNWIND_FIXED) && hdr_size <= size;
}

/* One whole record [p, p + size): delivered or skipped, and counted. 0, or a callback's
 * error (then nothing is counted). */
static int do_record(struct jitdump *jd, const uint8_t *p, uint32_t size,
		     const struct jitdump_ops *ops, void *userdata)
{
	const uint8_t *end = p + size;
	bool swap = jd->hdr.swapped, cut = false;
	uint64_t ts = get64(p + 8, swap), ncut = 0, *count;
	union {
		struct jitdump_load load;
		struct jitdump_move move;
		struct jitdump_debug debug;
	} u;
	int r = 0;

	memset(&u, 0, sizeof(u));
	switch (get32(p, swap)) {
	case JITDUMP_CODE_LOAD:
		u.load.timestamp = ts;
		if (!parse_load(jd, p, end, &u.load, &cut))
			goto bad;
		if (ops && ops->on_load)
			r = ops->on_load(&u.load, userdata);
		ncut = cut;
		count = &jd->st.loads;
		break;
	case JITDUMP_CODE_MOVE:
		u.move.timestamp = ts;
		if (!parse_move(jd, p, end, &u.move))
			goto bad;
		if (ops && ops->on_move)
			r = ops->on_move(&u.move, userdata);
		count = &jd->st.moves;
		break;
	case JITDUMP_CODE_DEBUG_INFO:
		u.debug.timestamp = ts;
		if (!parse_debug(jd, p, end, &u.debug, &ncut))
			goto bad;
		if (ops && ops->on_debug)
			r = ops->on_debug(&u.debug, userdata);
		count = &jd->st.debug_infos;
		break;
	case JITDUMP_CODE_CLOSE:
		if (ops && ops->on_close)
			r = ops->on_close(ts, userdata);
		count = &jd->st.closes;
		break;
	case JITDUMP_CODE_UNWINDING_INFO:
		if (!check_unwinding(jd, p, end))
			goto bad;
		count = &jd->st.unwinding_infos;
		break;
	default:
		count = &jd->st.unknown;
		break;
	}
	if (r < 0)
		return r;
	(*count)++;
	jd->st.long_names += ncut;
	jd->st.records++;
	return 0;
bad:
	jd->st.bad_records++;
	jd->st.records++;
	return 0;
}

static int fail(struct jitdump *jd, int err)
{
	jd->err = err;
	return err;
}

int jitdump_parse(struct jitdump *jd, const void *buf, size_t len, size_t *off,
		  const struct jitdump_ops *ops, void *userdata)
{
	const uint8_t *b = buf;
	size_t n = 0, avail;
	uint32_t size;
	int r;

	if (!jd || !off || *off > len || (!buf && len))
		return -EINVAL;
	if (jd->err)
		return jd->err;
	if (!jd->have_header) {
		r = parse_header(jd, b + *off, len - *off);
		if (r <= 0)
			return r < 0 ? fail(jd, r) : 0;
		if (ops && ops->on_header && (r = ops->on_header(&jd->hdr, userdata)) < 0)
			return r;
		jd->have_header = true;
		*off += jd->hdr.total_size;
		jd->st.bytes += jd->hdr.total_size;
	}
	for (;;) {
		avail = len - *off;
		if (avail < JITDUMP_PREFIX_SIZE) {
			jd->want = JITDUMP_PREFIX_SIZE;
			break;
		}
		size = get32(b + *off + 4, jd->hdr.swapped);
		if (size < JITDUMP_PREFIX_SIZE || size > jd->lim.max_record)
			return fail(jd, -EBADMSG);
		if (avail < size) {
			jd->want = size;
			break;
		}
		r = do_record(jd, b + *off, size, ops, userdata);
		if (r < 0)
			return r;
		*off += size;
		jd->st.bytes += size;
		n++;
	}
	return n > INT_MAX ? INT_MAX : (int)n;
}

int jitdump_debug_next(const struct jitdump_debug *d, struct jitdump_line *line)
{
	const uint8_t *e, *next;
	size_t len;
	bool cut;

	if (!d || !line || !d->entries || line->index >= d->nr_entry ||
	    line->next > (size_t)(d->end - d->entries))
		return 0;
	e = d->entries + line->next;
	if (d->end - e < ENTRY_MIN)
		return 0;
	next = get_name(e + ENTRY_FIXED, d->end, SIZE_MAX, &len, &cut);
	if (!next)
		return 0;
	line->addr = get64(e, d->swapped);
	line->lineno = get32(e + 8, d->swapped);
	line->discrim = get32(e + 12, d->swapped);
	if (line->index == 0 || !same_file(e + ENTRY_FIXED, len)) {
		line->file = (const char *)e + ENTRY_FIXED;
		line->file_len = len > d->max_name ? d->max_name : len;
	}
	line->next = (size_t)(next - d->entries);
	line->index++;
	return 1;
}
