# sonde report: the HTML report checked in headless Chromium
# (tests/browser/check-report.js, playwright-core with Debian's chromium)
# against sonde print's numbers, exactly:
#
#   - burn (two threads): the flame graph's root and the top functions
#     (table and a click on their frames) as -functions; a click on a
#     function shows -csingle's callers and callees; a range dragged on
#     the timeline gives the table of the model's own time filter (sonde
#     report -time of that range);
#   - phases.er (test_report --write: phase_a for 1 s, then phase_b, a
#     sample every ms): a range gives exactly the samples in it;
#   - frames.er (test_report --write): native, kernel and Java frames in
#     one stack, its top functions as -functions, the kinds' names shown;
#   - framestate.er (test_frames --write-state, reported by the tests'
#     build): the same with samples in an extra thread state, its metric
#     chosen in the page: the functions and callers-callees in it;
#   - phases (a real run: first_phase, then a function whose name has '<',
#     '&', quotes, "</script>" and bytes that are not UTF-8, in a binary
#     whose path has them too): the names shown as text, nothing injected;
#     the first part of the run has none of the second phase;
#   - off-CPU time (-w): Total Thread Time first, its top functions as
#     -functions;
#   - heap only, an empty experiment, a target killed with SIGKILL: valid
#     reports that load without an error;
#   - two experiments: the comparison table as -compare on;
#   - bad input: a clear one-line error and a non-zero exit.
#
# A screenshot of each section goes to build/report-shots/.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
SHOTS=$B/report-shots
mkdir -p "$SHOTS"
DRIVER=$TOP/tests/browser/check-report.js
CHROMIUM=${SONDE_CHROMIUM:-/usr/bin/chromium}

if [ ! -x "$CHROMIUM" ] || [ ! -d "$TOP/tests/browser/node_modules/playwright-core" ] || ! command -v node >/dev/null; then
	notok "the browser test needs chromium, node and tests/browser/node_modules (sh scripts/deps.sh check installs them)"
	exit 1
fi

# browser SPEC: runs the driver on a spec (JSON text)
browser() {
	printf '%s\n' "$1" >spec.json
	(cd "$TOP/tests/browser" && node check-report.js "$TMP/spec.json") >drv.txt 2>&1
	cat drv.txt
	grep -q '^ok - no console error' drv.txt || notok "the browser check of $2 ended early"
}

# the page's script parses (node --check), and holds nothing that would end
# its <script> element
check "lib/views/report/report.js parses (node --check)" node --check "$TOP/lib/views/report/report.js"
if grep -qi '</script\|<!--' "$TOP/lib/views/report/report.js"; then notok "report.js holds '</script' or '<!--'"; else
	ok "report.js holds no '</script' or '<!--'"; fi

# ---- bad input: clear errors --------------------------------------------------------

rc 1 "a missing experiment is an error" "$SONDE" report -o x.html nosuch.er
if [ "$(wc -l <err.txt)" = 1 ] && grep -q "nosuch.er" err.txt; then ok "one line naming it: $(cat err.txt)"; else
	notok "missing experiment: $(cat err.txt)"; fi
[ ! -e x.html ] && ok "no report is left behind" || notok "a report was written for a missing experiment"
mkdir notexp.er
rc 1 "a directory that is no experiment is an error" "$SONDE" report -o x.html notexp.er
grep -q "notexp.er" err.txt && ok "the error names it: $(cat err.txt)" || notok "notexp.er: $(cat err.txt)"
rc 2 "no experiment is a usage error" "$SONDE" report
rc 2 "an unknown option is a usage error" "$SONDE" report -frobnicate x.er
rc 2 "a bad -time is a usage error" "$SONDE" report -time 2-1 x.er
grep -q "ends before it starts" err.txt && ok "-time 2-1: $(cat err.txt)" || notok "-time 2-1: $(cat err.txt)"

# ---- burn: the numbers of sonde print -----------------------------------------------

"$SONDE" collect -p hi -o burn.er "$FIX/burn" 2 1 >/dev/null 2>&1 || notok "collect burn"
rc 1 "an unwritable output is an error" "$SONDE" report -o /nonexistent/dir/r.html burn.er
if [ "$(wc -l <err.txt)" = 1 ] && grep -q "cannot write '/nonexistent/dir/r.html'" err.txt; then ok "one line naming it: $(cat err.txt)"; else
	notok "unwritable: $(cat err.txt)"; fi
