// SPDX-License-Identifier: GPL-2.0-only
/* elfsym.c: ELF function symbols with libelf (see include/kprof/elfsym.h).
 *
 * The symbols of one table (.symtab, else .dynsym) are read into a temporary array of
 * candidates (start, size, a name pointer into libelf's copy of the string table, a rank),
 * sorted by start and then by perf's preference, and the first of each start goes into the
 * symtab: aliases (a weak "clock_gettime" and a global "__vdso_clock_gettime" at one address)
 * give one name, the one perf shows. The array costs about as much as the table it builds and
 * counts against the caller's budget while it exists.
 *
 * PLT entries are named NAME@plt as perf names them (dso__synthesize_plt_symbols), on x86: the
 * relocations of .rela.plt (or .rel.plt) sorted by their GOT slot are the entries of .plt.sec,
 * or of .plt after its 16-byte header, in order; an IRELATIVE one is named after the IFUNC
 * its addend points at, else offset_0xADDR@plt. Without them a call through the PLT would be
 * blamed on _init, whose size-0 symbol reaches over the PLT.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/elfsym.h"

/* Symbols of size 0 (hand-written assembly) reach the next symbol, at most this far. */
#define ELFSYM_MAX_IMPLICIT 4096

/* Section data is read into memory whole (libelf in read mode): a symbol or string table
 * larger than this is skipped. */
#define ELFSYM_MAX_SECTION (256u << 20)

/* Note sections and segments larger than this are not searched for the build id (a build id
 * note is 36 bytes; annobin's build attribute notes can be megabytes). */
#define ELFSYM_MAX_NOTES (64u << 10)

#define ELFSYM_MAX_DEBUGLINK_SECTION 4096

/* PLT entries named at most (a process's PLT holds one per imported function). */
#define ELFSYM_MAX_PLT 65536
#define PLT_ENTRY 16 /* x86 and x86-64, .plt and .plt.sec alike */

struct cand {
	uint64_t start, size;
	const char *name; /* libelf's string table: valid until elf_end */
	uint32_t idx;	  /* position in the table: the last tie-break */
	uint16_t len;	  /* strnlen(name, ELFSYM_MAX_NAME) */
	uint8_t under;	  /* leading underscores, at most 255 */
	uint8_t rank;	  /* 4: sized, 2: not weak, 1: global; higher is preferred */
};

static bool section_fits(Elf *elf, size_t idx)
{
	Elf_Scn *scn = elf_getscn(elf, idx);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && sh.sh_size <= ELFSYM_MAX_SECTION;
}

static void read_loads(Elf *elf, size_t nph, struct elfsym *es)
{
	for (size_t i = 0; i < nph && es->nloads < ELFSYM_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			es->loads[es->nloads++] =
			    (struct elfsym_load){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
}

/* The first NT_GNU_BUILD_ID note ("GNU", 1 to ELFSYM_BUILD_ID_MAX bytes) in data. */
static bool find_build_id(const Elf_Data *data, struct elfsym *es)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return false;
	while (off < data->d_size &&
	       (next = gelf_getnote((Elf_Data *)data, off, &nh, &name_off, &desc_off)) > off) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= ELFSYM_BUILD_ID_MAX) {
			memcpy(es->build_id, (const char *)data->d_buf + desc_off, nh.n_descsz);
			es->build_id_len = nh.n_descsz;
			return true;
		}
		off = next;
	}
	return false;
}

/* From the note sections, or from PT_NOTE segments in a file without section headers. */
static void read_build_id(Elf *elf, size_t nph, struct elfsym *es)
{
	Elf_Scn *scn = NULL;
	size_t nsec = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		nsec++;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    sh.sh_size <= ELFSYM_MAX_NOTES && find_build_id(elf_getdata(scn, NULL), es))
			return;
	}
	for (size_t i = 0; !nsec && i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_NOTE && ph.p_align <= 4 &&
		    ph.p_filesz <= ELFSYM_MAX_NOTES &&
		    find_build_id(elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR),
				  es))
			return;
	}
}

/* Whether a section named sname (of type type, size bytes) holds DWARF that names source lines:
 * .debug_info or .debug_line with bytes in the file (a debug file's copy of a stripped one's
 * sections is SHT_NOBITS where the code was, PROGBITS for its DWARF). */
static bool is_dwarf(const char *sname, const GElf_Shdr *sh)
{
	return sh->sh_type == SHT_PROGBITS && sh->sh_size &&
	       (!strcmp(sname, ".debug_info") || !strcmp(sname, ".debug_line") ||
		!strcmp(sname, ".zdebug_info") || !strcmp(sname, ".zdebug_line"));
}

