# Frames that tail calls erase, restored from DWARF's call sites (issue 19,
# item 1), against the truth of the tailcall fixture: each of its functions
# burns a known CPU time in its own body, and its calls that end a
# function are jumps (checked with objdump first: a compiler that stopped
# emitting them would make the rest meaningless).  Under `sonde collect -p
# hi`, the inclusive metric of every function that a jump took off the
# stack (A, E, F, rec_start, P, amb_top) and the attributed metrics of its
# calls must be within 1.5 points (percent of <Total>) of the truth; the
# ambiguous case (amb_leaf, reached from amb_top through amb_b1 or amb_b2)
# must be left under main and counted in -statistics; -tailcalls off must
# give the recorded (wrong) tree.  The same for the fixture built by clang,
# stripped with a separate debug file (found by .gnu_debuglink, and by
# build id under $SONDE_DEBUG_ROOT), and read from an archive (the
# stripped one: its copy and its debug file's) after the files are gone; and a stripped binary, and one whose DWARF is garbage,
# must be analysed as before (nothing restored, no crash).  The sampled
# numbers err by a sample or two at each edge of a function; a run whose
# numbers miss is repeated, up to 3 runs.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
SCALE=${SCALE:-0.6}
TOL=1.5

# ---- the jumps are jumps ----------------------------------------------------------
# jumps BINARY: every "FROM>TO" tail call of the fixture is a jmp in FROM's code
JUMPS="A>C rec_start>rec E>F F>G amb_top>amb_b1 amb_top>amb_b2 amb_b1>amb_leaf amb_b2>amb_leaf P>tc_lib_work@plt"
jumps() {
	objdump -d --no-show-raw-insn "$1" >dis.txt 2>/dev/null || return 1
	for j in $JUMPS; do
		from=${j%%>*} to=${j#*>}
		awk -v f="$from" -v t="$to" '
			$2 == "<" f ">:" { inside = 1; next }
			/^$/ { inside = 0 }
			inside && $2 == "jmp" && $NF == "<" t ">" { found = 1 }
			END { exit !found }' dis.txt || { echo "$from does not jump to $to"; return 1; }
	done
}
command -v objdump >/dev/null || { notok "objdump is needed to check the fixture's jumps"; exit 0; }
for b in tailcall tailcall_clang; do
	[ -x "$FIX/$b" ] || continue
	if out=$(jumps "$FIX/$b"); then ok "$b: each tail call of the fixture is a jmp ($JUMPS)"
	else notok "$b: the compiler no longer emits the fixture's tail calls as jumps: $out"; fi
done

# ---- the numbers --------------------------------------------------------------------
# truth FILE NAME: the ns the fixture burnt in NAME's own body
truth() { awk -v n="$2" '$1 == "truth" && $2 == n { print $3 }' "$1"; }

# expected values, "KIND FUNC OTHER = sum of truths" (KIND i: inclusive of
# FUNC; c: attributed of caller OTHER in FUNC's block; e: of callee OTHER)
EXPECT='i A - = A C
i E - = E F G
i F - = F G
i rec_start - = rec_start rec
i P - = P tc_lib_work
i amb_top - = amb_b1 amb_b2
i amb_leaf - = amb_leaf
c C A = C
c A main = A C
c G F = G
c F E = F G
c E main = E F G
c rec_start main = rec_start rec
c rec rec_start = rec/5
e rec_start rec = rec
c tc_lib_work P = tc_lib_work
c P main = P tc_lib_work
c amb_b1 amb_top = amb_b1
c amb_leaf main = amb_leaf'

# check EXP TRUTHFILE [PRINT OPTIONS]: compares; the misses in EXP.miss
check_exp() {
	e=$1 tf=$2
	shift 2
	"$SONDE" print "$@" -printmode csv -metrics i.totalcpu:name -functions "$e" >"$e.fn" 2>"$e.err" &&
		"$SONDE" print "$@" -printmode csv -metrics a.totalcpu:i.totalcpu:name -callers-callees "$e" >"$e.cc" 2>>"$e.err" ||
		{ echo "sonde print failed: $(head -3 "$e.err")" >"$e.miss"; return 1; }
	tot=$(awk -F, '$1 == "<Total>" { print $3; exit }' "$e.fn")
	ttot=$(awk '$1 == "thread" { print $4 }' "$tf")
	: >"$e.miss"
	: >"$e.hit"
	echo "$EXPECT" | while read -r kind f other eq sum; do
		t=0
		for term in $sum; do
			n=${term%/*} d=1
			[ "$n" != "$term" ] && d=${term#*/}
			t=$(awk -v a="$t" -v b="$(truth "$tf" "$n")" -v d="$d" 'BEGIN { printf "%.0f", a + b / d }')
		done
		case $kind in
		i) v=$(awk -F, -v f="$f" '$1 == f { print $3; exit }' "$e.fn") ;;
		c) v=$(awk -F, -v f="$f" -v o="$other" '$1 == f && $2 == "caller" && $3 == o { print $5; exit }' "$e.cc") ;;
		e) v=$(awk -F, -v f="$f" -v o="$other" '$1 == f && $2 == "callee" && $3 == o { print $5; exit }' "$e.cc") ;;
		esac
		line="$kind $f $other: $(awk -v v="${v:-0}" -v t="$tot" 'BEGIN { printf "%.2f", 100 * v / t }')% (truth $(awk -v v="$t" -v t="$ttot" 'BEGIN { printf "%.2f", 100 * v / t }')%)"
		if [ -n "$v" ] && awk -v v="$v" -v tot="$tot" -v t="$t" -v tt="$ttot" -v tol="$TOL" \
			'BEGIN { d = 100 * v / tot - 100 * t / tt; if (d < 0) d = -d; exit !(d <= tol) }'; then
			echo "$line" >>"$e.hit"
		else
			echo "$line" >>"$e.miss"
		fi
	done
	[ ! -s "$e.miss" ]
}

