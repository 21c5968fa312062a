# The collector is a guest in the target's descriptor table and under its
# limits (issue 15, items 2 and 6):
#  - a target that takes the collector's descriptor numbers (dup2 onto
#    900..999, or the raw close_range system call and descriptors of its own
#    there) keeps its files as it wrote them, the experiment is complete and
#    samples go on after the takeover; the target sees at most the
#    sampling counter of the collector's at main (not log.xml: issue 27);
#  - a target with a seccomp filter that kills readlink survives -i on, and
#    one with RLIMIT_FSIZE at 64 KiB survives -H on, the heap trace stopping
#    with a note in log.xml.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
T=$FIX/gfd_take

# log.xml parses (sonde collect wrote its closing tag) and has the end record.
wellformed() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1" || return 1
	fi
	grep -q '<event kind="end"' "$1"
}

after_range=$(sym_range "$T" after_take)
for mode in dup closerange; do
	mkdir plain.$mode
	(cd plain.$mode && "$T" $mode >out 2>err)
	prc=$?
	# -p hi: the sampling counter (perf, SIGTRAP) where the kernel allows
	# it, whose descriptor the target takes too; -p on: CPU timers.
	for p in hi on; do
		d=$mode.$p
		mkdir $d
		(cd $d && "$SONDE" collect -p $p -o x.er "$T" $mode >out 2>err)
		crc=$?
		if [ $prc = 0 ] && [ $crc = 0 ] && grep -q '^took 100 descriptors, wrote 1300 bytes' $d/out; then
			ok "$d: the target's descriptors and its file are as it left them (exit $crc)"
		else
			notok "$d: plain exit $prc, collected exit $crc"
			sed 's/^/#   /' $d/err | head -5
		fi
		size=$(stat -c %s $d/own.dat)
		foreign=$(grep -cv '^own line [0-9]*$' $d/own.dat)
		if [ "$size" = 1300 ] && [ "$foreign" = 0 ]; then
			ok "$d: own.dat holds only the target's 1300 bytes"
		else
			notok "$d: own.dat has $size bytes, $foreign lines not the target's"
			grep -v '^own line' $d/own.dat | cut -c1-100 | head -3 | sed 's/^/#   /'
		fi
		check "$d: log.xml is well-formed and has the end record" wellformed $d/x.er/log.xml
		# Samples after the takeover: after_take's CPU against its truth.
		# Counted inclusively (its truth holds its clock_gettime calls,
		# whose kernel time a timer tick may charge to the call's return),
		# within 10% or two of the heaviest samples (at -p on a busy
		# machine makes the timer's samples late and heavy), whichever
		# is more.
		truth=$(awk '/^after_take cpu_ns/ { print $3 }' $d/out)
		maxw=$(awk -v m="$(max_weight_ms $d/x.er)" 'BEGIN { printf "%.0f", m * 1e6 }')
		set -- $("$EXPCHECK" reach $d/x.er "$T" "$after_range")
		if [ -n "$truth" ] && awk -v a="${8:-0}" -v b="$truth" -v w="${maxw:-0}" \
			'BEGIN { d = a - b; if (d < 0) d = -d; t = b * 0.1; if (2 * w > t) t = 2 * w; exit !(b > 0 && d <= t) }'; then
			ok "$d: after the takeover after_take recorded ${8} ns of its $truth ns"
		else
			notok "$d: after the takeover after_take recorded ${8:-?} ns of its ${truth:-?} ns ($*)"
		fi
		# The 48 threads run after the takeover: their recorded CPU.
		awk '/^thread/ { print $2, $4 }' $d/out | sort >truth.$d
		"$EXPCHECK" threads $d/x.er | awk '{ print $1, $3 }' | sort >rec.$d
		set -- $(join truth.$d rec.$d | awk '{ t += $2; r += $3; n++ } END { print n + 0, t + 0, r + 0 }')
		if [ "$1" = 49 ] && within "$3" "$2" 5; then
			ok "$d: 49 threads recorded $3 ns of CPU, truth $2 ns"
		else
			notok "$d: $1 of 49 threads found, recorded $3 ns of CPU, truth $2 ns"
		fi
		# What the target sees at main, beyond a plain run's descriptors.
		awk '/^fd / { print $2 }' plain.$mode/out | sort >fds.plain
		awk '/^fd / { print $2, $3 }' $d/out | sort >fds.$d
		# log.xml is opened for each write (collector/log.c): only the
		# sampling counter, which must live as long as the thread,
		# stays (doc/sonde-collect.md, "Descriptors").
		extra=$(join -v 2 fds.plain fds.$d)
		n=$(printf '%s' "$extra" | grep -c .)
		bad=$(printf '%s' "$extra" | grep -vc 'anon_inode:\[perf_event\]$')
		if [ "$n" -le 1 ] && [ "$bad" = 0 ]; then
			ok "$d: $n descriptor(s) of the collector open at main (at most the sampling counter)"
		else
			notok "$d: $n descriptors of the collector open at main:"
			printf '%s\n' "$extra" | sed 's/^/#   /'
		fi
	done
	grep -q 'sampling counters' $mode.hi/x.er/log.xml && note "$mode.hi: $(grep -o 'the target closed [0-9]* of the[^;]*; [0-9]* thread(s) were armed again' $mode.hi/x.er/log.xml)"
done

# A seccomp filter that kills readlink: the I/O tracer names descriptors
# without it once the filter is there.
S=$FIX/gfd_seccomp
"$S" >plain.sec 2>&1
prc=$?
"$SONDE" collect -i on -o sec.er "$S" >col.sec 2>&1
crc=$?
if [ $prc = 0 ] && [ $crc = 0 ] && cmp -s plain.sec col.sec; then
	ok "seccomp: the filtered target runs under -i on as without sonde (exit $crc)"
else
	notok "seccomp: plain exit $prc, collected exit $crc (159: killed by the filter)"
	diff plain.sec col.sec | sed 's/^/#   /' | head -5
fi
check "seccomp: log.xml notes the filter" grep -q 'installs a seccomp filter' sec.er/log.xml
"$SONDE" print -io sec.er >io.sec 2>&1
check "seccomp: its 262144 bytes written to its file were traced" \
	awk '$NF == "gfd_seccomp.dat" && $4 == 262144 { f = 1 } END { exit !f }' io.sec
check "seccomp: stdout (inherited, named before the filter) keeps its name" \
	awk '$NF ~ /\/col.sec$/ && $4 == 15 { f = 1 } END { exit !f }' io.sec

# RLIMIT_FSIZE at 64 KiB: the heap trace stops rather than grow its file
# past the limit (SIGXFSZ would kill the target).
Z=$FIX/gfd_fsize
"$Z" >plain.fsize 2>&1
prc=$?
"$SONDE" collect -H on -o fsize.er "$Z" >col.fsize 2>&1
crc=$?
if [ $prc = 0 ] && [ $crc = 0 ] && cmp -s plain.fsize col.fsize; then
	ok "fsize: the target with RLIMIT_FSIZE 64 KiB runs under -H on as without sonde (exit $crc)"
else
	notok "fsize: plain exit $prc, collected exit $crc (153: SIGXFSZ)"
fi
check "fsize: log.xml says the heap trace stopped at the limit" \
	grep -q "heaptrace' would grow past the target's RLIMIT_FSIZE" fsize.er/log.xml
check "fsize: log.xml is well-formed and has the end record" wellformed fsize.er/log.xml
check "fsize: the experiment reads" "$SONDE" print -heapstat fsize.er
