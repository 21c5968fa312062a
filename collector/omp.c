/*
 * OpenMP's thread states (include/sonde/states.h: OpenMP Work, and the
 * wait by cause: barrier, lock, taskwait, idle, overhead) with every clock
 * sample of a thread of an OpenMP program, and with its off-CPU samples
 * when it is blocked in an OpenMP wait (collect -w).  Two runtimes, two
 * ways (doc/sonde-collect.md, "OpenMP"):
 *
 *   - LLVM's libomp (clang -fopenmp): an OMPT tool.  The collector
 *     exports ompt_start_tool, which the runtime calls as it starts; the
 *     tool's initializer takes ompt_get_state, which the state provider
 *     (omp_state.c) calls in the sampling handler (the OpenMP
 *     specification allows it there).  With off-CPU sampling, the
 *     callbacks sync_region_wait, mutex_acquire/acquired and implicit_task
 *     also keep the thread's word (below), which the off-CPU sampler reads
 *     for a blocked thread (ompt_get_state answers for the calling thread
 *     only).  A tool of the user's wins: one that ompt_start_tool finds
 *     after the collector's (dlsym RTLD_NEXT) and that accepts, or
 *     OMP_TOOL_LIBRARIES; then sonde's OpenMP states are off (log.xml says
 *     so).  The region callbacks (parallel_begin/end) of a later regions
 *     view go into ompt_initialize's list.
 *   - GCC's libgomp (no OMPT): interposers of its GOMP_* entry points
 *     keep a word per thread (struct thread_slot's omp_state, omp.h): the
 *     outlined function of a parallel region and of a task is wrapped
 *     (work while it runs; at the region's end the thread has arrived at
 *     the implicit barrier, idle once the region is over), and barriers,
 *     critical sections, atomics, ordered sections, locks, taskwait and
 *     taskgroup set their wait around the real call.  The real functions
 *     are looked up lazily with dlsym(RTLD_NEXT), in normal context.
 *
 * A program that uses neither runtime calls none of this: no cost, no
 * thread, no state (the provider is registered at the runtime's first
 * call).  A GCC program run on libomp (its GOMP_ compatibility entry
 * points) gets OMPT's states: when OMPT is active, the interposers pass
 * the calls through.  SONDE_OMP=0 in the environment turns all of it off
 * (overhead measurements).
 *
 * Normal context (the target's threads, inside OpenMP calls): the words
 * are plain relaxed stores of the thread's own slot.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sonde/hooks.h>
#include <sonde/settings.h>
#include <sonde/states.h>

#include "clock_internal.h"
#include "fastclock.h"
#include "omp.h"
#include "sys_mmap.h"
/* The runtime's entry points behind the interposers.  RTLD_NEXT finds
 * them in the global scope; a runtime that is not there (a plugin linked
 * with libgomp and dlopened RTLD_LOCAL, whose calls still reach sonde's
 * definitions first) is found by its name among the loaded objects,
 * without loading anything: a NULL would be called otherwise. */
static void *omp_real_lookup(const char *name)
{
	static const char *const runtimes[] = { "libgomp.so.1", "libomp.so.5", "libomp.so", "libiomp5.so" };
	void *p = dlsym(RTLD_NEXT, name);
	for (size_t i = 0; !p && i < sizeof runtimes / sizeof runtimes[0]; i++) {
		void *h = dlopen(runtimes[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			p = dlsym(h, name);
			dlclose(h);
		}
	}
	return p;
}
#define REAL_LOOKUP(name) omp_real_lookup(name)
#include "real.h"

/* ---- on or off ---- */

/* -1: not decided; 0: off (no clock profile, SONDE_OMP=0, a tool of the
 * user's); 1: on. */
static _Atomic int g_on = -1;
static _Atomic int g_offcpu;	      /* off-CPU sampling runs: OMPT keeps the words */
static _Atomic int g_hook;	      /* the provider's handle, 0: not registered */
static _Atomic int g_runtime;	      /* 1: libgomp's entry points seen; 2: OMPT */
static _Atomic int g_user_tool;	      /* the user's OMPT tool won */
static _Atomic int g_reg_lock;
/* The last region's seq, written by each region's master: in a line
 * pair of its own, away from the words every wrapper of every thread
 * reads (next to them, each region's fetch-add cost the team's other
 * threads a miss at their next OpenMP call). */
static struct {
	_Alignas(128) _Atomic uint64_t v;
	char pad[120];
} g_region_seq;

static bool omp_on(void)
{
	int on = atomic_load_explicit(&g_on, memory_order_relaxed);
	if (on >= 0)
		return on;
	/* Before the collector's module opened (OMPT's start may come
	 * first): what its settings will be. */
	const char *v = sonde_getenv(SONDE_ENV_OMP);
	const char *c = sonde_getenv(SONDE_ENV_CLOCK_NS);
	return !(v && (!strcmp(v, "0") || !strcmp(v, "off"))) && !(c && !strcmp(c, "0"));
}

/* Register the state provider, once, at the runtime's first call. */
static void omp_register(void)
{
	if (atomic_load_explicit(&g_hook, memory_order_acquire))
		return;
	while (atomic_exchange_explicit(&g_reg_lock, 1, memory_order_acquire))
		;
	if (!atomic_load(&g_hook)) {
		int h = __sonde_hook_state_add(omp_state_provider, NULL);
		atomic_store(&g_hook, h > 0 ? h : -1);
		if (h <= 0)
			log_event_text("warning", "OpenMP states: the sampling handler has no room for their "
						  "provider; samples carry no OpenMP state");
	}
	atomic_store_explicit(&g_reg_lock, 0, memory_order_release);
}

/* ---- the words ---- */

/* The calling thread's slot, found once (the clock registered the
 * thread); NULL when it has none (then its states are not kept). */
static TLS struct thread_slot *t_slot;
static TLS int t_looked;

static struct thread_slot *my_slot(void)
{
	if (__builtin_expect(t_looked, 1))
		return t_slot;
	t_looked = 1;
	t_slot = slot_by_tid(t_state.tid);
	return t_slot;
}

/* The word and the region: saved, set, restored around a call. */
struct omp_saved {
	uint32_t w;
	uint64_t region;
};

static inline struct omp_saved word_set(struct thread_slot *s, uint32_t w)
{
	struct omp_saved old = { 0, 0 };
	if (!s)
		return old;
	old.w = atomic_load_explicit(&s->omp_state, memory_order_relaxed);
	old.region = atomic_load_explicit(&s->omp_region, memory_order_relaxed);
	atomic_store_explicit(&s->omp_state, w, memory_order_relaxed);
	return old;
}

static inline void word_restore(struct thread_slot *s, struct omp_saved old)
{
	if (!s)
		return;
	atomic_store_explicit(&s->omp_region, old.region, memory_order_relaxed);
	atomic_store_explicit(&s->omp_state, old.w, memory_order_relaxed);
}

/* Whether libgomp's interposers keep the words: on, and no OMPT. */
static inline bool gomp_keeps(void)
{
	if (__builtin_expect(atomic_load_explicit(&g_runtime, memory_order_relaxed) == 1, 1) &&
	    atomic_load_explicit(&g_on, memory_order_relaxed) == 1)
		return !atomic_load_explicit(&g_omp_get_state, memory_order_relaxed);
	return false;
}

/* libgomp's first call: decide, register the provider.  The thread that
 * makes it was doing serial work. */
static bool gomp_first(void)
{
	if (__builtin_expect(atomic_load_explicit(&g_runtime, memory_order_relaxed) != 0, 1))
		return gomp_keeps();
	int expect = 0;
	if (!atomic_compare_exchange_strong(&g_runtime, &expect, 1))
		return gomp_keeps();
	if (atomic_load(&g_on) < 0)
		atomic_store(&g_on, omp_on());
	if (atomic_load(&g_on) != 1 || atomic_load(&g_omp_get_state))
		return false;
	atomic_store(&g_omp_words, 1);
	struct thread_slot *s = my_slot();
	if (s && !atomic_load_explicit(&s->omp_state, memory_order_relaxed))
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_WORK, memory_order_relaxed);
	omp_register();
	return true;
}

