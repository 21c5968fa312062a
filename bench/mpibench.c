/*
 * mpibench SIZE ITERS: the MPI benchmark's program (bench/mpi.sh).  Each
 * of the job's ranks exchanges SIZE-byte messages with both neighbours
 * of a ring (MPI_Sendrecv each way), ITERS times, with an allreduce of 8
 * bytes every 10 iterations and a little computation between exchanges,
 * as a halo exchange does; a barrier at the start and at the end.
 * Rank 0 prints "size S iters N wall_s W" (the time between the barriers).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long bytes = argc > 1 ? atol(argv[1]) : 1024;
	long iters = argc > 2 ? atol(argv[2]) : 2000;
	if (bytes < 1 || iters < 1) {
		if (!rank)
			fprintf(stderr, "usage: mpibench SIZE ITERS\n");
		MPI_Finalize();
		return 2;
	}
	char *out = malloc((size_t)bytes), *in = malloc((size_t)bytes);
	memset(out, rank, (size_t)bytes);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	volatile double x = 1;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long i = 0; i < iters; i++) {
		MPI_Sendrecv(out, (int)bytes, MPI_BYTE, right, 1, in, (int)bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		MPI_Sendrecv(out, (int)bytes, MPI_BYTE, left, 2, in, (int)bytes, MPI_BYTE, right, 2, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		for (int k = 0; k < 20000; k++)
			x = x * 1.0000001 + 1e-9;
		if (i % 10 == 9) {
			double v = x, s;
			MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double t1 = MPI_Wtime();
	if (!rank)
		printf("size %ld iters %ld wall_s %.6f\n", bytes, iters, t1 - t0);
	free(out);
	free(in);
	MPI_Finalize();
	return 0;
}
