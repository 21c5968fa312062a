/*
 * -omp_regions and -omp_region N (lib/views/view_exp.h): OpenMP's parallel
 * regions (the omp kind, lib/kinds/omp.c) with the time of their threads
 * by OpenMP state.  A row is a source region: the executions whose
 * opening call (codeptr) is at one source function and line.  Its time is
 * the clock profile's samples (CPU and off-CPU) of each thread inside its
 * part of an execution, the innermost region holding the sample
 * (sonde_exp_omp_region_at): work (OMP Work) and the wait by cause (the
 * on- and off-CPU states of one cause added).  Imbalance, as -ranks has it
 * for MPI: the slowest thread number's work against the mean of the
 * thread numbers.  The whole run (no sample or time selection).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/u64map.h"
#include "sonde/states.h"
#include "symbols/symbols.h"
#include "views/view.h"
#include "views/view_common.h"
#include "views/view_exp.h"

enum { C_WORK, C_BARRIER, C_LOCK, C_TASKWAIT, C_IDLE, C_OVERHEAD, C_N };
static const char *const cause_key[C_N] = { "work_ns", "barrier_ns", "lock_ns", "taskwait_ns", "idle_ns",
					    "overhead_ns" };

/* The cause of a sample's state; -1 for a state that is not OpenMP's. */
static int cause_of(unsigned st)
{
	switch (st) {
	case SONDE_STATE_OMP_WORK: return C_WORK;
	case SONDE_STATE_OMP_BARRIER:
	case SONDE_STATE_OMP_BARRIER_OFF: return C_BARRIER;
	case SONDE_STATE_OMP_LOCK:
	case SONDE_STATE_OMP_LOCK_OFF: return C_LOCK;
	case SONDE_STATE_OMP_TASKWAIT:
	case SONDE_STATE_OMP_TASKWAIT_OFF: return C_TASKWAIT;
	case SONDE_STATE_OMP_IDLE:
	case SONDE_STATE_OMP_IDLE_OFF: return C_IDLE;
	case SONDE_STATE_OMP_OVERHEAD: return C_OVERHEAD;
	default: return -1;
	}
}

/* One thread number of a source region, over its executions. */
struct part {
	uint64_t t[C_N];
	uint64_t tid;	     /* the first thread seen with the number */
	bool several;	     /* more than one thread had it */
	double arrive_sum;   /* its arrival after the execution's first, summed */
	uint64_t arrivals;   /* executions it took part in */
	uint64_t tasks_ran;  /* explicit tasks it ran inside the region */
};

struct row {
	char *name; /* "func (file:line)" */
	uint64_t first_ns;
	uint64_t executions, tasks_created, tasks_ran;
	uint32_t tmin, tmax;
	uint16_t lmin, lmax;
	uint64_t t[C_N];
	struct part *p;
	size_t np;
	/* the creating sites of its tasks: names, counts */
	char **site;
	uint64_t *site_n;
	size_t nsite;
};

struct regions {
	struct row *r;
	size_t n, cap;
};

static void regions_release(struct regions *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->r[i].name);
		free(g->r[i].p);
		for (size_t k = 0; k < g->r[i].nsite; k++)
			free(g->r[i].site[k]);
		free(g->r[i].site);
		free(g->r[i].site_n);
	}
	free(g->r);
}

/* The source function and line of a return address, into buf. */
static void where(struct sonde_syms *sy, uint64_t pc, uint64_t t, enum sonde_namefmt names, char *buf, size_t len)
{
	if (!pc || !sy) {
		snprintf(buf, len, "<unknown>");
		return;
	}
	const struct sonde_func *f = sonde_syms_lookup(sy, pc, false, t);
	const char *n = sonde_view_symname(f, names);
	const struct sonde_srcframe *sf;
	int k = sonde_syms_srcpos(sy, pc, false, t, &sf);

	if (!n || !*n)
		n = f->mangled ? f->mangled : "?";
	/* the outermost level: the line in the function the symbol names
	 * (the opening call's, when the compiler inlined around it) */
	if (k > 0 && sf[k - 1].file && sf[k - 1].line) {
		const char *base = strrchr(sf[k - 1].file, '/');

		snprintf(buf, len, "%s (%s:%u)", n, base ? base + 1 : sf[k - 1].file, sf[k - 1].line);
	} else {
		snprintf(buf, len, "%s", n);
	}
}

