// SPDX-License-Identifier: GPL-2.0-or-later
/* kprof-lines: address -> (function, file, line, inlined frames) of one ELF file, through
 * libbfd (bfd_find_nearest_line, bfd_find_inliner_info), for kprofd's source lines (issue 32,
 * docs/ARCHITECTURE.md §2.6a).
 *
 * Its own program, because libbfd is GPL-3.0-or-later and kprof GPL-2.0-only: kprofd and
 * kprofctl never link it, kprofd runs this program and talks to it over pipes (its licence is
 * GPL-2.0-or-later, so it may link libbfd; it includes no kprof source). And because libbfd's
 * DWARF reader has a long CVE history: the file it reads is hostile input. So it runs with no
 * privileges and in a sandbox the caller (daemon/symbols/srclines.c) set up before exec (another
 * user when run by root, no capabilities, no_new_privs, RLIMIT_AS/CPU/NOFILE/FSIZE/CORE), and it
 * installs a seccomp filter itself once the file is open and before it reads a byte of DWARF: from
 * then on only read, write, lseek/pread on its fds, memory calls and exit are allowed; any other
 * system call kills it. The caller bounds its time per request and kills it on a hang; a crash
 * or a kill loses only that file's lines.
 *
 * Protocol: the file is fd 3, requests on stdin, answers on stdout, one line each.
 *   -> "0xADDR\n"    (an ELF virtual address)
 *   <- "F\tFUNC\tFILE\tLINE\n" per frame, innermost first, then "E\n"; tabs and newlines in
 *      names are replaced by spaces, other control characters by '?', each field cut at 1024
 *      bytes, at most 16 frames (the reader, daemon/lib/srcline.c, refuses anything else).
 * At start it writes "R\n" once the file is open and the sandbox is in place, or "X reason\n"
 * and exits.
 */
#include <bfd.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_FRAMES 16
#define MAX_FIELD 1024 /* bytes of a name, SRCLINE_MAX_FIELD */

static bfd *abfd;
static asymbol **syms;

static void clean(const char *s, char *out)
{
	size_t i = 0;

	for (; s && s[i] && i < MAX_FIELD; i++)
		out[i] = s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ? ' '
			 : (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?'
								      : s[i];
	out[i] = 0;
}

static void load_symbols(void)
{
	long n;

	if (!(bfd_get_file_flags(abfd) & HAS_SYMS))
		return;
	n = bfd_get_symtab_upper_bound(abfd);
	if (n <= 0 || n > (64L << 20))
		return;
	syms = malloc(n);
	if (syms && bfd_canonicalize_symtab(abfd, syms) < 0) {
		free(syms);
		syms = NULL;
	}
}

#define ALLOW(nr)                                                                                  \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                           \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static int sandbox(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    ALLOW(SYS_read),
	    ALLOW(SYS_write),
	    ALLOW(SYS_lseek),
	    ALLOW(SYS_pread64),
	    ALLOW(SYS_fstat),
	    ALLOW(SYS_newfstatat),
	    ALLOW(SYS_mmap),
	    ALLOW(SYS_munmap),
	    ALLOW(SYS_mremap),
	    ALLOW(SYS_brk),
	    ALLOW(SYS_madvise),
	    ALLOW(SYS_close),
	    ALLOW(SYS_exit),
	    ALLOW(SYS_exit_group),
	    ALLOW(SYS_rt_sigreturn),
	    ALLOW(SYS_futex),
	    ALLOW(SYS_sysinfo), /* libbfd sizes its caches by the memory */
	    ALLOW(SYS_getrandom),
	    /* libbfd asks for the working directory to make a relative DWARF file name whole: it
	     * has none */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getcwd, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOENT),
	    /* libbfd may look for a dwz file or a debug link: refused, not fatal */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return -errno;
	return 0;
}

struct find {
	bfd_vma addr;
	asection *sec;
};

static void find_section(bfd *b, asection *s, void *data)
{
	struct find *f = data;
	bfd_vma vma = bfd_section_vma(s);

	(void)b;
	if (!f->sec && (bfd_section_flags(s) & SEC_ALLOC) && f->addr >= vma &&
	    f->addr - vma < bfd_section_size(s))
		f->sec = s;
}

static void answer(bfd_vma addr)
{
	struct find fs = {.addr = addr};
	const char *file = NULL, *func = NULL;
	unsigned int line = 0;
	char a[MAX_FIELD + 1], b[MAX_FIELD + 1];
	bool found;

	bfd_map_over_sections(abfd, find_section, &fs);
	if (fs.sec) {
		found = bfd_find_nearest_line(abfd, fs.sec, syms, addr - bfd_section_vma(fs.sec),
					      &file, &func, &line);
		for (int n = 0; found && n < MAX_FRAMES; n++) {
			clean(func, a);
			clean(file, b);
			printf("F\t%s\t%s\t%u\n", a, b, line);
			file = func = NULL;
			line = 0;
			found = bfd_find_inliner_info(abfd, &file, &func, &line);
		}
	}
	printf("E\n");
	fflush(stdout);
}

static void quiet(const char *fmt, va_list ap)
{
	(void)fmt;
	(void)ap;
}

int main(void)
{
	char req[64];

	if (bfd_init() != BFD_INIT_MAGIC) {
		printf("X libbfd version\n");
		return 1;
	}
	bfd_set_error_handler(quiet);
	abfd = bfd_fdopenr("elf", NULL, 3);
	if (!abfd) {
		printf("X cannot open\n");
		return 1;
	}
	if (sandbox() < 0) {
		printf("X no sandbox\n");
		return 1;
	}
	if (!bfd_check_format(abfd, bfd_object)) {
		printf("X not an object file\n");
		return 1;
	}
	load_symbols();
	printf("R\n");
	fflush(stdout);
	while (fgets(req, sizeof(req), stdin)) {
		char *end;
		unsigned long long addr = strtoull(req, &end, 16);

		if (end == req || (*end != '\n' && *end))
			break;
		answer((bfd_vma)addr);
	}
	return 0;
}
