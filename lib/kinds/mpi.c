/*
 * The mpi kind (sonde collect -m, on with -M): MPI calls
 * (SONDE_PKT_MPI_CALL) and the point-to-point messages they started or
 * completed (SONDE_PKT_MPI_MSG, include/sonde/format.h), named by the one
 * function list include/sonde/mpifuncs.h.  The whole kind on the
 * analyzer's side (base/kindmod.h): its reading and the job's settings
 * (rank, size, library, ABI), its metrics (table 2-4 of the reference:
 * MPI Time, Sends, Bytes Sent, Receives, Bytes Received, Other MPI Events;
 * and the collectives' bytes), its -dump and -header.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg/kind.h"
#include "base/grow.h"
#include "kinds/mpi_timeline.h"
#include "model/kind.h"
#include "reader/kind.h"
#include "sonde/mpifuncs.h"
#include "views/kind.h"

/* ---- reading ------------------------------------------------------------------------- */

struct mpi_state {
	struct sonde_mpi_call *calls;
	size_t ncalls, capcalls;
	struct sonde_mpi_msg *msgs;
	size_t nmsgs, capmsgs;
	struct sonde_mpi_job job;
};

static struct mpi_state *state_new(struct sonde_exp *exp)
{
	bool fresh = !sonde_rk_state(exp, SONDE_KIND_MPI);
	struct mpi_state *s = sonde_rk_state_new(exp, SONDE_KIND_MPI, sizeof(*s));

	if (s && fresh)
		s->job.rank = s->job.size = -1;
	return s;
}

/* A peer as the packets may carry one: a rank, or one of the four words. */
static bool peer_ok(int32_t peer)
{
	return peer >= SONDE_MPI_PROC_NULL;
}

/* A function id a reader can name or a later list's: 0 is never one. */
static const char *check_func(const char *what, unsigned func, char *why, size_t whylen)
{
	if (func)
		return NULL;
	snprintf(why, whylen, "%s packet with function id 0", what);
	return why;
}

static const char *take(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const struct sonde_packet *h = (const void *)pkt;

	if (h->type != SONDE_PKT_MPI_CALL && h->type != SONDE_PKT_MPI_MSG)
		return sonde_rk_not_mine;
	if (sonde_rk_again(sc))
		return NULL;

	struct sonde_exp *exp = sonde_rk_exp(sc);

	if (h->type == SONDE_PKT_MPI_CALL) {
		const struct sonde_mpi_call_packet *p = (const void *)pkt;
		const char *bad;

		if (h->size < sizeof(*p))
			return sonde_rk_too_small(why, whylen, "mpi call", h->size, sizeof(*p));
		if ((bad = check_func("mpi call", p->func, why, whylen)))
			return bad;
		if (!peer_ok(p->peer)) {
			snprintf(why, whylen, "mpi call packet with peer %" PRId32, p->peer);
			return why;
		}
		if (p->time_ns + p->dur_ns < p->time_ns) {
			snprintf(why, whylen, "mpi call packet's duration %" PRIu64 " ns runs past the clock",
				 p->dur_ns);
			return why;
		}
		struct mpi_state *s = state_new(exp);

		if (!s)
			return NULL;
		if (sonde_grow(&s->calls, &s->capcalls, s->ncalls + 1, sizeof(*s->calls), 16)) {
			sonde_rk_oom(exp);
			return NULL;
		}
		s->calls[s->ncalls++] = (struct sonde_mpi_call){
			.tid = sonde_rk_tid(sc),
			.func = p->func,
			.flags = p->flags,
			.peer = p->peer,
			.tag = p->tag,
			.comm = p->comm,
			.time_ns = p->time_ns,
			.dur_ns = p->dur_ns,
			.coll_bytes = p->coll_bytes,
			.stack_id = p->stack_id,
		};
		sonde_rk_stack_ref(exp, p->stack_id);
		return NULL;
	}

	const struct sonde_mpi_msg_packet *p = (const void *)pkt;
	const char *bad;

	if (h->size < sizeof(*p))
		return sonde_rk_too_small(why, whylen, "mpi message", h->size, sizeof(*p));
	if ((bad = check_func("mpi message", p->func, why, whylen)))
		return bad;
	if (p->dir != SONDE_MPI_SEND && p->dir != SONDE_MPI_RECV) {
		snprintf(why, whylen, "mpi message packet with direction %u", p->dir);
		return why;
	}
	/* A message has one peer: the destination, or the source its status
	 * named (proc-null: a receive from MPI_PROC_NULL, which completes
	 * with no data). */
	if (p->peer < 0 && p->peer != SONDE_MPI_PROC_NULL) {
		snprintf(why, whylen, "mpi message packet with peer %" PRId32, p->peer);
		return why;
	}
	struct mpi_state *s = state_new(exp);

	if (!s)
		return NULL;
	if (sonde_grow(&s->msgs, &s->capmsgs, s->nmsgs + 1, sizeof(*s->msgs), 16)) {
		sonde_rk_oom(exp);
		return NULL;
	}
	s->msgs[s->nmsgs++] = (struct sonde_mpi_msg){
		.tid = sonde_rk_tid(sc),
		.dir = p->dir,
		.func = p->func,
		.peer = p->peer,
		.tag = p->tag,
		.comm = p->comm,
		.time_ns = p->time_ns,
		.bytes = p->bytes,
		.stack_id = p->stack_id,
	};
	sonde_rk_stack_ref(exp, p->stack_id);
	return NULL;
}

