# Synchronization wait tracing (-s): the syncwait fixture imposes waits of
# known length on every traced function (mutex, condvar, rwlock, semaphore,
# barrier, join, timed and clock variants) and measures each call itself
# with CLOCK_MONOTONIC around it.  Under a 1 ms threshold exactly the
# imposed calls must be recorded, with the same summed wait; under "all"
# every call; under "on" (calibrated threshold) at least the imposed ones.
# The program's results and errno must not change.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
SW=$FIX/syncwait

# The fixture's deterministic output: everything but its measurements.
stable() { grep -v -e '^truth ' -e '^version ' "$1"; }

# events EXP: one line per recorded event, "func wait_ns object result leaf"
# (leaf: 1 when the first frame of its stack is in the fixture, else 0),
# from sonde print -dump.
events() {
	"$SONDE" print -dump sync "$1" | awk '
		function flush() { if (f != "") print f, w, o, r, (leaf == "" ? 0 : leaf); f = "" }
		/^sync [0-9]+  / {
			flush()
			for (i = 1; i < NF; i++) {
				if ($i == "func") f = $(i + 1)
				else if ($i == "wait") w = $(i + 1)
				else if ($i == "object") o = $(i + 1)
				else if ($i == "result") r = $(i + 1)
			}
			leaf = ""; next
		}
		/^    #/ { if (f != "" && leaf == "") leaf = index($0, "syncwait") ? 1 : 0; next }
		END { flush() }'
}

# truth FIELD FUNC [OUT]: a field of the fixture's truth line for FUNC.
truth() {
	awk -v k="$1" -v f="$2" '$1 == "truth" && $2 == f {
		for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }' "${3:-plain.out}"
}

FUNCS="pthread_mutex_lock pthread_mutex_timedlock pthread_mutex_clocklock pthread_cond_wait
pthread_cond_timedwait pthread_cond_clockwait pthread_rwlock_rdlock pthread_rwlock_timedrdlock
pthread_rwlock_clockrdlock pthread_rwlock_wrlock pthread_rwlock_timedwrlock pthread_rwlock_clockwrlock
sem_wait sem_timedwait sem_clockwait pthread_barrier_wait pthread_join pthread_timedjoin_np
pthread_clockjoin_np"

"$SW" >plain.out 2>&1
prc=$?
if [ $prc = 0 ]; then ok "plain run: every imposed wait took place ($(sed -n 's/^truth total_ms=//p' plain.out) ms)"; else
	notok "plain run exited $prc"
	sed 's/^/#   /' plain.out | tail -5
fi

# run MODE: collect with -s MODE into MODE.er, output in MODE.out.
run() {
	rm -rf "$1.er"
	"$SONDE" collect -p off -s "$1" -o "$1.er" "$SW" >"$1.out" 2>&1
	rc=$?
	if [ $rc = 0 ] && stable plain.out >p.stable && stable "$1.out" >c.stable && cmp -s p.stable c.stable; then
		ok "-s $1: runs to completion, results and errno unchanged"
	else
		notok "-s $1: rc=$rc, output differs from the plain run"
		diff p.stable c.stable | sed 's/^/#   /' | head -20
	fi
	events "$1.er" >"$1.ev"
}

