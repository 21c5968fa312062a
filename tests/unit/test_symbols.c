/*
 * test_symbols: the symbol layer (lib/symbols/symbols.c) on programs built here at
 * test time from tests/fixtures/sym/ (cc, g++, objcopy, strip), described
 * to it by synthetic experiments (lib/reader/expwriter.c) or recorded by the real
 * collector (build/bin/sonde collect).  The truth is what binutils says:
 * nm, nm -C, c++filt -p, objdump's "<name@plt>" labels, readelf.
 *
 * Run from the repository root (tests/run.sh does) or anywhere: the root is
 * also found from /proc/self/exe (build/tests/test_symbols).  The collector
 * is build/bin/sonde, or $SONDE_BIN.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 * SONDE_TEST_KEEP=1 keeps the temporary directory.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <ftw.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "reader/experiment.h"
#include "reader/expwriter.h"
#include "symbols/srcinfo.h"
#include "symbols/symbols.h"

static char tmpdir[] = "/tmp/sonde-test-symbols.XXXXXX";
static char root[4096]; /* the repository */


#define EXACT SONDE_PC_EXACT
#define T0 1000000000ull
#define SEC 1000000000ull

/* ---- helpers ------------------------------------------------------------- */

/* A path in the temporary directory.  The strings live until the end (a
 * test holds many at once), freed by free_tmp(). */
static char **tmps;
static size_t ntmps;

static char *tmp(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *tmp(const char *fmt, ...)
{
	char name[512], *p;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	char **n = realloc(tmps, (ntmps + 1) * sizeof(*tmps));

	if (!n || asprintf(&p, "%s/%s", tmpdir, name) < 0) {
		printf("# out of memory\n");
		exit(1);
	}
	tmps = n;
	tmps[ntmps++] = p;
	return p;
}

static void free_tmp(void)
{
	for (size_t i = 0; i < ntmps; i++)
		free(tmps[i]);
	free(tmps);
}

/* Runs a shell command; its output (stdout) in a malloc'ed string, NULL
 * when it failed (the failure is printed). */
static char *sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");

	if (!p) {
		printf("# popen %s failed\n", cmd);
		return NULL;
	}
	size_t n = 0, cap = 4096;
	char *out = malloc(cap);

	for (size_t r; out && (r = fread(out + n, 1, cap - n - 1, p)) > 0;) {
		n += r;
		if (cap - n < 2) {
			cap *= 2;
			out = realloc(out, cap);
		}
	}
	int st = pclose(p);

	if (!out)
		return NULL;
	out[n] = 0;
	if (st != 0) {
		printf("# command failed (status %d): %s\n%s", st, cmd, out);
		free(out);
		return NULL;
	}
	return out;
}

/* Runs a command whose output does not matter; 0 when it succeeded. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	char *out = sh("%s", cmd);

	free(out);
	return out ? 0 : -1;
}

/* nm's view of a file: defined text symbols. */
struct nmsym {
	uint64_t addr, size;
	char type;
	char name[512];
};

struct nmtab {
	struct nmsym *v;
	size_t n;
};

/* "nm -S --defined-only [flags] file": text symbols only (T t W i). */
static struct nmtab nm(const char *flags, const char *file)
{
	struct nmtab t = { 0 };
	char *out = sh("nm -S --defined-only %s '%s'", flags, file);

	if (!out)
		return t;
	t.v = calloc(strlen(out) / 8 + 1, sizeof(*t.v));
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		struct nmsym x = { 0 };
		char a[32], b[32], c[32];
		int used = 0;

		if (sscanf(line, "%31s %31s %31s %n", a, b, c, &used) == 3 && strlen(b) > 1) {
			x.addr = strtoull(a, NULL, 16);
			x.size = strtoull(b, NULL, 16);
			x.type = c[0];
		} else if (sscanf(line, "%31s %31s %n", a, b, &used) == 2 && strlen(b) == 1) {
			x.addr = strtoull(a, NULL, 16);
			x.type = b[0];
		} else {
			continue;
		}
		if (!strchr("TtWi", x.type))
			continue;
		snprintf(x.name, sizeof(x.name), "%s", line + used);
		if (strstr(flags, "-D"))
			x.name[strcspn(x.name, "@")] = 0; /* "time@@LINUX_2.6" */
		t.v[t.n++] = x;
	}
	free(out);
	return t;
}

static const struct nmsym *nm_find(const struct nmtab *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].name, name))
			return &t->v[i];
	return NULL;
}

/* Whether some symbol of t named name holds address a. */
static bool nm_holds(const struct nmtab *t, const char *name, uint64_t a)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].name, name) && t->v[i].addr <= a &&
		    a < t->v[i].addr + (t->v[i].size ? t->v[i].size : 1))
			return true;
	return false;
}

/* objdump's PLT labels: "0000000000001030 <puts@plt>:". */
static size_t plt_labels(const char *file, uint64_t *addr, char (*name)[512], size_t max)
{
	char *out = sh("objdump -d '%s'", file);
	size_t n = 0;

	if (!out)
		return 0;
	for (char *line = strtok(out, "\n"); line && n < max; line = strtok(NULL, "\n")) {
		char *lt = strchr(line, '<'), *gt = strstr(line, "@plt>:");

		if (!lt || !gt || gt < lt || line[0] == ' ')
			continue;
		addr[n] = strtoull(line, NULL, 16);
		snprintf(name[n], sizeof(name[n]), "%.*s@plt", (int)(gt - lt - 1), lt + 1);
		n++;
	}
	free(out);
	return n;
}

/* The GNU build id of a file, as readelf prints it ("" when none). */
static void buildid(const char *file, char *out, size_t size)
{
	char *o = sh("readelf -n '%s' 2>/dev/null", file);
	char *p = o ? strstr(o, "Build ID: ") : NULL;

	out[0] = 0;
	if (p)
		snprintf(out, size, "%.*s", (int)strcspn(p + 10, " \n"), p + 10);
	free(o);
}

/* The extent of a file's PT_LOAD segments. */
static void load_range(const char *file, uint64_t *lo, uint64_t *hi)
{
	char *out = sh("readelf -lW '%s'", file);

	*lo = UINT64_MAX;
	*hi = 0;
	for (char *line = out ? strtok(out, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		unsigned long long off, vaddr, paddr, filesz, memsz;

		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx", &off, &vaddr, &paddr, &filesz, &memsz) != 5)
			continue;
		if (vaddr < *lo)
			*lo = vaddr;
		if (vaddr + memsz > *hi)
			*hi = vaddr + memsz;
	}
	if (*lo == UINT64_MAX)
		*lo = 0;
	free(out);
}

/* One load object of a synthetic experiment. */
struct obj {
	const char *path;
	uint64_t base;
	uint64_t load_ns, unload_ns; /* unload_ns 0: never */
	const char *copy;	     /* file in the experiment, or NULL */
	const char *copy_from;	     /* file to copy there */
	const char *buildid;	     /* NULL: the file's own */
	uint64_t lo, hi;	     /* 0, 0: the file's PT_LOAD extent */
};

static struct sonde_exp *make_exp(const char *name, const struct obj *objs, size_t n)
{
	char err[512];
	struct sonde_expw *w = sonde_expw_create(tmp("%s", name), err, sizeof(err));

	if (!w) {
		printf("# %s\n", err);
		return NULL;
	}
	sonde_expw_log_preamble(w, 4242, T0);
	for (size_t i = 0; i < n; i++) {
		const struct obj *o = &objs[i];
		const char *file = o->path;
		char bid[128] = "";
		uint64_t lo = o->lo, hi = o->hi;

		if (o->copy) {
			file = tmp("%s/%s", name, o->copy);
			run("cp '%s' '%s'", o->copy_from, file);
		}
		if (o->buildid)
			snprintf(bid, sizeof(bid), "%s", o->buildid);
		else
			buildid(file, bid, sizeof(bid));
		if (!lo && !hi) {
			load_range(file, &lo, &hi);
			lo += o->base;
			hi += o->base;
		}
		sonde_expw_map(w,
			       "<object id=\"%u\" time_ns=\"%" PRIu64 "\" event=\"load\" path=\"%s\" "
			       "base=\"0x%" PRIx64 "\" lo=\"0x%" PRIx64 "\" hi=\"0x%" PRIx64 "\" buildid=\"%s\"%s%s%s/>\n",
			       (unsigned)i + 1, o->load_ns ? o->load_ns : (uint64_t)T0, o->path, o->base, lo, hi, bid,
			       o->copy ? " copy=\"" : "", o->copy ? o->copy : "", o->copy ? "\"" : "");
		if (o->unload_ns)
			sonde_expw_unload(w, (uint32_t)i + 1, o->unload_ns);
	}
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("# expwriter: %s\n", err);
		return NULL;
	}
	struct sonde_exp *exp = sonde_exp_open(tmp("%s", name), err, sizeof(err));

	if (!exp)
		printf("# open %s: %s\n", name, err);
	return exp;
}

