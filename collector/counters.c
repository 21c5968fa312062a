/*
 * Counter overflow profiling (sonde collect -h): the counters' set-up, the
 * threads' counters and the log.xml lines that name them.  Normal context;
 * the samples are taken by the clock's signal handler (sample.c,
 * counter_sample), which these counters signal with the same SIGTRAP as the
 * clock's perf counter, told apart by attr.sig_data.
 *
 * `sonde collect` checked every counter on itself before starting the
 * target, and passes them resolved in SONDE_COUNTERS:
 *
 *     NAME|TYPE|CONFIG|INTERVAL|TITLE|UNIT;...
 *
 * (perf_event_attr's type and config, the overflow value).  Each thread
 * opens one perf counter per entry (register_thread in clock.c): a
 * per-thread counter, not an inherited one, so that the handler can read
 * the thread's own count and weigh each sample with exactly the events
 * since the thread's previous sample of that counter, however many
 * overflows one signal stands for.  The overflow is delivered as SIGTRAP
 * task work on the thread's return to user space (attr.sigtrap), as the
 * clock's counter is, so it never interrupts a blocking call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock_internal.h"

int g_ncounters;
struct dfile *g_counters;
_Atomic uint64_t g_counter_samples;
uint64_t g_counter_period[SONDE_MAX_COUNTERS];

static struct {
	char name[64], title[64], unit[16];
	uint32_t type;
	uint64_t config, interval;
} g_c[SONDE_MAX_COUNTERS];
static int g_kernel; /* count kernel mode too */

/* Parses SONDE_COUNTERS.  Returns how many counters, -1 when malformed. */
int counters_parse(void)
{
	const char *v = sonde_getenv(sonde_kind_desc(SONDE_KIND_COUNTERS)->env);
	g_ncounters = 0;
	if (!v || !*v || !strcmp(v, "off"))
		return 0;
	int n = 0;
	for (const char *p = v; *p && n < SONDE_MAX_COUNTERS;) {
		size_t len = strcspn(p, ";");
		char item[256];
		if (len >= sizeof item)
			return -1;
		memcpy(item, p, len);
		item[len] = 0;
		char *f[6];
		int nf = 0;
		for (char *q = item; nf < 6;) {
			f[nf++] = q;
			char *bar = strchr(q, '|');
			if (!bar)
				break;
			*bar = 0;
			q = bar + 1;
		}
		if (nf != 6)
			return -1;
		snprintf(g_c[n].name, sizeof g_c[n].name, "%s", f[0]);
		g_c[n].type = (uint32_t)strtoul(f[1], NULL, 0);
		g_c[n].config = strtoull(f[2], NULL, 0);
		g_c[n].interval = strtoull(f[3], NULL, 0);
		snprintf(g_c[n].title, sizeof g_c[n].title, "%s", f[4]);
		snprintf(g_c[n].unit, sizeof g_c[n].unit, "%s", f[5]);
		if (!g_c[n].interval || !g_c[n].name[0])
			return -1;
		g_counter_period[n] = g_c[n].interval;
		n++;
		p += len + (p[len] == ';');
	}
	g_ncounters = n;
	return n;
}

static int open_counter(int i, pid_t tid, int kernel)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = g_c[i].type;
	a.config = g_c[i].config;
	a.sample_period = g_c[i].interval;
	a.exclude_kernel = !kernel;
	a.exclude_hv = 1;
	a.sigtrap = 1;
	a.remove_on_exec = 1; /* required with sigtrap */
	a.sig_data = SONDE_COUNTER_MAGIC + (uint64_t)i;
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Once the handler is installed (clock_start): checks that every counter
 * opens on this thread, counting kernel mode if the kernel allows it,
 * creates the data file and names the counters in log.xml.  Returns 0, or
 * -1 when counters are off from now on (logged). */
