/*
 * sonde-merge-mpi.IMPL: `sonde merge` as an MPI program (cmd/merge.c execs
 * it when an MPI launcher started sonde), built once per implementation
 * with its own mpicc (Makefile: only where its headers are installed).
 *
 *	mpirun -np K sonde merge EXPERIMENT -o MERGED
 *
 * Process 0 lists the sub-experiments and hands the list to all; process
 * p merges the contiguous share [p n / K, (p + 1) n / K); then a binomial
 * tree: at step 2^k a process whose number has bit k set (and no lower
 * one) sends its packed partial merge to the process 2^k below and stops,
 * the other combines what it receives.  Process 0 writes MERGED.  The
 * merge is exact and order-free (lib/reader/expmerge.h), so MERGED has the
 * bytes the serial merge writes.  A process that cannot read its share
 * sends the failure up the tree instead of stopping the others: process 0
 * says it and writes nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "reader/expmerge.h"

/* Messages above 2^31 bytes go in pieces (an int count). */
#define CHUNK (1u << 30)

static void send_bytes(const uint8_t *p, uint64_t n, int to)
{
	MPI_Send(&n, 1, MPI_UINT64_T, to, 1, MPI_COMM_WORLD);
	for (uint64_t o = 0; o < n; o += CHUNK)
		MPI_Send(p + o, (int)(n - o < CHUNK ? n - o : CHUNK), MPI_BYTE, to, 2, MPI_COMM_WORLD);
}

static uint8_t *recv_bytes(int from, uint64_t *n)
{
	MPI_Recv(n, 1, MPI_UINT64_T, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	uint8_t *p = malloc(*n ? *n : 1);

	for (uint64_t o = 0; o < *n; o += CHUNK) {
		int c = (int)(*n - o < CHUNK ? *n - o : CHUNK);

		if (p)
			MPI_Recv(p + o, c, MPI_BYTE, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else /* receive and drop: the sender must not block */
			for (int k = 0; k < c; k++)
				MPI_Recv(NULL, 0, MPI_BYTE, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	return p;
}

int main(int argc, char **argv)
{
	const char *exp = NULL, *out = NULL;
	int quiet = 0, rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/* argv as cmd/merge.c checked it: [merge] EXPERIMENT -o MERGED [-q] */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "-q"))
			quiet = 1;
		else if (argv[i][0] != '-')
			exp = argv[i];
	}
	char err[1024] = "";
	char **paths = NULL;
	size_t n = 0;
	/* The list, as NUL-separated paths; its length -1 for a failure. */
	uint8_t *list = NULL;
	int64_t listlen = 0;
	double t0 = MPI_Wtime();

	if (rank == 0) {
		if (!exp || !out)
			snprintf(err, sizeof(err), "usage: sonde merge EXPERIMENT -o MERGED");
		if (err[0] || sonde_merge_check_out(out, err, sizeof(err)) < 0 ||
		    sonde_merge_list(exp, &paths, &n, err, sizeof(err)) < 0) {
			listlen = -1;
		} else {
			for (size_t i = 0; i < n; i++)
				listlen += (int64_t)strlen(paths[i]) + 1;
			list = malloc((size_t)listlen);
			if (!list) {
				snprintf(err, sizeof(err), "out of memory");
				listlen = -1;
			} else {
				size_t o = 0;

				for (size_t i = 0; i < n; i++) {
					size_t l = strlen(paths[i]) + 1;

					memcpy(list + o, paths[i], l);
					o += l;
				}
			}
		}
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
	}
	MPI_Bcast(&listlen, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	if (listlen < 0) {
		if (rank == 0)
			fprintf(stderr, "sonde merge: %s\n", err);
		MPI_Finalize();
		return 1;
	}
	if (rank != 0 && !(list = malloc((size_t)listlen))) {
		fprintf(stderr, "sonde merge: process %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int64_t o = 0; o < listlen; o += CHUNK)
		MPI_Bcast(list + o, (int)(listlen - o < CHUNK ? listlen - o : CHUNK), MPI_BYTE, 0, MPI_COMM_WORLD);
	n = 0;
	for (int64_t o = 0; o < listlen; o++)
		n += list[o] == 0;
	/* This process's share. */
	size_t lo = (size_t)((uint64_t)rank * n / (uint64_t)size), hi = (size_t)((uint64_t)(rank + 1) * n / (uint64_t)size);
	struct sonde_merge *m = sonde_merge_new();
	const char *p = (const char *)list;

	if (!m) {
		fprintf(stderr, "sonde merge: process %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (size_t i = 0; i < hi; i++, p += strlen(p) + 1) {
		if (i < lo || sonde_merge_error(m))
			continue;
		const char *name = strrchr(p, '/');
		int r = sonde_merge_add(m, p, name ? name + 1 : p, err, sizeof(err));

		if (r < 0)
			sonde_merge_set_error(m, err);
		else if (r > 0)
			fprintf(stderr, "sonde merge: warning: %s\n", err);
	}
	/* The tree. */
	for (int step = 1; step < size; step <<= 1) {
		if (rank & step) {
			uint8_t *buf;
			size_t len;

			if (sonde_merge_pack(m, &buf, &len) < 0) {
				fprintf(stderr, "sonde merge: process %d: out of memory\n", rank);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
			send_bytes(buf, len, rank - step);
			free(buf);
			break;
		}
		if (rank + step < size) {
			uint64_t len;
			uint8_t *buf = recv_bytes(rank + step, &len);
			struct sonde_merge *o = buf ? sonde_merge_unpack(buf, len, err, sizeof(err)) : NULL;

			if (!o || sonde_merge_combine(m, o) < 0)
				sonde_merge_set_error(m, o ? "out of memory" : buf ? err : "out of memory");
			sonde_merge_free(o);
			free(buf);
		}
	}
	int rc = 0;

	if (rank == 0) {
		if (sonde_merge_error(m)) {
			fprintf(stderr, "sonde merge: %s; nothing written\n", sonde_merge_error(m));
			rc = 1;
		} else if (sonde_merge_output(m, exp, out, err, sizeof(err)) < 0) {
			fprintf(stderr, "sonde merge: %s\n", err);
			rc = 1;
		} else if (!quiet) {
			printf("%s: %zu sub-experiments merged in %.3f s by %d MPI processes\n", out, n,
			       MPI_Wtime() - t0, size);
		}
	}
	sonde_merge_free(m);
	free(list);
	MPI_Finalize();
	return rc;
}
