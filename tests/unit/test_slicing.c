/*
 * test_slicing: the CPU, time and call-path filters of the profile builder
 * (lib/model/profile.c), its per-CPU and per-second totals, the inverted
 * call tree (lib/model/metrics.c) and their views (lib/views/view_index.c),
 * checked exactly on a synthetic experiment (lib/reader/expwriter.h) whose
 * truth is known: the worked example's call stacks (main 32 = 2 + A 10 +
 * B 20; C 25 = A 10 + B 15; F calls G 4 times) as one-second samples, the
 * k-th at k + 0.5 s after the start on CPU k % 3, the stacks through B on
 * thread 101, the others on 100.  Its map.xml names this program, so the
 * symbols are the functions A, B, C, ... below.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "selfexe.h"
#include "reader/expwriter.h"
#include "model/filter.h"
#include "model/metrics.h"
#include "model/profile.h"
#include "views/view.h"

enum { F_MAIN, F_A, F_B, F_C, F_E, F_F, F_G, NF };
static const char *const fname[NF] = { "main", "A", "B", "C", "E", "F", "G" };

static volatile int sink;
#define FN(n)                                                                            \
	__attribute__((noinline, used)) void n(void);                                    \
	__attribute__((noinline, used)) void n(void)                                     \
	{                                                                                \
		sink = __LINE__;                                                         \
		__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory"); \
	}
FN(A)
FN(B)
FN(C)
FN(E)
FN(F)
FN(G)

struct stk {
	int depth;
	int f[8]; /* leaf first */
	int units; /* samples of 1 s */
};

static const struct stk worked[] = {
	{ 1, { F_MAIN }, 2 },
	{ 3, { F_C, F_A, F_MAIN }, 2 },
	{ 4, { F_E, F_C, F_A, F_MAIN }, 4 },
	{ 4, { F_F, F_C, F_A, F_MAIN }, 2 },
	{ 5, { F_G, F_F, F_C, F_A, F_MAIN }, 2 },
	{ 2, { F_B, F_MAIN }, 5 },
	{ 3, { F_C, F_B, F_MAIN }, 3 },
	{ 4, { F_E, F_C, F_B, F_MAIN }, 6 },
	{ 4, { F_F, F_C, F_B, F_MAIN }, 4 },
	{ 5, { F_G, F_F, F_C, F_B, F_MAIN }, 2 },
};
#define NW (sizeof(worked) / sizeof(worked[0]))
#define SEC 1000000000ll
#define T0 1000000000ull


int main(void);

static uint64_t faddr(int f)
{
	static void (*const fp[NF])(void) = { NULL, A, B, C, E, F, G };

	return f == F_MAIN ? (uint64_t)(uintptr_t)&main : (uint64_t)(uintptr_t)fp[f];
}

/* The experiment described at the top, into dir; 0 or -1 (said). */
static int write_exp(const char *dir)
{
	char err[512];
	struct sonde_expw *w = sonde_expw_create(dir, err, sizeof(err));
	unsigned k = 0;

	if (!w) {
		printf("# %s\n", err);
		return -1;
	}
	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_log(w, "<event kind=\"thread_start\" time_ns=\"%llu\" tid=\"101\"/>\n", (unsigned long long)T0);
	sonde_expw_map(w,
		       "<object id=\"1\" time_ns=\"%llu\" event=\"load\" path=\"%s\" base=\"0x%llx\" "
		       "lo=\"0x%llx\" hi=\"0x%llx\" buildid=\"%s\"/>\n",
		       (unsigned long long)T0, exe, (unsigned long long)exe_base, (unsigned long long)exe_lo,
		       (unsigned long long)exe_hi, exe_buildid);
	for (size_t i = 0; i < NW; i++) {
		uint64_t pc[8];
		bool via_b = false;

		for (int d = 0; d < worked[i].depth; d++) {
			uint64_t a = faddr(worked[i].f[d]);

			via_b |= worked[i].f[d] == F_B;
			pc[d] = d == 0 ? (a + 4) | SONDE_PC_EXACT : a + 8;
		}
		sonde_expw_stack(w, i + 1, 0, (uint16_t)worked[i].depth, pc);
		for (int u = 0; u < worked[i].units; u++, k++)
			sonde_expw_sample(w, via_b ? 101 : 100, (uint16_t)(k % 3), T0 + k * (uint64_t)SEC + SEC / 2,
					  (uint64_t)SEC, i + 1);
	}
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n",
		       (unsigned long long)(T0 + (k + 1) * (uint64_t)SEC));
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return -1;
	}
	return 0;
}

