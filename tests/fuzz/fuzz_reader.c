/*
 * fuzz_reader: a fuzz target for the experiment reader (lib/reader/experiment.c)
 * and what sonde print and sonde agg do with what it reads: the metrics
 * engine (lib/model/metrics.c), every view (lib/views/view.c), the tracing views
 * (lib/views/view_trace.c) and leak matching (lib/reader/heapleaks.c), -header and
 * -dump (lib/views/view_header.c, view_dump.c), sonde export's formats
 * (lib/views/export*.c), the agg kinds profile, sync, heap and io
 * (lib/agg/dlang_events.c), and the HTML report (lib/views/report.c).
 *
 * An input is an experiment directory packed into one buffer: records of
 *
 *	u8 file (0 log.xml, 1 map.xml, 2 notes, 3 profile, 4 stacks,
 *	         5 overview, 6 synctrace, 7 heaptrace, 8 iotrace; taken
 *	         modulo 9, so inputs packed before the trace files keep
 *	         their meaning; 0xfe: counters), u32 length (little-endian),
 *	         bytes
 *
 * (a length past the end takes what is left), and a record whose file byte
 * is 0xff (AGG_RECORD) is not a file but a sonde agg program: the target
 * compiles it for the stdin kind (run over log.xml as input lines) and for
 * the kinds of the experiment (run over its events), so that agg's lexer,
 * parser, constant folding and evaluator see mutated programs too (deep
 * nesting, long chains, odd tokens).  The target writes the files
 * into a scratch directory, opens it with sonde_exp_open(), walks every
 * accessor and iterator (the traced events, their stacks and file names
 * included), builds a model of the samples' stacks (frames named by
 * address, so no symbol files are read) and runs each view in each print
 * mode into /dev/null; then the tracing views (whose stacks are named
 * with the symbol layer, which reads the objects map.xml lists), the
 * header and dumps, and an agg program over every traced kind (names
 * from the stand-in "object+0xoffset", no symbol files).
 *
 * Two ways to run it:
 *
 *   - libFuzzer: clang -fsanitize=fuzzer,address -DSONDE_LIBFUZZER ...
 *     (LLVMFuzzerTestOneInput below; seeds from `fuzz_reader -pack`).
 *   - standalone, no clang needed: fuzz_reader [-n ITER] [-seed N]
 *     [-crashes DIR] [-t SEC] EXPERIMENT...  packs the experiments as
 *     seeds (trace files without their all-zero tail of unused blocks),
 *     then mutates them (format-aware: packet size and type fields, block
 *     headers, depths, truncation, splices, XML text, and trace packets by
 *     their layout: fields of each type, the short heap packets' time
 *     offsets from their block's first_ns, the I/O file packet's name_len
 *     and NUL, addresses and stack ids shared between packets, runs of
 *     repeated packets) ITER times, running the target on each.  A crash,
 *     sanitizer report or hang (-t, default 10 s) saves the input under
 *     DIR (default .) as crash-N.bin and exits non-zero; `fuzz_reader -run
 *     FILE` replays one, `fuzz_reader -unpack FILE DIR` turns one back
 *     into a directory.  At the end it prints the executions and what the
 *     reader made of the inputs (opened, refused, with read errors, trace
 *     events read).
 *
 * Build: with libsonde.a (or the lib sources), -Ilib,
 * -lm -ldw -lelf -lz -ldeflate -lstdc++ (the symbol layer) -lcapstone (disassembly).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agg/dlang.h"
#include "reader/experiment.h"
#include "reader/exptree.h"
#include "model/metrics.h"
#include "model/profile.h"
#include "views/view.h"
#include "views/view_exp.h"
#include "views/export.h"
#include "views/report.h"

/* A model of every metric an experiment can give. */
static struct sonde_model *model_all(void)
{
	int n;
	const struct sonde_metric_def *d = sonde_profile_metrics(&n);

	return sonde_model_new(d, n);
}

#define NFILES 14
#define F_SYNC 6 /* the first trace file */
#define F_COUNTERS 9
/* File 9, the counters (-h), is packed with the file byte COUNTERS_RECORD,
 * the files that name frames of other kinds than native, kallsyms and
 * the Java method table (10, 11), with KALLSYMS_RECORD and METHODS_RECORD,
 * and the compiled Java code's scopes and loads (12, 13: jvm.inline, which
 * the reader turns SONDE_FRAME_JAVA_CODE frames into Java frames with,
 * and jvm.code) with JVMINLINE_RECORD and JVMCODE_RECORD: other bytes are
 * taken modulo 9 as before they existed, so that packed inputs
 * (tests/fuzz/regress/) keep their meaning. */
#define COUNTERS_RECORD 0xfe
#define KALLSYMS_RECORD 0xfd
#define METHODS_RECORD 0xfc
#define JVMINLINE_RECORD 0xfb
#define JVMCODE_RECORD 0xfa
static const char *const file_names[NFILES] = { "log.xml",  "map.xml",	 "notes",     "profile",
						"stacks",   "overview",	 "synctrace", "heaptrace",
						"iotrace",  "counters",	 "kallsyms",  "methods",
						"jvm.inline", "jvm.code" };
static const uint8_t file_records[NFILES] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, COUNTERS_RECORD, KALLSYMS_RECORD,
					      METHODS_RECORD, JVMINLINE_RECORD, JVMCODE_RECORD };

#define AGG_RECORD 0xff
static char *agg_src; /* the input's agg program, NUL-terminated, or NULL */
static size_t agg_srclen;

static uint64_t source_every = 20; /* the source views on every Nth opened input (-src) */
static uint64_t n_open;
/* What reads the objects' ELF files (the symbol layer: sonde print's model,
 * -threads, the heap and I/O stack views) on every Nth opened input (-sym;
 * default every one): it is most of an execution's cost. */
static uint64_t symbols_every = 1;

static bool symbols_now(void)
{
	return (n_open - 1) % symbols_every == 0;
}

/* Print modes each view runs in per input (-modes): NMODES, every mode
 * (the default, and libFuzzer's); 1, one mode per input, taking turns,
 * with one kind of -dump, so that a long run makes NMODES times the
 * executions.  Printing is most of an execution's cost after the symbol
 * layer. */
#define NMODES (SONDE_PM_HTML - SONDE_PM_TEXT + 1)
static int modes_per_input = NMODES;

static bool mode_now(int mode)
{
	return modes_per_input == NMODES || (uint64_t)(mode - SONDE_PM_TEXT) == n_open % NMODES;
}
static char scratch[256];
static uint64_t n_refused, n_damaged, n_samples, n_traced;

