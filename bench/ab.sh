#!/bin/sh
# Two builds of sonde side by side on make bench's collection workloads:
#
#   sh bench/ab.sh OTHER_TREE [ROUNDS]
#
# OTHER_TREE is another checkout, built (`make tests`), e.g. the commit
# before a change, in a git worktree.  Each round runs a workload plain,
# under this tree's sonde and under the other's, back to back, and the
# ratios to the plain run are paired per round: their medians compare the
# two builds under the same machine conditions even on a busy machine.
# CPU time (user + system, the target and everything it waited for).
set -u
cd "$(dirname "$0")/.." || exit 1
A=$(pwd)
O=${1:?usage: bench/ab.sh OTHER_TREE [ROUNDS]}
O=$(cd "$O" && pwd) || exit 1
ROUNDS=${2:-9}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
RUNCPU=$W/runcpu
cc -O2 -o $RUNCPU bench/runcpu.c || exit 1
cc -O2 -o $W/heapbench bench/heapbench.c || exit 1
sed -n '/^cat >.*synclock.c/,/^EOF/p' bench/sync.sh | sed '1d;$d' >$W/synclock.c
[ -s $W/synclock.c ] && cc -O2 -o $W/synclock $W/synclock.c -lpthread
for t in "$A" "$O"; do
	[ -x "$t/build/bin/sonde" ] || { echo "ab.sh: $t is not built (make tests there)" >&2; exit 1; }
done
. bench/stats.sh
cpu() { $RUNCPU "$@" | awk '{ print $2 }'; }

# one NAME OPTIONS -- COMMAND...: the workload plain and under both builds
one() {
	name=$1
	opts=$2
	shift 2
	: >$W/ra
	: >$W/ro
	for r in $(seq 1 "$ROUNDS"); do
		p=$(cpu "$@")
		rm -rf $W/a.er $W/o.er
		# shellcheck disable=SC2086
		a=$(cpu "$A/build/bin/sonde" collect $opts -o a.er -d $W "$@")
		# shellcheck disable=SC2086
		o=$(cpu "$O/build/bin/sonde" collect $opts -o o.er -d $W "$@")
		awk -v a="$a" -v p="$p" 'BEGIN { print a / p }' >>$W/ra
		awk -v o="$o" -v p="$p" 'BEGIN { print o / p }' >>$W/ro
	done
	awk -v n="$name" -v a="$(median <$W/ra)" -v o="$(median <$W/ro)" 'BEGIN {
		printf "%-34s this %+7.2f%%   other %+7.2f%%\n", n, (a - 1) * 100, (o - 1) * 100 }'
}

echo "== sonde collect: CPU cost over the plain run, median of $ROUNDS paired rounds"
echo "   this:  $A ($(git -C "$A" log --oneline -1 2>/dev/null | cut -c1-50))"
echo "   other: $O ($(git -C "$O" log --oneline -1 2>/dev/null | cut -c1-50))"
one "clock -p hi, one thread" "-p hi" "$A/build/fixtures/burn" 1 0 2400
one "clock -p hi, four threads" "-p hi" "$A/build/fixtures/burn" 4 0 600
one "counter -h page-faults" "-h page-faults" "$A/build/fixtures/pagefaults" 100
one "heap tracing -H on" "-p off -H on" $W/heapbench 4
[ -x $W/synclock ] && one "sync tracing -s on" "-p off -s on" $W/synclock 20000000 0
one "off-CPU -w on, one thread" "-w on" "$A/build/fixtures/burn" 1 0 2400
