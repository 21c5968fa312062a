/*
 * Unit test of the DWARF unwinder (collector/unwind.c).
 *
 * Built with -O2 -fomit-frame-pointer, so frames of this program, like
 * Debian's glibc, unwind only through .eh_frame.  Samples are taken by
 * SIGPROF handlers (CPU timers or pthread_kill) that call uw_backtrace and
 * store the pcs in a static array; all checking and symbolisation happens
 * afterwards in normal context.  This program's own functions are resolved
 * from its .symtab (read from /proc/self/exe: it is not linked -rdynamic),
 * shared-library frames with dladdr1.
 *
 *  1. 51 frames of a non-inlined recursion reach main and the libc start
 *     code (raise in the deepest frame, and a CPU-timer sample there);
 *     truncation flags at a small and at the exact depth.
 *  2. CPU-timer samples in a qsort comparator pass qsort_r and reach main.
 *  3. samples in a pthread reach its start routine and then start_thread.
 *  4. samples inside the program's own signal handler pass the signal
 *     frame (glibc's __restore_rt, and a CFI-less restorer of our own) and
 *     the interrupted frame is exact.
 *  5. time per frame.
 *  6. samples in the vDSO (clock_gettime) and in PLT stubs unwind.
 *  7. uw_refresh with dlopen/dlclose while another thread is sampled.
 *  8. code without CFI: a leaf that has not touched the stack, and a frame
 *     found through the rbp chain.
 *  9. CFA and register rules given as DWARF expressions (general path).
 * 10. 300000 walks from garbage registers and stacks never fault.
 * 11. uw_at_syscall: a pc at or just past a `syscall`, or up to 32 bytes
 *     past the one whose return rcx and r11 still hold; nothing else.
 */
#define _GNU_SOURCE
#include "unwind.h"

#include "sonde/format.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* Keep test functions as real frames (GCC's noipa also stops cloning and
 * IPA-based tail-call tricks; clang has only noinline). */
#if defined(__clang__)
#define NOIPA __attribute__((noinline))
#define FRAME_POINTER
#else
#define NOIPA __attribute__((noipa))
#define FRAME_POINTER __attribute__((optimize("no-omit-frame-pointer")))
#endif

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define MAXD 64		/* test 1's stacks have 57 frames */
#define MAXS 60000

struct sample {
	uint64_t pcs[MAXD];
	int n;
	unsigned flags;
	int tag;
	int tid;
	uint32_t ns;
};

static struct sample g_s[MAXS];
static atomic_int g_ns;			/* samples taken */
static volatile int g_tag;		/* current test, stored in samples */
static volatile int g_max = MAXD;	/* max passed to uw_backtrace */
static atomic_int g_errno_bad;		/* handler saw errno changed */
static __thread uintptr_t t_lo, t_hi;	/* this thread's stack bounds */

static int g_pass, g_fail;
static atomic_int g_stop_at;		/* set g_stop_flag at this sample */
static volatile int g_stop_flag;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
	if (ok)
		g_pass++;
	else
		g_fail++;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	int i = atomic_fetch_add(&g_ns, 1);
	if (i >= MAXS)
		return;
	struct sample *s = &g_s[i];
	int saved_errno = errno;
	errno = 4242;
	uint64_t t0 = now_ns();
	s->n = uw_backtrace(uc, t_lo, t_hi, s->pcs, g_max, &s->flags);
	uint64_t t1 = now_ns();
	if (errno != 4242)
		atomic_fetch_add(&g_errno_bad, 1);
	s->ns = (uint32_t)(t1 - t0);
	s->tag = g_tag;
	s->tid = gettid();
	int stop = atomic_load(&g_stop_at);
	if (stop && i + 1 >= stop)
		g_stop_flag = 1;
	errno = saved_errno;
}

static int nsamples(void)
{
	int n = atomic_load(&g_ns);
	return n < MAXS ? n : MAXS;
}

/* Bounds of the calling thread's stack, or 0,0 to test probing. */
static void set_bounds(int known)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	t_lo = t_hi = 0;
	if (!known || pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &addr, &size)) {
		t_lo = (uintptr_t)addr;
		t_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
}

/* A CPU-time timer of the calling thread that sends signo to it. */
static timer_t cpu_timer(int signo, long first_ns, long interval_ns)
{
	struct sigevent sev;
	struct itimerspec its;
	timer_t t;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = signo;
	sev.sigev_notify_thread_id = gettid();
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t)) {
		perror("timer_create");
		exit(2);
	}
	its.it_value.tv_sec = first_ns / 1000000000;
	its.it_value.tv_nsec = first_ns % 1000000000;
	its.it_interval.tv_sec = interval_ns / 1000000000;
	its.it_interval.tv_nsec = interval_ns % 1000000000;
	timer_settime(t, 0, &its, NULL);
	return t;
}

/* A thread that sends SIGPROF to `target` every interval: CPU-time timers
 * fire only at the kernel tick (often 250 Hz), too slow for thousands of
 * samples in a unit test. */
static pthread_t g_samp_thread, g_samp_target;
static atomic_int g_samp_run;
static long g_samp_interval;

static void *sampler(void *arg)
{
	(void)arg;
	while (atomic_load(&g_samp_run)) {
		struct timespec ts = { 0, g_samp_interval };
		nanosleep(&ts, NULL);
		if (atomic_load(&g_samp_run))
			pthread_kill(g_samp_target, SIGPROF);
	}
	return NULL;
}

static void start_sampler(pthread_t target, long interval_ns)
{
	sigset_t set, old;

	g_samp_target = target;
	g_samp_interval = interval_ns;
	atomic_store(&g_samp_run, 1);
	/* The sampler itself must not take the samples. */
	sigemptyset(&set);
	sigaddset(&set, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	pthread_create(&g_samp_thread, NULL, sampler, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void stop_sampler(void)
{
	atomic_store(&g_samp_run, 0);
	pthread_join(g_samp_thread, NULL);
}

/* ------------------------------------------------------------------ */
/* Symbolisation (normal context only)                                 */
/* ------------------------------------------------------------------ */

struct fsym {
	uintptr_t lo, hi;
	const char *name;
};
static struct fsym *g_fs;
static int g_nfs;
static uintptr_t g_plt_lo[4], g_plt_hi[4];
static int g_nplt;

int main(void);

static void load_exe_symbols(void)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	long size;
	char *img;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) <= 0) {
		perror("/proc/self/exe");
		exit(2);
	}
	rewind(f);
	img = malloc((size_t)size);
	if (!img || fread(img, 1, (size_t)size, f) != (size_t)size) {
		perror("read /proc/self/exe");
		exit(2);
	}
	fclose(f);

	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	const char *shstr = img + sh[eh->e_shstrndx].sh_offset;
	const Elf64_Sym *syms = NULL;
	const char *str = NULL;
	size_t nsyms = 0;

	for (int i = 0; i < eh->e_shnum; i++) {
		const char *nm = shstr + sh[i].sh_name;
		if (sh[i].sh_type == SHT_SYMTAB) {
			syms = (const Elf64_Sym *)(img + sh[i].sh_offset);
			nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
			str = img + sh[sh[i].sh_link].sh_offset;
		}
		if ((!strcmp(nm, ".plt") || !strcmp(nm, ".plt.sec") ||
		     !strcmp(nm, ".plt.got")) && g_nplt < 4) {
			g_plt_lo[g_nplt] = sh[i].sh_addr;
			g_plt_hi[g_nplt++] = sh[i].sh_addr + sh[i].sh_size;
		}
	}
	if (!syms) {
		fprintf(stderr, "no .symtab in /proc/self/exe\n");
		exit(2);
	}
	g_fs = calloc(nsyms, sizeof(*g_fs));
	uintptr_t main_link = 0;
	for (size_t i = 0; i < nsyms; i++) {
		if (ELF64_ST_TYPE(syms[i].st_info) != STT_FUNC ||
		    !syms[i].st_value)
			continue;
		g_fs[g_nfs].lo = syms[i].st_value;
		g_fs[g_nfs].hi = syms[i].st_value + syms[i].st_size;
		g_fs[g_nfs].name = str + syms[i].st_name;
		if (!strcmp(g_fs[g_nfs].name, "main"))
			main_link = syms[i].st_value;
		g_nfs++;
	}
	/* Load bias of the executable. */
	uintptr_t bias = (uintptr_t)&main - main_link;
	for (int i = 0; i < g_nfs; i++) {
		g_fs[i].lo += bias;
		g_fs[i].hi += bias;
		if (g_fs[i].hi == g_fs[i].lo) /* _start has size 0 sometimes */
			g_fs[i].hi = g_fs[i].lo + 1;
	}
	for (int i = 0; i < g_nplt; i++) {
		g_plt_lo[i] += bias;
		g_plt_hi[i] += bias;
	}
}

