/*
 * The OpenMP states' cost per region (bench/omp.sh): REGIONS parallel
 * regions whose threads do nothing, the thread count from
 * OMP_NUM_THREADS.  Prints the wall time a region took:
 *	regions N us_per_region U
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	double t0 = omp_get_wtime();

	for (long r = 0; r < n; r++) {
#pragma omp parallel
		{
			__asm__ volatile("" ::: "memory");
		}
	}
	printf("regions %ld us_per_region %.3f\n", n, (omp_get_wtime() - t0) / (double)n * 1e6);
	return 0;
}
