#!/bin/sh
# Runs every test: unit test programs (build/tests/test_*) and scenario
# scripts (tests/t*.sh).  Ends with "N passed, N failed"; exits non-zero if
# anything failed.
cd "$(dirname "$0")/.." || exit 1
# sonde print's copies of compressed debug files (lib/symbols/plaindebug.h)
# go to the build tree, not the user's cache; the tests that are about the
# cache set their own.
SONDE_CACHE_DIR=$(pwd)/build/test-cache
export SONDE_CACHE_DIR
pass=0
fail=0
log=$(mktemp)
for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	echo "== $t"
	"$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	p=$(echo "$line" | awk '{print $1}')
	f=$(echo "$line" | awk '{print $3}')
	[ -n "$p" ] || { p=0; f=1; echo "not ok - $t printed no summary"; }
	[ "$rc" = 0 ] || [ "$f" != 0 ] || { f=1; echo "not ok - $t exited $rc"; }
	pass=$((pass + p))
	fail=$((fail + f))
done
for t in tests/t*.sh; do
	[ -f "$t" ] || continue
	echo "== $t"
	start=$(date +%s)
	bash "$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(grep -c '^ok - ' "$log")
	f=$(grep -c '^not ok - ' "$log")
	if [ "$rc" != 0 ]; then
		echo "not ok - $t exited $rc"
		f=$((f + 1))
	fi
	echo "# $t: $(( $(date +%s) - start )) s"
	pass=$((pass + p))
	fail=$((fail + f))
done
rm -f "$log"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
