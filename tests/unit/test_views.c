/*
 * test_views: the er_print views (lib/views/view.c) and the command language's
 * parsers (lib/views/view_spec.c), checked exactly on call stacks whose metrics
 * are known:
 *
 *   - the worked example of metrics-and-program-structure.txt (main 32 =
 *     2 + A 10 + B 20; C 25 = A 10 + B 15 = 5 + E 10 + F 10; E exclusive
 *     = inclusive; F calls G);
 *   - direct recursion with all the work in the deepest call;
 *   - mutual recursion A -> B -> A;
 *   - one function in two non-adjacent places of a stack;
 *
 * first on models built with lib/model/metrics.h directly (every view in text
 * and in json, and the numbers through the model's API), then end to end:
 * the same stacks written as synthetic experiments (lib/reader/expwriter.h) whose
 * map.xml names this test program, so that lib/symbols/symbols.c finds the real
 * functions A, B, C, ... defined below, read back through lib/model/profile.c.
 *
 * `test_views --write DIR [COPY]` only writes those experiments into DIR
 * (for tests/t20-print-views.sh): worked.er, recursion.er, mutual.er,
 * nonadjacent.er, worked2.er (E twice as slow, no G) and, given COPY (a
 * copy of this program), ambiguous.er (see write_all()).
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 * SONDE_TEST_SHOW=1 prints every view checked.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "reader/expwriter.h"
#include "model/metrics.h"
#include "model/profile.h"
#include "views/view.h"
#include "views/view_table.h"

/* A model of every metric an experiment can give. */
static struct sonde_model *model_all(void)
{
	int n;
	const struct sonde_metric_def *d = sonde_profile_metrics(&n);

	return sonde_model_new(d, n);
}

int main(int argc, char **argv);

static bool show;


/* Checks that text equals want; on failure shows both. */
#define CHECK_TEXT(got, want) check_text(got, want, __LINE__)
static void check_text(const char *got, const char *want, int line)
{
	if (got && !strcmp(got, want)) {
		npass++;
		return;
	}
	nfail++;
	printf("not ok - %s: line %d: text differs\n# --- want:\n%s# --- got:\n%s# ---\n", group,
	       line, want, got ? got : "(null)\n");
}

/* Checks that text contains every string given (NULL-terminated). */
#define CHECK_HAS(got, ...) check_has(got, __LINE__, __VA_ARGS__, (const char *)NULL)
static void check_has(const char *got, int line, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, line);
	while ((s = va_arg(ap, const char *))) {
		if (got && strstr(got, s)) {
			npass++;
			continue;
		}
		nfail++;
		printf("not ok - %s: line %d: output lacks '%s'\n# --- got:\n%s# ---\n", group, line, s,
		       got ? got : "(null)\n");
	}
	va_end(ap);
}

/* ---- the synthetic programs ------------------------------------------------- */

/*
 * Functions of the programs, by index.  The end-to-end tests give their
 * addresses in this very program, so these must be real, distinct
 * functions with these symbol names.
 */
enum { F_MAIN, F_A, F_B, F_C, F_E, F_F, F_G, F_R, F_X, F_Y, F_Z, NF };
static const char *const fname[NF] = { "main", "A", "B", "C", "E", "F", "G", "R", "X", "Y", "Z" };

static volatile int sink;
#define FN(n)                                                                                    \
	__attribute__((noinline, used)) void n(void);                                   \
	__attribute__((noinline, used)) void n(void)                                    \
	{                                                                                        \
		sink = __LINE__;                                                                 \
		__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");         \
	}
FN(A)
FN(B)
FN(C)
FN(E)
FN(F)
FN(G)
FN(R)
FN(X)
FN(Y)
FN(Z)

struct stk {
	int depth;
	int f[8]; /* leaf first */
	int units; /* 1 unit = 1 s of CPU time, 1 sample */
};

/* The reference's worked example (main 32 = 2 + A 10 + B 20). */
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

/* Direct recursion, all the work in the deepest call: main -> R -> R -> R. */
static const struct stk recursion[] = {
	{ 4, { F_R, F_R, F_R, F_MAIN }, 10 },
};

/* Mutual recursion: main -> A -> B -> A -> B. */
static const struct stk mutual[] = {
	{ 5, { F_B, F_A, F_B, F_A, F_MAIN }, 10 },
	{ 4, { F_A, F_B, F_A, F_MAIN }, 5 },
};

/* X in two non-adjacent places: main -> X -> Y -> X -> Z. */
static const struct stk nonadjacent[] = {
	{ 5, { F_Z, F_X, F_Y, F_X, F_MAIN }, 8 },
	{ 3, { F_Y, F_X, F_MAIN }, 4 },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SEC 1000000000ll

/* A model of the stacks, functions named as above in object prog_path
 * (G in lib_path, to have two objects). */
static struct sonde_model *model_in(const struct stk *s, size_t n, uint32_t *ids,
				    const char *prog_path, const char *lib_path)
{
	struct sonde_model *m = model_all();
	uint32_t prog = sonde_model_object(m, prog_path), lib = sonde_model_object(m, lib_path);

	for (int i = 0; i < NF; i++)
		ids[i] = sonde_model_func(m, i == F_G ? lib : prog, 0x1000 + 0x100 * (uint64_t)i, fname[i],
					  fname[i], fname[i], false);
	for (size_t i = 0; i < n; i++) {
		uint32_t fr[8];
		int64_t v[SONDE_MAX_METRICS] = { s[i].units * SEC, s[i].units };

		for (int k = 0; k < s[i].depth; k++)
			fr[k] = ids[s[i].f[k]];
		CHECK(sonde_model_add(m, fr, s[i].depth, v) == 0);
	}
	CHECK(sonde_model_finish(m) == 0);
	return m;
}

/* In /opt/prog, G in /lib/libg.so. */
static struct sonde_model *model_of(const struct stk *s, size_t n, uint32_t *ids)
{
	return model_in(s, n, ids, "/opt/prog", "/lib/libg.so");
}

/* ---- capturing output ------------------------------------------------------------ */

static char *outbuf;
static size_t outlen;

static FILE *out_open(void)
{
	free(outbuf);
	outbuf = NULL;
	return open_memstream(&outbuf, &outlen);
}

static const char *out_close(FILE *f, int rc, const char *err)
{
	fclose(f);
	if (rc) {
		printf("# view failed: %s\n", err);
		nfail++;
	}
	if (show)
		printf("# --- %s:\n%s", group, outbuf);
	return outbuf;
}

enum view { V_FUNCTIONS, V_OBJECTS, V_CC, V_CSINGLE, V_FSINGLE, V_CALLTREE, V_METRIC_LIST };

/* Runs a view in a mode; func for fsingle/csingle. */
static const char *view(const struct sonde_model *m, enum view v, struct sonde_view_opts *o,
			enum sonde_printmode mode, uint32_t func)
{
	char err[256] = "";
	FILE *f = out_open();
	int rc = -1;

	o->mode = mode;
	switch (v) {
	case V_FUNCTIONS:
		rc = sonde_view_functions(f, m, o, err, sizeof(err));
		break;
	case V_OBJECTS:
		rc = sonde_view_objects(f, m, o, err, sizeof(err));
		break;
	case V_CC:
		rc = sonde_view_callers_callees(f, m, o, UINT32_MAX, err, sizeof(err));
		break;
	case V_CSINGLE:
		rc = sonde_view_callers_callees(f, m, o, func, err, sizeof(err));
		break;
	case V_FSINGLE:
		rc = sonde_view_fsingle(f, m, o, func, err, sizeof(err));
		break;
	case V_CALLTREE:
		rc = sonde_view_calltree(f, m, o, err, sizeof(err));
		break;
	case V_METRIC_LIST:
		rc = sonde_view_metric_list(f, m, o, err, sizeof(err));
		break;
	}
	o->mode = SONDE_PM_TEXT;
	return out_close(f, rc, err);
}

/* The attributed value of edge func in a callers or callees list (-1: none). */
static int64_t edge(const struct sonde_edge *e, size_t n, uint32_t func, int metric)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].func == func)
			return e[i].v[metric];
	return -1;
}

static int64_t callers_of(const struct sonde_model *m, uint32_t f, uint32_t caller)
{
	size_t n;
	const struct sonde_edge *e = sonde_model_callers(m, f, &n);

	return edge(e, n, caller, SONDE_M_TOTALCPU);
}

static int64_t callees_of(const struct sonde_model *m, uint32_t f, uint32_t callee)
{
	size_t n;
	const struct sonde_edge *e = sonde_model_callees(m, f, &n);

	return edge(e, n, callee, SONDE_M_TOTALCPU);
}

static size_t ncallers(const struct sonde_model *m, uint32_t f)
{
	size_t n;

	sonde_model_callers(m, f, &n);
	return n;
}

static size_t ncallees(const struct sonde_model *m, uint32_t f)
{
	size_t n;

	sonde_model_callees(m, f, &n);
	return n;
}

#define EXCL(m, f) sonde_model_excl(m, f)[SONDE_M_TOTALCPU]
#define INCL(m, f) sonde_model_incl(m, f)[SONDE_M_TOTALCPU]

/* ---- the worked example on a model ------------------------------------------------ */

