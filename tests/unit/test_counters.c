/*
 * The -h parser and the counter table (lib/base/counters.c): every form of
 * the value, the bad ones with their messages, the intervals, and raw PMU
 * events resolved from a fake sysfs tree.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/counters.h"
#include "check.h"

static struct sonde_hwc c[SONDE_MAX_COUNTERS];
static char err[256];

static int parse(const char *s)
{
	err[0] = '\0';
	return sonde_hwc_parse(s, c, SONDE_MAX_COUNTERS, err, sizeof(err));
}

static void bad(const char *s, const char *want_in_err, int line)
{
	int n = parse(s);
	char m[512];

	snprintf(m, sizeof(m), "'%s' is refused (got %d, err '%s', want '%s' in it)", s, n, err, want_in_err);
	check(n == -1 && strstr(err, want_in_err) != NULL, m, line);
}
#define BAD(s, w) bad(s, w, __LINE__)

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

int main(void)
{
	group = "table";
	size_t n;
	const struct sonde_hwc_def *t = sonde_hwc_table(&n);

	CHECK(n >= 17);
	CHECK(sonde_hwc_find("cycles") && sonde_hwc_find("cycles")->type == SONDE_HWC_HARDWARE);
	CHECK(sonde_hwc_find("cpu-cycles") == sonde_hwc_find("cycles"));
	CHECK(sonde_hwc_find("instructions") == sonde_hwc_find("insts"));
	CHECK(sonde_hwc_find("faults") == sonde_hwc_find("page-faults"));
	CHECK(!sonde_hwc_find("nosuch"));
	for (size_t i = 0; i < n; i++) /* hardware first, then software */
		CHECK(i == 0 || t[i].type >= t[i - 1].type);
	static const char *const sw[] = { "task-clock", "cpu-clock", "page-faults", "minor-faults", "major-faults",
					  "context-switches", "cpu-migrations", "alignment-faults", "emulation-faults" };
	for (size_t i = 0; i < sizeof(sw) / sizeof(sw[0]); i++)
		CHECK(sonde_hwc_find(sw[i]) && sonde_hwc_find(sw[i])->type == SONDE_HWC_SOFTWARE);

	group = "intervals";
	CHECK_U(sonde_hwc_interval('o', 0, 9999991), 9999991);
	CHECK_U(sonde_hwc_interval('h', 0, 9999991), 999999);
	CHECK_U(sonde_hwc_interval('l', 0, 9999991), 99999910);
	CHECK_U(sonde_hwc_interval('n', 5, 9999991), 5);
	CHECK_U(sonde_hwc_interval('h', 0, 1), 1); /* never 0 */

	group = "one counter";
	CHECK_I(parse("page-faults"), 1);
	CHECK_S(c[0].name, "page-faults");
	CHECK_U(c[0].interval, 1009);
	CHECK_U(c[0].type, SONDE_HWC_SOFTWARE);
	CHECK_U(c[0].config, 2); /* PERF_COUNT_SW_PAGE_FAULTS */
	CHECK_S(c[0].title, "Page Faults");
	CHECK_I(parse("page-faults,1"), 1);
	CHECK_U(c[0].interval, 1);
	CHECK_I(parse("page-faults,hi"), 1);
	CHECK_U(c[0].interval, 100);
	CHECK_I(parse("page-faults,lo"), 1);
	CHECK_U(c[0].interval, 10090);
	CHECK_I(parse("page-faults,on"), 1);
	CHECK_U(c[0].interval, 1009);
	CHECK_I(parse("faults,7"), 1); /* a perf name is the alias's */
	CHECK_S(c[0].name, "page-faults");
	CHECK_U(c[0].interval, 7);

	group = "several";
	CHECK_I(parse("page-faults,1,context-switches"), 2);
	CHECK_S(c[0].name, "page-faults");
	CHECK_U(c[0].interval, 1);
	CHECK_S(c[1].name, "context-switches");
	CHECK_U(c[1].interval, 101);
	CHECK_I(parse("cycles,insts,hi"), 2); /* the interval is the last counter's */
	CHECK_U(c[0].interval, 9999991);
	CHECK_U(c[1].interval, 999999);
	CHECK_I(parse("task-clock,1000000,minor-faults,lo,major-faults,cpu-migrations,3"), 4);
	CHECK_U(c[0].interval, 1000000);
	CHECK_U(c[1].interval, 10090);
	CHECK_U(c[2].interval, 1);
	CHECK_S(c[3].name, "cpu-migrations");
	CHECK_U(c[3].interval, 3);

	group = "default sets";
	CHECK_I(parse("on"), 2);
	CHECK_S(c[0].name, "cycles");
	CHECK_S(c[1].name, "insts");
	CHECK_U(c[0].interval, 9999991);
	CHECK_I(parse("hi"), 2);
	CHECK_U(c[1].interval, 999999);
	CHECK_I(parse("lo"), 2);
	CHECK_U(c[0].interval, 99999910);
	CHECK_I(parse("off"), 0);

	group = "raw names";
	CHECK_I(parse("inst_retired.any,100003"), 1);
	CHECK(c[0].def == NULL);
	CHECK_S(c[0].name, "inst_retired.any");
	CHECK(c[0].ival == 'n' && c[0].n == 100003);

	group = "bad forms";
	BAD("", "empty");
	BAD(",", "empty item");
	BAD("page-faults,", "ends with a comma");
	BAD("page-faults,,1", "empty item");
	BAD("1", "before any counter");
	BAD("on,page-faults", "before any counter");
	BAD("page-faults,1,2", "after an interval");
	BAD("page-faults,hi,lo", "after an interval");
	BAD("page-faults,0", "not a counter name"); /* 0 is no interval */
	BAD("page-faults,-5", "not a counter name");
	BAD("page-faults,99999999999999999999", "not a counter name");
	BAD("bad%name", "not a counter name");
	BAD("page faults", "not a counter name");
	BAD("page-faults,page-faults", "named twice");
	BAD("faults,page-faults", "named twice");
	BAD("task-clock,cpu-clock,page-faults,minor-faults,major-faults", "more than 4 counters");

	group = "raw events from sysfs";
	char root[] = "/tmp/sonde-hwc.XXXXXX";
	if (mkdtemp(root)) {
		char p[512];
		snprintf(p, sizeof(p), "%s/cpu", root);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/cpu/events", root);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/cpu/format", root);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/cpu/type", root);
		write_file(p, "4\n");
		snprintf(p, sizeof(p), "%s/cpu/format/event", root);
		write_file(p, "config:0-7\n");
		snprintf(p, sizeof(p), "%s/cpu/format/umask", root);
		write_file(p, "config:8-15\n");
		snprintf(p, sizeof(p), "%s/cpu/format/inv", root);
		write_file(p, "config:23\n");
		snprintf(p, sizeof(p), "%s/cpu/events/branch-misses-raw", root);
		write_file(p, "event=0xc5,umask=0x01,inv\n");
		snprintf(p, sizeof(p), "%s/cpu/events/bad-term", root);
		write_file(p, "event=0x3c,nosuchterm=1\n");

		CHECK_I(parse("branch-misses-raw"), 1);
		CHECK_I(sonde_hwc_resolve_raw(&c[0], root, err, sizeof(err)), 0);
		CHECK_U(c[0].type, 4);
		CHECK_U(c[0].config, 0xc5 | (0x01 << 8) | (1u << 23));
		CHECK_U(c[0].interval, SONDE_HWC_RAW_INTERVAL);
		CHECK_S(c[0].title, "cpu/branch-misses-raw");
		CHECK_I(parse("branch-misses-raw,lo"), 1);
		CHECK_I(sonde_hwc_resolve_raw(&c[0], root, err, sizeof(err)), 0);
		CHECK_U(c[0].interval, SONDE_HWC_RAW_INTERVAL * 10ull);
		CHECK_I(parse("bad-term"), 1);
		CHECK_I(sonde_hwc_resolve_raw(&c[0], root, err, sizeof(err)), -1);
		CHECK(strstr(err, "cannot be placed") != NULL);
		CHECK_I(parse("nosuch"), 1);
		CHECK_I(sonde_hwc_resolve_raw(&c[0], root, err, sizeof(err)), -1);
		CHECK(strstr(err, "unknown counter 'nosuch'") != NULL);

		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", root);
	} else {
		CHECK(!"mkdtemp");
	}

	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
