/*
 * The thread states of the clock profile: the one list of them.
 *
 * A clock-profile sample carries the state its thread was in (the
 * `state` of a profile or off-CPU packet, format.h): the Linux
 * microstates the collector finds itself (on CPU; blocked on a lock;
 * blocked any other way, after table 6-1 of the reference's
 * clock-profiling chapter), and the states a runtime knows better, which
 * a state provider of the sampling handler gives (sonde/hooks.h: OpenMP's
 * work, barrier wait, lock wait, idle and overhead through OMPT, MPI's
 * work and wait through its interposers' per-thread word).  Everything
 * that names a state reads this table: the enum of format.h, the
 * collector's check of a provider's answer (collector/sample.c), the
 * reader's check of a packet (lib/reader/experiment.c), the metric table
 * (lib/model/profile.h: a state's metric, its place and its values),
 * sonde print's default metrics and help (cmd/print.c), agg's `state`
 * field (lib/agg/dlang_events.c), -dump profile (lib/views/view_dump.c),
 * -header and -statistics.  A new state is a row here (doc/internals.md,
 * "A new thread state").
 *
 * Two families, by the packet that carries the state:
 *   - a state of CPU samples (SONDE_STATEF_CPU): a profile packet, whose
 *     weight is the thread's CPU time since its previous sample.  Its
 *     time is CPU time (Total CPU, User CPU, System CPU), and also its
 *     own metric's when it has one: a refinement of CPU time, as
 *     OpenMP Work or MPI Wait (a spinning wait) are.  SONDE_STATE_CPU is
 *     the plain one: its metrics are the microstates themselves.
 *   - a state of off-CPU samples (no flag): an off-CPU packet (collect
 *     -w), whose weight is wall time the thread was blocked.  Its time is
 *     its metric's and Total Thread Time's, never CPU time.
 *
 * Columns of X(NAME, id, flags, M, name, metric, title, agg, dump):
 *   NAME    enum suffix: SONDE_STATE_NAME (format.h)
 *   id      the number on disk (a packet's `state`); never reused or
 *           changed.  Ids are dense from 0 (checked below).
 *   flags   SONDE_STATEF_*
 *   M       1: the state has a metric of its own (metric, title, and name
 *           as the metric's column header); 0: none (metric and title
 *           NULL; only a state of CPU samples may have none).  A state's
 *           metric follows Wait CPU and the states before it in the
 *           table of every metric, before Total Thread.
 *   name    what the views call it ("User Lock": -header, -statistics,
 *           the metric's column header)
 *   metric  the metric's name (-metrics e.ulock) and title
 *   agg     the value of `sonde agg`'s profile field `state`
 *   dump    its spelling in -dump profile ("state user-lock")
 * The rows are in id order.
 *
 * A build with SONDE_TEST_STATES has one more row (TEST: a state of CPU
 * samples with a metric), which only the tests' builds have (the Makefile's
 * build/teststates): the test of the sampling handler's hooks
 * (tests/t46-hooks.sh) records it through a state provider.  Its id is the
 * one after the last row: a new row moves it.
 */
#ifndef SONDE_STATES_H
#define SONDE_STATES_H

#include <stddef.h>

/* A state of CPU samples (a profile packet's); else of off-CPU samples. */
#define SONDE_STATEF_CPU 0x1u
/* A runtime's state of off-CPU samples (OpenMP's waits blocked in a
 * futex): a refinement of User Lock that the collector's off-CPU sampler
 * takes from the runtime's word for the thread (collector/omp_state.c).
 * The views that list every off-CPU state (-header, the default metrics)
 * list it only when an experiment has samples in it, and -statistics
 * counts its time in User Lock's column, so that an experiment without
 * it reads as before. */
#define SONDE_STATEF_RUNTIME 0x2u

#ifdef SONDE_TEST_STATES
#define SONDE_STATES_TEST_(X) X(TEST, 15, SONDE_STATEF_CPU, 1, "Test State", "teststate", "Test State Time", "test-state", "test-state")
#else
#define SONDE_STATES_TEST_(X)
#endif

