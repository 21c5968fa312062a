/*
 * sonde print: er_print-style text views of experiments.
 *
 *	sonde print [COMMAND...] EXPERIMENT...
 *
 * Commands are single-dash words, some with an argument (-dump profile).
 * All commands are parsed before any experiment is opened, so a typo fails
 * fast (exit 2); then each experiment is opened and every command runs on
 * it in order.  An experiment that cannot be opened gives a one-line error
 * (exit 1); one whose data files are damaged is reported on as far as it
 * could be read, its problems go to stderr, and the exit status is 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "experiment.h"

enum op { OP_HEADER, OP_DUMP };

enum dump_kind { DUMP_PROFILE, DUMP_STACKS, DUMP_OVERVIEW, DUMP_OBJECTS };

static const char *const dump_names[] = { "profile", "stacks", "overview", "objects" };

struct step {
	enum op op;
	enum dump_kind dump;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde print [COMMAND...] EXPERIMENT...\n"
		"\n"
		"commands (run in order on each experiment; default -header):\n"
		"  -header            experiment summary: target, settings, duration, exit,\n"
		"                     samples, stacks, warnings, read problems, threads\n"
		"  -dump profile      every clock-profile sample with its call stack\n"
		"  -dump stacks       every distinct call stack\n"
		"  -dump overview     the process usage samples\n"
		"  -dump objects      the load objects of map.xml\n"
		"  -help              this text\n");
}

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

/* ---- -header ------------------------------------------------------------ */

static void print_notes(const char *notes)
{
	const char *p = notes;

	printf("Notes:\n");
	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);

		printf("  %.*s\n", n, p);
		p += n + (nl != NULL);
	}
}

static void print_start(const struct sonde_exp_info *in)
{
	printf("%-19s", "Start:");
	if (!in->has_realtime) {
		printf("unknown\n");
		return;
	}
	time_t t = (time_t)in->realtime_sec;
	struct tm tm;
	char date[64], zone[16];

	if (!localtime_r(&t, &tm) || !strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm)) {
		printf("%" PRId64 ".%09u (seconds since the epoch)\n", in->realtime_sec,
		       in->realtime_nsec);
		return;
	}
	if (!strftime(zone, sizeof(zone), "%Z", &tm))
		zone[0] = '\0';
	printf("%s.%03u %s\n", date, in->realtime_nsec / 1000000, zone);
}

static void print_exit(const struct sonde_exp_info *in)
{
	const struct sonde_event *ev = in->exit_event;

	printf("%-19s", "Exit:");
	if (ev && ev->kind == SONDE_EV_EXIT)
		printf("exit status %d\n", ev->status);
	else if (ev)
		printf("killed by signal %d (%s)\n", ev->signal, str(ev->signame));
	else if (in->end_event)
		printf("unknown (no exit record; the collector shut down at %.3f s)\n",
		       since(in, in->end_event->time_ns));
	else
		printf("unknown (no exit record: the target may still run, or sonde collect was "
		       "killed)\n");
}

static void print_events(const struct sonde_exp *exp, enum sonde_event_kind kind,
			 const char *title)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n, count = 0;
	const struct sonde_event *ev = sonde_exp_events(exp, &n);

	for (size_t i = 0; i < n; i++)
		count += ev[i].kind == kind;
	if (!count)
		return;
	printf("\n%s (%zu):\n", title, count);
	for (size_t i = 0; i < n; i++)
		if (ev[i].kind == kind)
			printf("  %8.3f s  %s\n", since(in, ev[i].time_ns), str(ev[i].text));
}

