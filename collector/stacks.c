/*
 * Call-stack deduplication.  A sample refers to its stack by a 64-bit hash
 * of the frames; the stack itself is written to the "stacks" file only the
 * first time the hash is seen, so a sample costs its 32-byte packet, not a
 * copy of the stack.
 *
 * The set of hashes already written is an open-addressing table of 64-bit
 * words claimed with compare-and-swap: lock-free, usable from a signal
 * handler, never resized.  When it is 3/4 full, new stacks are written
 * every time they occur (readers keep one copy per id), so correctness
 * never depends on the table's size, only the file size does.
 *
 * A thread that finds a hash already claimed does not wait for the
 * claimer to finish writing the packet: both are in signal handlers that
 * finish promptly, and a reader sees the packet as soon as it is published.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "collector.h"

#define TABLE_BITS 20
#define TABLE_SIZE (1u << TABLE_BITS)

static _Atomic uint64_t *g_table;
static struct dfile *g_stacks_df;
static _Atomic uint32_t g_used;
static _Atomic uint64_t g_written;

int stacks_init(struct dfile *df)
{
	void *p = mmap(NULL, TABLE_SIZE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	g_table = p;
	g_stacks_df = df;
	return 0;
}

/* 64-bit mix of the frames (wyhash-style multiply-fold).  Async-signal-safe. */
static inline uint64_t mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)(a ^ 0xa0761d6478bd642full) * (b ^ 0xe7037ed1a0b428dbull);
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* Async-signal-safe. */
static uint64_t hash_stack(const uint64_t *pcs, int depth, unsigned flags)
{
	uint64_t h = mix((uint64_t)depth, flags + 0x9e3779b97f4a7c15ull);
	for (int i = 0; i < depth; i++)
		h = mix(h, pcs[i]);
	return h ? h : 1; /* 0 marks an empty slot */
}

/* Async-signal-safe. */
static int write_stack(uint64_t id, const uint64_t *pcs, int depth, unsigned flags)
{
	size_t size = sizeof(struct sonde_stack_packet) + (size_t)depth * 8;
	struct sonde_stack_packet *sp = dfile_reserve(g_stacks_df, size);
	if (!sp)
		return -1;
	sp->type = SONDE_PKT_STACK;
	sp->size = (uint16_t)size;
	sp->depth = (uint16_t)depth;
	sp->flags = (uint16_t)flags;
	sp->stack_id = id;
	memcpy(sp + 1, pcs, (size_t)depth * 8);
	dfile_commit(g_stacks_df, size);
	atomic_fetch_add_explicit(&g_written, 1, memory_order_relaxed);
	return 0;
}

/* Async-signal-safe. */
uint64_t stacks_intern(const uint64_t *pcs, int depth, unsigned flags)
{
	uint64_t h = hash_stack(pcs, depth, flags);
	if (!g_table)
		return h;
	uint32_t i = (uint32_t)(h >> (64 - TABLE_BITS));
	for (uint32_t probes = 0; probes < 64; probes++, i = (i + 1) & (TABLE_SIZE - 1)) {
		uint64_t cur = atomic_load_explicit(&g_table[i], memory_order_relaxed);
		if (cur == h)
			return h;
		if (cur != 0)
			continue;
		if (atomic_load_explicit(&g_used, memory_order_relaxed) >= TABLE_SIZE / 4 * 3)
			break;
		uint64_t expected = 0;
		if (atomic_compare_exchange_strong(&g_table[i], &expected, h)) {
			atomic_fetch_add_explicit(&g_used, 1, memory_order_relaxed);
			/* Not written (file full or block not mapped yet): free
			 * the slot so a later occurrence writes it. */
			if (write_stack(h, pcs, depth, flags) < 0) {
				atomic_store(&g_table[i], 0);
				atomic_fetch_sub(&g_used, 1);
			}
			return h;
		}
		if (expected == h)
			return h;
	}
	(void)write_stack(h, pcs, depth, flags);
	return h;
}

uint64_t stacks_count(void)
{
	return atomic_load(&g_written);
}