/* clang-format off */
#define SONDE_STATES(X)                                                                              \
	X(CPU, 0, SONDE_STATEF_CPU, 0, "CPU", NULL, NULL, "cpu", "cpu")                              \
	X(USER_LOCK, 1, 0, 1, "User Lock", "ulock", "User Lock Time", "user-lock", "user-lock")     \
	X(OTHER_WAIT, 2, 0, 1, "Other Wait", "owait", "Other Wait Time", "other-wait", "other-wait") \
	X(MPI_WORK, 3, SONDE_STATEF_CPU, 1, "MPI Work", "mpiwork", "MPI Work Time", "mpi-work", "mpi-work") \
	X(MPI_WAIT, 4, SONDE_STATEF_CPU, 1, "MPI Wait", "mpiwait", "MPI Wait Time", "mpi-wait", "mpi-wait") \
	X(OMP_WORK, 5, SONDE_STATEF_CPU, 1, "OpenMP Work", "ompwork", "OpenMP Work Time", "omp-work", "omp-work") \
	X(OMP_BARRIER, 6, SONDE_STATEF_CPU, 1, "OMP Barrier", "ompbarrier", "OpenMP Barrier Wait Time", "omp-barrier", "omp-barrier") \
	X(OMP_LOCK, 7, SONDE_STATEF_CPU, 1, "OMP Lock", "omplock", "OpenMP Lock Wait Time", "omp-lock", "omp-lock") \
	X(OMP_TASKWAIT, 8, SONDE_STATEF_CPU, 1, "OMP Taskwait", "omptaskwait", "OpenMP Taskwait Time", "omp-taskwait", "omp-taskwait") \
	X(OMP_IDLE, 9, SONDE_STATEF_CPU, 1, "OMP Idle", "ompidle", "OpenMP Idle Time", "omp-idle", "omp-idle") \
	X(OMP_OVERHEAD, 10, SONDE_STATEF_CPU, 1, "OMP Overhead", "ompoverhead", "OpenMP Overhead Time", "omp-overhead", "omp-overhead") \
	X(OMP_BARRIER_OFF, 11, SONDE_STATEF_RUNTIME, 1, "OMP Barrier Off-CPU", "ompbarrier_off", "OpenMP Barrier Off-CPU Time", "omp-barrier-off", "omp-barrier-off") \
	X(OMP_LOCK_OFF, 12, SONDE_STATEF_RUNTIME, 1, "OMP Lock Off-CPU", "omplock_off", "OpenMP Lock Off-CPU Time", "omp-lock-off", "omp-lock-off") \
	X(OMP_TASKWAIT_OFF, 13, SONDE_STATEF_RUNTIME, 1, "OMP Taskwait Off-CPU", "omptaskwait_off", "OpenMP Taskwait Off-CPU Time", "omp-taskwait-off", "omp-taskwait-off") \
	X(OMP_IDLE_OFF, 14, SONDE_STATEF_RUNTIME, 1, "OMP Idle Off-CPU", "ompidle_off", "OpenMP Idle Off-CPU Time", "omp-idle-off", "omp-idle-off") \
	SONDE_STATES_TEST_(X)
/* clang-format on */

/*
 * Summed metrics: a metric whose value is the sum of several states' time
 * (the reference's OpenMP Wait: every OpenMP wait, by whatever cause, on
 * CPU or blocked).  Columns of S(NAME, members, name, metric, title):
 *   NAME     SONDE_M_SUM_NAME (model/profile.h): it follows the states'
 *            metrics, before Total Thread
 *   members  the states it sums, as SONDE_STATE_BIT(NAME) | ...: evaluated
 *            where format.h's enum is known (the model's files)
 *   name, metric, title   as a state's
 * A sum stands for its members in sonde print's default metrics (which
 * show the sum, not each member).
 */
