# Tasks made by glibc's clone() with CLONE_VM (gprofng's mttest -DCLONE,
# runtimes with their own threads) are sampled on their own CPU time:
# threads with and without CLONE_SETTLS, and processes sharing the
# parent's memory, recorded as threads of the parent's experiment.  Each
# burner's recorded CPU is checked against the CPU clock its task read.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

X=$FIX/rawclone
for mode in hi:perf hi:perf-fasync on:timer; do
	p=${mode%%:*} src=${mode#*:}
	tag="-p $p ($src)"
	SONDE_CLOCK_SOURCE=$src timeout 120 "$SONDE" collect -p $p -o $src.er "$X" >truth.$src 2>err.$src
	st=$?
	if [ $st = 0 ]; then ok "$tag: rawclone's tasks all ended as expected, status 0"; else
		notok "$tag: sonde collect exited $st"; sed 's/^/#   /' err.$src | head -5; fi
	grep -q "clock_source=\"[^\"]*$( [ $src = timer ] && echo posix || echo perf)" $src.er/log.xml ||
		note "$tag: source not as asked: $(grep -o 'clock_source="[^"]*"' $src.er/log.xml)"
	# Inclusive: a burner's truth holds its clock_gettime calls, whose
	# kernel time a tick-driven timer signal charges to the system call's
	# return (a leaf outside the burner), more of it the busier the machine.
	# The interval bounds the error at each end of a burner (the sample
	# that straddles its start or end): within 4% plus two intervals.
	ms=$([ $p = hi ] && echo 1 || echo 10)
	# The edge error is at most a sample's weight at each end.  The timer
	# source's samples can come late and heavy on a busy machine (168 ms
	# once), so the bound is the heaviest sample's weight if that is more.
	maxw=$(max_weight_ms $src.er)
	ms=$(awk -v a="$ms" -v b="${maxw:-0}" 'BEGIN { print (b > a ? b : a) }')
	for fn in share foreign proc quiet main; do
		f=raw_$fn
		[ $fn = main ] && f=main_burn
		truth=$(awk -v n=$fn '$1 == "task" && $2 == n { print $5 }' truth.$src)
		R=$(sym_range "$X" $f)
		set -- $("$EXPCHECK" reach $src.er "$X" "$R")
		rec=${8:-0} cut=${10:-?}
		note "$tag: $f real ${truth:-?} ns, recorded $rec ns in ${4:-0} samples ($cut cut short)"
		# No sample at all is a fault only when the task ran longer than
		# two of the heaviest samples: a timer source's samples of 300 ms
		# (a hog per CPU and more) can pass over a 300 ms burn.
		if [ "$cut" = 0 ] && { [ "${4:-0}" -gt 0 ] ||
			awk -v t="${truth:-0}" -v ms="$ms" 'BEGIN { exit !(t > 0 && t <= 2 * ms * 1e6) }'; }; then
			ok "$tag: $f's stacks unwind to the outermost frame (${4:-0} samples)"
		else
			notok "$tag: $f: $cut of ${4:-0} stacks incomplete"
		fi
		if [ -n "$truth" ] && awk -v a="$rec" -v b="$truth" -v ms="$ms" \
			'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * 0.04 + 2 * ms * 1e6) }'; then
			ok "$tag: $f's CPU recorded (within 4% + 2 x $ms ms)"
		else notok "$tag: $f recorded $rec ns of ${truth:-?} ns"; fi
	done
	# Every thread of the experiment (the four tasks among them, by their
	# own tids) is recorded with its own CPU time: nothing of one task
	# went to another, and main's samples were not written through a
	# task's TLS.
	"$EXPCHECK" threads $src.er >threads.$src
	for fn in share foreign proc quiet; do
		tid=$(awk -v n=$fn '$1 == "task" && $2 == n { print $3 }' truth.$src)
		truth=$(awk -v n=$fn '$1 == "task" && $2 == n { print $5 }' truth.$src)
		line=$(awk -v t="$tid" '$1 == t' threads.$src)
		note "$tag: $fn tid $tid: ${line:-not in the experiment}"
		set -- $line
		if [ -n "$line" ] && within "$3" "$truth" 3; then ok "$tag: $fn is a thread of the experiment with its CPU time"; else
			notok "$tag: $fn (tid $tid) not recorded as a thread with its CPU time"; fi
	done
	check "$tag: each thread's recorded CPU is its own (within 2%)" \
		awk 'NF == 4 && $4 > 20000000 { d = $3 - $4; if (d < 0) d = -d; if (d > $4 * 0.02) { print; bad = 1 } } END { exit bad }' threads.$src
	check "$tag: the experiment reads cleanly" sh -c "'$SONDE' print -header $src.er | grep -q 'Read problems (0)'"
done

# A thread made by a bare clone system call cannot be wrapped, so it has
# no counter and is never sampled: the end of recording says how much of
# the process's CPU time no thread sonde saw ran (the fixture's thread
# burns 300 ms).
for src in perf timer; do
	SONDE_CLOCK_SOURCE=$src timeout 60 "$SONDE" collect -p hi -o bare.$src.er "$FIX/rawclone_bare" >truth.bare 2>&1
	msg=$(grep -o 'about [0-9]* ms of the process.s CPU time ran unsampled[^"]*' bare.$src.er/log.xml)
	note "bare clone ($src): $msg"
	ms=$(echo "$msg" | awk '{ print $2 + 0 }')
	check "a bare clone system call's thread: its CPU time is reported unsampled in log.xml ($src, ${ms:-0} ms of 300)" \
		test "${ms:-0}" -ge 270 -a "${ms:-0}" -le 330
done
# and a program whose threads are all seen gets no such warning
check "a program whose threads sonde all saw: no unsampled CPU time reported" \
	sh -c "! grep -q 'ran unsampled' perf.er/log.xml"