/* A source region's key: its name, and its opening call's address in its
 * object, so that two calls the line table puts on one line stay two
 * regions. */
static void region_key(struct sonde_syms *sy, uint64_t pc, uint64_t t, enum sonde_namefmt names, char *buf,
		       size_t len)
{
	where(sy, pc, t, names, buf, len);
	const struct sonde_func *f = pc && sy ? sonde_syms_lookup(sy, pc, false, t) : NULL;
	size_t l = strlen(buf);

	snprintf(buf + l, len - l, "%c%" PRIx64, 0, f && f->object ? pc - f->object->base : pc);
}

/* The leaf of a stack outside sonde, as where() says it. */
static void leaf_where(struct sonde_syms *sy, const struct sonde_exp *e, uint64_t stack_id, uint64_t t,
		       enum sonde_namefmt names, char *buf, size_t len)
{
	const struct sonde_stack *st = stack_id ? sonde_exp_stack(e, stack_id) : NULL;

	if (!st || !st->depth || st->frame[0].kind != SONDE_FRAME_NATIVE) {
		snprintf(buf, len, "<no stack>");
		return;
	}
	where(sy, st->frame[0].pc, t, names, buf, len);
}

static struct row *row_of(struct regions *g, const char *name, const char *addr)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->r[i].name, name) && !strcmp(g->r[i].name + strlen(name) + 1, addr))
			return &g->r[i];
	if (sonde_grow(&g->r, &g->cap, g->n + 1, sizeof(*g->r), 8))
		return NULL;
	struct row *r = &g->r[g->n];

	memset(r, 0, sizeof(*r));
	size_t ln = strlen(name), la = strlen(addr);

	if (!(r->name = malloc(ln + la + 2)))
		return NULL;
	memcpy(r->name, name, ln + 1);
	memcpy(r->name + ln + 1, addr, la + 1);
	r->first_ns = UINT64_MAX;
	r->tmin = UINT32_MAX;
	r->lmin = UINT16_MAX;
	g->n++;
	return r;
}

static struct part *part_of(struct row *r, uint32_t thread_num)
{
	if (thread_num >= 4096)
		return NULL;
	if (thread_num >= r->np) {
		struct part *p = realloc(r->p, (thread_num + 1) * sizeof(*p));

		if (!p)
			return NULL;
		memset(p + r->np, 0, (thread_num + 1 - r->np) * sizeof(*p));
		r->p = p;
		r->np = thread_num + 1;
	}
	return &r->p[thread_num];
}

static int add_site(struct row *r, const char *name)
{
	for (size_t k = 0; k < r->nsite; k++)
		if (!strcmp(r->site[k], name)) {
			r->site_n[k]++;
			return 0;
		}
	char **s = realloc(r->site, (r->nsite + 1) * sizeof(*s));

	if (!s)
		return -1;
	r->site = s;
	uint64_t *c = realloc(r->site_n, (r->nsite + 1) * sizeof(*c));

	if (!c)
		return -1;
	r->site_n = c;
	if (!(r->site[r->nsite] = strdup(name)))
		return -1;
	r->site_n[r->nsite++] = 1;
	return 0;
}

static int cmp_first(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->first_ns < y->first_ns ? -1 : x->first_ns > y->first_ns;
}

