/*
 * sonde collect -j, -J: Java.  A JVM loads the collector's Java agent
 * (libsonde_java.so, tracers/java/agent.c) when its command line or
 * JAVA_TOOL_OPTIONS says -agentpath:; the agent then adds each Java
 * thread's methods to its samples (doc/sonde-collect.md, "Java").
 *
 * The program is a JVM when it is the java launcher, or is linked with
 * the launcher's or the JVM's library (libjli: javac, jshell, jar and
 * the JDK's other tools; libjvm: a program that embeds the JVM).  The
 * java launcher gets the options on its command line, ahead of its own,
 * and a JDK tool gets them there as -J options (its output stays as it
 * was); anything else gets them in JAVA_TOOL_OPTIONS, which every JVM it
 * starts reads, and which the JVM acknowledges on stderr ("Picked up
 * JAVA_TOOL_OPTIONS").
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect_settings.h"

#define JAVA_AGENT "libsonde_java.so"

static int is_launcher(const char *path)
{
	const char *base = strrchr(path, '/');
	return !strcmp(base ? base + 1 : path, "java");
}

/* A JVM's library: libjli (the JDK's launcher: a JDK tool), libjvm. */
static const char *jvm_of_soname(const char *so)
{
	return !strncmp(so, "libjli.so", 9) ? "jli" : !strncmp(so, "libjvm.so", 9) ? "jvm" : NULL;
}

/* What the ELF file at path needs: 1 libjli (a JDK tool), 2 libjvm. */
static int links_jvm(const char *path)
{
	const char *w = collect_needed_match(path, jvm_of_soname);
	return !w || !*w ? 0 : !strcmp(w, "jli") ? 1 : 2;
}

/* The launcher's argv with the options after argv[0]: the agent's, then
 * -J's words; each prefixed with -J for a JDK tool (tool). */
static char **launcher_argv(char **argv, const char *lib, const char *jvm_opts, int tool)
{
	size_t n = 0, words = 0;
	while (argv[n])
		n++;
	char *copy = jvm_opts ? strdup(jvm_opts) : NULL;
	if (jvm_opts && !copy)
		return NULL;
	for (const char *p = jvm_opts; p && *p; p++)
		words += *p != ' ' && *p != '\t' && (p == jvm_opts || p[-1] == ' ' || p[-1] == '\t');
	char **l = calloc(n + words + 4, sizeof *l);
	char *agent = NULL;
	const char *j = tool ? "-J" : "";
	if (!l || asprintf(&agent, "%s-agentpath:%s", j, lib) < 0) {
		free(l);
		free(copy);
		return NULL;
	}
	size_t k = 0;
	l[k++] = argv[0];
	l[k++] = agent;
	l[k++] = tool ? "-J-XX:+UnlockDiagnosticVMOptions" : "-XX:+UnlockDiagnosticVMOptions";
	l[k++] = tool ? "-J-XX:+DebugNonSafepoints" : "-XX:+DebugNonSafepoints";
	char *save = NULL;
	for (char *w = copy ? strtok_r(copy, " \t", &save) : NULL; w; w = strtok_r(NULL, " \t", &save)) {
		char *jw = NULL;
		if (tool && asprintf(&jw, "-J%s", w) < 0)
			jw = NULL;
		l[k++] = tool ? (jw ? jw : w) : w;
	}
	for (size_t i = 1; i < n; i++)
		l[k++] = argv[i];
	l[k] = NULL;
	return l;
}

int collect_java_setup(struct collect_opts *o, const char *collector)
{
	int launcher = is_launcher(o->prog), links = launcher ? 1 : links_jvm(o->prog), jvm = links != 0;
	int on = o->java ? !strcmp(o->java, "on") : jvm;
	o->java_opts[0] = 0;
	o->java_argv = 0;
	if (!on) {
		if (o->jvm_opts)
			fprintf(stderr, "sonde collect: warning: -J ignored: Java is off (-j on turns it on)\n");
		return 0;
	}
	char lib[PATH_MAX + 32];
	snprintf(lib, sizeof lib, "%s", collector);
	char *sl = strrchr(lib, '/');
	snprintf(sl ? sl + 1 : lib, sizeof lib - (size_t)(sl ? sl + 1 - lib : 0), "%s", JAVA_AGENT);
	if (access(lib, R_OK) < 0) {
		if (o->java) {
			fprintf(stderr,
				"sonde collect: cannot find the Java agent '%s' (sonde was built without a JDK's "
				"jvmti.h: install openjdk-17-jdk-headless and rebuild)\n",
				lib);
			return 2;
		}
		fprintf(stderr, "sonde collect: warning: no Java frames: cannot find the Java agent '%s'\n", lib);
		return 0;
	}
	if (strpbrk(lib, " \t")) {
		fprintf(stderr, "sonde collect: warning: no Java frames: the Java agent's path has a blank, which a "
				"JVM's options cannot hold: '%s'\n",
			lib);
		return 0;
	}
	if (!jvm)
		fprintf(stderr, "sonde collect: note: '%s' is not a JVM; -j on reaches the JVMs it starts (through "
				"JAVA_TOOL_OPTIONS)\n",
			o->prog);
	snprintf(o->java_opts, sizeof o->java_opts, "-agentpath:%s -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints%s%s",
		 lib, o->jvm_opts ? " " : "", o->jvm_opts ? o->jvm_opts : "");
	if (links == 1) { /* the java launcher, or a JDK tool */
		char **l = launcher_argv(o->argv, lib, o->jvm_opts, !launcher);
		if (!l) {
			fprintf(stderr, "sonde collect: out of memory\n");
			return 1;
		}
		o->argv = l;
		o->java_argv = 1;
	}
	return 0;
}
