#!/bin/sh
# OpenMP's parallel regions (kind omp: collector/omp.c, lib/kinds/omp.c,
# -omp_regions and -omp_region N of lib/views/view_omp.c) against
# tests/fixtures/omp/ompstates.c, built by gcc (libgomp: the GOMP_*
# interposers) and clang (libomp: OMPT), with 2 and 4 threads and 2
# rounds of its four regions (imbalance, explicit barrier, critical and
# lock, tasks):
#   - four source regions, each run exactly twice, with exactly the team's
#     threads, at level 1, opened in main at its `omp parallel` line (clang
#     puts the call on the pragma's line; gcc's line table on a line up to
#     3 before it, where it scheduled the call);
#   - the imbalance region, per thread number: work within 5% or 10 ms of
#     its truth (thread t works t + 1 units a round), and its imbalance
#     (the slowest thread's work against the mean: 2T / (T + 1)) within 5%;
#   - the tasks region: exactly 2 (T - 1) tasks a round created and run in
#     it, all created at one call in the region's outlined function, from
#     the region's pragma line to the task's (gcc's line table says the
#     task's line, clang's the region's);
#   - a program without OpenMP has no omptrace file.
. "$(dirname "$0")/lib.sh"
SRC="$(cd "$(dirname "$0")" && pwd)/fixtures/omp/ompstates.c"
cd "$TMP" || exit 1

have_clang=1
[ -x "$FIX/ompstates_clang" ] || {
	have_clang=0
	notok "clang with libomp is installed (scripts/deps.sh check: clang, libomp-dev): the libomp fixtures are not built"
}
[ -x "$FIX/ompstates_gcc" ] || {
	notok "the gcc OpenMP fixture is built (make tests)"
	exit 0
}
pragmas=$(grep -n '#pragma omp parallel' "$SRC" | cut -d: -f1 | tr '\n' ' ')
taskline=$(grep -n '#pragma omp task$' "$SRC" | cut -d: -f1)
UNIT=20
ROUNDS=2