# variant NAME PROGRAM [sep|archive]: collect (up to 3 runs) and compare
variant() {
	name=$1 prog=$2 how=${3:-}
	good=0
	for n in 1 2 3; do
		e=$name$n.er
		rm -rf "$e"
		if [ "$how" = archive ]; then
			# the stripped program and its debug file: both must come from the archive
			rm -rf arch && mkdir arch &&
				cp "$FIX/tailcall_sep" "$FIX/tailcall_sep.debug" "$FIX/libtailcall_lib.so" arch/ &&
				prog=$TMP/arch/tailcall_sep
		fi
		if [ "$how" = buildid ]; then
			# the stripped program alone; its debug file under a debug root, by build id
			id=$(readelf -n "$FIX/tailcall_sep" | awk '/Build ID/ { print $3 }')
			rm -rf bid dbg && mkdir -p bid "dbg/.build-id/$(echo "$id" | cut -c1-2)" &&
				cp "$FIX/tailcall_sep" "$FIX/libtailcall_lib.so" bid/ &&
				cp "$FIX/tailcall_sep.debug" "dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug" &&
				prog=$TMP/bid/tailcall_sep
			export SONDE_DEBUG_ROOT=$TMP/dbg
		fi
		"$SONDE" collect -o "$e" -p hi "$prog" $SCALE >"$name$n.truth" 2>"$name$n.collect" ||
			{ echo "collect failed: $(head -3 "$name$n.collect")" >"$e.miss"; continue; }
		if [ "$how" = archive ]; then
			"$SONDE" archive "$e" >/dev/null 2>&1 || { echo "sonde archive failed" >"$e.miss"; continue; }
			rm -rf arch
		fi
		if check_exp "$e" "$name$n.truth"; then
			good=$n
			break
		fi
	done
	if [ $good -gt 0 ]; then
		ok "$name: restored frames' inclusive and attributed metrics within $TOL points of the truth (run $good)"
		sed 's/^/#   /' "$e.hit" | head -3
	else
		notok "$name: restored frames' metrics against the truth, 3 runs; the last one's misses:"
		sed 's/^/#   /' "$e.miss"
		return 1
	fi
	LAST=$e
	LASTT=$name$good.truth
}

