/*
 * Leak matching for heap traces: which allocations were never freed.
 *
 * Events come sorted by time (a free is stamped before its call and an
 * allocation after, so a block freed by one thread and handed out again
 * to another is seen freed first).  A free releases the live block at its
 * address; an munmap releases every live mapping it overlaps.  An
 * allocation at an address that is still live means the free was not seen
 * (made before tracing started, or by a path not interposed): the older
 * block is taken as freed, since the allocator reused it.  The same walk
 * gives the peak of live bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "experiment.h"
#include "u64map.h"

#define NOT_LIVE (UINT32_MAX - 1)

/* key -> val, inserting or replacing.  Returns -1 out of memory. */
static int set(struct u64map *m, uint64_t key, uint32_t val)
{
	if (m->cap) {
		for (size_t i = u64map_mix(key) & (m->cap - 1); m->vals[i]; i = (i + 1) & (m->cap - 1))
			if (m->keys[i] == key) {
				m->vals[i] = val + 1;
				return 0;
			}
	}
	return u64map_put(m, key, val);
}

/*
 * The live mappings, for munmap: a segment tree over every mapping of the
 * run, sorted by lo.  A leaf holds its mapping's hi while the mapping is
 * live and 0 when it is not (no range overlaps a mapping whose hi is 0:
 * 0 > lo never holds), an inner node the largest hi below it.  An munmap
 * of [lo, hi) releases the live mappings that start below hi and end
 * above lo: it visits only the subtrees that hold one, O((k + 1) log n)
 * for k mappings released, where scanning every live mapping made n
 * mmaps and n munmaps quadratic.
 */
struct maptree {
	size_t size;	/* leaves: a power of two, at least the mappings */
	uint64_t *lo;	/* the mappings' lo, sorted (size entries, UINT64_MAX past them) */
	uint32_t *ev;	/* the mappings' events, in that order */
	uint32_t *leaf; /* the k-th mapping of the run -> its leaf */
	uint64_t *t;	/* 2 * size: node 1 the root, node i's children 2i, 2i + 1 */
};

struct lo_ev {
	uint64_t lo;
	uint32_t k, ev;
};