static int ensure_scratch(void)
{
	if (scratch[0])
		return 0;
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	snprintf(scratch, sizeof(scratch), "%s/sonde-fuzz.%d", base, (int)getpid());
	if (mkdir(scratch, 0700) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static void remove_scratch(void)
{
	char p[512];

	if (!scratch[0])
		return;
	for (int i = 0; i < NFILES; i++) {
		snprintf(p, sizeof(p), "%s/%s", scratch, file_names[i]);
		unlink(p);
	}
	rmdir(scratch);
}

/* Writes the packed experiment into the scratch directory. */
static int unpack(const uint8_t *data, size_t size, const char *dir)
{
	char p[512];
	bool seen[NFILES] = { false };

	for (int i = 0; i < NFILES; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, file_names[i]);
		unlink(p);
	}
	free(agg_src);
	agg_src = NULL;
	agg_srclen = 0;
	while (size >= 5) {
		unsigned id = data[0] == COUNTERS_RECORD   ? F_COUNTERS
			      : data[0] == KALLSYMS_RECORD ? F_COUNTERS + 1
			      : data[0] == METHODS_RECORD  ? F_COUNTERS + 2
			      : data[0] == JVMINLINE_RECORD ? F_COUNTERS + 3
			      : data[0] == JVMCODE_RECORD  ? F_COUNTERS + 4
							   : data[0] % F_COUNTERS;
		uint32_t len = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
			       (uint32_t)data[4] << 24;

		data += 5;
		size -= 5;
		if (len > size)
			len = (uint32_t)size;
		if (data[-5] == AGG_RECORD) {
			free(agg_src);
			agg_src = malloc((size_t)len + 1);
			if (!agg_src)
				return -1;
			memcpy(agg_src, data, len);
			agg_src[len] = '\0';
			agg_srclen = len;
			data += len;
			size -= len;
			continue;
		}
		snprintf(p, sizeof(p), "%s/%s", dir, file_names[id]);
		int fd = open(p, O_WRONLY | O_CREAT | (seen[id] ? O_APPEND : O_TRUNC), 0600);

		if (fd < 0)
			return -1;
		seen[id] = true;
		size_t off = 0;

		while (off < len) {
			ssize_t w = write(fd, data + off, len - off);

			if (w <= 0) {
				close(fd);
				return -1;
			}
			off += (size_t)w;
		}
		close(fd);
		data += len;
		size -= len;
	}
	return 0;
}

/* ---- the target ------------------------------------------------------------- */

static FILE *devnull;

static void run_views(const struct sonde_model *m)
{
	struct sonde_view_opts o;
	char err[256];

	sonde_view_opts_init(&o);
	for (int mode = SONDE_PM_TEXT; mode <= SONDE_PM_HTML; mode++) {
		if (!mode_now(mode))
			continue;
		o.mode = (enum sonde_printmode)mode;
		o.limit = mode == SONDE_PM_TEXT ? 0 : 50;
		sonde_view_functions(devnull, m, &o, err, sizeof(err));
		sonde_view_objects(devnull, m, &o, err, sizeof(err));
		sonde_view_callers_callees(devnull, m, &o, UINT32_MAX, err, sizeof(err));
		sonde_view_calltree(devnull, m, &o, err, sizeof(err));
		if (sonde_model_nfuncs(m))
			sonde_view_fsingle(devnull, m, &o, 0, err, sizeof(err));
		sonde_view_metric_list(devnull, m, &o, err, sizeof(err));
		const struct sonde_model *two[2] = { m, m };
		const char *names[2] = { "a", "b" };

		o.compare = SONDE_CMP_RATIO;
		sonde_view_compare(devnull, two, names, 2, mode == SONDE_PM_CSV, &o, err, sizeof(err));
		o.compare = SONDE_CMP_OFF;
	}
}

/* A model of the samples: one function per distinct frame address
 * (bucketed, so that recursion and shared callers occur). */
static void model_of(const struct sonde_exp *exp)
{
	struct sonde_model *m = model_all();
	struct sonde_sample_iter it;
	struct sonde_sample s;
	uint32_t fr[SONDE_MAX_DEPTH_LIMIT + 1];
	size_t budget = 20000; /* samples modelled per input, to keep runs short */

	if (!m)
		return;
	sonde_sample_iter_init(&it, exp);
	while (budget-- && sonde_sample_iter_next(&it, &s)) {
		const struct sonde_stack *st = sonde_exp_stack(exp, s.stack_id);
		int64_t v[SONDE_MAX_METRICS] = { 0 };

		sonde_clock_values(&s, v);
		int d = 0;

		if (!st || !st->depth)
			continue;
		for (unsigned i = 0; i < st->depth && i < SONDE_MAX_DEPTH_LIMIT; i++) {
			uint64_t pc = st->frame[i].pc;
			const struct sonde_object *o =
				st->frame[i].kind == SONDE_FRAME_NATIVE ? sonde_exp_find_object(exp, pc, s.time_ns) : NULL;
			char name[64];
			uint32_t obj = sonde_model_object(m, o ? o->path : "<unknown>");

			snprintf(name, sizeof(name), "f%" PRIx64, (pc >> 4) & 0x3f);
			fr[d] = sonde_model_func(m, obj, (pc >> 4) & 0x3f, name, name, name, false);
			if (fr[d] != UINT32_MAX)
				d++;
		}
		if (d)
			sonde_model_add(m, fr, d, v);
	}
	if (sonde_model_finish(m) == 0)
		run_views(m);
	sonde_model_free(m);
}

/* -lines, -pcs, -source and -disasm (which read the objects and source
 * files map.xml and the line tables name), in one print mode per input,
 * taking turns: they are the slow ones. */
static void run_source_views(struct sonde_profile *p)
{
	static unsigned rot;
	struct sonde_view_opts o;
	char err[256];
	uint32_t nf = sonde_model_nfuncs(p->model);

	sonde_view_opts_init(&o);
	o.mode = (enum sonde_printmode)(SONDE_PM_TEXT + rot++ % NMODES);
	o.limit = 20;
	sonde_view_lines(devnull, p, &o, err, sizeof(err));
	sonde_view_pcs(devnull, p, &o, err, sizeof(err));
	for (uint32_t f = 0; f < nf && f < 2; f++) {
		sonde_view_source(devnull, p, &o, f, NULL, err, sizeof(err));
		sonde_view_disasm(devnull, p, &o, f, err, sizeof(err));
	}
	sonde_view_source(devnull, p, &o, UINT32_MAX, "burn.c", err, sizeof(err));
}

/* The HTML report (lib/views/report.c): its own build of the profile with
 * the per-event hook, the time cells, -header, the trace views, and
 * annotated source when sources (as often as the source views); a
 * small cell budget, so that the cells are merged too. */
static void run_report(const struct sonde_exp *exp, bool sources)
{
	struct sonde_report_opts o;
	char err[256];
	uint32_t g = 0;
	const char *name = "fuzz.er";

	sonde_report_opts_init(&o);
	o.sources = sources ? 1 : 0;
	o.max_cells = 64;
	sonde_report_write(devnull, &exp, &name, &g, 1, &name, 1, &o, NULL, NULL, err, sizeof(err));
}

/* sonde export's writers (lib/views/export*.c), into /dev/null: each
 * builds a profile of its own (the symbol layer again), so one writer per
 * opened input, taking turns through the formats and three ways of
 * running them: the default metric at full resolution, binned (a budget
 * of 50 units), and the heap's leaked bytes (refused when not recorded);
 * -run: every format every way. */
static bool replaying; /* -run FILE */

static void run_exports(const struct sonde_exp *exp, bool all)
{
	const struct sonde_exp *one[1] = { exp };
	struct sonde_export_opts o;
	char err[512];
	size_t nf = sonde_export_nformats, turn = (size_t)(n_open - 1);

	for (size_t i = 0; i < (all ? 3 * nf : 1); i++) {
		size_t t = all ? i : turn, k = t / nf % 3;

		sonde_export_opts_init(&o);
		o.metric = k == 2 ? "heapleakbytes" : NULL;
		o.max_units = k == 1 ? 50 : o.max_units;
		sonde_export_write(devnull, &sonde_export_formats[t % nf], one, 1, &o, err, sizeof(err));
	}
}

/* The model sonde print builds (lib/model/profile.c: symbols, the trace events'
 * metrics), its -threads view and the function list with every metric. */
static void profile_of(const struct sonde_exp *exp)
{
	struct sonde_profile p;
	struct sonde_profile_opts po = { 0 };
	struct sonde_view_opts o;
	char err[256];

	if (sonde_profile_build(&p, &exp, 1, &po, err, sizeof(err)) < 0)
		return;
	sonde_view_opts_init(&o);
	sonde_view_threads(devnull, &p, &o, err, sizeof(err));
	sonde_view_calltree_inverted(devnull, p.model, &o, err, sizeof(err));
	if (sonde_model_nfuncs(p.model) > 1) {
		uint32_t frag[2] = { 0, 1 };

		sonde_view_fragment(devnull, p.model, &o, frag, 1, err, sizeof(err));
		sonde_view_fragment(devnull, p.model, &o, frag, 2, err, sizeof(err));
	}
	if (sonde_mspec_parse(&o.metrics, "e.%totalcpu:e.sync:e.syncn:e.heapalloccnt:e.heapallocbytes:"
			      "e.heapleakcnt:e.heapleakbytes:i.ioreadbytes:i.iowritetime:i.ioerrorcnt:name",
			      err, sizeof(err)) == 0) {
		sonde_view_functions(devnull, p.model, &o, err, sizeof(err));
		o.mode = SONDE_PM_CSV;
		sonde_view_calltree(devnull, p.model, &o, err, sizeof(err));
	}
	/* They read DWARF and disassemble: 100 times the cost of the rest, so
	 * on the first opened input and then one in source_every (-run: on
	 * the one input). */
	bool sources = (n_open - 1) % source_every == 0;

	if (sources)
		run_source_views(&p);
	sonde_profile_release(&p);
	/* the slicing filters and index views: every CPU and second, the
	 * call-path filter on the entry point (a name every stack may hold) */
	po.index_cpus = po.index_seconds = true;
	po.cpu_select = "0-3,7";
	po.callpath_select = (n_open & 1) ? "main" : "_start>__libc_start_main";
	int built = sonde_profile_build(&p, &exp, 1, &po, err, sizeof(err));

	if (built < 0) { /* no such function in this input: without it */
		po.callpath_select = NULL;
		built = sonde_profile_build(&p, &exp, 1, &po, err, sizeof(err));
	}
	if (built == 0) {
		sonde_view_opts_init(&o);
		sonde_view_cpus(devnull, &p, &o, err, sizeof(err));
		sonde_view_seconds(devnull, &p, &o, err, sizeof(err));
		o.mode = SONDE_PM_JSON;
		sonde_view_cpus(devnull, &p, &o, err, sizeof(err));
		sonde_view_seconds(devnull, &p, &o, err, sizeof(err));
		sonde_profile_release(&p);
	}
	run_report(exp, sources);
}

/* A reader or matcher promise that the input broke: a bug, like a crash. */
#define INVARIANT(c)                                                                     \
	do {                                                                             \
		if (!(c)) {                                                              \
			fprintf(stderr, "fuzz_reader: invariant failed: %s (line %d)\n", #c, \
				__LINE__);                                               \
			abort();                                                         \
		}                                                                        \
	} while (0)

static uint64_t stack_sum(const struct sonde_exp *exp, uint64_t id)
{
	const struct sonde_stack *st = id ? sonde_exp_stack(exp, id) : NULL;
	uint64_t s = 0;

	if (!st)
		return 0;
	INVARIANT(st->depth <= SONDE_MAX_DEPTH_LIMIT);
	for (unsigned k = 0; k < st->depth; k++) {
		const struct sonde_frame *f = &st->frame[k];
		INVARIANT(!f->reserved[0] && !f->reserved[1]);
		/* the collector's frames in compiled code are the reader's
		 * to replace: none is handed out */
		INVARIANT(f->kind != SONDE_FRAME_JAVA_CODE && !f->own);
		/* a frame from the scopes is a Java one the reader made */
		INVARIANT(!f->scoped || (f->scoped == 1 && (f->kind == SONDE_FRAME_JAVA_INLINED ||
							     f->kind == SONDE_FRAME_JAVA_COMPILED ||
							     f->kind == SONDE_FRAME_JAVA_COMPILED_C1)));
		INVARIANT(st->frame[k].kind != SONDE_FRAME_NATIVE || !(st->frame[k].pc & SONDE_PC_EXACT));
		s += st->frame[k].pc + st->frame[k].kind + st->frame[k].aux + st->frame[k].exact;
	}
	return s + st->flags;
}

/* The traced events: every field, their stacks and files, time order, and
 * what leak matching makes of the heap events. */
static void walk_traces(const struct sonde_exp *exp)
{
	size_t n;
	volatile uint64_t sink = 0;
	const struct sonde_sync_event *se = sonde_exp_sync_events(exp, &n);

	INVARIANT(se || !n);
	for (size_t i = 0; i < n; i++) {
		INVARIANT(!i || se[i - 1].time_ns <= se[i].time_ns);
		sink += se[i].tid + se[i].func + (uint64_t)se[i].result + se[i].time_ns + se[i].wait_ns +
			se[i].object + stack_sum(exp, se[i].stack_id) + strlen(sonde_sync_func_name(se[i].func));
	}
	n_traced += n;

	/* The counters kind keeps its events to itself (lib/kinds/counters.c):
	 * counted here; the views, -dump counters and agg read them. */
	n_traced += sonde_exp_kind_events(exp, SONDE_KIND_COUNTERS);

	const struct sonde_heap_event *he = sonde_exp_heap_events(exp, &n);

	INVARIANT(he || !n);
	for (size_t i = 0; i < n; i++) {
		INVARIANT(!i || he[i - 1].time_ns <= he[i].time_ns);
		sink += he[i].tid + he[i].func + he[i].flags + he[i].time_ns + he[i].addr + he[i].bytes +
			stack_sum(exp, he[i].stack_id) + strlen(sonde_heap_func_name(he[i].func));
	}
	n_traced += n;
	if (n) {
		bool *leaked = malloc(n * sizeof(*leaked));
		struct sonde_heap_match m;
		long nl;

		if (leaked && (nl = sonde_heap_leaks(exp, leaked, &m)) >= 0) {
			uint64_t count = 0, bytes = 0, map_bytes = 0;

			for (size_t i = 0; i < n; i++)
				if (leaked[i]) {
					/* only successful allocations leak */
					INVARIANT((he[i].flags & SONDE_HEAPF_ALLOC) &&
						  !(he[i].flags & SONDE_HEAPF_FAILED));
					count++;
					if (he[i].func == SONDE_HEAP_MMAP || he[i].func == SONDE_HEAP_MREMAP)
						map_bytes += he[i].bytes;
					else
						bytes += he[i].bytes;
				}
			/* A block leaks whole; a mapping leaks what a partial
			 * munmap left of it, at least a byte. */
			INVARIANT((uint64_t)nl == count && m.leaks == count);
			INVARIANT(m.leaked_bytes >= bytes && m.leaked_bytes <= bytes + map_bytes);
			INVARIANT(map_bytes || m.leaked_bytes == bytes);
			INVARIANT(sonde_heap_leaks(exp, leaked, NULL) == nl);
		}
		free(leaked);
		/* heaptrack's views: what is live at the peak adds up to it,
		 * and only successful allocations are temporary */
		uint64_t *left = malloc(n * sizeof(*left));
		bool *temp = malloc(n * sizeof(*temp));
		long nt;

		if (left && sonde_heap_peak_left(exp, left, &m) == 0) {
			uint64_t sum = 0;

			for (size_t i = 0; i < n; i++)
				sum += left[i];
			INVARIANT(sum == m.peak_bytes);
		}
		if (temp && (nt = sonde_heap_temporary(exp, temp)) >= 0) {
			long count = 0;

			for (size_t i = 0; i < n; i++)
				if (temp[i]) {
					INVARIANT((he[i].flags & SONDE_HEAPF_ALLOC) &&
						  !(he[i].flags & SONDE_HEAPF_FAILED));
					count++;
				}
			INVARIANT(count == nt);
		}
		free(left);
		free(temp);
	}

	const struct sonde_io_event *ie = sonde_exp_io_events(exp, &n);

	INVARIANT(ie || !n);
	for (size_t i = 0; i < n; i++) {
		const char *f = sonde_exp_io_file(exp, ie[i].file_id);

		INVARIANT(!i || ie[i - 1].time_ns <= ie[i].time_ns);
		sink += ie[i].tid + ie[i].func + ie[i].flags + (uint64_t)ie[i].fd + (uint64_t)ie[i].err +
			ie[i].time_ns + ie[i].dur_ns + (uint64_t)ie[i].bytes + ie[i].file_id +
			stack_sum(exp, ie[i].stack_id) + (f ? strlen(f) : 0) +
			strlen(sonde_io_func_name(ie[i].func));
	}
	n_traced += n;
	INVARIANT(!sonde_exp_io_file(exp, 0));
	sonde_exp_io_file(exp, UINT64_MAX);

	/* MPI: calls and messages by time, every field read, the peers as
	 * the reader checked them, the traffic of each call summed back to
	 * the messages */
	size_t nc, nm;
	const struct sonde_mpi_call *mc = sonde_exp_mpi_calls(exp, &nc);
	const struct sonde_mpi_msg *mm = sonde_exp_mpi_msgs(exp, &nm);
	const struct sonde_mpi_job *job = sonde_exp_mpi_job(exp);
	char pb[16];

	INVARIANT((mc || !nc) && (mm || !nm));
	INVARIANT(!(nc || nm) || job);
	for (size_t i = 0; i < nc; i++) {
		INVARIANT(!i || mc[i - 1].time_ns <= mc[i].time_ns);
		INVARIANT(mc[i].func && mc[i].peer >= SONDE_MPI_PROC_NULL);
		sink += mc[i].tid + mc[i].flags + (uint64_t)mc[i].tag + mc[i].comm + mc[i].dur_ns + mc[i].coll_bytes +
			stack_sum(exp, mc[i].stack_id) + strlen(sonde_mpi_func_name(mc[i].func)) +
			strlen(sonde_mpi_peer_name(mc[i].peer, pb));
	}
	uint64_t msgbytes = 0;

	for (size_t j = 0; j < nm; j++) {
		INVARIANT(!j || mm[j - 1].time_ns <= mm[j].time_ns);
		INVARIANT(mm[j].dir == SONDE_MPI_SEND || mm[j].dir == SONDE_MPI_RECV);
		INVARIANT(mm[j].peer >= 0 || mm[j].peer == SONDE_MPI_PROC_NULL);
		sink += mm[j].tid + mm[j].func + (uint64_t)mm[j].tag + mm[j].comm + stack_sum(exp, mm[j].stack_id);
		msgbytes += mm[j].bytes;
	}
	struct sonde_mpi_traffic *tr = nc ? malloc(nc * sizeof(*tr)) : NULL;

	if (tr && sonde_exp_mpi_traffic(exp, tr) == 0) {
		uint64_t moved = 0, msgs = 0;

		for (size_t i = 0; i < nc; i++) {
			moved += tr[i].sent + tr[i].received;
			msgs += tr[i].sends + tr[i].recvs;
		}
		INVARIANT(msgs <= nm); /* a message names one call at most */
		INVARIANT(msgs < nm || moved == msgbytes);
	}
	free(tr);
	if (job)
		sink += (uint64_t)job->rank + (uint64_t)job->size + (job->abi ? strlen(job->abi) : 0) +
			(job->library ? strlen(job->library) : 0);
	for (int k = -1; k <= SONDE_KIND_MAX + 2; k++)
		sink += sonde_exp_traced(exp, k);
	(void)sink;
}

/* The tracing views: each kind's check, one experiment and the same one
 * twice (groups per experiment, files merged by name), every mode. */
static void run_trace_views(const struct sonde_exp *exp)
{
	static unsigned rot;
	const struct sonde_exp *two[2] = { exp, exp };
	const char *names[2] = { "a.er", NULL };
	struct sonde_view_opts o;
	char err[256];

	sonde_view_opts_init(&o);
	rot++;
	for (size_t ne = 1; ne <= 2; ne++) {
		for (int k = SONDE_KIND_PROFILE; k <= SONDE_KIND_MAX + 1; k++)
			sonde_view_trace_check(two, names, ne, k, err, sizeof(err));
		for (int mode = SONDE_PM_TEXT; mode <= SONDE_PM_HTML; mode++) {
			if (!mode_now(mode))
				continue;
			o.mode = (enum sonde_printmode)mode;
			o.limit = mode == SONDE_PM_TEXT ? 0 : mode == SONDE_PM_CSV ? 1 : 3;
			o.names = (enum sonde_namefmt)(mode % 3);
			sonde_view_heapstat(devnull, two, ne, &o, err, sizeof(err));
			sonde_view_heap_timeline(devnull, two, ne, &o, err, sizeof(err));
			sonde_view_io(devnull, two, ne, &o, err, sizeof(err));
			sonde_view_iodetail(devnull, two, ne, &o, err, sizeof(err));
			sonde_view_iostat(devnull, two, ne, &o, err, sizeof(err));
			sonde_view_sync(devnull, two, ne, &o, err, sizeof(err));
			sonde_view_mpi(devnull, two, ne, &o, err, sizeof(err));
			/* These name stacks with the symbol layer (slower): in
			 * one mode per input, taking turns. */
			if ((modes_per_input == 1 || mode == (int)((rot + ne) % NMODES)) && symbols_now()) {
				sonde_view_heap_stacks(devnull, two, ne, true, &o, err, sizeof(err));
				sonde_view_heap_stacks(devnull, two, ne, false, &o, err, sizeof(err));
				sonde_view_heap_peak(devnull, two, ne, &o, err, sizeof(err));
				sonde_view_heap_temporary(devnull, two, ne, &o, err, sizeof(err));
				sonde_view_iostacks(devnull, two, ne, &o, err, sizeof(err));
				/* -ranks outside a tree: ranks by their log.xml */
				struct sonde_exp_tree t;

				sonde_exp_tree_init(&t);
				struct sonde_exp_set set = { &t, two, ne };

				sonde_view_ranks(devnull, &set, &o, err, sizeof(err));
			}
		}
	}
}

/* sonde print -header (text, csv, json) and every -dump. */
static void run_header(const struct sonde_exp *exp)
{
	const struct sonde_exp *one[1] = { exp };
	struct sonde_view_opts o;
	char err[512];

	sonde_view_opts_init(&o);
	for (int pm = SONDE_PM_TEXT; pm <= SONDE_PM_HTML; pm++) {
		o.mode = (enum sonde_printmode)pm;
		sonde_view_header(devnull, one, 1, &o);
	}
	for (int k = 0; k < SONDE_DUMP_NKINDS; k++)
		if (modes_per_input == NMODES || (uint64_t)k == n_open % SONDE_DUMP_NKINDS)
			sonde_view_dump(devnull, exp, (enum sonde_dump_kind)k, err, sizeof(err));
}

/* sonde agg with clauses for each kind the experiment has, every field. */
/* The profile's events, then each traced kind's, as sonde agg feeds them. */
static int64_t run_kinds(struct sonde_dl_prog *p, const struct sonde_exp *exp, char *err, size_t errlen)
{
	int64_t n = sonde_dl_run_profile(p, exp, NULL, NULL, err, errlen);

	for (int id = 1; n >= 0 && id <= SONDE_KIND_MAX; id++)
		n = sonde_dl_run_kind(p, id, exp, NULL, NULL, err, errlen);
	return n;
}

static void run_agg(const struct sonde_exp *exp)
{
	static const char *const progs[] = {
		"profile { @p[func, caller, object] = count(); @pw = quantize(weight); @pd[thread] = max(depth); }\n",
		"sync { @s[object, syncfunc, result] = sum(wait); @sq = llquantize(wait, 10, 0, 9, 10);\n"
		"  @sf[func, caller] = count(); @st[tid] = min(time); }\n"
		"sync /wait > 1000 && result != 0/ { @sl = lquantize(wait / 1000, 0, 100, 10); }\n",
		"heap { @h[heapfunc, event, leaked] = sum(size); @hq = quantize(size); @ha = max(addr);\n"
		"  @hf[func, caller] = stddev(size); @ht[tid] = avg(time); }\n"
		"heap /leaked/ { @hl[func] = count(); }\n",
		"io { @i[file, iofunc, err] = sum(bytes); @iq = quantize(dur); @if[fd] = count();\n"
		"  @ic[func, caller] = avg(bytes); @it[tid] = max(time); }\n"
		"io /bytes < 0 || dur < 0/ { @ineg = count(); }\n",
		"mpi { @m[mpifunc, class, dir, comm] = sum(dur); @mq[peer] = quantize(bytes); @mt[tag] = count();\n"
		"  @ms = sum(sent + received - collbytes); @mc[func, caller] = max(sends + recvs); @mt2[tid] = min(time); }\n"
		"mpi /error || dir == \"none\"/ { @mo = count(); }\n",
	};
	/* progs[1], [2], [3], [4]: the programs of these kinds */
	static const int traced[] = { SONDE_KIND_SYNC, SONDE_KIND_HEAP, SONDE_KIND_IO, SONDE_KIND_MPI };
	const struct sonde_dl_kind *kinds[SONDE_KIND_MAX + 1] = { &sonde_dl_kind_profile };
	size_t nk = 1;
	char src[2048], err[256];
	struct sonde_dl_error e;

	snprintf(src, sizeof(src), "%s", progs[0]);
	for (size_t i = 0; i < sizeof(traced) / sizeof(traced[0]); i++)
		if (sonde_exp_traced(exp, traced[i])) {
			kinds[nk++] = sonde_dl_kind_of(traced[i]);
			strcat(src, progs[1 + i]);
		}
	struct sonde_dl_prog *p = sonde_dl_compile(src, kinds, nk, NULL, &e);

	INVARIANT(p); /* a valid program for the kinds the experiment has */
	if (sonde_dl_begin(p, devnull, err, sizeof(err)) == 0 && run_kinds(p, exp, err, sizeof(err)) >= 0)
		sonde_dl_end(p, devnull, err, sizeof(err));
	sonde_dl_problems(p, err, sizeof(err));
	sonde_dl_free(p);

	/* the input's own program, for the kinds this experiment has */
	if (agg_src && (p = sonde_dl_compile(agg_src, kinds, nk, NULL, &e))) {
		if (sonde_dl_begin(p, devnull, err, sizeof(err)) == 0 && run_kinds(p, exp, err, sizeof(err)) >= 0)
			sonde_dl_end(p, devnull, err, sizeof(err));
		sonde_dl_problems(p, err, sizeof(err));
		sonde_dl_free(p);
	}
}

/* The input's agg program as sonde agg runs it without an experiment: the
 * stdin kind, over the input's log.xml as lines of fields. */
static void run_agg_stdin(void)
{
	const struct sonde_dl_kind *k[1] = { &sonde_dl_kind_stdin };
	struct sonde_dl_error e;
	char err[256], path[512];

	if (!agg_src)
		return;
	struct sonde_dl_prog *p = sonde_dl_compile(agg_src, k, 1, NULL, &e);

	if (!p)
		return;
	snprintf(path, sizeof(path), "%s/log.xml", scratch);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (sonde_dl_begin(p, devnull, err, sizeof(err)) == 0 &&
	    (fd < 0 || sonde_dl_run_stdin(p, fd, err, sizeof(err)) >= 0))
		sonde_dl_end(p, devnull, err, sizeof(err));
	if (fd >= 0)
		close(fd);
	sonde_dl_problems(p, err, sizeof(err));
	sonde_dl_free(p);
}

static void walk(const struct sonde_exp *exp)
{
	size_t n;
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	volatile uint64_t sink = 0;

	sink += in->start_ns + in->end_ns + (in->notes ? strlen(in->notes) : 0);
	const struct sonde_event *ev = sonde_exp_events(exp, &n);

	for (size_t i = 0; i < n; i++)
		sink += ev[i].time_ns + (ev[i].text ? strlen(ev[i].text) : 0) + strlen(ev[i].kind_name);
	sonde_exp_packet_descs(exp, &n);
	sonde_exp_files(exp, &n);
	const struct sonde_problem *p = sonde_exp_problems(exp, &n);

	for (size_t i = 0; i < n; i++)
		sink += strlen(p[i].msg);
	const struct sonde_object *ob = sonde_exp_objects(exp, &n);

	for (size_t i = 0; i < n; i++) {
		sink += strlen(ob[i].path) + strlen(ob[i].name);
		sonde_exp_find_object(exp, ob[i].lo, ob[i].load_ns);
		sonde_exp_find_object(exp, ob[i].hi - 1, SONDE_TIME_NEVER);
	}
	const struct sonde_stack *st = sonde_exp_stacks(exp, &n);

	for (size_t i = 0; i < n; i++)
		for (unsigned k = 0; k < st[i].depth; k++)
			sink += st[i].frame[k].pc;
	sonde_exp_summary(exp);
	sonde_exp_threads(exp, &n);
	const struct sonde_overview_packet *ov = sonde_exp_overview(exp, &n);

	for (size_t i = 0; i < n; i++)
		sink += ov[i].utime_ns;
	struct sonde_sample_iter it;
	struct sonde_sample s;

	sonde_sample_iter_init(&it, exp);
	while (sonde_sample_iter_next(&it, &s)) {
		sink += s.weight_ns;
		n_samples++;
	}
	(void)sink;
	if (sonde_exp_nerrors(exp))
		n_damaged++;
	const struct sonde_exp *one[1] = { exp };
	struct sonde_view_opts o;
	char err[256];

	sonde_view_opts_init(&o);
	sonde_view_statistics(devnull, one, 1, &o, err, sizeof(err));
	for (int mode = SONDE_PM_TEXT; mode <= SONDE_PM_HTML; mode++) {
		if (!mode_now(mode))
			continue;
		o.mode = (enum sonde_printmode)mode;
		sonde_view_samples(devnull, one, 1, &o, err, sizeof(err));
		sonde_view_overview(devnull, one, 1, &o, err, sizeof(err));
	}
	sonde_view_opts_init(&o);
	model_of(exp);
	if (symbols_now()) {
		profile_of(exp);
		run_exports(exp, replaying);
	}
	walk_traces(exp);
	run_trace_views(exp);
	run_header(exp);
	run_agg(exp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (ensure_scratch() < 0 || unpack(data, size, scratch) < 0)
		return 0;
	run_agg_stdin();
	struct sonde_exp *exp = sonde_exp_open(scratch, err, sizeof(err));

	if (!exp) {
		n_refused++;
		return 0;
	}
	n_open++;
	walk(exp);
	sonde_exp_close(exp);
	return 0;
}

#ifndef SONDE_LIBFUZZER
/* ---- the standalone driver ------------------------------------------------------ */

struct input {
	uint8_t *f[NFILES];
	size_t len[NFILES];
	bool present[NFILES];
	char *prog; /* an agg program (AGG_RECORD), or NULL */
	size_t proglen;
};

static uint64_t rs;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

static void input_free(struct input *in)
{
	for (int i = 0; i < NFILES; i++)
		free(in->f[i]);
	free(in->prog);
	memset(in, 0, sizeof(*in));
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int input_load(struct input *in, const char *dir)
{
	char p[1024];

	memset(in, 0, sizeof(*in));
	for (int i = 0; i < NFILES; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, file_names[i]);
		FILE *f = fopen(p, "rb");

		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		long n = ftell(f);

		fseek(f, 0, SEEK_SET);
		in->f[i] = malloc(n > 0 ? (size_t)n : 1);
		if (!in->f[i] || (n > 0 && fread(in->f[i], 1, (size_t)n, f) != (size_t)n)) {
			fclose(f);
			return -1;
		}
		in->len[i] = (size_t)n;
		in->present[i] = true;
		fclose(f);
		/* Trace files are preallocated: drop their all-zero tail at a
		 * block boundary (the reader sees no difference), so that
		 * mutations land on packets. */
		while (i >= F_SYNC && i <= F_COUNTERS && in->len[i] > SONDE_FILE_HEADER_SIZE) {
			size_t tail = (in->len[i] - SONDE_FILE_HEADER_SIZE) % SONDE_BLOCK_SIZE;

			if (!tail)
				tail = SONDE_BLOCK_SIZE;
			if (!all_zero(in->f[i] + in->len[i] - tail, tail))
				break;
			in->len[i] -= tail;
		}
	}
	return in->present[0] ? 0 : -1;
}

static void input_copy(struct input *d, const struct input *s)
{
	memset(d, 0, sizeof(*d));
	for (int i = 0; i < NFILES; i++) {
		d->present[i] = s->present[i];
		d->len[i] = s->len[i];
		d->f[i] = malloc(s->len[i] ? s->len[i] : 1);
		if (d->f[i] && s->len[i])
			memcpy(d->f[i], s->f[i], s->len[i]);
	}
	if (s->prog && (d->prog = malloc(s->proglen + 1))) {
		memcpy(d->prog, s->prog, s->proglen + 1);
		d->proglen = s->proglen;
	}
}

/* Packs an input; *size gets the length; NULL when out of memory. */
static uint8_t *pack(const struct input *in, size_t *size)
{
	size_t n = 0;

	for (int i = 0; i < NFILES; i++)
		if (in->present[i])
			n += 5 + in->len[i];
	if (in->prog)
		n += 5 + in->proglen;
	uint8_t *b = malloc(n ? n : 1), *p = b;

	if (!b)
		return NULL;
	for (int i = 0; i < NFILES; i++) {
		if (!in->present[i])
			continue;
		uint32_t l = (uint32_t)in->len[i];

		*p++ = file_records[i];
		memcpy(p, &l, 4);
		p += 4;
		memcpy(p, in->f[i], in->len[i]);
		p += in->len[i];
	}
	if (in->prog) {
		uint32_t l = (uint32_t)in->proglen;

		*p++ = AGG_RECORD;
		memcpy(p, &l, 4);
		p += 4;
		memcpy(p, in->prog, in->proglen);
	}
	*size = n;
	return b;
}

static void set_len(struct input *in, int f, size_t len)
{
	if (len > in->len[f]) {
		uint8_t *n = realloc(in->f[f], len);

		if (!n)
			return;
		memset(n + in->len[f], 0, len - in->len[f]);
		in->f[f] = n;
	}
	in->len[f] = len;
}

static const uint64_t interesting[] = { 0, 1, 2, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256,
					4095, 4096, 16383, 16384, 16385, 32767, 32768, 65535, 65536,
					0x7fffffff, 0x80000000, 0xffffffff, UINT64_MAX,
					0x7fffffffffffffffull, SONDE_PC_EXACT };

/* An offset where a packet or block field is likely: the file header,
 * block headers (every 16 KiB after it) and 8-byte packet boundaries. */
static size_t field_offset(size_t len)
{
	if (!len)
		return 0;
	switch (below(4)) {
	case 0: /* the file header */
		return below(len < SONDE_FILE_HEADER_SIZE ? len : SONDE_FILE_HEADER_SIZE);
	case 1: { /* a block header */
		size_t nb = len > SONDE_FILE_HEADER_SIZE ? (len - SONDE_FILE_HEADER_SIZE) / SONDE_BLOCK_SIZE + 1 : 1;
		size_t off = SONDE_FILE_HEADER_SIZE + below(nb) * SONDE_BLOCK_SIZE + below(32);

		return off < len ? off : below(len);
	}
	default: /* a packet field: 8-aligned, plus 0, 2, 4 or 6 */
		return (below(len) & ~(size_t)7) + 2 * below(4);
	}
}

static void mutate_xml(struct input *in, int f)
{
	static const char *const tokens[] = { "<", ">", "\"", "=", "/>", "</experiment>", "<event ",
					      "kind=\"end\"", "time_ns=\"", "18446744073709551615",
					      "99999999999999999999999", "-1", "&amp;", "&#0;", "\n",
					      "<object ", "path=\"/dev/null\"", "id=\"4294967295\"",
					      "lo=\"0xffffffffffffffff\"", "<packet ", "size=\"0\"",
					      "fields=\"type:0:u16 size:2:u16\"", "format=\"99\"",
					      "<trace kind=\"sync\" mode=\"all\" threshold_ns=\"",
					      "<trace kind=\"heap\" mode=\"on\"/>\n", "<trace kind=\"io\"/>\n",
					      "<dataformat file=\"iotrace\" kind=\"6\" block_size=\"16384\"/>\n",
					      "mode=\"", "\"on\"", "threshold_ns=\"", "" };
	size_t len = in->len[f];
	size_t at = below(len + 1);

	switch (below(3)) {
	case 0: { /* insert a token */
		const char *t = tokens[below(sizeof(tokens) / sizeof(tokens[0]))];
		size_t tl = strlen(t);

		set_len(in, f, len + tl);
		memmove(in->f[f] + at + tl, in->f[f] + at, len - at);
		memcpy(in->f[f] + at, t, tl);
		break;
	}
	case 1: /* delete a run */
		if (len) {
			size_t n = 1 + below(len - at < 64 ? len - at + 1 : 64);

			if (at + n > len)
				n = len - at;
			memmove(in->f[f] + at, in->f[f] + at + n, len - at - n);
			in->len[f] -= n;
		}
		break;
	default: /* replace a digit or a byte */
		if (len && at < len)
			in->f[f][at] = (uint8_t)("0123456789x-\"<>\0"[below(16)]);
		break;
	}
}

/* ---- trace packets, by their layout ---- */

/* A field of a trace packet: offset, width in bytes, what it holds. */
enum fkind { FK_NUM, FK_TIME, FK_DT, FK_ADDR, FK_STACK, FK_FUNC, FK_FLAGS, FK_FILE, FK_NAMELEN };
struct tfield {
	uint8_t off, w, kind;
};
struct tlayout {
	uint16_t type, size; /* the writer's size */
	struct tfield f[10];
	int nf;
};
static const struct tlayout tlayouts[] = {
	{ SONDE_PKT_SYNC, 48,
	  { { 4, 2, FK_FUNC }, { 8, 4, FK_NUM }, { 16, 8, FK_TIME }, { 24, 8, FK_NUM }, { 32, 8, FK_ADDR },
	    { 40, 8, FK_STACK } }, 6 },
	{ SONDE_PKT_HEAP, 40,
	  { { 4, 1, FK_FUNC }, { 5, 1, FK_FLAGS }, { 8, 8, FK_TIME }, { 16, 8, FK_ADDR }, { 24, 8, FK_NUM },
	    { 32, 8, FK_STACK } }, 6 },
	{ SONDE_PKT_HEAP_FREE, 24, { { 4, 1, FK_FUNC }, { 5, 1, FK_FLAGS }, { 8, 8, FK_TIME }, { 16, 8, FK_ADDR } }, 4 },
	{ SONDE_PKT_IO, 56,
	  { { 4, 1, FK_FUNC }, { 5, 1, FK_FLAGS }, { 8, 4, FK_NUM }, { 12, 4, FK_NUM }, { 16, 8, FK_TIME },
	    { 24, 8, FK_NUM }, { 32, 8, FK_NUM }, { 40, 8, FK_FILE }, { 48, 8, FK_STACK } }, 9 },
	{ SONDE_PKT_IO_FILE, 24, { { 4, 4, FK_NAMELEN }, { 8, 8, FK_FILE }, { 16, 8, FK_TIME } }, 3 },
	{ SONDE_PKT_HEAP_SHORT, 32,
	  { { 4, 1, FK_FUNC }, { 5, 1, FK_FLAGS }, { 8, 4, FK_DT }, { 12, 4, FK_NUM }, { 16, 8, FK_ADDR },
	    { 24, 8, FK_STACK } }, 6 },
	{ SONDE_PKT_HEAP_FREE_SHORT, 16, { { 4, 4, FK_DT }, { 8, 8, FK_ADDR } }, 2 },
	/* the profile file's: a sample with microstates (state, weight,
	 * system, wait) and an off-CPU sample (state, syscall, tid) */
	{ SONDE_PKT_PROFILE, 48,
	  { { 4, 2, FK_NUM }, { 6, 2, FK_FUNC }, { 8, 8, FK_TIME }, { 16, 8, FK_NUM }, { 24, 8, FK_STACK },
	    { 32, 8, FK_NUM }, { 40, 8, FK_NUM } }, 7 },
	{ SONDE_PKT_OFFCPU, 40,
	  { { 4, 2, FK_FUNC }, { 6, 2, FK_NUM }, { 8, 4, FK_NUM }, { 16, 8, FK_TIME }, { 24, 8, FK_NUM },
	    { 32, 8, FK_STACK } }, 6 },
};
#define NTLAYOUTS (sizeof(tlayouts) / sizeof(tlayouts[0]))

static const struct tlayout *tlayout(unsigned type)
{
	for (size_t i = 0; i < NTLAYOUTS; i++)
		if (tlayouts[i].type == type)
			return &tlayouts[i];
	return NULL;
}

/* A packet found by walking a data file's blocks as the reader does. */
struct tpkt {
	size_t off, block; /* the packet's offset, its block header's offset */
	unsigned type, size;
};

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get_w(const uint8_t *p, int w)
{
	uint64_t v = 0;

	memcpy(&v, p, (size_t)w);
	return v;
}

/* Picks (reservoir sampling) up to two packets of file f, the second of
 * the same size as the first when same is set; returns how many there
 * are.  bsize gets the file's block size. */
static size_t pick_packets(const struct input *in, int f, struct tpkt *a, struct tpkt *b, bool same,
			   uint32_t *bsize)
{
	const uint8_t *d = in->f[f];
	size_t len = in->len[f], n = 0, nb = 0;
	uint32_t hs = SONDE_FILE_HEADER_SIZE, bs = SONDE_BLOCK_SIZE;

	if (len >= 64) {
		uint32_t h = get32(d + 16), s = get32(d + 20);

		if (h >= 64 && h % 8 == 0 && h <= (1u << 20))
			hs = h;
		if (s >= 40 && s % 8 == 0 && s <= (1u << 26))
			bs = s;
	}
	*bsize = bs;
	for (size_t bo = hs; bo + 32 <= len; bo += bs) {
		if (get32(d + bo) != SONDE_BLOCK_MAGIC)
			continue;
		uint32_t used = get32(d + bo + 12);
		size_t end = bo + 32 + (used < bs - 32 ? used : bs - 32);

		if (end > len)
			end = len;
		for (size_t p = bo + 32; p + 8 <= end;) {
			unsigned t = d[p] | d[p + 1] << 8, sz = d[p + 2] | d[p + 3] << 8;

			if (sz < 8 || sz % 8 || p + sz > end)
				break;
			struct tpkt k = { p, bo, t, sz };

			if (below(++n) == 0)
				*a = k;
			if (b && (!same || sz == a->size) && below(++nb) == 0)
				*b = k;
			p += sz;
		}
	}
	return n;
}

/* A stack id that "stacks" has (a stack packet's id or a frame node's),
 * or 0. */
static uint64_t some_stack_id(const struct input *in)
{
	struct tpkt a = { 0 };
	uint32_t bs;

	if (!in->present[4] || !pick_packets(in, 4, &a, NULL, false, &bs))
		return 0;
	if ((a.type == SONDE_PKT_STACK || a.type == SONDE_PKT_FRAME) && a.size >= 16)
		return get_w(in->f[4] + a.off + 8, 8);
	return 0;
}

static uint64_t field_value(const struct input *in, const uint8_t *pkt, const struct tfield *fd,
			    const struct tpkt *other, const uint8_t *data)
{
	uint64_t v = interesting[below(sizeof(interesting) / sizeof(interesting[0]))];
	uint64_t old = get_w(pkt + fd->off, fd->w);

	switch (below(4) ? fd->kind : FK_NUM) {
	case FK_FUNC:
		return below(4) ? below(50) : v;
	case FK_FLAGS:
		return below(4) ? below(8) : rnd();
	case FK_DT: /* around the block's first_ns, both ways */
		return below(2) ? (uint64_t)(int64_t)(int32_t)(uint32_t)rnd() : old + below(2000) - 1000;
	case FK_TIME: /* reorder: earlier, later, far away */
		return below(2) ? old + below(2000000) - 1000000 : below(2) ? v : rnd() >> below(64);
	case FK_STACK: {
		uint64_t id = some_stack_id(in);

		return below(4) && id ? id : below(2) ? 0 : v;
	}
	case FK_ADDR:
	case FK_FILE: /* the same address or file as another packet: matches */
		if (other && below(4) && other->size > fd->off + fd->w)
			return get_w(data + other->off + fd->off, fd->w);
		return below(2) ? old + 8 * below(16) : v;
	case FK_NAMELEN:
		return v;
	default:
		if (below(3) == 0)
			return old + below(5) - 2;
		return below(2) ? v : rnd();
	}
}

/* Fills what is left of a's block with copies of it, each with one field
 * stepped (distinct addresses, rising times): many events cheaply. */
static void fill_block(struct input *in, int f, const struct tpkt *a, uint32_t bs)
{
	uint8_t *d = in->f[f];
	uint32_t used = get32(d + a->block + 12);
	const struct tlayout *l = tlayout(a->type);
	size_t room = bs - 32 > used ? bs - 32 - used : 0;
	size_t at = a->block + 32 + used, k = room / a->size;
	const struct tfield *fd = l && l->nf ? &l->f[below((size_t)l->nf)] : NULL;
	uint64_t step = below(2) ? 1 + below(4096) : 0;

	if (!k)
		return;
	if (below(2) && k > 1)
		k = 1 + below(k);
	if (at + k * a->size > in->len[f])
		set_len(in, f, at + k * a->size);
	d = in->f[f];
	if (at + k * a->size > in->len[f])
		return;
	for (size_t i = 0; i < k; i++) {
		memcpy(d + at + i * a->size, d + a->off, a->size);
		if (fd && fd->off + fd->w <= a->size) {
			uint64_t v = get_w(d + a->off + fd->off, fd->w) + (i + 1) * step;

			memcpy(d + at + i * a->size + fd->off, &v, fd->w);
		}
	}
	used += (uint32_t)(k * a->size);
	memcpy(d + a->block + 12, &used, 4);
}

static void mutate_trace(struct input *in)
{
	int f = below(4) ? F_SYNC + (int)below(3) : 3; /* 3: the profile (samples, off-CPU samples) */

	for (int t = 0; t < 3 && (!in->present[f] || in->len[f] <= SONDE_FILE_HEADER_SIZE); t++)
		f = F_SYNC + (int)below(3);
	if (!in->present[f] || in->len[f] <= SONDE_FILE_HEADER_SIZE)
		return;

	struct tpkt a, b;
	uint32_t bs;
	bool same = below(4) == 0;

	if (!pick_packets(in, f, &a, &b, same, &bs))
		return;
	uint8_t *d = in->f[f], *pkt = d + a.off;
	const struct tlayout *l = tlayout(a.type);

	switch (below(10)) {
	case 0:
	case 1:
	case 2: { /* a field, by what it holds */
		if (!l)
			break;
		const struct tfield *fd = &l->f[below((size_t)l->nf)];

		if (fd->off + fd->w > a.size)
			break;
		uint64_t v = field_value(in, pkt, fd, &b, d);

		memcpy(pkt + fd->off, &v, fd->w);
		break;
	}
	case 3: { /* the I/O file packet's name: its length, NUL, bytes */
		if (a.type != SONDE_PKT_IO_FILE || a.size < 24)
			break;
		uint32_t nl = get32(pkt + 4), room = a.size - 24;
		static const char odd[] = "\n\"<>&\\\x01\x7f\xc3\xff;,% ";

		switch (below(5)) {
		case 0: /* at or past its room */
			nl = room - 1 + (uint32_t)below(3);
			memcpy(pkt + 4, &nl, 4);
			break;
		case 1:
			nl = (uint32_t)below(2) ? 0 : (uint32_t)interesting[below(sizeof(interesting) / 8)];
			memcpy(pkt + 4, &nl, 4);
			break;
		case 2: /* no NUL where it should be */
			if (nl < room)
				pkt[24 + nl] = 'A';
			break;
		case 3: /* odd bytes in the name (quotes, commas, newlines) */
			if (room)
				pkt[24 + below(nl < room ? nl + 1 : room)] = (uint8_t)odd[below(sizeof(odd) - 1)];
			break;
		default: /* the same file id as another packet, or 0 */
			if (below(2))
				memset(pkt + 8, 0, 8);
			else if (b.size >= 48 && b.type == SONDE_PKT_IO)
				memcpy(pkt + 8, d + b.off + 40, 8);
			break;
		}
		break;
	}
	case 4: { /* the type: another trace type, whose size may not fit */
		uint16_t t = (uint16_t)(below(4) ? tlayouts[below(NTLAYOUTS)].type : below(16));

		memcpy(pkt, &t, 2);
		if (below(2)) { /* and the size of that type, or a bit off */
			const struct tlayout *nl = tlayout(t);
			uint16_t sz = (uint16_t)(nl ? nl->size : 8 * (1 + below(8)));

			if (below(3) == 0)
				sz = (uint16_t)(sz + 8 * below(3) - 8);
			memcpy(pkt + 2, &sz, 2);
		}
		break;
	}
	case 5: /* the block header: first_ns (the short packets' base), tid, used */
		switch (below(3)) {
		case 0: {
			uint64_t v = below(2) ? get_w(d + a.block + 16, 8) + below(1u << 31) - (1u << 30)
					      : interesting[below(sizeof(interesting) / 8)];

			memcpy(d + a.block + 16, &v, 8);
			break;
		}
		case 1: {
			uint32_t v = below(2) ? (uint32_t)below(4) : (uint32_t)rnd();

			memcpy(d + a.block + 8, &v, 4);
			break;
		}
		default: { /* end the block at this packet, or inside it */
			uint32_t v = (uint32_t)(a.off - a.block - 32 + (below(2) ? 0 : 4 * below(a.size / 4 + 1)));

			memcpy(d + a.block + 12, &v, 4);
			break;
		}
		}
		break;
	case 6: /* copy a packet over another of the same size */
		if (b.size == a.size && b.off != a.off)
			memcpy(d + b.off, pkt, a.size);
		break;
	case 7: /* swap two packets' times (out of order in one block) */
		if (l && b.type == a.type && b.off != a.off) {
			for (int k = 0; k < l->nf; k++)
				if ((l->f[k].kind == FK_TIME || l->f[k].kind == FK_DT) &&
				    l->f[k].off + l->f[k].w <= a.size && l->f[k].off + l->f[k].w <= b.size) {
					uint8_t tmp[8];

					memcpy(tmp, pkt + l->f[k].off, l->f[k].w);
					memcpy(pkt + l->f[k].off, d + b.off + l->f[k].off, l->f[k].w);
					memcpy(d + b.off + l->f[k].off, tmp, l->f[k].w);
				}
		}
		break;
	default: /* many packets */
		fill_block(in, f, &a, bs);
		break;
	}
}

/* ---- sonde agg programs ---- */

static const char *const agg_seeds[] = {
	"profile { @p[func, caller, object] = count(); @pw = quantize(weight); @pd[thread] = max(depth); }",
	"sync /wait > 1000 && result != 0/ { @sl = lquantize(wait / 1000, 0, 100, 10); }\n"
	"sync { @s[object, syncfunc, result] = sum(wait); @sq = llquantize(wait, 10, 0, 9, 10); }",
	"heap /leaked/ { @hl[func] = count(); } heap { @h[heapfunc, event] = sum(size); @hq = quantize(size); }",
	"io /iofunc == \"write\" || bytes < 0/ { @[file] = sum(bytes); @c[fd, err] = avg(dur); }",
	"stdin { @ = quantize($1); @b[$0] = count(); }",
	"stdin /$2 > 0/ { @[$1] = sum($2); } END { normalize(@, 10); printa(@); }",
	"BEGIN { } stdin { @a[$1, $2] = stddev($3 * 2 - -$4 % 7); @m = min(-$1); } END { trunc(@a, 3); "
	"printa(@a, @m); clear(@m); denormalize(@a); }",
	"profile /!(weight > 0) || (time - 1) / 3 >= 2 && \"x\" != \"y\"/ { @[\"k\", tid] = llquantize(weight, 2, 0, 8, 4, 1); }",
	"stdin { @[$1] = lquantize($2, -10, 10, 1, 5); }",
	"profile /state != \"cpu\"/ { @o[state, syscall, thread] = sum(weight); } "
	"profile { @u = sum(user); @s = sum(system); @w = quantize(waitcpu); }",
};
#define NAGG_SEEDS (sizeof(agg_seeds) / sizeof(agg_seeds[0]))

static void prog_insert(struct input *in, size_t at, const char *t, size_t tl, size_t times)
{
	size_t add = tl * times;

	if (in->proglen + add > (1u << 20))
		return;
	char *n = realloc(in->prog, in->proglen + add + 1);

	if (!n)
		return;
	in->prog = n;
	memmove(n + at + add, n + at, in->proglen - at + 1);
	for (size_t k = 0; k < times; k++)
		memcpy(n + at + k * tl, t, tl);
	in->proglen += add;
}

/* Mutates (or starts) the input's agg program: tokens, runs deleted or
 * repeated, and the deep shapes that overflow a recursive parser or
 * evaluator (nested parentheses, unary chains, long + chains). */
static void mutate_prog(struct input *in)
{
	static const char *const toks[] = {
		"(", ")", "{", "}", "[", "]", ",", ";", "/", "+", "-", "*", "%", "!", "<", "<=", ">", ">=",
		"==", "!=", "&&", "||", "=", "@", "@a", "@b[", "$", "$0", "$1", "$99999999999", "\"",
		"\"\\n\\\"\"", "0", "-9223372036854775808", "9223372036854775807", "18446744073709551616",
		"0x7f", "count()", "sum(", "quantize(", "lquantize(", "llquantize(", "printa(", "normalize(",
		"trunc(", "clear(", "denormalize(", "BEGIN", "END", "stdin", "profile", "sync", "heap", "io",
		"func", "caller", "weight", "wait", "size", "bytes", "file", "#", "\n", " ", "/*", "*/", "\xff",
	};
	if (!in->prog || below(8) == 0) {
		const char *sd = agg_seeds[below(NAGG_SEEDS)];

		free(in->prog);
		in->prog = strdup(sd);
		in->proglen = in->prog ? strlen(sd) : 0;
		if (!in->prog)
			return;
	}
	int rounds = 1 + (int)below(4);

	for (int r = 0; r < rounds; r++) {
		size_t len = in->proglen, at = below(len + 1);

		switch (below(8)) {
		case 0:
		case 1:
		case 2: {
			const char *t = toks[below(sizeof(toks) / sizeof(toks[0]))];

			prog_insert(in, at, t, strlen(t), 1);
			break;
		}
		case 3: /* delete a run */
			if (at < len) {
				size_t n = 1 + below(len - at < 16 ? len - at : 16);

				memmove(in->prog + at, in->prog + at + n, len - at - n + 1);
				in->proglen -= n;
			}
			break;
		case 4: { /* repeat a run */
			size_t n = at < len ? 1 + below(len - at < 8 ? len - at : 8) : 0;

			if (n) {
				char tmp[8];

				memcpy(tmp, in->prog + at, n);
				prog_insert(in, at, tmp, n, 1 + below(below(2) ? 10 : 3000));
			}
			break;
		}
		case 5: /* a byte */
			if (at < len)
				in->prog[at] = (char)(below(2) ? "(){}[]/$@\"+-*!=<>&|;,0123456789 \n"[below(32)]
							      : (char)rnd());
			break;
		case 6: { /* deep: (((x))), - - - x, !!!x */
			static const char *const deep[] = { "(", "-", "!", "+", "-(" };
			const char *d = deep[below(5)];
			size_t times = 1 + below(below(2) ? 100 : 30000);

			prog_insert(in, at, d, strlen(d), times);
			if (d[strlen(d) - 1] == '(')
				prog_insert(in, in->proglen < at + times * strlen(d) + 1 ? in->proglen
											 : at + times * strlen(d) + 1,
					    ")", 1, times);
			break;
		}
		default: { /* long chains: x + x + ... */
			static const char *const chain[] = { "+$1", "+weight", "*2", "&&$1", "||1", "-1", "<$1",
							     "==$1" };
			const char *c = chain[below(sizeof(chain) / sizeof(chain[0]))];

			prog_insert(in, at, c, strlen(c), 1 + below(below(2) ? 100 : 60000));
			break;
		}
		}
	}
	/* the NUL inside a program ends it for the compiler: keep the length honest */
	in->proglen = strlen(in->prog);
}

static void mutate(struct input *in, const struct input *seeds, size_t nseeds)
{
	if (below(2)) {
		mutate_prog(in);
		if (below(4) == 0)
			return; /* only the program changed */
	}

	int f = (int)below(NFILES);
	int rounds = 1 + (int)below(4);

	for (int r = 0; r < rounds; r++) {
		if (!in->present[f] && below(8)) {
			f = (int)below(NFILES);
			continue;
		}
		size_t len = in->len[f];

		switch (below(17)) {
		case 14:
		case 15:
		case 16: /* trace packets, by their layout */
			mutate_trace(in);
			break;
		case 0: /* flip a bit */
			if (len)
				in->f[f][below(len)] ^= (uint8_t)(1u << below(8));
			break;
		case 1: /* a random byte */
			if (len)
				in->f[f][below(len)] = (uint8_t)rnd();
		/* fall through */
		case 2:
		case 3: { /* an interesting value in a field */
			if (!len)
				break;
			size_t off = field_offset(len);
			int w = 1 << below(4); /* 1, 2, 4, 8 bytes */
			uint64_t v = interesting[below(sizeof(interesting) / sizeof(interesting[0]))];

			if (below(4) == 0)
				v = v + (uint64_t)below(5) - 2; /* wraps around: fine */
			if (off + (size_t)w > len)
				break;
			memcpy(in->f[f] + off, &v, (size_t)w);
			break;
		}
		case 4: /* truncate */
			set_len(in, f, below(len + 1));
			break;
		case 5: /* truncate at a block boundary or mid-packet */
			if (len > SONDE_FILE_HEADER_SIZE)
				set_len(in, f, SONDE_FILE_HEADER_SIZE +
						       below((len - SONDE_FILE_HEADER_SIZE) / SONDE_BLOCK_SIZE + 1) *
							       SONDE_BLOCK_SIZE +
						       below(2) * below(64));
			break;
		case 6: /* zero a range */
			if (len) {
				size_t at = below(len), n = 1 + below(256);

				memset(in->f[f] + at, 0, at + n > len ? len - at : n);
			}
			break;
		case 7: { /* duplicate a chunk elsewhere (repeated packets, blocks) */
			if (!len)
				break;
			size_t at = below(len), n = 1 + below(len - at < 4096 ? len - at : 4096);
			size_t to = below(len);
			uint8_t *tmp = malloc(n);

			if (!tmp)
				break;
			memcpy(tmp, in->f[f] + at, n);
			memcpy(in->f[f] + to, tmp, to + n > len ? len - to : n);
			free(tmp);
			break;
		}
		case 8: { /* grow with garbage or a copy of a block */
			size_t add = below(2) ? SONDE_BLOCK_SIZE : 1 + below(512);

			set_len(in, f, len + add);
			if (len >= add && below(2))
				memcpy(in->f[f] + len, in->f[f] + len - add, add);
			else
				for (size_t i = len; i < len + add; i++)
					in->f[f][i] = (uint8_t)rnd();
			break;
		}
		case 9: /* drop or restore a file */
			in->present[f] = !in->present[f];
			if (in->present[f] && !in->f[f]) {
				in->f[f] = malloc(1);
				in->len[f] = 0;
			}
			break;
		case 10: { /* splice the same file from another seed */
			const struct input *s = &seeds[below(nseeds)];

			if (!s->present[f] || !s->len[f] || !len)
				break;
			size_t at = below(len), from = below(s->len[f]);
			size_t n = s->len[f] - from < len - at ? s->len[f] - from : len - at;

			memcpy(in->f[f] + at, s->f[f] + from, n);
			break;
		}
		case 11:
		case 12: /* XML surgery on log.xml / map.xml */
			f = (int)below(2);
			if (in->present[f])
				mutate_xml(in, f);
			break;
		default: { /* a packet's type or size word at an 8-aligned offset */
			if (len < SONDE_FILE_HEADER_SIZE + 40)
				break;
			size_t off = (SONDE_FILE_HEADER_SIZE + 32 + below(len - SONDE_FILE_HEADER_SIZE - 32)) & ~(size_t)7;
			uint16_t v = (uint16_t)interesting[below(sizeof(interesting) / sizeof(interesting[0]))];

			if (off + 4 <= len)
				memcpy(in->f[f] + off + 2 * below(2), &v, 2);
			break;
		}
		}
	}
}

static const uint8_t *cur_data;
static size_t cur_size;
static const char *crash_dir = ".";
static uint64_t cur_iter;

static void save(const char *kind)
{
	char p[1024];
	int fd;

	snprintf(p, sizeof(p), "%s/%s-%" PRIu64 ".bin", crash_dir, kind, cur_iter);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		ssize_t w = write(fd, cur_data, cur_size);

		(void)w;
		close(fd);
	}
	const char msg[] = "fuzz_reader: input saved as ";
	ssize_t r = write(2, msg, sizeof(msg) - 1);

	r += write(2, p, strlen(p));
	r += write(2, "\n", 1);
	(void)r;
	remove_scratch();
}

static void on_crash(int sig)
{
	save(sig == SIGALRM ? "hang" : "crash");
	signal(sig, SIG_DFL);
	raise(sig == SIGALRM ? SIGABRT : sig);
}

/* Sanitizers call this before they abort. */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));
static void on_death(void)
{
	save("crash");
}

