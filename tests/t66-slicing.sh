#!/bin/bash
# Time, CPU and call-path slicing in sonde print, against the slicing
# fixture's truth (its own thread CPU clock and CLOCK_MONOTONIC, the clock
# of the experiment's times):
#   - -time_select over each phase keeps that phase's function and not the
#     other's (within sampling error), and equals sonde agg's time_select()
#     and the `time` idiom exactly;
#   - -seconds: each second's row equals the samples of that second (sonde
#     agg), the rows add up to <Total>;
#   - -cpu_select with threads pinned to CPU 0 and 1 (skipped with one
#     CPU): each CPU keeps its thread's function, none of the other's;
#     -cpu_list shows only the CPUs a function ran on;
#   - -callpath_select FUNC keeps exactly FUNC's inclusive time, A>B the
#     calls of B from A (within sampling error of the truth), and the two
#     callers of work add up to work;
#   - -calltree -inverted: the roots' inclusive time is the functions'
#     exclusive time, exactly;
#   - -indxobj TYPE prints the view of its type; -filters says what is in
#     force; an er_print script using them runs;
#   - bad arguments are usage errors naming the argument.
# Timing checks retry the collection up to 3 times.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

S=0.3
M=e.totalcpu:i.totalcpu

# The CSV row of function NAME in a -functions listing: "excl incl" (ns).
fn_row() {
	awk -F, -v f="$1" '$1 == f { print $3, $4; found = 1 } END { if (!found) print 0, 0 }'
}
total_of() { awk -F, '$1 == "<Total>" { print $3 }'; }
truth() { awk -v f="$1" '$1 == "func" && $2 == f { print $4 }' truth.txt; }

# collect: the experiment s.er and truth.txt; the tolerance in ns of a
# function's time: 3 samples' weight and 3%.
collect() {
	rm -rf s.er
	"$SONDE" collect -p hi -o s.er "$FIX/slicing" $S >truth.txt 2>collect.err || return 1
	maxw=$(max_weight_ms s.er)
	start=$(grep -o '<time start_ns="[0-9]*"' s.er/log.xml | grep -o '[0-9]*')
	[ -n "$start" ]
}

# near GOT WANT: |GOT - WANT| within 3 samples' weight and 3% of WANT.
near() {
	awk -v a="$1" -v b="$2" -v w="$maxw" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 3 * w * 1e6 + 0.03 * b) }'
}

# The timing-sensitive checks; failures are collected in $fails.
timing_checks() {
	fails=""
	for ph in phase_f phase_g; do
		set -- $(awk -v f="$ph" '$1 == "phase" && $2 == f { print $4, $6 }' truth.txt)
		a=$(awk -v t="$1" -v s="$start" 'BEGIN { printf "%.9f", (t - s) / 1e9 }')
		b=$(awk -v t="$2" -v s="$start" 'BEGIN { printf "%.9f", (t - s) / 1e9 }')
		other=$([ $ph = phase_f ] && echo phase_g || echo phase_f)
		"$SONDE" print -time_select "$a-$b" -metrics $M -printmode csv -functions s.er >w.csv
		set -- $(fn_row $ph <w.csv)
		got=$2
		set -- $(fn_row $other <w.csv)
		stray=$2
		want=$(truth $ph)
		note "-time_select $a-$b ($ph): $ph $got ns (truth $want), $other $stray ns (max sample $maxw ms)"
		near "$got" "$want" || fails="$fails $ph-window"
		near "$stray" 0 || fails="$fails $ph-window-other"
	done
	for f in via_a via_b; do
		got=$("$SONDE" print -callpath_select "$f>work" -metrics $M -printmode csv -functions s.er | total_of)
		want=$(truth $f)
		note "-callpath_select $f>work: $got ns (truth $want)"
		near "$got" "$want" || fails="$fails $f>work"
	done
	if [ "$twocpu" = 1 ]; then
		for c in 0 1; do
			"$SONDE" print -cpu_select $c -metrics $M -printmode csv -functions s.er >c.csv
			set -- $(fn_row on_cpu$c <c.csv)
			got=$2
			want=$(truth on_cpu$c)
			note "-cpu_select $c: on_cpu$c $got ns (truth $want)"
			near "$got" "$want" || fails="$fails cpu$c"
		done
	fi
}