const struct sonde_mpi_call *sonde_exp_mpi_calls(const struct sonde_exp *exp, size_t *n)
{
	const struct mpi_state *s = sonde_rk_state(exp, SONDE_KIND_MPI);

	*n = s ? s->ncalls : 0;
	return s ? s->calls : NULL;
}

const struct sonde_mpi_msg *sonde_exp_mpi_msgs(const struct sonde_exp *exp, size_t *n)
{
	const struct mpi_state *s = sonde_rk_state(exp, SONDE_KIND_MPI);

	*n = s ? s->nmsgs : 0;
	return s ? s->msgs : NULL;
}

const struct sonde_mpi_job *sonde_exp_mpi_job(const struct sonde_exp *exp)
{
	const struct mpi_state *s = sonde_rk_state(exp, SONDE_KIND_MPI);

	return s ? &s->job : NULL;
}

/* Calls and messages: both are events of the kind (-describe, ...). */
static size_t events(const struct sonde_exp *exp)
{
	const struct mpi_state *s = sonde_rk_state(exp, SONDE_KIND_MPI);

	return s ? s->ncalls + s->nmsgs : 0;
}

SONDE_RK_TIME_SORT(sort_calls, struct sonde_mpi_call)
SONDE_RK_TIME_SORT(sort_msgs, struct sonde_mpi_msg)

static void finish(struct sonde_exp *exp)
{
	struct mpi_state *s = sonde_rk_state(exp, SONDE_KIND_MPI);
	size_t n = s ? (s->ncalls > s->nmsgs ? s->ncalls : s->nmsgs) : 0;

	if (n < 2)
		return;
	void *tmp = malloc(n * (sizeof(struct sonde_mpi_call) > sizeof(struct sonde_mpi_msg)
					? sizeof(struct sonde_mpi_call)
					: sizeof(struct sonde_mpi_msg)));

	if (!tmp) {
		sonde_rk_oom(exp);
		return;
	}
	sort_calls(s->calls, tmp, s->ncalls);
	sort_msgs(s->msgs, tmp, s->nmsgs);
	free(tmp);
}

static void free_state(void *state)
{
	struct mpi_state *s = state;

	free(s->calls);
	free(s->msgs);
	free(s);
}

const char *sonde_mpi_func_name(unsigned func)
{
	const struct sonde_mpi_func_desc *d = sonde_mpi_func(func);

	return d ? d->name : "?";
}

const char *sonde_mpi_peer_name(int32_t peer, char buf[16])
{
	switch (peer) {
	case SONDE_MPI_NONE: return "none";
	case SONDE_MPI_ANY: return "any";
	case SONDE_MPI_SEVERAL: return "several";
	case SONDE_MPI_PROC_NULL: return "proc-null";
	}
	if (peer < 0)
		return "?";
	snprintf(buf, 16, "%" PRId32, peer);
	return buf;
}

/* <trace kind="mpi" name="rank|size|library|abi" value="..."/>: the job,
 * as the tracing library learnt it at MPI_Init. */
