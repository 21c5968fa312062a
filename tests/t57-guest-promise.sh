# The guest promise, kept where the counters, microstates and off-CPU work
# broke it (issue 27).  Each block failed on the code before its fix.
#  1. A target that blocks every signal with the raw rt_sigprocmask system
#     call lives (it died of SIGTRAP: sonde collect's call into it to check
#     its counters ended in an int3, which the kernel forced through the
#     blocked SIGTRAP by resetting its action to SIG_DFL, and the next
#     sample killed it); its time is recorded once it unblocks; a sample
#     it holds across an exec does not kill the new image.
#  2. A target that installs a seccomp allow-list lives under every kind
#     of data collection: sonde reads the filter and makes none of the
#     system calls it refuses (collector/sysgate.c); sampling goes on
#     where the filter allows what a sample needs, and stops, said in
#     log.xml, where it does not.
#  3. 64 busy threads on 2 CPUs lose no sample (the data files are mapped
#     ahead for every thread that may write from a signal handler).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# incl EXP BIN FUNC: the recorded CPU time (ns) of samples with FUNC on
# the stack.
incl() {
	set -- $("$EXPCHECK" reach "$1" "$2" "$(sym_range "$2" "$3")")
	echo "${8:-0}"
}

# near REC TRUTH EXP: REC within 5% of TRUTH plus two of the heaviest
# samples (a function's edges each cost at most one sample's weight).
near() {
	maxw=$(max_weight_ms "$3")
	awk -v a="$1" -v b="$2" -v m="$maxw" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * 0.05 + 2 * m * 1e6) }'
}

# ---- 1. every signal blocked by the raw system call ----
M=$FIX/gsig_rawmask
for p in hi on; do
	timeout 60 "$SONDE" collect -p $p -o all$p.er "$M" all >all$p.out 2>all$p.err
	st=$?
	if [ $st = 0 ] && grep -q '^all done' all$p.out; then ok "-p $p: a target that blocks every signal by the raw system call exits 0"; else
		notok "-p $p: a target that blocks every signal by the raw system call: sonde collect exited $st"
		sed 's/^/#   /' all$p.err | head -5
	fi
done
check "-p hi: log.xml says the thread holds the profiling signal blocked" \
	grep -q 'blocks signal 5, which sonde samples with, by a raw rt_sigprocmask' allhi.er/log.xml
timeout 60 "$SONDE" collect -p hi -o unb.er "$M" unblock >unb.out 2>unb.err
st=$?
[ $st = 0 ] && ok "-p hi: blocking, then unblocking every signal: exit 0" || notok "-p hi, unblock: exit $st"
masked=$(awk '{ print $4 }' unb.out) open=$(awk '{ print $6 }' unb.out)
rec=$(incl unb.er "$M" main)
if near "$rec" $((masked + open)) unb.er; then
	ok "-p hi: the CPU time before the unblock is recorded once it comes ($rec ns of $((masked + open)) ns)"
else notok "-p hi: recorded $rec ns of main's $((masked + open)) ns (masked $masked, open $open)"; fi
for F in on off; do
	timeout 60 "$SONDE" collect -F $F -p hi -o ex$F.er "$M" exec >ex$F.out 2>ex$F.err
	st=$?
	if [ $st = 0 ] && grep -q '^after done' ex$F.out; then
		ok "-F $F: a sample held pending across an exec does not kill the new image"
	else notok "-F $F: the image exec'd with a sample pending: sonde collect exited $st"; fi
done

# ---- 2. seccomp allow-lists ----
S=$FIX/gsec_allow
for mode in tight sandbox threads trap strict libseccomp; do
	"$S" $mode >plain.$mode 2>&1 || notok "$mode: the fixture alone exits $?"
done
# Every kind of collection under "trap", which counts any call of sonde's
# the filter refuses; the kill filters with the clock and the tracers.
for mode in tight sandbox threads trap strict libseccomp; do
	case $mode in
	trap) opts='-p hi|-p on|-p hi -h page-faults,1|-i on|-H on|-s on|-w on' ;;
	sandbox) opts='-p hi|-p on|-p hi -h page-faults,1|-w on' ;;
	threads) opts='-p hi' ;;
	*) opts='-p hi|-i on|-H on|-w on' ;;
	esac
	IFS='|'
	set -f
	for o in $opts; do
		unset IFS
		set +f
		x="" tag=$(echo "$o" | tr -d ' ,-')
		case "$o" in "-H on") x=heap ;; "-s on") x=lock ;; "-i on") x=io ;; esac
		d=$mode.$tag
		timeout 60 "$SONDE" collect $o -o $d.er "$S" $mode $x >$d.out 2>$d.err
		st=$?
		want=$(grep -c . plain.$mode)
		got=$(grep -c . $d.out)
		if [ $st = 0 ] && [ "$got" = "$want" ]; then ok "$mode [$o]: the filtered target runs to its end (exit 0)"; else
			notok "$mode [$o]: sonde collect exited $st (159: SIGSYS), $got of $want lines"
			sed 's/^/#   /' $d.err | head -3
		fi
		if [ $mode = trap ]; then
			n=$(awk '/^sigsys/ { print $2 }' $d.out)
			[ "$n" = 0 ] && ok "trap [$o]: sonde made no system call the filter refuses" ||
				notok "trap [$o]: the filter trapped ${n:-?} calls, the first $(awk '/^first/ { print $2 }' $d.out)"
		fi
		IFS='|'
	done
	unset IFS
	set +f
