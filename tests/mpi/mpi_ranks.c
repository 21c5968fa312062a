/*
 * An MPI program whose truth is known, for tests/t75-mpi-launch.sh: each
 * rank burns (rank + 1) * MS milliseconds of CPU, the ranks meet in a
 * barrier and an allreduce, and each prints its own account after
 * MPI_Finalize:
 *	rank R size S cpu_ns N
 * with N its process's CPU time (every thread, MPI's included).
 *
 *	mpi_ranks MS [abort|kill|fork]
 * abort: rank 1 calls MPI_Abort after its burn; kill: rank 2 kills itself
 * (SIGKILL) halfway through its burn; fork: each rank's burn is done by a
 * child process it forks and waits for (a rank's descendant), which prints
 *	child rank R cpu_ns N
 * with N its own CPU time (its burn, and what the fork's copied pages
 * cost it): its thread's, the child's only one (a profiler's own threads
 * in it, sonde's off-CPU sampler under -w on, are no part of it).
 * MPI_RANKS_STAGGER_MS=D in the environment: the process the launcher made
 * rank R (PMI_RANK, OMPI_COMM_WORLD_RANK) waits R * D ms before MPI_Init.
 * Two Open MPI singletons that start together race to create Open MPI's
 * session directory and one of them fails now and then ("A call to mkdir
 * was unable to create the desired directory ... File exists"; 3 in 40
 * plain runs of two under mpirun.mpich), which is Open MPI's, not the
 * profiler's.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long cpu_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static volatile double sink;

static void burn(long long ns, int kill_half)
{
	long long t0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	double x = 1;

	while (cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - t0 < ns) {
		for (int i = 0; i < 10000; i++)
			x = x * 1.0000001 + 1e-9;
		sink = x;
		if (kill_half && cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - t0 > ns / 2)
			raise(SIGKILL);
	}
}

int main(int argc, char **argv)
{
	int rank, size;
	long ms = argc > 1 ? atol(argv[1]) : 100;
	const char *mode = argc > 2 ? argv[2] : "";
	double in, out;

	const char *stagger = getenv("MPI_RANKS_STAGGER_MS");
	const char *lr = getenv("PMI_RANK") ? getenv("PMI_RANK") : getenv("OMPI_COMM_WORLD_RANK");
	if (stagger && lr)
		usleep((useconds_t)(atol(lr) * atol(stagger) * 1000));
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(mode, "fork")) {
		pid_t p = fork();
		if (p == 0) {
			burn((rank + 1) * ms * 1000000ll, 0);
			printf("child rank %d cpu_ns %lld\n", rank, cpu_ns(CLOCK_THREAD_CPUTIME_ID));
			fflush(stdout);
			_exit(0);
		}
		waitpid(p, NULL, 0);
	} else {
		burn((rank + 1) * ms * 1000000ll, !strcmp(mode, "kill") && rank == 2);
	}
	if (!strcmp(mode, "abort") && rank == 1) {
		fprintf(stderr, "rank 1 aborts\n");
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	in = rank;
	MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	printf("rank %d size %d cpu_ns %lld sum %g\n", rank, size, cpu_ns(CLOCK_PROCESS_CPUTIME_ID), out);
	return 0;
}