ncpu=$(nproc)
for try in 1 2 3; do
	if ! collect; then
		notok "slicing collected"
		sed 's/^/#   /' collect.err | head
		exit 0
	fi
	twocpu=0
	[ "$ncpu" -ge 2 ] && grep -q '^pinned 0 ok' truth.txt && grep -q '^pinned 1 ok' truth.txt && twocpu=1
	timing_checks
	[ -z "$fails" ] && break
	note "try $try: off:$fails"
done
if [ -z "$fails" ]; then ok "time windows, call paths and CPUs keep their functions' truth (try $try)"; else
	notok "timing checks off after 3 tries:$fails"
fi

# -time_select = -time = sonde agg's time_select() = the `time` idiom, exactly.
all=$("$SONDE" print -metrics $M -printmode csv -functions s.er | total_of)
bad=0
for w in "0.1-0.4 100000000 400000000" "0.25- 250000000 0" "-0.5 0 500000000"; do
	set -- $w
	p=$("$SONDE" print -time_select "$1" -metrics $M -printmode csv -functions s.er | total_of)
	t=$("$SONDE" print -time "$1" -metrics $M -printmode csv -functions s.er | total_of)
	a=$("$SONDE" agg "profile /time_select(\"$1\")/ { @ = sum(weight); }" s.er | awk 'NF { print $1 }')
	pred="time >= $2"
	[ "$3" != 0 ] && pred="$pred && time < $3"
	i=$("$SONDE" agg "profile /$pred/ { @ = sum(weight); }" s.er | awk 'NF { print $1 }')
	[ -n "$a" ] || a=0
	[ -n "$i" ] || i=0
	if [ "$p" = "$t" ] && [ "$p" = "$a" ] && [ "$p" = "$i" ]; then :; else
		bad=1
		note "window $1: -time_select $p, -time $t, agg time_select() $a, agg time idiom $i"
	fi
done
[ $bad = 0 ] && ok "-time_select, -time, agg's time_select() and its time idiom agree exactly" ||
	notok "-time_select and agg disagree"

# -seconds: each row is its second's samples; the rows add up to <Total>.
"$SONDE" print -metrics $M -sort name -printmode csv -seconds s.er >sec.csv
bad=0
sum=0
while IFS=, read -r sec _ v _; do
	[ -n "$sec" ] || continue
	lo=$((sec * 1000000000))
	hi=$(((sec + 1) * 1000000000))
	a=$("$SONDE" agg "profile /time >= $lo && time < $hi/ { @ = sum(weight); }" s.er | awk 'NF { print $1 }')
	[ "$a" = "$v" ] || { bad=1; note "second $sec: -seconds $v, agg $a"; }
	sum=$((sum + v))
done < <(tail -n +3 sec.csv)
rows=$(tail -n +3 sec.csv | wc -l)
if [ $bad = 0 ] && [ "$sum" = "$all" ] && [ "$rows" -ge 1 ]; then
	ok "-seconds: $rows rows, each its second's samples, adding up to <Total> ($all ns)"
else notok "-seconds: rows add up to $sum, <Total> $all (bad=$bad)"; fi
# -seconds sorted by name is in time order; with a window, only its seconds.
first=$("$SONDE" print -time_select 1- -sort name -printmode csv -seconds s.er | awk -F, 'NR == 3 { print $1 }')
if [ -z "$first" ] || [ "$first" -ge 1 ]; then ok "-time_select 1- -seconds starts at second ${first:-none}"; else
	notok "-time_select 1- -seconds starts at second $first"
fi

