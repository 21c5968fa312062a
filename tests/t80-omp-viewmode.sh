#!/bin/sh
# -viewmode user|expert|machine on OpenMP programs (lib/model/shape.h,
# shape_omp.c, the profile builder): tests/fixtures/omp/ompstates.c built
# by gcc (libgomp) and clang (libomp), with 2 and 4 threads, and Debian's
# ImageMagick (a real OpenMP program nobody here wrote):
#   - user mode: 100% of the imbalance region's work samples (the first
#     region; each thread's samples in its part of it, -dump omp; state
#     omp-work) are under main,
#     which opened it, called from _start (workers' stacks continued in the
#     opener's); in machine mode the workers' part of them is not (their
#     stacks start in the runtime's thread): the check can fail;
#   - user mode shows nothing of the runtime and no outlined body
#     (-objects, speedscope's table of every function, the folded export
#     of Total Thread Time: -w on, the waits that sleep are off-CPU
#     samples in their OpenMP state);
#   - expert mode: the runtime's frames are on the stacks of the OpenMP
#     wait time (all but 1% or 2 ms), no <OMP-...>; machine mode: the recorded stacks (the
#     outlined functions, the workers' roots in the runtime);
#   - convert-im6.q16 -resize under sonde collect: its output and exit
#     status, OpenMP states and regions recorded, and in user mode its
#     worker's OpenMP work under ResizeImage (in machine mode: not).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

P="_start;__libc_start_main;__libc_start_call_main;main"
# the runtimes' frames by name (folded has no objects): their internals,
# and the API's lock calls, in which a long wait's end is recorded when
# the call has returned (collector/omp.c, wait_done)
RTPAT='libgomp|libomp|GOMP_|gomp_|__kmp|omp_set_lock|omp_set_nest_lock'

# folded MODE METRIC EXP [ARGS]: the folded export, lines with a value
folded() {
	m=$1 metric=$2 e=$3
	shift 3
	"$SONDE" export --format folded -metric "$metric" -viewmode "$m" "$@" "$e" 2>/dev/null | awk '$NF > 0'
}

compilers=gcc
[ -x "$FIX/ompstates_clang" ] && compilers="gcc clang" ||
	notok "clang with libomp is installed (scripts/deps.sh check: clang, libomp-dev): the libomp fixture is not built"
