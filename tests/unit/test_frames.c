/*
 * test_frames: frames of every kind (reader/experiment.h, struct
 * sonde_frame; symbols.h, "frames of every kind"), on the synthetic
 * experiment of framesexp.h, whose stacks mix native, kernel and Java
 * frames and hold frames that a reader mixing kinds up would name wrong
 * (a Java method id equal to a native pc, a kernel address whose bit 63
 * is SONDE_PC_EXACT's):
 *
 *   - the reader: each stack's frames as written, kinds and all; a frame
 *     node id used again for a frame of another kind is a conflict;
 *   - the symbol layer: each kind named from its file (kallsyms, the
 *     method table), Java descriptors in Java's spelling, source lines from
 *     the bytecode index, the placeholders of unknown ids and kinds, the
 *     problems of missing and damaged files;
 *   - the views (-functions, -objects, -callers-callees, -calltree,
 *     -fsingle, -dump stacks, -lines, -pcs, -source, -disasm) and sonde
 *     agg's func, caller and object: the numbers of the truth in
 *     framesexp.h.
 *
 * And its variant framestate.er, whose samples are partly in an extra
 * thread state (framesexp.h, FX_STATE): the reader gives each sample its
 * state as written; a build without the tests' row TEST (sonde/states.h)
 * counts that state's time as CPU time, as frames.er's, in no state of its
 * table; the tests' build (build/teststates/tests/test_frames, run by
 * t74) gives each function its teststate time of the truth.
 *
 * The exports and the report of the same experiments: test_export,
 * test_report; t74, t60 and t61 through the commands.
 *
 *	test_frames [--write DIR | --write-state DIR]
 *		(only write DIR/frames.er, or DIR/framestate.er)
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 * SONDE_TEST_SHOW=1 prints every view checked.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "framesexp.h"
#include "agg/dlang.h"
#include "model/profile.h"
#include "symbols/symbols.h"
#include "views/view.h"
#include "views/view_exp.h"

static char tmpdir[] = "/tmp/sonde-test-frames.XXXXXX";
static bool show;

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
		printf("not ok - %s: line %d: no \"%s\" in:\n%s\n", group, line, s, got ? got : "(null)");
	}
	va_end(ap);
}

static struct sonde_exp *open_exp(const char *name)
{
	char p[4200], err[512];
	struct sonde_exp *e;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	e = sonde_exp_open(p, err, sizeof(err));
	if (!e)
		printf("# %s: %s\n", name, err);
	return e;
}

/* ---- the reader -------------------------------------------------------------------- */

static void test_reader(void)
{
	struct sonde_exp *e = open_exp("frames.er");

	group = "reader";
	CHECK(e != NULL);
	if (!e)
		return;
	CHECK_I(sonde_exp_nerrors(e), 0);
	for (size_t i = 0; i < FX_NSTACKS; i++) {
		const struct sonde_stack *st = sonde_exp_stack(e, fx_ids[i]);

		CHECK(st != NULL);
		if (!st)
			continue;
		CHECK_I(st->depth, fx_stacks[i].depth);
		for (unsigned k = 0; k < st->depth && k < fx_stacks[i].depth; k++) {
			const struct sonde_frame *a = &st->frame[k], *b = &fx_stacks[i].f[k];

			CHECK_U(a->pc, b->pc);
			CHECK_I(a->kind, b->kind);
			CHECK_I(a->exact, b->exact);
			CHECK_I(a->aux, b->aux);
			CHECK(!memcmp(a, b, sizeof(*a)));
		}
		for (size_t j = 0; j < i; j++)
			CHECK(fx_ids[i] != fx_ids[j]); /* kinds are in the ids */
	}
	const struct sonde_exp_summary *s = sonde_exp_summary(e);

	CHECK_I(s->samples, FX_TOTAL_MS);
	CHECK_I(s->samples_unknown_stack, 0);
	CHECK_I(s->stack_conflicts, 0);
	sonde_exp_close(e);

	/* Frames whose packets have the same parent and pc but another
	 * kind (native 0x1010 exact and kernel 0x8000000000001010 both
	 * write pc 0x8000000000001010; a Java frame's method id 0x1010 and
	 * a native return address 0x1010): the writer's ids differ, as the
	 * format says, and each stack reads as written. */
	char p[4200], err[512];
	static const struct sonde_frame same[4][1] = {
		{ FX_NATIVE(0x1010, true) }, { FX_KERNEL(0x8000000000001010ull, true) },
		{ FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x1010, 0) }, { FX_NATIVE(0x1010, false) },
	};
	uint64_t ids[4];

	snprintf(p, sizeof(p), "%s/ids.er", tmpdir);
	struct sonde_expw *w = sonde_expw_create(p, err, sizeof(err));

	CHECK(w != NULL);
	if (!w)
		return;
	sonde_expw_log_preamble(w, 100, FX_T0);
	for (int i = 0; i < 4; i++) {
		sonde_expw_frames(w, 0, 1, same[i], &ids[i]);
		sonde_expw_sample(w, 100, 0, FX_T0 + (uint64_t)(i + 1) * FX_MS, FX_MS, ids[i]);
	}
	CHECK(sonde_expw_finish(w, 0, err, sizeof(err)) == 0);
	e = open_exp("ids.er");
	CHECK(e != NULL);
	if (!e)
		return;
	CHECK_I(sonde_exp_summary(e)->stack_conflicts, 0);
	for (int i = 0; i < 4; i++) {
		const struct sonde_stack *st = sonde_exp_stack(e, ids[i]);

		for (int j = 0; j < i; j++)
			CHECK(ids[i] != ids[j]);
		CHECK(st && st->depth == 1 && !memcmp(&st->frame[0], &same[i][0], sizeof(same[i][0])));
	}
	sonde_exp_close(e);

	/* A node id used again for a frame of another kind (a Java frame
	 * with main's pc), and the format's raw fields: a native pc's
	 * SONDE_PC_EXACT is exact, a kernel pc's bit 63 is the address's. */
	snprintf(p, sizeof(p), "%s/conflict.er", tmpdir);
	w = sonde_expw_create(p, err, sizeof(err));
	uint64_t id = 0, kid = 0;
	const struct sonde_frame nat[1] = { FX_NATIVE(0x1010, true) };
	struct sonde_frame_packet fp = { .type = SONDE_PKT_FRAME, .size = sizeof(fp), .kind = SONDE_FRAME_KERNEL,
					 .parent_id = 0, .pc = 0xffffffff81001010ull, .node_id = 0x123456789 };

	CHECK(w != NULL);
	if (!w)
		return;
	sonde_expw_log_preamble(w, 100, FX_T0);
	sonde_expw_frames(w, 0, 1, nat, &id);
	struct sonde_frame_packet again = { .type = SONDE_PKT_FRAME, .size = sizeof(again),
					    .kind = SONDE_FRAME_JAVA_INTERP, .aux = 3, .node_id = id,
					    .pc = 0x1010 | SONDE_PC_EXACT };

	sonde_expw_packet(w, SONDE_KIND_STACKS, 100, &again, sizeof(again));
	sonde_expw_packet(w, SONDE_KIND_STACKS, 100, &fp, sizeof(fp));
	kid = fp.node_id;
	sonde_expw_sample(w, 100, 0, FX_T0 + FX_MS, FX_MS, id);
	sonde_expw_sample(w, 100, 0, FX_T0 + 2 * FX_MS, FX_MS, kid);
	CHECK(sonde_expw_finish(w, 0, err, sizeof(err)) == 0);
	e = open_exp("conflict.er");
	CHECK(e != NULL);
	if (!e)
		return;
	CHECK_I(sonde_exp_summary(e)->stack_conflicts, 1);
	size_t np;
	const struct sonde_problem *pr = sonde_exp_problems(e, &np);
	bool said = false;

	for (size_t i = 0; i < np; i++)
		said |= strstr(pr[i].msg, "was already used for a different frame") != NULL;
	CHECK(said);
	const struct sonde_stack *st = sonde_exp_stack(e, id);

	CHECK(st && st->depth == 1 && st->frame[0].kind == SONDE_FRAME_NATIVE && st->frame[0].pc == 0x1010 &&
	      st->frame[0].exact); /* the first one is kept */
	st = sonde_exp_stack(e, kid);
	CHECK(st && st->depth == 1 && st->frame[0].kind == SONDE_FRAME_KERNEL &&
	      st->frame[0].pc == 0xffffffff81001010ull && !st->frame[0].exact);
	sonde_exp_close(e);
}