compilers="gcc"
[ $have_clang = 1 ] && compilers="gcc clang"
for cc in $compilers; do
	for nt in 2 4; do
		name="$cc, $nt threads"
		rm -rf a.er
		OMP_WAIT_POLICY=active "$SONDE" collect -p hi -o a.er "$FIX/ompstates_$cc" $nt $UNIT $ROUNDS >a.out 2>a.err
		"$SONDE" print -printmode csv -omp_regions a.er >r.csv 2>r.err
		# region,name,executions,threads_min,threads_max,level_min,level_max,work_ns,...
		awk -F, -v nt=$nt -v rounds=$ROUNDS -v pragmas="$pragmas" -v cc=$cc '
			NR == 1 { next }
			{ n++; split(pragmas, p, " "); line = $2; sub(/.*:/, "", line); sub(/\).*/, "", line)
			  lo = (cc == "gcc" ? p[n] - 3 : p[n]); hi = p[n] + 1
			  if ($3 != rounds || $4 != nt || $5 != nt || $6 != 1 || $7 != 1 || $2 !~ /^main \(ompstates\.c:/ ||
			      line < lo || line > hi) { print "region " n ": " $0 " (want " rounds " executions, " nt \
				" threads, level 1, main at lines " lo "-" hi ")"; bad = 1 } }
			END { if (n != 4) { print n " regions, not 4"; bad = 1 }; exit bad }' r.csv >r.bad
		[ $? = 0 ] && ok "$name: 4 regions, each run $ROUNDS times by $nt threads at level 1, opened at main's omp parallel lines" ||
			{ notok "$name: the regions differ from the fixture's"; sed 's/^/# /' r.bad r.err; }

		# the imbalance region per thread: work against (t + 1) units a round
		"$SONDE" print -printmode csv -omp_region 1 a.er >t.csv 2>t.err
		awk -F, -v nt=$nt -v u=$UNIT -v rounds=$ROUNDS '
			NR == 1 { next }
			{ want = ($1 + 1) * u * 1e6 * rounds; d = $3 - want; if (d < 0) d = -d
			  b = 0.05 * want; if (b < 10e6) b = 10e6
			  printf "# thread %d: work %.1f ms, truth %.1f ms, bound %.1f ms\n", $1, $3 / 1e6, want / 1e6, b / 1e6
			  n++; if (d > b) bad = 1 }
			END { if (n != nt) { print "# " n " threads, not " nt; bad = 1 }; exit bad }' t.csv >t.notes
		st=$?
		cat t.notes
		[ $st = 0 ] && ok "$name: the imbalance region's work per thread is its truth" ||
			notok "$name: the imbalance region's work per thread differs from its truth"
		imb=$(awk -F, 'NR == 2 { print $15 }' r.csv)
		awk -v i="${imb:-0}" -v t=$nt 'BEGIN { w = 2 * t / (t + 1); d = i - w; if (d < 0) d = -d; exit !(d <= 0.05 * w) }' &&
			ok "$name: imbalance $imb (truth $(awk -v t=$nt 'BEGIN { printf "%.3f", 2 * t / (t + 1) }'))" ||
			notok "$name: imbalance $imb, truth $(awk -v t=$nt 'BEGIN { printf "%.3f", 2 * t / (t + 1) }')"

		# tasks: created and run in the tasks region, exactly
		want=$((2 * (nt - 1) * ROUNDS))
		got=$(awk -F, 'NR == 5 { print $16 "/" $17 }' r.csv)
		others=$(awk -F, 'NR > 1 && NR != 5 { s += $16 + $17 } END { print s + 0 }' r.csv)
		[ "$got" = "$want/$want" ] && [ "$others" = 0 ] &&
			ok "$name: $want tasks created and run in the tasks region, none elsewhere" ||
			notok "$name: tasks created/run in the tasks region $got (want $want/$want), elsewhere $others"
		"$SONDE" print -printmode csv -omp_region 4 a.er >k.csv 2>&1
		p4=$(echo $pragmas | cut -d' ' -f4)
		awk -F, -v want=$want -v lo=$p4 -v hi=$taskline '$1 == "site" { n++; l = $2; sub(/.*:/, "", l); sub(/\).*/, "", l)
			if ($3 == want && $2 ~ /omp_(fn|outlined)/ && l >= lo && l <= hi) good = 1 }
			END { exit !(n == 1 && good) }' k.csv &&
			ok "$name: the tasks were created at one call of the region's outlined function (lines $p4-$taskline)" ||
			{ notok "$name: the tasks' creating call is not in the region's outlined function"; sed 's/^/# /' k.csv; }
		# The process's start (exec, the loader, the collector's start:
		# 2 to 14 ms here) is recorded first, as <Process start> and
		# <Collector>, with no OpenMP state.  It was the first sample's
		# weight: the imbalance region's master was given it as work
		# (t79 failed with 50 ms of work for its truth of 40).
		st=$("$SONDE" agg 'profile /thread == pid/ { @[time, func, state] = count(); }' a.er 2>&1 |
			sort -n | awk 'NF { if (t == "") t = $1; if ($1 != t) exit; f = $0
				sub(/^ *[0-9]+ +/, "", f); sub(/ +[^ ]+ +[0-9]+ *$/, "", f); print f ":" $(NF - 1) }' | sort | tr '\n' ' ')
		[ "$st" = "<Collector>:cpu <Process start>:cpu " ] &&
			ok "$name: the process's start is its first samples, <Process start> and <Collector>, in no OpenMP state" ||
			notok "$name: the process's first samples are '${st}' (want <Collector>:cpu <Process start>:cpu)"
		[ "$cc$nt" = clang2 ] && cp -r a.er clang2.er
	done
done

# the dump and the header on one of them
if [ -d clang2.er ]; then
	n=$("$SONDE" print -dump omp clang2.er | grep -c '^omp region')
	[ "$n" = 8 ] && ok "-dump omp: 8 region executions" || notok "-dump omp: $n region executions, not 8"
	"$SONDE" print -header clang2.er | grep -q "^OpenMP regions: *8 executions of 4 regions (0 nested), 16 threads' parts, 4 tasks (libomp)" &&
		ok "-header: the OpenMP regions' line" || notok "-header: no OpenMP regions' line as expected"
