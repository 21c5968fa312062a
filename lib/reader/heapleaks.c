/*
 * Leak matching for heap traces: which allocations were never freed.
 *
 * Events come sorted by time.  A free releases the live block at its
 * address; an munmap (or the old range of an mremap) releases what it
 * covers of the live mappings it overlaps (the rest of a mapping stays
 * live, and is what leaks of it).  An allocation at an address that is still live
 * means the free was not seen (made before tracing started, or by a path not
 * interposed): the older block is taken as freed, since the allocator
 * reused it.  The same walk gives the peak of live bytes.
 *
 * Times are the collector's millisecond tick (tracer.h): a free is stamped
 * before its call and an allocation after, so a block handed from one
 * thread to another is never stamped earlier on the receiving thread, but
 * often equally.  Within a run of equal times, each thread's events are in
 * its own order but the threads' are not interleaved as they happened.
 * So before such a run is matched, the events of each address that more
 * than one thread touched in it are put in the order that makes the fewest
 * impossible steps (an allocation of a live block, a free of a dead one),
 * keeping each thread's order (order_group below).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "reader/experiment.h"
#include "base/u64map.h"

#define NOT_LIVE (UINT32_MAX - 1)

/* key -> val, inserting or replacing.  Returns -1 out of memory. */
static int set(struct u64map *m, uint64_t key, uint32_t val)
{
	if (m->cap) {
		for (size_t i = u64map_mix(key) & (m->cap - 1); m->s[i].val; i = (i + 1) & (m->cap - 1))
			if (m->s[i].key == key) {
				m->s[i].val = val + 1;
				return 0;
			}
	}
	return u64map_put(m, key, val);
}

/*
 * The live mappings, for munmap: their live pieces, in a treap (a binary
 * search tree by address, balanced by random priorities).  An munmap
 * releases only what it covers: a mapping unmapped in part keeps the rest
 * live (shrunk at an end, or split in two by a hole in its middle), and a
 * leak is what is left of it.  Every mmap first releases what it covers
 * (the kernel maps no address twice), so the live pieces never overlap:
 * ordered by start, their ends are ordered too, and those an munmap of
 * [lo, hi) overlaps, the pieces that start below hi and end above lo,
 * are one run of that order, cut out with two splits: O(log n + k),
 * expected, for k pieces touched, each released once.  (A segment tree
 * over the mappings, each with a list of its pieces, made n holes punched
 * in one mapping cost n^2: an address space reservation mapped page by
 * page, or a corrupted size.)
 */
struct piece {
	uint64_t lo, hi;
	uint32_t k;    /* the mapping: its place among the run's */
	uint32_t pri;  /* the treap's: a parent's is at least its children's */
	uint32_t l, r; /* the children, 0: none; l also links the free list */
};

struct pieces {
	struct piece *v; /* v[0] is none */
	uint32_t n, cap, root, freel, rng;
	uint64_t *left;	   /* per mapping: bytes still mapped */
	uint32_t *npieces; /* per mapping: live pieces */
};

static void pieces_release(struct pieces *p)
{
	free(p->v);
	free(p->left);
	free(p->npieces);
	memset(p, 0, sizeof(*p));
}

/* For the run's m mappings.  -1 out of memory. */
static int pieces_init(struct pieces *p, size_t m)
{
	memset(p, 0, sizeof(*p));
	p->n = 1;
	/* Priorities an experiment cannot line up with its addresses (a
	 * chain of pieces would make every operation O(n)); the shape never
	 * changes a result. */
	if (getrandom(&p->rng, sizeof(p->rng), GRND_NONBLOCK) != (ssize_t)sizeof(p->rng))
		p->rng = (uint32_t)(uintptr_t)p ^ (uint32_t)time(NULL);
	p->rng |= 1;
	p->left = calloc(m ? m : 1, sizeof(*p->left));
	p->npieces = calloc(m ? m : 1, sizeof(*p->npieces));
	if (!p->left || !p->npieces) {
		pieces_release(p);
		return -1;
	}
	return 0;
}

/* Room for two more pieces (an munmap splits one into two at most), so
 * that no pointer into v moves during an operation.  -1 out of memory. */
static int pieces_reserve(struct pieces *p)
{
	if (p->freel || p->n + 2 <= p->cap)
		return 0;
	if (p->n > UINT32_MAX / 2 - 2)
		return -1;
	uint32_t cap = p->cap ? 2 * p->cap : 64;
	struct piece *v = realloc(p->v, cap * sizeof(*v));

	if (!v)
		return -1;
	p->v = v;
	p->cap = cap;
	return 0;
}

static uint32_t piece_new(struct pieces *p, uint64_t lo, uint64_t hi, uint32_t k)
{
	uint32_t i;

	if (p->freel) {
		i = p->freel;
		p->freel = p->v[i].l;
	} else {
		i = p->n++;
	}
	p->rng ^= p->rng << 13; /* xorshift32 */
	p->rng ^= p->rng >> 17;
	p->rng ^= p->rng << 5;
	p->v[i] = (struct piece){ lo, hi, k, p->rng, 0, 0 };
	p->npieces[k]++;
	return i;
}