done
check "tight: log.xml names the calls of sonde's the filter refuses" \
	grep -q 'it refuses these system calls of sonde.s, which sonde no longer makes: gettid' tight.phi.er/log.xml
check "tight: log.xml says sampling stopped, and why" \
	grep -q 'refuses gettid, which every sample needs: sampling stopped' tight.phi.er/log.xml
# Sampling stops at the filter: after_burn gets nothing, before_burn all.
b=$(awk '/^before/ { print $3 }' tight.phi.out)
rb=$(incl tight.phi.er "$S" before_burn) ra=$(incl tight.phi.er "$S" after_burn)
if near "$rb" "$b" tight.phi.er && [ "$ra" = 0 ]; then
	ok "tight: the profile ends at the filter (before_burn $rb ns of $b, after_burn $ra)"
else notok "tight: before_burn $rb ns of $b, after_burn $ra ns (want 0)"; fi
# Under a sandbox's list every sample can be taken: the burn after the
# filter is recorded as it is.
for tag in phi pon phihpagefaults1; do
	a=$(awk '/^after/ { print $3 }' sandbox.$tag.out)
	ra=$(incl sandbox.$tag.er "$S" after_burn)
	if near "$ra" "$a" sandbox.$tag.er; then ok "sandbox ($tag): after_burn recorded $ra ns of $a ns under the filter"; else
		notok "sandbox ($tag): after_burn recorded $ra ns of $a ns under the filter"; fi
	check "sandbox ($tag): the end record is written under the filter" grep -q '<event kind="end"' sandbox.$tag.er/log.xml
done
pf=$("$SONDE" print -metrics e.page-faults:name -functions sandbox.phihpagefaults1.er | awk '$NF == "<Total>" { print $1 }')
[ "${pf:-0}" -gt 0 ] && ok "sandbox: page faults recorded under the filter ($pf)" || notok "sandbox: no page faults recorded"
t=$(awk '/^thread/ { print $3 }' threads.phi.out)
rt=$(incl threads.phi.er "$S" thread_burn)
if near "$rt" "$t" threads.phi.er; then ok "threads: a thread created under the filter is sampled ($rt ns of $t ns)"; else
	notok "threads: thread_burn recorded $rt ns of $t ns"; fi
check "strict: log.xml says sampling stopped" grep -q 'sampling stopped' strict.phi.er/log.xml

# A filter installed by a bare system call instruction is not seen by the
# collector; sonde collect reads Seccomp_filters and says so.
"$SONDE" collect -p hi -o bare.er "$S" bare >bare.out 2>bare.err
st=$?
[ $st = 0 ] && ok "bare: a filter installed unseen (failing prlimit64) and the target: exit 0" ||
	notok "bare: sonde collect exited $st"
check "bare: log.xml says a filter went in unseen" grep -q 'installed a seccomp filter that sonde did not see' bare.er/log.xml

# ---- 3. many busy threads lose no sample ----
# The first samples of 64 threads started together claim 64 blocks of each
# data file; the thread that grows a file can be preempted while it does
# (2 CPUs, 64 runnable threads), and a sample whose block is not mapped is
# lost: 25 in one run of 8 before.  Exact: no loss, in each of 4 runs.
for i in 1 2 3 4; do
	timeout 120 "$SONDE" collect -p hi -o busy$i.er "$FIX/gthr_busy" 64 1 >busy$i.out 2>busy$i.err
	lost=$(grep -o '<event kind="end"[^>]* lost="[0-9]*"' busy$i.er/log.xml | sed 's/.*lost="//; s/"//')
	slost=$(grep -o 'stacks_lost="[0-9]*"' busy$i.er/log.xml | sed 's/.*="//; s/"//')
	truth=$(awk '{ print $4 }' busy$i.out)
	set -- $("$EXPCHECK" summary busy$i.er)
	if [ "$lost" = 0 ] && [ "$slost" = 0 ]; then ok "64 busy threads, run $i: no sample lost"; else
		notok "64 busy threads, run $i: $lost samples and $slost stacks lost"; fi
	# Every thread's CPU is recorded up to its end, after the fixture read
	# its clock: never less than the truth, and more only by the threads'
	# exit paths (a few microseconds each; 0.02-0.04% measured, with a hog
	# per CPU).  The truth counts the main thread's CPU too: creating 64
	# threads under the collector took it 4 to 11 ms, which is what made
	# the recorded total 2.1% over a truth without it on a loaded machine.
	if [ "$4" -ge "$truth" ] && within "$4" "$truth" 1; then
		ok "64 busy threads, run $i: $4 ns of CPU recorded, truth $truth ns"; else
		notok "64 busy threads, run $i: $4 ns of CPU recorded, truth $truth ns"; fi
done
