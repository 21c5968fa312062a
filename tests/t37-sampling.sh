# Global sampling (-S, -l, -y), the collector API (pause/resume/sample/
# terminate, linked PIE, non-PIE and shared), -sample_select, and the
# -t START-END and -L limits, checked against the CPU time the fixtures
# burn on their own CPU clocks.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# e.totalcpu of FUNC (a prefix: burn_c.constprop.0) in seconds, 0 when absent.
cpu_of() { # EXP FUNC [PRINT OPTIONS...]
	exp=$1 fn=$2
	shift 2
	"$SONDE" print "$@" -printmode csv -functions "$exp" 2>/dev/null |
		awk -F, -v f="$fn" '$1 == f || index($1, f ".") == 1 { s += $3 } END { printf "%.4f\n", s / 1e9 }'
}
# near_and_zero VALUE WANT PCT OTHER: VALUE within PCT% of WANT, OTHER ~0.
near_and_zero() { # VALUE WANT PCT ZERO
	within "$1" "$2" "$3" && awk -v z="$4" 'BEGIN { exit !(z < 0.0005) }'
}
npoints() { # EXP REASON
	"$SONDE" print -printmode csv -samples "$1" | awk -F, -v r="$2" '$5 == r' | wc -l
}

# ---- periodic points on wall-clock time, while the target sleeps --------------
rc 0 "-S 0.5: a 3 s sleep runs its full length (no signal cuts it)" "$SONDE" collect -S 0.5 -o sl.er "$FIX/sampling" sleep 3
n=$(npoints sl.er periodic)
if [ "$n" -ge 5 ] && [ "$n" -le 7 ]; then ok "-S 0.5 over a 3 s sleep: $n periodic samples"; else
	notok "-S 0.5 over a 3 s sleep: $n periodic samples, wanted 5-7"; fi
"$SONDE" collect -S off -o off.er "$FIX/sampling" sleep 1 >/dev/null 2>&1
check "-S off: no periodic sample" test "$(npoints off.er periodic)" = 0

# ---- pause/resume excludes the paused burn from every metric ----------------------
pause_checks() { # EXP WHAT
	a=$(cpu_of "$1" burn_a) b=$(cpu_of "$1" burn_b) c=$(cpu_of "$1" burn_c)
	total=$("$SONDE" print -printmode csv -functions "$1" | awk -F, '$1 == "<Total>" { printf "%.4f\n", $3 / 1e9 }')
	note "$2: burn_a $a, burn_b $b, burn_c $c, total $total s (burned 0.3 each)"
	check "$2: burn_a recorded (0.3 s +-10%)" within "$a" 0.3 10
	check "$2: burn_c recorded (0.3 s +-10%)" within "$c" 0.3 10
	check "$2: the paused burn_b gets nothing" awk -v b="$b" 'BEGIN { exit !(b < 0.005) }'
	check "$2: total is burn_a + burn_c, the pause not carried into the next sample" within "$total" 0.6 5
	check "$2: -samples shows the pause and resume points" \
		sh -c "[ $(npoints "$1" pause) = 1 ] && [ $(npoints "$1" resume) = 1 ]"
	"$SONDE" print -printmode csv -samples "$1" >smp.csv
	check "$2: the paused sample has no recorded CPU time" awk -F, '$5 == "resume" { f = 1; exit !($7 < 5000000) } END { exit !f }' smp.csv
}
for how in pie nopie so; do
	rc 0 "API ($how): the fixture runs under sonde collect" "$SONDE" collect -p hi -S off -o api_$how.er "$FIX/apiuse_$how" pause
	pause_checks api_$how.er "sonde_pause/sonde_resume ($how)"
done
rc 0 "-y USR1,r: the fixture runs" "$SONDE" collect -p hi -S off -y USR1,r -o y.er "$FIX/sampling" ysig 10
pause_checks y.er "-y USR1,r (kill to itself)"
# As Oracle's collect: without ,r recording starts paused.
"$SONDE" collect -p hi -S off -y SIGUSR1 -o yp.er "$FIX/sampling" ysig 10 >/dev/null 2>&1
a=$(cpu_of yp.er burn_a) b=$(cpu_of yp.er burn_b)
check "-y USR1 starts paused: only burn_b recorded ($a, $b)" near_and_zero "$b" 0.3 10 "$a"

