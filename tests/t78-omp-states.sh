#!/bin/sh
# OpenMP's states (include/sonde/states.h, collector/omp.c) against the
# truth of tests/fixtures/omp/ompstates.c, which prints per thread, and per
# parallel construct and thread, the CPU and the wall time it spent in
# work and in each wait (barrier, lock, taskwait, idle), built by gcc
# (libgomp: the GOMP_* interposers) and by clang (libomp: the OMPT tool),
# with 2 and 4 threads, one run each:
#   - OMP_WAIT_POLICY=active (waits spin; with 4 threads on 2 CPUs libgomp
#     spins only 1000 times before it sleeps, so its waits there are
#     mostly off CPU and the CPU truth small): per thread each state's CPU
#     samples (-dump profile, by tid), and per construct and thread the
#     columns of -omp_region K, within the larger of 5% of the CPU truth
#     and 10 ms (judge, below, says why that holds for a clock profile);
#   - OMP_WAIT_POLICY=passive with -w on: the waits sleep, and each
#     cause's CPU and off-CPU samples add up to the wait's wall time, work
#     to its CPU, within the same bounds, per thread and per construct;
#   - a program without OpenMP records no OpenMP state;
#   - a program with its own OMPT tool (a library it links; and
#     OMP_TOOL_LIBRARIES) keeps its tool, and log.xml says sonde's states
#     are off;
#   - the metrics: -metric_list, -functions with e.ompwork:e.ompwait (OpenMP
#     Wait the sum of the causes), agg's state words, -dump profile.
. "$(dirname "$0")/lib.sh"
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

# sums TXT: "TID STATE NS" of -dump profile's CPU and off-CPU samples.
sums() {
	"$SONDE" print -dump profile "$1" 2>/dev/null | awk '
	/^sample|^offcpu/ { tid = $6; st = "cpu"
		for (i = 1; i < NF; i++) { if ($i == "state") st = $(i + 1); if ($i == "weight") w = $(i + 1) * 1e6 }
		s[tid " " st] += w }
	END { for (k in s) printf "%s %.0f\n", k, s[k] }'
}

# regions EXP: "K TID CAUSE NS" of -omp_region K (K = 1 to 4, the
# fixture's constructs in the order they first ran), on and off CPU.
regions() {
	for k in 1 2 3 4; do
		"$SONDE" print -printmode csv -omp_region $k "$1" 2>/dev/null | awk -F, -v k=$k 'NR > 1 {
			print k, $2, "work", $3; print k, $2, "barrier", $4; print k, $2, "lock", $5; print k, $2, "taskwait", $6 }'
	done
}

# pairs OUT SUMS REGIONS MODE: "LABEL WANT GOT" per thread and state, and
# per construct, thread and state.  MODE cpu: the truth is the CPU time,
# the sample the state's CPU samples; MODE wall: a wait's truth is its wall
# time, its sample the cause's CPU and off-CPU samples (work stays CPU).
pairs() {
	awk -v mode="$4" '
	FILENAME == ARGV[1] && $1 == "truth" { cpu[$2 " " $3] = $4 }
	FILENAME == ARGV[1] && $1 == "wtruth" { wall[$2 " " $3] = $4 }
	FILENAME == ARGV[1] && $1 == "rtruth" { rcpu[$2 " " $3 " " $4] = $5; rwall[$2 " " $3 " " $4] = $6 }
	FILENAME == ARGV[1] && $1 == "tid" { tids[$3] = 1 }
	FILENAME == ARGV[2] { st = $2; sub(/^omp-/, "", st); off = sub(/-off$/, "", st); if (!off || mode == "wall") got[$1 " " st] += $3 }
	FILENAME == ARGV[3] { rgot[$1 " " $2 " " $3] = $4 }
	END {
		n = split("work barrier lock taskwait idle", S, " ")
		for (t in tids) {
			for (i = 1; i <= n; i++) {
				k = t " " S[i]; w = (mode == "wall" && S[i] != "work") ? wall[k] : cpu[k]
				printf "thread-%s-%s %.0f %.0f\n", t, S[i], w, got[k] + 0
			}
			for (r = 1; r <= 4; r++)
				for (i = 1; i <= 4; i++) {
					k = r " " t " " S[i]; w = (mode == "wall" && S[i] != "work") ? rwall[k] : rcpu[k]
					printf "region-%d-thread-%s-%s %.0f %.0f\n", r, t, S[i], w, rgot[k] + 0
				}
		}
	}' "$1" "$2" "$3"
}

