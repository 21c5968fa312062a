# sonde export (doc/sonde-export.md): every format read by a real reader
# that nobody here wrote, with the totals of sonde print exactly:
#
#   pprof       go tool pprof (Debian golang-go): -top -unit=ns shows the
#               same top functions with the same exclusive times as sonde
#               print -functions, and the same total to the nanosecond;
#               -raw's samples add up to <Total>; the heap-only, traced and
#               descendants' experiments the same for their metrics;
#   speedscope  speedscope (npm, tests/browser) in headless Chromium (Debian
#   folded      chromium) imports the speedscope, folded and chrome files
#   chrome      without an error and shows the expected functions;
#   chrome      tests/browser/validate-trace.mjs checks the Trace Event
#               Format's required fields per phase and the nesting, and
#               the outermost cpu events last the recorded CPU time.
#
# Fixtures: test_mpitimeline's job of 4 MPI ranks (processes, flows),
# burn (2 threads, known functions; and stripped, its functions named for
# their addresses), traceviews (heap, I/O and sync
# of known size: 3 leaks, 9000 bytes; 1600 bytes written), procs (descendants),
# a target killed with SIGKILL, an empty run, and test_export's synthetic
# experiment whose functions are named with '<', '&', '"', ';', a control
# character and bytes that are not UTF-8, and its experiment of frames of
# every kind (native, kernel and Java frames in one stack: each named, in
# its load object, by pprof, speedscope and the trace validator as sonde
# print names it), and its variant with samples in the tests' build's extra
# thread state (test_frames --write-state, exported by build/teststates:
# the state's metric per function in pprof, per stack in folded, its
# profile in speedscope, its counter in chrome).  Errors: an unknown format, a
# missing experiment, an unwritable -o, a metric not recorded.
#
# The readers are installed by `make check` (scripts/deps.sh check); a
# reader that is missing is a failure (its checks cannot run).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
BR=$TOP/tests/browser
export GOFLAGS=-mod=mod GOTELEMETRY=off GOCACHE="$TMP/gocache"

have_go=0
command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1 && have_go=1
have_browser=0
[ -x /usr/bin/chromium ] && command -v node >/dev/null 2>&1 && [ -d "$BR/node_modules/speedscope" ] &&
	[ -d "$BR/node_modules/playwright-core" ] && have_browser=1
have_node=0
command -v node >/dev/null 2>&1 && have_node=1
[ $have_go = 1 ] || notok "go tool pprof missing (Debian golang-go; sh scripts/deps.sh check installs it): pprof's reader checks cannot run"
[ $have_browser = 1 ] || notok "chromium, node or tests/browser/node_modules missing (sh scripts/deps.sh check installs them): speedscope checks cannot run"

# ---- the experiments ------------------------------------------------------------

check "burn collected (-p hi, 2 threads)" "$SONDE" collect -p hi -o b.er "$FIX/burn" 2 1
mkdir -p d
check "traceviews collected (heap only, -p off -H on)" "$SONDE" collect -p off -H on -o h.er "$FIX/traceviews" d
check "traceviews collected (-p on -H on -i on -s all)" "$SONDE" collect -p on -H on -i on -s all -o t.er "$FIX/traceviews" d
check "procs collected (descendants)" "$SONDE" collect -p hi -o p.er "$FIX/procs" "$TMP/truth" 0.1
# burn stripped: its functions are named for their addresses
# ("<static>@0x1c2 (burn)"), which pprof shortens unless told the name is
# no C++ name
strip -o sburn "$FIX/burn"
check "stripped burn collected (-p hi, 2 threads)" "$SONDE" collect -p hi -o s.er ./sburn 2 1
check "an empty run collected (true)" "$SONDE" collect -p on -o e.er /bin/true
check "test_export wrote the odd names' and the frames' experiments" "$B/tests/test_export" --write "$TMP"
# a target killed with SIGKILL in the middle of its run
"$SONDE" collect -p hi -o k.er "$FIX/burn" 1 30 >/dev/null 2>&1 &
cpid=$!
for i in $(seq 1 50); do
	tpid=$(pgrep -P $cpid | head -n 1)
	[ -n "$tpid" ] && break
	sleep 0.1