static int read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);

	fseek(f, 0, SEEK_SET);
	*data = malloc(n > 0 ? (size_t)n : 1);
	*size = n > 0 ? (size_t)n : 0;
	if (!*data || (n > 0 && fread(*data, 1, (size_t)n, f) != (size_t)n)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t iters = 10000, seed = (uint64_t)time(NULL);
	unsigned timeout = 10;
	struct input *seeds = calloc((size_t)argc, sizeof(*seeds));
	size_t nseeds = 0;

	if (!seeds)
		return 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			iters = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "-seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "-crashes") && i + 1 < argc) {
			crash_dir = argv[++i];
		} else if (!strcmp(argv[i], "-src") && i + 1 < argc) {
			source_every = strtoull(argv[++i], NULL, 10);
			if (!source_every)
				source_every = 1;
		} else if (!strcmp(argv[i], "-sym") && i + 1 < argc) {
			symbols_every = strtoull(argv[++i], NULL, 10);
			if (!symbols_every)
				symbols_every = 1;
		} else if (!strcmp(argv[i], "-modes") && i + 1 < argc) {
			modes_per_input = atoi(argv[++i]) == 1 ? 1 : NMODES;
		} else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			timeout = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-run") && i + 1 < argc) {
			uint8_t *d;
			size_t n;

			if (read_file(argv[++i], &d, &n) < 0) {
				fprintf(stderr, "fuzz_reader: cannot read '%s'\n", argv[i]);
				return 1;
			}
			replaying = true;
			LLVMFuzzerTestOneInput(d, n);
			free(d);
			free(seeds);
			if (devnull)
				fclose(devnull);
			remove_scratch();
			printf("ran '%s': %s\n", argv[i], n_open ? "opened" : "refused");
			return 0;
		} else if (!strcmp(argv[i], "-unpack") && i + 2 < argc) {
			uint8_t *d;
			size_t n;

			if (read_file(argv[i + 1], &d, &n) < 0 ||
			    (mkdir(argv[i + 2], 0700) < 0 && errno != EEXIST) ||
			    unpack(d, n, argv[i + 2]) < 0) {
				fprintf(stderr, "fuzz_reader: cannot unpack '%s'\n", argv[i + 1]);
				return 1;
			}
			free(d);
			free(seeds);
			return 0;
		} else if (!strcmp(argv[i], "-pack") && i + 2 < argc) {
			struct input in;
			size_t n = 0;
			uint8_t *b = NULL;
			FILE *f = NULL;
			int bad = input_load(&in, argv[i + 1]) < 0 || !(b = pack(&in, &n)) ||
				  !(f = fopen(argv[i + 2], "wb")) || fwrite(b, 1, n, f) != n;

			if (f && fclose(f))
				bad = 1;
			input_free(&in);
			free(b);
			free(seeds);
			if (bad) {
				fprintf(stderr, "fuzz_reader: cannot pack '%s'\n", argv[i + 1]);
				return 1;
			}
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: fuzz_reader [-n ITER] [-seed N] [-crashes DIR] [-t SEC] [-src N] [-sym N] [-modes 1|3] "
					"EXPERIMENT...\n"
					"       fuzz_reader -run FILE | -pack DIR FILE | -unpack FILE DIR\n");
			return 2;
		} else if (input_load(&seeds[nseeds], argv[i]) == 0) {
			nseeds++;
		} else {
			fprintf(stderr, "fuzz_reader: '%s' is not an experiment\n", argv[i]);
			return 2;
		}
	}
	if (!nseeds) {
		fprintf(stderr, "fuzz_reader: no seed experiments given\n");
		return 2;
	}
	rs = seed * 0x9e3779b97f4a7c15ull + 1;
	/* A stack overflow must be saved too: the handler needs a stack of its own. */
	static char altstack[1 << 16];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_handler = on_crash, .sa_flags = SA_ONSTACK };

	sigaltstack(&ss, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGFPE, on_crash);
	signal(SIGILL, on_crash);
	signal(SIGABRT, on_crash);
	signal(SIGALRM, on_crash);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(on_death);

	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* every seed as it is first */
	for (uint64_t it = 0; it < iters + nseeds; it++) {
		struct input in;
		size_t size;

		input_copy(&in, &seeds[it < nseeds ? it : below(nseeds)]);
		if (it >= nseeds)
			mutate(&in, seeds, nseeds);
		uint8_t *data = pack(&in, &size);

		input_free(&in);
		if (!data)
			continue;
		cur_data = data;
		cur_size = size;
		cur_iter = it;
		alarm(timeout);
		LLVMFuzzerTestOneInput(data, size);
		alarm(0);
		free(data);
		if (it && it % 20000 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			fprintf(stderr, "fuzz_reader: %" PRIu64 " executions, %.0f/s\n", it,
				(double)it / ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)));
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

	printf("fuzz_reader: %" PRIu64 " executions in %.1f s (%.0f/s), seed %" PRIu64 ", %zu seed "
	       "experiments\n",
	       iters + nseeds, secs, (double)(iters + nseeds) / secs, seed, nseeds);
	printf("fuzz_reader: %" PRIu64 " opened (%" PRIu64 " with read errors), %" PRIu64
	       " refused, %" PRIu64 " samples and %" PRIu64 " trace events read; no crash\n",
	       n_open, n_damaged, n_refused, n_samples, n_traced);
	for (size_t i = 0; i < nseeds; i++)
		input_free(&seeds[i]);
	free(seeds);
	if (devnull)
		fclose(devnull);
	remove_scratch();
	return 0;
}
#endif