static void test_worked_model(void)
{
	uint32_t id[NF];
	struct sonde_model *m;
	struct sonde_view_opts o;
	const char *t;

	group = "worked example (model)";
	m = model_of(worked, N(worked), id);
	sonde_view_opts_init(&o);

	/* the numbers, through the model's API */
	CHECK_I(sonde_model_total(m)[SONDE_M_TOTALCPU], 32 * SEC);
	CHECK_I(sonde_model_total(m)[SONDE_M_SAMPLES], 32);
	CHECK_I(INCL(m, id[F_MAIN]), 32 * SEC);
	CHECK_I(EXCL(m, id[F_MAIN]), 2 * SEC);
	CHECK_I(callees_of(m, id[F_MAIN], id[F_A]), 10 * SEC);
	CHECK_I(callees_of(m, id[F_MAIN], id[F_B]), 20 * SEC);
	CHECK_I(EXCL(m, id[F_A]), 0);
	CHECK_I(INCL(m, id[F_A]), 10 * SEC);
	CHECK_I(INCL(m, id[F_C]), 25 * SEC);
	CHECK_I(EXCL(m, id[F_C]), 5 * SEC);
	CHECK_I(callers_of(m, id[F_C], id[F_A]), 10 * SEC);
	CHECK_I(callers_of(m, id[F_C], id[F_B]), 15 * SEC);
	CHECK_I(ncallers(m, id[F_C]), 2);
	CHECK_I(callees_of(m, id[F_C], id[F_E]), 10 * SEC);
	CHECK_I(callees_of(m, id[F_C], id[F_F]), 10 * SEC);
	CHECK_I(ncallees(m, id[F_C]), 2);
	CHECK_I(EXCL(m, id[F_E]), INCL(m, id[F_E]));
	CHECK_I(INCL(m, id[F_E]), 10 * SEC);
	CHECK_I(INCL(m, id[F_F]), 10 * SEC);
	CHECK_I(EXCL(m, id[F_F]), 6 * SEC);
	CHECK_I(callees_of(m, id[F_F], id[F_G]), 4 * SEC);
	/* the caller attributed metric of A and B is their incl - excl */
	CHECK_I(callers_of(m, id[F_C], id[F_A]), INCL(m, id[F_A]) - EXCL(m, id[F_A]));
	CHECK_I(callers_of(m, id[F_C], id[F_B]), INCL(m, id[F_B]) - EXCL(m, id[F_B]));
	/* load objects: G alone in libg.so */
	CHECK_I(sonde_model_object_excl(m, 1)[0], 4 * SEC);
	CHECK_I(sonde_model_object_incl(m, 0)[0], 32 * SEC);

	t = view(m, V_FUNCTIONS, &o, SONDE_PM_TEXT, 0);
	CHECK_TEXT(t, "Functions sorted by metric: Exclusive Total CPU Time\n"
		      "\n"
		      "Excl. Total    Incl. Total     Name\n"
		      "CPU*           CPU\n"
		      "  sec.      %    sec.      %\n"
		      "32.000 100.00  32.000 100.00   <Total>\n"
		      "10.000  31.25  10.000  31.25   E\n"
		      " 6.000  18.75  10.000  31.25   F\n"
		      " 5.000  15.62  20.000  62.50   B\n"
		      " 5.000  15.62  25.000  78.12   C\n"
		      " 4.000  12.50   4.000  12.50   G\n"
		      " 2.000   6.25  32.000 100.00   main\n"
		      " 0.      0.    10.000  31.25   A\n");
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_JSON, 0);
	CHECK_HAS(t, "{\"view\":\"functions\",\"metrics\":\"e.%totalcpu:i.%totalcpu:name\",\"sort\":\"e.totalcpu\",\"rows\":[",
		  "{\"name\":\"<Total>\",\"object\":null,\"e.totalcpu\":32000000000,\"e.%totalcpu\":100,\"i.totalcpu\":32000000000,\"i.%totalcpu\":100}",
		  "{\"name\":\"main\",\"object\":\"prog\",\"e.totalcpu\":2000000000,\"e.%totalcpu\":6.25,\"i.totalcpu\":32000000000,\"i.%totalcpu\":100}",
		  "{\"name\":\"A\",\"object\":\"prog\",\"e.totalcpu\":0,\"e.%totalcpu\":0,\"i.totalcpu\":10000000000,\"i.%totalcpu\":31.25}",
		  "{\"name\":\"C\",\"object\":\"prog\",\"e.totalcpu\":5000000000,\"e.%totalcpu\":15.625,\"i.totalcpu\":25000000000,\"i.%totalcpu\":78.125}",
		  "{\"name\":\"E\",\"object\":\"prog\",\"e.totalcpu\":10000000000,\"e.%totalcpu\":31.25,\"i.totalcpu\":10000000000,\"i.%totalcpu\":31.25}",
		  "{\"name\":\"F\",\"object\":\"prog\",\"e.totalcpu\":6000000000,\"e.%totalcpu\":18.75,\"i.totalcpu\":10000000000,\"i.%totalcpu\":31.25}",
		  "{\"name\":\"G\",\"object\":\"libg.so\",\"e.totalcpu\":4000000000,\"e.%totalcpu\":12.5,\"i.totalcpu\":4000000000,\"i.%totalcpu\":12.5}",
		  "\"i.%totalcpu\":31.25}]}\n");
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_CSV, 0);
	CHECK_HAS(t, "name,object,e.totalcpu,e.%totalcpu,i.totalcpu,i.%totalcpu\n<Total>,,32000000000,100,32000000000,100\nE,prog,10000000000,31.25,10000000000,31.25\n",
		  "\nC,prog,5000000000,15.625,25000000000,78.125\n");

	/* C: callers A 10 + B 15 = 25; itself 5, callees E 10 + F 10 */
	t = view(m, V_CSINGLE, &o, SONDE_PM_TEXT, id[F_C]);
	CHECK_TEXT(t, "Callers and callees sorted by metric: Attributed Total CPU Time\n"
		      "\n"
		      "Attr. Total    Excl. Total    Incl. Total     Name\n"
		      "CPU*           CPU            CPU\n"
		      "  sec.      %    sec.      %    sec.      %\n"
		      "15.000  60.00   5.000  15.62  20.000  62.50   B\n"
		      "10.000  40.00   0.      0.    10.000  31.25   A\n"
		      " 5.000  20.00   5.000  15.62  25.000  78.12  *C\n"
		      "10.000  40.00  10.000  31.25  10.000  31.25   E\n"
		      "10.000  40.00   6.000  18.75  10.000  31.25   F\n");
	t = view(m, V_CSINGLE, &o, SONDE_PM_JSON, id[F_C]);
	CHECK_HAS(t, "{\"view\":\"csingle\",",
		  "\"function\":{\"function\":\"C\",\"role\":\"function\",\"name\":\"C\",\"object\":\"prog\",\"a.totalcpu\":5000000000,\"a.%totalcpu\":20,\"e.totalcpu\":5000000000,",
		  "\"callers\":[{\"function\":\"C\",\"role\":\"caller\",\"name\":\"B\",\"object\":\"prog\",\"a.totalcpu\":15000000000,\"a.%totalcpu\":60,",
		  "{\"function\":\"C\",\"role\":\"caller\",\"name\":\"A\",\"object\":\"prog\",\"a.totalcpu\":10000000000,\"a.%totalcpu\":40,\"e.totalcpu\":0,",
		  "\"callees\":[{\"function\":\"C\",\"role\":\"callee\",\"name\":\"E\",\"object\":\"prog\",\"a.totalcpu\":10000000000,\"a.%totalcpu\":40,",
		  "{\"function\":\"C\",\"role\":\"callee\",\"name\":\"F\",\"object\":\"prog\",\"a.totalcpu\":10000000000,\"a.%totalcpu\":40,\"e.totalcpu\":6000000000,");

	/* main: <Total> calls it; 2 itself + A 10 + B 20 */
	t = view(m, V_CSINGLE, &o, SONDE_PM_TEXT, id[F_MAIN]);
	CHECK_TEXT(t, "Callers and callees sorted by metric: Attributed Total CPU Time\n"
		      "\n"
		      "Attr. Total    Excl. Total    Incl. Total     Name\n"
		      "CPU*           CPU            CPU\n"
		      "  sec.      %    sec.      %    sec.      %\n"
		      "32.000 100.00  32.000 100.00  32.000 100.00   <Total>\n"
		      " 2.000   6.25   2.000   6.25  32.000 100.00  *main\n"
		      "20.000  62.50   5.000  15.62  20.000  62.50   B\n"
		      "10.000  31.25   0.      0.    10.000  31.25   A\n");

	/* every block of -callers-callees, in function order, <Total> first */
	t = view(m, V_CC, &o, SONDE_PM_TEXT, 0);
	CHECK_HAS(t, "Functions sorted by metric: Exclusive Total CPU Time\nCallers and callees sorted by metric: Attributed Total CPU Time\n\n",
		  " 0.      0.    32.000 100.00  32.000 100.00  *<Total>\n"
		  "32.000 100.00   2.000   6.25  32.000 100.00   main\n\n",
		  "10.000 100.00   5.000  15.62  25.000  78.12   C\n"
		  " 6.000  60.00   6.000  18.75  10.000  31.25  *F\n"
		  " 4.000  40.00   4.000  12.50   4.000  12.50   G\n\n",
		  "10.000 100.00   2.000   6.25  32.000 100.00   main\n"
		  " 0.      0.     0.      0.    10.000  31.25  *A\n"
		  "10.000 100.00   5.000  15.62  25.000  78.12   C\n");
	CHECK(strstr(t, "*E\n") < strstr(t, "*F\n") && strstr(t, "*F\n") < strstr(t, "*B\n") &&
	      strstr(t, "*C\n") < strstr(t, "*G\n") && strstr(t, "*main\n") < strstr(t, "*A\n"));
	t = view(m, V_CC, &o, SONDE_PM_JSON, 0);
	CHECK_HAS(t, "{\"view\":\"callers-callees\",",
		  "\"blocks\":[{\"function\":{\"function\":\"<Total>\",\"role\":\"function\",\"name\":\"<Total>\",\"object\":null,\"a.totalcpu\":0,",
		  "\"callers\":[],\"callees\":[{\"function\":\"<Total>\",\"role\":\"callee\",\"name\":\"main\",\"object\":\"prog\",\"a.totalcpu\":32000000000,");

	/* the call tree */
	t = view(m, V_CALLTREE, &o, SONDE_PM_TEXT, 0);
	CHECK_TEXT(t, "Functions Call Tree. Children sorted by metric: Inclusive Total CPU Time\n"
		      "\n"
		      "Excl. Total    Incl. Total     Name\n"
		      "CPU            CPU*\n"
		      "  sec.      %    sec.      %\n"
		      "32.000 100.00  32.000 100.00   <Total>\n"
		      " 2.000   6.25  32.000 100.00   +-main\n"
		      " 5.000  15.62  20.000  62.50     +-B\n"
		      " 3.000   9.38  15.000  46.88     | +-C\n"
		      " 6.000  18.75   6.000  18.75     |   +-E\n"
		      " 4.000  12.50   6.000  18.75     |   +-F\n"
		      " 2.000   6.25   2.000   6.25     |     +-G\n"
		      " 0.      0.    10.000  31.25     +-A\n"
		      " 2.000   6.25  10.000  31.25       +-C\n"
		      " 4.000  12.50   4.000  12.50         +-E\n"
		      " 2.000   6.25   4.000  12.50         +-F\n"
		      " 2.000   6.25   2.000   6.25           +-G\n");
	t = view(m, V_CALLTREE, &o, SONDE_PM_JSON, 0);
	CHECK_HAS(t, "{\"view\":\"calltree\",",
		  "{\"node\":0,\"parent\":null,\"depth\":0,\"name\":\"<Total>\",\"object\":null,\"e.totalcpu\":32000000000,",
		  "{\"node\":3,\"parent\":2,\"depth\":3,\"name\":\"C\",\"object\":\"prog\",\"e.totalcpu\":3000000000,\"e.%totalcpu\":9.375,\"i.totalcpu\":15000000000,\"i.%totalcpu\":46.875}",
		  "{\"node\":8,\"parent\":7,\"depth\":3,\"name\":\"C\",\"object\":\"prog\",\"e.totalcpu\":2000000000,\"e.%totalcpu\":6.25,\"i.totalcpu\":10000000000,\"i.%totalcpu\":31.25}");
	t = view(m, V_CALLTREE, &o, SONDE_PM_CSV, 0);
	CHECK_HAS(t, "node,parent,depth,name,object,e.totalcpu,e.%totalcpu,i.totalcpu,i.%totalcpu\n0,,0,<Total>,,32000000000,100,32000000000,100\n",
		  "\n11,10,5,G,libg.so,2000000000,6.25,2000000000,6.25\n");

	/* F: exclusive 6, inclusive 10 because of G */
	t = view(m, V_FSINGLE, &o, SONDE_PM_TEXT, id[F_F]);
	CHECK_TEXT(t, "F\n"
		      "\tExclusive Total CPU Time: 6.000 ( 18.8%)\n"
		      "\tInclusive Total CPU Time: 10.000 ( 31.2%)\n"
		      "\t                 Address: 0x1500\n"
		      "\t             Load Object: /opt/prog\n"
		      "\t            Mangled Name: F\n");
	t = view(m, V_FSINGLE, &o, SONDE_PM_JSON, id[F_E]);
	CHECK_HAS(t, "{\"view\":\"fsingle\",",
		  "\"function\":{\"name\":\"E\",\"object\":\"prog\",\"path\":\"/opt/prog\",\"address\":5120,\"mangled\":\"E\",\"name_long\":\"E\",\"name_short\":\"E\",\"e.totalcpu\":10000000000,\"e.%totalcpu\":31.25,\"i.totalcpu\":10000000000,\"i.%totalcpu\":31.25}}\n");

	t = view(m, V_OBJECTS, &o, SONDE_PM_TEXT, 0);
	CHECK_TEXT(t, "Load Objects sorted by metric: Exclusive Total CPU Time\n"
		      "\n"
		      "Excl. Total    Incl. Total     Name\n"
		      "CPU*           CPU\n"
		      "  sec.      %    sec.      %\n"
		      "32.000 100.00  32.000 100.00   <Total>\n"
		      "28.000  87.50  32.000 100.00   prog\n"
		      " 4.000  12.50   4.000  12.50   libg.so\n");
	t = view(m, V_OBJECTS, &o, SONDE_PM_JSON, 0);
	CHECK_HAS(t, "{\"view\":\"objects\",",
		  "{\"name\":\"libg.so\",\"path\":\"/lib/libg.so\",\"e.totalcpu\":4000000000,\"e.%totalcpu\":12.5,\"i.totalcpu\":4000000000,\"i.%totalcpu\":12.5}");

	t = view(m, V_METRIC_LIST, &o, SONDE_PM_TEXT, 0);
	CHECK_HAS(t, "Current metrics: e.%totalcpu:i.%totalcpu:name\n",
		  "Current Sort Metric: Exclusive Total CPU Time ( e.totalcpu )\n",
		  "Exclusive Total CPU Time: e.%totalcpu\n", "Inclusive Samples: i+%samples\n");
	t = view(m, V_METRIC_LIST, &o, SONDE_PM_JSON, 0);
	CHECK_HAS(t, "{\"view\":\"metric_list\",",
		  "\"available\":[{\"name\":\"totalcpu\",\"title\":\"Total CPU Time\",\"unit\":\"ns\",\"flavors\":\"eia\"},{\"name\":\"samples\"");

	/* other metrics, sort and limit */
	char err[256];

	CHECK(sonde_mspec_parse(&o.metrics, "i.totalcpu:e+samples:name", err, sizeof(err)) == 0);
	CHECK(sonde_sort_parse(&o.sort, "i.totalcpu", err, sizeof(err)) == 0);
	o.limit = 3;
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_TEXT, 0);
	CHECK_TEXT(t, "Functions sorted by metric: Inclusive Total CPU Time\n"
		      "\n"
		      "Incl.   Excl.     Name\n"
		      "Total   Samples\n"
		      "CPU*\n"
		      "  sec.\n"
		      "32.000       32   <Total>\n"
		      "32.000        2   main\n"
		      "25.000        5   C\n"
		      "20.000        5   B\n");
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_CSV, 0);
	CHECK_TEXT(t, "name,object,i.totalcpu,e.samples\n"
		      "<Total>,,32000000000,32\n"
		      "main,prog,32000000000,2\n"
		      "C,prog,25000000000,5\n"
		      "B,prog,20000000000,5\n");
	CHECK(sonde_sort_parse(&o.sort, "name", err, sizeof(err)) == 0);
	o.limit = 2;
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_CSV, 0);
	CHECK_TEXT(t, "name,object,i.totalcpu,e.samples\n"
		      "<Total>,,32000000000,32\n"
		      "A,prog,10000000000,0\n"
		      "B,prog,20000000000,5\n");
	/* a spec's attributed items shape the callers-callees columns */
	CHECK(sonde_mspec_parse(&o.metrics, "a.totalcpu:e+samples", err, sizeof(err)) == 0);
	CHECK(sonde_sort_parse(&o.sort, "samples", err, sizeof(err)) == 0);
	t = view(m, V_CSINGLE, &o, SONDE_PM_TEXT, id[F_B]);
	CHECK_TEXT(t, "Callers and callees sorted by metric: Attributed Samples\n"
		      "\n"
		      "Attr.   Excl.     Name\n"
		      "Total   Samples\n"
		      "CPU\n"
		      "  sec.\n"
		      "20.000        2   main\n"
		      " 5.000        5  *B\n"
		      "15.000        5   C\n");
	sonde_model_free(m);
}

