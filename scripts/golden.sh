#!/bin/sh
# The outputs of every sonde print view, every export and the report on a
# fixed set of experiments, for showing that a change of the code's shape
# leaves behaviour byte-identical:
#
#   sh scripts/golden.sh record DIR        record the experiments into DIR/exp
#                                          (with this tree's build)
#   sh scripts/golden.sh print DIR OUT     print every view of them into OUT
#                                          (with this tree's build)
#   diff -r OUT.before OUT.after           the check: no output
#
# Record once (with the code before the change), print with both builds.
# Paths and times that differ between two printings of the same experiment
# are left out of the comparison (the report's generation time).
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
SONDE=$TOP/build/bin/sonde
FIX=$TOP/build/fixtures
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: golden.sh record DIR | print DIR OUT" >&2; exit 2; }

record() {
	mkdir -p "$dir/exp" || exit 1
	cd "$dir/exp" || exit 1
	# Archived (the load objects copied in), so that a rebuilt collector
	# or fixture does not change what a later build shows of them.
	rec() {
		name=$1
		shift
		"$SONDE" collect -o $name.er "$@" >$name.out 2>&1 || echo "golden: $name exited $?" >&2
		"$SONDE" archive $name.er >>$name.out 2>&1 || echo "golden: archive of $name exited $?" >&2
	}
	rec clock -p hi "$FIX/burn" 2 0 30
	rec counters -p hi -h page-faults,1 "$FIX/pagefaults" 2 200
	rec mstates -w on "$FIX/mstates"
	rec heap -H on "$FIX/heapleaks"
	rec sync -s on "$FIX/syncwait"
	mkdir -p iodir truth
	rec io -i on "$FIX/iofiles" "$dir/exp/iodir"
	rec procs -p hi "$FIX/proctree" "$dir/exp/truth" 0.2
	rec deep -p hi -D 100 "$FIX/deeprec" 300 0.2
	rec tail -p hi "$FIX/tailcall"
	rec srcl -p hi "$FIX/srclines"
}

print_all() {
	out=$1
	mkdir -p "$out" || exit 1
	views="-functions -callers-callees -calltree -calltree_inverted -lines -pcs -objects -threads -cpus -seconds
-samples -statistics -header -overview -fsummary -experiment_list -processes -thread_list -cpu_list -metric_list
-leaks -allocs -heapstat -heap_peak -heap_temporary -heap_timeline -sync -iostat -iodetail -iostacks -ioactivity
-dump_profile -dump_stacks -dump_overview -dump_objects -dump_sync -dump_heap -dump_io -dump_counters"
	for e in "$dir"/exp/*.er; do
		n=$(basename "$e" .er)
		for v in $views; do
			case $v in
			-calltree_inverted) args="-calltree -inverted" ;;
			-dump_*) args="-dump ${v#-dump_}" ;;
			*) args=$v ;;
			esac
			for mode in text csv json; do
				# shellcheck disable=SC2086
				(cd "$dir/exp" && "$SONDE" print -printmode $mode $args $n.er) >"$out/$n$v.$mode" 2>&1
				echo "exit $?" >>"$out/$n$v.$mode"
			done
		done
		for f in pprof folded speedscope chrome; do
			(cd "$dir/exp" && "$SONDE" export --format $f -o "$out/$n.export.$f" $n.er) >"$out/$n.export.$f.err" 2>&1
			echo "exit $?" >>"$out/$n.export.$f.err"
		done
		# the report, without its generation stamp
		(cd "$dir/exp" && "$SONDE" report -o "$out/$n.report.html" $n.er) >"$out/$n.report.err" 2>&1
		sed -i 's/"generated":"[^"]*"//' "$out/$n.report.html" 2>/dev/null
	done
	# where OUT is, which two printings do not share
	for f in "$out"/*.err; do sed -i "s|$out|OUT|g" "$f"; done
}

case $cmd in
record) record ;;
print) [ -n "${3:-}" ] || { echo "usage: golden.sh print DIR OUT" >&2; exit 2; }; print_all "$(cd "${3%/*}" 2>/dev/null && pwd)/${3##*/}" ;;
*) echo "golden.sh: unknown command '$cmd'" >&2; exit 2 ;;
esac