static struct sonde_exp *open_exp(const char *dir)
{
	char err[512];
	struct sonde_exp *exp = sonde_exp_open(dir, err, sizeof(err));

	if (!exp)
		printf("# open %s: %s\n", dir, err);
	return exp;
}

/* Whether a problem contains every string given. */
static bool has_problem(const struct sonde_syms *s, ...)
{
	size_t n;
	const char *const *p = sonde_syms_problems(s, &n);

	for (size_t i = 0; i < n; i++) {
		va_list ap;
		const char *str;
		bool ok = true;

		va_start(ap, s);
		while ((str = va_arg(ap, const char *)))
			if (!strstr(p[i], str))
				ok = false;
		va_end(ap);
		if (ok)
			return true;
	}
	return false;
}

static size_t nproblems(const struct sonde_syms *s)
{
	size_t n;

	sonde_syms_problems(s, &n);
	return n;
}

static void show_problems(const struct sonde_syms *s)
{
	size_t n;
	const char *const *p = sonde_syms_problems(s, &n);

	for (size_t i = 0; i < n; i++)
		printf("#   problem: %s\n", p[i]);
}

/* Every id names its own function. */
static bool ids_dense(const struct sonde_syms *s)
{
	for (uint32_t id = 0; id < sonde_syms_count(s); id++)
		if (!sonde_syms_func(s, id) || sonde_syms_func(s, id)->id != id)
			return false;
	return !sonde_syms_func(s, (uint32_t)sonde_syms_count(s));
}

#define BASE_PROG 0x555555554000ull
#define BASE_LIB 0x7f1000000000ull
#define BASE_CPP 0x560000000000ull

/* ---- building the programs ------------------------------------------------- */

static bool have_cpp;

static int build(void)
{
	const char *src = tmp("src");
	int bad = 0;

	if (run("cp -r '%s/tests/fixtures/sym' '%s'", root, src))
		return -1;
	bad |= run("cc -O1 -g -o '%s' '%s/symprog.c' '%s/symdup.c'", tmp("prog"), src, src);
	bad |= run("cc -O1 -g -fcf-protection=full -Wl,-z,ibtplt -o '%s' '%s/symprog.c' '%s/symdup.c'",
		   tmp("prog_ibt"), src, src);
	bad |= run("cc -O1 -g -Wl,-z,now -o '%s' '%s/symprog.c' '%s/symdup.c'", tmp("prog_now"), src, src);
	bad |= run("cc -O1 -g -no-pie -o '%s' '%s/symprog.c' '%s/symdup.c'", tmp("prog_nopie"), src, src);
	bad |= run("cc -O1 -g -fPIC -shared -o '%s' '%s/symlib.c'", tmp("libsym.so"), src);
	bad |= run("cc -O1 -g -fPIC -shared -DSECOND -o '%s' '%s/symlib.c'", tmp("libsym2.so"), src);
	have_cpp = !run("g++ -O1 -g -o '%s' '%s/symcpp.cpp'", tmp("cpp"), src);
	if (!have_cpp)
		printf("# g++ failed: C++ tests fail\n");
	return bad ? -1 : 0;
}

/* ---- short names ------------------------------------------------------------ */

static void test_short_names(void)
{
	static const char *const cases[][2] = {
		{ "main", "main" },
		{ "foo(int)", "foo" },
		{ "int ns::twice<int>(int)", "ns::twice<int>" },
		{ "ns::Widget::run(int) const", "ns::Widget::run" },
		{ "ns::Widget::operator()(int)", "ns::Widget::operator()" },
		{ "ns::Widget::operator long() const", "ns::Widget::operator long" },
		{ "(anonymous namespace)::hidden(int)", "(anonymous namespace)::hidden" },
		{ "main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()" },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector<...>::push_back" },
		{ "std::vector<int>::push_back(int const&)", "std::vector<int>::push_back" },
		{ "std::map<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, double, "
		  "std::less<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >, "
		  "std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
		  "std::allocator<char> > const, double> > >::find(std::__cxx11::basic_string<char, "
		  "std::char_traits<char>, std::allocator<char> > const&)",
		  "std::map<...>::find" },
		{ "X<int>::operator<<(int)", "X<int>::operator<<" },
		{ "X<std::pair<long, long> >::operator<(X const&)", "X<...>::operator<" },
		{ "bool operator< <int>(X<int> const&, X<int> const&)", "operator< <int>" },
		{ "std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >"
		  "(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
		  "std::operator<< <...>" },
		{ "operator new(unsigned long)", "operator new" },
		{ "operator delete[](void*)", "operator delete[]" },
		{ "X::operator->() const", "X::operator->" },
		{ "X::operator>>=(int)", "X::operator>>=" },
		{ "X::operator<(X const&) const", "X::operator<" },
		{ "foo(void (*)(int))", "foo" },
		{ "X::f() &&", "X::f" },
		{ "X::f() const &", "X::f" },
		{ "non-virtual thunk to Derived::f() const", "non-virtual thunk to Derived::f" },
		{ "foo(int) [clone .cold]", "foo [clone .cold]" },
		{ "foo(int) [clone .isra.0] [clone .cold]", "foo [clone .isra.0] [clone .cold]" },
		{ "std::_Function_handler<void (int), main::{lambda(int)#1}>::_M_invoke(std::_Any_data const&, int&&)",
		  "std::_Function_handler<...>::_M_invoke" },
		{ "decltype (({parm#1}.begin)()) std::begin<std::vector<int> >(std::vector<int>&)",
		  "std::begin<...>" },
		{ "unsigned long f<unsigned long>(unsigned long)", "f<unsigned long>" },
	};
	char buf[512];

	group = "short names";
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = sonde_sym_short_name(cases[i][0], buf, sizeof(buf));

		CHECK_S(buf, cases[i][1]);
		CHECK_U(n, strlen(cases[i][1]));
	}
	/* snprintf-like truncation */
	CHECK_U(sonde_sym_short_name("ns::f(int)", buf, 4), 5);
	CHECK_S(buf, "ns:");
	CHECK_U(sonde_sym_short_name("ns::f(int)", NULL, 0), 5);
}

/* ---- demangling: Rust, bad and long manglings ---------------------------------- */

static uint64_t g_rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

/* One demangling: 1 and three sane strings, or 0 and none. */
static bool demangle_sane(const char *m, char **l, char **s, char **f)
{
	int r = sonde_sym_demangle(m, l, s, f);

	if (r == 0)
		return !*l && !*s && !*f;
	return r == 1 && *l && *s && strlen(*s) <= strlen(*l) + 4 && (!*f || strlen(*f) > 0);
}

