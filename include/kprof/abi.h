/* SPDX-License-Identifier: GPL-2.0-only */
/* abi.h: the records and maps shared between the BPF programs and kprofd.
 *
 * Included by the BPF programs (after vmlinux.h) and by the daemon (after <linux/types.h>).
 * Fixed-width fields, explicit padding and static size checks keep both sides in agreement. Every
 * name starts with kp_/KP_ so it cannot clash with the kernel's names in vmlinux.h.
 */
#ifndef KPROF_ABI_H
#define KPROF_ABI_H

#define KP_MAX_STACK 127 /* frames per stack (user or kernel), the kernel's own cap */
/* Frames of a kept stack: the user and kernel ones, and the few kprof adds ([truncated], a
 * thread's state, [stack lost], the callers of a wait, [caller lost]). */
#define KP_MAX_FRAMES (2 * KP_MAX_STACK + 8)
/* Entries in kp_targets: the hard cap of limits.max_targets (a whole-host scrape's too). A
 * preallocated hash of 8,192 entries is about 0.7 MB of kernel memory (kp_call_epochs, sized by
 * it too, 0.65 MB). */
#define KP_MAX_TARGETS 8192

/* Record kinds, first field of every ring-buffer record. */
enum kp_rec_kind {
	KP_REC_SAMPLE = 1,
	KP_REC_EXIT = 2,   /* a target's last thread exited: the process is gone */
	KP_REC_EXEC = 3,   /* a target called execve: symbols must be reloaded */
	KP_REC_CALL = 4,   /* a probed JIT function was entered or returned (exact mode) */
	KP_REC_PATH = 5,   /* path tracer: an activation began, took a path, or ended */
	KP_REC_THREAD = 6, /* a thread of a per-thread target started without kprofd's event */
	KP_REC_FORK = 7,   /* a target that follows its children forked a process */
	KP_REC_CGROUP = 8, /* a process entered a watched cgroup (attach --cgroup/--unit) */
	KP_REC_WATCH = 9,  /* a process that is no target exec'd with a watched comm or uid */
	KP_REC_HWBP = 20,  /* a hardware breakpoint at a traced branch was hit (hwbp.bpf.c) */
};

/* kp_sample.flags */
#define KP_SF_USER_TRUNC (1u << 0)   /* user stack filled all KP_MAX_STACK slots */
#define KP_SF_KERNEL_TRUNC (1u << 1) /* kernel stack filled all KP_MAX_STACK slots */
#define KP_SF_USER_ERR (1u << 2)     /* bpf_get_stack failed for the user stack */
#define KP_SF_KERNEL_ERR (1u << 3)   /* bpf_get_stack failed for the kernel stack */
/* Taken by the system-wide set (attach --all) in a process that was not in kp_targets: kprofd
 * makes it a target (start_ticks names the process) or counts it. */
#define KP_SF_STRANGER (1u << 4)
/* Taken while a uprobe ran in the thread (its probed instruction stepped out of line in the
 * kernel's [uprobes] page): the user leaf is the probed instruction again, not the page. */
#define KP_SF_UPROBE (1u << 8)
/* No sample (no stack, n_kernel = n_user = 0): with KP_SF_STRANGER, a process that is no target
 * left a CPU while system-wide mode asks for off-CPU time (attach --all --off-cpu,
 * offcpu.bpf.c): kprofd makes it a target as it does a stranger's sample, and counts no
 * sample. */
#define KP_SF_WAITER (1u << 9)

/* kp_target.flags */
#define KP_TF_THREADS (1u << 0)	 /* sampled by its own per-thread events, not the per-CPU sets */
#define KP_TF_CHILDREN (1u << 1) /* its new processes become targets too (attach --children) */
#define KP_TF_ALL (1u << 2) /* made a target by system-wide mode: a watch rule may take it over */
#define KP_TF_OFFCPU (1u << 3) /* its threads' time off CPU is summed too (offcpu.bpf.c) */

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
	char comm[16];	   /* the thread's name (TASK_COMM_LEN), for exports' thread names */
	__u64 start_ticks; /* KP_SF_STRANGER: the process's start, as in kp_target; else 0 */
	__u64 ips[2 * KP_MAX_STACK];
};

