/*
 * -statistics: each experiment's process statistics from its overview
 * packets (er_print's -statistics), the threads' microstates beside the
 * kernel's own accounting, and what restoring tail-call frames did.  Apart
 * from view.c, the views of the metrics model, because it reads the
 * experiments themselves (their summaries, overview packets and threads)
 * and builds no metric table.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "views/view.h"
#include "views/view_common.h"

struct stats {
	uint64_t duration_ns, recorded_ns, samples, threads, overview;
	uint64_t user_ns, system_ns, minflt, majflt, inblock, oublock, nvcsw, nivcsw, maxrss_kb;
};

static void exp_stats(const struct sonde_exp *e, struct stats *s)
{
	const struct sonde_exp_info *in = sonde_exp_info(e);
	const struct sonde_exp_summary *sm = sonde_exp_summary(e);
	size_t n, nt;
	const struct sonde_overview_packet *ov = sonde_exp_overview(e, &n);

	memset(s, 0, sizeof(*s));
	s->duration_ns = in->end_ns > in->start_ns ? in->end_ns - in->start_ns : 0;
	s->recorded_ns = sm->weight_ns;
	s->samples = sm->samples;
	sonde_exp_threads(e, &nt);
	s->threads = nt;
	s->overview = n;
	if (!n)
		return;
	/* first and last by time; with one packet, its counts since the process start */
	const struct sonde_overview_packet *lo = &ov[0], *hi = &ov[0];

	for (size_t i = 1; i < n; i++) {
		if (ov[i].time_ns < lo->time_ns)
			lo = &ov[i];
		if (ov[i].time_ns >= hi->time_ns)
			hi = &ov[i];
	}
#define D(f) (n > 1 && hi->f >= lo->f ? hi->f - lo->f : hi->f)
	s->user_ns = D(utime_ns);
	s->system_ns = D(stime_ns);
	s->minflt = D(minflt);
	s->majflt = D(majflt);
	s->inblock = D(inblock);
	s->oublock = D(oublock);
	s->nvcsw = D(nvcsw);
	s->nivcsw = D(nivcsw);
#undef D
	for (size_t i = 0; i < n; i++)
		if (ov[i].maxrss_kb > s->maxrss_kb)
			s->maxrss_kb = ov[i].maxrss_kb;
}

static const struct {
	const char *key, *label;
	size_t off;
	int kind; /* 0 count, 1 seconds, 2 seconds with % of process time */
} stat_rows[] = {
#define S(k, l, f, kind) { k, l, offsetof(struct stats, f), kind }
	S("duration_ns", "Duration (sec.)", duration_ns, 1),
	S("recorded_cpu_ns", "Recorded CPU Time (sec.)", recorded_ns, 1),
	S("samples", "Profile Samples", samples, 0),
	S("threads", "Threads", threads, 0),
	S("overview_samples", "Overview Samples", overview, 0),
	S("user_ns", "User CPU", user_ns, 2),
	S("system_ns", "System CPU", system_ns, 2),
	S("minflt", "Minor Page Faults", minflt, 0),
	S("majflt", "Major Page Faults", majflt, 0),
	S("inblock", "Input blocks", inblock, 0),
	S("oublock", "Output blocks", oublock, 0),
	S("nvcsw", "Voluntary context switches", nvcsw, 0),
	S("nivcsw", "Involuntary context switches", nivcsw, 0),
	S("maxrss_kb", "Maximum resident set (KB)", maxrss_kb, 0),
#undef S
};
#define NSTAT (sizeof(stat_rows) / sizeof(stat_rows[0]))

static uint64_t stat_get(const struct stats *s, size_t i)
{
	return *(const uint64_t *)((const char *)s + stat_rows[i].off);
}

static void stats_text(struct sonde_emit *e, const char *name, const struct stats *s)
{
	uint64_t proc = s->user_ns + s->system_ns;

	em_text(e, "Experiment: %s\n", name);
	for (size_t i = 0; i < NSTAT; i++) {
		uint64_t v = stat_get(s, i);

		if (!strcmp(stat_rows[i].key, "user_ns"))
			em_text(e, "\n%40s\n", "Process Times (sec.):");
		if (!strcmp(stat_rows[i].key, "minflt"))
			em_text(e, "\n");
		em_text(e, "%40s: ", stat_rows[i].label);
		if (stat_rows[i].kind == 0) {
			em_text(e, "%5" PRIu64 "\n", v);
			continue;
		}
		if (v)
			em_text(e, "%.3f", (double)v / 1e9);
		else
			em_text(e, "0.   ");
		if (stat_rows[i].kind == 2) {
			double p = proc ? 100.0 * (double)v / (double)proc : 0;

			if (p == 0)
				em_text(e, " (  0. %%)");
			else
				em_text(e, " (%5.1f%%)", p);
		}
		em_text(e, "\n");
	}
	if (!s->overview)
		em_text(e, "(no overview samples: the process times are unknown)\n");
}

