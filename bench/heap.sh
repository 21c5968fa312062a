#!/bin/sh
# Heap tracing benchmark: bench/heapbench.c (millions of small malloc/free
# pairs of varied sizes, some leaked) plain, under `sonde collect -H on`,
# and under heaptrack, interleaved round by round.  Two workloads: "pure"
# (nothing but malloc and free, about 12 ns a pair: the worst case for any
# tracer) and "touch" (each block is filled once allocated).  Prints
# median wall and CPU times, the ratios, and the leaks each tool found.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
RUNCPU=$B/bench/runcpu
HB=$B/bench/heapbench
SONDE=$B/bin/sonde
mkdir -p $B/bench
cc -O2 -o $RUNCPU bench/runcpu.c || exit 1
cc -O2 -o $HB bench/heapbench.c || exit 1
ROUNDS=${BENCH_ROUNDS:-5}
MILLIONS=${HEAP_MILLIONS:-4}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
have_ht=0
heaptrack -o $W/probe /bin/true >/dev/null 2>&1 && have_ht=1

. bench/stats.sh

for mode in pure touch; do
	arg=; [ $mode = touch ] && arg=touch
	for f in pw pc sw sc hw hc; do : >$W/$f; done
	for r in $(seq 1 $ROUNDS); do
		$RUNCPU $HB $MILLIONS $arg >$W/o && awk '{print $4}' $W/o >>$W/pw && awk '{print $2}' $W/o >>$W/pc
		rm -rf $W/h.er
		$RUNCPU $SONDE collect -p off -H on -o h.er -d $W $HB $MILLIONS $arg >$W/o &&
			awk '{print $4}' $W/o >>$W/sw && awk '{print $2}' $W/o >>$W/sc
		if [ $have_ht = 1 ]; then
			rm -f $W/ht.*
			$RUNCPU heaptrack -o $W/ht $HB $MILLIONS $arg >$W/o &&
				awk '{print $4}' $W/o >>$W/hw && awk '{print $2}' $W/o >>$W/hc
		fi
	done
	truth=$($HB $MILLIONS $arg)
	sl=$($SONDE print -printmode csv -metrics e.heapleakcnt:e.heapleakbytes:name -functions $W/h.er 2>/dev/null |
		awk -F, '$1 == "<Total>" { print $3 " leaks, " $4 " bytes" }')
	echo "== heap tracing, $mode: $MILLIONS million malloc/free pairs, median of $ROUNDS runs"
	echo "  program's own count: $truth (plus the stdout buffer, 1 leak of 4096 bytes)"
	awk -v pw="$(median <$W/pw)" -v pc="$(median <$W/pc)" -v sw="$(median <$W/sw)" -v sc="$(median <$W/sc)" 'BEGIN {
		printf "  plain                     wall %.3f s  cpu %.3f s\n", pw, pc
		printf "  sonde collect -H on       wall %.3f s  cpu %.3f s  ratio wall %.2fx cpu %.2fx\n", sw, sc, sw / pw, sc / pc }'
	echo "  sonde found: $sl"
	awk -v b="$(stat -c %s $W/h.er/heaptrace)" -v m=$MILLIONS 'BEGIN {
		printf "  sonde heaptrace file      %.1f MB, %.1f bytes a malloc/free pair\n", b / 1e6, b / (m * 1e6) }'
	if [ $have_ht = 1 ]; then
		hl=$(heaptrack_print $W/ht.* 2>/dev/null | awk -F': ' '/total memory leaked/ { print $2 }')
		awk -v pw="$(median <$W/pw)" -v pc="$(median <$W/pc)" -v hw="$(median <$W/hw)" -v hc="$(median <$W/hc)" \
			-v sw="$(median <$W/sw)" -v sc="$(median <$W/sc)" 'BEGIN {
			printf "  heaptrack                 wall %.3f s  cpu %.3f s  ratio wall %.2fx cpu %.2fx\n", hw, hc, hw / pw, hc / pc
			printf "  sonde / heaptrack         wall %.2f  cpu %.2f\n", sw / hw, sc / hc }'
		echo "  heaptrack found: $hl leaked"
	else
		echo "  heaptrack: not available here"
	fi
done
