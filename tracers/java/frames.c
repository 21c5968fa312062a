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
#include <ucontext.h>

#include "java.h"

const char *const java_reasons[JAVA_NREASONS] = {
	"no Java frame",	 "no class loaded",	 "GC active",		"in unknown native code",
	"not walkable (native)", "in unknown Java code", "not walkable (Java)", "unknown thread state",
	"thread exiting",	 "deoptimising",	 "at a safepoint",	"other",
};

asgct_fn *java_asgct;
_Atomic uint64_t java_walks, java_walked, java_again, java_failed[JAVA_NREASONS];
_Atomic uint64_t java_code_lo = UINT64_MAX, java_code_hi;
_Atomic uint64_t java_stub_lo, java_stub_hi;
_Atomic uint64_t java_interp_lo, java_interp_hi;
_Atomic uint64_t java_nm_lo[JAVA_NMHEAPS], java_nm_hi[JAVA_NMHEAPS];
_Atomic int java_nmheaps, java_interp_only;
struct java_nmlook java_nm;
_Atomic int java_nm_at;
struct java_deep java_deep;
_Atomic int java_deep_on;

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
				out[to + j] =
					(struct sonde_hook_frame){ s->pcs[re[r - 1] + j], SONDE_FRAME_NATIVE, 0, 0, 0 };
		}
	}
	return n + extra;
}

/* A compiled method found by a code address: its Method*, compilation
 * level and blob. */
struct nm {
	uint64_t method, blob, code_begin, code_end;
	int level;
};

/* The compiled method whose code in heap h holds pc; 0 when none is
 * found.  Only loads, each inside the heap's committed part (a block
 * being freed meanwhile reads as another or none, never out of it). */
static int nmethod_at(int h, uint64_t pc, struct nm *nm)
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
	if (blob + (uint64_t)L->blob_size > high ||
	    !*(const volatile uint8_t *)(uintptr_t)(block + (uint64_t)L->used_off))
		return 0;
	uint64_t cb = *(const volatile uint64_t *)(uintptr_t)(blob + (uint64_t)L->code_begin),
		 ce = *(const volatile uint64_t *)(uintptr_t)(blob + (uint64_t)L->code_end);
	if (pc < cb || pc >= ce)
		return 0;
	nm->method = *(const volatile uint64_t *)(uintptr_t)(blob + (uint64_t)L->method);
	nm->level = *(const volatile int32_t *)(uintptr_t)(blob + (uint64_t)L->level);
	nm->blob = blob;
	nm->code_begin = cb;
	nm->code_end = ce;
	return nm->method != 0;
}

static inline uint64_t load64(uint64_t a)
{
	return *(const volatile uint64_t *)(uintptr_t)a;
}

/* The Method* a frame's jmethodID stands for. */
static inline uint64_t method_of(const asgct_frame *f)
{
	return f->method_id ? load64((uint64_t)(uintptr_t)f->method_id) : 0;
}

/* The heap of compiled methods that holds pc, or -1. */
static int nm_heap(uint64_t pc)
{
	int nh = atomic_load_explicit(&java_nmheaps, memory_order_acquire);
	for (int h = 0; h < nh && h < JAVA_NMHEAPS; h++)
		if (pc >= atomic_load_explicit(&java_nm_lo[h], memory_order_relaxed) &&
		    pc < atomic_load_explicit(&java_nm_hi[h], memory_order_relaxed))
			return h;
	return -1;
}

static inline int in_interp(uint64_t pc)
{
	return pc >= atomic_load_explicit(&java_interp_lo, memory_order_relaxed) &&
	       pc < atomic_load_explicit(&java_interp_hi, memory_order_relaxed);
}

/* The last Java frame a frame anchor at a holds: 0 when none (the
 * thread runs Java code, or the anchor's frame is not in the stack
 * [lo, hi)). */
static int last_frame(uint64_t a, uint64_t lo, uint64_t hi, uint64_t *pc, uint64_t *sp, uint64_t *fp)
{
	const struct java_deep *D = &java_deep;
	uint64_t s = load64(a + (uint64_t)D->last_sp);
	if (s < lo + 8 || s >= hi)
		return 0;
	uint64_t p = load64(a + (uint64_t)D->last_pc);
	*pc = p ? p : load64(s - 8);
	*fp = load64(a + (uint64_t)D->last_fp);
	*sp = s;
	return 1;
}

