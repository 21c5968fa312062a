/*
 * sonde collect's side of kernel call stacks (-k on): the clock counter
 * that will carry them is opened once on sonde collect itself, as the
 * collector will open it on each thread (collector/clock.c, sigtrap_arm;
 * collector/kstacks.c), before the target starts, so that a machine that
 * does not let this user see the kernel's stacks is a one-line error and
 * no half-run experiment; and the kernel's symbols are copied into the
 * experiment (kallsyms) for sonde print to name the frames with.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collect_settings.h"
#include "commands.h"

int collect_read_int(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -100;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -100;
		fclose(f);
	}
	return v;
}

int collect_kernel_check(const struct collect_opts *o)
{
	if (!o->kernel)
		return 0;
	if (o->interval_ms <= 0) {
		fprintf(stderr, "sonde collect: -k on needs clock profiling (-p on, hi, lo or N): the kernel's stacks "
				"come with its samples\n");
		return 2;
	}
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 1000000;
	a.sample_type = PERF_SAMPLE_CALLCHAIN;
	a.exclude_callchain_user = 1;
	a.exclude_hv = 1;
	a.sigtrap = 1;
	a.remove_on_exec = 1;
	a.disabled = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	int e = errno;
	if (e == EACCES || e == EPERM)
		fprintf(stderr, "sonde collect: -k on: the kernel's call stacks need perf_event_paranoid <= 1 (it is "
				"%d) or CAP_PERFMON (as root: sysctl kernel.perf_event_paranoid=1)\n",
			collect_read_int("/proc/sys/kernel/perf_event_paranoid"));
	else if (e == ENOSYS)
		fprintf(stderr, "sonde collect: -k on: perf_event_open is not available (a seccomp filter, e.g. a "
				"container's, or a kernel without perf events)\n");
	else
		fprintf(stderr, "sonde collect: -k on: the kernel refuses a task-clock counter with call stacks "
				"(%s; Linux 5.13 or later is needed for its SIGTRAP)\n",
			strerror(e));
	return 2;
}

int collect_kernel_syms(const char *expdir)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/kallsyms", expdir);
	int in = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		fprintf(stderr, "sonde collect: warning: -k on: cannot read /proc/kallsyms (%s); kernel frames will "
				"be shown as addresses\n",
			strerror(errno));
		return 0;
	}
	int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		fprintf(stderr, "sonde collect: cannot write '%s': %s\n", path, strerror(errno));
		close(in);
		return 1;
	}
	static char buf[1 << 16];
	int bad = 0, shown = 0;
	ssize_t n;
	/* an address of all zeros on every line: hidden from this user
	 * (kptr_restrict), which the reader takes for no file */
	while ((n = read(in, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n && !shown; i++)
			if (buf[i] != '0' && buf[i] != ' ' && buf[i] != '\n' && (i == 0 || buf[i - 1] == '\n'))
				shown = 1;
		if (write(out, buf, (size_t)n) != n) {
			bad = errno ? errno : EIO;
			break;
		}
	}
	if (n < 0)
		bad = errno;
	close(in);
	if (close(out) < 0 && !bad)
		bad = errno;
	if (bad) {
		fprintf(stderr, "sonde collect: cannot write '%s': %s\n", path, strerror(bad));
		return 1;
	}
	if (!shown)
		fprintf(stderr, "sonde collect: warning: -k on: /proc/kallsyms hides its addresses from this user "
				"(kptr_restrict is %d); kernel frames will be shown as addresses\n",
			collect_read_int("/proc/sys/kernel/kptr_restrict"));
	return 0;
}
