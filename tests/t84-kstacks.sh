# Kernel call stacks (issue 32, sonde collect -k on): the ktime fixture
# alternates ~20 ms of pread of a cached file (the kernel copies the page
# cache: nearly all system time) in read_phase with ~20 ms of user
# arithmetic in compute_phase, and prints each function's own CPU time.
# Under -k on, pread's samples carry the kernel's stack above the user
# stack that made the call, named from the experiment's copy of
# kallsyms, while each user function's inclusive time stays its truth (as
# t40 judges it without kernel stacks).  Refused before the target starts
# where this user may not see the kernel's stacks (an unprivileged user at
# perf_event_paranoid 2) or without clock profiling.  And the guest: the
# counter's ring buffer is a new thing on the sampling path, so the
# attacks of the guest tests (a seccomp allow-list, descriptors taken,
# signals blocked by the raw call, forks and execs, thread churn) run
# under -k on with their normal output and exit status.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
KT=$FIX/ktime
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)

fn_ns() { # EXP COLUMN(3 excl, 5 incl) NAME
	"$SONDE" print -printmode csv -functions "$1" 2>/dev/null |
		awk -F, -v c="$2" -v f="$3" 'index($1, f) { s += $c } END { printf "%.0f\n", s }'
}
truth() { awk -v f="$2" '$1 == f { print $2 }' "$1"; }
tol() { # SHARE_NS TOTAL_NS SAMPLES -> percent (t40's)
	awk -v a="$1" -v t="$2" -v n="$3" 'BEGIN { p = a / t; if (n < 1) n = 1
		printf "%.1f\n", 400 * sqrt((1 - p) / (p * n)) + 2 }'
}

# make check runs as root (it installs packages); elsewhere an
# unprivileged user at perf_event_paranoid 2 gets the refusal only
if [ "$(id -u)" != 0 ] && [ "$paranoid" -gt 1 ]; then
	out=$("$SONDE" collect -k on -p hi -o u.er "$KT" "$PWD/data" 0.1 2>&1 >/dev/null)
	r=$?
	echo "$out" >msg.txt
	check "not root, perf_event_paranoid $paranoid: -k on is refused, exit 2 ($out)" \
		sh -c "[ $r = 2 ] && grep -q CAP_PERFMON msg.txt"
	exit 0
fi

"$SONDE" collect -k on -p hi -o ks.er "$KT" "$PWD/data" 1.5 >truth.txt 2>err.txt
r=$?
if [ $r = 0 ] && grep -q '^compute_phase ' truth.txt && ! [ -s err.txt ]; then
	ok "-k on: the fixture runs, exit 0, nothing on stderr"
else
	notok "-k on: collect exited $r"
	sed 's/^/#   /' err.txt | head
fi
check "-k on: the experiment holds the kernel's symbols (kallsyms)" test -s ks.er/kallsyms
check "-k on: log.xml's settings say kernel_stacks" grep -q 'kernel_stacks="1"' ks.er/log.xml
check "-k on: the experiment reads without errors" sh -c "'$EXPCHECK' summary ks.er | grep -q ' errors 0 '"
tr=$(truth truth.txt read_phase) tc=$(truth truth.txt compute_phase)
total=$((tr + tc))
neff=$(eff_samples ks.er)
ir=$(fn_ns ks.er 5 read_phase) ic=$(fn_ns ks.er 5 compute_phase)
pr=$(tol "$tr" $total "$neff") pc=$(tol "$tc" $total "$neff")
check "-k on: read_phase inclusive CPU within $pr% of its own CPU clock ($ir of $tr ns)" within "$ir" "$tr" "$pr"
check "-k on: compute_phase inclusive CPU within $pc% of its own CPU clock ($ic of $tc ns)" \
	within "$ic" "$tc" "$pc"
# pread's samples with kernel frames above it: its inclusive time less
# what stays its own (user mode, or a sample that drew an overflow's
# record from user mode) is its callees', the kernel's.
ip=$(fn_ns ks.er 5 pread) ep=$(fn_ns ks.er 3 pread)
share=$(awk -v i="$ip" -v e="$ep" 'BEGIN { printf "%.3f", (i > 0) ? (i - e) / i : 0 }')
check "-k on: $share of pread's time has the kernel's frames above it (at least 0.8)" \
	awk -v s="$share" 'BEGIN { exit !(s >= 0.8) }'
# named: the kernel's time in named functions of <kernel>, the system
# call's entry among them
"$SONDE" print -limit 0 -objects ks.er 2>/dev/null >obj.txt
"$SONDE" print -limit 0 -functions ks.er 2>/dev/null >fn.txt
check "-k on: -objects has the <kernel> load object" grep -q '<kernel>' obj.txt
check "-k on: the kernel's frames are named (the system call's entry, do_syscall_64 or entry_SYSCALL_64)" \
	grep -qE ' (do_syscall_64|entry_SYSCALL_64[a-z_]*)$' fn.txt
