// SPDX-License-Identifier: GPL-2.0-only
/* test_elfsym.c: ELF symbol loading (daemon/lib/elfsym.c) on real ELF files and on corrupt ones.
 *
 * The test program reads its own executable (built with symbols): its own functions must be
 * found at the addresses the linker gave them. Corrupt images (truncated, flipped bytes, lying
 * section sizes) must give an error or a consistent table, never a crash (ASan watches).
 * Small images written here check what perf does with names: one name of the aliases at an
 * address, .symtab over .dynsym, NAME@plt for PLT entries; the build id and .gnu_debuglink read
 * for finding a debug file (hostile debuglinks ignored); the vdso of this process and, when
 * libc6-dbg is installed, libc and its debug file.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <elf.h>
#include <sys/auxv.h>
#include <zlib.h>

#include "kprof/cleanup.h"
#include "kprof/elfsym.h"

/* A function with a known name to look up; noinline so it exists. */
__attribute__((noinline)) int elfsym_test_marker(int x)
{
	return x * 3 + 1;
}

static uint8_t *read_self(size_t *len)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *buf;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, st.st_size, 0), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

/* The marker's link-time address: its runtime address minus the load bias of this PIE. */
static uint64_t marker_vaddr(const struct elfsym *es)
{
	const struct symtab_sym *s;
	size_t n = symtab_count(es->syms);

	for (size_t i = 0; i < n; i++) {
		s = symtab_at(es->syms, i);
		if (!strcmp(s->name, "elfsym_test_marker"))
			return s->start;
	}
	return 0;
}

static void test_self_fd(void **state)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct elfsym es;
	const struct symtab_sym *s;
	uint64_t v;

	(void)state;
	assert_int_equal(elfsym_load_fd(fd, 0, &es), 0);
	close(fd);
	assert_true(es.nloads >= 2);
	assert_true(symtab_count(es.syms) > 10);
	v = marker_vaddr(&es);
	assert_true(v != 0);
	s = symtab_lookup(es.syms, v + 1);
	assert_non_null(s);
	assert_string_equal(s->name, "elfsym_test_marker");
	s = symtab_lookup(es.syms, v);
	assert_string_equal(s->name, "elfsym_test_marker");
	elfsym_release(&es);
}

static void test_self_mem_and_vaddr(void **state)
{
	size_t len;
	uint8_t *buf = read_self(&len);
	struct elfsym es;
	uint64_t v;

	(void)state;
	assert_int_equal(elfsym_load_mem(buf, len, 0, &es), 0);
	v = marker_vaddr(&es);
	assert_true(v != 0);
	/* Offset -> vaddr -> offset round trip through the segment holding the marker. */
	for (int i = 0; i < es.nloads; i++) {
		const struct elfsym_load *l = &es.loads[i];

		if (v >= l->vaddr && v - l->vaddr < l->filesz)
			assert_int_equal(elfsym_vaddr(&es, v - l->vaddr + l->offset), v);
	}
	elfsym_release(&es);
	free(buf);
}

static void test_not_elf(void **state)
{
	static const char text[] = "#!/bin/sh\necho not an elf file\n";
	struct elfsym es;

	(void)state;
	assert_int_equal(elfsym_load_mem(text, sizeof(text), 0, &es), -ENOEXEC);
	assert_int_equal(elfsym_load_mem("", 0, 0, &es) < 0, 1);
	assert_null(es.syms);
}

/* Truncations at many lengths and random corruption: an error or a sane table. */
static void test_corrupt(void **state)
{
	size_t len;
	uint8_t *orig = read_self(&len), *buf = malloc(len);
	unsigned seed = 12345;

	(void)state;
	assert_non_null(buf);
	for (size_t cut = 0; cut < len; cut += len / 97 + 1) {
		struct elfsym es;

		memcpy(buf, orig, cut);
		if (elfsym_load_mem(buf, cut, 0, &es) == 0)
			elfsym_release(&es);
	}
	for (int round = 0; round < 200; round++) {
		struct elfsym es;

		memcpy(buf, orig, len);
		for (int k = 0; k < 1 + round % 16; k++) {
			seed = seed * 1103515245 + 12345;
			/* Mostly headers and section tables, where lies hurt. */
			size_t at = (round & 1) ? (seed >> 8) % 256 : (seed >> 8) % len;

			buf[at] ^= (uint8_t)(seed >> 24) | 1;
		}
		if (elfsym_load_mem(buf, len, 0, &es) == 0) {
			size_t n = symtab_count(es.syms);

			for (size_t i = 0; i < n; i++)
				assert_non_null(symtab_at(es.syms, i)->name);
			elfsym_release(&es);
		}
	}
	free(buf);
	free(orig);
}

