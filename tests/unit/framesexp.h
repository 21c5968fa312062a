/*
 * The synthetic experiment of frames of every kind (test_frames,
 * test_export, test_report; --write DIR of each writes it as DIR/frames.er
 * for the scenario tests and the fuzzer's seeds): stacks that mix native,
 * kernel and Java frames, and frames made to be confused if a reader
 * mixed kinds up.  Pid 100, one thread, every sample 1 ms:
 *
 *   native functions (jit.map, in <JIT>): main [0x1000, 0x1100),
 *       work [0x2000, 0x2100), leaf_native [0x3000, 0x3100)
 *   kallsyms: _stext, do_syscall_64 at 0xffffffff81001000,
 *       entry_SYSCALL_64 at 0xffffffff81002000, a data symbol at
 *       0xffffffff81003000, and kfunc_low at 0x8000000000001000: an
 *       address whose bit 63 is SONDE_PC_EXACT's
 *   methods: 0x1010 com/example/Main.run(I[Ljava/lang/String;)V in
 *       Main.java with bci:line 0:10 5:11 12:14 (its id is main's pc
 *       0x1010); 0x2020 Lcom/example/Util;.hash(Ljava/lang/Object;)J in
 *       Util.java, no lines; 0x3030 com.example.Main.<init>()V, no source
 *
 *   S1 x5  do_syscall_64 (kernel 0xffffffff81001010, exact)
 *          entry_SYSCALL_64 (kernel 0xffffffff81002008)
 *          leaf_native (0x3010) - Util.hash (compiled 0x2020, bci 4)
 *          - Main.run (interpreted 0x1010, bci 7: line 11) - work (0x2010)
 *          - main (0x1020)
 *   S2 x3  main (native 0x1010, exact: the pc that is Main.run's id)
 *   S3 x2  kfunc_low (kernel 0x8000000000001010, exact: the bits of
 *          native 0x1010 | SONDE_PC_EXACT) - main (0x1020)
 *   S4 x1  <unknown method>@0x9999 (interpreted, bci unknown) - main
 *   S5 x1  <kind 200>@0x1010 (kind 200) - Main.<init> (compiled 0x3030, bci 0)
 *          - main
 *   S6 x1  <kernel>@0xffffffff81003010 (kernel, exact, in the data symbol)
 *   S7 x2  work (native 0x2020, exact: the pc that is Util.hash's id) -
 *          main
 *
 * Total 15 ms.
 *
 * Its variant framestate.er (write_frames_exp_state): the same samples,
 * some of them in an extra thread state, FX_STATE: the tests' build's row
 * TEST (SONDE_TEST_STATES, sonde/states.h: a state of CPU samples, metric
 * teststate), an id the table of the other builds does not have.  The
 * first `in_state` samples of each stack are in it: S1 2, S2 1, S3 1,
 * S4 1, S5 1, S6 0, S7 0, 6 ms in all (fx_state_truth: each function's
 * exclusive and inclusive time in it).  Its CPU time is frames.er's.
 */
#ifndef SONDE_TEST_FRAMESEXP_H
#define SONDE_TEST_FRAMESEXP_H

#include <stdio.h>

#include "reader/expwriter.h"

#define FX_T0 1000000000ull
#define FX_MS 1000000ull

#define FX_KERNEL(a, x) { .pc = (a), .kind = SONDE_FRAME_KERNEL, .exact = (x) }
#define FX_NATIVE(a, x) { .pc = (a), .kind = SONDE_FRAME_NATIVE, .exact = (x) }
#define FX_JAVA(k, id, bci) { .pc = (id), .kind = (k), .aux = (bci) }

static const struct sonde_frame fx_s1[] = {
	FX_KERNEL(0xffffffff81001010ull, true), FX_KERNEL(0xffffffff81002008ull, false),
	FX_NATIVE(0x3010, false),		FX_JAVA(SONDE_FRAME_JAVA_COMPILED, 0x2020, 4),
	FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x1010, 7), FX_NATIVE(0x2010, false),
	FX_NATIVE(0x1020, false),
};
static const struct sonde_frame fx_s2[] = { FX_NATIVE(0x1010, true) };
static const struct sonde_frame fx_s3[] = { FX_KERNEL(0x8000000000001010ull, true), FX_NATIVE(0x1020, false) };
static const struct sonde_frame fx_s4[] = { FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x9999, SONDE_FRAME_NO_BCI),
					    FX_NATIVE(0x1020, false) };
static const struct sonde_frame fx_s5[] = { { .pc = 0x1010, .kind = 200 }, FX_JAVA(SONDE_FRAME_JAVA_COMPILED, 0x3030, 0),
					    FX_NATIVE(0x1020, false) };