static void test_demangle(void)
{
	static const char *const cases[][4] = {
		/* mangled, long, short, full ("" for none) */
		{ "_ZN4main6engine3Sim4step17he9c42cd5578e8d87E", "main::engine::Sim::step", "main::engine::Sim::step",
		  "main::engine::Sim::step::he9c42cd5578e8d87" },
		{ "_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal", "std::rt::lang_start_internal",
		  "std::rt::lang_start_internal", "std[e28293b1aa0f68bd]::rt::lang_start_internal" },
		{ "_ZN3foo3barEi", "foo::bar(int)", "foo::bar", "" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi@plt", "std::vector<int, std::allocator<int> >::push_back(int const&)@plt",
		  "std::vector<...>::push_back@plt", "" },
	};
	char *l, *s, *f;

	group = "demangling";
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(sonde_sym_demangle(cases[i][0], &l, &s, &f) == 1);
		CHECK_S(l ? l : "(null)", cases[i][1]);
		CHECK_S(s ? s : "(null)", cases[i][2]);
		CHECK_S(f ? f : "", cases[i][3]);
		free(l);
		free(s);
		free(f);
	}
	/* not mangled, or badly: no names, no crash */
	static const char *const bad[] = { "main", "", "_Z", "_R", "_ZN", "_ZN3foo", "_ZN999999999foo3barE",
					   "_RNv", "_RNvC", "_RINvNtCs_", "_ZN4main17h0123456789abcdefE",
					   "_ZZZZZZZZZZZZZZZZ", "_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_interna",
					   "__physics_MOD_relax", "MAIN__", "sweep.0" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bool ok = demangle_sane(bad[i], &l, &s, &f);

		check(ok, bad[i], __LINE__);
		free(l);
		free(s);
		free(f);
	}
	/* a 10 KiB name: a template nested 2000 deep, and a Rust path of 1000
	 * segments: demangled or not, never a crash, the short form short */
	size_t cap = 16384;
	char *m = malloc(cap), *o = malloc(cap * 8);
	size_t n = 0;

	n += (size_t)snprintf(m + n, cap - n, "_Z1fI");
	for (int i = 0; i < 2000 && n + 8 < cap; i++)
		n += (size_t)snprintf(m + n, cap - n, "St6vectorI");
	n += (size_t)snprintf(m + n, cap - n, "i");
	for (int i = 0; i < 2000 && n + 4 < cap; i++)
		m[n++] = 'E';
	snprintf(m + n, cap - n, "EvT_");
	CHECK(demangle_sane(m, &l, &s, &f));
	CHECK(!s || strlen(s) < 200);
	free(l);
	free(s);
	free(f);
	n = (size_t)snprintf(m, cap, "_ZN");
	for (int i = 0; i < 1000 && n + 12 < cap; i++)
		n += (size_t)snprintf(m + n, cap - n, "7segment");
	snprintf(m + n, cap - n, "17h0123456789abcdefE");
	CHECK(demangle_sane(m, &l, &s, &f));
	free(l);
	free(s);
	free(f);
	/* random mutations of good manglings, and random bytes */
	int insane = 0;
	for (int it = 0; it < 200000; it++) {
		const char *base = cases[rnd() % (sizeof(cases) / sizeof(cases[0]))][0];
		size_t bl = strlen(base), k = 0;

		if (rnd() % 4 == 0) {
			size_t len = 1 + rnd() % 64;
			m[k++] = '_';
			m[k++] = rnd() % 2 ? 'Z' : 'R';
			while (k < len)
				m[k++] = (char)(1 + rnd() % 255);
		} else {
			memcpy(m, base, bl);
			k = bl;
			for (int j = 0, muts = 1 + (int)(rnd() % 4); j < muts && k > 2; j++) {
				size_t at = 2 + rnd() % (k - 2);
				switch (rnd() % 3) {
				case 0: m[at] = (char)(1 + rnd() % 255); break;
				case 1: k = at; break;
				default: m[at] = "0123456789EIN_vRZ"[rnd() % 17];
				}
			}
		}
		m[k] = '\0';
		if (!demangle_sane(m, &l, &s, &f))
			insane++;
		if (l)
			sonde_sym_short_name(l, o, cap * 8);
		free(l);
		free(s);
		free(f);
	}
	CHECK(insane == 0);
	/* short names of random text: bounded, terminated */
	for (int it = 0; it < 100000; it++) {
		size_t len = rnd() % 300;
		for (size_t k = 0; k < len; k++)
			m[k] = "ab<>()[]{} :,&*operator"[rnd() % 23];
		m[len] = '\0';
		size_t need = sonde_sym_short_name(m, o, 64);
		if (need >= 64 ? strlen(o) != 63 : strlen(o) != need) {
			check(false, m, __LINE__);
			break;
		}
	}
	free(m);
	free(o);
}

/* ---- a C program ------------------------------------------------------------ */

