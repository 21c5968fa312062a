# The collector stays a guest whatever the sampling handler's hooks do
# (include/sonde/hooks.h): hooks that are slow (0.3 ms a call), that
# return garbage (states that are no state of CPU samples, counts of
# frames past what was asked, negative counts, places outside the stack,
# frames of kinds no reader knows, the most frames they may give,
# overlapping splices), or that are added and removed as fast as two
# threads can while two others are sampled every millisecond.  Each run
# must end as the plain one does (the workers' sums right, exit 0), its
# experiment must read without errors with each thread's recorded CPU
# time its real one, and a hook must never run with the argument of one
# whose removal returned (its memory is freed and overwritten then).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
HA=$FIX/hookattack

"$HA" slow 0.2 >plain.txt 2>&1
check "plain run: the workers' sums are right, no hooks without the collector" \
	sh -c "grep -q '^result OK$' plain.txt && grep -q '^hooks 0$' plain.txt"

# recorded_ok EXP OUT: every thread's recorded CPU time is its real time
# within 2 samples' weight (the tail of a thread is recorded at its end).
recorded_ok() {
	w=$(max_weight_ms "$1")
	"$EXPCHECK" threads "$1" | awk -v w="$w" '$4 >= 0 && $2 > 0 { d = $3 - $4; if (d < 0) d = -d; if (d > 2 * w * 1e6 + 2e6) bad++ }
		END { exit bad > 0 }'
}

for mode in slow slower hiccup garbage churn; do
	rm -rf $mode.er
	# slower: hooks of 3 ms a call at 1 ms intervals kept the threads in
	# the handler for good (t58 hung make check) before the handler
	# skipped the hooks after slow ones; the timeout makes that a failure.
	timeout 120 "$SONDE" collect -p hi -D 64 -o $mode.er "$HA" $mode 0.5 >$mode.txt 2>$mode.err
	r=$?
	if [ $r = 0 ] && grep -q '^result OK$' $mode.txt; then
		ok "$mode hooks: the target ends as without them (exit 0, its work right)"
	else
		notok "$mode hooks: exit $r, $(tr '\n' ' ' <$mode.txt) $(head -3 $mode.err)"
	fi
	check "$mode hooks: the experiment reads without errors" \
		sh -c "'$EXPCHECK' summary $mode.er | grep -q ' errors 0 '"
	check "$mode hooks: each thread's recorded CPU time is its real one" recorded_ok $mode.er
	check "$mode hooks: -functions and -dump stacks read it" \
		sh -c "'$SONDE' print -functions -dump stacks $mode.er >/dev/null 2>&1"
	check "$mode hooks: none ran with a removed hook's argument" grep -q '^dead_calls 0$' $mode.txt
	"$EXPCHECK" frames $mode.er >$mode.fr 2>&1
	check "$mode hooks: every stack's frames are in the file, no stack deeper than -D 64" \
		sh -c "tail -1 $mode.fr | grep -q ' unknown 0\$' && awk '\$1 == \"sample\" && \$4 > 64 { exit 1 }' $mode.fr"
done

note "slow: $(grep -c '^sample' slow.fr) samples, handler $(grep -o 'handler_ns="[0-9]*"' slow.er/log.xml)"

n=$(awk '$1 == "sample" && $5 == "1:1:0:0xffffffff81000000" { n++ } END { print n + 0 }' slow.fr)
check "slow hooks: their frame is on the samples ($n)" test "$n" -gt 50
check "slower hooks: log.xml says samples were recorded without them" \
	grep -q 'the hooks were slow (two samples in a row took half the interval or more in their hooks): [0-9]* sample' slower.er/log.xml
# Hooks get at most half of a thread's time: the slow ones (2 x 0.3 ms a
# sample, whose time counts toward the next sample's 1 ms) still run on
# at least a third of the samples, and the slower ones on some.
ns=$(grep -c '^sample' slow.fr)
check "slow hooks: their frame on at least a third of the $ns samples ($n)" test $((n * 3)) -ge "$ns"
m=$(awk '$1 == "sample" && $5 == "1:1:0:0xffffffff81000000" { n++ } END { print n + 0 }' slower.fr)
check "slower hooks: still run on some samples ($m)" test "$m" -gt 10

# hiccup: a quick hook that was slow once is not a slow hook.  The
# samples after it once went without the hooks for as long as it took
# (3 ms: three of them), so a one-off slow measurement (a preempted VM)
# cost MPI's state provider a whole sample of MPI Wait in t77.  Then the
# sample whose signal fell due during the slow call, which comes as soon
# as the handler returns, went without them when the quick hooks before
# (20 us here) took longer than that gap (one CI run in about 40 failed
# here when they took 2 us; each one with 20 us before the fix).
check "hiccup: log.xml says no sample went without the hooks" sh -c "! grep -q 'the hooks were slow' hiccup.er/log.xml"
# Measured: 122 of 939 samples without the hooks before, none after.
# The process's start and the threads' tails (recorded where they end,
# where no hook runs) are the only samples without the frame: three
# threads, at most four; the collector's pseudo samples (kind 5, its own
# time, the starts and ends) have no stack a hook could add to.
n=$(awk '$1 == "sample" && $5 != "1:1:0:0xffffffff81000000" && $5 !~ /^5:0:0:/ { n++ } END { print n + 0 }' hiccup.fr)
check "hiccup: the source's frame is on every sample but the start and the threads' tails ($n without)" test "$n" -le 4

# garbage: no bad state taken (only CPU, 0), the bad results counted in
# log.xml, the frames of unknown kinds written as given, the full source's
# frames cut at the depth limit (truncated), the overlapping splice once.
check "garbage: every profile packet's state is CPU (no bad answer taken)" \
	awk '$1 == "sample" && $2 != 0 { exit 1 }' garbage.fr
check "garbage: log.xml counts the states not taken" grep -q 'state providers gave [0-9]* state' garbage.er/log.xml
check "garbage: log.xml counts the frames not taken" grep -q 'stack sources gave [0-9]* result' garbage.er/log.xml
check "garbage: frames of kinds no reader knows are written as given" \
	sh -c "grep -q ' 200:255:65535:0x1234 255:0:3:0x5678 ' garbage.fr"
n=$(awk '$1 == "sample" { k = 0; for (i = 5; i <= NF; i++) if ($i ~ /^2:0:1:0x9999$/) k++; if (k > 1) bad++ } END { print bad + 0 }' garbage.fr)
check "garbage: of two overlapping splices only the first is taken ($n samples with both)" test "$n" = 0
n=$(awk '$1 == "sample" && $4 == 64 && $NF ~ /^3:0:/ { n++ } END { print n + 0 }' garbage.fr)
check "garbage: the source that fills every frame is cut at the depth limit ($n samples)" test "$n" -gt 50
check "garbage: a null hook and handles that are none are refused" sh -c "! grep -q 'refusals wrong' garbage.txt"

n=$(sed -n 's/^hooks //p' churn.txt)
check "churn: hooks added and removed while sampling ($n)" test "${n:-0}" -gt 100
