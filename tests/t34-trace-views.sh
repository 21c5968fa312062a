# The tracing views of sonde print (-leaks, -allocs, -heapstat, -io,
# -iostacks, -sync) and the sync, heap and io kinds of sonde agg, against
# the traceviews fixture's known truth (see tests/fixtures/traceviews.c):
#   heap: leak_one 2 leaks of 4000 bytes (1000 + 3000), leak_two 1 leak of
#         5000, big 20000 freed, churn 10 blocks of 64..640 (3520) freed,
#         zeroed calloc 1000 freed: 15 allocations, 33520 bytes, 12 frees,
#         3 leaks, 9000 bytes, peak 29000 live bytes;
#   I/O:  a.dat 3 writes (600 bytes), 4 reads (600), 4 other; b.dat 1 write
#         (1000), 2 other; one read(-1) failing with EBADF;
#   sync: 3 pthread_mutex_lock, 1 pthread_cond_timedwait of 50 ms and 1
#         sem_timedwait of 100 ms (both ETIMEDOUT), all in sync_work.
# Heap numbers are checked exactly on an experiment collected with -H on -s
# all; the I/O and sync ones on one with -H on -i on -s all.  Both views
# and aggregations in text, csv and json; missing data is a clear error.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
F=$FIX/traceviews
D=$TMP/d
mkdir -p "$D"

# ---- helpers ------------------------------------------------------------------

# same DESC FILE WANT: FILE's content is WANT (a string).
same() {
	if [ "$(cat "$2")" = "$3" ]; then ok "$1"; else
		notok "$1"
		echo "#   wanted:"
		printf '%s\n' "$3" | sed 's/^/#     /'
		echo "#   got:"
		sed 's/^/#     /' "$2" | head -30
	fi
}

# json DESC FILE: every line of FILE is a JSON document.
json() {
	if ! command -v python3 >/dev/null 2>&1; then
		note "python3 missing: $1 not checked"
		return
	fi
	if python3 -c 'import json,sys
for l in open(sys.argv[1]):
    json.loads(l)' "$2" 2>json.err; then ok "$1"; else
		notok "$1"
		sed 's/^/#   /' json.err | tail -3
	fi
}

# aggrows FILE: the quantize blocks of an agg output as "KEY VALUE COUNT"
# lines in FILE.q (non-zero buckets only).
aggrows() {
	awk '
	/^$/ || /value +-+ Distribution/ { next }
	/\|/ {
		split($0, a, "|")
		v = a[1]; gsub(/^ +| +$/, "", v)
		n = split(a[2], b, " ")
		if (b[n] != 0) print key " " v " " b[n]
		next
	}
	{ $1 = $1; key = $0 }' "$1" >"$1.q"
}

# ---- collect ------------------------------------------------------------------

check "traceviews collected with -H on -s all" "$SONDE" collect -p off -H on -s all -o h.er "$F" "$D"
check "traceviews collected with -H on -i on -s all" "$SONDE" collect -p off -H on -i on -s all -o x.er "$F" "$D"
check "traceviews collected with -i on only" "$SONDE" collect -p off -i on -o i.er "$F" "$D"

# ---- -leaks, -allocs, -heapstat (h.er) ---------------------------------------

"$SONDE" print -leaks h.er >leaks.txt 2>leaks.err
head -n 1 leaks.txt >l1.txt
same "-leaks: total line" l1.txt "3 leaks, 9000 bytes"
# Each block: its heading and its first three frames.
awk '/^Leak #/ { h = $0; n = 0; next } h != "" && /^        / { n++; sub(/^ +/, ""); h = h " / " $0; if (n == 3) { print h; h = "" } }' \
	leaks.txt >lblocks.txt
same "-leaks: stacks by bytes, leaf first" lblocks.txt "Leak #1: 1 leak, 5000 bytes (55.56%) / leak_two / heap_work / main
Leak #2: 2 leaks, 4000 bytes (44.44%) / leak_one / heap_work / main"

"$SONDE" print -limit 1 -leaks h.er >leaks1.txt 2>&1
if grep -q '^Leak #1: 1 leak, 5000 bytes' leaks1.txt && ! grep -q '^Leak #2' leaks1.txt &&
	grep -q '^(1 more stack; -limit 0 shows all)' leaks1.txt; then
	ok "-limit 1 -leaks: one stack and a note"
