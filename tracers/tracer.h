/*
 * The contract between libsonde_collector.so and the tracing libraries
 * (libsonde_sync.so, libsonde_heap.so, libsonde_io.so).
 *
 * A tracing library is preloaded only when its data kind is asked for
 * (`sonde collect -s`, `-H`, `-i`), ahead of the collector in LD_PRELOAD,
 * so a kind that is off costs nothing at all: its functions are not
 * interposed.  It is linked against the collector (NEEDED), so the
 * collector's constructor has run before the tracing library's.
 *
 * The tracing library's interposers run in the target's normal context
 * (never in a signal handler), on any thread, possibly before the
 * collector has started and after it has stopped.  They must:
 *   - preserve errno and return values exactly,
 *   - never call the function they interpose (no recursion), nor malloc in
 *     the heap library,
 *   - check their `on` flag (set when the collector starts their module,
 *     __sonde_module_register below; cleared by the collector when it
 *     stops, and in fork children) before recording.
 *
 * Writing one event:
 *     uint64_t stack = __sonde_trace_stack();
 *     struct sonde_heap_packet *p = __sonde_trace_reserve(SONDE_KIND_HEAP, sizeof *p);
 *     if (p) { fill it; __sonde_trace_commit(SONDE_KIND_HEAP, sizeof *p); }
 * reserve returns NULL when the event cannot be written (the loss is
 * counted and logged by the collector); nothing else may happen between
 * reserve and commit on the same thread for the same kind.  Every entry
 * point below preserves errno.
 */
#ifndef SONDE_TRACER_H
#define SONDE_TRACER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <sonde/format.h>

#include "../collector/real.h" /* REAL_DECL, RESOLVE, REAL */

#define SONDE_EXPORT __attribute__((visibility("default")))
#define SONDE_TLS __thread __attribute__((tls_model("initial-exec")))

/* Set by the collector in a vfork child, which shares its parent's memory
 * until it execs or exits: tracers record nothing and change none of
 * their tables there (collector/collector.h). */
extern __thread int __sonde_vforked __attribute__((tls_model("initial-exec")));

/* ---- a traced kind is a module ----
 *
 * Each tracing library fills one struct sonde_module for its kind (a row
 * of sonde/kinds.h) and registers it from its constructor, once its own
 * tables are ready.  The collector then owns the kind's life: it creates
 * the data file and describes its packets in log.xml, sets and clears
 * `on`, and calls the hooks at the points of the process's life named
 * below, the same for every kind (collector/trace.c loops over the
 * registered modules; nothing there names a kind).  The shape is
 * gprofng's ModuleInterface (register, then the collector drives).
 *
 * Every hook may be NULL; each runs in normal context (never in a signal
 * handler), with errno to be preserved, and only for a module whose kind
 * records in this process (a module whose kind was not asked for is not
 * kept).  "On" below is *on. */
struct sonde_packet_format {
	int type;		/* enum sonde_packet_type */
	const char *name;	/* log.xml <packet name=...> */
	int size;		/* bytes; a variable part follows when fields say so */
	const char *fields;	/* NAME:OFFSET:TYPE ..., doc/experiment-format.md */
};

struct sonde_module {
	int kind;		/* SONDE_KIND_*, a row of sonde/kinds.h with a library */
	_Atomic int *on;	/* the library's recording flag */
	const struct sonde_packet_format *packets; /* the kind's packet types */
	int npackets;
	/* The kind records from now on (on is 1): setting is the string its
	 * environment variable carried ("on", "all", a number), for the
	 * library to act on and log with __sonde_trace_setting.  Once per
	 * process image: a followed fork child's experiment gets its
	 * parent's setting lines again, and on set again, without a call. */
	void (*start)(const char *setting);
	/* Recording ends for good (exit, sonde_terminate): on is already 0,
	 * the data file is finished after this returns. */
	void (*stop)(void);
	/* On a thread the target created, before its start routine; on that
	 * thread as it ends (also by pthread_exit or cancellation). */
	void (*thread_start)(void);
	void (*thread_end)(void);
	/* In the child of a fork (or of a clone without CLONE_VM) of a
	 * recording process, on its one thread, before the child starts an
	 * experiment of its own (when followed): on is 0 and the parent's
	 * file is forgotten; drop what names the parent's data (ids). */
	void (*fork_child)(void);
	/* Before an exec of the recording process, and after one that
	 * failed (recording then goes on). */
	void (*exec_prepare)(void);
	void (*exec_failed)(void);
};

/* Register the library's module (m and what it points to stay valid for
 * the process's life): when the collector records and the kind was asked
 * for (its environment variable set and not "off"), create its data file,
 * describe it in log.xml, set *on to 1 and call start.  Returns 0 then;
 * -1 when the collector is not collecting, the kind was not asked for or
 * its file could not be created (logged), and nothing is recorded (*on
 * stays 0). */
int __sonde_module_register(const struct sonde_module *m);

/* The id of the calling interposer's caller's stack, leaf first, the leaf
 * being the call site of the interposed function; frames inside sonde's
 * own libraries are dropped.  0 when no stack could be recorded. */
uint64_t __sonde_trace_stack(void);

/* The same, given the interposer's return address and CFA
 * (SONDE_CALL_SITE below): stacks seen before on this thread are then
 * found in a per-thread cache without unwinding.  For hot interposers. */
