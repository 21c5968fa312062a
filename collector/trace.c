/*
 * The collector's side of tracing (tracers/tracer.h): data files for the
 * traced kinds, and call stacks taken in normal context.
 *
 * Tracing libraries call these functions from their interposers, on the
 * target's threads, in normal context.  The clock-profiling handler may
 * interrupt them; the only structure both write is the calling thread's
 * block of "stacks", so while an interposer interns a stack, t_state.in_trace
 * tells the handler to skip that sample (its CPU time is carried by the
 * thread's next sample, so nothing is lost but the position of one sample).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

#include <sonde/hooks.h>

#include "clock_internal.h"
#include "unwind.h"
#include "../tracers/tracer.h"

/* The traced kinds are the rows of sonde/kinds.h with a library. */
static const struct sonde_kind_desc *kind_of(int kind)
{
	return sonde_kind_traced(kind) ? sonde_kind_desc(kind) : NULL;
}

/* Per kind id: the registered module of a kind that records in this
 * process (or did in the parent, in a followed fork child), and its data
 * file (NULL in a fork child until it restarts). */
static const struct sonde_module *g_mod[SONDE_KIND_MAX + 1];
static struct dfile *g_df[SONDE_KIND_MAX + 1];
struct sc_entry;
static TLS struct sc_entry *t_sc; /* the stack cache below */

/* Code of sonde's own libraries: leading stack frames there are dropped. */
#define MAX_RANGES 16
static struct {
	uintptr_t lo, hi;
} g_ranges[MAX_RANGES];
static _Atomic int g_nranges;

static int add_range(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	const char *slash = strrchr(info->dlpi_name, '/');
	const char *base = slash ? slash + 1 : info->dlpi_name;
	if (strncmp(base, "libsonde_", 9))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		int n = atomic_load(&g_nranges);
		if (n >= MAX_RANGES)
			return 1;
		g_ranges[n].lo = info->dlpi_addr + ph->p_vaddr;
		g_ranges[n].hi = g_ranges[n].lo + ph->p_memsz;
		atomic_store(&g_nranges, n + 1);
	}
	return 0;
}

static int in_sonde(uint64_t pc)
{
	int n = atomic_load_explicit(&g_nranges, memory_order_relaxed);
	for (int i = 0; i < n; i++)
		if (pc >= g_ranges[i].lo && pc < g_ranges[i].hi)
			return 1;
	return 0;
}

/* Whether pc is in sonde's own code.  Normal context (the first call
 * finds the libraries). */
int trace_own_pc(uint64_t pc)
{
	if (!atomic_load(&g_nranges))
		dl_iterate_phdr(add_range, NULL);
	return in_sonde(pc);
}

EXPORT int __sonde_trace_from_sonde(const void *pc)
{
	return in_sonde((uint64_t)(uintptr_t)pc);
}

/* Describe the kind's file and the module's packets in log.xml. */
static void write_dataformat(const struct sonde_kind_desc *k, const struct sonde_module *m)
{
	char mem[1024];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<dataformat");
	xb_attr_str(&b, "file", k->file);
	xb_attr_u64(&b, "kind", (uint64_t)k->id);
	xb_attr_u64(&b, "block_size", SONDE_BLOCK_SIZE);
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
	for (int i = 0; i < m->npackets; i++) {
		const struct sonde_packet_format *p = &m->packets[i];
		xb_init(&b, mem, sizeof mem);
		xb_str(&b, "<packet");
		xb_attr_u64(&b, "type", (uint64_t)p->type);
		xb_attr_str(&b, "name", p->name);
		xb_attr_u64(&b, "size", (uint64_t)p->size);
		xb_attr_str(&b, "fields", p->fields);
		xb_str(&b, "/>\n");
		log_line(mem, b.len);
	}
}

/* Create the kind's file and set its module recording.  0, or -1 when
 * the kind was not asked for or the file cannot be made (logged). */
