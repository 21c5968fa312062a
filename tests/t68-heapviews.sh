# heaptrack's views in sonde print (-heap_peak, -heap_temporary,
# -heap_timeline, -heapstat's temporary count) and the live-heap counter of
# the chrome export, against the heappeak fixture's truth (see
# tests/fixtures/heappeak.c):
#   at the peak (1500000 bytes): keep_a 1000000 bytes in 100 blocks, peak_c
#   300000 in 1, keep_b 200000 in 50; temporary: temp_loop 1000 of 1000,
#   early_big 1 of 1, peak_c 1 of 1 (nothing else between its malloc and its
#   free), not_temp none of 1000; 2156 allocations in all (the fixture's
#   2155 and stdout's buffer), 6196 bytes live at the end (leak_d's 2100 and
#   stdout's 4096).
# Heap tracing is exact: every number is checked exactly.  Where heaptrack
# is installed, its peak consumers and temporary allocations per leaf
# function must be sonde's.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
F=$FIX/heappeak
FUNCS="keep_a keep_b peak_c early_big temp_loop not_temp leak_d"

# same DESC GOT WANT
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else
		notok "$1"
		echo "#   wanted: $3"
		echo "#   got:    $2"
	fi
}

check "collect -H on the fixture" "$SONDE" collect -H on -o h.er "$F"

# ---- -heap_peak ------------------------------------------------------------------

"$SONDE" print -printmode csv -heap_peak h.er >peak.csv 2>err.txt
# leaf,bytes,blocks,allocations of each row (the stack's first frame)
awk -F, 'NR > 2 { split($4, s, ";"); print s[1], $1, $2, $3 }' peak.csv >peak.rows
same "-heap_peak: the stacks at the peak, largest first, exact" "$(head -3 peak.rows | tr '\n' '|')" \
	"keep_a 1000000 100 100|peak_c 300000 1 1|keep_b 200000 50 50|"
same "-heap_peak: no other fixture stack had bytes live at the peak" \
	"$(awk '$1 ~ /^(early_big|temp_loop|not_temp|leak_d)$/' peak.rows)" ""
"$SONDE" print -printmode json -heap_peak h.er >peak.json 2>>err.txt
PEAK=$(python3 -c 'import json; d = json.load(open("peak.json")); print(d["peak_bytes"])')
same "-heap_peak: the peak is the fixture's 1500000 bytes" "$PEAK" 1500000
same "-heap_peak: the stacks' bytes add up to the peak" \
	"$(python3 -c 'import json; d = json.load(open("peak.json")); print(sum(r["bytes"] for r in d["rows"]), d["bytes"])')" \
	"$PEAK $PEAK"

# ---- -heap_temporary -------------------------------------------------------------

"$SONDE" print -printmode csv -heap_temporary h.er >temp.csv 2>>err.txt
awk -F, 'NR > 2 { split($3, s, ";"); print s[1], $1, $2 }' temp.csv | sort >temp.rows
same "-heap_temporary: temp_loop, early_big and peak_c, exact" "$(tr '\n' '|' <temp.rows)" \
	"early_big 1 1|peak_c 1 1|temp_loop 1000 1000|"
same "-heap_temporary: the total of the allocations" "$(sed -n 2p temp.csv)" "1002,2156,<Total>"
"$SONDE" print -heapstat h.er >stat.txt 2>>err.txt
same "-heapstat: temporary allocations and their share" \
	"$(grep 'Temporary Allocations' stat.txt | sed 's/^ *//')" \
	"Temporary Allocations: 1002 (46.47% of the allocations)"
same "-heapstat: the peak -heap_peak finds" "$(grep 'Peak Live Bytes' stat.txt | awk '{ print $4 }')" "$PEAK"

# ---- -heap_timeline --------------------------------------------------------------

"$SONDE" print -printmode json -heap_timeline h.er >tl.json 2>>err.txt
same "-heap_timeline: its largest bucket maximum is the peak; the last bucket holds the leaks; every allocation counted" \
	"$(python3 -c '