static const struct sonde_exp *one[1];

/* Builds p with the options; 0, or -1 with the message in err. */
static int build(struct sonde_profile *p, const struct sonde_profile_opts *o, char *err, size_t errlen)
{
	return sonde_profile_build(p, one, 1, o, err, errlen);
}

static uint32_t func_of(const struct sonde_model *m, const char *name)
{
	for (size_t f = 0; f < sonde_model_nfuncs(m); f++)
		if (!strcmp(sonde_model_funcinfo(m, (uint32_t)f)->name_short, name))
			return (uint32_t)f;
	return UINT32_MAX;
}

/* Inclusive seconds of function name in an unfiltered model. */
static int64_t incl_s(const struct sonde_model *m, const char *name)
{
	uint32_t f = func_of(m, name);

	return f == UINT32_MAX ? -1 : sonde_model_incl(m, f)[SONDE_M_TOTALCPU] / SEC;
}

/* <Total> seconds of the profile with a call-path filter; -1 when it
 * does not build. */
static int64_t callpath_total(const char *spec)
{
	struct sonde_profile p;
	struct sonde_profile_opts o = { .callpath_select = spec };
	char err[256];

	if (build(&p, &o, err, sizeof err) < 0)
		return -1;
	int64_t t = sonde_model_total(p.model)[SONDE_M_TOTALCPU] / SEC;

	sonde_profile_release(&p);
	return t;
}

static void test_parsers(void)
{
	uint8_t sel[SONDE_CPU_SEL_BYTES];
	char err[256];
	struct sonde_callpath_term t[SONDE_CALLPATH_MAX];
	size_t n;
	char *buf;

	group = "parsers";
	CHECK(sonde_parse_cpu_list("0,2-3", sel, err, sizeof err) == 0);
	CHECK(sel[0] == 0x0d);
	CHECK(sonde_parse_cpu_list("all", sel, err, sizeof err) == 0 && sel[100] == 0xff);
	const char *bad[] = { "x", "5-1", "1,", "-1", "", "1-", "65535", "1,,2", "2 " };

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		CHECK(sonde_parse_cpu_list(bad[i], sel, err, sizeof err) < 0 && strstr(err, bad[i]));
	}
	CHECK(sonde_callpath_parse("A>B,spin", t, &n, &buf, err, sizeof err) == 0);
	CHECK_I(n, 2);
	CHECK_S(t[0].caller, "A");
	CHECK_S(t[0].func, "B");
	CHECK(!t[1].caller);
	CHECK_S(t[1].func, "spin");
	free(buf);
	/* template arguments keep their ',' and '>' */
	CHECK(sonde_callpath_parse("std::map<int, std::vector<int>>::at>f", t, &n, &buf, err, sizeof err) == 0);
	CHECK_I(n, 1);
	CHECK_S(t[0].caller, "std::map<int, std::vector<int>>::at");
	CHECK_S(t[0].func, "f");
	free(buf);
	CHECK(sonde_callpath_parse("all", t, &n, &buf, err, sizeof err) == 0 && n == 0 && !buf);
	const char *badp[] = { "", "A>B>C", ">B", "A>", "A,,B", "A," };

	for (size_t i = 0; i < sizeof badp / sizeof badp[0]; i++) {
		buf = NULL;
		CHECK(sonde_callpath_parse(badp[i], t, &n, &buf, err, sizeof err) < 0 && !buf);
	}
}