/* Sent only for the process whose start kp_targets holds: start_ticks is that start, so user
 * space can also tell a record of an old process from a new target that reuses its pid. */
struct kp_lifecycle {
	struct kp_rec_hdr hdr;
	__u32 pid; /* the task that exited or exec'd */
	__u32 exit_code;
	__u64 time_ns;
	__u64 start_ticks; /* the process's start, as in kp_target */
	char comm[16];	   /* the task's comm then (after an exec: the new program's) */
};

/* An entry or return probe hit: func is the probe's cookie (the daemon's function id). */
struct kp_call {
	struct kp_rec_hdr hdr;
	__u32 tid;
	__u32 func;
	__u32 exit;  /* 0 entry, 1 return */
	__u32 epoch; /* the probe set's, from kp_call_epochs; 0: the set was not all in */
	/* The thread's call events of this epoch (calls.bpf.c keeps them per thread): its n-th
	 * (from 0; a lost one is counted too, so a gap means events were lost), its depth after
	 * this one (entries less returns since its first, which is at depth 0), and the lowest
	 * depth it was at since its previous event that was sent. */
	__u32 seq;
	__s32 depth;
	__s32 low;
	__u32 pad;
	__u64 time_ns;
};
#define KP_CALL_MAX_THREADS 8192 /* threads calls.bpf.c keeps the count of (LRU) */

/* A thread of a per-thread target (KP_TF_THREADS) was created without a kprofd event: its
 * creator had none when it was cloned (kprofd was still opening events, or a limit left it
 * out). Both need one. */
struct kp_thread {
	struct kp_rec_hdr hdr;
	__u32 tid;
	__u32 creator; /* the thread that cloned it */
	__u64 time_ns;
};

/* A target with KP_TF_CHILDREN forked process hdr.tgid (a new thread group, not a thread).
 * kp_fork has already put the child in kp_targets (a copy of the parent's entry with the child's
 * start), unless full (added 0), so it is sampled from its first instruction where the per-CPU
 * sets sample; per-thread events are kprofd's to open. */
struct kp_fork {
	struct kp_rec_hdr hdr;
	__u32 parent; /* the parent's tgid */
	__u32 added;  /* 1: in kp_targets; 0: the map was full */
	__u64 time_ns;
	__u64 start_ticks; /* the child's start, as in kp_target */
};

/* A process entered a watched cgroup (kp_cgroups), or one of its descendants: moved there
 * (cgroup_attach_task) or forked into it by a process that is not a target following its
 * children. cgid is the watched cgroup's id (the inode of its directory in cgroup2). */
#define KP_MAX_CGROUPS 64  /* entries in kp_cgroups: watched cgroups */
#define KP_CGROUP_DEPTH 32 /* ancestors looked at for a watched one */
struct kp_cgjoin {
	struct kp_rec_hdr hdr;
	__u64 cgid;
	__u64 start_ticks; /* the process's start */
	__u64 time_ns;
};

/* Watch rules (kprofctl watch): a process that is no target exec'd and its new comm is in
 * kp_watch_comms, or its real or effective uid in kp_watch_uids. A pre-filter: kprofd checks the
 * process against its rules (an exe rule's path, who owns it) before it attaches it. */
#define KP_MAX_WATCH_KEYS 64 /* entries in kp_watch_comms and in kp_watch_uids */
struct kp_execwatch {
	struct kp_rec_hdr hdr;
	__u32 ruid;
	__u32 euid;
	__u64 start_ticks; /* the process's start */
	__u64 time_ns;
	char comm[16]; /* its new comm */
};

