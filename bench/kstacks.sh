#!/bin/sh
# Kernel call stacks' cost (issue 32, sonde collect -k on): bench/kbench.c
# (fixed work, about half of it pread of a cached file, the kernel
# copying pages) plain, under `sonde collect -p hi`, `-p hi -k on`, and
# `perf record -F 1000 -g` (which takes the kernel's stacks too), round
# by round.  Prints the median CPU time (user + system, runcpu) of each,
# the ratios against the plain run and against -p hi, the paired -k on
# against -p hi ratio, and the cost per sample that reads a kernel stack.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
RUNCPU=$B/bench/runcpu
ROUNDS=${BENCH_KSTACKS_ROUNDS:-7}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. bench/stats.sh
echo "== kernel call stacks: kbench (pread of a cached file and arithmetic), plain vs -p hi vs -p hi -k on (median of $ROUNDS)"
mkdir -p $B/bench
[ -x $RUNCPU ] || cc -O2 -o $RUNCPU bench/runcpu.c || exit 1
cc -O2 -o $W/kbench bench/kbench.c || exit 1
if ! "$SONDE" collect -k on -p hi -o $W/probe.er $W/kbench $W/d 10 >/dev/null 2>$W/err; then
	echo "  -k on refused here: $(cat $W/err)"
	exit 0
fi
have_perf=0
perf record -q -o $W/probe.data -F 1000 -g true >/dev/null 2>&1 && have_perf=1
: >$W/p; : >$W/s; : >$W/k; : >$W/f; : >$W/n
for r in $(seq 1 "$ROUNDS"); do
	$RUNCPU $W/kbench $W/d | awk '{ print $2 }' >>$W/p
	rm -rf $W/s.er $W/k.er
	$RUNCPU "$SONDE" collect -p hi -o $W/s.er $W/kbench $W/d | awk '{ print $2 }' >>$W/s
	$RUNCPU "$SONDE" collect -p hi -k on -o $W/k.er $W/kbench $W/d | awk '{ print $2 }' >>$W/k
	sed -n 's/.*kernel stacks: [0-9]* clock samples read their thread.s records, \([0-9]*\) with kernel frames.*/\1/p' \
		$W/k.er/log.xml >>$W/n
	if [ $have_perf = 1 ]; then
		$RUNCPU perf record -q -o $W/perf.data -F 1000 -g $W/kbench $W/d | awk '{ print $2 }' >>$W/f
	fi
done
p=$(median <$W/p) s=$(median <$W/s) k=$(median <$W/k) n=$(median <$W/n)
paired=$(paste $W/k $W/s | awk '$2 > 0 { print $1 / $2 }' | median)
printf "  plain %.3f s; -p hi %.3f s (%s); -p hi -k on %.3f s (%s plain, %s against -p hi; paired %s)\n" \
	"$p" "$s" "$(pct "$s" "$p")" "$k" "$(pct "$k" "$p")" "$(pct "$k" "$s")" "$(pct "$paired" 1)"
awk -v s="$s" -v k="$k" -v n="$n" 'BEGIN { if (n > 0) printf "  %d samples with kernel frames; about %.1f us each beyond -p hi\n", n, (k - s) * 1e6 / n }'
if [ $have_perf = 1 ]; then
	f=$(median <$W/f)
	printf "  perf record -F 1000 -g %.3f s (%s plain)\n" "$f" "$(pct "$f" "$p")"
else
	echo "  perf record: not available here"
fi
