#!/bin/bash
# er_print's commands that gprofng users look for, against the fixture
# erprint's truth (main -> driver_a -> mid -> leaf_a 40% of the CPU,
# main -> driver_b -> mid -> leaf_b 20%, main -> solo 40%, measured by the
# fixture with its thread's CPU clock) and the fixture iofiles' own counts:
# fsummary, lsummary, psummary, the stack fragment commands (cprepend,
# cappend, crmfirst, crmlast after csingle), object_list, object_show,
# object_hide, name long:soname, printmode with a delimiter and html, thread_list,
# lwp_list, version, viewmode, iostat, iodetail, and collect's -t with a
# unit and -O FILE.  Then one er_print script runs under gprofng display
# text and sonde print, and both give the same per-function shares within
# their sampling error.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
F=$FIX/erprint
S() { "$SONDE" print "$@"; }

# share P (percent) of n samples: 4 sigma plus 1.5 points of systematic error
tol() { awk -v p="$1" -v n="$2" 'BEGIN { p /= 100; if (p < 0.01) p = 0.01; printf "%.2f", 400 * sqrt(p * (1 - p) / n) + 1.5 }'; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

"$SONDE" collect -p hi -o e.er "$F" 1.5 >truth.txt 2>&1 || notok "erprint collected"
TOTAL=$(awk '/^total/ { print $3 }' truth.txt)
truth_pct() { awk -v f="$1" -v t="$TOTAL" '$1 == "func" && $2 == f { printf "%.2f", 100 * $4 / t }' truth.txt; }
N=$(eff_samples e.er)
note "effective samples: $N"

# ---- fsummary: every function's block, as -fsingle, in -functions' order
S -fsummary e.er >fs.txt 2>fs.err
S -printmode csv -functions e.er >fn.csv
# "leaf_a" block: the percentage of its Exclusive line
fs_pct() { awk -v f="$1" '$0 == f { on = 1; next } on && /Exclusive Total CPU Time/ { gsub(/[()%]/, " "); print $(NF); exit }' fs.txt; }
csv_pct() { awk -F, -v f="$1" '$1 == f { printf "%.1f", $4 }' fn.csv; }
for f in leaf_a leaf_b solo; do
	got=$(fs_pct $f) want=$(truth_pct $f) t=$(tol "$want" "$N")
	if [ -n "$got" ] && [ "$got" = "$(csv_pct $f)" ] && near "$got" "$want" "$t"; then
		ok "-fsummary: $f exclusive $got% (-functions the same; truth $want% +- $t)"
	else notok "-fsummary: $f exclusive '$got'%, -functions $(csv_pct $f)%, truth $want% +- $t"; fi
done
order_fs=$(awk '/^\t/ || !NF || /sorted by/ { next } { print }' fs.txt | head -4 | tr '\n' ' ')
order_fn=$(awk -F, 'NR > 1 { print $1 }' fn.csv | head -4 | tr '\n' ' ')
if [ "$order_fs" = "$order_fn" ]; then ok "-fsummary lists the functions in -functions' order"; else
	notok "-fsummary order '$order_fs', -functions '$order_fn'"; fi
if grep -q "Load Object: .*/erprint$" fs.txt && grep -q "Mangled Name: leaf_a" fs.txt; then
	ok "-fsummary blocks give the load object and mangled name"; else notok "-fsummary details missing"; fi

# ---- lsummary / psummary: the first row of -lines / -pcs as a block
for v in lines pcs; do
	s=lsummary
	[ $v = pcs ] && s=psummary
	first=$(S -$v e.er | sed -nE '/<Total>$/ { n; s/^ *([0-9.]+ +){4}//; p; q; }')
	blk=$(S -$s e.er | awk '/sorted by/ || !NF { next } /^\t/ { next } { n++ } n == 2 { print; exit }')
	if [ -n "$first" ] && [ "$first" = "$blk" ]; then ok "-$s: the first block is -$v's first row ($blk)"; else
		notok "-$s: first block '$blk', -$v first row '$first'"; fi
done

# ---- stack fragments
S -printmode csv -csingle mid -cprepend driver_a e.er >fr.csv 2>fr.err
callers=$(awk -F, '$1 == "caller" { print $2 }' fr.csv | tr '\n' ' ')
callees=$(awk -F, '$1 == "callee" { print $2 }' fr.csv | tr '\n' ' ')
frag=$(awk -F, '$1 == "fragment" { print $2 }' fr.csv | tr '\n' ' ')
if [ "$callers" = "main " ] && [ "$frag" = "driver_a mid " ] && [ "$callees" = "leaf_a " ]; then
	ok "-csingle mid -cprepend driver_a: callers main, fragment driver_a mid, callees leaf_a (not leaf_b)"
else notok "fragment driver_a->mid: callers '$callers', fragment '$frag', callees '$callees'"; fi
# attributed: the callers' sum = the fragment's own + the callees' (every stack once)
sum_in=$(awk -F, '$1 == "caller" { s += $4 } END { print s + 0 }' fr.csv)
sum_out=$(awk -F, '$1 == "callee" || ($1 == "fragment" && $4 != "") { s += $4 } END { print s + 0 }' fr.csv)
tot=$(awk -F, '$1 == "<Total>" { print $3 }' fn.csv)
pa=$(awk -v a="$sum_in" -v t="$tot" 'BEGIN { printf "%.2f", 100 * a / t }')
want=$(truth_pct leaf_a) t=$(tol "$want" "$N")
if [ "$sum_in" = "$sum_out" ] && near "$pa" "$want" "$t"; then
	ok "fragment driver_a->mid: $pa% of the CPU in and out (truth leaf_a $want% +- $t)"
else notok "fragment driver_a->mid: in $sum_in, out $sum_out ($pa%), truth $want% +- $t"; fi
S -printmode csv -csingle mid -cprepend driver_a -crmfirst e.er >fr2.csv 2>/dev/null
# the last view's rows (each view starts with its csv header)
awk '/^role,/ { n = 0; delete l } { l[n++] = $0 } END { for (i = 0; i < n; i++) print l[i] }' fr2.csv >last.csv
c2=$(awk -F, '$1 == "callee" { print $2 }' last.csv | sort | tr '\n' ' ')
f2=$(awk -F, '$1 == "fragment" { print $2 }' last.csv | tr '\n' ' ')
[ "$c2" = "leaf_a leaf_b " ] && [ "$f2" = "mid " ] && ok "-crmfirst: back to mid, with callees leaf_a and leaf_b" ||
	notok "-crmfirst: fragment '$f2', callees '$c2'"
S -printmode csv -csingle driver_b -cappend mid -cappend leaf_b -crmlast e.er >fr3.csv 2>/dev/null
f3=$(awk -F, 'FNR > 1 && $1 == "fragment" { print $2 }' fr3.csv | tail -2 | tr '\n' ' ')
c3=$(awk -F, '$1 == "callee" { print $2 }' fr3.csv | tail -1)
[ "$f3" = "driver_b mid " ] && [ "$c3" = leaf_b ] && ok "-cappend twice, -crmlast: driver_b mid, callee leaf_b" ||
	notok "-cappend/-crmlast: fragment '$f3', last callee '$c3'"
S -text -csingle mid e.er >/dev/null 2>&1
rc 2 "-crmfirst without a fragment: a usage error" S -crmfirst e.er
[ "$(wc -l <err.txt)" = 1 ] && grep -q "csingle" err.txt && ok "... in one line naming -csingle" || notok "crmfirst error: $(cat err.txt)"
rc 2 "-cappend of an unknown function: a usage error" S -csingle mid -cappend nosuchfn e.er

# ---- objects
S -object_list -object_hide libc.so.6 -object_list -functions -object_show all -functions e.er >ob.txt 2>ob.err
if grep -q "^show <libc.so.6>" ob.txt && grep -q "^hide <libc.so.6>" ob.txt && grep -q "<libc.so.6>$" ob.txt; then
	ok "-object_list shows libc.so.6 shown, then hidden; its functions fold into <libc.so.6>"
else notok "object_list/object_hide"; sed 's/^/#   /' ob.txt | head -30; fi
n1=$(awk '/__libc_start_main$/' ob.txt | wc -l)
[ "$n1" = 1 ] && ok "-object_show all brings libc's functions back" || notok "__libc_start_main rows: $n1"
rc 2 "-object_hide of an unknown object: a usage error" S -object_hide nosuch.so e.er

# ---- names, print modes, lists
S -limit 3 -name long:soname -functions e.er >so.txt
grep -q "leaf_a \[<erprint>\]$" so.txt && grep -q "<Total> \[<Total>\]" so.txt && ok "-name long:soname: 'leaf_a [<erprint>]'" ||
	notok "-name long:soname"
# -lines and -pcs as er_print writes them: the object after the function's name
S -name long:soname -lines -pcs e.er >sol.txt
if grep -q '^ *[0-9.]\+ .* leaf_a \[<erprint>\], line [0-9]\+ in "erprint.c"$' sol.txt &&
	grep -q '^ *[0-9.]\+ .* leaf_a \[<erprint>\] + 0x[0-9a-f]\{8\}$' sol.txt &&
	[ "$(grep -c '<Total> \[<Total>\]$' sol.txt)" = 2 ]; then
	ok "-name long:soname in -lines and -pcs: 'leaf_a [<erprint>], line N in \"erprint.c\"', 'leaf_a [<erprint>] + 0x...'"
else notok "-name long:soname in -lines, -pcs: $(grep leaf_a sol.txt | head -2 | tr '\n' '|')"; fi
S -name short:soname -calltree e.er >sot.txt
grep -q "+-leaf_a \[<erprint>\]$" sot.txt && grep -q "+-main \[<erprint>\]$" sot.txt &&
	ok "-name short:soname in -calltree: '+-leaf_a [<erprint>]'" || notok "-name short:soname in -calltree: $(grep leaf_a sot.txt | head -1)"
rc 2 "-name long:bogus: a usage error" S -name long:bogus -functions e.er
S -printmode ';' -functions e.er >semi.txt
a=$(awk -F';' '$1 == "leaf_a" { print $3 }' semi.txt) b=$(awk -F, '$1 == "leaf_a" { print $3 }' fn.csv)
head -1 semi.txt | grep -q '^name;object;e.totalcpu' && [ -n "$a" ] && [ "$a" = "$b" ] &&
	ok "-printmode ';': the csv form with ';' between fields" || notok "-printmode ';': '$(head -2 semi.txt)'"
rc 2 "-printmode ab: a usage error" S -printmode ab -functions e.er
S -thread_list e.er >tl.txt
S -lwp_list e.er >ll.txt
grep -q "^  1 all     1$" tl.txt && cmp -s tl.txt ll.txt && ok "-thread_list and -lwp_list: experiment 1, all of its 1 thread" ||
	notok "thread_list: $(cat tl.txt)"
S -version e.er | grep -q "^sonde print [0-9]" && ok "-version" || notok "-version"
rc 0 "-viewmode user|expert|machine are accepted" S -viewmode user -viewmode expert -viewmode machine -functions e.er
rc 2 "-viewmode bogus: a usage error" S -viewmode bogus e.er

# ---- I/O: iostat and iodetail against iofiles' own counts (reads; its
# writes are counted per file, and its truth lines on stdout are written
# after them, so writes are checked against -io's total of the same events)
mkdir -p d
"$SONDE" collect -p off -i on -o io.er "$FIX/iofiles" "$TMP/d" </dev/null >io.out 2>&1
wb=$(awk '$1 == "truth" { for (i = 3; i <= NF; i++) if ($i ~ /^write_bytes=/) { sub(/.*=/, "", $i); s += $i } } END { print s + 0 }' io.out)
rb=$(awk '$1 == "truth" { for (i = 3; i <= NF; i++) if ($i ~ /^read_bytes=/) { sub(/.*=/, "", $i); s += $i } } END { print s + 0 }' io.out)
S -experiment_select 1 -iostat io.er >ios.txt 2>&1
gw=$(awk '/^Write Statistics/ { w = 1 } /^Read Statistics/ { w = 0; r = 1 } /^Total bytes/ { if (w) print $3 }' ios.txt)
gr=$(awk '/^Read Statistics/ { r = 1 } /^Other/ { r = 0 } /^Total bytes/ { if (r) print $3 }' ios.txt)
S -experiment_select 1 -printmode csv -iodetail io.er >iod.csv 2>&1
S -experiment_select 1 -printmode csv -io io.er >io.csv 2>&1
iw=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "iowritebytes") c = i } $1 == "<Total>" { print $c }' io.csv)
if [ "$gw" = "$iw" ] && [ "$gw" -ge "$wb" ] && [ "$gr" = "$rb" ]; then
	ok "-iostat: $gr bytes read as iofiles counted; $gw written as -io counts (iofiles' files: $wb)"; else
	notok "-iostat: written $gw (-io $iw, iofiles' files $wb), read $gr (truth $rb)"; fi