static void piece_free(struct pieces *p, uint32_t i)
{
	p->npieces[p->v[i].k]--;
	p->v[i].l = p->freel;
	p->freel = i;
}

/* Splits treap t into *a, the pieces that start below key (by_hi: that
 * end at or below it), and *b, the rest.  Recursion as deep as the treap. */
static void pieces_split(struct pieces *p, uint32_t t, bool by_hi, uint64_t key, uint32_t *a, uint32_t *b)
{
	if (!t) {
		*a = *b = 0;
		return;
	}
	struct piece *x = &p->v[t];

	if (by_hi ? x->hi <= key : x->lo < key) {
		pieces_split(p, x->r, by_hi, key, &x->r, b);
		*a = t;
	} else {
		pieces_split(p, x->l, by_hi, key, a, &x->l);
		*b = t;
	}
}

/* Treap a, then treap b (every piece of a before every piece of b). */
static uint32_t pieces_merge(struct pieces *p, uint32_t a, uint32_t b)
{
	if (!a || !b)
		return a ? a : b;
	if (p->v[a].pri >= p->v[b].pri) {
		p->v[a].r = pieces_merge(p, p->v[a].r, b);
		return a;
	}
	p->v[b].l = pieces_merge(p, a, p->v[b].l);
	return b;
}

struct unmap {
	uint64_t lo, hi; /* the munmap's range */
	uint32_t keep[2];
	int nkeep;
	uint64_t *cur; /* live bytes */
};

/* Takes [u->lo, u->hi) out of the pieces of treap t, all of which overlap
 * it, in order; what is left of them goes to u->keep (two at most: the
 * first may start below the range, the last end above it). */
static void pieces_cut(struct pieces *p, struct unmap *u, uint32_t t)
{
	if (!t)
		return;
	uint32_t l = p->v[t].l, r = p->v[t].r;

	pieces_cut(p, u, l);
	struct piece *c = &p->v[t];
	uint64_t a = c->lo > u->lo ? c->lo : u->lo, b = c->hi < u->hi ? c->hi : u->hi;

	*u->cur -= b - a;
	p->left[c->k] -= b - a;
	c->l = c->r = 0;
	if (c->lo < u->lo && c->hi > u->hi) { /* a hole in its middle: two pieces */
		uint64_t top = c->hi;

		c->hi = u->lo;
		u->keep[u->nkeep++] = t;
		u->keep[u->nkeep++] = piece_new(p, u->hi, top, c->k); /* room reserved */
	} else if (c->lo < u->lo) { /* its top end */
		c->hi = u->lo;
		u->keep[u->nkeep++] = t;
	} else if (c->hi > u->hi) { /* its bottom end */
		c->lo = u->hi;
		u->keep[u->nkeep++] = t;
	} else { /* all of it */
		piece_free(p, t);
	}
	pieces_cut(p, u, r);
}

/* Releases what [lo, hi) covers of the live pieces.  -1 out of memory. */
static int pieces_unmap(struct pieces *p, uint64_t lo, uint64_t hi, uint64_t *cur)
{
	uint32_t before, mid, after;
	struct unmap u = { lo, hi, { 0, 0 }, 0, cur };

	if (pieces_reserve(p) < 0)
		return -1;
	pieces_split(p, p->root, false, hi, &mid, &after);
	pieces_split(p, mid, true, lo, &before, &mid);
	pieces_cut(p, &u, mid);
	mid = 0;
	for (int i = 0; i < u.nkeep; i++)
		mid = pieces_merge(p, mid, u.keep[i]);
	p->root = pieces_merge(p, pieces_merge(p, before, mid), after);
	return 0;
}

/* Mapping k, [lo, hi), is made (what it covers was released first).
 * -1 out of memory. */
static int pieces_map(struct pieces *p, uint32_t k, uint64_t lo, uint64_t hi)
{
	uint32_t before, after;

	if (pieces_reserve(p) < 0)
		return -1;
	p->left[k] = hi - lo;
	pieces_split(p, p->root, true, lo, &before, &after);
	p->root = pieces_merge(p, pieces_merge(p, before, piece_new(p, lo, hi, k)), after);
	return 0;
}

/* The end of a range of bytes at addr, at most the end of the address
 * space (a corrupted size would wrap around). */
static uint64_t range_end(uint64_t addr, uint64_t bytes)
{
	return bytes > UINT64_MAX - addr ? UINT64_MAX : addr + bytes;
}

/* A mapping made (mmap, or mremap's new range) or released (munmap, or
 * mremap's old range): matched by range, not by address. */
static bool is_mapping_func(unsigned func)
{
	return func == SONDE_HEAP_MMAP || func == SONDE_HEAP_MUNMAP || func == SONDE_HEAP_MREMAP;
}

static bool is_mmap(const struct sonde_heap_event *e)
{
	return !(e->flags & SONDE_HEAPF_FAILED) && is_mapping_func(e->func) && (e->flags & SONDE_HEAPF_ALLOC);
}

static bool is_munmap(const struct sonde_heap_event *e)
{
	return !(e->flags & SONDE_HEAPF_FAILED) && is_mapping_func(e->func) && (e->flags & SONDE_HEAPF_FREE);
}

