# sonde kernel (issue 32): every CPU's time with the kernel's call stacks,
# as er_kernel records it.  Two busy processes run through the whole
# window: each one's recorded CPU (its <kburn_PID_N> frame) within 10% of
# what its own CPU clock says it used while sampled (kburn logs it against
# CLOCK_MONOTONIC, the experiment's clock), and the founder's time (<IDLE>
# and the processes) within 10% of CPUs x duration.  With a PROGRAM (the
# ktime fixture, pread of a cached file), its exit status passes through
# and its kernel time has the kernel's frames (do_syscall_64 ...) above
# its process frame.  With -F =kburn, a sub-experiment per busy process
# (_kburn_PID_N.1.er) with its user stacks unwound from the records'
# copies: its time its own clock's, all of it reaching main, the founder
# still counted once.  Refused, in one line and before anything is made,
# for an unprivileged user at perf_event_paranoid above 0; bad options
# are errors too.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
if [ "$(id -u)" != 0 ] && [ "$paranoid" -gt 0 ]; then
	out=$("$SONDE" kernel -t 0.2 -o u.er 2>&1)
	r=$?
	echo "$out" >msg.txt
	check "not root, perf_event_paranoid $paranoid: refused, exit 2 ($out)" sh -c "[ $r = 2 ] && grep -q CAP_PERFMON msg.txt"
	exit 0
fi

# cpu_at LOG T: a kburn's CPU time (ns) at CLOCK_MONOTONIC time T, from
# its own log, between the lines around T
cpu_at() {
	awk -v t="$2" '{ if ($1 <= t) { a = $1; ca = $2 } else if (!b) { b = $1; cb = $2 } }
		END { if (!b || !a) { print -1; exit } printf "%.0f\n", ca + (cb - ca) * (t - a) / (b - a) }' "$1"
}
# incl EXP NAME: inclusive time (ns) of the functions whose name contains NAME
incl() {
	"$SONDE" print -printmode csv -functions "$1" 2>/dev/null |
		awk -F, -v f="$2" 'index($1, f) { s += $5 } END { printf "%.0f\n", s }'
}

"$FIX/kburn" b1.log 4 &
b1=$!
"$FIX/kburn" b2.log 4 &
b2=$!
sleep 0.3
"$SONDE" kernel -p hi -t 2 -o k.er >out.txt 2>err.txt
r=$?
wait $b1 $b2
check "sonde kernel -t 2: exit 0 ($(cat err.txt))" test $r = 0
check "it reads without errors" sh -c "'$EXPCHECK' summary k.er | grep -q ' errors 0 '"
"$SONDE" print -limit 0 -functions k.er >fn.txt 2>/dev/null
ncpu=$(sed -n 's/.*<system [^>]*cpus="\([0-9]*\)".*/\1/p' k.er/log.xml)
# the time sampled: from the start event (the counters enabled) to the
# exit event (disabled), CLOCK_MONOTONIC
ts=$(awk '/kind="start"/ { match($0, /time_ns="[0-9]*"/); print substr($0, RSTART + 9, RLENGTH - 10) }' k.er/log.xml)
te=$(awk '/kind="exit"/ { match($0, /time_ns="[0-9]*"/); print substr($0, RSTART + 9, RLENGTH - 10) }' k.er/log.xml)
dur=$((te - ts))
# each busy process's CPU time while sampled, from its own log
for n in 1 2; do
	[ $n = 1 ] && p=$b1 || p=$b2
	rec=$(incl k.er "<kburn_PID_${p}>")
	want=$(($(cpu_at b$n.log "$te") - $(cpu_at b$n.log "$ts")))
	check "<kburn_PID_$p>: recorded $rec ns within 10% of its CPU time while sampled ($want ns, its own clock)" \
		within "$rec" "$want" 10
done
total=$(awk '$NF == "<Total>" { printf "%.0f", $1 * 1e9 }' fn.txt)
want=$((ncpu * dur))
check "the founder's time ($total ns: <IDLE> and the processes) within 10% of $ncpu CPUs x $dur ns" \
	within "$total" "$want" 10
"$SONDE" print -threads k.er >th.txt 2>/dev/null
check "-threads: one row a CPU, named" sh -c "grep -q ' CPU 0\$' th.txt && [ \$(grep -c ' CPU [0-9]*\$' th.txt) = $ncpu ]"
check "the experiment holds kallsyms and the processes' names" sh -c "test -s k.er/kallsyms && grep -q '^$b1 kburn\$' k.er/processes"

