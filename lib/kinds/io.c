/*
 * The io kind (sonde collect -i): I/O calls, one event per traced call
 * (SONDE_PKT_IO) and the names of the files (SONDE_PKT_IO_FILE,
 * include/sonde/format.h).  The whole kind on the analyzer's side
 * (base/kindmod.h): its reading, its metrics (bytes, calls and time of
 * reads, writes, other calls and errors), its `sonde agg` events, its
 * -dump and -header.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "agg/kind.h"
#include "base/grow.h"
#include "base/u64map.h"
#include "model/kind.h"
#include "reader/kind.h"
#include "views/export.h"
#include "views/kind.h"

/* ---- reading ------------------------------------------------------------------------- */

struct io_state {
	struct sonde_io_event *v;
	size_t n, cap;
	struct iofile {
		uint64_t id;
		const char *name; /* in the mapped file */
	} * files;
	size_t nfiles, capfiles;
	struct u64map filemap;
};

static const char *take(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const struct sonde_packet *h = (const void *)pkt;

	if (h->type != SONDE_PKT_IO && h->type != SONDE_PKT_IO_FILE)
		return sonde_rk_not_mine;
	if (sonde_rk_again(sc))
		return NULL;

	struct sonde_exp *exp = sonde_rk_exp(sc);
	struct io_state *s = sonde_rk_state_new(exp, SONDE_KIND_IO, sizeof(*s));

	if (!s)
		return NULL;
	switch (h->type) {
	case SONDE_PKT_IO: {
		const struct sonde_io_packet *p = (const void *)pkt;

		if (h->size < sizeof(*p))
			return sonde_rk_too_small(why, whylen, "io", h->size, sizeof(*p));
		if (sonde_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 16)) {
			sonde_rk_oom(exp);
			return NULL;
		}
		s->v[s->n++] =
			(struct sonde_io_event){ sonde_rk_tid(sc), p->func,   p->flags, p->fd,	    p->err,
						 p->time_ns,	   p->dur_ns, p->bytes, p->file_id, p->stack_id };
		sonde_rk_stack_ref(exp, p->stack_id);
		return NULL;
	}
	case SONDE_PKT_IO_FILE: {
		const struct sonde_io_file_packet *p = (const void *)pkt;

		if (h->size < sizeof(*p))
			return sonde_rk_too_small(why, whylen, "io file", h->size, sizeof(*p));
		if ((size_t)p->name_len + 1 > h->size - sizeof(*p) || pkt[sizeof(*p) + p->name_len] != '\0') {
			snprintf(why, whylen, "io file packet name of %u bytes does not fit its size %u", p->name_len,
				 h->size);
			return why;
		}
		if (!p->file_id || u64map_get(&s->filemap, p->file_id) >= 0)
			return NULL; /* the first name of an id is kept */
		if (sonde_grow(&s->files, &s->capfiles, s->nfiles + 1, sizeof(*s->files), 16) ||
		    u64map_put(&s->filemap, p->file_id, (uint32_t)s->nfiles)) {
			sonde_rk_oom(exp);
			return NULL;
		}
		s->files[s->nfiles++] = (struct iofile){ p->file_id, (const char *)pkt + sizeof(*p) };
		return NULL;
	}
	}
	return sonde_rk_not_mine;
}

const struct sonde_io_event *sonde_exp_io_events(const struct sonde_exp *exp, size_t *n)
{
	const struct io_state *s = sonde_rk_state(exp, SONDE_KIND_IO);

	*n = s ? s->n : 0;
	return s ? s->v : NULL;
}

const char *sonde_exp_io_file(const struct sonde_exp *exp, uint64_t file_id)
{
	const struct io_state *s = sonde_rk_state(exp, SONDE_KIND_IO);
	long i = s && file_id ? u64map_get(&s->filemap, file_id) : -1;

	return i < 0 ? NULL : s->files[i].name;
}

static size_t events(const struct sonde_exp *exp)
{
	size_t n;

	sonde_exp_io_events(exp, &n);
	return n;
}

SONDE_RK_TIME_SORT(sort_io, struct sonde_io_event)

static void finish(struct sonde_exp *exp)
{
	struct io_state *s = sonde_rk_state(exp, SONDE_KIND_IO);

	if (!s || s->n < 2)
		return;
	struct sonde_io_event *tmp = malloc(s->n * sizeof(*tmp));

	if (!tmp) {
		sonde_rk_oom(exp);
		return;
	}
	sort_io(s->v, tmp, s->n);
	free(tmp);
}