/* ---- the symbol layer ---------------------------------------------------------------- */

static const struct sonde_func *named(struct sonde_syms *s, struct sonde_frame f)
{
	return sonde_syms_frame(s, &f, SONDE_TIME_NEVER);
}

static bool has_problem(struct sonde_syms *s, const char *text)
{
	size_t n;
	const char *const *p = sonde_syms_problems(s, &n);

	for (size_t i = 0; i < n; i++)
		if (strstr(p[i], text))
			return true;
	if (show)
		for (size_t i = 0; i < n; i++)
			printf("# problem: %s\n", p[i]);
	return false;
}

static void test_symbols(void)
{
	struct sonde_exp *e = open_exp("frames.er");
	struct sonde_syms *s = e ? sonde_syms_open(e) : NULL;
	const struct sonde_func *f, *g;
	const struct sonde_srcframe *lv;

	group = "symbols";
	CHECK(s != NULL);
	if (!s) {
		sonde_exp_close(e);
		return;
	}
	/* kernel: kallsyms, exact and return addresses */
	f = named(s, (struct sonde_frame)FX_KERNEL(0xffffffff81001010ull, true));
	CHECK_S(f->name_long, "do_syscall_64");
	CHECK_S(f->object ? f->object->path : NULL, "<kernel>");
	CHECK_I(f->kind, SONDE_FRAME_KERNEL);
	CHECK_U(f->lo, 0xffffffff81001000ull);
	CHECK_U(f->hi, 0xffffffff81002000ull);
	CHECK(!f->synthesized);
	CHECK(named(s, (struct sonde_frame)FX_KERNEL(0xffffffff81002000ull, false)) == f); /* returns to the next */
	CHECK(named(s, (struct sonde_frame)FX_KERNEL(0xffffffff81002000ull, true)) != f);
	CHECK_S(named(s, (struct sonde_frame)FX_KERNEL(0xffffffff81002008ull, false))->name_long, "entry_SYSCALL_64");
	/* bit 63 is the address's: kfunc_low, not main (native 0x1010, exact) */
	f = named(s, (struct sonde_frame)FX_KERNEL(0x8000000000001010ull, true));
	CHECK_S(f->name_long, "kfunc_low");
	g = named(s, (struct sonde_frame)FX_NATIVE(0x1010, true));
	CHECK_S(g->name_long, "main");
	CHECK(f != g);
	CHECK_I(g->kind, SONDE_FRAME_NATIVE);
	/* an address in a data symbol, and outside kallsyms' reach */
	f = named(s, (struct sonde_frame)FX_KERNEL(0xffffffff81003010ull, true));
	CHECK_S(f->name_long, "<kernel>@0xffffffff81003010");
	CHECK_S(f->object ? f->object->name : NULL, "<kernel>");
	CHECK(f->synthesized);
	CHECK_S(named(s, (struct sonde_frame)FX_KERNEL(0x10, true))->name_long, "<kernel>@0x10");

	/* Java: the method of id 0x1010, not native main at 0x1010 */
	f = named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x1010, 7));
	CHECK_S(f->name_long, "com.example.Main.run(int, java.lang.String[])");
	CHECK_S(f->name_short, "com.example.Main.run");
	CHECK_S(f->mangled, "com/example/Main.run(I[Ljava/lang/String;)V");
	CHECK_S(f->object ? f->object->path : NULL, "com/example/Main.class");
	CHECK_S(f->object ? f->object->name : NULL, "Main.class");
	CHECK_I(f->kind, SONDE_FRAME_JAVA_INTERP);
	CHECK(f != g);
	/* compiled or interpreted, another bci: one method */
	CHECK(named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_COMPILED, 0x1010, 0)) == f);
	g = named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_COMPILED, 0x3030, 0));
	CHECK_S(g->name_long, "com.example.Main.<init>()");
	CHECK(g->object == f->object); /* "com.example.Main" is the class of "com/example/Main" */
	g = named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_COMPILED, 0x2020, 4));
	CHECK_S(g->name_long, "com.example.Util.hash(java.lang.Object)");
	CHECK_S(g->object ? g->object->path : NULL, "com/example/Util.class"); /* from "Lcom/example/Util;" */
	CHECK(sonde_syms_named(s, f->object, f->mangled) == f);
	/* source lines from the bytecode index */
	const struct {
		uint16_t bci;
		uint32_t line;
	} lines[] = { { 0, 10 }, { 4, 10 }, { 5, 11 }, { 7, 11 }, { 12, 14 }, { 300, 14 }, { SONDE_FRAME_NO_BCI, 0 } };

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct sonde_frame fr = FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x1010, lines[i].bci);
		int n = sonde_syms_frame_srcpos(s, &fr, SONDE_TIME_NEVER, &lv);

		CHECK_I(n, 1);
		if (n != 1)
			continue;
		CHECK_S(lv[0].file, "Main.java");
		CHECK_I(lv[0].line, lines[i].line);
		CHECK_S(lv[0].name, f->mangled);
		CHECK_I(lv[0].decl_line, 10);
		CHECK(!lv[0].inlined);
	}
	struct sonde_frame fr = FX_JAVA(SONDE_FRAME_JAVA_COMPILED, 0x2020, 4);

	CHECK_I(sonde_syms_frame_srcpos(s, &fr, SONDE_TIME_NEVER, &lv), 1); /* a file, no line */
	CHECK_S(lv[0].file, "Util.java");
	CHECK_I(lv[0].line, 0);
	fr = (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_COMPILED, 0x3030, 0);
	CHECK_I(sonde_syms_frame_srcpos(s, &fr, SONDE_TIME_NEVER, &lv), 0); /* "-", no lines */
	fr = (struct sonde_frame)FX_KERNEL(0xffffffff81001010ull, true);
	CHECK_I(sonde_syms_frame_srcpos(s, &fr, SONDE_TIME_NEVER, &lv), 0);
	/* places for -pcs */
	uint64_t at = 0;
	const char *key = NULL;

	fr = (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x1010, 7);
	CHECK(sonde_syms_frame_place(&fr, f, &at, &key) && at == 7 && key && !strcmp(key, f->mangled));
	fr.aux = SONDE_FRAME_NO_BCI;
	CHECK(!sonde_syms_frame_place(&fr, f, &at, &key));
	fr = (struct sonde_frame)FX_KERNEL(0xffffffff81002008ull, false);
	CHECK(sonde_syms_frame_place(&fr, named(s, fr), &at, &key) && at == 0xffffffff81002007ull &&
	      !strcmp(key, "<kernel>"));
	/* unknown ids and kinds */
	f = named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x9999, SONDE_FRAME_NO_BCI));
	CHECK_S(f->name_long, "<unknown method>@0x9999");
	CHECK_S(f->object ? f->object->path : NULL, "<JAVA>");
	CHECK(f->synthesized);
	f = named(s, (struct sonde_frame){ .pc = 0x1010, .kind = 200 });
	CHECK_S(f->name_long, "<kind 200>@0x1010");
	CHECK(!f->object && f->kind == 200);
	CHECK(named(s, (struct sonde_frame){ .pc = 0x1010, .kind = 255, .aux = 7 })->kind == 255);
	CHECK(sonde_frame_kind_info(9) == NULL);
	CHECK_S(sonde_frame_kind_info(SONDE_FRAME_KERNEL)->word, "kernel");
	CHECK_S(sonde_frame_kind_info(SONDE_FRAME_JAVA_COMPILED)->word, "java-compiled");
	/* the pseudo objects have no ELF file */
	CHECK(sonde_syms_object_file(s, f->object) == NULL);
	f = named(s, (struct sonde_frame)FX_KERNEL(0xffffffff81001010ull, true));
	CHECK(sonde_syms_object_file(s, f->object) == NULL && !sonde_syms_has_lines(s, f->object));
	CHECK_I(sonde_syms_srcpos_at(s, f->object, 0x10, &lv), 0);
	size_t np;

	sonde_syms_problems(s, &np);
	CHECK_I(np, 0);
	sonde_syms_close(s);
	sonde_exp_close(e);

	/* without the files: problems, and names made of the frames */
	char p[4200], err[512];

	group = "symbols, no files";
	snprintf(p, sizeof(p), "%s/bare.er", tmpdir);
	struct sonde_expw *w = sonde_expw_create(p, err, sizeof(err));

	sonde_expw_log_preamble(w, 100, FX_T0);
	CHECK(sonde_expw_finish(w, 0, err, sizeof(err)) == 0);
	e = open_exp("bare.er");
	s = e ? sonde_syms_open(e) : NULL;
	CHECK(s != NULL);
	if (s) {
		CHECK_S(named(s, (struct sonde_frame)FX_KERNEL(0xffffffff81001010ull, false))->name_long,
			"<kernel>@0xffffffff8100100f");
		CHECK_S(named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x1010, 1))->name_long,
			"<unknown method>@0x1010");
		CHECK(has_problem(s, "the experiment has kernel frames but no 'kallsyms' file"));
		CHECK(has_problem(s, "the experiment has Java frames but no 'methods' file"));
	}
	sonde_syms_close(s);
	sonde_exp_close(e);

	/* damaged files: lines that are not symbols or methods, and the
	 * zero addresses of a kallsyms read under kptr_restrict */
	group = "symbols, damaged files";
	snprintf(p, sizeof(p), "%s/damaged.er", tmpdir);
	w = sonde_expw_create(p, err, sizeof(err));
	sonde_expw_log_preamble(w, 100, FX_T0);
	sonde_expw_text(w, "kallsyms", "0000000000000000 T _stext\n0000000000000000 t do_syscall_64\nnot a line\n");
	sonde_expw_text(w, "methods",
			"0x10 a/B m (IJ)Z B.java 0:1\n"
			"0x11 a/B n notadescriptor -\n"
			"0x12 a/B\n"
			"0x13 a/B o ()V - 4:x\n"
			"nothex a/B p ()V -\n"
			"0x14 a/B q ([[DLjava/util/List;)[Ljava/lang/String; -\n"
			"0x15 a/B\x01" "C c\x7f" "d ()V -\n");
	CHECK(sonde_expw_finish(w, 0, err, sizeof(err)) == 0);
	e = open_exp("damaged.er");
	s = e ? sonde_syms_open(e) : NULL;
	CHECK(s != NULL);
	if (s) {
		CHECK_S(named(s, (struct sonde_frame)FX_KERNEL(0x10, true))->name_long, "<kernel>@0x10");
		CHECK(has_problem(s, "'kallsyms': 1 lines are not symbols"));
		CHECK(has_problem(s, "'kallsyms' gives every address as 0"));
		CHECK_S(named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x10, 0))->name_long,
			"a.B.m(int, long)");
		CHECK_S(named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x11, 0))->name_long,
			"a.B.nnotadescriptor");
		CHECK_S(named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x12, 0))->name_long,
			"<unknown method>@0x12");
		CHECK_S(named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x14, 0))->name_long,
			"a.B.q(double[][], java.util.List)");
		CHECK_S(named(s, (struct sonde_frame)FX_JAVA(SONDE_FRAME_JAVA_INTERP, 0x15, 0))->name_long,
			"a.B?C.c?d()"); /* control characters */
		CHECK(has_problem(s, "'methods': 3 lines are not methods"));
	}
	sonde_syms_close(s);
	sonde_exp_close(e);

	/* process frames (sonde kernel): named by the processes file, the
	 * last name of a pid, the idle task, a pid the file lacks, damaged
	 * lines counted; and without the file, one problem */
	group = "symbols, process frames";
	snprintf(p, sizeof(p), "%s/procs.er", tmpdir);
	w = sonde_expw_create(p, err, sizeof(err));
	sonde_expw_log_preamble(w, 100, FX_T0);
	sonde_expw_text(w, "processes", "1234 burn\n1240 kworker/0:1 x\n1234 burn2\nnotapid x\n99\n77 a\x01" "b\n");
	CHECK(sonde_expw_finish(w, 0, err, sizeof(err)) == 0);
	e = open_exp("procs.er");
	s = e ? sonde_syms_open(e) : NULL;
	CHECK(s != NULL);
	if (s) {
		const struct sonde_func *pf = named(s, (struct sonde_frame){ .pc = 1234, .kind = SONDE_FRAME_PROCESS });
		CHECK_S(pf->name_long, "<burn2_PID_1234>");
		CHECK(pf->object && !strcmp(pf->object->name, "<processes>"));
		CHECK(named(s, (struct sonde_frame){ .pc = 1234, .kind = SONDE_FRAME_PROCESS }) == pf);
		CHECK_S(named(s, (struct sonde_frame){ .pc = 1240, .kind = SONDE_FRAME_PROCESS })->name_long,
			"<kworker/0:1 x_PID_1240>");
		CHECK_S(named(s, (struct sonde_frame){ .pc = 0, .kind = SONDE_FRAME_PROCESS })->name_long, "<IDLE>");
		CHECK_S(named(s, (struct sonde_frame){ .pc = 5, .kind = SONDE_FRAME_PROCESS })->name_long,
			"<process_PID_5>");
		CHECK_S(named(s, (struct sonde_frame){ .pc = 77, .kind = SONDE_FRAME_PROCESS })->name_long,
			"<a?b_PID_77>");
		CHECK(has_problem(s, "'processes': 2 lines are not processes"));
		CHECK_S(sonde_frame_kind_info(SONDE_FRAME_PROCESS)->word, "process");
	}
	sonde_syms_close(s);
	sonde_exp_close(e);
	e = open_exp("bare.er");
	s = e ? sonde_syms_open(e) : NULL;
	if (s) {
		CHECK_S(named(s, (struct sonde_frame){ .pc = 42, .kind = SONDE_FRAME_PROCESS })->name_long,
			"<process_PID_42>");
		CHECK(has_problem(s, "cannot read 'processes'"));
	}
	sonde_syms_close(s);
	sonde_exp_close(e);
}

