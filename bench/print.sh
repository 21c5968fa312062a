#!/bin/sh
# Benchmarks of `sonde print`, in two parts.
#
# 1. A large synthetic experiment written by bench/genexp.c: SAMPLES
#    clock-profile samples (10 million by default) on 4 threads, STACKS
#    distinct call stacks (3000) of about DEPTH frames (30), frames in
#    libc.so.6 so that symbolisation resolves real names.  Times -functions,
#    -callers-callees and -calltree (best of ROUNDS runs, wall time and
#    maximum resident set from /usr/bin/time), against the target of at most
#    3 s and 1 GiB each.
#
# 2. sonde print against perf report on the same program with complete
#    stacks on both sides: bench/calltree.c (4 threads, a 20-frame call tree,
#    -O2 -g, no frame pointers) recorded once by `sonde collect -p 0.02` and
#    once by `perf record -e cpu-clock:u -c 20000 --call-graph dwarf,DWARF`
#    (both a sample per 20 us of each thread's CPU time, DWARF = 1280 bytes
#    of stack, which holds this program's whole stack: the fraction of
#    complete stacks is printed for both), RECORD samples each (1.1 million).
#    From each recording, expresize and perfresize make an experiment and a
#    perf.data of exactly N samples for each N of SIZES (1 k, 100 k, 1 M,
#    10 M): the first N samples, or, above the recording, the recording
#    repeated with shifted times (recording 10 M real samples would take
#    each tool 100 s of the two CPUs and perf 15 GB of disk).  Then, side
#    by side (alternating; both best of 3 x ROUNDS below 1 M samples, of
#    ROUNDS for sonde and BIG_ROUNDS for perf from 1 M up; wall times to
#    the ms):
#      sonde print -functions         perf report --stdio --children -g none
#      sonde print -callers-callees   perf report --stdio --no-children
#    The first pair prints the same table (each function's inclusive and
#    exclusive time: perf must unwind every sample's stack for the
#    inclusive column), the second each function with its callers (perf's
#    call graph below each function; sonde's callers and callees).
#    sonde print keeps uncompressed copies of compressed debug files
#    (lib/symbols/plaindebug.h) in a cache: part 2 starts with an empty one
#    of its own, and the first size's line before the table gives the
#    first analysis (which makes the copies) and runs that keep none.
#
#   BENCH_PRINT_SAMPLES, BENCH_PRINT_STACKS, BENCH_PRINT_DEPTH,
#   BENCH_PRINT_ROUNDS (part 1 and part 2), BENCH_PRINT_SIZES,
#   BENCH_PRINT_RECORD, BENCH_PRINT_DWARF, BENCH_PRINT_BIG_ROUNDS override the
#   defaults; BENCH_PRINT_PERF=0 skips part 2.
SAMPLES=${BENCH_PRINT_SAMPLES:-10000000}
STACKS=${BENCH_PRINT_STACKS:-3000}
DEPTH=${BENCH_PRINT_DEPTH:-30}
ROUNDS=${BENCH_PRINT_ROUNDS:-3}
SIZES=${BENCH_PRINT_SIZES:-1000 100000 1000000 10000000}
RECORD=${BENCH_PRINT_RECORD:-1100000}
DWARF=${BENCH_PRINT_DWARF:-1280}
BIG_ROUNDS=${BENCH_PRINT_BIG_ROUNDS:-1}
NAME="sonde print"
. "$(dirname "$0")/lib.sh"

report() { # NAME "wall rss"
	echo "$2" | awk -v n="$1" '{
		ok = ($1 <= 3.0 && $2 <= 1048576) ? "ok" : "OVER THE TARGET"
		printf "  sonde print %-17s %6.2f s  %7.1f MiB  (target 3 s, 1 GiB: %s)\n", n, $1, $2 / 1024, ok }'
}

tstart=$(date +%s)
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

echo "  (part 1 took $(($(date +%s) - tstart)) s)"

