# Shared helpers for the scenario tests (tests/t*.sh).  Each assertion
# prints "ok - what" or "not ok - what"; tests/run.sh counts them.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build
SONDE=$B/bin/sonde
FIX=$B/fixtures
EXPCHECK=$B/tests/tools/expcheck
# What a program linking libsonde.a (the fuzz targets) links too: the
# Makefile's LIBSONDE_LIBS, and capstone, which sonde loads at run time.
LIBSONDE_LIBS="-lm -ldw -lelf -lz -ldeflate -liberty -lcapstone"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sonde-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

# check DESCRIPTION COMMAND...: passes when COMMAND exits 0.
check() {
	desc=$1
	shift
	if "$@" >"$TMP/.out" 2>&1; then ok "$desc"; else
		notok "$desc"
		sed 's/^/#   /' "$TMP/.out" | head -20
	fi
}

# fails DESCRIPTION COMMAND...: passes when COMMAND exits non-zero.
fails() {
	desc=$1
	shift
	if "$@" >"$TMP/.out" 2>&1; then
		notok "$desc (exited 0)"
		sed 's/^/#   /' "$TMP/.out" | head -20
	else ok "$desc"; fi
}

# rc WANT DESC CMD...: CMD exits with status WANT (stdout in out.txt,
# stderr in err.txt, in the current directory).
rc() {
	want=$1 desc=$2
	shift 2
	"$@" >out.txt 2>err.txt
	got=$?
	if [ "$got" = "$want" ]; then ok "$desc"; else
		notok "$desc (exit $got, wanted $want)"
		sed 's/^/#   /' err.txt | head -10
	fi
}

# within A B PCT: |A-B| <= PCT% of B (floating point, via awk).
within() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'
}

# sym_range BINARY FUNC: "START:SIZE" of a symbol, for expcheck.
sym_range() {
	nm -S --defined-only "$1" | awk -v f="$2" '$4 == f && NF == 4 { print $1 ":" $2; exit }'
}

note() { echo "# $*"; }

# max_weight_ms EXP: the heaviest clock sample's weight in ms (the bound
# on a function's edge error: a sample at each end of it).
max_weight_ms() {
	"$SONDE" print -dump profile "$1" 2>/dev/null |
		awk '/^sample/ { for (i = 1; i < NF; i++) if ($i == "weight") { w = $(i + 1) + 0; if (w > m) m = w } } END { printf "%.3f", m }'
}

# eff_samples EXP: the effective number of clock samples, (sum w)^2 / sum w^2
# (Kish).  Equal weights give the sample count; a few heavy samples (a
# CPU timer checked only at the ticks that find the thread running, on a
# busy machine) count for as little as they tell, so a tolerance derived
# from it is as wide as the profile's real sampling error.
eff_samples() {
	"$SONDE" print -dump profile "$1" 2>/dev/null |
		awk '/^sample/ { for (i = 1; i < NF; i++) if ($i == "weight") { w = $(i + 1) + 0; s += w; q += w * w } }
			END { printf "%.0f", (q > 0 ? s * s / q : 0) }'
}
