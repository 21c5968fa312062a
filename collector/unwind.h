/*
 * DWARF CFI call-stack unwinder for the in-process collector.
 *
 * The collector samples threads from a signal handler, so the walk itself
 * (uw_backtrace) is async-signal-safe: no malloc, no locks, no stdio, no
 * dl_iterate_phdr/dladdr, no dynamic TLS.  Everything that is not
 * (discovering load objects) happens in uw_refresh, in normal context, and
 * is published to handlers through an atomic pointer.
 *
 * Unwind information comes from .eh_frame, found through each object's
 * PT_GNU_EH_FRAME (.eh_frame_hdr) binary-search table, so -O2 code without
 * frame pointers (including Debian's glibc) unwinds.  Signal frames are
 * followed through glibc's __restore_rt FDE ('S' augmentation) or, without
 * CFI, by recognising the x86_64 rt_sigreturn trampoline bytes.
 */
#ifndef SONDE_COLLECTOR_UNWIND_H
#define SONDE_COLLECTOR_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

/* Prepare/refresh the table of load objects and their .eh_frame_hdr lookup
 * tables by dl_iterate_phdr.  NOT async-signal-safe: call at start-up, after
 * dlopen, and before/after dlclose.  Uses no malloc (the two tables are
 * mmap'ed once).  Returns 0 or -1.  Safe to call repeatedly, and from
 * several threads (callers are serialised by an internal mutex); publishes
 * the new table atomically (double buffer + atomic pointer) so a concurrent
 * handler on another thread sees either the old or the new table.  Before
 * rewriting a buffer it waits until no handler still uses it, and before
 * returning it waits until no handler uses the table it replaced, so once it
 * returns no handler reads the memory of an object the new table lacks. */
int uw_refresh(void);

/* The same in three steps, for a caller that walks dl_iterate_phdr
 * itself (maps.c, which lists the objects in map.xml): one walk of the
 * loader's list per dlopen instead of two.  uw_refresh_begin returns 0 or
 * -1 (then nothing else is to be called); uw_refresh_visit is given every
 * object of the walk, in its order; uw_refresh_end publishes the table. */
struct dl_phdr_info;
int uw_refresh_begin(void);
void uw_refresh_visit(struct dl_phdr_info *info);
int uw_refresh_end(void);

/* Async-signal-safe.  Unwind from the interrupted context `uc` (a
 * ucontext_t *, the third argument of an SA_SIGINFO handler).
 *
 * Memory safety: code and .eh_frame data are read only inside the PT_LOAD
 * segments of objects in the table.  [stack_lo, stack_hi) is trusted as
 * readable stack (the caller guarantees that, e.g. with the thread's stack
 * bounds taken at thread start; this is the fast mode).  Any other address
 * (stack_lo == stack_hi == 0, a thread running on a sigaltstack, a wild
 * CFA) is read only after a fault-free probe of its pages with
 * process_vm_readv on the own process (at most 8 probes of 32 pages per
 * walk, so about 1 MiB of unknown stack is reachable; each probe costs a
 * syscall, ~0.5-1 us).  With unknown bounds, the rest of the page holding
 * the interrupted sp is trusted without a probe when the handler runs on
 * the same stack (its frame lies less than 64 KiB below sp).  If probing
 * is denied (seccomp), only what is trusted above is read.  A bad CFA
 * therefore stops the walk but never faults.
 *
 * Writes up to `max` pcs, leaf first: pcs[0] is the interrupted pc with
 * SONDE_PC_EXACT set; later entries are return addresses, except a frame
 * interrupted by a signal (found through a signal frame), whose pc is exact
 * and carries SONDE_PC_EXACT.  *flags gets SONDE_STACK_TRUNCATED when max
 * was reached before the end, SONDE_STACK_INCOMPLETE when the walk stopped
 * for any reason other than reaching the outermost frame (return-address
 * rule DW_CFA_undefined, as glibc marks _start and the clone/clone3 child,
 * or a zero return address).  Returns the number of pcs written (0 only
 * when uc is NULL or max <= 0).  Preserves errno. */
int uw_backtrace(const void *uc, uintptr_t stack_lo, uintptr_t stack_hi,
		 uint64_t *pcs, int max, unsigned *flags);

/* The same, and *jf gets the registers of the first frame in a JIT's
 * code (uw_jit_region) that the walk crossed: its stack pointer (the
 * CFA of the native frame above it) and frame pointer (0: not known);
 * sp 0 when it crossed none.  A runtime's stack source can walk its own
 * frames from there (the Java agent, when the JVM's walk failed in a
 * leaf call from compiled code).  Async-signal-safe. */
struct uw_jitframe {
	uint64_t sp, fp;
};
int uw_backtrace_jit(const void *uc, uintptr_t stack_lo, uintptr_t stack_hi,
		     uint64_t *pcs, int max, unsigned *flags,
		     struct uw_jitframe *jf);

/* Code in [lo, hi) is a JIT's, called from native code through the entry
 * stub at [elo, ehi) (inside it), which makes a frame-pointer frame: the
 * walk crosses the JIT's frames to the stub's and goes on into the native
 * code that called it (unwind.c, jit_cross).  A second call with the same
 * stub changes the code's range.  At most four stubs; 0 or -1.  Normal
 * context; the callers serialised (hooks.c's lock). */
int uw_jit_region(uint64_t lo, uint64_t hi, uint64_t elo, uint64_t ehi);

/* The same, and sps[i] gets frame i's stack pointer (for i >= 1 the
 * caller's CFA: on x86_64 its return address pcs[i] was read at sps[i] - 8
 * unless the frame is exact).  sps may be NULL.  Async-signal-safe. */
int uw_backtrace_sp(const void *uc, uintptr_t stack_lo, uintptr_t stack_hi,
		    uint64_t *pcs, uint64_t *sps, int max, unsigned *flags);

/* Whether the interrupted pc stands at a system call (just after a
 * `syscall` instruction, or on one the kernel restarts), or at most 32
 * bytes past the one whose return rcx and r11 (the interrupted registers)
 * still hold: a sample taken while the thread was in a system call.
 * Reads code only inside the executable segments of the objects in the
 * table.  Async-signal-safe. */
bool uw_at_syscall(uintptr_t pc, uintptr_t rcx, uintptr_t r11);

/* Counts for diagnostics: objects in the table (0 before uw_refresh). */
int uw_object_count(void);

#endif
