/*
 * The page `sonde collect` shares with the collectors of the processes it
 * records: the tracing clock and the registry of recording processes.
 *
 * Why: the periodic sample points (-S) and the millisecond tick that
 * stamps heap events used to come from two threads the collector started
 * in the target.  Those made the target multithreaded: it counted 2-3
 * threads at main, unshare(CLONE_NEWUSER) failed (the kernel wants a
 * single-threaded caller), and glibc took its cancellable system call
 * path for the rest of the run.  `sonde collect` is a process of its own
 * outside the target, so it keeps both clocks instead: it stores
 * CLOCK_MONOTONIC into `now` once a millisecond, and writes each
 * recording process's periodic points into the "periodic" data file of
 * its experiment, with the usage counters it reads from /proc/PID.
 *
 * The page is the file SONDE_SHARED_FILE in the founder experiment, made
 * by `sonde collect` before the target starts (mode 0600, every byte
 * written, so that no store into it can meet a full disk and raise
 * SIGBUS) and removed when the target has ended; SONDE_SHARED names it.
 * Every recording process (exec'd images too: SONDE_* settings are kept)
 * opens, maps and closes it, so the target holds no descriptor of it.  A
 * file rather than a memfd reached through /proc/COLLECT_PID/fd/N: that
 * path needs ptrace access to `sonde collect`, which a descendant loses
 * once the target has unshared its user namespace, while any process
 * that can write its experiment can open a file in it.  A collector maps
 * page 0 over its own page-aligned tick word (so the tracers' inline load
 * of __sonde_trace_now is unchanged) and the whole wherever the kernel
 * likes; both mappings are MAP_SHARED and survive fork.  When `sonde
 * collect` ends, it zeroes the tick and the period: a process started
 * later runs without tick and periodic points.
 */
#ifndef SONDE_SHARED_H
#define SONDE_SHARED_H

#include <stdatomic.h>
#include <stdint.h>

#define SONDE_SHARED_FILE ".sonde-shared"
#define SONDE_SHARED_MAGIC 0x31444853444e4f53ull /* "SONDSHD1" */
#define SONDE_SHARED_PAGE 4096u
#define SONDE_SHARED_SLOTS 128u /* process images recording at once */
#define SONDE_SHARED_SLOT_SIZE 704u
#define SONDE_SHARED_SIZE (SONDE_SHARED_PAGE + SONDE_SHARED_SLOTS * SONDE_SHARED_SLOT_SIZE)

/* Page 0.  `now` first: it is the word the collector's tick page holds. */
struct sonde_shared_head {
	_Atomic uint64_t now;	 /* CLOCK_MONOTONIC of the last tick; 0: no tick */
	uint64_t magic;		 /* SONDE_SHARED_MAGIC */
	uint64_t tick_ns;	 /* the tick's period, 0 when collect does not tick */
	uint64_t period_ns;	 /* -S period, 0 off */
};

enum sonde_slot_state {
	SONDE_SLOT_FREE = 0,
	SONDE_SLOT_CLAIMED = 1, /* a collector is filling it in */
	SONDE_SLOT_LIVE = 2,	/* collect writes periodic points for it */
};
/* An image whose experiment ends (exit, exec) frees its slot at once, so
 * that a burst of execs never runs out of slots; collect tells an image
 * from the next one in the same slot by (pid, starttime, start_ns): an
 * exec keeps the pid and the starttime, never the collector's start. */

/* One recording process image. */
struct sonde_shared_slot {
	_Atomic uint32_t state;
	uint32_t pid;
	uint64_t starttime;	 /* field 22 of /proc/PID/stat: tells a reused pid */
	uint64_t start_ns;	 /* the collector's start (CLOCK_MONOTONIC) */
	char lineage[616];	 /* "" founder, else DIR/LINEAGE.er */
	/* Clock profiling's guard, which collect keeps from outside
	 * (cmd/collect_watch.c, collector/clock.c "calls from sonde
	 * collect"); all 0 without clock profiling. */
	uint32_t watch_sig;	 /* the profiling signal */
	uint32_t watch_counters; /* the source has descriptors the target can close */
	uint64_t interval_ns;	 /* the profiling interval */
	uint64_t call_entry;	 /* a trampoline: calls %rax with %rdi, then posts and spins */
	uint64_t call_fn;	 /* clock_call_in(what) in this image */
	uint64_t call_sp;	 /* the stack pointer to run the trampoline with (16-aligned) */
	uint64_t call_done;	 /* where it posts: the caller's token (%rsi), then the result */
	uint64_t samples_addr;	 /* the collector's count of sample signals received */
	uint32_t start_tracer;	 /* TracerPid when the collector started (it said so in log.xml) */
	_Atomic uint32_t filters_seen; /* seccomp filters the collector saw installed (sysgate.c) */
};
_Static_assert(sizeof(struct sonde_shared_slot) == SONDE_SHARED_SLOT_SIZE, "slot layout");

/* The data file collect writes a process's periodic points into: overview
 * packets (reason SONDE_OV_PERIODIC) in the usual data file format. */
#define SONDE_PERIODIC_FILE "periodic"
/* The Java agent's compiled methods' scopes (doc/experiment-format.md,
 * jvm.inline) and the first line of their format's version that readers
 * take (an address's scope is the first at or after it). */
#define SONDE_JVM_INLINE_FILE "jvm.inline"
#define SONDE_JVM_INLINE_HEADER "# sonde jvm.inline 3"

/* clock_call_in's argument. */
#define SONDE_CALL_LOST 1     /* the profiling signal's action is not the collector's: stop */
#define SONDE_CALL_COUNTERS 2 /* no samples for a while: check the counters, arm again */

#endif
