/*
 * The MPI kind's timelines (mpi_timeline.h): messages matched from send to
 * receive across the ranks' experiments, the kind's part of the chrome
 * export (views/kind.h's sonde_view_timeline) and its view in the HTML
 * report ("mpi": a lane per rank, the messages, the communication
 * matrix; drawn by lib/views/report/mpi.js).
 *
 * A rank is the experiment's log.xml's (<trace kind="mpi" name="rank">,
 * sonde_exp_mpi_job), which the tracing library confirms after MPI_Init;
 * an experiment without one (the launcher, a singleton's) has no lane.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/u64map.h"
#include "kinds/mpi_timeline.h"
#include "reader/experiment.h"
#include "sonde/format.h"
#include "views/export.h"
#include "views/view_table.h"

/* The experiment's rank, -1 when it has none or no MPI data. */
static int64_t rank_of(const struct sonde_exp *exp)
{
	const struct sonde_mpi_job *job = sonde_exp_mpi_job(exp);

	return job && job->rank >= 0 ? job->rank : -1;
}

/* ---- matching ------------------------------------------------------------------------ */

/* A message as matching sees it: the pair of ranks, the communicator and
 * tag, then sends before receives, each in time order. */
struct ment {
	int32_t src, dst, tag;
	uint8_t dir;
	uint64_t comm, t;
	uint32_t exp;
	size_t msg;
};

static int ment_cmp(const void *a, const void *b)
{
	const struct ment *x = a, *y = b;

#define BY(f)                                   \
	if (x->f != y->f)                       \
		return x->f < y->f ? -1 : 1;
	BY(src) BY(dst) BY(comm) BY(tag) BY(dir) BY(t) BY(exp) BY(msg)
#undef BY
	return 0;
}

static bool same_channel(const struct ment *x, const struct ment *y)
{
	return x->src == y->src && x->dst == y->dst && x->comm == y->comm && x->tag == y->tag;
}

long sonde_mpi_match(const struct sonde_exp *const *exps, size_t n,
		     int (*pair)(void *arg, const struct sonde_mpi_pair *p), void *arg)
{
	struct ment *me = NULL;
	size_t **ci = calloc(n + 1, sizeof(*ci)); /* per experiment, each message's call */
	size_t nme = 0, cap = 0;
	long lost = 0, rc = -1;

	if (!ci)
		return -1;
	for (size_t e = 0; e < n; e++) {
		size_t nm;
		const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(exps[e], &nm);
		int64_t r = rank_of(exps[e]);

		for (size_t j = 0; j < nm; j++) {
			if (m[j].peer < 0) /* MPI_PROC_NULL: no other end */
				continue;
			if (r < 0 || r > INT32_MAX) {
				lost++;
				continue;
			}
			if (nme == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct ment *nb = realloc(me, nc * sizeof(*nb));

				if (!nb)
					goto out;
				me = nb;
				cap = nc;
			}
			bool send = m[j].dir == SONDE_MPI_SEND;

			me[nme++] = (struct ment){ send ? (int32_t)r : m[j].peer, send ? m[j].peer : (int32_t)r,
						   m[j].tag, m[j].dir, m[j].comm, m[j].time_ns, (uint32_t)e, j };
		}
		if (nm && r >= 0 && (!(ci[e] = malloc(nm * sizeof(*ci[e]))) || sonde_exp_mpi_msg_calls(exps[e], ci[e]) < 0))
			goto out;
	}
	if (nme)
		qsort(me, nme, sizeof(*me), ment_cmp);
	for (size_t i = 0; i < nme;) {
		size_t s = i, r, end;

		for (r = s; r < nme && same_channel(&me[r], &me[s]) && me[r].dir == SONDE_MPI_SEND; r++)
			;
		for (end = r; end < nme && same_channel(&me[end], &me[s]); end++)
			;
		size_t ns = r - s, nr = end - r, k = ns < nr ? ns : nr;

		lost += (long)(ns + nr - 2 * k);
		for (size_t q = 0; q < k; q++) {
			const struct ment *a = &me[s + q], *z = &me[r + q];
			struct sonde_mpi_pair p = { a->exp, z->exp, a->msg, z->msg, ci[a->exp][a->msg], ci[z->exp][z->msg] };

			if (pair(arg, &p) < 0)
				goto out;
		}
		i = end;
	}
	rc = lost;
out:
	for (size_t e = 0; e < n; e++)
		free(ci[e]);
	free(ci);
	free(me);
	return rc;
}

/* ---- the chrome export's part --------------------------------------------------------- */

static bool is_span(const struct sonde_exp *exp, size_t i)
{
	size_t n;

	sonde_exp_mpi_calls(exp, &n);
	return i < n;
}

