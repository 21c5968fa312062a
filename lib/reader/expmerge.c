/*
 * expmerge: the merge of sub-experiments.  See expmerge.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/u64map.h"
#include "reader/experiment.h"
#include "reader/expmerge.h"
#include "reader/exptree.h"
#include "reader/expwriter.h"

#define NO_OBJ UINT32_MAX

/* A load object, known by key: "b:" and its build id, or "p:" and its
 * path.  Of the paths seen for one build id the least is kept, and the
 * widest extent around the load bias: both order-free. */
struct mobj {
	char *key, *path, *buildid;
	int64_t lo_off, hi_off;
};

/* A frame: (object, offset) for a native frame in an object, else the
 * recorded pc (obj NO_OBJ).  16 bytes without padding: memcmp compares. */
struct mframe {
	uint64_t off;
	uint32_t obj;
	uint8_t kind, exact; /* exact: 1 exact, 2 a Java frame from scopes (sonde_frame's scoped) */
	uint16_t aux;
};
_Static_assert(sizeof(struct mframe) == 16, "a merged frame has no padding");

struct mstack {
	size_t first; /* in fr */
	uint16_t depth, flags;
};

/* The values of one (stack, state, syscall): key is stack << 32 | state
 * << 16 | syscall.  nexp processes had it; min and max are of their
 * weights, sumsq the sum of their squares. */
struct mval {
	uint64_t key;
	uint64_t nexp, samples, weight, system, wait, wmin, wmax;
	unsigned __int128 sumsq;
};

struct sonde_merge {
	struct mobj *obj;
	size_t nobj, capobj;
	struct u64map objmap; /* hash of key (probed) -> obj */
	struct mframe *fr;
	size_t nfr, capfr;
	struct mstack *st;
	size_t nst, capst;
	struct u64map stmap; /* hash of frames (probed) -> st */
	struct mval *val;
	size_t nval, capval;
	struct u64map valmap; /* key -> val */
	uint64_t nexp;
	uint64_t clock_ns;   /* least clock interval seen, 0 none */
	uint64_t offcpu_ns;  /* least off-CPU interval seen, 0 none */
	uint64_t dur_ns;     /* longest run */
	uint64_t depth_limit; /* largest */
	uint64_t microstates; /* processes that recorded them */
	char *exe;	      /* least executable path seen */
	char **warn;	      /* kept sorted */
	size_t nwarn, capwarn;
	char *error;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 16;

	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * size);

	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static void say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

struct sonde_merge *sonde_merge_new(void)
{
	return calloc(1, sizeof(struct sonde_merge));
}

void sonde_merge_free(struct sonde_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nobj; i++) {
		free(m->obj[i].key);
		free(m->obj[i].path);
		free(m->obj[i].buildid);
	}
	for (size_t i = 0; i < m->nwarn; i++)
		free(m->warn[i]);
	free(m->obj);
	free(m->objmap.s);
	free(m->fr);
	free(m->st);
	free(m->stmap.s);
	free(m->val);
	free(m->valmap.s);
	free(m->exe);
	free(m->warn);
	free(m->error);
	free(m);
}

uint64_t sonde_merge_count(const struct sonde_merge *m)
{
	return m->nexp;
}

/* ---- interning ------------------------------------------------------- */

static int set_min_str(char **dst, const char *s)
{
	if (!s || (*dst && strcmp(*dst, s) <= 0))
		return 0;
	char *c = strdup(s);

	if (!c)
		return -1;
	free(*dst);
	*dst = c;
	return 0;
}

/* The object of key (path and buildid as seen); its index or -1. */
static long intern_obj(struct sonde_merge *m, const char *key, const char *path, const char *buildid,
		       int64_t lo_off, int64_t hi_off)
{
	uint64_t h = u64map_hash_str(key);
	long i;

	for (;; h++) {
		i = u64map_get(&m->objmap, h);
		if (i < 0)
			break;
		if (!strcmp(m->obj[i].key, key)) {
			struct mobj *o = &m->obj[i];

			if (set_min_str(&o->path, path) < 0)
				return -1;
			if (lo_off < o->lo_off)
				o->lo_off = lo_off;
			if (hi_off > o->hi_off)
				o->hi_off = hi_off;
			return i;
		}
	}
	if (grow((void **)&m->obj, &m->capobj, m->nobj + 1, sizeof(*m->obj)) < 0)
		return -1;
	struct mobj *o = &m->obj[m->nobj];

	*o = (struct mobj){ .lo_off = lo_off, .hi_off = hi_off };
	o->key = strdup(key);
	o->path = strdup(path ? path : "");
	o->buildid = buildid ? strdup(buildid) : NULL;
	if (!o->key || !o->path || (buildid && !o->buildid) || u64map_put(&m->objmap, h, (uint32_t)m->nobj) < 0) {
		free(o->key);
		free(o->path);
		free(o->buildid);
		return -1;
	}
	return (long)m->nobj++;
}

