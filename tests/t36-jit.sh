# JIT code announced in a perf map file, against ground truth: the jitcode
# fixture writes a loop function's machine code into an anonymous
# executable mapping, announces it in /tmp/perf-PID.map and burns 0.6 s of
# CPU in it and 0.3 s in a C function, measured with its thread CPU clock.
# sonde must show the JIT function by its announced name, in the "<JIT>"
# load object, with its CPU time within 3% of the truth (and the C
# function's too), called from main; also when the target is killed with
# SIGKILL (sonde collect copies the map then); a perf map older than the
# target is not taken; and a jit.map full of garbage must not crash the
# reader.
#
# Why 3% holds: a sample's weight is the CPU time since the thread's
# previous sample, so each function's recorded time is off by at most the
# one sample interval (1 ms) around each phase change; the fixture's clock
# reads between its 1 ms chunks are well under 0.1%.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
JIT=$FIX/jitcode
pids=
trap 'for p in $pids; do rm -f /tmp/perf-$p.map; done; rm -rf "$TMP"' EXIT

collect() { # EXP ARGS...: runs the fixture, remembers its pid for cleanup
	exp=$1
	shift
	"$SONDE" collect -p hi -o "$exp" "$JIT" "$@" >"$exp.truth" 2>"$exp.err"
	rc=$?
	p=$(awk '$1 == "pid" { print $2 }' "$exp.truth")
	[ -n "$p" ] && pids="$pids $p"
	return $rc
}

# field CSV NAME COLUMN: a column of a function's row of -printmode csv.
field() {
	awk -F, -v n="$2" -v c="$3" '$1 == n { print $c; exit }' "$1"
}
truth() { awk -v f="$2" '$1 == "func" && $2 == f { print $4 }' "$1"; }

collect a.er 0.6 0.3
check "collect of the JIT fixture exits 0" test $rc = 0
check "the perf map was copied into the experiment as jit.map" grep -q ' jit_sum_loop$' a.er/jit.map
check "log.xml notes the copy" grep -q 'copied to jit.map' a.er/log.xml

"$SONDE" print -printmode csv -functions a.er >f.csv 2>f.err
tot=$(field f.csv '<Total>' 3)
for f in jit_sum_loop c_burn; do
	rec=$(field f.csv $f 3)
	real=$(truth a.er.truth $f)
	[ -n "$rec" ] || rec=0
	note "$f: real $real ns recorded $rec ns of $tot"
	if [ -n "$real" ] && within "$rec" "$real" 3; then
		ok "$f: recorded exclusive CPU time within 3% of real ($rec vs $real ns)"
	else
		notok "$f: recorded exclusive CPU time $rec ns, real $real ns"
	fi
done
# The JIT function's share of the profile: about 2/3, as in the truth.
rshare=$(awk -v r="$(field f.csv jit_sum_loop 3)" -v t="$tot" 'BEGIN { printf "%.1f", t ? r * 100 / t : 0 }')
tshare=$(awk -v j="$(truth a.er.truth jit_sum_loop)" -v c="$(truth a.er.truth c_burn)" \
	'BEGIN { printf "%.1f", j * 100 / (j + c) }')
if awk -v a="$rshare" -v b="$tshare" 'BEGIN { d = a - b; exit !(d <= 2 && d >= -2) }'; then
	ok "jit_sum_loop has $rshare% of the CPU (truth $tshare%)"
else
	notok "jit_sum_loop has $rshare% of the CPU, truth $tshare%"
fi
check "jit_sum_loop's load object is <JIT>" test "$(field f.csv jit_sum_loop 2)" = "<JIT>"
if grep -q stale_code f.csv; then notok "the overwritten name stale_code is shown"; else
	ok "the address's later perf map line wins over the earlier stale_code"; fi
if grep -q '<unknown>@' f.csv; then notok "some samples are still <unknown> addresses"; sed 's/^/#   /' f.csv | head; else
	ok "no sample is left as an <unknown> address"; fi
