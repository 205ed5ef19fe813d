// SPDX-License-Identifier: GPL-2.0-only
/* test_elfsym.c: ELF symbol loading (daemon/lib/elfsym.c) on real ELF files and on corrupt ones.
 *
 * The test program reads its own executable (built with symbols): its own functions must be
 * found at the addresses the linker gave them. Corrupt images (truncated, flipped bytes, lying
 * section sizes) must give an error or a consistent table, never a crash (ASan watches).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <elf.h>

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
	sh[1] = (Elf64_Shdr){.sh_type = SHT_SYMTAB, .sh_offset = symoff, .sh_size = symsz,
			     .sh_link = 2, .sh_entsize = sizeof(Elf64_Sym), .sh_addralign = 8};
	sh[2] = (Elf64_Shdr){.sh_type = SHT_STRTAB, .sh_offset = stroff, .sh_size = strsz,
			     .sh_addralign = 1};
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_self_fd),
	    cmocka_unit_test(test_self_mem_and_vaddr),
	    cmocka_unit_test(test_not_elf),
	    cmocka_unit_test(test_corrupt),
	    cmocka_unit_test(test_long_names_capped),
	    cmocka_unit_test(test_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
