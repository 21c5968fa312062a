/*
 * Internal contract of the collector library (libsonde_collector.so).
 *
 * The collector runs inside the target.  Code reachable from a signal
 * handler is marked "Async-signal-safe." in its comment and lives in its
 * own files; it uses no malloc, stdio, locks, dlsym or dl_iterate_phdr.
 * The list of those files is SAFE in tests/t00-asyncsafe.sh, which checks
 * every function their objects call against an allowlist: a file added to
 * that path goes on that list, and nowhere else.
 *
 * Everything else (start-up, interposers, shutdown) runs in normal context
 * and may allocate, but never exits, aborts or blocks the target: an
 * internal error disables the data kind, is logged to log.xml, and the
 * target runs on.
 */
#ifndef SONDE_COLLECTOR_H
#define SONDE_COLLECTOR_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sonde/format.h>

#define HIDDEN __attribute__((visibility("hidden")))
#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

#define SONDE_COLLECTOR_VERSION "0.1.0"

/* ---- sysgate.c: the target's seccomp filters, applied first ----
 *
 * Every system call the collector makes for itself goes through
 * sonde_syscall (syscall(3)'s name is that in every collector file but
 * interpose.c, whose syscall is the target's) or sonde_sys6 (the raw
 * form, -errno): a call the target's filters would not let through is not
 * made and fails with EPERM.  Libc functions that make system calls are
 * written as syscall(SYS_...) in the code that runs once the target may
 * have installed a filter.  Async-signal-safe. */
