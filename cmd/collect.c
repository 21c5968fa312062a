/*
 * sonde collect: run a program with the collector and record an experiment.
 *
 * The experiment directory is created before the target starts (mkdir is
 * the atomic "never overwrite" check); the target is started by fork+exec
 * with LD_PRELOAD naming the collector, and exec failures come back through
 * a close-on-exec pipe so that nothing half-made is left behind.  After the
 * target ends, collect appends its exit status (or the signal that killed
 * it) to log.xml, closes the XML documents and trims unused blocks.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sonde/format.h>

#include "base/counters.h"
#include "symbols/archive.h"
#include "commands.h"
#include "symbols/dynfunc.h"

struct opts {
	double interval_ms; /* 0 = off */
	const char *name;
	const char *dir;
	const char *comments[16];
	int ncomments;
	long duration_s;
	double start_s, stop_s; /* -t START-END (or END); 0: none */
	double sample_s;	/* -S period; 0 = off */
	int sample_sig;		/* -l */
	int pause_sig, pause_recording; /* -y SIG[,r] */
	long limit_mb;
	int depth;
	int dry_run;
	const char *trace[SONDE_KIND_MAX + 1]; /* per traced kind (sonde/kinds.h): its setting, NULL off */
	double offcpu_ms; /* -w: off-CPU sampling interval; 0 off, -1 on (the -p interval) */
	int p_given;	/* -p was given (else -h turns clock profiling off, as gprofng's does) */
	const char *hspec; /* -h's value */
	struct sonde_hwc counters[SONDE_MAX_COUNTERS];
	int ncounters;
	const char *follow; /* -F: on, off, all, =REGEX */
	const char *outfile; /* -O: collect's own output appended there */
	int archive;	   /* -a: SONDE_ARCHIVE_IDS (off, the default), _ON, _SRC */
	char **argv;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde collect [options] PROGRAM [ARGS]\n"
		"\n"
		"  -p on|hi|lo|N|off  clock profiling: on = 10 ms, hi = 1 ms, lo = 100 ms,\n"
		"                     N = N milliseconds (fractions allowed); default on\n"
		"  -o NAME            experiment name or path (DIR/NAME.er; must end in .er);\n"
		"                     default test.N.er, the next free N\n"
		"  -d DIR             directory to create the experiment in\n"
		"  -C COMMENT         comment recorded in the experiment's notes (repeatable)\n"
		"  -t END|START-END   collect data only until END seconds, or from START to\n"
		"                     END (fractions allowed, s or m suffix for seconds or\n"
		"                     minutes: 1m, 30s-2m; recording is paused until START)\n"
		"  -O FILE            append collect's own messages to FILE (not the target's)\n"
		"  -S on|off|N        periodic sample points every N seconds of wall-clock time\n"
		"                     (fractions allowed; on = 1 s, the default)\n"
		"  -l SIG             record a sample point when SIG is delivered\n"
		"  -y SIG[,r]         SIG switches recording between paused and resumed; starts\n"
		"                     paused, or recording with ,r\n"
		"  -L MB              limit the experiment's data to MB megabytes\n"
		"  -D DEPTH           call stack depth limit, 1 to 2040 (default 1024)\n"
		"  -w on|off|N        off-CPU time: every N milliseconds (on: the -p interval)\n"
		"                     a thread of the collector's looks at every thread and\n"
		"                     records where each blocked one waits (User Lock, Other\n"
		"                     Wait), never interrupting it; default off\n");
	{
		const struct sonde_kind_desc *h = sonde_kind_desc(SONDE_KIND_COUNTERS);
		fprintf(f, "  -%c COUNTER[,N],... %s\n                     (without -p, clock profiling is off)\n",
			h->opt, h->help);
	}
	for (int k = 1; k <= SONDE_KIND_MAX; k++)
		if (sonde_kind_traced(k))
			fprintf(f, "  -%c %-15s %s\n", sonde_kind_desc(k)->opt, sonde_kind_desc(k)->values,
				sonde_kind_desc(k)->help);
	fprintf(f,
		"  -F on|off|all|=RE  follow descendant processes (fork, vfork, clone, exec,\n"
		"                     posix_spawn, system, popen) into sub-experiments;\n"
		"                     =RE: only those whose lineage (_f1_x1) or program\n"
		"                     name matches the extended regular expression RE;\n"
		"                     default on\n"
		"  -a off|on|src      archive at the end: off records build ids only (the\n"
		"                     default), on also copies the load objects, src also\n"
		"                     their source files (see sonde archive)\n"
		"  -n                 dry run: show what would be done\n"
		"\n"
		"The program's exit status is returned (128+N when killed by signal N).\n");
}

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

