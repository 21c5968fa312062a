# I/O tracing (-i on): the fixture iofiles does known reads and writes
# through system calls (and their aliases: open64, pread64, __read_chk,
# ...), dup'ed descriptors, stdio, a pipe and four threads, and prints its
# own truth per file.  Under `sonde collect -i on` its output is unchanged,
# and `sonde print -dump io` shows per file exactly the calls and bytes of
# the truth, the failures with their errno, dup'ed descriptors named after
# their file, call stacks whose leaf is the call site, and nothing of the
# forked child.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
F=$FIX/iofiles
D=$TMP/d

# The same directory and output file name for both runs, so that the
# printed names match.
mkdir -p "$D"
"$F" "$D" </dev/null >out 2>&1
prc=$?
mv out plain.out
rm -rf "$D" && mkdir -p "$D"
"$SONDE" collect -p off -i on -o io.er "$F" "$D" </dev/null >out 2>&1
crc=$?
mv out col.out
# Pipe inode numbers differ from run to run.
norm() { sed 's/pipe:\[[0-9]*\]/pipe:[N]/' "$1"; }
if [ $prc = 0 ] && [ $crc = 0 ] && norm plain.out >plain.n && norm col.out >col.n && cmp -s plain.n col.n; then
	ok "iofiles runs to completion with unchanged output under -i on"
else
	notok "iofiles: plain rc=$prc, collected rc=$crc"
	diff plain.out col.out | sed 's/^/#   /' | head -20
fi

check "iotrace data file written" test -s io.er/iotrace
if grep -q 'events were lost' io.er/log.xml; then
	notok "no I/O events lost"
	grep 'lost' io.er/log.xml | sed 's/^/#   /'
else ok "no I/O events lost"; fi

# The founder's own events (its forked child has a sub-experiment).
"$SONDE" print -experiment_select 1 -dump io io.er >dump.txt 2>dump.err
check "sonde print -dump io reads the experiment" test -s dump.txt
"$SONDE" print -dump io io.er/_f1.er >child.txt 2>child.err
check "the forked child's sub-experiment has exactly its open, 99-byte write and close" \
	sh -c "[ \$(grep -c '^io [0-9]' child.txt) = 3 ] && grep -q 'func write .*bytes 99 .*child.dat' child.txt &&
	grep -q 'func open.*child.dat' child.txt && grep -q 'func close.*child.dat' child.txt"

# One line per event: "func F<TAB>fd N<TAB>bytes B<TAB>err E<TAB>tid T<TAB>
# stack S<TAB>leaf L<TAB>file NAME", the leaf being the first frame line.
awk '
function flush() { if (ev != "") print ev "\t" leaf "\t" file; ev = "" }
/^io [0-9]/ {
	flush()
	i = index($0, "  file ")
	file = substr($0, i + 7)
	n = split(substr($0, 1, i - 1), f, "  ")
	for (k = 1; k <= n; k++) { split(f[k], kv, " "); v[kv[1]] = kv[2] }
	ev = v["func"] "\t" v["fd"] "\t" v["bytes"] "\t" v["err"] "\t" v["tid"] "\t" v["stack"]
	leaf = "-"
	next
}
/^    #0 / { if (ev != "") leaf = $3; next }
END { flush() }' dump.txt >events.tsv
nev=$(wc -l <events.tsv)
note "$nev I/O events"

# Per file: reads, read bytes, writes, write bytes, other calls.
awk -F'\t' '
{
	f = $8
	if ($1 ~ /^(read|pread|readv|preadv|fread)$/) { r[f]++; rb[f] += $3 }
	else if ($1 ~ /^(write|pwrite|writev|pwritev|fwrite)$/) { w[f]++; wb[f] += $3 }
	else o[f]++
	seen[f] = 1
}
END {
	for (f in seen)
		printf "%s reads=%d read_bytes=%d writes=%d write_bytes=%d other=%d\n", f, r[f], rb[f], w[f], wb[f], o[f]
}' events.tsv >recorded.txt

