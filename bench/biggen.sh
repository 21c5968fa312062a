#!/bin/sh
# bench/biggen.sh: generate and build a big program with full debug
# information, for bench/source.sh (-source/-disasm on a large binary).
#
#   sh bench/biggen.sh [DIR]     (default build/bench/big)
#
# Writes DIR/src/: common.h (shared structs and inline helpers, so every
# translation unit carries its own copy of their DWARF, as real programs
# do), TUS translation units tNNN.c of FUNCS functions each (own structs
# with arrays, unions, enums and pointers; loops, switches, calls to
# per-unit and shared inline helpers), hot.c (hot_loop, which burns CPU for
# the CPU seconds given as argv[1], default 1.5, and warm_loop, a
# quarter as long; both inline the same helper mix()) and main.c.  Compiles
# them with gcc -O2 -g (DWARF 5 by default) in parallel, one job per CPU,
# and links DIR/big: about 50 MB with the defaults.
#
# The result is cached: DIR/stamp holds a checksum of this script, the
# parameters and the compiler version, and nothing is rebuilt while it
# matches.  Prints one line: "generated in G s, compiled in C s (...)",
# or "cached (built before: ...)".  BIG_TUS (54 units), BIG_FUNCS (300
# functions a unit), BIG_STRUCTS (40 structs a unit), BIG_API (600 header
# structs), BIG_JOBS override the sizes and the parallelism.
cd "$(dirname "$0")/.." || exit 1
D=${1:-build/bench/big}
TUS=${BIG_TUS:-54}
FUNCS=${BIG_FUNCS:-300}
STRUCTS=${BIG_STRUCTS:-40}
API=${BIG_API:-600}
JOBS=${BIG_JOBS:-$(nproc 2>/dev/null || echo 2)}
CC=${CC:-cc}

