#!/bin/sh
# bench/agg.sh: events per second of `sonde agg`, the whole command timed
# (start, reading, aggregating, printing), best of ROUNDS runs:
#
#   - a 10-million-line stdin stream (seq), quantize($1)
#   - the same lines as "key value" pairs, @[$1] = sum($2) (1000 keys)
#     and a predicate with arithmetic
#   - profile events of a synthetic experiment (AGG_SAMPLES samples over
#     2000 stacks, 8 threads): by func, by thread, quantize of the weight
#
# The target is 5 million events per second or more for each.  Usage:
#   sh bench/agg.sh            (after make; make bench runs it)
#   AGG_LINES=1000000 AGG_SAMPLES=500000 BENCH_ROUNDS=1 sh bench/agg.sh
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
SONDE=$B/bin/sonde
LINES=${AGG_LINES:-10000000}
SAMPLES=${AGG_SAMPLES:-4000000}
ROUNDS=${BENCH_ROUNDS:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

[ -x "$SONDE" ] && [ -f "$B/libsonde.a" ] || {
	echo "bench/agg.sh: build first (make)" >&2
	exit 1
}

# The input generator: "lines N" prints N "kNNN value" lines; "exp DIR N"
# writes a synthetic experiment of N profile samples.
cat >"$W/gen.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reader/expwriter.h"

static unsigned long long x = 88172645463325252ULL;
static unsigned long long rnd(void) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x; }

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[argc - 1]) : 0;

	if (argc == 3 && !strcmp(argv[1], "lines")) {
		static char buf[1 << 16];
		setvbuf(stdout, buf, _IOFBF, sizeof(buf));
		for (long i = 0; i < n; i++)
			printf("k%03llu %llu\n", rnd() % 1000, rnd() % 1000000);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "exp")) {
		char err[512];
		const unsigned long long T0 = 1000000000ULL, base = 0x400000;
		struct sonde_expw *w = sonde_expw_create(argv[2], err, sizeof(err));
		enum { NSTACKS = 2000, DEPTH = 24 };
		uint64_t pc[DEPTH];

		if (!w) { fprintf(stderr, "%s\n", err); return 1; }
		sonde_expw_log_preamble(w, 1000, T0);
		sonde_expw_object(w, 1, "/usr/bin/app", 0, base, base + 0x100000, T0);
		for (int s = 0; s < NSTACKS; s++) {
			int d = 4 + s % (DEPTH - 4);
			for (int f = 0; f < d; f++)
				pc[f] = base + 0x1000 + (rnd() % 600) * 0x100 + (f ? 5 : 0);
			pc[0] |= SONDE_PC_EXACT;
			sonde_expw_stack(w, 0x1000 + s, 0, (uint16_t)d, pc);
		}
		for (long i = 0; i < n; i++) {
			unsigned long long r = rnd();
			/* a skewed popularity: a few hot stacks */
			unsigned s = (unsigned)((r % NSTACKS) * (r % NSTACKS) / NSTACKS);
			sonde_expw_sample(w, 1000 + (uint32_t)(i % 8), (uint16_t)(r >> 40) % 2,
					  T0 + (unsigned long long)i * 1000000ULL, 1000000 + (r >> 50),
					  0x1000 + s);
		}
		sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n",
			       T0 + (unsigned long long)n * 1000000ULL);
		if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) { fprintf(stderr, "%s\n", err); return 1; }
		return 0;
	}
	fprintf(stderr, "usage: gen lines N | gen exp DIR N\n");
	return 2;
}
EOF
cc -O2 -Iinclude -Ilib -o "$W/gen" "$W/gen.c" "$B/libsonde.a" -lm || exit 1

now() { date +%s.%N; }

# bench NAME EVENTS INPUT_FILE|- SONDE_ARGS...: best time of ROUNDS runs
bench() {
	name=$1
	events=$2
	input=$3
	shift 3
	best=
	for r in $(seq 1 "$ROUNDS"); do
		t0=$(now)
		if [ "$input" = - ]; then
			"$SONDE" agg "$@" >"$W/out" 2>"$W/err" </dev/null
		else
			"$SONDE" agg "$@" <"$input" >"$W/out" 2>"$W/err"
		fi
		rc=$?
		t1=$(now)
		if [ $rc != 0 ]; then
			echo "bench/agg.sh: '$name' failed (exit $rc):" >&2
			cat "$W/err" >&2
			return 1
		fi
		t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
		best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
	done
	awk -v n="$name" -v e="$events" -v t="$best" 'BEGIN {
		r = e / t
		printf "  %-52s %9d events %7.3f s %7.1f M events/s%s\n", n, e, t, r / 1e6,
			r < 5e6 ? "  BELOW THE 5 M/s TARGET" : ""
	}'
}

echo "== sonde agg: events per second, best of $ROUNDS runs"
seq 1 "$LINES" >"$W/seq.txt"
"$W/gen" lines "$LINES" >"$W/kv.txt"
"$W/gen" exp "$W/x.er" "$SAMPLES" || exit 1

bench "stdin: @ = quantize(\$1)" "$LINES" "$W/seq.txt" 'stdin { @ = quantize($1); }'
bench "stdin: @[\$1] = sum(\$2), 1000 keys" "$LINES" "$W/kv.txt" 'stdin { @[$1] = sum($2); }'
bench "stdin: /\$2 % 2 == 0/ @[\$1] = avg(\$2 / 10)" "$LINES" "$W/kv.txt" \
	'stdin /$2 % 2 == 0/ { @[$1] = avg($2 / 10); }'
bench "profile: @[func] = count()" "$SAMPLES" - 'profile { @[func] = count(); }' "$W/x.er"
bench "profile: @[thread, caller] = sum(weight)" "$SAMPLES" - \
	'profile { @[thread, caller] = sum(weight); }' "$W/x.er"
bench "profile: @[object] = quantize(weight)" "$SAMPLES" - \
	'profile { @[object] = quantize(weight); }' "$W/x.er"
