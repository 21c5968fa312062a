#!/bin/sh
# Scale of reading a heap trace (issue 15 item 12): a heap-traced run of
# bench/heapbench.c with READ_MILLIONS (default 8) million malloc/free
# pairs, then `sonde print -header` and `-heapstat` on it (best wall time
# of READ_ROUNDS runs, user CPU and maximum resident set from
# /usr/bin/time), against the targets of under 1 s and 200 MB; then
# -header of the same kind of experiment whose heaptrace is extended to
# 8 GiB by a hole (truncate), as a size-limited or preallocated file is.
# With SONDE_OLD=path, the same measurements of another sonde binary
# (the one before a change) for comparison.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
HB=$B/bench/heapbench
SONDE=$B/bin/sonde
MILLIONS=${READ_MILLIONS:-8}
ROUNDS=${READ_ROUNDS:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$B/bench"
cc -O2 -o "$HB" bench/heapbench.c || exit 1
if [ ! -x /usr/bin/time ]; then
	echo "== sonde print on a heap trace: /usr/bin/time is not installed; no measurement"
	exit 0
fi

# best wall of ROUNDS runs with its user CPU and RSS: "wall user rss_kb"
measure() {
	for r in $(seq 1 "$ROUNDS"); do
		/usr/bin/time -f "%e %U %M" -o "$W/t" "$@" >/dev/null 2>&1 || { echo "fail"; return; }
		cat "$W/t"
	done | sort -n | head -n 1
}

"$SONDE" collect -p hi -H on -o h.er -d "$W" "$HB" "$MILLIONS" >/dev/null 2>&1 || exit 1
size=$(stat -c %s "$W/h.er/heaptrace")
echo "== sonde print on a heap trace: heapbench $MILLIONS million malloc/free pairs, heaptrace $((size / 1048576)) MiB; best of $ROUNDS"
for bin in "$SONDE" ${SONDE_OLD:-}; do
	tag=""
	[ "$bin" != "$SONDE" ] && tag=" (SONDE_OLD)"
	for v in -header -heapstat; do
		measure "$bin" print "$v" "$W/h.er" | awk -v v="$v" -v t="$tag" '{
			ok = ($1 < 1.0 && $3 < 204800) ? "ok" : "OVER THE TARGET"
			printf "  sonde print %-9s %6.2f s wall  %5.2f s user  %7.1f MiB  (target 1 s, 200 MB: %s)%s\n", v, $1, $2, $3 / 1024, ok, t }'
	done
done
rm -rf "$W/h.er"

"$SONDE" collect -p hi -H on -o s.er -d "$W" "$HB" 0.1 >/dev/null 2>&1 || exit 1
truncate -s 8G "$W/s.er/heaptrace"
echo "== sonde print -header with an 8 GiB sparse heaptrace (a hole after 1 MiB of data)"
for bin in "$SONDE" ${SONDE_OLD:-}; do
	tag=""
	[ "$bin" != "$SONDE" ] && tag=" (SONDE_OLD)"
	# one round: a reader that reads the hole fills the page cache with it
	/usr/bin/time -f "%e %U %M" -o "$W/t" "$bin" print -header "$W/s.er" >/dev/null 2>&1
	awk -v t="$tag" '{ printf "  sonde print -header  %6.2f s wall  %5.2f s user  %7.1f MiB%s\n", $1, $2, $3 / 1024, t }' "$W/t"
	# a fresh copy of the file for the next binary (no cached zero pages)
	cp --sparse=always "$W/s.er/heaptrace" "$W/ht" && mv "$W/ht" "$W/s.er/heaptrace"
done
