# What the benchmarks' round-by-round comparisons share (sourced, from the
# repository's top directory): median of the numbers on standard input
# (0 for none), and pct A B, A against B as a signed percentage.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (b > 0 ? (a / b - 1) * 100 : 0) }'; }