/* A minimal ELF64 image: .symtab with nsyms functions whose names all point at one string of
 * name_len bytes in .strtab (a hostile file shares one huge name among many symbols). */
static uint8_t *make_elf(size_t nsyms, size_t name_len, size_t *len)
{
	size_t symoff = sizeof(Elf64_Ehdr), symsz = (nsyms + 1) * sizeof(Elf64_Sym);
	size_t stroff = symoff + symsz, strsz = name_len + 2;
	size_t shoff = (stroff + strsz + 7) & ~(size_t)7;
	uint8_t *b;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	Elf64_Sym *sym;

	*len = shoff + 3 * sizeof(Elf64_Shdr);
	b = calloc(1, *len);
	assert_non_null(b);
	eh = (Elf64_Ehdr *)b;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 3;
	sym = (Elf64_Sym *)(b + symoff);
	for (size_t i = 1; i <= nsyms; i++) {
		sym[i].st_name = 1;
		sym[i].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		sym[i].st_shndx = 1;
		sym[i].st_value = 0x1000 + 16 * i;
		sym[i].st_size = 16;
	}
	memset(b + stroff + 1, 'n', name_len);
	sh = (Elf64_Shdr *)(b + shoff);
	sh[1] = (Elf64_Shdr){.sh_type = SHT_SYMTAB,
			     .sh_offset = symoff,
			     .sh_size = symsz,
			     .sh_link = 2,
			     .sh_entsize = sizeof(Elf64_Sym),
			     .sh_addralign = 8};
	sh[2] = (Elf64_Shdr){
	    .sh_type = SHT_STRTAB, .sh_offset = stroff, .sh_size = strsz, .sh_addralign = 1};
	return b;
}

/* Names are cut at ELFSYM_MAX_NAME: 200 symbols sharing a 4 MB name cost kilobytes each,
 * not megabytes. */
static void test_long_names_capped(void **state)
{
	size_t len;
	uint8_t *b = make_elf(200, 4u << 20, &len);
	struct elfsym es;

	(void)state;
	assert_int_equal(elfsym_load_mem(b, len, 0, &es), 0);
	assert_int_equal(symtab_count(es.syms), 200);
	for (size_t i = 0; i < 200; i++)
		assert_int_equal(strlen(symtab_at(es.syms, i)->name), ELFSYM_MAX_NAME);
	assert_true(symtab_memory(es.syms) < (2u << 20)); /* 4 MB a symbol uncapped */
	elfsym_release(&es);
	free(b);
}

/* A table that would exceed the caller's budget is refused as a whole. */
static void test_budget(void **state)
{
	size_t len;
	uint8_t *b = make_elf(20000, 100, &len);
	struct elfsym es;

	(void)state;
	assert_int_equal(elfsym_load_mem(b, len, 64 * 1024, &es), -ENOSPC);
	assert_null(es.syms);
	assert_int_equal(elfsym_load_mem(b, len, 64u << 20, &es), 0);
	assert_int_equal(symtab_count(es.syms), 20000);
	elfsym_release(&es);
	free(b);
}

/* ---- a small ELF writer: sections given by the test, then .shstrtab and the headers ---- */

struct tsec {
	const char *name;
	uint32_t type;
	const void *data;
	size_t size;
	uint32_t link; /* section index: 1 is the first of secs */
	uint64_t entsize, addr;
};

