/*
 * Unit test of lib/symbols/srcinfo.c against programs built at test time from
 * tests/fixtures/srclines.c (gcc DWARF 5 and 4, clang): for every
 * instruction of caller_a (found by its symbol, disassembled with
 * lib/symbols/disasm.c) the source position is
 *
 *   - in mix, inlined:     [mix @ MIX line (inlined), caller_a @ the call's line]
 *   - in caller_a itself:  [caller_a @ a line of caller_a]
 *   - or line 0 (DWARF's "no source line": clang's setup and padding)
 *
 * and at least one of each kind exists; hot_loop's loop instructions are
 * all on the LOOP line; the functions defined in the file are listed with
 * their declaration lines; code bounds by CFI match the symbol's.
 *
 * And the call sites (DW_TAG_call_site, DWARF 4's DW_TAG_GNU_call_site) of
 * tests/fixtures/tailcall.c built the same ways: main's call of A found by
 * its return address (a call, to A), and the tail calls of A (to C),
 * amb_top (to amb_b1 and amb_b2) and P (to the declaration tc_lib_work,
 * whose code is in another object: a name, no address).
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "symrange.h"
#include "symbols/disasm.h"
#include "symbols/srcinfo.h"

static char *debug_path = NULL;
static const Dwfl_Callbacks cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debug_path,
};

static unsigned marker_line(const char *src, const char *marker)
{
	FILE *f = fopen(src, "r");
	char buf[512];
	unsigned n = 0, found = 0;

	while (f && fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, marker))
			found = n;
	}
	if (f)
		fclose(f);
	return found;
}

/* The site in list idx[0..n) that calls the function named name (at lo
 * when the DWARF gives an address), or NULL. */
static struct srcobj_callsite *site_to(struct srcobj *so, const uint32_t *idx, size_t n, const char *name,
				       uint64_t lo)
{
	for (size_t i = 0; i < n; i++) {
		struct srcobj_callsite *c = srcobj_callsite(so, idx[i]);

		if (c && ((c->name && !strcmp(c->name, name)) || (lo && c->target == lo)))
			return c;
	}
	return NULL;
}

static void callsites(const char *dir, const char *cc, const char *flags)
{
	char prog[512], cmd[2048];

	snprintf(prog, sizeof(prog), "%s/tc_%s%s", dir, cc, flags);
	for (char *c = prog + strlen(dir) + 1; *c; c++)
		if (*c == ' ' || *c == '-')
			*c = '_';
	/* (the library only links the program: its code is not looked at) */
	snprintf(cmd, sizeof(cmd),
		 "%s -std=gnu11 -O2 %s -fPIC -shared -o '%s/libtailcall_lib.so' tests/fixtures/lib/tailcall_lib.c "
		 "2>/dev/null && %s -std=gnu11 -O2 %s -o '%s' tests/fixtures/tailcall.c -L'%s' -ltailcall_lib 2>/dev/null",
		 cc, flags, dir, cc, flags, prog, dir);
	if (system(cmd) != 0) {
		printf("# skipped: call sites, %s %s is not available\n", cc, flags);
		return;
	}
	struct srcobj *so = srcobj_open(prog, &cb);
	uint64_t a_lo = 0, a_hi, c_lo = 0, c_hi, main_lo = 0, main_hi = 0, amb_lo = 0, amb_hi, p_lo = 0, p_hi;

	CHECK(so != NULL);
	CHECK(sym_range(prog, "A", &a_lo, &a_hi) && sym_range(prog, "C", &c_lo, &c_hi) &&
	      sym_range(prog, "main", &main_lo, &main_hi) && sym_range(prog, "amb_top", &amb_lo, &amb_hi) &&
	      sym_range(prog, "P", &p_lo, &p_hi));
	if (!so)
		return;
	/* main's call of A: the instruction after it is the return address */
	char err[256];
	struct sonde_disasm *d = sonde_disasm_open(prog, err, sizeof(err));
	struct sonde_insn *v = NULL;
	long n = d ? sonde_disasm_range(d, main_lo, main_hi, &v, err, sizeof(err)) : -1;
	uint64_t ret = 0;

	for (long i = 0; i < n; i++)
		if (v[i].is_call && v[i].has_target && v[i].target == a_lo)
			ret = v[i].addr + v[i].size;
	CHECK(ret != 0);
	struct srcobj_callsite *c = srcobj_callsite_at(so, ret);

	CHECK(c != NULL);
	if (c) {
		CHECK(!c->tail);
		CHECK(c->func == main_lo);
		CHECK((c->name && !strcmp(c->name, "A")) || c->target == a_lo);
	}
	CHECK(srcobj_callsite_at(so, ret + 1) == NULL);
	uint32_t idx[8];
	size_t k = srcobj_tailcalls(so, a_lo, idx, 8);

	CHECK(k >= 1);
	c = site_to(so, idx, k < 8 ? k : 8, "C", c_lo);
	CHECK(c != NULL && c->tail && c->func == a_lo);
	k = srcobj_tailcalls(so, amb_lo, idx, 8);
	CHECK_I((long)k, 2);
	CHECK(site_to(so, idx, k, "amb_b1", 0) != NULL && site_to(so, idx, k, "amb_b2", 0) != NULL);
	k = srcobj_tailcalls(so, p_lo, idx, 8);
	c = site_to(so, idx, k < 8 ? k : 8, "tc_lib_work", 0);
	CHECK(c != NULL && c->tail && c->target == 0);
	CHECK_I((long)srcobj_tailcalls(so, c_lo, idx, 8), 0); /* C jumps nowhere */
	CHECK_I((long)srcobj_tailcalls(so, a_lo + 1, idx, 8), 0); /* not an entry */
	free(v);
	sonde_disasm_close(d);
	srcobj_close(so);
}

