/*
 * The environment variables that carry `sonde collect`'s settings into
 * the target, to the collector there and in every process it follows: the
 * one list of their names, shared by the two sides.
 *
 * sonde collect sets them from its table of settings
 * (cmd/collect_settings.c: each option with the variables it sets, its
 * parser, its help and what the dry run says of it; collect_env() lists
 * every variable and its value, which is what a launcher that starts the
 * processes itself, as mpirun does, forwards to each of them).  The
 * collector reads them by these names.  A traced kind's variable is its
 * row's in sonde/kinds.h (SONDE_SYNC, ...; counters: SONDE_COUNTERS).
 *
 * Values are decimal numbers unless said otherwise; a variable that is
 * unset means the default the collector documents where it reads it.
 */
#ifndef SONDE_SETTINGS_H
#define SONDE_SETTINGS_H

/* ---- set by sonde collect ------------------------------------------------- */

#define SONDE_ENV_EXPDIR "SONDE_EXPDIR"	    /* the founder experiment's absolute path (-o, -d) */
#define SONDE_ENV_SHARED "SONDE_SHARED"	    /* the page shared with sonde collect (sonde/shared.h); unset: none */
#define SONDE_ENV_TARGET_PID "SONDE_TARGET_PID" /* the pid of the process that is to record (the founder) */
#define SONDE_ENV_FOLLOW "SONDE_FOLLOW"	    /* -F: on, off, all or =REGEX */
#define SONDE_ENV_CLOCK_NS "SONDE_CLOCK_NS"	    /* -p: the clock profile's interval; 0: off */
#define SONDE_ENV_OFFCPU_NS "SONDE_OFFCPU_NS"   /* -w: the off-CPU sampler's interval; 0: off */
#define SONDE_ENV_KSTACKS "SONDE_KSTACKS"       /* -k on: 1 (kernel call stacks) */
#define SONDE_ENV_DEPTH "SONDE_DEPTH"	    /* -D: the call stack depth limit */
#define SONDE_ENV_LIMIT_MB "SONDE_LIMIT_MB"	    /* -L: the data limit in megabytes; 0: none */
#define SONDE_ENV_DURATION_S "SONDE_DURATION_S" /* -t END in whole seconds: the collector's own limit; 0: none */
#define SONDE_ENV_START_NS "SONDE_START_NS"	    /* -t START: recording paused until then (ns after the start) */
#define SONDE_ENV_STOP_NS "SONDE_STOP_NS"	    /* -t END: recording stops then; 0: never */
#define SONDE_ENV_SAMPLE_NS "SONDE_SAMPLE_NS"   /* -S: the periodic sample points' period; 0: off */
#define SONDE_ENV_SAMPLE_SIG "SONDE_SAMPLE_SIG" /* -l: the signal that records a sample point; 0: none */
#define SONDE_ENV_PAUSE_SIG "SONDE_PAUSE_SIG"   /* -y: the signal that pauses and resumes; 0: none */
#define SONDE_ENV_PAUSE_START "SONDE_PAUSE_START" /* -y SIG without ,r: 1, start paused */

/* ---- passed from a process to the ones it starts (collector/follow.c) ---- */

#define SONDE_ENV_TARGET_PPID "SONDE_TARGET_PPID" /* instead, for a child whose pid is not known yet: its parent's */
#define SONDE_ENV_LINEAGE "SONDE_LINEAGE"	      /* the process's sub-experiment (_f1_x1); unset: the founder */
#define SONDE_ENV_LINEAGE_FULL "SONDE_LINEAGE_FULL" /* the unfolded lineage of a folded one (_h...) */
#define SONDE_ENV_EXEC_CPU_NS "SONDE_EXEC_CPU_NS" /* CPU time of the image an exec replaced */

/* ---- MPI (cmd/collect_mpi.c): for each rank's sonde collect, not the target ---- */

#define SONDE_ENV_MPI_FOUNDER "SONDE_MPI_FOUNDER" /* the MPI job's founder experiment, made by sonde collect -M */
#define SONDE_ENV_MPI_JOB "SONDE_MPI_JOB"	   /* the user's: the job's id, when the launcher gives none */
#define SONDE_ENV_MPI_LOCALDIR "SONDE_MPI_LOCALDIR" /* the user's: ranks record in DIR/FOUNDER-NAME, node-local */

/* ---- the user's, for tests and odd systems (doc/sonde-collect.md) -------- */

#define SONDE_ENV_SIGNAL "SONDE_SIGNAL"		/* the profiling signal: a real-time signal's number, or URG */
#define SONDE_ENV_CLOCK_SOURCE "SONDE_CLOCK_SOURCE" /* the clock profile's source, forced */
#define SONDE_ENV_OMP "SONDE_OMP"		    /* 0: no OpenMP states (collector/omp.c), to measure their cost */
#define SONDE_ENV_JAVA_WALK "SONDE_JAVA_WALK"	    /* 0: no Java walk in the handler (tracers/java), to measure it */

/* MPI tracing's (-m; tracers/mpi/mpi.c): sonde's name first, the
 * VampirTrace name the reference documents accepted when it is unset. */
#define SONDE_ENV_MPI_STACKS "SONDE_MPI_STACKS"	      /* 0: no call stacks (VT_STACKS) */
#define SONDE_ENV_MPI_BUFFER_SIZE "SONDE_MPI_BUFFER_SIZE" /* bytes, K/M/G: a buffer (VT_BUFFER_SIZE) */
#define SONDE_ENV_MPI_MAX_FLUSHES "SONDE_MPI_MAX_FLUSHES" /* buffers' worth recorded; 0: all (VT_MAX_FLUSHES) */
#define SONDE_ENV_MPI_VERBOSE "SONDE_MPI_VERBOSE"	      /* 2: more in log.xml (VT_VERBOSE) */

/* Whether the environment entry e ("NAME=value") is the variable NAME's
 * (NAME one of the above; needs <string.h>). */
#define SONDE_ENV_IS(e, NAME) (!strncmp((e), NAME "=", sizeof(NAME)))

#endif
