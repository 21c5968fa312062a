# Counter overflow profiling (-h, issue 18).  The pagefaults fixture
# touches a known number of fresh pages in each of three functions (300,
# 700 and 1100 per repeat): under -h page-faults,1 each function's
# exclusive Page Faults must be exactly that, in the main thread and in a
# thread created later, alone and with clock profiling beside it.  A
# counter this machine cannot count (cycles, on a VM without a PMU) is a
# one-line error with exit status 2 before the target starts, and sonde
# collect alone lists the counters that can be opened here.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
PF=$FIX/pagefaults

# excl EXP FUNC: FUNC's exclusive page faults in sonde print -functions
# (the default metrics of a counter experiment: page faults first).
excl() {
	"$SONDE" print -metrics e.page-faults:name -functions "$1" | awk -v f="$2" '$NF == f { print $1; found = 1 } END { if (!found) print "none" }'
}

exact() { # EXP REPS WHAT
	a=$(excl "$1" touch_a) b=$(excl "$1" touch_b) c=$(excl "$1" touch_c)
	if [ "$a" = $((300 * $2)) ] && [ "$b" = $((700 * $2)) ] && [ "$c" = $((1100 * $2)) ]; then
		ok "$3: page faults exact per function (touch_a $a, touch_b $b, touch_c $c)"
	else
		notok "$3: page faults per function: touch_a $a (want $((300 * $2))), touch_b $b (want $((700 * $2))), touch_c $c (want $((1100 * $2)))"
	fi
}

# ---- exact counts, main thread ----
rc 0 "collect -h page-faults,1 runs the fixture" "$SONDE" collect -o pf.er -h page-faults,1 "$PF" 3
exact pf.er 3 "main thread"
"$SONDE" print -functions pf.er >plain.txt 2>&1
if grep -q "sorted by metric: Exclusive Page Faults" plain.txt && grep -q "Faults\*" plain.txt; then
	ok "a plain -functions shows and sorts by the counter's metric"
else
	notok "a plain -functions shows and sorts by the counter's metric"
	sed 's/^/#   /' plain.txt | head -8
fi
if ! grep -q "Total CPU" plain.txt; then ok "-h without -p: no clock profiling (as gprofng)"; else notok "-h without -p recorded clock profiling"; fi
"$SONDE" print -metric_list pf.er >ml.txt
if grep -q "Exclusive Page Faults: e+%page-faults" ml.txt; then ok "-metric_list names the counter's metric"; else
	notok "-metric_list names the counter's metric"
	sed 's/^/#   /' ml.txt | head
fi
"$SONDE" print -header pf.er >hdr.txt
if grep -Eq "^Counters: +page-faults, interval 1 \(Page Faults\): [0-9]+ samples, [0-9]+ events" hdr.txt; then
	ok "-header's Counters line"
else
	notok "-header's Counters line"
	grep -i counter hdr.txt | sed 's/^/#   /'
fi
n=$("$SONDE" print -dump counters pf.er | grep -c '^counter [0-9]')
[ "$n" -ge 6300 ] && ok "-dump counters: $n samples" || notok "-dump counters: $n samples (want at least 6300)"
"$SONDE" agg 'counters /counter == "page-faults"/ { @[func] = sum(weight); }' pf.er >agg.txt
if awk '$1 == "touch_c" && $2 == 3300 { f = 1 } END { exit !f }' agg.txt; then
	ok "sonde agg: counters events, sum(weight) of touch_c is 3300"
else
	notok "sonde agg: counters events"
	sed 's/^/#   /' agg.txt | head
fi

# ---- a thread created after the collector started gets its own counters ----
rc 0 "collect -h page-faults,1 with a thread" "$SONDE" collect -o thr.er -h page-faults,1 "$PF" 2 0 - thread
exact thr.er 2 "a thread created later"

# ---- the counter and clock profiling together ----
rc 0 "collect -p hi -h page-faults,1" "$SONDE" collect -o both.er -p hi -h page-faults,1 "$PF" 2 300
exact both.er 2 "with clock profiling"
cpu=$("$SONDE" print -metrics e.totalcpu:name -functions both.er | awk '$NF == "burn_cpu" { print $1 }')
if [ -n "$cpu" ] && within "$cpu" 0.3 20; then ok "with clock profiling: burn_cpu's CPU time $cpu s (0.3 s burnt)"; else
	notok "with clock profiling: burn_cpu's CPU time '$cpu' (0.3 s burnt)"
fi
"$SONDE" print -functions both.er >both.txt
if grep -q "Total CPU" both.txt && grep -q "Page" both.txt; then ok "with clock profiling: both metrics in the default -functions"; else
	notok "with clock profiling: both metrics in the default -functions"
	sed 's/^/#   /' both.txt | head -8
fi

# ---- a clock sample and an overflow in one signal ----
# SIGTRAP does not queue: a page fault's overflow and a clock sample due
# at the same return to user space make one signal, and the overflow's
# page fault went to the next sample of the counter (another function's
# when it was a function's last), or to none at the end.  At 10 kHz a run
# of 8 rounds met it in 1 of 3 runs before; exact in each of 8 runs now.
bad=0
for i in 1 2 3 4 5 6 7 8; do
	"$SONDE" collect -o m$i.er -p 0.1 -h page-faults,1 "$PF" 8 0 >/dev/null 2>&1 || bad=$((bad + 1))
	a=$(excl m$i.er touch_a) b=$(excl m$i.er touch_b) c=$(excl m$i.er touch_c)
	if [ "$a" != 2400 ] || [ "$b" != 5600 ] || [ "$c" != 8800 ]; then
		bad=$((bad + 1))
		note "run $i at -p 0.1: touch_a $a, touch_b $b, touch_c $c (want 2400, 5600, 8800)"
	fi