# Heap tracing records nothing while paused either (the inline path).
"$SONDE" collect -p off -S off -H on -y USR1 -o yh.er "$FIX/sampling" churn 0.3 >/dev/null 2>&1
"$SONDE" print -header yh.er >yh.txt 2>&1
check "-y paused from the start: no allocation traced" grep -q 'Heap tracing: *0 allocations' yh.txt

# ---- -l signal points and labels ------------------------------------------------------
"$SONDE" collect -S off -l USR1 -o l.er "$FIX/sampling" lsig 10 4 >/dev/null 2>&1
check "-l USR1: one signal sample per kill (4)" test "$(npoints l.er signal)" = 4
"$SONDE" collect -S off -l USR2 -o lh.er "$FIX/sampling" handler 12 >lh.out 2>&1
check "-l: the target's own handler still runs after sonde's" grep -q 'handled 3' lh.out
check "-l: and the signal still samples" test "$(npoints lh.er signal)" = 3
check "-l: the handler conflict is logged" grep -q 'target set an action for signal 12' lh.er/log.xml

# Heap events carry a millisecond tick, not their own clock read; a point
# still splits allocations made just before and just after it.
"$SONDE" collect -p off -S off -H on -l USR1 -o hp.er "$FIX/sampling" heapphases 10 >/dev/null 2>&1
for k in 1 2 3; do
	got=$("$SONDE" print -printmode csv -metrics e.heapalloccnt:e.heapallocbytes:name -sample_select $k \
		-functions hp.er 2>&1 | awk -F, '$1 == "heap_phase" { print $3 "," $4 }')
	want="$((100 * k)),$((1000 * k * k))"
	if [ "$got" = "$want" ]; then ok "-sample_select $k: heap_phase allocations,bytes = $got"; else
		notok "-sample_select $k: heap_phase allocations,bytes = '$got', truth $want"; fi
done

"$SONDE" collect -p hi -S off -o lab.er "$FIX/apiuse_pie" sample >/dev/null 2>&1
"$SONDE" print -samples lab.er >lab.txt
check "sonde_sample's label appears in -samples" grep -Eq '^ +1 .* api .*after f1$' lab.txt
f1=$(cpu_of lab.er burn_f1 -sample_select 1) f2=$(cpu_of lab.er burn_f2 -sample_select 1)
check "-sample_select 1: burn_f1 only ($f1, $f2)" near_and_zero "$f1" 0.3 10 "$f2"
f1=$(cpu_of lab.er burn_f1 -sample_select 2) f2=$(cpu_of lab.er burn_f2 -sample_select 2)
check "-sample_select 2: burn_f2 only ($f1, $f2)" near_and_zero "$f2" 0.3 10 "$f1"
f1=$(cpu_of lab.er burn_f1 -sample_select 1-2)
check "-sample_select 1-2 is everything again" within "$f1" 0.3 10
"$SONDE" print -sample_select 2 -samples lab.er >sel.txt
check "-sample_select restricts -samples too" sh -c "grep -Eq '^ +2 ' sel.txt && ! grep -Eq '^ +1 ' sel.txt"
"$SONDE" print -overview lab.er >ov.txt
check "-overview summarises the points" grep -q 'points by reason: start 1 end 1 api 1' ov.txt

# ---- the API without the collector: no-ops, PIE and non-PIE ---------------------------
for how in pie nopie so; do
	for mode in pause sample terminate; do
		out=$("$FIX/apiuse_$how" $mode 2>&1)
		if [ "$out" = ok ]; then ok "without sonde: apiuse_$how $mode runs"; else
			notok "without sonde: apiuse_$how $mode: $out"; fi
	done
done

# ---- sonde_terminate stops everything for the rest of the run -----------------------
rc 0 "sonde_terminate: the program runs on to its exit" "$SONDE" collect -p hi -S off -o term.er "$FIX/apiuse_nopie" terminate
a=$(cpu_of term.er burn_a) b=$(cpu_of term.er burn_b)
check "sonde_terminate: burn_a recorded, burn_b not ($a, $b)" near_and_zero "$a" 0.2 10 "$b"
check "sonde_terminate: no point after it" sh -c "! grep -q 'never recorded' term.er/overview"
"$SONDE" print -header term.er >/dev/null 2>&1
check "sonde_terminate: the experiment reads cleanly" test $? = 0

