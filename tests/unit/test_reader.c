/*
 * test_reader: the experiment reader (lib/reader/experiment.c, logxml.c,
 * mapxml.c) and the XML tokenizer on synthetic experiments written with
 * lib/reader/expwriter.c, checked exactly: counts, weights, stacks,
 * threads, pc -> object lookup, and what happens to truncated, corrupted
 * and foreign input.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 * SONDE_TEST_KEEP=1 keeps the temporary directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "reader/experiment.h"
#include "reader/expwriter.h"
#include "base/xmlline.h"

static char tmpdir[] = "/tmp/sonde-test-reader.XXXXXX";


/* ---- helpers ------------------------------------------------------------ */

static char *path(const char *name)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

static char *file_in(const char *exp, const char *file)
{
	static char buf[4][600];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", path(exp), file);
	return buf[k];
}

static void cut(const char *exp, const char *file, off_t len)
{
	if (truncate(file_in(exp, file), len) < 0)
		printf("# truncate %s: %s\n", file_in(exp, file), strerror(errno));
}

static void poke(const char *exp, const char *file, off_t off, const void *data, size_t n)
{
	int fd = open(file_in(exp, file), O_WRONLY);

	if (fd < 0 || pwrite(fd, data, n, off) != (ssize_t)n)
		printf("# poke %s: %s\n", file_in(exp, file), strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void poke16(const char *exp, const char *file, off_t off, uint16_t v)
{
	poke(exp, file, off, &v, sizeof(v));
}

static void poke32(const char *exp, const char *file, off_t off, uint32_t v)
{
	poke(exp, file, off, &v, sizeof(v));
}

static void write_text(const char *exp, const char *file, const char *text)
{
	FILE *f = fopen(file_in(exp, file), "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		printf("# cannot write %s\n", file_in(exp, file));
}

static struct sonde_expw *create(const char *name)
{
	char err[256];
	struct sonde_expw *w = sonde_expw_create(path(name), err, sizeof(err));

	if (!w) {
		printf("# %s\n", err);
		exit(1);
	}
	return w;
}

static void finish(struct sonde_expw *w, unsigned flags)
{
	char err[256];

	if (sonde_expw_finish(w, flags, err, sizeof(err)) < 0)
		printf("# expwriter: %s\n", err), nfail++;
}

static struct sonde_exp *open_exp(const char *name)
{
	char err[512];
	struct sonde_exp *exp = sonde_exp_open(path(name), err, sizeof(err));

	if (!exp)
		printf("# open %s: %s\n", name, err);
	return exp;
}

/* Whether a problem of severity sev mentions all of the given strings. */
static int has_problem(const struct sonde_exp *exp, int sev, ...)
{
	size_t n;
	const struct sonde_problem *p = sonde_exp_problems(exp, &n);

	for (size_t i = 0; i < n; i++) {
		va_list ap;
		const char *s;
		int ok = (int)p[i].severity == sev;

		va_start(ap, sev);
		while ((s = va_arg(ap, const char *)))
			if (!strstr(p[i].msg, s))
				ok = 0;
		va_end(ap);
		if (ok)
			return 1;
	}
	return 0;
}

static void show_problems(const struct sonde_exp *exp)
{
	size_t n;
	const struct sonde_problem *p = sonde_exp_problems(exp, &n);

	for (size_t i = 0; i < n; i++)
		printf("#   problem: %s\n", p[i].msg);
}

static uint64_t count_samples(const struct sonde_exp *exp, uint64_t *weight)
{
	struct sonde_sample_iter it;
	struct sonde_sample s;
	uint64_t n = 0, w = 0;

	sonde_sample_iter_init(&it, exp);
	while (sonde_sample_iter_next(&it, &s)) {
		n++;
		w += s.weight_ns;
	}
	if (weight)
		*weight = w;
	return n;
}

#define W SONDE_PROBLEM_WARNING
#define E SONDE_PROBLEM_ERROR
#define EXACT SONDE_PC_EXACT
#define T0 1000000000ull /* start_ns of every synthetic experiment */

/* Whether st's frames are the native frames of the format's pcs pc[0..n)
 * (SONDE_PC_EXACT on an exact one). */
static bool frames_are(const struct sonde_stack *st, const uint64_t *pc, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct sonde_frame f = sonde_frame_native(pc[k]);

		if (memcmp(&st->frame[k], &f, sizeof f))
			return false;
	}
	return true;
}
#define MS 1000000ull
#define PROFILE_OFF(b) (SONDE_FILE_HEADER_SIZE + (b) * (uint64_t)SONDE_BLOCK_SIZE)
#define PER_BLOCK (SONDE_BLOCK_PAYLOAD / SONDE_PROFILE_V1_SIZE) /* 511 */

/* ---- the XML tokenizer -------------------------------------------------- */

static void test_xml(void)
{
	group = "xml";
	char buf[] = "<?xml version=\"1.0\"?>\n<!-- a > comment -->\n"
		     "<a x=\"1 &amp; &lt;2&gt; &quot;q&quot; &apos;\" y='&#65;&#x42;' z=\"&bogus; &#0;\"/>"
		     "<b>\n</b >\n<c\n  k=\"v\n w\"/>\n<d k=\"unterminated/>\n<e f=\"1\" g";
	struct sonde_xml x;
	struct sonde_xml_elem e;
	char err[128];

	sonde_xml_init(&x, buf, strlen(buf));
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == 1 && e.kind == SONDE_XML_OTHER);
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == 1 && e.kind == SONDE_XML_OTHER);
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == 1);
	CHECK(e.kind == SONDE_XML_EMPTY);
	CHECK_S(e.name, "a");
	CHECK_U(e.line, 3);
	CHECK_U(e.nattr, 3);
	CHECK_S(sonde_xml_attr(&e, "x"), "1 & <2> \"q\" '");
	CHECK_S(sonde_xml_attr(&e, "y"), "AB");
	CHECK_S(sonde_xml_attr(&e, "z"), "&bogus; &#0;");
	/* bytes that are not UTF-8 come back from their U+F7XY references
	 * (sonde/utf8.h); other U+F7XY, and a real one, are characters */
	{
		char b2[] = "<o path=\"/a&#xF7FF;&#xf7fe;/&#xF701;b&#xF741;\xef\x9f\xbf&#xF700;\"/>\n";
		struct sonde_xml x2;

		sonde_xml_init(&x2, b2, strlen(b2));
		CHECK(sonde_xml_next(&x2, &e, err, sizeof(err)) == 1);
		CHECK_S(sonde_xml_attr(&e, "path"), "/a\xff\xfe/\x01" "b\xef\x9d\x81\xef\x9f\xbf\xef\x9c\x80");
	}
	CHECK(sonde_xml_attr(&e, "w") == NULL);
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == 1 && e.kind == SONDE_XML_OPEN);
	CHECK_S(e.name, "b");
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == 1 && e.kind == SONDE_XML_CLOSE);
	CHECK_S(e.name, "b");
	CHECK_U(e.line, 4);
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == 1 && e.kind == SONDE_XML_EMPTY);
	CHECK_S(e.name, "c");
	CHECK_S(sonde_xml_attr(&e, "k"), "v\n w");
	/* The unterminated value runs into the next line's quote: malformed,
	 * and the rest of that line goes with it. */
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == -1);
	CHECK(strstr(err, "line 8") && strstr(err, "<d> is malformed"));
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == 0);

	char buf2[] = "<a b c=\"1\"/>\n<ok/>\n<tail x=\"1\"";
	sonde_xml_init(&x, buf2, strlen(buf2));
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == -1);
	CHECK(strstr(err, "line 1") && strstr(err, "without a value"));
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == 1);
	CHECK_S(e.name, "ok");
	CHECK_U(e.line, 2);
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == -1);
	CHECK(strstr(err, "line 3") && strstr(err, "cut off"));
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == 0);

	char buf3[] = "<x a=\"1\" b ";
	sonde_xml_init(&x, buf3, strlen(buf3));
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == -1);
	CHECK(strstr(err, "element <x> is cut off"));
	CHECK(sonde_xml_next(&x, &e, err, sizeof(err)) == 0);
}

/* ---- a complete experiment ------------------------------------------------ */

static const uint64_t st_a[] = { 0x7f0000012345 | EXACT, 0x401234, 0x400100 };
static const uint64_t st_b[] = { 0x7fff0100 | EXACT, 0x7f0000020000 };
static const uint64_t st_c[] = { 0x12 | EXACT };

static void write_basic(const char *name, unsigned flags)
{
	struct sonde_expw *w = create(name);
	struct sonde_overview_packet ov = { 0 };

	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_log(w, "<future thing=\"1\"/>\n");
	sonde_expw_log(w, "<event kind=\"thread_start\" tid=\"101\" time_ns=\"%llu\" new=\"x\"/>\n",
		       T0 + 1 * MS);
	sonde_expw_log(w, "<event kind=\"warning\" time_ns=\"%llu\" text=\"a &lt;warning&gt;\"/>\n",
		       T0 + 2 * MS);
	sonde_expw_log(w, "<event kind=\"error\" time_ns=\"%llu\" text=\"heap disabled\"/>\n",
		       T0 + 3 * MS);
	sonde_expw_log(w, "<event kind=\"thread_start\" tid=\"102\" time_ns=\"%llu\"/>\n",
		       T0 + 4 * MS);
	sonde_expw_log(w, "<event kind=\"thread_end\" tid=\"102\" time_ns=\"%llu\" cpu_ns=\"0\"/>\n",
		       T0 + 5 * MS);
	sonde_expw_log(w, "<event kind=\"thread_end\" tid=\"101\" time_ns=\"%llu\" cpu_ns=\"%llu\"/>\n",
		       T0 + 90 * MS, 70 * MS);
	sonde_expw_log(w, "<event kind=\"thread_end\" tid=\"100\" start_ns=\"%llu\" time_ns=\"%llu\" "
		       "cpu_ns=\"%llu\"/>\n", T0 - 5, T0 + 99 * MS, 50 * MS);
	sonde_expw_log(w, "<event kind=\"end\" time_ns=\"%llu\" samples=\"80\" lost=\"3\" stacks=\"3\" "
		       "stacks_lost=\"2\"/>\n", T0 + 100 * MS);
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"7\"/>\n", T0 + 101 * MS);

	sonde_expw_object(w, 1, "/usr/bin/prog", 0, 0x400000, 0x500000, T0);
	sonde_expw_object(w, 2, "/usr/lib/libc.so.6", 0x7f0000000000, 0x7f0000010000,
			  0x7f0000200000, T0);
	sonde_expw_map(w, "<object id=\"3\" time_ns=\"%llu\" event=\"load\" path=\"[vdso]\" "
		       "base=\"0x7fff0000\" lo=\"0x7fff0000\" hi=\"0x7fff2000\" buildid=\"0123abcd\" "
		       "copy=\"vdso.so\" future=\"1\"/>\n", T0);
	sonde_expw_object(w, 4, "/usr/lib/libdl1.so", 0x7e0000000000, 0x7e0000000000,
			  0x7e0000100000, T0 + 50 * MS);
	sonde_expw_unload(w, 4, T0 + 60 * MS);
	sonde_expw_object(w, 5, "/usr/lib/libdl2.so", 0x7e0000000000 - 0x1000, 0x7e0000000000,
			  0x7e0000100000, T0 + 70 * MS);

	sonde_expw_stack(w, 0xaaaa, 0, 3, st_a);
	sonde_expw_stack(w, 0xbbbb, SONDE_STACK_TRUNCATED, 2, st_b);
	sonde_expw_stack(w, 0, SONDE_STACK_INCOMPLETE, 1, st_c);
	sonde_expw_stack(w, 0xaaaa, 0, 3, st_a); /* a repeat: fine */

	static const uint64_t ids[] = { 0xaaaa, 0xbbbb, 0 };

	/* tid 100: 50 samples of 1 ms; tid 101: 30 samples of 2 ms, interleaved. */
	for (int i = 0; i < 50; i++) {
		sonde_expw_sample(w, 100, (uint16_t)(i % 4), T0 + (uint64_t)i * MS + 10, MS, ids[i % 3]);
		if (i < 30)
			sonde_expw_sample(w, 101, i == 0 ? 0xffff : 1, T0 + (uint64_t)i * MS + 20,
					  2 * MS, ids[(i + 1) % 3]);
	}
	ov.reason = SONDE_OV_START;
	ov.time_ns = T0;
	ov.minflt = 11;
	sonde_expw_overview(w, &ov);
	ov.reason = SONDE_OV_END;
	ov.time_ns = T0 + 100 * MS;
	ov.utime_ns = 120 * MS;
	ov.maxrss_kb = 4321;
	sonde_expw_overview(w, &ov);
	write_text(name, "notes", "a note\nsecond line\n");
	finish(w, flags);
}