/* -O FILE: collect's own stdout and stderr go to FILE, appended; the
 * target gets the descriptors collect was given (restored in the child
 * before exec). */
static int g_saved_out = -1, g_saved_err = -1;

static int redirect_output(const char *file)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "sonde collect: cannot open -O file '%s': %s\n", file, strerror(errno));
		return -1;
	}
	fflush(NULL);
	g_saved_out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	g_saved_err = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
		int e = errno;
		if (g_saved_err >= 0)
			dup2(g_saved_err, 2);
		fprintf(stderr, "sonde collect: cannot write to -O file '%s': %s\n", file, strerror(e));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	o->interval_ms = 10;
	o->sample_s = 1;
	o->depth = SONDE_DEFAULT_DEPTH;
	o->follow = "on";
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "-n")) {
			o->dry_run = 1;
			continue;
		}
		if (!strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		}
		const struct sonde_kind_desc *kind = strlen(a) == 2 ? kind_of_option(a[1]) : NULL;
		if (strlen(a) != 2 || (!strchr("poCdtLDFaSlyhwO", a[1]) && !kind))
			return bad("unknown option", a);
		if (i + 1 >= argc)
			return bad("missing value for option", a);
		const char *v = argv[++i];
		long n;
		if (kind) {
			char why[128];
			if (parse_trace(kind, v, &o->trace[kind->id], why, sizeof why) < 0)
				return bad(why, v);
			continue;
		}
		switch (a[1]) {
		case 'p':
			if (parse_interval(v, &o->interval_ms) < 0)
				return bad("invalid -p value (on, hi, lo, off, or milliseconds from 0.01):", v);
			o->p_given = 1;
			break;
		case 'h': {
			char why[256];
			int nc = sonde_hwc_parse(v, o->counters, SONDE_MAX_COUNTERS, why, sizeof why);
			if (nc < 0) {
				fprintf(stderr, "sonde collect: %s\n", why);
				return 2;
			}
			o->ncounters = nc;
			o->hspec = v;
			break;
		}
		case 'w':
			if (!strcmp(v, "on"))
				o->offcpu_ms = -1;
			else if (parse_interval(v, &o->offcpu_ms) < 0)
				return bad("invalid -w value (on, off, or milliseconds from 0.1):", v);
			else if (o->offcpu_ms && o->offcpu_ms < 0.1)
				return bad("invalid -w value (on, off, or milliseconds from 0.1):", v);
			break;
		case 'o': o->name = v; break;
		case 'd': o->dir = v; break;
		case 'C':
			if (o->ncomments == 16)
				return bad("too many -C comments at", v);
			o->comments[o->ncomments++] = v;
			break;
		case 't':
			if (parse_window(v, &o->start_s, &o->stop_s) < 0)
				return bad("invalid -t value (END or START-END in seconds, s or m after a "
					   "number for seconds or minutes, END after START):", v);
			/* a whole number of seconds from the start: the collector's own limit too */
			o->duration_s = o->start_s == 0 && o->stop_s == floor(o->stop_s) ? (long)o->stop_s : 0;
			break;
		case 'O':
			if (!*v)
				return bad("invalid -O value (a file name):", v);
			o->outfile = v;
			/* at once: the messages of the options after it go there too */
			if (redirect_output(v) < 0)
				return 2;
			break;
		case 'S': {
			char *end;
			double sv;
			if (!strcmp(v, "on"))
				o->sample_s = 1;
			else if (!strcmp(v, "off"))
				o->sample_s = 0;
			else if (errno = 0, sv = strtod(v, &end),
				 errno || end == v || *end || !isfinite(sv) || sv < 0.001 || sv > 86400)
				return bad("invalid -S value (on, off, or seconds from 0.001):", v);
			else
				o->sample_s = sv;
			break;
		}
		case 'l':
			if ((o->sample_sig = parse_signal(v)) < 0)
				return bad("invalid -l signal (a name like USR1 or a number; not KILL, STOP, "
					   "TRAP, SEGV, BUS, FPE, ILL or sonde's RTMAX-3):", v);
			break;
		case 'y': {
			char sig[64];
			const char *comma = strchr(v, ',');
			size_t len = comma ? (size_t)(comma - v) : strlen(v);
			if (len >= sizeof sig || (comma && strcmp(comma, ",r")))
				return bad("invalid -y value (SIG or SIG,r):", v);
			memcpy(sig, v, len);
			sig[len] = 0;
			if ((o->pause_sig = parse_signal(sig)) < 0)
				return bad("invalid -y signal (a name like USR1 or a number; not KILL, STOP, "
					   "TRAP, SEGV, BUS, FPE, ILL or sonde's RTMAX-3):", v);
			o->pause_recording = comma != NULL;
			break;
		}
		case 'L':
			if (parse_long(v, 1, 100000000, &n) < 0)
				return bad("invalid -L value (megabytes)", v);
			o->limit_mb = n;
			break;
		case 'F':
			if (v[0] == '=') {
				regex_t re;
				if (!v[1] || regcomp(&re, v + 1, REG_EXTENDED | REG_NOSUB))
					return bad("invalid -F regular expression:", v + 1);
				regfree(&re);
			} else if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "all")) {
				return bad("invalid -F value (on, off, all, or =REGEX):", v);
			}
			o->follow = v;
			break;
		case 'a':
			if (!strcmp(v, "off"))
				o->archive = SONDE_ARCHIVE_IDS;
			else if (!strcmp(v, "on"))
				o->archive = SONDE_ARCHIVE_ON;
			else if (!strcmp(v, "src"))
				o->archive = SONDE_ARCHIVE_SRC;
			else
				return bad("invalid -a value (off, on or src):", v);
			break;
		case 'D':
			if (parse_long(v, 1, SONDE_MAX_DEPTH_LIMIT, &n) < 0)
				return bad("invalid -D value (1 to 2040)", v);
			o->depth = (int)n;
			break;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "sonde collect: no program to run\n");
		return 2;
	}
	if (o->ncounters && !o->p_given && !o->offcpu_ms)
		o->interval_ms = 0;
	if (o->offcpu_ms && !o->interval_ms) {
		/* its samples go with the clock profile's, whose file and
		 * stacks it needs */
		fprintf(stderr, "sonde collect: -w needs clock profiling (-p is off)\n");
		return 2;
	}
	if (o->sample_sig && o->sample_sig == o->pause_sig) {
		fprintf(stderr, "sonde collect: -l and -y need different signals\n");
		return 2;
	}
	o->argv = argv + i;
	if (o->name) {
		/* A path is accepted, as gprofng and perf accept one: its last
		 * component is the experiment, the rest the directory it goes in
		 * (relative to -d when one is given).  What stays refused is
		 * what would land somewhere unexpected: a last component that is
		 * not NAME.er, and a directory that is itself an experiment (the
		 * reader would take the new one for a descendant of it). */
		const char *base = strrchr(o->name, '/');
		base = base ? base + 1 : o->name;
		size_t n = strlen(base);
		if (n < 4 || strcmp(base + n - 3, ".er"))
			return bad("experiment name must end in .er (NAME.er or DIR/NAME.er):", o->name);
		if (o->dir && o->name[0] == '/')
			return bad("-o names an absolute path; -d would be ignored:", o->name);
		for (const char *c = o->name; c < base;) {
			const char *e = strchr(c, '/');
			size_t len = (size_t)(e - c);
			if (len > 3 && !strncmp(e - 3, ".er", 3))
				return bad("experiment would be created inside another experiment:", o->name);
			c = e + 1;
		}
	}
	return 0;
}