done
sleep 0.7
kill -KILL "$tpid" 2>/dev/null
wait $cpid

# ---- helpers ----------------------------------------------------------------------

# total EXP METRIC [ARGS...]: sonde print's <Total> of METRIC, exact (csv).
total() {
	exp=$1 m=$2
	shift 2
	"$SONDE" print "$@" -printmode csv -metrics "e.$m:name" -functions "$exp" 2>/dev/null |
		awk -F, 'NR > 1 && $1 == "<Total>" { print $NF; exit }'
}

# rawsum FILE INDEX: the sum of sample type INDEX (0-based) in pprof -raw.
rawsum() {
	go tool pprof -raw "$1" 2>/dev/null | awk -v k="$2" '
		/^Samples:/ { s = 1; getline; next }
		/^Locations/ { s = 0 }
		s && /:/ { split($0, a, ":"); n = split(a[1], v, " "); if (n > k) t += v[k + 1] }
		END { printf "%.0f\n", t }'
}

same() { # DESC GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$2', wanted '$3'"; fi
}

# ---- pprof ----------------------------------------------------------------------------

for e in b k s; do
	check "$e.er: export pprof" "$SONDE" export --format pprof -o $e.pprof $e.er
done
check "t.er: export pprof" "$SONDE" export --format pprof -o t.pprof t.er
check "h.er: export pprof (heap only; its default metric)" "$SONDE" export --format pprof -o h.pprof h.er
check "p.er: export pprof (with its descendants)" "$SONDE" export --format pprof -o p.pprof p.er
check "names.er: export pprof" "$SONDE" export --format pprof -o n.pprof names.er

if [ $have_go = 1 ]; then
	for e in b k p names s; do
		f=$e.pprof
		[ $e = names ] && f=n.pprof
		[ -f $e.er/log.xml ] || [ $e = names ] || continue
		want=$(total $e.er totalcpu)
		got=$(go tool pprof -top -unit=ns $f 2>/dev/null | sed -n 's/.* of \([0-9]*\)ns total$/\1/p')
		same "$e.er: go tool pprof -top's total is sonde print's <Total> to the ns ($want)" "$got" "$want"
		same "$e.er: go tool pprof -raw's samples add up to <Total>" "$(rawsum $f 0)" "$want"
		# the top functions: names and exclusive times, in order (those
		# with time: pprof and sonde order ties differently)
		"$SONDE" print -printmode csv -metrics e.totalcpu:name -limit 5 -functions $e.er 2>/dev/null |
			awk -F, 'NR > 2 && $NF > 0 { print $NF " " $1 }' >want.top
		go tool pprof -top -unit=ns -nodefraction=0 -nodecount=40 $f 2>/dev/null |
			awk '/flat%/ { s = 1; next } s { v = $1; sub(/ns$/, "", v); $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print v " " $0 }' |
			head -n "$(wc -l <want.top)" >got.top
		cp got.top $e.top
		if cmp -s want.top got.top; then ok "$e.er: go tool pprof -top's top $(wc -l <want.top) functions and times are sonde print -functions'"; else
			notok "$e.er: go tool pprof -top's top functions differ from sonde print -functions'"
			paste -d'|' want.top got.top | sed 's/^/#   /'
		fi
	done
	grep -q '<static>@0x.* (sburn)$' s.top || notok "s.er: no function of stripped burn named for its address in pprof's top"
	# traced metrics: each sample type's total is sonde print's
	for m in heapalloccnt heapallocbytes heapleakcnt heapleakbytes sync syncn ioreadbytes iowritebytes ioreadcnt; do
		i=$(go tool pprof -raw t.pprof 2>/dev/null | awk -v m="$m" '/^Samples:/ { getline; for (k = 1; k <= NF; k++) { split($k, a, "/"); if (a[1] == m) print k - 1 } }' | tr -d '[]')
		same "t.er: pprof's $m adds up to sonde print's" "$(rawsum t.pprof "$i")" "$(total t.er $m)"
	done
	same "h.er: heap only: the default sample type is heapallocbytes" \
		"$(go tool pprof -raw h.pprof 2>/dev/null | awk '/^Samples:/ { getline; print; exit }' | grep -o '[a-z]*/bytes\[dflt\]')" "heapallocbytes/bytes[dflt]"
	got=$(go tool pprof -top -sample_index=heapleakbytes -unit=B h.pprof 2>/dev/null | sed -n 's/.* of \([0-9]*\)B total$/\1/p')
	same "h.er: go tool pprof -sample_index=heapleakbytes: the fixture's 9000 leaked bytes" "$got" 9000
	got=$(go tool pprof -top -sample_index=heapleakbytes -unit=B h.pprof 2>/dev/null | awk '/leak_two$/ { print $1 } ' | tr -d B)
	same "h.er: leak_two leaked 5000 bytes (pprof -top)" "$got" 5000
	go tool pprof -raw n.pprof >n.raw 2>&1
	if grep -qF 'w<e&i"rd;x' n.raw && grep -q "$(printf 'bad\xef\x9f\xbf\xef\x9f\xbebytes')" n.raw && grep -q 'ctl?char' n.raw; then
		ok "names.er: pprof -raw shows the odd names ('<', '&', '\"', ';', a control character, bytes not UTF-8 as U+F7XY)"
	else
		notok "names.er: the odd names in pprof -raw"
		grep -E '^ +[0-9]+: ' n.raw | head -8 | sed 's/^/#   /'
	fi
