/*
 * The omp kind (file omptrace, written by the collector itself with the
 * OpenMP states: collector/omp.c): executions of parallel regions, each
 * thread's part of one (its implicit task, "itask") and explicit tasks
 * (SONDE_PKT_OMP_REGION, _ITASK, _TASK, include/sonde/format.h).  The
 * whole kind on the analyzer's side (base/kindmod.h): its reading, the
 * join of the threads' parts to their regions, the lookup of the region a
 * thread was in at a time (for every sample: the regions view and the
 * user view mode), its -dump and -header.  It feeds no metric: the time
 * of a region is the clock profile's samples inside its threads' parts.
 *
 * Each packet is written by the thread it is about when the thing ends
 * (a worker's part before its master's region), so nothing is in order
 * in the file: finish() sorts and joins once every file is read.  What
 * does not join (a part whose region packet is missing: a process that
 * died inside a region; a second part of one thread number) is a warning
 * of the experiment and left out, never a failed open.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "reader/kind.h"
#include "views/kind.h"

/* ---- reading ------------------------------------------------------------------------- */

/* A thread's part as read, with the region it belongs to. */
struct raw_itask {
	uint64_t region_id;
	struct sonde_omp_itask it;
};

/* One entry of a thread's sorted parts, for sonde_exp_omp_region_at:
 * parent is the entry of the same thread that encloses it (the outer
 * region's part of a thread that opened a nested one), -1 for none. */
struct at_entry {
	uint64_t begin, end;
	int64_t parent;
	const struct sonde_omp_region *r;
	const struct sonde_omp_itask *it;
};
struct at_thread {
	uint32_t tid;
	size_t first, n; /* its entries in at[] */
};

struct omp_state {
	struct sonde_omp_region *r;
	size_t nr, capr;
	struct raw_itask *raw;
	size_t nraw, capraw;
	struct sonde_omp_task *t;
	size_t nt, capt;
	/* after finish(): the parts joined, in the regions' order */
	struct sonde_omp_itask *it;
	size_t nit;
	struct at_entry *at;
	size_t nat;
	struct at_thread *th;
	size_t nth;
};

static struct omp_state *state_of(struct sonde_exp *exp)
{
	return sonde_rk_state_new(exp, SONDE_KIND_OMP, sizeof(struct omp_state));
}

static const char *take_region(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const struct sonde_omp_region_packet *p = (const void *)pkt;
	struct sonde_exp *exp = sonde_rk_exp(sc);
	struct omp_state *s;

	if (p->size < sizeof(*p))
		return sonde_rk_too_small(why, whylen, "omp region", p->size, sizeof(*p));
	if (!p->region_id || !p->level || !p->nthreads || p->end_ns < p->start_ns) {
		snprintf(why, whylen, "omp region packet with id %#" PRIx64 ", level %u, %u threads, start %" PRIu64
			 " after its end %" PRIu64 " (id, level and threads must be set, start at most end)",
			 p->region_id, p->level, p->nthreads, p->start_ns, p->end_ns);
		return why;
	}
	/* the master's part in the region's packet (format.h) */
	uint64_t m_begin = p->start_ns + (p->master_part & 0xffffffffu), m_arrive = p->end_ns - (p->master_part >> 32);
	if ((p->flags & SONDE_OMPF_MASTER) &&
	    (m_begin > m_arrive || m_begin < p->start_ns || m_arrive > p->end_ns)) {
		snprintf(why, whylen, "omp region packet with id %#" PRIx64 " whose master's part %#" PRIx64
			 " does not fit in its start %" PRIu64 " and end %" PRIu64,
			 p->region_id, p->master_part, p->start_ns, p->end_ns);
		return why;
	}
	if (!(s = state_of(exp)))
		return NULL;
	if (sonde_grow(&s->r, &s->capr, s->nr + 1, sizeof(*s->r), 16) ||
	    ((p->flags & SONDE_OMPF_MASTER) && sonde_grow(&s->raw, &s->capraw, s->nraw + 1, sizeof(*s->raw), 16))) {
		sonde_rk_oom(exp);
		return NULL;
	}
	if (p->flags & SONDE_OMPF_MASTER)
		s->raw[s->nraw++] = (struct raw_itask){ p->region_id,
							{ sonde_rk_tid(sc), 0, m_begin, m_arrive, p->end_ns } };
	s->r[s->nr++] = (struct sonde_omp_region){
		.tid = sonde_rk_tid(sc),
		.flags = p->flags & ~SONDE_OMPF_MASTER,
		.level = p->level,
		.requested = p->requested,
		.nthreads = p->nthreads,
		.region_id = p->region_id,
		.parent_id = p->parent_id,
		.codeptr = p->codeptr,
		.start_ns = p->start_ns,
		.end_ns = p->end_ns,
		.stack_id = p->stack_id,
	};
	if (p->stack_id)
		sonde_rk_stack_ref(exp, p->stack_id);
	return NULL;
}

