/*
 * sonde collect -P PID: a process that is already running, recorded from
 * outside it.
 *
 * Nothing enters the target: sonde collect opens one sampling counter per
 * thread of it (task-clock, the thread's CPU time, user and kernel mode,
 * inherited by the threads it makes from then on), and each overflow
 * writes a record into the counter's ring buffer, which sonde collect
 * reads as it goes: the thread, the time, the period, the user registers
 * and a copy of the top of the user stack (32 KiB), and with -k on the
 * kernel's callchain.  sonde collect unwinds each copy at once with
 * elfutils' DWARF unwinder (libdwfl, over the target's objects as
 * /proc/PID/maps lists them at the attach), and writes an ordinary
 * experiment at the end: native frames named by map.xml's objects, the
 * threads by their names.  Detaching is closing the counters: the target's
 * signal dispositions, mask, timers, descriptors and memory were never
 * touched.
 *
 * A JVM is the exception (collect_jattach.c): its own attach mechanism
 * loads the Java agent, and with it the collector, into it.  Why not the
 * collector in any process, loaded by a ptrace injection (as Oracle's
 * collect does through dbx): nothing inside a process that is not a JVM
 * would call the collector's start, or tell it of the threads it makes
 * afterwards.  What the outside cannot give is the collector's: tracing
 * (-s, -H, -i, -m), the OpenMP states, off-CPU time (-w), counters (-h),
 * sample points by signal (-l, -y), descendants (-F), limits (-L); -P
 * refuses them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/u64map.h"
#include "collect_settings.h"
#include "commands.h"
#include "reader/experiment.h"
#include "reader/expwriter.h"
#include "remote_unwind.h"
#include "sonde/format.h"

/* A sample is 16.5 KiB (its stack copy's size whatever the stack's use):
 * at -p hi, a busy thread writes 16 MiB a second into its CPU's ring, so
 * 2 MiB a CPU, read every 10 ms (and when a quarter is full), lose none */
#define RING_DATA_PAGES 512
#define STACK_COPY 16384u

struct athread {
	pid_t tid;
	uint64_t cpu0, cpu1; /* its CPU time at the attach and the detach (schedstat) */
};

/* A CPU's ring: the first counter opened there maps it, the others write
 * into it (PERF_EVENT_IOC_SET_OUTPUT). */
struct aring {
	int fd;
	struct perf_event_mmap_page *m;
};

struct astate {
	pid_t pid;
	struct athread *t;
	size_t nt, capt, page;
	int ncpu;
	int user_only; /* kernel mode not counted: refused to this user */
	struct aring *ring;
	int *fds;
	size_t nfds, capfds;
	int depth;
	struct runw *unw;
	struct sonde_expw *w;
	struct runw_stacks st;
	struct u64map names; /* tids written with a name */
	struct sonde_frame *fr; /* room for a sample's frames */
	uint64_t samples, unwound_to_root, lost, bad;
	int failed;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A thread's CPU time from /proc (schedstat: exact), 0 when gone. */
static uint64_t thread_cpu(pid_t pid, pid_t tid)
{
	char path[64];
	unsigned long long run = 0;
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%llu", &run) != 1)
			run = 0;
		fclose(f);
	}
	return run;
}

/* Thread tid's counters, one a CPU: a per-thread counter that its new
 * threads inherit cannot have a ring of its own (the kernel refuses the
 * mmap: all of them would write into one), so, as perf record -p does,
 * one counter per thread and CPU, each CPU's writing into that CPU's
 * ring.  0, or -errno. */