/* ---- recursion on models ------------------------------------------------------------- */

static void test_recursion_model(void)
{
	uint32_t id[NF];
	struct sonde_model *m;
	struct sonde_view_opts o;
	const char *t;

	group = "direct recursion (model)";
	sonde_view_opts_init(&o);
	m = model_of(recursion, N(recursion), id);
	/* R counts once per stack; all of it attributed to R itself as caller;
	 * main, the initiating function, shows it as its callee */
	CHECK_I(INCL(m, id[F_R]), 10 * SEC);
	CHECK_I(EXCL(m, id[F_R]), 10 * SEC);
	CHECK_I(callers_of(m, id[F_R], id[F_R]), 10 * SEC);
	CHECK_I(callers_of(m, id[F_R], id[F_MAIN]), -1);
	CHECK_I(ncallers(m, id[F_R]), 1);
	CHECK_I(ncallees(m, id[F_R]), 0);
	CHECK_I(callees_of(m, id[F_MAIN], id[F_R]), 10 * SEC);
	CHECK_I(INCL(m, id[F_MAIN]), 10 * SEC);
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_TEXT, 0);
	CHECK_HAS(t, "10.000 100.00  10.000 100.00   R\n", " 0.      0.    10.000 100.00   main\n");
	t = view(m, V_CSINGLE, &o, SONDE_PM_TEXT, id[F_R]);
	CHECK_TEXT(t, "Callers and callees sorted by metric: Attributed Total CPU Time\n"
		      "\n"
		      "Attr. Total    Excl. Total    Incl. Total     Name\n"
		      "CPU*           CPU            CPU\n"
		      "  sec.      %    sec.      %    sec.      %\n"
		      "10.000 100.00  10.000 100.00  10.000 100.00   R\n"
		      "10.000 100.00  10.000 100.00  10.000 100.00  *R\n");
	t = view(m, V_CSINGLE, &o, SONDE_PM_JSON, id[F_R]);
	CHECK_HAS(t, "\"callers\":[{\"function\":\"R\",\"role\":\"caller\",\"name\":\"R\",\"object\":\"prog\",\"a.totalcpu\":10000000000,\"a.%totalcpu\":100,",
		  "\"callees\":[]}]}\n");
	t = view(m, V_CSINGLE, &o, SONDE_PM_TEXT, id[F_MAIN]);
	CHECK_HAS(t, " 0.      0.     0.      0.    10.000 100.00  *main\n",
		  "10.000 100.00  10.000 100.00  10.000 100.00   R\n");
	t = view(m, V_CSINGLE, &o, SONDE_PM_JSON, id[F_MAIN]);
	CHECK_HAS(t, "\"callees\":[{\"function\":\"main\",\"role\":\"callee\",\"name\":\"R\",\"object\":\"prog\",\"a.totalcpu\":10000000000,");
	/* the tree keeps every level */
	t = view(m, V_CALLTREE, &o, SONDE_PM_TEXT, 0);
	CHECK_HAS(t, " 0.      0.    10.000 100.00   +-main\n"
		     " 0.      0.    10.000 100.00     +-R\n"
		     " 0.      0.    10.000 100.00       +-R\n"
		     "10.000 100.00  10.000 100.00         +-R\n");
	t = view(m, V_CALLTREE, &o, SONDE_PM_JSON, 0);
	CHECK_HAS(t, "{\"node\":4,\"parent\":3,\"depth\":4,\"name\":\"R\",\"object\":\"prog\",\"e.totalcpu\":10000000000,");
	sonde_model_free(m);

	group = "mutual recursion (model)";
	m = model_of(mutual, N(mutual), id);
	CHECK_I(INCL(m, id[F_A]), 15 * SEC);
	CHECK_I(EXCL(m, id[F_A]), 5 * SEC);
	CHECK_I(INCL(m, id[F_B]), 15 * SEC);
	CHECK_I(EXCL(m, id[F_B]), 10 * SEC);
	CHECK_I(callers_of(m, id[F_A], id[F_B]), 15 * SEC);
	CHECK_I(callers_of(m, id[F_A], id[F_MAIN]), -1);
	CHECK_I(callees_of(m, id[F_A], id[F_B]), 10 * SEC);
	CHECK_I(callers_of(m, id[F_B], id[F_A]), 15 * SEC);
	CHECK_I(callees_of(m, id[F_B], id[F_A]), 5 * SEC);
	CHECK_I(callees_of(m, id[F_MAIN], id[F_A]), 15 * SEC);
	CHECK_I(INCL(m, id[F_MAIN]), 15 * SEC);
	t = view(m, V_CSINGLE, &o, SONDE_PM_TEXT, id[F_A]);
	CHECK_TEXT(t, "Callers and callees sorted by metric: Attributed Total CPU Time\n"
		      "\n"
		      "Attr. Total    Excl. Total    Incl. Total     Name\n"
		      "CPU*           CPU            CPU\n"
		      "  sec.      %    sec.      %    sec.      %\n"
		      "15.000 100.00  10.000  66.67  15.000 100.00   B\n"
		      " 5.000  33.33   5.000  33.33  15.000 100.00  *A\n"
		      "10.000  66.67  10.000  66.67  15.000 100.00   B\n");
	t = view(m, V_CSINGLE, &o, SONDE_PM_JSON, id[F_B]);
	CHECK_HAS(t, "\"function\":{\"function\":\"B\",\"role\":\"function\",\"name\":\"B\",\"object\":\"prog\",\"a.totalcpu\":10000000000,",
		  "\"callers\":[{\"function\":\"B\",\"role\":\"caller\",\"name\":\"A\",\"object\":\"prog\",\"a.totalcpu\":15000000000,",
		  "\"callees\":[{\"function\":\"B\",\"role\":\"callee\",\"name\":\"A\",\"object\":\"prog\",\"a.totalcpu\":5000000000,");
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_JSON, 0);
	CHECK_HAS(t, "{\"name\":\"A\",\"object\":\"prog\",\"e.totalcpu\":5000000000,\"e.%totalcpu\":33.333333333333336,\"i.totalcpu\":15000000000,\"i.%totalcpu\":100}",
		  "{\"name\":\"B\",\"object\":\"prog\",\"e.totalcpu\":10000000000,\"e.%totalcpu\":66.66666666666667,\"i.totalcpu\":15000000000,\"i.%totalcpu\":100}");
	t = view(m, V_CALLTREE, &o, SONDE_PM_TEXT, 0);
	CHECK_HAS(t, " 0.      0.    15.000 100.00   +-main\n"
		     " 0.      0.    15.000 100.00     +-A\n"
		     " 0.      0.    15.000 100.00       +-B\n"
		     " 5.000  33.33  15.000 100.00         +-A\n"
		     "10.000  66.67  10.000  66.67           +-B\n");
	sonde_model_free(m);

	group = "non-adjacent repeat (model)";
	m = model_of(nonadjacent, N(nonadjacent), id);
	CHECK_I(INCL(m, id[F_X]), 12 * SEC);
	CHECK_I(EXCL(m, id[F_X]), 0);
	CHECK_I(callers_of(m, id[F_X], id[F_Y]), 8 * SEC);
	CHECK_I(callers_of(m, id[F_X], id[F_MAIN]), 4 * SEC);
	CHECK_I(callees_of(m, id[F_X], id[F_Z]), 8 * SEC);
	CHECK_I(callees_of(m, id[F_X], id[F_Y]), 4 * SEC);
	CHECK_I(INCL(m, id[F_Y]), 12 * SEC);
	CHECK_I(EXCL(m, id[F_Y]), 4 * SEC);
	CHECK_I(callers_of(m, id[F_Y], id[F_X]), 12 * SEC);
	CHECK_I(callees_of(m, id[F_Y], id[F_X]), 8 * SEC);
	CHECK_I(callees_of(m, id[F_MAIN], id[F_X]), 12 * SEC);
	CHECK_I(INCL(m, id[F_Z]), 8 * SEC);
	t = view(m, V_CSINGLE, &o, SONDE_PM_TEXT, id[F_X]);
	CHECK_TEXT(t, "Callers and callees sorted by metric: Attributed Total CPU Time\n"
		      "\n"
		      "Attr. Total   Excl. Total   Incl. Total     Name\n"
		      "CPU*          CPU           CPU\n"
		      " sec.      %   sec.      %    sec.      %\n"
		      "8.000  66.67  4.000  33.33  12.000 100.00   Y\n"
		      "4.000  33.33  0.      0.    12.000 100.00   main\n"
		      "0.      0.    0.      0.    12.000 100.00  *X\n"
		      "8.000  66.67  8.000  66.67   8.000  66.67   Z\n"
		      "4.000  33.33  4.000  33.33  12.000 100.00   Y\n");
	t = view(m, V_CSINGLE, &o, SONDE_PM_JSON, id[F_X]);
	CHECK_HAS(t, "\"callers\":[{\"function\":\"X\",\"role\":\"caller\",\"name\":\"Y\",\"object\":\"prog\",\"a.totalcpu\":8000000000,",
		  "{\"function\":\"X\",\"role\":\"caller\",\"name\":\"main\",\"object\":\"prog\",\"a.totalcpu\":4000000000,",
		  "\"callees\":[{\"function\":\"X\",\"role\":\"callee\",\"name\":\"Z\",\"object\":\"prog\",\"a.totalcpu\":8000000000,",
		  "{\"function\":\"X\",\"role\":\"callee\",\"name\":\"Y\",\"object\":\"prog\",\"a.totalcpu\":4000000000,");
	t = view(m, V_CALLTREE, &o, SONDE_PM_TEXT, 0);
	CHECK_HAS(t, " 0.      0.    12.000 100.00   +-main\n"
		     " 0.      0.    12.000 100.00     +-X\n"
		     " 4.000  33.33  12.000 100.00       +-Y\n"
		     " 0.      0.     8.000  66.67         +-X\n"
		     " 8.000  66.67   8.000  66.67           +-Z\n");
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_TEXT, 0);
	CHECK_HAS(t, " 0.      0.    12.000 100.00   X\n");
	sonde_model_free(m);
}


/* ---- the parsers ------------------------------------------------------------------------ */

static void test_parsers(void)
{
	struct sonde_mspec s;
	struct sonde_sortkey k;
	char err[512], buf[512];
	size_t lim;
	enum sonde_namefmt nf;
	enum sonde_printmode pm;
	enum sonde_compare cm;

	group = "metric specs";
	CHECK(sonde_mspec_parse(&s, "e.%totalcpu:i.totalcpu:name", err, sizeof(err)) == 0);
	CHECK_I(s.n, 2);
	CHECK(s.item[0].flavor == 'e' && s.item[0].vis == (SONDE_VIS_VALUE | SONDE_VIS_PCT));
	CHECK(s.item[1].flavor == 'i' && s.item[1].vis == SONDE_VIS_VALUE);
	CHECK(!strcmp(s.item[1].metric, "totalcpu"));
	sonde_mspec_format(&s, buf, sizeof(buf));
	CHECK(!strcmp(buf, "e.%totalcpu:i.totalcpu:name"));
	CHECK(sonde_mspec_parse(&s, "ei.%totalcpu:a+samples", err, sizeof(err)) == 0);
	CHECK_I(s.n, 3);
	CHECK(s.item[0].flavor == 'e' && s.item[1].flavor == 'i' && s.item[2].flavor == 'a');
	sonde_mspec_format(&s, buf, sizeof(buf));
	CHECK(!strcmp(buf, "e.%totalcpu:i.%totalcpu:a+samples:name"));
	CHECK(sonde_mspec_parse(&s, "i%totalcpu", err, sizeof(err)) == 0);
	CHECK(s.n == 1 && s.item[0].vis == SONDE_VIS_PCT);
	CHECK(sonde_mspec_parse(&s, "e.+%samples", err, sizeof(err)) == 0);
	CHECK(s.item[0].vis == (SONDE_VIS_VALUE | SONDE_VIS_PCT));
	CHECK(sonde_mspec_parse(&s, "name", err, sizeof(err)) == 0 && s.n == 0);
	CHECK(sonde_mspec_parse(&s, "default", err, sizeof(err)) == 0);
	sonde_mspec_format(&s, buf, sizeof(buf));
	CHECK(!strcmp(buf, "e.%totalcpu:i.%totalcpu:name"));
	/* errors leave the spec alone and say what is wrong */
	CHECK(sonde_mspec_parse(&s, "e.frobs", err, sizeof(err)) < 0 && strstr(err, "unknown metric 'frobs'") &&
	      strstr(err, "totalcpu, samples"));
	CHECK(sonde_mspec_parse(&s, "totalcpu", err, sizeof(err)) < 0 && strstr(err, "flavour"));
	CHECK(sonde_mspec_parse(&s, "x.totalcpu", err, sizeof(err)) < 0 && strstr(err, "flavour"));
	CHECK(sonde_mspec_parse(&s, "etotalcpu", err, sizeof(err)) < 0 && strstr(err, "visibility"));
	CHECK(sonde_mspec_parse(&s, "e.totalcpu:e.%totalcpu", err, sizeof(err)) < 0 &&
	      strstr(err, "'e.totalcpu' appears twice"));
	CHECK(sonde_mspec_parse(&s, "e.totalcpu::name", err, sizeof(err)) < 0 && strstr(err, "empty item"));
	CHECK(sonde_mspec_parse(&s, "e.totalcpu:", err, sizeof(err)) < 0 && strstr(err, "empty item"));
	CHECK(sonde_mspec_parse(&s, "", err, sizeof(err)) < 0);
	CHECK(sonde_mspec_parse(&s, "e.!totalcpu", err, sizeof(err)) < 0);
	sonde_mspec_format(&s, buf, sizeof(buf));
	CHECK(!strcmp(buf, "e.%totalcpu:i.%totalcpu:name"));

	group = "sort specs";
	CHECK(sonde_sort_parse(&k, "i.totalcpu", err, sizeof(err)) == 0 && k.flavor == 'i' && !k.by_name);
	CHECK(sonde_sort_parse(&k, "e.%totalcpu", err, sizeof(err)) == 0 && k.flavor == 'e');
	CHECK(sonde_sort_parse(&k, "samples", err, sizeof(err)) == 0 && k.flavor == 'e' &&
	      !strcmp(k.metric, "samples"));
	CHECK(sonde_sort_parse(&k, "a.samples", err, sizeof(err)) == 0 && k.flavor == 'a');
	sonde_sort_title(&k, buf, sizeof(buf));
	CHECK(!strcmp(buf, "Attributed Samples"));
	CHECK(sonde_sort_parse(&k, "name", err, sizeof(err)) == 0 && k.by_name);
	sonde_sort_title(&k, buf, sizeof(buf));
	CHECK(!strcmp(buf, "Name"));
	CHECK(sonde_sort_parse(&k, "e.bogus", err, sizeof(err)) < 0 && strstr(err, "'e.bogus'"));
	CHECK(sonde_sort_parse(&k, "", err, sizeof(err)) < 0);

	group = "settings";
	CHECK(sonde_limit_parse(&lim, "10", err, sizeof(err)) == 0 && lim == 10);
	CHECK(sonde_limit_parse(&lim, "0", err, sizeof(err)) == 0 && lim == 0);
	CHECK(sonde_limit_parse(&lim, "-1", err, sizeof(err)) < 0);
	CHECK(sonde_limit_parse(&lim, "10x", err, sizeof(err)) < 0 && strstr(err, "'10x'"));
	CHECK(sonde_limit_parse(&lim, "99999999999999999999999", err, sizeof(err)) < 0);
	CHECK(sonde_namefmt_parse(&nf, "mangled", err, sizeof(err)) == 0 && nf == SONDE_NAME_MANGLED);
	CHECK(sonde_namefmt_parse(&nf, "medium", err, sizeof(err)) < 0 && strstr(err, "long, short, mangled"));
	CHECK(sonde_printmode_parse(&pm, "json", err, sizeof(err)) == 0 && pm == SONDE_PM_JSON);
	CHECK(sonde_printmode_parse(&pm, "html", err, sizeof(err)) == 0 && pm == SONDE_PM_HTML);
	CHECK(sonde_printmode_parse(&pm, "htm", err, sizeof(err)) < 0);
	CHECK(sonde_compare_parse(&cm, "ratio", err, sizeof(err)) == 0 && cm == SONDE_CMP_RATIO);
	CHECK(sonde_compare_parse(&cm, "yes", err, sizeof(err)) < 0);
}