/* The address to symbolise: a return address points after the call. */
static uintptr_t lookup_pc(uint64_t raw)
{
	uintptr_t pc = (uintptr_t)(raw & ~SONDE_PC_EXACT);
	return (raw & SONDE_PC_EXACT) ? pc : pc - 1;
}

static const char *exe_fn(uint64_t raw)
{
	uintptr_t a = lookup_pc(raw);
	for (int i = 0; i < g_nfs; i++)
		if (a >= g_fs[i].lo && a < g_fs[i].hi)
			return g_fs[i].name;
	return NULL;
}

static int is_fn(uint64_t raw, const char *name)
{
	const char *n = exe_fn(raw);
	return n && !strcmp(n, name);
}

static int in_lib(uint64_t raw, const char *lib)
{
	Dl_info di;
	return dladdr((void *)lookup_pc(raw), &di) && di.dli_fname &&
	       strstr(di.dli_fname, lib);
}

/* Inside the dynamic symbol `name` (by its st_size). */
static int in_lib_sym(uint64_t raw, const char *name)
{
	Dl_info di;
	const ElfW(Sym) *sym = NULL;
	uintptr_t a = lookup_pc(raw);

	if (!dladdr1((void *)a, &di, (void **)&sym, RTLD_DL_SYMENT) ||
	    !di.dli_sname || !sym || strcmp(di.dli_sname, name))
		return 0;
	return a >= (uintptr_t)di.dli_saddr &&
	       a < (uintptr_t)di.dli_saddr + sym->st_size;
}

static void describe(uint64_t raw, char *buf, size_t len)
{
	Dl_info di;
	uintptr_t a = lookup_pc(raw);
	const char *n = exe_fn(raw);

	if (n)
		snprintf(buf, len, "%s", n);
	else if (dladdr((void *)a, &di) && di.dli_fname)
		snprintf(buf, len, "%s:%s+%#lx",
			 strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1
						    : di.dli_fname,
			 di.dli_sname ? di.dli_sname : "?",
			 di.dli_sname ? (unsigned long)(a - (uintptr_t)di.dli_saddr)
				      : (unsigned long)(a - (uintptr_t)di.dli_fbase));
	else
		snprintf(buf, len, "?");
}

static void print_stack(const struct sample *s)
{
	char buf[160];

	printf("  stack: n=%d flags=%#x\n", s->n, s->flags);
	for (int i = 0; i < s->n; i++) {
		describe(s->pcs[i], buf, sizeof(buf));
		printf("    #%-2d %#018llx%s %s\n", i,
		       (unsigned long long)(s->pcs[i] & ~SONDE_PC_EXACT),
		       (s->pcs[i] & SONDE_PC_EXACT) ? "*" : " ", buf);
	}
}

/* Index of the first frame at or after `from` in function `name`, or -1. */
static int find_fn(const struct sample *s, int from, const char *name)
{
	for (int i = from; i < s->n; i++)
		if (is_fn(s->pcs[i], name))
			return i;
	return -1;
}

/* Complete stack whose last frame is the program's _start. */
static int reaches_start(const struct sample *s)
{
	return s->flags == 0 && s->n > 0 && is_fn(s->pcs[s->n - 1], "_start");
}

/* ------------------------------------------------------------------ */
/* Test 1: deep recursion                                              */
/* ------------------------------------------------------------------ */

#define DEPTH 50

enum { LEAF_RAISE, LEAF_SPIN, LEAF_TIME };
static volatile int g_leaf_mode;
static volatile long g_spin;
static double g_hot_ns_per_frame;
static int g_hot_frames;

NOIPA int leaf_action(void)
{
	switch (g_leaf_mode) {
	case LEAF_RAISE:
		pthread_kill(pthread_self(), SIGPROF);
		break;
	case LEAF_SPIN: {
		int start = atomic_load(&g_ns);
		timer_t t = cpu_timer(SIGPROF, 1000000, 1000000);
		while (atomic_load(&g_ns) == start)
			g_spin++;
		timer_delete(t);
		break;
	}
	case LEAF_TIME: {
		/* Hot-loop timing from a real 50-deep stack. */
		static uint64_t pcs[MAXD];
		ucontext_t uc;
		unsigned fl;
		int n = 0, iters = 200000;

		getcontext(&uc);
		uint64_t t0 = now_ns();
		for (int i = 0; i < iters; i++)
			n = uw_backtrace(&uc, t_lo, t_hi, pcs, MAXD, &fl);
		uint64_t t1 = now_ns();
		g_hot_frames = n;
		g_hot_ns_per_frame = (double)(t1 - t0) / iters / n;
		break;
	}
	}
	return 1;
}

NOIPA int recurse(int depth)
{
	volatile int pad = depth;	/* used after the call: no tail call */
	int r = depth > 0 ? recurse(depth - 1) : leaf_action();
	return r + pad;
}

/* Index of main at or after i, allowing one frame of the test function
 * `via` in between (it is inlined into main at -O2, not at -O0). */
static int main_after(const struct sample *s, int i, const char *via)
{
	if (i < s->n && is_fn(s->pcs[i], via))
		i++;
	return i < s->n && is_fn(s->pcs[i], "main") ? i : -1;
}

/* Checks a recursion sample: DEPTH+1 recurse frames, then main, libc. */
static int check_recursion(const struct sample *s)
{
	int first = find_fn(s, 0, "recurse"), n = 0, m;
	if (first < 1 || find_fn(s, 0, "leaf_action") != first - 1)
		return 0;
	while (first + n < s->n && is_fn(s->pcs[first + n], "recurse"))
		n++;
	return n == DEPTH + 1 &&
	       (m = main_after(s, first + n, "test_recursion")) > 0 &&
	       m + 1 < s->n && in_lib(s->pcs[m + 1], "libc.so") &&
	       reaches_start(s);
}