/* System-wide mode: the processes kprofd refused a profile (a limit), key tgid, value their
 * start: their samples are only counted (KP_CTR_ALL_SKIPPED). An LRU map: a refused process
 * pushed out is refused again at its next sample, and counted again. */
#define KP_MAX_ALL_SKIP 4096

/* Kernels without attach cookies (bpf_get_attach_cookie, Linux 5.15): a uprobe's cookie is found
 * by the probed address instead, in kp_probe_cookies (key: the process and the address; for a
 * uretprobe, the probed function's address). An LRU map: entries of detached probes age out. */
#define KP_MAX_PROBE_COOKIES 32768
#define KP_PROBE_CALL 0 /* kp_call_enter, kp_call_return: the function's id */
#define KP_PROBE_PATH 1 /* kp_path_block: trace << 32 | block (and flags) */
struct kp_probe_key {
	__u32 tgid;
	__u32 kind; /* KP_PROBE_*: exact mode and a path trace may probe the same address */
	__u64 addr;
};

/* Argument and result of kp_scan_threads, a BPF_PROG_TYPE_SYSCALL program kprofd runs with
 * BPF_PROG_TEST_RUN: the threads of process tgid (or only thread tid) that carry no kprofd
 * event with the sampler attached. Their tids go to the array map kp_scan_tids (__u64 values),
 * at most KP_SCAN_MAX; missing counts them all. */
#define KP_SCAN_MAX 16384
struct kp_scan {
	__u32 tgid;    /* in */
	__u32 tid;     /* in: 0 = every thread of tgid, else this thread only */
	__u32 threads; /* out: threads seen */
	__u32 missing; /* out: threads without a kprofd event */
	__s32 err;     /* out: 0, or -ESRCH (no such process, or tid is not tgid's) */
	__u32 pad;
};

/* Argument and result of kp_pidns_probe (BPF_PROG_TYPE_SYSCALL, run once by kprofd with
 * BPF_PROG_TEST_RUN when it is not in the initial PID namespace): the depth of kprofd's PID
 * namespace, which the BPF programs need to give the ids of that namespace. */
#define KP_PIDNS_MAX_LEVEL 32 /* the kernel's MAX_PID_NS_LEVEL */
struct kp_pidns {
	__u32 pid;   /* in: kprofd's getpid() */
	__u32 level; /* out: the depth of its PID namespace (0: the initial one) */
	__u32 inum;  /* out: that namespace's inode number */
	__s32 err;   /* out: 0, -ESRCH, or -ENOENT (inum is not kp_pidns_ino) */
};

/* Path tracer (kp_path_block). One uprobe per basic-block leader of a traced function, cookie
 * (trace << 32 | block). The transitions come from kp_path_edges, filled by the daemon from the
 * function's Ball-Larus numbering. */
#define KP_PATH_NONE 0xffffffffu /* from-block of the entry transition */
#define KP_PATH_EXIT 0xfffffffeu /* to-block of a block's exit value */
#define KP_PATH_DEPTH 16	 /* activations tracked per thread (deeper ones are skipped) */
#define KP_PATH_MAX_EDGES 65536
#define KP_PATH_MAX_THREADS 8192
#define KP_PATH_BLK_MASK 0x3fffffffu	  /* cookie: block index */
#define KP_PATH_BLK_ENTRY 0x80000000u	  /* cookie: the entry block */
#define KP_PATH_BLK_EXIT_ONLY 0x40000000u /* cookie: a block that always leaves */

enum kp_path_act {
	KP_PACT_START = 1, /* {trace, NONE, entry}: emit ENTER, r = 0 */
	KP_PACT_ADD = 2,   /* r += add */
	KP_PACT_BACK = 3,  /* emit PATH r + add, r = reset */
	KP_PACT_EXIT = 4,  /* {trace, block, EXIT}: leaving from block emits r + add */
	KP_PACT_EDGE = 5,  /* edge profile (no path numbering): count the edge in add */
};