/* ---- names and lookup ------------------------------------------------------------------- */

static void test_names(void)
{
	struct sonde_model *m = model_all();
	uint32_t a = sonde_model_object(m, "/bin/app"), b = sonde_model_object(m, "/lib/libb.so");
	uint32_t cpp = sonde_model_func(m, a, 0x100, "_ZN2ns3fooEi", "ns::foo(int)", "ns::foo", false);
	uint32_t d1 = sonde_model_func(m, b, 0x200, "dup", "dup", "dup", false);
	uint32_t d2 = sonde_model_func(m, a, 0x300, "dup", "dup", "dup", false);
	uint32_t st = sonde_model_func(m, a, 0x400, "<static>@0x400 (app)", "<static>@0x400 (app)",
				       "<static>@0x400 (app)", true);
	uint32_t fr[3] = { cpp, d1, d2 }, cands[4], f = 99;
	int64_t v[SONDE_MAX_METRICS] = { SEC, 1 };
	struct sonde_view_opts o;
	const char *t;

	group = "names";
	sonde_model_add(m, fr, 3, v);
	fr[0] = st;
	sonde_model_add(m, fr, 1, v);
	sonde_model_finish(m);
	sonde_view_opts_init(&o);
	CHECK(!strcmp(sonde_view_funcname(sonde_model_funcinfo(m, cpp), SONDE_NAME_LONG), "ns::foo(int)"));
	CHECK(!strcmp(sonde_view_funcname(sonde_model_funcinfo(m, cpp), SONDE_NAME_SHORT), "ns::foo"));
	CHECK(!strcmp(sonde_view_funcname(sonde_model_funcinfo(m, cpp), SONDE_NAME_MANGLED), "_ZN2ns3fooEi"));
	CHECK(sonde_view_find(m, "ns::foo", SONDE_NAME_LONG, &f, NULL, 0) == 1 && f == cpp);
	CHECK(sonde_view_find(m, "ns::foo(int)", SONDE_NAME_LONG, &f, NULL, 0) == 1 && f == cpp);
	CHECK(sonde_view_find(m, "_ZN2ns3fooEi", SONDE_NAME_SHORT, &f, NULL, 0) == 1 && f == cpp);
	CHECK(sonde_view_find(m, "<static>@0x400 (app)", SONDE_NAME_LONG, &f, NULL, 0) == 1 && f == st);
	CHECK(sonde_view_find(m, "nosuch", SONDE_NAME_LONG, &f, cands, 4) == 0);
	/* ambiguous: both candidates, by object path */
	CHECK(sonde_view_find(m, "dup", SONDE_NAME_LONG, &f, cands, 4) == 2);
	CHECK(cands[0] == d2 && cands[1] == d1);
	CHECK(sonde_view_find(m, "dup:2", SONDE_NAME_LONG, &f, cands, 4) == 1 && f == d1);
	CHECK(sonde_view_find(m, "dup:1", SONDE_NAME_LONG, &f, cands, 4) == 1 && f == d2);
	CHECK(sonde_view_find(m, "dup:3", SONDE_NAME_LONG, &f, cands, 4) == 0);
	CHECK(sonde_view_find(m, "ns::foo:1", SONDE_NAME_LONG, &f, cands, 4) == 1 && f == cpp);

	o.names = SONDE_NAME_MANGLED;
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_TEXT, 0);
	CHECK_HAS(t, "   _ZN2ns3fooEi\n");
	o.names = SONDE_NAME_SHORT;
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_TEXT, 0);
	CHECK_HAS(t, "   ns::foo\n");
	o.names = SONDE_NAME_LONG;
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_JSON, 0);
	CHECK_HAS(t, "{\"name\":\"ns::foo(int)\",\"object\":\"app\",");
	t = view(m, V_FSINGLE, &o, SONDE_PM_TEXT, st);
	CHECK_HAS(t, "no symbol covers this address");
	/* csv quotes what needs it */
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_CSV, 0);
	CHECK_HAS(t, "\nns::foo(int),app,");
	sonde_model_free(m);

	m = model_all();
	a = sonde_model_object(m, "/bin/a,b");
	fr[0] = sonde_model_func(m, a, 0x100, "f\"x", "f\"x", "f\"x", false);
	sonde_model_add(m, fr, 1, v);
	sonde_model_finish(m);
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_CSV, 0);
	CHECK_HAS(t, "\n\"f\"\"x\",\"a,b\",1000000000,100,");
	t = view(m, V_FUNCTIONS, &o, SONDE_PM_JSON, 0);
	CHECK_HAS(t, "{\"name\":\"f\\\"x\",\"object\":\"a,b\",");
	sonde_model_free(m);
}

/* ---- compare, threads, statistics ----------------------------------------------------------- */

static void test_compare(void)
{
	uint32_t id[NF];
	struct sonde_model *m1 = model_of(worked, N(worked), id), *m2;
	struct stk w2[N(worked)];
	struct sonde_view_opts o;
	const char *names[2] = { "one.er", "two.er" };
	const struct sonde_model *ms[2];
	char err[256];
	FILE *f;
	const char *t;

	group = "compare";
	/* the second run: E twice as slow, G gone */
	memcpy(w2, worked, sizeof(w2));
	for (size_t i = 0; i < N(w2); i++) {
		if (w2[i].f[0] == F_E)
			w2[i].units *= 2;
		if (w2[i].f[0] == F_G)
			w2[i].units = 0;
	}
	m2 = model_of(w2, N(w2), id);
	ms[0] = m1;
	ms[1] = m2;
	sonde_view_opts_init(&o);
	CHECK(sonde_mspec_parse(&o.metrics, "e.totalcpu:i.%totalcpu", err, sizeof(err)) == 0);
	for (int mode = SONDE_CMP_ON; mode <= SONDE_CMP_RATIO; mode++) {
		o.compare = (enum sonde_compare)mode;
		for (int pm = SONDE_PM_TEXT; pm <= SONDE_PM_HTML; pm++) {
			o.mode = (enum sonde_printmode)pm;
			f = out_open();
			t = out_close(f, sonde_view_compare(f, ms, names, 2, false, &o, err, sizeof(err)), err);
			if (mode == SONDE_CMP_ON && pm == SONDE_PM_TEXT)
				CHECK_TEXT(t, "Functions sorted by metric: Exclusive Total CPU Time\n"
					      "\n"
					      "one.er  two.er  one.er         two.er\n"
					      "Excl.   Excl.   Incl. Total    Incl. Total     Name\n"
					      "Total   Total   CPU            CPU\n"
					      "CPU*    CPU\n"
					      "  sec.    sec.    sec.      %    sec.      %\n"
					      "32.000  38.000  32.000 100.00  38.000 100.00   <Total>\n"
					      "10.000  20.000  10.000  31.25  20.000  52.63   E\n"
					      " 6.000   6.000  10.000  31.25   6.000  15.79   F\n"
					      " 5.000   5.000  20.000  62.50  24.000  63.16   B\n"
					      " 5.000   5.000  25.000  78.12  31.000  81.58   C\n"
					      " 4.000   0.      4.000  12.50   0.      0.     G\n"
					      " 2.000   2.000  32.000 100.00  38.000 100.00   main\n"
					      " 0.      0.     10.000  31.25  12.000  31.58   A\n");
			if (mode == SONDE_CMP_DELTA && pm == SONDE_PM_TEXT)
				CHECK_HAS(t, "  delta", "10.000  +10.000  10.000  31.25  +10.000  52.63   E\n",
					  " 4.000   -4.000   4.000  12.50   -4.000   0.     G\n",
					  " 6.000   +0.     10.000  31.25   -4.000  15.79   F\n");
			if (mode == SONDE_CMP_RATIO && pm == SONDE_PM_TEXT)
				CHECK_HAS(t, "ratio", "10.000  x 2.000  10.000  31.25  x 2.000  52.63   E\n",
					  " 0.     x 1.000  10.000  31.25  x 1.200  31.58   A\n",
					  " 4.000  x 0.000   4.000  12.50  x 0.000   0.     G\n");
			if (mode == SONDE_CMP_DELTA && pm == SONDE_PM_JSON)
				CHECK_HAS(t, "\"compare\":\"delta\",\"experiments\":[\"one.er\",\"two.er\"]",
					  "{\"name\":\"E\",\"object\":\"prog\",\"e.totalcpu[1]\":10000000000,\"e.totalcpu[2]\":20000000000,\"e.totalcpu.delta[2]\":10000000000,\"i.totalcpu[1]\":10000000000,\"i.%totalcpu[1]\":31.25,\"i.totalcpu[2]\":20000000000,\"i.totalcpu.delta[2]\":10000000000,\"i.%totalcpu[2]\":52.63157894736842}");
			if (mode == SONDE_CMP_RATIO && pm == SONDE_PM_CSV)
				CHECK_HAS(t, "name,object,e.totalcpu[1],e.totalcpu[2],e.totalcpu.ratio[2],i.totalcpu[1],i.%totalcpu[1],i.totalcpu[2],i.totalcpu.ratio[2],i.%totalcpu[2]\n",
					  "\nE,prog,10000000000,20000000000,2,10000000000,31.25,20000000000,2,52.63157894736842\n");
		}
	}
	/* objects side by side */
	o.compare = SONDE_CMP_ON;
	o.mode = SONDE_PM_TEXT;
	f = out_open();
	t = out_close(f, sonde_view_compare(f, ms, names, 2, true, &o, err, sizeof(err)), err);
	CHECK_HAS(t, "Load Objects sorted by metric", "   libg.so\n", "   prog\n");
	sonde_model_free(m1);
	sonde_model_free(m2);
}