/* The part of the thread's stack that a walk may read, [*lo, *hi): from
 * where the thread was stopped (below it, the stack's low end is its
 * guard zone, which faults) to its base, from its JavaThread (env less
 * env_off).  Returns the JavaThread.  java_deep_on must be set. */
static uint64_t live_stack(JNIEnv *env, const ucontext_t *uc, uint64_t *lo, uint64_t *hi)
{
	const struct java_deep *D = &java_deep;
	uint64_t jt = (uint64_t)(uintptr_t)env - (uint64_t)D->env_off;
	*hi = load64(jt + (uint64_t)D->stack_base);
	*lo = *hi - load64(jt + (uint64_t)D->stack_size);
	uint64_t now = uc ? (uint64_t)uc->uc_mcontext.gregs[REG_RSP] : 0;
	if (now > *lo && now < *hi)
		*lo = now;
	return jt;
}

/* A context to walk a thread's Java frames from, other than the one the
 * signal interrupted: its caller's, when the interrupted frame is not
 * whole. */
struct caller {
	uint64_t pc, sp, fp;
};

/* The byte of compiled method m's code at a, or -1 outside it. */
static inline int code_byte(const struct nm *m, uint64_t a)
{
	return a >= m->code_begin && a < m->code_end ? *(const volatile uint8_t *)(uintptr_t)a : -1;
}

/* The length of the `sub $N,%rsp` at a in m's code (48 83 ec ib, 48 81 ec
 * id), 0 when it is not one. */
static int sub_rsp(const struct nm *m, uint64_t a)
{
	if (code_byte(m, a) != 0x48 || code_byte(m, a + 2) != 0xec)
		return 0;
	int op = code_byte(m, a + 1);
	return op == 0x83 && code_byte(m, a + 3) >= 0 ? 4 : op == 0x81 && code_byte(m, a + 6) >= 0 ? 7 : 0;
}

/* The length of the `mov %rbp,M(%rsp)` at a (48 89 6c 24 db, 48 89 ac 24
 * dd), its M in *d; 0 when it is not one. */
static int mov_rbp(const struct nm *m, uint64_t a, int64_t *d)
{
	if (code_byte(m, a) != 0x48 || code_byte(m, a + 1) != 0x89 || code_byte(m, a + 3) != 0x24)
		return 0;
	int mod = code_byte(m, a + 2);
	if (mod == 0x6c && code_byte(m, a + 4) >= 0) {
		*d = (int8_t)code_byte(m, a + 4);
		return 5;
	}
	if (mod == 0xac && code_byte(m, a + 7) >= 0) {
		*d = (int32_t)((uint32_t)code_byte(m, a + 4) | (uint32_t)code_byte(m, a + 5) << 8 |
			       (uint32_t)code_byte(m, a + 6) << 16 | (uint32_t)code_byte(m, a + 7) << 24);
		return 8;
	}
	return 0;
}

/* Whether compiled method m, interrupted at pc with stack pointer sp and
 * frame pointer fp, was in its prologue before its frame was whole or in
 * its epilogue after it was torn down; then *c is its caller's context,
 * from the return address where the instructions say it is.
 * AsyncGetCallTrace steps from a compiled frame to its caller by the
 * frame's size, so it cannot walk from there (its "unknown Java"), and
 * the prologue is where the small methods that a program calls most are
 * interrupted (javac: 402 of its 548 such samples in compiled code).
 * HotSpot's x86-64 code, C1's and C2's (their verified entry;
 * MacroAssembler's return poll):
 *	[the inline cache's check] [the stack bang]   nothing pushed
 *	push %rbp [mov %rsp,%rbp]                    rbp pushed
 *	sub $N,%rsp                                  the frame's size
 *	[an entry barrier (ZGC, Shenandoah)]         frame_complete
 * (C2 without a stack bang: sub $N,%rsp; mov %rbp,M(%rsp)), and
 *	add $N,%rsp; pop %rbp; cmp P(%r15),%rsp; ja SLOW; ret
 * The prologue's push and sub (or sub and mov) are found from the code's
 * start, so that where pc is among them is known, not guessed from the
 * bytes before it.  Reads m's code and the stack [lo, hi) only;
 * async-signal-safe. */