#define KP_PEF_EXIT_ONLY 1u /* KP_PACT_EXIT: the block always leaves (emit at its leader) */
/* Edge profile: on the start transition, activations are counted in its add and no event is
 * sent; exits count in their reset. Frames of such traces hold KP_PATH_EDGE_MODE in r. */
#define KP_PEF_EDGES 2u
#define KP_PATH_EDGE_MODE (~0ULL)

struct kp_path_key {
	__u32 trace;
	__u32 from;
	__u32 to;
	__u32 pad;
};

struct kp_path_val {
	__u32 act;
	__u32 flags;
	__u64 add;
	__u64 reset;
};

struct kp_path_frame {
	__u64 sp; /* stack pointer at the function's entry (the return address's slot) */
	__u64 r;  /* path register */
	__u32 trace;
	__u32 block; /* last block seen */
};

struct kp_path_thread {
	__u32 tgid;
	__u32 depth;
	__u64 skip_sp; /* nonzero: inside an untracked activation entered at this sp */
	__u32 seq;     /* events emitted by this thread */
	__u32 pad;
	struct kp_path_frame f[KP_PATH_DEPTH];
};

enum kp_path_op {
	KP_POP_ENTER = 1, /* an activation began */
	KP_POP_PATH = 2,  /* a back edge: path id ended */
	KP_POP_EXIT = 3,  /* the activation left the function after path id */
	KP_POP_ABORT = 4, /* the activation is gone, left from a block with no exit edge */
};

struct kp_path {
	struct kp_rec_hdr hdr;
	__u32 tid;
	__u32 trace;
	__u32 op;
	__u32 depth; /* the activation's depth, 1 = outermost */
	__u64 id;    /* path id (PATH, EXIT) */
	__u32 seq;   /* per-thread event number: a gap means events were lost */
	__u32 pad;
};

/* Branch tracer on anonymous code (kp_hwbp_hit): an execute breakpoint fired at ip, before the
 * instruction ran, with these flags (a jcc's outcome follows from them). kp_hwbp_traces maps a
 * traced tgid to its trace id. */
#define KP_HWBP_MAX_TRACES 64
struct kp_hwbp {
	struct kp_rec_hdr hdr;
	__u32 tid;
	__u32 trace;
	__u64 ip;
	__u64 flags;
	__u64 sp;
};

/* Value of kp_targets (key: tgid). A pid alone is not a process: the entry names one process
 * by its start, in clock ticks after boot (field 22 of /proc/PID/stat: the thread-group leader's
 * start_boottime / (NSEC_PER_SEC / USER_HZ)). The BPF programs act only for a task whose leader
 * started then, and kp_exit deletes the entry itself when that process ends, so a process that
 * reuses the pid is never sampled, however late user space handles the exit. */
struct kp_target {
	__u32 freq;  /* per-CPU mode: only the set of this frequency (attach cookie) samples it */
	__u32 flags; /* KP_TF_* */
	__u64 start_ticks;
};

/* Off-CPU time (offcpu.bpf.c, attach --off-cpu). At a target thread's switch out, kp_offcpu_start
 * keeps (key: tid) when and with which stacks it left; at its switch in, the interval is added
 * to kp_offcpu_sums under (thread, stacks, state), which kprofd drains and empties each period,
 * with the stacks of kp_offcpu_stacks (a hash map kprofd frees as it reads). A thread that
 * blocks 100,000 times a second costs one map update per interval and no ring buffer at all;
 * what does not fit is counted in kp_offcpu_ctrs, its time included. */
#define KP_OFFCPU_MAX_THREADS 16384 /* threads off CPU at once (kp_offcpu_start) */
#define KP_OFFCPU_MAX_SUMS 16384    /* distinct (thread, stacks, state) between two drains */
#define KP_OFFCPU_MAX_STACKS 8192   /* distinct stacks between two drains (kp_offcpu_stacks) */
/* attach --all --off-cpu: processes reported waiting (KP_SF_WAITER) that kprofd has not handled
 * yet (kp_offcpu_waiters, an LRU map): each is reported once until then. */