static void test_threads(void)
{
	uint32_t id[NF];
	struct sonde_profile p;
	struct sonde_pthread th[3];
	struct sonde_view_opts o;
	char err[256];
	FILE *f;
	const char *t;

	group = "threads view";
	memset(&p, 0, sizeof(p));
	memset(th, 0, sizeof(th));
	p.model = model_of(worked, N(worked), id);
	p.nexps = 1;
	p.threads = th;
	p.nthreads = 3;
	th[0] = (struct sonde_pthread){ .exp = 0, .number = 1, .tid = 100, .selected = true };
	th[1] = (struct sonde_pthread){ .exp = 0, .number = 2, .tid = 101, .selected = true };
	th[2] = (struct sonde_pthread){ .exp = 0, .number = 3, .tid = 102, .selected = false };
	th[0].v[0] = 8 * SEC, th[0].v[1] = 8;
	th[1].v[0] = 24 * SEC, th[1].v[1] = 24;
	th[2].v[0] = 5 * SEC, th[2].v[1] = 5;
	sonde_view_opts_init(&o);
	f = out_open();
	t = out_close(f, sonde_view_threads(f, &p, &o, err, sizeof(err)), err);
	CHECK_TEXT(t, "Threads sorted by metric: Total CPU Time\n"
		      "2 of 3 threads selected\n"
		      "\n"
		      "Total CPU*      Name\n"
		      "  sec.      %\n"
		      "32.000 100.00   <Total>\n"
		      "24.000  75.00   Thread 2 (tid 101)\n"
		      " 8.000  25.00   Thread 1 (tid 100)\n");
	o.mode = SONDE_PM_JSON;
	f = out_open();
	t = out_close(f, sonde_view_threads(f, &p, &o, err, sizeof(err)), err);
	CHECK_HAS(t, "{\"view\":\"threads\",", "\"threads_total\":3,",
		  "{\"experiment\":1,\"thread\":2,\"tid\":101,\"name\":\"Thread 2 (tid 101)\",\"totalcpu\":24000000000,\"%totalcpu\":75}");
	o.mode = SONDE_PM_CSV;
	CHECK(sonde_mspec_parse(&o.metrics, "e+samples:i.totalcpu", err, sizeof(err)) == 0);
	f = out_open();
	t = out_close(f, sonde_view_threads(f, &p, &o, err, sizeof(err)), err);
	CHECK_TEXT(t, "experiment,thread,tid,name,samples,totalcpu\n"
		      ",,,<Total>,32,32000000000\n"
		      "1,2,101,Thread 2 (tid 101),24,24000000000\n"
		      "1,1,100,Thread 1 (tid 100),8,8000000000\n");
	sonde_model_free(p.model);
}

static char tmpdir[] = "/tmp/sonde-test-views.XXXXXX";

static void test_statistics(void)
{
	char dir[600], err[512];
	struct sonde_expw *w;
	struct sonde_overview_packet ov = { .type = SONDE_PKT_OVERVIEW, .size = sizeof(ov) };
	struct sonde_exp *e[2];
	struct sonde_view_opts o;
	FILE *f;
	const char *t;

	group = "statistics view";
	for (int k = 0; k < 2; k++) {
		snprintf(dir, sizeof(dir), "%s/stat%d.er", tmpdir, k);
		w = sonde_expw_create(dir, err, sizeof(err));
		if (!w) {
			printf("# %s\n", err);
			nfail++;
			return;
		}
		sonde_expw_log_preamble(w, 100, 1000000000);
		ov.reason = SONDE_OV_START;
		ov.time_ns = 1000000000;
		ov.utime_ns = 10000000;
		ov.stime_ns = 0;
		ov.minflt = 100;
		ov.nvcsw = 1;
		ov.maxrss_kb = 1000;
		sonde_expw_overview(w, &ov);
		ov.reason = SONDE_OV_END;
		ov.time_ns = 3000000000;
		ov.utime_ns = 1510000000;
		ov.stime_ns = 500000000;
		ov.minflt = 350;
		ov.majflt = 2;
		ov.nvcsw = 11;
		ov.nivcsw = 7;
		ov.maxrss_kb = 5000 + (uint64_t)k;
		sonde_expw_overview(w, &ov);
		sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"3000000000\" status=\"0\"/>\n");
		if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0)
			printf("# %s\n", err), nfail++;
		e[k] = sonde_exp_open(dir, err, sizeof(err));
		if (!e[k]) {
			printf("# %s\n", err);
			nfail++;
			return;
		}
	}
	sonde_view_opts_init(&o);
	f = out_open();
	t = out_close(f, sonde_view_statistics(f, (const struct sonde_exp *const *)e, 1, &o, err, sizeof(err)), err);
	CHECK_HAS(t, "Experiment: stat0.er\n", "                         Duration (sec.): 2.000\n",
		  "                                User CPU: 1.500 ( 75.0%)\n",
		  "                              System CPU: 0.500 ( 25.0%)\n",
		  "                       Minor Page Faults:   250\n",
		  "                       Major Page Faults:     2\n",
		  "              Voluntary context switches:    10\n",
		  "            Involuntary context switches:     7\n",
		  "               Maximum resident set (KB):  5000\n");
	o.mode = SONDE_PM_JSON;
	f = out_open();
	t = out_close(f, sonde_view_statistics(f, (const struct sonde_exp *const *)e, 2, &o, err, sizeof(err)), err);
	CHECK_HAS(t, "{\"view\":\"statistics\",\"experiments\":[{\"experiment\":\"stat0.er\",\"duration_ns\":2000000000,",
		  "\"user_ns\":1500000000,\"system_ns\":500000000,\"minflt\":250,\"majflt\":2,",
		  "\"total\":{\"experiment\":\"all\",\"duration_ns\":2000000000,", "\"user_ns\":3000000000,",
		  "\"maxrss_kb\":5001}}\n");
	o.mode = SONDE_PM_CSV;
	f = out_open();
	t = out_close(f, sonde_view_statistics(f, (const struct sonde_exp *const *)e, 2, &o, err, sizeof(err)), err);
	CHECK_HAS(t, "experiment,duration_ns,recorded_cpu_ns,samples,", "\nstat1.er,2000000000,0,0,",
		  "\nall,2000000000,");
	sonde_exp_close(e[0]);
	sonde_exp_close(e[1]);
}


/* ---- end to end: synthetic experiments of this program's functions ---------------------- */

#include "selfexe.h" /* (here: the lines above are checked by number) */


static uint64_t faddr(int f)
{
	static void (*const fp[NF])(void) = { NULL, A, B, C, E, F, G, R, X, Y, Z };

	return f == F_MAIN ? (uint64_t)(uintptr_t)&main : (uint64_t)(uintptr_t)fp[f];
}

/* A synthetic experiment of this program's functions: threads 100 and
 * 101, this program loaded at t0 (map.xml by hand: the object's real
 * build id).  NULL (said) when it cannot be created. */
static struct sonde_expw *exp_begin(const char *dir, uint64_t t0)
{
	char err[512];
	struct sonde_expw *w = sonde_expw_create(dir, err, sizeof(err));

	if (!w) {
		printf("# %s\n", err);
		return NULL;
	}
	sonde_expw_log_preamble(w, 100, t0);
	sonde_expw_log(w, "<event kind=\"thread_start\" time_ns=\"%llu\" tid=\"101\"/>\n",
		       (unsigned long long)t0);
	sonde_expw_map(w,
		       "<object id=\"1\" time_ns=\"%llu\" event=\"load\" path=\"%s\" base=\"0x%llx\" "
		       "lo=\"0x%llx\" hi=\"0x%llx\" buildid=\"%s\"/>\n",
		       (unsigned long long)t0, exe, (unsigned long long)exe_base,
		       (unsigned long long)exe_lo, (unsigned long long)exe_hi, exe_buildid);
	return w;
}

/* Ends an experiment of exp_begin: the target's exit at time_ns, and
 * the files.  0, or -1 (said). */
static int exp_end(struct sonde_expw *w, uint64_t time_ns)
{
	char err[512];

	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n", (unsigned long long)time_ns);
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return -1;
	}
	return 0;
}

/*
 * Writes the stacks as an experiment: every unit one sample of 1 s on
 * thread 100, except the stacks that pass through B, which run on thread
 * 101 (so -thread_select 2 keeps the B side).  Frames: the leaf an exact
 * pc inside the function, callers a return address inside it.
 */
static int write_exp2(const char *dir, const struct stk *s, size_t n, const char *copy)
{
	const uint64_t t0 = 1000000000ull;
	struct sonde_expw *w = exp_begin(dir, t0);
	uint64_t t = t0;

	if (!w)
		return -1;
	/* a copy of this program elsewhere: the B side runs there */
	const uint64_t shift = copy ? 0x100000000000ull : 0;

	if (copy)
		sonde_expw_map(w,
			       "<object id=\"2\" time_ns=\"%llu\" event=\"load\" path=\"%s\" "
			       "base=\"0x%llx\" lo=\"0x%llx\" hi=\"0x%llx\" buildid=\"%s\"/>\n",
			       (unsigned long long)t0, copy, (unsigned long long)(exe_base + shift),
			       (unsigned long long)(exe_lo + shift), (unsigned long long)(exe_hi + shift),
			       exe_buildid);
	for (size_t i = 0; i < n; i++) {
		uint64_t pc[8];
		bool via_b = false;

		for (int k = 0; k < s[i].depth; k++)
			via_b |= s[i].f[k] == F_B;
		for (int k = 0; k < s[i].depth; k++) {
			uint64_t a = faddr(s[i].f[k]) + (via_b && s[i].f[k] != F_MAIN ? shift : 0);

			pc[k] = k == 0 ? (a + 4) | SONDE_PC_EXACT : a + 8;
		}
		sonde_expw_stack(w, i + 1, 0, (uint16_t)s[i].depth, pc);
		for (int u = 0; u < s[i].units; u++) {
			t += 1000000000ull;
			sonde_expw_sample(w, via_b ? 101 : 100, 0, t, 1000000000ull, i + 1);
		}
	}
	return exp_end(w, t + 1000);
}

static int write_exp(const char *dir, const struct stk *s, size_t n)
{
	return write_exp2(dir, s, n, NULL);
}

static const struct {
	const char *name;
	const struct stk *s;
	size_t n;
} sets[] = {
	{ "worked.er", worked, N(worked) },
	{ "recursion.er", recursion, N(recursion) },
	{ "mutual.er", mutual, N(mutual) },
	{ "nonadjacent.er", nonadjacent, N(nonadjacent) },
};


/*
 * ms.er: microstates and off-CPU time.  Thread 100 runs A (3 CPU samples
 * of 1 s, a quarter of each in the kernel, 0.1 s of run-queue delay
 * before each) and blocks in B on a lock (2 off-CPU samples of 1 s,
 * futex); thread 101 sleeps in C (1.5 s on a page-in, 0.5 s in
 * nanosleep).  The off-CPU samples are in the blocks of the sampler
 * thread 999, which is no thread of the experiment.
 */
#define MS_SAMPLER 999
static int write_ms(const char *dir)
{
	const uint64_t t0 = 1000000000ull, S1 = 1000000000ull;
	const int st[3][3] = { { F_A, F_MAIN }, { F_B, F_MAIN }, { F_C, F_MAIN } };
	struct sonde_expw *w = exp_begin(dir, t0);

	if (!w)
		return -1;
	for (int i = 0; i < 3; i++) {
		uint64_t pc[2] = { (faddr(st[i][0]) + 4) | SONDE_PC_EXACT, faddr(st[i][1]) + 8 };

		sonde_expw_stack(w, (uint64_t)i + 1, 0, 2, pc);
	}
	for (int k = 0; k < 3; k++)
		sonde_expw_sample_ms(w, 100, 0, t0 + (uint64_t)(k + 1) * S1, S1, S1 / 4, S1 / 10, 1);
	sonde_expw_offcpu(w, MS_SAMPLER, 100, SONDE_STATE_USER_LOCK, 202, t0 + 4 * S1, S1, 2);
	sonde_expw_offcpu(w, MS_SAMPLER, 100, SONDE_STATE_USER_LOCK, 202, t0 + 5 * S1, S1, 2);
	sonde_expw_offcpu(w, MS_SAMPLER, 101, SONDE_STATE_OTHER_WAIT, SONDE_OFFCPU_NO_SYSCALL, t0 + 4 * S1,
			  3 * S1 / 2, 3);
	sonde_expw_offcpu(w, MS_SAMPLER, 101, SONDE_STATE_OTHER_WAIT, 35, t0 + 5 * S1, S1 / 2, 3);
	/* the kernel's accounting: 100 lived 6 s, ran 3.01 s, queued 0.32 s;
	 * 101 lived 5 s, ran 0.02 s, queued 0 */
	sonde_expw_thread_end(w, 100, t0 + 6 * S1, t0, 3010000000ull, 2260000000ull, 750000000ull, 320000000ull);
	sonde_expw_thread_end(w, 101, t0 + 5 * S1, t0, 20000000ull, 10000000ull, 10000000ull, 0);
	sonde_expw_log(w, "<event kind=\"end\" time_ns=\"%llu\" samples=\"3\" offcpu_samples=\"4\" "
			  "offcpu_discarded=\"1\"/>\n",
		       (unsigned long long)(t0 + 6 * S1));
	return exp_end(w, t0 + 6 * S1);
}

/*
 * cpi.er: counter overflow profiling of cycles (counter 0) and insts
 * (counter 1), no clock profile.  Stacks and the events their samples
 * weigh (each stack's events in two samples of each counter):
 *
 *   1  A <- main        thread 100   cycles 300  insts 100
 *   2  B <- A <- main   thread 101   cycles 200  insts 400
 *   3  C <- main        thread 100   cycles  50  insts   0
 *   4  main             thread 100   cycles   0  insts 100
 *
 * so CPI (cycles / insts) is exclusive A 3, B 0.5, C and main 0 (a zero
 * denominator), inclusive A 1 (500 / 500), main and <Total> 550 / 600.
 * faults.er: a software counter alone (page-faults, on stack 1).
 */
