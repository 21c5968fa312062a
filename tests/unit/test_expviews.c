/*
 * test_expviews: the views of experiments as read (lib/views/view_exp.h:
 * -header in text, csv and json, -dump, -experiment_list, -processes)
 * and the error codes of the views (lib/base/error.h), checked exactly on
 * a synthetic experiment (lib/reader/expwriter.h): a founder, pid 100,
 * with two samples on one stack in /nonexistent/libx.so, a collector
 * warning, its end record and exit status 3, and one descendant's
 * sub-experiment, _f1.er, pid 101, that has no exit record.  The
 * experiment's directory is shown as DIR; times are in UTC.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 * SONDE_TEST_SHOW=1 prints every output checked.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "reader/expwriter.h"
#include "model/metrics.h"
#include "model/profile.h"
#include "views/view.h"
#include "reader/exptree.h"
#include "views/view_exp.h"

static bool show;
static char tmpdir[] = "/tmp/sonde-test-expviews-XXXXXX";
static char founder[4200], child[4300];

#include "capture.h"

/* ---- the experiments ------------------------------------------------------------------ */

#define T0 1000000000ull
#define MS 1000000ull

static int write_exps(void)
{
	char err[512];
	struct sonde_expw *w;
	const uint64_t st[2] = { 0x10100 | SONDE_PC_EXACT, 0x10200 };

	snprintf(founder, sizeof(founder), "%s/one.er", tmpdir);
	if (!(w = sonde_expw_create(founder, err, sizeof(err))))
		goto fail;
	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_object(w, 1, "/nonexistent/libx.so", 0x10000, 0x10000, 0x20000, T0);
	sonde_expw_stack(w, 7, 0, 2, st);
	sonde_expw_stack(w, 8, SONDE_STACK_TRUNCATED, 1, st);
	sonde_expw_sample(w, 100, 0, T0 + 2 * MS, 2 * MS, 7);
	sonde_expw_sample(w, 100, 1, T0 + 1 * MS, 1 * MS, 8);
	sonde_expw_log(w, "<event kind=\"warning\" time_ns=\"%llu\" text=\"a warning\"/>\n", T0 + 500000);
	/* descendants that were not recorded, as their collectors say it */
	sonde_expw_log(w, "<event kind=\"unrecorded\" time_ns=\"%llu\" lineage=\"_f2_x1\" reason=\"statically linked\" "
		       "command=\"/bin/st\"/>\n", T0 + 3 * MS);
	sonde_expw_log(w, "<event kind=\"unrecorded\" time_ns=\"%llu\" lineage=\"_f3\" pid=\"103\" reason=\"its "
		       "experiment's path is too long\" command=\"prog\"/>\n", T0 + 3 * MS);
	sonde_expw_log(w, "<event kind=\"unrecorded\" time_ns=\"%llu\" lineage=\"_f4_x1\" reason=\"statically linked\" "
		       "command=\"/bin/st\"/>\n", T0 + 3 * MS);
	sonde_expw_log(w, "<event kind=\"end\" time_ns=\"%llu\" samples=\"2\" lost=\"0\" handler_ns=\"3000\"/>\n",
		       T0 + 4 * MS);
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"3\"/>\n", T0 + 5 * MS);
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0)
		goto fail;

	snprintf(child, sizeof(child), "%s/_f1.er", founder);
	if (!(w = sonde_expw_create(child, err, sizeof(err))))
		goto fail;
	sonde_expw_log_preamble(w, 101, T0 + MS);
	sonde_expw_object(w, 1, "/nonexistent/libx.so", 0x10000, 0x10000, 0x20000, T0);
	sonde_expw_stack(w, 7, 0, 2, st);
	sonde_expw_sample(w, 101, 0, T0 + 3 * MS, 4 * MS, 7);
	if (sonde_expw_finish(w, SONDE_EXPW_OPEN_LOG, err, sizeof(err)) < 0)
		goto fail;
	return 0;
fail:
	printf("# %s\n", err);
	return -1;
}

static struct sonde_exp *open_exp(const char *dir)
{
	char err[512];
	struct sonde_exp *e = sonde_exp_open(dir, err, sizeof(err));

	if (!e)
		printf("# %s\n", err);
	return e;
}

/* ---- -header ------------------------------------------------------------------------ */

