/*
 * Call stacks as a tree of frame nodes.  A node is (parent node, pc) and
 * its id is a 64-bit hash of both (and of the frame's kind, flags and aux
 * for a frame that is not native: a kernel address, a Java method, which
 * a stack source of the sampling handler adds; sonde/hooks.h), so a stack's id (its leaf node) is
 * computed from the frames alone, and equal call paths get equal ids in
 * every thread without any coordination.  Only nodes never seen before are
 * written to the "stacks" file: a sample costs its 32-byte profile packet,
 * plus one 32-byte frame packet per frame that differs from every stack
 * recorded so far (usually none, or the leaf only).
 *
 * The set of node ids already written is a short list of open-addressing
 * tables of 64-bit words claimed with compare-and-swap: lock-free, usable
 * from a signal handler.  Tables are never resized; when the newest is half
 * full, a table twice its size is mapped (by system call, so from a signal
 * handler too) and new ids go there once the newest is 3/4 full.  The
 * first is small (256 KiB) and the tables from 2 MiB on use huge pages:
 * every page of a table is touched at random (see stacks_init).  When the
 * last table is full, new nodes
 * are written every time they occur (readers keep one copy per id), so
 * correctness never depends on the tables' size, only the file size does.
 * For the same reason a node that two threads meet first just as a new
 * table takes over may be written twice (one claims it in the old table,
 * one in the new).
 *
 * A thread that finds a node already claimed does not wait for the claimer
 * to finish writing it: both are in signal handlers that finish promptly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"

/* Table k has 1 << (FIRST_BITS + k) words: 256 KiB, 512 KiB, ... 64 MiB,
 * room for 14 million nodes at 7/8 full. */
#ifndef FIRST_BITS /* the unit test shrinks them */
#define FIRST_BITS 15
#define NTABLES 9
#endif
#define HUGE_PAGE (2u << 20)

struct table {
	_Atomic uint64_t *slot;
	uint32_t mask;
	_Atomic uint32_t used;
};

static struct table g_tables[NTABLES];
static _Atomic int g_ntables;	/* published tables: slot set before this */
static _Atomic int g_mapped;	/* tables mapped, published or spare */
static _Atomic int g_growing;	/* a thread is mapping table g_mapped */
static _Atomic int g_map_failed;	/* mmap refused once: stop asking */
static struct dfile *g_stacks_df;
static _Atomic uint64_t g_written;
static int g_huge; /* tables on transparent huge pages */

/* Maps table k as a spare (not yet searched).  Async-signal-safe (raw
 * system calls only); errno is kept (interposers intern stacks too, and
 * madvise fails with EINVAL where transparent huge pages are off). */
static int map_table(int k)
{
	int saved = errno;
	size_t words = (size_t)1 << (FIRST_BITS + k);
	size_t len = words * sizeof(uint64_t);
	char *p = sonde_mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		atomic_store(&g_map_failed, 1);
		errno = saved;
		return -1;
	}
	/* Lookups land anywhere in a table: with 4 KiB pages nearly each is
	 * a TLB miss, which under nested paging (a VM) walks two page tables.
	 * Ask for transparent huge pages on a 2 MiB-aligned table (the kernel
	 * may refuse; then it is only slower). */
	char *t = (char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (g_huge && len >= HUGE_PAGE)
		syscall(SYS_madvise, t, len, MADV_HUGEPAGE);
	errno = saved;
	g_tables[k].slot = (_Atomic uint64_t *)t;
	g_tables[k].mask = (uint32_t)(words - 1);
	atomic_store_explicit(&g_tables[k].used, 0, memory_order_relaxed);
	atomic_store_explicit(&g_mapped, k + 1, memory_order_release);
	return 0;
}

