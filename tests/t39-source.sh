# Annotated source, lines, disassembly and PCs against a fixture
# whose CPU time per source line is known (tests/fixtures/srclines.c: a
# one-line loop in hot_loop, a function `mix` inlined into two callers),
# built four ways: gcc -O2 -g (DWARF 5), gcc -gdwarf-4, clang -O2 -g, and
# stripped with its debug information in a separate file found by build
# id; and once stripped with no debug information at all.
#
# Truth: the fixture measures each phase's CPU time itself.  A line's share
# must be within 2 points of its phase's share of the phases' total (with
# clock samples at 1 ms over ~1.2 s of CPU, sampling error is well under a
# point: samples are taken every 1 ms of CPU time, not at random).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

mkdir src
cp "$TOP/tests/fixtures/srclines.c" src/srclines.c
SRC=$TMP/src/srclines.c
L_LOOP=$(grep -n '/\* LOOP \*/' "$SRC" | cut -d: -f1)
L_MIX=$(grep -n '/\* MIX \*/' "$SRC" | cut -d: -f1)
L_CALLA=$(grep -n '/\* CALLA \*/' "$SRC" | cut -d: -f1)
L_CALLB=$(grep -n '/\* CALLB \*/' "$SRC" | cut -d: -f1)
MS=1200

# pts A B: |A - B| <= 2 (percentage points)
pts() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 2) }'; }
# phase share: 100 * phase / sum of the phases
share() { awk -v w="$2" '$1 == "phase" { t += $3; if ($2 == w) v = $3 } END { printf "%.2f\n", 100 * v / t }' "$1"; }
share2() { awk '$1 == "phase" { t += $3; if ($2 != "hot_loop") v += $3 } END { printf "%.2f\n", 100 * v / t }' "$1"; }
# line LINE's exclusive (col 1) / inclusive (col 2) percent in a -source csv
# (metrics e.%totalcpu:i.%totalcpu: the last columns; text may hold commas)
srcval() { awk -F, -v l="$2" -v c="$3" '$1 == "line" && $2 == l { print (c == 1 ? $(NF - 2) : $NF) + 0 }' "$1"; }

# variant NAME: builds prog_NAME with the given compiler and flags
build_variant() {
	name=$1 cc=$2
	shift 2
	(cd src && $cc -std=gnu11 -O2 "$@" -Wl,--build-id -o "$TMP/prog_$name" srclines.c)
}