/* The microstates of each thread: what the profile recorded (User CPU,
 * System CPU and Wait CPU from the CPU samples, User Lock and Other Wait
 * from the off-CPU samples) beside the kernel's own accounting that
 * thread_end carries (utime, stime, run_delay, and the time it slept:
 * its life less its CPU and run-queue time).  Shown for experiments with
 * any of it; the reference compares <Total> with /proc the same way. */
/* The columns: User CPU, System CPU, Wait CPU, a column per off-CPU state
 * (sonde/states.h: User Lock, Other Wait; its key is its metric's name
 * and "_ns"), Total Thread, then the kernel's. */
#define MS_OFF_(NAME, id, flags, ...) +((flags) & (SONDE_STATEF_CPU | SONDE_STATEF_RUNTIME) ? 0 : 1)
enum { MS_USER, MS_SYS, MS_WAIT, MS_OFF0, MS_TOTAL = MS_OFF0 SONDE_STATES(MS_OFF_), MS_UTIME, MS_STIME, MS_DELAY,
       MS_SLEEP, MS_N };
#undef MS_OFF_
static struct {
	const char *key, *head;
	int state; /* an off-CPU state's column: its id; -1 */
} ms_cols[MS_N] = {
	[MS_USER] = { "user_ns", "User CPU", -1 },	 [MS_SYS] = { "system_ns", "Sys. CPU", -1 },
	[MS_WAIT] = { "wait_ns", "Wait CPU", -1 },	 [MS_TOTAL] = { "total_ns", "Total Thread", -1 },
	[MS_UTIME] = { "utime_ns", "utime", -1 },	 [MS_STIME] = { "stime_ns", "stime", -1 },
	[MS_DELAY] = { "run_delay_ns", "run_delay", -1 }, [MS_SLEEP] = { "sleeping_ns", "sleeping", -1 },
};
static char ms_keys[MS_TOTAL - MS_OFF0 + 1][40];

/* The off-CPU states' columns, from the table; once. */
static void ms_cols_init(void)
{
	int c = MS_OFF0;
	for (unsigned st = 0; st < SONDE_STATE_COUNT && c < MS_TOTAL; st++) {
		const struct sonde_state_desc *d = sonde_state_desc(st);
		if (!sonde_state_offcpu(st) || sonde_state_runtime_offcpu(st))
			continue;
		snprintf(ms_keys[c - MS_OFF0], sizeof ms_keys[0], "%s_ns", d->metric);
		ms_cols[c].key = ms_keys[c - MS_OFF0];
		ms_cols[c].head = d->name;
		ms_cols[c++].state = (int)st;
	}
}

static bool has_microstates(const struct sonde_exp *e)
{
	size_t nt;
	const struct sonde_thread *t = sonde_exp_threads(e, &nt);
	bool any = sonde_exp_has_microstates(e) || sonde_exp_has_offcpu(e);

	for (size_t i = 0; i < nt && !any; i++)
		any = t[i].has_times || t[i].has_run_delay;
	return any;
}

