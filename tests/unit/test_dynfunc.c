/*
 * Unit tests of lib/symbols/dynfunc.c: perf map parsing (good lines, the forms
 * perf accepts, garbage), overlap resolution and lookups, and random bytes
 * that must never crash the parser; an experiment's jvm.map (the Java
 * agent's) read with its jit.map.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "reader/expwriter.h"
#include "symbols/dynfunc.h"

static struct sonde_dynfuncs *parse(const char *text)
{
	return sonde_dynfuncs_parse(text, strlen(text));
}

static const char *name_at(const struct sonde_dynfuncs *d, uint64_t pc)
{
	size_t n;
	long i = sonde_dynfuncs_find(d, pc);

	return i < 0 ? "(none)" : sonde_dynfuncs_entries(d, &n)[i].name;
}

/* The pseudo object of the entry at pc. */
static const char *object_at(const struct sonde_dynfuncs *d, uint64_t pc)
{
	long i = sonde_dynfuncs_find(d, pc);
	return i < 0 ? "(none)" : sonde_dynfuncs_entry_object(d, (size_t)i)->name;
}

static void forms(void)
{
	group = "forms";
	struct sonde_dynfuncs *d = parse("1000 10 plain\n"
					 "0x2000 0x20 with prefix\r\n"
					 "  3000\t8\tLazyCompile:~f /a b.js:12  \n"
					 "\n"
					 "4000 4 ctl\001char\n"
					 "5000 2 last line without newline");
	size_t n;
	const struct sonde_dynfunc *e = sonde_dynfuncs_entries(d, &n);

	CHECK_U(n, 5);
	CHECK_U(sonde_dynfuncs_ignored(d), 0);
	CHECK_S(e[0].name, "plain");
	CHECK_U(e[0].lo, 0x1000);
	CHECK_U(e[0].hi, 0x1010);
	CHECK_U(e[0].line, 1);
	CHECK_S(e[1].name, "with prefix");
	CHECK_U(e[1].hi, 0x2020);
	CHECK_S(e[2].name, "LazyCompile:~f /a b.js:12");
	CHECK_S(e[3].name, "ctl?char");
	CHECK_U(e[3].line, 5);
	CHECK_S(e[4].name, "last line without newline");
	CHECK_S(name_at(d, 0x1000), "plain");
	CHECK_S(name_at(d, 0x100f), "plain");
	CHECK_S(name_at(d, 0x1010), "(none)");
	CHECK_S(name_at(d, 0xfff), "(none)");
	CHECK_S(name_at(d, 0x2010), "with prefix");
	CHECK_S(name_at(d, 0x5001), "last line without newline");
	const struct sonde_object *o = sonde_dynfuncs_object(d);
	CHECK_S(o->path, SONDE_JIT_OBJECT);
	CHECK_S(o->name, SONDE_JIT_OBJECT);
	CHECK_U(o->base, 0);
	CHECK_U(o->lo, 0x1000);
	CHECK_U(o->hi, 0x5002);
	sonde_dynfuncs_free(d);
}

static void garbage(void)
{
	group = "garbage";
	struct sonde_dynfuncs *d = parse("hello world\n"
					 "1000\n"
					 "1000 10\n"
					 "1000 10   \n"
					 "1000 0 empty\n"
					 "xyz 10 f\n"
					 "10g 10 f\n"
					 "1000 1x f\n"
					 "ffffffffffffffff 2 wraps\n"
					 "11111111111111111 1 too long\n"
					 "0x 1 f\n"
					 "6000 10 good\n");
	size_t n;

	sonde_dynfuncs_entries(d, &n);
	CHECK_U(n, 1);
	CHECK_U(sonde_dynfuncs_ignored(d), 11);
	CHECK_S(name_at(d, 0x6000), "good");
	sonde_dynfuncs_free(d);

	d = parse("");
	CHECK(d);
	sonde_dynfuncs_entries(d, &n);
	CHECK_U(n, 0);
	CHECK_S(name_at(d, 0), "(none)");
	CHECK_U(sonde_dynfuncs_object(d)->hi, 0);
	sonde_dynfuncs_free(d);
}

/* A JIT that reuses memory re-announces it: the later line holds where
 * lines overlap, the earlier one elsewhere. */
static void overlap(void)
{
	group = "overlap";
	struct sonde_dynfuncs *d = parse("1000 100 old_big\n"
					 "1040 10 new_small\n"
					 "1000 8 newest_head\n"
					 "2000 10 a\n"
					 "2000 10 b\n");

	CHECK_S(name_at(d, 0x1000), "newest_head");
	CHECK_S(name_at(d, 0x1008), "old_big");
	CHECK_S(name_at(d, 0x1045), "new_small");
	CHECK_S(name_at(d, 0x1050), "old_big");
	CHECK_S(name_at(d, 0x10ff), "old_big");
	CHECK_S(name_at(d, 0x1100), "(none)");
	CHECK_S(name_at(d, 0x2000), "b");
	sonde_dynfuncs_free(d);
}