/* Every experiment's regions and samples into g. */
static int gather(struct regions *g, const struct sonde_exp *const *exps, size_t n, const struct sonde_view_opts *o)
{
	for (size_t x = 0; x < n; x++) {
		const struct sonde_exp *e = exps[x];
		size_t nr, nt;
		const struct sonde_omp_region *rg = sonde_exp_omp_regions(e, &nr);
		const struct sonde_omp_task *tk = sonde_exp_omp_tasks(e, &nt);

		if (!nr)
			continue;
		struct sonde_syms *sy = sonde_syms_open(e);
		struct u64map byid = { 0 };	/* region id -> its row */
		struct u64map bypc = { 0 };	/* codeptr -> its row */
		char buf[1024];
		int rc = 0;

		for (size_t i = 0; i < nr && !rc; i++) {
			const struct sonde_omp_region *r = &rg[i];
			long ri = u64map_get(&bypc, r->codeptr);

			if (ri < 0) {
				region_key(sy, r->codeptr, r->start_ns, o->names, buf, sizeof(buf));
				struct row *w = row_of(g, buf, buf + strlen(buf) + 1);

				if (!w) {
					rc = -1;
					break;
				}
				ri = w - g->r;
				if (u64map_put(&bypc, r->codeptr, (uint32_t)ri)) {
					rc = -1;
					break;
				}
			}
			struct row *w = &g->r[ri];

			if (u64map_put(&byid, r->region_id, (uint32_t)ri)) {
				rc = -1;
				break;
			}
			w->executions++;
			if (r->start_ns < w->first_ns)
				w->first_ns = r->start_ns;
			w->tmin = r->nthreads < w->tmin ? r->nthreads : w->tmin;
			w->tmax = r->nthreads > w->tmax ? r->nthreads : w->tmax;
			w->lmin = r->level < w->lmin ? r->level : w->lmin;
			w->lmax = r->level > w->lmax ? r->level : w->lmax;
			uint64_t first = UINT64_MAX;

			for (uint32_t k = 0; k < r->nitasks; k++)
				if (r->itasks[k].arrive_ns < first)
					first = r->itasks[k].arrive_ns;
			for (uint32_t k = 0; k < r->nitasks; k++) {
				const struct sonde_omp_itask *it = &r->itasks[k];
				struct part *p = part_of(w, it->thread_num);

				if (!p) {
					rc = -1;
					break;
				}
				if (!p->arrivals && !p->tid)
					p->tid = it->tid;
				else if (p->tid != it->tid)
					p->several = true;
				p->arrivals++;
				p->arrive_sum += (double)(it->arrive_ns - first);
			}
		}
		/* tasks: created in a region's execution, ran inside one */
		for (size_t i = 0; i < nt && !rc; i++) {
			long ri = u64map_get(&byid, tk[i].region_id);

			if (ri >= 0) {
				g->r[ri].tasks_created++;
				leaf_where(sy, e, tk[i].create_stack, tk[i].create_ns, o->names, buf, sizeof(buf));
				if (add_site(&g->r[ri], buf))
					rc = -1;
			}
			const struct sonde_omp_itask *it;
			const struct sonde_omp_region *in = sonde_exp_omp_region_at(e, tk[i].tid, tk[i].begin_ns, &it);

			if (in && (ri = u64map_get(&byid, in->region_id)) >= 0) {
				struct part *p = part_of(&g->r[ri], it->thread_num);

				g->r[ri].tasks_ran++;
				if (p)
					p->tasks_ran++;
			}
		}
		/* samples */
		struct sonde_sample_iter si;
		struct sonde_sample s;

		sonde_sample_iter_init(&si, e);
		while (!rc && sonde_sample_iter_next(&si, &s)) {
			int c = cause_of(s.state);
			const struct sonde_omp_itask *it;
			const struct sonde_omp_region *in;
			long ri;

			if (c < 0 || !(in = sonde_exp_omp_region_at(e, s.tid, s.time_ns, &it)) ||
			    (ri = u64map_get(&byid, in->region_id)) < 0)
				continue;
			struct part *p = part_of(&g->r[ri], it->thread_num);

			g->r[ri].t[c] += s.weight_ns;
			if (p)
				p->t[c] += s.weight_ns;
		}
		u64map_release(&byid);
		u64map_release(&bypc);
		sonde_syms_close(sy);
		if (rc)
			return -1;
	}
	if (g->n > 1)
		qsort(g->r, g->n, sizeof(*g->r), cmp_first);
	return 0;
}

static uint64_t wait_of(const uint64_t *t)
{
	uint64_t w = 0;

	for (int c = C_BARRIER; c < C_N; c++)
		w += t[c];
	return w;
}

