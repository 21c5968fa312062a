/*
 * sonde collect -P PID, PID a JVM (-j on, the default for one): the Java
 * agent, and with it the collector, loaded into the running JVM through
 * the JVM's own attach mechanism (what `jcmd PID JVMTI.agent_load` does),
 * so that the samples carry Java frames as when the JVM was started under
 * sonde collect; -j off records it from outside instead (collect_attach.c).
 *
 * HotSpot's attach, on Linux: a file .attach_pidPID in the JVM's working
 * directory (or its /tmp), owned by the JVM's user, and a SIGQUIT make it
 * start its attach listener on the socket /tmp/.java_pidPID; a command
 * there is "1\0load\0LIBRARY\0true\0OPTIONS\0", and the answer a line with
 * the command's result, then the agent's "return code: N".  A JVM started
 * with -XX:+DisableAttachMechanism ignores the file and prints a thread
 * dump at the SIGQUIT, and one started with -Xrs dies of it: both are
 * refused before anything is sent (their command line and JAVA_TOOL_OPTIONS
 * say so).
 *
 * The agent starts the recording with the settings sonde collect writes
 * into the experiment (attach.settings, the environment's names; its
 * answer's reason in attach.settings.err when it cannot), and ends it at
 * "stop" (after -t seconds, at ^C, or when the JVM ends).  What a late
 * load gives and not (doc/sonde-collect.md, "A running JVM"): clock
 * profiling with Java frames, kernel stacks; no tracing, no children, and
 * a JVM's -XX:+DebugNonSafepoints cannot be turned on after its start.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "collect_settings.h"
#include "commands.h"
#include "sonde/settings.h"

#define JAVA_AGENT "libsonde_java.so"


static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A /proc file of pid, whole (NUL-terminated; its own NULs kept), or NULL. */
static char *proc_file(pid_t pid, const char *name, size_t *len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		char *b = realloc(buf, cap * 2 + 1);
		if (!b) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = b;
		cap *= 2;
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

/* Whether pid runs a JVM: libjvm.so among its mappings. */
static int is_jvm(pid_t pid)
{
	size_t n;
	char *maps = proc_file(pid, "maps", &n);
	int jvm = maps && strstr(maps, "/libjvm.so") != NULL;
	free(maps);
	return jvm;
}

/* Whether word is one of the NUL-separated strings in buf[0..n), or a
 * blank-separated word of one that starts with one of the option
 * variables (JAVA_TOOL_OPTIONS=... in the environment). */
static int has_option(const char *buf, size_t n, const char *word, int env)
{
	static const char *const vars[] = { "JAVA_TOOL_OPTIONS=", "_JAVA_OPTIONS=", "JDK_JAVA_OPTIONS=" };
	size_t wl = strlen(word);
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		const char *s = buf + i;
		if (!env) {
			if (!strcmp(s, word))
				return 1;
			continue;
		}
		for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++) {
			size_t vl = strlen(vars[v]);
			if (strncmp(s, vars[v], vl))
				continue;
			for (const char *p = s + vl; (p = strstr(p, word)); p += wl)
				if ((p == s + vl || p[-1] == ' ' || p[-1] == '\t') &&
				    (p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\t'))
					return 1;
		}
	}
	return 0;
}

/* Why this JVM must not be sent the SIGQUIT that starts its attach
 * listener, or NULL. */
static const char *attach_refused(pid_t pid)
{
	static const char *const why[][2] = {
		{ "-XX:+DisableAttachMechanism", "it was started with -XX:+DisableAttachMechanism" },
		{ "-Xrs", "it was started with -Xrs, and the SIGQUIT that starts a JVM's attach listener would end it" },
	};
	size_t nc = 0, ne = 0;
	char *cmd = proc_file(pid, "cmdline", &nc), *env = proc_file(pid, "environ", &ne);
	const char *r = NULL;
	for (size_t k = 0; !r && k < sizeof why / sizeof why[0]; k++)
		if ((cmd && has_option(cmd, nc, why[k][0], 0)) || (env && has_option(env, ne, why[k][0], 1)))
			r = why[k][1];
	free(cmd);
	free(env);
	return r;
}

/* The JVM's attach socket, its listener started if need be: a connected
 * descriptor, or -1 with why. */
static int attach_socket(pid_t pid, uid_t uid, gid_t gid, char *why, size_t cap)
{
	char sock[108], trig[PATH_MAX];
	snprintf(sock, sizeof sock, "/proc/%d/root/tmp/.java_pid%d", (int)pid, (int)pid);
	struct stat st;
	if (stat(sock, &st) != 0) {
		snprintf(trig, sizeof trig, "/proc/%d/cwd/.attach_pid%d", (int)pid, (int)pid);
		int fd = open(trig, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0660);
		if (fd < 0) {
			snprintf(trig, sizeof trig, "/proc/%d/root/tmp/.attach_pid%d", (int)pid, (int)pid);
			fd = open(trig, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0660);
		}
		if (fd < 0) {
			snprintf(why, cap, "cannot make the JVM's attach trigger file (%s)", strerror(errno));
			return -1;
		}
		/* the JVM takes a trigger of its own user's only */
		if (fchown(fd, uid, gid) < 0 && getuid() == 0) {
			snprintf(why, cap, "cannot give the JVM's attach trigger file to uid %u (%s)", (unsigned)uid,
				 strerror(errno));
			close(fd);
			unlink(trig);
			return -1;
		}
		close(fd);
		if (kill(pid, SIGQUIT) < 0) {
			snprintf(why, cap, "cannot signal the JVM (%s)", strerror(errno));
			unlink(trig);
			return -1;
		}
		int up = 0;
		for (int i = 0; i < 500 && !up; i++) {
			struct timespec ts = { 0, 10 * 1000000L };
			nanosleep(&ts, NULL);
			up = stat(sock, &st) == 0;
			if (!up && kill(pid, 0) < 0 && errno == ESRCH)
				break;
		}
		unlink(trig);
		if (!up) {
			snprintf(why, cap, "the JVM did not start its attach listener within 5 s");
			return -1;
		}
	}
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un addr;
	memset(&addr, 0, sizeof addr);
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock);
	if (s < 0 || connect(s, (struct sockaddr *)&addr, sizeof addr) < 0) {
		snprintf(why, cap, "cannot connect to the JVM's attach listener (%s)", strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

/* "load LIB true OPTIONS" to the JVM: 0 when the agent answered 0, else
 * -1 with why (the JVM's words). */
static int attach_load(pid_t pid, uid_t uid, gid_t gid, const char *lib, const char *options, char *why, size_t cap)
{
	int s = attach_socket(pid, uid, gid, why, cap);
	if (s < 0)
		return -1;
	char req[2 * PATH_MAX + 64];
	size_t n = 0;
	const char *parts[] = { "1", "load", lib, "true", options };
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		size_t l = strlen(parts[i]) + 1;
		if (n + l > sizeof req) {
			close(s);
			snprintf(why, cap, "the attach request is too long");
			return -1;
		}
		memcpy(req + n, parts[i], l);
		n += l;
	}
	if (write(s, req, n) != (ssize_t)n) {
		snprintf(why, cap, "cannot write to the JVM's attach listener (%s)", strerror(errno));
		close(s);
		return -1;
	}
	char ans[2048];
	size_t got = 0;
	for (;;) {
		struct pollfd pf = { s, POLLIN, 0 };
		if (poll(&pf, 1, 30000) <= 0)
			break;
		ssize_t r = read(s, ans + got, sizeof ans - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == sizeof ans - 1)
			break;
	}
	close(s);
	ans[got] = '\0';
	const char *rc = strstr(ans, "return code: ");
	if (got && ans[0] == '0' && ans[1] == '\n' && rc && atoi(rc + 13) == 0)
		return 0;
	/* the JVM's text, on one line */
	char *t = ans;
	if (got && ans[0] != '\0' && strchr(ans, '\n') && (ans[0] == '0' || ans[0] == '-' || (ans[0] >= '1' && ans[0] <= '9')))
		t = strchr(ans, '\n') + 1;
	for (char *p = t; *p; p++)
		if (*p == '\n')
			*p = *(p + 1) ? ' ' : '\0';
	snprintf(why, cap, "%s", *t ? t : "no answer from the JVM's attach listener");
	return -1;
}

static void put_line(void *arg, const char *name, const char *value)
{
	if (value)
		fprintf(arg, "%s=%s\n", name, value);
}

int collect_java_attach(struct collect_opts *o, int argc, char **argv, int *done)
{
	(void)argc;
	*done = 0;
	pid_t pid = (pid_t)o->attach_pid;
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	struct stat pst;
	if (stat(path, &pst) < 0)
		return 0; /* collect_attach says it */
	int jvm = is_jvm(pid), on = o->java ? !strcmp(o->java, "on") : jvm;
	if (!on)
		return 0;
	*done = 1;
	if (!jvm) {
		fprintf(stderr, "sonde collect: -P %d -j on: process %d is no JVM (no libjvm.so in it)\n", (int)pid,
			(int)pid);
		return 2;
	}
	static const char *const no[][2] = {
		{ "-s", "synchronization tracing" }, { "-H", "heap tracing" }, { "-i", "I/O tracing" },
		{ "-m", "MPI tracing" },	      { "-M", "MPI jobs" },	 { "-w", "off-CPU time" },
		{ "-h", "counters" },		      { "-l", "sample points by signal" }, { "-y", "pause/resume" },
		{ "-F", "descendants" },	      { "-S", "sample points" }, { "-J", "JVM options (a running JVM's are set)" },
	};
	for (int i = 0; i < o->nopts; i++)
		for (size_t k = 0; k < sizeof no / sizeof no[0]; k++)
			if (!strcmp(argv[o->opt_at[i]], no[k][0])) {
				fprintf(stderr, "sonde collect: -P %d: %s cannot be given to a running JVM (attached, its "
						"agent gives clock profiling with Java frames, -p, and kernel stacks, -k; "
						"-j off records it from outside)\n",
					(int)pid, no[k][1]);
				return 2;
			}
	if (collect_attach_check(o))
		return 2;
	char lib[PATH_MAX + 32];
	if (find_collector(lib, sizeof lib) < 0) {
		fprintf(stderr, "sonde collect: cannot find the collector library\n");
		return 2;
	}
	char *sl = strrchr(lib, '/');
	snprintf(sl ? sl + 1 : lib, sizeof lib - (size_t)(sl ? sl + 1 - lib : 0), "%s", JAVA_AGENT);
	char real[PATH_MAX];
	if (access(lib, R_OK) < 0 || !realpath(lib, real)) {
		fprintf(stderr, "sonde collect: cannot find the Java agent '%s' (sonde was built without a JDK's jvmti.h: "
				"install openjdk-17-jdk-headless and rebuild)\n",
			lib);
		return 2;
	}
	const char *refused = attach_refused(pid);
	if (refused) {
		fprintf(stderr, "sonde collect: -P %d: the JVM cannot be attached: %s (-j off records it from outside)\n",
			(int)pid, refused);
		return 2;
	}
	if (o->dry_run) {
		printf("attach: JVM %d, its agent %s loaded through the JVM's attach mechanism, for %s\nclock "
		       "profiling: %.3f ms\nkernel call stacks: %s\n",
		       (int)pid, real, o->stop_s > 0 ? "-t seconds" : "until interrupted", o->interval_ms,
		       o->kernel ? "on" : "off");
		return 0;
	}
	int rc = collect_make_experiment(o, o->exp, sizeof o->exp, 0);
	if (rc)
		return rc;
	if (!realpath(o->exp, o->expabs)) {
		fprintf(stderr, "sonde collect: cannot resolve '%s'\n", o->exp);
		rmdir(o->exp);
		return 1;
	}
	const char *expabs = o->expabs;
	o->interval_ns = (uint64_t)llround(o->interval_ms * 1e6);
	o->offcpu_ns = 0;
	o->period_ns = 0;
	if (o->kernel && collect_kernel_syms(expabs)) {
		remove_tree(expabs);
		return 1;
	}
	/* the JVM writes the experiment: its user's directory */
	if (pst.st_uid != getuid() || pst.st_gid != getgid()) {
		snprintf(path, sizeof path, "%s/kallsyms", expabs);
		if (chown(expabs, pst.st_uid, pst.st_gid) < 0 || (access(path, F_OK) == 0 && chown(path, pst.st_uid, pst.st_gid) < 0)) {
			fprintf(stderr, "sonde collect: -P %d: cannot give the experiment to the JVM's uid %u: %s\n",
				(int)pid, (unsigned)pst.st_uid, strerror(errno));
			remove_tree(expabs);
			return 2;
		}
	}
	char settings[PATH_MAX + 64], opt[PATH_MAX + 80], why[2048];
	snprintf(settings, sizeof settings, "%s/attach.settings", expabs);
	FILE *f = fopen(settings, "we");
	if (!f) {
		fprintf(stderr, "sonde collect: cannot write '%s': %s\n", settings, strerror(errno));
		remove_tree(expabs);
		return 1;
	}
	/* the duration is sonde collect's to keep (it sends the stop): the
	 * collector's own -t end would leave the threads' CPU time from it to
	 * the stop unsampled, while their thread_end counts it */
	struct collect_opts eo = *o;
	eo.duration_s = 0;
	eo.start_s = eo.stop_s = 0;
	collect_env(&eo, put_line, f);
	if (fclose(f)) {
		fprintf(stderr, "sonde collect: cannot write '%s'\n", settings);
		remove_tree(expabs);
		return 1;
	}
	chmod(settings, 0644);
	snprintf(opt, sizeof opt, "start=%s", settings);
	if (attach_load(pid, pst.st_uid, pst.st_gid, real, opt, why, sizeof why) < 0) {
		/* the agent's own reason first */
		char err[PATH_MAX + 80], text[512] = "";
		snprintf(err, sizeof err, "%s.err", settings);
		FILE *e = fopen(err, "re");
		if (e) {
			if (fgets(text, sizeof text, e))
				text[strcspn(text, "\n")] = '\0';
			fclose(e);
		}
		fprintf(stderr, "sonde collect: -P %d: the Java agent did not start in the JVM: %s\n", (int)pid,
			text[0] ? text : why);
		remove_tree(expabs);
		return 2;
	}
	uint64_t start = mono_ns();
	collect_attach_signals();
	fprintf(stderr, "sonde collect: attached to JVM %d (its Java agent)%s\n", (int)pid,
		o->stop_s > 0 ? "" : "; ^C to detach");
	uint64_t stop_at = o->stop_s > 0 ? start + (uint64_t)llround(o->stop_s * 1e9) : UINT64_MAX;
	int gone = 0;
	while (!collect_attach_stop && mono_ns() < stop_at) {
		if (!collect_attach_alive(pid)) {
			gone = 1;
			break;
		}
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
	int failed = 0;
	if (!gone) {
		snprintf(opt, sizeof opt, "stop=%s", settings);
		if (attach_load(pid, pst.st_uid, pst.st_gid, real, opt, why, sizeof why) < 0) {
			if (!collect_attach_alive(pid))
				gone = 1;
			else {
				fprintf(stderr, "sonde collect: -P %d: the Java agent did not stop: %s\n", (int)pid, why);
				failed = 1;
			}
		}
	}
	uint64_t end = mono_ns();
	char ev[256];
	if (gone)
		snprintf(ev, sizeof ev, "<event kind=\"info\" time_ns=\"%llu\" text=\"the JVM ended while it was recorded\"/>\n",
			 (unsigned long long)end);
	else
		snprintf(ev, sizeof ev, "<event kind=\"detach\" time_ns=\"%llu\"/>\n", (unsigned long long)end);
	unlink(settings);
	char err[PATH_MAX + 80];
	snprintf(err, sizeof err, "%s.err", settings);
	unlink(err);
	collect_close(expabs, ev, o->archive);
	fprintf(stderr, "sonde collect: %s JVM %d after %.3f s: %s\n", gone ? "recorded until the end of" : "detached from",
		(int)pid, (double)(end - start) / 1e9, o->exp);
	return failed;
}