static void test_c(const char *name, uint64_t base)
{
	const char *prog = tmp("%s", name);
	struct obj o[] = { { .path = prog, .base = base } };
	struct sonde_exp *exp = make_exp(tmp("%s.er", name) + strlen(tmpdir) + 1, o, 1);
	struct nmtab t = nm("", prog);
	struct sonde_syms *s = exp ? sonde_syms_open(exp) : NULL;

	CHECK(s);
	CHECK(t.n > 10);
	if (!s || !t.n)
		goto out;
	CHECK_U(sonde_syms_count(s), 0);

	/* Every sized text symbol: its start, its last byte and, as a return
	 * address, the byte after its start give the function nm names. */
	size_t checked = 0;

	for (size_t i = 0; i < t.n; i++) {
		const struct nmsym *x = &t.v[i];

		if (!x->size)
			continue;
		const struct sonde_func *f = sonde_syms_lookup(s, base + x->addr, true, T0);
		char m[700];

		snprintf(m, sizeof(m), "%s at 0x%" PRIx64 " -> %s [0x%" PRIx64 ", 0x%" PRIx64 ")", x->name,
			 x->addr, f->mangled, f->lo, f->hi);
		check(nm_holds(&t, f->mangled, x->addr) && !f->synthesized && f->lo == x->addr, m, __LINE__);
		check(sonde_syms_lookup(s, base + x->addr + 1, false, T0) == f, m, __LINE__);
		check(sonde_syms_lookup(s, base + x->addr + x->size - 1, true, T0) == f, m, __LINE__);
		check(f->object && !strcmp(f->object->path, prog), m, __LINE__);
		checked++;
	}
	CHECK(checked >= 10);

	/* C names are the same in all three forms. */
	const struct nmsym *x = nm_find(&t, "compute");
	const struct sonde_func *f = x ? sonde_syms_lookup(s, base + x->addr + 3, true, T0) : NULL;

	CHECK(x && f);
	if (f) {
		CHECK_S(f->mangled, "compute");
		CHECK_S(f->name_long, "compute");
		CHECK_S(f->name_short, "compute");
		CHECK_U(f->lo, x->addr);
		CHECK_U(f->hi, x->addr + x->size);
		CHECK(!f->plt && !f->synthesized);
		/* A return address at a function's start is its caller's last byte. */
		CHECK(sonde_syms_lookup(s, base + x->addr, false, T0) != f);
		/* Cached: the same function, in O(1). */
		CHECK(sonde_syms_lookup(s, base + x->addr + 3, true, T0) == f);
		/* The SONDE_PC_EXACT bit of pc is ignored; exact decides. */
		CHECK(sonde_syms_lookup(s, (base + x->addr + 3) | EXACT, true, T0) == f);
		CHECK(sonde_syms_lookup(s, (base + x->addr + 4) | EXACT, false, T0) == f);
	}

	/* A static function. */
	x = nm_find(&t, "helper_static");
	f = x ? sonde_syms_lookup(s, base + x->addr, true, T0) : NULL;
	CHECK(x && x->type == 't');
	CHECK(f && !strcmp(f->name_short, "helper_static"));

	/* Aliases: the global api_entry over the local impl_local; the global
	 * strong_fn over the weak weak_fn. */
	x = nm_find(&t, "impl_local");
	f = x ? sonde_syms_lookup(s, base + x->addr, true, T0) : NULL;
	CHECK(x && nm_find(&t, "api_entry") && nm_find(&t, "api_entry")->addr == x->addr);
	CHECK(f && !strcmp(f->mangled, "api_entry"));
	x = nm_find(&t, "weak_fn");
	f = x ? sonde_syms_lookup(s, base + x->addr, true, T0) : NULL;
	CHECK(x && x->type == 'W');
	CHECK(f && !strcmp(f->mangled, "strong_fn"));

	/* Code between gap_before and gap_after: one function for the gap,
	 * named after its first address. */
	const struct nmsym *g1 = nm_find(&t, "gap_before"), *g2 = nm_find(&t, "gap_after");

	CHECK(g1 && g2 && g1->size == 1 && g2->addr == g1->addr + 5);
	if (g1 && g2) {
		char want[128];

		snprintf(want, sizeof(want), "<static>@0x%" PRIx64 " (%s)", g1->addr + 1, name);
		f = sonde_syms_lookup(s, base + g1->addr + 2, true, T0);
		CHECK_S(f->mangled, want);
		CHECK_S(f->name_long, want);
		CHECK_S(f->name_short, want);
		CHECK(f->synthesized && !f->plt);
		CHECK_U(f->lo, g1->addr + 1);
		CHECK_U(f->hi, g2->addr);
		CHECK(sonde_syms_lookup(s, base + g1->addr + 4, true, T0) == f);
		CHECK(sonde_syms_lookup(s, base + g1->addr + 1, true, T0) == f);
		CHECK(!strcmp(sonde_syms_lookup(s, base + g2->addr, true, T0)->mangled, "gap_after"));
	}

	/* PLT entries, named as objdump names them (.plt and .plt.got). */
	uint64_t pa[64];
	char pn[64][512];
	size_t np = plt_labels(prog, pa, pn, 64);
	bool puts_seen = false;

	CHECK(np >= 2);
	for (size_t i = 0; i < np; i++) {
		f = sonde_syms_lookup(s, base + pa[i] + 2, true, T0);
		CHECK_S(f->mangled, pn[i]);
		CHECK(f->plt && !f->synthesized && f->lo == pa[i]);
		if (!strcmp(pn[i], "puts@plt")) {
			puts_seen = true;
			CHECK_S(f->name_short, "puts@plt");
			CHECK_U(f->hi - f->lo, 16);
		}
	}
	CHECK(puts_seen);

	/* An unsized symbol (_init) ends with its section (.init), not at the
	 * next symbol: what lies between it and .plt is a gap; the PLT's
	 * header (lazy binding's way into the resolver: a sample there read
	 * as the program's "<static>@0x1017 (burn)" in t35) is named. */
	const struct nmsym *init = nm_find(&t, "_init");
	char *secs = sh("readelf -SW '%s'", prog);
	const char *is = secs ? strstr(secs, " .init ") : NULL, *ps = secs ? strstr(secs, " .plt ") : NULL;
	unsigned long long ia = 0, ioff = 0, isz = 0, pla = 0;

	CHECK(init && is && ps && sscanf(is, " .init %*s %llx %llx %llx", &ia, &ioff, &isz) == 3 &&
	      sscanf(ps, " .plt %*s %llx", &pla) == 1);
	free(secs);
	if (init && isz && pla) {
		CHECK_U(init->addr, ia);
		f = sonde_syms_lookup(s, base + ia, true, T0);
		CHECK_S(f->mangled, "_init");
		CHECK_U(f->hi, ia + isz);
		if (ia + isz < pla) {
			f = sonde_syms_lookup(s, base + ia + isz, true, T0);
			CHECK(f->synthesized && f->lo == ia + isz && f->hi == pla);
		}
		f = sonde_syms_lookup(s, base + pla + 6, true, T0);
		CHECK_S(f->mangled, "_dl_runtime_resolve@plt");
		CHECK(f->plt && !f->synthesized && f->lo == pla && f->hi == pla + 16);
	}

	/* Dense ids, no problems. */
	CHECK(ids_dense(s));
	CHECK_U(nproblems(s), 0);
	show_problems(s);

	/* find: by name, ambiguous, created on demand, unknown. */
	const struct sonde_func *out[4];

	CHECK_U(sonde_syms_find(s, "twin", out, 4), 2);
	CHECK(out[0] != out[1] && !strcmp(out[0]->mangled, "twin") && !strcmp(out[1]->mangled, "twin"));
	CHECK(out[0]->id < out[1]->id);
	CHECK_U(sonde_syms_find(s, "main", out, 4), 1);
	CHECK(out[0]->lo == nm_find(&t, "main")->addr);
	CHECK_U(sonde_syms_find(s, "puts@plt", out, 4), 1);
	CHECK_U(sonde_syms_find(s, "no_such_function", out, 4), 0);
	CHECK_U(sonde_syms_find(s, "twin", out, 1), 2); /* only one stored */
	CHECK(ids_dense(s));

	/* Out of range id */
	CHECK(!sonde_syms_func(s, 1u << 30));
out:
	sonde_syms_close(s);
	sonde_exp_close(exp);
	free(t.v);
}

/* ---- C++ --------------------------------------------------------------------- */

