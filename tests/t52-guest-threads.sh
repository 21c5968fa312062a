# The collector keeps the target as threaded as it was (issue 15, item 3):
# no thread of sonde's own in the target, so /proc/self/status and
# /proc/self/task count what the plain run counts at main, and
# unshare(CLONE_NEWUSER) (refused with EINVAL in a multithreaded process)
# behaves as in the plain run, whatever it does in this sandbox.  And glibc
# keeps its single-threaded system call path: no cancellation bookkeeping.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

"$FIX/gthr" >plain.txt 2>&1
note "plain run: $(tr '\n' ' ' <plain.txt)"
check "the plain run prints its thread count and unshare's result" \
	sh -c "grep -q '^threads 1$' plain.txt && grep -q '^unshare ' plain.txt"

i=0
for opts in "" "-H on" "-s on" "-i on" "-S 0.1" "-p hi -H on -s on -i on -S 0.1"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$SONDE" collect $opts -o g$i.er "$FIX/gthr" >out$i.txt 2>err$i.txt
	r=$?
	desc=${opts:-default options}
	if [ $r = 0 ] && diff plain.txt out$i.txt >diff$i.txt; then
		ok "$desc: thread count at main and unshare as in the plain run"
	else
		notok "$desc: exit $r; differs from the plain run:"
		sed 's/^/#   /' diff$i.txt err$i.txt | head -10
	fi
done

check "the page sonde collect shares is gone from the experiment at the end" test ! -e g6.er/.sonde-shared

# The experiments still hold what those options record.
check "-H on: heap events recorded" sh -c "'$SONDE' print -heapstat g2.er | grep -qi 'allocations'"

# Descendants get their periodic points too (sonde collect writes them for
# every recording process image): a forked child that execs sleep 0.6 s.
"$SONDE" collect -p off -S 0.1 -o fk.er "$FIX/gthr" fork 0.6 >fk.txt 2>&1
check "fork+exec under -S 0.1: the child exits 0" grep -q '^child status 0$' fk.txt
# (-samples of the founder lists the whole tree's samples: both processes'.)
n=$("$SONDE" print -printmode csv -samples fk.er/_f1_x1.er 2>/dev/null | awk -F, '$5 == "periodic"' | wc -l)
# 6 periods of 0.1 s; at least 4 on a loaded machine
check "the exec'd child: periodic points over its 0.6 s sleep ($n)" test "$n" -ge 4 -a "$n" -le 8
n=$("$SONDE" print -printmode csv -samples fk.er 2>/dev/null | awk -F, '$5 == "periodic"' | wc -l)
check "parent and child: periodic points over the 0.6 s each ($n)" test "$n" -ge 8 -a "$n" -le 16

# Cost: a loop of read(2), a cancellation point.  glibc runs it without
# __pthread_enable/disable_asynccancel only while the process never had a
# second thread; with a thread of sonde's own they took 2-25% of the CPU
# (25% on a loop of 1-byte reads from /dev/zero).
"$SONDE" collect -p hi -S 0.05 -o loop.er "$FIX/gthr" loop 0.6 >loop.txt 2>&1
"$SONDE" print -printmode csv -metrics e.totalcpu:name -functions loop.er >loopf.csv 2>&1
tot=$(awk -F, '$1 == "<Total>" { printf "%.4f\n", $NF / 1e9; exit }' loopf.csv)
asc=$(awk -F, 'NR > 1 && $1 ~ /asynccancel|cancel_enabled/ { s += $NF } END { printf "%.4f\n", s / 1e9 }' loopf.csv)
note "read loop: total $tot s, in glibc's asynccancel functions $asc s"
check "read loop under -p hi -S 0.05: no time in glibc's cancellation path ($asc of $tot s)" \
	awk -v a="$asc" -v t="$tot" 'BEGIN { exit !(t > 0.3 && a == 0) }'

