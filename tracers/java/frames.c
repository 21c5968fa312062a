/*
 * The Java agent's stack source (java.h, agent.c): at each clock and
 * counter sample of a Java thread, its Java frames from
 * AsyncGetCallTrace, which replace the native frames from the first one
 * in the JVM's code cache to the root (the native unwinder cannot walk
 * compiled Java code; the frames above it, a JNI method's C code or the
 * JVM's runtime, stay).  The native walk crosses the code cache to the
 * call stub (agent.c, jit_region), so a Java method that C called back
 * through JNI has the C frames below it: those between two runs of the
 * code cache are kept between the Java frames of each run.  Async-signal-safe, on tests/t00-asyncsafe.sh's
 * list: loads of the tables agent.c fills, AsyncGetCallTrace (made for a
 * signal handler), stores into the handler's arrays.  The Java threads
 * by tid live here too: the handler reads them, agent.c writes them.
 */
#define _GNU_SOURCE
#include "java.h"

const char *const java_reasons[JAVA_NREASONS] = {
	"no Java frame",	 "no class loaded",	"GC active",	"in unknown native code",
	"not walkable (native)", "in unknown Java code", "not walkable (Java)", "unknown thread state",
	"thread exiting",	 "deoptimising",	"at a safepoint",	"other",
};

asgct_fn *java_asgct;
_Atomic uint64_t java_walks, java_walked, java_failed[JAVA_NREASONS];
_Atomic uint64_t java_code_lo = UINT64_MAX, java_code_hi;
_Atomic uint64_t java_interp_lo, java_interp_hi;
_Atomic uint64_t java_nm_lo[JAVA_NMHEAPS], java_nm_hi[JAVA_NMHEAPS];
_Atomic int java_nmheaps, java_interp_only;
struct java_nmlook java_nm;
_Atomic int java_nm_at;

/* Open addressing by tid; a slot's tid, once set, stays (a thread that
 * ends clears its env; a later thread with its tid takes the slot
 * back). */
#define NTHREADS 8192
static struct jthread {
	_Atomic int32_t tid;
	_Atomic(JNIEnv *) env;
} g_threads[NTHREADS];

void java_thread_set(pid_t tid, JNIEnv *env)
{
	uint32_t h = (uint32_t)tid * 2654435761u;
	for (uint32_t i = 0; i < NTHREADS; i++) {
		struct jthread *t = &g_threads[(h + i) & (NTHREADS - 1)];
		int32_t cur = atomic_load_explicit(&t->tid, memory_order_acquire);
		if (cur == 0) {
			if (!env)
				return; /* clearing a thread never set */
			int32_t zero = 0;
			if (!atomic_compare_exchange_strong(&t->tid, &zero, tid) && zero != tid)
				continue;
			cur = tid;
		}
		if (cur == tid) {
			atomic_store_explicit(&t->env, env, memory_order_release);
			return;
		}
	}
}

static JNIEnv *thread_env(pid_t tid)
{
	uint32_t h = (uint32_t)tid * 2654435761u;
	for (uint32_t i = 0; i < NTHREADS; i++) {
		const struct jthread *t = &g_threads[(h + i) & (NTHREADS - 1)];
		int32_t cur = atomic_load_explicit(&t->tid, memory_order_acquire);
		if (cur == tid)
			return atomic_load_explicit(&t->env, memory_order_acquire);
		if (cur == 0)
			return NULL;
	}
	return NULL;
}

static inline int in_code_cache(uint64_t pc)
{
	pc &= ~SONDE_PC_EXACT;
	return pc >= atomic_load_explicit(&java_code_lo, memory_order_relaxed) &&
	       pc < atomic_load_explicit(&java_code_hi, memory_order_relaxed);
}

/* The native frames between the code cache's runs of s->pcs (from at),
 * put between the Java frames of each: the Java frames fr[0, n) (in out
 * already) split before each native method's frame (a JNI method: the
 * run it called C from begins with its wrapper) but the first; the
 * runs, native frames from the leaf, end with the call stub's.  Only when
 * they pair one to one: a VM's call into Java (class loading, a static
 * initialiser) makes a run with no native method's frame to split at,
 * and then the Java frames are kept together, as without the crossing.
 * The frames now in out: n, or more.  Async-signal-safe. */
