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
 * the experiments.  test_mpi --write DIR writes the fuzzer's seed,
 * DIR/mpi.er.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "check.h"
#include "agg/dlang.h"
#include "model/metrics.h"
#include "model/profile.h"
#include "reader/experiment.h"
#include "reader/exptree.h"
#include "reader/expwriter.h"
#include "sonde/kinds.h"
#include "sonde/mpifuncs.h"
#include "views/view.h"
#include "views/view_exp.h"

static bool show;
static char tmpdir[] = "/tmp/sonde-test-mpi-XXXXXX";

#define T0 1000000000ull
#define US 1000ull
#define MS 1000000ull
#define F(name) SONDE_MPI_F_##name

#include "capture.h"

static struct sonde_exp *open_exp(const char *name)
{
	char path[4200], err[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	struct sonde_exp *e = sonde_exp_open(path, err, sizeof(err));

	if (!e)
		printf("# cannot open %s: %s\n", path, err);
	return e;
}

/* Where the experiments go: tmpdir, or --write's directory. */
static const char *root = tmpdir;

static struct sonde_expw *create(const char *name, uint32_t pid)
{
	char path[4200], err[512];

	snprintf(path, sizeof(path), "%s/%s", root, name);
	struct sonde_expw *w = sonde_expw_create(path, err, sizeof(err));

	if (!w) {
		printf("# cannot create %s: %s\n", path, err);
		return NULL;
	}
	const uint64_t st[2] = { 0x10100 | SONDE_PC_EXACT, 0x10200 };

	sonde_expw_log_preamble(w, pid, T0);
	sonde_expw_object(w, 1, "/nonexistent/libx.so", 0x10000, 0x10000, 0x20000, T0);
	const uint64_t st8[1] = { 0x10300 | SONDE_PC_EXACT };

	sonde_expw_stack(w, 7, 0, 2, st);
	sonde_expw_stack(w, 8, 0, 1, st8);
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

/* The stack of the next calls and messages. */
static uint64_t stack = 7;

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
		.stack_id = stack,
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
		.stack_id = stack,
	};

	sonde_expw_mpi_msg(w, tid, &p);
}

/* ---- one rank's experiment read back ----------------------------------------------- */

/* rank 2 of 4: thread 100 sends 4096 bytes to rank 3, receives 800 from
 * rank 1 through an Irecv and a Wait; thread 101 (written first, later
 * in time order for one of its calls) a barrier that failed and a
 * Fortran allreduce on a communicator of its own. */