done
[ $bad = 0 ] && ok "-p 0.1 -h page-faults,1: page faults exact per function in 8 runs" ||
	notok "-p 0.1 -h page-faults,1: $bad of 8 runs not exact"

# ---- other software counters open and record ----
rc 0 "collect -h context-switches,1,task-clock,1000000" "$SONDE" collect -o sw.er -h context-switches,1,task-clock,1000000 "$PF" 1 200
ts=$("$SONDE" print -metrics e.task-clock:name -functions sw.er | awk '$NF == "burn_cpu" { print $1 }')
if [ -n "$ts" ] && within "$ts" 200000000 20; then ok "task-clock counter: burn_cpu $ts ns (0.2 s burnt)"; else
	notok "task-clock counter: burn_cpu '$ts' ns (0.2 s burnt)"
fi

# ---- errors: before the target starts, exit 2, one line ----
rc 2 "-h with a bad value exits 2" "$SONDE" collect -o bad.er -h page-faults,1,2 "$PF" 1 0 ran.txt
[ ! -e ran.txt ] && [ ! -e bad.er ] && ok "a bad -h value: nothing ran, no experiment" || notok "a bad -h value: the target ran"
rc 2 "-h with an unknown counter exits 2" "$SONDE" collect -o bad.er -h no-such-counter "$PF" 1 0 ran.txt
grep -q "unknown counter 'no-such-counter'" err.txt && ok "an unknown counter is named" || notok "an unknown counter is named: $(cat err.txt)"
if [ -e /sys/bus/event_source/devices/cpu ] || [ -e /sys/bus/event_source/devices/cpu_core ]; then
	note "this machine has a CPU PMU: the no-PMU checks are skipped"
	rc 0 "collect -h cycles on a machine with a PMU" "$SONDE" collect -o hw.er -h cycles "$PF" 1
else
	rc 2 "-h cycles without a PMU exits 2" "$SONDE" collect -o hw.er -h cycles "$PF" 1 0 ran.txt
	if [ ! -e ran.txt ] && [ ! -e hw.er ]; then ok "-h cycles: the target never started, no experiment"; else
		notok "-h cycles: the target started (ran.txt or hw.er exists)"
	fi
	if [ "$(wc -l <err.txt)" = 1 ] && grep -q "counter 'cycles' cannot be opened: no hardware PMU" err.txt; then
		ok "-h cycles: one line naming the counter and the reason"
	else
		notok "-h cycles: one line naming the counter and the reason"
		sed 's/^/#   /' err.txt
	fi
fi

# ---- the counter list ----
"$SONDE" collect >list.txt 2>&1
for c in task-clock cpu-clock page-faults minor-faults major-faults context-switches cpu-migrations alignment-faults emulation-faults; do
	grep -Eq "^$c,[0-9]+ \('[^']+', alias for [a-z-]+; [a-z-]+\)$" list.txt || { notok "the counter list shows $c"; continue; }
done
grep -q "^page-faults,1009 ('Page Faults', alias for faults; events)$" list.txt && ok "the counter list: software counters in the reference's format" ||
	notok "the counter list: software counters in the reference's format"
a=$(grep -n '^Aliased counters available' list.txt | cut -d: -f1) r=$(grep -n '^Raw HW counters available' list.txt | cut -d: -f1)
[ -n "$a" ] && [ -n "$r" ] && [ "$a" -lt "$r" ] && ok "the counter list: aliased first, then raw" || notok "the counter list: aliased first, then raw"
if [ ! -e /sys/bus/event_source/devices/cpu ] && [ ! -e /sys/bus/event_source/devices/cpu_core ]; then
	[ "$(grep -c '^No hardware counters on this machine: ' list.txt)" = 1 ] && ok "the counter list says in one line why there are no hardware counters" ||
		notok "the counter list says in one line why there are no hardware counters"
	grep -q '^cycles' list.txt && notok "the counter list shows cycles without a PMU" || ok "the counter list does not show hardware counters it cannot open"
fi

# ---- a short fuzz run of the reader, the views, -dump and agg on a counters seed ----
san=
nm "$B/libsonde.a" 2>/dev/null | grep -q __asan_ && san=-fsanitize=address,undefined # an ASAN=1 build
if cc -std=gnu11 -O1 $san -I"$TOP/include" -I"$TOP/lib" -o fuzz_reader "$TOP/tests/fuzz/fuzz_reader.c" \
	"$B/libsonde.a" $LIBSONDE_LIBS 2>fz.err; then
	if UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		./fuzz_reader -n 150 -seed 1 -crashes "$TMP" both.er sw.er >fz.txt 2>&1; then
		ok "fuzz smoke (counters seeds): $(head -n 1 fz.txt | cut -d' ' -f2-3), no crash"
	else
		notok "fuzz smoke (counters seeds): the reader, a view or agg crashed"
		sed 's/^/#   /' fz.txt | tail -5
	fi
	if grep -Eq ' [1-9][0-9]* trace events read' fz.txt; then
		ok "fuzz smoke (counters seeds): counter events were read"
	else
		notok "fuzz smoke (counters seeds): no counter events read"
		sed 's/^/#   /' fz.txt | tail -3
	fi
else
	notok "fuzz smoke (counters seeds): the fuzz target does not build"
	sed 's/^/#   /' fz.err | head -5
fi
