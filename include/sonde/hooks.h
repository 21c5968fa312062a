/*
 * Hooks in the collector's sampling handler: what a runtime that knows
 * more than the machine adds to each clock-profile sample.
 *
 *   - A state provider is asked, at each clock sample of a thread, for
 *     the thread's runtime state: OpenMP's (OMPT's ompt_get_state, which
 *     the OpenMP specification allows in a signal handler), MPI's (a
 *     per-thread word its interposers set around each call).  Its answer
 *     is the sample's `state` (format.h), a row of sonde/states.h.
 *   - A stack source may add frames to a sample (clock and counter
 *     samples alike): a Java agent's method frames, the kernel's
 *     callchain from a perf ring buffer.  Its frames are frames of any
 *     kind (format.h, enum sonde_frame_kind), written as frame packets
 *     with their kind, flags and aux.
 *
 * For code that runs inside the target with the collector: a library of
 * sonde's own that the collector loads or `sonde collect` preloads
 * (linked against libsonde_collector.so, as the tracing libraries are),
 * or a program or library that finds these functions when the collector
 * is there (weak references, or dlsym(RTLD_DEFAULT, ...)) and leaves
 * them alone when it is not.  The functions are exported by
 * libsonde_collector.so (collector/exports.map).
 *
 *	static int omp_state(const struct sonde_hook_sample *s, void *arg)
 *	{
 *		... one load, no call that is not async-signal-safe ...
 *		return in_barrier ? SONDE_STATE_X : SONDE_HOOK_NO_STATE;
 *	}
 *	int h = __sonde_hook_state_add(omp_state, NULL);   // normal context
 *	...
 *	__sonde_hook_remove(h);   // once it returns, omp_state is never called again
 *
 * A hook runs inside the signal handler of the thread being sampled,
 * with every signal blocked, at any point of that thread: between any
 * two instructions of the target, of libc (malloc's lock may be held) or
 * of the runtime itself.  So a hook must be async-signal-safe: no malloc,
 * no stdio, no locks, no dlsym, nothing that may block; plain loads and
 * stores, atomics, its own stack, system calls (made through
 * __sonde_syscall, tracers/tracer.h, so that the target's seccomp filter
 * is obeyed).  It must be quick (it runs at every sample: microseconds,
 * not milliseconds), must keep errno, must not longjmp out or unwind
 * through the handler, and must not call the functions below.  A hook's
 * file is checked like the handler's own (tests/t00-asyncsafe.sh: every
 * function it calls must be on the allowlist; doc/internals.md, "A new
 * stack source").
 *
 * What the collector guarantees in return: a hook is called only while
 * it is registered (never after __sonde_hook_remove returned), only for
 * samples being recorded (not while recording is paused, not in a
 * thread sonde does not sample), never twice at once on one thread, and
 * whatever it returns, the target and the experiment stay whole: a
 * state that is not a state of CPU samples, a count of frames past
 * `max`, a splice outside the stack are not taken (the sample is
 * recorded as if the hook had said nothing) and are counted in log.xml
 * at the end ("warning" events).  A hook slower than the sampling
 * interval does not starve the thread: when two samples in a row took
 * at least d in their hooks, d at least half the interval (of CPU time),
 * the thread's samples of the next d are recorded without them (at most
 * about half of its time goes to hooks; counted, and said in log.xml).
 */
#ifndef SONDE_HOOKS_H
#define SONDE_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include <sonde/format.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The sample a hook is asked about; valid during the call only. */
struct sonde_hook_sample {
	const void *ucontext;	/* the interrupted thread's context (a
				   ucontext_t *, as the handler got it) */
	const uint64_t *pcs;	/* the native stack the collector unwound,
				   leaf first: the interrupted instruction
				   (SONDE_PC_EXACT set), then return
				   addresses (SONDE_PC_EXACT also on a frame a
				   signal interrupted) */
	int32_t npcs;		/* at least 1 */
	int32_t tid;		/* the sampled thread */
	uint64_t time_ns;	/* CLOCK_MONOTONIC, the sample's time */
	uint32_t what;		/* SONDE_HOOK_CLOCK, SONDE_HOOK_COUNTER */
	uint32_t reserved;
	uint64_t jit_sp, jit_fp; /* the stack and frame pointers of the
				   first frame in a JIT region
				   (__sonde_hook_jit_region) that the native
				   walk crossed: 0 when none, jit_fp 0 when
				   not known */
};
#define SONDE_HOOK_CLOCK 1   /* a clock-profile sample */
#define SONDE_HOOK_COUNTER 2 /* a counter overflow sample (collect -h) */

/* A state provider: the thread's state now, a state of CPU samples of
 * sonde/states.h (SONDE_STATEF_CPU: SONDE_STATE_CPU or a runtime's), or
 * SONDE_HOOK_NO_STATE when it has nothing to say (the thread is not in
 * the runtime).  Asked for clock samples only.  Providers are asked in
 * the order they were added; the first answer counts. */
typedef int sonde_state_provider(const struct sonde_hook_sample *s, void *arg);
#define SONDE_HOOK_NO_STATE (-1)

/* A frame that a stack source adds: the fields of a frame packet
 * (format.h).  pc: a native frame's address (SONDE_PC_EXACT on an
 * interrupted instruction; its fflags and aux are 0), a kernel frame's
 * address (all 64 bits; SONDE_FRAMEF_EXACT in fflags for the interrupted
 * one), a Java frame's method id (aux its bytecode index). */