run_variant() {
	name=$1
	exp=$name.er
	shift
	rc 0 "$name: collect -p hi" "$SONDE" collect -p hi -o "$exp" "$TMP/prog_$name" $MS
	cp out.txt "truth_$name"
	# the phases' part of <Total>: not the collector's own time, nor the
	# process's start and end (doc/sonde-collect.md, "Starts and ends")
	part=$("$SONDE" print -printmode csv -metrics e.%totalcpu:name -functions "$exp" 2>/dev/null |
		awk -F, '$1 ~ /^<(Process start|Thread start|Process end|Thread end|Collector)>$/ { s += $4 } END { printf "%.4f", 1 - s / 100 }')
	want_hot=$(awk -v s="$(share "truth_$name" hot_loop)" -v p="$part" 'BEGIN { printf "%.2f", s * p }')
	want_mix=$(awk -v s="$(share2 "truth_$name")" -v p="$part" 'BEGIN { printf "%.2f", s * p }')
	P="$SONDE print -metrics e.%totalcpu:i.%totalcpu"

	# -source hot_loop: the loop's line carries hot_loop's share, marked hot
	$P -printmode csv -source hot_loop "$exp" >src.csv 2>src.err
	got=$(srcval src.csv "$L_LOOP" 1)
	if pts "$got" "$want_hot"; then ok "$name: -source hot_loop: line $L_LOOP has $got% (truth $want_hot%)"; else
		notok "$name: -source hot_loop: line $L_LOOP has '$got'% (truth $want_hot%)"
		sed 's/^/#   /' src.err | head -5
	fi
	$P -source hot_loop "$exp" >src.txt 2>&1
	check "$name: -source marks the loop's line hot" grep -q "^## .* $L_LOOP\. .*LOOP" src.txt
	check "$name: -source shows hot_loop's boundary" grep -q "<Function: hot_loop>" src.txt

	# -disasm hot_loop: the instructions of the loop's line add up to it
	$P -printmode csv -disasm hot_loop "$exp" >dis.csv 2>dis.err
	dsum=$(awk -F, -v l="$L_LOOP" '$1 == "insn" && $4 == l { s += $(NF - 2) } END { printf "%.2f\n", s }' dis.csv)
	nins=$(awk -F, -v l="$L_LOOP" '$1 == "insn" && $4 == l' dis.csv | wc -l)
	if pts "$dsum" "$want_hot" && [ "$nins" -ge 4 ]; then
		ok "$name: -disasm hot_loop: $nins instructions of line $L_LOOP with $dsum% (truth $want_hot%)"
	else
		notok "$name: -disasm hot_loop: $nins instructions of line $L_LOOP with '$dsum'% (truth $want_hot%)"
		sed 's/^/#   /' dis.err | head -5
	fi
	# a call instruction carries the inclusive time of its calls: main's
	# call (direct, or through the inlined phase's pointer) that runs
	# hot_loop carries hot_loop's share
	$P -printmode csv -disasm main "$exp" >dm.csv 2>/dev/null
	cmax=$(awk -F, '$1 == "insn" && $(NF - 6) == 1 { v = $NF + 0; if (v > m) m = v } END { printf "%.2f\n", m }' dm.csv)
	ncall=$(awk -F, '$1 == "insn" && $(NF - 6) == 1' dm.csv | wc -l)
	if pts "$cmax" "$want_hot" && [ "$ncall" -ge 3 ]; then
		ok "$name: -disasm main: the call that runs hot_loop carries its inclusive $cmax% (truth $want_hot%; $ncall calls)"
	else notok "$name: -disasm main: largest inclusive of $ncall calls '$cmax'% (truth $want_hot%)"; fi
	$P -disasm hot_loop "$exp" >dis.txt 2>&1
	check "$name: -disasm interleaves the loop's source line" grep -q "^ *$L_LOOP\. .*LOOP" dis.txt
	nh=$($P -dthresh 100 -disasm hot_loop "$exp" 2>/dev/null | grep -c '^##')
	nz=$($P -dthresh 0 -disasm hot_loop "$exp" 2>/dev/null | grep -c '^##')
	nv=$(awk -F, '$1 == "insn" && $(NF - 3) > 0' dis.csv | wc -l)
	check "$name: -dthresh 100 marks the hottest instruction only ($nh), -dthresh 0 every one with time ($nz of $nv)" \
		test "$nh" = 1 -a "$nz" = "$nv"
	check "$name: -disasm names the loop's branch target" grep -Eq "j[a-z]+ +0x[0-9a-f]+ <hot_loop\+0x[0-9a-f]+>" dis.txt

	# mix, inlined into caller_a and caller_b: its line, in both callers
	$P -printmode csv -source mix "$exp" >mix.csv 2>mix.err
	m=$(srcval mix.csv "$L_MIX" 1)
	ia=$(srcval mix.csv $((L_CALLA + 1)) 2)
	ib=$(srcval mix.csv $((L_CALLB + 1)) 2)
	ea=$(srcval mix.csv "$L_CALLA" 1)
	eb=$(srcval mix.csv "$L_CALLB" 1)
	tot=$(awk -v a="$m" -v b="$ea" -v c="$eb" 'BEGIN { printf "%.2f\n", a + b + c }')
	if pts "$tot" "$want_mix"; then
		ok "$name: mix's line $m% + callers' loop lines $ea% + $eb% = the callers' share (truth $want_mix%)"
	else notok "$name: mix's line '$m'% + callers' loop lines '$ea'% + '$eb'% vs the callers' share $want_mix%"; fi
	# A call site's inclusive time is the inlined mix's time there plus
	# the call line's own instructions: gcc -gdwarf-4 puts caller_b's
	# `add $1,%rax` (the i + 1) on line CALLB+1, outside mix's inlined
	# range, and a sample or two land on it in some runs.  So the identity
	# is  ia + ib = m + own(CALLA+1) + own(CALLB+1),  exact up to the
	# printed precision; the old check left the last two out and failed
	# whenever such a sample was taken.
	# The time after the thread's last sample, when that sample was in
	# mix, is below mix's line as <After last sample>: in the call
	# sites' inclusive time, on no line of mix (at most its whole share).
	oa=$(srcval mix.csv $((L_CALLA + 1)) 1)
	ob=$(srcval mix.csv $((L_CALLB + 1)) 1)
	after=$($P -printmode csv -metrics e.%totalcpu:name -functions "$exp" 2>/dev/null |
		awk -F, '$1 == "<After last sample>" { print $4 + 0; f = 1 } END { if (!f) print 0 }')
	if awk -v m="$m" -v a="$ia" -v b="$ib" -v oa="$oa" -v ob="$ob" -v t="$after" \
		'BEGIN { d = (a + b) - (m + oa + ob); exit !(a > 1 && b > 1 && d < t + 0.001 && -d < 0.001) }'; then
		ok "$name: mix is attributed to its own line from both callers ($ia% + $ib% = $m% + the call lines' own $oa% + $ob%)"
	else notok "$name: mix from both callers: call sites '$ia'% + '$ib'% vs its line '$m'% + the call lines' own '$oa'% + '$ob'%"; fi
	n=$(grep -c '^inlined,[0-9]*,mix,' mix.csv)
	check "$name: -source marks mix's two inlined call sites ($n)" test "$n" = 2

	# -inlines: mix as a function with both callers; off: folded into them
	$P -printmode csv -callers-callees "$exp" >cc.csv 2>/dev/null
	$SONDE print -metrics e.%totalcpu -printmode csv -functions "$exp" >fn.csv 2>/dev/null
	fm=$(awk -F, '$1 == "mix" { print $(NF) + 0 }' fn.csv)
	if pts "$fm" "$m"; then ok "$name: -functions lists inlined mix ($fm%, its line $m%)"; else
		notok "$name: -functions: inlined mix '$fm'% vs its line $m%"; fi
	$SONDE print -printmode csv -csingle mix "$exp" >cs.csv 2>/dev/null
	check "$name: -csingle mix: called from caller_a and caller_b" sh -c "grep -q ',caller,caller_a,' cs.csv && grep -q ',caller,caller_b,' cs.csv"
	$SONDE print -inlines off -metrics e.%totalcpu -printmode csv -functions "$exp" >fo.csv 2>/dev/null
	check "$name: -inlines off: mix is not a function" sh -c "! grep -q '^mix,' fo.csv"
	fa=$(awk -F, '$1 == "caller_a" { print $(NF) + 0 }' fo.csv)
	wa=$(share "truth_$name" caller_a)
	if pts "$fa" "$wa"; then ok "$name: -inlines off: caller_a has its own and mix's time ($fa%, truth $wa%)"; else
		notok "$name: -inlines off: caller_a '$fa'% (truth $wa%)"; fi

	# -lines and -pcs agree with -source and -disasm
	top=$($P -printmode csv -lines "$exp" 2>/dev/null | awk -F, 'NR == 3')
	tl=$(echo "$top" | awk -F, '{ print $(NF - 4) }')
	tv=$(echo "$top" | awk -F, '{ print $(NF - 2) + 0 }')
	sv=$(srcval src.csv "$L_LOOP" 1)
	if [ "$tl" = "$L_LOOP" ] && awk -v a="$tv" -v b="$sv" 'BEGIN { exit !(a - b < 0.01 && b - a < 0.01) }'; then
		ok "$name: -lines' top line is the loop's line with -source's value ($tv%)"
	else notok "$name: -lines' top line: '$top' vs -source line $L_LOOP $sv%"; fi
	top=$($P -printmode csv -pcs "$exp" 2>/dev/null | awk -F, 'NR == 3')
	pf=$(echo "$top" | awk -F, '{ print $(NF - 6) }')
	pa=$(echo "$top" | awk -F, '{ print $(NF - 4) }')
	pv=$(echo "$top" | awk -F, '{ print $(NF - 2) + 0 }')
	dv=$($P -printmode csv -disasm "$pf" "$exp" 2>/dev/null | awk -F, -v a="$pa" '$1 == "insn" && $2 == a { print $(NF - 2) + 0 }')
	if [ -n "$dv" ] && awk -v a="$pv" -v b="$dv" 'BEGIN { exit !(a > 5 && a - b < 0.01 && b - a < 0.01) }'; then
		ok "$name: -pcs' top pc ($pf at $pa, $pv%) has the value -disasm $pf shows there"
	else notok "$name: -pcs' top: '$top' vs -disasm $pf at $pa: '$dv'"; fi
}

