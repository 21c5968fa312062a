/*
 * libsonde_mpi.so's insides: what its ABI-independent core (mpi.c, the
 * module, the tables, the packets) shares with its two ABI units (abi.c,
 * compiled once against Open MPI's mpi.h and once against MPICH's, with
 * their names prefixed) and the state provider (state.c).
 *
 * How one library serves both ABIs (doc/internals.md, "MPI tracing"):
 * each exported MPI_X (and gfortran's mpi_x_) is an assembly stub
 * (generated, $(B)/gen/mpi_stubs.S) that jumps through its slot of
 * sm_slot[]; a slot starts empty and the stub then calls sm_resolve,
 * which detects the MPI library loaded (once) and fills the slot with the
 * wrapper of that ABI, or with the library's own PMPI_X (no recording)
 * when the library is neither or the unit has no wrapper for it.  Every
 * argument thus reaches the wrapper or PMPI_X as the caller passed it:
 * nothing ABI-specific is read before the ABI is known.
 */
#ifndef SONDE_TRACERS_MPI_H
#define SONDE_TRACERS_MPI_H

#include <stdint.h>

#include <sonde/mpifuncs.h>

#include <sonde/hooks.h>

#include "../tracer.h"

#define SM_HIDDEN __attribute__((visibility("hidden")))

/* Slots: C function id, then SONDE_MPI_NFUNCS + id for its Fortran
 * binding. */
#define SM_NSLOTS (2 * SONDE_MPI_NFUNCS)

/* sm_ev.done of an event written while its thread stays in the call */
#define SM_DONE_REARMED 2

/* One traced call. */
struct sm_ev {
	uint64_t t0, dur, stack, comm, coll;
	int func, flags, peer, tag;
	int rec;  /* recorded (tracing on, not nested in another MPI call) */
	int done; /* its call packet is written (SM_DONE_REARMED: and the thread is in
		   * the call again, MPI_Abort's) */
	uint64_t ra, cfa;
};

/* A communicator as the tracer knows it. */
struct sm_comm {
	uint64_t key;	     /* the handle */
	uint64_t id;	     /* format.h's communicator id */
	uint64_t parent_id;  /* for a communicator made through a wrapper */
	uint32_t seq;	     /* its place among its parent's creations */
	uint32_t nchild;     /* creations from it so far */
	int ready;	     /* size and world filled */
	int size, rsize;     /* local group; remote group (intercommunicator) */
	int *world, *rworld; /* their ranks in MPI_COMM_WORLD (NULL: world itself) */
	struct sm_comm *next;
};

/* A request (or a matched message) the tracer follows. */
enum { SM_RQ_RECV = 1, SM_RQ_PSEND, SM_RQ_PRECV, SM_RQ_MSG };
struct sm_req {
	uint64_t key;
	int kind, func, peer, tag;
	struct sm_comm *comm;
	uint64_t bytes;
	struct sm_req *next;
};

/* What an ABI unit gives the core. */
struct sm_abi {
	const char *name; /* log.xml's abi: openmpi, mpich */
	/* Whether the loaded library is this ABI's and a version its
	 * wrappers are right for (a check that reads nothing ABI-specific
	 * until it knows): 1, with its version's first line in lib. */
	int (*check)(char *lib, int size);
	/* Resolve the real functions and fill target[] (NULL where the
	 * unit has no wrapper or the library no function). */
	void (*fill)(void **target);
	/* Rank and size in MPI_COMM_WORLD (after MPI_Init). */
	void (*world)(int *rank, int *size);
};
extern const struct sm_abi ompi_abi SM_HIDDEN, mpich_abi SM_HIDDEN;

/* ---- the core (mpi.c) ---- */
extern void *sm_slot[SM_NSLOTS] SM_HIDDEN;
void *sm_resolve(int slot) SM_HIDDEN;
void sm_begin(struct sm_ev *e, int func, int flags, uint64_t ra, uint64_t cfa) SM_HIDDEN;
void sm_after(struct sm_ev *e, int err) SM_HIDDEN;
void sm_end(struct sm_ev *e) SM_HIDDEN;
void sm_message(const struct sm_ev *e, int dir, int peer, int tag, uint64_t comm, uint64_t bytes, uint64_t t) SM_HIDDEN;
/* After a successful MPI_Init: the rank, the settings, the state. */
void sm_started(const char *abi, int rank, int size) SM_HIDDEN;
void sm_stopping(void) SM_HIDDEN;
extern int sm_my_rank SM_HIDDEN;
/* Setting VT_VERBOSE / SONDE_MPI_VERBOSE. */
extern int sm_verbose SM_HIDDEN;

/* Tables, each under its own lock (normal context). */
struct sm_comm *sm_comm_find(uint64_t key) SM_HIDDEN;
struct sm_comm *sm_comm_add(struct sm_comm *c) SM_HIDDEN; /* the one kept */
void sm_comm_forget(uint64_t key) SM_HIDDEN;
void sm_req_put(const struct sm_req *r) SM_HIDDEN;
int sm_req_get(uint64_t key, struct sm_req *out, int take) SM_HIDDEN;
void sm_req_forget(uint64_t key) SM_HIDDEN;
void sm_log_once(int *flag, const char *level, const char *text) SM_HIDDEN;

/* ---- the state (state.c: runs in the sampling handler) ---- */
extern SONDE_TLS int sm_depth SM_HIDDEN; /* MPI calls the thread is in */
extern _Atomic int sm_active SM_HIDDEN;	 /* between MPI_Init and MPI_Finalize */
int sm_state(const struct sonde_hook_sample *s, void *arg) SM_HIDDEN;

#endif
