/*
 * sonde collect's settings: the table and its parsers (collect_settings.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/format.h>
#include <sonde/settings.h>

#include "collect_settings.h"
#include "symbols/archive.h"

/* ---- parsing values ------------------------------------------------------------ */

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "sonde collect: %s '%s'\n", msg, arg);
	return 2;
}

static int parse_interval(const char *s, double *ms)
{
	if (!strcmp(s, "on")) *ms = 10;
	else if (!strcmp(s, "hi")) *ms = 1;
	else if (!strcmp(s, "lo")) *ms = 100;
	else if (!strcmp(s, "off")) *ms = 0;
	else {
		char *end;
		errno = 0;
		double v = strtod(s, &end);
		if (errno || end == s || *end || !isfinite(v) || v < 0.01 || v > 100000)
			return -1;
		*ms = v;
	}
	return 0;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* A signal for -l or -y: a number, or a name with or without SIG
 * ("USR1", "SIGUSR2", "RTMIN+2").  Not one that cannot be caught, nor
 * one the collector samples with. */
static int parse_signal(const char *s)
{
	const char *name = strncmp(s, "SIG", 3) ? s : s + 3;
	long n = -1;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!errno && end != s && !*end)
		n = v;
	for (int i = 1; n < 0 && i < SIGRTMIN; i++)
		if (sigabbrev_np(i) && !strcmp(sigabbrev_np(i), name))
			n = i;
	if (n < 0 && !strncmp(name, "RTMIN+", 6)) {
		v = strtol(name + 6, &end, 10);
		if (end != name + 6 && !*end && v >= 0 && v <= SIGRTMAX - SIGRTMIN)
			n = SIGRTMIN + v;
	}
	if (n < 1 || n >= NSIG || n == SIGKILL || n == SIGSTOP || n == SIGTRAP || n == SIGRTMAX - 3 ||
	    n == SIGSEGV || n == SIGBUS || n == SIGFPE || n == SIGILL)
		return -1;
	return (int)n;
}

/* "END" or "START-END" in seconds, fractions allowed. */
/* A time of -t: seconds, or with gprofng's unit suffix s or m. */
static double window_time(const char *s, char **end)
{
	double v = strtod(s, end);
	if (*end != s && **end == 's')
		(*end)++;
	else if (*end != s && **end == 'm')
		(*end)++, v *= 60;
	return v;
}

static int parse_window(const char *s, double *start, double *stop)
{
	char *end;
	errno = 0;
	double a = window_time(s, &end), b;
	if (errno || end == s || !isfinite(a) || a < 0)
		return -1;
	if (*end == '-') {
		const char *p = end + 1;
		b = window_time(p, &end);
		if (errno || end == p || *end || !isfinite(b) || b <= a || b > 1e9)
			return -1;
	} else if (*end || a <= 0 || a > 1e9) {
		return -1;
	} else {
		b = a;
		a = 0;
	}
	*start = a;
	*stop = b;
	return 0;
}

/* The traced kind whose option letter is c, NULL for none. */
static const struct sonde_kind_desc *kind_of_option(char c)
{
	for (int k = 1; k <= SONDE_KIND_MAX; k++)
		if (sonde_kind_traced(k) && sonde_kind_desc(k)->opt == c)
			return sonde_kind_desc(k);
	return NULL;
}

/* Whether word is one of the '|'-separated words of values. */
static int has_word(const char *values, const char *word)
{
	size_t n = strlen(word);
	for (const char *w = values; *w;) {
		size_t len = strcspn(w, "|");
		if (len == n && !strncmp(w, word, n))
			return 1;
		w += len + (w[len] == '|');
	}
	return 0;
}

/* A traced kind's setting: one of its words ("off": NULL), or with N
 * among them a number of microseconds (0 means "all").  -1 when v is
 * none of them; *why then gets the message. */