fi

# ---- folded ---------------------------------------------------------------------------

check "b.er: export folded" "$SONDE" export --format folded -o b.folded b.er
same "b.er: folded adds up to <Total>" "$(awk '{ s += $NF } END { printf "%.0f", s }' b.folded)" "$(total b.er totalcpu)"
# (the count is the last field: names may hold blanks, "<Process start>")
same "b.er: one line per distinct stack" "$(sed 's/ [0-9]*$//' b.folded | sort | uniq -d | wc -l)" 0
"$SONDE" export --format folded -metric heapleakbytes -o h.folded h.er
same "h.er: folded -metric heapleakbytes: 3 leak stacks... 9000 bytes" "$(awk '{ s += $NF } END { print s }' h.folded)" 9000
"$SONDE" export --format folded -thread_select 2 -o b2.folded b.er
same "b.er: folded -thread_select 2 is sonde print -thread_select 2's total" \
	"$(awk '{ s += $NF } END { printf "%.0f", s }' b2.folded)" "$(total b.er totalcpu -thread_select 2)"
"$SONDE" export --format folded -object_select burn -o bo.folded b.er
same "b.er: folded -object_select burn is sonde print's total" \
	"$(awk '{ s += $NF } END { printf "%.0f", s }' bo.folded)" "$(total b.er totalcpu -object_select burn)"
check "b.er: folded -object_select folds the rest per object" grep -q '<libc.so.6>' bo.folded
"$SONDE" export --format folded -time 0.2-0.6 -o bt.folded b.er
t=$(awk '{ s += $NF } END { printf "%.0f", s }' bt.folded)
if [ "$t" -gt 0 ] && [ "$t" -lt "$(total b.er totalcpu)" ]; then ok "b.er: folded -time 0.2-0.6 keeps a part ($t ns)"; else notok "b.er: -time 0.2-0.6 kept $t ns"; fi
same "p.er: folded adds its descendants as sonde print does" \
	"$(awk '{ s += $NF } END { printf "%.0f", s }' <"$("$SONDE" export --format folded -o p.folded p.er; echo p.folded)")" "$(total p.er totalcpu)"

