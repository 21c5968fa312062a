/*
 * expcheck: exposes experiment internals to the test scripts (like git's
 * test-tool), so that tests compare recorded data with a fixture's truth.
 *
 *   expcheck threads EXP
 *       one line per thread: "TID SAMPLES RECORDED_NS REAL_NS" (REAL_NS -1
 *       when the experiment has no thread_end for it)
 *   expcheck reach EXP EXE_PATH [--leaf START:SIZE] START:SIZE...
 *       among samples (optionally only those whose leaf lies in the --leaf
 *       range of EXE_PATH), how many have a frame in one of the ranges of
 *       EXE_PATH (ELF addresses, as `nm -S` prints them):
 *       "samples N matched M weight_ns W matched_weight_ns MW incomplete I"
 *       (I: matched samples whose stack the collector could not unwind
 *       to its outermost frame); a sample of a pseudo-function alone
 *       (<Collector>, <Process start> ...) is not counted
 *   expcheck summary EXP
 *       "samples N weight_ns W stacks S unknown_stack U problems P errors E
 *       written B" (B: bytes of block headers and packets in profile+stacks)
 *   expcheck frames EXP
 *       one line per clock-profile sample, read from the data files
 *       themselves (not through the reader, whatever it keeps of a frame):
 *       "sample STATE WEIGHT_NS DEPTH KIND:FFLAGS:AUX:PC ..." with its
 *       frames leaf first as the frame packets hold them (PC in hex;
 *       "?" for a node no packet defines), then "frames N nodes M
 *       unknown U" (U: samples whose stack has such a node)
 *   expcheck mpi EXP
 *       the MPI trace (mpitrace) read raw, packet by packet, summed as a
 *       fixture's truth is (tests/fixtures/mpi/mpitraffic.c): "call FUNC
 *       COUNT" per function, "send PEER COUNT BYTES" and "recv PEER COUNT
 *       BYTES" per peer, "coll FUNC BYTES" per collective, "mpi_ns NS"
 *       (the calls' durations), "fortran N" (calls through the Fortran
 *       bindings), "errors N" (calls that failed), "nostack N" (packets
 *       without a stack), "badcomm N" (point-to-point packets whose
 *       communicator is not MPI_COMM_WORLD's id), "nopeer N" (messages
 *       whose peer is no rank: a receive that completed from none) and
 *       "packets N"
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/mpifuncs.h>

#include "reader/experiment.h"

struct range {
	uint64_t lo, hi;
};

static int parse_range(const char *s, struct range *r)
{
	char *end;
	uint64_t a = strtoull(s, &end, 16);
	if (*end != ':')
		return -1;
	uint64_t n = strtoull(end + 1, &end, 16);
	if (*end)
		return -1;
	r->lo = a;
	r->hi = a + n;
	return 0;
}

static int in_ranges(const struct sonde_exp *exp, const char *exe, const struct sonde_frame *f, int exact,
		     const struct range *r, int nr)
{
	uint64_t p = f->pc;
	if (f->kind != SONDE_FRAME_NATIVE)
		return 0;
	if (!exact && !f->exact)
		p -= 1; /* a return address: look at the call */
	const struct sonde_object *o = sonde_exp_find_object(exp, p, SONDE_TIME_NEVER);
	if (!o || strcmp(o->path, exe))
		return 0;
	uint64_t off = p - o->base;
	for (int i = 0; i < nr; i++)
		if (off >= r[i].lo && off < r[i].hi)
			return 1;
	return 0;
}

/* ---- frames: the raw data files ---- */

struct rnode {
	uint64_t id, parent, pc;
	uint8_t kind, fflags;
	uint16_t aux;
};
static struct rnode *g_nodes;
static size_t g_nnodes, g_capnodes;

/* Each whole packet of a data file (dir/name), by block; fn gets the
 * packet.  -1 when the file cannot be read. */
static int each_packet(const char *dir, const char *name, void (*fn)(const uint8_t *pkt, void *arg), void *arg)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	static uint8_t blk[SONDE_BLOCK_SIZE];
	if (fseek(f, SONDE_FILE_HEADER_SIZE, SEEK_SET) != 0) {
		fclose(f);
		return -1;
	}
	while (fread(blk, 1, SONDE_BLOCK_SIZE, f) == SONDE_BLOCK_SIZE) {
		const struct sonde_block_header *bh = (const void *)blk;
		if (bh->magic != SONDE_BLOCK_MAGIC || bh->used > SONDE_BLOCK_PAYLOAD)
			continue;
		const uint8_t *p = blk + sizeof *bh, *end = p + bh->used;
		while (p + sizeof(struct sonde_packet) <= end) {
			const struct sonde_packet *h = (const void *)p;
			if (h->size < 8 || h->size % 8 || p + h->size > end)
				break;
			fn(p, arg);
			p += h->size;
		}
	}
	fclose(f);
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	uint64_t x = ((const struct rnode *)a)->id, y = ((const struct rnode *)b)->id;
	return x < y ? -1 : x > y;
}

