/*
 * sonde collect's settings: one table (collect_settings.c) with a row per
 * option and per thing collect decides itself, saying the option's letter
 * and help, its parser, the environment variables it sets for the
 * collector (sonde/settings.h) and what the dry run says of it.  The
 * option parser, --help, the dry run and the environment the target
 * starts with (collect_env, also the list a launcher would forward to
 * each process it starts) all read it.  Private to cmd/collect*.c.
 *
 * Adding a setting: a field in struct collect_opts, a row (its option,
 * parser, variables, dry-run line), the variable's name in
 * sonde/settings.h and where the collector reads it, and its line in
 * doc/sonde-collect.md.
 */
#ifndef SONDE_COLLECT_SETTINGS_H
#define SONDE_COLLECT_SETTINGS_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include <sonde/kinds.h>

#include "base/counters.h"

/* What the options say, then what sonde collect works out from them
 * before the dry run or the start (filled by cmd_collect). */
struct collect_opts {
	/* the options */
	double interval_ms; /* -p; 0 = off */
	const char *name;   /* -o */
	const char *dir;    /* -d */
	const char *comments[16];
	int ncomments;
	long duration_s;
	double start_s, stop_s; /* -t START-END (or END); 0: none */
	double sample_s;	/* -S period; 0 = off */
	int sample_sig;		/* -l */
	int pause_sig, pause_recording; /* -y SIG[,r] */
	long limit_mb;
	int depth;
	int dry_run;
	const char *trace[SONDE_KIND_MAX + 1]; /* per traced kind (sonde/kinds.h): its setting, NULL off */
	double offcpu_ms; /* -w: off-CPU sampling interval; 0 off, -1 on (the -p interval) */
	int p_given;	  /* -p was given (else -h turns clock profiling off, as gprofng's does) */
	const char *hspec; /* -h's value */
	struct sonde_hwc counters[SONDE_MAX_COUNTERS];
	int ncounters;
	const char *follow;  /* -F: on, off, all, =REGEX */
	const char *outfile; /* -O: collect's own output appended there */
	int saved_out, saved_err; /* -O: the descriptors collect was given, for the target; -1: none */
	int archive;	     /* -a: SONDE_ARCHIVE_IDS (off, the default), _ON, _SRC */
	const char *mpi;     /* -M: OPENMPI, MPICH, on, off; NULL: not given */
	char **argv;	     /* the program and its arguments */
	/* where each option given is in collect's argv: [opt_at, opt_end) */
	int opt_at[64], opt_end[64], nopts;
	int mpitrace_given;  /* -m was given (else on with -M and in a rank) */
	const char *java;    /* -j: on, off; NULL: not given (on for a JVM) */
	const char *jvm_opts; /* -J: options for the JVM */
	int kernel;	     /* -k on: kernel call stacks */
	long attach_pid;     /* -P: the running process to record; 0 none */

	/* worked out by cmd_collect */
	char prog[PATH_MAX];	      /* the program's path */
	char exp[PATH_MAX];	      /* the experiment, as made (relative to -d) */
	char expabs[PATH_MAX];	      /* its absolute path */
	char preload[4 * PATH_MAX + 8]; /* the libraries to preload, tracing libraries first */
	char counters_env[1024];      /* -h for the collector; "" none */
	char shared[128];	      /* the shared page's path; "" none */
	uint64_t interval_ns, offcpu_ns, period_ns;

	/* MPI (collect_mpi.c): a rank's, from the launcher's environment */
	int mpi_ranked;		      /* this collect records a rank */
	long mpi_rank, mpi_size;      /* -1: not said */
	const char *mpi_launcher;     /* OPENMPI, MPICH, PMIX, SLURM */
	char mpi_job[256];	      /* the job's id, as the ranks share it */
	char mpi_founder[PATH_MAX];   /* the job's founder, absolute */
	char mpi_lineage[48];	      /* M_r<rank> */
	int launch_fwd_at;	      /* the -M form: where the forwarding options start in argv */

	/* Java (collect_java.c): the agent's options and -J's, on the java
	 * command line (java_argv) or in JAVA_TOOL_OPTIONS; "" when off */
	char java_opts[2 * PATH_MAX];
	int java_argv;
};

/* The defaults: -p on, -S on, -D 1024, -F on, nothing else. */
void collect_opts_init(struct collect_opts *o);

/* Parses the option argv[*i] ("-p") and its value, argv[*i + 1] when it
 * takes one (*i then moves to it), into o.  Returns 0, or 2 after saying
 * on stderr what is wrong (an unknown option, a missing or bad value). */
int collect_option(struct collect_opts *o, int argc, char **argv, int *i);

/* The options' lines of --help, in the table's order. */
void collect_usage_options(FILE *f);

/* What the dry run says: a line or two per setting. */
void collect_dry_run(FILE *f, const struct collect_opts *o);

/* Every environment variable the target starts with, in the table's
 * order: put(arg, name, value), value NULL for a variable to unset.
 * SONDE_TARGET_PID is the calling process's pid (call it in the target
 * before exec).  A launcher that starts the processes itself forwards
 * each name (mpirun -x NAME). */
void collect_env(const struct collect_opts *o, void (*put)(void *arg, const char *name, const char *value),
		 void *arg);

/* Finds PROGRAM as execvp would, into out; 0 or -1. */
int collect_resolve(const char *prog, char *out, size_t cap);

/* ---- MPI (collect_mpi.c) ---- */

/* Whether collect runs under an MPI launcher (its rank in the
 * environment); fills o's mpi_rank, mpi_size, mpi_launcher, mpi_job. */
int collect_mpi_rank_env(struct collect_opts *o);

/* A rank's experiment: the job's founder (SONDE_MPI_FOUNDER's, or the one
 * the ranks agree on) and M_r<rank>.er in it, into o->exp, mpi_founder,
 * mpi_lineage.  0, or an exit status after saying why. */
int collect_mpi_rank_setup(struct collect_opts *o);

/* The <mpirank/> line of a rank's log.xml. */
void collect_mpi_rank_record(const struct collect_opts *o, FILE *f);

/* The -M form: checks the launcher and the program, and makes o->argv the
 * launcher's command that runs each rank under sonde collect with the
 * options of collect's argv that are not the founder's.  0, or an exit
 * status after saying why. */
int collect_mpi_launch(struct collect_opts *o, char **argv);

/* "OPENMPI", "MPICH", "" (neither) for the MPI a program is linked with
 * (its DT_NEEDED), NULL when it cannot be read; and a name to print. */
const char *collect_mpi_of_program(const char *path);
const char *collect_mpi_name(const char *which);

/* The first answer of match (non-NULL) for a DT_NEEDED name of the ELF
 * file at path; "" when none answers, NULL when the file cannot be read
 * as one (collect_mpi.c). */
const char *collect_needed_match(const char *path, const char *(*match)(const char *soname));

/* Java (collect_java.c): whether the program is a JVM and -j, and where
 * the agent's options go (o->java_opts, o->argv); collector is the
 * collector library's path.  0, or an exit status after saying why. */
int collect_java_setup(struct collect_opts *o, const char *collector);

#endif
