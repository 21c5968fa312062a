#!/bin/sh
# Fuzzes the experiment reader (tests/fuzz/fuzz_reader.c), built with
# AddressSanitizer and UBSan (any error is fatal), on seed experiments:
# the synthetic ones of test_views (worked example, recursion, ms.er's
# microstates and off-CPU samples, ...) and test_frames (frames.er: native,
# kernel and Java frames in one stack, with kallsyms and the method table,
# which are fuzzed too) and test_mpi (mpi.er: MPI calls and messages) and test_omp (omp.er: OpenMP
# regions, nested, and tasks) and test_jscopes (jscopes.er: the Java
# agent's frames in compiled code, with jvm.inline and jvm.code, fuzzed
# too), a
# small multi-block one from bench/genexp, a real one from sonde collect,
# an MPI rank's (test_mpitimeline),
# and traced ones (sync, heap and I/O tracing on the traceviews,
# heapleaks, iofiles and syncwait fixtures).  Needs `make tests` first.
#
# Every input also carries, one time in two, a mutated sonde agg program
# (deep nesting, long chains, odd tokens), compiled for stdin and for the
# experiment's kinds; the slow source views (-lines, -pcs, -source,
# -disasm) run on one opened input in 20 (fuzz_reader -src N).  First it
# replays tests/fuzz/regress/*.bin, inputs that crashed it once.
#
#   tests/fuzz/run.sh [ITERATIONS [SEED]]     (default 50000, time-based seed)
#   FUZZ_PLAIN=1 FUZZ_ARGS='-sym 20 -modes 1' tests/fuzz/run.sh N
#       a long run: built without sanitizers (4 times the executions; a
#       crash, a hang or a failed invariant is still caught, a silent
#       memory error is not), with fuzz_reader's options FUZZ_ARGS (-sym 20:
#       the symbol layer on one input in 20; -modes 1: one print mode per
#       input, taking turns).  1 M executions took about 2 CPU-hours.
#   FUZZ_LIBFUZZER=1 FUZZ_SECONDS=N tests/fuzz/run.sh
#       also builds the libFuzzer target with clang and runs it N seconds
#       (default 60) on the same seeds, when clang has -fsanitize=fuzzer.
#
# Crashes, sanitizer reports and hangs are saved in build/fuzz/crashes/;
# replay one with build/fuzz/fuzz_reader -run FILE.
cd "$(dirname "$0")/../.." || exit 1
B=$(pwd)/build
OUT=$B/fuzz
N=${1:-50000}
SEED=${2:-$(date +%s)}
CC=${CC:-cc}
# the HTML report's page and script, made by the Makefile
make --no-print-directory build/gen/report_assets.c >/dev/null || exit 1
SRC="tests/fuzz/fuzz_reader.c lib/*/*.c build/gen/report_assets.c"
LIBS="-lm -ldw -lelf -lz -ldeflate -liberty -lcapstone"
mkdir -p "$OUT/seeds" "$OUT/crashes"

if [ -n "${FUZZ_PLAIN:-}" ]; then
	FUZZ=$OUT/fuzz_reader_plain
	# shellcheck disable=SC2086
	$CC -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Iinclude -Ilib $SRC -o "$FUZZ" $LIBS || exit 1
else
	FUZZ=$OUT/fuzz_reader
	# shellcheck disable=SC2086
	$CC -std=gnu11 -O1 -g -Wall -Wextra -Wno-unused-parameter -fsanitize=address,undefined \
		-fno-sanitize-recover=all -fno-omit-frame-pointer -Iinclude -Ilib $SRC -o "$FUZZ" $LIBS || exit 1
fi

if [ ! -d "$OUT/seeds/ms.er" ]; then # ms.er: microstates and off-CPU samples
	"$B/tests/test_views" --write "$OUT/seeds" || exit 1
fi
if [ ! -d "$OUT/seeds/frames.er" ]; then # native, kernel and Java frames; kallsyms, the method table
	"$B/tests/test_frames" --write "$OUT/seeds" || exit 1
fi
if [ ! -d "$OUT/seeds/jscopes.er" ]; then # the collector's frames in compiled Java code, jvm.inline, jvm.code
	"$B/tests/test_jscopes" --write "$OUT/seeds" >/dev/null || exit 1
fi
if [ ! -d "$OUT/seeds/mpi.er" ]; then # MPI calls and messages, every kind of peer, the job's settings
	"$B/tests/test_mpi" --write "$OUT/seeds" || exit 1
fi
if [ ! -d "$OUT/seeds/omp.er" ]; then # OpenMP regions, nested, a thread in two teams, tasks
	"$B/tests/test_omp" --write "$OUT/seeds" || exit 1
