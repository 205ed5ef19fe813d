/* SPDX-License-Identifier: GPL-2.0-only */
/* verbs_export.h: kprofctl export, diff, record (verbs_export.c). Each takes the verb's argv
 * (argv[0] the verb) and returns the exit code. */
#ifndef KPROF_CLI_VERBS_EXPORT_H
#define KPROF_CLI_VERBS_EXPORT_H

int verb_export(int argc, char **argv);
int verb_diff(int argc, char **argv);
int verb_record(int argc, char **argv);

#endif
