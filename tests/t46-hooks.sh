# The sampling handler's hooks (include/sonde/hooks.h) against the truth of
# the hookstate fixture, which registers a state provider and a stack
# source: the provider says "test state" exactly while in_state() runs,
# the source adds a kernel frame and a Java frame above the leaf exactly
# while with_frames() runs; each burns three rounds whose CPU time the
# fixture measures, and after it removed them, after_remove() runs with
# both flags set.  Recorded with the tests' build (build/teststates: the
# thread-state table with one more row, TEST, whose metric is teststate):
#   - the state's time (its metric, -functions) is in_state()'s, within
#     the sampling error: a sample carries its thread's CPU time since the
#     previous one, so each edge of a round may move one sample's weight
#     (2 x 3 x the heaviest sample), and the state's share of the
#     effective samples (eff_samples, tests/lib.sh) bounds the rest;
#     nothing else has any, nor after_remove();
#   - -dump profile and agg see the same samples in state test-state;
#   - the frames (read from the data files, tests/tools/expcheck frames)
#     are there with their kind, flags, aux and pc on exactly the samples
#     of with_frames(), whose weight is its time as above;
#   - a hook is never called once its removal returned;
#   - this sonde (without the row) reads the experiment: the state by its
#     number, CPU time all the same.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
TS=$B/teststates
TSONDE=$TS/bin/sonde
HS=$FIX/hookstate

[ -x "$TSONDE" ] && [ -f "$TS/lib/sonde/libsonde_collector.so" ] || {
	notok "the tests' build of the thread states ($TS) is built (make tests)"
	exit 0
}

"$HS" 0.15 >plain.txt 2>&1
check "without the collector the fixture finds no hooks API" grep -q '^hooks state -1 stack -1 files -1 -1 refused -4$' plain.txt

# One recording and its checks; a run whose sampling error exceeds the
# bounds (a loaded machine) is repeated, up to 3 runs.
run() { # N
	rm -rf h$1.er
	"$TSONDE" collect -p hi -o h$1.er "$HS" 0.9 >out$1.txt 2>err$1.txt || {
		echo "collect failed: $(cat err$1.txt)" >miss$1
		return 1
	}
	: >miss$1
	SONDE=$TSONDE
	wmax=$(max_weight_ms h$1.er) eff=$(eff_samples h$1.er)
	SONDE=$B/bin/sonde
	"$TSONDE" print -printmode csv -metrics i.teststate:i.totalcpu:name -functions h$1.er >fn$1.csv 2>&1
	read -r _ _ tf _ th _ tp _ ta <<EOF
$(grep '^truth ' out$1.txt)
EOF
	# csv: name, object, i.teststate, i.totalcpu (ns)
	tot=$(awk -F, '$1 == "<Total>" { print $4 }' fn$1.csv)
	echo "truth in_state $tf with_frames $th plain $tp after_remove $ta; wmax $wmax ms, $eff effective samples, total $tot" >note$1
	# The bound: 2 edges x 3 rounds x the heaviest sample, or 3 standard
	# errors of the state's share of the effective samples.
	tol() { # TRUTH_NS
		awk -v t="$1" -v w="$wmax" -v n="$eff" -v tot="$tot" 'BEGIN {
			e = 6 * w * 1e6; nf = (tot > 0 ? n * t / tot : 0)
			s = (nf > 0 ? 3 * t / sqrt(nf) : t); printf "%.0f", (e > s ? e : s) }'
	}
	# The collector's handler runs in the state of the thread it
	# interrupts: <Collector> has the state's time the handler took
	# while in_state ran (in the fixture's truth, not in in_state's).
	ts=$(awk -F, '$1 == "in_state" { print $3 }' fn$1.csv)
	tc=$(awk -F, '$1 == "<Collector>" { print $3 }' fn$1.csv)
	tsall=$(awk -F, '$1 == "<Total>" { print $3 }' fn$1.csv)
	t=$(tol "$tf")
	awk -v v="$ts" -v c="${tc:-0}" -v t="$tf" -v e="$t" 'BEGIN { d = v + c - t; if (d < 0) d = -d; exit !(v != "" && d <= e) }' ||
		echo "in_state's teststate $ts ns (and <Collector>'s ${tc:-0}), truth $tf ns (bound $t ns)" >>miss$1
	[ "$(awk -v a="$ts" -v b="${tc:-0}" 'BEGIN { printf "%.0f", a + b }')" = "$tsall" ] ||
		echo "teststate in all $tsall ns, in in_state $ts ns and in <Collector> ${tc:-0} ns" >>miss$1
	for f in plain with_frames after_remove burn_plain burn_frames burn_after; do
		v=$(awk -F, -v f=$f '$1 == f { print $3 }' fn$1.csv)
		[ "$v" = 0 ] || echo "$f has teststate $v ns (none wanted)" >>miss$1
	done
	# The frames, from the files: K:F:A:PC of the two the source adds.
	"$EXPCHECK" frames h$1.er >fr$1.txt 2>&1
	tagged=$(awk '$1 == "sample" && $5 == "1:1:0:0xffffffff81234560" && $6 == "2:0:7:0x2a" && $7 ~ /^0:0:0:/ { w += $3 }
		END { printf "%.0f", w }' fr$1.txt)
	t=$(tol "$th")
	awk -v v="$tagged" -v t="$th" -v e="$t" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(d <= e) }' ||
		echo "samples with the source's frames weigh $tagged ns, truth with_frames $th ns (bound $t ns)" >>miss$1
	[ ! -s miss$1 ]
}

