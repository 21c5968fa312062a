/*
 * Following descendant processes (-F on|off|all|=REGEX).
 *
 * Every process of the followed tree runs this library (LD_PRELOAD is
 * inherited, and put back at exec when the program rewrote its
 * environment).  What it must know arrives in the environment:
 *   SONDE_EXPDIR       the founder experiment (all sub-experiments are
 *                      directories directly inside it);
 *   SONDE_LINEAGE      this process's lineage, "" for the founder, else
 *                      e.g. "_f2_x1": its experiment is EXPDIR/_f2_x1.er;
 *   SONDE_LINEAGE_FULL (-F =REGEX, past the first fold only) the lineage
 *                      unfolded, which the regex matches (child_lineage);
 *   SONDE_TARGET_PID   the pid the settings are meant for (the founder,
 *                      and the image an exec replaces: same pid), or
 *   SONDE_TARGET_PPID  the parent of the process meant (posix_spawn,
 *                      system and popen: the child's pid is not known
 *                      before it runs);
 *   SONDE_FOLLOW       the -F setting;
 *   SONDE_EXEC_CPU_NS  (an exec'd image only) the exec'ing thread's CPU
 *                      time that the old image recorded (clock.c).
 * A process that matches neither pid is some unrelated descendant that
 * inherited the environment through a path sonde did not see, and stays
 * inert.
 *
 * Names follow the reference: an underscore, f for fork (vfork, and the
 * fork half of posix_spawn, system and popen), x for exec, C for clone,
 * and the creator's running count of that kind.  vfork, posix_spawn,
 * system and popen give "_fN_x1": a fork whose child execs at once (a
 * vfork child records nothing before its exec).  Lineages longer than
 * LINEAGE_FOLD bytes are folded (child_lineage).
 *
 * With =REGEX a process whose lineage or program name does not match is
 * still tracked (its children are named and may match) but records
 * nothing and gets no directory.
 *
 * Every followed descendant is recorded or says why not: one
 * <event kind="unrecorded"> in the founder's log.xml (note_unrecorded).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sonde/settings.h>

#include "collector.h"
#include "real.h"

extern char **environ;

enum { F_OFF, F_ON, F_ALL, F_REGEX };

static int g_mode = F_OFF;
static int g_tracking;		/* this process is part of the followed tree */
static regex_t g_re;
static int g_re_ok;

/* A lineage by its two names (child_lineage): `dir`, the name of its
 * experiment, folded past LINEAGE_FOLD bytes, and `full`, which -F =REGEX
 * matches, folded only past LINEAGE_FULL_FOLD bytes.  A component has at
 * most 16 bytes ("_f2147483647_x1"). */
#define LINEAGE_FOLD 200
#define LINEAGE_FULL_FOLD 2000
struct lineage {
	char dir[LINEAGE_FOLD + 32];
	char full[LINEAGE_FULL_FOLD + 32];
};
static struct lineage g_lin;
static char g_founder[PATH_MAX];
static _Atomic int g_nfork, g_nexec, g_nclone;
static int g_child_fork_no;	/* set by the atfork prepare handler */
static pthread_mutex_t g_env_lock = PTHREAD_MUTEX_INITIALIZER;

/* The SONDE_* settings and sonde's LD_PRELOAD entries, as they were at
 * start-up: put back into every exec'd environment. */
#define MAX_KEEP 64
static char *g_keep[MAX_KEEP];
static int g_nkeep;
static char g_preload[4096];


#if !defined(__x86_64__)
REAL_DECL(fork);
#endif
REAL_DECL(execve);
REAL_DECL(execvpe);
REAL_DECL(fexecve);
REAL_DECL(posix_spawn);
REAL_DECL(posix_spawnp);
REAL_DECL(system);
REAL_DECL(popen);
REAL_DECL(clone);
REAL_DECL(waitpid);

static int is_sonde_lib(const char *path, size_t len)
{
	const char *base = path;
	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			base = path + i + 1;
	return len - (size_t)(base - path) > 9 && !strncmp(base, "libsonde_", 9);
}

static const char *progname(void)
{
	static char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	const char *s = strrchr(exe, '/');
	return s ? s + 1 : exe;
}

static int matches(const char *lineage, const char *prog)
{
	if (g_mode != F_REGEX)
		return 1;
	if (!g_re_ok)
		return 0;
	return regexec(&g_re, lineage, 0, NULL, 0) == 0 || (prog && regexec(&g_re, prog, 0, NULL, 0) == 0);
}

/* ---- descendants that are not recorded ---- */

#define REASON_REGEX "-F =REGEX matched neither its lineage nor its program"
#define REASON_PATH "its experiment's path is too long"
#define REASON_MEMORY "out of memory for its environment"

/* Says in the founder's log.xml that the descendant `lineage` (process
 * `pid`, running `command`; 0 and NULL when not known) is not recorded,
 * and why: one <event kind="unrecorded"> line.  Every process of the tree
 * reaches the founder's log by its path, one whose own experiment could
 * not be made too, so the founder's log counts them all (sonde print
 * -header).  Written by the process that knows why: the descendant
 * itself, or its creator when the descendant cannot run sonde (statically
 * linked, setuid).  One write() on a descriptor of its own, opened with
 * O_APPEND and closed at once: the lines of concurrent writers never mix.
 * Raw system calls (the I/O tracer sees none of it); errno is kept; only
 * the stack is written, so that a vfork child may call it.  When even the
 * founder's log cannot be opened, nothing is said. */