check "a good experiment gives no reader warning" test ! -s f.err

"$SONDE" print -csingle jit_sum_loop a.er >cs.txt 2>&1
check "-csingle: the JIT function's caller is main (stacks unwind through it)" \
	awk '/\*jit_sum_loop/ { exit !m } { m = $NF == "main" }' cs.txt
"$SONDE" print -objects a.er >o.txt 2>&1
check "-objects lists <JIT>" grep -q ' <JIT>$' o.txt
"$SONDE" print -dump stacks a.er >d.txt 2>&1
check "-dump stacks names JIT frames" grep -q '#0 0x[0-9a-f]*  <JIT>:jit_sum_loop+0x' d.txt
# the per-instruction views of JIT code (no ELF file to disassemble)
"$SONDE" print -pcs a.er >pcs.txt 2>&1
check "-pcs lists the JIT function's instructions (it crashed reading <JIT> as an ELF object)" \
	grep -q ' jit_sum_loop + 0x' pcs.txt

# Killed by SIGKILL: the collector never finishes, sonde collect copies.
collect k.er 0.2 0.1 kill
check "SIGKILL: collect exits 137" test $rc = 137
"$SONDE" print -printmode csv -functions k.er >k.csv 2>&1
rec=$(field k.csv jit_sum_loop 3)
real=$(truth k.er.truth jit_sum_loop)
if [ -n "$rec" ] && [ -n "$real" ] && within "$rec" "$real" 5; then
	ok "SIGKILL: jit_sum_loop shown with its CPU time ($rec vs $real ns)"
else
	notok "SIGKILL: jit_sum_loop recorded '$rec' ns, real '$real' ns"
fi

# A perf map last written before the target started was left by an
# earlier process with the same pid: neither the collector nor sonde
# collect may take it.
collect s.er 0.05 0.05 stale
check "a stale perf map is not copied" test ! -e s.er/jit.map
check "log.xml says why the stale perf map was ignored" grep -q 'older than the target' s.er/log.xml

# Without a perf map there is no jit.map.
"$SONDE" collect -p hi -o b.er "$FIX/burn" 1 0.1 >/dev/null 2>&1
check "no perf map, no jit.map" test ! -e b.er/jit.map

# A damaged jit.map: garbage lines are skipped and reported, the good
# line still names the function; random bytes, an empty file and an
# unreadable one do not crash the reader.
cp -r a.er g.er
{
	echo "this is not a perf map line"
	echo "zzzz 10 bad_start"
	echo "1000 0 empty_size"
	echo "ffffffffffffffff 10 wraps"
	head -c 3000 /dev/urandom | tr -d '\n'
	echo
	cat a.er/jit.map
} >g.er/jit.map
"$SONDE" print -printmode csv -functions g.er >g.csv 2>g.err
check "garbage in jit.map: print exits 0" test $? = 0
check "garbage in jit.map: the good line still names the function" grep -q '^jit_sum_loop,<JIT>,' g.csv
check "garbage in jit.map: a warning counts the ignored lines" grep -q 'lines are not perf map entries' g.err
crashed=0
for i in 1 2 3 4 5 6 7 8; do
	head -c $((i * 997)) /dev/urandom >g.er/jit.map
	"$SONDE" print -functions g.er >/dev/null 2>&1
	[ $? -lt 128 ] || crashed=$((crashed + 1))
	"$SONDE" print -dump stacks g.er >/dev/null 2>&1
	[ $? -lt 128 ] || crashed=$((crashed + 1))
done
: >g.er/jit.map
"$SONDE" print -functions g.er >/dev/null 2>&1 || crashed=$((crashed + 1))
rm g.er/jit.map
mkdir g.er/jit.map
"$SONDE" print -functions g.er >/dev/null 2>g.err || crashed=$((crashed + 1))
check "random, empty and unreadable jit.map files: no crash" test $crashed = 0
check "an unreadable jit.map is reported" grep -q "cannot read 'jit.map'" g.err