# judge NAME PAIRS: every pair within the larger of 5% of the truth and
# 10 ms.  What a clock profile can miss here: each sample's weight is the
# thread's CPU since its last one, given to the state it is in when it is
# taken, so an interval that a state change splits goes whole to one side;
# that is at most one interval (1 ms with -p hi) per change, half of it on
# average, on each side of a wait: zero in the mean, and about 0.4 ms of
# spread per wait.  The fixture's states change a few dozen times a run.
# Off-CPU samples (passive) stand for the time since the thread's last
# one, given to the state at the sampler's look: a late look gives a
# wait's time to the next one.  As root (CI) the sampler runs at real-time
# priority and is late by at most a few ms with every CPU busy; without
# that it was late by up to 13 ms, and 34 ms of a barrier once went to
# idle (the priority is checked below).  A preempted virtual CPU makes it
# late whatever its priority (15 ms once, on a loaded machine: idle's time
# went to the next lock wait), so with off-CPU samples the bound also
# holds the lateness the collector measured (log.xml's offcpu_late_ns).
# judge NAME PAIRS [SLACK_NS]
judge() {
	awk -v name="$1" -v slack="${3:-0}" '{ b = 0.05 * $2; if (b < 10e6) b = 10e6; b += slack; d = $3 - $2; if (d < 0) d = -d
		if (d > b) { bad++; printf "# %s %s: %.1f ms sampled, %.1f ms truth (bound %.1f ms)\n", name, $1, $3 / 1e6, $2 / 1e6, b / 1e6 }
		if (d > worst) { worst = d; wl = $1 } }
		END { printf "# %s: %d pairs, the largest difference %.1f ms (%s)\n", name, NR, worst / 1e6, wl; exit bad > 0 }' "$2"
}

# run CC NT POLICY MODE OPTS...: the fixture under POLICY, judged in MODE;
# leaves the experiment in r.er.
run() {
	cc=$1 nt=$2 policy=$3 mode=$4
	shift 4
	rm -rf r.er
	OMP_WAIT_POLICY=$policy "$SONDE" collect -p hi "$@" -o r.er "$FIX/ompstates_$cc" $nt 20 2 >r.out 2>r.err
	sums r.er >r.sums
	regions r.er >r.regions
	pairs r.out r.sums r.regions $mode >r.pairs
	late=0
	if [ $policy = passive ]; then
		late=$(sed -n 's/.*offcpu_late_ns="\([0-9]*\)".*/\1/p' r.er/log.xml | head -1)
		note "$cc, $nt threads, $policy: the off-CPU sampler's latest look was ${late:-?} ns late"
	fi
	judge "$cc, $nt threads, $policy" r.pairs "${late:-0}"
}

compilers="gcc"
[ $have_clang = 1 ] && compilers="gcc clang"
for cc in $compilers; do
	for nt in 2 4; do
		name="$cc, $nt threads"
		run $cc $nt active cpu &&
			ok "$name, active: per thread and per construct, work, barrier, lock, taskwait and idle CPU match the fixture's truth" ||
			notok "$name, active: a thread's OpenMP state differs from the fixture's truth"
		[ "$cc$nt" = gcc2 ] && cp -r r.er gcc2.er
		# passive: the waits are off CPU, in their cause's state
		run $cc $nt passive wall -w on &&
			ok "$name, passive with -w on: per thread and per construct, work's CPU and each wait's CPU and off-CPU time match the fixture's truth" ||
			notok "$name, passive with -w on: a thread's OpenMP wait differs from the fixture's truth"
		[ "$cc$nt" = gcc2 ] && cp -r r.er gccp.er
	done
done

# A program without OpenMP: no OpenMP state, no word of it in log.xml.
rm -rf n.er
"$SONDE" collect -p hi -w on -o n.er "$FIX/burn" 1 0.3 >/dev/null 2>&1
if "$SONDE" print -dump profile n.er 2>/dev/null | grep -q "state omp-"; then
	notok "a program without OpenMP has samples in an OpenMP state"
elif grep -q "OpenMP" n.er/log.xml; then
	notok "a program without OpenMP has an OpenMP line in log.xml"
else
	ok "a program without OpenMP records no OpenMP state"
fi

# The user's OMPT tool wins, and keeps working.
if [ $have_clang = 1 ]; then
	rm -rf u.er
	"$SONDE" collect -p hi -o u.er "$FIX/omptooluse_clang" >u.out 2>u.err
	if grep -q "^tool: 3 regions$" u.out && grep -q "OpenMP states: off, the program's own OMPT tool" u.er/log.xml &&
		! "$SONDE" print -dump profile u.er 2>/dev/null | grep -q "state omp-"; then
		ok "a program linked with its own OMPT tool keeps it (it counted its 3 regions); sonde's states are off, said in log.xml"
	else
		notok "a program's own OMPT tool: $(cat u.out u.err | tr '\n' ' ')"
	fi
	rm -rf v.er
	OMP_TOOL_LIBRARIES=$FIX/libomptool.so "$SONDE" collect -p hi -o v.er "$FIX/ompstates_clang" 2 5 1 >v.out 2>v.err
	if grep -q "^tool: 4 regions$" v.out && grep -q "OMP_TOOL_LIBRARIES" v.er/log.xml; then
		ok "OMP_TOOL_LIBRARIES's tool is loaded and works under sonde (4 regions); sonde's states are off"
	else
		notok "OMP_TOOL_LIBRARIES's tool under sonde: $(grep tool v.out) $(cat v.err)"
	fi
fi

# The metrics, on the gcc run with 2 threads.
e=gcc2.er
"$SONDE" print -metric_list $e >ml.txt 2>&1
miss=""
for m in ompwork ompbarrier omplock omptaskwait ompidle ompoverhead ompbarrier_off omplock_off omptaskwait_off ompidle_off ompwait; do
	grep -q "e\.%$m\$" ml.txt || miss="$miss $m"
