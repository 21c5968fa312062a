# sonde collect's settings (cmd/collect_settings.c): the environment the
# target starts with is the one list of include/sonde/settings.h, each
# option sets what the table says, and the collector reads the names the
# list gives (no name of its own spelled in collector/).
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
H=$TOP/include/sonde/settings.h

# The names of the list: those sonde collect sets, and all of them.
sed -n '/set by sonde collect/,/passed from a process/p' "$H" |
	sed -n 's/^#define SONDE_ENV_[A-Z_]* "\([A-Z_]*\)".*/\1/p' | sort >set.want
sed -n 's/^#define SONDE_ENV_[A-Z_]* "\([A-Z_]*\)".*/\1/p' "$H" | sort >all.names
# a traced kind's variable is its row's in sonde/kinds.h
sed -n 's/.*X([A-Z]*, [0-9]*, "[a-z]*", "[a-z]*", .[a-zA-Z]., "\(SONDE_[A-Z]*\)".*/\1/p' "$TOP/include/sonde/kinds.h" |
	sort >kinds.names
[ -s set.want ] && [ -s kinds.names ] && ok "the lists read: $(wc -l <set.want) variables set, $(wc -l <kinds.names) kinds'" ||
	notok "cannot read the lists from settings.h and kinds.h"

# every option that sets something (MPI tracing's once its library is
# built: the kind's row came before tracers/mpi)
mpi=
[ -e "$TOP/build/lib/sonde/libsonde_mpi.so" ] && mpi="-m on"
# -k on where this user may see the kernel's stacks (else it is refused)
k=
if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ]; then
	k="-k on"
else
	grep -v '^SONDE_KSTACKS$' set.want >set.k && mv set.k set.want
fi
"$SONDE" collect -o env.er -p hi -w on -t 1-3 -y USR2,r -l USR1 -S 0.5 -L 20 -D 64 -F =_f1 \
	-s all -H on -i on -h page-faults,1 $mpi $k /usr/bin/env >env.txt 2>err.txt
grep '^SONDE_' env.txt | cut -d= -f1 | sort >seen.names
# what the caller's environment has is passed through (SONDE_CACHE_DIR)
env | sed -n 's/^\(SONDE_[A-Z_]*\)=.*/\1/p' >inherited.names
cat all.names kinds.names inherited.names | sort -u >known.names
extra=$(comm -23 seen.names known.names | tr '\n' ' ')
missing=$(comm -13 seen.names set.want | tr '\n' ' ')
[ -z "$extra" ] && ok "every SONDE_ variable the target sees is in settings.h or kinds.h" ||
	notok "variables the target sees that no list names: $extra"
[ -z "$missing" ] && ok "every variable settings.h says sonde collect sets is set" ||
	notok "variables settings.h lists as set by sonde collect, not set: $missing"
for k in $(cat kinds.names); do
	if [ "$k" = SONDE_MPI ] && [ -z "$mpi" ]; then
		echo "# $k: libsonde_mpi.so is not built, -m not tried"
		continue
	fi
	grep -q "^$k=" env.txt && ok "$k is set when its kind is on" || notok "$k is not set with its option"
done
grep -q "^LD_PRELOAD=.*libsonde_collector.so" env.txt && ok "LD_PRELOAD names the collector" ||
	notok "LD_PRELOAD does not name the collector"

# the values the options give
want() { grep -qx "$1" env.txt && ok "$1" || notok "wanted $1, got: $(grep "^${1%%=*}=" env.txt)"; }
want SONDE_CLOCK_NS=1000000
want SONDE_OFFCPU_NS=1000000
want SONDE_START_NS=1000000000
want SONDE_STOP_NS=3000000000
want SONDE_DURATION_S=0
want SONDE_PAUSE_SIG=12
want SONDE_PAUSE_START=0
want SONDE_SAMPLE_SIG=10
want SONDE_SAMPLE_NS=500000000
want SONDE_LIMIT_MB=20
want SONDE_DEPTH=64
want SONDE_FOLLOW==_f1
want SONDE_SYNC=all
want SONDE_EXPDIR="$TMP/env.er"

# nothing else: the defaults, and a variable of the user's that collect
# owns is replaced or removed
SONDE_LINEAGE=_f9 SONDE_COUNTERS=cycles SONDE_TARGET_PPID=1 "$SONDE" collect -o def.er /usr/bin/env >env.txt 2>err.txt
want SONDE_CLOCK_NS=10000000
want SONDE_OFFCPU_NS=0
want SONDE_SAMPLE_NS=1000000000
want SONDE_DEPTH=1024
want SONDE_FOLLOW=on
want SONDE_PAUSE_START=0
for v in SONDE_LINEAGE SONDE_COUNTERS SONDE_TARGET_PPID SONDE_SYNC; do
	grep -q "^$v=" env.txt && notok "$v is left set" || ok "$v is not set"
done

# the collector reads the list's names, not names of its own
own=$(grep -n '"SONDE_[A-Z_]*[=",)]' "$TOP"/collector/*.c | grep -v '"SONDE_"' || true)
[ -z "$own" ] && ok "collector/ names no variable but through settings.h" ||
	notok "collector/ spells variables itself: $own"
