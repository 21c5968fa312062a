/*
 * -header: the summary of one experiment (see doc/sonde-print.md), as
 * text, or as "key,value" lines (csv) or one JSON document, every number
 * unrounded.  Moved from cmd/ so that tests can call it.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "symbols/archive.h"
#include "symbols/symbols.h"
#include "views/kind.h"
#include "views/view_exp.h"
#include "views/view_table.h"

static void print_traces(FILE *out, const struct sonde_exp *exp);

/* ---- formatting -------------------------------------------------------- */

static const char *str(const char *s)
{
	return s && *s ? s : "?";
}

static double sec(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* Seconds of t since the experiment start (negative before it). */
static double since(const struct sonde_exp_info *in, uint64_t t)
{
	return t >= in->start_ns ? sec(t - in->start_ns) : -sec(in->start_ns - t);
}

static void fmt_bytes(char *buf, size_t len, uint64_t n)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	int u = -1;

	if (n < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", n);
		return;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, unit[u]);
}

/* ---- descendants -------------------------------------------------------- */

/* A founder's descendants: the sub-experiments in its directory that have
 * a log.xml, and those its log says were not recorded (every followed
 * descendant that records nothing appends an unrecorded event to the
 * founder's log.xml), counted by reason, most first. */
struct reason_count {
	const char *reason;
	size_t count;
};

struct descendants {
	size_t recorded, unrecorded, nreasons;
	struct reason_count *reasons; /* NULL when out of memory */
};

static int by_count(const void *a, const void *b)
{
	const struct reason_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->reason, y->reason);
}

/* -F off: descendants were not followed, and not counted. */
static bool not_followed(const struct sonde_exp_info *in)
{
	return in->settings.follow && !strcmp(in->settings.follow, "off");
}

/* A sub-experiment that recorded something has a log.xml. */
static int count_recorded(void *arg, const char *path, const char *name, const struct sonde_subexp_kind *k)
{
	struct descendants *d = arg;
	char log[PATH_MAX];
	struct stat st;

	if (snprintf(log, sizeof(log), "%s/log.xml", path) < (int)sizeof(log) && stat(log, &st) == 0)
		d->recorded++;
	return 0;
}

/* Returns false for a sub-experiment, whose descendants are its
 * founder's to count. */
static bool descendants_count(const struct sonde_exp *exp, struct descendants *d)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	const struct sonde_event *ev = sonde_exp_events(exp, &n);

	memset(d, 0, sizeof(*d));
	if (sonde_subexp_kind_of(in->name))
		return false;
	sonde_subexp_scan(in->dir, sonde_subexp_kinds, sonde_subexp_nkinds, count_recorded, d, NULL, NULL, 0);
	for (size_t i = 0; i < n; i++)
		if (ev[i].kind == SONDE_EV_UNRECORDED)
			d->unrecorded++;
	d->reasons = d->unrecorded ? calloc(d->unrecorded, sizeof(*d->reasons)) : NULL;
	for (size_t i = 0; i < n && d->reasons; i++) {
		if (ev[i].kind != SONDE_EV_UNRECORDED)
			continue;
		const char *r = ev[i].reason ? ev[i].reason : "unknown";
		size_t k = 0;

		while (k < d->nreasons && strcmp(d->reasons[k].reason, r))
			k++;
		if (k == d->nreasons)
			d->reasons[d->nreasons++].reason = r;
		d->reasons[k].count++;
	}
	if (d->nreasons)
		qsort(d->reasons, d->nreasons, sizeof(*d->reasons), by_count);
	return true;
}

/* "Descendants:       66 recorded, 34 not recorded (34: REASON)" */
static void print_descendants(FILE *out, const struct sonde_exp *exp)
{
	struct descendants d;

	if (!descendants_count(exp, &d))
		return;
	fprintf(out, "%-19s", "Descendants:");
	if (!d.recorded && !d.unrecorded)
		fprintf(out, "%s", not_followed(sonde_exp_info(exp)) ? "not followed (-F off)" : "none");
	else
		fprintf(out, "%zu recorded, %zu not recorded", d.recorded, d.unrecorded);
	for (size_t i = 0; i < d.nreasons; i++)
		fprintf(out, "%s%zu: %s", i ? "; " : " (", d.reasons[i].count, d.reasons[i].reason);
	fprintf(out, "%s\n", d.nreasons ? ")" : "");
	free(d.reasons);
}

/* ---- -header ------------------------------------------------------------ */

static void print_notes(FILE *out, const char *notes)
{
	const char *p = notes;

	fprintf(out, "Notes:\n");
	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);

		fprintf(out, "  %.*s\n", n, p);
		p += n + (nl != NULL);
	}
}