static void test_header(const struct sonde_exp *e)
{
	const struct sonde_exp *one[1] = { e };
	struct sonde_view_opts o;
	FILE *f;

	group = "header";
	sonde_view_opts_init(&o);
	f = out_open();
	sonde_view_header(f, one, 1, &o);
	CHECK_TEXT(out_close(f),
		   "Experiment:        DIR/one.er\n"
		   "Collector:         sonde test (experiment format 1)\n"
		   "Target:            ./prog\n"
		   "Executable:        /tmp/prog\n"
		   "Directory:         /tmp\n"
		   "Process:           pid 100, parent 1\n"
		   "Host:              testhost, Linux 6.1.0 x86_64, 4 CPUs, 7.6 GiB memory\n"
		   "Clock profiling:   perf-task-clock, interval 1.000 ms, depth limit 256\n"
		   "Limits:            size 2000 MB\n"
		   "Start:             2025-11-21 04:40:00.500 UTC\n"
		   "Duration:          0.005 s (until the exit)\n"
		   "Exit:              exit status 3\n"
		   "Samples:           2\n"
		   "Sample points:     0 points, 0 samples\n"
		   "Recorded CPU time: 0.003 s\n"
		   "Data sizes:        log.xml 1.4 KiB, map.xml 191 B, profile 20.0 KiB, stacks 20.0 KiB, "
		   "overview 4.0 KiB; total 45.6 KiB\n"
		   "Stacks:            2 distinct, 1 truncated, 0 incomplete (samples: 1 truncated, 0 inco"
		   "mplete, 0 unknown)\n"
		   "Collector cost:    0.000 s: 0.000 s starting, 0.000 s in the sampling handler (1.50 us per sample), 0.000 s ending\n"
		   "Lost samples:      0\n"
		   "Log:               complete\n"
		   "Descendants:       1 recorded, 3 not recorded (2: statically linked; 1: its experiment's "
		   "path is too long)\n"
		   "Load objects:      1 file: 1 missing\n"
		   "WARNING: cannot read '/nonexistent/libx.so' (No such file or directory), and the exper"
		   "iment has no archived copy; its functions are shown as addresses\n"
		   "\n"
		   "Collector warnings (1):\n"
		   "     0.001 s  a warning\n"
		   "\n"
		   "Read problems (0): none\n"
		   "\n"
		   "Threads (1):\n"
		   "         tid    samples recorded CPU s   real CPU s   diff %\n"
		   "         100          2          0.003            -        -\n"
		   "       total          2          0.003            -        -\n");

	o.mode = SONDE_PM_CSV;
	f = out_open();
	sonde_view_header(f, one, 1, &o);
	CHECK_TEXT(out_close(f),
		   "key,value\n"
		   "view,header\n"
		   "experiment,DIR/one.er\n"
		   "notes,\n"
		   "collector,sonde test\n"
		   "format,1\n"
		   "target.command,./prog\n"
		   "target.exe,/tmp/prog\n"
		   "target.cwd,/tmp\n"
		   "target.pid,100\n"
		   "target.ppid,1\n"
		   "host.name,testhost\n"
		   "host.os,Linux\n"
		   "host.release,6.1.0\n"
		   "host.arch,x86_64\n"
		   "host.cpus,4\n"
		   "host.memory_kb,8000000\n"
		   "settings.clock_source,perf-task-clock\n"
		   "settings.kernel_time,\n"
		   "settings.clock_interval_ns,1000000\n"
		   "settings.depth_limit,256\n"
		   "settings.size_limit_mb,2000\n"
		   "settings.duration_limit_ms,0\n"
		   "start.realtime_sec,1763700000\n"
		   "start.realtime_nsec,500000000\n"
		   "duration_ns,5000000\n"
		   "end_source,exit\n"
		   "exit.status,3\n"
		   "samples,2\n"
		   "recorded_cpu_ns,3000000\n"
		   "sync,\n"
		   "heap,\n"
		   "io,\n"
		   "counters,\n"
		   "files.0.name,log.xml\n"
		   "files.0.size,1447\n"
		   "files.1.name,map.xml\n"
		   "files.1.size,191\n"
		   "files.2.name,profile\n"
		   "files.2.size,20480\n"
		   "files.3.name,stacks\n"
		   "files.3.size,20480\n"
		   "files.4.name,overview\n"
		   "files.4.size,4096\n"
		   "stacks.distinct,2\n"
		   "stacks.truncated,1\n"
		   "stacks.incomplete,0\n"
		   "stacks.samples_truncated,1\n"
		   "stacks.samples_incomplete,0\n"
		   "stacks.samples_unknown,0\n"
		   "stacks.java_scoped,0\n"
		   "handler_ns,3000\n"
		   "collector_start_ns,0\n"
		   "collector_end_ns,0\n"
		   "lost_samples,0\n"
		   "lost_stacks,0\n"
		   "log_complete,true\n"
		   "descendants.follow,\n"
		   "descendants.recorded,1\n"
		   "descendants.not_recorded,3\n"
		   "descendants.reasons.0.reason,statically linked\n"
		   "descendants.reasons.0.count,2\n"
		   "descendants.reasons.1.reason,its experiment's path is too long\n"
		   "descendants.reasons.1.count,1\n"
		   "warnings.0.time_ns,500000\n"
		   "warnings.0.text,a warning\n"
		   "load_objects.0.path,/nonexistent/libx.so\n"
		   "load_objects.0.buildid,0123abcd\n"
		   "load_objects.0.state,missing\n"
		   "load_objects.0.file,/nonexistent/libx.so\n"
		   "threads.0.tid,100\n"
		   "threads.0.samples,2\n"
		   "threads.0.recorded_cpu_ns,3000000\n"
		   "threads.0.real_cpu_ns,\n");

	o.mode = SONDE_PM_JSON;
	f = out_open();
	sonde_view_header(f, one, 1, &o);
	CHECK_TEXT(out_close(f),
		   "{\"view\":\"header\",\"experiment\":\"DIR/one.er\",\"notes\":null,\"collector\":\"sond"
		   "e test\",\"format\":1,\"target\":{\"command\":\"./prog\",\"exe\":\"/tmp/prog\",\"cwd\""
		   ":\"/tmp\",\"pid\":100,\"ppid\":1},\"host\":{\"name\":\"testhost\",\"os\":\"Linux\",\"r"
		   "elease\":\"6.1.0\",\"arch\":\"x86_64\",\"cpus\":4,\"memory_kb\":8000000},\"settings\":"
		   "{\"clock_source\":\"perf-task-clock\",\"kernel_time\":null,\"clock_interval_ns\":10000"
		   "00,\"depth_limit\":256,\"size_limit_mb\":2000,\"duration_limit_ms\":0},\"start\":{\"re"
		   "altime_sec\":1763700000,\"realtime_nsec\":500000000},\"duration_ns\":5000000,\"end_sou"
		   "rce\":\"exit\",\"exit\":{\"status\":3},\"samples\":2,\"recorded_cpu_ns\":3000000,\"syn"
		   "c\":null,\"heap\":null,\"io\":null,\"counters\":null,\"files\":[{\"name\":\"log.xml\",\"size\":1447},{\""
		   "name\":\"map.xml\",\"size\":191},{\"name\":\"profile\",\"size\":20480},{\"name\":\"sta"
		   "cks\",\"size\":20480},{\"name\":\"overview\",\"size\":4096}],\"stacks\":{\"distinct\":"
		   "2,\"truncated\":1,\"incomplete\":0,\"samples_truncated\":1,\"samples_incomplete\":0,\""
		   "samples_unknown\":0,\"java_scoped\":0},\"handler_ns\":3000,\"collector_start_ns\":0,\"collector_end_ns\":0,\"lost_samples\":0,\"lost_stacks\":0,\"log_co"
		   "mplete\":true,\"descendants\":{\"follow\":null,\"recorded\":1,\"not_recorded\":3,\"reasons\":[{\"reaso"
		   "n\":\"statically linked\",\"count\":2},{\"reason\":\"its experiment's path is too long"
		   "\",\"count\":1}]},\"warnings\":[{\"time_ns\":500000,\"text\":\"a warning\"}],\"errors\":[]"
		   ",\"load_objects\":[{\"path\":\"/nonexistent/libx.so\",\"buildid\":\"0123abcd\",\"state"
		   "\":\"missing\",\"file\":\"/nonexistent/libx.so\"}],\"problems\":[],\"threads\":[{\"tid"
		   "\":100,\"samples\":2,\"recorded_cpu_ns\":3000000,\"real_cpu_ns\":null}]}\n");
}