static void test_recursion(void)
{
	int i0;
	struct sample *s;

	printf("-- test 1: %d-deep recursion\n", DEPTH);
	set_bounds(1);
	g_tag = 1;

	i0 = nsamples();
	g_leaf_mode = LEAF_RAISE;
	recurse(DEPTH);
	s = &g_s[i0];
	int ok = nsamples() == i0 + 1 && check_recursion(s) &&
		 (s->pcs[0] & SONDE_PC_EXACT) && in_lib(s->pcs[0], "libc.so");
	if (!ok || getenv("SHOW"))
		print_stack(s);
	check(ok, "raise in deepest frame: 51 x recurse, main, libc, _start");
	int full = s->n;

	i0 = nsamples();
	g_leaf_mode = LEAF_SPIN;
	recurse(DEPTH);
	s = &g_s[i0];
	ok = nsamples() >= i0 + 1 && is_fn(s->pcs[0], "leaf_action") &&
	     (s->pcs[0] & SONDE_PC_EXACT) && check_recursion(s);
	if (!ok || getenv("SHOW"))
		print_stack(s);
	check(ok, "CPU-timer sample in deepest frame: leaf exact, reaches _start");

	/* Truncation: below the depth, and exactly at it. */
	i0 = nsamples();
	g_leaf_mode = LEAF_RAISE;
	g_max = 20;
	recurse(DEPTH);
	g_max = full;
	recurse(DEPTH);
	g_max = MAXD;
	ok = g_s[i0].n == 20 && g_s[i0].flags == SONDE_STACK_TRUNCATED &&
	     g_s[i0 + 1].n == full && g_s[i0 + 1].flags == 0;
	if (!ok)
		printf("  max=20: n=%d flags=%#x; max=%d: n=%d flags=%#x\n",
		       g_s[i0].n, g_s[i0].flags, full, g_s[i0 + 1].n,
		       g_s[i0 + 1].flags);
	check(ok, "max=20 -> TRUNCATED; max=exact depth -> complete");
}

/* ------------------------------------------------------------------ */
/* Test 2: qsort comparator                                            */
/* ------------------------------------------------------------------ */

static volatile unsigned g_burn_sink;

NOIPA int cmp_burn(const void *a, const void *b)
{
	unsigned x = 0;
	for (int i = 0; i < 200; i++) {
		x = x * 31 + (unsigned)i;
		__asm__ volatile("" : "+r"(x));
	}
	g_burn_sink = x;
	int ia = *(const int *)a, ib = *(const int *)b;
	return (ia > ib) - (ia < ib);
}

static double g_insitu_ns;	/* sum of handler-timed walks */
static long g_insitu_frames, g_insitu_walks;

static double g_clock_ns;	/* cost of one now_ns(), measured in main */

/* Walk cost of samples [from, to), measured in the handler. */
static void account(int from, int to, const char *what)
{
	double ns = 0;
	long frames = 0;

	for (int i = from; i < to; i++) {
		ns += g_s[i].ns - g_clock_ns;
		frames += g_s[i].n;
	}
	if (to > from && frames)
		printf("  cost %s: %d walks, %.1f frames/walk, %.0f ns/walk, %.1f ns/frame\n",
		       what, to - from, (double)frames / (to - from),
		       ns / (to - from), ns / frames);
	g_insitu_ns += ns;
	g_insitu_frames += frames;
	g_insitu_walks += to - from;
}

/* Sort until `want` samples arrived (or 20 s passed). */
static void sort_until(int want)
{
	enum { N = 20000 };
	static int arr[N];
	int i0 = nsamples();
	uint64_t deadline = now_ns() + 20000000000ull;

	while (nsamples() - i0 < want && now_ns() < deadline) {
		for (int i = 0; i < N; i++)
			arr[i] = rand();
		qsort(arr, N, sizeof(int), cmp_burn);
	}
}

static void check_qsort(int i0, int i1, const char *what)
{
	int in_cmp = 0, good = 0, shown = 0, all_ok = 0;

	for (int i = i0; i < i1; i++) {
		const struct sample *s = &g_s[i];
		if (reaches_start(s))
			all_ok++;
		if (!is_fn(s->pcs[0], "cmp_burn"))
			continue;
		in_cmp++;
		int q = -1;
		for (int j = 1; j < s->n; j++)
			if (in_lib_sym(s->pcs[j], "qsort_r")) {
				q = j;
				break;
			}
		int ok = (s->pcs[0] & SONDE_PC_EXACT) && s->n > 2 &&
			 in_lib(s->pcs[1], "libc.so") && q > 1 &&
			 find_fn(s, q + 1, "main") > q && reaches_start(s);
		if (ok)
			good++;
		else if (shown++ < 3)
			print_stack(s);
		if (ok && in_cmp == 1 && getenv("SHOW"))
			print_stack(s);
	}
	printf("  %s: samples %d, in comparator %d, good %d (%.3f%%); "
	       "all samples complete %d (%.3f%%)\n", what,
	       i1 - i0, in_cmp, good, in_cmp ? 100.0 * good / in_cmp : 0.0,
	       all_ok, i1 > i0 ? 100.0 * all_ok / (i1 - i0) : 0.0);
	char msg[160];
	snprintf(msg, sizeof(msg),
		 "%s: >=99.5%% of comparator samples pass qsort_r and reach main",
		 what);
	check(in_cmp >= 200 && good >= in_cmp * 0.995, msg);
}

static void test_qsort(void)
{
	printf("-- test 2: qsort comparator\n");
	set_bounds(1);
	g_tag = 2;
	srand(1);

	/* CPU-time timer: fires at the kernel tick, so few samples. */
	int i0 = nsamples();
	timer_t t = cpu_timer(SIGPROF, 250000, 250000);
	sort_until(400);
	timer_delete(t);
	int i1 = nsamples();
	account(i0, i1, "qsort/CPU timer");
	check_qsort(i0, i1, "CPU timer");

	/* Many more, quickly, from a sampler thread. */
	start_sampler(pthread_self(), 100000);
	sort_until(5000);
	stop_sampler();
	int i2 = nsamples();
	account(i1, i2, "qsort/pthread_kill");
	check_qsort(i1, i2, "pthread_kill every 100 us");
}

/* ------------------------------------------------------------------ */
/* Test 3: a pthread                                                   */
/* ------------------------------------------------------------------ */

