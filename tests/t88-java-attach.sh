#!/bin/sh
# sonde collect -P PID of a running JVM (issue 31): the Java agent, and the
# collector with it, loaded through the JVM's attach mechanism, a
# recording of -t seconds, the agent stopped.  The JAttach fixture's main
# thread and worker spin in JAttach.work (inner() inlined by the JIT).
# Truth: the kernel's CPU time of each thread while recorded, which the
# collector writes at the end (thread_end's cpu_ns, from its registration
# at the attach): the samples' weight of each busy thread within 5% (or
# 20 ms) of it; Java frames on the samples, the methods named, at least
# 95% of the walked Java samples' weight reaching the method the JVM
# entered Java at (a sample whose walk failed and whose Java frames come
# from the compiled code's scopes stops where the compiled code does, at
# an interpreted or stub frame: not counted, as in t82); the JVM runs on, prints its output and exits 0, its signal
# dispositions as before (SigCgt), no thread dump.  Then the cases that
# cannot be: a second attach, a JVM started with
# -XX:+DisableAttachMechanism, -j on for a process that is no JVM; -j
# off, which records a JVM from outside; and a JVM that ends while it is
# recorded.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
if ! command -v javac >/dev/null || ! command -v java >/dev/null || [ ! -f "$B/lib/sonde/libsonde_java.so" ]; then
	notok "a JDK and the Java agent (scripts/deps.sh check installs openjdk-17-jdk-headless; make builds libsonde_java.so)"
	exit 0
fi
cp "$TOP/tests/fixtures/java/JAttach.java" . && javac JAttach.java 2>javac.err || {
	notok "cannot compile JAttach.java: $(head -2 javac.err)"
	exit 0
}

# start_jvm SECONDS [JVM options]: the fixture in the background, $jp its
# pid once it printed "up"
start_jvm() {
	secs=$1
	shift
	java "$@" -cp . JAttach "$secs" >jvm.out 2>jvm.err &
	jp=$!
	for i in $(seq 200); do grep -q up jvm.out 2>/dev/null && return 0; sleep 0.05; done
	return 1
}
sigcgt() { awk '$1 == "SigCgt:" { print $2 }' /proc/$1/status; }

start_jvm 8 || notok "the JVM fixture did not start"
before=$(sigcgt $jp)
"$SONDE" collect -P $jp -t 1.5 -o a.er >collect.out 2>collect.err
rc=$?
after=$(sigcgt $jp)
check "attach: sonde collect -P of the JVM exits 0 ($rc: $(tail -1 collect.err))" [ $rc = 0 ]
check "attach: the JVM's signal dispositions after the detach are those before ($before, $after)" [ "$before" = "$after" ]
"$SONDE" collect -P $jp -t 0.5 -o b.er >collect2.out 2>collect2.err
rc2=$?
check "a second attach to the same JVM: refused with a reason, exit 2 ($rc2: $(tail -1 collect2.err))" \
	sh -c "[ $rc2 = 2 ] && grep -q 'one attached recording' collect2.err && [ ! -d b.er ]"
wait $jp
jrc=$?
check "the JVM runs on after the detach: its output and exit 0 ($jrc, $(tr '\n' ' ' <jvm.out))" \
	sh -c "[ $jrc = 0 ] && grep -q done jvm.out && ! grep -q 'Full thread dump' jvm.out"

# each thread's samples against its CPU time while recorded
"$SONDE" print -dump profile a.er 2>/dev/null | awk '/^sample/ { for (i = 1; i < NF; i++) { if ($i == "tid") t = $(i + 1); if ($i == "weight") w[t] += $(i + 1) } }
	END { for (t in w) printf "%s %.3f\n", t, w[t] }' >weights.txt
grep -o '<event kind="thread_end"[^>]*' a.er/log.xml | sed -n 's/.* tid="\([0-9]*\)".* cpu_ns="\([0-9]*\)".*/\1 \2/p' >cpu.txt
awk 'FILENAME == ARGV[1] { w[$1] = $2; next } $2 > 100e6 { n++; r = w[$1] + 0; d = r - $2 / 1e6; if (d < 0) d = -d;
	b = 0.05 * $2 / 1e6; if (b < 20) b = 20; if (d > b) bad = bad sprintf(" %s: %.1f ms recorded, %.1f ms true;", $1, r, $2 / 1e6);
	else good = good sprintf(" %s %.0f/%.0f ms", $1, r, $2 / 1e6) }
	END { printf "%d|%s|%s\n", n, bad, good }' weights.txt cpu.txt >cmp.txt
