/*
 * Counters for counter overflow profiling: the table, the -h parser and
 * raw PMU events from sysfs (see counters.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/counters.h"

/* Hardware first, then software (the aliased list of `sonde collect`).
 * Overflow values are primes, as gprofng's are, so that sampling does not
 * fall into step with a loop. */
static const struct sonde_hwc_def table[] = {
	{ "cycles", "cpu-cycles", "CPU Cycles", "CPU-cycles", SONDE_HWC_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 9999991 },
	{ "insts", "instructions", "Instructions Executed", "events", SONDE_HWC_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
	  9999991 },
	{ "cache-refs", "cache-references", "Cache References", "events", SONDE_HWC_HARDWARE,
	  PERF_COUNT_HW_CACHE_REFERENCES, 1000003 },
	{ "cache-misses", "cache-misses", "Cache Misses", "events", SONDE_HWC_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
	  100003 },
	{ "branches", "branch-instructions", "Branch Instructions", "events", SONDE_HWC_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1000003 },
	{ "branch-misses", "branch-misses", "Branch Mispredictions", "events", SONDE_HWC_HARDWARE,
	  PERF_COUNT_HW_BRANCH_MISSES, 100003 },
	{ "bus-cycles", "bus-cycles", "Bus Cycles", "CPU-cycles", SONDE_HWC_HARDWARE, PERF_COUNT_HW_BUS_CYCLES,
	  1000003 },
	{ "ref-cycles", "ref-cycles", "Reference Cycles", "CPU-cycles", SONDE_HWC_HARDWARE,
	  PERF_COUNT_HW_REF_CPU_CYCLES, 9999991 },
	{ "task-clock", "task-clock", "Task Clock", "nanoseconds", SONDE_HWC_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
	  10000019 },
	{ "cpu-clock", "cpu-clock", "CPU Clock", "nanoseconds", SONDE_HWC_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
	  10000019 },
	{ "page-faults", "faults", "Page Faults", "events", SONDE_HWC_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1009 },
	{ "minor-faults", "minor-faults", "Minor Page Faults", "events", SONDE_HWC_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS_MIN, 1009 },
	{ "major-faults", "major-faults", "Major Page Faults", "events", SONDE_HWC_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1 },
	{ "context-switches", "cs", "Context Switches", "events", SONDE_HWC_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	  101 },
	{ "cpu-migrations", "migrations", "CPU Migrations", "events", SONDE_HWC_SOFTWARE,
	  PERF_COUNT_SW_CPU_MIGRATIONS, 11 },
	{ "alignment-faults", "alignment-faults", "Alignment Faults", "events", SONDE_HWC_SOFTWARE,
	  PERF_COUNT_SW_ALIGNMENT_FAULTS, 1 },
	{ "emulation-faults", "emulation-faults", "Emulation Faults", "events", SONDE_HWC_SOFTWARE,
	  PERF_COUNT_SW_EMULATION_FAULTS, 1 },
};

const struct sonde_hwc_def *sonde_hwc_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

const struct sonde_hwc_def *sonde_hwc_find(const char *name)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].alias, name) || !strcmp(table[i].perf, name))
			return &table[i];
	return NULL;
}

uint64_t sonde_hwc_interval(char ival, uint64_t n, uint64_t dflt)
{
	uint64_t v = ival == 'n' ? n : ival == 'h' ? dflt / 10 : ival == 'l' ? dflt * 10 : dflt;

	return v ? v : 1;
}

void sonde_hwc_finish(struct sonde_hwc *c)
{
	const struct sonde_hwc_def *d = c->def;

	if (!d)
		return;
	snprintf(c->name, sizeof(c->name), "%s", d->alias);
	c->type = d->type;
	c->config = d->config;
	c->interval = sonde_hwc_interval(c->ival, c->n, d->interval);
	snprintf(c->title, sizeof(c->title), "%s", d->title);
	snprintf(c->unit, sizeof(c->unit), "%s", d->unit);
}

/* An interval word: 'o', 'h', 'l' or 'n' (with *n), 0 for none. */
static char interval_word(const char *s, size_t len, uint64_t *n)
{
	if (len == 2 && !strncmp(s, "on", 2))
		return 'o';
	if (len == 2 && !strncmp(s, "hi", 2))
		return 'h';
	if (len == 2 && !strncmp(s, "lo", 2))
		return 'l';
	if (!len || len > 19)
		return 0;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (!v || v > (1ull << 62))
		return 0;
	*n = v;
	return 'n';
}

static int name_ok(const char *s, size_t len)
{
	if (!len || len >= SONDE_HWC_NAME_MAX || !isalpha((unsigned char)s[0]))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-:", s[i]))
			return 0;
	return 1;
}

