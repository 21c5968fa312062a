/*
 * The OpenMP shaper (shape.h): er_print's user view of an OpenMP program.
 *
 *   - the runtime's frames: libgomp's (gcc) and libomp's (clang; Intel's
 *     libiomp5 is the same runtime);
 *   - time spent in them is named, in user mode, by the sample's OpenMP
 *     state (include/sonde/states.h) as Oracle names it: <OMP-overhead>,
 *     <OMP-idle>, <OMP-barrier> (the states do not tell an implicit barrier
 *     from an explicit one), <OMP-lock> (locks, critical, atomic and
 *     ordered: one state), <OMP-taskwait>;
 *   - outlined bodies: gcc's "f._omp_fn.N" (and "._omp_cpyfn.") name their
 *     source function; clang's ".omp_outlined.", ".omp_outlined._debug__"
 *     and ".omp_task_entry." do not: the region's codeptr does;
 *   - the context of a sample: the regions (lib/reader/experiment.h,
 *     sonde_exp_omp_region_at) the thread was in, innermost first.  A
 *     worker's stack continues in the opener's stack at the fork (the
 *     region's stack_id); the opener may itself be a worker of the region
 *     around it (nested parallelism), whose stack continues in turn.
 */
#include <stdlib.h>
#include <string.h>

#include "base/u64map.h"
#include "model/shape.h"
#include "sonde/format.h"
#include "sonde/states.h"

struct omp {
	const struct sonde_exp *exp;
	const struct sonde_omp_region *r;
	size_t n;
	struct u64map byid; /* region_id -> index into r */
};

static bool prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool omp_runtime(const struct sonde_object *o)
{
	if (!o || !o->name)
		return false;
	return prefix(o->name, "libgomp.so") || prefix(o->name, "libgomp-") || prefix(o->name, "libomp.so") ||
	       prefix(o->name, "libomp-") || prefix(o->name, "libiomp5.so");
}

static void *omp_open(const struct sonde_exp *exp, bool *oom)
{
	size_t n;
	const struct sonde_object *o = sonde_exp_objects(exp, &n);
	size_t i = 0;

	*oom = false;
	while (i < n && !omp_runtime(&o[i]))
		i++;
	if (i == n)
		return NULL;
	struct omp *s = calloc(1, sizeof *s);
	if (!s) {
		*oom = true;
		return NULL;
	}
	s->exp = exp;
	s->r = sonde_exp_omp_regions(exp, &s->n);
	for (size_t k = 0; s->r && k < s->n; k++)
		if (u64map_put(&s->byid, s->r[k].region_id, (uint32_t)k) < 0) {
			u64map_release(&s->byid);
			free(s);
			*oom = true;
			return NULL;
		}
	return s;
}

static void omp_close(void *st)
{
	struct omp *s = st;

	if (!s)
		return;
	u64map_release(&s->byid);
	free(s);
}

static const char *omp_pseudo(unsigned state)
{
	switch (state) {
	case SONDE_STATE_OMP_IDLE:
	case SONDE_STATE_OMP_IDLE_OFF:
		return "<OMP-idle>";
	case SONDE_STATE_OMP_BARRIER:
	case SONDE_STATE_OMP_BARRIER_OFF:
		return "<OMP-barrier>";
	case SONDE_STATE_OMP_LOCK:
	case SONDE_STATE_OMP_LOCK_OFF:
		return "<OMP-lock>";
	case SONDE_STATE_OMP_TASKWAIT:
	case SONDE_STATE_OMP_TASKWAIT_OFF:
		return "<OMP-taskwait>";
	default: /* work, overhead, a state the runtime did not give: its own code's time */
		return "<OMP-overhead>";
	}
}

static int omp_outlined(const char *name, size_t *srclen)
{
	const char *g = strstr(name, "._omp_fn.");

	if (!g)
		g = strstr(name, "._omp_cpyfn.");
	if (g && g > name) {
		*srclen = (size_t)(g - name);
		return 1;
	}
	if (prefix(name, ".omp_outlined.") || prefix(name, ".omp_task_entry.")) {
		*srclen = 0;
		return 1;
	}
	return 0;
}

static const struct sonde_omp_region *parent(const struct omp *s, const struct sonde_omp_region *r)
{
	long k = r->parent_id ? u64map_get(&s->byid, r->parent_id) : -1;

	return k < 0 || &s->r[k] == r ? NULL : &s->r[k];
}

/* Level by level: the first region a level meets names its outlined
 * bodies; a region the level's thread is a worker of (it did not open it)
 * ends the level, whose frames continue in the opener's stack. */
static int omp_links(void *st, uint32_t tid, uint64_t time_ns, struct sonde_shape_link *l, int max)
{
	struct omp *s = st;
	const struct sonde_omp_itask *it;
	const struct sonde_omp_region *r;
	int n = 0, guard = 0;
	uint64_t codeptr = 0;

	if (!s->r || !(r = sonde_exp_omp_region_at(s->exp, tid, time_ns, &it)))
		return 0;
	for (; r && n < max && guard < 64; r = parent(s, r), guard++) {
		if (!codeptr)
			codeptr = r->codeptr;
		if (r->tid == tid)
			continue; /* its opener: this level's stack holds the fork */
		l[n++] = (struct sonde_shape_link){ codeptr, r->stack_id, r->start_ns };
		codeptr = 0;
		tid = r->tid;
		if (!r->stack_id)
			return n; /* the fork's stack is not known: the level ends there */
	}
	if (codeptr && n < max)
		l[n++] = (struct sonde_shape_link){ codeptr, 0, 0 };
	return n;
}

const struct sonde_shaper sonde_shaper_omp = {
	"OpenMP", omp_open, omp_close, omp_runtime, omp_pseudo, omp_outlined, omp_links,
};