/* A signal that would end `sonde collect` (kill, a closed terminal, a
 * service manager stopping it) would leave the target running and the
 * experiment unfinished: it is passed on to the target, as perf does, and
 * collect finishes the experiment when the target ends.  The terminal's
 * own signals (^C, ^\, a hangup) already reach the target, which shares
 * our process group: those (sent by the kernel, si_code SI_KERNEL) are
 * not sent a second time; a signal sent by a process (si_code <= 0) is. */
static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
static volatile pid_t g_target;

static void forward_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int saved = errno;
	if (g_target > 0 && si && si->si_code <= 0)
		kill(g_target, sig);
	errno = saved;
}

/* Find PROGRAM as execvp would. */
static int resolve_program(const char *prog, char *out, size_t cap)
{
	if (strchr(prog, '/')) {
		snprintf(out, cap, "%s", prog);
		return access(out, F_OK) == 0 ? 0 : -1;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);
		snprintf(out, cap, "%.*s/%s", (int)n, n ? path : ".", prog);
		if (access(out, X_OK) == 0)
			return 0;
		path += n + (c ? 1 : 0);
	}
	return -1;
}

/* The collector can only load into a dynamically linked, non-setuid
 * program (the loader ignores LD_PRELOAD otherwise).  Returns NULL when
 * fine, else what is wrong. */
