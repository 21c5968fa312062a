/*
 * sonde kernel: the whole system's CPU time with the kernel's call stacks,
 * as Oracle's er_kernel records it.
 *
 *	sonde kernel [-p on|hi|lo|N] [-t SECONDS] [-o ktest.1.er] [PROGRAM ARGS]
 *
 * One sampling counter per CPU (cpu-clock, every process on that CPU),
 * opened by this process, which the sampled programs never see: each
 * overflow writes a record into the CPU's ring buffer (the task's pid and
 * tid, the time, the period, and the kernel's callchain at the overflow)
 * that this process reads as it goes.  The experiment, a founder
 * ktest.N.er written at the end, has one pseudo-thread per CPU ("CPU 0",
 * ...) whose samples' stacks are the kernel's frames on top of one
 * process frame (SONDE_FRAME_PROCESS): "<NAME_PID_1234>" for a process,
 * "<IDLE>" for the idle task.  A sample in user mode is its process
 * frame alone: its time is the process's.  Named from the copy of
 * /proc/kallsyms and the list of the processes seen (their pids and names,
 * from /proc at the start and the kernel's comm records after).
 *
 * Not done: -F (sub-experiments with each process's user stacks, which
 * need the stacks unwound after the fact).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/u64map.h"
#include "commands.h"
#include "reader/experiment.h"
#include "reader/expwriter.h"
#include "remote_unwind.h"
#include "sonde/format.h"

#define RING_DATA_PAGES 64 /* 256 KiB a CPU: 2 ms of records at 1 kHz are 20 KiB */
/* With -F a record holds a copy of the top of the user stack: 16.5 KiB,
 * 16 MiB a second at 1 kHz, so 2 MiB a CPU, read every 50 ms at most. */
#define RING_DATA_PAGES_F 512
#define STACK_COPY 16384u

/* A process -F follows: its sub-experiment, written at the end. */
struct kproc {
	uint32_t pid;
	char name[32], dir[4200];
	struct runw *unw; /* NULL: it was gone at its first sample */
	struct sonde_expw *w;
	struct runw_stacks st;
	uint64_t samples;
};

struct kcpu {
	int cpu, fd;
	struct perf_event_mmap_page *m;
	uint64_t samples, weight, idle_weight;
	uint64_t stat_idle0, stat_idle1; /* /proc/stat's idle + iowait, ns */
};

struct ksample {
	uint64_t time, weight, stack;
	uint16_t cpu;
};