static int attach(const struct sonde_kind_desc *k, const struct sonde_module *m, const char **setting)
{
	*setting = NULL;
	if (!atomic_load(&g_col.active) || getpid() != g_col.pid)
		return -1;
	const char *v = sonde_getenv(k->env);
	if (!v || !*v || !strcmp(v, "off"))
		return -1;
	*setting = v;
	if (g_df[k->id])
		return -1; /* attached already */
	if (!atomic_load(&g_nranges))
		dl_iterate_phdr(add_range, NULL);
	g_df[k->id] = dfile_create(g_col.expdir, k->file, (uint32_t)k->id);
	if (!g_df[k->id]) {
		char msg[200];
		snprintf(msg, sizeof msg, "cannot create the %s data file (%s); %s tracing disabled", k->file,
			 strerror(errno), k->name);
		log_event_text("error", msg);
		return -1;
	}
	write_dataformat(k, m);
	g_mod[k->id] = m;
	atomic_store(m->on, 1);
	return 0;
}

EXPORT int __sonde_module_register(const struct sonde_module *m)
{
	const struct sonde_kind_desc *k = m ? kind_of(m->kind) : NULL;
	const char *setting;
	if (!k || !m->on || attach(k, m, &setting) < 0)
		return -1;
	if (m->start)
		m->start(setting);
	return 0;
}

/* The <trace> lines logged so far: a followed fork child's experiment
 * needs them too (the heap tracer's clock calibration, for one). */
#define MAX_SETTING_LINES 16
static char g_setting_lines[MAX_SETTING_LINES][512];
static size_t g_setting_len[MAX_SETTING_LINES];
static int g_nsettings;

EXPORT void __sonde_trace_setting(int kind, const char *name, const char *value)
{
	const struct sonde_kind_desc *k = kind_of(kind);
	if (!k)
		return;
	char mem[512];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<trace");
	xb_attr_str(&b, "kind", k->name);
	xb_attr_str(&b, name, value);
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
	if (g_nsettings < MAX_SETTING_LINES && !b.overflow) {
		memcpy(g_setting_lines[g_nsettings], mem, b.len);
		g_setting_len[g_nsettings++] = b.len;
	}
}

/* ---- the tracing clock (tracer.h: __sonde_trace_now) ----
 *
 * `sonde collect` stores CLOCK_MONOTONIC into a word shared with every
 * recording process once a millisecond (shared.c maps it over
 * __sonde_trace_now), so that a hot interposer (malloc, free) reads the
 * time with one load instead of a clock read (rdtsc is 8 ns here, a vDSO
 * clock_gettime 18 ns, and an allocation-heavy program pays two per
 * malloc/free pair: more than the allocator itself).  The tick used to
 * come from a thread of the collector's own in the target, which made
 * the target multithreaded (see sonde/shared.h); collect is outside it.
 * The word is read after the value it stamps became visible to the
 * thread (a free is stamped before its call, an allocation after), so a
 * block handed from one thread to another through the allocator's or the
 * program's own synchronisation is never stamped earlier on the receiving
 * thread: times of causally ordered events never decrease, they may only
 * be equal, and the reader orders equal times per address
 * (lib/reader/heapleaks.c).  0 when collect does not tick (and after it ended):
 * the interposers then read the clock. */
EXPORT uint64_t __sonde_trace_clock(void)
{
	int saved = errno;
	uint64_t r = atomic_load(&g_col.active) ? shared_tick_ns() : 0;
	errno = saved;
	return r;
}

/* In a followed fork child whose own experiment has started: the kinds the
 * parent traced go on into the child's files. */
void modules_restart(void)
{
	t_sc = NULL; /* its stack ids name nodes of the parent's stacks file */
	if (!atomic_load(&g_col.active))
		return;
	for (int kind = 0; kind <= SONDE_KIND_MAX; kind++) {
		const struct sonde_module *m = g_mod[kind];
		const struct sonde_kind_desc *k = kind_of(kind);
		if (!m)
			continue;
		g_df[kind] = dfile_create(g_col.expdir, k->file, (uint32_t)kind);
		if (!g_df[kind])
			continue;
		write_dataformat(k, m);
		const char *tag = k->name;
		for (int i = 0; i < g_nsettings; i++) {
			char pat[64];
			snprintf(pat, sizeof pat, "kind=\"%s\"", tag);
			if (strstr(g_setting_lines[i], pat))
				log_line(g_setting_lines[i], g_setting_len[i]);
		}
		atomic_store(m->on, 1);
	}
}

EXPORT void __sonde_trace_log(const char *level, const char *text)
{
	log_event_text(level, text);
}

