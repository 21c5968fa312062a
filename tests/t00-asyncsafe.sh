#!/bin/sh
# The collector's signal-handler path must not call anything that is not
# async-signal-safe (no malloc, stdio, locks, dlsym, dl_iterate_phdr).  That
# path lives in its own files, SAFE below: the one list of them
# (collector/collector.h and README.md point here, they do not repeat it);
# every function their objects call must be defined in one of them or be on
# the libc allowlist.  Data they use may live anywhere in the collector.
#
# The handler also calls the hooks registered with it (include/sonde/hooks.h:
# state providers, stack sources), which live in the code that registers
# them: their files are HOOKS below, each checked the same way (what it
# calls must be defined in it, in the SAFE objects, or be on the allowlist
# or __sonde_syscall).  A new hook's file goes on that list.  Last, the
# check itself is shown to refuse a hook that calls malloc or printf.
cd "$(dirname "$0")/.." || exit 1
SAFE="sample sample_point dfile_write log_write stacks xfmt unwind sysgate omp_state kstacks_source"
HOOKS="build/obj/fixtures/hookstate_hooks.o build/obj/fixtures/hookattack_hooks.o"
# MPI Work/Wait's provider, where the MPI library is built (both MPIs' headers)
[ -f build/lib/sonde/libsonde_mpi.so ] && HOOKS="$HOOKS build/obj/tracers/mpi/state.o"
# the Java agent's stack source, where a JDK's jvmti.h is
[ -f build/lib/sonde/libsonde_java.so ] && HOOKS="$HOOKS build/obj/tracers/java/frames.o"
LIBC_OK="sched_yield clock_gettime getcpu syscall read write ftruncate fallocate64 fallocate mmap munmap memcpy memset memmove
memcmp __errno_location __stack_chk_fail process_vm_readv getpid sched_yield"
O=build/obj/collector
defined_funcs=""
for o in $SAFE; do
	[ -f $O/$o.o ] || { echo "not ok - $O/$o.o is not built"; exit 1; }
	defined_funcs="$defined_funcs $(nm --defined-only $O/$o.o | awk '$2 ~ /^[Tt]$/ {print $3}')"
done
ALLOWED=" $(echo $LIBC_OK $defined_funcs) _GLOBAL_OFFSET_TABLE_ "
data=$(nm --defined-only $O/*.o | awk '$2 ~ /^[BbDdRrVv]$/ {print $3}')

# bad_calls OBJ: the functions OBJ calls that are not allowed (empty: none).
# A hook object may also call its own functions and __sonde_syscall.
bad_calls() {
	own=" $(nm --defined-only "$1" | awk '$2 ~ /^[Tt]$/ {print $3}' | tr '\n' ' ') __sonde_syscall "
	bad=""
	for sym in $(nm -u "$1" | awk '{print $2}' | sed 's/@.*//'); do
		case "$ALLOWED$own" in *" $sym "*) continue ;; esac
		echo "$data" | grep -qx "$sym" && continue
		bad="$bad $sym"
	done
	echo "$bad"
}

fail=0
for o in $SAFE; do
	bad=$(bad_calls $O/$o.o)
	if [ -n "$bad" ]; then
		echo "not ok - collector/$o.c calls functions that are not async-signal-safe:$bad"
		fail=1
	else
		echo "ok - collector/$o.c calls only async-signal-safe functions"
	fi
done
for h in $HOOKS; do
	[ -f "$h" ] || { echo "not ok - $h (a hook's file) is not built"; fail=1; continue; }
	bad=$(bad_calls "$h")
	if [ -n "$bad" ]; then
		echo "not ok - the hooks of $h call functions that are not async-signal-safe:$bad"
		fail=1
	else
		echo "ok - the hooks of $h call only async-signal-safe functions"
	fi
done

# The check refuses a hook that calls malloc (and printf): compiled here.
T=$(mktemp -d "${TMPDIR:-/tmp}/sonde-t00.XXXXXX")
trap 'rm -rf "$T"' EXIT
cat >"$T/badhook.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <sonde/hooks.h>
int bad_state(const struct sonde_hook_sample *s, void *arg)
{
	char *p = malloc(16);
	p[0] = (char)(arg != 0);
	printf("%p %p %d\n", (void *)s, (void *)p, p[0]);
	free(p);
	return SONDE_HOOK_NO_STATE;
}
EOF
if ${CC:-cc} -std=gnu11 -O2 -Iinclude -c "$T/badhook.c" -o "$T/badhook.o" 2>"$T/cc.err"; then
	bad=$(bad_calls "$T/badhook.o")
	case "$bad" in
	*malloc*printf* | *printf*malloc*) echo "ok - the check refuses a hook that calls malloc and printf (it names:$bad)" ;;
	*)
		echo "not ok - the check let a hook calling malloc and printf through (it names:$bad)"
		fail=1
		;;
	esac
else
	echo "not ok - the hook that calls malloc does not compile: $(head -3 "$T/cc.err")"
	fail=1
fi
exit $fail
