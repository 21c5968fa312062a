# sonde collect -P PID (issue 32): a running process recorded from outside
# it.  The attachee fixture runs two busy threads from its start and a
# third made a second later, during the attach; each logs its own CPU
# clock against CLOCK_MONOTONIC, the experiment's clock.  Attached 0.5 s
# after its start for 1.5 s: it prints its normal output and exits 0,
# its own check finds its signal dispositions, mask, timer, descriptors
# and mappings as before; each thread's recorded CPU is within 10% of
# what it used while recorded (the late one's too), and at least 99% of
# the recorded time reaches its thread's start routine.  A process that
# does not exist, one of another user, one that ends during the attach,
# a program with -P and the options attach cannot give: clear messages,
# the target unharmed.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
A=$FIX/attachee

# cpu_at LOG T: a thread's CPU time (ns) at CLOCK_MONOTONIC time T, from
# its log (0 before its first line: the late thread did not exist yet)
cpu_at() {
	awk -v t="$2" 'NR == 1 && $1 > t { print 0; done = 1; exit } { if ($1 <= t) { a = $1; ca = $2 } else if (!b) { b = $1; cb = $2 } }
		END { if (done) exit; if (!a) { print 0; exit } if (!b) { print ca; exit } printf "%.0f\n", ca + (cb - ca) * (t - a) / (b - a) }' "$1"
}
incl() { # EXP NAME: inclusive ns of the function NAME
	"$SONDE" print -printmode csv -functions "$1" 2>/dev/null |
		awk -F, -v f="$2" '$1 == f { s += $5 } END { printf "%.0f\n", s }'
}
event_ns() { # EXP KIND
	awk -v k="kind=\"$2\"" 'index($0, k) { match($0, /time_ns="[0-9]*"/); print substr($0, RSTART + 9, RLENGTH - 10); exit }' "$1/log.xml"
}

mkdir logs
"$A" "$PWD/logs" 3 >target.out 2>target.err &
pid=$!
sleep 0.5
"$SONDE" collect -P $pid -p hi -t 1.5 -o a.er >col.out 2>col.err
r=$?
wait $pid
tr=$?
check "sonde collect -P: exit 0 ($(tr '\n' ' ' <col.err))" test $r = 0
check "the target's normal output and exit status (0)" sh -c "[ $tr = 0 ] && grep -q '^result OK\$' target.out"
check "after the detach, the target's dispositions, mask, timer, descriptors and mappings are as before" \
	grep -q '^state unchanged$' target.out
check "the experiment reads without errors" sh -c "'$EXPCHECK' summary a.er | grep -q ' errors 0 '"
ts=$(event_ns a.er start) te=$(event_ns a.er exit)
for t in busy_a busy_b late_thread; do
	want=$(($(cpu_at logs/$t.log "$te") - $(cpu_at logs/$t.log "$ts")))
	rec=$(incl a.er $t)
	check "$t: recorded $rec ns within 10% of its CPU time while attached ($want ns, its own clock)" \
		within "$rec" "$want" 10
done
total=$("$SONDE" print -printmode csv -functions a.er 2>/dev/null | awk -F, '$1 == "<Total>" { printf "%.0f", $5 }')
rooted=$(($(incl a.er busy_a) + $(incl a.er busy_b) + $(incl a.er late_thread) + $(incl a.er main)))
check "$rooted of $total ns reach main or the thread's start routine (at least 99%)" \
	awk -v a="$rooted" -v t="$total" 'BEGIN { exit !(t > 0 && a >= 0.99 * t) }'
check "log.xml says how it attached" grep -q 'attached from outside the process' a.er/log.xml