static int open_thread(struct astate *a, pid_t tid, uint64_t interval, int kernel)
{
	struct perf_event_attr at;
	memset(&at, 0, sizeof at);
	at.size = sizeof at;
	at.type = PERF_TYPE_SOFTWARE;
	at.config = PERF_COUNT_SW_TASK_CLOCK;
	at.sample_period = interval;
	at.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER |
			 PERF_SAMPLE_STACK_USER | (kernel ? PERF_SAMPLE_CALLCHAIN : 0);
	at.sample_regs_user = RUNW_REGS_MASK;
	at.sample_stack_user = STACK_COPY;
	at.exclude_callchain_user = 1;
	/* kernel mode counted where this user may (its time then goes to
	 * the user stack that entered the kernel, as the collector's
	 * samples it), else user mode only */
	at.exclude_kernel = a->user_only;
	at.exclude_hv = 1;
	at.inherit = 1; /* the threads it makes from now on */
	at.use_clockid = 1;
	at.clockid = CLOCK_MONOTONIC;
	at.disabled = 1;
	at.wakeup_events = 32;
	size_t first = a->nfds;
	for (int c = 0; c < a->ncpu; c++) {
		int fd = (int)syscall(SYS_perf_event_open, &at, tid, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && (errno == EACCES || errno == EPERM) && !kernel && !at.exclude_kernel && a->nfds == first &&
		    !a->nt) {
			at.exclude_kernel = 1;
			a->user_only = 1;
			fd = (int)syscall(SYS_perf_event_open, &at, tid, c, -1, PERF_FLAG_FD_CLOEXEC);
		}
		if (fd < 0 && errno == ENODEV)
			continue; /* an offline CPU */
		int e = errno;
		if (fd >= 0 && sonde_grow(&a->fds, &a->capfds, a->nfds + 1, sizeof *a->fds, 64)) {
			close(fd);
			fd = -1;
			e = ENOMEM;
		}
		if (fd >= 0 && a->ring[c].fd < 0) {
			void *m = mmap(NULL, a->page * (RING_DATA_PAGES + 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m == MAP_FAILED) {
				e = errno;
				close(fd);
				fd = -1;
			} else {
				a->ring[c] = (struct aring){ fd, m };
			}
		} else if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, a->ring[c].fd) < 0) {
			e = errno;
			close(fd);
			fd = -1;
		}
		if (fd < 0) {
			/* all or none of the thread's */
			while (a->nfds > first) {
				int f = a->fds[--a->nfds];
				for (int r = 0; r < a->ncpu; r++)
					if (a->ring[r].fd == f)
						a->ring[r].fd = -2; /* mapped, its counter closed */
				close(f);
			}
			return -e;
		}
		a->fds[a->nfds++] = fd;
	}
	if (sonde_grow(&a->t, &a->capt, a->nt + 1, sizeof *a->t, 64))
		return -ENOMEM;
	a->t[a->nt++] = (struct athread){ tid, thread_cpu(a->pid, tid), 0 };
	return 0;
}

static bool have_thread(const struct astate *a, pid_t tid)
{
	for (size_t i = 0; i < a->nt; i++)
		if (a->t[i].tid == tid)
			return true;
	return false;
}

/* One sample record (its fields in perf's order: TID, TIME, PERIOD,
 * CALLCHAIN with -k, REGS_USER, STACK_USER): unwound and written. */
static void one_sample(struct astate *a, const uint64_t *p, const uint64_t *end, int kernel)
{
	if (end - p < 4)
		goto bad;
	pid_t tid = (pid_t)(p[0] >> 32);
	uint64_t time = p[1], period = p[2];
	p += 3;
	int nk = 0;
	struct sonde_frame *fr = a->fr;
	if (kernel) {
		uint64_t nr = *p++;
		if (nr > (uint64_t)(end - p))
			goto bad;
		for (uint64_t i = 0; i < nr; i++)
			if (p[i] < (uint64_t)PERF_CONTEXT_MAX && nk < 256)
				fr[nk++] = (struct sonde_frame){ .pc = p[i],
					.kind = SONDE_FRAME_KERNEL, .exact = nk == 0 };
		p += nr;
	}
	const uint64_t *regs;
	const uint8_t *stack;
	uint64_t dyn;
	if (runw_parse_user(p, end, &regs, &stack, &dyn) < 0)
		goto bad;
	int n = nk;
	uint16_t flags = 0;
	if (regs) {
		/* the kernel's frames above the user stack that entered it */
		n += runw_unwind(a->unw, tid, regs, stack, dyn, fr + nk, a->depth - nk, &flags);
		if (!flags)
			a->unwound_to_root++;
	} else if (!nk) {
		goto bad; /* a kernel thread's, of nothing */
	} else {
		flags |= SONDE_STACK_INCOMPLETE;
	}
	uint64_t id = runw_intern(&a->st, fr, n, flags);
	if (sonde_expw_sample_state(a->w, (uint32_t)tid, 0, 0, time, period, id) < 0)
		a->failed = 1;
	a->samples++;
	if (u64map_get(&a->names, (uint64_t)tid) < 0)
		u64map_put(&a->names, (uint64_t)tid, 1);
	return;
bad:
	a->bad++;
}

