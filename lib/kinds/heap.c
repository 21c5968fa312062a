/*
 * The heap kind (sonde collect -H): allocations, frees and failed
 * allocations, one event per traced call (include/sonde/format.h), with
 * the leaks they leave.  The whole kind on the analyzer's side
 * (base/kindmod.h): the decoding of its packets, its metrics
 * (allocations, bytes, leaks, bytes leaked), its `sonde agg` events, its
 * -dump and -header.
 *
 * Its events are not kept in a state of its own: a heap-traced run
 * writes tens of millions of them, so the reader counts them per block at
 * open and this file decodes them again when they are asked for, handing
 * them to the reader (sonde_rk_heap_room, reader/kind.h), which keeps them
 * by time and streams them; leak matching is reader/heapleaks.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg/kind.h"
#include "model/kind.h"
#include "reader/kind.h"
#include "views/kind.h"

/* ---- reading ------------------------------------------------------------------------- */

/* Unsigned LEB128 at *p, below end; false when it runs past end or over
 * 64 bits. */
static bool get_u(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}


/* The records of a heap stream packet (format.h) as heap events.  A
 * packet that runs past the block's used size was being extended when the
 * process died: its records up to the used size count, and one cut there
 * is dropped. */
static const char *take_stream(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	struct sonde_exp *exp = sonde_rk_exp(sc);
	const struct sonde_heap_stream_packet *k = (const void *)pkt;
	uint32_t tid = sonde_rk_tid(sc), rest = sonde_rk_rest(sc);
	bool again = sonde_rk_again(sc);
	struct sonde_heap_event *room;
	size_t nb = 0;

	if (k->size < sizeof(*k))
		return sonde_rk_too_small(why, whylen, "heap stream", k->size, sizeof(*k));
	uint32_t have = k->size < rest ? k->size : rest;
	/* a record takes 3 bytes at least (a free: tag, time, address); a
	 * packet cut before its records has none */
	if (!(room = sonde_rk_heap_room(sc, have > sizeof(*k) ? (have - sizeof(*k)) / 3 + 1 : 1)))
		return NULL;
	bool cut = (size_t)k->nbytes + sizeof(*k) > have;
	if (!cut && (size_t)k->nbytes + sizeof(*k) + 8 <= k->size) {
		snprintf(why, whylen, "heap stream packet of %u bytes holds %u bytes of records",
			 k->size, k->nbytes);
		return why;
	}
	const uint8_t *p = pkt + sizeof(*k), *end = pkt + (cut ? have : sizeof(*k) + k->nbytes);
	uint64_t t = k->base_ns, addr = 0, defined = 0;
	uint64_t slot_stack[SONDE_HEAP_STREAM_SLOTS];
	uint8_t slot_func[SONDE_HEAP_STREAM_SLOTS];

	while (p < end) {
		const uint8_t *rec = p;
		uint8_t tag = *p++, kind = tag >> 6, low = tag & 63;
		uint64_t dt, bytes = 0, za;
		bool ok = true;

		if (kind == 3) {
			snprintf(why, whylen, "heap stream record %zu: unknown tag 0x%02x",
				 (size_t)(rec - pkt - sizeof(*k)), tag);
			goto bad;
		}
		if (kind == 2) {
			if (end - p < 9) {
				ok = false;
			} else {
				slot_func[low] = p[0];
				memcpy(&slot_stack[low], p + 1, 8);
				defined |= 1ull << low;
				p += 9;
			}
		}
		ok = ok && get_u(&p, end, &dt) && (kind == 1 || get_u(&p, end, &bytes)) && get_u(&p, end, &za);
		if (!ok) {
			if (cut)
				break;
			snprintf(why, whylen, "heap stream record at %zu runs past the packet's %u bytes",
				 (size_t)(rec - pkt - sizeof(*k)), k->nbytes);
			goto bad;
		}
		if (kind == 0 && !(defined >> low & 1)) {
			snprintf(why, whylen, "heap stream record at %zu uses slot %u before defining it",
				 (size_t)(rec - pkt - sizeof(*k)), low);
			goto bad;
		}
		t += dt;
		addr += (za >> 1) ^ (0 - (za & 1));
		if (kind == 1) {
			room[nb++] = (struct sonde_heap_event){ tid, low, SONDE_HEAPF_FREE, t, addr, 0, 0 };
		} else {
			room[nb++] = (struct sonde_heap_event){ tid,  slot_func[low], addr ? SONDE_HEAPF_ALLOC : SONDE_HEAPF_FAILED,
								t,    addr,	      bytes,
								slot_stack[low] };
			if (kind == 2 && !again)
				sonde_rk_stack_ref(exp, slot_stack[low]);
		}
	}
	sonde_rk_heap_commit(sc, nb);
	return NULL;
bad:
	/* the records before the bad one count, as they are */
	sonde_rk_heap_commit(sc, nb);
	return why;
}