stamp=$( (cat bench/biggen.sh; echo "$TUS $FUNCS $STRUCTS $API $CC"; $CC --version 2>&1) | cksum)
if [ -x "$D/big" ] && [ "$(cat "$D/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "cached (built before: $(cat "$D/built" 2>/dev/null))"
	exit 0
fi
rm -rf "$D"
mkdir -p "$D/src" || exit 1

now() { date +%s.%N; }
t0=$(now)
awk -v dir="$D/src" -v tus="$TUS" -v funcs="$FUNCS" -v structs="$STRUCTS" -v napi="$API" '
# A large "API" of structs (bit fields, arrays, unions, enums, function
# pointers, links to each other), all referenced by struct api_all: what a
# program including big library headers carries in each unit.
function api(f,  a, e, i, m, c) {
	for (a = 0; a < napi; a++)
		printf "struct api_%d;\n", a >f
	for (a = 0; a < napi; a++) {
		printf "enum api_%d_kind {", a >f
		for (e = 0; e < 6 + a % 10; e++)
			printf " API%d_K%d,", a, e >f
		printf " API%d_KMAX };\n", a >f
		printf "typedef long (*api_%d_fn)(struct api_%d *, const char *, size_t);\n", a, a >f
		printf "struct api_%d {\n", a >f
		m = 16 + a % 25
		for (i = 0; i < m; i++) {
			c = (a * 7 + i) % 9
			if (c == 0) printf "\tint m%d;\n", i >f
			else if (c == 1) printf "\tunsigned long m%d_count;\n", i >f
			else if (c == 2) printf "\tdouble m%d_ratio[%d];\n", i, 2 + i % 5 >f
			else if (c == 3) printf "\tstruct api_%d *m%d_link;\n", (a + i + 1) % napi, i >f
			else if (c == 4) printf "\tunsigned m%d_flag : %d;\n", i, 1 + i % 7 >f
			else if (c == 5) printf "\tenum api_%d_kind m%d_kind;\n", a, i >f
			else if (c == 6) printf "\tapi_%d_fn m%d_fn;\n", a, i >f
			else if (c == 7) printf "\tunion { short s; float f; void *p; } m%d_u;\n", i >f
			else printf "\tconst char *m%d_name;\n", i >f
		}
		print "};\n" >f
	}
	print "struct api_all {" >f
	for (a = 0; a < napi; a++)
		printf "\tstruct api_%d *a%d;\n", a, a >f
	print "};\n" >f
}
function common(  f, j) {
	f = dir "/common.h"
	print "#ifndef BIG_COMMON_H\n#define BIG_COMMON_H\n#include <stddef.h>\n" >f
	print "enum color { C_RED, C_GREEN, C_BLUE, C_GREY, C_NONE };\n" >f
	api(f)
	for (j = 0; j < NC; j++) {
		printf "struct cs_%d {\n\tint id;\n\tlong weight;\n\tdouble scale;\n", j >f
		printf "\tunsigned short flags[%d];\n\tenum color col;\n", 2 + j % 6 >f
		printf "\tunion { long l; double d; char bytes[8]; } u;\n" >f
		printf "\tstruct cs_%d *next;\n\tconst char *name;\n", j >f
		printf "\tlong (*cb)(const struct cs_%d *, long);\n};\n\n", j >f
		printf "static inline long cs_h%d(const struct cs_%d *q, long x)\n{\n", j, j >f
		printf "\tlong r = q->weight * %d + (x >> %d);\n", 3 + 2 * j, 1 + j % 7 >f
		printf "\tif (q->col == C_BLUE)\n\t\tr ^= q->u.l;\n" >f
		printf "\treturn r + q->flags[x & %d];\n}\n\n", 1 + j % 2 >f
	}
	print "#endif" >f
	close(f)
}
function unit(t,  f, j, k, n, x) {
	f = sprintf("%s/t%03d.c", dir, t)
	printf "#include \"common.h\"\n\nstruct api_all t%d_api;\n\n", t >f
	for (k = 0; k < structs; k++) {
		n = 4 * 2 ^ (k % 3)
		printf "struct t%d_s%d {\n\tint a;\n\tlong b;\n\tdouble c;\n", t, k >f
		printf "\tdouble arr[%d];\n\tunsigned char tag[8];\n\tenum color col;\n", n >f
		printf "\tunion { int i; float f; } u;\n\tconst struct cs_%d *link;\n};\n\n", (t + k) % NC >f
		printf "static inline long t%d_h%d(const struct t%d_s%d *p, long x)\n{\n", t, k, t, k >f
		printf "\tlong r = p->a * x + p->b;\n\tif (p->col == C_RED)\n\t\tr ^= x >> %d;\n", 1 + k % 5 >f
		printf "\treturn r + (long)p->u.i + (long)p->arr[x & %d];\n}\n\n", n - 1 >f
	}
	for (x = 0; x < funcs; x++) {
		k = x % structs
		n = 4 * 2 ^ (k % 3)
		j = (t + x) % NC
		printf "__attribute__((noinline)) long t%d_f%d(struct t%d_s%d *p, const struct cs_%d *q, long n)\n{\n", t, x, t, k, j >f
		printf "\tlong acc = %d;\n\tdouble d = p->c;\n\tfor (long i = 0; i < n; i++) {\n", t * funcs + x >f
		printf "\t\tacc += t%d_h%d(p, i);\n\t\tacc ^= cs_h%d(q, acc);\n", t, k, j >f
		printf "\t\tif ((acc & 7) == %d)\n\t\t\td += p->arr[i & %d] * 0.5;\n", x % 8, n - 1 >f
		printf "\t\telse\n\t\t\tp->b ^= acc >> (i & 15);\n\t}\n" >f
		printf "\tswitch (acc & 3) {\n\tcase 0:\n\t\tp->col = C_GREEN;\n\t\tbreak;\n" >f
		printf "\tcase 1:\n\t\tp->u.f = (float)d;\n\t\tbreak;\n" >f
		printf "\tcase 2:\n\t\tacc += p->link ? p->link->id : %d;\n\t\tbreak;\n", x >f
		printf "\tdefault:\n\t\tacc += p->tag[%d];\n\t}\n\treturn acc + (long)d;\n}\n\n", x % 8 >f
	}
	printf "long t%d_run(long n)\n{\n", t >f
	for (j = 0; j < NC; j++)
		printf "\tstatic struct cs_%d q%d;\n", j, j >f
	for (k = 0; k < structs; k++)
		printf "\tstatic struct t%d_s%d s%d;\n", t, k, k >f
	print "\tlong acc = 0;\n" >f
	for (x = 0; x < funcs; x++)
		printf "\tacc += t%d_f%d(&s%d, &q%d, n);\n", t, x, x % structs, (t + x) % NC >f
	print "\treturn acc;\n}" >f
	close(f)
}
BEGIN {
	NC = 24
	common()
	for (t = 0; t < tus; t++)
		unit(t)
	f = dir "/main.c"
	print "#include <stdio.h>\n#include <stdlib.h>\n" >f
	print "unsigned long hot_loop(double seconds);\nunsigned long warm_loop(double seconds);" >f
	for (t = 0; t < tus; t++)
		printf "long t%d_run(long n);\n", t >f
	print "\nint main(int argc, char **argv)\n{" >f
	print "\tdouble s = argc > 1 ? atof(argv[1]) : 1.5;\n\tlong acc = 0;\n" >f
	for (t = 0; t < tus; t++)
		printf "\tacc += t%d_run(argc);\n", t >f
	print "\tacc += (long)hot_loop(s);\n\tacc += (long)warm_loop(s / 4);" >f
	print "\tprintf(\"%ld\\n\", acc);\n\treturn 0;\n}" >f
	close(f)
}' || exit 1
cat >"$D/src/hot.c" <<'EOF'
#include <time.h>

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The helper inlined into both callers. */
static inline unsigned long mix(unsigned long x, unsigned long k)
{
	x ^= x >> 29;
	x *= k | 1;
	x ^= x >> 32;
	return x;
}

__attribute__((noinline)) unsigned long hot_loop(double seconds)
{
	unsigned long acc = 1;
	double end = cpu_now() + seconds;

	do {
		for (long i = 0; i < 1000000; i++)
			acc = mix(acc + i, 0x9e3779b97f4a7c15UL);
	} while (cpu_now() < end);
	return acc;
}

/* The other caller: checks the clock before each round, not after. */
__attribute__((noinline)) unsigned long warm_loop(double seconds)
{
	unsigned long acc = 7;
	long round = 0;

	for (double end = cpu_now() + seconds; cpu_now() < end; round++)
		for (long i = 0; i < 1000000; i += 2)
			acc += mix(acc ^ i, 0xff51afd7ed558ccdUL) >> (round & 7);
	return acc;
}
EOF
t1=$(now)
(cd "$D/src" && ls *.c | xargs -P "$JOBS" -n 1 "$CC" -O2 -g -c) || exit 1
t2=$(now)
(cd "$D/src" && "$CC" -O2 -g -o ../big *.o) || exit 1
rm -f "$D/src"/*.o
t3=$(now)
echo "$stamp" >"$D/stamp"
# children's user+system time ("times", second line: 1m2.5s 0m0.4s), in
# this shell: in a pipe or $(...) it would count the subshell's children
times >"$D/times"
cpu=$(awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } print s }' "$D/times")
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v cpu="$cpu" -v j="$JOBS" 'BEGIN {
	printf "generated in %.1f s, compiled in %.1f s (%d jobs, %.0f s of CPU in all), linked in %.1f s\n",
		b - a, c - b, j, cpu, d - c }' | tee "$D/built"
