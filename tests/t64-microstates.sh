# Microstates and off-CPU time (issue 18) against the truth of the
# mstates fixture: each of its functions spends its time in one state and
# measures that time with the kernel's exact clocks (thread CPU clock,
# schedstat's run-queue delay, the monotonic clock).  Under
# `sonde collect -p hi -w on`, each function's User CPU, System CPU, Wait
# CPU, User Lock and Other Wait must be within 5% of the truth or 10 ms,
# whichever is larger (plus the 1 ms the table rounds to); User and System
# CPU within 5% of the function's CPU time, too.  The split is the mode
# each sample's timer interrupt found, and a guest kernel that gets its
# interrupts late, at its own transitions, finds some of a loop of system
# calls' time a few dozen instructions after their return: sys_burn
# (reads of /dev/zero) measured 13-23 ms of its 400 in user mode here
# (perf's hrtimer samples: 8.7%), 6-13 ms once the collector took the
# 32 bytes past a call's return for the call; the rest it cannot tell
# from user work.  The bound on
# the error is one sample interval (1 ms) at each edge of a function for
# the sampled metrics, and one scheduling delay for Wait CPU (the delay
# between a function's last sample and the next function's first goes to
# the latter); a machine busy with other work can exceed that once in a
# while, so a run whose numbers miss is repeated, up to 3 runs, and the
# last one's misses are reported.  (With a busy loop on each CPU beside
# it, 4 runs of this test passed without a repeat.)  The target's own sleeps and read must
# behave as without sonde: no early return, no EINTR, no added latency.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
MS=$FIX/mstates
S=0.4

calls_ok() { # FILE WHAT
	l=$(grep '^calls ' "$1")
	case "$l" in
	*"sleep_rc=0 eintr=0 short=0 "*"read_rc=1 read_eintr=0"*) ok "$2: every sleep returned 0 after its full time, the read got its byte (no EINTR)" ;;
	*) notok "$2: the target's own calls: $l" ;;
	esac
}

"$MS" $S >plain.txt 2>&1 || notok "mstates runs plain"
calls_ok plain.txt "plain run"

# value EXP FUNC COLUMN: FUNC's value in column COLUMN (1 user, 2 system,
# 3 wait, 4 ulock, 5 owait) of the inclusive metrics: a wait's time is
# the libc call's own, and the function's through it.
metrics() {
	"$SONDE" print -metrics i.user:i.system:i.wait:i.ulock:i.owait:name -functions "$1" >"$1.fn" 2>&1
}
value() {
	awk -v f="$2" -v c="$3" '$NF == f && NF == 6 { print $c + 0; found = 1 } END { if (!found) print "none" }' "$1.fn"
}
truth() { # TRUTHFILE FUNC NAME
	awk -v f="$2" -v m="$3" '$1 == "truth" && $2 == f { for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == m) print kv[2] } }' "$1"
}

# The checks: FUNC METRIC (column).  Each function's own states, and the
# states it must not have (a burn does not wait, a sleep is not a lock).
CHECKS="user_burn:user:1 user_burn:system:2 user_burn:wait:3
sys_burn:system:2 sys_burn:user:1 sys_burn:wait:3
sleeper:owait:5 sleeper:ulock:4
lock_wait:ulock:4 lock_wait:owait:5
pipe_read:owait:5 pipe_read:ulock:4
crowd_worker:user:1 crowd_worker:wait:3 crowd_worker:ulock:4 crowd_worker:owait:5
crowd:ulock:4"

