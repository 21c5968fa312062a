#!/bin/sh
# Clock profiling of page-fault-heavy code: the pagefaults fixture (2100
# fresh pages touched per repeat, PF_REPS repeats: 630,000 page faults at
# 300, nearly all of its CPU time in the kernel's fault path) and, for
# comparison, the burn fixture (a user-mode loop of about as much CPU),
# each plain, under `sonde collect -p hi` and under `perf record -F 1000
# -g`, interleaved round by round.  For each: the median CPU time, the
# ratio to its plain run, the cost per sample, and of that the part the
# collector measured in its own handler (the end event's handler_ns: from
# its read of the thread's CPU clock to its last write; the rest is the
# kernel's: the counter's interrupt, the signal's delivery and return).
#   BENCH_ROUNDS (5) rounds;  PF_REPS (300) repeats;  PF_BURN (1200) burn rounds.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
RUNCPU=$B/bench/runcpu
SONDE=$B/bin/sonde
PF=$B/fixtures/pagefaults
BURN=$B/fixtures/burn
ROUNDS=${BENCH_ROUNDS:-5}
REPS=${PF_REPS:-300}
BR=${PF_BURN:-1200}
mkdir -p $B/bench
cc -O2 -o $RUNCPU bench/runcpu.c || exit 1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

. bench/stats.sh
have_perf=0
perf record -q -o $W/probe.data -F 1000 -g true >/dev/null 2>&1 && have_perf=1

# end ATTR EXP: the end event's attribute
end() { grep -o "kind=\"end\"[^>]*" "$2/log.xml" | grep -o " $1=\"[0-9]*\"" | tr -dc 0-9; }

echo "== clock profiling of page faults: pagefaults $REPS ($((REPS * 2100)) faults) and burn 1 0 $BR, $ROUNDS rounds"
for w in pf burn; do : >$W/$w.plain; : >$W/$w.sonde; : >$W/$w.perf; : >$W/$w.n; : >$W/$w.h; : >$W/$w.pn; done
for r in $(seq $ROUNDS); do
	for w in pf burn; do
		if [ $w = pf ]; then cmd="$PF $REPS"; else cmd="$BURN 1 0 $BR"; fi
		$RUNCPU $cmd | awk '{print $2}' >>$W/$w.plain
		rm -rf $W/s.er
		$RUNCPU $SONDE collect -p hi -o s.er -d $W $cmd | awk '{print $2}' >>$W/$w.sonde
		n=$(end samples $W/s.er) ps=$(end pseudo_samples $W/s.er)
		echo $((n - ${ps:-0})) >>$W/$w.n
		end handler_ns $W/s.er >>$W/$w.h
		echo >>$W/$w.h
		if [ $have_perf = 1 ]; then
			$RUNCPU perf record -q -o $W/p.data -F 1000 -g $cmd | awk '{print $2}' >>$W/$w.perf
			perf script -i $W/p.data -F tid -G 2>/dev/null | wc -l >>$W/$w.pn
		fi
	done
done
for w in pf burn; do
	if [ $w = pf ]; then label="page faults"; else label="user loop"; fi
	plain=$(median <$W/$w.plain)
	s=$(median <$W/$w.sonde)
	n=$(median <$W/$w.n)
	h=$(grep . $W/$w.h | median)
	awk -v l="$label" -v p="$plain" -v s="$s" -v n="$n" -v h="$h" 'BEGIN {
		printf "  %-12s plain               cpu %.3f s\n", l, p
		printf "  %-12s sonde collect -p hi cpu %.3f s  ratio %.4f (%+.2f%%)  %d samples, %.1f us per sample, %.1f us of it in the handler\n",
			l, s, s / p, (s / p - 1) * 100, n, (s - p) * 1e6 / n, h / 1e3 / n }'
	# paired: the host's speed drifts between rounds (other guests)
	paste $W/$w.plain $W/$w.sonde | awk '{ print $2 / $1 }' | median | awk -v l="$label" '{
		printf "  %-12s paired: median of the per-round ratios sonde/plain %.4f (%+.2f%%)\n", l, $1, ($1 - 1) * 100 }'
	if [ $have_perf = 1 ]; then
		awk -v l="$label" -v p="$plain" -v s="$(median <$W/$w.perf)" -v n="$(median <$W/$w.pn)" 'BEGIN {
			printf "  %-12s perf record -F 1000 cpu %.3f s  ratio %.4f (%+.2f%%)", l, s, s / p, (s / p - 1) * 100
			if (n > 0) printf "  %d samples, %.1f us per sample", n, (s - p) * 1e6 / n
			printf "\n" }'
	fi
done