/* A descendant event's pid, reason and command, and the element's end: a
 * long command is cut, the line stays whole (b has 8 bytes to spare). */
static void descendant_attrs(struct xbuf *b, long pid, const char *reason, const char *command)
{
	if (pid > 0)
		xb_attr_u64(b, "pid", (uint64_t)pid);
	if (reason)
		xb_attr_str(b, "reason", reason);
	if (command) {
		size_t cap = b->cap;
		b->cap = cap - 8;
		xb_attr_str(b, "command", command);
		b->cap = cap;
		b->overflow = 0;
	}
	xb_str(b, "/>\n");
}

static void note_unrecorded(const char *lineage, long pid, const char *command, const char *reason)
{
	int saved = errno;
	char path[PATH_MAX + 16], mem[2048];
	if ((size_t)snprintf(path, sizeof path, "%s/log.xml", g_founder) < sizeof path) {
		struct xbuf b;
		xb_init(&b, mem, sizeof mem);
		xb_str(&b, "<event kind=\"unrecorded\"");
		xb_attr_u64(&b, "time_ns", now_ns());
		xb_attr_str(&b, "lineage", lineage);
		descendant_attrs(&b, pid, reason, command);
		int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0) {
			(void)syscall(SYS_write, fd, mem, b.len);
			syscall(SYS_close, fd);
		}
	}
	errno = saved;
}

int follow_identify(void)
{
	const char *pid = getenv(SONDE_ENV_TARGET_PID), *ppid = getenv(SONDE_ENV_TARGET_PPID);
	if (pid && *pid)
		return (pid_t)atol(pid) == getpid();
	if (ppid && *ppid)
		return (pid_t)atol(ppid) == getppid();
	return 0;
}

static void save_settings(void)
{
	for (char **e = environ; e && *e && g_nkeep < MAX_KEEP; e++) {
		if (strncmp(*e, "SONDE_", 6) || SONDE_ENV_IS(*e, SONDE_ENV_LINEAGE) ||
		    SONDE_ENV_IS(*e, SONDE_ENV_LINEAGE_FULL) ||
		    SONDE_ENV_IS(*e, SONDE_ENV_TARGET_PID) || SONDE_ENV_IS(*e, SONDE_ENV_TARGET_PPID) ||
		    SONDE_ENV_IS(*e, SONDE_ENV_EXEC_CPU_NS))
			continue;
		__sonde_quiet++;
		g_keep[g_nkeep] = strdup(*e);
		__sonde_quiet--;
		if (g_keep[g_nkeep])
			g_nkeep++;
	}
	const char *pl = getenv("LD_PRELOAD");
	size_t used = 0;
	while (pl && *pl) {
		size_t len = strcspn(pl, ": ");
		if (len && is_sonde_lib(pl, len) && used + len + 2 < sizeof g_preload) {
			if (used)
				g_preload[used++] = ':';
			memcpy(g_preload + used, pl, len);
			used += len;
		}
		pl += len;
		pl += strspn(pl, ": ");
	}
	g_preload[used] = 0;
}

/* Returns this process's experiment directory in `dir`, or 0 when it is
 * tracked but not recorded (=REGEX did not match; the founder's log says
 * so). */
int follow_init(const char *founder, char *dir, size_t cap)
{
	snprintf(g_founder, sizeof g_founder, "%s", founder);
	const char *lin = getenv(SONDE_ENV_LINEAGE), *full = getenv(SONDE_ENV_LINEAGE_FULL);
	snprintf(g_lin.dir, sizeof g_lin.dir, "%s", lin ? lin : "");
	snprintf(g_lin.full, sizeof g_lin.full, "%s", full && *full ? full : g_lin.dir);
	const char *f = getenv(SONDE_ENV_FOLLOW);
	if (!f || !*f || !strcmp(f, "on"))
		g_mode = F_ON;
	else if (!strcmp(f, "all"))
		g_mode = F_ALL;
	else if (f[0] == '=') {
		g_mode = F_REGEX;
		__sonde_quiet++;
		g_re_ok = regcomp(&g_re, f + 1, REG_EXTENDED | REG_NOSUB) == 0;
		__sonde_quiet--;
	} else
		g_mode = F_OFF;
	g_tracking = 1;
	save_settings();
	if (!g_lin.dir[0]) {
		snprintf(dir, cap, "%s", founder);
		return 1;
	}
	snprintf(dir, cap, "%s/%s.er", founder, g_lin.dir);
	if (matches(g_lin.full, progname()))
		return 1;
	note_unrecorded(g_lin.dir, getpid(), progname(), REASON_REGEX);
	return 0;
}

/* `parent` with the component `comp` appended, into out (`cap` bytes);
 * past `fold` bytes, the parent's part folded into "_h" and 16 hex digits
 * of its FNV-1a hash. */
static void fold_lineage(char *out, size_t cap, const char *parent, const char *comp, size_t fold)
{
	size_t lp = strlen(parent), lc = strlen(comp);
	if (lp + lc <= fold && lp + lc < cap) {
		memcpy(out, parent, lp);
		memcpy(out + lp, comp, lc + 1);
		return;
	}
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *c = (const unsigned char *)parent; *c; c++)
		h = (h ^ *c) * 0x100000001b3ull;
	snprintf(out, cap, "_h%016llx%s", (unsigned long long)h, comp);
}