NOIPA unsigned long thread_leaf(unsigned long x)
{
	for (int i = 0; i < 100; i++) {
		x = x * 3 + 1;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOIPA unsigned long thread_burn(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += thread_leaf(i);
	return s;
}

static atomic_int g_thread_tid;
static volatile int g_thread_stop;

/* Burns until told to stop; sampled from outside. */
static void *thread_main(void *arg)
{
	(void)arg;
	set_bounds(0);	/* unknown bounds: exercises the probing */
	atomic_store(&g_thread_tid, gettid());
	while (!g_thread_stop)
		g_burn_sink += (unsigned)thread_burn(1000);
	return NULL;
}

/* Run thread_main and sample it until `want` samples or `max_ns`. */
static pthread_t run_thread(void)
{
	pthread_t th;

	g_thread_stop = 0;
	atomic_store(&g_thread_tid, 0);
	pthread_create(&th, NULL, thread_main, NULL);
	while (!atomic_load(&g_thread_tid))
		sched_yield();
	start_sampler(th, 100000);
	return th;
}

static void end_thread(pthread_t th)
{
	stop_sampler();
	g_thread_stop = 1;
	pthread_join(th, NULL);
}

static int check_thread_samples(int tag, int from, int to, int tid,
				int *total)
{
	int good = 0, shown = 0;

	*total = 0;
	for (int i = from; i < to; i++) {
		const struct sample *s = &g_s[i];
		if (s->tag != tag || s->tid != tid ||
		    !(is_fn(s->pcs[0], "thread_leaf") ||
		      is_fn(s->pcs[0], "thread_burn")))
			continue;
		(*total)++;
		int m = find_fn(s, 1, "thread_main");
		int ok = m > 0 && s->flags == 0 && s->n == m + 3 &&
			 in_lib(s->pcs[m + 1], "libc.so") &&
			 in_lib(s->pcs[m + 2], "libc.so");
		if (ok)
			good++;
		else if (shown++ < 3)
			print_stack(s);
	}
	return good;
}

static void test_thread(void)
{
	int total, good, i0 = nsamples();

	printf("-- test 3: samples in a pthread (stack bounds unknown)\n");
	g_tag = 3;
	pthread_t th = run_thread();
	uint64_t deadline = now_ns() + 20000000000ull;
	while (nsamples() - i0 < 3000 && now_ns() < deadline)
		usleep(10000);
	end_thread(th);
	int i1 = nsamples();
	account(i0, i1, "thread, unknown bounds");
	good = check_thread_samples(3, i0, i1, atomic_load(&g_thread_tid),
				    &total);
	printf("  samples %d, in thread_burn/leaf %d, good %d (%.3f%%)\n",
	       i1 - i0, total, good, total ? 100.0 * good / total : 0.0);
	if (total && getenv("SHOW")) {
		for (int i = i0; i < i1; i++)
			if (is_fn(g_s[i].pcs[0], "thread_leaf")) {
				print_stack(&g_s[i]);
				break;
			}
	}
	check(total >= 1000 && good >= total * 0.995,
	      ">=99.5% of thread samples: thread_main, start_thread, clone, end");
}

/* ------------------------------------------------------------------ */
/* Test 4: samples inside the program's own signal handler             */
/* ------------------------------------------------------------------ */

static volatile int g_usr_done;

NOIPA unsigned long usr_burn(void)
{
	int i0 = nsamples();
	unsigned long x = 0;
	uint64_t deadline = now_ns() + 10000000000ull;
	while (nsamples() - i0 < 2000 && now_ns() < deadline) {
		for (int i = 0; i < 1000; i++) {
			x = x * 7 + (unsigned)i;
			__asm__ volatile("" : "+r"(x));
		}
	}
	return x;
}

static void on_usr(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	g_burn_sink += (unsigned)usr_burn();
	g_usr_done = 1;
}

NOIPA void spinner(void)
{
	while (!g_usr_done)
		g_spin++;
}

/* A sigreturn trampoline without CFI (like a program's or a JIT's own
 * SA_RESTORER): the unwinder must recognise it by its bytes.  The nop in
 * front keeps return-address-minus-one out of any other FDE. */
void test_restorer(void);
__asm__(".pushsection .text.sonde_test_restorer,\"ax\",@progbits\n"
	".balign 16\n"
	"nop\n"
	".globl test_restorer\n"
	".type test_restorer,@function\n"
	"test_restorer:\n"
	".byte 0x48,0xc7,0xc0,0x0f,0x00,0x00,0x00\n"	/* mov $15,%rax */
	".byte 0x0f,0x05\n"				/* syscall */
	"hlt\n"
	".size test_restorer, .-test_restorer\n"
	".popsection\n");

struct kernel_sigaction {
	void (*handler)(int, siginfo_t *, void *);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};
#define KSA_RESTORER 0x04000000ul

static void sighandler_case(int raw, const char *what)
{
	int signo = raw ? SIGUSR2 : SIGUSR1;
	int i0 = nsamples(), total = 0, good = 0, shown = 0;

	if (raw) {
		struct kernel_sigaction ksa;
		memset(&ksa, 0, sizeof(ksa));
		ksa.handler = on_usr;
		ksa.flags = SA_SIGINFO | SA_RESTART | KSA_RESTORER;
		ksa.restorer = test_restorer;
		if (syscall(SYS_rt_sigaction, signo, &ksa, NULL, 8)) {
			perror("rt_sigaction");
			exit(2);
		}
	} else {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_usr;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigaction(signo, &sa, NULL);
	}
	g_usr_done = 0;
	start_sampler(pthread_self(), 100000);
	timer_t tu = cpu_timer(signo, 3000000, 0);	/* once, in spinner */
	spinner();
	timer_delete(tu);
	stop_sampler();
	int i1 = nsamples();
	account(i0, i1, raw ? "own handler, raw restorer" : "own handler");

	for (int i = i0; i < i1; i++) {
		const struct sample *s = &g_s[i];
		if (!is_fn(s->pcs[0], "usr_burn"))
			continue;
		total++;
		int k = -1;
		for (int j = 1; j < s->n; j++)
			if (s->pcs[j] & SONDE_PC_EXACT) {
				k = j;
				break;
			}
		int tramp_ok = k >= 2 &&
			(raw ? (uintptr_t)(s->pcs[k - 1] & ~SONDE_PC_EXACT) ==
				       (uintptr_t)test_restorer
			     : in_lib(s->pcs[k - 1], "libc.so"));
		int ok = k > 0 && is_fn(s->pcs[k], "spinner") && tramp_ok &&
			 is_fn(s->pcs[k - 2], "on_usr") &&
			 is_fn(s->pcs[k + 1], "sighandler_case") &&
			 main_after(s, k + 2, "test_sighandler") > 0 &&
			 reaches_start(s);
		if (ok)
			good++;
		else if (shown++ < 3)
			print_stack(s);
		if (ok && total == 1 && getenv("SHOW"))
			print_stack(s);
	}
	printf("  %s: samples in handler %d, good %d (%.3f%%)\n", what, total,
	       good, total ? 100.0 * good / total : 0.0);
	char msg[200];
	snprintf(msg, sizeof(msg),
		 "%s: handler samples pass the signal frame, interrupted frame exact, reach main",
		 what);
	check(total >= 1000 && good >= total * 0.995, msg);
}

static void test_sighandler(void)
{
	printf("-- test 4: samples inside the program's own signal handler\n");
	set_bounds(1);
	g_tag = 4;
	sighandler_case(0, "glibc __restore_rt (CFI 'S')");
	sighandler_case(1, "CFI-less SA_RESTORER (code bytes)");
}

/* ------------------------------------------------------------------ */
/* Test 6: vDSO and PLT                                                */
/* ------------------------------------------------------------------ */

static int in_plt(uint64_t raw)
{
	uintptr_t pc = (uintptr_t)(raw & ~SONDE_PC_EXACT);
	for (int i = 0; i < g_nplt; i++)
		if (pc >= g_plt_lo[i] && pc < g_plt_hi[i])
			return 1;
	return 0;
}

NOIPA unsigned long vdso_loop(void)
{
	struct timespec ts;
	unsigned long s = 0;
	for (int i = 0; i < 100000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s += (unsigned long)ts.tv_nsec;
	}
	return s;
}

NOIPA unsigned long plt_loop(void)
{
	unsigned seed = 1;
	unsigned long s = 0;
	for (int i = 0; i < 100000; i++)
		s += (unsigned)rand_r(&seed);	/* a call through the PLT */
	return s;
}

/* Samples in a PLT stub taken by single-stepping: an AMD EPYC's timer
 * interrupts never landed on the stub's one `jmp *GOT` (0 of 3000 samples
 * at 100 us, every run), an Intel's did, so the sampled check alone proves
 * nothing on some machines.  plt_step_call sets the trap flag before a call
 * through the PLT to getppid (called nowhere else, so the first call takes
 * the lazy-binding path through the stub's push and PLT0); the CPU then
 * traps after each instruction, and on_step records a sample (the same
 * handler as the profiling signal) at every one inside the PLT, and stops
 * stepping once the PC has left it. */
__asm__(".text\n"
	".globl plt_step_call\n"
	".type plt_step_call, @function\n"
	"plt_step_call:\n"
	".cfi_startproc\n"
	"	sub $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	pushfq\n"
	".cfi_adjust_cfa_offset 8\n"
	"	orq $0x100, (%rsp)\n"
	"	popfq\n"	/* TF traps after the next instruction: the call */
	".cfi_adjust_cfa_offset -8\n"
	"	call getppid@PLT\n"
	"	add $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size plt_step_call, .-plt_step_call\n");
int plt_step_call(void);

static volatile int g_stepping;

static void on_step(int sig, siginfo_t *si, void *uc)
{
	ucontext_t *u = uc;
	uint64_t pc = (uint64_t)u->uc_mcontext.gregs[REG_RIP];

	if (g_stepping && in_plt(pc)) {
		on_prof(sig, si, uc);
		return;
	}
	u->uc_mcontext.gregs[REG_EFL] &= ~0x100LL;
	g_stepping = 0;
}

static void test_vdso_plt(void)
{
	int total = 0, good = 0, shown = 0;

	printf("-- test 6: samples in the vDSO and in PLT stubs\n");
	set_bounds(1);
	g_tag = 6;
	int i0 = nsamples();
	start_sampler(pthread_self(), 100000);
	uint64_t end = now_ns() + 10000000000ull;
	while (now_ns() < end && nsamples() - i0 < 3000)
		g_burn_sink += (unsigned)vdso_loop();
	int i1 = nsamples();
	while (now_ns() < end && nsamples() - i1 < 3000)
		g_burn_sink += (unsigned)plt_loop();
	stop_sampler();
	int i2 = nsamples();
	account(i0, i1, "vdso loop");
	account(i1, i2, "plt loop");

	for (int i = i0; i < i1; i++) {
		const struct sample *s = &g_s[i];
		if (!in_lib(s->pcs[0], "vdso"))
			continue;
		total++;
		if (reaches_start(s) && find_fn(s, 1, "vdso_loop") > 0)
			good++;
		else if (shown++ < 3)
			print_stack(s);
	}
	printf("  vDSO: samples %d, leaf in vDSO %d, good %d\n", i1 - i0,
	       total, good);
	check(total >= 200 && good >= total * 0.995,
	      "samples in the vDSO reach vdso_loop and _start");

	total = good = shown = 0;
	for (int i = i1; i < i2; i++) {
		const struct sample *s = &g_s[i];
		if (!in_plt(s->pcs[0]))
			continue;
		total++;
		if (reaches_start(s) && find_fn(s, 1, "plt_loop") == 1)
			good++;
		else if (shown++ < 3)
			print_stack(s);
	}
	printf("  PLT: samples %d, leaf in PLT %d, good %d\n", i2 - i1, total,
	       good);
	/* How many land in the stub depends on the CPU (see on_step). */
	check(good >= total * 0.995,
	      "sampled PLT stubs (CFA expression) reach plt_loop and _start");

	/* Every instruction of the stub, stepped: the lazy path, then the
	 * bound one. */
	struct sigaction sa, old_sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_step;
	sa.sa_flags = SA_SIGINFO;
	sigfillset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, &old_sa);
	int s0 = nsamples();
	for (int k = 0; k < 2; k++) {
		g_stepping = 1;
		g_burn_sink += (unsigned)plt_step_call();
	}
	sigaction(SIGTRAP, &old_sa, NULL);
	int s1 = nsamples();
	total = good = shown = 0;
	for (int i = s0; i < s1; i++) {
		const struct sample *s = &g_s[i];
		total++;
		if (in_plt(s->pcs[0]) && reaches_start(s) && find_fn(s, 1, "plt_step_call") == 1)
			good++;
		else if (shown++ < 3)
			print_stack(s);
	}
	printf("  PLT, stepped: %d instructions in the stub over 2 calls, good %d\n", total, good);
	check(total >= 3 && good == total,
	      "every stepped instruction of a PLT stub (lazy and bound) reaches its caller and _start");
}

/* ------------------------------------------------------------------ */
/* Test 7: refresh with dlopen/dlclose during sampling                 */
/* ------------------------------------------------------------------ */

static void test_refresh(void)
{
	pthread_t th;
	int total, good, i0 = nsamples(), rounds = 0, bad_refresh = 0;
	int base = uw_object_count(), with = 0;

	printf("-- test 7: uw_refresh + dlopen/dlclose while a thread is sampled\n");
	g_tag = 7;
	th = run_thread();
	/* At least 1 s, and until 1500 samples (20 s at most): the sampler
	 * thread's wake-ups are wall-clock time, and on a busy machine 1 s
	 * gave fewer than the 1000 samples checked below. */
	uint64_t start = now_ns(), end = start + 1000000000ull, deadline = start + 20000000000ull;
	while (now_ns() < end || (nsamples() - i0 < 1500 && now_ns() < deadline)) {
		void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		if (uw_refresh())
			bad_refresh++;
		if (uw_object_count() > with)
			with = uw_object_count();
		if (h)
			dlclose(h);
		if (uw_refresh())
			bad_refresh++;
		rounds++;
	}
	end_thread(th);
	int i1 = nsamples();
	account(i0, i1, "thread during refresh");
	good = check_thread_samples(7, i0, i1, atomic_load(&g_thread_tid),
				    &total);
	printf("  %d refresh rounds (objects %d, %d with libm), thread samples %d, good %d\n",
	       rounds, base, with, total, good);
	check(bad_refresh == 0 && rounds > 10 && total >= 1000 &&
	      good >= total * 0.995,
	      "walks stay correct while the table is republished");
}

/* ------------------------------------------------------------------ */
/* Test 8: frames without CFI (fallbacks)                              */
/* ------------------------------------------------------------------ */

/* Two functions with no CFI at all.  nocfi_spin(flag) spins without
 * touching the stack (the leaf fallback: RA at [sp]); nocfi_fp(fn) builds
 * an rbp frame and calls fn (the frame-pointer fallback). */
void nocfi_spin(volatile int *flag);
void nocfi_fp(void (*fn)(void));
__asm__(".pushsection .text.sonde_test_nocfi,\"ax\",@progbits\n"
	".balign 16\n"
	".globl nocfi_spin\n"
	".type nocfi_spin,@function\n"
	"nocfi_spin:\n"
	"1: movl (%rdi), %eax\n"
	"   testl %eax, %eax\n"
	"   je 1b\n"
	"   ret\n"
	".size nocfi_spin, .-nocfi_spin\n"
	".balign 16\n"
	".globl nocfi_fp\n"
	".type nocfi_fp,@function\n"
	"nocfi_fp:\n"
	"   pushq %rbp\n"
	"   movq %rsp, %rbp\n"
	"   subq $16, %rsp\n"
	"   call *%rdi\n"
	"   leave\n"
	"   ret\n"
	".size nocfi_fp, .-nocfi_fp\n"
	".popsection\n");

NOIPA void fp_target(void)
{
	while (!g_stop_flag)
		g_spin++;
}

static int nocfi_case(int fp, int i0, int i1)
{
	int total = 0, good = 0, shown = 0;

	for (int i = i0; i < i1; i++) {
		const struct sample *s = &g_s[i];
		int ok;
		if (fp) {
			if (!is_fn(s->pcs[0], "fp_target"))
				continue;
			ok = s->n > 3 && is_fn(s->pcs[1], "nocfi_fp") &&
			     is_fn(s->pcs[2], "test_nocfi");
		} else {
			if (!is_fn(s->pcs[0], "nocfi_spin"))
				continue;
			ok = s->n > 2 && is_fn(s->pcs[1], "test_nocfi");
		}
		total++;
		ok = ok && find_fn(s, 1, "main") > 0 && reaches_start(s);
		if (ok)
			good++;
		else if (shown++ < 3)
			print_stack(s);
	}
	printf("  %s: samples %d, good %d\n",
	       fp ? "frame-pointer frame" : "leaf without CFI", total, good);
	return total >= 200 && good >= total * 0.995;
}

NOIPA void test_nocfi(void)
{
	printf("-- test 8: code without CFI (leaf at [sp], rbp chain)\n");
	set_bounds(1);
	g_tag = 8;

	int i0 = nsamples();
	g_stop_flag = 0;
	atomic_store(&g_stop_at, i0 + 1000);
	start_sampler(pthread_self(), 100000);
	nocfi_spin(&g_stop_flag);
	stop_sampler();
	int i1 = nsamples();
	check(nocfi_case(0, i0, i1),
	      "leaf in CFI-less code: RA at [sp], reaches _start");

	g_stop_flag = 0;
	atomic_store(&g_stop_at, i1 + 1000);
	start_sampler(pthread_self(), 100000);
	nocfi_fp(fp_target);
	stop_sampler();
	atomic_store(&g_stop_at, 0);
	int i2 = nsamples();
	check(nocfi_case(1, i1, i2),
	      "CFI-less rbp frame: frame-pointer fallback, reaches _start");
}

/* ------------------------------------------------------------------ */
/* Test 8b: a JIT's code crossed to its entry stub (uw_jit_region)      */
/* ------------------------------------------------------------------ */

/* Code made at run time, as a JIT makes it, in anonymous memory no
 * object describes.  The stub (at 0) makes an rbp frame and calls the
 * JIT's code in rdi; the code (at 64) pushes rbp, stores a stale copy of
 * a return address into the stub in its frame (whose "saved rbp" is 0),
 * clobbers rbp (HotSpot's compiled code uses it as it likes) and spins
 * until *rsi. */
static const uint8_t jit_stub[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3 };
#define JIT_STUB_RA 6 /* after the call */
static uint8_t jit_code[] = {
	0x55,						/* push rbp */
	0x48, 0x83, 0xec, 0x28,				/* sub rsp, 0x28 */
	0x48, 0xc7, 0x04, 0x24, 0, 0, 0, 0,		/* mov qword [rsp], 0 */
	0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,		/* movabs rax, stub + 3 (at 15) */
	0x48, 0x89, 0x44, 0x24, 0x08,			/* mov [rsp + 8], rax */
	0x48, 0xbd, 0x34, 0x12, 0, 0, 0, 0, 0, 0,	/* movabs rbp, 0x1234 */
	0x8b, 0x06, 0x85, 0xc0, 0x74, 0xfa,		/* 1: mov eax, [rsi]; test; je 1b */
	0x48, 0x83, 0xc4, 0x28,				/* add rsp, 0x28 */
	0x5d, 0xc3,					/* pop rbp; ret */
};

typedef void jit_stub_fn(void *code, volatile int *flag);

NOIPA void jit_caller(jit_stub_fn *stub, void *code)
{
	stub(code, &g_stop_flag);
	g_spin++; /* no tail call: this frame is to be found */
}

/* Samples in the JIT's spin loop: how many, and how many whose walk went
 * through the stub's frame (its return address, exact no more) to
 * jit_caller, test_jit and _start. */
static void jit_count(int i0, int i1, uintptr_t code, uintptr_t stub, int *total, int *good)
{
	int shown = 0;
	*total = *good = 0;
	for (int i = i0; i < i1; i++) {
		const struct sample *s = &g_s[i];
		uint64_t pc = s->pcs[0] & ~SONDE_PC_EXACT;
		if (s->n < 1 || pc < code || pc >= code + sizeof jit_code)
			continue;
		(*total)++;
		if (s->n > 3 && s->pcs[1] == stub + JIT_STUB_RA && is_fn(s->pcs[2], "jit_caller") &&
		    is_fn(s->pcs[3], "test_jit") && reaches_start(s))
			(*good)++;
		else if (shown++ < 2 && *good)
			print_stack(s);
	}
}

NOIPA void test_jit(void)
{
	printf("-- test 8b: a JIT's code, crossed to its entry stub\n");
	set_bounds(1);
	g_tag = 8;
	uint8_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		check(0, "mmap for the JIT's code");
		return;
	}
	uintptr_t stub = (uintptr_t)m, code = stub + 64, stale = stub + 3;
	memcpy(m, jit_stub, sizeof jit_stub);
	memcpy(jit_code + 15, &stale, 8);
	memcpy(m + 64, jit_code, sizeof jit_code);
	if (mprotect(m, 4096, PROT_READ | PROT_EXEC)) {
		check(0, "mprotect for the JIT's code");
		return;
	}
	int total[2], good[2];
	for (int pass = 0; pass < 2; pass++) {
		/* first as any unknown code (the walk stops in it), then
		 * registered */
		if (pass == 1 && uw_jit_region(stub, stub + 4096, stub, stub + sizeof jit_stub)) {
			check(0, "uw_jit_region takes the region");
			return;
		}
		int i0 = nsamples();
		g_stop_flag = 0;
		atomic_store(&g_stop_at, i0 + 600);
		start_sampler(pthread_self(), 100000);
		jit_caller((jit_stub_fn *)stub, (void *)code);
		stop_sampler();
		atomic_store(&g_stop_at, 0);
		jit_count(i0, nsamples(), code, stub, &total[pass], &good[pass]);
	}
	printf("  unregistered: %d samples in the JIT's code, %d crossed; registered: %d, %d crossed\n", total[0],
	       good[0], total[1], good[1]);
	check(total[0] >= 100 && good[0] == 0, "a JIT's code no region names stops the walk");
	check(total[1] >= 100 && good[1] >= total[1] * 0.995,
	      "a registered JIT's code: crossed past a stale return address to the stub, reaches _start");
	check(uw_jit_region(stub, stub, stub, stub + 8) == -1, "uw_jit_region refuses an empty range");
	munmap(m, 4096);
}