/* The two ends of a wait, given to the right side.  Left to the clock,
 * each went to the sample after it: the work before a wait to the wait's
 * first sample, the wait's last stretch to the work after it; and a wait
 * that yields its CPU to the team's other threads (a contended lock on
 * libomp, 4 threads on 2 CPUs) is sampled at longer intervals of its own
 * CPU time than work is, so the second was the larger: 0.3 ms a wait,
 * 5% of a lock's time.  So a wait's start is published in the thread's
 * slot (wait_since), and the clock's first sample after it gives the CPU
 * time of the wall time before it to the state before (clock_sample);
 * and a wait longer than the clock's interval has its CPU time since
 * the last sample recorded when it ends (clock_wait_end).  A clock read
 * a wait, and a second at its end only when a sample fell in it (the
 * sampler says so in wait_hit): a wait without one had less CPU time
 * than an interval, and most waits are short (the ends were 4 of the 14
 * clock reads of bench/ompbench.c's region on 2 threads).  The record,
 * a few microseconds, for the long ones only; a short one that a sample
 * fell in marks its end with one clock read (clock_wait_mark), and the
 * next sample gives the wait its time up to there. */
static uint64_t g_wait_flush_ns; /* the clock's interval; 0: off */

static inline uint16_t word_cpu_state(uint32_t w)
{
	return w & OMP_W_STATE ? (uint16_t)(w & OMP_W_STATE) : SONDE_STATE_CPU;
}

static inline uint64_t wait_begin(struct thread_slot *s, uint32_t before_word)
{
	if (!g_wait_flush_ns)
		return 0;
	uint64_t t = fast_now_ns();
	atomic_store_explicit(&s->wait_before, word_cpu_state(before_word), memory_order_relaxed);
	atomic_store_explicit(&s->wait_hit, 0, memory_order_relaxed);
	atomic_store_explicit(&s->wait_since, t, memory_order_relaxed);
	return t;
}

/* leaf: the runtime's function the wait was in, when it has returned. */
static void wait_done(struct thread_slot *s, uint64_t begin, uint32_t before_word, uint16_t wait, const void *leaf)
{
	if (!begin)
		return;
	atomic_store_explicit(&s->wait_since, 0, memory_order_relaxed);
	/* the sampler is this thread's signal handler: after the store
	 * above, none sets wait_hit again */
	atomic_signal_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&s->wait_hit, memory_order_relaxed))
		return;
	uint64_t now = fast_now_ns();
	if (now - begin >= g_wait_flush_ns)
		clock_wait_end(word_cpu_state(before_word), wait, begin, leaf);
	else
		clock_wait_mark(wait, now);
}

/* A wait of `state` around the real call CALL (libgomp's entry points). */
#define GOMP_WAIT(state, CALL)                                             \
	do {                                                               \
		if (!gomp_first()) {                                       \
			CALL;                                              \
			break;                                             \
		}                                                          \
		struct thread_slot *s_ = my_slot();                        \
		struct omp_saved o_ = word_set(s_, (state));               \
		uint64_t b_ = s_ ? wait_begin(s_, o_.w) : 0;               \
		CALL;                                                      \
		wait_done(s_, b_, o_.w, (state), (const void *)real);      \
		word_restore(s_, o_);                                      \
	} while (0)

/* ---- the regions' record (kind omp, file omptrace) ----
 *
 * A region's execution, each thread's part of it and each explicit task,
 * as format.h's packets (doc/experiment-format.md, kind omp), written
 * into the collector's per-thread blocks of omptrace: a part by its
 * thread when it arrives at the region's closing barrier, the master's
 * part and the region by the master at the join, a task by the thread
 * that ran it when it ends.  Enter and leave only: a region costs its
 * master two clock reads and a stack (cached per call site) at the fork
 * and a packet at the join (the region's, which holds the master's own
 * part), and each worker two clock reads and a packet.  A worker never sees the barrier's release (libgomp
 * gives no call then; libomp tells it only at the next region's fork),
 * so a worker's part as written ends at its own arrival, and a reader
 * ends it where the team's last thread arrived (the latest arrival among
 * the region's parts).  No thread reads another's packet: the master's
 * join touches nothing a worker wrote.  The file is created at the first
 * region: a program without OpenMP has none. */

static struct dfile *g_omp_df;
/* The stages of the record (below, "the record's stages"). */
#define OMP_STAGES 512
#define STAGE_BLOCKS 4
struct omp_stage {
	_Atomic int32_t tid;  /* its thread; 0: free */
	_Atomic int32_t lock; /* 1: being written to the file */
	/* the block being filled << 32 | its bytes: one word, which the
	 * collector's end reads whole */
	_Atomic uint64_t pos;
	/* what the file has: the blocks before wblk and wbytes of wblk
	 * (under the lock) */
	uint32_t wblk, wbytes;
	uint32_t len[STAGE_BLOCKS]; /* a filled block's bytes, before pos leaves it */
	uint64_t first_ns[STAGE_BLOCKS];
} __attribute__((aligned(64)));
static struct omp_stage g_stages[OMP_STAGES];
static char *g_stage_mem; /* OMP_STAGES stages of STAGE_BLOCKS blocks' payload */
static TLS struct omp_stage *t_stage;
static TLS int t_stage_looked;
/* 0: no file yet; 1: writing; -1: off (failed, stopped, states off) */
static _Atomic int g_rec;
static _Atomic int g_rec_lock;

static const struct {
	int type;
	const char *name;
	size_t size;
	const char *fields;
} g_omp_packets[] = {
	{ SONDE_PKT_OMP_REGION, "omp_region", sizeof(struct sonde_omp_region_packet),
	  "type:0:u16 size:2:u16 flags:4:u16 level:6:u16 requested:8:u32 nthreads:12:u32 region_id:16:u64 "
	  "parent_id:24:u64 codeptr:32:u64 start_ns:40:u64 end_ns:48:u64 stack_id:56:u64 master_part:64:u64" },
	{ SONDE_PKT_OMP_ITASK, "omp_itask", sizeof(struct sonde_omp_itask_packet),
	  "type:0:u16 size:2:u16 thread_num:4:u32 region_id:8:u64 begin_ns:16:u64 arrive_ns:24:u64 end_ns:32:u64" },
	{ SONDE_PKT_OMP_TASK, "omp_task", sizeof(struct sonde_omp_task_packet),
	  "type:0:u16 size:2:u16 flags:4:u32 region_id:8:u64 create_ns:16:u64 begin_ns:24:u64 end_ns:32:u64 "
	  "create_stack:40:u64 codeptr:48:u64" },
};