static void test_cpp(void)
{
	group = "C++ program";
	const char *cpp = tmp("cpp");

	CHECK(have_cpp);
	if (!have_cpp)
		return;
	struct obj o[] = { { .path = cpp, .base = BASE_CPP } };
	struct sonde_exp *exp = make_exp("cpp.er", o, 1);
	struct nmtab t = nm("", cpp), tc = nm("-C", cpp);
	struct sonde_syms *s = exp ? sonde_syms_open(exp) : NULL;

	CHECK(s && t.n > 10 && t.n == tc.n);
	if (!s || !t.n || t.n != tc.n)
		goto out;

	/* find before any lookup: nothing is read yet. */
	const struct sonde_func *out[4];

	CHECK_U(sonde_syms_find(s, "main", out, 4), 0);

	/* Every text symbol: long name = nm -C, short name = c++filt -p. */
	size_t mangled = 0;

	for (size_t i = 0; i < t.n; i++) {
		const struct nmsym *x = &t.v[i];

		if (!x->size)
			continue;
		const struct sonde_func *f = sonde_syms_lookup(s, BASE_CPP + x->addr, true, T0);

		if (strcmp(f->mangled, x->name))
			continue; /* an alias: test_c covers those */
		CHECK_S(f->name_long, tc.v[i].name);
		if (strncmp(x->name, "_Z", 2))
			continue;
		mangled++;
		char *p = sh("c++filt -p '%s'", x->name);

		if (p)
			p[strcspn(p, "\n")] = 0;
		CHECK_S(f->name_short, p ? p : "?");
		free(p);
	}
	CHECK(mangled >= 6);

	static const char *const names[][3] = {
		{ "_ZN2ns5twiceIiEET_S1_", "int ns::twice<int>(int)", "ns::twice<int>" },
		{ "_ZN2ns5twiceIdEET_S1_", "double ns::twice<double>(double)", "ns::twice<double>" },
		{ "_ZNK2ns6Widget3runEi", "ns::Widget::run(int) const", "ns::Widget::run" },
		{ "_ZN2ns6WidgetclEi", "ns::Widget::operator()(int)", "ns::Widget::operator()" },
		{ "_ZNK2ns6WidgetcvlEv", "ns::Widget::operator long() const", "ns::Widget::operator long" },
		{ "_ZN12_GLOBAL__N_16hiddenEi", "(anonymous namespace)::hidden(int)", "(anonymous namespace)::hidden" },
		{ "_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()(int) const",
		  "main::{lambda(int)#1}::operator()" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct nmsym *x = nm_find(&t, names[i][0]);
		char m[256];

		snprintf(m, sizeof(m), "%s is in the binary", names[i][0]);
		check(x != NULL, m, __LINE__);
		if (!x)
			continue;
		const struct sonde_func *f = sonde_syms_lookup(s, BASE_CPP + x->addr, true, T0);

		CHECK_S(f->mangled, names[i][0]);
		CHECK_S(f->name_long, names[i][1]);
		CHECK_S(f->name_short, names[i][2]);
		/* find by each of the three names */
		for (int k = 0; k < 3; k++) {
			size_t n = sonde_syms_find(s, names[i][k], out, 4);

			snprintf(m, sizeof(m), "find(\"%s\") gives one function (%zu)", names[i][k], n);
			check(n == 1 && out[0] == f, m, __LINE__);
		}
	}

	/* C++ PLT entries: demangled, "@plt" kept. */
	uint64_t pa[64];
	char pn[64][512];
	size_t np = plt_labels(cpp, pa, pn, 64), ncpp = 0;

	CHECK(np >= 3);
	for (size_t i = 0; i < np; i++) {
		const struct sonde_func *f = sonde_syms_lookup(s, BASE_CPP + pa[i], true, T0);

		CHECK_S(f->mangled, pn[i]);
		CHECK(f->plt);
		if (strncmp(pn[i], "_Z", 2))
			continue;
		ncpp++;
		char sym[512];

		snprintf(sym, sizeof(sym), "%.*s", (int)strlen(pn[i]) - 4, pn[i]);
		char *l = sh("c++filt '%s'", sym), *p = sh("c++filt -p '%s'", sym);
		char wl[1024], wp[1024];

		snprintf(wl, sizeof(wl), "%.*s@plt", l ? (int)strcspn(l, "\n") : 1, l ? l : "?");
		/* c++filt -p's, long template argument lists collapsed */
		char pp[1024];

		snprintf(pp, sizeof(pp), "%.*s", p ? (int)strcspn(p, "\n") : 1, p ? p : "?");
		sonde_sym_short_name(pp, wp, sizeof(wp) - 4);
		strcat(wp, "@plt");
		CHECK_S(f->name_long, wl);
		CHECK_S(f->name_short, wp);
		free(l);
		free(p);
	}
	CHECK(ncpp >= 1);

	/* find creates functions for symbols no lookup hit: a fresh handle. */
	sonde_syms_close(s);
	s = sonde_syms_open(exp);
	const struct nmsym *mainsym = nm_find(&t, "main");

	CHECK(s && mainsym);
	if (!s || !mainsym)
		goto out;
	sonde_syms_lookup(s, BASE_CPP + mainsym->addr, true, T0);
	CHECK_U(sonde_syms_count(s), 1);
	CHECK_U(sonde_syms_find(s, "ns::Widget::run", out, 4), 1);
	CHECK_S(out[0]->mangled, "_ZNK2ns6Widget3runEi");
	CHECK_U(sonde_syms_count(s), 2);
	CHECK(sonde_syms_lookup(s, BASE_CPP + nm_find(&t, "_ZNK2ns6Widget3runEi")->addr, true, T0) == out[0]);
	CHECK_U(sonde_syms_find(s, "ns::twice", out, 4), 0); /* template arguments are part of the name */
	CHECK(ids_dense(s));
	CHECK_U(nproblems(s), 0);
out:
	sonde_syms_close(s);
	sonde_exp_close(exp);
	free(t.v);
	free(tc.v);
}

/* ---- stripped files and separate debug files ----------------------------- */

static uint64_t puts_plt; /* puts@plt in prog */

/* Looks up helper_static (a local symbol: only .symtab has it) and main of
 * a copy of prog whose symbols come from elsewhere. */
static void check_debug(const char *name, const char *file, const char *debug_root, bool expect_symtab)
{
	struct nmtab t = nm("", tmp("prog"));
	struct obj o[] = { { .path = file, .base = BASE_PROG } };
	char en[64];

	snprintf(en, sizeof(en), "%s.er", name);
	struct sonde_exp *exp = make_exp(en, o, 1);

	if (debug_root)
		setenv("SONDE_DEBUG_ROOT", debug_root, 1);
	struct sonde_syms *s = exp ? sonde_syms_open(exp) : NULL;

	unsetenv("SONDE_DEBUG_ROOT");
	const struct nmsym *hs = nm_find(&t, "helper_static"), *mn = nm_find(&t, "main");

	CHECK(s && hs && mn);
	if (!s || !hs || !mn)
		goto out;
	const struct sonde_func *f = sonde_syms_lookup(s, BASE_PROG + hs->addr + 1, true, T0);
	const struct sonde_func *g = sonde_syms_lookup(s, BASE_PROG + mn->addr, true, T0);
	const struct sonde_func *p = sonde_syms_lookup(s, BASE_PROG + puts_plt, true, T0);

	if (expect_symtab) {
		CHECK_S(f->mangled, "helper_static");
		CHECK_U(f->lo, hs->addr);
		CHECK_U(f->hi, hs->addr + hs->size);
		CHECK_S(g->mangled, "main");
	} else {
		/* No function in .dynsym: addresses, said once. */
		char want[128];

		snprintf(want, sizeof(want), "<static>@0x%" PRIx64 " (prog)", hs->addr + 1);
		CHECK_S(f->mangled, want);
		CHECK(f->synthesized && f->lo == hs->addr + 1 && f->hi == f->lo + 1);
		snprintf(want, sizeof(want), "<static>@0x%" PRIx64 " (prog)", mn->addr);
		CHECK_S(g->mangled, want);
		/* Not a problem (no number is wrong): listed apart, once. */
		size_t nu;
		const char *const *u = sonde_syms_unnamed(s, &nu);

		CHECK_U(nu, 1);
		if (nu)
			CHECK_S(u[0], file);
	}
	/* The PLT comes from the stripped file itself. */
	CHECK_S(p->mangled, "puts@plt");
	CHECK_U(nproblems(s), 0);
	if (expect_symtab)
		show_problems(s);
out:
	sonde_syms_close(s);
	sonde_exp_close(exp);
	free(t.v);
}

static void test_debug_files(void)
{
	group = "separate debug files";
	const char *prog = tmp("prog");
	char bid[128];
	uint64_t pa[64];
	char pn[64][512];
	size_t np = plt_labels(prog, pa, pn, 64);

	for (size_t i = 0; i < np; i++)
		if (!strcmp(pn[i], "puts@plt"))
			puts_plt = pa[i];
	CHECK(puts_plt);
	buildid(prog, bid, sizeof(bid));
	CHECK(strlen(bid) == 40);

	const char *empty = tmp("emptyroot");

	mkdir(empty, 0755);
	int bad = run("objcopy --only-keep-debug '%s' '%s'", prog, tmp("prog.debug"));

	/* 1. .gnu_debuglink, debug file beside the program */
	mkdir(tmp("dl1"), 0755);
	bad |= run("strip --strip-all -o '%s' '%s' && cp '%s' '%s' && cd '%s' && "
		   "objcopy --add-gnu-debuglink=prog.debug prog",
		   tmp("dl1/prog"), prog, tmp("prog.debug"), tmp("dl1/prog.debug"), tmp("dl1"));
	/* 2. in .debug/ beside it */
	mkdir(tmp("dl2"), 0755);
	mkdir(tmp("dl2/.debug"), 0755);
	bad |= run("cp '%s' '%s' && cp '%s' '%s'", tmp("dl1/prog"), tmp("dl2/prog"), tmp("prog.debug"),
		   tmp("dl2/.debug/prog.debug"));
	/* 3. under the debug root, at the program's directory */
	mkdir(tmp("dl3"), 0755);
	bad |= run("cp '%s' '%s' && mkdir -p '%s%s' && cp '%s' '%s%s/prog.debug'", tmp("dl1/prog"),
		   tmp("dl3/prog"), tmp("root3"), tmp("dl3"), tmp("prog.debug"), tmp("root3"), tmp("dl3"));
	/* 4. by build id under the debug root, no debuglink */
	mkdir(tmp("bi"), 0755);
	bad |= run("strip --strip-all -o '%s' '%s' && mkdir -p '%s/.build-id/%.2s' && "
		   "cp '%s' '%s/.build-id/%.2s/%s.debug'",
		   tmp("bi/prog"), prog, tmp("root4"), bid, tmp("prog.debug"), tmp("root4"), bid, bid + 2);
	/* 5. stripped, no debug file anywhere */
	mkdir(tmp("none"), 0755);
	bad |= run("strip --strip-all -o '%s' '%s'", tmp("none/prog"), prog);
	CHECK(!bad);
	char *sect = sh("readelf -SW '%s'", tmp("dl1/prog"));

	CHECK(sect && !strstr(sect, ".symtab") && strstr(sect, ".gnu_debuglink"));
	free(sect);

	group = "debuglink, same directory";
	check_debug("dl1", tmp("dl1/prog"), empty, true);
	group = "debuglink, .debug/";
	check_debug("dl2", tmp("dl2/prog"), empty, true);
	group = "debuglink, debug root";
	check_debug("dl3", tmp("dl3/prog"), tmp("root3"), true);
	group = "debuglink, debug root missing";
	check_debug("dl3b", tmp("dl3/prog"), empty, false);
	group = "build id, debug root";
	check_debug("bi", tmp("bi/prog"), tmp("root4"), true);
	group = "stripped, no debug file";
	check_debug("none", tmp("none/prog"), empty, false);
	group = "not stripped";
	check_debug("full", prog, empty, true);
}

/* ---- a stripped shared library, and an address reused after dlclose --------- */

static void test_libraries(void)
{
	group = "stripped library";
	const char *lib = tmp("libsym.so"), *lib2 = tmp("libsym2.so");
	struct nmtab t = nm("", lib), t2 = nm("", lib2);
	const struct nmsym *ex = nm_find(&t, "lib_exported"), *hid = nm_find(&t, "lib_hidden");
	const struct nmsym *ex2 = nm_find(&t2, "other_exported");

	CHECK(ex && hid && ex2);
	if (!ex || !hid || !ex2)
		goto out;
	CHECK(!run("strip --strip-all -o '%s' '%s'", tmp("libsym_s.so"), lib));

	struct obj o[] = { { .path = tmp("libsym_s.so"), .base = BASE_LIB } };
	struct sonde_exp *exp = make_exp("lib.er", o, 1);

	setenv("SONDE_DEBUG_ROOT", tmp("emptyroot"), 1);
	struct sonde_syms *s = exp ? sonde_syms_open(exp) : NULL;

	CHECK(s);
	if (s) {
		const struct sonde_func *f = sonde_syms_lookup(s, BASE_LIB + ex->addr + 1, true, T0);

		CHECK_S(f->mangled, "lib_exported"); /* .dynsym */
		CHECK_U(f->lo, ex->addr);
		CHECK_U(f->hi, ex->addr + ex->size);
		f = sonde_syms_lookup(s, BASE_LIB + hid->addr + 1, true, T0);
		CHECK(f->synthesized && strstr(f->mangled, "(libsym_s.so)"));
		CHECK(f->lo <= hid->addr && hid->addr < f->hi);
		/* One function for the whole gap: both ends of lib_hidden. */
		CHECK(sonde_syms_lookup(s, BASE_LIB + hid->addr + hid->size - 1, true, T0) == f);
		char want[128];

		snprintf(want, sizeof(want), "<static>@0x%" PRIx64 " (libsym_s.so)", f->lo);
		CHECK_S(f->mangled, want);
		CHECK_U(nproblems(s), 0);
	}
	unsetenv("SONDE_DEBUG_ROOT");
	sonde_syms_close(s);
	sonde_exp_close(exp);

	/* A name asked before any address led to its object (the tail-call
	 * search meets a PLT call's callee by name; which objects the
	 * addresses read first depends on the order of the stacks). */
	group = "by name, unread object";
	struct obj un[] = { { .path = lib2, .base = BASE_LIB }, { .path = lib, .base = BASE_LIB + 0x100000 } };

	exp = make_exp("byname.er", un, 2);
	s = exp ? sonde_syms_open(exp) : NULL;
	CHECK(s);
	if (s) {
		const struct sonde_func *cand[4] = { NULL };

		CHECK_U(sonde_syms_symbol_any(s, "lib_exported", cand, 4), 1);
		CHECK(cand[0] && !strcmp(cand[0]->mangled, "lib_exported") && cand[0]->lo == ex->addr);
		CHECK_U(sonde_syms_symbol_any(s, "other_exported", cand, 4), 1);
		CHECK_U(sonde_syms_symbol_any(s, "no_such_function", cand, 4), 0);
	}
	sonde_syms_close(s);
	sonde_exp_close(exp);

	/* libsym.so at [lo, hi) from 1 s to 2 s, then libsym2.so at the same
	 * addresses from 3 s: the time picks the library, both cached. */
	group = "address reused";
	uint64_t lo1, hi1, lo2, hi2;

	load_range(lib, &lo1, &hi1);
	load_range(lib2, &lo2, &hi2);
	struct obj r[] = {
		{ .path = lib, .base = BASE_LIB, .load_ns = T0 + SEC, .unload_ns = T0 + 2 * SEC },
		{ .path = lib2, .base = BASE_LIB, .load_ns = T0 + 3 * SEC },
		{ .path = lib, .base = BASE_LIB + 0x100000, .load_ns = T0 + 3 * SEC },
	};
	exp = make_exp("reuse.er", r, 3);
	s = exp ? sonde_syms_open(exp) : NULL;
	CHECK(s);
	if (s) {
		uint64_t pc1 = BASE_LIB + ex->addr + 1, pc2 = BASE_LIB + ex2->addr + 1;

		for (int round = 0; round < 2; round++) {
			const struct sonde_func *a = sonde_syms_lookup(s, pc1, true, T0 + SEC + 5);
			const struct sonde_func *b = sonde_syms_lookup(s, pc1, true, T0 + 4 * SEC);
			const struct sonde_func *c = sonde_syms_lookup(s, pc2, true, T0 + 4 * SEC);
			const struct sonde_func *d = sonde_syms_lookup(s, BASE_LIB + 0x100000 + ex->addr, true,
								       T0 + 4 * SEC);

			CHECK_S(a->mangled, "lib_exported");
			CHECK(a->object && a->object->id == 1);
			CHECK(b->object && b->object->id == 2);
			CHECK_S(c->mangled, "other_exported");
			/* The same file loaded again: the same function, the first object. */
			CHECK(d == a);
			/* Any time: the object loaded last there. */
			CHECK(sonde_syms_lookup(s, pc1, true, SONDE_TIME_NEVER)->object->id == 2);
		}
		CHECK(ids_dense(s));
		CHECK_U(nproblems(s), 0);
	}
	sonde_syms_close(s);
	sonde_exp_close(exp);
out:
	free(t.v);
	free(t2.v);
}

/* ---- missing and foreign files, addresses in no object ----------------------- */

static void test_missing(void)
{
	group = "missing files";
	const char *gone = tmp("gone/libgone.so");
	struct obj o[] = {
		{ .path = gone, .base = BASE_LIB, .buildid = "00112233", .lo = BASE_LIB, .hi = BASE_LIB + 0x10000 },
		{ .path = "[heap]", .base = 0x1000000, .buildid = "", .lo = 0x1000000, .hi = 0x1100000 },
		{ .path = tmp("src/symprog.c"), .base = 0x2000000, .buildid = "", .lo = 0x2000000,
		  .hi = 0x2100000 },
		{ .path = "[vdso]", .base = 0x3000000, .buildid = "", .lo = 0x3000000, .hi = 0x3002000,
		  .copy = "vdso.so", .copy_from = "/dev/null" },
	};
	struct sonde_exp *exp = make_exp("missing.er", o, 4);
	struct sonde_syms *s = exp ? sonde_syms_open(exp) : NULL;

	CHECK(s);
	if (!s)
		goto out;
	const struct sonde_func *f = sonde_syms_lookup(s, BASE_LIB + 0x1234, true, T0);
	const struct sonde_func *g = sonde_syms_lookup(s, BASE_LIB + 0x1235, false, T0);

	CHECK_S(f->mangled, "<static>@0x1234 (libgone.so)");
	CHECK_S(f->name_short, "<static>@0x1234 (libgone.so)");
	CHECK(f->synthesized && f->object && f->lo == 0x1234 && f->hi == 0x1235);
	CHECK(g == f); /* a return address names the byte before it */
	CHECK(sonde_syms_lookup(s, BASE_LIB + 0x1236, true, T0) != f);
	CHECK_U(nproblems(s), 1);
	CHECK(has_problem(s, "cannot open '", gone, "No such file or directory",
			  "its functions are shown as addresses", NULL));

	f = sonde_syms_lookup(s, 0x1000010, true, T0);
	CHECK_S(f->mangled, "<static>@0x10 ([heap])");
	CHECK(has_problem(s, "'[heap]' is not a file", NULL));
	f = sonde_syms_lookup(s, 0x2000010, true, T0);
	CHECK(f->synthesized);
	CHECK(has_problem(s, "symprog.c", NULL));
	f = sonde_syms_lookup(s, 0x3000010, true, T0);
	CHECK_S(f->mangled, "<static>@0x10 ([vdso])");
	CHECK(has_problem(s, "missing.er/vdso.so", NULL));
	CHECK_U(nproblems(s), 4);
	show_problems(s);

	/* No build id recorded: the segments must still end where they did. */
	group = "no build id";
	uint64_t plo, phi;

	load_range(tmp("prog"), &plo, &phi);
	struct obj nb[] = {
		{ .path = tmp("prog"), .base = BASE_PROG, .buildid = "", .lo = BASE_PROG + plo, .hi = BASE_PROG + phi },
		{ .path = tmp("libsym.so"), .base = BASE_LIB, .buildid = "", .lo = BASE_LIB, .hi = BASE_LIB + 0x9000 },
	};
	struct sonde_exp *e2 = make_exp("nobid.er", nb, 2);
	struct sonde_syms *s2 = e2 ? sonde_syms_open(e2) : NULL;
	struct nmtab t = nm("", tmp("prog"));
	const struct nmsym *mn = nm_find(&t, "main");

	CHECK(s2 && mn);
	if (s2 && mn) {
		CHECK_S(sonde_syms_lookup(s2, BASE_PROG + mn->addr, true, T0)->mangled, "main");
		CHECK_U(nproblems(s2), 0);
		f = sonde_syms_lookup(s2, BASE_LIB + 0x1000, true, T0);
		CHECK_S(f->mangled, "<static>@0x1000 (libsym.so)");
		CHECK(has_problem(s2, "libsym.so' has changed since the experiment (its segments end at 0x",
				  ", recorded 0x9000); its functions are shown as addresses", NULL));
		CHECK_U(nproblems(s2), 1);
	}
	sonde_syms_close(s2);
	sonde_exp_close(e2);
	free(t.v);
	group = "missing files";

	/* An address in no object: one function per address. */
	f = sonde_syms_lookup(s, 0x7ffff0001234, true, T0);
	CHECK_S(f->mangled, "<unknown>@0x7ffff0001234");
	CHECK(f->synthesized && !f->object && f->lo == 0x7ffff0001234 && f->hi == f->lo + 1);
	CHECK(sonde_syms_lookup(s, 0x7ffff0001235, false, T0) == f);
	CHECK(sonde_syms_lookup(s, 0x7ffff0001235, true, T0) != f);
	CHECK(sonde_syms_lookup(s, 0, true, T0)->synthesized);
	CHECK(sonde_syms_lookup(s, 0, false, T0)->synthesized);
	CHECK(ids_dense(s));
	CHECK_U(nproblems(s), 4);
out:
	sonde_syms_close(s);
	sonde_exp_close(exp);

	/* An experiment without objects (no map.xml at all). */
	group = "no objects";
	exp = make_exp("empty.er", NULL, 0);
	s = exp ? sonde_syms_open(exp) : NULL;
	CHECK(s);
	if (s) {
		CHECK_S(sonde_syms_lookup(s, 0x401000, true, T0)->mangled, "<unknown>@0x401000");
		CHECK_U(sonde_syms_count(s), 1);
	}
	sonde_syms_close(s);
	sonde_exp_close(exp);
	sonde_syms_close(NULL);
}

/* ---- the vDSO ------------------------------------------------------------------- */

/* This process's vDSO image, whole (section headers included), in a file.
 * Its size in *size; NULL when there is none. */
static const char *own_vdso(size_t *size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);

	if (!eh)
		return NULL;
	*size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const char *file = tmp("vdso_full.so");
	FILE *f = fopen(file, "w");

	if (!f || fwrite(eh, 1, *size, f) != *size || fclose(f))
		return NULL;
	return file;
}