# -callpath_select FUNC: exactly FUNC's inclusive time; the two callers of
# work add up to work.
set -- $("$SONDE" print -metrics $M -printmode csv -functions s.er | fn_row work)
incl=$2
cp=$("$SONDE" print -callpath_select work -metrics $M -printmode csv -functions s.er | total_of)
a=$("$SONDE" print -callpath_select 'via_a>work' -metrics $M -printmode csv -functions s.er | total_of)
b=$("$SONDE" print -callpath_select 'via_b>work' -metrics $M -printmode csv -functions s.er | total_of)
both=$("$SONDE" print -callpath_select 'via_a>work,via_b>work' -metrics $M -printmode csv -functions s.er | total_of)
none=$("$SONDE" print -callpath_select 'work>via_a' -metrics $M -printmode csv -functions s.er | total_of)
if [ "$cp" = "$incl" ] && [ $((a + b)) = "$incl" ] && [ "$both" = "$incl" ] && [ "$none" = 0 ]; then
	ok "-callpath_select work = i.work ($incl ns) = via_a>work + via_b>work; work>via_a keeps nothing"
else notok "-callpath_select: work $cp, i.work $incl, via_a>work $a + via_b>work $b, both $both, work>via_a $none"; fi

# CPUs: a function pinned to CPU 1 has no time on CPU 0; -cpus under a
# call-path filter shows only the CPU it ran on.
if [ "$twocpu" = 1 ]; then
	"$SONDE" print -cpu_select 0 -metrics $M -printmode csv -functions s.er >c0.csv
	set -- $(fn_row on_cpu1 <c0.csv)
	rows=$("$SONDE" print -callpath_select on_cpu1 -printmode csv -cpus s.er | tail -n +3 | cut -d, -f1 | tr '\n' ' ')
	if [ "$2" = 0 ] && [ "$rows" = "1 " ]; then ok "on_cpu1: nothing on CPU 0, -cpus shows CPU 1 alone"; else
		notok "on_cpu1: $2 ns on CPU 0, -cpus rows: $rows"
	fi
else
	note "one CPU or no affinity: the pinned-thread checks are skipped"
fi
cpusum=$("$SONDE" print -metrics $M -printmode csv -cpus s.er | tail -n +3 | awk -F, '{ s += $3 } END { print s + 0 }')
[ "$cpusum" = "$all" ] && ok "-cpus rows add up to <Total>" || notok "-cpus rows add up to $cpusum, <Total> $all"

# -cpu_list is gprofng's: the selection and how many CPUs were sampled.
ncpu=$("$SONDE" print -printmode csv -cpus s.er | tail -n +3 | grep -vc '^unknown')
"$SONDE" print -cpu_select 0 -cpu_list s.er >cl.txt
if grep -q '^Exp Sel Total' cl.txt && awk -v n="$ncpu" '$1 == 1 { exit !($2 == "0" && $3 == n) } ' cl.txt; then
	ok "-cpu_list: experiment 1, selection 0, $ncpu CPUs sampled (as -cpus has rows)"
else notok "-cpu_list (wanted $ncpu CPUs): $(cat cl.txt)"; fi

# -calltree -inverted: roots carry the functions' exclusive time.
"$SONDE" print -metrics $M -printmode csv -functions s.er >f.csv
"$SONDE" print -metrics $M -printmode csv -calltree -inverted s.er >inv.csv
bad=$(awk -F, 'NR == FNR { if (FNR > 1) e[$1] = $3; next } FNR > 1 && $3 == 1 { if (e[$4] != $7) { n++; print "# " $4 ": root " $7 ", excl " e[$4] > "/dev/stderr" } } END { print n + 0 }' f.csv inv.csv)
roots=$(awk -F, 'FNR > 1 && $3 == 1' inv.csv | wc -l)
leaves=$(awk -F, 'NR > 2 && $3 != 0' f.csv | wc -l)
if [ "$bad" = 0 ] && [ "$roots" = "$leaves" ]; then ok "-calltree -inverted: $roots roots, each its function's exclusive time"; else
	notok "-calltree -inverted: $bad roots differ, $roots roots for $leaves leaf functions"
fi