static void print_threads(const struct sonde_exp *exp)
{
	size_t n;
	const struct sonde_thread *t = sonde_exp_threads(exp, &n);
	uint64_t samples = 0, rec = 0, real = 0;
	bool all_real = n > 0;

	printf("\nThreads (%zu):\n", n);
	if (!n)
		return;
	printf("  %10s %10s %14s %12s %8s\n", "tid", "samples", "recorded CPU s", "real CPU s",
	       "diff %");
	for (size_t i = 0; i < n; i++) {
		samples += t[i].samples;
		rec += t[i].weight_ns;
		printf("  %10u %10" PRIu64 " %14.3f ", t[i].tid, t[i].samples, sec(t[i].weight_ns));
		if (!t[i].has_cpu_ns) {
			all_real = false;
			printf("%12s %8s\n", "-", "-");
			continue;
		}
		real += t[i].cpu_ns;
		if (t[i].cpu_ns)
			printf("%12.3f %+8.1f\n", sec(t[i].cpu_ns),
			       100.0 * ((double)t[i].weight_ns - (double)t[i].cpu_ns) /
				       (double)t[i].cpu_ns);
		else
			printf("%12.3f %8s\n", 0.0, "-");
	}
	printf("  %10s %10" PRIu64 " %14.3f ", "total", samples, sec(rec));
	if (all_real && real)
		printf("%12.3f %+8.1f\n", sec(real),
		       100.0 * ((double)rec - (double)real) / (double)real);
	else
		printf("%12s %8s\n", all_real ? "0.000" : "-", "-");

	/* Clock profiling must account for each thread's CPU time. */
	for (size_t i = 0; i < n; i++) {
		if (!t[i].has_cpu_ns || t[i].cpu_ns < 20000000)
			continue;
		double d = 100.0 * ((double)t[i].weight_ns - (double)t[i].cpu_ns) /
			   (double)t[i].cpu_ns;

		if (d > 5.0 || d < -5.0)
			printf("WARNING: thread %u: recorded CPU time %.3f s differs from its real "
			       "CPU time %.3f s by %+.1f%%\n",
			       t[i].tid, sec(t[i].weight_ns), sec(t[i].cpu_ns), d);
	}
}