static int parse_trace(const struct sonde_kind_desc *k, const char *v, const char **out, char *why, size_t cap)
{
	long n;
	if (!strcmp(v, "off")) {
		*out = NULL;
		return 0;
	}
	if (strcmp(v, "N") && has_word(k->values, v)) {
		*out = v;
		return 0;
	}
	if (has_word(k->values, "N") && parse_long(v, 0, 1000000000, &n) == 0) {
		*out = n ? v : "all";
		return 0;
	}
	/* The words, N last as "microseconds": "invalid -s value (on, all,
	 * off, or microseconds):", "invalid -H value (on or off):". */
	const char *w[16];
	int len[16], nw = 0;
	for (const char *p = k->values; *p && nw < 15;) {
		int l = (int)strcspn(p, "|");
		if (l != 1 || *p != 'N')
			w[nw] = p, len[nw++] = l;
		p += l + (p[l] == '|');
	}
	if (has_word(k->values, "N"))
		w[nw] = "microseconds", len[nw++] = 12;
	size_t used = (size_t)snprintf(why, cap, "invalid -%c value (", k->opt);
	for (int i = 0; i < nw && used < cap; i++)
		used += (size_t)snprintf(why + used, cap - used, "%s%s%.*s", i == 0 ? "" : nw == 2 ? " " : ", ",
					 i == nw - 1 && nw > 1 ? "or " : "", len[i], w[i]);
	if (used < cap)
		snprintf(why + used, cap - used, "):");
	return -1;
}

/* ---- the rows' parsers ----------------------------------------------------------- */

static int p_clock(struct collect_opts *o, char c, const char *v)
{
	if (parse_interval(v, &o->interval_ms) < 0)
		return bad("invalid -p value (on, hi, lo, off, or milliseconds from 0.01):", v);
	o->p_given = 1;
	return 0;
}

static int p_name(struct collect_opts *o, char c, const char *v)
{
	o->name = v;
	return 0;
}

static int p_dir(struct collect_opts *o, char c, const char *v)
{
	o->dir = v;
	return 0;
}

static int p_comment(struct collect_opts *o, char c, const char *v)
{
	if (o->ncomments == 16)
		return bad("too many -C comments at", v);
	o->comments[o->ncomments++] = v;
	return 0;
}

static int p_window(struct collect_opts *o, char c, const char *v)
{
	if (parse_window(v, &o->start_s, &o->stop_s) < 0)
		return bad("invalid -t value (END or START-END in seconds, s or m after a "
			   "number for seconds or minutes, END after START):",
			   v);
	/* a whole number of seconds from the start: the collector's own limit too */
	o->duration_s = o->start_s == 0 && o->stop_s == floor(o->stop_s) ? (long)o->stop_s : 0;
	return 0;
}

/* -O FILE: collect's own stdout and stderr go to FILE, appended, at once
 * (the messages of the options after it go there too); the target gets
 * the descriptors collect was given (restored in the child before exec). */
static int p_outfile(struct collect_opts *o, char c, const char *v)
{
	if (!*v)
		return bad("invalid -O value (a file name):", v);
	o->outfile = v;
	int fd = open(v, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "sonde collect: cannot open -O file '%s': %s\n", v, strerror(errno));
		return 2;
	}
	fflush(NULL);
	o->saved_out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	o->saved_err = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
		int e = errno;
		if (o->saved_err >= 0)
			dup2(o->saved_err, 2);
		fprintf(stderr, "sonde collect: cannot write to -O file '%s': %s\n", v, strerror(e));
		close(fd);
		return 2;
	}
	close(fd);
	return 0;
}

static int p_period(struct collect_opts *o, char c, const char *v)
{
	char *end;
	double sv;
	if (!strcmp(v, "on"))
		o->sample_s = 1;
	else if (!strcmp(v, "off"))
		o->sample_s = 0;
	else if (errno = 0, sv = strtod(v, &end), errno || end == v || *end || !isfinite(sv) || sv < 0.001 ||
						  sv > 86400)
		return bad("invalid -S value (on, off, or seconds from 0.001):", v);
	else
		o->sample_s = sv;
	return 0;
}

