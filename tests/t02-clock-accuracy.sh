# Clock profiling against ground truth: the burn fixture (-O2, no frame
# pointers) reports each thread's real CPU time from its own thread CPU
# clock.  At -p hi for about 3 s, the recorded CPU time of every thread must
# be within 2% of it, with 1, 4 and 16 threads, and at least 99.5% of
# samples must have a stack that reaches main or the thread's start routine
# (also for the samples taken inside the qsort comparator, called through
# libc).
#
# Why 2% holds: a sample's weight is the task-clock delta since the previous
# sample, so only the time after a thread's last sample (under 1 ms) is
# unrecorded; with 16 threads on 2 CPUs each thread has about 375 ms, so the
# worst case is about 0.3%.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
BURN=$FIX/burn
MAIN=$(sym_range "$BURN" main)
WORKER=$(sym_range "$BURN" worker)
CMP=$(sym_range "$BURN" sort_cmp)
ncpu=$(nproc)

for n in 1 4 16; do
	# About 3 s of wall time: CPU budget = 3 s times the usable CPUs.
	cpus=$(( n < ncpu ? n : ncpu ))
	exp=burn$n.er
	"$SONDE" collect -p hi -o $exp "$BURN" $n $((3 * cpus)) >truth$n.txt 2>err$n.txt
	rc=$?
	if [ $rc != 0 ]; then
		notok "$n threads: collect exited $rc"
		cat err$n.txt
		continue
	fi
	"$EXPCHECK" threads $exp >rec$n.txt
	# Every worker thread of the fixture: recorded vs real CPU time.
	bad=0
	worst=0
	while read -r _ tid _ real; do
		rec=$(awk -v t="$tid" '$1 == t { print $3 }' rec$n.txt)
		[ -n "$rec" ] || rec=0
		err=$(awk -v a="$rec" -v b="$real" 'BEGIN { printf "%.2f", (a - b) * 100 / b }')
		note "$n threads: tid $tid real $real ns recorded $rec ns error $err%"
		worst=$(awk -v w="$worst" -v e="$err" 'BEGIN { if (e < 0) e = -e; print (e > w ? e : w) }')
		within "$rec" "$real" 2 || bad=$((bad + 1))
	done <<EOT
$(grep '^thread ' truth$n.txt)
EOT
	nthreads=$(grep -c '^thread ' truth$n.txt)
	if [ "$nthreads" = "$n" ] && [ $bad = 0 ]; then
		ok "$n threads: recorded CPU time of each thread within 2% of real (worst $worst%)"
	else
		notok "$n threads: $bad of $nthreads threads off by more than 2% (worst $worst%)"
	fi
	# Every thread the fixture created was sampled.
	missing=0
	for tid in $(awk '/^thread /{print $2}' truth$n.txt); do
		awk -v t="$tid" '$1 == t && $2 > 0 { f = 1 } END { exit !f }' rec$n.txt || missing=$((missing + 1))
	done
	if [ $missing = 0 ]; then ok "$n threads: every thread was sampled"; else notok "$n threads: $missing threads have no samples"; fi

	set -- $("$EXPCHECK" reach $exp "$BURN" $MAIN $WORKER)
	share=$(awk -v m="$4" -v s="$2" 'BEGIN { printf "%.3f", m * 100 / s }')
	if [ "$2" -gt 100 ] && awk -v m="$4" -v s="$2" 'BEGIN { exit !(m >= s * 0.995) }'; then
		ok "$n threads: $share% of $2 samples reach main or the start routine"
	else
		notok "$n threads: only $share% of $2 samples reach main or the start routine"
	fi
	set -- $("$EXPCHECK" reach $exp "$BURN" --leaf $CMP $MAIN $WORKER)
	share=$(awk -v m="$4" -v s="$2" 'BEGIN { if (s) printf "%.3f", m * 100 / s; else print 0 }')
	if [ "$2" -gt 20 ] && awk -v m="$4" -v s="$2" 'BEGIN { exit !(m >= s * 0.995) }'; then
		ok "$n threads: $share% of $2 samples in the qsort comparator reach main or the start routine"
	else
		notok "$n threads: $share% of $2 samples in the qsort comparator reach main or the start routine"
	fi
done
