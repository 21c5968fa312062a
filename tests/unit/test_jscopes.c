/*
 * jvm.inline read (lib/reader/jscopes.c) and the Java frames the reader
 * gives a stack whose Java walk failed (experiment.c, java_from_scopes):
 * an address's scope is the first at or after it (a return address's: the
 * one at it), the method the instruction is of first, the compiled method
 * last with its tier from jvm.code; stacks that have Java frames are left
 * as they are; damaged and random files give no frame they do not say.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/format.h>
#include <sonde/shared.h>

#include "reader/experiment.h"
#include "reader/expmerge.h"
#include "reader/expwriter.h"
#include "reader/jscopes.h"

#include "check.h"

static const char g_text[] = SONDE_JVM_INLINE_HEADER "\n"
						     "0x1000 64 0xaa\n"
						     "+10 0xbb:5 0xaa:20\n"
						     "+1e 0xaa:25\n"
						     "+28 0xcc:-1 0xbb:7 0xaa:30\n"
						     "0x2000 10 0xdd\n"
						     "+4 0xdd:1\n";
static const char g_code[] = "5 load 0x1000 64 0xaa 4 7 -1 A.a\n"
			     "9 retire 0x1000 64 0xaa 4 7 -1 A.a\n"
			     "12 load 0x1000 64 0xaa 3 9 -1 A.a\n"; /* the last load there: C1 */

static struct sonde_frame nat(uint64_t pc, bool exact)
{
	return (struct sonde_frame){ .pc = pc, .kind = SONDE_FRAME_NATIVE, .exact = exact };
}

static struct sonde_frame jcode(uint64_t pc, uint16_t cid, bool exact, bool own)
{
	return (struct sonde_frame){ .pc = pc, .kind = SONDE_FRAME_JAVA_CODE, .exact = exact, .aux = cid, .own = own };
}

/* frames at fr: n of them, level k (method, bci, kind) as given */
static void at(const struct sonde_jscopes *s, struct sonde_frame fr, int n, const uint64_t *m, const uint16_t *bci,
	       const uint8_t *kind)
{
	struct sonde_frame out[8];
	int got = sonde_jscopes_frames(s, &fr, out, 8);
	CHECK_I(got, n);
	for (int k = 0; k < n && k < got; k++) {
		CHECK_U(out[k].pc, m[k]);
		CHECK_U(out[k].aux, bci[k]);
		CHECK_U(out[k].kind, kind[k]);
		CHECK_I(out[k].exact, k == 0 && fr.exact);
		CHECK_U(out[k].scoped, 1);
	}
}

static void lookups(void)
{
	group = "jscopes: an address's scope";
	size_t bad;
	bool oom;
	struct sonde_jscopes *s = sonde_jscopes_parse(g_text, strlen(g_text), g_code, strlen(g_code), &bad, &oom);
	CHECK(s != NULL);
	CHECK_U(bad, 0);
	if (!s)
		return;
	const uint8_t I = SONDE_FRAME_JAVA_INLINED, C1 = SONDE_FRAME_JAVA_COMPILED_C1, C2 = SONDE_FRAME_JAVA_COMPILED;
	/* the code's start and the first scope's own address: that scope */
	at(s, nat(0x1000, true), 2, (uint64_t[]){ 0xbb, 0xaa }, (uint16_t[]){ 5, 20 }, (uint8_t[]){ I, C1 });
	at(s, nat(0x1010, true), 2, (uint64_t[]){ 0xbb, 0xaa }, (uint16_t[]){ 5, 20 }, (uint8_t[]){ I, C1 });
	/* just after it: the next scope */
	at(s, nat(0x1011, true), 1, (uint64_t[]){ 0xaa }, (uint16_t[]){ 25 }, (uint8_t[]){ C1 });
	/* a return address at a scope's address: that scope, not the next */
	at(s, nat(0x101e, false), 1, (uint64_t[]){ 0xaa }, (uint16_t[]){ 25 }, (uint8_t[]){ C1 });
	at(s, nat(0x101f, false), 3, (uint64_t[]){ 0xcc, 0xbb, 0xaa }, (uint16_t[]){ SONDE_FRAME_NO_BCI, 7, 30 },
	   (uint8_t[]){ I, I, C1 });
	/* past the last scope, past the code, before it: none */
	at(s, nat(0x1029, true), 0, NULL, NULL, NULL);
	at(s, nat(0x1064, true), 0, NULL, NULL, NULL);
	at(s, nat(0xfff, true), 0, NULL, NULL, NULL);
	/* a method jvm.code does not load: C2's */
	at(s, nat(0x2002, true), 1, (uint64_t[]){ 0xdd }, (uint16_t[]){ 1 }, (uint8_t[]){ C2 });
	/* a frame of another kind: none */
	struct sonde_frame j = { .pc = 0x1000, .kind = SONDE_FRAME_JAVA, .aux = 3 }, out[4];
	CHECK_I(sonde_jscopes_frames(s, &j, out, 4), 0);
	/* room for fewer levels than the scope has */
	CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0x1020, .exact = true }, out, 2), 2);
	sonde_jscopes_free(s);
}