#define KP_OFFCPU_MAX_WAITERS 1024

/* Why the thread left the CPU: its state at the switch. */
enum kp_offcpu_state {
	KP_OFF_RUNNABLE = 0,	    /* preempted or yielded: waiting for a CPU */
	KP_OFF_SLEEPING = 1,	    /* TASK_INTERRUPTIBLE: a sleep, a lock, a poll, a read */
	KP_OFF_UNINTERRUPTIBLE = 2, /* TASK_UNINTERRUPTIBLE: disk I/O, page faults, some locks */
	KP_OFF_IDLE = 3,	    /* TASK_IDLE: an uninterruptible wait that is not load */
	KP_OFF_STOPPED = 4,	    /* stopped or traced */
	KP_OFF_NSTATES = 5,
};

/* The callers of a user leaf without a frame pointer (libc's syscall wrappers: a frame-pointer
 * walk skips them), read from the stack at the switch out with the rules kprofd put in
 * kp_offcpu_rules (from the files' .eh_frame, ehframe.h): at most KP_OFFCPU_CFI_LEVELS by the
 * rules, then, when one of them saved rbp (which the user stack's own walk then starts from
 * wrong), a frame-pointer walk from the rbp read back, KP_OFFCPU_CALLERS in all; and how the
 * walk ended. */
#define KP_OFFCPU_CALLERS 16 /* a power of two */
#define KP_OFFCPU_CFI_LEVELS 6
#define KP_OFFCPU_MAX_RULES 8192 /* (process, address) rules, an LRU map */
enum kp_unwind {
	KP_UW_OFF = 0,	   /* not tried: no user stack, or no bpf_task_pt_regs (Linux 5.15) */
	KP_UW_FP = 1,	   /* reached a function with a frame pointer: the walk has the rest */
	KP_UW_NORULE = 2,  /* reached an address without a rule yet (the leaf, or the last
			    * caller found): kprofd adds one */
	KP_UW_FAULT = 3,   /* a return address could not be read */
	KP_UW_DEPTH = 4,   /* KP_OFFCPU_CALLERS found, and still no frame pointer */
	KP_UW_UNKNOWN = 5, /* reached code without call frame information (JIT code): the
			    * frame-pointer walk has the rest */
};
/* With an enum kp_unwind: a frame on the way saved rbp somewhere it cannot be read back from:
 * the frame-pointer walk past it is not to be trusted. */
#define KP_UW_RBP 0x10
/* rbp read back from where a frame saved it: the callers end with a frame-pointer walk from
 * there (the user stack's own walk, from the rbp of the switch, is to be left out). */
#define KP_UW_WALKED 0x20

struct kp_unwind_key {
	__u32 tgid;
	__u32 pad;
	__u64 ip; /* the leaf's address, or a return address */
};

enum kp_rule_kind {
	KP_RULE_SP = 1,	     /* no frame pointer: the CFA is sp + cfa */
	KP_RULE_FP = 2,	     /* a frame pointer: stop, the frame-pointer walk has the caller */
	KP_RULE_UNKNOWN = 3, /* no call frame information: stop */
};

enum kp_rule_rbp {
	KP_RBP_KEPT = 0,  /* rbp not saved: the caller's is still in it */
	KP_RBP_SAVED = 1, /* saved at CFA - rbp_off */
	KP_RBP_LOST = 2,  /* saved in a way not read back (a register, an expression) */
};

struct kp_unwind_rule {
	__u32 cfa; /* KP_RULE_SP: the return address is at sp + cfa - 8 */
	__u8 kind; /* enum kp_rule_kind */
	__u8 rbp;  /* enum kp_rule_rbp */
	__u16 rbp_off;
};

