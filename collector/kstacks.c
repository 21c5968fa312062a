/*
 * Kernel call stacks (sonde collect -k on): the kernel's own callchain on
 * each clock sample taken while the thread was in the kernel, above the
 * user stack that entered it.
 *
 * The clock source that counts kernel mode (clock.c, sigtrap_arm: a
 * task-clock counter per thread whose overflow is a SIGTRAP queued as
 * task work) cannot give the kernel's stack to the handler: an overflow
 * in a system call is signalled on the return to user space, when that
 * stack is gone.  So the counter also writes a sample record at each
 * overflow, its kernel callchain only (PERF_SAMPLE_CALLCHAIN,
 * exclude_callchain_user: the user part is the collector's own unwind),
 * into a ring buffer of the thread's (two pages); the kernel takes that
 * stack where the overflow was, in the system call.  At the SIGTRAP the
 * stack source here reads the records written since the last sample and
 * puts one on top of the user stack, as a kernel callchain goes (the
 * kernel's frames are callees of the instruction that entered it).
 *
 * One of them, chosen at random: a long call overflows several times
 * before its one signal, which records all of their time with one stack;
 * each overflow's stack is then as likely to be the sample's, so the time
 * each kernel function gets converges on its share, as sampling at every
 * overflow would.  A record of an overflow in user mode has no kernel
 * frame: chosen, the sample has none (its time was the user's).
 *
 * The ring buffer is mapped when the counter is armed and unmapped when it
 * is disarmed, by the thread itself or, at the end, once no handler is
 * running (kstacks_ring_close).  Names: sonde collect copies
 * /proc/kallsyms into the experiment (kallsyms); a followed child's
 * experiment links the founder's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock_internal.h"
#include "collector.h"
#include "kstacks.h"
#include "sys_mmap.h"
#include "sonde/hooks.h"
#include "sonde/settings.h"

int g_kstacks;


_Atomic uint64_t g_kst_samples, g_kst_with, g_kst_lost, g_kst_nomap;
size_t g_kst_page = 4096;
static int g_kst_hook;

static size_t ring_len(void)
{
	return g_kst_page * RING_PAGES;
}

void kstacks_ring_open(struct thread_slot *s, int fd)
{
	s->kring = NULL;
	if (!g_kstacks || fd < 0)
		return;
	void *p = sonde_mmap(NULL, ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		/* RLIMIT_MEMLOCK, perf_event_mlock_kb: this thread's samples
		 * go without kernel frames (counted in log.xml) */
		atomic_fetch_add(&g_kst_nomap, 1);
		return;
	}
	atomic_store_explicit(&s->kring, p, memory_order_release);
}

void kstacks_ring_close(struct thread_slot *s, int own)
{
	void *p = atomic_exchange(&s->kring, NULL);
	if (!p)
		return;
	if (!own) {
		/* another thread's: its handler may be reading the ring, and
		 * every handler that began before the store above is counted
		 * in g_inflight; one that does not drain is left mapped */
		int i = 0;
		for (; i < 1000 && atomic_load(&g_inflight); i++)
			syscall(SYS_sched_yield);
		if (i == 1000)
			return;
	}
	sonde_munmap(p, ring_len());
}

void kstacks_fork_child_slot(struct thread_slot *s)
{
	/* the parent's thread's ring, mapped in the child too: the child
	 * has only its own thread, which is not reading it */
	void *p = atomic_exchange(&s->kring, NULL);
	if (p)
		sonde_munmap(p, ring_len());
}

static void kstacks_open(struct clock_settings *cs)
{
	const char *v = sonde_getenv(SONDE_ENV_KSTACKS);
	long pg = sysconf(_SC_PAGESIZE);
	if (pg > 0)
		g_kst_page = (size_t)pg;
	g_kstacks = v && !strcmp(v, "1") && cs->interval_ns;
}

/* The founder's copy of kallsyms, linked into a followed child's
 * experiment (sonde collect wrote it). */
static void link_kallsyms(void)
{
	const char *founder = sonde_getenv(SONDE_ENV_EXPDIR);
	if (!founder || !*founder || !strcmp(founder, g_col.expdir))
		return;
	char from[4200], to[4200];
	if (snprintf(from, sizeof from, "%s/kallsyms", founder) >= (int)sizeof from ||
	    snprintf(to, sizeof to, "%s/kallsyms", g_col.expdir) >= (int)sizeof to)
		return;
	if (syscall(SYS_link, from, to) < 0 && errno != EEXIST)
		log_event_text("warning", "cannot link the founder's kallsyms into this experiment; its kernel "
					  "frames are shown as addresses");
}

static void kstacks_start(void)
{
	if (!g_kstacks)
		return;
	if (!g_sigtrap_source_active || !clock_kernel_counted()) {
		log_event_text("error", "kernel call stacks need the clock source that counts kernel mode (a "
					"perf task-clock with SIGTRAP), which this process did not get; -k on is off");
		g_kstacks = 0;
		return;
	}
	link_kallsyms();
	g_kst_hook = __sonde_hook_stack_add(kstack_frames, NULL);
	if (g_kst_hook < 0) {
		log_event_text("error", "the sampling handler has no room for the kernel's stack source; -k on is off");
		g_kstacks = 0;
	}
}

static void kstacks_settings(struct xbuf *b, const struct clock_settings *cs)
{
	(void)cs;
	if (g_kstacks)
		xb_attr_u64(b, "kernel_stacks", 1);
}

static void kstacks_stop(void)
{
	if (!g_kstacks)
		return;
	char msg[300];
	snprintf(msg, sizeof msg,
		 "kernel stacks: %llu clock samples read their thread's records, %llu with kernel frames; %llu "
		 "records lost (the ring was full), %llu threads without a ring (RLIMIT_MEMLOCK, "
		 "perf_event_mlock_kb)",
		 (unsigned long long)atomic_load(&g_kst_samples), (unsigned long long)atomic_load(&g_kst_with),
		 (unsigned long long)atomic_load(&g_kst_lost), (unsigned long long)atomic_load(&g_kst_nomap));
	log_event_text("info", msg);
}

static void kstacks_fork_child(void)
{
	/* the child's hooks are the parent's (hooks.c keeps them); its
	 * counts start afresh */
	atomic_store(&g_kst_samples, 0);
	atomic_store(&g_kst_with, 0);
	atomic_store(&g_kst_lost, 0);
	atomic_store(&g_kst_nomap, 0);
}

const struct collector_module kstacks_module = {
	.name = "kstacks",
	.open = kstacks_open,
	.settings = kstacks_settings,
	.start = kstacks_start,
	.stop = kstacks_stop,
	.fork_child = kstacks_fork_child,
};