build_variant dwarf5 cc -g
run_variant dwarf5
build_variant dwarf4 cc -gdwarf-4
run_variant dwarf4
if command -v clang >/dev/null 2>&1; then
	build_variant clang clang -g
	run_variant clang
else
	notok "clang is not installed (make check installs it: scripts/deps.sh)"
fi

# Debug information in a separate file, found by build id.
build_variant debugfile cc -g
id=$(readelf -n prog_debugfile | awk '/Build ID/ { print $3 }')
mkdir -p "dbg/.build-id/$(echo "$id" | cut -c1-2)"
objcopy --only-keep-debug prog_debugfile "dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
strip --strip-all prog_debugfile
check "debugfile: the program has no symbols or DWARF of its own" sh -c "! readelf -S prog_debugfile | grep -q '\.debug_info\|\.symtab'"
SONDE_DEBUG_ROOT=$TMP/dbg
export SONDE_DEBUG_ROOT
run_variant debugfile
unset SONDE_DEBUG_ROOT

# Stripped, no debug information: a clear note, and -disasm still works.
build_variant stripped cc -g
cp prog_stripped prog_unstripped
range=$(nm -S --defined-only prog_unstripped | awk '$4 == "hot_loop" { print $1, $2 }')
strip --strip-all prog_stripped
rc 0 "stripped: collect" "$SONDE" collect -p hi -o stripped.er "$TMP/prog_stripped" $MS
want_hot=$(share out.txt hot_loop)
fn=$("$SONDE" print -printmode csv -functions stripped.er 2>/dev/null | awk -F, 'NR == 3 { print $1 }')
rc 1 "stripped: -source of the hottest function ($fn) fails" "$SONDE" print -source "$fn" stripped.er
check "stripped: the message says line information is missing" grep -q "no line information" err.txt
rc 0 "stripped: -disasm '$fn' works" "$SONDE" print -metrics e.%totalcpu -printmode csv -disasm "$fn" stripped.er
lo=$(printf '%d' "0x$(echo "$range" | cut -d' ' -f1)")
hi=$((lo + $(printf '%d' "0x$(echo "$range" | cut -d' ' -f2)")))
got=$(awk -F, '$1 == "insn" { print $2, $NF }' out.txt | while read -r a v; do
	d=$(printf '%d' "$a")
	[ "$d" -ge "$lo" ] && [ "$d" -lt "$hi" ] && echo "$v"
done | awk '{ s += $1 } END { printf "%.2f\n", s }')
if pts "$got" "$want_hot"; then ok "stripped: -disasm: hot_loop's instructions have $got% (truth $want_hot%)"; else
	notok "stripped: -disasm: hot_loop's instructions have '$got'% (truth $want_hot%)"; fi
