/*
 * OpenMP's thread states (include/sonde/states.h: OpenMP Work and the
 * wait by cause), shared by omp.c (normal context: the OMPT tool, libgomp's
 * interposers, which keep the words), omp_state.c (async-signal-safe: the
 * state provider of the sampling handler, and what the off-CPU sampler
 * asks) and offcpu.c.
 *
 * A thread's word (struct thread_slot's omp_state) is a state id of
 * states.h, 0 for none, with OMP_W_REGION_END when the thread has finished
 * its part of parallel region omp_region (a seq of g_omp_regions) and
 * waits at its implicit barrier: a barrier wait until the region is over,
 * idle after it (the worker then waits for the next region in the
 * runtime's pool).  A region is over once every thread of its team has
 * arrived (each says so in its own word: omp_state.c counts them), or its
 * master has come back from the barrier.
 */
#ifndef SONDE_OMP_H
#define SONDE_OMP_H

#include <stdatomic.h>
#include <stdint.h>

struct thread_slot;
struct sonde_hook_sample;

#define OMP_W_STATE 0xffffu
#define OMP_W_REGION_END 0x10000u
/* The thread has arrived at the closing barrier of region omp_region (the
 * master; OMP_W_REGION_END says it of a worker): its state stays. */
#define OMP_W_ARRIVED 0x20000u

/* A ring of the latest parallel regions: a region's seq (from 1) is its
 * number among the process's regions; its record is
 * g_omp_regions[seq % OMP_REGIONS] while no later region took it (a
 * thread waiting at the end of a region that old is idle). */
#define OMP_REGIONS 256
struct omp_region {
	_Atomic uint64_t seq;
	/* the team's size (1 << 30 until known), and whether the region
	 * is over: its master has come back from the closing barrier.
	 * Written by the master alone, which owns the line: the threads'
	 * arrivals are in their own words, not counted here. */
	_Atomic uint32_t nthreads, over;
	/* The regions' record (kind omp, omp.c): what the fork knew, for
	 * the region's packet at the join.  One cache line: a region's
	 * fork writes it, and a record is cold by the time its slot comes
	 * round again (a store that misses, a line each). */
	uint64_t start_ns, codeptr, parent, stack_id;
	uint32_t requested;
	uint16_t level, flags;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct omp_region) == 64, "a region's record: one line");
extern struct omp_region g_omp_regions[OMP_REGIONS];

/* ompt_get_state once an OMPT tool of sonde's is active (libomp): its
 * answer is the state of CPU samples.  NULL: the words are. */
typedef int omp_get_state_fn(uint64_t *wait_id);
extern _Atomic(omp_get_state_fn *) g_omp_get_state;

/* Whether the words are kept (libgomp's interposers, or OMPT's
 * callbacks for the off-CPU sampler). */
extern _Atomic int g_omp_words;

/* The state provider (sonde/hooks.h).  Async-signal-safe. */
int omp_state_provider(const struct sonde_hook_sample *s, void *arg);
/* The state of a CPU sample of OMPT state o (ompt_state_t). */
int omp_state_of_ompt(int o);
/* The off-CPU state (SONDE_STATE_OMP_*_OFF) of slot s's thread, blocked
 * in a futex; -1 when it is in no OpenMP wait.  Any context. */
int omp_offcpu_state(const struct thread_slot *s);

#endif