# ---- speedscope and chrome --------------------------------------------------------------

for e in b t h k e names; do
	[ -f $e.er/log.xml ] || continue
	for fmt in speedscope chrome; do
		check "$e.er: export $fmt" "$SONDE" export --format $fmt -o $e.$fmt $e.er
	done
done
check "names.er: export folded" "$SONDE" export --format folded -o names.folded names.er
check "e.er: export folded (empty: an empty file)" "$SONDE" export --format folded -o e.folded e.er
check "e.er: export pprof (empty)" "$SONDE" export --format pprof -o e.pprof e.er
[ $have_go = 1 ] && check "e.er: go tool pprof reads the empty profile" go tool pprof -raw e.pprof

# the kinds' timeline parts (lib/views/kind.h) in t.chrome, against the
# fixture's truth: the 5 sync waits and 15 I/O calls as spans on each
# thread's call track, named as the track says; the live heap's counter
# peaks at 29000 bytes and ends at the 9000 leaked (one event a line).
same "t.er: chrome: 5 sync waits" "$(grep -c '"ph":"X","cat":"sync"' t.chrome)" 5
same "t.er: chrome: 15 I/O calls" "$(grep -c '"ph":"X","cat":"io"' t.chrome)" 15
same "t.er: chrome: the waits are the traced functions, with the lock" \
	"$(grep '"cat":"sync"' t.chrome | grep -o '"name":"[a-z_]*","args":{"caller":"[a-z_]*","object":"0x' | sort -u | tr '\n' ' ')" \
	'"name":"pthread_cond_timedwait","args":{"caller":"sync_work","object":"0x "name":"pthread_mutex_lock","args":{"caller":"sync_work","object":"0x "name":"sem_timedwait","args":{"caller":"sync_work","object":"0x '
check "t.er: chrome: an I/O call's args: fd, bytes and file" grep -q '"cat":"io".*"name":"write","args":{"caller":"io_work","fd":[0-9]*,"bytes":[0-9]*,"file":".*a.dat"}}' t.chrome
check "t.er: chrome: the call track is named by the kinds" grep -q '"thread_name".*"args":{"name":"thread 1: sync and I/O calls"}' t.chrome
same "t.er: chrome: the live heap's largest point is the fixture's peak" \
	"$(grep -o '"name":"Live heap","args":{"bytes":[0-9]*' t.chrome | grep -o '[0-9]*$' | sort -n | tail -1)" 29000
same "t.er: chrome: the live heap ends with the leaked bytes" \
	"$(grep -o '"name":"Live heap","args":{"bytes":[0-9]*' t.chrome | tail -1 | grep -o '[0-9]*$')" 9000

if [ $have_node = 1 ]; then
	for e in b t h k e names; do
		[ -f $e.chrome ] || continue
		want=""
		[ $e != h ] && want=$(total $e.er totalcpu)
		[ -z "$want" ] && [ $e != h ] && want=0
		node "$BR/validate-trace.mjs" $e.chrome $want
	done
fi

if [ $have_browser = 1 ]; then
	odd=$(printf 'bad\xef\x9f\xbf\xef\x9f\xbebytes')
	node "$BR/speedscope-load.mjs" b.speedscope spin sort_cmp worker
	node "$BR/speedscope-load.mjs" b.folded spin sort_cmp worker
	node "$BR/speedscope-load.mjs" b.chrome spin sort_cmp worker
	node "$BR/speedscope-load.mjs" t.speedscope spin_a 2>/dev/null | grep -q '^ok - speedscope imported' &&
		ok "t.er: speedscope imports the traced experiment's file"
	node "$BR/speedscope-load.mjs" h.speedscope leak_two heap_work
	node "$BR/speedscope-load.mjs" t.chrome sync_work io_work
	node "$BR/speedscope-load.mjs" k.speedscope burn_loop spin 2>/dev/null | grep '^ok - speedscope imported' ||
		notok "k.er (killed): speedscope imports it"
	node "$BR/speedscope-load.mjs" e.speedscope
	node "$BR/speedscope-load.mjs" names.speedscope 'w<e&i"rd;x' "$odd" 'ctl?char' leaf_a
	node "$BR/speedscope-load.mjs" names.folded 'w<e&i"rd:x' "$odd" 'ctl?char' leaf_a
	node "$BR/speedscope-load.mjs" names.chrome 'w<e&i"rd;x' "$odd" 'ctl?char' leaf_a
	# the check can fail: a name that is not there is not found
	if node "$BR/speedscope-load.mjs" b.folded no_such_function >/dev/null 2>&1; then
		notok "speedscope-load.mjs finds a function that is not there"
	else ok "speedscope-load.mjs does not find a function that is not there"; fi
fi

# ---- frames of every kind -----------------------------------------------------------------
# test_export's frames.er (tests/unit/framesexp.h): native, kernel and Java
# frames in one stack, named by its jit.map, kallsyms and method table.

for fmt in pprof folded speedscope chrome; do
	check "frames.er: export $fmt" "$SONDE" export --format $fmt -o frames.$fmt frames.er
done
if [ $have_go = 1 ]; then
	same "frames.er: go tool pprof -top's total is sonde print's <Total> (15 ms)" \
		"$(go tool pprof -top -unit=ns frames.pprof 2>/dev/null | sed -n 's/.* of \([0-9]*\)ns total$/\1/p')" 15000000
	# the top four
	"$SONDE" print -printmode csv -metrics e.totalcpu:name -limit 4 -functions frames.er 2>/dev/null |
		awk -F, 'NR > 2 { print $NF " " $1 }' >want.top
	go tool pprof -top -unit=ns -nodefraction=0 frames.pprof 2>/dev/null |
		awk '/flat%/ { s = 1; next } s { v = $1; sub(/ns$/, "", v); $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print v " " $0 }' |
		head -n 4 >got.top
	if cmp -s want.top got.top; then ok "frames.er: go tool pprof -top's top four are sonde print -functions' (do_syscall_64, main, kfunc_low, work)"; else
		notok "frames.er: go tool pprof -top's top functions differ from sonde print -functions'"
		paste -d'|' want.top got.top | sed 's/^/#   /'
	fi
	# the stack of kernel, native and Java frames, leaf first
	go tool pprof -traces frames.pprof 2>/dev/null | awk '/^ +5ms / { s = 1 } s { sub(/^ +(5ms)? +/, ""); print } s && /^main$/ { exit }' |
		paste -sd';' >got.trace
	same "frames.er: go tool pprof -traces: the 5 ms stack from the kernel down to main" "$(cat got.trace)" \
		"do_syscall_64;entry_SYSCALL_64;leaf_native;com.example.Util.hash(java.lang.Object);com.example.Main.run(int, java.lang.String[]);work;main"
	go tool pprof -raw frames.pprof 2>/dev/null | awk '/^Mappings/ { s = 1; next } s { print $NF == "[FN][IN]" ? $(NF - 1) : $NF }' | sort >got.maps
	same "frames.er: pprof's mappings are the kinds' load objects" "$(paste -sd' ' got.maps)" \
		"<JAVA> <JIT> <kernel> <unknown> com/example/Main.class com/example/Util.class"
fi
same "frames.er: folded adds up to <Total>" "$(awk '{ s += $NF } END { printf "%.0f", s }' frames.folded)" 15000000
[ $have_node = 1 ] && node "$BR/validate-trace.mjs" frames.chrome 15000000
if [ $have_browser = 1 ]; then
	for f in speedscope folded chrome; do
		node "$BR/speedscope-load.mjs" frames.$f do_syscall_64 kfunc_low 'com.example.Main.run(int, java.lang.String[])' \
			'com.example.Util.hash(java.lang.Object)' '<unknown method>@0x9999' '<kind 200>@0x1010'
	done
fi

# ---- an extra thread state ------------------------------------------------------------------
# test_frames --write-state: framestate.er, frames.er with 6 of its 15
# samples in the tests' build's extra state TEST (metric teststate,
# sonde/states.h; framesexp.h's truth), exported by the tests' build of
# sonde (build/teststates): pprof carries the state's metric as a sample
# type beside totalcpu; folded, speedscope and chrome export it with
# -metric teststate (chrome's timeline stays the CPU samples').

TSONDE=$B/teststates/bin/sonde
if [ -x "$TSONDE" ] && "$B/tests/test_frames" --write-state "$TMP"; then
	ok "test_frames wrote framestate.er"
	for fmt in pprof folded speedscope chrome; do
		check "framestate.er: export $fmt" "$TSONDE" export --format $fmt -o fs.$fmt framestate.er
		[ $fmt = pprof ] && continue
		check "framestate.er: export $fmt -metric teststate" "$TSONDE" export --format $fmt -metric teststate \
			-o fst.$fmt framestate.er
	done
	if [ $have_go = 1 ]; then
		same "framestate.er: pprof's sample types: totalcpu (the default), samples, teststate" \
			"$(go tool pprof -raw fs.pprof 2>/dev/null | awk '/^Samples:/ { getline; print; exit }' | tr -s ' ' | sed 's/^ //; s/ $//')" \
			"totalcpu/nanoseconds[dflt] samples/count teststate/nanoseconds"
		same "framestate.er: go tool pprof -top's total is 15 ms of CPU" \
			"$(go tool pprof -top -unit=ns fs.pprof 2>/dev/null | sed -n 's/.* of \([0-9]*\)ns total$/\1/p')" 15000000
		same "framestate.er: go tool pprof -sample_index=teststate: 6 ms in the state" \
			"$(go tool pprof -top -sample_index=teststate -unit=ns fs.pprof 2>/dev/null | sed -n 's/.* of \([0-9]*\)ns total$/\1/p')" 6000000
		# each function's flat and cum time in the state (a name made
		# for an address whole: it has no system name, which pprof
		# would cut to its '@'; a function without time in the state
		# is not shown)
		go tool pprof -top -sample_index=teststate -unit=ns -nodefraction=0 -nodecount=40 fs.pprof 2>/dev/null |
			awk '/flat%/ { s = 1; next } s { f = $1; c = $4; sub(/ns$/, "", f); sub(/ns$/, "", c); $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print f "|" c "|" $0 }' |
			sort >got.state
		sort >want.state <<'EOF2'
2000000|2000000|do_syscall_64
0|2000000|entry_SYSCALL_64
0|2000000|leaf_native
0|2000000|com.example.Util.hash(java.lang.Object)
0|2000000|com.example.Main.run(int, java.lang.String[])
0|2000000|work
1000000|6000000|main
1000000|1000000|kfunc_low
1000000|1000000|<unknown method>@0x9999
1000000|1000000|<kind 200>@0x1010
0|1000000|com.example.Main.<init>()
EOF2
		if cmp -s want.state got.state; then ok "framestate.er: go tool pprof -top -sample_index=teststate: each function's flat and cum time in the state"; else
			notok "framestate.er: go tool pprof -top -sample_index=teststate differs from the truth (want|got)"
			paste -d'#' want.state got.state | sed 's/^/#   /'
		fi
		# the state's 2 ms stack of kernel, native and Java frames
		go tool pprof -traces -sample_index=teststate fs.pprof 2>/dev/null |
			awk '/^ +2ms / { s = 1 } s { sub(/^ +(2ms)? +/, ""); print } s && /^main$/ { exit }' | paste -sd';' >got.trace
		same "framestate.er: go tool pprof -traces -sample_index=teststate: the 2 ms stack from the kernel down to main" \
			"$(cat got.trace)" \
			"do_syscall_64;entry_SYSCALL_64;leaf_native;com.example.Util.hash(java.lang.Object);com.example.Main.run(int, java.lang.String[]);work;main"
	fi
	same "framestate.er: folded adds up to 15 ms of CPU" "$(awk '{ s += $NF } END { printf "%.0f", s }' fs.folded)" 15000000
	same "framestate.er: folded -metric teststate: each stack's time in the state" "$(sort fst.folded)" \
		"main 1000000
main;<unknown method>@0x9999 1000000
main;com.example.Main.<init>();<kind 200>@0x1010 1000000
main;kfunc_low 1000000
main;work;com.example.Main.run(int, java.lang.String[]);com.example.Util.hash(java.lang.Object);leaf_native;entry_SYSCALL_64;do_syscall_64 2000000"
	if [ $have_node = 1 ]; then
		same "framestate.er: speedscope -metric teststate: a profile of the state's samples, 6 ms" \
			"$(node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const p = d.profiles[0];
				console.log(d.name, p.unit, p.weights.reduce((a, b) => a + b, 0), p.endValue - p.startValue)' fst.speedscope)" \
			"prog [100]: Test State Time nanoseconds 6000000 6000000"
		node "$BR/validate-trace.mjs" fs.chrome 15000000
		node "$BR/validate-trace.mjs" fst.chrome 15000000
		same "framestate.er: chrome -metric teststate: otherData and the counter's last value are 6 ms" \
			"$(node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const c = d.traceEvents.filter((e) => e.ph === "C");
				console.log(d.otherData.metric, d.otherData.total, c[c.length - 1].name, c[c.length - 1].args.teststate)' fst.chrome)" \
			"teststate 6000000 Test State Time 6000000"
	fi
	if [ $have_browser = 1 ]; then
		for f in fs.speedscope fs.folded fs.chrome fst.speedscope fst.folded fst.chrome; do
			node "$BR/speedscope-load.mjs" $f do_syscall_64 kfunc_low 'com.example.Main.run(int, java.lang.String[])' \
				'com.example.Util.hash(java.lang.Object)' '<unknown method>@0x9999' '<kind 200>@0x1010'
		done
		# the state's profiles hold only the state's samples: not the
		# function without time in it
		for f in fst.speedscope fst.folded; do
			node "$BR/speedscope-load.mjs" $f '<kernel>@0xffffffff81003010' >neg.txt 2>&1
			if grep -q '^ok - speedscope imported' neg.txt && grep -q "^not ok - .*shows '<kernel>@0xffffffff81003010'" neg.txt; then
				ok "$f: speedscope shows no <kernel>@0xffffffff81003010 (no time in the state)"
			else
				notok "$f: speedscope's view of the state's samples"
				sed 's/^/#   /' neg.txt
			fi
		done
	fi
else
	notok "the tests' build ($TSONDE) and test_frames --write-state (make tests)"
fi

# ---- MPI: ranks as processes, messages as flows ---------------------------------------------
# test_mpitimeline's job of 4 ranks (M_r0.er ... M_r3.er) and its truth
# (mpitruth.json): each rank a process named "rank N", sorted by rank; the
# calls on each thread's MPI track; one flow per matched message (18), bound
# to the send's and the receive's calls (validate-trace.mjs), each from the
# right rank at the right time to the right rank and call (the truth's send
# time; the receiving call starts RECV_DUR before the truth's receive end:
# 200 us); the send to rank 5 counted in a note; speedscope loads the file.
mkdir -p mpi
if check "test_mpitimeline wrote the MPI job" "$B/tests/test_mpitimeline" --write "$TMP/mpi"; then
	(cd mpi && "$SONDE" export --format chrome -o ../job.chrome M_r0.er M_r1.er M_r2.er M_r3.er) >job.out 2>&1
	same "mpi: export chrome: the unmatched send is counted" "$(grep -c '1 MPI messages matched nothing' job.out)" 1
	same "mpi: chrome: ranks are processes named and sorted by rank" \
		"$(grep -o '"process_name","pid":[0-9]*,"tid":[0-9]*,"args":{"name":"rank [0-9]*' job.chrome | sed 's/.*"rank /rank /' | tr '\n' ' ')" \
		"rank 0 rank 1 rank 2 rank 3 "
	same "mpi: chrome: sort indices are the ranks" \
		"$(grep -o '"process_sort_index","pid":[0-9]*,"tid":[0-9]*,"args":{"sort_index":[0-9]*' job.chrome | grep -o '[0-9]*$' | tr '\n' ' ')" \
		"0 1 2 3 "
	same "mpi: chrome: one flow per matched message" "$(grep -c '"ph":"s","cat":"mpi"' job.chrome)" 18
	if [ $have_node = 1 ]; then
		node "$BR/validate-trace.mjs" job.chrome
		# each flow against the truth: rank (pid - 1000) and time (us) at both ends
		node -e '
const fs = require("fs");
const t = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const d = JSON.parse(fs.readFileSync(process.argv[2], "utf8")).traceEvents;
const byId = new Map();
for (const e of d) if (e.ph === "s" || e.ph === "f") (byId.get(e.id) || byId.set(e.id, {}).get(e.id))[e.ph] = e;
const got = [...byId.values()].map((x) => [x.s.pid - 1000, Math.round(x.s.ts * 1000), x.f.pid - 1000, Math.round(x.f.ts * 1000) + 200000].join(" ")).sort();
const want = t.msgs.map((m) => [m[0], m[1], m[2], m[3]].join(" ")).sort();
const same = JSON.stringify(got) === JSON.stringify(want);
console.log((same ? "ok" : "not ok") + " - mpi: chrome: every arrow from its send (rank, time) to its receive (rank, call)" +
	(same ? "" : "\n#   got  " + got.join(", ") + "\n#   want " + want.join(", ")));
' mpi/mpitruth.json job.chrome
	fi
	[ $have_browser = 1 ] && node "$BR/speedscope-load.mjs" job.chrome MPI_Send MPI_Recv MPI_Wait
	# the same ranks as a founder's M_r<rank>.er sub-experiments (the
	# reader's rank kind): the same 18 flows
	if "$SONDE" collect -p on -o fjob.er /bin/true >/dev/null 2>&1 && cp -r mpi/M_r?.er fjob.er/; then
		"$SONDE" export --format chrome -o fjob.chrome fjob.er >/dev/null 2>&1
		same "mpi: a founder's rank sub-experiments: one flow per matched message" "$(grep -c '"ph":"s","cat":"mpi"' fjob.chrome)" 18
	else
		notok "mpi: a founder with the ranks' sub-experiments"
	fi
fi

# ---- errors -------------------------------------------------------------------------------

rc 2 "unknown format: exit 2" "$SONDE" export --format svg b.er
check "unknown format: the message names it and the formats" grep -q "unknown format 'svg' (formats: pprof, folded, speedscope, chrome)" err.txt
rc 1 "missing experiment: exit 1" "$SONDE" export --format folded nosuch.er
check "missing experiment: the message names it" grep -q "nosuch.er" err.txt
rc 1 "unwritable -o: exit 1" "$SONDE" export --format folded -o /nonexistent/dir/x.folded b.er
check "unwritable -o: the message names the file" grep -q "cannot open '/nonexistent/dir/x.folded' for writing" err.txt
rc 2 "a metric not recorded: exit 2" "$SONDE" export --format pprof -metric heapleakbytes -o x.pprof b.er
check "a metric not recorded: said, with what was recorded" grep -q "metric 'heapleakbytes' was not recorded.*recorded: totalcpu, samples" err.txt
[ ! -e x.pprof ] && ok "a failed export leaves no file" || notok "a failed export left x.pprof"
rc 2 "no format: exit 2" "$SONDE" export b.er
rc 2 "a bad -time: exit 2" "$SONDE" export --format folded -time 5-1 b.er
lines=$(wc -l <err.txt)
same "a bad -time: one line" "$lines" 1