/* A sub-experiment's descendants are its founder's to count: no line, null. */
static void test_header_subexp(const struct sonde_exp *e)
{
	const struct sonde_exp *one[1] = { e };
	struct sonde_view_opts o;
	FILE *f;
	const char *got;

	group = "header of a sub-experiment";
	sonde_view_opts_init(&o);
	f = out_open();
	sonde_view_header(f, one, 1, &o);
	got = out_close(f);
	CHECK(got && !strstr(got, "Descendants:"));
	o.mode = SONDE_PM_JSON;
	f = out_open();
	sonde_view_header(f, one, 1, &o);
	got = out_close(f);
	CHECK(got && strstr(got, ",\"descendants\":null,"));
}

/* ---- -dump -------------------------------------------------------------------------- */

static void test_dump(const struct sonde_exp *e)
{
	enum sonde_dump_kind k;
	char err[512];
	FILE *f;

	group = "dump";
	CHECK(sonde_dump_parse(&k, "stacks", err, sizeof(err)) == 0 && k == SONDE_DUMP_STACKS);
	CHECK(sonde_dump_parse(&k, "io", err, sizeof(err)) == 0 && k == SONDE_DUMP_IO);
	CHECK(sonde_dump_parse(&k, "bogus", err, sizeof(err)) == -1);
	CHECK_S(err, "unknown -dump argument 'bogus' (profile, stacks, overview, objects, sync, heap, io, counters, mpi, omp)");

	f = out_open();
	CHECK(sonde_view_dump(f, e, SONDE_DUMP_PROFILE, err, sizeof(err)) == 0);
	CHECK_TEXT(out_close(f),
		   "# 2 profile samples of DIR/one.er, by time; time in seconds since the start\n"
		   "sample 0  time 0.001000000  tid 100  cpu 1  weight 1.000 ms  stack 0x8  [truncated]\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "sample 1  time 0.002000000  tid 100  cpu 0  weight 2.000 ms  stack 0x7\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n");
	f = out_open();
	CHECK(sonde_view_dump(f, e, SONDE_DUMP_STACKS, err, sizeof(err)) == 0);
	CHECK_TEXT(out_close(f),
		   "# 2 distinct stacks of DIR/one.er, leaf first\n"
		   "stack 0x7  depth 2\n"
		   "    #0 0x10100  libx.so+0x100\n"
		   "    #1 0x10200  libx.so+0x200\n"
		   "stack 0x8  depth 1  [truncated]\n"
		   "    #0 0x10100  libx.so+0x100\n");
	f = out_open();
	CHECK(sonde_view_dump(f, e, SONDE_DUMP_OBJECTS, err, sizeof(err)) == 0);
	CHECK_TEXT(out_close(f),
		   "# 1 load objects of DIR/one.er; times in seconds\n"
		   "object 1  loaded 0.000000  base 0x10000  range 0x10000-0x20000  buildid 0123abcd  /non"
		   "existent/libx.so\n");
}

/* ---- -experiment_list and -processes --------------------------------------------------- */

/* -experiment_list's and -processes' text of a set: list and procs. */
#define CHECK_SET_VIEWS(s, list, procs) check_set_views(s, list, procs, __LINE__)
static void check_set_views(const struct sonde_exp_set *s, const char *list, const char *procs, int line)
{
	struct sonde_view_opts o;
	FILE *f;

	sonde_view_opts_init(&o);
	f = out_open();
	sonde_view_experiment_list(f, s, &o);
	check_text(out_close(f), list, line);
	f = out_open();
	sonde_view_processes(f, s, &o);
	check_text(out_close(f), procs, line);
}

/* Opens the tree of DIR/name as sonde print does, named as given from
 * DIR (the test's directory), with the kinds given (NULL: the reader's);
 * what it says goes to said. */
static char said[1024];

static void say(void *arg, const char *msg)
{
	size_t l = strlen(said);

	snprintf(said + l, sizeof(said) - l, "%s\n", msg);
}

static int open_tree(struct sonde_exp_tree *t, const char *name, const struct sonde_subexp_kind *kinds,
		     size_t nkinds)
{
	char cwd[4200];
	int rc = -1;

	said[0] = '\0';
	sonde_exp_tree_init(t);
	if (kinds) {
		t->kinds = kinds;
		t->nkinds = nkinds;
	}
	if (getcwd(cwd, sizeof(cwd)) && chdir(tmpdir) == 0) {
		rc = sonde_exp_tree_add(t, name, 0, say, NULL);
		if (chdir(cwd) < 0)
			rc = -1;
	}
	return rc;
}

static void test_processes(void)
{
	struct sonde_exp_tree t;
	struct sonde_exp_set s;
	struct sonde_view_opts o;
	FILE *f;

	group = "processes";
	CHECK(sonde_subexp_kind_of("_f1.er"));
	CHECK(sonde_subexp_kind_of("_f2_x1.er"));
	CHECK(!sonde_subexp_kind_of("one.er"));
	CHECK(!sonde_subexp_kind_of("_.er"));
	/* a kernel profile's processes (sonde kernel -F), opened alone */
	const struct sonde_subexp_kind *kp = sonde_subexp_kind_of("_sshd_PID_1264.1.er");
	CHECK(kp && !strcmp(kp->name, "kernel process") && kp->alone);
	CHECK(sonde_subexp_kind_of("_a_PID_b_PID_7.1.er") == kp);
	CHECK(sonde_subexp_kind_of("_sshd_PID_.1.er") != kp);
	CHECK(sonde_subexp_kind_of("_PID_12.1.er") != kp);
	CHECK(sonde_subexp_kind_of("_sshd_PID_12x.1.er") != kp);
	CHECK(sonde_subexp_kind_of("_sshd_PID_12.2.er") != kp);
	CHECK(!sonde_subexp_kind_of("_f1.er")->alone);
	/* the tree of one.er, opened as "one.er": the founder and _f1.er */
	CHECK_I(open_tree(&t, "one.er", NULL, 0), 0);
	CHECK_S(said, "");
	CHECK_I(t.n, 2);
	if (t.n != 2)
		return;
	CHECK_S(t.names[1], "one.er/_f1.er");
	CHECK(!t.node[0].kind && t.node[1].kind == sonde_subexp_kind_of("_f1.er"));
	CHECK_S(t.node[0].lineage, "");
	CHECK_S(t.node[1].lineage, "_f1");
	CHECK_I(t.node[1].pid, 101);
	CHECK_S(t.node[1].program, "prog");
	CHECK_I(t.node[1].rank, -1);
	CHECK_I(t.node[1].founder, 0);
	s = (struct sonde_exp_set){ &t, (const struct sonde_exp *const *)t.exps, 2 };
	sonde_view_opts_init(&o);
	CHECK_SET_VIEWS(&s,
			"Experiments (* selected):\n"
			"*   1  one.er\n"
			"*   2  one.er/_f1.er\n",
			"  #  Lineage                       PID     PPID   CPU sec.  Samples   Exit  Command\n"
			"  1  (founder)                     100        1      0.003        2      3  ./prog\n"
			"  2  _f1.er                        101        1      0.004        1      ?  ./prog\n"
			"     <Total>                                         0.007        3\n");

	/* only the descendant selected */
	s.sel = (const struct sonde_exp *const *)t.exps + 1;
	s.nsel = 1;
	o.mode = SONDE_PM_JSON;
	f = out_open();
	sonde_view_experiment_list(f, &s, &o);
	CHECK_TEXT(out_close(f),
		   "{\"experiments\":[{\"number\":1,\"selected\":false,\"path\":\"one.er\",\"pid\":100},{"
		   "\"number\":2,\"selected\":true,\"path\":\"one.er/_f1.er\",\"pid\":101}]}\n");
	f = out_open();
	sonde_view_processes(f, &s, &o);
	CHECK_TEXT(out_close(f),
		   "{\"processes\":[{\"number\":2,\"lineage\":\"_f1.er\",\"pid\":101,\"ppid\":1,\"cpu_sec"
		   "\":0.004,\"samples\":1,\"exit\":\"?\",\"command\":\"./prog\"}],\"total_cpu_sec\":0.004"
		   "}\n");
	o.mode = SONDE_PM_CSV;
	f = out_open();
	sonde_view_processes(f, &s, &o);
	CHECK_TEXT(out_close(f),
		   "number,lineage,pid,ppid,cpu_ns,samples,exit,command\n"
		   "2,_f1.er,101,1,4000000,1,?,./prog\n");
	sonde_exp_tree_release(&t);
}

/* ---- a new kind of sub-experiment (doc/internals.md's recipe) ----------------------------- */

/* Writes DIR/two.er/SUB (SUB NULL: the founder) for process pid, one
 * sample of ms milliseconds; mpi: more lines of its log.xml (a rank's
 * identity), NULL none. */
static const char *member_founder = "two.er";

static int write_member_mpi(const char *sub, uint32_t pid, uint64_t ms, const char *mpi)
{
	char dir[4400], err[512];
	struct sonde_expw *w;
	const uint64_t st[2] = { 0x10100 | SONDE_PC_EXACT, 0x10200 };

	snprintf(dir, sizeof(dir), "%s/%s%s%s", tmpdir, member_founder, sub ? "/" : "", sub ? sub : "");
	if (!(w = sonde_expw_create(dir, err, sizeof(err)))) {
		printf("# %s\n", err);
		return -1;
	}
	sonde_expw_log_preamble(w, pid, T0);
	if (mpi)
		sonde_expw_log(w, "%s", mpi);
	sonde_expw_object(w, 1, "/nonexistent/libx.so", 0x10000, 0x10000, 0x20000, T0);
	sonde_expw_stack(w, 7, 0, 2, st);
	sonde_expw_sample(w, pid, 0, T0 + ms * MS, ms * MS, 7);
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return -1;
	}
	return 0;
}