static void print_header(const struct sonde_exp *exp)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	const struct sonde_exp_summary *s = sonde_exp_summary(exp);
	char b1[32];

	printf("%-19s%s\n", "Experiment:", in->dir);
	if (in->notes)
		print_notes(in->notes);
	printf("%-19s%s (experiment format %u)\n", "Collector:", str(in->collector), in->format);
	printf("%-19s%s\n", "Target:", str(in->target.command));
	printf("%-19s%s\n", "Executable:", str(in->target.exe));
	printf("%-19s%s\n", "Directory:", str(in->target.cwd));
	printf("%-19spid %u, parent %u\n", "Process:", in->target.pid, in->target.ppid);
	printf("%-19s%s", "Host:", str(in->system.host));
	const char *sys[] = { in->system.os, in->system.release, in->system.arch };

	for (int i = 0, first = 1; i < 3; i++)
		if (sys[i] && *sys[i]) {
			printf("%s%s", first ? ", " : " ", sys[i]);
			first = 0;
		}
	if (in->system.cpus)
		printf(", %u CPUs", in->system.cpus);
	if (in->system.memory_kb) {
		fmt_bytes(b1, sizeof(b1), in->system.memory_kb * 1024);
		printf(", %s memory", b1);
	}
	printf("\n");
	printf("%-19s", "Clock profiling:");
	if (in->settings.clock_source || in->settings.clock_interval_ns)
		printf("%s, interval %.3f ms", str(in->settings.clock_source),
		       (double)in->settings.clock_interval_ns / 1e6);
	else
		printf("off");
	if (in->settings.depth_limit)
		printf(", depth limit %u", in->settings.depth_limit);
	printf("\n");
	if (in->settings.size_limit_mb || in->settings.duration_s > 0) {
		printf("%-19s", "Limits:");
		if (in->settings.size_limit_mb)
			printf("size %" PRIu64 " MB", in->settings.size_limit_mb);
		if (in->settings.duration_s > 0)
			printf("%sduration %g s", in->settings.size_limit_mb ? ", " : "",
			       in->settings.duration_s);
		printf("\n");
	}
	print_start(in);
	printf("%-19s%.3f s (until the %s)\n", "Duration:", since(in, in->end_ns),
	       !strcmp(in->end_source, "end") ? "collector's end" : in->end_source);
	print_exit(in);
	printf("%-19s%" PRIu64 "\n", "Samples:", s->samples);
	printf("%-19s%.3f s\n", "Recorded CPU time:", sec(s->weight_ns));

	size_t nf;
	const struct sonde_exp_file *f = sonde_exp_files(exp, &nf);
	uint64_t total = 0;
	int first = 1;

	printf("%-19s", "Data sizes:");
	for (size_t i = 0; i < nf; i++) {
		if (!f[i].present)
			continue;
		fmt_bytes(b1, sizeof(b1), f[i].size);
		printf("%s%s %s", first ? "" : ", ", f[i].name, b1);
		total += f[i].size;
		first = 0;
	}
	fmt_bytes(b1, sizeof(b1), total);
	printf("%stotal %s\n", first ? "" : "; ", b1);

	printf("%-19s%zu distinct, %zu truncated, %zu incomplete", "Stacks:", s->stacks,
	       s->stacks_truncated, s->stacks_incomplete);
	if (s->samples)
		printf(" (samples: %" PRIu64 " truncated, %" PRIu64 " incomplete, %" PRIu64
		       " unknown)",
		       s->samples_truncated, s->samples_incomplete, s->samples_unknown_stack);
	printf("\n");
	if (in->end_event && in->end_event->handler_ns && in->end_event->samples)
		printf("%-19s%.3f s in the sampling handler, %.2f us per sample\n", "Collector cost:",
		       (double)in->end_event->handler_ns * 1e-9,
		       (double)in->end_event->handler_ns * 1e-3 / (double)in->end_event->samples);
	if (in->end_event && in->end_event->stacks_lost)
		printf("%-19s%" PRIu64 " (and %" PRIu64 " stacks)\n", "Lost samples:",
		       in->end_event->lost, in->end_event->stacks_lost);
	else if (in->end_event)
		printf("%-19s%" PRIu64 "\n", "Lost samples:", in->end_event->lost);
	else
		printf("%-19sunknown (the collector did not record its end)\n", "Lost samples:");
	printf("%-19s%s\n", "Log:",
	       in->log_complete ? "complete"
				: "incomplete (no </experiment>: the target or sonde collect ended "
				  "abruptly)");
	if (in->end_event && in->end_event->lost)
		printf("WARNING: %" PRIu64 " samples were lost (%.1f%% of all); metrics are low by "
		       "about that much\n",
		       in->end_event->lost,
		       100.0 * (double)in->end_event->lost /
			       (double)(s->samples + in->end_event->lost));
	if (in->end_event && in->end_event->stacks_lost)
		printf("WARNING: %" PRIu64 " call stacks were lost; samples that use them show no "
		       "stack\n",
		       in->end_event->stacks_lost);

	print_events(exp, SONDE_EV_WARNING, "Collector warnings");
	print_events(exp, SONDE_EV_ERROR, "Collector errors");

	size_t np;
	const struct sonde_problem *p = sonde_exp_problems(exp, &np);

	printf("\nRead problems (%zu):%s\n", np, np ? "" : " none");
	for (size_t i = 0; i < np; i++)
		printf("  %s: %s\n", p[i].severity == SONDE_PROBLEM_ERROR ? "error" : "warning",
		       p[i].msg);

	print_threads(exp);
}

/* ---- -dump -------------------------------------------------------------- */

static void print_frames(const struct sonde_exp *exp, const struct sonde_stack *st, uint64_t time_ns)
{
	for (unsigned i = 0; i < st->depth; i++) {
		uint64_t pc = st->pc[i] & ~SONDE_PC_EXACT;
		const struct sonde_object *o = sonde_exp_find_object(exp, pc, time_ns);

		if (o)
			printf("    #%u 0x%" PRIx64 "  %s+0x%" PRIx64 "\n", i, pc, o->name,
			       pc - o->base);
		else
			printf("    #%u 0x%" PRIx64 "  ?\n", i, pc);
	}
}

static void print_stack_flags(uint16_t flags)
{
	if (flags & SONDE_STACK_TRUNCATED)
		printf("  [truncated]");
	if (flags & SONDE_STACK_INCOMPLETE)
		printf("  [incomplete]");
}