# ---- -t START-END ---------------------------------------------------------------------
"$SONDE" collect -p hi -t 0.5-1.5 -o tw.er "$FIX/sampling" burn 2.5 >/dev/null 2>&1
a=$(cpu_of tw.er burn_a)
# Truth: the process's own CPU time over the window, from the usage
# counters of the samples after the resume point (0.5 s) up to the pause
# point (1.5 s), chosen by their reasons: on a busy machine a point can be
# written tens of milliseconds late, past any fixed bound on its time.
window() { "$SONDE" print -printmode csv -samples tw.er | awk -F, 'NR > 1 && on { print } $5 == "resume" { on = 1 } $5 == "pause" { on = 0 }'; }
real=$(window | awk -F, '{ s += $12 + $13 } END { printf "%.4f\n", s / 1e9 }')
note "-t 0.5-1.5: recorded $a s, the process used $real s in the window"
check "-t 0.5-1.5 on a 2.5 s burn records the window's CPU time ($a of $real)" within "$a" "$real" 5
# The window itself (wall time, as CPU time depends on the machine's load):
# the samples from the resume to the pause span 1 s.
span=$(window | awk -F, '{ if (!n++ || $3 < lo) lo = $3; if ($4 > hi) hi = $4 } END { printf "%.4f\n", hi - lo }')
check "-t 0.5-1.5: the window's samples span 1 s ($span)" within "$span" 1.0 5
# (between the resume and pause points as written, 10 ms each side)
bounds=$("$SONDE" print -printmode csv -samples tw.er | awk -F, '$5 == "resume" { lo = $4 } $5 == "pause" { hi = $4 } END { print lo - 0.01, hi + 0.01 }')
"$SONDE" print -dump profile tw.er | awk -v lo="${bounds% *}" -v hi="${bounds#* }" '/^sample/ { t = $4; if (t < lo || t > hi) bad++ } END { exit bad > 0 }'
check "-t 0.5-1.5: every clock sample lies in the window" test $? = 0

# ---- -L: stops cleanly at about the limit -------------------------------------------------
rc 0 "-L 1 on a long heap-traced run" "$SONDE" collect -p hi -H on -L 1 -o big.er "$FIX/sampling" churn 3
size=$(du -sb big.er | awk '{print $1}')
note "-L 1: experiment of $size bytes"
check "-L 1: the experiment is at most 1.1 MB" test "$size" -le 1153434
check "-L 1: and not much smaller (at least 0.8 MB)" test "$size" -ge 838860
"$SONDE" print -header big.er >big.txt 2>&1
check "-L 1: the experiment is readable without read errors" sh -c "[ $? = 0 ] && grep -q 'Read problems (0)' big.txt"
check "-L 1: log.xml says the limit stopped recording" grep -q 'size limit (-L) was reached' big.er/log.xml
check "-L 1: its samples still end at the end point" test "$(npoints big.er end)" = 1

# ---- bad input: one line, non-zero -----------------------------------------------------
for args in "-S 0" "-S abc" "-S -1" "-l KILL" "-l NOPE" "-l 0" "-y USR1,x" "-y" "-t 2-1" "-t abc" "-t 1-" "-l USR1 -y USR1"; do
	# shellcheck disable=SC2086
	"$SONDE" collect $args -o bad.er "$FIX/sampling" sleep 0 >out.txt 2>err.txt
	r=$?
	if [ $r -ne 0 ] && [ "$(wc -l <err.txt)" = 1 ] && [ ! -d bad.er ]; then ok "collect $args: refused in one line"; else
		notok "collect $args: exit $r"; sed 's/^/#   /' err.txt; fi
done
for sel in 3-1 abc 0 "1," ",1"; do
	"$SONDE" print -sample_select "$sel" -functions lab.er >out.txt 2>err.txt
	r=$?
	if [ $r = 2 ] && [ "$(wc -l <err.txt)" = 1 ]; then ok "print -sample_select '$sel': refused in one line"; else
		notok "print -sample_select '$sel': exit $r"; sed 's/^/#   /' err.txt; fi
done