static long intern_stack(struct sonde_merge *m, const struct mframe *f, uint16_t depth, uint16_t flags)
{
	uint64_t h = fnv(fnv(0xcbf29ce484222325ull, &flags, sizeof(flags)), f, depth * sizeof(*f));

	for (;; h++) {
		long i = u64map_get(&m->stmap, h);

		if (i < 0)
			break;
		const struct mstack *s = &m->st[i];

		if (s->depth == depth && s->flags == flags && !memcmp(&m->fr[s->first], f, depth * sizeof(*f)))
			return i;
	}
	if (m->nst >= UINT32_MAX - 1 || grow((void **)&m->st, &m->capst, m->nst + 1, sizeof(*m->st)) < 0 ||
	    grow((void **)&m->fr, &m->capfr, m->nfr + depth, sizeof(*m->fr)) < 0 ||
	    u64map_put(&m->stmap, h, (uint32_t)m->nst) < 0)
		return -1;
	memcpy(&m->fr[m->nfr], f, depth * sizeof(*f));
	m->st[m->nst] = (struct mstack){ .first = m->nfr, .depth = depth, .flags = flags };
	m->nfr += depth;
	return (long)m->nst++;
}

static struct mval *find_val(struct sonde_merge *m, uint64_t key)
{
	long i = u64map_get(&m->valmap, key);

	if (i >= 0)
		return &m->val[i];
	if (grow((void **)&m->val, &m->capval, m->nval + 1, sizeof(*m->val)) < 0 ||
	    u64map_put(&m->valmap, key, (uint32_t)m->nval) < 0)
		return NULL;
	m->val[m->nval] = (struct mval){ .key = key, .wmin = UINT64_MAX };
	return &m->val[m->nval++];
}

/* dst += src, src standing for src->nexp processes. */
static void val_add(struct mval *d, const struct mval *s)
{
	d->nexp += s->nexp;
	d->samples += s->samples;
	d->weight += s->weight;
	d->system += s->system;
	d->wait += s->wait;
	if (s->wmin < d->wmin)
		d->wmin = s->wmin;
	if (s->wmax > d->wmax)
		d->wmax = s->wmax;
	d->sumsq += s->sumsq;
}

static int add_warning(struct sonde_merge *m, const char *w)
{
	size_t lo = 0, hi = m->nwarn;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(m->warn[mid], w);

		if (!c)
			return 0;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (grow((void **)&m->warn, &m->capwarn, m->nwarn + 1, sizeof(*m->warn)) < 0)
		return -1;
	char *c = strdup(w);

	if (!c)
		return -1;
	memmove(&m->warn[lo + 1], &m->warn[lo], (m->nwarn - lo) * sizeof(*m->warn));
	m->warn[lo] = c;
	m->nwarn++;
	return 0;
}

int sonde_merge_set_error(struct sonde_merge *m, const char *msg)
{
	if (!msg || (m->error && strcmp(m->error, msg) <= 0))
		return 0;
	char *c = strdup(msg);

	if (!c)
		return -1;
	free(m->error);
	m->error = c;
	return 0;
}

const char *sonde_merge_error(const struct sonde_merge *m)
{
	return m->error;
}

static void scalars_add(struct sonde_merge *d, uint64_t nexp, uint64_t clock_ns, uint64_t offcpu_ns, uint64_t dur_ns,
			uint64_t depth, uint64_t microstates)
{
	d->nexp += nexp;
	if (clock_ns && (!d->clock_ns || clock_ns < d->clock_ns))
		d->clock_ns = clock_ns;
	if (offcpu_ns && (!d->offcpu_ns || offcpu_ns < d->offcpu_ns))
		d->offcpu_ns = offcpu_ns;
	if (dur_ns > d->dur_ns)
		d->dur_ns = dur_ns;
	if (depth > d->depth_limit)
		d->depth_limit = depth;
	d->microstates += microstates;
}

/* ---- one experiment -------------------------------------------------- */

/* What one experiment adds, gathered before it is folded in: each of its
 * (stack, state) once, so that its min, max and square are of its sum. */
struct one {
	struct mval *val;
	size_t nval, capval;
	struct u64map map;
	/* (stack id, epoch) -> merged stack, probed from a mix of both */
	struct u64map cache;
	uint64_t *cache_id;
	uint32_t *cache_epoch;
	size_t ncache, capcache, capepoch;
	uint32_t *objmap; /* the experiment's objects -> merged, NO_OBJ unknown */
	struct mframe *tmp;
	size_t captmp;
};

static void one_free(struct one *o)
{
	free(o->val);
	free(o->map.s);
	free(o->cache.s);
	free(o->cache_id);
	free(o->cache_epoch);
	free(o->objmap);
	free(o->tmp);
}

static long obj_of(struct sonde_merge *m, struct one *one, const struct sonde_object *objs,
		   const struct sonde_object *o)
{
	size_t k = (size_t)(o - objs);

	if (one->objmap[k] != NO_OBJ)
		return one->objmap[k];
	char *key;

	if (asprintf(&key, "%s:%s", o->buildid ? "b" : "p", o->buildid ? o->buildid : o->path) < 0)
		return -1;
	long i = intern_obj(m, key, o->path, o->buildid, (int64_t)(o->lo - o->base), (int64_t)(o->hi - o->base));

	free(key);
	if (i >= 0)
		one->objmap[k] = (uint32_t)i;
	return i;
}