/* Every function of the vDSO (nm -D of the whole image) by its address:
 * one of the names nm gives there, the global one where there is one. */
static void check_vdso(struct sonde_syms *s, uint64_t base, const char *full)
{
	struct nmtab t = nm("-D", full);
	size_t checked = 0;

	CHECK(t.n >= 4);
	for (size_t i = 0; i < t.n; i++) {
		const struct nmsym *x = &t.v[i];
		const struct sonde_func *f = sonde_syms_lookup(s, base + x->addr, true, T0);
		bool global_there = false;

		for (size_t j = 0; j < t.n; j++)
			if (t.v[j].addr == x->addr && t.v[j].type == 'T')
				global_there = true;
		char m[600];

		snprintf(m, sizeof(m), "vDSO 0x%" PRIx64 " %s -> %s", x->addr, x->name, f->mangled);
		check(nm_holds(&t, f->mangled, x->addr) && f->lo == x->addr && !f->synthesized, m, __LINE__);
		if (global_there) {
			const struct nmsym *y = nm_find(&t, f->mangled);

			check(y && y->type == 'T', m, __LINE__);
		}
		CHECK(f->object && !strcmp(f->object->path, "[vdso]"));
		checked++;
	}
	CHECK(checked >= 4);
	CHECK_U(nproblems(s), 0);
	show_problems(s);
	free(t.v);
}

