/*
 * OpenMP's states of clock and off-CPU samples (omp.h): the state
 * provider that the sampling handler asks at each clock sample of a
 * thread, and the state the off-CPU sampler gives a thread blocked in a
 * futex.  Async-signal-safe, on tests/t00-asyncsafe.sh's list: loads of
 * the words omp.c keeps and, on libomp, a call of ompt_get_state (which
 * the OpenMP specification allows in a signal handler).
 */
#define _GNU_SOURCE
#include <sonde/hooks.h>
#include <sonde/states.h>

#include "clock_internal.h"
#include "omp.h"

struct omp_region g_omp_regions[OMP_REGIONS];
_Atomic(omp_get_state_fn *) g_omp_get_state;
_Atomic int g_omp_words;

/* OMPT's states (OpenMP 5.0, ompt_state_t) by their groups: work 0x00x,
 * barriers 0x01x, taskwait and taskgroup 0x02x, mutexes 0x04x, a wait for
 * a target device 0x08x (a wait of the host thread: counted as overhead,
 * none of the causes), idle 0x100, overhead 0x101; undefined (0x102: a
 * thread the runtime does not know) has none. */
int omp_state_of_ompt(int o)
{
	switch (o & ~0xf) {
	case 0x000:
		return SONDE_STATE_OMP_WORK;
	case 0x010:
		return SONDE_STATE_OMP_BARRIER;
	case 0x020:
		return SONDE_STATE_OMP_TASKWAIT;
	case 0x040:
		return SONDE_STATE_OMP_LOCK;
	case 0x080:
		return SONDE_STATE_OMP_OVERHEAD;
	}
	if (o == 0x100)
		return SONDE_STATE_OMP_IDLE;
	if (o == 0x101)
		return SONDE_STATE_OMP_OVERHEAD;
	return SONDE_HOOK_NO_STATE;
}

/* Whether the last region slot s's thread took part in has ended: its
 * master is back from the closing barrier, or the whole team has arrived
 * there.  The arrivals are the threads' own words (omp.h), counted here
 * rather than by the team as it arrives: a count in the region's record
 * cost every region two read-modify-writes of a line the master writes;
 * this costs a sample of a thread at a region's end a look at the slots
 * in use, until the team's size is reached. */
static int omp_region_over(const struct thread_slot *s)
{
	uint64_t seq = atomic_load_explicit(&s->omp_region, memory_order_relaxed);
	if (!seq)
		return 0;
	const struct omp_region *r = &g_omp_regions[seq % OMP_REGIONS];
	if (atomic_load_explicit(&r->seq, memory_order_relaxed) != seq || atomic_load_explicit(&r->over, memory_order_relaxed))
		return 1;
	uint32_t n = atomic_load_explicit(&r->nthreads, memory_order_relaxed), arrived = 0;
	int used = atomic_load_explicit(&g_slots_used, memory_order_relaxed);
	if (used > MAX_THREADS)
		used = MAX_THREADS;
	for (int i = 0; i < used && arrived < n; i++) {
		const struct thread_slot *o = &g_slots[i];
		if (atomic_load_explicit(&o->tid, memory_order_relaxed) &&
		    (atomic_load_explicit(&o->omp_state, memory_order_relaxed) & (OMP_W_REGION_END | OMP_W_ARRIVED)) &&
		    atomic_load_explicit(&o->omp_region, memory_order_relaxed) == seq)
			arrived++;
	}
	return arrived >= n;
}

/* The state slot s's word says, SONDE_HOOK_NO_STATE for none: at the end
 * of a region, a barrier wait until the region is over, then idle. */
static int word_state(const struct thread_slot *s)
{
	uint32_t w = atomic_load_explicit(&s->omp_state, memory_order_relaxed);
	if (!(w & OMP_W_STATE))
		return SONDE_HOOK_NO_STATE;
	if ((w & OMP_W_REGION_END) && omp_region_over(s))
		return SONDE_STATE_OMP_IDLE;
	return (int)(w & OMP_W_STATE);
}

int omp_state_provider(const struct sonde_hook_sample *hs, void *arg)
{
	(void)arg;
	omp_get_state_fn *get = atomic_load_explicit(&g_omp_get_state, memory_order_acquire);
	const struct thread_slot *s = slot_by_tid(hs->tid);
	if (!get)
		return s ? word_state(s) : SONDE_HOOK_NO_STATE;
	/* libomp keeps a worker that finished its part of a region in the
	 * region's barrier state until the next region (its join barrier
	 * completes at the next fork): idle once the region has ended; and
	 * it has no state of its own for a taskwait, which OMPT's callbacks
	 * tell (omp.c keeps both in the thread's word). */
	int st = omp_state_of_ompt(get(NULL));
	if (s && (st == SONDE_STATE_OMP_BARRIER || st == SONDE_STATE_OMP_WORK)) {
		int ws = word_state(s);
		if (st == SONDE_STATE_OMP_BARRIER && omp_region_over(s))
			st = SONDE_STATE_OMP_IDLE;
		else if (st == SONDE_STATE_OMP_WORK && ws == SONDE_STATE_OMP_TASKWAIT)
			st = SONDE_STATE_OMP_TASKWAIT;
	}
	return st;
}

int omp_offcpu_state(const struct thread_slot *s)
{
	if (!atomic_load_explicit(&g_omp_words, memory_order_relaxed))
		return -1;
	switch (word_state(s)) {
	case SONDE_STATE_OMP_BARRIER:
		return SONDE_STATE_OMP_BARRIER_OFF;
	case SONDE_STATE_OMP_LOCK:
		return SONDE_STATE_OMP_LOCK_OFF;
	case SONDE_STATE_OMP_TASKWAIT:
		return SONDE_STATE_OMP_TASKWAIT_OFF;
	case SONDE_STATE_OMP_IDLE:
		return SONDE_STATE_OMP_IDLE_OFF;
	}
	return -1;
}