static void free_state(void *state)
{
	struct io_state *s = state;

	free(s->v);
	free(s->files);
	u64map_release(&s->filemap);
	free(s);
}

const char *sonde_io_func_name(unsigned func)
{
	static const char *const names[] = {
		[SONDE_IO_READ] = "read",	[SONDE_IO_PREAD] = "pread",	    [SONDE_IO_READV] = "readv",
		[SONDE_IO_PREADV] = "preadv",	[SONDE_IO_FREAD] = "fread",	    [SONDE_IO_FGETS] = "fgets",
		[SONDE_IO_GETC] = "getc",	[SONDE_IO_GETLINE] = "getline",	    [SONDE_IO_WRITE] = "write",
		[SONDE_IO_PWRITE] = "pwrite",	[SONDE_IO_WRITEV] = "writev",	    [SONDE_IO_PWRITEV] = "pwritev",
		[SONDE_IO_FWRITE] = "fwrite",	[SONDE_IO_PRINTF] = "printf",	    [SONDE_IO_FPRINTF] = "fprintf",
		[SONDE_IO_DPRINTF] = "dprintf", [SONDE_IO_PUTS] = "puts",	    [SONDE_IO_FPUTS] = "fputs",
		[SONDE_IO_PUTC] = "putc",	[SONDE_IO_OPEN] = "open",	    [SONDE_IO_OPENAT] = "openat",
		[SONDE_IO_CREAT] = "creat",	[SONDE_IO_CLOSE] = "close",	    [SONDE_IO_DUP] = "dup",
		[SONDE_IO_DUP2] = "dup2",	[SONDE_IO_DUP3] = "dup3",	    [SONDE_IO_LSEEK] = "lseek",
		[SONDE_IO_FSYNC] = "fsync",	[SONDE_IO_FDATASYNC] = "fdatasync", [SONDE_IO_FOPEN] = "fopen",
		[SONDE_IO_FDOPEN] = "fdopen",	[SONDE_IO_FCLOSE] = "fclose",	    [SONDE_IO_FFLUSH] = "fflush",
	};
	return sonde_rk_name_in(names, sizeof(names) / sizeof(names[0]), func);
}

static const struct sonde_reader_kind reader = {
	.take = take, .events = events, .finish = finish, .free = free_state,
};

/* ---- metrics ------------------------------------------------------------------------- */

/* In this order: the -io views (lib/views/view_trace.c) show them so. */
enum {
	M_READBYTES,
	M_READCNT,
	M_READTIME,
	M_WRITEBYTES,
	M_WRITECNT,
	M_WRITETIME,
	M_OTHERCNT,
	M_OTHERTIME,
	M_ERRORCNT,
	M_ERRORTIME,
	M_N
};

static const struct sonde_metric_def metrics[M_N] = {
	[M_READBYTES] = { "ioreadbytes", "Read Bytes", "Read Bytes", SONDE_UNIT_BYTES },
	[M_READCNT] = { "ioreadcnt", "Read Count", "Reads", SONDE_UNIT_COUNT },
	[M_READTIME] = { "ioreadtime", "Read Time", "Read Time", SONDE_UNIT_NS },
	[M_WRITEBYTES] = { "iowritebytes", "Write Bytes", "Write Bytes", SONDE_UNIT_BYTES },
	[M_WRITECNT] = { "iowritecnt", "Write Count", "Writes", SONDE_UNIT_COUNT },
	[M_WRITETIME] = { "iowritetime", "Write Time", "Write Time", SONDE_UNIT_NS },
	[M_OTHERCNT] = { "ioothercnt", "Other I/O Count", "Other I/O", SONDE_UNIT_COUNT },
	[M_OTHERTIME] = { "ioothertime", "Other I/O Time", "Other I/O Time", SONDE_UNIT_NS },
	[M_ERRORCNT] = { "ioerrorcnt", "I/O Error Count", "I/O Errors", SONDE_UNIT_COUNT },
	[M_ERRORTIME] = { "ioerrortime", "I/O Error Time", "I/O Error Time", SONDE_UNIT_NS },
};