/* ------------------------------------------------------------------ */
/* Test 9: CFA and register rules given as DWARF expressions           */
/* ------------------------------------------------------------------ */

/* cfi_expr_fn(fn) saves rbx and rbp, clobbers both and calls fn.  At the
 * call its CFA is a DW_CFA_def_cfa_expression (breg7 0, plus_uconst 48),
 * rbp is a DW_CFA_val_expression ([CFA - 24]: lit24, minus, deref) and rbx
 * a DW_CFA_expression computing CFA - 16 the long way (see below), so no
 * row is "simple" and the general rule interpreter and the expression
 * evaluator are exercised.  (The unusual stack ops are kept out
 * of the CFA and rbp rules: valgrind's CFI reader asserts on them.)
 * cfi_rbx_frame(fn) calls cfi_expr_fn(fn) with its CFA defined as rbx + 16,
 * so its frame is found only if rbx was recovered right. */
void cfi_expr_fn(void (*fn)(void));
void cfi_rbx_frame(void (*fn)(void));
__asm__(".pushsection .text.sonde_test_cfi_expr,\"ax\",@progbits\n"
	".balign 16\n"
	".globl cfi_expr_fn\n"
	".type cfi_expr_fn,@function\n"
	"cfi_expr_fn:\n"
	"   .cfi_startproc\n"
	"   pushq %rbx\n"
	"   .cfi_adjust_cfa_offset 8\n"
	"   .cfi_offset %rbx, -16\n"
	"   pushq %rbp\n"
	"   .cfi_adjust_cfa_offset 8\n"
	"   .cfi_offset %rbp, -24\n"
	"   subq $24, %rsp\n"
	"   .cfi_adjust_cfa_offset 24\n"
	"   .cfi_remember_state\n"
	"   .cfi_escape 0x0f, 4, 0x77,0x00, 0x23,0x30\n"
	/* rbx, from [C]: lit16 dup plus lit11 swap minus (C,-21) pick1
	 * plus (C,C-21) over swap lit5 (C,C,C-21,5) rot (C,5,C,C-21)
	 * minus minus plus (C-16); lit1 bra+1 over a drop; lit0 bra+1 (not
	 * taken) lit0 plus; skip+1 over a drop; nop.  A wrong dup, over,
	 * pick, swap, rot, minus, bra or skip changes the result or breaks
	 * the stack. */
	"   .cfi_escape 0x10, 0x03, 32, 0x40, 0x12, 0x22, 0x3b, 0x16, 0x1c,"
	"               0x15,0x01, 0x22, 0x14, 0x16, 0x35, 0x17, 0x1c, 0x1c,"
	"               0x22, 0x31, 0x28,0x01,0x00, 0x13, 0x30, 0x28,0x01,0x00,"
	"               0x30, 0x22, 0x2f,0x01,0x00, 0x13, 0x96\n"
	"   .cfi_escape 0x16, 0x06, 0x03, 0x48, 0x1c, 0x06\n"
	"   movq $0x1234, %rbx\n"
	"   movq $0x5678, %rbp\n"
	"   call *%rdi\n"
	"   .cfi_restore_state\n"
	"   addq $24, %rsp\n"
	"   .cfi_adjust_cfa_offset -24\n"
	"   popq %rbp\n"
	"   .cfi_adjust_cfa_offset -8\n"
	"   .cfi_restore %rbp\n"
	"   popq %rbx\n"
	"   .cfi_adjust_cfa_offset -8\n"
	"   .cfi_restore %rbx\n"
	"   ret\n"
	"   .cfi_endproc\n"
	".size cfi_expr_fn, .-cfi_expr_fn\n"
	".balign 16\n"
	".globl cfi_rbx_frame\n"
	".type cfi_rbx_frame,@function\n"
	"cfi_rbx_frame:\n"
	"   .cfi_startproc\n"
	"   pushq %rbx\n"
	"   .cfi_adjust_cfa_offset 8\n"
	"   .cfi_offset %rbx, -16\n"
	"   movq %rsp, %rbx\n"
	"   .cfi_def_cfa_register %rbx\n"
	"   subq $32, %rsp\n"
	"   call cfi_expr_fn\n"
	"   movq %rbx, %rsp\n"
	"   .cfi_def_cfa_register %rsp\n"
	"   popq %rbx\n"
	"   .cfi_adjust_cfa_offset -8\n"
	"   .cfi_restore %rbx\n"
	"   ret\n"
	"   .cfi_endproc\n"
	".size cfi_rbx_frame, .-cfi_rbx_frame\n"
	".popsection\n");