done
[ -z "$miss" ] && grep -q "^Current metrics: e.%totalcpu:i.%totalcpu:e.ompwork:e.ompwait:name" ml.txt &&
	ok "-metric_list has OpenMP Work, each wait cause and OpenMP Wait; the defaults show Work and Wait" ||
	notok "-metric_list lacks:$miss ($(grep Current ml.txt))"
"$SONDE" print -printmode csv -metrics e.ompwork:e.ompwait:e.ompbarrier:e.omplock:e.omptaskwait:e.ompidle:e.ompoverhead \
	-functions $e 2>/dev/null | grep '^"<Total>"\|^<Total>' >tot.csv
awk -F, '{ gsub(/"/, ""); w = $4; s = $5 + $6 + $7 + $8 + $9; d = w - s; if (d < 0) d = -d; good = w > 0 && d < 1e-6 + 1e-9 * w }
	END { exit !good }' tot.csv &&
	ok "-functions: OpenMP Wait is the sum of barrier, lock, taskwait, idle and overhead ($(cat tot.csv))" ||
	notok "-functions: OpenMP Wait is not the sum of its causes: $(cat tot.csv)"
"$SONDE" agg 'profile { @[state] = sum(weight); }' $e >agg.txt 2>&1
# (-dump's weights are in microseconds, each within 0.5 us of agg's
# nanoseconds: the sums agree within half a microsecond a sample)
"$SONDE" print -dump profile $e 2>/dev/null | awk '/^sample/ { st = "cpu"; for (i = 1; i < NF; i++) { if ($i == "state") st = $(i + 1); if ($i == "weight") w = $(i + 1) } s[st] += w * 1e6; n[st]++ }
	END { for (k in s) printf "%s %.0f %d\n", k, s[k], n[k] }' | sort >dump.txt
good=1
while read -r st ns n; do
	a=$(awk -v s="$st" '$1 == s { print $2 }' agg.txt)
	awk -v a="${a:-0}" -v b="$ns" -v n="$n" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 500 * n + 1) }' || good=0
done <dump.txt
[ $good = 1 ] && grep -q "omp-work" dump.txt && grep -q "omp-idle" agg.txt &&
	ok "agg's state words and -dump profile's agree on every OpenMP state ($(awk '{ print $1, $2 }' dump.txt | tr '\n' ' '))" ||
	notok "agg and -dump profile differ: $(tr '\n' ' ' <agg.txt) / $(tr '\n' ' ' <dump.txt)"
# agg's ompstate: the OpenMP cause of every sample, on CPU and off it
# (the passive run's idle and barrier waits are off-CPU states): its sums
# are exactly the states' sums with omp-CAUSE and omp-CAUSE-off together,
# the rest "none".
if [ -d gccp.er ]; then
	"$SONDE" agg 'profile { @[ompstate] = sum(weight); }' gccp.er 2>&1 | awk 'NF == 2 { print $1, $2 }' | sort >os.txt
	"$SONDE" agg 'profile { @[state] = sum(weight); }' gccp.er 2>&1 | awk 'NF == 2 {
		w = $1; if (w ~ /^omp-/) { sub(/^omp-/, "", w); sub(/-off$/, "", w) } else w = "none"
		s[w] += $2 } END { for (k in s) print k, s[k] }' | sort >ss.txt
	if [ -s os.txt ] && cmp -s os.txt ss.txt && grep -q "^idle " os.txt && grep -q "^work " os.txt; then
		ok "agg's ompstate: each OpenMP cause's time, on CPU and off, as the states have it ($(tr '\n' ' ' <os.txt))"
	else
		notok "agg's ompstate: '$(tr '\n' ' ' <os.txt)', from the states '$(tr '\n' ' ' <ss.txt)'"
	fi
fi

# The off-CPU sampler's priority is said in log.xml: real-time where the
# process may (root), normal for an unprivileged user, whose run is the
# same otherwise.
if [ -d gccp.er ] && [ "$(id -u)" = 0 ]; then
	check "as root the off-CPU sampler runs at real-time priority (log.xml)" \
		grep -q 'off-CPU sampling: the sampler runs at real-time priority 1' gccp.er/log.xml
fi
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$SONDE"; then
	chmod 711 "$TMP"
	mkdir nobody && chmod 777 nobody
	(cd nobody && OMP_WAIT_POLICY=passive setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$SONDE" collect -p hi -w on -o np.er "$FIX/ompstates_gcc" 2 5 1 >np.out 2>np.err)
	if grep -q 'the sampler runs at normal priority' nobody/np.er/log.xml 2>/dev/null &&
		grep -q '^wtruth' nobody/np.out && [ ! -s nobody/np.err ]; then
		ok "unprivileged: the sampler runs at normal priority, said in log.xml, the run otherwise the same"
	else
		notok "unprivileged: $(grep -o 'sampler runs at [a-z-]* priority' nobody/np.er/log.xml 2>&1) $(head -c 200 nobody/np.err)"
	fi
fi