static void test_callpath(const struct sonde_model *all)
{
	group = "callpath";
	/* FUNC keeps exactly the events under FUNC: its inclusive time */
	for (int f = 0; f < NF; f++)
		CHECK_I(callpath_total(fname[f]), incl_s(all, fname[f]));
	CHECK_I(callpath_total("A>C"), 10);
	CHECK_I(callpath_total("B>C"), 15);
	CHECK_I(callpath_total("C>A"), 0);
	CHECK_I(callpath_total("F>G"), 4);
	CHECK_I(callpath_total("main>C"), 0); /* main never calls C directly */
	CHECK_I(callpath_total("A,B"), 30);
	CHECK_I(callpath_total("E,F"), 10 + 10);
	CHECK_I(callpath_total("all"), 32);
	CHECK_I(callpath_total("nosuch"), -1);
	CHECK_I(callpath_total("A>nosuch"), -1);

	struct sonde_profile p;
	struct sonde_profile_opts o = { .callpath_select = "A>C" };
	char err[256];

	CHECK(build(&p, &o, err, sizeof err) == 0);
	const struct sonde_model *m = p.model;
	/* callers-callees under the filter: only C's calls from A */
	CHECK_I(sonde_model_incl(m, func_of(m, "C"))[SONDE_M_TOTALCPU] / SEC, 10);
	CHECK(func_of(m, "B") == UINT32_MAX || sonde_model_incl(m, func_of(m, "B"))[SONDE_M_TOTALCPU] == 0);
	CHECK_I(p.samples_used, 10);
	CHECK_I(p.samples_filtered, 22);
	sonde_profile_release(&p);
	err[0] = '\0';
	o.callpath_select = "nosuch";
	CHECK(build(&p, &o, err, sizeof err) < 0 && strstr(err, "'nosuch'"));
}

static void test_cpus(void)
{
	struct sonde_profile p;
	struct sonde_profile_opts o = { .index_cpus = true, .cpu_select = "1" };
	char err[256];

	group = "cpus";
	CHECK(build(&p, &o, err, sizeof err) == 0);
	CHECK_I(p.ncpus, 3);
	/* sample k on CPU k % 3: 32 samples, 11 on CPU 0 and 1, 10 on 2 */
	for (size_t i = 0; i < p.ncpus && i < 3; i++) {
		CHECK_I(p.cpus[i].cpu, i);
		CHECK_I(p.cpus[i].v[SONDE_M_SAMPLES], i < 2 ? 11 : 10);
		CHECK(p.cpus[i].selected == (i == 1));
	}
	CHECK_I(sonde_model_total(p.model)[SONDE_M_SAMPLES], 11);

	/* the view: the selected CPU only, its share of <Total> */
	struct sonde_view_opts vo;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	sonde_view_opts_init(&vo);
	vo.mode = SONDE_PM_CSV;
	CHECK(sonde_mspec_parse(&vo.metrics, "e.totalcpu:e.samples", err, sizeof err) == 0);
	CHECK(sonde_view_cpus(f, &p, &vo, err, sizeof err) == 0);
	fclose(f);
	CHECK_S(out, "cpu,name,totalcpu,samples\n,<Total>,11000000000,11\n1,CPU 1,11000000000,11\n");
	free(out);
	sonde_profile_release(&p);

	/* CPUs with the time and thread filters: only the events they keep */
	o = (struct sonde_profile_opts){ .index_cpus = true, .cpu_select = "0,2", .thread_select = "2",
					 .start_ns = 12 * SEC };
	CHECK(build(&p, &o, err, sizeof err) == 0);
	/* thread 101 (the B side) has samples 12 .. 31; 12..31 % 3 */
	int64_t want[3] = { 0 };

	for (int k = 12; k < 32; k++)
		want[k % 3]++;
	for (size_t i = 0; i < p.ncpus && i < 3; i++)
		CHECK_I(p.cpus[i].v[SONDE_M_SAMPLES], want[i]);
	CHECK_I(sonde_model_total(p.model)[SONDE_M_SAMPLES], want[0] + want[2]);
	sonde_profile_release(&p);
}

