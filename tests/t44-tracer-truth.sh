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

# ---- stdio under -i on ----
# in.txt: 30 lines of 0 to 8 words, some longer than the fixture's 31-byte
# fgets buffer; stdin.txt for getchar.
awk 'BEGIN { for (i = 0; i < 30; i++) { s = ""; for (j = 0; j <= i % 9; j++) s = s "word" j * i " "; print s } }' \
	>in.txt
printf 'hello stdin\nsecond line\n' >stdin.txt
for B in stdioio stdioio_fortify; do
	D=$TMP/$B
	rm -rf "$D" && mkdir -p "$D" && cp in.txt "$D/"
	"$FIX/$B" "$D" <stdin.txt >/dev/null 2>plain.err
	prc=$?
	cp "$D/out.txt" plain.out.txt 2>/dev/null
	cp "$D/dp.txt" plain.dp.txt 2>/dev/null
	"$SONDE" collect -p off -i on -o $B.er "$FIX/$B" "$D" <stdin.txt >/dev/null 2>$B.err
	crc=$?
	sed -n '/^truth \|^file /p' $B.err >$B.truth
	if [ $prc = 0 ] && [ $crc = 0 ] && cmp -s plain.err $B.err && cmp -s plain.out.txt "$D/out.txt" &&
		cmp -s plain.dp.txt "$D/dp.txt"; then
		ok "$B: same return values, output and files under -i on"
	else
		notok "$B: plain rc=$prc, collected rc=$crc, or different output"
		diff plain.err $B.err | head -5 | sed 's/^/#   /'
	fi
	"$SONDE" print -dump io $B.er >$B.dump 2>&1
	# calls and bytes per func, and each event's leaf frame
	awk '/^io [0-9]/ { f = b = ""; for (i = 1; i <= NF; i++) { if ($i == "func") f = $(i + 1); if ($i == "bytes") b = $(i + 1) }
		n[f]++; s[f] += b; want_leaf = 1; next }
	want_leaf && /^    #0 / { if ($3 !~ /^stdioio(_fortify)?\+0x/) bad++; want_leaf = 0 }
	END { for (f in n) printf "%s calls=%d bytes=%d\n", f, n[f], s[f]; printf "badleaf %d\n", bad }' $B.dump >$B.got
	nk=0
	while read -r _ kind want; do
		nk=$((nk + 1))
		got=$(sed -n "s/^$kind //p" $B.got)
		if [ "$got" = "$want" ]; then ok "$B: $kind $want"; else
			notok "$B: $kind recorded ${got:-nothing}, truth $want"; fi
	done < <(grep '^truth ' $B.truth)
	[ "$nk" = 11 ] || notok "$B: truth for $nk kinds, want 11"
	# The bytes of a stdio flush reach the kernel by glibc's internal
	# write: no read or write event of its own (the fixture makes none).
	rw=$(grep -E '^(read|write) ' $B.got | tr '\n' ' ')
	if [ -z "$rw" ]; then ok "$B: the stdio buffers' own reads and writes are no events"; else
		notok "$B: system call events $rw"; fi
	if grep -q '^badleaf 0$' $B.got; then ok "$B: every event's leaf frame is in the fixture"; else
		notok "$B: $(sed -n 's/^badleaf //p' $B.got) events with a leaf outside the fixture"; fi
	# -io: per file, the calls and bytes read and written
	"$SONDE" print -printmode csv -io $B.er >$B.io 2>&1
	while read -r _ name rest; do
		case $name in
		stdout) path=/dev/null ;;
		stdin) path=$TMP/stdin.txt ;;
		*) path=$D/$name ;;
		esac
		got=$(awk -F, -v p="$path" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$1 == p { printf "writes=%s write_bytes=%s reads=%s read_bytes=%s", $c["iowritecnt"],
				$c["iowritebytes"], $c["ioreadcnt"], $c["ioreadbytes"] }' $B.io)
		if [ "$got" = "$rest" ]; then ok "$B: -io $name: $rest"; else
			notok "$B: -io $path: ${got:-no row}, truth $rest"; fi
	done < <(grep '^file ' $B.truth)
done
