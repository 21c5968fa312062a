# Kernel CPU time goes to the stack that spent it (issue 14, defect 1).
# The ktime fixture alternates ~20 ms of pread of a cached file (nearly all
# system time) in read_phase with ~20 ms of user arithmetic in
# compute_phase, and prints each function's own CPU time from the thread's
# CPU clock.  At -p hi, sonde's inclusive time of each function must match
# that truth, as root (the perf counter samples kernel mode: "sampled") and
# as an unprivileged user (at perf_event_paranoid 2 the kernel refuses
# that, and POSIX CPU timers sample kernel time in place at the tick:
# "sampled-at-tick").  Before the fix, read_phase got about 1% and
# compute_phase 98%.
#
# Tolerance: with n samples in all and a function's true share p, the
# sampled share has a relative standard deviation of about
# sqrt((1-p)/(p n)) (2.6% at 1500 samples, 5% at the tick's 375), where n
# is the effective number of samples (eff_samples in lib.sh): on a busy
# machine the CPU timer is checked only at the ticks that find the thread
# running, and since reading its own CPU clock lets the scheduler preempt
# it between ticks, it misses most of them and gets a few samples of up
# to 150 ms (about 90 effective samples of 250); allowed
# is 4 of those plus 2% for the one boundary per 40 ms cycle where the
# time from the last in-kernel overflow to pread's return (under 0.5 ms)
# goes to the call rather than to the code after it.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
KT=$FIX/ktime
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)

# inclusive/exclusive time in ns of functions whose name contains NAME
fn_ns() { # EXP COLUMN(3 excl, 5 incl) NAME
	"$SONDE" print -printmode csv -functions "$1" 2>/dev/null |
		awk -F, -v c="$2" -v f="$3" 'index($1, f) { s += $c } END { printf "%.0f\n", s }'
}
truth() { awk -v f="$2" '$1 == f { print $2 }' "$1"; }
samples() { "$EXPCHECK" summary "$1" | awk '{ print $2 }'; }
tol() { # SHARE_NS TOTAL_NS SAMPLES -> percent
	awk -v a="$1" -v t="$2" -v n="$3" 'BEGIN { p = a / t; if (n < 1) n = 1
		printf "%.1f\n", 400 * sqrt((1 - p) / (p * n)) + 2 }'
}

# run WHO MODE_WANTED [RUNNER...]: collect at -p hi in the current
# directory and check mode and numbers.
run() {
	who=$1 want=$2
	shift 2
	"$@" "$SONDE" collect -p hi -o kt.er "$KT" "$PWD/data" 1.5 >truth.txt 2>err.txt
	r=$?
	if [ $r != 0 ] || ! grep -q '^compute_phase ' truth.txt; then
		notok "$who: collect exited $r"
		sed 's/^/#   /' err.txt | head
		return
	fi
	mode=$(sed -n 's/.*kernel_time="\([^"]*\)".*/\1/p' kt.er/log.xml)
	check "$who: log.xml records kernel_time=\"$want\" (got \"$mode\")" test "$mode" = "$want"
	case $want in
	sampled) text='sampled in place (the counter samples kernel mode too)' ;;
	sampled-at-tick) text="sampled in place, at the scheduler tick's resolution" ;;
	esac
	check "$who: sonde print -header says \"Kernel time: $text\"" \
		sh -c "'$SONDE' print -header kt.er | grep -F 'Kernel time:' | grep -qF \"$text\""
	tr=$(truth truth.txt read_phase) tc=$(truth truth.txt compute_phase)
	total=$((tr + tc))
	n=$(samples kt.er) neff=$(eff_samples kt.er)
	ir=$(fn_ns kt.er 5 read_phase) ic=$(fn_ns kt.er 5 compute_phase) ec=$(fn_ns kt.er 3 compute_phase)
	# glibc's pread64 is named __libc_pread in a single-threaded process
	# (the system call inline) and pread64 / __libc_pread64 once it has
	# had a second thread (the cancellable path): the target stays
	# single-threaded under sonde now, so either name counts.
	ep=$(fn_ns kt.er 3 pread)
	check "$who: the profile has samples to measure with" test "${neff:-0}" -gt 0
	pr=$(tol "$tr" $total "$neff") pc=$(tol "$tc" $total "$neff")
	note "$who: $n samples ($neff effective); read_phase truth $tr ns, inclusive $ir; compute_phase truth $tc ns," \
		"inclusive $ic exclusive $ec; pread exclusive $ep; $(grep rusage truth.txt)"
	check "$who: read_phase inclusive CPU within $pr% of its own CPU clock" within "$ir" "$tr" "$pr"
	check "$who: compute_phase inclusive CPU within $pc% of its own CPU clock" within "$ic" "$tc" "$pc"
	check "$who: compute_phase exclusive CPU within $pc% of its own CPU clock" within "$ec" "$tc" "$pc"
	# The reading function's time is in the system call, not spread over
	# the code that runs after it: at least 95% of it, less the heaviest
	# sample's weight (a late timer sample of up to 150 ms on a busy
	# machine, above, is one sample: where it lands is one place; a make
	# check on a fresh clone once saw 94.8% with the rest at 98.5-99%).
	maxw=$(max_weight_ms kt.er)
	check "$who: pread's exclusive time is at least 95% of read_phase's inclusive, less one sample (${maxw} ms)" \
		awk -v e="$ep" -v i="$ir" -v m="$maxw" 'BEGIN { exit !(i > 0 && e >= 0.95 * i - m * 1e6) }'
}

if [ "$(id -u)" = 0 ]; then
	mkdir root && (cd root && run root sampled)
else
	mkdir self && (cd self && run "uid $(id -u)" "$([ "$paranoid" -le 1 ] && echo sampled || echo sampled-at-tick)")
fi

# Unprivileged: nobody, in a directory it can write.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$SONDE" -a -r "$B/lib/sonde/libsonde_collector.so"; then
	chmod 711 "$TMP"
	mkdir nobody && chmod 777 nobody
	want=sampled-at-tick
	[ "$paranoid" -le 1 ] && want=sampled
	(cd nobody && run "unprivileged, perf_event_paranoid $paranoid" $want \
		setpriv --reuid=65534 --regid=65534 --clear-groups)
	# Asked for the perf counter without the right to count the kernel,
	# the user-mode-only counter says what it does with kernel time.
	if [ "$paranoid" -ge 2 ]; then
		(cd nobody && SONDE_CLOCK_SOURCE=perf setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$SONDE" collect -p hi -o forced.er "$KT" "$PWD/data2" 0.2 >/dev/null 2>&1)
		check "unprivileged, SONDE_CLOCK_SOURCE=perf: log.xml records kernel_time=\"next-user-sample\"" \
			grep -q 'kernel_time="next-user-sample"' nobody/forced.er/log.xml
		check "unprivileged, SONDE_CLOCK_SOURCE=perf: the header says kernel time goes to the next user-mode sample" \
			sh -c "'$SONDE' print -header nobody/forced.er | grep -q 'Kernel time: *charged to the next user-mode sample'"
	fi
else
	note "skipped the unprivileged run: not root, no setpriv, or the build is not readable by nobody"
fi
