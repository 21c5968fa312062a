/*
 * The mpi kind (sonde collect -m, on with -M): MPI calls
 * (SONDE_PKT_MPI_CALL) and the point-to-point messages they started or
 * completed (SONDE_PKT_MPI_MSG, include/sonde/format.h), named by the one
 * function list include/sonde/mpifuncs.h.  The whole kind on the
 * analyzer's side (base/kindmod.h): its reading and the job's settings
 * (rank, size, library, ABI), its -dump and -header.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
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
};

const struct sonde_kind_module sonde_kind_module_MPI = {
	.reader = &reader,
	.view = &view,
};
