/* State shared by clock.c (arming, threads; normal context) and sample.c
 * (the signal handler). */
#ifndef SONDE_COLLECTOR_CLOCK_INTERNAL_H
#define SONDE_COLLECTOR_CLOCK_INTERNAL_H

#include <asm/prctl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include <sonde/hooks.h>

#include "collector.h"

#define FD_BITS 65536
#define MAX_THREADS 16384

struct thread_slot;
/* Sits at the top of each signal stack, which grows down from it. */
struct sig_stack {
	_Atomic int busy;	/* a sample runs on it */
	/* What the signal is: SIG_CLOCK, or SIG_COUNTER + the counter's
	 * index (counters.c). */
	int what;
	struct thread_slot *slot;
	/* The thread's counters on entry: the sampled counter's weight, the
	 * overflows merged into this signal, and the events of the handler
	 * itself, taken out of the next weights (sample.c). */
	uint64_t counters_in[SONDE_MAX_COUNTERS];
} __attribute__((aligned(64)));
#define SIG_CLOCK 1
#define SIG_COUNTER 2
/* The stack below the header: the handler needs about 21 KiB at the
 * largest depth (-D 2040: 16 KiB of program counters, plus the
 * unwinder's CFA interpreter and the writer), with a guard page below. */
#define SIG_STACK_SIZE (64u << 10)

struct thread_slot {
	_Atomic pid_t tid;	/* 0 = free */
	int fd;			/* perf fd, or -1 */
	/* The perf counter's id (PERF_EVENT_IOC_ID), which tells our
	 * descriptor from one the target put on its number. */
	uint64_t perf_id;
	timer_t timer;
	int has_timer;
	uint64_t start_ns;
	/* Its CPU clock when it was registered (the CPU time it ran
	 * unrecorded before is not sampling's to miss). */
	uint64_t reg_cpu_ns;
	/* Set by clock_mark_resume: the thread's CPU clock when recording
	 * resumed in generation resume_gen, where its next sample's weight
	 * starts. */
	_Atomic uint64_t resume_cpu_ns;
	_Atomic uint32_t resume_gen;
	/* A task made by clone(CLONE_VM ...) (rawclone.c): the thread
	 * pointer of its private TLS block, which the handler switches to
	 * while it samples the task, since the task's own thread pointer may
	 * be its creator's or a foreign runtime's.  NULL for other threads. */
	_Atomic(char *) raw_tp;
	/* Without CLONE_THREAD the task is a process of its own: its timer
	 * is its process's and its CPU clock is read as a process clock.
	 * Without CLONE_FILES its perf fd is in its own descriptor table.
	 * Either way only the task itself may release them. */
	uint8_t own_process, foreign_fds;
	/* The top of the slot's signal stack (see clock_entry in sample.c),
	 * NULL if it could not be mapped.  Kept with the slot when the slot
	 * is freed: the next thread to take it samples on it. */
	struct sig_stack *sig_stack;
	/* The thread's overflow counters (-h, counters.c): descriptors (-1
	 * none), ids, and each one's value at the end of the thread's
	 * previous sample of it, from which the next sample's weight runs.
	 * Not inherited: each thread opens its own, so that the handler can
	 * read the thread's own count. */
	int cfd[SONDE_MAX_COUNTERS];
	uint64_t cid[SONDE_MAX_COUNTERS];
	uint64_t clast[SONDE_MAX_COUNTERS];
	/* The thread's OpenMP state as omp.c keeps it (omp.h: a state of
	 * sonde/states.h and OMP_W_* flags; 0: none) and the parallel region
	 * whose end it waits at.  In the slot, not in TLS: the off-CPU
	 * sampler reads another thread's (omp_offcpu_state), and a slot
	 * outlives its thread.  Zeroed when the slot is taken. */
	_Atomic uint32_t omp_state;
	_Atomic uint64_t omp_region;
	/* A wait the thread began (omp.c): CLOCK_MONOTONIC then, 0 none, and
	 * the state it was in before.  The clock's first sample after it
	 * gives the CPU time before it to that state (clock_sample), and
	 * every sample in it sets wait_hit, which tells the wait's end
	 * whether its time since the last sample may be long enough to
	 * record (without a sample in it, it cannot be: no clock read). */
	_Atomic uint64_t wait_since;
	_Atomic uint32_t wait_before;
	_Atomic uint32_t wait_hit;
	/* -k on (kstacks.c): the clock counter's ring buffer of kernel
	 * callchains, NULL for none. */
	_Atomic(void *) kring;
};
extern struct thread_slot g_slots[MAX_THREADS];

/* Slots in use are below g_slots_used (a high-water mark, so that loops
 * over the threads and the first registration touch only the slots ever
 * used, not all 16384: 768 KiB of zero pages). */