static long stack_of(struct sonde_merge *m, struct one *one, const struct sonde_exp *exp,
		     const struct sonde_object *objs, uint64_t stack_id, uint64_t time_ns)
{
	uint32_t epoch = sonde_exp_map_epochs(exp) > 1 ? sonde_exp_map_epoch(exp, time_ns, NULL, NULL) : 0;
	uint64_t h = stack_id ^ ((uint64_t)epoch * 0x9e3779b97f4a7c15ull);

	for (;; h++) {
		long i = u64map_get(&one->cache, h);

		if (i < 0)
			break;
		if (one->cache_id[i] == stack_id && one->cache_epoch[i] == epoch)
			return (long)u64map_find(&one->cache, h)->tag;
	}
	const struct sonde_stack *s = sonde_exp_stack(exp, stack_id);
	struct mframe unknown = { .obj = NO_OBJ };
	const struct mframe *f = &unknown;
	uint16_t depth = 1, flags = SONDE_STACK_INCOMPLETE;

	if (s && s->depth) {
		if (grow((void **)&one->tmp, &one->captmp, s->depth, sizeof(*one->tmp)) < 0)
			return -1;
		for (uint16_t d = 0; d < s->depth; d++) {
			const struct sonde_frame *sf = &s->frame[d];
			struct mframe *mf = &one->tmp[d];

			*mf = (struct mframe){ .off = sf->pc,
					       .obj = NO_OBJ,
					       .kind = sf->kind,
					       .exact = (uint8_t)(sf->exact | (sf->scoped ? 2 : 0)),
					       .aux = sf->aux };
			if (sf->kind != SONDE_FRAME_NATIVE)
				continue;
			const struct sonde_object *o = sonde_exp_find_object(exp, sf->pc, time_ns);

			/* A return address just past its object's end is a
			 * call at the object's last byte. */
			if (!o && !sf->exact && sf->pc)
				o = sonde_exp_find_object(exp, sf->pc - 1, time_ns);
			if (o) {
				long oi = obj_of(m, one, objs, o);

				if (oi < 0)
					return -1;
				mf->obj = (uint32_t)oi;
				mf->off = sf->pc - o->base;
			}
		}
		f = one->tmp;
		depth = s->depth;
		flags = s->flags;
	}
	long si = intern_stack(m, f, depth, flags);

	if (si < 0)
		return -1;
	if (grow((void **)&one->cache_id, &one->capcache, one->ncache + 1, sizeof(*one->cache_id)) < 0 ||
	    grow((void **)&one->cache_epoch, &one->capepoch, one->ncache + 1, sizeof(*one->cache_epoch)) < 0 ||
	    u64map_put(&one->cache, h, (uint32_t)one->ncache) < 0)
		return -1;
	u64map_find(&one->cache, h)->tag = (uint32_t)si;
	one->cache_id[one->ncache] = stack_id;
	one->cache_epoch[one->ncache] = epoch;
	one->ncache++;
	return si;
}

int sonde_merge_add(struct sonde_merge *m, const char *path, const char *name, char *err, size_t errlen)
{
	char oerr[512];
	struct sonde_exp *exp = sonde_exp_open(path, oerr, sizeof(oerr));

	if (!exp) {
		say(err, errlen, "sub-experiment '%s': %s", name, oerr);
		return -1;
	}
	struct one one = { 0 };
	size_t nobjs;
	const struct sonde_object *objs = sonde_exp_objects(exp, &nobjs);
	int rc = -1;

	if (nobjs && !(one.objmap = malloc(nobjs * sizeof(*one.objmap))))
		goto oom;
	memset(one.objmap, 0xff, nobjs * sizeof(*one.objmap));

	struct sonde_sample_iter it;
	struct sonde_sample s;

	sonde_sample_iter_init(&it, exp);
	while (sonde_sample_iter_next(&it, &s)) {
		long si = stack_of(m, &one, exp, objs, s.stack_id, s.time_ns);

		if (si < 0)
			goto oom;
		uint64_t key = (uint64_t)si << 32 | (uint64_t)s.state << 16 | s.syscall;
		long vi = u64map_get(&one.map, key);

		if (vi < 0) {
			if (grow((void **)&one.val, &one.capval, one.nval + 1, sizeof(*one.val)) < 0 ||
			    u64map_put(&one.map, key, (uint32_t)one.nval) < 0)
				goto oom;
			one.val[one.nval] = (struct mval){ .key = key, .nexp = 1 };
			vi = (long)one.nval++;
		}
		struct mval *v = &one.val[vi];

		v->samples++;
		v->weight += s.weight_ns;
		v->system += s.system_ns;
		v->wait += s.wait_cpu_ns;
	}
	for (size_t i = 0; i < one.nval; i++) {
		struct mval *v = &one.val[i], *d = find_val(m, v->key);

		if (!d)
			goto oom;
		v->wmin = v->wmax = v->weight;
		v->sumsq = (unsigned __int128)v->weight * v->weight;
		val_add(d, v);
	}
	const struct sonde_exp_info *in = sonde_exp_info(exp);

	scalars_add(m, 1, in->settings.clock_interval_ns, in->settings.offcpu_interval_ns,
		    in->end_ns > in->start_ns ? in->end_ns - in->start_ns : 0, in->settings.depth_limit,
		    sonde_exp_has_microstates(exp));
	if (set_min_str(&m->exe, in->target.exe) < 0)
		goto oom;
	if (sonde_exp_nerrors(exp)) {
		size_t np;
		const struct sonde_problem *p = sonde_exp_problems(exp, &np);
		const char *first = "";

		for (size_t i = 0; i < np; i++)
			if (p[i].severity == SONDE_PROBLEM_ERROR) {
				first = p[i].msg;
				break;
			}
		char w[1024];

		snprintf(w, sizeof(w), "sub-experiment '%s' is damaged (%zu read errors; its valid data merged): %s",
			 name, sonde_exp_nerrors(exp), first);
		if (add_warning(m, w) < 0)
			goto oom;
		say(err, errlen, "%s", w);
		rc = 1;
	} else {
		rc = 0;
	}
	goto out;
oom:
	say(err, errlen, "sub-experiment '%s': out of memory", name);
out:
	one_free(&one);
	sonde_exp_close(exp);
	return rc;
}