t1=$(awk -F, '$1 == "<Total>"' iod.csv) t2=$(awk -F, '$1 == "<Total>"' io.csv)
if [ -n "$t1" ] && [ "$t1" = "$t2" ] && grep -q "/sys.dat (FD=[0-9]*)" iod.csv; then
	ok "-iodetail: -io's totals, a row per file and descriptor"; else notok "-iodetail: '$t1' vs '$t2'"; fi

# ---- collect -t with a unit, -O FILE
rm -rf t.er
"$SONDE" collect -t 1m -o t.er "$F" 0.05 >/dev/null 2>&1
grep -q 'duration_s="60"' t.er/log.xml && ok "collect -t 1m: 60 s" || notok "collect -t 1m"
rc 2 "collect -t 1h: a usage error (s and m only)" "$SONDE" collect -t 1h /bin/true
rm -f col.log
"$SONDE" collect -O col.log -o nope "$F" 0.05 >o.txt 2>e.txt
if grep -q "must end in .er" col.log && ! [ -s e.txt ] && ! grep -q "func" col.log; then
	ok "collect -O FILE: collect's messages go to FILE"; else notok "collect -O: log '$(cat col.log)', stderr '$(cat e.txt)'"; fi
rm -rf o.er
"$SONDE" collect -O col.log -o o.er "$F" 0.05 >o.txt 2>e.txt
grep -q "^func leaf_a" o.txt && ! grep -q "func" col.log && ok "collect -O FILE: the target's output is its own" ||
	notok "collect -O: target output in o.txt: $(head -1 o.txt)"