extern _Atomic int g_slots_used;

/* Registered threads by tid: slot index + 1, 0 for none (PID_MAX_LIMIT is
 * 2^22 on 64-bit Linux; 8 MiB of BSS, of which only the pages where tids
 * fall are touched).  The handler records samples only in registered
 * threads: an inheriting counter also follows threads made by a raw
 * clone(CLONE_THREAD), whose thread pointer may be their creator's or a
 * foreign runtime's, where even reading sonde's TLS could fault or share
 * a writer's block.  Written under the registration lock. */
#define TID_LIMIT (1u << 22)
extern _Atomic uint16_t g_tid_slot[TID_LIMIT];

/* The registered slot of `tid`, or NULL.  Async-signal-safe. */
static inline struct thread_slot *slot_by_tid(pid_t tid)
{
	if (tid <= 0 || (unsigned)tid >= TID_LIMIT)
		return NULL;
	unsigned i = atomic_load_explicit(&g_tid_slot[tid], memory_order_acquire);
	if (!i || atomic_load_explicit(&g_slots[i - 1].tid, memory_order_relaxed) != tid)
		return NULL;
	return &g_slots[i - 1];
}

/* The kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): another
 * thread's CPU clock.  Async-signal-safe. */
static inline clockid_t thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6);
}

/* MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED): the CPU clock of a process
 * (a task made by clone(CLONE_VM) without CLONE_THREAD, whose thread
 * clock other processes cannot read).  Async-signal-safe. */
static inline clockid_t process_cpu_clock(pid_t pid)
{
	return (clockid_t)((~(unsigned)pid << 3) | 2);
}

struct tstate {
	pid_t tid;
	uint64_t last_cpu_ns;	/* thread CPU clock at the last recorded sample */
	uint64_t last_wall_ns;	/* and CLOCK_MONOTONIC then; 0 not known */
	uintptr_t stack_lo, stack_hi;
	uint32_t nrecorded;	/* samples recorded by this thread */
	/* Where a thread's tail is charged (see clock_thread_tail): its
	 * start routine and the frames that called it. */
	uint64_t tail_pcs[8];
	int tail_depth;
	/* Set while a tracing interposer interns a stack (trace.c): the
	 * handler then skips its sample, whose time the next one carries. */
	volatile int in_trace;
	/* g_pause_gen when this thread last looked: a new generation means
	 * recording resumed since, and last_cpu_ns moves to the resume. */
	uint32_t pause_gen;
	/* Microstates (ms_* in sample.c): the kernel's accounting of this
	 * thread at its last recorded sample, from which the next sample's
	 * system time and run-queue delay run; system time not yet given
	 * to a sample (a sample's system part is at most its weight). */
	uint64_t ms_stime_ns, ms_csw, ms_rdelay_ns, ms_sys_carry, ms_flt;
	/* Set while the handler runs a hook on this thread (hooks.c refuses
	 * to add or remove one from a hook). */
	volatile int in_hook;
	/* CLOCK_MONOTONIC before which this thread's samples skip the hooks:
	 * hooks that took d ns of a sample, d at least half the interval,
	 * are skipped for the next d
	 * (sample.c, hooks_run), so that slow hooks take at most half of the
	 * thread's time instead of all of it (a hook slower than the
	 * interval would otherwise run again as soon as it returned).  d is
	 * the smaller of the last two samples' hook times: one measurement
	 * is not a slow hook (a host that preempts the VM in the hook, a
	 * page fault, inflate the thread's CPU clock by milliseconds once). */
	uint64_t hook_quiet_until;
	uint64_t hook_last_ns;
	/* The collector's CPU time on this thread that no packet holds yet
	 * (the handler's, sample.c): written as <Collector> every 64
	 * samples and at the thread's end (clock_own_write). */
	uint64_t own_ns, own_at; /* and the time of the last sample it grew at */
	/* the state own_ns was spent in (the samples' around it: a thread
	 * in MPI Wait is in it while the handler runs), and the last
	 * sample's */
	uint16_t own_state, last_state;
	/* The routine in tail_pcs (a thread's start routine, the initial
	 * thread's main): ROUTINE_NONE when none was noted (a thread the
	 * collector did not start), ROUTINE_LIVE from its call to its
	 * return, ROUTINE_DONE after it. */
	int routine;
	/* The stack of the last sample taken while the routine ran (0:
	 * none yet): its time after that sample is placed below it. */
	uint64_t last_stack_id;
	/* A short wait that a sample fell in ended (clock_wait_mark): the
	 * thread's CPU clock and wall clock then (0: none since the last
	 * sample) and the wait's state.  The next sample gives the CPU time
	 * up to it to the wait, at the stack of the sample in it. */
	uint64_t wait_end_cpu, wait_end_wall;
	uint16_t wait_end_state;
};
enum { ROUTINE_NONE, ROUTINE_LIVE, ROUTINE_DONE };