static const char *check_program(const char *path, char *interp, size_t icap)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return "cannot find program";
	if (!S_ISREG(st.st_mode))
		return "not a regular file:";
	if (access(path, X_OK) < 0)
		return "program is not executable:";
	if (st.st_mode & (S_ISUID | S_ISGID))
		return "cannot profile a setuid/setgid program (the loader ignores LD_PRELOAD):";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return "cannot read program";
	unsigned char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf);
	const char *err = NULL;
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		/* A script: the interpreter is the process the collector runs
		 * in; check it the same way. */
		size_t k = 2, m = 0;
		while (k < (size_t)n && (buf[k] == ' ' || buf[k] == '\t'))
			k++;
		while (k < (size_t)n && !isspace(buf[k]) && m + 1 < icap)
			interp[m++] = (char)buf[k++];
		interp[m] = 0;
		close(fd);
		return m ? NULL : "bad #! line in";
	}
	if (n < (ssize_t)sizeof(Elf64_Ehdr) || memcmp(buf, ELFMAG, SELFMAG)) {
		close(fd);
		return "not an ELF executable or script:";
	}
	Elf64_Ehdr eh;
	memcpy(&eh, buf, sizeof eh);
	if (buf[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		close(fd);
		return "not an x86-64 program (the collector is x86-64 only):";
	}
	int dynamic = 0;
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != sizeof ph)
			break;
		if (ph.p_type == PT_INTERP)
			dynamic = 1;
	}
	close(fd);
	if (!dynamic)
		err = "cannot profile a statically linked program (the collector is loaded with LD_PRELOAD):";
	return err;
}

