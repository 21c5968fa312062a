# Heap tracing (-H on) against the heapleaks fixture's own truth: per
# allocating function, exact Allocations, Bytes Allocated, Leaks and Bytes
# Leaked, through malloc, calloc, realloc (NULL, growing, shrinking, p=0),
# posix_memalign, aligned_alloc, memalign, valloc, reallocarray, strdup and
# mmap/munmap, with blocks allocated on one thread and freed on another;
# with clock profiling off and at -p hi.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
F=$FIX/heapleaks

"$F" >plain.out 2>&1
prc=$?
M=e.heapalloccnt:e.heapallocbytes:e.heapleakcnt:e.heapleakbytes:i.heapalloccnt:i.heapallocbytes:i.heapleakcnt:i.heapleakbytes:name
for p in off hi; do
	"$SONDE" collect -p $p -H on -o h$p.er "$F" >col.out 2>&1
	crc=$?
	if [ $prc = 0 ] && [ $crc = 0 ] && cmp -s plain.out col.out; then
		ok "-p $p -H on: runs with unchanged output (errno and results unchanged)"
	else
		notok "-p $p -H on: plain rc=$prc, collected rc=$crc"
		diff plain.out col.out | sed 's/^/#   /'
	fi
	check "-p $p: log.xml declares heaptrace" grep -q 'dataformat file="heaptrace"' h$p.er/log.xml
	"$SONDE" print -printmode csv -metrics $M -functions h$p.er >f$p.csv 2>&1
	# f_strdup's allocation is made by strdup: its inclusive metrics.
	grep '^truth ' plain.out | while read -r _ fn a b l lb; do
		a=${a#allocs=}; b=${b#bytes=}; l=${l#leaks=}; lb=${lb#leakbytes=}
		if [ "$fn" = f_strdup ]; then
			got=$(awk -F, -v f="$fn" '$1 == f { print $7 "," $8 "," $9 "," $10 }' f$p.csv)
		else
			got=$(awk -F, -v f="$fn" '$1 == f { print $3 "," $4 "," $5 "," $6 }' f$p.csv)
		fi
		[ -z "$got" ] && [ "$a" = 0 ] && got=0,0,0,0
		if [ "$got" = "$a,$b,$l,$lb" ]; then
			ok "-p $p: $fn allocs,bytes,leaks,leaked = $got"
		else
			notok "-p $p: $fn allocs,bytes,leaks,leaked = '$got', truth $a,$b,$l,$lb"
		fi
	done
	# Every free the fixture makes is of a block it allocated while
	# traced, the ping-pong's too, whose events on one address alternate
	# between two threads within a tick of the tracing clock.
	"$SONDE" print -printmode csv -heapstat h$p.er >hs$p.csv 2>&1
	got=$(awk -F, 'NR == 2 { print $6 }' hs$p.csv)
	if [ "$(head -1 hs$p.csv | cut -d, -f6)" = unmatched_frees ] && [ "$got" = 0 ]; then
		ok "-p $p: no unmatched frees"
	else
		notok "-p $p: unmatched frees '$got'"
		head -2 hs$p.csv | sed 's/^/#   /'
	fi
done

# The dump shows realloc as a free of the old block and an allocation of
# the new one, and frees without stacks.
"$SONDE" print -dump heap hoff.er >dump.txt 2>&1
check "dump: realloc frees" grep -q 'func realloc  free' dump.txt
check "dump: realloc allocates" grep -q 'func realloc  alloc' dump.txt
check "dump: munmap recorded" grep -q 'func munmap  free' dump.txt
check "dump: the failed huge malloc is recorded as failed" grep -q 'func malloc  failed' dump.txt

# Samples in the tracer's own code (its start-up clock calibration) are
# folded into the target's frames, like the collector's.
"$SONDE" print -printmode csv -metrics e.totalcpu:name -functions hhi.er >hicpu.csv 2>&1
if grep -q ',libsonde_' hicpu.csv; then
	notok "-p hi -H on: a function of sonde's own libraries is listed"
	grep ',libsonde_' hicpu.csv | sed 's/^/#   /'
else
	ok "-p hi -H on: no function of sonde's own libraries is listed"
fi

# Nothing of the collector's own allocations is charged to the target.
if grep -q "pthread_getattr_np" foff.csv; then
	notok "the collector's pthread_getattr_np allocations are charged"
else
	ok "the collector's own allocations are not recorded"
fi

# A kind that is off costs nothing: without -H the heap library is not even loaded.
"$SONDE" collect -p off -o nh.er "$F" >/dev/null 2>&1
if [ ! -e nh.er/heaptrace ] && ! grep -q heaptrace nh.er/log.xml; then
	ok "without -H: no heap data, the tracer is not preloaded"
else
	notok "without -H: heap data present"
fi
"$SONDE" collect -H maybe -o bad.er "$F" >bad.out 2>&1
brc=$?
if [ $brc = 2 ] && [ ! -e bad.er ] && [ "$(wc -l <bad.out)" = 1 ]; then ok "bad -H value: one line, exit 2, nothing created"; else notok "bad -H value: rc=$brc"; fi

# C++: new, new[], delete, std::vector, traced through operator new (the
# allocating function is the caller of operator new: inclusive metrics).
CX=$FIX/cxxnew
"$CX" >cx.plain 2>&1
"$SONDE" collect -p off -H on -o cx.er "$CX" >cx.col 2>&1
check "C++ fixture: unchanged output" cmp cx.plain cx.col
"$SONDE" print -printmode csv -metrics i.heapalloccnt:i.heapallocbytes:i.heapleakcnt:i.heapleakbytes:name \
	-functions cx.er >cx.csv 2>&1
grep '^truth ' cx.plain | while read -r _ fn a b l lb; do
	a=${a#allocs=}; b=${b#bytes=}; l=${l#leaks=}; lb=${lb#leakbytes=}
	got=$(awk -F, -v f="$fn()" '$1 == f { print $3 "," $4 "," $5 "," $6 }' cx.csv)
	if [ "$got" = "$a,$b,$l,$lb" ]; then
		ok "C++: $fn allocs,bytes,leaks,leaked = $got"
	else
		notok "C++: $fn allocs,bytes,leaks,leaked = '$got', truth $a,$b,$l,$lb"
	fi
done
check "C++: the allocations are made by operator new" grep -q '^"\?operator new' cx.csv
