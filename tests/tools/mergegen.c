/*
 * mergegen: writes a synthetic MPI job for sonde merge (tests/tools/
 * mergegen.h): a founder DIR and NRANKS sub-experiments of SAMPLES samples
 * over NSTACKS stacks (default 64).  -r names them as MPI ranks
 * (M_r<rank>.er) instead of descendants (_f<N>.er).  Prints the truth's
 * totals: "samples N cpu_ns N mpiwork_ns N offcpu_ns N".
 *
 *	mergegen [-r] DIR NRANKS SAMPLES [NSTACKS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mergegen.h"

int main(int argc, char **argv)
{
	int ranknames = 0, a = 1;

	if (argc > 1 && !strcmp(argv[1], "-r")) {
		ranknames = 1;
		a++;
	}
	if (argc - a < 3) {
		fprintf(stderr, "usage: mergegen [-r] DIR NRANKS SAMPLES [NSTACKS]\n");
		return 2;
	}
	const char *dir = argv[a];
	unsigned nranks = (unsigned)strtoul(argv[a + 1], NULL, 10), ns = (unsigned)strtoul(argv[a + 2], NULL, 10);
	unsigned nstacks = argc - a > 3 ? (unsigned)strtoul(argv[a + 3], NULL, 10) : 64;
	char err[512] = "", sub[4096];
	struct mg_cell *t = calloc((size_t)nstacks * MG_NKEYS, sizeof(*t));

	if (!t || nstacks < 3 || mg_founder(dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "mergegen: %s\n", err[0] ? err : "bad arguments");
		return 1;
	}
	for (unsigned r = 0; r < nranks; r++) {
		mg_subname(sub, sizeof(sub), dir, r, ranknames);
		if (mg_rank(sub, r, ns, nstacks, t, err, sizeof(err)) < 0) {
			fprintf(stderr, "mergegen: %s\n", err);
			return 1;
		}
	}
	unsigned long long tot[MG_NKEYS] = { 0 }, samples = 0;

	for (size_t i = 0; i < (size_t)nstacks * MG_NKEYS; i++) {
		tot[i % MG_NKEYS] += t[i].weight;
		samples += t[i].samples;
	}
	printf("samples %llu cpu_ns %llu mpiwork_ns %llu offcpu_ns %llu\n", samples, tot[0], tot[1], tot[2]);
	free(t);
	return 0;
}
