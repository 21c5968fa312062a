#!/bin/sh
# The collector's signal-handler path must not call anything that is not
# async-signal-safe (no malloc, stdio, locks, dlsym, dl_iterate_phdr).  That
# path lives in its own files, SAFE below: the one list of them
# (collector/collector.h and README.md point here, they do not repeat it);
# every function their objects call must be defined in one of them or be on
# the libc allowlist.  Data they use may live anywhere in the collector.
cd "$(dirname "$0")/.." || exit 1
SAFE="sample sample_point dfile_write log_write stacks xfmt unwind sysgate"
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
fail=0
for o in $SAFE; do
	bad=""
	for sym in $(nm -u $O/$o.o | awk '{print $2}' | sed 's/@.*//'); do
		case "$ALLOWED" in *" $sym "*) continue ;; esac
		echo "$data" | grep -qx "$sym" && continue
		bad="$bad $sym"
	done
	if [ -n "$bad" ]; then
		echo "not ok - collector/$o.c calls functions that are not async-signal-safe:$bad"
		fail=1
	else
		echo "ok - collector/$o.c calls only async-signal-safe functions"
	fi
done
exit $fail
