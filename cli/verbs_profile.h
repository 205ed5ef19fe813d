/* SPDX-License-Identifier: GPL-2.0-only */
/* verbs_profile.h: kprofctl report, hcct, drift, paths, folded, top, annotate
 * (verbs_profile.c). Each takes the verb's argv (argv[0] the verb), returns the exit code. */
#ifndef KPROF_CLI_VERBS_PROFILE_H
#define KPROF_CLI_VERBS_PROFILE_H

int verb_report(int argc, char **argv);
int verb_hcct(int argc, char **argv);
int verb_drift(int argc, char **argv);
int verb_paths(int argc, char **argv);
int verb_folded(int argc, char **argv);
int verb_top(int argc, char **argv);
int verb_annotate(int argc, char **argv);

#endif