else
	notok "-limit 1 -leaks"
	sed 's/^/#   /' leaks1.txt
fi

"$SONDE" print -printmode csv -allocs h.er >allocs.csv 2>&1
awk -F, 'NR > 1 { split($3, s, ";"); print $1 "," $2 "," s[1] }' allocs.csv >allocs.txt
same "-allocs csv: count, bytes and leaf per stack, largest first" allocs.txt "15,33520,<Total>
1,20000,big
1,5000,leak_two
2,4000,leak_one
10,3520,churn
1,1000,zeroed"
head -n 1 allocs.csv >ah.txt
same "-allocs csv: header" ah.txt "allocations,bytes,stack"
"$SONDE" print -allocs h.er | head -n 1 >a1.txt
same "-allocs: total line" a1.txt "15 allocations, 33520 bytes"

"$SONDE" print -printmode csv -heapstat h.er >hs.csv 2>&1
sed -n 2p hs.csv | cut -d, -f1-10 >hs.txt
same "-heapstat csv: allocations .. smallest" hs.txt "15,33520,3,9000,12,0,0,29000,20000,64"
sed -n '5,$p' hs.csv >hist.txt
same "-heapstat csv: power-of-two size histogram" hist.txt "64,127,1,64
128,255,2,320
256,511,4,1408
512,1023,5,3728
1024,2047,0,0
2048,4095,1,3000
4096,8191,1,5000
8192,16383,0,0
16384,32767,1,20000"
"$SONDE" print -heapstat h.er >hs.txt 2>&1
if grep -Eq '^ +Peak Live Bytes: 29000 \(at [0-9.]+ s\)$' hs.txt && grep -Eq '^ +Leaks: 3$' hs.txt &&
	grep -Eq '^ +16384 - 32767 +1 +20000$' hs.txt; then
	ok "-heapstat text: peak, leaks, histogram"
else
	notok "-heapstat text"
	sed 's/^/#   /' hs.txt
fi

"$SONDE" print -printmode json -leaks -allocs -heapstat h.er >heap.json 2>&1
json "-leaks -allocs -heapstat json: one document each" heap.json
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import json,sys
d = [json.loads(l) for l in open(sys.argv[1])]
l, a, h = d
assert l["view"] == "leaks" and l["leaks"] == 3 and l["bytes"] == 9000, l
assert [(r["leaks"], r["bytes"], r["stack"][0]) for r in l["rows"]] == [(1, 5000, "leak_two"), (2, 4000, "leak_one")], l
assert a["allocations"] == 15 and a["bytes"] == 33520 and a["stacks"] == 5, a
assert h["peak_bytes"] == 29000 and h["frees"] == 12 and sum(b["allocations"] for b in h["histogram"]) == 15, h' heap.json \
		>py.err 2>&1 && ok "json: the same numbers" || { notok "json: the same numbers"; sed 's/^/#   /' py.err | tail -3; }
fi

# With the I/O tracer loaded too, the fixture's own allocations are the same.
"$SONDE" print -printmode csv -leaks x.er >xleaks.csv 2>&1
awk -F, 'NR > 2 { split($3, s, ";"); if (s[1] ~ /^leak_/) print $1 "," $2 "," s[1] }' xleaks.csv >xl.txt
same "-leaks with -i on too: the fixture's leaks" xl.txt "1,5000,leak_two
2,4000,leak_one"
xt=$(sed -n 2p xleaks.csv | cut -d, -f1-2)
# and nothing of the I/O tracer's own memory is counted as the target's.
if [ "$xt" = "3,9000" ]; then ok "-leaks with -i on too: total 3 leaks, 9000 bytes"; else notok "-leaks with -i on too: total $xt, not 3,9000"; fi

# ---- -io and -iostacks (x.er) -----------------------------------------------------

"$SONDE" print -printmode csv -io x.er >io.csv 2>&1
# file, read bytes, reads, write bytes, writes, other, errors (times vary)
awk -F, '{ print $1 "," $2 "," $3 "," $5 "," $6 "," $8 "," $10 }' io.csv >io.txt
same "-io csv: per file, sorted by bytes" io.txt "file,ioreadbytes,ioreadcnt,iowritebytes,iowritecnt,ioothercnt,ioerrorcnt
<Total>,600,4,1600,4,6,1
$D/a.dat,600,4,600,3,4,0
$D/b.dat,0,0,1000,1,2,0
<fd -1>,0,0,0,0,0,1"
if awk -F, 'NR == 2 && $4 > 0 && $7 > 0 && $9 > 0 && $11 > 0 { ok = 1 } END { exit !ok }' io.csv; then
	ok "-io csv: read, write, other and error times are recorded"