/* A child's lineage: this process's with the component `comp` ("_x1",
 * "_f2", "_C1", "_f3_x1") appended.  A lineage names a directory, and a
 * name has at most NAME_MAX (255) bytes: 85 nested execs reached it and
 * the 86th image recorded nothing.  So past LINEAGE_FOLD bytes the
 * directory's name folds the parent's part: it stays short and distinct
 * from its siblings' and cousins' (their parents' names differ), at any
 * depth.  The descendant event in the parent's log.xml names the child by
 * that name, so that the chain can be followed.  -F =REGEX matches the
 * full lineage instead: a regex written for the lineage ("^(_x1)+$": an
 * exec chain) matched no folded name, and 34 images of a chain of 100
 * were silently not recorded.  The full lineage grows by a component per
 * generation (only =REGEX hands it on, in SONDE_LINEAGE_FULL); past
 * LINEAGE_FULL_FOLD bytes (666 execs) it is folded as well. */
static void child_lineage(struct lineage *out, const char *comp)
{
	fold_lineage(out->dir, sizeof out->dir, g_lin.dir, comp, LINEAGE_FOLD);
	fold_lineage(out->full, sizeof out->full, g_lin.full, comp, LINEAGE_FULL_FOLD);
}

const char *follow_lineage(void)
{
	return g_lin.dir;
}

/* ---- environments for exec'd children ---- */

/* envp with sonde's settings put back, into the caller's memory: v (room
 * for child_env_slots pointers), pre (child_env_prelen bytes), lin
 * (child_env_linlen bytes) and id (64 bytes).  `who` is
 * SONDE_ENV_TARGET_PID or SONDE_ENV_TARGET_PPID, `lineage` the child's. */
static size_t child_env_slots(char *const envp[])
{
	size_t n = 0;
	while (envp && envp[n])
		n++;
	/* LD_PRELOAD, the kept settings, the lineage (two names), the id,
	 * SONDE_EXEC_CPU_NS (add_exec_cpu), NULL */
	return n + (size_t)g_nkeep + 6;
}

static size_t child_env_linlen(const struct lineage *l)
{
	return strlen(l->dir) + strlen(l->full) + 48;
}

static size_t child_env_prelen(void)
{
	return strlen(g_preload) + 32 + 8192;
}

static void fill_child_env(char **v, char *pre, char *lin, char *id, char *const envp[],
			   const struct lineage *lineage, const char *who, pid_t pid)
{
	size_t k = 0;
	/* The program's own LD_PRELOAD entries follow sonde's. */
	size_t used = (size_t)sprintf(pre, "LD_PRELOAD=%s", g_preload);
	for (size_t i = 0; envp && envp[i]; i++) {
		if (!strncmp(envp[i], "LD_PRELOAD=", 11)) {
			const char *pl = envp[i] + 11;
			while (*pl) {
				size_t len = strcspn(pl, ": ");
				if (len && !is_sonde_lib(pl, len) && used + len + 2 < 8192 + strlen(g_preload)) {
					pre[used++] = ':';
					memcpy(pre + used, pl, len);
					used += len;
				}
				pl += len;
				pl += strspn(pl, ": ");
			}
			continue;
		}
		if (!strncmp(envp[i], "SONDE_", 6))
			continue;
		v[k++] = envp[i];
	}
	pre[used] = 0;
	v[k++] = pre;
	for (int i = 0; i < g_nkeep; i++)
		v[k++] = g_keep[i];
	int n = sprintf(lin, SONDE_ENV_LINEAGE "=%s", lineage->dir);
	v[k++] = lin;
	if (g_mode == F_REGEX && strcmp(lineage->full, lineage->dir)) {
		sprintf(lin + n + 1, SONDE_ENV_LINEAGE_FULL "=%s", lineage->full);
		v[k++] = lin + n + 1;
	}
	sprintf(id, "%s=%ld", who, (long)pid);
	v[k++] = id;
	v[k] = NULL;
}

/* The same in one block of malloc'd memory, the strings it adds after the
 * pointers (free_child_env frees it); NULL when out of memory. */
static char **child_env(char *const envp[], const struct lineage *lineage, const char *who, pid_t pid)
{
	size_t slots = child_env_slots(envp), prelen = child_env_prelen(), linlen = child_env_linlen(lineage);
	__sonde_quiet++;
	char **v = malloc(slots * sizeof *v + prelen + linlen + 64);
	__sonde_quiet--;
	if (!v)
		return NULL;
	char *pre = (char *)(v + slots), *lin = pre + prelen, *id = lin + linlen;
	fill_child_env(v, pre, lin, id, envp, lineage, who, pid);
	return v;
}

/* For an exec: the thread's CPU-clock time that this image recorded
 * (clock_thread_recorded_cpu), as SONDE_EXEC_CPU_NS after the entries of
 * child_env, which left room for it. */
static char g_exec_cpu[48];

static void add_exec_cpu(char **v)
{
	size_t n = 0;
	while (v[n])
		n++;
	snprintf(g_exec_cpu, sizeof g_exec_cpu, SONDE_ENV_EXEC_CPU_NS "=%llu",
		 (unsigned long long)clock_thread_recorded_cpu());
	v[n] = g_exec_cpu;
	v[n + 1] = NULL;
}

static void free_child_env(char **v)
{
	free(v);
}

/* Why an executable cannot be followed (the loader will not preload sonde
 * into it), or NULL. */