static const char *take_itask(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const struct sonde_omp_itask_packet *p = (const void *)pkt;
	struct sonde_exp *exp = sonde_rk_exp(sc);
	struct omp_state *s;

	if (p->size < sizeof(*p))
		return sonde_rk_too_small(why, whylen, "omp itask", p->size, sizeof(*p));
	if (!p->region_id || p->begin_ns > p->arrive_ns || p->arrive_ns > p->end_ns) {
		snprintf(why, whylen, "omp itask packet of region %#" PRIx64 " with begin %" PRIu64 ", arrive %" PRIu64
			 ", end %" PRIu64 " (a region id, and begin <= arrive <= end)",
			 p->region_id, p->begin_ns, p->arrive_ns, p->end_ns);
		return why;
	}
	if (!(s = state_of(exp)))
		return NULL;
	if (sonde_grow(&s->raw, &s->capraw, s->nraw + 1, sizeof(*s->raw), 16)) {
		sonde_rk_oom(exp);
		return NULL;
	}
	s->raw[s->nraw++] = (struct raw_itask){ p->region_id,
						{ sonde_rk_tid(sc), p->thread_num, p->begin_ns, p->arrive_ns, p->end_ns } };
	return NULL;
}

static const char *take_task(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const struct sonde_omp_task_packet *p = (const void *)pkt;
	struct sonde_exp *exp = sonde_rk_exp(sc);
	struct omp_state *s;

	if (p->size < sizeof(*p))
		return sonde_rk_too_small(why, whylen, "omp task", p->size, sizeof(*p));
	if (p->begin_ns > p->end_ns || (p->create_ns && p->create_ns > p->begin_ns)) {
		snprintf(why, whylen, "omp task packet created %" PRIu64 ", begun %" PRIu64 ", ended %" PRIu64
			 " (created <= begun <= ended)", p->create_ns, p->begin_ns, p->end_ns);
		return why;
	}
	if (!(s = state_of(exp)))
		return NULL;
	if (sonde_grow(&s->t, &s->capt, s->nt + 1, sizeof(*s->t), 16)) {
		sonde_rk_oom(exp);
		return NULL;
	}
	s->t[s->nt++] = (struct sonde_omp_task){ sonde_rk_tid(sc), p->flags,	    p->region_id,    p->create_ns,
						 p->begin_ns,	   p->end_ns, p->create_stack, p->codeptr };
	if (p->create_stack)
		sonde_rk_stack_ref(exp, p->create_stack);
	return NULL;
}