static void one(const char *dir, const char *src, const char *cc, const char *flags)
{
	char prog[512], cmd[2048];

	snprintf(prog, sizeof(prog), "%s/prog_%s%s", dir, cc, flags);
	for (char *c = prog + strlen(dir) + 1; *c; c++)
		if (*c == ' ' || *c == '-')
			*c = '_';
	snprintf(cmd, sizeof(cmd), "%s -std=gnu11 -O2 %s -o '%s' '%s' 2>/dev/null", cc, flags, prog, src);
	if (system(cmd) != 0) {
		printf("# skipped: %s %s is not available\n", cc, flags);
		return;
	}
	unsigned l_mix = marker_line(src, "/* MIX */"), l_calla = marker_line(src, "/* CALLA */"),
		 l_loop = marker_line(src, "/* LOOP */");
	struct srcobj *so = srcobj_open(prog, &cb);

	CHECK(so != NULL);
	if (!so)
		return;
	CHECK(srcobj_has_lines(so));
	uint64_t lo = 0, hi = 0;

	CHECK(sym_range(prog, "caller_a", &lo, &hi));
	char err[256];
	struct sonde_disasm *d = sonde_disasm_open(prog, err, sizeof(err));
	struct sonde_insn *v = NULL;
	long n = d ? sonde_disasm_range(d, lo, hi, &v, err, sizeof(err)) : -1;

	CHECK(n > 4);
	int inl = 0, own = 0, bad = 0;

	for (long i = 0; i < n; i++) {
		const struct sonde_srcframe *lv;
		int k = srcobj_lookup(so, v[i].addr, &lv);

		if (k == 2 && lv[0].inlined && !strcmp(lv[0].name, "mix") && lv[0].line == l_mix &&
		    !lv[1].inlined && !strcmp(lv[1].name, "caller_a") && lv[1].line == l_calla + 1 &&
		    strstr(lv[0].file, "srclines.c") && lv[0].file == lv[1].file)
			inl++;
		else if (k == 1 && !lv[0].inlined && !strcmp(lv[0].name, "caller_a") && lv[0].line >= l_calla - 3 &&
			 lv[0].line <= l_calla + 3)
			own++;
		else if (k && lv[0].line) { /* (line 0: code of no line, clang's padding and setup) */
			bad++;
			printf("# %s %s: 0x%llx: %d levels, %s line %u\n", cc, flags, (unsigned long long)v[i].addr, k,
			       lv[0].name ? lv[0].name : "?", lv[0].line);
		}
	}
	printf("# %s %s: caller_a: %d instructions in inlined mix, %d its own\n", cc, flags, inl, own);
	CHECK(inl >= 3);
	CHECK(own >= 1);
	CHECK(bad == 0);
	free(v);

	/* hot_loop's loop: every instruction with a line is on the LOOP line
	 * or the function's braces. */
	CHECK(sym_range(prog, "hot_loop", &lo, &hi));
	n = d ? sonde_disasm_range(d, lo, hi, &v, err, sizeof(err)) : -1;
	int onloop = 0;

	for (long i = 0; i < n; i++) {
		const struct sonde_srcframe *lv;

		if (srcobj_lookup(so, v[i].addr, &lv) > 0 && lv[0].line == l_loop)
			onloop++;
	}
	CHECK(onloop >= 5);
	free(v);
	sonde_disasm_close(d);

	/* CFI bounds of a pc inside hot_loop are hot_loop's. */
	uint64_t clo = 0, chi = 0;

	CHECK(srcobj_code_range(so, lo + 4, &clo, &chi));
	CHECK_U(clo, lo);
	CHECK(chi >= hi && chi <= hi + 16);

	/* The file's functions, with their declaration lines. */
	const struct sonde_srcframe *lv;

	CHECK(srcobj_lookup(so, lo + 4, &lv) == 1);
	const struct sonde_srcfunc *fns;
	size_t nf = srcobj_file_funcs(so, lv[0].file, &fns);
	int have = 0;

	for (size_t i = 0; i < nf; i++) {
		if (!strcmp(fns[i].name, "hot_loop"))
			have += fns[i].decl_line == l_loop - 2 && fns[i].lo == lo;
		if (!strcmp(fns[i].name, "mix"))
			have += fns[i].decl_line == l_mix - 2;
	}
	CHECK_I(have, 2);
	/* Unknown address, other file. */
	CHECK_I(srcobj_lookup(so, 0x10, &lv), 0);
	CHECK_U(srcobj_file_funcs(so, "/no/such/file.c", &fns), 0);
	srcobj_close(so);
}