static const struct sonde_frame fx_s6[] = { FX_KERNEL(0xffffffff81003010ull, true) };
static const struct sonde_frame fx_s7[] = { FX_NATIVE(0x2020, true), FX_NATIVE(0x1020, false) };

static const struct {
	const struct sonde_frame *f;
	uint16_t depth;
	int samples, in_state; /* in_state: of framestate.er's samples, in FX_STATE */
} fx_stacks[] = {
	{ fx_s1, 7, 5, 2 }, { fx_s2, 1, 3, 1 }, { fx_s3, 2, 2, 1 }, { fx_s4, 2, 1, 1 },
	{ fx_s5, 3, 1, 1 }, { fx_s6, 1, 1, 0 }, { fx_s7, 2, 2, 0 },
};
#define FX_NSTACKS (sizeof(fx_stacks) / sizeof(fx_stacks[0]))
#define FX_TOTAL_MS 15

/* framestate.er's extra state: the tests' build's TEST, whose id is the
 * first after the other builds' rows (sonde/states.h). */
#ifdef SONDE_TEST_STATES
#define FX_STATE SONDE_STATE_TEST
#else
#define FX_STATE SONDE_STATE_COUNT
#endif
#define FX_STATE_MS 6

/* framestate.er's truth: each function's exclusive and inclusive ms in
 * FX_STATE. */
static const struct {
	const char *name;
	int excl, incl;
} fx_state_truth[] = {
	{ "do_syscall_64", 2, 2 },
	{ "entry_SYSCALL_64", 0, 2 },
	{ "leaf_native", 0, 2 },
	{ "com.example.Util.hash(java.lang.Object)", 0, 2 },
	{ "com.example.Main.run(int, java.lang.String[])", 0, 2 },
	{ "work", 0, 2 },
	{ "main", 1, 6 },
	{ "kfunc_low", 1, 1 },
	{ "<unknown method>@0x9999", 1, 1 },
	{ "<kind 200>@0x1010", 1, 1 },
	{ "com.example.Main.<init>()", 0, 1 },
	{ "<kernel>@0xffffffff81003010", 0, 0 },
};
#define FX_NSTATE_TRUTH (sizeof(fx_state_truth) / sizeof(fx_state_truth[0]))

/* The stack ids sonde_expw_frames gave fx_stacks, after write_frames_exp. */
static uint64_t fx_ids[FX_NSTACKS];

static const char fx_kallsyms[] = "ffffffff81000000 T _stext\n"
				  "ffffffff81001000 T do_syscall_64\n"
				  "ffffffff81002000 t entry_SYSCALL_64\n"
				  "ffffffff81003000 D some_data\n"
				  "8000000000001000 T kfunc_low\n";

static const char fx_methods[] = "# ID CLASS METHOD SIGNATURE SOURCEFILE [BCI:LINE ...]\n"
				 "0x1010 com/example/Main run (I[Ljava/lang/String;)V Main.java 0:10 5:11 12:14\n"
				 "0x2020 Lcom/example/Util; hash (Ljava/lang/Object;)J Util.java\n"
				 "0x3030 com.example.Main <init> ()V -\n";

/* Writes the experiment into dir, its samples in_state of each stack in
 * state (SONDE_STATE_CPU: none; FX_STATE: framestate.er): 0, or -1 with
 * a message printed. */
static __attribute__((unused)) int write_frames_exp_state(const char *dir, uint16_t state)
{
	char err[512];
	struct sonde_expw *w = sonde_expw_create(dir, err, sizeof(err));
	uint64_t t = FX_T0;

	if (!w) {
		printf("# %s\n", err);
		return -1;
	}
	sonde_expw_log_preamble(w, 100, FX_T0);
	for (size_t i = 0; i < FX_NSTACKS; i++)
		sonde_expw_frames(w, 0, fx_stacks[i].depth, fx_stacks[i].f, &fx_ids[i]);
	for (size_t i = 0; i < FX_NSTACKS; i++)
		for (int k = 0; k < fx_stacks[i].samples; k++)
			if (state != SONDE_STATE_CPU && k < fx_stacks[i].in_state)
				sonde_expw_sample_state(w, 100, 0, state, t += FX_MS, FX_MS, fx_ids[i]);
			else
				sonde_expw_sample(w, 100, 0, t += FX_MS, FX_MS, fx_ids[i]);
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n",
		       (unsigned long long)(t + FX_MS));
	sonde_expw_text(w, "jit.map", "1000 100 main\n2000 100 work\n3000 100 leaf_native\n");
	sonde_expw_text(w, "kallsyms", "%s", fx_kallsyms);
	sonde_expw_text(w, "methods", "%s", fx_methods);
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return -1;
	}
	return 0;
}

/* frames.er: no sample in another state than CPU. */
static __attribute__((unused)) int write_frames_exp(const char *dir)
{
	return write_frames_exp_state(dir, SONDE_STATE_CPU);
}

#endif