/* .gnu_debuglink: a NUL-terminated file name, padding to 4 bytes, a 4-byte CRC32 in the
 * file's byte order. Anything else is ignored; a name that is not a plain file name (a path out
 * of the debug directories) sets debuglink_bad. */
static void read_debuglink(Elf *elf, Elf_Scn *scn, struct elfsym *es)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Elf_Data *d = elf_getdata(scn, NULL);
	const unsigned char *c;
	const char *p;
	size_t len, crc_off;

	if (!ident || !d || !d->d_buf || es->debuglink[0])
		return;
	p = d->d_buf;
	len = strnlen(p, d->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	if (!len || len >= ELFSYM_DEBUGLINK_MAX || crc_off + 4 > d->d_size)
		return;
	if (memchr(p, '/', len) || !strcmp(p, ".") || !strcmp(p, "..")) {
		es->debuglink_bad = true;
		return;
	}
	c = (const unsigned char *)p + crc_off;
	es->debuglink_crc =
	    ident[EI_DATA] == ELFDATA2MSB
		? (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3]
		: (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 | (uint32_t)c[1] << 8 | c[0];
	memcpy(es->debuglink, p, len + 1);
}

/* The named sections kprof looks at: .gnu_debuglink, and DWARF's (has_dwarf). */
static void read_sections(Elf *elf, struct elfsym *es)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sname = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		es->has_dwarf |= is_dwarf(sname, &sh);
		if (sh.sh_type == SHT_PROGBITS && sh.sh_size <= ELFSYM_MAX_DEBUGLINK_SECTION &&
		    !strcmp(sname, ".gnu_debuglink"))
			read_debuglink(elf, scn, es);
	}
}

/* The first usable section of type (SHT_SYMTAB or SHT_DYNSYM). */
static Elf_Scn *find_table(Elf *elf, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type && sh->sh_entsize &&
		    sh->sh_size <= ELFSYM_MAX_SECTION && section_fits(elf, sh->sh_link))
			return scn;
	return NULL;
}

static struct cand make_cand(const GElf_Sym *s, const char *name, size_t idx)
{
	int bind = GELF_ST_BIND(s->st_info);
	size_t under = strspn(name, "_");

	return (struct cand){
	    .start = s->st_value,
	    .size = s->st_size,
	    .name = name,
	    .idx = idx,
	    .len = strnlen(name, ELFSYM_MAX_NAME),
	    .under = under > 255 ? 255 : under,
	    .rank = (s->st_size ? 4 : 0) | (bind != STB_WEAK ? 2 : 0) | (bind == STB_GLOBAL),
	};
}

/* The defined, named functions of the table in scn into *ret; their count, or -ENOMEM,
 * -ENOSPC (the array alone would exceed max_bytes). */
static ssize_t collect(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, uint64_t max_bytes,
		       struct cand **ret)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	struct cand *v = NULL;
	size_t n = 0, cap = 0;

	*ret = NULL;
	if (!data)
		return 0;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize && n < ELFSYM_MAX_SYMS; i++) {
		const char *name;
		GElf_Sym s;
		int type;

		if (!gelf_getsym(data, i, &s)) /* past the data: a lying sh_size */
			break;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    !s.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (max_bytes && (n + 1) * sizeof(*v) > max_bytes) {
			free(v);
			return -ENOSPC;
		}
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			struct cand *q = realloc(v, ncap * sizeof(*v));

			if (!q) {
				free(v);
				return -ENOMEM;
			}
			v = q;
			cap = ncap;
		}
		v[n++] = make_cand(&s, name, i);
	}
	*ret = v;
	return n;
}

