#!/bin/sh
# The collector can be loaded into a process that is already running
# (dlopen; a JVM's attach, issue 31), not only preloaded: glibc keeps about
# 1.5 KiB of static TLS for libraries dlopened with initial-exec TLS, and
# the collector's TLS is initial-exec (the signal handler may not call
# __tls_get_addr).  Its 4 KiB per-thread stack cache in TLS made every late
# load fail with "cannot allocate memory in static TLS block"; the cache
# is a page of the thread's own now.  Loaded late without sonde's
# environment, the collector does nothing and the program runs on.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
LIB=$B/lib/sonde/libsonde_collector.so

tls=$(printf '%d' "$(readelf -lW "$LIB" | awk '$1 == "TLS" { print $6 }')" 2>/dev/null)
if [ -n "$tls" ] && [ "$tls" -le 1024 ]; then
	ok "the collector's static TLS is $tls bytes (at most 1 KiB)"
else
	notok "the collector's static TLS is $tls bytes (more than 1 KiB: a late load fails)"
fi

cat >late.c <<'EOF'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
static void *run(void *a) { volatile double x = 1; for (long i = 0; i < 20000000; i++) x *= 1.0000001; return (void *)a; }
int main(int argc, char **argv)
{
	pthread_t t;
	pthread_create(&t, NULL, run, NULL); /* a thread that began before the load */
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	pthread_create(&t, NULL, run, NULL);
	pthread_join(t, NULL);
	printf("late load ok\n");
	return 0;
}
EOF
${CC:-cc} -std=gnu11 -O2 -o late late.c -ldl -lpthread || { notok "cannot build the late-load program"; exit 1; }
out=$(./late "$LIB" 2>&1)
rc=$?
if [ $rc -eq 0 ] && [ "$out" = "late load ok" ]; then
	ok "dlopen of the collector into a running program: loaded, the program runs on and exits 0"
else
	notok "dlopen of the collector into a running program: exit $rc, '$out'"
fi

# A running JVM loads it through its attach mechanism (jcmd's
# JVMTI.agent_load): whatever the JVM then says of the agent, never the
# static TLS.
if command -v java >/dev/null && command -v javac >/dev/null && command -v jcmd >/dev/null; then
	cat >Wait.java <<'EOF'
public class Wait { public static void main(String[] a) throws Exception { System.out.println("up"); System.out.flush(); Thread.sleep(30000); } }
EOF
	javac Wait.java 2>/dev/null
	java -cp . Wait >jvm.out 2>&1 &
	jp=$!
	for i in $(seq 100); do grep -q up jvm.out 2>/dev/null && break; sleep 0.1; done
	jcmd $jp JVMTI.agent_load "$LIB" >jcmd.out 2>&1
	kill $jp 2>/dev/null
	wait $jp 2>/dev/null
	if grep -q 'static TLS' jcmd.out; then
		notok "a running JVM cannot load the collector: $(grep 'static TLS' jcmd.out | head -1)"
	elif grep -q "$LIB" jcmd.out; then
		ok "a running JVM loads the collector (jcmd: $(grep "$LIB" jcmd.out | head -1))"
	else
		notok "jcmd JVMTI.agent_load said nothing of the collector: $(tail -2 jcmd.out | tr '\n' ' ')"
	fi
else
	notok "a JDK with jcmd (scripts/deps.sh check installs openjdk-17-jdk-headless)"
fi
