/*
 * test_omp: the omp kind on the analyzer's side (lib/kinds/omp.c) on
 * synthetic experiments written with the tests' writer
 * (lib/reader/expwriter.h): regions, their threads' parts and tasks read
 * back exactly, joined and in time order whatever the order written
 * (workers' parts before their master's region, as the collector writes
 * them); sonde_exp_omp_region_at at every boundary, inside a nested
 * region and out of it again, for a thread in two teams; damaged packets
 * and parts that do not join as problems (the rest still read); -dump omp
 * and the -header line, exactly; an experiment without the kind has none.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 * SONDE_TEST_SHOW=1 prints every output checked; SONDE_TEST_KEEP=1 keeps
 * the experiments.  test_omp --write DIR writes the fuzzer's seed,
 * DIR/omp.er.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "check.h"
#include "reader/experiment.h"
#include "reader/expwriter.h"
#include "sonde/kinds.h"
#include "views/view.h"
#include "views/view_exp.h"

static bool show;
static char tmpdir[] = "/tmp/sonde-test-omp-XXXXXX";

#define T0 1000000000ull
#define US 1000ull
#define MS 1000000ull

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
	const uint64_t st8[1] = { 0x10300 | SONDE_PC_EXACT };

	sonde_expw_log_preamble(w, pid, T0);
	sonde_expw_object(w, 1, "/nonexistent/libx.so", 0x10000, 0x10000, 0x20000, T0);
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

static void region(struct sonde_expw *w, uint32_t tid, uint64_t id, uint64_t parent, unsigned level,
		   unsigned requested, unsigned nthreads, uint64_t codeptr, uint64_t start, uint64_t end,
		   uint64_t stack)
{
	struct sonde_omp_region_packet p = {
		.flags = SONDE_OMPF_LIBOMP,
		.level = (uint16_t)level,
		.requested = requested,
		.nthreads = nthreads,
		.region_id = id,
		.parent_id = parent,
		.codeptr = codeptr,
		.start_ns = start,
		.end_ns = end,
		.stack_id = stack,
	};

	sonde_expw_omp_region(w, tid, &p);
}

static void itask(struct sonde_expw *w, uint32_t tid, uint64_t id, unsigned thread_num, uint64_t begin,
		  uint64_t arrive, uint64_t end)
{
	struct sonde_omp_itask_packet p = {
		.thread_num = thread_num, .region_id = id, .begin_ns = begin, .arrive_ns = arrive, .end_ns = end
	};

	sonde_expw_omp_itask(w, tid, &p);
}

static void task(struct sonde_expw *w, uint32_t tid, uint64_t id, uint64_t create, uint64_t begin, uint64_t end,
		 uint64_t stack, uint64_t codeptr)
{
	struct sonde_omp_task_packet p = {
		.region_id = id,
		.create_ns = create,
		.begin_ns = begin,
		.end_ns = end,
		.create_stack = stack,
		.codeptr = codeptr,
	};

	sonde_expw_omp_task(w, tid, &p);
}

/* ---- one process's regions read back ------------------------------------------------ */

/*
 * Thread 100 opens region A (id 1, 3 threads of 4 asked) from 1 to 5 ms;
 * inside it thread 101 (its thread 1) opens region B (id 2, level 2) from
 * 2 to 3 ms with thread 103; then thread 100 opens A's code again, region
 * C (id 3, the same codeptr) from 6 to 8 ms with thread 103, which so is
 * in two teams.  Thread 102 runs a task thread 100 created in A; thread
 * 100 one of its own in C.  Written as the collector does: each part by
 * its thread when it leaves, a region by its master at the join (B's
 * before A's parts of 101, C's first in the file).
 */
