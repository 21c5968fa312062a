# The collector's manners with OpenMP programs (tests/fixtures/omp/ompguest.c),
# built by gcc (libgomp: sonde's GOMP_* interposers) and by clang (libomp:
# sonde's OMPT tool), each run plain and under sonde collect -p hi: the same
# output and exit status.
#   - a plugin linked with the runtime and dlopened RTLD_LOCAL by a
#     program without OpenMP: its
#     runtime is in no global scope, but its GOMP_ calls reach sonde's
#     definitions first (before the fix, gcc's build died of SIGSEGV:
#     the interposer called a NULL it had looked up with RTLD_NEXT); its
#     work must be recorded in the OpenMP Work state;
#   - every thread of a region blocks every signal by the raw system call;
#   - the master forks and execs inside a region;
#   - errno is the program's across a barrier, a critical section, a lock
#     and a taskwait;
#   - a seccomp filter that refuses openat and kills the process at
#     pwritev (the calls the record's staged blocks are written with)
#     comes in between regions: the program lives, and every region is
#     recorded; also one that kills only at a pwritev of more than 2
#     vectors (the record's 4 blocks a write need 8 to 11).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
SRC=$TOP/tests/fixtures/omp/ompguest.c
export OMP_NUM_THREADS=2
for cc in gcc clang; do
	if ! command -v $cc >/dev/null || ! $cc -fopenmp -O2 -o g_$cc "$SRC" 2>cc.err ||
		! $cc -fopenmp -O2 -fPIC -shared -DPLUGIN -o libplug_$cc.so "$SRC" 2>>cc.err ||
		! $cc -O2 -DHOST -o host_$cc "$SRC" -ldl 2>>cc.err; then
		notok "$cc -fopenmp builds the fixture (scripts/deps.sh check: clang, libomp-dev)"
		sed 's/^/#   /' cc.err | head -5
		continue
	fi
	for mode in plugin sigmask fork errno seccomp seccompv; do
		if [ $mode = plugin ]; then set -- ./host_$cc ./libplug_$cc.so; else set -- ./g_$cc $mode; fi
		"$@" >plain.out 2>&1
		prc=$?
		rm -rf g.er
		"$SONDE" collect -p hi -o g.er "$@" >sonde.out 2>sonde.err
		src=$?
		if [ $prc = 0 ] && [ $src = $prc ] && cmp -s plain.out sonde.out; then
			ok "$cc $mode: the same output and exit status under sonde collect ($(tr '\n' ' ' <sonde.out))"
		else
			notok "$cc $mode: exit $src under sonde, $prc plain; output '$(tr '\n' ' ' <sonde.out)', plain '$(tr '\n' ' ' <plain.out)'"
			sed 's/^/#   /' sonde.err | head -5
		fi
		# under the filter the record goes on through the files'
		# mappings: every region and part
		case $mode in
		seccomp) what="refuses openat and kills at pwritev" want=10000 ;;
		seccompv) what="kills at a pwritev of more than 2 vectors (the record writes blocks 4 at a time)" want=105000 ;;
		*) continue ;;
		esac
		execs=$("$SONDE" print -printmode csv -omp_regions g.er 2>/dev/null | awk -F, 'NR > 1 { n += $3 } END { print n + 0 }')
		parts=$("$SONDE" print -dump omp g.er 2>/dev/null | grep -c '^  thread ')
		nt=$("$SONDE" print -printmode csv -omp_regions g.er 2>/dev/null | awk -F, 'NR == 2 { print $4 }')
		if [ "$execs" = $want ] && [ -n "$nt" ] && [ "$parts" = $((want * nt)) ] && ! grep -q 'were lost' g.er/log.xml; then
			ok "$cc $mode: the $want regions before and under a filter that $what are recorded, with their $parts parts"
		else
			notok "$cc $mode: $execs regions of $want, $parts parts ($nt threads)"
		fi
	done
	# the plugin's work in the OpenMP Work state (the last run's is
	# errno's: record the plugin again)
	rm -rf p.er
	"$SONDE" collect -p hi -o p.er ./host_$cc ./libplug_$cc.so >/dev/null 2>&1
	n=$("$SONDE" agg 'profile /state == "omp-work"/ { @ = count(); }' p.er 2>/dev/null | awk 'NF { print $1 }')
	if [ "${n:-0}" -gt 50 ]; then ok "$cc plugin: its work is recorded as OpenMP Work ($n samples)"; else
		notok "$cc plugin: ${n:-no} samples of OpenMP Work"
	fi
done