static int p_sample_sig(struct collect_opts *o, char c, const char *v)
{
	if ((o->sample_sig = parse_signal(v)) < 0)
		return bad("invalid -l signal (a name like USR1 or a number; not KILL, STOP, "
			   "TRAP, SEGV, BUS, FPE, ILL or sonde's RTMAX-3):",
			   v);
	return 0;
}

static int p_pause(struct collect_opts *o, char c, const char *v)
{
	char sig[64];
	const char *comma = strchr(v, ',');
	size_t len = comma ? (size_t)(comma - v) : strlen(v);
	if (len >= sizeof sig || (comma && strcmp(comma, ",r")))
		return bad("invalid -y value (SIG or SIG,r):", v);
	memcpy(sig, v, len);
	sig[len] = 0;
	if ((o->pause_sig = parse_signal(sig)) < 0)
		return bad("invalid -y signal (a name like USR1 or a number; not KILL, STOP, "
			   "TRAP, SEGV, BUS, FPE, ILL or sonde's RTMAX-3):",
			   v);
	o->pause_recording = comma != NULL;
	return 0;
}

static int p_limit(struct collect_opts *o, char c, const char *v)
{
	long n;
	if (parse_long(v, 1, 100000000, &n) < 0)
		return bad("invalid -L value (megabytes)", v);
	o->limit_mb = n;
	return 0;
}

static int p_depth(struct collect_opts *o, char c, const char *v)
{
	long n;
	if (parse_long(v, 1, SONDE_MAX_DEPTH_LIMIT, &n) < 0)
		return bad("invalid -D value (1 to 2040)", v);
	o->depth = (int)n;
	return 0;
}

static int p_offcpu(struct collect_opts *o, char c, const char *v)
{
	if (!strcmp(v, "on"))
		o->offcpu_ms = -1;
	else if (parse_interval(v, &o->offcpu_ms) < 0)
		return bad("invalid -w value (on, off, or milliseconds from 0.1):", v);
	else if (o->offcpu_ms && o->offcpu_ms < 0.1)
		return bad("invalid -w value (on, off, or milliseconds from 0.1):", v);
	return 0;
}

static int p_counters(struct collect_opts *o, char c, const char *v)
{
	char why[256];
	int nc = sonde_hwc_parse(v, o->counters, SONDE_MAX_COUNTERS, why, sizeof why);
	if (nc < 0) {
		fprintf(stderr, "sonde collect: %s\n", why);
		return 2;
	}
	o->ncounters = nc;
	o->hspec = v;
	return 0;
}

static int p_trace(struct collect_opts *o, char c, const char *v)
{
	const struct sonde_kind_desc *kind = kind_of_option(c);
	char why[128];
	if (parse_trace(kind, v, &o->trace[kind->id], why, sizeof why) < 0)
		return bad(why, v);
	return 0;
}

static int p_follow(struct collect_opts *o, char c, const char *v)
{
	if (v[0] == '=') {
		regex_t re;
		if (!v[1] || regcomp(&re, v + 1, REG_EXTENDED | REG_NOSUB))
			return bad("invalid -F regular expression:", v + 1);
		regfree(&re);
	} else if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "all")) {
		return bad("invalid -F value (on, off, all, or =REGEX):", v);
	}
	o->follow = v;
	return 0;
}

static int p_archive(struct collect_opts *o, char c, const char *v)
{
	if (!strcmp(v, "off"))
		o->archive = SONDE_ARCHIVE_IDS;
	else if (!strcmp(v, "on"))
		o->archive = SONDE_ARCHIVE_ON;
	else if (!strcmp(v, "src"))
		o->archive = SONDE_ARCHIVE_SRC;
	else
		return bad("invalid -a value (off, on or src):", v);
	return 0;
}

static int p_mpi(struct collect_opts *o, char c, const char *v)
{
	if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "OPENMPI") && strcmp(v, "MPICH"))
		return bad("invalid -M value (OPENMPI, MPICH, on or off):", v);
	o->mpi = v;
	return 0;
}

static int p_java(struct collect_opts *o, char c, const char *v)
{
	if (strcmp(v, "on") && strcmp(v, "off"))
		return bad("invalid -j value (on or off):", v);
	o->java = v;
	return 0;
}

