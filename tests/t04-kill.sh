# A target killed with SIGKILL in the middle of a run leaves a readable
# experiment whose samples account for the CPU time used up to the kill
# (within 2%).  The truth is the kernel's own account of the target's
# threads (schedstat: nanoseconds on CPU), read just before the kill.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

"$SONDE" collect -p hi -o killed.er "$FIX/burn" 2 60 >out.txt 2>&1 &
cpid=$!
# Find the target (collect's child) and let it run for a while.
tpid=""
for i in $(seq 1 50); do
	tpid=$(pgrep -P $cpid | head -n 1)
	[ -n "$tpid" ] && break
	sleep 0.1
done
# Until the target has used 1.5 s of CPU (not a fixed wall time: on a
# busy machine 2 s of wall time can be far less CPU), at most 60 s.
cpu_used() {
	total=0
	for f in /proc/$tpid/task/*/schedstat; do
		v=$(awk '{print $1}' "$f" 2>/dev/null)
		total=$((total + ${v:-0}))
	done
}
for i in $(seq 1 600); do
	cpu_used
	[ "$total" -ge 1500000000 ] && break
	sleep 0.1
done
kill -STOP "$tpid"
cpu_used
kill -KILL "$tpid"
wait $cpid
rc=$?
if [ "$rc" = 137 ]; then ok "collect exits 137 for a target killed by SIGKILL"; else notok "collect exit status $rc, expected 137"; fi
check "log.xml records SIGKILL" grep -q 'signal="9"' killed.er/log.xml
set -- $("$EXPCHECK" summary killed.er)
rec=$4
note "CPU used before the kill $total ns, recorded $rec ns in $2 samples"
if [ "${12}" = 0 ] && [ "$2" -gt 1000 ]; then ok "killed experiment is readable without errors ($2 samples)"; else
	notok "killed experiment: $*"; fi
if within "$rec" "$total" 2; then ok "samples account for the CPU time up to the kill (within 2%)"; else
	notok "recorded $rec ns vs $total ns used before the kill"; fi
