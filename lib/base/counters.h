/*
 * Counters for counter overflow profiling (sonde collect -h): the table of
 * the counters sonde knows by name, the parser of -h's value, and the
 * lookup of raw PMU events by name in sysfs.
 *
 * The -h value, as gprofng spells it:
 *
 *     on | hi | lo                      the default counter set (cycles and
 *                                       insts) at its default interval, 10x
 *                                       as often (hi) or 10x as rarely (lo)
 *     COUNTER[,INTERVAL][,COUNTER2[,INTERVAL2]...]
 *
 * where INTERVAL is on (the counter's default overflow value), hi (a tenth
 * of it), lo (ten times it) or N (events, 1 or more).  An item after a
 * counter that is an interval is that counter's; anything else names the
 * next counter.  At most SONDE_MAX_COUNTERS counters, each once.
 *
 * A COUNTER is an alias of the table (cycles, insts, page-faults, ...), a
 * perf name the table lists it under (cpu-cycles, instructions, ...), or a
 * raw event of a PMU in /sys/bus/event_source/devices/PMU/events/NAME
 * (sonde_hwc_resolve_raw); the parser resolves aliases and leaves raw
 * names for the caller to resolve.
 *
 * Pure, but for sonde_hwc_resolve_raw and sonde_hwc_raw_list, which read
 * sysfs.  No allocation; nothing to free.
 */
#ifndef SONDE_BASE_COUNTERS_H
#define SONDE_BASE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "sonde/format.h" /* SONDE_MAX_COUNTERS */

/* perf_event_attr.type of the table (linux/perf_event.h's values). */
#define SONDE_HWC_HARDWARE 0u /* PERF_TYPE_HARDWARE */
#define SONDE_HWC_SOFTWARE 1u /* PERF_TYPE_SOFTWARE */

/* A counter sonde knows by name. */
struct sonde_hwc_def {
	const char *alias;	/* what -h and the metrics call it: "cycles" */
	const char *perf;	/* perf's name, also accepted: "cpu-cycles" */
	const char *title;	/* "CPU Cycles" */
	const char *unit;	/* the reference's type words: "CPU-cycles", "events" */
	uint32_t type;		/* SONDE_HWC_HARDWARE or _SOFTWARE */
	uint64_t config;	/* PERF_COUNT_HW_* or PERF_COUNT_SW_* */
	uint64_t interval;	/* the default overflow value (-h NAME,on) */
};

/* The table, hardware counters first; *n gets its length. */
const struct sonde_hwc_def *sonde_hwc_table(size_t *n);
/* The row whose alias or perf name is name, NULL for none. */
const struct sonde_hwc_def *sonde_hwc_find(const char *name);

/* The overflow value of a raw counter with interval "on". */
#define SONDE_HWC_RAW_INTERVAL 1000003u
#define SONDE_HWC_NAME_MAX 64

/* One counter asked for by -h. */
struct sonde_hwc {
	char name[SONDE_HWC_NAME_MAX]; /* the alias (a raw event: its name) */
	const struct sonde_hwc_def *def; /* NULL: a raw event, to resolve */
	char ival;		/* 'o' on (also when none was given), 'h', 'l', 'n' */
	uint64_t n;		/* with ival 'n': the events */
	int ival_given;		/* an interval followed the name */
	/* Filled by sonde_hwc_finish (and for a raw event by
	 * sonde_hwc_resolve_raw): perf_event_attr's type and config, the
	 * overflow value, the title and unit. */
	uint32_t type;
	uint64_t config;
	uint64_t interval;
	char title[SONDE_HWC_NAME_MAX];
	char unit[16];
};

/* Parses spec (-h's value) into c[0..max), max at most
 * SONDE_MAX_COUNTERS.  Returns how many counters (0 for "off"), or -1 with
 * a one-line message in err.  Aliases are resolved (def set, and
 * sonde_hwc_finish done); a name the table does not know is kept as a raw
 * event (def NULL) if it is made of letters, digits and "._-:". */
int sonde_hwc_parse(const char *spec, struct sonde_hwc *c, int max, char *err, size_t errlen);

/* The overflow value of interval word ival ('o', 'h', 'l'; 'n' takes n)
 * for a counter whose default is dflt: on dflt, hi dflt/10, lo dflt*10,
 * at least 1. */
uint64_t sonde_hwc_interval(char ival, uint64_t n, uint64_t dflt);

/* Fills c's type, config, interval, title and unit from its table row. */
void sonde_hwc_finish(struct sonde_hwc *c);

/* A raw event by name: the first PMU under root (NULL:
 * /sys/bus/event_source/devices) with events/NAME.  Fills c's type (the
 * PMU's type), config (the event's terms placed by the PMU's format
 * files: "event=0x3c,umask=0x01"), interval, title (the PMU/event name)
 * and unit ("events").  0, or -1 with a message in err. */
int sonde_hwc_resolve_raw(struct sonde_hwc *c, const char *root, char *err, size_t errlen);

/* Calls fn for each raw event of the PMUs under root (NULL: sysfs) that
 * are not software, tracepoint, kprobe, uprobe, breakpoint or msr: the
 * hardware PMUs' events, by name.  Returns how many. */
int sonde_hwc_raw_list(const char *root, void (*fn)(const char *pmu, const char *event, void *arg), void *arg);

#endif
