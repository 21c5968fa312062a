# The collector keeps the target as threaded as it was (issue 15, item 3):
# no thread of sonde's own in the target, so /proc/self/status and
# /proc/self/task count what the plain run counts at main, and
# unshare(CLONE_NEWUSER) (refused with EINVAL in a multithreaded process)
# behaves as in the plain run, whatever it does in this sandbox.  And glibc
# keeps its single-threaded system call path: no cancellation bookkeeping.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

"$FIX/gthr" >plain.txt 2>&1
note "plain run: $(tr '\n' ' ' <plain.txt)"
check "the plain run prints its thread count and unshare's result" \
	sh -c "grep -q '^threads 1$' plain.txt && grep -q '^unshare ' plain.txt"

i=0
for opts in "" "-H on" "-s on" "-i on" "-S 0.1" "-p hi -H on -s on -i on -S 0.1"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$SONDE" collect $opts -o g$i.er "$FIX/gthr" >out$i.txt 2>err$i.txt
	r=$?
	desc=${opts:-default options}
	if [ $r = 0 ] && diff plain.txt out$i.txt >diff$i.txt; then
		ok "$desc: thread count at main and unshare as in the plain run"
	else
		notok "$desc: exit $r; differs from the plain run:"
		sed 's/^/#   /' diff$i.txt err$i.txt | head -10
	fi
done

check "the page sonde collect shares is gone from the experiment at the end" test ! -e g6.er/.sonde-shared

# The experiments still hold what those options record.
check "-H on: heap events recorded" sh -c "'$SONDE' print -heapstat g2.er | grep -qi 'allocations'"

# Descendants get their periodic points too (sonde collect writes them for
# every recording process image): a forked child that execs sleep 0.6 s.
"$SONDE" collect -p off -S 0.1 -o fk.er "$FIX/gthr" fork 0.6 >fk.txt 2>&1
check "fork+exec under -S 0.1: the child exits 0" grep -q '^child status 0$' fk.txt
# (-samples of the founder lists the whole tree's samples: both processes'.)
n=$("$SONDE" print -printmode csv -samples fk.er/_f1_x1.er 2>/dev/null | awk -F, '$5 == "periodic"' | wc -l)
# 6 periods of 0.1 s; at least 4 on a loaded machine
check "the exec'd child: periodic points over its 0.6 s sleep ($n)" test "$n" -ge 4 -a "$n" -le 8
n=$("$SONDE" print -printmode csv -samples fk.er 2>/dev/null | awk -F, '$5 == "periodic"' | wc -l)
check "parent and child: periodic points over the 0.6 s each ($n)" test "$n" -ge 8 -a "$n" -le 16

# Cost: a loop of read(2), a cancellation point.  glibc runs it without
# __pthread_enable/disable_asynccancel only while the process never had a
# second thread; with a thread of sonde's own they took 2-25% of the CPU
# (25% on a loop of 1-byte reads from /dev/zero).
"$SONDE" collect -p hi -S 0.05 -o loop.er "$FIX/gthr" loop 0.6 >loop.txt 2>&1
"$SONDE" print -printmode csv -metrics e.totalcpu:name -functions loop.er >loopf.csv 2>&1
tot=$(awk -F, '$1 == "<Total>" { printf "%.4f\n", $NF / 1e9; exit }' loopf.csv)
asc=$(awk -F, 'NR > 1 && $1 ~ /asynccancel|cancel_enabled/ { s += $NF } END { printf "%.4f\n", s / 1e9 }' loopf.csv)
note "read loop: total $tot s, in glibc's asynccancel functions $asc s"
check "read loop under -p hi -S 0.05: no time in glibc's cancellation path ($asc of $tot s)" \
	awk -v a="$asc" -v t="$tot" 'BEGIN { exit !(t > 0.3 && a == 0) }'