int main(void)
{
	char dir[] = "/tmp/sonde-srcinfo.XXXXXX";
	char src[600];

	if (!mkdtemp(dir))
		return 1;
	snprintf(src, sizeof(src), "%s/srclines.c", dir);
	char cmd[1400];

	/* (run from the source tree's top, as tests/run.sh does) */
	snprintf(cmd, sizeof(cmd), "cp tests/fixtures/srclines.c '%s'", src);
	if (system(cmd) != 0) {
		printf("not ok - cannot copy tests/fixtures/srclines.c\n0 passed, 1 failed\n");
		return 1;
	}
	group = "gcc dwarf 5";
	one(dir, src, "cc", "-g");
	group = "gcc dwarf 4";
	one(dir, src, "cc", "-gdwarf-4");
	group = "clang";
	one(dir, src, "clang", "-g");
	group = "call sites, gcc dwarf 5";
	callsites(dir, "cc", "-g");
	group = "call sites, gcc dwarf 4";
	callsites(dir, "cc", "-gdwarf-4");
	group = "call sites, clang";
	callsites(dir, "clang", "-g");

	/* An ELF file without DWARF, and not an ELF file. */
	group = "no lines";
	snprintf(cmd, sizeof(cmd), "cc -O2 -s -o '%s/stripped' '%s'", dir, src);
	if (system(cmd) == 0) {
		char p[700];

		snprintf(p, sizeof(p), "%s/stripped", dir);
		struct srcobj *so = srcobj_open(p, &cb);

		CHECK(so != NULL);
		CHECK(!srcobj_has_lines(so));
		const struct sonde_srcframe *lv;

		CHECK_I(srcobj_lookup(so, 0x1000, &lv), 0);
		srcobj_close(so);
	}
	CHECK(srcobj_open(src, &cb) == NULL);
	CHECK(srcobj_open("/no/such/file", &cb) == NULL);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