static void damaged(void)
{
	group = "jscopes: damaged files";
	size_t bad;
	bool oom;
	/* no first line, or the first version's: not read */
	CHECK(sonde_jscopes_parse("0x1000 64 0xaa\n+10 0xaa:1\n", 26, NULL, 0, &bad, &oom) == NULL);
	static const char v1[] = "# sonde jvm.inline 1\n0x1000 64 0xaa\n+10 0xaa:1\n";
	CHECK(sonde_jscopes_parse(v1, strlen(v1), NULL, 0, &bad, &oom) == NULL);
	CHECK(!oom);
	static const char t[] =
		SONDE_JVM_INLINE_HEADER "\n"
					"+4 0xaa:1\n" /* before any method: skipped */
					"0x1000 40 0xaa\n"
					"+10 0xaa:1\n"
					"+8 0xaa:2\n"	  /* not after the one before */
					"+40 0xaa:3\n"	  /* past the code */
					"+20 0xaa\n"	  /* no bci */
					"+21 zz:1\n"	  /* no method */
					"+22\n"		  /* no level */
					"+30 0xaa:4 \r\n" /* trailing blanks: fine */
					"0x3000 0 0x1\n"  /* no size */
					"+1 0x1:1\n"	  /* of no method (the line before's is none) */
					"0x5000 10 0xee\n+2 0xee:1\n"
					"0x5008 10 0xef\n+2 0xef:1\n" /* overlaps the one before: it, later, wins */
					"0x6000 100 0xf0\n+2 0xf0:1\n"
					"0x6010 10 0xf1\n+2 0xf1:1\n" /* inside it, later: it wins */
					"0x6080 10 0xf2\n+2 0xf2:1\n"
					"0x6000 20 0xf3\n+2 0xf3:1\n+1f 0xf3:2\n"; /* over 0x6000..0x6020, later still */
	struct sonde_jscopes *s = sonde_jscopes_parse(t, strlen(t), NULL, 0, &bad, &oom);
	CHECK(s != NULL);
	CHECK_U(bad, 8);
	struct sonde_frame out[4];
	CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0x1011, .exact = true }, out, 4), 1);
	CHECK_U(out[0].aux, 4);
	/* the earlier of two that overlap is dropped, whole */
	CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0x5001, .exact = true }, out, 4), 0);
	CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0x5009, .exact = true }, out, 4), 1);
	CHECK_U(out[0].pc, 0xef);
	/* 0xf0 is overlapped by later ones: dropped; 0xf1 too (0xf3 is
	 * later and over it); 0xf2 and 0xf3 stay */
	CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0x6001, .exact = true }, out, 4), 1);
	CHECK_U(out[0].pc, 0xf3);
	CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0x6011, .exact = true }, out, 4), 1);
	CHECK_U(out[0].pc, 0xf3);
	CHECK_U(out[0].aux, 2);
	CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0x6040, .exact = true }, out, 4), 0);
	CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0x6081, .exact = true }, out, 4), 1);
	CHECK_U(out[0].pc, 0xf2);
	sonde_jscopes_free(s);

	/* a code over thousands of others (a damaged line: no method is
	 * that long) is dropped, later or not, and the others stay; the
	 * scan stops there rather than running over all of them */
	{
		size_t cap = 5000 * 40 + 200, n = 0;
		char *big = malloc(cap);
		CHECK(big != NULL);
		if (big) {
			n += (size_t)snprintf(big + n, cap - n, "%s\n", SONDE_JVM_INLINE_HEADER);
			for (int k = 0; k < 5000; k++)
				n += (size_t)snprintf(big + n, cap - n, "0x%x 10 0x%x\n+2 0x%x:1\n", 0x100000 + k * 0x20,
						      k + 1, k + 1);
			n += (size_t)snprintf(big + n, cap - n, "0xff000 1000000 0x9\n+2 0x9:1\n");
			s = sonde_jscopes_parse(big, n, NULL, 0, &bad, &oom);
			CHECK(s != NULL);
			CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0xff001, .exact = true }, out, 4), 0);
			CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0x100021, .exact = true }, out, 4), 1);
			CHECK_U(out[0].pc, 2);
			CHECK_I(sonde_jscopes_frames(s, &(struct sonde_frame){ .pc = 0x100000 + 4999 * 0x20 + 1, .exact = true },
							out, 4),
				1);
			CHECK_U(out[0].pc, 5000);
			sonde_jscopes_free(s);
			free(big);
		}
	}

	group = "jscopes: random files";
	srand(7);
	static const char alpha[] = "0123456789abcdefx+: -\n";
	char buf[2048];
	size_t hl = strlen(SONDE_JVM_INLINE_HEADER);
	int frames = 0, fine = 1;
	for (int r = 0; r < 300; r++) {
		memcpy(buf, SONDE_JVM_INLINE_HEADER "\n", hl + 1);
		size_t n = hl + 1;
		/* methods and scopes with random numbers, and lines of noise */
		for (int l = 0; l < 30 && n < sizeof buf - 80; l++) {
			int k = rand() % 4;
			if (k == 0)
				n += (size_t)snprintf(buf + n, 80, "0x%x %x 0x%x %d\n", rand() % 0x3000, rand() % 0x200,
						      rand() % 8, rand() % 5 - 1);
			else if (k == 1)
				n += (size_t)snprintf(buf + n, 80, "+%x 0x%x:%d 0x%x:%d\n", rand() % 0x200, rand() % 8,
						      rand() % 70000 - 2, rand() % 8, rand() % 9);
			else if (k == 2)
				n += (size_t)snprintf(buf + n, 80, "+%x 0x%x:%d\n", rand() % 0x200, rand() % 8,
						      rand() % 100);
			else
				for (int c = rand() % 40; c-- > 0;)
					buf[n++] = alpha[rand() % (int)(sizeof alpha - 1)];
		}
		s = sonde_jscopes_parse(buf, n, buf, n, &bad, &oom);
		CHECK(!oom);
		for (int k = 0; s && k < 200; k++) {
			struct sonde_frame f = { .pc = (uint64_t)(rand() % 0x3200), .exact = rand() & 1 };
			if (k & 1) /* the collector's, with a compile id */
				f = jcode(f.pc, (uint16_t)(rand() % 4), f.exact, (k & 3) == 3);
			int m = sonde_jscopes_frames(s, &f, out, 4);
			fine &= m >= 0 && m <= 4;
			for (int j = 0; j < m; j++)
				fine &= out[j].pc < 8 &&
					(out[j].kind == SONDE_FRAME_JAVA_INLINED) == (j + 1 < m || m == 4);
			frames += m;
		}
		sonde_jscopes_free(s);
	}
	CHECK(fine);
	CHECK(frames > 1000);
	printf("# random files: %d frames found, none past the room given\n", frames);
}

