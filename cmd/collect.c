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
#include <sonde/settings.h>

#include "base/counters.h"
#include "symbols/archive.h"
#include "collect_settings.h"
#include "commands.h"
#include "symbols/dynfunc.h"
#include "reader/exptree.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: sonde collect [options] PROGRAM [ARGS]\n"
		   "\n");
	collect_usage_options(f);
	fprintf(f, "\n"
		   "The program's exit status is returned (128+N when killed by signal N).\n");
}

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "sonde collect: %s '%s'\n", msg, arg);
	return 2;
}

static int parse_opts(int argc, char **argv, struct collect_opts *o)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			exit(0);
		}
		int at = i;
		int rc = collect_option(o, argc, argv, &i);
		if (rc)
			return rc;
		if (o->nopts < (int)(sizeof o->opt_at / sizeof o->opt_at[0])) {
			o->opt_at[o->nopts] = at;
			o->opt_end[o->nopts++] = i + 1;
		} else if (o->mpi) {
			fprintf(stderr, "sonde collect: too many options for -M to hand to the ranks\n");
			return 2;
		}
		if (!strcmp(argv[at], "-m"))
			o->mpitrace_given = 1;
	}
	if (o->attach_pid) {
		if (i < argc) {
			fprintf(stderr, "sonde collect: -P %ld records a running process: no program to run ('%s')\n",
				o->attach_pid, argv[i]);
			return 2;
		}
		return 0;
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

int collect_resolve(const char *prog, char *out, size_t cap)
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

int find_collector(char *out, size_t cap)
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
int collect_make_experiment(const struct collect_opts *o, char *path, size_t cap, int dry)
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

void remove_tree(const char *path)
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

void collect_append(const char *exp, const char *file, const char *text)
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

/* Cut the zero blocks at the end of a data file (claimed-ahead chunks).
 * Its last block may be short (one written whole by the kernel ends at
 * its packets): it counts, and is made whole. */
static void trim_data_file(const char *exp, const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", exp, name);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size > (off_t)SONDE_FILE_HEADER_SIZE) {
		off_t nblocks = (st.st_size - SONDE_FILE_HEADER_SIZE + SONDE_BLOCK_SIZE - 1) / SONDE_BLOCK_SIZE;
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

/* collect_env's put for the target: sets the variable, or unsets it. */
static void set_env(void *arg, const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

/* -m is on by default with -M and in a rank, when the MPI tracing
 * library is there (said when it is not). */
static void mpi_trace_default(struct collect_opts *o)
{
	char collector[PATH_MAX], lib[PATH_MAX + 64];

	for (int k = 1; k <= SONDE_KIND_MAX; k++) {
		if (!sonde_kind_traced(k) || strcmp(sonde_kind_desc(k)->name, "mpi"))
			continue;
		if (find_collector(collector, sizeof collector) < 0)
			return;
		char *sl = strrchr(collector, '/');
		if (sl)
			*sl = 0;
		snprintf(lib, sizeof lib, "%s/%s", collector, sonde_kind_desc(k)->lib);
		if (access(lib, R_OK) == 0)
			o->trace[k] = "on";
		else if (o->mpi_rank <= 0)
			fprintf(stderr, "sonde collect: warning: no MPI tracing: cannot find '%s'\n", lib);
	}
}

int cmd_collect(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		collect_counters_list(stdout);
		return 0;
	}
	struct collect_opts o;
	collect_opts_init(&o);
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc;
	/* Before anything is made or started: a counter this machine cannot
	 * count is an error, not a run without its data. */
	if (o.ncounters) {
		if ((rc = collect_counters_check(o.counters, o.ncounters)))
			return rc;
		if (collect_counters_env(o.counters, o.ncounters, o.counters_env, sizeof o.counters_env) < 0)
			return bad("-h value too long:", o.hspec);
	}

	if ((rc = collect_kernel_check(&o)))
		return rc;
	if (o.attach_pid) {
		/* a JVM gets its agent (-j on, the default for one) */
		int done = 0;
		rc = collect_java_attach(&o, argc, argv, &done);
		return done ? rc : collect_attach(&o, argc, argv);
	}

	/* MPI: the -M form runs the launcher (the program is each rank's);
	 * under a launcher, this collect records a rank (-M off: not). */
	if (o.mpi && strcmp(o.mpi, "off")) {
		if ((rc = collect_mpi_launch(&o, argv)))
			return rc;
	} else if (!o.mpi && collect_mpi_rank_env(&o)) {
		o.mpi_ranked = 1;
	} else if (!o.mpi && getenv(SONDE_ENV_MPI_FOUNDER) && *getenv(SONDE_ENV_MPI_FOUNDER)) {
		fprintf(stderr, "sonde collect: started by an MPI launcher for sonde collect -M, but no rank in the "
				"environment (a launcher sonde does not know?)\n");
		return 2;
	}
	if ((o.launch_fwd_at || o.mpi_ranked) && !o.mpitrace_given)
		mpi_trace_default(&o);

	char *prog = o.prog, interp[PATH_MAX] = "";
	if (collect_resolve(o.argv[0], prog, sizeof o.prog) < 0) {
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
	if (!o.mpi_ranked && !o.launch_fwd_at && !(o.mpi && !strcmp(o.mpi, "off"))) {
		const char *built = collect_mpi_of_program(prog);

		if (built && *built)
			fprintf(stderr, "sonde collect: note: '%s' (%s) started without an MPI launcher is a "
					"singleton, rank 0 of 1, recorded as one process (a job: sonde collect -M on "
					"mpirun ARGS -- PROGRAM)\n",
				prog, collect_mpi_name(built));
	}
	/* said once for the job: by the founder of the -M form, else rank 0 */
	if (o.mpi_ranked && o.mpi_rank <= 0 && !getenv(SONDE_ENV_MPI_FOUNDER)) {
		const char *built = collect_mpi_of_program(prog);
		const char *launcher = o.mpi_launcher;

		if (built && !*built)
			fprintf(stderr, "sonde collect: warning: '%s' is linked with neither Open MPI nor MPICH; its "
					"processes are recorded as ranks by the launcher's numbering, with no MPI data\n",
				prog);
		else if (built && (!strcmp(launcher, "OPENMPI") || !strcmp(launcher, "MPICH")) &&
			 strcmp(built, launcher))
			fprintf(stderr, "sonde collect: warning: '%s' is built with %s but was started by %s's "
					"launcher: each process will be a singleton, rank 0 of 1\n",
				prog, collect_mpi_name(built), collect_mpi_name(launcher));
	}

	char collector[PATH_MAX];
	if (find_collector(collector, sizeof collector) < 0) {
		fprintf(stderr, "sonde collect: cannot find the collector library 'libsonde_collector.so' "
				"(set SONDE_COLLECTOR)\n");
		return 2;
	}
	/* Tracing libraries sit next to the collector and come first in
	 * LD_PRELOAD: their interposers then run before the collector's own
	 * (close, ...), which they reach through RTLD_NEXT. */
	char *preload = o.preload;
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
				/* libsonde_mpi.so is built only where both MPIs'
				 * headers are (Makefile) */
				fprintf(stderr, "sonde collect: cannot find the tracing library '%s'%s\n", lib,
					k == SONDE_KIND_MPI ? " (sonde was built without the Open MPI and MPICH headers: "
							      "install libopenmpi-dev and libmpich-dev and rebuild)"
							    : "");
				return 2;
			}
			used += (size_t)snprintf(preload + used, sizeof o.preload - used, "%s:", lib);
		}
		snprintf(preload + used, sizeof o.preload - used, "%s", collector);
	}
	if ((rc = collect_java_setup(&o, collector)))
		return rc;
	char *exp = o.exp, *expabs = o.expabs;
	if (o.mpi_ranked && o.dry_run)
		snprintf(exp, sizeof o.exp, "(the job's founder)/M_r%ld.er", o.mpi_rank);
	else if (o.mpi_ranked)
		rc = collect_mpi_rank_setup(&o);
	else
		rc = collect_make_experiment(&o, exp, sizeof o.exp, o.dry_run);
	if (rc)
		return rc;
	o.interval_ns = (uint64_t)llround(o.interval_ms * 1e6);
	o.offcpu_ns = o.offcpu_ms < 0 ? o.interval_ns : (uint64_t)llround(o.offcpu_ms * 1e6);
	o.period_ns = (uint64_t)llround(o.sample_s * 1e9);
	if (o.dry_run) {
		collect_dry_run(stdout, &o);
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

	if (o.kernel && collect_kernel_syms(expabs)) {
		remove_tree(expabs);
		return 1;
	}

	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		perror("sonde collect: pipe");
		remove_tree(expabs);
		return 1;
	}
	uint64_t period_ns = o.period_ns;
	int tick = 0; /* a traced kind reads the shared tick */
	for (int k = 1; k <= SONDE_KIND_MAX; k++)
		if (sonde_kind_traced(k) && o.trace[k] && (sonde_kind_desc(k)->flags & SONDE_KINDF_TICK))
			tick = 1;
	if (collect_clock_start(expabs, period_ns, tick, o.shared, sizeof o.shared) < 0)
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
		if (o.saved_out >= 0)
			dup2(o.saved_out, 1);
		if (o.saved_err >= 0)
			dup2(o.saved_err, 2);
		collect_env(&o, set_env, NULL);
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
	if (o.mpi_ranked) {
		char *line = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&line, &len);

		if (m) {
			collect_mpi_rank_record(&o, m);
			fclose(m);
			collect_append(expabs, "log.xml", line);
			free(line);
		}
	}
	collect_close(expabs, ev, o.archive);
	return exit_code;
}

