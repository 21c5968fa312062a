#!/bin/sh
# sonde report on a large synthetic experiment (bench/genexp.c, as
# bench/print.sh makes it): SAMPLES clock-profile samples (10 million) on
# 4 threads and STACKS distinct call stacks (3000) of about 30 frames.
# Measures the report's wall and user time and resident size (best of
# ROUNDS runs, /usr/bin/time) against the target of 5 s, its file size
# against 20 MB, and the first render in headless Chromium (load to the
# page's data drawn, tests/browser/check-report.js) against 2 s.
#
#   BENCH_REPORT_SAMPLES, BENCH_REPORT_STACKS, BENCH_REPORT_ROUNDS
#   override the defaults.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
SAMPLES=${BENCH_REPORT_SAMPLES:-10000000}
STACKS=${BENCH_REPORT_STACKS:-3000}
ROUNDS=${BENCH_REPORT_ROUNDS:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

mkdir -p "$B/bench"
cc -std=gnu11 -O2 -Ilib -Iinclude -o "$B/bench/genexp" bench/genexp.c "$B/libsonde.a" -lm || exit 1
"$B/bench/genexp" "$W/big.er" "$SAMPLES" "$STACKS" 30 4 || exit 1
echo "== sonde report: $SAMPLES samples, $STACKS stacks, 4 threads (bench/genexp.c); best of $ROUNDS"
if [ -x /usr/bin/time ]; then
	for r in $(seq 1 "$ROUNDS"); do
		/usr/bin/time -f "%e %U %M" -o "$W/t" "$SONDE" report -o "$W/big.html" "$W/big.er" >/dev/null 2>"$W/err" ||
			{ echo "  sonde report failed: $(cat "$W/err")"; exit 0; }
		cat "$W/t"
	done | sort -n | head -n 1 | awk '{
		printf "  sonde report        %6.2f s wall  %5.2f s user  %7.1f MiB  (target 5 s: %s)\n", $1, $2, $3 / 1024,
			$1 < 5 ? "ok" : "OVER THE TARGET" }'
	/usr/bin/time -f "%e %U %M" -o "$W/t" "$SONDE" print -functions "$W/big.er" >/dev/null 2>&1 &&
		awk '{ printf "  (sonde print -functions of the same: %.2f s wall, %.2f s user)\n", $1, $2 }' "$W/t"
else
	"$SONDE" report -o "$W/big.html" "$W/big.er" >/dev/null || exit 0
	echo "  /usr/bin/time is not installed: no time measured"
fi
size=$(stat -c %s "$W/big.html")
awk -v s="$size" 'BEGIN { printf "  report file         %6.2f MB  (target 20 MB: %s)\n", s / 1e6, s < 20e6 ? "ok" : "OVER THE TARGET" }'
if [ -x "${SONDE_CHROMIUM:-/usr/bin/chromium}" ] && [ -d tests/browser/node_modules/playwright-core ]; then
	for r in $(seq 1 "$ROUNDS"); do
		printf '{"report":"%s","time_only":true}\n' "$W/big.html" >"$W/spec.json"
		(cd tests/browser && node check-report.js "$W/spec.json") | awk '/^render_ms/ { print $2, $4 }'
	done | sort -n | head -n 1 | awk '{
		printf "  first render        %6.2f s in headless Chromium, load to drawn (the page script %.2f s)  (target 2 s: %s)\n",
			$1 / 1000, $2 / 1000, $1 < 2000 ? "ok" : "OVER THE TARGET" }'
else
	echo "  first render: chromium or tests/browser/node_modules is missing (sh scripts/deps.sh check)"
fi