/* ---- the order of events with equal times ---- */

/* 1: allocates a heap block, 2: frees one, 0: neither (mappings, failures:
 * they keep their places). */
static int block_op(const struct sonde_heap_event *e)
{
	if ((e->flags & SONDE_HEAPF_FAILED) || is_mapping_func(e->func))
		return 0;
	return (e->flags & SONDE_HEAPF_ALLOC) ? 1 : (e->flags & SONDE_HEAPF_FREE) ? 2 : 0;
}

struct addr_ev {
	uint64_t addr;
	uint32_t ev;
};

static int cmp_addr_ev(const void *a, const void *b)
{
	const struct addr_ev *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* Whether op is impossible in state live (an allocation of a live block,
 * a free of a dead one). */
static int bad_step(int op, int live)
{
	return op == 1 ? live : !live;
}

#define MAX_SEQ 8	     /* threads of one address solved exactly */
#define MAX_THREADS 64	     /* ... greedily; beyond, the file's order is kept */
#define MAX_STATES (1 << 16) /* positions x live, solved exactly */
#define EXACT_WORK 64	     /* steps of the exact order per event, at most */

/* Whether event i is thought to come before event j: by where each stands
 * among its thread's events in the tick (est), as if each thread's were
 * spread evenly over it; then by the file's order. */
static bool earlier(const float *est, size_t a, uint32_t i, uint32_t j)
{
	return est[i - a] != est[j - a] ? est[i - a] < est[j - a] : i < j;
}

/* Which way a step can go wrong: 1, an allocation (impossible while the
 * block is live); 0, anything else (impossible while it is not, as
 * bad_step has it). */
static int step_class(int op)
{
	return op == 1;
}

/* Whether, once a thread has taken its next step, of class now, leaving
 * the block live or not, every thread's next step would be impossible;
 * after: the class of that thread's step after it, -1 when it has none
 * left.  nnext[c]: the threads with steps left whose next one is of
 * class c.  O(1): looking at every thread here made the greedy order
 * cost the square of an address's threads per step. */
static bool dead_end(const size_t nnext[2], int now, int after, int live)
{
	size_t alloc = nnext[1] - (now == 1) + (after == 1);
	size_t other = nnext[0] - (now == 0) + (after == 0);

	return live ? !other && alloc : !alloc && other;
}

/*
 * One address's m events, from nseq threads: seq[t] lists thread t's in
 * its order.  Writes the chosen order to out[0..m).  Exactly (dynamic
 * programming over how far each thread has got and whether the block is
 * live) when that is cheap: the states are few, which they are for a
 * block passed between a few threads within a tick, and their work is
 * at most EXACT_WORK steps per event; else greedily, looking one step
 * ahead, in O(m x nseq).  The states multiply with the threads (a product
 * of their event counts), so without the bound on the work an address
 * of a few events from each of eight threads cost 10^5 steps or more; a
 * run of equal times as long as the whole trace (the tracing clock
 * stopped: sonde collect killed while the target ran on) holds tens of
 * thousands of such addresses, and reading it took minutes.  With it, the
 * walk's time is linear in the events.  Among equally good steps, the
 * one thought earliest goes first (earlier()): often more than one order
 * is possible (which of two threads' frees released which block), and
 * the events themselves cannot tell.
 */
static void solve_addr(const struct sonde_heap_event *e, const float *est, size_t a, size_t m, int live,
		       uint32_t *const *seq, const size_t *len, size_t nseq, uint32_t *out, uint16_t *cost)
{
	size_t stride[MAX_SEQ], states = 1;
	bool exact = nseq <= MAX_SEQ;

	for (size_t t = 0; exact && t < nseq; t++) {
		stride[t] = states;
		if (states * (len[t] + 1) * 2 > MAX_STATES)
			exact = false;
		states *= len[t] + 1;
	}
	if (exact && 2 * states * nseq > EXACT_WORK * m)
		exact = false;
	if (exact) {
		/* cost[2 * s + live]: the fewest impossible steps from state s
		 * on; every step raises s, so fill from the top down.  at[t]:
		 * thread t's position in s, counted down with s. */
		size_t at[MAX_SEQ];

		for (size_t t = 0; t < nseq; t++)
			at[t] = len[t];
		for (size_t s = states; s-- > 0;) {
			for (int l = 0; l < 2; l++) {
				unsigned best = UINT16_MAX;
				bool any = false;

				for (size_t t = 0; t < nseq; t++) {
					if (at[t] == len[t])
						continue;
					any = true;
					int op = block_op(&e[seq[t][at[t]]]);
					unsigned c = (unsigned)bad_step(op, l) + cost[2 * (s + stride[t]) + (op == 1)];

					if (c < best)
						best = c;
				}
				cost[2 * s + l] = any ? (uint16_t)(best > UINT16_MAX - 1 ? UINT16_MAX - 1 : best) : 0;
			}
			for (size_t t = 0; s && t < nseq; t++) { /* s - 1's positions */
				if (at[t]) {
					at[t]--;
					break;
				}
				at[t] = len[t];
			}
		}
	}
	size_t pos[MAX_THREADS] = { 0 }, s = 0, nnext[2] = { 0, 0 };

	for (size_t t = 0; t < nseq; t++)
		if (len[t])
			nnext[step_class(block_op(&e[seq[t][0]]))]++;
	for (size_t k = 0; k < m; k++) {
		size_t pick = SIZE_MAX;
		unsigned best = UINT32_MAX;

		for (size_t t = 0; t < nseq; t++) {
			if (pos[t] == len[t])
				continue;
			uint32_t cand = seq[t][pos[t]];
			int op = block_op(&e[cand]);
			unsigned c;

			if (exact) {
				c = (unsigned)bad_step(op, live) + cost[2 * (s + stride[t]) + (op == 1)];
			} else {
				/* an impossible step, or one after which only
				 * impossible steps are left, goes last; among the
				 * good ones, a thread whose next two steps are of
				 * one kind goes first: another thread's step must
				 * come between them, and the later its first is
				 * taken, the fewer such steps are left */
				int now = step_class(op);
				int after = pos[t] + 1 < len[t] ? step_class(block_op(&e[seq[t][pos[t] + 1]])) : -1;

				c = 4u * (unsigned)bad_step(op, live) + 2u * (unsigned)dead_end(nnext, now, after, op == 1) +
				    (unsigned)(after != now);
			}
			if (c < best || (c == best && earlier(est, a, cand, seq[pick][pos[pick]]))) {
				best = c;
				pick = t;
			}
		}
		out[k] = seq[pick][pos[pick]];
		live = block_op(&e[out[k]]) == 1;
		if (exact)
			s += stride[pick];
		nnext[step_class(block_op(&e[out[k]]))]--;
		if (++pos[pick] < len[pick])
			nnext[step_class(block_op(&e[seq[pick][pos[pick]]]))]++;
	}
}
/* Scratch for order_group, grown to the largest run of equal times that
 * more than one thread wrote in. */
struct order_buf {
	size_t cap;
	struct addr_ev *ae;
	uint32_t *ord, *tmp, *out;
	float *est;	/* earlier() */
	uint16_t *cost; /* MAX_STATES */
	/* address -> first thread (hst 1) or several (hst 2), 0: empty */
	size_t hcap;
	uint64_t *hkey;
	uint32_t *htid;
	uint8_t *hst;
	/* per thread (tids: tid -> slot): its events in the run, and how
	 * many of them came so far; gen: the run they count */
	struct u64map tids;
	size_t nslots;
	uint32_t *cnt, *seen;
	size_t *gen;
};

static void order_buf_release(struct order_buf *ob)
{
	free(ob->ae);
	free(ob->ord);
	free(ob->tmp);
	free(ob->out);
	free(ob->est);
	free(ob->cost);
	free(ob->hkey);
	free(ob->htid);
	free(ob->hst);
	u64map_release(&ob->tids);
	free(ob->cnt);
	free(ob->seen);
	free(ob->gen);
	memset(ob, 0, sizeof(*ob));
}

/* Resizes array p to n elements; false out of memory (p is kept). */
#define RESIZE(p, n)                                                                                                   \
	({                                                                                                             \
		__typeof__(p) q_ = realloc((p), (n) * sizeof(*(p)));                                                   \
		if (q_)                                                                                                \
			(p) = q_;                                                                                      \
		q_ != NULL;                                                                                            \
	})

static int order_buf_reserve(struct order_buf *ob, size_t n)
{
	if (!ob->cost && !(ob->cost = malloc(MAX_STATES * sizeof(*ob->cost))))
		return -1;
	if (n <= ob->cap)
		return 0;
	size_t cap = ob->cap ? ob->cap : 256;

	while (cap < n)
		cap *= 2;
	if (!RESIZE(ob->ae, cap) || !RESIZE(ob->ord, cap) || !RESIZE(ob->tmp, cap) || !RESIZE(ob->out, cap) ||
	    !RESIZE(ob->est, cap) || !RESIZE(ob->hkey, 2 * cap) || !RESIZE(ob->htid, 2 * cap) ||
	    !RESIZE(ob->hst, 2 * cap))
		return -1;
	ob->cap = cap;
	ob->hcap = 2 * cap;
	return 0;
}

/* One address's events ob->ae[0..m) (ascending) in a run of equal times:
 * reordered in ob->ord (indexed from the run's first event a) when more
 * than one thread wrote them.  live: whether the block is live before. */
static void order_addr(const struct sonde_heap_event *e, size_t a, const struct addr_ev *ae, size_t m,
		       int live, struct order_buf *ob)
{
	uint32_t tids[MAX_THREADS];
	size_t len[MAX_THREADS] = { 0 }, nseq = 0, thr[MAX_THREADS];
	uint32_t *seq[MAX_THREADS];

	for (size_t k = 0; k < m; k++) {
		size_t t = 0;

		while (t < nseq && tids[t] != e[ae[k].ev].tid)
			t++;
		if (t == nseq) {
			if (nseq == MAX_THREADS)
				return;
			tids[nseq++] = e[ae[k].ev].tid;
		}
		len[t]++;
	}
	if (nseq < 2)
		return;
	uint32_t *tmp = ob->tmp;

	for (size_t t = 0, off = 0; t < nseq; t++) {
		seq[t] = tmp + off;
		off += len[t];
		thr[t] = 0;
	}
	for (size_t k = 0; k < m; k++) {
		size_t t = 0;

		while (tids[t] != e[ae[k].ev].tid)
			t++;
		seq[t][thr[t]++] = ae[k].ev;
	}
	solve_addr(e, ob->est, a, m, live, seq, len, nseq, ob->out, ob->cost);
	for (size_t k = 0; k < m; k++)
		ob->ord[ae[k].ev - a] = ob->out[k];
}

/* The slot of thread tid in ob's per-thread counts, -1 out of memory. */
static long thread_slot(struct order_buf *ob, uint32_t tid)
{
	long k = u64map_get(&ob->tids, tid);

	if (k >= 0)
		return k;
	size_t n = ob->nslots + 1;

	if (!RESIZE(ob->cnt, n) || !RESIZE(ob->seen, n) || !RESIZE(ob->gen, n) || n > UINT32_MAX - 1 ||
	    u64map_put(&ob->tids, tid, (uint32_t)ob->nslots) < 0)
		return -1;
	ob->gen[ob->nslots] = SIZE_MAX;
	return (long)ob->nslots++;
}

/* Events [a, b) have equal times (run: a number no other run of the walk
 * has, its first event's place): 1 when ob->ord[0..b - a) gets the
 * order to match them in, 0 when it is theirs (one thread wrote them all),
 * -1 out of memory. */
static int order_group(const struct sonde_heap_event *e, size_t a, size_t b, const struct u64map *live,
		       struct order_buf *ob, size_t run)
{
	size_t r = a + 1, m = 0, nmulti = 0;

	while (r < b && e[r].tid == e[a].tid)
		r++;
	if (r == b)
		return 0;
	if (order_buf_reserve(ob, b - a) < 0)
		return -1;
	/* The addresses more than one thread touched (usually none: each
	 * thread's allocator arena hands out its own blocks): a hash table
	 * of address -> first thread, or MULTI. */
	size_t hmask = ob->hcap - 1;

	memset(ob->hst, 0, ob->hcap);
	for (r = a; r < b; r++) {
		if (!block_op(&e[r]))
			continue;
		size_t h = u64map_mix(e[r].addr) & hmask;

		while (ob->hst[h] && ob->hkey[h] != e[r].addr)
			h = (h + 1) & hmask;
		if (!ob->hst[h]) {
			ob->hst[h] = 1;
			ob->hkey[h] = e[r].addr;
			ob->htid[h] = e[r].tid;
		} else if (ob->hst[h] == 1 && ob->htid[h] != e[r].tid) {
			ob->hst[h] = 2;
			nmulti++;
		}
	}
	if (!nmulti)
		return 0;
	for (r = a; r < b; r++) {
		ob->ord[r - a] = (uint32_t)r;
		long k = thread_slot(ob, e[r].tid);

		if (k < 0)
			return -1;
		if (ob->gen[k] != run) {
			ob->gen[k] = run;
			ob->cnt[k] = ob->seen[k] = 0;
		}
		ob->cnt[k]++;
	}
	for (r = a; r < b; r++) {
		long k = u64map_get(&ob->tids, e[r].tid);

		ob->est[r - a] = ((float)ob->seen[k]++ + 0.5f) / (float)ob->cnt[k];
		if (!block_op(&e[r]))
			continue;
		size_t h = u64map_mix(e[r].addr) & hmask;

		while (ob->hkey[h] != e[r].addr)
			h = (h + 1) & hmask;
		if (ob->hst[h] == 2)
			ob->ae[m++] = (struct addr_ev){ e[r].addr, (uint32_t)r };
	}
	qsort(ob->ae, m, sizeof(*ob->ae), cmp_addr_ev);
	for (size_t i = 0, j; i < m; i = j) {
		for (j = i + 1; j < m && ob->ae[j].addr == ob->ae[i].addr; j++)
			;
		long prev = u64map_get(live, ob->ae[i].addr);

		order_addr(e, a, ob->ae + i, j - i, prev >= 0 && (uint32_t)prev != NOT_LIVE, ob);
	}
	return 1;
}

/*
 * The matching walk, fed one run of equal times at a time, so that it can
 * work on an array of every event or on a stream.  The live blocks are in
 * a pool (addr -> pool index in `live`, NOT_LIVE once freed), the
 * mappings' live pieces (what an munmap in part left of each) in `pc`.
 */
struct matcher {
	struct u64map live;
	struct blk {
		uint64_t bytes, ev; /* ev: the allocation's place; UINT64_MAX: slot unused */
	} *pool;
	uint32_t *freel;
	size_t npool, cappool, nfree, capfree;
	struct pieces pc;
	size_t k, nmm;	 /* mappings seen, and of the run */
	uint64_t *mm_ev; /* the k-th mapping's event */
	uint64_t cur;	 /* live bytes */
	struct sonde_heap_match s;
	struct order_buf ob;
	/* Steps are the events in the order matched (a run of equal times
	 * may be reordered): step counts them, peak_step is the one that first
	 * reached the peak, and the walk stops before step `stop`, which is
	 * how the live blocks at the peak are found again. */
	uint64_t step, peak_step, stop;
	void (*each)(void *arg, const struct sonde_heap_event *e, uint64_t live);
	void *arg;
};

static void matcher_release(struct matcher *m)
{
	u64map_release(&m->live);
	free(m->pool);
	free(m->freel);
	pieces_release(&m->pc);
	free(m->mm_ev);
	order_buf_release(&m->ob);
	memset(m, 0, sizeof(*m));
}

/* For a walk of nmm mappings.  -1 out of memory. */
static int matcher_init(struct matcher *m, size_t nmm)
{
	memset(m, 0, sizeof(*m));
	m->stop = UINT64_MAX;
	m->nmm = nmm;
	m->mm_ev = malloc((nmm ? nmm : 1) * sizeof(*m->mm_ev));
	if (!m->mm_ev || pieces_init(&m->pc, nmm) < 0) {
		matcher_release(m);
		return -1;
	}
	return 0;
}

/* A pool slot for a new live block; -1 out of memory. */
static long pool_get(struct matcher *m, uint64_t bytes, uint64_t ev)
{
	size_t i;

	if (m->nfree) {
		i = m->freel[--m->nfree];
	} else {
		if (m->npool >= NOT_LIVE)
			return -1;
		if (m->npool == m->cappool) {
			size_t cap = m->cappool ? 2 * m->cappool : 256;

			if (!RESIZE(m->pool, cap))
				return -1;
			m->cappool = cap;
		}
		i = m->npool++;
	}
	m->pool[i] = (struct blk){ bytes, ev };
	return (long)i;
}

static int pool_put(struct matcher *m, uint32_t i)
{
	if (m->nfree == m->capfree) {
		size_t cap = m->capfree ? 2 * m->capfree : 256;

		if (!RESIZE(m->freel, cap))
			return -1;
		m->capfree = cap;
	}
	m->pool[i].ev = UINT64_MAX;
	m->freel[m->nfree++] = i;
	return 0;
}


/* Events e[0..n), of one time, the base-th and after of the walk.
 * -1 out of memory. */
static int matcher_run(struct matcher *m, const struct sonde_heap_event *e, size_t n, uint64_t base)
{
	struct sonde_heap_match *s = &m->s;
	int reordered = n > 1 ? order_group(e, 0, n, &m->live, &m->ob, (size_t)base) : 0;

	if (reordered < 0)
		return -1;
	for (size_t r = 0; r < n && m->step < m->stop; r++, m->step++) {
		size_t i = reordered ? m->ob.ord[r] : r;

		if (e[i].flags & SONDE_HEAPF_FAILED) {
			if (m->each)
				m->each(m->arg, &e[i], m->cur);
			continue;
		}
		if (is_mmap(&e[i])) {
			/* The kernel maps no address twice: live mappings
			 * where this one is were unmapped unseen (a raw
			 * system call), or replaced (MAP_FIXED; the tracer
			 * records that munmap first). */
			uint64_t hi = range_end(e[i].addr, e[i].bytes);

			if (pieces_unmap(&m->pc, e[i].addr, hi, &m->cur) < 0)
				return -1;
			if (m->k < m->nmm) {
				if (pieces_map(&m->pc, (uint32_t)m->k, e[i].addr, hi) < 0)
					return -1;
				m->mm_ev[m->k] = base + i;
				m->k++;
			}
			m->cur += hi - e[i].addr;
		} else if (is_munmap(&e[i])) {
			/* [lo, hi) releases what it covers of every live mapping */
			if (pieces_unmap(&m->pc, e[i].addr, range_end(e[i].addr, e[i].bytes), &m->cur) < 0)
				return -1;
		} else if (e[i].flags & SONDE_HEAPF_ALLOC) {
			long prev = u64map_get(&m->live, e[i].addr);
			if (prev >= 0 && (uint32_t)prev != NOT_LIVE) {
				m->cur -= m->pool[prev].bytes;
				s->reused_live++;
				if (pool_put(m, (uint32_t)prev) < 0)
					return -1;
			}
			long slot = pool_get(m, e[i].bytes, base + i);
			if (slot < 0 || set(&m->live, e[i].addr, (uint32_t)slot) < 0)
				return -1;
			m->cur += e[i].bytes;
		} else if (e[i].flags & SONDE_HEAPF_FREE) {
			long prev = u64map_get(&m->live, e[i].addr);
			if (prev < 0 || (uint32_t)prev == NOT_LIVE) {
				s->unmatched_frees++;
				if (m->each)
					m->each(m->arg, &e[i], m->cur);
				continue;
			}
			m->cur -= m->pool[prev].bytes;
			if (pool_put(m, (uint32_t)prev) < 0 || set(&m->live, e[i].addr, NOT_LIVE) < 0)
				return -1;
		}
		if (m->cur > s->peak_bytes) {
			s->peak_bytes = m->cur;
			s->peak_ns = e[i].time_ns;
			m->peak_step = m->step;
		}
		if (m->each)
			m->each(m->arg, &e[i], m->cur);
	}
	return 0;
}

/* The leaks: what is live at the end, a block whole, a mapping the bytes
 * left of it.  leaked and left (NULL: not wanted) are indexed by the
 * events' places; only the leaks' entries are written. */
static void matcher_end(struct matcher *m, bool *leaked, uint64_t *left)
{
	struct sonde_heap_match *s = &m->s;

	for (size_t i = 0; i < m->npool; i++)
		if (m->pool[i].ev != UINT64_MAX) {
			s->leaks++;
			s->leaked_bytes += m->pool[i].bytes;
			if (leaked)
				leaked[m->pool[i].ev] = true;
			if (left)
				left[m->pool[i].ev] = m->pool[i].bytes;
		}
	for (size_t k = 0; k < m->k; k++)
		if (m->pc.npieces[k]) {
			uint64_t b = m->pc.left[k];

			s->leaks++;
			s->leaked_bytes += b;
			if (leaked)
				leaked[m->mm_ev[k]] = true;
			if (left)
				left[m->mm_ev[k]] = b;
		}
}

/* The matcher for the mappings of exp's events e[0..n), made ready.
 * -1 out of memory. */
static int matcher_for(struct matcher *m, const struct sonde_heap_event *e, size_t n)
{
	size_t nmm = 0;

	for (size_t i = 0; i < n; i++)
		nmm += is_mmap(&e[i]);
	return matcher_init(m, nmm);
}

/* Matches the events e[0..n) (up to m->stop).  -1 out of memory. */
static int matcher_all(struct matcher *m, const struct sonde_heap_event *e, size_t n)
{
	for (size_t g = 0, end; g < n && m->step < m->stop; g = end) {
		for (end = g + 1; end < n && e[end].time_ns == e[g].time_ns; end++)
			;
		if (matcher_run(m, e + g, end - g, g) < 0)
			return -1;
	}
	return 0;
}

long sonde_heap_leaks(const struct sonde_exp *exp, bool *leaked, struct sonde_heap_match *st)
{
	return sonde_heap_leaks_left(exp, leaked, NULL, st);
}

long sonde_heap_leaks_left(const struct sonde_exp *exp, bool *leaked, uint64_t *left, struct sonde_heap_match *st)
{
	size_t n;
	const struct sonde_heap_event *e = sonde_exp_heap_events(exp, &n);
	struct matcher m;

	if (matcher_for(&m, e, n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		leaked[i] = false;
		if (left)
			left[i] = 0;
	}
	if (matcher_all(&m, e, n) < 0) {
		matcher_release(&m);
		return -1;
	}
	matcher_end(&m, leaked, left);
	if (st)
		*st = m.s;
	long leaks = (long)m.s.leaks;

	matcher_release(&m);
	return leaks;
}

/*
 * heaptrack's peak consumers: the walk again, stopped at the step that
 * first reached the peak; what is live then is each allocation's part of
 * the peak (heaptrack takes the same moment, the first event to reach the
 * largest total, for every stack, not each stack's own largest).
 */
int sonde_heap_peak_left(const struct sonde_exp *exp, uint64_t *left, struct sonde_heap_match *st)
{
	size_t n;
	const struct sonde_heap_event *e = sonde_exp_heap_events(exp, &n);
	struct matcher m;
	struct sonde_heap_match s;
	uint64_t peak_step;

	for (size_t i = 0; i < n; i++)
		left[i] = 0;
	if (matcher_for(&m, e, n) < 0)
		return -1;
	if (matcher_all(&m, e, n) < 0)
		goto oom;
	matcher_end(&m, NULL, NULL);
	s = m.s;
	peak_step = m.peak_step;
	matcher_release(&m);
	if (st)
		*st = s;
	if (!s.peak_bytes)
		return 0;
	if (matcher_for(&m, e, n) < 0)
		return -1;
	m.stop = peak_step + 1;
	if (matcher_all(&m, e, n) < 0)
		goto oom;
	matcher_end(&m, NULL, left);
	matcher_release(&m);
	return 0;
oom:
	matcher_release(&m);
	return -1;
}

/*
 * heaptrack's temporary allocations: a block freed by the next heap event
 * after its allocation, no other allocation or free in between.  heaptrack
 * orders every thread's events in one stream (its lock); the heap trace's
 * times are a millisecond tick, which orders each thread's own events but
 * not the threads' within a tick, so the next event is the thread's own.
 * Only blocks count (heaptrack does not see mmap), and failed allocations
 * are no events (heaptrack records none).
 */
struct tempo {
	struct u64map tids; /* tid -> slot */
	uint64_t *addr, *place; /* per slot: its last allocation, UINT64_MAX place: none */
	size_t n, cap;
};

static void tempo_release(struct tempo *t)
{
	u64map_release(&t->tids);
	free(t->addr);
	free(t->place);
	memset(t, 0, sizeof(*t));
}

/* Event e, the place-th: sets *alloc to the place of the allocation it
 * makes temporary (UINT64_MAX: none).  -1 out of memory. */
static int tempo_step(struct tempo *t, const struct sonde_heap_event *e, uint64_t place, uint64_t *alloc)
{
	int op = block_op(e);

	*alloc = UINT64_MAX;
	if (!op)
		return 0;
	long k = u64map_get(&t->tids, e->tid);

	if (k < 0) {
		size_t nn = t->n + 1;

		if (nn > t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 16;

			if (!RESIZE(t->addr, cap) || !RESIZE(t->place, cap))
				return -1;
			t->cap = cap;
		}
		if (u64map_put(&t->tids, e->tid, (uint32_t)t->n) < 0)
			return -1;
		k = (long)t->n++;
		t->place[k] = UINT64_MAX;
	}
	if (op == 1) {
		t->addr[k] = e->addr;
		t->place[k] = place;
	} else {
		if (t->place[k] != UINT64_MAX && t->addr[k] == e->addr)
			*alloc = t->place[k];
		t->place[k] = UINT64_MAX;
	}
	return 0;
}

long sonde_heap_temporary(const struct sonde_exp *exp, bool *temp)
{
	size_t n;
	const struct sonde_heap_event *e = sonde_exp_heap_events(exp, &n);
	struct tempo t = { 0 };
	long count = 0;

	for (size_t i = 0; i < n; i++)
		temp[i] = false;
	for (size_t i = 0; i < n; i++) {
		uint64_t a;

		if (tempo_step(&t, &e[i], i, &a) < 0) {
			tempo_release(&t);
			return -1;
		}
		if (a != UINT64_MAX) {
			temp[a] = true;
			count++;
		}
	}
	tempo_release(&t);
	return count;
}
static int bucket(uint64_t size)
{
	return size ? 64 - __builtin_clzll(size) : 0;
}

/* The streaming walk of sonde_heap_stats and sonde_heap_walk: st (NULL:
 * not wanted) counted from the events as read, each (NULL: none) called
 * as they are matched. */
static int stream(const struct sonde_exp *exp, struct sonde_heap_stats *st,
		  void (*each)(void *arg, const struct sonde_heap_event *e, uint64_t live), void *arg,
		  struct sonde_heap_match *ms)
{
	size_t nmm;
	struct matcher m;
	struct tempo t = { 0 };
	struct sonde_heap_iter *it = NULL;
	struct sonde_heap_event *g = NULL; /* the current run of equal times */
	size_t ng = 0, capg = 0;
	uint64_t base = 0;
	int rc = -1;

	if (st) {
		memset(st, 0, sizeof(*st));
		st->smallest = UINT64_MAX;
	}
	sonde_exp_heap_mmaps(exp, &nmm);
	if (matcher_init(&m, nmm) < 0)
		return -1;
	m.each = each;
	m.arg = arg;
	if (!(it = sonde_heap_iter_new(exp)))
		goto out;
	for (;;) {
		struct sonde_heap_event ev;
		bool more = sonde_heap_iter_next(it, &ev);

		if (ng && (!more || ev.time_ns != g[0].time_ns)) {
			if (matcher_run(&m, g, ng, base) < 0)
				goto out;
			base += ng;
			ng = 0;
		}
		if (!more)
			break;
		if (ng == capg) {
			size_t cap = capg ? 2 * capg : 1024;

			if (!RESIZE(g, cap))
				goto out;
			capg = cap;
		}
		g[ng++] = ev;
		if (!st)
			continue;
		uint64_t tmp;

		if (tempo_step(&t, &ev, base + ng - 1, &tmp) < 0)
			goto out;
		st->temporary += tmp != UINT64_MAX;
		st->events++;
		if (ev.flags & SONDE_HEAPF_ALLOC) {
			st->any_allocs++;
			st->any_alloc_bytes += ev.bytes;
		} else if (ev.flags & SONDE_HEAPF_FREE) {
			st->any_frees++;
		}
		if (ev.flags & SONDE_HEAPF_FAILED) {
			st->failed++;
		} else if (ev.flags & SONDE_HEAPF_ALLOC) {
			uint64_t b = ev.bytes;
			int k = bucket(b);

			st->allocs++;
			st->bytes += b;
			if (b > st->largest)
				st->largest = b;
			if (b < st->smallest)
				st->smallest = b;
			st->hcount[k]++;
			st->hbytes[k] += b;
		} else if (ev.flags & SONDE_HEAPF_FREE) {
			st->frees++;
		}
	}
	if (sonde_heap_iter_failed(it))
		goto out;
	matcher_end(&m, NULL, NULL);
	if (st)
		st->m = m.s;
	if (ms)
		*ms = m.s;
	rc = 0;
out:
	free(g);
	tempo_release(&t);
	sonde_heap_iter_free(it);
	matcher_release(&m);
	return rc;
}

int sonde_heap_stats(const struct sonde_exp *exp, struct sonde_heap_stats *st)
{
	return stream(exp, st, NULL, NULL, NULL);
}

int sonde_heap_walk(const struct sonde_exp *exp,
		    void (*each)(void *arg, const struct sonde_heap_event *e, uint64_t live), void *arg,
		    struct sonde_heap_match *st)
{
	return stream(exp, NULL, each, arg, st);
}