/* Write ts->own_ns as one <Collector> sample at now, and zero it.
 * Async-signal-safe; normal context with the sampling signal blocked. */
void clock_own_write(struct tstate *ts, uint64_t now);
int clock_write_pseudo(uint32_t pseudo, const uint64_t *pcs, int n, uint64_t now, uint64_t weight, uint64_t sys,
		       uint64_t wcpu);
/* The same at the pseudo frame alone under the stack `parent`; -1 also
 * when its node cannot be written. */
int clock_write_below(uint64_t parent, uint32_t pseudo, uint64_t now, uint64_t weight, uint64_t sys, uint64_t wcpu);

/* The calling thread's kernel accounting now: system CPU time and
 * context switches (its rusage), run-queue delay (schedstat; read only
 * when the thread was switched since the last reading, have_rd then). */
struct ms_now {
	uint64_t stime_ns, csw, rdelay_ns, flt;
	int have_rd;
};
/* Read it (0, or -1: no rusage); what a sample of weight `weight` gets
 * (its system part, its run-queue delay); and, once the sample is
 * written, move the thread's bases to it.  Async-signal-safe. */
int ms_read(const struct tstate *ts, struct ms_now *m);
/* What a signal is: SIG_CLOCK, SIG_COUNTER + i, 0 not ours (sample.c). */
int is_ours(const siginfo_t *si);
/* in_syscall: the sample was taken in a system call (uw_at_syscall). */
void ms_split(const struct tstate *ts, const struct ms_now *m, uint64_t weight, bool in_syscall, uint64_t *sys,
	      uint64_t *wcpu);
void ms_commit(struct tstate *ts, const struct ms_now *m, uint64_t weight, uint64_t sys);
/* Move the bases without recording anything (paused time, time before
 * an exec'd image).  Async-signal-safe. */
void ms_rebase(struct tstate *ts, const struct ms_now *m);
/* Parse the first three numbers of a schedstat text (run time, run-queue
 * delay, times run).  0, or -1.  Async-signal-safe. */
int ms_parse_schedstat(const char *buf, long len, uint64_t v[3]);

extern TLS struct tstate t_state;
extern struct clock_settings g_cs;
extern struct dfile *g_profile;
extern int g_timer_source_active;	/* else a perf source */
extern int g_sigtrap_source_active;	/* perf counter delivering SIGTRAP */
extern _Atomic int g_from_now;		/* an attached recording (clock_from_now) */
#define SONDE_SIGTRAP_MAGIC 0x736f6e6465ull	/* attr.sig_data: "sonde" */
/* attr.sig_data of counter i (-h): SONDE_COUNTER_MAGIC + i. */
#define SONDE_COUNTER_MAGIC 0x736f6e6400ull
/* Counter overflow profiling (counters.c): how many counters each thread
 * has (0: off), and their data file. */
extern int g_ncounters;
extern struct dfile *g_counters;
extern _Atomic uint64_t g_counter_samples;
/* Kernel call stacks (kstacks.c, -k on): on; the ring buffer of the
 * clock counter fd of s mapped, or unmapped (own: by s's thread itself,
 * else once no handler runs); dropped in a fork child. */
extern int g_kstacks;
void kstacks_ring_open(struct thread_slot *s, int fd);
void kstacks_ring_close(struct thread_slot *s, int own);
void kstacks_fork_child_slot(struct thread_slot *s);
/* Whether the clock counter counts kernel mode (clock.c). */
int clock_kernel_counted(void);

/* Each counter's overflow period (counters.c), for sample.c. */
extern uint64_t g_counter_period[SONDE_MAX_COUNTERS];
/* Normal context: open the thread's counters (0, or -errno of the first
 * that failed), close them, or apply an ioctl (PERF_EVENT_IOC_ENABLE,
 * _DISABLE) to them. */
int counters_arm(struct thread_slot *s, pid_t tid);
void counters_disarm(struct thread_slot *s);
void counters_ioctl(struct thread_slot *s, unsigned long req);
/* SONDE_COUNTERS into the counters (their number, -1 malformed); once the
 * handler is installed, the data file and log.xml's lines (0, or -1: off);
 * a fork child's forgetting of its parent's; the end of recording. */