fi

# A program without OpenMP: no omptrace, and the views say so.
rm -rf n.er
"$SONDE" collect -p hi -o n.er "$FIX/burn" 1 0.2 >/dev/null 2>&1
[ ! -e n.er/omptrace ] && ok "a program without OpenMP has no omptrace" || notok "a program without OpenMP has an omptrace"
"$SONDE" print -omp_regions n.er >n.out 2>&1
[ $? = 2 ] && grep -q "has no OpenMP regions data" n.out && ok "-omp_regions without OpenMP: said, exit 2" ||
	{ notok "-omp_regions without OpenMP"; sed 's/^/# /' n.out; }

# Nested regions (tests/fixtures/omp/ompnest.c), each runtime: the outer
# region 3 times at level 1, the inner one 6 times at level 2, teams of
# 2 threads; the burn is the inner region's (at least 90% of the two
# rows' work: the outer threads' own time between inner regions is small).
NEST="$(cd "$(dirname "$SRC")" && pwd)/ompnest.c"
for cc in $compilers; do
	if ! $cc -O1 -g -fopenmp -o nest_$cc "$NEST" 2>cc.err; then
		notok "$cc builds the nested fixture: $(head -c 200 cc.err)"
		continue
	fi
	rm -rf n.er
	"$SONDE" collect -p hi -o n.er ./nest_$cc >n.out 2>n.err
	"$SONDE" print -printmode csv -omp_regions n.er >n.csv 2>&1
	got=$(awk -F, 'NR > 1 { printf "%s/%s/%s-%s/%s-%s ", $3, $6, $4, $5, $7, $7 }' n.csv)
	if [ "$got" = "3/1/2-2/1-1 6/2/2-2/2-2 " ] &&
		awk -F, 'NR > 1 { w[$6] += $8; t += $8 } END { exit !(t > 0 && w[2] >= 0.9 * t) }' n.csv; then
		ok "$cc nested regions: the outer 3 times at level 1, the inner 6 times at level 2, teams of 2, the work the inner's"
	else
		notok "$cc nested regions: '$got' (executions/level/threads/levels): $(tr '\n' ' ' <n.csv | head -c 400)"
	fi
done

# Many short regions (tests/fixtures/omp/ompmany.c), each runtime, 2 and
# 4 threads: every region and every thread's part of it is in the record,
# exactly, though the threads stage their packets and the runtime's
# workers are idle when the program ends (their last parts are written
# by the collector's end), and with the master's exec after the regions.
N=20000
for cc in $compilers; do
	[ -x "$FIX/ompmany_$cc" ] || { notok "the $cc many-regions fixture is built (make tests)"; continue; }
	for nt in 2 4; do
		for how in end exec; do
			rm -rf m.er
			OMP_NUM_THREADS=$nt "$SONDE" collect -p hi -o m.er "$FIX/ompmany_$cc" $N $([ $how = exec ] && echo exec) >m.out 2>m.err
			"$SONDE" print -printmode csv -omp_regions m.er >m.csv 2>&1
			execs=$(awk -F, 'NR == 2 { print $3 }' m.csv)
			parts=$("$SONDE" print -dump omp m.er 2>/dev/null | grep -c '^  thread ')
			lost=$(grep -c 'were lost' m.er/log.xml)
			if [ "$(cat m.out)" = "regions $N threads $nt" ] && [ "$execs" = $N ] && [ "$parts" = $((N * nt)) ] && [ "$lost" = 0 ]; then
				ok "$cc $nt threads, $how: all $N regions and their $parts threads' parts are recorded"
			else
				notok "$cc $nt threads, $how: '$(cat m.out)'; $execs executions, $parts parts (of $N and $((N * nt))); $lost lost"
			fi
		done
	done
done