static int find_collector(char *out, size_t cap)
{
	char tmp[PATH_MAX + 64];
	const char *env = getenv("SONDE_COLLECTOR");
	if (env) {
		snprintf(out, cap, "%s", env);
		return access(out, R_OK);
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(tmp, sizeof tmp, "%s/../lib/sonde/libsonde_collector.so", self);
	char real[PATH_MAX];
	if (!realpath(tmp, real))
		return -1;
	snprintf(out, cap, "%s", real);
	return 0;
}

/* mkdir the experiment: NAME, or test.N.er with N one more than the
 * largest existing.  Returns 0 and the path, or an exit status. */
static int make_experiment(const struct opts *o, char *path, size_t cap, int dry)
{
	const char *dir = o->dir ? o->dir : ".";
	char dirbuf[PATH_MAX];
	const char *name = o->name;
	const char *slash = name ? strrchr(name, '/') : NULL;
	if (slash) {
		int len = (int)(slash - name);
		if (name[0] == '/')
			snprintf(dirbuf, sizeof dirbuf, "%.*s", len ? len : 1, name);
		else
			snprintf(dirbuf, sizeof dirbuf, "%s/%.*s", dir, len, name);
		dir = dirbuf;
		name = slash + 1;
	}
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return bad("no such directory", dir);
	if (access(dir, W_OK | X_OK) < 0)
		return bad("cannot write in directory", dir);
	if (name) {
		if ((size_t)snprintf(path, cap, "%s/%s", dir, name) >= cap)
			return bad("experiment path too long", o->name);
		if (lstat(path, &st) == 0)
			return bad("experiment already exists, not overwriting", path);
		if (!dry && mkdir(path, 0755) < 0)
			return bad(errno == EEXIST ? "experiment already exists, not overwriting" : "cannot create",
				   path);
		return 0;
	}
	long next = 1;
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			long v;
			char tail[8];
			if (sscanf(e->d_name, "test.%ld%7s", &v, tail) == 2 && !strcmp(tail, ".er") && v >= next)
				next = v + 1;
		}
		closedir(d);
	}
	for (int tries = 0; tries < 1000; tries++, next++) {
		if ((size_t)snprintf(path, cap, "%s/test.%ld.er", dir, next) >= cap)
			return bad("directory path too long", dir);
		if (dry)
			return 0;
		if (mkdir(path, 0755) == 0)
			return 0;
		if (errno != EEXIST)
			return bad("cannot create", path);
	}
	return bad("cannot find a free experiment name in", dir);
}

static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char sub[PATH_MAX + 256];
			snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
			struct stat st;
			if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
				remove_tree(sub);
			else
				unlink(sub);
		}
		closedir(d);
	}
	rmdir(path);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void append(const char *exp, const char *file, const char *text)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", exp, file);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, text, strlen(text)) < 0)
		fprintf(stderr, "sonde collect: cannot write %s: %s\n", path, strerror(errno));
	close(fd);
}

/* Cut the zero blocks at the end of a data file (claimed-ahead chunks). */
static void trim_data_file(const char *exp, const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", exp, name);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size > (off_t)SONDE_FILE_HEADER_SIZE) {
		off_t nblocks = (st.st_size - SONDE_FILE_HEADER_SIZE) / SONDE_BLOCK_SIZE;
		off_t keep = 0;
		for (off_t b = nblocks - 1; b >= 0; b--) {
			uint32_t magic = 0;
			if (pread(fd, &magic, sizeof magic, SONDE_FILE_HEADER_SIZE + b * SONDE_BLOCK_SIZE) ==
				    sizeof magic &&
			    magic != 0) {
				keep = b + 1;
				break;
			}
		}
		if (ftruncate(fd, SONDE_FILE_HEADER_SIZE + keep * SONDE_BLOCK_SIZE) < 0)
			fprintf(stderr, "sonde collect: cannot trim %s\n", path);
	}
	close(fd);
}