static void drain(struct astate *a, struct aring *t, int kernel, uint64_t *rec, size_t reccap)
{
	struct perf_event_mmap_page *m = t->m;
	if (!m)
		return;
	const uint8_t *data = (const uint8_t *)m + m->data_offset;
	uint64_t size = m->data_size;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		runw_ring_copy(data, size, tail, &h, sizeof h);
		if (h.size < sizeof h || tail + h.size > head)
			break;
		if (h.size <= reccap) {
			runw_ring_copy(data, size, tail, rec, h.size);
			const uint64_t *p = rec + 1, *end = (const uint64_t *)((const uint8_t *)rec + h.size);
			if (h.type == PERF_RECORD_SAMPLE)
				one_sample(a, p, end, kernel);
			else if (h.type == PERF_RECORD_LOST && end - p >= 2)
				a->lost += p[1];
		} else {
			a->bad++;
		}
		tail += h.size;
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
}

volatile sig_atomic_t collect_attach_stop;

static void on_signal(int sig)
{
	(void)sig;
	collect_attach_stop = 1;
}

int collect_attach_alive(pid_t pid)
{
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 0;
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* ^C, SIGTERM and SIGHUP end an attached recording (collect_attach_stop),
 * not sonde collect. */
void collect_attach_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* What -P cannot give: the options that need the collector inside the
 * target.  NULL when every option given is one -P takes. */
static const char *refused(const struct collect_opts *o, int argc, char **argv)
{
	static const char *const why[][2] = {
		{ "-s", "synchronization tracing" }, { "-H", "heap tracing" },   { "-i", "I/O tracing" },
		{ "-m", "MPI tracing" },	      { "-M", "MPI jobs" },	 { "-j", "Java frames" },
		{ "-J", "Java frames" },	      { "-w", "off-CPU time" },	 { "-h", "counters" },
		{ "-l", "sample points by signal" },  { "-y", "pause/resume" },	 { "-F", "descendants" },
		{ "-L", "a size limit" },	      { "-S", "sample points" },	 { "-a", "archives" },
	};
	for (int i = 0; i < o->nopts; i++) {
		const char *opt = argv[o->opt_at[i]];
		if (!strcmp(opt, "-j") && o->java && !strcmp(o->java, "off"))
			continue; /* -j off: a JVM recorded from outside */
		for (size_t k = 0; k < sizeof why / sizeof why[0]; k++)
			if (!strcmp(opt, why[k][0]))
				return why[k][1];
	}
	(void)argc;
	return NULL;
}

/* What every -P needs: a duration, not a window, and clock profiling.
 * 0, or 2 with the error said. */
int collect_attach_check(const struct collect_opts *o)
{
	if (o->start_s > 0) {
		fprintf(stderr, "sonde collect: -P: -t takes a duration (SECONDS), not START-END\n");
		return 2;
	}
	if (!o->interval_ms) {
		fprintf(stderr, "sonde collect: -P needs clock profiling (-p on, hi, lo or N)\n");
		return 2;
	}
	return 0;
}

/* log.xml's beginning, as the collector writes it, for the target. */
static void write_log(struct astate *a, const struct collect_opts *o, uint64_t start, uint64_t interval, int kernel)
{
	char host[256] = "?";
	gethostname(host, sizeof host - 1);
	sonde_expw_log(a->w,
		       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		       "<experiment format=\"%d\" collector=\"sonde collect -P\">\n",
		       SONDE_FORMAT_VERSION);
	runw_log_target(a->w, a->pid, NULL);
	sonde_expw_log(a->w,
		       "<system host=\"%s\" os=\"Linux\" cpus=\"%ld\" pagesize=\"%zu\"/>\n"
		       "<settings clock_source=\"perf-task-clock-attach\" kernel_time=\"%s\" "
		       "clock_interval_ns=\"%llu\" depth_limit=\"%d\" size_limit_mb=\"0\" duration_s=\"0\" "
		       "attached=\"1\"%s/>\n"
		       "<time start_ns=\"%llu\"/>\n"
		       "<dataformat file=\"profile\" kind=\"1\"/>\n"
		       "<dataformat file=\"stacks\" kind=\"2\"/>\n"
		       "<event kind=\"start\" time_ns=\"%llu\"/>\n",
		       host, sysconf(_SC_NPROCESSORS_ONLN), a->page, a->user_only ? "not-counted" : "sampled",
		       (unsigned long long)interval, o->depth,
		       kernel ? " kernel_stacks=\"1\"" : "", (unsigned long long)start, (unsigned long long)start);
}

int collect_attach(struct collect_opts *o, int argc, char **argv)
{
	pid_t pid = (pid_t)o->attach_pid;
	const char *no = refused(o, argc, argv);
	if (no) {
		fprintf(stderr, "sonde collect: -P records a running process from outside it: %s needs sonde's collector "
				"inside the program from its start (attach gives clock profiling, -p, and kernel stacks, -k)\n",
			no);
		return 2;
	}
	if (collect_attach_check(o))
		return 2;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "sonde collect: -P %d: no such process\n", (int)pid);
		return 2;
	}
	if (o->dry_run) {
		printf("attach: process %d, from outside it, for %s\nclock profiling: %.3f ms\nkernel call stacks: %s\n",
		       (int)pid, o->stop_s > 0 ? "-t seconds" : "until interrupted", o->interval_ms,
		       o->kernel ? "on" : "off");
		return 0;
	}
	struct astate a;
	memset(&a, 0, sizeof a);
	a.pid = pid;
	a.depth = o->depth > 0 ? o->depth : SONDE_DEFAULT_DEPTH;
	long pg = sysconf(_SC_PAGESIZE);
	a.page = pg > 0 ? (size_t)pg : 4096;
	uint64_t interval = (uint64_t)llround(o->interval_ms * 1e6);
	a.ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (a.ncpu < 1)
		a.ncpu = 1;
	a.ring = calloc((size_t)a.ncpu, sizeof *a.ring);
	if (!a.ring)
		return 1;
	for (int c = 0; c < a.ncpu; c++)
		a.ring[c].fd = -1;
	/* every thread, and those made while the list was read */
	for (int round = 0, added = 1; added && round < 100; round++) {
		added = 0;
		snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
		DIR *d = opendir(path);
		if (!d)
			break;
		struct dirent *e;
		while ((e = readdir(d))) {
			pid_t tid = (pid_t)atoi(e->d_name);
			if (tid <= 0 || have_thread(&a, tid))
				continue;
			int rc = open_thread(&a, tid, interval, o->kernel);
			if (rc == -ESRCH)
				continue; /* it ended meanwhile */
			if (rc < 0) {
				closedir(d);
				if (rc == -EACCES || rc == -EPERM)
					fprintf(stderr, "sonde collect: -P %d: cannot attach to this process of uid %u (%s)\n",
						(int)pid, (unsigned)st.st_uid,
						st.st_uid != getuid() ? "another user's process needs CAP_SYS_PTRACE, as root has"
						: o->kernel ? "-k on needs perf_event_paranoid <= 1 or CAP_PERFMON"
							    : "perf_event_paranoid is above 2, or a security module refuses it");
				else
					fprintf(stderr, "sonde collect: -P %d: cannot open a sampling counter on thread %d: "
							"%s\n",
						(int)pid, (int)tid, strerror(-rc));
				return 2;
			}
			added = 1;
		}
		closedir(d);
	}
	if (!a.nt) {
		fprintf(stderr, "sonde collect: -P %d: the process ended before it could be attached\n", (int)pid);
		return 2;
	}
	char why[256];
	a.unw = runw_open(pid, why, sizeof why);
	if (!a.unw) {
		fprintf(stderr, "sonde collect: -P %d: cannot read the process's objects: %s\n", (int)pid, why);
		return 2;
	}
	char *exp = o->exp;
	int rc = collect_make_experiment(o, exp, sizeof o->exp, 0);
	if (rc)
		return rc;
	char err[512];
	a.w = sonde_expw_create(exp, err, sizeof err);
	a.st.w = a.w;
	if (!a.w) {
		fprintf(stderr, "sonde collect: %s\n", err);
		return 1;
	}
	if (o->kernel && collect_kernel_syms(exp))
		return 1;
	a.fr = calloc((size_t)a.depth + 1, sizeof *a.fr);
	uint64_t *rec = malloc(sizeof(uint64_t) * (a.page * RING_DATA_PAGES / 8));
	if (!a.fr || !rec)
		return 1;
	collect_attach_signals();
	/* the experiment's time: from when every counter counts to when
	 * the first stops (its start and exit events) */
	for (size_t i = 0; i < a.nfds; i++)
		ioctl(a.fds[i], PERF_EVENT_IOC_ENABLE, 0);
	uint64_t start = now_ns();
	sonde_expw_process(a.w, (uint32_t)pid, start);
	write_log(&a, o, start, interval, o->kernel);
	fprintf(stderr, "sonde collect: attached to process %d (%zu threads)%s\n", (int)pid, a.nt,
		o->stop_s > 0 ? "" : "; ^C to detach");
	uint64_t stop_at = o->stop_s > 0 ? start + (uint64_t)llround(o->stop_s * 1e9) : UINT64_MAX;
	int gone = 0;
	while (!collect_attach_stop) {
		uint64_t t = now_ns();
		if (t >= stop_at)
			break;
		if (!collect_attach_alive(pid)) {
			gone = 1;
			break;
		}
		struct pollfd pf[a.ncpu];
		nfds_t np = 0;
		for (int c = 0; c < a.ncpu; c++)
			if (a.ring[c].fd >= 0)
				pf[np++] = (struct pollfd){ a.ring[c].fd, POLLIN, 0 };
		poll(pf, np, 10);
		for (int c = 0; c < a.ncpu; c++)
			drain(&a, &a.ring[c], o->kernel, rec, a.page * RING_DATA_PAGES);
	}
	uint64_t end = now_ns();
	for (size_t i = 0; i < a.nfds; i++)
		ioctl(a.fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (size_t i = 0; i < a.nt; i++)
		a.t[i].cpu1 = thread_cpu(pid, a.t[i].tid);
	for (int c = 0; c < a.ncpu; c++) {
		drain(&a, &a.ring[c], o->kernel, rec, a.page * RING_DATA_PAGES);
		if (a.ring[c].m)
			munmap(a.ring[c].m, a.page * (RING_DATA_PAGES + 1));
	}
	for (size_t i = 0; i < a.nfds; i++)
		close(a.fds[i]);
	/* the threads: their names, and for those there at the attach their
	 * CPU time while recorded (the kernel's accounting) */
	for (size_t i = 0; i < a.nt; i++)
		if (u64map_get(&a.names, (uint64_t)a.t[i].tid) < 0)
			u64map_put(&a.names, (uint64_t)a.t[i].tid, 1);
	for (size_t s = 0; s < a.names.cap; s++) {
		if (!a.names.s[s].val)
			continue;
		pid_t tid = (pid_t)a.names.s[s].key;
		char comm[64] = "";
		snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
		FILE *f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof comm, f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		uint64_t cpu = 0;
		for (size_t i = 0; i < a.nt; i++)
			if (a.t[i].tid == tid && a.t[i].cpu1 > a.t[i].cpu0)
				cpu = a.t[i].cpu1 - a.t[i].cpu0;
		sonde_expw_log(a.w, "<event kind=\"thread_end\" time_ns=\"%llu\" tid=\"%d\" start_ns=\"%llu\" cpu_ns=\"%llu\"",
			       (unsigned long long)end, (int)tid, (unsigned long long)start, (unsigned long long)cpu);
		if (comm[0]) {
			sonde_expw_log(a.w, " name=\"");
			for (const char *c = comm; *c; c++)
				sonde_expw_log(a.w, *c == '"' ? "&quot;" : *c == '&' ? "&amp;" : *c == '<' ? "&lt;" : "%c",
					       (unsigned char)*c >= 0x20 ? *c : '?');
			sonde_expw_log(a.w, "\"");
		}
		sonde_expw_log(a.w, "/>\n");
	}
	runw_write_map(a.unw, a.w);
	if (a.lost)
		sonde_expw_log(a.w, "<event kind=\"warning\" time_ns=\"%llu\" text=\"%llu samples lost (a ring buffer was "
				    "full)\"/>\n",
			       (unsigned long long)end, (unsigned long long)a.lost);
	sonde_expw_log(a.w,
		       "<event kind=\"info\" time_ns=\"%llu\" text=\"attached from outside the process: %llu samples, "
		       "%llu unwound to the thread's first frame; %llu records not understood\"/>\n",
		       (unsigned long long)end, (unsigned long long)a.samples, (unsigned long long)a.unwound_to_root,
		       (unsigned long long)a.bad);
	sonde_expw_log(a.w, "<event kind=\"detach\" time_ns=\"%llu\"/>\n", (unsigned long long)end);
	sonde_expw_log(a.w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n", (unsigned long long)end);
	runw_close(a.unw);
	if (sonde_expw_finish(a.w, 0, err, sizeof err) < 0) {
		fprintf(stderr, "sonde collect: cannot write '%s': %s\n", exp, err);
		return 1;
	}
	fprintf(stderr, "sonde collect: %s process %d after %.3f s: %s, %llu samples\n",
		gone ? "recorded until the end of" : "detached from", (int)pid, (double)(end - start) / 1e9, exp,
		(unsigned long long)a.samples);
	int failed = a.failed || a.st.failed;
	runw_stacks_release(&a.st);
	return failed ? 1 : 0;
}