/* The slowest thread number's work against the mean of the thread
 * numbers (0: no work). */
static double imbalance(const struct row *r, size_t *slow)
{
	uint64_t max = 0, sum = 0;
	size_t n = 0;

	*slow = 0;
	for (size_t i = 0; i < r->np; i++) {
		if (!r->p[i].arrivals)
			continue;
		n++;
		sum += r->p[i].t[C_WORK];
		if (r->p[i].t[C_WORK] > max)
			max = r->p[i].t[C_WORK], *slow = i;
	}
	return n && sum ? (double)max / ((double)sum / (double)n) : 0;
}

int sonde_view_omp_regions(FILE *f, const struct sonde_exp *const *exps, size_t n, const struct sonde_view_opts *o,
			   char *err, size_t errlen)
{
	struct regions g = { 0 };

	if (gather(&g, exps, n, o) < 0) {
		regions_release(&g);
		snprintf(err, errlen, "out of memory");
		return -SONDE_ERR_FAILED;
	}
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_csv(&em, "region,name,executions,threads_min,threads_max,level_min,level_max,work_ns,barrier_ns,lock_ns,"
		    "taskwait_ns,idle_ns,overhead_ns,wait_ns,imbalance,tasks_created,tasks_ran\n");
	em_obj(&em, NULL);
	em_s(&em, "view", "omp_regions");
	em_u(&em, "regions", g.n);
	em_text(&em, "OpenMP parallel regions: the time of their threads by OpenMP state (seconds), the\n"
		     "slowest thread's work against the mean (Imbalance); -omp_region N shows row N per thread\n\n");
	em_text(&em, "%3s %-36s %6s %7s %5s %10s %10s %10s %10s %10s %10s %10s %9s %7s\n", "N", "Region", "Execs",
		"Threads", "Level", "Work", "Barrier", "Lock", "Taskwait", "Idle", "Overhead", "OMP Wait", "Imbalance",
		"Tasks");
	em_arr(&em, "rows");
	for (size_t i = 0; i < g.n && (!o->limit || i < o->limit); i++) {
		const struct row *r = &g.r[i];
		size_t slow;
		double imb = imbalance(r, &slow);
		char th[24], lv[16], tasks[40];

		snprintf(th, sizeof(th), r->tmin == r->tmax ? "%u" : "%u-%u", r->tmin, r->tmax);
		snprintf(lv, sizeof(lv), r->lmin == r->lmax ? "%u" : "%u-%u", r->lmin, r->lmax);
		snprintf(tasks, sizeof(tasks), "%" PRIu64 "/%" PRIu64, r->tasks_created, r->tasks_ran);
		em_row(&em);
		em_u(&em, "region", i + 1);
		em_s(&em, "name", r->name);
		em_u(&em, "executions", r->executions);
		em_u(&em, "threads_min", r->tmin);
		em_u(&em, "threads_max", r->tmax);
		em_u(&em, "level_min", r->lmin);
		em_u(&em, "level_max", r->lmax);
		for (int c = 0; c < C_N; c++)
			em_u(&em, cause_key[c], r->t[c]);
		em_u(&em, "wait_ns", wait_of(r->t));
		em_f(&em, "imbalance", "%.3f", imb);
		em_u(&em, "tasks_created", r->tasks_created);
		em_u(&em, "tasks_ran", r->tasks_ran);
		em_row_end(&em);
		em_text(&em, "%3zu %-36s %6" PRIu64 " %7s %5s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %9.3f %7s\n",
			i + 1, r->name, r->executions, th, lv, r->t[C_WORK] / 1e9, r->t[C_BARRIER] / 1e9,
			r->t[C_LOCK] / 1e9, r->t[C_TASKWAIT] / 1e9, r->t[C_IDLE] / 1e9, r->t[C_OVERHEAD] / 1e9,
			wait_of(r->t) / 1e9, imb, tasks);
	}
	em_end(&em);
	em_end(&em);
	regions_release(&g);
	return 0;
}

