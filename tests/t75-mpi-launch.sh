# MPI jobs (issue 29, collection): an MPI program of known CPU per rank
# (tests/mpi/mpi_ranks.c: rank R burns (R+1)*MS ms and prints its own
# CPU time) with 4 ranks on Open MPI and on MPICH, in both launch forms:
#   sonde collect -M on mpirun ... -- PROG   and   mpirun ... sonde collect PROG
# Both give one founder with M_r0..3.er, the right rank in each, each
# rank's CPU within 2% of its own account.  Other options work inside the
# ranks (-p, -w, heap tracing, a rank's descendants).  And the bad cases:
# a program linked with no MPI, one launched by the other MPI's mpirun,
# a rank killed, MPI_Abort, a launcher that is not mpirun, a singleton,
# two processes claiming one rank, a later job beside an earlier one.
# MPI tracing (-m) stays off: its library is another branch's.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

for c in mpicc.openmpi mpirun.openmpi mpicc.mpich mpirun.mpich; do
	command -v $c >/dev/null 2>&1 || { notok "$c is installed (sh scripts/deps.sh check)"; exit 0; }
done
# As root Open MPI wants to be told; 4 ranks on a 2-core machine.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# A rank that fails before MPI_Init leaves MPICH's others waiting in it:
# every job is given a minute.
T="timeout 60"
OMPIRUN="$T mpirun.openmpi --oversubscribe"
MPICHRUN="$T mpirun.mpich"
MS=100
# MPI tracing is on by default in a job; its data is another test's
MOFF="-m off"

check "the fixture builds with Open MPI" mpicc.openmpi -O1 -g -o ranks.ompi "$TOP/tests/mpi/mpi_ranks.c"
check "the fixture builds with MPICH" mpicc.mpich -O1 -g -o ranks.mpich "$TOP/tests/mpi/mpi_ranks.c"
printf 'int main(void) { volatile double x = 0; for (long i = 0; i < 20000000; i++) x += i; return 0; }\n' >plain.c
cc -o plain plain.c

# subs EXP: its sub-experiments' names, on one line.
subs() { (cd "$1" && ls -d *.er 2>/dev/null | tr '\n' ' '); }

# ranks_ok EXP OUT WHAT: M_r0..3.er and nothing else; each rank's log says
# its rank of 4; each rank's CPU (sonde print -processes) within 2% of
# what the fixture said of itself (in OUT).
ranks_ok() {
	exp=$1 out=$2 what=$3
	got=$(subs "$exp")
	if [ "$got" = "M_r0.er M_r1.er M_r2.er M_r3.er " ]; then ok "$what: founder and M_r0..3.er"; else
		notok "$what: sub-experiments '$got'"
	fi
	bad=0
	for r in 0 1 2 3; do
		grep -q "<mpirank rank=\"$r\" size=\"4\"" "$exp/M_r$r.er/log.xml" || bad=$((bad + 1))
	done
	if [ $bad = 0 ]; then ok "$what: each rank's log says its rank of 4"; else notok "$what: $bad logs without their rank"; fi
	"$SONDE" print -printmode csv -processes "$exp" >procs.csv 2>procs.err
	bad=0 n=0
	for r in 0 1 2 3; do
		own=$(awk -v r=$r '$1 == "rank" && $2 == r { print $6 }' "$out")
		rec=$(awk -F, -v r=$r '$3 == r && $2 == "M_r" r ".er" { print $6 }' procs.csv)
		if [ -n "$own" ] && [ -n "$rec" ] && within "$rec" "$own" 2; then n=$((n + 1)); else
			bad=$((bad + 1))
			note "$what rank $r: recorded ${rec:-none} ns, own account ${own:-none} ns"
		fi
	done
	if [ $bad = 0 ]; then ok "$what: each rank's CPU within 2% of its own account"; else notok "$what: $bad ranks off"; fi
}