static void take_frame(const uint8_t *pkt, void *arg)
{
	(void)arg;
	const struct sonde_frame_packet *f = (const void *)pkt;
	if (f->type != SONDE_PKT_FRAME || f->size < sizeof *f)
		return;
	if (g_nnodes == g_capnodes) {
		g_capnodes = g_capnodes ? 2 * g_capnodes : 4096;
		g_nodes = realloc(g_nodes, g_capnodes * sizeof *g_nodes);
		if (!g_nodes)
			exit(1);
	}
	g_nodes[g_nnodes++] = (struct rnode){ f->node_id, f->parent_id, f->pc, f->kind, f->fflags, f->aux };
}

static const struct rnode *find_node(uint64_t id)
{
	struct rnode key = { .id = id };
	return bsearch(&key, g_nodes, g_nnodes, sizeof *g_nodes, cmp_node);
}

struct frames_count {
	uint64_t samples, unknown;
};

static void print_sample(const uint8_t *pkt, void *arg)
{
	struct frames_count *c = arg;
	const struct sonde_profile_packet *p = (const void *)pkt;
	if (p->type != SONDE_PKT_PROFILE || p->size < SONDE_PROFILE_V1_SIZE)
		return;
	char line[1 << 16];
	int n = 0, depth = 0, unknown = 0;
	uint64_t id = p->stack_id;
	line[0] = 0;
	while (id >= SONDE_FRAME_ROOT_LIMIT && depth < 4096 && n < (int)sizeof line - 64) {
		const struct rnode *r = find_node(id);
		if (!r) {
			n += snprintf(line + n, sizeof line - (size_t)n, " ?");
			unknown = 1;
			break;
		}
		n += snprintf(line + n, sizeof line - (size_t)n, " %u:%u:%u:0x%" PRIx64, r->kind, r->fflags, r->aux,
			      r->pc);
		depth++;
		id = r->parent;
	}
	printf("sample %u %" PRIu64 " %d%s\n", p->state, p->weight_ns, depth, line);
	c->samples++;
	c->unknown += (uint64_t)unknown;
}

static int frames(const char *dir)
{
	if (each_packet(dir, "stacks", take_frame, NULL) < 0)
		return -1;
	qsort(g_nodes, g_nnodes, sizeof *g_nodes, cmp_node);
	struct frames_count c = { 0, 0 };
	if (each_packet(dir, "profile", print_sample, &c) < 0)
		return -1;
	printf("frames %" PRIu64 " nodes %zu unknown %" PRIu64 "\n", c.samples, g_nnodes, c.unknown);
	return 0;
}

