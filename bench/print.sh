#!/bin/sh
# Benchmarks of `sonde print` on a large synthetic experiment written by
# bench/genexp.c: SAMPLES clock-profile samples (10 million by default) on
# 4 threads, STACKS distinct call stacks (3000) of about DEPTH frames (30),
# frames in libc.so.6 so that symbolisation resolves real names.  Times
# -functions, -callers-callees and -calltree (best of ROUNDS runs, wall
# time and maximum resident set from /usr/bin/time), against the target
# of at most 3 s and 1 GiB each.
#
# For comparison, when perf works here: perf record -F 4000 -g of the burn
# fixture for PERF_SECONDS (default 20), `perf report --stdio` on it, and
# sonde print on a synthetic experiment of the same sample count.  (Ten
# million perf samples at 4000 Hz would take 40 CPU-minutes to record; the
# per-sample rate of perf report is what compares.)
#
#   BENCH_PRINT_SAMPLES, BENCH_PRINT_STACKS, BENCH_PRINT_DEPTH,
#   BENCH_PRINT_ROUNDS, BENCH_PERF_SECONDS override the defaults.
SAMPLES=${BENCH_PRINT_SAMPLES:-10000000}
STACKS=${BENCH_PRINT_STACKS:-3000}
DEPTH=${BENCH_PRINT_DEPTH:-30}
ROUNDS=${BENCH_PRINT_ROUNDS:-3}
PERF_SECONDS=${BENCH_PERF_SECONDS:-20}
NAME="sonde print"
. "$(dirname "$0")/lib.sh"

report() { # NAME "wall rss"
	echo "$2" | awk -v n="$1" '{
		ok = ($1 <= 3.0 && $2 <= 1048576) ? "ok" : "OVER THE TARGET"
		printf "  sonde print %-17s %6.2f s  %7.1f MiB  (target 3 s, 1 GiB: %s)\n", n, $1, $2 / 1024, ok }'
}

echo "== sonde print: $SAMPLES samples, $STACKS stacks of about $DEPTH frames, 4 threads"
t0=$(date +%s.%N)
"$B/bench/genexp" "$W/big.er" "$SAMPLES" "$STACKS" "$DEPTH" 4 || exit 1
t1=$(date +%s.%N)
size=$(du -sb "$W/big.er" | awk '{print $1}')
awk -v a="$t0" -v b="$t1" -v s="$size" 'BEGIN { printf "  (experiment written in %.1f s, %.0f MiB)\n", b - a, s / 1048576 }'
for v in -functions -callers-callees -calltree; do
	report "$v" "$(measure "$SONDE" print "$v" "$W/big.er")"
done
report "-header" "$(measure "$SONDE" print -header "$W/big.er")"
rm -rf "$W/big.er"

# perf report on a perf.data recorded here, and sonde at the same count
if perf record -q -o "$W/probe.data" -F 4000 -g true >/dev/null 2>&1; then
	perf record -q -o "$W/perf.data" -F 4000 -g "$B/fixtures/burn" 2 "$PERF_SECONDS" >/dev/null 2>&1
	n=$(perf script -i "$W/perf.data" -F period 2>/dev/null | wc -l)
	psize=$(du -b "$W/perf.data" | awk '{print $1}')
	pr=$(measure perf report -i "$W/perf.data" --stdio)
	echo "== perf report --stdio on perf record -F 4000 -g of burn: $n samples ($((psize / 1048576)) MiB)"
	echo "$pr" | awk -v n="$n" '{ printf "  perf report --stdio          %6.2f s  %7.1f MiB  (%.1f us per sample)\n", $1, $2 / 1024, n ? $1 * 1e6 / n : 0 }'
	"$B/bench/genexp" "$W/same.er" "$n" "$STACKS" "$DEPTH" 4 >/dev/null || exit 1
	for v in -functions -callers-callees; do
		echo "$(measure "$SONDE" print "$v" "$W/same.er")" | awk -v n="$n" -v v="$v" '{
			printf "  sonde print %-17s %6.2f s  %7.1f MiB  (same sample count, %.2f us per sample)\n", v, $1, $2 / 1024, n ? $1 * 1e6 / n : 0 }'
	done
else
	echo "== perf report: perf record does not work here"
fi