static void test_vdso_synthetic(void)
{
	group = "vDSO, whole image";
	size_t size;
	const char *full = own_vdso(&size);

	CHECK(full);
	if (!full)
		return;
	uint64_t base = (uint64_t)getauxval(AT_SYSINFO_EHDR);
	struct obj o[] = { { .path = "[vdso]", .base = base, .copy = "vdso.so", .copy_from = full,
			     .lo = base, .hi = base + size } };
	struct sonde_exp *exp = make_exp("vdso.er", o, 1);
	struct sonde_syms *s = exp ? sonde_syms_open(exp) : NULL;

	CHECK(s);
	if (s)
		check_vdso(s, base, full);
	sonde_syms_close(s);
	sonde_exp_close(exp);
}

/* ---- experiments recorded by the collector ------------------------------------- */

static void test_collected(void)
{
	group = "collected";
	const char *prog = tmp("cprog/prog");

	mkdir(tmp("cprog"), 0755);
	CHECK(!run("cp '%s' '%s'", tmp("prog"), prog));
	char sonde[4200];

	if (getenv("SONDE_BIN"))
		snprintf(sonde, sizeof(sonde), "%s", getenv("SONDE_BIN"));
	else
		snprintf(sonde, sizeof(sonde), "%s/build/bin/sonde", root);
	if (run("'%s' collect -p hi -d '%s' -o col.er '%s' burn", sonde, tmpdir, prog)) {
		CHECK(!"sonde collect ran");
		return;
	}
	struct sonde_exp *exp = open_exp(tmp("col.er"));
	struct sonde_syms *s = exp ? sonde_syms_open(exp) : NULL;
	struct nmtab t = nm("", prog);

	CHECK(s);
	if (!s)
		goto out;

	/* Every frame: in the program, what nm says; elsewhere, something. */
	size_t nst, frames = 0, inprog = 0, good = 0;
	const struct sonde_stack *st = sonde_exp_stacks(exp, &nst);
	const struct sonde_object *po = NULL;
	bool leaf_compute = false;

	CHECK(nst > 0);
	for (size_t i = 0; i < nst; i++) {
		for (unsigned d = 0; d < st[i].depth; d++) {
			uint64_t pc = st[i].frame[d].pc;
			bool exact = st[i].frame[d].exact;
			const struct sonde_func *f = sonde_syms_lookup(s, pc, exact, SONDE_TIME_NEVER);

			frames++;
			if (!f->object || strcmp(f->object->path, prog))
				continue;
			po = f->object;
			inprog++;
			uint64_t a = pc - po->base - (exact ? 0 : 1);

			if (nm_holds(&t, f->mangled, a) && f->lo <= a && a < f->hi)
				good++;
			else
				printf("# frame 0x%" PRIx64 " (0x%" PRIx64 ") -> %s\n", pc, a, f->mangled);
			if (d == 0 && (!strcmp(f->mangled, "compute") || !strcmp(f->mangled, "helper_static")))
				leaf_compute = true;
		}
	}
	printf("# %zu stacks, %zu frames, %zu in the program\n", nst, frames, inprog);
	CHECK(inprog > 0);
	CHECK_U(good, inprog);
	CHECK(leaf_compute);
	CHECK(ids_dense(s));

	/* The vDSO, from the experiment's copy. */
	size_t nobj;
	const struct sonde_object *objs = sonde_exp_objects(exp, &nobj);
	const struct sonde_object *vd = NULL;

	for (size_t i = 0; i < nobj; i++)
		if (!strcmp(objs[i].path, "[vdso]"))
			vd = &objs[i];
	CHECK(vd && vd->copy);
	size_t size;
	const char *full = own_vdso(&size);

	if (vd && full) {
		/* The same kernel: the copy is a prefix of this process's image. */
		char *cmp = sh("cmp -n %" PRIu64 " '%s' '%s/%s' && echo same", vd->hi - vd->lo, full,
			       tmp("col.er"), vd->copy);

		CHECK(cmp && strstr(cmp, "same"));
		free(cmp);
		group = "collected vDSO";
		check_vdso(s, vd->base, full);
		group = "collected";
	}
	CHECK_U(nproblems(s), 0);
	show_problems(s);
	sonde_syms_close(s);

	/* The program rebuilt after collection: reported once, addresses. */
	group = "changed binary";
	CHECK(!run("cc -O1 -g -DVARIANT=1 -o '%s' '%s' '%s'", prog, tmp("src/symprog.c"), tmp("src/symdup.c")));
	s = sonde_syms_open(exp);
	CHECK(s && po);
	if (s && po) {
		const struct nmsym *c = nm_find(&t, "compute");
		const struct sonde_func *f = sonde_syms_lookup(s, po->base + c->addr, true, SONDE_TIME_NEVER);
		char want[256];

		snprintf(want, sizeof(want), "<static>@0x%" PRIx64 " (prog)", c->addr);
		CHECK_S(f->mangled, want);
		CHECK(f->synthesized && f->object == po);
		sonde_syms_lookup(s, po->base + c->addr + 1, true, SONDE_TIME_NEVER);
		sonde_syms_lookup(s, po->base + c->addr + 2, true, SONDE_TIME_NEVER);
		CHECK_U(nproblems(s), 1);
		CHECK(has_problem(s, "'", prog, "' has changed since the experiment (build id ", po->buildid,
				  "its functions are shown as addresses", NULL));
		show_problems(s);
		const struct sonde_func *out[2];

		CHECK_U(sonde_syms_find(s, "compute", out, 2), 0);
	}
	sonde_syms_close(s);

	/* The program deleted. */
	group = "deleted binary";
	unlink(prog);
	s = sonde_syms_open(exp);
	CHECK(s && po);
	if (s && po) {
		const struct sonde_func *f = sonde_syms_lookup(s, po->base + 0x1000, true, SONDE_TIME_NEVER);

		CHECK_S(f->mangled, "<static>@0x1000 (prog)");
		CHECK_U(nproblems(s), 1);
		CHECK(has_problem(s, "cannot open '", prog, "': No such file or directory", NULL));
	}
out:
	sonde_syms_close(s);
	sonde_exp_close(exp);
	free(t.v);
}