/* The file and its lines in log.xml, once, at the first region. */
static bool rec_open(void)
{
	if (!atomic_load(&g_col.active) || atomic_load(&g_on) != 1)
		return false;
	while (atomic_exchange_explicit(&g_rec_lock, 1, memory_order_acquire))
		;
	if (!atomic_load(&g_rec)) {
		int saved = errno;
		g_omp_df = dfile_create(g_col.expdir, sonde_kind_desc(SONDE_KIND_OMP)->file, SONDE_KIND_OMP);
		errno = saved;
		if (!g_omp_df) {
			log_event_text("error", "cannot create the omptrace data file; OpenMP regions not recorded");
			atomic_store(&g_rec, -1);
		} else {
			char mem[512];
			struct xbuf b;
			xb_init(&b, mem, sizeof mem);
			xb_str(&b, "<dataformat");
			xb_attr_str(&b, "file", sonde_kind_desc(SONDE_KIND_OMP)->file);
			xb_attr_u64(&b, "kind", SONDE_KIND_OMP);
			xb_attr_u64(&b, "block_size", SONDE_BLOCK_SIZE);
			xb_str(&b, "/>\n");
			log_line(mem, b.len);
			for (size_t i = 0; i < sizeof g_omp_packets / sizeof g_omp_packets[0]; i++) {
				xb_init(&b, mem, sizeof mem);
				xb_str(&b, "<packet");
				xb_attr_u64(&b, "type", (uint64_t)g_omp_packets[i].type);
				xb_attr_str(&b, "name", g_omp_packets[i].name);
				xb_attr_u64(&b, "size", g_omp_packets[i].size);
				xb_attr_str(&b, "fields", g_omp_packets[i].fields);
				xb_str(&b, "/>\n");
				log_line(mem, b.len);
			}
			if (!g_stage_mem) {
				void *m = sonde_mmap(NULL, (size_t)OMP_STAGES * STAGE_BLOCKS * SONDE_BLOCK_PAYLOAD,
						     PROT_READ | PROT_WRITE,
						     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
				g_stage_mem = m == MAP_FAILED ? NULL : m;
			}
			atomic_store(&g_rec, 1);
		}
	}
	atomic_store_explicit(&g_rec_lock, 0, memory_order_release);
	return atomic_load(&g_rec) == 1;
}

/* Whether regions are recorded now. */
static inline bool rec_on(void)
{
	int r = atomic_load_explicit(&g_rec, memory_order_relaxed);
	if (__builtin_expect(r == 0, 0))
		return rec_open();
	return r == 1 && !atomic_load_explicit(&__sonde_paused, memory_order_relaxed);
}

/* ---- the record's stages ----
 *
 * A thread's packets are staged in memory of its own, which stays hot,
 * and go into the file STAGE_BLOCKS whole blocks at a time
 * (dfile_put_blocks: one write by the kernel).  Written straight into the
 * file's mapping they touched a fresh page every 36 regions of 2 threads,
 * and where a page's first write traps to the hypervisor (6 us on this
 * project's test machine) that was a third of the record's cost: empty
 * regions of 2 threads, 0.95 us a region over clock profiling alone, 0.30
 * us less staged.  Then, a block a write, the writes were most of what
 * remained: 24-55 us a block with the team's other thread spinning, half
 * of it the write's fixed cost (its open, close and file size limit), 0.3
 * us a region of 2 threads; four blocks a write share it.  A stage is
 * written when full, when its thread ends, and for every thread when
 * recording stops or the process execs: the runtime's idle workers hold
 * the last parts of the regions they ran.  Its lock says who writes it,
 * its thread or the collector's end; its thread appends without it (the
 * end writes what was appended before it looked, and marks it written).
 * A process killed outright loses what its threads had staged: at most
 * STAGE_BLOCKS blocks each. */
static inline char *stage_buf(const struct omp_stage *st, uint32_t blk)
{
	return g_stage_mem + ((size_t)(st - g_stages) * STAGE_BLOCKS + blk) * SONDE_BLOCK_PAYLOAD;
}

/* The calling thread's stage (NULL: none, and its packets go to the
 * mapping as before), taken at its first packet. */
static struct omp_stage *my_stage(void)
{
	if (__builtin_expect(t_stage_looked, 1))
		return t_stage;
	t_stage_looked = 1;
	if (!g_stage_mem)
		return NULL;
	int32_t tid = (int32_t)sys_gettid();
	for (int i = 0; i < OMP_STAGES; i++) {
		int32_t free_ = 0;
		struct omp_stage *st = &g_stages[i];
		if (atomic_load_explicit(&st->tid, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&st->tid, &free_, tid)) {
			st->wblk = st->wbytes = 0;
			atomic_store_explicit(&st->pos, 0, memory_order_release);
			t_stage = st;
			break;
		}
	}
	return t_stage;
}

/* Bounded: the other writer holds it for one write. */
static bool stage_lock(struct omp_stage *st, int tries)
{
	for (int i = 0; i < tries; i++) {
		int32_t z = 0;
		if (atomic_compare_exchange_weak_explicit(&st->lock, &z, 1, memory_order_acquire, memory_order_relaxed))
			return true;
		syscall(SYS_sched_yield);
	}
	return false;
}

static inline void stage_unlock(struct omp_stage *st)
{
	atomic_store_explicit(&st->lock, 0, memory_order_release);
}

/* What st holds that the file does not, into it.  Under st's lock. */
static void stage_write(struct omp_stage *st)
{
	uint64_t pos = atomic_load_explicit(&st->pos, memory_order_acquire);
	uint32_t cur = (uint32_t)(pos >> 32), used = (uint32_t)pos;
	if (!g_omp_df || cur >= STAGE_BLOCKS || st->wblk > cur)
		return;
	struct dfile_piece p[STAGE_BLOCKS];
	unsigned n = 0;
	for (uint32_t b = st->wblk; b <= cur; b++) {
		uint32_t from = b == st->wblk ? st->wbytes : 0, to = b < cur ? st->len[b] : used;
		if (to > from && to <= SONDE_BLOCK_PAYLOAD)
			p[n++] = (struct dfile_piece){ stage_buf(st, b) + from, to - from, st->first_ns[b] };
	}
	dfile_put_blocks(g_omp_df, (uint32_t)atomic_load(&st->tid), p, n);
	st->wblk = cur;
	st->wbytes = used;
}

/* Every thread's stage into the file: recording stops, or the process
 * execs.  Async-signal-safe. */
static void stages_write_all(void)
{
	if (!g_stage_mem)
		return;
	int saved = errno;
	for (int i = 0; i < OMP_STAGES; i++) {
		struct omp_stage *st = &g_stages[i];
		if (atomic_load_explicit(&st->tid, memory_order_acquire) && stage_lock(st, 2000)) {
			stage_write(st);
			stage_unlock(st);
		}
	}
	errno = saved;
}

/* The owner's stage into the file, and empty; false when the collector's
 * end holds it (tries: how long to wait for that). */
static bool stage_flush_own(struct omp_stage *st, int tries)
{
	int saved = errno;
	bool ok = stage_lock(st, tries);
	if (ok) {
		stage_write(st);
		st->wblk = st->wbytes = 0;
		atomic_store_explicit(&st->pos, 0, memory_order_relaxed);
		stage_unlock(st);
	}
	errno = saved;
	return ok;
}

/* The calling thread ends: its stage into the file, and free (or, when
 * the collector's end is writing it, left taken). */
static void omp_thread_end(void)
{
	struct omp_stage *st = t_stage;
	t_stage = NULL;
	t_stage_looked = 1; /* what it records after this goes to the mapping */
	if (st && stage_flush_own(st, 2000))
		atomic_store_explicit(&st->tid, 0, memory_order_release);
}

/* A packet into the calling thread's stage, or its block of the file;
 * false when it was lost. */
static bool rec_put(const void *pkt, size_t size)
{
	struct omp_stage *st = my_stage();
	if (st) {
		uint64_t pos = atomic_load_explicit(&st->pos, memory_order_relaxed);
		uint32_t cur = (uint32_t)(pos >> 32), u = (uint32_t)pos;
		if (u + size > SONDE_BLOCK_PAYLOAD) {
			if (cur + 1 < STAGE_BLOCKS) { /* the next block; pos says so with its first packet */
				st->len[cur++] = u;
				u = 0;
			} else if (stage_flush_own(st, 100))
				cur = u = 0;
		}
		if (u + size <= SONDE_BLOCK_PAYLOAD) {
			if (!u)
				st->first_ns[cur] = fast_now_ns();
			memcpy(stage_buf(st, cur) + u, pkt, size);
			atomic_store_explicit(&st->pos, (uint64_t)cur << 32 | (u + (uint32_t)size), memory_order_release);
			return true;
		}
	}
	int saved = errno;
	void *p = dfile_reserve_wait(g_omp_df, size);
	if (p) {
		memcpy(p, pkt, size);
		dfile_commit(g_omp_df, size);
	}
	errno = saved;
	return p != NULL;
}

/* A thread's regions, innermost last: the part it is doing in each. */
struct omp_frame {
	uint64_t seq, begin, arrive;
	uint32_t thread_num, nthreads;
	uint16_t level;
	bool written; /* a worker's part, written at its arrival */
};
#define OMP_DEPTH 8
static TLS struct omp_frame t_frames[OMP_DEPTH];
static TLS int t_depth;

static inline struct omp_frame *frame_top(void)
{
	return t_depth > 0 && t_depth <= OMP_DEPTH ? &t_frames[t_depth - 1] : NULL;
}

/* begin: when the part began, 0 when regions are not recorded. */
static inline struct omp_frame *frame_push(uint64_t seq, uint32_t thread_num, uint32_t nthreads, uint16_t level,
					   uint64_t begin)
{
	struct omp_frame *f = t_depth < OMP_DEPTH ? &t_frames[t_depth] : NULL;
	t_depth++;
	if (f)
		*f = (struct omp_frame){ seq, begin, 0, thread_num, nthreads, level, false };
	return f;
}

static inline void frame_pop(void)
{
	if (t_depth > 0)
		t_depth--;
}

/* The region a new one opened by this thread is nested in, and its
 * level. */
static inline void frame_parent(uint64_t *parent, uint16_t *level)
{
	struct omp_frame *f = frame_top();
	*parent = f ? f->seq : 0;
	*level = (uint16_t)(f ? f->level + 1 : t_depth + 1);
}

/* The fork, on the encountering thread: what the region's packet will
 * say of it. */
static void rec_fork(uint64_t seq, unsigned requested, uint64_t codeptr, uint64_t stack, unsigned flags)
{
	struct omp_region *r = &g_omp_regions[seq % OMP_REGIONS];
	frame_parent(&r->parent, &r->level);
	r->start_ns = fast_now_ns();
	r->codeptr = codeptr;
	r->stack_id = stack;
	r->requested = requested;
	r->flags = (uint16_t)flags;
}

/* A worker arrives at the closing barrier of its innermost region: its
 * part (whose end a reader sets to the team's last arrival). */
static void rec_arrive_worker(struct omp_frame *f, uint64_t t)
{
	f->arrive = t;
	f->written = true;
	struct sonde_omp_itask_packet p = { SONDE_PKT_OMP_ITASK, sizeof p, f->thread_num, f->seq, f->begin, t, t, 0 };
	rec_put(&p, sizeof p);
}

/* The join, on the master: the region, with its own part. */
static void rec_join(uint64_t seq, struct omp_frame *f, uint32_t nthreads)
{
	struct omp_region *r = &g_omp_regions[seq % OMP_REGIONS];
	uint64_t end = fast_now_ns();
	/* not recording (any more): a fork's child, whose parent's region
	 * this was; a stopped collection */
	if (atomic_load(&g_rec) != 1)
		return;
	if (atomic_load_explicit(&r->seq, memory_order_acquire) != seq)
		return; /* its record was taken by a later region: lost */
	if (!nthreads) { /* the old ABI's master ran fn itself */
		uint32_t n = atomic_load_explicit(&r->nthreads, memory_order_relaxed);
		nthreads = n < (1u << 30) ? n : 1;
	}
	uint64_t begin = f && f->begin ? f->begin : r->start_ns, arrive = f && f->arrive ? f->arrive : end;
	uint16_t flags = r->flags;
	uint64_t master = 0;
	if (begin >= r->start_ns && begin - r->start_ns <= UINT32_MAX && arrive <= end && end - arrive <= UINT32_MAX &&
	    begin <= arrive) {
		flags |= SONDE_OMPF_MASTER;
		master = (begin - r->start_ns) | (end - arrive) << 32;
	} else {
		struct sonde_omp_itask_packet m = { SONDE_PKT_OMP_ITASK, sizeof m, 0, seq, begin, arrive, end, 0 };
		rec_put(&m, sizeof m);
	}
	struct sonde_omp_region_packet p = {
		.type = SONDE_PKT_OMP_REGION,
		.size = sizeof p,
		.flags = flags,
		.level = r->level,
		.requested = r->requested,
		.nthreads = nthreads ? nthreads : 1,
		.region_id = seq,
		.parent_id = r->parent,
		.codeptr = r->codeptr,
		.start_ns = r->start_ns,
		.end_ns = end,
		.stack_id = r->stack_id,
		.master_part = master,
	};
	rec_put(&p, sizeof p);
}

static void rec_task(uint64_t region, uint64_t create, uint64_t begin, uint64_t stack, uint64_t codeptr)
{
	struct sonde_omp_task_packet p = {
		.type = SONDE_PKT_OMP_TASK,
		.size = sizeof p,
		.region_id = region,
		.create_ns = create,
		.begin_ns = begin,
		.end_ns = fast_now_ns(),
		.create_stack = stack,
		.codeptr = codeptr,
	};
	if (p.create_ns > p.begin_ns)
		p.create_ns = p.begin_ns;
	rec_put(&p, sizeof p);
}

/* ---- libgomp: parallel regions ---- */

typedef void gomp_fn(void *);

/* What the wrapped outlined function gets: the master's, on its stack,
 * which outlives every thread's run of fn (the master leaves the region
 * after the team's last barrier).  What the workers read, in a line of
 * its own; what the master writes when its part ends, in the next: the
 * master's store to a line the workers have read would wait for their
 * copies to go. */
struct region_ctx {
	gomp_fn *fn;
	void *data;
	uint64_t seq;
	/* the regions' record: on for this region; its level */
	bool rec, old_abi;
	uint16_t level;
	/* the master's part and the team's size, which region_body tells
	 * the join */
	uint32_t nthreads __attribute__((aligned(64)));
	struct omp_frame master;
} __attribute__((aligned(64)));

uint64_t __sonde_trace_stack_at(uint64_t ra, uint64_t cfa);
int omp_get_max_threads(void);
REAL_DECL(omp_get_max_threads);

int omp_get_num_threads(void);
int omp_get_thread_num(void);
REAL_DECL(omp_get_num_threads);
REAL_DECL(omp_get_thread_num);

static void region_body(void *arg)
{
	/* All a worker reads of the master's ctx is read before fn: the
	 * master writes its part into the ctx when its own fn returns, and a
	 * worker reading after that would take the line from it (measured:
	 * a cache miss a worker and region, a third of this function's
	 * time). */
	struct region_ctx *c = arg;
	const uint64_t seq = c->seq;
	const bool rec = c->rec;
	gomp_fn *const fn = c->fn;
	void *const data = c->data;
	struct omp_region *r = &g_omp_regions[seq % OMP_REGIONS];
	int (*nthreads)(void) = RESOLVE(omp_get_num_threads);
	int (*thread_num)(void) = RESOLVE(omp_get_thread_num);
	int n = nthreads ? nthreads() : 1, me = thread_num ? thread_num() : 0;
	/* The team's size, before the master's arrival (until then the
	 * region is not over whatever the count).  By the master, whose
	 * line the record is; in the old ABI the master never gets here,
	 * and the workers say it (one store, the others read). */
	uint32_t nt = (uint32_t)(n > 0 ? n : 1);
	if (me == 0)
		atomic_store_explicit(&r->nthreads, nt, memory_order_relaxed);
	else if (c->old_abi && atomic_load_explicit(&r->nthreads, memory_order_relaxed) != nt)
		atomic_store_explicit(&r->nthreads, nt, memory_order_relaxed);
	struct thread_slot *s = my_slot();
	struct omp_saved o = word_set(s, SONDE_STATE_OMP_WORK);
	struct omp_frame *f = frame_push(seq, (uint32_t)me, (uint32_t)n, c->level, rec ? fast_now_ns() : 0);
	fn(data);
	if (rec && f) {
		if (me)
			rec_arrive_worker(f, fast_now_ns());
		else {
			f->arrive = fast_now_ns();
			c->master = *f;
			c->nthreads = (uint32_t)n;
		}
	}
	frame_pop();
	if (me == 0) {
		/* the master waits at the barrier, arrived; its caller's word
		 * comes back when the real call returns */
		if (s) {
			atomic_store_explicit(&s->omp_region, seq, memory_order_relaxed);
			atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_BARRIER | OMP_W_ARRIVED,
					      memory_order_relaxed);
		}
		(void)o;
	} else if (s) {
		atomic_store_explicit(&s->omp_region, seq, memory_order_relaxed);
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_BARRIER | OMP_W_REGION_END,
				      memory_order_relaxed);
	}
}