import json
x = json.load(open("tl.json"))["experiments"][0]
r = x["rows"]
print(max(b["max_live_bytes"] for b in r), x["peak_bytes"], r[-1]["live_bytes"], sum(b["allocations"] for b in r),
      sum(b["frees"] for b in r), len(r) <= 41)')" \
	"$PEAK $PEAK 6196 2156 2152 True"
# the phases are 20 ms apart: the bucket of the peak holds 1500000 at
# most, and the buckets before keep_b's allocations hold 1000000 at most
same "-heap_timeline: the live heap rises through keep_a, keep_b and peak_c" \
	"$(python3 -c '
import json
r = json.load(open("tl.json"))["experiments"][0]["rows"]
seen = []
for b in r:
    if b["max_live_bytes"] in (1000000, 1200000, 1500000) and b["max_live_bytes"] not in seen:
        seen.append(b["max_live_bytes"])
print(seen)')" "[1000000, 1200000, 1500000]"
"$SONDE" print -printmode csv -heap_timeline h.er >tl.csv 2>>err.txt
same "-heap_timeline csv: the header and one row per bucket" \
	"$(head -1 tl.csv) $(($(wc -l <tl.csv) - 1))" \
	"experiment,start_ns,end_ns,allocations,bytes,frees,live_bytes,max_live_bytes $(python3 -c 'import json; print(len(json.load(open("tl.json"))["experiments"][0]["rows"]))')"
same "the views wrote no error" "$(cat err.txt)" ""

# ---- the chrome export's live heap -----------------------------------------------

check "export --format chrome" "$SONDE" export --format chrome -o c.json h.er
same "chrome: the Live heap counter reaches the peak and ends with the leaks" \
	"$(python3 -c '
import json
c = [e for e in json.load(open("c.json"))["traceEvents"] if e.get("ph") == "C" and e["name"] == "Live heap"]
ts = [e["ts"] for e in c]
print(max(e["args"]["bytes"] for e in c), c[-1]["args"]["bytes"], ts == sorted(ts))')" "$PEAK 6196 True"

# ---- without heap tracing --------------------------------------------------------

check "collect without -H" "$SONDE" collect -o n.er "$F"
for v in heap_peak heap_temporary heap_timeline; do
	rc 2 "-$v without heap tracing: exit 2" "$SONDE" print -$v n.er
	same "-$v without heap tracing: the message" "$(cat err.txt)" \
		"sonde print: n.er has no heap tracing data (collect with -H on)"
done

# ---- heaptrack on the same program -----------------------------------------------

if ! command -v heaptrack >/dev/null 2>&1 || ! command -v heaptrack_print >/dev/null 2>&1; then
	note "heaptrack missing: sonde's peak consumers and temporary allocations not compared with heaptrack's"
	exit 0
fi
heaptrack -o "$TMP/ht" "$F" >ht.log 2>&1
HT=$(ls "$TMP"/ht.* 2>/dev/null | grep -v '\.log$' | head -1)
if [ -z "$HT" ]; then
	notok "heaptrack recorded the fixture"
	sed 's/^/#   /' ht.log | head -10
	exit 0
fi
# per leaf function: heaptrack's flame-graph lines are "root (file);...;leaf (file); VALUE"
leafsum() {
	heaptrack_print -f "$HT" --flamegraph-cost-type "$1" -F "$TMP/$1.txt" >/dev/null 2>&1
	awk '{ v = $NF; sub(/; [0-9]+$/, ""); n = split($0, f, ";"); leaf = f[n]; sub(/ \(.*$/, "", leaf); s[leaf] += v }
		END { for (k in s) print k, s[k] }' "$TMP/$1.txt"
}
leafsum peak >ht_peak
leafsum temporary >ht_temp
for fn in $FUNCS; do
	hp=$(awk -v f="$fn" '$1 == f { print $2 }' ht_peak)
	sp=$(awk -v f="$fn" '$1 == f { print $2 }' peak.rows)
	same "heaptrack's peak consumption of $fn is sonde's" "${sp:-0}" "${hp:-0}"
	ht=$(awk -v f="$fn" '$1 == f { print $2 }' ht_temp)
	st=$(awk -v f="$fn" '$1 == f { print $2 }' temp.rows)
	same "heaptrack's temporary allocations of $fn are sonde's" "${st:-0}" "${ht:-0}"
done
