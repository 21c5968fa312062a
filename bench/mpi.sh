#!/bin/sh
# MPI tracing's cost (issue 29): bench/mpibench.c, 2 ranks exchanging
# messages of 1 KiB and 64 KiB in a ring, plain and under
# `sonde collect -M on` (clock profiling and MPI tracing in every rank, the
# launcher recorded), on Open MPI and on MPICH, round by round so that both
# share the machine's conditions.  Prints the median wall time of the job
# (mpirun's, start to end) and of the exchange loop (rank 0's own clock
# between two barriers), and their ratios to the plain run.  With
# MPIP_LIB=/path/libmpiP.so (mpiP, built from its public source for Open
# MPI; not installed by sonde) the same job under mpiP, for comparison.
# Two ranks, one per CPU of this 2-CPU machine: four ranks that poll for
# messages on two CPUs are timed by the scheduler, not by MPI (the same
# plain run took 0.34 to 0.82 s here).
#
# A job of about a second: what sonde adds to a job is a cost per message
# (the wrappers, the packets) and a fixed cost per process (each rank's
# and the launcher's collector starting and ending, their experiments
# trimmed and their objects' build ids read), about 15 ms here.  In a
# job of 0.3 s that fixed part alone is 5%; so it is measured by itself,
# with the same job exchanging one message ("fixed cost" below), and the
# ratios are of a job long enough for the messages to be what it does.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
ROUNDS=${BENCH_MPI_ROUNDS:-9}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. bench/stats.sh
# (its own: a bare number, which its table formats)
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? (a / b - 1) * 100 : 0) }'; }
echo "== MPI tracing: 2 ranks, ring exchange, plain vs sonde collect -M on (median of $ROUNDS)"
if [ ! -f "$B/lib/sonde/libsonde_mpi.so" ]; then
	echo "  libsonde_mpi.so is not built (the MPI headers are missing): skipped"
	exit 0
fi
for impl in openmpi mpich; do
	command -v mpicc.$impl >/dev/null && command -v mpirun.$impl >/dev/null || { echo "  $impl: not installed"; continue; }
	mpicc.$impl -O2 -o "$W/mpibench.$impl" bench/mpibench.c || continue
	if [ $impl = openmpi ]; then
		run="mpirun.openmpi --allow-run-as-root --oversubscribe -np 2"
	else
		run="mpirun.mpich -np 2"
	fi
	: >"$W/p"; : >"$W/s"
	for r in $(seq 1 "$ROUNDS"); do
		t0=$(date +%s.%N)
		$run "$W/mpibench.$impl" 1024 1 >"$W/out" 2>&1 || break
		t1=$(date +%s.%N)
		rm -rf "$W/j.er"
		"$SONDE" collect -M on -o "$W/j.er" $run -- "$W/mpibench.$impl" 1024 1 >"$W/out" 2>&1 || break
		t2=$(date +%s.%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >>"$W/p"
		awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }' >>"$W/s"
	done
	p=$(median <"$W/p") s=$(median <"$W/s")
	printf "  %-8s fixed cost (one message): job %.1f ms plain, %.1f ms sonde (%+.1f ms)\n" \
		$impl "$(awk -v v="$p" 'BEGIN { print v * 1000 }')" "$(awk -v v="$s" 'BEGIN { print v * 1000 }')" \
		"$(awk -v a="$s" -v b="$p" 'BEGIN { print (a - b) * 1000 }')"
	for size in 1024 65536; do
		iters=${BENCH_MPI_ITERS:-16000}
		: >"$W/p"; : >"$W/s"; : >"$W/pl"; : >"$W/sl"; : >"$W/m"; : >"$W/ml"
		for r in $(seq 1 "$ROUNDS"); do
			t0=$(date +%s.%N)
			$run "$W/mpibench.$impl" $size $iters >"$W/out" 2>&1 || { echo "  $impl $size: the plain run failed"; break; }
			t1=$(date +%s.%N)
			awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >>"$W/p"
			awk '{ print $6 }' "$W/out" >>"$W/pl"
			rm -rf "$W/j.er"
			t0=$(date +%s.%N)
			"$SONDE" collect -M on -o "$W/j.er" $run -- "$W/mpibench.$impl" $size $iters >"$W/out" 2>&1 ||
				{ echo "  $impl $size: the run under sonde failed"; break; }
			t1=$(date +%s.%N)
			awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >>"$W/s"
			awk '$1 == "size" { print $6 }' "$W/out" >>"$W/sl"
			if [ -n "${MPIP_LIB:-}" ] && [ $impl = openmpi ]; then
				t0=$(date +%s.%N)
				(cd "$W" && $run -x LD_PRELOAD="$MPIP_LIB" "$W/mpibench.$impl" $size $iters >"$W/out" 2>&1)
				t1=$(date +%s.%N)
				awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >>"$W/m"
				awk '$1 == "size" { print $6 }' "$W/out" >>"$W/ml"
			fi
		done
		p=$(median <"$W/p") s=$(median <"$W/s") pl=$(median <"$W/pl") sl=$(median <"$W/sl")
		# each round's run under sonde against its own plain run
		pj=$(paste "$W/s" "$W/p" | awk '$2 > 0 { print $1 / $2 }' | median)
		printf "  %-8s %6s B x %4d: job %.3f s plain, %.3f s sonde (%+.1f%%; paired %+.1f%%); loop %.3f s plain, %.3f s sonde (%+.1f%%)\n" \
			$impl $size $iters "$p" "$s" "$(pct "$s" "$p")" "$(pct "$pj" 1)" "$pl" "$sl" "$(pct "$sl" "$pl")"
		if [ -s "$W/m" ]; then
			m=$(median <"$W/m") ml=$(median <"$W/ml")
			printf "  %-8s %6s B x %4d: mpiP job %.3f s (%+.1f%%), loop %.3f s (%+.1f%%)\n" $impl $size $iters "$m" \
				"$(pct "$m" "$p")" "$ml" "$(pct "$ml" "$pl")"
		fi
	done
done