/* Random bytes, and random mutations of a good file: no crash, every
 * entry sane.  (ASAN=1 builds check the memory accesses.) */
static void fuzz(void)
{
	group = "fuzz";
	static const char good[] = "7f00aa000040 10 jit_sum_loop\n0x7f00aa000100 0x40 other one\n";
	char buf[512];
	int bad = 0;

	srand(12345);
	for (int iter = 0; iter < 20000; iter++) {
		size_t len;

		if (iter % 2) {
			len = (size_t)rand() % sizeof(buf);
			for (size_t i = 0; i < len; i++)
				buf[i] = (char)(iter % 4 == 1 ? rand() : " 0123456789abcdefx\n\t\r"[rand() % 21]);
		} else {
			len = sizeof(good) - 1;
			memcpy(buf, good, len);
			for (int k = rand() % 6; k >= 0; k--)
				buf[rand() % len] = (char)rand();
		}
		struct sonde_dynfuncs *d = sonde_dynfuncs_parse(buf, len);
		size_t n;
		const struct sonde_dynfunc *e = d ? sonde_dynfuncs_entries(d, &n) : NULL;

		if (!d) {
			bad++;
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			if (!(e[i].lo < e[i].hi) || !e[i].name[0] || strlen(e[i].name) > len ||
			    sonde_dynfuncs_find(d, e[i].lo) < 0)
				bad++;
		}
		sonde_dynfuncs_find(d, (uint64_t)rand() << 20);
		sonde_dynfuncs_free(d);
	}
	CHECK_I(bad, 0);
}

/* A new experiment in a new directory (dir: a mkdtemp template; exp gets
 * its path): its writer, the log's preamble written; NULL on failure
 * (counted). */
static struct sonde_expw *new_exp(char *dir, char *exp, size_t cap)
{
	char err[256];
	if (!mkdtemp(dir)) {
		CHECK_I(0, 1);
		return NULL;
	}
	snprintf(exp, cap, "%s/t.er", dir);
	struct sonde_expw *w = sonde_expw_create(exp, err, sizeof err);
	CHECK_I(w != NULL, 1);
	if (w)
		sonde_expw_log_preamble(w, 1234, 1000000000);
	return w;
}

/* Ends w's experiment (an exit) and opens it: NULL on failure (counted). */
static struct sonde_exp *end_and_open(struct sonde_expw *w, const char *exp)
{
	char err[256];
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"2000000000\" status=\"0\"/>\n");
	CHECK_I(sonde_expw_finish(w, 0, err, sizeof err), 0);
	struct sonde_exp *e = sonde_exp_open(exp, err, sizeof err);
	CHECK_I(e != NULL, 1);
	return e;
}

static void remove_dir(const char *dir)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		CHECK_I(0, 1);
}

/* An experiment with jvm.map (the JVM's code), jit.map (a perf map), both
 * or none: read as one, jvm.map first, so that jit.map wins an overlap. */
