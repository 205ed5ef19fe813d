// SPDX-License-Identifier: GPL-2.0-only
/* elfsym.c: ELF function symbols with libelf (see include/kprof/elfsym.h). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <string.h>

#include "kprof/elfsym.h"

/* Symbols of size 0 (hand-written assembly) reach the next symbol, at most this far. */
#define ELFSYM_MAX_IMPLICIT 4096

/* Section data is read into memory whole (libelf in read mode): a symbol or string table
 * larger than this is skipped. */
#define ELFSYM_MAX_SECTION (256u << 20)

static bool section_fits(Elf *elf, size_t idx)
{
	Elf_Scn *scn = elf_getscn(elf, idx);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && sh.sh_size <= ELFSYM_MAX_SECTION;
}

static int load(Elf *elf, uint64_t max_bytes, struct elfsym *es)
{
	Elf_Scn *scn = NULL;
	size_t nph = 0;
	int err;

	memset(es, 0, sizeof(*es));
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph) < 0)
		return -ENOEXEC;
	for (size_t i = 0; i < nph && es->nloads < ELFSYM_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			es->loads[es->nloads++] =
			    (struct elfsym_load){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
	err = symtab_new(ELFSYM_MAX_SYMS, &es->syms);
	if (err < 0)
		return err;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize ||
		    sh.sh_size > ELFSYM_MAX_SECTION || !section_fits(elf, sh.sh_link) ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;
			GElf_Sym s;
			int type;

			if (!gelf_getsym(data, i, &s)) /* past the data: a lying sh_size */
				break;
			if ((i & 4095) == 0 && max_bytes && symtab_memory(es->syms) > max_bytes)
				return -ENOSPC;
			type = GELF_ST_TYPE(s.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (name && *name &&
			    symtab_add(es->syms, s.st_value, s.st_size, name,
				       strnlen(name, ELFSYM_MAX_NAME)) == -ENOMEM)
				return -ENOMEM;
		}
	}
	err = symtab_finish(es->syms, ELFSYM_MAX_IMPLICIT);
	/* After finishing: the lookup index it builds counts too. */
	if (err == 0 && max_bytes && symtab_memory(es->syms) > max_bytes)
		return -ENOSPC;
	return err;
}

static int load_and_end(Elf *elf, uint64_t max_bytes, struct elfsym *es)
{
	int err;

	if (!elf)
		return -EINVAL;
	err = load(elf, max_bytes, es);
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
	return load_and_end(elf_begin(fd, ELF_C_READ, NULL), max_bytes, es);
}

int elfsym_load_mem(const void *buf, size_t len, uint64_t max_bytes, struct elfsym *es)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	/* libelf does not write through the image in read mode. */
	return load_and_end(elf_memory((char *)buf, len), max_bytes, es);
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