static uint8_t *build_elf(const struct tsec *secs, size_t n, uint16_t machine, size_t *len)
{
	size_t off = sizeof(Elf64_Ehdr), shstr_len = 1, shoff, *offs = calloc(n, sizeof(size_t));
	uint8_t *b;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	char *shstr;

	assert_non_null(offs);
	for (size_t i = 0; i < n; i++) {
		offs[i] = off;
		off = (off + secs[i].size + 7) & ~(size_t)7;
		shstr_len += strlen(secs[i].name) + 1;
	}
	shstr_len += sizeof(".shstrtab");
	shoff = (off + shstr_len + 7) & ~(size_t)7;
	*len = shoff + (n + 2) * sizeof(Elf64_Shdr);
	b = calloc(1, *len);
	assert_non_null(b);
	eh = (Elf64_Ehdr *)b;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = machine;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = n + 2;
	eh->e_shstrndx = n + 1;
	sh = (Elf64_Shdr *)(b + shoff);
	shstr = (char *)b + off;
	shstr_len = 1;
	for (size_t i = 0; i < n; i++) {
		memcpy(b + offs[i], secs[i].data, secs[i].size);
		sh[i + 1] = (Elf64_Shdr){.sh_name = shstr_len,
					 .sh_type = secs[i].type,
					 .sh_addr = secs[i].addr,
					 .sh_offset = offs[i],
					 .sh_size = secs[i].size,
					 .sh_link = secs[i].link,
					 .sh_entsize = secs[i].entsize,
					 .sh_addralign = secs[i].type == SHT_NOTE ? 4 : 8};
		strcpy(shstr + shstr_len, secs[i].name);
		shstr_len += strlen(secs[i].name) + 1;
	}
	strcpy(shstr + shstr_len, ".shstrtab");
	sh[n + 1] = (Elf64_Shdr){.sh_name = shstr_len,
				 .sh_type = SHT_STRTAB,
				 .sh_offset = off,
				 .sh_size = shstr_len + sizeof(".shstrtab"),
				 .sh_addralign = 1};
	free(offs);
	return b;
}

struct tsym_def {
	const char *name;
	uint64_t value, size;
	int bind, type;
};

/* A symbol table (entry 0 empty) and its string table for defs, in buffers the caller frees. */
static void make_syms(const struct tsym_def *defs, size_t n, Elf64_Sym **syms, char **str,
		      size_t *strsz)
{
	size_t w = 1;

	*syms = calloc(n + 1, sizeof(Elf64_Sym));
	*str = calloc(1, 4096);
	assert_non_null(*syms);
	assert_non_null(*str);
	for (size_t i = 0; i < n; i++) {
		(*syms)[i + 1] = (Elf64_Sym){
		    .st_name = w,
		    .st_info = ELF64_ST_INFO(defs[i].bind, defs[i].type ? defs[i].type : STT_FUNC),
		    .st_shndx = 1,
		    .st_value = defs[i].value,
		    .st_size = defs[i].size};
		strcpy(*str + w, defs[i].name);
		w += strlen(defs[i].name) + 1;
	}
	*strsz = w;
}

static const char *name_at(const struct elfsym *es, uint64_t addr)
{
	const struct symtab_sym *s = symtab_lookup(es->syms, addr);

	return s ? s->name : "(none)";
}

/* Of the aliases at one address, perf's choice: sized, not weak, global, fewer underscores,
 * longer, first in the table (libc's .symtab order, as here). */