NOIPA void expr_target(void)
{
	while (!g_stop_flag)
		g_spin++;
}

/* Uses rbp as frame pointer: its CFA (rbp + 16) is right only if the
 * unwinder recovered rbp through cfi_expr_fn's val_expression. */
NOIPA FRAME_POINTER void expr_caller(void)
{
	volatile char pad[32];
	pad[0] = 1;
	cfi_rbx_frame(expr_target);
	g_burn_sink += pad[0];
}

NOIPA void test_cfi_expr(void)
{
	int total = 0, good = 0, shown = 0;

	printf("-- test 9: CFA/register rules as DWARF expressions\n");
	set_bounds(1);
	g_tag = 9;
	int i0 = nsamples();
	g_stop_flag = 0;
	atomic_store(&g_stop_at, i0 + 1000);
	start_sampler(pthread_self(), 100000);
	expr_caller();
	stop_sampler();
	atomic_store(&g_stop_at, 0);
	int i1 = nsamples();
	account(i0, i1, "expression rules");
	for (int i = i0; i < i1; i++) {
		const struct sample *s = &g_s[i];
		if (!is_fn(s->pcs[0], "expr_target"))
			continue;
		total++;
		if (s->n > 5 && is_fn(s->pcs[1], "cfi_expr_fn") &&
		    is_fn(s->pcs[2], "cfi_rbx_frame") &&
		    is_fn(s->pcs[3], "expr_caller") &&
		    is_fn(s->pcs[4], "test_cfi_expr") &&
		    is_fn(s->pcs[5], "main") && reaches_start(s))
			good++;
		else if (shown++ < 3)
			print_stack(s);
	}
	printf("  samples %d, good %d\n", total, good);
	check(total >= 200 && good >= total * 0.995,
	      "def_cfa_expression, expression, val_expression; CFA = rbx/rbp + n");
}

