# Names as their authors read them (issue 33), against fixtures in
# Fortran (gfortran: a module's procedures, an internal procedure, a named
# program), Rust (rustc: legacy and v0 manglings, an impl, a trait method,
# a generic) and C++ (a namespace, a class template doing std::map
# lookups, a lambda, a function that throws), each burning a known CPU
# time per function that the program measures itself (process CPU
# clock).  Each fixture: the functions named as their language writes
# them, with their inclusive CPU within 5% or 20 ms of the truth (1 ms
# samples: the error is a sample at each edge); every view that names a
# function (-lines, -pcs, -calltree, -source, -disasm) and every export
# (folded, speedscope, chrome, pprof) names the fixture's code as
# -functions does, never "<unknown>"; the other forms (-name long, short,
# mangled) as documented; a name is found in any form.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
N=$FIX/names
S=0.3

# CSV fields into f[1..n] (mawk has no FPAT): quoted fields, "" inside
CSVSPLIT='function csvsplit(s, f,    n, i, c, q, cur) {
	n = 0; cur = ""; q = 0
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (q) { if (c == "\"") { if (substr(s, i + 1, 1) == "\"") { cur = cur "\""; i++ } else q = 0 } else cur = cur c }
		else if (c == "\"") q = 1
		else if (c == ",") { f[++n] = cur; cur = "" }
		else cur = cur c
	}
	f[++n] = cur
	return n
}'
truth() { awk -v k="$2" '$1 == "truth" { v = $NF; $1 = ""; $NF = ""; sub(/^ /, ""); sub(/ $/, ""); if ($0 == k) print v }' "$1"; }
incl() { # CSV NAME: the function's inclusive CPU, seconds
	awk -v f="$2" "$CSVSPLIT"' NR > 1 { csvsplit($0, c); if (c[1] == f) { printf "%.4f\n", c[3] / 1e9; exit } }' "$1"
}