static const char *take(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const struct sonde_packet *h = (const void *)pkt;

	if (h->type != SONDE_PKT_OMP_REGION && h->type != SONDE_PKT_OMP_ITASK && h->type != SONDE_PKT_OMP_TASK)
		return sonde_rk_not_mine;
	if (sonde_rk_again(sc))
		return NULL;
	if (h->type == SONDE_PKT_OMP_REGION)
		return take_region(sc, pkt, why, whylen);
	if (h->type == SONDE_PKT_OMP_ITASK)
		return take_itask(sc, pkt, why, whylen);
	return take_task(sc, pkt, why, whylen);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* Regions by start; the outer first at one time (a nested region cannot
 * start before its parent's fork, but may in the same nanosecond). */
static int cmp_region(const void *a, const void *b)
{
	const struct sonde_omp_region *x = a, *y = b;
	int c = cmp_u64(x->start_ns, y->start_ns);

	if (!c)
		c = cmp_u64(x->level, y->level);
	if (!c)
		c = cmp_u64(x->region_id, y->region_id);
	return c;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_itask *x = a, *y = b;
	int c = cmp_u64(x->region_id, y->region_id);

	if (!c)
		c = cmp_u64(x->it.thread_num, y->it.thread_num);
	if (!c)
		c = cmp_u64(x->it.begin_ns, y->it.begin_ns);
	if (!c)
		c = cmp_u64(x->it.tid, y->it.tid);
	return c;
}

static int cmp_task(const void *a, const void *b)
{
	const struct sonde_omp_task *x = a, *y = b;
	int c = cmp_u64(x->begin_ns, y->begin_ns);

	if (!c)
		c = cmp_u64(x->tid, y->tid);
	if (!c)
		c = cmp_u64(x->end_ns, y->end_ns);
	if (!c)
		c = cmp_u64(x->create_ns, y->create_ns);
	return c;
}

/* A thread's parts by begin, the enclosing one first at one time. */
static int cmp_at(const void *a, const void *b)
{
	const struct at_entry *x = a, *y = b;
	int c = cmp_u64(x->it->tid, y->it->tid);

	if (!c)
		c = cmp_u64(x->begin, y->begin);
	if (!c)
		c = -cmp_u64(x->end, y->end);
	if (!c)
		c = cmp_u64(x->r->level, y->r->level);
	return c;
}

/* Region ids with the index of their region, to find a part's region. */
struct id_ix {
	uint64_t id;
	size_t ix;
};

static int cmp_id_ix(const void *a, const void *b)
{
	const struct id_ix *x = a, *y = b;
	int c = cmp_u64(x->id, y->id);

	return c ? c : cmp_u64(x->ix, y->ix);
}

/* The first part of region id in raw[0..n) (sorted by id), n when none. */
static size_t raw_first(const struct raw_itask *raw, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (raw[mid].region_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Drops the second and later executions with one region id (the ids are
 * unique in a process: a damaged or doubled file). */
static void drop_doubled(struct sonde_exp *exp, struct omp_state *s, struct id_ix *ids)
{
	size_t dropped = 0;

	for (size_t i = 0; i < s->nr; i++)
		ids[i] = (struct id_ix){ s->r[i].region_id, i };
	qsort(ids, s->nr, sizeof(*ids), cmp_id_ix);
	for (size_t i = 1; i < s->nr; i++)
		if (ids[i].id == ids[i - 1].id) {
			s->r[ids[i].ix].region_id = 0; /* marked */
			dropped++;
		}
	if (!dropped)
		return;
	sonde_rk_problem(exp, "'omptrace': %zu OpenMP region packets repeat the id of another; left out", dropped);
	size_t k = 0;

	for (size_t i = 0; i < s->nr; i++)
		if (s->r[i].region_id)
			s->r[k++] = s->r[i];
	s->nr = k;
}

/* The parts of each region, in the regions' order, and the threads'
 * lookup. */
static int join(struct sonde_exp *exp, struct omp_state *s)
{
	struct id_ix *ids = malloc((s->nr ? s->nr : 1) * sizeof(*ids));

	if (!ids)
		return -1;
	drop_doubled(exp, s, ids);
	qsort(s->r, s->nr, sizeof(*s->r), cmp_region);
	qsort(s->raw, s->nraw, sizeof(*s->raw), cmp_raw);
	if (!(s->it = malloc((s->nraw ? s->nraw : 1) * sizeof(*s->it)))) {
		free(ids);
		return -1;
	}
	size_t doubled = 0, outside = 0;

	for (size_t i = 0; i < s->nr; i++) {
		struct sonde_omp_region *r = &s->r[i];
		size_t j = raw_first(s->raw, s->nraw, r->region_id), first = s->nit;

		for (; j < s->nraw && s->raw[j].region_id == r->region_id; j++) {
			const struct sonde_omp_itask *it = &s->raw[j].it;

			if (it->thread_num >= r->nthreads) {
				outside++;
				continue;
			}
			if (s->nit > first && s->it[s->nit - 1].thread_num == it->thread_num) {
				doubled++;
				continue;
			}
			s->it[s->nit++] = *it;
		}
		r->itasks = &s->it[first];
		r->nitasks = (uint32_t)(s->nit - first);
		/* A worker cannot see the barrier's release: its part ends
		 * where the team's last thread arrived (the collector writes
		 * its own arrival; earlier ones wrote this end themselves). */
		uint64_t last = 0;

		for (uint32_t k = 0; k < r->nitasks; k++)
			if (r->itasks[k].arrive_ns > last)
				last = r->itasks[k].arrive_ns;
		for (uint32_t k = 0; k < r->nitasks; k++)
			if (r->itasks[k].thread_num && r->itasks[k].end_ns < last)
				s->it[first + k].end_ns = last;
	}
	/* parts whose region is not there */
	size_t orphans = s->nraw - s->nit - doubled - outside;

	if (orphans)
		sonde_rk_problem(exp, "'omptrace': %zu OpenMP threads' parts of regions without a region packet "
			    "(the process ended inside them?); left out", orphans);
	if (doubled)
		sonde_rk_problem(exp, "'omptrace': %zu OpenMP threads' parts repeat a thread number of their region; "
			    "left out", doubled);
	if (outside)
		sonde_rk_problem(exp, "'omptrace': %zu OpenMP threads' parts have a thread number past their "
			    "region's team; left out", outside);
	free(ids);
	free(s->raw);
	s->raw = NULL;
	s->nraw = s->capraw = 0;

	/* the lookup: every part by thread and begin, each with the part of
	 * its thread that encloses it */
	if (!(s->at = malloc((s->nit ? s->nit : 1) * sizeof(*s->at))))
		return -1;
	for (size_t i = 0; i < s->nr; i++)
		for (uint32_t k = 0; k < s->r[i].nitasks; k++) {
			const struct sonde_omp_itask *it = &s->r[i].itasks[k];

			s->at[s->nat++] = (struct at_entry){ it->begin_ns, it->end_ns, -1, &s->r[i], it };
		}
	qsort(s->at, s->nat, sizeof(*s->at), cmp_at);
	if (!(s->th = malloc((s->nat ? s->nat : 1) * sizeof(*s->th))))
		return -1;
	for (size_t i = 0; i < s->nat; i++) {
		if (!s->nth || s->th[s->nth - 1].tid != s->at[i].it->tid)
			s->th[s->nth++] = (struct at_thread){ s->at[i].it->tid, i, 0 };
		struct at_thread *th = &s->th[s->nth - 1];
		int64_t p = i > th->first ? (int64_t)i - 1 : -1;

		/* the innermost earlier part still open at this one's begin */
		while (p >= 0 && s->at[p].end <= s->at[i].begin)
			p = s->at[p].parent;
		s->at[i].parent = p;
		th->n++;
	}
	return 0;
}

static void finish(struct sonde_exp *exp)
{
	struct omp_state *s = sonde_rk_state(exp, SONDE_KIND_OMP);

	if (!s)
		return;
	qsort(s->t, s->nt, sizeof(*s->t), cmp_task);
	if (join(exp, s) < 0)
		sonde_rk_oom(exp);
}

static void free_state(void *state)
{
	struct omp_state *s = state;

	free(s->r);
	free(s->raw);
	free(s->t);
	free(s->it);
	free(s->at);
	free(s->th);
	free(s);
}

const struct sonde_omp_region *sonde_exp_omp_regions(const struct sonde_exp *exp, size_t *n)
{
	const struct omp_state *s = sonde_rk_state(exp, SONDE_KIND_OMP);

	*n = s ? s->nr : 0;
	return s && s->nr ? s->r : NULL;
}

const struct sonde_omp_task *sonde_exp_omp_tasks(const struct sonde_exp *exp, size_t *n)
{
	const struct omp_state *s = sonde_rk_state(exp, SONDE_KIND_OMP);

	*n = s ? s->nt : 0;
	return s && s->nt ? s->t : NULL;
}

const struct sonde_omp_region *sonde_exp_omp_region_at(const struct sonde_exp *exp, uint32_t tid, uint64_t time_ns,
							 const struct sonde_omp_itask **itask)
{
	const struct omp_state *s = sonde_rk_state(exp, SONDE_KIND_OMP);

	if (itask)
		*itask = NULL;
	if (!s || !s->nth)
		return NULL;
	size_t lo = 0, hi = s->nth;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->th[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->nth || s->th[lo].tid != tid)
		return NULL;
	const struct at_entry *at = s->at + s->th[lo].first;
	size_t n = s->th[lo].n;

	/* the last part begun at or before time_ns, then out through the
	 * parts enclosing it to the first that still holds time_ns */
	lo = 0;
	hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (at[mid].begin <= time_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	int64_t i = (int64_t)lo - 1, base = (int64_t)(at - s->at);

	while (i >= 0 && at[i].end <= time_ns)
		i = at[i].parent < 0 ? -1 : at[i].parent - base;
	if (i < 0)
		return NULL;
	if (itask)
		*itask = at[i].it;
	return at[i].r;
}

static size_t events(const struct sonde_exp *exp)
{
	const struct omp_state *s = sonde_rk_state(exp, SONDE_KIND_OMP);

	return s ? s->nr + s->nit + s->nraw + s->nt : 0;
}

static const struct sonde_reader_kind reader = {
	.take = take,
	.events = events,
	.finish = finish,
	.free = free_state,
};

/* ---- views --------------------------------------------------------------------------- */

static const char *runtime_word(unsigned flags)
{
	return flags & SONDE_OMPF_LIBOMP ? "libomp" : flags & SONDE_OMPF_LIBGOMP ? "libgomp" : "runtime?";
}

/* t - base in ns, signed. */
static long long rel(uint64_t t, uint64_t base)
{
	return t >= base ? (long long)(t - base) : -(long long)(base - t);
}

static void dump_region(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp,
			const struct sonde_exp_info *in, size_t i, const struct sonde_omp_region *r)
{
	fprintf(out,
		"omp region %zu  time %.9f  tid %u  level %u  threads %u of %u asked  id 0x%" PRIx64 "  parent 0x%" PRIx64
		"  codeptr 0x%" PRIx64 "  dur %" PRIu64 " ns  %s%s  stack 0x%" PRIx64,
		i, sonde_dump_since(in, r->start_ns), r->tid, r->level, r->nthreads, r->requested, r->region_id,
		r->parent_id, r->codeptr, r->end_ns - r->start_ns, runtime_word(r->flags),
		r->flags & SONDE_OMPF_TEAMS ? " teams" : "", r->stack_id);
	sonde_dump_stack(out, dyn, exp, r->stack_id, r->start_ns);
	for (uint32_t k = 0; k < r->nitasks; k++) {
		const struct sonde_omp_itask *it = &r->itasks[k];

		fprintf(out, "  thread %u  tid %u  begin %+lld ns  arrive %+lld ns  end %+lld ns\n", it->thread_num,
			it->tid, rel(it->begin_ns, r->start_ns), rel(it->arrive_ns, r->start_ns),
			rel(it->end_ns, r->start_ns));
	}
}

static void dump_task(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp,
		      const struct sonde_exp_info *in, size_t i, const struct sonde_omp_task *t)
{
	fprintf(out,
		"omp task %zu  time %.9f  tid %u  region 0x%" PRIx64 "  created %+lld ns  dur %" PRIu64
		" ns  codeptr 0x%" PRIx64 "  stack 0x%" PRIx64,
		i, sonde_dump_since(in, t->begin_ns), t->tid, t->region_id,
		t->create_ns ? rel(t->create_ns, t->begin_ns) : 0LL, t->end_ns - t->begin_ns, t->codeptr,
		t->create_stack);
	sonde_dump_stack(out, dyn, exp, t->create_stack, t->create_ns ? t->create_ns : t->begin_ns);
}

/* Regions (at their fork, each with its threads' parts, times relative
 * to the fork) and tasks (at their begin, created relative to it), by
 * time. */
static int dump(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t nr, nt, ni = 0;
	const struct sonde_omp_region *r = sonde_exp_omp_regions(exp, &nr);
	const struct sonde_omp_task *t = sonde_exp_omp_tasks(exp, &nt);

	for (size_t i = 0; i < nr; i++)
		ni += r[i].nitasks;
	fprintf(out,
		"# %zu OpenMP region executions (%zu threads' parts) and %zu tasks of %s, by time; time in seconds "
		"since the start\n",
		nr, ni, nt, in->dir);
	for (size_t i = 0, j = 0; i < nr || j < nt;) {
		if (j == nt || (i < nr && r[i].start_ns <= t[j].begin_ns)) {
			dump_region(out, dyn, exp, in, i, &r[i]);
			i++;
		} else {
			dump_task(out, dyn, exp, in, j, &t[j]);
			j++;
		}
	}
	return 0;
}

struct omp_totals {
	size_t executions, regions, itasks, tasks, nested;
	unsigned flags;
};

static int cmp_codeptr(const void *a, const void *b)
{
	return cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

static void totals(const struct sonde_exp *exp, struct omp_totals *o)
{
	const struct sonde_omp_region *r = sonde_exp_omp_regions(exp, &o->executions);
	uint64_t *cp = malloc((o->executions ? o->executions : 1) * sizeof(*cp));

	sonde_exp_omp_tasks(exp, &o->tasks);
	o->regions = o->itasks = o->nested = 0;
	o->flags = 0;
	for (size_t i = 0; i < o->executions; i++) {
		o->itasks += r[i].nitasks;
		o->flags |= r[i].flags;
		if (r[i].level > 1)
			o->nested++;
		if (cp)
			cp[i] = r[i].codeptr;
	}
	if (!cp)
		return;
	qsort(cp, o->executions, sizeof(*cp), cmp_codeptr);
	for (size_t i = 0; i < o->executions; i++)
		if (!i || cp[i] != cp[i - 1])
			o->regions++;
	free(cp);
}

static void header_text(FILE *out, const struct sonde_exp *exp)
{
	struct omp_totals o;

	totals(exp, &o);
	fprintf(out, "%-*s%zu executions of %zu regions (%zu nested), %zu threads' parts, %zu tasks%s%s%s\n",
		SONDE_HEADER_LABEL_W, "OpenMP regions:", o.executions, o.regions, o.nested, o.itasks, o.tasks,
		o.flags & (SONDE_OMPF_LIBOMP | SONDE_OMPF_LIBGOMP) ? " (" : "",
		o.flags & SONDE_OMPF_LIBOMP ? "libomp" : o.flags & SONDE_OMPF_LIBGOMP ? "libgomp" : "",
		o.flags & (SONDE_OMPF_LIBOMP | SONDE_OMPF_LIBGOMP) ? ")" : "");
}

static void header_doc(struct sonde_emit *k, const struct sonde_exp *exp)
{
	struct omp_totals o;

	totals(exp, &o);
	em_u(k, "executions", o.executions);
	em_u(k, "regions", o.regions);
	em_u(k, "nested", o.nested);
	em_u(k, "itasks", o.itasks);
	em_u(k, "tasks", o.tasks);
}

static const struct sonde_view_kind view = {
	.dump = dump,
	.header_text = header_text,
	.header_doc = header_doc,
	.header_omit_untraced = true,
};

const struct sonde_kind_module sonde_kind_module_OMP = {
	.reader = &reader,
	.view = &view,
};
