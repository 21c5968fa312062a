/*
 * pingpong: two threads hand a byte back and forth through two pipes N
 * times, so each blocks in read() once per hand-over: 2 N blocking waits,
 * most of the run off CPU in short waits (about 100,000 and more per
 * second here).  The off-CPU benchmark's program (bench/offcpu.sh).
 * Both threads are pinned to the first CPU the process may use, so that
 * each hand-over is a direct switch between them: without pinning, where
 * the scheduler puts the two threads (one CPU, or two with a wake-up IPI
 * each time) changed the rate between runs by a factor of up to 7 here.
 * With "free" the threads go where the scheduler puts them: on two CPUs
 * each waits blocked (not runnable) for most of a hand-over.
 * Prints "waits N wall_s S rate R" on stderr.
 *   pingpong [N [free]]   (default 200000)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static long n = 200000;

static void *other(void *arg)
{
	(void)arg;
	char c;
	for (long i = 0; i < n; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n = atol(argv[1]);
	if (n <= 0 || pipe(ab) < 0 || pipe(ba) < 0)
		return 2;
	cpu_set_t set;
	if (!(argc > 2 && !strcmp(argv[2], "free")) && sched_getaffinity(0, sizeof set, &set) == 0) {
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				CPU_ZERO(&set);
				CPU_SET(c, &set);
				sched_setaffinity(0, sizeof set, &set); /* the thread below inherits it */
				break;
			}
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t t;
	pthread_create(&t, NULL, other, NULL);
	char c = 'x';
	for (long i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "waits %ld wall_s %.3f rate %.0f\n", 2 * n, s, 2 * n / s);
	return 0;
}