static uint64_t span_dur(const struct sonde_exp *exp, size_t i)
{
	size_t n;
	const struct sonde_mpi_call *c = sonde_exp_mpi_calls(exp, &n);

	return i < n ? c[i].dur_ns : 0;
}

static const char *span_name(const struct sonde_exp *exp, size_t i)
{
	size_t n;
	const struct sonde_mpi_call *c = sonde_exp_mpi_calls(exp, &n);

	return i < n ? sonde_mpi_func_name(c[i].func) : "?";
}

static const char *comm_word(uint64_t comm, char buf[24])
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

/* The call's peer (a rank, or "any", "several", ...), tag, communicator
 * and a collective's bytes. */
static void span_args(struct sonde_xbuf *b, const struct sonde_exp *exp, size_t i)
{
	size_t n;
	const struct sonde_mpi_call *c = sonde_exp_mpi_calls(exp, &n);
	char pb[16], cb[24];

	if (i >= n)
		return;
	xb_s(b, ",\"peer\":");
	if (c[i].peer >= 0)
		xb_i(b, c[i].peer);
	else
		xb_json(b, sonde_mpi_peer_name(c[i].peer, pb));
	xb_s(b, ",\"tag\":");
	xb_i(b, c[i].tag);
	xb_s(b, ",\"comm\":");
	xb_json(b, comm_word(c[i].comm, cb));
	if (c[i].coll_bytes) {
		xb_s(b, ",\"collective_bytes\":");
		xb_u(b, c[i].coll_bytes);
	}
}

static bool process(const struct sonde_exp *exp, char *buf, size_t len, int64_t *order)
{
	int64_t r = rank_of(exp);

	if (r < 0)
		return false;
	snprintf(buf, len, "rank %" PRId64, r);
	*order = r;
	return true;
}

struct flowarg {
	const struct sonde_exp *const *exps;
	int (*arrow)(void *arg, const struct sonde_view_flow *f);
	void *arg;
	long nocall;
};

static int flow_pair(void *arg, const struct sonde_mpi_pair *p)
{
	struct flowarg *fa = arg;

	if (p->send_call == SIZE_MAX || p->recv_call == SIZE_MAX) {
		fa->nocall++;
		return 0;
	}
	size_t nm;
	const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(fa->exps[p->send_exp], &nm);
	size_t nc;

	sonde_exp_mpi_calls(fa->exps[p->send_exp], &nc);
	const struct sonde_mpi_msg *mr = sonde_exp_mpi_msgs(fa->exps[p->recv_exp], &nm);
	size_t ncr;

	sonde_exp_mpi_calls(fa->exps[p->recv_exp], &ncr);
	struct sonde_view_flow f = { p->send_exp, p->recv_exp, p->send_call, p->recv_call, { 0 } };

	/* the receive's bytes: what arrived (a send may be truncated) */
	snprintf(f.name, sizeof(f.name), "%" PRIu64 " bytes, tag %" PRId32, mr[p->recv_msg].bytes,
		 m[p->send_msg].tag);
	return fa->arrow(fa->arg, &f);
}

static long flows(const struct sonde_exp *const *exps, size_t n,
		  int (*arrow)(void *arg, const struct sonde_view_flow *f), void *arg)
{
	struct flowarg fa = { exps, arrow, arg, 0 };
	long lost = sonde_mpi_match(exps, n, flow_pair, &fa);

	return lost < 0 ? -1 : lost + fa.nocall;
}

const struct sonde_view_timeline sonde_mpi_timeline = {
	.cat = "mpi",
	.track = "MPI",
	.dur = span_dur,
	.name = span_name,
	.args = span_args,
	.is_span = is_span,
	.own_track = 1,
	.flows = flows,
	.flow_what = "MPI messages",
	.process = process,
};

/* ---- the report's view ----------------------------------------------------------------- */

/* What the page draws at most: the longest calls, the first messages. */
#define REPORT_CALLS 200000
#define REPORT_MSGS 50000

struct lane {
	int64_t rank;
	uint32_t exp;
};

static int lane_cmp(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->exp > y->exp) - (x->exp < y->exp);
}

struct rcall {
	uint32_t lane;
	uint16_t func;
	uint64_t t, dur;
};

static int rcall_dur_desc(const void *a, const void *b)
{
	const struct rcall *x = a, *y = b;

	return (x->dur < y->dur) - (x->dur > y->dur);
}

static int rcall_time(const void *a, const void *b)
{
	const struct rcall *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->lane > y->lane) - (x->lane < y->lane);
}

struct rmsg {
	uint32_t from, to;
	uint64_t ts, tr, bytes;
};

static int rmsg_time(const void *a, const void *b)
{
	const struct rmsg *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->from > y->from) - (x->from < y->from);
}

struct cell {
	int32_t src, dst;
	uint64_t count, bytes;
};