static int interleave(const struct sonde_hook_sample *s, int at, const asgct_frame *fr, int n,
		      struct sonde_hook_frame *out, int max)
{
	enum { MAXSEG = 32 };
	int rb[MAXSEG], re[MAXSEG], sb[MAXSEG], nr = 0, ns = 0;
	for (int k = at; k < s->npcs;) {
		if (!in_code_cache(s->pcs[k])) {
			k++;
			continue;
		}
		if (nr == MAXSEG)
			return n;
		rb[nr] = k;
		while (k < s->npcs && in_code_cache(s->pcs[k]))
			k++;
		re[nr++] = k;
	}
	for (int i = 0; i < n; i++)
		if (i == 0 || fr[i].lineno == -3) {
			if (ns == MAXSEG)
				return n;
			sb[ns++] = i;
		}
	if (nr < 2 || nr != ns)
		return n;
	int extra = 0;
	for (int r = 0; r + 1 < nr; r++)
		extra += rb[r + 1] - re[r];
	if (n + extra > max)
		return n;
	/* from the root end, so that each Java segment moves once */
	int to = n + extra;
	for (int r = nr - 1; r >= 0; r--) {
		int len = (r + 1 < ns ? sb[r + 1] : n) - sb[r];
		to -= len;
		__builtin_memmove(out + to, out + sb[r], (size_t)len * sizeof *out);
		if (r > 0) {
			int m = rb[r] - re[r - 1];
			to -= m;
			for (int j = 0; j < m; j++)
				out[to + j] = (struct sonde_hook_frame){ s->pcs[re[r - 1] + j], SONDE_FRAME_NATIVE, 0, 0, 0 };
		}
	}
	return n + extra;
}

/* The compiled method whose code in heap h holds pc: its Method* and
 * compilation level; 0 when none is found.  Only loads, each inside the
 * heap's committed part (a block being freed meanwhile reads as another
 * or none, never out of it). */
static int nmethod_at(int h, uint64_t pc, uint64_t *method, int *level)
{
	const struct java_nmlook *L = &java_nm;
	uint64_t lo = atomic_load_explicit(&java_nm_lo[h], memory_order_relaxed);
	uint64_t high = *(const volatile uint64_t *)(uintptr_t)(L->heap[h] + (uint64_t)L->high_off);
	if (pc < lo || pc >= high)
		return 0;
	const volatile uint8_t *map = (const volatile uint8_t *)(uintptr_t)L->segmap[h];
	uint64_t idx = (pc - lo) >> L->log2_seg;
	for (int k = 0; k < 4096; k++) {
		uint8_t d = map[idx];
		if (d == 0xff || d > idx)
			return 0;
		if (!d)
			break;
		idx -= d;
	}
	if (map[idx])
		return 0;
	uint64_t block = lo + (idx << L->log2_seg), blob = block + (uint64_t)L->block_hdr;
	if (blob + (uint64_t)L->blob_size > high || !*(const volatile uint8_t *)(uintptr_t)(block + (uint64_t)L->used_off))
		return 0;
	uint64_t cb = *(const volatile uint64_t *)(uintptr_t)(blob + (uint64_t)L->code_begin),
		 ce = *(const volatile uint64_t *)(uintptr_t)(blob + (uint64_t)L->code_end);
	if (pc < cb || pc >= ce)
		return 0;
	*method = *(const volatile uint64_t *)(uintptr_t)(blob + (uint64_t)L->method);
	*level = *(const volatile int32_t *)(uintptr_t)(blob + (uint64_t)L->level);
	return *method != 0;
}

/* The kinds of the top Java frames fr[0, n) from the code address pc
 * they were at (the sample's first address in the code cache):
 * interpreted in the interpreter's code; in a heap of compiled methods,
 * the method whose code it is (found by its Method*, which a jmethodID
 * points to) is compiled, by C1 or C2, and the frames above it inlined
 * into it (all of them compiled, when it is not found); and
 * SONDE_FRAME_JAVA elsewhere (a stub, an adapter, a heap that mixes
 * stubs and methods), then for the others too. */