static int cmp_sample(const void *a, const void *b)
{
	const struct sonde_sample *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	if (x->weight_ns != y->weight_ns)
		return x->weight_ns < y->weight_ns ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static int dump_profile(const struct sonde_exp *exp)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	const struct sonde_exp_summary *s = sonde_exp_summary(exp);
	struct sonde_sample *v = malloc((s->samples ? s->samples : 1) * sizeof(*v));
	struct sonde_sample_iter it;
	size_t n = 0;

	if (!v) {
		fprintf(stderr, "sonde print: out of memory sorting %" PRIu64 " samples of '%s'\n",
			s->samples, in->dir);
		return 1;
	}
	sonde_sample_iter_init(&it, exp);
	while (n < s->samples && sonde_sample_iter_next(&it, &v[n]))
		n++;
	qsort(v, n, sizeof(*v), cmp_sample);

	printf("# %zu profile samples of %s, by time; time in seconds since the start\n", n,
	       in->dir);
	for (size_t i = 0; i < n; i++) {
		const struct sonde_stack *st = sonde_exp_stack(exp, v[i].stack_id);

		printf("sample %zu  time %.9f  tid %u  cpu ", i, since(in, v[i].time_ns), v[i].tid);
		if (v[i].cpu == 0xffff)
			printf("-");
		else
			printf("%u", v[i].cpu);
		if (v[i].state != SONDE_STATE_CPU)
			printf("  state %u", v[i].state);
		printf("  weight %.3f ms  stack 0x%" PRIx64, (double)v[i].weight_ns / 1e6,
		       v[i].stack_id);
		if (!st) {
			printf("  [stack not found]\n");
			continue;
		}
		print_stack_flags(st->flags);
		printf("\n");
		print_frames(exp, st, v[i].time_ns);
	}
	free(v);
	return 0;
}

static void dump_stacks(const struct sonde_exp *exp)
{
	size_t n;
	const struct sonde_stack *st = sonde_exp_stacks(exp, &n);

	printf("# %zu distinct stacks of %s, leaf first\n", n, sonde_exp_info(exp)->dir);
	for (size_t i = 0; i < n; i++) {
		printf("stack 0x%" PRIx64 "  depth %u", st[i].id, st[i].depth);
		print_stack_flags(st[i].flags);
		printf("\n");
		print_frames(exp, &st[i], SONDE_TIME_NEVER);
	}
}

static void dump_overview(const struct sonde_exp *exp)
{
	static const char *const reasons[] = { "start", "end", "periodic" };
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	const struct sonde_overview_packet *o = sonde_exp_overview(exp, &n);

	printf("# %zu overview samples of %s; times in seconds\n", n, in->dir);
	printf("%12s %-8s %10s %10s %10s %8s %9s %9s %9s %9s %10s\n", "time", "reason", "user",
	       "system", "minflt", "majflt", "inblock", "oublock", "nvcsw", "nivcsw", "maxrss_kb");
	for (size_t i = 0; i < n; i++) {
		char r[16];

		if (o[i].reason < sizeof(reasons) / sizeof(reasons[0]))
			snprintf(r, sizeof(r), "%s", reasons[o[i].reason]);
		else
			snprintf(r, sizeof(r), "%u", o[i].reason);
		printf("%12.6f %-8s %10.3f %10.3f %10" PRIu64 " %8" PRIu64 " %9" PRIu64
		       " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %10" PRIu64 "\n",
		       since(in, o[i].time_ns), r, sec(o[i].utime_ns), sec(o[i].stime_ns),
		       o[i].minflt, o[i].majflt, o[i].inblock, o[i].oublock, o[i].nvcsw,
		       o[i].nivcsw, o[i].maxrss_kb);
	}
}

static void dump_objects(const struct sonde_exp *exp)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	const struct sonde_object *o = sonde_exp_objects(exp, &n);

	printf("# %zu load objects of %s; times in seconds\n", n, in->dir);
	for (size_t i = 0; i < n; i++) {
		printf("object %u  loaded %.6f", o[i].id, since(in, o[i].load_ns));
		if (o[i].unload_ns != SONDE_TIME_NEVER)
			printf("  unloaded %.6f", since(in, o[i].unload_ns));
		printf("  base 0x%" PRIx64 "  range 0x%" PRIx64 "-0x%" PRIx64 "  buildid %s  %s\n",
		       o[i].base, o[i].lo, o[i].hi, o[i].buildid ? o[i].buildid : "-", o[i].path);
	}
}

/* ---- the command --------------------------------------------------------- */