/* kp_offcpu_stacks: a stack (leaf first, zeros after its last address) under a seeded 64-bit
 * hash of its addresses, and for a user stack its process: a stack-trace map's ids are hashes
 * into buckets, and a stack whose bucket holds another one is not stored, however empty the map
 * (-EEXIST): a host's busy stack can take a bucket and cost another stack all its time. The
 * process in the key keeps a target from making its stack stand for another's. */
struct kp_stack_key {
	__u64 hash; /* > KP_STACK_LOST */
	__u32 tgid; /* 0: a kernel stack */
	__u32 pad;
};

struct kp_stack {
	__u64 ips[KP_MAX_STACK];
};

#define KP_STACK_NONE 0 /* a user stack of none (a kernel thread, or none walked) */
#define KP_STACK_LOST 1 /* not stored: kp_offcpu_stacks full (counted, KP_OFFC_NOSTACK) */

struct kp_offcpu_begin {
	__u64 time_ns; /* bpf_ktime_get_ns at the switch out */
	__u64 kstack;  /* kp_stack_key.hash of its kernel stack, or KP_STACK_NONE, KP_STACK_LOST */
	__u64 ustack;  /* of its user stack (kp_stack_key.tgid: tgid) */
	__u32 tgid;
	__u32 state; /* enum kp_offcpu_state */
	__u64 callers[KP_OFFCPU_CALLERS];
	__u32 unwind; /* enum kp_unwind | KP_UW_RBP */
	__u32 ncallers;
};

struct kp_offcpu_key {
	__u32 tgid;
	__u32 tid;
	__u64 kstack; /* as kp_offcpu_begin's */
	__u64 ustack;
	__u32 state;
	__u32 unwind;
	__u64 callers[KP_OFFCPU_CALLERS];
	__u32 ncallers;
	__u32 pad;
};

struct kp_offcpu_val {
	__u64 ns;    /* time off CPU, summed */
	__u64 count; /* intervals */
	char comm[16];
};

/* Per-CPU kp_offcpu_ctrs[KP_OFFC_*]. */
enum kp_offcpu_counter {
	KP_OFFC_RUNS = 0,      /* runs of the switch program, targets' or not */
	KP_OFFC_SWITCHES = 1,  /* target threads switched out */
	KP_OFFC_INTERVALS = 2, /* intervals summed */
	KP_OFFC_NOBEGIN = 3,   /* kp_offcpu_start full: an interval not measured */
	KP_OFFC_NOSUM = 4,     /* kp_offcpu_sums full: an interval lost (its time below) */
	KP_OFFC_LOST_NS = 5,   /* time of the intervals lost */
	KP_OFFC_NOSTACK = 6,   /* a stack not stored (kp_offcpu_stacks full) */
	KP_OFFC_NR = 7,
};

