# Every thread is sampled: threads created through the old symbol version
# pthread_create@GLIBC_2.2.5, and a thread started by a library constructor
# before the collector initialised.  Recorded CPU within 2% of the truth.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# Sample counts tell how: the counter fires once per 1 ms of a thread's CPU
# time, so about real/1 ms samples.  A thread armed twice (its own counter
# and one inherited from its creator) gets twice as many; one whose
# counter is lost gets one (its tail), yet its recorded CPU still matches.
# threadtree: the initial thread leaves with pthread_exit before the
# others end (whose counters are inherited from it) and its last thread
# creates another after it left; a raw clone(CLONE_THREAD) sharing the
# initial thread's TLS is sampled on its own time, through a private TLS
# block (t41-raw-clone.sh has more of those).
for fx in oldsym early threadtree; do
	timeout 60 "$SONDE" collect -p hi -o $fx.er "$FIX/$fx" >truth.$fx 2>&1
	rc=$?
	"$EXPCHECK" threads $fx.er >rec.$fx
	n=0
	good=0
	counted=0
	while read -r _ tid _ real; do
		n=$((n + 1))
		rec=$(awk -v t="$tid" '$1 == t { print $3 }' rec.$fx)
		samples=$(awk -v t="$tid" '$1 == t { print $2 }' rec.$fx)
		note "$fx: tid $tid real $real recorded ${rec:-none} in ${samples:-no} samples"
		[ -n "$rec" ] && within "$rec" "$real" 2 && good=$((good + 1))
		# One sample per CPU ms, within 25%: the faults this catches give
		# none (a thread never armed) or two (armed twice); kernel time
		# merges samples (several overflows in one system call are one
		# sample), more of it on a busy machine (360 for 400 ms at load 10).
		[ -n "$samples" ] && within "$samples" "$(awk -v r="$real" 'BEGIN { print r / 1e6 }')" 25 &&
			counted=$((counted + 1))
	done <<EOT
$(grep '^thread ' truth.$fx)
EOT
	if [ $n -gt 0 ] && [ $good = $n ]; then ok "$fx: all $n threads sampled, CPU within 2%"; else
		notok "$fx: $good of $n threads sampled within 2%"; fi
	if [ $n -gt 0 ] && [ $counted = $n ]; then ok "$fx: each thread has its CPU ms in samples, within 25%"; else
		notok "$fx: $counted of $n threads have one sample per CPU ms (within 25%)"; fi
	[ $fx = threadtree ] || continue
	if [ $rc = 0 ]; then ok "threadtree: ends with status 0 when its last thread returns"; else
		notok "threadtree: sonde collect exited $rc (124: the collector's threads kept the target alive)"; fi
	raw=$(awk '/^raw / { print $2 }' truth.threadtree)
	check "threadtree: every recorded thread's CPU is its own (within 2%)" \
		awk 'NF == 4 && $4 > 0 { d = $3 - $4; if (d < 0) d = -d; if (d > $4 * 0.02) bad = 1 } END { exit bad }' rec.threadtree
	rawrec=$(awk -v t="$raw" '$1 == t' rec.threadtree)
	note "threadtree: raw clone thread ${raw:-?}: ${rawrec:-not recorded}"
	check "threadtree: the raw clone thread is sampled, its CPU within 2% of its clock" \
		awk -v t="$raw" '$1 == t && $4 > 0 { d = $3 - $4; if (d < 0) d = -d; ok = $2 > 10 && d <= $4 * 0.02 } END { exit !ok }' rec.threadtree
	check "threadtree: the experiment reads cleanly" sh -c "'$SONDE' print -header threadtree.er | grep -q 'Read problems (0)'"
done
check "oldsym really calls pthread_create@GLIBC_2.2.5" sh -c "objdump -T '$FIX/oldsym' | grep -q 'GLIBC_2.2.5.*pthread_create'"
check "early: log.xml notes the adopted thread" grep -q 'existed before the collector started' early.er/log.xml

# Threads shorter than the sampling interval: the counter never fires in
# them, yet their CPU time is recorded (in their start routine, as
# <After last sample> below it: doc/sonde-collect.md, "Starts and ends").
"$SONDE" collect -p hi -o churn.er "$FIX/churn" >truth.churn 2>&1
# (the threads' start before their routine, and the collector's own
# work there, are <Thread start> and <Collector>: the truth is the routine's)
truth=$(awk '/^worker_cpu_ns/ {print $2}' truth.churn)
W=$(sym_range "$FIX/churn" short_worker)
set -- $("$EXPCHECK" reach churn.er "$FIX/churn" "$W")
note "short threads: real $truth ns, recorded in short_worker $8 ns ($4 samples)"
if [ -n "$truth" ] && within "$8" "$truth" 2; then ok "2000 threads shorter than the interval: CPU recorded within 2%"; else
	notok "short threads: recorded $8 ns vs real $truth ns"
	# What the run said, and how its log ends (a run at a fresh machine's
	# first make check once lost its output with 872 of 2000 threads).
	sed 's/^/#   /' truth.churn | head -20
	grep -v 'kind="thread_' churn.er/log.xml | tail -n 8 | sed 's/^/#   /'
fi

# Threads' names: the kernel's, as the program set them (pthread_setname_np),
# in -threads; the process's own name, which every thread inherits, is no
# thread's; a name's control characters never reach the terminal.
cat >named.c <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>
static void *f(void *a)
{
	pthread_setname_np(pthread_self(), a);
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 30000000L);
	return 0;
}
int main(void)
{
	pthread_t t[3];
	char *names[3] = { "decoder-A", "\033[31mred", NULL };
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], 0, f, names[i] ? names[i] : (char *)"named");
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], 0);
	return 0;
}
C
if cc -O2 -pthread -o named named.c 2>cc.err; then
	rm -rf named.er
	"$SONDE" collect -p hi -o named.er ./named >/dev/null 2>&1
	"$SONDE" print -threads named.er >names.txt 2>&1
	if grep -q ' decoder-A$' names.txt && grep -q ' ?\[31mred$' names.txt && ! grep -q "$(printf '\033')" names.txt &&
		[ "$(grep -c ' (tid [0-9]*)$' names.txt)" = 2 ]; then
		ok "-threads names the threads the program named, and only those (control characters as ?)"
	else
		notok "-threads' names: $(tr '\n' ';' <names.txt | cat -v)"
	fi
else
	notok "cc builds the thread-naming program"
fi