static void test_aliases(void **state)
{
	static const struct tsym_def defs[] = {
	    {"clock_gettime", 0x1000, 16, STB_WEAK, 0},
	    {"__vdso_clock_gettime", 0x1000, 16, STB_GLOBAL, 0},
	    {"__GI___clock_gettime", 0x2000, 16, STB_LOCAL, 0},
	    {"__clock_gettime", 0x2000, 16, STB_GLOBAL, 0},
	    {"clock_gettime@@GLIBC_2.17", 0x2000, 16, STB_GLOBAL, 0},
	    {"clock_gettime@GLIBC_2.2.5", 0x2000, 16, STB_GLOBAL, 0}, /* as long: the first wins */
	    {"zero_size", 0x3000, 0, STB_GLOBAL, 0},
	    {"sized_weak", 0x3000, 16, STB_WEAK, 0},
	    {"local_only", 0x4000, 16, STB_LOCAL, 0},
	    {"not_a_function", 0x5000, 16, STB_GLOBAL, STT_OBJECT},
	};
	size_t n = ARRAY_SIZE(defs), strsz, len;
	Elf64_Sym *syms;
	char *str;
	struct elfsym es;
	uint8_t *b;

	(void)state;
	make_syms(defs, n, &syms, &str, &strsz);
	b = build_elf(
	    (struct tsec[]){
		{".symtab", SHT_SYMTAB, syms, (n + 1) * sizeof(*syms), 2, sizeof(*syms), 0},
		{".strtab", SHT_STRTAB, str, strsz, 0, 0, 0},
	    },
	    2, EM_X86_64, &len);
	assert_int_equal(elfsym_load_mem(b, len, 0, &es), 0);
	assert_true(es.has_symtab);
	assert_int_equal(symtab_count(es.syms), 4); /* one name per address, functions only */
	assert_string_equal(name_at(&es, 0x1008), "__vdso_clock_gettime");
	assert_string_equal(name_at(&es, 0x2000), "clock_gettime@@GLIBC_2.17");
	assert_string_equal(name_at(&es, 0x3000), "sized_weak");
	assert_string_equal(name_at(&es, 0x4000), "local_only");
	assert_string_equal(name_at(&es, 0x5000), "(none)");
	assert_int_equal(es.build_id_len, 0);
	assert_string_equal(es.debuglink, "");
	elfsym_release(&es);
	free(b);
	free(syms);
	free(str);
}

/* perf's rule: .symtab when there is one (a superset of .dynsym in a linked file), else .dynsym. */
static void test_symtab_over_dynsym(void **state)
{
	static const struct tsym_def local[] = {{"local_fn", 0x1000, 16, STB_LOCAL, 0}};
	static const struct tsym_def dyn[] = {{"exported", 0x2000, 16, STB_GLOBAL, 0}};
	Elf64_Sym *ls, *ds;
	char *lstr, *dstr;
	size_t lsz, dsz, len;
	struct elfsym es;
	uint8_t *b;

	(void)state;
	make_syms(local, 1, &ls, &lstr, &lsz);
	make_syms(dyn, 1, &ds, &dstr, &dsz);
	b = build_elf(
	    (struct tsec[]){
		{".dynsym", SHT_DYNSYM, ds, 2 * sizeof(*ds), 2, sizeof(*ds), 0},
		{".dynstr", SHT_STRTAB, dstr, dsz, 0, 0, 0},
		{".symtab", SHT_SYMTAB, ls, 2 * sizeof(*ls), 4, sizeof(*ls), 0},
		{".strtab", SHT_STRTAB, lstr, lsz, 0, 0, 0},
	    },
	    4, EM_X86_64, &len);
	assert_int_equal(elfsym_load_mem(b, len, 0, &es), 0);
	assert_true(es.has_symtab);
	assert_string_equal(name_at(&es, 0x1000), "local_fn");
	assert_string_equal(name_at(&es, 0x2000), "(none)");
	elfsym_release(&es);
	free(b);
	/* Stripped: .dynsym alone. */
	b = build_elf(
	    (struct tsec[]){
		{".dynsym", SHT_DYNSYM, ds, 2 * sizeof(*ds), 2, sizeof(*ds), 0},
		{".dynstr", SHT_STRTAB, dstr, dsz, 0, 0, 0},
	    },
	    2, EM_X86_64, &len);
	assert_int_equal(elfsym_load_mem(b, len, 0, &es), 0);
	assert_false(es.has_symtab);
	assert_string_equal(name_at(&es, 0x2000), "exported");
	elfsym_release(&es);
	free(b);
	free(ls);
	free(ds);
	free(lstr);
	free(dstr);
}

