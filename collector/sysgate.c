/*
 * The target's seccomp filters, applied to the collector's own system
 * calls before the kernel applies them.
 *
 * A filter the target installs judges every system call of its threads,
 * the collector's included, and an allow-list filter kills the process
 * (SECCOMP_RET_KILL_PROCESS) for a call the target never makes itself: a
 * getrusage in the sampling handler, a descriptor check before a write to
 * log.xml.  The collector sees each filter as it is installed (prctl and
 * syscall(3) are interposed: interpose.c), copies its program, and from
 * then on asks it, with the call's real arguments, before each system call
 * of its own (sonde_syscall, sonde_sys6): a call that the filters would not
 * allow is not made and fails with EPERM, which each caller already handles
 * as the call failing (a sample without its microstates, a data file that
 * stops growing, a log line not written).  Classic BPF is small: its
 * interpreter is here, as the kernel's (kernel/seccomp.c, net/core/filter.c
 * check that the program only loads seccomp_data and only jumps forward).
 *
 * The verdict of several filters is the most restrictive one, as the
 * kernel computes it; a call is made only when that verdict is ALLOW or
 * LOG (not ERRNO, which would fail anyway, nor TRAP, TRACE or USER_NOTIF,
 * which hand the call to the target's SIGSYS handler, its tracer or its
 * supervisor, who never expect the collector's calls).  Strict mode is the
 * filter that allows read, write, exit and rt_sigreturn.  A filter the
 * collector could not copy (bad pointer, too long) denies everything.
 *
 * Filters are per thread in the kernel (all threads with TSYNC); the
 * collector applies them to all its calls, in every thread: at worst it
 * does without a call a thread could have made.
 *
 * Async-signal-safe: the program is copied once, in normal context, into
 * static memory; evaluating it reads memory only.
 */
#define _GNU_SOURCE
#define SONDE_TARGET_SYSCALL /* sonde_syscall is defined here */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "collector.h"

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000u
#endif
#ifndef SECCOMP_RET_LOG
#define SECCOMP_RET_LOG 0x7ffc0000u
#endif
#ifndef SECCOMP_RET_ACTION_FULL
#define SECCOMP_RET_ACTION_FULL 0xffff0000u
#endif

/* The kernel allows 32768 instructions over all of a thread's filters
 * (MAX_INSNS_PER_PATH counts each filter's length plus 4). */
#define GATE_INSNS 32768
#define GATE_FILTERS 64

/* 1 once the target installed a filter, 2 once it entered strict mode
 * (tracers/tracer.h reads it). */
EXPORT _Atomic int __sonde_filtered;

static struct sock_filter g_insns[GATE_INSNS];
static struct {
	uint32_t off, len; /* len 0: strict mode */
} g_filters[GATE_FILTERS];
/* Filters whose verdicts count; the one being installed counts from
 * before the kernel has it (sysgate_add) until it is known to have
 * failed (sysgate_drop). */
static _Atomic int g_nfilters;
static uint32_t g_used;
/* Set when a filter could not be copied: every call is refused. */
static _Atomic int g_deny_all;
/* sysgate_add's work, before its commit: the filters to judge by (the
 * ones in force and the one being installed), and whether the new one
 * could not be copied. */
static int g_ntaken, g_pending_deny;

int sysgate_count(void)
{
	return atomic_load_explicit(&g_nfilters, memory_order_acquire);
}

int sysgate_active(void)
{
	return atomic_load_explicit(&g_nfilters, memory_order_acquire) > 0 ||
	       atomic_load_explicit(&g_deny_all, memory_order_relaxed);
}

/* Run one classic BPF program on d, as the kernel does.  Returns its
 * return value; a program that breaks the kernel's rules (which the
 * kernel would have refused, so it is never installed) kills. */
