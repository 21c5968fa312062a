# A chain of 100 execs (issue 27, defect 5): tests/fixtures/execchain.c
# burns 5 ms in each of its 101 images and execs itself.  Every image is
# recorded, exactly: 100 sub-experiments, each named by its creator's
# descendant event (past 66 execs the lineage is folded into _h...), each
# ended, each with the CPU time its image burned, and together the CPU
# time of the chain.  -F =REGEX sees the whole lineage, not the folded
# name.  Where a descendant cannot be recorded (-F =REGEX excludes it, or
# its experiment's path would be too long), the founder's log.xml has an
# "unrecorded" event for each, and -header counts them, in text, csv and
# json.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

N=100
MS=5

# subexps EXP: the number of sub-experiments (directories _*.er).
subexps() { (cd "$1" && ls -d _*.er 2>/dev/null | wc -l); }

rc 0 "collect the chain of $N execs" "$SONDE" collect -o c.er "$FIX/execchain" $N $MS
check "the last image ran" grep -q '^chain ' out.txt
n=$(subexps c.er)
if [ "$n" = $N ]; then ok "$N execs: $N sub-experiments"; else notok "$N execs: $n sub-experiments"; fi
ended=$(grep -l '<event kind="end"' c.er/_*.er/log.xml 2>/dev/null | wc -l)
if [ "$ended" = $N ]; then ok "each of them recorded to its end"; else notok "$ended of them ended"; fi
long=$(cd c.er && ls -d _*.er | awk 'length($0) > 255' | wc -l)
check "no name is longer than 255 bytes" [ "$long" = 0 ]

# The chain, from the founder: each image's log names the next one's
# experiment in its descendant event.
dir=c.er
steps=0
while :; do
	lin=$(sed -n 's/.*kind="descendant".* variant="exec" lineage="\([^"]*\)" follow="1".*/\1/p' "$dir/log.xml")
	[ -n "$lin" ] || break
	[ -f "c.er/$lin.er/log.xml" ] || { note "step $((steps + 1)): $lin.er is missing"; break; }
	dir=c.er/$lin.er
	steps=$((steps + 1))
done
if [ "$steps" = $N ]; then ok "the founder's log leads through all $N images, one descendant event to the next"; else
	notok "the chain of descendant events ends after $steps images"; fi

"$SONDE" print -printmode csv -processes c.er >procs.csv 2>/dev/null
np=$(awk 'NR > 1' procs.csv | wc -l)
if [ "$np" = $((N + 1)) ]; then ok "sonde print lists the founder and $N images"; else notok "sonde print lists $np experiments"; fi
# Each image's recorded CPU time is its thread's real CPU time from its
# start to its end (thread_end), which holds its MS of burning.
short=$(awk -F, -v min=$((MS * 1000000)) 'NR > 1 && $5 < min' procs.csv | wc -l)
if [ "$short" = 0 ]; then ok "every image recorded at least the $MS ms it burned"; else
	notok "$short images recorded less than the $MS ms they burned"; fi
truth=$(awk '/^chain / { print $3 }' out.txt)
rec=$(awk -F, 'NR > 1 { s += $5 } END { printf "%.0f", s }' procs.csv)
note "chain: recorded $rec ns, the thread's CPU clock $truth ns"
if within "$rec" "${truth:-0}" 1; then ok "the chain's recorded CPU time is within 1% of its thread's CPU clock"; else
	notok "the chain's recorded CPU time $rec ns, its thread's CPU clock ${truth:-?} ns"; fi

"$SONDE" print -header c.er >h.txt 2>&1
check "-header: 'Descendants: $N recorded, 0 not recorded'" grep -qx "Descendants: *$N recorded, 0 not recorded" h.txt
"$SONDE" print -printmode csv -header c.er >h.csv 2>&1
check "-header csv: descendants.recorded,$N and descendants.not_recorded,0" \
	sh -c "grep -qx 'descendants.recorded,$N' h.csv && grep -qx 'descendants.not_recorded,0' h.csv"