/* The master is back from the region's closing barrier: its workers
 * waiting there are idle now (omp_state.c). */
static inline void region_over(uint64_t seq)
{
	struct omp_region *r = &g_omp_regions[seq % OMP_REGIONS];
	if (atomic_load_explicit(&r->seq, memory_order_relaxed) == seq)
		atomic_store_explicit(&r->over, 1, memory_order_relaxed);
}

/* A new region's record; its ctx. */
static void region_begin(struct region_ctx *c, gomp_fn *fn, void *data)
{
	c->fn = fn;
	c->data = data;
	c->rec = false;
	c->old_abi = false;
	c->nthreads = 0;
	c->master = (struct omp_frame){ 0 };
	c->seq = atomic_fetch_add(&g_region_seq.v, 1) + 1;
	struct omp_region *r = &g_omp_regions[c->seq % OMP_REGIONS];
	atomic_store_explicit(&r->nthreads, 1u << 30, memory_order_relaxed);
	atomic_store_explicit(&r->over, 0, memory_order_relaxed);
	atomic_store_explicit(&r->seq, c->seq, memory_order_release);
}

/* The fork's record (libgomp): the opening call's return address, the
 * master's stack there (cached per call site and caller's frame), the
 * threads asked for (0: the ICV's). */
static void gomp_fork(struct region_ctx *c, unsigned num_threads, uint64_t ra, uint64_t cfa)
{
	if (!rec_on())
		return;
	c->rec = true;
	if (!num_threads) {
		int (*max)(void) = RESOLVE(omp_get_max_threads);
		num_threads = max ? (unsigned)max() : 0;
	}
	rec_fork(c->seq, num_threads, ra, __sonde_trace_stack_at(ra, cfa), SONDE_OMPF_LIBGOMP);
	c->level = g_omp_regions[c->seq % OMP_REGIONS].level;
}