good=0
for n in 1 2 3; do
	if run $n; then
		good=$n
		break
	fi
	note "run $n missed: $(tr '\n' ';' <miss$n)"
done
last=${good:-3}
[ "$good" = 0 ] && last=3
note "$(cat note$last)"
if [ "$good" != 0 ]; then
	ok "state provider: in_state()'s test-state time is its CPU time within the sampling error, nothing else has any"
	ok "stack source: the samples with its frames weigh with_frames()'s CPU time within the sampling error"
else
	notok "the hooks' recorded truth (3 runs): $(tr '\n' ';' <miss3)"
fi
E=h$last.er

check "the hooks were registered (handles), removed once, refused the second time" \
	grep -q '^removed 0 0 again -1 ' out$last.txt
check "no hook was called after its removal returned" grep -q ' after_remove 0$' out$last.txt
check "the experiment reads without errors" sh -c "'$EXPCHECK' summary $E | grep -q ' errors 0 '"

# Frames: nothing but those two, and only at the leaf, ever; and native;
# but for the collector's pseudo frames (kind 5: its own time, the start,
# the end), alone or at the leaf.
bad=$(awk '$1 == "sample" { for (i = 5; i <= NF; i++) if ($i !~ /^0:0:0:/ && !((i == 5 && $i == "1:1:0:0xffffffff81234560") || (i == 6 && $i == "2:0:7:0x2a") || (i == 5 && $i ~ /^5:0:0:/))) { n++; break } }
	END { print n + 0 }' fr$last.txt)
check "no other frame of another kind, nor elsewhere than above the leaf ($bad samples)" test "$bad" = 0
check "every stack's nodes are in the file" sh -c "tail -1 fr$last.txt | grep -q ' unknown 0$'"
kinds=$(awk '$1 == "sample" && $5 == "1:1:0:0xffffffff81234560" { n++ } END { print n + 0 }' fr$last.txt)
check "samples with the kernel frame (exact, SONDE_FRAMEF_EXACT) then the Java one (method 42, bci 7): $kinds" test "$kinds" -gt 20

# The files that name those frames, written by the fixture through
# __sonde_trace_file as a stack source writes them: the kernel frame is
# hs_kernel_func in <kernel>, the Java frame com.example.Hook.spin(int) in
# its class file, each with exactly the weight of the samples that carry it.
check "the fixture wrote kallsyms and methods and the bad names were refused" \
	grep -q '^hooks state [0-9]* stack [0-9]* files 0 0 refused -4$' out$last.txt
tagged=$(awk '$1 == "sample" && $5 == "1:1:0:0xffffffff81234560" && $6 == "2:0:7:0x2a" { w += $3 } END { printf "%.0f", w }' fr$last.txt)
"$TSONDE" print -printmode csv -metrics e.totalcpu:i.totalcpu:name -functions $E >named.csv 2>named.err
check "the kernel frame is hs_kernel_func in <kernel>, exclusive time the tagged samples' ($tagged ns)" \
	grep -qx "hs_kernel_func,<kernel>,$tagged,$tagged" named.csv
check "the Java frame is com.example.Hook.spin(int) in Hook.class, inclusive time the tagged samples'" \
	grep -qxF "com.example.Hook.spin(int),Hook.class,0,$tagged" named.csv
check "-functions warns of nothing about the files" test ! -s named.err
"$TSONDE" print -printmode csv -metrics i.totalcpu:name -lines $E >lines.csv 2>&1
check "-lines: bytecode index 7 is line 21 of Hook.java" grep -q ",com\.example\.Hook\.spin(int),Hook\.java,21,$tagged$" lines.csv

# The state, as the table's row: its metric, -dump's word, agg's word, and
# the profile packets' state (3) exactly on those samples.
dumped=$("$TSONDE" print -dump profile $E 2>/dev/null |
	awk '/^sample/ && / state test-state / { for (i = 1; i < NF; i++) if ($i == "weight") w += $(i + 1) * 1e6 } END { printf "%.0f", w }')
tsall=$(awk -F, '$1 == "<Total>" { print $3 }' fn$last.csv)
check "-dump profile: the samples in state test-state weigh its metric's total ($dumped ~ $tsall ns)" \
	awk -v a="$dumped" -v b="$tsall" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d < 1e5) }'
raw=$(awk '$1 == "sample" && $2 == 15 { w += $3 } END { printf "%.0f", w }' fr$last.txt)
check "the profile packets' state is the row's id exactly on those samples ($raw ns)" test "$raw" = "$tsall"
"$TSONDE" agg 'profile /state == "test-state"/ { @w = sum(weight); }' $E >agg.txt 2>&1
aggw=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) v = $i } END { print v + 0 }' agg.txt)
check "agg: state == \"test-state\" weighs the same ($aggw ns)" test "$aggw" = "$tsall"
check "-metric_list of the tests' build has the state's metric" \
	sh -c "'$TSONDE' print -metric_list $E | grep -q 'Test State'"

# This sonde, whose table has no such row: the state by its number, its
# time CPU time.
check "sonde without the row: -dump profile shows the state by its number" \
	sh -c "'$SONDE' print -dump profile $E 2>&1 | grep -q '^sample .* state 15  weight'"
"$TSONDE" print -printmode csv -metrics e.totalcpu:name -functions $E >a.csv 2>&1
"$B/bin/sonde" print -printmode csv -metrics e.totalcpu:name -functions $E >b.csv 2>&1
check "sonde without the row: the same CPU time per function" cmp a.csv b.csv