/* A thread's columns; known[c] false where thread_end did not say. */
static void thread_ms(const struct sonde_thread *t, uint64_t *v, bool *known)
{
	for (int c = 0; c < MS_N; c++)
		known[c] = c < MS_UTIME;
	v[MS_USER] = t->weight_ns - t->system_ns;
	v[MS_SYS] = t->system_ns;
	v[MS_WAIT] = t->wait_cpu_ns;
	v[MS_TOTAL] = t->weight_ns + t->wait_cpu_ns;
	for (int c = MS_OFF0; c < MS_TOTAL; c++)
		v[MS_TOTAL] += v[c] = t->state_ns[ms_cols[c].state];
	/* a runtime's off-CPU state (OpenMP's waits) is a futex wait: User
	 * Lock's, as the kernel sees it */
	for (unsigned st = 0; st < SONDE_STATE_COUNT; st++)
		for (int c = MS_OFF0; c < MS_TOTAL; c++)
			if (sonde_state_runtime_offcpu(st) && ms_cols[c].state == SONDE_STATE_USER_LOCK) {
				v[c] += t->state_ns[st];
				v[MS_TOTAL] += t->state_ns[st];
			}
	known[MS_UTIME] = known[MS_STIME] = t->has_times;
	v[MS_UTIME] = t->utime_ns;
	v[MS_STIME] = t->stime_ns;
	known[MS_DELAY] = t->has_run_delay;
	v[MS_DELAY] = t->run_delay_ns;
	/* sleeping: (end - start) - cpu - run_delay */
	known[MS_SLEEP] = t->has_run_delay && t->has_cpu_ns && t->start_ns && t->end_ns >= t->start_ns;
	uint64_t life = known[MS_SLEEP] ? t->end_ns - t->start_ns : 0, busy = t->cpu_ns + t->run_delay_ns;
	v[MS_SLEEP] = life > busy ? life - busy : 0;
}

static void ms_row(struct sonde_emit *e, const char *exp, const char *who, uint32_t tid, const uint64_t *v,
		   const bool *known)
{
	em_text(e, "%12s", who);
	for (int c = 0; c < MS_N; c++) {
		if (c == MS_UTIME)
			em_text(e, " |");
		if (known[c])
			em_text(e, " %*.3f", c == MS_TOTAL ? 12 : 10, (double)v[c] / 1e9);
		else
			em_text(e, " %*s", c == MS_TOTAL ? 12 : 10, "-");
	}
	em_text(e, "\n");
	em_row(e);
	em_s(e, "experiment", exp);
	if (tid)
		em_u(e, "tid", tid);
	else
		em_s(e, "tid", who);
	for (int c = 0; c < MS_N; c++)
		if (known[c])
			em_u(e, ms_cols[c].key, v[c]);
		else
			em_null(e, ms_cols[c].key);
	em_row_end(e);
}

static void stats_microstates(struct sonde_emit *e, const struct sonde_exp *exp)
{
	size_t nt;
	const struct sonde_thread *t = sonde_exp_threads(exp, &nt);
	const char *name = sonde_exp_info(exp)->name;
	uint64_t tot[MS_N] = { 0 };
	bool tknown[MS_N];

	em_text(e, "\nThread microstates of %s (sec.): recorded by the profile | the kernel's accounting "
		   "(thread_end)\n%12s", name, "tid");
	for (int c = 0; c < MS_N; c++)
		em_text(e, "%s %*s", c == MS_UTIME ? " |" : "", c == MS_TOTAL ? 12 : 10, ms_cols[c].head);
	em_text(e, "\n");
	for (int c = 0; c < MS_N; c++)
		tknown[c] = c < MS_UTIME;
	for (size_t i = 0; i < nt; i++) {
		uint64_t v[MS_N];
		bool known[MS_N];
		char who[16];

		thread_ms(&t[i], v, known);
		for (int c = 0; c < MS_N; c++)
			if (known[c]) {
				tot[c] += v[c];
				tknown[c] = true; /* the sum of the threads that say */
			}
		snprintf(who, sizeof(who), "%u", t[i].tid);
		ms_row(e, name, who, t[i].tid, v, known);
	}
	ms_row(e, name, "<Total>", 0, tot, tknown);
	if (!sonde_exp_has_offcpu(exp)) { /* "User Lock and Other Wait are 0" */
		em_text(e, "(off-CPU time was not recorded: ");
		for (int c = MS_OFF0; c < MS_TOTAL; c++)
			em_text(e, "%s%s", c == MS_OFF0 ? "" : c + 1 == MS_TOTAL ? " and " : ", ", ms_cols[c].head);
		em_text(e, " %s 0)\n", MS_TOTAL - MS_OFF0 > 1 ? "are" : "is");
	}
	if (!sonde_exp_has_microstates(exp))
		em_text(e, "(the profile has no microstates: its CPU time is all User CPU)\n");
	em_text(e, "Linux keeps no Trap CPU (it is in System CPU), no Text or Data Page Fault time (a "
		   "page-in outside a\nsystem call is Other Wait, system call none: there is no "
		   "per-fault sleep time without delay\naccounting), and no Stopped time (it is Other "
		   "Wait).  utime and stime have the clock tick's\nresolution; sleeping is the thread's "
		   "life less its CPU and run-queue time: what User Lock\nand Other Wait approach when "
		   "off-CPU time was recorded.\n");
}