# The vDSO, which has no file: the attach copies its image (the kernel's,
# sonde's own) into the experiment, so that time in it has names.  A
# program that reads CLOCK_MONOTONIC in a loop spends most of it there.
cat >vd.c <<'CEOF'
#include <time.h>
int main(void)
{
	struct timespec t, e;
	clock_gettime(CLOCK_MONOTONIC, &e);
	e.tv_sec += 3;
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while (t.tv_sec < e.tv_sec || (t.tv_sec == e.tv_sec && t.tv_nsec < e.tv_nsec));
	return 0;
}
CEOF
cc -O2 -o vd vd.c
./vd &
vpid=$!
sleep 0.3
"$SONDE" collect -P $vpid -p hi -t 1 -o v.er >/dev/null 2>vcol.err
wait $vpid
"$SONDE" print -printmode csv -functions v.er 2>/dev/null >vf.csv
vtot=$(awk -F, '$1 == "<Total>" { printf "%.0f", $3 }' vf.csv)
vnamed=$(awk -F, '$1 == "__vdso_clock_gettime" { printf "%.0f", $5 }' vf.csv)
check "the vDSO's functions are named from its copy (${vnamed:-0} of $vtot ns under __vdso_clock_gettime, at least half; vdso.so there)" \
	sh -c "[ -s v.er/vdso.so ] && awk -v a='${vnamed:-0}' -v t='$vtot' 'BEGIN { exit !(t > 0 && a >= 0.5 * t) }'"

# errors, the target unharmed
"$SONDE" collect -P 4000000 -t 0.2 -o x.er >/dev/null 2>msg.txt
r=$?
check "-P of no process: exit 2, said ($(cat msg.txt))" sh -c "[ $r = 2 ] && grep -q 'no such process' msg.txt && [ ! -e x.er ]"
sleep 3 &
s=$!
"$SONDE" collect -P $s -t 0.2 -o x.er /bin/true >/dev/null 2>msg.txt
r=$?
check "-P with a program: exit 2 ($(cat msg.txt))" sh -c "[ $r = 2 ] && grep -q 'no program to run' msg.txt"
"$SONDE" collect -P $s -H on -t 0.2 -o x.er >/dev/null 2>msg.txt
r=$?
check "-P -H on: exit 2, says heap tracing needs the collector inside ($(cat msg.txt))" \
	sh -c "[ $r = 2 ] && grep -q 'heap tracing needs' msg.txt && [ ! -e x.er ]"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir -p nob && chmod 777 nob
	(cd nob && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$SONDE" collect -P $s -t 0.2 -o u.er >/dev/null 2>../msg.txt)
	r=$?
	check "-P of another user's process, as nobody: exit 2, one line ($(cat msg.txt))" \
		sh -c "[ $r = 2 ] && [ \$(wc -l <msg.txt) = 1 ] && grep -q 'cannot attach' msg.txt && [ ! -e nob/u.er ]"
	check "... and that process runs on" kill -0 $s
fi
kill $s 2>/dev/null
wait $s 2>/dev/null

# a process that ends during the attach: recorded to its end
mkdir logs2
"$A" "$PWD/logs2" 1 >t2.out 2>&1 &
pid=$!
sleep 0.3
"$SONDE" collect -P $pid -p hi -t 5 -o e.er >/dev/null 2>e.err
r=$?
wait $pid
tr=$?
check "a target that ends during the attach: both exit 0, recorded to its end ($(tr '\n' ' ' <e.err))" \
	sh -c "[ $r = 0 ] && [ $tr = 0 ] && grep -q 'recorded until the end' e.err && grep -q '^result OK\$' t2.out"
check "... and its experiment reads" sh -c "'$SONDE' print -functions e.er 2>/dev/null | grep -q busy_a"

# a target under a seccomp allow-list: nothing runs inside it, so it is
# as without the attach
"$FIX/gsec_allow" sandbox >plain.out 2>&1
prc=$?
"$FIX/gsec_allow" sandbox >sec.out 2>&1 &
pid=$!
sleep 0.1
"$SONDE" collect -P $pid -p hi -t 0.5 -o s.er >/dev/null 2>s.err
r=$?
wait $pid
tr=$?
check "a target under a seccomp allow-list: exit $tr as plain ($prc), the same output, the attach exit 0 ($r)" \
	sh -c "[ $tr = $prc ] && [ $r = 0 ] && [ \"\$(awk '{ print \$1 }' plain.out)\" = \"\$(awk '{ print \$1 }' sec.out)\" ]"