[ "${BENCH_PRINT_PERF:-1}" = 0 ] && exit 0
tstart=$(date +%s)
if ! perf record -q -o "$W/probe.data" -e cpu-clock:u -c 20000 --call-graph "dwarf,$DWARF" true >/dev/null 2>&1; then
	echo "== sonde print against perf report: perf record does not work here"
	exit 0
fi
cc -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -o "$B/bench/calltree" bench/calltree.c -lpthread &&
	cc -std=gnu11 -O2 -Wall -Wextra -Iinclude -o "$B/bench/expresize" bench/expresize.c &&
	cc -std=gnu11 -O2 -Wall -Wextra -o "$B/bench/perfresize" bench/perfresize.c || exit 1

# 40 samples a CPU ms per thread: the nominal 50 less what sonde's
# intervals coalesce under load, so that both reach RECORD
ms=$((RECORD / 4 / 40 + 1))
echo "== sonde print against perf report: bench/calltree, 4 threads, $ms ms of CPU each, a sample per 20 us of thread CPU"
t0=$(date +%s)
"$SONDE" collect -p 0.02 -o rec.er -d "$W" "$B/bench/calltree" 4 "$ms" >/dev/null 2>"$W/err" || {
	cat "$W/err"
	exit 1
}
t1=$(date +%s)
perf record -q -m 2048 -o "$W/rec.data" -e cpu-clock:u -c 20000 --call-graph "dwarf,$DWARF" \
	"$B/bench/calltree" 4 "$ms" >/dev/null 2>"$W/err" || {
	cat "$W/err"
	exit 1
}
t2=$(date +%s)
sn=$("$SONDE" print -header "$W/rec.er" | awk '/^Samples:/ { print $2 }')
pn=$(perf report -i "$W/rec.data" --stdio --no-children -g none --sort dso 2>/dev/null |
	awk '/^# Samples:/ { n = $3 } /^# Total Lost Samples:/ { l = $5 } END { print n, l }')
echo "  sonde collect -p 0.02: $sn samples in $((t1 - t0)) s, $(du -sm "$W/rec.er" | awk '{print $1}') MiB"
echo "  perf record --call-graph dwarf,$DWARF: $(echo "$pn" | awk '{ print $1 " samples (" $2 " lost)" }') in $((t2 - t1)) s, $(du -sm "$W/rec.data" | awk '{print $1}') MiB"

# Complete stacks: the outermost frame is _start (main thread) or clone3
# (the others).  sonde: the root functions of -calltree; perf: the last
# frame of each sample of perf script, on the first 100,000 samples.
"$SONDE" print -calltree "$W/rec.er" 2>/dev/null | awk '
	/\+-/ { i = index($0, "+-"); if (!min || i < min) min = i; name[NR] = substr($0, i + 2); ind[NR] = i; pct[NR] = $4 }
	END { for (r in name) if (ind[r] == min && (name[r] == "_start" || name[r] == "clone3")) c += pct[r]
	      printf "  sonde: %.2f%% of the samples have complete stacks (under _start or clone3)\n", c }'
"$B/bench/perfresize" "$W/rec.data" "$W/p100k.data" 100000 2>/dev/null &&
	perf script -i "$W/p100k.data" -F ip,sym 2>/dev/null | awk 'BEGIN { RS = "" }
	{ n++; k = split($0, l, "\n"); if (l[k] ~ / (_start|clone3)$/) c++ }
	END { printf "  perf:  %.2f%% of the samples have complete stacks (perf script: _start or clone3 outermost; first 100,000 samples)\n", n ? c * 100 / n : 0 }'
rm -f "$W/p100k.data"

one() { # KEY CMD...: one run, its "wall rss" appended to $W/m.KEY (wall to the ms)
	key=$1
	shift
	t0=$(date +%s%N)
	if /usr/bin/time -f "%M" -o "$W/t" "$@" >/dev/null 2>"$W/err"; then
		t1=$(date +%s%N)
		echo "$(((t1 - t0) / 1000000)) $(tail -n 1 "$W/t")" | awk '{ printf "%.3f %d\n", $1 / 1000, $2 }' >>"$W/m.$key"
	else
		echo "fail" >>"$W/m.$key"
		sed 's/^/  # /' "$W/err" | head -5 >&2
	fi
}
best() { sort -n "$W/m.$1" | head -n 1; }

