/*
 * The MPI views of sonde print: -mpi (the traced calls by function, the
 * messages by peer and by size, over every experiment selected: all the
 * ranks of a job) and -ranks (a row per rank's experiment, and per call
 * site how the slowest rank's MPI time stands against the ranks' mean).
 * Read from the MPI kind's events (reader/experiment.h: sonde_exp_mpi_*).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/u64map.h"
#include "symbols/symbols.h"
#include "views/view.h"
#include "views/view_common.h"
#include "views/view_exp.h"

static int oom(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* -time: whether time t of exp is in the window. */
static bool in_window(const struct sonde_view_opts *o, const struct sonde_exp *exp, uint64_t t)
{
	uint64_t t0 = sonde_exp_info(exp)->start_ns, rel = t >= t0 ? t - t0 : 0;

	return rel >= o->start_ns && (!o->end_ns || rel < o->end_ns);
}

/* ---- -mpi ---------------------------------------------------------------------------- */

/* One row: a function's calls and what they moved, a peer's, a size's. */
struct row {
	int64_t key; /* function id, peer rank, or size bucket */
	uint64_t calls, time_ns, sends, sent, recvs, received, coll;
};

struct rows {
	struct row *v;
	size_t n, cap;
};

static struct row *row_of(struct rows *r, int64_t key)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].key == key)
			return &r->v[i];
	if (sonde_grow(&r->v, &r->cap, r->n + 1, sizeof(*r->v), 16))
		return NULL;
	r->v[r->n] = (struct row){ .key = key };
	return &r->v[r->n++];
}

/* Message sizes in buckets of powers of 4: 0, 1-3, 4-15, ..., the last
 * from 1 GiB up. */
#define NSIZES 17
static uint64_t size_lo(int b)
{
	return b == 0 ? 0 : 1ull << (2 * (b - 1));
}

static int size_bucket(uint64_t bytes)
{
	int b = 0;

	while (b + 1 < NSIZES && bytes >= size_lo(b + 1))
		b++;
	return b;
}

static void size_label(int b, char *buf, size_t cap)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB" };
	uint64_t lo = size_lo(b), hi = b + 1 < NSIZES ? size_lo(b + 1) - 1 : 0;
	int ul = 0, uh = 0;

	if (b == 0) {
		snprintf(buf, cap, "0 B");
		return;
	}
	while (lo >= 1024 && !(lo % 1024) && ul < 3)
		lo /= 1024, ul++;
	if (!hi) {
		snprintf(buf, cap, "%" PRIu64 " %s and more", lo, unit[ul]);
		return;
	}
	/* hi is 4^k - 1: shown as the next bucket's low end, exclusive */
	hi++;
	while (hi >= 1024 && !(hi % 1024) && uh < 3)
		hi /= 1024, uh++;
	snprintf(buf, cap, "%" PRIu64 " %s - %" PRIu64 " %s", lo, unit[ul], hi, unit[uh]);
}