else notok "-io csv: times"; sed 's/^/#   /' io.csv; fi
"$SONDE" print -io x.er >io.txt 2>&1
if grep -Eq '^ +600 +4 +[0-9.]+ +1600 +4 +[0-9.]+ +6 +[0-9.]+ +1 +[0-9.]+ +<Total>$' io.txt &&
	grep -q "  $D/a.dat\$" io.txt && grep -q '  <fd -1>$' io.txt; then
	ok "-io text: <Total> and the files"
else
	notok "-io text"
	sed 's/^/#   /' io.txt
fi

"$SONDE" print -printmode csv -iostacks x.er >ios.csv 2>&1
awk -F, '{ split($8, s, ";"); print $1 "," $2 "," $4 "," $5 "," $6 "," $7 "," s[1] "," s[2] }' ios.csv >ios.txt
same "-iostacks csv: calls, bytes and classes per stack" ios.txt "calls,bytes,reads,writes,other,errors,stack,
15,2200,4,4,6,1,<Total>,
15,2200,4,4,6,1,io_work,main"
"$SONDE" print -iostacks x.er >ios.txt 2>&1
if grep -q '^Stack #1: 15 calls, 2200 bytes, [0-9.]* s (4 read, 4 write, 6 other, 1 failed)$' ios.txt &&
	grep -q '^        io_work$' ios.txt; then
	ok "-iostacks text"
else
	notok "-iostacks text"
	sed 's/^/#   /' ios.txt
fi

# ---- -sync (x.er) -----------------------------------------------------------------

"$SONDE" print -printmode csv -sync x.er >sync.csv 2>&1
awk -F, 'NR > 1 { print $1 "," $(NF - 1) }' sync.csv | sed 's/^0x[0-9a-f]*,/OBJ,/' >sync.txt
same "-sync csv: objects by wait time, with their counts" sync.txt "<Total>,5
OBJ,1
OBJ,1
OBJ,3"
awk -F, 'NR > 2 { print $2 }' sync.csv >syncf.txt
same "-sync csv: the functions of each object" syncf.txt "sem_timedwait
pthread_cond_timedwait
pthread_mutex_lock"
# A timed wait lasts until its deadline, an absolute CLOCK_REALTIME time
# the fixture takes before the call; the wait is recorded on
# CLOCK_MONOTONIC, which the machine's time sync does not step: a step of
# CLOCK_REALTIME forward while it waits ends it early (a fresh make check
# here saw 99.912 ms for the 100 ms one).  Up to a millisecond short.
if awk -F, 'NR == 3 && $3 >= 99000000 { a = 1 } NR == 4 && $3 >= 49000000 && $3 < 100000000 { b = 1 } END { exit !(a && b) }' sync.csv; then
	ok "-sync csv: the timed waits lasted their timeouts"
else
	notok "-sync csv: wait times"
	sed 's/^/#   /' sync.csv
fi
"$SONDE" print -sync x.er >sync.txt 2>&1
if grep -q '^Sync wait threshold: 0 us (every call)$' sync.txt &&
	grep -Eq '^ *[0-9.]+ +5 +[0-9.]+ +<Total>$' sync.txt && grep -Eq '0x[0-9a-f]+  sem_timedwait$' sync.txt; then
	ok "-sync text: threshold heading and rows"
else
	notok "-sync text"
	sed 's/^/#   /' sync.txt
fi
"$SONDE" print -printmode json -io -iostacks -sync x.er >xio.json 2>&1
json "-io -iostacks -sync json: one document each" xio.json

# ---- damaged values: sums wrap around, never overflow ---------------------------------
# (in an ASAN=1 build an overflow is a UBSan report, which $UB makes fatal)

