/*
 * The cost of OpenMP states (bench/omp.sh): REGIONS parallel regions of
 * fixed work per thread, each with a critical section, an explicit
 * barrier and a reduction (the region, barrier and lock events the
 * states follow), the thread count from OMP_NUM_THREADS.  Prints the wall
 * time of the regions:
 *	regions N wall_s S
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static double work(long n, double x)
{
	for (long i = 0; i < n; i++)
		x = x * 1.0000001 + 1e-9;
	return x;
}

int main(int argc, char **argv)
{
	long regions = argc > 1 ? atol(argv[1]) : 20000;
	long per = argc > 2 ? atol(argv[2]) : 20000;
	double sum = 0, shared = 0;
	double t0 = omp_get_wtime();

	for (long r = 0; r < regions; r++) {
#pragma omp parallel reduction(+ : sum)
		{
			double x = work(per, 1.0 + omp_get_thread_num());
#pragma omp critical
			shared += x * 1e-12;
#pragma omp barrier
			sum += work(per / 2, x);
		}
	}
	printf("regions %ld wall_s %.4f check %g\n", regions, omp_get_wtime() - t0, sum + shared);
	return 0;
}