/* A parallel region's entry point: its fn wrapped, the master in
 * overhead until its own part starts, its word back after. */
#define GOMP_REGION(CALL_REAL, CALL_PLAIN)                                        \
	do {                                                                      \
		if (!gomp_first()) {                                              \
			CALL_PLAIN;                                               \
			break;                                                    \
		}                                                                 \
		struct region_ctx c_;                                             \
		region_begin(&c_, fn, data);                                      \
		gomp_fork(&c_, num_threads, (uint64_t)(uintptr_t)__builtin_return_address(0), \
			  (uint64_t)(uintptr_t)__builtin_dwarf_cfa());            \
		struct thread_slot *s_ = my_slot();                               \
		struct omp_saved o_ = word_set(s_, SONDE_STATE_OMP_OVERHEAD);     \
		CALL_REAL;                                                        \
		region_over(c_.seq);                                              \
		if (c_.rec)                                                       \
			rec_join(c_.seq, &c_.master, c_.nthreads);                \
		word_restore(s_, o_);                                             \
	} while (0)

void GOMP_parallel(gomp_fn *fn, void *data, unsigned num_threads, unsigned flags);
REAL_DECL(GOMP_parallel);
EXPORT void GOMP_parallel(gomp_fn *fn, void *data, unsigned num_threads, unsigned flags)
{
	void (*real)(gomp_fn *, void *, unsigned, unsigned) = RESOLVE(GOMP_parallel);
	GOMP_REGION(real(region_body, &c_, num_threads, flags), real(fn, data, num_threads, flags));
}

unsigned GOMP_parallel_reductions(gomp_fn *fn, void *data, unsigned num_threads, unsigned flags);
REAL_DECL(GOMP_parallel_reductions);
EXPORT unsigned GOMP_parallel_reductions(gomp_fn *fn, void *data, unsigned num_threads, unsigned flags)
{
	unsigned (*real)(gomp_fn *, void *, unsigned, unsigned) = RESOLVE(GOMP_parallel_reductions);
	unsigned r;
	GOMP_REGION(r = real(region_body, &c_, num_threads, flags), r = real(fn, data, num_threads, flags));
	return r;
}

void GOMP_parallel_sections(gomp_fn *fn, void *data, unsigned num_threads, unsigned count, unsigned flags);
REAL_DECL(GOMP_parallel_sections);
EXPORT void GOMP_parallel_sections(gomp_fn *fn, void *data, unsigned num_threads, unsigned count, unsigned flags)
{
	void (*real)(gomp_fn *, void *, unsigned, unsigned, unsigned) = RESOLVE(GOMP_parallel_sections);
	GOMP_REGION(real(region_body, &c_, num_threads, count, flags), real(fn, data, num_threads, count, flags));
}

/* The combined parallel loops: with a chunk size, and the runtime
 * schedule's without. */
#define GOMP_PLOOP(NAME)                                                                                         \
	void NAME(gomp_fn *fn, void *data, unsigned num_threads, long start, long end, long incr, long chunk,    \
		  unsigned flags);                                                                               \
	REAL_DECL(NAME);                                                                                         \
	EXPORT void NAME(gomp_fn *fn, void *data, unsigned num_threads, long start, long end, long incr,         \
			 long chunk, unsigned flags)                                                             \
	{                                                                                                        \
		void (*real)(gomp_fn *, void *, unsigned, long, long, long, long, unsigned) = RESOLVE(NAME);     \
		GOMP_REGION(real(region_body, &c_, num_threads, start, end, incr, chunk, flags),                 \
			    real(fn, data, num_threads, start, end, incr, chunk, flags));                        \
	}
#define GOMP_PLOOP_RT(NAME)                                                                                      \
	void NAME(gomp_fn *fn, void *data, unsigned num_threads, long start, long end, long incr, unsigned flags); \
	REAL_DECL(NAME);                                                                                         \
	EXPORT void NAME(gomp_fn *fn, void *data, unsigned num_threads, long start, long end, long incr,         \
			 unsigned flags)                                                                         \
	{                                                                                                        \
		void (*real)(gomp_fn *, void *, unsigned, long, long, long, unsigned) = RESOLVE(NAME);           \
		GOMP_REGION(real(region_body, &c_, num_threads, start, end, incr, flags),                         \
			    real(fn, data, num_threads, start, end, incr, flags));                               \
	}
GOMP_PLOOP(GOMP_parallel_loop_static)
GOMP_PLOOP(GOMP_parallel_loop_dynamic)
GOMP_PLOOP(GOMP_parallel_loop_guided)
GOMP_PLOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
GOMP_PLOOP(GOMP_parallel_loop_nonmonotonic_guided)
GOMP_PLOOP_RT(GOMP_parallel_loop_runtime)
GOMP_PLOOP_RT(GOMP_parallel_loop_nonmonotonic_runtime)
GOMP_PLOOP_RT(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* The old ABI (GCC before 4.9): the master runs fn itself between start
 * and end; one region per thread at a time (nesting starts another on a
 * worker, whose own TLS holds it). */
static TLS struct region_ctx *t_old_region;
static TLS struct omp_saved t_old_saved;

void GOMP_parallel_start(gomp_fn *fn, void *data, unsigned num_threads);
REAL_DECL(GOMP_parallel_start);
EXPORT void GOMP_parallel_start(gomp_fn *fn, void *data, unsigned num_threads)
{
	void (*real)(gomp_fn *, void *, unsigned) = RESOLVE(GOMP_parallel_start);
	struct region_ctx *c = gomp_first() && !t_old_region ? aligned_alloc(64, sizeof *c) : NULL;
	if (!c) {
		real(fn, data, num_threads);
		return;
	}
	region_begin(c, fn, data);
	c->old_abi = true;
	gomp_fork(c, num_threads, (uint64_t)(uintptr_t)__builtin_return_address(0),
		  (uint64_t)(uintptr_t)__builtin_dwarf_cfa());
	t_old_region = c;
	t_old_saved = word_set(my_slot(), SONDE_STATE_OMP_WORK);
	real(region_body, c, num_threads);
}

void GOMP_parallel_end(void);
REAL_DECL(GOMP_parallel_end);
EXPORT void GOMP_parallel_end(void)
{
	void (*real)(void) = RESOLVE(GOMP_parallel_end);
	struct region_ctx *c = t_old_region;
	if (!c) {
		real();
		return;
	}
	struct thread_slot *s = my_slot();
	if (s) { /* the master arrives at the closing barrier */
		atomic_store_explicit(&s->omp_region, c->seq, memory_order_relaxed);
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_BARRIER | OMP_W_ARRIVED, memory_order_relaxed);
	}
	real();
	region_over(c->seq);
	if (c->rec)
		rec_join(c->seq, &c->master, c->nthreads);
	t_old_region = NULL;
	word_restore(my_slot(), t_old_saved);
	free(c);
}

/* ---- libgomp: waits ---- */

#define GOMP_VOID_WAIT(NAME, state)                          \
	void NAME(void);                                     \
	REAL_DECL(NAME);                                     \
	EXPORT void NAME(void)                               \
	{                                                    \
		void (*real)(void) = RESOLVE(NAME);          \
		GOMP_WAIT(state, real());                    \
	}
#define GOMP_BOOL_WAIT(NAME, state)                          \
	bool NAME(void);                                     \
	REAL_DECL(NAME);                                     \
	EXPORT bool NAME(void)                               \
	{                                                    \
		bool (*real)(void) = RESOLVE(NAME);          \
		bool r;                                      \
		GOMP_WAIT(state, r = real());                \
		return r;                                    \
	}
#define GOMP_PTR_WAIT(NAME, state)                           \
	void NAME(void *p);                                  \
	REAL_DECL(NAME);                                     \
	EXPORT void NAME(void *p)                            \
	{                                                    \
		void (*real)(void *) = RESOLVE(NAME);        \
		GOMP_WAIT(state, real(p));                   \
	}