run() { # N: one collection and its comparison; the misses in miss.N
	rm -rf ms$1.er
	"$SONDE" collect -o ms$1.er -p hi -w on "$MS" $S >truth$1.txt 2>collect$1.err || {
		echo "collect failed: $(cat collect$1.err)" >miss$1
		return 1
	}
	metrics ms$1.er
	: >miss$1
	: >hit$1
	for c in $CHECKS; do
		f=${c%%:*} rest=${c#*:}
		m=${rest%%:*} col=${rest#*:}
		t=$(truth truth$1.txt $f $m) v=$(value ms$1.er $f $col)
		cpu=0
		case $m in user | system) cpu=$(awk -v u="$(truth truth$1.txt $f user)" -v s="$(truth truth$1.txt $f system)" 'BEGIN { print u + s }') ;; esac
		if awk -v t="$t" -v v="$v" -v cpu="$cpu" 'BEGIN { tol = t * 0.05; if (tol < 0.010) tol = 0.010; if (tol < cpu * 0.05) tol = cpu * 0.05; d = v - t; if (d < 0) d = -d; exit !(v != "none" && t != "" && d <= tol + 0.0011) }'; then
			echo "$f $m $v (truth $t)" >>hit$1
		else
			echo "$f $m recorded $v, truth $t" >>miss$1
		fi
	done
	[ ! -s miss$1 ]
}

good=0
for n in 1 2 3; do
	if run $n; then
		good=$n
		break
	fi
	note "run $n missed: $(tr '\n' ';' <miss$n)"
done
if [ $good -gt 0 ]; then
	ok "every function's microstates within 5% or 10 ms of the truth, User and System CPU within 5% of its CPU (run $good): $(tr '\n' ';' <hit$good)"
else
	notok "microstates per function, 3 runs: $(tr '\n' ';' <miss3)"
	sed 's/^/#   /' ms3.er.fn | head -30
fi
last=${good:-3}
[ "$last" = 0 ] && last=3
calls_ok truth$last.txt "under -p hi -w on"
po=$(grep -o 'overshoot_ms=[0-9.]*' plain.txt | cut -d= -f2)
co=$(grep -o 'overshoot_ms=[0-9.]*' truth$last.txt | cut -d= -f2)
if awk -v p="$po" -v c="$co" 'BEGIN { exit !(c != "" && c <= p + 5) }'; then
	ok "sleeps overshoot by $co ms under collection, $po ms plain (within 5 ms)"
else
	notok "sleeps overshoot by $co ms under collection, $po ms plain"
fi

# ---- per thread: recorded totals beside the kernel's own accounting ----
E=ms$last.er
if grep -q 'offcpu_samples="[1-9]' $E/log.xml && grep -q 'offcpu_discarded=' $E/log.xml; then
	ok "the end record counts off-CPU samples ($(grep -o 'offcpu_samples="[0-9]*"' $E/log.xml))"
else
	notok "the end record counts off-CPU samples"
fi
# how late the sampler's looks were: a measured time, below the run's
# length, and the header's line says it
late=$(sed -n 's/.*offcpu_late_ns="\([0-9]*\)".*/\1/p' $E/log.xml | head -1)
if [ -n "$late" ] && [ "$late" -lt 2000000000 ] && "$SONDE" print -header $E 2>/dev/null | grep -q "looks late by up to"; then
	ok "the end record says how late the off-CPU sampler's latest look was ($late ns), and -header shows it"
else
	notok "the end record's offcpu_late_ns: '$late'"
fi

# -statistics sets each thread's recorded Wait CPU beside the kernel's
# run delay (the same counter, read at every sample after a switch; the
# delay between the thread's last sample and its end, one scheduling
# delay, is not recorded: within 5% or 10 ms) and its recorded User Lock
# + Other Wait beside the time it slept (its life less its CPU and
# run-queue time; the sampled part: within 5% or 10 ms, plus one interval
# per wait edge).
"$SONDE" print -statistics $E >stat.txt 2>&1
if awk '/^Thread microstates/ { on = 1; next }
	on && $8 == "|" && $1 != "<Total>" && $1 != "tid" {
		n++
		d = $4 - $11; if (d < 0) d = -d; tol = $11 * 0.05; if (tol < 0.010) tol = 0.010
		if (d > tol) { bad = bad " " $1 ": wait " $4 " vs run_delay " $11 }
		w = $5 + $6; t = $12; tol = t * 0.05; if (tol < 0.010) tol = 0.010
		d = w - t; if (d < 0) d = -d
		if (d > tol + 0.002) { bad = bad " " $1 ": lock+wait " w " vs sleeping " t }
	}
	END { if (bad != "") print bad; exit !(n >= 8 && bad == "") }' stat.txt >statbad.txt; then
	ok "-statistics: every thread's Wait CPU is its run delay, its User Lock + Other Wait its sleeping time"
else
	notok "-statistics per thread: $(cat statbad.txt)"
	grep -A12 '^Thread microstates' stat.txt | sed 's/^/#   /'
fi

# ---- the default view of a -w experiment shows where it waits ----
"$SONDE" print -functions $E >def.txt 2>&1
if grep -q "Total Thread Time" def.txt && grep -A3 "Name" def.txt | grep -q "Lock" && grep -A3 "Name" def.txt | grep -q "Wait"; then
	ok "a plain -functions of a -w experiment shows Total Thread Time, User Lock and Other Wait"
else
	notok "the default -functions of a -w experiment"
	sed 's/^/#   /' def.txt | head -12
fi
"$SONDE" print -metric_list $E >ml.txt 2>&1
lack=""
for m in user system wait ulock owait total; do
	grep -Eq "[.+]%?$m\$" ml.txt || lack="$lack $m"
done
if [ -z "$lack" ]; then ok "-metric_list names user, system, wait, ulock, owait, total"; else
	notok "-metric_list lacks$lack"
	sed 's/^/#   /' ml.txt | head -30
fi

# ---- without -w: CPU states only, and user + system is the total CPU ----
rc 0 "collect -p hi (no -w)" "$SONDE" collect -o now.er -p hi "$MS" 0.2
"$SONDE" print -metrics e.totalcpu:e.user:e.system:e.ulock:e.owait:name -functions now.er >now.txt 2>&1
if awk '$NF == "<Total>" { d = $1 - $2 - $3; if (d < 0) d = -d; ok = d <= 0.002 && $4 == 0 && $5 == 0 } END { exit !ok }' now.txt; then
	ok "without -w: <Total> user + system = total CPU, no off-CPU time"
else
	notok "without -w: <Total> of user, system, ulock, owait"
	sed 's/^/#   /' now.txt | head -8
fi

# ---- -w needs clock profiling; bad values are refused ----
rc 2 "-w on with -p off fails" "$SONDE" collect -p off -w on "$MS" 0.1
rc 2 "-w with a bad value fails" "$SONDE" collect -w sometimes "$MS" 0.1
"$SONDE" collect -n -w 5 "$MS" >dry.txt 2>&1
grep -q "off-CPU time: 5.000 ms" dry.txt && ok "the dry run shows -w" || notok "the dry run shows -w: $(cat dry.txt)"
