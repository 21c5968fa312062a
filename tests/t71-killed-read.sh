# A traced run whose sonde collect is killed (SIGKILL) while the target
# runs on is read in time linear in its size (issue 27, defect 6).  Only
# collect advances the heap trace's clock, so every heap event the target
# makes afterwards carries its last tick: one run of equal times to the
# end, whose matching took minutes when addresses passed between many
# threads.  The fixture (handoff) waits until the test has killed collect
# and 1.5 s more, then hands 640000 heap blocks between eight threads, so
# that the whole trace is such a run and its blocks are written more than
# a second after the tick they carry.
#
# The bound is on CPU time, which a loaded machine does not take from a
# process (wall time it does), relative to reading a normal run of the
# same work on the same machine: at most 10 times that and 1 s more.  The
# linear reader takes about 4 times (0.38 s here, against 0.09 s); the old
# one took 50 times (4.5 s).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

ROUNDS=40000
export TIMEFORMAT='%3U %3S'

# cpu_of OUT ERR CMD...: runs CMD (stdout to OUT, stderr to ERR) and
# prints its CPU seconds (user + system); the exit status is CMD's.
cpu_of() {
	out=$1 err=$2
	shift 2
	{ time "$@" >"$out" 2>"$err"; } 2>cpu.txt
	r=$?
	awk '{ printf "%.3f\n", $1 + $2 }' cpu.txt
	return $r
}

# ---- a normal run of the same work ----
touch go.n
rc 0 "a normal run of the fixture" "$SONDE" collect -p hi -H on -s on -i on -o n.er "$FIX/handoff" "$TMP/go.n" $ROUNDS

# ---- the killed run ----
"$SONDE" collect -p hi -H on -s on -i on -o k.er "$FIX/handoff" "$TMP/go.k" $ROUNDS >k.out 2>&1 &
cpid=$!
for i in $(seq 1 600); do
	grep -q ready k.out 2>/dev/null && break
	sleep 0.1
done
tpid=$(pgrep -P $cpid | head -n 1)
if [ -z "$tpid" ] || ! grep -q ready k.out; then
	notok "the target did not start (collect $cpid, target '$tpid')"
	kill -KILL $cpid $tpid 2>/dev/null
	exit 1
fi
# (the shell's "Killed" notice of its job to /dev/null)
{
	kill -KILL $cpid
	wait $cpid
	rc=$?
} 2>/dev/null
[ "$rc" = 137 ] && ok "sonde collect killed by SIGKILL (exit $rc); the target runs on" ||
	notok "sonde collect exit status $rc, expected 137"
# Every block the workers claim is written 1.5 s after the last tick.
sleep 1.5
touch go.k
# The target is no child of ours now: wait until it is gone (or a zombie
# of whoever adopted it), at most 10 minutes.
for i in $(seq 1 6000); do
	st=$(ps -o stat= -p "$tpid" 2>/dev/null)
	case "$st" in "" | Z*) break ;; esac
	sleep 0.1
done
case "$st" in
"" | Z*) ok "the target ends by itself" ;;
*)
	notok "the target still runs after 10 minutes"
	kill -KILL "$tpid"
	exit 1
	;;
esac

# ---- reading them ----
cn=$(cpu_of nh.txt nh.err timeout 600 "$SONDE" print -header n.er)
ck=$(cpu_of kh.txt kh.err timeout 600 "$SONDE" print -header k.er)
r=$?
note "sonde print -header: normal run $cn s of CPU, killed run $ck s"
[ $r = 0 ] && ok "-header of the killed run exits 0" || {
	notok "-header of the killed run exits $r"
	sed 's/^/#   /' kh.err | head -5
}
if awk -v k="$ck" -v n="$cn" 'BEGIN { exit !(k <= 10 * n + 1) }'; then
	ok "-header of the killed run takes at most 10 times the normal run's CPU and 1 s ($ck s, $cn s)"
else notok "-header of the killed run took $ck s of CPU, the normal run's $cn s"; fi
n=$(grep -c "tracing clock stopped" kh.txt)
[ "$n" = 1 ] && ok "-header says once that the tracing clock stopped: $(grep -o "stopped at [0-9.]* s" kh.txt)" || {
	notok "-header says $n times that the tracing clock stopped"
	grep -A3 "Read problems" kh.txt | sed 's/^/#   /'
}
[ "$(grep -c "tracing clock stopped" nh.txt)" = 0 ] && ok "... and nothing of the kind for the normal run" ||
	notok "the normal run's -header says the tracing clock stopped"
# as many allocations as the normal run's (the workers' 320000, and the
# few of the thread starts)
an=$(sed -n 's/^Heap tracing: *\([0-9]*\) allocations.*/\1/p' nh.txt)
ak=$(sed -n 's/^Heap tracing: *\([0-9]*\) allocations.*/\1/p' kh.txt)
[ -n "$ak" ] && [ "$ak" = "$an" ] && [ "$ak" -ge 320000 ] &&
	ok "every allocation of the killed run is read ($ak, as in the normal run)" ||
	notok "allocations read: killed run '$ak', normal run '$an'"

# The views that match the leaks again (-leaks, and -functions for its heap metrics), bounded alike
cn=$(cpu_of nl.txt nl.err timeout 600 "$SONDE" print -leaks -functions n.er)
ck=$(cpu_of kl.txt kl.err timeout 600 "$SONDE" print -leaks -functions k.er)
note "sonde print -leaks -functions: normal run $cn s of CPU, killed run $ck s"
if awk -v k="$ck" -v n="$cn" 'BEGIN { exit !(k <= 10 * n + 1) }'; then
	ok "-leaks -functions of the killed run: at most 10 times the normal run's CPU and 1 s"
else notok "-leaks -functions of the killed run took $ck s of CPU, the normal run's $cn s"; fi
