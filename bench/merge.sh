#!/bin/sh
# sonde merge at scale (issue 29): a synthetic MPI job of RANKS ranks of
# SAMPLES clock samples each (tests/tools/mergegen, written with the
# experiment writer into a scratch directory, never checked in), merged
#  - serially: wall time and peak RSS (/usr/bin/time), against the
#    targets of 10 s and 1 GiB for 1,000 ranks of 10,000 samples;
#  - with more distinct stacks (STACKS2): memory grows with them, not
#    with the ranks;
#  - under mpirun -np 2 and -np 4, Open MPI and MPICH: wall time, and
#    whether the result is the serial merge's bytes (diff -r).
# The files are in the page cache (just written): this is the merge's
# cost, not a cold parallel file system's (doc/sonde-merge.md says what
# changes there).
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
GEN=$B/tests/tools/mergegen
RANKS=${BENCH_MERGE_RANKS:-1000}
SAMPLES=${BENCH_MERGE_SAMPLES:-10000}
STACKS2=${BENCH_MERGE_STACKS:-5000}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
[ -x "$GEN" ] || { echo "== sonde merge: $GEN is not built (make tests)"; exit 0; }

# timed NAME CMD...: "NAME: S s, RSS KiB" (the launcher's and its
# children's peak for mpirun: /usr/bin/time reports the largest process).
timed() {
	name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$W/time" "$@" >"$W/out" 2>"$W/err" || { echo "  $name: failed"; sed 's/^/    /' "$W/err" | head -5; return 1; }
	awk -v n="$name" '{ printf "  %-34s %6.2f s wall, peak RSS %7.1f MiB\n", n, $1, $2 / 1024 }' "$W/time"
}

for stacks in 64 $STACKS2; do
	rm -rf "$W/job.er" "$W"/*.er
	t0=$(date +%s.%N)
	"$GEN" "$W/job.er" "$RANKS" "$SAMPLES" "$stacks" >"$W/truth" || exit 1
	t1=$(date +%s.%N)
	echo "== sonde merge: $RANKS ranks x $SAMPLES samples, $stacks distinct stacks ($(du -sh "$W/job.er" | cut -f1) written in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
	timed "serial" "$SONDE" merge "$W/job.er" -o "$W/s.er" || continue
	awk -v r="$RANKS" -v s="$SAMPLES" '{ printf "  (%.2f M samples/s; targets: under 10 s and 1024 MiB)\n", r * s / $1 / 1e6 }' "$W/time"
	cpu=$(awk '{ printf "%.3f", ($4 + $6) / 1e9 }' "$W/truth")
	got=$("$SONDE" print -header "$W/s.er" 2>/dev/null | awk '/^Recorded CPU time:/ { print $4 }')
	echo "  merged CPU time $got s, truth $cpu s: $([ "$got" = "$cpu" ] && echo equal || echo DIFFERENT)"
	[ "$stacks" = 64 ] || continue
	for impl in openmpi mpich; do
		[ -x "$B/libexec/sonde/sonde-merge-mpi.$impl" ] || { echo "  $impl: helper not built"; continue; }
		if [ $impl = openmpi ]; then run="mpirun.openmpi --allow-run-as-root --oversubscribe"; else run=mpirun.mpich; fi
		for np in 2 4; do
			timed "mpirun.$impl -np $np" $run -np $np "$SONDE" merge "$W/job.er" -o "$W/$impl$np.er" || continue
			if diff -r "$W/s.er" "$W/$impl$np.er" >/dev/null; then same="identical to the serial merge (diff -r)"; else same="DIFFERS from the serial merge"; fi
			echo "    $(sed -n 's/.*merged in \(.*\) by.*/merge \1 inside MPI (after MPI_Init)/p' "$W/out"); $same"
		done
	done
done