/* ---- the views ------------------------------------------------------------------------- */

static char *outbuf;
static size_t outlen;

enum view { V_FUNCTIONS, V_OBJECTS, V_CSINGLE, V_FSINGLE, V_CALLTREE, V_LINES, V_PCS, V_SOURCE, V_DISASM };

/* Runs a view of the profile in text; func for the views of one
 * function; its output, and its error in err. */
static const char *view(struct sonde_profile *p, enum view v, uint32_t func, char *err, size_t errlen)
{
	struct sonde_view_opts o;
	FILE *f;
	int rc = -1;

	free(outbuf);
	outbuf = NULL;
	f = open_memstream(&outbuf, &outlen);
	sonde_view_opts_init(&o);
	err[0] = '\0';
	switch (v) {
	case V_FUNCTIONS:
		rc = sonde_view_functions(f, p->model, &o, err, errlen);
		break;
	case V_OBJECTS:
		rc = sonde_view_objects(f, p->model, &o, err, errlen);
		break;
	case V_CSINGLE:
		rc = sonde_view_callers_callees(f, p->model, &o, func, err, errlen);
		break;
	case V_FSINGLE:
		rc = sonde_view_fsingle(f, p->model, &o, func, err, errlen);
		break;
	case V_CALLTREE:
		rc = sonde_view_calltree(f, p->model, &o, err, errlen);
		break;
	case V_LINES:
		rc = sonde_view_lines(f, p, &o, err, errlen);
		break;
	case V_PCS:
		rc = sonde_view_pcs(f, p, &o, err, errlen);
		break;
	case V_SOURCE:
		rc = sonde_view_source(f, p, &o, func, NULL, err, errlen);
		break;
	case V_DISASM:
		rc = sonde_view_disasm(f, p, &o, func, err, errlen);
		break;
	}
	fclose(f);
	if (show)
		printf("# --- %s (%d%s%s):\n%s", group, rc, err[0] ? ": " : "", err, outbuf);
	return rc < 0 && v != V_SOURCE && v != V_DISASM ? NULL : outbuf;
}