static const char *not_followable(const char *path)
{
	if (!path)
		return NULL;
	struct stat st;
	if (stat(path, &st) < 0)
		return NULL; /* exec will fail and say why */
	if (st.st_mode & (S_ISUID | S_ISGID))
		return "setuid or setgid";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	Elf64_Ehdr eh;
	const char *why = NULL;
	if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
		int interp = 0;
		for (int i = 0; i < eh.e_phnum && !interp; i++) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) != (ssize_t)sizeof ph)
				break;
			interp = ph.p_type == PT_INTERP;
		}
		if (!interp)
			why = "statically linked";
	} else if (pread(fd, &eh, 4, 0) == 4 && !memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		why = "not a 64-bit program";
	}
	close(fd);
	return why; /* scripts: their interpreter is followed */
}

/* PATH search as execvp does, for the followability check only. */
static const char *search_path(const char *file, char *buf, size_t cap)
{
	if (!file || strchr(file, '/'))
		return file;
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		snprintf(buf, cap, "%.*s%s%s", (int)len, path, len ? "/" : "", file);
		if (access(buf, X_OK) == 0)
			return buf;
		path += len;
		if (*path == ':')
			path++;
	}
	return file;
}

/* Descendants made once the target installed a seccomp filter are not
 * followed: the filter is theirs too, and starting an experiment (a
 * directory, files, counters, a signal handler) takes calls it may refuse
 * or kill for.  An exec'd image would not know of the filter at all. */
#define FILTER_WHY "made under a seccomp filter"

static int following(void)
{
	return g_tracking && g_mode != F_OFF && !sysgate_active();
}

/* The descendant event in this process's log.xml; one that sonde cannot
 * follow (`why`) is also an unrecorded one in the founder's. */
static void log_descendant(const char *variant, const char *lineage, int follow, const char *why,
			   const char *what, long pid)
{
	if (!follow && why)
		note_unrecorded(lineage, pid, what, why);
	char mem[2048];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<event kind=\"descendant\"");
	xb_attr_u64(&b, "time_ns", now_ns());
	xb_attr_str(&b, "variant", variant);
	xb_attr_str(&b, "lineage", lineage);
	xb_attr_u64(&b, "follow", (uint64_t)follow);
	descendant_attrs(&b, pid, why, what);
	log_line(mem, b.len);
}

static void command_of(char *out, size_t cap, const char *path, char *const argv[])
{
	size_t used = (size_t)snprintf(out, cap, "%s", path ? path : "?");
	for (int i = 1; argv && argv[i] && used + 2 < cap; i++)
		used += (size_t)snprintf(out + used, cap - used, " %s", argv[i]);
}

/* ---- exec ---- */

enum exec_how { X_PATH, X_SEARCH, X_FD };

static int real_exec(enum exec_how how, const char *file, int fd, char *const argv[], char *const envp[])
{
	if (how == X_PATH)
		return REAL(execve)(file, argv, envp);
	if (how == X_SEARCH)
		return REAL(execvpe)(file, argv, envp);
	return REAL(fexecve)(fd, argv, envp);
}

/* An exec in a vfork child (see vfork below), which runs on its parent's
 * memory until the exec succeeds: this thread's stack and TLS, every
 * global of sonde's.  Only the stack is written here: no counter, no
 * malloc, no experiment of the child's own.  The exec'd image starts one,
 * _fN_x1 (N given by the parent before the vfork), as a posix_spawn
 * child's does.  A failed exec leaves nothing changed but errno, which
 * the parent sees, as vfork's callers expect. */
static int vfork_child_exec(enum exec_how how, const char *file, int fd, char *const argv[], char *const envp[])
{
	int no = __sonde_vforked;
	char buf[PATH_MAX], cmd[1024], comp[32];
	struct lineage lineage;
	lineage.dir[0] = lineage.full[0] = 0;
	const char *why = NULL;
	int follow = no > 0;
	if (follow) {
		if (how != X_FD)
			why = not_followable(how == X_SEARCH ? search_path(file, buf, sizeof buf) : file);
		snprintf(comp, sizeof comp, "_f%d_x1", no);
		child_lineage(&lineage, comp);
		command_of(cmd, sizeof cmd, how == X_FD ? "(fd)" : file, argv);
		/* log_line is one write() on the log's descriptor, which the
		 * child holds as a copy: no state of the parent's changes */
		log_descendant("vfork", lineage.dir, !why, why, cmd, (long)getpid());
		follow = !why;
	}
	size_t slots = follow ? child_env_slots(envp) : 1, prelen = follow ? child_env_prelen() : 1;
	char *v[slots], pre[prelen], lin[child_env_linlen(&lineage)], id[64];
	if (follow)
		fill_child_env(v, pre, lin, id, envp, &lineage, SONDE_ENV_TARGET_PID, getpid());
	return real_exec(how, file, fd, argv, follow ? v : envp);
}