# ---- one er_print script under gprofng and sonde
cat >script.er <<'SCR'
# an er_print script: runs unchanged under gprofng display text and sonde print
limit 20
functions
fsummary
csingle mid
cprepend driver_a
crmfirst
cappend leaf_a
crmlast
object_list
name long:soname
functions
name long
printmode ;
functions
printmode text
thread_list
lwp_list
viewmode user
version
printmode html
functions
printmode text
SCR
rc 0 "sonde print -script: the er_print script runs" S -script script.er e.er
cp out.txt sonde.txt
if ! command -v gprofng >/dev/null 2>&1; then
	note "gprofng is not installed: the comparison with gprofng display text is skipped"
	exit 0
fi
# gprofng's clock profile here: its own sample count decides the tolerance
pct_of() { awk -v f="$2" '/^[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +/ && $NF == f { print $2; exit }' "$1"; }
cnt_of() { awk '/^[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +<Total>$/ { print $1; exit }' "$1"; }
for try in 1 2 3; do
	rm -rf g.er
	(gprofng collect app -p on -o g.er "$F" 3 >/dev/null 2>&1) || { notok "gprofng collect"; break; }
	gprofng display text -script script.er g.er >gp.txt 2>gp.err
	grc=$?
	# gprofng counts 10 ms ticks; the effective sample count is its time / 10 ms
	gn=$(awk -v s="$(cnt_of gp.txt)" 'BEGIN { printf "%d", s / 0.010 + 0.5 }')
	bad=0 msg=""
	for f in leaf_a leaf_b solo; do
		g=$(pct_of gp.txt $f) s=$(pct_of sonde.txt $f)
		t=$(awk -v p="$s" -v n="$gn" -v m="$N" 'BEGIN { p /= 100; if (p < 0.01) p = 0.01; printf "%.2f", 400 * sqrt(p * (1 - p) * (1 / n + 1 / m)) + 1.5 }')
		msg="$msg $f gprofng ${g:-?}% sonde ${s:-?}% (+- $t);"
		[ -n "$g" ] && [ -n "$s" ] && near "$g" "$s" "$t" || bad=1
	done
	[ $grc = 0 ] && [ $bad = 0 ] && break
	note "try $try:$msg"
