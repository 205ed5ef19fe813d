/* abi.h: the records and maps shared between the BPF programs and kprofd.
 *
 * Included by the BPF programs (after vmlinux.h) and by the daemon (after <linux/types.h>).
 * Fixed-width fields, explicit padding and static size checks keep both sides in agreement. Every
 * name starts with kp_/KP_ so it cannot clash with the kernel's names in vmlinux.h.
 */
#ifndef KPROF_ABI_H
#define KPROF_ABI_H

#define KP_MAX_STACK 127    /* frames per stack (user or kernel), the kernel's own cap */
#define KP_MAX_TARGETS 1024 /* entries in kp_targets */

/* Record kinds, first field of every ring-buffer record. */
enum kp_rec_kind {
	KP_REC_SAMPLE = 1,
	KP_REC_EXIT = 2, /* a target's thread-group leader exited */
	KP_REC_EXEC = 3, /* a target called execve: symbols must be reloaded */
	KP_REC_CALL = 4, /* a probed JIT function was entered or returned (exact mode) */
};

/* kp_sample.flags */
#define KP_SF_USER_TRUNC (1u << 0)   /* user stack filled all KP_MAX_STACK slots */
#define KP_SF_KERNEL_TRUNC (1u << 1) /* kernel stack filled all KP_MAX_STACK slots */
#define KP_SF_USER_ERR (1u << 2)     /* bpf_get_stack failed for the user stack */
#define KP_SF_KERNEL_ERR (1u << 3)   /* bpf_get_stack failed for the kernel stack */

struct kp_rec_hdr {
	__u32 kind;
	__u32 tgid;
};

/* A sample. ips[] holds n_kernel kernel frames first (leaf first), then n_user user frames
 * (leaf first). Only the filled part is submitted, so the record's length is
 * offsetof(ips) + 8 * (n_kernel + n_user). */
struct kp_sample {
	struct kp_rec_hdr hdr;
	__u32 tid;
	__u32 cpu;
	__u64 time_ns; /* CLOCK_MONOTONIC */
	__u16 n_kernel;
	__u16 n_user;
	__u32 flags;
	__u64 ips[2 * KP_MAX_STACK];
};

struct kp_lifecycle {
	struct kp_rec_hdr hdr;
	__u32 pid; /* the task that exited or exec'd */
	__u32 exit_code;
	__u64 time_ns;
};

/* An entry or return probe hit: func is the probe's cookie (the daemon's function id). */
struct kp_call {
	struct kp_rec_hdr hdr;
	__u32 tid;
	__u32 func;
	__u32 exit; /* 0 entry, 1 return */
	__u32 pad;
	__u64 time_ns;
};

/* Value of kp_targets (key: tgid). */
struct kp_target {
	__u32 freq; /* only events of this frequency (attach cookie) sample the target */
	__u32 flags;
};

/* Per-CPU counters, kp_counters[KP_CTR_*]. */
enum kp_counter {
	KP_CTR_SAMPLES = 0,    /* samples submitted */
	KP_CTR_DROPS = 1,      /* ring buffer full: samples lost */
	KP_CTR_LC_DROPS = 2,   /* ring buffer full: lifecycle records lost */
	KP_CTR_CALLS = 3,      /* call probe events submitted */
	KP_CTR_CALL_DROPS = 4, /* ring buffer full: call events lost */
	KP_CTR_NR = 5,
};

_Static_assert(sizeof(struct kp_rec_hdr) == 8, "kp_rec_hdr layout");
_Static_assert(sizeof(struct kp_sample) == 32 + 8 * 2 * KP_MAX_STACK, "kp_sample layout");
_Static_assert(sizeof(struct kp_lifecycle) == 24, "kp_lifecycle layout");
_Static_assert(sizeof(struct kp_target) == 8, "kp_target layout");
_Static_assert(sizeof(struct kp_call) == 32, "kp_call layout");

#endif