/* Microstates and off-CPU time, when the experiment recorded them:
 * "Off-CPU samples:   12 (3.000 s: 1.000 s User Lock, 2.000 s Other Wait;
 * 1 discarded), every 10.000 ms". */
static void print_offcpu(FILE *out, const struct sonde_exp *exp)
{
	const struct sonde_exp_summary *s = sonde_exp_summary(exp);
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	const struct sonde_event *end = in->end_event;

	if (sonde_exp_has_microstates(exp))
		fprintf(out, "%-19s%.3f s System CPU, %.3f s Wait CPU (%" PRIu64 " samples with them)\n",
			"Microstates:", sec(s->system_ns), sec(s->wait_cpu_ns), s->samples_ms);
	if (!sonde_exp_has_offcpu(exp))
		return;
	/* "(T s: X s User Lock, Y s Other Wait": each off-CPU state's
	 * (sonde/states.h) */
	uint64_t off_ns = 0;
	for (unsigned st = 0; st < SONDE_STATE_COUNT; st++)
		if (sonde_state_offcpu(st))
			off_ns += s->state_ns[st];
	fprintf(out, "%-19s%" PRIu64 " (%.3f s", "Off-CPU samples:", s->offcpu_samples, sec(off_ns));
	const char *sep = ": ";
	for (unsigned st = 0; st < SONDE_STATE_COUNT; st++)
		if (sonde_state_offcpu(st) && (!sonde_state_runtime_offcpu(st) || s->state_samples[st])) {
			fprintf(out, "%s%.3f s %s", sep, sec(s->state_ns[st]), sonde_state_desc(st)->name);
			sep = ", ";
		}
	if (end && end->has_offcpu)
		fprintf(out, "; %" PRIu64 " discarded", end->offcpu_discarded);
	if (end && end->has_offcpu_late)
		fprintf(out, "; looks late by up to %.3f ms", (double)end->offcpu_late_ns / 1e6);
	fprintf(out, ")");
	if (in->settings.offcpu_interval_ns)
		fprintf(out, ", every %.3f ms", (double)in->settings.offcpu_interval_ns / 1e6);
	fprintf(out, "\n");
}

static void print_start(FILE *out, const struct sonde_exp_info *in)
{
	fprintf(out, "%-19s", "Start:");
	if (!in->has_realtime) {
		fprintf(out, "unknown\n");
		return;
	}
	time_t t = (time_t)in->realtime_sec;
	struct tm tm;
	char date[64], zone[16];

	if (!localtime_r(&t, &tm) || !strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm)) {
		fprintf(out, "%" PRId64 ".%09u (seconds since the epoch)\n", in->realtime_sec,
		       in->realtime_nsec);
		return;
	}
	if (!strftime(zone, sizeof(zone), "%Z", &tm))
		zone[0] = '\0';
	fprintf(out, "%s.%03u %s\n", date, in->realtime_nsec / 1000000, zone);
}

static void print_exit(FILE *out, const struct sonde_exp_info *in)
{
	const struct sonde_event *ev = in->exit_event;

	fprintf(out, "%-19s", "Exit:");
	if (ev && ev->kind == SONDE_EV_EXIT)
		fprintf(out, "exit status %d\n", ev->status);
	else if (ev)
		fprintf(out, "killed by signal %d (%s)\n", ev->signal, str(ev->signame));
	else if (in->exec_event)
		fprintf(out, "replaced by exec at %.3f s\n", since(in, in->exec_event->time_ns));
	else if (in->end_event)
		fprintf(out, "unknown (no exit record; the collector shut down at %.3f s)\n",
		       since(in, in->end_event->time_ns));
	else
		fprintf(out, "unknown (no exit record: the target may still run, or sonde collect was "
		       "killed)\n");
}

static void print_events(FILE *out, const struct sonde_exp *exp, enum sonde_event_kind kind,
			 const char *title)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n, count = 0;
	const struct sonde_event *ev = sonde_exp_events(exp, &n);

	for (size_t i = 0; i < n; i++)
		count += ev[i].kind == kind;
	if (!count)
		return;
	fprintf(out, "\n%s (%zu):\n", title, count);
	for (size_t i = 0; i < n; i++)
		if (ev[i].kind == kind)
			fprintf(out, "  %8.3f s  %s\n", since(in, ev[i].time_ns), str(ev[i].text));
}