static const struct {
	int f[3], depth, tid;
	uint64_t cycles, insts;
} cpi_stacks[] = {
	{ { F_A, F_MAIN }, 2, 100, 300, 100 },
	{ { F_B, F_A, F_MAIN }, 3, 101, 200, 400 },
	{ { F_C, F_MAIN }, 2, 100, 50, 0 },
	{ { F_MAIN }, 1, 100, 0, 100 },
};

static int write_counters(const char *dir, bool faults)
{
	const uint64_t t0 = 1000000000ull;
	struct sonde_expw *w = exp_begin(dir, t0);
	uint64_t t = t0;

	if (!w)
		return -1;
	if (faults) {
		sonde_expw_counter_decl(w, 0, "page-faults", "Page Faults", 1009);
	} else {
		sonde_expw_counter_decl(w, 0, "cycles", "CPU Cycles", 100);
		sonde_expw_counter_decl(w, 1, "insts", "Instructions Executed", 100);
	}
	for (size_t i = 0; i < N(cpi_stacks); i++) {
		uint64_t pc[3];

		for (int k = 0; k < cpi_stacks[i].depth; k++)
			pc[k] = k == 0 ? (faddr(cpi_stacks[i].f[k]) + 4) | SONDE_PC_EXACT
				       : faddr(cpi_stacks[i].f[k]) + 8;
		sonde_expw_stack(w, i + 1, 0, (uint16_t)cpi_stacks[i].depth, pc);
		if (faults) {
			if (i == 0)
				sonde_expw_counter(w, 100, 0, t += 1000, 1009, 1);
			continue;
		}
		/* two samples of each counter: a third and two thirds (rounded down) */
		uint64_t c = cpi_stacks[i].cycles, n = cpi_stacks[i].insts;

		if (c) {
			sonde_expw_counter(w, (uint32_t)cpi_stacks[i].tid, 0, t += 1000, c / 3, i + 1);
			sonde_expw_counter(w, (uint32_t)cpi_stacks[i].tid, 0, t += 1000, c - c / 3, i + 1);
		}
		if (n) {
			sonde_expw_counter(w, (uint32_t)cpi_stacks[i].tid, 1, t += 1000, n / 3, i + 1);
			sonde_expw_counter(w, (uint32_t)cpi_stacks[i].tid, 1, t += 1000, n - n / 3, i + 1);
		}
	}
	/* the threads, as the collector ends them */
	sonde_expw_thread_end(w, 100, t + 500, t0, 0, 0, 0, 0);
	sonde_expw_thread_end(w, 101, t + 500, t0, 0, 0, 0, 0);
	return exp_end(w, t + 1000);
}

/* The experiments for tests/t20-print-views.sh; with copy (a copy of
 * this program), also ambiguous.er: the worked example with the B side's
 * functions in the copy, so that C, E, F and G are each in two objects. */