/* A build id note and a .gnu_debuglink of the given bytes. */
static uint8_t *make_debug_refs(const void *link, size_t link_len, size_t *len)
{
	static const struct {
		Elf64_Nhdr nh;
		char name[4];
		uint8_t id[20];
	} note = {{4, 20, NT_GNU_BUILD_ID}, "GNU", {0x93, 0xac, 0x61, 0xec, 0x5a, 0x8e, 0xb1,
						    0x39, 0x6f, 0x9f, 0xbd, 0x35, 0x0e, 0x31,
						    0x69, 0xa5, 0x58, 0x52, 0x8a, 0x40}};

	return build_elf(
	    (struct tsec[]){
		{".note.gnu.build-id", SHT_NOTE, &note, sizeof(note), 0, 0, 0},
		{".gnu_debuglink", SHT_PROGBITS, link, link_len, 0, 0, 0},
	    },
	    2, EM_X86_64, len);
}

static void test_build_id_debuglink(void **state)
{
	static const char good[] = "libx.so.debug\0\0\0\x78\x56\x34\x12";
	static const char *const bad[] = {
	    "a/b.debug\0\0\0\x78\x56\x34\x12", /* a path, not a file name */
	    "..\0\0\x78\x56\x34\x12",	       /* a directory */
	    "libx.so.debug\0\0\0\x78\x56",     /* no room for the CRC */
	    "\0\0\0\0\x78\x56\x34\x12",	       /* no name */
	};
	static const size_t bad_len[] = {16, 8, 18, 8};
	char hex[2 * ELFSYM_BUILD_ID_MAX + 1];
	struct elfsym es, es2;
	uint8_t *b;
	size_t len;

	(void)state;
	b = make_debug_refs(good, sizeof(good) - 1, &len);
	assert_int_equal(elfsym_load_mem(b, len, 0, &es), 0);
	assert_int_equal(es.build_id_len, 20);
	elfsym_build_id_hex(&es, hex, sizeof(hex));
	assert_string_equal(hex, "93ac61ec5a8eb1396f9fbd350e3169a558528a40");
	assert_string_equal(es.debuglink, "libx.so.debug");
	assert_int_equal(es.debuglink_crc, 0x12345678);
	assert_false(es.has_symtab);
	assert_int_equal(symtab_count(es.syms), 0);
	assert_int_equal(elfsym_load_mem(b, len, 0, &es2), 0);
	assert_true(elfsym_same_build_id(&es, &es2));
	es2.build_id[19] ^= 1;
	assert_false(elfsym_same_build_id(&es, &es2));
	elfsym_release(&es2);
	elfsym_release(&es);
	free(b);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		b = make_debug_refs(bad[i], bad_len[i], &len);
		assert_int_equal(elfsym_load_mem(b, len, 0, &es), 0);
		assert_string_equal(es.debuglink, "");
		assert_int_equal(es.build_id_len, 20); /* the note is still read */
		assert_int_equal(es.debuglink_bad, i < 2); /* a path out of the debug directories */
		elfsym_release(&es);
		free(b);
	}
}

/* has_dwarf: .debug_info or .debug_line with bytes (not a debug file's NOBITS copy of code). */
static void test_has_dwarf(void **state)
{
	static const char dwarf[16] = "dwarf bytes";
	static const char *const names[] = {".debug_info", ".debug_line", ".debug_str", ".text"};
	static const uint32_t types[] = {SHT_PROGBITS, SHT_NOBITS};
	struct elfsym es;
	uint8_t *b;
	size_t len;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		for (size_t t = 0; t < ARRAY_SIZE(types); t++) {
			b = build_elf((struct tsec[]){{names[i], types[t], dwarf, sizeof(dwarf), 0, 0, 0}},
				      1, EM_X86_64, &len);
			assert_int_equal(elfsym_load_mem(b, len, 0, &es), 0);
			assert_int_equal(es.has_dwarf, i < 2 && types[t] == SHT_PROGBITS);
			elfsym_release(&es);
			free(b);
		}
}

