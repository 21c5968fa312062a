# Signal scenarios of gprofng's synprog (sig, sigprofh, itimer), in a
# fixture of our own (tests/fixtures/sigscen.c): CPU burnt inside the
# target's own signal handlers goes to the handlers, the code they
# interrupted keeps its own time, and the target's own SIGALRM and SIGPROF
# timers keep working under the collector.
#
# Tolerances: a handler run of 10 ms sampled every 1 ms of CPU time is
# counted to within one sample, and the error of a run's count has a
# variance of at most 1/4 sample^2, so n runs are within
# 3 * sqrt(n / 4) samples of the truth at three standard deviations.
# That holds for samples a millisecond apart: a sample the machine held
# back (a preempted virtual CPU: once 12.6 ms of user_loop went to the
# handler, by one late sample) weighs the CPU time since the previous
# one, all of it given to where it lands.  So the bounds also hold the
# run's late weight, what the samples heavier than 1.5 ms carry beyond
# the interval (each thread's first sample aside: it weighs the start).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# tol RUNS: the tolerance in ns for RUNS independent 10 ms runs at 1 ms.
tol() { awk -v n="$1" 'BEGIN { printf "%.0f", 3 * sqrt(n / 4) * 1000000 + 1000000 }'; }
# close A B TOL: |A - B| <= TOL
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= t) }'; }
truth() { awk -v k="$2" '$1 == "truth" && $2 == k { print $3 }' "$1"; }
runs() { awk -v k="$2" '$1 == "runs" && $2 == k { print $3 }' "$1"; }
# incl FUNC: inclusive ns from fn.csv (columns name, object, e.totalcpu, i.totalcpu)
incl() { awk -F, -v f="$1" '$1 == f { print $4; exit }' fn.csv; }

"$FIX/sigscen" >plain.txt
plain_profs=$(awk '$1 == "sigprof_count" { print $2 }' plain.txt)

rc 0 "collect -p hi sigscen" "$SONDE" collect -p hi -o s.er "$FIX/sigscen"
cp out.txt truth.txt
"$SONDE" print -printmode csv -metrics e.totalcpu:i.totalcpu:name -functions s.er >fn.csv 2>/dev/null
late=$("$SONDE" print -dump profile s.er 2>/dev/null | awk '/^sample/ {
	for (i = 1; i < NF; i++) { if ($i == "tid") t = $(i + 1); if ($i == "weight") w = $(i + 1) * 1e6 }
	if (!(t in seen)) { seen[t] = 1; next }
	if (w > 1.5e6) late += w - 1e6 } END { printf "%.0f", late }')
note "late weight: ${late:-0} ns (samples heavier than 1.5 ms, beyond the interval)"

for h in sigtime_handler usr1_handler; do
	want=$(truth truth.txt $h)
	n=$(runs truth.txt $h)
	got=$(incl $h)
	t=$(($(tol "$n") + ${late:-0}))
	if close "${got:-0}" "$want" "$t"; then ok "$h: $got ns in the handler, truth $want ns (within $t ns, $n runs)"; else
		notok "$h: recorded ${got:-0} ns, truth $want ns (tolerance $t ns for $n runs)"; fi
done

# user_loop's own time: its inclusive time holds the handler it was
# interrupted by (the handler runs on its stack).
want=$(truth truth.txt user_loop)
ul=$(incl user_loop)
sh_=$(incl sigtime_handler)
n=$(runs truth.txt sigtime_handler)
own=$(awk -v a="${ul:-0}" -v b="${sh_:-0}" 'BEGIN { printf "%.0f", a - b }')
t=$(($(tol $((2 * n))) + ${late:-0}))
if close "$own" "$want" "$t"; then ok "user_loop keeps its own time: $own ns, truth $want ns"; else
	notok "user_loop's own time $own ns (inclusive ${ul:-0} less the handler's ${sh_:-0}), truth $want ns (tolerance $t)"; fi

# A continuous burn with the target's own SIGPROF timer running.
want=$(truth truth.txt prof_burn)
got=$(incl prof_burn)
if within "${got:-0}" "$want" 2; then ok "prof_burn under the target's own ITIMER_PROF: $got ns, truth $want ns"; else
	notok "prof_burn under the target's own ITIMER_PROF: ${got:-0} ns, truth $want ns"; fi
profs=$(awk '$1 == "sigprof_count" { print $2 }' truth.txt)
if [ "${profs:-0}" -ge 20 ]; then
	ok "the target's ITIMER_PROF keeps firing: $profs SIGPROFs (plain run: $plain_profs)"
else notok "the target's ITIMER_PROF: ${profs:-0} SIGPROFs under sonde in up to 3 s of CPU (plain run: $plain_profs)"; fi

# The handlers are reached through the signal frame from the code they
# interrupted: the stack still reaches main.  What is not under main ran
# before it (<Process start>, the constructors under _dl_init) or after
# it (exit, <Process end>), or is the collector's (<Collector>).
m=$(incl main)
pre=$(awk -v a="$(incl _dl_init)" -v b="$(incl '<Process start>')" 'BEGIN { printf "%.0f", a + b }')
post=$(awk -v a="$(incl exit)" -v b="$(incl '<Process end>')" -v c="$(incl '<Collector>')" 'BEGIN { printf "%.0f", a + b + c }')
tot=$(incl '<Total>')
mpp=$(awk -v a="${m:-0}" -v b="${pre:-0}" -v c="${post:-0}" 'BEGIN { printf "%.0f", a + b + c }')
if within "$mpp" "$tot" 1; then ok "main's inclusive time with what ran before and after it is the total ($m + ${pre:-0} + ${post:-0} of $tot ns): handler stacks are complete"; else
	notok "main's inclusive ${m:-0} ns with ${pre:-0} before and ${post:-0} after it, of $tot ns"; fi