static int write_all(const char *dir, const char *copy)
{
	char p[4200];

	if (find_exe() < 0)
		return -1;
	for (size_t i = 0; i < N(sets); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, sets[i].name);
		if (write_exp(p, sets[i].s, sets[i].n) < 0)
			return -1;
	}
	/* worked2.er: the worked example with E twice as slow and G gone */
	struct stk w2[N(worked)];

	memcpy(w2, worked, sizeof(w2));
	for (size_t i = 0; i < N(w2); i++) {
		if (w2[i].f[0] == F_E)
			w2[i].units *= 2;
		if (w2[i].f[0] == F_G)
			w2[i].units = 0;
	}
	snprintf(p, sizeof(p), "%s/worked2.er", dir);
	if (write_exp(p, w2, N(w2)) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/ms.er", dir);
	if (write_ms(p) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/cpi.er", dir);
	if (write_counters(p, false) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/faults.er", dir);
	if (write_counters(p, true) < 0)
		return -1;
	if (!copy)
		return 0;
	snprintf(p, sizeof(p), "%s/ambiguous.er", dir);
	return write_exp2(p, worked, N(worked), copy);
}

/* Runs every view in every mode on a model; returns the concatenated output. */
static char *all_views(const struct sonde_model *m, const uint32_t *ids, bool fsingle)
{
	struct sonde_view_opts o;
	char *all = NULL;
	size_t len = 0;
	FILE *acc = open_memstream(&all, &len);

	sonde_view_opts_init(&o);
	for (int pm = SONDE_PM_TEXT; pm <= SONDE_PM_HTML; pm++) {
		fputs(view(m, V_FUNCTIONS, &o, (enum sonde_printmode)pm, 0), acc);
		fputs(view(m, V_CC, &o, (enum sonde_printmode)pm, 0), acc);
		fputs(view(m, V_CALLTREE, &o, (enum sonde_printmode)pm, 0), acc);
		fputs(view(m, V_OBJECTS, &o, (enum sonde_printmode)pm, 0), acc);
		for (int f = 0; f < NF; f++)
			if (ids[f] != UINT32_MAX && sonde_model_incl(m, ids[f])[0]) {
				fputs(view(m, V_CSINGLE, &o, (enum sonde_printmode)pm, ids[f]), acc);
				if (fsingle)
					fputs(view(m, V_FSINGLE, &o, (enum sonde_printmode)pm, ids[f]), acc);
			}
	}
	fclose(acc);
	return all;
}

static void test_end_to_end(void)
{
	if (find_exe() < 0) {
		printf("not ok - cannot find this program's file and load address\n");
		nfail++;
		return;
	}
	CHECK(write_all(tmpdir, NULL) == 0);
	for (size_t i = 0; i < N(sets); i++) {
		char p[4200], err[512];
		uint32_t mid[NF], pid[NF];

		group = sets[i].name;
		snprintf(p, sizeof(p), "%s/%s", tmpdir, sets[i].name);
		struct sonde_exp *e = sonde_exp_open(p, err, sizeof(err));

		if (!e) {
			printf("not ok - %s: %s\n", sets[i].name, err);
			nfail++;
			continue;
		}
		CHECK_I(sonde_exp_nerrors(e), 0);
		struct sonde_profile prof;
		const struct sonde_exp *one[1] = { e };

		if (sonde_profile_build(&prof, one, 1, NULL, err, sizeof(err)) < 0) {
			printf("not ok - %s: profile: %s\n", sets[i].name, err);
			nfail++;
			sonde_exp_close(e);
			continue;
		}
		/* the functions are found by their real names */
		const struct sonde_model *pm = prof.model;

		for (int f = 0; f < NF; f++) {
			uint32_t id;

			pid[f] = UINT32_MAX;
			if (sonde_view_find(pm, fname[f], SONDE_NAME_LONG, &id, NULL, 0) == 1)
				pid[f] = id;
		}
		for (size_t k = 0; k < sets[i].n; k++)
			for (int d = 0; d < sets[i].s[k].depth; d++)
				CHECK(pid[sets[i].s[k].f[d]] != UINT32_MAX);
		for (size_t k = 0; k < sonde_model_nfuncs(pm); k++)
			CHECK(!sonde_model_funcinfo(pm, (uint32_t)k)->synthesized);

		/* every view in every mode reads as it does on the model of the
		 * same stacks (same names, objects and numbers) */
		struct sonde_model *mm = model_in(sets[i].s, sets[i].n, mid, exe, exe);

		for (int f = 0; f < NF; f++)
			if (pid[f] == UINT32_MAX)
				mid[f] = UINT32_MAX;
		char *want = all_views(mm, mid, false);
		char *got = all_views(pm, pid, false);

		CHECK_TEXT(got, want);
		free(want);
		free(got);
		/* -fsingle differs in the addresses only */
		struct sonde_view_opts o;

		sonde_view_opts_init(&o);
		const char *t = view(pm, V_FSINGLE, &o, SONDE_PM_TEXT, pid[F_MAIN]);

		CHECK_HAS(t, "main\n\tExclusive Total CPU Time: ", "\n\tInclusive Total CPU Time: ", " Load Object: ", exe);
		sonde_model_free(mm);

		/* threads: the B side on thread 2 */
		if (i == 0) {
			FILE *f = out_open();

			t = out_close(f, sonde_view_threads(f, &prof, &o, err, sizeof(err)), err);
			CHECK_HAS(t, "32.000 100.00   <Total>\n", "20.000  62.50   Thread 2 (tid 101)\n",
				  "12.000  37.50   Thread 1 (tid 100)\n");
			o.mode = SONDE_PM_JSON;
			f = out_open();
			t = out_close(f, sonde_view_threads(f, &prof, &o, err, sizeof(err)), err);
			CHECK_HAS(t, "{\"experiment\":1,\"thread\":2,\"tid\":101,\"name\":\"Thread 2 (tid 101)\",\"totalcpu\":20000000000,\"%totalcpu\":62.5}");
			sonde_profile_release(&prof);

			struct sonde_profile_opts po = { .thread_select = "2" };

			CHECK(sonde_profile_build(&prof, one, 1, &po, err, sizeof(err)) == 0);
			CHECK_I(sonde_model_total(prof.model)[0], 20 * SEC);
			uint32_t id;

			CHECK(sonde_view_find(prof.model, "C", SONDE_NAME_LONG, &id, NULL, 0) == 1);
			CHECK_I(sonde_model_incl(prof.model, id)[0], 15 * SEC);
			CHECK(sonde_view_find(prof.model, "A", SONDE_NAME_LONG, &id, NULL, 0) == 0);
		}
		sonde_profile_release(&prof);
		sonde_exp_close(e);
	}
}

/* The microstate metrics of ms.er (write_ms), by function and thread,
 * and -statistics' table of them. */
static void test_microstates(void)
{
	char p[4200], err[512];

	group = "microstates";
	snprintf(p, sizeof(p), "%s/ms.er", tmpdir);
	struct sonde_exp *e = sonde_exp_open(p, err, sizeof(err));

	if (!e) {
		printf("not ok - ms.er: %s\n", err);
		nfail++;
		return;
	}
	CHECK_I(sonde_exp_nerrors(e), 0);
	struct sonde_profile prof;
	const struct sonde_exp *one[1] = { e };

	if (sonde_profile_build(&prof, one, 1, NULL, err, sizeof(err)) < 0) {
		printf("not ok - ms.er: profile: %s\n", err);
		nfail++;
		sonde_exp_close(e);
		return;
	}
	const struct sonde_model *m = prof.model;
	const int64_t *tot = sonde_model_total(m);

	CHECK_I(sonde_profile_metric_index("user"), SONDE_M_USER);
	CHECK_I(sonde_profile_metric_index("total"), SONDE_M_TOTAL);
	CHECK_I(tot[SONDE_M_TOTALCPU], 3 * SEC);
	CHECK_I(tot[SONDE_M_SAMPLES], 3);
	CHECK_I(tot[SONDE_M_USER], 3 * SEC - 3 * SEC / 4);
	CHECK_I(tot[SONDE_M_SYSTEM], 3 * SEC / 4);
	CHECK_I(tot[SONDE_M_WAIT], 3 * SEC / 10);
	CHECK_I(tot[SONDE_M_ULOCK], 2 * SEC);
	CHECK_I(tot[SONDE_M_OWAIT], 2 * SEC);
	CHECK_I(tot[SONDE_M_TOTAL], 3 * SEC + 3 * SEC / 10 + 4 * SEC);
	uint32_t a, b, c, mn;

	CHECK(sonde_view_find(m, "A", SONDE_NAME_LONG, &a, NULL, 0) == 1);
	CHECK(sonde_view_find(m, "B", SONDE_NAME_LONG, &b, NULL, 0) == 1);
	CHECK(sonde_view_find(m, "C", SONDE_NAME_LONG, &c, NULL, 0) == 1);
	CHECK(sonde_view_find(m, "main", SONDE_NAME_LONG, &mn, NULL, 0) == 1);
	CHECK_I(sonde_model_excl(m, a)[SONDE_M_TOTAL], 3 * SEC + 3 * SEC / 10);
	CHECK_I(sonde_model_excl(m, a)[SONDE_M_SYSTEM], 3 * SEC / 4);
	CHECK_I(sonde_model_excl(m, a)[SONDE_M_ULOCK], 0);
	CHECK_I(sonde_model_excl(m, b)[SONDE_M_ULOCK], 2 * SEC);
	CHECK_I(sonde_model_excl(m, b)[SONDE_M_TOTALCPU], 0);
	CHECK_I(sonde_model_excl(m, b)[SONDE_M_SAMPLES], 0);
	CHECK_I(sonde_model_excl(m, c)[SONDE_M_OWAIT], 2 * SEC);
	CHECK_I(sonde_model_excl(m, c)[SONDE_M_TOTAL], 2 * SEC);
	CHECK_I(sonde_model_incl(m, mn)[SONDE_M_TOTAL], tot[SONDE_M_TOTAL]);
	CHECK_I(sonde_model_excl(m, mn)[SONDE_M_TOTAL], 0);
	/* threads: 100 and 101, not the sampler */
	CHECK_I(prof.nthreads, 2);
	if (prof.nthreads == 2) {
		CHECK(prof.threads[0].tid == 100 && prof.threads[1].tid == 101);
		CHECK_I(prof.threads[0].v[SONDE_M_TOTAL], 3 * SEC + 3 * SEC / 10 + 2 * SEC);
		CHECK_I(prof.threads[0].v[SONDE_M_ULOCK], 2 * SEC);
		CHECK_I(prof.threads[1].v[SONDE_M_OWAIT], 2 * SEC);
		CHECK_I(prof.threads[1].v[SONDE_M_TOTALCPU], 0);
	}
	/* the -threads view with the microstate metrics */
	struct sonde_view_opts o;
	FILE *f;
	const char *t;

	sonde_view_opts_init(&o);
	CHECK(sonde_mspec_parse(&o.metrics, "e.total:e.user:e.system:e.wait:e.ulock:e.owait:name", err,
				sizeof(err)) == 0);
	snprintf(o.sort.metric, sizeof(o.sort.metric), "total");
	f = out_open();
	t = out_close(f, sonde_view_threads(f, &prof, &o, err, sizeof(err)), err);
	CHECK_TEXT(t, "Threads sorted by metric: Total Thread Time\n"
		      "\n"
		      "Total    User   Sys.   Wait   User   Other   Name\n"
		      "Thread*  CPU    CPU    CPU    Lock   Wait\n"
		      "   sec.   sec.   sec.   sec.   sec.   sec.\n"
		      "  7.300  2.250  0.750  0.300  2.000  2.000   <Total>\n"
		      "  5.300  2.250  0.750  0.300  2.000  0.      Thread 1 (tid 100)\n"
		      "  2.000  0.     0.     0.     0.     2.000   Thread 2 (tid 101)\n");
	sonde_profile_release(&prof);

	/* -statistics: the recorded microstates beside the kernel's */
	f = out_open();
	t = out_close(f, sonde_view_statistics(f, one, 1, &o, err, sizeof(err)), err);
	CHECK_HAS(t, "Thread microstates of ms.er (sec.)",
		  "         100      2.250      0.750      0.300      2.000      0.000        5.300 |      2.260"
		  "      0.750      0.320      2.670\n",
		  "         101      0.000      0.000      0.000      0.000      2.000        2.000 |      0.010"
		  "      0.010      0.000      4.980\n",
		  "     <Total>      2.250      0.750      0.300      2.000      2.000        7.300 |      2.270"
		  "      0.760      0.320      7.650\n",
		  "no Trap CPU");
	o.mode = SONDE_PM_JSON;
	f = out_open();
	t = out_close(f, sonde_view_statistics(f, one, 1, &o, err, sizeof(err)), err);
	CHECK_HAS(t, "\"microstates\":[{\"experiment\":\"ms.er\",\"tid\":100,\"user_ns\":2250000000,"
		     "\"system_ns\":750000000,\"wait_ns\":300000000,\"ulock_ns\":2000000000,\"owait_ns\":0,"
		     "\"total_ns\":5300000000,\"utime_ns\":2260000000,\"stime_ns\":750000000,"
		     "\"run_delay_ns\":320000000,\"sleeping_ns\":2670000000}",
		  "{\"experiment\":\"ms.er\",\"tid\":\"<Total>\",");
	o.mode = SONDE_PM_CSV;
	f = out_open();
	t = out_close(f, sonde_view_statistics(f, one, 1, &o, err, sizeof(err)), err);
	CHECK_HAS(t, "\nexperiment,tid,user_ns,system_ns,wait_ns,ulock_ns,owait_ns,total_ns,utime_ns,stime_ns,"
		     "run_delay_ns,sleeping_ns\n",
		  "ms.er,101,0,0,0,0,2000000000,2000000000,10000000,10000000,0,4980000000\n");
	sonde_exp_close(e);

	/* an experiment without any of it: no table */
	snprintf(p, sizeof(p), "%s/worked.er", tmpdir);
	e = sonde_exp_open(p, err, sizeof(err));
	CHECK(e != NULL);
	if (e) {
		one[0] = e;
		o.mode = SONDE_PM_TEXT;
		f = out_open();
		t = out_close(f, sonde_view_statistics(f, one, 1, &o, err, sizeof(err)), err);
		CHECK(!strstr(t, "microstates"));
		CHECK(!sonde_metric_recorded(e, SONDE_M_USER) && !sonde_metric_recorded(e, SONDE_M_ULOCK) &&
		      sonde_metric_recorded(e, SONDE_M_TOTALCPU));
		sonde_exp_close(e);
	}
}

/* Opens tmpdir/name and builds its profile (e and prof set); false (said)
 * when it cannot. */
static bool open_profile(const char *name, struct sonde_exp **e, struct sonde_profile *prof)
{
	char p[4200], err[512];
	static const struct sonde_exp *one[1]; /* the profile keeps it */

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	*e = sonde_exp_open(p, err, sizeof(err));
	if (!*e) {
		printf("not ok - %s: %s\n", name, err);
		nfail++;
		return false;
	}
	CHECK_I(sonde_exp_nerrors(*e), 0);
	one[0] = *e;
	if (sonde_profile_build(prof, one, 1, NULL, err, sizeof(err)) < 0) {
		printf("not ok - %s: profile: %s\n", name, err);
		nfail++;
		sonde_exp_close(*e);
		return false;
	}
	return true;
}

/* Runs a view of a profile with spec and sort in mode; the output. */
static const char *pview(struct sonde_profile *prof, enum view v, const char *spec, const char *sort,
			 enum sonde_printmode mode, uint32_t func)
{
	struct sonde_view_opts o;
	char err[256];

	sonde_view_opts_init(&o);
	CHECK(sonde_mspec_parse(&o.metrics, spec, err, sizeof(err)) == 0);
	CHECK(sonde_sort_parse(&o.sort, sort, err, sizeof(err)) == 0);
	return view(prof->model, v, &o, mode, func);
}

/*
 * The derived metrics CPI and IPC on cpi.er and faults.er (write_counters):
 * they exist only where an experiment recorded both cycles and insts, are
 * exact ratios of each row's own values (exclusive, inclusive, attributed,
 * <Total>, a thread's, a source line's), sort by their value, and have no
 * percentage.
 */
static void test_derived(void)
{
	struct sonde_exp *e;
	struct sonde_profile prof;
	struct sonde_view_opts o;
	char err[512];
	const char *t;
	FILE *f;

	group = "derived";
	sonde_view_opts_init(&o);
	/* faults.er first: no experiment has named cycles or insts yet */
	CHECK(sonde_mspec_parse(&o.metrics, "e+CPI:name", err, sizeof(err)) < 0);
	if (open_profile("faults.er", &e, &prof)) {
		CHECK_I(sonde_model_nall(prof.model), sonde_model_nmetrics(prof.model));
		t = view(prof.model, V_METRIC_LIST, &o, SONDE_PM_TEXT, 0);
		CHECK_HAS(t, "e+%page-faults");
		CHECK(!strstr(t, "CPI") && !strstr(t, "IPC"));
		sonde_profile_release(&prof);
		sonde_exp_close(e);
	}
	if (!open_profile("cpi.er", &e, &prof))
		return;
	const struct sonde_model *m = prof.model;
	int nm = sonde_model_nmetrics(m), cyc = sonde_profile_metric_index("cycles");
	int ins = sonde_profile_metric_index("insts"), cpi = nm, ipc = nm + 1;
	uint32_t a, b, c, mn;

	CHECK(cyc >= 0 && ins >= 0);
	CHECK_I(sonde_model_nall(m), nm + 2);
	CHECK_S(sonde_model_metric(m, cpi)->name, "CPI");
	CHECK_S(sonde_model_metric(m, ipc)->name, "IPC");
	CHECK(sonde_model_metric(m, cpi)->unit == SONDE_UNIT_RATIO);
	CHECK(sonde_model_is_derived(m, cpi) && !sonde_model_is_derived(m, cyc));
	CHECK(sonde_view_find(m, "A", SONDE_NAME_LONG, &a, NULL, 0) == 1);
	CHECK(sonde_view_find(m, "B", SONDE_NAME_LONG, &b, NULL, 0) == 1);
	CHECK(sonde_view_find(m, "C", SONDE_NAME_LONG, &c, NULL, 0) == 1);
	CHECK(sonde_view_find(m, "main", SONDE_NAME_LONG, &mn, NULL, 0) == 1);
	const int64_t *tot = sonde_model_total(m);

	/* the parts, then their ratios: exact */
	CHECK_I(tot[cyc], 550);
	CHECK_I(tot[ins], 600);
	CHECK(sonde_model_value(m, cpi, tot) == 550.0 / 600.0);
	CHECK(sonde_model_value(m, ipc, tot) == 600.0 / 550.0);
	CHECK(sonde_model_value(m, cpi, sonde_model_excl(m, a)) == 3.0);
	CHECK(sonde_model_value(m, ipc, sonde_model_excl(m, a)) == 100.0 / 300.0);
	CHECK(sonde_model_value(m, cpi, sonde_model_excl(m, b)) == 0.5);
	CHECK(sonde_model_value(m, ipc, sonde_model_excl(m, b)) == 2.0);
	CHECK(sonde_model_value(m, cpi, sonde_model_excl(m, c)) == 0.0); /* 50 / 0 */
	CHECK(sonde_model_value(m, ipc, sonde_model_excl(m, c)) == 0.0);
	CHECK(sonde_model_value(m, cpi, sonde_model_excl(m, mn)) == 0.0);
	CHECK(sonde_model_value(m, ipc, sonde_model_excl(m, mn)) == 0.0); /* 100 / 0 */
	CHECK(sonde_model_value(m, cpi, sonde_model_incl(m, a)) == 1.0);
	CHECK(sonde_model_value(m, cpi, sonde_model_incl(m, b)) == 0.5);
	CHECK(sonde_model_value(m, cpi, sonde_model_incl(m, mn)) == 550.0 / 600.0);
	/* attributed: main -> A carries A's inclusive 500 / 500; A -> B
	 * 200 / 400; main -> C 50 / 0 */
	size_t ne;
	const struct sonde_edge *ed = sonde_model_callers(m, a, &ne);

	CHECK(ne == 1 && ed[0].func == mn && sonde_model_value(m, cpi, ed[0].v) == 1.0);
	ed = sonde_model_callees(m, a, &ne);
	CHECK(ne == 1 && ed[0].func == b && sonde_model_value(m, cpi, ed[0].v) == 0.5 &&
	      sonde_model_value(m, ipc, ed[0].v) == 2.0);
	ed = sonde_model_callees(m, mn, &ne);
	CHECK_I(ne, 2);
	for (size_t k = 0; k < ne; k++)
		CHECK(sonde_model_value(m, cpi, ed[k].v) == (ed[k].func == a ? 1.0 : 0.0));
	/* exact order: 3 / 1 above 1 / 1, equal ratios of different parts, a
	 * zero denominator as 0 */
	const int64_t *ea = sonde_model_excl(m, a), *eb = sonde_model_excl(m, b), *ec = sonde_model_excl(m, c);

	CHECK_I(sonde_model_cmp(m, cpi, ea, eb), 1);
	CHECK_I(sonde_model_cmp(m, cpi, eb, ea), -1);
	CHECK_I(sonde_model_cmp(m, cpi, ec, sonde_model_excl(m, mn)), 0);
	CHECK_I(sonde_model_cmp(m, cpi, sonde_model_incl(m, a), sonde_model_incl(m, a)), 0);
	CHECK_I(sonde_model_cmp(m, ipc, ea, ec), 1);

	/* the views: sorted by e.CPI (A 3, B 0.5, then C and main, 0, by name) */
	t = pview(&prof, V_FUNCTIONS, "e+CPI:i+CPI:e+IPC:e+cycles:e+insts:name", "e.CPI", SONDE_PM_TEXT, 0);
	CHECK_TEXT(t, "Functions sorted by metric: Exclusive Cycles Per Instruction\n"
		      "\n"
		      "Excl.  Incl.  Excl.  Excl.   Excl.          Name\n"
		      "CPI*   CPI    IPC    CPU     Instructions\n"
		      "                     Cycles  Executed\n"
		      "\n"
		      "0.917  0.917  1.091     550           600   <Total>\n"
		      "3.000  1.000  0.333     300           100   A\n"
		      "0.500  0.500  2.000     200           400   B\n"
		      "0.     0.     0.         50             0   C\n"
		      "0.     0.917  0.          0           100   main\n");
	t = pview(&prof, V_FUNCTIONS, "e+CPI:i+CPI:e+IPC:name", "e.CPI", SONDE_PM_CSV, 0);
	CHECK_TEXT(t, "name,object,e.CPI,i.CPI,e.IPC\n"
		      "<Total>,,0.9166666666666666,0.9166666666666666,1.0909090909090908\n"
		      "A,test_views,3,1,0.3333333333333333\n"
		      "B,test_views,0.5,0.5,2\n"
		      "C,test_views,0,0,0\n"
		      "main,test_views,0,0.9166666666666666,0\n");
	t = pview(&prof, V_FUNCTIONS, "e+CPI:name", "i.CPI", SONDE_PM_JSON, 0);
	CHECK_TEXT(t, "{\"view\":\"functions\",\"metrics\":\"e+CPI:name\",\"sort\":\"i.CPI\",\"rows\":["
		      "{\"name\":\"<Total>\",\"object\":null,\"e.CPI\":0.9166666666666666},"
		      "{\"name\":\"A\",\"object\":\"test_views\",\"e.CPI\":3},"
		      "{\"name\":\"main\",\"object\":\"test_views\",\"e.CPI\":0},"
		      "{\"name\":\"B\",\"object\":\"test_views\",\"e.CPI\":0.5},"
		      "{\"name\":\"C\",\"object\":\"test_views\",\"e.CPI\":0}]}\n");
	t = pview(&prof, V_FUNCTIONS, "e+IPC:name", "e.IPC", SONDE_PM_TEXT, 0);
	CHECK_TEXT(t, "Functions sorted by metric: Exclusive Instructions Per Cycle\n"
		      "\n"
		      "Excl.   Name\n"
		      "IPC*\n"
		      "\n"
		      "1.091   <Total>\n"
		      "2.000   B\n"
		      "0.333   A\n"
		      "0.      C\n"
		      "0.      main\n");
	t = pview(&prof, V_CSINGLE, "a+CPI:e+CPI:i+CPI:name", "a.CPI", SONDE_PM_TEXT, a);
	CHECK_TEXT(t, "Callers and callees sorted by metric: Attributed Cycles Per Instruction\n"
		      "\n"
		      "Attr.  Excl.  Incl.   Name\n"
		      "CPI*   CPI    CPI\n"
		      "\n"
		      "1.000  0.     0.917   main\n"
		      "3.000  3.000  1.000  *A\n"
		      "0.500  0.500  0.500   B\n");
	t = pview(&prof, V_CC, "a+IPC:name", "a.IPC", SONDE_PM_CSV, 0);
	CHECK_TEXT(t, "function,role,name,object,a.IPC\n"
		      "<Total>,function,<Total>,,0\n"
		      "<Total>,callee,main,test_views,1.0909090909090908\n"
		      "B,caller,A,test_views,2\n"
		      "B,function,B,test_views,2\n"
		      "main,caller,<Total>,,1.0909090909090908\n"
		      "main,function,main,test_views,0\n"
		      "main,callee,A,test_views,1\n"
		      "main,callee,C,test_views,0\n"
		      "A,caller,main,test_views,1\n"
		      "A,function,A,test_views,0.3333333333333333\n"
		      "A,callee,B,test_views,2\n"
		      "C,caller,main,test_views,0\n"
		      "C,function,C,test_views,0\n");
	t = pview(&prof, V_CALLTREE, "e+CPI:i+CPI:name", "i.CPI", SONDE_PM_TEXT, 0);
	CHECK_TEXT(t, "Functions Call Tree. Children sorted by metric: Inclusive Cycles Per Instruction\n"
		      "\n"
		      "Excl.  Incl.   Name\n"
		      "CPI    CPI*\n"
		      "\n"
		      "0.917  0.917   <Total>\n"
		      "0.     0.917   +-main\n"
		      "3.000  1.000     +-A\n"
		      "0.500  0.500     | +-B\n"
		      "0.     0.        +-C\n");
	t = pview(&prof, V_FSINGLE, "e+CPI:i+CPI:name", "e.CPI", SONDE_PM_TEXT, a);
	CHECK_HAS(t, "A\n\tExclusive Cycles Per Instruction: 3.000\n\tInclusive Cycles Per Instruction: 1.000\n");
	t = pview(&prof, V_OBJECTS, "e+CPI:i+CPI:name", "e.CPI", SONDE_PM_CSV, 0);
	CHECK_HAS(t, "name,path,e.CPI,i.CPI\n<Total>,,0.9166666666666666,0.9166666666666666\n",
		  "tests/test_views,0.9166666666666666,0.9166666666666666\n");
	t = pview(&prof, V_METRIC_LIST, "e+CPI:name", "e.CPI", SONDE_PM_TEXT, 0);
	CHECK_HAS(t, "Current metrics: e+CPI:name\n", "Current Sort Metric: Exclusive Cycles Per Instruction ( e.CPI )\n",
		  " Exclusive Cycles Per Instruction: e+CPI\n", " Attributed Instructions Per Cycle: a+IPC\n",
		  "e+%cycles\n");
	CHECK(!strstr(t, "%CPI") && !strstr(t, "%IPC"));
	t = pview(&prof, V_METRIC_LIST, "e+CPI:name", "e.CPI", SONDE_PM_JSON, 0);
	CHECK_HAS(t, "{\"name\":\"CPI\",\"title\":\"Cycles Per Instruction\",\"unit\":\"ratio\",\"flavors\":\"eia\"}");
	/* threads: 100 ran A, C and main (350 / 200), 101 B (200 / 400) */
	sonde_view_opts_init(&o);
	CHECK(sonde_mspec_parse(&o.metrics, "e+CPI:e+cycles:e+insts:name", err, sizeof(err)) == 0);
	CHECK(sonde_sort_parse(&o.sort, "e.CPI", err, sizeof(err)) == 0);
	f = out_open();
	t = out_close(f, sonde_view_threads(f, &prof, &o, err, sizeof(err)), err);
	CHECK_TEXT(t, "Threads sorted by metric: Cycles Per Instruction\n"
		      "\n"
		      "CPI*   CPU     Instructions   Name\n"
		      "       Cycles  Executed\n"
		      "\n"
		      "0.917     550           600   <Total>\n"
		      "1.750     350           200   Thread 1 (tid 100)\n"
		      "0.500     200           400   Thread 2 (tid 101)\n");
	/* source lines: each function's line sums its stacks, then divides */
	f = out_open();
	o.mode = SONDE_PM_CSV;
	t = out_close(f, sonde_view_lines(f, &prof, &o, err, sizeof(err)), err);
	CHECK_HAS(t, "name,function,file,line,e.CPI,e.cycles,e.insts\n<Total>,,,,0.9166666666666666,550,600\n\"A, line ",
		  ",A,", "tests/unit/test_views.c,109,3,300,100\n\"B, line ", ",B,", "test_views.c,110,0.5,200,400\n",
		  ",C,", "test_views.c,111,0,50,0\n", ",main,", "test_views.c,");
	/* -compare of the experiment with itself: the same ratios, deltas 0 */
	const struct sonde_model *ms[2] = { m, m };
	const char *names[2] = { "cpi.er", "cpi.er" };

	o.mode = SONDE_PM_TEXT;
	o.compare = SONDE_CMP_DELTA;
	f = out_open();
	t = out_close(f, sonde_view_compare(f, ms, names, 2, false, &o, err, sizeof(err)), err);
	CHECK_TEXT(t, "Functions sorted by metric: Exclusive Cycles Per Instruction\n"
		      "\n"
		      "cpi.er  cpi.er  cpi.er  cpi.er  cpi.er        cpi.er\n"
		      "Excl.   Excl.   Excl.   Excl.   Excl.         Excl.          Name\n"
		      "CPI*    CPI     CPU     CPU     Instructions  Instructions\n"
		      "                Cycles  Cycles  Executed      Executed\n"
		      "         delta           delta                       delta\n"
		      " 0.917  +0.        550      +0           600            +0   <Total>\n"
		      " 3.000  +0.        300      +0           100            +0   A\n"
		      " 0.500  +0.        200      +0           400            +0   B\n"
		      " 0.     +0.         50      +0             0            +0   C\n"
		      " 0.     +0.          0      +0           100            +0   main\n");

	/* parsing: no percentage of a ratio */
	CHECK(sonde_mspec_parse(&o.metrics, "e.%CPI:name", err, sizeof(err)) < 0);
	CHECK_HAS(err, "metric 'CPI' is a ratio and has no percentage of <Total> (give e+CPI, not e.%CPI)");
	CHECK(sonde_mspec_parse(&o.metrics, "ei%IPC:name", err, sizeof(err)) < 0);
	CHECK(sonde_mspec_parse(&o.metrics, "ei.IPC:a+CPI:name", err, sizeof(err)) == 0);
	sonde_profile_release(&prof);
	sonde_exp_close(e);

	/* faults.er again, now that cycles and insts have slots: still none */
	if (open_profile("faults.er", &e, &prof)) {
		CHECK_I(sonde_model_nall(prof.model), sonde_model_nmetrics(prof.model));
		sonde_view_opts_init(&o);
		CHECK(sonde_mspec_parse(&o.metrics, "e+CPI:name", err, sizeof(err)) == 0);
		f = out_open();
		CHECK_I(sonde_view_functions(f, prof.model, &o, err, sizeof(err)), -SONDE_ERR_NOT_RECORDED);
		fclose(f);
		CHECK_S(err, "metric 'CPI' is not recorded in this experiment (it needs both cycles and insts: "
			     "sonde collect -h cycles,on,insts,on)");
		sonde_profile_release(&prof);
		sonde_exp_close(e);
	}
}

/* Exclusive CPU of the model functions of the object with this path. */
static int64_t object_excl(const struct sonde_model *m, const char *path)
{
	int64_t v = 0;

	for (size_t f = 0; f < sonde_model_nfuncs(m); f++) {
		const struct sonde_mfunc *fi = sonde_model_funcinfo(m, (uint32_t)f);

		if (!strcmp(sonde_model_objectinfo(m, fi->object)->path, path))
			v += sonde_model_excl(m, (uint32_t)f)[0];
	}
	return v;
}

/*
 * The model of an experiment where libb.so was loaded at the addresses of
 * an unloaded liba.so: one interned stack (the same pcs) sampled in both,
 * each sample goes to the object of its time; and a stack cut at the depth
 * limit gets a <Truncated-stack> root carrying its time.
 */
static void test_reuse_and_truncation(void)
{
	char dir[4200], err[512];
	const uint64_t t0 = 1000000000ull, ms = 1000000ull;
	struct sonde_expw *w;

	group = "reuse";
	snprintf(dir, sizeof(dir), "%s/reuse.er", tmpdir);
	CHECK((w = sonde_expw_create(dir, err, sizeof(err))) != NULL);
	if (!w)
		return;
	sonde_expw_log_preamble(w, 100, t0);
	sonde_expw_object(w, 1, "/nonexistent/liba.so", 0x10000, 0x10000, 0x20000, t0);
	sonde_expw_unload(w, 1, t0 + 10 * ms);
	sonde_expw_object(w, 2, "/nonexistent/libb.so", 0x10000, 0x10000, 0x20000, t0 + 20 * ms);
	const uint64_t st[2] = { 0x10100 | SONDE_PC_EXACT, 0x10200 };

	sonde_expw_stack(w, 7, 0, 2, st);
	sonde_expw_stack(w, 8, SONDE_STACK_TRUNCATED, 2, st);
	for (int i = 0; i < 3; i++) /* liba's time: 3 ms */
		sonde_expw_sample(w, 100, 0, t0 + (uint64_t)(1 + i) * ms, ms, 7);
	for (int i = 0; i < 5; i++) /* libb's time: 5 ms, the same stack id */
		sonde_expw_sample(w, 100, 0, t0 + (uint64_t)(21 + i) * ms, ms, 7);
	sonde_expw_sample(w, 100, 0, t0 + 30 * ms, 2 * ms, 8); /* cut: 2 ms in libb */
	CHECK(sonde_expw_finish(w, 0, err, sizeof(err)) == 0);

	struct sonde_exp *e = sonde_exp_open(dir, err, sizeof(err));

	CHECK(e != NULL);
	if (!e)
		return;
	struct sonde_profile prof;
	const struct sonde_exp *one[1] = { e };

	CHECK(sonde_profile_build(&prof, one, 1, NULL, err, sizeof(err)) == 0);
	const struct sonde_model *m = prof.model;

	CHECK_I(sonde_model_total(m)[0], 10 * (int64_t)ms);
	CHECK_I(object_excl(m, "/nonexistent/liba.so"), 3 * (int64_t)ms);
	CHECK_I(object_excl(m, "/nonexistent/libb.so"), 7 * (int64_t)ms);
	uint32_t id;

	CHECK(sonde_view_find(m, SONDE_TRUNCATED_STACK, SONDE_NAME_LONG, &id, NULL, 0) == 1);
	CHECK_I(sonde_model_incl(m, id)[0], 2 * (int64_t)ms);
	CHECK_I(sonde_model_excl(m, id)[0], 0);
	sonde_profile_release(&prof);
	sonde_exp_close(e);
}

/* json and csv strings are UTF-8 whatever the bytes of a name: a byte
 * that is not UTF-8 as U+F7XY (sonde/utf8.h), valid sequences as they are. */
static void test_utf8_out(void)
{
	group = "utf-8 output";
	static const struct {
		const char *in, *json, *csv;
	} c[] = {
		{ "/a\xff\xfe/b", "\"/a\\uf7ff\\uf7fe/b\"", "/a\xef\x9f\xbf\xef\x9f\xbe/b" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
		  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		/* overlong, surrogate, cut short, stray continuation */
		{ "\xc0\xaf\xed\xa0\x80\xe2\x82", "\"\\uf7c0\\uf7af\\uf7ed\\uf7a0\\uf780\\uf7e2\\uf782\"",
		  "\xef\x9f\x80\xef\x9e\xaf\xef\x9f\xad\xef\x9e\xa0\xef\x9e\x80\xef\x9f\xa2\xef\x9e\x82" },
		{ "q\"\x01,", "\"q\\\"\\u0001,\"", "\"q\"\"\x01,\"" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		vt_json_str(f, c[i].in);
		fclose(f);
		CHECK_S(buf, c[i].json);
		free(buf);
		buf = NULL;
		f = open_memstream(&buf, &len);
		vt_csv_str(f, c[i].in);
		fclose(f);
		CHECK_S(buf, c[i].csv);
		free(buf);
	}
}

int main(int argc, char **argv)
{
	show = getenv("SONDE_TEST_SHOW") != NULL;
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "--write")) {
		if (write_all(argv[2], argc == 4 ? argv[3] : NULL) < 0) {
			fprintf(stderr, "test_views: cannot write the experiments into '%s'\n", argv[2]);
			return 1;
		}
		return 0;
	}
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_parsers();
	test_names();
	test_utf8_out();
	test_worked_model();
	test_recursion_model();
	test_compare();
	test_reuse_and_truncation();
	test_threads();
	test_statistics();
	test_end_to_end();
	test_microstates();
	test_derived();
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
