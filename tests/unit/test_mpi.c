/*
 * test_mpi: the MPI kind on the analyzer's side (lib/kinds/mpi.c) on
 * synthetic experiments written with the tests' writer
 * (lib/reader/expwriter.h): every field of its call and message packets
 * read back exactly and in time order, the job's settings from log.xml,
 * damaged packets as read problems (the rest still read), -dump mpi and
 * the -header line, exactly; an experiment without MPI tracing has none.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 * SONDE_TEST_SHOW=1 prints every output checked; SONDE_TEST_KEEP=1 keeps
 * the experiments.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "reader/experiment.h"
#include "reader/expwriter.h"
#include "sonde/kinds.h"
#include "sonde/mpifuncs.h"
#include "views/view_exp.h"

static bool show;
static char tmpdir[] = "/tmp/sonde-test-mpi-XXXXXX";

#define T0 1000000000ull
#define US 1000ull
#define MS 1000000ull
#define F(name) SONDE_MPI_F_##name

/* ---- output captured, the directory shown as DIR ------------------------------------ */

static char *outbuf;
static size_t outlen;

static FILE *out_open(void)
{
	free(outbuf);
	outbuf = NULL;
	return open_memstream(&outbuf, &outlen);
}

static const char *out_close(FILE *f)
{
	fclose(f);
	size_t n = strlen(tmpdir);
	char *p;

	while ((p = strstr(outbuf, tmpdir))) {
		memcpy(p, "DIR", 3);
		memmove(p + 3, p + n, strlen(p + n) + 1);
	}
	if (show)
		printf("# ---\n%s", outbuf);
	return outbuf;
}

#define CHECK_TEXT(got, want) check_text(got, want, __LINE__)
static void check_text(const char *got, const char *want, int line)
{
	if (got && !strcmp(got, want)) {
		npass++;
		return;
	}
	nfail++;
	printf("not ok - %s: line %d: text differs\n# --- want:\n%s# --- got:\n%s# ---\n", group, line, want,
	       got ? got : "(null)\n");
}