/* Whether process pid still maps a file of experiment directory dir (its
 * collector may still write there).  Unknown (a /proc file that cannot
 * be read for another reason than the process being gone): yes. */
static bool maps_experiment(long pid, const char *dir)
{
	char path[64], real[PATH_MAX];
	if (!realpath(dir, real))
		return true;
	size_t rl = strlen(real);
	snprintf(path, sizeof path, "/proc/%ld/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno != ENOENT && errno != ESRCH;
	char line[PATH_MAX + 256];
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		const char *p = strchr(line, '/');
		found = p && !strncmp(p, real, rl) && p[rl] == '/';
	}
	fclose(f);
	return found;
}

/* Whether the file ends with text (and a newline). */
static bool file_ends_with(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX + 64], tail[64];
	size_t n = strlen(text);
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || n >= sizeof tail)
		return fd < 0 ? false : (close(fd), false);
	struct stat st;
	bool yes = fstat(fd, &st) == 0 && st.st_size >= (off_t)n &&
		   pread(fd, tail, n, st.st_size - (off_t)n) == (ssize_t)n && !memcmp(tail, text, n);
	close(fd);
	return yes;
}

/* A descendant's experiment is written by the collector in its process,
 * which writes its end (and its exit status) but cannot close it: the
 * process is still running then.  Once the process is gone (no process
 * maps its files), its data files are trimmed (a short process's three
 * files are 768 KiB of claimed-ahead zeros otherwise) and, when its
 * collector recorded its end, its log.xml and map.xml are closed, as the
 * founder's are.  One still running (a daemon the founder left behind)
 * or killed (no end: its log says so by being incomplete) stays as it
 * is.  Before the founder's archive, which reads their map.xml. */