# pkt_off FILE TYPE [FUNC]: the offset of the first packet of TYPE (whose
# func byte is FUNC, when given) in the first block of data file FILE.
pkt_off() {
	used=$(od -An -tu4 -j4108 -N4 "$1" | tr -d ' ')
	off=4128
	end=$((4128 + ${used:-0}))
	while [ "$off" -lt "$end" ]; do
		# shellcheck disable=SC2046
		set -- "$1" "$2" "${3:-}" $(od -An -tu2 -j"$off" -N4 "$1")
		[ "${5:-0}" -ge 8 ] || return 1
		if [ "$4" = "$2" ] && { [ -z "$3" ] || [ "$(od -An -tu1 -j$((off + 4)) -N1 "$1" | tr -d ' ')" = "$3" ]; }; then
			echo "$off"
			return 0
		fi
		off=$((off + $5))
	done
	return 1
}
# poke_max FILE OFFSET: INT64_MAX (little-endian) at OFFSET.
poke_max() {
	printf '\377\377\377\377\377\377\377\177' | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# $UB: a command prefix, left unquoted on purpose
UB="env UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"
cp -r x.er big.er
wo=$(pkt_off big.er/iotrace 8 16) # the first write(): a.dat's 100 bytes
so=$(pkt_off big.er/synctrace 5)  # the first pthread_mutex_lock
if [ -n "$wo" ] && [ -n "$so" ]; then
	poke_max big.er/iotrace $((wo + 32))  # bytes
	poke_max big.er/iotrace $((wo + 24))  # dur_ns
	poke_max big.er/synctrace $((so + 24)) # wait_ns
	rc 0 "huge I/O sizes and waits: -io -iostacks -sync -threads -header" \
		$UB "$SONDE" print -io -iostacks -sync -threads -header big.er
	grep '^I/O tracing:' out.txt | sed 's/  */ /g' >bigh.txt
	same "huge I/O sizes: -header's bytes written wrap around" bigh.txt \
		"I/O tracing: 15 calls, 600 bytes read, -9223372036854774309 bytes written, 1 errors"
	rc 0 "huge I/O sizes and waits: csv" $UB "$SONDE" print -printmode csv -io -iostacks -sync big.er
	awk -F, 'NR == 2 { print $1 "," $5 }' out.txt >bigio.txt
	same "huge I/O sizes: -io's <Total> write bytes wrap around (INT64_MAX + 1500)" bigio.txt \
		"<Total>,-9223372036854774309"
	rc 0 "huge I/O sizes and waits: json" $UB "$SONDE" print -printmode json -io -iostacks -sync big.er
	rc 0 "huge waits: agg sums" $UB "$SONDE" agg 'sync { @ = sum(wait); } io { @b = sum(bytes); @t[tid] = sum(dur); }' big.er
else
	notok "damaged values: no write or sync packet found in x.er's first blocks"
fi

# ---- no data of the kind ------------------------------------------------------------

rc 2 "-io without I/O tracing: exit 2" "$SONDE" print -io h.er
same "-io without I/O tracing: the message" err.txt "sonde print: h.er has no I/O tracing data (collect with -i on)"
rc 2 "-leaks without heap tracing: exit 2" "$SONDE" print -leaks i.er
same "-leaks without heap tracing: the message" err.txt "sonde print: i.er has no heap tracing data (collect with -H on)"
rc 2 "-heapstat without heap tracing: exit 2" "$SONDE" print -heapstat i.er
rc 2 "-sync without sync tracing: exit 2" "$SONDE" print -sync i.er
same "-sync without sync tracing: the message" err.txt "sonde print: i.er has no sync wait tracing data (collect with -s on)"
rc 0 "-io over two experiments, one without I/O data" "$SONDE" print -printmode csv -io h.er x.er
awk -F, 'NR == 2 { print $1 "," $2 "," $5 }' out.txt >two.txt
same "-io over h.er and x.er: x.er's totals" two.txt "<Total>,600,1600"

# ---- sonde agg: heap -------------------------------------------------------------------

"$SONDE" agg 'heap { @[func] = quantize(size); }' h.er >q.txt 2>q.err
aggrows q.txt
sort q.txt.q >q.sorted
same "agg heap: @[func] = quantize(size)" q.sorted "$(sort <<'EOF'
<unknown> 0 12
big 16384 1
churn 128 2
churn 256 4
churn 512 3
churn 64 1
leak_one 2048 1
leak_one 512 1
leak_two 4096 1
zeroed 512 1
EOF
)"
"$SONDE" agg 'heap { @[heapfunc, event, leaked] = count(); @b[heapfunc, event, leaked] = sum(size); }' h.er >hc.txt 2>&1
awk 'NF { $1 = $1; print }' hc.txt >hc.p
same "agg heap: heapfunc, event, leaked" hc.p "calloc alloc 0 1
malloc alloc 1 3
malloc alloc 0 11
free free 0 12
free free 0 0
calloc alloc 0 1000
malloc alloc 1 9000
malloc alloc 0 23520"
"$SONDE" agg 'heap /leaked/ { @[func, caller] = sum(size); }' h.er >hl.txt 2>&1
awk 'NF { $1 = $1; print }' hl.txt >hl.p
same "agg heap: leaked bytes by func and caller" hl.p "leak_one heap_work 4000
leak_two heap_work 5000"
rc 2 "agg heap: an unknown field is a compile error" "$SONDE" agg 'heap { @[wait] = count(); }' h.er
grep -q "unknown field 'wait' for heap events (their fields: tid, time, size, addr, func, caller, heapfunc, event, leaked; and pid, rank)" err.txt &&
	ok "agg heap: the error lists the fields" || { notok "agg heap: field error message"; sed 's/^/#   /' err.txt; }