# fixture NAME [KEY=EXPECTED ...]: collect NAME, check the truth of each
# expected function (KEY is the truth line's, EXPECTED the name; a bare
# KEY is its own name), and the views and exports.
fixture() {
	fx=$1
	shift
	if [ ! -x "$N/$fx" ]; then
		notok "$fx: not built (its compiler is missing: scripts/deps.sh check installs gfortran and rustc)"
		return 1
	fi
	rm -rf "$fx.er"
	if ! "$SONDE" collect -p hi -o "$fx.er" "$N/$fx" $S >"$fx.out" 2>"$fx.err"; then
		notok "$fx: collect failed: $(head -c 300 "$fx.err")"
		return 1
	fi
	"$SONDE" print -printmode csv -metrics i.totalcpu:name -functions "$fx.er" >"$fx.fn" 2>&1
	# the fixture's own functions: those of its object
	awk -v fx="$fx" "$CSVSPLIT"' NR > 1 { csvsplit($0, c); if (c[2] == fx) print c[1] }' "$fx.fn" >"$fx.names"
	bad=
	good=
	for kv in "$@"; do
		k=${kv%%=*}
		want=${kv#*=}
		t=$(truth "$fx.out" "$k")
		got=$(incl "$fx.fn" "$want")
		if [ -z "$t" ]; then
			bad="$bad; no truth for '$k'"
		elif [ -z "$got" ]; then
			bad="$bad; '$want' not in -functions"
		elif awk -v t="$t" -v g="$got" 'BEGIN { tol = t * 0.05; if (tol < 0.020) tol = 0.020; d = g - t; if (d < 0) d = -d; exit !(d <= tol) }'; then
			good="$good; $want $got s (truth $t)"
		else
			bad="$bad; '$want' $got s, truth $t s"
		fi
	done
	if [ -z "$bad" ]; then ok "$fx: -functions names each function as written, inclusive CPU within 5% or 20 ms of the truth$good"; else
		notok "$fx:$bad"
		sed 's/^/#   /' "$fx.fn" | head -12
	fi

	# -lines and -pcs: each row of the fixture's code names a function
	# of -functions
	"$SONDE" print -printmode csv -lines "$fx.er" >"$fx.lines" 2>&1
	"$SONDE" print -printmode csv -pcs "$fx.er" >"$fx.pcs" 2>&1
	src=$(basename "$(ls "$TOP/tests/fixtures/names/" | grep -m1 "^${fx%%_*}\.")")
	for v in lines pcs; do
		r=$(awk -v src="$src" -v v=$v -v names="$fx.names" -v fx="$fx" "$CSVSPLIT"' BEGIN {
			while ((getline l < names) > 0) known[l] = 1
		} NR > 1 {
			csvsplit($0, c)
			ours = v == "lines" ? (substr(c[3], length(c[3]) - length(src)) == "/" src) : (c[3] == fx)
			if (!ours) next
			rows++
			if (c[2] == "" || !(c[2] in known)) { bad++; if (!ex) ex = $0 }
		} END { printf "%d %d %s\n", rows, bad, ex }' "$fx.$v")
		rows=${r%% *} rest=${r#* } nbad=${rest%% *} ex=${rest#* }
		if [ "${rows:-0}" -gt 0 ] && [ "${nbad:-1}" = 0 ]; then ok "$fx: -$v: all $rows rows of the fixture's code name a function of -functions"; else
			notok "$fx: -$v: $nbad of $rows rows of the fixture's code name no function of -functions (e.g. ${ex:-none})"; fi
	done

	# -calltree, -source, -disasm, and the exports
	"$SONDE" print -calltree "$fx.er" >"$fx.tree" 2>&1
	"$SONDE" export --format folded -o "$fx.folded" "$fx.er" 2>/dev/null
	"$SONDE" export --format speedscope -o "$fx.ss" "$fx.er" 2>/dev/null
	"$SONDE" export --format chrome -o "$fx.chrome" "$fx.er" 2>/dev/null
	"$SONDE" export --format pprof -o "$fx.pb.gz" "$fx.er" 2>/dev/null
	gzip -dc "$fx.pb.gz" >"$fx.pb" 2>/dev/null
	miss=
	for kv in "$@"; do
		want=${kv#*=}
		grep -qF -- "+-$want" "$fx.tree" || miss="$miss; not in -calltree: $want"
		grep -qF -- "$want" "$fx.folded" || miss="$miss; not in folded: $want"
		grep -qF -- "$(printf '%s' "$want" | sed 's/"/\\"/g')" "$fx.ss" || miss="$miss; not in speedscope: $want"
		grep -qF -- "$want" "$fx.chrome" || miss="$miss; not in chrome: $want"
		grep -qaF -- "$want" "$fx.pb" || miss="$miss; not in pprof: $want"
		"$SONDE" print -source "$want" "$fx.er" >"$fx.src" 2>&1 && grep -q "$src" "$fx.src" ||
			miss="$miss; -source '$want': $(head -c 200 "$fx.src")"
		# (an inlined function has no code of its own, and says so)
		"$SONDE" print -disasm "$want" "$fx.er" >"$fx.dis" 2>&1 || grep -q "is inlined" "$fx.dis" ||
			miss="$miss; -disasm '$want': $(head -c 200 "$fx.dis")"
	done
	if grep -q "<unknown>" "$fx.folded" "$fx.tree"; then miss="$miss; <unknown> in folded or -calltree"; fi
	if [ -z "$miss" ]; then ok "$fx: -calltree, -source, -disasm and the pprof, folded, speedscope and chrome exports name them as -functions does"; else
		notok "$fx:$miss"; fi
	return 0
}

# ---- Fortran -----------------------------------------------------------------
for fx in physics physics_noinline; do
	fixture $fx physics::relax physics::energy sim::step || continue
	has() { grep -qxF -- "$2" "$1"; }
	if has $fx.names physics::relax::sweep && has $fx.names sim && ! grep -q "_MOD_\|^MAIN__$\|^sweep\.\|^step\." $fx.names; then
		ok "$fx: the internal procedure under its host (physics::relax::sweep), the program by its name (sim), no linker's names"
	else notok "$fx: names: $(tr '\n' ';' <$fx.names)"; fi
	"$SONDE" print -name mangled -functions $fx.er >$fx.mangled 2>&1
	if grep -q "__physics_MOD_relax" $fx.mangled && grep -q "MAIN__" $fx.mangled; then
		ok "$fx: -name mangled shows the symbols (__physics_MOD_relax, MAIN__)"
	else notok "$fx: -name mangled: $(grep -c . $fx.mangled) lines, no __physics_MOD_relax or MAIN__"; fi
	if "$SONDE" print -fsingle __physics_MOD_energy $fx.er >$fx.fs 2>&1 && grep -q "physics::energy" $fx.fs; then
		ok "$fx: the symbol finds the procedure (-fsingle __physics_MOD_energy)"
	else notok "$fx: -fsingle __physics_MOD_energy: $(head -c 200 $fx.fs)"; fi
done
if [ -x "$N/physics" ]; then
	"$SONDE" print -functions physics.er | grep -q "_gfortran_\|libgfortran" ||
		note "(no sample in gfortran's runtime to check its names with)"
fi

# ---- Rust --------------------------------------------------------------------
E='<rnames::engine::Sim as rnames::engine::Model>::energy'
if fixture rnames_legacy step=rnames::engine::Sim::step "energy=$E" relax=rnames::engine::relax; then
	if grep -q '::h[0-9a-f]\{16\}$' rnames_legacy.names; then notok "rust legacy: a hash in the default names: $(grep -m1 '::h[0-9a-f]\{16\}$' rnames_legacy.names)"; else
		ok "rust legacy: no hash in the default names"; fi
	"$SONDE" print -name long -functions rnames_legacy.er >rl.long 2>&1
	if grep -q 'rnames::engine::Sim::step::h[0-9a-f]\{16\}' rl.long; then ok "rust legacy: -name long keeps the hash"; else
		notok "rust legacy: -name long: $(grep step rl.long | head -1)"; fi
	h=$(grep -o 'rnames::engine::relax::h[0-9a-f]\{16\}' rl.long | head -1)
	if [ -n "$h" ] && "$SONDE" print -fsingle "$h" rnames_legacy.er >rl.fs 2>&1 && "$SONDE" print -fsingle rnames::engine::relax rnames_legacy.er >rl.fs2 2>&1; then
		ok "rust legacy: found with and without its hash (-fsingle)"
	else notok "rust legacy: -fsingle '$h': $(head -c 200 rl.fs)"; fi
fi
if fixture rnames_v0 'step=<rnames::engine::Sim>::step' "energy=$E" 'relax=rnames::engine::relax::<f32>'; then
	if grep -q '^_R' rnames_v0.names; then notok "rust v0: symbols not demangled: $(grep -m1 '^_R' rnames_v0.names)"; else
		ok "rust v0: every symbol demangled"; fi
	"$SONDE" print -functions rnames_v0.er >rv.fn 2>&1
	if grep -q "std::rt::lang_start_internal" rv.fn || ! grep -q "lang_start" rv.fn; then :; else
		notok "rust v0: the standard library's names: $(grep lang_start rv.fn | head -1)"; fi
	"$SONDE" print -name long -functions rnames_v0.er >rv.long 2>&1
	if grep -q 'rnames\[[0-9a-f]*\]::engine' rv.long; then ok "rust v0: -name long keeps the crate disambiguator"; else
		notok "rust v0: -name long: $(grep engine rv.long | head -1)"; fi
fi

# ---- C++ ---------------------------------------------------------------------
L='physics::Grid<double>::lookup_burn(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, double)'
if fixture cxxnames "$L" 'main::{lambda(double)#1}::operator()(double) const' 'physics::may_throw(double, double)'; then
	"$SONDE" print -name short -functions cxxnames.er >cs.fn 2>&1
	longest=$(awk 'NR > 5 { $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); if (length($0) > m) { m = length($0); s = $0 } } END { print m }' cs.fn)
	if grep -q "physics::Grid<double>::lookup_burn$" cs.fn && grep -q "std::_Rb_tree<\.\.\.>::find$" cs.fn && [ "${longest:-999}" -le 100 ]; then
		ok "c++: -name short collapses long template argument lists (std::_Rb_tree<...>::find), keeps short ones (Grid<double>); longest row $longest characters"
	else notok "c++: -name short: longest $longest; $(grep -E 'find|lookup' cs.fn | head -3 | tr '\n' ';')"; fi
	"$SONDE" print -functions cxxnames.er >cl.fn 2>&1
	if grep -q "std::_Rb_tree<std::__cxx11::basic_string<char" cl.fn; then ok "c++: the default and -name long keep every template argument"; else
		notok "c++: the long name of the map's find: $(grep find cl.fn | head -1)"; fi
	if "$SONDE" print -name short -csingle 'std::_Rb_tree<...>::find' cxxnames.er >cs.cs 2>&1 &&
		"$SONDE" print -csingle 'physics::relax' cxxnames.er >cs.cs2 2>&1; then
		ok "c++: a function found by its short form (-csingle 'std::_Rb_tree<...>::find', 'physics::relax')"
	else notok "c++: -csingle by short name: $(head -c 200 cs.cs) $(head -c 200 cs.cs2)"; fi
fi

# ---- names that demangle to nothing, or are very long ---------------------------
# An 11 KiB C++ mangling (900 nested namespaces), a malformed one and a
# malformed Rust v0 one, each a function that burns 0.1 s: a readable row
# each in every view, export and the report, never a crash.
long=$(awk 'BEGIN { s = "_ZN"; for (i = 0; i < 900; i++) s = s sprintf("11segment%04d", i); print s "4burnEv" }')
cat >ln.c <<EOC
#include <stdio.h>
#include <time.h>
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
#define BURN(n, sym) __attribute__((noinline)) double n(void) __asm__(sym); \
	double n(void) { double t0 = cpu(), x = 1; while (cpu() - t0 < 0.1) for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9; return x; }
BURN(f_long, "$long")
BURN(f_bad, "_ZN999999segmentE_malformed")
BURN(f_rbad, "_RNvNtCs_bad")
int main(void) { printf("%g\n", f_long() + f_bad() + f_rbad()); return 0; }
EOC
if cc -O2 -o ln ln.c 2>ln.cc.err && "$SONDE" collect -o ln.er ./ln >/dev/null 2>&1; then
	bad=
	for v in functions lines pcs calltree; do
		"$SONDE" print -$v ln.er >ln.$v 2>&1 || bad="$bad -$v exit $?"
	done
	for n in long short mangled; do
		"$SONDE" print -name $n -functions ln.er >ln.fn.$n 2>&1 || bad="$bad -name $n exit $?"
	done
	grep -q "_ZN999999segmentE_malformed" ln.functions && grep -q "_RNvNtCs_bad" ln.functions &&
		grep -q "_ZN11segment0000" ln.functions || bad="$bad; rows: $(sed -n 6,9p ln.functions | cut -c1-80 | tr '\n' ';')"
	for f in folded speedscope chrome pprof; do
		"$SONDE" export --format $f -o ln.$f ln.er 2>/dev/null || bad="$bad export $f"
	done
	"$SONDE" report -o ln.html ln.er >/dev/null 2>&1 || bad="$bad report"
	if [ -z "$bad" ]; then ok "an 11 KiB mangling, a malformed C++ and a malformed Rust one: a row each, every view, export and the report exit 0"; else
		notok "long and malformed names:$bad"; fi
else
	notok "the long-names program: $(head -c 300 ln.cc.err)"
fi
