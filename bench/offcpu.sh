#!/bin/sh
# Benchmark of microstates and off-CPU time (-w, issue 18).
#
# Off-CPU recording: bench/pingpong (two threads handing a byte back
#    and forth through pipes, both on one CPU so that each hand-over is a
#    direct switch: PP_N round trips, two blocking reads each, about
#    390,000 waits per second here) plain, under `sonde collect -p on`
#    (clock profiling with microstates: the run delay is read at every
#    sample, as every sample follows a context switch), `sonde collect
#    -w on` (and off-CPU sampling every 10 ms),
#    `sonde collect -h context-switches,1` (the way not taken: a signal
#    at every switch, delivered when the thread is back in user space),
#    and the peers that run here: `perf record -e sched:sched_switch -g`
#    (a sample with the stack at every switch: perf's off-CPU recording
#    without BPF) and `perf sched record` (the scheduler's tracepoints);
#    `perf record --off-cpu` needs a perf built with BPF skeletons.  The
#    median wall time of each, its ratio to the plain run.
# The same with the threads free to go where the scheduler puts them
#    (PP_FREE round trips: on two CPUs each hand-over wakes the other CPU,
#    and a waiting thread is blocked, not runnable, for most of it: the
#    sampler finds, unwinds and records it), plain, under -w on and perf's
#    sched_switch stacks.
# Clock profiling with microstates on CPU-bound work is bench/run.sh's
# clock rows (its 4-thread burn has more runnable threads than CPUs, so
# that every sample there reads its run-queue delay too).
#   BENCH_ROUNDS (5) rounds;  PP_N (400000) and PP_FREE (50000) round trips.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
RUNCPU=$B/bench/runcpu
SONDE=$B/bin/sonde
PP=$B/bench/pingpong
ROUNDS=${BENCH_ROUNDS:-5}
N=${PP_N:-400000}
NF=${PP_FREE:-50000}
mkdir -p $B/bench
cc -O2 -o $RUNCPU bench/runcpu.c || exit 1
cc -O2 -pthread -o $PP bench/pingpong.c || exit 1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

. bench/stats.sh
have_sw=0 have_sched=0
perf record -q -o $W/probe.data -e sched:sched_switch -g true >/dev/null 2>&1 && have_sw=1
perf sched record -o $W/probe2.data true >/dev/null 2>&1 && have_sched=1

rate=$(RUNCPU_OUT=$W/rate.txt $RUNCPU $PP $N >/dev/null; awk '{print $6}' $W/rate.txt)
echo "== off-CPU recording: pingpong $N ($((2 * N)) blocking waits, about $rate per second plain), $ROUNDS rounds"
: >$W/plain; : >$W/p; : >$W/w; : >$W/sw; : >$W/sched; : >$W/nw; : >$W/cs
wall() { awk '{print $4}'; }
for r in $(seq $ROUNDS); do
	$RUNCPU $PP $N | wall >>$W/plain
	rm -rf $W/p.er $W/w.er
	$RUNCPU $SONDE collect -p on -o p.er -d $W $PP $N | wall >>$W/p
	$RUNCPU $SONDE collect -w on -o w.er -d $W $PP $N | wall >>$W/w
	# the way not taken: a sample (a signal) at every context switch
	rm -rf $W/c.er
	$RUNCPU $SONDE collect -p on -h context-switches,1 -o c.er -d $W $PP $N | wall >>$W/cs
	grep -o 'offcpu_samples="[0-9]*"' $W/w.er/log.xml | tr -dc 0-9 >>$W/nw; echo >>$W/nw
	[ $have_sw = 1 ] && $RUNCPU perf record -q -o $W/sw.data -e sched:sched_switch -g $PP $N | wall >>$W/sw
	[ $have_sched = 1 ] && $RUNCPU perf sched record -o $W/sched.data $PP $N | wall >>$W/sched
done
plain=$(median <$W/plain)
row() { # LABEL FILE
	awk -v p="$plain" -v s="$(median <$2)" -v l="$1" 'BEGIN {
		printf "  %-40s wall %.3f s  ratio %.3f (%+.1f%%)\n", l, s, s / p, (s / p - 1) * 100 }'
}
awk -v p="$plain" 'BEGIN { printf "  %-40s wall %.3f s\n", "plain", p }'
row "sonde collect -p on (microstates)" $W/p
row "sonde collect -w on (off-CPU, 10 ms)" $W/w
awk -v a="$(median <$W/p)" -v b="$(median <$W/w)" -v n="$(median <$W/nw)" 'BEGIN {
	printf "    (-w beside -p on: ratio %.3f; %d off-CPU samples per run: the threads are mostly runnable, not blocked)\n", b / a, n }'
t0=$(date +%s%N); $SONDE collect -o t.er -d $W /bin/true >/dev/null 2>&1; t1=$(date +%s%N)
awk -v d="$(( (t1 - t0) / 1000000 ))" 'BEGIN { printf "    (an experiment of /bin/true takes %d ms: the fixed cost of starting and ending one)\n", d }'
row "sonde collect -h context-switches,1" $W/cs
if [ $have_sw = 1 ]; then row "perf record -e sched:sched_switch -g" $W/sw; else echo "  perf record -e sched:sched_switch: not available here"; fi
if [ $have_sched = 1 ]; then row "perf sched record" $W/sched; else echo "  perf sched record: not available here"; fi
perf record --off-cpu -o $W/oc.data true 2>&1 | grep -q "ignored" && echo "  perf record --off-cpu: ignored by this perf (built without BPF skeletons)"


echo "== off-CPU recording: pingpong $NF free (threads where the scheduler puts them: blocked waits), $ROUNDS rounds"
: >$W/fplain; : >$W/fw; : >$W/fsw; : >$W/fnw; : >$W/fnd
for r in $(seq $ROUNDS); do
	$RUNCPU $PP $NF free | wall >>$W/fplain
	rm -rf $W/fw.er
	$RUNCPU $SONDE collect -w on -o fw.er -d $W $PP $NF free | wall >>$W/fw
	grep -o 'offcpu_samples="[0-9]*"' $W/fw.er/log.xml | tr -dc 0-9 >>$W/fnw; echo >>$W/fnw
	grep -o 'offcpu_discarded="[0-9]*"' $W/fw.er/log.xml | tr -dc 0-9 >>$W/fnd; echo >>$W/fnd
	[ $have_sw = 1 ] && $RUNCPU perf record -q -o $W/sw.data -e sched:sched_switch -g $PP $NF free | wall >>$W/fsw
done
plain=$(median <$W/fplain)
awk -v p="$plain" -v n="$NF" 'BEGIN { printf "  %-40s wall %.3f s  (%.0f waits per second)\n", "plain", p, 2 * n / p }'
row "sonde collect -w on (off-CPU, 10 ms)" $W/fw
echo "    ($(median <$W/fnw) off-CPU samples, $(median <$W/fnd) discarded per run)"
if [ $have_sw = 1 ]; then row "perf record -e sched:sched_switch -g" $W/fsw; fi
