#!/bin/sh
# Benchmarks: the fixed-work burn fixture plain, under `sonde collect -p hi`,
# and under the peers installed here (perf record -F 1000 -g; gprofng
# collect -p hi), interleaved round by round so that all share the same
# machine conditions.  Prints the median CPU time of each, the ratio to the
# plain run, sonde's CPU cost per sample and bytes written per sample.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
RUNCPU=$B/bench/runcpu
mkdir -p $B/bench
cc -O2 -o $RUNCPU bench/runcpu.c || exit 1
SONDE=$B/bin/sonde
BURN=$B/fixtures/burn
ROUNDS=${BENCH_ROUNDS:-5}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

have_perf=0
perf record -o $W/probe.data -F 1000 -g true >/dev/null 2>&1 && have_perf=1
have_gprofng=0
# gprofng wants a plain experiment name (-d fails here): run it inside $W.
(cd $W && gprofng collect app -o probe.er /bin/true) >/dev/null 2>&1 && have_gprofng=1

. bench/stats.sh
minimum() { sort -n | head -n 1; }

# One workload: NAME THREADS ROUNDS_PER_THREAD
bench_one() {
	name=$1
	shift
	work="$BURN $1 0 $2"
	: >$W/plain; : >$W/sonde; : >$W/perf; : >$W/gprofng; : >$W/samples; : >$W/bytes; : >$W/filebytes; : >$W/srec; : >$W/grec; : >$W/stimer; : >$W/stimersamples; : >$W/sfasync
	for r in $(seq 1 $ROUNDS); do
		$RUNCPU $work | awk '{print $2}' >>$W/plain
		rm -rf $W/s.er
		$RUNCPU $SONDE collect -p hi -o s.er -d $W $work | awk '{print $2}' >>$W/sonde
		$B/tests/tools/expcheck summary $W/s.er >$W/sum
		awk '{print $2}' $W/sum >>$W/samples
		awk '{print $14}' $W/sum >>$W/bytes
		awk '{print $4 / 1e9}' $W/sum >>$W/srec
		rm -rf $W/sf.er
		SONDE_CLOCK_SOURCE=perf-fasync $RUNCPU $SONDE collect -p hi -o sf.er -d $W $work | awk '{print $2}' >>$W/sfasync
		rm -rf $W/st.er
		SONDE_CLOCK_SOURCE=timer $RUNCPU $SONDE collect -p hi -o st.er -d $W $work | awk '{print $2}' >>$W/stimer
		$B/tests/tools/expcheck summary $W/st.er | awk '{print $2}' >>$W/stimersamples
		du -b --apparent-size $W/s.er/profile $W/s.er/stacks | awk '{s += $1} END {print s}' >>$W/filebytes
		if [ $have_perf = 1 ]; then
			$RUNCPU perf record -q -o $W/perf.data -F 1000 -g $work | awk '{print $2}' >>$W/perf
		fi
		if [ $have_gprofng = 1 ]; then
			rm -rf $W/g.er
			$RUNCPU sh -c "cd $W && exec gprofng collect app -p hi -o g.er $work" | awk '{print $2}' >>$W/gprofng
			gprofng display text -metrics e.totalcpu -functions $W/g.er 2>/dev/null |
				awk '/<Total>/ { print $1 + 0; f = 1 } END { if (!f) print 0 }' >>$W/grec
		fi
	done
	plain=$(median <$W/plain)
	sonde=$(median <$W/sonde)
	samples=$(median <$W/samples)
	bytes=$(median <$W/bytes)
	filebytes=$(median <$W/filebytes)
	echo "== $name: burn $1 threads x $2 rounds, median of $ROUNDS runs"
	awk -v p="$plain" -v s="$sonde" -v n="$samples" -v b="$bytes" -v fb="$filebytes" -v pmin="$(minimum <$W/plain)" -v smin="$(minimum <$W/sonde)" -v sr="$(median <$W/srec)" 'BEGIN {
		printf "  plain                      cpu %.3f s\n", p
		printf "  sonde collect -p hi        cpu %.3f s  ratio %.4f (%+.2f%%)\n", s, s / p, (s / p - 1) * 100
		printf "  (minimum of the runs: plain %.3f s, sonde %.3f s, ratio %.4f)\n", pmin, smin, smin / pmin
		printf "  sonde: %d samples, cost per sample %.2f us, recorded %.3f s of CPU time (%.1f%% of the plain run)\n", n, (s - p) * 1e6 / n, sr, sr * 100 / p
		printf "  sonde: %.1f bytes written per sample (profile+stacks packets and block headers),\n", b / n
		printf "         %.1f bytes of file per sample (with the unused tails of 16 KiB blocks)\n", fb / n
	}'
	# Rounds are paired (plain and sonde run back to back): the median of
	# the per-round ratios is steadier than the ratio of medians when the
	# machine's speed drifts between rounds (other guests on the host).
	paste $W/plain $W/sonde | awk '{ print $2 / $1 }' | median | awk '{
		printf "  paired: median of the per-round ratios sonde/plain %.4f (%+.2f%%)\n", $1, ($1 - 1) * 100 }'
	awk -v p="$plain" -v s="$(median <$W/sfasync)" 'BEGIN {
		printf "  sonde, fasync delivery     cpu %.3f s  ratio %.4f (%+.2f%%) (the real-time signal instead of SIGTRAP)\n", s, s / p, (s / p - 1) * 100 }'
	awk -v p="$plain" -v s="$(median <$W/stimer)" -v n="$(median <$W/stimersamples)" 'BEGIN {
		printf "  sonde, POSIX-timer source  cpu %.3f s  ratio %.4f (%+.2f%%), %d samples (tick-limited)\n", s, s / p, (s / p - 1) * 100, n }'
	if [ $have_perf = 1 ]; then
		awk -v p="$plain" -v s="$(median <$W/perf)" 'BEGIN {
			printf "  perf record -F 1000 -g     cpu %.3f s  ratio %.4f (%+.2f%%)\n", s, s / p, (s / p - 1) * 100 }'
	else
		echo "  perf record: not available here"
	fi
	if [ $have_gprofng = 1 ]; then
		awk -v p="$plain" -v s="$(median <$W/gprofng)" -v r="$(median <$W/grec)" 'BEGIN {
			printf "  gprofng collect app -p hi  cpu %.3f s  ratio %.4f (%+.2f%%)\n", s, s / p, (s / p - 1) * 100
			printf "  gprofng recorded %.3f s of CPU time (%.1f%% of the plain run)\n", r, r * 100 / p }'
	else
		echo "  gprofng: not available here"
	fi
}