IFS='|' read -r nbusy bad good <cmp.txt
check "attach: the two busy threads' samples within 5% or 20 ms of their CPU time while recorded ($nbusy busy:$good$bad)" \
	sh -c "[ '$nbusy' -ge 2 ] && [ -z '$bad' ]"

"$SONDE" print -functions a.er >fn.txt 2>&1
check "attach: the Java methods are named (JAttach.work, JAttach.inner)" \
	sh -c "grep -q 'JAttach.work' fn.txt && grep -q 'JAttach.inner' fn.txt"
"$SONDE" print -dump profile a.er 2>/dev/null | awk '
	function done() { if (java && !scoped) { all += w; if (root ~ /JAttach\.main\(|java\.lang\.Thread\.run\(|\.<clinit>\(/) good += w } }
	/^sample/ { done(); java = 0; scoped = 0; root = ""; for (i = 1; i < NF; i++) if ($i == "weight") w = $(i + 1); next }
	/^ *#[0-9]/ { if ($3 ~ /^java(-[a-z0-9-]+)?$/) { java = 1; if (/\[from scopes\]$/) scoped = 1 } root = $4 }
	END { done(); printf "%.3f %.0f\n", (all > 0 ? good / all : 0), all }' >roots.txt
read -r frac all <roots.txt
check "attach: $frac of the walked Java samples' weight ($all ms) reaches the method the JVM entered Java at (at least 0.95)" \
	awk -v f="$frac" -v a="$all" 'BEGIN { exit !(f >= 0.95 && a > 200) }'
check "attach: no settings file left in the experiment" [ ! -e a.er/attach.settings ]

# a JVM that refuses attaching: said, nothing sent to it
start_jvm 2 -XX:+DisableAttachMechanism || notok "the JVM fixture did not start"
"$SONDE" collect -P $jp -t 0.5 -o c.er >/dev/null 2>c.err
rc=$?
wait $jp
jrc=$?
check "a JVM started with -XX:+DisableAttachMechanism: exit 2, said ($(tail -1 c.err)), the JVM untouched (exit $jrc, no thread dump)" \
	sh -c "[ $rc = 2 ] && grep -q 'DisableAttachMechanism' c.err && [ $jrc = 0 ] && ! grep -q 'thread dump' jvm.out && [ ! -d c.er ]"

# -j on for a process that is no JVM
sleep 5 &
sp=$!
"$SONDE" collect -P $sp -j on -t 0.5 -o d.er >/dev/null 2>d.err
rc=$?
kill $sp 2>/dev/null
check "-P of a process that is no JVM with -j on: exit 2, said ($(tail -1 d.err))" \
	sh -c "[ $rc = 2 ] && grep -q 'is no JVM' d.err"

# -j off: the JVM recorded from outside, no agent loaded
start_jvm 3 || notok "the JVM fixture did not start"
"$SONDE" collect -P $jp -j off -t 0.5 -o e.er >/dev/null 2>e.err
rc=$?
maps=$(grep -c libsonde /proc/$jp/maps 2>/dev/null)
wait $jp
check "-j off: a JVM recorded from outside (exit $rc), no sonde library in it ($maps mappings)" \
	sh -c "[ $rc = 0 ] && [ '$maps' = 0 ] && grep -q 'attached from outside' e.er/log.xml"

# the JVM ends while recorded: the collector's own end at its exit, the
# experiment closed by sonde collect
start_jvm 1.5 || notok "the JVM fixture did not start"
"$SONDE" collect -P $jp -t 20 -o f.er >/dev/null 2>f.err &
cp=$!
wait $jp
jrc=$?
wait $cp
rc=$?
"$SONDE" print -functions f.er >ff.txt 2>&1
prc=$?
check "the JVM ends while recorded: it exits $jrc, sonde collect $rc, the experiment closed and readable ($prc)" \
	sh -c "[ $jrc = 0 ] && [ $rc = 0 ] && [ $prc = 0 ] && grep -q 'the JVM ended while it was recorded' f.er/log.xml && grep -q '</experiment>' f.er/log.xml && grep -q 'JAttach.inner' ff.txt"