done
if grep -q '<table' gp.txt && grep -q '<table' sonde.txt; then
	ok "printmode html: both print the function list as an HTML table"
else notok "printmode html: gprofng $(grep -c '<table' gp.txt) tables, sonde $(grep -c '<table' sonde.txt)"; fi
if [ $grc = 0 ] && ! grep -qi "error" gp.err gp.txt; then ok "gprofng display text runs the same script"; else
	notok "gprofng display text -script: rc $grc"; sed 's/^/#   /' gp.err | head -5; fi
[ $bad = 0 ] && ok "gprofng ($gn samples) and sonde agree:$msg" || notok "gprofng and sonde disagree:$msg"

# ---- en_desc and the aliases gprofng scripts use
"$SONDE" collect -o d.er sh -c '/bin/true; /bin/true' >/dev/null 2>&1
sel() { "$SONDE" print "$@" -exp_list d.er 2>&1 | awk '$1 == "*" { printf "%s ", $2 }'; }
a=$(sel) b=$(sel -en_desc off) c=$(sel -en_desc '=_f2') d=$(sel -en_desc '=^true$') e=$(sel -en_desc '=nomatch')
if [ "$a" = "1 2 3 " ] && [ "$b" = "1 " ] && [ "$c" = "1 3 " ] && [ "$d" = "1 2 3 " ] && [ "$e" = "1 " ]; then
	ok "-en_desc on|off|=REGEX selects the descendants by lineage or program (founder always)"