static int do_exec(enum exec_how how, const char *file, int fd, char *const argv[], char *const envp[])
{
	RESOLVE(execve);
	RESOLVE(execvpe);
	RESOLVE(fexecve);
	if (__sonde_vforked)
		return vfork_child_exec(how, file, fd, argv, envp);
	char buf[PATH_MAX], cmd[1024];
	int follow = following();
	const char *why = g_tracking && g_mode != F_OFF && !follow ? FILTER_WHY : NULL;
	if (follow && how != X_FD)
		why = not_followable(how == X_SEARCH ? search_path(file, buf, sizeof buf) : file);
	char **env = NULL;
	struct lineage lineage;
	int n = 0, recording = 0;
	if (g_tracking) {
		n = atomic_fetch_add(&g_nexec, 1) + 1;
		char comp[24];
		snprintf(comp, sizeof comp, "_x%d", n);
		child_lineage(&lineage, comp);
		command_of(cmd, sizeof cmd, how == X_FD ? "(fd)" : file, argv);
		log_descendant("exec", lineage.dir, follow && !why, why, cmd, 0);
		if (follow && !why && !(env = child_env(envp, &lineage, SONDE_ENV_TARGET_PID, getpid())))
			note_unrecorded(lineage.dir, getpid(), cmd, REASON_MEMORY);
		/* The image is about to be replaced: close its experiment,
		 * stopping nothing in case the exec fails. */
		recording = collector_exec_prepare();
		if (env)
			add_exec_cpu(env);
	}
	int rc = real_exec(how, file, fd, argv, env ? env : envp);
	int e = errno;
	if (g_tracking) {
		/* No descendant: its number goes to the next exec (unless
		 * another thread took one meanwhile). */
		atomic_compare_exchange_strong(&g_nexec, &n, n - 1);
		if (recording)
			collector_exec_failed(e, cmd);
	}
	free_child_env(env);
	errno = e;
	return rc;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_exec(X_PATH, path, -1, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	return do_exec(X_PATH, path, -1, argv, environ);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	return do_exec(X_SEARCH, file, -1, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_exec(X_SEARCH, file, -1, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return do_exec(X_FD, NULL, fd, argv, envp);
}

/* The execl family: gather the arguments into an array on the stack. */
#define COLLECT_ARGS(arg0, last_named, v, extra)                   \
	va_list ap;                                                 \
	size_t n = 1;                                               \
	va_start(ap, last_named);                                   \
	while (va_arg(ap, char *))                                  \
		n++;                                                \
	va_end(ap);                                                 \
	char *v[n + 1];                                             \
	v[0] = (char *)(arg0);                                      \
	va_start(ap, last_named);                                   \
	for (size_t i_ = 1; i_ <= n; i_++)                          \
		v[i_] = va_arg(ap, char *);                         \
	extra;                                                      \
	va_end(ap)

EXPORT int execl(const char *path, const char *arg, ...)
{
	COLLECT_ARGS(arg, arg, v, (void)0);
	return do_exec(X_PATH, path, -1, v, environ);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	COLLECT_ARGS(arg, arg, v, (void)0);
	return do_exec(X_SEARCH, file, -1, v, environ);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	char *const *envp;
	COLLECT_ARGS(arg, arg, v, envp = va_arg(ap, char *const *));
	return do_exec(X_PATH, path, -1, v, envp);
}

/* ---- fork, vfork, clone ---- */

void follow_fork_prepare(void)
{
	if (!g_tracking)
		return;
	g_child_fork_no = atomic_fetch_add(&g_nfork, 1) + 1;
	struct lineage lineage;
	char comp[24];
	snprintf(comp, sizeof comp, "_f%d", g_child_fork_no);
	child_lineage(&lineage, comp);
	log_descendant("fork", lineage.dir, following(), g_mode != F_OFF && !following() ? FILTER_WHY : NULL, NULL, 0);
}

/* In a child of fork (or clone): start this process's own experiment.
 * `kind` is 'f' or 'C', `no` the parent's count. */
static void start_child(char kind, int no)
{
	if (!following())
		return;
	struct lineage lineage;
	char comp[24];
	snprintf(comp, sizeof comp, "_%c%d", kind, no);
	child_lineage(&lineage, comp);
	g_lin = lineage;
	atomic_store(&g_nfork, 0);
	atomic_store(&g_nexec, 0);
	atomic_store(&g_nclone, 0);
	/* Children that this one creates through paths sonde does not see
	 * must not take its settings for theirs. */
	char pid[32];
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	__sonde_quiet++;
	setenv(SONDE_ENV_LINEAGE, g_lin.dir, 1);
	if (g_mode == F_REGEX && strcmp(g_lin.full, g_lin.dir))
		setenv(SONDE_ENV_LINEAGE_FULL, g_lin.full, 1);
	else
		unsetenv(SONDE_ENV_LINEAGE_FULL);
	setenv(SONDE_ENV_TARGET_PID, pid, 1);
	unsetenv(SONDE_ENV_TARGET_PPID);
	__sonde_quiet--;
	if (!matches(g_lin.full, progname())) {
		note_unrecorded(g_lin.dir, getpid(), progname(), REASON_REGEX);
		return;
	}
	char dir[PATH_MAX + sizeof g_lin.dir + 8], why[256];
	if (snprintf(dir, sizeof dir, "%s/%s.er", g_founder, g_lin.dir) >= (int)sizeof dir)
		note_unrecorded(g_lin.dir, getpid(), progname(), REASON_PATH);
	else if (collector_restart(dir, why, sizeof why) < 0)
		note_unrecorded(g_lin.dir, getpid(), progname(), why);
}

/* This process's experiment could not be started (collector_start says
 * why): the founder's log says so. */
void follow_unrecorded(const char *why)
{
	if (g_lin.dir[0])
		note_unrecorded(g_lin.dir, getpid(), progname(), why);
}

void follow_fork_child(void)
{
	int saved = errno; /* fork's caller sees the child's errno as fork left it */
	clock_mark_begin();
	start_child('f', g_child_fork_no);
	errno = saved;
}

/* vfork keeps its meaning: the child runs on the parent's memory, and the
 * parent waits until the child execs or exits; what the child writes
 * (a flag, errno after a failed exec) the parent reads.  A C wrapper
 * cannot give that: the child would return from the wrapper's frame, and
 * its next calls would overwrite the frame the parent returns through.
 * So vfork is a few instructions, like glibc's: the return address is
 * held in a register across the system call, and the stack is used only
 * below the caller's frame, before the call (the parent's preparation)
 * and after the parent resumes.  Nothing of sonde's state changes in the
 * child: __sonde_vforked (TLS, shared with the child) makes the exec
 * functions, interposers and tracers leave it alone (vfork_child_exec);
 * the parent clears it when it resumes. */
static TLS int t_vfork_nested; /* vforks by a vfork child, pending */

__attribute__((used, visibility("hidden"))) void sonde_vfork_prepare(void)
{
	if (__sonde_vforked) { /* a vfork child vforks: nothing here is its own */
		t_vfork_nested++;
		return;
	}
	int saved = errno;
	RESOLVE(execve); /* no dlsym in the child */
	RESOLVE(execvpe);
	RESOLVE(fexecve);
	int no = -1;
	if (following())
		no = atomic_fetch_add(&g_nfork, 1) + 1;
	__sonde_quiet++;
	__sonde_vforked = no;
	errno = saved;
}

__attribute__((used, visibility("hidden"))) void sonde_vfork_parent(void)
{
	if (t_vfork_nested) {
		t_vfork_nested--;
		return;
	}
	__sonde_vforked = 0;
	__sonde_quiet--;
}

__attribute__((used, visibility("hidden"))) long sonde_vfork_failed(long neg_errno)
{
	if (t_vfork_nested) {
		t_vfork_nested--;
		errno = (int)-neg_errno;
		return -1;
	}
	int no = __sonde_vforked;
	__sonde_vforked = 0;
	__sonde_quiet--;
	if (no > 0) /* no child: its number goes to the next one */
		atomic_compare_exchange_strong(&g_nfork, &no, no - 1);
	errno = (int)-neg_errno;
	return -1;
}

#if defined(__x86_64__)
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	".p2align 4\n"
	"vfork:\n"
	"	.byte 0xf3, 0x0f, 0x1e, 0xfa\n" /* endbr64 */
	"	subq $8, %rsp\n"
	"	call sonde_vfork_prepare\n"
	"	addq $8, %rsp\n"
	"	popq %rdi\n" /* the return address, kept in a register */
	"	movl $58, %eax\n" /* SYS_vfork */
	"	syscall\n"
	"	pushq %rdi\n"
	"	cmpq $-4095, %rax\n"
	"	jae 2f\n"
	"	testq %rax, %rax\n"
	"	jz 3f\n"
	"	pushq %rax\n"
	"	call sonde_vfork_parent\n"
	"	popq %rax\n"
	"1:	ret\n"
	/* The child returns 0 at once.  With a shadow stack (CET), which it
	 * shares with the parent, it returns without popping it, as glibc's
	 * vfork does (rdssp is a no-op without one, leaving %rsi 0). */
	"3:	xorl %esi, %esi\n"
	"	rdsspq %rsi\n"
	"	testq %rsi, %rsi\n"
	"	jz 1b\n"
	"	popq %rdi\n"
	"	jmp *%rdi\n"
	"2:	pushq %rax\n"
	"	movq %rax, %rdi\n"
	"	call sonde_vfork_failed\n"
	"	popq %rdi\n"
	"	ret\n"
	".size vfork, .-vfork\n");
#else
/* Elsewhere vfork is carried out as fork, which POSIX allows. */
EXPORT pid_t vfork(void)
{
	RESOLVE(fork);
	return REAL(fork) ? REAL(fork)() : -1;
}
#endif

struct clone_start {
	int (*fn)(void *);
	void *arg;
	int no;
	int flags;
};

static int clone_child(void *p)
{
	/* Not CLONE_VM: *p is this process's own copy. */
	struct clone_start cs = *(struct clone_start *)p;
	int saved = errno;
	if (atomic_load(&g_col.active)) {
		fd_table_shared(!!(cs.flags & CLONE_FILES));
		collector_fork_child();
		fd_table_shared(0);
	}
	start_child('C', cs.no);
	errno = saved;
	/* glibc's clone ends the child with the exit system call when fn
	 * returns: no exit(), no destructor.  Its status and the end of its
	 * experiment are written here. */
	if (cs.flags & CLONE_FILES)
		collector_shares_table();
	int rc = cs.fn(cs.arg);
	saved = errno;
	follow_note_exit(rc);
	collector_exit_hook();
	/* glibc ends this task with the exit system call, and the process's
	 * status is that of its last task: the collector's threads must end
	 * first, or the status is theirs (0), not rc. */
	collector_threads_quit();
	collector_threads_join();
	collector_release_shared();
	errno = saved;
	return rc;
}

EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	RESOLVE(clone);
	va_list ap;
	va_start(ap, arg);
	void *ptid = va_arg(ap, void *);
	void *tls = va_arg(ap, void *);
	void *ctid = va_arg(ap, void *);
	va_end(ap);
	if (!REAL(clone)) {
		errno = ENOSYS;
		return -1;
	}
	if (flags & (CLONE_VM | CLONE_THREAD)) /* a task in this process's memory */
		return clock_raw_clone(REAL(clone), fn, stack, flags, arg, ptid, tls, ctid);
	if (!following())
		return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
	struct clone_start *cs = malloc(sizeof *cs);
	if (!cs)
		return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
	cs->fn = fn;
	cs->arg = arg;
	cs->no = atomic_fetch_add(&g_nclone, 1) + 1;
	cs->flags = flags;
	struct lineage lineage;
	char comp[24];
	snprintf(comp, sizeof comp, "_C%d", cs->no);
	child_lineage(&lineage, comp);
	log_descendant("clone", lineage.dir, 1, NULL, NULL, 0);
	int rc = REAL(clone)(clone_child, stack, flags, cs, ptid, tls, ctid);
	int e = errno;
	free(cs);
	errno = e;
	return rc;
}

/* ---- posix_spawn, system, popen: a fork whose child execs at once ---- */

/* The environment for a spawned child, logging it: NULL when it is not
 * followed (then the child gets the environment it was given).  Keeps
 * errno (the checks on the program's file may fail). */
static char **spawn_env(const char *variant, const char *path, char *const argv[], char *const envp[])
{
	if (!g_tracking || g_mode == F_OFF)
		return NULL;
	int saved = errno;
	struct lineage lineage;
	char cmd[1024];
	int n = atomic_fetch_add(&g_nfork, 1) + 1;
	char comp[32];
	snprintf(comp, sizeof comp, "_f%d_x1", n);
	child_lineage(&lineage, comp);
	const char *why = sysgate_active() ? FILTER_WHY : path ? not_followable(path) : NULL;
	command_of(cmd, sizeof cmd, path, argv);
	log_descendant(variant, lineage.dir, !why, why, cmd, 0);
	char **env = why ? NULL : child_env(envp, &lineage, SONDE_ENV_TARGET_PPID, getpid());
	if (!why && !env)
		note_unrecorded(lineage.dir, 0, cmd, REASON_MEMORY);
	errno = saved;
	return env;
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	RESOLVE(posix_spawn);
	char **env = spawn_env("posix_spawn", path, argv, envp);
	int rc = REAL(posix_spawn)(pid, path, fa, attr, argv, env ? env : envp);
	int e = errno;
	free_child_env(env);
	errno = e;
	return rc;
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	RESOLVE(posix_spawnp);
	int saved = errno; /* the PATH search below may set it */
	char buf[PATH_MAX];
	const char *path = following() ? search_path(file, buf, sizeof buf) : file;
	errno = saved;
	char **env = spawn_env("posix_spawnp", path, argv, envp);
	int rc = REAL(posix_spawnp)(pid, file, fa, attr, argv, env ? env : envp);
	int e = errno;
	free_child_env(env);
	errno = e;
	return rc;
}

/* popen spawns the shell with the process's environment, which is the
 * only way to hand it sonde's settings: it is swapped in for the call,
 * between swap_in and swap_out, which return as soon as the shell is
 * spawned.  (A setenv by another thread during the call is lost.)
 * system is carried out here (follow_system), not by a swap around
 * glibc's: that swap would hold the lock until the command ended, and
 * another thread's popen or system would wait for it (a command that
 * waits for theirs would never end). */
static char **swap_in(const char *variant, const char *command, char ***saved)
{
	char *argv[] = { "sh", "-c", (char *)command, NULL };
	char **env = command ? spawn_env(variant, "/bin/sh", argv, environ) : NULL;
	if (env) {
		pthread_mutex_lock(&g_env_lock);
		*saved = environ;
		environ = env;
	}
	return env;
}

static void swap_out(char **env, char **saved)
{
	if (!env)
		return;
	int e = errno;
	environ = saved;
	pthread_mutex_unlock(&g_env_lock);
	free_child_env(env);
	errno = e;
}

/* glibc's system (sysdeps/posix/system.c), the shell given the followed
 * child's environment: SIGINT and SIGQUIT ignored while any system() of
 * the process runs (counted), SIGCHLD blocked, the shell spawned with the
 * caller's mask and with those two signals at their defaults unless they
 * were ignored, 127 as its status when it could not be spawned, and a
 * cancelled caller's shell killed and reaped. */
static pthread_mutex_t g_sys_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_sys_refs;
static struct sigaction g_sys_intr, g_sys_quit;

static void sys_unref(void)
{
	pthread_mutex_lock(&g_sys_lock);
	if (--g_sys_refs == 0) {
		real_sigaction_call(SIGINT, &g_sys_intr, NULL);
		real_sigaction_call(SIGQUIT, &g_sys_quit, NULL);
	}
	pthread_mutex_unlock(&g_sys_lock);
}

struct sys_call {
	pid_t pid;
	sigset_t omask;
};

static void sys_cancelled(void *p)
{
	struct sys_call *c = p;
	kill(c->pid, SIGKILL);
	while (REAL(waitpid)(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	sys_unref();
	real_pthread_sigmask_call(SIG_SETMASK, &c->omask, NULL);
}

static int follow_system(const char *line, char **env, int *spawn_err)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	pthread_mutex_lock(&g_sys_lock);
	if (g_sys_refs++ == 0) {
		real_sigaction_call(SIGINT, &sa, &g_sys_intr);
		real_sigaction_call(SIGQUIT, &sa, &g_sys_quit);
	}
	pthread_mutex_unlock(&g_sys_lock);
	struct sys_call c;
	sigaddset(&sa.sa_mask, SIGCHLD);
	real_pthread_sigmask_call(SIG_BLOCK, &sa.sa_mask, &c.omask);
	sigset_t reset;
	sigemptyset(&reset);
	if (g_sys_intr.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGINT);
	if (g_sys_quit.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGQUIT);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &c.omask);
	posix_spawnattr_setsigdefault(&attr, &reset);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	char *argv[] = { "sh", "-c", (char *)line, NULL };
	int status = -1;
	int ret = REAL(posix_spawn)(&c.pid, "/bin/sh", NULL, &attr, argv, env);
	posix_spawnattr_destroy(&attr);
	if (ret == 0) {
		pthread_cleanup_push(sys_cancelled, &c);
		pid_t r;
		while ((r = REAL(waitpid)(c.pid, &status, 0)) < 0 && errno == EINTR)
			;
		if (r != c.pid)
			status = -1;
		pthread_cleanup_pop(0);
	} else {
		status = 127 << 8; /* as if the shell had ended with _exit(127) */
	}
	int e = errno; /* waitpid's, when it failed */
	sys_unref();
	real_pthread_sigmask_call(SIG_SETMASK, &c.omask, NULL);
	*spawn_err = ret;
	errno = e;
	return status;
}

EXPORT int system(const char *command)
{
	RESOLVE(system);
	RESOLVE(posix_spawn);
	RESOLVE(waitpid);
	char *argv[] = { "sh", "-c", (char *)command, NULL };
	char **env = command && REAL(posix_spawn) && REAL(waitpid) ? spawn_env("system", "/bin/sh", argv, environ) : NULL;
	if (!env)
		return REAL(system)(command);
	int saved = errno, spawn_err = 0;
	int rc = follow_system(command, env, &spawn_err);
	/* errno as glibc's leaves it: the spawn's error, waitpid's, or the
	 * caller's */
	int e = spawn_err ? spawn_err : rc == -1 ? errno : saved;
	free_child_env(env);
	errno = e;
	return rc;
}

EXPORT FILE *popen(const char *command, const char *type)
{
	RESOLVE(popen);
	char **saved = NULL, **env = swap_in("popen", command, &saved);
	FILE *f = REAL(popen)(command, type);
	swap_out(env, saved);
	return f;
}

/* ---- exit status of descendants ---- */

/* A descendant's own experiment records how it exits (`sonde collect`
 * does it for the founder).  Returning from main calls glibc's exit()
 * internally, where no interposer sees it, but on_exit handlers are given
 * the status: sonde_init registers one.  Registered from a preloaded
 * library's constructor, which the loader runs before the program's
 * start-up registers the destructors' runner, it runs after the
 * destructors: the experiment is finished by then, so what counts is
 * that this process owns the log.  _exit and _Exit are interposed
 * (interpose.c), and a clone child whose function returns is handled by
 * clone_child. */
static pid_t g_noted_exit; /* the process that wrote its exit event */

void follow_note_exit(int status)
{
	if (!log_is_open() || !g_lin.dir[0] || getpid() != g_col.pid || g_noted_exit == g_col.pid)
		return;
	g_noted_exit = g_col.pid;
	char mem[256];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<event kind=\"exit\"");
	xb_attr_u64(&b, "time_ns", now_ns());
	xb_attr_u64(&b, "status", (uint64_t)(status & 0xff));
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
}

