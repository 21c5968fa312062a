# The target's calls return what they return without sonde, and leave
# errno as libc alone leaves it (the guest promise of doc/sonde-collect.md):
# tests/fixtures/errnocheck.c makes every call the collector and its tracers
# interpose, succeeding and failing (stdio, descriptors, the wait family,
# vfork, exec, posix_spawn, system, popen, clone, pthread_create, mmap,
# mremap, munmap, malloc, the sigaction family, syscall(), dlopen, signal
# masks, close_range), some of
# them from a library constructor that runs before the collector's, with
# errno set to a sentinel before each, and prints each return value and
# errno.  Its output under `sonde collect` with every data kind on must be
# the output of the plain run, line for line: also while the collector's
# signals sample poll/select/nanosleep loops (no EINTR), and a popen() while
# another thread's system() runs (which must not wait for it).  Built plain
# and fortified
# (__printf_chk, __fgets_chk, __read_chk, ...).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# The fortified build differs in its stdio and read calls only: those
# sections, under every data kind.
for prog in errnocheck errnocheck_fortify; do
	E=$FIX/$prog
	sections=
	configs="-p on -s on -H on -i on -F on|-p hi -s all -H on -i on -F all|-p off -S off -H on -i on -F off"
	min=200
	if [ $prog = errnocheck_fortify ]; then
		sections="stdio fd"
		configs="-p hi -s on -H on -i on -F on"
		min=80
	fi
	mkdir plain.$prog
	(cd plain.$prog && "$E" $sections >out 2>err)
	prc=$?
	grep '^child:' plain.$prog/err >plain.$prog/child
	n=$(wc -l <plain.$prog/out)
	if [ $prc = 0 ] && grep -qx done plain.$prog/out && [ "$n" -gt $min ]; then
		ok "$prog: the plain run reports $n calls"
	else
		notok "$prog: the plain run exited $prc with $n lines"
		continue
	fi
	# Every data kind, with the CPU-timer sample source (-p on) and perf's
	# (-p hi, where the kernel allows it); then without clock profiling
	# and without following.
	i=0
	IFS='|'
	set -- $configs
	unset IFS
	for opts in "$@"; do
		i=$((i + 1))
		d=$prog.$i
		mkdir $d
		(cd $d && "$SONDE" collect $opts -o x.er "$E" $sections >out 2>err)
		crc=$?
		grep '^child:' $d/err >$d/child
		diff plain.$prog/out $d/out >$d/diff
		diff plain.$prog/child $d/child >>$d/diff
		if [ $crc = 0 ] && ! grep -q '^[<>]' $d/diff; then
			ok "$prog under sonde collect $opts: every call returned what it returns without sonde, errno as libc left it"
		else
			notok "$prog under sonde collect $opts (exit $crc): calls that differ (< plain, > under sonde):"
			grep '^[<>]' $d/diff | head -20 | sed 's/^/#   /'
			grep -v '^child:' $d/err | head -5 | sed 's/^/#   /'
		fi
	done
done