rc 0 "sonde report burn.er" "$SONDE" report -o out/ burn.er
[ -f out/report.html ] && ok "-o DIR/ writes DIR/report.html ($(cat out.txt))" || notok "no out/report.html"
"$SONDE" print -printmode json -functions burn.er >fn.json
"$SONDE" print -printmode json -csingle msort_with_tmp.part.0 burn.er >cs.json
browser "{\"report\":\"$TMP/out/report.html\",\"shots\":\"$SHOTS\",\"tag\":\"burn\",\"functions\":\"$TMP/fn.json\",
	\"csingle\":\"$TMP/cs.json\",\"range\":{\"from\":0.15,\"to\":0.45,\"truth\":\"report\",\"sonde\":\"$SONDE\",
	\"experiments\":[\"$TMP/burn.er\"]},\"sections\":[\"sec-header\",\"sec-timeline\",\"sec-functions\",\"sec-flame\",\"sec-source\"]}" burn
# a program without OpenMP: one document, no view modes (t80 has them)
[ "$(grep -o 'id="sonde-data[-a-z]*"' out/report.html)" = 'id="sonde-data"' ] && ! grep -q '"viewmode":' out/report.html &&
	ok "a report without OpenMP holds one document and no view mode" || notok "a report without OpenMP: $(grep -o 'id="sonde-data[-a-z]*"' out/report.html | tr '\n' ' ')"

# ---- the synthetic phases: the truth of a range --------------------------------------

"$B/tests/test_report" --write "$TMP" || notok "test_report --write"
rc 0 "sonde report phases.er" "$SONDE" report -o phases-syn.html phases.er
browser "{\"report\":\"$TMP/phases-syn.html\",\"shots\":\"$SHOTS\",\"tag\":\"synthetic\",
	\"range\":{\"from\":0.3,\"to\":0.7,\"truth\":\"phases\"}}" synthetic

# ---- frames of every kind (test_report --write: frames.er, tests/unit/framesexp.h) -----
# Native, kernel and Java frames in one stack: the functions, their
# numbers and the flame graph as sonde print's, the kinds' names and load
# objects as text.

