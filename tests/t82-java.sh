# Java (sonde collect -j): the agent's Java frames against the truth the
# fixtures measure themselves (tests/fixtures/java/: each method's CPU time
# from the thread's CPU clock, ThreadMXBean, around its body).
#   - JHot: a call chain in the main thread (main, a, b, outer), a second
#     thread (worker, outer), a method the JIT inlines (inner, in outer's
#     loop); with the JIT and interpreted only (-Xint);
#   - JNative: a JNI call into C (c_burn) that calls back into Java;
#   - JGuest: the JVM's own uses of SIGSEGV (implicit null checks,
#     stack overflow), threads started and ended by the hundred, classes
#     unloaded: the same output and exit status under sonde collect;
#   - JRetire: a hot method whose class is unloaded before the end;
#   - JCalls: a compiled method called so often, not inlined, that half
#     the samples interrupt it in its prologue or epilogue.
# Each method's inclusive CPU within 5% (or 20 ms) of its truth: the weight
# of a clock sample is exact CPU time, so the error is the samples that
# straddle a method's entry and exit, a millisecond each with -p hi; the
# Java samples (those with a Java frame) reach the method the JVM entered
# Java at (JHot.main, java.lang.Thread.run; before main, on the main
# thread, what HotSpot calls from C++ as it starts the program: static
# initializers, the launcher's LauncherHelper, Thread.<init> of the main
# thread, System.initPhase*) in at least 95% of their weight (the
# fixture's own <clinit>, which sets up its ThreadMXBean, took 5% of a
# run on a slow machine, counted as not reaching main before); callers
# and callees as written.  Without the agent's walk (SONDE_JAVA_WALK=0)
# the compiled code's scopes alone give the hot loop's Java frames, also
# for code unloaded before the end (JRetire).  Then
# the cases where Java is
# off or cannot be: -j off, -j on for a program that is no JVM, a
# collector without the agent.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
JAVA_INC=$(dirname "$(ls /usr/lib/jvm/java-17-openjdk-amd64/include/jvmti.h /usr/lib/jvm/*/include/jvmti.h 2>/dev/null | head -1)")
if ! command -v javac >/dev/null || [ ! -f "$JAVA_INC/jni.h" ] || [ ! -f "$B/lib/sonde/libsonde_java.so" ]; then
	notok "a JDK and the Java agent (scripts/deps.sh check installs openjdk-17-jdk-headless; make builds libsonde_java.so)"
	exit 0
fi
cp "$TOP"/tests/fixtures/java/*.java . &&
	javac JHot.java JNative.java JGuest.java JRetire.java JCalls.java 2>javac.err &&
	gcc -O2 -g -fPIC -shared -I"$JAVA_INC" -I"$JAVA_INC/linux" -o libjnative.so "$TOP/tests/fixtures/java/jnative.c" 2>>javac.err
if [ $? != 0 ]; then
	notok "the Java fixtures build"
	sed 's/^/#   /' javac.err | head -5
	exit 0
fi

# judge NAME TRUTH_FILE EXP: every "truth METHOD NS" (summed per method)
# against the method's inclusive CPU in -functions.
judge() {
	"$SONDE" print -limit 0 -functions "$3" 2>/dev/null >fn.txt
	awk 'FILENAME == ARGV[1] && $1 == "truth" { t[$2] += $3 }
	     FILENAME == ARGV[2] && NF >= 5 && $1 ~ /^[0-9.]+$/ {
		name = $5; sub(/\(.*/, "", name); got[name] += $3 * 1e9 }
	     END { for (m in t) printf "%s %.0f %.0f\n", m, t[m], got[m] + 0 }' "$2" fn.txt >pairs.txt
	bad=$(awk '{ b = 0.05 * $2; if (b < 20e6) b = 20e6; d = $3 - $2; if (d < 0) d = -d; if (d > b) printf "%s: %.1f ms recorded, %.1f ms true; ", $1, $3 / 1e6, $2 / 1e6 }' pairs.txt)
	n=$(wc -l <pairs.txt)
	if [ -z "$bad" ] && [ "$n" -ge 3 ]; then
		ok "$1: each method's inclusive CPU within 5% or 20 ms of its truth ($(awk '{ printf "%s %.0f/%.0f ms  ", $1, $3 / 1e6, $2 / 1e6 }' pairs.txt))"
	else
		notok "$1: ${bad:-$n methods}"
	fi
}

