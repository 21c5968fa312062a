#!/bin/sh
# sonde collect -P's cost (issue 32): the fixed-work burn fixture (2
# threads) plain, and attached to at -p hi from its start to its end,
# round by round: the program's wall time (its own runcpu) and the ratio;
# and what an attach with -t 1 takes beyond its second (opening the
# counters, reading the process's objects; then unwinding what is left
# and writing the experiment).
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
RUNCPU=$B/bench/runcpu
ROUNDS=${BENCH_ATTACH_ROUNDS:-5}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. bench/stats.sh
# attach_1s PID OUT: what an attach of -t 1 to PID takes beyond its
# second, seconds, appended to OUT
attach_1s() {
	rm -rf $W/t1.er
	t0=$(date +%s%N)
	"$SONDE" collect -P $1 -p hi -t 1 -o $W/t1.er 2>/dev/null
	t1=$(date +%s%N)
	echo "$t0 $t1" | awk '{ printf "%.4f\n", ($2 - $1) / 1e9 - 1 }' >>$2
}
echo "== sonde collect -P: burn 2 threads x 2000 rounds, plain vs attached at -p hi (median of $ROUNDS)"
mkdir -p $B/bench
[ -x $RUNCPU ] || cc -O2 -o $RUNCPU bench/runcpu.c || exit 1
: >$W/p; : >$W/a; : >$W/o
for r in $(seq 1 "$ROUNDS"); do
	$RUNCPU $B/fixtures/burn 2 0 2000 | awk '{ print $4 }' >>$W/p
	$B/fixtures/burn 2 0 2000 >/dev/null &
	pid=$!
	t0=$(date +%s%N)
	rm -rf $W/a.er
	"$SONDE" collect -P $pid -p hi -o $W/a.er 2>/dev/null &
	cpid=$!
	wait $pid
	t1=$(date +%s%N)
	wait $cpid
	echo "$t0 $t1" | awk '{ printf "%.4f\n", ($2 - $1) / 1e9 }' >>$W/a
	sleep 2 &
	s=$!
	attach_1s $s $W/o
	wait $s
done
p=$(median <$W/p) a=$(median <$W/a) o=$(median <$W/o)
printf "  plain wall %.3f s; attached from start to end %.3f s (%s)\n" "$p" "$a" "$(pct "$a" "$p")"
printf "  an attach of -t 1 to an idle process takes %.0f ms beyond its second (attach, detach, writing)\n" \
	"$(echo "$o" | awk '{ print $1 * 1000 }')"

# A JVM, attached through its agent (-P of a JVM): bench/JWork.java's
# fixed work on 2 threads, plain, started under sonde collect -p hi, and
# attached at -p hi for the whole of it (the attach made while it sleeps
# 1.5 s before the work), its own wall time; and what an attach of -t 1
# takes beyond its second.
command -v javac >/dev/null && [ -f $B/lib/sonde/libsonde_java.so ] || { echo "  JVM: no JDK or no Java agent here"; exit 0; }
cp bench/JWork.java $W/ && (cd $W && javac JWork.java) || exit 1
echo "== sonde collect -P of a JVM (its agent): JWork 2 threads, plain vs attached at -p hi (median of $ROUNDS)"
: >$W/jp; : >$W/js; : >$W/ja; : >$W/jo
for r in $(seq 1 "$ROUNDS"); do
	java -cp $W JWork 10000 100 | awk '$1 == "work" { print $3 }' >>$W/jp
	rm -rf $W/s.er
	"$SONDE" collect -p hi -o $W/s.er java -cp $W JWork 10000 100 2>/dev/null | awk '$1 == "work" { print $3 }' >>$W/js
	java -cp $W JWork 10000 1500 >$W/jw.out &
	pid=$!
	for i in $(seq 100); do grep -q up $W/jw.out 2>/dev/null && break; sleep 0.05; done
	rm -rf $W/j.er
	"$SONDE" collect -P $pid -p hi -o $W/j.er 2>/dev/null &
	cpid=$!
	wait $pid
	wait $cpid
	awk '$1 == "work" { print $3 }' $W/jw.out >>$W/ja
	java -cp $W JWork 1 3000 >$W/jw.out &
	pid=$!
	for i in $(seq 100); do grep -q up $W/jw.out 2>/dev/null && break; sleep 0.05; done
	attach_1s $pid $W/jo
	wait $pid
done
p=$(median <$W/jp) st=$(median <$W/js) a=$(median <$W/ja) o=$(median <$W/jo)
printf "  plain work %.3f s; started under sonde collect %.3f s (%s); attached %.3f s (%s)\n" "$p" "$st" \
	"$(pct "$st" "$p")" "$a" "$(pct "$a" "$p")"
printf "  an attach of -t 1 to a sleeping JVM takes %.0f ms beyond its second (its listener, the agent's start and stop)\n" \
	"$(echo "$o" | awk '{ print $1 * 1000 }')"