/* ---- combining ------------------------------------------------------- */

int sonde_merge_combine(struct sonde_merge *dst, const struct sonde_merge *src)
{
	uint32_t *omap = src->nobj ? malloc(src->nobj * sizeof(*omap)) : NULL;
	uint32_t *smap = src->nst ? malloc(src->nst * sizeof(*smap)) : NULL;
	struct mframe *tmp = NULL;
	size_t captmp = 0;
	int rc = -1;

	if ((src->nobj && !omap) || (src->nst && !smap))
		goto out;
	for (size_t i = 0; i < src->nobj; i++) {
		const struct mobj *o = &src->obj[i];
		long k = intern_obj(dst, o->key, o->path, o->buildid, o->lo_off, o->hi_off);

		if (k < 0)
			goto out;
		omap[i] = (uint32_t)k;
	}
	for (size_t i = 0; i < src->nst; i++) {
		const struct mstack *s = &src->st[i];

		if (grow((void **)&tmp, &captmp, s->depth, sizeof(*tmp)) < 0)
			goto out;
		for (uint16_t d = 0; d < s->depth; d++) {
			tmp[d] = src->fr[s->first + d];
			if (tmp[d].obj != NO_OBJ)
				tmp[d].obj = omap[tmp[d].obj];
		}
		long k = intern_stack(dst, tmp, s->depth, s->flags);

		if (k < 0)
			goto out;
		smap[i] = (uint32_t)k;
	}
	for (size_t i = 0; i < src->nval; i++) {
		const struct mval *v = &src->val[i];
		struct mval *d = find_val(dst, (uint64_t)smap[v->key >> 32] << 32 | (v->key & 0xffffffffu));

		if (!d)
			goto out;
		val_add(d, v);
	}
	scalars_add(dst, src->nexp, src->clock_ns, src->offcpu_ns, src->dur_ns, src->depth_limit, src->microstates);
	if (set_min_str(&dst->exe, src->exe) < 0 || sonde_merge_set_error(dst, src->error) < 0)
		goto out;
	for (size_t i = 0; i < src->nwarn; i++)
		if (add_warning(dst, src->warn[i]) < 0)
			goto out;
	rc = 0;
out:
	free(omap);
	free(smap);
	free(tmp);
	return rc;
}

/* ---- packing --------------------------------------------------------- */

struct buf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->oom || grow((void **)&b->p, &b->cap, b->n + n, 1) < 0) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void putstr(struct buf *b, const char *s)
{
	uint64_t n = s ? strlen(s) + 1 : 0;

	put64(b, n);
	if (n)
		put(b, s, n);
}

#define MAGIC 0x31304752454d4453ull /* "SDMERG01" */

