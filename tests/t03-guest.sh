# The collector is a guest: a target that uses SIGPROF, setitimer, signal
# masks, real-time signals, errno, system calls and fork runs to completion
# with the same output as without the collector, and log.xml says what
# sonde did about it.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
G=$FIX/guest

# rtsig runs with the fasync delivery, whose real-time signal its handlers
# then share; the default delivery at -p hi is SIGTRAP, shared by sigtrap.
for mode in sigprof signal block errno syscalls rtsig fork dlopen closeall sigtrap perfoff; do
	"$G" $mode >plain.$mode 2>&1
	prc=$?
	src=; [ $mode = rtsig ] && src=perf-fasync
	SONDE_CLOCK_SOURCE=$src "$SONDE" collect -p hi -o $mode.er "$G" $mode >col.$mode 2>&1
	crc=$?
	if [ $prc = 0 ] && [ $crc = 0 ] && cmp -s plain.$mode col.$mode; then
		ok "$mode: runs to completion with unchanged output"
	else
		notok "$mode: plain rc=$prc, collected rc=$crc"
		diff plain.$mode col.$mode | sed 's/^/#   /'
	fi
	set -- $("$EXPCHECK" summary $mode.er)
	if [ "${2:-0}" -gt 50 ] && [ "${10}" = 0 ] && [ "${12}" = 0 ]; then
		ok "$mode: experiment readable, $2 samples, no problems"
	else
		notok "$mode: experiment: $*"
	fi
done

check "sigprof: log.xml notes the target's SIGPROF handler" grep -q 'own SIGPROF handler' sigprof.er/log.xml
check "sigprof: log.xml notes the target's setitimer" grep -q 'setitimer(ITIMER_PROF)' sigprof.er/log.xml
check "signal: signal() handler noted too" grep -q 'own SIGPROF handler' signal.er/log.xml
check "block: log.xml notes the blocked profiling signal" grep -q 'blocked the profiling signal' block.er/log.xml
check "rtsig: log.xml notes the chained handler" grep -q 'chains non-sample signals' rtsig.er/log.xml
check "sigtrap: sampled with SIGTRAP delivery" grep -q 'clock_source="perf-task-clock-sigtrap"' sigtrap.er/log.xml
check "sigtrap: log.xml notes the chained handler" grep -q 'chains non-sample signals' sigtrap.er/log.xml

# A breakpoint the target does not handle kills it with SIGTRAP, as without
# the collector; the experiment is still readable.
"$G" trapdie >plain.trapdie 2>&1
prc=$?
"$SONDE" collect -p hi -o trapdie.er "$G" trapdie >col.trapdie 2>&1
crc=$?
if [ $prc = 133 ] && grep -q "about to trap" col.trapdie && ! grep -q survived col.trapdie && [ $crc -ne 0 ]; then
	ok "trapdie: dies of SIGTRAP under the collector too (plain rc=$prc, collected rc=$crc)"
else
	notok "trapdie: plain rc=$prc, collected rc=$crc"
	sed 's/^/#   /' col.trapdie
fi
set -- $("$EXPCHECK" summary trapdie.er)
if [ "${2:-0}" -gt 50 ]; then ok "trapdie: experiment readable, $2 samples"; else notok "trapdie: experiment: $*"; fi

# PR_TASK_PERF_EVENTS_DISABLE in the initial thread would disable the
# sampling counter every thread inherited from it: about one sample per
# CPU millisecond must remain (without the fix: a sample per thread).
set -- $("$EXPCHECK" threads perfoff.er | awk '{ n += $2; c += $4 } END { print n, c / 1e6 }')
if within "$1" "$2" 10; then ok "perfoff: $1 samples for $2 ms of CPU after PR_TASK_PERF_EVENTS_DISABLE"; else
	notok "perfoff: $1 samples for $2 ms of CPU"; fi
check "perfoff: log.xml says the counters were enabled again" grep -q 'PR_TASK_PERF_EVENTS_DISABLE' perfoff.er/log.xml
check "closeall: log.xml notes the refused close" grep -q 'closed a descriptor of the collector' closeall.er/log.xml
check "closeall: the experiment was finished after the closes" grep -q 'kind="end"' closeall.er/log.xml

# Recorded CPU time still matches for the blocked-signal, syscall and
# close-everything modes.
for mode in block syscalls closeall; do
	read -r tid _ rec real <<EOT
$("$EXPCHECK" threads $mode.er | sort -k3 -n | tail -n 1)
EOT
	if within "$rec" "$real" 2; then ok "$mode: recorded CPU $rec ns within 2% of real $real ns"; else
		notok "$mode: recorded CPU $rec ns vs real $real ns"; fi
done

# Forked children never write into the parent's experiment: every sample
# belongs to the target's own threads, all of which ended in log.xml.
pid=$(sed -n 's/.*<target pid="\([0-9]*\)".*/\1/p' fork.er/log.xml)
others=$("$EXPCHECK" threads fork.er | awk -v p="$pid" '$1 != p && $2 > 0' | wc -l)
if [ -n "$pid" ] && [ "$others" = 0 ]; then ok "fork: only the parent's samples in the experiment"; else
	notok "fork: $others foreign threads with samples (target pid '$pid')"; fi

# dlopen/dlclose: libz appears in map.xml with a load and an unload, and
# samples inside it (unwound through its .eh_frame) reach main.
zid=$(sed -n 's/.*<object id="\([0-9]*\)".*event="load" path="[^"]*libz[^"]*".*/\1/p' dlopen.er/map.xml | head -n 1)
if [ -n "$zid" ] && grep -q "<object id=\"$zid\" .*event=\"unload\"" dlopen.er/map.xml; then
	ok "dlopen: libz loaded and unloaded in map.xml"; else notok "dlopen: libz load/unload missing from map.xml"; fi
MAIN=$(sym_range "$G" main)
DL=$(sym_range "$G" mode_dlopen)
set -- $("$EXPCHECK" reach dlopen.er "$G" $MAIN $DL)
if [ "$2" -gt 300 ] && awk -v m="$4" -v s="$2" 'BEGIN { exit !(m >= s * 0.995) }'; then
	ok "dlopen: $4 of $2 samples reach main"; else notok "dlopen: $4 of $2 samples reach main"; fi