/* SONDE_FRAME_JAVA_CODE frames (the collector's, with their code's
 * compile id): the code of that id where several held the address over
 * the run, one whose id is not told where none is of it, else none; in a
 * prologue or epilogue, the compiled method alone; tiers by compile id. */
static const char g_cid[] = SONDE_JVM_INLINE_HEADER "\n"
						    "0x8000 40 0xa1 101\n"
						    "+10 0xa1:1\n"
						    "+20 0xb1:4 0xa1:2\n"
						    "0x8000 40 0xa2 70101\n" /* the same place, later; 70101 & 0xffff = 4565 */
						    "+10 0xa2:3\n"
						    "0x8010 10 0xa3\n" /* inside, later still, its id not told */
						    "+4 0xa3:9\n";
static const char g_cid_code[] = "1 load 0x8000 40 0xa1 3 101 -1 A.a\n"
				 "2 unload 0x8000 40 0xa1 3 101 -1 A.a\n"
				 "2 load 0x8000 40 0xa2 4 70101 -1 A.b\n";


static void by_compile_id(void)
{
	group = "jscopes: by compile id";
	size_t bad;
	bool oom;
	struct sonde_jscopes *s =
		sonde_jscopes_parse(g_cid, strlen(g_cid), g_cid_code, strlen(g_cid_code), &bad, &oom);
	CHECK(s != NULL);
	CHECK_U(bad, 0);
	if (!s)
		return;
	const uint8_t c1[] = { SONDE_FRAME_JAVA_COMPILED_C1 }, c2[] = { SONDE_FRAME_JAVA_COMPILED },
		      in_c1[] = { SONDE_FRAME_JAVA_INLINED, SONDE_FRAME_JAVA_COMPILED_C1 };
	/* a native frame: the last code there (0xa3 over 0xa2 over 0xa1) */
	at(s, nat(0x8005, true), 0, NULL, NULL, NULL);
	at(s, nat(0x8011, true), 1, (uint64_t[]){ 0xa3 }, (uint16_t[]){ 9 }, c2);
	/* by compile id: the earlier codes' own scopes, and tiers */
	at(s, jcode(0x8005, 101, true, false), 1, (uint64_t[]){ 0xa1 }, (uint16_t[]){ 1 }, c1);
	at(s, jcode(0x8015, 101, false, false), 2, (uint64_t[]){ 0xb1, 0xa1 }, (uint16_t[]){ 4, 2 }, in_c1);
	at(s, jcode(0x8005, 70101 & 0xffff, true, false), 1, (uint64_t[]){ 0xa2 }, (uint16_t[]){ 3 }, c2);
	/* an id of none there: the one whose id is not told, else none */
	at(s, jcode(0x8011, 5, true, false), 1, (uint64_t[]){ 0xa3 }, (uint16_t[]){ 9 }, c2);
	at(s, jcode(0x8005, 5, true, false), 0, NULL, NULL, NULL);
	/* its prologue or epilogue: the compiled method, no inlined one */
	at(s, jcode(0x8015, 101, true, true), 1, (uint64_t[]){ 0xa1 }, (uint16_t[]){ SONDE_FRAME_NO_BCI }, c1);
	sonde_jscopes_free(s);

	/* the second version's files (no compile ids) are read; a method
	 * line's fourth field is a number */
	static const char v2[] = "# sonde jvm.inline 2\n0x1000 40 0xaa\n+10 0xaa:1\n0x2000 10 0xab zz\n+1 0xab:1\n";
	s = sonde_jscopes_parse(v2, strlen(v2), NULL, 0, &bad, &oom);
	CHECK(s != NULL);
	CHECK_U(bad, 2);
	at(s, jcode(0x1001, 7, true, false), 1, (uint64_t[]){ 0xaa }, (uint16_t[]){ 1 }, c2);
	sonde_jscopes_free(s);
}

