# What the benchmarks of sonde print, export and report share (sourced):
# B, SONDE, a scratch directory W (removed at exit), bench/genexp.c built
# (it writes large synthetic experiments), and measure CMD...: the best
# wall time of ROUNDS runs of CMD with its resident size, "wall_s rss_kb"
# ("fail" when a run fails; its stderr on ours).  NAME is what the caller
# measures, for the line said when /usr/bin/time is missing (then the
# caller exits 0: no measurement).
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

mkdir -p "$B/bench"
cc -std=gnu11 -O2 -Ilib -Iinclude -o "$B/bench/genexp" bench/genexp.c "$B/libsonde.a" -lm || exit 1
if [ ! -x /usr/bin/time ]; then
	echo "== $NAME: /usr/bin/time is not installed; no measurement"
	exit 0
fi

measure() {
	for r in $(seq 1 "$ROUNDS"); do
		/usr/bin/time -f "%e %M" -o "$W/t" "$@" >/dev/null 2>"$W/err" || {
			echo "fail"
			sed 's/^/  # /' "$W/err" >&2
			return
		}
		cat "$W/t"
	done | sort -n | head -n 1
}
