#!/bin/sh
# Fuzzes what sonde print reads from a program's DWARF beside its line
# table: the call sites that restore tail-call frames
# (lib/symbols/srcinfo.c, tailcall.c).  The tailcall fixture is recorded
# once; then, N times, a copy of it gets random bytes written into one to
# three of its .debug_* sections (its build id unchanged, so sonde reads
# it) and sonde print, built with AddressSanitizer and UBSan into
# build-asan/, runs -calltree, -callers-callees, -statistics and -dump
# stacks on the experiment.  Any sanitizer report or a crash (exit status
# above 2) is kept in build/fuzz/dwarf/ with the binary that caused it.
# libdw's own leaks on damaged DWARF are not reported (detect_leaks=0).
# With COMPRESSED=1 the fixture's debug sections are first compressed
# (objcopy --compress-debug-sections=zlib, as Debian's debug packages
# are), so that the bytes damaged are zlib streams, which
# lib/symbols/plaindebug.c inflates; each iteration then alternates
# between a cache directory and none (SONDE_CACHE_DIR=off).
#
#   [COMPRESSED=1] tests/fuzz/dwarf.sh [ITERATIONS [SEED]]     (default 200, time-based seed)
cd "$(dirname "$0")/../.." || exit 1
N=${1:-200}
SEED=${2:-$(date +%s)}
COMPRESSED=${COMPRESSED:-0}
A=build-asan
OUT=$(pwd)/build/fuzz/dwarf
make --no-print-directory -j2 B=$A ASAN=1 $A/bin/sonde $A/lib/sonde/libsonde_collector.so >/dev/null || exit 1
make --no-print-directory build/fixtures/tailcall >/dev/null || exit 1
W=$(mktemp -d "${TMPDIR:-/tmp}/sonde-dwarf.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT" "$W/bin"
cp build/fixtures/tailcall build/fixtures/libtailcall_lib.so "$W/bin/" || exit 1
if [ "$COMPRESSED" = 1 ]; then
	objcopy --compress-debug-sections=zlib "$W/bin/tailcall" || exit 1
fi
cp "$W/bin/tailcall" "$W/orig"
build/bin/sonde collect -o "$W/t.er" -p hi "$W/bin/tailcall" 0.05 >/dev/null 2>&1 || { echo "collect failed"; exit 1; }
readelf -SW "$W/orig" | sed 's/\[ */[/' | awk '$2 ~ /^\.debug_/ { print $2, $5, $6 }' >"$W/secs"
[ -s "$W/secs" ] || { echo "the fixture has no .debug_ sections"; exit 1; }
echo "seed $SEED, $N iterations, sections: $(awk '{ printf "%s ", $1 }' "$W/secs")"
bad=0
i=0
while [ $i -lt $N ]; do
	cp "$W/orig" "$W/bin/tailcall"
	# one to three sections, 1 to 500 bytes each: "offset value" lines
	awk -v seed=$((SEED + i)) 'BEGIN { srand(seed) } { s[NR] = $0 } END {
		k = 1 + int(rand() * 3)
		for (j = 0; j < k; j++) {
			split(s[1 + int(rand() * NR)], f, " ")
			off = 0; size = 0
			for (c = 1; c <= length(f[2]); c++) off = off * 16 + index("0123456789abcdef", substr(f[2], c, 1)) - 1
			for (c = 1; c <= length(f[3]); c++) size = size * 16 + index("0123456789abcdef", substr(f[3], c, 1)) - 1
			m = rand() < 0.5 ? 1 + int(rand() * 5) : 1 + int(rand() * 500)
			for (b = 0; b < m; b++) print off + int(rand() * size), int(rand() * 256)
		}
	}' "$W/secs" | while read -r off val; do
		printf "$(printf '\\%03o' "$val")" | dd of="$W/bin/tailcall" bs=1 seek="$off" conv=notrunc 2>/dev/null
	done
	cache=off
	[ $((i % 2)) = 1 ] && cache=$W/cache
	SONDE_CACHE_DIR=$cache ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
		$A/bin/sonde print -calltree -callers-callees -statistics -dump stacks "$W/t.er" >/dev/null 2>"$W/err"
	rc=$?
	if [ $rc -gt 2 ] || grep -q 'ERROR: AddressSanitizer\|runtime error' "$W/err"; then
		bad=$((bad + 1))
		cp "$W/bin/tailcall" "$OUT/tailcall.$((SEED + i))"
		cp "$W/err" "$OUT/err.$((SEED + i))"
		echo "iteration $i (seed $((SEED + i))): exit $rc, kept in $OUT"
	fi
	i=$((i + 1))
done
echo "$bad of $N damaged binaries made sonde print fail"
[ $bad = 0 ]