long sonde_syscall(long n, ...);
long sonde_sys6(long n, long a1, long a2, long a3, long a4, long a5, long a6);
int sysgate_active(void);
int sysgate_allows6(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
/* A filter about to be installed (normal context): its index, -1 when it
 * could not be read (then every call is refused), -2 when the kernel will
 * refuse it too (EFAULT, EINVAL). */
int sysgate_add(int strict, const void *prog);
/* Whether the collector may make a call once that filter counts. */
int sysgate_would_allow6(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
void sysgate_commit(int idx);
/* The filters that count. */
int sysgate_count(void);
/* End the calling thread of the collector's by the exit system call. */
void sysgate_thread_exit(void);
void sysgate_drop(int idx);
/* getpid, or the pid the collector knows when the filters refuse it. */
pid_t sonde_getpid(void);
/* clock_gettime, through the gate for the clocks that always make the
 * system call (CPU-time clocks); the vDSO serves the others without one. */
struct timespec;
int sonde_clock_gettime(clockid_t c, struct timespec *t);
/* Whether the filters in force let the collector make call nr (with zero
 * arguments), for the libc functions it calls and cannot route. */
int sysgate_may(long nr);
#ifndef SONDE_TARGET_SYSCALL
#define clock_gettime(c, t) sonde_clock_gettime(c, t)
#define syscall(...) sonde_syscall(__VA_ARGS__)
#define ioctl(...) sonde_syscall(SYS_ioctl, __VA_ARGS__)
#define fcntl(...) sonde_syscall(SYS_fcntl, __VA_ARGS__)
#define getpid() sonde_getpid()
#endif

/* The collector maps memory with the system call itself: mmap and munmap
 * may be interposed by the heap tracer, which must see only the target's
 * calls (and must never be entered from the sampling handler).
 * Async-signal-safe. */
#include "sys_mmap.h"

/* Nonzero while the collector allocates for itself in normal context
 * (maps, data files, thread start-up): the heap tracer does not record
 * those calls.  Exported so the tracing libraries can read it. */
extern __thread int __sonde_quiet __attribute__((tls_model("initial-exec")));

/* Nonzero in a thread that called vfork, from just before the vfork
 * system call until the parent resumes: in the vfork child, which runs
 * on this thread's memory (its TLS included) until it execs or exits.
 * Nothing of sonde's state may change there (follow.c): interposers and
 * tracers pass its calls through. */
extern __thread int __sonde_vforked __attribute__((tls_model("initial-exec")));

/* Interposers' real functions: REAL_DECL, RESOLVE and REAL of real.h,
 * shared with the tracing libraries. */

/* ---- xfmt.c: async-signal-safe formatting into a caller's buffer ---- */

/* A bounded output buffer; writes past the end are dropped and `overflow`
 * is set.  Async-signal-safe. */
struct xbuf {
	char *p;
	size_t len, cap;
	int overflow;
};
void xb_init(struct xbuf *b, char *mem, size_t cap);
void xb_str(struct xbuf *b, const char *s);
void xb_xml(struct xbuf *b, const char *s); /* XML-escaped */
void xb_u64(struct xbuf *b, uint64_t v);
void xb_hex(struct xbuf *b, uint64_t v); /* 0x... */
void xb_attr_u64(struct xbuf *b, const char *name, uint64_t v);
void xb_attr_hex(struct xbuf *b, const char *name, uint64_t v);
void xb_attr_str(struct xbuf *b, const char *name, const char *v);

uint64_t now_ns(void); /* CLOCK_MONOTONIC; async-signal-safe */
pid_t sys_gettid(void);

/* A system call by the syscall instruction: returns the kernel's result
 * (-errno on failure) and leaves errno alone.  For the collector's own
 * calls that must not go through its interposer of syscall(3)
 * (interpose.c), which routes the target's rt_sigaction calls.
 * Async-signal-safe. */
static inline long sonde_raw_syscall6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Store the caller's callee-saved registers, stack pointer (as it is once
 * this returns) and return address into gregs (a ucontext_t's), so that
 * the unwinder can start in the caller: getcontext without its
 * rt_sigprocmask system call (trace.c). */
void sonde_capture_regs(long long *gregs);

/* ---- log.c: log.xml ---- */

/* Open log.xml in the experiment for appending: created exclusively (the
 * collector of the target), or an existing one (exclusive 0).  Returns 0,
 * or -1 with errno (EEXIST: another process already owns the experiment). */
int log_open(const char *expdir, int exclusive);
/* Append one whole line atomically (one write on an O_APPEND fd).
 * Async-signal-safe; a no-op when the log is not open. */
void log_line(const char *line, size_t len);
/* <event kind="KIND" time_ns=".." text=".."/>, without text when it is
 * NULL.  Async-signal-safe. */
void log_event_text(const char *kind, const char *text);
void log_close(void);
/* A seccomp filter is about to be installed: keep log.xml open when it
 * refuses opening it, and note the target's RLIMIT_FSIZE.  Normal context. */
void log_filter_prepare(void);
int log_is_open(void);
/* Move a descriptor to a high number, close-on-exec, protected from the
 * target's close(); returns the new one.  fd_release() closes it, unless
 * the target took the number meanwhile.  Async-signal-safe. */
int fd_park(int fd);
void fd_release(int fd);
int fd_is_protected(int fd);
/* 1 while a protected descriptor still refers to the file parked there
 * (fstat's device and inode); 0 once the target closed it or put a file
 * of its own on the number.  Async-signal-safe. */
int fd_still_ours(int fd);
/* Drop the protection of a number the target took.  Async-signal-safe. */
void fd_forget_taken(int fd);
/* The target's RLIMIT_FSIZE (RLIM_INFINITY: none).  Async-signal-safe. */
uint64_t fsize_limit(void);
/* Note the limit now, for when a seccomp filter refuses asking. */
void fsize_limit_note(void);

/* A file the collector appends to (log.xml, map.xml) through a parked
 * descriptor that is checked before every write: when the target took
 * its number, the file is opened again by its absolute path. */
struct cfile {
	_Atomic int fd;		  /* -1: none kept (per_write: opened for each write) */
	_Atomic unsigned taken;	  /* times the descriptor was found taken */
	_Atomic int per_write;	  /* open, but no descriptor kept between writes */
	uint64_t dev, ino;
	char path[4200];
};
/* Open (flags: O_WRONLY | O_APPEND, maybe O_CREAT | O_EXCL); 0 or -1.
 * With per_write set, the file is only created (or checked) and closed:
 * each cfile_write opens it again, so that no descriptor of the
 * collector's sits in the target's table (doc/sonde-collect.md). */
int cfile_open(struct cfile *f, const char *path, int flags, int per_write);
/* Keep a descriptor of a per_write file from now on.  Normal context. */
void cfile_keep(struct cfile *f);
/* Append buf in full: 0, or -1 when it was not written (file lost, or
 * past RLIMIT_FSIZE).  Errno is kept.  Async-signal-safe. */
int cfile_write(struct cfile *f, const char *buf, size_t len);
void cfile_close(struct cfile *f);
/* In a clone(CLONE_FILES) child, around dropping the parent's collector
 * state: the descriptor table is the parent's too, so fd_release() leaves
 * the parent's descriptors open (and protected from the child). */
void fd_table_shared(int on);

/* ---- dfile.c: block-structured memory-mapped data files ---- */

struct dfile;

/* Create `name` in the experiment for `kind`.  Normal context.  NULL on
 * error (errno set). */
struct dfile *dfile_create(const char *expdir, const char *name, uint32_t kind);
/* Reserve `size` bytes (multiple of 8, at most SONDE_BLOCK_PAYLOAD) in the
 * calling thread's current block of `df`, claiming a new block when needed.
 * Returns where to build the packet, or NULL (limit reached, block not yet
 * mapped): the packet is lost and counted.  The packet becomes visible to
 * readers at dfile_commit().  Reserve/commit pairs on one dfile must not
 * nest within a thread.  Async-signal-safe. */
void *dfile_reserve(struct dfile *df, size_t size);
/* How many data-file pages the calling thread has written first so far
 * (page faults of the writer's).  Async-signal-safe. */
uint32_t dfile_fresh_pages(void);
void dfile_commit(struct dfile *df, size_t size);
/* dfile_reserve for normal context: when another thread is still mapping
 * the block this one claimed, yield (bounded) rather than lose the packet. */
void *dfile_reserve_wait(struct dfile *df, size_t size);
/* Trim the file to the blocks claimed and stop writing.  Normal context. */
/* Whole blocks of packets for thread tid at once, each piece (len bytes,
 * 1 to SONDE_BLOCK_PAYLOAD) into a block of its own, the blocks
 * consecutive: written by the kernel in one pwritev past the mapping,
 * through the mapping within it or where no system call may write.  0, or
 * -1 when any is lost (counted).  At most DFILE_PUT_MAX pieces.
 * Async-signal-safe; from a signal handler only where the caller has no
 * block of df's being filled. */
struct dfile_piece {
	const void *data;
	uint32_t len;
	uint64_t first_ns; /* the time of its first packet */
};
#define DFILE_PUT_MAX 8
int dfile_put_blocks(struct dfile *df, uint32_t tid, const struct dfile_piece *pieces, unsigned n);
extern _Atomic int g_dfile_pwrite_ok;
void dfile_finish(struct dfile *df);
/* Threads that may write packets from a signal handler (clock.c keeps it):
 * the files stay mapped that far ahead of their last claimed block. */
extern _Atomic int g_dfile_writers;
/* Map the file ahead for one more such thread, waiting for another
 * grower if need be (bounded).  Normal context. */
void dfile_make_room(struct dfile *df);
/* A seccomp filter is about to be installed: when it refuses what growing
 * a data file takes, map every file further ahead now.  Normal context. */
void dfile_filter_prepare(void);
uint64_t dfile_lost(const struct dfile *df);
/* errno of a failed growth (disk full, ...), after which the file takes no
 * more packets and counts them as lost; 0 while it can grow. */
int dfile_grow_errno(const struct dfile *df);
const char *dfile_name(const struct dfile *df);
/* Forget all mappings in a fork child: writes become no-ops. */
void dfile_forget(struct dfile *df);
/* After dfile_finish: close the descriptor once no thread can be growing
 * the file (the mapping stays, for writes already under way).  Left open
 * when a growth does not end in time. */
void dfile_close_fd(struct dfile *df);

extern _Atomic uint64_t g_bytes_limit; /* 0 = none */
extern _Atomic int g_limit_hit;
extern _Atomic uint64_t g_limit_hit_ns; /* when -L first refused data, 0 never */

/* ---- stacks.c: call-stack deduplication ---- */

int stacks_init(struct dfile *df, int huge);
/* Return the id of the stack (leaf first), writing a stack packet the first
 * time this stack is seen.  Async-signal-safe. */
uint64_t stacks_intern(const uint64_t *pcs, int depth, unsigned flags);
/* The same for frames of any kind (format.h, enum sonde_frame_kind): frame
 * k is pcs[k] with tags[k] = SONDE_FRAME_TAG(kind, fflags, aux), 0 for a
 * native frame (whose fflags and aux are 0).  Native frames get the ids
 * stacks_intern gives them.  Async-signal-safe. */
uint64_t stacks_intern_tagged(const uint64_t *pcs, const uint32_t *tags, int depth, unsigned flags);
uint64_t stacks_intern_below(uint64_t parent, uint64_t pc, uint32_t tag);
#define SONDE_FRAME_TAG(kind, fflags, aux) \
	((uint32_t)(uint8_t)(kind) | (uint32_t)(uint8_t)(fflags) << 8 | (uint32_t)(uint16_t)(aux) << 16)
#define SONDE_FRAME_TAG_KIND(t) ((t) & 0xffu)
#define SONDE_FRAME_TAG_FFLAGS(t) ((t) >> 8 & 0xffu)
#define SONDE_FRAME_TAG_AUX(t) ((t) >> 16)
uint64_t stacks_count(void);
struct dfile *stacks_dfile(void);
void stacks_reset(void);
/* The thread's cache of written nodes: mapped, unmapped, dropped (a raw
 * clone task).  Normal context, on the thread. */
void stacks_thread_begin(void);
void stacks_thread_end(void);
void stacks_thread_forget(void);

/* ---- maps.c: map.xml ---- */

int maps_open(const char *expdir);
/* Rescan the loaded objects; log loads and unloads to map.xml and refresh
 * the unwinder's tables.  Normal context; serialised internally. */
void maps_update(void);
/* The same, after a dlopen that started at `since` (CLOCK_MONOTONIC):
 * objects it finds new are logged as loaded then, before their
 * constructors ran (0: now). */
void maps_update_since(uint64_t since);
void maps_close(void);
void maps_fork_child(void);

/* ---- clock.c: clock profiling ---- */

struct clock_settings {
	uint64_t interval_ns; /* 0 = off */
	int depth;
};
int clock_start(const struct clock_settings *cs);
/* Called in each new thread (from the pthread_create trampoline) and for
 * the initial thread. */
void clock_thread_begin(void);
void clock_thread_end(void);
/* Note the start routine of the calling (new) thread, for its tail. */
void clock_thread_start_routine(void *fn);
/* Starts and ends (clock.c, "time no sample places"): the collector
 * begins starting in this process (its constructor's entry, a fork
 * child's handler), and has started the initial thread; a new thread
 * enters interpose.c's trampoline, is about to run its routine, and its
 * routine (or main) returned; the initial thread is about to call main
 * (fn).  Normal context. */
void clock_mark_begin(void);
void clock_process_started(void);
void clock_thread_entry(void);
void clock_thread_run(void);
void clock_routine_returned(void);
void clock_main_run(void *fn);
/* The end of a long wait (omp.c): the calling thread's CPU time since its
 * last sample, which a clock profile would give to its next sample (work,
 * once the wait is over), is recorded now, split at begin_ns (the wait's
 * CLOCK_MONOTONIC start) between `before` and `wait`; at the caller's
 * stack, below it `leaf` (the runtime's function the wait was in, which
 * has returned), when not NULL. */
void clock_wait_end(uint16_t before, uint16_t wait, uint64_t begin_ns, const void *leaf);
/* The end of a wait of state `wait`, shorter than the clock's interval,
 * that a sample fell in: its CPU time since that sample is the wait's
 * (the next sample writes it; one clock read here).  Normal context. */
void clock_wait_mark(uint16_t wait, uint64_t now_wall);
/* The process ends (collector_exit_hook, first): the calling thread's
 * time up to here is the target's and is recorded; what the collector
 * does after (its helpers stopped, its files finished) is not, and no
 * later sample of this thread records it. */
void clock_exit_tail(void);
void clock_stop_all(void);
/* Around an exec (init.c, collector_exec_prepare). */
void clock_exec_prepare(void);
void clock_exec_failed(void);
/* Enable every sampling counter again (after the target's
 * PR_TASK_PERF_EVENTS_DISABLE).  Normal context. */
void clock_reenable(void);
/* A seccomp filter is about to be installed: stop sampling when it refuses
 * what every sample needs.  Normal context. */
void clock_filter_prepare(void);
/* Register threads that existed before the collector started. */
void clock_adopt_existing_threads(void);
/* An attached recording (a late load): each thread's samples weigh its
 * CPU time from its registration, not from its start; and at its end the
 * sampling signal's action back as it was.  Normal context. */
void clock_from_now(void);
void clock_detach_signal(void);
uint64_t clock_samples(void);
uint64_t clock_thread_recorded_cpu(void);
void clock_child_started(void);
int trace_own_pc(uint64_t pc);
/* CPU time spent in the sampling handler so far. */
uint64_t clock_handler_ns(void);
uint64_t clock_lost(void);
struct dfile *clock_dfile(void);
const char *clock_source_name(void);
const char *clock_kernel_time(void);
int clock_signal(void);
/* Our handler, exposed so the sigaction interposer can keep it installed. */
int clock_is_our_signal(int sig);
/* How many overflow counters (-h) each thread has, 0 for none. */
int clock_counters(void);
/* What `sonde collect` needs to call into this process (clock.c, "calls
 * from sonde collect"), published in its slot of the shared page. */
struct clock_call {
	int sig;	      /* the profiling signal */
	int counters;	      /* the source has descriptors that can be lost */
	uint64_t interval_ns;
	uint64_t entry, fn;    /* the trampoline to run, with clock_call_in in %rax */
	uint64_t sp, done;     /* the stack to run it on, where it posts its end */
	uint64_t samples;      /* the address of the count of sample signals */
	int tracer;	      /* TracerPid at the start, 0 for none */
};
/* 0 and *c filled when clock profiling runs and can be called into. */
int clock_call_info(struct clock_call *c);
void clock_fork_child(void);
/* Tasks made by clone(CLONE_VM ...): rawclone.c and clock.c. */
void rawclone_init(void);
/* clone() for flags with CLONE_VM: the real clone, with fn wrapped so the
 * task is sampled.  Keeps errno as the real clone leaves it. */
int clock_raw_clone(int (*real)(int (*)(void *), void *, int, void *, ...), int (*fn)(void *), void *stack,
		    int flags, void *arg, void *ptid, void *tls, void *ctid);
void clock_raw_begin(int flags, void *fn, char *tp);
void clock_raw_end(void);

/* ---- jitmap.c: perf map files (JIT code) ---- */

/* Copy /tmp/perf-PID.map, when there is one, into the experiment as
 * jit.map; problems are logged.  Normal context, at the end of collection. */
void jitmap_save(const char *expdir, pid_t pid);

/* ---- trace.c: the tracing libraries' side (tracers/tracer.h) ----
 *
 * Each traced kind is a module its library registers
 * (__sonde_module_register); these run the modules' hooks, and the
 * collector's own part for every traced kind (the data files, the on
 * flags), in kind order.  Normal context. */

/* Stop every traced kind and finish its file (exit, sonde_terminate). */
void modules_stop_all(void);
/* In a fork or clone child of a recording process: on flags cleared,
 * files forgotten, then each fork_child hook. */
void modules_fork_child(void);
/* dfile_close_fd on every trace file (after modules_stop_all). */
void modules_close_fds(void);
/* In a followed child whose experiment started: the parent's kinds record
 * again, into the child's files. */
void modules_restart(void);
/* On a thread the target created, before its start routine; on a thread
 * as it ends (clock.c's thread-specific-data destructor). */
void modules_thread_start(void);
void modules_thread_end(void);
/* Around an exec: before it, and after it failed. */
void modules_exec_prepare(void);
void modules_exec_failed(void);
/* The last thread of the target registered with the clock is ending
 * (the initial one having left with pthread_exit): let the collector's
 * own thread (-t START-END's, the only one) return too.  glibc ends the
 * process with exit(0) when its last thread ends, and it counts sonde's
 * threads; left running, it would keep the target alive for ever. */
void collector_threads_quit(void);
/* The tracing clock (tracer.h): raise it to t, never lower it (collect's
 * tick and sample points race).  A sample point written at t raises it
 * to t + 1: an event after the point must not be stamped with the tick
 * before it, or -sample_select would count it in the sample the point
 * ends (which takes times up to and including t).  Inline, so that the
 * signal-handler path calls nothing.  Async-signal-safe. */
extern _Atomic uint64_t __sonde_trace_now;
static inline void trace_clock_raise(uint64_t t)
{
	uint64_t cur = atomic_load_explicit(&__sonde_trace_now, memory_order_relaxed);
	while (cur && cur < t &&
	       !atomic_compare_exchange_weak_explicit(&__sonde_trace_now, &cur, t, memory_order_release,
						      memory_order_relaxed))
		;
}

/* ---- shared.c: the page shared with `sonde collect` (sonde/shared.h) ---- */

/* Map the page `sonde collect` shares (SONDE_SHARED names it), once per
 * image (a fork child keeps its parent's mappings): the tick and the
 * registry.  Silent when there is none: the tick stays 0 and no periodic
 * point is written. */
void shared_attach(void);
/* Enter this process image in the registry, for collect's periodic
 * points; -1 when unattached or every slot is taken. */
int shared_register(const char *lineage);
/* This image's experiment ended (exit, exec): collect stops its points. */
void shared_end(void);
void shared_fork_child(void);
/* The calling thread's stack id, its leaf the frame returning to codeptr
 * (OMPT's callbacks run in the runtime's frames). */
uint64_t trace_stack_from(uint64_t codeptr, uint64_t cfa);
/* The tick's period when collect ticks, else 0 (__sonde_trace_clock). */
uint64_t shared_tick_ns(void);
void shared_note_filters(uint32_t n);
/* The -S period collect writes points at, 0 off or unattached. */
uint64_t shared_period_ns(void);

/* ---- follow.c: descendant processes ---- */

int follow_identify(void);
int follow_init(const char *founder, char *dir, size_t cap);
const char *follow_lineage(void);
void follow_unrecorded(const char *why);
void follow_fork_prepare(void);
void follow_fork_child(void);
void follow_note_exit(int status);
/* Register the on_exit handler that notes a descendant's exit status. */
void follow_register_exit(void);

/* ---- modules.c: the collector's parts are modules ----
 *
 * The call stacks, clock profiling (with the counters of -h), off-CPU
 * time (-w), the sample points, map.xml, the traced kinds (trace.c, for
 * the tracing libraries' modules of tracers/tracer.h) and the sampling
 * handler's hooks are modules: each fills one struct collector_module,
 * and the collector's start-up and shutdown (init.c), its thread start
 * and end (interpose.c's trampoline, clock.c's thread-specific-data
 * destructor), fork child (init.c, follow.c) and exec (follow.c) paths
 * loop over the table of them (modules.c, cmod_*), calling each hook at
 * its point of the process's life; nothing there names a module.  The
 * shape is gprofng's ModuleInterface (libcollector's collector_module.h):
 * open, start, stop, close, detach.
 *
 * Every hook may be NULL and runs in normal context.  The table's order
 * (modules.c) is the order of open, settings, dataformat, start,
 * thread_start, quit, end, finish, exec_prepare and close_fds; stop,
 * thread_end, fork_child, exec_failed and restart run in the reverse
 * order (the later modules use the earlier ones' files: the stacks file
 * first, then clock profiling, whose profile file off-CPU time writes
 * into, and whose threads must be registered before a module starts a
 * thread of the collector's). */
struct clock_settings;
struct sonde_packet_format; /* tracers/tracer.h */
struct collector_module {
	const char *name;
	/* Its data file (the kind, SONDE_KIND_*, of the file it writes for
	 * itself; 0: none) and the packets in it, described in log.xml
	 * (<dataformat>, <packet>) when recording starts, if `file` says
	 * the file exists (NULL: when kind is set). */
	int kind;
	const struct sonde_packet_format *packets;
	int npackets;
	int (*file)(void);
	/* Start-up, in the experiment's directory (g_col.expdir), before
	 * log.xml's <settings>: read its settings, create its files, install
	 * what it needs.  cs holds the clock interval and stack depth of the
	 * run; a module that cannot do without its part turns clock
	 * profiling off (interval_ns 0) and logs why. */
	void (*open)(struct clock_settings *cs);
	/* Its attributes of the <settings> line (xfmt.c's xb_attr_*). */
	void (*settings)(struct xbuf *b, const struct clock_settings *cs);
	/* Once the collector records (g_col.active, after the start point):
	 * register threads, start threads of the collector's. */
	void (*start)(void);
	/* On a thread the target created, before its start routine fn; on
	 * a thread as it ends (also by pthread_exit or cancellation). */
	void (*thread_start)(void *fn);
	void (*thread_end)(void);
	/* Stop the threads of the collector's (the last thread of the
	 * target is ending, or recording ends). */
	void (*quit)(void);
	/* Recording ends for good (exit, sonde_terminate, the last
	 * thread): stop writing (after every quit). */
	void (*stop)(void);
	/* Its attributes of the end record (<event kind="end">), and any
	 * event about its data (a file that could not grow) before it. */
	void (*end)(struct xbuf *b);
	/* After the end record: finish its files. */
	void (*finish)(void);
	/* In the child of a fork (or of a clone without CLONE_VM) of a
	 * recording process: forget the parent's files and threads. */
	void (*fork_child)(void);
	/* In a followed child whose own experiment has started (or failed
	 * to: g_col.active says): go on from the parent's state. */
	void (*restart)(void);
	/* Before an exec of the recording process, and after one that
	 * failed (recording then goes on). */
	void (*exec_prepare)(void);
	void (*exec_failed)(void);
	/* A clone(CLONE_FILES) child that finished: close its descriptors
	 * (its mappings stay). */
	void (*close_fds)(void);
};
extern const struct collector_module stacks_module, kstacks_module, clock_module, offcpu_module, sampling_module, maps_module,
	traced_module, omp_module, hooks_module;

/* The loops over the table (modules.c), one per hook. */
void cmod_open(struct clock_settings *cs);
void cmod_settings(struct xbuf *b, const struct clock_settings *cs);
void cmod_dataformat(struct xbuf *b);
void cmod_start(void);
void cmod_thread_start(void *fn);
void cmod_thread_end(void);
void cmod_quit(void);
void cmod_stop(void);
void cmod_end(struct xbuf *b);
void cmod_finish(void);
void cmod_fork_child(void);
void cmod_restart(void);
void cmod_exec_prepare(void);
void cmod_exec_failed(void);
void cmod_close_fds(void);

/* A data file's end: an error event when it could not grow. */
void dfile_end_errors(struct dfile *df);

/* ---- hooks.c: the sampling handler's hooks (sonde/hooks.h) ---- */

void hooks_fork_child(void);
void hooks_report(void);

/* ---- init.c ---- */

void collector_exit_hook(void);
/* attach.c's recording (a late load): start it into dir (0, or -1 with
 * why), sample the calling thread, end it and undo its start. */
int collector_attach_start(const char *dir, char *why, size_t cap);
void collector_attach_thread(void);
void collector_attach_stop(void);
/* ---- attach.c ---- */
/* A setting (sonde/settings.h's names): an attached recording's settings
 * file's, else the environment's.  Normal context. */
const char *sonde_getenv(const char *name);
/* Before an exec: returns 1 when the process records, and then a failed
 * exec must be reported with collector_exec_failed(errno, what). */
int collector_exec_prepare(void);
void collector_exec_failed(int err, const char *what);
void collector_fork_child(void);
/* In a clone(CLONE_FILES) child: its descriptors are in its parent's
 * table too.  collector_shares_table marks the process; once it has
 * finished, collector_release_shared closes its descriptors, which would
 * otherwise stay open in the parent after the child is gone. */
void collector_shares_table(void);
void collector_release_shared(void);
int collector_restart(const char *dir, char *why, size_t cap);

/* ---- interpose.c / signals ---- */

/* Set once the target installs a seccomp filter (interpose.c): from then
 * on the collector makes no system call it can do without.  Exported for
 * the tracing libraries. */
extern _Atomic int __sonde_filtered;

/* The target's own disposition for the signal the collector uses, chained
 * from our handler for signals that are not ours. */
extern struct sigaction g_chained_action;
extern _Atomic int g_chained_set;
/* Real functions, resolved at start-up (never from a handler). */
int real_sigaction_call(int sig, const struct sigaction *act, struct sigaction *old);
int real_pthread_sigmask_call(int how, const sigset_t *set, sigset_t *old);
/* pthread_create itself, for the collector's own threads (never profiled). */
int real_pthread_create_call(pthread_t *thr, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
/* Start a thread of the collector's own, running fn(NULL): detached, a
 * 64 KiB stack, never profiled, its allocations not traced, named name.
 * 0 or an errno value.  fn blocks every signal itself. */
int collector_thread(void *(*fn)(void *), const char *name);

/* Off-CPU time, -w (offcpu.c): SONDE_OFFCPU_NS; the sampler thread's
 * start (after clock_start: it writes into the profile file) and stop
 * (waits until it is out of the data files); a fork child's forgetting
 * of its parent's; its interval (0: off) and counts for the end record. */
void offcpu_init(void);
void offcpu_start(void);
void offcpu_stop(void);
void offcpu_fork_child(void);
uint64_t offcpu_interval_ns(void);
uint64_t offcpu_samples(void);
uint64_t offcpu_discarded(void);
/* Parse /proc/.../syscall: 0 blocked (nr -1 outside a system call, the
 * user sp and pc), 1 running, -1 malformed. */
int offcpu_parse_syscall(const char *buf, int64_t *nr, uint64_t *sp, uint64_t *pc);
/* Read /proc/PID/task/TID/NAME into buf (NUL-terminated): its length, or
 * -1.  Raw system calls; errno untouched. */
int proc_task_read(pid_t pid, pid_t tid, const char *name, char *buf, size_t cap);
void collector_threads_join(void);
void interpose_init(void);

/* ---- sample_point.c / sampling.c: global sampling, pause/resume ---- */

/* Nonzero while recording is paused (-y, sonde_pause, -t START-END,
 * sonde_terminate): clock samples are not weighed and nothing is traced.
 * Exported so the tracing libraries' inline paths can read it. */
extern _Atomic int __sonde_paused;
/* Bumped by every resume; see clock_paused_skip. */
extern _Atomic uint32_t g_pause_gen;
/* Record every registered thread's CPU clock as where its recorded time
 * restarts in generation gen (clock.c's slots).  Async-signal-safe. */
void clock_mark_resume(uint32_t gen);

/* Write one sample point (overview packet) with the process's usage now,
 * and label (NULL: none; cut at SONDE_LABEL_MAX).  Any context: it blocks
 * signals around the write, so a handler cannot nest one in this thread's
 * block.  No-op before sampling_init and after sampling_stop.
 * Async-signal-safe. */
void sp_write(uint32_t reason, const char *label);
/* Pause or resume recording, writing a sample point when the state
 * changes (reason SONDE_OV_PAUSE/RESUME unless given).  Returns whether it
 * changed.  Async-signal-safe. */
int sp_set_paused(int paused, uint32_t reason, const char *label);
/* The -l / -y signal handler. */
void sp_signal_handler(int sig, siginfo_t *si, void *uc);
extern struct dfile *g_sp_overview;
extern int g_sp_sample_sig, g_sp_pause_sig;	/* 0: none */
extern _Atomic int g_sp_stopped;		/* terminated or past -t END */
extern struct sigaction g_sp_chained[2];	/* the target's, for -l and -y */
extern _Atomic int g_sp_chained_set[2];
extern _Atomic int g_sp_state;			/* 0 recording, 1 paused, 2 resuming */
extern uint64_t g_sp_page_kb;

/* The module's open (sampling.c): read the SONDE_SAMPLE_* settings and
 * set the initial pause state (before any thread is profiled); its
 * start: install the signals and start the sampling thread (after the
 * clock has adopted the existing threads, so it never profiles that
 * thread). */
void sampling_init(struct dfile *overview);
/* Read the -l and -y signals (g_sp_sample_sig, g_sp_pause_sig) from the
 * environment: clock_start, which opens before this module, chooses its
 * own signal apart from them. */
void sampling_signals(void);
void sampling_start(void);
/* Stop the sampling thread (woken, it returns at once) and signals; later
 * points are not written. */
void sampling_stop(void);
void sampling_fork_child(void);
/* For the sigaction interposer: 1 when sig is the -l or -y signal, whose
 * handler stays sonde's; the target's action is kept (old gets the
 * previous one) and chained. */
int sampling_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* ---- init.c: global state ---- */

struct collector_state {
	_Atomic int active;	/* 0 until start-up finished, and after stop/fork */
	pid_t pid;
	uint64_t start_ns;
	uint64_t stop_ns;	/* 0 = no duration limit */
	char expdir[4096];
};
extern struct collector_state g_col;

void collector_thread_exit_record(pid_t tid, uint64_t start_ns, uint64_t cpu_ns);

#endif