# ---- sonde agg: sync --------------------------------------------------------------------

"$SONDE" agg 'sync { @[object] = llquantize(wait, 10, 3, 9, 10); }' x.er >ll.txt 2>&1
aggrows ll.txt
# Keys are the objects; map them to the functions -sync lists for them.
awk -F, 'NR > 2 { print $1, $2 }' sync.csv >objs.txt
awk 'NR == FNR { f[$1] = $2; next } { $1 = f[$1]; print }' objs.txt ll.txt.q | sort >ll.sorted
# The timed waits end at their timeouts (50 and 100 ms; up to a
# millisecond less as recorded, above) plus the wake-up's lateness, which
# a busy machine stretches past a 10 ms bucket (a 60 ms bucket was seen at
# load 10): each must be in its own decade's buckets from the bucket below
# its timeout on, with one wait; the three uncontended locks under
# 1 ms (under 1 us on an idle machine; a preemption inside one was seen
# to make it 20 us while other tests ran).
if awk '$1 == "pthread_cond_timedwait" && $2 >= 40000000 && $2 <= 90000000 && $3 == 1 { c++ }
	$1 == "pthread_mutex_lock" && $2 == "<" && $3 == 1000 { m += $4; next }
	$1 == "pthread_mutex_lock" && $2 >= 1000 && $2 < 1000000 { m += $3; next }
	$1 == "pthread_mutex_lock" { bad++ }
	$1 == "sem_timedwait" && $2 >= 90000000 && $2 <= 900000000 && $3 == 1 { s++ }
	END { exit !(c == 1 && m == 3 && s == 1 && !bad) }' ll.sorted; then
	ok "agg sync: @[object] = llquantize(wait, 10, 3, 9, 10): $(tr '\n' ';' <ll.sorted)"
else
	notok "agg sync: @[object] = llquantize(wait, 10, 3, 9, 10)"
	sed 's/^/#     /' ll.sorted
fi
"$SONDE" agg 'sync { @[syncfunc, func, caller, result] = count(); @w[syncfunc] = min(wait); }' x.er >sc.txt 2>&1
awk 'NF { $1 = $1; print }' sc.txt | head -n 3 | sort >sc.p
same "agg sync: syncfunc, func, caller, result" sc.p "pthread_cond_timedwait sync_work main 110 1
pthread_mutex_lock sync_work main 0 3
sem_timedwait sync_work main 110 1"
awk 'NF == 2 && $1 == "sem_timedwait" && $2 >= 99000000 { a = 1 } NF == 2 && $1 == "pthread_cond_timedwait" && $2 >= 49000000 { b = 1 } END { exit !(a && b) }' sc.txt &&
	ok "agg sync: min(wait) of the timed waits" || { notok "agg sync: min(wait)"; sed 's/^/#   /' sc.txt; }
"$SONDE" agg 'sync /time > 0 && tid > 0/ { @ = count(); }' x.er >st.txt 2>&1
awk 'NF { $1 = $1; print }' st.txt >st.p
same "agg sync: time and tid" st.p "5"