# ---- -s 1000: exactly the imposed waits, with their measured length ----
#
# The tracer's wait lies inside the fixture's window around the same call,
# so per function the summed wait is at most the fixture's measurement
# (imposed_ns), exactly.  From below it is bounded by what the fixture
# knows without the tracer's way back (where the tracer writes its event
# after its own clock read: a cold stack walk, up to half a millisecond):
# no imposed call returns before the instant the fixture released its
# object or its deadline passed (imposed_lo_ns, from each call's start).
# The tracer's clock is read after the call's start by the interposer's
# entry path: 0.25 ms a call is allowed for it (a new thread's first call
# takes up to 0.16 ms here).  A thread preempted in that path shows a
# longer difference, by a scheduler slice: on a machine busy enough for
# that the whole run is repeated once, saying so.
measure_1000() {
	run 1000
	check "-s 1000: log.xml has threshold_ns=1000000" grep -q '<trace kind="sync" threshold_ns="1000000"/>' 1000.er/log.xml
	check "-s 1000: log.xml has mode=1000" grep -q '<trace kind="sync" mode="1000"/>' 1000.er/log.xml
	for f in $FUNCS; do
		exp=$(truth imposed $f 1000.out)
		tns=$(truth imposed_ns $f 1000.out)
		lo=$(truth imposed_lo_ns $f 1000.out)
		omax=$(truth other_max_ns $f 1000.out)
		set -- $(awk -v f=$f '$1 == f { n++; s += $2 } END { printf "%d %.0f\n", n, s }' 1000.ev)
		n=$1 sum=$2
		if [ -n "$exp" ] && [ -n "$lo" ] && [ "$n" = "$exp" ] && [ "$exp" -gt 0 ] &&
			awk -v s="$sum" -v t="$tns" -v lo="$lo" -v n="$n" 'BEGIN { exit !(s <= t && s >= lo - n * 250000 && lo > 0.5 * t) }'; then
			ok "-s 1000: $f: $n events (imposed $exp), wait $sum ns, between $lo ns released and $tns ns measured"
		else
			notok "-s 1000: $f: $n events, expected $exp; wait $sum ns vs released $lo ns, measured $tns ns (longest other call $omax ns)"
		fi
	done
}
measure_1000 >m1.txt
if grep -q '^not ok' m1.txt; then
	note "-s 1000 repeated once; the first run had:"
	grep '^not ok' m1.txt | sed 's/^/#   /'
	measure_1000
else
	cat m1.txt
fi
total=$(wc -l <1000.ev)
expected=$(sed -n 's/^truth .* imposed=\([0-9]*\) .*/\1/p' 1000.out | awk '{ s += $1 } END { print s }')
if [ "$total" = "$expected" ]; then ok "-s 1000: $total events in all, none of another function"; else
	notok "-s 1000: $total events in all, expected $expected"; fi

# Results as the calls returned them: a timed call of each kind timed out
# (ETIMEDOUT, for sem_* the errno of its -1), the lock of a robust mutex
# whose owner died meanwhile got EOWNERDEAD, everything else 0.
res() { awk -v f=$1 '$1 == f { print $4 }' 1000.ev | sort -n | tr '\n' ' '; }
for f in pthread_mutex_timedlock pthread_mutex_clocklock pthread_cond_timedwait pthread_cond_clockwait \
	pthread_rwlock_timedrdlock pthread_rwlock_clockrdlock pthread_rwlock_timedwrlock pthread_rwlock_clockwrlock \
	sem_timedwait sem_clockwait pthread_timedjoin_np pthread_clockjoin_np; do
	r=$(res $f)
	if [ "$r" = "0 110 " ]; then ok "-s 1000: $f results 0 and ETIMEDOUT"; else notok "-s 1000: $f results '$r'"; fi
done
r=$(res pthread_mutex_lock)
if [ "$r" = "0 0 0 130 " ]; then ok "-s 1000: pthread_mutex_lock results 0 0 0 EOWNERDEAD"; else
	notok "-s 1000: pthread_mutex_lock results '$r'"; fi
r=$(for f in pthread_cond_wait pthread_rwlock_rdlock pthread_rwlock_wrlock sem_wait pthread_join; do res $f; done)
if [ "$r" = "0 0 0 0 0 0 0 0 0 0 " ]; then ok "-s 1000: untimed waits all returned 0"; else
	notok "-s 1000: untimed waits returned '$r'"; fi

# Every event's stack starts at the call site in the fixture (the
# interposer's own frames are dropped).
bad=$(awk '$5 != 1' 1000.ev | wc -l)
if [ "$bad" = 0 ] && [ "$total" -gt 0 ]; then ok "-s 1000: every event's leaf frame is in the fixture"; else
	notok "-s 1000: $bad events whose leaf frame is elsewhere"
	"$SONDE" print -dump sync 1000.er | head -20 | sed 's/^/#   /'; fi