# a PROGRAM: recorded while it runs, its exit status passed through
"$SONDE" kernel -p hi -o p.er "$FIX/ktime" "$PWD/data" 0.5 >truth.txt 2>err.txt
r=$?
check "sonde kernel PROGRAM: the program's exit status (0) and output" sh -c "[ $r = 0 ] && grep -q '^read_phase ' truth.txt"
"$SONDE" print -limit 0 -functions p.er >fn.txt 2>/dev/null
check "sonde kernel PROGRAM: its process frame, <ktime_PID_N>" grep -q '<ktime_PID_[0-9]*>$' fn.txt
# -dump stacks, leaf first: a stack through do_syscall_64 whose root is
# the program's process frame
"$SONDE" print -dump stacks p.er >st.txt 2>/dev/null
n=$(awk '/^stack/ { if (sys && proc) n++; sys = proc = 0; next }
	/kernel  <kernel>:do_syscall_64\+/ { sys = 1 } / process  <processes>:<ktime_PID_[0-9]*>/ { proc = 1 }
	END { if (sys && proc) n++; print n + 0 }' st.txt)
check "sonde kernel PROGRAM: its system calls' kernel stacks on its process frame ($n stacks)" test "$n" -gt 0
"$SONDE" kernel -p hi -o q.er sh -c 'exit 7' >/dev/null 2>&1
check "sonde kernel PROGRAM: exit status 7 passed through" test $? = 7

# -F on -t 3 while two kburns run: a sub-experiment per process that ran,
# the kburns' _kburn_PID_N.1.er among them, with their user stacks
# (unwound from the records' stack copies) under the kernel's, their time
# their own clocks' while sampled; the founder alone as before
rm -f b1.log b2.log
"$FIX/kburn" b1.log 5 &
b1=$!
"$FIX/kburn" b2.log 5 &
b2=$!
sleep 0.3
"$SONDE" kernel -p hi -t 3 -F on -o f.er >out.txt 2>err.txt
r=$?
wait $b1 $b2
check "-F on: exit 0 ($(cat err.txt))" sh -c "[ $r = 0 ] && grep -q 'processes followed' err.txt"
ts=$(awk '/kind="start"/ { match($0, /time_ns="[0-9]*"/); print substr($0, RSTART + 9, RLENGTH - 10) }' f.er/log.xml)
te=$(awk '/kind="exit"/ { match($0, /time_ns="[0-9]*"/); print substr($0, RSTART + 9, RLENGTH - 10) }' f.er/log.xml)
for n in 1 2; do
	[ $n = 1 ] && p=$b1 || p=$b2
	sub=f.er/_kburn_PID_$p.1.er
	if [ -d $sub ]; then
		ok "-F on: $sub, named as the reference names them"
	else
		notok "-F on: no $sub ($(ls f.er | tr '
' ' '))"
		continue
	fi
	want=$(($(cpu_at b$n.log "$te") - $(cpu_at b$n.log "$ts")))
	"$SONDE" print -printmode csv -functions $sub >sub.csv 2>/dev/null
	tot=$(awk -F, '$1 == "<Total>" { printf "%.0f", $5 }' sub.csv)
	inmain=$(awk -F, '$1 == "main" { printf "%.0f", $5 }' sub.csv)
	check "$sub: recorded $tot ns within 10% of its own clock's $want ns" within "$tot" "$want" 10
	check "$sub: $inmain of $tot ns reach main (at least 99%: unwound from the copies)" \
		awk -v a="$inmain" -v t="$tot" 'BEGIN { exit !(t > 0 && a >= 0.99 * t) }'
done
ftot=$("$SONDE" print -printmode csv -functions f.er 2>/dev/null | awk -F, '$1 == "<Total>" { printf "%.0f", $5 }')
fdur=$((te - ts))
check "-F: the founder opened alone, its sub-experiments not counted twice ($ftot ns of 2 x $fdur)" \
	within "$ftot" $((2 * fdur)) 10
check "-F: each sub-experiment has the founder's kallsyms" \
	sh -c "[ \$(find f.er -mindepth 2 -name kallsyms -links +1 | wc -l) = \$(find f.er -mindepth 1 -maxdepth 1 -name '*.er' | wc -l) ]"

# -F =REGEX: only the processes whose name matches
"$FIX/kburn" b3.log 1.5 &
b3=$!
sleep 0.2
"$SONDE" kernel -p hi -t 0.5 -F '=^kbur' -o g.er >/dev/null 2>err.txt
wait $b3
subs=$(find g.er -mindepth 1 -maxdepth 1 -name '_*.er' | tr '\n' ' ')
check "-F =^kbur: the kburn's sub-experiment alone ($subs)" sh -c "[ '$subs' = 'g.er/_kburn_PID_$b3.1.er ' ]"

# errors
out=$("$SONDE" kernel -F '=(' -t 1 -o f2.er 2>&1)
r=$?
echo "$out" >msg.txt
check "-F =( : exit 2, the regular expression refused, nothing made ($out)" \
	sh -c "[ $r = 2 ] && grep -q 'regular expression' msg.txt && [ ! -e f2.er ]"
out=$("$SONDE" kernel -p fast -t 1 -o f3.er 2>&1)
r=$?
echo "$out" >msg.txt
check "-p fast: exit 2, the value named" sh -c "[ $r = 2 ] && grep -q fast msg.txt && [ ! -e f3.er ]"
"$SONDE" kernel -z 1 >/dev/null 2>&1
check "an unknown option: exit 2" test $? = 2
if [ "$(id -u)" = 0 ] && [ "$paranoid" -gt 0 ] && command -v setpriv >/dev/null; then
	mkdir -p nob && chmod 777 nob
	out=$(cd nob && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$SONDE" kernel -t 0.2 -o u.er 2>&1 >/dev/null)
	r=$?
	if [ $r = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "perf_event_paranoid <= 0 (it is $paranoid) or CAP_PERFMON" &&
		[ ! -e nob/u.er ]; then
		ok "unprivileged at perf_event_paranoid $paranoid: a one-line refusal, exit 2, no experiment"
	else
		notok "unprivileged: exit $r, '$out'"
	fi
fi