static void print_threads(FILE *out, const struct sonde_exp *exp)
{
	size_t n;
	const struct sonde_thread *t = sonde_exp_threads(exp, &n);
	uint64_t samples = 0, rec = 0, real = 0;
	bool all_real = n > 0;

	fprintf(out, "\nThreads (%zu):\n", n);
	if (!n)
		return;
	fprintf(out, "  %10s %10s %14s %12s %8s\n", "tid", "samples", "recorded CPU s", "real CPU s",
	       "diff %");
	for (size_t i = 0; i < n; i++) {
		samples += t[i].samples;
		rec += t[i].weight_ns;
		fprintf(out, "  %10u %10" PRIu64 " %14.3f ", t[i].tid, t[i].samples, sec(t[i].weight_ns));
		if (!t[i].has_cpu_ns) {
			all_real = false;
			fprintf(out, "%12s %8s\n", "-", "-");
			continue;
		}
		real += t[i].cpu_ns;
		if (t[i].cpu_ns)
			fprintf(out, "%12.3f %+8.1f\n", sec(t[i].cpu_ns),
			       100.0 * ((double)t[i].weight_ns - (double)t[i].cpu_ns) /
				       (double)t[i].cpu_ns);
		else
			fprintf(out, "%12.3f %8s\n", 0.0, "-");
	}
	fprintf(out, "  %10s %10" PRIu64 " %14.3f ", "total", samples, sec(rec));
	if (all_real && real)
		fprintf(out, "%12.3f %+8.1f\n", sec(real),
		       100.0 * ((double)rec - (double)real) / (double)real);
	else
		fprintf(out, "%12s %8s\n", all_real ? "0.000" : "-", "-");

	/* Clock profiling must account for each thread's CPU time, except
	 * what it burned while recording was paused. */
	size_t nov;
	const struct sonde_overview_packet *ov = sonde_exp_overview(exp, &nov);
	bool paused = false;

	for (size_t i = 0; i < nov; i++)
		paused |= ov[i].reason == SONDE_OV_PAUSE || ov[i].reason == SONDE_OV_RESUME;
	if (paused)
		fprintf(out, "Recording was paused for part of the run (-y, -t START-END or the collector "
			     "API): recorded CPU time covers the recording intervals only\n");
	for (size_t i = 0; i < n; i++) {
		if (!t[i].has_cpu_ns || t[i].cpu_ns < 20000000)
			continue;
		double d = 100.0 * ((double)t[i].weight_ns - (double)t[i].cpu_ns) /
			   (double)t[i].cpu_ns;

		if (d > 5.0 || (d < -5.0 && !paused))
			fprintf(out, "WARNING: thread %u: recorded CPU time %.3f s differs from its real "
			       "CPU time %.3f s by %+.1f%%\n",
			       t[i].tid, sec(t[i].weight_ns), sec(t[i].cpu_ns), d);
	}
}

/* ---- load objects: which file the analysis reads for each ---------------- */

static const char *const obj_state_name[] = {
	[SONDE_OBJ_ARCHIVED] = "archived", [SONDE_OBJ_SAME] = "unchanged",
	[SONDE_OBJ_CHANGED] = "changed",   [SONDE_OBJ_MISSING] = "missing",
	[SONDE_OBJ_UNKNOWN] = "no build id",
};

/* An object among those of its file (path and build id), for sorting. */
struct objkey {
	const char *path, *buildid;
	size_t i;
};