struct kstate {
	struct kcpu *cpu;
	int ncpu;
	size_t page, ring_pages;
	/* -F: on (1), =REGEX (2, re); the processes followed, by pid (and
	 * those not, as -1) */
	int follow;
	regex_t re;
	const char *dir;
	struct kproc *procs;
	size_t nprocs, capprocs;
	struct u64map procix;
	uint64_t *rec;
	size_t reccap;
	struct sonde_expw *w;
	struct runw_stacks st;
	struct u64map seen; /* pids named in the processes file */
	uint64_t lost, bad;
	struct ksample *smp;
	size_t nsmp, capsmp;
	int failed;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int usage(FILE *f)
{
	fprintf(f, "usage: sonde kernel [-p on|hi|lo|N] [-t SECONDS] [-o NAME.er] [PROGRAM [ARGS]]\n"
		   "  records every CPU's time with the kernel's call stacks: for SECONDS (default 10),\n"
		   "  or while PROGRAM runs; -p: on 10 ms (default), hi 1 ms, lo 100 ms, N milliseconds;\n"
		   "  -o: the experiment (default ktest.N.er, N the next free)\n");
	return f == stderr ? 2 : 0;
}

/* The next free ktest.N.er in the current directory, made. */
static int make_dir(const char *name, char *path, size_t cap)
{
	if (name) {
		if ((size_t)snprintf(path, cap, "%s", name) >= cap) {
			fprintf(stderr, "sonde kernel: experiment path too long: %s\n", name);
			return 2;
		}
		if (mkdir(path, 0755) < 0) {
			fprintf(stderr, "sonde kernel: %s: %s\n",
				errno == EEXIST ? "experiment already exists, not overwriting" : strerror(errno), path);
			return 2;
		}
		return 0;
	}
	long next = 1;
	DIR *d = opendir(".");
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			long v;
			char tail[8];
			if (sscanf(e->d_name, "ktest.%ld%7s", &v, tail) == 2 && !strcmp(tail, ".er") && v >= next)
				next = v + 1;
		}
		closedir(d);
	}
	for (int tries = 0; tries < 1000; tries++, next++) {
		snprintf(path, cap, "ktest.%ld.er", next);
		if (mkdir(path, 0755) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	fprintf(stderr, "sonde kernel: cannot create an experiment in the current directory: %s\n", strerror(errno));
	return 2;
}

static int open_cpu(int cpu, uint64_t period, int follow)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD;
	if (follow) {
		/* the user registers and the top of the user stack, which
		 * the followed processes' stacks are unwound from */
		a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a.sample_regs_user = RUNW_REGS_MASK;
		a.sample_stack_user = STACK_COPY;
	}
	a.exclude_callchain_user = 1;
	a.exclude_hv = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.comm = 1; /* names of processes as they exec */
	a.disabled = 1;
	a.wakeup_events = 64;
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* A process's name into the processes file, once. */
static void name_process(struct kstate *k, uint32_t pid, const char *comm)
{
	if (u64map_get(&k->seen, pid) >= 0 && !comm)
		return;
	char buf[64] = "";
	if (!comm) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%u/comm", pid);
		FILE *f = fopen(path, "re");
		if (f) {
			if (fgets(buf, sizeof buf, f))
				buf[strcspn(buf, "\n")] = 0;
			fclose(f);
		}
		if (!buf[0])
			return; /* gone: <process_PID_N> */
		comm = buf;
	}
	if (u64map_get(&k->seen, pid) < 0 && u64map_put(&k->seen, pid, 1) < 0)
		k->failed = 1;
	if (pid && sonde_expw_text(k->w, "processes", "%u %s\n", pid, comm) < 0)
		k->failed = 1;
}

/* The process pid's entry, made at its first sample when -F follows it;
 * NULL when it is not followed. */
static struct kproc *followed(struct kstate *k, uint32_t pid)
{
	long i = u64map_get(&k->procix, pid);
	if (i >= 0)
		return i < (long)k->nprocs ? &k->procs[i] : NULL;
	char path[64], comm[32] = "";
	snprintf(path, sizeof path, "/proc/%u/comm", pid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	if (!comm[0] || (k->follow == 2 && regexec(&k->re, comm, 0, NULL, 0))) {
		/* gone before its first sample was read, or not asked for */
		u64map_put(&k->procix, pid, UINT32_MAX - 1);
		return NULL;
	}
	if (sonde_grow(&k->procs, &k->capprocs, k->nprocs + 1, sizeof *k->procs, 64) ||
	    u64map_put(&k->procix, pid, (uint32_t)k->nprocs) < 0) {
		k->failed = 1;
		return NULL;
	}
	struct kproc *pr = &k->procs[k->nprocs++];
	memset(pr, 0, sizeof *pr);
	pr->pid = pid;
	snprintf(pr->name, sizeof pr->name, "%s", comm);
	/* the reference's name: _NAME_PID_1234.1.er, NAME safe in a path */
	char safe[32];
	snprintf(safe, sizeof safe, "%s", comm);
	for (char *s = safe; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '+'))
			*s = '-';
	snprintf(pr->dir, sizeof pr->dir, "%s/_%s_PID_%u.1.er", k->dir, safe, pid);
	char err[512];
	pr->w = sonde_expw_create(pr->dir, err, sizeof err);
	if (!pr->w) {
		fprintf(stderr, "sonde kernel: %s\n", err);
		k->failed = 1;
	}
	pr->st.w = pr->w;
	pr->unw = runw_open((pid_t)pid, err, sizeof err);
	return pr;
}

/* A followed process's sample: its user stack, unwound, below the
 * kernel's frames (fr[0, nk)). */