static void test_basic(void)
{
	group = "basic";
	write_basic("basic.er", 0);
	struct sonde_exp *exp = open_exp("basic.er");

	CHECK(exp);
	if (!exp)
		return;
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;

	CHECK_S(in->name, "basic.er");
	CHECK_U(in->format, 1);
	CHECK_S(in->collector, "sonde test");
	CHECK(in->log_complete);
	CHECK_S(in->notes, "a note\nsecond line\n");
	CHECK_U(in->target.pid, 100);
	CHECK_U(in->target.ppid, 1);
	CHECK_S(in->target.command, "./prog");
	CHECK_S(in->target.exe, "/tmp/prog");
	CHECK_S(in->system.host, "testhost");
	CHECK_U(in->system.cpus, 4);
	CHECK_U(in->system.memory_kb, 8000000);
	CHECK_S(in->settings.clock_source, "perf-task-clock");
	CHECK_U(in->settings.clock_interval_ns, MS);
	CHECK_U(in->settings.depth_limit, 256);
	CHECK_U(in->start_ns, T0);
	CHECK(in->has_realtime);
	CHECK_U(in->realtime_sec, 1763700000);
	CHECK_U(in->realtime_nsec, 500000000);
	CHECK_U(in->end_ns, T0 + 101 * MS);
	CHECK_S(in->end_source, "exit");
	CHECK(in->exit_event && in->exit_event->kind == SONDE_EV_EXIT && in->exit_event->status == 7);
	CHECK(in->end_event && in->end_event->samples == 80 && in->end_event->lost == 3 &&
	      in->end_event->stacks_lost == 2);

	const struct sonde_event *ev = sonde_exp_events(exp, &n);

	CHECK_U(n, 10);
	if (n == 10) {
		CHECK(ev[0].kind == SONDE_EV_START);
		CHECK(ev[1].kind == SONDE_EV_THREAD_START && ev[1].tid == 101);
		CHECK(ev[2].kind == SONDE_EV_WARNING);
		CHECK_S(ev[2].text, "a <warning>");
		CHECK(ev[3].kind == SONDE_EV_ERROR);
		CHECK(ev[6].kind == SONDE_EV_THREAD_END && ev[6].has_cpu_ns && ev[6].cpu_ns == 70 * MS);
		CHECK_U(ev[6].time_ns, T0 + 90 * MS);
	}
	const struct sonde_packet_desc *pd = sonde_exp_packet_descs(exp, &n);

	CHECK_U(n, 2);
	CHECK(n == 2 && pd[0].type == 1 && pd[0].size == 32 && !strcmp(pd[0].name, "profile"));

	/* No problems at all in a good experiment. */
	sonde_exp_problems(exp, &n);
	CHECK_U(n, 0);
	CHECK_U(sonde_exp_nerrors(exp), 0);
	if (n)
		show_problems(exp);

	const struct sonde_exp_summary *s = sonde_exp_summary(exp);

	CHECK_U(s->samples, 80);
	CHECK_U(s->weight_ns, 50 * MS + 30 * 2 * MS);
	CHECK_U(s->first_ns, T0 + 10);
	CHECK_U(s->last_ns, T0 + 49 * MS + 10);
	CHECK_U(s->stacks, 3);
	CHECK_U(s->stack_packets, 4);
	CHECK_U(s->stacks_truncated, 1);
	CHECK_U(s->stacks_incomplete, 1);
	CHECK_U(s->stack_conflicts, 0);
	CHECK_U(s->samples_unknown_stack, 0);
	/* tid 100: i%3==1 -> bbbb (17 of 50), i%3==2 -> 0 (16); tid 101: (i+1)%3. */
	CHECK_U(s->samples_truncated, 17 + 10);
	CHECK_U(s->samples_incomplete, 16 + 10);
	CHECK_U(s->overview_packets, 2);
	CHECK_U(s->unknown_packets, 0);

	const struct sonde_thread *t = sonde_exp_threads(exp, &n);

	CHECK_U(n, 3);
	if (n == 3) {
		CHECK_U(t[0].tid, 100);
		CHECK_U(t[0].samples, 50);
		CHECK_U(t[0].weight_ns, 50 * MS);
		CHECK(t[0].has_cpu_ns && t[0].cpu_ns == 50 * MS);
		CHECK_U(t[0].first_ns, T0 + 10);
		CHECK_U(t[0].last_ns, T0 + 49 * MS + 10);
		CHECK_U(t[0].start_ns, T0 - 5); /* from thread_end's start_ns */
		CHECK_U(t[1].tid, 101);
		CHECK_U(t[1].samples, 30);
		CHECK_U(t[1].weight_ns, 60 * MS);
		CHECK_U(t[1].cpu_ns, 70 * MS);
		CHECK_U(t[1].start_ns, T0 + 1 * MS);
		CHECK_U(t[1].end_ns, T0 + 90 * MS);
		CHECK_U(t[2].tid, 102);
		CHECK_U(t[2].samples, 0);
		CHECK(t[2].has_cpu_ns && t[2].cpu_ns == 0);
	}

	/* Samples: block order, each thread in time order, tid from the block. */
	struct sonde_sample_iter it;
	struct sonde_sample sm;
	int i100 = 0, i101 = 0, bad = 0;

	sonde_sample_iter_init(&it, exp);
	while (sonde_sample_iter_next(&it, &sm)) {
		if (sm.tid == 100) {
			bad += i101 != 0; /* block 0 (tid 100) comes first */
			bad += sm.time_ns != T0 + (uint64_t)i100 * MS + 10 || sm.weight_ns != MS ||
			       sm.cpu != i100 % 4 || sm.stack_id != (uint64_t[]){ 0xaaaa, 0xbbbb, 0 }[i100 % 3];
			i100++;
		} else if (sm.tid == 101) {
			bad += sm.time_ns != T0 + (uint64_t)i101 * MS + 20 || sm.weight_ns != 2 * MS ||
			       sm.cpu != (i101 == 0 ? 0xffff : 1) || sm.state != SONDE_STATE_CPU;
			i101++;
		} else {
			bad++;
		}
	}
	CHECK_U(i100, 50);
	CHECK_U(i101, 30);
	CHECK_U(bad, 0);
	CHECK(!sonde_sample_iter_next(&it, &sm)); /* stays at the end */

	/* Stacks. */
	const struct sonde_stack *st = sonde_exp_stack(exp, 0xaaaa);

	CHECK(st && st->depth == 3 && st->flags == 0 && frames_are(st, st_a, 3));
	st = sonde_exp_stack(exp, 0xbbbb);
	CHECK(st && st->depth == 2 && st->flags == SONDE_STACK_TRUNCATED && frames_are(st, st_b, 2));
	st = sonde_exp_stack(exp, 0);
	CHECK(st && st->depth == 1 && st->flags == SONDE_STACK_INCOMPLETE && frames_are(st, st_c, 1));
	CHECK(sonde_exp_stack(exp, 0xcccc) == NULL);
	st = sonde_exp_stacks(exp, &n);
	CHECK(n == 3 && st[0].id == 0xaaaa && st[1].id == 0xbbbb && st[2].id == 0);
	CHECK_U(st[0].offset, PROFILE_OFF(0) + 32);

	/* Objects and pc lookup. */
	const struct sonde_object *o = sonde_exp_objects(exp, &n);

	CHECK_U(n, 5);
	if (n == 5) {
		CHECK_S(o[1].path, "/usr/lib/libc.so.6");
		CHECK_S(o[1].name, "libc.so.6");
		CHECK_S(o[1].buildid, "0123abcd");
		CHECK_U(o[1].base, 0x7f0000000000);
		CHECK_U(o[1].lo, 0x7f0000010000);
		CHECK_U(o[1].hi, 0x7f0000200000);
		CHECK_U(o[1].load_ns, T0);
		CHECK_U(o[1].unload_ns, SONDE_TIME_NEVER);
		CHECK_S(o[2].name, "[vdso]");
		CHECK_S(o[2].copy, "vdso.so");
		CHECK(o[1].copy == NULL);
		CHECK_U(o[3].unload_ns, T0 + 60 * MS);
	}
#define FIND(pc, t) sonde_exp_find_object(exp, (pc), (t))
#define NAME_IS(pc, t, want) (FIND(pc, t) && !strcmp(FIND(pc, t)->name, (want)))
	CHECK(NAME_IS(st_a[0], SONDE_TIME_NEVER, "libc.so.6")); /* SONDE_PC_EXACT ignored */
	CHECK(NAME_IS(0x7f0000010000, T0, "libc.so.6"));
	CHECK(NAME_IS(0x7f00001fffff, T0, "libc.so.6"));
	CHECK(FIND(0x7f0000200000, T0) == NULL);
	CHECK(FIND(0x7f000000ffff, T0) == NULL);
	CHECK(FIND(0x12, T0) == NULL);
	CHECK(FIND(0, SONDE_TIME_NEVER) == NULL);
	CHECK(FIND(UINT64_MAX & ~EXACT, SONDE_TIME_NEVER) == NULL);
	CHECK(NAME_IS(0x400000, T0, "prog"));
	CHECK(NAME_IS(0x7fff0100, T0, "[vdso]"));
	/* One range, two objects over time. */
	CHECK(NAME_IS(0x7e0000000010, T0 + 55 * MS, "libdl1.so"));
	CHECK(NAME_IS(0x7e0000000010, T0 + 75 * MS, "libdl2.so"));
	CHECK(NAME_IS(0x7e0000000010, T0 + 60 * MS, "libdl2.so")); /* neither loaded: last */
	CHECK(NAME_IS(0x7e0000000010, SONDE_TIME_NEVER, "libdl2.so"));
	CHECK(NAME_IS(0x7e0000000010, T0, "libdl2.so"));
	/* Mapping epochs: cut at the loads and unloads of libdl1 and libdl2
	 * (the only objects whose addresses another file held), and within
	 * one the lookup by time does not change. */
	{
		uint64_t lo = 1, hi = 1;

		CHECK_U(sonde_exp_map_epochs(exp), 4);
		CHECK(sonde_exp_map_epoch(exp, 0, &lo, &hi) == 0 && lo == 0 && hi == T0 + 50 * MS);
		CHECK(sonde_exp_map_epoch(exp, T0 + 50 * MS - 1, NULL, NULL) == 0);
		CHECK(sonde_exp_map_epoch(exp, T0 + 50 * MS, &lo, &hi) == 1 && lo == T0 + 50 * MS &&
		      hi == T0 + 60 * MS);
		CHECK(sonde_exp_map_epoch(exp, T0 + 65 * MS, NULL, NULL) == 2);
		CHECK(sonde_exp_map_epoch(exp, T0 + 70 * MS, &lo, &hi) == 3 && lo == T0 + 70 * MS &&
		      hi == SONDE_TIME_NEVER);
		CHECK(sonde_exp_map_epoch(exp, SONDE_TIME_NEVER, NULL, NULL) == 3);
		CHECK(NAME_IS(0x7e0000000010, T0 + 50 * MS, "libdl1.so"));
		CHECK(NAME_IS(0x7e0000000010, T0 + 60 * MS - 1, "libdl1.so"));
	}

	const struct sonde_overview_packet *ov = sonde_exp_overview(exp, &n);

	CHECK_U(n, 2);
	CHECK(n == 2 && ov[0].reason == SONDE_OV_START && ov[0].minflt == 11);
	CHECK(n == 2 && ov[1].reason == SONDE_OV_END && ov[1].utime_ns == 120 * MS &&
	      ov[1].maxrss_kb == 4321 && ov[1].size == sizeof(struct sonde_overview_packet));

	const struct sonde_exp_file *f = sonde_exp_files(exp, &n);

	CHECK_U(n, 13); /* log, map, notes, profile, stacks, overview, periodic, 6 kind files */
	CHECK(n == 13 && !strcmp(f[3].name, "profile") && f[3].present &&
	      f[3].size == PROFILE_OFF(2));
	CHECK(n == 13 && f[2].present && f[2].size == 19); /* notes */
	CHECK(n == 13 && !strcmp(f[6].name, "periodic") && !f[6].present);
	CHECK(n == 13 && !strcmp(f[7].name, "synctrace") && !f[7].present);
	sonde_exp_close(exp);

	/* A trailing slash is not part of the name. */
	char p2[600];

	snprintf(p2, sizeof(p2), "%s/", path("basic.er"));
	char err[256];

	exp = sonde_exp_open(p2, err, sizeof(err));
	CHECK(exp && !strcmp(sonde_exp_info(exp)->name, "basic.er"));
	sonde_exp_close(exp);
}