LAST= LASTT=
if variant gcc "$FIX/tailcall"; then
	g=$LAST gt=$LASTT
	# the ambiguous case: left under main, counted
	"$SONDE" print -statistics "$g" >stats.txt 2>&1
	amb=$(awk -F'[:(]' '/Ambiguous, left as recorded/ { split($3, a, " "); print a[1] }' stats.txt)
	rest=$(awk -F: '/Frames restored/ { split($2, a, " "); print a[1] }' stats.txt)
	if [ "${amb:-0}" -gt 0 ] && [ "${rest:-0}" -gt 0 ]; then
		ok "-statistics counts the restored frames ($rest) and the ambiguous stacks' samples ($amb)"
	else
		notok "-statistics: restored '$rest', ambiguous '$amb'"
		sed 's/^/#   /' stats.txt | tail -4
	fi
	if awk -F, '$1 == "amb_leaf" && $2 == "caller" && $3 != "main" { bad = 1 } END { exit bad }' "$g.cc"; then
		ok "ambiguous: amb_leaf's only caller is main (two chains reach it: nothing inserted)"
	else
		notok "ambiguous: amb_leaf has callers other than main: $(awk -F, '$1 == "amb_leaf" && $2 == "caller" { printf "%s ", $3 }' "$g.cc")"
	fi
	# -tailcalls off: the recorded tree, which these checks must find wrong
	if check_exp "$g" "$gt" -tailcalls off; then
		notok "-tailcalls off: the truth checks pass on the recorded stacks (they cannot tell)"
	elif grep -q '^i A ' "$g.miss" && awk -F, '$1 == "C" && $2 == "caller" { exit $3 != "main" }' "$g.cc"; then
		ok "-tailcalls off: the recorded tree (C under main, A without C's time): $(grep '^i A ' "$g.miss")"
	else
		notok "-tailcalls off: not the recorded tree"
		sed 's/^/#   /' "$g.miss" | head -5
	fi
	# sonde agg's caller is the restored frame too (-tailcalls off: as recorded)
	agg='profile /func == "C" || func == "G" || func == "tc_lib_work"/ { @[func, caller] = count(); }'
	"$SONDE" agg "$agg" "$g" >agg_on.txt 2>&1
	"$SONDE" agg -tailcalls off "$agg" "$g" >agg_off.txt 2>&1
	top() { awk -v f="$2" '$1 == f { if ($3 > n) { n = $3; c = $2 } } END { print c }' "$1"; }
	if [ "$(top agg_on.txt C)" = A ] && [ "$(top agg_on.txt G)" = F ] && [ "$(top agg_on.txt tc_lib_work)" = P ] &&
		[ "$(top agg_off.txt C)" = main ]; then
		ok "agg: caller of C is A, of G F, of tc_lib_work P (-tailcalls off: C's is main)"
	else
		notok "agg callers: C $(top agg_on.txt C), G $(top agg_on.txt G), tc_lib_work $(top agg_on.txt tc_lib_work), off: C $(top agg_off.txt C)"
		sed 's/^/#   /' agg_on.txt | head -8
	fi
	# the marks: -dump and json
	"$SONDE" print -dump stacks "$g" >dump.txt 2>&1
	if grep -q '(tail call) .* A$' dump.txt && grep -q '(tail call) .* rec_start$' dump.txt &&
		grep -q 'several chains lead to amb_leaf' dump.txt; then
		ok "-dump stacks shows restored frames as '(tail call)' lines and the ambiguous gaps"
	else
		notok "-dump stacks marks: $(grep -c 'tail call' dump.txt) lines"
	fi
	"$SONDE" print -printmode json -calltree "$g" >tree.json 2>&1
	if grep -q '"name":"A","object":"tailcall","tail_call":1' tree.json &&
		grep -q '"name":"C","object":"tailcall","tail_call":0' tree.json; then
		ok "-calltree json marks the restored node A (tail_call 1), not C"
	else
		notok "-calltree json tail_call marks: $(grep -o '"name":"A"[^}]*' tree.json | head -2)"
	fi
	"$SONDE" print -tailcalls off -dump stacks "$g" >dump_off.txt 2>&1
	if grep -q 'tail call' dump_off.txt; then notok "-tailcalls off: -dump still shows restored frames"
	else ok "-tailcalls off: -dump shows the stacks as recorded"; fi

	# bad DWARF: the same experiment with the binary's .debug_info
	# overwritten by garbage (same build id), and with no DWARF at all
	mkdir -p bad && cp "$FIX/tailcall" "$FIX/libtailcall_lib.so" bad/
	rm -rf bad.er
	"$SONDE" collect -o bad.er -p hi bad/tailcall 0.05 >/dev/null 2>&1
	sec=$(readelf -SW bad/tailcall | awk '$2 == ".debug_info" { print $5, $6 }')
	if [ -n "$sec" ]; then
		off=$((0x${sec% *})) size=$((0x${sec#* }))
		head -c "$size" /dev/urandom | dd of=bad/tailcall bs=1 seek="$off" conv=notrunc 2>/dev/null
		rc 0 "a binary whose .debug_info is garbage: -calltree runs (exit 0)" "$SONDE" print -calltree bad.er
		grep -q 'main' out.txt || notok "garbage DWARF: no main in the tree"
	fi
	objcopy --strip-debug bad/tailcall 2>/dev/null
	rc 0 "a binary without DWARF: -calltree runs (exit 0)" "$SONDE" print -calltree bad.er
	if "$SONDE" print -tailcalls off -calltree bad.er 2>&1 | cmp -s - out.txt; then
		ok "a binary without DWARF: the tree is the recorded one (nothing restored)"
	else notok "a binary without DWARF: -tailcalls on and off differ"; fi
fi

if [ -x "$FIX/tailcall_clang" ]; then
	variant clang "$FIX/tailcall_clang"
else
	ok "# SKIP clang: clang is not installed, tailcall_clang was not built"
fi
variant sepdebug "$FIX/tailcall_sep"
variant archive "$FIX/tailcall_sep" archive
variant buildid "$FIX/tailcall_sep" buildid
unset SONDE_DEBUG_ROOT