static int own_frame(const struct nm *m, uint64_t pc, uint64_t sp, uint64_t fp, uint64_t lo, uint64_t hi,
		     struct caller *c)
{
#define B(k) code_byte(m, pc + (uint64_t)(int64_t)(k))
	int32_t fc = *(const volatile int32_t *)(uintptr_t)(m->blob + (uint64_t)java_nm.frame_complete),
		fs = *(const volatile int32_t *)(uintptr_t)(m->blob + (uint64_t)java_nm.frame_size);
	int64_t slot;	  /* the return address's, above sp */
	int64_t rbp = -1; /* where the caller's rbp is above sp (-1: in rbp) */
	uint64_t cb = m->code_begin;
	if (fc > 0 && fc < 512 && pc < cb + (uint64_t)fc) {
		/* the push and the sub, or (no stack bang) the sub and the
		 * mov; then the frame is made */
		uint64_t push = 0, sub = 0, mov = 0, made = 0;
		int64_t d = 0;
		for (uint64_t a = cb; a < cb + (uint64_t)fc && !made; a++) {
			int n = 0, k = 0;
			if (code_byte(m, a) == 0x55 && (n = sub_rsp(m, a + 1))) {
				push = a;
				sub = a + 1;
			} else if (code_byte(m, a) == 0x55 && code_byte(m, a + 1) == 0x48 && code_byte(m, a + 2) == 0x89 &&
				   code_byte(m, a + 3) == 0xe5 && (n = sub_rsp(m, a + 4))) {
				push = a; /* and mov %rsp,%rbp: PreserveFramePointer */
				sub = a + 4;
			} else if ((n = sub_rsp(m, a)) && (k = mov_rbp(m, a + (uint64_t)n, &d))) {
				sub = a;
				mov = a + (uint64_t)n;
			} else {
				continue;
			}
			made = sub + (uint64_t)n + (uint64_t)k;
		}
		if (!made || fs < 2 || fs > (1 << 16))
			return 0;
		if (pc <= (push ? push : sub)) {
			slot = 0; /* nothing pushed yet */
		} else if (push && pc <= sub) {
			slot = 8; /* rbp pushed; in rbp still, or copied from rsp */
			rbp = pc > push + 1 ? 0 : -1;
		} else if (mov && pc == mov) {
			if (d < 0 || d > (1 << 20))
				return 0;
			slot = d + 8; /* the frame made, rbp not saved in it yet */
		} else if (pc >= made) {
			slot = (int64_t)fs * 8 - 8; /* the frame made: an entry barrier */
			rbp = slot - 8;
		} else {
			return 0; /* inside an instruction */
		}
	} else if (B(0) == 0xc3 ||
		   (B(-1) == 0x5d && B(0) == 0x49 && B(1) == 0x3b && (B(2) == 0x67 || B(2) == 0xa7)) ||
		   (B(0) == 0x0f && B(1) == 0x87 &&
		    ((B(-5) == 0x5d && B(-4) == 0x49 && B(-3) == 0x3b && B(-2) == 0x67) ||
		     (B(-8) == 0x5d && B(-7) == 0x49 && B(-6) == 0x3b && B(-5) == 0xa7)))) {
		slot = 0; /* rbp popped: ret, or the return's safepoint poll */
	} else if (B(0) == 0x5d) {
		slot = 8;
		rbp = 0;
	} else {
		return 0;
	}
#undef B
	if (sp < lo || sp + (uint64_t)slot + 8 > hi)
		return 0;
	c->pc = load64(sp + (uint64_t)slot);
	c->sp = sp + (uint64_t)slot + 8;
	c->fp = rbp >= 0 ? load64(sp + (uint64_t)rbp) : fp;
	return c->pc != 0;
}

/* The kinds of the Java frames fr[0, n): a walk of the thread's own
 * frames, from the interrupted one (at == 0: the sample's first address
 * is in the code cache) or the last Java frame the JVM left in the
 * thread's anchor (at > 0: in native code), that tells each physical
 * frame by its code: the interpreter's (the frame's Method* is at its
 * frame pointer), or a compiled method's (found by its code, its Method*
 * in its blob; the frames above it, to the one of that Method*, were
 * inlined into it; its caller's frame is its blob's frame size above).
 * Every step is checked against AsyncGetCallTrace's frames (the same
 * Method*, in order) and stays in the thread's stack: the walk stops at
 * the first frame that disagrees, at a stub (the call stub, a runtime
 * stub), or at anything it cannot read, and the frames below keep the
 * kind SONDE_FRAME_JAVA.  When the top frame's compiled method is not
 * among the frames, the top frame is compiled all the same where its
 * heap holds compiled methods only.  Plain loads; async-signal-safe. */
