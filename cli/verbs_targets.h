/* SPDX-License-Identifier: GPL-2.0-only */
/* verbs_targets.h: kprofctl attach, detach, watch, list, status (verbs_targets.c). Each takes
 * the verb's argv (argv[0] the verb) and returns the exit code. */
#ifndef KPROF_CLI_VERBS_TARGETS_H
#define KPROF_CLI_VERBS_TARGETS_H

int verb_attach(int argc, char **argv);
int verb_detach(int argc, char **argv);
int verb_watch(int argc, char **argv);
int verb_list(int argc, char **argv);
int verb_status(int argc, char **argv);

#endif
