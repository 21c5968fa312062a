/* State shared by clock.c (arming, threads; normal context) and sample.c
 * (the signal handler). */
#ifndef SONDE_COLLECTOR_CLOCK_INTERNAL_H
#define SONDE_COLLECTOR_CLOCK_INTERNAL_H

#include <signal.h>

#include "collector.h"

#define FD_BITS 65536

struct tstate {
	pid_t tid;
	uint64_t last_cpu_ns;	/* thread CPU clock at the last recorded sample */
	uintptr_t stack_lo, stack_hi;
};

extern TLS struct tstate t_state;
extern struct clock_settings g_cs;
extern struct dfile *g_profile;
extern int g_timer_source_active;	/* else the perf source */
extern int g_timer_magic;		/* &g_timer_magic tags our timers' signals */
extern _Atomic uint8_t g_our_fds[FD_BITS / 8]; /* perf fds that signal us */
extern _Atomic uint64_t g_samples;
/* Time spent in the handler, in TSC ticks: the collector's own cost, shown
 * by `sonde print -header` (converted with the TSC rate measured over the
 * run, see clock_handler_ns). */
extern _Atomic uint64_t g_handler_tsc;
extern _Atomic int g_inflight;		/* handlers running now */
extern _Atomic int g_unwind_pause;	/* set around dlclose */

void clock_handler(int sig, siginfo_t *si, void *uc);

#endif