int sonde_merge_pack(const struct sonde_merge *m, uint8_t **out, size_t *len)
{
	struct buf b = { 0 };

	put64(&b, MAGIC);
	put64(&b, m->nexp);
	put64(&b, m->clock_ns);
	put64(&b, m->offcpu_ns);
	put64(&b, m->dur_ns);
	put64(&b, m->depth_limit);
	put64(&b, m->microstates);
	putstr(&b, m->exe);
	putstr(&b, m->error);
	put64(&b, m->nwarn);
	for (size_t i = 0; i < m->nwarn; i++)
		putstr(&b, m->warn[i]);
	put64(&b, m->nobj);
	for (size_t i = 0; i < m->nobj; i++) {
		putstr(&b, m->obj[i].key);
		putstr(&b, m->obj[i].path);
		putstr(&b, m->obj[i].buildid);
		put64(&b, (uint64_t)m->obj[i].lo_off);
		put64(&b, (uint64_t)m->obj[i].hi_off);
	}
	put64(&b, m->nst);
	for (size_t i = 0; i < m->nst; i++) {
		put64(&b, (uint64_t)m->st[i].depth << 16 | m->st[i].flags);
		put(&b, &m->fr[m->st[i].first], m->st[i].depth * sizeof(struct mframe));
	}
	put64(&b, m->nval);
	put(&b, m->val, m->nval * sizeof(*m->val));
	if (b.oom) {
		free(b.p);
		return -1;
	}
	*out = b.p;
	*len = b.n;
	return 0;
}

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static bool get(struct rd *r, void *v, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return false;
	}
	memcpy(v, r->p, n);
	r->p += n;
	return true;
}

static uint64_t get64(struct rd *r)
{
	uint64_t v = 0;

	get(r, &v, 8);
	return v;
}

/* A string (NULL for an absent one); *ok false when malformed. */
static const char *getstr(struct rd *r)
{
	uint64_t n = get64(r);

	if (!n || r->bad)
		return NULL;
	if ((uint64_t)(r->end - r->p) < n || r->p[n - 1]) {
		r->bad = true;
		return NULL;
	}
	const char *s = (const char *)r->p;

	r->p += n;
	return s;
}

struct sonde_merge *sonde_merge_unpack(const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	struct rd r = { buf, buf + len, false };
	struct sonde_merge *m = sonde_merge_new();
	struct mframe *tmp = NULL;
	size_t captmp = 0;

	if (!m)
		goto oom;
	if (get64(&r) != MAGIC)
		goto bad;
	uint64_t nexp = get64(&r), clock_ns = get64(&r), offcpu_ns = get64(&r), dur_ns = get64(&r),
		 dlim = get64(&r), ms = get64(&r);

	scalars_add(m, nexp, clock_ns, offcpu_ns, dur_ns, dlim, ms);
	if (set_min_str(&m->exe, getstr(&r)) < 0 || sonde_merge_set_error(m, getstr(&r)) < 0)
		goto oom;
	uint64_t n = get64(&r);

	for (uint64_t i = 0; i < n && !r.bad; i++) {
		const char *w = getstr(&r);

		if (w && add_warning(m, w) < 0)
			goto oom;
	}
	n = get64(&r);
	for (uint64_t i = 0; i < n && !r.bad; i++) {
		const char *key = getstr(&r), *path = getstr(&r), *bid = getstr(&r);
		int64_t lo = (int64_t)get64(&r), hi = (int64_t)get64(&r);

		if (r.bad || !key)
			goto bad;
		if (intern_obj(m, key, path, bid, lo, hi) != (long)i)
			goto bad; /* a key twice, or out of memory */
	}
	n = get64(&r);
	for (uint64_t i = 0; i < n && !r.bad; i++) {
		uint64_t df = get64(&r);
		uint16_t depth = (uint16_t)(df >> 16);

		if (df >> 32 || !depth || grow((void **)&tmp, &captmp, depth, sizeof(*tmp)) < 0 ||
		    !get(&r, tmp, depth * sizeof(*tmp)))
			goto bad;
		for (uint16_t d = 0; d < depth; d++)
			if (tmp[d].obj != NO_OBJ && tmp[d].obj >= m->nobj)
				goto bad;
		if (intern_stack(m, tmp, depth, (uint16_t)df) != (long)i)
			goto bad;
	}
	n = get64(&r);
	for (uint64_t i = 0; i < n && !r.bad; i++) {
		struct mval v;

		if (!get(&r, &v, sizeof(v)) || (v.key >> 32) >= m->nst || u64map_get(&m->valmap, v.key) >= 0)
			goto bad;
		struct mval *d = find_val(m, v.key);

		if (!d)
			goto oom;
		val_add(d, &v);
	}
	if (r.bad || r.p != r.end)
		goto bad;
	free(tmp);
	return m;
bad:
	say(err, errlen, "a partial merge is damaged (%zu bytes)", len);
	goto fail;
oom:
	say(err, errlen, "out of memory");
fail:
	free(tmp);
	sonde_merge_free(m);
	return NULL;
}

/* ---- the founder's sub-experiments ----------------------------------- */

struct list {
	char **p;
	size_t n, cap;
};

static int list_one(void *arg, const char *path, const char *name, const struct sonde_subexp_kind *k)
{
	struct list *l = arg;

	if (grow((void **)&l->p, &l->cap, l->n + 1, sizeof(*l->p)) < 0 || !(l->p[l->n] = strdup(path)))
		return -1;
	l->n++;
	return 0;
}