static int write_member(const char *sub, uint32_t pid, uint64_t ms)
{
	return write_member_mpi(sub, pid, ms, NULL);
}

/* A founder with sub-experiments of two kinds, the descendants' and the
 * MPI ranks', and names that are neither or not directories of their
 * own: the tree, its views and selections. */
static void test_tree_kinds(void)
{
	const struct sonde_subexp_kind *rank = sonde_subexp_kind_of("M_r0.er"),
				       *desc = sonde_subexp_kind_of("_f1.er");
	struct sonde_exp_tree t;
	bool want[8];
	char err[256], link[4400], other[4400], lead0[4400];

	group = "tree of two kinds";
	CHECK(rank && !strcmp(rank->name, "rank") && desc && !strcmp(desc->name, "descendant"));
	if (!rank || !desc)
		return;
	/* names of ranks, of their descendants and of neither */
	CHECK(sonde_subexp_kind_of("M_r12.er") == rank);
	CHECK(sonde_subexp_kind_of("M_r1_f2_x1.er") == desc);
	CHECK(!sonde_subexp_kind_of("M_r.er") && !sonde_subexp_kind_of("M_rx.er") &&
	      !sonde_subexp_kind_of("M_r01.er") && !sonde_subexp_kind_of("M_r1x.er") &&
	      !sonde_subexp_kind_of("M_r1_.er") && !sonde_subexp_kind_of("M_r99999999999.er"));
	snprintf(link, sizeof(link), "%s/two.er/_f9.er", tmpdir);
	snprintf(other, sizeof(other), "%s/two.er/M_rx.er", tmpdir);
	snprintf(lead0, sizeof(lead0), "%s/two.er/M_r01.er", tmpdir);
	if (write_member(NULL, 200, 1) < 0 ||
	    write_member_mpi("M_r1.er", 202, 3, "<mpirank rank=\"1\" size=\"2\" launcher=\"OPENMPI\" job=\"j7\"/>\n") <
		    0 ||
	    write_member("_f1.er", 203, 4) < 0 ||
	    write_member_mpi("M_r0.er", 201, 2,
			     "<mpirank rank=\"0\" size=\"2\"/>\n<trace kind=\"mpi\" name=\"rank\" value=\"0\"/>\n"
			     "<trace kind=\"mpi\" name=\"size\" value=\"2\"/>\n") < 0 ||
	    write_member("M_r1_f1.er", 204, 5) < 0 || symlink(".", link) < 0 || mkdir(other, 0755) < 0 ||
	    mkdir(lead0, 0755) < 0) {
		CHECK(!"the experiments are written");
		return;
	}
	CHECK_I(open_tree(&t, "two.er", NULL, 0), 0);
	CHECK_S(said, "warning: 'two.er': 1 sub-experiment name skipped (the first: '_f9.er'): not a directory "
		      "of its own (a symbolic link, or a second name of a directory already read), whose samples "
		      "would be counted twice\n");
	CHECK_I(t.n, 5);
	CHECK_I(t.ngroups, 1);
	if (t.n != 5)
		return;
	/* in name order: 'M' before '_' */
	CHECK_S(t.names[0], "two.er");
	CHECK_S(t.names[1], "two.er/M_r0.er");
	CHECK_S(t.names[2], "two.er/M_r1.er");
	CHECK_S(t.names[3], "two.er/M_r1_f1.er");
	CHECK_S(t.names[4], "two.er/_f1.er");
	CHECK(!t.node[0].kind && t.node[1].kind == rank && t.node[2].kind == rank && t.node[3].kind == desc &&
	      t.node[4].kind == desc);
	CHECK_S(t.node[1].lineage, "M_r0");
	CHECK_S(t.node[3].lineage, "M_r1_f1");
	CHECK_S(t.node[4].lineage, "_f1");
	CHECK_I(t.node[0].rank, -1);
	CHECK_I(t.node[1].rank, 0);
	CHECK_I(t.node[2].rank, 1);
	CHECK_I(t.node[3].rank, 1); /* a rank's descendant */
	CHECK_I(t.node[4].rank, -1);
	CHECK_I(t.node[2].pid, 202);
	CHECK_I(t.node[4].founder, 0);
	CHECK_I(t.node[4].group, 0);
	CHECK(t.exps[2] == t.node[2].exp && t.names[2] == t.node[2].path);
	/* the launcher's word and MPI's, as read */
	const struct sonde_exp_mpi *m0 = &sonde_exp_info(t.exps[1])->mpi, *m1 = &sonde_exp_info(t.exps[2])->mpi;

	CHECK(m0->rank == 0 && m0->size == 2 && m0->mpi_rank == 0 && m0->mpi_size == 2 && !m0->launcher);
	CHECK(m1->rank == 1 && m1->size == 2 && m1->mpi_rank == -1 && m1->mpi_size == -1);
	CHECK(m1->launcher && !strcmp(m1->launcher, "OPENMPI") && m1->job && !strcmp(m1->job, "j7"));
	CHECK(sonde_exp_info(t.exps[4])->mpi.rank == -1);

	struct sonde_exp_set s = { &t, (const struct sonde_exp *const *)t.exps, 5 };

	CHECK_SET_VIEWS(&s,
			"Experiments (* selected):\n"
			"*   1  two.er\n"
			"*   2  two.er/M_r0.er\n"
			"*   3  two.er/M_r1.er\n"
			"*   4  two.er/M_r1_f1.er\n"
			"*   5  two.er/_f1.er\n",
			"  #  Lineage                   Rank      PID     PPID   CPU sec.  Samples   Exit  Command\n"
			"  1  (founder)                    -      200        1      0.001        1      ?  ./prog\n"
			"  2  M_r0.er                      0      201        1      0.002        1      ?  ./prog\n"
			"  3  M_r1.er                      1      202        1      0.003        1      ?  ./prog\n"
			"  4  M_r1_f1.er                   1      204        1      0.005        1      ?  ./prog\n"
			"  5  _f1.er                       -      203        1      0.004        1      ?  ./prog\n"
			"     <Total>                                               0.015        5\n");

	/* en_desc and -experiment_select read it */
	CHECK_I(sonde_exp_tree_desc(&t, "off", want, err, sizeof(err)), 0);
	CHECK(want[0] && !want[1] && !want[2] && !want[3] && !want[4]);
	CHECK_I(sonde_exp_tree_desc(&t, "=^M_r1$", want, err, sizeof(err)), 0);
	CHECK(want[0] && !want[1] && want[2] && !want[3] && !want[4]);
	CHECK_I(sonde_exp_tree_desc(&t, "=_f", want, err, sizeof(err)), 0);
	CHECK(want[0] && !want[1] && !want[2] && want[3] && want[4]);
	CHECK_I(sonde_exp_tree_desc(&t, "=prog", want, err, sizeof(err)), 0); /* /tmp/prog: all */
	CHECK(want[0] && want[1] && want[2] && want[3] && want[4]);
	CHECK_I(sonde_exp_tree_desc(&t, "=(", want, err, sizeof(err)), -1);
	CHECK_I(sonde_exp_tree_desc(&t, "maybe", want, err, sizeof(err)), -1);
	CHECK_S(err, "'maybe' is not on, off or =REGEX");
	CHECK_I(sonde_exp_tree_pick(&t, "1,3-4", want), 0);
	CHECK(want[0] && !want[1] && want[2] && want[3] && !want[4]);
	CHECK_I(sonde_exp_tree_pick(&t, "6", want), -1);
	CHECK_I(sonde_exp_tree_pick(&t, "2-", want), -1);
	/* by rank: the rank's experiment and its descendants' */
	CHECK_I(sonde_exp_tree_pick(&t, "rank=1", want), 0);
	CHECK(!want[0] && !want[1] && want[2] && want[3] && !want[4]);
	CHECK_I(sonde_exp_tree_pick(&t, "rank=0-1", want), 0);
	CHECK(!want[0] && want[1] && want[2] && want[3] && !want[4]);
	CHECK_I(sonde_exp_tree_pick(&t, "rank=0,1", want), 0);
	CHECK(!want[0] && want[1] && want[2] && want[3] && !want[4]);
	CHECK_I(sonde_exp_tree_pick(&t, "rank=2", want), -1);
	CHECK_I(sonde_exp_tree_pick(&t, "rank=", want), -1);
	CHECK_I(sonde_exp_tree_pick(&t, "rank=-1", want), -1);
	CHECK_I(sonde_exp_tree_pick(&t, "rank=1-0", want), -1);
	CHECK_I(sonde_exp_tree_pick(&t, "rank=x", want), -1);
	sonde_exp_tree_release(&t);
	CHECK_I(t.n, 0);

	/* a reader that knows only the descendants' kind: the ranks' own
	 * experiments are nothing to it */
	CHECK_I(open_tree(&t, "two.er", desc, 1), 0);
	CHECK_I(t.n, 3);
	CHECK(t.n == 3 && !strcmp(t.names[1], "two.er/M_r1_f1.er") && !strcmp(t.names[2], "two.er/_f1.er"));
	sonde_exp_tree_release(&t);

	/* a sub-experiment given by itself is read alone; so is a founder
	 * with SONDE_TREE_ALONE */
	CHECK_I(open_tree(&t, "two.er/M_r1.er/", NULL, 0), 0);
	CHECK(t.n == 1 && t.node[0].kind == rank && t.node[0].rank == 1);
	sonde_exp_tree_release(&t);
	sonde_exp_tree_init(&t);
	CHECK_I(sonde_exp_tree_add(&t, founder, SONDE_TREE_ALONE, say, NULL), 0);
	CHECK_I(t.n, 1);
	sonde_exp_tree_release(&t);

	/* a founder that cannot be opened: said, nothing added */
	CHECK_I(open_tree(&t, "none.er", NULL, 0), -1);
	CHECK_I(t.n, 0);
	CHECK(strstr(said, "none.er") != NULL);
	sonde_exp_tree_release(&t);
}