static int write_one(const char *name)
{
	struct sonde_expw *w = create(name, 100);

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
	stack = 8;
	call(w, 100, F(MPI_Wait), 0, 1, 9, SONDE_MPI_COMM_WORLD, T0 + 3 * MS, 500 * US, 0);
	msg(w, 100, SONDE_MPI_RECV, F(MPI_Wait), 1, 9, SONDE_MPI_COMM_WORLD, T0 + 3500 * US, 800);
	stack = 7;
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
		   "  coll_bytes 0  stack 0x8\n"
		   "    #0 0x10300  libx.so+0x300\n"
		   "mpi msg 1  time 0.003500000  tid 100  recv  func MPI_Wait  peer 1  tag 9  comm world  bytes 800"
		   "  stack 0x8\n"
		   "    #0 0x10300  libx.so+0x300\n"
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

/* ---- metrics ------------------------------------------------------------------------- */

static int metric(const char *name)
{
	int i = sonde_profile_metric_index(name);

	if (i < 0)
		printf("# no metric %s\n", name);
	return i < 0 ? 0 : i;
}

/* Table 2-4 on one.er: MPI Time is every call's duration; sends and
 * receives are its two messages; the Other MPI Events are the calls that
 * moved none (the barrier, the allreduce, the Irecv, the unknown call),
 * not the Send and the Wait that completed the receive; the collective
 * bytes the allreduce's.  Each on its call's stack: the Wait's and its
 * receive's on stack 8, the rest on stack 7. */
static void test_metrics(void)
{
	group = "metrics";
	struct sonde_exp *e = open_exp("one.er");
	char err[256];

	if (!e)
		return;
	struct sonde_profile prof;
	const struct sonde_exp *one[1] = { e };

	if (sonde_profile_build(&prof, one, 1, NULL, err, sizeof(err)) < 0) {
		printf("not ok - metrics: profile: %s\n", err);
		nfail++;
		sonde_exp_close(e);
		return;
	}
	const struct sonde_model *m = prof.model;
	const int64_t *tot = sonde_model_total(m);
	int time = metric("mpitime"), sends = metric("mpisends"), sent = metric("mpibytessent"),
	    recvs = metric("mpirecvs"), recvd = metric("mpibytesrecv"), other = metric("mpiother"),
	    coll = metric("mpicollbytes");

	CHECK_I(tot[time], (10 + 200 + 300 + 1 + 500 + 2) * US);
	CHECK_I(tot[sends], 1);
	CHECK_I(tot[sent], 4096);
	CHECK_I(tot[recvs], 1);
	CHECK_I(tot[recvd], 800);
	CHECK_I(tot[other], 4);
	CHECK_I(tot[coll], 64);
	CHECK(sonde_metric_recorded(e, time) && sonde_metric_recorded(e, coll));

	const char *sort;
	const char *dm = sonde_kind_default_metrics(SONDE_KIND_MPI, &sort);

	CHECK_S(dm, "e.mpitime:i.mpitime:e.mpisends:e.mpibytessent:e.mpirecvs:e.mpibytesrecv:e.mpiother:");
	CHECK_S(sort, "mpitime");

	size_t ns = sonde_model_nstacks(m), seen = 0;

	CHECK_U(ns, 2);
	for (uint32_t s = 0; s < ns; s++) {
		int depth;
		const int64_t *v = sonde_model_stack_values(m, s);

		sonde_model_stack_funcs(m, s, &depth);
		if (depth == 1) { /* stack 8: the Wait and its receive */
			seen++;
			CHECK_I(v[time], 500 * US);
			CHECK_I(v[recvs], 1);
			CHECK_I(v[recvd], 800);
			CHECK_I(v[sends], 0);
			CHECK_I(v[other], 0);
		} else {
			seen++;
			CHECK_I(v[time], 513 * US);
			CHECK_I(v[sends], 1);
			CHECK_I(v[sent], 4096);
			CHECK_I(v[recvs], 0);
			CHECK_I(v[other], 4);
			CHECK_I(v[coll], 64);
		}
	}
	CHECK_U(seen, 2);
	sonde_profile_release(&prof);
	sonde_exp_close(e);
}

/* ---- sonde agg ------------------------------------------------------------------------ */

/* prog's output on exp's mpi events (NULL on an error, said). */
static const char *agg(struct sonde_exp *e, const char *prog)
{
	const struct sonde_dl_kind *kinds[] = { sonde_dl_kind_of(SONDE_KIND_MPI) };
	struct sonde_dl_error de;
	struct sonde_dl_prog *p = kinds[0] ? sonde_dl_compile(prog, kinds, 1, NULL, &de) : NULL;
	char err[256];

	if (!p) {
		printf("# '%s': %s\n", prog, kinds[0] ? de.msg : "no mpi event kind");
		return NULL;
	}
	FILE *f = out_open();

	if (sonde_dl_begin(p, f, err, sizeof(err)) ||
	    sonde_dl_run_kind(p, SONDE_KIND_MPI, e, NULL, NULL, err, sizeof(err)) < 0 ||
	    sonde_dl_end(p, f, err, sizeof(err)))
		printf("# %s\n", err);
	sonde_dl_free(p);
	return out_close(f);
}

/* One event per call, with the bytes it moved: per peer the Send's 4096
 * to rank 3 and the Wait's 800 from rank 1; sum(dur) is MPI Time; the
 * Other MPI Events are dir "none". */
static void test_agg(void)
{
	group = "agg";
	struct sonde_exp *e = open_exp("one.er");

	if (!e)
		return;
	CHECK_TEXT(agg(e, "mpi { @b[peer] = sum(bytes); @n[peer] = count(); }"),
		   "\n"
		   "               -4                0\n"
		   "               -2                0\n"
		   "               -1               64\n"
		   "                1              800\n"
		   "                3             4096\n"
		   "                1                1\n"
		   "                3                1\n"
		   "               -4                1\n"
		   "               -2                1\n"
		   "               -1                2\n");
	CHECK_TEXT(
		agg(e, "mpi { @[mpifunc, class, dir, comm] = sum(dur); } "
		       "mpi /dir == \"none\"/ { @other = count(); } mpi { @time = sum(dur); @s = sum(sends); "
		       "@r = sum(received); @c = sum(collbytes); @err = sum(error); }"),
		"\n"
		"  MPI_Irecv                                           irecv                                               none                                                world                                                          1000\n"
		"  ?                                                   ?                                                   none                                                self                                                           2000\n"
		"  MPI_Barrier                                         coll                                                none                                                world                                                         10000\n"
		"  MPI_Send                                            send                                                send                                                world                                                        200000\n"
		"  MPI_Allreduce                                       coll                                                none                                                0x1234abcd                                                   300000\n"
		"  MPI_Wait                                            wait                                                recv                                                world                                                        500000\n"
		"                4\n"
		"          1013000\n"
		"                1\n"
		"              800\n"
		"               64\n"
		"                1\n");

	/* Two processes through one program (sonde agg over a job): pid
	 * and rank are the process's, -1 before it is named. */
	const struct sonde_dl_kind *kinds[] = { sonde_dl_kind_of(SONDE_KIND_MPI) };
	struct sonde_dl_error de;
	struct sonde_dl_prog *p =
		sonde_dl_compile("mpi { @n[pid, rank] = count(); } mpi /rank == 1/ { @b = sum(bytes); }", kinds,
				 1, NULL, &de);
	char err[256];
	FILE *f = out_open();
	int rc = !p || sonde_dl_begin(p, f, err, sizeof(err));

	for (int i = 0; !rc && i < 3; i++) {
		if (i)
			sonde_dl_set_process(p, 100 * i, i - 1);
		rc = sonde_dl_run_kind(p, SONDE_KIND_MPI, e, NULL, NULL, err, sizeof(err)) < 0;
	}
	rc = rc || sonde_dl_end(p, f, err, sizeof(err));
	CHECK_I(rc, 0);
	CHECK_TEXT(out_close(f),
		   "\n"
		   "              100                0                6\n"
		   "              200                1                6\n"
		   "               -1               -1                6\n"
		   "             4960\n");
	sonde_dl_free(p);
	sonde_exp_close(e);
}

/* ---- a job of 4 ranks: -mpi and -ranks ------------------------------------------------ */

/* The founder job.er (the launcher: no MPI) and M_r0.er .. M_r3.er, each
 * rank's thread 1000 + r:
 *   a blocking pair, rank 0 MPI_Send 1024 bytes to 1 (100 us), rank 1
 *     MPI_Recv them (300 us);
 *   a non-blocking pair, rank 2 MPI_Isend 4096 bytes to 3 (5 us) and
 *     MPI_Wait (50 us, completes the send: no message), rank 3 MPI_Irecv
 *     from 2 (2 us) and MPI_Wait (400 us, completes the receive);
 *   MPI_Bcast from root 0 (200 us each; collective bytes 768 at the root,
 *     256 elsewhere), MPI_Allreduce (150 us, 64 bytes each);
 *   MPI_Barrier after an imbalance: rank 0 waits 40 ms, the others 10 ms.
 * The point-to-point calls on stack 7, the collectives on stack 8.  Clock
 * samples: (r + 1) * 10 ms in CPU, 1 ms in MPI Work, 5 ms in MPI Wait. */
static int write_job(void)
{
	char path[200];
	struct sonde_expw *w = create("job.er", 900);

	if (!w)
		return -1;
	sonde_expw_sample(w, 900, 0, T0 + MS, MS, 7);
	if (finish(w) < 0)
		return -1;
	for (int r = 0; r < 4; r++) {
		uint32_t tid = 1000 + (uint32_t)r;
		uint64_t t = T0 + MS;

		snprintf(path, sizeof(path), "job.er/M_r%d.er", r);
		if (!(w = create(path, tid)))
			return -1;
		sonde_expw_mpi_decl(w, r, 4, "openmpi", "Open MPI v4.1.4");
		sonde_expw_sample_state(w, tid, 0, SONDE_STATE_CPU, T0 + 2 * MS, (uint64_t)(r + 1) * 10 * MS, 7);
		sonde_expw_sample_state(w, tid, 0, SONDE_STATE_MPI_WORK, T0 + 3 * MS, 1 * MS, 8);
		sonde_expw_sample_state(w, tid, 0, SONDE_STATE_MPI_WAIT, T0 + 4 * MS, 5 * MS, 8);
		stack = 7;
		switch (r) {
		case 0:
			call(w, tid, F(MPI_Send), 0, 1, 1, SONDE_MPI_COMM_WORLD, t, 100 * US, 0);
			msg(w, tid, SONDE_MPI_SEND, F(MPI_Send), 1, 1, SONDE_MPI_COMM_WORLD, t, 1024);
			break;
		case 1:
			call(w, tid, F(MPI_Recv), 0, 0, 1, SONDE_MPI_COMM_WORLD, t, 300 * US, 0);
			msg(w, tid, SONDE_MPI_RECV, F(MPI_Recv), 0, 1, SONDE_MPI_COMM_WORLD, t + 300 * US, 1024);
			break;
		case 2:
			call(w, tid, F(MPI_Isend), 0, 3, 2, SONDE_MPI_COMM_WORLD, t, 5 * US, 0);
			msg(w, tid, SONDE_MPI_SEND, F(MPI_Isend), 3, 2, SONDE_MPI_COMM_WORLD, t, 4096);
			call(w, tid, F(MPI_Wait), 0, 3, 2, SONDE_MPI_COMM_WORLD, t + 10 * US, 50 * US, 0);
			break;
		case 3:
			call(w, tid, F(MPI_Irecv), 0, 2, 2, SONDE_MPI_COMM_WORLD, t, 2 * US, 0);
			call(w, tid, F(MPI_Wait), 0, 2, 2, SONDE_MPI_COMM_WORLD, t + 10 * US, 400 * US, 0);
			msg(w, tid, SONDE_MPI_RECV, F(MPI_Wait), 2, 2, SONDE_MPI_COMM_WORLD, t + 410 * US, 4096);
			break;
		}
		stack = 8;
		t += MS;
		call(w, tid, F(MPI_Bcast), 0, 0, 0, SONDE_MPI_COMM_WORLD, t, 200 * US, r ? 256 : 768);
		t += MS;
		call(w, tid, F(MPI_Allreduce), 0, SONDE_MPI_NONE, 0, SONDE_MPI_COMM_WORLD, t, 150 * US, 64);
		t += MS;
		call(w, tid, F(MPI_Barrier), 0, SONDE_MPI_NONE, 0, SONDE_MPI_COMM_WORLD, t, r ? 10 * MS : 40 * MS, 0);
		stack = 7;
		if (finish(w) < 0)
			return -1;
	}
	return 0;
}

static void say(void *arg, const char *msg)
{
	(void)arg;
	printf("# %s\n", msg);
}

static void test_job(void)
{
	group = "job";
	char path[4200], err[256];
	struct sonde_exp_tree t;

	snprintf(path, sizeof(path), "%s/job.er", tmpdir);
	sonde_exp_tree_init(&t);
	CHECK(sonde_exp_tree_add(&t, path, 0, say, NULL) == 0);
	CHECK_U(t.n, 5);
	if (t.n != 5) {
		sonde_exp_tree_release(&t);
		return;
	}
	struct sonde_view_opts o;

	sonde_view_opts_init(&o);
	FILE *f = out_open();

	CHECK(sonde_view_mpi(f, (const struct sonde_exp *const *)t.exps, t.n, &o, err, sizeof(err)) == 0);
	CHECK_TEXT(out_close(f),
		   "MPI calls by function, sorted by MPI time\n"
		   "\n"
		   "Function                         Calls     MPI Time    Sends     Bytes Sent Receives Bytes Received    Coll. Bytes\n"
		   "<Total>                             18     0.072257        2           5120        2           5120           1792\n"
		   "MPI_Barrier                          4     0.070000        0              0        0              0              0\n"
		   "MPI_Bcast                            4     0.000800        0              0        0              0           1536\n"
		   "MPI_Allreduce                        4     0.000600        0              0        0              0            256\n"
		   "MPI_Wait                             2     0.000450        0              0        1           4096              0\n"
		   "MPI_Recv                             1     0.000300        0              0        1           1024              0\n"
		   "MPI_Send                             1     0.000100        1           1024        0              0              0\n"
		   "MPI_Isend                            1     0.000005        1           4096        0              0              0\n"
		   "MPI_Irecv                            1     0.000002        0              0        0              0              0\n"
		   "\n"
		   "MPI by peer (ranks of MPI_COMM_WORLD): calls naming it, messages to and from it\n"
		   "\n"
		   "Peer                             Calls     MPI Time    Sends     Bytes Sent Receives Bytes Received\n"
		   "none                                 8     0.070600        0              0        0              0\n"
		   "0                                    5     0.001100        0              0        1           1024\n"
		   "1                                    1     0.000100        1           1024        0              0\n"
		   "2                                    2     0.000402        0              0        1           4096\n"
		   "3                                    2     0.000055        1           4096        0              0\n"
		   "\n"
		   "MPI messages by size\n"
		   "\n"
		   "Size                            Sends     Bytes Sent Receives Bytes Received\n"
		   "1 KiB - 4 KiB                       1           1024        1           1024\n"
		   "4 KiB - 16 KiB                      1           4096        1           4096\n");
	struct sonde_exp_set set = { &t, (const struct sonde_exp *const *)t.exps, t.n };

	f = out_open();
	CHECK(sonde_view_ranks(f, &set, &o, err, sizeof(err)) == 0);
	CHECK_TEXT(out_close(f),
		   "MPI ranks: CPU time and MPI time of each rank; MPI Work and MPI Wait from clock profiling\n"
		   "\n"
		   "   Rank  Experiment                CPU     MPI Time     MPI Work     MPI Wait     Calls     Bytes Sent    Bytes Recvd\n"
		   "      0  M_r0.er              0.016000     0.040450     0.001000     0.005000         4           1024              0\n"
		   "      1  M_r1.er              0.026000     0.010650     0.001000     0.005000         4              0           1024\n"
		   "      2  M_r2.er              0.036000     0.010405     0.001000     0.005000         5           4096              0\n"
		   "      3  M_r3.er              0.046000     0.010752     0.001000     0.005000         5              0           4096\n"
		   "<Total>                       0.124000     0.072257     0.004000     0.020000        18           5120           5120\n"
		   "\n"
		   "MPI time per call site: the slowest rank's against the mean of the 4 ranks,\n"
		   "sorted by the time the slowest lost (max - mean)\n"
		   "\n"
		   "Function             Caller                       Calls          Max   Rank         Mean  Imbalance\n"
		   "MPI_Barrier          <static>@0x300 (libx.so)         4     0.040000      0     0.017500      2.286\n"
		   "MPI_Wait             <static>@0x100 (libx.so)         2     0.000400      3     0.000112      3.556\n"
		   "MPI_Recv             <static>@0x100 (libx.so)         1     0.000300      1     0.000075      4.000\n"
		   "MPI_Send             <static>@0x100 (libx.so)         1     0.000100      0     0.000025      4.000\n"
		   "MPI_Isend            <static>@0x100 (libx.so)         1     0.000005      2     0.000001      4.000\n"
		   "MPI_Irecv            <static>@0x100 (libx.so)         1     0.000002      3     0.000000      4.000\n"
		   "MPI_Bcast            <static>@0x300 (libx.so)         4     0.000200      0     0.000200      1.000\n"
		   "MPI_Allreduce        <static>@0x300 (libx.so)         4     0.000150      0     0.000150      1.000\n");
	/* json and csv: the same figures */
	o.mode = SONDE_PM_JSON;
	f = out_open();
	CHECK(sonde_view_ranks(f, &set, &o, err, sizeof(err)) == 0);
	const char *j = out_close(f);

	CHECK(strstr(j, "{\"view\":\"ranks\",\"ranks\":4,\"rows\":[{\"rank\":0,\"experiment\":\"M_r0.er\",\"cpu_ns\":16000000,"
			"\"mpi_ns\":40450000,\"mpi_work_ns\":1000000,\"mpi_wait_ns\":5000000,\"calls\":4,"));
	CHECK(strstr(j, "\"sites\":[{\"rank\":0,\"function\":\"MPI_Barrier\",\"caller\":\"<static>@0x300 (libx.so)\","
			"\"calls\":4,\"max_ns\":40000000,\"mean_ns\":17500000.0,\"imbalance\":2.286}"));
	o.mode = SONDE_PM_CSV;
	f = out_open();
	CHECK(sonde_view_mpi(f, (const struct sonde_exp *const *)t.exps, t.n, &o, err, sizeof(err)) == 0);
	j = out_close(f);
	CHECK(strstr(j, "kind,name,calls,time_ns,sends,bytes_sent,receives,bytes_received,collective_bytes\n"
			"function,<Total>,18,72257000,2,5120,2,5120,1792\n"));
	CHECK(strstr(j, "\npeer,0,5,1100000,0,0,1,1024,\n"));
	CHECK(strstr(j, "\nsize,4 KiB - 16 KiB,,,1,4096,1,4096,\n"));

	/* -time from 3 ms: the allreduces and the barriers */
	o.mode = SONDE_PM_TEXT;
	o.start_ns = 3 * MS;
	f = out_open();
	CHECK(sonde_view_mpi(f, (const struct sonde_exp *const *)t.exps, t.n, &o, err, sizeof(err)) == 0);
	CHECK(strstr(out_close(f), "<Total>                              8     0.070600        0              0        0"));
	sonde_exp_tree_release(&t);

	/* a job's founder alone is no rank's */
	group = "no ranks";
	struct sonde_exp *e = open_exp("plain.er");
	const struct sonde_exp *one[1] = { e };

	sonde_exp_tree_init(&t);
	set = (struct sonde_exp_set){ &t, one, 1 };
	o.start_ns = 0;
	f = out_open();
	CHECK(e && sonde_view_ranks(f, &set, &o, err, sizeof(err)) == -SONDE_ERR_NOT_RECORDED);
	out_close(f);
	CHECK(strstr(err, "no experiment selected is an MPI rank's"));
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

int main(int argc, char **argv)
{
	/* the fuzzer's seed (tests/fuzz/run.sh): one rank's calls and
	 * messages of every kind of peer, in DIR/mpi.er */
	if (argc == 3 && !strcmp(argv[1], "--write")) {
		root = argv[2];
		return write_one("mpi.er") < 0;
	}
	show = getenv("SONDE_TEST_SHOW") != NULL;
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (write_one("one.er") < 0 || write_bad() < 0 || write_plain() < 0 || write_job() < 0) {
		printf("not ok - cannot write the experiments\n");
		return 1;
	}
	test_read();
	test_metrics();
	test_agg();
	test_job();
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