static int cmp_objkey(const void *a, const void *b)
{
	const struct objkey *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (!c && x->buildid != y->buildid)
		c = !x->buildid ? -1 : !y->buildid ? 1 : strcmp(x->buildid, y->buildid);
	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/*
 * checked[i]: whether object i is the first of its file (path and build
 * id) among the objects the analysis symbolises from a file: not sonde's
 * own (folded away), not the vDSO (its copy is in the experiment).  All at
 * once, by sorting: testing each object against those before it was n^2
 * in the objects (a map.xml of many files).  NULL out of memory.
 */
static bool *checked_objects(const struct sonde_object *o, size_t n)
{
	bool *checked = calloc(n ? n : 1, sizeof(*checked));
	struct objkey *k = malloc((n ? n : 1) * sizeof(*k));

	if (!checked || !k) {
		free(checked);
		free(k);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = (struct objkey){ o[i].path, o[i].buildid, i };
	qsort(k, n, sizeof(*k), cmp_objkey);
	for (size_t j = 0; j < n; j++) {
		const struct sonde_object *x = &o[k[j].i];

		if (j && !cmp_objkey(&(struct objkey){ k[j - 1].path, k[j - 1].buildid, 0 },
				     &(struct objkey){ k[j].path, k[j].buildid, 0 }))
			continue; /* an earlier object of the same file */
		checked[k[j].i] = !x->sonde && !x->copy && x->path[0] == '/';
	}
	free(k);
	return checked;
}

/* Whether reading o finds no function symbols in it (the files sonde print's
 * one-line warning counts).  s NULL (out of memory): not known, false. */
static bool object_unnamed(struct sonde_syms *s, const struct sonde_object *o)
{
	size_t before, after;

	if (!s)
		return false;
	sonde_syms_unnamed(s, &before);
	sonde_syms_read_object(s, o);
	sonde_syms_unnamed(s, &after);
	return after > before;
}

/* "Load objects:" and a WARNING for each one the analysis cannot trust:
 * rebuilt or gone since the experiment, with no archived copy. */
static void print_object_check(FILE *out, const struct sonde_exp *exp)
{
	const char *dir = sonde_exp_info(exp)->dir;
	size_t n, count[SONDE_OBJ_UNKNOWN + 1] = { 0 }, files = 0;
	const struct sonde_object *o = sonde_exp_objects(exp, &n);
	char file[PATH_MAX], msg[2 * PATH_MAX];
	bool *checked = checked_objects(o, n);

	if (!checked) {
		fprintf(out, "%-19sout of memory\n", "Load objects:");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!checked[i])
			continue;
		enum sonde_archive_state st = sonde_archive_check(dir, o[i].path, o[i].buildid, file,
								  sizeof(file), msg, sizeof(msg));
		count[st]++;
		files++;
	}
	fprintf(out, "%-19s%zu file%s", "Load objects:", files, files == 1 ? "" : "s");
	const char *sep = ": ";

	for (int st = 0; st <= SONDE_OBJ_UNKNOWN; st++)
		if (count[st]) {
			fprintf(out, "%s%zu %s", sep, count[st],
				st == SONDE_OBJ_ARCHIVED ? "from the archive" : obj_state_name[st]);
			sep = ", ";
		}
	fputc('\n', out);
	struct sonde_syms *syms = sonde_syms_open(exp);
	size_t unnamed = 0;

	for (size_t i = 0; i < n; i++) {
		if (!checked[i])
			continue;
		enum sonde_archive_state st = sonde_archive_check(dir, o[i].path, o[i].buildid, file,
								  sizeof(file), msg, sizeof(msg));
		if (st == SONDE_OBJ_CHANGED || st == SONDE_OBJ_MISSING)
			fprintf(out, "WARNING: %s; its functions are shown as addresses\n", msg);
		else if (object_unnamed(syms, &o[i]))
			unnamed++;
	}
	if (unnamed) {
		size_t nu;
		const char *const *u = sonde_syms_unnamed(syms, &nu);

		fprintf(out, "No function symbols (stripped, and no debug file found; functions shown as "
			     "addresses): %zu file%s\n", nu, nu == 1 ? "" : "s");
		for (size_t i = 0; i < nu; i++)
			fprintf(out, "  %s\n", u[i]);
	}
	sonde_syms_close(syms);
	free(checked);
}

static void header(FILE *out, const struct sonde_exp *exp)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	const struct sonde_exp_summary *s = sonde_exp_summary(exp);
	char b1[32];

	fprintf(out, "%-19s%s\n", "Experiment:", in->dir);
	if (in->notes)
		print_notes(out, in->notes);
	fprintf(out, "%-19s%s (experiment format %u)\n", "Collector:", str(in->collector), in->format);
	fprintf(out, "%-19s%s\n", "Target:", str(in->target.command));
	fprintf(out, "%-19s%s\n", "Executable:", str(in->target.exe));
	fprintf(out, "%-19s%s\n", "Directory:", str(in->target.cwd));
	fprintf(out, "%-19spid %u, parent %u\n", "Process:", in->target.pid, in->target.ppid);
	fprintf(out, "%-19s%s", "Host:", str(in->system.host));
	const char *sys[] = { in->system.os, in->system.release, in->system.arch };

	for (int i = 0, first = 1; i < 3; i++)
		if (sys[i] && *sys[i]) {
			fprintf(out, "%s%s", first ? ", " : " ", sys[i]);
			first = 0;
		}
	if (in->system.cpus)
		fprintf(out, ", %u CPUs", in->system.cpus);
	if (in->system.memory_kb) {
		fmt_bytes(b1, sizeof(b1), in->system.memory_kb * 1024);
		fprintf(out, ", %s memory", b1);
	}
	fprintf(out, "\n");
	fprintf(out, "%-19s", "Clock profiling:");
	if (in->settings.clock_source || in->settings.clock_interval_ns)
		fprintf(out, "%s, interval %.3f ms", str(in->settings.clock_source),
		       (double)in->settings.clock_interval_ns / 1e6);
	else
		fprintf(out, "off");
	if (in->settings.depth_limit)
		fprintf(out, ", depth limit %u", in->settings.depth_limit);
	fprintf(out, "\n");
	if (in->settings.kernel_time) {
		const char *k = in->settings.kernel_time;
		fprintf(out, "%-19s%s\n", "Kernel time:",
			!strcmp(k, "sampled") ? "sampled in place (the counter samples kernel mode too)"
			: !strcmp(k, "sampled-at-tick")
				? "sampled in place, at the scheduler tick's resolution (POSIX CPU timers)"
			: !strcmp(k, "next-user-sample")
				? "charged to the next user-mode sample (the counter sees user mode only)"
			: !strcmp(k, "not-counted")
				? "not counted (an attach by a user who may not count kernel mode)"
				: k);
	}
	if (in->settings.size_limit_mb || in->settings.duration_s > 0) {
		fprintf(out, "%-19s", "Limits:");
		if (in->settings.size_limit_mb)
			fprintf(out, "size %" PRIu64 " MB", in->settings.size_limit_mb);
		if (in->settings.duration_s > 0)
			fprintf(out, "%sduration %g s", in->settings.size_limit_mb ? ", " : "",
			       in->settings.duration_s);
		fprintf(out, "\n");
	}
	print_start(out, in);
	fprintf(out, "%-19s%.3f s (until the %s)\n", "Duration:", since(in, in->end_ns),
	       !strcmp(in->end_source, "end") ? "collector's end" : in->end_source);
	print_exit(out, in);
	fprintf(out, "%-19s%" PRIu64 "\n", "Samples:", s->samples);
	{
		static const char *const why[SONDE_OV_NREASONS] = { "start", "end", "periodic", "signal",
								   "pause", "resume", "api" };
		size_t nov, by[SONDE_OV_NREASONS] = { 0 };
		const struct sonde_overview_packet *ov = sonde_exp_overview(exp, &nov);

		for (size_t i = 0; i < nov; i++)
			if (ov[i].reason < SONDE_OV_NREASONS)
				by[ov[i].reason]++;
		fprintf(out, "%-19s%zu points, %zu samples", "Sample points:", nov, sonde_exp_nsamples(exp));
		/* by reason, when there are points: "(1 start, 1 end; see -samples)" */
		bool opened = false;

		for (size_t r = 0; r < SONDE_OV_NREASONS; r++)
			if (by[r]) {
				fprintf(out, "%s%zu %s", opened ? ", " : " (", by[r], why[r]);
				opened = true;
			}
		fprintf(out, "%s\n", opened ? "; see -samples)" : "");
	}
	fprintf(out, "%-19s%.3f s\n", "Recorded CPU time:", sec(s->weight_ns));
	print_offcpu(out, exp);
	print_traces(out, exp);

	size_t nf;
	const struct sonde_exp_file *f = sonde_exp_files(exp, &nf);
	uint64_t total = 0;
	int first = 1;

	fprintf(out, "%-19s", "Data sizes:");
	for (size_t i = 0; i < nf; i++) {
		if (!f[i].present)
			continue;
		fmt_bytes(b1, sizeof(b1), f[i].size);
		fprintf(out, "%s%s %s", first ? "" : ", ", f[i].name, b1);
		total += f[i].size;
		first = 0;
	}
	fmt_bytes(b1, sizeof(b1), total);
	fprintf(out, "%stotal %s\n", first ? "" : "; ", b1);

	fprintf(out, "%-19s%zu distinct, %zu truncated, %zu incomplete", "Stacks:", s->stacks,
	       s->stacks_truncated, s->stacks_incomplete);
	if (s->samples)
		fprintf(out, " (samples: %" PRIu64 " truncated, %" PRIu64 " incomplete, %" PRIu64
		       " unknown)",
		       s->samples_truncated, s->samples_incomplete, s->samples_unknown_stack);
	if (s->stacks_java_scoped)
		fprintf(out, "; %zu with Java frames from the compiled code's scopes", s->stacks_java_scoped);
	fprintf(out, "\n");
	if (in->end_event && (in->end_event->handler_ns || in->end_event->start_cost_ns)) {
		const struct sonde_event *e = in->end_event;
		uint64_t n = e->samples > e->pseudo_samples ? e->samples - e->pseudo_samples : 0;
		/* all of it is the <Collector> pseudo-function's time */
		fprintf(out, "%-19s%.3f s: %.3f s starting, %.3f s in the sampling handler", "Collector cost:",
			(double)(e->handler_ns + e->start_cost_ns + e->end_cost_ns) * 1e-9,
			(double)e->start_cost_ns * 1e-9, (double)e->handler_ns * 1e-9);
		if (n)
			fprintf(out, " (%.2f us per sample)", (double)e->handler_ns * 1e-3 / (double)n);
		fprintf(out, ", %.3f s ending\n", (double)e->end_cost_ns * 1e-9);
	}
	if (in->end_event && in->end_event->stacks_lost)
		fprintf(out, "%-19s%" PRIu64 " (and %" PRIu64 " stacks)\n", "Lost samples:",
		       in->end_event->lost, in->end_event->stacks_lost);
	else if (in->end_event)
		fprintf(out, "%-19s%" PRIu64 "\n", "Lost samples:", in->end_event->lost);
	else
		fprintf(out, "%-19sunknown (the collector did not record its end)\n", "Lost samples:");
	fprintf(out, "%-19s%s\n", "Log:",
	       in->log_complete ? "complete"
				: "incomplete (no </experiment>: the target or sonde collect ended "
				  "abruptly)");
	print_descendants(out, exp);
	if (in->end_event && in->end_event->lost)
		fprintf(out, "WARNING: %" PRIu64 " samples were lost (%.1f%% of all); metrics are low by "
		       "about that much\n",
		       in->end_event->lost,
		       100.0 * (double)in->end_event->lost /
			       (double)(s->samples + in->end_event->lost));
	if (in->end_event && in->end_event->stacks_lost)
		fprintf(out, "WARNING: %" PRIu64 " call stacks were lost; samples that use them show no "
		       "stack\n",
		       in->end_event->stacks_lost);

	print_object_check(out, exp);
	print_events(out, exp, SONDE_EV_WARNING, "Collector warnings");
	print_events(out, exp, SONDE_EV_ERROR, "Collector errors");

	size_t np;
	const struct sonde_problem *p = sonde_exp_problems(exp, &np);

	fprintf(out, "\nRead problems (%zu):%s\n", np, np ? "" : " none");
	for (size_t i = 0; i < np; i++)
		fprintf(out, "  %s: %s\n", p[i].severity == SONDE_PROBLEM_ERROR ? "error" : "warning",
		       p[i].msg);

	print_threads(out, exp);
}

