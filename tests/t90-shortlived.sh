# Short-lived processes and threads (tests/fixtures/shortlived.c): the
# start and the end of each, a large part of its time, are charged where
# they were spent or named as unknown (doc/sonde-collect.md, "Starts and
# ends"), never to the functions that run the exit or the start.
#
# 40 runs of a 25 ms program in a shell loop, and 200 threads of 5 ms, at
# -p on (10 ms: most of a thread's time is its start and its end) and -p
# hi.  The truth is what work and worker measure of their own CPU time.
#
# Tolerances.  What work measured holds the collector's handler while it
# ran (it runs on the thread; <Collector> holds it, not work): the bound
# allows it, from the experiment's own count of the handler's time.  The
# rest of the error is the time after each thread's last sample, which
# the collector places below that sample's stack: here the working
# function's but for main's or the trampoline's last instructions, so the
# 3% of the issue is kept with room.  A thread's recorded total is its
# CPU clock at its thread_end event, to the nanosecond: every stretch of
# it is in one sample.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# col FUNC N: column N of FUNC's row in fn.csv (name, object, e.totalcpu,
# i.totalcpu, e.system)
col() { awk -F, -v f="$1" -v c="$2" '$1 == f { print $c; found = 1; exit } END { if (!found) print 0 }' fn.csv; }
total() { col "<Total>" 4; }
# pct A B: 100 * A / B
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? 100 * a / b : 999) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# exact EXP...: every thread's recorded CPU time is its thread_end's
exact() {
	bad=0 n=0
	for e in "$@"; do
		"$EXPCHECK" threads "$e" >thr.txt 2>/dev/null || { bad=$((bad + 1)); continue; }
		n=$((n + $(wc -l <thr.txt)))
		bad=$((bad + $(awk '$4 >= 0 && $3 != $4' thr.txt | wc -l)))
		awk '$4 >= 0 && $3 != $4 { print "  " FILENAME ": tid " $1 " recorded " $3 " ns, real " $4 " ns" }' thr.txt >&2
	done
	echo "$bad $n"
}

# check_fn LABEL FUNC TRUTH_NS [ROOT]: the working function's numbers in fn.csv
check_fn() {
	label=$1 fn=$2 truth=$3
	tot=$(total)
	got=$(col "$fn" 4)
	coll=$(col "<Collector>" 4)
	# the handler's time while fn ran: at most what the handler took
	# in all (the end event's handler_ns, summed over the experiments)
	hnd=$(cat handler.txt)
	lo=$(awk -v t="$truth" -v h="$hnd" 'BEGIN { printf "%.0f", t * 0.97 - h }')
	hi=$(awk -v t="$truth" 'BEGIN { printf "%.0f", t * 1.03 }')
	if le "$lo" "$got" && le "$got" "$hi"; then
		ok "$label: $fn's inclusive CPU $got ns, truth $truth ns ($(pct "$got" "$truth")%; the handler took $hnd ns)"
	else
		notok "$label: $fn's inclusive CPU $got ns, truth $truth ns ($(pct "$got" "$truth")%; bounds $lo..$hi; <Collector> $coll ns)"
	fi
	sys=$(col "$fn" 5)
	# its own system time is the clock reads that end its loop
	if le "$(pct "$sys" "$got")" 5; then ok "$label: $fn's System CPU is $(pct "$sys" "$got")% of its time"; else
		notok "$label: $fn's System CPU is $(pct "$sys" "$got")% of its time ($sys ns)"; fi
	worst="" wv=0
	for f in _dl_call_fini _dl_fini __run_exit_handlers exit _dl_init call_init __libc_start_main_impl \
		_dl_start_user __nptl_deallocate_tsd; do
		v=$(col "$f" 4)
		share=$(pct "$v" "$tot")
		if ! le "$share" 1; then worst="$worst $f=$share%"; fi
	done
	# _start before main and start_thread before the routine
	sv=$(awk -v a="$(col _start 4)" -v b="$(col main 4)" 'BEGIN { print a - b }')
	tv=$(awk -v a="$(col start_thread 4)" -v b="$(col worker 4)" 'BEGIN { print a - b }')
	le "$(pct "$sv" "$tot")" 1 || worst="$worst _start-before-main=$(pct "$sv" "$tot")%"
	le "$(pct "$tv" "$tot")" 1 || worst="$worst start_thread-before-worker=$(pct "$tv" "$tot")%"
	if [ -z "$worst" ]; then ok "$label: no function of the start or the exit path above 1% of <Total>"; else
		notok "$label: start or exit path functions above 1% of <Total>:$worst"; fi
}

fns() { "$SONDE" print -printmode csv -metrics e.totalcpu:i.totalcpu:e.system:name -functions "$1" >fn.csv 2>/dev/null; }

handler() {
	for e in "$@"; do
		grep -o 'kind="end"[^>]*handler_ns="[0-9]*"' "$e/log.xml" | sed 's/.*handler_ns="//; s/"//'
	done | awk '{ s += $1 } END { printf "%.0f\n", s }' >handler.txt
}

for iv in on hi; do
	rm -f truth.txt
	rc 0 "collect -p $iv: 40 runs of a 25 ms program" "$SONDE" collect -p $iv -o proc_$iv.er \
		sh -c "for i in \$(seq 40); do $FIX/shortlived proc 25 $TMP/truth.txt; done"
	fns proc_$iv.er
	runs=$(grep -c '^proc ' truth.txt)
	[ "$runs" = 40 ] || notok "-p $iv: $runs of 40 runs wrote their truth"
	truth=$(awk '$1 == "proc" { s += $2 } END { printf "%.0f", s }' truth.txt)
	handler proc_$iv.er proc_$iv.er/_*.er
	check_fn "-p $iv, 40 processes" work "$truth"
	set -- $(exact proc_$iv.er/_*.er)
	if [ "$1" = 0 ] && [ "$2" -ge 40 ]; then ok "-p $iv: each of $2 threads recorded exactly its CPU time"; else
		notok "-p $iv: $1 of $2 threads recorded other than their CPU time"; fi

	rm -f truth.txt
	rc 0 "collect -p $iv: 200 threads of 5 ms" "$SONDE" collect -p $iv -o thr_$iv.er \
		"$FIX/shortlived" threads 200 5 "$TMP/truth.txt"
	fns thr_$iv.er
	truth=$(awk '$1 == "threads" { print $2 }' truth.txt)
	handler thr_$iv.er
	check_fn "-p $iv, 200 threads" worker "${truth:-0}"
	set -- $(exact thr_$iv.er)
	if [ "$1" = 0 ] && [ "$2" -ge 201 ]; then ok "-p $iv: each of $2 threads recorded exactly its CPU time"; else
		notok "-p $iv: $1 of $2 threads recorded other than their CPU time"; fi
done

# The names stand at the root (not under _start or start_thread), the
# collector's start in <Collector>, the loader's in <Process start>.
fns proc_on.er
for f in "<Process start>" "<Collector>" "<After last sample>"; do
	v=$(col "$f" 4)
	if [ "${v:-0}" != 0 ]; then ok "$f has time ($v ns)"; else notok "$f has no time"; fi
done
"$SONDE" print -callers-callees -metrics i.totalcpu:name "<After last sample>" proc_on.er >cc.txt 2>&1
if grep -q "work" cc.txt; then ok "<After last sample> is called from work, where the last samples were"; else
	notok "<After last sample>'s callers are not work"; sed 's/^/  /' cc.txt | head -20 >&2; fi