static void log_trace(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e)
{
	const char *name = sonde_xml_attr(e, "name"), *value = sonde_xml_attr(e, "value");
	struct mpi_state *s;

	if (!name || !value || !(s = state_new(exp)))
		return;
	if (!strcmp(name, "rank") || !strcmp(name, "size")) {
		uint64_t v;

		/* A rank or size past int32 is no MPI job's: left unknown. */
		if (sonde_rk_attr_u64(exp, file, e, "value", &v) && v <= INT32_MAX)
			*(!strcmp(name, "rank") ? &s->job.rank : &s->job.size) = (int64_t)v;
	} else if (!strcmp(name, "library")) {
		s->job.library = value;
	} else if (!strcmp(name, "abi")) {
		s->job.abi = value;
	}
}

static const struct sonde_reader_kind reader = {
	.take = take,
	.events = events,
	.finish = finish,
	.free = free_state,
	.log_trace = log_trace,
};

/* A call by its thread, function and one of its times: its start (sends
 * name it so) or its end (receives). */
struct ckey {
	uint32_t tid;
	uint16_t func;
	uint64_t t;
	size_t call;
};

static int ckey_cmp(const void *a, const void *b)
{
	const struct ckey *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->call > y->call) - (x->call < y->call);
}

/* The first call of k[0..n) with m's key, or SIZE_MAX. */
static size_t call_by(const struct ckey *k, size_t n, const struct sonde_mpi_msg *m)
{
	struct ckey key = { m->tid, m->func, m->time_ns, 0 };
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ckey_cmp(&k[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && k[lo].tid == m->tid && k[lo].func == m->func && k[lo].t == m->time_ns)
		return k[lo].call;
	return SIZE_MAX;
}

/* A send's time is its call's start, a receive's the end of the call that
 * completed it (format.h): so a message names its call exactly. */
int sonde_exp_mpi_msg_calls(const struct sonde_exp *exp, size_t *call)
{
	size_t nc, nm;
	const struct sonde_mpi_call *c = sonde_exp_mpi_calls(exp, &nc);
	const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(exp, &nm);

	for (size_t j = 0; j < nm; j++)
		call[j] = SIZE_MAX;
	if (!nc || !nm)
		return 0;
	struct ckey *start = malloc(nc * sizeof(*start)), *end = malloc(nc * sizeof(*end));

	if (!start || !end) {
		free(start);
		free(end);
		return -1;
	}
	for (size_t i = 0; i < nc; i++) {
		start[i] = (struct ckey){ c[i].tid, c[i].func, c[i].time_ns, i };
		end[i] = (struct ckey){ c[i].tid, c[i].func, c[i].time_ns + c[i].dur_ns, i };
	}
	qsort(start, nc, sizeof(*start), ckey_cmp);
	qsort(end, nc, sizeof(*end), ckey_cmp);
	for (size_t j = 0; j < nm; j++)
		call[j] = call_by(m[j].dir == SONDE_MPI_SEND ? start : end, nc, &m[j]);
	free(start);
	free(end);
	return 0;
}

/* A call with no message (an Irecv, a Wait on sends, a collective, a send
 * to MPI_PROC_NULL if the tracer writes none) is an Other MPI Event. */
int sonde_exp_mpi_traffic(const struct sonde_exp *exp, struct sonde_mpi_traffic *t)
{
	size_t nc, nm;
	const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(exp, &nm);

	sonde_exp_mpi_calls(exp, &nc);
	for (size_t i = 0; i < nc; i++)
		t[i] = (struct sonde_mpi_traffic){ 0 };
	if (!nc || !nm)
		return 0;
	size_t *call = malloc(nm * sizeof(*call));

	if (!call || sonde_exp_mpi_msg_calls(exp, call) < 0) {
		free(call);
		return -1;
	}
	for (size_t j = 0; j < nm; j++) {
		if (call[j] == SIZE_MAX)
			continue;
		struct sonde_mpi_traffic *x = &t[call[j]];
		if (m[j].dir == SONDE_MPI_SEND) {
			x->sends++;
			x->sent += m[j].bytes;
		} else {
			x->recvs++;
			x->received += m[j].bytes;
		}
	}
	free(call);
	return 0;
}

/* ---- metrics ------------------------------------------------------------------------- */

/* Table 2-4 of the reference, and the collectives' bytes, which it leaves
 * out of the point-to-point metrics and users ask for. */
enum { M_TIME, M_SENDS, M_SENT, M_RECVS, M_RECEIVED, M_OTHER, M_COLL, M_N };

static const struct sonde_metric_def metrics[M_N] = {
	[M_TIME] = { "mpitime", "MPI Time", "MPI Time", SONDE_UNIT_NS },
	[M_SENDS] = { "mpisends", "MPI Sends", "MPI Sends", SONDE_UNIT_COUNT },
	[M_SENT] = { "mpibytessent", "MPI Bytes Sent", "MPI Bytes Sent", SONDE_UNIT_BYTES },
	[M_RECVS] = { "mpirecvs", "MPI Receives", "MPI Receives", SONDE_UNIT_COUNT },
	[M_RECEIVED] = { "mpibytesrecv", "MPI Bytes Received", "MPI Bytes Received", SONDE_UNIT_BYTES },
	[M_OTHER] = { "mpiother", "Other MPI Events", "Other MPI Events", SONDE_UNIT_COUNT },
	[M_COLL] = { "mpicollbytes", "MPI Collective Bytes", "MPI Coll Bytes", SONDE_UNIT_BYTES },
};

/* A call's values at its start, with its stack; a message's at its time,
 * with the stack of the call that moved it. */
static int feed(struct sonde_model_feed *f, const struct sonde_exp *exp)
{
	size_t nc, nm;
	const struct sonde_mpi_call *c = sonde_exp_mpi_calls(exp, &nc);
	const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(exp, &nm);
	struct sonde_mpi_traffic *moved = nc ? malloc(nc * sizeof(*moved)) : NULL;
	int r = 0;

	if ((nc && !moved) || sonde_exp_mpi_traffic(exp, moved) < 0) {
		free(moved);
		return -1;
	}
	for (size_t i = 0; i < nc && r == 0; i++) {
		int64_t v[M_N] = { [M_TIME] = (int64_t)c[i].dur_ns,
				   [M_OTHER] = !moved[i].sends && !moved[i].recvs,
				   [M_COLL] = (int64_t)c[i].coll_bytes };

		r = sonde_model_feed_event(f, i, c[i].tid, c[i].time_ns, c[i].stack_id, v);
	}
	for (size_t j = 0; j < nm && r == 0; j++) {
		int64_t v[M_N] = { 0 };

		if (m[j].dir == SONDE_MPI_SEND) {
			v[M_SENDS] = 1;
			v[M_SENT] = (int64_t)m[j].bytes;
		} else {
			v[M_RECVS] = 1;
			v[M_RECEIVED] = (int64_t)m[j].bytes;
		}
		r = sonde_model_feed_event(f, nc + j, m[j].tid, m[j].time_ns, m[j].stack_id, v);
	}
	free(moved);
	return r < 0 ? -1 : 0;
}

static const struct sonde_model_kind model = {
	.metrics = metrics,
	.nmetrics = M_N,
	.default_metrics = "e.mpitime:i.mpitime:e.mpisends:e.mpibytessent:e.mpirecvs:e.mpibytesrecv:e.mpiother:",
	.sort = "mpitime",
	.feed = feed,
};

/* ---- sonde agg ----------------------------------------------------------------------- */

/* One event per call: its time, and the messages it moved summed (a call
 * is what an MPI program writes; a Waitall's three receives are one
 * event of 3 receives), so sum(dur) is MPI Time and count() the calls. */
enum {
	F_TID,
	F_TIME,
	F_DUR,
	F_MPIFUNC,
	F_CLASS,
	F_PEER,
	F_TAG,
	F_COMM,
	F_BYTES,
	F_SENT,
	F_RECEIVED,
	F_SENDS,
	F_RECVS,
	F_COLLBYTES,
	F_DIR,
	F_ERROR,
	F_FUNC,
	F_CALLER,
	F_N
};

static const struct sonde_dl_field fields[F_N] = {
	[F_TID] = { "tid", SONDE_DL_INT, "thread id" },
	[F_TIME] = { "time", SONDE_DL_INT, "nanoseconds since the experiment started (the call's start)" },
	[F_DUR] = { "dur", SONDE_DL_INT, "nanoseconds the call took" },
	[F_MPIFUNC] = { "mpifunc", SONDE_DL_STR, "the MPI function: \"MPI_Send\", \"MPI_Allreduce\", ..." },
	[F_CLASS] = { "class", SONDE_DL_STR,
		      "what the function does (sonde/mpifuncs.h): \"send\", \"recv\", \"irecv\", \"sendrecv\", "
		      "\"wait\", \"coll\", \"rma\", \"other\", ..." },
	[F_PEER] = { "peer", SONDE_DL_INT,
		     "the peer (a point-to-point call's) or root (a collective's) as a rank of MPI_COMM_WORLD; -1 "
		     "none, -2 any source, -3 several, -4 MPI_PROC_NULL" },
	[F_TAG] = { "tag", SONDE_DL_INT, "a point-to-point call's tag (-1: any), else 0" },
	[F_COMM] = { "comm", SONDE_DL_STR, "the communicator: \"world\", \"self\", \"none\" or its id \"0x...\"" },
	[F_BYTES] = { "bytes", SONDE_DL_INT, "bytes the call moved: point-to-point sent and received, and collective" },
	[F_SENT] = { "sent", SONDE_DL_INT, "bytes of the point-to-point sends the call started" },
	[F_RECEIVED] = { "received", SONDE_DL_INT, "bytes of the point-to-point receives the call completed" },
	[F_SENDS] = { "sends", SONDE_DL_INT, "point-to-point sends the call started" },
	[F_RECVS] = { "recvs", SONDE_DL_INT, "point-to-point receives the call completed" },
	[F_COLLBYTES] = { "collbytes", SONDE_DL_INT, "a collective's bytes on this rank (sent plus received)" },
	[F_DIR] = { "dir", SONDE_DL_STR,
		    "\"send\", \"recv\", \"sendrecv\": what point-to-point messages the call moved; \"none\": "
		    "an Other MPI Event" },
	[F_ERROR] = { "error", SONDE_DL_INT, "1 when the call returned an error, else 0" },
	[F_FUNC] = { "func", SONDE_DL_STR, "function that made the call (the stack's leaf)" },
	[F_CALLER] = { "caller", SONDE_DL_STR, "function that called func" },
};

static int64_t run(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		   char *err, size_t errlen);

static const struct sonde_dl_kind agg = {
	.name = "mpi",
	.fields = fields,
	.nfields = F_N,
	.doc = "one event per traced MPI call, with the messages it moved (sonde collect -M, -m)",
	.run = run,
};

static const char *class_name(unsigned cls)
{
	static const char *const names[] = {
		[SONDE_MPI_C_OTHER] = "other",	     [SONDE_MPI_C_SEND] = "send",
		[SONDE_MPI_C_RECV] = "recv",	     [SONDE_MPI_C_IRECV] = "irecv",
		[SONDE_MPI_C_SENDRECV] = "sendrecv", [SONDE_MPI_C_ISENDRECV] = "isendrecv",
		[SONDE_MPI_C_PINIT] = "pinit",	     [SONDE_MPI_C_START] = "start",
		[SONDE_MPI_C_WAIT] = "wait",	     [SONDE_MPI_C_PROBE] = "probe",
		[SONDE_MPI_C_COLL] = "coll",	     [SONDE_MPI_C_RMA] = "rma",
		[SONDE_MPI_C_INIT] = "init",	     [SONDE_MPI_C_FINALIZE] = "finalize",
		[SONDE_MPI_C_ABORT] = "abort",	     [SONDE_MPI_C_FILE] = "file",
	};
	return sonde_rk_name_in(names, sizeof(names) / sizeof(names[0]), cls);
}

/* A function's class word, "?" for an id past the list. */
static const char *func_class(unsigned func)
{
	const struct sonde_mpi_func_desc *d = sonde_mpi_func(func);

	return d ? class_name(d->cls) : "?";
}

static const char *comm_name(uint64_t comm, char buf[24]);

struct run {
	const struct sonde_mpi_call *c;
	const struct sonde_mpi_traffic *t;
	bool want_comm;
};

static int fill(struct sonde_dl_trace *t, void *arg, size_t i, struct sonde_dl_val *vals, uint64_t *stack_id,
		uint64_t *time_ns)
{
	const struct run *r = arg;
	const struct sonde_mpi_call *c = &r->c[i];
	const struct sonde_mpi_traffic *tr = &r->t[i];

	vals[F_TID].i = c->tid;
	vals[F_TIME].i = (int64_t)(c->time_ns - t->start);
	vals[F_DUR].i = (int64_t)c->dur_ns;
	vals[F_PEER].i = c->peer;
	vals[F_TAG].i = c->tag;
	vals[F_SENT].i = (int64_t)tr->sent;
	vals[F_RECEIVED].i = (int64_t)tr->received;
	vals[F_SENDS].i = tr->sends;
	vals[F_RECVS].i = tr->recvs;
	vals[F_COLLBYTES].i = (int64_t)c->coll_bytes;
	vals[F_BYTES].i = (int64_t)(tr->sent + tr->received + c->coll_bytes);
	vals[F_ERROR].i = !!(c->flags & SONDE_MPIF_ERROR);
	*stack_id = c->stack_id;
	*time_ns = c->time_ns;
	if (r->want_comm) {
		char buf[24];

		if (sonde_dl_trace_str(t, &vals[F_COMM], comm_name(c->comm, buf)) < 0)
			return -1;
	}
	const char *dir = tr->sends && tr->recvs ? "sendrecv" : tr->sends ? "send" : tr->recvs ? "recv" : "none";

	/* (_fname keeps one name per function id: the MPI function's.) */
	if (sonde_dl_trace_str(t, &vals[F_DIR], dir) < 0 ||
	    sonde_dl_trace_str(t, &vals[F_CLASS], func_class(c->func)) < 0)
		return -1;
	return sonde_dl_trace_fname(t, &vals[F_MPIFUNC], c->func, sonde_mpi_func_name);
}

static int64_t run(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		   char *err, size_t errlen)
{
	size_t n;
	struct run r = { sonde_exp_mpi_calls(exp, &n), NULL, sonde_dl_uses_field(p, &agg, F_COMM) };
	struct sonde_mpi_traffic *t = n ? malloc(n * sizeof(*t)) : NULL;

	if ((n && !t) || sonde_exp_mpi_traffic(exp, t) < 0) {
		free(t);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r.t = t;
	int64_t k = sonde_dl_trace_run(p, exp, &agg, n, F_FUNC, F_CALLER, name_of_pc, ctx, fill, &r, err, errlen);

	free(t);
	return k;
}

/* ---- views --------------------------------------------------------------------------- */

static const char *comm_name(uint64_t comm, char buf[24])
{
	if (comm == SONDE_MPI_COMM_WORLD)
		return "world";
	if (comm == SONDE_MPI_COMM_SELF)
		return "self";
	if (comm == SONDE_MPI_COMM_NONE)
		return "none";
	snprintf(buf, 24, "0x%" PRIx64, comm);
	return buf;
}

static const char *func_name(unsigned func, char buf[16])
{
	const struct sonde_mpi_func_desc *d = sonde_mpi_func(func);

	if (d)
		return d->name;
	snprintf(buf, 16, "MPI#%u", func);
	return buf;
}

static void dump_call(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, size_t i,
		      const struct sonde_mpi_call *c)
{
	char fb[16], pb[16], cb[24];

	fprintf(out,
		"mpi call %zu  time %.9f  tid %u  func %s  peer %s  tag %" PRId32 "  comm %s  dur %" PRIu64
		" ns  coll_bytes %" PRIu64 "%s%s  stack 0x%" PRIx64,
		i, sonde_dump_since(sonde_exp_info(exp), c->time_ns), c->tid, func_name(c->func, fb),
		sonde_mpi_peer_name(c->peer, pb), c->tag, comm_name(c->comm, cb), c->dur_ns, c->coll_bytes,
		c->flags & SONDE_MPIF_ERROR ? "  error" : "", c->flags & SONDE_MPIF_FORTRAN ? "  fortran" : "",
		c->stack_id);
	sonde_dump_stack(out, dyn, exp, c->stack_id, c->time_ns);
}

static void dump_msg(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, size_t i,
		     const struct sonde_mpi_msg *m)
{
	char fb[16], pb[16], cb[24];

	fprintf(out,
		"mpi msg %zu  time %.9f  tid %u  %s  func %s  peer %s  tag %" PRId32 "  comm %s  bytes %" PRIu64
		"  stack 0x%" PRIx64,
		i, sonde_dump_since(sonde_exp_info(exp), m->time_ns), m->tid,
		m->dir == SONDE_MPI_SEND ? "send" : "recv", func_name(m->func, fb), sonde_mpi_peer_name(m->peer, pb),
		m->tag, comm_name(m->comm, cb), m->bytes, m->stack_id);
	sonde_dump_stack(out, dyn, exp, m->stack_id, m->time_ns);
}

/* Calls and messages merged by time; at one time a call comes before the
 * messages it made. */
static int dump(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	const struct sonde_mpi_job *job = sonde_exp_mpi_job(exp);
	size_t nc, nm, i = 0, j = 0;
	const struct sonde_mpi_call *c = sonde_exp_mpi_calls(exp, &nc);
	const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(exp, &nm);

	fprintf(out, "# %zu MPI calls and %zu messages of %s, by time; time in seconds since the start\n", nc, nm,
		in->dir);
	if (job)
		fprintf(out, "# rank %" PRId64 " of %" PRId64 ", abi %s, library %s\n", job->rank, job->size,
			job->abi ? job->abi : "?", job->library ? job->library : "?");
	while (i < nc || j < nm) {
		if (j >= nm || (i < nc && c[i].time_ns <= m[j].time_ns)) {
			dump_call(out, dyn, exp, i, &c[i]);
			i++;
		} else {
			dump_msg(out, dyn, exp, j, &m[j]);
			j++;
		}
	}
	return 0;
}

struct totals {
	size_t calls, sends, recvs;
	uint64_t sent, received, coll, time_ns;
};

static struct totals totals(const struct sonde_exp *exp)
{
	struct totals t = { 0 };
	size_t nm;
	const struct sonde_mpi_call *c = sonde_exp_mpi_calls(exp, &t.calls);
	const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(exp, &nm);

	for (size_t i = 0; i < t.calls; i++) {
		t.time_ns += c[i].dur_ns;
		t.coll += c[i].coll_bytes;
	}
	for (size_t i = 0; i < nm; i++)
		if (m[i].dir == SONDE_MPI_SEND) {
			t.sends++;
			t.sent += m[i].bytes;
		} else {
			t.recvs++;
			t.received += m[i].bytes;
		}
	return t;
}

static void header_text(FILE *out, const struct sonde_exp *exp)
{
	struct totals t = totals(exp);
	const struct sonde_mpi_job *job = sonde_exp_mpi_job(exp);

	fprintf(out, "%-*s", SONDE_HEADER_LABEL_W, "MPI tracing:");
	if (job && job->rank >= 0)
		fprintf(out, "rank %" PRId64 " of %" PRId64 ", ", job->rank, job->size);
	fprintf(out,
		"%zu calls (%.3f s), %zu sends (%" PRIu64 " bytes), %zu receives (%" PRIu64 " bytes), %" PRIu64
		" collective bytes\n",
		t.calls, (double)t.time_ns / 1e9, t.sends, t.sent, t.recvs, t.received, t.coll);
	if (job && (job->library || job->abi))
		fprintf(out, "%-*s%s (%s)\n", SONDE_HEADER_LABEL_W, "MPI library:", job->library ? job->library : "?",
			job->abi ? job->abi : "?");
}

static void header_doc(struct sonde_emit *k, const struct sonde_exp *exp)
{
	struct totals t = totals(exp);
	const struct sonde_mpi_job *job = sonde_exp_mpi_job(exp);

	em_i(k, "rank", job ? job->rank : -1);
	em_i(k, "size", job ? job->size : -1);
	if (job && job->abi)
		em_s(k, "abi", job->abi);
	if (job && job->library)
		em_s(k, "library", job->library);
	em_u(k, "calls", t.calls);
	em_u(k, "time_ns", t.time_ns);
	em_u(k, "sends", t.sends);
	em_u(k, "bytes_sent", t.sent);
	em_u(k, "receives", t.recvs);
	em_u(k, "bytes_received", t.received);
	em_u(k, "collective_bytes", t.coll);
}

static const struct sonde_view_kind view = {
	.dump = dump,
	.header_text = header_text,
	.header_doc = header_doc,
	.header_omit_untraced = true,
	.timeline = &sonde_mpi_timeline,
	.report = sonde_mpi_report,
	.report_place = 4,
	.report_script = &sonde_mpi_report_script,
};

const struct sonde_kind_module sonde_kind_module_MPI = {
	.reader = &reader,
	.model = &model,
	.agg = &agg,
	.view = &view,
};