bench_one "one thread" 1 2400
bench_one "four threads" 4 600

# Counter overflow profiling (-h page-faults) against the plain run and
# perf record -e page-faults -g.
sh bench/counters.sh

# Clock profiling of page-fault-heavy code beside a user-mode loop:
# plain, sonde collect -p hi, perf record -F 1000 -g.
sh bench/pagefault.sh

# Microstates and off-CPU time (-w): a program doing several hundred
# thousand blocking waits per second, beside perf's sched_switch stacks
# and perf sched record; clock profiling with microstates under contention.
sh bench/offcpu.sh

# Heap tracing against the plain run and heaptrack.
sh bench/heap.sh

# Sync wait tracing on a lock-heavy program.
[ -f bench/sync.sh ] && sh bench/sync.sh

# sonde agg: events per second over stdin lines and experiment events.
sh bench/agg.sh

# sonde print on 10 million samples; perf report for comparison.
sh bench/print.sh

# sonde report on 10 million samples: time, file size, first render.
sh bench/report.sh

# sonde export of 10 M samples per format (time, size), beside go tool
# pprof reading the pprof file and perf script | stackcollapse.
sh bench/export.sh

# MPI tracing: a ring exchange of 1 KiB and 64 KiB messages on 2 ranks,
# plain and under sonde collect -M on, Open MPI and MPICH.
sh bench/mpi.sh
echo
sh bench/omp.sh
echo
sh bench/java.sh
echo
sh bench/kstacks.sh
echo
sh bench/kernel.sh
echo
sh bench/attach.sh

# sonde merge of 1,000 synthetic ranks of 10,000 samples: time and memory,
# serial and under mpirun -np 2 and -np 4 (Open MPI, MPICH), equality.
sh bench/merge.sh

# sonde print -header and -heapstat on 8 million allocations; a sparse file.
sh bench/readscale.sh

# sonde print -source/-disasm on a 50 MB binary with full DWARF (built
# once by bench/biggen.sh, cached in build/bench/big); BENCH_SOURCE=0
# skips it.
[ "${BENCH_SOURCE:-1}" = 0 ] || sh bench/source.sh
