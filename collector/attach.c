/*
 * A collection started inside a process that is already running (issue
 * 31: a JVM's attach, which loads the Java agent and, with it, this
 * library): __sonde_attach_start and __sonde_attach_stop (sonde/hooks.h).
 *
 * Preloaded, the collector learns its settings from the environment that
 * sonde collect gave the program; loaded late it has none, and changing a
 * running process's environment (setenv) races with every thread that
 * reads it.  So sonde collect writes the settings into a file, NAME=VALUE
 * a line (the same names as the environment's), and the settings of an
 * attached collection are read from there: sonde_getenv is the one reader
 * of settings in the collector.
 *
 * What a late load cannot give: the interposers are not in the program's
 * lookup order (its calls were bound before), so there is no tracing, no
 * following of children and no OpenMP states, and a thread the program
 * starts later is sampled only when something tells the collector about it
 * (__sonde_attach_thread: the Java agent's ThreadStart).  The threads that
 * exist are adopted from /proc/self/task, as at a preloaded start.
 *
 * Stopping undoes the start: every thread's counter closed, the sampling
 * signal's action put back, the experiment's closing records written.
 * The library stays mapped (a JVM never unloads an agent).  Normal context.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/hooks.h>
#include <sonde/settings.h>

#include "collector.h"

#define ATTACH_MAX 64
static char g_attach_buf[8192];
static const char *g_attach_names[ATTACH_MAX], *g_attach_values[ATTACH_MAX];
static int g_attach_n;
static _Atomic int g_attached; /* 1: settings from the file; 2: recording; 3: recorded */
static _Atomic int g_attach_lock;

/* A setting: the attach file's while an attached collection runs (none
 * of the environment's then), else the environment's. */
const char *sonde_getenv(const char *name)
{
	if (!atomic_load_explicit(&g_attached, memory_order_acquire))
		return getenv(name);
	for (int i = 0; i < g_attach_n; i++)
		if (!strcmp(g_attach_names[i], name))
			return g_attach_values[i];
	return NULL;
}

/* The settings file into the table.  Returns 0, or -1 with why. */
static int read_settings(const char *path, char *why, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, cap, "cannot read the settings file %s: %s", path, strerror(errno));
		return -1;
	}
	ssize_t n = read(fd, g_attach_buf, sizeof g_attach_buf - 1);
	close(fd);
	if (n < 0 || n == (ssize_t)sizeof g_attach_buf - 1) {
		snprintf(why, cap, "the settings file %s is %s", path, n < 0 ? "unreadable" : "too long");
		return -1;
	}
	g_attach_buf[n] = '\0';
	g_attach_n = 0;
	for (char *line = g_attach_buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *eq = strchr(line, '=');
		if (!eq || eq == line)
			continue;
		if (g_attach_n == ATTACH_MAX) {
			snprintf(why, cap, "the settings file %s has more than %d settings", path, ATTACH_MAX);
			return -1;
		}
		*eq = '\0';
		g_attach_names[g_attach_n] = line;
		g_attach_values[g_attach_n++] = eq + 1;
	}
	return 0;
}

EXPORT int __sonde_attach_start(const char *settings, char *why, size_t cap)
{
	if (!why || !cap)
		return -1;
	*why = '\0';
	while (atomic_exchange_explicit(&g_attach_lock, 1, memory_order_acquire))
		sched_yield();
	int rc = -1;
	if (atomic_load(&g_attached) == 3) {
		/* the modules' state is not made to start twice in one image */
		snprintf(why, cap, "this process was recorded by an attach before; one attached recording a process");
		goto out;
	}
	if (atomic_load(&g_col.active) || atomic_load(&g_attached)) {
		snprintf(why, cap, "this process is recorded already");
		goto out;
	}
	if (!settings || read_settings(settings, why, cap) < 0) {
		if (!settings)
			snprintf(why, cap, "no settings file");
		goto out;
	}
	atomic_store_explicit(&g_attached, 1, memory_order_release);
	const char *dir = sonde_getenv(SONDE_ENV_EXPDIR);
	if (!dir || !*dir) {
		snprintf(why, cap, "the settings file %s names no experiment (%s)", settings, SONDE_ENV_EXPDIR);
		atomic_store(&g_attached, 0);
		goto out;
	}
	if (collector_attach_start(dir, why, cap) < 0) {
		atomic_store(&g_attached, 0);
		goto out;
	}
	atomic_store(&g_attached, 2);
	rc = 0;
out:
	atomic_store_explicit(&g_attach_lock, 0, memory_order_release);
	return rc;
}

EXPORT void __sonde_attach_thread(void)
{
	if (atomic_load(&g_attached) == 2)
		collector_attach_thread();
}

EXPORT int __sonde_attach_stop(void)
{
	while (atomic_exchange_explicit(&g_attach_lock, 1, memory_order_acquire))
		sched_yield();
	int was = atomic_load(&g_attached) == 2;
	if (was) {
		collector_attach_stop();
		atomic_store(&g_attached, 3); /* its settings stay: a late reader finds them */
	}
	atomic_store_explicit(&g_attach_lock, 0, memory_order_release);
	return was ? 0 : -1;
}