/* The model function named long_name; UINT32_MAX when there is none. */
static uint32_t func_named(const struct sonde_model *m, const char *long_name)
{
	for (uint32_t f = 0; f < sonde_model_nfuncs(m); f++)
		if (!strcmp(sonde_model_funcinfo(m, f)->name_long, long_name))
			return f;
	return UINT32_MAX;
}

/* The truth of framesexp.h: each function's load object and its
 * exclusive and inclusive ms. */
static const struct {
	const char *name, *object;
	int excl, incl;
	uint8_t kind;
} truth[] = {
	{ "do_syscall_64", "<kernel>", 5, 5, SONDE_FRAME_KERNEL },
	{ "entry_SYSCALL_64", "<kernel>", 0, 5, SONDE_FRAME_KERNEL },
	{ "leaf_native", "<JIT>", 0, 5, SONDE_FRAME_NATIVE },
	{ "com.example.Util.hash(java.lang.Object)", "com/example/Util.class", 0, 5, SONDE_FRAME_JAVA_COMPILED },
	{ "com.example.Main.run(int, java.lang.String[])", "com/example/Main.class", 0, 5, SONDE_FRAME_JAVA_INTERP },
	{ "work", "<JIT>", 2, 7, SONDE_FRAME_NATIVE },
	{ "main", "<JIT>", 3, 14, SONDE_FRAME_NATIVE },
	{ "kfunc_low", "<kernel>", 2, 2, SONDE_FRAME_KERNEL },
	{ "<unknown method>@0x9999", "<JAVA>", 1, 1, SONDE_FRAME_JAVA_INTERP },
	{ "<kind 200>@0x1010", "<unknown>", 1, 1, 200 },
	{ "com.example.Main.<init>()", "com/example/Main.class", 0, 1, SONDE_FRAME_JAVA_COMPILED },
	{ "<kernel>@0xffffffff81003010", "<kernel>", 1, 1, SONDE_FRAME_KERNEL },
};