static int write_one(const char *name)
{
	struct sonde_expw *w = create(name, 100);

	if (!w)
		return -1;
	sonde_expw_omp_decl(w);
	region(w, 100, 3, 0, 1, 2, 2, 0x10100, T0 + 6 * MS, T0 + 8 * MS, 7);
	itask(w, 100, 3, 0, T0 + 6 * MS, T0 + 7 * MS, T0 + 8 * MS);
	task(w, 100, 3, T0 + 6500 * US, T0 + 6600 * US, T0 + 6700 * US, 7, 0x10400);
	itask(w, 103, 2, 1, T0 + 2100 * US, T0 + 2900 * US, T0 + 3 * MS);
	itask(w, 103, 3, 1, T0 + 6100 * US, T0 + 7500 * US, T0 + 8 * MS);
	itask(w, 101, 2, 0, T0 + 2 * MS, T0 + 2500 * US, T0 + 3 * MS);
	region(w, 101, 2, 1, 2, 2, 2, 0x10200, T0 + 2 * MS, T0 + 3 * MS, 8);
	itask(w, 101, 1, 1, T0 + 1100 * US, T0 + 4 * MS, T0 + 5 * MS);
	task(w, 102, 1, T0 + 1500 * US, T0 + 1600 * US, T0 + 1900 * US, 8, 0x10300);
	itask(w, 102, 1, 2, T0 + 1200 * US, T0 + 4500 * US, T0 + 5 * MS);
	itask(w, 100, 1, 0, T0 + 1 * MS, T0 + 3 * MS, T0 + 5 * MS);
	region(w, 100, 1, 0, 1, 4, 3, 0x10100, T0 + 1 * MS, T0 + 5 * MS, 7);
	return finish(w);
}

/* A region as the collector writes it now: each worker's part ending at
 * its own arrival (it cannot see the barrier's release), the master's
 * at the join.  The reader ends the workers' parts at the team's last
 * arrival: thread 2's, 4 ms, after the master's own (3 ms). */
static int write_ends(const char *name)
{
	struct sonde_expw *w = create(name, 100);

	if (!w)
		return -1;
	sonde_expw_omp_decl(w);
	itask(w, 101, 1, 1, T0 + 1100 * US, T0 + 2 * MS, T0 + 2 * MS);
	itask(w, 102, 1, 2, T0 + 1200 * US, T0 + 4 * MS, T0 + 4 * MS);
	itask(w, 100, 1, 0, T0 + 1 * MS, T0 + 3 * MS, T0 + 5 * MS);
	region(w, 100, 1, 0, 1, 3, 3, 0x10100, T0 + 1 * MS, T0 + 5 * MS, 7);
	return finish(w);
}