static void follow_sample(struct kstate *k, struct kproc *pr, uint32_t tid, uint16_t cpu, uint64_t time,
			  uint64_t period, struct sonde_frame *fr, int nk, const uint64_t *p, const uint64_t *end)
{
	const uint64_t *regs;
	const uint8_t *stack;
	uint64_t dyn;
	if (!pr->w || runw_parse_user(p, end, &regs, &stack, &dyn) < 0)
		return;
	int n = nk;
	uint16_t flags = 0;
	if (regs && pr->unw) {
		n += runw_unwind(pr->unw, (pid_t)tid, regs, stack, dyn, fr + nk, PERF_MAX_STACK_DEPTH, &flags);
	} else if (regs) {
		fr[n++] = (struct sonde_frame){ .pc = regs[RUNW_IP] | SONDE_PC_EXACT,
			.kind = SONDE_FRAME_NATIVE, .exact = true };
		flags = SONDE_STACK_INCOMPLETE;
	} else if (!nk) {
		return;
	}
	if (sonde_expw_sample_state(pr->w, tid, cpu, 0, time, period, runw_intern(&pr->st, fr, n, flags)) < 0)
		k->failed = 1;
	pr->samples++;
}

static void drain(struct kstate *k, struct kcpu *c)
{
	struct perf_event_mmap_page *m = c->m;
	const uint8_t *data = (const uint8_t *)m + m->data_offset;
	uint64_t size = m->data_size;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
	uint64_t *rec = k->rec;
	struct sonde_frame fr[2 * PERF_MAX_STACK_DEPTH + 2];
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		runw_ring_copy(data, size, tail, &h, sizeof h);
		if (h.size < sizeof h || tail + h.size > head)
			break;
		if (h.size <= k->reccap) {
			runw_ring_copy(data, size, tail, rec, h.size);
			const uint64_t *p = (const uint64_t *)((const uint8_t *)rec + sizeof h);
			const uint64_t *end = (const uint64_t *)((const uint8_t *)rec + h.size);
			if (h.type == PERF_RECORD_SAMPLE && end - p >= 4) {
				/* TID, TIME, PERIOD, CALLCHAIN in that order
				 * (perf_event.h: the fields in bit order) */
				uint32_t pid = (uint32_t)p[0], tid = (uint32_t)(p[0] >> 32);
				uint64_t time = p[1], period = p[2], nr = p[3];
				const uint64_t *ips = p + 4;
				if (nr <= (uint64_t)(end - ips)) {
					int n = 0;
					for (uint64_t i = 0; i < nr && n < PERF_MAX_STACK_DEPTH; i++)
						if (ips[i] < (uint64_t)PERF_CONTEXT_MAX)
							fr[n++] = (struct sonde_frame){ .pc = ips[i],
								.kind = SONDE_FRAME_KERNEL, .exact = n == 0 };
					struct kproc *pr = k->follow && pid ? followed(k, pid) : NULL;
					if (pr)
						follow_sample(k, pr, tid, (uint16_t)c->cpu, time, period, fr, n, ips + nr,
							      end);
					fr[n++] = (struct sonde_frame){ .pc = pid,
						.kind = SONDE_FRAME_PROCESS, .exact = false };
					if (pid)
						name_process(k, pid, NULL);
					if (sonde_grow(&k->smp, &k->capsmp, k->nsmp + 1, sizeof *k->smp, 4096)) {
						k->failed = 1;
					} else {
						k->smp[k->nsmp++] =
							(struct ksample){ time, period, runw_intern(&k->st, fr, n, 0), (uint16_t)c->cpu };
						c->samples++;
						c->weight += period;
						if (!pid)
							c->idle_weight += period;
					}
				} else {
					k->bad++;
				}
			} else if (h.type == PERF_RECORD_COMM && end - p >= 2) {
				/* pid, tid, comm: a process's name after an exec
				 * (a thread's own name when pid != tid) */
				uint32_t pid = (uint32_t)p[0], tid = (uint32_t)(p[0] >> 32);
				char comm[17];
				memcpy(comm, p + 1, 16);
				comm[16] = 0;
				if (pid == tid)
					name_process(k, pid, comm);
			} else if (h.type == PERF_RECORD_LOST && end - p >= 2) {
				k->lost += p[1];
			}
		} else {
			k->bad++;
		}
		tail += h.size;
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
}