static void test_seconds(void)
{
	struct sonde_profile p;
	struct sonde_profile_opts o = { .index_seconds = true, .start_ns = 10 * SEC, .end_ns = 20 * SEC,
					.cpu_select = "0-1" };
	char err[256];

	group = "seconds";
	CHECK(build(&p, &o, err, sizeof err) == 0);
	/* seconds 10 .. 19, those whose sample ran on CPU 0 or 1 */
	size_t n = 0;

	for (int k = 10; k < 20; k++)
		if (k % 3 != 2) {
			CHECK(n < p.nseconds && p.seconds[n].second == (uint32_t)k &&
			      p.seconds[n].v[SONDE_M_TOTALCPU] == SEC);
			n++;
		}
	CHECK_I(p.nseconds, n);

	struct sonde_view_opts vo;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	sonde_view_opts_init(&vo);
	vo.mode = SONDE_PM_CSV;
	CHECK(sonde_sort_parse(&vo.sort, "name", err, sizeof err) == 0);
	vo.limit = 2;
	CHECK(sonde_view_seconds(f, &p, &vo, err, sizeof err) == 0);
	fclose(f);
	CHECK_S(out, "second,name,totalcpu,%totalcpu\n,<Total>,7000000000,100\n10,Second of execution "
		     "10,1000000000,14.285714285714286\n12,Second of execution 12,1000000000,14.285714285714286\n");
	free(out);
	sonde_profile_release(&p);
}

static void test_inverted(const struct sonde_model *m)
{
	struct sonde_tnode *nodes;
	size_t n;
	uint32_t root;
	int nm = sonde_model_nmetrics(m);

	group = "inverted";
	CHECK(sonde_model_tree_inverted(m, &nodes, &n, &root) == 0);
	/* the roots are the leaf functions, with their exclusive metrics */
	size_t nroots = 0, nleaves = 0;
	int64_t excl_sum = 0;

	for (uint32_t r = root; r != UINT32_MAX; r = nodes[r].next_sibling) {
		nroots++;
		CHECK(nodes[r].parent == -1);
		for (int k = 0; k < nm; k++)
			CHECK_I(nodes[r].incl[k], sonde_model_excl(m, nodes[r].func)[k]);
	}
	for (size_t f = 0; f < sonde_model_nfuncs(m); f++)
		nleaves += sonde_model_excl(m, (uint32_t)f)[SONDE_M_SAMPLES] != 0;
	CHECK_I(nroots, nleaves);
	/* a node's children split its value; the outermost frames end the stacks */
	for (size_t i = 0; i < n; i++) {
		int64_t kids = 0;

		for (uint32_t c = nodes[i].first_child; c != UINT32_MAX; c = nodes[c].next_sibling)
			kids += nodes[c].incl[SONDE_M_TOTALCPU];
		CHECK_I(nodes[i].incl[SONDE_M_TOTALCPU], kids + nodes[i].excl[SONDE_M_TOTALCPU]);
		excl_sum += nodes[i].excl[SONDE_M_TOTALCPU];
		if (nodes[i].excl[SONDE_M_TOTALCPU])
			CHECK(nodes[i].func == func_of(m, "main"));
	}
	CHECK_I(excl_sum, sonde_model_total(m)[SONDE_M_TOTALCPU]);
	/* C's callers: A 2, B 3 */
	for (uint32_t r = root; r != UINT32_MAX; r = nodes[r].next_sibling) {
		if (nodes[r].func != func_of(m, "C"))
			continue;
		for (uint32_t c = nodes[r].first_child; c != UINT32_MAX; c = nodes[c].next_sibling)
			CHECK_I(nodes[c].incl[SONDE_M_TOTALCPU] / SEC, nodes[c].func == func_of(m, "A") ? 2 : 3);
	}
	free(nodes);
}

/* The one parser of the slicing filters (lib/model/filter.h) that sonde
 * print, export and report share: each filter's value into the profile's
 * options, "all" for none, the messages of bad values. */