static int cmp_time(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_key(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static void row_out(struct sonde_emit *em, const char *kind, const char *name, const struct row *r, bool calls)
{
	em_row(em);
	em_s_csv(em, "kind", kind);
	em_s(em, "name", name);
	if (calls) {
		em_u(em, "calls", r->calls);
		em_u(em, "time_ns", r->time_ns);
	} else {
		em_csv(em, ",,");
	}
	em_u(em, "sends", r->sends);
	em_u(em, "bytes_sent", r->sent);
	em_u(em, "receives", r->recvs);
	em_u(em, "bytes_received", r->received);
	if (calls)
		em_u(em, "collective_bytes", r->coll);
	else
		em_csv(em, ",");
	em_row_end(em);
	if (calls)
		em_text(em, "%-28s %9" PRIu64 " %12.6f %8" PRIu64 " %14" PRIu64 " %8" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n",
			name, r->calls, r->time_ns / 1e9, r->sends, r->sent, r->recvs, r->received, r->coll);
	else
		em_text(em, "%-28s %8" PRIu64 " %14" PRIu64 " %8" PRIu64 " %14" PRIu64 "\n", name, r->sends, r->sent,
			r->recvs, r->received);
}

static void rows_add(struct row *t, const struct row *r)
{
	t->calls += r->calls;
	t->time_ns += r->time_ns;
	t->sends += r->sends;
	t->sent += r->sent;
	t->recvs += r->recvs;
	t->received += r->received;
	t->coll += r->coll;
}

int sonde_view_mpi(FILE *f, const struct sonde_exp *const *exps, size_t n, const struct sonde_view_opts *o,
		   char *err, size_t errlen)
{
	struct rows fn = { 0 }, peer = { 0 }, size = { 0 };
	struct sonde_sample_sel **sels = calloc(n ? n : 1, sizeof(*sels));
	struct sonde_mpi_traffic *tr = NULL;
	size_t ntr = 0;
	bool ok = sels != NULL;

	for (size_t e = 0; ok && e < n; e++) {
		char serr[256];

		if (sonde_sample_sel_new(&sels[e], exps[e], o->sample_select, serr, sizeof(serr)) < 0) {
			snprintf(err, errlen, "%s", serr);
			ok = false;
			break;
		}
		size_t nc, nm;
		const struct sonde_mpi_call *c = sonde_exp_mpi_calls(exps[e], &nc);
		const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(exps[e], &nm);

		if (nc > ntr) {
			free(tr);
			ntr = nc;
			if (!(tr = malloc(nc * sizeof(*tr)))) {
				ok = false;
				break;
			}
		}
		if (nc && sonde_exp_mpi_traffic(exps[e], tr) < 0) {
			ok = false;
			break;
		}
		for (size_t i = 0; i < nc; i++) {
			if (!sonde_sample_sel_has(sels[e], c[i].time_ns) || !in_window(o, exps[e], c[i].time_ns))
				continue;
			struct row *r = row_of(&fn, c[i].func), *p = row_of(&peer, c[i].peer);

			if (!r || !p) {
				ok = false;
				break;
			}
			struct row d = { .calls = 1, .time_ns = c[i].dur_ns, .sends = tr[i].sends, .sent = tr[i].sent,
					 .recvs = tr[i].recvs, .received = tr[i].received, .coll = c[i].coll_bytes };

			rows_add(r, &d);
			p->calls++;
			p->time_ns += c[i].dur_ns;
		}
		/* peers and sizes from the messages themselves: a Waitall's
		 * receives from three ranks are three peers' */
		for (size_t j = 0; ok && j < nm; j++) {
			if (!sonde_sample_sel_has(sels[e], m[j].time_ns) || !in_window(o, exps[e], m[j].time_ns))
				continue;
			struct row *p = row_of(&peer, m[j].peer), *s = row_of(&size, size_bucket(m[j].bytes));

			if (!p || !s) {
				ok = false;
				break;
			}
			if (m[j].dir == SONDE_MPI_SEND) {
				p->sends++, s->sends++;
				p->sent += m[j].bytes, s->sent += m[j].bytes;
			} else {
				p->recvs++, s->recvs++;
				p->received += m[j].bytes, s->received += m[j].bytes;
			}
		}
	}
	for (size_t e = 0; sels && e < n; e++)
		sonde_sample_sel_free(sels[e]);
	free(sels);
	free(tr);
	if (!ok) {
		free(fn.v), free(peer.v), free(size.v);
		return err[0] ? -1 : oom(err, errlen);
	}
	if (fn.n > 1)
		qsort(fn.v, fn.n, sizeof(*fn.v), cmp_time);
	if (peer.n > 1)
		qsort(peer.v, peer.n, sizeof(*peer.v), cmp_key);
	if (size.n > 1)
		qsort(size.v, size.n, sizeof(*size.v), cmp_key);

	struct sonde_emit em;
	struct row total = { 0 };
	char name[48];

	for (size_t i = 0; i < fn.n; i++)
		rows_add(&total, &fn.v[i]);
	em_init(&em, f, o->mode);
	em_csv(&em, "kind,name,calls,time_ns,sends,bytes_sent,receives,bytes_received,collective_bytes\n");
	em_obj(&em, NULL);
	em_s(&em, "view", "mpi");
	em_text(&em, "MPI calls by function, sorted by MPI time\n\n");
	em_text(&em, "%-28s %9s %12s %8s %14s %8s %14s %14s\n", "Function", "Calls", "MPI Time", "Sends", "Bytes Sent",
		"Receives", "Bytes Received", "Coll. Bytes");
	em_arr(&em, "functions");
	row_out(&em, "function", "<Total>", &total, true);
	for (size_t i = 0; i < fn.n && (!o->limit || i < o->limit); i++) {
		const char *fname = sonde_mpi_func_name((unsigned)fn.v[i].key);

		if (!strcmp(fname, "?"))
			snprintf(name, sizeof(name), "MPI#%" PRId64, fn.v[i].key);
		row_out(&em, "function", strcmp(fname, "?") ? fname : name, &fn.v[i], true);
	}
	em_end(&em);

	em_text(&em, "\nMPI by peer (ranks of MPI_COMM_WORLD): calls naming it, messages to and from it\n\n");
	em_text(&em, "%-28s %9s %12s %8s %14s %8s %14s\n", "Peer", "Calls", "MPI Time", "Sends", "Bytes Sent",
		"Receives", "Bytes Received");
	em_arr(&em, "peers");
	for (size_t i = 0; i < peer.n; i++) {
		const struct row *r = &peer.v[i];
		char pb[16];

		em_row(&em);
		em_s_csv(&em, "kind", "peer");
		em_s(&em, "name", sonde_mpi_peer_name((int32_t)r->key, pb));
		em_u(&em, "calls", r->calls);
		em_u(&em, "time_ns", r->time_ns);
		em_u(&em, "sends", r->sends);
		em_u(&em, "bytes_sent", r->sent);
		em_u(&em, "receives", r->recvs);
		em_u(&em, "bytes_received", r->received);
		em_csv(&em, ",");
		em_row_end(&em);
		em_text(&em, "%-28s %9" PRIu64 " %12.6f %8" PRIu64 " %14" PRIu64 " %8" PRIu64 " %14" PRIu64 "\n",
			sonde_mpi_peer_name((int32_t)r->key, pb), r->calls, r->time_ns / 1e9, r->sends, r->sent, r->recvs,
			r->received);
	}
	em_end(&em);

	em_text(&em, "\nMPI messages by size\n\n");
	em_text(&em, "%-28s %8s %14s %8s %14s\n", "Size", "Sends", "Bytes Sent", "Receives", "Bytes Received");
	em_arr(&em, "sizes");
	for (size_t i = 0; i < size.n; i++) {
		size_label((int)size.v[i].key, name, sizeof(name));
		row_out(&em, "size", name, &size.v[i], false);
	}
	em_end(&em);
	em_end_doc(&em);
	free(fn.v), free(peer.v), free(size.v);
	return vw_finish(f, err, errlen);
}

/* ---- -ranks -------------------------------------------------------------------------- */

/* A call site: an MPI function and the function that called it. */
struct site {
	uint16_t func;
	const char *caller; /* interned in struct ranks' names */
	uint64_t *time;	    /* per rank (index in struct ranks) */
	uint64_t calls;
};

struct rank {
	const struct sonde_exp *exp;
	int64_t rank;
	const char *name;
	uint64_t cpu, mpi, work, wait, calls, sent, received;
	bool states;
};

struct ranks {
	struct rank *r;
	size_t n, cap;
	struct site *s;
	size_t ns, caps;
	struct u64map sitemap; /* (func << 32 | name index) -> site */
	char **names;
	size_t nnames, capnames;
};

static long name_index(struct ranks *k, const char *name)
{
	for (size_t i = 0; i < k->nnames; i++)
		if (!strcmp(k->names[i], name))
			return (long)i;
	char *d = strdup(name);

	if (!d || sonde_grow(&k->names, &k->capnames, k->nnames + 1, sizeof(*k->names), 16)) {
		free(d);
		return -1;
	}
	k->names[k->nnames] = d;
	return (long)k->nnames++;
}

/* The function that called MPI: the stack's first frame outside sonde's
 * own objects (the tracing library's wrapper), by o's names. */
static const char *caller_name(struct sonde_syms *sy, const struct sonde_exp *e, uint64_t stack_id, uint64_t t,
			       enum sonde_namefmt names)
{
	const struct sonde_stack *st = stack_id ? sonde_exp_stack(e, stack_id) : NULL;

	for (size_t k = 0; sy && st && k < st->depth; k++) {
		const struct sonde_func *sf = sonde_syms_frame(sy, &st->frame[k], t);

		if (sf->object && sf->object->sonde)
			continue;
		return sonde_view_symname(sf, names);
	}
	return "<no stack>";
}

static int cmp_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Sites by the time the slowest rank lost against the mean, most first. */
static size_t g_nranks;
static int cmp_site(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	uint64_t xm = 0, ym = 0, xs = 0, ys = 0;

	for (size_t i = 0; i < g_nranks; i++) {
		xm = x->time[i] > xm ? x->time[i] : xm;
		ym = y->time[i] > ym ? y->time[i] : ym;
		xs += x->time[i];
		ys += y->time[i];
	}
	/* max - mean, compared as nranks * max - sum */
	int64_t xl = (int64_t)(g_nranks * xm - xs), yl = (int64_t)(g_nranks * ym - ys);

	if (xl != yl)
		return xl > yl ? -1 : 1;
	if (xs != ys)
		return xs > ys ? -1 : 1;
	return x->func != y->func ? (x->func < y->func ? -1 : 1) : strcmp(x->caller, y->caller);
}

static void ranks_release(struct ranks *k)
{
	for (size_t i = 0; i < k->ns; i++)
		free(k->s[i].time);
	for (size_t i = 0; i < k->nnames; i++)
		free(k->names[i]);
	free(k->names);
	free(k->s);
	free(k->r);
	u64map_release(&k->sitemap);
}

int sonde_view_ranks(FILE *f, const struct sonde_exp_set *set, const struct sonde_view_opts *o, char *err,
		     size_t errlen)
{
	struct ranks k = { 0 };
	bool ok = true;

	/* the selected experiments that are ranks: by the tree's identity
	 * (M_r<N>.er), else by what their log.xml says */
	for (size_t i = 0; i < set->nsel; i++) {
		const struct sonde_exp *e = set->sel[i];
		const struct sonde_mpi_job *job = sonde_exp_mpi_job(e);
		int64_t rank = job ? job->rank : -1;
		const char *name = sonde_exp_info(e)->name;

		for (size_t t = 0; t < set->tree->n; t++)
			if (set->tree->exps[t] == e && set->tree->node[t].rank >= 0)
				rank = set->tree->node[t].rank;
		if (rank < 0)
			continue;
		if (sonde_grow(&k.r, &k.cap, k.n + 1, sizeof(*k.r), 16))
			goto nomem;
		k.r[k.n++] = (struct rank){ .exp = e, .rank = rank, .name = name };
	}
	if (!k.n) {
		ranks_release(&k);
		snprintf(err, errlen, "no experiment selected is an MPI rank's (M_r<N>.er, or MPI tracing's rank in "
				      "its log.xml): record with sonde collect -M");
		return -SONDE_ERR_NOT_RECORDED;
	}
	qsort(k.r, k.n, sizeof(*k.r), cmp_rank);
	for (size_t x = 0; x < k.n; x++) {
		struct rank *r = &k.r[x];
		const struct sonde_exp *e = r->exp;
		size_t nc, nm;
		const struct sonde_mpi_call *c = sonde_exp_mpi_calls(e, &nc);
		const struct sonde_mpi_msg *m = sonde_exp_mpi_msgs(e, &nm);
		struct sonde_sample_iter it;
		struct sonde_sample s;

		r->cpu = sonde_exp_summary(e)->weight_ns;
		sonde_sample_iter_init(&it, e);
		while (sonde_sample_iter_next(&it, &s))
			if (s.state == SONDE_STATE_MPI_WORK)
				r->work += s.weight_ns, r->states = true;
			else if (s.state == SONDE_STATE_MPI_WAIT)
				r->wait += s.weight_ns, r->states = true;
		for (size_t j = 0; j < nm; j++)
			if (m[j].dir == SONDE_MPI_SEND)
				r->sent += m[j].bytes;
			else
				r->received += m[j].bytes;
		struct sonde_syms *sy = nc ? sonde_syms_open(e) : NULL;
		struct u64map bystack = { 0 }; /* stack id -> name index, this rank's */

		for (size_t i = 0; ok && i < nc; i++) {
			r->calls++;
			r->mpi += c[i].dur_ns;
			long ni = u64map_get(&bystack, c[i].stack_id);

			if (ni < 0) {
				ni = name_index(&k, caller_name(sy, e, c[i].stack_id, c[i].time_ns, o->names));
				if (ni < 0 || u64map_put(&bystack, c[i].stack_id, (uint32_t)ni)) {
					ok = false;
					break;
				}
			}
			uint64_t key = (uint64_t)c[i].func << 32 | (uint64_t)ni;
			long si = u64map_get(&k.sitemap, key);

			if (si < 0) {
				if (sonde_grow(&k.s, &k.caps, k.ns + 1, sizeof(*k.s), 16) ||
				    u64map_put(&k.sitemap, key, (uint32_t)k.ns)) {
					ok = false;
					break;
				}
				k.s[k.ns] = (struct site){ c[i].func, k.names[ni], calloc(k.n, sizeof(uint64_t)), 0 };
				if (!k.s[k.ns].time) {
					ok = false;
					break;
				}
				si = (long)k.ns++;
			}
			k.s[si].time[x] += c[i].dur_ns;
			k.s[si].calls++;
		}
		u64map_release(&bystack);
		if (sy)
			sonde_syms_close(sy);
		if (!ok)
			goto nomem;
	}
	g_nranks = k.n;
	if (k.ns > 1)
		qsort(k.s, k.ns, sizeof(*k.s), cmp_site);

	bool states = false;

	for (size_t x = 0; x < k.n; x++)
		states |= k.r[x].states;

	struct sonde_emit em;
	struct rank tot = { 0 };

	em_init(&em, f, o->mode);
	em_csv(&em, "kind,rank,experiment,function,caller,cpu_ns,mpi_ns,mpi_work_ns,mpi_wait_ns,calls,bytes_sent,"
		    "bytes_received,max_ns,mean_ns,imbalance\n");
	em_obj(&em, NULL);
	em_s(&em, "view", "ranks");
	em_u(&em, "ranks", k.n);
	em_text(&em, "MPI ranks: CPU time and MPI time of each rank%s\n\n",
		states ? "; MPI Work and MPI Wait from clock profiling" : "");
	if (states)
		em_text(&em, "%7s  %-16s %12s %12s %12s %12s %9s %14s %14s\n", "Rank", "Experiment", "CPU", "MPI Time",
			"MPI Work", "MPI Wait", "Calls", "Bytes Sent", "Bytes Recvd");
	else
		em_text(&em, "%7s  %-16s %12s %12s %9s %14s %14s\n", "Rank", "Experiment", "CPU", "MPI Time", "Calls",
			"Bytes Sent", "Bytes Recvd");
	em_arr(&em, "rows");
	for (size_t x = 0; x <= k.n; x++) {
		const struct rank *r = x < k.n ? &k.r[x] : &tot;

		if (x < k.n) {
			tot.cpu += r->cpu, tot.mpi += r->mpi, tot.work += r->work, tot.wait += r->wait;
			tot.calls += r->calls, tot.sent += r->sent, tot.received += r->received;
		}
		char rb[24];

		snprintf(rb, sizeof(rb), "%" PRId64, r->rank);
		const char *rs = x < k.n ? rb : "<Total>", *ename = x < k.n ? r->name : "";

		em_row(&em);
		em_s_csv(&em, "kind", x < k.n ? "rank" : "total");
		if (x < k.n)
			em_i(&em, "rank", r->rank);
		else
			em_null(&em, "rank");
		em_s(&em, "experiment", ename);
		em_csv(&em, ",,");
		em_u(&em, "cpu_ns", r->cpu);
		em_u(&em, "mpi_ns", r->mpi);
		if (states) {
			em_u(&em, "mpi_work_ns", r->work);
			em_u(&em, "mpi_wait_ns", r->wait);
		} else {
			em_csv(&em, ",,");
		}
		em_u(&em, "calls", r->calls);
		em_u(&em, "bytes_sent", r->sent);
		em_u(&em, "bytes_received", r->received);
		em_csv(&em, ",,,");
		em_row_end(&em);
		if (states)
			em_text(&em,
				"%7s  %-16s %12.6f %12.6f %12.6f %12.6f %9" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n",
				rs, ename, r->cpu / 1e9, r->mpi / 1e9, r->work / 1e9, r->wait / 1e9, r->calls, r->sent,
				r->received);
		else
			em_text(&em, "%7s  %-16s %12.6f %12.6f %9" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n", rs, ename,
				r->cpu / 1e9, r->mpi / 1e9, r->calls, r->sent, r->received);
	}
	em_end(&em);

	em_text(&em, "\nMPI time per call site: the slowest rank's against the mean of the %zu ranks,\n"
		     "sorted by the time the slowest lost (max - mean)\n\n",
		k.n);
	em_text(&em, "%-20s %-24s %9s %12s %6s %12s %10s\n", "Function", "Caller", "Calls", "Max", "Rank", "Mean",
		"Imbalance");
	em_arr(&em, "sites");
	for (size_t i = 0; i < k.ns && (!o->limit || i < o->limit); i++) {
		const struct site *s = &k.s[i];
		uint64_t max = 0, sum = 0;
		size_t slow = 0;

		for (size_t x = 0; x < k.n; x++) {
			sum += s->time[x];
			if (s->time[x] > max)
				max = s->time[x], slow = x;
		}
		double mean = (double)sum / (double)k.n, imb = mean > 0 ? (double)max / mean : 0;
		const char *fname = sonde_mpi_func_name(s->func);
		char fb[16];

		if (!strcmp(fname, "?"))
			snprintf(fb, sizeof(fb), "MPI#%u", s->func), fname = fb;
		em_row(&em);
		em_s_csv(&em, "kind", "site");
		em_i(&em, "rank", k.r[slow].rank);
		em_csv(&em, ",");
		em_s(&em, "function", fname);
		em_s(&em, "caller", s->caller);
		em_csv(&em, ",,,,");
		em_u(&em, "calls", s->calls);
		em_csv(&em, ",,");
		em_u(&em, "max_ns", max);
		em_f(&em, "mean_ns", "%.1f", mean);
		em_f(&em, "imbalance", "%.3f", imb);
		em_row_end(&em);
		em_text(&em, "%-20s %-24s %9" PRIu64 " %12.6f %6" PRId64 " %12.6f %10.3f\n", fname, s->caller, s->calls,
			max / 1e9, k.r[slow].rank, mean / 1e9, imb);
	}
	em_end(&em);
	em_end_doc(&em);
	ranks_release(&k);
	return vw_finish(f, err, errlen);
nomem:
	ranks_release(&k);
	return oom(err, errlen);
}