sed -n 's/^truth //p' col.out >truth.txt
ntruth=$(wc -l <truth.txt)
if [ "$ntruth" -ge 15 ]; then ok "fixture printed its truth for $ntruth files"; else notok "fixture truth: $ntruth files"; fi
while read -r line; do
	name=${line% reads=*}
	want=${line#"$name "}
	got=$(awk -v n="$name" '{ i = index($0, " reads="); if (substr($0, 1, i - 1) == n) print substr($0, i + 1) }' recorded.txt)
	[ -n "$got" ] || got="reads=0 read_bytes=0 writes=0 write_bytes=0 other=0"
	if [ "$got" = "$want" ]; then ok "$name: recorded exactly $want"; else
		notok "$name: recorded $got, truth $want"; fi
done <truth.txt

# Nothing else in the fixture's directory was recorded (child.dat is
# written by the forked child only).
extra=$(awk -F'\t' -v d="$D/" 'substr($8, 1, length(d)) == d || $8 == "at.dat" { print $8 }' events.tsv | sort -u |
	while read -r f; do grep -qxF "$f" <(sed 's/ reads=.*//' truth.txt) || echo "$f"; done)
if [ -z "$extra" ]; then ok "no events on files outside the truth"; else notok "unexpected files: $extra"; fi
if awk -F'\t' -v f="$D/child.dat" '$8 == f { exit 1 }' events.tsv; then
	ok "fork: the child's writes are not in the parent's experiment"
else notok "fork: events on child.dat recorded"; fi

# Failures: exactly the fixture's, with their errno and file.
sed -n 's/^error \([a-z0-9_]*\) errno=\([0-9]*\) file=\(.*\)$/\1 \2 \3/p' col.out | sort >errs.want
awk -F'\t' '$4 != 0 { print $1 " " $4 " " $8 }' events.tsv | sort >errs.got
nerr=$(sed -n 's/^errors //p' col.out)
if [ "${nerr:-0}" -ge 5 ] && [ "$(wc -l <errs.want)" = "$nerr" ] && cmp -s errs.want errs.got; then
	ok "the $nerr failed calls recorded with their errno (ENOENT, EBADF) and file"
else
	notok "failed calls: want $(tr '\n' ';' <errs.want), got $(tr '\n' ';' <errs.got)"
fi
# No file: the read of a closed descriptor, and fflush(NULL) (before fork).
nofile=$(awk -F'\t' '$8 == "-" && !($1 == "read" && $4 == 9) && !($1 == "fflush" && $2 == -1)' events.tsv)
if [ -z "$nofile" ]; then ok "only the read of a closed descriptor and fflush(NULL) have no file"; else
	notok "events without a file: $(echo "$nofile" | head -5 | tr '\n' ';')"; fi

# dup, dup2, dup3: the new descriptor is named after sys.dat as opened
# (not as /proc/self/fd names it), and so is every call made on it until it
# is closed.
set -- $(awk -F'\t' -v f="$D/./sys.dat" '
$1 ~ /^dup[23]?$/ { if ($8 == f) { dup[$2] = 1; ndup++ } else bad++; next }
($2 in dup) { if ($8 == f) used++; else bad++; if ($1 == "close") delete dup[$2] }
END { print ndup + 0, used + 0, bad + 0 }' events.tsv)
if [ "$1" -ge 4 ] && [ "$2" -ge 7 ] && [ "$3" = 0 ]; then
	ok "dup'ed descriptors map back to sys.dat ($1 dups, $2 calls on them)"
else notok "dup'ed descriptors: $1 dups, $2 calls on them, $3 with another file"; fi

# Call stacks: every event has one whose leaf is the call site in the
# fixture (sonde's own frames dropped); the threads' calls are in
# thread_main, on four threads besides main's.
nostack=$(awk -F'\t' '$6 == "0x0" || $7 !~ /^iofiles\+0x/' events.tsv | wc -l)
if [ "$nev" -gt 0 ] && [ "$nostack" = 0 ]; then ok "every event's stack leaf is the call site in iofiles"; else
	notok "$nostack of $nev events without a leaf in iofiles"
	awk -F'\t' '$6 == "0x0" || $7 !~ /^iofiles\+0x/' events.tsv | head -5 | sed 's/^/#   /'
fi
TM=$(sym_range "$F" thread_main)
set -- $(awk -F'\t' -v d="$D/thr" -v tm="$TM" '
function hex(s, i, v) {
	s = tolower(s); sub(/^0x/, "", s); v = 0
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
BEGIN { split(tm, a, ":"); lo = hex(a[1]); hi = lo + hex(a[2]) }
substr($8, 1, length(d)) == d {
	n++; tid[$5] = 1
	pc = hex(substr($7, 9))
	if (pc > lo && pc <= hi) inside++
}
END { for (t in tid) nt++; print n + 0, inside + 0, nt + 0 }' events.tsv)
if [ -n "$TM" ] && [ "$1" = 1012 ] && [ "$2" = "$1" ] && [ "$3" = 4 ]; then
	ok "threads: $1 events on 4 threads, each leaf in thread_main"
else notok "threads: $1 events (want 1012), $2 with the leaf in thread_main, $3 threads (want 4)"; fi

# Without -i the tracing library is not loaded and nothing is traced.
rm -rf "$D" && mkdir -p "$D"
"$SONDE" collect -o noio.er "$F" "$D" </dev/null >out 2>&1
if [ $? = 0 ] && [ ! -e noio.er/iotrace ]; then ok "without -i: no iotrace"; else notok "without -i: iotrace exists or the run failed"; fi