static void on_exit_status(int status, void *arg)
{
	(void)arg;
	follow_note_exit(status);
	collector_release_shared(); /* the last of sonde to run in exit() */
}

void follow_register_exit(void)
{
	on_exit(on_exit_status, NULL);
}

/* A process killed by a signal writes nothing: its parent, reaping it,
 * notes what it saw, and readers show that for a child whose own
 * experiment has no exit event.  (system() and pclose() reap inside
 * glibc, where this is not seen.) */
static void note_reaped(pid_t pid, int exited, int code)
{
	if (pid <= 0 || !atomic_load(&g_col.active) || getpid() != g_col.pid)
		return;
	char mem[256];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<event kind=\"reaped\"");
	xb_attr_u64(&b, "time_ns", now_ns());
	xb_attr_u64(&b, "pid", (uint64_t)pid);
	if (exited) {
		xb_attr_u64(&b, "status", (uint64_t)code);
	} else {
		xb_attr_u64(&b, "signal", (uint64_t)code);
		const char *abbrev = sigabbrev_np(code);
		if (abbrev) {
			xb_str(&b, " name=\"SIG");
			xb_str(&b, abbrev);
			xb_str(&b, "\"");
		}
	}
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
}

static void note_wait_status(pid_t pid, int st)
{
	int saved = errno;
	if (WIFEXITED(st))
		note_reaped(pid, 1, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		note_reaped(pid, 0, WTERMSIG(st));
	errno = saved;
}

REAL_DECL(wait4);
REAL_DECL(waitid);

/* The caller's status pointer goes to the kernel as it is: one it cannot
 * write fails the call with EFAULT, as without sonde (a copy through a
 * local would write it here, and crash). */
EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	RESOLVE(waitpid);
	int st = 0, *sp = status ? status : &st;
	pid_t rc = REAL(waitpid)(pid, sp, options);
	if (rc > 0)
		note_wait_status(rc, *sp);
	return rc;
}

EXPORT pid_t wait(int *status)
{
	return waitpid(-1, status, 0);
}

EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	RESOLVE(wait4);
	int st = 0, *sp = status ? status : &st;
	pid_t rc = REAL(wait4)(pid, sp, options, ru);
	if (rc > 0)
		note_wait_status(rc, *sp);
	return rc;
}

EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
	return wait4(-1, status, options, ru);
}

EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	RESOLVE(waitid);
	int rc = REAL(waitid)(idtype, id, info, options);
	if (rc == 0 && info && info->si_pid > 0 && (options & WEXITED)) {
		int saved = errno;
		if (info->si_code == CLD_EXITED)
			note_reaped(info->si_pid, 1, info->si_status);
		else if (info->si_code == CLD_KILLED || info->si_code == CLD_DUMPED)
			note_reaped(info->si_pid, 0, info->si_status);
		errno = saved;
	}
	return rc;
}
