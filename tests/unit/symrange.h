/* The address range of a symbol of a program, for the unit tests that
 * look at a function's code (test_srcinfo, test_plaindebug). */
#ifndef SONDE_TEST_SYMRANGE_H
#define SONDE_TEST_SYMRANGE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* "lo size" of a symbol, from nm. */
static inline __attribute__((unused)) int sym_range(const char *prog, const char *name, uint64_t *lo, uint64_t *hi)
{
	char cmd[1024], line[256];

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", prog);
	FILE *p = popen(cmd, "r");
	int ok = 0;

	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long a, sz;
		char t, n[200];

		if (sscanf(line, "%llx %llx %c %199s", &a, &sz, &t, n) == 4 && !strcmp(n, name)) {
			*lo = a;
			*hi = a + sz;
			ok = 1;
		}
	}
	if (p)
		pclose(p);
	return ok;
}

#endif