int sonde_view_statistics(FILE *f, const struct sonde_exp *const *exps, size_t n,
			  const struct sonde_view_opts *o, char *err, size_t errlen)
{
	struct stats *st = calloc(n + 1, sizeof(*st));

	if (!st) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct stats *sum = &st[n];

	for (size_t e = 0; e < n; e++) {
		exp_stats(exps[e], &st[e]);
		for (size_t i = 0; i < NSTAT; i++) {
			uint64_t *d = (uint64_t *)((char *)sum + stat_rows[i].off);

			if (!strcmp(stat_rows[i].key, "duration_ns") ||
			    !strcmp(stat_rows[i].key, "maxrss_kb")) {
				if (stat_get(&st[e], i) > *d)
					*d = stat_get(&st[e], i);
			} else {
				*d += stat_get(&st[e], i);
			}
		}
	}
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_csv(&em, "experiment");
	for (size_t i = 0; i < NSTAT; i++)
		em_csv(&em, ",%s", stat_rows[i].key);
	em_csv(&em, "\n");
	em_obj(&em, NULL);
	em_s(&em, "view", "statistics");
	em_arr(&em, "experiments");
	for (size_t e = 0; e < n; e++) {
		if (e)
			em_text(&em, "\n");
		stats_text(&em, sonde_exp_info(exps[e])->name, &st[e]);
		em_row(&em);
		em_s(&em, "experiment", sonde_exp_info(exps[e])->name);
		for (size_t i = 0; i < NSTAT; i++)
			em_u(&em, stat_rows[i].key, stat_get(&st[e], i));
		em_row_end(&em);
	}
	em_end(&em);
	/* the sums: json always, as "total"; text and csv with several experiments */
	em_obj(&em, "total");
	em_s(&em, "experiment", "all");
	for (size_t i = 0; i < NSTAT; i++)
		em_u(&em, stat_rows[i].key, stat_get(sum, i));
	em_end(&em);
	if (n > 1) {
		em_text(&em, "\n");
		stats_text(&em, "all (sums; duration and resident set: the largest)", sum);
		em_csv_str(&em, "all");
		for (size_t i = 0; i < NSTAT; i++)
			em_csv(&em, ",%" PRIu64, stat_get(sum, i));
		em_csv(&em, "\n");
	}
	/* the threads' microstates, for the experiments that have any */
	bool ms = false;

	for (size_t e = 0; e < n; e++)
		ms |= has_microstates(exps[e]);
	if (ms) {
		ms_cols_init();
		em_csv(&em, "\nexperiment,tid");
		for (int c = 0; c < MS_N; c++)
			em_csv(&em, ",%s", ms_cols[c].key);
		em_csv(&em, "\n");
		em_arr(&em, "microstates");
		for (size_t e = 0; e < n; e++)
			if (has_microstates(exps[e]))
				stats_microstates(&em, exps[e]);
		em_end(&em);
	}
	const struct sonde_tailcall_stats *tc = o->tailcalls;

	if (tc && tc->enabled) {
		/* how much of the call tree is restored, and what was left
		 * alone (several chains of tail calls could have run) */
		em_text(&em, "\n%40s\n", "Tail calls (-tailcalls on):");
		em_text(&em, "%40s: %" PRIu64 " in %" PRIu64 " distinct stacks (%" PRIu64 " samples)\n",
			"Frames restored", tc->frames, tc->stacks, tc->samples);
		em_text(&em, "%40s: %" PRIu64 " distinct stacks (%" PRIu64 " samples)\n",
			"Ambiguous, left as recorded", tc->amb_stacks, tc->amb_samples);
		em_csv(&em, "\ntailcall_frames,tailcall_stacks,tailcall_samples,tailcall_ambiguous_stacks,"
			    "tailcall_ambiguous_samples\n");
		em_csv(&em, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", tc->frames,
		       tc->stacks, tc->samples, tc->amb_stacks, tc->amb_samples);
		em_obj(&em, "tailcalls");
		em_u(&em, "frames_restored", tc->frames);
		em_u(&em, "stacks_restored", tc->stacks);
		em_u(&em, "samples_restored", tc->samples);
		em_u(&em, "ambiguous_stacks", tc->amb_stacks);
		em_u(&em, "ambiguous_samples", tc->amb_samples);
		em_end(&em);
	}
	em_end_doc(&em);
	free(st);
	return vw_finish(f, err, errlen);
}