/* One event of a packet that holds one. */
static void emit(struct scan *sc, const struct sonde_heap_event *e)
{
	struct sonde_heap_event *room = sonde_rk_heap_room(sc, 1);

	if (room) {
		*room = *e;
		sonde_rk_heap_commit(sc, 1);
	}
}

/* Packets of the heap file.  Decoded twice: counted at open, and again
 * when the events are asked for (sonde_rk_again); stacks are materialised
 * the first time. */
static const char *take(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	struct sonde_exp *exp = sonde_rk_exp(sc);
	const struct sonde_packet *h = (const void *)pkt;
	uint32_t tid = sonde_rk_tid(sc);
	bool again = sonde_rk_again(sc);

	switch (h->type) {
	case SONDE_PKT_HEAP:
	case SONDE_PKT_HEAP_FREE: {
		const struct sonde_heap_packet *p = (const void *)pkt;
		bool full = h->type == SONDE_PKT_HEAP;
		size_t min = full ? sizeof(*p) : sizeof(struct sonde_heap_free_packet);

		if (h->size < min)
			return sonde_rk_too_small(why, whylen, full ? "heap" : "heap free", h->size, min);
		struct sonde_heap_event e = { tid, p->func, p->flags, p->time_ns, p->addr, 0, 0 };

		if (full) {
			e.bytes = p->bytes;
			e.stack_id = p->stack_id;
			if (!again)
				sonde_rk_stack_ref(exp, p->stack_id);
		} else {
			e.flags = SONDE_HEAPF_FREE;
		}
		emit(sc, &e);
		return NULL;
	}
	case SONDE_PKT_HEAP_SHORT:
	case SONDE_PKT_HEAP_FREE_SHORT: {
		bool full = h->type == SONDE_PKT_HEAP_SHORT;
		size_t min = full ? sizeof(struct sonde_heap_short_packet)
				  : sizeof(struct sonde_heap_free_short_packet);

		if (h->size < min)
			return sonde_rk_too_small(why, whylen, full ? "short heap" : "short heap free", h->size, min);
		struct sonde_heap_event e;

		if (full) {
			const struct sonde_heap_short_packet *p = (const void *)pkt;

			e = (struct sonde_heap_event){ tid, p->func, p->flags,
						       sonde_rk_block_first_ns(sc) + (uint64_t)(int64_t)p->dt_ns,
						       p->addr, p->bytes, p->stack_id };
			if (!again)
				sonde_rk_stack_ref(exp, p->stack_id);
		} else {
			const struct sonde_heap_free_short_packet *p = (const void *)pkt;

			e = (struct sonde_heap_event){ tid, SONDE_HEAP_FREE, SONDE_HEAPF_FREE,
						       sonde_rk_block_first_ns(sc) + (uint64_t)(int64_t)p->dt_ns,
						       p->addr, 0, 0 };
		}
		emit(sc, &e);
		return NULL;
	}
	case SONDE_PKT_HEAP_STREAM:
		return take_stream(sc, pkt, why, whylen);
	}
	return sonde_rk_not_mine;
}

static size_t events(const struct sonde_exp *exp)
{
	return (size_t)sonde_rk_heap_count(exp);
}

static const struct sonde_reader_kind reader = { .take = take, .events = events };

/* ---- metrics ------------------------------------------------------------------------- */

enum { M_ALLOCCNT, M_ALLOCBYTES, M_LEAKCNT, M_LEAKBYTES, M_N };

static const struct sonde_metric_def metrics[M_N] = {
	[M_ALLOCCNT] = { "heapalloccnt", "Allocations", "Allocs", SONDE_UNIT_COUNT },
	[M_ALLOCBYTES] = { "heapallocbytes", "Bytes Allocated", "Alloc Bytes", SONDE_UNIT_BYTES },
	[M_LEAKCNT] = { "heapleakcnt", "Leaks", "Leaks", SONDE_UNIT_COUNT },
	[M_LEAKBYTES] = { "heapleakbytes", "Bytes Leaked", "Leak Bytes", SONDE_UNIT_BYTES },
};

