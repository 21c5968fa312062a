#!/bin/sh
# OpenMP states' cost (issue 30): bench/ompbench.c (many short regions,
# each with a critical section, a barrier and a reduction; 2 threads),
# built by gcc (libgomp: the GOMP_* interposers) and by clang (libomp: the
# OMPT tool), plain, under `sonde collect -p hi` with the states off
# (SONDE_OMP=0) and on, round by round.  Prints the median wall time of
# the regions (the program's own clock: waiting threads spin, so CPU time
# measures the scheduler) and the ratios, and the median of each round's
# states-on run against its own states-off run (paired: the machine drifts
# between rounds by more than the cost); the target is at most 2% more
# with the states than clock profiling alone.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
ROUNDS=${BENCH_OMP_ROUNDS:-11}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. bench/stats.sh
echo "== OpenMP states: 20000 regions x 2 threads, plain vs -p hi with states off / on (median of $ROUNDS)"
export OMP_NUM_THREADS=2 OMP_WAIT_POLICY=active
for cc in gcc clang; do
	command -v $cc >/dev/null || { echo "  $cc: not installed"; continue; }
	$cc -O2 -fopenmp -o "$W/omp.$cc" bench/ompbench.c 2>/dev/null || { echo "  $cc: no OpenMP here"; continue; }
	: >"$W/p"; : >"$W/off"; : >"$W/on"
	for r in $(seq 1 "$ROUNDS"); do
		"$W/omp.$cc" | awk '{ print $4 }' >>"$W/p"
		rm -rf "$W/a.er" "$W/b.er"
		SONDE_OMP=0 "$SONDE" collect -p hi -o "$W/a.er" "$W/omp.$cc" 2>/dev/null | awk '{ print $4 }' >>"$W/off"
		"$SONDE" collect -p hi -o "$W/b.er" "$W/omp.$cc" 2>/dev/null | awk '{ print $4 }' >>"$W/on"
	done
	p=$(median <"$W/p") off=$(median <"$W/off") on=$(median <"$W/on")
	# each round's states-on run against its own states-off run (the
	# machine drifts between rounds by more than the cost measured)
	paired=$(paste "$W/on" "$W/off" | awk '$2 > 0 { print $1 / $2 }' | median)
	st=$("$SONDE" print -functions "$W/b.er" 2>/dev/null | grep -c "OpenMP")
	printf "  %-6s plain %.3f s; -p hi %.3f s (%s); -p hi + states %.3f s (%s plain, %s against -p hi; paired %s)%s\n" \
		$cc "$p" "$off" "$(pct "$off" "$p")" "$on" "$(pct "$on" "$p")" "$(pct "$on" "$off")" "$(pct "$paired" 1)" \
		"$([ "$st" -gt 0 ] || echo '  [no OpenMP state recorded]')"
done
# The cost per region, without work to hide it: bench/ompempty.c's
# 200,000 empty regions, each round's states-on run against its own
# states-off run (the microseconds a region costs the states and the
# regions' record; the ratio above is this against a region's length).
echo "== OpenMP states per region: 200000 empty regions x 2 threads, -p hi with states off / on (median of $ROUNDS)"
for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	$cc -O2 -fopenmp -o "$W/empty.$cc" bench/ompempty.c 2>/dev/null || continue
	: >"$W/d"; : >"$W/p"
	for r in $(seq 1 "$ROUNDS"); do
		"$W/empty.$cc" | awk '{ print $4 }' >>"$W/p"
		rm -rf "$W/a.er" "$W/b.er"
		off=$(SONDE_OMP=0 "$SONDE" collect -p hi -o "$W/a.er" "$W/empty.$cc" 2>/dev/null | awk '{ print $4 }')
		on=$("$SONDE" collect -p hi -o "$W/b.er" "$W/empty.$cc" 2>/dev/null | awk '{ print $4 }')
		echo "$on $off" | awk '{ print $1 - $2 }' >>"$W/d"
	done
	printf "  %-6s a region %.3f us plain; the states and the record %.3f us more a region (paired)\n" \
		$cc "$(median <"$W/p")" "$(median <"$W/d")"
done