rc 0 "sonde report frames.er (native, kernel and Java frames)" "$SONDE" report -o frames.html frames.er
"$SONDE" print -printmode json -functions frames.er >fnf.json
browser "{\"report\":\"$TMP/frames.html\",\"shots\":\"$SHOTS\",\"tag\":\"frames\",\"functions\":\"$TMP/fnf.json\",\"top\":7,
	\"names\":[{\"name\":\"com.example.Main.run(int, java.lang.String[])\"},{\"name\":\"com.example.Util.hash(java.lang.Object)\"},
	{\"name\":\"<unknown method>@0x9999\"},{\"name\":\"<kind 200>@0x1010\"},{\"name\":\"kfunc_low\"},
	{\"name\":\"Main.class\"},{\"name\":\"<kernel>\"},{\"name\":\"<JAVA>\"}],
	\"sections\":[\"sec-header\",\"sec-functions\",\"sec-flame\"]}" frames

# ---- an extra thread state (test_frames --write-state: framestate.er) ---------------------
# frames.er with 6 of its 15 samples in the tests' build's extra state
# TEST (framesexp.h), reported by that build (build/teststates): the
# report carries the state's metric; chosen in the page's Metric menu, its
# table, flame graph and callers-callees are sonde print's in that metric,
# exactly (the truth itself: t74).

TSONDE=$B/teststates/bin/sonde
if [ -x "$TSONDE" ] && "$B/tests/test_frames" --write-state "$TMP"; then
	rc 0 "sonde report framestate.er (the tests' build)" "$TSONDE" report -o framestate.html framestate.er
	same() { if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$2', wanted '$3'"; fi; }
	same "framestate.html: the report's metrics: totalcpu, samples, teststate; teststate's total 6 ms" \
		"$(node -e '
const h = require("fs").readFileSync(process.argv[1], "utf8");
const d = JSON.parse(/id="sonde-data">([\s\S]*?)<\/script>/.exec(h)[1]);
const k = d.metrics.findIndex((m) => m.name === "teststate");
console.log(d.metrics.map((m) => m.name).join(","), k >= 0 ? d.total[k] : "none");' framestate.html)" "totalcpu,samples,teststate 6000000"
	"$TSONDE" print -printmode json -metrics e.teststate:i.teststate:name -sort i.teststate -functions framestate.er >fns.json
	"$TSONDE" print -printmode json -metrics a.teststate -csingle main framestate.er >css.json
	browser "{\"report\":\"$TMP/framestate.html\",\"shots\":\"$SHOTS\",\"tag\":\"framestate\",\"metric\":\"teststate\",
	\"functions\":\"$TMP/fns.json\",\"top\":11,\"csingle\":\"$TMP/css.json\",
	\"names\":[{\"name\":\"Test State Time\"},{\"name\":\"com.example.Util.hash(java.lang.Object)\"},{\"name\":\"<kind 200>@0x1010\"}],
	\"sections\":[\"sec-header\",\"sec-functions\",\"sec-flame\"]}" framestate
else
	notok "the tests' build ($TSONDE) and test_frames --write-state (make tests)"
fi

# ---- names that need escaping, in a real run of two phases ----------------------------

# The fixture's placeholder name (50 bytes) becomes one with '<', '&',
# quotes, "</script>" and two bytes that are not UTF-8 (50 bytes too), everywhere in a copy
# of the binary (symbol table, debug strings); the copy's own name has them
# too.
evil=$(printf '<img src=x onerror="window.pwned=1">&'"'"'</script>\377\376z')
odd="$TMP/ph<&\"'$(printf '\377')x"
LC_ALL=C perl -pe 'BEGIN { $/ = undef; $e = shift @ARGV } s/names_that_need_escaping_placeholder_xxxxxxxxxxxxx/$e/g' \
	"$evil" <"$FIX/phases" >"$odd" && chmod +x "$odd"
if LC_ALL=C nm "$odd" 2>&1 | LC_ALL=C grep -aq 'onerror'; then ok "the escaping fixture's copy has the odd name"; else notok "the odd name is not in the copy"; fi
mkdir -p real
"$SONDE" collect -p hi -o phases.er -d "$TMP/real" "$odd" 0.3 >/dev/null 2>&1 || notok "collect the odd phases"
rc 0 "sonde report of the odd names" "$SONDE" report -o odd.html real/phases.er
"$SONDE" print -printmode json -functions real/phases.er >fn2.json
opens=$(LC_ALL=C grep -ao '<script' odd.html | wc -l)
closes=$(LC_ALL=C grep -ao '</script' odd.html | wc -l)
if [ "$opens" = 2 ] && [ "$closes" = 2 ]; then
	ok "the odd name opens or ends no script element of the file (the page's own 2)"; else
	notok "the file has $opens '<script' and $closes '</script'"; fi
browser "{\"report\":\"$TMP/odd.html\",\"shots\":\"$SHOTS\",\"tag\":\"names\",\"functions\":\"$TMP/fn2.json\",\"top\":3,
	\"names\":[{\"name\":\"<img src=x onerror=\\\"window.pwned=1\\\">&'</script>\\\\xff\\\\xfez\"},{\"name\":\"ph<&\\\"'\\\\xffx\"}],
	\"range\":{\"from\":0.05,\"to\":0.35,\"truth\":\"report\",\"sonde\":\"$SONDE\",\"experiments\":[\"$TMP/real/phases.er\"],
	\"absent\":[\"<img src=x onerror=\\\"window.pwned=1\\\">&'</script>\\\\xff\\\\xfez\"],\"present\":[\"first_phase\"]}}" names

# ---- heap only, empty, killed -------------------------------------------------------------

mkdir -p tv
"$SONDE" collect -p off -H on -o heap.er "$FIX/traceviews" "$TMP/tv" >/dev/null 2>&1 || notok "collect heap only"
rc 0 "sonde report of a heap-only experiment" "$SONDE" report -o heap.html heap.er
"$SONDE" print -printmode json -metrics e.heapallocbytes:i.heapallocbytes:name -functions heap.er >fn3.json
browser "{\"report\":\"$TMP/heap.html\",\"shots\":\"$SHOTS\",\"tag\":\"heap\",\"functions\":\"$TMP/fn3.json\",\"top\":3,
	\"sections\":[\"sec-header\",\"sec-functions\",\"sec-flame\",\"sec-heap\"]}" heap

"$SONDE" collect -p hi -s all -i on -o traced.er "$FIX/traceviews" "$TMP/tv" >/dev/null 2>&1 || notok "collect sync and I/O"
rc 0 "sonde report of a sync and I/O traced experiment" "$SONDE" report -o traced.html traced.er
browser "{\"report\":\"$TMP/traced.html\",\"shots\":\"$SHOTS\",\"tag\":\"traced\",\"sections\":[\"sec-sync\",\"sec-io\"]}" traced

# Off-CPU time (-w): Total Thread Time leads, as in sonde print, and the
# flame graph shows where the threads wait.
"$SONDE" collect -w on -o offcpu.er "$FIX/mstates" 0.2 >/dev/null 2>&1 || notok "collect -w on"
rc 0 "sonde report of an off-CPU experiment" "$SONDE" report -o offcpu.html offcpu.er
"$SONDE" print -printmode json -metrics e.total:i.total:name -functions offcpu.er >fn4.json
browser "{\"report\":\"$TMP/offcpu.html\",\"shots\":\"$SHOTS\",\"tag\":\"offcpu\",\"functions\":\"$TMP/fn4.json\",\"top\":3,
	\"sections\":[\"sec-header\",\"sec-functions\",\"sec-flame\"]}" offcpu

rc 0 "sonde report of an empty experiment" "$SONDE" report -o empty.html empty.er
browser "{\"report\":\"$TMP/empty.html\",\"shots\":\"$SHOTS\",\"tag\":\"empty\",\"sections\":[\"sec-header\"]}" empty
"$SONDE" collect -p off -o none.er true >/dev/null 2>&1
rc 0 "sonde report of a run that recorded nothing (-p off)" "$SONDE" report -o none.html none.er

"$SONDE" collect -p hi -o killed.er "$FIX/burn" 1 30 >/dev/null 2>&1 &
cpid=$!
tpid=""
for i in $(seq 1 50); do
	tpid=$(pgrep -P $cpid | head -n 1)
	[ -n "$tpid" ] && break
	sleep 0.1
done
sleep 0.5
[ -n "$tpid" ] && kill -KILL "$tpid"
wait $cpid
rc 0 "sonde report of a target killed with SIGKILL" "$SONDE" report -o killed.html killed.er
"$SONDE" print -printmode json -functions killed.er >fn4.json
browser "{\"report\":\"$TMP/killed.html\",\"shots\":\"$SHOTS\",\"tag\":\"killed\",\"functions\":\"$TMP/fn4.json\",\"top\":2,
	\"sections\":[\"sec-header\",\"sec-timeline\",\"sec-functions\"]}" killed

# ---- two experiments: the comparison -----------------------------------------------------

"$SONDE" collect -p hi -o burn2.er "$FIX/burn" 1 0.5 >/dev/null 2>&1 || notok "collect burn2"
rc 0 "sonde report of two experiments" "$SONDE" report -o two.html burn.er burn2.er
"$SONDE" print -printmode json -compare on -functions burn.er burn2.er >cmp.json
"$SONDE" print -printmode json -functions burn.er burn2.er >fn5.json
browser "{\"report\":\"$TMP/two.html\",\"shots\":\"$SHOTS\",\"tag\":\"compare\",\"functions\":\"$TMP/fn5.json\",\"top\":3,
	\"compare\":\"$TMP/cmp.json\",\"sections\":[\"sec-compare\"]}" compare

# ---- descendants: a founder with its children's sub-experiments ---------------------------

"$SONDE" collect -p hi -o fam.er sh -c "$FIX/burn 1 0.2; $FIX/burn 1 0.2" >/dev/null 2>&1 || notok "collect a family"
rc 0 "sonde report of a founder and its descendants" "$SONDE" report -o fam.html fam.er
"$SONDE" print -printmode json -functions fam.er >fn6.json
got=$(node -e '
const fs = require("fs");
const h = fs.readFileSync(process.argv[1], "utf8");
const d = JSON.parse(/id="sonde-data">([\s\S]*?)<\/script>/.exec(h)[1]);
const p = JSON.parse(fs.readFileSync(process.argv[2], "utf8").split("\n")[0]);
console.log(d.exps.length, d.total[0], p.rows[0]["e.totalcpu"]);' fam.html fn6.json)
set -- $got
if [ "${1:-0}" -ge 3 ] && [ "${2:-x}" = "${3:-y}" ]; then ok "the report adds the $1 experiments of the family as sonde print does (<Total> $2)"; else
	notok "family: experiments, report total, print total: $got"; fi

# ---- MPI: the timeline of the ranks and the communication matrix --------------------------
# test_mpitimeline's job of 4 ranks with its truth (mpitruth.json): the
# section's lanes, bars, message lines and matrix cells, exactly.

check "lib/views/report/mpi.js parses (node --check)" node --check "$TOP/lib/views/report/mpi.js"
mkdir -p mpi
if check "test_mpitimeline wrote the MPI job" "$B/tests/test_mpitimeline" --write "$TMP/mpi"; then
	rc 0 "sonde report of 4 MPI ranks" "$SONDE" report -o mpi.html mpi/M_r0.er mpi/M_r1.er mpi/M_r2.er mpi/M_r3.er
	browser "{\"report\":\"$TMP/mpi.html\",\"shots\":\"$SHOTS\",\"tag\":\"mpi\",\"mpi\":\"$TMP/mpi/mpitruth.json\",
		\"sections\":[\"sec-mpi\"]}" mpi
fi
# a report without MPI data holds neither the view nor its script
if [ ! -f two.html ] || grep -q "sec-mpi" two.html; then notok "two.html (no MPI data) holds the MPI script, or is missing"; else ok "a report without MPI data has no MPI script"; fi

note "screenshots: $SHOTS"