/* The stacks' ids, as written (reader). */
static uint64_t ia, ib, ic, id, iff;

/* Writes the experiment exp: stacks whose Java walks failed, the
 * collector's frames in compiled code, jvm.inline and jvm.code.  0, or -1
 * with a message in err. */
static int write_exp(const char *exp, char *err, size_t errlen)
{
	struct sonde_expw *w = sonde_expw_create(exp, err, errlen);
	if (!w)
		return -1;
	sonde_expw_log_preamble(w, 1234, 1000000000);
	/* leaf first: an exact pc in compiled code, a native caller, a
	 * return address in compiled code */
	struct sonde_frame a[] = { nat(0x1011, true), nat(0x5000, false), nat(0x101f, false) };
	/* one that has its Java frames: left as it is */
	struct sonde_frame b[] = { nat(0x1011, true), { .pc = 0xaa, .kind = SONDE_FRAME_JAVA, .aux = 3 } };
	/* none in compiled code */
	struct sonde_frame c[] = { nat(0x7000, true), nat(0x5000, false) };
	/* the collector's: a compiled method in its prologue, the Java
	 * frames walked from its caller below it; and one of no code */
	struct sonde_frame d[] = { jcode(0x8015, 4565, true, true), { .pc = 0xcafe, .kind = SONDE_FRAME_JAVA, .aux = 3 } };
	struct sonde_frame f[] = { jcode(0x9999, 1, true, false), jcode(0x8015, 101, false, false), nat(0x5000, false) };
	CHECK(sonde_expw_frames(w, 0, 3, a, &ia) >= 0);
	CHECK(sonde_expw_frames(w, 0, 2, b, &ib) >= 0);
	CHECK(sonde_expw_frames(w, 0, 2, c, &ic) >= 0);
	CHECK(sonde_expw_frames(w, 0, 2, d, &id) >= 0);
	CHECK(sonde_expw_frames(w, 0, 3, f, &iff) >= 0);
	sonde_expw_sample(w, 1234, 0, 1100000000, 1000000, ia);
	sonde_expw_sample(w, 1234, 0, 1200000000, 1000000, ib);
	sonde_expw_sample(w, 1234, 0, 1300000000, 1000000, ic);
	sonde_expw_sample(w, 1234, 0, 1400000000, 1000000, id);
	sonde_expw_sample(w, 1234, 0, 1500000000, 1000000, iff);
	/* the file's method lines, and the compile ids' (their ids' lines
	 * after the others': the text's first line once) */
	sonde_expw_text(w, SONDE_JVM_INLINE_FILE, "%s%s", g_text, g_cid + strlen(SONDE_JVM_INLINE_HEADER) + 1);
	sonde_expw_text(w, "jvm.code", "%s%s", g_code, g_cid_code);
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"2000000000\" status=\"0\"/>\n");
	return sonde_expw_finish(w, 0, err, errlen);
}