/* A rank whose MPI says another rank (a program built with the other MPI
 * than its mpirun's: every process a singleton rank 0): read as named,
 * with a warning naming it. */
static void test_rank_mismatch(void)
{
	struct sonde_exp_tree t;

	group = "rank mismatch";
	member_founder = "mix.er";
	if (write_member_mpi(NULL, 300, 1, NULL) < 0 ||
	    write_member_mpi("M_r0.er", 301, 1,
			     "<mpirank rank=\"0\" size=\"2\"/>\n<trace kind=\"mpi\" name=\"rank\" value=\"0\"/>\n"
			     "<trace kind=\"mpi\" name=\"size\" value=\"1\"/>\n") < 0 ||
	    write_member_mpi("M_r1.er", 302, 1,
			     "<mpirank rank=\"1\" size=\"2\"/>\n<trace kind=\"mpi\" rank=\"0\"/>\n"
			     "<trace kind=\"mpi\" size=\"1\"/>\n") < 0) {
		CHECK(!"the experiments are written");
		return;
	}
	CHECK_I(open_tree(&t, "mix.er", NULL, 0), 0);
	CHECK_I(t.n, 3);
	CHECK_S(said, "warning: 'mix.er/M_r0.er': MPI_Comm_size gave 1 ranks, the launcher started 2 (a program "
		      "built with another MPI than its mpirun's? each process is then rank 0 of its own)\n"
		      "warning: 'mix.er/M_r1.er': MPI_Comm_rank gave rank 0, the launcher rank 1 (a program built "
		      "with another MPI than its mpirun's? each process is then rank 0 of its own)\n");
	CHECK(t.n == 3 && t.node[2].rank == 1);
	sonde_exp_tree_release(&t);
}