# kinds EXP FUNC...: how the frames of each FUNC ran, over all the
# samples (-dump): "FUNC KIND COUNT ..." for the kinds seen.
kinds() {
	er=$1
	shift
	"$SONDE" print -dump profile "$er" 2>/dev/null | awk -v fs="$*" '
		BEGIN { n = split(fs, f, " ") }
		/^ *#[0-9]/ { for (i = 1; i <= n; i++) if (index($4, ":" f[i] "(")) c[f[i] " " $3]++ }
		END { for (k in c) printf "%s %d ", k, c[k] }'
}

# deep LABEL KINDS FUNC...: each FUNC's frames ran interpreted in at
# least 95% of the samples with it (KINDS from kinds), and it has more
# than 50 of them.
deep() {
	label=$1 got=$2
	shift 2
	for f in "$@"; do
		if awk -v k="$got" -v f="$f" 'BEGIN { m = split(k, v, " ")
			for (i = 1; i + 2 <= m; i += 3) if (v[i] == f) { t += v[i + 2]; if (v[i + 1] == "java-interpreted") g += v[i + 2] }
			exit !(t > 50 && g >= 0.95 * t) }'; then
			ok "$label: $f, below outer, ran interpreted ($(echo "$got" | tr ' ' '\n' | paste - - - | awk -v f="$f" '$1 == f { printf "%s %s ", $2, $3 }'))"
		else
			notok "$label: how $f ran: $got"
		fi
	done
}