GOMP_VOID_WAIT(GOMP_barrier, SONDE_STATE_OMP_BARRIER)
GOMP_BOOL_WAIT(GOMP_barrier_cancel, SONDE_STATE_OMP_BARRIER)
GOMP_VOID_WAIT(GOMP_loop_end, SONDE_STATE_OMP_BARRIER)
GOMP_BOOL_WAIT(GOMP_loop_end_cancel, SONDE_STATE_OMP_BARRIER)
GOMP_VOID_WAIT(GOMP_sections_end, SONDE_STATE_OMP_BARRIER)
GOMP_BOOL_WAIT(GOMP_sections_end_cancel, SONDE_STATE_OMP_BARRIER)
GOMP_VOID_WAIT(GOMP_critical_start, SONDE_STATE_OMP_LOCK)
GOMP_PTR_WAIT(GOMP_critical_name_start, SONDE_STATE_OMP_LOCK)
GOMP_VOID_WAIT(GOMP_atomic_start, SONDE_STATE_OMP_LOCK)
GOMP_VOID_WAIT(GOMP_ordered_start, SONDE_STATE_OMP_LOCK)
GOMP_VOID_WAIT(GOMP_taskwait, SONDE_STATE_OMP_TASKWAIT)
GOMP_VOID_WAIT(GOMP_taskgroup_end, SONDE_STATE_OMP_TASKWAIT)
GOMP_PTR_WAIT(omp_set_lock, SONDE_STATE_OMP_LOCK)
GOMP_PTR_WAIT(omp_set_nest_lock, SONDE_STATE_OMP_LOCK)

/* ---- libgomp: tasks ---- */

/* A task's data, as libgomp copies it: this header, then the program's
 * data at `off` (aligned as the program asked).  The wrapper runs the
 * program's fn on it as work and puts the thread's word back after (the
 * task may run in a taskwait, a barrier, or where it was created). */
struct task_hdr {
	gomp_fn *fn;
	void (*cpyfn)(void *, void *);
	void *src; /* the program's data, while GOMP_task copies it */
	long off;
	/* the regions' record: its creation (0: not recorded), the creating
	 * thread's stack and region */
	uint64_t create_ns, stack, region;
};

static void task_body(void *arg)
{
	struct task_hdr *h = arg;
	struct thread_slot *s = my_slot();
	struct omp_saved o = word_set(s, SONDE_STATE_OMP_WORK);
	uint64_t begin = h->create_ns ? fast_now_ns() : 0;
	h->fn((char *)arg + h->off);
	if (begin && rec_on())
		rec_task(h->region, h->create_ns, begin, h->stack, (uint64_t)(uintptr_t)h->fn);
	word_restore(s, o);
}

/* libgomp's copy of a task with a copy function (firstprivate objects):
 * the header, then the program's copy from the program's data. */
static void task_copy(void *dst, void *src)
{
	struct task_hdr *h = src;
	memcpy(dst, h, sizeof *h);
	h->cpyfn((char *)dst + h->off, h->src);
}

void GOMP_task(gomp_fn *fn, void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
	       bool if_clause, unsigned flags, void **depend, int priority, void *detach);
REAL_DECL(GOMP_task);
EXPORT void GOMP_task(gomp_fn *fn, void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
		      bool if_clause, unsigned flags, void **depend, int priority, void *detach)
{
	void (*real)(gomp_fn *, void *, void (*)(void *, void *), long, long, bool, unsigned, void **, int,
		     void *) = RESOLVE(GOMP_task);
	long align = arg_align > (long)_Alignof(struct task_hdr) ? arg_align : (long)_Alignof(struct task_hdr);
	long off = ((long)sizeof(struct task_hdr) + align - 1) / align * align;
	/* a task's data is small (its shared variables' addresses and
	 * firstprivate values); past 64 KiB it goes unwrapped rather than
	 * on the stack */
	if (!gomp_first() || arg_size < 0 || arg_size > 65536 || align > 4096) {
		real(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
		return;
	}
	char buf[off + arg_size + align];
	char *p = (char *)(((uintptr_t)buf + (uintptr_t)align - 1) / (uintptr_t)align * (uintptr_t)align);
	struct task_hdr *h = (struct task_hdr *)p;
	h->fn = fn;
	h->cpyfn = cpyfn;
	h->src = data;
	h->off = off;
	h->create_ns = 0;
	if (rec_on()) {
		struct omp_frame *f = frame_top();
		h->create_ns = fast_now_ns();
		h->stack = __sonde_trace_stack_at((uint64_t)(uintptr_t)__builtin_return_address(0),
						  (uint64_t)(uintptr_t)__builtin_dwarf_cfa());
		h->region = f ? f->seq : 0;
	}
	if (!cpyfn && arg_size)
		memcpy(p + off, data, (size_t)arg_size);
	real(task_body, p, cpyfn ? task_copy : NULL, off + arg_size, align, if_clause, flags, depend, priority,
	     detach);
}

/* ---- libomp: the OMPT tool (OpenMP 5.0's interface, declared here: no
 * build needs omp-tools.h) ---- */

typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *name);
typedef union {
	uint64_t value;
	void *ptr;
} ompt_data_t;
typedef int (*ompt_initialize_t)(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data);
typedef void (*ompt_finalize_t)(ompt_data_t *tool_data);
typedef struct {
	ompt_initialize_t initialize;
	ompt_finalize_t finalize;
	ompt_data_t tool_data;
} ompt_start_tool_result_t;
typedef ompt_start_tool_result_t *ompt_start_tool_t(unsigned int omp_version, const char *runtime_version);
typedef int (*ompt_set_callback_t)(int event, void (*callback)(void));
typedef struct {
	ompt_data_t exit_frame, enter_frame;
	int exit_frame_flags, enter_frame_flags;
} ompt_frame_t;

enum {
	OMPT_CB_PARALLEL_BEGIN = 3,
	OMPT_CB_PARALLEL_END = 4,
	OMPT_CB_TASK_CREATE = 5,
	OMPT_CB_TASK_SCHEDULE = 6,
	OMPT_CB_IMPLICIT_TASK = 7,
	OMPT_TASK_EXPLICIT = 4,
	OMPT_CB_SYNC_REGION_WAIT = 16,
	OMPT_CB_MUTEX_ACQUIRE = 26,
	OMPT_CB_MUTEX_ACQUIRED = 27,
	OMPT_SCOPE_BEGIN = 1,
	OMPT_SCOPE_END = 2,
	OMPT_SYNC_TASKWAIT = 5,
	OMPT_SYNC_TASKGROUP = 6,
	OMPT_SYNC_REDUCTION = 7,
	OMPT_TASK_INITIAL = 1,
	OMPT_SET_SOMETIMES = 3,
	OMPT_FRAME_CFA = 0x10,
	OMPT_FRAME_FRAMEPOINTER = 0x20,
	OMPT_FRAME_KIND = 0x30,
};

/* The CFA of the runtime's entry frame that the program called (the one
 * returning to the callback's codeptr), from the encountering task's
 * enter frame; 0 when the runtime gives none or not as a CFA or a frame
 * pointer.  A wrong value costs nothing but a cache miss: the stack cache
 * takes it only once a walk has found that frame there. */
static uint64_t ompt_enter_cfa(const void *frame)
{
	const ompt_frame_t *f = frame;
	if (!f || !f->enter_frame.ptr)
		return 0;
	uint64_t a = (uint64_t)(uintptr_t)f->enter_frame.ptr;
	switch (f->enter_frame_flags & OMPT_FRAME_KIND) {
	case OMPT_FRAME_CFA:
		return a;
	case 0: /* libomp 14 says nothing: its __builtin_frame_address(0) */
	case OMPT_FRAME_FRAMEPOINTER:
		return a + 16; /* the saved frame pointer, the return address */
	default:
		return 0;
	}
}

/* The callbacks that keep the words (omp.h): each region gets a record
 * (parallel_begin and _end, on the thread that opens it: once per region)
 * and each thread the region it takes part in (implicit_task, once per
 * thread and region), which tells a worker idle from one in the region's
 * barrier; an explicit task's run (task_create, task_schedule: twice a
 * task); a wait's cause from its begin to its end (sync_region_wait:
 * libomp has no state of its own for a taskwait; and for the off-CPU
 * sampler, which cannot ask ompt_get_state about another thread, also the
 * barriers and, with -w, the mutexes). */