/* ---- error codes ------------------------------------------------------------------------ */

static void test_error_codes(const struct sonde_exp *e)
{
	int nm;
	struct sonde_model *m = sonde_model_new(sonde_profile_metrics(&nm), 2); /* totalcpu, samples */
	uint32_t obj = sonde_model_object(m, "/opt/prog");
	uint32_t fn = sonde_model_func(m, obj, 0x1000, "main", "main", "main", false);
	const int64_t v[2] = { 1000, 1 };
	struct sonde_view_opts o;
	char err[512];
	FILE *f;

	group = "error codes";
	CHECK(sonde_model_add(m, &fn, 1, v) == 0);
	CHECK(sonde_model_finish(m) == 0);
	sonde_view_opts_init(&o);
	f = out_open();
	CHECK_I(sonde_view_functions(f, m, &o, err, sizeof(err)), 0);
	out_close(f);

	CHECK(sonde_mspec_parse(&o.metrics, "e.sync:name", err, sizeof(err)) == 0);
	f = out_open();
	CHECK_I(sonde_view_functions(f, m, &o, err, sizeof(err)), -SONDE_ERR_NOT_RECORDED);
	CHECK_S(err, "metric 'sync' is not recorded in this experiment");
	CHECK_I(sonde_view_calltree(f, m, &o, err, sizeof(err)), -SONDE_ERR_NOT_RECORDED);
	CHECK_I(sonde_view_callers_callees(f, m, &o, UINT32_MAX, err, sizeof(err)), -SONDE_ERR_NOT_RECORDED);
	CHECK_I(sonde_view_fsingle(f, m, &o, fn, err, sizeof(err)), -SONDE_ERR_NOT_RECORDED);
	sonde_view_opts_init(&o);
	CHECK(sonde_sort_parse(&o.sort, "i.sync", err, sizeof(err)) == 0);
	CHECK_I(sonde_view_objects(f, m, &o, err, sizeof(err)), -SONDE_ERR_NOT_RECORDED);
	CHECK_S(err, "sort metric 'sync' is not recorded in this experiment");
	out_close(f);
	sonde_model_free(m);

	/* -source of a name that is no function or file with data */
	struct sonde_profile prof;
	const struct sonde_exp *one[1] = { e };

	CHECK(sonde_profile_build(&prof, one, 1, NULL, err, sizeof(err)) == 0);
	sonde_view_opts_init(&o);
	f = out_open();
	CHECK_I(sonde_view_source(f, &prof, &o, UINT32_MAX, "nosuch.c", err, sizeof(err)), -SONDE_ERR_NO_MATCH);
	CHECK_S(err, "no function or source file 'nosuch.c' with data (see -functions, -lines)");
	CHECK_I(sonde_view_lines(f, &prof, &o, err, sizeof(err)), 0);
	out_close(f);
	sonde_profile_release(&prof);
}