int sonde_view_omp_region(FILE *f, const struct sonde_exp *const *exps, size_t n, size_t which,
			  const struct sonde_view_opts *o, char *err, size_t errlen)
{
	struct regions g = { 0 };

	if (gather(&g, exps, n, o) < 0) {
		regions_release(&g);
		snprintf(err, errlen, "out of memory");
		return -SONDE_ERR_FAILED;
	}
	if (!which || which > g.n) {
		snprintf(err, errlen, "no region %zu: -omp_regions lists %zu", which, g.n);
		regions_release(&g);
		return -SONDE_ERR_NO_MATCH;
	}
	const struct row *r = &g.r[which - 1];
	size_t slow;
	double imb = imbalance(r, &slow);
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_csv(&em, "thread,tid,work_ns,barrier_ns,lock_ns,taskwait_ns,idle_ns,overhead_ns,wait_ns,arrival_ns,"
		    "tasks_ran\n");
	em_obj(&em, NULL);
	em_s(&em, "view", "omp_region");
	em_u(&em, "region", which);
	em_s(&em, "name", r->name);
	em_u(&em, "executions", r->executions);
	em_u(&em, "level_min", r->lmin);
	em_u(&em, "level_max", r->lmax);
	em_f(&em, "imbalance", "%.3f", imb);
	em_u(&em, "tasks_created", r->tasks_created);
	em_u(&em, "tasks_ran", r->tasks_ran);
	char lv[16];

	snprintf(lv, sizeof(lv), r->lmin == r->lmax ? "%u" : "%u-%u", r->lmin, r->lmax);
	em_text(&em, "OpenMP region %zu: %s, %" PRIu64 " executions, level %s, imbalance %.3f (thread %zu)\n", which,
		r->name, r->executions, lv, imb, slow);
	em_text(&em, "per thread number: time by OpenMP state (seconds); Arrival: its mean arrival at the\n"
		     "region's closing barrier after the execution's first thread's (seconds)\n\n");
	em_text(&em, "%6s %8s %10s %10s %10s %10s %10s %10s %10s %10s %6s\n", "Thread", "TID", "Work", "Barrier",
		"Lock", "Taskwait", "Idle", "Overhead", "OMP Wait", "Arrival", "Tasks");
	em_arr(&em, "threads");
	for (size_t i = 0; i < r->np; i++) {
		const struct part *p = &r->p[i];
		double arr = p->arrivals ? p->arrive_sum / (double)p->arrivals : 0;
		char tid[24];

		if (!p->arrivals)
			continue;
		snprintf(tid, sizeof(tid), p->several ? "%" PRIu64 "+" : "%" PRIu64, p->tid);
		em_row(&em);
		em_u(&em, "thread", i);
		em_s(&em, "tid", tid);
		for (int c = 0; c < C_N; c++)
			em_u(&em, cause_key[c], p->t[c]);
		em_u(&em, "wait_ns", wait_of(p->t));
		em_u(&em, "arrival_ns", (uint64_t)arr);
		em_u(&em, "tasks_ran", p->tasks_ran);
		em_row_end(&em);
		em_text(&em, "%6zu %8s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.6f %6" PRIu64 "\n", i, tid,
			p->t[C_WORK] / 1e9, p->t[C_BARRIER] / 1e9, p->t[C_LOCK] / 1e9, p->t[C_TASKWAIT] / 1e9,
			p->t[C_IDLE] / 1e9, p->t[C_OVERHEAD] / 1e9, wait_of(p->t) / 1e9, arr / 1e9, p->tasks_ran);
	}
	em_end(&em);
	if (r->nsite)
		em_text(&em, "\nexplicit tasks created in it, by creating call: %" PRIu64 " (ran inside it: %" PRIu64
			     ")\n",
			r->tasks_created, r->tasks_ran);
	em_arr(&em, "task_sites");
	for (size_t k = 0; k < r->nsite; k++) {
		em_row(&em);
		em_s_csv(&em, "kind", "site");
		em_s(&em, "site", r->site[k]);
		em_u(&em, "tasks", r->site_n[k]);
		em_row_end(&em);
		em_text(&em, "%10" PRIu64 "  %s\n", r->site_n[k], r->site[k]);
	}
	em_end(&em);
	em_end(&em);
	regions_release(&g);
	return 0;
}