/* ---- many blocks, zero blocks ------------------------------------------- */

static void test_blocks(void)
{
	group = "blocks";
	struct sonde_expw *w = create("blocks.er");
	uint64_t want_w = 0;
	const int n100 = 1200, n101 = 700;

	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_stack(w, 1, 0, 1, st_a);
	for (int i = 0; i < n100 || i < n101; i++) {
		if (i == 600)
			sonde_expw_zero_block(w, SONDE_KIND_PROFILE);
		if (i < n100) {
			sonde_expw_sample(w, 100, 0, T0 + (uint64_t)i, 1000 + (uint64_t)i, 1);
			want_w += 1000 + (uint64_t)i;
		}
		if (i < n101) {
			sonde_expw_sample(w, 101, 0, T0 + (uint64_t)i, 7, 1);
			want_w += 7;
		}
	}
	sonde_expw_zero_block(w, SONDE_KIND_PROFILE); /* an unwritten tail */
	finish(w, SONDE_EXPW_OPEN_LOG);

	struct sonde_exp *exp = open_exp("blocks.er");

	CHECK(exp);
	if (!exp)
		return;
	uint64_t wt;

	CHECK_U(count_samples(exp, &wt), n100 + n101);
	CHECK_U(wt, want_w);
	CHECK_U(sonde_exp_summary(exp)->samples, n100 + n101);
	CHECK_U(sonde_exp_summary(exp)->weight_ns, want_w);
	CHECK_U(sonde_exp_nerrors(exp), 0);
	CHECK(!sonde_exp_info(exp)->log_complete);
	CHECK_S(sonde_exp_info(exp)->end_source, "last sample");
	CHECK_U(sonde_exp_info(exp)->end_ns, T0 + n100 - 1);
	CHECK(sonde_exp_info(exp)->exit_event == NULL);

	size_t n;
	const struct sonde_thread *t = sonde_exp_threads(exp, &n);

	CHECK(n == 2 && t[0].samples == (uint64_t)n100 && t[1].samples == (uint64_t)n101);
	sonde_exp_close(exp);
}

/* ---- truncation ----------------------------------------------------------- */

#define TRUNC_N 600 /* two profile blocks of tid 100: 511 + 89 samples */

static int64_t trunc_off[TRUNC_N];

static void write_trunc(const char *name)
{
	struct sonde_expw *w = create(name);

	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_stack(w, 5, 0, 1, st_a);
	for (int i = 0; i < TRUNC_N; i++)
		trunc_off[i] = sonde_expw_sample(w, 100, 0, T0 + (uint64_t)i * MS, MS, 5);
	sonde_expw_log(w, "<event kind=\"end\" time_ns=\"%llu\" samples=\"%d\" lost=\"0\"/>\n",
		       T0 + TRUNC_N * MS, TRUNC_N);
	finish(w, 0);
}