# Clock profiling's guard without a thread in the target: sonde collect
# watches from outside and calls into the process (ptrace) when needed.
# 1. Every action reset to SIG_DFL by a bare syscall instruction, then a
#    0.3 s sleep (during which the call comes: the sleep must be restarted,
#    not cut short, and errno kept) and 0.3 s of CPU, whose first sample
#    would kill the target had profiling not stopped.
"$FIX/gthr" reset >rs.plain 2>&1
note "plain: $(tr '\n' ' ' <rs.plain)"
for p in hi on; do
	"$SONDE" collect -p $p -o rs$p.er "$FIX/gthr" reset >rs$p.txt 2>rs$p.err
	r=$?
	if [ $r = 0 ] && grep -q '^threads 1$' rs$p.txt; then
		ok "-p $p: bare reset of every action, single-threaded target: exit 0, 1 thread at main"
	else
		notok "-p $p: bare reset of every action: exit $r (plain: 0)"
		sed 's/^/#   /' rs$p.txt rs$p.err | head -6
	fi
	check "-p $p: log.xml says clock profiling stopped" \
		grep -q 'kind="warning"[^>]*clock profiling stopped' rs$p.er/log.xml
	set -- $(awk '$1 == "slept_ms" { print $2, $4, $6 }' rs$p.txt)
	if [ "${1:-0}" -ge 300 ] && [ "${2:-1}" = 0 ] && [ "${3:-0}" = 4242 ]; then
		ok "-p $p: the sleep the call interrupted was restarted (${1} ms, no EINTR, errno kept)"
	else notok "-p $p: the sleep: ${1:-?} ms, ${2:-?} EINTR, errno ${3:-?} (want >= 300, 0, 4242)"; fi
done
# The same in a followed descendant (a fork child that execs): sonde
# collect calls into a process that is not its child.
"$SONDE" collect -p hi -o sp.er "$FIX/gthr" spawn reset >sp.txt 2>&1
check "a forked and exec'd child that resets every action: exits 0" grep -q '^child status 0$' sp.txt
check "its experiment says clock profiling stopped" \
	sh -c "grep -q 'kind=\"warning\"[^>]*clock profiling stopped' sp.er/_f1_x1.er/log.xml"

# 2. The sampling counter closed by the raw close_range system call in a
#    single-threaded target (no thread start to notice it): sonde collect
#    sees CPU time without samples and has the collector arm it again, so
#    the CPU burnt after the close is recorded where it was burnt.
R=$(sym_range "$FIX/gthr" after_close)
"$SONDE" collect -p hi -o cr.er "$FIX/gthr" closerange >cr.txt 2>cr.err
r=$?
if grep -q 'source="posix-cpu-timer"\|posix-cpu-timer' cr.er/log.xml; then
	note "-p hi samples with CPU timers here (no perf counter): no descriptor to lose, case skipped"
else
	check "closerange: exit 0" test $r = 0
	check "closerange: log.xml says the counter was armed again" \
		grep -q 'sampling counters.*1 thread(s) were armed again' cr.er/log.xml
	truth=$(awk '$1 == "after_close" { print $3 }' cr.txt)
	set -- $("$EXPCHECK" reach cr.er "$FIX/gthr" "$R")
	# A sample's weight is the thread's CPU since its previous one, so
	# the time without a counter is charged to the first sample after the
	# new one fires, still in after_close: within 5% and two 1 ms
	# intervals (the task-clock counter's samples are exact; not the
	# heaviest sample's weight as elsewhere: without the new counter the
	# one heavy sample is the exit's, holding all of after_close's time).
	if [ -n "$truth" ] && awk -v a="${8:-0}" -v b="$truth" \
		'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * 0.05 + 2e6) }'; then
		ok "closerange: after_close recorded ${8} ns of its $truth ns"
	else
		notok "closerange: after_close recorded ${8:-?} ns of its ${truth:-?} ns"
	fi
fi