int sonde_merge_list(const char *dir, char ***paths, size_t *n, char *err, size_t errlen)
{
	struct list l = { 0 };
	char log[PATH_MAX];
	struct stat st;

	if (stat(dir, &st) < 0) {
		say(err, errlen, "cannot open '%s': %s", dir, strerror(errno));
		return -1;
	}
	snprintf(log, sizeof(log), "%s/log.xml", dir);
	if (!S_ISDIR(st.st_mode) || access(log, R_OK) < 0) {
		say(err, errlen, "'%s' is not an experiment (no log.xml)", dir);
		return -1;
	}
	int rc = sonde_subexp_scan(dir, sonde_subexp_kinds, sonde_subexp_nkinds, list_one, &l, NULL, NULL, 0);

	if (rc || !l.n) {
		if (rc)
			say(err, errlen, "cannot read the sub-experiments of '%s': %s", dir,
			    rc < 0 && errno ? strerror(errno) : "out of memory");
		else
			say(err, errlen, "'%s' has no sub-experiments to merge", dir);
		for (size_t i = 0; i < l.n; i++)
			free(l.p[i]);
		free(l.p);
		return -1;
	}
	*paths = l.p;
	*n = l.n;
	return 0;
}

/* ---- writing --------------------------------------------------------- */

/* Where the merged experiment puts its objects: above where Linux puts
 * executables (0x55...) and below its libraries (0x7f...), so that a
 * native pc no object held (kept as recorded) rarely lands in one. */
#define LAYOUT_START 0x100000000000ull
#define LAYOUT_ALIGN 0x200000ull

struct order {
	const struct sonde_merge *m;
	const uint64_t *pc; /* per frame, as written */
	size_t *objrank;
};

static int cmp_obj(const void *a, const void *b, void *arg)
{
	const struct sonde_merge *m = arg;

	return strcmp(m->obj[*(const size_t *)a].key, m->obj[*(const size_t *)b].key);
}

static int cmp_stack(const void *a, const void *b, void *arg)
{
	const struct order *o = arg;
	const struct mstack *x = &o->m->st[*(const size_t *)a], *y = &o->m->st[*(const size_t *)b];
	uint16_t n = x->depth < y->depth ? x->depth : y->depth;

	for (uint16_t d = 0; d < n; d++) {
		const struct mframe *f = &o->m->fr[x->first + d], *g = &o->m->fr[y->first + d];
		uint64_t p = o->pc[x->first + d], q = o->pc[y->first + d];

		if (p != q)
			return p < q ? -1 : 1;
		if (f->kind != g->kind)
			return f->kind < g->kind ? -1 : 1;
		if (f->aux != g->aux)
			return f->aux < g->aux ? -1 : 1;
		if (f->exact != g->exact)
			return f->exact < g->exact ? -1 : 1;
	}
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return (x->flags > y->flags) - (x->flags < y->flags);
}

/* Values by (stack's rank, state, syscall): the key with the stack's
 * place in the output instead of its index. */
static int cmp_val(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void xml_attr(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s < 0x20)
				fputc(' ', f);
			else
				fputc(*s, f);
		}
	}
}