/* Each CPU's idle and iowait time from /proc/stat, in ns: at the start
 * (end 0) or at the end. */
static void stat_idle(struct kstate *k, int end)
{
	FILE *f = fopen("/proc/stat", "re");
	char line[512];
	long tck = sysconf(_SC_CLK_TCK);
	while (f && fgets(line, sizeof line, f)) {
		int cpu;
		unsigned long long v[5];
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3], &v[4]) != 6)
			continue;
		for (int c = 0; c < k->ncpu; c++)
			if (k->cpu[c].cpu == cpu) {
				uint64_t ns = (v[3] + v[4]) * (1000000000ull / (uint64_t)(tck > 0 ? tck : 100));
				*(end ? &k->cpu[c].stat_idle1 : &k->cpu[c].stat_idle0) = ns;
			}
	}
	if (f)
		fclose(f);
}

static volatile sig_atomic_t g_stop;
static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* log.xml's beginning, as the collector's (the kernel's experiment has no
 * target: the command line is sonde kernel's). */
static void write_log(struct kstate *k, int argc, char **argv, uint64_t start, uint64_t interval, int ncpu)
{
	char host[256] = "?";
	gethostname(host, sizeof host - 1);
	sonde_expw_log(k->w,
		       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		       "<experiment format=\"%d\" collector=\"sonde kernel\">\n"
		       "<target pid=\"%d\" ppid=\"%d\" cwd=\"/\" exe=\"sonde kernel\" command=\"sonde kernel",
		       SONDE_FORMAT_VERSION, (int)getpid(), (int)getppid());
	for (int i = 1; i < argc; i++) {
		sonde_expw_log(k->w, " ");
		for (const char *c = argv[i]; *c; c++) {
			if (*c == '"')
				sonde_expw_log(k->w, "&quot;");
			else if (*c == '&')
				sonde_expw_log(k->w, "&amp;");
			else if (*c == '<')
				sonde_expw_log(k->w, "&lt;");
			else if ((unsigned char)*c >= 0x20)
				sonde_expw_log(k->w, "%c", *c);
		}
	}
	sonde_expw_log(k->w,
		       "\"/>\n<system host=\"%s\" os=\"Linux\" cpus=\"%d\" pagesize=\"%zu\"/>\n"
		       "<settings clock_source=\"perf-cpu-clock-system\" kernel_time=\"sampled\" "
		       "clock_interval_ns=\"%llu\" depth_limit=\"%d\" size_limit_mb=\"0\" duration_s=\"0\" "
		       "kernel_stacks=\"1\" system_wide=\"1\"/>\n"
		       "<time start_ns=\"%llu\"/>\n"
		       "<dataformat file=\"profile\" kind=\"1\"/>\n"
		       "<dataformat file=\"stacks\" kind=\"2\"/>\n"
		       "<event kind=\"start\" time_ns=\"%llu\"/>\n",
		       host, ncpu, k->page, (unsigned long long)interval, PERF_MAX_STACK_DEPTH + 1,
		       (unsigned long long)start, (unsigned long long)start);
}

int cmd_kernel(int argc, char **argv)
{
	double ms = 10, seconds = -1;
	const char *name = NULL;
	int follow = 0;
	regex_t re;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--"))
			break;
		if (!strcmp(o, "-h") || !strcmp(o, "--help"))
			return usage(stdout);
		if (!v || (strcmp(o, "-p") && strcmp(o, "-t") && strcmp(o, "-o") && strcmp(o, "-F"))) {
			fprintf(stderr, "sonde kernel: %s option '%s'\n", v ? "unknown" : "no value for", o);
			return usage(stderr);
		}
		i++;
		char *end;
		if (!strcmp(o, "-p")) {
			if (!strcmp(v, "on"))
				ms = 10;
			else if (!strcmp(v, "hi"))
				ms = 1;
			else if (!strcmp(v, "lo"))
				ms = 100;
			else if ((ms = strtod(v, &end)) < 0.1 || ms > 10000 || *end || end == v) {
				fprintf(stderr, "sonde kernel: invalid -p value (on, hi, lo or 0.1 to 10000 ms): %s\n", v);
				return 2;
			}
		} else if (!strcmp(o, "-t")) {
			if ((seconds = strtod(v, &end)) <= 0 || *end || end == v || seconds > 86400) {
				fprintf(stderr, "sonde kernel: invalid -t value (seconds, more than 0): %s\n", v);
				return 2;
			}
		} else if (!strcmp(o, "-o")) {
			name = v;
		} else if (!strcmp(v, "on")) {
			follow = 1;
		} else if (v[0] == '=') {
			follow = 2;
			if (regcomp(&re, v + 1, REG_EXTENDED | REG_NOSUB)) {
				fprintf(stderr, "sonde kernel: -F: invalid regular expression: %s\n", v + 1);
				return 2;
			}
		} else if (strcmp(v, "off")) {
			fprintf(stderr, "sonde kernel: invalid -F value (on, off or =REGEX): %s\n", v);
			return 2;
		}
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	char **prog = i < argc ? argv + i : NULL;
	if (!prog && seconds < 0)
		seconds = 10;
	uint64_t interval = (uint64_t)llround(ms * 1e6);

	struct kstate k;
	memset(&k, 0, sizeof k);
	long pg = sysconf(_SC_PAGESIZE);
	k.page = pg > 0 ? (size_t)pg : 4096;
	k.follow = follow;
	if (follow == 2)
		k.re = re;
	k.ring_pages = follow ? RING_DATA_PAGES_F : RING_DATA_PAGES;
	k.reccap = k.page * k.ring_pages;
	k.rec = malloc(k.reccap);
	if (!k.rec)
		return 1;
	int nconf = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (nconf < 1)
		nconf = 1;
	k.cpu = calloc((size_t)nconf, sizeof *k.cpu);
	if (!k.cpu)
		return 1;
	/* Every CPU the kernel has online: one that is offline refuses
	 * (ENODEV), and its time is none. */
	int refused = 0;
	for (int c = 0; c < nconf; c++) {
		int fd = open_cpu(c, interval, follow);
		if (fd < 0) {
			if (errno == EACCES || errno == EPERM) {
				refused = errno;
				break;
			}
			if (errno == ENODEV || errno == ENOENT)
				continue;
			fprintf(stderr, "sonde kernel: cannot sample CPU %d: %s\n", c, strerror(errno));
			return 1;
		}
		void *m = mmap(NULL, k.page * (k.ring_pages + 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			fprintf(stderr, "sonde kernel: cannot map CPU %d's ring buffer: %s\n", c, strerror(errno));
			return 1;
		}
		k.cpu[k.ncpu++] = (struct kcpu){ .cpu = c, .fd = fd, .m = m };
	}
	if (refused || !k.ncpu) {
		fprintf(stderr, "sonde kernel: sampling every CPU needs perf_event_paranoid <= 0 (it is %d) or "
				"CAP_PERFMON (as root: sysctl kernel.perf_event_paranoid=0)\n",
			collect_read_int("/proc/sys/kernel/perf_event_paranoid"));
		return 2;
	}
	char dir[4096];
	int rc = make_dir(name, dir, sizeof dir);
	if (rc)
		return rc;
	k.dir = dir;
	char err[512];
	k.w = sonde_expw_create(dir, err, sizeof err);
	k.st.w = k.w;
	if (!k.w) {
		fprintf(stderr, "sonde kernel: %s\n", err);
		return 1;
	}
	if (collect_kernel_syms(dir))
		return 1;
	/* the processes running now; later ones by their comm records or
	 * at their first sample */
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			name_process(&k, (uint32_t)strtoul(e->d_name, NULL, 10), NULL);
	if (d)
		closedir(d);
	/* the experiment's time starts as the counters do (its start and
	 * exit events bound the time sampled) */
	uint64_t start = now_ns();
	sonde_expw_process(k.w, (uint32_t)getpid(), start);
	write_log(&k, argc, argv, start, interval, k.ncpu);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	stat_idle(&k, 0);
	for (int c = 0; c < k.ncpu; c++)
		ioctl(k.cpu[c].fd, PERF_EVENT_IOC_ENABLE, 0);
	pid_t child = -1;
	int status = 0;
	if (prog) {
		child = fork();
		if (child == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			execvp(prog[0], prog);
			fprintf(stderr, "sonde kernel: cannot run '%s': %s\n", prog[0], strerror(errno));
			_exit(127);
		}
		if (child < 0) {
			fprintf(stderr, "sonde kernel: fork: %s\n", strerror(errno));
			g_stop = 1;
		}
	}
	uint64_t stop_at = seconds > 0 ? start + (uint64_t)llround(seconds * 1e9) : UINT64_MAX;
	struct pollfd pf[k.ncpu];
	for (int c = 0; c < k.ncpu; c++)
		pf[c] = (struct pollfd){ k.cpu[c].fd, POLLIN, 0 };
	while (!g_stop) {
		uint64_t t = now_ns();
		if (t >= stop_at)
			break;
		if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
			child = 0;
			break;
		}
		uint64_t left = (stop_at - t) / 1000000;
		poll(pf, (nfds_t)k.ncpu, left < 50 ? (int)left + 1 : 50);
		for (int c = 0; c < k.ncpu; c++)
			drain(&k, &k.cpu[c]);
	}
	uint64_t end = now_ns();
	for (int c = 0; c < k.ncpu; c++) {
		ioctl(k.cpu[c].fd, PERF_EVENT_IOC_DISABLE, 0);
		drain(&k, &k.cpu[c]);
	}
	stat_idle(&k, 1);
	/* A CPU the kernel halts when idle takes no samples (the counter's
	 * timer does not run there: perf record -a sees the same), so its
	 * idle time is the kernel's accounting's less what was sampled: one
	 * <IDLE> sample at the end, per CPU. */
	struct sonde_frame idle = { .pc = 0, .kind = SONDE_FRAME_PROCESS, .exact = false };
	uint64_t idle_stack = runw_intern(&k.st, &idle, 1, 0);
	for (int c = 0; c < k.ncpu; c++) {
		struct kcpu *x = &k.cpu[c];
		uint64_t acct = x->stat_idle1 > x->stat_idle0 ? x->stat_idle1 - x->stat_idle0 : 0;
		if (acct > x->idle_weight &&
		    !sonde_grow(&k.smp, &k.capsmp, k.nsmp + 1, sizeof *k.smp, 4096)) {
			k.smp[k.nsmp++] = (struct ksample){ end, acct - x->idle_weight, idle_stack, (uint16_t)x->cpu };
			x->weight += acct - x->idle_weight;
		}
	}
	if (child > 0) {
		/* -t ended before the program: it runs on, unrecorded */
		fprintf(stderr, "sonde kernel: -t %g s ended before '%s' (pid %d), which goes on\n", seconds, prog[0],
			(int)child);
	}
	for (size_t s = 0; s < k.nsmp; s++) {
		const struct ksample *x = &k.smp[s];
		if (sonde_expw_sample_state(k.w, (uint32_t)x->cpu + 1, x->cpu, 0, x->time, x->weight, x->stack) < 0)
			k.failed = 1;
	}
	if (k.lost)
		sonde_expw_log(k.w,
			       "<event kind=\"warning\" time_ns=\"%llu\" text=\"%llu samples lost: a CPU's ring "
			       "buffer was full\"/>\n",
			       (unsigned long long)end, (unsigned long long)k.lost);
	if (k.bad)
		sonde_expw_log(k.w,
			       "<event kind=\"warning\" time_ns=\"%llu\" text=\"%llu records of the ring buffers not "
			       "understood, skipped\"/>\n",
			       (unsigned long long)end, (unsigned long long)k.bad);
	for (int c = 0; c < k.ncpu; c++)
		sonde_expw_log(k.w,
			       "<event kind=\"thread_end\" time_ns=\"%llu\" tid=\"%d\" start_ns=\"%llu\" "
			       "cpu_ns=\"%llu\" name=\"CPU %d\"/>\n",
			       (unsigned long long)end, k.cpu[c].cpu + 1, (unsigned long long)start,
			       (unsigned long long)k.cpu[c].weight, k.cpu[c].cpu);
	sonde_expw_log(k.w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n", (unsigned long long)end);
	if (sonde_expw_map(k.w, "%s", "") < 0)
		k.failed = 1;
	if (sonde_expw_finish(k.w, 0, err, sizeof err) < 0) {
		fprintf(stderr, "sonde kernel: cannot write '%s': %s\n", dir, err);
		return 1;
	}
	/* -F: each followed process's experiment, as a collector's would
	 * be: its user stacks under the kernel's, its objects, its threads */
	for (size_t q = 0; q < k.nprocs; q++) {
		struct kproc *pr = &k.procs[q];
		if (!pr->w)
			continue;
		char host[256] = "?";
		gethostname(host, sizeof host - 1);
		sonde_expw_process(pr->w, pr->pid, start);
		sonde_expw_log(pr->w,
			       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			       "<experiment format=\"%d\" collector=\"sonde kernel -F\">\n",
			       SONDE_FORMAT_VERSION);
		runw_log_target(pr->w, (pid_t)pr->pid, pr->name);
		sonde_expw_log(pr->w,
			       "<system host=\"%s\" os=\"Linux\" cpus=\"%d\" pagesize=\"%zu\"/>\n"
			       "<settings clock_source=\"perf-cpu-clock-system\" kernel_time=\"sampled\" "
			       "clock_interval_ns=\"%llu\" depth_limit=\"%d\" size_limit_mb=\"0\" duration_s=\"0\" "
			       "kernel_stacks=\"1\"/>\n"
			       "<time start_ns=\"%llu\"/>\n"
			       "<dataformat file=\"profile\" kind=\"1\"/>\n"
			       "<dataformat file=\"stacks\" kind=\"2\"/>\n"
			       "<event kind=\"start\" time_ns=\"%llu\"/>\n",
			       host, k.ncpu, k.page, (unsigned long long)interval, 2 * PERF_MAX_STACK_DEPTH + 2,
			       (unsigned long long)start, (unsigned long long)start);
		if (!pr->unw)
			sonde_expw_log(pr->w,
				       "<event kind=\"warning\" time_ns=\"%llu\" text=\"the process ended before "
				       "its objects were read: its user stacks are their first frames\"/>\n",
				       (unsigned long long)start);
		sonde_expw_log(pr->w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n",
			       (unsigned long long)end);
		if (pr->unw)
			runw_write_map(pr->unw, pr->w);
		else
			sonde_expw_map(pr->w, "%s", "");
		char from[4200], to[4300];
		snprintf(from, sizeof from, "%s/kallsyms", dir);
		snprintf(to, sizeof to, "%s/kallsyms", pr->dir);
		if (link(from, to) < 0)
			k.failed = 1;
		if (sonde_expw_finish(pr->w, 0, err, sizeof err) < 0) {
			fprintf(stderr, "sonde kernel: cannot write '%s': %s\n", pr->dir, err);
			return 1;
		}
		if (pr->st.failed)
			k.failed = 1;
		runw_stacks_release(&pr->st);
		runw_close(pr->unw);
	}
	if (k.failed || k.st.failed) {
		fprintf(stderr, "sonde kernel: out of memory; '%s' is incomplete\n", dir);
		return 1;
	}
	uint64_t total = 0;
	for (int c = 0; c < k.ncpu; c++)
		total += k.cpu[c].samples;
	fprintf(stderr, "sonde kernel: %s: %d CPUs, %.3f s, %llu samples", dir, k.ncpu, (double)(end - start) / 1e9,
		(unsigned long long)total);
	if (follow)
		fprintf(stderr, "; %zu processes followed", k.nprocs);
	fprintf(stderr, "\n");
	if (prog && child == 0)
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 0;
}
