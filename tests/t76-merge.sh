# sonde merge (doc/sonde-merge.md): a founder's sub-experiments merged
# into one experiment, serially and as an MPI program.
#  - a real run of two processes of one PIE (burn, at two ASLR addresses)
#    under sh (and sh's subshell): the merged experiment is symbolised (spin, deep, sort_cmp)
#    and each function's CPU time is exactly the sum of the processes';
#  - a synthetic job of 9 ranks (tests/tools/mergegen): the merged totals
#    are the truth's, exactly; mpirun -np 2 and -np 4, on Open MPI and on
#    MPICH, write the serial merge's bytes (diff -r);
#  - bad input: one line naming the thing, non-zero, nothing written.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
GEN=$B/tests/tools/mergegen
OMPI="mpirun.openmpi --allow-run-as-root --oversubscribe"

# ---- a real run ----
rc 0 "collect two processes of burn under sh" "$SONDE" collect -o r.er sh -c \
	"$FIX/burn 1 0.3 >a.txt & $FIX/burn 1 0.3 >b.txt; wait"
# the shell's subshell for '&' (_f1) and the two burns (_f1_x1, _f2_x1)
nsub=$(ls -d r.er/_*.er | wc -l)
check "three sub-experiments ($nsub)" [ "$nsub" = 3 ]
rc 0 "sonde merge r.er" "$SONDE" merge r.er -o rm.er
check "it says what it merged" grep -q "^rm.er: 3 sub-experiments merged in" out.txt
# per function, inclusive (spin, or a clone of it such as spin.constprop.0): the merged experiment
# against the sum of the processes
for f in spin deep sort_cmp; do
	sum=0
	for s in r.er/_*.er; do
		v=$("$SONDE" print -metrics i.totalcpu -functions "$s" 2>/dev/null | awk -v f=$f '$NF == f || index($NF, f ".") == 1 { print $1; exit }')
		sum=$(awk -v a="$sum" -v b="${v:-0}" 'BEGIN { printf "%.3f", a + b }')
	done
	got=$("$SONDE" print -metrics i.totalcpu -functions rm.er 2>/dev/null | awk -v f=$f '$NF == f || index($NF, f ".") == 1 { print $1; exit }')
	if [ -n "$got" ] && awk -v a="$got" -v b="$sum" 'BEGIN { d = a - b; exit !(d < 0.0015 && d > -0.0015) }'; then
		ok "$f: merged $got s = the processes' $sum s"
	else notok "$f: merged '$got' s, the processes' $sum s"; fi
done
"$SONDE" print -metrics i.totalcpu -callers-callees rm.er >cc.txt 2>&1
check "the merged call tree still has deep's 50-frame chain (callers-callees reads it)" grep -q "deep" cc.txt

# ---- a synthetic job with its truth ----
"$GEN" job.er 9 2000 >truth.txt || notok "mergegen"
rc 0 "serial merge of 9 ranks" "$SONDE" merge -q job.er -o s.er
cpu=$(awk '{ printf "%.3f", ($4 + $6) / 1e9 }' truth.txt)
got=$("$SONDE" print -header s.er 2>/dev/null | awk '/^Recorded CPU time:/ { print $4 }')
check "recorded CPU time is the truth's CPU and MPI work ($got s = $cpu s)" [ "$got" = "$cpu" ]
off=$(awk '{ printf "%.3f", $8 / 1e9 }' truth.txt)
check "off-CPU time is the truth's ($off s)" grep -q "Off-CPU samples:.*($off s:" <<EOT
$("$SONDE" print -header s.er 2>/dev/null)
EOT
samples=$(awk '{ print $2 }' truth.txt)
got=$(awk '!/^#/ { s += $5 } END { print s }' s.er/merged)
check "merged's samples are the truth's ($got = $samples)" [ "$got" = "$samples" ]

for impl in openmpi mpich; do
	if [ ! -x "$B/libexec/sonde/sonde-merge-mpi.$impl" ]; then
		ok "# skip: no $impl helper (mpicc.$impl not installed)"
		continue
	fi
	if [ $impl = openmpi ]; then run=$OMPI; else run=mpirun.mpich; fi
	for np in 2 4; do
		rc 0 "$impl: mpirun -np $np sonde merge" timeout 120 $run -np $np "$SONDE" merge job.er -o $impl$np.er
		check "$impl: it ran as $np MPI processes" grep -q "merged in .* by $np MPI processes" out.txt
		check "$impl -np $np: byte-identical to the serial merge (diff -r)" diff -r s.er $impl$np.er
	done
done

# ---- bad input ----
mkdir notexp
rc 1 "not an experiment" "$SONDE" merge notexp -o x.er
check "  says so in one line" [ "$(wc -l <err.txt)" = 1 ]
check "  naming it" grep -q "'notexp' is not an experiment" err.txt
"$GEN" lone.er 0 0 >/dev/null
rc 1 "a founder without sub-experiments" "$SONDE" merge lone.er -o x.er
check "  says so" grep -q "'lone.er' has no sub-experiments to merge" err.txt
rc 1 "an output that exists" "$SONDE" merge job.er -o s.er
check "  says so" grep -q "'s.er' exists" err.txt
rc 2 "no -o" "$SONDE" merge job.er
rc 2 "an unknown option" "$SONDE" merge -x job.er -o y.er
cp -r job.er bad.er
rm bad.er/_f4.er/log.xml
rc 1 "a sub-experiment without log.xml" "$SONDE" merge bad.er -o x.er
check "  names it, in one line" grep -q "sub-experiment '_f4.er': .*log.xml.*; nothing written" err.txt
check "  and writes nothing" [ ! -e x.er ]
if [ -x "$B/libexec/sonde/sonde-merge-mpi.openmpi" ]; then
	rc 1 "the same under mpirun -np 4" timeout 120 $OMPI -np 4 "$SONDE" merge bad.er -o x.er
	check "  names it" grep -q "sub-experiment '_f4.er': .*nothing written" err.txt
	check "  and writes nothing" [ ! -e x.er ]
fi
cp -r job.er dmg.er
printf '\0\0' | dd of=dmg.er/_f2.er/profile bs=1 seek=4130 conv=notrunc 2>/dev/null
rc 0 "a damaged sub-experiment is merged as far as it is valid" "$SONDE" merge dmg.er -o d.er
check "  with a one-line warning naming it" grep -q "^sonde merge: warning: sub-experiment '_f2.er' is damaged" err.txt
check "  that -header shows" grep -q "_f2.er' is damaged" <<EOT
$("$SONDE" print -header d.er 2>&1)
EOT
ls -d *.tmp.* >/dev/null 2>&1 && notok "a temporary directory was left" || ok "no temporary directory left"