/* The regions' record through OMPT: parallel_begin records the fork (its
 * stack from the opening call's return address, below libomp's frames),
 * implicit_task's begin starts a thread's part, the last implicit
 * barrier's wait before the part ends is its arrival (a worker's join
 * barrier is the one libomp 14 calls with no codeptr: a worker writes its
 * part there), and parallel_end is the join.  A worker's implicit_task
 * end comes only at the next region's fork, too late to be its end (the
 * regions' record above). */
#define OMPT_PARALLEL_LEAGUE 0x40000000
/* A region's tool data: its seq, and its level above that, which the
 * team's threads take from there at their implicit task's begin.  Read
 * from the region's record, the level cost each worker and region a miss
 * on the line its master had just written, on the way into its part: a
 * quarter of what the states cost libomp's short regions (bench/obs:
 * regions of 7 us on 2 threads, +13.4-14.4% with the states, +7.6-11%
 * without that read). */
#define PAR_LEVEL_SHIFT 48
#define PAR_SEQ(v) ((v) & ((1ull << PAR_LEVEL_SHIFT) - 1))
static void cb_parallel_begin(ompt_data_t *task, const void *frame, ompt_data_t *parallel, unsigned n, int flags,
			      const void *ra)
{
	(void)task;
	struct region_ctx c;
	region_begin(&c, NULL, NULL);
	uint64_t parent;
	uint16_t level;
	frame_parent(&parent, &level);
	parallel->value = c.seq | (uint64_t)level << PAR_LEVEL_SHIFT;
	if (rec_on())
		rec_fork(c.seq, n, (uint64_t)(uintptr_t)ra,
			 trace_stack_from((uint64_t)(uintptr_t)ra, ompt_enter_cfa(frame)),
			 SONDE_OMPF_LIBOMP | (flags & OMPT_PARALLEL_LEAGUE ? SONDE_OMPF_TEAMS : 0));
}

static void cb_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags, const void *ra)
{
	(void)task, (void)flags, (void)ra;
	uint64_t seq = PAR_SEQ(parallel->value);
	struct omp_region *r = &g_omp_regions[seq % OMP_REGIONS];
	struct omp_frame *f = frame_top();
	if (f && f->seq != seq)
		f = NULL;
	if (seq && atomic_load(&r->seq) == seq) {
		if (atomic_load_explicit(&g_rec, memory_order_relaxed) == 1)
			rec_join(seq, f, f ? f->nthreads : 1);
		atomic_store_explicit(&r->over, 1, memory_order_relaxed);
	}
	if (f)
		frame_pop();
}

/* Explicit tasks: work while one runs (in a taskwait or a barrier too),
 * the thread's word back when it switches back to a task that is not
 * one.  A task's tool data marks it explicit (task_create). */
#define TASK_MARK 0x5eadull
#define TASK_OURS(v) ((v) >> 48 == TASK_MARK)
static TLS uint32_t t_task_saved;
static TLS int t_in_task;

/* Explicit tasks' record: a ring of the latest created, each a task's
 * creation until the thread that runs it ends it (a task whose record a
 * later one took is not recorded).  The tool data holds the mark and the
 * task's number. */
#define OMP_TASKS 4096
static struct omp_task_rec {
	_Atomic uint64_t seq;
	uint64_t create_ns, begin_ns, stack, region, codeptr;
} g_task_recs[OMP_TASKS];
static _Atomic uint64_t g_task_seq;
enum { OMPT_TASK_COMPLETE = 1, OMPT_TASK_CANCEL = 3 };

static void cb_task_create(ompt_data_t *enc, const void *frame, ompt_data_t *task, int flags, int deps,
			   const void *ra)
{
	(void)enc, (void)deps;
	if (!(flags & OMPT_TASK_EXPLICIT))
		return;
	uint64_t seq = (atomic_fetch_add_explicit(&g_task_seq, 1, memory_order_relaxed) + 1) & 0xffffffffffffull;
	task->value = TASK_MARK << 48 | seq;
	if (!rec_on())
		return;
	struct omp_task_rec *t = &g_task_recs[seq % OMP_TASKS];
	struct omp_frame *f = frame_top();
	atomic_store_explicit(&t->seq, 0, memory_order_relaxed);
	t->create_ns = fast_now_ns();
	t->begin_ns = 0;
	t->stack = trace_stack_from((uint64_t)(uintptr_t)ra, ompt_enter_cfa(frame));
	t->region = f ? f->seq : 0;
	t->codeptr = (uint64_t)(uintptr_t)ra;
	atomic_store_explicit(&t->seq, seq, memory_order_release);
}

static struct omp_task_rec *task_rec(const ompt_data_t *d)
{
	if (!d || !TASK_OURS(d->value))
		return NULL;
	uint64_t seq = d->value & 0xffffffffffffull;
	struct omp_task_rec *t = &g_task_recs[seq % OMP_TASKS];
	return atomic_load_explicit(&t->seq, memory_order_acquire) == seq ? t : NULL;
}

static void cb_task_schedule(ompt_data_t *prior, int prior_status, ompt_data_t *next)
{
	if (atomic_load_explicit(&g_rec, memory_order_relaxed) == 1) {
		struct omp_task_rec *t;
		if ((prior_status == OMPT_TASK_COMPLETE || prior_status == OMPT_TASK_CANCEL) &&
		    (t = task_rec(prior)) && t->begin_ns && rec_on()) {
			rec_task(t->region, t->create_ns, t->begin_ns, t->stack, t->codeptr);
			atomic_store_explicit(&t->seq, 0, memory_order_relaxed);
		}
		if ((t = task_rec(next)) && !t->begin_ns)
			t->begin_ns = fast_now_ns();
	}
	struct thread_slot *s = my_slot();
	if (!s)
		return;
	if (next && TASK_OURS(next->value)) {
		if (!t_in_task)
			t_task_saved = atomic_load_explicit(&s->omp_state, memory_order_relaxed);
		t_in_task = 1;
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_WORK, memory_order_relaxed);
	} else if (t_in_task) {
		t_in_task = 0;
		atomic_store_explicit(&s->omp_state, t_task_saved, memory_order_relaxed);
	}
}

enum { OMPT_SYNC_BARRIER_IMPLICIT = 2, OMPT_SYNC_BARRIER_IMPLICIT_PARALLEL = 9 };

static void cb_sync_wait(int kind, int endpoint, ompt_data_t *parallel, ompt_data_t *task, const void *ra)
{
	(void)parallel, (void)task;
	struct omp_frame *f;
	if (endpoint == OMPT_SCOPE_BEGIN &&
	    (kind == OMPT_SYNC_BARRIER_IMPLICIT || kind == OMPT_SYNC_BARRIER_IMPLICIT_PARALLEL) &&
	    (f = frame_top()) && !f->written) {
		f->arrive = fast_now_ns();
		if (f->thread_num && (!ra || kind == OMPT_SYNC_BARRIER_IMPLICIT_PARALLEL) &&
		    atomic_load_explicit(&g_rec, memory_order_relaxed) == 1 && rec_on())
			rec_arrive_worker(f, f->arrive);
	}
	struct thread_slot *s = my_slot();
	if (!s)
		return;
	uint32_t st = kind == OMPT_SYNC_TASKWAIT || kind == OMPT_SYNC_TASKGROUP ? SONDE_STATE_OMP_TASKWAIT
		      : kind == OMPT_SYNC_REDUCTION				   ? SONDE_STATE_OMP_WORK
						     : SONDE_STATE_OMP_BARRIER | OMP_W_REGION_END;
	atomic_store_explicit(&s->omp_state, endpoint == OMPT_SCOPE_BEGIN ? st : SONDE_STATE_OMP_WORK,
			      memory_order_relaxed);
}

static TLS uint64_t t_lock_begin;

static void cb_mutex_acquire(int kind, unsigned hint, unsigned impl, uint64_t wait_id, const void *ra)
{
	(void)kind, (void)hint, (void)impl, (void)wait_id, (void)ra;
	struct thread_slot *s = my_slot();
	if (s) {
		t_lock_begin = wait_begin(s, SONDE_STATE_OMP_WORK);
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_LOCK, memory_order_relaxed);
	}
}