for mpi in ompi mpich; do
	if [ $mpi = ompi ]; then RUN=$OMPIRUN; NAME="Open MPI"; else RUN=$MPICHRUN; NAME=MPICH; fi
	# the form batch scripts use: each rank started under sonde collect
	rc 0 "$NAME: mpirun -np 4 sonde collect PROG" $RUN -np 4 "$SONDE" collect $MOFF -p 1 -o $mpi-a.er ./ranks.$mpi $MS
	cp out.txt $mpi-a.out
	ranks_ok $mpi-a.er $mpi-a.out "$NAME, under mpirun"
	# Oracle collect's: the launcher in the founder
	rc 0 "$NAME: sonde collect -M on mpirun -np 4 -- PROG" $T "$SONDE" collect $MOFF -M on -p 1 -o $mpi-m.er ${RUN#$T } -np 4 -- ./ranks.$mpi $MS
	cp out.txt $mpi-m.out
	ranks_ok $mpi-m.er $mpi-m.out "$NAME, -M"
	if [ "$(subs $mpi-a.er)" = "$(subs $mpi-m.er)" ]; then ok "$NAME: both forms give the same tree"; else
		notok "$NAME: the trees differ: '$(subs $mpi-a.er)' and '$(subs $mpi-m.er)'"
	fi
	check "$NAME -M: the founder recorded the launcher" grep -q "<target [^>]*exe=\"[^\"]*\\(orterun\\|mpiexec.hydra\\)\"" $mpi-m.er/log.xml
	"$SONDE" print -processes $mpi-m.er >p.txt 2>&1
	check "$NAME -M: -processes has a Rank column" grep -q "Lineage *Rank" p.txt
	# -experiment_select by rank
	"$SONDE" print -experiment_select rank=1-2 -printmode csv -processes $mpi-m.er >sel.csv 2>&1
	check "$NAME: -experiment_select rank=1-2 picks ranks 1 and 2" \
		[ "$(awk -F, 'NR > 1 { printf "%s ", $2 }' sel.csv)" = "M_r1.er M_r2.er " ]
done
# the founder of the -M form records no rank's process: its descendants
# were not followed
check "-M: the launcher's daemons and the ranks' sonde collect are not the launcher's sub-experiments" \
	[ -z "$(cd ompi-m.er && ls -d _*.er 2>/dev/null)" ]

# ---- the other options inside every rank ----
rc 0 "MPICH -M with -w on, heap tracing and a rank's descendants" \
	$T "$SONDE" collect $MOFF -M on -w on -H on -o opts.er mpirun.mpich -np 4 -- ./ranks.mpich $MS fork
n=0
for r in 0 1 2 3; do
	[ -d opts.er/M_r${r}_f1.er ] && [ -f opts.er/M_r$r.er/heaptrace ] &&
		grep -q 'offcpu_interval_ns="10000000"' opts.er/M_r$r.er/log.xml && n=$((n + 1))
done
check "each rank has its descendant (M_rR_f1.er), its heap trace and off-CPU settings" [ $n = 4 ]
"$SONDE" print -printmode csv -processes opts.er >procs.csv 2>&1
bad=0
for r in 0 1 2 3; do
	rec=$(awk -F, -v l="M_r${r}_f1.er" '$2 == l { print $3 " " $6 }' procs.csv)
	# the child's row carries its rank and the CPU the child itself
	# counted (its burn of (r+1)*MS ms, and what its fork's pages cost it)
	set -- $rec
	own=$(awk -v r=$r '$1 == "child" && $3 == r { print $5 }' out.txt)
	note "M_r${r}_f1.er: $rec, its own account ${own:-none}"
	[ "${1:-}" = $r ] && within "${2:-0}" "${own:-0}" 3 || bad=$((bad + 1))
done
check "each rank's descendant carries its rank and the CPU it burnt (3%)" [ $bad = 0 ]

# counters, sync and I/O tracing inside every rank (Open MPI): each rank's
# page faults counted, its synctrace file, and its one printf as a write
# to its standard output of exactly the line it printed (its printf).
rc 0 "Open MPI -M with -h page-faults, sync and I/O tracing" \
	$T "$SONDE" collect $MOFF -M on -h page-faults,1 -s on -i on -o opts2.er mpirun.openmpi --oversubscribe --allow-run-as-root -np 4 -- ./ranks.ompi 50
n=0
for r in 0 1 2 3; do
	pf=$("$SONDE" print -metrics e.page-faults:name -functions opts2.er/M_r$r.er 2>/dev/null | awk '$NF == "<Total>" { print $1 }')
	line=$(grep "^rank $r " out.txt)
	want=$((${#line} + 1))
	got=$("$SONDE" print -dump io opts2.er/M_r$r.er 2>/dev/null | grep -c "func printf  fd 1  bytes $want ")
	if [ "${pf:-0}" -gt 0 ] && [ -f opts2.er/M_r$r.er/synctrace ] && [ "$got" -ge 1 ]; then n=$((n + 1)); else
		note "M_r$r.er: page faults ${pf:-none}, synctrace $(test -f opts2.er/M_r$r.er/synctrace && echo yes || echo no), writes of $want bytes $got"; fi
done
check "each rank has its page faults, its sync trace and its printf of its line" [ $n = 4 ]

# ---- bad cases ----
rc 0 "-M: a program linked with neither MPI still runs" $T "$SONDE" collect $MOFF -M on -o none.er mpirun.mpich -np 2 -- ./plain
check "... said in one line" [ "$(grep -c "linked with neither Open MPI nor MPICH" err.txt)" = 1 ]
check "... and each process recorded as a rank" [ "$(subs none.er)" = "M_r0.er M_r1.er " ]

# Two Open MPI singletons started together race on Open MPI's session
# directory (mpi_ranks.c): the second waits 300 ms.
export MPI_RANKS_STAGGER_MS=300
rc 0 "-M: a program built with Open MPI under MPICH's mpirun still runs" \
	$T "$SONDE" collect $MOFF -M on -o wrong.er mpirun.mpich -np 2 -- ./ranks.ompi 50
check "... said in one line" [ "$(grep -c "built with Open MPI but 'mpirun.mpich' is MPICH's launcher: each process will be a singleton" err.txt)" = 1 ]
check "... each process a singleton" [ "$(grep -c 'rank 0 size 1' out.txt)" = 2 ]
check "... nothing lost: both processes recorded, by the launcher's ranks" test -f wrong.er/M_r0.er/log.xml -a -f wrong.er/M_r1.er/log.xml
# With MPI tracing, MPI's own rank (rank 0 of 1 in each process) is in the
# log, and the reader says it is not the launcher's.
LIBDIR=$(dirname "${SONDE_COLLECTOR:-$B/lib/sonde/libsonde_collector.so}")
if [ -f "$LIBDIR/libsonde_mpi.so" ]; then
	rc 0 "... with -m on" $T "$SONDE" collect -M on -m on -o wrongm.er mpirun.mpich -np 2 -- ./ranks.ompi 50
	rc 0 "... the job reads" "$SONDE" print -processes wrongm.er
	check "... and the reader says MPI_Comm_rank gave rank 0 to rank 1" \
		grep -q "M_r1.er': MPI_Comm_rank gave rank 0, the launcher rank 1" err.txt
	rc 0 "a right job with -m on" $T "$SONDE" collect -M on -m on -o rightm.er mpirun.mpich -np 2 -- ./ranks.mpich 50
	rc 0 "... reads" "$SONDE" print -processes rightm.er
	check "... with no warning of its ranks" [ ! -s err.txt ]
	# sonde agg over the job: every rank's events in one program, the
	# rank telling them apart.  The fixture calls one barrier and one
	# allreduce per rank; each rank's CPU is what -processes says of it.
	"$SONDE" agg 'mpi /mpifunc == "MPI_Barrier" || mpifunc == "MPI_Allreduce"/ { @[rank, mpifunc] = count(); }' \
		rightm.er 2>err.txt | awk 'NF == 3 { print $1, $2, $3 }' | sort >agg.txt
	check "sonde agg over a job: one barrier and one allreduce per rank, by rank" \
		[ "$(tr '\n' ' ' <agg.txt)" = "0 MPI_Allreduce 1 0 MPI_Barrier 1 1 MPI_Allreduce 1 1 MPI_Barrier 1 " ]
	"$SONDE" agg 'profile /rank >= 0/ { @[rank, pid] = sum(weight); }' rightm.er 2>>err.txt |
		awk 'NF == 3 { print $1, $2, $3 }' | sort >aggp.txt
	"$SONDE" print -printmode csv -processes rightm.er 2>>err.txt |
		awk -F, '$3 ~ /^[0-9]+$/ { print $3, $4, $6 }' | sort >procp.txt
	check "... each rank's pid and CPU as -processes has them, exactly" \
		[ -s aggp.txt ] && [ "$(wc -l <aggp.txt)" = 2 ] && cmp -s aggp.txt procp.txt
	check "... without a complaint" [ ! -s err.txt ]
else
	note "libsonde_mpi.so is not built here: the reader's check against MPI's own rank is not run"
fi
unset MPI_RANKS_STAGGER_MS
rc 0 "under Open MPI's mpirun, a program built with MPICH" $OMPIRUN -np 2 "$SONDE" collect $MOFF -o wrong2.er ./ranks.mpich 50
check "... said once, by rank 0" [ "$(grep -c "built with MPICH but was started by Open MPI's launcher" err.txt)" = 1 ]

$OMPIRUN -np 4 "$SONDE" collect $MOFF -o killed.er ./ranks.ompi $MS kill >out.txt 2>err.txt
check "a rank killed mid-run: the job fails" [ $? != 0 ]
check "... every rank's experiment is there" [ "$(subs killed.er)" = "M_r0.er M_r1.er M_r2.er M_r3.er " ]
rc 0 "... and the job reads" "$SONDE" print -processes killed.er
check "... the killed rank marked SIGKILL" grep -q "M_r2.er .* SIGKILL" out.txt
"$SONDE" print -header killed.er/M_r2.er >out.txt 2>&1
check "... its -header says how it ended" grep -q "SIGKILL\|incomplete" out.txt

$T "$SONDE" collect $MOFF -M on -o abort.er mpirun.mpich -np 4 -- ./ranks.mpich $MS abort >out.txt 2>err.txt
check "MPI_Abort: the job fails" [ $? != 0 ]
check "... every rank's experiment is there" [ "$(subs abort.er)" = "M_r0.er M_r1.er M_r2.er M_r3.er " ]
rc 0 "... and the job's functions read" "$SONDE" print -functions abort.er
check "... with the ranks' burn in them" grep -q " burn$" out.txt

rc 2 "-M with a launcher that is not mpirun" "$SONDE" collect $MOFF -M on sleep 1
check "... one line saying what -M needs" [ "$(wc -l <err.txt)" = 1 ]
check "... the launcher, --, then the program" grep -q "needs the launcher, its arguments, --, then the program" err.txt
rc 2 "-M with sleep as the launcher" "$SONDE" collect $MOFF -M on -o x.er sleep 1 -- ./plain
check "... one line" [ "$(wc -l <err.txt)" = 1 ]
check "... not an MPI launcher" grep -q "not an MPI launcher sonde knows.*'sleep'" err.txt
check "... and no experiment left" [ ! -e x.er ]
rc 2 "-M OPENMPI with MPICH's launcher" "$SONDE" collect $MOFF -M OPENMPI -o x.er mpirun.mpich -np 2 -- ./ranks.mpich
check "... says whose launcher it is" grep -q "'mpirun.mpich' is MPICH's launcher" err.txt

rc 0 "a singleton started without a launcher" "$SONDE" collect $MOFF -o single.er ./ranks.ompi 50
check "... said in one line" [ "$(grep -c "started without an MPI launcher is a singleton" err.txt)" = 1 ]
check "... it ran as rank 0 of 1" grep -q "rank 0 size 1" out.txt
check "... recorded as one process, no rank" [ -z "$(cd single.er && ls -d M_r*.er 2>/dev/null)" ]

# two processes of one job claiming one rank: the second records beside
PMI_RANK=0 PMI_SIZE=2 SONDE_MPI_JOB=j1 "$SONDE" collect $MOFF -o clash.er ./plain >c1.out 2>c1.err &
PMI_RANK=0 PMI_SIZE=2 SONDE_MPI_JOB=j1 "$SONDE" collect $MOFF -o clash.er ./plain >c2.out 2>c2.err
wait
check "two processes claiming rank 0: both recorded" [ "$(cd clash.er && ls -d M_r0.er M_r0_p*.er | wc -l)" = 2 ]
check "... and said" grep -q "two processes claim MPI rank 0 of job j1" c1.err c2.err
rc 2 "a later job does not join an earlier job's experiment" env PMI_RANK=0 PMI_SIZE=2 SONDE_MPI_JOB=j2 "$SONDE" collect $MOFF -o clash.er ./plain
check "... and says so" grep -q "not of this MPI job" err.txt

# the default name: two jobs, two founders, each with its 4 ranks
mkdir def && cd def || exit 1
$OMPIRUN -np 4 "$SONDE" collect $MOFF ../ranks.ompi 20 >/dev/null 2>&1
$MPICHRUN -np 4 "$SONDE" collect $MOFF ../ranks.mpich 20 >/dev/null 2>&1
check "two jobs with the default name: test.1.er and test.2.er, each with M_r0..3.er" \
	[ "$(ls -d test.*.er | tr '\n' ' ')$(subs test.1.er)$(subs test.2.er)" = \
		"test.1.er test.2.er M_r0.er M_r1.er M_r2.er M_r3.er M_r0.er M_r1.er M_r2.er M_r3.er " ]
cd ..

# ---- node-local directories and sonde gather ----
mkdir loc
SONDE_MPI_LOCALDIR=$PWD/loc $T "$SONDE" collect $MOFF -M on -o sh.er mpirun.mpich -np 4 -- ./ranks.mpich 20 >out.txt 2>err.txt
check "SONDE_MPI_LOCALDIR: the ranks record in DIR/FOUNDER-NAME" [ "$(subs loc/sh.er)" = "M_r0.er M_r1.er M_r2.er M_r3.er " ]
check "... said once for the node" [ "$(grep -c "the ranks on this node record in '$PWD/loc/sh.er'" err.txt)" = 1 ]
check "... the founder has the launcher only" [ -z "$(subs sh.er)" ]
rc 0 "sonde gather FOUNDER DIR" "$SONDE" gather sh.er loc/sh.er
check "... moves the ranks into the founder" [ "$(subs sh.er)" = "M_r0.er M_r1.er M_r2.er M_r3.er " ]
check "... leaving nothing behind" [ ! -e loc/sh.er ]
"$SONDE" print -printmode csv -processes sh.er >procs.csv 2>&1
check "... and the job reads with its ranks" [ "$(grep -c '^[0-9]*,M_r[0-3].er,[0-3],' procs.csv)" = 4 ]

# a node that does not see the founder: its ranks record under TMPDIR
mkdir tmp2
SONDE_MPI_FOUNDER=/nonexistent/far.er TMPDIR=$PWD/tmp2 $MPICHRUN -np 2 "$SONDE" collect $MOFF ./ranks.mpich 20 >out.txt 2>err.txt
check "a founder not on this node: the ranks record under TMPDIR" [ "$(subs tmp2/far.er)" = "M_r0.er M_r1.er " ]
check "... and say so once" [ "$(grep -c "founder '/nonexistent/far.er' is not on this node" err.txt)" = 1 ]

# the bare form, node-local: gathered into a founder made by gather, from
# another file system (a copy, not a rename) when /dev/shm is one
L=$(mktemp -d /dev/shm/sonde-t75.XXXXXX 2>/dev/null || mktemp -d "$TMP/shm.XXXXXX")
SONDE_MPI_LOCALDIR=$L $OMPIRUN -np 2 "$SONDE" collect $MOFF -o bare.er ./ranks.ompi 20 >/dev/null 2>&1
rc 0 "the bare form, node-local, gathered into a new founder" "$SONDE" gather bare.er "$L/bare.er"
check "... the founder made with its ranks" [ "$(subs bare.er)" = "M_r0.er M_r1.er " ]
rc 0 "... and it reads" "$SONDE" print -processes bare.er
SONDE_MPI_LOCALDIR=$L $OMPIRUN -np 2 "$SONDE" collect $MOFF -o bare.er ./ranks.ompi 20 >/dev/null 2>&1
rc 1 "gather does not overwrite a rank the founder has" "$SONDE" gather bare.er "$L/bare.er"
check "... says which" grep -q "'bare.er' has 'M_r0.er' already" err.txt
check "... and leaves it where it was" [ -f "$L/bare.er/M_r0.er/log.xml" ]
rm -rf "$L"
rc 2 "gather without a directory" "$SONDE" gather bare.er
rc 2 "gather into something not NAME.er" "$SONDE" gather plain.c loc
