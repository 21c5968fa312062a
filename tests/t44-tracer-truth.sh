# Tracers against their fixtures' truth (issue 14, defects 6 and 8).
#
# Heap (-H on): mmapheap maps a file privately and shared, /dev/zero and
# shared anonymous memory (none of it heap), anonymous private mappings
# (munmap'ed, mremap'ed, leaked) and malloc'ed blocks, and prints the
# truth: allocations, bytes, frees and leaks of the heap alone.  The
# -heapstat and -leaks views must show exactly that.
#
# I/O (-i on): stdioio writes and reads known bytes through each stdio
# call kind (printf, fprintf, dprintf, puts, fputs, putc, fwrite, fgets,
# getc, getline, fread, their v* and fortified forms), to a file and to
# stdout on /dev/null, built plain and with -D_FORTIFY_SOURCE=2, and
# prints the calls and bytes per kind.  -dump io must record exactly
# those, the underlying write of a stdio flush being no event of its own,
# and -io must show the files' totals.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# ---- heap ----
mkdir -p mh
"$SONDE" collect -p off -H on -o mh.er "$FIX/mmapheap" "$TMP/mh" >mh.out 2>mh.err
check "mmapheap runs under -H on" grep -q '^truth ' mh.out
want=$(sed -n 's/^truth //p' mh.out)
"$SONDE" print -printmode csv -heapstat mh.er >hs.csv 2>hs.err
got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) k[i] = $i; next }
	NR == 2 { for (i = 1; i <= NF; i++) v[k[i]] = $i
		printf "allocations=%s bytes=%s frees=%s leaks=%s leaked_bytes=%s", v["allocations"], v["bytes"],
			v["frees"], v["leaks"], v["leaked_bytes"]
		unmatched = v["unmatched_frees"]; exit }
	END { print ""; print unmatched }' hs.csv)
if [ "$(echo "$got" | head -1)" = "$want" ]; then ok "-heapstat: exactly the heap's $want"; else
	notok "-heapstat: $(echo "$got" | head -1), truth $want"; fi
if [ "$(echo "$got" | sed -n 2p)" = 0 ]; then ok "-heapstat: no unmatched frees"; else
	notok "-heapstat: $(echo "$got" | sed -n 2p) unmatched frees"; fi
# -leaks: the total line "N leaks, B bytes"
set -- $(sed -n '1s/^\([0-9]*\) leaks*, \([0-9]*\) bytes$/\1 \2/p' <("$SONDE" print -leaks mh.er 2>&1))
wl=$(echo "$want" | sed 's/.*leaks=\([0-9]*\) leaked_bytes=\([0-9]*\).*/\1 \2/')
if [ "${1:-x} ${2:-x}" = "$wl" ]; then ok "-leaks: $1 leaks, $2 bytes as the truth"; else
	notok "-leaks: ${1:-?} leaks, ${2:-?} bytes, truth $wl"; fi
# No event of a mapping that is not heap: every mmap/mremap allocation
# is anonymous private, and no munmap event at all is of a file mapping
# (the fixture's other mappings are a few MB + 4 KB long; its heap
# mappings are multiples of 64 KB under 1 MB, or 1 MB grown by mremap).
"$SONDE" print -dump heap mh.er >mh.dump 2>&1
nfile=$(awk '/^heap [0-9]/ && / func (mmap|munmap|mremap) / {
	for (i = 1; i <= NF; i++) if ($i == "bytes") b = $(i + 1)
	if (b % 65536 || b > 1048576) n++ } END { print n + 0 }' mh.dump)
if [ "$nfile" = 0 ]; then ok "no mmap/munmap/mremap event of a file, device or shared mapping"; else
	notok "$nfile mapping events of non-heap sizes"
	awk '/^heap [0-9]/ && / func (mmap|munmap|mremap) /' mh.dump | head -10 | sed 's/^/#   /'
fi