fi
if [ ! -d "$OUT/seeds/multi.er" ]; then
	$CC -std=gnu11 -O2 -Ilib -Iinclude -o "$OUT/genexp" bench/genexp.c "$B/libsonde.a" -lm &&
		"$OUT/genexp" "$OUT/seeds/multi.er" 3000 40 20 3 || exit 1
fi
if [ ! -d "$OUT/seeds/burn.er" ]; then
	"$B/bin/sonde" collect -p hi -o burn.er -d "$OUT/seeds" "$B/fixtures/burn" 2 0.3 >/dev/null 2>&1 ||
		echo "fuzz: no collected seed (sonde collect failed)"
fi
# A counters seed (-h): counter packets and their log.xml lines, with a profile.
if [ ! -d "$OUT/seeds/counters.er" ]; then
	"$B/bin/sonde" collect -p hi -h page-faults,10,context-switches,1 -o counters.er -d "$OUT/seeds" \
		"$B/fixtures/pagefaults" 1 30 >/dev/null 2>&1 || echo "fuzz: no counters seed (sonde collect failed)"
fi
if [ ! -d "$OUT/seeds/offcpu.er" ]; then # a real -w experiment: microstates, off-CPU samples
	"$B/bin/sonde" collect -p hi -w on -o offcpu.er -d "$OUT/seeds" "$B/fixtures/mstates" 0.05 >/dev/null 2>&1 ||
		echo "fuzz: no off-CPU seed (sonde collect failed)"
fi
# An MPI seed: rank 0 of test_mpitimeline's job (calls, messages, the
# job's log.xml lines), for the MPI kind's reader, its chrome flows and
# its report view (lib/kinds/mpi_timeline.c).
if [ ! -d "$OUT/seeds/mpirank.er" ]; then
	rm -rf "$OUT/mpijob" && "$B/tests/test_mpitimeline" --write "$OUT/mpijob" &&
		mv "$OUT/mpijob/M_r0.er" "$OUT/seeds/mpirank.er" || echo "fuzz: no MPI seed (test_mpitimeline failed)"
fi
# Traced seeds: every kind of trace, with a profile.
mkdir -p "$OUT/seeds/data"
for f in traceviews heapleaks iofiles syncwait; do
	[ -d "$OUT/seeds/$f.er" ] && continue
	"$B/bin/sonde" collect -p hi -s all -H on -i on -o "$f.er" -d "$OUT/seeds" "$B/fixtures/$f" "$OUT/seeds/data" \
		</dev/null >/dev/null 2>&1 || echo "fuzz: no traced seed from $f (sonde collect failed)"
done

echo "== regression inputs (tests/fuzz/regress)"
for f in tests/fuzz/regress/*.bin; do
	UBSAN_OPTIONS=print_stacktrace=1:abort_on_error=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		"$FUZZ" -run "$f" >/dev/null || { echo "fuzz: $f crashes"; exit 1; }
done
how="ASan + UBSan"
[ -n "${FUZZ_PLAIN:-}" ] && how="no sanitizers"
echo "== $(basename "$FUZZ") ($how): $N iterations, seed $SEED ${FUZZ_ARGS:-}"
# shellcheck disable=SC2086
UBSAN_OPTIONS=print_stacktrace=1:abort_on_error=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	"$FUZZ" -n "$N" -seed "$SEED" ${FUZZ_ARGS:-} -crashes "$OUT/crashes" "$OUT"/seeds/*.er
rc=$?

if [ -n "${FUZZ_LIBFUZZER:-}" ]; then
	if echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' >"$OUT/probe.c" &&
		clang -fsanitize=fuzzer "$OUT/probe.c" -o "$OUT/probe" 2>/dev/null; then
		# shellcheck disable=SC2086
		clang -std=gnu11 -O1 -g -fsanitize=fuzzer,address,undefined -DSONDE_LIBFUZZER -Iinclude -Ilib \
			$SRC -o "$OUT/fuzz_reader_lf" $LIBS || exit 1
		mkdir -p "$OUT/corpus"
		for e in "$OUT"/seeds/*.er; do
			"$FUZZ" -pack "$e" "$OUT/corpus/$(basename "$e").bin"
		done
		cp tests/fuzz/regress/*.bin "$OUT/corpus/" # inputs with agg programs
		echo "== libFuzzer: ${FUZZ_SECONDS:-60} s"
		"$OUT/fuzz_reader_lf" -max_total_time="${FUZZ_SECONDS:-60}" -max_len=200000 \
			-artifact_prefix="$OUT/crashes/" "$OUT/corpus" 2>&1 | tail -n 5
	else
		echo "== libFuzzer: clang with -fsanitize=fuzzer is not available"
	fi
fi
exit $rc