unnamed=$(grep -c '<kernel>@0x' fn.txt)
check "-k on: no kernel frame left as an address ($unnamed)" test "$unnamed" -le 2
note "-k on: $(grep -o 'kernel stacks: [^"]*' ks.er/log.xml | head -1)"
# the kernel's frames are callees of pread, never of compute_phase
"$SONDE" print -csingle compute_phase ks.er 2>/dev/null >cs.txt
kin=$(awk '/\*compute_phase/ { below = 1; next } below && NF >= 5 && $1 ~ /^[0-9.]+$/ && $NF ~ /^(do_syscall_64|entry_SYSCALL)/ { n++ } END { print n + 0 }' cs.txt)
check "-k on: compute_phase calls no kernel code ($kin)" test "$kin" = 0

# -k off (the default): no kallsyms, no kernel frame
"$SONDE" collect -p hi -o k0.er "$KT" "$PWD/data" 0.3 >/dev/null 2>&1
check "-k off: no kallsyms in the experiment" test ! -e k0.er/kallsyms
check "-k off: no <kernel> object" sh -c "! '$SONDE' print -objects k0.er 2>/dev/null | grep -q '<kernel>'"

# refused before the target starts
out=$("$SONDE" collect -k on -p off -o kp.er "$KT" "$PWD/data" 0.1 2>&1 >/dev/null)
r=$?
check "-k on -p off: exit 2, before the target ran ($out)" sh -c "[ $r = 2 ] && [ ! -e kp.er ]"
echo "$out" >msg.txt
check "-k on -p off: the message says clock profiling is needed" grep -q 'needs clock profiling' msg.txt
out=$("$SONDE" collect -k maybe -o kx.er "$KT" "$PWD/data" 0.1 2>&1 >/dev/null)
r=$?
echo "$out" >msg.txt
check "-k maybe: exit 2, the value named" sh -c "[ $r = 2 ] && grep -q maybe msg.txt"
if [ "$(id -u)" = 0 ] && [ "$paranoid" -ge 2 ] && command -v setpriv >/dev/null; then
	mkdir -p nob && chmod 777 nob
	out=$(cd nob && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$SONDE" collect -k on -p hi -o u.er "$KT" "$TMP/nob/data" 0.1 2>&1 >/dev/null)
	r=$?
	if [ $r = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "perf_event_paranoid <= 1 (it is $paranoid) or CAP_PERFMON" &&
		[ ! -e nob/u.er ]; then
		ok "unprivileged at perf_event_paranoid $paranoid: a one-line refusal, exit 2, no experiment"
	else
		notok "unprivileged: exit $r, '$out'"
	fi
else
	note "the unprivileged refusal is not checked here (uid $(id -u), perf_event_paranoid $paranoid)"
fi

# ---- the guest, under -k on ----
# guestrun NAME EXPECTED_STATUS PROGRAM ARGS: the program's output and exit
# status under sonde collect -k on -p hi as without it
guestrun() {
	name=$1 want=$2
	shift 2
	timeout 120 "$@" >plain.out 2>/dev/null
	prc=$?
	rm -rf g.er
	timeout 120 "$SONDE" collect -k on -p hi -o g.er "$@" >g.out 2>g.err
	src=$?
	# lines whose numbers change from run to run are compared by their
	# first word; gfd_take's list of the descriptors open at its start
	# (sonde's among them) is not compared: it checks its own after
	if [ $prc = "$want" ] && [ $src = "$want" ] &&
		[ "$(awk '$1 != "fd" { print $1 }' plain.out)" = "$(awk '$1 != "fd" { print $1 }' g.out)" ]; then
		ok "guest -k on, $name: the same output and exit status ($src)"
	else
		notok "guest -k on, $name: exit $src (plain $prc), output '$(head -c 200 g.out | tr '\n' ' ')' vs '$(head -c 200 plain.out | tr '\n' ' ')'"
		sed 's/^/#   /' g.err | head -5
	fi
}
guestrun "a seccomp allow-list, threads made after it" 0 "$FIX/gsec_allow" threads
guestrun "every signal blocked by the raw system call" 0 "$FIX/gsig_rawmask" all
guestrun "descriptors taken by dup2 (its counters' among them)" 0 "$FIX/gfd_take" dup
guestrun "the raw close_range" 0 "$FIX/gfd_take" closerange
guestrun "threads made and ended by the hundred" 0 "$FIX/churn"
guestrun "execs" 0 "$FIX/execchain" 3 100
# forks: each followed child's experiment names its kernel frames from the
# founder's kallsyms (linked, not copied again)
mkdir -p ptruth
timeout 120 "$SONDE" collect -k on -p hi -o pt.er "$FIX/proctree" "$PWD/ptruth" 0.1 >/dev/null 2>pt.err
r=$?
subs=$(find pt.er -mindepth 1 -name '*.er' -type d | wc -l)
linked=$(find pt.er -mindepth 2 -name kallsyms -links +1 | wc -l)
check "guest -k on, a process tree (fork, fork + exec): exit 0, $subs sub-experiments" sh -c "[ $r = 0 ] && [ $subs -ge 3 ]"
check "-k on: every sub-experiment has the founder's kallsyms ($linked of $subs)" test "$linked" = "$subs"