static void test_ends(void)
{
	group = "ends";
	struct sonde_exp *e = open_exp("ends.er");

	CHECK(e);
	if (!e)
		return;
	size_t nr, np;
	const struct sonde_omp_region *r = sonde_exp_omp_regions(e, &nr);

	sonde_exp_problems(e, &np);
	CHECK_U(np, 0);
	CHECK_U(nr, 1);
	if (nr == 1 && r[0].nitasks == 3) {
		CHECK_U(r[0].itasks[0].end_ns, T0 + 5 * MS); /* the master's: the join */
		CHECK_U(r[0].itasks[1].arrive_ns, T0 + 2 * MS);
		CHECK_U(r[0].itasks[1].end_ns, T0 + 4 * MS);
		CHECK_U(r[0].itasks[2].end_ns, T0 + 4 * MS);
	} else {
		CHECK(false);
	}
	sonde_exp_close(e);
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

/* The same region with the master's part in its region packet
 * (SONDE_OMPF_MASTER, as the collector writes it now), and a second
 * region whose master's part would end after the join: damaged. */
static int write_master(const char *name)
{
	struct sonde_expw *w = create(name, 100);

	if (!w)
		return -1;
	sonde_expw_omp_decl(w);
	itask(w, 101, 1, 1, T0 + 1100 * US, T0 + 2 * MS, T0 + 2 * MS);
	itask(w, 102, 1, 2, T0 + 1200 * US, T0 + 4 * MS, T0 + 4 * MS);
	struct sonde_omp_region_packet p = {
		.flags = SONDE_OMPF_LIBGOMP | SONDE_OMPF_MASTER,
		.level = 1,
		.requested = 3,
		.nthreads = 3,
		.region_id = 1,
		.codeptr = 0x10100,
		.start_ns = T0 + 900 * US,
		.end_ns = T0 + 5 * MS,
		.stack_id = 7,
		.master_part = (100 * US) | (uint64_t)(2 * MS) << 32, /* begun at 1 ms, arrived at 3 */
	};
	sonde_expw_omp_region(w, 100, &p);
	p.region_id = 2;
	p.start_ns = T0 + 6 * MS;
	p.end_ns = T0 + 7 * MS;
	p.master_part = (900 * US) | (uint64_t)(200 * US) << 32; /* begun after its arrival */
	sonde_expw_omp_region(w, 100, &p);
	return finish(w);
}

static void test_master(void)
{
	group = "master part";
	struct sonde_exp *e = open_exp("master.er");

	CHECK(e);
	if (!e)
		return;
	size_t nr;
	const struct sonde_omp_region *r = sonde_exp_omp_regions(e, &nr);

	CHECK_U(nr, 1);
	CHECK(has_problem(e, "omp region packet with id 0x2 whose master's part"));
	CHECK_U(sonde_exp_nerrors(e), 1);
	if (nr == 1 && r[0].nitasks == 3) {
		CHECK_U(r[0].flags, SONDE_OMPF_LIBGOMP);
		CHECK_U(r[0].itasks[0].thread_num, 0);
		CHECK_U(r[0].itasks[0].tid, 100);
		CHECK_U(r[0].itasks[0].begin_ns, T0 + 1 * MS);
		CHECK_U(r[0].itasks[0].arrive_ns, T0 + 3 * MS);
		CHECK_U(r[0].itasks[0].end_ns, T0 + 5 * MS);
		CHECK_U(r[0].itasks[1].end_ns, T0 + 4 * MS);
		CHECK_U(r[0].itasks[2].end_ns, T0 + 4 * MS);
	} else {
		CHECK(false);
	}
	sonde_exp_close(e);
}

static void test_read(void)
{
	group = "read";
	struct sonde_exp *e = open_exp("one.er");

	CHECK(e);
	if (!e)
		return;
	size_t nr, nt, np;
	const struct sonde_omp_region *r = sonde_exp_omp_regions(e, &nr);
	const struct sonde_omp_task *t = sonde_exp_omp_tasks(e, &nt);

	sonde_exp_problems(e, &np);
	CHECK_U(np, 0);
	CHECK(sonde_exp_traced(e, SONDE_KIND_OMP));
	CHECK_U(sonde_exp_kind_events(e, SONDE_KIND_OMP), 3 + 7 + 2);
	CHECK_U(nr, 3);
	CHECK_U(nt, 2);
	if (nr != 3 || nt != 2)
		return;
	/* by start: A, B, C */
	CHECK_U(r[0].region_id, 1);
	CHECK_U(r[0].tid, 100);
	CHECK_U(r[0].flags, SONDE_OMPF_LIBOMP);
	CHECK_U(r[0].level, 1);
	CHECK_U(r[0].requested, 4);
	CHECK_U(r[0].nthreads, 3);
	CHECK_U(r[0].parent_id, 0);
	CHECK_U(r[0].codeptr, 0x10100);
	CHECK_U(r[0].start_ns, T0 + 1 * MS);
	CHECK_U(r[0].end_ns, T0 + 5 * MS);
	CHECK_U(r[0].stack_id, 7);
	CHECK_U(r[0].nitasks, 3);
	CHECK_U(r[1].region_id, 2);
	CHECK_U(r[1].tid, 101);
	CHECK_U(r[1].level, 2);
	CHECK_U(r[1].parent_id, 1);
	CHECK_U(r[1].codeptr, 0x10200);
	CHECK_U(r[1].stack_id, 8);
	CHECK_U(r[1].nitasks, 2);
	CHECK_U(r[2].region_id, 3);
	CHECK_U(r[2].nitasks, 2);
	CHECK_U(r[2].requested, 2);
	/* each region's parts by thread number */
	if (r[0].nitasks == 3) {
		const struct sonde_omp_itask *it = r[0].itasks;

		CHECK_U(it[0].thread_num, 0);
		CHECK_U(it[0].tid, 100);
		CHECK_U(it[0].begin_ns, T0 + 1 * MS);
		CHECK_U(it[0].arrive_ns, T0 + 3 * MS);
		CHECK_U(it[0].end_ns, T0 + 5 * MS);
		CHECK_U(it[1].thread_num, 1);
		CHECK_U(it[1].tid, 101);
		CHECK_U(it[1].begin_ns, T0 + 1100 * US);
		CHECK_U(it[1].arrive_ns, T0 + 4 * MS);
		CHECK_U(it[2].thread_num, 2);
		CHECK_U(it[2].tid, 102);
		CHECK_U(it[2].arrive_ns, T0 + 4500 * US);
	}
	if (r[1].nitasks == 2) {
		CHECK_U(r[1].itasks[0].tid, 101);
		CHECK_U(r[1].itasks[1].tid, 103);
		CHECK_U(r[1].itasks[1].begin_ns, T0 + 2100 * US);
	}
	if (r[2].nitasks == 2) {
		CHECK_U(r[2].itasks[0].tid, 100);
		CHECK_U(r[2].itasks[1].tid, 103);
		CHECK_U(r[2].itasks[1].arrive_ns, T0 + 7500 * US);
	}
	/* tasks by begin */
	CHECK_U(t[0].tid, 102);
	CHECK_U(t[0].region_id, 1);
	CHECK_U(t[0].create_ns, T0 + 1500 * US);
	CHECK_U(t[0].begin_ns, T0 + 1600 * US);
	CHECK_U(t[0].end_ns, T0 + 1900 * US);
	CHECK_U(t[0].create_stack, 8);
	CHECK_U(t[0].codeptr, 0x10300);
	CHECK_U(t[1].tid, 100);
	CHECK_U(t[1].region_id, 3);
	CHECK_U(t[1].codeptr, 0x10400);

	char err[256];
	FILE *f = out_open();

	CHECK(sonde_view_dump(f, e, SONDE_DUMP_OMP, err, sizeof(err)) == 0);
	CHECK_TEXT(out_close(f),
		   "# 3 OpenMP region executions (7 threads' parts) and 2 tasks of DIR/one.er, by time; time in seconds "
		   "since the start\n"
		   "omp region 0  time 0.001000000  tid 100  level 1  threads 3 of 4 asked  id 0x1  parent 0x0  codeptr "
		   "0x10100  dur 4000000 ns  libomp  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n"
		   "  thread 0  tid 100  begin +0 ns  arrive +2000000 ns  end +4000000 ns\n"
		   "  thread 1  tid 101  begin +100000 ns  arrive +3000000 ns  end +4000000 ns\n"
		   "  thread 2  tid 102  begin +200000 ns  arrive +3500000 ns  end +4000000 ns\n"
		   "omp task 0  time 0.001600000  tid 102  region 0x1  created -100000 ns  dur 300000 ns  codeptr 0x10300"
		   "  stack 0x8\n"
		   "    #0 0x10300  libx.so+0x300\n"
		   "omp region 1  time 0.002000000  tid 101  level 2  threads 2 of 2 asked  id 0x2  parent 0x1  codeptr "
		   "0x10200  dur 1000000 ns  libomp  stack 0x8\n"
		   "    #0 0x10300  libx.so+0x300\n"
		   "  thread 0  tid 101  begin +0 ns  arrive +500000 ns  end +1000000 ns\n"
		   "  thread 1  tid 103  begin +100000 ns  arrive +900000 ns  end +1000000 ns\n"
		   "omp region 2  time 0.006000000  tid 100  level 1  threads 2 of 2 asked  id 0x3  parent 0x0  codeptr "
		   "0x10100  dur 2000000 ns  libomp  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n"
		   "  thread 0  tid 100  begin +0 ns  arrive +1000000 ns  end +2000000 ns\n"
		   "  thread 1  tid 103  begin +100000 ns  arrive +1500000 ns  end +2000000 ns\n"
		   "omp task 1  time 0.006600000  tid 100  region 0x3  created -100000 ns  dur 100000 ns  codeptr 0x10400"
		   "  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n");

	struct sonde_view_opts o;
	const struct sonde_exp *one[1] = { e };

	sonde_view_opts_init(&o);
	f = out_open();
	sonde_view_header(f, one, 1, &o);
	CHECK(strstr(out_close(f), "OpenMP regions:    3 executions of 2 regions (1 nested), 7 threads' parts, 2 "
				   "tasks (libomp)\n"));
	o.mode = SONDE_PM_JSON;
	f = out_open();
	sonde_view_header(f, one, 1, &o);
	CHECK(strstr(out_close(f),
		     "\"omp\":{\"executions\":3,\"regions\":2,\"nested\":1,\"itasks\":7,\"tasks\":2}"));
	sonde_exp_close(e);
}

/* ---- the region a thread was in at a time -------------------------------------------- */

/* region_at(tid, t) is region id (0: none) and, for a region, the
 * thread's part numbered thread_num. */
#define AT(tid, t, id, tn) check_at(e, tid, t, id, tn, __LINE__)
static void check_at(const struct sonde_exp *e, uint32_t tid, uint64_t t, uint64_t id, unsigned tn, int line)
{
	const struct sonde_omp_itask *it = (const void *)1;
	const struct sonde_omp_region *r = sonde_exp_omp_region_at(e, tid, t, &it);
	bool ok = id ? r && r->region_id == id && it && it->tid == tid && it->thread_num == tn &&
			       it >= r->itasks && it < r->itasks + r->nitasks && it->begin_ns <= t && t < it->end_ns
		     : !r && !it;

	if (ok) {
		npass++;
		return;
	}
	nfail++;
	printf("not ok - %s: line %d: region_at(%u, T0%+lld ns) is region %#llx thread %d, not %#llx thread %u\n",
	       group, line, tid, (long long)(t - T0), r ? (unsigned long long)r->region_id : 0ull,
	       it && it != (const void *)1 ? (int)it->thread_num : -1, (unsigned long long)id, tn);
}

static void test_at(void)
{
	group = "region_at";
	struct sonde_exp *e = open_exp("one.er");

	CHECK(e);
	if (!e)
		return;
	/* the master: serial, A at its fork and to its join (excluded), serial
	 * again, C */
	AT(100, 0, 0, 0);
	AT(100, T0 + 1 * MS - 1, 0, 0);
	AT(100, T0 + 1 * MS, 1, 0);
	AT(100, T0 + 3 * MS, 1, 0); /* waiting at A's barrier: still in A */
	AT(100, T0 + 5 * MS - 1, 1, 0);
	AT(100, T0 + 5 * MS, 0, 0);
	AT(100, T0 + 6 * MS - 1, 0, 0);
	AT(100, T0 + 6 * MS, 3, 0);
	AT(100, T0 + 8 * MS - 1, 3, 0);
	AT(100, T0 + 8 * MS, 0, 0);
	AT(100, UINT64_MAX, 0, 0);
	/* 101: A, the nested B it opened, and A again after B's join */
	AT(101, T0 + 1100 * US - 1, 0, 0);
	AT(101, T0 + 1100 * US, 1, 1);
	AT(101, T0 + 2 * MS - 1, 1, 1);
	AT(101, T0 + 2 * MS, 2, 0);
	AT(101, T0 + 3 * MS - 1, 2, 0);
	AT(101, T0 + 3 * MS, 1, 1);
	AT(101, T0 + 4500 * US, 1, 1);
	AT(101, T0 + 5 * MS, 0, 0);
	AT(101, T0 + 7 * MS, 0, 0);
	/* 103: B's worker, idle, then C's (two teams) */
	AT(103, T0 + 2 * MS, 0, 0);
	AT(103, T0 + 2100 * US, 2, 1);
	AT(103, T0 + 3 * MS - 1, 2, 1);
	AT(103, T0 + 3 * MS, 0, 0);
	AT(103, T0 + 6100 * US - 1, 0, 0);
	AT(103, T0 + 6100 * US, 3, 1);
	AT(103, T0 + 8 * MS, 0, 0);
	/* 102 and a thread with no part */
	AT(102, T0 + 1200 * US, 1, 2);
	AT(102, T0 + 1 * MS, 0, 0);
	AT(99, T0 + 2 * MS, 0, 0);
	AT(104, T0 + 2 * MS, 0, 0);
	/* without the itask pointer */
	size_t nr;
	const struct sonde_omp_region *r = sonde_exp_omp_regions(e, &nr);

	CHECK(nr == 3 && sonde_exp_omp_region_at(e, 101, T0 + 2 * MS, NULL) == &r[1]);
	sonde_exp_close(e);
}

/* ---- three levels and many executions: the lookup against a linear scan ---------------- */

/* Thread 500 opens 200 regions of 2 threads (tid 501) one after another;
 * in every third, it opens a nested one (level 2) with tid 502, in whose
 * every other one it opens a third level with tid 503.  Every
 * microsecond's answer is the innermost part holding it, found by a
 * scan. */
static int write_deep(const char *name)
{
	struct sonde_expw *w = create(name, 500);

	if (!w)
		return -1;
	sonde_expw_omp_decl(w);
	uint64_t id = 1;

	for (unsigned i = 0; i < 200; i++) {
		uint64_t s = T0 + i * 100 * US, outer = id++;

		if (i % 3 == 0) {
			uint64_t mid = id++;

			if (i % 2 == 0) {
				uint64_t in = id++;

				itask(w, 500, in, 0, s + 30 * US, s + 33 * US, s + 40 * US);
				itask(w, 503, in, 1, s + 31 * US, s + 35 * US, s + 40 * US);
				region(w, 500, in, mid, 3, 2, 2, 0x10300, s + 30 * US, s + 40 * US, 0);
			}
			itask(w, 500, mid, 0, s + 20 * US, s + 45 * US, s + 50 * US);
			itask(w, 502, mid, 1, s + 21 * US, s + 48 * US, s + 50 * US);
			region(w, 500, mid, outer, 2, 2, 2, 0x10200, s + 20 * US, s + 50 * US, 0);
		}
		itask(w, 501, outer, 1, s + 1 * US, s + 70 * US, s + 80 * US);
		itask(w, 500, outer, 0, s, s + 60 * US, s + 80 * US);
		region(w, 500, outer, 0, 1, 2, 2, 0x10100, s, s + 80 * US, 7);
	}
	return finish(w);
}

static void test_deep(void)
{
	group = "deep";
	struct sonde_exp *e = open_exp("deep.er");

	CHECK(e);
	if (!e)
		return;
	size_t nr, bad = 0, inner = 0;
	const struct sonde_omp_region *r = sonde_exp_omp_regions(e, &nr);

	CHECK_U(nr, 200 + 67 + 34);
	for (uint32_t tid = 500; tid <= 504; tid++)
		for (uint64_t t = T0 - 2 * US; t < T0 + 200 * 100 * US + 2 * US; t += US / 2) {
			const struct sonde_omp_region *want = NULL;
			const struct sonde_omp_itask *wit = NULL, *it;

			for (size_t i = 0; i < nr; i++)
				for (uint32_t k = 0; k < r[i].nitasks; k++) {
					const struct sonde_omp_itask *x = &r[i].itasks[k];

					if (x->tid == tid && x->begin_ns <= t && t < x->end_ns &&
					    (!want || r[i].level > want->level))
						want = &r[i], wit = x;
				}
			if (sonde_exp_omp_region_at(e, tid, t, &it) != want || it != wit)
				bad++;
			if (want && want->level == 3)
				inner++;
		}
	CHECK_U(bad, 0);
	CHECK_U(inner, 34 * (20 + 18)); /* each level-3 part (10 and 9 us) in half-us steps */
	sonde_exp_close(e);
}

/* ---- damaged packets, parts that do not join ----------------------------------------- */

static int write_bad(void)
{
	struct sonde_expw *w = create("bad.er", 200);

	if (!w)
		return -1;
	sonde_expw_omp_decl(w);
	region(w, 200, 1, 0, 1, 2, 2, 0x10100, T0 + 1 * MS, T0 + 2 * MS, 7);
	itask(w, 200, 1, 0, T0 + 1 * MS, T0 + 1500 * US, T0 + 2 * MS);

	/* A damaged packet ends what is read of its block: each in a block
	 * of its own thread's. */
	struct sonde_omp_region_packet br = { .type = SONDE_PKT_OMP_REGION, .size = sizeof(br), .level = 0,
					      .nthreads = 2, .region_id = 5 };
	struct sonde_omp_itask_packet bi = { .type = SONDE_PKT_OMP_ITASK, .size = sizeof(bi), .region_id = 1,
					     .begin_ns = T0 + 3 * MS, .arrive_ns = T0 + 2 * MS, .end_ns = T0 + 4 * MS };
	struct sonde_omp_task_packet bt = { .type = SONDE_PKT_OMP_TASK, .size = sizeof(bt), .create_ns = T0 + 2 * MS,
					    .begin_ns = T0 + 1 * MS, .end_ns = T0 + 3 * MS };
	uint64_t small[4] = { SONDE_PKT_OMP_REGION | (32u << 16) };

	sonde_expw_packet(w, SONDE_KIND_OMP, 201, &br, sizeof(br));	  /* level 0 */
	sonde_expw_packet(w, SONDE_KIND_OMP, 202, &bi, sizeof(bi));	  /* arrives before it begins */
	sonde_expw_packet(w, SONDE_KIND_OMP, 203, &bt, sizeof(bt));	  /* created after it began */
	sonde_expw_packet(w, SONDE_KIND_OMP, 204, small, sizeof(small)); /* too small */
	/* well formed, but not joining */
	itask(w, 205, 99, 1, T0 + 1 * MS, T0 + 1 * MS, T0 + 2 * MS);		   /* no region 99 */
	itask(w, 206, 1, 0, T0 + 1100 * US, T0 + 1200 * US, T0 + 2 * MS);	   /* thread 0 again */
	itask(w, 207, 1, 2, T0 + 1100 * US, T0 + 1200 * US, T0 + 2 * MS);	   /* past a team of 2 */
	region(w, 208, 1, 0, 1, 2, 2, 0x10100, T0 + 1 * MS, T0 + 2 * MS, 7);	   /* id 1 again */
	itask(w, 209, 1, 1, T0 + 1 * MS, T0 + 1800 * US, T0 + 2 * MS);
	return finish(w);
}


static void test_bad(void)
{
	group = "damaged";
	struct sonde_exp *e = open_exp("bad.er");

	CHECK(e);
	if (!e)
		return;
	size_t nr, nt, np;
	const struct sonde_omp_region *r = sonde_exp_omp_regions(e, &nr);

	sonde_exp_omp_tasks(e, &nt);
	CHECK_U(nr, 1);
	CHECK_U(nt, 0);
	CHECK(nr == 1 && r[0].region_id == 1 && r[0].nitasks == 2);
	CHECK(nr == 1 && r[0].nitasks == 2 && r[0].itasks[0].tid == 200 && r[0].itasks[1].tid == 209);
	CHECK(has_problem(e, "omp region packet with id 0x5, level 0"));
	CHECK(has_problem(e, "omp itask packet of region 0x1 with begin"));
	CHECK(has_problem(e, "omp task packet created"));
	CHECK(has_problem(e, "omp region packet size 32"));
	CHECK_U(sonde_exp_nerrors(e), 4);
	CHECK(has_problem(e, "1 OpenMP threads' parts of regions without a region packet"));
	CHECK(has_problem(e, "1 OpenMP threads' parts repeat a thread number"));
	CHECK(has_problem(e, "1 OpenMP threads' parts have a thread number past"));
	CHECK(has_problem(e, "1 OpenMP region packets repeat the id"));
	sonde_exp_problems(e, &np);
	CHECK_U(np, 8);
	CHECK(sonde_exp_omp_region_at(e, 209, T0 + 1 * MS, NULL) == r);
	CHECK(sonde_exp_omp_region_at(e, 205, T0 + 1 * MS, NULL) == NULL);
	sonde_exp_close(e);
}

/* ---- without the kind ---------------------------------------------------------------- */

static int write_plain(void)
{
	struct sonde_expw *w = create("plain.er", 300);

	if (!w)
		return -1;
	sonde_expw_sample(w, 300, 0, T0 + MS, MS, 7);
	return finish(w);
}

static void test_plain(void)
{
	group = "plain";
	struct sonde_exp *e = open_exp("plain.er");
	size_t n;
	const struct sonde_omp_itask *it = (const void *)1;

	CHECK(e);
	if (!e)
		return;
	CHECK(!sonde_exp_traced(e, SONDE_KIND_OMP));
	CHECK(sonde_exp_omp_regions(e, &n) == NULL && n == 0);
	CHECK(sonde_exp_omp_tasks(e, &n) == NULL && n == 0);
	CHECK(sonde_exp_omp_region_at(e, 300, T0 + MS, &it) == NULL && it == NULL);
	CHECK_U(sonde_exp_kind_events(e, SONDE_KIND_OMP), 0);

	struct sonde_view_opts o;
	const struct sonde_exp *one[1] = { e };

	sonde_view_opts_init(&o);
	o.mode = SONDE_PM_JSON;
	FILE *f = out_open();

	sonde_view_header(f, one, 1, &o);
	/* An experiment without the kind: its header has no "omp" at all. */
	CHECK(!strstr(out_close(f), "\"omp\""));
	o.mode = SONDE_PM_TEXT;
	f = out_open();
	sonde_view_header(f, one, 1, &o);
	CHECK(!strstr(out_close(f), "OpenMP regions"));
	sonde_exp_close(e);
}

int main(int argc, char **argv)
{
	/* the fuzzer's seeds (tests/fuzz/run.sh): nested regions, a thread
	 * in two teams and tasks, in DIR/omp.er; masters' parts in their
	 * regions' packets, in DIR/ompm.er */
	if (argc == 3 && !strcmp(argv[1], "--write")) {
		root = argv[2];
		return write_one("omp.er") < 0 || write_master("ompm.er") < 0;
	}
	show = getenv("SONDE_TEST_SHOW") != NULL;
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (write_one("one.er") < 0 || write_deep("deep.er") < 0 || write_bad() < 0 || write_plain() < 0 ||
	    write_ends("ends.er") < 0 || write_master("master.er") < 0) {
		printf("not ok - cannot write the experiments\n");
		return 1;
	}
	test_read();
	test_ends();
	test_master();
	test_at();
	test_deep();
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