static int close_descendant(void *arg, const char *path, const char *name, const struct sonde_subexp_kind *k)
{
	(void)arg, (void)name;
	if (strcmp(k->name, "descendant") || file_ends_with(path, "log.xml", "</experiment>\n"))
		return 0;
	char lp[PATH_MAX + 64];
	snprintf(lp, sizeof lp, "%s/log.xml", path);
	FILE *f = fopen(lp, "re");
	if (!f)
		return 0;
	long pid = 0;
	bool ended = false;
	char line[4096];
	while (fgets(line, sizeof line, f)) {
		const char *p;
		if (!pid && !strncmp(line, "<target ", 8) && (p = strstr(line, " pid=\"")))
			pid = strtol(p + 6, NULL, 10);
		if (!strncmp(line, "<event kind=\"end\" ", 18))
			ended = true;
	}
	fclose(f);
	if (pid <= 0 || maps_experiment(pid, path))
		return 0;
	for (int kd = 1; kd <= SONDE_KIND_MAX; kd++)
		trim_data_file(path, sonde_kind_desc(kd)->file);
	if (!ended)
		return 0;
	collect_append(path, "log.xml", "</experiment>\n");
	if (!file_ends_with(path, "map.xml", "</map>\n"))
		collect_append(path, "map.xml", "</map>\n");
	return 0;
}

/* The end of a recording the collector wrote: its data files trimmed,
 * the last event (ev) and the XML documents' ends appended, the objects
 * archived (-a). */
void collect_close(const char *expabs, const char *ev, int archive)
{
	/* trimmed before log.xml is closed: a reader maps the data files of
	 * a closed experiment, and copies those of one still written (a
	 * mapping would fault past a trimmed end) */
	for (int k = 1; k <= SONDE_KIND_MAX; k++)
		trim_data_file(expabs, sonde_kind_desc(k)->file);
	sonde_subexp_scan(expabs, sonde_subexp_kinds, sonde_subexp_nkinds, close_descendant, NULL, NULL, NULL, 0);
	collect_append(expabs, "log.xml", ev);
	collect_append(expabs, "log.xml", "</experiment>\n");
	collect_append(expabs, "map.xml", "</map>\n");
	/* Last, once map.xml is complete: record the build ids (and copy the
	 * objects with -a on) while the files are still the ones that ran.
	 * No map.xml: the collector never started, nothing to archive. */
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/map.xml", expabs);
	if (access(path, F_OK) == 0) {
		char aerr[512];
		if (sonde_archive_run(expabs, archive, stderr, NULL, aerr, sizeof aerr) < 0)
			fprintf(stderr, "sonde collect: warning: %s\n", aerr);
	}
}