#define SONDE_STATE_BIT(NAME) (1ull << SONDE_STATE_##NAME)
/* clang-format off */
#define SONDE_STATE_SUMS(S)                                                                         \
	S(OMP_WAIT,                                                                                  \
	  SONDE_STATE_BIT(OMP_BARRIER) | SONDE_STATE_BIT(OMP_LOCK) | SONDE_STATE_BIT(OMP_TASKWAIT) | \
	  SONDE_STATE_BIT(OMP_IDLE) | SONDE_STATE_BIT(OMP_OVERHEAD) | SONDE_STATE_BIT(OMP_BARRIER_OFF) | \
	  SONDE_STATE_BIT(OMP_LOCK_OFF) | SONDE_STATE_BIT(OMP_TASKWAIT_OFF) | SONDE_STATE_BIT(OMP_IDLE_OFF), \
	  "OpenMP Wait", "ompwait", "OpenMP Wait Time")
/* clang-format on */

/* How many summed metrics. */
enum {
#define SONDE_STATE_NSUMS_(NAME, ...) +1
	SONDE_STATE_NSUMS = 0 SONDE_STATE_SUMS(SONDE_STATE_NSUMS_),
#undef SONDE_STATE_NSUMS_
};

/* A state of off-CPU samples has a metric: its time shows nowhere else. */
#define SONDE_STATE_CHECK_(NAME, id, flags, M, ...) \
	_Static_assert(((flags) & SONDE_STATEF_CPU) || (M), "off-CPU state " #NAME " has a metric");
SONDE_STATES(SONDE_STATE_CHECK_)
#undef SONDE_STATE_CHECK_

/* How many states (the ids are 0 to SONDE_STATE_COUNT - 1). */
enum {
#define SONDE_STATE_COUNT_(NAME, id, ...) +1
	SONDE_STATE_COUNT = 0 SONDE_STATES(SONDE_STATE_COUNT_),
#undef SONDE_STATE_COUNT_
};

/* How many states have a metric of their own. */
enum {
#define SONDE_STATE_NMETRICS_(NAME, id, flags, M, ...) +(M)
	SONDE_STATE_NMETRICS = 0 SONDE_STATES(SONDE_STATE_NMETRICS_),
#undef SONDE_STATE_NMETRICS_
};

/* SONDE_STATE_METRIC_IF_(M, ...): the rest when M is 1, nothing when 0;
 * for lists of the states that have a metric (model/profile.h). */
#define SONDE_STATE_METRIC_IF_(M, ...) SONDE_STATE_METRIC_IF_##M##_(__VA_ARGS__)
#define SONDE_STATE_METRIC_IF_1_(...) __VA_ARGS__
#define SONDE_STATE_METRIC_IF_0_(...)

struct sonde_state_desc {
	int id;
	unsigned flags;
	const char *name, *metric, *title, *agg, *dump;
};

/* The row of state id, NULL for an id not in the table.  Any context (a
 * constant table, no call): the collector's sampling handler uses it. */
static inline const struct sonde_state_desc *sonde_state_desc(unsigned id)
{
	static const struct sonde_state_desc rows[] = {
#define SONDE_STATE_ROW_(NAME, id, flags, M, name, metric, title, agg, dump) \
	[id] = { id, flags, name, metric, title, agg, dump },
		SONDE_STATES(SONDE_STATE_ROW_)
#undef SONDE_STATE_ROW_
	};
	/* A gap or an id past the count makes the array longer than the
	 * count; a repeated id warns (-Woverride-init). */
	_Static_assert(sizeof rows / sizeof rows[0] == SONDE_STATE_COUNT, "state ids are 0 to SONDE_STATE_COUNT - 1");
	return id < SONDE_STATE_COUNT ? &rows[id] : NULL;
}

/* Whether id is a state of CPU samples (a profile packet may carry it). */
static inline int sonde_state_cpu(unsigned id)
{
	const struct sonde_state_desc *d = sonde_state_desc(id);
	return d && (d->flags & SONDE_STATEF_CPU);
}

/* Whether id is a runtime's state of off-CPU samples (SONDE_STATEF_RUNTIME). */
static inline int sonde_state_runtime_offcpu(unsigned id)
{
	const struct sonde_state_desc *d = sonde_state_desc(id);
	return d && (d->flags & SONDE_STATEF_RUNTIME);
}

/* Whether id is a state of off-CPU samples (an off-CPU packet's). */
static inline int sonde_state_offcpu(unsigned id)
{
	const struct sonde_state_desc *d = sonde_state_desc(id);
	return d && !(d->flags & SONDE_STATEF_CPU);
}

#endif