# ---- sonde agg: io ------------------------------------------------------------------------

"$SONDE" agg 'io /iofunc == "write"/ { @[file] = sum(bytes); }' x.er >w.txt 2>&1
awk 'NF { $1 = $1; print }' w.txt >w.p
same "agg io: write bytes by file" w.p "$D/a.dat 600
$D/b.dat 1000"
"$SONDE" agg 'io { @[iofunc, file, err] = count(); }' x.er >ic.txt 2>&1
awk 'NF { $1 = $1; print }' ic.txt | sort >ic.p
same "agg io: calls by iofunc, file, err" ic.p "$(sort <<EOF
close $D/a.dat 0 2
close $D/b.dat 0 1
open $D/a.dat 0 2
open $D/b.dat 0 1
read $D/a.dat 0 4
read <fd -1> 9 1
write $D/a.dat 0 3
write $D/b.dat 0 1
EOF
)"
"$SONDE" agg 'io /bytes > 0/ { @[func, caller] = sum(bytes); @f[fd] = count(); } io /dur <= 0/ { @bad = count(); }' x.er >if.txt 2>&1
awk 'NF { $1 = $1; print }' if.txt >if.p
same "agg io: func, caller, fd, dur" if.p "io_work main 2200
3 7"
rc 2 "agg io on an experiment without I/O tracing: exit 2" "$SONDE" agg 'io { @ = count(); }' h.er
grep -q "io events need an experiment that has them (this input has BEGIN, END, profile, sync, heap)" err.txt &&
	ok "agg io without I/O tracing: the message" || { notok "agg io: message"; sed 's/^/#   /' err.txt; }
rc 0 "agg: profile, sync, heap and io clauses in one program" "$SONDE" agg 'profile { @p = count(); } sync { @s = count(); } heap { @h = count(); } io { @i = count(); }' x.er

# ---- a short fuzz run of the reader, the trace views, -dump and agg on traced seeds ---------
# (tests/fuzz/run.sh runs long; tests/t20-print-views.sh fuzzes untraced seeds)

check "traceviews collected with -p hi -s all -H on -i on" "$SONDE" collect -p hi -s all -H on -i on -o p.er "$F" "$D"
san=
nm "$B/libsonde.a" 2>/dev/null | grep -q __asan_ && san=-fsanitize=address,undefined # an ASAN=1 build
if cc -std=gnu11 -O1 $san -I"$TOP/include" -I"$TOP/lib" -o fuzz_reader "$TOP/tests/fuzz/fuzz_reader.c" \
	"$B/libsonde.a" $LIBSONDE_LIBS 2>fz.err; then
	if UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		./fuzz_reader -n 300 -seed 1 -crashes "$TMP" p.er x.er >fz.txt 2>&1; then
		ok "fuzz smoke (traced seeds): $(head -n 1 fz.txt | cut -d' ' -f2-3), no crash"
	else
		notok "fuzz smoke (traced seeds): the reader, a view or agg crashed"
		sed 's/^/#   /' fz.txt | tail -5
	fi
	if grep -Eq ' [1-9][0-9]* trace events read' fz.txt; then
		ok "fuzz smoke (traced seeds): trace events were read"
	else
		notok "fuzz smoke (traced seeds): no trace events read"
		sed 's/^/#   /' fz.txt | tail -3
	fi
else
	notok "fuzz smoke (traced seeds): the fuzz target does not build"
	sed 's/^/#   /' fz.err | head -5
fi

# -header in csv carries the traced kinds' totals (json has the same keys).
"$SONDE" print -printmode csv -header x.er >hdr.csv 2>&1
hl=$(awk -F, '$1 == "heap.leaks" || $1 == "heap.leaked_bytes" { printf "%s%s", sep, $2; sep = "," }' hdr.csv)
if [ "$hl" = "3,9000" ]; then ok "-header csv: heap.leaks and heap.leaked_bytes = 3,9000"; else notok "-header csv: heap leaks '$hl', wanted 3,9000"; fi
check "-header csv: sync and io totals present" grep -q '^io.calls,' hdr.csv
"$SONDE" print -printmode csv -header h.er >hdr2.csv 2>&1
check "-header csv: a kind not traced is null" grep -q '^io,' hdr2.csv