/* A file of the library's own beside the collector's: a name of letters,
 * digits, '.', '_' and '-' (no path, not hidden), never one of the
 * experiment's own files (O_EXCL: a kind's file, log.xml, map.xml, one
 * a module made first), in this process's experiment (a followed
 * child's is its own).  Opened by the gated system call, so that a
 * seccomp filter the target installed is obeyed. */
EXPORT int __sonde_trace_file(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!atomic_load(&g_col.active) || !g_col.expdir[0]) {
		errno = ENOENT; /* no experiment (yet, or in a child not followed) */
		return -1;
	}
	if (!n || n > 255 || name[0] == '.') {
		errno = EINVAL;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-')) {
			errno = EINVAL;
			return -1;
		}
	}
	for (int k = 1; k <= SONDE_KIND_MAX; k++) {
		const struct sonde_kind_desc *d = sonde_kind_desc(k);
		if (d && d->file && !strcmp(d->file, name)) {
			errno = EEXIST;
			return -1;
		}
	}
	char path[sizeof g_col.expdir + 257];
	struct xbuf b;

	xb_init(&b, path, sizeof path - 1);
	xb_str(&b, g_col.expdir);
	xb_str(&b, "/");
	xb_str(&b, name);
	if (b.len >= sizeof path - 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	path[b.len] = 0;
	return (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
}

EXPORT void *__sonde_trace_reserve(int kind, size_t size)
{
	if (kind < 0 || kind > SONDE_KIND_MAX || !g_df[kind] || atomic_load_explicit(&__sonde_paused, memory_order_relaxed))
		return NULL;
	return dfile_reserve_wait(g_df[kind], size);
}

EXPORT void __sonde_trace_commit(int kind, size_t size)
{
	dfile_commit(g_df[kind], size);
}

/* sonde_capture_regs (collector.h): a getcontext without its
 * sigprocmask system call. */
__asm__(".text\n"
	".p2align 4\n"
	".globl sonde_capture_regs\n"
	".type sonde_capture_regs,@function\n"
	".hidden sonde_capture_regs\n"
	"sonde_capture_regs:\n"
	".cfi_startproc\n"
	"movq %r12, 32(%rdi)\n"
	"movq %r13, 40(%rdi)\n"
	"movq %r14, 48(%rdi)\n"
	"movq %r15, 56(%rdi)\n"
	"movq %rbp, 80(%rdi)\n"
	"movq %rbx, 88(%rdi)\n"
	"leaq 8(%rsp), %rax\n"
	"movq %rax, 120(%rdi)\n"
	"movq (%rsp), %rax\n"
	"movq %rax, 128(%rdi)\n"
	"ret\n"
	".cfi_endproc\n"
	".size sonde_capture_regs, .-sonde_capture_regs\n");
_Static_assert(REG_R12 == 4 && REG_RBP == 10 && REG_RBX == 11 && REG_RSP == 15 && REG_RIP == 16,
	       "gregs layout used by sonde_capture_regs");

/* A thread's cache of recent stacks, keyed by the interposer's return
 * address and CFA (the call site and the caller's stack pointer).  An
 * entry also holds where each caller's return address sits on the stack
 * and its value: when those still hold, every frame above the call site is
 * the one seen before (each frame's CFA follows from its pc and the CFA
 * below it), so the stack id is known without unwinding.  Allocation-heavy
 * programs call malloc from a few sites in loops, so nearly every event
 * hits.  Not used for stacks through signal frames or beyond SC_SLOTS. */
#define SC_ENTRIES 64
#define SC_SLOTS 40
struct sc_entry {
	uint64_t ra, cfa, id;
	uint32_t n, pad;
	uint64_t addr[SC_SLOTS], val[SC_SLOTS];
};
static TLS int t_sc_failed;

static struct sc_entry *sc_table(void)
{
	if (__builtin_expect(t_sc != NULL, 1))
		return t_sc;
	if (t_sc_failed)
		return NULL;
	int saved = errno; /* interposers must not change the target's errno */
	void *p = sonde_mmap(NULL, SC_ENTRIES * sizeof(struct sc_entry), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = saved;
	if (p == MAP_FAILED) {
		t_sc_failed = 1;
		return NULL;
	}
	t_sc = p;
	return t_sc;
}

/* Unwind from here, drop sonde's frames, intern.  With ra/cfa (nonzero),
 * also fill the cache entry e when the walk reached the expected call
 * site.  With codeptr (nonzero), the stack starts at the frame that
 * returns to it when it is among the 16 nearest (a runtime's callback,
 * whose own frames are the runtime's). */
static uint64_t walk(struct tstate *ts, uint64_t ra, uint64_t cfa, struct sc_entry *e, uint64_t codeptr)
{
	ucontext_t uc;
	memset(uc.uc_mcontext.gregs, 0, sizeof uc.uc_mcontext.gregs);
	sonde_capture_regs(uc.uc_mcontext.gregs);
	int max = g_cs.depth + (codeptr ? 20 : 4);
	uint64_t pcs[max], sps[max];
	unsigned flags = 0;
	int n = uw_backtrace_sp(&uc, ts->stack_lo, ts->stack_hi, pcs, sps, max, &flags);
	/* Drop this function, the interposer, and anything else of sonde's:
	 * the leaf becomes the traced function's call site, a return
	 * address. */
	int skip = 0;
	while (skip < n && in_sonde(pcs[skip] & ~SONDE_PC_EXACT))
		skip++;
	for (int k = skip; codeptr && k < n && k < skip + 16; k++)
		if ((pcs[k] & ~SONDE_PC_EXACT) == codeptr) {
			skip = k;
			break;
		}
	if (skip >= n)
		return 0;
	pcs[skip] &= ~SONDE_PC_EXACT;
	int depth = n - skip;
	if (depth > g_cs.depth) {
		depth = g_cs.depth;
		flags |= SONDE_STACK_TRUNCATED;
	}
	uint64_t id = stacks_intern(pcs + skip, depth, flags);
	if (!e || !id || pcs[skip] != ra || sps[skip] != cfa || depth - 1 > SC_SLOTS ||
	    ts->stack_hi <= ts->stack_lo)
		return id;
	for (int k = 1; k < depth; k++) {
		uint64_t at = sps[skip + k] - 8;
		if ((pcs[skip + k] & SONDE_PC_EXACT) || at < cfa || at + 8 > ts->stack_hi)
			return id; /* a signal frame, or off this stack: not cached */
		e->addr[k - 1] = at;
		e->val[k - 1] = pcs[skip + k];
	}
	e->ra = ra;
	e->cfa = cfa;
	e->n = (uint32_t)(depth - 1);
	e->id = id;
	return id;
}

/* The stack of the frame that returns to ra with CFA cfa, from the
 * thread's cache when the callers seen there before are still there,
 * else walked (from codeptr's frame when codeptr is not 0, see walk) and
 * cached when the walk found that frame. */
static uint64_t stack_cached(uint64_t ra, uint64_t cfa, uint64_t codeptr)
{
	struct tstate *ts = &t_state;
	if (ts->in_trace || atomic_load_explicit(&__sonde_paused, memory_order_relaxed))
		return 0; /* paused: the event will not be written either */
	struct sc_entry *tab = sc_table(), *e = NULL;
	if (tab) {
		uint64_t h = (ra ^ (cfa * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
		e = &tab[h >> 58]; /* SC_ENTRIES = 64 */
		/* the frame at cfa returns to ra (a runtime's frame address
		 * is taken on its word: this is what makes it this frame),
		 * and each caller above it is the one seen before */
		if (e->ra == ra && e->cfa == cfa && e->id && *(const volatile uint64_t *)(cfa - 8) == ra) {
			uint32_t k = 0;
			while (k < e->n && *(const volatile uint64_t *)e->addr[k] == e->val[k])
				k++;
			if (k == e->n)
				return e->id;
		}
		e->id = 0; /* refilled by the walk, or left empty */
	}
	ts->in_trace = 1;
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t id = walk(ts, ra, cfa, e, codeptr);
	atomic_signal_fence(memory_order_seq_cst);
	ts->in_trace = 0;
	return id;
}

EXPORT __attribute__((noinline)) uint64_t __sonde_trace_stack_at(uint64_t ra, uint64_t cfa)
{
	return stack_cached(ra, cfa, 0);
}

EXPORT __attribute__((noinline)) uint64_t __sonde_trace_stack(void)
{
	struct tstate *ts = &t_state;
	if (ts->in_trace || atomic_load_explicit(&__sonde_paused, memory_order_relaxed))
		return 0;
	ts->in_trace = 1;
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t id = walk(ts, 0, 0, NULL, 0);
	atomic_signal_fence(memory_order_seq_cst);
	ts->in_trace = 0;
	return id;
}

/* The calling thread's stack from the frame that returns to codeptr (a
 * runtime's callback, whose own frames are the runtime's: OMPT's
 * parallel_begin, task_create), that frame's return address the leaf;
 * from the first frame outside sonde when codeptr is not among the 16
 * nearest.  cfa, when not 0, is that frame's CFA as the runtime says it:
 * the stack is then cached as an interposer's is (a region in a loop
 * costs one walk, not one a run).  0 when none could be recorded.
 * Normal context. */
uint64_t trace_stack_from(uint64_t codeptr, uint64_t cfa)
{
	if (cfa && codeptr)
		return stack_cached(codeptr, cfa, codeptr);
	struct tstate *ts = &t_state;
	if (ts->in_trace || atomic_load_explicit(&__sonde_paused, memory_order_relaxed))
		return 0;
	ts->in_trace = 1;
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t id = walk(ts, 0, 0, NULL, codeptr);
	atomic_signal_fence(memory_order_seq_cst);
	ts->in_trace = 0;
	return id;
}

/* Stop every traced kind; called before the files are finished. */
void modules_stop_all(void)
{
	for (int k = 0; k <= SONDE_KIND_MAX; k++)
		if (g_mod[k])
			atomic_store(g_mod[k]->on, 0);
	/* Events being written on other threads still land in mapped blocks:
	 * dfile_finish unmaps nothing. */
	char msg[256];
	for (int kind = 0; kind <= SONDE_KIND_MAX; kind++) {
		struct dfile *df = g_df[kind];
		if (!df)
			continue;
		if (g_mod[kind]->stop)
			g_mod[kind]->stop();
		int e = dfile_grow_errno(df);
		if (e || dfile_lost(df)) {
			snprintf(msg, sizeof msg, "%llu %s events were lost%s%s",
				 (unsigned long long)dfile_lost(df), kind_of(kind)->name, e ? ": " : "",
				 e ? strerror(e) : "");
			log_event_text("error", msg);
		}
		dfile_finish(df);
	}
}

void modules_close_fds(void)
{
	for (int k = 0; k <= SONDE_KIND_MAX; k++)
		dfile_close_fd(g_df[k]);
}

void modules_fork_child(void)
{
	/* The tick word is collect's, shared with the parent: it ticks on. */
	for (int k = 0; k <= SONDE_KIND_MAX; k++) {
		if (g_mod[k])
			atomic_store(g_mod[k]->on, 0);
		dfile_forget(g_df[k]);
		g_df[k] = NULL;
		if (g_mod[k] && g_mod[k]->fork_child)
			g_mod[k]->fork_child();
	}
}

/* The hooks without arguments, of every registered module in kind order. */
#define EACH_MODULE_HOOK(hook)                                     \
	for (int k = 0; k <= SONDE_KIND_MAX; k++)                  \
		if (g_mod[k] && g_mod[k]->hook)                    \
			g_mod[k]->hook()

void modules_thread_start(void)
{
	EACH_MODULE_HOOK(thread_start);
}

void modules_thread_end(void)
{
	EACH_MODULE_HOOK(thread_end);
}

void modules_exec_prepare(void)
{
	EACH_MODULE_HOOK(exec_prepare);
}

void modules_exec_failed(void)
{
	EACH_MODULE_HOOK(exec_failed);
}

/* ---- the traced kinds as one module of the collector's (collector.h) ---- */

static void traced_thread_start(void *fn)
{
	(void)fn;
	modules_thread_start();
}

const struct collector_module traced_module = {
	.name = "traced",
	.thread_start = traced_thread_start,
	.thread_end = modules_thread_end,
	.stop = modules_stop_all,
	.fork_child = modules_fork_child,
	.restart = modules_restart,
	.exec_prepare = modules_exec_prepare,
	.exec_failed = modules_exec_failed,
	.close_fds = modules_close_fds,
};