static int cell_cmp(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return (x->dst > y->dst) - (x->dst < y->dst);
}

struct rview {
	const struct sonde_exp *const *exps;
	uint32_t *lane_of; /* per experiment: its lane, UINT32_MAX none */
	uint64_t t0;
	struct rmsg *msgs;
	size_t nmsgs, cap;
};

static uint64_t since(uint64_t t, uint64_t t0)
{
	return t > t0 ? t - t0 : 0;
}

static int report_pair(void *arg, const struct sonde_mpi_pair *p)
{
	struct rview *rv = arg;
	size_t n;
	const struct sonde_mpi_msg *ms = sonde_exp_mpi_msgs(rv->exps[p->send_exp], &n);
	const struct sonde_mpi_msg *mr = sonde_exp_mpi_msgs(rv->exps[p->recv_exp], &n);

	if (rv->nmsgs == rv->cap) {
		size_t nc = rv->cap ? rv->cap * 2 : 256;
		struct rmsg *nb = realloc(rv->msgs, nc * sizeof(*nb));

		if (!nb)
			return -1;
		rv->msgs = nb;
		rv->cap = nc;
	}
	/* Vampir's line: from the send's start to the receive's completion */
	rv->msgs[rv->nmsgs++] = (struct rmsg){ rv->lane_of[p->send_exp], rv->lane_of[p->recv_exp],
					       since(ms[p->send_msg].time_ns, rv->t0),
					       since(mr[p->recv_msg].time_ns, rv->t0), mr[p->recv_msg].bytes };
	return 0;
}

/* The matrix from the sends (row: the sender's rank, column: the
 * destination), as cells; the ranks' count in *nranks. */
static struct cell *matrix(const struct sonde_exp *const *exps, size_t n, size_t *ncells, int64_t *nranks)
{
	struct u64map at = { 0 };
	struct cell *cells = NULL;
	size_t nc = 0, cap = 0;

	*nranks = 0;
	for (size_t e = 0; e < n; e++) {
		int64_t r = rank_of(exps[e]);
		const struct sonde_mpi_job *job = sonde_exp_mpi_job(exps[e]);
		size_t nm;
		const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(exps[e], &nm);

		if (r < 0 || r > INT32_MAX)
			continue;
		*nranks = r + 1 > *nranks ? r + 1 : *nranks;
		if (job->size > *nranks)
			*nranks = job->size;
		for (size_t j = 0; j < nm; j++) {
			if (m[j].dir != SONDE_MPI_SEND || m[j].peer < 0)
				continue;
			uint64_t key = (uint64_t)r << 32 | (uint32_t)m[j].peer;
			long i = u64map_get(&at, key);

			if (i < 0) {
				if (nc == cap) {
					size_t ncap = cap ? cap * 2 : 64;
					struct cell *nb = realloc(cells, ncap * sizeof(*nb));

					if (!nb)
						goto oom;
					cells = nb;
					cap = ncap;
				}
				if (u64map_put(&at, key, (uint32_t)nc) < 0)
					goto oom;
				cells[nc] = (struct cell){ (int32_t)r, m[j].peer, 0, 0 };
				i = (long)nc++;
			}
			cells[i].count++;
			cells[i].bytes += m[j].bytes;
			*nranks = (int64_t)m[j].peer + 1 > *nranks ? (int64_t)m[j].peer + 1 : *nranks;
		}
	}
	u64map_release(&at);
	if (nc)
		qsort(cells, nc, sizeof(*cells), cell_cmp);
	*ncells = nc;
	if (!cells)
		cells = malloc(1);
	return cells;
oom:
	u64map_release(&at);
	free(cells);
	return NULL;
}