# -F =REGEX on the lineage: the regex sees the whole lineage, _x1 repeated
# 100 times, not the folded name of the last 34 images.
rc 0 "collect -F '=^(_x1)+\$' the chain" "$SONDE" collect -F '=^(_x1)+$' -o r.er "$FIX/execchain" $N $MS
n=$(subexps r.er)
if [ "$n" = $N ]; then ok "-F '=^(_x1)+\$': all $N images recorded"; else notok "-F '=^(_x1)+\$': $n sub-experiments, wanted $N"; fi

# A regex that excludes images: each excluded image is counted, with why.
rc 0 "collect -F '=^(_x1){1,50}\$' the chain" "$SONDE" collect -F '=^(_x1){1,50}$' -o h.er "$FIX/execchain" $N $MS
n=$(subexps h.er)
u=$(grep -c '<event kind="unrecorded"' h.er/log.xml)
if [ "$n" = 50 ] && [ "$u" = 50 ]; then ok "-F '=^(_x1){1,50}\$': 50 recorded, 50 unrecorded events in the founder's log"; else
	notok "-F '=^(_x1){1,50}\$': $n recorded, $u unrecorded events (wanted 50 and 50)"; fi
"$SONDE" print -header h.er >hh.txt 2>&1
check "-header: '50 recorded, 50 not recorded (50: -F =REGEX ...)'" \
	grep -qx 'Descendants: *50 recorded, 50 not recorded (50: -F =REGEX matched neither its lineage nor its program)' hh.txt
"$SONDE" print -printmode json -header h.er >hh.json 2>&1
check "-header json: the setting, the counts and the reason" \
	grep -qF '"descendants":{"follow":"=^(_x1){1,50}$","recorded":50,"not_recorded":50,"reasons":[{"reason":"-F =REGEX matched neither its lineage nor its program","count":50}]}' hh.json

# -F off follows nothing, and -header says so rather than "none".
rc 0 "collect -F off the chain of 3 execs" "$SONDE" collect -F off -o off.er "$FIX/execchain" 3 1
"$SONDE" print -header off.er >oh.txt 2>&1
check "-F off: no sub-experiment, and -header says 'Descendants: not followed (-F off)'" \
	sh -c "[ \$(ls -d off.er/_* 2>/dev/null | wc -l) = 0 ] && grep -qx 'Descendants: *not followed (-F off)' oh.txt"

# A real limit: a path has at most 4095 bytes (PATH_MAX with its NUL).
# The founder's path is made 3901 bytes long: images 61 to 66, whose
# lineages have 183 to 198 bytes, would have a log.xml path of 4096 to
# 4111 bytes and cannot be recorded; image 60's files fit (its overview:
# 4094 bytes), and from image 67 on the lineage is folded (21 bytes,
# growing to 120 at image 100) and they fit again.
base=$(pwd -P)
deep=$base/p
while [ $((${#deep} + 200 + 6)) -lt 3901 ]; do deep=$deep/$(printf '%0199d' 0); done
pad=$((3901 - ${#deep} - 6))
deep=$deep/$(printf "%0${pad}d" 0)
mkdir -p "$deep" || notok "cannot make a directory of ${#deep} bytes"
exp=$deep/l.er
note "the founder's path has ${#exp} bytes"
(cd "$deep" && "$SONDE" collect -o l.er "$FIX/execchain" $N $MS >"$TMP/l.out" 2>"$TMP/l.err")
check "the chain ran to its end under a long path" grep -q '^chain ' "$TMP/l.out"
n=$(subexps "$exp")
u=$(grep -c '<event kind="unrecorded".*reason="its experiment.s path is too long"' "$exp/log.xml")
if [ "$n" = 94 ] && [ "$u" = 6 ]; then ok "long path: 94 recorded, 6 unrecorded events saying the path is too long"; else
	notok "long path: $n recorded, $u unrecorded events (wanted 94 and 6)"; fi
(cd "$deep" && "$SONDE" print -header l.er) >lh.txt 2>&1
check "-header: '94 recorded, 6 not recorded (6: its experiment's path is too long)'" \
	grep -qx "Descendants: *94 recorded, 6 not recorded (6: its experiment's path is too long)" lh.txt