"$SONDE" print -disasm "$fn" stripped.er >dis.txt 2>&1
check "stripped: -disasm notes the missing line information" grep -q "no line information" dis.txt

# Finding sources: moved away, then -pathmap, -addpath, an archived copy.
mkdir moved
mv src/srclines.c moved/
rc 1 "moved source: -source fails" "$SONDE" print -source hot_loop dwarf5.er
check "moved source: the message names the file" grep -q "cannot find source file '$SRC'" err.txt
rc 0 "moved source: -pathmap finds it" "$SONDE" print -pathmap "$TMP/src" "$TMP/moved" -source hot_loop dwarf5.er
check "-pathmap: the loop's line is shown, read from moved/" sh -c "grep -q 'Read from: $TMP/moved/srclines.c' out.txt && grep -q ' $L_LOOP\. .*LOOP' out.txt"
rc 0 "moved source: -addpath finds it" "$SONDE" print -addpath "$TMP/moved" -source hot_loop dwarf5.er
printf 'pathmap %s %s\nsource hot_loop\n' "$TMP/src" "$TMP/moved" >s.scr
rc 0 "-pathmap in a script" "$SONDE" print -script s.scr dwarf5.er
mv moved/srclines.c src/
"$SONDE" archive -a src dwarf5.er >/dev/null 2>&1
mv src/srclines.c moved/
rc 0 "archived source: -source reads the copy" "$SONDE" print -source hot_loop dwarf5.er
check "archived source: read from the experiment's archives/" grep -q "Read from: .*dwarf5.er/archives/src" out.txt
mv moved/srclines.c src/

