/*
 * CLOCK_MONOTONIC for hot paths that run many times a millisecond
 * (collector.h: fast_now_ns): the OpenMP interposers and callbacks read
 * the clock about 12 times a parallel region, and a vDSO clock_gettime
 * costs 28 ns on this project's test machine (kvm-clock) where rdtsc
 * costs 8-11.  Each thread keeps an anchor, a clock reading and the TSC
 * beside it, and answers the anchor's time plus the TSC's ticks since,
 * scaled; it reads the real clock again when the anchor is a window
 * (FC_WINDOW_NS) old.  The scale is the TSC's rate against the clock since
 * the first reading, a baseline of at least FC_BASE_NS: from the clock's
 * own readings, so that it follows what the clock does over the run
 * (the kernel's frequency corrections included) rather than a nominal
 * frequency.  An answer is off by at most the window times the scale's
 * error (the scale from a 10 ms baseline is good to a few parts per
 * million: nanoseconds) plus the clock's correction over the window
 * (at most 500 ppm: 0.5 us).  A thread's answers never decrease.
 *
 * Only where the TSC is a clock: x86-64 with an invariant TSC (CPUID),
 * the kernel keeping time by it (clocksource tsc or kvm-clock), and this
 * process allowed rdtsc (PR_GET_TSC).  A process that turns rdtsc off
 * later (seccomp's strict mode, which the sysgate tells by
 * __sonde_filtered) is answered by now_ns.  Elsewhere fast_now_ns is
 * now_ns.  Not for the sampling handler: an anchor half written when a
 * signal came is not used (t_fc.valid), but the handler has its own
 * reading anyway.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"
#include "fastclock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>

#define FC_WINDOW_NS 1000000ull /* an anchor's life */
#define FC_BASE_NS 10000000ull	/* the scale's shortest baseline */

/* 0: not decided; 1: on; -1: off */
static _Atomic int g_fc_on;
/* the first reading: the scale's baseline starts there */
static uint64_t g_fc_tsc0, g_fc_ns0;
/* nanoseconds a tick, << 32; 0 until the baseline is long enough */
static _Atomic uint64_t g_fc_mult;

static TLS struct {
	uint64_t tsc, ns, last;
	int valid;
} t_fc;

/* Whether the kernel keeps its time by the TSC: the clocksource's name
 * from sysfs, by the collector's own calls (which a seccomp filter of the
 * target's refuses rather than kills). */
static bool clocksource_is_tsc(void)
{
	char buf[64];
	long fd = sonde_sys6(SYS_openat, AT_FDCWD, (long)"/sys/devices/system/clocksource/clocksource0/current_clocksource",
			     O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return false;
	long n = sonde_sys6(SYS_read, fd, (long)buf, sizeof buf - 1, 0, 0, 0);
	sonde_sys6(SYS_close, fd, 0, 0, 0, 0, 0);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return !strcmp(buf, "tsc\n") || !strcmp(buf, "kvm-clock\n");
}

static bool fc_usable(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return false;
	__cpuid(0x80000007, a, b, c, d);
	if (!(d & (1u << 8))) /* invariant TSC */
		return false;
	long tsc = 0;
	if (sonde_sys6(SYS_prctl, PR_GET_TSC, (long)&tsc, 0, 0, 0, 0) != 0 || tsc != PR_TSC_ENABLE)
		return false;
	return clocksource_is_tsc();
}

/* A clock reading and the TSC at its middle, into *tsc; false when the
 * reading took more than FC_PAIR_TICKS (a preemption or a signal handler
 * between the two TSC reads: the middle may be far from the reading).  A
 * vDSO read is 100-300 ticks. */
#define FC_PAIR_TICKS 2000
static bool fc_pair(uint64_t *ns, uint64_t *tsc)
{
	for (int i = 0; i < 3; i++) {
		uint64_t t1 = __rdtsc();
		*ns = now_ns();
		uint64_t t2 = __rdtsc();
		if (t2 >= t1 && t2 - t1 <= FC_PAIR_TICKS) {
			*tsc = t1 + (t2 - t1) / 2;
			return true;
		}
	}
	return false;
}

static void fc_decide(void)
{
	int expect = 0;
	if (!atomic_compare_exchange_strong(&g_fc_on, &expect, 2))
		return; /* another thread decides: now_ns until then */
	int saved = errno;
	bool ok = fc_usable() && fc_pair(&g_fc_ns0, &g_fc_tsc0);
	errno = saved;
	atomic_store(&g_fc_on, ok ? 1 : -1);
}

/* A new anchor for the calling thread, and the scale from the longest
 * baseline there is (this reading's); the clock's time. */
static uint64_t fc_refresh(void)
{
	uint64_t tsc, ns;
	t_fc.valid = 0;
	if (!fc_pair(&ns, &tsc))
		return ns; /* no anchor: the next call tries again */
	if (ns - g_fc_ns0 >= FC_BASE_NS && tsc > g_fc_tsc0)
		atomic_store_explicit(&g_fc_mult, fc_scale(ns - g_fc_ns0, tsc - g_fc_tsc0), memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	t_fc.tsc = tsc;
	t_fc.ns = ns;
	atomic_signal_fence(memory_order_seq_cst);
	t_fc.valid = 1;
	return ns;
}

uint64_t fast_now_ns(void)
{
	int on = atomic_load_explicit(&g_fc_on, memory_order_acquire);
	/* now_ns where the TSC is not used; in seccomp's strict mode (which
	 * turned rdtsc off) its clock read fails with EPERM, which the
	 * target's errno must not see: callers are interposers */
	if (__builtin_expect(on != 1 || atomic_load_explicit(&__sonde_filtered, memory_order_relaxed) == 2, 0)) {
		if (!on)
			fc_decide();
		int saved = errno;
		uint64_t v = now_ns();
		errno = saved;
		return v;
	}
	uint64_t v, mult = atomic_load_explicit(&g_fc_mult, memory_order_relaxed);
	if (!mult || !t_fc.valid || !fc_apply(t_fc.ns, t_fc.tsc, __rdtsc(), mult, FC_WINDOW_NS, &v))
		v = fc_refresh();
	if (v < t_fc.last)
		v = t_fc.last;
	t_fc.last = v;
	return v;
}

bool fast_clock_on(void)
{
	return atomic_load(&g_fc_on) == 1 && atomic_load(&g_fc_mult) != 0;
}

#else

uint64_t fast_now_ns(void)
{
	return now_ns();
}

bool fast_clock_on(void)
{
	return false;
}

#endif
