/*
 * The Java shaper (shape.h): Oracle's user view of a Java program, for an
 * experiment with Java frames (its method table, "methods", written by
 * sonde's agent: sonde collect -j).
 *
 *   - the runtime's frames: the JVM's (libjvm, and the code it generated
 *     for itself, "<JVM-code>": the interpreter, stubs), the launcher's (the java
 *     executable, libjli) and the JDK's own native libraries (libjava,
 *     libnio, libzip, ...: an object named lib*.so in a JDK's directory,
 *     "/jvm/" or "jdk" in its path), whose C is the implementation of the
 *     class library's native methods;
 *   - time spent in them is <JVM-System> in user mode, whatever the
 *     thread's state: a Java thread's time in the JVM under the Java
 *     method that called it, and all of a thread of the JVM's own (GC,
 *     the JIT compilers) that runs no Java;
 *   - no outlined bodies, and no links: a Java thread's stack is whole in
 *     itself (the agent's walk reaches its entry method).
 * Native code of the program's own (a JNI library) is the user's, shown
 * where Java called it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/shape.h"
#include "symbols/dynfunc.h"

static bool java_runtime(const struct sonde_object *o)
{
	if (!o || !o->name)
		return false;
	const char *n = o->name, *p = o->path ? o->path : "";
	if (!strcmp(n, "libjvm.so") || !strcmp(n, "libjli.so") || !strcmp(n, "java") || !strcmp(n, SONDE_JVM_OBJECT))
		return true;
	return !strncmp(n, "lib", 3) && strstr(n, ".so") && (strstr(p, "/jvm/") || strstr(p, "jdk") || strstr(p, "/jre/"));
}

/* Any non-NULL pointer: the shaper keeps no state. */
static char g_java_on;

static void *java_open(const struct sonde_exp *exp, bool *oom)
{
	*oom = false;
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	char path[4096];
	if (!in || !in->dir || snprintf(path, sizeof path, "%s/methods", in->dir) >= (int)sizeof path)
		return NULL;
	return access(path, R_OK) == 0 ? &g_java_on : NULL;
}

static void java_close(void *st)
{
	(void)st;
}

static const char *java_pseudo(unsigned state)
{
	(void)state;
	return "<JVM-System>";
}

static int java_outlined(const char *name, size_t *srclen)
{
	(void)name, (void)srclen;
	return 0;
}

static int java_links(void *st, uint32_t tid, uint64_t time_ns, struct sonde_shape_link *l, int max)
{
	(void)st, (void)tid, (void)time_ns, (void)l, (void)max;
	return 0;
}

const struct sonde_shaper sonde_shaper_java = {
	"JVM", java_open, java_close, java_runtime, java_pseudo, java_outlined, java_links,
};