static void test_truncation(void)
{
	group = "truncation";
	const uint64_t B0 = PROFILE_OFF(0), B1 = PROFILE_OFF(1);
	const uint64_t full = PROFILE_OFF(2);
	const struct {
		uint64_t cut;
		int error; /* a read error is expected (data visibly lost) */
	} cases[] = {
		{ 0, 1 },		   /* empty file */
		{ 10, 1 },		   /* inside the 64-byte header struct */
		{ 64, 1 },		   /* inside the 4096-byte header */
		{ B0, 0 },		   /* header only: looks like no data (end event tells) */
		{ B0 + 16, 1 },		   /* inside block 0's header */
		{ B0 + 32, 1 },		   /* block header only */
		{ B0 + 32 + 16, 1 },	   /* mid packet 0 */
		{ B0 + 32 + 5 * 32, 1 },   /* after packet 4 */
		{ B0 + 32 + 5 * 32 + 8, 1 }, /* mid packet 5 */
		{ B1 - 1, 1 },		   /* mid last packet of block 0 */
		{ B1, 0 },		   /* exactly one block */
		{ B1 + 100, 1 },	   /* mid block 1 */
		{ B1 + 32 + 89 * 32, 0 },  /* right after block 1's last packet */
		{ B1 + 32 + 89 * 32 + 500, 0 }, /* inside block 1's zero tail */
		{ full - 8, 0 },
		{ full, 0 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char name[64];
		uint64_t want = 0;

		snprintf(name, sizeof(name), "trunc%zu.er", c);
		write_trunc(name);
		cut(name, "profile", (off_t)cases[c].cut);
		for (int i = 0; i < TRUNC_N; i++)
			want += cases[c].cut >= SONDE_FILE_HEADER_SIZE &&
				(uint64_t)trunc_off[i] + 32 <= cases[c].cut;
		struct sonde_exp *exp = open_exp(name);

		CHECK(exp);
		if (!exp)
			continue;
		uint64_t got = count_samples(exp, NULL);
		size_t nerr = sonde_exp_nerrors(exp);

		if (got != want || (nerr > 0) != cases[c].error) {
			printf("# cut at %llu: want %llu samples%s, got %llu, %zu errors\n",
			       (unsigned long long)cases[c].cut, (unsigned long long)want,
			       cases[c].error ? " and an error" : "", (unsigned long long)got, nerr);
			show_problems(exp);
		}
		CHECK_U(got, want);
		CHECK_U(sonde_exp_summary(exp)->samples, want);
		CHECK_U(nerr > 0, cases[c].error);
		if (cases[c].error)
			CHECK(has_problem(exp, E, "'profile'", NULL));
		if (cases[c].error && cases[c].cut >= B0 + 32)
			CHECK(has_problem(exp, E, "truncated", NULL));
		/* Lost samples are always noticed, through the end event at least. */
		if (want < TRUNC_N)
			CHECK(has_problem(exp, W, "600 samples", NULL) || nerr);
		/* Stacks are untouched. */
		CHECK_U(sonde_exp_summary(exp)->stacks, 1);
		sonde_exp_close(exp);
	}
}

/* ---- corruption -------------------------------------------------------- */

struct corrupt_case {
	const char *what;
	off_t off; /* into "profile"; */
	int width; /* 2 or 4 bytes */
	uint32_t value;
	uint64_t want;
	const char *msg;
	const char *msg2;
};

static void test_corruption(void)
{
	group = "corruption";
	/* Block 0 and 1: tid 100 (511 + 89 samples); block 2: tid 101 (10). */
	const uint64_t B0 = PROFILE_OFF(0), B1 = PROFILE_OFF(1);
	int64_t p0 = (int64_t)B0 + 32;
	const struct corrupt_case cases[] = {
		{ "bad magic", (off_t)B1, 4, 0xdeadbeef, 511 + 10, "bad block magic 0xdeadbeef",
		  "block 1" },
		{ "kind", (off_t)B1 + 4, 4, 2, 511 + 10, "data kind 2", "block 1" },
		{ "used too large", (off_t)B0 + 12, 4, 20000, 89 + 10, "used size 20000", "block 0" },
		{ "size 0", (off_t)p0 + 5 * 32 + 2, 2, 0, 5 + 89 + 10, "packet size 0 is invalid",
		  "offset 4288" },
		{ "size 12", (off_t)p0 + 7 * 32 + 2, 2, 12, 7 + 89 + 10, "packet size 12", "block 0" },
		{ "size 4", (off_t)p0 + 2, 2, 4, 89 + 10, "packet size 4", "block 0" },
		{ "size too big", (off_t)p0 + 510 * 32 + 2, 2, 0xfff8, 510 + 89 + 10,
		  "exceeds the rest", "block 0" },
		{ "profile packet too small", (off_t)p0 + 3 * 32 + 2, 2, 16, 3 + 89 + 10,
		  "profile packet size 16 is below 32", "tid 100" },
		{ "used not whole", (off_t)B0 + 12, 4, 31 * 32 + 4, 31 + 89 + 10, "leaves 4 bytes",
		  "block 0" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char name[64];
		struct sonde_expw *w;

		snprintf(name, sizeof(name), "corrupt%zu.er", c);
		w = create(name);
		sonde_expw_log_preamble(w, 100, T0);
		sonde_expw_stack(w, 5, 0, 1, st_a);
		for (int i = 0; i < TRUNC_N; i++)
			sonde_expw_sample(w, 100, 0, T0 + (uint64_t)i * MS, MS, 5);
		for (int i = 0; i < 10; i++)
			sonde_expw_sample(w, 101, 0, T0 + (uint64_t)i * MS, MS, 5);
		finish(w, 0);
		if (cases[c].width == 2)
			poke16(name, "profile", cases[c].off, (uint16_t)cases[c].value);
		else
			poke32(name, "profile", cases[c].off, cases[c].value);

		struct sonde_exp *exp = open_exp(name);

		CHECK(exp);
		if (!exp)
			continue;
		uint64_t got = count_samples(exp, NULL);

		if (got != cases[c].want || !has_problem(exp, E, cases[c].msg, cases[c].msg2, NULL)) {
			printf("# %s: want %llu samples, got %llu\n", cases[c].what,
			       (unsigned long long)cases[c].want, (unsigned long long)got);
			show_problems(exp);
		}
		CHECK_U(got, cases[c].want);
		CHECK_U(sonde_exp_summary(exp)->samples, cases[c].want);
		CHECK(has_problem(exp, E, "'profile'", cases[c].msg, cases[c].msg2, NULL));
		CHECK_U(sonde_exp_nerrors(exp), 1);
		sonde_exp_close(exp);
	}
}

/* A weight no sample can have (top bit set, or above 2^48 ns) is skipped
 * everywhere, with one error; the totals stay those of the other samples. */
static void test_bad_weight(void)
{
	group = "bad weight";
	struct sonde_expw *w = create("badweight.er");

	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_stack(w, 5, 0, 1, st_a);
	for (int i = 0; i < 50; i++) {
		uint64_t wt = i == 7 ? (1ull << 63) + MS : i == 30 ? SONDE_MAX_SAMPLE_WEIGHT_NS + 1 : MS;

		sonde_expw_sample(w, 100, 0, T0 + (uint64_t)i * MS, wt, 5);
	}
	sonde_expw_sample(w, 100, 0, T0 + 50 * MS, SONDE_MAX_SAMPLE_WEIGHT_NS, 5); /* the bound: kept */
	finish(w, 0);

	struct sonde_exp *exp = open_exp("badweight.er");

	CHECK(exp);
	if (!exp)
		return;
	uint64_t weight = 0;

	CHECK_U(count_samples(exp, &weight), 49);
	CHECK_U(weight, 48 * MS + SONDE_MAX_SAMPLE_WEIGHT_NS);
	CHECK_U(sonde_exp_summary(exp)->samples, 49);
	CHECK_U(sonde_exp_summary(exp)->weight_ns, 48 * MS + SONDE_MAX_SAMPLE_WEIGHT_NS);
	CHECK_U(sonde_exp_summary(exp)->samples_bad_weight, 2);
	size_t nt;
	const struct sonde_thread *t = sonde_exp_threads(exp, &nt);

	CHECK(nt == 1 && t[0].samples == 49 && t[0].weight_ns == 48 * MS + SONDE_MAX_SAMPLE_WEIGHT_NS);
	CHECK(has_problem(exp, E, "'profile'", "2 samples", "impossible weight",
			  "9223372036855775808 ns", NULL));
	CHECK_U(sonde_exp_nerrors(exp), 1);
	sonde_exp_close(exp);
}

/* Microstates: 48-byte profile packets beside 32-byte ones; off-CPU
 * packets in the sampler thread's blocks, for other threads; malformed
 * ones counted and skipped. */
static void test_microstates(void)
{
	group = "microstates";
	struct sonde_expw *w = create("ms.er");
	const uint32_t SAMPLER = 999;

	sonde_expw_log(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			  "<experiment format=\"%d\" collector=\"sonde test\">\n"
			  "<settings clock_interval_ns=\"1000000\" offcpu_interval_ns=\"10000000\" "
			  "microstates=\"1\"/>\n"
			  "<time start_ns=\"%llu\"/>\n",
		       SONDE_FORMAT_VERSION, T0);
	sonde_expw_stack(w, 5, 0, 1, st_a);
	sonde_expw_stack(w, 6, 0, 2, st_b);
	/* tid 100: a 32-byte sample (all User CPU) and two 48-byte ones */
	sonde_expw_sample(w, 100, 1, T0 + 1 * MS, 3 * MS, 5);
	sonde_expw_sample_ms(w, 100, 1, T0 + 2 * MS, 4 * MS, 1 * MS, 500000, 5);
	sonde_expw_sample_ms(w, 100, 1, T0 + 3 * MS, 2 * MS, 2 * MS, 0, 6); /* all system: kept */
	/* malformed microstates: system above the weight; a wait above 2^48 */
	sonde_expw_sample_ms(w, 100, 1, T0 + 4 * MS, 1 * MS, 1 * MS + 1, 0, 5);
	sonde_expw_sample_ms(w, 100, 1, T0 + 5 * MS, 1 * MS, 0, SONDE_MAX_SAMPLE_WEIGHT_NS + 1, 5);
	/* the sampler's own block: off-CPU samples of 100 and 200 */
	sonde_expw_offcpu(w, SAMPLER, 100, SONDE_STATE_USER_LOCK, 202, T0 + 10 * MS, 10 * MS, 6);
	sonde_expw_offcpu(w, SAMPLER, 200, SONDE_STATE_OTHER_WAIT, 35, T0 + 10 * MS, 10 * MS, 5);
	sonde_expw_offcpu(w, SAMPLER, 200, SONDE_STATE_OTHER_WAIT, SONDE_OFFCPU_NO_SYSCALL, T0 + 20 * MS,
			  7 * MS, 5);
	/* malformed: state 0 and 3, tid 0, an impossible weight */
	sonde_expw_offcpu(w, SAMPLER, 200, SONDE_STATE_CPU, 0, T0 + 30 * MS, MS, 5);
	sonde_expw_offcpu(w, SAMPLER, 200, 3, 0, T0 + 30 * MS, MS, 5);
	sonde_expw_offcpu(w, SAMPLER, 0, SONDE_STATE_USER_LOCK, 202, T0 + 30 * MS, MS, 5);
	sonde_expw_offcpu(w, SAMPLER, 200, SONDE_STATE_USER_LOCK, 202, T0 + 30 * MS,
			  SONDE_MAX_SAMPLE_WEIGHT_NS + 1, 5);
	sonde_expw_thread_end(w, 100, T0 + 40 * MS, T0, 9 * MS, 10 * MS, 0, 600000);
	sonde_expw_log(w, "<event kind=\"end\" time_ns=\"%llu\" samples=\"3\" offcpu_samples=\"7\" "
			  "offcpu_discarded=\"2\" offcpu_late_ns=\"3500000\"/>\n",
		       T0 + 50 * MS);
	finish(w, 0);

	struct sonde_exp *exp = open_exp("ms.er");

	CHECK(exp);
	if (!exp)
		return;
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	const struct sonde_exp_summary *sm = sonde_exp_summary(exp);

	CHECK_U(in->settings.offcpu_interval_ns, 10 * MS);
	CHECK(in->settings.microstates);
	CHECK(in->end_event && in->end_event->has_offcpu && in->end_event->offcpu_samples == 7 &&
	      in->end_event->offcpu_discarded == 2);
	CHECK(in->end_event && in->end_event->has_offcpu_late && in->end_event->offcpu_late_ns == 3500000);
	CHECK_U(sm->samples, 3);
	CHECK_U(sm->weight_ns, 9 * MS);
	CHECK_U(sm->samples_ms, 2);
	CHECK_U(sm->system_ns, 3 * MS);
	CHECK_U(sm->wait_cpu_ns, 500000);
	CHECK_U(sm->samples_bad_ms, 2);
	CHECK_U(sm->offcpu_samples, 3);
	CHECK_U(sm->state_ns[SONDE_STATE_USER_LOCK], 10 * MS);
	CHECK_U(sm->state_ns[SONDE_STATE_OTHER_WAIT], 17 * MS);
	CHECK_U(sm->offcpu_bad, 4);
	CHECK_U(sm->first_ns, T0 + 1 * MS); /* CPU samples' times only */
	CHECK_U(sm->last_ns, T0 + 3 * MS);
	CHECK(has_problem(exp, E, "'profile'", "2 samples", "impossible microstates", NULL));
	CHECK(has_problem(exp, E, "'profile'", "4 off-CPU samples", NULL));
	CHECK_U(sonde_exp_nerrors(exp), 2);

	/* threads: 100 and 200, never the sampler */
	size_t nt;
	const struct sonde_thread *t = sonde_exp_threads(exp, &nt);

	CHECK_U(nt, 2);
	if (nt == 2) {
		CHECK_U(t[0].tid, 100);
		CHECK_U(t[0].samples, 3);
		CHECK_U(t[0].weight_ns, 9 * MS);
		CHECK_U(t[0].system_ns, 3 * MS);
		CHECK_U(t[0].wait_cpu_ns, 500000);
		CHECK_U(t[0].offcpu_samples, 1);
		CHECK_U(t[0].state_ns[SONDE_STATE_USER_LOCK], 10 * MS);
		CHECK_U(t[0].state_ns[SONDE_STATE_OTHER_WAIT], 0);
		CHECK(t[0].has_times && t[0].utime_ns == 10 * MS && t[0].stime_ns == 0);
		CHECK(t[0].has_run_delay && t[0].run_delay_ns == 600000);
		CHECK(t[0].has_cpu_ns && t[0].cpu_ns == 9 * MS);
		CHECK_U(t[1].tid, 200);
		CHECK_U(t[1].samples, 0);
		CHECK_U(t[1].offcpu_samples, 2);
		CHECK_U(t[1].state_ns[SONDE_STATE_OTHER_WAIT], 17 * MS);
		CHECK(!t[1].has_times && !t[1].has_run_delay);
	}

	/* the iterator: the same samples, with their fields */
	struct sonde_sample_iter it;
	struct sonde_sample x, v[8];
	size_t n = 0;

	sonde_sample_iter_init(&it, exp);
	while (sonde_sample_iter_next(&it, &x))
		if (n < 8)
			v[n++] = x;
	CHECK_U(n, 6);
	if (n == 6) {
		CHECK(v[0].tid == 100 && v[0].state == SONDE_STATE_CPU && v[0].weight_ns == 3 * MS &&
		      v[0].system_ns == 0 && v[0].wait_cpu_ns == 0 && v[0].syscall == SONDE_OFFCPU_NO_SYSCALL);
		CHECK(v[1].tid == 100 && v[1].system_ns == 1 * MS && v[1].wait_cpu_ns == 500000 && v[1].cpu == 1);
		CHECK(v[2].system_ns == 2 * MS && v[2].weight_ns == 2 * MS && v[2].stack_id == 6);
		CHECK(v[3].tid == 100 && v[3].state == SONDE_STATE_USER_LOCK && v[3].syscall == 202 &&
		      v[3].weight_ns == 10 * MS && v[3].stack_id == 6 && v[3].cpu == 0xffff);
		CHECK(v[4].tid == 200 && v[4].state == SONDE_STATE_OTHER_WAIT && v[4].syscall == 35);
		CHECK(v[5].tid == 200 && v[5].syscall == SONDE_OFFCPU_NO_SYSCALL && v[5].weight_ns == 7 * MS &&
		      v[5].time_ns == T0 + 20 * MS);
	}
	sonde_exp_close(exp);

	/* A short off-CPU packet ends its block (an error), a short profile
	 * packet too; the reader goes on. */
	w = create("msshort.er");
	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_stack(w, 5, 0, 1, st_a);
	sonde_expw_sample_ms(w, 100, 0, T0 + MS, MS, 0, 0, 5);
	struct sonde_offcpu_packet op = { .type = SONDE_PKT_OFFCPU, .size = 32, .state = 1, .tid = 100,
					  .weight_ns = MS, .stack_id = 5 };
	sonde_expw_packet(w, SONDE_KIND_PROFILE, SAMPLER, &op, 32);
	sonde_expw_offcpu(w, SAMPLER, 100, SONDE_STATE_USER_LOCK, 202, T0 + 10 * MS, 10 * MS, 5);
	struct sonde_profile_packet pp = { .type = SONDE_PKT_PROFILE, .size = 24, .weight_ns = MS };
	sonde_expw_packet(w, SONDE_KIND_PROFILE, 300, &pp, 24);
	finish(w, 0);
	exp = open_exp("msshort.er");
	CHECK(exp);
	if (!exp)
		return;
	CHECK_U(sonde_exp_summary(exp)->offcpu_samples, 0);
	CHECK_U(sonde_exp_summary(exp)->samples, 1);
	CHECK(has_problem(exp, E, "off-CPU packet size 32 is below 40", NULL));
	CHECK(has_problem(exp, E, "profile packet size 24 is below 32", NULL));
	CHECK_U(count_samples(exp, NULL), 1);
	t = sonde_exp_threads(exp, &nt);
	CHECK(nt == 2 && t[0].tid == 100 && t[1].tid == 300); /* the sampler is no thread */
	sonde_exp_close(exp);
}

/* Problems are capped; the count of errors is not. */
static void test_problem_cap(void)
{
	group = "problem cap";
	struct sonde_expw *w = create("cap.er");
	int64_t off[150];

	sonde_expw_log_preamble(w, 100, T0);
	for (int i = 0; i < 150; i++)
		off[i] = sonde_expw_zero_block(w, SONDE_KIND_PROFILE);
	sonde_expw_sample(w, 100, 0, T0, MS, 5);
	finish(w, 0);
	for (int i = 0; i < 150; i++)
		poke32("cap.er", "profile", off[i], 0x12345678);

	struct sonde_exp *exp = open_exp("cap.er");

	CHECK(exp);
	if (!exp)
		return;
	size_t n;
	const struct sonde_problem *p = sonde_exp_problems(exp, &n);

	CHECK_U(n, SONDE_EXP_MAX_PROBLEMS);
	CHECK(n && strstr(p[n - 1].msg, "more problems") && p[n - 1].severity == E);
	CHECK_U(sonde_exp_nerrors(exp), 150);
	CHECK_U(count_samples(exp, NULL), 1);
	sonde_exp_close(exp);
}

/* ---- packets: unknown types, larger sizes, stacks ------------------------ */

static void test_packets(void)
{
	group = "packets";
	struct sonde_expw *w = create("packets.er");
	uint64_t unknown[3] = { 0, 0, 0 };
	struct sonde_packet *u = (void *)unknown;
	struct { /* a 32-byte packet (before microstates) grown by 8 bytes */
		uint16_t type, size, cpu, state;
		uint64_t time_ns, weight_ns, stack_id;
		uint64_t extra;
	} big = { SONDE_PKT_PROFILE, 40, 3, 0, T0 + 5, 4 * MS, 5, 0xffff };
	struct {
		struct sonde_overview_packet p;
		uint64_t extra;
	} bigov = { { .type = SONDE_PKT_OVERVIEW, .size = sizeof(bigov), .time_ns = T0 + 3, .nvcsw = 9 }, 1 };
	/* An 88-byte packet of an older writer, and one with a label. */
	struct sonde_overview_packet oldov = { .type = SONDE_PKT_OVERVIEW, .size = SONDE_OVERVIEW_V1_SIZE,
					       .time_ns = T0 + 1, .nvcsw = 7 };
	struct {
		struct sonde_overview_packet p;
		char label[8];
	} labov = { { .type = SONDE_PKT_OVERVIEW, .size = sizeof(labov), .reason = SONDE_OV_API,
		      .time_ns = T0 + 2, .rss_kb = 5, .label_len = 5 }, "phase" };
	uint64_t badstack[3] = { 0, 0x77, 0x1 };
	struct sonde_stack_packet *bs = (void *)badstack;

	u->type = 99;
	u->size = 24;
	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_stack(w, 5, 0, 1, st_a);
	sonde_expw_stack(w, 6, 0, 0, NULL); /* depth 0 is allowed */
	sonde_expw_stack(w, 5, 0, 1, st_a); /* repeat */
	sonde_expw_stack(w, 5, 0, 1, st_c); /* same id, other stack: warn, keep the first */
	sonde_expw_sample(w, 100, 0, T0 + 1, MS, 5);
	sonde_expw_packet(w, SONDE_KIND_PROFILE, 100, unknown, 24);
	sonde_expw_packet(w, SONDE_KIND_PROFILE, 100, &big, sizeof(big));
	sonde_expw_sample(w, 100, 0, T0 + 9, MS, 6);
	sonde_expw_sample(w, 100, 0, T0 + 10, MS, 0x404); /* no such stack */
	sonde_expw_packet(w, SONDE_KIND_OVERVIEW, 100, unknown, 24);
	sonde_expw_packet(w, SONDE_KIND_OVERVIEW, 100, &bigov, sizeof(bigov));
	sonde_expw_packet(w, SONDE_KIND_OVERVIEW, 100, &oldov, SONDE_OVERVIEW_V1_SIZE);
	sonde_expw_packet(w, SONDE_KIND_OVERVIEW, 100, &labov, sizeof(labov));
	/* Last: a stack packet whose depth does not match its size. */
	bs->type = SONDE_PKT_STACK;
	bs->size = 24;
	bs->depth = 3;
	int64_t bad_off = sonde_expw_packet(w, SONDE_KIND_STACKS, 100, badstack, 24);
	finish(w, 0);

	struct sonde_exp *exp = open_exp("packets.er");

	CHECK(exp);
	if (!exp)
		return;
	const struct sonde_exp_summary *s = sonde_exp_summary(exp);
	uint64_t wt;

	CHECK_U(count_samples(exp, &wt), 4);
	CHECK_U(wt, 7 * MS);
	CHECK_U(s->samples, 4);
	CHECK_U(s->unknown_packets, 2);
	CHECK_U(s->stacks, 2);
	CHECK_U(s->stack_packets, 4);
	CHECK_U(s->stack_conflicts, 1);
	CHECK_U(s->samples_unknown_stack, 1);
	CHECK(has_problem(exp, W, "stack id 0x5", NULL));
	CHECK(has_problem(exp, W, "1 samples refer to stacks", NULL));
	char off[32];

	snprintf(off, sizeof(off), "offset %lld", (long long)bad_off);
	CHECK(has_problem(exp, E, "'stacks'", off, "depth 3 does not match its size 24", NULL));
	CHECK_U(sonde_exp_nerrors(exp), 1);

	const struct sonde_stack *st = sonde_exp_stack(exp, 5);

	CHECK(st && st->depth == 1 && frames_are(st, st_a, 1));
	st = sonde_exp_stack(exp, 6);
	CHECK(st && st->depth == 0);
	CHECK(sonde_exp_stack(exp, 0x77) == NULL);

	struct sonde_sample_iter it;
	struct sonde_sample sm;

	sonde_sample_iter_init(&it, exp);
	sonde_sample_iter_next(&it, &sm);
	CHECK(sonde_sample_iter_next(&it, &sm) && sm.weight_ns == 4 * MS && sm.cpu == 3 &&
	      sm.time_ns == T0 + 5);

	size_t n;
	const struct sonde_overview_packet *ov = sonde_exp_overview(exp, &n);

	/* in time order, whatever the file order */
	CHECK_U(n, 3);
	CHECK(n == 3 && ov[0].nvcsw == 7 && ov[0].rss_kb == 0 && ov[0].label_len == 0);
	CHECK(n == 3 && ov[1].reason == SONDE_OV_API && ov[1].rss_kb == 5 &&
	      sonde_exp_overview_label(exp, 1) && !strcmp(sonde_exp_overview_label(exp, 1), "phase"));
	CHECK(n == 3 && ov[2].nvcsw == 9 && !sonde_exp_overview_label(exp, 2));
	CHECK_U(sonde_exp_nsamples(exp), 2);
	CHECK_U(sonde_exp_sample_of(exp, T0 + 2), 1);
	CHECK_U(sonde_exp_sample_of(exp, T0 + 0), 1);
	CHECK_U(sonde_exp_sample_of(exp, T0 + 99), 2);
	struct sonde_sample_sel *sel = NULL;
	char serr[200];

	CHECK(sonde_sample_sel_new(&sel, exp, "2", serr, sizeof(serr)) == 0 && sel);
	CHECK(!sonde_sample_sel_has(sel, T0 + 2) && sonde_sample_sel_has(sel, T0 + 3) &&
	      sonde_sample_sel_has(sel, T0 + 99));
	sonde_sample_sel_free(sel);
	CHECK(sonde_sample_sel_new(&sel, exp, "1,x", serr, sizeof(serr)) < 0);
	sonde_exp_close(exp);
}

/* ---- heap leak matching (lib/reader/heapleaks.c) --------------------------------- */

/* Writes data file `file` of kind into experiment exp: for each of nthr
 * threads in turn, packets pk[t] (n[t] bytes, whole packets back to back)
 * in blocks of thread tid[t] whose first_ns is first_ns, a new block
 * whenever one is full. */
static void write_trace_threads(const char *exp, const char *file, enum sonde_kind kind, size_t nthr,
				const uint32_t *tid, uint64_t first_ns, const uint8_t *const *pks, const size_t *ns)
{
	FILE *f = fopen(file_in(exp, file), "wb");
	uint8_t *hdr = calloc(1, SONDE_FILE_HEADER_SIZE), *blk = malloc(SONDE_BLOCK_SIZE);
	struct sonde_file_header fh = { .version = SONDE_FORMAT_VERSION, .kind = kind,
					.header_size = SONDE_FILE_HEADER_SIZE,
					.block_size = SONDE_BLOCK_SIZE, .pid = tid[0], .start_ns = T0 };
	int bad = !f || !hdr || !blk;

	memcpy(fh.magic, SONDE_DATA_MAGIC, 8);
	if (!bad) {
		memcpy(hdr, &fh, sizeof(fh));
		bad |= fwrite(hdr, 1, SONDE_FILE_HEADER_SIZE, f) != SONDE_FILE_HEADER_SIZE;
	}
	for (size_t t = 0; t < nthr; t++)
	for (size_t off = 0, n = ns[t]; !bad && off < n;) {
		const uint8_t *pk = pks[t];
		struct sonde_block_header bh = { SONDE_BLOCK_MAGIC, kind, tid[t], 0, first_ns, 0 };

		memset(blk, 0, SONDE_BLOCK_SIZE);
		while (off < n) {
			uint16_t sz;

			memcpy(&sz, pk + off + 2, 2);
			if (bh.used + sz > SONDE_BLOCK_PAYLOAD)
				break;
			memcpy(blk + sizeof(bh) + bh.used, pk + off, sz);
			bh.used += sz;
			off += sz;
		}
		memcpy(blk, &bh, sizeof(bh));
		bad |= fwrite(blk, 1, SONDE_BLOCK_SIZE, f) != SONDE_BLOCK_SIZE;
	}
	if (f && fclose(f))
		bad = 1;
	if (bad)
		printf("# cannot write %s\n", file_in(exp, file)), nfail++;
	free(hdr);
	free(blk);
}

static void write_trace(const char *exp, const char *file, enum sonde_kind kind, uint32_t tid,
			uint64_t first_ns, const uint8_t *pk, size_t n)
{
	write_trace_threads(exp, file, kind, 1, &tid, first_ns, &pk, &n);
}

/* CPU seconds of this thread: what a bound on work can be checked
 * against on a loaded machine (other processes take wall time, not it). */
static double thread_cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* An experiment with no data besides what the test adds. */
static void write_empty(const char *name)
{
	struct sonde_expw *w = create(name);

	sonde_expw_log_preamble(w, 100, T0);
	finish(w, 0);
}

static size_t heap_pkt(uint8_t *p, uint8_t func, uint8_t flags, uint64_t t, uint64_t addr, uint64_t bytes)
{
	struct sonde_heap_packet h = { SONDE_PKT_HEAP, sizeof(h), func, flags, 0, t, addr, bytes, 0 };

	memcpy(p, &h, sizeof(h));
	return sizeof(h);
}

static void peak_each(void *arg, const struct sonde_heap_event *e, uint64_t live)
{
	uint64_t *v = arg; /* [0] the most live, [1] the events, [2] the live after the last */

	(void)e;
	v[0] = live > v[0] ? live : v[0];
	v[1]++;
	v[2] = live;
}

static void test_heap_heaptrack(void)
{
	group = "heap peak and temporary";
	/* Thread 100: A freed at once (temporary); B and C live at the peak
	 * (B's free follows C's allocation, C's free follows B's free: not
	 * temporary); D leaks.  Thread 200, interleaved in time: E (live at
	 * the peak) and F, each freed by the thread's own next event
	 * (temporary, whatever thread 100 does between). */
	uint8_t p1[16 * 48], p2[16 * 48];
	size_t n1 = 0, n2 = 0;
	const uint64_t A = 0x1000;

	n1 += heap_pkt(p1 + n1, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T0 + 1000000, A, 100);
	n1 += heap_pkt(p1 + n1, SONDE_HEAP_FREE, SONDE_HEAPF_FREE, T0 + 2000000, A, 0);
	n1 += heap_pkt(p1 + n1, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T0 + 3000000, A + 0x100, 200);
	n1 += heap_pkt(p1 + n1, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T0 + 4000000, A + 0x200, 300);
	n1 += heap_pkt(p1 + n1, SONDE_HEAP_FREE, SONDE_HEAPF_FREE, T0 + 6000000, A + 0x100, 0);
	n1 += heap_pkt(p1 + n1, SONDE_HEAP_FREE, SONDE_HEAPF_FREE, T0 + 7000000, A + 0x200, 0);
	n1 += heap_pkt(p1 + n1, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T0 + 8000000, A + 0x300, 50);
	n2 += heap_pkt(p2 + n2, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T0 + 3500000, A + 0x400, 10);
	n2 += heap_pkt(p2 + n2, SONDE_HEAP_FREE, SONDE_HEAPF_FREE, T0 + 5000000, A + 0x400, 0);
	n2 += heap_pkt(p2 + n2, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T0 + 5000000, A + 0x500, 7);
	n2 += heap_pkt(p2 + n2, SONDE_HEAP_FREE, SONDE_HEAPF_FREE, T0 + 5500000, A + 0x500, 0);
	const uint8_t *pks[2] = { p1, p2 };
	size_t ns[2] = { n1, n2 };
	uint32_t tids[2] = { 100, 200 };

	write_empty("heaptrack.er");
	write_trace_threads("heaptrack.er", "heaptrace", SONDE_KIND_HEAP, 2, tids, T0, pks, ns);
	struct sonde_exp *exp = open_exp("heaptrack.er");
	size_t ne;
	const struct sonde_heap_event *e = exp ? sonde_exp_heap_events(exp, &ne) : NULL;

	CHECK(e && ne == 11);
	if (!e || ne != 11)
		return;
	uint64_t left[11], walk[3] = { 0, 0, 0 };
	bool temp[11];
	struct sonde_heap_match m;

	/* the peak, 510 bytes (B, C and E), first reached by C's allocation */
	CHECK_I(sonde_heap_peak_left(exp, left, &m), 0);
	CHECK_U(m.peak_bytes, 510);
	CHECK_U(m.peak_ns, T0 + 4000000);
	uint64_t sum = 0, b = 0, c = 0, ee = 0;

	for (size_t i = 0; i < ne; i++) {
		sum += left[i];
		if (e[i].addr == A + 0x100 && (e[i].flags & SONDE_HEAPF_ALLOC))
			b = left[i];
		if (e[i].addr == A + 0x200 && (e[i].flags & SONDE_HEAPF_ALLOC))
			c = left[i];
		if (e[i].addr == A + 0x400 && (e[i].flags & SONDE_HEAPF_ALLOC))
			ee = left[i];
	}
	CHECK_U(sum, 510);
	CHECK(b == 200 && c == 300 && ee == 10);
	/* temporary: A (thread 100), E and F (thread 200) */
	CHECK_I(sonde_heap_temporary(exp, temp), 3);
	for (size_t i = 0; i < ne; i++) {
		bool want = (e[i].flags & SONDE_HEAPF_ALLOC) &&
			    (e[i].addr == A || e[i].addr == A + 0x400 || e[i].addr == A + 0x500);

		CHECK(temp[i] == want);
	}
	/* the streamed walk: every event, its largest live the peak, then the leak */
	CHECK_I(sonde_heap_walk(exp, peak_each, walk, &m), 0);
	CHECK_U(walk[0], 510);
	CHECK_U(walk[1], 11);
	CHECK_U(walk[2], 50);
	CHECK_U(m.peak_bytes, 510);
	struct sonde_heap_stats hs;

	CHECK_I(sonde_heap_stats(exp, &hs), 0);
	CHECK_U(hs.temporary, 3);
	sonde_exp_close(exp);
}

static void test_heap_leaks(void)
{
	group = "heap leaks";
	/* Mappings and blocks: munmap releases every mapping it overlaps, a
	 * free its block; the peak is the most live bytes at once. */
	uint8_t pk[40 * 16];
	size_t n = 0;
	const uint64_t A = 0x10000000, B = 0x20000000;

	n += heap_pkt(pk + n, SONDE_HEAP_MMAP, SONDE_HEAPF_ALLOC, T0 + 1, A, 0x1000);
	n += heap_pkt(pk + n, SONDE_HEAP_MMAP, SONDE_HEAPF_ALLOC, T0 + 2, A + 0x1000, 0x1000);
	n += heap_pkt(pk + n, SONDE_HEAP_MMAP, SONDE_HEAPF_ALLOC, T0 + 3, A + 0x3000, 0x1000);
	n += heap_pkt(pk + n, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T0 + 4, B, 100);
	/* [A + 0x800, A + 0x1800) overlaps the first two mappings */
	n += heap_pkt(pk + n, SONDE_HEAP_MUNMAP, SONDE_HEAPF_FREE, T0 + 5, A + 0x800, 0x1000);
	n += heap_pkt(pk + n, SONDE_HEAP_FREE, SONDE_HEAPF_FREE, T0 + 6, B, 0);
	n += heap_pkt(pk + n, SONDE_HEAP_MMAP, SONDE_HEAPF_ALLOC, T0 + 7, A, 0x2000);
	n += heap_pkt(pk + n, SONDE_HEAP_MUNMAP, SONDE_HEAPF_FREE, T0 + 8, A + 0x2000, 0x1000); /* none */
	n += heap_pkt(pk + n, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T0 + 9, B, 50);		/* leaks */
	write_empty("leaks.er");
	write_trace("leaks.er", "heaptrace", SONDE_KIND_HEAP, 100, T0, pk, n);

	struct sonde_exp *exp = open_exp("leaks.er");
	size_t ne;
	bool leaked[16];
	struct sonde_heap_match m;

	CHECK(exp && sonde_exp_heap_events(exp, &ne) && ne == 9);
	if (!exp || ne != 9)
		return;
	CHECK_I(sonde_heap_leaks(exp, leaked, &m), 3);
	CHECK(!leaked[0] && !leaked[1] && leaked[2] && !leaked[3] && leaked[6] && leaked[8]);
	CHECK_U(m.leaked_bytes, 0x1000 + 0x2000 + 50);
	CHECK_U(m.peak_bytes, 0x3000 + 100);
	CHECK_U(m.peak_ns, T0 + 4);
	CHECK_U(m.unmatched_frees, 0);
	/* the streamed walk (-header, -heapstat) agrees with the array's */
	struct sonde_heap_stats hs;

	CHECK_I(sonde_heap_stats(exp, &hs), 0);
	CHECK_U(hs.m.leaks, 3);
	CHECK_U(hs.m.leaked_bytes, 0x1000 + 0x2000 + 50);
	CHECK_U(hs.m.peak_bytes, 0x3000 + 100);
	sonde_exp_close(exp);

	/* A partial munmap releases what it covers only: a hole in the
	 * middle splits a mapping, an end shrinks it; the leak is the rest. */
	n = 0;
	n += heap_pkt(pk + n, SONDE_HEAP_MMAP, SONDE_HEAPF_ALLOC, T0 + 1, A, 0x8000);
	n += heap_pkt(pk + n, SONDE_HEAP_MUNMAP, SONDE_HEAPF_FREE, T0 + 2, A + 0x4000, 0x1000);
	n += heap_pkt(pk + n, SONDE_HEAP_MUNMAP, SONDE_HEAPF_FREE, T0 + 3, A, 0x1000);
	n += heap_pkt(pk + n, SONDE_HEAP_MUNMAP, SONDE_HEAPF_FREE, T0 + 4, A + 0x1000, 0x1000);
	n += heap_pkt(pk + n, SONDE_HEAP_MMAP, SONDE_HEAPF_ALLOC, T0 + 5, B, 0x2000);
	/* across the gap: the end of one piece and the start of the next */
	n += heap_pkt(pk + n, SONDE_HEAP_MUNMAP, SONDE_HEAPF_FREE, T0 + 6, A + 0x3000, 0x2800);
	n += heap_pkt(pk + n, SONDE_HEAP_MUNMAP, SONDE_HEAPF_FREE, T0 + 7, B, 0x2000); /* all of it */
	write_empty("partial.er");
	write_trace("partial.er", "heaptrace", SONDE_KIND_HEAP, 100, T0, pk, n);
	exp = open_exp("partial.er");
	CHECK(exp && sonde_exp_heap_events(exp, &ne) && ne == 7);
	if (!exp || ne != 7)
		return;
	uint64_t left[16];

	CHECK_I(sonde_heap_leaks_left(exp, leaked, left, &m), 1);
	CHECK(leaked[0] && !leaked[4]);
	/* 0x8000 - 0x1000 (hole) - 0x2000 (start) - 0x1800 (across the hole) */
	CHECK_U(left[0], 0x3800);
	CHECK_U(left[4], 0);
	CHECK_U(m.leaked_bytes, 0x3800);
	CHECK_U(m.peak_bytes, 0x8000);
	/* streamed, each mapping keeps its pieces too */
	CHECK_I(sonde_heap_stats(exp, &hs), 0);
	CHECK_U(hs.m.leaks, 1);
	CHECK_U(hs.m.leaked_bytes, 0x3800);
	CHECK_U(hs.m.peak_bytes, 0x8000);
	sonde_exp_close(exp);

	/* Many live mappings, each released by its own munmap, last first:
	 * scanning every live mapping at each munmap took minutes for a
	 * few hundred thousand; the matcher must stay O(n log n). */
	const size_t N = 150000;
	uint8_t *big = malloc(2 * N * sizeof(struct sonde_heap_packet));

	if (!big)
		return;
	n = 0;
	for (size_t i = 0; i < N; i++)
		n += heap_pkt(big + n, SONDE_HEAP_MMAP, SONDE_HEAPF_ALLOC, T0 + i, A + i * 0x2000, 0x1000);
	for (size_t i = 0; i < N; i++)
		n += heap_pkt(big + n, SONDE_HEAP_MUNMAP, SONDE_HEAPF_FREE, T0 + N + i,
			      A + (N - 1 - i) * 0x2000, 0x1000);
	write_empty("mmaps.er");
	write_trace("mmaps.er", "heaptrace", SONDE_KIND_HEAP, 100, T0, big, n);
	free(big);
	exp = open_exp("mmaps.er");
	CHECK(exp && sonde_exp_heap_events(exp, &ne) && ne == 2 * N);
	bool *lk = malloc(2 * N * sizeof(*lk));

	if (exp && lk && ne == 2 * N) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_I(sonde_heap_leaks(exp, lk, &m), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

		CHECK_U(m.peak_bytes, N * 0x1000);
		CHECK_U(m.peak_ns, T0 + N - 1);
		if (secs > 3.0)
			printf("# sonde_heap_leaks took %.1f s for %zu mmaps and munmaps\n", secs, N);
		CHECK(secs < 3.0);
	}
	free(lk);
	sonde_exp_close(exp);

	/* Holes punched in one live mapping, one munmap each (an address
	 * space reservation released page by page, or a corrupted size): a
	 * mapping's pieces were a list scanned at each munmap that reached
	 * it, n^2 for n holes (13 s for these).  Checked against a bound on
	 * CPU time (test_heap_stopped_clock): 0.02 s now. */
	const size_t H = 200000;

	big = malloc((H + 1) * sizeof(struct sonde_heap_packet));
	if (!big)
		return;
	n = heap_pkt(big, SONDE_HEAP_MMAP, SONDE_HEAPF_ALLOC, T0, A, (uint64_t)1 << 36);
	for (size_t i = 0; i < H; i++)
		n += heap_pkt(big + n, SONDE_HEAP_MUNMAP, SONDE_HEAPF_FREE, T0 + 1 + i, A + 0x1000 + i * 0x2000, 0x1000);
	write_empty("holes.er");
	write_trace("holes.er", "heaptrace", SONDE_KIND_HEAP, 100, T0, big, n);
	free(big);
	exp = open_exp("holes.er");
	CHECK(exp && sonde_exp_heap_events(exp, &ne) && ne == H + 1);
	uint64_t *lft = malloc((H + 1) * sizeof(*lft));

	lk = malloc((H + 1) * sizeof(*lk));
	if (exp && lk && lft && ne == H + 1) {
		double t0 = thread_cpu_s();

		CHECK_I(sonde_heap_leaks_left(exp, lk, lft, &m), 1);
		double secs = thread_cpu_s() - t0;

		CHECK(lk[0] && lft[0] == ((uint64_t)1 << 36) - H * 0x1000);
		CHECK_U(m.leaked_bytes, ((uint64_t)1 << 36) - H * 0x1000);
		if (secs >= 2.0)
			printf("# sonde_heap_leaks took %.1f s of CPU for %zu holes in a mapping\n", secs, H);
		CHECK(secs < 2.0);
		t0 = thread_cpu_s();
		CHECK_I(sonde_heap_stats(exp, &hs), 0);
		secs = thread_cpu_s() - t0;
		CHECK_U(hs.m.leaked_bytes, ((uint64_t)1 << 36) - H * 0x1000);
		CHECK(secs < 2.0);
	}
	free(lk);
	free(lft);
	sonde_exp_close(exp);
}

/* Events with equal times (one tick of the tracing clock) from several
 * threads: each thread's in its order, the threads' one after another in
 * the file.  The matcher orders each address's events so that frees
 * follow allocations. */
static void test_heap_ties(void)
{
	group = "heap leak matching, equal times";
	const uint64_t X = 0x30000000, T = T0 + 50;
	/* A block passed between threads 100 and 200: 100 allocates, 200
	 * frees and allocates, 100 frees and allocates (the last is never
	 * freed).  The only order in which every free follows an allocation;
	 * in the file's order, 200's free would be unmatched or free 100's
	 * last block. */
	uint8_t a[3 * 40], b[2 * 40];
	size_t na = 0, nb = 0;

	na += heap_pkt(a + na, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T, X, 10);
	na += heap_pkt(a + na, SONDE_HEAP_FREE, SONDE_HEAPF_FREE, T, X, 0);
	na += heap_pkt(a + na, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T, X, 30);
	nb += heap_pkt(b + nb, SONDE_HEAP_FREE, SONDE_HEAPF_FREE, T, X, 0);
	nb += heap_pkt(b + nb, SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T, X, 20);
	for (int order = 0; order < 2; order++) {
		/* either thread's blocks first in the file */
		uint32_t tid[2] = { order ? 200 : 100, order ? 100 : 200 };
		const uint8_t *pk[2] = { order ? b : a, order ? a : b };
		size_t n[2] = { order ? nb : na, order ? na : nb };
		size_t ne;
		bool leaked[8];
		struct sonde_heap_match m;
		const char *name = order ? "ties1.er" : "ties0.er";

		write_empty(name);
		write_trace_threads(name, "heaptrace", SONDE_KIND_HEAP, 2, tid, T0, pk, n);
		struct sonde_exp *exp = open_exp(name);
		const struct sonde_heap_event *e = exp ? sonde_exp_heap_events(exp, &ne) : NULL;

		CHECK(e && ne == 5);
		if (!e || ne != 5) {
			sonde_exp_close(exp);
			continue;
		}
		CHECK_I(sonde_heap_leaks(exp, leaked, &m), 1);
		CHECK_U(m.leaked_bytes, 30);
		CHECK_U(m.unmatched_frees, 0);
		CHECK_U(m.reused_live, 0);
		CHECK_U(m.peak_bytes, 30);
		for (size_t i = 0; i < ne; i++)
			if (leaked[i])
				CHECK(e[i].tid == 100 && e[i].bytes == 30);
		sonde_exp_close(exp);
	}

	/* Eleven threads in one tick, too many to solve exactly: X, live
	 * from an earlier tick, is freed and allocated again by threads 1 to
	 * 10 in turn and freed by thread 11; the file has thread 11 first. */
	enum { NT = 11 };
	uint8_t r[NT][2 * 40];
	const uint8_t *pk[NT];
	size_t n[NT];
	uint32_t tid[NT];

	for (int t = 0; t < NT; t++) {
		int th = NT - t; /* thread 11 first */

		tid[t] = (uint32_t)th;
		pk[t] = r[t];
		n[t] = 0;
		if (th == NT)
			n[t] += heap_pkt(r[t] + n[t], SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T - 1, X, 5);
		n[t] += heap_pkt(r[t] + n[t], SONDE_HEAP_FREE, SONDE_HEAPF_FREE, T, X, 0);
		if (th != NT)
			n[t] += heap_pkt(r[t] + n[t], SONDE_HEAP_MALLOC, SONDE_HEAPF_ALLOC, T, X, (uint64_t)th);
	}
	write_empty("ring.er");
	write_trace_threads("ring.er", "heaptrace", SONDE_KIND_HEAP, NT, tid, T0, pk, n);
	struct sonde_exp *exp = open_exp("ring.er");
	size_t ne;
	bool leaked[2 * NT];
	struct sonde_heap_match m;

	CHECK(exp && sonde_exp_heap_events(exp, &ne) && ne == 2 * NT);
	if (exp && ne == 2 * NT) {
		CHECK_I(sonde_heap_leaks(exp, leaked, &m), 0);
		CHECK_U(m.unmatched_frees, 0);
		CHECK_U(m.reused_live, 0);
	}
	sonde_exp_close(exp);
}

/*
 * What a run leaves when sonde collect is killed while the target runs
 * on: the tracing clock stops, so every later heap event carries its last
 * tick, in blocks claimed (their headers' real time) long after it, which
 * the reader says.  One run of equal times to the end, in which blocks
 * pass between eight threads: each address has 20 events, three or two
 * from each thread.  Ordering each address's events exactly took 10^5
 * steps and more per address (the states multiply with the threads), and
 * such an experiment made sonde print -header run for minutes (issue 27,
 * defect 6).  The work must be linear in the events: checked against a
 * bound on this thread's CPU time (which other processes on a loaded
 * machine do not take), 2 s, where the linear walk takes 0.05 s (0.15 s
 * with sanitizers) and the old one took 11 s.
 */
static void test_heap_stopped_clock(void)
{
	group = "heap leak matching, a stopped tracing clock";
	enum { NT = 8, NA = 12000, PER = 20 };
	const uint64_t T = T0 + 1000000000, A = 0x40000000;
	uint8_t *pk[NT];
	size_t n[NT], ne;
	uint32_t tid[NT];
	bool ok = true;

	for (int t = 0; t < NT; t++) {
		tid[t] = (uint32_t)(100 + t);
		n[t] = 0;
		ok &= (pk[t] = malloc((size_t)NA * 3 * sizeof(struct sonde_heap_packet))) != NULL;
	}
	/* address a: allocated, freed, allocated, ... 20 times, event j by
	 * thread j % 8, so that thread 0 only allocates it, thread 1 only
	 * frees it, ...; the order that makes no step impossible is j's */
	for (size_t a = 0; ok && a < NA; a++)
		for (int j = 0; j < PER; j++) {
			int t = j % NT;
			bool alloc = j % 2 == 0;

			n[t] += heap_pkt(pk[t] + n[t], alloc ? SONDE_HEAP_MALLOC : SONDE_HEAP_FREE,
					 alloc ? SONDE_HEAPF_ALLOC : SONDE_HEAPF_FREE, T, A + 64 * a, alloc ? 32 : 0);
		}
	struct sonde_exp *exp = NULL;

	if (ok) {
		/* the same events in blocks claimed at their tick: the clock
		 * may have stopped, but nothing shows it */
		write_empty("ticking.er");
		write_trace_threads("ticking.er", "heaptrace", SONDE_KIND_HEAP, NT, tid, T,
				    (const uint8_t *const *)pk, n);
		exp = open_exp("ticking.er");
		CHECK(exp && !has_problem(exp, SONDE_PROBLEM_WARNING, "tracing clock", NULL));
		sonde_exp_close(exp);
		/* the blocks claimed 3 s after their events' tick */
		write_empty("stopped.er");
		write_trace_threads("stopped.er", "heaptrace", SONDE_KIND_HEAP, NT, tid, T + 3000000000ull,
				    (const uint8_t *const *)pk, n);
		exp = open_exp("stopped.er");
	}
	for (int t = 0; t < NT; t++)
		free(pk[t]);
	CHECK(exp && sonde_exp_heap_events(exp, &ne) && ne == (size_t)NA * PER);
	/* said in one warning: when the clock stopped, how many events carry it */
	CHECK(exp && has_problem(exp, SONDE_PROBLEM_WARNING, "tracing clock stopped at 1.000 s",
				 "240000 heap events", "up to 3.0 s later", NULL));
	size_t np = 0, nclock = 0;
	const struct sonde_problem *pr = exp ? sonde_exp_problems(exp, &np) : NULL;

	for (size_t i = 0; i < np; i++)
		nclock += strstr(pr[i].msg, "tracing clock") != NULL;
	CHECK_U(nclock, 1);
	CHECK(exp && sonde_exp_nerrors(exp) == 0);
	bool *leaked = exp && ne == (size_t)NA * PER ? malloc(ne * sizeof(*leaked)) : NULL;

	if (leaked) {
		struct sonde_heap_match m;
		struct sonde_heap_stats hs;
		double t0 = thread_cpu_s();

		CHECK_I(sonde_heap_leaks(exp, leaked, &m), 0);
		double secs = thread_cpu_s() - t0;

		if (secs >= 2.0)
			printf("# sonde_heap_leaks took %.1f s of CPU for %zu events of one time\n", secs, ne);
		CHECK(secs < 2.0);
		CHECK_U(m.unmatched_frees, 0);
		CHECK_U(m.reused_live, 0);
		t0 = thread_cpu_s();
		CHECK_I(sonde_heap_stats(exp, &hs), 0);
		secs = thread_cpu_s() - t0;
		if (secs >= 2.0)
			printf("# sonde_heap_stats took %.1f s of CPU for %zu events of one time\n", secs, ne);
		CHECK(secs < 2.0);
		CHECK_U(hs.m.leaks, 0);
		CHECK_U(hs.m.unmatched_frees, 0);
	}
	free(leaked);
	sonde_exp_close(exp);
}

/*
 * An exec that failed voids the end records written for it (from its
 * since_ns on): every thread whose recorded end is at or after since_ns
 * loses it.  Each exec_failed looked at every thread, n^2 for a log.xml of
 * n of each (19 s of CPU for 80000, a 16 MB log.xml); now the threads'
 * ends are a heap.  60000 threads end, then 60000 execs fail, each since a
 * little earlier, down to the middle thread's end; the last thread ends
 * again after them.
 */
static void test_exec_failed_many(void)
{
	group = "exec_failed over many threads";
	enum { N = 60000 };
	struct sonde_expw *w = create("execfail.er");

	sonde_expw_log_preamble(w, 100, T0);
	for (uint32_t k = 0; k < N; k++)
		sonde_expw_log(w, "<event kind=\"thread_end\" tid=\"%u\" time_ns=\"%llu\" cpu_ns=\"5\"/>\n", 1000 + k,
			       (unsigned long long)(T0 + 10 + k));
	for (uint32_t k = 0; k < N; k++)
		sonde_expw_log(w, "<event kind=\"exec_failed\" time_ns=\"%llu\" since_ns=\"%llu\" err=\"2\"/>\n",
			       (unsigned long long)(T0 + 2 * N + k), (unsigned long long)(T0 + 10 + N - 1 - k / 2));
	sonde_expw_log(w, "<event kind=\"thread_end\" tid=\"%u\" time_ns=\"%llu\" cpu_ns=\"7\"/>\n", 1000 + N - 1,
		       (unsigned long long)(T0 + 4 * N));
	finish(w, 0);
	double t0 = thread_cpu_s();
	struct sonde_exp *exp = open_exp("execfail.er");
	double secs = thread_cpu_s() - t0;

	CHECK(exp);
	if (!exp)
		return;
	if (secs >= 2.0)
		printf("# opening took %.1f s of CPU\n", secs);
	CHECK(secs < 2.0);
	size_t n, kept = 0;
	const struct sonde_thread *t = sonde_exp_threads(exp, &n);

	CHECK_U(n, N);
	for (size_t i = 0; i < n; i++)
		kept += t[i].has_cpu_ns;
	/* the first half and the one that ended again */
	CHECK_U(kept, N / 2 + 1);
	CHECK(n == N && t[0].has_cpu_ns && t[0].cpu_ns == 5 && t[0].end_ns == T0 + 10);
	CHECK(n == N && t[N / 2 - 1].has_cpu_ns && !t[N / 2].has_cpu_ns && t[N / 2].end_ns == 0);
	CHECK(n == N && t[N - 1].has_cpu_ns && t[N - 1].cpu_ns == 7 && t[N - 1].end_ns == T0 + 4 * N);
	sonde_exp_close(exp);
}

/* ---- heap stream packets ----------------------------------------------- */

static uint8_t *put_uleb(uint8_t *q, uint64_t v)
{
	do {
		*q++ = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return q;
}

static uint8_t *put_zz(uint8_t *q, int64_t d)
{
	return put_uleb(q, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
}

/* The stream packet of test_heap_stream, with record starts in rec[]. */
static size_t stream_pkt(uint8_t *pk, size_t rec[5], uint8_t bad_tag_at)
{
	uint8_t *q = pk + sizeof(struct sonde_heap_stream_packet);
	uint64_t st1 = 0x1234, st2 = 0x9999;

	rec[0] = (size_t)(q - pk); /* def slot 5 + alloc: malloc 100 bytes at 0x5000 */
	*q++ = 0x80 | 5;
	*q++ = SONDE_HEAP_MALLOC;
	memcpy(q, &st1, 8);
	q = put_zz(put_uleb(put_uleb(q + 8, 0), 100), 0x5000);
	rec[1] = (size_t)(q - pk); /* alloc through slot 5: 200 bytes at 0x5100, 300 ns later */
	*q++ = 5;
	q = put_zz(put_uleb(put_uleb(q, 300), 200), 0x100);
	rec[2] = (size_t)(q - pk); /* free of 0x5000 */
	*q++ = 0x40 | SONDE_HEAP_FREE;
	q = put_zz(put_uleb(q, 5), -0x100);
	rec[3] = (size_t)(q - pk); /* def slot 7: a calloc of 2^40 bytes that failed */
	*q++ = 0x80 | 7;
	*q++ = SONDE_HEAP_CALLOC;
	memcpy(q, &st2, 8);
	q = put_zz(put_uleb(put_uleb(q + 8, 1), 1ull << 40), -0x5000);
	rec[4] = (size_t)(q - pk); /* realloc releasing 0x5100 */
	*q++ = 0x40 | SONDE_HEAP_REALLOC;
	q = put_zz(put_uleb(q, 0), 0x5100);
	if (bad_tag_at)
		pk[rec[bad_tag_at]] = 0xc0;
	size_t nbytes = (size_t)(q - pk) - sizeof(struct sonde_heap_stream_packet);
	struct sonde_heap_stream_packet h = { SONDE_PKT_HEAP_STREAM,
					      (uint16_t)((sizeof(h) + nbytes + 7) & ~(size_t)7),
					      (uint16_t)nbytes, 0, T0 + 1000 };
	memcpy(pk, &h, sizeof(h));
	memset(q, 0, h.size - (sizeof(h) + nbytes));
	return h.size;
}

static void test_heap_stream(void)
{
	group = "heap stream";
	uint8_t pk[256];
	size_t rec[5];
	size_t n = stream_pkt(pk, rec, 0);

	write_empty("stream.er");
	write_trace("stream.er", "heaptrace", SONDE_KIND_HEAP, 100, T0, pk, n);
	struct sonde_exp *exp = open_exp("stream.er");
	size_t ne = 0;
	const struct sonde_heap_event *e = exp ? sonde_exp_heap_events(exp, &ne) : NULL;

	CHECK(e && ne == 5);
	if (e && ne == 5) {
		const uint64_t t[] = { T0 + 1000, T0 + 1300, T0 + 1305, T0 + 1306, T0 + 1306 };
		const uint64_t a[] = { 0x5000, 0x5100, 0x5000, 0, 0x5100 };
		const uint64_t b[] = { 100, 200, 0, 1ull << 40, 0 };
		const uint64_t s[] = { 0x1234, 0x1234, 0, 0x9999, 0 };
		const uint8_t f[] = { SONDE_HEAP_MALLOC, SONDE_HEAP_MALLOC, SONDE_HEAP_FREE, SONDE_HEAP_CALLOC,
				      SONDE_HEAP_REALLOC };
		const uint8_t fl[] = { SONDE_HEAPF_ALLOC, SONDE_HEAPF_ALLOC, SONDE_HEAPF_FREE, SONDE_HEAPF_FAILED,
				       SONDE_HEAPF_FREE };
		for (int i = 0; i < 5; i++) {
			CHECK_U(e[i].time_ns, t[i]);
			CHECK_U(e[i].addr, a[i]);
			CHECK_U(e[i].bytes, b[i]);
			CHECK_U(e[i].stack_id, s[i]);
			CHECK_U(e[i].func, f[i]);
			CHECK_U(e[i].flags, fl[i]);
			CHECK_U(e[i].tid, 100);
		}
		CHECK_U(sonde_exp_nerrors(exp), 0);
	}
	sonde_exp_close(exp);

	/* Killed while the packet grew: its header is ahead of the block's
	 * used size, which ends inside record 3.  Records 0-2 count; the cut
	 * one is dropped without an error. */
	size_t used = (rec[3] + 8) & ~(size_t)7;
	CHECK(used > rec[3] + 1 && used < rec[4]);
	write_empty("cut.er");
	write_trace("cut.er", "heaptrace", SONDE_KIND_HEAP, 100, T0, pk, n);
	poke32("cut.er", "heaptrace", SONDE_FILE_HEADER_SIZE + 12, (uint32_t)used); /* block 0's used */
	exp = open_exp("cut.er");
	ne = 0;
	e = exp ? sonde_exp_heap_events(exp, &ne) : NULL;
	CHECK_U(ne, 3);
	CHECK(exp && sonde_exp_nerrors(exp) == 0);
	if (exp && sonde_exp_nerrors(exp))
		show_problems(exp);
	sonde_exp_close(exp);

	/* Corrupt: a reserved tag, a slot used before it is defined, records
	 * running past nbytes.  The records before the bad one are kept. */
	struct {
		const char *what, *msg;
		size_t want;
	} cases[] = {
		{ "reserved tag", "unknown tag 0xc0", 2 },
		{ "undefined slot", "uses slot 9 before defining it", 1 },
		{ "past nbytes", "runs past the packet", 4 },
	};
	for (size_t c = 0; c < 3; c++) {
		char name[32];
		n = stream_pkt(pk, rec, c == 0 ? 2 : 0);
		if (c == 1)
			pk[rec[1]] = 9;
		if (c == 2) { /* nbytes ends inside the last record */
			uint16_t nb = (uint16_t)(rec[4] + 1 - 16);
			memcpy(pk + 4, &nb, 2);
			uint16_t sz = (uint16_t)((16 + nb + 7) & ~7);
			memcpy(pk + 2, &sz, 2);
			n = sz;
		}
		snprintf(name, sizeof name, "stream%zu.er", c);
		write_empty(name);
		write_trace(name, "heaptrace", SONDE_KIND_HEAP, 100, T0, pk, n);
		exp = open_exp(name);
		ne = 0;
		if (exp)
			sonde_exp_heap_events(exp, &ne);
		CHECK_U(ne, cases[c].want);
		CHECK(exp && has_problem(exp, E, "'heaptrace'", cases[c].msg, NULL));
		if (exp && !has_problem(exp, E, "'heaptrace'", cases[c].msg, NULL)) {
			printf("# %s:\n", cases[c].what);
			show_problems(exp);
		}
		sonde_exp_close(exp);
	}
}

/* ---- files: map.xml, headers, foreign directories ------------------------ */

static void test_missing_map(void)
{
	group = "missing map";
	write_basic("nomap.er", SONDE_EXPW_NO_MAP);
	struct sonde_exp *exp = open_exp("nomap.er");

	CHECK(exp);
	if (!exp)
		return;
	size_t n;

	CHECK(has_problem(exp, W, "'map.xml' is missing", NULL));
	CHECK_U(sonde_exp_nerrors(exp), 0);
	sonde_exp_objects(exp, &n);
	CHECK_U(n, 0);
	CHECK(sonde_exp_find_object(exp, st_a[0], SONDE_TIME_NEVER) == NULL);
	CHECK_U(sonde_exp_map_epochs(exp), 1); /* no objects: no reuse, one epoch */
	CHECK(sonde_exp_map_epoch(exp, 12345, NULL, NULL) == 0);
	CHECK_U(sonde_exp_summary(exp)->samples, 80);
	sonde_exp_close(exp);

	/* A damaged map.xml: keep the objects before the damage. */
	write_basic("badmap.er", 0);
	write_text("badmap.er", "map.xml",
		   "<?xml version=\"1.0\"?>\n<map>\n"
		   "<object id=\"1\" time_ns=\"5\" event=\"load\" path=\"/a/b.so\" base=\"0x1000\" "
		   "lo=\"0x1000\" hi=\"0x2000\"/>\n"
		   "<object id=\"2\" time_ns=\"6\" event=\"unload\"/>\n"
		   "<object id=\"3\" time_ns=\"7\" event=\"load\" path=\"/a/c.so\" base=\"zz\" "
		   "lo=\"0x3000\" hi=\"0x4000\"/>\n"
		   "<object id=\"4\" time_ns=\"8\" event=\"load\" path=\"/a/d.so\" base=\"0x50");
	exp = open_exp("badmap.er");
	CHECK(exp);
	if (!exp)
		return;
	const struct sonde_object *o = sonde_exp_objects(exp, &n);

	CHECK_U(n, 2);
	CHECK(n >= 1 && !strcmp(o[0].name, "b.so") && o[0].buildid == NULL);
	CHECK(has_problem(exp, W, "unload of object 2", NULL));
	CHECK(has_problem(exp, W, "line 5", "base=\"zz\"", "not a number", NULL));
	CHECK(has_problem(exp, W, "'map.xml'", "line 6", "cut off", NULL));
	CHECK(sonde_exp_find_object(exp, 0x3800, 7) == &o[1]);
	CHECK_U(sonde_exp_nerrors(exp), 0);
	sonde_exp_close(exp);
}

static void test_file_headers(void)
{
	group = "file headers";
	const struct {
		const char *what;
		off_t off;
		uint32_t value;
		const char *msg;
	} cases[] = {
		{ "magic", 0, 0x41414141, "not a sonde data file" },
		{ "version", 8, 99, "format version 99" },
		{ "old version", 8, 0, "format version 0" },
		{ "kind", 12, 3, "holds data kind 3" },
		{ "header size", 16, 12, "invalid header size 12" },
		{ "block size", 20, 7, "invalid block size 7" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char name[64];

		snprintf(name, sizeof(name), "hdr%zu.er", c);
		write_basic(name, 0);
		poke32(name, "profile", cases[c].off, cases[c].value);
		struct sonde_exp *exp = open_exp(name);

		CHECK(exp);
		if (!exp)
			continue;
		if (!has_problem(exp, E, "'profile'", cases[c].msg, NULL)) {
			printf("# %s:\n", cases[c].what);
			show_problems(exp);
		}
		CHECK(has_problem(exp, E, "'profile'", cases[c].msg, NULL));
		CHECK_U(sonde_exp_summary(exp)->samples, 0);
		CHECK_U(sonde_exp_summary(exp)->stacks, 3); /* other files still read */
		CHECK_U(sonde_exp_summary(exp)->overview_packets, 2);
		sonde_exp_close(exp);
	}

	/* A data file log.xml declares but that is missing is an error; one it
	 * does not declare is simply not collected. */
	write_basic("nodata.er", SONDE_EXPW_NO_DATA);
	struct sonde_exp *exp = open_exp("nodata.er");

	CHECK(exp && has_problem(exp, E, "'profile' is missing", NULL));
	CHECK(exp && has_problem(exp, E, "'stacks' is missing", NULL));
	sonde_exp_close(exp);

	struct sonde_expw *w = create("undeclared.er");

	sonde_expw_log(w, "<?xml version=\"1.0\"?>\n<experiment format=\"1\">\n");
	finish(w, SONDE_EXPW_NO_DATA | SONDE_EXPW_OPEN_LOG);
	exp = open_exp("undeclared.er");
	CHECK(exp);
	if (exp) {
		size_t n;

		sonde_exp_problems(exp, &n);
		CHECK_U(n, 0);
		CHECK_U(sonde_exp_nerrors(exp), 0);
		CHECK_U(sonde_exp_summary(exp)->samples, 0);
		CHECK_S(sonde_exp_info(exp)->end_source, "start");
		CHECK(sonde_exp_info(exp)->target.command == NULL);
		CHECK(sonde_exp_info(exp)->notes == NULL);
	}
	sonde_exp_close(exp);
}

static void test_log(void)
{
	group = "log.xml";
	struct sonde_expw *w = create("log.er");

	sonde_expw_log(w,
		       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		       "<experiment format=\"1\" collector=\"sonde 0.1.0\" later=\"yes\">\n"
		       "<target pid=\"42\" ppid=\"41\" cwd=\"/x &amp; y\" exe=\"/abs/prog\" "
		       "command=\"./prog &quot;a b&quot; &lt;in &gt;out\"/>\n"
		       "<system host=\"vm\" cpus=\"two\"/><newthing a=\"b\"/>\n"
		       "<time start_ns=\"500\" realtime=\"1763700000.25\"/>\n"
		       "<event kind=\"start\" time_ns=\"500\"/>\n"
		       "<event kind=\"teleport\" time_ns=\"600\"/>\n"
		       "<event kind=\"signal\" time_ns=\"900\" signal=\"9\" name=\"SIGKILL\"/>\n"
		       "<event kind=\"warning\" time_ns=\"950\" te");
	finish(w, SONDE_EXPW_OPEN_LOG);

	struct sonde_exp *exp = open_exp("log.er");

	CHECK(exp);
	if (!exp)
		return;
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;

	CHECK_S(in->collector, "sonde 0.1.0");
	CHECK_S(in->target.command, "./prog \"a b\" <in >out");
	CHECK_S(in->target.cwd, "/x & y");
	CHECK_U(in->target.pid, 42);
	CHECK_S(in->system.host, "vm");
	CHECK_U(in->system.cpus, 0);
	CHECK(has_problem(exp, W, "cpus=\"two\"", "not a number", NULL));
	CHECK(has_problem(exp, W, "'log.xml'", "line 9", "cut off", NULL));
	CHECK(!in->log_complete);
	CHECK_U(in->start_ns, 500);
	CHECK_U(in->realtime_nsec, 250000000);
	CHECK(in->exit_event && in->exit_event->kind == SONDE_EV_SIGNAL &&
	      in->exit_event->signal == 9);
	CHECK_S(in->exit_event ? in->exit_event->signame : NULL, "SIGKILL");
	CHECK_S(in->end_source, "signal");
	CHECK_U(in->end_ns, 900);
	CHECK(in->end_event == NULL);

	const struct sonde_event *ev = sonde_exp_events(exp, &n);

	CHECK_U(n, 3);
	CHECK(n == 3 && ev[1].kind == SONDE_EV_OTHER && !strcmp(ev[1].kind_name, "teleport"));
	CHECK_U(sonde_exp_nerrors(exp), 0);
	sonde_exp_close(exp);
}

static void test_not_experiment(void)
{
	group = "not an experiment";
	char err[512];
	struct sonde_exp *exp;

	err[0] = 'x';
	exp = sonde_exp_open(path("missing.er"), err, sizeof(err));
	CHECK(!exp && strstr(err, "missing.er") && strstr(err, "No such file"));

	write_text("", "plainfile", "hello\n");
	exp = sonde_exp_open(path("plainfile"), err, sizeof(err));
	CHECK(!exp && strstr(err, "plainfile") && strstr(err, "not a sonde experiment"));

	mkdir(path("empty.er"), 0777);
	exp = sonde_exp_open(path("empty.er"), err, sizeof(err));
	CHECK(!exp && strstr(err, "empty.er") && strstr(err, "no log.xml"));

	mkdir(path("foreign.er"), 0777);
	write_text("foreign.er", "log.xml", "<?xml version=\"1.0\"?>\n<html><body/></html>\n");
	exp = sonde_exp_open(path("foreign.er"), err, sizeof(err));
	CHECK(!exp && strstr(err, "foreign.er") && strstr(err, "no <experiment>"));

	mkdir(path("binary.er"), 0777);
	write_text("binary.er", "log.xml", "\x7f" "ELF\x01\x02 garbage < and > more");
	exp = sonde_exp_open(path("binary.er"), err, sizeof(err));
	CHECK(!exp && strstr(err, "no <experiment>"));

	mkdir(path("future.er"), 0777);
	write_text("future.er", "log.xml", "<experiment format=\"2\">\n");
	exp = sonde_exp_open(path("future.er"), err, sizeof(err));
	CHECK(!exp && strstr(err, "future.er") && strstr(err, "format 2"));

	/* A tiny errlen is respected. */
	char small[8];

	memset(small, 'z', sizeof(small));
	exp = sonde_exp_open(path("empty.er"), small, 4);
	CHECK(!exp && strlen(small) == 3 && small[4] == 'z');
	CHECK(sonde_exp_open(path("empty.er"), NULL, 0) == NULL);
	sonde_exp_close(NULL);
}

/* ---- cleanup ----------------------------------------------------------- */

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_xml();
	test_basic();
	test_blocks();
	test_truncation();
	test_corruption();
	test_bad_weight();
	test_microstates();
	test_problem_cap();
	test_packets();
	test_heap_leaks();
	test_heap_heaptrack();
	test_heap_ties();
	test_heap_stopped_clock();
	test_exec_failed_many();
	test_heap_stream();
	test_missing_map();
	test_file_headers();
	test_log();
	test_not_experiment();

	if (getenv("SONDE_TEST_KEEP"))
		printf("# kept %s\n", tmpdir);
	else
		nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
