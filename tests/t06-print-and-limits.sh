# sonde print -header / -dump on real experiments, its errors, reading an
# experiment while it is being written, and the -t / -L limits.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

"$SONDE" collect -p hi -o a.er "$FIX/burn" 2 1 >/dev/null 2>&1
"$SONDE" print -header a.er >hdr.txt 2>&1
check "-header runs" test -s hdr.txt
check "-header shows the per-thread table" grep -q 'recorded CPU' hdr.txt
if grep -q WARNING hdr.txt; then notok "-header warns on a good experiment"; sed 's/^/#   /' hdr.txt; else
	ok "-header has no warning on a good experiment"; fi

# A thread whose recorded CPU differs from its real CPU by more than 5%
# gets a loud warning: double one thread's real CPU time in log.xml.
cp -r a.er b.er
tid=$("$EXPCHECK" threads b.er | sort -k3 -n | tail -n 1 | awk '{print $1}')
awk -v t="$tid" '/kind="thread_end"/ && index($0, "tid=\"" t "\"") {
	match($0, /cpu_ns="[0-9]+"/); v = substr($0, RSTART + 8, RLENGTH - 9)
	sub(/cpu_ns="[0-9]+"/, "cpu_ns=\"" v * 2 "\"") } { print }' a.er/log.xml >b.er/log.xml
"$SONDE" print -header b.er >hdr2.txt 2>&1
check "-header warns loudly when a thread's recorded CPU is off by more than 5%" grep -q "^WARNING:.*$tid" hdr2.txt

# -D cuts stacks at the depth limit and marks them truncated.
"$SONDE" collect -p hi -D 8 -o d.er "$FIX/burn" 1 0.5 >/dev/null 2>&1
"$SONDE" print -header d.er >hdr3.txt 2>&1
check "-D 8: deep stacks are marked truncated" grep -Eq 'Stacks: +[0-9]+ distinct, [1-9][0-9]* truncated' hdr3.txt

"$SONDE" print -dump profile a.er >dump.txt 2>&1
check "-dump profile lists samples with frames as object+offset" grep -q '#0 0x[0-9a-f]*  burn+0x' dump.txt

fails "print of a missing directory fails" "$SONDE" print -header nowhere.er
mkdir notexp
fails "print of a directory that is not an experiment fails" "$SONDE" print -header notexp
fails "unknown print command fails" "$SONDE" print -frobnicate a.er
fails "unknown sonde command fails" "$SONDE" frobnicate
"$SONDE" print -header nowhere.er 2>err.txt
check "the error is one line naming the experiment" sh -c "[ \$(wc -l <err.txt) = 1 ] && grep -q nowhere.er err.txt"

# Read an experiment while it is written: every read is clean.
"$SONDE" collect -p hi -o live.er "$FIX/burn" 1 2 >/dev/null 2>&1 &
cpid=$!
sleep 0.5
reads=0
bad=0
while kill -0 $cpid 2>/dev/null && [ $reads -lt 20 ]; do
	set -- $("$EXPCHECK" summary live.er 2>/dev/null)
	reads=$((reads + 1))
	[ "${12:-1}" = 0 ] || bad=$((bad + 1))
	sleep 0.05
done
wait $cpid
if [ $reads -gt 3 ] && [ $bad = 0 ]; then ok "$reads reads of a running experiment, all clean"; else
	notok "running experiment: $bad of $reads reads had errors"; fi

# -t stops data collection after the duration; the target runs on.
"$SONDE" collect -p hi -t 1 -o t.er "$FIX/burn" 1 2.5 >/dev/null 2>&1
rc=$?
set -- $("$EXPCHECK" summary t.er)
rec=$4
# Truth: the CPU the process used in its first second, from the usage
# counters of the sample points up to the pause at 1 s.  (Not "about 1 s":
# on a busy machine a 1-thread burn gets less than a CPU per second.)
used=$("$SONDE" print -printmode csv -samples t.er |
	awk -F, 'NR > 1 && $4 <= 1.1 { s += $12 + $13 } END { printf "%.0f", s * 1 }')
note "-t 1: recorded $rec ns, the process used $used ns until the pause"
if [ $rc = 0 ] && within "$rec" "$used" 5 && awk -v e="$("$SONDE" print -printmode csv -samples t.er | awk -F, '$5 == "pause" { print $4 }')" \
	'BEGIN { exit !(e > 0.95 && e < 1.5) }'; then
	ok "-t 1 records the first second of a 2.5 s run ($rec ns of $used ns used)"; else
	notok "-t 1: rc $rc, recorded $rec ns, used $used ns until the pause"; fi
check "-t noted in log.xml" grep -q 'duration limit' t.er/log.xml

# -L limits the data written; the target still completes.
"$SONDE" collect -p 0.1 -L 1 -o l.er "$FIX/burn" 1 3 >/dev/null 2>&1
rc=$?
size=$(du -b --apparent-size -c l.er/profile l.er/stacks | tail -n 1 | awk '{print $1}')
if [ $rc = 0 ] && [ "$size" -le 2200000 ]; then ok "-L 1 keeps the data small ($size bytes)"; else
	notok "-L 1: rc $rc, data $size bytes"; fi
check "-L noted in log.xml" grep -q 'size limit' l.er/log.xml

# A full disk: the data file stops growing, the loss is counted and logged,
# the target completes, and what was written stays readable.
mkdir small
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m tmpfs small 2>/dev/null; then
	"$SONDE" collect -p 0.1 -d small -o full.er "$FIX/burn" 1 3 >/dev/null 2>&1
	rc=$?
	set -- $("$EXPCHECK" summary small/full.er)
	if [ $rc = 0 ] && [ "${12:-1}" = 0 ] && [ "${2:-0}" -gt 0 ]; then
		ok "disk full: target completes, $2 samples readable"; else notok "disk full: rc $rc, summary: $*"; fi
	check "disk full: log.xml says the data file could not grow" grep -q 'could not grow' small/full.er/log.xml
	umount small
else
	ok "# SKIP disk-full test: cannot mount a tmpfs here"
fi
