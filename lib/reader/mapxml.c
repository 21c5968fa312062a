/*
 * mapxml: the reading of an experiment's map.xml, the load objects and
 * when each was loaded and unloaded, and the lookup of an address in them
 * at a time (sonde_exp_find_object) with its mapping epochs.  Apart from
 * experiment.c because the objects are an index of their own, built once
 * at open and asked for every frame: sorted by address, with a tree of the
 * largest end so that the lookup stays logarithmic on a map that holds
 * thousands of objects or one as large as the address space.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/partition.h"
#include "reader/experiment_internal.h"

/* ---- map.xml ----------------------------------------------------------- */

static int cmp_byaddr_exp_lo(const struct sonde_exp *exp, uint32_t a, uint32_t b)
{
	uint64_t la = exp->objects[a].lo, lb = exp->objects[b].lo;

	if (la != lb)
		return la < lb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Merge sort of the address index (qsort has no context argument). */
static void sort_byaddr(const struct sonde_exp *exp, uint32_t *v, uint32_t *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;

	sort_byaddr(exp, v, tmp, h);
	sort_byaddr(exp, v + h, tmp, n - h);
	size_t i = 0, j = h, k = 0;

	while (i < h && j < n)
		tmp[k++] = cmp_byaddr_exp_lo(exp, v[i], v[j]) <= 0 ? v[i++] : v[j++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Orders indices of the objects arg by file and base, 0 for objects that
 * give the same answers where they lie: the same file at the same base. */
static int cmp_same_file(const void *a, const void *b, void *arg)
{
	const struct sonde_object *o = arg, *x = &o[*(const uint32_t *)a], *y = &o[*(const uint32_t *)b];
	int c;

	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	if ((c = strcmp(x->path, y->path)))
		return c;
	if (x->buildid != y->buildid && (c = !x->buildid ? -1 : !y->buildid ? 1 : strcmp(x->buildid, y->buildid)))
		return c;
	if (x->copy != y->copy && (c = !x->copy ? -1 : !y->copy ? 1 : strcmp(x->copy, y->copy)))
		return c;
	return 0;
}

/* A sorted array's count of values below x (at or below: le). */
static size_t count_below(const uint64_t *v, size_t n, uint64_t x, bool le)
{
	return PARTITION_POINT(0, n, i, le ? v[i] <= x : v[i] < x);
}

/* Whether an object of another file overlaps the object [lo, hi):
 * counted among those that start in [lo, hi), and among those that start
 * below lo and end above it, of all (alo, ahi: the address index's n
 * starts and ends, each sorted) and of its own file at its base (glo,
 * ghi: their ng starts and ends, each sorted), O(log n). */
static bool overlaps_other(uint64_t lo, uint64_t hi, const uint64_t *alo, const uint64_t *ahi, size_t n,
			   const uint64_t *glo, const uint64_t *ghi, size_t ng)
{
	/* starting in [lo, hi), itself included */
	size_t all = count_below(alo, n, hi, false) - count_below(alo, n, lo, false);
	size_t own = count_below(glo, ng, hi, false) - count_below(glo, ng, lo, false);

	if (all > own)
		return true;
	/* starting below lo, ending above it: of those starting below lo,
	 * the ones not ending at or below lo (an end at or below lo has its
	 * start below lo) */
	all = count_below(alo, n, lo, false) - count_below(ahi, n, lo, true);
	own = count_below(glo, ng, lo, false) - count_below(ghi, ng, lo, true);
	return all > own;
}

/*
 * Mapping epochs: sonde_exp_find_object() at a given time can only change
 * where an address was held by two objects that are not the same file at
 * the same base (a library dlclosed and another dlopened in its place),
 * and only at the load or unload of such an object.  Those times, sorted,
 * cut the run into epochs within which every lookup by time gives one
 * answer, so readers may cache per (address or stack, epoch).  Most runs
 * reuse no address: no cut, one epoch, nothing to pay.  Whether an object
 * overlaps one of another file is counted (overlaps_other), not found
 * pair by pair: n objects over one address range (a plugin loaded and
 * unloaded n times, a corrupted range) made n^2 pairs.
 */
static void build_epochs(struct sonde_exp *exp)
{
	size_t n = exp->nbyaddr, nt = 0, cap = 0;
	uint64_t *t = NULL;
	bool *shared = calloc(exp->nobjects + 1, sizeof(*shared));
	uint32_t *byfile = malloc((n + 1) * sizeof(*byfile));
	uint64_t *alo = malloc((n + 1) * sizeof(*alo)), *ahi = malloc((n + 1) * sizeof(*ahi));
	uint64_t *flo = malloc((n + 1) * sizeof(*flo)), *fhi = malloc((n + 1) * sizeof(*fhi));

	if (!shared || !byfile || !alo || !ahi || !flo || !fhi) {
		exp->oom = true;
		goto out;
	}
	/* the index's objects by file: a run of one file has its starts
	 * and ends, each sorted, in flo and fhi */
	for (size_t j = 0; j < n; j++) {
		byfile[j] = exp->byaddr[j];
		alo[j] = exp->objects[exp->byaddr[j]].lo;
		ahi[j] = exp->objects[exp->byaddr[j]].hi;
	}
	qsort_r(byfile, n, sizeof(*byfile), cmp_same_file, exp->objects);
	qsort(ahi, n, sizeof(*ahi), cmp_u64); /* alo is sorted: the index's order */
	for (size_t a = 0, b; a < n; a = b) {
		for (b = a + 1; b < n && !cmp_same_file(&byfile[a], &byfile[b], exp->objects); b++)
			;
		for (size_t j = a; j < b; j++) {
			flo[j] = exp->objects[byfile[j]].lo;
			fhi[j] = exp->objects[byfile[j]].hi;
		}
		qsort(flo + a, b - a, sizeof(*flo), cmp_u64);
		qsort(fhi + a, b - a, sizeof(*fhi), cmp_u64);
		for (size_t j = a; j < b; j++) {
			const struct sonde_object *o = &exp->objects[byfile[j]];

			shared[byfile[j]] = overlaps_other(o->lo, o->hi, alo, ahi, n, flo + a, fhi + a, b - a);
		}
	}
	for (size_t i = 0; i < exp->nobjects; i++) {
		if (!shared[i])
			continue;
		if (sonde_grow(&t, &cap, nt + 2, sizeof(*t), 16)) {
			free(t);
			t = NULL;
			exp->oom = true;
			goto out;
		}
		t[nt++] = exp->objects[i].load_ns;
		if (exp->objects[i].unload_ns != SONDE_TIME_NEVER)
			t[nt++] = exp->objects[i].unload_ns;
	}
	if (nt)
		qsort(t, nt, sizeof(*t), cmp_u64);
	size_t m = 0;
	for (size_t i = 0; i < nt; i++)
		if (!m || t[m - 1] != t[i])
			t[m++] = t[i];
	exp->epoch_at = t;
	exp->nepoch_at = m;
out:
	free(shared);
	free(byfile);
	free(alo);
	free(ahi);
	free(flo);
	free(fhi);
}

static void build_object_index(struct sonde_exp *exp)
{
	size_t n = 0;

	exp->byaddr = malloc((exp->nobjects + 1) * sizeof(*exp->byaddr));
	uint32_t *tmp = malloc((exp->nobjects + 1) * sizeof(*tmp));

	for (exp->hisize = 1; exp->hisize < exp->nobjects; exp->hisize *= 2)
		;
	exp->hitree = calloc(2 * exp->hisize, sizeof(*exp->hitree));
	if (!exp->byaddr || !tmp || !exp->hitree) {
		free(tmp);
		exp->oom = true;
		return;
	}
	for (size_t i = 0; i < exp->nobjects; i++)
		if (exp->objects[i].lo < exp->objects[i].hi)
			exp->byaddr[n++] = (uint32_t)i;
	sort_byaddr(exp, exp->byaddr, tmp, n);
	free(tmp);
	for (size_t i = 0; i < n; i++)
		exp->hitree[exp->hisize + i] = exp->objects[exp->byaddr[i]].hi;
	for (size_t i = exp->hisize; i-- > 1;)
		exp->hitree[i] = exp->hitree[2 * i] > exp->hitree[2 * i + 1] ? exp->hitree[2 * i] : exp->hitree[2 * i + 1];
	exp->nbyaddr = n;
	build_epochs(exp);
}

static void read_map(struct sonde_exp *exp)
{
	static const char file[] = "map.xml";
	size_t len;
	int r = exp_read_whole(exp, file, &exp->mapbuf, &len);

	if (r == 1) {
		exp_problem(exp, SONDE_PROBLEM_WARNING,
			    "'map.xml' is missing; frames cannot be attributed to load objects");
		return;
	}
	if (r < 0) {
		exp_problem(exp, SONDE_PROBLEM_ERROR, "cannot read 'map.xml': %s", strerror(errno));
		return;
	}

	struct sonde_xml x;
	struct sonde_xml_elem e;
	char msg[256];
	/* The objects still loaded, by id: the latest in `loaded` (NONE: no
	 * more), each one's predecessor of its id in `prev`.  An unload takes
	 * the latest; searching the objects backwards for it made n unloads
	 * of n objects (a cut or corrupted map.xml, a plugin loaded and
	 * unloaded all run long) n^2. */
	enum { NONE = UINT32_MAX - 1 };
	struct u64map loaded = { 0 };
	uint32_t *prev = NULL;
	size_t capprev = 0;

	sonde_xml_init(&x, exp->mapbuf, len);
	while ((r = sonde_xml_next(&x, &e, msg, sizeof(msg))) != 0) {
		if (r < 0) {
			exp_problem(exp, SONDE_PROBLEM_WARNING, "'%s' %s; ignored", file, msg);
			continue;
		}
		if (e.kind == SONDE_XML_CLOSE || e.kind == SONDE_XML_OTHER || strcmp(e.name, "object"))
			continue;
		const char *ev = sonde_xml_attr(&e, "event");
		uint32_t id = 0;
		uint64_t t = 0;

		if (!sonde_xml_attr(&e, "id")) {
			exp_problem(exp, SONDE_PROBLEM_WARNING, "'%s' line %u: <object> has no id; ignored",
				    file, e.line);
			continue;
		}
		exp_attr_u32(exp, file, &e, "id", &id);
		exp_attr_u64(exp, file, &e, "time_ns", &t);
		struct u64map_slot *sl = u64map_find(&loaded, id);

		if (ev && !strcmp(ev, "unload")) {
			uint32_t i = sl ? sl->val - 1 : NONE;

			if (i == NONE) {
				exp_problem(exp, SONDE_PROBLEM_WARNING,
					    "'%s' line %u: unload of object %u, which is not loaded", file,
					    e.line, id);
			} else {
				exp->objects[i].unload_ns = t;
				sl->val = prev[i] + 1;
			}
			continue;
		}
		if (ev && strcmp(ev, "load"))
			continue; /* an event for a newer reader */
		if (exp->nobjects >= NONE ||
		    sonde_grow(&exp->objects, &exp->capobjects, exp->nobjects + 1, sizeof(*exp->objects), 16) ||
		    sonde_grow(&prev, &capprev, exp->nobjects + 1, sizeof(*prev), 16) ||
		    (!sl && u64map_put(&loaded, id, NONE) < 0)) {
			exp->oom = true;
			break;
		}
		sl = u64map_find(&loaded, id);
		prev[exp->nobjects] = sl->val - 1;
		sl->val = (uint32_t)exp->nobjects + 1;
		struct sonde_object *o = &exp->objects[exp->nobjects++];
		const char *path = sonde_xml_attr(&e, "path");
		const char *slash;

		memset(o, 0, sizeof(*o));
		o->id = id;
		o->load_ns = t;
		o->unload_ns = SONDE_TIME_NEVER;
		o->path = path ? path : "?";
		slash = strrchr(o->path, '/');
		o->name = slash && slash[1] ? slash + 1 : o->path;
		o->sonde = !strncmp(o->name, "libsonde_", 9);
		exp_attr_u64(exp, file, &e, "base", &o->base);
		exp_attr_u64(exp, file, &e, "lo", &o->lo);
		exp_attr_u64(exp, file, &e, "hi", &o->hi);
		o->buildid = sonde_xml_attr(&e, "buildid");
		if (o->buildid && !*o->buildid)
			o->buildid = NULL;
		o->copy = sonde_xml_attr(&e, "copy");
		if (o->copy && !*o->copy)
			o->copy = NULL;
		if (o->lo > o->hi)
			exp_problem(exp, SONDE_PROBLEM_WARNING,
				    "'%s' line %u: object '%s' has lo 0x%llx above hi 0x%llx; ignored for "
				    "address lookup",
				    file, e.line, o->path, (unsigned long long)o->lo,
				    (unsigned long long)o->hi);
	}
	u64map_release(&loaded);
	free(prev);
}

/* The lookup's best so far: the last object of the map that holds the
 * address and was loaded at the time, and the last that holds it. */
struct found {
	const struct sonde_object *live, *any;
	uint32_t live_i, any_i;
};

/*
 * The objects of the address index's positions [nl, nl + len) below end
 * (they start at or below pc) that end above pc, under node of hitree:
 * only the subtrees that hold one are visited, O((k + 1) log n) for k
 * objects that hold pc.  Walking the index down from pc while the
 * largest end so far was above it visited every object that starts
 * below one that holds pc (all of them, under one object as large as the
 * address space: a corrupted map.xml).  Recursion as deep as the tree.
 */
static void find_in(const struct sonde_exp *exp, size_t node, size_t nl, size_t len, size_t end, uint64_t pc,
		    uint64_t time_ns, struct found *f)
{
	if (nl >= end || exp->hitree[node] <= pc)
		return;
	if (len > 1) {
		find_in(exp, 2 * node, nl, len / 2, end, pc, time_ns, f);
		find_in(exp, 2 * node + 1, nl + len / 2, len / 2, end, pc, time_ns, f);
		return;
	}
	uint32_t i = exp->byaddr[nl];
	const struct sonde_object *o = &exp->objects[i];

	if (!f->any || i > f->any_i)
		f->any = o, f->any_i = i;
	if (time_ns != SONDE_TIME_NEVER && o->load_ns <= time_ns && time_ns < o->unload_ns &&
	    (!f->live || i > f->live_i))
		f->live = o, f->live_i = i;
}

const struct sonde_object *sonde_exp_find_object(const struct sonde_exp *exp, uint64_t pc,
						 uint64_t time_ns)
{
	struct found f = { 0 };

	pc &= ~SONDE_PC_EXACT;
	/* First index whose lo is above pc. */
	size_t lo = PARTITION_POINT(0, exp->nbyaddr, i, exp->objects[exp->byaddr[i]].lo <= pc);

	if (lo)
		find_in(exp, 1, 0, exp->hisize, lo, pc, time_ns, &f);
	return f.live ? f.live : f.any;
}

size_t sonde_exp_map_epochs(const struct sonde_exp *exp)
{
	return exp->nepoch_at + 1;
}

uint32_t sonde_exp_map_epoch(const struct sonde_exp *exp, uint64_t time_ns, uint64_t *lo, uint64_t *hi)
{
	/* Epoch k starts at the k-th cut (epoch 0 at time 0): a time equal
	 * to a load or unload time already sees the new mapping. */
	size_t k = PARTITION_POINT(0, exp->nepoch_at, i, exp->epoch_at[i] <= time_ns);

	if (lo)
		*lo = k ? exp->epoch_at[k - 1] : 0;
	if (hi)
		*hi = k < exp->nepoch_at ? exp->epoch_at[k] : SONDE_TIME_NEVER;
	return (uint32_t)k;
}

/* Reads map.xml, then builds the index over its objects. */
void exp_read_map(struct sonde_exp *exp)
{
	read_map(exp);
	if (!exp->oom)
		build_object_index(exp);
}