/* The MPI trace, read from the file itself. */
static int mpi(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/mpitrace", dir);
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	static long calls[SONDE_MPI_NFUNCS], fortran, errors, nostack, badcomm, nopeer, packets;
	static uint64_t coll[SONDE_MPI_NFUNCS], mpi_ns;
	enum { MAXPEER = 4096 };
	static long cnt[2][MAXPEER];
	static uint64_t bytes[2][MAXPEER];
	static unsigned char blk[SONDE_BLOCK_SIZE];
	if (fseek(f, SONDE_FILE_HEADER_SIZE, SEEK_SET) < 0) {
		fclose(f);
		return -1;
	}
	while (fread(blk, 1, sizeof blk, f) == sizeof blk) {
		const struct sonde_block_header *h = (const void *)blk;
		if (h->magic != SONDE_BLOCK_MAGIC || h->used > SONDE_BLOCK_PAYLOAD)
			continue;
		for (uint32_t off = 0; off + sizeof(struct sonde_packet) <= h->used;) {
			const unsigned char *p = blk + sizeof *h + off;
			const struct sonde_packet *pk = (const void *)p;
			if (pk->size < 8 || off + pk->size > h->used)
				break;
			packets++;
			if (pk->type == SONDE_PKT_MPI_CALL && pk->size >= sizeof(struct sonde_mpi_call_packet)) {
				const struct sonde_mpi_call_packet *c = (const void *)p;
				if (c->func < SONDE_MPI_NFUNCS) {
					calls[c->func]++;
					coll[c->func] += c->coll_bytes;
				}
				mpi_ns += c->dur_ns;
				fortran += !!(c->flags & SONDE_MPIF_FORTRAN);
				errors += !!(c->flags & SONDE_MPIF_ERROR);
				nostack += !c->stack_id;
			} else if (pk->type == SONDE_PKT_MPI_MSG && pk->size >= sizeof(struct sonde_mpi_msg_packet)) {
				const struct sonde_mpi_msg_packet *m = (const void *)p;
				int d = m->dir == SONDE_MPI_RECV;
				if (m->peer >= 0 && m->peer < MAXPEER) {
					cnt[d][m->peer]++;
					bytes[d][m->peer] += m->bytes;
				} else {
					nopeer++;
				}
				badcomm += m->comm != SONDE_MPI_COMM_WORLD;
				nostack += !m->stack_id;
			}
			off += pk->size;
		}
	}
	fclose(f);
	for (unsigned i = 1; i < SONDE_MPI_NFUNCS; i++) {
		if (calls[i])
			printf("call %s %ld\n", sonde_mpi_func(i)->name, calls[i]);
		if (calls[i] && sonde_mpi_func(i)->cls == SONDE_MPI_C_COLL)
			printf("coll %s %" PRIu64 "\n", sonde_mpi_func(i)->name, coll[i]);
	}
	for (int p = 0; p < MAXPEER; p++) {
		if (cnt[0][p])
			printf("send %d %ld %" PRIu64 "\n", p, cnt[0][p], bytes[0][p]);
		if (cnt[1][p])
			printf("recv %d %ld %" PRIu64 "\n", p, cnt[1][p], bytes[1][p]);
	}
	printf("mpi_ns %" PRIu64 "\nfortran %ld\nerrors %ld\nnostack %ld\nbadcomm %ld\nnopeer %ld\npackets %ld\n", mpi_ns,
	       fortran, errors, nostack, badcomm, nopeer, packets);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: expcheck threads|reach|summary|frames|mpi EXP ...\n");
		return 2;
	}
	if (!strcmp(argv[1], "mpi")) {
		if (mpi(argv[2]) < 0) {
			fprintf(stderr, "expcheck: cannot read the MPI trace of '%s'\n", argv[2]);
			return 1;
		}
		return 0;
	}
	char err[512];
	struct sonde_exp *exp = sonde_exp_open(argv[2], err, sizeof err);
	if (!exp) {
		fprintf(stderr, "expcheck: %s\n", err);
		return 1;
	}
	if (!strcmp(argv[1], "threads")) {
		size_t n;
		const struct sonde_thread *t = sonde_exp_threads(exp, &n);
		for (size_t i = 0; i < n; i++)
			printf("%u %" PRIu64 " %" PRIu64 " %" PRId64 "\n", t[i].tid, t[i].samples, t[i].weight_ns,
			       t[i].has_cpu_ns ? (int64_t)t[i].cpu_ns : (int64_t)-1);
	} else if (!strcmp(argv[1], "summary")) {
		const struct sonde_exp_summary *s = sonde_exp_summary(exp);
		size_t np;
		sonde_exp_problems(exp, &np);
		size_t nf;
		const struct sonde_exp_file *f = sonde_exp_files(exp, &nf);
		uint64_t written = 0;
		for (size_t i = 0; i < nf; i++)
			if (!strcmp(f[i].name, "profile") || !strcmp(f[i].name, "stacks"))
				written += f[i].written;
		printf("samples %" PRIu64 " weight_ns %" PRIu64 " stacks %zu unknown_stack %" PRIu64
		       " problems %zu errors %zu written %" PRIu64 "\n",
		       s->samples, s->weight_ns, s->stacks, s->samples_unknown_stack, np, sonde_exp_nerrors(exp),
		       written);
	} else if (!strcmp(argv[1], "frames")) {
		if (frames(argv[2]) < 0) {
			fprintf(stderr, "expcheck: cannot read the data files of '%s'\n", argv[2]);
			sonde_exp_close(exp);
			return 1;
		}
	} else if (!strcmp(argv[1], "reach") && argc >= 5) {
		const char *exe = argv[3];
		struct range r[64], leaf = { 0, 0 };
		int nr = 0, have_leaf = 0;
		for (int i = 4; i < argc; i++) {
			if (!strcmp(argv[i], "--leaf") && i + 1 < argc) {
				if (parse_range(argv[++i], &leaf) < 0)
					goto bad;
				have_leaf = 1;
			} else if (nr < 64 && parse_range(argv[i], &r[nr]) == 0) {
				nr++;
			} else {
				goto bad;
			}
		}
		uint64_t ns = 0, nm = 0, w = 0, wm = 0, ni = 0;
		struct sonde_sample_iter it;
		struct sonde_sample s;
		sonde_sample_iter_init(&it, exp);
		while (sonde_sample_iter_next(&it, &s)) {
			const struct sonde_stack *st = sonde_exp_stack(exp, s.stack_id);
			if (have_leaf && (!st || !in_ranges(exp, exe, &st->frame[0], 1, &leaf, 1)))
				continue;
			/* a pseudo-function alone (<Collector>, <Process start>
			 * ...) is time no stack has, by design */
			if (st && st->depth == 1 && st->frame[0].kind == SONDE_FRAME_PSEUDO)
				continue;
			ns++;
			w += s.weight_ns;
			int hit = 0;
			for (int k = 0; st && k < st->depth && !hit; k++)
				hit = in_ranges(exp, exe, &st->frame[k], k == 0, r, nr);
			if (hit) {
				nm++;
				wm += s.weight_ns;
				ni += !!(st->flags & SONDE_STACK_INCOMPLETE);
			}
		}
		printf("samples %" PRIu64 " matched %" PRIu64 " weight_ns %" PRIu64 " matched_weight_ns %" PRIu64
		       " incomplete %" PRIu64 "\n",
		       ns, nm, w, wm, ni);
	} else {
		goto bad;
	}
	sonde_exp_close(exp);
	return 0;
bad:
	fprintf(stderr, "expcheck: bad arguments\n");
	sonde_exp_close(exp);
	return 2;
}