/* ---- many load objects ----------------------------------------------------------------- */

static double thread_cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/*
 * A map.xml of 60000 objects of as many files, none of which can be read,
 * all inside one object as large as the address space, and 60000 unloads
 * of objects never loaded (what a corrupted or crafted map.xml can hold).
 * The reader searched the objects back for each unload and paired each
 * object with every earlier one that overlapped it (the mapping epochs),
 * the object lookup walked back over them all, and -header compared each
 * object with those before it and each symbol problem with every earlier
 * one: n^2 each, 42 s of CPU in all (-header 24 s, the lookups 4.5 s).
 * Each must stay within 2 s of this thread's CPU time (0.15 s in all now).
 */
static void test_many_objects(void)
{
	enum { N = 60000 };
	char dir[4200], err[512], path[64];
	struct sonde_expw *w;

	group = "many load objects";
	snprintf(dir, sizeof(dir), "%s/many.er", tmpdir);
	if (!(w = sonde_expw_create(dir, err, sizeof(err)))) {
		printf("not ok - %s: %s\n", group, err);
		nfail++;
		return;
	}
	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_object(w, 1, "/nonexistent/all.so", 0, 0x1000, UINT64_MAX - 0xfff, T0);
	for (uint32_t i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "/nonexistent/lib%u.so", i);
		sonde_expw_object(w, 2 + i, path, 0x100000000 + 0x10000ull * i, 0x100000000 + 0x10000ull * i,
				  0x100000000 + 0x10000ull * i + 0x1000, T0 + 1 + i);
	}
	for (uint32_t i = 0; i < N; i++)
		sonde_expw_unload(w, 100000 + i, T0 + 2 * N);
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("not ok - %s: %s\n", group, err);
		nfail++;
		return;
	}
	double t0 = thread_cpu_s();
	struct sonde_exp *e = open_exp(dir);
	double secs = thread_cpu_s() - t0;

	CHECK(e);
	if (!e)
		return;
	if (secs >= 2.0)
		printf("# opening took %.1f s of CPU\n", secs);
	CHECK(secs < 2.0);
	size_t n;

	sonde_exp_objects(e, &n);
	CHECK_U(n, N + 1);
	/* every object shares addresses with another file: a cut at each load */
	CHECK_U(sonde_exp_map_epochs(e), N + 2);
	const struct sonde_object *o = sonde_exp_find_object(e, 0x100000000 + 0x10000ull * 1234 + 5, T0 + 2 * N);

	CHECK(o && !strcmp(o->path, "/nonexistent/lib1234.so"));
	o = sonde_exp_find_object(e, 0x100000000 + 0x10000ull * 1234 + 0x2000, T0 + 2 * N);
	CHECK(o && !strcmp(o->path, "/nonexistent/all.so"));
	t0 = thread_cpu_s();
	for (uint32_t i = 0; i < N; i++)
		if (!(o = sonde_exp_find_object(e, 0x100000000 + 0x10000ull * i + 0x800, SONDE_TIME_NEVER)) ||
		    o->lo != 0x100000000 + 0x10000ull * i)
			break;
	secs = thread_cpu_s() - t0;
	CHECK(o && o->lo == 0x100000000 + 0x10000ull * (N - 1));
	if (secs >= 2.0)
		printf("# %u lookups took %.1f s of CPU\n", N, secs);
	CHECK(secs < 2.0);

	const struct sonde_exp *one[1] = { e };
	struct sonde_view_opts vo;
	FILE *f = out_open();

	sonde_view_opts_init(&vo);
	t0 = thread_cpu_s();
	sonde_view_header(f, one, 1, &vo);
	secs = thread_cpu_s() - t0;
	const char *txt = out_close(f);

	CHECK(txt && strstr(txt, "Load objects:      60001 files: 60001 missing\n"));
	if (secs >= 2.0)
		printf("# -header took %.1f s of CPU\n", secs);
	CHECK(secs < 2.0);
	sonde_exp_close(e);
}

int main(void)
{
	struct sonde_exp *fe, *ce;

	show = getenv("SONDE_TEST_SHOW") != NULL;
	setenv("TZ", "UTC", 1);
	tzset();
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (write_exps() < 0 || !(fe = open_exp(founder)) || !(ce = open_exp(child))) {
		printf("not ok - cannot write and read the experiments\n");
		return 1;
	}
	test_header(fe);
	test_header_subexp(ce);
	test_dump(fe);
	test_processes();
	test_tree_kinds();
	test_rank_mismatch();
	test_error_codes(fe);
	test_many_objects();
	sonde_exp_close(fe);
	sonde_exp_close(ce);
	free(outbuf);
	if (!getenv("SONDE_TEST_KEEP")) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