else notok "-en_desc: all '$a', off '$b', =_f2 '$c', =^true\$ '$d', =nomatch '$e'"; fi
rc 2 "-en_desc with a bad regular expression fails" "$SONDE" print -en_desc '=(' d.er
check "and says why in one line" sh -c "[ \$(wc -l <err.txt) = 1 ] && grep -q 'en_desc' err.txt"
n=$("$SONDE" print -printmode csv -sample_list d.er | awk -F, '$1 == 1 { print $3 }')
m=$("$SONDE" print -printmode csv -samples d.er | grep -c '^d\.er,')
[ -n "$n" ] && [ "$n" = "$m" ] && ok "-sample_list counts the samples -samples shows ($n)" || notok "-sample_list: $n, -samples rows $m"
S -lwp_select 1 -exp_select 1 -thread_list e.er >ls.txt
awk '$1 == 1 { exit !($2 == "1") }' ls.txt && ok "-lwp_select and -exp_select are -thread_select and -experiment_select" ||
	notok "-lwp_select: $(cat ls.txt)"
S -indx_metric_list e.er >iml.txt && S -metric_list e.er >ml.txt && cmp -s iml.txt ml.txt &&
	ok "-indx_metric_list runs (the metrics of the index views)" || notok "-indx_metric_list"

# ---- setpath replaces the source search path; heap and ioactivity are -allocs and -io
mkdir -p sp/src sp/moved
cat >sp/src/spin.c <<'SRC'
volatile unsigned long sink;
int main(void) { for (unsigned long i = 0; i < 300000000UL; i++) sink += i; return 0; }
SRC
(cd sp/src && cc -O1 -g -o ../spin spin.c) && mv sp/src/spin.c sp/moved/
"$SONDE" collect -o sp.er sp/spin >/dev/null 2>&1
check "-setpath DIR finds a moved source file" "$SONDE" print -setpath "\$expts:$TMP/sp/moved" -source main sp.er
check "(-addpath finds it too)" "$SONDE" print -addpath "$TMP/sp/moved" -source main sp.er
fails "-setpath replaces -addpath's directories" "$SONDE" print -addpath "$TMP/sp/moved" -setpath /nonexistent -source main sp.er
S -heap e.er >h1.txt 2>&1
grep -q 'collect with -H on' h1.txt && ok "-heap is -allocs (no heap data: says collect with -H on)" || notok "-heap: $(head -2 h1.txt)"
S -ioactivity e.er >io1.txt 2>&1; S -iocallstack e.er >>io1.txt 2>&1
[ "$(grep -c 'collect with -i on' io1.txt)" = 2 ] && ok "-ioactivity and -iocallstack are -io and -iostacks (no I/O data: collect with -i on)" || notok "-ioactivity: $(head -2 io1.txt)"