int counters_start(const char *expdir)
{
	if (!g_ncounters)
		return 0;
	for (int kernel = 1; kernel >= 0; kernel--) {
		int fd = open_counter(0, 0, kernel);
		if (fd >= 0) {
			syscall(SYS_close, fd);
			g_kernel = kernel;
			break;
		}
		if (!kernel || (fd != -EACCES && fd != -EPERM)) {
			char msg[200];
			snprintf(msg, sizeof msg, "counter '%s' cannot be opened (%s); counter overflow profiling disabled",
				 g_c[0].name, strerror(-fd));
			log_event_text("error", msg);
			g_ncounters = 0;
			return -1;
		}
	}
	g_counters = dfile_create(expdir, sonde_kind_desc(SONDE_KIND_COUNTERS)->file, SONDE_KIND_COUNTERS);
	if (!g_counters) {
		log_event_text("error", "cannot create the counters data file; counter overflow profiling disabled");
		g_ncounters = 0;
		return -1;
	}
	char mem[1024];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<dataformat");
	xb_attr_str(&b, "file", sonde_kind_desc(SONDE_KIND_COUNTERS)->file);
	xb_attr_u64(&b, "kind", SONDE_KIND_COUNTERS);
	xb_attr_u64(&b, "block_size", SONDE_BLOCK_SIZE);
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<packet");
	xb_attr_u64(&b, "type", SONDE_PKT_COUNTER);
	xb_attr_str(&b, "name", "counter");
	xb_attr_u64(&b, "size", sizeof(struct sonde_counter_packet));
	xb_attr_str(&b, "fields",
		    "type:0:u16 size:2:u16 counter:4:u16 cpu:6:u16 time_ns:8:u64 weight:16:u64 stack_id:24:u64");
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
	for (int i = 0; i < g_ncounters; i++) {
		xb_init(&b, mem, sizeof mem);
		xb_str(&b, "<trace");
		xb_attr_str(&b, "kind", "counters");
		xb_attr_u64(&b, "index", (uint64_t)i);
		xb_attr_str(&b, "name", g_c[i].name);
		xb_attr_str(&b, "title", g_c[i].title);
		xb_attr_str(&b, "unit", g_c[i].unit);
		xb_attr_u64(&b, "type", g_c[i].type);
		xb_attr_u64(&b, "config", g_c[i].config);
		xb_attr_u64(&b, "interval", g_c[i].interval);
		xb_attr_str(&b, "kernel", g_kernel ? "counted" : "excluded");
		xb_str(&b, "/>\n");
		log_line(mem, b.len);
	}
	return 0;
}

int counters_arm(struct thread_slot *s, pid_t tid)
{
	int rc = 0;
	for (int i = 0; i < g_ncounters; i++) {
		if (s->cfd[i] >= 0)
			continue;
		int fd = open_counter(i, tid, g_kernel);
		if (fd < 0) {
			if (!rc)
				rc = fd;
			continue;
		}
		fd = fd_park(fd);
		uint64_t id = 0, v = 0;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
			id = 0;
		/* counted from here: the first sample weighs what follows */
		if (sonde_sys6(SYS_read, fd, (long)&v, sizeof v, 0, 0, 0) != sizeof v)
			v = 0;
		s->cid[i] = id;
		s->clast[i] = v;
		s->cfd[i] = fd;
	}
	if (rc) {
		static _Atomic int warned;
		if (!atomic_exchange(&warned, 1)) {
			char msg[200];
			snprintf(msg, sizeof msg, "a counter could not be opened on thread %d (%s); its events there are "
						  "not recorded", (int)tid, strerror(-rc));
			log_event_text("warning", msg);
		}
	}
	return rc;
}

/* Whether fd is still our counter id (the target may have closed the
 * number and put a file of its own there). */
static int ours(int fd, uint64_t id)
{
	uint64_t got = 0;
	if (fd < 0 || !fd_still_ours(fd))
		return 0;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &got) == 0)
		return got == id;
	return errno == EPERM && sysgate_active(); /* as clock.c's perf_fd_ours */
}

void counters_disarm(struct thread_slot *s)
{
	for (int i = 0; i < SONDE_MAX_COUNTERS; i++) {
		if (s->cfd[i] < 0)
			continue;
		if (ours(s->cfd[i], s->cid[i])) {
			ioctl(s->cfd[i], PERF_EVENT_IOC_DISABLE, 0);
			fd_release(s->cfd[i]);
		} else {
			fd_forget_taken(s->cfd[i]);
		}
		s->cfd[i] = -1;
	}
}

void counters_ioctl(struct thread_slot *s, unsigned long req)
{
	for (int i = 0; i < SONDE_MAX_COUNTERS; i++)
		if (s->cfd[i] >= 0 && ours(s->cfd[i], s->cid[i]))
			ioctl(s->cfd[i], req, 0);
}

/* In a fork child: the counters belong to the parent's threads; the
 * child's descriptors of them are closed. */
void counters_fork_child(struct thread_slot *s)
{
	for (int i = 0; i < SONDE_MAX_COUNTERS; i++) {
		if (s->cfd[i] >= 0) {
			if (ours(s->cfd[i], s->cid[i]))
				fd_release(s->cfd[i]);
			else
				fd_forget_taken(s->cfd[i]);
		}
		s->cfd[i] = -1;
	}
}

void counters_forget(void)
{
	dfile_forget(g_counters);
	g_counters = NULL;
	atomic_store(&g_counter_samples, 0);
}

void counters_finish(void)
{
	dfile_finish(g_counters);
}