static void test_views(void)
{
	struct sonde_exp *e = open_exp("frames.er");
	const struct sonde_exp *one[1] = { e };
	struct sonde_profile p;
	char err[512];
	const char *out;

	group = "views";
	CHECK(e != NULL);
	if (!e)
		return;
	if (sonde_profile_build(&p, one, 1, NULL, err, sizeof(err)) < 0) {
		printf("not ok - profile: %s\n", err);
		nfail++;
		sonde_exp_close(e);
		return;
	}
	const struct sonde_model *m = p.model;

	/* every function with its object and times, and nothing else */
	CHECK_I(sonde_model_total(m)[0], FX_TOTAL_MS * FX_MS);
	CHECK_I(sonde_model_nfuncs(m), sizeof(truth) / sizeof(truth[0]));
	for (size_t i = 0; i < sizeof(truth) / sizeof(truth[0]); i++) {
		uint32_t f = func_named(m, truth[i].name);
		const struct sonde_mfunc *fi = f == UINT32_MAX ? NULL : sonde_model_funcinfo(m, f);

		CHECK(fi != NULL);
		if (!fi) {
			printf("# no function %s\n", truth[i].name);
			continue;
		}
		CHECK_S(sonde_model_objectinfo(m, fi->object)->path, truth[i].object);
		CHECK_I(sonde_model_excl(m, f)[0], truth[i].excl * (int64_t)FX_MS);
		CHECK_I(sonde_model_incl(m, f)[0], truth[i].incl * (int64_t)FX_MS);
		/* the model's kind of a Java method is that of its first frame */
		CHECK_I(fi->kind, truth[i].kind);
	}
	out = view(&p, V_FUNCTIONS, 0, err, sizeof(err));
	CHECK_HAS(out, "0.005  33.33  0.005  33.33   do_syscall_64\n",
		  "0.      0.    0.005  33.33   com.example.Main.run(int, java.lang.String[])\n",
		  "0.002  13.33  0.002  13.33   kfunc_low\n", "0.003  20.00  0.014  93.33   main\n",
		  "0.001   6.67  0.001   6.67   <kind 200>@0x1010\n");
	out = view(&p, V_OBJECTS, 0, err, sizeof(err));
	CHECK_HAS(out, "0.008  53.33  0.008  53.33   <kernel>\n", "0.      0.    0.006  40.00   Main.class\n",
		  "0.      0.    0.005  33.33   Util.class\n", "0.001   6.67  0.001   6.67   <JAVA>\n");
	out = view(&p, V_CALLTREE, 0, err, sizeof(err));
	CHECK_HAS(out,
		  "0.003  20.00  0.014  93.33   +-main\n"
		  "0.002  13.33  0.007  46.67   | +-work\n"
		  "0.      0.    0.005  33.33   | | +-com.example.Main.run(int, java.lang.String[])\n"
		  "0.      0.    0.005  33.33   | |   +-com.example.Util.hash(java.lang.Object)\n"
		  "0.      0.    0.005  33.33   | |     +-leaf_native\n"
		  "0.      0.    0.005  33.33   | |       +-entry_SYSCALL_64\n"
		  "0.005  33.33  0.005  33.33   | |         +-do_syscall_64\n"
		  "0.002  13.33  0.002  13.33   | +-kfunc_low\n"
		  "0.001   6.67  0.001   6.67   | +-<unknown method>@0x9999\n"
		  "0.      0.    0.001   6.67   | +-com.example.Main.<init>()\n"
		  "0.001   6.67  0.001   6.67   |   +-<kind 200>@0x1010\n"
		  "0.001   6.67  0.001   6.67   +-<kernel>@0xffffffff81003010\n");
	uint32_t run = func_named(m, "com.example.Main.run(int, java.lang.String[])");
	uint32_t sys = func_named(m, "do_syscall_64");
	uint32_t hash = func_named(m, "com.example.Util.hash(java.lang.Object)");

	CHECK(run != UINT32_MAX && sys != UINT32_MAX && hash != UINT32_MAX);
	if (run == UINT32_MAX || sys == UINT32_MAX || hash == UINT32_MAX)
		goto out;
	out = view(&p, V_CSINGLE, run, err, sizeof(err));
	CHECK_HAS(out, "0.005 100.00  0.002  13.33  0.007  46.67   work\n",
		  "0.      0.    0.      0.    0.005  33.33  *com.example.Main.run(int, java.lang.String[])\n",
		  "0.005 100.00  0.      0.    0.005  33.33   com.example.Util.hash(java.lang.Object)\n");
	out = view(&p, V_CSINGLE, sys, err, sizeof(err));
	CHECK_HAS(out, "0.005 100.00  0.      0.    0.005  33.33   entry_SYSCALL_64\n");
	out = view(&p, V_FSINGLE, sys, err, sizeof(err));
	CHECK_HAS(out, "Address: 0xffffffff81001000\n", "Load Object: <kernel>\n",
		  "Note: a kernel function, not code of a load object\n");
	out = view(&p, V_FSINGLE, run, err, sizeof(err));
	CHECK_HAS(out, "Load Object: com/example/Main.class\n",
		  "Mangled Name: com/example/Main.run(I[Ljava/lang/String;)V\n",
		  "Note: a Java method, not code of a load object\n");
	/* lines from the bytecode index; places */
	out = view(&p, V_LINES, 0, err, sizeof(err));
	CHECK_HAS(out, "0.      0.    0.005  33.33   com.example.Main.run(int, java.lang.String[]), line 11 in "
		       "\"Main.java\"\n");
	out = view(&p, V_PCS, 0, err, sizeof(err));
	CHECK_HAS(out, "0.005  33.33  0.005  33.33   do_syscall_64 + 0x00000010\n",
		  "0.      0.    0.005  33.33   com.example.Main.run(int, java.lang.String[]) + bci 7\n",
		  "0.      0.    0.005  33.33   com.example.Util.hash(java.lang.Object) + bci 4\n",
		  "0.      0.    0.005  33.33   entry_SYSCALL_64 + 0x00000007\n",
		  "0.002  13.33  0.002  13.33   kfunc_low + 0x00000010\n", "0.003  20.00  0.003  20.00   main + 0x00000010\n");
	/* no ELF to disassemble; no source of a kernel function */
	view(&p, V_DISASM, sys, err, sizeof(err));
	CHECK_S(err, "'do_syscall_64' is a kernel function, not code of a load object: there is no ELF file to "
		     "disassemble");
	view(&p, V_DISASM, hash, err, sizeof(err));
	CHECK_S(err, "'com.example.Util.hash(java.lang.Object)' is a Java method, not code of a load object: there "
		     "is no ELF file to disassemble");
	view(&p, V_SOURCE, sys, err, sizeof(err));
	CHECK_S(err, "no source line of 'do_syscall_64' is recorded (it is a kernel function)");
	view(&p, V_SOURCE, run, err, sizeof(err));
	CHECK_HAS(err, "cannot find source file 'Main.java'");
out:
	sonde_profile_release(&p);
	sonde_exp_close(e);
}

