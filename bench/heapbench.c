/*
 * Allocation-heavy benchmark: N malloc/free pairs of varied small sizes
 * (16..1024 bytes) through a ring of 256 live blocks, from a few call
 * sites and call depths, plus every 100000th block leaked.
 *   heapbench [MILLIONS [touch]]   (default 4)
 * With "touch", every block is filled after it is allocated, as programs
 * that allocate usually do; without, the loop is nothing but malloc and
 * free (about 12 ns a pair here), the worst case for a tracer.
 * Prints the number of leaks and leaked bytes it made (its own truth).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 256

static unsigned long long g_leaks, g_leaked;

__attribute__((noinline)) static void *alloc_a(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *alloc_b(size_t n) { char *p = malloc(n); if (p) p[0] = 1; return p; }
__attribute__((noinline)) static void *alloc_c(size_t n) { return alloc_a(n); }

static int g_touch;

__attribute__((noinline)) static void churn(unsigned long n)
{
	void *ring[RING] = { 0 };
	unsigned x = 12345;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		size_t sz = 16 + ((x >> 8) & 1008);
		unsigned slot = (x >> 20) % RING;
		void *p = (x & 3) == 0 ? alloc_a(sz) : (x & 3) == 1 ? alloc_b(sz) : alloc_c(sz);
		if (g_touch && p)
			memset(p, (int)i, sz);
		if (i % 100000 == 99999) {
			g_leaks++;
			g_leaked += sz;
			continue; /* leaked */
		}
		free(ring[slot]);
		ring[slot] = p;
	}
	for (int i = 0; i < RING; i++)
		free(ring[i]);
}

int main(int argc, char **argv)
{
	double m = argc > 1 ? atof(argv[1]) : 4;
	g_touch = argc > 2 && !strcmp(argv[2], "touch");
	churn((unsigned long)(m * 1e6));
	printf("leaks %llu bytes %llu\n", g_leaks, g_leaked);
	return 0;
}
