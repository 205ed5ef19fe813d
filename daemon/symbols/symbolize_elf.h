/* SPDX-License-Identifier: GPL-2.0-only */
/* symbolize_elf.h: the symbol sources every target shares (symbolize_elf.c): struct symbolizer,
 * its ELF cache and its budget. Included by symbolize.h. */
#ifndef KPROF_DAEMON_SYMBOLIZE_ELF_H
#define KPROF_DAEMON_SYMBOLIZE_ELF_H

#include <stdint.h>

struct symbolizer;

/* Symbol memory of all targets at most total_bytes, of one non-root uid's per_uid_bytes. */
int symbolizer_new(uint64_t total_bytes, uint64_t per_uid_bytes, struct symbolizer **ret);
void symbolizer_set_budget(struct symbolizer *sz, uint64_t total_bytes, uint64_t per_uid_bytes);
void symbolizer_get_stats(const struct symbolizer *sz, uint64_t *bytes, uint64_t *refusals);
void symbolizer_free(struct symbolizer *sz);

#endif