struct sonde_hook_frame {
	uint64_t pc;
	uint8_t kind;		/* enum sonde_frame_kind */
	uint8_t fflags;		/* SONDE_FRAMEF_* */
	uint16_t aux;
	uint32_t reserved;
};

/* Where a stack source's frames go: they take the place of the native
 * frames [at, at + drop) of s->pcs (drop 0: inserted before native frame
 * at, leaf side).  The collector sets {0, 0, 0, 0} before the call: above
 * the leaf, as a kernel callchain goes (the kernel's frames are callees of
 * the instruction that entered it).  A Java agent replaces the
 * interpreter's native frames by its method frames.  flags: SONDE_SPLICE_*
 * below. */
struct sonde_hook_splice {
	int32_t at, drop;
	uint32_t flags, reserved;
};
/* The frames reach the thread's first frame, and the splice the native
 * stack's root end (at + drop == npcs): the stack is whole though the
 * native walk was not (a walk that stopped in code no object describes,
 * a JIT's, whose frames the source gave); the sample's stack is not
 * marked incomplete. */
#define SONDE_SPLICE_ROOT 0x1u

/* A stack source: writes up to max frames, leaf first, into out and
 * returns how many (0: none for this sample), and in *where where they
 * go.  Each source sees the native stack only (s->pcs); the splices of
 * several sources are taken in the order the sources were added, a
 * splice that overlaps one taken before is not.  The stack is cut at
 * the -D depth limit (its outermost frames; SONDE_STACK_TRUNCATED). */
typedef int sonde_stack_source(const struct sonde_hook_sample *s, struct sonde_hook_frame *out, int max,
			       struct sonde_hook_splice *where, void *arg);

/* The most hooks registered at once (each kind together), and the most
 * frames one source adds to a sample. */
#define SONDE_HOOK_MAX 16
#define SONDE_HOOK_MAX_FRAMES 256

/* Register a state provider or a stack source, called with arg at each
 * sample from now on (in every thread, and in a followed fork child's
 * experiment too).  Returns a handle (> 0), or -1 when SONDE_HOOK_MAX
 * hooks are registered, fn is NULL, or it is called from a hook.
 * Normal context, any thread: not from a signal handler. */
int __sonde_hook_state_add(sonde_state_provider *fn, void *arg);
int __sonde_hook_stack_add(sonde_stack_source *fn, void *arg);

/* The file that names a stack source's frames, beside the collector's
 * files in this process's experiment directory ("methods", "kallsyms":
 * doc/experiment-format.md), created for writing: the descriptor
 * (close-on-exec), or -1 with errno: EINVAL for a name that is not
 * letters, digits, '.', '_' and '-', or is hidden; EEXIST for a file the
 * experiment has (a data kind's included); ENOENT when this process
 * records no experiment (before the collector started, in a child it
 * does not follow).  Write it with __sonde_syscall (tracers/tracer.h) so
 * that a seccomp filter is obeyed, and close it soon: the target may
 * count its descriptors.  Readers take a file cut short as far as it
 * goes.  Normal context. */
int __sonde_trace_file(const char *name);

/* Code in [lo, hi) is a JIT's, which the native walk cannot step
 * through (no object describes it, and its frames need not keep a frame
 * pointer), called from native code through the entry stub at
 * [entry_lo, entry_hi) inside it.  The stub must make a frame-pointer
 * frame (push rbp; mov rbp, rsp) before it calls the JIT's code, and the
 * JIT's first frame must save that rbp right below its return address
 * (HotSpot's call_stub, interpreter and compiled code do).  From then on
 * a walk that meets the JIT's code goes on from the innermost such call
 * into the native code that made it, the stub's return address a frame of
 * its own (the JIT's frames are for a stack source to give): a Java
 * method called back from C through JNI has the C frames below it.  A
 * second call with the same stub changes the code's range (code caches
 * grow).  0, or -1 when four stubs are registered, a range is empty, or
 * it is called from a hook.  Normal context. */
int __sonde_hook_jit_region(uint64_t lo, uint64_t hi, uint64_t entry_lo, uint64_t entry_hi);

/* A recording started in a process already running, into which the
 * collector was loaded late (a JVM's attach: the Java agent's
 * Agent_OnAttach).  `settings` is a file of NAME=VALUE lines, the
 * environment's names that sonde collect sets (sonde/settings.h), the
 * experiment's directory (SONDE_EXPDIR) among them; the process's own
 * environment is not read.  The threads that exist are sampled from now
 * on; one started later only once __sonde_attach_thread is called on it
 * (no interposer sees a late-loaded library).  Stop ends the recording
 * and undoes what start did (the counters, the sampling signal's
 * action); one attached recording a process.  Start returns 0, or -1
 * with why (cap bytes); stop 0, or -1 when nothing was recording.
 * Normal context. */
int __sonde_attach_start(const char *settings, char *why, size_t cap);
void __sonde_attach_thread(void);
int __sonde_attach_stop(void);

/* Unregister hook `handle`: when it returns 0 the hook is not running
 * and will not be called again (it waits for samples running it on other
 * threads to leave it), so its code may be unloaded and arg freed.
 * -1 for a handle not registered, or when called from a hook (the hook
 * stays registered).  Normal context, any thread. */
int __sonde_hook_remove(int handle);

#ifdef __cplusplus
}
#endif

#endif