static void frame_kinds(const struct sonde_hook_sample *s, int at, JNIEnv *env, const asgct_frame *fr, int n,
			struct sonde_hook_frame *out, const struct caller *from)
{
	const ucontext_t *uc = s->ucontext;
	uint64_t pc = from ? from->pc : s->pcs[at] & ~SONDE_PC_EXACT, sp = 0, fp = 0, lo = 0, hi = 0;
	int step = 0; /* sp and fp known: the walk may go past the top frame */
	if (atomic_load_explicit(&java_deep_on, memory_order_acquire)) {
		const struct java_deep *D = &java_deep;
		uint64_t jt = live_stack(env, uc, &lo, &hi);
		if (from) {
			sp = from->sp;
			fp = from->fp;
			step = 1;
		} else if (at == 0 && uc) {
			sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
			fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
			step = 1;
		} else if (at > 0) {
			step = last_frame(jt + (uint64_t)D->anchor, lo, hi, &pc, &sp, &fp);
			if (!step && s->jit_sp && s->jit_fp) {
				/* a leaf call from Java: no anchor, the native
				 * walk's registers there */
				sp = s->jit_sp;
				fp = s->jit_fp;
				step = 1;
			}
		}
		step = step && hi > lo && sp >= lo && sp < hi;
	}
	int i = 0;
	for (int top = 1, steps = 0; i < n && steps < 2 * n + 8; top = 0, steps++) {
		if (in_interp(pc)) {
			if (top && fr[0].lineno != -3)
				out[0].kind = SONDE_FRAME_JAVA_INTERP;
			if (!step || fp < sp || fp < lo + 24 || fp + 16 > hi || load64(fp - 24) != method_of(&fr[i]))
				return;
			if (fr[i].lineno != -3) /* the interpreter's native entry: not told */
				out[i].kind = SONDE_FRAME_JAVA_INTERP;
			i++;
			uint64_t nsp = load64(fp - 8);
			pc = load64(fp + 8);
			fp = load64(fp);
			if (nsp < sp || nsp > hi)
				return;
			sp = nsp;
			continue;
		}
		if (pc >= atomic_load_explicit(&java_stub_lo, memory_order_relaxed) &&
		    pc < atomic_load_explicit(&java_stub_hi, memory_order_relaxed)) {
			/* the call stub: the Java frames go on below the C
			 * frames that called Java, at the anchor its
			 * JavaCallWrapper keeps */
			const struct java_deep *D = &java_deep;
			if (!step || D->wrapper_anchor < 0 || fp < sp || fp + (uint64_t)D->wrapper < lo || fp >= hi)
				return;
			uint64_t w = load64(fp + (uint64_t)D->wrapper);
			if (w < fp || w + (uint64_t)D->wrapper_anchor + 24 > hi ||
			    !last_frame(w + (uint64_t)D->wrapper_anchor, w, hi, &pc, &sp, &fp))
				return;
			continue;
		}
		int h = nm_heap(pc);
		if (h < 0)
			return; /* a stub: the walk ends */
		struct nm m;
		int j = n;
		if (atomic_load_explicit(&java_nm_at, memory_order_acquire) && nmethod_at(h, pc, &m))
			for (j = i; j < n; j++) {
				if (method_of(&fr[j]) == m.method)
					break;
				if (fr[j].lineno == -3) /* a native method inlines nothing */
					j = n - 1;
			}
		if (j >= n) {
			if (top && !java_nm.mixed && fr[0].lineno != -3)
				out[0].kind = SONDE_FRAME_JAVA_COMPILED;
			return;
		}
		for (int k = i; k < j; k++)
			out[k].kind = SONDE_FRAME_JAVA_INLINED;
		if (fr[j].lineno != -3) /* a native method's wrapper: not told */
			out[j].kind =
				m.level >= 1 && m.level <= 3 ? SONDE_FRAME_JAVA_COMPILED_C1 : SONDE_FRAME_JAVA_COMPILED;
		i = j + 1;
		/* interrupted in its prologue, the frame is not whole yet */
		int32_t fs = *(const volatile int32_t *)(uintptr_t)(m.blob + (uint64_t)java_nm.frame_size),
			fc = *(const volatile int32_t *)(uintptr_t)(m.blob + (uint64_t)java_nm.frame_complete);
		if (!step || fs < 2 || fs > (1 << 16) ||
		    (top && at == 0 && !from && (fc < 0 || pc < m.code_begin + (uint64_t)fc)))
			return;
		uint64_t nsp = sp + (uint64_t)fs * 8;
		if (nsp > hi)
			return;
		pc = load64(nsp - 8);
		fp = load64(nsp - 16);
		sp = nsp;
	}
}