/* -dump stacks: each frame with its kind and name */
static void test_dump(void)
{
	struct sonde_exp *e = open_exp("frames.er");
	char err[512];
	FILE *f;

	group = "dump";
	CHECK(e != NULL);
	if (!e)
		return;
	free(outbuf);
	outbuf = NULL;
	f = open_memstream(&outbuf, &outlen);
	CHECK(sonde_view_dump(f, e, SONDE_DUMP_STACKS, err, sizeof(err)) == 0);
	fclose(f);
	if (show)
		printf("%s", outbuf);
	CHECK_HAS(outbuf, "  depth 7\n"
			  "    #0 0xffffffff81001010  kernel  <kernel>:do_syscall_64+0x10\n"
			  "    #1 0xffffffff81002008  kernel  <kernel>:entry_SYSCALL_64+0x8\n"
			  "    #2 0x3010  <JIT>:leaf_native+0x10\n"
			  "    #3 0x2020  java-compiled  Util.class:com.example.Util.hash(java.lang.Object) bci 4\n"
			  "    #4 0x1010  java-interpreted  Main.class:com.example.Main.run(int, java.lang.String[]) "
			  "bci 7\n"
			  "    #5 0x2010  <JIT>:work+0x10\n"
			  "    #6 0x1020  <JIT>:main+0x20\n",
		  "  depth 1\n    #0 0x1010  <JIT>:main+0x10\n",
		  "    #0 0x8000000000001010  kernel  <kernel>:kfunc_low+0x10\n",
		  "    #0 0x9999  java-interpreted  <unknown method>@0x9999\n",
		  "    #0 0x1010  kind 200  <kind 200>@0x1010\n",
		  "    #0 0xffffffff81003010  kernel  <kernel>@0xffffffff81003010\n");
	sonde_exp_close(e);
}