int stacks_init(struct dfile *df, int huge)
{
	/* Huge pages (for tables of 2 MiB and more) pay where the tables are
	 * searched at every sample (clock profiling); tracing finds most
	 * stacks in per-thread caches and searches them rarely.  The first
	 * table is 256 KiB of 4 KiB pages, which the TLB holds: most programs
	 * never need a second.  It was one 2 MiB huge page, whose first touch
	 * zeroes 2 MiB and, where THP defrag is "madvise" (the default), may
	 * compact memory first: 0.3 ms, and 4 ms in a third of the runs
	 * here. */
	g_huge = huge;
	if (map_table(0) < 0)
		return -1;
	/* With clock profiling, fault the first table in now, in normal
	 * context, not one by one in the sampling handler: in one call
	 * (MADV_POPULATE_WRITE, Linux 5.14) rather than 64 faults, which a
	 * guest whose page faults trap to its hypervisor paid 1.3 ms for
	 * at every process start; touched page by page where the kernel
	 * has no such call. */
	size_t len = ((size_t)g_tables[0].mask + 1) * sizeof(uint64_t);
	int saved = errno;
	if (huge && syscall(SYS_madvise, g_tables[0].slot, len, 23 /* MADV_POPULATE_WRITE */) != 0)
		for (size_t off = 0; off < len; off += 4096)
			*(volatile uint64_t *)((char *)g_tables[0].slot + off) = 0;
	errno = saved;
	atomic_store_explicit(&g_ntables, 1, memory_order_release);
	g_stacks_df = df;
	return 0;
}

/* Node ids this thread knows to be written: most samples repeat a stack
 * the same thread recorded recently, found here without touching the
 * shared table (whose lines other CPUs keep writing).  Direct-mapped.
 * A page of the thread's own, mapped as it starts, behind a pointer:
 * in static TLS its 4 KiB kept the collector from being loaded into a
 * process already running (dlopen, a JVM's attach), where glibc has
 * about 1.5 KiB left for initial-exec TLS.  NULL: no cache (a thread
 * that began before the collector, a raw clone task). */
#define KNOWN 512
static TLS uint64_t *t_known;