# roots NAME EXP: the weight of the samples with a Java frame whose
# outermost frame is a method the JVM enters Java at, against all of
# theirs.
roots() {
	"$SONDE" print -dump profile "$2" 2>/dev/null | awk '
		function done() { if (java) { all += w; if (root ~ /JHot\.main\(|JNative\.main\(|JCalls\.main\(|java\.lang\.Thread\.run\(|\.<clinit>\(|sun\.launcher\.LauncherHelper\.|java\.lang\.Thread\.<init>\(|java\.lang\.System\.initPhase/) good += w } }
		/^sample/ { done(); java = 0; root = ""; for (i = 1; i < NF; i++) if ($i == "weight") w = $(i + 1); next }
		/^ *#[0-9]/ { if ($3 ~ /^java(-[a-z0-9-]+)?$/) java = 1; root = $4 }
		END { done(); printf "%.3f %.0f\n", (all > 0 ? good / all : 0), all }' >roots.txt
	read -r frac all <roots.txt
	if awk -v f="$frac" -v a="$all" 'BEGIN { exit !(f >= 0.95 && a > 100) }'; then
		ok "$1: $(awk -v f="$frac" 'BEGIN { printf "%.1f", f * 100 }')% of the Java samples' weight reaches the thread's entry method ($all ms)"
	else
		notok "$1: only $frac of the Java samples' weight ($all ms) reaches the thread's entry method"
	fi
}

# caller EXP CALLEE CALLER: CALLER is CALLEE's caller with the most of
# its time (-csingle's rows above the function's own).
caller() {
	"$SONDE" print ${VM:+-viewmode $VM} -csingle "$2" "$1" 2>/dev/null >cs.txt
	who=$(awk '$7 ~ /^\*/ { exit }
		NF >= 7 && $1 ~ /^[0-9.]+$/ { n = $0; for (i = 0; i < 6; i++) sub(/^ *[0-9.]+ +/, "", n); if ($1 + 0 > best) { best = $1 + 0; who = n } }
		END { print who }' cs.txt)
	case "$who" in
	"$3"*) ok "$2's caller is $3" ;;
	*) notok "$2's caller is '$who', not $3${VM:+ ($VM mode)}"; sed 's/^/#   /' cs.txt | head -12 ;;
	esac
}

for mode in jit xint; do
	set --
	[ $mode = xint ] && set -- -J -Xint
	java -cp . JHot 600 >plain.out 2>plain.err
	prc=$?
	rm -rf h.er
	"$SONDE" collect -p hi "$@" -o h.er java -cp . JHot 600 >sonde.out 2>sonde.err
	src=$?
	if [ $prc = 0 ] && [ $src = 0 ] && [ "$(awk '{ print $1, $2 }' plain.out | sort)" = "$(awk '{ print $1, $2 }' sonde.out | sort)" ] &&
		! [ -s sonde.err ]; then
		ok "JHot $mode: the program's output and exit status under sonde collect, nothing on stderr"
	else
		notok "JHot $mode: exit $src under sonde ($prc plain)"
		sed 's/^/#   /' sonde.err | head -5
	fi
	judge "JHot $mode" sonde.out h.er
	roots "JHot $mode" h.er
	# how the top Java frame ran: under -Xint every Java frame is
	# interpreted (but the method handles' intrinsics, which HotSpot
	# compiles even then); with the JIT, inner (the hot loop's body) runs
	# compiled but for its first milliseconds, and mostly inlined into
	# outer's compiled loop
	"$SONDE" agg 'profile /func == "JHot.inner"/ { @[javaframe] = sum(weight); }' h.er 2>&1 |
		awk 'NF == 2 { printf "%s %s ", $1, $2 }' >jk.txt
	"$SONDE" print -dump profile h.er 2>/dev/null >jd.txt
	nj=$(awk '/^ *#[0-9]/ && $3 ~ /^java(-[a-z0-9-]+)?$/ && $4 !~ /java\.lang\.invoke\.MethodHandle\./ { n[$3 == "java-interpreted"]++ } END { printf "%d %d", n[1], n[0] }' jd.txt)
	if [ $mode = xint ]; then
		awk -v k="$(cat jk.txt)" -v n="$nj" 'BEGIN { split(n, v, " "); exit !(k ~ /^interpreted [0-9]+ $/ && v[1] > 100 && v[2] == 0) }'
	else
		awk -v k="$(cat jk.txt)" 'BEGIN { m = split(k, v, " "); for (i = 1; i < m; i += 2) { t += v[i + 1]; if (v[i] ~ /^(compiled|inlined)/) c += v[i + 1]; if (v[i] == "inlined") l += v[i + 1] } exit !(t > 0 && c >= 0.9 * t && l >= 0.5 * t) }'
	fi && ok "JHot $mode: how inner's frames ran: $(cat jk.txt)(Java frames interpreted, other: $nj)" ||
		notok "JHot $mode: how inner's frames ran: '$(cat jk.txt)', Java frames interpreted and other: $nj"
	# an inlined frame is always above the compiled method it is in,
	# or above another inlined one
	bad=$(awk '/^sample/ { prev = ""; next }
		/^ *#[0-9]/ { if (prev == "java-inlined" && $3 !~ /^java-(compiled|compiled-c1|inlined)$/) n++; if (prev == "java-inlined") all++; prev = $3 }
		END { printf "%d %d", n, all }' jd.txt)
	if [ "${bad% *}" = 0 ] && { [ $mode = xint ] || [ "${bad#* }" -gt 100 ]; }; then
		ok "JHot $mode: every inlined frame is above a compiled or inlined one (${bad#* } inlined frames)"
	else
		notok "JHot $mode: inlined frames above neither compiled nor inlined code: $bad (of all)"
	fi
	# below the compiled (or, -Xint, interpreted) outer: the methods
	# called once, which the JIT never compiles, ran interpreted (the
	# walk of the JVM's frames; before, their kind was not told)
	deep "JHot $mode" "$(kinds h.er JHot.b JHot.a JHot.main JHot.worker)" JHot.b JHot.a JHot.main JHot.worker
	caller h.er JHot.outer JHot.b
	caller h.er JHot.b JHot.a
	# the view modes: user shows Java, <JVM-System> for the JVM's own
	# code, and nothing of the JDK's objects; machine shows them
	"$SONDE" print -viewmode user -limit 0 -objects h.er 2>/dev/null >uo.txt
	"$SONDE" print -viewmode machine -limit 0 -objects h.er 2>/dev/null >mo.txt
	if ! grep -qE ' (libjvm\.so|libjli\.so|libjava\.so|java)$' uo.txt && grep -q ' <JVM>$' uo.txt && grep -q ' libjvm\.so$' mo.txt; then
		ok "JHot $mode: user mode shows the JVM as <JVM> and none of the JDK's objects; machine mode shows libjvm.so"
	else
		notok "JHot $mode: the objects in user mode: $(awk 'NR > 5 { print $NF }' uo.txt | tr '\n' ' ')"
	fi
	u=$("$SONDE" print -viewmode user -limit 0 -functions h.er 2>/dev/null | awk '$5 ~ /^JHot\.outer\(/ { print $3 }')
	m=$("$SONDE" print -viewmode machine -limit 0 -functions h.er 2>/dev/null | awk '$5 ~ /^JHot\.outer\(/ { print $3 }')
	[ -n "$u" ] && [ "$u" = "$m" ] && ok "JHot $mode: outer's inclusive time is the same in user and machine mode ($u s)" ||
		notok "JHot $mode: outer's inclusive time: user '$u', machine '$m'"
	caller h.er JHot.worker 'JHot.lambda$main$0'
	# inner: inlined by the JIT (a frame of its own all the same), the
	# loop's body: most of outer
	awk '$5 ~ /^JHot\.(inner|outer)\(/ { v[$5 ~ /inner/] = $3 } END { exit !(v[1] > 0.85 * v[0] && v[0] > 0) }' fn.txt &&
		ok "JHot $mode: inner, inlined or not, has most of outer's time" ||
		notok "JHot $mode: inner's time against outer's: $(grep -E 'JHot\.(inner|outer)\(' fn.txt | tr -s ' ' | tr '\n' ';')"
	# the JVM's threads by their names (the kernel's, 15 bytes)
	"$SONDE" print -limit 0 -threads h.er 2>/dev/null >th.txt
	if grep -q ' worker$' th.txt && grep -qE ' C[12] CompilerThre$' th.txt; then
		ok "JHot $mode: -threads names the program's worker and the JIT's compiler threads"
	elif [ $mode = xint ] && grep -q ' worker$' th.txt; then
		ok "JHot $mode: -threads names the program's worker (no JIT with -Xint)"
	else
		notok "JHot $mode: -threads: $(awk 'NR > 5' th.txt | tr -s ' ' | tr '\n' ';' | cut -c1-300)"
	fi
	# the JVM's generated code as dynamic functions
	if grep -q ' Interpreter$' h.er/jvm.map && { [ $mode = xint ] || grep -q ' JHot\.outer \[compiled\]$' h.er/jvm.map; }; then
		ok "JHot $mode: jvm.map names the interpreter$([ $mode = jit ] && echo ' and JHot.outer'"'"'s compiled code')"
	else
		notok "JHot $mode: jvm.map: $(wc -l <h.er/jvm.map 2>/dev/null) lines, no Interpreter or compiled JHot.outer"
	fi
	# the compiled methods by time (jvm.code, read from the code heaps
	# while the JVM runs) against what the JVM itself says at the end
	# (jvm.map, JVMTI's): every method alive then, but the method
	# handles' intrinsics (no jmethodID), loaded at the same address and
	# size; every retire and unload of a loaded one
	if [ $mode = jit ]; then
		v=$(awk 'FILENAME ~ /code$/ { if ($2 == "load") { L[$3] = $4; N[$3] = $9 } else if (!($3 in L)) orphan++; next }
			/\[compiled\]$/ && $0 !~ /java\.lang\.invoke\.MethodHandle\./ { n++; a = "0x" $1; if (L[a] == $2 && N[a] == $3) m++ }
			END { printf "%d %d %d", n, m, orphan }' h.er/jvm.code h.er/jvm.map)
		cn=${v%% *} cm=${v#* } cm=${cm%% *} co=${v##* }
		[ "$cn" -gt 20 ] && [ "$cn" = "$cm" ] && [ "$co" = 0 ] &&
			ok "JHot jit: jvm.code loaded each of the $cn compiled methods alive at the end, at its address and size, by its name" ||
			notok "JHot jit: jvm.code against jvm.map: $cm of $cn compiled methods loaded, $co retired or unloaded but not loaded; $(awk 'FILENAME ~ /code$/ { if ($2 == "load") { L[$3] = $4; N[$3] = $9 } next }
				/\[compiled\]$/ && $0 !~ /java\.lang\.invoke\.MethodHandle\./ { a = "0x" $1; if (L[a] != $2 || N[a] != $3) printf "%s (jvm.code: %s %s) ", $0, L[a], N[a] }' h.er/jvm.code h.er/jvm.map)"
		# outer's C2 code was loaded when its samples began to run it:
		# the poller sees it within its 20 ms period and its wake-up
		# (75 ms seen with two CPU hogs beside a parallel make), and the
		# OSR code runs right away, sampled within about 1 ms of its
		# CPU time unless the thread waits for a CPU meanwhile
		s0=$(sed -n 's/.*<time start_ns="\([0-9]*\)".*/\1/p' h.er/log.xml)
		o=$(awk '$2 == "LJHot;" && $3 == "outer" { print $1 }' h.er/methods)
		t2=$(awk -v o="$o" -v s0="$s0" '$2 == "load" && $5 == o && $6 == 4 { printf "%.4f", ($1 - s0) / 1e9; exit }' h.er/jvm.code)
		ts=$(awk '/^sample/ { t = $4 } /^ *#[0-9]/ && $3 == "java-compiled" && index($4, ":JHot.outer(") { print t; exit }' jd.txt)
		if [ -n "$t2" ] && [ -n "$ts" ] && awk -v a="$t2" -v b="$ts" 'BEGIN { d = a - b; exit !(d >= -0.1 && d <= 0.3) }'; then
			ok "JHot jit: outer's C2 code loaded at ${t2} s (jvm.code), first run by a sample at ${ts} s"
		else
			notok "JHot jit: outer's C2 code loaded at '${t2}' s (jvm.code), first run by a sample at '${ts}' s"
		fi
	fi
	walks=$(sed -n 's/.*text="Java: \([0-9]*\) samples of Java threads, \([0-9]*\) with Java frames.*/\1 \2/p' h.er/log.xml)
	if awk -v w="$walks" 'BEGIN { split(w, v, " "); exit !(v[1] > 100 && v[2] >= 0.95 * v[1]) }'; then
		ok "JHot $mode: log.xml counts the Java threads' samples and those without Java frames ($walks)"
	else
		notok "JHot $mode: log.xml's count of Java samples: '$walks'"
	fi
done

# Without the walk (SONDE_JAVA_WALK=0) a sample's Java frames come only
# from the compiled code's scopes (jvm.inline), as for a sample whose walk
# failed: outer's loop runs in its compiled (OSR) code with inner inlined
# there, so outer's inclusive time from the scopes is most of its truth
# (not all: its first milliseconds run interpreted, and the JVM's code its
# cpu() calls go through is the leaf there, the compiled caller under it),
# and inner has most of outer's.  Before the reader read jvm.inline, these
# samples had no Java frame at all.
rm -rf s.er
SONDE_JAVA_WALK=0 "$SONDE" collect -p hi -o s.er java -cp . JHot 600 >s.out 2>s.err
src=$?
scoped=$("$SONDE" print -header s.er 2>/dev/null | sed -n 's/.*; \([0-9]*\) with Java frames from the compiled code.s scopes.*/\1/p')
"$SONDE" print -limit 0 -functions s.er 2>/dev/null >sf.txt
sc=$(awk 'FILENAME == ARGV[1] && $1 == "truth" && $2 == "JHot.outer" { t += $3 }
	FILENAME == ARGV[2] && NF >= 5 && $5 ~ /^JHot\.outer\(/ { o = $3 * 1e9 }
	FILENAME == ARGV[2] && NF >= 5 && $5 ~ /^JHot\.inner\(/ { i = $3 * 1e9 }
	END { printf "%.0f %.0f %.0f", t / 1e6, o / 1e6, i / 1e6 }' s.out sf.txt)
if [ $src = 0 ] && grep -q "no walk of the Java frames" s.er/log.xml && [ "${scoped:-0}" -gt 0 ] &&
	awk -v v="$sc" 'BEGIN { split(v, a, " "); exit !(a[2] >= 0.8 * a[1] && a[2] <= 1.05 * a[1] + 20 && a[3] >= 0.7 * a[2]) }'; then
	ok "JHot without the walk: Java frames from the scopes ($scoped stacks); outer ${sc#* } ms (outer's truth, inclusive, inner's: $sc)"
else
	notok "JHot without the walk: exit $src, $scoped stacks given Java frames; outer's truth, outer's and inner's inclusive ms: $sc"
	sed 's/^/#   /' s.err | head -3
fi

# Scopes of code the end no longer has: JRetire's Plug.spin runs compiled
# (its step inlined), then its class is unloaded with its loader, and the
# end's CompiledMethodLoad events skip its code.  The collector reads each
# compiled method's scopes from its debug information when it first sees
# it, so without the walk spin's samples still get their Java frames, and
# spin's inclusive time is most of its truth (its first milliseconds run
# interpreted).  Before, they had none: spin was only "JRetire$Plug.spin
# [compiled]", a native frame.
rm -rf r.er
SONDE_JAVA_WALK=0 "$SONDE" collect -p hi -o r.er java -cp . JRetire 500 >r.out 2>r.err
rrc=$?
"$SONDE" print -limit 0 -functions r.er 2>/dev/null >rf.txt
rt=$(awk 'FILENAME == ARGV[1] && $1 == "truth" { t = $3 }
	FILENAME == ARGV[2] && NF >= 5 && $5 ~ /^JRetire\$Plug\.spin\(/ { o = $3 * 1e9 }
	FILENAME == ARGV[2] && NF >= 5 && $5 ~ /^JRetire\$Plug\.step\(/ { i = $3 * 1e9 }
	END { printf "%.0f %.0f %.0f", t / 1e6, o / 1e6, i / 1e6 }' r.out rf.txt)
if [ $rrc = 0 ] && awk -v v="$rt" 'BEGIN { split(v, a, " "); exit !(a[1] > 0 && a[2] >= 0.8 * a[1] && a[2] <= 1.05 * a[1] + 20 && a[3] >= 0.7 * a[2]) }'; then
	ok "JRetire without the walk: unloaded code's scopes, read as it loaded; spin ${rt#* } ms (spin's truth, inclusive, step's: $rt)"
else
	notok "JRetire without the walk: exit $rrc; spin's truth, spin's and step's inclusive ms: $rt"
	sed 's/^/#   /' r.err | head -3
fi

# A compiled method's prologue and epilogue: JCalls.tiny, compiled but
# not inlined (dontinline), is called so often that about half the
# samples interrupt it before its frame is whole or after it is torn
# down, where AsyncGetCallTrace cannot step to its caller ("unknown Java
# code").  The collector walks from the caller, by the return address the
# instructions there say where it is, and gives tiny's own frame by its
# code (its compile id; the reader names it from the code's scopes).
# Before, loop's inclusive CPU was 233 ms of its 500 (272 of 566 samples
# without Java frames), and tiny was half "JCalls.tiny [compiled]".  With
# ZGC the prologue has an entry barrier after the frame is made and
# before it counts as whole: 23 samples were still "unknown Java code"
# until the collector told that part by the frame's size.
for gc in G1 Z; do
	rm -rf c.er
	"$SONDE" collect -p hi -o c.er java -XX:+Use${gc}GC -XX:CompileCommand=quiet \
		-XX:CompileCommand=dontinline,JCalls.tiny -cp . JCalls 500 >c.out 2>c.err
	crc=$?
	again=$(sed -n 's/.*with Java frames (\([0-9]*\) of them from the first Java frame below.*/\1/p' c.er/log.xml)
	unk=$(sed -n 's/.* \([0-9]*\) without (in unknown Java code).*/\1/p' c.er/log.xml)
	if [ $crc = 0 ] && [ "${again:-0}" -ge 100 ] && [ "${unk:-0}" -le 5 ]; then
		ok "JCalls ${gc}GC: exit 0; $again samples walked from the caller of the interrupted frame, ${unk:-0} in unknown Java code"
	else
		notok "JCalls ${gc}GC: exit $crc; walked from the caller: '$again'; in unknown Java code: '$unk'"
		sed 's/^/#   /' c.err | head -3
	fi
	judge "JCalls ${gc}GC" c.out c.er
	roots "JCalls ${gc}GC" c.er
	caller c.er JCalls.tiny JCalls.loop
	if grep -q 'JCalls\.tiny \[compiled\]' fn.txt; then
		notok "JCalls ${gc}GC: tiny is also a native frame: $(grep 'JCalls\.tiny \[compiled\]' fn.txt)"
	else
		ok "JCalls ${gc}GC: tiny's samples all have its Java frame"
	fi
done

# A JVM that publishes no vmStructs (not HotSpot's layout, or a build
# without them: the table's symbols, found first by the agent's dlsym,
# NULL): the agent says so in one line and still gives every sample its
# Java frames from AsyncGetCallTrace; what needs the JVM's layout (the
# frames' kinds below the top, the code heaps' poller, the prologue's
# walk, the scopes) is off.
printf 'void *gHotSpotVMStructs = 0, *gHotSpotVMTypes = 0;\n' >novm.c
if gcc -shared -fPIC -o libnovm.so novm.c 2>/dev/null; then
	rm -rf v.er
	LD_PRELOAD=$(pwd)/libnovm.so "$SONDE" collect -p hi -o v.er java -cp . JHot 300 >v.out 2>v.err
	vrc=$?
	if [ $vrc = 0 ] && grep -q 'does not say where its threads.*(vmStructs)' v.er/log.xml && [ ! -s v.er/jvm.code ]; then
		ok "JHot without vmStructs: exit 0, one line in log.xml, no poller"
	else
		notok "JHot without vmStructs: exit $vrc; $(grep -o 'text="Java[^"]*"' v.er/log.xml | head -3 | tr '\n' ' ')"
	fi
	judge "JHot without vmStructs" v.out v.er
else
	notok "gcc could not build the vmStructs shim"
fi

# JNI: main -> JNative.nativeBurn -> Java_JNative_nativeBurn -> c_burn,
# and the callback under the native method
rm -rf n.er
"$SONDE" collect -p hi -o n.er java -Djava.library.path=. -cp . JNative 400 >sonde.out 2>sonde.err
if [ $? = 0 ]; then ok "JNative: exit 0 under sonde collect"; else notok "JNative: exit status"; sed 's/^/#   /' sonde.err | head -5; fi
judge "JNative" sonde.out n.er
caller n.er c_burn Java_JNative_nativeBurn
caller n.er Java_JNative_nativeBurn JNative.nativeBurn
caller n.er JNative.nativeBurn JNative.main
# user mode keeps native code where Java called it
VM=user caller n.er c_burn Java_JNative_nativeBurn
VM=user caller n.er Java_JNative_nativeBurn JNative.nativeBurn
# the callback under the C that called it: the native walk crosses the
# code cache to the JVM's call stub (before, JNative.nativeBurn was its
# caller: the C frames between were lost).  Not all of it: the JVM's own
# calls into Java as the callback first runs (linking its string
# concatenation, about 2% here) make a run of the code cache with no JNI
# frame to pair it with, and keep the Java frames together.
VM=user caller n.er JNative.callback Java_JNative_nativeBurn
share=$(awk '$7 ~ /^\*/ { incl = $5 } NF >= 7 && $7 == "Java_JNative_nativeBurn" { a = $1 } END { printf "%.3f", (incl > 0) ? a / incl : 0 }' cs.txt)
if awk -v s="$share" 'BEGIN { exit !(s >= 0.9) }'; then
	ok "JNative.callback: $share of its time under Java_JNative_nativeBurn (user mode)"
else
	notok "JNative.callback: only $share of its time under Java_JNative_nativeBurn (user mode)"
fi
VM=machine caller n.er JNative.callback 'JavaCalls::call_helper'
# below the native method's C code: main ran interpreted (the walk
# crosses the call stub to the frames below the C that called Java)
deep "JNative" "$(kinds n.er JNative.main)" JNative.main
roots "JNative" n.er

# the guest: the JVM's signals, threads and class unloading as they were
java -cp . JGuest 20 >plain.out 2>&1
prc=$?
for mode in jit xint; do
	set --
	[ $mode = xint ] && set -- -J -Xint
	rm -rf g.er
	"$SONDE" collect -p hi "$@" -o g.er java -cp . JGuest 20 >sonde.out 2>sonde.err
	src=$?
	[ $mode = xint ] && { java -Xint -cp . JGuest 20 >plain.out 2>&1; prc=$?; }
	if [ $prc = 0 ] && [ $src = 0 ] && cmp -s plain.out sonde.out && ! [ -s sonde.err ]; then
		ok "JGuest $mode: null checks, stack overflows, 3200 threads, 200 classes unloaded: the same output ($(tr '\n' ' ' <sonde.out))"
	else
		notok "JGuest $mode: exit $src ($prc plain), output '$(tr '\n' ' ' <sonde.out)', plain '$(tr '\n' ' ' <plain.out)'"
		sed 's/^/#   /' sonde.err | head -5
	fi
	n=$("$SONDE" print -limit 0 -functions g.er 2>/dev/null | grep -c 'JGuest\.')
	[ "$n" -ge 3 ] && ok "JGuest $mode: its methods are named ($n)" || notok "JGuest $mode: $n of its methods named"
done

# -j off: no agent, no Java frames
rm -rf o.er
"$SONDE" collect -p hi -j off -o o.er java -cp . JHot 100 >/dev/null 2>&1
if [ ! -e o.er/methods ] && ! "$SONDE" print -limit 0 -functions o.er 2>/dev/null | grep -q "JHot\."; then
	ok "-j off: no method table and no Java method"
else
	notok "-j off still recorded Java"
fi
# -j on for a program that is no JVM: a note, the program as it was
rm -rf t.er
rc 0 "-j on for a program that is no JVM: it runs" "$SONDE" collect -j on -o t.er "$FIX/burn" 1 0.05
grep -q "is not a JVM" err.txt && ok "-j on for a program that is no JVM: a note says so" ||
	notok "-j on for a program that is no JVM: no note ($(head -2 err.txt))"
# a collector without the agent: -j on is an error, the default profiles
# the JVM natively
mkdir -p lib/sonde && cp "$B"/lib/sonde/libsonde_collector.so lib/sonde/
rm -rf a.er
SONDE_COLLECTOR=$TMP/lib/sonde/libsonde_collector.so rc 2 "no agent, -j on: an error" "$SONDE" collect -j on -o a.er java -cp . JHot 100
grep -q "cannot find the Java agent" err.txt && ok "no agent, -j on: the message names it" || notok "no agent, -j on: '$(head -1 err.txt)'"
rm -rf a.er
SONDE_COLLECTOR=$TMP/lib/sonde/libsonde_collector.so rc 0 "no agent, by default: the JVM is profiled natively" "$SONDE" collect -p hi -o a.er java -cp . JHot 100
if grep -q "no Java frames" err.txt && "$SONDE" print -functions a.er 2>/dev/null | grep -q "<Total>"; then
	ok "no agent, by default: a warning, and a native profile"
else
	notok "no agent, by default: '$(head -1 err.txt)'"
fi

# A real program: javac compiling a generated source (100 classes of 25
# methods).  Its output as without sonde; its compiled code makes leaf
# calls (array copies, the G1 barriers' slow paths) and goes through
# stubs where AsyncGetCallTrace cannot walk from the interrupted context:
# those samples get their Java frames from the first Java frame below
# (the agent's second try), and they are rooted as the others are, at
# javac's entry (a wrong context would give cut or mis-rooted stacks).
awk 'BEGIN { print "import java.util.*;\npublic class Big {"
	for (c = 0; c < 100; c++) { printf " static class C%d {\n", c
		for (m = 0; m < 25; m++) printf "  static int m%d(int x, List<String> l) { int s = x; for (int i = 0; i < %d; i++) { s += i * %d ^ (s >> 3); if (s %% 7 == %d) l.add(\"v\" + s); } return s + l.size(); }\n", m, m + 3, c, m % 7
		print " }" }
	print " public static void main(String[] a) {}\n}" }' >Big.java
rm -rf big.er out && mkdir out
"$SONDE" collect -p hi -o big.er javac -d out Big.java >javac.out 2>javac.err
jrc=$?
if [ $jrc = 0 ] && [ -f out/Big\$C99.class ] && [ ! -s javac.out ]; then
	ok "javac under sonde collect: exit 0, its 101 classes written, nothing said"
else
	notok "javac under sonde collect: exit $jrc; $(head -2 javac.err)"
fi
again=$(sed -n 's/.*with Java frames (\([0-9]*\) of them from the first Java frame below.*/\1/p' big.er/log.xml)
walks=$(sed -n 's/.*text="Java: \([0-9]*\) samples of Java threads, \([0-9]*\) with Java frames.*/\1 \2/p' big.er/log.xml)
# (the stacks given Java frames from the compiled code's scopes, where
# both walks failed, are left out: they stop at the compiled code)
"$SONDE" print -dump profile big.er 2>/dev/null | awk '
	/^sample/ { if (java && !scoped) { t++; if (root ~ /com\.sun\.tools\.javac\.Main\.main\(|sun\.launcher\.LauncherHelper\./) g++ } java = scoped = 0; next }
	/^ *#[0-9]/ && $3 ~ /^java/ { java = 1; root = $4; if (/\[from scopes\]$/) scoped = 1 }
	END { if (java && !scoped) { t++; if (root ~ /com\.sun\.tools\.javac\.Main\.main\(|sun\.launcher\.LauncherHelper\./) g++ } printf "%d %d", g, t }' >roots.txt
if [ "${again:-0}" -gt 0 ] && awk -v r="$(cat roots.txt)" 'BEGIN { split(r, v, " "); exit !(v[2] > 300 && v[1] >= 0.98 * v[2]) }'; then
	ok "javac: $again samples walked from the first Java frame below a leaf call or stub (Java samples, with frames: $walks); rooted at javac's entry: $(cat roots.txt)"
else
	notok "javac: walked again: '$again' (Java samples, with frames: $walks); rooted at javac's entry: $(cat roots.txt)"
fi
hot=$("$SONDE" print -limit 5 -functions big.er 2>/dev/null | grep -c 'com\.sun\.tools\.javac\.')
[ "$hot" -ge 1 ] && ok "javac: its hot methods are named ($hot of the first five)" ||
	notok "javac: no javac method among the first five functions"