static int feed(struct sonde_model_feed *f, const struct sonde_exp *exp)
{
	size_t n;
	const struct sonde_io_event *e = sonde_exp_io_events(exp, &n);

	for (size_t i = 0; i < n; i++) {
		int64_t v[M_N] = { 0 };
		int64_t t = (int64_t)e[i].dur_ns;

		if (e[i].flags & SONDE_IOF_ERROR) {
			v[M_ERRORCNT] = 1;
			v[M_ERRORTIME] = t;
		} else if (SONDE_IO_IS_READ(e[i].func)) {
			v[M_READBYTES] = e[i].bytes;
			v[M_READCNT] = 1;
			v[M_READTIME] = t;
		} else if (SONDE_IO_IS_WRITE(e[i].func)) {
			v[M_WRITEBYTES] = e[i].bytes;
			v[M_WRITECNT] = 1;
			v[M_WRITETIME] = t;
		} else {
			v[M_OTHERCNT] = 1;
			v[M_OTHERTIME] = t;
		}
		if (sonde_model_feed_event(f, i, e[i].tid, e[i].time_ns, e[i].stack_id, v) < 0)
			return -1;
	}
	return 0;
}

static const struct sonde_model_kind model = {
	.metrics = metrics,
	.nmetrics = M_N,
	.default_metrics = "e.ioreadbytes:e.iowritebytes:e.ioreadcnt:e.iowritecnt:e.ioothercnt:e.ioerrorcnt:",
	.sort = "ioreadbytes",
	.feed = feed,
};

/* ---- sonde agg ----------------------------------------------------------------------- */

enum {
	F_TID,
	F_TIME,
	F_BYTES,  /* transferred by reads and writes, else 0 */
	F_DUR,	  /* ns the call took */
	F_FD,
	F_FILE,	  /* sonde_exp_io_file(), "<fd N>" when unknown */
	F_FUNC,
	F_CALLER,
	F_IOFUNC, /* "read", "write", "open", ... */
	F_ERR,	  /* errno of a failed call, else 0 */
	F_N
};

static const struct sonde_dl_field fields[F_N] = {
	[F_TID] = { "tid", SONDE_DL_INT, "thread id" },
	[F_TIME] = { "time", SONDE_DL_INT, "nanoseconds since the experiment started (the call's start)" },
	[F_BYTES] = { "bytes", SONDE_DL_INT, "bytes read or written (0 for other calls and failures)" },
	[F_DUR] = { "dur", SONDE_DL_INT, "nanoseconds the call took" },
	[F_FD] = { "fd", SONDE_DL_INT, "the file descriptor (of an open or dup: the new one)" },
	[F_FILE] = { "file", SONDE_DL_STR, "the file's name, \"<fd N>\" when unknown" },
	[F_FUNC] = { "func", SONDE_DL_STR, "function that made the call (the stack's leaf)" },
	[F_CALLER] = { "caller", SONDE_DL_STR, "function that called func" },
	[F_IOFUNC] = { "iofunc", SONDE_DL_STR, "the traced function: \"read\", \"write\", \"open\", ..." },
	[F_ERR] = { "err", SONDE_DL_INT, "errno of a failed call, else 0" },
};

static int64_t run(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		   char *err, size_t errlen);

static const struct sonde_dl_kind agg = {
	.name = "io",
	.fields = fields,
	.nfields = F_N,
	.doc = "one event per traced I/O call (sonde collect -i)",
	.run = run,
};

struct run {
	const struct sonde_exp *exp;
	const struct sonde_io_event *e;
	bool want_file;
};

static int fill(struct sonde_dl_trace *t, void *arg, size_t i, struct sonde_dl_val *vals, uint64_t *stack_id,
		uint64_t *time_ns)
{
	const struct run *r = arg;
	const struct sonde_io_event *e = &r->e[i];

	vals[F_TID].i = e->tid;
	vals[F_TIME].i = (int64_t)(e->time_ns - t->start);
	vals[F_BYTES].i = e->bytes;
	vals[F_DUR].i = (int64_t)e->dur_ns;
	vals[F_FD].i = e->fd;
	vals[F_ERR].i = e->err;
	*stack_id = e->stack_id;
	*time_ns = e->time_ns;
	if (r->want_file) {
		const char *name = e->file_id ? sonde_exp_io_file(r->exp, e->file_id) : NULL;
		char buf[32];

		if (!name) {
			snprintf(buf, sizeof(buf), "<fd %d>", (int)e->fd);
			name = buf;
		}
		if (sonde_dl_trace_str(t, &vals[F_FILE], name) < 0)
			return -1;
	}
	return sonde_dl_trace_fname(t, &vals[F_IOFUNC], e->func, sonde_io_func_name);
}

static int64_t run(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		   char *err, size_t errlen)
{
	size_t n;
	struct run r = { exp, sonde_exp_io_events(exp, &n), sonde_dl_uses_field(p, &agg, F_FILE) };

	return sonde_dl_trace_run(p, exp, &agg, n, F_FUNC, F_CALLER, name_of_pc, ctx, fill, &r, err, errlen);
}