/* NAME@plt for each PLT entry, in GOT slot order; an IRELATIVE one after its IFUNC. */
static void test_plt(void **state)
{
	static const struct tsym_def dyn[] = {{"puts", 0, 0, STB_GLOBAL, 0},
					      {"sin", 0, 0, STB_GLOBAL, 0}};
	static const struct tsym_def defs[] = {{"_init", 0x1000, 0, STB_GLOBAL, 0},
					       {"strlen_ifunc", 0x5000, 16, STB_LOCAL, 0},
					       {"after", 0x1200, 16, STB_GLOBAL, 0}};
	/* Not in PLT order: the IRELATIVE ones come last in a real .rela.plt. */
	const Elf64_Rela rela[] = {
	    {0x4018, ELF64_R_INFO(1, R_X86_64_JUMP_SLOT), 0},
	    {0x4030, ELF64_R_INFO(0, R_X86_64_IRELATIVE), 0x5000},
	    {0x4038, ELF64_R_INFO(0, R_X86_64_IRELATIVE), 0x6000},
	    {0x4020, ELF64_R_INFO(2, R_X86_64_JUMP_SLOT), 0},
	};
	uint8_t plt[16 * 5] = {0};
	Elf64_Sym *ds, *ss;
	char *dstr, *sstr;
	size_t dsz, ssz, len;
	struct elfsym es;
	uint8_t *b;

	(void)state;
	make_syms(dyn, 2, &ds, &dstr, &dsz);
	make_syms(defs, 3, &ss, &sstr, &ssz);
	b = build_elf(
	    (struct tsec[]){
		{".dynsym", SHT_DYNSYM, ds, 3 * sizeof(*ds), 2, sizeof(*ds), 0},
		{".dynstr", SHT_STRTAB, dstr, dsz, 0, 0, 0},
		{".rela.plt", SHT_RELA, rela, sizeof(rela), 1, sizeof(*rela), 0},
		{".plt", SHT_PROGBITS, plt, sizeof(plt), 0, 16, 0x1020},
		{".symtab", SHT_SYMTAB, ss, 4 * sizeof(*ss), 6, sizeof(*ss), 0},
		{".strtab", SHT_STRTAB, sstr, ssz, 0, 0, 0},
	    },
	    6, EM_X86_64, &len);
	assert_int_equal(elfsym_load_mem(b, len, 0, &es), 0);
	assert_string_equal(name_at(&es, 0x1000), "_init");
	assert_string_equal(name_at(&es, 0x1020), "_init"); /* the PLT's header */
	assert_string_equal(name_at(&es, 0x1030), "puts@plt");
	assert_string_equal(name_at(&es, 0x104f), "sin@plt");
	assert_string_equal(name_at(&es, 0x1050), "strlen_ifunc@plt");
	assert_string_equal(name_at(&es, 0x1060), "offset_0x1060@plt");
	assert_string_equal(name_at(&es, 0x1070), "(none)");
	elfsym_release(&es);
	free(b);
	/* Not x86: no PLT names (the entry sizes differ). */
	b = build_elf(
	    (struct tsec[]){
		{".dynsym", SHT_DYNSYM, ds, 3 * sizeof(*ds), 2, sizeof(*ds), 0},
		{".dynstr", SHT_STRTAB, dstr, dsz, 0, 0, 0},
		{".rela.plt", SHT_RELA, rela, sizeof(rela), 1, sizeof(*rela), 0},
		{".plt", SHT_PROGBITS, plt, sizeof(plt), 0, 16, 0x1020},
		{".symtab", SHT_SYMTAB, ss, 4 * sizeof(*ss), 6, sizeof(*ss), 0},
		{".strtab", SHT_STRTAB, sstr, ssz, 0, 0, 0},
	    },
	    6, EM_AARCH64, &len);
	assert_int_equal(elfsym_load_mem(b, len, 0, &es), 0);
	assert_string_equal(name_at(&es, 0x1030), "_init");
	elfsym_release(&es);
	free(b);
	free(ds);
	free(ss);
	free(dstr);
	free(sstr);
}

/* The vdso this process runs with: parsed from memory (a copy), its exported functions named
 * by their global __vdso_ names, not by their weak aliases. */
