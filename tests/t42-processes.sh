# A signal handler and processes made every way (fork, vfork+exec, clone with and without
# CLONE_FILES, failed execs, system, popen, a child killed by a signal),
# each burning in its own function: sonde's CPU per function across the
# founder and its sub-experiments, per process, and each process's exit
# status must match what the fixture measured and saw (tests/fixtures/procs.c).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

S=0.2
rc 0 "collect -p hi on procs" "$SONDE" collect -p hi -o p.er "$FIX/procs" "$TMP/truth" $S
sed 's/^/# truth: /' truth

want="_C1.er _C2.er _f1.er _f2_x1.er _f3_x1.er _f3_x1_x1.er _f4_x1.er _f4_x1_x1.er _f5.er"
got=$(cd p.er && ls -d _*.er | sort | tr '\n' ' ' | sed 's/ $//')
if [ "$got" = "$want" ]; then ok "sub-experiments are exactly: $got"; else
	notok "sub-experiments: got '$got', wanted '$want'"; fi

# CPU per function, all processes together (the founder's combined view).
# Sample weights are each thread's CPU time since its previous sample, so
# a function's error is at most the samples that straddle its ends: a few
# 1 ms intervals, not a sampling fraction.  Allowed: 3% + 4 ms.
# Inclusive: a burner's own clock holds its clock_gettime calls, whose
# kernel time (longer on a busy machine: 10% of burn_popen's in a loaded
# run) is sampled in place, under the burner.
"$SONDE" print -printmode csv -metrics i.totalcpu:name -functions p.er >fn.csv 2>/dev/null
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * 0.03 + 4e6) }'; }
nfn=0
badfn=0
while read -r _ fn pid real; do
	nfn=$((nfn + 1))
	rec=$(awk -F, -v f="$fn" '$1 == f { print $3 }' fn.csv)
	note "$fn (pid $pid): recorded ${rec:-0} ns, its own clock $real ns"
	close "${rec:-0}" "$real" || { badfn=$((badfn + 1)); notok "$fn: recorded ${rec:-0} ns, its own clock $real ns"; }
done <<EOT
$(grep '^fn ' truth)
EOT
if [ "$nfn" = 11 ] && [ "$badfn" = 0 ]; then ok "each of the 11 burning functions: recorded CPU within 3% + 4 ms"; else
	notok "$nfn functions in the truth (wanted 11), $badfn off"; fi

# CPU per process: its experiments (the image before an exec and after)
# against its CPU clock.
"$SONDE" print -printmode csv -processes p.er >procs.csv 2>/dev/null
np=0
badp=0
while read -r _ pid real; do
	np=$((np + 1))
	rec=$(awk -F, -v p="$pid" 'NR > 1 && $3 == p { s += $5 } END { printf "%.0f", s }' procs.csv)
	note "process $pid: recorded $rec ns, its own clock $real ns"
	close "$rec" "$real" || { badp=$((badp + 1)); notok "process $pid: recorded $rec ns, its own clock $real ns"; }
done <<EOT
$(grep '^proc ' truth)
EOT
if [ "$np" = 8 ] && [ "$badp" = 0 ]; then ok "each of the 8 processes: recorded CPU within 3% + 4 ms"; else
	notok "$np processes in the truth (wanted 8), $badp off"; fi

# A CLONE_FILES child shares the parent's descriptor table: each
# experiment must hold its own process's records only, and end.
bad=""
for d in p.er p.er/_*.er; do
	pid=$(sed -n 's/.*<target pid="\([0-9]*\)".*/\1/p' "$d/log.xml")
	grep -q '<event kind="end"' "$d/log.xml" || case $d in
		*_f5.er) ;; # killed by SIGTERM: no end record
		*) bad="$bad $d:no-end" ;;
	esac
	for t in $(sed -n 's/.*kind="thread_end" tid="\([0-9]*\)".*/\1/p' "$d/log.xml"); do
		[ "$t" = "$pid" ] || bad="$bad $d:thread-$t"
	done
done
if [ -z "$bad" ]; then ok "every experiment ends and lists only its own process's thread"; else
	notok "experiments with another process's records or no end:$bad"; fi
check "the CLONE_FILES child left no descriptor open in its parent" grep -q '^fd_delta 0$' truth
check "the founder's experiment reads without warnings" sh -c "'$SONDE' print -header p.er 2>&1 | grep -q 'Read problems (0)'"

# A failed exec changes nothing for the program: errno is the exec's.
check "both failed execs left errno ENOENT" sh -c "[ \$(grep -c '^exec_errno 2\$' truth) = 2 ]"
check "the founder logs both failed execs" sh -c "[ \$(grep -c 'kind=\"exec_failed\"' p.er/log.xml) = 2 ]"

# Exit statuses: the last image of each child shows what its parent saw.
pid_of() { awk -v f="$1" '$1 == "fn" && $2 == f { print $3 }' truth; }
exit_of() { # PID: the Exit column of that pid's last experiment
	awk -F, -v p="$1" 'NR > 1 && $3 == p && length($2) >= length(l) { l = $2; x = $7 } END { print x }' procs.csv
}
nst=0
badst=0
while read -r _ what pid val; do
	case $what in system) pid=$(pid_of burn_system) ;; popen) pid=$(pid_of burn_popen) ;; esac
	nst=$((nst + 1))
	x=$(exit_of "$pid")
	note "$what child $pid: exit $val, sonde shows '${x}'"
	[ "$x" = "$val" ] || { badst=$((badst + 1)); notok "$what child $pid: exit $val, sonde shows '$x'"; }
done <<EOT
$(grep '^status ' truth)
EOT
if [ "$nst" = 7 ] && [ "$badst" = 0 ]; then ok "all 7 children show their exit status or signal"; else
	notok "$nst statuses in the truth (wanted 7), $badst shown wrong"; fi
check "images replaced by exec show 'exec'" \
	awk -F, '$2 == "_f3_x1.er" || $2 == "_f4_x1.er" { n++; if ($7 != "exec") bad = 1 } END { exit bad || n != 2 }' procs.csv
check "the founder shows its exit status 0" awk -F, 'NR == 2 && $2 == "(founder)" { f = $7 == "0" } END { exit !f }' procs.csv