/* ---- views --------------------------------------------------------------------------- */

static int dump(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err, size_t errlen)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	const struct sonde_io_event *e = sonde_exp_io_events(exp, &n);

	fprintf(out, "# %zu I/O events of %s, by time; time in seconds since the start\n", n, in->dir);
	for (size_t i = 0; i < n; i++) {
		const char *file = sonde_exp_io_file(exp, e[i].file_id);

		fprintf(out,
			"io %zu  time %.9f  tid %u  func %s  fd %d  bytes %" PRId64 "  dur %" PRIu64
			" ns  err %d  stack 0x%" PRIx64 "  file %s",
			i, sonde_dump_since(in, e[i].time_ns), e[i].tid, sonde_io_func_name(e[i].func), e[i].fd,
			e[i].bytes, e[i].dur_ns, e[i].err, e[i].stack_id, file ? file : "-");
		sonde_dump_stack(out, dyn, exp, e[i].stack_id, e[i].time_ns);
	}
	return 0;
}

struct totals {
	size_t calls, errors;
	uint64_t read, written; /* sums of int64 byte counts, wrapping */
};

static struct totals totals(const struct sonde_exp *exp)
{
	struct totals t = { 0 };
	const struct sonde_io_event *e = sonde_exp_io_events(exp, &t.calls);

	for (size_t i = 0; i < t.calls; i++) {
		if (e[i].flags & SONDE_IOF_ERROR)
			t.errors++;
		else if (SONDE_IO_IS_READ(e[i].func))
			t.read += (uint64_t)e[i].bytes;
		else if (SONDE_IO_IS_WRITE(e[i].func))
			t.written += (uint64_t)e[i].bytes;
	}
	return t;
}

static void header_text(FILE *out, const struct sonde_exp *exp)
{
	struct totals t = totals(exp);

	fprintf(out, "%-*s%zu calls, %" PRId64 " bytes read, %" PRId64 " bytes written, %zu errors\n",
		SONDE_HEADER_LABEL_W, "I/O tracing:", t.calls, (int64_t)t.read, (int64_t)t.written, t.errors);
}

static void header_doc(struct sonde_emit *k, const struct sonde_exp *exp)
{
	struct totals t = totals(exp);

	em_u(k, "calls", t.calls);
	em_i(k, "bytes_read", (int64_t)t.read); /* signed, as in the I/O packets */
	em_i(k, "bytes_written", (int64_t)t.written);
	em_u(k, "errors", t.errors);
}

/* ---- its timeline and report ---- */

/* A call is a span: the function, its descriptor, bytes and file. */
static uint64_t span_dur(const struct sonde_exp *exp, size_t i)
{
	size_t n;
	const struct sonde_io_event *ie = sonde_exp_io_events(exp, &n);

	return i < n ? ie[i].dur_ns : 0;
}

static const char *span_name(const struct sonde_exp *exp, size_t i)
{
	size_t n;
	const struct sonde_io_event *ie = sonde_exp_io_events(exp, &n);

	return i < n ? sonde_io_func_name(ie[i].func) : "?";
}

static void span_args(struct sonde_xbuf *b, const struct sonde_exp *exp, size_t i)
{
	size_t n;
	const struct sonde_io_event *ie = sonde_exp_io_events(exp, &n);

	if (i >= n)
		return;
	const char *file = sonde_exp_io_file(exp, ie[i].file_id);

	xb_s(b, ",\"fd\":");
	xb_i(b, ie[i].fd);
	xb_s(b, ",\"bytes\":");
	xb_i(b, ie[i].bytes);
	if (file) {
		xb_s(b, ",\"file\":");
		xb_json(b, file);
	}
}

static const struct sonde_view_timeline timeline = {
	.cat = "io",
	.track = "I/O",
	.dur = span_dur,
	.name = span_name,
	.args = span_args,
};

static const struct sonde_view_report_view report[] = {
	{ "io", sonde_view_io },
	{ "iostacks", sonde_view_iostacks },
	{ NULL, NULL },
};

static const struct sonde_view_kind view = {
	.dump = dump,
	.header_text = header_text,
	.header_doc = header_doc,
	.timeline = &timeline,
	.report = report,
	.report_place = 3,
};

const struct sonde_kind_module sonde_kind_module_IO = {
	.reader = &reader,
	.model = &model,
	.agg = &agg,
	.view = &view,
};