static char *u128_dec(unsigned __int128 v, char *buf /* 40 */)
{
	char *p = buf + 39;

	*p = '\0';
	do {
		*--p = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	return p;
}

#define START_NS 1000000000ull
#define MAX_PKT_NS (1ull << 47) /* below the reader's 2^48 per sample */

static int write_exp(const struct sonde_merge *m, const char *founder, const char *dir, char *err, size_t errlen)
{
	size_t *oord = NULL, *sord = NULL, *srank = NULL;
	uint64_t *base = NULL, *pc = NULL, *ids = NULL, *vord = NULL;
	struct sonde_frame *frames = NULL;
	char *text = NULL;
	size_t textlen = 0;
	FILE *tf = NULL;
	struct sonde_expw *w = NULL;
	int rc = -1;

	if ((m->nobj && (!(oord = malloc(m->nobj * sizeof(*oord))) || !(base = malloc(m->nobj * sizeof(*base))))) ||
	    (m->nst && (!(sord = malloc(m->nst * sizeof(*sord))) || !(srank = malloc(m->nst * sizeof(*srank))) ||
			!(ids = malloc(m->nst * sizeof(*ids))))) ||
	    (m->nfr && !(pc = malloc(m->nfr * sizeof(*pc)))) || (m->nval && !(vord = malloc(m->nval * 16))) ||
	    !(frames = malloc(SONDE_MAX_DEPTH_LIMIT * sizeof(*frames)))) {
		say(err, errlen, "out of memory");
		goto out;
	}
	/* Objects in key order, laid out one after the other. */
	for (size_t i = 0; i < m->nobj; i++)
		oord[i] = i;
	qsort_r(oord, m->nobj, sizeof(*oord), cmp_obj, (void *)m);
	uint64_t cursor = LAYOUT_START;

	for (size_t k = 0; k < m->nobj; k++) {
		const struct mobj *o = &m->obj[oord[k]];
		uint64_t b = (cursor - (uint64_t)o->lo_off + LAYOUT_ALIGN - 1) & ~(LAYOUT_ALIGN - 1);

		base[oord[k]] = b;
		cursor = ((b + (uint64_t)o->hi_off) + 2 * LAYOUT_ALIGN - 1) & ~(LAYOUT_ALIGN - 1);
	}
	for (size_t i = 0; i < m->nfr; i++)
		pc[i] = m->fr[i].obj == NO_OBJ ? m->fr[i].off : base[m->fr[i].obj] + m->fr[i].off;
	struct order ord = { m, pc, NULL };

	for (size_t i = 0; i < m->nst; i++)
		sord[i] = i;
	qsort_r(sord, m->nst, sizeof(*sord), cmp_stack, &ord);
	for (size_t k = 0; k < m->nst; k++)
		srank[sord[k]] = k;

	w = sonde_expw_create(dir, err, errlen);
	if (!w)
		goto out;
	sonde_expw_process(w, 1, START_NS);
	/* log.xml */
	{
		tf = open_memstream(&text, &textlen);
		if (!tf)
			goto oom;
		const char *fname = strrchr(founder, '/');

		fname = fname && fname[1] ? fname + 1 : founder;
		fprintf(tf,
			"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<experiment format=\"%d\" collector=\"sonde merge\">\n"
			"<target pid=\"1\" ppid=\"0\" cwd=\"/\" exe=\"",
			SONDE_FORMAT_VERSION);
		xml_attr(tf, m->exe ? m->exe : "");
		fprintf(tf, "\" command=\"sonde merge of %llu sub-experiments of ", (unsigned long long)m->nexp);
		xml_attr(tf, fname);
		fprintf(tf,
			"\"/>\n<settings clock_source=\"merged\" clock_interval_ns=\"%llu\" depth_limit=\"%llu\" "
			"size_limit_mb=\"0\" duration_s=\"0\"",
			(unsigned long long)m->clock_ns, (unsigned long long)m->depth_limit);
		if (m->offcpu_ns)
			fprintf(tf, " offcpu_interval_ns=\"%llu\"", (unsigned long long)m->offcpu_ns);
		if (m->microstates)
			fprintf(tf, " microstates=\"1\"");
		fprintf(tf,
			"/>\n<time start_ns=\"%llu\"/>\n"
			"<dataformat file=\"profile\" kind=\"1\"/>\n"
			"<dataformat file=\"stacks\" kind=\"2\"/>\n"
			"<dataformat file=\"overview\" kind=\"3\"/>\n"
			"<event kind=\"start\" time_ns=\"%llu\"/>\n",
			(unsigned long long)START_NS, (unsigned long long)START_NS);
		for (size_t i = 0; i < m->nwarn; i++) {
			fprintf(tf, "<event kind=\"warning\" time_ns=\"%llu\" text=\"", (unsigned long long)START_NS);
			xml_attr(tf, m->warn[i]);
			fprintf(tf, "\"/>\n");
		}
		fprintf(tf, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n",
			(unsigned long long)(START_NS + (m->dur_ns ? m->dur_ns : 1)));
		if (fclose(tf)) {
			tf = NULL;
			goto oom;
		}
		tf = NULL;
		if (sonde_expw_log(w, "%s", text) < 0)
			goto werr;
	}
	/* map.xml: ids in key order */
	for (size_t k = 0; k < m->nobj; k++) {
		const struct mobj *o = &m->obj[oord[k]];
		uint64_t b = base[oord[k]];

		free(text);
		text = NULL;
		if (!(tf = open_memstream(&text, &textlen)))
			goto oom;
		fprintf(tf, "<object id=\"%zu\" time_ns=\"%llu\" event=\"load\" path=\"", k + 1,
			(unsigned long long)START_NS);
		xml_attr(tf, o->path);
		fprintf(tf, "\" base=\"0x%llx\" lo=\"0x%llx\" hi=\"0x%llx\"", (unsigned long long)b,
			(unsigned long long)(b + (uint64_t)o->lo_off), (unsigned long long)(b + (uint64_t)o->hi_off));
		if (o->buildid) {
			fprintf(tf, " buildid=\"");
			xml_attr(tf, o->buildid);
			fprintf(tf, "\"");
		}
		fprintf(tf, "/>\n");
		if (fclose(tf)) {
			tf = NULL;
			goto oom;
		}
		tf = NULL;
		if (sonde_expw_map(w, "%s", text) < 0)
			goto werr;
	}
	if (!m->nobj && sonde_expw_map(w, "%s", "") < 0)
		goto werr;
	/* stacks, in content order */
	for (size_t k = 0; k < m->nst; k++) {
		const struct mstack *s = &m->st[sord[k]];

		for (uint16_t d = 0; d < s->depth; d++) {
			const struct mframe *f = &m->fr[s->first + d];

			frames[d] = (struct sonde_frame){ .pc = pc[s->first + d], .kind = f->kind,
							  .exact = (f->exact & 1) != 0, .aux = f->aux,
							  .scoped = (f->exact & 2) != 0 };
		}
		if (sonde_expw_frames(w, s->flags, s->depth, frames, &ids[sord[k]]) < 0)
			goto werr;
	}
	/* samples, by (stack, state, syscall): one packet per 2^47 ns */
	for (size_t i = 0; i < m->nval; i++) {
		vord[2 * i] = srank[m->val[i].key >> 32] << 32 | (m->val[i].key & 0xffffffffu);
		vord[2 * i + 1] = i;
	}
	qsort(vord, m->nval, 16, cmp_val);
	free(text);
	text = NULL;
	if (!(tf = open_memstream(&text, &textlen)))
		goto oom;
	fprintf(tf, "# sonde merge: %llu experiments\n"
		    "# stack\tstate\tsyscall\texperiments\tsamples\tweight_ns\tmin_ns\tmax_ns\tsumsq_ns2\tsystem_ns\twait_cpu_ns\n",
		(unsigned long long)m->nexp);
	for (size_t k = 0; k < m->nval; k++) {
		const struct mval *v = &m->val[vord[2 * k + 1]];
		uint64_t id = ids[v->key >> 32];
		uint16_t state = (uint16_t)(v->key >> 16), sc = (uint16_t)v->key;
		uint64_t wt = v->weight, sys = v->system, wait = v->wait;
		char dec[40];

		do {
			uint64_t a = wt < MAX_PKT_NS ? wt : MAX_PKT_NS, y = sys < a ? sys : a,
				 c = wait < MAX_PKT_NS ? wait : MAX_PKT_NS;
			int64_t r = sonde_state_offcpu(state)
					    ? sonde_expw_offcpu(w, 2, 1, state, sc, START_NS, a, id)
					    : sonde_expw_sample_state_ms(w, 1, 0xffff, state, START_NS, a, y, c, id);

			if (r < 0)
				goto werr;
			wt -= a;
			sys -= y;
			wait -= c;
		} while (wt || wait);
		fprintf(tf, "%#llx\t%u\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%s\t%llu\t%llu\n", (unsigned long long)id, state,
			sc, (unsigned long long)v->nexp, (unsigned long long)v->samples, (unsigned long long)v->weight,
			(unsigned long long)v->wmin, (unsigned long long)v->wmax, u128_dec(v->sumsq, dec),
			(unsigned long long)v->system, (unsigned long long)v->wait);
	}
	if (fclose(tf)) {
		tf = NULL;
		goto oom;
	}
	tf = NULL;
	if (sonde_expw_text(w, "merged", "%s", text) < 0)
		goto werr;
	rc = sonde_expw_finish(w, 0, err, errlen);
	w = NULL;
	goto out;
werr:
	sonde_expw_finish(w, 0, err, errlen);
	w = NULL;
	if (!err[0])
		say(err, errlen, "cannot write '%s'", dir);
	goto out;
oom:
	say(err, errlen, "out of memory");
out:
	if (tf)
		fclose(tf);
	if (w)
		sonde_expw_finish(w, 0, NULL, 0);
	free(text);
	free(oord);
	free(base);
	free(sord);
	free(srank);
	free(ids);
	free(pc);
	free(vord);
	free(frames);
	return rc;
}

int sonde_merge_check_out(const char *out, char *err, size_t errlen)
{
	struct stat st;

	if (!*out) {
		say(err, errlen, "the output's name is empty");
		return -1;
	}
	if (lstat(out, &st) == 0) {
		say(err, errlen, "'%s' exists (sonde merge writes a new experiment)", out);
		return -1;
	}
	return 0;
}

/* Removes what write_exp may have made in dir, and dir. */
static void remove_partial(const char *dir)
{
	static const char *const names[] = { "log.xml", "map.xml", "profile", "stacks", "overview", "counters",
					     "merged", "archives" };
	char p[PATH_MAX + 16];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

int sonde_merge_output(const struct sonde_merge *m, const char *founder, const char *out, char *err,
		       size_t errlen)
{
	char tmp[PATH_MAX], arch[PATH_MAX + 16], link[PATH_MAX + 16], real[PATH_MAX];
	struct stat st;

	if (sonde_merge_check_out(out, err, errlen) < 0)
		return -1;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", out, (long)getpid()) >= sizeof(tmp)) {
		say(err, errlen, "'%s': the name is too long", out);
		return -1;
	}
	if (mkdir(tmp, 0777) < 0) {
		say(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		return -1;
	}
	if (write_exp(m, founder, tmp, err, errlen) < 0)
		goto fail;
	/* The founder's archives by reference (their files are named by
	 * build id, which map.xml keeps): copying them costs the job's
	 * binaries again for each merge. */
	snprintf(arch, sizeof(arch), "%s/archives", founder);
	if (stat(arch, &st) == 0 && S_ISDIR(st.st_mode) && realpath(arch, real)) {
		snprintf(link, sizeof(link), "%s/archives", tmp);
		if (symlink(real, link) < 0) {
			say(err, errlen, "cannot link '%s' to '%s': %s", link, real, strerror(errno));
			goto fail;
		}
	}
	if (rename(tmp, out) < 0) {
		say(err, errlen, "cannot rename '%s' to '%s': %s", tmp, out, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	remove_partial(tmp);
	return -1;
}