# Errors
rc 2 "-source of an unknown name fails" "$SONDE" print -source no_such_thing dwarf5.er
check "the message names it" grep -q "no_such_thing" err.txt
rc 2 "-disasm of an unknown function fails" "$SONDE" print -disasm no_such_thing dwarf5.er
rc 2 "-sthresh 150 is refused" "$SONDE" print -sthresh 150 -source hot_loop dwarf5.er
rc 2 "-inlines maybe is refused" "$SONDE" print -inlines maybe -functions dwarf5.er
rc 2 "-pathmap with one path is refused" "$SONDE" print -pathmap /x
rc 1 "-disasm of inlined-only mix says it has no code of its own" "$SONDE" print -disasm mix dwarf5.er
check "the message says why" grep -q "inlined" err.txt
rc 0 "-source by file name" "$SONDE" print -source srclines.c dwarf5.er
check "-source by file name shows the loop" grep -q " $L_LOOP\. .*LOOP" out.txt
rc 0 "-printmode json -source and -disasm" "$SONDE" print -printmode json -source hot_loop -disasm hot_loop dwarf5.er
check "json: two documents with rows" test "$(grep -c '"rows":\[' out.txt)" = 2

# Damaged input never crashes: the binary's DWARF overwritten with noise
# after collection (same build id, so it is read), a source file that is
# not text.
off=$(readelf -S -W prog_dwarf5 | awk '$2 == ".debug_info" { print $5 }')
size=$(readelf -S -W prog_dwarf5 | awk '$2 == ".debug_info" { print $6 }')
cp prog_dwarf5 prog_dwarf5.good
died=0
for seed in 1 2 3 4 5 6; do
	cp prog_dwarf5.good prog_dwarf5
	# noise over a quarter of .debug_info, at a seeded offset
	start=$(( $(printf '%d' "0x$off") + ($(printf '%d' "0x$size") / 8) * (seed % 4) ))
	len=$(( $(printf '%d' "0x$size") / 4 ))
	head -c "$len" /dev/urandom | dd of=prog_dwarf5 bs=1 seek="$start" conv=notrunc 2>/dev/null
	for v in "-source hot_loop" "-disasm hot_loop" "-lines" "-pcs" "-functions"; do
		# shellcheck disable=SC2086
		"$SONDE" print $v dwarf5.er >/dev/null 2>&1
		r=$?
		if [ $r -ge 128 ]; then
			notok "noisy DWARF (seed $seed): '$v' died with status $r"
			died=1
		fi
	done
done
[ $died = 1 ] || ok "noisy DWARF: -source, -disasm, -lines, -pcs, -functions never died (6 damaged copies)"
cp prog_dwarf5.good prog_dwarf5
head -c 3000 /dev/urandom >src/bin.c
cp src/srclines.c src/srclines.c.keep
cp src/bin.c src/srclines.c
rc 1 "a source file that is not text: -source fails cleanly" "$SONDE" print -source hot_loop dwarf4.er
cp src/srclines.c.keep src/srclines.c