/* One line per traced kind in -header, from its module (views/kind.h). */
static void print_traces(FILE *out, const struct sonde_exp *exp)
{
	for (int id = 1; id <= SONDE_KIND_MAX; id++) {
		const struct sonde_view_kind *v = sonde_kind_module(id)->view;

		if (v && v->header_text && sonde_exp_traced(exp, id))
			v->header_text(out, exp);
	}
}

/* ---- -header in csv and json -------------------------------------------- */

/*
 * A key-value document of the emitter (emit.h): JSON objects and arrays,
 * or CSV "key,value" lines whose keys are the dotted paths ("target.pid",
 * "threads.0.tid").  Text writes none of it.
 */
static void kv_open(struct sonde_emit *k, const char *key, bool array)
{
	if (array)
		em_arr(k, key);
	else
		em_obj(k, key);
}

static void kv_close(struct sonde_emit *k)
{
	em_end(k);
}

static void kv_str(struct sonde_emit *k, const char *key, const char *v)
{
	em_s(k, key, v);
}

static void kv_u64(struct sonde_emit *k, const char *key, uint64_t v)
{
	em_u(k, key, v);
}

static void kv_i64(struct sonde_emit *k, const char *key, int64_t v)
{
	em_i(k, key, v);
}

static void kv_bool(struct sonde_emit *k, const char *key, bool v)
{
	em_b(k, key, v);
}

