/*
 * test_viewmode: the stack-shaping view modes (lib/model/shape.h,
 * shape_omp.c, the profile builder) on synthetic OpenMP experiments whose
 * functions are this program's own (gcc's outlined body "vm_opener._omp_fn.0",
 * clang's ".omp_outlined.", their openers) and whose runtime is an object
 * named libgomp.so.1 or libomp.so.5: every distinct call path of the model
 * with its samples, exactly, in user, expert and machine mode; with and
 * without the regions (the omp kind); an experiment without OpenMP the same
 * in every mode.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 * SONDE_TEST_SHOW=1 prints every output checked.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "model/profile.h"
#include "reader/experiment.h"
#include "reader/expwriter.h"
#include "selfexe.h"
#include "sonde/format.h"
#include "sonde/states.h"

static bool show;
static char tmpdir[] = "/tmp/sonde-test-viewmode-XXXXXX";

#define T0 1000000000ull
#define MS 1000000ull

/* ---- the program's functions, as an OpenMP program has them --------------------------- */

#define FN __attribute__((noinline, used))
FN void vm_leaf(void);
FN void vm_gcc_body(void) __asm__("vm_opener._omp_fn.0");
FN void vm_opener(void);
FN void vm_clang_body(void) __asm__(".omp_outlined.");
FN void vm_clang_debug(void) __asm__(".omp_outlined._debug__");
FN void vm_clopener(void);
FN void vm_root(void);

FN void vm_leaf(void)
{
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop");
}
FN void vm_gcc_body(void)
{
	vm_leaf();
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop");
}
FN void vm_opener(void)
{
	vm_gcc_body();
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop");
}
FN void vm_clang_debug(void)
{
	vm_leaf();
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop");
}
FN void vm_clang_body(void)
{
	vm_clang_debug();
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop");
}
FN void vm_clopener(void)
{
	vm_clang_body();
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop");
}
FN void vm_root(void)
{
	vm_opener();
	vm_clopener();
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop");
}

static uint64_t at(void (*f)(void))
{
	return (uint64_t)(uintptr_t)f + 8;
}

/* The runtime and libc: objects that need not exist (their frames are
 * "<static>@..."-less addresses: their objects say what they are). */
#define RTB 0x7f0000000000ull
#define LIBC 0x7f1000000000ull

/* A stack of up to 8 frames, leaf first (exact), 0-terminated. */
static uint64_t stack(struct sonde_expw *w, const uint64_t *pcs)
{
	struct sonde_frame fr[8];
	int n = 0;
	uint64_t id = 0;

	for (; n < 8 && pcs[n]; n++)
		fr[n] = (struct sonde_frame){ .pc = pcs[n], .exact = n == 0 };
	sonde_expw_frames(w, 0, (uint16_t)n, fr, &id);
	return id;
}

enum { GCC, CLANG, PLAIN };

/*
 * One region (id 1) from 10 to 20 ms, opened by thread 100 (the master) in
 * vm_opener (gcc) or vm_clopener (clang) with thread 101; each stack below
 * has 1, 2, 4, ... samples so that every path's count says which stacks it
 * holds:
 *   1  master in the body:      leaf < body < runtime's fork < opener < root
 *   2  worker in the body:      leaf < body < runtime's thread start < libc x2
 *   4  worker at the barrier:   libc (futex) < runtime x2 < libc x2, state barrier
 *   8  worker idle, after the region (25 ms): the same stack, state idle
 *  16  master in the runtime's fork (overhead), state work
 * with_regions: the region's packets (its stack: runtime's fork < opener < root).
 */