static int feed(struct sonde_model_feed *f, const struct sonde_exp *exp)
{
	size_t n;
	const struct sonde_heap_event *e = sonde_exp_heap_events(exp, &n);

	if (!n)
		return 0;
	bool *leaked = malloc(n * sizeof *leaked);
	uint64_t *left = malloc(n * sizeof *left);
	int rc = -1;

	if (!leaked || !left || sonde_heap_leaks_left(exp, leaked, left, NULL) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!(e[i].flags & SONDE_HEAPF_ALLOC))
			continue; /* frees, munmaps and failures carry no metric */
		int64_t v[M_N] = { [M_ALLOCCNT] = 1, [M_ALLOCBYTES] = (int64_t)e[i].bytes };

		if (leaked[i]) {
			v[M_LEAKCNT] = 1;
			v[M_LEAKBYTES] = (int64_t)left[i]; /* a mapping unmapped in part: the rest */
		}
		if (sonde_model_feed_event(f, i, e[i].tid, e[i].time_ns, e[i].stack_id, v) < 0)
			goto out;
	}
	rc = 0;
out:
	free(leaked);
	free(left);
	return rc;
}

static const struct sonde_model_kind model = {
	.metrics = metrics,
	.nmetrics = M_N,
	.default_metrics = "e.heapalloccnt:e.heapallocbytes:e.heapleakcnt:e.heapleakbytes:i.heapleakbytes:",
	.sort = "heapallocbytes",
	.feed = feed,
};

/* ---- sonde agg ----------------------------------------------------------------------- */

enum {
	F_TID,
	F_TIME,
	F_SIZE,	    /* bytes requested; mmap/munmap: the length; free: 0 */
	F_ADDR,	    /* the block's address */
	F_FUNC,	    /* frees have no stack: "<unknown>" */
	F_CALLER,
	F_HEAPFUNC, /* "malloc", "free", ... */
	F_EVENT,    /* "alloc", "free" or "failed" */
	F_LEAKED,   /* 1: an allocation never freed (sonde_heap_leaks) */
	F_N
};

static const struct sonde_dl_field fields[F_N] = {
	[F_TID] = { "tid", SONDE_DL_INT, "thread id" },
	[F_TIME] = { "time", SONDE_DL_INT, "nanoseconds since the experiment started" },
	[F_SIZE] = { "size", SONDE_DL_INT, "bytes requested (mmap, munmap: the length; free: 0)" },
	[F_ADDR] = { "addr", SONDE_DL_INT, "address of the block" },
	[F_FUNC] = { "func", SONDE_DL_STR,
		     "function that made the call (the stack's leaf; frees have no stack: \"<unknown>\")" },
	[F_CALLER] = { "caller", SONDE_DL_STR, "function that called func" },
	[F_HEAPFUNC] = { "heapfunc", SONDE_DL_STR, "the traced function: \"malloc\", \"free\", ..." },
	[F_EVENT] = { "event", SONDE_DL_STR, "\"alloc\", \"free\" or \"failed\"" },
	[F_LEAKED] = { "leaked", SONDE_DL_INT, "1 for an allocation never freed, else 0" },
};

static int64_t run(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		   char *err, size_t errlen);

static const struct sonde_dl_kind agg = {
	.name = "heap",
	.fields = fields,
	.nfields = F_N,
	.doc = "one event per traced allocation, free or failed allocation (sonde collect -H)",
	.run = run,
};

struct run {
	const struct sonde_heap_event *e;
	const bool *leaked;	     /* NULL when the program does not use the field */
	const char *ev[3];	     /* "alloc", "free", "failed", interned on first use */
};

static int fill(struct sonde_dl_trace *t, void *arg, size_t i, struct sonde_dl_val *vals, uint64_t *stack_id,
		uint64_t *time_ns)
{
	struct run *r = arg;
	const struct sonde_heap_event *e = &r->e[i];
	static const char *const names[3] = { "alloc", "free", "failed" };
	static const uint32_t lens[3] = { 5, 4, 6 };
	int k = (e->flags & SONDE_HEAPF_FAILED) ? 2 : (e->flags & SONDE_HEAPF_ALLOC) ? 0 : 1;

	if (!r->ev[k] && !(r->ev[k] = sonde_dl_trace_intern(t, names[k])))
		return -1;
	vals[F_TID].i = e->tid;
	vals[F_TIME].i = (int64_t)(e->time_ns - t->start);
	vals[F_SIZE].i = (int64_t)e->bytes;
	vals[F_ADDR].i = (int64_t)e->addr;
	vals[F_LEAKED].i = r->leaked && r->leaked[i];
	vals[F_EVENT].s = r->ev[k];
	vals[F_EVENT].len = lens[k];
	*stack_id = e->stack_id;
	*time_ns = e->time_ns;
	return sonde_dl_trace_fname(t, &vals[F_HEAPFUNC], e->func, sonde_heap_func_name);
}

