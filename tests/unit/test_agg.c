/*
 * test_agg: the aggregation library (lib/agg/agg.c) and the sonde agg language
 * (lib/agg/dlang_*.c), checked exactly: bucket arithmetic, storage, printed text
 * of every function, sorting, merging, clear/trunc/normalize, language
 * errors, stdin and experiment event sources.
 *
 * Expected outputs come from illumos DTrace's rules (with sonde's choices
 * where implementations differ, doc/sonde-agg.md) and from the expected
 * outputs of oracle/dtrace-utils' test suite (test/unittest/aggs/tst.*.r),
 * embedded below verbatim.  Where oracle/dtrace-utils departs from illumos
 * (llquantize's underflow rows) the .r text is embedded
 * as it is and the rows that differ are rewritten by illumos_rows(), which
 * says what it changes; every other row must match byte for byte.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ftw.h>
#include <sys/stat.h>

#include "check.h"
#include "agg/agg.h"
#include "agg/dlang.h"
#include "reader/expwriter.h"



/* Exact text comparison; on failure shows the first differing line. */
static void check_text(const char *got, const char *want, const char *what, int line)
{
	if (got && !strcmp(got, want)) {
		npass++;
		return;
	}
	nfail++;
	printf("not ok - %s: line %d: %s: text differs\n", group, line, what);
	if (!got) {
		printf("#   got nothing\n");
		return;
	}
	const char *g = got, *w = want;
	int ln = 1;

	while (*g && *w) {
		const char *ge = strchr(g, '\n'), *we = strchr(w, '\n');
		size_t gl = ge ? (size_t)(ge - g) : strlen(g), wl = we ? (size_t)(we - w) : strlen(w);

		if (gl != wl || memcmp(g, w, gl) || !ge != !we) {
			printf("#   line %d:\n#   got  [%.*s]%s\n#   want [%.*s]%s\n", ln, (int)gl, g,
			       ge ? "" : " (no newline)", (int)wl, w, we ? "" : " (no newline)");
			return;
		}
		g += gl + 1;
		w += wl + 1;
		ln++;
	}
	printf("#   line %d: got %s, want %s\n", ln, *g ? "more text" : "the end",
	       *w ? "more text" : "the end");
	printf("#   got:\n%s#   want:\n%s", got, want);
}