int sonde_hwc_parse(const char *spec, struct sonde_hwc *c, int max, char *err, size_t errlen)
{
	if (max > SONDE_MAX_COUNTERS)
		max = SONDE_MAX_COUNTERS;
	if (!spec || !*spec) {
		snprintf(err, errlen, "empty -h value");
		return -1;
	}
	if (!strcmp(spec, "off"))
		return 0;
	if (!strcmp(spec, "on") || !strcmp(spec, "hi") || !strcmp(spec, "lo")) {
		/* the default set: cycles and instructions */
		static const char *const dflt[] = { "cycles", "insts" };
		int k = 0;
		for (; k < 2 && k < max; k++) {
			memset(&c[k], 0, sizeof(c[k]));
			c[k].def = sonde_hwc_find(dflt[k]);
			c[k].ival = spec[0];
			sonde_hwc_finish(&c[k]);
		}
		return k;
	}
	int n = 0;
	const char *p = spec;
	for (;;) {
		size_t len = strcspn(p, ",");
		uint64_t num = 0;
		char w;
		if (n > 0 && !c[n - 1].ival_given && (w = interval_word(p, len, &num))) {
			c[n - 1].ival = w;
			c[n - 1].n = num;
			c[n - 1].ival_given = 1;
		} else if (!len) {
			snprintf(err, errlen, "empty item in -h value '%s'", spec);
			return -1;
		} else if (interval_word(p, len, &num)) {
			snprintf(err, errlen, "-h value '%s': interval '%.*s' %s", spec, (int)len, p,
				 n ? "after an interval (COUNTER,INTERVAL,COUNTER2,...)" : "before any counter");
			return -1;
		} else if (!name_ok(p, len)) {
			snprintf(err, errlen, "-h value '%s': '%.*s' is not a counter name (sonde collect "
					      "alone lists them)", spec, (int)len, p);
			return -1;
		} else {
			if (n == max) {
				snprintf(err, errlen, "-h value '%s': more than %d counters", spec, max);
				return -1;
			}
			struct sonde_hwc *h = &c[n];
			memset(h, 0, sizeof(*h));
			memcpy(h->name, p, len);
			h->name[len] = '\0';
			h->ival = 'o';
			h->def = sonde_hwc_find(h->name);
			if (h->def)
				snprintf(h->name, sizeof(h->name), "%s", h->def->alias);
			for (int k = 0; k < n; k++)
				if (!strcmp(c[k].name, h->name)) {
					snprintf(err, errlen, "-h value '%s': counter '%s' named twice", spec,
						 h->name);
					return -1;
				}
			n++;
		}
		if (!p[len])
			break;
		p += len + 1;
		if (!*p) {
			snprintf(err, errlen, "-h value '%s' ends with a comma", spec);
			return -1;
		}
	}
	for (int k = 0; k < n; k++)
		sonde_hwc_finish(&c[k]);
	return n;
}

/* ---- raw PMU events --------------------------------------------------------------------- */

static const char *sysfs(const char *root)
{
	return root ? root : "/sys/bus/event_source/devices";
}

static int read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(buf, (int)cap, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Places value v into config by a format file's "config:0-7,32-35". */
static int place(const char *fmt, uint64_t v, uint64_t *config)
{
	if (strncmp(fmt, "config:", 7))
		return -1; /* config1/config2 terms are not supported */
	const char *p = fmt + 7;
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;
		if (end == p || lo < 0 || lo > 63)
			return -1;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		if (hi < lo || hi > 63)
			return -1;
		for (long b = lo; b <= hi; b++, v >>= 1)
			if (v & 1)
				*config |= 1ull << b;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return 0;
}

int sonde_hwc_resolve_raw(struct sonde_hwc *c, const char *root, char *err, size_t errlen)
{
	const char *r = sysfs(root);
	DIR *d = opendir(r);
	if (!d) {
		snprintf(err, errlen, "unknown counter '%s' (no %s to look raw events up in)", c->name, r);
		return -1;
	}
	struct dirent *e;
	char path[1024], terms[512], typ[32];
	int found = 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/events/%s", r, e->d_name, c->name);
		if (read_line(path, terms, sizeof(terms)) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/type", r, e->d_name);
		if (read_line(path, typ, sizeof(typ)) < 0)
			continue;
		uint64_t config = 0;
		int bad = 0;
		for (char *t = strtok(terms, ","); t && !bad; t = strtok(NULL, ",")) {
			char *eq = strchr(t, '=');
			uint64_t v = 1;
			if (eq) {
				*eq = '\0';
				v = strtoull(eq + 1, NULL, 0);
			}
			char fmt[128];
			snprintf(path, sizeof(path), "%s/%s/format/%s", r, e->d_name, t);
			bad = read_line(path, fmt, sizeof(fmt)) < 0 || place(fmt, v, &config) < 0;
		}
		if (bad) {
			snprintf(err, errlen, "counter '%s' of PMU '%s': its terms cannot be placed", c->name,
				 e->d_name);
			closedir(d);
			return -1;
		}
		c->type = (uint32_t)strtoul(typ, NULL, 10);
		c->config = config;
		c->interval = sonde_hwc_interval(c->ival, c->n, SONDE_HWC_RAW_INTERVAL);
		snprintf(c->title, sizeof(c->title), "%.30s/%.30s", e->d_name, c->name);
		snprintf(c->unit, sizeof(c->unit), "events");
		found = 1;
	}
	closedir(d);
	if (!found) {
		snprintf(err, errlen, "unknown counter '%s' (neither an alias nor a raw event of a PMU in %s; "
				      "sonde collect alone lists them)", c->name, r);
		return -1;
	}
	return 0;
}

int sonde_hwc_raw_list(const char *root, void (*fn)(const char *pmu, const char *event, void *arg), void *arg)
{
	static const char *const skip[] = { "software", "tracepoint", "kprobe", "uprobe", "breakpoint", "msr" };
	const char *r = sysfs(root);
	DIR *d = opendir(r);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		int s = e->d_name[0] == '.';
		for (size_t i = 0; !s && i < sizeof(skip) / sizeof(skip[0]); i++)
			s = !strcmp(e->d_name, skip[i]);
		if (s)
			continue;
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s/events", r, e->d_name);
		DIR *ev = opendir(path);
		if (!ev)
			continue;
		struct dirent *x;
		while ((x = readdir(ev))) {
			size_t l = strlen(x->d_name);
			if (x->d_name[0] == '.' || (l > 6 && !strcmp(x->d_name + l - 6, ".scale")) ||
			    (l > 5 && !strcmp(x->d_name + l - 5, ".unit")))
				continue;
			fn(e->d_name, x->d_name, arg);
			n++;
		}
		closedir(ev);
	}
	closedir(d);
	return n;
}