/* By start, then the preferred alias first (perf's choose_best_symbol). */
static int cmp_cand(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	if (a->under != b->under)
		return a->under < b->under ? -1 : 1;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The table of type into es->syms, one name per start; the number added, or -errno. */
static ssize_t load_table(Elf *elf, Elf64_Word type, uint64_t max_bytes, struct elfsym *es)
{
	struct cand *v;
	GElf_Shdr sh;
	Elf_Scn *scn = find_table(elf, type, &sh);
	ssize_t n = scn ? collect(elf, scn, &sh, max_bytes, &v) : 0, added = 0;

	if (n <= 0)
		return n;
	qsort(v, n, sizeof(*v), cmp_cand);
	for (ssize_t i = 0; i < n; i++) {
		if (i > 0 && v[i].start == v[i - 1].start)
			continue;
		if ((added & 4095) == 0 && max_bytes && symtab_memory(es->syms) > max_bytes) {
			added = -ENOSPC;
			break;
		}
		if (symtab_add(es->syms, v[i].start, v[i].size, v[i].name, v[i].len) == -ENOMEM) {
			added = -ENOMEM;
			break;
		}
		added++;
	}
	free(v);
	return added;
}

struct plt_rel {
	uint64_t got, addend;
	const char *name; /* the import's, an IFUNC's, or NULL */
};

static int cmp_plt(const void *pa, const void *pb)
{
	const struct plt_rel *a = pa, *b = pb;

	return a->got < b->got ? -1 : a->got > b->got;
}

struct plt_sections {
	GElf_Shdr plt, rel, syms;
	Elf_Scn *rel_scn, *syms_scn;
	bool has_plt, has_sec;
};

static bool find_plt(Elf *elf, struct plt_sections *p)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;

	memset(p, 0, sizeof(*p));
	if (!gelf_getehdr(elf, &eh) || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_386) ||
	    elf_getshdrstrndx(elf, &shstrndx) < 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (sh.sh_type == SHT_PROGBITS && !strcmp(name, ".plt.sec")) {
			p->plt = sh;
			p->has_sec = true;
		} else if (sh.sh_type == SHT_PROGBITS && !strcmp(name, ".plt") && !p->has_sec) {
			p->plt = sh;
			p->has_plt = true;
		} else if ((sh.sh_type == SHT_RELA && !strcmp(name, ".rela.plt")) ||
			   (sh.sh_type == SHT_REL && !strcmp(name, ".rel.plt"))) {
			p->rel = sh;
			p->rel_scn = scn;
		}
	}
	if (!p->rel_scn || !p->rel.sh_entsize || !(p->has_plt || p->has_sec))
		return false;
	p->syms_scn = elf_getscn(elf, p->rel.sh_link);
	return p->syms_scn && gelf_getshdr(p->syms_scn, &p->syms) &&
	       p->syms.sh_type == SHT_DYNSYM && p->syms.sh_entsize &&
	       section_fits(elf, p->syms.sh_link);
}

/* The relocations of the PLT with their imports' names; their count. */
static size_t read_plt_rels(Elf *elf, const struct plt_sections *p, struct plt_rel *v, size_t max)
{
	Elf_Data *rd = elf_getdata(p->rel_scn, NULL), *sd = elf_getdata(p->syms_scn, NULL);
	size_t n = 0;

	if (!rd || !rd->d_buf || !sd || !sd->d_buf)
		return 0;
	for (; n < max && n < p->rel.sh_size / p->rel.sh_entsize; n++) {
		GElf_Rela ra = {0};
		GElf_Rel r;
		GElf_Sym s;
		size_t idx;

		if (p->rel.sh_type == SHT_RELA ? !gelf_getrela(rd, n, &ra)
					       : !gelf_getrel(rd, n, &r))
			break;
		if (p->rel.sh_type == SHT_REL)
			ra = (GElf_Rela){.r_offset = r.r_offset, .r_info = r.r_info};
		idx = GELF_R_SYM(ra.r_info);
		v[n] = (struct plt_rel){.got = ra.r_offset, .addend = ra.r_addend};
		if (idx && gelf_getsym(sd, idx, &s))
			v[n].name = elf_strptr(elf, p->syms.sh_link, s.st_name);
		if (v[n].name && !*v[n].name)
			v[n].name = NULL;
	}
	return n;
}

/* NAME@plt for the PLT entries, into the finished es->syms (finish it again after). */
static int load_plt(Elf *elf, struct elfsym *es)
{
	struct plt_sections p;
	struct plt_rel *v;
	uint64_t base, room;
	size_t n;
	int err = 0;

	if (!find_plt(elf, &p))
		return 0;
	base = p.plt.sh_addr + (p.has_sec ? 0 : PLT_ENTRY);
	if (base < p.plt.sh_addr || p.plt.sh_size > UINT64_MAX - p.plt.sh_addr ||
	    base >= p.plt.sh_addr + p.plt.sh_size)
		return 0;
	room = (p.plt.sh_addr + p.plt.sh_size - base) / PLT_ENTRY;
	n = room < ELFSYM_MAX_PLT ? room : ELFSYM_MAX_PLT;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = read_plt_rels(elf, &p, v, n);
	/* x86 puts IRELATIVE relocations after the others, not in PLT order. */
	qsort(v, n, sizeof(*v), cmp_plt);
	for (size_t i = 0; i < n; i++) {
		const struct symtab_sym *s =
		    v[i].name ? NULL : symtab_lookup(es->syms, v[i].addend);

		if (s && s->start == v[i].addend)
			v[i].name = s->name; /* names in the symtab's arena never move */
	}
	for (size_t i = 0; i < n && err != -ENOMEM; i++) {
		char name[ELFSYM_MAX_NAME + 8];
		int len = v[i].name ? snprintf(name, sizeof(name), "%.*s@plt", ELFSYM_MAX_NAME - 4,
					       v[i].name)
				    : snprintf(name, sizeof(name), "offset_%#llx@plt",
					       (unsigned long long)(base + i * PLT_ENTRY));

		err = symtab_add(es->syms, base + i * PLT_ENTRY, PLT_ENTRY, name,
				 len < (int)sizeof(name) ? len : (int)sizeof(name) - 1);
	}
	free(v);
	return err == -ENOMEM ? err : 0;
}