/* Normal context, on the thread. */
void stacks_thread_begin(void)
{
	if (t_known)
		return;
	void *p = sonde_mmap(NULL, KNOWN * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		t_known = p;
}

/* Normal context, on the thread; a handler after it finds no cache. */
void stacks_thread_end(void)
{
	uint64_t *k = t_known;
	t_known = NULL;
	atomic_signal_fence(memory_order_seq_cst);
	if (k)
		sonde_munmap(k, KNOWN * sizeof(uint64_t));
}

/* A task on a thread pointer of its own whose TLS may hold its
 * creator's cache (which the creator unmaps as it ends). */
void stacks_thread_forget(void)
{
	t_known = NULL;
}

/* In a fork child that starts its own experiment: forget every node (they
 * are in the parent's file, not the child's); stacks_init maps anew. */
void stacks_reset(void)
{
	int n = atomic_load(&g_mapped);
	for (int k = 0; k < n; k++)
		sonde_munmap((void *)g_tables[k].slot, ((size_t)g_tables[k].mask + 1) * sizeof(uint64_t));
	memset(g_tables, 0, sizeof g_tables);
	atomic_store(&g_ntables, 0);
	atomic_store(&g_mapped, 0);
	atomic_store(&g_map_failed, 0);
	atomic_store(&g_growing, 0);
	atomic_store(&g_written, 0);
	if (t_known)
		memset(t_known, 0, KNOWN * sizeof(uint64_t));
}

static inline int known(uint64_t id)
{
	const uint64_t *k = t_known;
	return k && k[id & (KNOWN - 1)] == id;
}

static inline void remember(uint64_t id)
{
	uint64_t *k = t_known;
	if (k)
		k[id & (KNOWN - 1)] = id;
}

/* Node id of (parent, pc): wyhash-style multiply-fold.  Async-signal-safe. */
static inline uint64_t node_id(uint64_t parent, uint64_t pc)
{
	__uint128_t r = (__uint128_t)(parent ^ 0xa0761d6478bd642full) * (pc ^ 0xe7037ed1a0b428dbull);
	uint64_t h = (uint64_t)r ^ (uint64_t)(r >> 64);
	return h < SONDE_FRAME_ROOT_LIMIT ? h + SONDE_FRAME_ROOT_LIMIT : h;
}

/* Node id of a frame of any kind: a native frame's (tag 0) is node_id's;
 * another's folds its kind, flags and aux (tag) in too, so that a method
 * id or kernel address equal to a native pc is another node.
 * Async-signal-safe. */
static inline uint64_t tagged_node_id(uint64_t parent, uint64_t pc, uint32_t tag)
{
	uint64_t h = node_id(parent, pc);
	return tag ? node_id(h, 0x8bb84b93962eacc9ull ^ tag) : h;
}

/* Async-signal-safe. */
static int write_node(uint64_t id, uint64_t parent, uint64_t pc, uint32_t tag)
{
	struct sonde_frame_packet *fp = dfile_reserve(g_stacks_df, sizeof *fp);
	if (!fp)
		return -1;
	fp->type = SONDE_PKT_FRAME;
	fp->size = sizeof *fp;
	fp->kind = (uint8_t)SONDE_FRAME_TAG_KIND(tag);
	fp->fflags = (uint8_t)SONDE_FRAME_TAG_FFLAGS(tag);
	fp->aux = (uint16_t)SONDE_FRAME_TAG_AUX(tag);
	fp->node_id = id;
	fp->parent_id = parent;
	fp->pc = pc;
	dfile_commit(g_stacks_df, sizeof *fp);
	atomic_fetch_add_explicit(&g_written, 1, memory_order_relaxed);
	return 0;
}

enum { ABSENT, PRESENT };

/* Where a claimed id went, so a failed write can release it. */
struct claim {
	struct table *t;
	long i;
};

/* Probe one table for `id`.  Returns PRESENT, or ABSENT with *empty set to
 * the first free slot of the probe sequence (-1 if none within 64). */
static int probe(struct table *t, uint64_t id, long *empty)
{
	*empty = -1;
	uint32_t i = (uint32_t)(id >> 32) & t->mask;
	for (uint32_t probes = 0; probes < 64; probes++, i = (i + 1) & t->mask) {
		uint64_t cur = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
		if (cur == id)
			return PRESENT;
		if (cur == 0) {
			*empty = i;
			return ABSENT;
		}
	}
	return ABSENT;
}

/* The table new ids go to: the newest, or the next one once the newest is
 * 3/4 full.  NULL when every table is full.  Async-signal-safe: the next
 * table is mapped ahead, as a spare, when the newest is half full, and
 * turning the spare into the newest is one compare-and-swap, so no thread
 * waits for another's system call.  Should the mapping thread be slow
 * (preempted in mmap), the others fill the newest table to 7/8 rather than
 * write every new node unclaimed. */
static struct table *insert_table(void)
{
	int n = atomic_load_explicit(&g_ntables, memory_order_acquire);
	struct table *t = &g_tables[n - 1];
	uint32_t used = atomic_load_explicit(&t->used, memory_order_relaxed);
	uint32_t size = t->mask + 1;
	if (used < size / 2)
		return t;
	if (n < NTABLES && atomic_load_explicit(&g_mapped, memory_order_acquire) == n &&
	    !atomic_load_explicit(&g_map_failed, memory_order_relaxed)) {
		int idle = 0;
		if (atomic_compare_exchange_strong(&g_growing, &idle, 1)) {
			if (atomic_load(&g_mapped) == n)
				map_table(n);
			atomic_store(&g_growing, 0);
		}
	}
	if (used < size / 4 * 3)
		return t;
	if (n < NTABLES && atomic_load_explicit(&g_mapped, memory_order_acquire) > n) {
		int expect = n;
		atomic_compare_exchange_strong(&g_ntables, &expect, n + 1);
		n = atomic_load_explicit(&g_ntables, memory_order_acquire);
		return &g_tables[n - 1];
	}
	return used < size / 8 * 7 ? t : NULL;
}

/* Is `id` in a table?  With claim set, insert it when absent and report
 * in *c where (so a failed write can release it).  Async-signal-safe. */
static int lookup(uint64_t id, int claim, struct claim *c)
{
	c->t = NULL;
	int n = atomic_load_explicit(&g_ntables, memory_order_acquire);
	long empty;
	for (int k = 0; k < n; k++)
		if (probe(&g_tables[k], id, &empty) == PRESENT)
			return PRESENT;
	if (!claim)
		return ABSENT;
	struct table *t = insert_table();
	if (!t)
		return ABSENT;
	for (;;) {
		if (probe(t, id, &empty) == PRESENT)
			return PRESENT;
		if (empty < 0)
			return ABSENT;
		uint64_t expected = 0;
		if (atomic_compare_exchange_strong(&t->slot[empty], &expected, id)) {
			atomic_fetch_add_explicit(&t->used, 1, memory_order_relaxed);
			c->t = t;
			c->i = empty;
			return ABSENT;
		}
		if (expected == id)
			return PRESENT;
		/* Another id took the slot: probe on from it. */
	}
}

/* Async-signal-safe.  With tags NULL every frame is native: a constant
 * the compiler folds into each caller below. */
static inline __attribute__((always_inline)) uint64_t intern(const uint64_t *pcs, const uint32_t *tags, int depth,
							     unsigned flags)
{
	if (depth <= 0)
		return 0;
	/* ids[k] is the node of frame k; the root's parent carries flags. */
	uint64_t ids[depth]; /* depth <= the -D limit: small */
	uint64_t parent = flags & (SONDE_FRAME_ROOT_LIMIT - 1);
	for (int k = depth - 1; k >= 0; k--)
		ids[k] = parent = tags ? tagged_node_id(parent, pcs[k], tags[k]) : node_id(parent, pcs[k]);
	struct claim slot;
	if (known(ids[0]))
		return ids[0];
	if (lookup(ids[0], 0, &slot) == PRESENT) {
		remember(ids[0]);
		return ids[0];
	}
	/* Find the deepest caller already written (most new stacks differ
	 * from a known one only near the leaf), then write the nodes below
	 * it, outermost first, so a node's parent is always written first. */
	int k = 1;
	while (k < depth && !known(ids[k]) && lookup(ids[k], 0, &slot) != PRESENT)
		k++;
	for (k = k - 1; k >= 0; k--) {
		uint64_t par = k + 1 < depth ? ids[k + 1] : (flags & (SONDE_FRAME_ROOT_LIMIT - 1));
		if (lookup(ids[k], 1, &slot) == PRESENT) {
			remember(ids[k]);
			continue;
		}
		if (write_node(ids[k], par, pcs[k], tags ? tags[k] : 0) < 0) {
			/* Not written (file full, block not mapped yet): free
			 * the slot so a later occurrence writes it. */
			if (slot.t) {
				atomic_store(&slot.t->slot[slot.i], 0);
				atomic_fetch_sub(&slot.t->used, 1);
			}
			break;
		}
		remember(ids[k]);
	}
	return ids[0];
}

uint64_t stacks_intern(const uint64_t *pcs, int depth, unsigned flags)
{
	return intern(pcs, NULL, depth, flags);
}

uint64_t stacks_intern_tagged(const uint64_t *pcs, const uint32_t *tags, int depth, unsigned flags)
{
	return intern(pcs, tags, depth, flags);
}

/* The stack of frame (pc, tag) called from the stack `parent` (an id
 * interned before, its node written): a pseudo leaf under a recorded
 * stack.  0 when parent is 0.  Async-signal-safe. */
uint64_t stacks_intern_below(uint64_t parent, uint64_t pc, uint32_t tag)
{
	if (parent < SONDE_FRAME_ROOT_LIMIT)
		return 0;
	uint64_t id = tagged_node_id(parent, pc, tag);
	struct claim slot;
	if (known(id))
		return id;
	if (lookup(id, 1, &slot) == PRESENT) {
		remember(id);
		return id;
	}
	if (write_node(id, parent, pc, tag) < 0) {
		if (slot.t) {
			atomic_store(&slot.t->slot[slot.i], 0);
			atomic_fetch_sub(&slot.t->used, 1);
		}
		return 0;
	}
	remember(id);
	return id;
}

struct dfile *stacks_dfile(void)
{
	return g_stacks_df;
}

uint64_t stacks_count(void)
{
	return atomic_load(&g_written);
}