int counters_parse(void);
int counters_start(const char *expdir);
void counters_fork_child(struct thread_slot *s);
void counters_forget(void);
void counters_finish(void);
extern int g_timer_magic;		/* &g_timer_magic tags our timers' signals */
extern _Atomic uint8_t g_our_fds[FD_BITS / 8]; /* perf fds that signal us */
extern _Atomic uint64_t g_samples;
/* The collector's own cost, shown by `sonde print -header`: the thread CPU
 * time of every 16th recorded sample's handler (from its first clock read
 * to the end), and how many were measured.  CPU time, not wall time, so a
 * handler preempted by the scheduler is not charged for the wait. */
extern _Atomic uint64_t g_handler_cpu_ns, g_pseudo_samples;
extern _Atomic int g_inflight;		/* handlers running now */
extern _Atomic int g_unwind_pause;	/* set around dlclose */

/* The sampling signal's action (sample.c), and the samples it skipped
 * for want of a signal stack. */
void clock_entry(int sig, siginfo_t *si, void *uc);
/* Sample signals received (the handler counts them), paused or not. */
extern _Atomic uint64_t g_sample_signals;
extern _Atomic uint64_t g_sig_stack_skips;

/* The calling task's thread pointer (x86-64 FS base): rdfsbase where the
 * kernel allows it (g_fsgsbase), else arch_prctl by a bare system call,
 * which leaves errno (TLS) alone.  Async-signal-safe; no TLS. */
extern int g_fsgsbase;
static inline uintptr_t tp_get(void)
{
	uintptr_t v = 0;
	if (g_fsgsbase) {
		__asm__ volatile("rdfsbase %0" : "=r"(v)::"memory");
	} else {
		long r;
		__asm__ volatile("syscall"
				 : "=a"(r)
				 : "0"((long)SYS_arch_prctl), "D"((long)ARCH_GET_FS), "S"(&v)
				 : "rcx", "r11", "memory");
		(void)r;
	}
	return v;
}

static inline void tp_set(uintptr_t v)
{
	if (g_fsgsbase) {
		__asm__ volatile("wrfsbase %0" ::"r"(v) : "memory");
	} else {
		long r;
		__asm__ volatile("syscall"
				 : "=a"(r)
				 : "0"((long)SYS_arch_prctl), "D"((long)ARCH_SET_FS), "S"(v)
				 : "rcx", "r11", "memory");
		(void)r;
	}
}

/* Counted in the handler: samples of tasks that are not registered (a
 * counter inherited by a thread made by a bare clone system call, or
 * clone3, which sonde does not see start).  A few samples of a pthread
 * before its trampoline registers it are normal; many mean a task sonde
 * did not see start (clock.c reports those). */
#define MAX_STRAYS 32
struct stray {
	_Atomic pid_t tid;
	_Atomic uint32_t n;
};
extern struct stray g_strays[MAX_STRAYS];
/* Async-signal-safe. */
void clock_note_stray(pid_t tid);
/* Whether recording is paused for the calling thread, whose CPU clock
 * reads cpu_now: then its last_cpu_ns follows the clock so the paused
 * time is never weighed.  After a resume, moves last_cpu_ns to the
 * thread's CPU clock at the resume.  Async-signal-safe. */
int clock_paused_skip(struct tstate *ts, uint64_t cpu_now);
int clock_write_sample(const uint64_t *pcs, int n, unsigned flags, uint16_t state, uint64_t now,
		       uint64_t weight, uint64_t system_ns, uint64_t wait_cpu_ns);

/* ---- the sampling handler's hooks (sonde/hooks.h) ----
 *
 * A table of SONDE_HOOK_MAX slots: hooks.c fills and empties them in
 * normal context (under a lock of its own), sample.c's handler calls the
 * hooks in them.  A slot's arg and type are written before its fn
 * (release), and stay until the slot is emptied: fn set to 0, then a wait
 * until no handler is in the hook (users, which a handler raises before
 * it loads fn and lowers after the call; both sequentially consistent,
 * so a remover either finds the handler counted or the handler finds fn
 * 0).  g_hook_n counts the registered hooks of each type: the handler
 * looks at the slots only when there is one. */
enum { HOOK_STATE = 1, HOOK_STACK = 2 };
struct hook_slot {
	_Atomic uintptr_t fn;	/* sonde_state_provider * or sonde_stack_source *; 0 free */
	void *arg;
	int type;		/* HOOK_* */
	_Atomic uint32_t users; /* handlers in the hook now */
};
extern struct hook_slot g_hooks[SONDE_HOOK_MAX];
extern _Atomic int g_hook_n[3]; /* by HOOK_*; [0] all */
/* What hooks gave that was not taken (sample.c counts, hooks.c logs at
 * the end): a state that is no state of CPU samples; a source's frames
 * (a count past max, a splice outside the stack or over another's). */
extern _Atomic uint64_t g_hook_bad_states, g_hook_bad_frames, g_hook_skipped;

#endif
