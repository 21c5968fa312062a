/*
 * mergegen.h: synthetic MPI jobs for sonde merge (tests/tools/mergegen.c,
 * tests/unit/test_merge.c, bench/merge.sh), written with
 * lib/reader/expwriter.h, with their truth.
 *
 * A founder (the launcher: no samples) and one sub-experiment per rank.
 * Each rank loads the same two objects at addresses of its own (ASLR: the
 * executable and a library move with the rank), and samples a known set of
 * stacks: stack s (0 .. nstacks-1) is 2 + s % 6 frames deep, its leaf at
 * offset 0x1000 + 16 s of the executable (exact) or, for odd s, of the
 * library, its callers return addresses in the executable; rank r samples
 * the stacks with (s + r) % 3 != 0, so that stacks are missing on some
 * ranks.  Sample j of rank r: stack mg_stack(r, j), state CPU, MPI work
 * (j % 10 == 1: a CPU sample in state 3) or off-CPU (j % 10 == 0: state
 * OTHER_WAIT in system call 7), weight mg_weight(r, j) ns, a quarter of it
 * System CPU and 100 ns of Wait CPU (CPU samples).  The truth sums them.
 */
#ifndef MERGEGEN_H
#define MERGEGEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/expwriter.h"

#define MG_EXE "/opt/mpiapp/bin/solver"
#define MG_LIB "/opt/mpiapp/lib/libhalo.so"
#define MG_NKEYS 3 /* 0: CPU, 1: MPI work, 2: off-CPU */

struct mg_cell {
	unsigned long long samples, weight, system, wait, nexp, min, max;
	unsigned __int128 sumsq;
};

static inline int mg_uses(unsigned r, unsigned s)
{
	return (s + r) % 3 != 0;
}

static inline unsigned mg_stack(unsigned r, unsigned j, unsigned nstacks)
{
	unsigned s = (j * 7919u + r * 31u) % nstacks;

	while (!mg_uses(r, s))
		s = (s + 1) % nstacks;
	return s;
}

static inline unsigned mg_key(unsigned j)
{
	return j % 10 == 0 ? 2 : j % 10 == 1 ? 1 : 0;
}

static inline unsigned long long mg_weight(unsigned r, unsigned j)
{
	return mg_key(j) == 2 ? 500000ull + r : 1000000ull + (r % 7) * 1000ull + j % 5;
}

static inline unsigned long long mg_exe_base(unsigned r)
{
	return 0x555555000000ull + (unsigned long long)r * 0x10000000ull;
}

static inline unsigned long long mg_lib_base(unsigned r)
{
	return 0x7f1000000000ull + (unsigned long long)r * 0x100000000ull;
}

/* The founder: a launcher's experiment without samples. */
static inline int mg_founder(const char *dir, char *err, size_t errlen)
{
	struct sonde_expw *w = sonde_expw_create(dir, err, errlen);

	if (!w)
		return -1;
	sonde_expw_log_preamble(w, 999, 1000000000ull);
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"2000000000\" status=\"0\"/>\n");
	return sonde_expw_finish(w, 0, err, errlen);
}

/*
 * Rank r's sub-experiment at dir, and its truth added to t (nstacks *
 * MG_NKEYS cells, when not NULL).
 */
static inline int mg_rank(const char *dir, unsigned r, unsigned nsamples, unsigned nstacks, struct mg_cell *t,
			  char *err, size_t errlen)
{
	struct sonde_expw *w = sonde_expw_create(dir, err, errlen);
	unsigned long long eb = mg_exe_base(r), lb = mg_lib_base(r), start = 1000000000ull + r * 1000ull;
	uint64_t *ids = calloc(nstacks, sizeof(*ids));
	struct mg_cell *mine = t ? calloc((size_t)nstacks * MG_NKEYS, sizeof(*mine)) : NULL;

	if (!w || !ids || (t && !mine)) {
		free(ids);
		free(mine);
		if (w)
			sonde_expw_finish(w, 0, NULL, 0);
		else if (!err[0])
			snprintf(err, errlen, "out of memory");
		return -1;
	}
	sonde_expw_log_preamble(w, 1000 + r, start);
	sonde_expw_map(w,
		       "<object id=\"1\" time_ns=\"%llu\" event=\"load\" path=\"%s\" base=\"0x%llx\" lo=\"0x%llx\" "
		       "hi=\"0x%llx\" buildid=\"5eed0001\"/>\n",
		       start, MG_EXE, eb, eb, eb + 0x200000);
	sonde_expw_map(w,
		       "<object id=\"2\" time_ns=\"%llu\" event=\"load\" path=\"%s\" base=\"0x%llx\" lo=\"0x%llx\" "
		       "hi=\"0x%llx\" buildid=\"5eed0002\"/>\n",
		       start, MG_LIB, lb, lb + 0x1000, lb + 0x100000);
	for (unsigned s = 0; s < nstacks; s++) {
		if (!mg_uses(r, s))
			continue;
		struct sonde_frame f[8];
		unsigned depth = 2 + s % 6;

		f[0] = (struct sonde_frame){ .pc = (s % 2 ? lb : eb) + 0x1000 + 16ull * s, .exact = true };
		for (unsigned d = 1; d < depth; d++)
			f[d] = (struct sonde_frame){ .pc = eb + 0x100000 + 0x100ull * d + 8ull * (s % 5) + 5 };
		sonde_expw_frames(w, 0, (uint16_t)depth, f, &ids[s]);
	}
	for (unsigned j = 0; j < nsamples; j++) {
		unsigned s = mg_stack(r, j, nstacks), k = mg_key(j);
		unsigned long long wt = mg_weight(r, j), tm = start + 1000000ull * (j + 1);

		if (k == 2)
			sonde_expw_offcpu(w, 2000 + r, 1000 + r, SONDE_STATE_OTHER_WAIT, 7, tm, wt, ids[s]);
		else
			sonde_expw_sample_state_ms(w, 1000 + r + (j % 2) * 100000, 0, k == 1 ? 3 : SONDE_STATE_CPU, tm,
						   wt, wt / 4, 100, ids[s]);
		if (mine) {
			struct mg_cell *c = &mine[s * MG_NKEYS + k];

			c->samples++;
			c->weight += wt;
			c->system += k == 2 ? 0 : wt / 4;
			c->wait += k == 2 ? 0 : 100;
		}
	}
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n",
		       start + 1000000ull * (nsamples + 1));
	for (size_t i = 0; mine && i < (size_t)nstacks * MG_NKEYS; i++) {
		struct mg_cell *c = &mine[i], *d = &t[i];

		if (!c->samples)
			continue;
		if (!d->nexp || c->weight < d->min)
			d->min = c->weight;
		if (c->weight > d->max)
			d->max = c->weight;
		d->nexp++;
		d->samples += c->samples;
		d->weight += c->weight;
		d->system += c->system;
		d->wait += c->wait;
		d->sumsq += (unsigned __int128)c->weight * c->weight;
	}
	free(ids);
	free(mine);
	return sonde_expw_finish(w, 0, err, errlen);
}

/* The name of rank r's sub-experiment in founder dir: a descendant's
 * (_f<r+1>.er), as today's tree knows them, or with ranknames the
 * reference's M_r<r>.er. */
static inline void mg_subname(char *buf, size_t cap, const char *dir, unsigned r, int ranknames)
{
	if (ranknames)
		snprintf(buf, cap, "%s/M_r%u.er", dir, r);
	else
		snprintf(buf, cap, "%s/_f%u.er", dir, r + 1);
}

#endif