/* ------------------------------------------------------------------ */
/* Test 10: garbage contexts and stacks never fault                    */
/* ------------------------------------------------------------------ */

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

/* Test 11's code: getpid by a raw `syscall`, then the registers the
 * return left (rcx, r11) stored through the argument, 40 bytes of nops
 * and a ret. */
void at_sys_fn(uint64_t out[2]);
extern const char at_sys_end[], at_sys_far[];
__asm__(".pushsection .text\n"
	".globl at_sys_fn\n.type at_sys_fn, @function\n"
	"at_sys_fn:\n"
	"	mov $39, %eax\n"
	"	syscall\n"
	"at_sys_end:\n"
	"	mov %rcx, (%rdi)\n"
	"	mov %r11, 8(%rdi)\n"
	"	.fill 40, 1, 0x90\n"
	"at_sys_far:\n"
	"	ret\n"
	".size at_sys_fn, . - at_sys_fn\n"
	".popsection\n");

static void test_at_syscall(void)
{
	printf("-- test 11: uw_at_syscall\n");
	uint64_t r[2];
	at_sys_fn(r);
	uintptr_t end = (uintptr_t)at_sys_end, far = (uintptr_t)at_sys_far;
	uw_refresh();
	check(r[0] == end, "a syscall's return leaves its return address in rcx");
	check(uw_at_syscall(end, 0, 0), "the pc just after a syscall is at one");
	check(uw_at_syscall(end - 2, 0, 0), "the pc on a syscall (restarted) is at one");
	check(!uw_at_syscall(end + 3, 0, 0), "3 bytes past a syscall, rcx gone: not at one");
	check(uw_at_syscall(end + 3, r[0], r[1]), "3 bytes past, rcx and r11 as the return left them: at one");
	check(uw_at_syscall(end + 32, r[0], r[1]), "32 bytes past, rcx and r11 kept: at one");
	check(!uw_at_syscall(far, r[0], r[1]), "40 bytes past (beyond 32): not at one");
	check(!uw_at_syscall(end + 3, r[0], 0x12345678), "r11 no flags: not at one");
	check(!uw_at_syscall(end + 3, r[0], r[1] & ~(uint64_t)0x200), "r11 without IF: not at one");
	check(!uw_at_syscall(end + 3, end + 1, r[1]), "rcx not at a syscall's end: not at one");
	check(!uw_at_syscall(end + 3, 16, r[1]), "rcx unmapped: not at one");
	check(!uw_at_syscall((uintptr_t)test_at_syscall + 8, r[0], r[1]), "a pc before rcx: not at one");
}

