# The collector's signals in the target (issue 15 items 1 and 5).
# 1. The sampling handler fits where a handler of the target's own fits:
#    on a makecontext coroutine with a small stack, no byte below the stack
#    is written (canary) and a guard page below it is never touched, and
#    the coroutine's CPU is recorded.
# 5. Every libc entry that sets a signal action leaves sonde's handler in
#    place (the target's handler never receives a sample, the profile
#    holds); a raw rt_sigaction reset of every action does not kill the
#    target (through syscall(3) it is routed like sigaction; a bare syscall
#    instruction is detected and sampling stops, said in log.xml and the
#    header); sonde does not spend the target's RLIMIT_SIGPENDING.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# ---- 1. small stacks ----
X=$FIX/gsig_coro
R=$(sym_range "$X" coro_burn)
for k in 8 4; do
	# What fits: the fixture's own 1 kHz ITIMER_PROF handler on the same
	# stack, without sonde.
	own=$("$X" $k canary own | awk '$1 == "overwritten" { print $2 }')
	note "$k KiB stack: the fixture's own handler wrote ${own:-?} bytes below it"
	for p in hi on; do
		[ $p = on ] && [ $k = 8 ] && continue # the handler is the same; one size is enough
		ms=$([ $p = hi ] && echo 1 || echo 10)
		timeout 60 "$SONDE" collect -p $p -o c$k$p.er "$X" $k canary >out.c$k$p 2>err.c$k$p
		st=$?
		over=$(awk '$1 == "overwritten" { print $2 }' out.c$k$p)
		truth=$(awk '$1 == "coro" { print $3 }' out.c$k$p)
		if [ $st = 0 ]; then ok "-p $p, $k KiB coroutine stack: target exits 0"; else
			notok "-p $p, $k KiB coroutine stack: sonde collect exited $st"; sed 's/^/#   /' err.c$k$p | head -5; fi
		if [ -n "$over" ] && [ "$over" -le "${own:-0}" ]; then
			ok "-p $p, $k KiB: nothing written below the stack ($over bytes; own handler ${own:-?})"
		else notok "-p $p, $k KiB: ${over:-?} bytes below the coroutine's stack overwritten (own handler: ${own:-?})"; fi
		set -- $("$EXPCHECK" reach c$k$p.er "$X" "$R")
		rec=${8:-0}
		# The edge error is a sample's weight at each end; the timer
		# source's (-p on) come late and heavy on a busy machine.
		maxw=$(max_weight_ms c$k$p.er)
		ms=$(awk -v a="$ms" -v b="${maxw:-0}" 'BEGIN { print (b > a ? b : a) }')
		note "-p $p, $k KiB: coro_burn real ${truth:-?} ns, recorded $rec ns in ${4:-0} samples"
		if [ -n "$truth" ] && awk -v a="$rec" -v b="$truth" -v ms="$ms" \
			'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * 0.05 + 2 * ms * 1e6) }'; then
			ok "-p $p, $k KiB: the coroutine's CPU is recorded (within 5% + 2 intervals)"
		else notok "-p $p, $k KiB: coro_burn recorded $rec ns of ${truth:-?} ns"; fi
	done
	timeout 60 "$SONDE" collect -p hi -o g$k.er "$X" $k guard >out.g$k 2>err.g$k
	st=$?
	if [ $st = 0 ]; then ok "-p hi, $k KiB stack with a guard page below: target exits 0"; else
		notok "-p hi, $k KiB stack with a guard page below: sonde collect exited $st"; fi
done

# ---- 5. every entry that sets an action ----
D=$FIX/gsig_disp
for m in signal bsd_signal ssignal sysv_signal __sysv_signal sigset sigvec; do
	# What libc keeps for itself, the fixture's truth without sonde.
	plainforeign=$("$D" $m | awk '$1 == "foreign" { print $2 }')
	for p in hi on; do
		[ $p = on ] && case $m in sigset | bsd_signal | sysv_signal) ;; *) continue ;; esac
		ms=$([ $p = hi ] && echo 1 || echo 10)
		timeout 60 "$SONDE" collect -p $p -o $m$p.er "$D" $m >out.$m$p 2>err.$m$p
		st=$?
		handled=$(awk '$1 == "handled" { print $2 }' out.$m$p)
		cpu=$(awk '$1 == "main" { print $3 }' out.$m$p)
		set -- $("$EXPCHECK" summary $m$p.er)
		n=${2:-0} w=${4:-0}
		note "-p $p $m: exit $st, handled ${handled:-?}, cpu ${cpu:-?} ns, $n samples weighing $w ns"
		if [ $st = 0 ] && [ "${handled:-x}" = 0 ]; then
			ok "-p $p $m: the target's handlers never received the profiling signal"
		else notok "-p $p $m: exit $st, the target's handlers received ${handled:-?} signals"; fi
		# Exact: the kernel's actions, read past every interposer, are
		# the fixture's but for what libc keeps and sonde's one signal.
		foreign=$(awk '$1 == "foreign" { print $2 }' out.$m$p)
		if [ -n "$plainforeign" ] && [ "${foreign:-x}" = $((plainforeign + 1)) ]; then
			ok "-p $p $m: sonde's handler is in place in the kernel, for its signal alone"
		else notok "-p $p $m: ${foreign:-?} actions not the target's (alone ${plainforeign:-?}; want one more)"; fi
		# The weight is the CPU clock's, so it matches closely; the count
		# is one per interval of CPU, less the intervals a loaded machine
		# merges (17 of 30 at load 10): at least 30% of them at -p hi,
		# where the fault this catches leaves one sample (the thread's
		# tail).  The timer source (-p on) is checked only at the ticks
		# that find the thread running, and on a busy machine a thread can
		# run between ticks for a whole 0.3 s: 1 sample in 12 of 240 runs
		# at load 12, main's code and the one before alike.  Its count
		# proves nothing; the kernel's action above is the exact check.
		if [ -n "$cpu" ] && within "$w" "$cpu" 5 && awk -v n="$n" -v c="$cpu" -v ms="$ms" -v p="$p" \
			'BEGIN { exit !(p == "on" ? n >= 1 : n >= 0.3 * c / (ms * 1e6)) }'; then
			ok "-p $p $m: the profile holds ($n samples, CPU within 5%)"
		else notok "-p $p $m: $n samples weighing $w ns for ${cpu:-?} ns of CPU"; fi
	done
