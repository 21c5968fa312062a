/*
 * sonde collect's side of counter overflow profiling (-h): every counter
 * asked for is opened once on `sonde collect` itself, as the collector
 * will open it on each thread of the target, before the target starts, so
 * that a counter this machine cannot count is a one-line error naming the
 * counter and why, and no half-run experiment; and the counter list that
 * `sonde collect` alone ends with.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/counters.h"
#include "commands.h"

/* Opens the counter as the collector does (sigtrap, per thread) on this
 * process: 0, or -errno. */
static int try_open(uint32_t type, uint64_t config, uint64_t interval)
{
	int last = 0;
	for (int kernel = 1; kernel >= 0; kernel--) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = type;
		a.config = config;
		a.sample_period = interval ? interval : 1;
		a.exclude_kernel = !kernel;
		a.exclude_hv = 1;
		a.sigtrap = 1;
		a.remove_on_exec = 1;
		a.disabled = 1;
		int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		last = -errno;
		if (last != -EACCES && last != -EPERM)
			break;
	}
	return last;
}

static int paranoid(void)
{
	return collect_read_int("/proc/sys/kernel/perf_event_paranoid");
}

static int hypervisor(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[4096];
	int hv = 0;
	while (f && !hv && fgets(line, sizeof line, f))
		if (!strncmp(line, "flags", 5) && strstr(line, " hypervisor"))
			hv = 1;
	if (f)
		fclose(f);
	return hv;
}

/* Why a counter of type hardware (or a raw PMU's) could not be opened:
 * errno e, as one clause. */
static void reason(int e, int hardware, char *out, size_t cap)
{
	if (e == EACCES || e == EPERM) {
		snprintf(out, cap, "perf_event_paranoid is %d and the process lacks CAP_PERFMON", paranoid());
	} else if (e == ENOSYS) {
		snprintf(out, cap, "perf_event_open is not available (a seccomp filter, e.g. a container's, or a "
				   "kernel without perf events)");
	} else if (hardware && (e == ENOENT || e == EOPNOTSUPP || e == ENODEV || e == EINVAL)) {
		if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0 &&
		    access("/sys/bus/event_source/devices/cpu_core", F_OK) != 0)
			snprintf(out, cap, "no hardware PMU (/sys/bus/event_source/devices has no cpu PMU%s)",
				 hypervisor() ? "; a virtual machine whose hypervisor exposes no virtual PMU" : "");
		else
			snprintf(out, cap, "the PMU does not count it (%s)", strerror(e));
	} else {
		snprintf(out, cap, "%s", strerror(e));
	}
}

int collect_counters_check(struct sonde_hwc *c, int n)
{
	for (int i = 0; i < n; i++) {
		char err[512];
		if (!c[i].def && sonde_hwc_resolve_raw(&c[i], NULL, err, sizeof err) < 0) {
			fprintf(stderr, "sonde collect: %s\n", err);
			return 2;
		}
		int rc = try_open(c[i].type, c[i].config, c[i].interval);
		if (rc < 0) {
			char why[300];
			reason(-rc, c[i].type != SONDE_HWC_SOFTWARE, why, sizeof why);
			fprintf(stderr, "sonde collect: counter '%s' cannot be opened: %s\n", c[i].name, why);
			return 2;
		}
	}
	return 0;
}

int collect_counters_env(const struct sonde_hwc *c, int n, char *out, size_t cap)
{
	size_t used = 0;
	out[0] = '\0';
	for (int i = 0; i < n && used < cap; i++)
		used += (size_t)snprintf(out + used, cap - used, "%s%s|%u|%llu|%llu|%s|%s", i ? ";" : "", c[i].name,
					 c[i].type, (unsigned long long)c[i].config,
					 (unsigned long long)c[i].interval, c[i].title, c[i].unit);
	return used < cap ? 0 : -1;
}

struct rawlist {
	FILE *f;
	int n;
};

static void raw_one(const char *pmu, const char *event, void *arg)
{
	struct rawlist *r = arg;
	struct sonde_hwc c;
	memset(&c, 0, sizeof c);
	snprintf(c.name, sizeof c.name, "%s", event);
	c.ival = 'o';
	char err[256];
	if (sonde_hwc_resolve_raw(&c, NULL, err, sizeof err) < 0 || try_open(c.type, c.config, c.interval) < 0)
		return;
	(void)pmu;
	fprintf(r->f, "%s,%llu (events)\n", event, (unsigned long long)c.interval);
	r->n++;
}

void collect_counters_list(FILE *f)
{
	size_t n;
	const struct sonde_hwc_def *t = sonde_hwc_table(&n);
	int hw = 0, hw_err = 0;
	fprintf(f, "\nAliased counters available for profiling:\n");
	for (size_t i = 0; i < n; i++) {
		int rc = try_open(t[i].type, t[i].config, t[i].interval);
		if (rc < 0) {
			if (t[i].type == SONDE_HWC_HARDWARE && !hw_err)
				hw_err = -rc;
			continue;
		}
		hw += t[i].type == SONDE_HWC_HARDWARE;
		fprintf(f, "%s,%llu ('%s', alias for %s; %s)\n", t[i].alias, (unsigned long long)t[i].interval,
			t[i].title, t[i].perf, t[i].unit);
	}
	fprintf(f, "Raw HW counters available for profiling:\n");
	struct rawlist r = { f, 0 };
	sonde_hwc_raw_list(NULL, raw_one, &r);
	if (!hw && !r.n) {
		char why[300];
		reason(hw_err ? hw_err : ENOENT, 1, why, sizeof why);
		fprintf(f, "No hardware counters on this machine: %s; software counters only.\n", why);
	}
}