/* Plausible register values (out of line: getcontext returns twice). */
NOIPA static void base_context(ucontext_t *uc)
{
	getcontext(uc);
}

static void test_fuzz(void)
{
	enum { JUNK = 16384, ITERS = 300000 };
	static uint64_t junk[JUNK];
	static uint64_t pcs[64];
	ucontext_t base;
	Dl_info di;
	int bad = 0, outcome[4] = { 0 };

	printf("-- test 10: walks from garbage contexts and stacks\n");
	set_bounds(1);
	base_context(&base);
	if (!dladdr((void *)qsort, &di)) {
		check(0, "dladdr(qsort)");
		return;
	}
	uintptr_t libc = (uintptr_t)di.dli_fbase;
	uintptr_t exe = g_fs[0].lo & ~(uintptr_t)0xfff;
	uintptr_t jlo = (uintptr_t)junk, jhi = (uintptr_t)(junk + JUNK);
	uint64_t t0 = now_ns();

	for (int it = 0; it < ITERS; it++) {
		if (it % 1000 == 0) {
			/* Plausible garbage: code addresses, pointers into
			 * the junk (both directions), small numbers, zeros,
			 * and now and then an rt_sigframe-looking block. */
			for (int i = 0; i < JUNK; i++) {
				uint64_t r = rnd();
				switch (r % 6) {
				case 0: junk[i] = libc + (r >> 8) % 0x180000; break;
				case 1: junk[i] = exe + (r >> 8) % 0x8000; break;
				case 2: junk[i] = jlo + (r >> 8) % (JUNK * 8); break;
				case 3: junk[i] = (r >> 8) % 4096; break;
				case 4: junk[i] = 0; break;
				default: junk[i] = r; break;
				}
			}
		}
		ucontext_t uc = base;
		greg_t *g = uc.uc_mcontext.gregs;
		uintptr_t lo = jlo, hi = jhi;
		uint64_t r = rnd();
		int mode = (int)(r % 8);

		for (int i = 0; i < NGREG; i++)
			if (rnd() & 1)
				g[i] = (greg_t)junk[rnd() % JUNK];
		g[REG_RSP] = (greg_t)(jlo + (rnd() % (JUNK * 8 - 64)));
		g[REG_RIP] = (greg_t)(libc + rnd() % 0x180000);
		switch (mode) {
		case 1:	/* exe code */
			g[REG_RIP] = (greg_t)(exe + rnd() % 0x8000);
			break;
		case 2:	/* the restorer bytes: garbage ucontext */
			g[REG_RIP] = (greg_t)(uintptr_t)test_restorer;
			break;
		case 3:	/* unknown bounds: probes */
			if (it % 16 == 0)
				lo = hi = 0;
			break;
		case 4:	/* wild sp, unknown bounds */
			if (it % 16 == 0) {
				g[REG_RSP] = (greg_t)rnd();
				lo = hi = 0;
			}
			break;
		case 5:	/* wild pc */
			g[REG_RIP] = (greg_t)rnd();
			break;
		case 6:	/* the real stack below our frame: stale data */
			g[REG_RSP] = (greg_t)((uintptr_t)&uc - 4096 +
					      rnd() % 8192);
			lo = t_lo;
			hi = t_hi;
			break;
		default:
			break;
		}
		unsigned fl = 0;
		int n = uw_backtrace(&uc, lo, hi, pcs, 64, &fl);
		if (n < 1 || n > 64 || (fl & ~3u))
			bad++;
		outcome[fl & 3]++;
	}
	uint64_t t1 = now_ns();
	printf("  %d walks in %.0f ms: complete %d, truncated %d, incomplete %d, "
	       "bad results %d\n", ITERS, (t1 - t0) / 1e6, outcome[0],
	       outcome[SONDE_STACK_TRUNCATED], outcome[SONDE_STACK_INCOMPLETE],
	       bad);
	check(bad == 0, "no fault and sane results from garbage contexts");
}

/* ------------------------------------------------------------------ */

int main(void)
{
	struct sigaction sa;

	setvbuf(stdout, NULL, _IOLBF, 0);
	load_exe_symbols();
	if (uw_refresh()) {
		printf("uw_refresh failed\n0 passed, 1 failed\n");
		return 1;
	}
	printf("objects in table: %d\n", uw_object_count());
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	/* Like a profiler: the sample handler is not interrupted by the
	 * program's own signals (test 4's SIGUSR1 would otherwise run its
	 * long handler nested inside a sample, with SIGPROF blocked). */
	sigfillset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	uint64_t t0 = now_ns();
	for (int i = 0; i < 1000; i++)
		now_ns();
	g_clock_ns = (double)(now_ns() - t0) / 1000;

	test_recursion();
	test_qsort();
	test_thread();
	test_sighandler();

	printf("-- test 5: time per frame\n");
	set_bounds(1);
	g_leaf_mode = LEAF_TIME;
	recurse(DEPTH);
	printf("  hot loop (row cache warm), %d-frame stack: %.1f ns/frame\n",
	       g_hot_frames, g_hot_ns_per_frame);
	if (g_insitu_frames)
		printf("  in signal handlers (tests 2-4): %ld walks, %ld frames: "
		       "%.1f ns/frame, %.0f ns/walk (one clock read, %.0f ns, "
		       "removed per walk)\n",
		       g_insitu_walks, g_insitu_frames,
		       g_insitu_ns / g_insitu_frames,
		       g_insitu_ns / g_insitu_walks, g_clock_ns);
	check(g_hot_frames == DEPTH + 6,
	      "timing walk: leaf_action, 51 x recurse, main, 2 x libc, _start");

	test_vdso_plt();
	test_refresh();
	test_nocfi();
	test_jit();
	test_cfi_expr();
	test_at_syscall();
	test_fuzz();

	check(atomic_load(&g_errno_bad) == 0, "uw_backtrace preserves errno");
	printf("%d passed, %d failed\n", g_pass, g_fail);
	return g_fail ? 1 : 0;
}