# sonde print's copies of compressed debug files (Debian's libc6-dbg, if
# installed): a cache of this run's own, so that the first analysis below
# makes them, as a user's first analysis does; the first size also shows
# that run, and runs that keep no copies (SONDE_CACHE_DIR=off).
SONDE_CACHE_DIR=$W/cache
export SONDE_CACHE_DIR
cold_line() { # N: the first analysis (best of ROUNDS, each with an empty cache) and runs without copies kept, on $W/s.er
	rm -f "$W"/m.cold "$W"/m.off
	for k in $(seq 1 "$ROUNDS"); do
		rm -rf "$W/cache"
		one cold "$SONDE" print -functions "$W/s.er"
		SONDE_CACHE_DIR=off one off "$SONDE" print -functions "$W/s.er"
	done
	ndbg=$(ls "$W/cache/debug" 2>/dev/null | wc -l)
	echo "$1 $(best cold) $(best off) $ndbg" | awk '{
		printf "            (sonde -functions, the first analysis, which copies %d compressed debug files to the cache: %.3f s; runs that keep no copies, SONDE_CACHE_DIR=off: %.3f s)\n", $6, $2, $4 }' >"$W/coldline"
}

printf "  %-9s %-22s %-22s %-31s %-31s %s\n" samples "sonde -functions" "sonde -callers-callees" \
	"perf --children -g none" "perf --no-children" "perf/sonde (each pair)"
for n in $SIZES; do
	ts=$(date +%s)
	rm -rf "$W/s.er" "$W/p.data"
	cp -r "$W/rec.er" "$W/s.er" &&
		"$B/bench/expresize" "$W/rec.er" "$W/s.er" "$n" 2>"$W/rs" &&
		"$B/bench/perfresize" "$W/rec.data" "$W/p.data" "$n" 2>>"$W/rs" || {
		cat "$W/rs"
		exit 1
	}
	r=$ROUNDS rs=$ROUNDS
	[ "$n" -ge 1000000 ] && r=$BIG_ROUNDS
	# below 1 M samples both take under a second: three times the rounds,
	# for times to the ms that say more than one run's noise
	[ "$n" -lt 1000000 ] && r=$((3 * ROUNDS)) rs=$((3 * ROUNDS))
	rm -f "$W/coldline"
	[ "$n" = "${SIZES%% *}" ] && cold_line "$n"
	rm -f "$W"/m.*
	# sonde best of rs at every size (it is cheap); perf of r
	for k in $(seq 1 "$rs"); do
		one sf "$SONDE" print -functions "$W/s.er"
		[ "$k" -le "$r" ] && one pf perf report -i "$W/p.data" --stdio --children -g none
		one sc "$SONDE" print -callers-callees "$W/s.er"
		[ "$k" -le "$r" ] && one pc perf report -i "$W/p.data" --stdio --no-children
	done
	echo "$n $(best sf) $(best sc) $(best pf) $(best pc)" | awk '{
		printf "  %-9d %6.3f s %7.1f MiB  %6.3f s %7.1f MiB  %9.3f s %8.1f MiB       %9.3f s %8.1f MiB       %6.1fx %6.1fx\n",
			$1, $2, $3 / 1024, $4, $5 / 1024, $6, $7 / 1024, $8, $9 / 1024, ($2 > 0 ? $6 / $2 : 0), ($4 > 0 ? $8 / $4 : 0) }'
	awk -v n="$n" -v t="$(($(date +%s) - ts))" -v r="$r" '{ c = c (c ? "; " : "") $0 }
		END { printf "            (%s; perf best of %d, %d s)\n", c, r, t }' "$W/rs"
	[ -f "$W/coldline" ] && cat "$W/coldline"
	rm -rf "$W/s.er" "$W/p.data"
done
rm -rf "$W/rec.er" "$W/rec.data"
echo "  (part 2 took $(($(date +%s) - tstart)) s)"