static void top_kinds(uint64_t pc, const asgct_frame *fr, int n, struct sonde_hook_frame *out)
{
	pc &= ~SONDE_PC_EXACT;
	if (pc >= atomic_load_explicit(&java_interp_lo, memory_order_relaxed) &&
	    pc < atomic_load_explicit(&java_interp_hi, memory_order_relaxed)) {
		out[0].kind = SONDE_FRAME_JAVA_INTERP;
		return;
	}
	int nh = atomic_load_explicit(&java_nmheaps, memory_order_acquire);
	for (int h = 0; h < nh && h < JAVA_NMHEAPS; h++) {
		if (pc < atomic_load_explicit(&java_nm_lo[h], memory_order_relaxed) ||
		    pc >= atomic_load_explicit(&java_nm_hi[h], memory_order_relaxed))
			continue;
		uint64_t m = 0;
		int level = 0;
		if (atomic_load_explicit(&java_nm_at, memory_order_acquire) && nmethod_at(h, pc, &m, &level))
			for (int i = 0; i < n && fr[i].lineno != -3; i++) {
				const volatile uint64_t *id = (const volatile uint64_t *)(uintptr_t)fr[i].method_id;
				if (!id || *id != m)
					continue;
				for (int j = 0; j < i; j++)
					out[j].kind = SONDE_FRAME_JAVA_INLINED;
				out[i].kind = level >= 1 && level <= 3 ? SONDE_FRAME_JAVA_COMPILED_C1 : SONDE_FRAME_JAVA_COMPILED;
				return;
			}
		if (!java_nm.mixed)
			out[0].kind = SONDE_FRAME_JAVA_COMPILED;
		return;
	}
}

int java_frames(const struct sonde_hook_sample *s, struct sonde_hook_frame *out, int max,
		struct sonde_hook_splice *where, void *arg)
{
	(void)arg;
	JNIEnv *env = thread_env(s->tid);
	if (!env)
		return 0; /* not a Java thread: its native frames are all */
	asgct_frame fr[SONDE_HOOK_MAX_FRAMES];
	asgct_trace t = { env, 0, fr };
	if (max > SONDE_HOOK_MAX_FRAMES)
		max = SONDE_HOOK_MAX_FRAMES;
	atomic_fetch_add_explicit(&java_walks, 1, memory_order_relaxed);
	java_asgct(&t, max, (void *)s->ucontext);
	if (t.num_frames <= 0) {
		int r = -t.num_frames;
		atomic_fetch_add_explicit(&java_failed[r >= 0 && r < JAVA_NREASONS - 1 ? r : JAVA_NREASONS - 1], 1,
					  memory_order_relaxed);
		return 0;
	}
	int n = t.num_frames < max ? t.num_frames : max;
	/* from the first native frame in the code cache to the root: the
	 * Java frames (none there: below the native frames) */
	int at = 0;
	while (at < s->npcs && !in_code_cache(s->pcs[at]))
		at++;
	/* AsyncGetCallTrace does not say how a frame ran: the top one's
	 * code address does (a native method's frame is its wrapper's: not
	 * told); the others are told only when the JVM interprets all */
	uint8_t deep = atomic_load_explicit(&java_interp_only, memory_order_relaxed) ? SONDE_FRAME_JAVA_INTERP
										       : SONDE_FRAME_JAVA;
	for (int i = 0; i < n; i++) {
		out[i].pc = (uint64_t)(uintptr_t)fr[i].method_id;
		out[i].kind = deep;
		out[i].fflags = 0;
		out[i].aux = fr[i].lineno >= 0 && fr[i].lineno < (jint)SONDE_FRAME_NO_BCI ? (uint16_t)fr[i].lineno
											: SONDE_FRAME_NO_BCI;
		out[i].reserved = 0;
	}
	if (at < s->npcs && n > 0 && fr[0].lineno != -3)
		top_kinds(s->pcs[at], fr, n, out);
	n = interleave(s, at, fr, n, out, max);
	where->at = at;
	where->drop = s->npcs - at;
	if (t.num_frames < max) /* the walk reached the thread's first Java frame */
		where->flags = SONDE_SPLICE_ROOT;
	atomic_fetch_add_explicit(&java_walked, 1, memory_order_relaxed);
	return n;
}
