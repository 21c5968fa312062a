/*
 * calltree: the program that bench/print.sh profiles with both `sonde
 * collect` and `perf record --call-graph dwarf`, so that `sonde print` and
 * `perf report` read the same program's samples with complete stacks.
 *
 *	calltree THREADS CPU_MS
 *
 * THREADS threads (the main thread is one of them) each burn CPU_MS of
 * their own CPU time (their thread CPU clock), so that a sampler at a given
 * CPU-time interval takes THREADS * CPU_MS / interval samples whatever the
 * machine's load.  The work is a layered call tree as programs have: a few
 * outer frames (worker, run_phase, dispatch), then a 12-level descent
 * through two variants per level (step_NNa, step_NNb, chosen by the bits of
 * a counter, so that many distinct paths are hot), each level doing some
 * work of its own (exclusive time at every level) with a local buffer
 * (frames of different sizes), and a leaf that does most of the work.
 * About 20 frames deep from the leaf to the thread's start.
 *
 * Built -O2 -g without frame pointers, as users build; no call is a tail
 * call (each uses its callee's result), so both tools see every frame.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile double g_sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) static double leaf_work(double x, unsigned k)
{
	for (int i = 0; i < 400 + (int)(k & 255); i++)
		x = x * 0.999999 + (double)i * 1e-9;
	return x;
}

__attribute__((noinline)) static double leaf_other(double x, unsigned k)
{
	for (int i = 0; i < 300 + (int)(k & 127); i++)
		x = x * 1.000001 - (double)i * 1e-9;
	return x;
}

/* Level N: its own work over a local buffer of BUF doubles, then the next
 * level's variant A or B by bit N of k. */
#define STEP(name, BUF, nexta, nextb, bit)                                    \
	__attribute__((noinline)) static double name(double x, unsigned k)    \
	{                                                                     \
		volatile double buf[BUF];                                     \
		for (int i = 0; i < BUF; i++)                                 \
			buf[i] = x + i;                                       \
		for (int i = 0; i < 40; i++)                                  \
			x = x * 0.9999 + buf[i % BUF] * 1e-7;                 \
		double r = ((k >> (bit)) & 1) ? nexta(x, k) : nextb(x, k);    \
		return r * 0.5 + x * 1e-3;                                    \
	}

STEP(step_12a, 2, leaf_work, leaf_other, 12)
STEP(step_12b, 3, leaf_other, leaf_work, 12)
STEP(step_11a, 4, step_12a, step_12b, 11)
STEP(step_11b, 1, step_12b, step_12a, 11)
STEP(step_10a, 2, step_11a, step_11b, 10)
STEP(step_10b, 3, step_11b, step_11a, 10)
STEP(step_09a, 4, step_10a, step_10b, 9)
STEP(step_09b, 1, step_10b, step_10a, 9)
STEP(step_08a, 2, step_09a, step_09b, 8)
STEP(step_08b, 3, step_09b, step_09a, 8)
STEP(step_07a, 4, step_08a, step_08b, 7)
STEP(step_07b, 1, step_08b, step_08a, 7)
STEP(step_06a, 2, step_07a, step_07b, 6)
STEP(step_06b, 3, step_07b, step_07a, 6)
STEP(step_05a, 4, step_06a, step_06b, 5)
STEP(step_05b, 1, step_06b, step_06a, 5)
STEP(step_04a, 2, step_05a, step_05b, 4)
STEP(step_04b, 3, step_05b, step_05a, 4)
STEP(step_03a, 4, step_04a, step_04b, 3)
STEP(step_03b, 1, step_04b, step_04a, 3)
STEP(step_02a, 2, step_03a, step_03b, 2)
STEP(step_02b, 3, step_03b, step_03a, 2)
STEP(step_01a, 4, step_02a, step_02b, 1)
STEP(step_01b, 1, step_02b, step_02a, 1)

__attribute__((noinline)) static double dispatch(double x, unsigned k)
{
	double r = (k & 1) ? step_01a(x, k) : step_01b(x, k);

	return r + x * 1e-9;
}

__attribute__((noinline)) static double run_phase(unsigned phase, uint64_t until)
{
	double x = 1.0 + phase;
	unsigned k = phase * 7919u;

	/* the clock is read every 64 descents: about 20 us of work between */
	while (thread_cpu_ns() < until)
		for (int i = 0; i < 64; i++)
			x += dispatch(x, k++) * 1e-6;
	return x;
}

static uint64_t g_cpu_ns;

__attribute__((noinline)) static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t start = thread_cpu_ns();
	double x = 0;

	/* phases of 10 ms of CPU each, so that the phase's seed changes */
	for (unsigned phase = 0; start + (uint64_t)phase * 10000000ull < start + g_cpu_ns; phase++) {
		uint64_t until = start + (uint64_t)(phase + 1) * 10000000ull;

		if (until > start + g_cpu_ns)
			until = start + g_cpu_ns;
		x += run_phase(phase * 31 + id, until);
	}
	g_sink = x;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: calltree THREADS CPU_MS\n");
		return 2;
	}
	int n = atoi(argv[1]);
	long ms = atol(argv[2]);

	if (n < 1 || n > 256 || ms < 0) {
		fprintf(stderr, "calltree: bad arguments\n");
		return 2;
	}
	g_cpu_ns = (uint64_t)ms * 1000000ull;
	/* on the heap: main's frame stays small, as the other frames */
	pthread_t *t = calloc((size_t)n, sizeof(*t));

	if (!t)
		return 1;

	for (int i = 1; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i)) {
			fprintf(stderr, "calltree: pthread_create failed\n");
			return 1;
		}
	worker(0);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	return 0;
}