[ -x "$FIX/ompstates_gcc" ] || {
	notok "the gcc OpenMP fixture is built (make tests)"
	exit 0
}
for cc in $compilers; do
	for nt in 2 4; do
		name="$cc, $nt threads"
		e=$cc$nt.er
		rm -rf $e
		# -w on: with 4 threads on 2 CPUs the waits sleep (off CPU)
		OMP_WAIT_POLICY=active "$SONDE" collect -p hi -w on -o $e "$FIX/ompstates_$cc" $nt 20 1 >$e.out 2>$e.err
		# the imbalance region (the first): each thread's part of it,
		# "TID START-END" in seconds since the start (-time's)
		"$SONDE" print -dump omp $e 2>/dev/null | awk '/^omp region / { r = $3; for (i = 1; i < NF; i++) if ($i == "time") t = $(i + 1) }
			r == 0 && $1 == "thread" { for (i = 1; i < NF; i++) { if ($i == "tid") tid = $(i + 1); if ($i == "begin") b = $(i + 1); if ($i == "end") n = $(i + 1) }
				printf "%s %.6f-%.6f\n", tid, t + b / 1e9 + 1e-6, t + n / 1e9 - 1e-6 }' >parts.txt
		[ -s parts.txt ] || {
			notok "$name: no region recorded (-dump omp)"
			continue
		}
		"$SONDE" print -threads $e 2>/dev/null | sed -n 's/.*Thread \([0-9]*\) (tid \([0-9]*\)).*/\2 \1/p' >tnum.txt
		under=0 out=0 mworker=0 first=1
		while read -r tid win; do
			n=$(awk -v t="$tid" '$1 == t { print $2 }' tnum.txt)
			[ -n "$n" ] || continue
			# (<Collector>: the handler's time, in the state of
			# the thread it interrupted, the collector's own)
			set -- $(folded user ompwork $e -thread_select "$n" -time "$win" | awk -v p="$P" 'index($0, "<Collector> ") == 1 { next }
				{ if (index($0, p ";") == 1 || index($0, p " ") == 1) a += $NF; else b += $NF }
				END { printf "%d %d\n", a, b }')
			under=$((under + $1)) out=$((out + $2))
			# the workers' (not the master's, the first part) in machine mode
			[ $first = 1 ] || mworker=$((mworker + $(folded machine ompwork $e -thread_select "$n" -time "$win" | awk '/^clone/ { w += $NF } END { printf "%d\n", w }')))
			first=0
		done <parts.txt
		note "$name: imbalance region, each thread's part ($(awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $2 }' parts.txt) s): user mode $((under / 1000000)) ms of work under main, $out ns elsewhere; machine mode: workers' $((mworker / 1000000)) ms rooted in their thread's start"
		[ "$out" = 0 ] && [ "$under" -gt 0 ] && [ "$mworker" -gt 0 ] &&
			ok "$name, user mode: 100% of the imbalance region's work is under main, the workers' included" ||
			notok "$name, user mode: $out ns of the imbalance region's work is not under main (machine mode's workers: $((mworker / 1000000)) ms)"

		"$SONDE" print -viewmode user -objects $e >uo.txt 2>&1
		folded user total $e >uf.txt
		# speedscope's frame table lists every function of the model
		"$SONDE" export --format speedscope -viewmode user -o us.json $e 2>/dev/null
		if grep -Eq "libgomp|libomp" uo.txt || grep -Eq "$RTPAT" uf.txt || grep -Eq "$RTPAT|_omp_fn\.|\.omp_outlined" us.json; then
			notok "$name, user mode: a frame of the runtime or an outlined body shows: $(grep -Eho "$RTPAT|_omp_fn\.|\.omp_outlined" uo.txt uf.txt us.json | sort -u | head -3 | tr '\n' ' ')"
		elif grep -q "<OMP-" uf.txt; then
			ok "$name, user mode: no frame of the runtime, its time as <OMP-...> ($(grep -o '<OMP-[a-z_]*>' uf.txt | sort -u | tr '\n' ' '))"
		else
			notok "$name, user mode: no <OMP-...> pseudo-function at all"
		fi

		folded expert ompwait $e | awk -v pat="$RTPAT" 'index($0, "<Collector> ") == 1 { next } { t += $NF; if ($0 ~ pat) r += $NF }
			END { printf "%d %d\n", t, r }' >x.sum
		read -r wt wr <x.sum
		note "$name, expert mode: OpenMP wait $((wt / 1000000)) ms, $((wr / 1000000)) ms of it with the runtime's frames"
		# a stray sample or two whose state lags its stack: 1%, or 2 ms
		slack=$((wt / 100))
		[ $slack -lt 2000000 ] && slack=2000000
		[ "$wt" -gt 0 ] && [ "$((wt - wr))" -le "$slack" ] &&
			! folded expert total $e | grep -q "<OMP-" &&
			ok "$name, expert mode: the runtime's frames where the waits are" ||
			notok "$name, expert mode: the runtime's frames hold $((wr / 1000000)) of $((wt / 1000000)) ms of wait"

		folded machine total $e >mf.txt
		if grep -Eq "_omp_fn\.|\.omp_outlined\." mf.txt && grep -q "^clone" mf.txt && ! grep -q "<OMP-" mf.txt; then
			ok "$name, machine mode: the stacks as recorded (outlined functions, workers rooted in their thread)"
		else
			notok "$name, machine mode: not the recorded stacks"
		fi
	done
done

# The report holds the three modes and its View mode menu switches them:
# each shows what sonde print -viewmode shows (in headless Chromium).
CHROMIUM=${SONDE_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ] || [ ! -d "$TOP/tests/browser/node_modules/playwright-core" ] || ! command -v node >/dev/null; then
	notok "the report's view modes: the browser test needs chromium, node and tests/browser/node_modules"
else
	e=gcc4.er
	for m in user expert machine; do
		"$SONDE" print -printmode json -viewmode $m -functions $e >fn-$m.json 2>/dev/null
	done
	rc 0 "sonde report -viewmode expert of an OpenMP program" "$SONDE" report -viewmode expert -o omp.html $e
	printf '{"report":"%s","viewmodes":{"first":"expert","user":"%s","expert":"%s","machine":"%s"}}\n' \
		"$TMP/omp.html" "$TMP/fn-user.json" "$TMP/fn-expert.json" "$TMP/fn-machine.json" >spec.json
	(cd "$TOP/tests/browser" && node check-report.js "$TMP/spec.json") >drv.txt 2>&1
	cat drv.txt
	grep -q '^ok - no console error' drv.txt || notok "the browser check of the OpenMP report ended early"
	[ "$(grep -o 'id="sonde-data[-a-z]*"' omp.html | sort | tr '\n' ' ')" = 'id="sonde-data" id="sonde-data-machine" id="sonde-data-user" ' ] && ok "the OpenMP report holds a document per mode" ||
		notok "the OpenMP report holds $(grep -o 'id="sonde-data[-a-z]*"' omp.html | tr '\n' ' ')"
fi

# Debian's ImageMagick: -resize runs in OpenMP regions (libgomp) when the
# result is at least 8192 columns wide (ImageMagick's own threshold).
C=$(command -v convert-im6.q16)
if [ -z "$C" ]; then
	notok "ImageMagick is installed (scripts/deps.sh check: imagemagick)"
	exit 0
fi
"$C" -size 16000x600 gradient:red-blue wide.png
OMP_NUM_THREADS=2 "$C" wide.png -resize 60% plain.png
rc0=$?
rm -rf im.er
OMP_NUM_THREADS=2 "$SONDE" collect -p hi -o im.er "$C" wide.png -resize 60% out.png >im.out 2>im.err
rc=$?
sig() { identify-im6.q16 -format '%w %h %#' "$1" 2>/dev/null; }
if [ $rc = $rc0 ] && [ -s out.png ] && [ "$(sig out.png)" = "$(sig plain.png)" ] && [ ! -s im.err ]; then
	ok "convert -resize under sonde collect: exit status $rc, the same image ($(sig out.png | cut -d' ' -f1-2)), nothing on stderr"
else
	notok "convert -resize under sonde collect: exit $rc (plain $rc0), image '$(sig out.png)' vs '$(sig plain.png)', stderr: $(head -c 300 im.err)"
fi
regions=$("$SONDE" print -dump omp im.er 2>/dev/null | grep -c "^omp region .*threads 2 ")
states=$("$SONDE" print -dump profile im.er 2>/dev/null | grep -c "state omp-")
[ "$regions" -gt 0 ] && [ "$states" -gt 0 ] &&
	ok "convert: $regions OpenMP regions of 2 threads, $states samples in OpenMP states" ||
	notok "convert: $regions regions of 2 threads, $states samples in OpenMP states"
# its worker (thread 2): its OpenMP work under ResizeImage in user mode
folded user ompwork im.er -thread_select 2 | awk '{ if ($0 ~ /;ResizeImage;/) a += $NF; else b += $NF } END { printf "%d %d\n", a, b }' >iu.sum
folded machine ompwork im.er -thread_select 2 | awk '{ if ($0 ~ /;ResizeImage;/) a += $NF; else b += $NF } END { printf "%d %d\n", a, b }' >im.sum
read -r ua ub <iu.sum
read -r ma mb <im.sum
note "convert's worker: user mode $((ua / 1000000)) ms of OpenMP work under ResizeImage, $((ub / 1000000)) ms elsewhere; machine mode $((ma / 1000000)) ms under it, $((mb / 1000000)) ms elsewhere"
[ "$ua" -gt 0 ] && [ "$ub" = 0 ] && [ "$ma" = 0 ] &&
	ok "convert, user mode: all of its worker's OpenMP work is under ResizeImage (none in machine mode)" ||
	notok "convert, user mode: its worker's work under ResizeImage $((ua / 1000000)) ms, elsewhere $((ub / 1000000)) ms"