/* sonde agg's func, caller, object and pc, with a namer that names
 * frames as the symbol layer does (cmd/agg.c's, less tail calls), and with
 * the stand-in namer */
static const char *syms_namer(void *ctx, const struct sonde_exp *exp, const struct sonde_frame *fr, uint64_t time_ns,
			      const struct sonde_frame *callee, const char **object)
{
	const struct sonde_func *f = sonde_syms_frame(ctx, fr, time_ns);

	(void)exp;
	(void)callee;
	if (object)
		*object = f->object ? f->object->name : NULL;
	return f->name_short;
}

static char *agg(struct sonde_exp *e, const char *prog, sonde_dl_name_fn fn, void *ctx)
{
	const struct sonde_dl_kind *kinds[] = { &sonde_dl_kind_profile };
	struct sonde_dl_error de;
	struct sonde_dl_prog *p = sonde_dl_compile(prog, kinds, 1, NULL, &de);
	char err[256], *buf = NULL;
	size_t len = 0;

	if (!p) {
		printf("# '%s': %u:%u: %s\n", prog, de.line, de.col, de.msg);
		nfail++;
		return NULL;
	}
	FILE *f = open_memstream(&buf, &len);

	if (sonde_dl_begin(p, f, err, sizeof(err)) || sonde_dl_run_profile(p, e, fn, ctx, err, sizeof(err)) < 0 ||
	    sonde_dl_end(p, f, err, sizeof(err)))
		printf("# %s\n", err), nfail++;
	sonde_dl_free(p);
	fclose(f);
	if (show)
		printf("# --- agg %s:\n%s", prog, buf);
	return buf;
}

/* The line of out whose words are those given (blanks squeezed). */
static bool has_row(const char *out, const char *row)
{
	char *copy = strdup(out ? out : ""), *save = NULL;
	bool found = false;

	for (char *l = strtok_r(copy, "\n", &save); l && !found; l = strtok_r(NULL, "\n", &save)) {
		char sq[1024];
		size_t n = 0;

		for (const char *c = l; *c && n + 1 < sizeof(sq); c++)
			if (*c != ' ' || (n && sq[n - 1] != ' '))
				sq[n++] = *c;
		while (n && sq[n - 1] == ' ')
			n--;
		sq[n] = '\0';
		found = !strcmp(sq[0] == ' ' ? sq + 1 : sq, row);
	}
	free(copy);
	return found;
}

static void test_agg(void)
{
	struct sonde_exp *e = open_exp("frames.er");
	struct sonde_syms *s = e ? sonde_syms_open(e) : NULL;
	char *out;

	group = "agg";
	CHECK(s != NULL);
	if (!s) {
		sonde_exp_close(e);
		return;
	}
	out = agg(e, "profile { @[func, caller, object] = count(); }", syms_namer, s);
	CHECK(has_row(out, "do_syscall_64 entry_SYSCALL_64 <kernel> 5"));
	CHECK(has_row(out, "kfunc_low main <kernel> 2"));
	CHECK(has_row(out, "main <none> <unknown> 3")); /* a native frame in no object of map.xml */
	CHECK(has_row(out, "<unknown method>@0x9999 main <JAVA> 1"));
	CHECK(has_row(out, "<kind 200>@0x1010 com.example.Main.<init> <unknown> 1"));
	CHECK(has_row(out, "<kernel>@0xffffffff81003010 <none> <kernel> 1"));
	CHECK(has_row(out, "work main <unknown> 2"));
	free(out);
	out = agg(e, "profile /object == \"<JAVA>\"/ { @ = count(); }", syms_namer, s);
	CHECK(has_row(out, "1"));
	free(out);
	out = agg(e, "profile { @[func, caller] = count(); }", NULL, NULL);
	CHECK(has_row(out, "kernel@0xffffffff81001010 kernel@0xffffffff81002008 5"));
	CHECK(has_row(out, "kernel@0x8000000000001010 0x101f 2"));
	CHECK(has_row(out, "java-interpreted@0x9999 0x101f 1"));
	CHECK(has_row(out, "kind 200@0x1010 java-compiled@0x3030 1"));
	CHECK(has_row(out, "0x1010 <none> 3"));
	free(out);
	sonde_syms_close(s);
	sonde_exp_close(e);
}