done

# A raw reset of every action to SIG_DFL.
"$D" raw >/dev/null 2>&1
want=$?
for p in hi on; do
	ms=$([ $p = hi ] && echo 1 || echo 10)
	timeout 60 "$SONDE" collect -p $p -o raw$p.er "$D" raw >out.raw$p 2>err.raw$p
	st=$?
	cpu=$(awk '$1 == "main" { print $3 }' out.raw$p)
	set -- $("$EXPCHECK" summary raw$p.er)
	n=${2:-0} w=${4:-0}
	if [ $st = $want ]; then ok "-p $p: syscall(SYS_rt_sigaction) reset of every action: exit $st as without sonde"; else
		notok "-p $p: syscall(SYS_rt_sigaction) reset of every action: exit $st, without sonde $want"; fi
	if [ -n "$cpu" ] && within "$w" "$cpu" 5 && awk -v n="$n" -v c="$cpu" -v ms="$ms" -v p="$p" \
		'BEGIN { exit !(p == "on" ? n >= 2 : n >= 0.3 * c / (ms * 1e6)) }'; then
		ok "-p $p: the profile holds after syscall(SYS_rt_sigaction) ($n samples)"
	else notok "-p $p: after syscall(SYS_rt_sigaction): $n samples weighing $w ns for ${cpu:-?} ns"; fi
done
# By a bare syscall instruction: detected (the fixture sleeps 0.3 s after
# the reset, longer than the check period), sampling stops, the target
# lives.  A sample due between the reset and the check would still kill
# it (doc/sonde-collect.md).
"$D" asm >/dev/null 2>&1
want=$?
for p in hi on; do
	timeout 60 "$SONDE" collect -p $p -o asm$p.er "$D" asm >out.asm$p 2>err.asm$p
	st=$?
	if [ $st = $want ]; then ok "-p $p: bare rt_sigaction reset of every action: exit $st as without sonde"; else
		notok "-p $p: bare rt_sigaction reset of every action: exit $st, without sonde $want"; fi
	check "-p $p: log.xml says clock profiling stopped" grep -q 'kind="warning"[^>]*clock profiling stopped' asm$p.er/log.xml
	check "-p $p: the header says so" sh -c "'$SONDE' print -header asm$p.er | grep -q 'clock profiling stopped'"
done

# The target's RLIMIT_SIGPENDING: sonde's POSIX timers (one per thread)
# held queued signals of the user's budget.  As a user of its own (when
# run as root) nothing else counts against the budget.
mkdir u && chmod 777 u && chmod 711 "$TMP"
AS=""
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	AS="setpriv --reuid=54321 --regid=54321 --clear-groups"
else note "not root: other processes of this user share the budget; counts may differ by their use"; fi
# The user of its own must reach the build (a clone under a 0700
# directory is not reachable): else the case is skipped, and says so.
if [ -n "$AS" ] && ! $AS test -x "$SONDE" -a -x "$D" -a -r "$B/lib/sonde/libsonde_collector.so"; then
	note "skipped the RLIMIT_SIGPENDING case: the build is not reachable by uid 54321"
	plist=""
else plist="on hi"; fi
base=$(bash -c "ulimit -i 32 && exec $AS '$D' sigq" | awk '$1 == "sigqueue" || $1 == "timer_create" { printf "%s=%s ", $1, $2 }')
for p in $plist; do
	got=$(bash -c "ulimit -i 32 && exec $AS '$SONDE' collect -p $p -o u/q$p.er '$D' sigq" 2>err.q$p |
		awk '$1 == "sigqueue" || $1 == "timer_create" { printf "%s=%s ", $1, $2 }')
	note "ulimit -i 32, -p $p: without sonde $base, under sonde $got"
	# A sample's signal holds one slot of the budget from its queueing to
	# its delivery (microseconds), so a count can be one short now and
	# then (31 of 32 once in about ten runs); the fault held one per
	# thread for the whole run.
	if [ -n "$base" ] && awk -v g="$got" -v b="$base" 'BEGIN {
		split(g, x, /[= ]/); split(b, y, /[= ]/)
		exit !(x[2] + 1 >= y[2] && x[4] + 1 >= y[4] && x[2] <= y[2] && x[4] <= y[4]) }'; then
		ok "ulimit -i 32, -p $p: the target's sigqueue and timer_create succeed as often as without sonde"
	else notok "ulimit -i 32, -p $p: without sonde $base, under sonde ${got:-nothing}"; fi
done