static void kv_null(struct sonde_emit *k, const char *key)
{
	em_null(k, key);
}

static void kv_events(struct sonde_emit *k, const struct sonde_exp *exp, enum sonde_event_kind kind,
		      const char *key)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	const struct sonde_event *ev = sonde_exp_events(exp, &n);

	kv_open(k, key, true);
	for (size_t i = 0; i < n; i++) {
		if (ev[i].kind != kind)
			continue;
		kv_open(k, NULL, false);
		kv_i64(k, "time_ns", ev[i].time_ns >= in->start_ns ? (int64_t)(ev[i].time_ns - in->start_ns)
								   : -(int64_t)(in->start_ns - ev[i].time_ns));
		kv_str(k, "text", ev[i].text);
		kv_close(k);
	}
	kv_close(k);
}

/* The traced kinds' totals, as in the text header's tracing lines; null
 * for a kind that was not traced. */
static void kv_traces(struct sonde_emit *k, const struct sonde_exp *exp)
{
	for (int id = 1; id <= SONDE_KIND_MAX; id++) {
		const struct sonde_view_kind *v = sonde_kind_module(id)->view;
		const char *name = sonde_kind_desc(id)->name;

		if (!v || !v->header_doc)
			continue;
		if (!sonde_exp_traced(exp, id)) {
			if (!v->header_omit_untraced)
				kv_null(k, name);
			continue;
		}
		kv_open(k, name, false);
		v->header_doc(k, exp);
		kv_close(k);
	}
}

/* The founder's descendants, as print_descendants says them; null for a
 * sub-experiment. */
