/*
 * The page shared with `sonde collect` (include/sonde/shared.h): the
 * tracing clock's tick and this process's entry in the registry of
 * recording processes, for which collect writes the periodic sample points.
 *
 * Neither needs a thread in the target: the collector starts none for
 * them, so the target stays exactly as threaded as it is without sonde
 * (its thread count, unshare(CLONE_NEWUSER), and glibc's single-threaded
 * fast paths: no cancellation bookkeeping around system calls, no atomic
 * operations in malloc and stdio).  Normal context only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sonde/settings.h>
#include <sonde/shared.h>

#include "collector.h"

/* The tick word, alone on its page: attaching maps the shared file's page
 * 0 over this page, so __sonde_trace_now (read inline by the tracers with
 * one load) becomes collect's clock without any indirection.  0 (no tick,
 * the interposers read the clock) until then, and when collect does not
 * tick. */
static union {
	_Atomic uint64_t now;
	char page[SONDE_SHARED_PAGE];
} g_tick_page __attribute__((aligned(SONDE_SHARED_PAGE)));
extern _Atomic uint64_t __sonde_trace_now __attribute__((alias("g_tick_page"), visibility("default")));

static struct sonde_shared_head *g_head; /* the whole file, NULL unattached */
static int g_tick_mapped;
static int g_slot = -1;
static pid_t g_slot_pid;

static struct sonde_shared_slot *slot_at(int i)
{
	return (struct sonde_shared_slot *)((char *)g_head + SONDE_SHARED_PAGE + (size_t)i * SONDE_SHARED_SLOT_SIZE);
}

/* Field 22 of /proc/self/stat (the start time in clock ticks since boot):
 * with the pid it names this process for collect, also after the pid has
 * been reused. */
static uint64_t own_starttime(void)
{
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[1024];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	if (!p || p[1] != ' ')
		return 0;
	p += 2; /* field 3, the state */
	for (int field = 3; field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	uint64_t v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v;
}

void shared_attach(void)
{
	if (g_head)
		return; /* a fork child: the parent's mappings are shared */
	/* Opened, mapped and closed: the target sees no descriptor of it. */
	const char *path = getenv(SONDE_ENV_SHARED);
	if (!path || !*path)
		return;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	void *p = MAP_FAILED;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)SONDE_SHARED_SIZE)
		p = sonde_mmap(NULL, SONDE_SHARED_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED && ((struct sonde_shared_head *)p)->magic != SONDE_SHARED_MAGIC) {
		sonde_munmap(p, SONDE_SHARED_SIZE);
		p = MAP_FAILED;
	}
	if (p != MAP_FAILED) {
		g_head = p;
		/* Only where a page is what the tick page was laid out for. */
		if (sysconf(_SC_PAGESIZE) == SONDE_SHARED_PAGE &&
		    sonde_mmap(&g_tick_page, SONDE_SHARED_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			       0) != MAP_FAILED)
			g_tick_mapped = 1;
	}
	close(fd);
}

uint64_t shared_tick_ns(void)
{
	return g_tick_mapped && atomic_load(&__sonde_trace_now) ? g_head->tick_ns : 0;
}

int shared_register(const char *lineage)
{
	if (!g_head)
		return -1;
	if (g_slot >= 0 && g_slot_pid == getpid())
		return 0;
	if (strlen(lineage) >= sizeof slot_at(0)->lineage)
		return -1; /* cut, it would name another experiment */
	for (int i = 0; i < (int)SONDE_SHARED_SLOTS; i++) {
		struct sonde_shared_slot *s = slot_at(i);
		uint32_t expect = SONDE_SLOT_FREE;
		if (!atomic_compare_exchange_strong(&s->state, &expect, SONDE_SLOT_CLAIMED))
			continue;
		s->pid = (uint32_t)getpid();
		s->starttime = own_starttime();
		s->start_ns = g_col.start_ns;
		snprintf(s->lineage, sizeof s->lineage, "%s", lineage);
		struct clock_call c;
		if (clock_call_info(&c) == 0) {
			s->interval_ns = c.interval_ns;
			s->call_entry = c.entry;
			s->call_fn = c.fn;
			s->call_sp = c.sp;
			s->call_done = c.done;
			s->samples_addr = c.samples;
			s->watch_counters = (uint32_t)c.counters;
			s->watch_sig = (uint32_t)c.sig;
			s->start_tracer = (uint32_t)c.tracer;
		} else {
			s->watch_sig = 0;
		}
		atomic_store(&s->state, SONDE_SLOT_LIVE);
		g_slot = i;
		g_slot_pid = getpid();
		return 0;
	}
	return -1;
}

/* How many seccomp filters the collector saw installed, for sonde collect
 * to tell one installed behind its back (cmd/collect_watch.c). */
void shared_note_filters(uint32_t n)
{
	if (g_slot >= 0 && g_slot_pid == getpid())
		atomic_store(&slot_at(g_slot)->filters_seen, n);
}

void shared_end(void)
{
	if (g_slot < 0 || g_slot_pid != getpid())
		return;
	atomic_store(&slot_at(g_slot)->state, SONDE_SLOT_FREE);
	g_slot = -1;
}

uint64_t shared_period_ns(void)
{
	return g_head ? g_head->period_ns : 0;
}

void shared_fork_child(void)
{
	g_slot = -1; /* the parent's */
}
