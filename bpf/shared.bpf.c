// SPDX-License-Identifier: GPL-2.0
/* shared.bpf.c: the state kprofd's BPF tools share, defined once for the linked object.
 *
 * No program here: the license, the constants the loader sets before load, and the maps more than
 * one tool uses (kprof.bpf.h declares them extern for the others; the static linker resolves
 * those declarations to these definitions). One license for the object, which every tool needs
 * for its GPL-only helpers.
 */
#include "kprof.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 kp_wakeup_bytes = 256 * 1024;
const volatile __u64 kp_nsec_per_tick = 10000000;
const volatile __s64 kp_boottime_offset_ns = 0;
const volatile __u32 kp_pidns_ino = 0;
const volatile __u32 kp_has_cookie = 1;
const volatile __u32 kp_self_tgid = 0;
__u32 kp_pidns_level;

struct kp_events_map kp_events SEC(".maps");
struct kp_targets_map kp_targets SEC(".maps");
struct kp_counters_map kp_counters SEC(".maps");
struct kp_probe_cookies_map kp_probe_cookies SEC(".maps");
struct kp_all_skip_map kp_all_skip SEC(".maps");