static int load(Elf *elf, uint64_t max_bytes, bool ident_only, struct elfsym *es)
{
	size_t nph = 0;
	ssize_t n;
	int err;

	memset(es, 0, sizeof(*es));
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph) < 0)
		return -ENOEXEC;
	read_loads(elf, nph, es);
	read_build_id(elf, nph, es);
	read_sections(elf, es);
	if (ident_only)
		return 0;
	err = symtab_new(ELFSYM_MAX_SYMS, &es->syms);
	if (err < 0)
		return err;
	/* perf's rule: .symtab when there is one, else .dynsym (its subset in a linked file). */
	n = load_table(elf, SHT_SYMTAB, max_bytes, es);
	es->has_symtab = n > 0;
	if (n == 0)
		n = load_table(elf, SHT_DYNSYM, max_bytes, es);
	if (n < 0)
		return n;
	err = symtab_finish(es->syms, ELFSYM_MAX_IMPLICIT);
	if (err == 0)
		err = load_plt(elf, es);
	if (err == 0)
		err = symtab_finish(es->syms, ELFSYM_MAX_IMPLICIT);
	/* After finishing: the lookup index it builds counts too. */
	if (err == 0 && max_bytes && symtab_memory(es->syms) > max_bytes)
		return -ENOSPC;
	return err;
}

static int load_and_end(Elf *elf, uint64_t max_bytes, bool ident_only, struct elfsym *es)
{
	int err;

	if (!elf)
		return -EINVAL;
	err = load(elf, max_bytes, ident_only, es);
	elf_end(elf);
	if (err < 0)
		elfsym_release(es);
	return err;
}

int elfsym_load_fd(int fd, uint64_t max_bytes, struct elfsym *es)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	/* ELF_C_READ: libelf preads what it needs into its own memory. Never a mapping: the
	 * file belongs to the target, which may truncate it while it is parsed (SIGBUS). */
	return load_and_end(elf_begin(fd, ELF_C_READ, NULL), max_bytes, false, es);
}

int elfsym_ident_fd(int fd, struct elfsym *es)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	return load_and_end(elf_begin(fd, ELF_C_READ, NULL), 0, true, es);
}

int elfsym_load_mem(const void *buf, size_t len, uint64_t max_bytes, struct elfsym *es)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	/* libelf does not write through the image in read mode. */
	return load_and_end(elf_memory((char *)buf, len), max_bytes, false, es);
}

/* The bytes of elf's section name (not NOBITS) into a malloc'd copy. */
static int read_section(Elf *elf, const char *name, size_t max_bytes, uint8_t **data, size_t *len,
			uint64_t *addr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(n, name))
			continue;
		if (sh.sh_type == SHT_NOBITS)
			return -ENOENT;
		if (sh.sh_size > max_bytes)
			return -E2BIG;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			return -EINVAL;
		*data = malloc(d->d_size ? d->d_size : 1);
		if (!*data)
			return -ENOMEM;
		memcpy(*data, d->d_buf, d->d_size);
		*len = d->d_size;
		*addr = sh.sh_addr;
		return 0;
	}
	return -ENOENT;
}

int elfsym_section_fd(int fd, const char *name, size_t max_bytes, uint8_t **data, size_t *len,
		      uint64_t *addr)
{
	Elf *elf;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EINVAL;
	err = read_section(elf, name, max_bytes, data, len, addr);
	elf_end(elf);
	return err;
}

void elfsym_release(struct elfsym *es)
{
	symtab_free(es->syms);
	memset(es, 0, sizeof(*es));
}

uint64_t elfsym_vaddr(const struct elfsym *es, uint64_t off)
{
	for (int i = 0; i < es->nloads; i++)
		if (off >= es->loads[i].offset && off - es->loads[i].offset < es->loads[i].filesz)
			return off - es->loads[i].offset + es->loads[i].vaddr;
	return off;
}

bool elfsym_same_build_id(const struct elfsym *a, const struct elfsym *b)
{
	return a->build_id_len && a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len);
}

void elfsym_build_id_hex(const struct elfsym *es, char *buf, size_t len)
{
	size_t w = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < es->build_id_len && w + 3 <= len; i++)
		w += snprintf(buf + w, len - w, "%02x", es->build_id[i]);
}