static int write_exp(const char *path, int cc, bool with_regions)
{
	char err[512];
	struct sonde_expw *w = sonde_expw_create(path, err, sizeof err);

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
	const char *rt = cc == GCC ? "/nonexistent/libgomp.so.1" : cc == CLANG ? "/nonexistent/libomp.so.5"
									: "/nonexistent/libnothing.so.1";
	sonde_expw_object(w, 2, rt, RTB, RTB, RTB + 0x100000, T0);
	sonde_expw_object(w, 3, "/nonexistent/libc.so.6", LIBC, LIBC, LIBC + 0x100000, T0);
	uint64_t body = cc == GCC ? at(vm_gcc_body) : at(vm_clang_body);
	uint64_t opener = cc == GCC ? at(vm_opener) : at(vm_clopener);
	uint64_t s1 = cc == CLANG ? stack(w, (uint64_t[]){ at(vm_leaf), at(vm_clang_debug), body, RTB + 0x1000,
							    opener, at(vm_root), 0 })
				  : stack(w, (uint64_t[]){ at(vm_leaf), body, RTB + 0x1000, opener, at(vm_root), 0 });
	uint64_t s2 = cc == CLANG ? stack(w, (uint64_t[]){ at(vm_leaf), at(vm_clang_debug), body, RTB + 0x2000,
							    LIBC + 0x100, LIBC + 0x200, 0 })
				  : stack(w, (uint64_t[]){ at(vm_leaf), body, RTB + 0x2000, LIBC + 0x100, LIBC + 0x200, 0 });
	uint64_t s4 = stack(w, (uint64_t[]){ LIBC + 0x300, RTB + 0x3000, RTB + 0x2000, LIBC + 0x100, LIBC + 0x200, 0 });
	uint64_t s16 = stack(w, (uint64_t[]){ RTB + 0x1000, opener, at(vm_root), 0 });
	uint64_t rs = stack(w, (uint64_t[]){ RTB + 0x1000 + 1, opener, at(vm_root), 0 });
	unsigned k = 0;
	for (int i = 0; i < 1; i++, k++)
		sonde_expw_sample_state(w, 100, 0, SONDE_STATE_OMP_WORK, T0 + 11 * MS + k * 10000, MS, s1);
	for (int i = 0; i < 2; i++, k++)
		sonde_expw_sample_state(w, 101, 1, SONDE_STATE_OMP_WORK, T0 + 11 * MS + k * 10000, MS, s2);
	for (int i = 0; i < 4; i++, k++)
		sonde_expw_sample_state(w, 101, 1, SONDE_STATE_OMP_BARRIER, T0 + 11 * MS + k * 10000, MS, s4);
	for (int i = 0; i < 8; i++, k++)
		sonde_expw_sample_state(w, 101, 1, SONDE_STATE_OMP_IDLE, T0 + 25 * MS + k * 10000, MS, s4);
	for (int i = 0; i < 16; i++, k++)
		sonde_expw_sample_state(w, 100, 0, SONDE_STATE_OMP_WORK, T0 + 11 * MS + k * 10000, MS, s16);
	if (with_regions) {
		struct sonde_omp_region_packet r = { .flags = cc == GCC ? 0 : SONDE_OMPF_LIBOMP,
						     .level = 1,
						     .requested = 2,
						     .nthreads = 2,
						     .region_id = 1,
						     .codeptr = opener + 4,
						     .start_ns = T0 + 10 * MS,
						     .end_ns = T0 + 20 * MS,
						     .stack_id = rs };
		struct sonde_omp_itask_packet m = { .thread_num = 0, .region_id = 1, .begin_ns = T0 + 10 * MS,
						    .arrive_ns = T0 + 19 * MS, .end_ns = T0 + 20 * MS };
		struct sonde_omp_itask_packet wk = { .thread_num = 1, .region_id = 1, .begin_ns = T0 + 10 * MS,
						     .arrive_ns = T0 + 18 * MS, .end_ns = T0 + 20 * MS };
		sonde_expw_omp_decl(w);
		sonde_expw_omp_region(w, 100, &r);
		sonde_expw_omp_itask(w, 100, &m);
		sonde_expw_omp_itask(w, 101, &wk);
	}
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n", (unsigned long long)(T0 + 30 * MS));
	if (sonde_expw_finish(w, 0, err, sizeof err) < 0) {
		printf("# %s\n", err);
		return -1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every call path of the model with its samples, "N leaf < ... < root",
 * sorted; the runtime's addresses as "rt+OFF", libc's as "libc+OFF". */
static char *paths(const char *path, enum sonde_stackmode mode)
{
	char err[512];
	struct sonde_exp *e = sonde_exp_open(path, err, sizeof err);
	if (!e) {
		printf("# %s: %s\n", path, err);
		return NULL;
	}
	const struct sonde_exp *one[1] = { e };
	struct sonde_profile_opts o = { 0 };
	struct sonde_profile p;
	o.viewmode = mode;
	o.no_inlines = true;
	o.no_tailcalls = true;
	if (sonde_profile_build(&p, one, 1, &o, err, sizeof err) < 0) {
		printf("# build: %s\n", err);
		sonde_exp_close(e);
		return NULL;
	}
	size_t ns = sonde_model_nstacks(p.model), nl = 0;
	char **lines = calloc(ns + 1, sizeof *lines);
	for (size_t s = 0; s < ns; s++) {
		int d;
		const uint32_t *f = sonde_model_stack_funcs(p.model, (uint32_t)s, &d);
		int64_t n = sonde_model_stack_values(p.model, (uint32_t)s)[SONDE_M_SAMPLES];
		char *buf;
		size_t len;
		FILE *m = open_memstream(&buf, &len);
		if (!n) {
			fclose(m);
			free(buf);
			continue;
		}
		fprintf(m, "%3lld", (long long)n);
		for (int i = 0; i < d; i++) {
			const struct sonde_mfunc *fi = sonde_model_funcinfo(p.model, f[i]);
			fprintf(m, "%s%s", i ? " < " : " ", fi->name_short);
		}
		fclose(m);
		lines[nl++] = buf;
	}
	qsort(lines, nl, sizeof *lines, cmp_str);
	char *all;
	size_t len;
	FILE *m = open_memstream(&all, &len);
	for (size_t i = 0; i < nl; i++) {
		fprintf(m, "%s\n", lines[i]);
		free(lines[i]);
	}
	fclose(m);
	free(lines);
	sonde_profile_release(&p);
	sonde_exp_close(e);
	if (show)
		printf("# --- %s, mode %d\n%s", path, (int)mode, all);
	return all;
}

#define RT(off) "<static>@0x" #off " (libgomp.so.1)"
#define LC(off) "<static>@0x" #off " (libc.so.6)"

#define CHECK_PATHS(file, mode, want) check_paths(file, mode, want, __LINE__)
static void check_paths(const char *file, enum sonde_stackmode mode, const char *want, int line)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", tmpdir, file);
	char *got = paths(path, mode);
	if (got && !strcmp(got, want))
		npass++;
	else {
		nfail++;
		printf("not ok - %s: line %d: paths differ\n# --- want:\n%s# --- got:\n%s# ---\n", group, line, want,
		       got ? got : "(null)\n");
	}
	free(got);
}

int main(void)
{
	char path[4200];

	show = getenv("SONDE_TEST_SHOW") != NULL;
	if (!mkdtemp(tmpdir) || find_exe() < 0) {
		printf("# cannot make %s or find this program\n", tmpdir);
		return 1;
	}
	const char *names[] = { "gcc.er", "gccr.er", "clang.er", "clangr.er", "plain.er" };
	int ccs[] = { GCC, GCC, CLANG, CLANG, PLAIN };
	bool regs[] = { false, true, false, true, true };
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
		if (write_exp(path, ccs[i], regs[i]) < 0)
			return 1;
	}

	/* The runtime's and libc's addresses have no symbols (their objects
	 * do not exist): "<static>@0x..." (pc - 1 for a return address). */
	group = "machine mode: the stacks as recorded";
	CHECK_PATHS("gccr.er", SONDE_SHAPE_MACHINE,
		    "  1 vm_leaf < vm_opener._omp_fn.0 < " RT(fff) " < vm_opener < vm_root\n"
		    "  2 vm_leaf < vm_opener._omp_fn.0 < " RT(1fff) " < " LC(ff) " < " LC(1ff) "\n"
		    " 12 " LC(300) " < " RT(2fff) " < " RT(1fff) " < " LC(ff) " < " LC(1ff) "\n"
		    " 16 " RT(1000) " < vm_opener < vm_root\n");

	group = "user mode, gcc, regions: workers under the opener, the runtime by state";
	CHECK_PATHS("gccr.er", SONDE_SHAPE_USER,
		    "  3 vm_leaf < vm_opener < vm_root\n"
		    "  4 <OMP-barrier> < vm_opener < vm_root\n"
		    "  8 <OMP-idle>\n"
		    " 16 <OMP-overhead> < vm_opener < vm_root\n");

	group = "expert mode, gcc, regions: the runtime's frames at the leaf";
	CHECK_PATHS("gccr.er", SONDE_SHAPE_EXPERT,
		    "  3 vm_leaf < vm_opener < vm_root\n"
		    "  4 " LC(300) " < " RT(2fff) " < " RT(1fff) " < vm_opener < vm_root\n"
		    "  8 " LC(300) " < " RT(2fff) " < " RT(1fff) " < " LC(ff) " < " LC(1ff) "\n"
		    " 16 " RT(1000) " < vm_opener < vm_root\n");

	group = "user mode, gcc, no regions: names and the runtime, no reconstruction";
	CHECK_PATHS("gcc.er", SONDE_SHAPE_USER,
		    "  1 vm_leaf < vm_opener < vm_root\n"
		    "  2 vm_leaf < vm_opener < " LC(ff) " < " LC(1ff) "\n"
		    "  4 <OMP-barrier>\n"
		    "  8 <OMP-idle>\n"
		    " 16 <OMP-overhead> < vm_opener < vm_root\n");

	group = "user mode, clang, regions: .omp_outlined. by the region's codeptr";
	CHECK_PATHS("clangr.er", SONDE_SHAPE_USER,
		    "  3 vm_leaf < vm_clopener < vm_root\n"
		    "  4 <OMP-barrier> < vm_clopener < vm_root\n"
		    "  8 <OMP-idle>\n"
		    " 16 <OMP-overhead> < vm_clopener < vm_root\n");

	group = "user mode, clang, no regions: .omp_outlined. says no name";
	CHECK_PATHS("clang.er", SONDE_SHAPE_USER,
		    "  1 vm_leaf < .omp_outlined._debug__ < .omp_outlined. < vm_clopener < vm_root\n"
		    "  2 vm_leaf < .omp_outlined._debug__ < .omp_outlined. < " LC(ff) " < " LC(1ff) "\n"
		    "  4 <OMP-barrier>\n"
		    "  8 <OMP-idle>\n"
		    " 16 <OMP-overhead> < vm_clopener < vm_root\n");

	group = "the line views' continuation: a worker's evstacks in the region";
	for (int mode = SONDE_SHAPE_USER; mode <= SONDE_SHAPE_MACHINE; mode++) {
		char err[512];
		snprintf(path, sizeof path, "%s/gccr.er", tmpdir);
		struct sonde_exp *e = sonde_exp_open(path, err, sizeof err);
		const struct sonde_exp *one[1] = { e };
		struct sonde_profile_opts o = { 0 };
		struct sonde_profile p;
		o.viewmode = (enum sonde_stackmode)mode;
		if (!e || sonde_profile_build(&p, one, 1, &o, err, sizeof err) < 0) {
			CHECK(!"built");
			continue;
		}
		int with = 0, samples = 0, ok_cont = 1;
		for (size_t i = 0; i < p.nev; i++)
			if (p.ev[i].ncont) {
				with++;
				samples += (int)p.ev[i].v[SONDE_M_SAMPLES];
				const struct sonde_stack *st = sonde_exp_stack(e, p.ev[i].cont[0].stack_id);
				ok_cont &= p.ev[i].ncont == 1 && st && st->depth == 3 && p.ev[i].cont[0].time_ns == T0 + 10 * MS;
			}
		/* the worker's body (2 samples) and barrier (4) in the region */
		CHECK_I(with, mode == SONDE_SHAPE_MACHINE ? 0 : 2);
		CHECK_I(samples, mode == SONDE_SHAPE_MACHINE ? 0 : 6);
		CHECK(ok_cont);
		CHECK(p.shaped == (mode != SONDE_SHAPE_MACHINE));
		sonde_profile_release(&p);
		sonde_exp_close(e);
	}

	group = "no OpenMP runtime: every mode the stacks as recorded";
	char *m = NULL;
	snprintf(path, sizeof path, "%s/plain.er", tmpdir);
	m = paths(path, SONDE_SHAPE_MACHINE);
	CHECK(m && strstr(m, ".omp_outlined. < <static>@0xfff (libnothing.so.1)"));
	CHECK_PATHS("plain.er", SONDE_SHAPE_USER, m ? m : "");
	CHECK_PATHS("plain.er", SONDE_SHAPE_EXPERT, m ? m : "");
	free(m);

	if (!getenv("SONDE_TEST_KEEP")) {
		char cmd[4300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# cannot remove %s\n", tmpdir);
	}
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