static int report_run(FILE *f, const struct sonde_exp *const *exps, size_t n, const struct sonde_view_opts *o,
		      char *err, size_t errlen)
{
	(void)o;
	struct lane *lanes = calloc(n + 1, sizeof(*lanes));
	struct rview rv = { .exps = exps, .lane_of = malloc((n + 1) * sizeof(uint32_t)), .t0 = UINT64_MAX };
	struct rcall *calls = NULL;
	struct cell *cells = NULL;
	bool *used = calloc(65536, sizeof(*used));
	uint32_t *fidx = malloc(65536 * sizeof(*fidx)); /* function id -> its place in "funcs" */
	size_t nl = 0, ncalls = 0, ncells = 0;
	uint64_t tend = 0;
	int64_t nranks;
	int rc = -1;

	if (!lanes || !rv.lane_of || !used || !fidx)
		goto oom;
	for (size_t e = 0; e < n; e++) {
		int64_t r = rank_of(exps[e]);
		const struct sonde_exp_info *in = sonde_exp_info(exps[e]);
		size_t nc;

		rv.lane_of[e] = UINT32_MAX;
		if (r < 0)
			continue;
		lanes[nl++] = (struct lane){ r, (uint32_t)e };
		sonde_exp_mpi_calls(exps[e], &nc);
		ncalls += nc;
		rv.t0 = in->start_ns < rv.t0 ? in->start_ns : rv.t0;
		tend = in->end_ns > tend ? in->end_ns : tend;
	}
	if (rv.t0 == UINT64_MAX)
		rv.t0 = 0;
	if (nl)
		qsort(lanes, nl, sizeof(*lanes), lane_cmp);
	for (size_t l = 0; l < nl; l++)
		rv.lane_of[lanes[l].exp] = (uint32_t)l;
	calls = malloc((ncalls + 1) * sizeof(*calls));
	if (!calls)
		goto oom;
	ncalls = 0;
	for (size_t l = 0; l < nl; l++) {
		size_t nc;
		const struct sonde_mpi_call *c = sonde_exp_mpi_calls(exps[lanes[l].exp], &nc);

		for (size_t i = 0; i < nc; i++) {
			calls[ncalls++] = (struct rcall){ (uint32_t)l, c[i].func, since(c[i].time_ns, rv.t0), c[i].dur_ns };
			if (c[i].time_ns + c[i].dur_ns > tend)
				tend = c[i].time_ns + c[i].dur_ns;
		}
	}
	size_t allcalls = ncalls;

	if (ncalls > REPORT_CALLS) {
		qsort(calls, ncalls, sizeof(*calls), rcall_dur_desc);
		ncalls = REPORT_CALLS;
	}
	if (ncalls)
		qsort(calls, ncalls, sizeof(*calls), rcall_time);
	long lost = sonde_mpi_match(exps, n, report_pair, &rv);

	if (lost < 0 || !(cells = matrix(exps, n, &ncells, &nranks)))
		goto oom;
	size_t allmsgs = rv.nmsgs;

	if (rv.nmsgs)
		qsort(rv.msgs, rv.nmsgs, sizeof(*rv.msgs), rmsg_time);
	if (rv.nmsgs > REPORT_MSGS)
		rv.nmsgs = REPORT_MSGS;

	/* the functions drawn, numbered in the list's order */
	size_t nf = 0;

	for (size_t i = 0; i < ncalls; i++)
		used[calls[i].func] = true;
	fputs("{\"ranks\":[", f);
	for (size_t l = 0; l < nl; l++) {
		char proc[256];

		sonde_export_process(exps[lanes[l].exp], proc, sizeof(proc));
		fprintf(f, "%s{\"rank\":%" PRId64 ",\"exp\":%" PRIu32 ",\"process\":", l ? "," : "", lanes[l].rank,
			lanes[l].exp);
		vt_json_str(f, proc);
		fputc('}', f);
	}
	fprintf(f, "],\"nranks\":%" PRId64 ",\"span\":%" PRIu64 ",\"funcs\":[", nranks, since(tend, rv.t0));
	for (size_t fn = 0; fn < 65536; fn++) {
		if (!used[fn])
			continue;
		fidx[fn] = (uint32_t)nf;
		fputs(nf++ ? "," : "", f);
		vt_json_str(f, sonde_mpi_func_name((unsigned)fn));
	}
	fprintf(f, "],\"calls_total\":%zu,\"calls\":[", allcalls);
	for (size_t i = 0; i < ncalls; i++)
		fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "", calls[i].lane,
			fidx[calls[i].func], calls[i].t, calls[i].dur);
	fprintf(f, "],\"msgs_total\":%zu,\"unmatched\":%ld,\"msgs\":[", allmsgs, lost);
	for (size_t i = 0; i < rv.nmsgs; i++)
		fprintf(f, "%s[%" PRIu32 ",%" PRIu64 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "",
			rv.msgs[i].from, rv.msgs[i].ts, rv.msgs[i].to, rv.msgs[i].tr, rv.msgs[i].bytes);
	fputs("],\"matrix\":[", f);
	for (size_t i = 0; i < ncells; i++)
		fprintf(f, "%s[%" PRId32 ",%" PRId32 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "", cells[i].src,
			cells[i].dst, cells[i].count, cells[i].bytes);
	fputs("]}\n", f);
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	free(lanes);
	free(rv.lane_of);
	free(rv.msgs);
	free(calls);
	free(cells);
	free(used);
	free(fidx);
	return rc;
}

extern const unsigned char sonde_report_mpi_js[];
extern const unsigned long sonde_report_mpi_js_len;

const struct sonde_view_report_view sonde_mpi_report[] = {
	{ "mpi", report_run },
	{ NULL, NULL },
};

const struct sonde_view_report_script sonde_mpi_report_script = { sonde_report_mpi_js, &sonde_report_mpi_js_len };