/* ---- speed of cached lookups ---------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_speed(void)
{
	group = "speed";
	const char *prog = tmp("prog");
	struct obj o[] = { { .path = prog, .base = BASE_PROG } };
	struct sonde_exp *exp = make_exp("speed.er", o, 1);
	struct sonde_syms *s = exp ? sonde_syms_open(exp) : NULL;
	uint64_t lo, hi;

	load_range(prog, &lo, &hi);
	CHECK(s && hi > lo);
	if (!s || hi <= lo)
		goto out;
	/* 4096 distinct addresses, first lookups (symbol reading included) */
	double t0 = now();

	for (uint64_t i = 0; i < 4096; i++)
		sonde_syms_lookup(s, BASE_PROG + lo + (i * 7) % (hi - lo), i & 1, T0);
	double t1 = now();
	size_t n = 10 * 1000 * 1000;
	uintptr_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += (uintptr_t)sonde_syms_lookup(s, BASE_PROG + lo + ((i & 4095) * 7) % (hi - lo), i & 1, T0);
	double t2 = now();

	printf("# first 4096 lookups %.1f ms; %zu cached lookups %.0f ms (%.1f ns each)%s\n",
	       (t1 - t0) * 1e3, n, (t2 - t1) * 1e3, (t2 - t1) * 1e9 / (double)n, sum ? "" : " ");
	CHECK((t2 - t1) * 1e9 / (double)n < 200);
out:
	sonde_syms_close(s);
	sonde_exp_close(exp);
}

/* ---- main ------------------------------------------------------------------------- */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(p);
	return 0;
}

static void find_root(void)
{
	struct stat st;

	if (!stat("tests/fixtures/sym/symprog.c", &st) && getcwd(root, sizeof(root)))
		return;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = 0;
		/* build/tests/test_symbols -> the repository */
		snprintf(root, sizeof(root), "%s", dirname(dirname(dirname(exe))));
	}
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	find_root();
	unsetenv("DEBUGINFOD_URLS");
	group = "build";
	CHECK(!build());

	test_short_names();
	test_demangle();
	group = "C program";
	test_c("prog", BASE_PROG);
	group = "C program, IBT PLT (.plt.sec)";
	test_c("prog_ibt", BASE_PROG);
	group = "C program, -z now";
	test_c("prog_now", BASE_PROG);
	group = "C program, not PIE";
	test_c("prog_nopie", 0);
	test_cpp();
	test_debug_files();
	test_libraries();
	test_missing();
	test_vdso_synthetic();
	test_collected();
	test_speed();

	if (getenv("SONDE_TEST_KEEP"))
		printf("# kept %s\n", tmpdir);
	else
		nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free_tmp();
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