/* A second try when AsyncGetCallTrace found the thread's top frame in
 * Java code that it cannot walk from: a leaf call from compiled code into
 * the JVM's C or libc (an array copy, a barrier's slow path: the thread
 * is still in Java, and leaves the JVM no last Java frame), a stub
 * without a frame of its own (a virtual or interface call's), or a
 * compiled method's own prologue or epilogue (own_frame).  The same walk
 * from the first Java frame below: the context of the first frame in the
 * code cache that the native walk crossed (sonde_hook_sample's jit_sp,
 * jit_fp), the stub's return address on top of the stack, or the
 * compiled method's caller, whose frame *own then is (the walk has not
 * its frame: the caller adds it), and *from the context walked from.
 * Only where that code is the interpreter's or a compiled method's.
 * Async-signal-safe: a copy of the context on the handler's stack. */
static int again(const struct sonde_hook_sample *s, int at, JNIEnv *env, asgct_trace *t, int max, struct nm *own,
		 struct caller *from)
{
	int r = -t->num_frames;
	const ucontext_t *uc = s->ucontext;
	if (!uc || (r != 5 && r != 6) || !atomic_load_explicit(&java_deep_on, memory_order_acquire))
		return 0;
	int nm_at = atomic_load_explicit(&java_nm_at, memory_order_acquire);
	uint64_t pc = 0, sp = 0, fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
	if (at > 0 && at < s->npcs && s->jit_sp) {
		pc = s->pcs[at] & ~SONDE_PC_EXACT;
		sp = s->jit_sp;
		if (s->jit_fp)
			fp = s->jit_fp;
	} else if (at == 0) {
		uint64_t lo, hi, now = (uint64_t)uc->uc_mcontext.gregs[REG_RSP], top = s->pcs[0] & ~SONDE_PC_EXACT;
		live_stack(env, uc, &lo, &hi);
		struct nm m;
		int h = nm_heap(top);
		if (h >= 0 && nm_at && nmethod_at(h, top, &m)) {
			struct caller c;
			if (now != lo || !own_frame(&m, top, now, fp, lo, hi, &c))
				return 0;
			*own = m;
			pc = c.pc;
			sp = c.sp;
			fp = c.fp;
		} else if (in_interp(top) || h >= 0 || now != lo || now + 8 > hi) {
			return 0; /* the interpreter, or sp not in the stack */
		} else {
			/* frameless (a virtual call's stub), or with a
			 * frame-pointer frame (an array copy's, a barrier's
			 * slow path) */
			uint64_t bp = fp;
			pc = load64(now);
			sp = now + 8;
			if (!in_interp(pc) && nm_heap(pc) < 0 && bp >= now && bp + 16 <= hi && !(bp & 7)) {
				pc = load64(bp + 8);
				sp = bp + 16;
				fp = load64(bp);
			}
		}
	}
	struct nm m;
	int h = pc ? nm_heap(pc) : -1;
	if (!pc || !(in_interp(pc) || (h >= 0 && nm_at && nmethod_at(h, pc, &m))))
		return 0;
	ucontext_t u = *uc;
	u.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
	u.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	u.uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
	java_asgct(t, max, &u);
	if (t->num_frames <= 0)
		return 0;
	*from = (struct caller){ pc, sp, fp };
	return 1;
}

/* The compile id's low 16 bits of compiled method m (0 when the JVM
 * does not say). */
static uint16_t compile_id16(const struct nm *m)
{
	long off = java_nm.compile_id;
	return off < 0 ? 0 : (uint16_t)*(const volatile int32_t *)(uintptr_t)(m->blob + (uint64_t)off);
}

/* When no walk gave Java frames: each native frame from at on in a
 * compiled method's code as a SONDE_FRAME_JAVA_CODE frame with its code's
 * compile id, so that the reader names it by the code that was there at
 * the sample, not by the last code at that address (a method's freed
 * code makes room for another's); the interrupted one with
 * SONDE_FRAMEF_OWN in its method's prologue or epilogue (own, when
 * again found it there).  The frames given, from the first such native
 * frame to the last (those between stay native); 0 when none is.
 * Async-signal-safe. */