static int cmp_lo_ev(const void *a, const void *b)
{
	const struct lo_ev *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

static bool is_mmap(const struct sonde_heap_event *e)
{
	return !(e->flags & SONDE_HEAPF_FAILED) && e->func == SONDE_HEAP_MMAP &&
	       (e->flags & SONDE_HEAPF_ALLOC);
}

static void maptree_release(struct maptree *mt)
{
	free(mt->lo);
	free(mt->ev);
	free(mt->leaf);
	free(mt->t);
	memset(mt, 0, sizeof(*mt));
}

/* -1 out of memory. */
static int maptree_init(struct maptree *mt, const struct sonde_heap_event *e, size_t n)
{
	size_t m = 0, k = 0;

	memset(mt, 0, sizeof(*mt));
	for (size_t i = 0; i < n; i++)
		m += is_mmap(&e[i]);
	mt->size = 1;
	while (mt->size < m)
		mt->size *= 2;
	struct lo_ev *s = malloc((m ? m : 1) * sizeof(*s));

	mt->lo = malloc(mt->size * sizeof(*mt->lo));
	mt->ev = malloc(mt->size * sizeof(*mt->ev));
	mt->leaf = malloc((m ? m : 1) * sizeof(*mt->leaf));
	mt->t = calloc(2 * mt->size, sizeof(*mt->t));
	if (!s || !mt->lo || !mt->ev || !mt->leaf || !mt->t) {
		free(s);
		maptree_release(mt);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (is_mmap(&e[i])) {
			s[k] = (struct lo_ev){ e[i].addr, (uint32_t)k, (uint32_t)i };
			k++;
		}
	if (m > 1)
		qsort(s, m, sizeof(*s), cmp_lo_ev);
	for (size_t r = 0; r < mt->size; r++) {
		mt->lo[r] = r < m ? s[r].lo : UINT64_MAX;
		mt->ev[r] = r < m ? s[r].ev : 0;
		if (r < m)
			mt->leaf[s[r].k] = (uint32_t)r;
	}
	free(s);
	return 0;
}

/* Sets leaf r (a mapping's hi, or 0) and the largest his above it. */
static void maptree_set(struct maptree *mt, size_t r, uint64_t hi)
{
	size_t i = mt->size + r;

	mt->t[i] = hi;
	for (i /= 2; i; i /= 2)
		mt->t[i] = mt->t[2 * i] > mt->t[2 * i + 1] ? mt->t[2 * i] : mt->t[2 * i + 1];
}

struct unmap {
	uint64_t lo; /* the munmap's range starts here */
	size_t end;  /* leaves before end start below the range's hi */
	bool *leaked;
	uint64_t *cur; /* live bytes */
};

/* Releases the live mappings below node (leaves [nl, nl + len)) that
 * overlap the range: recursion as deep as the tree (log2 of the leaves). */
static void maptree_unmap(struct maptree *mt, const struct unmap *u, size_t node, size_t nl, size_t len)
{
	if (nl >= u->end || mt->t[node] <= u->lo)
		return;
	if (len == 1) {
		size_t r = nl;

		u->leaked[mt->ev[r]] = false;
		*u->cur -= mt->t[node] - mt->lo[r]; /* the mapping's bytes */
		mt->t[node] = 0;
		return;
	}
	maptree_unmap(mt, u, 2 * node, nl, len / 2);
	maptree_unmap(mt, u, 2 * node + 1, nl + len / 2, len / 2);
	mt->t[node] = mt->t[2 * node] > mt->t[2 * node + 1] ? mt->t[2 * node] : mt->t[2 * node + 1];
}

/* The first leaf whose mapping starts at or above hi. */
static size_t maptree_below(const struct maptree *mt, uint64_t hi)
{
	size_t a = 0, b = mt->size;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (mt->lo[mid] < hi)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

long sonde_heap_leaks(const struct sonde_exp *exp, bool *leaked, struct sonde_heap_match *st)
{
	size_t n;
	const struct sonde_heap_event *e = sonde_exp_heap_events(exp, &n);
	struct u64map live = { 0 };
	struct maptree mt;
	size_t k = 0; /* mappings seen */
	uint64_t cur = 0; /* live bytes */
	struct sonde_heap_match s = { 0 };

	if (maptree_init(&mt, e, n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		leaked[i] = false;
		if (e[i].flags & SONDE_HEAPF_FAILED)
			continue;
		if (is_mmap(&e[i])) {
			maptree_set(&mt, mt.leaf[k++], e[i].addr + e[i].bytes);
			leaked[i] = true;
			cur += e[i].bytes;
		} else if (e[i].func == SONDE_HEAP_MUNMAP) {
			/* [lo, hi) releases every live mapping that overlaps it */
			struct unmap u = { e[i].addr, maptree_below(&mt, e[i].addr + e[i].bytes), leaked, &cur };

			maptree_unmap(&mt, &u, 1, 0, mt.size);
		} else if (e[i].flags & SONDE_HEAPF_ALLOC) {
			long prev = u64map_get(&live, e[i].addr);
			if (prev >= 0 && (uint32_t)prev != NOT_LIVE) {
				leaked[prev] = false;
				cur -= e[prev].bytes;
				s.reused_live++;
			}
			if (set(&live, e[i].addr, (uint32_t)i) < 0)
				goto oom;
			leaked[i] = true;
			cur += e[i].bytes;
		} else if (e[i].flags & SONDE_HEAPF_FREE) {
			long prev = u64map_get(&live, e[i].addr);
			if (prev < 0 || (uint32_t)prev == NOT_LIVE) {
				s.unmatched_frees++;
				continue;
			}
			leaked[prev] = false;
			cur -= e[prev].bytes;
			if (set(&live, e[i].addr, NOT_LIVE) < 0)
				goto oom;
		}
		if (cur > s.peak_bytes) {
			s.peak_bytes = cur;
			s.peak_ns = e[i].time_ns;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (leaked[i]) {
			s.leaks++;
			s.leaked_bytes += e[i].bytes;
		}
	u64map_release(&live);
	maptree_release(&mt);
	if (st)
		*st = s;
	return (long)s.leaks;
oom:
	u64map_release(&live);
	maptree_release(&mt);
	return -1;
}