/* An experiment whose stacks' Java walks failed, with jvm.inline: read
 * with Java frames in place of the compiled code's. */
static void reader(void)
{
	group = "jscopes: the reader's stacks";
	char dir[] = "/tmp/test_jscopes.XXXXXX", exp[256], err[256];
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(exp, sizeof exp, "%s/t.er", dir);
	CHECK_I(write_exp(exp, err, sizeof err), 0);
	struct sonde_exp *e = sonde_exp_open(exp, err, sizeof err);
	CHECK(e != NULL);
	if (e) {
		const struct sonde_stack *sa = sonde_exp_stack(e, ia), *sb = sonde_exp_stack(e, ib),
					 *sc = sonde_exp_stack(e, ic);
		CHECK(sa && sb && sc);
		if (sa && sb && sc) {
			static const struct {
				uint64_t pc;
				uint8_t kind;
				uint16_t aux;
				bool exact;
			} want[] = {
				{ 0xaa, SONDE_FRAME_JAVA_COMPILED_C1, 25, true },
				{ 0x5000, SONDE_FRAME_NATIVE, 0, false },
				{ 0xcc, SONDE_FRAME_JAVA_INLINED, SONDE_FRAME_NO_BCI, false },
				{ 0xbb, SONDE_FRAME_JAVA_INLINED, 7, false },
				{ 0xaa, SONDE_FRAME_JAVA_COMPILED_C1, 30, false },
			};
			CHECK_U(sa->depth, 5);
			for (unsigned k = 0; k < 5 && k < sa->depth; k++) {
				CHECK_U(sa->frame[k].pc, want[k].pc);
				CHECK_U(sa->frame[k].kind, want[k].kind);
				CHECK_U(sa->frame[k].aux, want[k].aux);
				CHECK_I(sa->frame[k].exact, want[k].exact);
				CHECK_U(sa->frame[k].scoped, want[k].kind != SONDE_FRAME_NATIVE);
			}
			CHECK_U(sb->frame[1].scoped, 0);
			CHECK_U(sb->depth, 2);
			CHECK_U(sb->frame[0].kind, SONDE_FRAME_NATIVE);
			CHECK_U(sc->depth, 2);
			CHECK_U(sc->frame[0].pc, 0x7000);
			const struct sonde_stack *sd = sonde_exp_stack(e, id), *sf = sonde_exp_stack(e, iff);
			CHECK(sd && sf);
			if (sd && sf) {
				/* 4565: 0xa2's code, C2's, its own frame alone */
				CHECK_U(sd->depth, 2);
				CHECK_U(sd->frame[0].pc, 0xa2);
				CHECK_U(sd->frame[0].kind, SONDE_FRAME_JAVA_COMPILED);
				CHECK_U(sd->frame[0].aux, SONDE_FRAME_NO_BCI);
				CHECK_U(sd->frame[0].scoped, 1);
				CHECK_U(sd->frame[0].exact, 1);
				CHECK_U(sd->frame[0].own, 0);
				CHECK_U(sd->frame[1].pc, 0xcafe);
				CHECK_U(sd->frame[1].scoped, 0);
				/* no code at 0x9999: a native frame; 101 at
				 * 0x8015: 0xa1's scope, inlined into it */
				CHECK_U(sf->depth, 4);
				CHECK_U(sf->frame[0].kind, SONDE_FRAME_NATIVE);
				CHECK_U(sf->frame[0].pc, 0x9999);
				CHECK_U(sf->frame[0].exact, 1);
				CHECK_U(sf->frame[0].aux, 0);
				CHECK_U(sf->frame[1].pc, 0xb1);
				CHECK_U(sf->frame[1].kind, SONDE_FRAME_JAVA_INLINED);
				CHECK_U(sf->frame[2].pc, 0xa1);
				CHECK_U(sf->frame[2].kind, SONDE_FRAME_JAVA_COMPILED_C1);
				CHECK_U(sf->frame[2].aux, 2);
				CHECK_U(sf->frame[3].pc, 0x5000);
				CHECK_U(sf->frame[3].kind, SONDE_FRAME_NATIVE);
			}
			CHECK_U(sonde_exp_summary(e)->stacks_java_scoped, 3);
		}
		sonde_exp_close(e);
	}
	/* sonde merge keeps which frames came from the scopes */
	group = "jscopes: merged";
	char merged[300];
	snprintf(merged, sizeof merged, "%s/m.er", dir);
	struct sonde_merge *m = sonde_merge_new();
	CHECK(m && sonde_merge_add(m, exp, "t.er", err, sizeof err) >= 0);
	CHECK(m && sonde_merge_output(m, exp, merged, err, sizeof err) == 0);
	sonde_merge_free(m);
	e = sonde_exp_open(merged, err, sizeof err);
	CHECK(e != NULL);
	if (e) {
		size_t n = 0, scoped = 0, frames = 0;
		const struct sonde_stack *st = sonde_exp_stacks(e, &n);
		for (size_t i = 0; i < n; i++)
			for (unsigned k = 0; k < st[i].depth; k++) {
				frames += st[i].frame[k].kind != SONDE_FRAME_NATIVE;
				scoped += st[i].frame[k].scoped;
				/* the walked ones: 0xaa and 0xcafe at bytecode 3 */
				const struct sonde_frame *fk = &st[i].frame[k];
				CHECK_I(fk->scoped, fk->kind != SONDE_FRAME_NATIVE &&
							   !(fk->aux == 3 && (fk->pc == 0xaa || fk->pc == 0xcafe)));
			}
		CHECK_U(frames, 9);
		CHECK_U(scoped, 7);
		CHECK_U(sonde_exp_summary(e)->stacks_java_scoped, 3);
		sonde_exp_close(e);
	}
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		CHECK(0);
}

int main(int argc, char **argv)
{
	/* --write DIR: the reader's experiment as DIR/jscopes.er (a fuzz
	 * seed: tests/fuzz/run.sh, t20) */
	if (argc == 3 && !strcmp(argv[1], "--write")) {
		char exp[4096], err[256];
		snprintf(exp, sizeof exp, "%s/jscopes.er", argv[2]);
		if (write_exp(exp, err, sizeof err) != 0) {
			fprintf(stderr, "test_jscopes: %s\n", err);
			return 1;
		}
		return 0;
	}
	lookups();
	damaged();
	by_compile_id();
	reader();
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