static void cb_mutex_acquired(int kind, uint64_t wait_id, const void *ra)
{
	(void)kind, (void)wait_id, (void)ra;
	struct thread_slot *s = my_slot();
	if (s) {
		wait_done(s, t_lock_begin, SONDE_STATE_OMP_WORK, SONDE_STATE_OMP_LOCK, NULL);
		t_lock_begin = 0;
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_WORK, memory_order_relaxed);
	}
}

static void cb_implicit_task(int endpoint, ompt_data_t *parallel, ompt_data_t *task, unsigned n, unsigned index,
			     int flags)
{
	(void)task;
	if (flags & OMPT_TASK_INITIAL)
		return;
	if (endpoint == OMPT_SCOPE_BEGIN) {
		uint64_t v = parallel ? parallel->value : 0;
		struct omp_frame *top = frame_top();
		uint16_t level = (uint16_t)(v >> PAR_LEVEL_SHIFT);
		if (!level) /* a region the tool did not see begin */
			level = (uint16_t)(top ? top->level + 1 : 1);
		frame_push(PAR_SEQ(v), index, n, level, fast_now_ns());
	} else {
		/* a worker's, at the next fork; the master's part ends at
		 * parallel_end, which pops it */
		struct omp_frame *f = frame_top();
		if (f && f->thread_num) {
			if (!f->written && atomic_load_explicit(&g_rec, memory_order_relaxed) == 1 && rec_on())
				rec_arrive_worker(f, f->arrive ? f->arrive : fast_now_ns());
			frame_pop();
		} else if (!f && t_depth > 0)
			frame_pop();
	}
	struct thread_slot *s = my_slot();
	/* its end: libomp may say it only at the next region's fork */
	if (!s || endpoint != OMPT_SCOPE_BEGIN)
		return;
	atomic_store_explicit(&s->omp_region, parallel ? PAR_SEQ(parallel->value) : 0, memory_order_relaxed);
	atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_WORK, memory_order_relaxed);
}

static int ompt_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
	(void)device, (void)data;
	omp_get_state_fn *get = (omp_get_state_fn *)lookup("ompt_get_state");
	if (!get) {
		log_event_text("warning", "OpenMP states: the runtime's OMPT interface has no ompt_get_state; "
					  "samples carry no OpenMP state");
		return 0;
	}
	atomic_store(&g_runtime, 2);
	atomic_store(&g_omp_get_state, get);
	/* The callbacks of regions and waits (above): a call per region and
	 * thread, and per barrier or taskwait.  The mutexes' (a call per lock
	 * taken): for the off-CPU sampler, which cannot ask ompt_get_state
	 * about another thread, and for the long waits' record (wait_done).
	 * Later views of regions add theirs here. */
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	int ok = set && set(OMPT_CB_PARALLEL_BEGIN, (void (*)(void))cb_parallel_begin) >= OMPT_SET_SOMETIMES &&
		 set(OMPT_CB_PARALLEL_END, (void (*)(void))cb_parallel_end) >= OMPT_SET_SOMETIMES &&
		 set(OMPT_CB_IMPLICIT_TASK, (void (*)(void))cb_implicit_task) >= OMPT_SET_SOMETIMES &&
		 set(OMPT_CB_SYNC_REGION_WAIT, (void (*)(void))cb_sync_wait) >= OMPT_SET_SOMETIMES &&
		 set(OMPT_CB_TASK_CREATE, (void (*)(void))cb_task_create) >= OMPT_SET_SOMETIMES &&
		 set(OMPT_CB_TASK_SCHEDULE, (void (*)(void))cb_task_schedule) >= OMPT_SET_SOMETIMES;
	if (ok && (atomic_load(&g_offcpu) || g_wait_flush_ns))
		ok = set(OMPT_CB_MUTEX_ACQUIRE, (void (*)(void))cb_mutex_acquire) >= OMPT_SET_SOMETIMES &&
		     set(OMPT_CB_MUTEX_ACQUIRED, (void (*)(void))cb_mutex_acquired) >= OMPT_SET_SOMETIMES;
	if (ok)
		atomic_store(&g_omp_words, 1);
	else
		log_event_text("warning", "OpenMP states: the runtime refused OMPT's region and wait callbacks; "
					  "idle workers count as barrier waits, taskwaits as work, and off-CPU "
					  "samples carry no OpenMP wait");
	omp_register();
	return 1;
}

static void ompt_fini(ompt_data_t *data)
{
	(void)data;
	atomic_store(&g_omp_get_state, NULL);
}

static ompt_start_tool_result_t g_tool = { ompt_init, ompt_fini, { 0 } };

EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
	/* A tool of the user's further down the lookup order (a library the
	 * program links; the runtime's own fallback answers NULL): it wins
	 * when it accepts. */
	ompt_start_tool_t *next = (ompt_start_tool_t *)dlsym(RTLD_NEXT, "ompt_start_tool");
	if (next && next != ompt_start_tool) {
		ompt_start_tool_result_t *r = next(omp_version, runtime_version);
		if (r) {
			atomic_store(&g_user_tool, 1);
			atomic_store(&g_on, 0);
			return r;
		}
	}
	/* OMP_TOOL_LIBRARIES: the runtime loads the user's tools when no
	 * tool in the process accepted. */
	const char *libs = getenv("OMP_TOOL_LIBRARIES");
	if (libs && *libs) {
		atomic_store(&g_user_tool, 2);
		atomic_store(&g_on, 0);
		return NULL;
	}
	if (atomic_load(&g_on) < 0)
		atomic_store(&g_on, omp_on());
	return atomic_load(&g_on) == 1 ? &g_tool : NULL;
}

/* ---- the module (collector.h) ---- */

static void omp_open(struct clock_settings *cs)
{
	const char *v = sonde_getenv(SONDE_ENV_OMP);
	bool off = v && (!strcmp(v, "0") || !strcmp(v, "off"));
	/* a tool of the user's decided before the collector opened */
	if (atomic_load(&g_user_tool))
		off = true;
	atomic_store(&g_on, cs->interval_ns && !off ? 1 : 0);
	atomic_store(&g_offcpu, offcpu_interval_ns() != 0);
	g_wait_flush_ns = cs->interval_ns && !off ? cs->interval_ns : 0;
}

static void omp_end(struct xbuf *b)
{
	(void)b;
	int rt = atomic_load(&g_runtime), user = atomic_load(&g_user_tool);
	if (g_omp_df) {
		dfile_end_errors(g_omp_df);
		uint64_t lost = dfile_lost(g_omp_df);
		if (lost && !dfile_grow_errno(g_omp_df)) {
			char msg[160];
			snprintf(msg, sizeof msg, "OpenMP regions: %llu writes of the regions' record were lost",
				 (unsigned long long)lost);
			log_event_text("error", msg);
		}
	}
	if (user)
		log_event_text("info", user == 1 ? "OpenMP states: off, the program's own OMPT tool (ompt_start_tool) "
						   "is active"
						 : "OpenMP states: off, OMP_TOOL_LIBRARIES names the program's OMPT tools");
	else if (rt == 2)
		log_event_text("info", "OpenMP states: from OMPT (ompt_get_state)");
	else if (rt == 1 && atomic_load(&g_on) == 1)
		log_event_text("info", "OpenMP states: from libgomp's entry points (GOMP_*)");
}

static void omp_fork_child(void)
{
	/* the child's one thread has another tid: find its slot again */
	t_looked = 0;
	t_slot = NULL;
	/* the parent's file is not the child's: a followed child makes its
	 * own at its first region */
	if (g_omp_df)
		dfile_forget(g_omp_df);
	g_omp_df = NULL;
	/* the stages are the parent's threads' (the memory stays, a copy) */
	memset(g_stages, 0, sizeof g_stages);
	t_stage = NULL;
	t_stage_looked = 0;
	atomic_store(&g_rec, 0);
	atomic_store(&g_rec_lock, 0);
	t_depth = 0;
}

static void omp_stop(void)
{
	stages_write_all();
	if (atomic_load(&g_rec) == 1)
		atomic_store(&g_rec, -1);
}

static void omp_finish(void)
{
	if (g_omp_df)
		dfile_finish(g_omp_df);
}

const struct collector_module omp_module = {
	.name = "omp",
	.open = omp_open,
	.stop = omp_stop,
	.end = omp_end,
	.finish = omp_finish,
	.fork_child = omp_fork_child,
	.thread_end = omp_thread_end,
	.exec_prepare = stages_write_all,
};