static void test_vdso(void **state)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	size_t len;
	struct elfsym es;
	void *copy;
	bool found = false;

	(void)state;
	if (!base) {
		skip();
		return;
	}
	/* The image ends with its section headers. */
	len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	copy = malloc(len);
	assert_non_null(copy);
	memcpy(copy, (const void *)base, len);
	assert_int_equal(elfsym_load_mem(copy, len, 0, &es), 0);
	for (size_t i = 0; i < symtab_count(es.syms); i++) {
		const char *name = symtab_at(es.syms, i)->name;

		assert_int_equal(strncmp(name, "__vdso_", 7), 0);
		found |= !strcmp(name, "__vdso_clock_gettime");
	}
	assert_true(found);
	assert_true(es.build_id_len > 0);
	elfsym_release(&es);
	free(copy);
}

static uint32_t file_crc(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uLong crc = crc32(0L, Z_NULL, 0);
	char buf[65536];
	ssize_t n;

	assert_true(fd >= 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, (const Bytef *)buf, n);
	close(fd);
	return crc;
}

/* The real thing when libc6-dbg is installed: libc's build id names its debug file, whose
 * .symtab has libc's local functions; the debuglink's CRC is that file's. */
static void test_libc_debug_file(void **state)
{
	static const char *const libc = "/lib/x86_64-linux-gnu/libc.so.6";
	char hex[2 * ELFSYM_BUILD_ID_MAX + 1], path[256];
	struct elfsym es, ds;
	int fd = open(libc, O_RDONLY | O_CLOEXEC);
	bool found = false;

	(void)state;
	if (fd < 0) {
		skip();
		return;
	}
	assert_int_equal(elfsym_load_fd(fd, 0, &es), 0);
	close(fd);
	assert_false(es.has_symtab);
	assert_int_equal(es.build_id_len, 20);
	elfsym_build_id_hex(&es, hex, sizeof(hex));
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		elfsym_release(&es);
		skip(); /* libc6-dbg is not installed */
		return;
	}
	assert_int_equal(elfsym_load_fd(fd, 0, &ds), 0);
	close(fd);
	assert_true(ds.has_symtab);
	assert_true(elfsym_same_build_id(&es, &ds));
	assert_true(es.debuglink[0] != '\0');
	assert_int_equal(es.debuglink_crc, file_crc(path));
	for (size_t i = 0; i < symtab_count(ds.syms); i++)
		found |= !strcmp(symtab_at(ds.syms, i)->name, "start_thread");
	assert_true(found);
	elfsym_release(&ds);
	elfsym_release(&es);
}

/* A section's bytes: this test's own .eh_frame (every x86-64 program has one) as readelf would
 * give them; a missing section, one over the bound and NOBITS in a debug file are refused. */
static void test_section(void **state)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	uint8_t *data = NULL;
	size_t len = 0;
	uint64_t addr = 0;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(elfsym_section_fd(fd, ".eh_frame", 1u << 26, &data, &len, &addr), 0);
	assert_true(len > 16 && addr > 0);
	/* its first entry is a CIE: a length, then a zero id, then version 1 */
	assert_int_equal(data[4] | data[5] | data[6] | data[7], 0);
	assert_int_equal(data[8], 1);
	free(data);
	assert_int_equal(elfsym_section_fd(fd, ".no_such_section", 1u << 26, &data, &len, &addr),
			 -ENOENT);
	assert_int_equal(elfsym_section_fd(fd, ".eh_frame", 4, &data, &len, &addr), -E2BIG);
	assert_int_equal(elfsym_section_fd(fd, ".bss", 1u << 26, &data, &len, &addr), -ENOENT);
	close(fd);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(elfsym_section_fd(fd, ".eh_frame", 1u << 26, &data, &len, &addr) < 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_section),
	    cmocka_unit_test(test_self_fd),
	    cmocka_unit_test(test_self_mem_and_vaddr),
	    cmocka_unit_test(test_not_elf),
	    cmocka_unit_test(test_corrupt),
	    cmocka_unit_test(test_long_names_capped),
	    cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_aliases),
	    cmocka_unit_test(test_symtab_over_dynsym),
	    cmocka_unit_test(test_build_id_debuglink),
	    cmocka_unit_test(test_has_dwarf),
	    cmocka_unit_test(test_plt),
	    cmocka_unit_test(test_vdso),
	    cmocka_unit_test(test_libc_debug_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