static void both_maps(void)
{
	group = "jvm.map";
	static const struct {
		const char *jvm, *jit, *at_1008, *at_2008, *obj_1008, *obj_3008;
		size_t n;
	} cases[] = {
		/* the JVM's own code in <JVM-code>, a compiled method in <JIT> */
		{ "1000 10 Interpreter\n2000 10 a.B.c [compiled]\n3000 8 call_stub\n", NULL, "Interpreter",
		  "a.B.c [compiled]", "<JVM-code>", "<JVM-code>", 3 },
		{ NULL, "1000 10 perfmap\n3000 8 x [compiled]\n", "perfmap", "(none)", "<JIT>", "<JIT>", 2 },
		/* jvm.map's last line unended: jit.map's first is not the JVM's */
		{ "1000 10 Interpreter\n2000 10 a.B.c [compiled]", "1000 10 perfmap\n3000 8 stub\n", "perfmap",
		  "a.B.c [compiled]", "<JIT>", "<JIT>", 4 },
		{ "3000 8 call_stub\n", "1000 10 perfmap\n", "perfmap", "(none)", "<JIT>", "<JVM-code>", 2 },
		{ NULL, NULL, NULL, NULL, NULL, NULL, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char dir[] = "/tmp/test_dynfunc.XXXXXX", exp[64];
		struct sonde_expw *w = new_exp(dir, exp, sizeof exp);
		if (!w)
			return;
		if (cases[i].jvm)
			sonde_expw_text(w, SONDE_JVM_MAP_FILE, "%s", cases[i].jvm);
		if (cases[i].jit)
			sonde_expw_text(w, SONDE_JIT_MAP_FILE, "%s", cases[i].jit);
		struct sonde_exp *e = end_and_open(w, exp);
		bool present = true;
		struct sonde_dynfuncs *d = e ? sonde_dynfuncs_read(e, &present) : NULL;
		CHECK_I(present, cases[i].n > 0);
		if (d) {
			size_t n;
			sonde_dynfuncs_entries(d, &n);
			CHECK_U(n, cases[i].n);
			CHECK_S(name_at(d, 0x1008), cases[i].at_1008);
			CHECK_S(name_at(d, 0x2008), cases[i].at_2008);
			CHECK_S(object_at(d, 0x1008), cases[i].obj_1008);
			CHECK_S(object_at(d, 0x3004), cases[i].obj_3008);
			if (name_at(d, 0x2008)[0] == 'a')
				CHECK_S(object_at(d, 0x2008), "<JIT>");
		} else {
			CHECK_U(0, cases[i].n);
		}
		sonde_dynfuncs_free(d);
		if (e)
			sonde_exp_close(e);
		remove_dir(dir);
	}
}

/* jvm.code (the compiled methods by time): each load an entry before
 * jvm.map's, so that jvm.map's code (alive at the end) wins where freed
 * code's place was taken; its other events and lines of another shape
 * are no entries. */
static void code_by_time(void)
{
	group = "jvm.code";
	static const char *const code =
		"5 load 0x1000 10 0x77 4 1 -1 a.Old.gone\n"	   /* freed before the end */
		"6 load 0x2000 10 0x78 3 2 -1 a.Old.replaced\n"	   /* jvm.map has another there */
		"7 retire 0x2000 10 0x78 3 2 -1 a.Old.replaced\n"  /* no entry */
		"8 unload 0x1000 10 0x77 4 1 -1 a.Old.gone\n"	   /* no entry */
		"9 load 0x4000 10 0x79 4 3\n"			   /* no name: no entry */
		"load 0x5000 10\n\n garbage \n"			   /* no entries */
		"10 load 0x6000 8 0x7a 1 4 12 a.B.with space [x]"; /* unended, the name to its end */
	char dir[] = "/tmp/test_dynfunc.XXXXXX", exp[64], err[256];
	struct sonde_expw *w = new_exp(dir, exp, sizeof exp);
	if (!w)
		return;
	sonde_expw_text(w, SONDE_JVM_CODE_FILE, "%s", code);
	sonde_expw_text(w, SONDE_JVM_MAP_FILE, "%s", "2000 10 a.New.here [compiled]\n3000 8 call_stub\n");
	struct sonde_exp *e = end_and_open(w, exp);
	bool present = false;
	struct sonde_dynfuncs *d = e ? sonde_dynfuncs_read(e, &present) : NULL;
	CHECK_I(present, 1);
	CHECK_I(d != NULL, 1);
	if (d) {
		size_t n;
		sonde_dynfuncs_entries(d, &n);
		CHECK_U(n, 5); /* gone, replaced, with space; here, call_stub */
		CHECK_S(name_at(d, 0x1008), "a.Old.gone [compiled]");
		CHECK_S(object_at(d, 0x1008), "<JIT>");
		CHECK_S(name_at(d, 0x2008), "a.New.here [compiled]");
		CHECK_S(name_at(d, 0x4008), "(none)");
		CHECK_S(name_at(d, 0x5008), "(none)");
		CHECK_S(name_at(d, 0x6004), "a.B.with space [x] [compiled]");
		CHECK_S(object_at(d, 0x3004), "<JVM-code>");
	}
	sonde_dynfuncs_free(d);
	if (e)
		sonde_exp_close(e);
	/* damaged files: tokens of the format and bytes, in random lines;
	 * read without a crash (make ASAN=1 tests runs it under ASan),
	 * every entry a range that does not wrap */
	static const char *const tok[] = { "load", "retire", "0x1000", "10", "0x77",
					   "-1",   "a.B.c",  " ",      "  ", "\t",
					   "\n",   "\n",     "\xff",   "0x", "ffffffffffffffff",
					   "0" };
	int bad = 0;
	for (int round = 0; round < 40; round++) {
		char text[2048];
		size_t len = 0;
		while (len < sizeof text - 32) {
			const char *t = tok[rand() % (int)(sizeof tok / sizeof tok[0])];
			size_t l = strlen(t);
			memcpy(text + len, t, l);
			len += l;
			if (rand() % 3)
				text[len++] = ' ';
		}
		char path[128];
		snprintf(path, sizeof path, "%s/t.er/%s", dir, SONDE_JVM_CODE_FILE);
		FILE *f = fopen(path, "w");
		if (!f || fwrite(text, 1, len, f) != len)
			bad++;
		if (f)
			fclose(f);
		e = sonde_exp_open(exp, err, sizeof err);
		d = e ? sonde_dynfuncs_read(e, &present) : NULL;
		if (d) {
			size_t n;
			const struct sonde_dynfunc *v = sonde_dynfuncs_entries(d, &n);
			for (size_t i = 0; i < n; i++)
				bad += v[i].lo >= v[i].hi;
		} else {
			bad++;
		}
		sonde_dynfuncs_free(d);
		if (e)
			sonde_exp_close(e);
	}
	CHECK_I(bad, 0);
	remove_dir(dir);
}

int main(void)
{
	forms();
	garbage();
	overlap();
	fuzz();
	both_maps();
	code_by_time();
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