# The fixture, built here against glibc 2.36, references pthread_join and
# sem_wait at GLIBC_2.34 and (through .symver) at the pre-2.34
# GLIBC_2.2.5; calls through either version are traced.
for sym in pthread_join@GLIBC_2.34 pthread_join@GLIBC_2.2.5 sem_wait@GLIBC_2.34 sem_wait@GLIBC_2.2.5; do
	f=${sym%@*}
	obj=$(sed -n "s/^version $sym object=//p" 1000.out)
	refs=$(objdump -T "$SW" | awk -v f=$f -v v=${sym#*@} '$NF == f && index($0, v)' | wc -l)
	n=$(awk -v f=$f -v o="$obj" '$1 == f && $3 == o' 1000.ev | wc -l)
	if [ "$refs" -ge 1 ] && [ -n "$obj" ] && [ "$n" = 1 ]; then ok "$sym: referenced by the fixture and traced"; else
		notok "$sym: $refs references, $n events on object '$obj'"; fi
done

# ---- -s all: every call ----
run all
check "-s all: log.xml has threshold_ns=0 and mode=all" \
	sh -c 'grep -q "threshold_ns=\"0\"" all.er/log.xml && grep -q "mode=\"all\"" all.er/log.xml'
bad=
for f in $FUNCS; do
	calls=$(truth calls $f all.out)
	n=$(awk -v f=$f '$1 == f' all.ev | wc -l)
	[ "$n" = "$calls" ] || bad="$bad $f:$n/$calls"
done
if [ -z "$bad" ]; then ok "-s all: every call of every function recorded ($(wc -l <all.ev) events)"; else
	notok "-s all: events/calls:$bad"; fi

# ---- -s on: calibrated threshold ----
run on
thr=$(sed -n 's/.*<trace kind="sync" threshold_ns="\([0-9]*\)".*/\1/p' on.er/log.xml)
cal=$(sed -n 's/.*<trace kind="sync" calibration_ns="\([0-9]*\)".*/\1/p' on.er/log.xml)
if [ -n "$thr" ] && [ -n "$cal" ] && [ "$thr" = $((cal * 6)) ] && [ "$thr" -gt 0 ] && [ "$thr" -lt 100000 ] &&
	grep -q 'mode="on"' on.er/log.xml; then
	ok "-s on: calibrated threshold $thr ns (6 x $cal ns per uncontended call)"
else notok "-s on: threshold '$thr', calibration '$cal'"; fi
bad=
for f in $FUNCS; do
	calls=$(truth calls $f on.out)
	imp=$(truth imposed $f on.out)
	n=$(awk -v f=$f '$1 == f' on.ev | wc -l)
	[ "$n" -ge "$imp" ] && [ "$n" -le "$calls" ] || bad="$bad $f:$n($imp..$calls)"
done
short=$(awk -v t="${thr:-0}" '$2 < t' on.ev | wc -l)
if [ -z "$bad" ] && [ "$short" = 0 ]; then
	ok "-s on: every imposed wait recorded, no call twice, none below the threshold ($(wc -l <on.ev) events)"
else notok "-s on: events(imposed..calls):$bad; $short below the threshold"; fi

# ---- the tracing library without a collection: calls pass through ----
LD_PRELOAD=$B/lib/sonde/libsonde_sync.so "$SW" >pre.out 2>&1
rc=$?
if [ $rc = 0 ] && stable pre.out | cmp -s p.stable -; then ok "preloaded without collecting: unchanged"; else
	notok "preloaded without collecting: rc=$rc"; stable pre.out | diff p.stable - | sed 's/^/#   /' | head; fi

# Mutual exclusion under the inline fast path for default mutexes (and the
# general path for recursive and error-checking ones): exact counts from 4
# contending threads, and the same results as without the tracer.
MC=$FIX/mutexcount
"$MC" 4 100000 >mc.plain 2>&1
for s in on all; do
	"$SONDE" collect -p hi -s $s -o mc$s.er "$MC" 4 100000 >mc.$s 2>&1
	if cmp -s mc.plain mc.$s && grep -q "default exact, recursive exact, errorcheck exact" mc.$s; then
		ok "-s $s: contended default, recursive and error-checking mutexes: exact counts, same results"
	else
		notok "-s $s: mutexcount output differs"
		diff mc.plain mc.$s | sed 's/^/#   /'
	fi
done
check "-s on: the inline default-mutex path passed its start-up check" grep -q 'inline_mutex="1"' mcon.er/log.xml
