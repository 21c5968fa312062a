/*
 * MPI Work and MPI Wait (include/sonde/states.h), the state of a clock
 * sample of a thread of an MPI process: a state provider
 * (include/sonde/hooks.h) that the MPI tracing library registers once
 * MPI_Init has returned.  It runs in the sampling handler, so this file
 * holds nothing else and is on tests/t00-asyncsafe.sh's list: two loads.
 *
 *   MPI Wait  the thread is inside an MPI call (sm_depth, which every
 *             wrapper raises for the call's length, recorded or not)
 *   MPI Work  otherwise, between MPI_Init and MPI_Finalize
 * and no state of its own before MPI_Init and after MPI_Finalize.
 */
#define _GNU_SOURCE
#include <stdatomic.h>

#include <sonde/hooks.h>
#include <sonde/states.h>

#include "sm.h"

SONDE_TLS int sm_depth;
_Atomic int sm_active;

int sm_state(const struct sonde_hook_sample *s, void *arg)
{
	(void)s;
	(void)arg;
	if (sm_depth > 0)
		return SONDE_STATE_MPI_WAIT;
	if (atomic_load_explicit(&sm_active, memory_order_relaxed))
		return SONDE_STATE_MPI_WORK;
	return SONDE_HOOK_NO_STATE;
}
