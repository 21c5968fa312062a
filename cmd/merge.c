/*
 * sonde merge EXPERIMENT -o MERGED: the founder's sub-experiments (MPI
 * ranks, descendants) merged into one experiment (lib/reader/expmerge.h,
 * doc/sonde-merge.md).
 *
 * Started by an MPI launcher (mpirun -np K sonde merge ...), it becomes
 * the MPI program libexec/sonde/sonde-merge-mpi.IMPL (mpi/merge_mpi.c,
 * built with that implementation's mpicc), which reduces the ranks' shares
 * over MPI: sonde itself links no MPI, so it runs where none is installed,
 * and the helper of the launcher's own implementation is the one that can
 * talk to it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reader/expmerge.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: sonde merge [-q] EXPERIMENT -o MERGED\n"
		   "\n"
		   "Merges the sub-experiments of EXPERIMENT (one per MPI rank or descendant\n"
		   "process) into the new experiment MERGED: per call stack and thread state,\n"
		   "the sum of each clock-profile metric over the processes, and their count,\n"
		   "minimum, maximum and sum of squares (MERGED/merged).  Every view, export\n"
		   "and the report read MERGED.\n"
		   "\n"
		   "  -o MERGED  the experiment to write (must not exist)\n"
		   "  -q         no summary line\n"
		   "\n"
		   "Under an MPI launcher (mpirun -np K sonde merge ...) the K processes merge\n"
		   "a share each and combine them in a tree over MPI; the result is the same\n"
		   "bytes as the serial merge's.\n");
}

/* The MPI implementation whose launcher started this process, and how
 * many processes it started; NULL when none did. */
static const char *launcher(long *size)
{
	static const struct {
		const char *var, *impl;
	} env[] = {
		{ "OMPI_COMM_WORLD_SIZE", "openmpi" },
		{ "PMI_SIZE", "mpich" },
	};

	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		const char *v = getenv(env[i].var);

		if (v && *v) {
			*size = strtol(v, NULL, 10);
			return env[i].impl;
		}
	}
	return NULL;
}

static int run_mpi(const char *impl, long size, char **argv)
{
	char exe[PATH_MAX], helper[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0) {
		fprintf(stderr, "sonde merge: cannot find sonde's own path: %s\n", strerror(errno));
		return 1;
	}
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');

	if (slash)
		*slash = '\0';
	snprintf(helper, sizeof(helper), "%s/../libexec/sonde/sonde-merge-mpi.%s", exe, impl);
	if (access(helper, X_OK) < 0) {
		fprintf(stderr,
			"sonde merge: started by an MPI launcher (%s, %ld processes) but '%s' is missing "
			"(built only where %s's headers are installed); run sonde merge without mpirun\n",
			impl, size, helper, impl);
		return 1;
	}
	argv[0] = helper;
	execv(helper, argv);
	fprintf(stderr, "sonde merge: cannot run '%s': %s\n", helper, strerror(errno));
	return 1;
}

int cmd_merge(int argc, char **argv)
{
	const char *out = NULL, *exp = NULL;
	int quiet = 0;

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "-o")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "sonde merge: missing value for option '-o'\n");
				return 2;
			}
			out = argv[++i];
		} else if (!strcmp(argv[i], "-q")) {
			quiet = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "sonde merge: unknown option '%s'\n", argv[i]);
			return 2;
		} else if (exp) {
			fprintf(stderr, "sonde merge: one experiment at a time ('%s' and '%s')\n", exp, argv[i]);
			return 2;
		} else {
			exp = argv[i];
		}
	}
	if (!exp || !out) {
		fprintf(stderr, "sonde merge: %s\n", !exp ? "no experiment given" : "no output given (-o MERGED)");
		return 2;
	}
	long size = 0;
	const char *impl = launcher(&size);

	if (impl && size > 1)
		return run_mpi(impl, size, argv);

	char err[1024];
	char **paths = NULL;
	size_t n = 0;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (sonde_merge_check_out(out, err, sizeof(err)) < 0 || sonde_merge_list(exp, &paths, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, "sonde merge: %s\n", err);
		return 1;
	}
	struct sonde_merge *m = sonde_merge_new();
	int rc = 0;

	if (!m) {
		fprintf(stderr, "sonde merge: out of memory\n");
		rc = 1;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		const char *name = strrchr(paths[i], '/');

		int r = sonde_merge_add(m, paths[i], name ? name + 1 : paths[i], err, sizeof(err));

		if (r < 0) {
			fprintf(stderr, "sonde merge: %s; nothing written\n", err);
			rc = 1;
		} else if (r > 0) {
			fprintf(stderr, "sonde merge: warning: %s\n", err);
		}
	}
	if (!rc && sonde_merge_output(m, exp, out, err, sizeof(err)) < 0) {
		fprintf(stderr, "sonde merge: %s\n", err);
		rc = 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!rc && !quiet)
		printf("%s: %zu sub-experiments merged in %.3f s\n", out, n,
		       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	sonde_merge_free(m);
	return rc;
}
