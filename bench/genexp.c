/*
 * genexp: writes a large synthetic experiment for benchmarking `sonde
 * print` (bench/print.sh), with lib/reader/expwriter.h.
 *
 *	genexp DIR SAMPLES STACKS DEPTH THREADS [ELF]
 *
 * SAMPLES clock-profile samples (1 ms each) spread over THREADS threads
 * and STACKS distinct call stacks of about DEPTH frames (DEPTH-6 to
 * DEPTH+6), drawn with a skewed (Zipf-like) popularity, as real profiles
 * have a few hot paths and a long tail.  The frames are addresses in the
 * executable segment of ELF (default /usr/lib/x86_64-linux-gnu/libc.so.6),
 * which map.xml names, so that symbolisation resolves real function names:
 * a pool of 600 "functions", each stack a walk through 5 fixed outer frames
 * then frames chosen from a window of the pool that moves with the depth
 * (callers near the root, leaves deep), like a layered program.
 *
 * Deterministic: the same arguments give the same experiment.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/expwriter.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double unit(void)
{
	return (double)(next() >> 11) / 9007199254740992.0;
}

/* The executable PT_LOAD of an ELF64 file: [vaddr, vaddr + memsz), and
 * its GNU build id in hex ("" when it has none). */
static int text_range(const char *path, uint64_t *lo, uint64_t *hi, char *buildid)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		return -1;
	const unsigned char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

	close(fd);
	if (p == MAP_FAILED)
		return -1;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
	int rc = -1;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	buildid[0] = '\0';
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(p + eh->e_phoff + (size_t)i * eh->e_phentsize);

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && rc < 0) {
			*lo = ph->p_vaddr;
			*hi = ph->p_vaddr + ph->p_memsz;
			rc = 0;
		}
		if (ph->p_type != PT_NOTE || ph->p_offset + ph->p_filesz > (uint64_t)st.st_size)
			continue;
		const unsigned char *n = p + ph->p_offset, *end = n + ph->p_filesz;

		while (n + 12 <= end) {
			uint32_t nsz, dsz, type;

			memcpy(&nsz, n, 4);
			memcpy(&dsz, n + 4, 4);
			memcpy(&type, n + 8, 4);
			const unsigned char *name = n + 12, *desc = name + ((nsz + 3) & ~3u);

			if (desc + dsz > end)
				break;
			if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(name, "GNU", 4) && dsz <= 64)
				for (uint32_t k = 0; k < dsz; k++)
					sprintf(buildid + 2 * k, "%02x", desc[k]);
			n = desc + ((dsz + 3) & ~3u);
		}
	}
out:
	munmap((void *)p, (size_t)st.st_size);
	return rc;
}

#define NPOOL 600
#define OUTER 5

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: genexp DIR SAMPLES STACKS DEPTH THREADS [ELF]\n");
		return 2;
	}
	const char *dir = argv[1];
	uint64_t nsamples = strtoull(argv[2], NULL, 10);
	int nstacks = atoi(argv[3]), depth = atoi(argv[4]), nthreads = atoi(argv[5]);
	const char *elf = argc > 6 ? argv[6] : "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint64_t tlo = 0, thi = 0;
	char err[512], buildid[160];

	if (nstacks < 1 || depth < 8 || depth > 500 || nthreads < 1 || !nsamples) {
		fprintf(stderr, "genexp: bad arguments\n");
		return 2;
	}
	if (text_range(elf, &tlo, &thi, buildid) < 0) {
		fprintf(stderr, "genexp: cannot read the executable segment of '%s'\n", elf);
		return 1;
	}
	const uint64_t base = 0x7f1200000000ull, t0 = 1000000000ull, pid = 4242;
	struct sonde_expw *w = sonde_expw_create(dir, err, sizeof(err));

	if (!w) {
		fprintf(stderr, "genexp: %s\n", err);
		return 1;
	}
	sonde_expw_log_preamble(w, (uint32_t)pid, t0);
	/* map.xml by hand, with the file's real build id */
	sonde_expw_map(w,
		       "<object id=\"1\" time_ns=\"%llu\" event=\"load\" path=\"%s\" base=\"0x%llx\" "
		       "lo=\"0x%llx\" hi=\"0x%llx\"%s%s%s/>\n",
		       (unsigned long long)t0, elf, (unsigned long long)base,
		       (unsigned long long)(base + tlo), (unsigned long long)(base + thi),
		       buildid[0] ? " buildid=\"" : "", buildid, buildid[0] ? "\"" : "");

	/* the function pool: addresses in the text segment */
	uint64_t pool[NPOOL];

	for (int i = 0; i < NPOOL; i++)
		pool[i] = base + tlo + (next() % (thi - tlo));

	/* distinct stacks, leaf first; ids 1..nstacks */
	uint64_t *pcs = malloc((size_t)(depth + 7) * sizeof(*pcs));
	double *cum = malloc((size_t)nstacks * sizeof(*cum));

	if (!pcs || !cum)
		return 1;
	for (int s = 0; s < nstacks; s++) {
		int d = depth - 6 + (int)(next() % 13);

		/* root at the end: OUTER fixed frames, then a layered walk */
		for (int k = 0; k < d; k++) {
			int fromroot = d - 1 - k;
			uint64_t pc;

			if (fromroot < OUTER) {
				pc = pool[fromroot];
			} else {
				int window = 40, lo = OUTER + (fromroot - OUTER) * (NPOOL - OUTER - window) / (d - OUTER);
				/* few choices near the root, more deeper down */
				int spread = 2 + (fromroot * window) / d;

				pc = pool[lo + (int)(next() % (uint64_t)spread)];
			}
			pcs[k] = (pc + 1) | (k == 0 ? SONDE_PC_EXACT : 0);
		}
		if (sonde_expw_stack(w, (uint64_t)s + 1, 0, (uint16_t)d, pcs) < 0) {
			fprintf(stderr, "genexp: writing stack %d failed\n", s);
			return 1;
		}
		/* Zipf-like popularity: weight 1 / (rank + 1)^0.9 */
		cum[s] = (s ? cum[s - 1] : 0) + 1.0 / pow((double)s + 1, 0.9);
	}
	/* samples, time ordered, threads round robin */
	for (uint64_t i = 0; i < nsamples; i++) {
		double u = unit() * cum[nstacks - 1];
		int lo = 0, hi = nstacks - 1;

		while (lo < hi) {
			int mid = (lo + hi) / 2;

			if (cum[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		uint32_t tid = (uint32_t)(pid + i % (uint64_t)nthreads);
		uint64_t t = t0 + (i / (uint64_t)nthreads + 1) * 1000000ull;

		if (sonde_expw_sample(w, tid, (uint16_t)(i % 2), t, 1000000ull, (uint64_t)lo + 1) < 0) {
			fprintf(stderr, "genexp: writing sample %llu failed\n", (unsigned long long)i);
			return 1;
		}
	}
	uint64_t end = t0 + (nsamples / (uint64_t)nthreads + 2) * 1000000ull;

	sonde_expw_log(w, "<event kind=\"end\" time_ns=\"%llu\" samples=\"%llu\" lost=\"0\"/>\n",
		       (unsigned long long)end, (unsigned long long)nsamples);
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n",
		       (unsigned long long)end);
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		fprintf(stderr, "genexp: %s\n", err);
		return 1;
	}
	free(pcs);
	free(cum);
	return 0;
}