uint32_t sysgate_run(const struct sock_filter *f, uint32_t len, const struct seccomp_data *d)
{
	uint32_t A = 0, X = 0, M[BPF_MEMWORDS];
	memset(M, 0, sizeof M);
	for (uint32_t pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t k = i->k;
		uint32_t src = BPF_SRC(i->code) == BPF_X ? X : k;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			switch (BPF_MODE(i->code)) {
			case BPF_ABS:
				if (BPF_SIZE(i->code) != BPF_W || k & 3 || k >= sizeof *d)
					return SECCOMP_RET_KILL_PROCESS;
				memcpy(&A, (const char *)d + k, 4);
				break;
			case BPF_LEN:
				A = sizeof *d;
				break;
			case BPF_IMM:
				A = k;
				break;
			case BPF_MEM:
				if (k >= BPF_MEMWORDS)
					return SECCOMP_RET_KILL_PROCESS;
				A = M[k];
				break;
			default:
				return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_LDX:
			switch (BPF_MODE(i->code)) {
			case BPF_LEN:
				X = sizeof *d;
				break;
			case BPF_IMM:
				X = k;
				break;
			case BPF_MEM:
				if (k >= BPF_MEMWORDS)
					return SECCOMP_RET_KILL_PROCESS;
				X = M[k];
				break;
			default:
				return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return SECCOMP_RET_KILL_PROCESS;
			M[k] = BPF_CLASS(i->code) == BPF_ST ? A : X;
			break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_ADD: A += src; break;
			case BPF_SUB: A -= src; break;
			case BPF_MUL: A *= src; break;
			case BPF_DIV:
				if (!src)
					return 0; /* the kernel's run ends, returning 0: KILL_THREAD */
				A /= src;
				break;
			case BPF_MOD:
				if (!src)
					return 0;
				A %= src;
				break;
			case BPF_AND: A &= src; break;
			case BPF_OR: A |= src; break;
			case BPF_XOR: A ^= src; break;
			case BPF_LSH: A = src >= 32 ? 0 : A << src; break;
			case BPF_RSH: A = src >= 32 ? 0 : A >> src; break;
			case BPF_NEG: A = -A; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_JMP: {
			uint32_t to;
			switch (BPF_OP(i->code)) {
			case BPF_JA: to = pc + k; break;
			case BPF_JEQ: to = pc + (A == src ? i->jt : i->jf); break;
			case BPF_JGT: to = pc + (A > src ? i->jt : i->jf); break;
			case BPF_JGE: to = pc + (A >= src ? i->jt : i->jf); break;
			case BPF_JSET: to = pc + ((A & src) ? i->jt : i->jf); break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			if (to < pc || to >= len) /* the kernel's check: forward, inside */
				return SECCOMP_RET_KILL_PROCESS;
			pc = to;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? A : k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				X = A;
			else
				A = X;
			break;
		default:
			return SECCOMP_RET_KILL_PROCESS;
		}
	}
	return SECCOMP_RET_KILL_PROCESS; /* fell off the end */
}

static int32_t action_of(uint32_t ret)
{
	return (int32_t)(ret & SECCOMP_RET_ACTION_FULL);
}

/* The verdict of the first n filters on call nr with args: whether they
 * let it through to the kernel (ALLOW or LOG).  Async-signal-safe. */
static int allows_n(int n, long nr, const long args[6])
{
	if (atomic_load_explicit(&g_deny_all, memory_order_relaxed))
		return 0;
	if (!n)
		return 1;
	struct seccomp_data d;
	memset(&d, 0, sizeof d);
	d.nr = (int)nr;
	d.arch = AUDIT_ARCH_X86_64;
	for (int i = 0; i < 6; i++)
		d.args[i] = (uint64_t)args[i];
	int32_t worst = (int32_t)SECCOMP_RET_ALLOW;
	for (int i = 0; i < n && i < GATE_FILTERS; i++) {
		uint32_t ret;
		if (!g_filters[i].len)
			ret = nr == SYS_read || nr == SYS_write || nr == SYS_exit || nr == SYS_rt_sigreturn
				      ? SECCOMP_RET_ALLOW
				      : SECCOMP_RET_KILL_PROCESS;
		else
			ret = sysgate_run(g_insns + g_filters[i].off, g_filters[i].len, &d);
		if (action_of(ret) < worst)
			worst = action_of(ret);
	}
	return worst == (int32_t)SECCOMP_RET_ALLOW || worst == (int32_t)SECCOMP_RET_LOG;
}

int sysgate_allows6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long args[6] = { a1, a2, a3, a4, a5, a6 };
	return allows_n(atomic_load_explicit(&g_nfilters, memory_order_acquire), nr, args);
}

/* The same, with the filter sysgate_add took and that does not count yet
 * (sysgate_commit): what the collector may still do once it counts. */
int sysgate_would_allow6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long args[6] = { a1, a2, a3, a4, a5, a6 };
	return !g_pending_deny && allows_n(g_ntaken, nr, args);
}

/* A filter about to be installed: mode SECCOMP_MODE_STRICT, or
 * SECCOMP_MODE_FILTER with the target's struct sock_fprog at prog.  It is
 * copied, and counts from sysgate_commit on.  Returns its index for
 * sysgate_drop, -1 when it was not copied (every call is refused from the
 * commit on), -2 when the kernel will refuse it too (EFAULT, EINVAL).
 * Normal context; one installer at a time (filters are installed at
 * start-up, by one thread). */
int sysgate_add(int strict, const void *prog)
{
	int n = atomic_load(&g_nfilters);
	g_ntaken = n;
	uint32_t len = 0;
	if (!strict) {
		/* The target's pointers, read as the kernel reads them: a bad
		 * one is the kernel's EFAULT to give, not a crash here. */
		struct sock_fprog fp;
		struct iovec l = { &fp, sizeof fp }, r = { (void *)prog, sizeof fp };
		if (!prog || process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof fp)
			return -2;
		if (!fp.len || fp.len > BPF_MAXINSNS)
			return -2;
		if (n >= GATE_FILTERS || g_used + fp.len > GATE_INSNS) {
			g_pending_deny = 1;
			return -1;
		}
		struct iovec l2 = { g_insns + g_used, fp.len * sizeof(struct sock_filter) },
			     r2 = { fp.filter, fp.len * sizeof(struct sock_filter) };
		if (process_vm_readv(getpid(), &l2, 1, &r2, 1, 0) != (ssize_t)l2.iov_len)
			return -2;
		len = fp.len;
	} else if (n >= GATE_FILTERS) {
		g_pending_deny = 1;
		return -1;
	}
	g_filters[n].off = g_used;
	g_filters[n].len = len;
	g_used += len;
	g_ntaken = n + 1;
	return n;
}

/* From now on the filter sysgate_add took counts for every call. */
void sysgate_commit(int idx)
{
	if (idx == -1 && g_pending_deny)
		atomic_store(&g_deny_all, 1);
	if (idx >= 0)
		atomic_store_explicit(&g_nfilters, idx + 1, memory_order_release);
	g_pending_deny = 0;
}

/* The kernel refused the filter sysgate_add took: it never counted.
 * (A filter the collector could not copy keeps refusing everything: it
 * cannot tell whether the kernel took it.)  Normal context. */
void sysgate_drop(int idx)
{
	if (idx < 0 || idx != atomic_load(&g_nfilters) - 1)
		return;
	g_used = g_filters[idx].off;
	g_ntaken = idx;
	atomic_store(&g_nfilters, idx);
}

int sysgate_may(long nr)
{
	return !sysgate_active() || sysgate_allows6(nr, 0, 0, 0, 0, 0, 0);
}

int sonde_clock_gettime(clockid_t c, struct timespec *t)
{
	/* Seccomp's strict mode disables the TSC (the kernel sets
	 * TIF_NOTSC): the vDSO's rdtscp would fault. */
	if (__builtin_expect(atomic_load_explicit(&__sonde_filtered, memory_order_relaxed) == 2, 0)) {
		errno = EPERM;
		return -1;
	}
	int cpu = c < 0 || c == CLOCK_PROCESS_CPUTIME_ID || c == CLOCK_THREAD_CPUTIME_ID;
	if (cpu && sysgate_active() && !sysgate_allows6(SYS_clock_gettime, c, (long)t, 0, 0, 0, 0)) {
		errno = EPERM;
		return -1;
	}
	return clock_gettime(c, t);
}


/* The collector's own system calls.  Async-signal-safe. */
long sonde_sys6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	if (__builtin_expect(sysgate_active(), 0)) {
		if (!sysgate_allows6(n, a1, a2, a3, a4, a5, a6))
			return -EPERM;
		/* A descriptor the collector could not close again would be
		 * one leaked into the target per call. */
		int opens = n == SYS_openat || n == SYS_open || n == SYS_perf_event_open ||
			    (n == SYS_fcntl && (a2 == F_DUPFD || a2 == F_DUPFD_CLOEXEC));
		if (opens && !sysgate_allows6(SYS_close, 0, 0, 0, 0, 0, 0))
			return -EPERM;
	}
	return sonde_raw_syscall6(n, a1, a2, a3, a4, a5, a6);
}

long sonde_syscall(long n, ...)
{
	va_list ap;
	va_start(ap, n);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	long r = sonde_sys6(n, a1, a2, a3, a4, a5, a6);
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* A thread of the collector's own (off-CPU sampling, -t's sampler) whose
 * sleep the target's filter refuses ends here: its filter (TSYNC) may
 * refuse what ending a thread takes in libc (madvise of its stack), so it
 * ends by the exit system call alone.  The kernel still clears its tid,
 * so a pthread_join of it returns.  Returns when the filters would refuse
 * exit too (then the caller returns from the thread as usual). */
void sysgate_thread_exit(void)
{
	if (sysgate_allows6(SYS_exit, 0, 0, 0, 0, 0, 0))
		sonde_raw_syscall6(SYS_exit, 0, 0, 0, 0, 0, 0);
}

/* The tracing libraries' own system calls (tracers/tracer.h): theirs to
 * make only as far as the target's filters allow, like the collector's. */
EXPORT long __sonde_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long r = sonde_sys6(n, a1, a2, a3, a4, a5, a6);
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
