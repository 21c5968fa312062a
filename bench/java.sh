#!/bin/sh
# The Java agent's cost (issue 31): bench/JBench.java (fixed work in two
# threads on two CPUs) plain, under `sonde collect -p hi -j off` (clock
# profiling of the JVM, native frames only) and `-j on` (the agent: Java
# frames at every sample, the method table), round by round.  Prints the
# median of the program's own wall time, the ratios, the median of each
# round's -j on run against its own -j off run (paired: the machine drifts
# between rounds), and the agent's cost per sample: the paired difference
# over the Java samples.  gprofng's Java profiling would be the peer, but
# Debian's gprofng is built without it, and async-profiler is not packaged.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
ROUNDS=${BENCH_JAVA_ROUNDS:-7}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. bench/stats.sh
echo "== Java agent: JBench (2 threads), plain vs -p hi -j off / -j on (median of $ROUNDS)"
if ! command -v javac >/dev/null || [ ! -f "$B/lib/sonde/libsonde_java.so" ]; then
	echo "  no JDK or no libsonde_java.so (scripts/deps.sh bench installs openjdk-17-jdk-headless)"
	exit 0
fi
cp bench/JBench.java "$W/" && (cd "$W" && javac JBench.java) || { echo "  javac failed"; exit 0; }
: >"$W/p"; : >"$W/off"; : >"$W/on"; : >"$W/n"; : >"$W/ha"; : >"$W/hb"
for r in $(seq 1 "$ROUNDS"); do
	java -cp "$W" JBench | awk '{ print $2 }' >>"$W/p"
	rm -rf "$W/a.er" "$W/b.er"
	"$SONDE" collect -p hi -j off -o "$W/a.er" java -cp "$W" JBench 2>/dev/null | awk '{ print $2 }' >>"$W/off"
	"$SONDE" collect -p hi -j on -o "$W/b.er" java -cp "$W" JBench 2>/dev/null | awk '{ print $2 }' >>"$W/on"
	sed -n 's/.*text="Java: \([0-9]*\) samples of Java threads.*/\1/p' "$W/b.er/log.xml" >>"$W/n"
	# the sampling handler's own CPU per sample (log.xml's end event)
	for e in a b; do
		sed -n 's/.*kind="end".* samples="\([0-9]*\)".* handler_ns="\([0-9]*\)".*/\1 \2/p' "$W/$e.er/log.xml" |
			awk '$1 > 0 { printf "%.2f\n", $2 / $1 / 1000 }' >>"$W/h$e"
	done
done
p=$(median <"$W/p") off=$(median <"$W/off") on=$(median <"$W/on") n=$(median <"$W/n")
paired=$(paste "$W/on" "$W/off" | awk '$2 > 0 { print $1 / $2 }' | median)
# the agent's CPU per Java sample: the paired wall difference times the
# two busy CPUs, over the samples
us=$(paste "$W/on" "$W/off" | awk '{ print $1 - $2 }' | median | awk -v n="$n" '{ printf "%.1f", (n > 0 ? $1 * 2 / n * 1e6 : 0) }')
printf "  plain %.3f s; -p hi -j off %.3f s (%s); -j on %.3f s (%s plain, %s against -j off; paired %s); %s Java samples, about %s us each\n" \
	"$p" "$off" "$(pct "$off" "$p")" "$on" "$(pct "$on" "$p")" "$(pct "$on" "$off")" "$(pct "$paired" 1)" "$n" "$us"
printf "  the sampling handler per sample: %s us with -j off, %s us with -j on (the Java walk included)\n" \
	"$(median <"$W/ha")" "$(median <"$W/hb")"