/* Per-CPU counters, kp_counters[KP_CTR_*]. */
enum kp_counter {
	KP_CTR_SAMPLES = 0,	  /* samples submitted */
	KP_CTR_DROPS = 1,	  /* ring buffer full: samples lost */
	KP_CTR_LC_DROPS = 2,	  /* ring buffer full: lifecycle records lost */
	KP_CTR_CALLS = 3,	  /* call probe events submitted */
	KP_CTR_CALL_DROPS = 4,	  /* ring buffer full: call events lost */
	KP_CTR_PATH_HITS = 5,	  /* block probe hits */
	KP_CTR_PATH_EVENTS = 6,	  /* path events submitted */
	KP_CTR_PATH_DROPS = 7,	  /* ring buffer full: path events lost */
	KP_CTR_PATH_NOTHREAD = 8, /* thread table full: a thread not traced */
	KP_CTR_PATH_SKIPPED = 9,  /* hits in untracked activations (too deep) */
	KP_CTR_PATH_STRAY = 10,	  /* hits with no activation or no such edge */
	KP_CTR_TICKS = 11,	  /* runs of the sampler: sampling interrupts, targets' or not */
	KP_CTR_THREADS_NEW = 12,  /* threads created in per-thread targets */
	KP_CTR_THREAD_RECS = 13,  /* of which created without an event: reported */
	KP_CTR_THREAD_DROPS = 14, /* ring buffer full: such a report lost */
	KP_CTR_FORK_DROPS = 15,	  /* a child not followed: kp_targets full or ring buffer full */
	KP_CTR_CGROUP_DROPS = 16, /* ring buffer full: a process entering a watched cgroup lost */
	KP_CTR_WATCH_DROPS = 17,  /* ring buffer full: an exec matching a watch rule lost */
	/* System-wide mode (attach --all): samples of what gets no profile of its own, counted
	 * in the sampler, never sent. */
	KP_CTR_ALL_IDLE = 18,	 /* the idle task (pid 0, "swapper") */
	KP_CTR_ALL_KTHREAD = 19, /* kernel threads */
	KP_CTR_ALL_SELF = 20,	 /* kprofd itself */
	KP_CTR_ALL_FOREIGN = 21, /* processes outside kprofd's PID namespace */
	KP_CTR_ALL_SKIPPED = 22, /* processes kprofd refused (kp_all_skip: a limit) */
	KP_CTR_ALL_SENT = 23,	 /* samples of processes not yet targets, sent (KP_SF_STRANGER) */
	KP_CTR_ALL_TICKS = 24,	 /* runs of the sampler on the system-wide set */
	KP_CTR_ALL_OWN = 25,	 /* of which in a target attached otherwise (own settings) */
	KP_CTR_NR = 26,
};

_Static_assert(sizeof(struct kp_rec_hdr) == 8, "kp_rec_hdr layout");
_Static_assert(sizeof(struct kp_sample) == 56 + 8 * 2 * KP_MAX_STACK, "kp_sample layout");
_Static_assert(sizeof(struct kp_lifecycle) == 48, "kp_lifecycle layout");
_Static_assert(sizeof(struct kp_fork) == 32, "kp_fork layout");
_Static_assert(sizeof(struct kp_cgjoin) == 32, "kp_cgjoin layout");
_Static_assert(sizeof(struct kp_execwatch) == 48, "kp_execwatch layout");
_Static_assert(sizeof(struct kp_target) == 16, "kp_target layout");
_Static_assert(sizeof(struct kp_offcpu_begin) == 168, "kp_offcpu_begin layout");
_Static_assert(sizeof(struct kp_offcpu_key) == 168, "kp_offcpu_key layout");
_Static_assert(sizeof(struct kp_stack_key) == 16, "kp_stack_key layout");
_Static_assert(sizeof(struct kp_unwind_key) == 16, "kp_unwind_key layout");
_Static_assert(sizeof(struct kp_unwind_rule) == 8, "kp_unwind_rule layout");
_Static_assert(sizeof(struct kp_offcpu_val) == 32, "kp_offcpu_val layout");
_Static_assert(sizeof(struct kp_call) == 48, "kp_call layout");
_Static_assert(sizeof(struct kp_hwbp) == 40, "kp_hwbp layout");
_Static_assert(sizeof(struct kp_path) == 40, "kp_path layout");
_Static_assert(sizeof(struct kp_thread) == 24, "kp_thread layout");
_Static_assert(sizeof(struct kp_scan) == 24, "kp_scan layout");
_Static_assert(sizeof(struct kp_pidns) == 16, "kp_pidns layout");
_Static_assert(sizeof(struct kp_probe_key) == 16, "kp_probe_key layout");
_Static_assert(sizeof(struct kp_path_key) == 16, "kp_path_key layout");
_Static_assert(sizeof(struct kp_path_val) == 24, "kp_path_val layout");
_Static_assert(sizeof(struct kp_path_thread) == 24 + 24 * KP_PATH_DEPTH, "kp_path_thread layout");

#endif