static void setenvf(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void setenvf(const char *name, const char *fmt, ...)
{
	char buf[PATH_MAX * 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	setenv(name, buf, 1);
}

int cmd_collect(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		collect_counters_list(stdout);
		return 0;
	}
	struct opts o;
	memset(&o, 0, sizeof o);
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc;
	/* Before anything is made or started: a counter this machine cannot
	 * count is an error, not a run without its data. */
	char counters_env[1024] = "";
	if (o.ncounters) {
		if ((rc = collect_counters_check(o.counters, o.ncounters)))
			return rc;
		if (collect_counters_env(o.counters, o.ncounters, counters_env, sizeof counters_env) < 0)
			return bad("-h value too long:", o.hspec);
	}

	char prog[PATH_MAX], interp[PATH_MAX] = "";
	if (resolve_program(o.argv[0], prog, sizeof prog) < 0) {
		fprintf(stderr, "sonde collect: cannot find program '%s'\n", o.argv[0]);
		return 2;
	}
	const char *why = check_program(prog, interp, sizeof interp);
	if (!why && interp[0]) {
		char ibuf[PATH_MAX];
		why = check_program(interp, ibuf, sizeof ibuf);
		if (why) {
			fprintf(stderr, "sonde collect: script interpreter of '%s': %s '%s'\n", prog, why, interp);
			return 2;
		}
	}
	if (why)
		return bad(why, prog);

	char collector[PATH_MAX];
	if (find_collector(collector, sizeof collector) < 0) {
		fprintf(stderr, "sonde collect: cannot find the collector library 'libsonde_collector.so' "
				"(set SONDE_COLLECTOR)\n");
		return 2;
	}
	/* Tracing libraries sit next to the collector and come first in
	 * LD_PRELOAD: their interposers then run before the collector's own
	 * (close, ...), which they reach through RTLD_NEXT. */
	char preload[4 * PATH_MAX + 8];
	{
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", collector);
		char *sl = strrchr(dir, '/');
		if (sl)
			*sl = 0;
		size_t used = 0;
		preload[0] = 0;
		/* Last kind first (io, heap, sync), the order they always had. */
		for (int k = SONDE_KIND_MAX; k >= 1; k--) {
			if (!sonde_kind_traced(k) || !o.trace[k])
				continue;
			char lib[PATH_MAX + 32];
			snprintf(lib, sizeof lib, "%s/%s", dir, sonde_kind_desc(k)->lib);
			if (access(lib, R_OK) < 0) {
				fprintf(stderr, "sonde collect: cannot find the tracing library '%s'\n", lib);
				return 2;
			}
			used += (size_t)snprintf(preload + used, sizeof preload - used, "%s:", lib);
		}
		snprintf(preload + used, sizeof preload - used, "%s", collector);
	}
	char exp[PATH_MAX];
	rc = make_experiment(&o, exp, sizeof exp, o.dry_run);
	if (rc)
		return rc;
	char expabs[PATH_MAX];
	uint64_t interval_ns = (uint64_t)llround(o.interval_ms * 1e6);
	uint64_t offcpu_ns = o.offcpu_ms < 0 ? interval_ns : (uint64_t)llround(o.offcpu_ms * 1e6);

	if (o.dry_run) {
		printf("experiment: %s\n", exp);
		printf("program:    %s\n", prog);
		printf("command:   ");
		for (char **a = o.argv; *a; a++)
			printf(" %s", *a);
		printf("\nclock profiling: %s", interval_ns ? "" : "off");
		if (interval_ns)
			printf("%.3f ms", o.interval_ms);
		printf("\noff-CPU time: ");
		if (offcpu_ns)
			printf("%.3f ms\n", (double)offcpu_ns / 1e6);
		else
			printf("off\n");
		printf("depth limit: %d\n", o.depth);
		if (o.stop_s)
			printf("collection window: %.3f s to %.3f s\n", o.start_s, o.stop_s);
		if (o.sample_s)
			printf("periodic sampling: %.3f s\n", o.sample_s);
		else
			printf("periodic sampling: off\n");
		if (o.sample_sig)
			printf("sample signal: %d (SIG%s)\n", o.sample_sig, sigabbrev_np(o.sample_sig) ? sigabbrev_np(o.sample_sig) : "?");
		if (o.pause_sig)
			printf("pause/resume signal: %d (SIG%s), starting %s\n", o.pause_sig,
			       sigabbrev_np(o.pause_sig) ? sigabbrev_np(o.pause_sig) : "?",
			       o.pause_recording ? "recording" : "paused");
		if (o.limit_mb)
			printf("size limit: %ld MB\n", o.limit_mb);
		printf("%s: ", sonde_kind_desc(SONDE_KIND_COUNTERS)->title);
		if (!o.ncounters)
			printf("off");
		for (int i = 0; i < o.ncounters; i++)
			printf("%s%s,%llu", i ? "," : "", o.counters[i].name, (unsigned long long)o.counters[i].interval);
		printf("\n");
		for (int k = 1; k <= SONDE_KIND_MAX; k++)
			if (sonde_kind_traced(k))
				printf("%s: %s\n", sonde_kind_desc(k)->title, o.trace[k] ? o.trace[k] : "off");
		printf("archive: %s\n", o.archive == SONDE_ARCHIVE_SRC ? "src" : o.archive ? "on" : "off (build ids only)");
		printf("preload: %s\n", preload);
		return 0;
	}
	if (!realpath(exp, expabs)) {
		fprintf(stderr, "sonde collect: cannot resolve '%s'\n", exp);
		rmdir(exp);
		return 1;
	}
	if (o.ncomments) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof path, "%s/notes", expabs);
		FILE *f = fopen(path, "w");
		for (int i = 0; f && i < o.ncomments; i++)
			fprintf(f, "%s\n", o.comments[i]);
		if (!f || fclose(f)) {
			fprintf(stderr, "sonde collect: cannot write '%s'\n", path);
			remove_tree(expabs);
			return 1;
		}
	}

	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		perror("sonde collect: pipe");
		remove_tree(expabs);
		return 1;
	}
	uint64_t period_ns = (uint64_t)llround(o.sample_s * 1e9);
	char shared[128] = "";
	int tick = 0; /* a traced kind reads the shared tick */
	for (int k = 1; k <= SONDE_KIND_MAX; k++)
		if (sonde_kind_traced(k) && o.trace[k] && (sonde_kind_desc(k)->flags & SONDE_KINDF_TICK))
			tick = 1;
	if (collect_clock_start(expabs, period_ns, tick, shared, sizeof shared) < 0)
		fprintf(stderr, "sonde collect: warning: cannot share a clock with the target (%s); %s\n",
			strerror(errno), period_ns ? "no periodic sample points" : "heap events read the clock");
	fflush(NULL);
	time_t started = time(NULL); /* perf maps older than this are not the target's */
	/* Signals that would end us are passed on to the target (see
	 * forward_signal); blocked across the fork so that none arrives
	 * before the target's pid is known. */
	sigset_t fwd, oldmask;
	sigemptyset(&fwd);
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaddset(&fwd, forwarded[i]);
	sigprocmask(SIG_BLOCK, &fwd, &oldmask);
	pid_t pid = fork();
	if (pid < 0) {
		perror("sonde collect: fork");
		collect_clock_stop();
		remove_tree(expabs);
		return 1;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		close(pfd[0]);
		if (g_saved_out >= 0)
			dup2(g_saved_out, 1);
		if (g_saved_err >= 0)
			dup2(g_saved_err, 2);
		const char *old = getenv("LD_PRELOAD");
		if (old && *old)
			setenvf("LD_PRELOAD", "%s:%s", preload, old);
		else
			setenv("LD_PRELOAD", preload, 1);
		for (int k = 1; k <= SONDE_KIND_MAX; k++)
			if (sonde_kind_traced(k) && o.trace[k])
				setenv(sonde_kind_desc(k)->env, o.trace[k], 1);
		setenv("SONDE_EXPDIR", expabs, 1);
		if (shared[0])
			setenv("SONDE_SHARED", shared, 1);
		else
			unsetenv("SONDE_SHARED");
		setenvf("SONDE_TARGET_PID", "%ld", (long)getpid());
		unsetenv("SONDE_TARGET_PPID");
		unsetenv("SONDE_LINEAGE");
		setenv("SONDE_FOLLOW", o.follow, 1);
		setenvf("SONDE_CLOCK_NS", "%llu", (unsigned long long)interval_ns);
		setenvf("SONDE_OFFCPU_NS", "%llu", (unsigned long long)offcpu_ns);
		if (counters_env[0])
			setenv("SONDE_COUNTERS", counters_env, 1);
		else
			unsetenv("SONDE_COUNTERS");
		setenvf("SONDE_DEPTH", "%d", o.depth);
		setenvf("SONDE_LIMIT_MB", "%ld", o.limit_mb);
		setenvf("SONDE_DURATION_S", "%ld", o.duration_s);
		setenvf("SONDE_SAMPLE_NS", "%llu", (unsigned long long)period_ns);
		setenvf("SONDE_SAMPLE_SIG", "%d", o.sample_sig);
		setenvf("SONDE_PAUSE_SIG", "%d", o.pause_sig);
		setenvf("SONDE_PAUSE_START", "%d", o.pause_sig && !o.pause_recording);
		setenvf("SONDE_START_NS", "%llu", (unsigned long long)llround(o.start_s * 1e9));
		setenvf("SONDE_STOP_NS", "%llu", (unsigned long long)llround(o.stop_s * 1e9));
		execv(prog, o.argv);
		int e = errno;
		if (write(pfd[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	g_target = pid;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
		struct sigaction old;
		/* one ignored by whoever started us (nohup) stays ignored, as
		 * it is in the target */
		if (sigaction(forwarded[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(forwarded[i], &sa, NULL);
	}
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	close(pfd[1]);
	if (collect_clock_run(pid) < 0)
		fprintf(stderr, "sonde collect: warning: cannot start the clock thread; %s\n",
			period_ns ? "no periodic sample points" : "heap events read the clock");
	int child_errno = 0;
	ssize_t got = read(pfd[0], &child_errno, sizeof child_errno);
	close(pfd[0]);
	if (got == sizeof child_errno) {
		waitpid(pid, NULL, 0);
		collect_clock_stop();
		fprintf(stderr, "sonde collect: cannot execute '%s': %s\n", prog, strerror(child_errno));
		remove_tree(expabs);
		return 2;
	}

	int status = 0;
	collect_clock_wait(pid, &status);
	g_target = 0; /* reaped: its pid may be anyone's now */
	collect_clock_stop();
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/log.xml", expabs);
	char ev[256];
	if (access(path, F_OK) != 0) {
		/* The collector never started (e.g. the program ignored
		 * LD_PRELOAD): still leave a readable experiment. */
		FILE *f = fopen(path, "w");
		if (f) {
			fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<experiment format=\"%d\" "
				   "collector=\"sonde %s\">\n<event kind=\"error\" time_ns=\"%llu\" text=\"the "
				   "collector did not start in the target; no data was recorded\"/>\n",
				SONDE_FORMAT_VERSION, SONDE_VERSION, (unsigned long long)mono_ns());
			fclose(f);
		}
		fprintf(stderr, "sonde collect: warning: the collector did not start in '%s'; no data recorded\n",
			prog);
	}
	int exit_code;
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		snprintf(ev, sizeof ev, "<event kind=\"signal\" time_ns=\"%llu\" signal=\"%d\" name=\"SIG%s\"/>\n",
			 (unsigned long long)mono_ns(), sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
		exit_code = 128 + sig;
	} else {
		exit_code = WEXITSTATUS(status);
		snprintf(ev, sizeof ev, "<event kind=\"exit\" time_ns=\"%llu\" status=\"%d\"/>\n",
			 (unsigned long long)mono_ns(), exit_code);
	}
	char jerr[PATH_MAX + 128];
	if (sonde_jitmap_copy(pid, started, expabs, jerr, sizeof jerr) < 0)
		fprintf(stderr, "sonde collect: warning: %s\n", jerr);
	append(expabs, "log.xml", ev);
	append(expabs, "log.xml", "</experiment>\n");
	append(expabs, "map.xml", "</map>\n");
	for (int k = 1; k <= SONDE_KIND_MAX; k++)
		trim_data_file(expabs, sonde_kind_desc(k)->file);
	/* Last, once map.xml is complete: record the build ids (and copy the
	 * objects with -a on) while the files are still the ones that ran.
	 * No map.xml: the collector never started, nothing to archive. */
	snprintf(path, sizeof path, "%s/map.xml", expabs);
	if (access(path, F_OK) == 0) {
		char aerr[512];
		if (sonde_archive_run(expabs, o.archive, stderr, NULL, aerr, sizeof aerr) < 0)
			fprintf(stderr, "sonde collect: warning: %s\n", aerr);
	}
	return exit_code;
}