static int code_frames(const struct sonde_hook_sample *s, int at, const struct nm *own, struct sonde_hook_frame *out,
		       int max, struct sonde_hook_splice *where)
{
	if (!atomic_load_explicit(&java_nm_at, memory_order_acquire))
		return 0;
	int first = -1, n = 0;
	for (int k = at; k < s->npcs; k++) {
		uint64_t pc = s->pcs[k] & ~SONDE_PC_EXACT;
		struct nm m;
		int h = in_code_cache(pc) ? nm_heap(pc) : -1;
		if (h < 0 || !nmethod_at(h, pc, &m))
			continue;
		if (first < 0)
			first = k;
		if (k - first >= max)
			break;
		for (; n < k - first; n++)
			out[n] = (struct sonde_hook_frame){ s->pcs[first + n], SONDE_FRAME_NATIVE, 0, 0, 0 };
		uint8_t fl = (s->pcs[k] & SONDE_PC_EXACT) ? SONDE_FRAMEF_EXACT : 0;
		if (k == 0 && own->method && own->blob == m.blob)
			fl |= SONDE_FRAMEF_OWN;
		out[n++] = (struct sonde_hook_frame){ pc, SONDE_FRAME_JAVA_CODE, fl, compile_id16(&m), 0 };
	}
	if (first < 0)
		return 0;
	where->at = first;
	where->drop = n;
	return n;
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
	/* from the first native frame in the code cache to the root: the
	 * Java frames (none there: below the native frames) */
	int at = 0;
	while (at < s->npcs && !in_code_cache(s->pcs[at]))
		at++;
	atomic_fetch_add_explicit(&java_walks, 1, memory_order_relaxed);
	java_asgct(&t, max, (void *)s->ucontext);
	/* own: the top compiled method, when its prologue or epilogue had
	 * the walk begin at its caller, from */
	struct nm own = { 0 };
	struct caller from;
	int top = 0;
	if (t.num_frames <= 0 && again(s, at, env, &t, max, &own, &from)) {
		atomic_fetch_add_explicit(&java_again, 1, memory_order_relaxed);
		top = own.method != 0;
	}
	if (t.num_frames <= 0) {
		int r = -t.num_frames;
		atomic_fetch_add_explicit(&java_failed[r >= 0 && r < JAVA_NREASONS - 1 ? r : JAVA_NREASONS - 1], 1,
					  memory_order_relaxed);
		return code_frames(s, at, &own, out, max, where);
	}
	int n = t.num_frames < max ? t.num_frames : max;
	/* AsyncGetCallTrace does not say how a frame ran: the frames' code
	 * does (frame_kinds; a native method's frame is its wrapper's: not
	 * told); or the JVM interprets all */
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
	if (at < s->npcs && n > 0)
		frame_kinds(s, at, env, fr, n, out, top ? &from : NULL);
	n = interleave(s, at, fr, n, out, max);
	int whole = t.num_frames < max; /* the walk reached the thread's first Java frame */
	if (top) {
		/* the top method's own frame, which the reader gives its
		 * method (the code's, by its compile id) */
		if (n == max) {
			n--;
			whole = 0;
		}
		__builtin_memmove(out + 1, out, (size_t)n * sizeof *out);
		out[0] = (struct sonde_hook_frame){ s->pcs[0] & ~SONDE_PC_EXACT, SONDE_FRAME_JAVA_CODE,
						    (s->pcs[0] & SONDE_PC_EXACT ? SONDE_FRAMEF_EXACT : 0) |
							    SONDE_FRAMEF_OWN,
						    compile_id16(&own), 0 };
		n++;
	}
	where->at = at;
	where->drop = s->npcs - at;
	if (whole)
		where->flags = SONDE_SPLICE_ROOT;
	atomic_fetch_add_explicit(&java_walked, 1, memory_order_relaxed);
	return n;
}

int java_code_only(const struct sonde_hook_sample *s, struct sonde_hook_frame *out, int max,
		   struct sonde_hook_splice *where, void *arg)
{
	(void)arg;
	if (!thread_env(s->tid))
		return 0;
	if (max > SONDE_HOOK_MAX_FRAMES)
		max = SONDE_HOOK_MAX_FRAMES;
	int at = 0;
	while (at < s->npcs && !in_code_cache(s->pcs[at]))
		at++;
	struct nm own = { 0 };
	return code_frames(s, at, &own, out, max, where);
}
