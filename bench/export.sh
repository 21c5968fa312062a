#!/bin/sh
# Benchmarks of `sonde export` on a large synthetic experiment written by
# bench/genexp.c (as bench/print.sh: SAMPLES clock-profile samples, 10
# million by default, on 4 threads, STACKS distinct stacks, 3000, of about
# DEPTH frames, 30, in libc.so.6): each format's best wall time of ROUNDS
# runs, its maximum resident set and the file's size, against the target of
# 2 s each; then the time `go tool pprof -top` takes to read the pprof file.
#
# For comparison, when perf works here: perf record -F 4000 -g of the burn
# fixture for PERF_SECONDS (default 10), and the folding a flame-graph user
# runs on it, `perf script | stackcollapse` (stackcollapse-perf.pl is not in
# Debian: an awk script that folds perf script's stacks the same way), beside
# sonde export --format folded of a synthetic experiment of the same sample
# count.
#
#   BENCH_EXPORT_SAMPLES, BENCH_EXPORT_STACKS, BENCH_EXPORT_DEPTH,
#   BENCH_EXPORT_ROUNDS, BENCH_PERF_SECONDS override the defaults.
SAMPLES=${BENCH_EXPORT_SAMPLES:-10000000}
STACKS=${BENCH_EXPORT_STACKS:-3000}
DEPTH=${BENCH_EXPORT_DEPTH:-30}
ROUNDS=${BENCH_EXPORT_ROUNDS:-3}
PERF_SECONDS=${BENCH_PERF_SECONDS:-10}
NAME="sonde export"
. "$(dirname "$0")/lib.sh"

echo "== sonde export: $SAMPLES samples, $STACKS stacks of about $DEPTH frames, 4 threads"
"$B/bench/genexp" "$W/big.er" "$SAMPLES" "$STACKS" "$DEPTH" 4 || exit 1
for f in pprof folded speedscope chrome; do
	m=$(measure "$SONDE" export --format $f -o "$W/big.$f" "$W/big.er")
	size=$(stat -c %s "$W/big.$f" 2>/dev/null || echo 0)
	echo "$m" | awk -v f="$f" -v s="$size" '{
		ok = ($1 <= 2.0) ? "ok" : "OVER THE TARGET"
		printf "  sonde export --format %-10s %6.2f s  %7.1f MiB  file %8.1f MiB  (target 2 s: %s)\n", f, $1, $2 / 1024, s / 1048576, ok }'
	grep -h '^sonde export: note' "$W/err" 2>/dev/null | sed 's/^/    /'
done
if command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1; then
	export GOTELEMETRY=off
	m=$(measure go tool pprof -top "$W/big.pprof")
	echo "$m" | awk '{ printf "  go tool pprof -top (reads the pprof file) %6.2f s  %7.1f MiB\n", $1, $2 / 1024 }'
else
	echo "  go tool pprof: not installed (Debian golang-go; scripts/deps.sh check)"
fi
rm -rf "$W/big.er" "$W"/big.*

# perf script | stackcollapse on a perf.data recorded here
if perf record -q -o "$W/probe.data" -F 4000 -g true >/dev/null 2>&1; then
	perf record -q -o "$W/perf.data" -F 4000 -g "$B/fixtures/burn" 2 "$PERF_SECONDS" >/dev/null 2>&1
	n=$(perf script -i "$W/perf.data" -F period 2>/dev/null | wc -l)
	cat >"$W/fold.sh" <<'EOF'
# perf script's stacks folded as stackcollapse-perf.pl folds them: per
# sample, the frames' symbols root first joined by ';', counted.
perf script -i "$1" -F comm,sym 2>/dev/null | awk '
	/^[^ \t]/ { if (n) emit(); comm = $1; n = 0; next }
	/^[ \t]*$/ { if (n) emit(); n = 0; next }
	{ sub(/^[ \t]+/, ""); f[++n] = $1 }
	function emit(  s, i) { s = comm; for (i = n; i >= 1; i--) s = s ";" f[i]; c[s]++ }
	END { if (n) emit(); for (s in c) print s, c[s] }' | sort
EOF
	m=$(measure sh "$W/fold.sh" "$W/perf.data")
	echo "== perf script | stackcollapse (awk) on perf record -F 4000 -g of burn: $n samples"
	echo "$m" | awk -v n="$n" '{ printf "  perf script | stackcollapse  %6.2f s  %7.1f MiB  (%.2f us per sample)\n", $1, $2 / 1024, n ? $1 * 1e6 / n : 0 }'
	"$B/bench/genexp" "$W/same.er" "$n" "$STACKS" "$DEPTH" 4 >/dev/null || exit 1
	m=$(measure "$SONDE" export --format folded -o "$W/same.folded" "$W/same.er")
	echo "$m" | awk -v n="$n" '{ printf "  sonde export --format folded  %6.2f s  %7.1f MiB  (same sample count, %.2f us per sample)\n", $1, $2 / 1024, n ? $1 * 1e6 / n : 0 }'
else
	echo "== perf script | stackcollapse: perf record does not work here"
fi
