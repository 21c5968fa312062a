#!/bin/sh
# Scale of reading (issue 15 item 12): the reader's memory grows with the
# live heap blocks and the distinct stacks, not with the events, and a
# sparse data file is read by its data, not its size.
#   heapchurn (bench/heapbench.c): 3 M malloc/free pairs through a ring of 256 live blocks,
#   every 100000th block leaked (it prints its own count).  Before the fix
#   -header held every event (about 45 bytes each: 270 MB here); now its
#   resident size is the mapped file plus a little.
#   sparse: a heap experiment whose heaptrace is extended to 2 GiB by
#   truncate (a hole): before, the reader touched every page of it (2 GiB
#   resident, tens of seconds); now it skips the hole.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

if [ ! -x /usr/bin/time ]; then
	ok "# SKIP /usr/bin/time is not installed"
	exit 0
fi

"$SONDE" collect -p off -H on -o churn.er "$FIX/heapchurn" 3 >truth.txt 2>err.txt
leaks=$(awk '{print $2 + 1}' truth.txt)        # and the stdout buffer
leaked=$(awk '{print $4 + 4096}' truth.txt)
fsize=$(stat -c %s churn.er/heaptrace)
note "heapchurn: $(cat truth.txt); heaptrace $fsize bytes"

# RSS over the mapped heaptrace, in KiB: what the reader itself holds
over() { awk -v f="$fsize" '{ printf "%d", $2 - f / 1024 }' "$1"; }

/usr/bin/time -f "%e %M" -o time.hdr "$SONDE" print -header churn.er >hdr.txt 2>&1
note "-header: $(awk '{print $1 " s, max RSS " $2 " KiB"}' time.hdr)"
check "-header: the leaks are the program's ($leaks, $leaked bytes)" \
	grep -q "allocations ([0-9]* bytes), [0-9]* frees, $leaks leaks ($leaked bytes)" hdr.txt
check "-header: 3000001 allocations" grep -q "Heap tracing: *3000001 allocations" hdr.txt
o=$(over time.hdr)
check "-header holds at most 40 MiB over the mapped file (held $o KiB; 6 M events)" test "$o" -lt 40960

/usr/bin/time -f "%e %M" -o time.hs "$SONDE" print -heapstat churn.er >hs.txt 2>&1
note "-heapstat: $(awk '{print $1 " s, max RSS " $2 " KiB"}' time.hs)"
check "-heapstat: the leaks" grep -q "Leaks: $leaks\$" hs.txt
o=$(over time.hs)
check "-heapstat holds at most 40 MiB over the mapped file (held $o KiB)" test "$o" -lt 40960

# The views that need every event still give the same totals.
"$SONDE" print -printmode csv -metrics e.heapleakcnt:e.heapleakbytes:name -functions churn.er >fn.txt 2>&1
check "-functions: the same leaks" grep -q "^<Total>,,$leaks,$leaked$" fn.txt

# sparse: a small experiment, its heaptrace extended by a 2 GiB hole
"$SONDE" collect -p on -H on -o sp.er "$FIX/heapchurn" 0.05 >/dev/null 2>&1
"$SONDE" print -header sp.er >sp.before 2>&1
truncate -s 2G sp.er/heaptrace
/usr/bin/time -f "%e %M" -o time.sp timeout 60 "$SONDE" print -header sp.er >sp.after 2>&1
note "-header of a 2 GiB sparse heaptrace: $(awk '{print $1 " s, max RSS " $2 " KiB"}' time.sp)"
check "sparse: max RSS under 100 MiB" awk '{ exit !($2 < 102400) }' time.sp
check "sparse: under 10 s" awk '{ exit !($1 < 10) }' time.sp
grep '^Heap tracing' sp.after >sp.after.heap
check "sparse: the same heap totals as before the hole" sh -c "grep '^Heap tracing' sp.before | cmp -s - sp.after.heap"
check "sparse: no read problem" grep -q "^Read problems (0)" sp.after