static int64_t run(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		   char *err, size_t errlen)
{
	size_t n;
	struct run r = { .e = sonde_exp_heap_events(exp, &n) };
	bool *leaked = NULL;

	if (n && sonde_dl_uses_field(p, &agg, F_LEAKED)) {
		if (!(leaked = malloc(n * sizeof(*leaked))) || sonde_heap_leaks(exp, leaked, NULL) < 0) {
			free(leaked);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		r.leaked = leaked;
	}
	int64_t rc = sonde_dl_trace_run(p, exp, &agg, n, F_FUNC, F_CALLER, name_of_pc, ctx, fill, &r, err, errlen);

	free(leaked);
	return rc;
}

/* ---- views --------------------------------------------------------------------------- */

static int dump(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err, size_t errlen)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	const struct sonde_heap_event *e = sonde_exp_heap_events(exp, &n);

	fprintf(out, "# %zu heap events of %s, by time; time in seconds since the start\n", n, in->dir);
	for (size_t i = 0; i < n; i++) {
		const char *what = e[i].flags & SONDE_HEAPF_FAILED  ? "failed"
				   : e[i].flags & SONDE_HEAPF_ALLOC ? "alloc"
								    : "free";

		fprintf(out,
			"heap %zu  time %.9f  tid %u  func %s  %s  addr 0x%" PRIx64 "  bytes %" PRIu64
			"  stack 0x%" PRIx64,
			i, sonde_dump_since(in, e[i].time_ns), e[i].tid, sonde_heap_func_name(e[i].func), what,
			e[i].addr, e[i].bytes, e[i].stack_id);
		sonde_dump_stack(out, dyn, exp, e[i].stack_id, e[i].time_ns);
	}
	return 0;
}

/* -header's totals are streamed (sonde_heap_stats): a heap trace can hold
 * more events than fit in memory. */
static void header_text(FILE *out, const struct sonde_exp *exp)
{
	struct sonde_heap_stats hs;

	if (sonde_heap_stats(exp, &hs) < 0)
		return;
	fprintf(out,
		"%-*s%" PRIu64 " allocations (%" PRIu64 " bytes), %" PRIu64 " frees, %" PRIu64 " leaks (%" PRIu64
		" bytes)\n",
		SONDE_HEADER_LABEL_W, "Heap tracing:", hs.any_allocs, hs.any_alloc_bytes, hs.any_frees, hs.m.leaks,
		hs.m.leaked_bytes);
}

static void header_doc(struct sonde_emit *k, const struct sonde_exp *exp)
{
	struct sonde_heap_stats hs;
	bool matched = sonde_heap_stats(exp, &hs) >= 0;

	em_u(k, "allocations", hs.any_allocs);
	em_u(k, "bytes", hs.any_alloc_bytes);
	em_u(k, "frees", hs.any_frees);
	if (matched) {
		em_u(k, "leaks", hs.m.leaks);
		em_u(k, "leaked_bytes", hs.m.leaked_bytes);
	}
}

/* ---- its timeline and report ---- */

/* The live heap after each event, as the leak matching counts it. */
struct walk {
	void (*step)(void *arg, uint64_t t, uint64_t value);
	void *arg;
};

static void walk_step(void *arg, const struct sonde_heap_event *e, uint64_t live)
{
	const struct walk *w = arg;

	w->step(w->arg, e->time_ns, live);
}

static long live_walk(const struct sonde_exp *exp, void (*step)(void *arg, uint64_t t, uint64_t value), void *arg)
{
	struct walk w = { step, arg };
	size_t n = sonde_exp_heap_count(exp);

	if (!n)
		return 0;
	return sonde_heap_walk(exp, walk_step, &w, NULL) < 0 ? -1 : (long)n;
}

static const struct sonde_view_timeline timeline = {
	.counter = "Live heap",
	.counter_arg = "bytes",
	.walk = live_walk,
};

static int leaks(FILE *f, const struct sonde_exp *const *exps, size_t n, const struct sonde_view_opts *o, char *err,
		 size_t errlen)
{
	return sonde_view_heap_stacks(f, exps, n, true, o, err, errlen);
}

static int allocs(FILE *f, const struct sonde_exp *const *exps, size_t n, const struct sonde_view_opts *o, char *err,
		  size_t errlen)
{
	return sonde_view_heap_stacks(f, exps, n, false, o, err, errlen);
}

static const struct sonde_view_report_view report[] = {
	{ "leaks", leaks },
	{ "allocs", allocs },
	{ "heapstat", sonde_view_heapstat },
	{ NULL, NULL },
};

static const struct sonde_view_kind view = {
	.dump = dump,
	.header_text = header_text,
	.header_doc = header_doc,
	.timeline = &timeline,
	.report = report,
	.report_place = 1,
};

const struct sonde_kind_module sonde_kind_module_HEAP = {
	.reader = &reader,
	.model = &model,
	.agg = &agg,
	.view = &view,
};