static int p_kernel(struct collect_opts *o, char c, const char *v)
{
	if (strcmp(v, "on") && strcmp(v, "off"))
		return bad("invalid -k value (on or off):", v);
	o->kernel = !strcmp(v, "on");
	return 0;
}

static int p_attach(struct collect_opts *o, char c, const char *v)
{
	char *end;
	errno = 0;
	long pid = strtol(v, &end, 10);
	if (errno || *end || end == v || pid <= 0 || pid > 4194304)
		return bad("invalid -P value (a process id):", v);
	o->attach_pid = pid;
	return 0;
}

static int p_jvm_opts(struct collect_opts *o, char c, const char *v)
{
	o->jvm_opts = v;
	return 0;
}

static int p_dry(struct collect_opts *o, char c, const char *v)
{
	o->dry_run = 1;
	return 0;
}

/* ---- the rows' environment ---------------------------------------------------------- */

typedef void put_fn(void *arg, const char *name, const char *value);

static void putf(put_fn *put, void *arg, const char *name, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void putf(put_fn *put, void *arg, const char *name, const char *fmt, ...)
{
	char buf[PATH_MAX * 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	put(arg, name, buf);
}

static void e_clock(const struct collect_opts *o, put_fn *put, void *arg)
{
	putf(put, arg, SONDE_ENV_CLOCK_NS, "%llu", (unsigned long long)o->interval_ns);
}

/* A rank's process records in its founder's, as a sub-experiment
 * (e_founder gives its lineage). */
static void e_expdir(const struct collect_opts *o, put_fn *put, void *arg)
{
	put(arg, SONDE_ENV_EXPDIR, o->mpi_ranked ? o->mpi_founder : o->expabs);
}

static void e_window(const struct collect_opts *o, put_fn *put, void *arg)
{
	putf(put, arg, SONDE_ENV_DURATION_S, "%ld", o->duration_s);
	putf(put, arg, SONDE_ENV_START_NS, "%llu", (unsigned long long)llround(o->start_s * 1e9));
	putf(put, arg, SONDE_ENV_STOP_NS, "%llu", (unsigned long long)llround(o->stop_s * 1e9));
}

static void e_period(const struct collect_opts *o, put_fn *put, void *arg)
{
	putf(put, arg, SONDE_ENV_SAMPLE_NS, "%llu", (unsigned long long)o->period_ns);
}

static void e_sample_sig(const struct collect_opts *o, put_fn *put, void *arg)
{
	putf(put, arg, SONDE_ENV_SAMPLE_SIG, "%d", o->sample_sig);
}

static void e_pause(const struct collect_opts *o, put_fn *put, void *arg)
{
	putf(put, arg, SONDE_ENV_PAUSE_SIG, "%d", o->pause_sig);
	putf(put, arg, SONDE_ENV_PAUSE_START, "%d", o->pause_sig && !o->pause_recording);
}

static void e_limit(const struct collect_opts *o, put_fn *put, void *arg)
{
	putf(put, arg, SONDE_ENV_LIMIT_MB, "%ld", o->limit_mb);
}

static void e_depth(const struct collect_opts *o, put_fn *put, void *arg)
{
	putf(put, arg, SONDE_ENV_DEPTH, "%d", o->depth);
}

static void e_offcpu(const struct collect_opts *o, put_fn *put, void *arg)
{
	putf(put, arg, SONDE_ENV_OFFCPU_NS, "%llu", (unsigned long long)o->offcpu_ns);
}

static void e_kernel(const struct collect_opts *o, put_fn *put, void *arg)
{
	put(arg, SONDE_ENV_KSTACKS, o->kernel ? "1" : NULL);
}

static void e_counters(const struct collect_opts *o, put_fn *put, void *arg)
{
	put(arg, sonde_kind_desc(SONDE_KIND_COUNTERS)->env, o->counters_env[0] ? o->counters_env : NULL);
}

/* A traced kind's variable is set when it is traced, and left as it is
 * otherwise (its library, which reads it, is not preloaded then). */
static void e_trace(const struct collect_opts *o, put_fn *put, void *arg)
{
	for (int k = 1; k <= SONDE_KIND_MAX; k++)
		if (sonde_kind_traced(k) && o->trace[k])
			put(arg, sonde_kind_desc(k)->env, o->trace[k]);
}

static void e_follow(const struct collect_opts *o, put_fn *put, void *arg)
{
	put(arg, SONDE_ENV_FOLLOW, o->follow);
}

/* The libraries first, then whatever the target was to preload. */
static void e_preload(const struct collect_opts *o, put_fn *put, void *arg)
{
	const char *old = getenv("LD_PRELOAD");
	if (old && *old)
		putf(put, arg, "LD_PRELOAD", "%s:%s", o->preload, old);
	else
		put(arg, "LD_PRELOAD", o->preload);
}

static void e_shared(const struct collect_opts *o, put_fn *put, void *arg)
{
	put(arg, SONDE_ENV_SHARED, o->shared[0] ? o->shared : NULL);
}

/* The process that calls this is the founder: no lineage of its own; or
 * an MPI rank's process: M_r<rank>. */
static void e_founder(const struct collect_opts *o, put_fn *put, void *arg)
{
	putf(put, arg, SONDE_ENV_TARGET_PID, "%ld", (long)getpid());
	put(arg, SONDE_ENV_TARGET_PPID, NULL);
	put(arg, SONDE_ENV_LINEAGE, o->mpi_ranked ? o->mpi_lineage : NULL);
}

/* The -M form's launcher hands the founder to every rank's sonde collect
 * (forwarded to other nodes by collect_mpi_launch's -x or -genv); a
 * rank's own process needs it no more. */
static void e_mpi(const struct collect_opts *o, put_fn *put, void *arg)
{
	if (o->launch_fwd_at)
		put(arg, SONDE_ENV_MPI_FOUNDER, o->expabs);
	else if (o->mpi_ranked)
		put(arg, SONDE_ENV_MPI_FOUNDER, NULL);
}

/* The agent's options for a JVM that is not started as `java` (a
 * launcher, a script): ahead of the target's own. */
static void e_java(const struct collect_opts *o, put_fn *put, void *arg)
{
	if (!o->java_opts[0] || o->java_argv)
		return;
	const char *old = getenv("JAVA_TOOL_OPTIONS");
	if (old && *old)
		putf(put, arg, "JAVA_TOOL_OPTIONS", "%s %s", o->java_opts, old);
	else
		put(arg, "JAVA_TOOL_OPTIONS", o->java_opts);
}

/* ---- what the dry run says ----------------------------------------------------------- */

static void d_experiment(FILE *f, const struct collect_opts *o)
{
	fprintf(f, "experiment: %s\n", o->exp);
}

static void d_program(FILE *f, const struct collect_opts *o)
{
	fprintf(f, "program:    %s\n", o->prog);
	fprintf(f, "command:   ");
	for (char **a = o->argv; *a; a++)
		fprintf(f, " %s", *a);
	fprintf(f, "\n");
}

static void d_clock(FILE *f, const struct collect_opts *o)
{
	fprintf(f, "clock profiling: %s", o->interval_ns ? "" : "off");
	if (o->interval_ns)
		fprintf(f, "%.3f ms", o->interval_ms);
	fprintf(f, "\n");
}

static void d_offcpu(FILE *f, const struct collect_opts *o)
{
	if (o->offcpu_ns)
		fprintf(f, "off-CPU time: %.3f ms\n", (double)o->offcpu_ns / 1e6);
	else
		fprintf(f, "off-CPU time: off\n");
}

static void d_kernel(FILE *f, const struct collect_opts *o)
{
	fprintf(f, "kernel call stacks: %s\n", o->kernel ? "on" : "off");
}

static void d_depth(FILE *f, const struct collect_opts *o)
{
	fprintf(f, "depth limit: %d\n", o->depth);
}

static void d_window(FILE *f, const struct collect_opts *o)
{
	if (o->stop_s)
		fprintf(f, "collection window: %.3f s to %.3f s\n", o->start_s, o->stop_s);
}

static void d_period(FILE *f, const struct collect_opts *o)
{
	if (o->sample_s)
		fprintf(f, "periodic sampling: %.3f s\n", o->sample_s);
	else
		fprintf(f, "periodic sampling: off\n");
}

static const char *abbrev(int sig)
{
	return sigabbrev_np(sig) ? sigabbrev_np(sig) : "?";
}

static void d_sample_sig(FILE *f, const struct collect_opts *o)
{
	if (o->sample_sig)
		fprintf(f, "sample signal: %d (SIG%s)\n", o->sample_sig, abbrev(o->sample_sig));
}

static void d_pause(FILE *f, const struct collect_opts *o)
{
	if (o->pause_sig)
		fprintf(f, "pause/resume signal: %d (SIG%s), starting %s\n", o->pause_sig, abbrev(o->pause_sig),
			o->pause_recording ? "recording" : "paused");
}

static void d_limit(FILE *f, const struct collect_opts *o)
{
	if (o->limit_mb)
		fprintf(f, "size limit: %ld MB\n", o->limit_mb);
}

static void d_counters(FILE *f, const struct collect_opts *o)
{
	fprintf(f, "%s: ", sonde_kind_desc(SONDE_KIND_COUNTERS)->title);
	if (!o->ncounters)
		fprintf(f, "off");
	for (int i = 0; i < o->ncounters; i++)
		fprintf(f, "%s%s,%llu", i ? "," : "", o->counters[i].name, (unsigned long long)o->counters[i].interval);
	fprintf(f, "\n");
}

static void d_trace(FILE *f, const struct collect_opts *o)
{
	for (int k = 1; k <= SONDE_KIND_MAX; k++)
		if (sonde_kind_traced(k))
			fprintf(f, "%s: %s\n", sonde_kind_desc(k)->title, o->trace[k] ? o->trace[k] : "off");
}

static void d_archive(FILE *f, const struct collect_opts *o)
{
	fprintf(f, "archive: %s\n",
		o->archive == SONDE_ARCHIVE_SRC ? "src" : o->archive ? "on" : "off (build ids only)");
}

static void d_mpi(FILE *f, const struct collect_opts *o)
{
	if (o->launch_fwd_at)
		fprintf(f, "MPI: %s's launcher; each rank under sonde collect in M_r<rank>.er\n",
			collect_mpi_name(o->mpi_launcher));
	else if (o->mpi_ranked)
		fprintf(f, "MPI: rank %ld of %ld (%s, job %s) in %s\n", o->mpi_rank, o->mpi_size,
			collect_mpi_name(o->mpi_launcher), o->mpi_job, o->exp);
}

static void d_java(FILE *f, const struct collect_opts *o)
{
	if (o->java_opts[0])
		fprintf(f, "Java: on, %s: %s\n", o->java_argv ? "on the JVM's command line" : "in JAVA_TOOL_OPTIONS",
			o->java_opts);
	else if (o->java)
		fprintf(f, "Java: off\n");
}

static void d_preload(FILE *f, const struct collect_opts *o)
{
	fprintf(f, "preload: %s\n", o->preload);
}

/* ---- the table ---------------------------------------------------------------------- */

/* Every traced kind of sonde/kinds.h: its row there gives the option, its
 * values and help, the variable and the dry run's title. */
#define TRACED_KINDS (-1)

struct setting {
	char opt;	  /* the option's letter; 0: no option (collect's own) */
	int kind;	  /* the data kind whose row in sonde/kinds.h gives what is
			   * not here: the letter, variable, title and help (before
			   * this row's); TRACED_KINDS: each traced kind; 0: none */
	const char *arg;  /* the option's value in --help; NULL: it takes none */
	const char *help; /* --help after the value (lines indented to column 21) */
	int (*parse)(struct collect_opts *o, char opt, const char *v); /* 0, or 2 after saying why */
	void (*env)(const struct collect_opts *o, put_fn *put, void *arg); /* the variables it sets */
	/* What the dry run says, and where: the dry run goes by this
	 * number (its lines are in the order they always had), 0: nothing. */
	int dry;
	void (*show)(FILE *f, const struct collect_opts *o);
};

#define IND "\n                     " /* a continuation line of --help */

/* In --help's order. */
static const struct setting settings[] = {
	{ 'p', 0, "on|hi|lo|N|off",
	  "clock profiling: on = 10 ms, hi = 1 ms, lo = 100 ms," IND
	  "N = N milliseconds (fractions allowed); default on",
	  p_clock, e_clock, 3, d_clock },
	{ 'o', 0, "NAME",
	  "experiment name or path (DIR/NAME.er; must end in .er);" IND "default test.N.er, the next free N",
	  p_name, e_expdir, 1, d_experiment },
	{ 'd', 0, "DIR", "directory to create the experiment in", p_dir, NULL, 0, NULL },
	{ 'C', 0, "COMMENT", "comment recorded in the experiment's notes (repeatable)", p_comment, NULL, 0, NULL },
	{ 't', 0, "END|START-END",
	  "collect data only until END seconds, or from START to" IND
	  "END (fractions allowed, s or m suffix for seconds or" IND
	  "minutes: 1m, 30s-2m; recording is paused until START)",
	  p_window, e_window, 6, d_window },
	{ 'O', 0, "FILE", "append collect's own messages to FILE (not the target's)", p_outfile, NULL, 0, NULL },
	{ 'S', 0, "on|off|N",
	  "periodic sample points every N seconds of wall-clock time" IND "(fractions allowed; on = 1 s, the default)",
	  p_period, e_period, 7, d_period },
	{ 'l', 0, "SIG", "record a sample point when SIG is delivered", p_sample_sig, e_sample_sig, 8, d_sample_sig },
	{ 'y', 0, "SIG[,r]",
	  "SIG switches recording between paused and resumed; starts" IND "paused, or recording with ,r",
	  p_pause, e_pause, 9, d_pause },
	{ 'L', 0, "MB", "limit the experiment's data to MB megabytes", p_limit, e_limit, 10, d_limit },
	{ 'D', 0, "DEPTH", "call stack depth limit, 1 to 2040 (default 1024)", p_depth, e_depth, 5, d_depth },
	{ 'w', 0, "on|off|N",
	  "off-CPU time: every N milliseconds (on: the -p interval)" IND
	  "a thread of the collector's looks at every thread and" IND
	  "records where each blocked one waits (User Lock, Other" IND "Wait), never interrupting it; default off",
	  p_offcpu, e_offcpu, 4, d_offcpu },
	{ 0, SONDE_KIND_COUNTERS, "COUNTER[,N],...", "(without -p, clock profiling is off)", p_counters, e_counters,
	  11, d_counters },
	{ 0, TRACED_KINDS, NULL, NULL, p_trace, e_trace, 12, d_trace },
	{ 'F', 0, "on|off|all|=RE",
	  "follow descendant processes (fork, vfork, clone, exec," IND
	  "posix_spawn, system, popen) into sub-experiments;" IND
	  "=RE: only those whose lineage (_f1_x1) or program" IND
	  "name matches the extended regular expression RE;" IND "default on",
	  p_follow, e_follow, 0, NULL },
	{ 'a', 0, "off|on|src",
	  "archive at the end: off records build ids only (the" IND
	  "default), on also copies the load objects, src also" IND "their source files (see sonde archive)",
	  p_archive, NULL, 13, d_archive },
	{ 'M', 0, "IMPL|on|off",
	  "an MPI job: -M on mpirun [ARGS] -- PROGRAM [ARGS] records" IND
	  "the launcher here and each rank in M_r<rank>.er inside" IND
	  "(IMPL: OPENMPI or MPICH, the launcher's; on: either);" IND
	  "under mpirun, sonde collect records its rank there by" IND
	  "itself; off: not as a rank (see sonde-collect.md)",
	  p_mpi, e_mpi, 15, d_mpi },
	{ 'j', 0, "on|off",
	  "Java: the JVM loads sonde's agent, and samples of Java" IND
	  "threads carry their Java methods; default on when the" IND
	  "program is a JVM (java, or linked with libjli or libjvm)",
	  p_java, e_java, 16, d_java },
	{ 'J', 0, "\"OPTIONS\"", "options for the JVM, with -j on (blank-separated)", p_jvm_opts, NULL, 0, NULL },
	{ 'k', 0, "on|off",
	  "kernel call stacks: each clock sample taken in the kernel" IND
	  "carries the kernel's stack above the user stack that" IND
	  "entered it (needs perf_event_paranoid <= 1 or" IND "CAP_PERFMON); default off",
	  p_kernel, e_kernel, 17, d_kernel },
	{ 'P', 0, "PID",
	  "attach: record the running process PID (its threads," IND
	  "and those it makes) for -t SECONDS or until interrupted," IND
	  "from outside it; clock profiling (-p, -k) only", p_attach, NULL, 0, NULL },
	{ 'n', 0, NULL, "dry run: show what would be done", p_dry, NULL, 0, NULL },
	/* what collect decides itself */
	{ 0, 0, NULL, NULL, NULL, NULL, 2, d_program },
	{ 0, 0, NULL, NULL, NULL, e_preload, 14, d_preload },
	{ 0, 0, NULL, NULL, NULL, e_shared, 0, NULL },
	{ 0, 0, NULL, NULL, NULL, e_founder, 0, NULL },
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

/* The row of option letter c (for TRACED_KINDS, of the traced kind whose
 * letter it is), NULL for none. */
static const struct setting *setting_of(char c)
{
	for (size_t i = 0; i < NSETTINGS; i++) {
		const struct setting *s = &settings[i];
		if ((s->opt && s->opt == c) || (s->kind > 0 && sonde_kind_desc(s->kind)->opt == c) ||
		    (s->kind == TRACED_KINDS && kind_of_option(c)))
			return s;
	}
	return NULL;
}

void collect_opts_init(struct collect_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->interval_ms = 10;
	o->sample_s = 1;
	o->depth = SONDE_DEFAULT_DEPTH;
	o->follow = "on";
	o->saved_out = o->saved_err = -1;
	o->mpi_rank = o->mpi_size = -1;
}

int collect_option(struct collect_opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	const struct setting *s = strlen(a) == 2 ? setting_of(a[1]) : NULL;

	if (!s)
		return bad("unknown option", a);
	if (!s->arg && s->kind != TRACED_KINDS)
		return s->parse(o, a[1], NULL);
	if (*i + 1 >= argc)
		return bad("missing value for option", a);
	return s->parse(o, a[1], argv[++*i]);
}

void collect_usage_options(FILE *f)
{
	for (size_t i = 0; i < NSETTINGS; i++) {
		const struct setting *s = &settings[i];

		if (s->kind == TRACED_KINDS) {
			for (int k = 1; k <= SONDE_KIND_MAX; k++) {
				const struct sonde_kind_desc *d = sonde_kind_desc(k);

				if (sonde_kind_traced(k))
					fprintf(f, "  -%c %-15s %s\n", d->opt, d->values, d->help);
			}
		} else if (s->kind) {
			const struct sonde_kind_desc *d = sonde_kind_desc(s->kind);

			fprintf(f, "  -%c %-15s %s%s%s\n", d->opt, s->arg, d->help, s->help ? IND : "",
				s->help ? s->help : "");
		} else if (s->opt) {
			fprintf(f, "  -%c %-15s %s\n", s->opt, s->arg ? s->arg : "", s->help);
		}
	}
}

void collect_dry_run(FILE *f, const struct collect_opts *o)
{
	for (int place = 1; place <= (int)NSETTINGS; place++)
		for (size_t i = 0; i < NSETTINGS; i++)
			if (settings[i].dry == place)
				settings[i].show(f, o);
}

void collect_env(const struct collect_opts *o, put_fn *put, void *arg)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		if (settings[i].env)
			settings[i].env(o, put, arg);
}