static struct sonde_exp *open_exp(const char *name)
{
	char path[4200], err[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	struct sonde_exp *e = sonde_exp_open(path, err, sizeof(err));

	if (!e)
		printf("# cannot open %s: %s\n", path, err);
	return e;
}

static struct sonde_expw *create(const char *name, uint32_t pid)
{
	char path[4200], err[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	struct sonde_expw *w = sonde_expw_create(path, err, sizeof(err));

	if (!w) {
		printf("# cannot create %s: %s\n", path, err);
		return NULL;
	}
	const uint64_t st[2] = { 0x10100 | SONDE_PC_EXACT, 0x10200 };

	sonde_expw_log_preamble(w, pid, T0);
	sonde_expw_object(w, 1, "/nonexistent/libx.so", 0x10000, 0x10000, 0x20000, T0);
	sonde_expw_stack(w, 7, 0, 2, st);
	return w;
}

static int finish(struct sonde_expw *w)
{
	char err[512];

	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("# cannot write: %s\n", err);
		return -1;
	}
	return 0;
}

static void call(struct sonde_expw *w, uint32_t tid, unsigned func, uint16_t flags, int32_t peer, int32_t tag,
		 uint64_t comm, uint64_t t, uint64_t dur, uint64_t coll)
{
	struct sonde_mpi_call_packet p = {
		.func = (uint16_t)func,
		.flags = flags,
		.peer = peer,
		.tag = tag,
		.comm = comm,
		.time_ns = t,
		.dur_ns = dur,
		.coll_bytes = coll,
		.stack_id = 7,
	};

	sonde_expw_mpi_call(w, tid, &p);
}

static void msg(struct sonde_expw *w, uint32_t tid, unsigned dir, unsigned func, int32_t peer, int32_t tag,
		uint64_t comm, uint64_t t, uint64_t bytes)
{
	struct sonde_mpi_msg_packet p = {
		.dir = (uint8_t)dir,
		.func = (uint16_t)func,
		.peer = peer,
		.tag = tag,
		.comm = comm,
		.time_ns = t,
		.bytes = bytes,
		.stack_id = 7,
	};

	sonde_expw_mpi_msg(w, tid, &p);
}

/* ---- one rank's experiment read back ----------------------------------------------- */

/* rank 2 of 4: thread 100 sends 4096 bytes to rank 3, receives 800 from
 * rank 1 through an Irecv and a Wait; thread 101 (written first, later
 * in time order for one of its calls) a barrier that failed and a
 * Fortran allreduce on a communicator of its own. */
static int write_one(void)
{
	struct sonde_expw *w = create("one.er", 100);

	if (!w)
		return -1;
	sonde_expw_mpi_decl(w, 2, 4, "openmpi", "Open MPI v4.1.4, package: Debian");
	call(w, 101, F(MPI_Allreduce), SONDE_MPIF_FORTRAN, SONDE_MPI_NONE, 0, 0x1234abcdull, T0 + 1500 * US, 300 * US,
	     64);
	call(w, 101, F(MPI_Barrier), SONDE_MPIF_ERROR, SONDE_MPI_NONE, 0, SONDE_MPI_COMM_WORLD, T0 + 500 * US, 10 * US,
	     0);
	call(w, 100, F(MPI_Send), 0, 3, 5, SONDE_MPI_COMM_WORLD, T0 + 1 * MS, 200 * US, 0);
	msg(w, 100, SONDE_MPI_SEND, F(MPI_Send), 3, 5, SONDE_MPI_COMM_WORLD, T0 + 1 * MS, 4096);
	call(w, 100, F(MPI_Irecv), 0, SONDE_MPI_ANY, -1, SONDE_MPI_COMM_WORLD, T0 + 2 * MS, 1 * US, 0);
	call(w, 100, F(MPI_Wait), 0, 1, 9, SONDE_MPI_COMM_WORLD, T0 + 3 * MS, 500 * US, 0);
	msg(w, 100, SONDE_MPI_RECV, F(MPI_Wait), 1, 9, SONDE_MPI_COMM_WORLD, T0 + 3500 * US, 800);
	/* An id past this reader's list (a later sonde's function): kept. */
	call(w, 100, 9999, 0, SONDE_MPI_PROC_NULL, 0, SONDE_MPI_COMM_SELF, T0 + 4 * MS, 2 * US, 0);
	return finish(w);
}

static void test_read(void)
{
	group = "read";
	struct sonde_exp *e = open_exp("one.er");

	CHECK(e);
	if (!e)
		return;
	size_t nc, nm, np;
	const struct sonde_mpi_call *c = sonde_exp_mpi_calls(e, &nc);
	const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(e, &nm);
	const struct sonde_mpi_job *job = sonde_exp_mpi_job(e);

	sonde_exp_problems(e, &np);
	CHECK_U(np, 0);
	CHECK(sonde_exp_traced(e, SONDE_KIND_MPI));
	CHECK_U(sonde_exp_kind_events(e, SONDE_KIND_MPI), 8);
	CHECK(job);
	if (job) {
		CHECK_I(job->rank, 2);
		CHECK_I(job->size, 4);
		CHECK_S(job->abi, "openmpi");
		CHECK_S(job->library, "Open MPI v4.1.4, package: Debian");
	}
	CHECK_U(nc, 6);
	CHECK_U(nm, 2);
	if (nc != 6 || nm != 2)
		return;
	/* by time, whatever thread and file order */
	CHECK_U(c[0].func, F(MPI_Barrier));
	CHECK_U(c[0].flags, SONDE_MPIF_ERROR);
	CHECK_U(c[0].tid, 101);
	CHECK_U(c[0].time_ns, T0 + 500 * US);
	CHECK_U(c[1].func, F(MPI_Send));
	CHECK_U(c[1].tid, 100);
	CHECK_I(c[1].peer, 3);
	CHECK_I(c[1].tag, 5);
	CHECK_U(c[1].dur_ns, 200 * US);
	CHECK_U(c[1].stack_id, 7);
	CHECK_U(c[2].func, F(MPI_Allreduce));
	CHECK_U(c[2].flags, SONDE_MPIF_FORTRAN);
	CHECK_U(c[2].comm, 0x1234abcdull);
	CHECK_U(c[2].coll_bytes, 64);
	CHECK_I(c[2].peer, SONDE_MPI_NONE);
	CHECK_I(c[3].peer, SONDE_MPI_ANY);
	CHECK_I(c[3].tag, -1);
	CHECK_U(c[4].func, F(MPI_Wait));
	CHECK_U(c[5].func, 9999);
	CHECK_S(sonde_mpi_func_name(c[5].func), "?");
	CHECK_S(sonde_mpi_func_name(F(MPI_Wait)), "MPI_Wait");
	CHECK_U(m[0].dir, SONDE_MPI_SEND);
	CHECK_U(m[0].bytes, 4096);
	CHECK_I(m[0].peer, 3);
	CHECK_U(m[0].func, F(MPI_Send));
	CHECK_U(m[1].dir, SONDE_MPI_RECV);
	CHECK_U(m[1].bytes, 800);
	CHECK_I(m[1].peer, 1);
	CHECK_I(m[1].tag, 9);
	CHECK_U(m[1].time_ns, T0 + 3500 * US);
	CHECK_U(m[1].func, F(MPI_Wait));

	char err[256];
	FILE *f = out_open();

	CHECK(sonde_view_dump(f, e, SONDE_DUMP_MPI, err, sizeof(err)) == 0);
	CHECK_TEXT(out_close(f),
		   "# 6 MPI calls and 2 messages of DIR/one.er, by time; time in seconds since the start\n"
		   "# rank 2 of 4, abi openmpi, library Open MPI v4.1.4, package: Debian\n"
		   "mpi call 0  time 0.000500000  tid 101  func MPI_Barrier  peer none  tag 0  comm world  dur 10000 ns"
		   "  coll_bytes 0  error  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n"
		   "mpi call 1  time 0.001000000  tid 100  func MPI_Send  peer 3  tag 5  comm world  dur 200000 ns"
		   "  coll_bytes 0  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n"
		   "mpi msg 0  time 0.001000000  tid 100  send  func MPI_Send  peer 3  tag 5  comm world  bytes 4096"
		   "  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n"
		   "mpi call 2  time 0.001500000  tid 101  func MPI_Allreduce  peer none  tag 0  comm 0x1234abcd"
		   "  dur 300000 ns  coll_bytes 64  fortran  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n"
		   "mpi call 3  time 0.002000000  tid 100  func MPI_Irecv  peer any  tag -1  comm world  dur 1000 ns"
		   "  coll_bytes 0  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n"
		   "mpi call 4  time 0.003000000  tid 100  func MPI_Wait  peer 1  tag 9  comm world  dur 500000 ns"
		   "  coll_bytes 0  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n"
		   "mpi msg 1  time 0.003500000  tid 100  recv  func MPI_Wait  peer 1  tag 9  comm world  bytes 800"
		   "  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n"
		   "mpi call 5  time 0.004000000  tid 100  func MPI#9999  peer proc-null  tag 0  comm self"
		   "  dur 2000 ns  coll_bytes 0  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n");

	struct sonde_view_opts o;
	const struct sonde_exp *one[1] = { e };

	sonde_view_opts_init(&o);
	f = out_open();
	sonde_view_header(f, one, 1, &o);
	const char *h = out_close(f);

	CHECK(strstr(h, "MPI tracing:       rank 2 of 4, 6 calls (0.001 s), 1 sends (4096 bytes), 1 receives "
			"(800 bytes), 64 collective bytes\n"
			"MPI library:       Open MPI v4.1.4, package: Debian (openmpi)\n"));
	sonde_exp_close(e);
}

/* ---- damaged packets ----------------------------------------------------------------- */

static int write_bad(void)
{
	struct sonde_expw *w = create("bad.er", 200);

	if (!w)
		return -1;
	sonde_expw_mpi_decl(w, 0, 2, NULL, NULL);
	call(w, 200, F(MPI_Send), 0, 1, 0, 0, T0 + 1 * MS, 1 * US, 0);

	struct sonde_mpi_call_packet bc = { .type = SONDE_PKT_MPI_CALL, .size = sizeof(bc), .func = 0, .peer = 1 };
	struct sonde_mpi_msg_packet bm = {
		.type = SONDE_PKT_MPI_MSG, .size = sizeof(bm), .func = F(MPI_Send), .dir = 3
	};
	uint64_t small[3] = { SONDE_PKT_MPI_CALL | (24u << 16) };

	/* A damaged packet ends what is read of its block: each in a block
	 * of its own thread's. */
	sonde_expw_packet(w, SONDE_KIND_MPI, 201, &bc, sizeof(bc)); /* function 0 */
	bc.func = F(MPI_Send);
	bc.peer = -9;
	sonde_expw_packet(w, SONDE_KIND_MPI, 202, &bc, sizeof(bc)); /* no such peer */
	bc.peer = 0;
	bc.time_ns = UINT64_MAX - 5;
	bc.dur_ns = 10;
	sonde_expw_packet(w, SONDE_KIND_MPI, 203, &bc, sizeof(bc)); /* past the clock */
	sonde_expw_packet(w, SONDE_KIND_MPI, 204, &bm, sizeof(bm)); /* direction 3 */
	bm.dir = SONDE_MPI_RECV;
	bm.peer = SONDE_MPI_ANY;
	sonde_expw_packet(w, SONDE_KIND_MPI, 205, &bm, sizeof(bm));	 /* a message from "any" */
	sonde_expw_packet(w, SONDE_KIND_MPI, 206, small, sizeof(small)); /* too small */
	msg(w, 200, SONDE_MPI_SEND, F(MPI_Send), 1, 0, 0, T0 + 1 * MS, 8);
	return finish(w);
}

static bool has_problem(const struct sonde_exp *e, const char *what)
{
	size_t n;
	const struct sonde_problem *p = sonde_exp_problems(e, &n);

	for (size_t i = 0; i < n; i++)
		if (strstr(p[i].msg, what))
			return true;
	printf("# no problem says '%s'\n", what);
	return false;
}

static void test_bad(void)
{
	group = "damaged";
	struct sonde_exp *e = open_exp("bad.er");

	CHECK(e);
	if (!e)
		return;
	size_t nc, nm;
	const struct sonde_mpi_call *c = sonde_exp_mpi_calls(e, &nc);
	const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(e, &nm);

	/* Each damaged packet is a problem; the good ones around them are read. */
	CHECK_U(nc, 1);
	CHECK_U(nm, 1);
	CHECK(nc == 1 && c[0].func == F(MPI_Send) && c[0].peer == 1);
	CHECK(nm == 1 && m[0].bytes == 8);
	CHECK(has_problem(e, "mpi call packet with function id 0"));
	CHECK(has_problem(e, "mpi call packet with peer -9"));
	CHECK(has_problem(e, "runs past the clock"));
	CHECK(has_problem(e, "mpi message packet with direction 3"));
	CHECK(has_problem(e, "mpi message packet with peer -2"));
	CHECK(has_problem(e, "mpi call packet size 24"));
	CHECK_U(sonde_exp_nerrors(e), 6);
	const struct sonde_mpi_job *job = sonde_exp_mpi_job(e);

	CHECK(job && job->rank == 0 && job->size == 2 && !job->abi && !job->library);
	sonde_exp_close(e);
}

/* ---- without MPI tracing, and a log.xml's bad settings ------------------------------ */

static int write_plain(void)
{
	struct sonde_expw *w = create("plain.er", 300);

	if (!w)
		return -1;
	sonde_expw_sample(w, 300, 0, T0 + MS, MS, 7);
	if (finish(w) < 0)
		return -1;
	if (!(w = create("badlog.er", 400)))
		return -1;
	sonde_expw_log(w, "<trace kind=\"mpi\" name=\"rank\" value=\"three\"/>\n");
	sonde_expw_log(w, "<trace kind=\"mpi\" name=\"size\" value=\"99999999999\"/>\n");
	sonde_expw_log(w, "<trace kind=\"mpi\" name=\"abi\"/>\n");
	return finish(w);
}

static void test_plain(void)
{
	group = "plain";
	struct sonde_exp *e = open_exp("plain.er");
	size_t n;

	CHECK(e);
	if (!e)
		return;
	CHECK(!sonde_exp_traced(e, SONDE_KIND_MPI));
	CHECK(sonde_exp_mpi_job(e) == NULL);
	CHECK(sonde_exp_mpi_calls(e, &n) == NULL && n == 0);
	CHECK(sonde_exp_mpi_msgs(e, &n) == NULL && n == 0);
	CHECK_U(sonde_exp_kind_events(e, SONDE_KIND_MPI), 0);

	struct sonde_view_opts o;
	const struct sonde_exp *one[1] = { e };

	sonde_view_opts_init(&o);
	o.mode = SONDE_PM_JSON;
	FILE *f = out_open();

	sonde_view_header(f, one, 1, &o);
	/* An experiment without the kind: its header has no "mpi" at all. */
	CHECK(!strstr(out_close(f), "\"mpi\""));
	sonde_exp_close(e);

	group = "bad log";
	e = open_exp("badlog.er");
	CHECK(e);
	if (!e)
		return;
	const struct sonde_mpi_job *job = sonde_exp_mpi_job(e);

	CHECK(job && job->rank == -1 && job->size == -1 && !job->abi);
	CHECK(has_problem(e, "three"));
	sonde_exp_close(e);
}

int main(void)
{
	show = getenv("SONDE_TEST_SHOW") != NULL;
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (write_one() < 0 || write_bad() < 0 || write_plain() < 0) {
		printf("not ok - cannot write the experiments\n");
		return 1;
	}
	test_read();
	test_bad();
	test_plain();
	free(outbuf);
	if (!getenv("SONDE_TEST_KEEP")) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