static void test_filter_parser(void)
{
	struct sonde_profile_opts po = { 0 };
	char err[256];

	group = "filter parser";
	CHECK_I(sonde_filter_parse(&po, "thread_select", "1,3-5", err, sizeof err), 1);
	CHECK_S(po.thread_select, "1,3-5");
	CHECK_I(sonde_filter_parse(&po, "object_select", "libc.so.6,burn", err, sizeof err), 1);
	CHECK_S(po.object_select, "libc.so.6,burn");
	CHECK_I(sonde_filter_parse(&po, "sample_select", "2", err, sizeof err), 1);
	CHECK_S(po.sample_select, "2");
	CHECK_I(sonde_filter_parse(&po, "cpu_select", "0,2-3", err, sizeof err), 1);
	CHECK_S(po.cpu_select, "0,2-3");
	CHECK_I(sonde_filter_parse(&po, "callpath_select", "A>B,spin", err, sizeof err), 1);
	CHECK_S(po.callpath_select, "A>B,spin");
	CHECK_I(sonde_filter_parse(&po, "time", "0.5-1.25", err, sizeof err), 1);
	CHECK_U(po.start_ns, 500000000);
	CHECK_U(po.end_ns, 1250000000);
	CHECK_I(sonde_filter_parse(&po, "time_select", "2-", err, sizeof err), 1); /* the alias */
	CHECK(po.start_ns == 2 * SEC && po.end_ns == 0);
	CHECK_I(sonde_filter_parse(&po, "time", "all", err, sizeof err), 1);
	CHECK(po.start_ns == 0 && po.end_ns == 0);
	CHECK_I(sonde_filter_parse(&po, "inlines", "off", err, sizeof err), 1);
	CHECK_I(sonde_filter_parse(&po, "tailcalls", "off", err, sizeof err), 1);
	CHECK(po.no_inlines && po.no_tailcalls);
	CHECK_I(sonde_filter_parse(&po, "inlines", "on", err, sizeof err), 1);
	CHECK(!po.no_inlines && po.no_tailcalls);
	/* not a filter: nothing set */
	CHECK_I(sonde_filter_parse(&po, "metric", "totalcpu", err, sizeof err), 0);
	CHECK_I(sonde_filter_parse(&po, "lwp_select", "1", err, sizeof err), 0);
	CHECK(sonde_filter_find("time_select") == sonde_filter_find("time"));
	CHECK(!sonde_filter_find("experiment_select"));
	/* bad values: -1, a message, the options as they were */
	struct {
		const char *name, *value, *msg;
	} bad[] = {
		{ "thread_select", "0", "invalid list '0'" },
		{ "object_select", "", "-object_select needs a non-empty argument" },
		{ "sample_select", "x", "invalid sample list 'x'" },
		{ "cpu_select", "x", "'x' is not 'all' or a list of CPU numbers" },
		{ "callpath_select", "A>", "'A>' is not 'all'" },
		{ "time", "5-1", "time range '5-1' ends before it starts" },
		{ "tailcalls", "maybe", "'maybe' is not on or off" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct sonde_profile_opts before = po;

		err[0] = '\0';
		CHECK_I(sonde_filter_parse(&po, bad[i].name, bad[i].value, err, sizeof err), -1);
		CHECK(!strncmp(err, bad[i].msg, strlen(bad[i].msg)));
		CHECK(!memcmp(&before, &po, sizeof po));
	}
	/* every row is found by its name */
	for (size_t i = 0; i < sonde_nfilters; i++)
		CHECK(sonde_filter_find(sonde_filters[i].name) == &sonde_filters[i]);
}

int main(void)
{
	char dir[] = "/tmp/sonde-test-slicing.XXXXXX", path[200], err[512];

	if (find_exe() < 0 || !mkdtemp(dir)) {
		printf("not ok - setup\n");
		return 1;
	}
	snprintf(path, sizeof path, "%s/w.er", dir);
	test_parsers();
	test_filter_parser();
	struct sonde_exp *e = write_exp(path) == 0 ? sonde_exp_open(path, err, sizeof err) : NULL;

	group = "setup";
	CHECK(e != NULL);
	if (e) {
		struct sonde_profile all;

		one[0] = e;
		CHECK(build(&all, NULL, err, sizeof err) == 0);
		CHECK_I(sonde_model_total(all.model)[SONDE_M_TOTALCPU] / SEC, 32);
		CHECK_I(incl_s(all.model, "A"), 10);
		test_callpath(all.model);
		test_cpus();
		test_seconds();
		test_inverted(all.model);
		sonde_profile_release(&all);
		sonde_exp_close(e);
	}
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	if (system(path) != 0)
		printf("# could not remove %s\n", dir);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
