#!/bin/sh
# OpenMP states' cost (issue 30): bench/ompbench.c (many short regions,
# each with a critical section, a barrier and a reduction; 2 threads),
# built by gcc (libgomp: the GOMP_* interposers) and by clang (libomp: the
# OMPT tool), plain, under `sonde collect -p hi` with the states off
# (SONDE_OMP=0) and on (SONDE_OMP=1), round by round.  Prints the median
# wall time of the regions (the program's own clock: waiting threads spin,
# so CPU time measures the scheduler) and the ratios, and the median of
# each round's states-on run against its own states-off run (paired: the
# machine drifts between rounds by more than the cost); the target is at
# most 2% more with the states than clock profiling alone.
#
# The two runs of a round differ in nothing but the setting: the same
# size of environment, and the order alternates.  The environment's size
# moves the initial stack, and with it how the program's data falls on
# cache lines: identical runs whose environments differed by "YY=1" were
# 1.0% apart (21 alternating rounds; 1.4-1.8% in a fixed order), as much
# as the cost measured.  So each round also pads the environment by a
# different length (SONDE_BENCH_PAD), which averages that luck out rather
# than fixing one draw of it for the whole run.  41 rounds, not 21: a
# round's ratio is within about 1.2 points of the median half the time
# here, and the median of 21 moved by 1.5 points from one run to the next
# (41: the median's standard error about 0.35 points).
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
ROUNDS=${BENCH_OMP_ROUNDS:-41}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. bench/stats.sh
echo "== OpenMP states: 20000 regions x 2 threads, plain vs -p hi with states off / on (median of $ROUNDS)"
export OMP_NUM_THREADS=2 OMP_WAIT_POLICY=active
# round r's padding of the environment: 1 to 256 bytes, spread over the rounds
pad_round() { SONDE_BENCH_PAD=$(printf "%$(($1 * 37 % 256 + 1))s" "" | tr ' ' x); export SONDE_BENCH_PAD; }
# run_states 0|1 EXPERIMENT PROGRAM: the regions' time, states off or on
run_states() { SONDE_OMP=$1 "$SONDE" collect -p hi -o "$2" "$3" 2>/dev/null | awk '{ print $4 }'; }
for cc in gcc clang; do
	command -v $cc >/dev/null || { echo "  $cc: not installed"; continue; }
	$cc -O2 -fopenmp -o "$W/omp.$cc" bench/ompbench.c 2>/dev/null || { echo "  $cc: no OpenMP here"; continue; }
	: >"$W/p"; : >"$W/off"; : >"$W/on"
	for r in $(seq 1 "$ROUNDS"); do
		pad_round "$r"
		"$W/omp.$cc" | awk '{ print $4 }' >>"$W/p"
		rm -rf "$W/a.er" "$W/b.er"
		if [ $((r % 2)) = 1 ]; then
			run_states 0 "$W/a.er" "$W/omp.$cc" >>"$W/off"
			run_states 1 "$W/b.er" "$W/omp.$cc" >>"$W/on"
		else
			run_states 1 "$W/b.er" "$W/omp.$cc" >>"$W/on"
			run_states 0 "$W/a.er" "$W/omp.$cc" >>"$W/off"
		fi
	done
	p=$(median <"$W/p") off=$(median <"$W/off") on=$(median <"$W/on")
	# each round's states-on run against its own states-off run (the
	# machine drifts between rounds by more than the cost measured)
	paste "$W/on" "$W/off" | awk '$2 > 0 { print $1 / $2 }' >"$W/ratio"
	paired=$(median <"$W/ratio")
	# the middle half of the rounds' ratios: how far one round's is from
	# another's on this machine
	iqr=$(sort -n "$W/ratio" | awk '{ v[NR] = $1 } END { if (NR) printf "%+.1f..%+.1f%%", (v[int(NR / 4) + 1] - 1) * 100, (v[int(3 * NR / 4)] - 1) * 100 }')
	st=$("$SONDE" print -functions "$W/b.er" 2>/dev/null | grep -c "OpenMP")
	printf "  %-6s plain %.3f s; -p hi %.3f s (%s); -p hi + states %.3f s (%s plain, %s against -p hi; paired %s, middle half %s)%s\n" \
		$cc "$p" "$off" "$(pct "$off" "$p")" "$on" "$(pct "$on" "$p")" "$(pct "$on" "$off")" "$(pct "$paired" 1)" "$iqr" \
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
		pad_round "$r"
		"$W/empty.$cc" | awk '{ print $4 }' >>"$W/p"
		rm -rf "$W/a.er" "$W/b.er"
		if [ $((r % 2)) = 1 ]; then
			off=$(run_states 0 "$W/a.er" "$W/empty.$cc")
			on=$(run_states 1 "$W/b.er" "$W/empty.$cc")
		else
			on=$(run_states 1 "$W/b.er" "$W/empty.$cc")
			off=$(run_states 0 "$W/a.er" "$W/empty.$cc")
		fi
		echo "$on $off" | awk '{ print $1 - $2 }' >>"$W/d"
	done
	printf "  %-6s a region %.3f us plain; the states and the record %.3f us more a region (paired)\n" \
		$cc "$(median <"$W/p")" "$(median <"$W/d")"
done