/* framestate.er: the samples' states as written; the truth's times in
 * the state's metric where the table has the state, CPU time all the same */
static void test_state(void)
{
	char p[4200];

	group = "state";
	snprintf(p, sizeof(p), "%s/framestate.er", tmpdir);
	CHECK(write_frames_exp_state(p, FX_STATE) == 0);
	struct sonde_exp *e = open_exp("framestate.er");

	CHECK(e != NULL);
	if (!e)
		return;
	CHECK_I(sonde_exp_nerrors(e), 0);
	/* every sample, in order: each stack's first in_state in FX_STATE */
	struct sonde_sample_iter it;
	struct sonde_sample smp;
	size_t i = 0;
	int k = 0, n = 0, in_state = 0;

	sonde_sample_iter_init(&it, e);
	while (sonde_sample_iter_next(&it, &smp)) {
		while (i < FX_NSTACKS && k == fx_stacks[i].samples)
			i++, k = 0;
		if (i == FX_NSTACKS)
			break;
		CHECK_U(smp.stack_id, fx_ids[i]);
		CHECK_I(smp.state, k < fx_stacks[i].in_state ? FX_STATE : SONDE_STATE_CPU);
		CHECK_U(smp.weight_ns, FX_MS);
		in_state += smp.state == FX_STATE;
		k++, n++;
	}
	CHECK_I(n, FX_TOTAL_MS);
	CHECK_I(in_state, FX_STATE_MS);
	const struct sonde_exp_summary *s = sonde_exp_summary(e);

	CHECK_I(s->samples, FX_TOTAL_MS);
#ifdef SONDE_TEST_STATES
	CHECK_I(s->state_samples[FX_STATE], FX_STATE_MS);
	CHECK_I(s->state_ns[FX_STATE], FX_STATE_MS * FX_MS);
#endif
	CHECK_I(s->state_samples[SONDE_STATE_CPU], FX_TOTAL_MS - FX_STATE_MS);

	const struct sonde_exp *one[1] = { e };
	struct sonde_profile pr;
	char err[512];

	if (sonde_profile_build(&pr, one, 1, NULL, err, sizeof(err)) < 0) {
		printf("not ok - profile: %s\n", err);
		nfail++;
		sonde_exp_close(e);
		return;
	}
	const struct sonde_model *m = pr.model;

	/* CPU time: frames.er's, function by function */
	CHECK_I(sonde_model_total(m)[SONDE_M_TOTALCPU], FX_TOTAL_MS * FX_MS);
	CHECK_I(sonde_model_nfuncs(m), sizeof(truth) / sizeof(truth[0]));
	for (size_t f = 0; f < sizeof(truth) / sizeof(truth[0]); f++) {
		uint32_t id = func_named(m, truth[f].name);

		CHECK(id != UINT32_MAX);
		if (id == UINT32_MAX)
			continue;
		CHECK_I(sonde_model_excl(m, id)[SONDE_M_TOTALCPU], truth[f].excl * (int64_t)FX_MS);
		CHECK_I(sonde_model_incl(m, id)[SONDE_M_TOTALCPU], truth[f].incl * (int64_t)FX_MS);
	}
	/* the state's metric: the tests' build's row; none in the others */
#ifndef SONDE_TEST_STATES
	CHECK_I(sonde_state_metric(FX_STATE), -1);
	CHECK(!sonde_state_cpu(FX_STATE) && !sonde_state_offcpu(FX_STATE));
#else
	int sm = sonde_state_metric(FX_STATE);

	CHECK(sm >= 0);
	if (sm < 0)
		goto out;
	CHECK_S(sonde_metric(sm)->name, "teststate");
	CHECK(sonde_metric_recorded(e, sm));
	CHECK_I(sonde_model_total(m)[sm], FX_STATE_MS * FX_MS);
	for (size_t f = 0; f < FX_NSTATE_TRUTH; f++) {
		uint32_t id = func_named(m, fx_state_truth[f].name);

		CHECK(id != UINT32_MAX);
		if (id == UINT32_MAX)
			continue;
		CHECK_I(sonde_model_excl(m, id)[sm], fx_state_truth[f].excl * (int64_t)FX_MS);
		CHECK_I(sonde_model_incl(m, id)[sm], fx_state_truth[f].incl * (int64_t)FX_MS);
	}
out:
#endif
	sonde_profile_release(&pr);
	sonde_exp_close(e);
}

int main(int argc, char **argv)
{
	char p[4200];

	if (argc == 3 && !strcmp(argv[1], "--write")) {
		snprintf(p, sizeof(p), "%s/frames.er", argv[2]);
		return write_frames_exp(p) < 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--write-state")) {
		snprintf(p, sizeof(p), "%s/framestate.er", argv[2]);
		return write_frames_exp_state(p, FX_STATE) < 0;
	}
	show = getenv("SONDE_TEST_SHOW") != NULL;
	if (!mkdtemp(tmpdir)) {
		printf("not ok - mkdtemp\n0 passed, 1 failed\n");
		return 1;
	}
	snprintf(p, sizeof(p), "%s/frames.er", tmpdir);
	group = "write";
	CHECK(write_frames_exp(p) == 0);
	test_reader();
	test_symbols();
	test_views();
	test_dump();
	test_agg();
	test_state();
	free(outbuf);
	if (getenv("SONDE_TEST_KEEP")) {
		printf("# kept %s\n", tmpdir);
	} else {
		char cmd[4300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