#define CHECK_T(got, want) check_text((got), (want), #got, __LINE__)
#define CHECK_T_FREE(got, want)                                                                  \
	do {                                                                                     \
		char *t_ = (got);                                                                \
		check_text(t_, (want), #got, __LINE__);                                          \
		free(t_);                                                                        \
	} while (0)

/* ---- helpers -------------------------------------------------------------- */

/* Strings made for expectations live until the end (kept for ASAN=1). */
static char **kept;
static size_t nkept;

static char *keep(char *s)
{
	char **k = realloc(kept, (nkept + 1) * sizeof(*k));

	if (!k || !s) {
		printf("# out of memory\n");
		exit(1);
	}
	kept = k;
	kept[nkept++] = s;
	return s;
}

static void free_kept(void)
{
	for (size_t i = 0; i < nkept; i++)
		free(kept[i]);
	free(kept);
}

struct cap {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *cap_open(struct cap *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	if (!c->f) {
		perror("open_memstream");
		exit(1);
	}
	return c->f;
}

static char *cap_close(struct cap *c)
{
	fclose(c->f);
	return c->buf;
}

static struct sonde_agg_key KI(int64_t v)
{
	struct sonde_agg_key k = { .type = SONDE_AGG_KEY_I64, .i = v };

	return k;
}

static struct sonde_agg_key KT(enum sonde_agg_keytype t, int64_t v)
{
	struct sonde_agg_key k = { .type = t, .i = v };

	return k;
}

static struct sonde_agg_key KS(struct sonde_aggset *set, const char *s)
{
	struct sonde_agg_key k = { .type = SONDE_AGG_KEY_STR, .s = sonde_aggset_intern(set, s, strlen(s)) };

	return k;
}

static struct sonde_agg *mk(struct sonde_aggset *set, const char *name, enum sonde_agg_func f,
			    const int64_t *args, int nargs, unsigned nkeys)
{
	char err[256];
	struct sonde_agg *a = sonde_agg_create(set, name, f, args, nargs, nkeys, err, sizeof(err));

	if (!a) {
		printf("# cannot create @%s: %s\n", name, err);
		exit(1);
	}
	return a;
}

#define ARGS(...) ((const int64_t[]){ __VA_ARGS__ }), (int)(sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t))

static void upd(struct sonde_agg *a, const struct sonde_agg_key *k, int64_t v, int64_t incr)
{
	if (sonde_agg_update(a, k, v, incr))
		printf("# update failed\n"), nfail++;
}

/* What dtrace prints at exit for set. */
static char *end_text(struct sonde_aggset *set, const struct sonde_agg_opts *o)
{
	struct cap c;

	sonde_aggset_print_end(cap_open(&c), set, o);
	return cap_close(&c);
}

/* A single aggregation's elements as printed at exit (no leading newline). */
static char *agg_text(struct sonde_agg *a, const struct sonde_agg_opts *o)
{
	struct cap c;

	sonde_agg_printa(cap_open(&c), &a, 1, o);
	char *s = cap_close(&c);

	memmove(s, s + 1, strlen(s)); /* printa's leading "\n" */
	return s;
}

/* The error of creating an aggregation with these arguments ("" if none). */
static const char *create_err(enum sonde_agg_func f, const int64_t *args, int nargs)
{
	static char err[256];
	struct sonde_aggset *set = sonde_aggset_new();

	err[0] = '\0';
	if (sonde_agg_create(set, "x", f, args, nargs, 0, err, sizeof(err)))
		err[0] = '\0';
	sonde_aggset_free(set);
	return err;
}

/*
 * Runs program prog over input (stdin events); returns the output (BEGIN,
 * END and the end-of-run text) or, when prog does not compile, NULL with
 * "L:C: message" in err.  *problems: events skipped.
 */
static char *run(const char *prog, const char *input, const struct sonde_agg_opts *o, char *err,
		 size_t errlen, uint64_t *problems, char *pmsg, size_t pmsglen)
{
	const struct sonde_dl_kind *kinds[] = { &sonde_dl_kind_stdin };
	struct sonde_dl_error e;
	struct sonde_dl_prog *p = sonde_dl_compile(prog, kinds, 1, o, &e);
	char buf[256];
	struct cap c;

	if (!p) {
		snprintf(err, errlen, "%u:%u: %s", e.line, e.col, e.msg);
		return NULL;
	}
	FILE *in = tmpfile();

	if (!in || fputs(input, in) < 0 || fflush(in) || fseek(in, 0, SEEK_SET)) {
		printf("# cannot make the input file\n");
		exit(1);
	}
	FILE *out = cap_open(&c);

	if (sonde_dl_begin(p, out, buf, sizeof(buf)) || sonde_dl_run_stdin(p, fileno(in), buf, sizeof(buf)) < 0 ||
	    sonde_dl_end(p, out, buf, sizeof(buf)))
		printf("# run failed: %s\n", buf), nfail++;
	fclose(in);
	uint64_t np = sonde_dl_problems(p, pmsg ? pmsg : buf, pmsg ? pmsglen : sizeof(buf));

	if (problems)
		*problems = np;
	sonde_dl_free(p);
	return cap_close(&c);
}

/* run() for programs that must compile and run without problems. */
static char *RUN(const char *prog, const char *input)
{
	char err[600], pm[400];
	uint64_t np;
	char *s = run(prog, input, NULL, err, sizeof(err), &np, pm, sizeof(pm));

	if (!s)
		printf("# '%s' does not compile: %s\n", prog, err), nfail++;
	else if (np)
		printf("# '%s': %s\n", prog, pm), nfail++;
	return s;
}

/* The compile error of prog, "L:C: message", or "" when it compiles. */
static const char *ERR(const char *prog)
{
	static char err[600];
	const struct sonde_dl_kind *kinds[] = { &sonde_dl_kind_stdin };
	struct sonde_dl_error e;
	struct sonde_dl_prog *p = sonde_dl_compile(prog, kinds, 1, NULL, &e);

	if (p) {
		sonde_dl_free(p);
		return "";
	}
	snprintf(err, sizeof(err), "%u:%u: %s", e.line, e.col, e.msg);
	return err;
}

#define CHECK_ERR(prog, want)                                                                    \
	do {                                                                                     \
		const char *e_ = ERR(prog);                                                      \
		char m_[1400];                                                                   \
		snprintf(m_, sizeof(m_), "error of '%s'\n#   got  [%s]\n#   want [%s]", prog, e_, want); \
		check(!strcmp(e_, want), m_, __LINE__);                                          \
	} while (0)

/* The numbers from..to, one a line. */
static char *seq(int64_t from, int64_t to)
{
	struct cap c;
	FILE *f = cap_open(&c);

	for (int64_t i = from; i <= to; i++)
		fprintf(f, "%" PRId64 "\n", i);
	return keep(cap_close(&c));
}

/*
 * oracle/dtrace-utils prints llquantize's underflow differently from illumos
 * (spec 4.4, "llquantize underflow label"): it adds a row below the
 * underflow bucket (drop: "-1", "-27") and labels the underflow bucket "0"
 * or "abs() < N" where illumos prints "< N".  Returns r with the row
 * labelled drop removed and the label from replaced by to; nothing else is
 * touched.
 */
static char *illumos_rows(const char *r, const char *drop, const char *from, const char *to)
{
	struct cap c;
	FILE *f = cap_open(&c);

	for (const char *p = r; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		char label[64] = "";

		if (n > 17 && p[16] == ' ' && (p[17] == '|' || p[17] == ' ')) {
			const char *s = p;

			while (s < p + 16 && *s == ' ')
				s++;
			snprintf(label, sizeof(label), "%.*s", (int)(p + 16 - s), s);
		}
		if (drop && !strcmp(label, drop)) {
			p += n;
			continue;
		}
		if (from && !strcmp(label, from))
			fprintf(f, "%16s%.*s", to, (int)n - 16, p + 16);
		else
			fprintf(f, "%.*s", (int)n, p);
		p += n;
	}
	return keep(cap_close(&c));
}

/* oracle/dtrace-utils test/unittest/aggs/tst.cleardenormalize.r */
static const char r_cleardenormalize[] =
	"Denormalized data before clear:\n"
	"\n"
	"        0              500\n"
	"        1              700\n"
	"        2              900\n"
	"        3             1100\n"
	"        4             1300\n"
	"Aggregation data after clear():\n"
	"\n"
	"        0                0\n"
	"        1                0\n"
	"        2                0\n"
	"        3                0\n"
	"        4                0\n"
	"Final (denormalized) aggregation data:\n"
	"\n"
	"        0             1500\n"
	"        1             2700\n"
	"        2             2900\n"
	"        3             3100\n"
	"        4             3300\n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.denormalize.r */
static const char r_denormalize[] =
	"\n"
	"            19000\n"
	"            19000\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.empty.r */
static const char r_empty[] =
	"\n"
	"         12345678\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.llquantincr.r */
static const char r_llquantincr[] =
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"              -1 |                                         0        \n"
	"               0 |                                         2        \n"
	"               1 |                                         2        \n"
	"               2 |                                         2        \n"
	"               3 |                                         2        \n"
	"               4 |                                         2        \n"
	"               5 |                                         2        \n"
	"               6 |                                         2        \n"
	"               7 |                                         2        \n"
	"               8 |                                         2        \n"
	"               9 |                                         2        \n"
	"              10 |                                         10       \n"
	"              15 |                                         10       \n"
	"              20 |                                         10       \n"
	"              25 |                                         10       \n"
	"              30 |                                         10       \n"
	"              35 |                                         10       \n"
	"              40 |                                         10       \n"
	"              45 |                                         10       \n"
	"              50 |                                         10       \n"
	"              55 |                                         10       \n"
	"              60 |                                         10       \n"
	"              65 |                                         10       \n"
	"              70 |                                         10       \n"
	"              75 |                                         10       \n"
	"              80 |                                         10       \n"
	"              85 |                                         10       \n"
	"              90 |                                         10       \n"
	"              95 |                                         10       \n"
	"             100 |@                                        100      \n"
	"             150 |@                                        100      \n"
	"             200 |@                                        100      \n"
	"             250 |@                                        100      \n"
	"             300 |@                                        100      \n"
	"             350 |@                                        100      \n"
	"             400 |@                                        100      \n"
	"             450 |@                                        100      \n"
	"             500 |@                                        100      \n"
	"             550 |@                                        100      \n"
	"             600 |@                                        100      \n"
	"             650 |@                                        100      \n"
	"             700 |@                                        100      \n"
	"             750 |@                                        100      \n"
	"             800 |@                                        100      \n"
	"             850 |@                                        100      \n"
	"             900 |@                                        100      \n"
	"             950 |@                                        100      \n"
	"            1000 |@@@@@@@@@@@@@                            1000     \n"
	"            1500 |                                         0        \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.llquantize.r */
static const char r_llquantize[] =
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"              -1 |                                         0        \n"
	"               0 |                                         1        \n"
	"               1 |                                         1        \n"
	"               2 |                                         1        \n"
	"               3 |                                         1        \n"
	"               4 |                                         1        \n"
	"               5 |                                         1        \n"
	"               6 |                                         1        \n"
	"               7 |                                         1        \n"
	"               8 |                                         1        \n"
	"               9 |                                         1        \n"
	"              10 |                                         5        \n"
	"              15 |                                         5        \n"
	"              20 |                                         5        \n"
	"              25 |                                         5        \n"
	"              30 |                                         5        \n"
	"              35 |                                         5        \n"
	"              40 |                                         5        \n"
	"              45 |                                         5        \n"
	"              50 |                                         5        \n"
	"              55 |                                         5        \n"
	"              60 |                                         5        \n"
	"              65 |                                         5        \n"
	"              70 |                                         5        \n"
	"              75 |                                         5        \n"
	"              80 |                                         5        \n"
	"              85 |                                         5        \n"
	"              90 |                                         5        \n"
	"              95 |                                         5        \n"
	"             100 |@                                        50       \n"
	"             150 |@                                        50       \n"
	"             200 |@                                        50       \n"
	"             250 |@                                        50       \n"
	"             300 |@                                        50       \n"
	"             350 |@                                        50       \n"
	"             400 |@                                        50       \n"
	"             450 |@                                        50       \n"
	"             500 |@                                        50       \n"
	"             550 |@                                        50       \n"
	"             600 |@                                        50       \n"
	"             650 |@                                        50       \n"
	"             700 |@                                        50       \n"
	"             750 |@                                        50       \n"
	"             800 |@                                        50       \n"
	"             850 |@                                        50       \n"
	"             900 |@                                        50       \n"
	"             950 |@                                        50       \n"
	"            1000 |@@@@@@@@@@@@@                            500      \n"
	"            1500 |                                         0        \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.llquantize_basic.r, printa(@allvals) */
static const char r_llquantize_basic_allvals[] =
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"               0                     |                     0        \n"
	"               1                     |@@@@@@@@@@           1        \n"
	"               2           @@@@@@@@@@|                     -1       \n"
	"            >= 4                     |                     0        \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.llquantize_basic.r, printa(@negvals) */
static const char r_llquantize_basic_negvals[] =
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"               1                                         | 0        \n"
	"               2 @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@| -1       \n"
	"            >= 4                                         | 0        \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.llquantize_basic.r, printa(@posvals) */
static const char r_llquantize_basic_posvals[] =
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"               0 |                                         0        \n"
	"               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n"
	"               2 |                                         0        \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.llquantnormal.r */
static const char r_llquantnormal[] =
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"               0 |                                         0        \n"
	"               1 |@@@@                                     1        \n"
	"               2 |@@@@                                     1        \n"
	"               3 |@@@@                                     1        \n"
	"               4 |@@@@                                     1        \n"
	"               5 |@@@@                                     1        \n"
	"               6 |@@@@                                     1        \n"
	"               7 |@@@@                                     1        \n"
	"               8 |@@@@                                     1        \n"
	"               9 |@@@@                                     1        \n"
	"              10 |@@@@                                     1        \n"
	"              15 |                                         0        \n"
	"\n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.llquantoverflow.r */
static const char r_llquantoverflow[] =
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"       900000000 |                                         0        \n"
	"      1000000000 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n"
	"      2000000000 |                                         0        \n"
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"       900000000 |                                         0        \n"
	"      1000000000 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n"
	"      2000000000 |                                         0        \n"
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"       900000000 |                                         0        \n"
	"      1000000000 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n"
	"      2000000000 |                                         0        \n"
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"       900000000 |                                         0        \n"
	"      1000000000 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n"
	"      2000000000 |                                         0        \n"
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"       900000000 |                                         0        \n"
	"      1000000000 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n"
	"      2000000000 |                                         0        \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.llquantround.r */
static const char r_llquantround[] =
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"              -1 |                                         0        \n"
	"               0 |@@@                                      2        \n"
	"               1 |@@@@@@@@@                                6        \n"
	"               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@             19       \n"
	"               3 |                                         0        \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.llquantstep.r */
static const char r_llquantstep[] =
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"             -27 |                                         0        \n"
	"      abs() < 27 |@                                        27       \n"
	"              27 |                                         3        \n"
	"              30 |                                         3        \n"
	"              33 |                                         3        \n"
	"              36 |                                         3        \n"
	"              39 |                                         3        \n"
	"              42 |                                         3        \n"
	"              45 |                                         3        \n"
	"              48 |                                         3        \n"
	"              51 |                                         3        \n"
	"              54 |                                         3        \n"
	"              57 |                                         3        \n"
	"              60 |                                         3        \n"
	"              63 |                                         3        \n"
	"              66 |                                         3        \n"
	"              69 |                                         3        \n"
	"              72 |                                         3        \n"
	"              75 |                                         3        \n"
	"              78 |                                         3        \n"
	"              81 |                                         9        \n"
	"              90 |                                         9        \n"
	"              99 |                                         9        \n"
	"             108 |                                         9        \n"
	"             117 |                                         9        \n"
	"             126 |                                         9        \n"
	"             135 |                                         9        \n"
	"             144 |                                         9        \n"
	"             153 |                                         9        \n"
	"             162 |                                         9        \n"
	"             171 |                                         9        \n"
	"             180 |                                         9        \n"
	"             189 |                                         9        \n"
	"             198 |                                         9        \n"
	"             207 |                                         9        \n"
	"             216 |                                         9        \n"
	"             225 |                                         9        \n"
	"             234 |                                         9        \n"
	"             243 |@                                        27       \n"
	"             270 |@                                        27       \n"
	"             297 |@                                        27       \n"
	"             324 |@                                        27       \n"
	"             351 |@                                        27       \n"
	"             378 |@                                        27       \n"
	"             405 |@                                        27       \n"
	"             432 |@                                        27       \n"
	"             459 |@                                        27       \n"
	"             486 |@                                        27       \n"
	"             513 |@                                        27       \n"
	"             540 |@                                        27       \n"
	"             567 |@                                        27       \n"
	"             594 |@                                        27       \n"
	"             621 |@                                        27       \n"
	"             648 |@                                        27       \n"
	"             675 |@                                        27       \n"
	"             702 |@                                        27       \n"
	"          >= 729 |@@@@@@@@@@@@@@@@@@@@@                    771      \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.max_neg.r */
static const char r_max_neg[] =
	"\n"
	"             -100\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.min.r */
static const char r_min[] =
	"\n"
	"              100\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.normalize_multiple_times.r */
static const char r_normalize_multiple_times[] =
	"\n"
	"             3800\n"
	"            19000\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.quantlast.r */
static const char r_quantlast[] =
	"\n"
	"\n"
	"           value  ------------- Distribution ------------- count    \n"
	"2305843009213693952 |                                         0        \n"
	"4611686018427387904 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1234     \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.signedkeys.r, the aggregation lines (after trace()) */
static const char r_signedkeys_aggs[] =
	"   0                0\n"
	"   1                1\n"
	"   2                2\n"
	" 254               -2\n"
	" 255               -1\n"
	"     0                0\n"
	"     1                1\n"
	"     2                2\n"
	" 65534               -2\n"
	" 65535               -1\n"
	"        0                0\n"
	"        1                1\n"
	"        2                2\n"
	"       -2               -2\n"
	"       -1               -1\n"
	"                0                0\n"
	"                1                1\n"
	"                2                2\n"
	"               -2               -2\n"
	"               -1               -1\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.stddev2.r */
static const char r_stddev2[] =
	"\n"
	"        0\n"
	"        8\n"
	"       80\n"
	"      800\n"
	"     8000\n"
	"    80000\n"
	"   800000\n"
	"  8000000\n"
	" 10000000\n"
	" 20000000\n"
	" 40000000\n"
	" 80000000\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.trunc-lquantize-5.r */
static const char r_trunc_lquantize_5[] =
	"\n"
	"      195\n"
	"           value  ------------- Distribution ------------- count    \n"
	"              95 |                                         0        \n"
	"              96 |@@@@@@@@@@                               10095    \n"
	"              97 |@@@@@@@@@@                               10095    \n"
	"              98 |@@@@@@@@@@                               10095    \n"
	"              99 |@@@@@@@@@@                               10095    \n"
	"             100 |                                         0        \n"
	"\n"
	"      196\n"
	"           value  ------------- Distribution ------------- count    \n"
	"              96 |                                         0        \n"
	"              97 |@@@@@@@@@@                               10096    \n"
	"              98 |@@@@@@@@@@                               10096    \n"
	"              99 |@@@@@@@@@@                               10096    \n"
	"             100 |@@@@@@@@@@                               10096    \n"
	"             101 |                                         0        \n"
	"\n"
	"      197\n"
	"           value  ------------- Distribution ------------- count    \n"
	"              97 |                                         0        \n"
	"              98 |@@@@@@@@@@                               10097    \n"
	"              99 |@@@@@@@@@@                               10097    \n"
	"             100 |@@@@@@@@@@                               10097    \n"
	"             101 |@@@@@@@@@@                               10097    \n"
	"             102 |                                         0        \n"
	"\n"
	"      198\n"
	"           value  ------------- Distribution ------------- count    \n"
	"              98 |                                         0        \n"
	"              99 |@@@@@@@@@@                               10098    \n"
	"             100 |@@@@@@@@@@                               10098    \n"
	"             101 |@@@@@@@@@@                               10098    \n"
	"             102 |@@@@@@@@@@                               10098    \n"
	"             103 |                                         0        \n"
	"\n"
	"      199\n"
	"           value  ------------- Distribution ------------- count    \n"
	"              99 |                                         0        \n"
	"             100 |@@@@@@@@@@                               10099    \n"
	"             101 |@@@@@@@@@@                               10099    \n"
	"             102 |@@@@@@@@@@                               10099    \n"
	"             103 |@@@@@@@@@@                               10099    \n"
	"             104 |                                         0        \n"
	"\n"
	"      301\n"
	"           value  ------------- Distribution ------------- count    \n"
	"             101 |                                         0        \n"
	"             102 |@@@@@@@@@@                               20101    \n"
	"             103 |@@@@@@@@@@                               20101    \n"
	"             104 |@@@@@@@@@@                               20101    \n"
	"             105 |@@@@@@@@@@                               20101    \n"
	"             106 |                                         0        \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.trunc-lquantize-neg5.r */
static const char r_trunc_lquantize_neg5[] =
	"\n"
	"      100\n"
	"           value  ------------- Distribution ------------- count    \n"
	"               0 |                                         0        \n"
	"               1 |@@@@@@@@@@                               10000    \n"
	"               2 |@@@@@@@@@@                               10000    \n"
	"               3 |@@@@@@@@@@                               10000    \n"
	"               4 |@@@@@@@@@@                               10000    \n"
	"               5 |                                         0        \n"
	"\n"
	"      101\n"
	"           value  ------------- Distribution ------------- count    \n"
	"               1 |                                         0        \n"
	"               2 |@@@@@@@@@@                               10001    \n"
	"               3 |@@@@@@@@@@                               10001    \n"
	"               4 |@@@@@@@@@@                               10001    \n"
	"               5 |@@@@@@@@@@                               10001    \n"
	"               6 |                                         0        \n"
	"\n"
	"      102\n"
	"           value  ------------- Distribution ------------- count    \n"
	"               2 |                                         0        \n"
	"               3 |@@@@@@@@@@                               10002    \n"
	"               4 |@@@@@@@@@@                               10002    \n"
	"               5 |@@@@@@@@@@                               10002    \n"
	"               6 |@@@@@@@@@@                               10002    \n"
	"               7 |                                         0        \n"
	"\n"
	"      103\n"
	"           value  ------------- Distribution ------------- count    \n"
	"               3 |                                         0        \n"
	"               4 |@@@@@@@@@@                               10003    \n"
	"               5 |@@@@@@@@@@                               10003    \n"
	"               6 |@@@@@@@@@@                               10003    \n"
	"               7 |@@@@@@@@@@                               10003    \n"
	"               8 |                                         0        \n"
	"\n"
	"      104\n"
	"           value  ------------- Distribution ------------- count    \n"
	"               4 |                                         0        \n"
	"               5 |@@@@@@@@@@                               10004    \n"
	"               6 |@@@@@@@@@@                               10004    \n"
	"               7 |@@@@@@@@@@                               10004    \n"
	"               8 |@@@@@@@@@@                               10004    \n"
	"               9 |                                         0        \n"
	"\n"
	"      301\n"
	"           value  ------------- Distribution ------------- count    \n"
	"             101 |                                         0        \n"
	"             102 |@@@@@@@@@@                               20101    \n"
	"             103 |@@@@@@@@@@                               20101    \n"
	"             104 |@@@@@@@@@@                               20101    \n"
	"             105 |@@@@@@@@@@                               20101    \n"
	"             106 |                                         0        \n"
	"\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.trunc-sum-5.r */
static const char r_trunc_sum_5[] =
	"\n"
	"      195             1095\n"
	"      196             1096\n"
	"      197             1097\n"
	"      198             1098\n"
	"      199             1099\n"
	"      301             2101\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.trunc-sum-default.r */
static const char r_trunc_sum_default[] =
	"\n"
	"      301             2101\n";

/* oracle/dtrace-utils test/unittest/aggs/tst.trunc-sum-neg5.r */
static const char r_trunc_sum_neg5[] =
	"\n"
	"      100             1000\n"
	"      101             1001\n"
	"      102             1002\n"
	"      103             1003\n"
	"      104             1004\n"
	"      301             2101\n";

/* ---- distribution text builders (for the expectations) ------------------- */

#define HDR "           value  ------------- Distribution ------------- count    \n"
static const char ATS[] = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@";

/*
 * "\n" + header + rows: DIST(label, depth, count, ..., NULL) for
 * distributions without negative counts: each row is the label right-
 * justified in 16, " |", depth '@', spaces to 40, " ", count left-justified
 * in 9.
 */
static char *DIST(const char *label, ...)
{
	struct cap c;
	FILE *f = cap_open(&c);
	va_list ap;

	fputs("\n" HDR, f);
	va_start(ap, label);
	for (const char *l = label; l; l = va_arg(ap, const char *)) {
		int d = va_arg(ap, int);
		const char *n = va_arg(ap, const char *);

		fprintf(f, "%16s |%.*s%*s %-9s\n", l, d, ATS, 40 - d, "", n);
	}
	va_end(ap);
	return keep(cap_close(&c));
}

/*
 * prefix + one line per (string key, value) pair: "  %-50s %16s\n", the
 * format of a string key and a scalar value (checked literally in
 * test_keys()).  KEYS(prefix, key, value, ..., NULL).
 */
static char *KEYS(const char *prefix, ...)
{
	struct cap c;
	FILE *f = cap_open(&c);
	va_list ap;

	fputs(prefix, f);
	va_start(ap, prefix);
	for (const char *k = va_arg(ap, const char *); k; k = va_arg(ap, const char *))
		fprintf(f, "  %-50s %16s\n", k, va_arg(ap, const char *));
	va_end(ap);
	return keep(cap_close(&c));
}

/* printf to a kept string: the expected lines of key columns use DTrace's
 * formats spelled out, " %16s" for integers and "  %-50s" for strings. */
static char *F(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *F(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return keep(s);
}

#define I16 " %16s"
#define S50 "  %-50s"

/* s1 + s2 (+ s3). */
static char *cat3(const char *s1, const char *s2, const char *s3)
{
	size_t n1 = strlen(s1), n2 = strlen(s2), n3 = s3 ? strlen(s3) : 0;
	char *r = keep(malloc(n1 + n2 + n3 + 1));

	memcpy(r, s1, n1);
	memcpy(r + n1, s2, n2);
	if (s3)
		memcpy(r + n1 + n2, s3, n3);
	r[n1 + n2 + n3] = '\0';
	return r;
}

static const char *S(const char *s)
{
	return s;
}

/* ---- quantize ------------------------------------------------------------------ */

static void test_quantize(void)
{
	group = "quantize";
	CHECK_I(DTRACE_QUANTIZE_NBUCKETS, 127);
	CHECK_I(DTRACE_QUANTIZE_ZEROBUCKET, 63);
	CHECK_I(DTRACE_QUANTIZE_BUCKETVAL(0), -4611686018427387904LL);
	CHECK_I(DTRACE_QUANTIZE_BUCKETVAL(62), -1);
	CHECK_I(DTRACE_QUANTIZE_BUCKETVAL(63), 0);
	CHECK_I(DTRACE_QUANTIZE_BUCKETVAL(64), 1);
	CHECK_I(DTRACE_QUANTIZE_BUCKETVAL(126), 4611686018427387904LL);

	CHECK_I(sonde_agg_quantize_bucket(0), 63);
	CHECK_I(sonde_agg_quantize_bucket(1), 64);
	CHECK_I(sonde_agg_quantize_bucket(-1), 62);
	CHECK_I(sonde_agg_quantize_bucket(2), 65);
	CHECK_I(sonde_agg_quantize_bucket(3), 65);
	CHECK_I(sonde_agg_quantize_bucket(4), 66);
	CHECK_I(sonde_agg_quantize_bucket(7), 66);
	CHECK_I(sonde_agg_quantize_bucket(8), 67);
	CHECK_I(sonde_agg_quantize_bucket(1000), 73);
	CHECK_I(sonde_agg_quantize_bucket(-2), 61);
	CHECK_I(sonde_agg_quantize_bucket(-3), 61);
	CHECK_I(sonde_agg_quantize_bucket(-4), 60);
	CHECK_I(sonde_agg_quantize_bucket(-7), 60);
	CHECK_I(sonde_agg_quantize_bucket(-8), 59);
	CHECK_I(sonde_agg_quantize_bucket(INT64_MAX), 126);
	CHECK_I(sonde_agg_quantize_bucket(INT64_MIN), 0);
	CHECK_I(sonde_agg_quantize_bucket(-4611686018427387904LL), 0);
	CHECK_I(sonde_agg_quantize_bucket(-4611686018427387903LL), 1);
	CHECK_I(sonde_agg_quantize_bucket(4611686018427387903LL), 125);

	/* every power of two on both sides, and its neighbours */
	int bad = 0;

	for (int k = 0; k <= 62; k++) {
		int64_t p = (int64_t)1 << k;

		bad += sonde_agg_quantize_bucket(p) != (unsigned)(64 + k);
		bad += sonde_agg_quantize_bucket(-p) != (unsigned)(62 - k);
		if (k > 0) {
			bad += sonde_agg_quantize_bucket(p - 1) != (unsigned)(63 + k);
			bad += sonde_agg_quantize_bucket(-p + 1) != (unsigned)(63 - k);
		}
	}
	CHECK_I(bad, 0);
	for (int b = 0; b < DTRACE_QUANTIZE_NBUCKETS; b++)
		bad += sonde_agg_quantize_bucket(DTRACE_QUANTIZE_BUCKETVAL(b)) != (unsigned)b;
	CHECK_I(bad, 0);

	/* printed text */
	CHECK_T_FREE(RUN("stdin { @ = quantize($1); }", "0\n"),
		     cat3(S("\n"), DIST("-1", 0, "0", "0", 40, "1", "1", 0, "0", NULL), S("\n")));
	CHECK_T_FREE(RUN("stdin { @ = quantize($1); }", "1\n"),
		     cat3(S("\n"), DIST("0", 0, "0", "1", 40, "1", "2", 0, "0", NULL), S("\n")));
	CHECK_T_FREE(RUN("stdin { @ = quantize($1); }", "-1\n"),
		     cat3(S("\n"), DIST("-2", 0, "0", "-1", 40, "1", "0", 0, "0", NULL), S("\n")));
	/* powers of two on both sides: 7 rows of 1 -> 40 / 7 = 5.7 -> 6 '@' */
	CHECK_T_FREE(RUN("stdin { @ = quantize($1); }", "1\n2\n4\n8\n-1\n-2\n-4\n"),
		     cat3(S("\n"),
			  DIST("-8", 0, "0", "-4", 6, "1", "-2", 6, "1", "-1", 6, "1", "0", 0, "0",
			       "1", 6, "1", "2", 6, "1", "4", 6, "1", "8", 6, "1", "16", 0, "0", NULL),
			  S("\n")));
	/* 1..1000 as in the issue's example */
	CHECK_T_FREE(RUN("stdin { @ = quantize($1); }", seq(1, 1000)),
		     cat3(S("\n"),
			  DIST("0", 0, "0", "1", 0, "1", "2", 0, "2", "4", 0, "4", "8", 0, "8", "16", 1,
			       "16", "32", 1, "32", "64", 3, "64", "128", 5, "128", "256", 10, "256",
			       "512", 20, "489", "1024", 0, "0", NULL),
			  S("\n")));

	/* the extremes: every bucket from 0 to 126 is printed */
	char *t = RUN("stdin { @ = quantize($1); }",
		      "4611686018427387904\n-4611686018427387904\n-9223372036854775808\n"
		      "9223372036854775807\n");
	int lines = 0;

	for (char *p = t; p && *p; p++)
		lines += *p == '\n';
	CHECK_I(lines, 1 + 1 + 1 + 127 + 1);
	CHECK(t && strstr(t, HDR "-4611686018427387904 |@@@@@@@@@@@@@@@@@@@@                     2        \n"
				 "-2305843009213693952 |                                         0        \n"));
	CHECK(t && strstr(t, "\n4611686018427387904 |@@@@@@@@@@@@@@@@@@@@                     2        \n\n"));
	free(t);

	/* only negative counts (negative increments): bars grow to the left */
	CHECK_T_FREE(RUN("BEGIN { @ = quantize(-5, -3); }", ""),
		     "\n\n" HDR
		     "              -8                                         | 0        \n"
		     "              -4 @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@| -3       \n"
		     "              -2                                         | 0        \n\n");
	/* both signs: half-length bars either side of a centre line; 2/3 of 20
	 * rounds to 13, 1/3 to 7 */
	CHECK_T_FREE(RUN("BEGIN { @ = quantize(1, 2); @ = quantize(2, -1); }", ""),
		     "\n\n" HDR
		     "               0                     |                     0        \n"
		     "               1                     |@@@@@@@@@@@@@        2        \n"
		     "               2              @@@@@@@|                     -1       \n"
		     "               4                     |                     0        \n\n");
	/* counts that cancel: no data, the rows around zero */
	CHECK_T_FREE(RUN("BEGIN { @ = quantize(1, 1); @ = quantize(1, -1); }", ""),
		     cat3(S("\n"), DIST("-1", 0, "0", "0", 0, "0", "1", 0, "0", NULL), S("\n")));

	/* oracle tst.quantlast: data only in the last bucket is printed */
	CHECK_T_FREE(RUN("BEGIN { @ = quantize(0x4000000000000000, 1234); }", ""), r_quantlast);
}

/* ---- lquantize -------------------------------------------------------------------- */

static void test_lquantize(void)
{
	struct sonde_aggset *set = sonde_aggset_new();
	struct sonde_agg *a;

	group = "lquantize";
	a = mk(set, "a", SONDE_AGG_LQUANTIZE, ARGS(-10, 10, 5), 0);
	CHECK_U(sonde_agg_param(a), 0x00050004fffffff6ULL);
	CHECK_I(DTRACE_LQUANTIZE_BASE(sonde_agg_param(a)), -10);
	CHECK_I(DTRACE_LQUANTIZE_LEVELS(sonde_agg_param(a)), 4);
	CHECK_I(DTRACE_LQUANTIZE_STEP(sonde_agg_param(a)), 5);
	CHECK_I(sonde_agg_nwords(a), 4 + 3);

	/* lquantize(x, 0, 10, 3): 3 levels, the effective top is 9 */
	a = mk(set, "b", SONDE_AGG_LQUANTIZE, ARGS(0, 10, 3), 0);
	uint64_t p = sonde_agg_param(a);

	CHECK_I(DTRACE_LQUANTIZE_LEVELS(p), 3);
	CHECK_I(sonde_agg_lquantize_bucket(p, -1), 0);
	CHECK_I(sonde_agg_lquantize_bucket(p, 0), 1);  /* exactly base */
	CHECK_I(sonde_agg_lquantize_bucket(p, 2), 1);
	CHECK_I(sonde_agg_lquantize_bucket(p, 3), 2);
	CHECK_I(sonde_agg_lquantize_bucket(p, 6), 3);  /* the last full step */
	CHECK_I(sonde_agg_lquantize_bucket(p, 8), 3);
	CHECK_I(sonde_agg_lquantize_bucket(p, 9), 4);  /* the partial step is overflow */
	CHECK_I(sonde_agg_lquantize_bucket(p, 10), 4);
	CHECK_I(sonde_agg_lquantize_bucket(p, INT64_MIN), 0);
	CHECK_I(sonde_agg_lquantize_bucket(p, INT64_MAX), 4);
	/* beyond 2^32 is overflow, not value mod 2^32 */
	CHECK_I(sonde_agg_lquantize_bucket(p, 4294967301LL), 4);
	CHECK_I(sonde_agg_lquantize_bucket(p, -4294967291LL), 0);
	a = mk(set, "c", SONDE_AGG_LQUANTIZE, ARGS(INT32_MIN, INT32_MIN + 65535LL * 65535, 65535), 0);
	CHECK_I(sonde_agg_lquantize_bucket(sonde_agg_param(a), INT64_MAX),
		DTRACE_LQUANTIZE_LEVELS(sonde_agg_param(a)) + 1);
	CHECK_I(sonde_agg_lquantize_bucket(sonde_agg_param(a), INT32_MIN), 1);
	sonde_aggset_free(set);

	CHECK_T_FREE(RUN("stdin { @ = lquantize($1, 0, 10, 3); }", "0\n8\n9\n-1\n4294967301\n"),
		     cat3(S("\n"), DIST("< 0", 8, "1", "0", 8, "1", "3", 0, "0", "6", 8, "1", ">= 9", 16, "2", NULL),
			  S("\n")));
	/* only overflow: the row before it and the overflow row */
	CHECK_T_FREE(RUN("stdin { @ = lquantize($1, 0, 10, 3); }", "100\n"),
		     cat3(S("\n"), DIST("6", 0, "0", ">= 9", 40, "1", NULL), S("\n")));
	/* only underflow */
	CHECK_T_FREE(RUN("stdin { @ = lquantize($1, -10, 10, 5); }", "-11\n"),
		     cat3(S("\n"), DIST("< -10", 40, "1", "-10", 0, "0", NULL), S("\n")));
	/* one level, cleared: "< base", base, ">= base+step" */
	CHECK_T_FREE(RUN("BEGIN { @ = lquantize(5, 0, 10, 10); } END { clear(@); }", ""),
		     cat3(S("\n"), DIST("< 0", 0, "0", "0", 0, "0", ">= 10", 0, "0", NULL), S("\n")));
	/* increments, negative too */
	CHECK_T_FREE(RUN("stdin { @ = lquantize($1, 0, 100, 10, $2); }", "15 3\n25 -1\n"),
		     "\n\n" HDR
		     "               0                     |                     0        \n"
		     "              10                     |@@@@@@@@@@@@@@@      3        \n"
		     "              20                @@@@@|                     -1       \n"
		     "              30                     |                     0        \n\n");

	/* arguments rejected with DTrace's reasons */
	CHECK_T(create_err(SONDE_AGG_LQUANTIZE, ARGS(0, 10, 0)),
		"lquantize() argument #3 must be a non-zero positive integer constant");
	CHECK_T(create_err(SONDE_AGG_LQUANTIZE, ARGS(0, 10, -2)),
		"lquantize() argument #3 must be a non-zero positive integer constant");
	CHECK_T(create_err(SONDE_AGG_LQUANTIZE, ARGS(0, 10, 20)),
		"lquantize() step (argument #3) too large: must have at least one quantization level");
	CHECK_T(create_err(SONDE_AGG_LQUANTIZE, ARGS(0, 0)),
		"lquantize() step (argument #3) too large: must have at least one quantization level");
	CHECK_T(create_err(SONDE_AGG_LQUANTIZE, ARGS(10, 0)),
		"lquantize() base (argument #1) must be less than limit (argument #2)");
	CHECK_T(create_err(SONDE_AGG_LQUANTIZE, ARGS(0, 100000)),
		"lquantize() step (argument #3) too small: number of quantization levels must be a "
		"16-bit quantity");
	CHECK_T(create_err(SONDE_AGG_LQUANTIZE, ARGS(0, 100000, 70000)),
		"lquantize() argument #3 must be a 16-bit quantity");
	CHECK_T(create_err(SONDE_AGG_LQUANTIZE, ARGS(2147483648LL, 2147483649LL)),
		"lquantize() argument #1 must be a 32-bit quantity");
	CHECK_T(create_err(SONDE_AGG_LQUANTIZE, ARGS(0, 2147483648LL)),
		"lquantize() argument #2 must be a 32-bit quantity");
	CHECK_T(create_err(SONDE_AGG_LQUANTIZE, ARGS(0, 10, 1)), "");
}

/* ---- llquantize -------------------------------------------------------------------- */

static void test_llquantize(void)
{
	struct sonde_aggset *set = sonde_aggset_new();
	struct sonde_agg *a;
	uint64_t p;

	group = "llquantize";
	a = mk(set, "a", SONDE_AGG_LLQUANTIZE, ARGS(10, 0, 2, 20), 0);
	p = sonde_agg_param(a);
	CHECK_U(p, 0x000a000000020014ULL); /* illumos layout */
	CHECK_I(DTRACE_LLQUANTIZE_FACTOR(p), 10);
	CHECK_I(DTRACE_LLQUANTIZE_LMAG(p), 0);
	CHECK_I(DTRACE_LLQUANTIZE_HMAG(p), 2);
	CHECK_I(DTRACE_LLQUANTIZE_STEPS(p), 20);
	CHECK_I(sonde_agg_llquantize_nbuckets(p), 47);
	CHECK_I(sonde_agg_nwords(a), 48);
	/* the worked example of the spec */
	static const int64_t v1[][2] = { { -5, 0 },  { 0, 0 },	  { 1, 1 },    { 9, 9 },     { 10, 10 },
					 { 14, 10 }, { 15, 11 },  { 95, 27 },  { 99, 27 },   { 100, 28 },
					 { 149, 28 }, { 150, 29 }, { 999, 45 }, { 1000, 46 }, { INT64_MAX, 46 } };

	for (size_t i = 0; i < sizeof(v1) / sizeof(v1[0]); i++)
		CHECK_I(sonde_agg_llquantize_bucket(p, v1[i][0]), v1[i][1]);

	/* factor 2: <1 | 1 | 2 | 3 | 4-5 | 6-7 | 8-11 | 12-15 | 16-23 | 24-31 | >=32 */
	a = mk(set, "b", SONDE_AGG_LLQUANTIZE, ARGS(2, 0, 4, 4), 0);
	p = sonde_agg_param(a);
	CHECK_I(sonde_agg_llquantize_nbuckets(p), 11);
	static const int64_t v2[][2] = { { 0, 0 },  { 1, 1 },	{ 2, 2 },   { 3, 3 },	{ 4, 4 },
					 { 5, 4 },  { 6, 5 },	{ 7, 5 },   { 8, 6 },	{ 11, 6 },
					 { 12, 7 }, { 15, 7 },	{ 16, 8 },  { 23, 8 },	{ 24, 9 },
					 { 31, 9 }, { 32, 10 }, { -1, 0 } };

	for (size_t i = 0; i < sizeof(v2) / sizeof(v2[0]); i++)
		CHECK_I(sonde_agg_llquantize_bucket(p, v2[i][0]), v2[i][1]);
	CHECK_T_FREE(RUN("stdin { @ = llquantize($1, 2, 0, 4, 4); }", seq(0, 40)),
		     cat3(S("\n"),
			  DIST("< 1", 1, "1", "1", 1, "1", "2", 1, "1", "3", 1, "1", "4", 2, "2", "6", 2,
			       "2", "8", 4, "4", "12", 4, "4", "16", 8, "8", "24", 8, "8", ">= 32", 9,
			       "9", NULL),
			  S("\n")));

	/* a lower magnitude above 0: everything below 10 is underflow */
	a = mk(set, "c", SONDE_AGG_LLQUANTIZE, ARGS(10, 1, 3, 10), 0);
	p = sonde_agg_param(a);
	CHECK_I(sonde_agg_llquantize_nbuckets(p), 29);
	CHECK_I(sonde_agg_llquantize_bucket(p, 9), 0);
	CHECK_I(sonde_agg_llquantize_bucket(p, 10), 1);
	CHECK_I(sonde_agg_llquantize_bucket(p, 19), 1);
	CHECK_I(sonde_agg_llquantize_bucket(p, 20), 2);
	CHECK_I(sonde_agg_llquantize_bucket(p, 99), 9);
	CHECK_I(sonde_agg_llquantize_bucket(p, 100), 10);
	CHECK_I(sonde_agg_llquantize_bucket(p, 9999), 27);
	CHECK_I(sonde_agg_llquantize_bucket(p, 10000), 28);
	CHECK_T_FREE(RUN("stdin { @ = llquantize($1, 10, 1, 3, 10); }", "5\n10\n25\n25\n"),
		     cat3(S("\n"), DIST("< 10", 10, "1", "10", 10, "1", "20", 20, "2", "30", 0, "0", NULL),
			  S("\n")));
	CHECK_T_FREE(RUN("stdin { @ = llquantize($1, 10, 1, 3, 10); }", "100000\n"),
		     cat3(S("\n"), DIST("9000", 0, "0", ">= 10000", 40, "1", NULL), S("\n")));

	/* the overflow bucket always exists; (10, 0, 17, 10) has 164 */
	a = mk(set, "d", SONDE_AGG_LLQUANTIZE, ARGS(10, 0, 17, 10), 0);
	p = sonde_agg_param(a);
	CHECK_I(sonde_agg_llquantize_nbuckets(p), 164);
	CHECK_I(sonde_agg_llquantize_bucket(p, INT64_MAX), 163);
	CHECK_I(sonde_agg_llquantize_bucket(p, 999999999999999999LL), 162);
	CHECK_I(sonde_agg_llquantize_bucket(p, 1000000000000000000LL), 163);

	/* for many valid parameter sets: buckets step up one at a time from 0
	 * to the overflow bucket as the value grows */
	int sets = 0, bad = 0;

	for (int64_t f = 2; f <= 10; f++)
		for (int64_t lo = 0; lo <= 2; lo++)
			for (int64_t hi = lo + 1; hi <= lo + 3; hi++)
				for (int64_t st = f; st <= f * f * f; st += f) {
					char err[256];
					struct sonde_agg *x = sonde_agg_create(set, "x", SONDE_AGG_LLQUANTIZE,
									       ARGS(f, lo, hi, st), 0, err,
									       sizeof(err));
					int64_t top = 1;

					if (!x)
						continue;
					for (int64_t i = 0; i <= hi; i++)
						top *= f;
					if (top > 2000000)
						continue;
					sets++;
					uint64_t q = sonde_agg_param(x);
					unsigned prev = sonde_agg_llquantize_bucket(q, -1);

					bad += prev != 0;
					for (int64_t v = 0; v <= top; v++) {
						unsigned b = sonde_agg_llquantize_bucket(q, v);

						bad += b != prev && b != prev + 1;
						prev = b;
					}
					bad += prev != sonde_agg_llquantize_nbuckets(q) - 1;
				}
	CHECK(sets > 100);
	CHECK_I(bad, 0);
	sonde_aggset_free(set);

	/* arguments rejected with DTrace's reasons */
	CHECK_T(create_err(SONDE_AGG_LLQUANTIZE, ARGS(1, 0, 2, 20)),
		"llquantize() factor (argument #1) must be two or more");
	CHECK_T(create_err(SONDE_AGG_LLQUANTIZE, ARGS(10, 2, 2, 20)),
		"llquantize() high magnitude (argument #3) must be greater than low magnitude "
		"(argument #2)");
	CHECK_T(create_err(SONDE_AGG_LLQUANTIZE, ARGS(10, 0, 2, 5)),
		"llquantize() factor (argument #1) must be less than or equal to the number of linear "
		"steps per magnitude (argument #4)");
	CHECK_T(create_err(SONDE_AGG_LLQUANTIZE, ARGS(10, 0, 2, 15)),
		"llquantize() factor (argument #1) must evenly divide the number of steps per "
		"magnitude (argument #4), and the number of steps per magnitude must evenly divide a "
		"power of the factor");
	CHECK_T(create_err(SONDE_AGG_LLQUANTIZE, ARGS(10, 0, 2, 30)),
		"llquantize() factor (argument #1) must evenly divide the number of steps per "
		"magnitude (argument #4), and the number of steps per magnitude must evenly divide a "
		"power of the factor");
	CHECK_T(create_err(SONDE_AGG_LLQUANTIZE, ARGS(10, 0, 18, 10)),
		"llquantize() factor (10) raised to power of high magnitude (18) plus 1 overflows "
		"64-bits");
	CHECK_T(create_err(SONDE_AGG_LLQUANTIZE, ARGS(70000, 0, 2, 20)),
		"llquantize() argument #1 (factor) must be an unsigned 16-bit quantity");
	CHECK_T(create_err(SONDE_AGG_LLQUANTIZE, ARGS(10, -1, 2, 20)),
		"llquantize() argument #2 (low magnitude) must be an unsigned 16-bit quantity");
	CHECK_T(create_err(SONDE_AGG_LLQUANTIZE, ARGS(10, 0, 2, 100)), "");
	CHECK_T(create_err(SONDE_AGG_LLQUANTIZE, ARGS(3, 3, 5, 27)), "");
}

/* ---- the oracle/dtrace-utils llquantize files --------------------------------------- */

static void test_oracle_llquantize(void)
{
	group = "oracle llquantize";
	/* tst.llquantize.d: @ = llquantize(i++, 10, 0, 6, 20) for i = 0..1499 */
	CHECK_T_FREE(RUN("stdin { @ = llquantize($1, 10, 0, 6, 20); }", seq(0, 1499)),
		     illumos_rows(r_llquantize, "-1", "0", "< 1"));
	/* tst.llquantincr.d: the same with increment 2 */
	CHECK_T_FREE(RUN("stdin { @ = llquantize($1, 10, 0, 6, 20, 2); }", seq(0, 1499)),
		     illumos_rows(r_llquantincr, "-1", "0", "< 1"));
	/* tst.llquantstep.d: @ = llquantize(i++, 3, 3, 5, 27) */
	CHECK_T_FREE(RUN("stdin { @ = llquantize($1, 3, 3, 5, 27); }", seq(0, 1499)),
		     illumos_rows(r_llquantstep, "-27", "abs() < 27", "< 27"));
	/* tst.llquantround.d: 2 x 0, 6 x 1, 19 x 2; bars rounded, not truncated */
	CHECK_T_FREE(RUN("stdin { @ = llquantize($1, 10, 0, 2, 20); }",
			 "0\n0\n1\n1\n1\n1\n1\n1\n2\n2\n2\n2\n2\n2\n2\n2\n2\n2\n2\n2\n2\n2\n2\n2\n2\n2\n2\n"),
		     illumos_rows(r_llquantround, "-1", "0", "< 1"));
	/* tst.llquantnormal.d: 1..10 five times each, normalize(@, 5), printa(@) in END */
	char *in = NULL;
	{
		struct cap c;
		FILE *f = cap_open(&c);

		for (int i = 1; i <= 10; i++)
			for (int k = 0; k < 5; k++)
				fprintf(f, "%d\n", i);
		in = cap_close(&c);
	}
	CHECK_T_FREE(RUN("stdin { @ = llquantize($1, 10, 0, 2, 20); } END { normalize(@, 5); printa(@); }", in),
		     illumos_rows(r_llquantnormal, NULL, "0", "< 1"));
	free(in);
	/* tst.llquantoverflow.d: values above 32 bits */
	CHECK_T_FREE(RUN("BEGIN { @a = llquantize(1100000000, 10, 7, 10, 10); "
			 "@b = llquantize(1200000000, 10, 7, 10, 10); "
			 "@c = llquantize(1300000000, 10, 7, 10, 10); "
			 "@d = llquantize(1400000000, 10, 7, 10, 10); "
			 "@e = llquantize(1788008280, 10, 7, 10, 10); }", ""),
		     r_llquantoverflow);
	/* tst.llquantize_basic.d: negvals, posvals, allvals (printa of each) */
	CHECK_T_FREE(RUN("BEGIN { @ = llquantize(2, 2, 0, 1, 2, -1); } END { printa(@); }", ""),
		     cat3(S(r_llquantize_basic_negvals), S("\n"), NULL));
	CHECK_T_FREE(RUN("BEGIN { @ = llquantize(1, 2, 0, 1, 2, 1); } END { printa(@); }", ""),
		     cat3(illumos_rows(r_llquantize_basic_posvals, NULL, "0", "< 1"), S("\n"), NULL));
	CHECK_T_FREE(RUN("BEGIN { @ = llquantize(1, 2, 0, 1, 2, 1); @ = llquantize(2, 2, 0, 1, 2, -1); } "
			 "END { printa(@); }", ""),
		     cat3(illumos_rows(r_llquantize_basic_allvals, NULL, "0", "< 1"), S("\n"), NULL));
}

/* ---- scalar functions, avg, stddev ------------------------------------------------------ */

static void test_scalars(void)
{
	group = "scalars";
	CHECK_T_FREE(RUN("stdin { @c = count(); @s = sum($1); @mn = min($1); @mx = max($1); }",
			 "5\n-7\n12\n"),
		     "\n                3\n               10\n               -7\n               12\n");
	/* oracle tst.max_neg, tst.min, tst.empty */
	CHECK_T_FREE(RUN("BEGIN { @ = max(-100); @ = max(-900); }", ""), r_max_neg);
	CHECK_T_FREE(RUN("stdin { @a = min($1); }", "100\n200\n300\n400\n500\n600\n700\n800\n900\n"),
		     r_min);
	CHECK_T_FREE(RUN("BEGIN { @a = sum(12345678); } stdin { @b = min($1); @c = max($1); }", ""),
		     r_empty);
	/* sums wrap as 64-bit two's complement */
	CHECK_T_FREE(RUN("stdin { @ = sum($1); }", "9223372036854775807\n1\n"),
		     "\n -9223372036854775808\n");
	CHECK_T_FREE(RUN("BEGIN { @ = sum(9223372036854775807 + 1); @b = sum(-9223372036854775808 - 1); }", ""),
		     "\n -9223372036854775808\n 9223372036854775807\n");
	CHECK_T_FREE(RUN("stdin { @ = min($1); @b = max($1); }", "-9223372036854775808\n9223372036854775807\n"),
		     "\n -9223372036854775808\n 9223372036854775807\n");

	/* avg: two truncating divisions (oracle tst.avg_neg: avg(0), avg(-900) is -450) */
	CHECK_T_FREE(RUN("stdin { @ = avg($1); }", "0\n-900\n"), "\n             -450\n");
	CHECK_T_FREE(RUN("stdin { @ = avg($1); }", "-1\n-2\n"), "\n               -1\n");
	CHECK_T_FREE(RUN("stdin { @ = avg($1); }", "1\n2\n"), "\n                1\n");

	struct sonde_aggset *set = sonde_aggset_new();
	struct sonde_agg *a = mk(set, "a", SONDE_AGG_AVG, NULL, 0, 0);
	const int64_t *d;

	upd(a, NULL, -5, 1);
	upd(a, NULL, 9, 1);
	d = sonde_agg_lookup(a, NULL);
	CHECK_I(sonde_agg_nwords(a), 2);
	CHECK(d && d[0] == 2 && d[1] == 4);

	/* stddev: [n, sum, sumsq low, sumsq high] */
	a = mk(set, "s", SONDE_AGG_STDDEV, NULL, 0, 0);
	upd(a, NULL, -10, 1);
	upd(a, NULL, 20, 1);
	d = sonde_agg_lookup(a, NULL);
	CHECK_I(sonde_agg_nwords(a), 4);
	CHECK(d && d[0] == 2 && d[1] == 10 && d[2] == 500 && d[3] == 0);
	CHECK_U(sonde_agg_stddev_value(d, 1), 15);

	/* the sum of squares needs 128 bits: 2 x (2^62)^2 = 2^125 */
	a = mk(set, "big", SONDE_AGG_STDDEV, NULL, 0, 0);
	upd(a, NULL, 4611686018427387904LL, 1);
	upd(a, NULL, -4611686018427387904LL, 1);
	d = sonde_agg_lookup(a, NULL);
	CHECK(d && d[0] == 2 && d[1] == 0 && d[2] == 0 && (uint64_t)d[3] == 1ULL << 61);
	CHECK_U(sonde_agg_stddev_value(d, 1), 4611686018427387904ULL);
	/* INT64_MIN: its square is 2^126 */
	a = mk(set, "min", SONDE_AGG_STDDEV, NULL, 0, 0);
	upd(a, NULL, INT64_MIN, 1);
	d = sonde_agg_lookup(a, NULL);
	CHECK(d && (uint64_t)d[3] == 1ULL << 62 && d[2] == 0);
	CHECK_U(sonde_agg_stddev_value(d, 1), 0);
	/* many large values: the low word carries into the high one */
	a = mk(set, "carry", SONDE_AGG_STDDEV, NULL, 0, 0);
	for (int i = 0; i < 1000; i++)
		upd(a, NULL, i % 2 ? 3000000000LL : -3000000000LL, 1);
	d = sonde_agg_lookup(a, NULL);
	{
		unsigned __int128 s2 = (unsigned __int128)9000000000000000000ULL * 1000;

		CHECK(d && (uint64_t)d[2] == (uint64_t)s2 && (uint64_t)d[3] == (uint64_t)(s2 >> 64));
	}
	CHECK_U(sonde_agg_stddev_value(d, 1), 3000000000ULL);
	/* the truncated-mean artefact: exact 0.943, DTrace prints 53509 */
	a = mk(set, "art", SONDE_AGG_STDDEV, NULL, 0, 0);
	upd(a, NULL, 4294967295LL, 1);
	upd(a, NULL, 4294967295LL, 1);
	upd(a, NULL, 4294967293LL, 1);
	CHECK_U(sonde_agg_stddev_value(sonde_agg_lookup(a, NULL), 1), 53509);
	sonde_aggset_free(set);
	CHECK_T_FREE(RUN("stdin { @ = stddev($1); }", "4294967295\n4294967295\n4294967293\n"),
		     "\n            53509\n");
	CHECK_T_FREE(RUN("stdin { @ = stddev($1); }", "-10\n20\n"), "\n               15\n");
	CHECK_T_FREE(RUN("stdin { @ = stddev($1); }", "-1\n-2\n-3\n-4\n"), "\n                1\n");

	/* oracle tst.stddev2: the values its printa("%9@x") shows */
	static const int64_t pairs[][2] = {
		{ 0, 0 },
		{ 0x10, 0x20 },
		{ 0x100, 0x200 },
		{ 0x1000, 0x2000 },
		{ 0x10000, 0x20000 },
		{ 0x100000, 0x200000 },
		{ 0x1000000, 0x2000000 },
		{ 0x10000000, 0x20000000 },
		{ 0x20000000, 0x40000000 },
		{ 0x40000000, 0x80000000 },
		{ 0x80000000, 0x100000000 },
		{ 0x100000000, 0x200000000 },
	};
	struct cap c;
	FILE *f = cap_open(&c);

	set = sonde_aggset_new();
	fputc('\n', f); /* the .r's line order is sorted: the exit newline comes first */
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		a = mk(set, "x", SONDE_AGG_STDDEV, NULL, 0, 0);
		upd(a, NULL, pairs[i][0], 1);
		upd(a, NULL, pairs[i][1], 1);
		fprintf(f, "%9" PRIx64 "\n", sonde_agg_stddev_value(sonde_agg_lookup(a, NULL), 1));
	}
	sonde_aggset_free(set);
	CHECK_T_FREE(cap_close(&c), r_stddev2);
}

/* ---- negative increments, normalize ----------------------------------------------------- */

static void test_normalize(void)
{
	group = "normalize";
	/* oracle tst.normalize_multiple_times: the last normalize wins */
	CHECK_T_FREE(RUN("stdin { @a = sum($1 * 100); @b = sum($1 * 100); } "
			 "END { normalize(@a, 2); normalize(@a, 5); }", seq(0, 19)),
		     r_normalize_multiple_times);
	/* oracle tst.denormalize (two sums of i * 100, one normalized then denormalized) */
	CHECK_T_FREE(RUN("stdin { @a = sum($1 * 100); @b = sum($1 * 100); } "
			 "END { normalize(@a, 5); denormalize(@a); }", seq(0, 19)),
		     r_denormalize);
	/* value / normal is a signed division */
	CHECK_T_FREE(RUN("BEGIN { @ = sum(-7); } END { normalize(@, 2); }", ""), "\n               -3\n");
	CHECK_T_FREE(RUN("BEGIN { @ = sum(7); } END { normalize(@, -2); }", ""), "\n               -3\n");
	/* avg: (sum / normal) / count */
	CHECK_T_FREE(RUN("stdin { @ = avg($1); } END { normalize(@, 5); }", "10\n20\n"),
		     "\n                3\n");
	/* stddev: sumsq / normal^2: aos 500/25/2 = 10, mean 1 -> 3 */
	CHECK_T_FREE(RUN("stdin { @ = stddev($1); } END { normalize(@, 5); }", "-10\n20\n"),
		     "\n                3\n");
	/* distributions: counts divided, bars from the raw counts */
	CHECK_T_FREE(RUN("stdin { @ = quantize($1); } END { normalize(@, 2); }", "1\n1\n1\n2\n"),
		     cat3(S("\n"), DIST("0", 0, "0", "1", 30, "1", "2", 10, "0", "4", 0, "0", NULL), S("\n")));
	/* keyed, with a predicate, as in the issue's example */
	CHECK_T_FREE(RUN("stdin /$2 > 0/ { @[$1] = sum($2); } END { normalize(@, 10); }",
			 "a 100\nb 50\na 35\nc -5\nb 0\nc 1000\n"),
		     KEYS("\n", "b", "5", "a", "13", "c", "100", NULL));
	struct sonde_aggset *set = sonde_aggset_new();
	struct sonde_agg *a = mk(set, "a", SONDE_AGG_SUM, NULL, 0, 0);

	CHECK_I(sonde_agg_normalize(a, 0), -1);
	CHECK_I(sonde_agg_normal(a), 1);
	CHECK_I(sonde_agg_normalize(a, 7), 0);
	CHECK_I(sonde_agg_normal(a), 7);
	sonde_agg_denormalize(a);
	CHECK_I(sonde_agg_normal(a), 1);
	sonde_aggset_free(set);
}

/* ---- clear and trunc ---------------------------------------------------------------------- */

static void test_clear_trunc(void)
{
	group = "clear";
	CHECK_T_FREE(RUN("stdin { @c = count(); @s = sum($1); @a = avg($1); @d = stddev($1); } END { clear(@c); clear(@s); clear(@a); clear(@d); }",
			 "5\n6\n"),
		     "\n                0\n                0\n                0\n                0\n");
	CHECK_T_FREE(RUN("stdin { @ = quantize($1); } END { clear(@); }", "5\n"),
		     cat3(S("\n"), DIST("-1", 0, "0", "0", 0, "0", "1", 0, "0", NULL), S("\n")));
	CHECK_T_FREE(RUN("stdin { @ = lquantize($1, 10, 100, 10); } END { clear(@); }", "55\n"),
		     cat3(S("\n"), DIST("< 10", 0, "0", "10", 0, "0", "20", 0, "0", NULL), S("\n")));
	CHECK_T_FREE(RUN("stdin { @ = llquantize($1, 10, 2, 4, 10); } END { clear(@); }", "5555\n"),
		     cat3(S("\n"), DIST("< 100", 0, "0", "100", 0, "0", NULL), S("\n")));

	/* the parameter word survives clear(); min/max print 0, then the next
	 * value replaces it */
	struct sonde_aggset *set = sonde_aggset_new();
	struct sonde_agg *lq = mk(set, "lq", SONDE_AGG_LQUANTIZE, ARGS(0, 10), 0);
	struct sonde_agg *mn = mk(set, "mn", SONDE_AGG_MIN, NULL, 0, 1);
	struct sonde_agg *mx = mk(set, "mx", SONDE_AGG_MAX, NULL, 0, 1);
	struct sonde_agg_key k1 = KI(1);

	upd(lq, NULL, 5, 1);
	upd(mn, &k1, 10, 1);
	upd(mx, &k1, -10, 1);
	sonde_agg_clear(lq);
	sonde_agg_clear(mn);
	sonde_agg_clear(mx);
	CHECK_U(sonde_agg_lookup(lq, NULL)[0], sonde_agg_param(lq));
	CHECK_T_FREE(agg_text(mn, NULL), "                1                0\n");
	upd(mn, &k1, 50, 1);
	upd(mx, &k1, -50, 1);
	CHECK_T_FREE(agg_text(mn, NULL), "                1               50\n");
	CHECK_T_FREE(agg_text(mx, NULL), "                1              -50\n");
	upd(mn, &k1, 40, 1);
	upd(mx, &k1, -60, 1);
	CHECK_T_FREE(agg_text(mn, NULL), "                1               40\n");
	CHECK_T_FREE(agg_text(mx, NULL), "                1              -50\n");
	sonde_aggset_free(set);

	/* oracle tst.cleardenormalize: @func[i % 5] = sum(i * 100) (int keys),
	 * denormalize, printa, clear, printa, nine more, printa */
	struct cap c;
	FILE *f = cap_open(&c);
	struct sonde_agg *fn;
	int i = 0;

	set = sonde_aggset_new();
	fn = mk(set, "func", SONDE_AGG_SUM, NULL, 0, 1);
	for (; i < 10; i++) {
		struct sonde_agg_key k = KT(SONDE_AGG_KEY_I32, i % 5);

		upd(fn, &k, i * 100, 1);
	}
	fputs("Denormalized data before clear:\n", f);
	sonde_agg_denormalize(fn);
	sonde_agg_printa(f, &fn, 1, NULL);
	sonde_agg_clear(fn);
	fputs("Aggregation data after clear():\n", f);
	sonde_agg_printa(f, &fn, 1, NULL);
	for (i++; i < 20; i++) {
		struct sonde_agg_key k = KT(SONDE_AGG_KEY_I32, i % 5);

		upd(fn, &k, i * 100, 1);
	}
	fputs("Final (denormalized) aggregation data:\n", f);
	sonde_agg_denormalize(fn);
	sonde_agg_printa(f, &fn, 1, NULL);
	sonde_aggset_print_end(f, set, NULL);
	sonde_aggset_free(set);
	CHECK_T_FREE(cap_close(&c), r_cleardenormalize);

	group = "trunc";
	/* oracle tst.trunc-sum-{5,neg5,default}, tst.trunc-lquantize-{5,neg5}:
	 * @[100 + i] = ... for i < 100, trunc, then @[200 + 101] = ... */
	static const struct {
		int64_t n;
		bool lq;
		const char *want;
	} tr[] = { { 5, false, r_trunc_sum_5 },
		   { -5, false, r_trunc_sum_neg5 },
		   { 0, false, r_trunc_sum_default },
		   { 5, true, r_trunc_lquantize_5 },
		   { -5, true, r_trunc_lquantize_neg5 } };

	for (size_t t = 0; t < sizeof(tr) / sizeof(tr[0]); t++) {
		struct sonde_agg *a;

		set = sonde_aggset_new();
		a = tr[t].lq ? mk(set, "", SONDE_AGG_LQUANTIZE, ARGS(0, 150, 1), 1)
			     : mk(set, "", SONDE_AGG_SUM, NULL, 0, 1);
		for (i = 0; i < 100; i++) {
			struct sonde_agg_key k = KT(SONDE_AGG_KEY_I32, 100 + i);

			if (!tr[t].lq) {
				upd(a, &k, 1000 + i, 1);
				continue;
			}
			for (int j = 1; j <= 4; j++)
				upd(a, &k, i + j, 10000 + i);
		}
		CHECK(sonde_agg_trunc(a, tr[t].n) == 0);
		CHECK_I(sonde_agg_nelems(a), tr[t].n < 0 ? -tr[t].n : tr[t].n);
		i = 101;
		struct sonde_agg_key k = KT(SONDE_AGG_KEY_I32, 200 + i);

		if (!tr[t].lq)
			upd(a, &k, 2000 + i, 1);
		else
			for (int j = 1; j <= 4; j++)
				upd(a, &k, i + j, 20000 + i);
		CHECK_T_FREE(end_text(set, NULL), tr[t].want);
		sonde_aggset_free(set);
	}
	CHECK_T_FREE(RUN("stdin { @[$1] = count(); } END { trunc(@, 2); }", "a\nb\nb\nc\nc\nc\nd\n"),
		     KEYS("\n", "b", "2", "c", "3", NULL));
	CHECK_T_FREE(RUN("stdin { @[$1] = count(); } END { trunc(@, -1); }", "a\nb\nb\nc\nc\nc\nd\n"),
		     KEYS("\n", "a", "1", NULL));
	CHECK_T_FREE(RUN("stdin { @[$1] = count(); } END { trunc(@); printa(@); } stdin { @[$1] = count(); }", "a\n"),
		     "\n\n");
	CHECK_T_FREE(RUN("stdin { @[$1] = count(); } END { trunc(@, 10); }", "a\nb\n"),
		     KEYS("\n", "a", "1", "b", "1", NULL));
}

/* ---- merging partial aggregations ------------------------------------------------------- */

struct ev {
	int64_t k;
	const char *s;
	int64_t v, incr;
};

static struct sonde_agg *mkf(struct sonde_aggset *set, enum sonde_agg_func f)
{
	switch (f) {
	case SONDE_AGG_LQUANTIZE:
		return mk(set, "m", f, ARGS(-100, 100, 7), 2);
	case SONDE_AGG_LLQUANTIZE:
		return mk(set, "m", f, ARGS(10, 0, 6, 20), 2);
	default:
		return mk(set, "m", f, NULL, 0, 2);
	}
}

static void apply_ev(struct sonde_aggset *set, struct sonde_agg *a, const struct ev *e)
{
	struct sonde_agg_key k[2] = { KI(e->k), KS(set, e->s) };

	upd(a, k, e->v, e->incr);
}

static void test_merge(void)
{
	static const char *const names[] = { "read", "write", "open" };
	enum { N = 3000 };
	static struct ev evs[N];
	uint64_t x = 88172645463325252ULL;

	group = "merge";
	for (int i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		evs[i].k = (int64_t)(x % 5) - 2;
		evs[i].s = names[(x >> 8) % 3];
		switch ((x >> 16) % 4) {
		case 0: evs[i].v = (int64_t)(x >> 20) % 1000; break;
		case 1: evs[i].v = -(int64_t)((x >> 20) % 100000); break;
		case 2: evs[i].v = (int64_t)(x >> 2); break; /* huge: sums wrap, squares carry */
		default: evs[i].v = (int64_t)((x >> 24) % 2000000); break;
		}
		evs[i].incr = (x >> 40) % 7 == 0 ? -1 : (int64_t)((x >> 44) % 3) + 1;
	}
	static const enum sonde_agg_func fs[] = { SONDE_AGG_COUNT, SONDE_AGG_SUM, SONDE_AGG_MIN,
						  SONDE_AGG_MAX, SONDE_AGG_AVG, SONDE_AGG_STDDEV,
						  SONDE_AGG_QUANTIZE, SONDE_AGG_LQUANTIZE,
						  SONDE_AGG_LLQUANTIZE };
	static const int perms[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
					 { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };

	for (size_t fi = 0; fi < sizeof(fs) / sizeof(fs[0]); fi++) {
		struct sonde_aggset *one = sonde_aggset_new(), *part[3];
		struct sonde_agg *a1 = mkf(one, fs[fi]), *ap[3];
		char err[256];

		for (int i = 0; i < N; i++)
			apply_ev(one, a1, &evs[i]);
		char *want = keep(end_text(one, NULL));

		/* three partials: per "thread", uneven, one with a cleared element */
		for (int p = 0; p < 3; p++) {
			part[p] = sonde_aggset_new();
			ap[p] = mkf(part[p], fs[fi]);
		}
		for (int i = 0; i < N; i++)
			apply_ev(part[i < 100 ? 0 : i % 2 + 1], ap[i < 100 ? 0 : i % 2 + 1], &evs[i]);
		for (int p = 0; p < 6; p++) {
			struct sonde_aggset *d = sonde_aggset_new();
			struct sonde_agg *ad = mkf(d, fs[fi]);

			for (int k = 0; k < 3; k++)
				CHECK(sonde_agg_merge(ad, ap[perms[p][k]], err, sizeof(err)) == 0);
			char *got = end_text(d, NULL);

			if (strcmp(got, want))
				printf("# %s, order %d%d%d\n", sonde_agg_func_name(fs[fi]), perms[p][0],
				       perms[p][1], perms[p][2]);
			CHECK_T_FREE(got, want);
			/* the records themselves are equal */
			int diff = 0;

			for (size_t e = 0; e < sonde_agg_nelems(ad); e++) {
				struct sonde_agg_key k[2];
				const int64_t *r = sonde_agg_elem(ad, e, k);

				k[1].s = sonde_aggset_intern(one, k[1].s, strlen(k[1].s));
				const int64_t *r1 = sonde_agg_lookup(a1, k);

				diff += !r1 || memcmp(r, r1, sonde_agg_nwords(ad) * sizeof(*r));
			}
			CHECK_I(diff, 0);
			CHECK_I(sonde_agg_nelems(ad), sonde_agg_nelems(a1));
			sonde_aggset_free(d);
		}
		/* a tree: 0 + (1 + 2) */
		struct sonde_aggset *d = sonde_aggset_new(), *d12 = sonde_aggset_new();
		struct sonde_agg *ad = mkf(d, fs[fi]), *a12 = mkf(d12, fs[fi]);

		CHECK(sonde_agg_merge(a12, ap[1], err, sizeof(err)) == 0);
		CHECK(sonde_agg_merge(a12, ap[2], err, sizeof(err)) == 0);
		CHECK(sonde_agg_merge(ad, ap[0], err, sizeof(err)) == 0);
		CHECK(sonde_agg_merge(ad, a12, err, sizeof(err)) == 0);
		CHECK_T_FREE(end_text(d, NULL), want);
		sonde_aggset_free(d);
		sonde_aggset_free(d12);
		for (int p = 0; p < 3; p++)
			sonde_aggset_free(part[p]);
		sonde_aggset_free(one);
	}

	/* stddev: the sums of squares of two partials carry when added */
	struct sonde_aggset *set = sonde_aggset_new();
	struct sonde_agg *p1 = mk(set, "p1", SONDE_AGG_STDDEV, NULL, 0, 0);
	struct sonde_agg *p2 = mk(set, "p2", SONDE_AGG_STDDEV, NULL, 0, 0);
	struct sonde_agg *all = mk(set, "all", SONDE_AGG_STDDEV, NULL, 0, 0);
	struct sonde_agg *m = mk(set, "m", SONDE_AGG_STDDEV, NULL, 0, 0);
	char err[256];

	for (int i = 0; i < 2; i++) {
		upd(p1, NULL, 3037000499LL, 1);
		upd(p2, NULL, -3037000499LL, 1);
		upd(all, NULL, 3037000499LL, 1);
		upd(all, NULL, -3037000499LL, 1);
	}
	CHECK(sonde_agg_lookup(p1, NULL)[3] == 0); /* each partial fits in the low word */
	CHECK(sonde_agg_merge(m, p1, err, sizeof(err)) == 0);
	CHECK(sonde_agg_merge(m, p2, err, sizeof(err)) == 0);
	CHECK(!memcmp(sonde_agg_lookup(m, NULL), sonde_agg_lookup(all, NULL), 4 * sizeof(int64_t)));
	CHECK_I(sonde_agg_lookup(m, NULL)[3], 1);
	CHECK_U(sonde_agg_stddev_value(sonde_agg_lookup(m, NULL), 1), 3037000499ULL);

	/* min/max: a cleared partial adds nothing; merging into a cleared element replaces it */
	struct sonde_agg *c1 = mk(set, "c1", SONDE_AGG_MIN, NULL, 0, 0);
	struct sonde_agg *c2 = mk(set, "c2", SONDE_AGG_MIN, NULL, 0, 0);

	upd(c1, NULL, 5, 1);
	upd(c2, NULL, 7, 1);
	sonde_agg_clear(c2);
	CHECK(sonde_agg_merge(c1, c2, err, sizeof(err)) == 0);
	CHECK_I(sonde_agg_lookup(c1, NULL)[0], 5);
	CHECK(sonde_agg_merge(c2, c1, err, sizeof(err)) == 0);
	CHECK_I(sonde_agg_lookup(c2, NULL)[0], 5);

	/* different functions or parameters do not merge */
	struct sonde_agg *q1 = mk(set, "q1", SONDE_AGG_LQUANTIZE, ARGS(0, 10), 0);
	struct sonde_agg *q2 = mk(set, "q2", SONDE_AGG_LQUANTIZE, ARGS(0, 20), 0);

	CHECK(sonde_agg_merge(q1, q2, err, sizeof(err)) == -1);
	CHECK(sonde_agg_merge(q1, c1, err, sizeof(err)) == -1);
	sonde_aggset_free(set);
}

/* ---- keys, sorting, printa ---------------------------------------------------------------- */

static void test_keys_sort(void)
{
	struct sonde_aggset *set;
	struct sonde_agg *a;
	struct sonde_agg_opts o = { 0 };

	group = "keys";
	/* the spec's example: @["bash"] = count() x 3 is 69 characters and a newline */
	CHECK_T_FREE(RUN("stdin { @[$1] = count(); }", "bash\nbash\nbash\n"),
		     "\n  bash                                                              3\n");
	CHECK_T_FREE(RUN("stdin { @ = count(); }", "x\ny\n"), "\n                2\n");
	CHECK_I(strlen("  bash                                                              3"), 69);
	/* long strings are not cut; integer keys are %16lld */
	CHECK_T_FREE(RUN("stdin { @[$1, $2] = sum($3); }",
			 "a_rather_long_function_name_that_goes_past_fifty_characters 7 1\n"),
		     F("\n" S50 I16 I16 "\n", "a_rather_long_function_name_that_goes_past_fifty_characters",
		       "7", "1"));
	/* a field that is not a decimal integer is a string key */
	CHECK_T_FREE(RUN("stdin { @[$1] = count(); }", "12\n012\n+12\n1x\n-0\n99999999999999999999\n"),
		     F("\n" I16 I16 "\n" S50 I16 "\n" S50 I16 "\n" I16 I16 "\n", "0", "1", "1x", "1",
		       "99999999999999999999", "1", "12", "3"));
	/* DTrace's integer widths (oracle tst.signedkeys, aggregation lines):
	 * printed signed for 32/64 bits, unsigned for 8/16; sorted unsigned */
	set = sonde_aggset_new();
	static const enum sonde_agg_keytype kt[] = { SONDE_AGG_KEY_I8, SONDE_AGG_KEY_I16,
						     SONDE_AGG_KEY_I32, SONDE_AGG_KEY_I64 };
	static const char *const kn[] = { "i8", "i16", "i32", "i64" };

	for (int t = 0; t < 4; t++) {
		a = mk(set, kn[t], SONDE_AGG_SUM, NULL, 0, 1);
		for (int v = -2; v <= 2; v++) {
			struct sonde_agg_key k = KT(kt[t], v);

			upd(a, &k, v, 1);
		}
	}
	o.sortkey = true;
	char *t = end_text(set, &o);

	CHECK_T_FREE(t, cat3("\n", r_signedkeys_aggs, NULL));
	sonde_aggset_free(set);

	group = "sort";
	const char *in = "a 3\nb 1\nc 2\nd 2\n";

	/* default: by value, ties by key */
	CHECK_T_FREE(RUN("stdin { @[$1] = sum($2); }", in),
		     KEYS("\n", "b", "1", "c", "2", "d", "2", "a", "3", NULL));
	o = (struct sonde_agg_opts){ .sortkey = true };
	CHECK_T_FREE(run("stdin { @[$1] = sum($2); }", in, &o, NULL, 0, NULL, NULL, 0),
		     KEYS("\n", "a", "3", "b", "1", "c", "2", "d", "2", NULL));
	o = (struct sonde_agg_opts){ .sortrev = true };
	CHECK_T_FREE(run("stdin { @[$1] = sum($2); }", in, &o, NULL, 0, NULL, NULL, 0),
		     KEYS("\n", "a", "3", "d", "2", "c", "2", "b", "1", NULL));
	o = (struct sonde_agg_opts){ .sortkey = true, .sortrev = true };
	CHECK_T_FREE(run("stdin { @[$1] = sum($2); }", in, &o, NULL, 0, NULL, NULL, 0),
		     KEYS("\n", "d", "2", "c", "2", "b", "1", "a", "3", NULL));
	/* aggsortkeypos: the second key column first */
	o = (struct sonde_agg_opts){ .sortkey = true, .sortkeypos = 1 };
	CHECK_T_FREE(run("stdin { @[$1, $2] = count(); }", "1 b\n2 a\n3 a\n", &o, NULL, 0, NULL, NULL, 0),
		     F("\n" I16 S50 I16 "\n" I16 S50 I16 "\n" I16 S50 I16 "\n", "2", "a", "1", "3", "a", "1",
		       "1", "b", "1"));
	/* a keypos beyond the keys is ignored */
	o = (struct sonde_agg_opts){ .sortkey = true, .sortkeypos = 5 };
	CHECK_T_FREE(run("stdin { @[$1, $2] = count(); }", "1 b\n2 a\n3 a\n", &o, NULL, 0, NULL, NULL, 0),
		     F("\n" I16 S50 I16 "\n" I16 S50 I16 "\n" I16 S50 I16 "\n", "1", "b", "1", "2", "a", "1",
		       "3", "a", "1"));
	/* integer keys sort before strings in one column; strings bytewise ("ab" < "abc") */
	o = (struct sonde_agg_opts){ .sortkey = true };
	CHECK_T_FREE(run("stdin { @[$1] = count(); }", "abc\nab\n5\nB\n-1\n", &o, NULL, 0, NULL, NULL, 0),
		     F("\n" I16 I16 "\n" I16 I16 "\n" S50 I16 "\n" S50 I16 "\n" S50 I16 "\n", "5", "1", "-1", "1",
		       "B", "1", "ab", "1", "abc", "1"));
	/* quantize sorts by the sum of bucket value x count */
	CHECK_T_FREE(RUN("stdin { @[$1] = quantize($2); } END { printa(@); }", "x 100\ny 3\ny 3\ny 3\nz -1\n"),
		     cat3(cat3(F("\n" S50, "z"), DIST("-2", 0, "0", "-1", 40, "1", "0", 0, "0", NULL),
			       F("\n" S50, "y")),
			  cat3(DIST("1", 0, "0", "2", 40, "3", "4", 0, "0", NULL), F("\n" S50, "x"),
			       DIST("32", 0, "0", "64", 40, "1", "128", 0, "0", NULL)),
			  "\n\n"));
	/* avg sorts by sum / count */
	CHECK_T_FREE(RUN("stdin { @[$1] = avg($2); }", "a 10\na 0\nb 4\nc -3\n"),
		     KEYS("\n", "c", "-3", "b", "4", "a", "5", NULL));

	/* lquantize: equal sums are ordered by the count at the bucket holding 0 */
	set = sonde_aggset_new();
	a = mk(set, "", SONDE_AGG_LQUANTIZE, ARGS(-10, 20, 10), 1);
	{
		struct sonde_agg_key kx = KS(set, "x"), ky = KS(set, "y");

		upd(a, &kx, 0, 1);  /* sum 0, zero-bucket count 1 */
		upd(a, &ky, -10, 1); /* -10 + 10: sum 0, zero-bucket count 0 */
		upd(a, &ky, 10, 1);
	}
	t = end_text(set, NULL);
	CHECK(t && strstr(t, "  y") && strstr(t, "  x") && strstr(t, "  y") < strstr(t, "  x"));
	free(t);
	sonde_aggset_free(set);

	group = "printa";
	/* several aggregations joined on their keys; a missing key shows the
	 * zero record of its aggregation */
	CHECK_T_FREE(RUN("stdin { @c[$1] = count(); @s[$1] = sum($2); } stdin /$2 > 5/ { @m[$1] = max($2); } "
			 "END { printa(@c, @s, @m); }",
			 "a 1\nb 10\na 2\nc 7\n"),
		     F("\n" S50 I16 I16 I16 "\n" S50 I16 I16 I16 "\n" S50 I16 I16 I16 "\n\n", "c", "1", "7", "7",
		       "b", "1", "10", "10", "a", "2", "3", "0"));
	/* aggsortpos: sort by the second aggregation */
	o = (struct sonde_agg_opts){ .sortpos = 1 };
	CHECK_T_FREE(run("stdin { @c[$1] = count(); @s[$1] = sum($2); } END { printa(@c, @s); }",
			 "a 1\nb 10\na 2\nc 7\n", &o, NULL, 0, NULL, NULL, 0),
		     F("\n" S50 I16 I16 "\n" S50 I16 I16 "\n" S50 I16 I16 "\n\n", "a", "2", "3", "c", "1", "7",
		       "b", "1", "10"));
	o = (struct sonde_agg_opts){ .sortpos = 0 };
	CHECK_T_FREE(run("stdin { @c[$1] = count(); @s[$1] = sum($2); } END { printa(@c, @s); }",
			 "a 1\nb 10\na 2\nc 7\n", &o, NULL, 0, NULL, NULL, 0),
		     F("\n" S50 I16 I16 "\n" S50 I16 I16 "\n" S50 I16 I16 "\n\n", "c", "1", "7", "b", "1", "10",
		       "a", "2", "3"));
	/* a distribution in a joined line */
	CHECK_T_FREE(RUN("stdin { @c[$1] = count(); } stdin /$1 == \"b\"/ { @q[$1] = lquantize($2, 0, 10, 5); } "
			 "END { printa(@c, @q); }", "a 1\nb 7\n"),
		     cat3(cat3(F("\n" S50 I16, "a", "1"), DIST("< 0", 0, "0", "0", 0, "0", "5", 0, "0", NULL),
			       F("\n" S50 I16, "b", "1")),
			  DIST("0", 0, "0", "5", 40, "1", ">= 10", 0, "0", NULL), "\n\n"));
	/* printed aggregations are not printed again at the end; the others are, by id */
	CHECK_T_FREE(RUN("stdin { @z = count(); @y = sum($1); @x = max($1); } END { printa(@y); }",
			 "4\n5\n"),
		     "\n                9\n\n                2\n                5\n");
}

/* ---- the language ------------------------------------------------------------------------ */

static void test_language(void)
{
	char pm[400];
	uint64_t np;
	char *t;

	group = "language";
	/* statements, comments, predicates */
	CHECK_T_FREE(RUN("/* count */ stdin { @ = count() }\n# a comment line\n// another\n", "a\nb\n"),
		     "\n                2\n");
	CHECK_T_FREE(RUN("stdin /$1 > 2 && $1 < 5 || $1 == 9/ { @ = sum($1); }", seq(1, 10)),
		     "\n               16\n");
	CHECK_T_FREE(RUN("stdin /!($1 % 2)/ { @ = sum($1); }", seq(1, 10)), "\n               30\n");
	CHECK_T_FREE(RUN("stdin /$1 / 2 > 2/ { @ = count(); }", seq(1, 10)), "\n                5\n");
	CHECK_T_FREE(RUN("stdin { @ = sum(-$1 * 2 + 1 - 3 % 2); }", "5\n"), "\n              -10\n");
	CHECK_T_FREE(RUN("stdin /$2 == \"ok\"/ { @[$1] = count(); }", "a ok\nb no\na ok\n"),
		     KEYS("\n", "a", "2", NULL));
	/* "07" is the integer 7; a string field against an integer compares as
	 * text; missing fields are "" */
	CHECK_T_FREE(RUN("stdin /$1 == 7/ { @[$0] = count(); }", "7\n07\nx\n"),
		     "\n                7                2\n");
	CHECK_T_FREE(RUN("stdin /$1 < 5/ { @[$1] = count(); }", "10\n3\n1x\n6x\n"),
		     F("\n" I16 I16 "\n" S50 I16 "\n", "3", "1", "1x", "1"));
	CHECK_T_FREE(RUN("stdin { @[$3] = count(); }", "a b\n"), KEYS("\n", "", "1", NULL));
	CHECK_T_FREE(RUN("stdin { @[$0] = count(); }", "hello  world\r\nhello  world\n"),
		     KEYS("\n", "hello  world", "2", NULL));
	/* blank lines and a last line without a newline are events */
	CHECK_T_FREE(RUN("stdin { @ = count(); }", "\n\nx"), "\n                3\n");
	/* wrapping arithmetic, no undefined behaviour */
	CHECK_T_FREE(RUN("stdin { @ = sum($1 * $1); @b = sum((-9223372036854775807 - 1) / -1); @c = sum($1 % -1); }",
			 "4294967296\n"),
		     "\n                0\n -9223372036854775808\n                0\n");
	CHECK_T_FREE(RUN("stdin { @ = sum($1 / -1); @b = sum(-$1); }", "-9223372036854775808\n"),
		     "\n -9223372036854775808\n -9223372036854775808\n");
	/* several clauses of one kind run in order; BEGIN and END */
	CHECK_T_FREE(RUN("BEGIN { @n = sum(100); } stdin { @n = sum($1); } stdin /$1 > 1/ { @n = sum($1); } END { @n = sum(1000); }",
			 "1\n2\n"),
		     "\n             1105\n");
	/* without stdin clauses, stdin is not read */
	CHECK_T_FREE(RUN("BEGIN { @ = count(); }", "not read\n"), "\n                1\n");
	/* problems: an event whose value is not an integer is skipped and reported */
	t = run("stdin { @ = sum($1); }", "1\nabc\n3\n4x\n", NULL, NULL, 0, &np, pm, sizeof(pm));
	CHECK_T_FREE(t, "\n                4\n");
	CHECK_I(np, 2);
	CHECK_T(pm, "2 events skipped; the first: stdin line 2: sum() needs an integer, and $1 is 'abc'");
	t = run("stdin { @ = sum(10 / $1); }", "0\n5\n", NULL, NULL, 0, &np, pm, sizeof(pm));
	CHECK_T_FREE(t, "\n                2\n");
	CHECK_T(pm, "1 event skipped; the first: stdin line 1: division by zero");

	/* errors name the line and column */
	CHECK_ERR("", "1:1: the program is empty (expected clauses like: stdin { @ = count(); })");
	CHECK_ERR("stdin { @ = count(); ", "1:22: expected '}' to end the clause begun at 1:1");
	CHECK_ERR("stdin { @ = cnt(); }",
		  "1:13: unknown aggregating function 'cnt' (count, sum, min, max, avg, stddev, "
		  "quantize, lquantize, llquantize)");
	CHECK_ERR("stdin\n/$1 = 5/ { @ = count(); }", "2:5: '=' assigns; use '==' to compare");
	CHECK_ERR("stdin { @ = count() @b = count(); }",
		  "1:21: expected ';' or '}' after the statement, found '@b'");
	CHECK_ERR("stdin {\n  @ = sum(\"x\");\n}",
		  "2:11: sum() argument #1 must be of scalar type, not a string");
	CHECK_ERR("stdin { @ = count(1); }", "1:13: count() prototype mismatch: 1 arg passed, 0 expected");
	CHECK_ERR("stdin { @ = sum(); }", "1:13: sum() prototype mismatch: 0 args passed, 1 expected");
	CHECK_ERR("stdin { @ = lquantize($1, 0); }",
		  "1:13: lquantize() prototype mismatch: 2 args passed, at least 3 expected");
	CHECK_ERR("stdin { @ = lquantize($1, 0, 10, 0); }",
		  "1:13: lquantize() argument #3 must be a non-zero positive integer constant");
	CHECK_ERR("stdin { @ = lquantize($1, 0, 10, $2); }",
		  "1:34: lquantize() argument #3 must be a non-zero positive integer constant");
	CHECK_ERR("stdin { @ = lquantize($1, $2, 10); }",
		  "1:27: lquantize() argument #1 must be an integer constant");
	CHECK_ERR("stdin { @ = lquantize($1, 0, 10); @ = lquantize($1, 0, 20); }",
		  "1:39: lquantize() limit (argument #2) doesn't match previous declaration: expected "
		  "10, found 20");
	CHECK_ERR("stdin { @ = lquantize($1, 0, 10); @ = lquantize($1, 1, 10); }",
		  "1:39: lquantize() base (argument #1) doesn't match previous declaration: expected "
		  "0, found 1");
	CHECK_ERR("stdin { @ = lquantize($1, -(1 + 1) * 5, 10 - 0, 20 / 4); @ = lquantize($1, -10, 10, 2); }",
		  "1:62: lquantize() step (argument #3) doesn't match previous declaration: expected "
		  "5, found 2");
	CHECK_ERR("stdin { @ = llquantize($1, 10, 0, 2, 20); @ = llquantize($1, 10, 0, 3, 20); }",
		  "1:47: llquantize() high magnitude (argument #3) doesn't match previous declaration: "
		  "expected 2, found 3");
	CHECK_ERR("stdin { @ = llquantize($1, 10, 0, 2, 15); }",
		  "1:13: llquantize() factor (argument #1) must evenly divide the number of steps per "
		  "magnitude (argument #4), and the number of steps per magnitude must evenly divide a "
		  "power of the factor");
	CHECK_ERR("stdin { @ = llquantize($1, 10, $2, 2, 20); }",
		  "1:32: llquantize() argument #2 (low magnitude) must be an integer constant");
	CHECK_ERR("stdin { @a = count(); @a = sum($1); }",
		  "1:28: aggregation @a redefined: it is count() at 1:9, here sum()");
	CHECK_ERR("stdin { @a[$1] = count(); @a = count(); }",
		  "1:27: aggregation @a has 1 key at 1:9, 0 here");
	CHECK_ERR("stdin { @a[1] = count(); @a[\"x\"] = count(); }",
		  "1:29: key #1 of @a is an integer at 1:9, a string here");
	CHECK_ERR("stdin { printa(@); }", "1:9: printa() may only be used in BEGIN and END clauses");
	CHECK_ERR("END { printa(@x); }", "1:14: aggregation @x is used but never assigned (@x = func(...))");
	CHECK_ERR("stdin { @a = count(); @b[$1] = count(); } END { printa(@a, @b); }",
		  "1:49: printa() aggregations must have the same keys: @a has 0, @b has 1");
	CHECK_ERR("stdin { @[func] = count(); }",
		  "1:11: unknown field 'func' for stdin events (their fields are $0, $1, $2, ...)");
	CHECK_ERR("END { @ = sum($1); }", "1:15: field $1 is not available in END clauses");
	CHECK_ERR("profile { @ = count(); }",
		  "1:1: profile events need an experiment that has them (this input has BEGIN, END, "
		  "stdin)");
	CHECK_ERR("sched { @ = count(); }", "1:1: unknown event kind 'sched' (this input has BEGIN, END, stdin)");
	CHECK_ERR("stdin /1 == \"a\"/ { @ = count(); }",
		  "1:10: operator == cannot compare an integer with a string");
	CHECK_ERR("stdin { @ = sum(\"a\" + 1); }",
		  "1:17: operator + needs integer operands; the left one is a string");
	CHECK_ERR("stdin /\"a\"/ { @ = count(); }",
		  "1:8: a predicate must be an integer expression, not a string");
	CHECK_ERR("stdin { @ = sum(1 / 0); }", "1:19: division by zero in a constant expression");
	CHECK_ERR("stdin { @ = sum(99999999999999999999); }",
		  "1:17: integer constant '99999999999999999999' is too large (64 bits at most)");
	CHECK_ERR("stdin { @ = sum($); }", "1:17: expected a field number after '$' ($0, $1, ...)");
	CHECK_ERR("stdin { @ = count(); } END { normalize(@, 0); }",
		  "1:43: normalize() needs a non-zero normalization factor");
	CHECK_ERR("stdin { @ = count(); } END { frob(@); }",
		  "1:30: unknown action 'frob' (expected @name = func(...), printa, normalize, "
		  "denormalize, trunc or clear)");
	CHECK_ERR("stdin { @ = count(); } END { printa(\"%d\", @); }",
		  "1:37: printa() with a format string is not supported");
	CHECK_ERR("stdin { @ = count(); } END { clear(1); }",
		  "1:36: clear() argument #1 must be an aggregation (@name), found '1'");
	CHECK_ERR("stdin { @ = \"x\"; }",
		  "1:13: expected an aggregating function (count, sum, min, max, avg, stddev, quantize, "
		  "lquantize, llquantize), found a string");
	CHECK_ERR("stdin { @ = count(); ) }", "1:22: expected a statement (@name = func(...); or an action), found ')'");
	CHECK_ERR("stdin { @ = sum(\"a\\q\"); }",
		  "1:19: unknown escape '\\q' in a string (\\n \\t \\r \\\\ \\\" are known)");
	CHECK_ERR("stdin { @ = sum(\"a); }", "1:17: unterminated string");
	CHECK_ERR("stdin { @ = sum(3x); }", "1:17: invalid character 'x' in the number '3x'");
	CHECK_ERR("stdin { @ = sum(1) ; } /* open", "1:24: unterminated comment");
	CHECK_ERR("stdin { @[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17] = count(); }",
		  "1:50: too many keys (at most 16)");
}

/* ---- profile events of an experiment ----------------------------------------------------- */

static char tmpdir[] = "/tmp/sonde-test-agg.XXXXXX";

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int namer_calls;

static const char *test_namer(void *ctx, const struct sonde_exp *exp, const struct sonde_frame *f,
			      uint64_t time_ns, const struct sonde_frame *callee, const char **object)
{
	(void)callee;
	(void)object;
	static char buf[64];

	(void)exp;
	namer_calls++;
	snprintf(buf, sizeof(buf), "%s%" PRIx64 "%s", (const char *)ctx, f->pc, f->exact ? "" : "r");
	return buf;
}

static char *run_exp(struct sonde_exp *exp, const char *prog, sonde_dl_name_fn fn, void *ctx)
{
	const struct sonde_dl_kind *kinds[] = { &sonde_dl_kind_profile };
	struct sonde_dl_error e;
	struct sonde_dl_prog *p = sonde_dl_compile(prog, kinds, 1, NULL, &e);
	char err[256];
	struct cap c;

	if (!p) {
		printf("# '%s': %u:%u: %s\n", prog, e.line, e.col, e.msg);
		nfail++;
		return NULL;
	}
	FILE *f = cap_open(&c);

	if (sonde_dl_begin(p, f, err, sizeof(err)) || sonde_dl_run_profile(p, exp, fn, ctx, err, sizeof(err)) < 0 ||
	    sonde_dl_end(p, f, err, sizeof(err)))
		printf("# %s\n", err), nfail++;
	if (sonde_dl_problems(p, err, sizeof(err)))
		printf("# %s\n", err), nfail++;
	sonde_dl_free(p);
	return cap_close(&c);
}

/* Programs nested or chained past the bound are refused at compile time,
 * where a recursive parser or evaluator would have overflowed the stack. */
static void test_depth(void)
{
	group = "depth";
	size_t n = 20000;
	char *p = malloc(8 * n + 64), *q;

	if (!p)
		return;
	q = p + sprintf(p, "stdin { @ = sum(");
	for (size_t i = 0; i < n; i++)
		*q++ = '(';
	q += sprintf(q, "$1");
	for (size_t i = 0; i < n; i++)
		*q++ = ')';
	sprintf(q, "); }");
	CHECK(strstr(ERR(p), "expression nested too deeply"));

	q = p + sprintf(p, "stdin { @ = sum($1");
	for (size_t i = 0; i < 50000 && (size_t)(q - p) < 8 * n; i++)
		q += sprintf(q, "+$1");
	sprintf(q, "); }");
	CHECK(strstr(ERR(p), "expression too deep"));

	/* a chain of constants folds to one node as it is parsed: no depth */
	q = p + sprintf(p, "stdin { @ = sum(1");
	for (size_t i = 0; i < 30000; i++)
		q += sprintf(q, "+1");
	sprintf(q, " + $1); }");
	CHECK_S(ERR(p), "");
	CHECK_S(RUN(p, "5\n"), "\n            30006\n");

	/* 1000 levels still compile and run */
	q = p + sprintf(p, "stdin { @ = sum(");
	for (size_t i = 0; i < 999; i++)
		*q++ = '(';
	q += sprintf(q, "$1");
	for (size_t i = 0; i < 999; i++)
		*q++ = ')';
	sprintf(q, "); }");
	CHECK_S(ERR(p), "");
	CHECK_S(RUN(p, "7\n"), "\n                7\n");
	free(p);
}

static void test_profile(void)
{
	char err[512], dir[600];
	const uint64_t T0 = 1000000000, MS = 1000000;

	group = "profile";
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		nfail++;
		return;
	}
	snprintf(dir, sizeof(dir), "%s/p.er", tmpdir);
	struct sonde_expw *w = sonde_expw_create(dir, err, sizeof(err));

	if (!w) {
		printf("# %s\n", err);
		nfail++;
		return;
	}
	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_object(w, 1, "/usr/bin/prog", 0, 0x400000, 0x500000, T0);
	sonde_expw_object(w, 2, "/usr/lib/libc.so.6", 0x7f0000000000, 0x7f0000000000, 0x7f0000100000, T0);
	const uint64_t s1[] = { 0x401000 | SONDE_PC_EXACT, 0x402005 };
	const uint64_t s2[] = { 0x7f0000001234 | SONDE_PC_EXACT, 0x401010, 0x402005 };
	const uint64_t s3[] = { 0x401000 | SONDE_PC_EXACT };
	const uint64_t s4[] = { 0x999999 | SONDE_PC_EXACT, 0x402005 };

	sonde_expw_stack(w, 0x11, 0, 2, s1);
	sonde_expw_stack(w, 0x22, 0, 3, s2);
	sonde_expw_stack(w, 0x33, 0, 1, s3);
	sonde_expw_stack(w, 0x44, 0, 2, s4);
	for (int i = 0; i < 5; i++)
		sonde_expw_sample(w, 100, 0, T0 + (uint64_t)i * MS, MS, 0x11);
	for (int i = 0; i < 3; i++)
		sonde_expw_sample(w, 100, 1, T0 + (uint64_t)(10 + i) * MS, 2 * MS, 0x22);
	sonde_expw_sample(w, 101, 0xffff, T0 + 20 * MS, MS, 0x11);
	sonde_expw_sample(w, 101, 1, T0 + 21 * MS, MS, 0x11);
	sonde_expw_sample(w, 101, 1, T0 + 22 * MS, MS, 0x33);
	sonde_expw_sample(w, 101, 1, T0 + 23 * MS, MS, 0xdead); /* no such stack */
	sonde_expw_sample(w, 101, 1, T0 + 24 * MS, MS, 0x44);   /* leaf in no object */
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n",
		       (unsigned long long)(T0 + 30 * MS));
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		nfail++;
		return;
	}
	struct sonde_exp *exp = sonde_exp_open(dir, err, sizeof(err));

	if (!exp) {
		printf("# %s\n", err);
		nfail++;
		return;
	}
	/* the stand-in names: object+offset of the leaf (an exact pc) */
	CHECK_T_FREE(run_exp(exp, "profile { @[func] = count(); }", NULL, NULL),
		     KEYS("\n", "0x999999", "1", "<unknown>", "1", "libc.so.6+0x1234", "3", "prog+0x401000",
			  "8", NULL));
	/* callers are return addresses: named by the address before */
	CHECK_T_FREE(run_exp(exp, "profile { @[caller] = count(); }", NULL, NULL),
		     KEYS("\n", "<none>", "1", "<unknown>", "1", "prog+0x40100f", "3", "prog+0x402004",
			  "8", NULL));
	CHECK_T_FREE(run_exp(exp, "profile { @[object] = count(); }", NULL, NULL),
		     KEYS("\n", "<unknown>", "2", "libc.so.6", "3", "prog", "8", NULL));
	CHECK_T_FREE(run_exp(exp, "profile { @[thread] = sum(weight); @c[cpu] = count(); }", NULL, NULL),
		     "\n              101          5000000\n"
		     "              100         11000000\n"
		     "               -1                1\n"
		     "                0                5\n"
		     "                1                7\n");
	CHECK_T_FREE(run_exp(exp, "profile /func == \"libc.so.6+0x1234\"/ { @ = lquantize(time / 1000000, 0, 30, 5); @d = max(depth); @p = min(pc); }",
			     NULL, NULL),
		     cat3("\n", DIST("5", 0, "0", "10", 40, "3", "15", 0, "0", NULL),
			  "\n                3\n  139637976732212\n"));
	/* names come from the namer, once per stack */
	namer_calls = 0;
	CHECK_T_FREE(run_exp(exp, "profile { @[func, caller] = count(); }", test_namer, "F"),
		     F("\n" S50 S50 I16 "\n" S50 S50 I16 "\n" S50 S50 I16 "\n" S50 S50 I16 "\n" S50 S50 I16 "\n",
		       "<unknown>", "<unknown>", "1", "F401000", "<none>", "1", "F999999", "F402005r", "1",
		       "F7f0000001234", "F401010r", "3", "F401000", "F402005r", "7"));
	CHECK_I(namer_calls, 7);
	/* a program without profile clauses reads nothing */
	CHECK_T_FREE(run_exp(exp, "BEGIN { @ = count(); }", NULL, NULL), "\n                1\n");
	sonde_exp_close(exp);
	if (getenv("SONDE_TEST_KEEP"))
		printf("# kept %s\n", tmpdir);
	else
		nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	test_quantize();
	test_lquantize();
	test_llquantize();
	test_oracle_llquantize();
	test_scalars();
	test_normalize();
	test_clear_trunc();
	test_merge();
	test_keys_sort();
	test_language();
	test_depth();
	test_profile();
	free_kept();
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