static void kv_descendants(struct sonde_emit *k, const struct sonde_exp *exp)
{
	struct descendants d;

	if (!descendants_count(exp, &d)) {
		kv_null(k, "descendants");
		return;
	}
	kv_open(k, "descendants", false);
	kv_str(k, "follow", sonde_exp_info(exp)->settings.follow);
	kv_u64(k, "recorded", d.recorded);
	kv_u64(k, "not_recorded", d.unrecorded);
	kv_open(k, "reasons", true);
	for (size_t i = 0; i < d.nreasons; i++) {
		kv_open(k, NULL, false);
		kv_str(k, "reason", d.reasons[i].reason);
		kv_u64(k, "count", d.reasons[i].count);
		kv_close(k);
	}
	kv_close(k);
	kv_close(k);
	free(d.reasons);
}

static void header_data(const struct sonde_emit *out, const void *arg)
{
	const struct sonde_exp *exp = arg;
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	const struct sonde_exp_summary *s = sonde_exp_summary(exp);
	struct sonde_emit k = *out; /* a document of its own */
	size_t n;

	em_kv_begin(&k);
	kv_open(&k, NULL, false);
	kv_str(&k, "view", "header");
	kv_str(&k, "experiment", in->dir);
	kv_str(&k, "notes", in->notes);
	kv_str(&k, "collector", in->collector);
	kv_u64(&k, "format", in->format);
	kv_open(&k, "target", false);
	kv_str(&k, "command", in->target.command);
	kv_str(&k, "exe", in->target.exe);
	kv_str(&k, "cwd", in->target.cwd);
	kv_u64(&k, "pid", in->target.pid);
	kv_u64(&k, "ppid", in->target.ppid);
	kv_close(&k);
	kv_open(&k, "host", false);
	kv_str(&k, "name", in->system.host);
	kv_str(&k, "os", in->system.os);
	kv_str(&k, "release", in->system.release);
	kv_str(&k, "arch", in->system.arch);
	kv_u64(&k, "cpus", in->system.cpus);
	kv_u64(&k, "memory_kb", in->system.memory_kb);
	kv_close(&k);
	kv_open(&k, "settings", false);
	kv_str(&k, "clock_source", in->settings.clock_source);
	kv_str(&k, "kernel_time", in->settings.kernel_time);
	kv_u64(&k, "clock_interval_ns", in->settings.clock_interval_ns);
	kv_u64(&k, "depth_limit", in->settings.depth_limit);
	kv_u64(&k, "size_limit_mb", in->settings.size_limit_mb);
	kv_u64(&k, "duration_limit_ms", (uint64_t)(in->settings.duration_s * 1000));
	kv_close(&k);
	if (in->has_realtime) {
		kv_open(&k, "start", false);
		kv_i64(&k, "realtime_sec", in->realtime_sec);
		kv_u64(&k, "realtime_nsec", in->realtime_nsec);
		kv_close(&k);
	} else {
		kv_null(&k, "start");
	}
	kv_u64(&k, "duration_ns", in->end_ns > in->start_ns ? in->end_ns - in->start_ns : 0);
	kv_str(&k, "end_source", in->end_source);
	if (in->exit_event && in->exit_event->kind == SONDE_EV_EXIT) {
		kv_open(&k, "exit", false);
		kv_i64(&k, "status", in->exit_event->status);
		kv_close(&k);
	} else if (in->exit_event) {
		kv_open(&k, "exit", false);
		kv_i64(&k, "signal", in->exit_event->signal);
		kv_str(&k, "signame", in->exit_event->signame);
		kv_close(&k);
	} else {
		kv_null(&k, "exit");
	}
	kv_u64(&k, "samples", s->samples);
	kv_u64(&k, "recorded_cpu_ns", s->weight_ns);
	if (sonde_exp_has_microstates(exp)) {
		kv_u64(&k, "recorded_system_ns", s->system_ns);
		kv_u64(&k, "recorded_wait_cpu_ns", s->wait_cpu_ns);
	}
	if (sonde_exp_has_offcpu(exp)) {
		kv_open(&k, "offcpu", false);
		kv_u64(&k, "interval_ns", in->settings.offcpu_interval_ns);
		kv_u64(&k, "samples", s->offcpu_samples);
		if (in->end_event && in->end_event->has_offcpu)
			kv_u64(&k, "discarded", in->end_event->offcpu_discarded);
		else
			kv_null(&k, "discarded");
		if (in->end_event && in->end_event->has_offcpu_late)
			kv_u64(&k, "late_ns", in->end_event->offcpu_late_ns);
		else
			kv_null(&k, "late_ns");
		/* each off-CPU state's time: "user_lock_ns", from its -dump
		 * spelling */
		for (unsigned st = 0; st < SONDE_STATE_COUNT; st++) {
			/* a runtime's (OpenMP's) only when recorded */
			if (!sonde_state_offcpu(st) || (sonde_state_runtime_offcpu(st) && !s->state_samples[st]))
				continue;
			char key[64];
			snprintf(key, sizeof key, "%s_ns", sonde_state_desc(st)->dump);
			for (char *c = key; *c; c++)
				if (*c == '-')
					*c = '_';
			kv_u64(&k, key, s->state_ns[st]);
		}
		kv_close(&k);
	}
	kv_traces(&k, exp);
	const struct sonde_exp_file *fl = sonde_exp_files(exp, &n);

	kv_open(&k, "files", true);
	for (size_t i = 0; i < n; i++) {
		if (!fl[i].present)
			continue;
		kv_open(&k, NULL, false);
		kv_str(&k, "name", fl[i].name);
		kv_u64(&k, "size", fl[i].size);
		kv_close(&k);
	}
	kv_close(&k);
	kv_open(&k, "stacks", false);
	kv_u64(&k, "distinct", s->stacks);
	kv_u64(&k, "truncated", s->stacks_truncated);
	kv_u64(&k, "incomplete", s->stacks_incomplete);
	kv_u64(&k, "samples_truncated", s->samples_truncated);
	kv_u64(&k, "samples_incomplete", s->samples_incomplete);
	kv_u64(&k, "samples_unknown", s->samples_unknown_stack);
	kv_u64(&k, "java_scoped", s->stacks_java_scoped);
	kv_close(&k);
	if (in->end_event) {
		kv_u64(&k, "handler_ns", in->end_event->handler_ns);
		kv_u64(&k, "collector_start_ns", in->end_event->start_cost_ns);
		kv_u64(&k, "collector_end_ns", in->end_event->end_cost_ns);
		kv_u64(&k, "lost_samples", in->end_event->lost);
		kv_u64(&k, "lost_stacks", in->end_event->stacks_lost);
	} else {
		kv_null(&k, "handler_ns");
		kv_null(&k, "collector_start_ns");
		kv_null(&k, "collector_end_ns");
		kv_null(&k, "lost_samples");
		kv_null(&k, "lost_stacks");
	}
	kv_bool(&k, "log_complete", in->log_complete);
	kv_descendants(&k, exp);
	kv_events(&k, exp, SONDE_EV_WARNING, "warnings");
	kv_events(&k, exp, SONDE_EV_ERROR, "errors");
	const struct sonde_problem *p = sonde_exp_problems(exp, &n);

	kv_open(&k, "load_objects", true);
	{
		size_t no;
		const struct sonde_object *o = sonde_exp_objects(exp, &no);
		char file[PATH_MAX], msg[2 * PATH_MAX];
		struct sonde_syms *syms = sonde_syms_open(exp);
		bool *checked = checked_objects(o, no);

		for (size_t i = 0; checked && i < no; i++) {
			if (!checked[i])
				continue;
			enum sonde_archive_state st = sonde_archive_check(
				in->dir, o[i].path, o[i].buildid, file, sizeof(file), msg, sizeof(msg));
			kv_open(&k, NULL, false);
			kv_str(&k, "path", o[i].path);
			kv_str(&k, "buildid", o[i].buildid);
			kv_str(&k, "state", obj_state_name[st]);
			kv_str(&k, "file", file);
			if (syms && st != SONDE_OBJ_CHANGED && st != SONDE_OBJ_MISSING)
				kv_bool(&k, "function_symbols", !object_unnamed(syms, &o[i]));
			kv_close(&k);
		}
		free(checked);
		sonde_syms_close(syms);
	}
	kv_close(&k);
	kv_open(&k, "problems", true);
	for (size_t i = 0; i < n; i++) {
		kv_open(&k, NULL, false);
		kv_str(&k, "severity", p[i].severity == SONDE_PROBLEM_ERROR ? "error" : "warning");
		kv_str(&k, "message", p[i].msg);
		kv_close(&k);
	}
	kv_close(&k);
	const struct sonde_thread *t = sonde_exp_threads(exp, &n);

	kv_open(&k, "threads", true);
	for (size_t i = 0; i < n; i++) {
		kv_open(&k, NULL, false);
		kv_u64(&k, "tid", t[i].tid);
		kv_u64(&k, "samples", t[i].samples);
		kv_u64(&k, "recorded_cpu_ns", t[i].weight_ns);
		if (t[i].has_cpu_ns)
			kv_u64(&k, "real_cpu_ns", t[i].cpu_ns);
		else
			kv_null(&k, "real_cpu_ns");
		kv_close(&k);
	}
	kv_close(&k);
	em_end_doc(&k);
}

static void header_text(FILE *f, const void *exp)
{
	header(f, exp);
}

void sonde_view_header(FILE *f, const struct sonde_exp *const *exps, size_t n,
		       const struct sonde_view_opts *o)
{
	struct sonde_emit e;

	em_init(&e, f, o->mode);
	for (size_t i = 0; i < n; i++) {
		if (i)
			em_text(&e, "\n");
		em_text_with(&e, header_text, exps[i]);
		em_doc_with(&e, header_data, exps[i]);
	}
}
