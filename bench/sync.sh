#!/bin/sh
# Benchmark of synchronization wait tracing: a lock-heavy program (two
# threads, each taking its own mutex tens of millions of times around a
# little work -- WORK steps of a 64-bit LCG under the lock -- and a shared
# one every 256 rounds, so that nearly every lock is uncontended) plain and
# under `sonde collect -p off -s on`, interleaved round by round.  Prints
# the median CPU and wall time of each, their ratios, the cost per lock
# call, the calibrated threshold and the number of events recorded.
# Two workloads: WORK=8 (about 16 ns per locked round: little else than
# locking, the worst case) and WORK=32 (about 36 ns per round).
#   BENCH_ROUNDS (5)  rounds;  SYNC_ITERS (20000000) locks per thread.
cd "$(dirname "$0")/.." || exit 1
B=$(pwd)/build
RUNCPU=$B/bench/runcpu
PROG=$B/bench/synclock
SONDE=$B/bin/sonde
ROUNDS=${BENCH_ROUNDS:-5}
ITERS=${SYNC_ITERS:-20000000}
mkdir -p $B/bench
cc -O2 -o $RUNCPU bench/runcpu.c || exit 1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

cat >$W/synclock.c <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* Each mutex on its own cache lines: no false sharing between threads. */
static struct {
	pthread_mutex_t m;
} __attribute__((aligned(128))) own[2] = { { PTHREAD_MUTEX_INITIALIZER }, { PTHREAD_MUTEX_INITIALIZER } };
static pthread_mutex_t shared __attribute__((aligned(128))) = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long total __attribute__((aligned(128)));
static long iters;
static int work;

static void *worker(void *arg)
{
	long t = (long)arg;
	unsigned long x = (unsigned long)t + 1, sum = 0;
	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&own[t].m);
		for (int k = 0; k < work; k++) /* the work under the lock */
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		sum += x >> 33;
		pthread_mutex_unlock(&own[t].m);
		if ((i & 255) == 0) {
			pthread_mutex_lock(&shared);
			total += sum & 1;
			pthread_mutex_unlock(&shared);
		}
	}
	pthread_mutex_lock(&shared);
	total += sum;
	pthread_mutex_unlock(&shared);
	return NULL;
}

int main(int argc, char **argv)
{
	iters = argc > 1 ? atol(argv[1]) : 20000000;
	work = argc > 2 ? atoi(argv[2]) : 8;
	pthread_t th[2];
	for (long t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	printf("%lu\n", total);
	return 0;
}
EOF
cc -O2 -o $PROG $W/synclock.c -lpthread || exit 1

. bench/stats.sh

# bench_one WORK
bench_one() {
	: >$W/pcpu; : >$W/pwall; : >$W/scpu; : >$W/swall; : >$W/events
	for r in $(seq 1 $ROUNDS); do
		$RUNCPU $PROG $ITERS $1 >$W/p.txt
		awk '{ print $2 }' $W/p.txt >>$W/pcpu
		awk '{ print $4 }' $W/p.txt >>$W/pwall
		rm -rf $W/s.er
		$RUNCPU $SONDE collect -p off -s on -o s.er -d $W $PROG $ITERS $1 >$W/s.txt
		awk '{ print $2 }' $W/s.txt >>$W/scpu
		awk '{ print $4 }' $W/s.txt >>$W/swall
		$SONDE print -dump sync $W/s.er 2>/dev/null | grep -c '^sync [0-9]' >>$W/events
		thr=$(sed -n 's/.*<trace kind="sync" threshold_ns="\([0-9]*\)".*/\1/p' $W/s.er/log.xml)
		cal=$(sed -n 's/.*<trace kind="sync" calibration_ns="\([0-9]*\)".*/\1/p' $W/s.er/log.xml)
	done
	# Locks per run: two threads, each ITERS of its own mutex plus one of
	# the shared mutex every 256 rounds and one at the end.
	calls=$(awk -v n=$ITERS 'BEGIN { printf "%.0f", 2 * (n + int((n + 255) / 256) + 1) }')
	echo "== sync tracing: 2 threads x $ITERS mostly uncontended mutex locks, work $1, median of $ROUNDS runs"
	awk -v pc="$(median <$W/pcpu)" -v pw="$(median <$W/pwall)" -v sc="$(median <$W/scpu)" -v sw="$(median <$W/swall)" \
		-v n="$calls" -v ev="$(median <$W/events)" -v thr="$thr" -v cal="$cal" 'BEGIN {
		printf "  plain                       cpu %.3f s  wall %.3f s  (%.1f ns of CPU per locked round)\n", pc, pw, pc * 1e9 / n
		printf "  sonde collect -p off -s on  cpu %.3f s  wall %.3f s\n", sc, sw
		printf "  ratio                       cpu %.4f (%+.2f%%)  wall %.4f (%+.2f%%)\n", sc / pc, (sc / pc - 1) * 100, sw / pw, (sw / pw - 1) * 100
		printf "  cost per lock call %.2f ns of CPU (%d calls)\n", (sc - pc) * 1e9 / n, n
		printf "  calibrated threshold %s ns (6 x %s ns), %d events recorded\n", thr, cal, ev
	}'
}

bench_one 8
bench_one 32