/* Runs the steps on one experiment; *printed says whether any experiment
 * printed something yet (for the blank line between them). */
static int run_steps(const char *dir, const struct step *steps, size_t nsteps, bool *printed)
{
	char err[512];
	struct sonde_exp *exp = sonde_exp_open(dir, err, sizeof(err));
	bool header = false;
	int rc = 0;

	if (!exp) {
		fflush(stdout);
		fprintf(stderr, "sonde print: %s\n", err);
		return 1;
	}
	for (size_t i = 0; i < nsteps; i++) {
		if (*printed)
			printf("\n");
		*printed = true;
		switch (steps[i].op) {
		case OP_HEADER:
			print_header(exp);
			header = true;
			break;
		case OP_DUMP:
			switch (steps[i].dump) {
			case DUMP_PROFILE:
				rc |= dump_profile(exp);
				break;
			case DUMP_STACKS:
				dump_stacks(exp);
				break;
			case DUMP_OVERVIEW:
				dump_overview(exp);
				break;
			case DUMP_OBJECTS:
				dump_objects(exp);
				break;
			}
			break;
		}
	}

	/* Damaged data: the views above cover only what could be read. */
	size_t nerr = sonde_exp_nerrors(exp);

	if (nerr) {
		size_t np;
		const struct sonde_problem *p = sonde_exp_problems(exp, &np);

		fflush(stdout);
		for (size_t i = 0; !header && i < np; i++) /* -header lists them */
			if (p[i].severity == SONDE_PROBLEM_ERROR)
				fprintf(stderr, "sonde print: '%s': %s\n", dir, p[i].msg);
		fprintf(stderr,
			"sonde print: '%s' is damaged (%zu read error%s); the output covers only the "
			"data that could be read\n",
			dir, nerr, nerr == 1 ? "" : "s");
		rc = 1;
	}
	sonde_exp_close(exp);
	return rc;
}

int cmd_print(int argc, char **argv)
{
	struct step *steps = calloc((size_t)argc + 1, sizeof(*steps));
	const char **exps = calloc((size_t)argc + 1, sizeof(*exps));
	size_t nsteps = 0, nexps = 0;
	bool only_exps = false;
	int rc = 0;

	if (!steps || !exps) {
		fprintf(stderr, "sonde print: out of memory\n");
		free(steps);
		free(exps);
		return 1;
	}
	if (argc < 2) {
		usage(stderr);
		rc = 2;
		goto out;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_exps || a[0] != '-' || !a[1]) {
			exps[nexps++] = a;
		} else if (!strcmp(a, "--")) {
			only_exps = true;
		} else if (!strcmp(a, "-help") || !strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			goto out;
		} else if (!strcmp(a, "-header")) {
			steps[nsteps++].op = OP_HEADER;
		} else if (!strcmp(a, "-dump")) {
			size_t k;

			if (i + 1 >= argc) {
				fprintf(stderr, "sonde print: -dump needs an argument (profile, stacks, "
						"overview, objects)\n");
				rc = 2;
				goto out;
			}
			a = argv[++i];
			for (k = 0; k < sizeof(dump_names) / sizeof(dump_names[0]); k++)
				if (!strcmp(a, dump_names[k]))
					break;
			if (k == sizeof(dump_names) / sizeof(dump_names[0])) {
				fprintf(stderr,
					"sonde print: unknown -dump argument '%s' (profile, stacks, "
					"overview, objects)\n",
					a);
				rc = 2;
				goto out;
			}
			steps[nsteps].op = OP_DUMP;
			steps[nsteps++].dump = (enum dump_kind)k;
		} else {
			fprintf(stderr, "sonde print: unknown command '%s' (try 'sonde print -help')\n",
				a);
			rc = 2;
			goto out;
		}
	}
	if (!nexps) {
		fprintf(stderr, "sonde print: no experiment given (try 'sonde print -help')\n");
		rc = 2;
		goto out;
	}
	if (!nsteps)
		steps[nsteps++].op = OP_HEADER;
	bool printed = false;

	for (size_t i = 0; i < nexps; i++)
		rc |= run_steps(exps[i], steps, nsteps, &printed);
out:
	free(steps);
	free(exps);
	return rc;
}
