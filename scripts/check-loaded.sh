#!/bin/sh
# Runs `make check` N times (default 5) on a fresh clone of this repository's
# HEAD while one CPU hog per CPU runs, to catch tests that depend on timing
# luck.  Prints each run's summary line and the failed assertions; exits
# non-zero if any run failed.
#   sh scripts/check-loaded.sh [N]
#   HOG='command' sh scripts/check-loaded.sh [N]
n=${1:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/sonde-loaded.XXXXXX")
# Reachable by the other users that some tests run the build as.
chmod 755 "$work"
git clone -q "$top" "$work/sonde" || exit 1
# HOG: a command to run as each CPU's hog instead of a busy loop (for
# example a long fuzz run, so that the loaded runs' CPU does work too);
# it is started again when it ends, and gets the CPU's number in $HOG_N.
hogs=""
for i in $(seq 1 "$(nproc)"); do
	if [ -n "${HOG:-}" ]; then
		HOG_N=$i setsid sh -c "while :; do $HOG; done" &
	else
		setsid sh -c 'while :; do :; done' &
	fi
	hogs="$hogs $!"
done
# Each hog is a process group of its own (setsid): its command goes too.
trap 'for h in $hogs; do kill -- -"$h" 2>/dev/null; done' EXIT INT TERM
failed=0
for r in $(seq 1 "$n"); do
	start=$(date +%s)
	(cd "$work/sonde" && make check) >"$work/run$r.log" 2>&1
	rc=$?
	echo "run $r: exit $rc, $(( $(date +%s) - start )) s, $(tail -n 1 "$work/run$r.log")"
	grep '^not ok' "$work/run$r.log" | sed 's/^/    /'
	[ $rc = 0 ] || failed=$((failed + 1))
done
echo "$failed of $n runs failed (logs in $work)"
[ $failed = 0 ]