uint64_t __sonde_trace_stack_at(uint64_t ra, uint64_t cfa);
#define SONDE_CALL_SITE_RA() ((uint64_t)(uintptr_t)__builtin_return_address(0))
#define SONDE_CALL_SITE_CFA() ((uint64_t)(uintptr_t)__builtin_dwarf_cfa())

/* The calling thread leaves a state of its runtime (sonde/states.h, a
 * state of CPU samples): its CPU time since its last clock sample is
 * recorded now, as one sample in that state at the current stack, rather
 * than carried by its next sample into the next state.  For the ends of
 * a runtime's life (MPI_Init's return, MPI_Finalize's), where time the
 * clock did not sample (system time) would otherwise be charged to what
 * follows.  Normal context; nothing without clock profiling. */
void __sonde_trace_clock_flush(int state);

/* Reserve size bytes (a multiple of 8, a whole packet) in the calling
 * thread's block of `kind`; NULL when the event is lost or recording is
 * paused. */
void *__sonde_trace_reserve(int kind, size_t size);
void __sonde_trace_commit(int kind, size_t size);

/* The calling thread's current block per kind (the collector's dfile
 * state, exported): sonde_reserve/sonde_commit append to it inline and
 * call the collector only to start a new block. */
struct sonde_tblock {
	struct sonde_block_header *blk; /* NULL: none yet */
	uint32_t pending;
	uint32_t used;		/* bytes of packets in blk */
};
extern __thread struct sonde_tblock __sonde_tblocks[SONDE_KIND_MAX + 1] __attribute__((tls_model("initial-exec")));

/* Nonzero while recording is paused (sonde collect -y, sonde_pause(),
 * -t START-END, sonde_terminate()): reserve then returns NULL, and
 * nothing is recorded (and nothing counted as lost). */
extern _Atomic int __sonde_paused;

static inline void *sonde_reserve(int kind, size_t size)
{
	struct sonde_tblock *tb = &__sonde_tblocks[kind];
	if (__builtin_expect(atomic_load_explicit(&__sonde_paused, memory_order_relaxed), 0))
		return NULL;
	if (__builtin_expect(tb->blk != NULL && tb->used + size <= SONDE_BLOCK_PAYLOAD, 1))
		return (char *)(tb->blk + 1) + tb->used;
	return __sonde_trace_reserve(kind, size);
}

static inline void sonde_commit(int kind, size_t size)
{
	struct sonde_tblock *tb = &__sonde_tblocks[kind];
	tb->used += (uint32_t)size;
	__atomic_store_n(&tb->blk->used, tb->used, __ATOMIC_RELEASE);
}

/* Set once the target installs a seccomp filter: 1, or 2 in strict mode.
 * The hook (one per process: the I/O tracer's) runs just before the
 * first is installed. */
extern _Atomic int __sonde_filtered;
void __sonde_trace_on_filter(void (*fn)(void));
/* A system call of the tracer's own (not one it makes for the target):
 * not made, -1 with errno EPERM, when the target's seccomp filters would
 * refuse it (collector/sysgate.c).  Six arguments always.
 * Async-signal-safe. */
long __sonde_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6);
#define sonde_own_syscall(n, ...) __sonde_own6(n, __VA_ARGS__, 0, 0, 0, 0, 0, 0)
#define __sonde_own6(n, a, b, c, d, e, f, ...) \
	__sonde_syscall((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

/* Whether pc is in the code of one of sonde's libraries (the collector,
 * the tracers): their own calls are not the target's.  Complete once
 * any module has registered. */
int __sonde_trace_from_sonde(const void *pc);

/* A line in log.xml: <event kind="level" text="text"/>; level is "info",
 * "warning" or "error". */
void __sonde_trace_log(const char *level, const char *text);

/* A file of the library's own in the experiment (the file that names a
 * stack source's frames): __sonde_trace_file, sonde/hooks.h. */

/* Record a <settings>-like attribute for the kind in log.xml:
 * <trace kind="sync" name="value"/>.  Normal context. */
void __sonde_trace_setting(int kind, const char *name, const char *value);

/* The tracing clock: CLOCK_MONOTONIC as of the collector's last tick
 * (once a millisecond), 0 while no tick thread runs.  One load instead of
 * a clock read, for interposers hot enough that the read would dominate
 * (heap).  Times so read are at or before the event and at most a tick
 * (plus scheduling delay) behind it; causally ordered events on
 * different threads never get decreasing times, but may get equal ones.
 * __sonde_trace_clock() starts the tick thread (restarted in followed
 * children) and returns its period in ns, 0 when it cannot run. */
extern _Atomic uint64_t __sonde_trace_now;
uint64_t __sonde_trace_clock(void);

/* CLOCK_MONOTONIC in ns, the experiment's clock.  In seccomp's strict
 * mode (__sonde_filtered 2) the kernel disables the TSC, and a clock read
 * through the vDSO would fault: the tick stands for it. */
static inline uint64_t sonde_now_ns(void)
{
	if (__builtin_expect(__atomic_load_n((int *)&__sonde_filtered, __ATOMIC_RELAXED) == 2, 0))
		return __atomic_load_n((uint64_t *)&__sonde_trace_now, __ATOMIC_RELAXED);
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

#endif