# -indxobj TYPE is its type's view.
for pair in Threads:threads CPUs:cpus seconds:seconds Samples:samples; do
	"$SONDE" print -indxobj "${pair%%:*}" s.er >x1.txt 2>&1
	"$SONDE" print -"${pair##*:}" s.er >x2.txt 2>&1
	if cmp -s x1.txt x2.txt && [ -s x1.txt ]; then ok "-indxobj ${pair%%:*} = -${pair##*:}"; else
		notok "-indxobj ${pair%%:*} differs from -${pair##*:}"
	fi
done
"$SONDE" print -indxobj_list s.er >il.txt
grep -q 'CPUs.*-cpus' il.txt && grep -q 'Seconds.*-seconds' il.txt && ok "-indxobj_list lists the types" ||
	notok "-indxobj_list: $(head -3 il.txt)"

# -filters, -describe, and an er_print script with the new commands.
cat >s.scr <<'EOF'
# an er_print script
indxobj_list
cpu_select 0-63
time_select 0-100
callpath_select main
filters
cpu_list
seconds
calltree -inverted
describe
cpu_select all
filters
EOF
rc 0 "an er_print script with the slicing commands runs" "$SONDE" print -script s.scr s.er
grep -q 'CPUs  *0-63' out.txt && grep -q 'Call path  *main' out.txt && grep -q 'Time  *0-100 s' out.txt &&
	ok "-filters shows what is in force" || notok "-filters: $(grep -A8 '^Filters' out.txt | head -9)"
grep -q 'Clock Profiling' out.txt && grep -q 'time_select' out.txt && ok "-describe shows the data and the filters" ||
	notok "-describe"
for m in csv json; do
	if "$SONDE" print -printmode $m -filters -cpu_list -seconds -indxobj_list -describe -calltree -inverted s.er >m.txt 2>&1; then
		ok "the views run in -printmode $m"
	else notok "-printmode $m: $(head -3 m.txt)"; fi
done
if command -v python3 >/dev/null; then
	python3 -c 'import json,sys
for l in open(sys.argv[1]): json.loads(l)' m.txt && ok "json output parses" || notok "json output does not parse"
fi

# Bad arguments: usage errors, one line naming the argument.
for bad in "-cpu_select x:'x'" "-cpu_select 5-1:'5-1'" "-time_select 5-1:'5-1'" "-callpath_select nosuch_fn:'nosuch_fn'" \
	"-callpath_select a>b>c:'a>b>c'" "-indxobj Bogus:'Bogus'"; do
	args=${bad%%:*}
	needle=${bad#*:}
	rc 2 "$args is a usage error" "$SONDE" print $args -functions s.er
	if [ "$(wc -l <err.txt)" = 1 ] && grep -qF -- "$needle" err.txt; then ok "$args says $needle in one line"; else
		notok "$args: $(cat err.txt)"
	fi
done
rc 2 "agg time_select(\"2-1\") is an error" "$SONDE" agg 'profile /time_select("2-1")/ { @ = count(); }' s.er

# An er_print script of the commands gprofng also has runs unchanged under
# both (the numbers: the same program profiled by each differs by sampling).
cat >g.scr <<'EOF2'
indxobj_list
cpu_list
cpu_select 0
filters
functions
cpu_select all
seconds
indxobj CPUs
indxobj Seconds
indxobj Threads
describe
EOF2
rc 0 "sonde print runs an er_print script of cpu_list, cpu_select, filters, seconds, indxobj, describe" \
	"$SONDE" print -script g.scr s.er
if command -v gprofng >/dev/null 2>&1; then
	gprofng collect app -o g.er "$FIX/slicing" 0.1 >/dev/null 2>&1
	if gprofng display text -script g.scr g.er >gout.txt 2>&1 && ! grep -qi 'unknown\|unrecognized\|invalid' gout.txt; then
		ok "gprofng display text runs the same script"
	else
		notok "gprofng display text on the script: $(grep -i 'unknown\|unrecognized\|invalid' gout.txt | head -2)"
	fi
else
	note "gprofng not installed: the script is not run under it"
fi
