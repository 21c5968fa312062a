#!/bin/sh
# Benchmark of counter overflow profiling (-h): the pagefaults fixture
# (2100 fresh pages touched per repeat, PF_REPS repeats: 210,000 page
# faults at 100, about 0.45 s of CPU, nearly all of it in the kernel's
# fault path) plain, under `sonde collect -h page-faults` (the default
# overflow value, 1009) and `-h page-faults,1` (a sample at every fault,
# the worst case), and under `perf record -e page-faults -g` at the same
# two periods (-c 1009, -c 1), interleaved round by round.  Prints the
# median CPU time of each, its ratio to the plain run, the samples
# recorded and the cost per sample.
#   BENCH_ROUNDS (5) rounds;  PF_REPS (100) repeats.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
RUNCPU=$B/bench/runcpu
SONDE=$B/bin/sonde
PF=$B/fixtures/pagefaults
ROUNDS=${BENCH_ROUNDS:-5}
REPS=${PF_REPS:-100}
mkdir -p $B/bench
cc -O2 -o $RUNCPU bench/runcpu.c || exit 1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

. bench/stats.sh
have_perf=0
perf record -q -o $W/probe.data -e page-faults -g true >/dev/null 2>&1 && have_perf=1

echo "== counter overflow profiling: pagefaults $REPS ($((REPS * 2100)) page faults), $ROUNDS rounds"
: >$W/plain; : >$W/s1009; : >$W/s1; : >$W/p1009; : >$W/p1; : >$W/n1009; : >$W/n1
for r in $(seq $ROUNDS); do
	$RUNCPU $PF $REPS | awk '{print $2}' >>$W/plain
	rm -rf $W/a.er $W/b.er
	$RUNCPU $SONDE collect -h page-faults -o a.er -d $W $PF $REPS | awk '{print $2}' >>$W/s1009
	$SONDE print -dump counters $W/a.er | grep -c '^counter [0-9]' >>$W/n1009
	$RUNCPU $SONDE collect -h page-faults,1 -o b.er -d $W $PF $REPS | awk '{print $2}' >>$W/s1
	$SONDE print -dump counters $W/b.er | grep -c '^counter [0-9]' >>$W/n1
	if [ $have_perf = 1 ]; then
		$RUNCPU perf record -q -o $W/p.data -e page-faults -c 1009 -g $PF $REPS | awk '{print $2}' >>$W/p1009
		$RUNCPU perf record -q -o $W/p.data -e page-faults -c 1 -g $PF $REPS | awk '{print $2}' >>$W/p1
	fi
done
plain=$(median <$W/plain)
row() { # LABEL FILE SAMPLES
	awk -v p="$plain" -v s="$(median <$2)" -v n="$3" -v l="$1" 'BEGIN {
		printf "  %-34s cpu %.3f s  ratio %.3f (%+.1f%%)", l, s, s / p, (s / p - 1) * 100
		if (n > 0) printf "  %d samples, %.2f us per sample", n, (s - p) * 1e6 / n
		printf "\n" }'
}
awk -v p="$plain" 'BEGIN { printf "  %-34s cpu %.3f s\n", "plain", p }'
row "sonde collect -h page-faults" $W/s1009 "$(median <$W/n1009)"
row "sonde collect -h page-faults,1" $W/s1 "$(median <$W/n1)"
if [ $have_perf = 1 ]; then
	row "perf record -e page-faults -c 1009 -g" $W/p1009 0
	row "perf record -e page-faults -c 1 -g" $W/p1 0
else
	echo "  perf record: not available here"
fi
