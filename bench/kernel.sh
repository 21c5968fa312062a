#!/bin/sh
# sonde kernel's cost (issue 32): the fixed-work burn fixture (2 threads,
# both CPUs busy) plain, under `sonde kernel -p hi PROGRAM` (every CPU
# sampled at 1 kHz with the kernel's stacks) and under `perf record -a -g
# -F 1000` (the same, with perf's user stacks too), and `sonde kernel -F
# =burn` (the program's user stacks too, unwound from copies), round by
# round.  Prints
# the median wall time of the program and the total CPU of the command
# (the recorder's own included), and the ratios against the plain run.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
RUNCPU=$B/bench/runcpu
ROUNDS=${BENCH_KERNEL_ROUNDS:-5}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. bench/stats.sh
echo "== sonde kernel: burn 2 threads x 2000 rounds, plain vs sonde kernel -p hi vs perf record -a -g (median of $ROUNDS)"
mkdir -p $B/bench
[ -x $RUNCPU ] || cc -O2 -o $RUNCPU bench/runcpu.c || exit 1
work="$B/fixtures/burn 2 0 2000"
if ! (cd $W && "$SONDE" kernel -t 0.1 -o probe.er >/dev/null 2>$W/err); then
	echo "  sonde kernel refused here: $(cat $W/err)"
	exit 0
fi
have_perf=0
perf record -q -a -o $W/probe.data -F 1000 -g true >/dev/null 2>&1 && have_perf=1
for f in pw pc kw kc fw fc Fw Fc; do : >$W/$f; done
for r in $(seq 1 "$ROUNDS"); do
	$RUNCPU $work >$W/o && awk '{ print $4 >> "'$W/pw'"; print $2 >> "'$W/pc'" }' $W/o
	rm -rf $W/k.er
	$RUNCPU "$SONDE" kernel -p hi -o $W/k.er $work >$W/o && awk '{ print $4 >> "'$W/kw'"; print $2 >> "'$W/kc'" }' $W/o
	rm -rf $W/kf.er
	$RUNCPU "$SONDE" kernel -p hi -F =burn -o $W/kf.er $work >$W/o && awk '{ print $4 >> "'$W/Fw'"; print $2 >> "'$W/Fc'" }' $W/o
	if [ $have_perf = 1 ]; then
		$RUNCPU perf record -q -a -g -F 1000 -o $W/perf.data $work >$W/o &&
			awk '{ print $4 >> "'$W/fw'"; print $2 >> "'$W/fc'" }' $W/o
	fi
done
pw=$(median <$W/pw) pc=$(median <$W/pc) kw=$(median <$W/kw) kc=$(median <$W/kc)
printf "  plain wall %.3f s, cpu %.3f s; sonde kernel -p hi wall %.3f s (%s), cpu %.3f s (%s)\n" \
	"$pw" "$pc" "$kw" "$(pct "$kw" "$pw")" "$kc" "$(pct "$kc" "$pc")"
Fw=$(median <$W/Fw) Fc=$(median <$W/Fc)
printf "  sonde kernel -p hi -F =burn (its user stacks too) wall %.3f s (%s), cpu %.3f s (%s)\n" \
	"$Fw" "$(pct "$Fw" "$pw")" "$Fc" "$(pct "$Fc" "$pc")"
if [ $have_perf = 1 ]; then
	fw=$(median <$W/fw) fc=$(median <$W/fc)
	printf "  perf record -a -g -F 1000 wall %.3f s (%s), cpu %.3f s (%s)\n" "$fw" "$(pct "$fw" "$pw")" "$fc" "$(pct "$fc" "$pc")"
else
	echo "  perf record: not available here"
fi
