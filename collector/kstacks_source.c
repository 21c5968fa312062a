/*
 * The kernel stacks' source (kstacks.c, sonde collect -k on): in the
 * sampling handler, the records the thread's clock counter wrote into its
 * ring buffer since the last sample, one of them on top of the user stack.
 * Async-signal-safe, on tests/t00-asyncsafe.sh's list: loads and stores
 * into the thread's own ring and the handler's arrays.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>

#include "clock_internal.h"
#include "kstacks.h"

/* splitmix64: the random choice among a sample's records. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The stack source.  Async-signal-safe: loads and stores into the
 * thread's own ring and the handler's arrays. */
int kstack_frames(const struct sonde_hook_sample *hs, struct sonde_hook_frame *out, int max,
			 struct sonde_hook_splice *where, void *arg)
{
	(void)where, (void)arg; /* {0, 0}: above the user leaf */
	if (hs->what != SONDE_HOOK_CLOCK)
		return 0;
	struct thread_slot *s = slot_by_tid(hs->tid);
	struct perf_event_mmap_page *m = s ? atomic_load_explicit(&s->kring, memory_order_acquire) : NULL;
	if (!m)
		return 0;
	const uint8_t *data = (const uint8_t *)m + (m->data_offset ? m->data_offset : g_kst_page);
	uint64_t size = m->data_size ? m->data_size : g_kst_page * (RING_PAGES - 1);
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
	if (head - tail > size || (size & (size - 1)))
		tail = head; /* not a state the kernel leaves: start again */
	uint64_t pick = 0, seen = 0, rnd = mix(hs->time_ns ^ (uint64_t)hs->tid << 32);
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		__builtin_memcpy(&h, data + (tail & (size - 1)), sizeof h); /* 8-aligned: never wraps */
		if (h.size < sizeof h || tail + h.size > head)
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			/* reservoir of one: the k-th record replaces the
			 * pick with probability 1/k */
			seen++;
			rnd = mix(rnd);
			if (rnd % seen == 0)
				pick = tail;
		} else if (h.type == PERF_RECORD_LOST) {
			atomic_fetch_add_explicit(&g_kst_lost, 1, memory_order_relaxed);
		}
		tail += h.size;
	}
	int n = 0;
	if (seen) {
		uint64_t at = pick + sizeof(struct perf_event_header), nr;
		__builtin_memcpy(&nr, data + (at & (size - 1)), 8);
		at += 8;
		for (uint64_t i = 0; i < nr && i < 4096 && n < max; i++, at += 8) {
			uint64_t ip;
			__builtin_memcpy(&ip, data + (at & (size - 1)), 8);
			if (ip >= (uint64_t)PERF_CONTEXT_MAX)
				continue; /* PERF_CONTEXT_KERNEL and the like */
			out[n] = (struct sonde_hook_frame){ ip, SONDE_FRAME_KERNEL, n ? 0 : SONDE_FRAMEF_EXACT, 0, 0 };
			n++;
		}
	}
	__atomic_store_n(&m->data_tail, head, __ATOMIC_RELEASE);
	atomic_fetch_add_explicit(&g_kst_samples, 1, memory_order_relaxed);
	if (n)
		atomic_fetch_add_explicit(&g_kst_with, 1, memory_order_relaxed);
	return n;
}

